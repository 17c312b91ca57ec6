/*
 * gcs — gs:// namespaces (README "GCS with service accounts").
 *
 * Which API is chosen by which credentials exist: HMAC keys (access_key /
 * secret_key, a key=value credentials_file, GOOGLE_ACCESS_KEY_ID /
 * GOOGLE_SECRET_ACCESS_KEY) keep the S3-compatible XML API of the s3
 * backend, to which every op is handed; a service-account JSON key
 * (credentials_file, imported from fs.gs.auth.service.account.json.keyfile,
 * or GOOGLE_APPLICATION_CREDENTIALS) or the GCE metadata server use the
 * JSON API with an OAuth2 bearer token (gcsauth):
 *
 *   list   GET  {base}/storage/v1/b/BUCKET/o?prefix=&delimiter=/&pageToken=
 *   stat   GET  {base}/storage/v1/b/BUCKET/o/NAME  (404: list "NAME/")
 *   read   GET  {base}/storage/v1/b/BUCKET/o/NAME?alt=media, Range
 *   remove DELETE {base}/storage/v1/b/BUCKET/o/NAME
 *
 * base is `endpoint` (or STORAGE_EMULATOR_HOST), default
 * https://storage.googleapis.com.  A request answered 401 is sent once more
 * with a fresh token.  Neither credentials at all: the XML API, unsigned.
 * A store that did not answer (deadline, refused) is not asked again for
 * one timeout: http_perform's pause, README "Failure modes".
 *
 * Threads: priv is immutable after init; gcsauth guards its token.
 */
#include "backends/backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "backends/awscred.h"
#include "backends/gcsauth.h"
#include "backends/http.h"
#include "util/log.h"
#include "util/relpath.h"
#include "backends/s3_url.h"

#define GCS_BASE_DFLT "https://storage.googleapis.com"
#define GCS_LIST_MAX  ((size_t)32 << 20)
#define GCS_PAGE      1000

struct gcs_priv {
	struct backend *xml; /* the s3 backend serving the XML API, or NULL */
	struct gcsauth *auth;
	struct s3_uri uri;
	char base[512];
	char *ca_file;
	unsigned timeout_ms, connect_ms, retries, max_keys;
};

/* ---- helpers ------------------------------------------------------------ */

/* percent-encode everything but unreserved characters (and '/' if keep) */
static int pct(struct buf *b, const char *s, bool keep_slash)
{
	static const char hx[] = "0123456789ABCDEF";
	int rc = 0;

	for (; *s && !rc; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~' || (keep_slash && c == '/'))
			rc = buf_append(b, s, 1);
		else
			rc = buf_printf(b, "%%%c%c", hx[c >> 4], hx[c & 15]);
	}
	return rc;
}

static int obj_url(const struct gcs_priv *gp, const char *name,
		   const char *query, struct buf *url)
{
	int rc;

	buf_init(url, 16384);
	rc = buf_printf(url, "%s/storage/v1/b/%s/o/", gp->base, gp->uri.bucket);
	if (!rc)
		rc = pct(url, name, false);
	if (!rc && query)
		rc = buf_printf(url, "?%s", query);
	if (rc) {
		buf_release(url);
		return -ENAMETOOLONG;
	}
	return 0;
}

static int gcs_do(struct backend *be, const char *method, const char *url,
		  const char *extra, size_t max_body, struct http_resp *resp)
{
	struct gcs_priv *gp = be->priv;
	const char *hdrs[3] = {NULL, extra, NULL};
	char *auth = NULL;
	int rc, tries = 0;

	for (;;) {
		struct http_req req = {
			.method = method,
			.url = url,
			.headers = hdrs,
			.timeout_ms = gp->timeout_ms,
			.connect_timeout_ms = gp->connect_ms,
			.retries = gp->retries,
			.max_body = max_body,
			.ca_file = gp->ca_file,
			.pause_unreachable = true,
		};

		rc = gcsauth_header(gp->auth, &auth);
		if (rc < 0) {
			snprintf(resp->error, sizeof(resp->error),
				 "no access token: %s", strerror(-rc));
			return rc == -ETIMEDOUT ? rc : -EACCES;
		}
		hdrs[0] = auth;
		rc = http_perform(&req, resp);
		if (rc == 0 && resp->status == 401 && tries++ == 0 &&
		    gcsauth_refused(gp->auth, auth)) {
			log_info("gcs: %s: token refused, sending again with a "
				 "fresh one",
				 method);
			explicit_bzero(auth, strlen(auth));
			free(auth);
			auth = NULL;
			http_resp_release(resp);
			http_resp_init(resp);
			continue;
		}
		break;
	}
	explicit_bzero(auth, strlen(auth));
	free(auth);
	return rc;
}

/* -errno for a finished request; logs and notes health like s3 does */
static int gcs_result(struct backend *be, const char *op, const char *name,
		      int rc, const struct http_resp *resp)
{
	int err;

	if (rc < 0) {
		log_warn("gcs: %s '%s': %s", op, name,
			 resp->error[0] ? resp->error : strerror(-rc));
		be_note_error(be, rc, "%s %s: %s", op, name,
			      resp->error[0] ? resp->error : strerror(-rc));
		return rc;
	}
	if (resp->status >= 200 && resp->status < 300) {
		be_note_ok(be);
		return 0;
	}
	err = resp->status >= 500 && resp->status < 600
		      ? -EIO
		      : http_status_to_errno(resp->status);
	if (err == -ENOENT || err == -ERANGE) {
		be_note_ok(be);
		return err;
	}
	log_warn("gcs: %s '%s': HTTP %ld (%s)", op, name, resp->status,
		 strerror(-err));
	be_note_error(be, err, "%s %s: HTTP %ld", op, name, resp->status);
	return err;
}

/*
 * The XML API's backend notes health on itself: copy it to `be`, which is
 * the one .stfs/health reads.  Returns rc.
 */
static long mirror(struct backend *be, long rc)
{
	struct gcs_priv *gp = be->priv;
	int err;
	int64_t err_ms, ok_ms;
	char msg[sizeof(be->last_err_msg)];

	be_health(gp->xml, &err, &err_ms, &ok_ms, msg, sizeof(msg));
	pthread_mutex_lock(&be->health_lock);
	be->last_err = err;
	be->last_err_ms = err_ms;
	be->last_ok_ms = ok_ms;
	memcpy(be->last_err_msg, msg, sizeof(msg));
	pthread_mutex_unlock(&be->health_lock);
	return rc;
}

static bool name_ok(const char *rel, bool recursive)
{
	if (!*rel || rel[strlen(rel) - 1] == '/')
		return false;
	for (const unsigned char *c = (const unsigned char *)rel; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	if (!recursive && strchr(rel, '/'))
		return false;
	return relpath_check(rel) == 0;
}

/* an object resource's size and mtime */
static void obj_attr(json_t *o, struct be_attr *a)
{
	const char *sz = json_string_value(json_object_get(o, "size"));
	const char *up = json_string_value(json_object_get(o, "updated"));
	char t[32];
	int64_t ms = 0;
	size_t n;

	*a = (struct be_attr){.type = BE_FILE};
	if (sz)
		a->size = strtoull(sz, NULL, 10);
	if (up) {
		/* "2026-12-01T10:00:00.123Z": whole seconds, then the ms */
		n = strlen(up);
		if (n >= 20 && n < sizeof(t)) {
			memcpy(t, up, 19);
			t[19] = 'Z';
			t[20] = '\0';
			if (awscred_parse_time(t, &ms) == 0) {
				int scale = 100;

				for (size_t i = 20;
				     up[19] == '.' && i < n && up[i] >= '0' &&
				     up[i] <= '9' && scale;
				     i++, scale /= 10)
					ms += (up[i] - '0') * scale;
				a->mtime_ns = ms * 1000000LL;
			}
		}
	}
}

/* ---- list --------------------------------------------------------------- */

/*
 * One page of objects.list.  0 with *doc (json_decref it); -errno.
 */
static int list_raw(struct backend *be, const char *prefix, bool recursive,
		    unsigned max, const char *cursor, json_t **doc)
{
	struct gcs_priv *gp = be->priv;
	struct http_resp resp;
	struct buf url;
	json_error_t je;
	int rc;

	*doc = NULL;
	buf_init(&url, 16384);
	rc = buf_printf(&url,
			"%s/storage/v1/b/%s/o?maxResults=%u&prefix=", gp->base,
			gp->uri.bucket, max);
	if (!rc)
		rc = pct(&url, prefix, false);
	if (!rc && !recursive)
		rc = buf_puts(&url, "&delimiter=%2F");
	if (!rc && cursor) {
		rc = buf_puts(&url, "&pageToken=");
		if (!rc)
			rc = pct(&url, cursor, false);
	}
	if (rc) {
		buf_release(&url);
		return -ENAMETOOLONG;
	}
	http_resp_init(&resp);
	rc = gcs_do(be, "GET", url.data, NULL, GCS_LIST_MAX, &resp);
	rc = gcs_result(be, "list", prefix, rc, &resp);
	if (rc == 0) {
		*doc = json_loadb(resp.body.data, resp.body.len, 0, &je);
		if (!json_is_object(*doc)) {
			log_warn(
				"gcs: list '%s': unparsable answer (%zu bytes)",
				prefix, resp.body.len);
			be_note_error(be, -EIO, "list %s: bad JSON", prefix);
			json_decref(*doc);
			*doc = NULL;
			rc = -EIO;
		}
	}
	http_resp_release(&resp);
	buf_release(&url);
	return rc;
}

static int gcs_list_page(struct backend *be, const char *dir, unsigned flags,
			 const char *cursor, be_fill_fn fill, void *cookie,
			 char **next)
{
	struct gcs_priv *gp = be->priv;
	bool rec = flags & BE_LIST_RECURSIVE, stop = false;
	char prefix[S3_KEY_MAX + 2];
	json_t *doc, *items, *pfx, *v;
	const char *tok;
	size_t plen, i;
	int rc;

	if (gp->xml)
		return (int)mirror(
			be, gp->xml->ops->list_page(gp->xml, dir, flags, cursor,
						    fill, cookie, next));
	*next = NULL;
	rc = relpath_check(dir);
	if (rc < 0)
		return rc;
	if (snprintf(prefix, sizeof(prefix), "%s%s%s", gp->uri.prefix, dir,
		     *dir ? "/" : "") > S3_KEY_MAX)
		return -ENAMETOOLONG;
	plen = strlen(prefix);
	rc = list_raw(be, prefix, rec, gp->max_keys, cursor, &doc);
	if (rc < 0)
		return rc;
	items = json_object_get(doc, "items");
	pfx = json_object_get(doc, "prefixes");
	tok = json_string_value(json_object_get(doc, "nextPageToken"));
	if (!cursor && *dir && json_array_size(items) == 0 &&
	    json_array_size(pfx) == 0 && !tok) {
		json_decref(doc);
		return -ENOENT;
	}
	json_array_foreach (items, i, v) {
		const char *name =
			json_string_value(json_object_get(v, "name"));
		struct be_attr a;

		if (stop || !name || strncmp(name, prefix, plen))
			continue;
		if (!name_ok(name + plen, rec))
			continue; /* a directory marker, or a hostile name */
		obj_attr(v, &a);
		stop = fill(cookie, name + plen, &a) != 0;
	}
	json_array_foreach (pfx, i, v) {
		const char *p = json_string_value(v);
		char sub[S3_KEY_MAX + 2];
		size_t n = p ? strlen(p) : 0;
		struct be_attr a = {.type = BE_DIR};

		if (stop || rec || n <= plen || n > S3_KEY_MAX ||
		    strncmp(p, prefix, plen) || p[n - 1] != '/')
			continue;
		memcpy(sub, p + plen, n - plen - 1);
		sub[n - plen - 1] = '\0';
		if (name_ok(sub, false))
			stop = fill(cookie, sub, &a) != 0;
	}
	if (!stop && tok) {
		*next = strdup(tok);
		if (!*next)
			rc = -ENOMEM;
	}
	json_decref(doc);
	return rc;
}

/* ---- stat / read / remove ------------------------------------------------ */

static int full_name(const struct gcs_priv *gp, const char *path, char *out)
{
	int rc = relpath_check(path);

	if (rc < 0)
		return rc;
	if (snprintf(out, S3_KEY_MAX + 1, "%s%s", gp->uri.prefix, path) >
	    S3_KEY_MAX)
		return -ENAMETOOLONG;
	return 0;
}

static int gcs_stat(struct backend *be, const char *path, struct be_attr *out)
{
	struct gcs_priv *gp = be->priv;
	char name[S3_KEY_MAX + 2];
	struct http_resp resp;
	struct buf url;
	json_error_t je;
	json_t *doc;
	int rc;

	if (gp->xml)
		return (int)mirror(be, gp->xml->ops->stat(gp->xml, path, out));
	rc = full_name(gp, path, name);
	if (rc < 0)
		return rc;
	if (!*path) {
		*out = (struct be_attr){.type = BE_DIR};
		return 0;
	}
	rc = obj_url(gp, name, NULL, &url);
	if (rc < 0)
		return rc;
	http_resp_init(&resp);
	rc = gcs_do(be, "GET", url.data, NULL, 1 << 20, &resp);
	rc = gcs_result(be, "stat", name, rc, &resp);
	if (rc == 0) {
		doc = json_loadb(resp.body.data, resp.body.len, 0, &je);
		if (json_is_object(doc))
			obj_attr(doc, out);
		else
			rc = -EIO;
		json_decref(doc);
	}
	http_resp_release(&resp);
	buf_release(&url);
	if (rc != -ENOENT)
		return rc;
	/* a directory when anything lies below "name/" */
	{
		size_t nl = strlen(name);

		name[nl] = '/';
		name[nl + 1] = '\0';
	}
	rc = list_raw(be, name, true, 1, NULL, &doc);
	if (rc < 0)
		return rc;
	rc = json_array_size(json_object_get(doc, "items")) ? 0 : -ENOENT;
	json_decref(doc);
	if (rc == 0)
		*out = (struct be_attr){.type = BE_DIR};
	return rc;
}

static ssize_t gcs_read(struct backend *be, const char *path, void *buf,
			size_t size, off_t off)
{
	struct gcs_priv *gp = be->priv;
	char name[S3_KEY_MAX + 1], range[80];
	struct http_resp resp;
	struct buf url;
	ssize_t n = 0;
	int rc;

	if (gp->xml)
		return (ssize_t)mirror(
			be, gp->xml->ops->read(gp->xml, path, buf, size, off));
	rc = full_name(gp, path, name);
	if (rc < 0)
		return rc;
	if (!*path)
		return -EISDIR;
	if (size == 0)
		return 0;
	snprintf(range, sizeof(range), "Range: bytes=%lld-%lld", (long long)off,
		 (long long)off + (long long)size - 1);
	rc = obj_url(gp, name, "alt=media", &url);
	if (rc < 0)
		return rc;
	http_resp_init(&resp);
	rc = gcs_do(be, "GET", url.data, range, size + 1024, &resp);
	rc = gcs_result(be, "read", name, rc, &resp);
	if (rc == -ERANGE) {
		rc = 0; /* at or past the end */
	} else if (rc == 0 && resp.status == 206) {
		n = (ssize_t)(resp.body.len > size ? size : resp.body.len);
		memcpy(buf, resp.body.data, (size_t)n);
	} else if (rc == 0 && (uint64_t)off < resp.body.len) {
		/* the whole object: the server ignored Range */
		n = (ssize_t)(resp.body.len - (size_t)off);
		if ((size_t)n > size)
			n = (ssize_t)size;
		memcpy(buf, resp.body.data + off, (size_t)n);
	}
	http_resp_release(&resp);
	buf_release(&url);
	return rc < 0 ? rc : n;
}

static int gcs_remove(struct backend *be, const char *path)
{
	struct gcs_priv *gp = be->priv;
	char name[S3_KEY_MAX + 1];
	struct http_resp resp;
	struct buf url;
	int rc;

	if (gp->xml)
		return (int)mirror(be, gp->xml->ops->remove(gp->xml, path));
	rc = full_name(gp, path, name);
	if (rc < 0)
		return rc;
	if (!*path)
		return -EISDIR;
	rc = obj_url(gp, name, NULL, &url);
	if (rc < 0)
		return rc;
	http_resp_init(&resp);
	rc = gcs_do(be, "DELETE", url.data, NULL, 0, &resp);
	rc = gcs_result(be, "remove", name, rc, &resp);
	http_resp_release(&resp);
	buf_release(&url);
	return rc;
}

static int gcs_describe(struct backend *be, struct buf *out)
{
	struct gcs_priv *gp = be->priv;

	if (gp->xml)
		return be_describe(gp->xml, out);
	return gp->auth ? gcsauth_describe(gp->auth, out) : 0;
}

/* ---- init / destroy ------------------------------------------------------ */

/* does `path` hold a JSON document (a service-account key)? */
static bool looks_json(const char *path)
{
	char c = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while ((c = (char)fgetc(f)) == ' ' || c == '\n' || c == '\t' ||
	       c == '\r')
		;
	fclose(f);
	return c == '{';
}

static int gcs_init(struct backend *be, const char *uri,
		    const struct stfs_conf *conf)
{
	struct gcs_priv *gp = be->priv;
	struct objstore_settings set;
	const char *cf, *emu;
	bool hmac, json_key;
	struct gcsauth_conf ac = {0};
	int rc;

	/* the backend's own settings: nothing else of conf is read (conf goes
	 * on to the s3 backend only, which takes its own) */
	conf_objstore_settings(conf, &set);
	emu = conf_env_get(set.env, "STORAGE_EMULATOR_HOST");
	cf = set.credentials_file;
	/* HMAC keys: set, or GOOGLE_ACCESS_KEY_ID imported by conf */
	hmac = set.access_key != NULL;
	json_key = cf && looks_json(cf);
	if (s3_uri_parse(uri, &gp->uri) < 0) {
		log_err("gcs: '%s' is not gs://BUCKET/PREFIX/", uri);
		return -EINVAL;
	}
	gp->timeout_ms = set.timeout_ms;
	gp->connect_ms = set.connect_timeout_ms;
	gp->retries = set.retries;
	gp->max_keys = GCS_PAGE;
	{
		/* the s3 backend's page size knob, for tests */
		const char *mk = conf_env_get(set.env, "STFS_S3_MAX_KEYS");
		char *end = NULL;
		long v = mk && *mk ? strtol(mk, &end, 10) : 0;

		if (end && !*end && v >= 1 && v <= GCS_PAGE)
			gp->max_keys = (unsigned)v;
	}
	if (set.ca_file) {
		char why[128];

		/* else every call fails alike, and the mount with them */
		if (http_ca_file_check(set.ca_file, why, sizeof(why)) < 0) {
			log_err("gcs: ca_file %s: %s", set.ca_file, why);
			return -EINVAL;
		}
		gp->ca_file = strdup(set.ca_file);
		if (!gp->ca_file)
			return -ENOMEM;
	}
	if (!hmac) {
		ac.keyfile = json_key ? cf : NULL;
		ac.timeout_ms = gp->timeout_ms < 3000 ? gp->timeout_ms : 3000;
		ac.connect_ms = gp->connect_ms;
		ac.ca_file = gp->ca_file;
		ac.env = set.env;
		rc = gcsauth_open(&ac, &gp->auth);
		if (rc < 0 && rc != -ENOENT)
			return rc;
	}
	if (!gp->auth) {
		/* HMAC keys, or nothing: the XML API of the s3 backend */
		if (json_key) {
			log_err("gcs: %s is a service-account key but HMAC "
				"keys are set too: use one",
				cf);
			return -EINVAL;
		}
		return be_open_ops(&be_s3_ops, uri, conf, &gp->xml);
	}
	if (set.endpoint)
		snprintf(gp->base, sizeof(gp->base), "%s", set.endpoint);
	else if (emu && *emu)
		snprintf(gp->base, sizeof(gp->base), "%s%s",
			 strstr(emu, "://") ? "" : "http://", emu);
	else
		snprintf(gp->base, sizeof(gp->base), GCS_BASE_DFLT);
	for (size_t n = strlen(gp->base); n > 1 && gp->base[n - 1] == '/';)
		gp->base[--n] = '\0';
	log_info("gcs: bucket '%s' prefix '%s' through the JSON API at %s",
		 gp->uri.bucket, gp->uri.prefix, gp->base);
	return 0;
}

static void gcs_destroy(struct backend *be)
{
	struct gcs_priv *gp = be->priv;

	if (!gp)
		return;
	be_close(gp->xml);
	gp->xml = NULL;
	gcsauth_close(gp->auth);
	gp->auth = NULL;
	free(gp->ca_file);
	gp->ca_file = NULL;
}

const struct be_ops be_gcs_ops = {
	.name = "gcs",
	.caps = BE_CAP_DELETE | BE_CAP_REMOTE,
	.priv_size = sizeof(struct gcs_priv),
	.init = gcs_init,
	.destroy = gcs_destroy,
	.list_page = gcs_list_page,
	.stat = gcs_stat,
	.read = gcs_read,
	.remove = gcs_remove,
	.describe = gcs_describe,
};
