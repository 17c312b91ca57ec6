/*
 * conf — the keys of stfs, their parsing, validation, imports and rendering.
 *
 * One table (conf_keys[]) describes every key: its name, its type and where
 * it lives in struct stfs_conf.  conf_set(), the file parser, the imports
 * and conf_render() all work from it, so a key added to the table is
 * parsed, rendered and documented in one place.
 *
 * Precedence: explicit (command line, config file) > imported (yaml,
 * environment) > defaults.  It is kept with one bit per key in
 * c->explicit_keys: set by conf_set(), checked by every import.  The order
 * in which main() applies the sources therefore does not matter.
 *
 * Secrets (secret_key, session_token, engine_password) are never copied into
 * an error message; every string is wiped before it is freed.
 */
#include "conf/conf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "conf/hsite.h"
#include "conf/schemes.h"
#include "util/log.h"

enum conf_type {
	CT_URI,	   /* storage URI, normalised with a trailing '/' */
	CT_ENGINE, /* http(s) base URL, repeatable */
	CT_ABS,	   /* absolute path */
	CT_PATH,   /* path (relative allowed: read before daemonizing) */
	CT_STR,	   /* free text without control characters */
	CT_SECRET, /* like CT_STR, never echoed, rendered <redacted> */
	CT_BOOL,
	CT_MS,	  /* duration, stored in ms */
	CT_SEC,	  /* duration, stored in seconds */
	CT_COUNT, /* small plain integer */
};

struct conf_key {
	const char *name;
	size_t off;
	unsigned long long min, max; /* durations: in ms; counts: plain */
	enum conf_type type; /* CT_SECRET: refused on the command line */
	bool required;	     /* may not be empty */
	const char *dflt;    /* applied by conf_init_defaults(), or NULL */
	const char *arg;     /* the value in stfs --help, NULL: a flag */
	const char *help;    /* one line of stfs --help */
};

#define F(field) offsetof(struct stfs_conf, field)
#define SEC	 1000ULL
#define MIN	 (60 * SEC)
#define HOUR	 (60 * MIN)
#define DAY	 (24 * HOUR)

/*
 * Rendering and --help order is this order.  The defaults here are the
 * only ones (README "Options"): conf_init_defaults() applies them.
 * K(name, type, field, required, min, max, default, ARG, help)
 */
#define K(n, t, f, r, lo, hi, d, a, h)                                  \
	{                                                               \
		.name = (n), .type = (t), .off = F(f), .required = (r), \
		.min = (lo), .max = (hi), .dflt = (d), .arg = (a),      \
		.help = (h),                                            \
	}
static const struct conf_key conf_keys[] = {
	K("checkpoint", CT_URI, checkpoint, true, 0, 0,
	  "file:///tmp/seatunnel/checkpoint_snapshot/", "URI",
	  "checkpoint namespace (file, hdfs, s3, oss, cos, gs, ... URI)"),
	K("engine", CT_ENGINE, engines, true, 0, 0, "http://127.0.0.1:8080",
	  "URL", "REST API v2 base URL, repeatable, tried in order"),
	K("imap", CT_URI, imap, true, 0, 0, "file:///tmp/seatunnel/imap/",
	  "URI", "IMap persistence namespace"),
	K("seatunnel_yaml", CT_PATH, seatunnel_yaml, false, 0, 0, NULL, "FILE",
	  "import checkpoint storage and HTTP port from seatunnel.yaml"),
	K("hazelcast_yaml", CT_PATH, hazelcast_yaml, false, 0, 0, NULL, "FILE",
	  "import the IMap map-store namespace from hazelcast.yaml"),
	K("state_dir", CT_ABS, state_dir, true, 0, 0, "/var/lib/stfs", "DIR",
	  "where releases are kept"),
	K("delete_group", CT_STR, delete_group, false, 0, 0, NULL, "GROUP",
	  "members may delete and release (default: root only)"),
	K("namespace_owner", CT_STR, namespace_owner, false, 0, 0, NULL, "USER",
	  "local namespace directories may be USER's too"),
	K("audit_log", CT_ABS, audit_log, false, 0, 0, NULL, "FILE",
	  "append audit records to FILE"),
	K("log_level", CT_STR, log_level, false, 0, 0, "info", "LEVEL",
	  "error, warning, notice, info, debug"),
	K("ro", CT_BOOL, ro, false, 0, 0, NULL, NULL,
	  "nothing can be deleted or released"),
	K("timeout", CT_MS, timeout_ms, false, 1, HOUR, "5000", "MS",
	  "deadline of one remote request"),
	K("connect_timeout", CT_MS, connect_timeout_ms, false, 1, 10 * MIN,
	  "2000", "MS", "TCP connect deadline"),
	K("engine_ttl", CT_MS, engine_ttl_ms, false, 0, DAY, "3000", "MS",
	  "reuse engine job lists this long"),
	K("storage_ttl", CT_MS, storage_ttl_ms, false, 0, DAY, "5000", "MS",
	  "reuse storage listings this long"),
	K("cache_ttl", CT_MS, cache_ttl_ms, false, 0, DAY, "3000", "MS",
	  "pseudo-file and attribute cache"),
	K("kernel_ttl", CT_MS, kernel_ttl_ms, false, 0, DAY, "60000", "MS",
	  "kernel names/attributes under jobs/ (0: cache_ttl)"),
	K("decision_age", CT_MS, decision_age_ms, false, 0, 10 * MIN, "2000",
	  "MS", "max age of the job state used by rm"),
	K("orphan_grace", CT_SEC, orphan_grace_s, false, 0, 366 * DAY, "600",
	  "S", "orphan grace period (seconds, or 10m, 1h)"),
	K("retries", CT_COUNT, retries, false, 0, 10, "2", "N",
	  "extra tries for idempotent requests"),
	K("imap_grace", CT_SEC, imap_grace_s, false, 0, 366 * DAY, "3600", "S",
	  "IMap regions written this recently are live"),
	K("engine_max_mb", CT_COUNT, engine_max_mb, false, 1, 4096, "32", "N",
	  "largest engine answer, MiB"),
	K("engine_max_jobs", CT_COUNT, engine_max_jobs, false, 1, 100000000,
	  "1000000", "N", "most jobs in one engine list"),
	K("cache_max_entries", CT_COUNT, cache_max_entries, false, 1, 100000000,
	  "20000", "N", "pseudo-files kept rendered (oldest dropped first)"),
	K("cache_max_mb", CT_COUNT, cache_max_mb, false, 1, 65536, "16", "N",
	  "bytes of the rendered pseudo-files, MiB"),
	K("readahead_max_mb", CT_COUNT, readahead_max_mb, false, 1, 65536, "64",
	  "N", "object-store read-ahead of all open files, MiB"),
	K("type_cache_max_entries", CT_COUNT, type_cache_max_entries, false, 1,
	  100000000, "200000", "N",
	  "decoded checkpoint types kept (oldest dropped first)"),
	K("type_cache_max_mb", CT_COUNT, type_cache_max_mb, false, 1, 65536,
	  "32", "N", "bytes of the decoded checkpoint types, MiB"),
	K("walsum_max_entries", CT_COUNT, walsum_max_entries, false, 1,
	  100000000, "4096", "N",
	  "decoded IMap maps kept (oldest dropped first)"),
	K("walsum_max_mb", CT_COUNT, walsum_max_mb, false, 1, 65536, "4", "N",
	  "bytes of the decoded IMap maps, MiB"),
	K("info_cache_max_entries", CT_COUNT, info_cache_max_entries, false, 1,
	  100000000, "200000", "N",
	  "decoded checkpoint summaries (info) kept (oldest dropped first)"),
	K("info_cache_max_mb", CT_COUNT, info_cache_max_mb, false, 1, 65536,
	  "16", "N", "bytes of the decoded checkpoint summaries, MiB"),
	K("engine_user", CT_STR, engine_user, false, 0, 0, NULL, "NAME",
	  "engine basic-auth user"),
	K("engine_password", CT_SECRET, engine_password, false, 0, 0, NULL,
	  "PASS",
	  "its password: config file or STFS_ENGINE_PASSWORD, never -o"),
	K("engine_password_file", CT_ABS, engine_password_file, false, 0, 0,
	  NULL, "FILE", "its first line is the engine password"),
	K("engine_ca_file", CT_ABS, engine_ca_file, false, 0, 0, NULL, "FILE",
	  "CA bundle for https:// engine URLs"),
	K("access_key", CT_STR, access_key, false, 0, 0, NULL, "ID",
	  "object-store access key (or AWS_*, OSS_*, COSN_*, GOOGLE_*)"),
	K("secret_key", CT_SECRET, secret_key, false, 0, 0, NULL, "KEY",
	  "object-store secret key: config file or environment, never -o"),
	K("session_token", CT_SECRET, session_token, false, 0, 0, NULL, "TOKEN",
	  "object-store session token: config file or environment"),
	K("credentials_file", CT_ABS, credentials_file, false, 0, 0, NULL,
	  "FILE", "object-store keys, or a GCS service-account key"),
	K("aws_credentials_provider", CT_STR, aws_credentials_provider, false,
	  0, 0, NULL, "LIST", "S3 credential providers, in order"),
	K("endpoint", CT_STR, endpoint, false, 0, 0, NULL, "URL",
	  "object-store endpoint (default: the provider's)"),
	K("region", CT_STR, region, false, 0, 0, NULL, "NAME",
	  "object-store region"),
	K("ca_file", CT_ABS, ca_file, false, 0, 0, NULL, "FILE",
	  "CA bundle for the storage's https:// endpoints"),
	K("path_style", CT_BOOL, path_style, false, 0, 0, NULL, NULL,
	  "path-style object-store URLs (https://host/bucket/key)"),
	K("namenodes", CT_STR, namenodes, false, 0, 0, NULL, "H:P,...",
	  "HDFS namenode HTTP addresses (HA)"),
	K("hdfs_user", CT_STR, hdfs_user, false, 0, 0, NULL, "NAME",
	  "HDFS user.name (default: $HADOOP_USER_NAME, the daemon's)"),
	K("hdfs_http_port", CT_COUNT, hdfs_http_port, false, 0, 65535, NULL,
	  "PORT", "namenode HTTP port of hdfs:// URIs (9870)"),
	K("kerberos_principal", CT_STR, kerberos_principal, false, 0, 0, NULL,
	  "PRINCIPAL", "HDFS Kerberos principal (default: the keytab's first)"),
	K("kerberos_keytab", CT_ABS, kerberos_keytab, false, 0, 0, NULL, "FILE",
	  "HDFS Kerberos keytab: SPNEGO and delegation tokens"),
};
#undef K

#define N_KEYS (sizeof(conf_keys) / sizeof(conf_keys[0]))

_Static_assert(N_KEYS <= 64, "explicit_keys has one bit per key");

/* ---- small helpers ---------------------------------------------------- */

static void err_msg(struct conf_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void err_msg(struct conf_err *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

static void err_where(struct conf_err *err, const char *file, int line)
{
	if (!err)
		return;
	(void)snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
}

static void str_free(char **slot)
{
	if (*slot) {
		explicit_bzero(*slot, strlen(*slot));
		free(*slot);
		*slot = NULL;
	}
}

/* Replace *slot by a copy of v (NULL clears).  0 or -ENOMEM. */
static int str_set(char **slot, const char *v)
{
	char *n = NULL;

	if (v) {
		n = strdup(v);
		if (!n)
			return -ENOMEM;
	}
	str_free(slot);
	*slot = n;
	return 0;
}

static char *str_ndup(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static bool has_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

static const struct conf_key *key_find(const char *name, size_t *idx)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		if (!strcmp(conf_keys[i].name, name)) {
			if (idx)
				*idx = i;
			return &conf_keys[i];
		}
	}
	return NULL;
}

static char **key_str(struct stfs_conf *c, const struct conf_key *k)
{
	return (char **)(void *)((char *)c + k->off);
}

static const char *key_cstr(const struct stfs_conf *c, const struct conf_key *k)
{
	const char *const *p =
		(const char *const *)(const void *)((const char *)c + k->off);
	return *p;
}

static void engines_clear(struct stfs_conf *c)
{
	for (size_t i = 0; i < c->n_engines; i++)
		str_free(&c->engines[i]);
	c->n_engines = 0;
}

/* ---- value parsers ---------------------------------------------------- */

static bool port_ok(const char *p, size_t n)
{
	unsigned long v = 0;

	if (n == 0 || n > 5)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)p[i]))
			return false;
		v = v * 10 + (unsigned long)(p[i] - '0');
	}
	return v >= 1 && v <= 65535;
}

/* host[:port] or [v6]:port; non-empty, no userinfo. */
static int authority_check(const char *a, size_t n, const char **why)
{
	const char *colon = NULL;
	size_t hl;

	if (n == 0) {
		*why = "has no host";
		return -EINVAL;
	}
	if (memchr(a, '@', n)) {
		*why = "must not carry credentials (user@host)";
		return -EINVAL;
	}
	if (a[0] == '[') {
		const char *rb = memchr(a, ']', n);

		if (!rb || rb == a + 1) {
			*why = "has a bad IPv6 address";
			return -EINVAL;
		}
		if (rb + 1 < a + n) {
			if (rb[1] != ':') {
				*why = "has a bad host";
				return -EINVAL;
			}
			colon = rb + 1;
		}
	} else {
		colon = memchr(a, ':', n);
	}
	hl = colon ? (size_t)(colon - a) : n;
	if (hl == 0) {
		*why = "has no host";
		return -EINVAL;
	}
	if (colon && !port_ok(colon + 1, n - (size_t)(colon + 1 - a))) {
		*why = "has a bad port";
		return -EINVAL;
	}
	return 0;
}

/* No "." / ".." segments, no "//" runs beyond the first. */
static bool path_clean(const char *p)
{
	const char *s = p;

	while (*s) {
		const char *e;
		size_t n;

		while (*s == '/')
			s++;
		e = strchr(s, '/');
		n = e ? (size_t)(e - s) : strlen(s);
		if ((n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += n;
	}
	return true;
}

/*
 * Check a storage URI and return a normalised copy (trailing '/'; the
 * Hadoop form file:/path becomes file:///path).  0, -EINVAL (why set) or
 * -ENOMEM.
 */
static int uri_normalize(const char *v, char **out, const char **why)
{
	const struct stfs_scheme *sch;
	const char *sep, *auth, *path;
	size_t slen, alen, plen;
	struct buf b;
	int rc;

	*out = NULL;
	if (strpbrk(v, "?# \t\\") || has_ctl(v)) {
		*why = "contains a character not allowed in a URI";
		return -EINVAL;
	}
	sep = strstr(v, "://");
	if (!sep && !strncmp(v, "file:/", 6)) {
		/* Hadoop's file:/tmp/x */
		slen = 4;
		auth = v + 5;
		alen = 0;
	} else if (!sep) {
		*why = "is not a URI (scheme://...)";
		return -EINVAL;
	} else {
		slen = (size_t)(sep - v);
		auth = sep + 3;
		path = strchr(auth, '/');
		alen = path ? (size_t)(path - auth) : strlen(auth);
	}
	sch = scheme_find(v, slen);
	if (!sch) {
		*why = scheme_unknown_why();
		return -EINVAL;
	}
	path = auth + alen;
	plen = strlen(path);
	if (sch->addr == SCHEME_ADDR_PATH) {
		if (alen && !(alen == 9 && !memcmp(auth, "localhost", 9))) {
			*why = "is a file URI with a host (use file:///path)";
			return -EINVAL;
		}
		if (strspn(path, "/") == plen) {
			*why = "has no directory path";
			return -EINVAL;
		}
	} else if (sch->addr == SCHEME_ADDR_HOST) {
		rc = authority_check(auth, alen, why);
		if (rc)
			return rc;
	} else {
		if (alen == 0) {
			*why = "has no bucket";
			return -EINVAL;
		}
		for (size_t i = 0; i < alen; i++) {
			unsigned char ch = (unsigned char)auth[i];

			if (!isalnum(ch) && ch != '-' && ch != '.' &&
			    ch != '_') {
				*why = "has a bad bucket name";
				return -EINVAL;
			}
		}
	}
	if (!path_clean(path)) {
		*why = "has a '.' or '..' path segment";
		return -EINVAL;
	}
	buf_init(&b, 2 * (size_t)CONF_MAX_LINE);
	rc = buf_append(&b, v, slen);
	if (!rc)
		rc = buf_puts(&b, "://");
	if (!rc && sch->addr != SCHEME_ADDR_PATH)
		rc = buf_append(&b, auth, alen);
	if (!rc && plen == 0)
		rc = buf_puts(&b, "/");
	if (!rc)
		rc = buf_append(&b, path, plen);
	if (!rc && plen && path[plen - 1] != '/')
		rc = buf_puts(&b, "/");
	if (rc) {
		buf_release(&b);
		*why = "is too long";
		return rc == -EFBIG ? -EINVAL : rc;
	}
	*out = buf_detach(&b, NULL);
	return *out ? 0 : -ENOMEM;
}

/* http(s)://host[:port][/path], trailing '/' removed. */
static int engine_normalize(const char *v, char **out, const char **why)
{
	const char *auth, *path;
	size_t alen, n;

	*out = NULL;
	if (strpbrk(v, "?# \t\\") || has_ctl(v)) {
		*why = "contains a character not allowed in a URL";
		return -EINVAL;
	}
	if (!strncasecmp(v, "http://", 7)) {
		auth = v + 7;
	} else if (!strncasecmp(v, "https://", 8)) {
		auth = v + 8;
	} else {
		*why = "is not an http:// or https:// URL";
		return -EINVAL;
	}
	path = strchr(auth, '/');
	alen = path ? (size_t)(path - auth) : strlen(auth);
	if (authority_check(auth, alen, why))
		return -EINVAL;
	if (path && !path_clean(path)) {
		*why = "has a '.' or '..' path segment";
		return -EINVAL;
	}
	n = strlen(v);
	while (n > (size_t)(auth - v) + alen && v[n - 1] == '/')
		n--;
	*out = str_ndup(v, n);
	return *out ? 0 : -ENOMEM;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"yes", "true", "1", "on"};
	static const char *const no[] = {"no", "false", "0", "off"};

	if (!v || !*v) { /* `-o ro`: a flag without a value */
		*out = true;
		return 0;
	}
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(v, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(v, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * A decimal number with an optional unit suffix (ms, s, m, h); a plain
 * number is in `unit_ms`.  Result in ms, checked against [min, max].
 */
static int parse_duration(const char *v, unsigned long long unit_ms,
			  unsigned long long *out, const char **why)
{
	unsigned long long n, mult;
	const char *end;
	char *e;

	if (!isdigit((unsigned char)v[0])) {
		*why = "is not a duration (a number, optionally with ms/s/m/h)";
		return -EINVAL;
	}
	errno = 0;
	n = strtoull(v, &e, 10);
	end = e;
	if (errno == ERANGE) {
		*why = "is out of range";
		return -EINVAL;
	}
	if (*end == '\0')
		mult = unit_ms;
	else if (!strcmp(end, "ms"))
		mult = 1;
	else if (!strcmp(end, "s"))
		mult = SEC;
	else if (!strcmp(end, "m"))
		mult = MIN;
	else if (!strcmp(end, "h"))
		mult = HOUR;
	else {
		*why = "has an unknown unit (ms, s, m, h)";
		return -EINVAL;
	}
	if (n > ULLONG_MAX / mult) {
		*why = "is out of range";
		return -EINVAL;
	}
	*out = n * mult;
	return 0;
}

static int parse_count(const char *v, unsigned long long *out, const char **why)
{
	char *e;

	if (!isdigit((unsigned char)v[0])) {
		*why = "is not a number";
		return -EINVAL;
	}
	errno = 0;
	*out = strtoull(v, &e, 10);
	if (errno == ERANGE || *e) {
		*why = errno == ERANGE ? "is out of range" : "is not a number";
		return -EINVAL;
	}
	return 0;
}

/*
 * `v` as an error message may show it: a URL's userinfo (everything from
 * the authority's start to the last '@', wherever it is: a password may
 * hold '/', '?' or '#') becomes "***".  Refused values are echoed so that
 * the user sees which one; a password in one never is.
 */
static void redact_userinfo(const char *v, char *out, size_t outsz)
{
	const char *sep = strstr(v, "://"), *at = strrchr(v, '@');
	size_t from = sep ? (size_t)(sep + 3 - v) : 0;

	if (!at || (size_t)(at - v) < from) {
		snprintf(out, outsz, "%s", v);
		return;
	}
	snprintf(out, outsz, "%.*s***%s", (int)from, v, at);
}

/* ---- setting one key -------------------------------------------------- */

/*
 * Apply `value` to key `k`.  `explicit` marks it as set by the user.
 * The message never contains a secret value.
 */
static int key_apply(struct stfs_conf *c, size_t idx, const char *value,
		     bool explicit, struct conf_err *err)
{
	const struct conf_key *k = &conf_keys[idx];
	const char *why = NULL;
	unsigned long long v;
	char *norm = NULL;
	bool secret = k->type == CT_SECRET;
	int rc;

	if (value && strlen(value) > CONF_MAX_LINE) {
		err_msg(err, "%s: value too long", k->name);
		return -EINVAL;
	}
	if (!value && k->type != CT_BOOL) {
		err_msg(err, "%s needs a value (%s=...)", k->name, k->name);
		return -EINVAL;
	}
	if (value && has_ctl(value)) {
		err_msg(err, "%s: control character in value", k->name);
		return -EINVAL;
	}
	if (value && !*value && (k->required || k->type > CT_BOOL)) {
		err_msg(err, "%s: empty value", k->name);
		return -EINVAL;
	}

	switch (k->type) {
	case CT_URI:
		rc = uri_normalize(value, &norm, &why);
		if (rc)
			goto bad;
		str_free(key_str(c, k));
		*key_str(c, k) = norm;
		break;
	case CT_ENGINE:
		rc = engine_normalize(value, &norm, &why);
		if (rc)
			goto bad;
		if (explicit && !c->engine_in_layer) {
			engines_clear(c); /* this source's list replaces */
			c->engine_in_layer = true;
		}
		if (c->n_engines >= CONF_MAX_ENGINES) {
			str_free(&norm);
			err_msg(err, "engine: too many engines (at most %d)",
				CONF_MAX_ENGINES);
			return -EINVAL;
		}
		c->engines[c->n_engines++] = norm;
		break;
	case CT_ABS:
		if (*value && value[0] != '/') {
			why = "is not an absolute path";
			rc = -EINVAL;
			goto bad;
		}
		__attribute__((fallthrough));
	case CT_PATH:
	case CT_STR:
	case CT_SECRET:
		rc = str_set(key_str(c, k), *value ? value : NULL);
		if (rc)
			return rc;
		break;
	case CT_BOOL:
		if (parse_bool(value, (bool *)(void *)((char *)c + k->off))) {
			why = "is not a boolean (yes/no/true/false/1/0/on/off)";
			rc = -EINVAL;
			goto bad;
		}
		break;
	case CT_MS:
	case CT_SEC:
		rc = parse_duration(value, k->type == CT_SEC ? SEC : 1, &v,
				    &why);
		if (rc)
			goto bad;
		if (v < k->min || v > k->max) {
			err_msg(err,
				"%s: '%.64s' is out of range (%llums..%llus)",
				k->name, value, k->min, k->max / SEC);
			return -EINVAL;
		}
		if (k->type == CT_SEC) {
			if (v % SEC) {
				err_msg(err,
					"%s: '%.64s' is not a whole number of seconds",
					k->name, value);
				return -EINVAL;
			}
			v /= SEC;
		}
		*(unsigned *)(void *)((char *)c + k->off) = (unsigned)v;
		break;
	case CT_COUNT:
		rc = parse_count(value, &v, &why);
		if (rc)
			goto bad;
		if (v < k->min || v > k->max) {
			err_msg(err, "%s: '%.64s' is out of range (%llu..%llu)",
				k->name, value, k->min, k->max);
			return -EINVAL;
		}
		*(unsigned *)(void *)((char *)c + k->off) = (unsigned)v;
		break;
	}
	if (explicit)
		c->explicit_keys |= 1ULL << idx;
	return 0;
bad:
	if (rc == -ENOMEM) {
		err_msg(err, "%s: out of memory", k->name);
		return rc;
	}
	if (secret) {
		err_msg(err, "%s: bad value", k->name);
	} else {
		char shown[CONF_MAX_LINE + 8];

		redact_userinfo(value, shown, sizeof(shown));
		err_msg(err, "%s: '%.80s' %s", k->name, shown, why);
	}
	return -EINVAL;
}

int conf_set(struct stfs_conf *c, const char *key, const char *value,
	     struct conf_err *err)
{
	size_t idx;
	int rc;

	err_where(err, "", 0);
	if (!key || !key_find(key, &idx))
		return -ENOENT;
	rc = key_apply(c, idx, value, true, err);
	return rc;
}

void conf_begin_layer(struct stfs_conf *c)
{
	c->engine_in_layer = false;
}

bool conf_is_explicit(const struct stfs_conf *c, const char *key)
{
	size_t idx;

	return key_find(key, &idx) && (c->explicit_keys & (1ULL << idx));
}

/* An import: only when the user did not set the key. */
static int import_set(struct stfs_conf *c, const char *key, const char *value,
		      struct conf_err *err)
{
	size_t idx;

	if (!key_find(key, &idx))
		return -ENOENT;
	if (c->explicit_keys & (1ULL << idx))
		return 0;
	if (conf_keys[idx].type == CT_ENGINE)
		engines_clear(c);
	return key_apply(c, idx, value, false, err);
}

/* ---- defaults / release ----------------------------------------------- */

int conf_init_defaults(struct stfs_conf *c)
{
	*c = (struct stfs_conf){0};
	for (size_t i = 0; i < N_KEYS; i++) {
		int rc = conf_keys[i].dflt ? key_apply(c, i, conf_keys[i].dflt,
						       false, NULL)
					   : 0;

		if (rc) {
			conf_release(c);
			return rc == -ENOMEM ? rc : -EINVAL;
		}
	}
	return 0;
}

unsigned conf_default_u(const char *name)
{
	struct stfs_conf d = {0};
	size_t i;

	if (!key_find(name, &i) || !conf_keys[i].dflt ||
	    key_apply(&d, i, conf_keys[i].dflt, false, NULL))
		return 0;
	return *(const unsigned *)(const void *)((const char *)&d +
						 conf_keys[i].off);
}

static const char *nz(const char *s)
{
	return s && *s ? s : NULL;
}

void conf_local_settings(const struct stfs_conf *c, struct local_settings *o)
{
	o->namespace_owner = c ? nz(c->namespace_owner) : NULL;
}

void conf_objstore_settings(const struct stfs_conf *c,
			    struct objstore_settings *o)
{
	*o = (struct objstore_settings){
		.timeout_ms = c && c->timeout_ms ? c->timeout_ms
						 : conf_default_u("timeout"),
		.connect_timeout_ms = c ? c->connect_timeout_ms : 0,
		.retries = c ? c->retries : conf_default_u("retries"),
		.storage_ttl_ms = c && c->storage_ttl_ms
					  ? c->storage_ttl_ms
					  : conf_default_u("storage_ttl"),
		.readahead_max_mb =
			c && c->readahead_max_mb
				? c->readahead_max_mb
				: conf_default_u("readahead_max_mb"),
	};
	if (!c)
		return;
	o->access_key = nz(c->access_key);
	o->secret_key = nz(c->secret_key);
	o->session_token = nz(c->session_token);
	o->keys_from = conf_is_explicit(c, "access_key") ? "config keys"
		       : c->seatunnel_yaml ? "seatunnel.yaml or environment"
					   : "environment";
	o->credentials_file = nz(c->credentials_file);
	o->aws_credentials_provider = nz(c->aws_credentials_provider);
	o->endpoint = nz(c->endpoint);
	o->region = nz(c->region);
	o->ca_file = nz(c->ca_file);
	o->path_style = c->path_style;
	o->env = &c->env;
}

void conf_release(struct stfs_conf *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct conf_key *k = &conf_keys[i];

		if (k->type <= CT_SECRET && k->type != CT_ENGINE)
			str_free(key_str(c, k));
	}
	engines_clear(c);
	str_free(&c->engine_http_port);
	conf_env_release(&c->env);
	explicit_bzero(c, sizeof(*c));
}

/* ---- the config file -------------------------------------------------- */

static bool key_char(char ch)
{
	return islower((unsigned char)ch) || isdigit((unsigned char)ch) ||
	       ch == '_';
}

static bool is_secret_key(const char *k)
{
	const struct conf_key *ck = key_find(k, NULL);

	return ck && ck->type == CT_SECRET;
}

/*
 * One line (no newline, no NUL, NUL-terminated in `line`).  Fills *secret
 * when the line set a secret.  err->msg on error.
 */
static int parse_line(struct stfs_conf *c, char *line, bool *secret,
		      struct conf_err *err)
{
	char *p = line, *eq, *k, *ke, *v, *ve;
	size_t idx;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	eq = strchr(p, '=');
	if (!eq) {
		err_msg(err, "expected 'key = value'");
		return -EINVAL;
	}
	k = p;
	ke = eq;
	while (ke > k && (ke[-1] == ' ' || ke[-1] == '\t'))
		ke--;
	if (ke == k) {
		err_msg(err, "missing key before '='");
		return -EINVAL;
	}
	for (char *q = k; q < ke; q++) {
		if (!key_char(*q)) {
			err_msg(err, "bad key '%.*s'",
				(int)(ke - k > 64 ? 64 : ke - k), k);
			return -EINVAL;
		}
	}
	*ke = '\0';

	v = eq + 1;
	while (*v == ' ' || *v == '\t')
		v++;
	if (*v == '"') {
		char *close = strchr(v + 1, '"'), *t;

		if (!close) {
			err_msg(err, "%s: unterminated quote", k);
			return -EINVAL;
		}
		t = close + 1;
		while (*t == ' ' || *t == '\t')
			t++;
		if (*t && *t != '#') {
			err_msg(err, "%s: text after the closing quote", k);
			return -EINVAL;
		}
		*close = '\0';
		v++;
	} else {
		/* '#' starts a comment at the value's start or after blanks */
		for (ve = v; *ve; ve++) {
			if (*ve == '#' &&
			    (ve == v || ve[-1] == ' ' || ve[-1] == '\t')) {
				if (ve == v && v[-1] != ' ' && v[-1] != '\t')
					continue; /* key=#x: literal */
				break;
			}
		}
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		*ve = '\0';
	}

	if (!key_find(k, &idx)) {
		err_msg(err, "unknown key '%.64s'", k);
		return -EINVAL;
	}
	if (is_secret_key(k))
		*secret = true;
	return key_apply(c, idx, v, true, err);
}

static int parse_mem(struct stfs_conf *c, const char *name, const char *text,
		     size_t len, int *secret_line, struct conf_err *err)
{
	const char *p = text, *end = text + len;
	char *line;
	int lineno = 0, rc = 0;

	*secret_line = 0;
	err_where(err, name, 0);
	line = malloc(CONF_MAX_LINE + 1);
	if (!line) {
		err_msg(err, "out of memory");
		return -ENOMEM;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = (size_t)((nl ? nl : end) - p);
		bool secret = false;

		if (lineno == INT_MAX) {
			rc = -EINVAL;
			err_msg(err, "too many lines");
			break;
		}
		lineno++;
		err_where(err, name, lineno);
		if (memchr(p, '\0', ll)) {
			rc = -EINVAL;
			err_msg(err, "NUL byte in line");
			break;
		}
		if (ll > 0 && p[ll - 1] == '\r')
			ll--;
		if (ll > CONF_MAX_LINE) {
			rc = -EINVAL;
			err_msg(err, "line too long (more than %d bytes)",
				CONF_MAX_LINE);
			break;
		}
		memcpy(line, p, ll);
		line[ll] = '\0';
		rc = parse_line(c, line, &secret, err);
		explicit_bzero(line, ll);
		if (rc)
			break;
		if (secret && !*secret_line)
			*secret_line = lineno;
		p = nl ? nl + 1 : end;
	}
	free(line);
	if (!rc)
		err_where(err, name, 0);
	return rc;
}

int conf_parse_mem(struct stfs_conf *c, const char *name, const char *text,
		   size_t len, struct conf_err *err)
{
	int secret_line, rc;

	conf_begin_layer(c);
	rc = parse_mem(c, name, text, len, &secret_line, err);
	conf_begin_layer(c);
	return rc;
}

/* Read a whole regular file (at most CONF_MAX_FILE bytes).  free() *out. */
static int read_file(const char *path, char **out, size_t *outlen,
		     struct stat *st, struct conf_err *err)
{
	size_t len = 0;
	char *data = NULL;
	int fd, rc = 0;

	*out = NULL;
	*outlen = 0;
	err_where(err, path, 0);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		err_msg(err, "cannot open: %s", strerror(-rc));
		return rc;
	}
	if (fstat(fd, st) < 0) {
		rc = -errno;
		err_msg(err, "cannot stat: %s", strerror(-rc));
		goto out;
	}
	if (!S_ISREG(st->st_mode)) {
		rc = -EINVAL;
		err_msg(err, "not a regular file");
		goto out;
	}
	if (st->st_size > CONF_MAX_FILE) {
		rc = -EFBIG;
		err_msg(err, "file too large (more than %ld bytes)",
			CONF_MAX_FILE);
		goto out;
	}
	data = malloc((size_t)st->st_size + 1);
	if (!data) {
		rc = -ENOMEM;
		err_msg(err, "out of memory");
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, data + len, (size_t)st->st_size + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			err_msg(err, "cannot read: %s", strerror(-rc));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > (size_t)st->st_size) {
			rc = -EFBIG;
			err_msg(err, "file grew while being read");
			goto out;
		}
	}
	data[len] = '\0';
out:
	close(fd);
	if (rc && data) {
		explicit_bzero(data, len);
		free(data);
		data = NULL;
	}
	*out = data;
	*outlen = len;
	return rc;
}

static void data_free(char *data, size_t len)
{
	if (data) {
		explicit_bzero(data, len);
		free(data);
	}
}

/*
 * A file that holds a secret (first at `secret_line`; 0: none) must not be
 * readable by group or others: the same rule for config= and the yaml
 * imports.  The message names the file and line, never the secret.
 */
static int secret_mode_check(const char *path, int secret_line,
			     const struct stat *st, struct conf_err *err)
{
	if (!secret_line || !(st->st_mode & 077))
		return 0;
	err_where(err, path, secret_line);
	err_msg(err,
		"holds a secret but is readable by group or others (mode %04o); run chmod 600 on it",
		(unsigned)(st->st_mode & 07777));
	return -EACCES;
}

int conf_load_file(struct stfs_conf *c, const char *path, struct conf_err *err)
{
	struct stat st;
	char *data;
	size_t len;
	int rc, secret_line;

	rc = read_file(path, &data, &len, &st, err);
	if (rc)
		return rc;
	conf_begin_layer(c);
	rc = parse_mem(c, path, data, len, &secret_line, err);
	conf_begin_layer(c);
	data_free(data, len);
	if (rc)
		return rc;
	return secret_mode_check(path, secret_line, &st, err);
}

/* ---- yaml imports ----------------------------------------------------- */

struct yctx {
	yaml_document_t doc;
	const char *name;
	struct conf_err *err;
	int secret_line; /* first line that holds a secret; 0: none */
	/* the hdfs_site_path file of the HDFS plugin-config being imported
	 * (hprop), or NULL */
	const struct hsite *site;
	const char *site_path;
};

/* Note that the scalar `n` holds a secret (for the file-mode check). */
static void ysecret(struct yctx *y, const yaml_node_t *n)
{
	if (n && !y->secret_line)
		y->secret_line = (int)n->start_mark.line + 1;
}

static yaml_node_t *ynode(struct yctx *y, yaml_node_item_t i)
{
	return yaml_document_get_node(&y->doc, i);
}

static bool yscalar_is(yaml_node_t *n, const char *s)
{
	return n && n->type == YAML_SCALAR_NODE &&
	       n->data.scalar.length == strlen(s) &&
	       !memcmp(n->data.scalar.value, s, n->data.scalar.length);
}

static yaml_node_t *yget(struct yctx *y, yaml_node_t *m, const char *key)
{
	yaml_node_pair_t *pr;

	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (pr = m->data.mapping.pairs.start; pr < m->data.mapping.pairs.top;
	     pr++)
		if (yscalar_is(ynode(y, pr->key), key))
			return ynode(y, pr->value);
	return NULL;
}

static int yerr(struct yctx *y, yaml_node_t *at, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int yerr(struct yctx *y, yaml_node_t *at, int rc, const char *fmt, ...)
{
	va_list ap;

	err_where(y->err, y->name, at ? (int)at->start_mark.line + 1 : 0);
	if (y->err) {
		va_start(ap, fmt);
		(void)vsnprintf(y->err->msg, sizeof(y->err->msg), fmt, ap);
		va_end(ap);
	}
	return rc;
}

/*
 * The scalar at m[key] as a new string in *out (NULL when absent or
 * empty/null).  -EINVAL when it is not a scalar or has control chars.
 */
static int ystr(struct yctx *y, yaml_node_t *m, const char *key, char **out)
{
	yaml_node_t *n = yget(y, m, key);
	size_t len;

	*out = NULL;
	if (!n)
		return 0;
	if (n->type != YAML_SCALAR_NODE)
		return yerr(y, n, -EINVAL, "'%s' is not a scalar", key);
	len = n->data.scalar.length;
	if (len == 0 || (len == 1 && n->data.scalar.value[0] == '~') ||
	    (len == 4 && !memcmp(n->data.scalar.value, "null", 4)))
		return 0;
	if (len > CONF_MAX_LINE)
		return yerr(y, n, -EINVAL, "'%s' is too long", key);
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = n->data.scalar.value[i];

		if (ch < 0x20 || ch == 0x7f)
			return yerr(y, n, -EINVAL,
				    "'%s' holds a control character", key);
	}
	*out = str_ndup((const char *)n->data.scalar.value, len);
	if (!*out)
		return yerr(y, n, -ENOMEM, "out of memory");
	return 0;
}

static int yload(struct yctx *y, const char *name, const char *text, size_t len,
		 struct conf_err *err, yaml_node_t **root)
{
	yaml_parser_t parser;
	int rc = 0;

	y->name = name;
	y->err = err;
	y->secret_line = 0;
	y->site = NULL;
	y->site_path = NULL;
	*root = NULL;
	err_where(err, name, 0);
	if (len > (size_t)CONF_MAX_FILE)
		return yerr(y, NULL, -EFBIG, "file too large");
	if (!yaml_parser_initialize(&parser))
		return yerr(y, NULL, -ENOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &y->doc)) {
		err_where(err, name, (int)parser.problem_mark.line + 1);
		err_msg(err, "yaml: %s",
			parser.problem ? parser.problem : "parse error");
		rc = parser.error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
		yaml_parser_delete(&parser);
		return rc;
	}
	yaml_parser_delete(&parser);
	*root = yaml_document_get_root_node(&y->doc);
	return 0;
}

/* Trim '/' from both ends of a namespace: "/a/b/" -> "a/b". */
static void ns_trim(const char *ns, const char **s, size_t *n)
{
	const char *e;

	while (*ns == '/')
		ns++;
	e = ns + strlen(ns);
	while (e > ns && e[-1] == '/')
		e--;
	*s = ns;
	*n = (size_t)(e - ns);
}

/*
 * Hadoop resolves the absolute namespace against fs.defaultFS: the URI's
 * scheme and authority are kept, its path is replaced.  `fs` is e.g.
 * file:///tmp/, file:/, hdfs://nn:9000, s3a://bucket.  Builds
 * "<scheme>://<authority>/<namespace>/" with the scheme mapped to stfs's.
 */
static int fs_join(struct yctx *y, yaml_node_t *at, const char *fs,
		   const char *ns, char **out)
{
	static const struct {
		const char *from, *to;
	} map[] = {
		{"file", "file"},	{"hdfs", "hdfs"},
		{"webhdfs", "webhdfs"}, {"swebhdfs", "swebhdfs"},
		{"s3a", "s3"},		{"s3n", "s3"},
		{"s3", "s3"},		{"oss", "oss"},
		{"cosn", "cos"},	{"cos", "cos"},
		{"gs", "gs"},
	};
	const char *colon = strchr(fs, ':'), *auth, *ae, *nss;
	const char *to = NULL;
	size_t slen, nsn;
	struct buf b;
	int rc;

	*out = NULL;
	if (!colon)
		return yerr(y, at, -EINVAL, "'%.80s' is not a file system URI",
			    fs);
	slen = (size_t)(colon - fs);
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strlen(map[i].from) == slen &&
		    !strncasecmp(map[i].from, fs, slen))
			to = map[i].to;
	if (!to)
		return yerr(y, at, -EINVAL,
			    "file system '%.80s' is not supported by stfs", fs);
	auth = colon + 1;
	if (!strncmp(auth, "//", 2)) {
		auth += 2;
		ae = auth + strcspn(auth, "/");
	} else {
		ae = auth; /* file:/ */
	}
	ns_trim(ns, &nss, &nsn);
	buf_init(&b, 3 * (size_t)CONF_MAX_LINE);
	rc = buf_printf(&b, "%s://%.*s/", to, (int)(ae - auth), auth);
	if (!rc && nsn)
		rc = buf_printf(&b, "%.*s/", (int)nsn, nss);
	if (rc) {
		buf_release(&b);
		return yerr(y, at, rc == -ENOMEM ? rc : -EINVAL,
			    "URI too long");
	}
	*out = buf_detach(&b, NULL);
	return *out ? 0 : yerr(y, at, -ENOMEM, "out of memory");
}

struct imp {
	const char *key; /* conf key */
	const char *yk;	 /* plugin-config key */
};

/* Keys copied from a plugin-config map, per storage type. */
static const struct imp imp_s3[] = {
	{"endpoint", "fs.s3a.endpoint"},
	{"region", "fs.s3a.endpoint.region"},
	{"access_key", "fs.s3a.access.key"},
	{"secret_key", "fs.s3a.secret.key"},
	{"session_token", "fs.s3a.session.token"},
	{"path_style", "fs.s3a.path.style.access"},
	{"aws_credentials_provider", "fs.s3a.aws.credentials.provider"},
	{NULL, NULL},
};
static const struct imp imp_oss[] = {
	{"endpoint", "fs.oss.endpoint"},
	{"access_key", "fs.oss.accessKeyId"},
	{"secret_key", "fs.oss.accessKeySecret"},
	{"session_token", "fs.oss.securityToken"},
	{NULL, NULL},
};
static const struct imp imp_cos[] = {
	{"access_key", "fs.cosn.userinfo.secretId"},
	{"secret_key", "fs.cosn.userinfo.secretKey"},
	{"region", "fs.cosn.bucket.region"},
	{"endpoint", "fs.cosn.bucket.endpoint_suffix"},
	{NULL, NULL},
};
static const struct imp imp_hdfs[] = {
	{"kerberos_principal", "kerberosPrincipal"},
	{"kerberos_keytab", "kerberosKeytabFilePath"},
	{NULL, NULL},
};
static const struct imp imp_gs[] = {
	{"credentials_file", "fs.gs.auth.service.account.json.keyfile"},
	{NULL, NULL},
};

/* whether `name` is one of the comma-separated items of `list` */
static bool list_has(const char *list, const char *name, size_t n)
{
	while (list && *list) {
		size_t l;

		list += strspn(list, " ,");
		l = strcspn(list, " ,");
		if (l && l == n && !memcmp(list, name, n))
			return true;
		list += l;
	}
	return false;
}

/*
 * Hadoop properties of an HDFS store (README "HDFS"): dfs.X is the
 * plugin-config's seatunnel.hadoop.dfs.X, else the dfs.X of its
 * hdfs_site_path file (y->site) -- SeaTunnel sets the first over the
 * second, as Hadoop's Configuration.set wins over a resource.
 */
static void hkey(char *k, size_t n, const char *name)
{
	snprintf(k, n, "seatunnel.hadoop.%s", name);
}

static int herr(struct yctx *y, yaml_node_t *props, const char *name, int rc,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* an error about property `name`, placed where it was read from */
static int herr(struct yctx *y, yaml_node_t *props, const char *name, int rc,
		const char *fmt, ...)
{
	const struct hsite_prop *p = hsite_get(y->site, name);
	yaml_node_t *at;
	char k[512];
	va_list ap;

	hkey(k, sizeof(k), name);
	at = yget(y, props, k);
	if (!at && p)
		err_where(y->err, y->site_path, p->line);
	else
		err_where(y->err, y->name,
			  (int)(at ? at : props)->start_mark.line + 1);
	if (y->err) {
		va_start(ap, fmt);
		(void)vsnprintf(y->err->msg, sizeof(y->err->msg), fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* the key `name` is read from, as the user wrote it (for messages) */
static const char *hname(struct yctx *y, yaml_node_t *props, const char *name,
			 char *k, size_t n)
{
	hkey(k, n, name);
	return yget(y, props, k) || !hsite_get(y->site, name) ? k : name;
}

/* Hadoop property `name` as a new string in *out, NULL when unset (see
 * above); a file's value using ${...} is refused: stfs does not expand it */
static int hprop(struct yctx *y, yaml_node_t *props, const char *name,
		 char **out)
{
	const struct hsite_prop *p;
	char k[512];

	hkey(k, sizeof(k), name);
	*out = NULL;
	if (yget(y, props, k))
		return ystr(y, props, k, out);
	p = hsite_get(y->site, name);
	if (!p || !*p->value)
		return 0;
	if (strstr(p->value, "${"))
		return herr(y, props, name, -EINVAL,
			    "'%s' uses ${...}, which stfs does not expand; "
			    "write the value itself",
			    name);
	*out = strdup(p->value);
	return *out ? 0 : herr(y, props, name, -ENOMEM, "out of memory");
}

/*
 * hdfs_site_path (README "HDFS"): the hdfs-site.xml whose properties the
 * engine adds, read into *site (y->site meanwhile).  It must be readable
 * where stfs runs: a missing or unreadable file, a relative path and what
 * hsite_parse refuses are errors naming the file, not guesses.
 */
static int site_load(struct yctx *y, yaml_node_t *props, struct hsite *site,
		     char **path)
{
	struct stat st;
	char *data, why[160];
	size_t len;
	int rc, line;

	rc = ystr(y, props, "hdfs_site_path", path);
	if (rc || !*path)
		return rc;
	if (**path != '/')
		return yerr(y, yget(y, props, "hdfs_site_path"), -EINVAL,
			    "hdfs_site_path '%.200s' is not an absolute path",
			    *path);
	rc = read_file(*path, &data, &len, &st, y->err);
	if (rc) {
		/* read_file named the file and said why */
		if (y->err) {
			char m[sizeof(y->err->msg)];

			snprintf(m, sizeof(m), "%s", y->err->msg);
			err_msg(y->err, "hdfs_site_path: %s", m);
		}
		return rc;
	}
	rc = hsite_parse(data, len, site, why, sizeof(why), &line);
	data_free(data, len);
	if (rc) {
		err_where(y->err, *path, line);
		err_msg(y->err, "hdfs_site_path: %s", why);
		return rc;
	}
	y->site = site;
	y->site_path = *path;
	return 0;
}

/*
 * dfs.http.policy (README "HDFS", TLS): HTTP_ONLY (the default), HTTPS_ONLY
 * or HTTP_AND_HTTPS, in any case.  *https only for HTTPS_ONLY: with both
 * served, Hadoop's own clients talk http, and so does stfs.
 */
static int hdfs_policy(struct yctx *y, yaml_node_t *props, bool *https)
{
	static const char key[] = "dfs.http.policy";
	char *pol = NULL;
	int rc = hprop(y, props, key, &pol);

	*https = false;
	if (rc || !pol)
		return rc;
	if (!strcasecmp(pol, "HTTPS_ONLY"))
		*https = true;
	else if (strcasecmp(pol, "HTTP_ONLY") &&
		 strcasecmp(pol, "HTTP_AND_HTTPS"))
		rc = herr(y, props, key, -EINVAL,
			  "dfs.http.policy '%.32s' is not HTTP_ONLY, "
			  "HTTPS_ONLY or HTTP_AND_HTTPS",
			  pol);
	str_free(&pol);
	return rc;
}

/* whether fs.defaultFS's authority names one of dfs.nameservices */
static int hdfs_is_ns(struct yctx *y, yaml_node_t *props, const char *fs,
		      bool *ha)
{
	const char *auth = strstr(fs, "://");
	char *nss = NULL;
	int rc;

	*ha = false;
	if (!auth)
		return 0;
	auth += 3;
	rc = hprop(y, props, "dfs.nameservices", &nss);
	if (!rc && nss)
		*ha = list_has(nss, auth, strcspn(auth, "/:"));
	str_free(&nss);
	return rc;
}

/*
 * An http(s)-address "host:port" of property `key` as *out; a wildcard host
 * (0.0.0.0, [::] or none: a bind address) becomes `host` (the namenode's
 * rpc host, n bytes), as Hadoop's clients do.  -EINVAL without a port, or
 * a wildcard and no host to put in its place.
 */
static int web_addr(struct yctx *y, yaml_node_t *props, const char *key,
		    const char *addr, const char *host, size_t n, char **out)
{
	const char *colon = addr[0] == '[' ? strstr(addr, "]:") : NULL;
	char k[512];
	size_t hl;
	struct buf b;
	int rc;

	*out = NULL;
	colon = colon ? colon + 1 : strrchr(addr, ':');
	if (!colon || !port_ok(colon + 1, strlen(colon + 1)))
		return herr(y, props, key, -EINVAL,
			    "'%s' is not a host:port address",
			    hname(y, props, key, k, sizeof(k)));
	hl = (size_t)(colon - addr);
	if (hl && !(hl == 7 && !memcmp(addr, "0.0.0.0", 7)) &&
	    !(hl == 4 && !memcmp(addr, "[::]", 4))) {
		host = addr;
		n = hl;
	} else if (!host || !n) {
		return herr(y, props, key, -EINVAL,
			    "'%s' is a wildcard address and the namenode has "
			    "no rpc-address host",
			    hname(y, props, key, k, sizeof(k)));
	}
	buf_init(&b, CONF_MAX_LINE);
	rc = buf_printf(&b, "%.*s%s", (int)n, host, colon);
	if (rc) {
		buf_release(&b);
		return herr(y, props, key, rc == -ENOMEM ? rc : -EINVAL,
			    "'%s' is too long",
			    hname(y, props, key, k, sizeof(k)));
	}
	*out = buf_detach(&b, NULL);
	return *out ? 0 : yerr(y, props, -ENOMEM, "out of memory");
}

/*
 * HTTPS_ONLY without HA (README "HDFS", TLS): fs.defaultFS hdfs://nn:8020
 * becomes swebhdfs://<dfs.namenode.https-address>, by default nn:9871.  In
 * HA the URI's host is the nameservice: only the scheme changes.
 */
static int hdfs_https_fs(struct yctx *y, yaml_node_t *props, bool ha, char **fs)
{
	static const char key[] = "dfs.namenode.https-address";
	const char *auth = strstr(*fs, "://");
	char *web = NULL, *addr = NULL;
	size_t hl;
	struct buf b;
	int rc = 0;

	if (!auth || strncasecmp(*fs, "hdfs:", 5))
		return 0; /* webhdfs:// and swebhdfs:// say it themselves */
	auth += 3;
	hl = strcspn(auth, "/:");
	if (!ha) {
		rc = hprop(y, props, key, &web);
		if (!rc)
			rc = web_addr(y, props, key, web ? web : ":9871", auth,
				      hl, &addr);
		if (rc)
			goto out;
	}
	buf_init(&b, 2 * (size_t)CONF_MAX_LINE);
	rc = ha ? buf_printf(&b, "swebhdfs://%s", auth)
		: buf_printf(&b, "swebhdfs://%s", addr);
	if (rc) {
		buf_release(&b);
		rc = yerr(y, props, rc == -ENOMEM ? rc : -EINVAL,
			  "URI too long");
		goto out;
	}
	str_free(fs);
	*fs = buf_detach(&b, NULL);
	if (!*fs)
		rc = yerr(y, props, -ENOMEM, "out of memory");
out:
	str_free(&web);
	str_free(&addr);
	return rc;
}

/*
 * HDFS HA (README "HDFS"): when fs.defaultFS names a nameservice of
 * seatunnel.hadoop.dfs.nameservices, `namenodes` becomes the web address
 * of each of seatunnel.hadoop.dfs.ha.namenodes.<ns>: its
 * dfs.namenode.http-address.<ns>.<nn> (https-address when the store `key`
 * is swebhdfs://, as imported or set explicitly), else the host of its
 * rpc-address (the webhdfs backend adds hdfs_http_port, 9870, or 9871).
 */
static int import_hdfs_ha(struct yctx *y, struct stfs_conf *c,
			  yaml_node_t *props, const char *fs, const char *key)
{
	const char *auth = strstr(fs, "://"), *web_kind, *id;
	char *ids = NULL, *rpc = NULL, *web = NULL, *addr = NULL, k[512];
	char *const *uri = key_str(c, key_find(key, NULL));
	size_t alen;
	struct buf out;
	bool ha;
	int rc;

	if (!auth)
		return 0;
	rc = hdfs_is_ns(y, props, fs, &ha);
	if (rc || !ha)
		return rc;
	auth += 3;
	alen = strcspn(auth, "/:");
	web_kind =
		*uri && !strncasecmp(*uri, "swebhdfs:", 9) ? "https" : "http";
	snprintf(k, sizeof(k), "dfs.ha.namenodes.%.*s", (int)alen, auth);
	rc = hprop(y, props, k, &ids);
	if (rc || !ids)
		goto out;
	buf_init(&out, CONF_MAX_LINE);
	for (id = ids; *id;) {
		size_t l;

		id += strspn(id, " ,");
		l = strcspn(id, " ,");
		if (!l)
			break;
		snprintf(k, sizeof(k), "dfs.namenode.rpc-address.%.*s.%.*s",
			 (int)alen, auth, (int)l, id);
		rc = hprop(y, props, k, &rpc);
		if (rc)
			break;
		if (rpc)
			rpc[strcspn(rpc, ":")] = '\0';
		snprintf(k, sizeof(k), "dfs.namenode.%s-address.%.*s.%.*s",
			 web_kind, (int)alen, auth, (int)l, id);
		rc = hprop(y, props, k, &web);
		if (!rc && web)
			rc = web_addr(y, props, k, web, rpc,
				      rpc ? strlen(rpc) : 0, &addr);
		if (rc)
			break;
		if (!addr && rpc) {
			addr = rpc;
			rpc = NULL;
		}
		if (!addr) {
			rc = yerr(y, props, -EINVAL,
				  "namenode '%.*s' of nameservice '%.*s' has "
				  "no %s-address or rpc-address",
				  (int)l, id, (int)alen, auth, web_kind);
			break;
		}
		rc = buf_printf(&out, "%s%s", out.len ? "," : "", addr);
		str_free(&addr);
		str_free(&rpc);
		str_free(&web);
		if (rc)
			break;
		id += l;
	}
	if (!rc && out.len) {
		rc = import_set(c, "namenodes", out.data, y->err);
		if (rc)
			err_where(y->err, y->name,
				  (int)props->start_mark.line + 1);
	}
	buf_release(&out);
out:
	str_free(&ids);
	str_free(&rpc);
	str_free(&web);
	str_free(&addr);
	return rc;
}

/*
 * Apply a plugin-config / map-store properties map to `key` (checkpoint or
 * imap) and to the credentials.  `deftype` is the storage.type default,
 * `defns` the namespace default.
 */
static int import_storage(struct yctx *y, struct stfs_conf *c,
			  yaml_node_t *props, const char *key,
			  const char *deftype, const char *defns,
			  bool only_unset)
{
	char *type = NULL, *ns = NULL, *fs = NULL, *uri = NULL, *val = NULL;
	char *site_path = NULL;
	struct hsite site = {0};
	const struct imp *imp = NULL;
	const char *bkey = NULL;
	int rc;

	rc = ystr(y, props, "storage.type", &type);
	if (!rc)
		rc = ystr(y, props, "namespace", &ns);
	if (rc)
		goto out;
	if (!type && (type = strdup(deftype)) == NULL) {
		rc = yerr(y, props, -ENOMEM, "out of memory");
		goto out;
	}
	if (!strcasecmp(type, "local") || !strcasecmp(type, "hdfs")) {
		rc = ystr(y, props, "fs.defaultFS", &fs);
		if (rc)
			goto out;
		if (!fs && !strcasecmp(type, "hdfs")) {
			rc = yerr(y, props, -EINVAL,
				  "storage.type hdfs without fs.defaultFS");
			goto out;
		}
		if (!strcasecmp(type, "hdfs")) {
			bool https = false, ha = false;

			imp = imp_hdfs;
			rc = site_load(y, props, &site, &site_path);
			if (!rc)
				rc = hdfs_policy(y, props, &https);
			if (!rc && https)
				rc = hdfs_is_ns(y, props, fs, &ha);
			if (!rc && https)
				rc = hdfs_https_fs(y, props, ha, &fs);
			if (rc)
				goto out;
		}
		if (!fs && (fs = strdup("file:///")) == NULL) {
			rc = yerr(y, props, -ENOMEM, "out of memory");
			goto out;
		}
	} else if (!strcasecmp(type, "s3")) {
		bkey = "s3.bucket";
		imp = imp_s3;
	} else if (!strcasecmp(type, "oss")) {
		bkey = "oss.bucket";
		imp = imp_oss;
	} else if (!strcasecmp(type, "cos")) {
		bkey = "cos.bucket";
		imp = imp_cos;
	} else if (!strcasecmp(type, "gcs")) {
		bkey = "gcs.bucket";
		imp = imp_gs;
	} else {
		rc = yerr(y, yget(y, props, "storage.type"), -EINVAL,
			  "storage.type '%.64s' is not supported", type);
		goto out;
	}
	if (bkey) {
		rc = ystr(y, props, bkey, &fs);
		if (rc)
			goto out;
		if (!fs) {
			rc = yerr(y, props, -EINVAL,
				  "storage.type %s without %s", type, bkey);
			goto out;
		}
	}
	rc = fs_join(
		y, bkey ? yget(y, props, bkey) : yget(y, props, "fs.defaultFS"),
		fs, ns ? ns : defns, &uri);
	if (rc)
		goto out;
	rc = import_set(c, key, uri, y->err);
	if (rc) {
		err_where(y->err, y->name, (int)props->start_mark.line + 1);
		goto out;
	}
	if (!strcasecmp(type, "hdfs")) {
		rc = import_hdfs_ha(y, c, props, fs, key);
		if (rc)
			goto out;
	}
	for (; imp && imp->key; imp++) {
		char **slot;
		const struct conf_key *k = key_find(imp->key, NULL);

		rc = ystr(y, props, imp->yk, &val);
		if (rc)
			goto out;
		if (!val)
			continue;
		if (k->type == CT_SECRET)
			ysecret(y, yget(y, props, imp->yk));
		slot = k->type == CT_BOOL ? NULL : key_str(c, k);
		if (!(only_unset && slot && *slot)) {
			rc = import_set(c, imp->key, val, y->err);
			if (rc) {
				err_where(y->err, y->name,
					  (int)yget(y, props, imp->yk)
							  ->start_mark.line +
						  1);
				goto out;
			}
		}
		str_free(&val);
	}
out:
	y->site = NULL;
	y->site_path = NULL;
	hsite_release(&site);
	str_free(&site_path);
	str_free(&type);
	str_free(&ns);
	str_free(&fs);
	str_free(&uri);
	str_free(&val);
	return rc;
}

static int import_http(struct yctx *y, struct stfs_conf *c, yaml_node_t *http)
{
	char *port = NULL, *ctx = NULL, *en = NULL, *ens = NULL, *hport = NULL;
	char *ba = NULL, *user = NULL, *pass = NULL;
	bool https = false, on;
	struct buf url;
	const char *cp = "";
	int rc;

	buf_init(&url, 2 * (size_t)CONF_MAX_LINE);
	rc = ystr(y, http, "port", &port);
	if (!rc)
		rc = ystr(y, http, "context-path", &ctx);
	if (!rc)
		rc = ystr(y, http, "enable-http", &en);
	if (!rc)
		rc = ystr(y, http, "enable-https", &ens);
	if (!rc)
		rc = ystr(y, http, "https-port", &hport);
	if (!rc)
		rc = ystr(y, http, "enable-basic-auth", &ba);
	if (!rc)
		rc = ystr(y, http, "basic-auth-username", &user);
	if (!rc)
		rc = ystr(y, http, "basic-auth-password", &pass);
	if (rc)
		goto out;
	if (pass)
		ysecret(y, yget(y, http, "basic-auth-password"));
	/* only HTTPS enabled: talk to the https port */
	if (en && !parse_bool(en, &on) && !on && ens && !parse_bool(ens, &on) &&
	    on)
		https = true;
	if (https) {
		str_free(&port);
		port = hport;
		hport = NULL;
	}
	if (port && !port_ok(port, strlen(port))) {
		rc = yerr(y, yget(y, http, https ? "https-port" : "port"),
			  -EINVAL, "http port '%.16s' is not a port", port);
		goto out;
	}
	rc = str_set(&c->engine_http_port,
		     port ? port : (https ? "8443" : "8080"));
	if (rc) {
		rc = yerr(y, http, rc, "out of memory");
		goto out;
	}
	if (ctx) {
		size_t n = strlen(ctx);

		while (n && ctx[n - 1] == '/')
			ctx[--n] = '\0';
		cp = ctx;
	}
	rc = buf_printf(&url, "%s://127.0.0.1:%s%s%s", https ? "https" : "http",
			c->engine_http_port, (*cp && *cp != '/') ? "/" : "",
			cp);
	if (!rc)
		rc = import_set(c, "engine", url.data, y->err);
	if (rc) {
		err_where(y->err, y->name,
			  http ? (int)http->start_mark.line + 1 : 0);
		goto out;
	}
	if (ba && !parse_bool(ba, &on) && on) {
		rc = import_set(c, "engine_user", user ? user : "admin",
				y->err);
		if (!rc)
			rc = import_set(c, "engine_password",
					pass ? pass : "admin", y->err);
		if (rc)
			err_where(y->err, y->name,
				  (int)http->start_mark.line + 1);
	}
out:
	buf_release(&url);
	str_free(&port);
	str_free(&ctx);
	str_free(&en);
	str_free(&ens);
	str_free(&hport);
	str_free(&ba);
	str_free(&user);
	str_free(&pass);
	return rc;
}

/* The import; *secret_line: where the text first holds a secret, or 0. */
static int import_seatunnel(struct stfs_conf *c, const char *name,
			    const char *text, size_t len, struct conf_err *err,
			    int *secret_line)
{
	yaml_node_t *root, *engine, *cp, *st, *props;
	char *stype = NULL;
	struct yctx y;
	int rc;

	rc = yload(&y, name, text, len, err, &root);
	if (rc)
		return rc;
	engine = yget(&y, yget(&y, root, "seatunnel"), "engine");
	if (!engine || engine->type != YAML_MAPPING_NODE) {
		rc = yerr(&y, root, -EINVAL, "no seatunnel.engine section");
		goto out;
	}
	cp = yget(&y, engine, "checkpoint");
	st = yget(&y, cp, "storage");
	props = yget(&y, st, "plugin-config");
	rc = ystr(&y, st, "type", &stype);
	if (rc)
		goto out;
	if (props && props->type != YAML_MAPPING_NODE) {
		rc = yerr(&y, props, -EINVAL, "plugin-config is not a map");
		goto out;
	}
	if (!stype || !strcasecmp(stype, "localfile")) {
		/* LocalFileStorage: namespace, or its own defaults */
		char *ns = NULL, *uri = NULL;
		bool empty = !props || props->data.mapping.pairs.start ==
					       props->data.mapping.pairs.top;

		rc = ystr(&y, props, "namespace", &ns);
		if (!rc)
			rc = fs_join(&y, props, "file:///",
				     ns	     ? ns
				     : empty ? "/tmp/seatunnel/checkpoint/"
					     : "/seatunnel/checkpoint/",
				     &uri);
		if (!rc) {
			rc = import_set(c, "checkpoint", uri, err);
			if (rc)
				err_where(err, name,
					  props ? (int)props->start_mark.line +
							  1
						: 0);
		}
		str_free(&ns);
		str_free(&uri);
	} else if (!strcasecmp(stype, "hdfs")) {
		if (!props) {
			rc = yerr(
				&y, st, -EINVAL,
				"checkpoint storage hdfs without plugin-config");
			goto out;
		}
		rc = import_storage(&y, c, props, "checkpoint", "local",
				    "/seatunnel/checkpoint/", false);
	} else {
		rc = yerr(&y, yget(&y, st, "type"), -EINVAL,
			  "checkpoint storage type '%.64s' is not supported",
			  stype);
	}
	if (rc)
		goto out;
	rc = import_http(&y, c, yget(&y, engine, "http"));
out:
	str_free(&stype);
	*secret_line = y.secret_line;
	yaml_document_delete(&y.doc);
	if (!rc)
		err_where(err, name, 0);
	return rc;
}

int conf_import_seatunnel_yaml_mem(struct stfs_conf *c, const char *name,
				   const char *text, size_t len,
				   struct conf_err *err)
{
	int secret_line;

	return import_seatunnel(c, name, text, len, err, &secret_line);
}

static bool map_name_matches(yaml_node_t *k)
{
	if (!k || k->type != YAML_SCALAR_NODE)
		return false;
	return k->data.scalar.length >= 6 &&
	       !memcmp(k->data.scalar.value, "engine", 6);
}

/* The import; *secret_line: where the text first holds a secret, or 0. */
static int import_hazelcast(struct stfs_conf *c, const char *name,
			    const char *text, size_t len, struct conf_err *err,
			    int *secret_line)
{
	yaml_node_t *root, *maps, *props = NULL;
	yaml_node_pair_t *pr;
	struct yctx y;
	int rc;

	rc = yload(&y, name, text, len, err, &root);
	if (rc)
		return rc;
	if (!yget(&y, root, "hazelcast")) {
		rc = yerr(&y, root, -EINVAL, "no hazelcast section");
		goto out;
	}
	maps = yget(&y, yget(&y, root, "hazelcast"), "map");
	if (maps && maps->type == YAML_MAPPING_NODE) {
		for (pr = maps->data.mapping.pairs.start;
		     pr < maps->data.mapping.pairs.top && !props; pr++) {
			yaml_node_t *ms;
			char *en = NULL;
			bool on = true;

			if (!map_name_matches(ynode(&y, pr->key)))
				continue;
			ms = yget(&y, ynode(&y, pr->value), "map-store");
			if (!ms)
				continue;
			rc = ystr(&y, ms, "enabled", &en);
			if (rc)
				goto out;
			if (en && parse_bool(en, &on))
				on = true;
			str_free(&en);
			if (!on)
				continue;
			props = yget(&y, ms, "properties");
			if (props && props->type != YAML_MAPPING_NODE) {
				rc = yerr(&y, props, -EINVAL,
					  "map-store properties is not a map");
				goto out;
			}
		}
	}
	if (props) {
		/* storage.type defaults to hdfs; fs.defaultFS then required */
		rc = import_storage(&y, c, props, "imap", "hdfs",
				    "/seatunnel-imap", true);
	}
out:
	*secret_line = y.secret_line;
	yaml_document_delete(&y.doc);
	if (!rc)
		err_where(err, name, 0);
	return rc;
}

int conf_import_hazelcast_yaml_mem(struct stfs_conf *c, const char *name,
				   const char *text, size_t len,
				   struct conf_err *err)
{
	int secret_line;

	return import_hazelcast(c, name, text, len, err, &secret_line);
}

static int import_file(struct stfs_conf *c, const char *path, char **slot,
		       bool seatunnel, struct conf_err *err)
{
	struct stat st;
	char *data;
	size_t len;
	int rc, secret_line = 0;

	rc = read_file(path, &data, &len, &st, err);
	if (rc)
		return rc;
	rc = seatunnel
		     ? import_seatunnel(c, path, data, len, err, &secret_line)
		     : import_hazelcast(c, path, data, len, err, &secret_line);
	data_free(data, len);
	if (!rc)
		rc = secret_mode_check(path, secret_line, &st, err);
	if (!rc && (!*slot || strcmp(*slot, path) != 0)) {
		rc = str_set(slot, path);
		if (rc)
			err_msg(err, "out of memory");
	}
	return rc;
}

int conf_import_seatunnel_yaml(struct stfs_conf *c, const char *path,
			       struct conf_err *err)
{
	return import_file(c, path, &c->seatunnel_yaml, true, err);
}

int conf_import_hazelcast_yaml(struct stfs_conf *c, const char *path,
			       struct conf_err *err)
{
	return import_file(c, path, &c->hazelcast_yaml, false, err);
}

/* every variable stfs reads (besides systemd's NOTIFY_SOCKET) */
static const char *const env_names[CONF_ENV_N] = {
	"AWS_ACCESS_KEY_ID",
	"AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN",
	"AWS_REGION",
	"AWS_DEFAULT_REGION",
	"AWS_PROFILE",
	"AWS_DEFAULT_PROFILE",
	"AWS_SHARED_CREDENTIALS_FILE",
	"AWS_CONFIG_FILE",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
	"AWS_CONTAINER_CREDENTIALS_FULL_URI",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN",
	"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
	"AWS_EC2_METADATA_DISABLED",
	"AWS_EC2_METADATA_SERVICE_ENDPOINT",
	"OSS_ACCESS_KEY_ID",
	"OSS_ACCESS_KEY_SECRET",
	"OSS_SESSION_TOKEN",
	"COSN_SECRET_ID",
	"COSN_SECRET_KEY",
	"GOOGLE_ACCESS_KEY_ID",
	"GOOGLE_SECRET_ACCESS_KEY",
	"GOOGLE_APPLICATION_CREDENTIALS",
	"GCE_METADATA_HOST",
	"STORAGE_EMULATOR_HOST",
	"STFS_ENGINE_PASSWORD",
	"STFS_S3_MAX_KEYS", /* the page size of listings, for tests */
	"HADOOP_USER_NAME",
	"HOME",
	/* glibc's own malloc knobs: set, they win over stfs's tuning (README
	 * "Memory", fusefs/mount/mount.c) */
	"MALLOC_ARENA_MAX",
	"MALLOC_MMAP_THRESHOLD_",
	"GLIBC_TUNABLES",
};

void conf_env_release(struct conf_env *e)
{
	for (size_t i = 0; e && i < CONF_ENV_N; i++)
		str_free(&e->val[i]);
}

int conf_env_capture(struct conf_env *e)
{
	conf_env_release(e);
	for (size_t i = 0; i < CONF_ENV_N; i++) {
		const char *v =
			env_names[i] ? secure_getenv(env_names[i]) : NULL;

		if (!v || !*v || has_ctl(v) || strlen(v) > CONF_MAX_LINE)
			continue;
		if (str_set(&e->val[i], v)) {
			conf_env_release(e);
			return -ENOMEM;
		}
	}
	return 0;
}

const char *conf_env_get(const struct conf_env *e, const char *name)
{
	for (size_t i = 0; e && name && i < CONF_ENV_N; i++)
		if (env_names[i] && !strcmp(env_names[i], name))
			return e->val[i];
	return NULL;
}

/*
 * The environment of one storage URI's provider (conf/schemes.h): only keys
 * that are still unset.  The backends read no credential variable
 * themselves: what they use comes through these keys.
 */
static int import_env_prov(struct stfs_conf *c, enum scheme_prov prov)
{
	static const struct {
		enum scheme_prov prov; /* NONE: any storage */
		const char *key, *env;
	} envs[] = {
		{SCHEME_PROV_AWS, "access_key", "AWS_ACCESS_KEY_ID"},
		{SCHEME_PROV_AWS, "secret_key", "AWS_SECRET_ACCESS_KEY"},
		{SCHEME_PROV_AWS, "session_token", "AWS_SESSION_TOKEN"},
		{SCHEME_PROV_AWS, "region", "AWS_REGION"},
		{SCHEME_PROV_AWS, "region", "AWS_DEFAULT_REGION"},
		{SCHEME_PROV_OSS, "access_key", "OSS_ACCESS_KEY_ID"},
		{SCHEME_PROV_OSS, "secret_key", "OSS_ACCESS_KEY_SECRET"},
		{SCHEME_PROV_OSS, "session_token", "OSS_SESSION_TOKEN"},
		{SCHEME_PROV_COS, "access_key", "COSN_SECRET_ID"},
		{SCHEME_PROV_COS, "secret_key", "COSN_SECRET_KEY"},
		{SCHEME_PROV_GCS, "access_key", "GOOGLE_ACCESS_KEY_ID"},
		{SCHEME_PROV_GCS, "secret_key", "GOOGLE_SECRET_ACCESS_KEY"},
		/* any storage: the engine's basic-auth password */
		{SCHEME_PROV_NONE, "engine_password", "STFS_ENGINE_PASSWORD"},
	};

	for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		const struct conf_key *k;
		const char *v;

		if (envs[i].prov != SCHEME_PROV_NONE && envs[i].prov != prov)
			continue;
		k = key_find(envs[i].key, NULL);
		v = conf_env_get(&c->env, envs[i].env);
		if (!v || *key_str(c, k))
			continue;
		if (str_set(key_str(c, k), v))
			return -ENOMEM;
	}
	return 0;
}

int conf_import_env(struct stfs_conf *c)
{
	const struct stfs_scheme *ck = scheme_of_uri(c->checkpoint);
	const struct stfs_scheme *im = scheme_of_uri(c->imap);
	int rc = conf_env_capture(&c->env);

	/* the checkpoint's provider first; the password with it */
	if (!rc)
		rc = import_env_prov(c, ck ? ck->prov : SCHEME_PROV_NONE);
	if (!rc && im && im->prov && (!ck || im->prov != ck->prov))
		rc = import_env_prov(c, im->prov);
	return rc;
}

/*
 * engine_password_file=: its first line is the password (never argv, never
 * a log line).  Explicit and imported passwords win; the file obeys the
 * config= rule (not readable by group or others).
 */
static int import_password_file(struct stfs_conf *c, struct conf_err *err)
{
	struct stat st;
	char *data;
	size_t len, n;
	int rc;

	if (!c->engine_password_file || c->engine_password)
		return 0;
	rc = read_file(c->engine_password_file, &data, &len, &st, err);
	if (rc)
		return rc;
	rc = secret_mode_check(c->engine_password_file, 1, &st, err);
	n = strcspn(data, "\r\n");
	if (!rc) {
		c->engine_password = strndup(data, n);
		rc = c->engine_password ? 0 : -ENOMEM;
	}
	if (!rc && (n == 0 || has_ctl(c->engine_password))) {
		str_free(&c->engine_password);
		err_where(err, c->engine_password_file, 1);
		err_msg(err, "no password on the first line, or one with "
			     "control characters");
		rc = -EINVAL;
	}
	data_free(data, len);
	return rc;
}

int conf_apply_imports(struct stfs_conf *c, struct conf_err *err)
{
	char *p = NULL;
	int rc = 0;

	if (c->seatunnel_yaml) {
		p = strdup(c->seatunnel_yaml);
		rc = p ? conf_import_seatunnel_yaml(c, p, err) : -ENOMEM;
		free(p);
	}
	if (!rc && c->hazelcast_yaml) {
		p = strdup(c->hazelcast_yaml);
		rc = p ? conf_import_hazelcast_yaml(c, p, err) : -ENOMEM;
		free(p);
	}
	if (!rc)
		rc = conf_import_env(c);
	if (!rc)
		rc = import_password_file(c, err);
	if (rc == -ENOMEM)
		err_msg(err, "out of memory");
	return rc;
}

/* ---- validate / render ------------------------------------------------ */

int conf_validate(const struct stfs_conf *c, struct conf_err *err)
{
	const char *why = NULL;
	char *norm = NULL;
	struct stat st;

	err_where(err, "", 0);
	for (size_t i = 0; i < 2; i++) {
		const char *key = i ? "imap" : "checkpoint";
		const char *v = i ? c->imap : c->checkpoint;

		if (!v) {
			err_msg(err, "%s is not set", key);
			return -EINVAL;
		}
		if (uri_normalize(v, &norm, &why)) {
			err_msg(err, "%s: '%.80s' %s", key, v, why);
			return -EINVAL;
		}
		str_free(&norm);
	}
	if (c->n_engines == 0) {
		err_msg(err, "no engine= given");
		return -EINVAL;
	}
	if (c->log_level && log_level_parse(c->log_level) < 0) {
		err_msg(err,
			"log_level: '%.40s' is not one of error, warning, "
			"notice, info, debug",
			c->log_level);
		return -EINVAL;
	}
	for (size_t i = 0; i < c->n_engines; i++) {
		if (!c->engines[i] ||
		    engine_normalize(c->engines[i], &norm, &why)) {
			err_msg(err, "engine: '%.80s' %s",
				c->engines[i] ? c->engines[i] : "",
				why ? why : "is missing");
			return -EINVAL;
		}
		str_free(&norm);
	}
	if (!c->state_dir || c->state_dir[0] != '/') {
		err_msg(err, "state_dir must be an absolute path");
		return -EINVAL;
	}
	if (c->connect_timeout_ms > c->timeout_ms) {
		err_msg(err,
			"connect_timeout (%ums) is longer than timeout (%ums)",
			c->connect_timeout_ms, c->timeout_ms);
		return -EINVAL;
	}
	if (!c->access_key != !c->secret_key) {
		err_msg(err,
			"access_key and secret_key must be given together");
		return -EINVAL;
	}
	if (c->engine_password && !c->engine_user) {
		err_msg(err, "engine_password without engine_user");
		return -EINVAL;
	}
	if (c->credentials_file) {
		if (stat(c->credentials_file, &st) < 0) {
			int e = errno;

			err_msg(err, "credentials_file %.100s: %s",
				c->credentials_file, strerror(e));
			return -e;
		}
		if (st.st_mode & 077) {
			err_msg(err,
				"credentials_file %.100s is readable by group or others (mode %04o); run chmod 600 on it",
				c->credentials_file,
				(unsigned)(st.st_mode & 07777));
			return -EACCES;
		}
	}
	return 0;
}

static bool needs_quotes(const char *v)
{
	size_t n = strlen(v);

	if (!n)
		return false;
	return v[0] == ' ' || v[0] == '\t' || v[0] == '"' || v[0] == '#' ||
	       v[n - 1] == ' ' || v[n - 1] == '\t' || strstr(v, " #") ||
	       strstr(v, "\t#");
}

static int render_str(struct buf *out, const char *name, const char *v)
{
	if (!v)
		v = "";
	if (needs_quotes(v))
		return buf_printf(out, "%s = \"%s\"\n", name, v);
	return buf_printf(out, "%s = %s\n", name, v);
}

bool conf_key_is_secret(const char *key)
{
	const struct conf_key *k = key ? key_find(key, NULL) : NULL;

	return k && k->type == CT_SECRET;
}

int conf_usage(struct buf *out)
{
	int rc = 0;

	for (size_t i = 0; i < N_KEYS && !rc; i++) {
		const struct conf_key *k = &conf_keys[i];
		bool secret = k->type == CT_SECRET;
		bool tiny = k->dflt && strlen(k->dflt) < 12;
		char opt[64];

		/* a secret is shown as the config-file line it must be */
		snprintf(opt, sizeof(opt), "%s%s%s%s", secret ? "" : "-o ",
			 k->name, k->arg ? (secret ? " = " : "=") : "",
			 k->arg ? k->arg : "");
		rc = buf_printf(out, "    %-31s %s%s%s%s\n", opt, k->help,
				tiny ? " (" : "", tiny ? k->dflt : "",
				tiny ? ")" : "");
		if (!rc && k->dflt && !tiny)
			rc = buf_printf(out, "%36s(%s)\n", "", k->dflt);
	}
	return rc;
}

bool conf_holds_secret(const struct stfs_conf *c)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		const char *v = conf_keys[i].type == CT_SECRET
					? key_cstr(c, &conf_keys[i])
					: NULL;

		if (v && *v)
			return true;
	}
	return false;
}

int conf_protect_secrets(const struct stfs_conf *c)
{
	if (!conf_holds_secret(c) &&
	    !(c->credentials_file && *c->credentials_file))
		return 0;
	/* no core dump, no ptrace by the same user, /proc/PID/mem and
	 * environ root's only (README "Who can read what") */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return -errno;
	return 1;
}

int conf_render(const struct stfs_conf *c, struct buf *out)
{
	int rc = 0;

	for (size_t i = 0; i < N_KEYS && !rc; i++) {
		const struct conf_key *k = &conf_keys[i];
		const void *p = (const char *)c + k->off;

		switch (k->type) {
		case CT_ENGINE:
			if (!c->n_engines)
				rc = render_str(out, k->name, NULL);
			for (size_t e = 0; e < c->n_engines && !rc; e++)
				rc = render_str(out, k->name, c->engines[e]);
			break;
		case CT_SECRET:
			rc = render_str(out, k->name,
					key_cstr(c, k) ? "<redacted>" : NULL);
			break;
		case CT_URI:
		case CT_ABS:
		case CT_PATH:
		case CT_STR:
			rc = render_str(out, k->name, key_cstr(c, k));
			break;
		case CT_BOOL:
			rc = buf_printf(out, "%s = %s\n", k->name,
					*(const bool *)p ? "yes" : "no");
			break;
		case CT_MS:
		case CT_SEC:
		case CT_COUNT:
			rc = buf_printf(out, "%s = %u\n", k->name,
					*(const unsigned *)p);
			break;
		}
	}
	return rc;
}
