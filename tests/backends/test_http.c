/*
 * Tests for backends/http.c: the errno tables, URL redaction, and real
 * transfers against a loopback HTTP server (tests/fakes/loopsrv: a thread
 * with a listening socket on 127.0.0.1:0): fixed bodies, 503 N times then
 * 200, a server that never answers, a body over the cap; the CA file
 * check and a CA file TLS cannot use (not retried).
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "fakes/loopsrv.h"
#include "fakes/testutil.h"
#include "backends/http.h"

/* ---- a tiny loopback HTTP/1.1 server (tests/fakes/loopsrv) */

enum srv_mode {
	SRV_BODY,      /* 200 with a fixed body and headers */
	SRV_FAIL_THEN, /* `fail_n` times `fail_status`, then as SRV_BODY */
	SRV_HANG,      /* read the request, never answer */
	SRV_BIG,       /* 200 with big_len bytes */
	SRV_REDIRECT,  /* 307 to `location` */
};

struct srv {
	struct loopsrv ls;
	atomic_int fail_n;
	int fail_status;
	enum srv_mode mode;
	size_t big_len;
	char location[160];
};

static void serve(struct loopsrv *ls, int cfd, const char *req)
{
	struct srv *s = ls->arg;

	(void)req;
	if (s->mode == SRV_HANG) {
		loopsrv_hang(ls, cfd);
	} else if (s->mode == SRV_REDIRECT) {
		char loc[200];

		snprintf(loc, sizeof(loc), "Location: %s\r\n", s->location);
		loopsrv_reply(cfd, 307, loc, "", 0);
	} else if (s->mode == SRV_BIG) {
		char *big = malloc(s->big_len);

		if (big) {
			memset(big, 'x', s->big_len);
			loopsrv_reply(cfd, 200, NULL, big, s->big_len);
			free(big);
		}
	} else if (s->mode == SRV_FAIL_THEN &&
		   atomic_fetch_sub(&s->fail_n, 1) > 0) {
		loopsrv_reply(cfd, s->fail_status, NULL, "busy", 4);
	} else {
		loopsrv_reply(cfd, 200,
			      "Content-Type: application/json\r\n"
			      "Last-Modified: Wed, 21 Oct 2015 "
			      "07:28:00 GMT\r\n",
			      "{\"ok\":1}", 8);
	}
}

static struct srv *srv_start(enum srv_mode mode)
{
	struct srv *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->mode = mode;
	s->fail_status = 503;
	assert_int_equal(loopsrv_start(&s->ls, serve, s), 0);
	return s;
}

static void srv_stop(struct srv *s)
{
	loopsrv_stop(&s->ls);
	free(s);
}

static void srv_url(const struct srv *s, const char *path, char *out,
		    size_t outsz)
{
	loopsrv_url(&s->ls, path, out, outsz);
}

/* A port nothing listens on. */
static int closed_port(void)
{
	int port = loopsrv_closed_port();

	assert_true(port > 0);
	return port;
}

/* ---- tables */

static void test_http_curl_to_errno_table(void **state)
{
	(void)state;
	assert_int_equal(http_curl_to_errno(CURLE_OK), 0);
	assert_int_equal(http_curl_to_errno(CURLE_OPERATION_TIMEDOUT),
			 -ETIMEDOUT);
	assert_int_equal(http_curl_to_errno(CURLE_COULDNT_RESOLVE_HOST),
			 -EHOSTUNREACH);
	assert_int_equal(http_curl_to_errno(CURLE_COULDNT_RESOLVE_PROXY),
			 -EHOSTUNREACH);
	assert_int_equal(http_curl_to_errno(CURLE_COULDNT_CONNECT),
			 -ECONNREFUSED);
	assert_int_equal(http_curl_to_errno(CURLE_FILESIZE_EXCEEDED), -EFBIG);
	assert_int_equal(http_curl_to_errno(CURLE_ABORTED_BY_CALLBACK), -EINTR);
	assert_int_equal(http_curl_to_errno(CURLE_OUT_OF_MEMORY), -ENOMEM);
	assert_int_equal(http_curl_to_errno(CURLE_RECV_ERROR), -EIO);
	assert_int_equal(http_curl_to_errno(CURLE_SEND_ERROR), -EIO);
	assert_int_equal(http_curl_to_errno(CURLE_GOT_NOTHING), -EIO);
	assert_int_equal(http_curl_to_errno(CURLE_PEER_FAILED_VERIFICATION),
			 -EIO);
	assert_int_equal(http_curl_to_errno(9999), -EIO);
}

static void test_http_status_to_errno_table(void **state)
{
	(void)state;
	assert_int_equal(http_status_to_errno(200), 0);
	assert_int_equal(http_status_to_errno(204), 0);
	assert_int_equal(http_status_to_errno(206), 0);
	assert_int_equal(http_status_to_errno(400), -EINVAL);
	assert_int_equal(http_status_to_errno(401), -EACCES);
	assert_int_equal(http_status_to_errno(403), -EACCES);
	assert_int_equal(http_status_to_errno(404), -ENOENT);
	assert_int_equal(http_status_to_errno(410), -ENOENT);
	assert_int_equal(http_status_to_errno(408), -ETIMEDOUT);
	assert_int_equal(http_status_to_errno(409), -EEXIST);
	assert_int_equal(http_status_to_errno(412), -EEXIST);
	assert_int_equal(http_status_to_errno(413), -EFBIG);
	assert_int_equal(http_status_to_errno(416), -ERANGE);
	assert_int_equal(http_status_to_errno(418), -EINVAL);
	assert_int_equal(http_status_to_errno(429), -EAGAIN);
	assert_int_equal(http_status_to_errno(500), -EAGAIN);
	assert_int_equal(http_status_to_errno(501), -ENOSYS);
	assert_int_equal(http_status_to_errno(503), -EAGAIN);
	assert_int_equal(http_status_to_errno(599), -EAGAIN);
	assert_int_equal(http_status_to_errno(0), -EIO);
	assert_int_equal(http_status_to_errno(101), -EIO);
	assert_int_equal(http_status_to_errno(304), -EIO);
	assert_int_equal(http_status_to_errno(700), -EIO);
}

static void test_http_redact_url_strips_secrets(void **state)
{
	char out[128];

	(void)state;
	assert_string_equal(http_redact_url("http://u:secret@h:8080/a/b?x=1",
					    out, sizeof(out)),
			    "http://h:8080/a/b");
	assert_string_equal(http_redact_url("https://h/p", out, sizeof(out)),
			    "https://h/p");
	assert_string_equal(
		http_redact_url("http://a@b@h?sig=zzz", out, sizeof(out)),
		"http://h");
	assert_string_equal(http_redact_url("h:1/p@x", out, sizeof(out)),
			    "h:1/p@x");
	assert_string_equal(http_redact_url(NULL, out, sizeof(out)), "(null)");
	http_redact_url("http://u:secret@hostname/verylongpath", out, 10);
	assert_int_equal(strlen(out), 9);
	assert_null(strstr(out, "secret"));
}

/* ---- transfers */

static void test_http_perform_get_body_and_headers(void **state)
{
	struct srv *s = srv_start(SRV_BODY);
	struct http_resp r;
	struct http_stats before, after;
	char url[128];
	struct http_req req = {.url = url, .timeout_ms = 3000};

	(void)state;
	srv_url(s, "/x", url, sizeof(url));
	http_get_stats(&before);
	http_resp_init(&r);
	assert_int_equal(http_perform(&req, &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 8);
	assert_string_equal(r.body.data, "{\"ok\":1}");
	assert_int_equal(r.content_length, 8);
	assert_string_equal(r.content_type, "application/json");
	assert_int_equal(r.last_modified_ms, 1445412480000LL);
	assert_int_equal(r.attempts, 1);
	assert_non_null(strstr(s->ls.last_req, "GET /x HTTP/1.1\r\n"));
	http_get_stats(&after);
	assert_true(after.requests >= before.requests + 1);
	assert_true(after.bytes_in >= before.bytes_in + 8);
	/* a second request reuses the pooled handle */
	assert_int_equal(http_perform(&req, &r), 0);
	assert_int_equal(r.body.len, 8);
	assert_int_equal(atomic_load(&s->ls.nreq), 2);
	http_resp_release(&r);
	srv_stop(s);
}

static void test_http_perform_basic_auth_not_in_errors(void **state)
{
	struct srv *s = srv_start(SRV_BODY);
	struct http_resp r;
	char url[128];
	struct http_req req = {
		.url = url, .timeout_ms = 3000, .userpwd = "alice:s3cr3t"};

	(void)state;
	srv_url(s, "/auth", url, sizeof(url));
	http_resp_init(&r);
	assert_int_equal(http_perform(&req, &r), 0);
	/* base64("alice:s3cr3t") */
	assert_non_null(strstr(s->ls.last_req,
			       "Authorization: Basic YWxpY2U6czNjcjN0"));
	srv_stop(s);
	/* a failure names the URL without the credentials */
	snprintf(url, sizeof(url), "http://bob:hunter2@127.0.0.1:%d/p?t=tok",
		 closed_port());
	req.timeout_ms = 1000;
	assert_int_equal(http_perform(&req, &r), -ECONNREFUSED);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.error, "127.0.0.1"));
	assert_null(strstr(r.error, "hunter2"));
	assert_null(strstr(r.error, "s3cr3t"));
	assert_null(strstr(r.error, "tok"));
	http_resp_release(&r);
}

static void test_http_perform_retries_503_then_200(void **state)
{
	struct srv *s = srv_start(SRV_FAIL_THEN);
	struct http_resp r;
	struct http_stats before, after;
	char url[128];
	struct http_req req = {.url = url, .timeout_ms = 5000, .retries = 3};

	(void)state;
	atomic_store(&s->fail_n, 2);
	srv_url(s, "/r", url, sizeof(url));
	http_get_stats(&before);
	http_resp_init(&r);
	assert_int_equal(http_perform(&req, &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.attempts, 3);
	assert_string_equal(r.body.data, "{\"ok\":1}");
	assert_int_equal(atomic_load(&s->ls.nreq), 3);
	http_get_stats(&after);
	assert_int_equal(after.retries - before.retries, 2);
	http_resp_release(&r);
	srv_stop(s);
}

static void test_http_perform_retries_exhausted(void **state)
{
	struct srv *s = srv_start(SRV_FAIL_THEN);
	struct http_resp r;
	char url[128];
	struct http_req req = {.url = url, .timeout_ms = 5000, .retries = 2};

	(void)state;
	atomic_store(&s->fail_n, 100);
	srv_url(s, "/r", url, sizeof(url));
	http_resp_init(&r);
	assert_int_equal(http_perform(&req, &r), 0);
	assert_int_equal(r.status, 503);
	assert_int_equal(r.attempts, 3);
	assert_string_equal(r.body.data, "busy");
	assert_non_null(strstr(r.error, "HTTP 503"));
	assert_int_equal(atomic_load(&s->ls.nreq), 3);
	http_resp_release(&r);
	srv_stop(s);
}

/* https:// with a CA file TLS cannot load: one attempt, curl's reason */
static void test_http_perform_unusable_ca_file_not_retried(void **state)
{
	struct srv *s = srv_start(SRV_BODY);
	struct http_resp r;
	char url[128], surl[160];
	struct http_req req = {.url = surl,
			       .timeout_ms = 5000,
			       .retries = 3,
			       .ca_file = "/nonexistent/stfs-ca.pem"};

	(void)state;
	srv_url(s, "/r", url, sizeof(url));
	assert_int_equal(strncmp(url, "http://", 7), 0);
	snprintf(surl, sizeof(surl), "https://%s", url + 7);
	http_resp_init(&r);
	assert_int_equal(http_perform(&req, &r), -EIO);
	assert_true(r.tls_refused);
	assert_int_equal(r.attempts, 1);
	assert_non_null(strstr(r.error, "/nonexistent/stfs-ca.pem"));
	http_resp_release(&r);
	srv_stop(s);
}

static void write_file(const char *path, const char *a, size_t alen,
		       const char *b)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(a, 1, alen, f), alen);
	if (b)
		assert_int_equal(fputs(b, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_http_ca_file_check(void **state)
{
	char dir[] = "/tmp/stfs-ca.XXXXXX", p[256], why[128];
	static char junk[20000];
	const char *pem = "-----BEGIN CERTIFICATE-----\nMIIB\n"
			  "-----END CERTIFICATE-----\n";

	(void)state;
	assert_non_null(mkdtemp(dir));
	memset(junk, 'x', sizeof(junk));
	snprintf(p, sizeof(p), "%s/none.pem", dir);
	assert_int_equal(http_ca_file_check(p, why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "No such file or directory");
	assert_int_equal(http_ca_file_check(dir, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "is not a regular file");
	snprintf(p, sizeof(p), "%s/junk.pem", dir);
	write_file(p, junk, sizeof(junk), NULL);
	assert_int_equal(http_ca_file_check(p, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "holds no PEM certificate");
	write_file(p, "", 0, NULL);
	assert_int_equal(http_ca_file_check(p, why, sizeof(why)), -EINVAL);
	/* the tag where it straddles two reads (8192 bytes each), and after
	 * some junk further on */
	for (size_t at = 8170; at < 8200; at += 3) {
		write_file(p, junk, at, pem);
		assert_int_equal(http_ca_file_check(p, why, sizeof(why)), 0);
	}
	write_file(p, junk, sizeof(junk), pem);
	assert_int_equal(http_ca_file_check(p, why, sizeof(why)), 0);
	write_file(p, "", 0, pem);
	assert_int_equal(http_ca_file_check(p, why, sizeof(why)), 0);
	assert_int_equal(tu_rmtree(dir), 0);
}

static void test_http_perform_no_retry_for_post_or_404(void **state)
{
	struct srv *s = srv_start(SRV_FAIL_THEN);
	struct http_resp r;
	char url[128];
	struct http_req req = {.method = "POST",
			       .url = url,
			       .body = "{}",
			       .body_len = 2,
			       .timeout_ms = 5000,
			       .retries = 3};

	(void)state;
	atomic_store(&s->fail_n, 100);
	srv_url(s, "/stop-job", url, sizeof(url));
	http_resp_init(&r);
	assert_int_equal(http_perform(&req, &r), 0);
	assert_int_equal(r.status, 503);
	assert_int_equal(r.attempts, 1);
	assert_non_null(strstr(s->ls.last_req, "POST /stop-job"));
	/* a 404 is final even for GET */
	s->fail_status = 404;
	req.method = NULL;
	req.body = NULL;
	assert_int_equal(http_perform(&req, &r), 0);
	assert_int_equal(r.status, 404);
	assert_int_equal(r.attempts, 1);
	assert_int_equal(atomic_load(&s->ls.nreq), 2);
	http_resp_release(&r);
	srv_stop(s);
}

/* what a streaming request's sink was given */
struct sink_rec {
	char got[64];
	size_t len, calls;
	long status;
	int stop_with;	     /* returned from the first call when set */
	int64_t deadline_ms; /* 0: far away */
};

static int sink_fn(void *ud, long status, const char *p, size_t n)
{
	struct sink_rec *k = ud;

	k->calls++;
	k->status = status;
	if (k->stop_with)
		return k->stop_with;
	if (k->len + n <= sizeof(k->got)) {
		memcpy(k->got + k->len, p, n);
		k->len += n;
	}
	return 0;
}

static int64_t sink_deadline_fn(void *ud)
{
	const struct sink_rec *k = ud;

	return k->deadline_ms ? k->deadline_ms : tu_mono_ms() + 60000;
}

/* a streaming GET of `url` into `k` */
static struct http_req sink_req(const char *url, struct sink_rec *k,
				unsigned retries)
{
	return (struct http_req){.url = url,
				 .timeout_ms = 5000,
				 .retries = retries,
				 .sink = sink_fn,
				 .sink_deadline = sink_deadline_fn,
				 .sink_ud = k};
}

/* a 2xx body goes to the sink; an error status's body to resp->body, and
 * it is retried as ever */
static void test_http_perform_sink_gets_2xx_body(void **state)
{
	struct srv *s = srv_start(SRV_FAIL_THEN);
	struct sink_rec k = {.calls = 0};
	struct http_resp r;
	char url[128];
	struct http_req req = sink_req(url, &k, 2);

	(void)state;
	atomic_store(&s->fail_n, 1);
	srv_url(s, "/r", url, sizeof(url));
	http_resp_init(&r);
	assert_int_equal(http_perform(&req, &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.attempts, 2);
	assert_int_equal(k.status, 200);
	assert_int_equal(k.len, 8);
	assert_memory_equal(k.got, "{\"ok\":1}", 8);
	assert_int_equal(r.body.len, 0);
	http_resp_release(&r);
	srv_stop(s);
}

/* the sink ends the transfer: its errno, and no retry */
static void test_http_perform_sink_stops(void **state)
{
	struct srv *s = srv_start(SRV_BIG);
	struct sink_rec k = {.stop_with = -ECANCELED};
	struct http_resp r;
	char url[128];
	struct http_req req = sink_req(url, &k, 3);

	(void)state;
	s->big_len = (size_t)1 << 20;
	srv_url(s, "/big", url, sizeof(url));
	http_resp_init(&r);
	assert_int_equal(http_perform(&req, &r), -ECANCELED);
	assert_int_equal(r.attempts, 1);
	assert_int_equal(k.calls, 1);
	assert_int_equal(atomic_load(&s->ls.nreq), 1);
	http_resp_release(&r);
	srv_stop(s);
}

/* with a sink, its deadline holds, not timeout_ms */
static void test_http_perform_sink_deadline(void **state)
{
	struct srv *s = srv_start(SRV_HANG);
	struct sink_rec k = {.calls = 0};
	struct http_resp r;
	struct http_stats before, after;
	char url[128];
	struct http_req req = sink_req(url, &k, 0);
	int64_t t0, dt;

	(void)state;
	srv_url(s, "/hang", url, sizeof(url));
	http_get_stats(&before);
	http_resp_init(&r);
	t0 = tu_mono_ms();
	k.deadline_ms = t0 + 300;
	assert_int_equal(http_perform(&req, &r), -ETIMEDOUT);
	dt = tu_mono_ms() - t0;
	assert_true(dt >= 280);
	assert_true(dt < 1500); /* xferinfo runs at least once a second */
	assert_int_equal(k.calls, 0);
	http_get_stats(&after);
	assert_true(after.timeouts > before.timeouts);
	http_resp_release(&r);
	srv_stop(s);
}

static void test_http_perform_hung_server_times_out(void **state)
{
	struct srv *s = srv_start(SRV_HANG);
	struct http_resp r;
	struct http_stats before, after;
	char url[128];
	struct http_req req = {.url = url, .timeout_ms = 600, .retries = 2};
	int64_t t0, dt;

	(void)state;
	srv_url(s, "/hang", url, sizeof(url));
	http_get_stats(&before);
	http_resp_init(&r);
	t0 = tu_mono_ms();
	assert_int_equal(http_perform(&req, &r), -ETIMEDOUT);
	dt = tu_mono_ms() - t0;
	assert_true(dt >= 550);
	assert_true(dt < 600 + 400);
	assert_int_equal(r.status, 0);
	assert_true(r.error[0] != '\0');
	http_get_stats(&after);
	assert_true(after.timeouts > before.timeouts);
	assert_true(after.errors > before.errors);
	http_resp_release(&r);
	srv_stop(s);
}

static void test_http_perform_refused_retries_within_deadline(void **state)
{
	struct http_resp r;
	char url[128];
	struct http_req req = {.url = url, .timeout_ms = 800, .retries = 50};
	int64_t t0, dt;

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", closed_port());
	http_resp_init(&r);
	t0 = tu_mono_ms();
	assert_int_equal(http_perform(&req, &r), -ECONNREFUSED);
	dt = tu_mono_ms() - t0;
	assert_true(dt < 800 + 300);
	assert_true(r.attempts >= 2);
	assert_true(r.attempts < 50);
	http_resp_release(&r);
}

/*
 * The unreachable-endpoint pause: a request that hit the deadline makes the
 * next ones to that endpoint (scheme://host:port) fail at once, unsent, for
 * one timeout; requests without pause_unreachable, other endpoints, and a
 * failure after a redirect (another host's) are not held up; an answer
 * ends the pause (README "Failure modes").
 */
static void test_http_pause_unreachable(void **state)
{
	struct srv *h = srv_start(SRV_HANG), *ok = srv_start(SRV_BODY);
	struct srv *rd = srv_start(SRV_REDIRECT);
	struct http_resp r;
	char url[128], url2[128], urlr[128];
	struct http_req req = {
		.url = url, .timeout_ms = 300, .pause_unreachable = true};
	struct http_stats s0, s1;
	int64_t t0;
	int n;

	(void)state;
	http_pause_forget();
	srv_url(h, "/a", url, sizeof(url));
	http_resp_init(&r);
	http_get_stats(&s0);
	assert_int_equal(http_perform(&req, &r), -ETIMEDOUT);
	n = atomic_load(&h->ls.nreq);
	/* the request that met the fault was sent: not counted as held back */
	http_get_stats(&s1);
	assert_int_equal(s1.paused, s0.paused);
	/* the same endpoint, another path and case: not sent, at once, and
	 * counted in .stfs/stats (stfs_http_paused_total) */
	snprintf(url2, sizeof(url2), "HTTP://127.0.0.1:%d/other?x=1",
		 h->ls.port);
	req.url = url2;
	t0 = tu_mono_ms();
	assert_int_equal(http_perform(&req, &r), -ETIMEDOUT);
	assert_true(tu_mono_ms() - t0 < 50);
	assert_non_null(strstr(r.error, "not sent"));
	assert_int_equal(atomic_load(&h->ls.nreq), n);
	http_get_stats(&s1);
	assert_int_equal(s1.paused, s0.paused + 1);
	/* another endpoint is asked */
	srv_url(ok, "/", url2, sizeof(url2));
	assert_int_equal(http_perform(&req, &r), 0);
	assert_int_equal(r.status, 200);
	/* a request without the flag is sent (the engine's, credentials') */
	req.url = url;
	req.pause_unreachable = false;
	assert_int_equal(http_perform(&req, &r), -ETIMEDOUT);
	assert_int_equal(atomic_load(&h->ls.nreq), n + 1);
	http_get_stats(&s0);
	assert_int_equal(s0.paused, s1.paused);
	/* a redirect to the dead host: the redirecting one is not paused */
	snprintf(rd->location, sizeof(rd->location), "%s", url);
	srv_url(rd, "/r", urlr, sizeof(urlr));
	req.url = urlr;
	req.pause_unreachable = true;
	req.follow_location = true;
	assert_int_equal(http_perform(&req, &r), -ETIMEDOUT);
	assert_int_equal(http_perform(&req, &r), -ETIMEDOUT);
	assert_int_equal(atomic_load(&rd->ls.nreq), 2);
	/* after one timeout the endpoint is asked again */
	req.url = url;
	req.follow_location = false;
	h->mode = SRV_BODY;
	tu_sleep_ms(350);
	n = atomic_load(&h->ls.nreq);
	assert_int_equal(http_perform(&req, &r), 0);
	assert_int_equal(atomic_load(&h->ls.nreq), n + 1);
	http_resp_release(&r);
	srv_stop(rd);
	srv_stop(ok);
	srv_stop(h);
}

/* refused connections through the retries pause the endpoint too */
static void test_http_pause_refused(void **state)
{
	struct http_resp r;
	char url[128];
	struct http_req req = {.url = url,
			       .timeout_ms = 300,
			       .retries = 0,
			       .pause_unreachable = true};
	struct http_stats s0, s1;

	(void)state;
	http_pause_forget();
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", closed_port());
	http_resp_init(&r);
	assert_int_equal(http_perform(&req, &r), -ECONNREFUSED);
	assert_int_equal(r.attempts, 1);
	http_get_stats(&s0);
	assert_int_equal(http_perform(&req, &r), -ECONNREFUSED);
	assert_int_equal(r.attempts, 0);
	assert_int_equal(http_perform(&req, &r), -ECONNREFUSED);
	http_get_stats(&s1);
	assert_int_equal(s1.paused, s0.paused + 2);
	http_pause_forget();
	assert_int_equal(http_perform(&req, &r), -ECONNREFUSED);
	assert_int_equal(r.attempts, 1);
	http_resp_release(&r);
}

static void test_http_perform_body_over_cap(void **state)
{
	struct srv *s = srv_start(SRV_BIG);
	struct http_resp r;
	char url[128];
	struct http_req req = {
		.url = url, .timeout_ms = 3000, .retries = 2, .max_body = 1000};

	(void)state;
	s->big_len = 200000;
	srv_url(s, "/big", url, sizeof(url));
	http_resp_init(&r);
	assert_int_equal(http_perform(&req, &r), -EFBIG);
	assert_int_equal(r.attempts, 1);
	assert_true(r.body.len <= 1000);
	assert_non_null(strstr(r.error, "over 1000 bytes"));
	/* exactly at the cap is fine */
	s->big_len = 1000;
	assert_int_equal(http_perform(&req, &r), 0);
	assert_int_equal(r.body.len, 1000);
	http_resp_release(&r);
	srv_stop(s);
}

static int always_abort(void)
{
	return 1;
}

static void test_http_perform_abort_check(void **state)
{
	struct srv *s = srv_start(SRV_HANG);
	struct http_resp r;
	char url[128];
	struct http_req req = {.url = url, .timeout_ms = 5000, .retries = 2};
	int64_t t0;

	(void)state;
	srv_url(s, "/hang", url, sizeof(url));
	http_resp_init(&r);
	http_set_abort_check(always_abort);
	t0 = tu_mono_ms();
	assert_int_equal(http_perform(&req, &r), -EINTR);
	assert_true(tu_mono_ms() - t0 < 2000);
	assert_int_equal(r.attempts, 1);
	http_set_abort_check(NULL);
	http_resp_release(&r);
	srv_stop(s);
}

static void test_http_perform_head(void **state)
{
	struct srv *s = srv_start(SRV_BODY);
	struct http_resp r;
	char url[128];
	struct http_req req = {
		.method = "HEAD", .url = url, .timeout_ms = 3000};

	(void)state;
	srv_url(s, "/h", url, sizeof(url));
	http_resp_init(&r);
	assert_int_equal(http_perform(&req, &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 0);
	assert_int_equal(r.content_length, 8);
	assert_non_null(strstr(s->ls.last_req, "HEAD /h HTTP/1.1"));
	http_resp_release(&r);
	srv_stop(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_curl_to_errno_table),
		cmocka_unit_test(test_http_status_to_errno_table),
		cmocka_unit_test(test_http_redact_url_strips_secrets),
		cmocka_unit_test(test_http_perform_get_body_and_headers),
		cmocka_unit_test(test_http_perform_basic_auth_not_in_errors),
		cmocka_unit_test(test_http_perform_retries_503_then_200),
		cmocka_unit_test(test_http_perform_retries_exhausted),
		cmocka_unit_test(test_http_perform_no_retry_for_post_or_404),
		cmocka_unit_test(
			test_http_perform_unusable_ca_file_not_retried),
		cmocka_unit_test(test_http_ca_file_check),
		cmocka_unit_test(test_http_perform_hung_server_times_out),
		cmocka_unit_test(test_http_perform_sink_gets_2xx_body),
		cmocka_unit_test(test_http_perform_sink_stops),
		cmocka_unit_test(test_http_perform_sink_deadline),
		cmocka_unit_test(
			test_http_perform_refused_retries_within_deadline),
		cmocka_unit_test(test_http_pause_unreachable),
		cmocka_unit_test(test_http_pause_refused),
		cmocka_unit_test(test_http_perform_body_over_cap),
		cmocka_unit_test(test_http_perform_abort_check),
		cmocka_unit_test(test_http_perform_head),
	};

	return cmocka_run_group_tests(tests, loopsrv_group_setup,
				      loopsrv_group_teardown);
}
