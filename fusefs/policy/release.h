/*
 * release — the persistent restore releases of README "Deleting safely", R2.
 *
 * A released job is one file, <state_dir>/releases/<ns>/<jobId>, where
 * <ns> is 16 hex digits of a hash of the checkpoint namespace's URI (as the
 * checkpoint-type cache is keyed), so two mounts of different clusters that
 * share a state_dir never share releases.  The file holds
 * "released <ISO-8601 UTC time> uid=<uid> newest_ns=<n> finish_s=<s>\n":
 * the release covers the job as it was then, and no more (README
 * "Deleting"): the newest mtime among the job's storage objects and the
 * finish time the engine gave (0: none).  An object newer than that, or a
 * later finish (a resumed run that ended again), voids it: see
 * release_covers().  A release survives restarts and remounts.  Files in
 * <state_dir>/releases/ itself (written by versions before namespaces were
 * kept apart) and files without the binding are ignored: those jobs are
 * protected.  Writes are atomic and durable: a temp
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

/** What a release covers (see above). */
struct release_bind {
	int64_t newest_ns; /* newest mtime among the job's objects, epoch ns */
	int64_t finish_s;  /* the engine's finish time of the job, or 0 */
};

/**
 * Open the store of namespace `ns` (the checkpoint URI) under `state_dir`:
 * create state_dir (if missing, mode 0700), state_dir/releases/ and
 * state_dir/releases/<ns hash>/ (mode 0700), remove stale temp files, load
 * the releases.  0 and *out set; -EINVAL (state_dir or ns NULL, empty or
 * too long), -ENOTDIR, -EACCES, -ENOMEM or another -errno of
 * mkdir/opendir; *out is NULL then.
 */
int release_open(const char *state_dir, const char *ns,
		 struct release_store **out);

/** The store's directory (state_dir/releases/<ns hash>). */
const char *release_dir(const struct release_store *rs);

/** How many unscoped releases of older versions were found and ignored. */
size_t release_legacy_count(const struct release_store *rs);

/**
 * True when `job_id` is released and the release covers the job as it is
 * now: no object newer than `newest_ns` at release, and no finish time
 * later than the one at release (`finish_s` 0: the engine gave none).
 */
bool release_covers(struct release_store *rs, const char *job_id,
		    int64_t newest_ns, int64_t finish_s);

/** Free the store.  NULL is a no-op. */
void release_close(struct release_store *rs);

/** True when `job_id` is released (from the cache).  False for bad ids or a
 * NULL store. */
bool release_is_released(struct release_store *rs, const char *job_id);

/**
 * Release (`released` true) or protect again / void (false) a job.
 * Releasing writes the file atomically (overwriting an older release with
 * the new time, uid and binding `bind`; NULL: covers nothing newer than
 * 1970 and no finish); protecting removes it (no error when it was not
 * released; `bind` ignored).  `now_ms` is wall-clock epoch milliseconds for
 * the content.  0; -EINVAL for a bad id or NULL store; -errno of the file
 * system (the cache is changed only on success).
 */
int release_set(struct release_store *rs, const char *job_id, bool released,
		uid_t uid, int64_t now_ms, const struct release_bind *bind);

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
