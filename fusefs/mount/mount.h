/*
 * stfs — the daemon's state, shared by every FUSE worker thread.
 *
 * One `struct stfs` exists per mount (fuse_get_context()->private_data).
 * Its sources are the checkpoint backend (`ckpt`), the optional IMap
 * backend (`imap`) and the engine (`engine`, behind the seam of engine.h:
 * the REST client, or a fake in unit tests).  What was read from them is cached
 * here:
 *
 *   - the catalog of the checkpoint namespace, rebuilt at most every
 *     conf.storage_ttl_ms by one thread while the others keep using the
 *     previous one (single flight under cat_lock);
 *   - rendered pseudo-files in `pc` (pcache.h), so that stat, read, stat
 *     agree for conf.cache_ttl_ms;
 *   - decoded IMap maps in `walsum` (a second pcache), keyed by every
 *     WAL file's name, size and mtime, kept STFS_WALSUM_TTL_MS, at most
 *     conf.walsum_max_entries / walsum_max_mb (oldest out first);
 *   - checkpoint types decoded from object headers (ckinfo), keyed by
 *     object key, size and mtime: storage objects never change in place.
 *
 * Lock order: cat_lock, then pcache's lock, then ckinfo_lock; none is held
 * across a remote call except while waiting for the single flight.
 */
#ifndef STFS_MOUNT_H
#define STFS_MOUNT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backends/backend.h"
#include "model/catalog.h"
#include "conf/conf.h"
#include "backends/engine.h"
#include "model/ckinfo.h"

struct pcache;
struct ckinfo_table;

/* how long a decoded IMap map is kept: its key changes with any write, so
 * this only bounds the memory of listings seen once */
#define STFS_WALSUM_TTL_MS (3600u * 1000u)
/* README "Memory": malloc arenas, and the size from which a block gets a
 * mapping of its own (returned to the system when freed) */
#define STFS_MALLOC_ARENAS  2
#define STFS_MMAP_THRESHOLD ((size_t)256 << 10)
#define STFS_TUNED_ARENAS   1u /* stfs_malloc_tune() set M_ARENA_MAX */
#define STFS_TUNED_MMAP	    2u /* ... and M_MMAP_THRESHOLD */
struct release_store;
struct audit;
struct decision_cache;

struct stfs_counters {
	/* atomic */
	uint64_t getattr, readdir, open, read, read_bytes;
	/* the other FUSE calls (README "Prometheus": stfs_fuse_*_total);
	 * forget counts the nodes forgotten (a BATCH_FORGET is many) */
	uint64_t lookup, forget, opendir, releasedir, release, readlink;
	uint64_t getxattr, listxattr, statfs, access;
	/* the freshness ticker and the kernel notifications (README
	 * "Caching in the kernel"): ticks that asked the sources, jobs it
	 * found added/removed/changed, jobs invalidated in the kernel (by
	 * the ticker, twice per change, and by deletions and releases),
	 * notifications sent, answered ENOENT (the kernel held no such
	 * entry: normal), failed otherwise */
	uint64_t fresh_ticks, fresh_jobs_changed, jobs_invalidated;
	uint64_t notify_sent, notify_enoent, notify_failed;
	uint64_t refused_mutations;
	uint64_t catalog_builds, catalog_errors;
	uint64_t pcache_hits, pcache_misses;
	uint64_t live_renders; /* of the never-cached files (tree.c) */
	uint64_t deletions_allowed, deletions_refused;
	/* entries walked by directory listings (skipped ones included): the
	 * work of readdir, which tests check stays linear in the entries */
	uint64_t list_entries;
};

struct stfs {
	struct stfs_conf conf;
	struct backend *ckpt;
	struct backend *imap; /* NULL when imap= could not be opened */
	/* the engine seam (engine.h): the REST client, or a fake in tests;
	 * NULL: no engine to ask (every answer is "unknown") */
	struct engine *engine;

	pthread_mutex_t cat_lock;
	pthread_cond_t cat_cond;
	struct catalog *cat;  /* protected by cat_lock; may be NULL */
	bool cat_building;    /* protected by cat_lock */
	uint64_t cat_gen;     /* protected by cat_lock; bumped by invalidate */
	int64_t cat_build_ms; /* protected by cat_lock; last listing's duration
			       */
	int64_t cat_tried; /* protected by cat_lock; last listing attempt (mono
			      ms) */

	struct pcache *pc;
	/* decoded IMap maps, keyed by their listing (imapsum.h): summaries and
	 * scrapes of an unchanged map read no WAL byte */
	struct pcache *walsum;
	struct ckinfo_table *ck;
	/* the policy's parts, opaque here: opened and closed by the
	 * composition root (main.c) and the policy layer (delete_attach) */
	struct release_store *rel; /* NULL: state_dir unusable, no releases */
	struct audit *audit;
	struct decision_cache *dc;
	/* called once per fresh engine answer (stfs_engine); NULL: none */
	void (*on_engine_answer)(struct stfs *fs, const struct engine_snap *s);
	int64_t answer_seen_ms; /* atomic: data_ms of the last one handed */

	uid_t uid;
	gid_t gid;
	/* who may read what stfs restricts (README "Who can read what"):
	 * root, the daemon's user, and delete_group when it resolves (set by
	 * delete_attach) */
	bool read_group;
	gid_t read_gid; /* delete_group's gid, else the daemon's */
	int64_t start_ms;
	struct stfs_counters n;
};

/** Set up caches and locks (and tune malloc: stfs_malloc_tune with
 * fs->conf.env); sources and the policy's parts (rel, audit, dc) are
 * attached by the caller. 0/-ENOMEM. */
int stfs_init(struct stfs *fs);
/** Tune glibc malloc (STFS_MALLOC_ARENAS, STFS_MMAP_THRESHOLD) where the
 * captured environment `env` (may be NULL) does not set the knob itself
 * (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_, GLIBC_TUNABLES); returns
 * what it set (STFS_TUNED_*). */
unsigned stfs_malloc_tune(const struct conf_env *env);
/** Free caches and close sources (backends, engine). Not the conf, not the
 * policy's parts (delete_detach). */
void stfs_release(struct stfs *fs);

/**
 * The catalog, at most storage_ttl old (or `max_age_ms` when non-zero).
 * Never NULL: on a failed listing, the previous catalog is returned (or an
 * empty one with err set).  Release with catalog_put().
 */
struct catalog *stfs_catalog(struct stfs *fs, unsigned max_age_ms);
/** The engine's jobs (a ref; engine_snap_put it).  Never NULL.  A fresh
 * answer not seen before goes to on_engine_answer first. */
struct engine_snap *stfs_engine(struct stfs *fs, unsigned max_age_ms);
/** engine_ids_fn over the catalog (`cookie` is the struct stfs): the job
 * ids in storage, asked by the engine client when /finished-jobs fails. */
int stfs_storage_ids(void *cookie, char ***ids, size_t *n);
/** Forget the cached catalog and pseudo-files (after a deletion). */
void stfs_invalidate(struct stfs *fs);
/**
 * Objects `keys` were deleted through stfs: take them out of the cached
 * catalog in place (catalog_remove_keys, no listing) and forget the
 * pseudo-files.  Falls back to stfs_invalidate when memory is short.
 */
void stfs_catalog_removed(struct stfs *fs, const char *const *keys, size_t n);

/* where ckinfo reads the mount's checkpoint objects (model/ckinfo.h) */
#define STFS_CK_SRC(fs) \
	(&(const struct ckinfo_src){(fs)->ckpt, (fs)->conf.timeout_ms})

#define STFS_INC(fs, field) \
	__atomic_add_fetch(&(fs)->n.field, 1, __ATOMIC_RELAXED)
#define STFS_ADD(fs, field, v) \
	__atomic_add_fetch(&(fs)->n.field, (v), __ATOMIC_RELAXED)
/* counters are written atomically by many threads: read them so too */
#define STFS_GET(fs, field) __atomic_load_n(&(fs)->n.field, __ATOMIC_RELAXED)

#endif
