/*
 * freshness — the ticker that lets the kernel keep names, attributes and
 * listings below jobs/ for kernel_ttl (README "Caching in the kernel").
 *
 * Every interval (cache_ttl; sooner when the storage listing falls due
 * before) while the kernel may hold a long-lived reply
 * (one was given less than kernel_ttl ago: fresh_touch), the ticker takes
 * the catalog and the engine snapshot at their usual ages, digests each
 * job (fresh_job_sig: its objects, its engine record, the state stfs
 * derives, which moves with time too) and compares with the last tick.
 * The jobs added, removed or changed are handed to `fn`, which tells the
 * kernel (ops.c); they are handed once more at the next tick, so that a
 * reply racing the first notification is dropped too.  An idle mount
 * (nothing long-lived held) makes no request at all.
 *
 * The first digest is taken when the ticker starts; until then no reply is
 * long-lived (fresh_ready).  Thread-safe.
 */
#ifndef STFS_FRESHNESS_H
#define STFS_FRESHNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mount/mount.h"
#include "view/view.h"

struct freshness;

/**
 * Jobs `ids` (n of them; each added, removed or changed) are to be
 * invalidated in the kernel; `set_changed`: jobs were added or removed.
 * Called from the ticker's thread with n == 0 once, when the first digest
 * is in (the replies given before it may predate it).
 */
typedef void (*fresh_fn)(void *cookie, const char *const *ids, size_t n,
			 bool set_changed);

/** Start the ticker.  0; -ENOMEM; -errno of pthread_create. */
int fresh_start(struct stfs *fs, unsigned interval_ms, unsigned horizon_ms,
		fresh_fn fn, void *cookie, struct freshness **out);
/** Stop and free it (waits for a tick under way).  NULL-safe. */
void fresh_stop(struct freshness *f);
/** Whether the first digest is in (long-lived replies may be given). */
bool fresh_ready(struct freshness *f);
/** A reply with a long lifetime was just given. */
void fresh_touch(struct freshness *f);
/** Ticks that asked the sources (idle ones do not count). */
uint64_t fresh_ticks(struct freshness *f);

/**
 * Called at every wake of the ticker, idle or not (README "Caching in the
 * kernel": the listings the kernel caches are dropped when their lifetime
 * is over): do what is due, and return in how many ms the next thing falls
 * due (negative: nothing pending).  The ticker then wakes by that time.
 */
typedef int64_t (*fresh_due_fn)(void *cookie);

/** Install `fn` (NULL: none).  Thread-safe. */
void fresh_set_due(struct freshness *f, fresh_due_fn fn, void *cookie);

/** The digest of what the kernel may hold of job `jv` in view `v`. */
uint64_t fresh_job_sig(const struct view *v, const struct job_view *jv);

#endif
