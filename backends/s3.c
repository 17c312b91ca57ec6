/*
 * s3 — the object-store backend: Amazon S3, Aliyun OSS, Tencent COS and
 * Google Cloud Storage, all through their S3-compatible XML APIs with AWS
 * SigV4 (libcurl's CURLOPT_AWS_SIGV4, provider "aws:amz:<region>:s3").
 *
 *   s3://bucket/prefix/  s3a://  s3n://  oss://  cos://  cosn://  gs://
 *
 * Directories are key prefixes: list_page() is ListObjectsV2 with
 * delimiter '/' (none when recursive), one page per call, the cursor being
 * the continuation token; sizes and times come from the listing, never
 * from a HEAD per object.  Directory-marker objects ("dir/") are hidden.
 * stat() HEADs the key, and on 404 lists "key/" to detect a directory.
 * read() is a ranged GET behind a read-ahead cache of windows ("chunks"):
 * a read that misses fetches a 128 KiB window; a read landing at the end
 * of a window continues a sequential stream, whose windows double up to
 * 8 MiB, and reading a window of such a stream has a background worker
 * fetch the next one, so that a sequential reader finds it ready; the
 * worker asks for the rest of the object in one GET and fills the windows
 * queued after it as the bytes arrive (ra_stream).  Random reads never
 * prefetch.  One fetch per (key, range): a reader that needs a
 * window being fetched waits for it (at most the deadline plus a margin)
 * and shares its result, error included.  At most readahead_max_mb (64 MiB)
 * over every backend of the process and 64 windows per backend,
 * least recently used evicted, and the windows of a sequential stream
 * before the one behind its reader dropped as it moves on (their buffers,
 * at most two, refilled by the windows ahead rather than fresh pages
 * faulted in), windows trusted for storage_ttl_ms; a read
 * that hit the deadline fails again at once for a second (the kernel
 * re-reads a failed page by itself).  Any request that found the store
 * unreachable (listing, HEAD, GET, DELETE that hit the deadline, or whose
 * connections were refused through the retries) makes every request of
 * the next deadline fail at once with that errno, unsent: a walk meets a
 * store that does not answer once, not once per call (http_perform's
 * pause, per endpoint; README "Failure modes").  Listed names with an empty,
 * "." or ".." component or a control character are skipped with a warning.
 *
 * URLs are built canonical by s3_url (libcurl 7.88 signs them verbatim);
 * x-amz-content-sha256 is added here (UNSIGNED-PAYLOAD, or the body's
 * SHA-256 for POST).
 *
 * Credentials, first found wins: conf access_key/secret_key/session_token;
 * conf credentials_file (`access_key = ...`, `secret_key = ...`,
 * `session_token = ...`, or the aws_* names; refused when group/other
 * may access it); the provider's environment variables (AWS_*, OSS_*,
 * COSN_*, GOOGLE_* HMAC keys), then AWS_* for any provider.  For AWS
 * these static keys are the first provider of awscred's chain (profile,
 * ECS container, EC2 instance profile follow), or conf
 * aws_credentials_provider names the providers (README "S3 cloud
 * identities").  None: the requests go unsigned.  Each request signs with
 * awscred's current set (a reference, so a refresh never frees the keys
 * under it); one refused as expired/unknown is sent once more with fresh
 * ones.  Secrets are handed to curl only, never logged.
 *
 * Threads: priv is immutable after init except the read-ahead cache, its
 * workers' state and the timeout memo, guarded by priv->ra_lock (never
 * held across a request).  The workers start at the first prefetch and are
 * joined by destroy.
 */
#include "backends/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "backends/awscred.h"
#include "backends/credcache.h"
#include "util/buf.h"
#include "backends/http.h"
#include "util/log.h"
#include "util/relpath.h"
#include "backends/s3_url.h"
#include "backends/s3_xml.h"

#define S3_MAX_KEYS_DFLT 1000
#define RA_CHUNKS	 64
#define RA_MIN		 ((size_t)128 << 10)
#define RA_MAX		 ((size_t)8 << 20)
#define RA_TOTAL	 ((size_t)64 << 20)

/*
 * One read-ahead budget for the process (readahead_max_mb, README
 * "Memory"): the windows of every open file of every object-store backend
 * (checkpoint and IMap) count against it.  Atomics; each backend evicts
 * only its own windows to make room.
 */
static size_t ra_budget = RA_TOTAL;
static size_t ra_global; /* bytes of every backend's windows */

static void ra_charge(size_t *mine, size_t add, size_t sub)
{
	*mine = *mine + add - sub;
	if (add)
		__atomic_add_fetch(&ra_global, add, __ATOMIC_RELAXED);
	if (sub)
		__atomic_sub_fetch(&ra_global, sub, __ATOMIC_RELAXED);
}
#ifndef RA_WORKERS
#define RA_WORKERS 2
#endif
#ifndef RA_DEPTH
#define RA_DEPTH 2
#endif
#define RA_WAIT_MARGIN_MS 500
/* Buffers of windows no longer needed, kept for the next fetch: a fresh
 * one of that size is an mmap whose every page faults in (zeroed) as curl
 * fills it, and its munmap; a sequential read reuses them instead (README
 * "Performance").  At most RA_SPARES, within the read-ahead budget;
 * smaller ones come from malloc's heap anyway. */
#define RA_SPARES	 2
#define RA_SPARE_MIN	 ((size_t)256 << 10)
#define S3_MAX_HDRS	 8
#define S3_CRED_FILE_MAX ((size_t)64 << 10) /* bytes of credentials_file */

enum ra_state {
	RA_QUEUED,   /* a prefetch nobody started yet */
	RA_FETCHING, /* a request is under way; wait on ra_done */
	RA_READY,    /* data/len/eof valid, immutable */
	RA_FAILED,   /* err valid; never found by lookups */
};

/*
 * One window of one key.  Freed when dead, unused and not being fetched:
 * the fetching thread owns it until it completes it.
 */
struct ra_chunk {
	struct ra_chunk *next;
	char *key;
	off_t off;   /* first byte */
	size_t want; /* bytes asked for */
	char *data;  /* RA_READY: len bytes (malloc'd, may be NULL if 0) */
	size_t cap;  /* bytes allocated at data (for reuse) */
	size_t len;  /* < want only when eof */
	bool eof;    /* RA_READY: the object ends at off + len */
	bool seq;    /* part of a sequential stream: reading it prefetches */
	bool dead;   /* no longer found by lookups */
	int err;     /* RA_FAILED: -errno */
	enum ra_state state;
	unsigned users; /* readers waiting on or copying from it */
	size_t cost;	/* bytes charged to ra_bytes */
	int64_t born_ms;
	uint64_t used; /* LRU tick; for RA_QUEUED the queue order */
};

struct ra_stream;

struct s3_priv {
	struct backend *be; /* for the workers */
	struct s3_uri uri;
	struct s3_addr addr;
	char endpoint[512];
	char region[64];
	char sigv4[96];
	struct awscred *cred; /* where the signing keys come from */
	char *ca_file;
	unsigned timeout_ms, connect_ms, retries, max_keys, ra_ttl_ms;

	pthread_mutex_t ra_lock;
	pthread_cond_t ra_done; /* a chunk left RA_FETCHING */
	pthread_cond_t ra_work; /* a chunk was queued, or ra_stop */
	bool ra_lock_init, ra_done_init, ra_work_init;
	/* the rest is protected by ra_lock */
	struct ra_chunk *chunks;
	size_t ra_n, ra_bytes;
	uint64_t ra_tick;
	pthread_t workers[RA_WORKERS];
	unsigned n_workers;
	pid_t workers_pid; /* the process that started them */
	bool ra_stop;
	struct ra_stream *streams; /* the workers' streams under way */
	struct {
		char *p;
		size_t cap;
	} spare[RA_SPARES]; /* RA_SPARE_MIN: buffers to fill again */
	size_t n_spare, spare_bytes;
	/* the last read that hit the deadline */
	char *to_key;
	off_t to_off;
	size_t to_len;
	int64_t to_until_ms;
};

/* ---- secrets ---------------------------------------------------------- */

struct creds {
	char *ak, *sk, *tok; /* malloc'd, wiped by creds_wipe */
	const char *from;    /* where they came from (no secret) */
};

static void creds_wipe(struct creds *c)
{
	secret_free(&c->ak);
	secret_free(&c->sk);
	secret_free(&c->tok);
}

static int creds_set(struct creds *c, const char *ak, const char *sk,
		     const char *tok)
{
	creds_wipe(c);
	c->ak = strdup(ak);
	c->sk = strdup(sk);
	c->tok = tok ? strdup(tok) : NULL;
	if (!c->ak || !c->sk || (tok && !c->tok)) {
		creds_wipe(c);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The keys of a credentials file that only its owner may access (parsed by
 * awscred_parse_ini(), profile NULL).  0 (c filled); -EACCES (mode),
 * -errno (unreadable), -EINVAL (a key is missing, or a symbolic link).
 */
static int creds_from_file(const char *path, struct creds *c)
{
	struct awscred_keys k;
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		log_err("s3: credentials file '%s' is a symbolic link", path);
		return -EINVAL;
	}
	rc = secret_file_read("s3: credentials file", path, S3_CRED_FILE_MAX,
			      &text, &len);
	if (rc < 0) {
		if (rc != -EACCES && rc != -EINVAL)
			log_err("s3: credentials file '%s': %s", path,
				strerror(-rc));
		return rc;
	}
	rc = awscred_parse_ini(text, len, NULL, false, &k);
	explicit_bzero(text, len);
	free(text);
	if (rc == -ENOENT) {
		log_err("s3: credentials file '%s' lacks access_key or "
			"secret_key",
			path);
		return -EINVAL;
	}
	if (rc == 0)
		rc = creds_set(c, k.ak, k.sk, k.tok);
	awscred_keys_wipe(&k);
	return rc;
}

static int creds_resolve(const struct objstore_settings *set, struct creds *c)
{
	int rc;

	if (set->access_key && set->secret_key) {
		c->from = set->keys_from;
		return creds_set(c, set->access_key, set->secret_key,
				 set->session_token);
	}
	if (set->credentials_file) {
		c->from = "credentials_file";
		rc = creds_from_file(set->credentials_file, c);
		if (rc < 0 || c->ak)
			return rc;
	}
	/* the environment was read by conf (conf_import_env): its keys came
	 * in as access_key/secret_key above */
	c->from = NULL;
	if (set->access_key) {
		log_err("s3: access_key is set but no secret_key");
		return -EINVAL;
	}
	return 0;
}

/*
 * The credentials of the backend: for AWS the provider chain of awscred
 * (the static keys found above come first unless conf names providers);
 * for OSS, COS and GCS HMAC the static keys, or unsigned requests.
 */
static int cred_open(struct s3_priv *sp, const struct objstore_settings *set,
		     const struct creds *c)
{
	struct awscred_conf ac = {
		.access_key = c->ak,
		.secret_key = c->sk,
		.session_token = c->tok,
		.static_from = c->from,
		/* metadata services answer fast: a short deadline */
		.timeout_ms = sp->timeout_ms < 3000 ? sp->timeout_ms : 3000,
		.connect_ms = sp->connect_ms,
		.ca_file = sp->ca_file,
		.env = set->env,
	};

	if (c->ak && strchr(c->ak, ':')) {
		log_err("s3: access key holds ':'");
		return -EINVAL;
	}
	if (sp->uri.prov == S3_PROV_AWS)
		ac.provider = set->aws_credentials_provider;
	else
		ac.provider = c->ak ? "static" : "anonymous";
	return awscred_open(&ac, &sp->cred);
}

/* ---- init / destroy ------------------------------------------------- */

static void s3_destroy(struct backend *be);

static unsigned env_max_keys(const struct conf_env *env)
{
	const char *v = conf_env_get(env, "STFS_S3_MAX_KEYS");
	char *end;
	long n;

	if (!v || !*v)
		return S3_MAX_KEYS_DFLT;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 1 || n > 1000) {
		log_warn("s3: ignoring STFS_S3_MAX_KEYS=%s (1..1000)", v);
		return S3_MAX_KEYS_DFLT;
	}
	return (unsigned)n;
}

static int s3_init(struct backend *be, const char *uri,
		   const struct stfs_conf *conf)
{
	struct s3_priv *sp = be->priv;
	struct objstore_settings set;
	struct creds c = {0};
	const char *region = NULL;
	size_t n;
	int rc;

	pthread_condattr_t ca;

	sp->be = be;
	if (pthread_mutex_init(&sp->ra_lock, NULL) != 0)
		return -ENOMEM;
	sp->ra_lock_init = true;
	if (pthread_condattr_init(&ca) != 0)
		return -ENOMEM;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	sp->ra_done_init = pthread_cond_init(&sp->ra_done, &ca) == 0;
	sp->ra_work_init = pthread_cond_init(&sp->ra_work, &ca) == 0;
	pthread_condattr_destroy(&ca);
	if (!sp->ra_done_init || !sp->ra_work_init)
		return -ENOMEM;
	rc = s3_uri_parse(uri, &sp->uri);
	if (rc < 0) {
		log_err("s3: '%s' is not SCHEME://BUCKET/PREFIX/ with an "
			"object-store scheme",
			uri);
		return -EINVAL;
	}
	/* the backend's own settings: nothing else of conf is read */
	conf_objstore_settings(conf, &set);
	sp->timeout_ms = set.timeout_ms;
	sp->connect_ms = set.connect_timeout_ms;
	sp->retries = set.retries;
	sp->ra_ttl_ms = set.storage_ttl_ms;
	__atomic_store_n(&ra_budget, (size_t)set.readahead_max_mb << 20,
			 __ATOMIC_RELAXED);
	sp->max_keys = env_max_keys(set.env);

	/* region: the setting (explicit, or AWS_REGION imported by conf), the
	 * endpoint, the provider's default */
	region = set.region;
	if (region) {
		snprintf(sp->region, sizeof(sp->region), "%s", region);
	} else if (!(set.endpoint &&
		     s3_region_from_endpoint(set.endpoint, sp->region,
					     sizeof(sp->region)) == 0)) {
		snprintf(sp->region, sizeof(sp->region), "%s",
			 s3_region_default(sp->uri.prov));
	}
	for (n = 0; sp->region[n]; n++) {
		char ch = sp->region[n];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_')) {
			log_err("s3: bad region '%s'", sp->region);
			return -EINVAL;
		}
	}
	if (set.endpoint) {
		if (strlen(set.endpoint) >= sizeof(sp->endpoint)) {
			log_err("s3: endpoint too long");
			return -EINVAL;
		}
		snprintf(sp->endpoint, sizeof(sp->endpoint), "%s",
			 set.endpoint);
	} else if (s3_endpoint_default(sp->uri.prov, sp->region, sp->endpoint,
				       sizeof(sp->endpoint)) < 0) {
		log_err("s3: cannot make an endpoint for region '%s'",
			sp->region);
		return -EINVAL;
	}
	rc = s3_addr_init(&sp->addr, sp->endpoint, sp->uri.bucket,
			  set.path_style);
	if (rc < 0) {
		log_err("s3: bad endpoint '%s'", sp->endpoint);
		return -EINVAL;
	}
	snprintf(sp->sigv4, sizeof(sp->sigv4), "aws:amz:%s:s3", sp->region);
	if (set.ca_file) {
		char why[128];

		/* else every call fails alike, and the mount with them */
		if (http_ca_file_check(set.ca_file, why, sizeof(why)) < 0) {
			log_err("s3: ca_file %s: %s", set.ca_file, why);
			return -EINVAL;
		}
		sp->ca_file = strdup(set.ca_file);
		if (!sp->ca_file)
			return -ENOMEM;
	}

	rc = creds_resolve(&set, &c);
	if (rc < 0)
		return rc == -ENOMEM || rc == -EACCES ? rc : -EINVAL;
	rc = cred_open(sp, &set, &c);
	creds_wipe(&c);
	if (rc < 0)
		return rc;
	{
		struct awscred_set *cs = NULL;

		if (awscred_get(sp->cred, &cs) == 0 && !cs)
			log_info("s3: no credentials for %s://%s: requests go "
				 "unsigned",
				 s3_provider_name(sp->uri.prov),
				 sp->uri.bucket);
		else if (cs)
			log_info("s3: credentials from %s", cs->source);
		awscred_put(cs);
	}
	log_debug("s3: %s bucket '%s' prefix '%s' at %s (%s, region %s)",
		  s3_provider_name(sp->uri.prov), sp->uri.bucket,
		  sp->uri.prefix, sp->addr.base,
		  sp->addr.path_style ? "path-style" : "virtual-hosted",
		  sp->region);
	return 0;
}

static void ra_stop_workers(struct s3_priv *sp);

static void s3_destroy(struct backend *be)
{
	struct s3_priv *sp = be->priv;
	struct ra_chunk *c, *nx;

	if (!sp)
		return;
	ra_stop_workers(sp);
	awscred_close(sp->cred);
	sp->cred = NULL;
	free(sp->ca_file);
	sp->ca_file = NULL;
	for (c = sp->chunks; c; c = nx) {
		nx = c->next;
		free(c->key);
		free(c->data);
		free(c);
	}
	sp->chunks = NULL;
	ra_charge(&sp->ra_bytes, 0, sp->ra_bytes);
	while (sp->n_spare)
		free(sp->spare[--sp->n_spare].p);
	ra_charge(&sp->spare_bytes, 0, sp->spare_bytes);
	sp->ra_n = 0;
	free(sp->to_key);
	sp->to_key = NULL;
	if (sp->ra_work_init)
		pthread_cond_destroy(&sp->ra_work);
	if (sp->ra_done_init)
		pthread_cond_destroy(&sp->ra_done);
	if (sp->ra_lock_init)
		pthread_mutex_destroy(&sp->ra_lock);
	sp->ra_lock_init = sp->ra_done_init = sp->ra_work_init = false;
}

/* ---- requests --------------------------------------------------------- */

static void hex_sha256(const void *p, size_t n, char out[65])
{
	static const char hx[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0, i;

	if (!EVP_Digest(p, n, md, &mdlen, EVP_sha256(), NULL))
		mdlen = 0;
	for (i = 0; i < mdlen && i < 32; i++) {
		out[2 * i] = hx[md[i] >> 4];
		out[2 * i + 1] = hx[md[i] & 0xf];
	}
	out[2 * i] = '\0';
}

/*
 * One request with the backend's deadline, retries and signing.  `extra`
 * are additional "Name: value" headers (NULL-terminated, or NULL).
 * Returns what http_perform() returned.
 */
static int s3_do_once(struct s3_priv *sp, const struct awscred_set *cs,
		      const char *method, const char *url,
		      const char *const *extra, const void *body,
		      size_t body_len, size_t max_body,
		      const struct http_req *sink, struct http_resp *resp)
{
	const char *hdrs[S3_MAX_HDRS + 1];
	char sha_hdr[96], sha[65];
	size_t nh = 0;
	struct http_req req = {
		.method = method,
		.url = url,
		.headers = hdrs,
		.body = body,
		.body_len = body_len,
		.timeout_ms = sp->timeout_ms,
		.connect_timeout_ms = sp->connect_ms,
		.retries = sp->retries,
		.max_body = max_body,
		.userpwd = cs ? cs->userpwd : NULL,
		.aws_sigv4 = cs ? sp->sigv4 : NULL,
		.ca_file = sp->ca_file,
		.pause_unreachable = true,
	};

	if (sink) {
		req.sink = sink->sink;
		req.sink_deadline = sink->sink_deadline;
		req.sink_ud = sink->sink_ud;
	}
	if (body) {
		hex_sha256(body, body_len, sha);
		snprintf(sha_hdr, sizeof(sha_hdr), "x-amz-content-sha256: %s",
			 sha);
	} else {
		snprintf(sha_hdr, sizeof(sha_hdr),
			 "x-amz-content-sha256: UNSIGNED-PAYLOAD");
	}
	hdrs[nh++] = sha_hdr;
	if (cs && cs->token_hdr)
		hdrs[nh++] = cs->token_hdr;
	for (; extra && *extra && nh < S3_MAX_HDRS; extra++)
		hdrs[nh++] = *extra;
	hdrs[nh] = NULL;
	return http_perform(&req, resp);
}

/* did the store refuse the request's credentials as expired or unknown? */
static bool s3_creds_refused(const struct http_resp *resp, bool head)
{
	struct s3_error e = {{0}, {0}};

	if (resp->status != 400 && resp->status != 403)
		return false;
	if (head)
		return resp->status == 403 || resp->status == 400;
	if (resp->body.len)
		s3_xml_parse_error(resp->body.data, resp->body.len, &e);
	return awscred_code_expired(e.code);
}

/*
 * One request with the backend's deadline, retries and signing.  `extra`
 * are additional "Name: value" headers (NULL-terminated, or NULL).  A
 * request refused with an expired token (or keys rotated away) is sent
 * once more with fresh credentials.  Within a deadline of a request that
 * found the store unreachable nothing is sent: its errno at once (the
 * pause of http_perform).  Returns what http_perform() returned.
 */
static int s3_do_sink(struct s3_priv *sp, const char *method, const char *url,
		      const char *const *extra, const void *body,
		      size_t body_len, size_t max_body,
		      const struct http_req *sink, struct http_resp *resp)
{
	struct awscred_set *cs = NULL, *again = NULL;
	bool head = !strcmp(method, "HEAD");
	int rc;

	rc = awscred_get(sp->cred, &cs);
	if (rc < 0) {
		snprintf(resp->error, sizeof(resp->error), "no credentials: %s",
			 strerror(-rc));
		return rc == -ETIMEDOUT ? rc : -EACCES;
	}
	rc = s3_do_once(sp, cs, method, url, extra, body, body_len, max_body,
			sink, resp);
	if (rc == 0 && cs && s3_creds_refused(resp, head) &&
	    awscred_refused(sp->cred, cs) &&
	    awscred_get(sp->cred, &again) == 0 && again &&
	    (strcmp(again->userpwd, cs->userpwd) ||
	     !again->token_hdr != !cs->token_hdr ||
	     (again->token_hdr && strcmp(again->token_hdr, cs->token_hdr)))) {
		log_info("s3: %s: credentials refused, sending again with "
			 "fresh ones from %s",
			 method, again->source);
		http_resp_release(resp);
		http_resp_init(resp);
		rc = s3_do_once(sp, again, method, url, extra, body, body_len,
				max_body, sink, resp);
	}
	awscred_put(again);
	awscred_put(cs);
	return rc;
}

static int s3_do(struct s3_priv *sp, const char *method, const char *url,
		 const char *const *extra, const void *body, size_t body_len,
		 size_t max_body, struct http_resp *resp)
{
	return s3_do_sink(sp, method, url, extra, body, body_len, max_body,
			  NULL, resp);
}

/*
 * -errno for a finished request (0 for 2xx).  Logs the failure (not a
 * plain missing key) with the S3 code and message, and notes health.
 */
static int s3_result(struct backend *be, const char *op, const char *key,
		     int rc, const struct http_resp *resp)
{
	struct s3_priv *sp = be->priv;
	const char *pn = s3_provider_name(sp->uri.prov);
	struct s3_error e = {{0}, {0}};
	int err;

	if (rc < 0) {
		log_warn("%s: %s '%s': %s", pn, op, key,
			 resp->error[0] ? resp->error : strerror(-rc));
		be_note_error(be, rc, "%s %s: %s", op, key,
			      resp->error[0] ? resp->error : strerror(-rc));
		return rc;
	}
	if (resp->status >= 200 && resp->status < 300) {
		be_note_ok(be);
		return 0;
	}
	if (resp->body.len)
		s3_xml_parse_error(resp->body.data, resp->body.len, &e);
	/*
	 * A 5xx that outlived the retries is EIO whatever its code says: a
	 * SlowDown storm must not reach read(2) as EAGAIN ("would block"),
	 * which callers on a blocking file do not expect.
	 */
	if (resp->status >= 500 && resp->status < 600 && resp->status != 501)
		err = -EIO;
	else if (!(err = s3_code_to_errno(e.code)))
		err = http_status_to_errno(resp->status);
	if ((err == -ENOENT && strcmp(e.code, "NoSuchBucket")) ||
	    err == -ERANGE) {
		be_note_ok(be); /* the store answered */
		return err;
	}
	log_warn("%s: %s '%s': HTTP %ld%s%s%s%s (%s)", pn, op, key,
		 resp->status, e.code[0] ? " " : "", e.code,
		 e.message[0] ? ": " : "", e.message, strerror(-err));
	be_note_error(be, err, "%s %s: HTTP %ld %s", op, key, resp->status,
		      e.code);
	return err;
}

/* ---- paths -------------------------------------------------------------- */

/* the full key of `path` (+ `suffix`) into out[S3_KEY_MAX + 1] */
static int make_key(const struct s3_priv *sp, const char *path,
		    const char *suffix, char *out)
{
	int n = snprintf(out, S3_KEY_MAX + 1, "%s%s%s", sp->uri.prefix, path,
			 suffix);

	return n < 0 || n > S3_KEY_MAX ? -ENAMETOOLONG : 0;
}

/* the full key of the file `path` (not the root) into out[S3_KEY_MAX + 1] */
static int file_key(const struct s3_priv *sp, const char *path, char *out)
{
	int rc = relpath_check(path);

	if (rc < 0)
		return rc;
	if (!*path)
		return -EISDIR;
	return make_key(sp, path, "", out);
}

/*
 * the URL of the object `key` into a fresh *url: 0 (release it when done),
 * or -ENAMETOOLONG with nothing to release
 */
static int object_url(const struct s3_priv *sp, const char *key,
		      struct buf *url)
{
	buf_init(url, 16384);
	if (s3_url_object(url, &sp->addr, key, NULL, 0) < 0) {
		buf_release(url);
		return -ENAMETOOLONG;
	}
	return 0;
}

/*
 * a name below a listed prefix is safe to report: no empty, "." or ".."
 * component, and no control character (C0 or DEL) anywhere
 */
static bool rel_name_ok(const char *rel, bool recursive)
{
	const unsigned char *c;

	if (!*rel || rel[strlen(rel) - 1] == '/')
		return false;
	for (c = (const unsigned char *)rel; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	if (!recursive && strchr(rel, '/'))
		return false;
	return relpath_check(rel) == 0;
}

/*
 * Log an object or prefix that rel_name_ok() refused although it is no
 * directory marker nor a deeper level of a delimited listing: a hostile
 * or broken name.  Control characters are written as \xNN.
 */
static void log_refused_name(const struct s3_priv *sp, const char *key,
			     const char *rel, bool recursive)
{
	char safe[320];
	size_t i, o = 0, n = strlen(rel);

	if (!n || rel[n - 1] == '/' || (!recursive && strchr(rel, '/')))
		return;
	for (i = 0; key[i] && o + 5 < sizeof(safe); i++) {
		unsigned char c = (unsigned char)key[i];

		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(safe + o, sizeof(safe) - o,
					      "\\x%02x", c);
		else
			safe[o++] = (char)c;
	}
	safe[o] = '\0';
	log_warn("%s: ignoring the object '%s%s': its name holds an empty, "
		 "'.' or '..' component or a control character",
		 s3_provider_name(sp->uri.prov), safe, key[i] ? "..." : "");
}

/* ---- list ----------------------------------------------------------- */

static int s3_list_raw(struct backend *be, const char *key_prefix,
		       bool recursive, unsigned max_keys, const char *cursor,
		       struct s3_list *out)
{
	struct s3_priv *sp = be->priv;
	char mk[16];
	struct s3_param p[5];
	struct http_resp resp;
	struct buf url;
	size_t n = 0;
	int rc;

	snprintf(mk, sizeof(mk), "%u", max_keys);
	p[n++] = (struct s3_param){"list-type", "2"};
	p[n++] = (struct s3_param){"prefix", key_prefix};
	p[n++] = (struct s3_param){"max-keys", mk};
	if (!recursive)
		p[n++] = (struct s3_param){"delimiter", "/"};
	if (cursor)
		p[n++] = (struct s3_param){"continuation-token", cursor};
	buf_init(&url, 16384);
	rc = s3_url_bucket(&url, &sp->addr, p, n);
	if (rc < 0) {
		buf_release(&url);
		return rc == -EFBIG ? -ENAMETOOLONG : rc;
	}
	http_resp_init(&resp);
	rc = s3_do(sp, "GET", url.data, NULL, NULL, 0, S3_XML_MAX, &resp);
	rc = s3_result(be, "list", key_prefix, rc, &resp);
	if (rc == 0) {
		rc = s3_xml_parse_list(resp.body.data, resp.body.len, out);
		if (rc < 0) {
			log_warn("%s: list '%s': unparsable ListBucketResult "
				 "(%zu bytes)",
				 s3_provider_name(sp->uri.prov), key_prefix,
				 resp.body.len);
			be_note_error(be, -EIO, "list %s: bad XML", key_prefix);
			rc = rc == -ENOMEM ? rc : -EIO;
		} else if (out->n_bad) {
			log_warn("%s: list '%s': %zu malformed entries skipped",
				 s3_provider_name(sp->uri.prov), key_prefix,
				 out->n_bad);
		}
	}
	http_resp_release(&resp);
	buf_release(&url);
	return rc;
}

static int s3_list_page(struct backend *be, const char *dir, unsigned flags,
			const char *cursor, be_fill_fn fill, void *cookie,
			char **next)
{
	struct s3_priv *sp = be->priv;
	bool rec = flags & BE_LIST_RECURSIVE;
	char prefix[S3_KEY_MAX + 1];
	struct s3_list l;
	size_t plen, i;
	bool stop = false;
	int rc;

	*next = NULL;
	rc = relpath_check(dir);
	if (rc < 0)
		return rc;
	rc = make_key(sp, dir, *dir ? "/" : "", prefix);
	if (rc < 0)
		return rc;
	plen = strlen(prefix);
	rc = s3_list_raw(be, prefix, rec, sp->max_keys, cursor, &l);
	if (rc < 0)
		return rc;
	/* nothing at all under a non-root prefix: no such directory */
	if (!cursor && *dir && l.n_objs == 0 && l.n_prefixes == 0 &&
	    !l.truncated) {
		s3_list_release(&l);
		return -ENOENT;
	}
	for (i = 0; i < l.n_objs && !stop; i++) {
		const struct s3_obj *o = &l.objs[i];
		struct be_attr a = {
			.type = BE_FILE,
			.size = o->size,
			.mtime_ns = o->mtime_ns,
		};

		if (strncmp(o->key, prefix, plen))
			continue;
		if (!rel_name_ok(o->key + plen, rec)) {
			log_refused_name(sp, o->key, o->key + plen, rec);
			continue;
		}
		stop = fill(cookie, o->key + plen, &a) != 0;
	}
	for (i = 0; i < l.n_prefixes && !stop && !rec; i++) {
		char *p = l.prefixes[i];
		size_t n = strlen(p);
		struct be_attr a = {.type = BE_DIR};

		if (n <= plen || strncmp(p, prefix, plen) || p[n - 1] != '/')
			continue;
		p[n - 1] = '\0';
		if (rel_name_ok(p + plen, false))
			stop = fill(cookie, p + plen, &a) != 0;
		else
			log_refused_name(sp, p, p + plen, false);
	}
	if (!stop && l.truncated) {
		if (!l.next_token) {
			log_warn("%s: list '%s': truncated without a "
				 "continuation token",
				 s3_provider_name(sp->uri.prov), prefix);
			rc = -EIO;
		} else {
			*next = l.next_token;
			l.next_token = NULL;
		}
	}
	s3_list_release(&l);
	return rc;
}

/* ---- stat ------------------------------------------------------------- */

static int s3_stat(struct backend *be, const char *path, struct be_attr *out)
{
	struct s3_priv *sp = be->priv;
	char key[S3_KEY_MAX + 1];
	struct http_resp resp;
	struct s3_list l;
	struct buf url;
	int rc;

	rc = relpath_check(path);
	if (rc < 0)
		return rc;
	if (!*path) {
		*out = (struct be_attr){.type = BE_DIR};
		return 0;
	}
	rc = make_key(sp, path, "", key);
	if (rc < 0)
		return rc;
	rc = object_url(sp, key, &url);
	if (rc < 0)
		return rc;
	http_resp_init(&resp);
	rc = s3_do(sp, "HEAD", url.data, NULL, NULL, 0, 0, &resp);
	rc = s3_result(be, "stat", key, rc, &resp);
	if (rc == 0) {
		*out = (struct be_attr){
			.type = BE_FILE,
			.size = resp.content_length > 0
					? (uint64_t)resp.content_length
					: 0,
			.mtime_ns = resp.last_modified_ms > 0
					    ? resp.last_modified_ms * 1000000LL
					    : 0,
		};
	}
	http_resp_release(&resp);
	buf_release(&url);
	if (rc != -ENOENT)
		return rc;
	/* not an object: a directory when anything lies below "key/" */
	rc = make_key(sp, path, "/", key);
	if (rc < 0)
		return rc;
	rc = s3_list_raw(be, key, true, 1, NULL, &l);
	if (rc < 0)
		return rc;
	rc = l.n_objs || l.n_prefixes ? 0 : -ENOENT;
	s3_list_release(&l);
	if (rc == 0)
		*out = (struct be_attr){.type = BE_DIR};
	return rc;
}

/* ---- read ------------------------------------------------------------- */

/*
 * A read that hit the deadline is answered with ETIMEDOUT at once when a
 * read of the same window is asked again within TIMEOUT_MEMO_MS: the
 * kernel retries a failed page read by itself, and one read(2) must not
 * wait for two deadlines.
 */
#define TIMEOUT_MEMO_MS 1000

/* with ra_lock held: whether a read of `key` at `off` is such a repeat */
static bool timeout_memo_hit(struct s3_priv *sp, const char *key, off_t off)
{
	return sp->to_key && off >= sp->to_off &&
	       off - sp->to_off < (off_t)sp->to_len &&
	       !strcmp(sp->to_key, key) && mono_ms() < sp->to_until_ms;
}

/*
 * With ra_lock held: remember (err == -ETIMEDOUT) or forget (else) the
 * timed-out fetch of [off, off + len) of `key`
 */
static void timeout_memo_set(struct s3_priv *sp, const char *key, off_t off,
			     size_t len, int err)
{
	char *k = err == -ETIMEDOUT ? strdup(key) : NULL;

	if (k || (sp->to_key && !strcmp(sp->to_key, key))) {
		free(sp->to_key);
		sp->to_key = k;
		sp->to_off = off;
		sp->to_len = len;
		sp->to_until_ms = mono_ms() + TIMEOUT_MEMO_MS;
	}
}

/*
 * GET bytes [off, off + want) of `key`.  0 with *data (malloc'd, may be
 * NULL when *len is 0), *len and *eof; -errno.
 */
/* `seed`: a buffer of `seed_cap` > want bytes for the body (consumed,
 * NULL: one is allocated); *cap: what is allocated at *data */
static int s3_get_range(struct backend *be, const char *key, off_t off,
			size_t want, char *seed, size_t seed_cap, char **data,
			size_t *cap, size_t *len, bool *eof)
{
	struct s3_priv *sp = be->priv;
	char range[80];
	const char *extra[2] = {range, NULL};
	struct http_resp resp;
	struct buf url;
	int rc;

	*data = NULL;
	*cap = 0;
	*len = 0;
	*eof = false;
	snprintf(range, sizeof(range), "Range: bytes=%lld-%lld", (long long)off,
		 (long long)off + (long long)want - 1);
	rc = object_url(sp, key, &url);
	if (rc < 0) {
		free(seed);
		return rc;
	}
	http_resp_init(&resp);
	/* the body lands in one buffer of its size, not one grown by
	 * doubling (http_perform fills a buffer it is given) */
	if (!seed && want >= RA_SPARE_MIN && (seed = malloc(want + 1)))
		seed_cap = want + 1;
	if (seed) {
		resp.body.data = seed;
		resp.body.cap = seed_cap;
	}
	rc = s3_do(sp, "GET", url.data, extra, NULL, 0,
		   want > RA_MAX ? want : RA_MAX, &resp);
	rc = s3_result(be, "read", key, rc, &resp);
	if (rc == -ERANGE || (rc == -EINVAL && resp.status == 416)) {
		*eof = true; /* at or past the end */
		rc = 0;
	} else if (rc == 0 && resp.status == 206) {
		*len = resp.body.len > want ? want : resp.body.len;
		*eof = *len < want;
		/* buf_detach gives back a slack of more than 64 bytes */
		*cap = resp.body.cap - resp.body.len > 64 ? resp.body.len + 1
							  : resp.body.cap;
		*data = buf_detach(&resp.body, NULL);
	} else if (rc == 0) {
		/* the whole object: the server ignored Range */
		size_t total = resp.body.len;

		if ((uint64_t)off < total) {
			*len = total - (size_t)off;
			if (*len > want)
				*len = want;
			*data = malloc(*len ? *len : 1);
			*cap = *len ? *len : 1;
			if (!*data)
				rc = -ENOMEM;
			else
				memcpy(*data, resp.body.data + off, *len);
		}
		*eof = (uint64_t)off + *len >= total;
	}
	http_resp_release(&resp);
	buf_release(&url);
	return rc;
}

/*
 * With ra_lock held: keep buffer `p` of `cap` bytes for a next fetch, or
 * free it.  A full set gives way to a larger buffer (a stream's windows
 * grow); a spare counts against the budget (ra_make_room evicts windows
 * for it) and is kept while the budget is not already used up.
 */
static void ra_keep_spare(struct s3_priv *sp, char *p, size_t cap)
{
	size_t i = sp->n_spare;

	if (p && cap >= RA_SPARE_MIN && i == RA_SPARES) {
		for (size_t k = i = 0; k < RA_SPARES; k++)
			if (sp->spare[k].cap < sp->spare[i].cap)
				i = k;
		if (sp->spare[i].cap >= cap)
			i = RA_SPARES; /* keep the set */
		else {
			free(sp->spare[i].p);
			ra_charge(&sp->spare_bytes, 0, sp->spare[i].cap);
			sp->spare[i] = sp->spare[--sp->n_spare];
			i = sp->n_spare;
		}
	}
	if (!p || cap < RA_SPARE_MIN || i == RA_SPARES ||
	    __atomic_load_n(&ra_global, __ATOMIC_RELAXED) >=
		    __atomic_load_n(&ra_budget, __ATOMIC_RELAXED)) {
		free(p);
		return;
	}
	sp->spare[i].p = p;
	sp->spare[i].cap = cap;
	sp->n_spare++;
	ra_charge(&sp->spare_bytes, cap, 0);
}

/* with ra_lock held: unlink and free `c` when nobody needs it any more */
static void ra_maybe_free(struct s3_priv *sp, struct ra_chunk *c)
{
	struct ra_chunk **pp;

	if (!c->dead || c->users || c->state == RA_FETCHING)
		return;
	for (pp = &sp->chunks; *pp && *pp != c; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = c->next;
	sp->ra_n--;
	ra_charge(&sp->ra_bytes, 0, c->cost);
	free(c->key);
	ra_keep_spare(sp, c->data, c->cap);
	free(c);
}

/* with ra_lock held: the smallest spare buffer of more than `want` bytes
 * (removed, *cap its size), or NULL */
static char *ra_take_spare(struct s3_priv *sp, size_t want, size_t *cap)
{
	size_t best = sp->n_spare;
	char *p;

	for (size_t i = 0; i < sp->n_spare; i++)
		if (sp->spare[i].cap > want &&
		    (best == sp->n_spare ||
		     sp->spare[i].cap < sp->spare[best].cap))
			best = i;
	if (best == sp->n_spare)
		return NULL;
	p = sp->spare[best].p;
	*cap = sp->spare[best].cap;
	ra_charge(&sp->spare_bytes, 0, *cap);
	sp->spare[best] = sp->spare[--sp->n_spare];
	return p;
}

/* with ra_lock held: `c` is no longer found; freed as soon as possible */
static void ra_kill(struct s3_priv *sp, struct ra_chunk *c)
{
	c->dead = true;
	ra_maybe_free(sp, c);
}

/* the end of what a live chunk covers: its data, or all it asked for */
static off_t ra_end(const struct ra_chunk *c)
{
	if (c->state == RA_READY && !c->eof)
		return c->off + (off_t)c->len;
	return c->off + (off_t)c->want;
}

/*
 * With ra_lock held: the live chunk of `key` that covers `off` (a ready
 * chunk that ended the object covers the bytes past its end that it asked
 * for: reads there are EOF), or NULL.  Expired chunks are dropped.
 */
static struct ra_chunk *ra_find(struct s3_priv *sp, const char *key, off_t off)
{
	struct ra_chunk *c, *nx;
	int64_t now = mono_ms();

	for (c = sp->chunks; c; c = nx) {
		nx = c->next;
		if (c->dead || off < c->off || off >= ra_end(c) ||
		    strcmp(c->key, key))
			continue;
		if (c->state == RA_READY &&
		    now - c->born_ms > (int64_t)sp->ra_ttl_ms) {
			ra_kill(sp, c);
			continue;
		}
		return c;
	}
	return NULL;
}

/*
 * With ra_lock held: the live, not ended chunk of `key` that ends exactly
 * at `off` (a read there continues a sequential stream), or NULL
 */
static struct ra_chunk *ra_ending_at(struct s3_priv *sp, const char *key,
				     off_t off)
{
	struct ra_chunk *c;

	for (c = sp->chunks; c; c = c->next)
		if (!c->dead && !(c->state == RA_READY && c->eof) &&
		    ra_end(c) == off && !strcmp(c->key, key))
			return c;
	return NULL;
}

/* with ra_lock held: the first byte after `off` held by a chunk of `key` */
static off_t ra_next_start(struct s3_priv *sp, const char *key, off_t off)
{
	struct ra_chunk *c;
	off_t best = (off_t)INT64_MAX;

	for (c = sp->chunks; c; c = c->next)
		if (!c->dead && c->off > off && c->off < best &&
		    !strcmp(c->key, key))
			best = c->off;
	return best;
}

/*
 * With ra_lock held: evict unused chunks, least recently used first, until
 * `need` more bytes and one more chunk fit.  Returns whether they do.
 */
static bool ra_make_room(struct s3_priv *sp, size_t need)
{
	while (sp->ra_n >= RA_CHUNKS ||
	       __atomic_load_n(&ra_global, __ATOMIC_RELAXED) + need >
		       __atomic_load_n(&ra_budget, __ATOMIC_RELAXED)) {
		struct ra_chunk *c, *lru = NULL;

		for (c = sp->chunks; c; c = c->next)
			if (!c->users && c->state == RA_READY &&
			    (!lru || c->used < lru->used))
				lru = c;
		if (!lru)
			return false;
		ra_kill(sp, lru);
	}
	return true;
}

/*
 * With ra_lock held: a new chunk of `key` for [off, off + want), linked
 * first, in `state`; NULL when out of memory.  Over the budget only when
 * `force` (a reader must fetch anyway); else NULL.
 */
static struct ra_chunk *ra_new(struct s3_priv *sp, const char *key, off_t off,
			       size_t want, bool seq, enum ra_state state,
			       bool force)
{
	struct ra_chunk *c;

	if (!ra_make_room(sp, want) && !force)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->key = strdup(key);
	if (!c->key) {
		free(c);
		return NULL;
	}
	c->off = off;
	c->want = want;
	c->seq = seq;
	c->state = state;
	c->cost = want;
	c->used = ++sp->ra_tick;
	c->next = sp->chunks;
	sp->chunks = c;
	sp->ra_n++;
	ra_charge(&sp->ra_bytes, want, 0);
	return c;
}

static void ra_complete(struct s3_priv *sp, struct ra_chunk *c, int rc,
			char *data, size_t cap, size_t len, bool eof);

/* fetch chunk `c` (RA_FETCHING, owned by the caller) without the lock */
static void ra_fetch(struct s3_priv *sp, struct ra_chunk *c)
{
	char *data, *seed = NULL;
	size_t len, cap, seed_cap = 0;
	bool eof;
	int rc;

	if (c->want >= RA_SPARE_MIN) {
		pthread_mutex_lock(&sp->ra_lock);
		seed = ra_take_spare(sp, c->want, &seed_cap);
		pthread_mutex_unlock(&sp->ra_lock);
	}
	rc = s3_get_range(sp->be, c->key, c->off, c->want, seed, seed_cap,
			  &data, &cap, &len, &eof);
	pthread_mutex_lock(&sp->ra_lock);
	ra_complete(sp, c, rc, data, cap, len, eof);
	pthread_mutex_unlock(&sp->ra_lock);
}

/*
 * With ra_lock held: chunk `c` (RA_FETCHING, owned by the caller) got
 * `rc` and, when 0, `len` bytes at `data` (`cap` allocated, handed over)
 * and whether they end the object; wakes its waiters
 */
static void ra_complete(struct s3_priv *sp, struct ra_chunk *c, int rc,
			char *data, size_t cap, size_t len, bool eof)
{
	timeout_memo_set(sp, c->key, c->off, c->want, rc);
	if (rc < 0) {
		c->err = rc;
		c->state = RA_FAILED;
		c->dead = true;
		free(data);
	} else {
		struct ra_chunk *o, *onx;

		for (o = eof ? sp->chunks : NULL; o; o = onx) {
			onx = o->next;
			if (o->state == RA_QUEUED && !o->dead &&
			    o->off >= c->off + (off_t)len &&
			    !strcmp(o->key, c->key))
				ra_kill(sp, o);
		}
		c->data = data;
		c->cap = cap;
		c->len = len;
		c->eof = eof;
		c->state = RA_READY;
		c->born_ms = mono_ms();
		ra_charge(&sp->ra_bytes, len, c->cost);
		c->cost = len;
	}
	pthread_cond_broadcast(&sp->ra_done);
	ra_maybe_free(sp, c);
}

/*
 * The stream of a sequential reader.  A worker that fetches a prefetched
 * window asks for the rest of the object in one GET ("Range: bytes=off-")
 * and fills the windows queued after it in order as the bytes arrive, so
 * that a long read costs the store one request, not one per window (each
 * costs the server as much as megabytes of body; README "Performance").
 * The windows ahead of a stream's position are reserved for it: no other
 * worker fetches them and a reader needing one waits for it, as for a
 * window being fetched.  When the next window is not queued (the reader
 * is behind), the stream waits for it at most RA_STREAM_IDLE_MS, then
 * ends: the transfer is cut and later windows are fetched as before.  The
 * deadline: each window is filled within timeout_ms of the stream taking
 * it.  A stream that fails (a dropped connection, a deadline, a store
 * ignoring Range) leaves its windows as they were: the complete ones hold
 * the right bytes, the one being filled is fetched again with its own
 * ranged GET (and its retries), the rest stay queued.
 */
#define RA_STREAM_IDLE_MS 1000

struct ra_stream {
	struct ra_stream *next; /* sp->streams, under ra_lock */
	struct s3_priv *sp;
	char key[S3_KEY_MAX + 1];
	off_t pos;	      /* the offset of the next byte to arrive */
	off_t ahead;	      /* under ra_lock: where the next window starts */
	struct ra_chunk *cur; /* RA_FETCHING, ours: being filled, or NULL */
	char *buf;	      /* cur's buffer, cap bytes */
	size_t cap, fill;     /* fill: bytes of cur that arrived */
	int64_t deadline_ms;  /* cur must be full by then */
};

/*
 * With ra_lock held: whether queued chunk `c` waits for a stream: it is
 * the first of the queued windows that follow one another from where a
 * stream is, or one of the others (not those of another reader further
 * on: they are not in the stream's way)
 */
static bool ra_reserved(const struct s3_priv *sp, const struct ra_chunk *c)
{
	for (const struct ra_stream *st = sp->streams; st; st = st->next) {
		off_t at = st->ahead;

		if (c->off < at || strcmp(st->key, c->key))
			continue;
		for (unsigned n = 0; n < RA_CHUNKS && at <= c->off; n++) {
			const struct ra_chunk *o;

			for (o = sp->chunks; o; o = o->next)
				if (o->off == at && !o->dead &&
				    o->state == RA_QUEUED &&
				    !strcmp(o->key, c->key))
					break;
			if (!o)
				break;
			if (o == c)
				return true;
			at += (off_t)o->want;
		}
	}
	return false;
}

/* with ra_lock held: a buffer for `c` into st (a spare, else malloc) */
static int ra_stream_buf(struct ra_stream *st, struct ra_chunk *c)
{
	st->buf = ra_take_spare(st->sp, c->want, &st->cap);
	if (!st->buf) {
		st->buf = malloc(c->want + 1);
		st->cap = c->want + 1;
	}
	st->fill = 0;
	st->cur = c;
	st->ahead = c->off + (off_t)c->want;
	st->deadline_ms = mono_ms() + st->sp->timeout_ms;
	return st->buf ? 0 : -ENOMEM;
}

/*
 * Take the window that starts where the stream is, waiting for it to be
 * queued at most RA_STREAM_IDLE_MS.  0, or -ECANCELED (none: the stream
 * ends), -ENOMEM.
 */
static int ra_stream_next(struct ra_stream *st)
{
	struct s3_priv *sp = st->sp;
	int64_t until = mono_ms() + RA_STREAM_IDLE_MS;
	int rc = -ECANCELED;

	pthread_mutex_lock(&sp->ra_lock);
	while (!sp->ra_stop) {
		struct ra_chunk *c;
		struct timespec ts = {
			.tv_sec = (time_t)(until / 1000),
			.tv_nsec = (long)(until % 1000) * 1000000L,
		};

		for (c = sp->chunks; c; c = c->next)
			if (!c->dead && c->off == st->pos &&
			    !strcmp(c->key, st->key))
				break;
		if (c && c->state == RA_QUEUED) {
			c->state = RA_FETCHING;
			rc = ra_stream_buf(st, c);
			if (rc) {
				st->cur = NULL;
				st->ahead = st->pos;
				c->state = RA_QUEUED;
			}
			break;
		}
		if (c || mono_ms() >= until ||
		    pthread_cond_timedwait(&sp->ra_work, &sp->ra_lock, &ts) ==
			    ETIMEDOUT)
			break; /* a reader has it, or none came */
	}
	pthread_mutex_unlock(&sp->ra_lock);
	return rc;
}

/* the stream's window is full, or (eof) the object ended in it */
static void ra_stream_done(struct ra_stream *st, bool eof)
{
	struct s3_priv *sp = st->sp;

	pthread_mutex_lock(&sp->ra_lock);
	ra_complete(sp, st->cur, 0, st->buf, st->cap, st->fill, eof);
	st->cur = NULL;
	st->ahead = st->pos;
	pthread_mutex_unlock(&sp->ra_lock);
	st->buf = NULL;
	st->cap = st->fill = 0;
}

static int ra_stream_sink(void *ud, long status, const char *p, size_t n)
{
	struct ra_stream *st = ud;

	if (status != 206)
		return -EPROTO; /* the whole object: left to a ranged GET */
	while (n) {
		size_t k;
		int rc;

		if (__atomic_load_n(&st->sp->ra_stop, __ATOMIC_RELAXED))
			return -ECANCELED;
		if (!st->cur && (rc = ra_stream_next(st)) != 0)
			return rc;
		k = st->cur->want - st->fill;
		if (k > n)
			k = n;
		memcpy(st->buf + st->fill, p, k);
		st->fill += k;
		st->pos += (off_t)k;
		p += k;
		n -= k;
		if (st->fill == st->cur->want)
			ra_stream_done(st, false);
	}
	return 0;
}

static int64_t ra_stream_deadline(void *ud)
{
	const struct ra_stream *st = ud;

	/* between windows: ra_stream_next bounds the wait itself */
	return st->cur ? st->deadline_ms : mono_ms() + st->sp->timeout_ms;
}

/*
 * With ra_lock held: start stream `st` at `c` (RA_FETCHING, owned, part of
 * a sequential stream): from now on the windows queued after it are
 * reserved for it.  0, or -ENOMEM (then ra_stream fetches `c` alone).
 */
static int ra_stream_begin(struct s3_priv *sp, struct ra_stream *st,
			   struct ra_chunk *c)
{
	memset(st, 0, sizeof(*st));
	st->sp = sp;
	st->pos = st->ahead = c->off;
	snprintf(st->key, sizeof(st->key), "%s", c->key);
	st->next = sp->streams;
	sp->streams = st;
	return ra_stream_buf(st, c);
}

/* fetch the windows of stream `st` (begun by ra_stream_begin, `rc` what it
 * returned) in one GET; without the lock */
static void ra_stream(struct s3_priv *sp, struct ra_stream *st, int rc)
{
	struct ra_chunk *c = st->cur;
	struct http_req sink = {
		.sink = ra_stream_sink,
		.sink_deadline = ra_stream_deadline,
		.sink_ud = st,
	};
	char range[64];
	const char *extra[2] = {range, NULL};
	struct ra_stream **pp;
	struct http_resp resp;
	struct buf url;

	snprintf(range, sizeof(range), "Range: bytes=%lld-", (long long)c->off);
	if (rc == 0)
		rc = object_url(sp, st->key, &url);
	if (rc == 0) {
		http_resp_init(&resp);
		rc = s3_do_sink(sp, "GET", url.data, extra, NULL, 0, RA_MAX,
				&sink, &resp);
		if (rc == 0 && resp.status == 206) {
			be_note_ok(sp->be);
			if (st->cur) /* the object ended in it */
				ra_stream_done(st, true);
		} else if (rc == 0 && resp.status == 416 && st->cur == c &&
			   !st->fill) {
			be_note_ok(sp->be);
			ra_stream_done(st, true); /* at or past the end */
		} else if (rc != -ECANCELED) {
			log_debug("s3: stream of '%s' ended at %lld: %s",
				  st->key, (long long)st->pos,
				  resp.error[0] ? resp.error : strerror(-rc));
		}
		http_resp_release(&resp);
		buf_release(&url);
	}
	pthread_mutex_lock(&sp->ra_lock);
	for (pp = &sp->streams; *pp && *pp != st; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = st->next;
	/* what it reserved is free again; a reader waiting may take it */
	pthread_cond_broadcast(&sp->ra_done);
	pthread_cond_broadcast(&sp->ra_work);
	free(st->buf);
	if (st->cur && sp->ra_stop) {
		ra_complete(sp, st->cur, -ECANCELED, NULL, 0, 0, false);
		st->cur = NULL;
	}
	pthread_mutex_unlock(&sp->ra_lock);
	if (st->cur)
		ra_fetch(sp, st->cur); /* the window being filled, alone */
}

/* with ra_lock held: the oldest queued prefetch no stream waits for, or
 * NULL */
static struct ra_chunk *ra_next_queued(struct s3_priv *sp)
{
	struct ra_chunk *c, *best = NULL;

	for (c = sp->chunks; c; c = c->next)
		if (c->state == RA_QUEUED && !c->dead &&
		    (!best || c->used < best->used) && !ra_reserved(sp, c))
			best = c;
	return best;
}

static void *ra_worker(void *arg)
{
	struct s3_priv *sp = arg;
	struct ra_chunk *c = NULL;

	pthread_mutex_lock(&sp->ra_lock);
	for (;;) {
		while (!sp->ra_stop && !(c = ra_next_queued(sp)))
			pthread_cond_wait(&sp->ra_work, &sp->ra_lock);
		if (sp->ra_stop)
			break;
		c->state = RA_FETCHING;
		if (c->seq) {
			struct ra_stream st;
			/* begun under the lock: no other worker takes the
			 * windows after c meanwhile */
			int rc = ra_stream_begin(sp, &st, c);

			pthread_mutex_unlock(&sp->ra_lock);
			ra_stream(sp, &st, rc);
		} else {
			pthread_mutex_unlock(&sp->ra_lock);
			ra_fetch(sp, c);
		}
		pthread_mutex_lock(&sp->ra_lock);
	}
	pthread_mutex_unlock(&sp->ra_lock);
	return NULL;
}

/*
 * With ra_lock held: make sure the workers run in this process.  Failing
 * to start them is harmless: readers fetch queued chunks themselves.
 */
static void ra_start_workers(struct s3_priv *sp)
{
	if (sp->n_workers && sp->workers_pid == getpid())
		return;
	sp->n_workers = 0; /* threads of a parent process are gone */
	sp->workers_pid = getpid();
	while (sp->n_workers < RA_WORKERS &&
	       pthread_create(&sp->workers[sp->n_workers], NULL, ra_worker,
			      sp) == 0)
		sp->n_workers++;
}

static void ra_stop_workers(struct s3_priv *sp)
{
	unsigned i, n;

	if (!sp->ra_lock_init || !sp->ra_work_init)
		return;
	pthread_mutex_lock(&sp->ra_lock);
	sp->ra_stop = true;
	n = sp->workers_pid == getpid() ? sp->n_workers : 0;
	sp->n_workers = 0;
	pthread_cond_broadcast(&sp->ra_work);
	pthread_mutex_unlock(&sp->ra_lock);
	for (i = 0; i < n; i++)
		pthread_join(sp->workers[i], NULL);
}

/*
 * With ra_lock held: a read was served from `c`, part of a sequential
 * stream: queue the RA_DEPTH windows after it that are not known yet, each
 * twice the size of the one before it (at most RA_MAX), while the budget
 * allows and until a window that ended the object.
 */
static void ra_prefetch(struct s3_priv *sp, const struct ra_chunk *c)
{
	off_t pos = c->off + (off_t)c->want, nx;
	size_t w = c->want;
	unsigned d;
	bool queued = false;

	if (!c->seq || c->state != RA_READY || c->eof || sp->ra_stop)
		return;
	for (d = 0; d < RA_DEPTH; d++) {
		struct ra_chunk *n = ra_find(sp, c->key, pos);

		if (n) {
			if (n->state == RA_READY && n->eof)
				break;
			pos = n->off + (off_t)n->want;
			w = n->want;
			continue;
		}
		w = w * 2 > RA_MAX ? RA_MAX : w * 2;
		nx = ra_next_start(sp, c->key, pos);
		if (nx - pos < (off_t)w)
			w = (size_t)(nx - pos);
		if (!ra_new(sp, c->key, pos, w, true, RA_QUEUED, false))
			break;
		queued = true;
		pos += (off_t)w;
	}
	if (queued) {
		ra_start_workers(sp);
		pthread_cond_broadcast(&sp->ra_work);
	}
}

/*
 * With ra_lock held: a sequential stream reads from `c`: its windows
 * before the one just behind `c` are read and done with.  They go (their
 * buffers to the spares, for the windows ahead), rather than filling the
 * budget until the least recently used is evicted.
 */
static void ra_drop_behind(struct s3_priv *sp, const struct ra_chunk *c)
{
	struct ra_chunk *o, *nx;

	if (!c->seq)
		return;
	for (o = sp->chunks; o; o = nx) {
		nx = o->next;
		if (o != c && o->seq && !o->dead && !o->users &&
		    o->state == RA_READY && o->off + (off_t)o->want < c->off &&
		    !strcmp(o->key, c->key))
			ra_kill(sp, o);
	}
}

static void ra_forget(struct s3_priv *sp, const char *key)
{
	struct ra_chunk *c, *nx;

	pthread_mutex_lock(&sp->ra_lock);
	for (c = sp->chunks; c; c = nx) {
		nx = c->next;
		if (!c->dead && !strcmp(c->key, key))
			ra_kill(sp, c);
	}
	pthread_mutex_unlock(&sp->ra_lock);
}

/*
 * With ra_lock held: wait until `c` is no longer being fetched nor
 * reserved for a stream, at most until `deadline_ms`.  0, or -ETIMEDOUT.
 */
static int ra_wait(struct s3_priv *sp, struct ra_chunk *c, int64_t deadline_ms)
{
	while (c->state == RA_FETCHING ||
	       (c->state == RA_QUEUED && ra_reserved(sp, c))) {
		struct timespec ts = {
			.tv_sec = (time_t)(deadline_ms / 1000),
			.tv_nsec = (long)(deadline_ms % 1000) * 1000000L,
		};

		if (mono_ms() >= deadline_ms ||
		    pthread_cond_timedwait(&sp->ra_done, &sp->ra_lock, &ts) ==
			    ETIMEDOUT)
			return c->state == RA_FETCHING ||
					       (c->state == RA_QUEUED &&
						ra_reserved(sp, c))
				       ? -ETIMEDOUT
				       : 0;
	}
	return 0;
}

static ssize_t s3_read(struct backend *be, const char *path, void *buf,
		       size_t size, off_t off)
{
	struct s3_priv *sp = be->priv;
	char key[S3_KEY_MAX + 1];
	/* waiting on others' fetches: at most the deadline, once per read */
	int64_t deadline_ms = mono_ms() + sp->timeout_ms + RA_WAIT_MARGIN_MS;
	size_t done = 0;
	off_t cur = off;
	int rc;

	rc = file_key(sp, path, key);
	if (rc < 0)
		return rc;
	if (size > SSIZE_MAX)
		size = SSIZE_MAX;
	while (done < size) {
		struct ra_chunk *c;
		bool mine = false, eof = false;
		size_t n = 0;

		pthread_mutex_lock(&sp->ra_lock);
		c = ra_find(sp, key, cur);
		if (!c) {
			struct ra_chunk *prev = ra_ending_at(sp, key, cur);
			size_t want = RA_MIN;
			off_t nx;

			if (timeout_memo_hit(sp, key, cur)) {
				pthread_mutex_unlock(&sp->ra_lock);
				return done ? (ssize_t)done : -ETIMEDOUT;
			}
			if (prev)
				want = prev->want * 2 > RA_MAX ? RA_MAX
							       : prev->want * 2;
			if (want < size - done)
				want = size - done;
			nx = ra_next_start(sp, key, cur);
			if (nx - cur < (off_t)want)
				want = (size_t)(nx - cur);
			c = ra_new(sp, key, cur, want, prev != NULL,
				   RA_FETCHING, true);
			if (!c) {
				pthread_mutex_unlock(&sp->ra_lock);
				return done ? (ssize_t)done : -ENOMEM;
			}
			mine = true;
		}
		c->users++;
		/* a window a stream will fill: wait for it (at most the
		 * deadline, then fetch it here) */
		if (!mine && c->state == RA_QUEUED && ra_reserved(sp, c))
			(void)ra_wait(sp, c, deadline_ms);
		if (!mine && c->state == RA_QUEUED) {
			c->state = RA_FETCHING; /* not started: take it over */
			mine = true;
		}
		if (mine) {
			pthread_mutex_unlock(&sp->ra_lock);
			ra_fetch(sp, c);
			pthread_mutex_lock(&sp->ra_lock);
			rc = c->state == RA_FAILED ? c->err : 0;
		} else {
			rc = ra_wait(sp, c, deadline_ms);
			if (rc == 0 && c->state == RA_FAILED)
				rc = c->err;
		}
		if (rc == 0) {
			/* RA_READY: immutable, pinned by users */
			c->used = ++sp->ra_tick;
			ra_drop_behind(sp, c);
			ra_prefetch(sp, c);
			if (cur < c->off + (off_t)c->len) {
				n = (size_t)(c->off + (off_t)c->len - cur);
				if (n > size - done)
					n = size - done;
			}
			eof = c->eof &&
			      cur + (off_t)n >= c->off + (off_t)c->len;
			pthread_mutex_unlock(&sp->ra_lock);
			if (n)
				memcpy((char *)buf + done,
				       c->data + (cur - c->off), n);
			pthread_mutex_lock(&sp->ra_lock);
		}
		c->users--;
		ra_maybe_free(sp, c);
		pthread_mutex_unlock(&sp->ra_lock);
		if (rc < 0)
			return done ? (ssize_t)done : rc;
		done += n;
		cur += (off_t)n;
		if (eof || n == 0)
			break;
	}
	return (ssize_t)done;
}

/* ---- remove ----------------------------------------------------------- */

static int s3_remove(struct backend *be, const char *path)
{
	struct s3_priv *sp = be->priv;
	char key[S3_KEY_MAX + 1];
	struct http_resp resp;
	struct buf url;
	int rc;

	rc = file_key(sp, path, key);
	if (rc < 0)
		return rc;
	ra_forget(sp, key);
	rc = object_url(sp, key, &url);
	if (rc < 0)
		return rc;
	http_resp_init(&resp);
	rc = s3_do(sp, "DELETE", url.data, NULL, NULL, 0, 0, &resp);
	rc = s3_result(be, "remove", key, rc, &resp);
	http_resp_release(&resp);
	buf_release(&url);
	return rc;
}

static int s3_describe(struct backend *be, struct buf *out)
{
	struct s3_priv *sp = be->priv;

	return sp->cred ? awscred_describe(sp->cred, out) : 0;
}

const struct be_ops be_s3_ops = {
	.name = "s3",
	.caps = BE_CAP_DELETE | BE_CAP_REMOTE,
	.priv_size = sizeof(struct s3_priv),
	.init = s3_init,
	.destroy = s3_destroy,
	.list_page = s3_list_page,
	.stat = s3_stat,
	.read = s3_read,
	.remove = s3_remove,
	.describe = s3_describe,
};
