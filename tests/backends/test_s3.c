/*
 * Tests for backends/s3.c against a loopback HTTP server run by this file
 * (a thread on 127.0.0.1:0 answering a queue of canned responses, one
 * request per connection, recording every request): paging with
 * continuation tokens, marker objects, 404 -> ENOENT, stat of directories,
 * 416 -> EOF, read-ahead, 503 storms -> EIO after retries, multi-delete,
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

#include "backend.h"
#include "http.h"
#include "log.h"

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

static void serve_one(int cfd)
{
	char req[REQ_MAX], head[512];
	size_t len = 0, need = 0;
	char *eoh = NULL;
	struct canned c = {.status = 500, .body = "queue empty"};
	bool is_head;

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
	if (srv.next < srv.nq)
		c = srv.q[srv.next++];
	pthread_mutex_unlock(&srv.lock);
	if (c.body && !c.body_len)
		c.body_len = strlen(c.body);
	snprintf(head, sizeof(head),
		 "HTTP/1.1 %d X\r\nContent-Length: %zu\r\n%sConnection: "
		 "close\r\n\r\n",
		 c.status, c.body_len, c.headers ? c.headers : "");
	send_all(cfd, head, strlen(head));
	if (!is_head && c.body_len)
		send_all(cfd, c.body, c.body_len);
}

static void *srv_main(void *arg)
{
	(void)arg;
	for (;;) {
		int cfd = accept(srv.lfd, NULL, NULL);

		if (cfd < 0)
			return NULL;
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
	srv.nq = srv.next = srv.nreq = 0;
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

static void test_s3_remove_and_remove_many(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	char line[512];
	const char *paths[] = {"a/1.ser", "a/2.ser", "a/3.ser", "bad\x01key",
			       "x/../y"};
	int res[5];
	const char *body;
	static const char dres[] =
		"<DeleteResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/"
		"\"><Deleted><Key>ns/a/1.ser</Key></Deleted>"
		"<Error><Key>ns/a/2.ser</Key><Code>AccessDenied</Code>"
		"<Message>no</Message></Error></DeleteResult>";

	(void)state;
	q_reset();
	q_push(204, NULL, NULL);
	q_push(200, NULL, dres);
	assert_int_equal(be_open_ops(&be_s3_ops, "s3://ckpt/ns/", &c, &be), 0);
	assert_int_equal(be_remove(be, "a/0.ser"), 0);
	assert_string_equal(req_line(0, line, sizeof(line)),
			    "DELETE /ckpt/ns/a/0.ser HTTP/1.1");
	assert_int_equal(be_remove_many(be, paths, 5, res), 0);
	assert_string_equal(req_line(1, line, sizeof(line)),
			    "POST /ckpt?delete= HTTP/1.1");
	assert_non_null(strcasestr(srv.reqs[1], "\r\nContent-MD5: "));
	assert_non_null(strcasestr(srv.reqs[1], "\r\nx-amz-content-sha256: "));
	assert_null(strcasestr(srv.reqs[1], "UNSIGNED-PAYLOAD"));
	body = strstr(srv.reqs[1], "\r\n\r\n");
	assert_non_null(body);
	assert_non_null(strstr(body, "<Object><Key>ns/a/1.ser</Key></Object>"
				     "<Object><Key>ns/a/2.ser</Key></Object>"
				     "<Object><Key>ns/a/3.ser</Key></Object>"
				     "</Delete>"));
	assert_int_equal(res[0], 0);
	assert_int_equal(res[1], -EACCES);
	assert_int_equal(res[2], -EIO); /* no answer for it */
	assert_int_equal(res[3], -EINVAL);
	assert_int_equal(res[4], -EINVAL);
	assert_int_equal(n_requests(), 2);
	be_close(be);
}

static void test_s3_session_token_and_anonymous(void **state)
{
	struct stfs_conf c = mkconf();
	struct backend *be;
	struct be_attr a;

	(void)state;
	q_reset();
	q_push(404, NULL, NULL);
	q_push(200, NULL, empty_list);
	c.session_token = s_token;
	assert_int_equal(be_open_ops(&be_s3_ops, "oss://ckpt/ns/", &c, &be), 0);
	assert_int_equal(be_stat(be, "x", &a), -ENOENT);
	assert_non_null(
		strcasestr(srv.reqs[0], "\r\nx-amz-security-token: TOKEN123"));
	be_close(be);

	/* no credentials anywhere: unsigned */
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("COSN_SECRET_ID");
	q_reset();
	q_push(404, NULL, NULL);
	q_push(200, NULL, empty_list);
	c.access_key = c.secret_key = c.session_token = NULL;
	assert_int_equal(be_open_ops(&be_s3_ops, "cos://ckpt/ns/", &c, &be), 0);
	assert_int_equal(be_stat(be, "x", &a), -ENOENT);
	assert_null(strcasestr(srv.reqs[0], "\r\nAuthorization:"));
	be_close(be);

	/* the provider's variables */
	setenv("COSN_SECRET_ID", "COSID", 1);
	setenv("COSN_SECRET_KEY", "COSKEY", 1);
	q_reset();
	q_push(404, NULL, NULL);
	q_push(200, NULL, empty_list);
	assert_int_equal(be_open_ops(&be_s3_ops, "cosn://ckpt/ns/", &c, &be),
			 0);
	assert_int_equal(be_stat(be, "x", &a), -ENOENT);
	assert_non_null(strcasestr(srv.reqs[0], "Credential=COSID/"));
	be_close(be);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_s3_list_pages_with_token),
		cmocka_unit_test(test_s3_list_recursive_and_missing),
		cmocka_unit_test(test_s3_list_hostile_names_skipped),
		cmocka_unit_test(test_s3_stat_file_dir_missing),
		cmocka_unit_test(test_s3_read_eof_and_readahead),
		cmocka_unit_test(test_s3_503_storm_gives_eio),
		cmocka_unit_test(test_s3_remove_and_remove_many),
		cmocka_unit_test(test_s3_session_token_and_anonymous),
		cmocka_unit_test(test_s3_credentials_file_mode),
		cmocka_unit_test(test_s3_init_rejects_bad),
	};

	return cmocka_run_group_tests(tests, srv_start, srv_stop);
}
