/*
 * engine.c — the SeaTunnel REST v2 client: cached, single-flight job lists.
 *
 * Concurrency.  e->lock guards cur, fetching, gen and the raw cache.  At
 * most one thread fetches the job lists at a time (fetching == true); the
 * others wait on e->cond for the generation to change, with a deadline of
 * one fetch, and then take whatever snapshot is current (fresh, failed, or
 * the old one).  The network is never touched with e->lock held.
 *
 * Snapshots are immutable once published and reference-counted with
 * atomics; e->cur holds one reference.  A failed fetch publishes a snapshot
 * with err set that re-serves the previous jobs through `owner`.
 *
 * Deadlines.  A whole fetch (all base URLs, all pages) runs against one
 * deadline of conf->timeout_ms; each base URL gets an equal share of what
 * is left, but at least conf->connect_timeout_ms, so the total stays under
 * timeout + one connect timeout.
 *
 * Whole-list failures (in 2.3.x one history entry with a
 * missing DAG makes /finished-jobs a 500 for everybody).  When
 * /finished-jobs answers an error, the same URL is asked for
 * /finished-jobs/<STATE> per end state; if one of those fails too, every
 * job the caller has in storage (engine_set_storage_ids) that no list
 * accounts for is asked with /job-info/<id>, at most ENGINE_FALLBACK_INFO
 * of them and within the same deadline.  A job whose answers all fail is
 * kept as JS_UNKNOWN; only that job.
 *
 * Bounds (issue: a 200 MB answer drove the daemon to 6 GB): every answer
 * is capped at conf->engine_max_mb and a snapshot at conf->engine_max_jobs
 * jobs; over either is an error (-EFBIG) with a log line, and memory of
 * large answers is given back (malloc_trim).
 *
 * Raw documents have one fetch in flight per path (raw_entry.fetching);
 * other callers take the stale copy, or wait for that fetch and share its
 * result.
 */
#include "backends/engine.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/http.h"
#include "util/jobid.h"
#include "util/log.h"

#define ENGINE_MAX_PAGES     10000
#define ENGINE_FALLBACK_INFO 64		       /* job-info asks per refresh */
#define ENGINE_TRIM_BYTES    ((size_t)4 << 20) /* malloc_trim above this */
#define ENGINE_RAW_SLOTS     16
/* an engine without /jobs/checkpoints is asked again after this */
#define MONITOR_RETRY_MS (10 * 60 * 1000)
#define ENGINE_URL_MAX	 4096

struct raw_entry {
	char *path; /* NULL: free slot */
	char *data; /* NULL: never fetched successfully */
	size_t len;
	int64_t mono_ms;     /* when data was fetched */
	bool fetching;	     /* one fetch of this path is in flight */
	uint64_t done_gen;   /* bumped when a fetch ends */
	int err;	     /* result of the last fetch (0 or -errno) */
	int64_t err_mono_ms; /* when that fetch failed */
};

struct rest_engine {
	struct engine base;	      /* first: the seam (engine.h) */
	char *urls[CONF_MAX_ENGINES]; /* without trailing '/' */
	size_t n_urls;
	char *userpwd; /* secret; wiped on free */
	char *ca_file; /* engine_ca_file, or NULL: the system store */
	unsigned timeout_ms, connect_ms, ttl_ms, retries;
	size_t max_body;      /* bytes of one answer (engine_max_mb) */
	size_t max_jobs;      /* jobs of one snapshot (engine_max_jobs) */
	engine_ids_fn ids_fn; /* storage ids, for the fallback */
	void *ids_cookie;
	atomic_size_t preferred; /* index of the URL that last answered */

	pthread_mutex_t lock;
	pthread_cond_t cond;			/* gen changed */
	struct engine_snap *cur;		/* protected by lock; one ref */
	bool fetching;				/* protected by lock */
	uint64_t gen;				/* protected by lock */
	struct raw_entry raw[ENGINE_RAW_SLOTS]; /* protected by lock */

	_Atomic uint64_t st_requests, st_failures, st_failovers,
		st_list_fetches, st_cache_hits, st_fallbacks;
	struct hist st_latency;	      /* REST requests, hist.c atomics */
	int64_t monitor_off_until_ms; /* atomic; see engine_ckpt_monitor */
};

/* Returned when even a failed snapshot cannot be allocated. Never freed. */
static struct engine_snap oom_snap = {
	.refs = 1 << 30,
	.err = -ENOMEM,
	.errmsg = "out of memory",
};

static int64_t eng_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t eng_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- ids */

static bool id_digits(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 1 || n > 19)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static int job_cmp(const void *pa, const void *pb)
{
	const struct engine_job *a = pa, *b = pb;
	int c = jobid_cmp(a->id, b->id);

	if (c)
		return c;
	return (int)b->running - (int)a->running; /* running first */
}

/* ---- snapshots */

/* the bytes of job texts freed (a text shared with a newer list is not) */
static size_t jobs_free(struct engine_job *jobs, size_t n)
{
	size_t freed = 0;

	for (size_t i = 0; i < n; i++) {
		if (engine_text_put(jobs[i].json))
			freed += jobs[i].json_len;
		jobs[i].json = NULL;
		engine_job_clear(&jobs[i]);
	}
	free(jobs);
	return freed;
}

void engine_snap_put(struct engine_snap *s)
{
	if (!s || s == &oom_snap)
		return;
	if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (s->owner) {
		engine_snap_put(s->owner);
	} else {
		/* a list whose texts live on in the next one frees little:
		 * trimming then would cost a heap walk for nothing */
		bool big = jobs_free(s->jobs, s->n_jobs) >= ENGINE_TRIM_BYTES;

		json_decref(s->root_running);
		json_decref(s->root_finished);
		json_decref(s->root_extra);
		if (big)
			malloc_trim(0); /* give a large history back */
	}
	free(s->by_name);
	free(s);
}

struct engine_name_idx {
	size_t n;
	const struct engine_job *v[];
};

static int cmp_job_name(const void *a, const void *b)
{
	const struct engine_job *x = *(const struct engine_job *const *)a;
	const struct engine_job *y = *(const struct engine_job *const *)b;
	int c = strcmp(x->name, y->name);

	return c ? c : jobid_cmp(x->id, y->id);
}

const struct engine_job *const *engine_snap_by_name(struct engine_snap *s,
						    size_t *n)
{
	struct engine_name_idx *idx, *none = NULL;
	size_t k = 0;

	*n = 0;
	if (!s || s == &oom_snap || !s->n_jobs)
		return NULL;
	idx = __atomic_load_n(&s->by_name, __ATOMIC_ACQUIRE);
	if (!idx) {
		idx = malloc(sizeof(*idx) + s->n_jobs * sizeof(idx->v[0]));
		if (!idx)
			return NULL;
		for (size_t i = 0; i < s->n_jobs; i++)
			if (s->jobs[i].name && s->jobs[i].name[0])
				idx->v[k++] = &s->jobs[i];
		idx->n = k;
		qsort(idx->v, k, sizeof(idx->v[0]), cmp_job_name);
		/* another thread may have built it meanwhile: keep theirs */
		if (!__atomic_compare_exchange_n(&s->by_name, &none, idx, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			free(idx);
			idx = none;
		}
	}
	*n = idx->n;
	return idx->n ? idx->v : NULL;
}

static struct engine_snap *snap_get(struct engine_snap *s)
{
	if (s != &oom_snap)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
	return s;
}

const struct engine_job *engine_snap_find(const struct engine_snap *s,
					  const char *id)
{
	size_t lo = 0, hi;

	/* ids are canonical (engine_json.c): "0<id>" names no job */
	if (!s || !id || !jobid_canonical(id, strlen(id)))
		return NULL;
	hi = s->n_jobs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = jobid_cmp(id, s->jobs[mid].id);

		if (!c)
			return &s->jobs[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* ---- lifecycle */

static const struct engine_ops rest_ops;

int engine_new(const struct stfs_conf *conf, struct engine **out)
{
	struct rest_engine *e;
	pthread_condattr_t ca;
	int rc = -ENOMEM;

	*out = NULL;
	if (!conf || conf->n_engines == 0 || conf->n_engines > CONF_MAX_ENGINES)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < conf->n_engines; i++) {
		size_t n;

		if (!conf->engines[i] || !*conf->engines[i]) {
			rc = -EINVAL;
			goto fail;
		}
		e->urls[i] = strdup(conf->engines[i]);
		if (!e->urls[i])
			goto fail;
		e->n_urls++;
		n = strlen(e->urls[i]);
		while (n > 0 && e->urls[i][n - 1] == '/')
			e->urls[i][--n] = '\0';
	}
	if (conf->engine_user && *conf->engine_user) {
		const char *pw =
			conf->engine_password ? conf->engine_password : "";
		size_t n = strlen(conf->engine_user) + strlen(pw) + 2;

		e->userpwd = malloc(n);
		if (!e->userpwd)
			goto fail;
		buf_fmt(e->userpwd, n, "%s:%s", conf->engine_user, pw);
	}
	if (conf->engine_ca_file) {
		char why[128];

		/* else every engine call fails alike (README "Failure modes")
		 */
		if (http_ca_file_check(conf->engine_ca_file, why, sizeof(why)) <
		    0) {
			log_err("engine: engine_ca_file %s: %s",
				conf->engine_ca_file, why);
			rc = -EINVAL;
			goto fail;
		}
		e->ca_file = strdup(conf->engine_ca_file);
		if (!e->ca_file)
			goto fail;
	}
	e->timeout_ms =
		conf->timeout_ms ? conf->timeout_ms : conf_default_u("timeout");
	e->connect_ms = conf->connect_timeout_ms
				? conf->connect_timeout_ms
				: conf_default_u("connect_timeout");
	if (e->connect_ms > e->timeout_ms)
		e->connect_ms = e->timeout_ms;
	e->ttl_ms = conf->engine_ttl_ms;
	e->retries = conf->retries;
	e->max_body =
		(size_t)(conf->engine_max_mb ? conf->engine_max_mb
					     : conf_default_u("engine_max_mb"))
		<< 20;
	e->max_jobs = conf->engine_max_jobs ? conf->engine_max_jobs
					    : conf_default_u("engine_max_jobs");
	atomic_init(&e->preferred, 0);
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &ca);
	pthread_condattr_destroy(&ca);
	e->base.ops = &rest_ops;
	*out = &e->base;
	return 0;
fail:
	for (size_t i = 0; i < CONF_MAX_ENGINES; i++)
		free(e->urls[i]);
	if (e->userpwd) {
		explicit_bzero(e->userpwd, strlen(e->userpwd));
		free(e->userpwd);
	}
	free(e);
	return rc;
}

static void rest_free(struct rest_engine *e)
{
	if (!e)
		return;
	/* a background refresh may still run: let it land first */
	pthread_mutex_lock(&e->lock);
	while (e->fetching)
		pthread_cond_wait(&e->cond, &e->lock);
	pthread_mutex_unlock(&e->lock);
	engine_snap_put(e->cur);
	for (size_t i = 0; i < ENGINE_RAW_SLOTS; i++) {
		free(e->raw[i].path);
		free(e->raw[i].data);
	}
	for (size_t i = 0; i < e->n_urls; i++)
		free(e->urls[i]);
	free(e->ca_file);
	if (e->userpwd) {
		explicit_bzero(e->userpwd, strlen(e->userpwd));
		free(e->userpwd);
	}
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

static void rest_set_storage_ids(struct rest_engine *e, engine_ids_fn fn,
				 void *cookie)
{
	e->ids_fn = fn;
	e->ids_cookie = cookie;
}

static void rest_get_stats(struct rest_engine *e, struct engine_stats *out)
{
	out->fallbacks = atomic_load(&e->st_fallbacks);
	out->requests = atomic_load(&e->st_requests);
	out->failures = atomic_load(&e->st_failures);
	out->failovers = atomic_load(&e->st_failovers);
	out->list_fetches = atomic_load(&e->st_list_fetches);
	out->cache_hits = atomic_load(&e->st_cache_hits);
	for (int i = 0; i < HIST_N; i++)
		out->latency.le[i] =
			__atomic_load_n(&e->st_latency.le[i], __ATOMIC_RELAXED);
	out->latency.sum_us =
		__atomic_load_n(&e->st_latency.sum_us, __ATOMIC_RELAXED);
	out->latency.count =
		__atomic_load_n(&e->st_latency.count, __ATOMIC_RELAXED);
}

/* ---- requests */

/*
 * GET base+path before `deadline`.  0 on a 2xx answer (body in resp);
 * otherwise -errno (-EAGAIN for an error status, -EFBIG for an answer over
 * engine_max_mb) with `why` saying what happened, URL redacted.
 */
struct list_sink;
static int eng_get_to(struct rest_engine *e, const char *base, const char *path,
		      int64_t deadline, struct http_resp *resp,
		      struct list_sink *ls, char *why, size_t whysz);

static int eng_get(struct rest_engine *e, const char *base, const char *path,
		   int64_t deadline, struct http_resp *resp, char *why,
		   size_t whysz)
{
	return eng_get_to(e, base, path, deadline, resp, NULL, why, whysz);
}

/* http_req.sink of a job list (nothing is retried once it has a byte; the
 * request keeps its timeout: no sink_deadline) */
struct list_sink {
	struct engine_list_stream *ls;
	size_t got, max; /* bytes so far, engine_max_mb */
	int err;	 /* what ended the parse, or 0 */
	bool over;	 /* the answer went over max */
};

static int list_sink(void *ud, long status, const char *p, size_t n)
{
	struct list_sink *k = ud;

	(void)status;
	if (n > k->max - k->got) {
		k->over = true;
		return -EFBIG;
	}
	k->got += n;
	return k->err = engine_list_stream_feed(k->ls, p, n);
}

/* eng_get, a 2xx body parsed as it arrives by `ls` when not NULL */
static int eng_get_to(struct rest_engine *e, const char *base, const char *path,
		      int64_t deadline, struct http_resp *resp,
		      struct list_sink *ls, char *why, size_t whysz)
{
	char red[256];
	char url[ENGINE_URL_MAX];
	int64_t left = deadline - eng_mono_ms();
	struct http_req req;
	int64_t t0;
	int rc;

	if (left <= 0) {
		buf_fmt(why, whysz, "deadline reached");
		return -ETIMEDOUT;
	}
	if ((size_t)snprintf(url, sizeof(url), "%s%s", base, path) >=
	    sizeof(url)) {
		buf_fmt(why, whysz, "URL too long");
		return -EINVAL;
	}
	req = (struct http_req){
		.method = "GET",
		.url = url,
		.timeout_ms = (unsigned)left,
		.connect_timeout_ms =
			e->connect_ms < left ? e->connect_ms : (unsigned)left,
		.retries = e->retries,
		/* a member that refuses is down: the next URL, not a backoff */
		.no_retry_refused = true,
		.max_body = e->max_body,
		.userpwd = e->userpwd,
		.ca_file = e->ca_file,
		.sink = ls ? list_sink : NULL,
		.sink_ud = ls,
	};
	if (ls)
		ls->max = e->max_body;
	atomic_fetch_add(&e->st_requests, 1);
	t0 = eng_mono_ms();
	rc = http_perform(&req, resp);
	hist_observe(&e->st_latency, (uint64_t)(eng_mono_ms() - t0) * 1000);
	if (rc == -EFBIG) {
		buf_fmt(why, whysz,
			"GET %s%s: answer larger than engine_max_mb (%zu MiB)",
			http_redact_url(base, red, sizeof(red)), path,
			e->max_body >> 20);
		return rc;
	}
	if (rc) {
		buf_fmt(why, whysz, "%s", resp->error);
		return rc;
	}
	if (resp->status < 200 || resp->status >= 300) {
		buf_fmt(why, whysz, "%s", resp->error);
		return -EAGAIN;
	}
	return 0;
}

/*
 * GET one list (or one page of it) and parse it as it arrives, so that
 * its body is never held whole (README "Memory").  0, or -errno with `why`
 * saying what happened (-EPROTO: not a list; -EAGAIN: an error status,
 * *status).  On an error nothing is appended.
 */
static int get_list(struct rest_engine *e, const char *base, const char *path,
		    bool running, int64_t deadline, json_t **root,
		    struct engine_job **jobs, size_t *n, long *total,
		    long *status, char *why, size_t whysz,
		    const struct engine_snap *prev)
{
	struct list_sink k = {0};
	struct http_resp resp;
	char msg[160], red[256];
	int rc;

	*total = -1;
	if (engine_list_stream_new(running, root, jobs, n, prev, e->max_body,
				   &k.ls)) {
		buf_fmt(why, whysz, "out of memory");
		return -ENOMEM;
	}
	http_resp_init(&resp);
	rc = eng_get_to(e, base, path, deadline, &resp, &k, why, whysz);
	*status = resp.status;
	if (rc == 0 || (rc == k.err && k.err && !k.over)) {
		/* the whole answer arrived, or its parse ended the transfer:
		 * the parse says what was wrong */
		rc = engine_list_stream_end(k.ls, total, msg, sizeof(msg));
		if (rc)
			buf_fmt(why, whysz, "GET %s%s: %s",
				http_redact_url(base, red, sizeof(red)), path,
				msg);
	}
	if (rc)
		engine_list_stream_reset(k.ls); /* nothing stays appended */
	engine_list_stream_free(k.ls);
	http_resp_release(&resp);
	return rc;
}

/* Fetch one list (following pages when the answer is the paged form). */
static int fetch_list(struct rest_engine *e, const char *base, const char *path,
		      bool running, int64_t deadline, json_t **root,
		      struct engine_job **jobs, size_t *n, char *why,
		      size_t whysz, const struct engine_snap *prev)
{
	char red[256], qpath[128];
	size_t before = *n, rows;
	long total = -1, t2, status;
	int rc;

	rc = get_list(e, base, path, running, deadline, root, jobs, n, &total,
		      &status, why, whysz, prev);
	if (rc)
		goto out;
	if (*n > e->max_jobs)
		goto too_many;
	if (total < 0)
		goto out; /* plain array: that is all */
	rows = *n - before;
	if (rows == 0)
		goto out;
	for (long page = 2;
	     page <= ENGINE_MAX_PAGES && (page - 1) * (long)rows < total;
	     page++) {
		size_t got = *n;

		buf_fmt(qpath, sizeof(qpath), "%s?page=%ld&rows=%zu", path,
			page, rows);
		rc = get_list(e, base, qpath, running, deadline, root, jobs, n,
			      &t2, &status, why, whysz, prev);
		if (rc == -EAGAIN && status >= 400 && status < 500) {
			rc = 0; /* past the end (the list shrank) */
			break;
		}
		if (rc)
			goto out;
		if (*n > e->max_jobs)
			goto too_many;
		if (*n == got || t2 < 0)
			break;
	}
	goto out;
too_many:
	buf_fmt(why, whysz, "GET %s%s: more than engine_max_jobs (%zu) jobs",
		http_redact_url(base, red, sizeof(red)), path, e->max_jobs);
	rc = -EFBIG;
out:
	return rc;
}

/* Sort by id and drop duplicates, keeping the running entry. */
static void merge_jobs(struct engine_job *jobs, size_t *n)
{
	size_t w = 0;

	if (*n < 2)
		return;
	qsort(jobs, *n, sizeof(*jobs), job_cmp);
	for (size_t r = 0; r < *n; r++) {
		if (w > 0 && jobid_cmp(jobs[w - 1].id, jobs[r].id) == 0) {
			if (jobs[w - 1].running == jobs[r].running)
				log_warn("engine: job %s listed twice; "
					 "keeping the first",
					 jobs[r].id);
			engine_job_clear(&jobs[r]);
			continue;
		}
		if (w != r)
			jobs[w] = jobs[r];
		w++;
	}
	*n = w;
}

static void append_msg(char *dst, size_t dstsz, const char *s)
{
	size_t n = strlen(dst), k;

	if (n + 3 >= dstsz)
		return;
	if (n) {
		memcpy(dst + n, "; ", 2);
		n += 2;
	}
	k = strlen(s);
	if (k > dstsz - 1 - n)
		k = dstsz - 1 - n;
	memcpy(dst + n, s, k);
	dst[n + k] = '\0';
}

/*
 * The error to report after several URLs failed: an answer (bad status,
 * garbage) says more than a transport failure, so it is kept over one.
 */
static int pick_err(int prev, int rc)
{
	bool prev_answered =
		prev == -EPROTO || prev == -EAGAIN || prev == -EFBIG;
	bool rc_answered = rc == -EPROTO || rc == -EAGAIN || rc == -EFBIG;

	return prev_answered && !rc_answered ? prev : rc;
}

/*
 * GET /job-info/<id> from `base`.  0 with *out filled and *root the
 * document; -ENOENT (the engine does not know the job); else -errno with
 * `why` set.  An answer about another job id is -EPROTO.
 */
static int job_info_at(struct rest_engine *e, const char *base, const char *id,
		       int64_t deadline, struct engine_job *out, json_t **root,
		       char *why, size_t whysz)
{
	char path[64], msg[160], red[256];
	struct http_resp resp;
	int rc;

	*root = NULL;
	memset(out, 0, sizeof(*out));
	buf_fmt(path, sizeof(path), "/job-info/%s", id);
	http_resp_init(&resp);
	rc = eng_get(e, base, path, deadline, &resp, why, whysz);
	if (rc)
		goto out;
	rc = engine_parse_job_object(resp.body.data, resp.body.len, root, out,
				     msg, sizeof(msg));
	if (rc == 0 && jobid_cmp(out->id, id) != 0) {
		buf_fmt(msg, sizeof(msg), "the answer is about job %s",
			out->id);
		engine_job_clear(out);
		json_decref(*root);
		*root = NULL;
		rc = -EPROTO;
	}
	if (rc && rc != -ENOENT)
		buf_fmt(why, whysz, "GET %s%s: %s",
			http_redact_url(base, red, sizeof(red)), path, msg);
out:
	http_resp_release(&resp);
	return rc;
}

/* Per-URL budget: an equal share of what is left, at least a connect. */
static int64_t url_deadline(struct rest_engine *e, int64_t deadline,
			    size_t left_urls)
{
	int64_t now = eng_mono_ms(),
		budget = (deadline - now) / (int64_t)left_urls;

	if (budget < (int64_t)e->connect_ms)
		budget = e->connect_ms;
	return now + budget;
}

/* transport failures say nothing about the lists: no fallback on them */
static bool answered(int rc)
{
	return rc == -EAGAIN || rc == -EPROTO;
}

/* A job the engine could not tell about: id only, JS_UNKNOWN. */
static int unknown_job(const char *id, struct engine_job *j)
{
	size_t n = strlen(id) + 14;

	memset(j, 0, sizeof(*j));
	j->state = JS_UNKNOWN;
	j->id = strdup(id);
	j->json = engine_text_new(n);
	if (!j->id || !j->json) {
		engine_job_clear(j);
		return -ENOMEM;
	}
	j->json_len =
		(size_t)snprintf(j->json, n + 1, "{\"jobId\":\"%s\"}\n", id);
	engine_job_digest(j);
	return 0;
}

static int jobs_push(struct engine_job **jobs, size_t *n, size_t *cap,
		     const struct engine_job *j)
{
	if (*n == *cap) {
		size_t nc = *cap > *n ? *cap : *n;
		struct engine_job *p;

		nc = nc ? nc * 2 : 16;
		p = realloc(*jobs, nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		*jobs = p;
		*cap = nc;
	}
	(*jobs)[(*n)++] = *j;
	return 0;
}

static bool listed(const struct engine_job *jobs, size_t n, const char *id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = jobid_cmp(id, jobs[mid].id);

		if (!c)
			return true;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

/*
 * /finished-jobs/ answered an error: ask each end state's list, then
 * /job-info for the storage jobs still unaccounted for (see the top of
 * the file).  0 (*partial tells whether a state list failed) or -errno
 * when this URL answered nothing usable at all.
 */
static int fetch_fallback(struct rest_engine *e, const char *base,
			  int64_t deadline, json_t **rf, json_t **rx,
			  struct engine_job **jobs, size_t *n, bool *partial,
			  char *why, size_t whysz,
			  const struct engine_snap *prev)
{
	static const char *const states[] = {
		"FINISHED",	  "CANCELED",	"FAILED",
		"SAVEPOINT_DONE", "UNKNOWABLE",
	};
	char path[64], w[200], failed[96] = "";
	char **ids = NULL;
	size_t n_ids = 0, cap = *n, asked = 0, unknown = 0;
	unsigned n_failed = 0;
	int rc = 0, last = 0;

	atomic_fetch_add(&e->st_fallbacks, 1);
	*partial = false;
	for (size_t i = 0; i < sizeof(states) / sizeof(*states); i++) {
		buf_fmt(path, sizeof(path), "/finished-jobs/%s", states[i]);
		w[0] = '\0';
		rc = fetch_list(e, base, path, false, deadline, rf, jobs, n, w,
				sizeof(w), prev);
		if (rc == -ENOMEM || rc == -EFBIG) {
			buf_fmt(why, whysz, "%s", w);
			return rc;
		}
		if (rc) {
			n_failed++;
			last = pick_err(last, rc);
			append_msg(failed, sizeof(failed), states[i]);
			log_debug("engine: %s", w);
		}
	}
	rc = 0;
	cap = *n;
	if (n_failed == sizeof(states) / sizeof(*states) && !answered(last)) {
		buf_fmt(why, whysz, "%s", w);
		return last; /* the URL went away meanwhile */
	}
	if (n_failed == 0) {
		log_warn("engine: %s/finished-jobs/ failed as a whole; the "
			 "per-state lists answered",
			 base);
		return 0;
	}
	*partial = true;
	merge_jobs(*jobs, n);
	if (e->ids_fn && e->ids_fn(e->ids_cookie, &ids, &n_ids) != 0) {
		ids = NULL;
		n_ids = 0;
	}
	{
		size_t base_n = *n;

		for (size_t i = 0; i < n_ids; i++) {
			struct engine_job j;
			json_t *root = NULL;
			int r = -ETIMEDOUT;

			if (!ids[i] || !id_digits(ids[i]) ||
			    listed(*jobs, base_n, ids[i]))
				continue;
			if (asked < ENGINE_FALLBACK_INFO &&
			    eng_mono_ms() < deadline) {
				asked++;
				r = job_info_at(e, base, ids[i], deadline, &j,
						&root, w, sizeof(w));
			}
			if (r == -ENOENT)
				continue;
			if (r == 0) {
				/* *rx keeps the document, j borrows into it */
				if (!*rx)
					*rx = json_array();
				if (!*rx || json_array_append_new(*rx, root)) {
					if (!*rx)
						json_decref(root);
					engine_job_clear(&j);
					rc = -ENOMEM;
					break;
				}
			} else {
				log_debug("engine: job %s: %s", ids[i],
					  r == -ETIMEDOUT ? "not asked" : w);
				if (unknown_job(ids[i], &j)) {
					rc = -ENOMEM;
					break;
				}
				unknown++;
			}
			if (jobs_push(jobs, n, &cap, &j)) {
				engine_job_clear(&j);
				rc = -ENOMEM;
				break;
			}
		}
	}
	for (size_t i = 0; i < n_ids; i++)
		free(ids[i]);
	free(ids);
	if (rc)
		return rc;
	log_warn("engine: %s/finished-jobs/ failed as a whole and so did the "
		 "lists of %s; asked /job-info for %zu storage jobs, %zu stay "
		 "UNKNOWN",
		 base, failed, asked, unknown);
	return 0;
}

/* One fetch of both lists, failing over across the base URLs; the jobs
 * that did not change since `prev` share its texts. */
static struct engine_snap *fetch_lists(struct rest_engine *e,
				       const struct engine_snap *prev)
{
	struct engine_snap *s = calloc(1, sizeof(*s));
	int64_t deadline;
	size_t first = atomic_load(&e->preferred);
	char why[200];
	int rc = -EIO, err = -EIO;

	if (!s)
		return NULL;
	s->refs = 1;
	s->fetched_mono_ms = eng_mono_ms();
	deadline = s->fetched_mono_ms + e->timeout_ms;
	atomic_fetch_add(&e->st_list_fetches, 1);
	if (first >= e->n_urls)
		first = 0;
	for (size_t k = 0; k < e->n_urls; k++) {
		size_t idx = (first + k) % e->n_urls;
		const char *base = e->urls[idx];
		int64_t ud;
		struct engine_job *jobs = NULL;
		size_t n = 0, n_run;
		json_t *rr = NULL, *rf = NULL, *rx = NULL;
		bool partial = false, fallback = false;

		if (k > 0 && eng_mono_ms() >= deadline)
			break;
		if (k > 0)
			atomic_fetch_add(&e->st_failovers, 1);
		ud = url_deadline(e, deadline, e->n_urls - k);
		why[0] = '\0';
		rc = fetch_list(e, base, "/running-jobs", true, ud, &rr, &jobs,
				&n, why, sizeof(why), prev);
		n_run = n;
		if (!rc) {
			rc = fetch_list(e, base, "/finished-jobs/", false, ud,
					&rf, &jobs, &n, why, sizeof(why), prev);
			fallback = answered(rc);
		}
		if (fallback) {
			/* one bad history entry must not hide every job */
			log_debug("engine: %s", why);
			for (size_t i = n_run; i < n; i++)
				engine_job_clear(&jobs[i]);
			n = n_run;
			json_decref(rf);
			rf = NULL;
			why[0] = '\0';
			rc = fetch_fallback(e, base, ud, &rf, &rx, &jobs, &n,
					    &partial, why, sizeof(why), prev);
		}
		if (rc) {
			jobs_free(jobs, n);
			json_decref(rr);
			json_decref(rf);
			json_decref(rx);
			append_msg(s->errmsg, sizeof(s->errmsg), why);
			log_debug("engine: %s", why);
			err = pick_err(err, rc);
			if (rc == -ENOMEM)
				break;
			continue;
		}
		merge_jobs(jobs, &n);
		s->jobs = jobs;
		s->n_jobs = n;
		engine_snap_seal(s);
		s->root_running = rr;
		s->root_finished = rf;
		s->root_extra = rx;
		s->partial = partial;
		s->data_ms = eng_wall_ms();
		s->err = 0;
		s->errmsg[0] = '\0';
		http_redact_url(base, s->source, sizeof(s->source));
		atomic_store(&e->preferred, idx);
		return s;
	}
	s->err = err;
	if (!s->errmsg[0])
		buf_fmt(s->errmsg, sizeof(s->errmsg), "engine did not answer");
	atomic_fetch_add(&e->st_failures, 1);
	log_warn("engine: cannot list jobs: %s", s->errmsg);
	return s;
}

static struct engine_snap *do_fetch(struct rest_engine *e)
{
	struct engine_snap *prev, *s;

	pthread_mutex_lock(&e->lock);
	prev = e->cur ? snap_get(e->cur) : NULL;
	pthread_mutex_unlock(&e->lock);
	s = fetch_lists(e, prev);
	engine_snap_put(prev);
	return s;
}

/* Make failed `s` re-serve the jobs of `prev` (lock held). */
static void carry_over(struct engine_snap *s, struct engine_snap *prev)
{
	struct engine_snap *owner;

	if (!prev || prev == &oom_snap)
		return;
	owner = prev->owner ? prev->owner : prev;
	if (!owner->data_ms)
		return;
	s->owner = snap_get(owner);
	s->jobs = owner->jobs;
	s->n_jobs = owner->n_jobs;
	s->digest = owner->digest;
	s->partial = owner->partial;
	s->data_ms = owner->data_ms;
	buf_fmt(s->source, sizeof(s->source), "%s", owner->source);
}

static struct engine_snap *failed_snap(int err, const char *msg)
{
	struct engine_snap *s = calloc(1, sizeof(*s));

	if (!s)
		return &oom_snap;
	s->refs = 1;
	s->err = err;
	s->fetched_mono_ms = eng_mono_ms();
	buf_fmt(s->errmsg, sizeof(s->errmsg), "%s", msg);
	return s;
}

/* Fetch and install a new snapshot; e->fetching is set by the caller. */
static void refresh(struct rest_engine *e)
{
	struct engine_snap *s = do_fetch(e);

	pthread_mutex_lock(&e->lock);
	if (!s) {
		s = failed_snap(-ENOMEM, "out of memory");
		if (s == &oom_snap)
			s = NULL;
	}
	if (s) {
		if (s->err)
			carry_over(s, e->cur);
		engine_snap_put(e->cur);
		e->cur = s;
	}
	e->fetching = false;
	e->gen++;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
}

static void *refresh_thread(void *arg)
{
	refresh(arg);
	return NULL;
}

static struct engine_snap *rest_jobs(struct rest_engine *e, unsigned max_age_ms)
{
	int64_t age = max_age_ms ? max_age_ms : e->ttl_ms;
	int64_t wait_deadline = 0;
	uint64_t gen0 = 0;
	struct engine_snap *s;

	pthread_mutex_lock(&e->lock);
	for (;;) {
		int64_t now = eng_mono_ms();

		if (e->cur && now - e->cur->fetched_mono_ms <= age) {
			atomic_fetch_add(&e->st_cache_hits, 1);
			s = snap_get(e->cur);
			goto out;
		}
		/*
		 * Browsing (no explicit max age) takes the previous snapshot
		 * while one refresh runs in the background: a `du` of 2,000
		 * jobs must not stall on every engine refresh.
		 */
		if (e->cur && !max_age_ms) {
			pthread_t t;

			if (!e->fetching) {
				e->fetching = true;
				if (pthread_create(&t, NULL, refresh_thread,
						   e) == 0)
					pthread_detach(t);
				else
					e->fetching = false;
			}
			if (e->fetching) {
				atomic_fetch_add(&e->st_cache_hits, 1);
				s = snap_get(e->cur);
				goto out;
			}
		}
		if (!e->fetching)
			break;
		if (!wait_deadline) {
			wait_deadline =
				now + e->timeout_ms + e->connect_ms + 100;
			gen0 = e->gen;
		} else if (e->gen != gen0) {
			/* the flight we waited for landed: take its result */
			s = e->cur ? snap_get(e->cur)
				   : failed_snap(-EIO, "no answer");
			goto out;
		}
		if (now >= wait_deadline) {
			s = e->cur ? snap_get(e->cur)
				   : failed_snap(-ETIMEDOUT,
						 "engine refresh still in "
						 "progress");
			goto out;
		}
		{
			struct timespec ts = {
				.tv_sec = wait_deadline / 1000,
				.tv_nsec = (wait_deadline % 1000) * 1000000L,
			};

			pthread_cond_timedwait(&e->cond, &e->lock, &ts);
		}
	}
	e->fetching = true;
	pthread_mutex_unlock(&e->lock);

	s = do_fetch(e);

	pthread_mutex_lock(&e->lock);
	if (!s) {
		s = failed_snap(-ENOMEM, "out of memory");
		if (s == &oom_snap) {
			e->fetching = false;
			e->gen++;
			pthread_cond_broadcast(&e->cond);
			goto out;
		}
	}
	if (s->err)
		carry_over(s, e->cur);
	engine_snap_put(e->cur);
	e->cur = s;
	s = snap_get(s);
	e->fetching = false;
	e->gen++;
	pthread_cond_broadcast(&e->cond);
out:
	pthread_mutex_unlock(&e->lock);
	return s;
}

/* ---- job-info */

void engine_job_release(struct engine_job *j)
{
	if (!j)
		return;
	engine_job_clear(j);
}

static int rest_job_info(struct rest_engine *e, const char *id,
			 struct engine_job *out)
{
	int64_t deadline = eng_mono_ms() + e->timeout_ms;
	size_t first = atomic_load(&e->preferred);
	char why[200];
	int rc = -EIO, err = -EIO;
	bool done = false;

	memset(out, 0, sizeof(*out));
	if (!id_digits(id))
		return -EINVAL;
	if (first >= e->n_urls)
		first = 0;
	for (size_t k = 0; k < e->n_urls; k++) {
		size_t idx = (first + k) % e->n_urls;
		json_t *root = NULL;

		if (k > 0 && eng_mono_ms() >= deadline)
			break;
		if (k > 0)
			atomic_fetch_add(&e->st_failovers, 1);
		why[0] = '\0';
		rc = job_info_at(e, e->urls[idx], id,
				 url_deadline(e, deadline, e->n_urls - k), out,
				 &root, why, sizeof(why));
		if (rc && rc != -ENOENT) {
			if (rc == -EPROTO || rc == -EFBIG)
				log_warn("engine: %s", why);
			else
				log_debug("engine: %s", why);
			err = pick_err(err, rc);
			if (rc == -ENOMEM)
				break;
			continue;
		}
		atomic_store(&e->preferred, idx);
		json_decref(root);
		done = true;
		break;
	}
	if (!done)
		rc = err;
	if (rc && rc != -ENOENT)
		atomic_fetch_add(&e->st_failures, 1);
	return rc;
}

/* ---- raw documents */

/* The slot of `path`, or a free / least recently fetched idle one to
 * reuse (lock held).  NULL when every slot is busy fetching. */
static struct raw_entry *raw_slot(struct rest_engine *e, const char *path,
				  bool *found)
{
	struct raw_entry *slot = NULL;

	*found = false;
	for (size_t i = 0; i < ENGINE_RAW_SLOTS; i++) {
		struct raw_entry *r = &e->raw[i];

		if (r->path && !strcmp(r->path, path)) {
			*found = true;
			return r;
		}
		if (r->fetching)
			continue;
		if (!slot ||
		    (slot->path && (!r->path || r->mono_ms < slot->mono_ms)))
			slot = r;
	}
	return slot;
}

/* GET `path` from the first engine URL that answers 2xx into resp. */
/*
 * SeaTunnel up to 2.3.8 serves its REST API on the Hazelcast port under
 * /hazelcast/rest/maps, and /metrics beside it under /hazelcast/rest/instance
 * (README "The real engine in the tests"): the base to GET `path` from.
 */
static const char *raw_base(const char *base, const char *path, char *buf,
			    size_t sz)
{
	static const char maps[] = "/hazelcast/rest/maps";
	size_t bl = strlen(base), ml = sizeof(maps) - 1;

	if (strcmp(path, "/metrics") != 0 || bl < ml ||
	    strcmp(base + bl - ml, maps) != 0 ||
	    (size_t)snprintf(buf, sz, "%.*s/hazelcast/rest/instance",
			     (int)(bl - ml), base) >= sz)
		return base;
	return buf;
}

static int raw_fetch(struct rest_engine *e, const char *path,
		     struct http_resp *resp)
{
	int64_t deadline = eng_mono_ms() + e->timeout_ms;
	size_t first = atomic_load(&e->preferred);
	char rbase[ENGINE_URL_MAX];
	char why[200];
	int rc = -EIO, err = -EIO;

	if (first >= e->n_urls)
		first = 0;
	for (size_t k = 0; k < e->n_urls; k++) {
		size_t idx = (first + k) % e->n_urls;

		if (k > 0 && eng_mono_ms() >= deadline)
			break;
		if (k > 0)
			atomic_fetch_add(&e->st_failovers, 1);
		rc = eng_get(e,
			     raw_base(e->urls[idx], path, rbase, sizeof(rbase)),
			     path, url_deadline(e, deadline, e->n_urls - k),
			     resp, why, sizeof(why));
		if (!rc) {
			atomic_store(&e->preferred, idx);
			return 0;
		}
		if (rc == -EFBIG)
			log_warn("engine: %s", why);
		else
			log_debug("engine: %s", why);
		err = pick_err(err, rc);
	}
	atomic_fetch_add(&e->st_failures, 1);
	return err;
}

static int rest_get_raw(struct rest_engine *e, const char *path,
			struct buf *out);

static int rest_ckpt_monitor(struct rest_engine *e, const char *id,
			     struct buf *out)
{
	char path[64];
	int rc;

	if (!jobid_canonical(id, strlen(id)))
		return -EINVAL;
	if (eng_mono_ms() <
	    __atomic_load_n(&e->monitor_off_until_ms, __ATOMIC_RELAXED))
		return -ENOTSUP;
	buf_fmt(path, sizeof(path), "/jobs/checkpoints/%s", id);
	rc = rest_get_raw(e, path, out);
	if (rc && rc != -ENOMEM && rc != -EFBIG) {
		__atomic_store_n(&e->monitor_off_until_ms,
				 eng_mono_ms() + MONITOR_RETRY_MS,
				 __ATOMIC_RELAXED);
		log_debug("engine: no checkpoint monitor (%s): asked again in "
			  "10 minutes",
			  strerror(-rc));
		return -ENOTSUP;
	}
	return rc;
}

static int rest_get_raw(struct rest_engine *e, const char *path,
			struct buf *out)
{
	int64_t now = eng_mono_ms();
	int64_t wait_deadline = now + e->timeout_ms + e->connect_ms + 100;
	struct http_resp resp;
	struct raw_entry *r;
	uint64_t gen0;
	bool found;
	int rc;

	if (!path || path[0] != '/' || strlen(path) > 1024)
		return -EINVAL;
	pthread_mutex_lock(&e->lock);
	r = raw_slot(e, path, &found);
	if (found && r->data && now - r->mono_ms <= (int64_t)e->ttl_ms)
		goto copy; /* fresh */
	/*
	 * A fetch that just failed is not repeated for engine_ttl (at least
	 * 1 s): the kernel serialises lookups of one name, so 60 readers of a
	 * hung engine's document would otherwise wait one deadline each.
	 */
	if (found && !r->fetching && r->err &&
	    now - r->err_mono_ms <
		    (int64_t)(e->ttl_ms > 1000 ? e->ttl_ms : 1000)) {
		rc = r->err;
		pthread_mutex_unlock(&e->lock);
		return rc;
	}
	if (found && r->fetching) {
		/* single flight: the stale copy, or wait for that fetch */
		if (r->data)
			goto copy;
		gen0 = r->done_gen;
		while (r->fetching && r->done_gen == gen0) {
			struct timespec ts = {
				.tv_sec = wait_deadline / 1000,
				.tv_nsec = (wait_deadline % 1000) * 1000000L,
			};

			if (eng_mono_ms() >= wait_deadline)
				break;
			pthread_cond_timedwait(&e->cond, &e->lock, &ts);
		}
		if (r->done_gen != gen0 && r->data && !r->err)
			goto copy;
		rc = r->done_gen != gen0 ? r->err : -ETIMEDOUT;
		pthread_mutex_unlock(&e->lock);
		return rc ? rc : -EIO;
	}
	if (!r) {
		/* every slot busy (more distinct paths than slots in flight):
		 * fetch uncached */
		pthread_mutex_unlock(&e->lock);
		http_resp_init(&resp);
		rc = raw_fetch(e, path, &resp);
		if (!rc)
			rc = buf_append(out,
					resp.body.data ? resp.body.data : "",
					resp.body.len);
		http_resp_release(&resp);
		return rc;
	}
	if (!found) {
		char *p = strdup(path);

		if (!p) {
			pthread_mutex_unlock(&e->lock);
			return -ENOMEM;
		}
		free(r->path);
		free(r->data);
		*r = (struct raw_entry){.path = p, .done_gen = r->done_gen};
	}
	r->fetching = true;
	pthread_mutex_unlock(&e->lock);

	http_resp_init(&resp);
	rc = raw_fetch(e, path, &resp);
	if (!rc)
		rc = buf_append(out, resp.body.data ? resp.body.data : "",
				resp.body.len);

	pthread_mutex_lock(&e->lock);
	if (!rc) {
		char *d = malloc(resp.body.len + 1);

		if (d) {
			memcpy(d, resp.body.data ? resp.body.data : "",
			       resp.body.len);
			d[resp.body.len] = '\0';
			free(r->data);
			r->data = d;
			r->len = resp.body.len;
			r->mono_ms = now;
		}
	}
	r->err = rc;
	r->err_mono_ms = rc ? eng_mono_ms() : 0;
	r->fetching = false;
	r->done_gen++;
	pthread_cond_broadcast(&e->cond);
	pthread_mutex_unlock(&e->lock);
	http_resp_release(&resp);
	return rc;
copy:
	rc = buf_append(out, r->data, r->len);
	pthread_mutex_unlock(&e->lock);
	atomic_fetch_add(&e->st_cache_hits, 1);
	return rc;
}

/* ---- the seam (engine.h): the REST client's table, and the calls */

static struct rest_engine *rest_of(struct engine *e)
{
	return (struct rest_engine *)e; /* base is the first member */
}

static struct engine_snap *op_jobs(struct engine *e, unsigned max_age_ms)
{
	return rest_jobs(rest_of(e), max_age_ms);
}

static int op_job_info(struct engine *e, const char *id, struct engine_job *out)
{
	return rest_job_info(rest_of(e), id, out);
}

static int op_get_raw(struct engine *e, const char *path, struct buf *out)
{
	return rest_get_raw(rest_of(e), path, out);
}

static int op_ckpt_monitor(struct engine *e, const char *id, struct buf *out)
{
	return rest_ckpt_monitor(rest_of(e), id, out);
}

static void op_get_stats(struct engine *e, struct engine_stats *out)
{
	rest_get_stats(rest_of(e), out);
}

static void op_set_storage_ids(struct engine *e, engine_ids_fn fn, void *cookie)
{
	rest_set_storage_ids(rest_of(e), fn, cookie);
}

static void op_free(struct engine *e)
{
	rest_free(rest_of(e));
}

static const struct engine_ops rest_ops = {
	.name = "rest",
	.jobs = op_jobs,
	.job_info = op_job_info,
	.get_raw = op_get_raw,
	.ckpt_monitor = op_ckpt_monitor,
	.get_stats = op_get_stats,
	.set_storage_ids = op_set_storage_ids,
	.free = op_free,
};

void engine_free(struct engine *e)
{
	if (e)
		e->ops->free(e);
}

void engine_set_storage_ids(struct engine *e, engine_ids_fn fn, void *cookie)
{
	e->ops->set_storage_ids(e, fn, cookie);
}

struct engine_snap *engine_jobs(struct engine *e, unsigned max_age_ms)
{
	return e->ops->jobs(e, max_age_ms);
}

int engine_job_info(struct engine *e, const char *id, struct engine_job *out)
{
	return e->ops->job_info(e, id, out);
}

int engine_get_raw(struct engine *e, const char *path, struct buf *out)
{
	return e->ops->get_raw(e, path, out);
}

int engine_ckpt_monitor(struct engine *e, const char *id, struct buf *out)
{
	return e->ops->ckpt_monitor(e, id, out);
}

void engine_get_stats(struct engine *e, struct engine_stats *out)
{
	e->ops->get_stats(e, out);
}
