/*
 * freshness.c — the ticker of freshness.h.
 */
#include "fusefs/freshness.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "util/jobid.h"
#include "util/log.h"
#include "util/pcache.h"

struct sig {
	char *id;
	uint64_t h;
};

struct sigs {
	struct sig *v;
	size_t n, cap;
	bool oom;
};

struct freshness {
	struct stfs *fs;
	unsigned interval_ms, horizon_ms;
	fresh_fn fn;
	void *cookie;
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;	   /* protected by lock */
	bool ready;	   /* atomic */
	int64_t last_long; /* atomic: mono ms of the last long reply */
	uint64_t ticks;	   /* atomic */
	struct sigs prev;  /* the ticker's own */
	fresh_due_fn due;  /* protected by lock */
	void *due_cookie;  /* protected by lock */
	char **again;	   /* changed at the last tick: handed once more */
	size_t n_again;
	bool again_set;
};

static void sigs_clear(struct sigs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].id);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static uint64_t mix_obj(uint64_t h, const struct cat_obj *o)
{
	int64_t f[5] = {(int64_t)o->size, o->mtime_ns, o->restore_point,
			o->owner.has ? (int64_t)o->owner.perm : -1,
			o->owner.has
				? ((int64_t)o->owner.uid << 32) | o->owner.gid
				: -1};

	h = pcache_mix(h, o->key, strlen(o->key) + 1);
	return pcache_mix(h, f, sizeof(f));
}

/*
 * Everything below jobs/<id>/ is a function of these: the names, sizes,
 * times and owners of the job's objects (hence its pipelines, checkpoints,
 * restore points and links), its engine record (its digest covers state,
 * times and texts), the state derived from both (ORPHAN moves with the
 * clock), and whether the engine answered.
 */
uint64_t fresh_job_sig(const struct view *v, const struct job_view *jv)
{
	const struct cat_job *cj = jv->cj;
	uint64_t h = 0xcbf29ce484222325ULL;
	int64_t f[5] = {jv->state, jv->stale, jv->mtime_s, v->snap->err != 0,
			v->snap->partial};

	h = pcache_mix(h, f, sizeof(f));
	if (jv->ej)
		h = pcache_mix(h, &jv->ej->digest, sizeof(jv->ej->digest));
	if (!cj)
		return h;
	f[0] = cj->in_ckpt_dir | (cj->in_sp_dir << 1);
	f[1] = cj->newest_ckpt_ms;
	h = pcache_mix(h, f, 2 * sizeof(f[0]));
	for (size_t p = 0; p < cj->n_pipes; p++) {
		const struct cat_pipe *pp = &cj->pipes[p];

		h = pcache_mix(h, &pp->id, sizeof(pp->id));
		for (size_t c = 0; c < pp->n_ckpts; c++)
			for (size_t o = 0; o < pp->ckpts[c].n_objs; o++)
				h = mix_obj(h, pp->ckpts[c].objs[o]);
	}
	for (size_t o = 0; o < cj->n_sp; o++)
		h = mix_obj(h, cj->sp_objs[o]);
	for (size_t o = 0; o < cj->n_strays; o++)
		h = mix_obj(h, cj->strays[o]);
	return h;
}

struct collect {
	const struct view *v;
	struct sigs *s;
};

static int collect_one(void *cookie, const struct job_view *jv)
{
	struct collect *c = cookie;
	struct sigs *s = c->s;

	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 256;
		struct sig *nv = realloc(s->v, nc * sizeof(*nv));

		if (!nv) {
			s->oom = true;
			return 1;
		}
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n].id = strdup(jv->id);
	if (!s->v[s->n].id) {
		s->oom = true;
		return 1;
	}
	s->v[s->n++].h = fresh_job_sig(c->v, jv);
	return 0;
}

/*
 * The catalog at its usual age; when that age is past, stfs_catalog has
 * started a relisting in the background: wait for it (a bounded wait), so
 * that a change in storage is seen at this tick, not the next.
 */
static struct catalog *current_catalog(struct stfs *fs)
{
	struct catalog *c = stfs_catalog(fs, 0);
	struct timespec ts;
	bool waited = false;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 2 * (fs->conf.timeout_ms / 1000 + 1);
	pthread_mutex_lock(&fs->cat_lock);
	while (fs->cat_building) {
		waited = true;
		if (pthread_cond_timedwait(&fs->cat_cond, &fs->cat_lock, &ts))
			break;
	}
	pthread_mutex_unlock(&fs->cat_lock);
	if (waited) {
		catalog_put(c);
		c = stfs_catalog(fs, 0);
	}
	return c;
}

static int take(struct freshness *f, struct sigs *out)
{
	struct view v;
	struct collect c = {&v, out};

	memset(out, 0, sizeof(*out));
	v.fs = f->fs;
	v.cat = current_catalog(f->fs);
	v.snap = stfs_engine(f->fs, 0);
	v.now_ms = now_ms();
	v.caller_allowed = NULL;
	view_each_job(&v, collect_one, &c);
	view_close(&v);
	if (out->oom) {
		sigs_clear(out);
		return -ENOMEM;
	}
	return 0;
}

static int push(char ***v, size_t *n, const char *id)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (!(nv[*n] = strdup(id)))
		return -ENOMEM;
	(*n)++;
	return 0;
}

static void free_ids(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* One tick: digest, compare, hand over what changed (and what changed at
 * the last tick). */
static void tick(struct freshness *f)
{
	struct sigs now = {0};
	char **ch = NULL, **all = NULL;
	size_t n_ch = 0, n_all = 0, i = 0, k = 0;
	bool set = false;
	int rc = 0;

	__atomic_add_fetch(&f->ticks, 1, __ATOMIC_RELAXED);
	STFS_INC(f->fs, fresh_ticks); /* .stfs/stats */
	if (take(f, &now))
		return; /* out of memory: try again at the next tick */
	while (rc == 0 && (i < f->prev.n || k < now.n)) {
		int cmp = i >= f->prev.n ? 1
			  : k >= now.n
				  ? -1
				  : jobid_cmp(f->prev.v[i].id, now.v[k].id);

		if (cmp < 0) { /* removed */
			set = true;
			rc = push(&ch, &n_ch, f->prev.v[i].id);
			i++;
		} else if (cmp > 0) { /* added */
			set = true;
			rc = push(&ch, &n_ch, now.v[k].id);
			k++;
		} else {
			if (f->prev.v[i].h != now.v[k].h)
				rc = push(&ch, &n_ch, now.v[k].id);
			i++;
			k++;
		}
	}
	for (size_t j = 0; rc == 0 && j < n_ch; j++)
		rc = push(&all, &n_all, ch[j]);
	for (size_t j = 0; rc == 0 && j < f->n_again; j++)
		rc = push(&all, &n_all, f->again[j]);
	if (rc) {
		/* out of memory: keep the old digest, so that the next tick
		 * finds the same changes */
		free_ids(ch, n_ch);
		free_ids(all, n_all);
		sigs_clear(&now);
		return;
	}
	STFS_ADD(f->fs, fresh_jobs_changed, n_ch);
	if (n_all)
		f->fn(f->cookie, (const char *const *)all, n_all,
		      set || f->again_set);
	free_ids(all, n_all);
	free_ids(f->again, f->n_again);
	f->again = ch;
	f->n_again = n_ch;
	f->again_set = set;
	sigs_clear(&f->prev);
	f->prev = now;
}

/*
 * How long to sleep after a tick: the interval, or less when the storage
 * listing falls due sooner, so that a change in storage is seen about
 * storage_ttl after it, as by a walk that lists again (and not one
 * interval later still).
 */
static unsigned next_wait(struct freshness *f)
{
	struct stfs *fs = f->fs;
	int64_t ttl = fs->conf.storage_ttl_ms, due;

	pthread_mutex_lock(&fs->cat_lock);
	/* as stfs_catalog: a slow listing is redone at most a tenth of the
	 * time */
	if (ttl < 10 * fs->cat_build_ms)
		ttl = 10 * fs->cat_build_ms;
	due = fs->cat_tried + ttl - mono_ms();
	pthread_mutex_unlock(&fs->cat_lock);
	if (due < 0)
		due = 0;
	due += 5; /* just past it */
	return due < (int64_t)f->interval_ms ? (unsigned)due : f->interval_ms;
}

/* The due hook (outside the lock); `wait_ms` shortened to its next due
 * time. */
static unsigned run_due(struct freshness *f, unsigned wait_ms)
{
	fresh_due_fn fn;
	void *cookie;
	int64_t next;

	pthread_mutex_lock(&f->lock);
	fn = f->due;
	cookie = f->due_cookie;
	pthread_mutex_unlock(&f->lock);
	if (!fn)
		return wait_ms;
	next = fn(cookie);
	if (next < 0)
		return wait_ms;
	next += 5; /* just past it */
	return next < (int64_t)wait_ms ? (unsigned)next : wait_ms;
}

static void *ticker(void *arg)
{
	struct freshness *f = arg;
	unsigned wait_ms = 0; /* the first digest at once */

	pthread_mutex_lock(&f->lock);
	while (!f->stop) {
		struct timespec ts;
		int64_t idle;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += wait_ms / 1000;
		ts.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
		wait_ms = f->interval_ms;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (!f->stop &&
		       pthread_cond_timedwait(&f->cond, &f->lock, &ts) == 0)
			;
		if (f->stop)
			break;
		pthread_mutex_unlock(&f->lock);
		if (!fresh_ready(f)) {
			/* the first digest (at once, then every interval until
			 * it is in): replies given before it are short-lived */
			if (take(f, &f->prev) == 0) {
				log_debug("freshness: first digest, %zu jobs",
					  f->prev.n);
				f->fn(f->cookie, NULL, 0, false);
				__atomic_store_n(&f->ready, true,
						 __ATOMIC_RELEASE);
			}
		} else {
			/* nothing long-lived is left in the kernel: every
			 * copy it holds has expired by itself (or is dropped
			 * by the due hook), nothing to ask */
			idle = mono_ms() -
			       __atomic_load_n(&f->last_long, __ATOMIC_RELAXED);
			if (idle < (int64_t)f->horizon_ms || f->n_again) {
				tick(f);
				wait_ms = next_wait(f);
			}
		}
		wait_ms = run_due(f, wait_ms);
		pthread_mutex_lock(&f->lock);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

int fresh_start(struct stfs *fs, unsigned interval_ms, unsigned horizon_ms,
		fresh_fn fn, void *cookie, struct freshness **out)
{
	struct freshness *f = calloc(1, sizeof(*f));
	int rc;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->fs = fs;
	f->interval_ms = interval_ms ? interval_ms : 1;
	f->horizon_ms = horizon_ms;
	f->fn = fn;
	f->cookie = cookie;
	f->last_long = mono_ms() - (int64_t)horizon_ms; /* idle */
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	rc = pthread_create(&f->tid, NULL, ticker, f);
	if (rc) {
		pthread_cond_destroy(&f->cond);
		pthread_mutex_destroy(&f->lock);
		free(f);
		return -rc;
	}
	*out = f;
	return 0;
}

void fresh_stop(struct freshness *f)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	pthread_join(f->tid, NULL);
	sigs_clear(&f->prev);
	free_ids(f->again, f->n_again);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

bool fresh_ready(struct freshness *f)
{
	return f && __atomic_load_n(&f->ready, __ATOMIC_ACQUIRE);
}

void fresh_touch(struct freshness *f)
{
	int64_t now = mono_ms();

	/* many threads, one clock: a store only when it moves */
	if (__atomic_load_n(&f->last_long, __ATOMIC_RELAXED) != now)
		__atomic_store_n(&f->last_long, now, __ATOMIC_RELAXED);
}

void fresh_set_due(struct freshness *f, fresh_due_fn fn, void *cookie)
{
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	f->due = fn;
	f->due_cookie = cookie;
	pthread_mutex_unlock(&f->lock);
}

uint64_t fresh_ticks(struct freshness *f)
{
	return f ? __atomic_load_n(&f->ticks, __ATOMIC_RELAXED) : 0;
}
