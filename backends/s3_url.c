/*
 * s3_url — URI parsing, provider defaults and canonical URLs for the
 * S3-compatible backend.  Pure: see s3_url.h.
 */
#include "backends/s3_url.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/schemes.h"

static bool bucket_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

int s3_uri_parse(const char *uri, struct s3_uri *out)
{
	const struct stfs_scheme *sch;
	const char *p, *sep, *comp;
	size_t n, plen = 0;

	memset(out, 0, sizeof(*out));
	if (!uri)
		return -EINVAL;
	sep = strstr(uri, "://");
	if (!sep)
		return -EINVAL;
	sch = scheme_find(uri, (size_t)(sep - uri));
	if (!sch || sch->addr != SCHEME_ADDR_BUCKET || !sch->prov)
		return -EINVAL;
	out->prov = (enum s3_provider)sch->prov;
	p = sep + 3;
	for (n = 0; p[n] && p[n] != '/'; n++)
		if (!bucket_char_ok(p[n]))
			return -EINVAL;
	if (n == 0 || n >= sizeof(out->bucket))
		return -EINVAL;
	memcpy(out->bucket, p, n);
	out->bucket[n] = '\0';
	p += n;
	/* the prefix, component by component */
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		comp = p;
		while (*p && *p != '/') {
			unsigned char c = (unsigned char)*p;

			if (c < 0x20 || c == 0x7f || c == '?' || c == '#')
				return -EINVAL;
			p++;
		}
		n = (size_t)(p - comp);
		if ((n == 1 && comp[0] == '.') ||
		    (n == 2 && comp[0] == '.' && comp[1] == '.'))
			return -EINVAL;
		if (plen + n + 1 > S3_KEY_MAX)
			return -EINVAL;
		memcpy(out->prefix + plen, comp, n);
		plen += n;
		out->prefix[plen++] = '/';
	}
	out->prefix[plen] = '\0';
	return 0;
}

const char *s3_provider_name(enum s3_provider prov)
{
	switch (prov) {
	case S3_PROV_AWS:
		return "s3";
	case S3_PROV_OSS:
		return "oss";
	case S3_PROV_COS:
		return "cos";
	case S3_PROV_GCS:
		return "gcs";
	}
	return "?";
}

const char *s3_region_default(enum s3_provider prov)
{
	switch (prov) {
	case S3_PROV_AWS:
		return "us-east-1";
	case S3_PROV_OSS:
		return "cn-hangzhou";
	case S3_PROV_COS:
		return "ap-guangzhou";
	case S3_PROV_GCS:
		return "auto";
	}
	return "us-east-1";
}

/* host part of an endpoint URL: [start, start+len) */
static int endpoint_host(const char *ep, const char **host, size_t *len)
{
	const char *p = strstr(ep, "://");
	size_t n;

	p = p ? p + 3 : ep;
	n = strcspn(p, "/?#");
	if (memchr(p, '@', n))
		return -EINVAL; /* user-info: never in an endpoint */
	*host = p;
	*len = n;
	if (n && p[0] == '[') {
		const char *e = memchr(p, ']', n);

		if (!e)
			return -EINVAL;
		return 0;
	}
	/* drop the port */
	for (size_t i = 0; i < n; i++)
		if (p[i] == ':') {
			*len = i;
			break;
		}
	return *len ? 0 : -EINVAL;
}

int s3_region_from_endpoint(const char *endpoint, char *out, size_t outsz)
{
	static const struct {
		const char *head, *tail;
	} pats[] = {
		{"s3.", ".amazonaws.com"},
		{"s3-", ".amazonaws.com"},
		{"oss-", ".aliyuncs.com"},
		{"cos.", ".myqcloud.com"},
	};
	const char *h;
	size_t hl, i;

	if (!endpoint || endpoint_host(endpoint, &h, &hl) < 0)
		return -ENOENT;
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		size_t a = strlen(pats[i].head), b = strlen(pats[i].tail);
		size_t rl;

		if (hl <= a + b || strncasecmp(h, pats[i].head, a) ||
		    strncasecmp(h + hl - b, pats[i].tail, b))
			continue;
		rl = hl - a - b;
		/* "oss-cn-hangzhou-internal" is the same region */
		if (rl > 9 && !strncasecmp(h + a + rl - 9, "-internal", 9))
			rl -= 9;
		if (memchr(h + a, '.', rl))
			continue; /* bucket.s3.amazonaws.com and the like */
		if (rl + 1 > outsz)
			return -ENAMETOOLONG;
		memcpy(out, h + a, rl);
		out[rl] = '\0';
		return 0;
	}
	return -ENOENT;
}

int s3_endpoint_default(enum s3_provider prov, const char *region, char *out,
			size_t outsz)
{
	int n;

	if (!region || !*region)
		region = s3_region_default(prov);
	for (const char *r = region; *r; r++)
		if (!bucket_char_ok(*r))
			return -EINVAL;
	switch (prov) {
	case S3_PROV_AWS:
		n = snprintf(out, outsz, "https://s3.%s.amazonaws.com", region);
		break;
	case S3_PROV_OSS:
		n = snprintf(out, outsz, "https://oss-%s.aliyuncs.com", region);
		break;
	case S3_PROV_COS:
		n = snprintf(out, outsz, "https://cos.%s.myqcloud.com", region);
		break;
	case S3_PROV_GCS:
		n = snprintf(out, outsz, "https://storage.googleapis.com");
		break;
	default:
		return -EINVAL;
	}
	return n < 0 || (size_t)n >= outsz ? -ENAMETOOLONG : 0;
}

bool s3_endpoint_is_local(const char *endpoint)
{
	const char *h;
	size_t hl, i;
	bool digits_dots = true;

	if (!endpoint || endpoint_host(endpoint, &h, &hl) < 0)
		return false;
	if (h[0] == '[')
		return true; /* IPv6 literal */
	if (hl == 9 && !strncasecmp(h, "localhost", 9))
		return true;
	for (i = 0; i < hl; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || h[i] == '.'))
			digits_dots = false;
	return digits_dots;
}

int s3_addr_init(struct s3_addr *a, const char *endpoint, const char *bucket,
		 bool force_path)
{
	const char *scheme = "https", *rest = endpoint, *h, *sep;
	size_t sl = 5, hl, rl;
	int n;

	memset(a, 0, sizeof(*a));
	if (!endpoint || !*endpoint || !bucket || !*bucket)
		return -EINVAL;
	sep = strstr(endpoint, "://");
	if (sep) {
		scheme = endpoint;
		sl = (size_t)(sep - endpoint);
		if (!((sl == 4 && !strncasecmp(scheme, "http", 4)) ||
		      (sl == 5 && !strncasecmp(scheme, "https", 5))))
			return -EINVAL;
		rest = sep + 3;
	}
	if (endpoint_host(endpoint, &h, &hl) < 0)
		return -EINVAL;
	/* host[:port] and an optional base path, without trailing '/' */
	rl = strcspn(rest, "?#");
	while (rl > 0 && rest[rl - 1] == '/')
		rl--;
	if (rl == 0)
		return -EINVAL;
	for (size_t i = 0; i < rl; i++)
		if ((unsigned char)rest[i] <= 0x20 || rest[i] == 0x7f)
			return -EINVAL;
	a->path_style = force_path || s3_endpoint_is_local(endpoint) ||
			(strchr(bucket, '.') && sl == 5);
	if (a->path_style)
		n = snprintf(a->base, sizeof(a->base), "%.*s://%.*s/%s",
			     (int)sl, scheme, (int)rl, rest, bucket);
	else
		n = snprintf(a->base, sizeof(a->base), "%.*s://%s.%.*s",
			     (int)sl, scheme, bucket, (int)rl, rest);
	if (n < 0 || (size_t)n >= sizeof(a->base))
		return -ENAMETOOLONG;
	/* scheme in lower case */
	for (size_t i = 0; i < sl; i++)
		if (a->base[i] >= 'A' && a->base[i] <= 'Z')
			a->base[i] = (char)(a->base[i] - 'A' + 'a');
	return 0;
}

int s3_pct_encode(struct buf *out, const char *s, size_t n, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	char tmp[3];
	size_t i, run = 0;
	int rc;

	/* copy runs of unreserved bytes at once */
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    c == '.' || c == '~' || (keep_slash && c == '/')) {
			run++;
			continue;
		}
		if (run) {
			rc = buf_append(out, s + i - run, run);
			if (rc < 0)
				return rc;
			run = 0;
		}
		tmp[0] = '%';
		tmp[1] = hex[c >> 4];
		tmp[2] = hex[c & 0xf];
		rc = buf_append(out, tmp, 3);
		if (rc < 0)
			return rc;
	}
	if (run)
		return buf_append(out, s + n - run, run);
	if (!out->data)
		return buf_append(out, "", 0);
	return 0;
}

#define S3_QUERY_MAX 16

struct enc_param {
	char *name, *value;
};

static int enc_cmp(const void *a, const void *b)
{
	const struct enc_param *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->value, y->value);
}

static char *encode_dup(const char *s)
{
	struct buf b;

	buf_init(&b, 16 * S3_KEY_MAX);
	if (s3_pct_encode(&b, s ? s : "", s ? strlen(s) : 0, false) < 0) {
		buf_release(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

int s3_query_build(struct buf *out, const struct s3_param *p, size_t n)
{
	struct enc_param e[S3_QUERY_MAX];
	size_t i, made = 0;
	int rc = 0;

	if (n > S3_QUERY_MAX)
		return -E2BIG;
	for (i = 0; i < n; i++) {
		e[i].name = encode_dup(p[i].name);
		e[i].value = encode_dup(p[i].value);
		made++;
		if (!e[i].name || !e[i].value) {
			rc = -ENOMEM;
			goto out;
		}
	}
	qsort(e, n, sizeof(e[0]), enc_cmp);
	for (i = 0; i < n && rc == 0; i++)
		rc = buf_printf(out, "%s%s=%s", i ? "&" : "", e[i].name,
				e[i].value);
out:
	for (i = 0; i < made; i++) {
		free(e[i].name);
		free(e[i].value);
	}
	return rc;
}

int s3_url_object(struct buf *out, const struct s3_addr *a, const char *key,
		  const struct s3_param *p, size_t n)
{
	int rc;

	rc = buf_printf(out, "%s/", a->base);
	if (rc == 0)
		rc = s3_pct_encode(out, key, strlen(key), true);
	if (rc == 0 && n) {
		rc = buf_puts(out, "?");
		if (rc == 0)
			rc = s3_query_build(out, p, n);
	}
	return rc;
}

int s3_url_bucket(struct buf *out, const struct s3_addr *a,
		  const struct s3_param *p, size_t n)
{
	int rc;

	rc = buf_printf(out, "%s%s", a->base, a->path_style ? "" : "/");
	if (rc == 0 && n) {
		rc = buf_puts(out, "?");
		if (rc == 0)
			rc = s3_query_build(out, p, n);
	}
	return rc;
}
