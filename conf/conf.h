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

#include "util/buf.h"

#define CONF_MAX_ENGINES 8

/*
 * The process environment stfs reads, captured once by conf_import_env():
 * the variables listed in conf.c's env_names[] (credentials, credential
 * providers' settings, HOME, glibc's malloc knobs, test knobs).  Backends look
 * values up with conf_env_get() and call no getenv() themselves.  Values are
 * secrets (wiped on release); never rendered.
 */
#define CONF_ENV_N 32
struct conf_env {
	char *val[CONF_ENV_N]; /* NULL: unset or empty */
};

struct stfs_conf {
	/* sources (README "Where the state comes from") */
	char *checkpoint; /* URI: file:///..., hdfs://, s3://, oss://, cos://,
			     gs:// */
	char *engines[CONF_MAX_ENGINES]; /* REST v2 base URLs, tried in order */
	size_t n_engines;
	char *imap;	      /* URI of the IMap persistence namespace */
	char *seatunnel_yaml; /* imported file, or NULL */
	char *hazelcast_yaml; /* imported file, or NULL */
	char *state_dir;      /* survives restarts: restore releases */
	char *delete_group;   /* NULL: root only */
	/* a user (name or uid) who may own the local namespaces' directories
	 * and their parents, besides root and the daemon's user; NULL: none */
	char *namespace_owner;
	char *audit_log; /* NULL: no file */
	char *log_level; /* error|warning|notice|info|debug ("info") */
	bool ro;

	/* timing, in milliseconds unless said otherwise */
	unsigned timeout_ms;	     /* deadline of one remote request (5000) */
	unsigned connect_timeout_ms; /* TCP connect deadline (2000) */
	unsigned engine_ttl_ms;	 /* engine job lists are reused this long (3000)
				  */
	unsigned storage_ttl_ms; /* storage listings are reused this long (5000)
				  */
	unsigned cache_ttl_ms;	 /* pseudo-file contents / kernel attr cache
				    (3000) */
	unsigned kernel_ttl_ms;	 /* kernel names, attributes and listings
				    under jobs/, kept fresh by the ticker
				    (60000; 0: cache_ttl) */
	unsigned decision_age_ms; /* max age of the state used for rm (2000) */
	unsigned orphan_grace_s;  /* orphan_grace, seconds (600) */
	unsigned retries;	  /* extra tries for idempotent requests (2) */
	unsigned imap_grace_s;	  /* IMap regions written this recently are
				     live (3600) */
	unsigned engine_max_mb;	  /* bytes of one engine answer, MiB (32) */
	unsigned engine_max_jobs; /* jobs of one engine snapshot (1000000) */
	/* memory caps (README "Memory") */
	unsigned cache_max_entries; /* pseudo-file cache entries (20000) */
	unsigned cache_max_mb;	    /* pseudo-file cache bytes, MiB (16) */
	unsigned readahead_max_mb;  /* read-ahead windows of every open file
				       of every object store, MiB (64) */
	unsigned type_cache_max_entries; /* decoded checkpoint types (200000) */
	unsigned type_cache_max_mb;	 /* their bytes, MiB (32) */
	unsigned walsum_max_entries;	 /* decoded IMap maps (4096) */
	unsigned walsum_max_mb;		 /* their bytes, MiB (4) */
	unsigned info_cache_max_entries; /* checkpoint summaries (20000) */
	unsigned info_cache_max_mb;	 /* their bytes, MiB (16) */

	/* engine HTTP auth (basic), optional; password is a secret */
	char *engine_user;
	char *engine_password;
	char *engine_password_file; /* its first line is the password */
	char *engine_ca_file;	    /* CA bundle for https:// engine URLs */

	/* object-store credentials and addressing (issue: S3 backend) */
	char *access_key;
	char *secret_key;    /* secret */
	char *session_token; /* secret */
	char *credentials_file;
	char *aws_credentials_provider; /* awscred provider list, or NULL */
	char *endpoint;
	char *region;
	char *ca_file;
	bool path_style;

	/* HDFS (README "HDFS"): namenode HTTP addresses, user.name, the HTTP
	 * port of an hdfs:// (RPC) address */
	char *namenodes; /* "host:port,host:port", or NULL */
	char *hdfs_user; /* NULL: $HADOOP_USER_NAME, else the daemon's */
	unsigned hdfs_http_port; /* 0: 9870 */
	/* Kerberos (SPNEGO) for HDFS: the client principal and its keytab
	 * (seatunnel.yaml kerberosPrincipal / kerberosKeytabFilePath) */
	char *kerberos_principal;
	char *kerberos_keytab;

	/* the environment, captured by conf_import_env() */
	struct conf_env env;

	/* seatunnel.yaml facts, when imported */
	char *engine_http_port; /* "8080" */

	/*
	 * Keys set explicitly (conf_set / a config file), one bit per key in
	 * conf.c's key table.  Imports never overwrite such a key; the first
	 * explicit `engine` replaces the default/imported list, later ones
	 * append.  Query it with conf_is_explicit().
	 */
	unsigned long long explicit_keys;
	bool engine_in_layer; /* an explicit engine was set in this layer */
};

#define CONF_MAX_LINE 4096	 /* bytes of one config-file line */
#define CONF_MAX_FILE (1L << 20) /* bytes of a config or yaml file */

struct conf_err {
	char file[256]; /* "" for the command line */
	int line;	/* 0 when not tied to a line */
	char msg[200];
};

/** Fill `c` with the engine's shipped defaults (README "Where the state comes
 * from"). 0 or -ENOMEM. */
int conf_init_defaults(struct stfs_conf *c);

/**
 * Set one key.  `engine` appends (up to CONF_MAX_ENGINES); every other key
 * replaces.  Flags (`ro`, `path_style`) accept no value (NULL or ""), or a
 * boolean (yes/no/true/false/1/0/on/off).  Durations accept a plain number in
 * the key's unit or a suffix ms/s/m/h (e.g. `orphan_grace=10m`). Returns 0;
 * -ENOENT for a key stfs does not know (so main() can hand it to FUSE); -EINVAL
 * for a bad value (err->msg says why).
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

/** Read and parse a file. -ENOENT/-EACCES/... with err filled when unreadable.
 */
int conf_load_file(struct stfs_conf *c, const char *path, struct conf_err *err);

/**
 * Import the checkpoint storage (namespace, storage.type, fs.defaultFS,
 * s3/oss/cos/gcs bucket, fs.* keys) and the HTTP port from a seatunnel.yaml.
 * Values set explicitly (conf_set, a config file) are always kept.
 */
int conf_import_seatunnel_yaml(struct stfs_conf *c, const char *path,
			       struct conf_err *err);

/**
 * Same, from memory (`name` is used in errors; tests and fuzzing).  The
 * checkpoint URI comes from checkpoint.storage.{type,plugin-config}; the
 * engine URL from http.{port,context-path} (https-port when only HTTPS is
 * enabled), engine_user/engine_password from http basic-auth; access_key,
 * secret_key, session_token, endpoint, region, path_style, credentials_file
 * from the plugin-config fs.* keys.  Keys set explicitly are never touched.
 * 0; -EINVAL (bad yaml, no seatunnel.engine, unknown storage) or -ENOMEM
 * with err filled (err->line is the yaml line when known).
 */
int conf_import_seatunnel_yaml_mem(struct stfs_conf *c, const char *name,
				   const char *text, size_t len,
				   struct conf_err *err);

/** Import the IMap map-store namespace from a hazelcast.yaml. */
int conf_import_hazelcast_yaml(struct stfs_conf *c, const char *path,
			       struct conf_err *err);

/**
 * Same, from memory.  Uses hazelcast.map.<engine* or engine_...>.map-store
 * properties: imap = <fs>/<namespace>/ (the clusterName is the directory
 * below it).  A file with no enabled engine map-store changes nothing.
 */
int conf_import_hazelcast_yaml_mem(struct stfs_conf *c, const char *name,
				   const char *text, size_t len,
				   struct conf_err *err);

/**
 * Run the imports named by the seatunnel_yaml / hazelcast_yaml keys (call
 * after the command line and the config file were applied), then fill
 * still-unset credentials from the environment (conf_import_env()).
 */
int conf_apply_imports(struct stfs_conf *c, struct conf_err *err);

/**
 * Fill access_key/secret_key/session_token (and region for s3) from the
 * environment variables of the checkpoint URI's provider, then of the imap
 * URI's (conf/schemes.h): AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN, AWS_REGION, AWS_DEFAULT_REGION (s3, s3a, s3n);
 * OSS_ACCESS_KEY_ID, OSS_ACCESS_KEY_SECRET, OSS_SESSION_TOKEN (oss);
 * COSN_SECRET_ID, COSN_SECRET_KEY (cos, cosn); GOOGLE_ACCESS_KEY_ID,
 * GOOGLE_SECRET_ACCESS_KEY (gs); STFS_ENGINE_PASSWORD for any.  Only keys
 * that are still unset.  The only place stfs reads these variables.
 * 0 or -ENOMEM.
 */
int conf_import_env(struct stfs_conf *c);

/**
 * Capture the variables of env_names[] from the process (secure_getenv:
 * none when set-uid) into `e`, replacing what it held.  0 or -ENOMEM.
 */
int conf_env_capture(struct conf_env *e);

/** The captured value of variable `name`, or NULL (unset, empty, `e` NULL,
 * or a name not in env_names[]). */
const char *conf_env_get(const struct conf_env *e, const char *name);

/** Wipe and free the captured values. */
void conf_env_release(struct conf_env *e);

/**
 * Start a new source ("layer"): the first explicit `engine` of a layer
 * replaces the list, later ones append.  conf_parse_mem()/conf_load_file()
 * start a layer and start another when done, so command-line engines given
 * after a config file replace the file's list.  Call it yourself between
 * other sources.
 */
void conf_begin_layer(struct stfs_conf *c);

/** Whether `key` was set by conf_set()/a config file (not default/import). */
bool conf_is_explicit(const struct stfs_conf *c, const char *key);

/** Cross-key checks after everything is set (URIs parse, ...). */
int conf_validate(const struct stfs_conf *c, struct conf_err *err);

/** Render every key as `key = value` lines, secrets as "<redacted>". */
int conf_render(const struct stfs_conf *c, struct buf *out);

/**
 * Whether `key` is a secret (engine_password, secret_key, session_token):
 * main() refuses it on the command line, argv being readable by everyone.
 */
bool conf_key_is_secret(const char *key);

/**
 * The `-o key=VALUE  help (default)` lines of stfs --help, one per key of
 * the key table, in its order.  0 or what buf_printf returned.
 */
int conf_usage(struct buf *out);

/** Whether a secret key (engine_password, secret_key, ...) has a value. */
bool conf_holds_secret(const struct stfs_conf *c);

/**
 * When a secret is held (or a credentials_file will give one), make the process
 * non-dumpable (prctl(PR_SET_DUMPABLE, 0)): no core file, no ptrace or
 * /proc/PID/mem for anyone but root.  1 when done, 0 when no secret is held,
 * -errno.
 */
int conf_protect_secrets(const struct stfs_conf *c);

/*
 * What an object-store backend (backends/s3.c, gcs.c) takes from the
 * configuration: its own keys, never the engine's (engine_password...).
 * Strings are borrowed from the conf (NULL: unset or empty).
 */
struct objstore_settings {
	unsigned timeout_ms, connect_timeout_ms, retries, storage_ttl_ms;
	unsigned readahead_max_mb; /* one budget for the process (README
				      "Memory") */
	const char *access_key;
	const char *secret_key, *session_token; /* secrets */
	const char *keys_from; /* where access_key came from (no secret) */
	const char *credentials_file, *aws_credentials_provider;
	const char *endpoint, *region, *ca_file;
	bool path_style;
	const struct conf_env *env; /* the captured environment, or NULL */
};

/**
 * The key table's default of numeric key `name` ("timeout": 5000, in the
 * unit struct stfs_conf keeps it), 0 when it has none: for a caller handed
 * a zeroed conf (tests), so that no default is written twice.
 */
unsigned conf_default_u(const char *name);

/* What the local backend (backends/local.c) takes from the configuration. */
struct local_settings {
	const char *namespace_owner; /* a user besides root and the daemon's */
};

/** Fill `out` from `c` (NULL: nothing set). */
void conf_local_settings(const struct stfs_conf *c, struct local_settings *out);

/**
 * Fill `out` from `c`; `c` NULL (tests), or a zero timeout, storage_ttl:
 * the key table's defaults.  keys_from is "config keys" (set explicitly),
 * "seatunnel.yaml or environment" or "environment" (imported).
 */
void conf_objstore_settings(const struct stfs_conf *c,
			    struct objstore_settings *out);

/** Free everything, wiping secrets first.  `c` is zeroed afterwards. */
void conf_release(struct stfs_conf *c);

#endif
