/*
 * http — the one place stfs talks HTTP (libcurl).
 *
 * Every request has a deadline (req->timeout_ms, total, connect included)
 * and a capped response body.  Retries, for idempotent methods only
 * (GET/HEAD/DELETE), happen here and nowhere else: on a transport error
 * (reset, refused, timeout of an attempt) or a 5xx/429 status, with jittered
 * exponential backoff, while the overall deadline allows.
 *
 * CURL handles are pooled and never shared between threads at once.
 * Thread-safe.  http_global_init() must run before any thread starts.
 */
#ifndef STFS_HTTP_H
#define STFS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define CURL_ERROR_SIZE_STFS 256

struct http_req {
	const char *method; /* "GET" (default when NULL), "HEAD", ... */
	const char *url;
	const char *const
		*headers; /* "Name: value" strings, NULL-terminated, or NULL */
	const void *body; /* request body or NULL */
	size_t body_len;
	unsigned timeout_ms;	     /* overall deadline, retries included */
	unsigned connect_timeout_ms; /* 0: min(timeout, 2000) */
	unsigned retries; /* extra attempts allowed (idempotent only) */
	size_t max_body;  /* response cap; 0: BUF_DEFAULT_MAX */
	const char
		*userpwd; /* "user:password" for basic auth, or NULL (secret) */
	const char *aws_sigv4; /* CURLOPT_AWS_SIGV4 provider string, or NULL */
	const char *ca_file;   /* CA bundle, or NULL for the system store */
	bool follow_location;  /* follow redirects (at most 5); default no */
	/* SPNEGO (GSS-API Negotiate) with the process's Kerberos credentials
	 * (backends/krb.h); not sent again to a redirect's other host */
	bool negotiate;
	/* the unreachable-endpoint pause (http_perform); storage backends set
	 * it, the engine client and credential fetches do not */
	bool pause_unreachable;
	/* a refused connection ends the request at once, unretried (the
	 * engine client: a member that refuses is down; it asks the next URL)
	 */
	bool no_retry_refused;
	/*
	 * Streaming (s3's sequential reader): a 2xx body goes to
	 * sink(sink_ud, status, data, n) piece by piece instead of resp->body
	 * (an error status's body still lands there).  The sink returns 0 to
	 * go on, or -errno to end the transfer: http_perform returns it.  The
	 * deadline is then sink_deadline(sink_ud) (monotonic ms, asked as data
	 * arrive and at least once a second; the sink moves it on as it makes
	 * progress), not timeout_ms (a sink without sink_deadline keeps
	 * timeout_ms: the engine's job lists); and once the sink has had a
	 * byte, nothing is retried (a retry would hand it the bytes again).
	 */
	int (*sink)(void *ud, long status, const char *p, size_t n);
	int64_t (*sink_deadline)(void *ud);
	void *sink_ud;
};

struct http_resp {
	long status;		  /* HTTP status; 0 when no response */
	struct buf body;	  /* response body (capped) */
	int64_t last_modified_ms; /* Last-Modified header, or -1 */
	int64_t content_length;	  /* Content-Length header, or -1 */
	char content_type[128];
	unsigned attempts; /* how many tries were made */
	/* TLS refused the peer's certificate (not trusted, wrong name) or the
	 * CA file: error holds curl's reason; no retry was made */
	bool tls_refused;
	char error[CURL_ERROR_SIZE_STFS];
};
/** curl_global_init; call once in main() before threads. 0 or -EIO. */
int http_global_init(void);
void http_global_cleanup(void);

/**
 * Install a predicate polled during transfers (e.g. fuse_interrupted);
 * when it returns non-zero the transfer is aborted with -EINTR.
 */
void http_set_abort_check(int (*fn)(void));

/** Prepare an empty response. */
void http_resp_init(struct http_resp *r);
void http_resp_release(struct http_resp *r);

/**
 * Perform the request.  Returns 0 when an HTTP response arrived (whatever
 * its status: look at resp->status), or -errno for transport failures:
 * -ETIMEDOUT (deadline), -ECONNREFUSED, -EHOSTUNREACH (resolve), -EFBIG
 * (body over the cap), -EINTR (aborted), -EIO (anything else; a refused
 * certificate sets resp->tls_refused and is not retried).  resp->error
 * holds a human reason without secrets.
 *
 * With req->pause_unreachable: a request that found its endpoint
 * (scheme://host:port of req->url) unreachable — -ETIMEDOUT, or
 * -ECONNREFUSED/-EHOSTUNREACH through the retries, no redirect followed —
 * makes every such request to that endpoint of the next req->timeout_ms
 * fail at once with the same errno, unsent; any answer ends the pause
 * (README "Failure modes").
 */
int http_perform(const struct http_req *req, struct http_resp *resp);

/**
 * Forget every endpoint's pause (see http_perform): for tests that reuse
 * one server across cases.  The daemon never needs it.
 */
void http_pause_forget(void);

/**
 * Map a CURLcode (as int) to -errno: 0 for CURLE_OK; timeout ETIMEDOUT;
 * resolve EHOSTUNREACH; connect ECONNREFUSED; file size exceeded EFBIG;
 * aborted by callback EINTR; out of memory ENOMEM; anything else EIO.
 */
int http_curl_to_errno(int curlcode);
/**
 * Map a final HTTP status to 0 (2xx) or -errno: 400 EINVAL, 401/403
 * EACCES, 404/410 ENOENT, 408 ETIMEDOUT, 409/412 EEXIST, 413 EFBIG,
 * 416 ERANGE, 429 EAGAIN, other 4xx EINVAL, 501 ENOSYS, other 5xx EAGAIN,
 * 0/1xx/3xx and anything else EIO.
 */
int http_status_to_errno(long status);

/**
 * Copy `url` into `out` (size `outsz`, always NUL-terminated) without the
 * user-info part ("user:pw@") and without the query string, so that it can
 * be logged.  Returns `out`.
 */
char *http_redact_url(const char *url, char *out, size_t outsz);

/**
 * Check a CA bundle (ca_file=) before it is used: a readable file holding
 * at least one PEM certificate.  0, or -errno with a human reason in `why`
 * ("No such file or directory", "holds no PEM certificate").
 */
int http_ca_file_check(const char *path, char *why, size_t whylen);

/** Statistics for .stfs/stats (atomic counters). */
struct http_stats {
	uint64_t requests, retries, errors, timeouts, bytes_in;
	uint64_t latency_us_sum;
	/* requests not sent because their endpoint was paused (see
	 * http_perform); each also counts in errors */
	uint64_t paused;
};
void http_get_stats(struct http_stats *out);

#endif
