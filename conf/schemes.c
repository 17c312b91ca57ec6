/*
 * schemes — the table of conf/schemes.h.  ADD A NEW SCHEME HERE (and its
 * backend to backends/backend.c's registry when it is a new backend).
 */
#include "conf/schemes.h"

#include <string.h>
#include <strings.h>

/* X(name, backend, addr, provider), the last one Y(...); the first is the
 * scheme of a bare path */
#define STFS_SCHEMES(X, Y)                      \
	X("file", "local", PATH, NONE)          \
	X("hdfs", "webhdfs", HOST, NONE)        \
	X("webhdfs", "webhdfs", HOST, NONE)     \
	X("swebhdfs", "webhdfs", HOST, NONE)    \
	X("s3", "s3", BUCKET, AWS)              \
	X("s3a", "s3", BUCKET, AWS)             \
	X("s3n", "s3", BUCKET, AWS)             \
	X("oss", "s3", BUCKET, OSS)             \
	X("cos", "s3", BUCKET, COS)             \
	X("cosn", "s3", BUCKET, COS)            \
	/* the JSON API, or the s3 backend with \
	 * HMAC keys (README "GCS with service  \
	 * accounts") */                        \
	Y("gs", "gcs", BUCKET, GCS)

#define X_ENTRY(n, b, a, p) {n, b, SCHEME_ADDR_##a, SCHEME_PROV_##p},
#define X_NAME(n, b, a, p)  n ", "
#define X_LAST(n, b, a, p)  n

static const struct stfs_scheme schemes[] = {STFS_SCHEMES(X_ENTRY, X_ENTRY)};
static const char unknown[] =
	"has an unknown scheme (" STFS_SCHEMES(X_NAME, X_LAST) ")";

#define N_SCHEMES (sizeof(schemes) / sizeof(schemes[0]))

const struct stfs_scheme *scheme_find(const char *s, size_t len)
{
	for (size_t i = 0; s && i < N_SCHEMES; i++)
		if (strlen(schemes[i].name) == len &&
		    !strncasecmp(schemes[i].name, s, len))
			return &schemes[i];
	return NULL;
}

const struct stfs_scheme *scheme_of_uri(const char *uri)
{
	const char *colon;

	if (!uri || !*uri)
		return NULL;
	if (uri[0] == '/')
		return &schemes[0];
	colon = strchr(uri, ':');
	return colon ? scheme_find(uri, (size_t)(colon - uri)) : NULL;
}

const struct stfs_scheme *scheme_at(size_t i)
{
	return i < N_SCHEMES ? &schemes[i] : NULL;
}

const char *scheme_unknown_why(void)
{
	return unknown;
}
