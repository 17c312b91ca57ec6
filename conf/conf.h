/*
 * conf — stfs's configuration: the keys of `-o key=value`, of `-o
 * config=FILE` (`key = value` lines, `#` comments) and what is imported from
 * an operator's seatunnel.yaml / hazelcast.yaml.
 *
 * conf/ never prints and never exits: every function returns 0 or -errno
 * and, on error, fills a struct conf_err with the file, line and reason, so
 * that main() can print "FILE:LINE: reason" and refuse to mount.
 *
 * Secrets (object-store keys, engine password) live only here; they are
 * wiped by conf_release() and rendered as "<redacted>" by conf_render().
 * Not thread-safe while being built; read-only (and so shareable) after.
 */
#ifndef STFS_CONF_H
#define STFS_CONF_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

#define CONF_MAX_ENGINES 8

struct stfs_conf {
	/* sources (CONTRACT §1) */
	char *checkpoint;     /* URI: file:///..., hdfs://, s3://, oss://, cos://, gs:// */
	char *engines[CONF_MAX_ENGINES]; /* REST v2 base URLs, tried in order */
	size_t n_engines;
	char *imap;           /* URI of the IMap persistence namespace */
	char *seatunnel_yaml; /* imported file, or NULL */
	char *hazelcast_yaml; /* imported file, or NULL */
	char *state_dir;      /* survives restarts: restore releases */
	char *delete_group;   /* NULL: root only */
	char *audit_log;      /* NULL: no file */
	bool ro;

	/* timing, in milliseconds unless said otherwise */
	unsigned timeout_ms;         /* deadline of one remote request (5000) */
	unsigned connect_timeout_ms; /* TCP connect deadline (2000) */
	unsigned engine_ttl_ms;      /* engine job lists are reused this long (3000) */
	unsigned storage_ttl_ms;     /* storage listings are reused this long (5000) */
	unsigned cache_ttl_ms;       /* pseudo-file contents / kernel attr cache (3000) */
	unsigned decision_age_ms;    /* max age of the state used for rm (2000) */
	unsigned orphan_grace_s;     /* orphan_grace, seconds (600) */
	unsigned retries;            /* extra tries for idempotent requests (2) */

	/* engine HTTP auth (basic), optional; password is a secret */
	char *engine_user;
	char *engine_password;

	/* object-store credentials and addressing (issue: S3 backend) */
	char *access_key;
	char *secret_key; /* secret */
	char *session_token; /* secret */
	char *credentials_file;
	char *endpoint;
	char *region;
	char *ca_file;
	bool path_style;

	/* seatunnel.yaml facts, when imported */
	char *engine_http_port; /* "8080" */
};

struct conf_err {
	char file[256]; /* "" for the command line */
	int line;       /* 0 when not tied to a line */
	char msg[200];
};

/** Fill `c` with the engine's shipped defaults (CONTRACT §1). 0 or -ENOMEM. */
int conf_init_defaults(struct stfs_conf *c);

/**
 * Set one key.  `engine` appends (up to CONF_MAX_ENGINES); every other key
 * replaces.  Flags (`ro`, `path_style`) accept no value, or a boolean
 * (yes/no/true/false/1/0/on/off).  Durations accept a plain number in the
 * key's unit or a suffix ms/s/m/h (e.g. `orphan_grace=10m`).
 * Returns 0; -ENOENT for a key stfs does not know (so main() can hand it
 * to FUSE); -EINVAL for a bad value (err->msg says why).
 */
int conf_set(struct stfs_conf *c, const char *key, const char *value,
	     struct conf_err *err);

/**
 * Parse `key = value` lines (`#` comments, blank lines, surrounding spaces
 * ignored).  An unknown key is an error here.  `name` is used in errors.
 * 0 or -EINVAL/-ENOMEM with err filled (line numbers start at 1).
 */
int conf_parse_mem(struct stfs_conf *c, const char *name, const char *text,
		   size_t len, struct conf_err *err);

/** Read and parse a file. -ENOENT/-EACCES/... with err filled when unreadable. */
int conf_load_file(struct stfs_conf *c, const char *path,
		   struct conf_err *err);

/**
 * Import the checkpoint storage (namespace, storage.type, fs.defaultFS,
 * s3/oss/cos/gcs bucket, fs.* keys) and the HTTP port from a seatunnel.yaml.
 * Values already set explicitly are kept when `keep_explicit` is true.
 */
int conf_import_seatunnel_yaml(struct stfs_conf *c, const char *path,
			       struct conf_err *err);

/** Import the IMap map-store namespace from a hazelcast.yaml. */
int conf_import_hazelcast_yaml(struct stfs_conf *c, const char *path,
			       struct conf_err *err);

/** Cross-key checks after everything is set (URIs parse, ...). */
int conf_validate(const struct stfs_conf *c, struct conf_err *err);

/** Render every key as `key = value` lines, secrets as "<redacted>". */
int conf_render(const struct stfs_conf *c, struct buf *out);

/** Free everything, wiping secrets first.  `c` is zeroed afterwards. */
void conf_release(struct stfs_conf *c);

#endif
