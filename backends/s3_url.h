/*
 * s3_url — pure helpers of the S3-compatible backend: namespace URIs,
 * provider defaults (endpoint, region), path-style vs virtual-hosted
 * addressing, and canonical URL building.
 *
 * libcurl 7.88's CURLOPT_AWS_SIGV4 copies the URL's path and query verbatim
 * into the canonical request (curl issue #9717), so every URL built here is
 * already canonical: query parameters sorted by encoded name, names and
 * values percent-encoded except A-Za-z0-9-_.~ ('/' as %2F), empty values
 * as "name=", object keys encoded the same way but keeping '/'.
 *
 * Nothing here allocates except through the caller's struct buf; nothing
 * does I/O.  Every function is thread-safe (no shared state).
 */
#ifndef STFS_S3_URL_H
#define STFS_S3_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/schemes.h"
#include "util/buf.h"

/* the providers of conf/schemes.h, which maps the schemes to them */
enum s3_provider {
	S3_PROV_AWS = SCHEME_PROV_AWS, /* s3://, s3a://, s3n:// */
	S3_PROV_OSS = SCHEME_PROV_OSS, /* oss:// (Aliyun) */
	S3_PROV_COS = SCHEME_PROV_COS, /* cos://, cosn:// (Tencent) */
	S3_PROV_GCS = SCHEME_PROV_GCS, /* gs:// (XML API with HMAC keys) */
};

#define S3_BUCKET_MAX 256
#define S3_KEY_MAX    1024

struct s3_uri {
	enum s3_provider prov;
	char bucket[S3_BUCKET_MAX];
	/* key prefix of the namespace: "" or "a/b/" (always ends in '/') */
	char prefix[S3_KEY_MAX + 1];
};

/**
 * Parse "SCHEME://bucket[/prefix[/]]".  Leading and repeated '/' in the
 * prefix are dropped and a trailing '/' is added.  0; -EINVAL (unknown
 * scheme, empty or bad bucket, "." or ".." components, '?' or '#',
 * control characters, too long).
 */
int s3_uri_parse(const char *uri, struct s3_uri *out);

/** Provider name for logs: "s3", "oss", "cos", "gcs". */
const char *s3_provider_name(enum s3_provider prov);

/** Region used when none is configured: us-east-1, cn-hangzhou,
 * ap-guangzhou, auto. */
const char *s3_region_default(enum s3_provider prov);

/**
 * The region implied by a well-known endpoint host
 * (s3.<r>.amazonaws.com, oss-<r>.aliyuncs.com, cos.<r>.myqcloud.com).
 * 0 and `out` filled; -ENOENT when the host says nothing; -ENAMETOOLONG.
 */
int s3_region_from_endpoint(const char *endpoint, char *out, size_t outsz);

/**
 * The provider's public endpoint for `region`:
 * https://s3.<r>.amazonaws.com, https://oss-<r>.aliyuncs.com,
 * https://cos.<r>.myqcloud.com, https://storage.googleapis.com.
 * 0; -ENAMETOOLONG; -EINVAL.
 */
int s3_endpoint_default(enum s3_provider prov, const char *region, char *out,
			size_t outsz);

/**
 * Whether `endpoint`'s host is an IP literal or "localhost" (where
 * virtual-hosted addressing cannot work).
 */
bool s3_endpoint_is_local(const char *endpoint);

/** Addressing of one bucket, built once by s3_addr_init(). */
struct s3_addr {
	/* "http://127.0.0.1:4568/ckpt" (path style) or
	 * "https://ckpt.s3.us-east-1.amazonaws.com" (virtual-hosted);
	 * never ends in '/' */
	char base[1024];
	bool path_style;
};

/**
 * Build the addressing of `bucket` at `endpoint` ("https://host[:port]",
 * a missing scheme means https; a trailing '/' or base path is kept as a
 * path prefix).  Path style when `force_path` is set, when the endpoint
 * is local (s3_endpoint_is_local), or when the bucket holds a '.' and
 * the scheme is https (certificates do not cover dotted sub-domains).
 * 0; -EINVAL (no host, user-info in the endpoint); -ENAMETOOLONG.
 */
int s3_addr_init(struct s3_addr *a, const char *endpoint, const char *bucket,
		 bool force_path);

/**
 * Append `s` (`n` bytes) percent-encoded: every byte except A-Za-z0-9-_.~
 * (and '/', when keep_slash) as %XX with upper-case hex.  Returns as
 * buf_append().
 */
int s3_pct_encode(struct buf *out, const char *s, size_t n, bool keep_slash);

struct s3_param {
	const char *name;
	const char *value; /* NULL or "" is written "name=" */
};

/**
 * Append the canonical query string of `n` parameters (no leading '?'):
 * encoded, sorted by encoded name then encoded value, joined by '&'.
 * 0; -E2BIG for more than 16 parameters; as buf_append().
 */
int s3_query_build(struct buf *out, const struct s3_param *p, size_t n);

/**
 * Append the URL of object `key` (the full key, encoded keeping '/'),
 * with an optional query (n may be 0).  Returns as buf_append().
 */
int s3_url_object(struct buf *out, const struct s3_addr *a, const char *key,
		  const struct s3_param *p, size_t n);

/**
 * Append the URL of a bucket-level request: "BASE?query" in path style
 * (no trailing slash: the verifying s3rver fork and some proxies sign
 * "/bucket" and "/bucket/" differently), "BASE/?query" virtual-hosted.
 */
int s3_url_bucket(struct buf *out, const struct s3_addr *a,
		  const struct s3_param *p, size_t n);

#endif
