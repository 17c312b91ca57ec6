/*
 * backend — the storage contract every checkpoint/IMap store implements.
 *
 * A backend serves one namespace (a URI such as file:///tmp/seatunnel/
 * checkpoint_snapshot/ or s3://bucket/seatunnel/checkpoint/).  Paths given
 * to it are relative to that namespace, '/'-separated, without a leading
 * '/'; "" is the namespace itself.  A backend knows nothing of jobs or
 * checkpoints: that is fusefs's business.
 *
 * Every op returns 0 (or a byte count) on success and -errno on failure,
 * never -1 and never a positive errno.  -ENOENT is routine and not logged;
 * other failures are logged once, by the backend, where the detail is.
 *
 * Threads: ops are called concurrently from FUSE worker threads with no
 * lock held.  A backend guards its own priv.  Every remote call has a
 * deadline (conf->timeout_ms): no op blocks longer than that plus retries.
 *
 * Ownership: `struct backend` is allocated and freed by the core
 * (be_open/be_close), with `priv_size` zeroed bytes for the backend's
 * private state; a backend never frees `be`.
 */
#ifndef STFS_BACKEND_H
#define STFS_BACKEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/buf.h"
#include "util/hist.h"
#include "conf/conf.h"

enum be_type {
	BE_FILE = 1,
	BE_DIR = 2,
};

/*
 * Who owns an entry at the source and who may read it there (README "Who
 * can read what").  `has` is false for stores without owners (object
 * stores): the tree then shows its documented mode.  `perm` is the
 * entry's permission bits with those cleared that a directory on the way
 * to it (the namespace root and its parents included) takes away.
 */
struct be_owner {
	bool has;
	uint32_t perm; /* st_mode & 07777, reduced as above */
	uint32_t uid, gid;
};

struct be_attr {
	enum be_type type;
	uint64_t size;	  /* bytes; 0 for directories */
	int64_t mtime_ns; /* source modification time, ns since the epoch */
	struct be_owner owner;
};

/**
 * Called once per entry by list_page().  `name` and `attr` are borrowed for
 * the call only.  In a recursive listing `name` is the path below the
 * listed directory ("3/17/task-0/state-data") and only files are reported.
 * Return non-zero to stop the walk (list_page then still returns 0).
 * A fill function must not call into the same backend (a backend may hold
 * its own lock while it calls back): collect, then act.
 */
typedef int (*be_fill_fn)(void *cookie, const char *name,
			  const struct be_attr *attr);

/* list_page() flags */
#define BE_LIST_RECURSIVE 0x1 /* every file below `dir`, at any depth */

/* capabilities */
#define BE_CAP_DELETE 0x1 /* remove() and rmdir() delete (be_remove: EROFS) */
#define BE_CAP_REMOTE 0x2 /* every read is a round trip: overlap them */

struct backend;

struct be_stats {
	/* updated with atomic builtins by the be_* wrappers */
	uint64_t lists, stats, reads, removes, errors, read_bytes;
	uint64_t latency_us_sum;
	struct hist latency; /* one observation per be_* call */
};

struct be_ops {
	/* "local", "s3", "gcs", "webhdfs": the schemes it serves are those
	 * of conf/schemes.h that name it */
	const char *name;
	unsigned caps;	  /* BE_CAP_* */
	size_t priv_size; /* bytes the core callocs for be->priv */

	/**
	 * Required.  Check the backend's own settings and prepare (connect
	 * lazily).  `uri` is the namespace.  0, -EINVAL (bad URI or settings,
	 * logged), -ENOMEM.
	 */
	int (*init)(struct backend *be, const char *uri,
		    const struct stfs_conf *conf);
	/** Required.  Must cope with a half-initialised backend. */
	void (*destroy)(struct backend *be);

	/**
	 * Required.  List one page of directory `dir`.  `cursor` is NULL for
	 * the first page, else a value this backend returned earlier.  On
	 * return `*next` is NULL when the listing is complete, else a
	 * malloc'd cursor for the next page (the caller frees it).
	 * 0; -ENOENT when `dir` does not exist; -ENOTDIR; -EIO/-ETIMEDOUT/...
	 */
	int (*list_page)(struct backend *be, const char *dir, unsigned flags,
			 const char *cursor, be_fill_fn fill, void *cookie,
			 char **next);
	/** Required.  Type, size and mtime of one path.  0; -ENOENT; ... */
	int (*stat)(struct backend *be, const char *path, struct be_attr *out);
	/**
	 * Required.  Read up to `size` bytes at `off` into the caller's
	 * buffer.  Returns the count (short only at EOF; 0 at or past EOF) or
	 * -errno.
	 */
	ssize_t (*read)(struct backend *be, const char *path, void *buf,
			size_t size, off_t off);
	/** Optional (NULL: -EROFS).  Delete one file. 0; -ENOENT; ... */
	int (*remove)(struct backend *be, const char *path);
	/**
	 * Optional (NULL: the store has no real directories, nothing to do;
	 * be_rmdir() then returns 0).  Remove one EMPTY directory, such as
	 * an emptied <jobId>/ on local or HDFS storage.  0; -ENOENT;
	 * -ENOTEMPTY; -ENOTDIR; -EINVAL for "" (the namespace itself)...
	 */
	int (*rmdir)(struct backend *be, const char *path);
	/**
	 * Optional.  Append `key = value` lines about the backend's own state
	 * for .stfs/config (e.g. which credentials provider is in use and
	 * when its credentials expire).  Never a secret.  0 or -errno.
	 */
	int (*describe)(struct backend *be, struct buf *out);
};

struct backend {
	const struct be_ops *ops;
	void *priv;
	char *uri;
	const struct stfs_conf *conf;
	struct be_stats stats;
	/* health, for .stfs/health; protected by health_lock (set up by
	 * be_open; backends only call be_note_error/be_note_ok) */
	pthread_mutex_t health_lock;
	int last_err;
	int64_t last_err_ms, last_ok_ms;
	char last_err_msg[160];
};

/**
 * Find the backend serving `uri`'s scheme, allocate and init it.
 * 0 and *out set; -EPROTONOSUPPORT for an unknown scheme; what init returned.
 */
int be_open(const char *uri, const struct stfs_conf *conf,
	    struct backend **out);
/**
 * The backend of the registry serving `uri`'s scheme (conf/schemes.h), or
 * NULL when none does.  Opens nothing.
 */
const struct be_ops *be_find(const char *uri);
/** The i-th backend of the registry, NULL past its end (tests, listings). */
const struct be_ops *be_registry_at(size_t i);
/**
 * Like be_open() with the ops table given (tests' fakes, or a caller that
 * already knows the backend).  Same returns.
 */
int be_open_ops(const struct be_ops *ops, const char *uri,
		const struct stfs_conf *conf, struct backend **out);
/** Destroy and free; NULL is a no-op. */
void be_close(struct backend *be);

/** List every page of `dir` (loops list_page). Returns as list_page. */
int be_list(struct backend *be, const char *dir, unsigned flags,
	    be_fill_fn fill, void *cookie);
int be_stat(struct backend *be, const char *path, struct be_attr *out);
ssize_t be_read(struct backend *be, const char *path, void *buf, size_t size,
		off_t off);
int be_remove(struct backend *be, const char *path);
/**
 * Remove one empty directory (ops->rmdir).  0 when the backend has no
 * directories (slot NULL); -EROFS when the backend cannot delete at all
 * (ops->remove is NULL); else what ops->rmdir returned.  Counted as a
 * remove.
 */
int be_rmdir(struct backend *be, const char *path);

/** ops->describe when the backend has it, else nothing; NULL be: 0. */
int be_describe(struct backend *be, struct buf *out);

/** Record a failure/success for .stfs/health (called by backends). */
void be_note_error(struct backend *be, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void be_note_ok(struct backend *be);
/** Copy health fields under the lock. */
void be_health(struct backend *be, int *last_err, int64_t *last_err_ms,
	       int64_t *last_ok_ms, char *msg, size_t msgsz);

/** Milliseconds since the epoch / on a monotonic clock. */
int64_t now_ms(void);
int64_t mono_ms(void);

extern const struct be_ops be_local_ops;
extern const struct be_ops be_s3_ops;
extern const struct be_ops be_gcs_ops;
extern const struct be_ops be_webhdfs_ops;

#endif
