/*
 * Tests for backends/s3.c against a loopback HTTP server run by this file
 * (a thread on 127.0.0.1:0 answering a queue of canned responses, one
 * request per connection, recording every request): paging with
 * continuation tokens, marker objects, 404 -> ENOENT, stat of directories,
 * 416 -> EOF, read-ahead, 503 storms -> EIO after retries, remove,
 * signing headers, credentials and URI checks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "backends/http.h"
#include "util/log.h"
#include "fakes/loopsrv.h"

#define MAX_Q	  16
#define REQ_MAX	  65536
#define BODY_MAX  (1 << 20)
#define MAX_NAMES 32

struct canned {
	int status;
	const char *headers; /* extra "Name: value\r\n" lines, or NULL */
	const char *body;    /* NULL: empty */
	size_t body_len;     /* 0: strlen(body) */
};

static struct {
	pthread_mutex_t lock;
	int lfd, port;
	pthread_t th;
	struct canned q[MAX_Q];
	size_t nq, next;
	char reqs[MAX_Q][REQ_MAX]; /* head + body of each request */
	size_t nreq;
	size_t ntotal; /* requests served, also past MAX_Q */
	size_t nsent;  /* answers sent completely */
	/* when set, GETs are answered from this object (Range honoured) */
	const char *blob;
	size_t blob_len;
	unsigned delay_ms; /* before each answer */
	/* an open-ended ranged GET ("bytes=N-", the stream of s3.c) of the
	 * blob: its body cut after cut_open bytes (0: whole), then a pause of
	 * stall_ms before the connection closes */
	size_t cut_open;
	unsigned stall_ms;
	bool threaded; /* one thread per connection (a stream holds one) */
} srv = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		c += w;
		n -= (size_t)w;
	}
}

/* with srv.lock held: srv.blob's answer to `req` (a ranged GET) */
static struct canned blob_answer(const char *req, char *hdr, size_t hdrsz)
{
	const char *r = strcasestr(req, "\r\nRange: bytes=");
	unsigned long long a = 0, b = srv.blob_len ? srv.blob_len - 1 : 0;
	char *end;

	if (r) {
		a = strtoull(r + 15, &end, 10);
		if (*end == '-' && end[1] >= '0' && end[1] <= '9')
			b = strtoull(end + 1, NULL, 10);
	}
	if (a >= srv.blob_len)
		return (struct canned){416, NULL,
				       "<Error><Code>InvalidRange"
				       "</Code></Error>",
				       0};
	if (b >= srv.blob_len)
		b = srv.blob_len - 1;
	snprintf(hdr, hdrsz, "Content-Range: bytes %llu-%llu/%zu\r\n", a, b,
		 srv.blob_len);
	return (struct canned){206, hdr, srv.blob + a, (size_t)(b - a + 1)};
}

static void serve_one(int cfd)
{
	char req[REQ_MAX], head[512], range_hdr[128];
	size_t len = 0, need = 0;
	unsigned delay;
	char *eoh = NULL;
	struct canned c = {.status = 500, .body = "queue empty"};
	bool is_head, open_range = false;
	size_t cut = 0;
	unsigned stall = 0;

	while (len < sizeof(req) - 1) {
		ssize_t r = recv(cfd, req + len, sizeof(req) - 1 - len, 0);

		if (r <= 0)
			break;
		len += (size_t)r;
		req[len] = '\0';
		if (!eoh && (eoh = strstr(req, "\r\n\r\n"))) {
			char *cl = strcasestr(req, "\r\nContent-Length:");

			need = (size_t)(eoh + 4 - req);
			if (cl && cl < eoh)
				need += strtoul(cl + 17, NULL, 10);
		}
		if (eoh && len >= need)
			break;
	}
	req[len] = '\0';
	is_head = !strncmp(req, "HEAD ", 5);
	pthread_mutex_lock(&srv.lock);
	if (srv.nreq < MAX_Q)
		memcpy(srv.reqs[srv.nreq++], req, len + 1);
	srv.ntotal++;
	if (srv.blob) {
		const char *r = strcasestr(req, "\r\nRange: bytes=");
		const char *dash = r ? strchr(r + 15, '-') : NULL;

		open_range = dash && dash[1] == '\r';
		c = blob_answer(req, range_hdr, sizeof(range_hdr));
	} else if (srv.next < srv.nq)
		c = srv.q[srv.next++];
	delay = srv.delay_ms;
	if (open_range) {
		cut = srv.cut_open;
		stall = srv.stall_ms;
	}
	pthread_mutex_unlock(&srv.lock);
	if (delay)
		usleep(delay * 1000);
	if (c.body && !c.body_len)
		c.body_len = strlen(c.body);
	snprintf(head, sizeof(head),
		 "HTTP/1.1 %d X\r\nContent-Length: %zu\r\n%sConnection: "
		 "close\r\n\r\n",
		 c.status, c.body_len, c.headers ? c.headers : "");
	send_all(cfd, head, strlen(head));
	if (!is_head && c.body_len)
		send_all(cfd, c.body,
			 cut && cut < c.body_len ? cut : c.body_len);
	if (cut && stall)
		usleep(stall * 1000);
	pthread_mutex_lock(&srv.lock);
	srv.nsent++;
	pthread_mutex_unlock(&srv.lock);
}

/* wait until every request received was answered (srv.blob is unused) */
static void srv_quiesce(void)
{
	for (int i = 0; i < 500; i++) {
		bool idle;

		pthread_mutex_lock(&srv.lock);
		idle = srv.nsent == srv.ntotal;
		pthread_mutex_unlock(&srv.lock);
		if (idle)
			return;
		usleep(10000);
	}
}

static void *serve_thread(void *arg)
{
	int cfd = (int)(intptr_t)arg;

	serve_one(cfd);
	close(cfd);
	return NULL;
}

static void *srv_main(void *arg)
{
	(void)arg;
	for (;;) {
		int cfd = accept(srv.lfd, NULL, NULL);
		pthread_t th;
		bool threaded;

		if (cfd < 0)
			return NULL;
		pthread_mutex_lock(&srv.lock);
		threaded = srv.threaded;
		pthread_mutex_unlock(&srv.lock);
		if (threaded && pthread_create(&th, NULL, serve_thread,
					       (void *)(intptr_t)cfd) == 0) {
			pthread_detach(th);
			continue;
		}
		serve_one(cfd);
		close(cfd);
	}
}

static int srv_start(void **state)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	int one = 1;

	(void)state;
	log_setup(true, false, false);
	assert_int_equal(http_global_init(), 0);
	srv.lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(srv.lfd >= 0);
	setsockopt(srv.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(srv.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(srv.lfd, 16), 0);
	assert_int_equal(getsockname(srv.lfd, (struct sockaddr *)&sa, &sl), 0);
	srv.port = ntohs(sa.sin_port);
	assert_int_equal(pthread_create(&srv.th, NULL, srv_main, NULL), 0);
	return 0;
}

static int srv_stop(void **state)
{
	(void)state;
	shutdown(srv.lfd, SHUT_RDWR);
	close(srv.lfd);
	pthread_join(srv.th, NULL);
	http_global_cleanup();
	return 0;
}

static void q_reset(void)
{
	pthread_mutex_lock(&srv.lock);
	srv.nq = srv.next = srv.nreq = srv.ntotal = srv.nsent = 0;
	srv.blob = NULL;
	srv.blob_len = 0;
	srv.delay_ms = 0;
	srv.cut_open = 0;
	srv.stall_ms = 0;
	srv.threaded = false;
	pthread_mutex_unlock(&srv.lock);
}

static void q_push(int status, const char *headers, const char *body)
{
	pthread_mutex_lock(&srv.lock);
	assert_true(srv.nq < MAX_Q);
	srv.q[srv.nq++] = (struct canned){status, headers, body, 0};
	pthread_mutex_unlock(&srv.lock);
}

static size_t n_requests(void)
{
	size_t n;

	pthread_mutex_lock(&srv.lock);
	n = srv.nreq;
	pthread_mutex_unlock(&srv.lock);
	return n;
}

/* the request line of request i, e.g. "GET /ckpt?... HTTP/1.1" */
static const char *req_line(size_t i, char *out, size_t outsz)
{
	const char *r = srv.reqs[i];
	size_t n = strcspn(r, "\r\n");

	snprintf(out, outsz, "%.*s", (int)n, r);
	return out;
}

static char endpoint[64];
static char cred_ak[] = "AKIDTEST";
static char cred_sk[] = "SECRETKEY-DO-NOT-LEAK";
static char s_region[] = "us-east-1", s_badregion[] = "bad/region";
static char s_token[] = "TOKEN123", s_ftp[] = "ftp://x";

static struct stfs_conf mkconf(void)
{
	snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%d", srv.port);
	return (struct stfs_conf){
		.endpoint = endpoint,
		.region = s_region,
		.timeout_ms = 3000,
		.connect_timeout_ms = 1000,
		.retries = 2,
		.storage_ttl_ms = 5000,
		.access_key = cred_ak,
		.secret_key = cred_sk,
	};
}

struct names {
	char name[MAX_NAMES][128];
	int type[MAX_NAMES];
	uint64_t size[MAX_NAMES];
	size_t n;
};

static int collect(void *cookie, const char *name, const struct be_attr *a)
{
	struct names *nm = cookie;

	assert_true(nm->n < MAX_NAMES);
	snprintf(nm->name[nm->n], sizeof(nm->name[0]), "%s", name);
	nm->type[nm->n] = a->type;
	nm->size[nm->n] = a->size;
	nm->n++;
	return 0;
}

#define LIST_HEAD                                                \
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>"             \
	"<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/" \
	"2006-03-01/\">"

static const char page1[] =
	LIST_HEAD "<IsTruncated>true</IsTruncated>"
		  "<NextContinuationToken>a+b/c=</NextContinuationToken>"
		  "<Contents><Key>ns/123/</Key><Size>0</Size></Contents>"
		  "<Contents><Key>ns/123/1-42-1-7.ser</Key><Size>36</Size>"
		  "<LastModified>2026-11-30T10:09:40.000Z</LastModified>"
		  "</Contents>"
		  "<CommonPrefixes><Prefix>ns/123/sub/</Prefix>"
		  "</CommonPrefixes></ListBucketResult>";
static const char page2[] =
	LIST_HEAD "<IsTruncated>false</IsTruncated>"
		  "<Contents><Key>ns/123/2-42-1-7.ser</Key><Size>100</Size>"
		  "</Contents>"
		  "<Contents><Key>ns/123/../evil</Key><Size>1</Size></Contents>"
		  "<Contents><Key>other/outside</Key><Size>1</Size></Contents>"
		  "</ListBucketResult>";
static const char empty_list[] =
	LIST_HEAD "<IsTruncated>false</IsTruncated></ListBucketResult>";

static void test_s3_list_pages_with_token(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	struct names nm = {.n = 0};
	char line[512];

	(void)state;
	q_reset();
	q_push(200, NULL, page1);
	q_push(200, NULL, page2);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	assert_int_equal(be_list(be, "123", 0, collect, &nm), 0);
	assert_int_equal(n_requests(), 2);
	assert_string_equal(req_line(0, line, sizeof(line)),
			    "GET /ckpt?delimiter=%2F&list-type=2&max-keys=1000&"
			    "prefix=ns%2F123%2F HTTP/1.1");
	assert_string_equal(req_line(1, line, sizeof(line)),
			    "GET /ckpt?continuation-token=a%2Bb%2Fc%3D&"
			    "delimiter=%2F&list-type=2&max-keys=1000&"
			    "prefix=ns%2F123%2F HTTP/1.1");
	/* marker, "..", and keys outside the prefix are not reported */
	assert_int_equal(nm.n, 3);
	assert_string_equal(nm.name[0], "1-42-1-7.ser");
	assert_int_equal(nm.type[0], BE_FILE);
	assert_int_equal(nm.size[0], 36);
	assert_string_equal(nm.name[1], "sub");
	assert_int_equal(nm.type[1], BE_DIR);
	assert_string_equal(nm.name[2], "2-42-1-7.ser");
	assert_int_equal(nm.size[2], 100);
	/* signed, with the payload header; the secret is never sent */
	assert_non_null(strcasestr(srv.reqs[0], "\r\nAuthorization: "
						"AWS4-HMAC-SHA256 Credential="
						"AKIDTEST/"));
	assert_non_null(strcasestr(srv.reqs[0], "\r\nx-amz-content-sha256: "
						"UNSIGNED-PAYLOAD"));
	assert_null(strstr(srv.reqs[0], cred_sk));
	be_close(be);
}

static void test_s3_list_recursive_and_missing(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	struct names nm = {.n = 0};
	char line[512];
	static const char rec[] =
		LIST_HEAD "<IsTruncated>false</IsTruncated>"
			  "<Contents><Key>ns/a/</Key><Size>0</Size></Contents>"
			  "<Contents><Key>ns/a/3/x.ser</Key><Size>5</Size>"
			  "</Contents></ListBucketResult>";

	(void)state;
	q_reset();
	q_push(200, NULL, rec);
	q_push(200, NULL, empty_list);
	q_push(200, NULL, empty_list);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3a://ckpt/ns", &c, &be), 0);
	assert_int_equal(be_list(be, "", BE_LIST_RECURSIVE, collect, &nm), 0);
	assert_string_equal(req_line(0, line, sizeof(line)),
			    "GET /ckpt?list-type=2&max-keys=1000&prefix=ns%2F "
			    "HTTP/1.1");
	assert_int_equal(nm.n, 1);
	assert_string_equal(nm.name[0], "a/3/x.ser");
	/* an empty listing: missing dir, but an empty root */
	assert_int_equal(be_list(be, "nope", 0, collect, &nm), -ENOENT);
	assert_int_equal(be_list(be, "", 0, collect, &nm), 0);
	assert_int_equal(be_list(be, "../x", 0, collect, &nm), -EINVAL);
	be_close(be);
}

/* names with '..', '.', empty components or control characters: skipped */
static void test_s3_list_hostile_names_skipped(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	struct names nm = {.n = 0};
	static const char rec[] = LIST_HEAD
		"<IsTruncated>false</IsTruncated>"
		"<Contents><Key>ns/1/../x</Key><Size>1</Size></Contents>"
		"<Contents><Key>ns/1/./y</Key><Size>1</Size></Contents>"
		"<Contents><Key>ns/1//z</Key><Size>1</Size></Contents>"
		"<Contents><Key>ns/1/c\001d</Key><Size>1</Size></Contents>"
		"<Contents><Key>ns/1/n\nl</Key><Size>1</Size></Contents>"
		"<Contents><Key>ns/1/d\x7f</Key><Size>1</Size></Contents>"
		"<Contents><Key>ns/1/a b+c=%*~\xc3\xa9..</Key><Size>1</Size>"
		"</Contents></ListBucketResult>";
	static const char flat[] = LIST_HEAD
		"<IsTruncated>false</IsTruncated>"
		"<Contents><Key>ns/1/t\tx</Key><Size>1</Size></Contents>"
		"<Contents><Key>ns/1/ok</Key><Size>1</Size></Contents>"
		"<CommonPrefixes><Prefix>ns/1/../</Prefix>"
		"</CommonPrefixes><CommonPrefixes><Prefix>ns/1/e\001/"
		"</Prefix></CommonPrefixes><CommonPrefixes><Prefix>"
		"ns/1/sub/</Prefix></CommonPrefixes></ListBucketResult>";

	(void)state;
	q_reset();
	q_push(200, NULL, rec);
	q_push(200, NULL, flat);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	assert_int_equal(be_list(be, "", BE_LIST_RECURSIVE, collect, &nm), 0);
	assert_int_equal(nm.n, 1);
	assert_string_equal(nm.name[0], "1/a b+c=%*~\xc3\xa9..");
	nm.n = 0;
	assert_int_equal(be_list(be, "1", 0, collect, &nm), 0);
	assert_int_equal(nm.n, 2);
	assert_string_equal(nm.name[0], "ok");
	assert_string_equal(nm.name[1], "sub");
	be_close(be);
}

static void test_s3_stat_file_dir_missing(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	struct be_attr a;
	char line[512];
	static const char one[] =
		LIST_HEAD "<IsTruncated>true</IsTruncated>"
			  "<Contents><Key>ns/d/x</Key><Size>1</Size></Contents>"
			  "</ListBucketResult>";

	(void)state;
	q_reset();
	q_push(200,
	       "Last-Modified: Mon, 30 Nov 2026 10:09:40 GMT\r\n"
	       "Content-Type: binary/octet-stream\r\n",
	       NULL);
	q_push(404, NULL, NULL);
	q_push(200, NULL, one);
	q_push(404, NULL, NULL);
	q_push(200, NULL, empty_list);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	/* HEAD sends a Content-Length of 0 here: a zero-byte file */
	assert_int_equal(be_stat(be, "f", &a), 0);
	assert_int_equal(a.type, BE_FILE);
	assert_int_equal(a.mtime_ns, 1796033380LL * 1000000000LL);
	assert_string_equal(req_line(0, line, sizeof(line)),
			    "HEAD /ckpt/ns/f HTTP/1.1");
	assert_int_equal(be_stat(be, "d", &a), 0);
	assert_int_equal(a.type, BE_DIR);
	assert_string_equal(req_line(2, line, sizeof(line)),
			    "GET /ckpt?list-type=2&max-keys=1&prefix=ns%2Fd%2F "
			    "HTTP/1.1");
	assert_int_equal(be_stat(be, "gone", &a), -ENOENT);
	assert_int_equal(n_requests(), 5);
	/* the namespace root needs no request */
	assert_int_equal(be_stat(be, "", &a), 0);
	assert_int_equal(a.type, BE_DIR);
	assert_int_equal(n_requests(), 5);
	be_close(be);
}

static void test_s3_read_eof_and_readahead(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	char buf[64];
	char line[512];
	static const char data[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	static const char err416[] =
		"<Error><Code>InvalidRange</Code><Message>The requested range "
		"is not satisfiable</Message></Error>";

	(void)state;
	q_reset();
	q_push(206, "Content-Range: bytes 0-35/36\r\n", data);
	q_push(416, NULL, err416);
	q_push(404, NULL,
	       "<Error><Code>NoSuchKey</Code><Message>x</Message></Error>");
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	assert_int_equal(be_read(be, "k.ser", buf, 10, 0), 10);
	assert_memory_equal(buf, "0123456789", 10);
	assert_string_equal(req_line(0, line, sizeof(line)),
			    "GET /ckpt/ns/k.ser HTTP/1.1");
	assert_non_null(strcasestr(srv.reqs[0], "\r\nRange: bytes=0-131071"));
	/* served from the read-ahead window: no new request */
	assert_int_equal(be_read(be, "k.ser", buf, 20, 10), 20);
	assert_memory_equal(buf, "abcdefghijklmnopqrst", 20);
	assert_int_equal(be_read(be, "k.ser", buf, 64, 30), 6);
	assert_memory_equal(buf, "uvwxyz", 6);
	assert_int_equal(be_read(be, "k.ser", buf, 64, 36), 0);
	assert_int_equal(n_requests(), 1);
	/* another key past its end: 416 is EOF, not an error */
	assert_int_equal(be_read(be, "other", buf, 10, 1000), 0);
	assert_non_null(strcasestr(srv.reqs[1], "\r\nRange: bytes=1000-"));
	assert_int_equal(be_read(be, "missing", buf, 10, 0), -ENOENT);
	assert_int_equal(be_read(be, "", buf, 10, 0), -EISDIR);
	assert_int_equal(n_requests(), 3);
	be_close(be);
}

static size_t n_total(void)
{
	size_t n;

	pthread_mutex_lock(&srv.lock);
	n = srv.ntotal;
	pthread_mutex_unlock(&srv.lock);
	return n;
}

/* a recognisable object: byte i is a function of i */
static char *make_blob(size_t n)
{
	char *b = malloc(n);

	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		b[i] = (char)((i * 7 + i / 251) & 0xff);
	return b;
}

/* the server answers ranged GETs of any key from `blob` (nothing queued) */
static void serve_blob(const char *blob, size_t len)
{
	q_reset();
	pthread_mutex_lock(&srv.lock);
	srv.blob = blob;
	srv.blob_len = len;
	pthread_mutex_unlock(&srv.lock);
}

/* wait up to 3 s until the server answered `n` requests */
static void wait_total(size_t n)
{
	for (int i = 0; i < 300 && n_total() < n; i++)
		usleep(10000);
	usleep(50000); /* and let the answers land in the cache */
}

/* how many recorded requests asked for an open-ended range ("N-") */
static size_t n_open(void)
{
	size_t n = 0;

	pthread_mutex_lock(&srv.lock);
	for (size_t i = 0; i < srv.nreq; i++) {
		const char *r = strcasestr(srv.reqs[i], "\r\nRange: bytes=");
		const char *dash = r ? strchr(r + 15, '-') : NULL;

		n += dash && dash[1] == '\r';
	}
	pthread_mutex_unlock(&srv.lock);
	return n;
}

/* whether one recorded request asked for exactly `range` */
static bool asked(const char *range)
{
	char want[96];
	bool found = false;

	snprintf(want, sizeof(want), "\r\nRange: bytes=%s\r\n", range);
	pthread_mutex_lock(&srv.lock);
	for (size_t i = 0; i < srv.nreq && !found; i++)
		found = strcasestr(srv.reqs[i], want) != NULL;
	pthread_mutex_unlock(&srv.lock);
	return found;
}

struct reader {
	struct backend *be;
	const char *path;
	off_t off;
	size_t size;
	char buf[4096];
	ssize_t got;
	pthread_t th;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	r->got = be_read(r->be, r->path, r->buf, r->size, r->off);
	return NULL;
}

/* readers that need a window being fetched wait for it: one GET in all */
static void test_s3_read_concurrent_readers_share_one_fetch(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	size_t blen = 64 << 10;
	char *blob = make_blob(blen);
	struct reader rd[4] = {
		{.off = 0, .size = 4096},
		{.off = 1000, .size = 4096},
		{.off = 30000, .size = 4096},
		{.off = (off_t)blen - 100, .size = 4096},
	};

	(void)state;
	q_reset();
	pthread_mutex_lock(&srv.lock);
	srv.blob = blob;
	srv.blob_len = blen;
	srv.delay_ms = 300;
	pthread_mutex_unlock(&srv.lock);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	for (int i = 0; i < 4; i++) {
		rd[i].be = be;
		rd[i].path = "big.ser";
		assert_int_equal(
			pthread_create(&rd[i].th, NULL, reader_main, &rd[i]),
			0);
		if (i == 0)
			usleep(100000); /* the first one's GET is under way */
	}
	for (int i = 0; i < 4; i++)
		pthread_join(rd[i].th, NULL);
	assert_int_equal(n_total(), 1);
	assert_true(asked("0-131071"));
	for (int i = 0; i < 3; i++) {
		assert_int_equal(rd[i].got, 4096);
		assert_memory_equal(rd[i].buf, blob + rd[i].off, 4096);
	}
	assert_int_equal(rd[3].got, 100); /* short at the end */
	assert_memory_equal(rd[3].buf, blob + blen - 100, 100);
	be_close(be);
	srv_quiesce();
	free(blob);
}

/*
 * A sequential reader: 128 KiB, then 256 KiB (a continuation), and reading
 * that one prefetches the next two windows (512 KiB, 1 MiB) in the
 * background, in one GET for the rest of the object (the stream of README
 * "Performance"), so the rest of the object is read without a GET.
 */
static void test_s3_read_sequential_prefetches(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	size_t blen = (128 << 10) + (256 << 10) + (512 << 10) + 1000, off;
	char *blob = make_blob(blen);
	char *buf = malloc(64 << 10);

	(void)state;
	assert_non_null(buf);
	serve_blob(blob, blen);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	for (off = 0; off < (384 << 10); off += 64 << 10) {
		assert_int_equal(be_read(be, "big", buf, 64 << 10, (off_t)off),
				 64 << 10);
		assert_memory_equal(buf, blob + off, 64 << 10);
	}
	wait_total(3);
	assert_int_equal(n_total(), 3);
	assert_true(asked("0-131071"));
	assert_true(asked("131072-393215"));
	assert_true(asked("393216-"));
	for (; off < blen; off += 64 << 10) {
		size_t want = blen - off < (64 << 10) ? blen - off : 64 << 10;

		assert_int_equal(be_read(be, "big", buf, 64 << 10, (off_t)off),
				 (ssize_t)want);
		assert_memory_equal(buf, blob + off, want);
	}
	assert_int_equal(be_read(be, "big", buf, 10, (off_t)blen), 0);
	usleep(100000);
	assert_int_equal(n_total(), 3); /* the end is known: no more GETs */
	be_close(be);
	srv_quiesce();
	free(buf);
	free(blob);
}

/*
 * A long sequential read (README "Performance"): the windows it is done
 * with go as it moves on, their buffers refilled for the windows ahead,
 * and every byte is right, through the growing windows and the 8 MiB ones
 * in reused buffers, twice.  The second pass from the start asks for the
 * first window again: it was dropped behind the reader, not kept until
 * the budget filled up.
 */
static void test_s3_read_long_stream_reuses_windows(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	size_t blen = ((size_t)24 << 20) + 1000, off, before;
	char *blob = make_blob(blen);
	char *buf = malloc(256 << 10);

	(void)state;
	assert_non_null(buf);
	serve_blob(blob, blen);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	for (int pass = 0; pass < 2; pass++) {
		before = n_total();
		for (off = 0; off < blen; off += 256 << 10) {
			size_t want = blen - off < (256 << 10) ? blen - off
							       : 256 << 10;

			assert_int_equal(
				be_read(be, "big", buf, 256 << 10, (off_t)off),
				(ssize_t)want);
			assert_memory_equal(buf, blob + off, want);
		}
		assert_true(n_total() > before);
	}
	be_close(be);
	srv_quiesce();
	free(buf);
	free(blob);
}

/* the open-ended GETs of the blob are cut after `cut` bytes, held
 * `stall_ms` (srv.cut_open) */
static void serve_blob_cut(const char *blob, size_t len, size_t cut,
			   unsigned stall_ms)
{
	serve_blob(blob, len);
	pthread_mutex_lock(&srv.lock);
	srv.cut_open = cut;
	srv.stall_ms = stall_ms;
	pthread_mutex_unlock(&srv.lock);
}

/* read `blob` from `off` to its end in 64 KiB reads: every byte right */
static void read_rest(struct backend *be, const char *blob, size_t blen,
		      size_t off, char *buf)
{
	for (; off < blen; off += 64 << 10) {
		size_t want = blen - off < (64 << 10) ? blen - off : 64 << 10;

		assert_int_equal(be_read(be, "big", buf, 64 << 10, (off_t)off),
				 (ssize_t)want);
		assert_memory_equal(buf, blob + off, want);
	}
}

/*
 * The stream of a sequential reader (README "Performance") dropped in the
 * middle of a window: the windows it completed hold the right bytes, the
 * one it was filling is asked for again alone, and every byte read is
 * the object's.
 */
static void test_s3_read_stream_cut_midway(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	size_t blen = ((size_t)4 << 20) + 1000;
	char *blob = make_blob(blen);
	char *buf = malloc(64 << 10);

	(void)state;
	assert_non_null(buf);
	serve_blob_cut(blob, blen, 700000, 0); /* inside a window */
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	read_rest(be, blob, blen, 0, buf);
	/* streams there were, each cut: the bytes above are the windows'
	 * own GETs after each cut */
	assert_true(n_open() >= 1);
	be_close(be);
	srv_quiesce();
	free(buf);
	free(blob);
}

/*
 * A stream that stalls: the read waiting for its window fails with
 * ETIMEDOUT at the deadline (plus the margin), not when the server wakes
 * up, and once the server answers again the same bytes are read right.
 */
static void test_s3_read_stream_stall_deadline(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	size_t blen = ((size_t)2 << 20) + 1000, off;
	char *blob = make_blob(blen);
	char *buf = malloc(64 << 10);
	int64_t t0;
	ssize_t got = 0;

	(void)state;
	assert_non_null(buf);
	c.timeout_ms = 1000;
	serve_blob_cut(blob, blen, 700000, 2500);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	/* the windows before the stall come right, then one read fails */
	for (off = 0; off < blen; off += 64 << 10) {
		t0 = mono_ms();
		got = be_read(be, "big", buf, 64 << 10, (off_t)off);
		if (got < 0)
			break;
		assert_int_equal(got, 64 << 10);
		assert_memory_equal(buf, blob + off, 64 << 10);
	}
	assert_true(n_open() >= 1);
	assert_int_equal(got, -ETIMEDOUT);
	assert_true(mono_ms() - t0 < 2300); /* 1000 ms + the margin */
	pthread_mutex_lock(&srv.lock);
	srv.cut_open = 0;
	srv.stall_ms = 0;
	pthread_mutex_unlock(&srv.lock);
	usleep(2200000); /* the stall, and the second's memo of a timeout */
	read_rest(be, blob, blen, off, buf);
	be_close(be);
	srv_quiesce();
	free(buf);
	free(blob);
}

/*
 * A stream reserves the windows queued one after the other from where it
 * is, not those of another reader of the same object further on: that
 * reader's windows are fetched at once while the first one's stream
 * waits for its reader.
 */
static void test_s3_read_stream_other_reader_not_held(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	size_t blen = (size_t)48 << 20, off;
	char *blob = make_blob(blen);
	char *buf = malloc(64 << 10);
	int64_t t0, slowest = 0;

	(void)state;
	assert_non_null(buf);
	serve_blob(blob, blen);
	pthread_mutex_lock(&srv.lock);
	srv.threaded = true;
	pthread_mutex_unlock(&srv.lock);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	/* reader one: its stream runs, fills its windows and waits */
	for (off = 0; off < ((size_t)1 << 20); off += 64 << 10) {
		assert_int_equal(be_read(be, "big", buf, 64 << 10, (off_t)off),
				 64 << 10);
		assert_memory_equal(buf, blob + off, 64 << 10);
	}
	usleep(100000);
	/* reader two, further on (past the 8 MiB the first one's stream
	 * reaches with the windows it may prefetch) */
	for (off = (size_t)40 << 20; off < ((size_t)42 << 20);
	     off += 64 << 10) {
		t0 = mono_ms();
		assert_int_equal(be_read(be, "big", buf, 64 << 10, (off_t)off),
				 64 << 10);
		if (mono_ms() - t0 > slowest)
			slowest = mono_ms() - t0;
		assert_memory_equal(buf, blob + off, 64 << 10);
	}
	assert_true(slowest < 500); /* not held until the stream's 1 s idle */
	be_close(be);
	srv_quiesce();
	free(buf);
	free(blob);
}

/*
 * readahead_max_mb is one budget for every open file of every backend
 * (README "Memory"): with 1 MiB, a sequential reader gets its 512 KiB
 * prefetch (896 KiB in all) but not the 1 MiB one after it, and a second
 * backend reading meanwhile fetches what its reader needs and prefetches
 * nothing, since the first one holds the budget.
 */
static void test_s3_readahead_global_budget(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *a, *b;
	size_t blen = (128 << 10) + (256 << 10) + (512 << 10) + 1000, off;
	char *blob = make_blob(blen);
	char *buf = malloc(64 << 10);

	(void)state;
	assert_non_null(buf);
	c.readahead_max_mb = 1;
	q_reset();
	pthread_mutex_lock(&srv.lock);
	srv.blob = blob;
	srv.blob_len = blen;
	pthread_mutex_unlock(&srv.lock);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &a), 0);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &b), 0);
	for (off = 0; off < (384 << 10); off += 64 << 10) {
		assert_int_equal(be_read(a, "big", buf, 64 << 10, (off_t)off),
				 64 << 10);
		assert_memory_equal(buf, blob + off, 64 << 10);
	}
	wait_total(3);
	usleep(200000);
	assert_int_equal(n_total(), 3);
	/* the stream of the 512 KiB window; the 1 MiB one never comes */
	assert_true(asked("393216-"));
	assert_false(asked("917504-"));
	for (off = 0; off < (384 << 10); off += 64 << 10) {
		assert_int_equal(be_read(b, "big", buf, 64 << 10, (off_t)off),
				 64 << 10);
		assert_memory_equal(buf, blob + off, 64 << 10);
	}
	usleep(200000);
	assert_int_equal(n_total(), 5); /* b's two windows, no prefetch */
	/* what a reader needs past the budget is still read, and right */
	assert_int_equal(be_read(b, "big", buf, 1000, (off_t)(blen - 1000)),
			 1000);
	assert_memory_equal(buf, blob + blen - 1000, 1000);
	be_close(a);
	be_close(b);
	srv_quiesce();
	free(buf);
	free(blob);
}

/* non-adjacent reads fetch small windows and never prefetch */
static void test_s3_read_random_no_prefetch(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	size_t blen = 1 << 20;
	char *blob = make_blob(blen);
	char buf[4096];
	static const off_t offs[] = {0, 500000, 300000, 20000};

	(void)state;
	serve_blob(blob, blen);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(be_read(be, "r", buf, sizeof(buf), offs[i]),
				 (ssize_t)sizeof(buf));
		assert_memory_equal(buf, blob + offs[i], sizeof(buf));
	}
	usleep(200000);
	/* the last one was served from the first window */
	assert_int_equal(n_total(), 3);
	assert_true(asked("500000-631071"));
	/* clipped to where the window at 500000 starts */
	assert_true(asked("300000-431071"));
	be_close(be);
	srv_quiesce();
	free(blob);
}

/* a reader waiting on a fetch that hits the deadline fails with it */
static void test_s3_read_waiter_shares_timeout(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	char blob[100];
	struct reader rd[2] = {{.off = 0, .size = 10}, {.off = 50, .size = 10}};
	int64_t t0;

	(void)state;
	memset(blob, 'x', sizeof(blob));
	c.timeout_ms = 400;
	c.retries = 0;
	q_reset();
	pthread_mutex_lock(&srv.lock);
	srv.blob = blob;
	srv.blob_len = sizeof(blob);
	srv.delay_ms = 1500;
	pthread_mutex_unlock(&srv.lock);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	t0 = mono_ms();
	for (int i = 0; i < 2; i++) {
		rd[i].be = be;
		rd[i].path = "slow";
		assert_int_equal(
			pthread_create(&rd[i].th, NULL, reader_main, &rd[i]),
			0);
		if (i == 0)
			usleep(100000);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(rd[i].th, NULL);
	assert_true(mono_ms() - t0 < 400 + 900);
	assert_int_equal(rd[0].got, -ETIMEDOUT);
	assert_int_equal(rd[1].got, -ETIMEDOUT);
	assert_int_equal(n_total(), 1);
	/* the same read again within a second: answered at once */
	t0 = mono_ms();
	assert_int_equal(be_read(be, "slow", rd[0].buf, 10, 0), -ETIMEDOUT);
	assert_true(mono_ms() - t0 < 100);
	be_close(be);
	srv_quiesce(); /* the server thread finishes its slow answer */
}

/*
 * A request that hit the deadline marks the store as not answering for one
 * deadline: the next calls, for other keys and of other kinds, fail at once
 * without a request, so a walk meets a black-holed store once (README
 * "Failure modes"); once the deadline has passed the store is asked again.
 */
static void test_s3_timeout_spares_next_calls(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	struct names nm = {.n = 0};
	struct be_attr a;
	char buf[16];
	int64_t t0;

	(void)state;
	c.timeout_ms = 400;
	c.retries = 0;
	q_reset();
	pthread_mutex_lock(&srv.lock);
	srv.delay_ms = 1500;
	pthread_mutex_unlock(&srv.lock);
	q_push(200, NULL, empty_list);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	t0 = mono_ms();
	assert_int_equal(be_list(be, "123", 0, collect, &nm), -ETIMEDOUT);
	assert_true(mono_ms() - t0 < 400 + 900);
	/* a header read and a stat right after: no second deadline */
	t0 = mono_ms();
	assert_int_equal(be_read(be, "123/1-42-1-7.ser", buf, sizeof(buf), 0),
			 -ETIMEDOUT);
	assert_int_equal(be_stat(be, "123/other", &a), -ETIMEDOUT);
	assert_true(mono_ms() - t0 < 100);
	assert_int_equal(n_total(), 1);
	srv_quiesce(); /* the slow answer is sent and dropped */
	/* the store answers again: asked again once the deadline passed */
	q_reset();
	q_push(200, NULL, page2);
	usleep(450000);
	assert_int_equal(be_list(be, "123", 0, collect, &nm), 0);
	assert_int_equal(n_total(), 1);
	assert_int_equal(nm.n, 1);
	be_close(be);
	srv_quiesce();
}

/* so does a store that refuses connections through the retries */
static void test_s3_refused_spares_next_calls(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	struct be_attr a;
	char ep[64], buf[16];
	int port = loopsrv_closed_port();
	int64_t t0;

	(void)state;
	assert_true(port > 0);
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", port);
	c.endpoint = ep;
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	assert_int_equal(be_stat(be, "f", &a), -ECONNREFUSED);
	t0 = mono_ms();
	assert_int_equal(be_read(be, "g", buf, sizeof(buf), 0), -ECONNREFUSED);
	assert_true(mono_ms() - t0 < 50); /* no retry backoff (75-150 ms) */
	be_close(be);
}

static void test_s3_503_storm_gives_eio(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	struct be_attr a;
	int err;

	(void)state;
	q_reset();
	for (int i = 0; i < 3; i++)
		q_push(503, NULL, NULL);
	q_push(503, NULL,
	       "<Error><Code>SlowDown</Code><Message>slow</Message></Error>");
	q_push(503, NULL,
	       "<Error><Code>SlowDown</Code><Message>slow</Message></Error>");
	q_push(503, NULL,
	       "<Error><Code>SlowDown</Code><Message>slow</Message></Error>");
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	assert_int_equal(be_stat(be, "f", &a), -EIO);
	assert_int_equal(n_requests(), 3);	      /* 1 + retries */
	assert_int_equal(be_stat(be, "f", &a), -EIO); /* HEAD: no body */
	be_health(be, &err, NULL, NULL, NULL, 0);
	assert_int_equal(err, -EIO);
	q_reset();
	for (int i = 0; i < 3; i++)
		q_push(503, NULL,
		       "<Error><Code>SlowDown</Code><Message>slow</Message>"
		       "</Error>");
	/* SlowDown maps to EAGAIN, but not after a 503 outlived the retries */
	assert_int_equal(be_list(be, "", 0, collect, &(struct names){.n = 0}),
			 -EIO);
	assert_int_equal(n_requests(), 3);
	q_reset();
	for (int i = 0; i < 3; i++)
		q_push(503, NULL,
		       "<Error><Code>SlowDown</Code><Message>slow</Message>"
		       "</Error>");
	{
		char b[16];

		assert_int_equal(be_read(be, "g", b, sizeof(b), 0), -EIO);
	}
	assert_int_equal(n_requests(), 3);
	be_close(be);
}

static void test_s3_remove(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	char line[512];

	(void)state;
	q_reset();
	q_push(204, NULL, NULL);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	assert_int_equal(be_remove(be, "a/0.ser"), 0);
	assert_string_equal(req_line(0, line, sizeof(line)),
			    "DELETE /ckpt/ns/a/0.ser HTTP/1.1");
	assert_int_equal(n_requests(), 1);
	be_close(be);
}

/* stat one missing object through a fresh backend on `uri`: the request */
static const char *stat_missing(const struct stfs_conf *c, const char *uri)
{
	struct backend *be;
	struct be_attr a;

	q_reset();
	q_push(404, NULL, NULL);
	q_push(200, NULL, empty_list);
	assert_int_equal(be_open_ops(&be_s3_ops, uri, c, &be), 0);
	assert_int_equal(be_stat(be, "x", &a), -ENOENT);
	be_close(be);
	return srv.reqs[0];
}

static void test_s3_session_token_and_anonymous(void **state)
{
	struct stfs_conf c = mkconf();
	char ckpt[] = "cosn://ckpt/ns/";

	(void)state;
	c.session_token = s_token;
	assert_non_null(strcasestr(stat_missing(&c, "oss://ckpt/ns/"),
				   "\r\nx-amz-security-token: TOKEN123"));

	/* no credentials anywhere: unsigned */
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("COSN_SECRET_ID");
	c.access_key = c.secret_key = c.session_token = NULL;
	assert_null(strcasestr(stat_missing(&c, "cos://ckpt/ns/"),
			       "\r\nAuthorization:"));

	/* the provider's variables: the backend does not read them itself
	 * (still unsigned) ... */
	setenv("COSN_SECRET_ID", "COSID", 1);
	setenv("COSN_SECRET_KEY", "COSKEY", 1);
	assert_null(strcasestr(stat_missing(&c, ckpt), "\r\nAuthorization:"));
	/* ... conf imports them, and the backend signs with its settings */
	c.checkpoint = ckpt;
	assert_int_equal(conf_import_env(&c), 0);
	c.checkpoint = NULL;
	assert_string_equal(c.access_key, "COSID");
	assert_non_null(
		strcasestr(stat_missing(&c, ckpt), "Credential=COSID/"));
	free(c.access_key);
	free(c.secret_key);
	c.access_key = c.secret_key = NULL;
	conf_env_release(&c.env);
	unsetenv("COSN_SECRET_ID");
	unsetenv("COSN_SECRET_KEY");
}

static void test_s3_credentials_file_mode(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	struct be_attr a;
	char path[] = "/tmp/stfs-s3-cred.XXXXXX";
	const char text[] = "# keys\naccess_key = FILEAK\n"
			    "secret_key = FILESK\n";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1),
			 (ssize_t)sizeof(text) - 1);
	close(fd);
	c.access_key = c.secret_key = NULL;
	c.credentials_file = path;
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be),
			 -EACCES);
	assert_null(be);
	assert_int_equal(chmod(path, 0600), 0);
	q_reset();
	q_push(404, NULL, NULL);
	q_push(200, NULL, empty_list);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	assert_int_equal(be_stat(be, "x", &a), -ENOENT);
	assert_non_null(strcasestr(srv.reqs[0], "Credential=FILEAK/"));
	be_close(be);
	unlink(path);
}

static void test_s3_init_rejects_bad(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;

	(void)state;
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://", &c, &be), -EINVAL);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://b/../x", &c, &be),
			 -EINVAL);
	assert_int_equal(be_open_ops(&be_s3_ops, "http://b/x", &c, &be),
			 -EINVAL);
	c.region = s_badregion;
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://b/x", &c, &be), -EINVAL);
	c.region = s_region;
	c.endpoint = s_ftp;
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://b/x", &c, &be), -EINVAL);
	c.endpoint = NULL; /* the provider default: no request made */
	assert_int_equal(be_open_ops(&be_s3_ops, "gs://b/x/", &c, &be), 0);
	be_close(be);
}

/* a ca_file that is missing or holds no PEM certificate fails the mount,
 * not every call after it (README "Failure modes") */
static void test_s3_init_rejects_bad_ca_file(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be = NULL;
	char junk[] = "/tmp/stfs-s3-ca.XXXXXX", missing[64];
	int fd;

	(void)state;
	fd = mkstemp(junk);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not a certificate\n", 18), 18);
	close(fd);
	snprintf(missing, sizeof(missing), "%s.none", junk);
	c.ca_file = missing;
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://b/x/", &c, &be),
			 -EINVAL);
	assert_int_equal(be_open("gs://b/x/", &c, &be), -EINVAL);
	c.ca_file = junk;
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://b/x/", &c, &be),
			 -EINVAL);
	assert_int_equal(be_open("oss://b/x/", &c, &be), -EINVAL);
	assert_int_equal(be_open("gs://b/x/", &c, &be), -EINVAL);
	unlink(junk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_s3_list_pages_with_token),
		cmocka_unit_test(test_s3_list_recursive_and_missing),
		cmocka_unit_test(test_s3_list_hostile_names_skipped),
		cmocka_unit_test(test_s3_stat_file_dir_missing),
		cmocka_unit_test(test_s3_read_eof_and_readahead),
		cmocka_unit_test(
			test_s3_read_concurrent_readers_share_one_fetch),
		cmocka_unit_test(test_s3_read_sequential_prefetches),
		cmocka_unit_test(test_s3_read_long_stream_reuses_windows),
		cmocka_unit_test(test_s3_readahead_global_budget),
		cmocka_unit_test(test_s3_read_stream_cut_midway),
		cmocka_unit_test(test_s3_read_stream_stall_deadline),
		cmocka_unit_test(test_s3_read_stream_other_reader_not_held),
		cmocka_unit_test(test_s3_read_random_no_prefetch),
		cmocka_unit_test(test_s3_read_waiter_shares_timeout),
		cmocka_unit_test(test_s3_timeout_spares_next_calls),
		cmocka_unit_test(test_s3_refused_spares_next_calls),
		cmocka_unit_test(test_s3_503_storm_gives_eio),
		cmocka_unit_test(test_s3_remove),
		cmocka_unit_test(test_s3_session_token_and_anonymous),
		cmocka_unit_test(test_s3_credentials_file_mode),
		cmocka_unit_test(test_s3_init_rejects_bad),
		cmocka_unit_test(test_s3_init_rejects_bad_ca_file),
	};

	return cmocka_run_group_tests(tests, srv_start, srv_stop);
}
