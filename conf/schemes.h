/*
 * schemes — the one list of storage URI schemes stfs serves (README "Object
 * stores", "HDFS"): for each, how conf checks its URI (a path, a host or a
 * bucket), the backend that serves it (by be_ops.name; backends/backend.c
 * maps the name to its ops) and, for object stores, the provider whose
 * endpoints and environment credentials apply.
 *
 * conf validates a checkpoint=/imap= URI against this table and
 * backends/backend.c opens a backend from it, so the two cannot disagree
 * about a scheme.  Pure data: no allocation, thread-safe.
 */
#ifndef STFS_CONF_SCHEMES_H
#define STFS_CONF_SCHEMES_H

#include <stddef.h>

/* what follows "scheme://" */
enum scheme_addr {
	SCHEME_ADDR_PATH = 1, /* file:///abs/path (no host) */
	SCHEME_ADDR_HOST,     /* host[:port]/path (HDFS namenodes) */
	SCHEME_ADDR_BUCKET,   /* bucket/prefix (object stores) */
};

/* an object store's provider; backends/s3_url.h's enum s3_provider has
 * the same values */
enum scheme_prov {
	SCHEME_PROV_NONE = 0,
	SCHEME_PROV_AWS,
	SCHEME_PROV_OSS,
	SCHEME_PROV_COS,
	SCHEME_PROV_GCS,
};

struct stfs_scheme {
	const char *name;    /* lower case, without "://" */
	const char *backend; /* be_ops.name of the backend serving it */
	enum scheme_addr addr;
	enum scheme_prov prov;
};

/** The scheme named by the first `len` bytes of `s` (any case), or NULL. */
const struct stfs_scheme *scheme_find(const char *s, size_t len);

/** The scheme of `uri` ("file" for a bare absolute path), or NULL. */
const struct stfs_scheme *scheme_of_uri(const char *uri);

/** The i-th scheme of the table, NULL past its end (for listings, tests). */
const struct stfs_scheme *scheme_at(size_t i);

/** "has an unknown scheme (file, hdfs, ...)": every scheme, in order. */
const char *scheme_unknown_why(void);

#endif
