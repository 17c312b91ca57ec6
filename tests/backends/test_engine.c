/*
 * Tests for backends/engine.c: the REST v2 client against loopback
 * servers (tests/fakes/loopsrv: threads with listening sockets on
 * 127.0.0.1:0) answering the SEATUNNEL.md §4.5 fixtures: failover, cache
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

#include <cmocka.h>

#include "engine.h"
#include "fakes/loopsrv.h"
#include "fakes/testutil.h"
#include "http.h"

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

#define SRV_ROUTES_MAX 16

struct route {
	const char *target; /* path + query, exact */
	char *body;	    /* owned */
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
			reply(cfd, 200, s->routes[i].body);
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

/* The standard engine: §4.5 running and finished lists, job-info. */
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
	assert_non_null(j.metrics);
	assert_string_equal(json_string_value(json_object_get(
				    j.metrics, "SourceReceivedCount")),
			    "1200");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_new_rejects_no_urls),
		cmocka_unit_test(test_engine_jobs_lists_and_merges),
		cmocka_unit_test(test_engine_jobs_cache_reuse),
		cmocka_unit_test(test_engine_jobs_failover_from_dead_url),
		cmocka_unit_test(test_engine_jobs_single_flight),
		cmocka_unit_test(test_engine_jobs_paged_form),
		cmocka_unit_test(test_engine_jobs_failure_keeps_last_known),
		cmocka_unit_test(test_engine_jobs_never_answered),
		cmocka_unit_test(test_engine_jobs_hung_server_deadline),
		cmocka_unit_test(test_engine_job_info),
		cmocka_unit_test(test_engine_get_raw_cached),
		cmocka_unit_test(test_engine_basic_auth_secret_not_leaked),
	};

	return cmocka_run_group_tests(tests, loopsrv_group_setup,
				      loopsrv_group_teardown);
}
