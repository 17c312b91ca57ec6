/*
 * Tests for backends/webhdfs.c over loopback servers (tests/fakes/loopsrv)
 * for what a real Hadoop 3.5 does not do here: a namenode without
 * LISTSTATUS_BATCH, a SPNEGO filter's HTML 401, a listing of a file, and
 * the order of failover between namenodes (standby, refused).  Bodies are
 * the captured answers of tests/fixtures/webhdfs/ (cwd = the repo root).
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

#include "backends/backend.h"
#include "fakes/loopsrv.h"
#include "fakes/testutil.h"

#define FIX "tests/fixtures/webhdfs/"

/* a scripted server: answers by the first rule whose needle is in the
 * request line, and remembers every request line */
struct rule {
	const char *needle;
	int status;
	const char *fixture; /* a file of FIX, or NULL: `body` */
	const char *body;
};

struct script {
	const struct rule *rules;
	size_t n;
	char lines[16][512];
	int nl;
	atomic_int hang; /* read the request, never answer */
};

static void handle(struct loopsrv *s, int cfd, const char *req)
{
	struct script *sc = s->arg;
	size_t ll = strcspn(req, "\r\n");

	if (sc->nl < 16)
		snprintf(sc->lines[sc->nl++], 512, "%.*s", (int)ll, req);
	if (atomic_load(&sc->hang)) {
		loopsrv_hang(s, cfd);
		return;
	}
	for (size_t i = 0; i < sc->n; i++) {
		const struct rule *r = &sc->rules[i];
		char *body = NULL;
		size_t len = 0;

		if (!memmem(req, ll, r->needle, strlen(r->needle)))
			continue;
		if (r->fixture) {
			if (tu_load(FIX, r->fixture, &body, &len) < 0)
				break;
			loopsrv_reply(cfd, r->status,
				      "Content-Type: application/json\r\n",
				      body, len);
			free(body);
		} else {
			loopsrv_reply(cfd, r->status, NULL, r->body,
				      strlen(r->body));
		}
		return;
	}
	loopsrv_reply(cfd, 500, NULL, "no rule", 7);
}

static struct stfs_conf mkconf(const char *namenodes)
{
	struct stfs_conf c;

	assert_int_equal(conf_init_defaults(&c), 0);
	c.timeout_ms = 2000;
	c.retries = 0;
	c.namenodes = namenodes ? strdup(namenodes) : NULL;
	c.hdfs_user = strdup("stfs");
	return c;
}

struct names {
	int n;
	char name[16][64];
};

static int collect(void *cookie, const char *name, const struct be_attr *a)
{
	struct names *nm = cookie;

	(void)a;
	if (nm->n < 16)
		snprintf(nm->name[nm->n++], 64, "%s", name);
	return 0;
}

static void start(struct loopsrv *s, struct script *sc)
{
	assert_int_equal(loopsrv_start(s, handle, sc), 0);
}

static void test_liststatus_fallback(void **state)
{
	static const struct rule rules[] = {
		{"op=LISTSTATUS_BATCH", 400, NULL,
		 "{\"RemoteException\":{\"exception\":"
		 "\"IllegalArgumentException\",\"javaClassName\":"
		 "\"java.lang.IllegalArgumentException\",\"message\":"
		 "\"Invalid value for webhdfs parameter \\\"op\\\": No enum "
		 "constant ...GetOpParam.Op.LISTSTATUS_BATCH\"}}"},
		{"op=LISTSTATUS&", 200, "liststatus.json", NULL},
	};
	struct script sc = {.rules = rules, .n = 2};
	struct loopsrv s;
	struct stfs_conf c;
	struct backend *be;
	struct names nm = {0};
	struct buf d;
	char uri[128];

	(void)state;
	start(&s, &sc);
	c = mkconf(NULL);
	snprintf(uri, sizeof(uri), "webhdfs://127.0.0.1:%d/ns/", s.port);
	assert_int_equal(be_open_ops(&be_webhdfs_ops, uri, &c, &be), 0);
	assert_int_equal(be_list(be, "job1", 0, collect, &nm), 0);
	assert_int_equal(nm.n, 6);
	assert_string_equal(nm.name[5], "sub");
	assert_int_equal(sc.nl, 2);
	assert_non_null(strstr(sc.lines[0],
			       "GET /webhdfs/v1/ns/job1?op="
			       "LISTSTATUS_BATCH&user.name=stfs "));
	/* the namenode is asked LISTSTATUS directly from then on */
	nm.n = 0;
	assert_int_equal(be_list(be, "job1", 0, collect, &nm), 0);
	assert_int_equal(nm.n, 6);
	assert_int_equal(sc.nl, 3);
	assert_non_null(strstr(sc.lines[2], "op=LISTSTATUS&"));
	buf_init(&d, 4096);
	assert_int_equal(be_describe(be, &d), 0);
	assert_non_null(strstr(d.data, "hdfs_listing = LISTSTATUS\n"));
	buf_release(&d);
	be_close(be);
	conf_release(&c);
	loopsrv_stop(&s);
}

static void test_errors(void **state)
{
	static const struct rule rules[] = {
		{"/ns/kerb?", 401, NULL,
		 "<html><body><h2>HTTP ERROR 401 Authentication required"
		 "</h2></body></html>"},
		{"/ns/file?op=LISTSTATUS_BATCH", 200, "batch_of_file.json",
		 NULL},
		{"/ns/gone?", 404, "err_filenotfound.json", NULL},
		{"/ns/priv?", 403, "err_accesscontrol.json", NULL},
		{"/ns/full?op=GETFILESTATUS", 200, "filestatus_dir.json", NULL},
		{"/ns/full?op=DELETE", 403, "err_delete_nonempty.json", NULL},
		{"/ns/f.ser?op=OPEN", 403, "err_offset.json", NULL},
		{"/ns/f.ser?op=GETFILESTATUS", 200, "filestatus_file.json",
		 NULL},
		{"/ns/f.ser?op=DELETE", 200, NULL, "{\"boolean\":false}"},
	};
	struct script sc = {.rules = rules, .n = 9};
	struct loopsrv s;
	struct stfs_conf c;
	struct backend *be;
	struct names nm = {0};
	char uri[128], buf[16], msg[160];
	int err;

	(void)state;
	start(&s, &sc);
	c = mkconf(NULL);
	snprintf(uri, sizeof(uri), "webhdfs://127.0.0.1:%d/ns", s.port);
	assert_int_equal(be_open_ops(&be_webhdfs_ops, uri, &c, &be), 0);
	/* the SPNEGO filter's HTML 401: EACCES, health says so */
	assert_int_equal(be_list(be, "kerb", 0, collect, &nm), -EACCES);
	be_health(be, &err, NULL, NULL, msg, sizeof(msg));
	assert_int_equal(err, -EACCES);
	assert_non_null(strstr(msg, "401"));
	assert_int_equal(be_list(be, "file", 0, collect, &nm), -ENOTDIR);
	assert_int_equal(be_list(be, "gone", 0, collect, &nm), -ENOENT);
	assert_int_equal(be_list(be, "priv", 0, collect, &nm), -EACCES);
	assert_int_equal(be_rmdir(be, "full"), -ENOTEMPTY);
	/* a read at the end: the namenode's 403, confirmed by the length */
	assert_int_equal(be_read(be, "f.ser", buf, sizeof(buf), 5), 0);
	/* DELETE answering false: nothing was there */
	assert_int_equal(be_remove(be, "f.ser"), -ENOENT);
	/* a file is no directory for rmdir */
	assert_int_equal(be_rmdir(be, "f.ser"), -ENOTDIR);
	assert_int_equal(nm.n, 0);
	be_close(be);
	conf_release(&c);
	loopsrv_stop(&s);
}

static void test_failover_order(void **state)
{
	static const struct rule standby[] = {
		{"op=", 403, "err_standby.json", NULL},
	};
	static const struct rule active[] = {
		{"op=LISTSTATUS_BATCH", 200, "batch_last.json", NULL},
	};
	struct script s1 = {.rules = standby, .n = 1};
	struct script s2 = {.rules = active, .n = 1};
	struct loopsrv a, b;
	struct stfs_conf c;
	struct backend *be;
	struct names nm = {0};
	char nns[128];
	struct buf d;
	char want[96];
	int closed = loopsrv_closed_port();

	(void)state;
	assert_true(closed > 0);
	start(&a, &s1);
	start(&b, &s2);
	/* refused, standby, active: in that order */
	snprintf(nns, sizeof(nns), "127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d",
		 closed, a.port, b.port);
	c = mkconf(nns);
	assert_int_equal(
		be_open_ops(&be_webhdfs_ops, "hdfs://prod/ns/", &c, &be), 0);
	assert_int_equal(be_list(be, "j", 0, collect, &nm), 0);
	assert_int_equal(nm.n, 2);
	assert_int_equal(s1.nl, 1);
	assert_int_equal(s2.nl, 1);
	/* the active one is asked first from then on */
	assert_int_equal(be_list(be, "j", 0, collect, &nm), 0);
	assert_int_equal(s1.nl, 1);
	assert_int_equal(s2.nl, 2);
	buf_init(&d, 4096);
	assert_int_equal(be_describe(be, &d), 0);
	snprintf(want, sizeof(want), "hdfs_active = http://127.0.0.1:%d\n",
		 b.port);
	assert_non_null(strstr(d.data, want));
	buf_release(&d);
	be_close(be);
	conf_release(&c);
	loopsrv_stop(&a);
	loopsrv_stop(&b);
}

/*
 * A namenode that does not answer is met once per deadline: the call that
 * hit the deadline spares the next calls of every kind for one timeout,
 * unsent (README "Failure modes"); after that it is asked again.
 */
static void test_unreachable_spares_next_calls(void **state)
{
	static const struct rule rules[] = {
		{"op=LISTSTATUS_BATCH", 200, "batch_last.json", NULL},
	};
	struct script sc = {.rules = rules, .n = 1};
	struct loopsrv s;
	struct stfs_conf c;
	struct backend *be;
	struct names nm = {0};
	struct be_attr a;
	char uri[128], buf[16];
	int64_t t0;

	(void)state;
	atomic_store(&sc.hang, 1);
	start(&s, &sc);
	c = mkconf(NULL);
	c.timeout_ms = 400;
	snprintf(uri, sizeof(uri), "webhdfs://127.0.0.1:%d/ns/", s.port);
	assert_int_equal(be_open_ops(&be_webhdfs_ops, uri, &c, &be), 0);
	t0 = tu_mono_ms();
	assert_int_equal(be_list(be, "j", 0, collect, &nm), -ETIMEDOUT);
	assert_true(tu_mono_ms() - t0 < 400 + 900);
	assert_int_equal(sc.nl, 1);
	t0 = tu_mono_ms();
	assert_int_equal(be_stat(be, "j/f", &a), -ETIMEDOUT);
	assert_int_equal(be_read(be, "j/g", buf, sizeof(buf), 0), -ETIMEDOUT);
	assert_true(tu_mono_ms() - t0 < 100);
	assert_int_equal(sc.nl, 1);
	/* the namenode answers again: asked again once the deadline passed */
	atomic_store(&sc.hang, 0);
	tu_sleep_ms(450);
	assert_int_equal(be_list(be, "j", 0, collect, &nm), 0);
	assert_int_equal(sc.nl, 2);
	assert_int_equal(nm.n, 2);
	be_close(be);
	conf_release(&c);
	loopsrv_stop(&s);
}

/*
 * With HA the pause is per namenode (per endpoint, whichever backend asks):
 * a dead one does not keep a call from the next one, and a call after it,
 * here of a second mount of the same cluster (the imap namespace's), goes
 * to the live one at once; once the pause is over the first is asked again.
 */
static void test_unreachable_pause_per_namenode(void **state)
{
	static const struct rule active[] = {
		{"op=LISTSTATUS_BATCH", 200, "batch_last.json", NULL},
	};
	struct script dead = {.rules = active, .n = 1};
	struct script live = {.rules = active, .n = 1};
	struct loopsrv a, b;
	struct stfs_conf c;
	struct backend *be, *be2;
	struct names nm = {0};
	char nns[128];
	int64_t t0;

	(void)state;
	atomic_store(&dead.hang, 1);
	start(&a, &dead);
	start(&b, &live);
	snprintf(nns, sizeof(nns), "127.0.0.1:%d,127.0.0.1:%d", a.port, b.port);
	c = mkconf(nns);
	c.timeout_ms = 400;
	assert_int_equal(
		be_open_ops(&be_webhdfs_ops, "hdfs://prod/ns/", &c, &be), 0);
	/* the first namenode is dead: one deadline, then the second */
	t0 = tu_mono_ms();
	assert_int_equal(be_list(be, "j", 0, collect, &nm), 0);
	assert_true(tu_mono_ms() - t0 < 400 + 900);
	assert_int_equal(dead.nl, 1);
	assert_int_equal(live.nl, 1);
	/* another backend starting at the first namenode: spared, at once */
	assert_int_equal(
		be_open_ops(&be_webhdfs_ops, "hdfs://prod/ns/", &c, &be2), 0);
	t0 = tu_mono_ms();
	assert_int_equal(be_list(be2, "j", 0, collect, &nm), 0);
	assert_true(tu_mono_ms() - t0 < 100);
	assert_int_equal(dead.nl, 1);
	assert_int_equal(live.nl, 2);
	be_close(be2);
	/* once its pause is over the first one is asked again */
	atomic_store(&dead.hang, 0);
	tu_sleep_ms(450);
	assert_int_equal(
		be_open_ops(&be_webhdfs_ops, "hdfs://prod/ns/", &c, &be2), 0);
	assert_int_equal(be_list(be2, "j", 0, collect, &nm), 0);
	assert_int_equal(dead.nl, 2);
	assert_int_equal(live.nl, 2);
	be_close(be2);
	be_close(be);
	conf_release(&c);
	loopsrv_stop(&a);
	loopsrv_stop(&b);
}

static void test_uris(void **state)
{
	struct stfs_conf c = mkconf(NULL);
	struct backend *be;
	struct buf d;

	(void)state;
	/* hdfs:// names the RPC port: HTTP is hdfs_http_port (9870) */
	assert_int_equal(
		be_open_ops(&be_webhdfs_ops, "hdfs://nn:8020/a/", &c, &be), 0);
	buf_init(&d, 4096);
	assert_int_equal(be_describe(be, &d), 0);
	assert_non_null(strstr(d.data, "hdfs_namenodes = http://nn:9870\n"));
	buf_release(&d);
	be_close(be);
	c.hdfs_http_port = 50070;
	assert_int_equal(be_open_ops(&be_webhdfs_ops, "hdfs://nn/a/", &c, &be),
			 0);
	buf_init(&d, 4096);
	assert_int_equal(be_describe(be, &d), 0);
	assert_non_null(strstr(d.data, "http://nn:50070\n"));
	buf_release(&d);
	be_close(be);
	assert_int_equal(
		be_open_ops(&be_webhdfs_ops, "swebhdfs://nn/a/", &c, &be), 0);
	buf_init(&d, 4096);
	assert_int_equal(be_describe(be, &d), 0);
	assert_non_null(strstr(d.data, "https://nn:9871\n"));
	buf_release(&d);
	be_close(be);
	assert_int_equal(
		be_open_ops(&be_webhdfs_ops, "webhdfs://n n/a/", &c, &be),
		-EINVAL);
	free(c.namenodes);
	c.namenodes = strdup("good:1,bad:port");
	assert_int_equal(be_open_ops(&be_webhdfs_ops, "hdfs://ns/a/", &c, &be),
			 -EINVAL);
	conf_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_liststatus_fallback),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_failover_order),
		cmocka_unit_test(test_unreachable_spares_next_calls),
		cmocka_unit_test(test_unreachable_pause_per_namenode),
		cmocka_unit_test(test_uris),
	};

	return cmocka_run_group_tests(tests, loopsrv_group_setup,
				      loopsrv_group_teardown);
}
