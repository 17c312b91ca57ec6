/*
 * delete.c — the deletion path.
 *
 * A decision needs three facts about a job: its state (the engine's fresh
 * answer, or ORPHAN/UNKNOWN), whether it was released, and what class the
 * target object is in.  The first two come from a per-job "decision" that
 * lives for decision_age_ms; the object's class comes from a fresh listing
 * of the job made together with the engine's answer.  Objects removed
 * through the decision are remembered in it, so that `rmdir` after
 * `unlink`s in one `rm -r` sees them gone without listing again.
 */
#include "policy/delete.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/audit.h"
#include "model/ckinfo.h"
#include "util/log.h"
#include "model/protostuff.h"
#include "policy/release.h"
#include "policy/rules.h"

#include <unistd.h>

struct decision {
	char id[24];
	int64_t mono_ms;
	int64_t answer_ms;   /* wall time of the engine's answer */
	int engine_err;	     /* 0, or why the engine could not tell */
	int state;	     /* enum job_state */
	bool young_orphan;   /* rule_input.young_orphan */
	int64_t finish_s;    /* the engine's finish time of the job, or 0 */
	const char *source;  /* "engine", "storage", "engine(unreachable)" */
	struct catalog *cat; /* this job only, listed with the answer */
	/*
	 * The job as it was when this deletion session began (a session
	 * ends after GHOST_MS without a decision): directories emptied by
	 * `rm -r` stay resolvable through it until rm reaches their rmdir.
	 */
	struct catalog *ghost;
	int64_t last_use_mono_ms;
	char **removed; /* keys deleted in this session */
	size_t n_removed;
	struct decision *next;
};

#define INVAL_MAX 256
#define GHOST_MS  10000

/*
 * Predictions (`deletable`, the status verdict) of recent renders: a walk
 * that stats every job's status and deletable asks the engine and lists
 * the job's storage once per decision_age, not once per file, and a job
 * whose storage or engine just failed is not asked again for one deadline
 * (so `du` over an unreachable store costs one deadline, not one per file).
 * Any decision, deletion or release in the mount bumps `pred_gen`, which
 * voids them all: a prediction never outlives a change.
 */
#define PRED_SLOTS 64
struct prediction {
	char id[24];
	bool caller_allowed;
	uint64_t gen;
	int64_t mono_ms;
	int rc;
	struct delete_assessment a;
};

struct decision_cache {
	pthread_mutex_t lock;
	struct decision *head;		    /* protected by lock */
	struct prediction pred[PRED_SLOTS]; /* protected by lock */
	uint64_t pred_gen;		    /* protected by lock */

	delete_resolve_fn resolve; /* set once, before the mount serves */

	/* kernel invalidation worker; protected by lock */
	delete_inval_fn inval;
	void *inval_cookie;
	bool worker;
	bool stop; /* the worker is to end */
	pthread_t tid;
	pthread_cond_t cond;
	char *queue[INVAL_MAX];
	size_t n_queue;
};

static void pred_void(struct decision_cache *dc)
{
	pthread_mutex_lock(&dc->lock);
	dc->pred_gen++;
	pthread_mutex_unlock(&dc->lock);
}

static struct decision_cache *decision_cache_new(void)
{
	struct decision_cache *dc = calloc(1, sizeof(*dc));

	if (!dc)
		return NULL;
	pthread_mutex_init(&dc->lock, NULL);
	pthread_cond_init(&dc->cond, NULL);
	return dc;
}

static void decision_free(struct decision *d)
{
	catalog_put(d->cat);
	catalog_put(d->ghost);
	for (size_t i = 0; i < d->n_removed; i++)
		free(d->removed[i]);
	free(d->removed);
	free(d);
}

/* End the invalidation worker and wait for it: it must neither use the
 * fuse handle after unmount nor the cache once freed. */
static void inval_stop(struct decision_cache *dc)
{
	bool joined;
	pthread_t t;

	pthread_mutex_lock(&dc->lock);
	joined = dc->worker;
	t = dc->tid;
	dc->stop = true;
	pthread_cond_broadcast(&dc->cond);
	pthread_mutex_unlock(&dc->lock);
	if (joined)
		pthread_join(t, NULL);
	pthread_mutex_lock(&dc->lock);
	dc->worker = false;
	dc->inval = NULL;
	dc->inval_cookie = NULL;
	pthread_mutex_unlock(&dc->lock);
}

static void decision_cache_free(struct decision_cache *dc)
{
	if (!dc)
		return;
	while (dc->head) {
		struct decision *d = dc->head;

		dc->head = d->next;
		decision_free(d);
	}
	inval_stop(dc);
	for (size_t i = 0; i < dc->n_queue; i++)
		free(dc->queue[i]);
	free(dc);
}

static bool job_of(const char *path, char *id, size_t idsz);

int delete_attach(struct stfs *fs)
{
	fs->dc = decision_cache_new();
	/* resolved once, at mount: a group lookup may block on NSS */
	fs->read_group =
		rules_group_gid(fs->conf.delete_group, &fs->read_gid) == 0;
	if (!fs->read_group)
		fs->read_gid = fs->gid;
	return fs->dc ? 0 : -ENOMEM;
}

void delete_detach(struct stfs *fs)
{
	fs->on_engine_answer = NULL;
	decision_cache_free(fs->dc);
	fs->dc = NULL;
	release_close(fs->rel);
	fs->rel = NULL;
	audit_close(fs->audit);
	fs->audit = NULL;
}

/* ---- callers */

bool delete_caller_allowed(struct stfs *fs, const struct caller *c)
{
	return rules_caller_allowed(c->uid, c->gid, c->groups, c->ngroups,
				    fs->conf.delete_group);
}

void delete_audit(struct stfs *fs, const struct caller *c, const char *op,
		  const char *path, const char *object, const char *state,
		  const char *source, int64_t age_ms, const char *rule, int err)
{
	struct audit_rec r;
	char comm[64] = "";

	if (err)
		STFS_INC(fs, deletions_refused);
	else if (strcmp(op, "unlink") == 0)
		STFS_INC(fs, deletions_allowed);
	if (!fs->audit)
		return;
	audit_comm(c->pid, comm, sizeof(comm));
	memset(&r, 0, sizeof(r));
	r.time_ms = now_ms();
	r.uid = c->uid;
	r.pid = c->pid;
	r.comm = comm;
	r.op = op;
	r.path = path;
	r.object = object ? object : "";
	r.state = state;
	r.state_source = source;
	r.state_age_ms = age_ms;
	r.rule = rule ? rule : "";
	r.err = err;
	audit_record(fs->audit, &r);
}

static void audit_decision(struct stfs *fs, const struct caller *c,
			   const char *op, const char *path, const char *object,
			   const struct decision *d, const char *rule, int err)
{
	delete_audit(fs, c, op, path, object,
		     d ? job_state_name(d->state) : "-", d ? d->source : "-",
		     d ? mono_ms() - d->mono_ms : 0, rule, err);
}

/* ---- kernel invalidation, off the FUSE call path */

static void *inval_worker(void *arg)
{
	struct decision_cache *dc = arg;

	pthread_mutex_lock(&dc->lock);
	for (;;) {
		while (dc->n_queue == 0 && !dc->stop)
			pthread_cond_wait(&dc->cond, &dc->lock);
		if (dc->stop)
			break;
		char *path = dc->queue[--dc->n_queue];

		pthread_mutex_unlock(&dc->lock);
		dc->inval(dc->inval_cookie, path);
		free(path);
		pthread_mutex_lock(&dc->lock);
	}
	pthread_mutex_unlock(&dc->lock);
	return NULL;
}

void delete_set_resolver(struct stfs *fs, delete_resolve_fn fn)
{
	fs->dc->resolve = fn;
}

void delete_set_invalidate(struct stfs *fs, delete_inval_fn fn, void *cookie)
{
	struct decision_cache *dc = fs->dc;

	if (!fn) {
		inval_stop(dc);
		return;
	}
	pthread_mutex_lock(&dc->lock);
	dc->inval = fn;
	dc->inval_cookie = cookie;
	dc->stop = false;
	if (!dc->worker &&
	    pthread_create(&dc->tid, NULL, inval_worker, dc) == 0)
		dc->worker = true;
	pthread_mutex_unlock(&dc->lock);
}

static void inval_path(struct stfs *fs, const char *path)
{
	struct decision_cache *dc = fs->dc;
	char *p;

	pthread_mutex_lock(&dc->lock);
	if (dc->worker && dc->n_queue < INVAL_MAX && (p = strdup(path))) {
		dc->queue[dc->n_queue++] = p;
		pthread_cond_signal(&dc->cond);
	}
	pthread_mutex_unlock(&dc->lock);
}

/* Drop what the daemon and the kernel cached about job `id`; `key`: the
 * object deleted, taken out of the catalog without listing again. */
static void after_change(struct stfs *fs, const char *id, const char *key)
{
	static const char *const files[] = {"status", "deletable", "restore",
					    "metrics", ""};
	char p[128];

	pred_void(fs->dc);
	if (key)
		stfs_catalog_removed(fs, &key, 1);
	else
		stfs_invalidate(fs);
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		snprintf(p, sizeof(p), "/jobs/%s%s%s", id, *files[i] ? "/" : "",
			 files[i]);
		inval_path(fs, p);
	}
}

/* ---- decisions */

/* /job-info/<id>: 0 and *state, *finish_s; -ENOENT; else -errno. */
static int ask_engine(struct stfs *fs, const char *id, int *state,
		      int64_t *finish_s)
{
	struct engine_job ej;
	int rc;

	memset(&ej, 0, sizeof(ej));
	if (!fs->engine)
		return -ENOTCONN;
	rc = engine_job_info(fs->engine, id, &ej);
	if (rc == 0) {
		*state = ej.state;
		*finish_s = ej.finish_s;
		engine_job_release(&ej);
	}
	return rc;
}

static int job_state_for(struct stfs *fs, const char *id,
			 const struct catalog *cat, struct decision *d)
{
	const struct cat_job *cj = catalog_find(cat, id);
	int rc, state = JS_UNKNOWN;

	d->engine_err = 0;
	d->young_orphan = false;
	d->finish_s = 0;
	rc = ask_engine(fs, id, &state, &d->finish_s);
	if (rc == 0) {
		d->source = "engine";
		return state;
	}
	if (rc != -ENOENT) {
		d->engine_err = rc;
		d->source = "engine(unreachable)";
		return JS_UNKNOWN;
	}
	d->source = "storage";
	if (!cj)
		return JS_ORPHAN; /* nothing left in storage, nothing to keep */
	if (now_ms() - cj->newest_mtime_ns / 1000000 >=
	    (int64_t)fs->conf.orphan_grace_s * 1000)
		return JS_ORPHAN;
	/* the engine answered: not dead yet (R1), not unknowable (R3) */
	d->young_orphan = true;
	return JS_UNKNOWN;
}

static void void_release(struct stfs *fs, const char *id, const char *why);
static int64_t job_newest_ns(const struct catalog *cat, const char *id);

/*
 * Why the release of decision `d`'s job is void (into why), or NULL when
 * it stands (or there is none): the engine answered, after the release,
 * that the job runs again; or it has run since (newer objects, a later
 * finish: the release covers the job as it was).
 */
static const char *release_void_why(struct stfs *fs, const struct decision *d,
				    char *why, size_t whysz)
{
	if (!fs->rel || !release_is_released(fs->rel, d->id))
		return NULL;
	if (d->engine_err == 0 && d->state != JS_ORPHAN &&
	    d->state != JS_UNKNOWN && !job_state_is_end(d->state) &&
	    d->answer_ms > release_time_ms(fs->rel, d->id)) {
		snprintf(why, whysz, "it is %s again",
			 job_state_name(d->state));
		return why;
	}
	if (!release_covers(fs->rel, d->id, job_newest_ns(d->cat, d->id),
			    d->finish_s)) {
		snprintf(why, whysz,
			 "it has run again since its release "
			 "(newer objects or a later finish)");
		return why;
	}
	return NULL;
}

/* The newest mtime among the objects of job `id` in `cat` (0: none). */
static int64_t job_newest_ns(const struct catalog *cat, const char *id)
{
	const struct cat_job *cj = catalog_find(cat, id);

	return cj ? cj->newest_mtime_ns : 0;
}

/*
 * Keys removed earlier in the session that the fresh listing `cat` (made
 * after those removals) holds again were written anew: they are no longer
 * "removed".
 */
static void forget_listed(struct decision *d, const struct catalog *cat)
{
	size_t k = 0;

	for (size_t i = 0; i < d->n_removed; i++) {
		if (catalog_find_key(cat, d->removed[i]))
			free(d->removed[i]);
		else
			d->removed[k++] = d->removed[i];
	}
	d->n_removed = k;
}

/*
 * A prediction (`deletable`, at a stat or read) need not list its job
 * afresh while the mount's listing of the namespace is younger than
 * cache_ttl (README "Deleting safely"): the catalog then, or NULL.  A
 * deletion or release never takes this: it decides on a listing of its own.
 */
static struct catalog *recent_catalog(struct stfs *fs)
{
	struct catalog *c = NULL;

	pthread_mutex_lock(&fs->cat_lock);
	if (fs->cat && fs->cat->err == 0 &&
	    mono_ms() - fs->cat->built_mono_ms < (int64_t)fs->conf.cache_ttl_ms)
		c = catalog_get(fs->cat);
	pthread_mutex_unlock(&fs->cat_lock);
	return c;
}

/*
 * The decision for job `id` (a private copy with its own catalog ref;
 * release with decision_free).  NULL with *err set when the storage of the
 * job cannot be listed.  store false (a prediction): from the mount's
 * listing when it is recent (recent_catalog), else a listing of the job.
 */
static struct decision *decision_get(struct stfs *fs, const char *id, int *err,
				     bool store)
{
	struct decision_cache *dc = fs->dc;
	struct decision *d, *copy;
	struct catalog *cat = NULL;
	int rc;

	pthread_mutex_lock(&dc->lock);
	for (d = dc->head; d; d = d->next)
		if (strcmp(d->id, id) == 0)
			break;
	if (d && mono_ms() - d->mono_ms > (int64_t)fs->conf.decision_age_ms)
		d = NULL;
	if (d) {
		copy = calloc(1, sizeof(*copy));
		if (copy) {
			*copy = *d;
			copy->next = NULL;
			copy->removed = NULL;
			copy->n_removed = 0;
			copy->cat = catalog_get(d->cat);
			copy->ghost = d->ghost ? catalog_get(d->ghost) : NULL;
			if (store)
				d->last_use_mono_ms = mono_ms();
			for (size_t i = 0; i < d->n_removed; i++) {
				char **r = realloc(copy->removed,
						   (i + 1) * sizeof(*r));

				if (!r)
					break;
				copy->removed = r;
				if (!(r[i] = strdup(d->removed[i])))
					break;
				copy->n_removed = i + 1;
			}
		}
		pthread_mutex_unlock(&dc->lock);
		if (!copy)
			*err = -ENOMEM;
		return copy;
	}
	pthread_mutex_unlock(&dc->lock);

	cat = store ? NULL : recent_catalog(fs);
	rc = cat ? 0 : catalog_build_job(fs->ckpt, id, &cat);
	if (rc) {
		*err = rc;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		catalog_put(cat);
		*err = -ENOMEM;
		return NULL;
	}
	snprintf(d->id, sizeof(d->id), "%s", id);
	d->cat = cat;
	d->state = job_state_for(fs, id, cat, d);
	d->mono_ms = mono_ms();
	d->answer_ms = now_ms();
	/* a prediction neither starts nor extends a session: the first
	 * deletion in a job asks the engine afresh (README "Deleting safely");
	 * nor does it write: it counts a release to be voided as void
	 * (decision_input) */
	if (!store)
		return d;
	{
		char why[96];

		if (release_void_why(fs, d, why, sizeof(why)))
			void_release(fs, id, why);
	}

	/* a fresh answer for a deletion or release: predictions made
	 * before it are void */
	pred_void(dc);
	/* remember it: replace an older entry for the job, carrying its
	 * session (ghost and removed keys) on while it is recent */
	copy = calloc(1, sizeof(*copy));
	if (copy) {
		*copy = *d;
		copy->cat = catalog_get(cat);
		copy->ghost = catalog_get(cat);
		copy->last_use_mono_ms = mono_ms();
		pthread_mutex_lock(&dc->lock);
		for (struct decision **pp = &dc->head; *pp; pp = &(*pp)->next) {
			struct decision *old = *pp;

			if (strcmp(old->id, id) != 0)
				continue;
			*pp = old->next;
			if (copy->last_use_mono_ms - old->last_use_mono_ms <
			    GHOST_MS) {
				catalog_put(copy->ghost);
				copy->ghost = old->ghost;
				old->ghost = NULL;
				copy->removed = old->removed;
				copy->n_removed = old->n_removed;
				old->removed = NULL;
				old->n_removed = 0;
				forget_listed(copy, cat);
			}
			decision_free(old);
			break;
		}
		/* forget sessions idle for long: the cache stays small after
		 * an rm -r of many jobs */
		for (struct decision **pp = &dc->head; *pp;) {
			struct decision *old = *pp;

			if (copy->last_use_mono_ms - old->last_use_mono_ms >
			    6 * GHOST_MS) {
				*pp = old->next;
				decision_free(old);
			} else {
				pp = &old->next;
			}
		}
		copy->next = dc->head;
		dc->head = copy;
		d->ghost = catalog_get(copy->ghost);
		/* the caller's copy sees the session's removed keys too */
		for (size_t i = 0; i < copy->n_removed; i++) {
			char **r = realloc(d->removed, (i + 1) * sizeof(*r));

			if (!r || !(r[i] = strdup(copy->removed[i])))
				break;
			d->removed = r;
			d->n_removed = i + 1;
		}
		pthread_mutex_unlock(&dc->lock);
	}
	return d;
}

static void decision_note_removed(struct stfs *fs, const char *id,
				  const char *key)
{
	struct decision_cache *dc = fs->dc;

	pthread_mutex_lock(&dc->lock);
	for (struct decision *d = dc->head; d; d = d->next) {
		char **r;

		if (strcmp(d->id, id) != 0)
			continue;
		r = realloc(d->removed, (d->n_removed + 1) * sizeof(*r));
		if (r) {
			d->removed = r;
			if ((r[d->n_removed] = strdup(key)))
				d->n_removed++;
		}
		break;
	}
	pthread_mutex_unlock(&dc->lock);
}

struct catalog *delete_ghost(struct stfs *fs, const char *path)
{
	struct decision_cache *dc = fs->dc;
	struct catalog *g = NULL;
	char id[24];

	if (!job_of(path, id, sizeof(id)))
		return NULL;
	pthread_mutex_lock(&dc->lock);
	for (struct decision *d = dc->head; d; d = d->next) {
		if (strcmp(d->id, id) != 0)
			continue;
		if (d->ghost && mono_ms() - d->last_use_mono_ms < GHOST_MS)
			g = catalog_get(d->ghost);
		break;
	}
	pthread_mutex_unlock(&dc->lock);
	return g;
}

bool delete_is_removed(struct stfs *fs, const char *key)
{
	struct decision_cache *dc = fs->dc;
	bool r = false;

	pthread_mutex_lock(&dc->lock);
	for (struct decision *d = dc->head; d && !r; d = d->next)
		for (size_t i = 0; i < d->n_removed && !r; i++)
			r = strcmp(d->removed[i], key) == 0;
	pthread_mutex_unlock(&dc->lock);
	return r;
}

static bool removed(const struct decision *d, const char *key)
{
	for (size_t i = 0; i < d->n_removed; i++)
		if (strcmp(d->removed[i], key) == 0)
			return true;
	return false;
}

static void void_release(struct stfs *fs, const char *id, const char *why)
{
	struct caller c = {.uid = 0};
	char path[64];

	c.pid = getpid();
	snprintf(path, sizeof(path), "/jobs/%s", id);
	pred_void(fs->dc);
	if (release_set(fs->rel, id, false, 0, now_ms(), NULL) == 0) {
		log_info("job %s: its release is void: %s", id, why);
		audit_decision(fs, &c, "void", path, "", NULL, "R2", 0);
		stfs_invalidate(fs);
	}
}

void delete_void_release(struct stfs *fs, const char *id, int state,
			 int64_t seen_ms)
{
	char why[64];

	if (!fs->rel || !release_is_released(fs->rel, id))
		return;
	/* only an answer the engine gave after the release voids it: a
	 * listing fetched before it says nothing about the job since */
	if (seen_ms <= release_time_ms(fs->rel, id))
		return;
	snprintf(why, sizeof(why), "it is %s again", job_state_name(state));
	void_release(fs, id, why);
}

static void on_engine_answer(struct stfs *fs, const struct engine_snap *s)
{
	for (size_t i = 0; i < s->n_jobs; i++)
		if (s->jobs[i].state != JS_UNKNOWN &&
		    !job_state_is_end(s->jobs[i].state))
			delete_void_release(fs, s->jobs[i].id, s->jobs[i].state,
					    s->data_ms);
}

void delete_watch_engine(struct stfs *fs)
{
	fs->on_engine_answer = on_engine_answer;
}

/* "/jobs/<id>[/...]" -> id; false for any other path */
static bool job_of(const char *path, char *id, size_t idsz)
{
	const char *p, *e;

	if (strncmp(path, "/jobs/", 6) != 0)
		return false;
	p = path + 6;
	e = strchr(p, '/');
	if (!e)
		e = p + strlen(p);
	if (e == p || (size_t)(e - p) >= idsz ||
	    !jobid_canonical(p, (size_t)(e - p)))
		return false;
	memcpy(id, p, (size_t)(e - p));
	id[e - p] = '\0';
	return true;
}

/*
 * The class of object `o` of group `group`.  Telling a real-layout
 * savepoint from a superseded checkpoint reads the object's header; it is
 * read only where the split can change the verdict (rules_type_matters).
 * An object whose type cannot be told (a read error, bytes that do not
 * decode) counts as a savepoint there: unknown is protected, never
 * superseded.
 */
static enum obj_class classify_obj(struct stfs *fs, const struct cat_obj *o,
				   enum obj_group group,
				   const struct rule_input *in)
{
	int type;

	switch (group) {
	case OG_SP:
		return OC_SAVEPOINT;
	case OG_OTHER:
		return OC_STRAY;
	case OG_CKPT:
		break;
	}
	if (o->kind == CAT_REAL && o->rn.tmp)
		return OC_INFLIGHT;
	if (o->restore_point)
		return OC_RESTORE_POINT;
	if (o->kind != CAT_REAL || !rules_type_matters(in))
		return OC_SUPERSEDED;
	type = ckinfo_type(fs->ck, STFS_CK_SRC(fs), o);
	if (type == CKPT_SAVEPOINT || type == CKPT_TYPE_UNKNOWN)
		return OC_SAVEPOINT;
	return OC_SUPERSEDED;
}

static enum obj_class classify(struct stfs *fs, const struct del_node *n,
			       const struct rule_input *in)
{
	if (n->kind != DK_OBJ)
		return OC_VIEW;
	return classify_obj(fs, n->obj, n->group, in);
}

static size_t count_live(const struct decision *d, struct cat_obj *const *objs,
			 size_t n, const char *prefix)
{
	size_t len = prefix ? strlen(prefix) : 0, live = 0;

	for (size_t i = 0; i < n; i++) {
		if (prefix && (strncmp(objs[i]->name, prefix, len) != 0 ||
			       objs[i]->name[len] != '/'))
			continue;
		live += !removed(d, objs[i]->key);
	}
	return live;
}

static size_t pipe_live(const struct decision *d, const struct cat_pipe *p)
{
	size_t live = 0;

	for (size_t i = 0; p && i < p->n_ckpts; i++)
		live += count_live(d, p->ckpts[i].objs, p->ckpts[i].n_objs,
				   NULL);
	return live;
}

/* Storage objects still present below directory node `n`. */
static size_t objects_below(const struct decision *d, const struct del_node *n)
{
	const struct cat_job *cj = n->cj;
	size_t live = 0;

	if (!cj)
		return 0;
	switch (n->kind) {
	case DK_JOB:
		live += count_live(d, cj->sp_objs, cj->n_sp, NULL);
		live += count_live(d, cj->strays, cj->n_strays, NULL);
		__attribute__((fallthrough));
	case DK_PIPES:
		for (size_t i = 0; i < cj->n_pipes; i++)
			live += pipe_live(d, &cj->pipes[i]);
		return live;
	case DK_PIPE:
		return pipe_live(d, n->pipe);
	case DK_CKPT:
		return count_live(d, n->ckpt->objs, n->ckpt->n_objs, NULL);
	case DK_SPS:
		return count_live(d, cj->sp_objs, cj->n_sp, NULL);
	case DK_OTHER:
		return count_live(d, cj->strays, cj->n_strays, NULL);
	case DK_SUBDIR:
		if (n->group == OG_CKPT)
			return count_live(d, n->ckpt->objs, n->ckpt->n_objs,
					  n->sub);
		if (n->group == OG_SP)
			return count_live(d, cj->sp_objs, cj->n_sp, n->sub);
		return count_live(d, cj->strays, cj->n_strays, n->sub);
	default:
		return 0;
	}
}

/* Remove the empty directories of `dir` (depth first), then `dir`. */
static void prune(struct backend *be, const char *dir, int depth);

struct prune_ctx {
	char (*names)[256];
	size_t n, cap;
};

static int prune_fill(void *cookie, const char *name, const struct be_attr *a)
{
	struct prune_ctx *pc = cookie;

	if (a && a->type == BE_DIR && pc->n < pc->cap &&
	    strlen(name) < sizeof(pc->names[0]))
		snprintf(pc->names[pc->n++], sizeof(pc->names[0]), "%s", name);
	return 0;
}

static void prune(struct backend *be, const char *dir, int depth)
{
	struct prune_ctx pc = {.cap = 256};
	char child[2048];

	if (depth > 16)
		return;
	pc.names = calloc(pc.cap, sizeof(*pc.names));
	if (!pc.names)
		return;
	if (be_list(be, dir, 0, prune_fill, &pc) == 0)
		for (size_t i = 0; i < pc.n; i++) {
			snprintf(child, sizeof(child), "%s/%s", dir,
				 pc.names[i]);
			prune(be, child, depth + 1);
		}
	free(pc.names);
	be_rmdir(be, dir);
}

/* The job's facts of decision `d` into `in` (ro and caller set by caller). */
static void decision_input(struct stfs *fs, const struct decision *d,
			   struct rule_input *in)
{
	in->engine_err = d->engine_err;
	in->state = d->state;
	in->young_orphan = d->young_orphan;
	char why[96];

	in->released =
		fs->rel &&
		release_covers(fs->rel, d->id, job_newest_ns(d->cat, d->id),
			       d->finish_s) &&
		!release_void_why(fs, d, why, sizeof(why));
}

struct target {
	char id[24];
	struct decision *d;
	struct engine_snap *snap;
	int64_t now_ms;
	struct del_node n;
	struct rule_input in;
	struct rule_result res;
};

/*
 * Common start of unlink/rmdir/release: R5 and R4 before anything remote,
 * then the fresh decision and the node.  Returns 0 with t filled (the
 * caller must call target_done) or -errno (already audited).
 */
static int target_open(struct stfs *fs, const struct caller *c,
		       const char *path, const char *op, struct target *t)
{
	int rc = 0;

	memset(t, 0, sizeof(*t));
	if (!job_of(path, t->id, sizeof(t->id)))
		return -EROFS;
	t->in.ro = fs->conf.ro;
	t->in.caller_allowed = delete_caller_allowed(fs, c);
	t->in.state = JS_FAILED; /* placeholder: only R5/R4 can fire here */
	t->in.cls = OC_VIEW;
	rules_decide(&t->in, &t->res);
	if (t->res.err == EROFS || t->res.err == EACCES) {
		audit_decision(fs, c, op, path, "", NULL, t->res.rule,
			       t->res.err);
		return -t->res.err;
	}
	t->d = decision_get(fs, t->id, &rc, true);
	if (!t->d) {
		audit_decision(fs, c, op, path, "", NULL, "R3", EAGAIN);
		log_warn("%s %s: cannot list the job's storage: %s", op, path,
			 strerror(-rc));
		return rc == -ENOENT ? -ENOENT : -EAGAIN;
	}
	decision_input(fs, t->d, &t->in);
	t->snap = stfs_engine(fs, 0);
	t->now_ms = now_ms();
	return 0;
}

/* Resolve `path` against the fresh listing (ghost false) or the session's
 * ghost, which only keeps emptied directories resolvable for rmdir. */
static int target_resolve(struct stfs *fs, struct target *t, const char *path,
			  bool ghost)
{
	if (!fs->dc->resolve)
		return -ENOSYS;
	return fs->dc->resolve(fs, ghost ? t->d->ghost : t->d->cat, t->snap,
			       t->now_ms, path, &t->n);
}

static void target_done(struct target *t)
{
	engine_snap_put(t->snap);
	if (t->d)
		decision_free(t->d);
}

int delete_unlink(struct stfs *fs, const struct caller *c, const char *path)
{
	struct target t;
	const char *key = "";
	int rc;

	rc = target_open(fs, c, path, "unlink", &t);
	if (rc)
		return rc;
	rc = target_resolve(fs, &t, path, false);
	if (rc == -ENOENT && t.d->ghost) {
		/* a link or pseudo-file of a directory this session emptied
		 * (`latest` of a pipeline without checkpoints): a view, gone
		 * with nothing to remove; an object absent from the fresh
		 * listing stays ENOENT */
		if (target_resolve(fs, &t, path, true) == 0 &&
		    t.n.kind == DK_FILE)
			rc = 0;
	}
	if (rc == 0 && t.n.kind != DK_OBJ && t.n.kind != DK_FILE)
		rc = -EISDIR;
	if (rc == 0 && t.n.kind == DK_OBJ && removed(t.d, t.n.obj->key))
		rc = -ENOENT;
	if (rc) {
		target_done(&t);
		return rc;
	}
	t.in.cls = classify(fs, &t.n, &t.in);
	if (t.n.kind == DK_OBJ)
		key = t.n.obj->key;
	rules_decide(&t.in, &t.res);
	if (t.res.err) {
		audit_decision(fs, c, "unlink", path, key, t.d, t.res.rule,
			       t.res.err);
		target_done(&t);
		return -t.res.err;
	}
	if (t.n.kind == DK_OBJ) {
		rc = be_remove(fs->ckpt, key);
		if (rc == -ENOENT)
			rc = 0; /* gone already: what rm wanted */
		if (rc == 0)
			decision_note_removed(fs, t.id, key);
	}
	audit_decision(fs, c, "unlink", path, key, t.d, t.res.rule, -rc);
	if (rc == 0 && t.n.kind == DK_OBJ)
		after_change(fs, t.id, key);
	target_done(&t);
	return rc;
}

int delete_rmdir(struct stfs *fs, const struct caller *c, const char *path)
{
	struct target t;
	bool ghost = false;
	size_t live;
	int rc;

	rc = target_open(fs, c, path, "rmdir", &t);
	if (rc)
		return rc;
	rc = target_resolve(fs, &t, path, false);
	if (rc == -ENOENT && t.d->ghost) {
		/* emptied by this session's `rm -r`: absent from the fresh
		 * listing, so nothing is left below it */
		rc = target_resolve(fs, &t, path, true);
		if (rc == 0 && t.n.kind != DK_OBJ && t.n.kind != DK_FILE)
			ghost = true;
	}
	if (rc == 0 && (t.n.kind == DK_OBJ || t.n.kind == DK_FILE))
		rc = -ENOTDIR;
	if (rc) {
		target_done(&t);
		return rc;
	}
	t.in.cls = OC_VIEW;
	rules_decide(&t.in, &t.res);
	if (t.res.err) {
		audit_decision(fs, c, "rmdir", path, "", t.d, t.res.rule,
			       t.res.err);
		target_done(&t);
		return -t.res.err;
	}
	live = ghost ? 0 : objects_below(t.d, &t.n);
	if (live) {
		audit_decision(fs, c, "rmdir", path, "", t.d, "", ENOTEMPTY);
		target_done(&t);
		return -ENOTEMPTY;
	}
	if (t.n.kind == DK_JOB) {
		char dir[64];

		/* the job's own (now empty) directories, on stores that have
		 * directories */
		prune(fs->ckpt, t.id, 0);
		snprintf(dir, sizeof(dir), "savepoint/%s", t.id);
		prune(fs->ckpt, dir, 0);
		after_change(fs, t.id, NULL);
	}
	audit_decision(fs, c, "rmdir", path, "", t.d, "", 0);
	target_done(&t);
	return 0;
}

int delete_release(struct stfs *fs, const struct caller *c,
		   const char *job_path, bool release)
{
	const char *op = release ? "release" : "protect";
	struct target t;
	int rc;

	if (!fs->rel)
		return -EROFS;
	rc = target_open(fs, c, job_path, op, &t);
	if (rc)
		return rc;
	rules_decide_release(&t.in, &t.res);
	if (!release && (t.res.err == EAGAIN || t.res.err == EBUSY))
		t.res.err = 0; /* protecting is always safe */
	if (t.res.err) {
		audit_decision(fs, c, op, job_path, "", t.d, t.res.rule,
			       t.res.err);
		target_done(&t);
		return -t.res.err;
	}
	{
		/* the release covers the job as it is now (release.h) */
		struct release_bind b = {
			.newest_ns = job_newest_ns(t.d->cat, t.id),
			.finish_s = t.d->finish_s,
		};

		rc = release_set(fs->rel, t.id, release, c->uid, now_ms(), &b);
	}
	audit_decision(fs, c, op, job_path, "", t.d, t.res.rule, -rc);
	if (rc == 0)
		after_change(fs, t.id, NULL);
	target_done(&t);
	return rc;
}

/* ---- the prediction (`deletable`), from the decision's own inputs */

static void assess_obj(struct stfs *fs, const struct decision *d,
		       const struct cat_obj *o, enum obj_group g,
		       const struct rule_input *in, bool types,
		       struct delete_assessment *a)
{
	enum obj_class cls;

	if (removed(d, o->key))
		return;
	cls = classify_obj(fs, o, g, in);
	if (!types && g == OG_CKPT && cls == OC_SUPERSEDED &&
	    o->kind == CAT_REAL)
		a->merged = true;
	a->cnt[cls]++;
}

static int assess_fresh(struct stfs *fs, const char *id, bool caller_allowed,
			struct delete_assessment *a);

int delete_assess(struct stfs *fs, const char *id, bool caller_allowed,
		  struct delete_assessment *a)
{
	struct decision_cache *dc = fs->dc;
	struct prediction *p, *slot = NULL;
	int64_t now = mono_ms();
	uint64_t gen;
	int rc;

	pthread_mutex_lock(&dc->lock);
	gen = dc->pred_gen;
	for (size_t i = 0; i < PRED_SLOTS; i++) {
		p = &dc->pred[i];
		if (p->gen == gen && p->mono_ms &&
		    p->caller_allowed == caller_allowed &&
		    strcmp(p->id, id) == 0 &&
		    now - p->mono_ms <=
			    (int64_t)(p->rc || p->a.engine_err
					      ? fs->conf.timeout_ms
					      : fs->conf.decision_age_ms)) {
			*a = p->a;
			rc = p->rc;
			pthread_mutex_unlock(&dc->lock);
			return rc;
		}
	}
	pthread_mutex_unlock(&dc->lock);
	rc = assess_fresh(fs, id, caller_allowed, a);
	pthread_mutex_lock(&dc->lock);
	if (dc->pred_gen == gen) {
		/* the oldest slot (or a free one) */
		for (size_t i = 0; i < PRED_SLOTS; i++)
			if (!slot || dc->pred[i].mono_ms < slot->mono_ms)
				slot = &dc->pred[i];
		snprintf(slot->id, sizeof(slot->id), "%s", id);
		slot->caller_allowed = caller_allowed;
		slot->gen = gen;
		/* kept from when it was learned: an ask that took the whole
		 * deadline is not repeated by the next pseudo-file (README
		 * "Failure modes") */
		slot->mono_ms = mono_ms();
		slot->rc = rc;
		slot->a = *a;
	}
	pthread_mutex_unlock(&dc->lock);
	return rc;
}

static int assess_fresh(struct stfs *fs, const char *id, bool caller_allowed,
			struct delete_assessment *a)
{
	struct rule_input in;
	struct decision *d;
	const struct cat_job *cj;
	bool types;
	int rc = 0;

	memset(a, 0, sizeof(*a));
	memset(&in, 0, sizeof(in));
	in.ro = fs->conf.ro;
	in.caller_allowed = caller_allowed;
	d = decision_get(fs, id, &rc, false);
	if (!d) {
		in.engine_err = rc ? rc : -EIO;
		in.state = JS_UNKNOWN;
		rules_decide_job(&in, a->cnt, a->res, &a->verdict);
		if (a->verdict.err == EAGAIN)
			snprintf(a->verdict.reason, sizeof(a->verdict.reason),
				 "the job's storage cannot be listed (%s)",
				 strerrorname_np(-in.engine_err)
					 ? strerrorname_np(-in.engine_err)
					 : "error");
		return rc ? rc : -EIO;
	}
	decision_input(fs, d, &in);
	a->state = d->state;
	a->engine_err = in.engine_err;
	a->released = in.released;
	cj = catalog_find(d->cat, id);
	types = rules_type_matters(&in);
	if (cj) {
		if (types)
			ckinfo_prefetch_job(fs->ck, STFS_CK_SRC(fs), cj);
		for (size_t i = 0; i < cj->n_pipes; i++)
			for (size_t j = 0; j < cj->pipes[i].n_ckpts; j++) {
				const struct cat_ckpt *k =
					&cj->pipes[i].ckpts[j];

				for (size_t o = 0; o < k->n_objs; o++)
					assess_obj(fs, d, k->objs[o], OG_CKPT,
						   &in, types, a);
			}
		for (size_t i = 0; i < cj->n_sp; i++)
			assess_obj(fs, d, cj->sp_objs[i], OG_SP, &in, types, a);
		for (size_t i = 0; i < cj->n_strays; i++)
			assess_obj(fs, d, cj->strays[i], OG_OTHER, &in, types,
				   a);
	}
	rules_decide_job(&in, a->cnt, a->res, &a->verdict);
	decision_free(d);
	return 0;
}
