/*
 * Tests for backends/engine.c: the REST v2 client against loopback
 * servers (tests/fakes/loopsrv: threads with listening sockets on
 * 127.0.0.1:0) answering the REST API v2 fixtures: failover, cache
 * reuse, single flight, the paged form, garbage and dead servers (last
 * known jobs kept), job-info, raw documents, basic auth.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/engine.h"
#include "fakes/loopsrv.h"
#include "fakes/testutil.h"
#include "backends/http.h"

#define FIX "tests/fixtures/engine/"

static char *load_fixture(const char *name)
{
	char *data = NULL;

	assert_int_equal(tu_load(FIX, name, &data, NULL), 0);
	return data;
}

/* ---- a tiny loopback REST server (tests/fakes/loopsrv) with routes */

enum srv_mode {
	SRV_ROUTES,  /* answer from the route table, 404 otherwise */
	SRV_GARBAGE, /* 200 with a body that is not JSON */
	SRV_FAIL,    /* 503 */
	SRV_HANG,    /* never answer */
};

#define SRV_ROUTES_MAX 24

struct route {
	const char *target; /* path + query, exact */
	char *body;	    /* owned */
	int status;	    /* 0: 200 */
	atomic_int hits;
};

struct srv {
	struct loopsrv ls;
	atomic_int mode;
	atomic_int delay_ms;
	struct route routes[SRV_ROUTES_MAX];
	size_t n_routes;
};

static void reply(int fd, int status, const char *body)
{
	loopsrv_reply(fd, status, "Content-Type: application/json\r\n", body,
		      strlen(body));
}

static void serve(struct loopsrv *ls, int cfd, const char *req)
{
	struct srv *s = ls->arg;
	char target[512];
	const char *sp = strchr(req, ' '), *sp2;
	int mode = atomic_load(&s->mode);
	int delay = atomic_load(&s->delay_ms);

	if (delay > 0)
		tu_sleep_ms(delay);
	if (mode == SRV_HANG) {
		loopsrv_hang(ls, cfd);
		return;
	}
	if (mode == SRV_GARBAGE) {
		reply(cfd, 200, "<html>not json</html>");
		return;
	}
	if (mode == SRV_FAIL) {
		reply(cfd, 503, "{\"status\":\"fail\",\"message\":\"busy\"}");
		return;
	}
	if (!sp || !(sp2 = strchr(sp + 1, ' ')) ||
	    (size_t)(sp2 - sp - 1) >= sizeof(target)) {
		reply(cfd, 400, "{}");
		return;
	}
	snprintf(target, sizeof(target), "%.*s", (int)(sp2 - sp - 1), sp + 1);
	for (size_t i = 0; i < s->n_routes; i++) {
		if (!strcmp(s->routes[i].target, target)) {
			atomic_fetch_add(&s->routes[i].hits, 1);
			reply(cfd,
			      s->routes[i].status ? s->routes[i].status : 200,
			      s->routes[i].body);
			return;
		}
	}
	reply(cfd, 404, "{\"status\":\"fail\",\"message\":\"no route\"}");
}

static void srv_route(struct srv *s, const char *target, char *body)
{
	assert_true(s->n_routes < SRV_ROUTES_MAX);
	s->routes[s->n_routes].target = target;
	s->routes[s->n_routes].body = body;
	s->n_routes++;
}

static void srv_route_fix(struct srv *s, const char *target,
			  const char *fixture)
{
	srv_route(s, target, load_fixture(fixture));
}

static void srv_route_str(struct srv *s, const char *target, const char *b)
{
	char *d = strdup(b);

	assert_non_null(d);
	srv_route(s, target, d);
}

/* the 2.3.x NPE answer: 500 {"status":"fail","message":null} */
static void srv_route_npe(struct srv *s, const char *target)
{
	srv_route_str(s, target, "{\"status\":\"fail\",\"message\":null}");
	s->routes[s->n_routes - 1].status = 500;
}

static int route_hits(struct srv *s, const char *target)
{
	for (size_t i = 0; i < s->n_routes; i++)
		if (!strcmp(s->routes[i].target, target))
			return atomic_load(&s->routes[i].hits);
	return -1;
}

/* Listening, not serving yet: add the routes, then srv_run(). */
static struct srv *srv_new(void)
{
	struct srv *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	assert_int_equal(loopsrv_open(&s->ls, serve, s), 0);
	return s;
}

static void srv_run(struct srv *s)
{
	assert_int_equal(loopsrv_run(&s->ls), 0);
}

/* The standard engine: REST API v2 running and finished lists, job-info. */
static struct srv *srv_standard(void)
{
	struct srv *s = srv_new();

	srv_route_fix(s, "/running-jobs", "running-jobs.json");
	srv_route_fix(s, "/finished-jobs/", "finished-jobs.json");
	srv_route_fix(s, "/job-info/953211384710987777",
		      "job-info-running.json");
	srv_route_fix(s, "/job-info/123", "job-info-unknown.json");
	srv_route_str(s, "/job-info/124", "not json at all");
	srv_route_str(s, "/overview", "{\"projectVersion\":\"2.3.10\"}");
	srv_run(s);
	return s;
}

static void srv_stop(struct srv *s)
{
	loopsrv_stop(&s->ls);
}

static void srv_free(struct srv *s)
{
	srv_stop(s);
	for (size_t i = 0; i < s->n_routes; i++)
		free(s->routes[i].body);
	free(s);
}

static int closed_port(void)
{
	int port = loopsrv_closed_port();

	assert_true(port > 0);
	return port;
}

/* ---- configuration */

struct tconf {
	struct stfs_conf c;
	char urls[CONF_MAX_ENGINES][128];
};

static void tconf_init(struct tconf *t, unsigned ttl_ms)
{
	memset(t, 0, sizeof(*t));
	t->c.timeout_ms = 3000;
	t->c.connect_timeout_ms = 1000;
	t->c.engine_ttl_ms = ttl_ms;
	t->c.retries = 0;
}

static void tconf_add(struct tconf *t, int port, const char *suffix)
{
	size_t i = t->c.n_engines++;

	snprintf(t->urls[i], sizeof(t->urls[i]), "http://127.0.0.1:%d%s", port,
		 suffix);
	t->c.engines[i] = t->urls[i];
}

static struct engine *new_engine(struct tconf *t)
{
	struct engine *e = NULL;

	assert_int_equal(engine_new(&t->c, &e), 0);
	assert_non_null(e);
	return e;
}

/* ---- tests */

static void test_engine_new_rejects_no_urls(void **state)
{
	struct tconf t;
	struct engine *e = (struct engine *)&t;

	(void)state;
	tconf_init(&t, 1000);
	assert_int_equal(engine_new(&t.c, &e), -EINVAL);
	assert_null(e);
	engine_free(NULL);
}

/* an engine_ca_file that is missing or holds no PEM certificate fails the
 * mount, not every engine call after it (README "Failure modes") */
static void test_engine_new_rejects_bad_ca_file(void **state)
{
	struct tconf t;
	struct engine *e = NULL;
	char junk[] = "/tmp/stfs-engine-ca.XXXXXX", missing[64];
	int fd;

	(void)state;
	tconf_init(&t, 1000);
	tconf_add(&t, 1, "");
	fd = mkstemp(junk);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not a certificate\n", 18), 18);
	close(fd);
	snprintf(missing, sizeof(missing), "%s.none", junk);
	t.c.engine_ca_file = missing;
	assert_int_equal(engine_new(&t.c, &e), -EINVAL);
	assert_null(e);
	t.c.engine_ca_file = junk;
	assert_int_equal(engine_new(&t.c, &e), -EINVAL);
	assert_null(e);
	unlink(junk);
}

static void test_engine_jobs_lists_and_merges(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct engine *e;
	struct engine_snap *snap;
	const struct engine_job *j;

	(void)state;
	tconf_init(&t, 10000);
	tconf_add(&t, s->ls.port, "/"); /* a trailing slash is dropped */
	e = new_engine(&t);
	snap = engine_jobs(e, 0);
	assert_non_null(snap);
	assert_int_equal(snap->err, 0);
	assert_string_equal(snap->errmsg, "");
	assert_true(snap->data_ms > 0);
	t.urls[0][strlen(t.urls[0]) - 1] = '\0';
	assert_string_equal(snap->source, t.urls[0]);
	/* 777 is both running and (in the fixture) finished: running wins */
	assert_int_equal(snap->n_jobs, 2);
	assert_string_equal(snap->jobs[0].id, "953211384710987777");
	assert_true(snap->jobs[0].running);
	assert_int_equal(snap->jobs[0].state, JS_RUNNING);
	assert_string_equal(snap->jobs[1].id, "953211384710987790");
	assert_int_equal(snap->jobs[1].state, JS_FAILED);
	j = engine_snap_find(snap, "953211384710987790");
	assert_ptr_equal(j, &snap->jobs[1]);
	assert_null(engine_snap_find(snap, "953211384710987778"));
	assert_null(engine_snap_find(snap, ""));
	assert_int_equal(route_hits(s, "/running-jobs"), 1);
	assert_int_equal(route_hits(s, "/finished-jobs/"), 1);
	engine_snap_put(snap);
	engine_free(e);
	srv_free(s);
}

static void test_engine_jobs_cache_reuse(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct engine *e;
	struct engine_snap *a, *b;
	struct engine_stats st;

	(void)state;
	tconf_init(&t, 10000);
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	a = engine_jobs(e, 0);
	for (int i = 0; i < 4; i++) {
		b = engine_jobs(e, 0);
		assert_ptr_equal(a, b);
		engine_snap_put(b);
	}
	assert_int_equal(atomic_load(&s->ls.nreq), 2);
	engine_get_stats(e, &st);
	assert_int_equal(st.list_fetches, 1);
	assert_int_equal(st.cache_hits, 4);
	assert_int_equal(st.requests, 2);
	/* a caller wanting fresher data refetches */
	tu_sleep_ms(20);
	b = engine_jobs(e, 5);
	assert_ptr_not_equal(a, b);
	assert_int_equal(b->err, 0);
	assert_int_equal(atomic_load(&s->ls.nreq), 4);
	/* the old snapshot is still readable */
	assert_string_equal(a->jobs[0].id, "953211384710987777");
	engine_snap_put(a);
	engine_snap_put(b);
	engine_free(e);
	srv_free(s);
}

/* README "Memory": a refreshed list shares the text of every job that did
 * not change with the list it replaces (one copy of 10,000 jobs' texts,
 * not two, while the old list is still served); a changed job gets its
 * new text, and a shared text outlives the list it came from. */
static void test_engine_refresh_shares_unchanged_texts(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct engine *e;
	struct engine_snap *a, *b, *c;
	const struct engine_job *ja, *jb;
	char *moved, *at;

	(void)state;
	tconf_init(&t, 10000);
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	a = engine_jobs(e, 0);
	assert_int_equal(a->err, 0);
	assert_int_equal(a->n_jobs, 2);
	tu_sleep_ms(20);
	b = engine_jobs(e, 5);
	assert_ptr_not_equal(a, b);
	assert_int_equal(b->n_jobs, a->n_jobs);
	for (size_t i = 0; i < b->n_jobs; i++) {
		ja = engine_snap_find(a, b->jobs[i].id);
		assert_non_null(ja);
		assert_ptr_equal(b->jobs[i].json, ja->json);
	}
	/* the running job's counters move: its text only is new */
	moved = strdup(s->routes[0].body);
	assert_non_null(moved);
	at = strstr(moved, "\"SourceReceivedCount\":\"1200\"");
	assert_non_null(at);
	memcpy(at + strlen("\"SourceReceivedCount\":\""), "1300", 4);
	free(s->routes[0].body);
	s->routes[0].body = moved;
	engine_snap_put(a);
	tu_sleep_ms(20);
	c = engine_jobs(e, 5);
	assert_int_equal(c->n_jobs, b->n_jobs);
	ja = engine_snap_find(c, "953211384710987777");
	jb = engine_snap_find(b, "953211384710987777");
	assert_ptr_not_equal(ja->json, jb->json);
	assert_non_null(memmem(ja->json, ja->json_len, "\"1300\"", 6));
	assert_non_null(memmem(jb->json, jb->json_len, "\"1200\"", 6));
	assert_true(ja->digest != jb->digest);
	ja = engine_snap_find(c, "953211384710987790");
	jb = engine_snap_find(b, "953211384710987790");
	assert_ptr_equal(ja->json, jb->json);
	/* b's texts live on in c (ASan: no use after free) */
	engine_snap_put(b);
	assert_int_equal(ja->json[ja->json_len - 1], '\n');
	assert_non_null(strstr(ja->json, "953211384710987790"));
	engine_snap_put(c);
	engine_free(e);
	srv_free(s);
}

static void test_engine_jobs_failover_from_dead_url(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct engine *e;
	struct engine_snap *snap;
	struct engine_stats st;

	(void)state;
	tconf_init(&t, 0);
	tconf_add(&t, closed_port(), "");
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	snap = engine_jobs(e, 1);
	assert_int_equal(snap->err, 0);
	assert_int_equal(snap->n_jobs, 2);
	assert_string_equal(snap->source, t.urls[1]);
	engine_snap_put(snap);
	engine_get_stats(e, &st);
	assert_int_equal(st.failovers, 1);
	/* the live URL is now preferred: no new failover */
	tu_sleep_ms(5);
	snap = engine_jobs(e, 1);
	assert_int_equal(snap->err, 0);
	engine_snap_put(snap);
	engine_get_stats(e, &st);
	assert_int_equal(st.failovers, 1);
	assert_int_equal(st.list_fetches, 2);
	assert_int_equal(atomic_load(&s->ls.nreq), 4);
	engine_free(e);
	srv_free(s);
}

/*
 * An engine that refuses connections is down: retrying the refused connect
 * only sleeps the backoff (with the engine down, each job's /job-info cost
 * ~115 ms of retries; a cold du -s of 40 jobs 5 s).  The next URL, or the
 * next call, asks again.
 */
static void test_engine_refused_not_retried(void **state)
{
	struct tconf t;
	struct engine *e;
	struct engine_job j;
	struct http_stats before, after;

	(void)state;
	tconf_init(&t, 0);
	t.c.retries = 3;
	tconf_add(&t, closed_port(), "");
	e = new_engine(&t);
	http_get_stats(&before);
	memset(&j, 0, sizeof(j));
	assert_int_not_equal(engine_job_info(e, "900000000000000001", &j), 0);
	http_get_stats(&after);
	assert_int_equal(after.requests - before.requests, 1);
	assert_int_equal(after.retries - before.retries, 0);
	engine_free(e);
}

struct flight {
	struct engine *e;
	struct engine_snap *snap;
};

static void *flight_main(void *arg)
{
	struct flight *f = arg;

	f->snap = engine_jobs(f->e, 0);
	return NULL;
}

static void test_engine_jobs_single_flight(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct flight f[8];
	pthread_t th[8];
	struct engine_stats st;

	(void)state;
	atomic_store(&s->delay_ms, 150);
	tconf_init(&t, 60000);
	tconf_add(&t, s->ls.port, "");
	f[0].e = new_engine(&t);
	for (int i = 0; i < 8; i++) {
		f[i].e = f[0].e;
		assert_int_equal(
			pthread_create(&th[i], NULL, flight_main, &f[i]), 0);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(f[i].snap->err, 0);
		assert_ptr_equal(f[i].snap, f[0].snap);
		assert_int_equal(f[i].snap->n_jobs, 2);
	}
	assert_int_equal(atomic_load(&s->ls.nreq), 2);
	engine_get_stats(f[0].e, &st);
	assert_int_equal(st.list_fetches, 1);
	for (int i = 0; i < 8; i++)
		engine_snap_put(f[i].snap);
	engine_free(f[0].e);
	srv_free(s);
}

static void test_engine_jobs_paged_form(void **state)
{
	struct srv *s = srv_new();
	struct tconf t;
	struct engine *e;
	struct engine_snap *snap;
	static const char *const ids[] = {"999",  "1001", "1002",
					  "1003", "1004", "1005"};

	(void)state;
	srv_route_fix(s, "/running-jobs", "running-jobs-paged-1.json");
	srv_route_fix(s, "/running-jobs?page=2&rows=2",
		      "running-jobs-paged-2.json");
	srv_route_fix(s, "/running-jobs?page=3&rows=2",
		      "running-jobs-paged-3.json");
	srv_route_str(s, "/finished-jobs/",
		      "[{\"jobId\":\"1001\",\"jobStatus\":\"FINISHED\"},"
		      "{\"jobId\":\"999\",\"jobStatus\":\"CANCELED\"}]");
	srv_run(s);
	tconf_init(&t, 10000);
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	snap = engine_jobs(e, 0);
	assert_int_equal(snap->err, 0);
	assert_int_equal(snap->n_jobs, 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(snap->jobs[i].id, ids[i]);
	assert_false(snap->jobs[0].running);
	assert_int_equal(snap->jobs[0].state, JS_CANCELED);
	assert_true(snap->jobs[1].running);
	assert_int_equal(snap->jobs[1].state, JS_RUNNING);
	assert_int_equal(route_hits(s, "/running-jobs"), 1);
	assert_int_equal(route_hits(s, "/running-jobs?page=2&rows=2"), 1);
	assert_int_equal(route_hits(s, "/running-jobs?page=3&rows=2"), 1);
	assert_int_equal(atomic_load(&s->ls.nreq), 4);
	engine_snap_put(snap);
	engine_free(e);
	srv_free(s);
}

static void test_engine_jobs_failure_keeps_last_known(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct engine *e;
	struct engine_snap *good, *bad, *bad2;
	struct engine_stats st;

	(void)state;
	tconf_init(&t, 10000);
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	good = engine_jobs(e, 0);
	assert_int_equal(good->err, 0);

	atomic_store(&s->mode, SRV_GARBAGE);
	tu_sleep_ms(5);
	bad = engine_jobs(e, 1);
	assert_int_equal(bad->err, -EPROTO);
	assert_non_null(strstr(bad->errmsg, t.urls[0]));
	assert_non_null(strstr(bad->errmsg, "not JSON"));
	assert_int_equal(bad->n_jobs, 2);
	assert_int_equal(bad->data_ms, good->data_ms);
	assert_string_equal(bad->jobs[1].id, "953211384710987790");
	engine_snap_put(good); /* the failed snapshot keeps the data alive */
	assert_string_equal(bad->jobs[0].id, "953211384710987777");

	atomic_store(&s->mode, SRV_FAIL);
	tu_sleep_ms(5);
	bad2 = engine_jobs(e, 1);
	assert_int_equal(bad2->err, -EAGAIN);
	assert_non_null(strstr(bad2->errmsg, "HTTP 503"));
	assert_int_equal(bad2->n_jobs, 2);
	assert_int_equal(bad2->data_ms, bad->data_ms);
	engine_snap_put(bad);
	engine_snap_put(bad2);

	srv_stop(s);
	tu_sleep_ms(5);
	bad = engine_jobs(e, 1);
	assert_int_equal(bad->err, -ECONNREFUSED);
	assert_int_equal(bad->n_jobs, 2);
	engine_snap_put(bad);
	engine_get_stats(e, &st);
	assert_int_equal(st.failures, 3);

	/* recovery */
	engine_free(e);
	srv_free(s);
}

static void test_engine_jobs_never_answered(void **state)
{
	struct tconf t;
	struct engine *e;
	struct engine_snap *snap;

	(void)state;
	tconf_init(&t, 1000);
	tconf_add(&t, closed_port(), "");
	tconf_add(&t, closed_port(), "");
	e = new_engine(&t);
	snap = engine_jobs(e, 0);
	assert_int_equal(snap->err, -ECONNREFUSED);
	assert_int_equal(snap->n_jobs, 0);
	assert_int_equal(snap->data_ms, 0);
	assert_non_null(strstr(snap->errmsg, t.urls[0]));
	assert_non_null(strstr(snap->errmsg, t.urls[1]));
	engine_snap_put(snap);
	engine_free(e);
}

static void test_engine_jobs_hung_server_deadline(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct engine *e;
	struct engine_snap *snap;
	int64_t t0, dt;

	(void)state;
	atomic_store(&s->mode, SRV_HANG);
	tconf_init(&t, 1000);
	t.c.timeout_ms = 500;
	t.c.connect_timeout_ms = 200;
	t.c.retries = 2;
	tconf_add(&t, s->ls.port, "");
	tconf_add(&t, s->ls.port, "/again");
	e = new_engine(&t);
	t0 = tu_mono_ms();
	snap = engine_jobs(e, 0);
	dt = tu_mono_ms() - t0;
	assert_int_equal(snap->err, -ETIMEDOUT);
	assert_int_equal(snap->n_jobs, 0);
	assert_true(dt < 500 + 200 + 300);
	engine_snap_put(snap);
	engine_free(e);
	srv_free(s);
}

static void test_engine_job_info(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct engine *e;
	struct engine_job j;

	(void)state;
	tconf_init(&t, 1000);
	tconf_add(&t, closed_port(), "");
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	assert_int_equal(engine_job_info(e, "953211384710987777", &j), 0);
	assert_string_equal(j.id, "953211384710987777");
	assert_int_equal(j.state, JS_RUNNING);
	assert_true(j.running);
	assert_true(tu_has_metrics(&j));
	assert_string_equal(tu_metric(&j, "SourceReceivedCount"), "1200");
	assert_int_equal(j.n_pipelines, 1);
	engine_job_release(&j);
	assert_int_equal(engine_job_info(e, "123", &j), -ENOENT);
	assert_int_equal(engine_job_info(e, "abc", &j), -EINVAL);
	assert_int_equal(engine_job_info(e, "", &j), -EINVAL);
	assert_int_equal(engine_job_info(e, "12345678901234567890", &j),
			 -EINVAL);
	assert_int_equal(engine_job_info(e, "124", &j), -EPROTO);
	assert_int_equal(engine_job_info(e, "125", &j), -EAGAIN);
	engine_free(e);
	srv_free(s);
}

static void test_engine_get_raw_cached(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct engine *e;
	struct buf b;

	(void)state;
	tconf_init(&t, 10000);
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	buf_init(&b, 1 << 20);
	assert_int_equal(engine_get_raw(e, "/overview", &b), 0);
	assert_string_equal(b.data, "{\"projectVersion\":\"2.3.10\"}");
	buf_reset(&b);
	assert_int_equal(engine_get_raw(e, "/overview", &b), 0);
	assert_string_equal(b.data, "{\"projectVersion\":\"2.3.10\"}");
	assert_int_equal(route_hits(s, "/overview"), 1);
	buf_reset(&b);
	assert_int_equal(engine_get_raw(e, "/nope", &b), -EAGAIN);
	assert_int_equal(b.len, 0);
	assert_int_equal(engine_get_raw(e, "overview", &b), -EINVAL);
	/* a cap too small for the document */
	buf_release(&b);
	buf_init(&b, 4);
	assert_int_equal(engine_get_raw(e, "/overview", &b), -EFBIG);
	buf_release(&b);
	engine_free(e);
	srv_free(s);
}

/* SeaTunnel 2.3.8 (README "The real engine in the tests"): the API under
 * /hazelcast/rest/maps, /metrics beside it under /hazelcast/rest/instance. */
static void test_engine_get_raw_hazelcast_metrics(void **state)
{
	struct srv *s = srv_new();
	struct tconf t;
	struct engine *e;
	struct buf b;

	(void)state;
	srv_route_str(s, "/hazelcast/rest/instance/metrics", "# m\n");
	srv_route_str(s, "/hazelcast/rest/maps/overview", "{}");
	srv_run(s);
	tconf_init(&t, 10000);
	tconf_add(&t, s->ls.port, "/hazelcast/rest/maps");
	e = new_engine(&t);
	buf_init(&b, 1 << 20);
	assert_int_equal(engine_get_raw(e, "/metrics", &b), 0);
	assert_string_equal(b.data, "# m\n");
	buf_reset(&b);
	assert_int_equal(engine_get_raw(e, "/overview", &b), 0);
	assert_string_equal(b.data, "{}");
	assert_int_equal(route_hits(s, "/hazelcast/rest/instance/metrics"), 1);
	buf_release(&b);
	engine_free(e);
	srv_free(s);
}

static void test_engine_basic_auth_secret_not_leaked(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct engine *e;
	struct engine_snap *snap;
	char user[] = "admin", pw[] = "pa55word";

	(void)state;
	tconf_init(&t, 0);
	t.c.engine_user = user;
	t.c.engine_password = pw;
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	snap = engine_jobs(e, 1);
	assert_int_equal(snap->err, 0);
	/* base64("admin:pa55word") */
	assert_non_null(strstr(s->ls.last_req,
			       "Authorization: Basic YWRtaW46cGE1NXdvcmQ="));
	engine_snap_put(snap);
	atomic_store(&s->mode, SRV_FAIL);
	tu_sleep_ms(3);
	snap = engine_jobs(e, 1);
	assert_int_equal(snap->err, -EAGAIN);
	assert_null(strstr(snap->errmsg, "pa55word"));
	engine_snap_put(snap);
	engine_free(e);
	srv_free(s);
}

/* ---- issue 8 item 6: /finished-jobs fails as a whole (2.3.x NPE) */

struct ids_cb {
	const char *const *ids;
	size_t n;
	atomic_int calls;
};

static int ids_fn(void *cookie, char ***ids, size_t *n)
{
	struct ids_cb *c = cookie;
	char **v = calloc(c->n + 1, sizeof(*v));

	atomic_fetch_add(&c->calls, 1);
	assert_non_null(v);
	for (size_t i = 0; i < c->n; i++) {
		v[i] = strdup(c->ids[i]);
		assert_non_null(v[i]);
	}
	*ids = v;
	*n = c->n;
	return 0;
}

#define JOB(id, st)                                                         \
	"{\"jobId\":\"" id "\",\"jobName\":\"j" id "\",\"jobStatus\":\"" st \
	"\",\"createTime\":\"2026-11-30 10:00:00\",\"finishTime\":\"2026-"  \
	"11-30 11:00:00\",\"metrics\":{}}"

/* The 2.3.x whole-list failure, and one body per end state (NULL: that
 * list fails too). */
static void route_fallback(struct srv *s, const char *running,
			   const char *const states[5])
{
	static const char *const paths[5] = {
		"/finished-jobs/FINISHED",   "/finished-jobs/CANCELED",
		"/finished-jobs/FAILED",     "/finished-jobs/SAVEPOINT_DONE",
		"/finished-jobs/UNKNOWABLE",
	};

	srv_route_str(s, "/running-jobs", running);
	srv_route_npe(s, "/finished-jobs/");
	for (int i = 0; i < 5; i++) {
		if (states[i])
			srv_route_str(s, paths[i], states[i]);
		else
			srv_route_npe(s, paths[i]);
	}
}

/* An engine on `s` with the storage ids of `cb`, asked once. */
static struct engine_snap *fallback_snap(struct srv *s, struct ids_cb *cb,
					 struct tconf *t, struct engine **e)
{
	srv_run(s);
	tconf_init(t, 60000);
	tconf_add(t, s->ls.port, "");
	*e = new_engine(t);
	engine_set_storage_ids(*e, ids_fn, cb);
	return engine_jobs(*e, 0);
}

static void test_engine_finished_jobs_fallback(void **state)
{
	static const char *const storage[] = {"7",  "10", "11",
					      "12", "13", "20"};
	struct ids_cb cb = {.ids = storage, .n = 6};
	struct srv *s = srv_new();
	struct tconf t;
	struct engine *e;
	struct engine_snap *snap;
	const struct engine_job *j;
	struct engine_stats st;

	(void)state;
	/* one history entry (job 12) lost its DAG: the whole list is a 500,
	 * and so is the list of its state */
	route_fallback(s,
		       "[{\"jobId\":\"7\",\"jobName\":\"r\",\"jobStatus\":"
		       "\"RUNNING\",\"createTime\":\"2026-11-30 10:00:00\"}]",
		       (const char *const[5]){
			       "[" JOB("10", "FINISHED") "]", "[]", NULL,
			       "[" JOB("13", "SAVEPOINT_DONE") "]", "[]"});
	srv_route_str(s, "/job-info/11", JOB("11", "FAILED"));
	srv_route_npe(s, "/job-info/12");
	srv_route_str(s, "/job-info/20", "{\"jobId\":\"20\"}");
	snap = fallback_snap(s, &cb, &t, &e);
	assert_int_equal(snap->err, 0);
	assert_true(snap->partial);
	/* 7 running, 10 and 13 from their lists, 11 from job-info, 12 the
	 * bad one: UNKNOWN; 20 unknown to the engine: absent */
	assert_int_equal(snap->n_jobs, 5);
	assert_int_equal(engine_snap_find(snap, "7")->state, JS_RUNNING);
	assert_int_equal(engine_snap_find(snap, "10")->state, JS_FINISHED);
	j = engine_snap_find(snap, "11");
	assert_non_null(j);
	assert_int_equal(j->state, JS_FAILED);
	assert_false(j->running);
	assert_string_equal(j->name, "j11");
	assert_true(tu_has_metrics(j));
	j = engine_snap_find(snap, "12");
	assert_non_null(j);
	assert_int_equal(j->state, JS_UNKNOWN);
	assert_string_equal(j->json, "{\"jobId\":\"12\"}\n");
	assert_int_equal(engine_snap_find(snap, "13")->state,
			 JS_SAVEPOINT_DONE);
	assert_null(engine_snap_find(snap, "20"));
	/* bounded: one list, five states, job-info only for 11, 12, 20 */
	assert_int_equal(atomic_load(&cb.calls), 1);
	assert_int_equal(route_hits(s, "/finished-jobs/FAILED"), 1);
	assert_int_equal(route_hits(s, "/job-info/11"), 1);
	assert_int_equal(route_hits(s, "/job-info/12"), 1);
	assert_int_equal(route_hits(s, "/job-info/10"), -1);
	assert_int_equal(atomic_load(&s->ls.nreq), 1 + 1 + 5 + 3);
	engine_get_stats(e, &st);
	assert_int_equal(st.fallbacks, 1);
	engine_snap_put(snap);
	engine_free(e);
	srv_free(s);
}

/* Every per-state list answers: the history is complete, no job-info. */
static void test_engine_finished_jobs_fallback_complete(void **state)
{
	static const char *const storage[] = {"10"};
	struct ids_cb cb = {.ids = storage, .n = 1};
	struct srv *s = srv_new();
	struct tconf t;
	struct engine *e;
	struct engine_snap *snap;

	(void)state;
	route_fallback(s, "[]",
		       (const char *const[5]){"[]", "[]",
					      "[" JOB("10", "FAILED") "]", "[]",
					      "[]"});
	snap = fallback_snap(s, &cb, &t, &e);
	assert_int_equal(snap->err, 0);
	assert_false(snap->partial);
	assert_int_equal(snap->n_jobs, 1);
	assert_int_equal(engine_snap_find(snap, "10")->state, JS_FAILED);
	assert_int_equal(atomic_load(&cb.calls), 0);
	assert_int_equal(atomic_load(&s->ls.nreq), 7);
	engine_snap_put(snap);
	engine_free(e);
	srv_free(s);
}

/* Many storage jobs: at most ENGINE_FALLBACK_INFO (64) job-info asks; the
 * rest are UNKNOWN, and the refresh stays within the deadline. */
static void test_engine_finished_jobs_fallback_bounded(void **state)
{
	static char idbuf[200][16];
	static const char *ids[200];
	struct ids_cb cb = {.ids = ids, .n = 200};
	struct srv *s = srv_new();
	struct tconf t;
	struct engine *e;
	struct engine_snap *snap;
	int64_t t0;
	size_t unknown = 0;

	(void)state;
	for (int i = 0; i < 200; i++) {
		snprintf(idbuf[i], sizeof(idbuf[i]), "%d", 1000 + i);
		ids[i] = idbuf[i];
	}
	srv_route_str(s, "/running-jobs", "[]");
	srv_route_npe(s, "/finished-jobs/");
	/* every other path: 404, so every state list fails */
	t0 = tu_mono_ms();
	snap = fallback_snap(s, &cb, &t, &e);
	assert_true(tu_mono_ms() - t0 < 3000 + 1000 + 500);
	assert_int_equal(snap->err, 0);
	assert_true(snap->partial);
	assert_int_equal(snap->n_jobs, 200);
	for (size_t i = 0; i < snap->n_jobs; i++)
		unknown += snap->jobs[i].state == JS_UNKNOWN;
	assert_int_equal(unknown, 200);
	assert_true(atomic_load(&s->ls.nreq) <= 1 + 1 + 5 + 64);
	engine_snap_put(snap);
	engine_free(e);
	srv_free(s);
}

/* Issue 7: a /job-info answer about another job is an error (R3). */
static void test_engine_job_info_checks_the_id(void **state)
{
	struct srv *s = srv_new();
	struct tconf t;
	struct engine *e;
	struct engine_job j;

	(void)state;
	srv_route_str(s, "/job-info/42", JOB("43", "FAILED"));
	srv_route_str(s, "/job-info/44", JOB("044", "FAILED"));
	srv_run(s);
	tconf_init(&t, 1000);
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	assert_int_equal(engine_job_info(e, "42", &j), -EPROTO);
	assert_null(j.id);
	/* the same number written with a leading zero is the same job */
	assert_int_equal(engine_job_info(e, "44", &j), 0);
	engine_job_release(&j);
	engine_free(e);
	srv_free(s);
}

/* ---- issue 7 C11: answers and snapshots are bounded */

static void test_engine_answer_over_max_bytes(void **state)
{
	struct srv *s = srv_new();
	struct tconf t;
	struct engine *e;
	struct engine_snap *snap;
	size_t n = (size_t)3 << 20;
	char *big = malloc(n + 1);
	struct engine_job j;

	(void)state;
	assert_non_null(big);
	/* a valid 3 MiB JSON array of numbers */
	big[0] = '[';
	for (size_t i = 1; i + 1 < n; i += 2)
		memcpy(big + i, i + 3 < n ? "0," : "0]", 2);
	big[n - 1] = ']';
	if (big[n - 2] == ',')
		big[n - 2] = '0';
	big[n] = '\0';
	srv_route_str(s, "/running-jobs", "[]");
	srv_route(s, "/finished-jobs/", big);
	srv_route(s, "/job-info/5", strdup(big));
	srv_run(s);
	tconf_init(&t, 1000);
	t.c.engine_max_mb = 1;
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	snap = engine_jobs(e, 0);
	assert_int_equal(snap->err, -EFBIG);
	assert_non_null(strstr(snap->errmsg, "engine_max_mb"));
	assert_int_equal(snap->n_jobs, 0);
	/* no per-state fallback on an oversize answer */
	assert_int_equal(route_hits(s, "/finished-jobs/FAILED"), -1);
	assert_int_equal(atomic_load(&s->ls.nreq), 2);
	engine_snap_put(snap);
	assert_int_equal(engine_job_info(e, "5", &j), -EFBIG);
	engine_free(e);
	srv_free(s);
}

static void test_engine_snapshot_over_max_jobs(void **state)
{
	struct srv *s = srv_new();
	struct tconf t;
	struct engine *e;
	struct engine_snap *snap;

	(void)state;
	srv_route_str(s, "/running-jobs",
		      "[" JOB("1", "RUNNING") "," JOB("2", "RUNNING") "]");
	srv_route_str(s, "/finished-jobs/", "[" JOB("3", "FAILED") "]");
	srv_run(s);
	tconf_init(&t, 1000);
	t.c.engine_max_jobs = 2;
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	snap = engine_jobs(e, 0);
	assert_int_equal(snap->err, -EFBIG);
	assert_non_null(strstr(snap->errmsg, "engine_max_jobs"));
	engine_snap_put(snap);
	engine_free(e);
	srv_free(s);
}

/* ---- issue 7 C13: one fetch in flight per raw document */

struct rawcall {
	struct engine *e;
	int rc;
	int64_t ms;
	char body[64];
};

static void *raw_main(void *arg)
{
	struct rawcall *c = arg;
	struct buf b;
	int64_t t0 = tu_mono_ms();

	buf_init(&b, 1 << 20);
	c->rc = engine_get_raw(c->e, "/overview", &b);
	c->ms = tu_mono_ms() - t0;
	snprintf(c->body, sizeof(c->body), "%s", b.data ? b.data : "");
	buf_release(&b);
	return NULL;
}

static void run_raw(struct engine *e, struct rawcall *c, int n)
{
	pthread_t th[64];

	for (int i = 0; i < n; i++) {
		c[i].e = e;
		assert_int_equal(pthread_create(&th[i], NULL, raw_main, &c[i]),
				 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

static void test_engine_get_raw_single_flight(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct engine *e;
	struct rawcall c[40];

	(void)state;
	atomic_store(&s->delay_ms, 300);
	tconf_init(&t, 100);
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	run_raw(e, c, 40);
	for (int i = 0; i < 40; i++) {
		assert_int_equal(c[i].rc, 0);
		assert_string_equal(c[i].body,
				    "{\"projectVersion\":\"2.3.10\"}");
	}
	assert_int_equal(route_hits(s, "/overview"), 1);
	/* stale now (ttl 100 ms): one refetch, the others get the stale copy */
	tu_sleep_ms(150);
	run_raw(e, c, 40);
	for (int i = 0; i < 40; i++)
		assert_int_equal(c[i].rc, 0);
	assert_int_equal(route_hits(s, "/overview"), 2);
	engine_free(e);
	srv_free(s);
}

static void test_engine_get_raw_hung_single_flight(void **state)
{
	struct srv *s = srv_standard();
	struct tconf t;
	struct engine *e;
	struct rawcall c[60];

	(void)state;
	atomic_store(&s->mode, SRV_HANG);
	tconf_init(&t, 1000);
	t.c.timeout_ms = 1000;
	t.c.connect_timeout_ms = 500;
	tconf_add(&t, s->ls.port, "");
	e = new_engine(&t);
	run_raw(e, c, 60);
	for (int i = 0; i < 60; i++) {
		assert_int_not_equal(c[i].rc, 0);
		assert_true(c[i].ms < 1000 + 500 + 100 + 400);
	}
	/* one connection for all 60 callers */
	assert_int_equal(atomic_load(&s->ls.nreq), 1);
	/* callers that come right after the failure (the kernel serialises
	 * lookups of one name) get it at once, without a new request */
	run_raw(e, c, 1);
	assert_int_not_equal(c[0].rc, 0);
	assert_true(c[0].ms < 200);
	assert_int_equal(atomic_load(&s->ls.nreq), 1);
	atomic_store(&s->mode, SRV_ROUTES);
	engine_free(e);
	srv_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_new_rejects_no_urls),
		cmocka_unit_test(test_engine_new_rejects_bad_ca_file),
		cmocka_unit_test(test_engine_jobs_lists_and_merges),
		cmocka_unit_test(test_engine_jobs_cache_reuse),
		cmocka_unit_test(test_engine_jobs_failover_from_dead_url),
		cmocka_unit_test(test_engine_refused_not_retried),
		cmocka_unit_test(test_engine_jobs_single_flight),
		cmocka_unit_test(test_engine_jobs_paged_form),
		cmocka_unit_test(test_engine_refresh_shares_unchanged_texts),
		cmocka_unit_test(test_engine_jobs_failure_keeps_last_known),
		cmocka_unit_test(test_engine_jobs_never_answered),
		cmocka_unit_test(test_engine_jobs_hung_server_deadline),
		cmocka_unit_test(test_engine_job_info),
		cmocka_unit_test(test_engine_get_raw_cached),
		cmocka_unit_test(test_engine_get_raw_hazelcast_metrics),
		cmocka_unit_test(test_engine_basic_auth_secret_not_leaked),
		cmocka_unit_test(test_engine_finished_jobs_fallback),
		cmocka_unit_test(test_engine_finished_jobs_fallback_complete),
		cmocka_unit_test(test_engine_finished_jobs_fallback_bounded),
		cmocka_unit_test(test_engine_job_info_checks_the_id),
		cmocka_unit_test(test_engine_answer_over_max_bytes),
		cmocka_unit_test(test_engine_snapshot_over_max_jobs),
		cmocka_unit_test(test_engine_get_raw_single_flight),
		cmocka_unit_test(test_engine_get_raw_hung_single_flight),
	};

	return cmocka_run_group_tests(tests, loopsrv_group_setup,
				      loopsrv_group_teardown);
}
