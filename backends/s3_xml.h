/*
 * s3_xml — pure libxml2 parsers for the S3 XML answers the backend reads:
 * ListObjectsV2 (ListBucketResult) and Error; the S3 error-code table.
 *
 * Elements are matched by local name, ignoring namespaces (s3rver uses
 * http://doc.s3.amazonaws.com/2006-03-01/, real S3
 * http://s3.amazonaws.com/doc/2006-03-01/, OSS/COS/GCS their own).
 * Hostile input is safe: no network, no DTD loading, no entity
 * substitution (text under an entity reference other than the predefined
 * five is ignored), bodies over S3_XML_MAX are refused.
 *
 * Ownership: results are malloc'd into the caller's struct and freed by
 * the matching *_release().  Thread-safe (libxml2 is initialised on first
 * use through xmlInitParser(), which is itself idempotent and safe).
 */
#ifndef STFS_S3_XML_H
#define STFS_S3_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define S3_XML_MAX ((size_t)16 << 20)

struct s3_obj {
	char *key;
	uint64_t size;
	int64_t mtime_ns; /* 0 when LastModified is missing or bad */
};

struct s3_list {
	struct s3_obj *objs; /* Contents, in document order */
	size_t n_objs;
	char **prefixes; /* CommonPrefixes/Prefix */
	size_t n_prefixes;
	bool truncated;	  /* IsTruncated = true */
	char *next_token; /* NextContinuationToken, or NULL */
	size_t n_bad;	  /* Contents skipped: no Key, bad or huge Size */
};

/**
 * Parse a ListBucketResult.  `out` is overwritten (release it first).
 * 0; -EINVAL (not XML, or the root is not ListBucketResult); -EFBIG
 * (over S3_XML_MAX); -ENOMEM.  On error `out` is empty.
 */
int s3_xml_parse_list(const char *xml, size_t len, struct s3_list *out);
void s3_list_release(struct s3_list *l);

struct s3_error {
	char code[64];	   /* "NoSuchKey"; "" when absent */
	char message[256]; /* truncated; control characters replaced */
};

/**
 * Parse an <Error> body.  0 with out filled; -EINVAL when the body is not
 * an Error document (out is then empty strings).
 */
int s3_xml_parse_error(const char *xml, size_t len, struct s3_error *out);

/**
 * -errno for an S3 error code: NoSuchKey/NoSuchBucket/NoSuchUpload ->
 * ENOENT; AccessDenied/SignatureDoesNotMatch/InvalidAccessKeyId/... ->
 * EACCES; SlowDown/Throttling/RequestTimeout... -> EAGAIN; InvalidRange
 * -> ERANGE; InternalError/ServiceUnavailable -> EIO; InvalidArgument/
 * MalformedXML/... -> EINVAL; ExpiredToken -> EACCES.  0 for an unknown
 * or empty code (the caller then uses the HTTP status).
 */
int s3_code_to_errno(const char *code);

/**
 * Parse an ISO 8601 UTC time as S3 writes it ("2026-11-30T10:09:40.000Z",
 * fraction optional, 'Z' or "+00:00").  0 and *ns; -EINVAL.
 */
int s3_parse_iso8601(const char *s, int64_t *ns);

#endif
