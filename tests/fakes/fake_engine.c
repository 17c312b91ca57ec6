/* fake_engine — see fake_engine.h. */
#include "fake_engine.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "backends/backend.h"
#include "util/buf.h"
#include "util/jobid.h"

struct fake_engine {
	struct engine base; /* first: the seam */
	pthread_mutex_t lock;
	json_t *running, *finished; /* the scripted lists (arrays) */
	int list_err;
	char list_msg[200];
	int64_t data_ms;
	/* scripted /job-info answers: id -> {"rc": -errno} or {"rc": 0,
	 * "job": object} */
	json_t *infos;
	json_t *raws; /* scripted documents: path -> body */
	int fail[FENG_N_OPS];
	int delay_ms[FENG_N_OPS]; /* how long an answer takes */
	unsigned calls[FENG_N_OPS];
	unsigned failures;
	engine_ids_fn ids_fn; /* kept; the fake has no fallback to call it */
	void *ids_cookie;
};

static struct fake_engine *fe_of(struct engine *e)
{
	return (struct fake_engine *)e;
}

/* count a call of `op`; its injected failure (0: none).  Lock held. */
static int enter(struct fake_engine *f, enum fake_eng_op op)
{
	f->calls[op]++;
	if (f->fail[op])
		f->failures++;
	return f->fail[op];
}

/* A job object as the REST API writes it. */
static json_t *job_obj(const char *id, int state, int64_t finish_s)
{
	json_t *o = json_object();
	char name[48];

	if (!o)
		return NULL;
	snprintf(name, sizeof(name), "job-%s", id);
	json_object_set_new(o, "jobId", json_string(id));
	json_object_set_new(o, "jobName", json_string(name));
	json_object_set_new(o, "jobStatus", json_string(job_state_name(state)));
	if (finish_s > 0) {
		time_t t = (time_t)finish_s;
		struct tm tm;
		char ts[32];

		localtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M:%S", &tm);
		json_object_set_new(o, "finishTime", json_string(ts));
	}
	return o;
}

static bool obj_is(json_t *o, const char *id)
{
	json_t *jid = json_object_get(o, "jobId");
	char norm[JOBID_SZ];

	if (json_is_string(jid))
		return jobid_normalize(json_string_value(jid),
				       json_string_length(jid), norm) == 0 &&
		       strcmp(norm, id) == 0;
	if (json_is_integer(jid)) {
		snprintf(norm, sizeof(norm), "%lld",
			 (long long)json_integer_value(jid));
		return strcmp(norm, id) == 0;
	}
	return false;
}

/* remove job `id` from list `a` (lock held) */
static void list_drop(json_t *a, const char *id)
{
	for (size_t i = json_array_size(a); i > 0; i--)
		if (obj_is(json_array_get(a, i - 1), id))
			json_array_remove(a, i - 1);
}

/* the scripted object of job `id`, borrowed (lock held); NULL: none */
static json_t *list_find(struct fake_engine *f, const char *id, bool *running)
{
	size_t i;
	json_t *o;

	json_array_foreach (f->running, i, o)
		if (obj_is(o, id)) {
			*running = true;
			return o;
		}
	json_array_foreach (f->finished, i, o)
		if (obj_is(o, id)) {
			*running = false;
			return o;
		}
	return NULL;
}

/* fill *out from a copy of `obj` (an engine_job_release'able answer) */
static int answer(json_t *obj, bool running, struct engine_job *out)
{
	json_t *copy = json_deep_copy(obj);
	int rc;

	if (!copy)
		return -ENOMEM;
	rc = engine_job_from_json(copy, running, out);
	json_decref(copy); /* a job keeps texts, nothing of the tree */
	return rc;
}

static int job_cmp(const void *pa, const void *pb)
{
	const struct engine_job *a = pa, *b = pb;
	int c = jobid_cmp(a->id, b->id);

	return c ? c : (int)b->running - (int)a->running;
}

/* append the jobs of array `root` (owned by the snapshot) to s->jobs */
static int snap_add(struct engine_snap *s, json_t *root, bool running)
{
	size_t i;
	json_t *o;

	json_array_foreach (root, i, o) {
		struct engine_job *v =
			realloc(s->jobs, (s->n_jobs + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->jobs = v;
		if (engine_job_from_json(o, running, &s->jobs[s->n_jobs]) == 0)
			s->n_jobs++;
	}
	return 0;
}

static struct engine_snap *fe_jobs(struct engine *e, unsigned max_age_ms)
{
	struct fake_engine *f = fe_of(e);
	struct engine_snap *s = calloc(1, sizeof(*s));
	int err;

	(void)max_age_ms;
	if (!s)
		abort(); /* a test's fake: no memory is a broken test bed */
	s->refs = 1;
	pthread_mutex_lock(&f->lock);
	err = enter(f, FENG_JOBS);
	s->err = err ? err : f->list_err;
	if (s->err)
		snprintf(s->errmsg, sizeof(s->errmsg), "%s",
			 err ? "fake engine: failure injected" : f->list_msg);
	s->data_ms = f->data_ms ? f->data_ms : now_ms();
	s->fetched_mono_ms = mono_ms();
	snprintf(s->source, sizeof(s->source), "fake://engine");
	s->root_running = json_deep_copy(f->running);
	s->root_finished = json_deep_copy(f->finished);
	pthread_mutex_unlock(&f->lock);
	if (!s->root_running || !s->root_finished ||
	    snap_add(s, s->root_running, true) ||
	    snap_add(s, s->root_finished, false))
		abort();
	if (s->n_jobs > 1)
		qsort(s->jobs, s->n_jobs, sizeof(*s->jobs), job_cmp);
	engine_snap_seal(s);
	return s;
}

static int fe_job_info(struct engine *e, const char *id, struct engine_job *out)
{
	struct fake_engine *f = fe_of(e);
	json_t *obj = NULL, *info;
	bool running = false;
	int rc;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&f->lock);
	rc = f->delay_ms[FENG_JOB_INFO];
	pthread_mutex_unlock(&f->lock);
	if (rc > 0) {
		/* a remote that answers late (outside the lock) */
		struct timespec ts = {rc / 1000, (long)(rc % 1000) * 1000000L};

		nanosleep(&ts, NULL);
	}
	pthread_mutex_lock(&f->lock);
	rc = enter(f, FENG_JOB_INFO);
	if (rc)
		goto out;
	if (!id || !jobid_canonical(id, strlen(id))) {
		rc = -EINVAL;
		goto out;
	}
	info = json_object_get(f->infos, id);
	if (info) {
		rc = (int)json_integer_value(json_object_get(info, "rc"));
		obj = json_object_get(info, "job");
		running = !json_object_get(obj, "finishTime");
	} else {
		obj = list_find(f, id, &running);
		rc = obj ? 0 : -ENOENT;
	}
	if (rc == 0)
		rc = answer(obj, running, out);
out:
	pthread_mutex_unlock(&f->lock);
	return rc;
}

/* the scripted document at `path` into out; `absent` when there is none */
static int raw_doc(struct fake_engine *f, enum fake_eng_op op, const char *path,
		   int absent, struct buf *out)
{
	const char *body;
	int rc;

	pthread_mutex_lock(&f->lock);
	rc = enter(f, op);
	if (!rc) {
		body = json_string_value(json_object_get(f->raws, path));
		rc = body ? buf_puts(out, body) : absent;
	}
	pthread_mutex_unlock(&f->lock);
	return rc;
}

static int fe_get_raw(struct engine *e, const char *path, struct buf *out)
{
	/* -EAGAIN: the REST client's answer to an error status */
	return raw_doc(fe_of(e), FENG_GET_RAW, path, -EAGAIN, out);
}

static int fe_ckpt_monitor(struct engine *e, const char *id, struct buf *out)
{
	char path[64];

	snprintf(path, sizeof(path), "/jobs/checkpoints/%s", id);
	/* -ENOTSUP: the REST client's answer for an engine without it */
	return raw_doc(fe_of(e), FENG_CKPT_MONITOR, path, -ENOTSUP, out);
}

static void fe_get_stats(struct engine *e, struct engine_stats *out)
{
	struct fake_engine *f = fe_of(e);

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&f->lock);
	for (int i = 0; i < FENG_N_OPS; i++)
		out->requests += f->calls[i];
	out->failures = f->failures;
	out->list_fetches = f->calls[FENG_JOBS];
	pthread_mutex_unlock(&f->lock);
}

static void fe_set_storage_ids(struct engine *e, engine_ids_fn fn, void *cookie)
{
	struct fake_engine *f = fe_of(e);

	pthread_mutex_lock(&f->lock);
	f->ids_fn = fn;
	f->ids_cookie = cookie;
	pthread_mutex_unlock(&f->lock);
}

static void fe_free(struct engine *e)
{
	struct fake_engine *f = fe_of(e);

	json_decref(f->infos);
	json_decref(f->raws);
	json_decref(f->running);
	json_decref(f->finished);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

static const struct engine_ops fake_engine_ops = {
	.name = "fake",
	.jobs = fe_jobs,
	.job_info = fe_job_info,
	.get_raw = fe_get_raw,
	.ckpt_monitor = fe_ckpt_monitor,
	.get_stats = fe_get_stats,
	.set_storage_ids = fe_set_storage_ids,
	.free = fe_free,
};

int fake_engine_new(struct engine **out)
{
	struct fake_engine *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f)
		return -ENOMEM;
	f->running = json_array();
	f->finished = json_array();
	f->infos = json_object();
	f->raws = json_object();
	if (!f->running || !f->finished || !f->infos || !f->raws) {
		json_decref(f->running);
		json_decref(f->finished);
		json_decref(f->infos);
		json_decref(f->raws);
		free(f);
		return -ENOMEM;
	}
	pthread_mutex_init(&f->lock, NULL);
	f->base.ops = &fake_engine_ops;
	*out = &f->base;
	return 0;
}

int fake_engine_add_json(struct engine *e, const char *json, bool running)
{
	struct fake_engine *f = fe_of(e);
	json_t *a = json_loads(json, 0, NULL);
	int rc = -EPROTO;

	if (json_is_array(a)) {
		pthread_mutex_lock(&f->lock);
		rc = json_array_extend(running ? f->running : f->finished, a)
			     ? -ENOMEM
			     : 0;
		pthread_mutex_unlock(&f->lock);
	}
	json_decref(a);
	return rc;
}

int fake_engine_set_job(struct engine *e, const char *id, int state,
			int64_t finish_s)
{
	struct fake_engine *f = fe_of(e);
	json_t *o;
	int rc;

	if (!id || !jobid_canonical(id, strlen(id)))
		return -EINVAL;
	o = job_obj(id, state, finish_s);
	if (!o)
		return -ENOMEM;
	pthread_mutex_lock(&f->lock);
	list_drop(f->running, id);
	list_drop(f->finished, id);
	rc = json_array_append_new(
		     job_state_is_end(state) ? f->finished : f->running, o)
		     ? -ENOMEM
		     : 0;
	pthread_mutex_unlock(&f->lock);
	return rc;
}

void fake_engine_drop_job(struct engine *e, const char *id)
{
	struct fake_engine *f = fe_of(e);

	pthread_mutex_lock(&f->lock);
	list_drop(f->running, id);
	list_drop(f->finished, id);
	pthread_mutex_unlock(&f->lock);
}

void fake_engine_set_list_err(struct engine *e, int err, const char *msg)
{
	struct fake_engine *f = fe_of(e);

	pthread_mutex_lock(&f->lock);
	f->list_err = err;
	snprintf(f->list_msg, sizeof(f->list_msg), "%s", msg ? msg : "");
	pthread_mutex_unlock(&f->lock);
}

void fake_engine_set_data_ms(struct engine *e, int64_t data_ms)
{
	struct fake_engine *f = fe_of(e);

	pthread_mutex_lock(&f->lock);
	f->data_ms = data_ms;
	pthread_mutex_unlock(&f->lock);
}

int fake_engine_set_info(struct engine *e, const char *id, int rc, int state,
			 int64_t finish_s)
{
	struct fake_engine *f = fe_of(e);
	json_t *info = json_pack("{s:i}", "rc", rc);
	int err = -ENOMEM;

	if (info && rc == 0 &&
	    json_object_set_new(info, "job", job_obj(id, state, finish_s)))
		goto out;
	pthread_mutex_lock(&f->lock);
	if (info && json_object_set(f->infos, id, info) == 0)
		err = 0;
	pthread_mutex_unlock(&f->lock);
out:
	json_decref(info);
	return err;
}

void fake_engine_clear_info(struct engine *e)
{
	struct fake_engine *f = fe_of(e);

	pthread_mutex_lock(&f->lock);
	json_object_clear(f->infos);
	pthread_mutex_unlock(&f->lock);
}

int fake_engine_set_raw(struct engine *e, const char *path, const char *body)
{
	struct fake_engine *f = fe_of(e);
	int rc = 0;

	pthread_mutex_lock(&f->lock);
	if (!body)
		json_object_del(f->raws, path);
	else if (json_object_set_new(f->raws, path, json_string(body)))
		rc = -ENOMEM;
	pthread_mutex_unlock(&f->lock);
	return rc;
}

/* set one op's entry of a per-op table (fail or delay_ms) */
static void set_per_op(struct engine *e, enum fake_eng_op op, bool delay, int v)
{
	struct fake_engine *f = fe_of(e);

	if (op >= FENG_N_OPS)
		return;
	pthread_mutex_lock(&f->lock);
	(delay ? f->delay_ms : f->fail)[op] = v;
	pthread_mutex_unlock(&f->lock);
}

void fake_engine_fail(struct engine *e, enum fake_eng_op op, int err)
{
	set_per_op(e, op, false, err);
}

void fake_engine_delay(struct engine *e, enum fake_eng_op op, int ms)
{
	set_per_op(e, op, true, ms);
}

unsigned fake_engine_calls(struct engine *e, enum fake_eng_op op)
{
	struct fake_engine *f = fe_of(e);
	unsigned n;

	if (op >= FENG_N_OPS)
		return 0;
	pthread_mutex_lock(&f->lock);
	n = f->calls[op];
	pthread_mutex_unlock(&f->lock);
	return n;
}
