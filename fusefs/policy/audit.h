/*
 * audit — the audit trail of README "Deleting safely": every deletion or
 *release decision, allowed or refused.
 *
 * One decision is one line of key=value pairs, always in this order:
 *
 *	time=2025-03-07T14:02:11.042Z uid=1000 pid=4242 comm=rm op=unlink
 *	path=/jobs/1/pipelines/1/checkpoints/3/x.ser object=ns/1/x.ser
 *	state=FAILED source=engine age_ms=120 rule="" outcome=allowed errno=0
 *
 * (shown wrapped; it is one line).  A value is written bare when it is
 * non-empty and every byte is a printable ASCII character other than
 * space, '"' and '\'; otherwise it is quoted: "..." with \" \\ \n \r \t
 * and \xHH for every other byte below 0x20 or above 0x7e.  So one record
 * is always exactly one line, and a hostile file name cannot forge a
 * second record or a key.  NULL strings are written as "".  `errno` is
 * the symbolic name (EBUSY, ...), or the number when it has none.
 *
 * Each record goes to three sinks: syslog(3) at LOG_AUTHPRIV|LOG_NOTICE
 * (unless turned off with audit_set_syslog()), the audit_log file when
 * one was given (one write(2) of the whole line, then fdatasync: flushed
 * per record), and an in-memory ring of the newest lines, at most
 * ring_bytes long, that .stfs/audit shows.
 *
 * Thread safety: all functions may be called from any thread; the ring
 * and the file descriptor have their own mutexes.  audit_record() blocks
 * on the disk (fdatasync) when a file is set.
 * Ownership: the struct audit belongs to the caller of audit_open(), who
 * frees it with audit_close(); audit_record() copies what it keeps.
 */
#ifndef STFS_AUDIT_H
#define STFS_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"

struct audit_rec {
	int64_t time_ms; /* wall clock, epoch milliseconds */
	uid_t uid;	 /* the caller */
	pid_t pid;
	const char *comm;   /* the caller's command name (audit_comm()) */
	const char *op;	    /* "unlink", "rmdir", "release", "protect" */
	const char *path;   /* the path in the mount */
	const char *object; /* the storage key, or "" */
	const char *state;  /* job state name (job_state_name()) */
	/* "engine", "engine(last known)", "storage" */
	const char *state_source;
	int64_t state_age_ms; /* age of the state used */
	const char *rule;     /* "R1".."R6", or "" */
	int err; /* 0: allowed; else the positive errno refused with */
};

struct audit;

/**
 * Create the trail.  `file` (NULL: no file) is opened
 * O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC with mode 0600; `ring_bytes` bounds
 * the in-memory ring (0: no ring).  0 and *out set; -errno of open(2) or
 * -ENOMEM, *out NULL then.
 */
int audit_open(const char *file, size_t ring_bytes, struct audit **out);

/** Close the file and free everything.  NULL is a no-op. */
void audit_close(struct audit *a);

/** Turn the syslog sink on (the default) or off (tests, foreground runs). */
void audit_set_syslog(struct audit *a, bool on);

/**
 * Reopen the file (after logrotate moved it; call on SIGHUP).  0 (also
 * when there is no file); -errno of open(2), the old descriptor is kept.
 */
int audit_reopen(struct audit *a);

/**
 * Format `r` into `out` as one line ending in '\n' (the text the sinks
 * get).  0; -EFBIG/-ENOMEM from buf.  For tests and the deletable file.
 */
int audit_format(const struct audit_rec *r, struct buf *out);

/**
 * Record a decision in every sink.  Never fails: a sink that fails is
 * reported with log_warn (at most once until it works again).
 */
void audit_record(struct audit *a, const struct audit_rec *r);

/**
 * Append the ring's lines, oldest first, to `out`.  When they do not all
 * fit under out->max, the oldest are left out.  0; -ENOMEM.
 */
int audit_snapshot(struct audit *a, struct buf *out);

/**
 * The command name of process `pid` from /proc/<pid>/comm, without the
 * newline, into buf[0..size).  0; -errno (buf then holds "?").  Reads a
 * file: do it before taking locks.
 */
int audit_comm(pid_t pid, char *buf, size_t size);

#endif
