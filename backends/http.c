/*
 * http.c — libcurl behind one function, http_perform().
 *
 * Policy, in one place:
 *
 *  - Deadline.  req->timeout_ms bounds the whole call: every attempt gets
 *    CURLOPT_TIMEOUT_MS = what is left of it, and a backoff sleep that would
 *    end past it is not taken.  The connect timeout of an attempt is
 *    min(connect_timeout_ms, left).  A low-speed limit (1 byte/s over the
 *    attempt's seconds) is a belt to the deadline's braces.
 *
 *  - Retries.  Only GET/HEAD/DELETE, only for a transport failure (refused,
 *    reset, nothing received, attempt timeout) or a 429/5xx status, at most
 *    req->retries extra attempts, with full-jitter exponential backoff
 *    (base 50 ms, cap 1 s).  -EFBIG, -EINTR and any other status are final.
 *
 *  - Bodies go into resp->body, capped at req->max_body; overflow aborts
 *    the transfer and gives -EFBIG.
 *
 *  - Handles are pooled: a mutex-protected free list of reset easy handles,
 *    so connections (and TLS sessions) are reused; a handle is owned by one
 *    thread between pool_get() and pool_put().
 *
 *  - Unreachable endpoints (req->pause_unreachable).  A request that timed
 *    out, or found connections refused / the host unresolvable through its
 *    retries, pauses its endpoint (scheme://host:port, lowercased, without
 *    user-info) for its timeout: requests to it fail at once with that
 *    errno, unsent, so a walk meets a dead store once per deadline, not
 *    once per call.  Per endpoint, not per backend: an HA namenode's
 *    pause does not hold up the next namenode, and two namespaces on one
 *    store share it.  A failure after a redirect was followed belongs to
 *    another host and pauses nothing.  Any answer ends the pause.  A small
 *    table (HTTP_PAUSE_SLOTS) under pause_lock; a full one drops the
 *    pause that ends first.  Each request so held back counts in
 *    http_stats.paused (and, being a failure, in errors).
 *
 *  - Secrets: userpwd is handed to curl and nowhere else.  resp->error and
 *    log lines name the URL without user-info or query string.
 */
#include "backends/http.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

#define HTTP_POOL_MAX	  32
#define HTTP_BACKOFF_BASE 50
#define HTTP_BACKOFF_CAP  1000
#define HTTP_CONNECT_DFLT 2000
#define HTTP_PAUSE_SLOTS  64
#define HTTP_PAUSE_KEY	  192

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static CURL *pool[HTTP_POOL_MAX]; /* protected by pool_lock */
static size_t pool_n;		  /* protected by pool_lock */

static int (*_Atomic abort_check)(void);

/* paused endpoints; until_ms == 0: a free slot */
struct pause_slot {
	char key[HTTP_PAUSE_KEY];
	int64_t until_ms;
	int err;
};
static pthread_mutex_t pause_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pause_slot pauses[HTTP_PAUSE_SLOTS]; /* under pause_lock */
static _Atomic unsigned pause_n; /* slots in use: 0 skips the lock */

static _Atomic uint64_t st_requests, st_retries, st_errors, st_timeouts,
	st_bytes_in, st_latency_us, st_paused;

static int64_t http_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t http_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int http_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_ALL) == CURLE_OK ? 0 : -EIO;
}

void http_global_cleanup(void)
{
	pthread_mutex_lock(&pool_lock);
	while (pool_n > 0)
		curl_easy_cleanup(pool[--pool_n]);
	pthread_mutex_unlock(&pool_lock);
	curl_global_cleanup();
}

void http_set_abort_check(int (*fn)(void))
{
	atomic_store(&abort_check, fn);
}

static CURL *pool_get(void)
{
	CURL *h = NULL;

	pthread_mutex_lock(&pool_lock);
	if (pool_n > 0)
		h = pool[--pool_n];
	pthread_mutex_unlock(&pool_lock);
	return h ? h : curl_easy_init();
}

static void pool_put(CURL *h)
{
	curl_easy_reset(h);
	pthread_mutex_lock(&pool_lock);
	if (pool_n < HTTP_POOL_MAX) {
		pool[pool_n++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&pool_lock);
	if (h)
		curl_easy_cleanup(h);
}

void http_resp_init(struct http_resp *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->body, BUF_DEFAULT_MAX);
	r->last_modified_ms = -1;
	r->content_length = -1;
}

void http_resp_release(struct http_resp *r)
{
	buf_release(&r->body);
	http_resp_init(r);
}

char *http_redact_url(const char *url, char *out, size_t outsz)
{
	const char *p, *auth, *end, *at;
	size_t n;

	if (!outsz)
		return out;
	if (!url) {
		snprintf(out, outsz, "(null)");
		return out;
	}
	p = strstr(url, "://");
	auth = p ? p + 3 : url;
	end = auth + strcspn(auth, "/?#");
	at = NULL;
	for (const char *q = auth; q < end; q++)
		if (*q == '@')
			at = q;
	n = (size_t)(auth - url);
	snprintf(out, outsz, "%.*s", (int)n, url);
	n = strlen(out);
	if (at)
		auth = at + 1;
	snprintf(out + n, outsz - n, "%.*s", (int)strcspn(auth, "?#"), auth);
	return out;
}

/*
 * The endpoint of `url` ("scheme://host:port", lowercased, user-info
 * dropped) into key; false when the URL has none or it does not fit.
 */
static bool endpoint_key(const char *url, char *key, size_t keysz)
{
	const char *p = url ? strstr(url, "://") : NULL;
	const char *auth, *end, *at = NULL;
	size_t n = 0;

	if (!p)
		return false;
	auth = p + 3;
	end = auth + strcspn(auth, "/?#");
	for (const char *q = auth; q < end; q++)
		if (*q == '@')
			at = q;
	if (at)
		auth = at + 1;
	if ((size_t)(p + 3 - url) + (size_t)(end - auth) >= keysz ||
	    end == auth)
		return false;
	for (const char *q = url; q < p + 3; q++)
		key[n++] = (char)tolower((unsigned char)*q);
	for (const char *q = auth; q < end; q++)
		key[n++] = (char)tolower((unsigned char)*q);
	key[n] = '\0';
	return true;
}

/* with pause_lock: the slot of `key`, or NULL */
static struct pause_slot *pause_find(const char *key)
{
	for (size_t i = 0; i < HTTP_PAUSE_SLOTS; i++)
		if (pauses[i].until_ms && !strcmp(pauses[i].key, key))
			return &pauses[i];
	return NULL;
}

/* the errno `key` is paused with, now, or 0 (an ended pause is dropped) */
static int pause_check(const char *key, int64_t now)
{
	struct pause_slot *sl;
	int err = 0;

	if (!atomic_load(&pause_n))
		return 0;
	pthread_mutex_lock(&pause_lock);
	sl = pause_find(key);
	if (sl && now < sl->until_ms) {
		err = sl->err;
	} else if (sl) {
		sl->until_ms = 0;
		atomic_fetch_sub(&pause_n, 1);
	}
	pthread_mutex_unlock(&pause_lock);
	return err;
}

/* pause `key` until `until` with `err`; err 0: end its pause */
static void pause_set(const char *key, int64_t until, int err)
{
	struct pause_slot *sl, *first = &pauses[0];

	if (!err && !atomic_load(&pause_n))
		return;
	pthread_mutex_lock(&pause_lock);
	sl = pause_find(key);
	if (!err) {
		if (sl) {
			sl->until_ms = 0;
			atomic_fetch_sub(&pause_n, 1);
		}
		pthread_mutex_unlock(&pause_lock);
		return;
	}
	if (!sl) {
		/* a free slot, else the one whose pause ends first */
		for (size_t i = 0; i < HTTP_PAUSE_SLOTS && !sl; i++) {
			if (!pauses[i].until_ms)
				sl = &pauses[i];
			else if (pauses[i].until_ms < first->until_ms)
				first = &pauses[i];
		}
		if (sl)
			atomic_fetch_add(&pause_n, 1);
		else
			sl = first;
		snprintf(sl->key, sizeof(sl->key), "%s", key);
	}
	sl->until_ms = until;
	sl->err = err;
	pthread_mutex_unlock(&pause_lock);
}

void http_pause_forget(void)
{
	pthread_mutex_lock(&pause_lock);
	memset(pauses, 0, sizeof(pauses));
	atomic_store(&pause_n, 0);
	pthread_mutex_unlock(&pause_lock);
}

#define PEM_CERT	 "-----BEGIN CERTIFICATE-----"
#define CA_FILE_MAX_READ ((size_t)64 << 20)

int http_ca_file_check(const char *path, char *why, size_t whylen)
{
	const size_t tag = sizeof(PEM_CERT) - 1;
	char b[8192];
	size_t have = 0, total = 0;
	struct stat st;
	int fd, rc = -EINVAL;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		snprintf(why, whylen, "%s", strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(why, whylen, "is not a regular file");
		return -EINVAL;
	}
	/* the tag may straddle two reads: keep its length minus one */
	while (total < CA_FILE_MAX_READ) {
		ssize_t n = read(fd, b + have, sizeof(b) - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(why, whylen, "%s", strerror(-rc));
			break;
		}
		if (n == 0) {
			snprintf(why, whylen, "holds no PEM certificate");
			break;
		}
		have += (size_t)n;
		total += (size_t)n;
		if (memmem(b, have, PEM_CERT, tag)) {
			rc = 0;
			break;
		}
		if (have >= tag - 1) {
			memmove(b, b + have - (tag - 1), tag - 1);
			have = tag - 1;
		}
	}
	if (rc == -EINVAL && total >= CA_FILE_MAX_READ)
		snprintf(why, whylen, "holds no PEM certificate");
	close(fd);
	return rc;
}

int http_curl_to_errno(int curlcode)
{
	switch (curlcode) {
	case CURLE_OK:
		return 0;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return -EHOSTUNREACH;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_FILESIZE_EXCEEDED:
		return -EFBIG;
	case CURLE_ABORTED_BY_CALLBACK:
		return -EINTR;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

int http_status_to_errno(long status)
{
	if (status >= 200 && status < 300)
		return 0;
	switch (status) {
	case 400:
		return -EINVAL;
	case 401:
	case 403:
		return -EACCES;
	case 404:
	case 410:
		return -ENOENT;
	case 408:
		return -ETIMEDOUT;
	case 409:
	case 412:
		return -EEXIST;
	case 413:
		return -EFBIG;
	case 416:
		return -ERANGE;
	case 429:
		return -EAGAIN;
	case 501:
		return -ENOSYS;
	default:
		break;
	}
	if (status >= 400 && status < 500)
		return -EINVAL;
	if (status >= 500 && status < 600)
		return -EAGAIN;
	return -EIO;
}

void http_get_stats(struct http_stats *out)
{
	out->requests = atomic_load(&st_requests);
	out->retries = atomic_load(&st_retries);
	out->errors = atomic_load(&st_errors);
	out->timeouts = atomic_load(&st_timeouts);
	out->bytes_in = atomic_load(&st_bytes_in);
	out->latency_us_sum = atomic_load(&st_latency_us);
	out->paused = atomic_load(&st_paused);
}

/* Per-attempt transfer state, seen by the callbacks. */
struct xfer {
	struct http_resp *resp;
	const struct http_req *req;
	CURL *h;
	int overflow;	  /* the body went over its cap */
	int aborted;	  /* the abort predicate fired */
	int timed_out;	  /* a sink's deadline passed */
	int sink_err;	  /* what the sink ended the transfer with */
	size_t delivered; /* bytes the sink was given */
};

/* with a sink: whether its deadline has passed (then the transfer ends) */
static bool sink_late(struct xfer *x)
{
	const struct http_req *q = x->req;

	if (!q->sink || !q->sink_deadline ||
	    http_mono_ms() < q->sink_deadline(q->sink_ud))
		return false;
	x->timed_out = 1;
	return true;
}

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	size_t n = size * nmemb;
	long status = 0;
	int rc;

	if (x->req->sink &&
	    curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status) ==
		    CURLE_OK &&
	    status >= 200 && status < 300) {
		if (sink_late(x))
			return 0;
		rc = x->req->sink(x->req->sink_ud, status, ptr, n);
		if (rc) {
			x->sink_err = rc;
			return 0;
		}
		x->delivered += n;
		atomic_fetch_add(&st_bytes_in, n);
		return n;
	}
	rc = buf_append(&x->resp->body, ptr, n);
	if (rc) {
		if (rc == -EFBIG)
			x->overflow = 1;
		return 0; /* CURLE_WRITE_ERROR */
	}
	atomic_fetch_add(&st_bytes_in, n);
	return n;
}

/* Trim a header value: skip leading blanks, drop trailing CR/LF/blanks. */
static size_t header_value(const char *v, size_t n, const char **start)
{
	while (n && (*v == ' ' || *v == '\t')) {
		v++;
		n--;
	}
	while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' ' ||
		     v[n - 1] == '\t'))
		n--;
	*start = v;
	return n;
}

static bool header_is(const char *line, size_t n, const char *name,
		      size_t *vofs)
{
	size_t k = strlen(name);

	if (n <= k || line[k] != ':' || strncasecmp(line, name, k) != 0)
		return false;
	*vofs = k + 1;
	return true;
}

static size_t header_cb(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	struct http_resp *r = x->resp;
	size_t n = size * nmemb, vofs, vl;
	const char *v;
	char tmp[128];

	if (n >= 5 && strncmp(ptr, "HTTP/", 5) == 0) {
		/* a new response (after 100-continue or a redirect) */
		r->last_modified_ms = -1;
		r->content_length = -1;
		r->content_type[0] = '\0';
		return n;
	}
	if (header_is(ptr, n, "Last-Modified", &vofs)) {
		vl = header_value(ptr + vofs, n - vofs, &v);
		if (vl < sizeof(tmp)) {
			time_t t;

			memcpy(tmp, v, vl);
			tmp[vl] = '\0';
			t = curl_getdate(tmp, NULL);
			if (t != (time_t)-1)
				r->last_modified_ms = (int64_t)t * 1000;
		}
	} else if (header_is(ptr, n, "Content-Length", &vofs)) {
		vl = header_value(ptr + vofs, n - vofs, &v);
		if (vl > 0 && vl < 20) {
			char *end;
			long long ll;

			memcpy(tmp, v, vl);
			tmp[vl] = '\0';
			errno = 0;
			ll = strtoll(tmp, &end, 10);
			if (!errno && *end == '\0' && ll >= 0)
				r->content_length = ll;
		}
	} else if (header_is(ptr, n, "Content-Type", &vofs)) {
		vl = header_value(ptr + vofs, n - vofs, &v);
		if (vl >= sizeof(r->content_type))
			vl = sizeof(r->content_type) - 1;
		memcpy(r->content_type, v, vl);
		r->content_type[vl] = '\0';
	}
	return n;
}

static int xferinfo_cb(void *ud, curl_off_t dltotal, curl_off_t dlnow,
		       curl_off_t ultotal, curl_off_t ulnow)
{
	struct xfer *x = ud;
	int (*fn)(void) = atomic_load(&abort_check);

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	if (fn && fn()) {
		x->aborted = 1;
		return 1;
	}
	return sink_late(x) ? 1 : 0;
}

static bool method_idempotent(const char *m)
{
	return !m || !strcmp(m, "GET") || !strcmp(m, "HEAD") ||
	       !strcmp(m, "DELETE");
}

static unsigned jitter_rand(void)
{
	static _Thread_local unsigned seed;

	if (!seed)
		seed = (unsigned)http_mono_us() ^ (unsigned)(uintptr_t)&seed;
	/* xorshift32 */
	seed ^= seed << 13;
	seed ^= seed >> 17;
	seed ^= seed << 5;
	return seed;
}

/* Sleep `ms`, in slices, polling the abort predicate. -EINTR if it fired. */
static int backoff_sleep(int64_t ms)
{
	int64_t end = http_mono_ms() + ms, left;
	int (*fn)(void);

	while ((left = end - http_mono_ms()) > 0) {
		struct timespec ts;

		if (left > 20)
			left = 20;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left * 1000000L;
		nanosleep(&ts, NULL);
		fn = atomic_load(&abort_check);
		if (fn && fn())
			return -EINTR;
	}
	return 0;
}

static int setup_handle(CURL *h, const struct http_req *req, struct xfer *x,
			struct curl_slist *hdrs, char *errbuf, long timeout_ms,
			long connect_ms)
{
	const char *m = req->method ? req->method : "GET";
	CURLcode c = CURLE_OK;
	long low_time = timeout_ms / 1000;

	if (low_time < 1)
		low_time = 1;
#define SET(opt, val)                                      \
	do {                                               \
		if (c == CURLE_OK)                         \
			c = curl_easy_setopt(h, opt, val); \
	} while (0)
	SET(CURLOPT_URL, req->url);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_ERRORBUFFER, errbuf);
	/* a sink's deadline moves on with its progress (sink_late); a sink
	 * without one keeps timeout_ms (the engine's lists) */
	SET(CURLOPT_TIMEOUT_MS,
	    req->sink && req->sink_deadline ? 0L : timeout_ms);
	SET(CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	SET(CURLOPT_LOW_SPEED_LIMIT, 1L);
	SET(CURLOPT_LOW_SPEED_TIME, low_time);
	SET(CURLOPT_WRITEFUNCTION, write_cb);
	SET(CURLOPT_WRITEDATA, x);
	SET(CURLOPT_HEADERFUNCTION, header_cb);
	SET(CURLOPT_HEADERDATA, x);
	SET(CURLOPT_NOPROGRESS, 0L);
	SET(CURLOPT_XFERINFOFUNCTION, xferinfo_cb);
	SET(CURLOPT_XFERINFODATA, x);
	SET(CURLOPT_FILETIME, 1L);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	if (req->follow_location) {
		SET(CURLOPT_FOLLOWLOCATION, 1L);
		SET(CURLOPT_MAXREDIRS, 5L);
		SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	}
	if (hdrs)
		SET(CURLOPT_HTTPHEADER, hdrs);
	if (req->userpwd) {
		SET(CURLOPT_USERPWD, req->userpwd);
		SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	}
	if (req->negotiate) {
		/* libcurl stays at 401 without a (dummy) user for Negotiate */
		SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_NEGOTIATE);
		SET(CURLOPT_USERPWD, ":");
	}
	if (req->aws_sigv4)
		SET(CURLOPT_AWS_SIGV4, req->aws_sigv4);
	if (req->ca_file)
		SET(CURLOPT_CAINFO, req->ca_file);
	if (!strcmp(m, "HEAD")) {
		SET(CURLOPT_NOBODY, 1L);
	} else if (!strcmp(m, "GET") && !req->body) {
		SET(CURLOPT_HTTPGET, 1L);
	} else {
		if (req->body) {
			SET(CURLOPT_POSTFIELDSIZE_LARGE,
			    (curl_off_t)req->body_len);
			SET(CURLOPT_POSTFIELDS, req->body);
		} else if (!strcmp(m, "POST") || !strcmp(m, "PUT")) {
			SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
			SET(CURLOPT_POSTFIELDS, "");
		}
		SET(CURLOPT_CUSTOMREQUEST, m);
	}
#undef SET
	return c == CURLE_OK ? 0 : -EINVAL;
}

static void set_err(struct http_resp *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_err(struct http_resp *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
}

static bool status_retryable(long status)
{
	return status == 429 || (status >= 500 && status < 600);
}

/* a certificate TLS refused, or a CA file it cannot use: a retry fails alike */
static bool curl_tls_refused(CURLcode cc)
{
	return cc == CURLE_PEER_FAILED_VERIFICATION ||
	       cc == CURLE_SSL_CACERT_BADFILE || cc == CURLE_SSL_ISSUER_ERROR ||
	       cc == CURLE_SSL_PINNEDPUBKEYNOTMATCH;
}

static bool errno_retryable(int rc)
{
	return rc == -ETIMEDOUT || rc == -ECONNREFUSED || rc == -EIO;
}

int http_perform(const struct http_req *req, struct http_resp *resp)
{
	const char *m = req->method ? req->method : "GET";
	unsigned timeout = req->timeout_ms ? req->timeout_ms : 5000;
	unsigned conn = req->connect_timeout_ms;
	size_t max_body = req->max_body ? req->max_body : BUF_DEFAULT_MAX;
	bool idem = method_idempotent(req->method);
	int64_t t0_us = http_mono_us();
	int64_t deadline = http_mono_ms() + timeout;
	struct curl_slist *hdrs = NULL;
	char errbuf[CURL_ERROR_SIZE];
	char safe_url[256], ep[HTTP_PAUSE_KEY];
	bool pausing = false;
	long redirects = 0;
	struct xfer x;
	CURL *h;
	int rc = 0;

	if (!conn)
		conn = timeout < HTTP_CONNECT_DFLT ? timeout
						   : HTTP_CONNECT_DFLT;
	if (resp->body.data && !resp->body.len) {
		/* a buffer the caller gave for the body (s3's read-ahead) */
		buf_reset(&resp->body);
		resp->body.max = max_body;
	} else {
		buf_release(&resp->body);
		buf_init(&resp->body, max_body);
	}
	resp->status = 0;
	resp->attempts = 0;
	resp->error[0] = '\0';
	resp->last_modified_ms = -1;
	resp->content_length = -1;
	resp->content_type[0] = '\0';
	http_redact_url(req->url, safe_url, sizeof(safe_url));
	if (!req->url) {
		set_err(resp, "no URL");
		return -EINVAL;
	}
	if (req->pause_unreachable &&
	    (pausing = endpoint_key(req->url, ep, sizeof(ep)))) {
		rc = pause_check(ep, http_mono_ms());
		if (rc) {
			set_err(resp,
				"%s %s: not sent: the endpoint was unreachable "
				"(%s) less than %u ms ago",
				m, safe_url, strerror(-rc), timeout);
			atomic_fetch_add(&st_errors, 1);
			atomic_fetch_add(&st_paused, 1);
			return rc;
		}
	}
	for (const char *const *hp = req->headers; hp && *hp; hp++) {
		struct curl_slist *n = curl_slist_append(hdrs, *hp);

		if (!n) {
			curl_slist_free_all(hdrs);
			set_err(resp, "out of memory");
			return -ENOMEM;
		}
		hdrs = n;
	}
	h = pool_get();
	if (!h) {
		curl_slist_free_all(hdrs);
		set_err(resp, "out of memory");
		return -ENOMEM;
	}

	for (unsigned attempt = 0;; attempt++) {
		int64_t left = deadline - http_mono_ms();
		CURLcode cc;
		long filetime = -1;

		if (left <= 0) {
			if (!rc) {
				rc = -ETIMEDOUT;
				set_err(resp, "%s %s: timed out after %u ms", m,
					safe_url, timeout);
			}
			break;
		}
		if (attempt > 0) {
			curl_easy_reset(h);
			atomic_fetch_add(&st_retries, 1);
		}
		buf_reset(&resp->body);
		resp->body.len = 0;
		resp->status = 0;
		resp->tls_refused = false;
		resp->last_modified_ms = -1;
		resp->content_length = -1;
		resp->content_type[0] = '\0';
		memset(&x, 0, sizeof(x));
		x.resp = resp;
		x.req = req;
		x.h = h;
		errbuf[0] = '\0';
		rc = setup_handle(h, req, &x, hdrs, errbuf, (long)left,
				  (long)(conn < left ? conn : left));
		if (rc) {
			set_err(resp, "%s %s: cannot set up the request", m,
				safe_url);
			break;
		}
		resp->attempts++;
		atomic_fetch_add(&st_requests, 1);
		cc = curl_easy_perform(h);
		redirects = 0;
		curl_easy_getinfo(h, CURLINFO_REDIRECT_COUNT, &redirects);
		if (x.overflow) {
			rc = -EFBIG;
			set_err(resp, "%s %s: response body over %zu bytes", m,
				safe_url, max_body);
		} else if (x.aborted) {
			rc = -EINTR;
			set_err(resp, "%s %s: interrupted", m, safe_url);
		} else if (x.sink_err) {
			rc = x.sink_err;
			set_err(resp, "%s %s: %s", m, safe_url, strerror(-rc));
		} else if (x.timed_out) {
			rc = -ETIMEDOUT;
			atomic_fetch_add(&st_timeouts, 1);
			set_err(resp,
				"%s %s: timed out (no progress within %u ms)",
				m, safe_url, timeout);
		} else if (cc != CURLE_OK) {
			rc = http_curl_to_errno((int)cc);
			if (rc == -ETIMEDOUT)
				atomic_fetch_add(&st_timeouts, 1);
			/* curl's own reason says why a certificate was refused
			 * ("self-signed certificate in certificate chain") */
			resp->tls_refused = curl_tls_refused(cc);
			set_err(resp, "%s %s: %s", m, safe_url,
				resp->tls_refused && errbuf[0]
					? errbuf
					: curl_easy_strerror(cc));
			resp->status = 0;
		} else {
			rc = 0;
			curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE,
					  &resp->status);
			if (resp->last_modified_ms < 0 &&
			    curl_easy_getinfo(h, CURLINFO_FILETIME,
					      &filetime) == CURLE_OK &&
			    filetime >= 0)
				resp->last_modified_ms =
					(int64_t)filetime * 1000;
			if (resp->status < 200 || resp->status >= 300)
				set_err(resp, "%s %s: HTTP %ld", m, safe_url,
					resp->status);
		}
		if (rc == -EFBIG || rc == -EINTR || rc == -ENOMEM ||
		    x.sink_err || x.delivered)
			break;
		if (!idem || attempt >= req->retries || resp->tls_refused)
			break;
		if (rc ? !errno_retryable(rc) : !status_retryable(resp->status))
			break;
		if (rc == -ECONNREFUSED && req->no_retry_refused)
			break;
		{
			int64_t cap = HTTP_BACKOFF_BASE
				      << (attempt < 5 ? attempt : 5);
			int64_t d;

			if (cap > HTTP_BACKOFF_CAP)
				cap = HTTP_BACKOFF_CAP;
			/* jitter in [cap/2, cap] */
			d = cap / 2 +
			    (int64_t)(jitter_rand() % (unsigned)(cap / 2 + 1));
			if (http_mono_ms() + d >= deadline)
				break;
			log_debug(
				"http: %s %s: attempt %u failed (%s), retry in "
				"%lld ms",
				m, safe_url, attempt + 1,
				rc ? resp->error : "status", (long long)d);
			if (backoff_sleep(d) == -EINTR) {
				rc = -EINTR;
				set_err(resp, "%s %s: interrupted", m,
					safe_url);
				break;
			}
		}
	}
	pool_put(h);
	curl_slist_free_all(hdrs);
	if (pausing &&
	    (rc == -ETIMEDOUT || rc == -ECONNREFUSED || rc == -EHOSTUNREACH) &&
	    !redirects)
		pause_set(ep, http_mono_ms() + timeout, rc);
	else if (pausing && rc == 0)
		pause_set(ep, 0, 0);
	if (rc)
		atomic_fetch_add(&st_errors, 1);
	atomic_fetch_add(&st_latency_us, (uint64_t)(http_mono_us() - t0_us));
	return rc;
}
