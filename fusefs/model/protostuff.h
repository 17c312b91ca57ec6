/*
 * protostuff — decoders for the bytes SeaTunnel writes with protostuff 1.8.0
 * (tests/fixtures/protostuff/README.md, real bytes, is the ground truth):
 *
 *   - checkpoint files: PipelineState{jobId, pipelineId, checkpointId,
 *     states = CompletedCheckpoint{...}};
 *   - IMap WAL files: records of a 12-byte header (little-endian int32
 *     payload length + 8 bytes the reader ignores) and an IMapFileData
 *     payload.
 *
 * Pure functions of (bytes, length): no I/O, no allocation unless said,
 * thread-safe.  Hostile input gives -EPROTO (or -EOVERFLOW for absurd
 * lengths/depths), never a crash or a read out of bounds.
 */
#ifndef STFS_PROTOSTUFF_H
#define STFS_PROTOSTUFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"

/* CheckpointType, normalised over both ordinal tables (2.3.3 changed them) */
enum ckpt_type {
	CKPT_CHECKPOINT = 0,
	CKPT_SCHEMA_CHANGE_BEFORE,
	CKPT_SCHEMA_CHANGE_AFTER,
	CKPT_SAVEPOINT,
	CKPT_COMPLETED,
	CKPT_TYPE_UNKNOWN,
};

/** "checkpoint", "schema-change-before-point", ..., "savepoint",
 * "completed-point", "unknown" */
const char *ckpt_type_name(int type);

struct pstuff_ckpt {
	char job_id[24];       /* PipelineState.jobId (truncated if longer) */
	int32_t pipeline_id;   /* PipelineState.pipelineId */
	int64_t checkpoint_id; /* PipelineState.checkpointId */
	uint64_t states_len;   /* length of PipelineState.states */
	bool has_states;       /* CompletedCheckpoint fields below are valid */
	int64_t cc_job_id;
	int64_t trigger_ts;   /* ms */
	int64_t completed_ts; /* ms */
	int type_ordinal;     /* raw ordinal on the wire, -1 if absent */
	int type;	      /* enum ckpt_type */
	int table;	  /* 0: unknown, 1: 2.3.0-2.3.2 (3 values), 2: 2.3.3+ (5
			     values) */
	bool is_restored; /* field 9 (2.3.3+) */
	unsigned n_actions; /* entries of taskStates (full decode only) */
};

/**
 * Decode a whole checkpoint file.  0 and *out filled; -EPROTO when the
 * bytes are not a PipelineState/CompletedCheckpoint.
 */
int pstuff_decode_ckpt(const uint8_t *p, size_t n, struct pstuff_ckpt *out);

/**
 * Decode from the first `head_len` bytes of a file of `total` bytes, plus
 * its last two bytes `tail` (for field 9, which tells the ordinal table):
 * enough for the type without reading a large state.  Returns as
 * pstuff_decode_ckpt; -EAGAIN when `head` is too short to reach field 5.
 */
int pstuff_decode_ckpt_head(const uint8_t *head, size_t head_len,
			    const uint8_t tail[2], uint64_t total,
			    struct pstuff_ckpt *out);

/**
 * Render a checkpoint file as the JSON structure of
 * tests/fixtures/protostuff/expected.json ("content" member), for tests
 * and the `cat`-able decoded view.  0; -EPROTO; -EFBIG/-ENOMEM from out.
 */
int pstuff_ckpt_to_json(const uint8_t *p, size_t n, struct buf *out);

/* ---- full CompletedCheckpoint summary (the `info` file) */

#define PSTUFF_NAME_MAX	   255	/* bytes of an action name kept */
#define PSTUFF_SUM_MAX_ENT 1024 /* actions / statistics entries kept */

struct pstuff_action {
	char name[PSTUFF_NAME_MAX + 1]; /* ActionStateKey.name, as written
					 * (NUL-free: a NUL ends it) */
	int32_t parallelism;		/* ActionState.parallelism */
	uint32_t subtasks;		/* reported subtask states (the
					 * non-null elements of subtaskStates) */
	bool coordinator;		/* coordinatorState present */
	uint64_t state_bytes; /* bytes of every state byte[] of the action:
			       * its subtasks' and its coordinator's */
};

struct pstuff_taskstat {
	int64_t vertex_id;   /* the taskStatistics map key */
	int32_t acked;	     /* numAcknowledgedSubtasks */
	uint32_t subtasks;   /* reported SubtaskStatistics */
	uint64_t state_size; /* sum of their stateSize */
};

struct pstuff_summary {
	struct pstuff_ckpt ck; /* ids, times, type, is_restored */
	bool bare;	       /* decoded a bare CompletedCheckpoint */
	size_t n_actions;      /* entries of taskStates (all of them) */
	size_t n_stats;	       /* entries of taskStatistics (all of them) */
	struct pstuff_action *actions; /* the first PSTUFF_SUM_MAX_ENT */
	struct pstuff_taskstat *stats; /* the first PSTUFF_SUM_MAX_ENT */
	uint64_t reads;		       /* read calls made (for tests/bench) */
	uint64_t read_bytes;	       /* bytes they returned */
};

/* Reads up to len bytes at `off`: the count (0: end), or -errno. */
typedef ssize_t (*pstuff_read_fn)(void *cookie, void *buf, size_t len,
				  uint64_t off);

/**
 * Decode a whole checkpoint object of `size` bytes read through `rd`, in
 * windows of `window` bytes (>= 64): the structure is read, every state
 * byte[] is skipped by its length prefix without being read, so a
 * checkpoint of large states costs a few windows, not its size.  `bare`:
 * the object is a CompletedCheckpoint without the PipelineState envelope.
 * Lists are read as SeaTunnel writes them (wrapping groups), else as
 * 2.3.0's repeated fields.  0 and *out (free with pstuff_summary_free);
 * -EPROTO when the bytes are not a checkpoint; -ENOMEM; rd's -errno (-EIO
 * when the object is shorter than `size`).
 */
int pstuff_summarize(pstuff_read_fn rd, void *cookie, uint64_t size,
		     size_t window, bool bare, struct pstuff_summary *out);
/** pstuff_summarize() over bytes in memory. */
int pstuff_summarize_mem(const uint8_t *p, size_t n, bool bare,
			 struct pstuff_summary *out);
/** Free what a summary holds (NULL-safe); *s is zeroed. */
void pstuff_summary_free(struct pstuff_summary *s);

/* ---- WAL */

struct wal_record {
	uint64_t offset; /* of the 12-byte header */
	uint32_t payload_len;
	bool deleted;
	const uint8_t *key; /* borrowed from the input */
	size_t key_len;
	const char *key_class; /* NOT NUL-terminated; key_class_len bytes */
	size_t key_class_len;
	const uint8_t *value; /* NULL for tombstones */
	size_t value_len;
	const char *value_class; /* NULL for tombstones */
	size_t value_class_len;
	int64_t timestamp; /* ms */
};

typedef int (*wal_record_fn)(void *cookie, const struct wal_record *rec);

/* Why the engine's reader would abort a whole load (wal_walk -EBADMSG). */
struct wal_fail {
	uint64_t offset;  /* of the record's 12-byte header in its file */
	const char *what; /* a string literal: "negative record length", ... */
};

/**
 * Walk the records of one WAL file as SeaTunnel's reader (imap-storage-file
 * 2.3.12) does: while more than 12 bytes remain (`start + 12 < length`) read
 * a little-endian int32 length from header bytes 0..3 (bytes 4..11 are
 * ignored), then the payload.  A length running past the end is a truncated
 * tail: the file ends there silently (*tail_bytes receives how many trailing
 * bytes were not a whole record).  A negative length or a payload that does
 * not decode makes the engine's whole load fail: the walk stops and returns
 * -EBADMSG with *fail saying what and where.  Otherwise 0; when fn returns
 * non-zero the walk stops, a negative value is returned as is, a positive
 * one gives 0.  `fn`, `tail_bytes` and `fail` may be NULL.  The record's
 * pointers borrow from `p` and are valid only as long as `p` is.
 */
int wal_walk(const uint8_t *p, size_t n, wal_record_fn fn, void *cookie,
	     uint64_t *tail_bytes, struct wal_fail *fail);

/*
 * Summary of one IMap over all its WAL files, as the engine's reader sees
 * it: every file parsed on its own, all records sorted by timestamp, the
 * newest record per key wins (ties: the later file, then the later offset;
 * the engine's own order is undefined there, so such keys are counted in
 * `ties`), and a winning tombstone hides the key.  Keys compare by raw key
 * bytes.  When one file holds a record the reader aborts on, `failed` is
 * set and the counts describe a state the engine never reaches.
 */
struct wal_summary {
	uint64_t records;	   /* decoded records, tombstones included */
	uint64_t tombstones;	   /* tombstone records */
	uint64_t keys;		   /* distinct keys */
	uint64_t live_keys;	   /* keys whose newest record is live */
	uint64_t dead_keys;	   /* keys whose newest record is a tombstone */
	uint64_t ties;		   /* keys whose newest timestamp is shared by
				    * records that disagree (live and
				    * tombstone, or different values) */
	uint64_t tail_bytes;	   /* truncated-tail bytes, all files */
	uint64_t total_bytes;	   /* sum of the file lengths */
	uint64_t live_bytes;	   /* bytes (header+payload) of live winners */
	uint64_t reclaim_bytes;	   /* total_bytes - live_bytes: what a
				    * compaction keeping only the live
				    * winners would free */
	uint64_t superseded_files; /* entries of superseded[] that are true */
	bool failed;		   /* the engine would fail to load the map */
	size_t fail_file;	   /* if failed: the first such file (index) */
	struct wal_fail fail;	   /* if failed: what, at which offset */
};

/**
 * Summarise `nfiles` WAL files of one map: files[i] holds lens[i] bytes and
 * belongs to group group[i] (a region; `group` NULL: each file its own
 * group).  `superseded` (may be NULL) is a caller-owned array of nfiles
 * bools that receives, per file, whether every record in it (tombstones
 * included) has a strictly newer record (greater timestamp) for the same
 * key in a file of ANOTHER group, so removing that group cannot change what
 * the engine reads back.  A file with no record is superseded; when the
 * load fails (out->failed) no file is.  Allocates a temporary hash table
 * (a copy of each key), freed before returning; nothing is kept.  0;
 * -ENOMEM; -EOVERFLOW on absurd sizes; -EINVAL on NULL arrays with nfiles
 * > 0.  Thread-safe (pure function of its inputs).
 */
int wal_summarize(const uint8_t *const *files, const size_t *lens,
		  const size_t *group, size_t nfiles, struct wal_summary *out,
		  bool *superseded);

/* Reads len bytes of file `file` at `off` into buf: len, or -errno. */
typedef ssize_t (*wal_read_fn)(void *cookie, size_t file, void *buf, size_t len,
			       uint64_t off);

/**
 * wal_summarize() over files read through `rd` (sizes[i] bytes each), in
 * windows of about `chunk` bytes (grown only to hold one record longer
 * than that): memory is the window plus one copy of each distinct key,
 * whatever the files' size.  Two passes over every file.  Same results
 * and errors as wal_summarize(), plus rd's -errno (-EIO when a file is
 * shorter than its size).
 */
int wal_summarize_stream(wal_read_fn rd, void *cookie, const uint64_t *sizes,
			 const size_t *group, size_t nfiles, size_t chunk,
			 struct wal_summary *out, bool *superseded);

#endif
