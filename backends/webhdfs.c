/*
 * webhdfs — the HDFS backend, over the namenode's WebHDFS REST API
 * (libcurl + jansson: no JVM, no Hadoop client on the mounting host).
 *
 *   hdfs://nn[:8020]/path/     the namenode's HTTP port: hdfs_http_port
 *                              (9870); the RPC port of the URI is ignored
 *   webhdfs://nn[:9870]/path/  http, the port as given
 *   swebhdfs://nn[:9871]/path/ https (ca_file for a private CA: checked
 *                              at init; a refused certificate is logged
 *                              with the trust it was checked against)
 *
 * `namenodes = h1:p1,h2:p2` (HTTP addresses, as set by hand or imported
 * from a seatunnel.yaml's HA keys) replaces the URI's host, which is then
 * the nameservice's name.  README "HDFS".
 *
 * list_page() is one LISTSTATUS_BATCH page, the cursor being the last name
 * handed out (`startafter`: Hadoop 3.5 ignores the documented spelling
 * `startAfter`); a namenode that lacks LISTSTATUS_BATCH is asked LISTSTATUS
 * from then on.  Recursive listings walk the directories in one call.
 * Sizes and mtimes come from the listing.  read() is OPEN with offset and
 * length, following the 307 to the datanode; a real namenode refuses an
 * offset at or past the end of a non-empty file (403), so such a read is
 * answered 0 after a GETFILESTATUS confirms it.  remove() is DELETE
 * recursive=false; rmdir() checks the path is a directory first.
 *
 * RemoteException names map to errno in webhdfs_json's one table.  A
 * StandbyException, or a namenode that cannot be reached, makes the call
 * go to the next namenode; the one that answered is remembered for the
 * next calls.  When a whole round answered standby (the moment of a
 * failover) the call pauses WH_ROUND_PAUSE_MS and goes round again.  Each
 * namenode tried gets the deadline (timeout) once: a call lasts at most
 * timeout × the number of namenodes.  A namenode that did not answer
 * (deadline, refused) is not asked again for one timeout, by any call or
 * backend: http_perform's pause, per namenode, so the next one is asked at
 * once (a datanode's failure after the 307 pauses nothing).
 *
 * Auth: simple (user.name = hdfs_user, else $HADOOP_USER_NAME, else the
 * daemon's user), or Kerberos when kerberos_keytab is set: SPNEGO through
 * libcurl's GSS-API negotiate with the process's identity (krb.h, set up
 * in init, before threads).  Once authenticated, a delegation token
 * (GETDELEGATIONTOKEN, renewer = the principal's short name) is sent as
 * `delegation=` instead (the namenode's 307 to a datanode carries one
 * too); it is renewed (RENEWDELEGATIONTOKEN) at half its remaining life,
 * and dropped and fetched again when a namenode refuses it.  When no
 * token can be had, calls go on with SPNEGO alone.  Nothing secret is
 * logged: URLs are logged without their query, the token nowhere.
 *
 * A read that hit the deadline fails again at once when the kernel asks
 * for the same range within a second (it re-reads a failed page by
 * itself, and one read(2) must not wait for two deadlines).
 *
 * Threads: priv is immutable after init except `active` (atomic),
 * `no_batch` (atomic, set once), the timed-out-read memo (memo_lock) and
 * the delegation token (tok_lock, held while it is fetched or renewed).
 */
#include "backends/backend.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "backends/http.h"
#include "backends/krb.h"
#include "util/log.h"
#include "util/relpath.h"
#include "backends/webhdfs_json.h"

#define WH_MAX_NN	  8
#define WH_HTTP_PORT	  9870
#define WH_HTTPS_PORT	  9871
#define WH_URL_MAX	  16384
#define WH_MAX_DEPTH	  64
#define WH_ROUND_PAUSE_MS 200
#define WH_ERR_BODY	  ((size_t)64 << 10)

struct wh_priv {
	char *nn[WH_MAX_NN]; /* "http://host:port" */
	unsigned n_nn;
	char *root; /* the namespace's absolute path, "/…/" */
	char *user; /* user.name, URL-encoded, or NULL */
	char *ca_file;
	unsigned timeout_ms, connect_ms, retries;
	int active;   /* index into nn, atomic */
	int no_batch; /* the namenode lacks LISTSTATUS_BATCH, atomic */
	/* the last read that hit the deadline, under memo_lock */
	pthread_mutex_t memo_lock;
	bool memo_init;
	char *memo_path;
	off_t memo_off;
	size_t memo_len;
	int64_t memo_until_ms;
	/* Kerberos: SPNEGO, then a delegation token (under tok_lock) */
	bool krb;
	char *krb_principal, *krb_keytab; /* for logs and .stfs/config */
	pthread_mutex_t tok_lock;
	bool tok_init;
	char *token;		/* urlString, a secret; NULL: none held */
	int64_t tok_expiry_ms;	/* wall clock, from RENEWDELEGATIONTOKEN */
	int64_t tok_renew_mono; /* renew at (monotonic) */
	int64_t tok_retry_mono; /* no fetch before (after a failure) */
	uint64_t tok_fetches, tok_renewals;
};

/* ---- URLs --------------------------------------------------------------- */

/* percent-encode `s` (keeping '/' when `keep_slash`) onto b */
static int enc(struct buf *b, const char *s, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	int rc = 0;

	for (; *s && !rc; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || c == '-' || c == '.' || c == '_' ||
		    c == '~' || (keep_slash && c == '/')) {
			rc = buf_append(b, s, 1);
		} else {
			char e[3] = {'%', hex[c >> 4], hex[c & 15]};

			rc = buf_append(b, e, 3);
		}
	}
	return rc;
}

/*
 * namenode `i`'s URL of `path` (relative to the namespace) for `op`, with
 * `extra` ("&k=v", already encoded) appended.  0 or -ENAMETOOLONG/-ENOMEM.
 */
static int wh_url(const struct wh_priv *wp, unsigned i, const char *path,
		  const char *op, const char *extra, const char *token,
		  struct buf *url)
{
	int rc;

	buf_init(url, WH_URL_MAX);
	rc = buf_printf(url, "%s/webhdfs/v1", wp->nn[i]);
	if (!rc)
		rc = enc(url, wp->root, true);
	if (!rc)
		rc = enc(url, path, true);
	if (!rc)
		rc = buf_printf(url, "?op=%s", op);
	/* with Kerberos the identity is SPNEGO's or the token's: a user.name
	 * beside a delegation token is refused */
	if (!rc && token)
		rc = buf_printf(url, "&delegation=%s", token);
	else if (!rc && wp->user && !wp->krb)
		rc = buf_printf(url, "&user.name=%s", wp->user);
	if (!rc && extra)
		rc = buf_puts(url, extra);
	if (rc) {
		buf_release(url);
		return rc == -EFBIG ? -ENAMETOOLONG : rc;
	}
	return 0;
}

/* ---- requests ----------------------------------------------------------- */

struct wh_call {
	const char *op;	    /* "LISTSTATUS_BATCH" */
	const char *method; /* "GET", "DELETE" */
	const char *path;   /* relative to the namespace */
	const char *extra;  /* "&k=v" or NULL */
	size_t max_body;
	bool follow; /* OPEN: follow the 307 to the datanode */
};

static void sleep_ms(int64_t ms)
{
	struct timespec ts = {.tv_sec = ms / 1000,
			      .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static bool transport_failover(int rc)
{
	return rc == -ECONNREFUSED || rc == -EHOSTUNREACH || rc == -ETIMEDOUT ||
	       rc == -EIO;
}

/*
 * Perform `c` on the active namenode, failing over to the next ones on a
 * StandbyException or a transport failure.  Returns what http_perform()
 * returned for the last namenode tried, with *resp its answer (release
 * it).  *exc receives the RemoteException of a non-2xx answer.
 */
static int wh_perform_nn(struct wh_priv *wp, const struct wh_call *c,
			 const char *token, struct http_resp *resp,
			 struct whj_error *exc)
{
	int start = __atomic_load_n(&wp->active, __ATOMIC_RELAXED);
	int64_t deadline = mono_ms() + (int64_t)wp->timeout_ms * wp->n_nn;
	bool standby_seen = false;
	int rc = -EIO;

	memset(exc, 0, sizeof(*exc));
	http_resp_init(resp);
	for (unsigned k = 0;; k++) {
		unsigned i = ((unsigned)start + k) % wp->n_nn;
		int64_t left = deadline - mono_ms();
		unsigned flags = 0;
		struct buf url;
		struct http_req req = {
			.method = c->method,
			.timeout_ms = wp->timeout_ms,
			.connect_timeout_ms = wp->connect_ms,
			.retries = wp->retries,
			.max_body = c->max_body,
			.ca_file = wp->ca_file,
			.follow_location = c->follow,
			.negotiate = wp->krb && !token,
			.pause_unreachable = true,
		};

		if (k && i == (unsigned)start) {
			/*
			 * A whole round without an active namenode: during a
			 * failover both are standby for a moment; wait and
			 * go round again while the deadline allows.
			 */
			if (!standby_seen || left <= WH_ROUND_PAUSE_MS)
				break;
			standby_seen = false;
			sleep_ms(WH_ROUND_PAUSE_MS);
			left = deadline - mono_ms();
		}
		if (left <= 0)
			break;
		if (left < (int64_t)req.timeout_ms)
			req.timeout_ms = (unsigned)left;
		rc = wh_url(wp, i, c->path, c->op, c->extra, token, &url);
		if (rc < 0)
			return rc;
		req.url = url.data;
		http_resp_release(resp);
		http_resp_init(resp);
		memset(exc, 0, sizeof(*exc));
		rc = http_perform(&req, resp);
		buf_release(&url);
		if (rc == -EINTR || rc == -ENOMEM || rc == -EFBIG)
			return rc;
		if (rc < 0) {
			if (wp->n_nn > 1 && transport_failover(rc)) {
				log_warn("webhdfs: namenode %s: %s; trying the "
					 "next one",
					 wp->nn[i],
					 resp->error[0] ? resp->error
							: strerror(-rc));
				continue;
			}
			return rc;
		}
		if (resp->status >= 200 && resp->status < 300) {
			__atomic_store_n(&wp->active, (int)i, __ATOMIC_RELAXED);
			return 0;
		}
		if (resp->body.len)
			whj_parse_error(resp->body.data, resp->body.len, exc);
		whj_exception_errno(exc->exception, &flags);
		if ((flags & WHJ_FAILOVER) && wp->n_nn > 1) {
			log_info("webhdfs: namenode %s is standby; trying the "
				 "next one",
				 wp->nn[i]);
			standby_seen = true;
			continue;
		}
		/* an answer from a serving namenode: it is the active one */
		__atomic_store_n(&wp->active, (int)i, __ATOMIC_RELAXED);
		return 0;
	}
	return rc;
}

/* ---- delegation tokens (Kerberos) --------------------------------------- */

#define TOK_RETRY_MS 5000

static int64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* forget the token held (tok_lock held) */
static void tok_clear(struct wh_priv *wp)
{
	if (wp->token) {
		explicit_bzero(wp->token, strlen(wp->token));
		free(wp->token);
	}
	wp->token = NULL;
	wp->tok_expiry_ms = 0;
}

/*
 * RENEWDELEGATIONTOKEN of the token held, by SPNEGO (tok_lock held): the
 * new expiry, and the next renewal at half the time left.  0 or -errno.
 */
static int tok_renew(struct wh_priv *wp)
{
	struct whj_error exc;
	struct http_resp resp;
	struct buf extra;
	struct wh_call c = {
		.op = "RENEWDELEGATIONTOKEN",
		.method = "PUT",
		.path = "",
		.max_body = 4096,
	};
	int64_t exp = 0, left;
	int rc;

	buf_init(&extra, WH_URL_MAX);
	if (buf_printf(&extra, "&token=%s", wp->token) < 0) {
		buf_release(&extra);
		return -ENOMEM;
	}
	c.extra = extra.data;
	rc = wh_perform_nn(wp, &c, NULL, &resp, &exc);
	if (rc == 0 && resp.status == 200 &&
	    whj_parse_long(resp.body.data, resp.body.len, &exp) == 0) {
		wp->tok_expiry_ms = exp;
		left = exp - wall_ms();
		wp->tok_renew_mono =
			mono_ms() + (left > 2000 ? left / 2 : 1000);
		wp->tok_renewals++;
		log_debug(
			"webhdfs: delegation token renewed, expires in %lld s",
			(long long)(left / 1000));
	} else {
		log_info("webhdfs: the delegation token could not be renewed "
			 "(HTTP %ld%s%s); fetching a new one",
			 resp.status, exc.exception[0] ? " " : "",
			 exc.exception);
		rc = -EACCES;
	}
	explicit_bzero(extra.data, extra.len);
	buf_release(&extra);
	http_resp_release(&resp);
	return rc;
}

/* GETDELEGATIONTOKEN by SPNEGO, then a renewal for its expiry (tok_lock
 * held).  0 or -errno; a failure is retried after TOK_RETRY_MS. */
static int tok_fetch(struct wh_priv *wp)
{
	struct whj_error exc;
	struct http_resp resp;
	char extra[320], tok[WHJ_TOKEN_MAX + 1];
	struct wh_call c = {
		.op = "GETDELEGATIONTOKEN",
		.method = "GET",
		.path = "",
		.extra = extra,
		.max_body = 16384,
	};
	const char *u = krb_client_user();
	int rc;

	snprintf(extra, sizeof(extra), "&renewer=%.256s", u ? u : "");
	if (!u)
		c.extra = NULL;
	rc = wh_perform_nn(wp, &c, NULL, &resp, &exc);
	if (rc == 0 && resp.status == 200 &&
	    whj_parse_token(resp.body.data, resp.body.len, tok, sizeof(tok)) ==
		    0) {
		wp->token = strdup(tok);
		explicit_bzero(tok, sizeof(tok));
		rc = wp->token ? 0 : -ENOMEM;
	} else {
		/* the call itself logs nothing here: the data call that
		 * follows, by SPNEGO, says what is wrong */
		rc = -EACCES;
	}
	if (resp.body.len)
		explicit_bzero(resp.body.data, resp.body.len);
	http_resp_release(&resp);
	if (rc == 0) {
		wp->tok_fetches++;
		wp->tok_renew_mono = mono_ms() + 1000;
		if (tok_renew(wp) < 0) {
			/* usable even if we cannot tell its expiry: renew
			 * again in a minute */
			wp->tok_renew_mono = mono_ms() + 60000;
		}
		log_info("webhdfs: delegation token obtained");
	} else {
		wp->tok_retry_mono = mono_ms() + TOK_RETRY_MS;
	}
	return rc;
}

/* a copy of the token to use now (fetched or renewed when due), or NULL */
static char *tok_get(struct wh_priv *wp)
{
	char *t = NULL;

	pthread_mutex_lock(&wp->tok_lock);
	if (wp->token && mono_ms() >= wp->tok_renew_mono && tok_renew(wp) < 0)
		tok_clear(wp);
	if (!wp->token && mono_ms() >= wp->tok_retry_mono)
		(void)tok_fetch(wp);
	if (wp->token)
		t = strdup(wp->token);
	pthread_mutex_unlock(&wp->tok_lock);
	return t;
}

/* drop the token `t` (if still the one held): a namenode refused it */
static void tok_refused(struct wh_priv *wp, const char *t)
{
	pthread_mutex_lock(&wp->tok_lock);
	if (wp->token && !strcmp(wp->token, t)) {
		log_info("webhdfs: the namenode refused the delegation token "
			 "(expired or cancelled); fetching a new one");
		tok_clear(wp);
		wp->tok_retry_mono = 0;
	}
	pthread_mutex_unlock(&wp->tok_lock);
}

/* whether an answer to a call with a token is a refusal of the token */
static bool token_refused(const struct http_resp *r, const struct whj_error *e)
{
	if (r->status == 401)
		return true;
	return r->status == 403 &&
	       (strstr(e->exception, "InvalidToken") ||
		(!strcmp(e->exception, "SecurityException") &&
		 strstr(e->message, "oken")));
}

static void free_secret(char *t)
{
	if (t) {
		explicit_bzero(t, strlen(t));
		free(t);
	}
}

/*
 * Perform `c` (wh_perform_nn) with the delegation token when Kerberos is
 * on; a refused token is dropped and the call made once more with a new
 * one (or by SPNEGO).
 */
static int wh_perform(struct wh_priv *wp, const struct wh_call *c,
		      struct http_resp *resp, struct whj_error *exc)
{
	char *t = wp->krb ? tok_get(wp) : NULL;
	int rc = wh_perform_nn(wp, c, t, resp, exc);

	if (t && rc == 0 && token_refused(resp, exc)) {
		tok_refused(wp, t);
		free_secret(t);
		t = tok_get(wp);
		http_resp_release(resp);
		rc = wh_perform_nn(wp, c, t, resp, exc);
	}
	free_secret(t);
	return rc;
}

/*
 * -errno for a finished call (0 for 2xx).  Logs a failure (not a plain
 * missing path) with the exception and message, and notes health.
 */
static int wh_result(struct backend *be, const struct wh_call *c, int rc,
		     const struct http_resp *resp, const struct whj_error *exc)
{
	const struct wh_priv *wp = be->priv;
	unsigned flags = 0;
	int err;

	if (rc < 0 && resp->tls_refused) {
		/* which trust was used: the fix is ca_file= (README "HDFS") */
		log_warn("webhdfs: %s '%s': %s; the namenode's (or its "
			 "datanode's) certificate is refused with %s%s%s",
			 c->op, c->path, resp->error,
			 wp->ca_file ? "the CA file " : "the system CA store",
			 wp->ca_file ? wp->ca_file : "",
			 wp->ca_file ? " (ca_file=)"
				     : " (ca_file= names a private CA)");
		be_note_error(be, rc, "%s %s: %s (ca_file %s)", c->op, c->path,
			      resp->error,
			      wp->ca_file ? wp->ca_file : "none: system store");
		return rc;
	}
	if (rc < 0) {
		log_warn("webhdfs: %s '%s': %s", c->op, c->path,
			 resp->error[0] ? resp->error : strerror(-rc));
		be_note_error(be, rc, "%s %s: %s", c->op, c->path,
			      resp->error[0] ? resp->error : strerror(-rc));
		return rc;
	}
	if (resp->status >= 200 && resp->status < 300) {
		be_note_ok(be);
		return 0;
	}
	err = whj_exception_errno(exc->exception, &flags);
	if (flags & (WHJ_FAILOVER | WHJ_RETRY)) {
		/* no namenode could serve within the deadline: a blocking
		 * read(2) does not expect EAGAIN */
		err = -EIO;
	} else if (!err) {
		/* 5xx that outlived the retries is EIO (see s3.c) */
		if (resp->status >= 500 && resp->status < 600 &&
		    resp->status != 501)
			err = -EIO;
		else
			err = http_status_to_errno(resp->status);
	}
	if (err == -ENOENT) {
		be_note_ok(be); /* the namenode answered */
		return err;
	}
	if (resp->status == 401 && wp->krb)
		log_warn("webhdfs: %s '%s': HTTP 401: the namenode refused "
			 "Kerberos authentication as %s (keytab %s)",
			 c->op, c->path,
			 wp->krb_principal ? wp->krb_principal
					   : "the keytab's principal",
			 wp->krb_keytab);
	else if (resp->status == 401 && !exc->exception[0])
		log_warn("webhdfs: %s '%s': HTTP 401, authentication required "
			 "(a kerberized cluster?)",
			 c->op, c->path);
	else
		log_warn("webhdfs: %s '%s': HTTP %ld%s%s%s%s (%s)", c->op,
			 c->path, resp->status, exc->exception[0] ? " " : "",
			 exc->exception, exc->message[0] ? ": " : "",
			 exc->message, strerror(-err));
	be_note_error(be, err, "%s %s: HTTP %ld %s", c->op, c->path,
		      resp->status, exc->exception);
	return err;
}

/* one call, its result, and (on success) the body kept in *resp */
static int wh_do(struct backend *be, const struct wh_call *c,
		 struct http_resp *resp, struct whj_error *exc)
{
	int rc = wh_perform(be->priv, c, resp, exc);

	return wh_result(be, c, rc, resp, exc);
}

/* ---- init / destroy ----------------------------------------------------- */

static void wh_destroy(struct backend *be)
{
	struct wh_priv *wp = be->priv;

	if (!wp)
		return;
	for (unsigned i = 0; i < wp->n_nn; i++)
		free(wp->nn[i]);
	wp->n_nn = 0;
	free(wp->memo_path);
	wp->memo_path = NULL;
	if (wp->memo_init)
		pthread_mutex_destroy(&wp->memo_lock);
	wp->memo_init = false;
	free(wp->root);
	free(wp->user);
	free(wp->ca_file);
	wp->root = wp->user = wp->ca_file = NULL;
	if (wp->tok_init) {
		tok_clear(wp);
		pthread_mutex_destroy(&wp->tok_lock);
	}
	wp->tok_init = false;
	free(wp->krb_principal);
	free(wp->krb_keytab);
	wp->krb_principal = wp->krb_keytab = NULL;
}

/* add "proto://host:port" for a "host[:port]" (or a full http(s) URL) */
static int add_nn(struct wh_priv *wp, const char *proto, const char *s,
		  size_t n, unsigned defport, bool force_port)
{
	const char *colon;
	size_t hlen;
	struct buf b;
	unsigned port = defport;
	char *url;

	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n > 7 && !strncasecmp(s, "http://", 7)) {
		proto = "http";
		s += 7, n -= 7;
	} else if (n > 8 && !strncasecmp(s, "https://", 8)) {
		proto = "https";
		s += 8, n -= 8;
	}
	while (n && s[n - 1] == '/')
		n--;
	if (!n || wp->n_nn >= WH_MAX_NN)
		return -EINVAL;
	colon = memchr(s, ':', n);
	hlen = colon ? (size_t)(colon - s) : n;
	if (!hlen)
		return -EINVAL;
	for (size_t i = 0; i < hlen; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '.' && s[i] != '_')
			return -EINVAL;
	if (colon && !force_port) {
		char *end;
		unsigned long p;
		char num[8];
		size_t plen = n - hlen - 1;

		if (!plen || plen >= sizeof(num))
			return -EINVAL;
		memcpy(num, colon + 1, plen);
		num[plen] = '\0';
		errno = 0;
		p = strtoul(num, &end, 10);
		if (errno || *end || p < 1 || p > 65535 ||
		    !isdigit((unsigned char)num[0]))
			return -EINVAL;
		port = (unsigned)p;
	}
	buf_init(&b, 512);
	if (buf_printf(&b, "%s://%.*s:%u", proto, (int)hlen, s, port) < 0) {
		buf_release(&b);
		return -EINVAL;
	}
	url = buf_detach(&b, NULL);
	if (!url)
		return -ENOMEM;
	wp->nn[wp->n_nn++] = url;
	return 0;
}

static int wh_user(struct wh_priv *wp, const struct stfs_conf *conf)
{
	const char *u = conf && conf->hdfs_user && *conf->hdfs_user
				? conf->hdfs_user
				: conf_env_get(conf ? &conf->env : NULL,
					       "HADOOP_USER_NAME");
	struct passwd pw, *res = NULL;
	char pwbuf[1024];
	struct buf b;

	if ((!u || !*u) &&
	    getpwuid_r(geteuid(), &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		u = res->pw_name;
	if (!u || !*u)
		return 0;
	buf_init(&b, 1024);
	if (enc(&b, u, false) < 0) {
		buf_release(&b);
		return -EINVAL;
	}
	wp->user = buf_detach(&b, NULL);
	return wp->user ? 0 : -ENOMEM;
}

/*
 * Kerberos (kerberos_keytab set): the process's identity (krb.h).  A keytab
 * that gets no ticket (a stale key, an unknown principal, no KDC) is one
 * log line and a health error; the mount goes on and its calls fail
 * EACCES (401).  -EINVAL when the keytab cannot be read.
 */
static int wh_krb_init(struct backend *be, const struct stfs_conf *conf)
{
	struct wh_priv *wp = be->priv;
	char why[256];
	int rc;

	if (pthread_mutex_init(&wp->tok_lock, NULL) != 0)
		return -ENOMEM;
	wp->tok_init = true;
	if (!conf || !conf->kerberos_keytab || !*conf->kerberos_keytab) {
		if (conf && conf->kerberos_principal &&
		    *conf->kerberos_principal) {
			log_err("webhdfs: kerberos_principal without "
				"kerberos_keytab");
			return -EINVAL;
		}
		return 0;
	}
	wp->krb = true;
	wp->krb_keytab = strdup(conf->kerberos_keytab);
	if (conf->kerberos_principal && *conf->kerberos_principal)
		wp->krb_principal = strdup(conf->kerberos_principal);
	if (!wp->krb_keytab ||
	    (conf->kerberos_principal && *conf->kerberos_principal &&
	     !wp->krb_principal))
		return -ENOMEM;
	why[0] = '\0';
	rc = krb_client_init(wp->krb_principal, wp->krb_keytab, why,
			     sizeof(why));
	if (rc < 0) {
		log_err("webhdfs: Kerberos: %s", why);
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	if (rc > 0) {
		log_err("webhdfs: Kerberos: %s for %s with keytab %s; calls "
			"will be refused (EACCES)",
			why,
			wp->krb_principal ? wp->krb_principal
					  : "the keytab's principal",
			wp->krb_keytab);
		be_note_error(be, -EACCES, "Kerberos: %s", why);
	}
	return 0;
}

static int wh_init(struct backend *be, const char *uri,
		   const struct stfs_conf *conf)
{
	struct wh_priv *wp = be->priv;
	const char *sep = strstr(uri, "://"), *auth, *path;
	const char *proto = "http";
	unsigned defport = WH_HTTP_PORT;
	bool hdfs = false, force = false;
	size_t slen, alen;
	struct buf b;
	int rc;

	if (pthread_mutex_init(&wp->memo_lock, NULL) != 0)
		return -ENOMEM;
	wp->memo_init = true;
	if (!sep)
		goto bad;
	slen = (size_t)(sep - uri);
	if (slen == 4 && !strncasecmp(uri, "hdfs", 4)) {
		hdfs = true;
	} else if (slen == 8 && !strncasecmp(uri, "swebhdfs", 8)) {
		proto = "https";
		defport = WH_HTTPS_PORT;
	} else if (!(slen == 7 && !strncasecmp(uri, "webhdfs", 7))) {
		goto bad;
	}
	auth = sep + 3;
	path = strchr(auth, '/');
	if (!path)
		path = auth + strlen(auth);
	alen = (size_t)(path - auth);
	if (hdfs) {
		/* the URI names the RPC address: HTTP is another port */
		if (conf && conf->hdfs_http_port)
			defport = conf->hdfs_http_port;
		force = true;
	}
	wp->timeout_ms = conf && conf->timeout_ms ? conf->timeout_ms
						  : conf_default_u("timeout");
	wp->connect_ms = conf ? conf->connect_timeout_ms : 0;
	wp->retries = conf ? conf->retries : conf_default_u("retries");
	if (conf && conf->namenodes && *conf->namenodes) {
		const char *s = conf->namenodes;

		while (*s) {
			size_t n = strcspn(s, ",");

			if (n &&
			    add_nn(wp, proto, s, n,
				   conf->hdfs_http_port ? conf->hdfs_http_port
							: defport,
				   false) < 0) {
				log_err("webhdfs: bad namenode '%.*s' in "
					"namenodes (host:port, at most %d)",
					(int)n, s, WH_MAX_NN);
				return -EINVAL;
			}
			s += n;
			if (*s == ',')
				s++;
		}
	} else if (add_nn(wp, proto, auth, alen, defport, force) < 0) {
		goto bad;
	}
	if (!wp->n_nn)
		goto bad;
	/* the namespace path, with one leading and one trailing '/' */
	while (*path == '/')
		path++;
	buf_init(&b, WH_URL_MAX);
	rc = buf_printf(&b, "/%s", path);
	if (!rc && b.data[b.len - 1] != '/')
		rc = buf_puts(&b, "/");
	if (rc) {
		buf_release(&b);
		goto bad;
	}
	wp->root = buf_detach(&b, NULL);
	if (!wp->root)
		return -ENOMEM;
	if (conf && conf->ca_file && *conf->ca_file) {
		char why[128];

		/* else every call fails alike, and the mount with them */
		if (http_ca_file_check(conf->ca_file, why, sizeof(why)) < 0) {
			log_err("webhdfs: ca_file %s: %s", conf->ca_file, why);
			return -EINVAL;
		}
		if (!(wp->ca_file = strdup(conf->ca_file)))
			return -ENOMEM;
	}
	rc = wh_user(wp, conf);
	if (rc < 0)
		return rc;
	rc = wh_krb_init(be, conf);
	if (rc < 0)
		return rc;
	log_debug("webhdfs: %s (%u namenode%s, first %s), user %s", wp->root,
		  wp->n_nn, wp->n_nn == 1 ? "" : "s", wp->nn[0],
		  wp->krb    ? "(Kerberos)"
		  : wp->user ? wp->user
			     : "(none)");
	return 0;
bad:
	log_err("webhdfs: '%s' is not hdfs://HOST[:PORT]/PATH/, "
		"webhdfs://HOST[:PORT]/PATH/ or swebhdfs://HOST[:PORT]/PATH/",
		uri);
	return -EINVAL;
}

/* ---- list --------------------------------------------------------------- */

/* One listing page of `dir` (relative) after `after` (NULL: the first). */
static int wh_list_raw(struct backend *be, const char *dir, const char *after,
		       struct whj_list *out)
{
	struct wh_priv *wp = be->priv;
	struct whj_error exc;
	struct http_resp resp;
	struct buf extra;
	struct wh_call c = {
		.op = "LISTSTATUS_BATCH",
		.method = "GET",
		.path = dir,
		.max_body = WHJ_MAX,
	};
	int rc;

	memset(out, 0, sizeof(*out));
	buf_init(&extra, WH_URL_MAX);
	if (after && (buf_puts(&extra, "&startafter=") < 0 ||
		      enc(&extra, after, false) < 0)) {
		buf_release(&extra);
		return -ENAMETOOLONG;
	}
	c.extra = extra.data;
	if (__atomic_load_n(&wp->no_batch, __ATOMIC_RELAXED)) {
		c.op = "LISTSTATUS";
		c.extra = NULL;
	}
	rc = wh_perform(wp, &c, &resp, &exc);
	if (rc == 0 && resp.status == 400 &&
	    !strcmp(c.op, "LISTSTATUS_BATCH") &&
	    !strcmp(exc.exception, "IllegalArgumentException") &&
	    strstr(exc.message, "op")) {
		/* an old namenode: no LISTSTATUS_BATCH, one whole listing */
		log_info("webhdfs: the namenode has no LISTSTATUS_BATCH; "
			 "using LISTSTATUS");
		__atomic_store_n(&wp->no_batch, 1, __ATOMIC_RELAXED);
		http_resp_release(&resp);
		c.op = "LISTSTATUS";
		c.extra = NULL;
		rc = wh_perform(wp, &c, &resp, &exc);
	}
	rc = wh_result(be, &c, rc, &resp, &exc);
	if (rc == 0 && !strcmp(c.op, "LISTSTATUS") && after) {
		/* the whole listing came with the first page */
		rc = whj_parse_list("{\"FileStatuses\":{\"FileStatus\":[]}}",
				    33, out);
	} else if (rc == 0) {
		rc = whj_parse_list(resp.body.data, resp.body.len, out);
		if (rc < 0) {
			log_warn("webhdfs: %s '%s': unparsable answer (%zu "
				 "bytes)",
				 c.op, dir, resp.body.len);
			be_note_error(be, -EIO, "%s %s: bad JSON", c.op, dir);
			rc = rc == -ENOMEM ? rc : -EIO;
		} else if (out->n_bad) {
			log_warn("webhdfs: %s '%s': %zu malformed entries "
				 "skipped",
				 c.op, dir, out->n_bad);
		}
	}
	http_resp_release(&resp);
	buf_release(&extra);
	return rc;
}

/* a listing of a file holds the file itself, with an empty name */
static bool list_is_file(const struct whj_list *l)
{
	return l->n == 1 && !l->ents[0].name[0];
}

static struct be_attr to_attr(const struct whj_entry *e)
{
	return (struct be_attr){
		.type = e->type == WHJ_DIR ? BE_DIR : BE_FILE,
		.size = e->length,
		.mtime_ns = e->mtime_ms * 1000000LL,
	};
}

/* a queue of directories still to walk (relative paths) */
struct dirq {
	char **v;
	size_t n, cap;
};

static int dirq_push(struct dirq *q, const char *base, const char *name)
{
	struct buf b;
	char *p;

	if (q->n == q->cap) {
		size_t nc = q->cap ? q->cap * 2 : 16;
		char **nv = realloc(q->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		q->v = nv;
		q->cap = nc;
	}
	buf_init(&b, WH_URL_MAX);
	if (buf_printf(&b, "%s%s%s", base, *base ? "/" : "", name) < 0) {
		buf_release(&b);
		return -ENAMETOOLONG;
	}
	p = buf_detach(&b, NULL);
	if (!p)
		return -ENOMEM;
	q->v[q->n++] = p;
	return 0;
}

static unsigned depth(const char *rel)
{
	unsigned n = *rel ? 1 : 0;

	for (; *rel; rel++)
		n += *rel == '/';
	return n;
}

/*
 * Every file below `dir`, reported as "sub/dir/name", all pages of all
 * directories in this one call.  Directories that vanish meanwhile are
 * skipped.
 */
static int wh_list_recursive(struct backend *be, const char *dir,
			     be_fill_fn fill, void *cookie)
{
	size_t dlen = strlen(dir), next = 0;
	struct dirq q = {0};
	bool stop = false;
	int rc;

	rc = dirq_push(&q, dir, "");
	if (rc == 0 && dlen == 0)
		q.v[0][0] = '\0';
	else if (rc == 0)
		q.v[0][dlen] = '\0'; /* drop the "/" of an empty name */
	while (rc == 0 && !stop && next < q.n) {
		const char *d = q.v[next];
		char *after = NULL, *prev = NULL;

		do {
			struct whj_list l;

			rc = wh_list_raw(be, d, after, &l);
			free(after);
			after = NULL;
			if (rc == -ENOENT && next > 0) {
				rc = 0; /* removed while we walked */
				break;
			}
			if (rc < 0)
				break;
			if (list_is_file(&l)) {
				whj_list_release(&l);
				rc = next ? 0 : -ENOTDIR;
				break;
			}
			for (size_t i = 0; i < l.n && !stop && !rc; i++) {
				const struct whj_entry *e = &l.ents[i];
				const char *rel = d + dlen + (dlen ? 1 : 0);
				struct be_attr a = to_attr(e);
				struct buf nb;

				if (e->type == WHJ_DIR) {
					if (depth(rel) >= WH_MAX_DEPTH) {
						log_warn("webhdfs: '%s/%s' is "
							 "deeper than %d "
							 "levels; not walked",
							 d, e->name,
							 WH_MAX_DEPTH);
						continue;
					}
					rc = dirq_push(&q, d, e->name);
					continue;
				}
				if (e->type != WHJ_FILE)
					continue;
				buf_init(&nb, WH_URL_MAX);
				if (buf_printf(&nb, "%s%s%s", rel,
					       *rel ? "/" : "", e->name) < 0) {
					buf_release(&nb);
					continue;
				}
				stop = fill(cookie, nb.data, &a) != 0;
				buf_release(&nb);
			}
			if (!rc && !stop && l.batch && l.remaining && l.n) {
				const char *last = l.ents[l.n - 1].name;

				if (prev && strcmp(last, prev) <= 0) {
					/* a page that does not advance would
					 * loop forever (be_list's check) */
					log_err("webhdfs: list of '%s' does "
						"not advance",
						d);
					rc = -EIO;
				} else if (!(after = strdup(last))) {
					rc = -ENOMEM;
				}
			}
			whj_list_release(&l);
			free(prev);
			prev = after ? strdup(after) : NULL;
			if (after && !prev)
				rc = -ENOMEM;
		} while (!rc && !stop && after);
		free(after);
		free(prev);
		next++;
	}
	for (size_t i = 0; i < q.n; i++)
		free(q.v[i]);
	free(q.v);
	return rc;
}

static int wh_list_page(struct backend *be, const char *dir, unsigned flags,
			const char *cursor, be_fill_fn fill, void *cookie,
			char **next)
{
	struct whj_list l;
	bool stop = false;
	int rc;

	*next = NULL;
	rc = relpath_check(dir);
	if (rc < 0)
		return rc;
	if (flags & BE_LIST_RECURSIVE) {
		if (cursor)
			return -EINVAL; /* one call walks everything */
		return wh_list_recursive(be, dir, fill, cookie);
	}
	rc = wh_list_raw(be, dir, cursor, &l);
	if (rc < 0)
		return rc;
	if (list_is_file(&l)) {
		whj_list_release(&l);
		return -ENOTDIR;
	}
	for (size_t i = 0; i < l.n && !stop; i++) {
		struct be_attr a = to_attr(&l.ents[i]);

		if (l.ents[i].type == WHJ_SYMLINK)
			continue;
		stop = fill(cookie, l.ents[i].name, &a) != 0;
	}
	if (!stop && l.batch && l.remaining && l.n) {
		*next = strdup(l.ents[l.n - 1].name);
		if (!*next)
			rc = -ENOMEM;
	}
	whj_list_release(&l);
	return rc;
}

/* ---- stat / read / delete ------------------------------------------------ */

static int wh_stat_raw(struct backend *be, const char *path,
		       struct whj_entry *e)
{
	struct whj_error exc;
	struct http_resp resp;
	struct wh_call c = {
		.op = "GETFILESTATUS",
		.method = "GET",
		.path = path,
		.max_body = 64 << 10,
	};
	int rc = wh_do(be, &c, &resp, &exc);

	if (rc == 0 && whj_parse_status(resp.body.data, resp.body.len, e) < 0) {
		log_warn("webhdfs: GETFILESTATUS '%s': unparsable answer",
			 path);
		be_note_error(be, -EIO, "GETFILESTATUS %s: bad JSON", path);
		rc = -EIO;
	}
	http_resp_release(&resp);
	return rc;
}

static int wh_stat(struct backend *be, const char *path, struct be_attr *out)
{
	struct whj_entry e;
	int rc;

	rc = relpath_check(path);
	if (rc < 0)
		return rc;
	rc = wh_stat_raw(be, path, &e);
	if (rc < 0)
		return rc;
	if (e.type == WHJ_SYMLINK)
		return -ENOENT; /* symlinks are invisible, as on local */
	*out = to_attr(&e);
	return 0;
}

#define MEMO_MS 1000

/* whether [off, off + size) of `path` timed out less than MEMO_MS ago */
static bool memo_hit(struct wh_priv *wp, const char *path, off_t off)
{
	bool hit;

	pthread_mutex_lock(&wp->memo_lock);
	hit = wp->memo_path && !strcmp(wp->memo_path, path) &&
	      off >= wp->memo_off && off - wp->memo_off < (off_t)wp->memo_len &&
	      mono_ms() < wp->memo_until_ms;
	pthread_mutex_unlock(&wp->memo_lock);
	return hit;
}

/* remember a timed-out read (rc -ETIMEDOUT), or forget `path`'s */
static void memo_note(struct wh_priv *wp, const char *path, off_t off,
		      size_t size, ssize_t rc)
{
	pthread_mutex_lock(&wp->memo_lock);
	if (rc == -ETIMEDOUT) {
		char *p = strdup(path);

		if (p) {
			free(wp->memo_path);
			wp->memo_path = p;
			wp->memo_off = off;
			wp->memo_len = size;
			wp->memo_until_ms = mono_ms() + MEMO_MS;
		}
	} else if (wp->memo_path && !strcmp(wp->memo_path, path)) {
		free(wp->memo_path);
		wp->memo_path = NULL;
	}
	pthread_mutex_unlock(&wp->memo_lock);
}

static ssize_t wh_read_range(struct backend *be, const char *path, void *buf,
			     size_t size, off_t off);

static ssize_t wh_read(struct backend *be, const char *path, void *buf,
		       size_t size, off_t off)
{
	struct wh_priv *wp = be->priv;
	ssize_t rc;

	rc = relpath_check(path);
	if (rc < 0)
		return rc;
	if (!*path)
		return -EISDIR;
	if (size == 0)
		return 0;
	if (memo_hit(wp, path, off))
		return -ETIMEDOUT;
	rc = wh_read_range(be, path, buf, size, off);
	memo_note(wp, path, off, size, rc);
	return rc;
}

static ssize_t wh_read_range(struct backend *be, const char *path, void *buf,
			     size_t size, off_t off)
{
	struct whj_error exc;
	struct http_resp resp;
	char extra[64];
	struct wh_call c = {
		.op = "OPEN",
		.method = "GET",
		.path = path,
		.extra = extra,
		/* room for an error body too: a RemoteException is longer
		 * than a small read */
		.max_body = size > WH_ERR_BODY ? size : WH_ERR_BODY,
		.follow = true,
	};
	ssize_t n;
	int rc;

	snprintf(extra, sizeof(extra), "&offset=%lld&length=%zu",
		 (long long)off, size);
	rc = wh_perform(be->priv, &c, &resp, &exc);
	if (rc == 0 && resp.status == 403 &&
	    !strcmp(exc.exception, "IOException") && off > 0) {
		/* the namenode refuses an offset at or past the end */
		struct whj_entry e;

		http_resp_release(&resp);
		rc = wh_stat_raw(be, path, &e);
		if (rc < 0)
			return rc;
		if (e.type == WHJ_FILE && (uint64_t)off >= e.length)
			return 0;
		rc = wh_perform(be->priv, &c, &resp, &exc);
	}
	rc = wh_result(be, &c, rc, &resp, &exc);
	if (rc < 0) {
		http_resp_release(&resp);
		return rc;
	}
	n = (ssize_t)(resp.body.len < size ? resp.body.len : size);
	if (n > 0)
		memcpy(buf, resp.body.data, (size_t)n);
	http_resp_release(&resp);
	return n;
}

static int wh_delete(struct backend *be, const char *path)
{
	struct whj_error exc;
	struct http_resp resp;
	struct wh_call c = {
		.op = "DELETE",
		.method = "DELETE",
		.path = path,
		.extra = "&recursive=false",
		.max_body = 64 << 10,
	};
	bool done = false;
	int rc = wh_do(be, &c, &resp, &exc);

	if (rc == 0 &&
	    whj_parse_boolean(resp.body.data, resp.body.len, &done) < 0) {
		log_warn("webhdfs: DELETE '%s': unparsable answer", path);
		rc = -EIO;
	} else if (rc == 0 && !done) {
		rc = -ENOENT; /* {"boolean":false}: nothing was there */
	}
	http_resp_release(&resp);
	return rc;
}

static int wh_remove(struct backend *be, const char *path)
{
	int rc = relpath_check(path);

	if (rc < 0)
		return rc;
	if (!*path)
		return -EISDIR;
	return wh_delete(be, path);
}

static int wh_rmdir(struct backend *be, const char *path)
{
	struct whj_entry e;
	int rc = relpath_check(path);

	if (rc < 0)
		return rc;
	if (!*path)
		return -EINVAL;
	/* DELETE would take a file too: make sure it is a directory */
	rc = wh_stat_raw(be, path, &e);
	if (rc < 0)
		return rc;
	if (e.type != WHJ_DIR)
		return -ENOTDIR;
	return wh_delete(be, path);
}

/* for .stfs/config: the namenodes, the one asked first, the user */
static int wh_describe(struct backend *be, struct buf *out)
{
	struct wh_priv *wp = be->priv;
	int active = __atomic_load_n(&wp->active, __ATOMIC_RELAXED);
	int rc = buf_puts(out, "hdfs_namenodes =");

	for (unsigned i = 0; i < wp->n_nn && !rc; i++)
		rc = buf_printf(out, " %s", wp->nn[i]);
	if (!rc)
		rc = buf_printf(out, "\nhdfs_active = %s\nhdfs_listing = %s\n",
				wp->nn[active],
				__atomic_load_n(&wp->no_batch, __ATOMIC_RELAXED)
					? "LISTSTATUS"
					: "LISTSTATUS_BATCH");
	if (!rc && wp->krb) {
		/* never the token itself */
		pthread_mutex_lock(&wp->tok_lock);
		rc = buf_printf(out,
				"hdfs_auth = kerberos (principal %s, keytab "
				"%s)\nhdfs_delegation_token = %s",
				wp->krb_principal ? wp->krb_principal
						  : "(the keytab's first)",
				wp->krb_keytab, wp->token ? "held" : "none");
		if (!rc && wp->token && wp->tok_expiry_ms) {
			time_t t = (time_t)(wp->tok_expiry_ms / 1000);
			struct tm tm;
			char when[32];

			gmtime_r(&t, &tm);
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
			rc = buf_printf(out, ", expires %s", when);
		}
		if (!rc)
			rc = buf_printf(out, " (%llu fetched, %llu renewals)\n",
					(unsigned long long)wp->tok_fetches,
					(unsigned long long)wp->tok_renewals);
		pthread_mutex_unlock(&wp->tok_lock);
	} else if (!rc) {
		rc = buf_puts(out, "hdfs_auth = simple\n");
	}
	return rc;
}

const struct be_ops be_webhdfs_ops = {
	.name = "webhdfs",
	.caps = BE_CAP_DELETE | BE_CAP_REMOTE,
	.priv_size = sizeof(struct wh_priv),
	.init = wh_init,
	.destroy = wh_destroy,
	.list_page = wh_list_page,
	.stat = wh_stat,
	.read = wh_read,
	.remove = wh_remove,
	.rmdir = wh_rmdir,
	.describe = wh_describe,
};
