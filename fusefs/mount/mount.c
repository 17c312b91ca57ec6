#include "mount/mount.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/ckinfo.h"
#include "util/log.h"
#include "util/pcache.h"

/* GLIBC_TUNABLES ("name=value:name=value") sets tunable `name` */
static bool tunable_set(const char *tunables, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = tunables; p && *p;) {
		const char *end = strchr(p, ':');

		if (!strncmp(p, name, n) && p[n] == '=')
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/*
 * README "Memory": glibc gives every thread that contends an arena of its
 * own (up to 8 per core); with 32 FUSE workers and a thread per refresh,
 * each list and catalog built on another thread leaves its arena's pages
 * behind (freed, not returned).  A few arenas, and large blocks (catalog
 * arrays, engine answers) always in their own mappings, so that freeing
 * an old snapshot gives its pages back at once.  MALLOC_ARENA_MAX and
 * MALLOC_MMAP_THRESHOLD_ (or their GLIBC_TUNABLES names) in the captured
 * environment win.
 */
unsigned stfs_malloc_tune(const struct conf_env *env)
{
	const char *tun = conf_env_get(env, "GLIBC_TUNABLES");
	unsigned done = 0;

	if (!conf_env_get(env, "MALLOC_ARENA_MAX") &&
	    !tunable_set(tun, "glibc.malloc.arena_max")) {
		mallopt(M_ARENA_MAX, STFS_MALLOC_ARENAS);
		done |= STFS_TUNED_ARENAS;
	}
	if (!conf_env_get(env, "MALLOC_MMAP_THRESHOLD_") &&
	    !tunable_set(tun, "glibc.malloc.mmap_threshold")) {
		mallopt(M_MMAP_THRESHOLD, STFS_MMAP_THRESHOLD);
		done |= STFS_TUNED_MMAP;
	}
	return done;
}

int stfs_init(struct stfs *fs)
{
	stfs_malloc_tune(&fs->conf.env);
	pthread_mutex_init(&fs->cat_lock, NULL);
	pthread_cond_init(&fs->cat_cond, NULL);
	/* README "Memory": capped by entries and bytes, oldest out first */
	fs->pc = pcache_new_capped(fs->conf.cache_ttl_ms,
				   fs->conf.cache_max_entries,
				   (size_t)fs->conf.cache_max_mb << 20);
	/* an eighth of it keeps the sizes of dropped texts (pcache.h) */
	if (fs->pc)
		(void)pcache_keep_sizes(
			fs->pc, ((size_t)fs->conf.cache_max_mb << 20) / 8);
	fs->walsum = pcache_new_capped(STFS_WALSUM_TTL_MS,
				       fs->conf.walsum_max_entries,
				       (size_t)fs->conf.walsum_max_mb << 20);
	fs->ck = ckinfo_new();
	if (fs->ck) {
		ckinfo_set_caps(fs->ck, fs->conf.type_cache_max_entries,
				(size_t)fs->conf.type_cache_max_mb << 20);
		ckinfo_set_summary_caps(fs->ck, fs->conf.info_cache_max_entries,
					(size_t)fs->conf.info_cache_max_mb
						<< 20);
	}
	fs->uid = getuid();
	fs->gid = getgid();
	fs->read_gid = fs->gid;
	fs->start_ms = now_ms();
	return fs->pc && fs->walsum && fs->ck ? 0 : -ENOMEM;
}

void stfs_release(struct stfs *fs)
{
	/* a background listing may still run: let it land first */
	pthread_mutex_lock(&fs->cat_lock);
	while (fs->cat_building)
		pthread_cond_wait(&fs->cat_cond, &fs->cat_lock);
	pthread_mutex_unlock(&fs->cat_lock);
	catalog_put(fs->cat);
	fs->cat = NULL;
	pcache_free(fs->pc);
	fs->pc = NULL;
	pcache_free(fs->walsum);
	fs->walsum = NULL;
	ckinfo_free(fs->ck);
	fs->ck = NULL;
	engine_free(fs->engine);
	fs->engine = NULL;
	be_close(fs->ckpt);
	be_close(fs->imap);
	fs->ckpt = fs->imap = NULL;
	pthread_mutex_destroy(&fs->cat_lock);
	pthread_cond_destroy(&fs->cat_cond);
}

static struct catalog *empty_catalog(int err)
{
	struct catalog *c = NULL;

	if (catalog_from_entries(NULL, 0, &c) == 0)
		c->err = err;
	return c;
}

/* List the namespace and install the result; cat_building is set. */
static void rebuild(struct stfs *fs)
{
	struct catalog *fresh = NULL, *prev;
	uint64_t gen;
	int rc;

	pthread_mutex_lock(&fs->cat_lock);
	gen = fs->cat_gen;
	prev = catalog_get(fs->cat);
	pthread_mutex_unlock(&fs->cat_lock);
	int64_t t0 = mono_ms();

	STFS_INC(fs, catalog_builds);
	/* README "Memory": the jobs that did not change are shared with the
	 * catalog served meanwhile, not built twice */
	rc = catalog_rebuild(fs->ckpt, prev, &fresh);
	catalog_put(prev);

	pthread_mutex_lock(&fs->cat_lock);
	fs->cat_building = false;
	/* only a listing that succeeded says how long listing takes: one that
	 * hit the deadline must not hold off the next try for ten deadlines
	 * (README "Failure modes": the mount recovers by itself) */
	if (rc == 0)
		fs->cat_build_ms = mono_ms() - t0;
	fs->cat_tried = mono_ms();
	if (rc == 0 && gen != fs->cat_gen) {
		/* something was deleted meanwhile: this listing may predate
		 * it; the next caller lists again */
		catalog_put(fresh);
	} else if (rc == 0) {
		catalog_put(fs->cat);
		fs->cat = fresh;
	} else {
		STFS_INC(fs, catalog_errors);
		log_warn("listing %s failed: %s", fs->ckpt->uri, strerror(-rc));
		/* keep serving the previous listing; retry after ttl */
		if (!fs->cat)
			fs->cat = empty_catalog(rc);
	}
	pthread_cond_broadcast(&fs->cat_cond);
	pthread_mutex_unlock(&fs->cat_lock);
}

static void *rebuild_thread(void *arg)
{
	rebuild(arg);
	return NULL;
}

struct catalog *stfs_catalog(struct stfs *fs, unsigned max_age_ms)
{
	int64_t ttl = max_age_ms ? max_age_ms : fs->conf.storage_ttl_ms;
	struct catalog *c = NULL;
	pthread_t t;

	pthread_mutex_lock(&fs->cat_lock);
	/* a listing that takes long is not redone more than a tenth of the
	 * time: 20,000 objects on an object store take seconds to list */
	if (!max_age_ms && ttl < 10 * fs->cat_build_ms)
		ttl = 10 * fs->cat_build_ms;
	for (;;) {
		if (fs->cat && mono_ms() - fs->cat_tried < ttl) {
			c = catalog_get(fs->cat);
			pthread_mutex_unlock(&fs->cat_lock);
			return c;
		}
		if (fs->cat) {
			/*
			 * Stale: serve it, and let one background thread list
			 * the namespace again (stale-while-revalidate), so a
			 * long `du` never waits for a relisting.
			 */
			if (!fs->cat_building) {
				fs->cat_building = true;
				if (pthread_create(&t, NULL, rebuild_thread,
						   fs) == 0)
					pthread_detach(t);
				else
					fs->cat_building = false;
			}
			c = catalog_get(fs->cat);
			pthread_mutex_unlock(&fs->cat_lock);
			return c;
		}
		if (!fs->cat_building)
			break;
		pthread_cond_wait(&fs->cat_cond, &fs->cat_lock);
	}
	/* nothing to serve yet: list now, others wait for this one */
	fs->cat_building = true;
	pthread_mutex_unlock(&fs->cat_lock);
	rebuild(fs);
	pthread_mutex_lock(&fs->cat_lock);
	if (!fs->cat && !fs->cat_building) {
		/* invalidated while listing: list once more */
		fs->cat_building = true;
		pthread_mutex_unlock(&fs->cat_lock);
		rebuild(fs);
	} else {
		pthread_mutex_unlock(&fs->cat_lock);
	}

	pthread_mutex_lock(&fs->cat_lock);
	c = fs->cat ? catalog_get(fs->cat) : NULL;
	pthread_mutex_unlock(&fs->cat_lock);
	return c ? c : empty_catalog(-ENOMEM);
}

/*
 * A fresh answer of the engine, seen for the first time: handed to the
 * hook once (the policy voids releases of jobs running again, README
 * "Deleting safely"), by whichever thread takes it first.
 */
static struct engine_snap *answer_seen(struct stfs *fs, struct engine_snap *s)
{
	int64_t seen;

	if (!fs->on_engine_answer || s->err || !s->data_ms)
		return s;
	seen = __atomic_load_n(&fs->answer_seen_ms, __ATOMIC_ACQUIRE);
	while (s->data_ms > seen)
		if (__atomic_compare_exchange_n(
			    &fs->answer_seen_ms, &seen, s->data_ms, false,
			    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			fs->on_engine_answer(fs, s);
			break;
		}
	return s;
}

struct engine_snap *stfs_engine(struct stfs *fs, unsigned max_age_ms)
{
	struct engine_snap *s;

	if (fs->engine)
		return answer_seen(fs, engine_jobs(fs->engine, max_age_ms));
	s = calloc(1, sizeof(*s));
	if (s) {
		s->refs = 1;
		s->err = -ENOTCONN;
		snprintf(s->errmsg, sizeof(s->errmsg), "no engine configured");
	}
	return s;
}

int stfs_storage_ids(void *cookie, char ***ids, size_t *n)
{
	struct stfs *fs = cookie;
	struct catalog *c = NULL;
	char **v;

	*ids = NULL;
	*n = 0;
	pthread_mutex_lock(&fs->cat_lock);
	if (fs->cat)
		c = catalog_get(fs->cat);
	pthread_mutex_unlock(&fs->cat_lock);
	if (!c)
		c = stfs_catalog(fs, 0);
	v = calloc(c->n_jobs + 1, sizeof(*v));
	if (!v) {
		catalog_put(c);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->n_jobs; i++) {
		v[i] = strdup(c->jobs[i].id);
		if (!v[i]) {
			while (i > 0)
				free(v[--i]);
			free(v);
			catalog_put(c);
			return -ENOMEM;
		}
	}
	*ids = v;
	*n = c->n_jobs;
	catalog_put(c);
	return 0;
}

void stfs_invalidate(struct stfs *fs)
{
	pthread_mutex_lock(&fs->cat_lock);
	catalog_put(fs->cat);
	fs->cat = NULL;
	fs->cat_gen++;
	pthread_mutex_unlock(&fs->cat_lock);
	pcache_clear(fs->pc);
}

void stfs_catalog_removed(struct stfs *fs, const char *const *keys, size_t n)
{
	struct catalog *d = NULL;
	int rc = 0;

	pthread_mutex_lock(&fs->cat_lock);
	if (fs->cat)
		rc = catalog_remove_keys(fs->cat, keys, n, &d);
	if (rc == 0 && d) {
		catalog_put(fs->cat);
		fs->cat = d;
	} else if (rc) {
		catalog_put(fs->cat);
		fs->cat = NULL;
	}
	/* a listing running now may predate the deletion: not installed */
	fs->cat_gen++;
	pthread_mutex_unlock(&fs->cat_lock);
	pcache_clear(fs->pc);
}
