/*
 * release — the persistent restore releases of CONTRACT §4 R2.
 *
 * A released job is one file, <state_dir>/releases/<jobId>, holding
 * "released <ISO-8601 UTC time> uid=<uid>\n".  Its existence is the whole
 * truth (render.c checks it with stat(); keep the path), so a release
 * survives restarts and remounts.  Writes are atomic and durable: a temp
 * file ".tmp.<jobId>.<pid>.<n>" in the same directory, fsync, rename,
 * fsync of the directory; a removal fsyncs the directory too.  Temp files
 * left behind by a crash are never taken for releases and are removed by
 * release_open().
 *
 * The store keeps the set of released ids in memory, loaded from disk by
 * release_open(); queries read only the cache.  Everything that changes
 * releases must go through release_set() of one store.
 *
 * Job ids are 1-19 ASCII digits; anything else is refused with -EINVAL, so
 * no id can name a path outside releases/.
 *
 * Thread safety: every function may be called from any thread; one mutex
 * guards the cache and serialises writes (release_set() holds it across
 * its file system calls, which may block on the disk).
 * Ownership: the store belongs to the caller of release_open(), who frees
 * it with release_close().
 */
#ifndef STFS_RELEASE_H
#define STFS_RELEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct release_store;

/**
 * Open the store under `state_dir`: create state_dir (if missing, mode
 * 0700) and state_dir/releases/ (mode 0700), remove stale temp files,
 * load the released ids.  0 and *out set; -EINVAL (state_dir NULL, empty
 * or too long), -ENOTDIR, -EACCES, -ENOMEM or another -errno of
 * mkdir/opendir; *out is NULL then.
 */
int release_open(const char *state_dir, struct release_store **out);

/** Free the store.  NULL is a no-op. */
void release_close(struct release_store *rs);

/** True when `job_id` is released (from the cache).  False for bad ids or a
 * NULL store. */
bool release_is_released(struct release_store *rs, const char *job_id);

/**
 * Release (`released` true) or protect again / void (false) a job.
 * Releasing writes the file atomically (overwriting an older release with
 * the new time and uid); protecting removes it (no error when it was not
 * released).  `now_ms` is wall-clock epoch milliseconds for the content.
 * 0; -EINVAL for a bad id or NULL store; -errno of the file system (the
 * cache is changed only on success).
 */
int release_set(struct release_store *rs, const char *job_id, bool released,
		uid_t uid, int64_t now_ms);

/**
 * When `job_id` was released: the release file's mtime, epoch ms; 0 when
 * it is not released (or the file cannot be read).
 */
int64_t release_time_ms(struct release_store *rs, const char *job_id);

/** True when `id` is 1-19 ASCII digits. */
bool release_id_valid(const char *id);

/**
 * Copy the released ids (NUL-terminated, sorted by strcmp) into the
 * caller's ids[0..max).  Returns how many jobs are released in total,
 * which may exceed max (then only the first max were copied).  For
 * voiding the releases of jobs seen alive again.  0 for a NULL store.
 */
size_t release_list(struct release_store *rs, char (*ids)[20], size_t max);

#endif
