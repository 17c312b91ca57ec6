/*
 * engine — what stfs asks the SeaTunnel (Zeta) engine, behind a seam.
 *
 * `struct engine` is an interface: a table of operations (struct
 * engine_ops) that the mount calls through engine_jobs(),
 * engine_job_info(), engine_get_raw(), engine_ckpt_monitor() and
 * engine_get_stats().  The daemon's implementation is the REST client
 * below (engine_new); unit tests plug in a scripted one
 * (tests/fakes/fake_engine.h).  An implementation embeds `struct engine`
 * as its first member and sets `ops`.
 *
 * The REST client answers "which jobs does the engine know, in which state"
 * from two list calls (/running-jobs and /finished-jobs), cached for
 * conf->engine_ttl_ms and shared by every thread, so that listing 2,000
 * jobs costs a handful of requests.  Concurrent callers wanting a refresh
 * wait for one fetch (single flight) instead of issuing their own.
 *
 * Several base URLs (conf->engines) are tried in order; the one that last
 * answered is tried first next time.  Every request has conf->timeout_ms as
 * its deadline, and a whole fetch (all URLs, all pages) never exceeds
 * conf->timeout_ms plus one connect timeout.
 *
 * Snapshots are immutable and reference-counted: take one with
 * engine_jobs(), read it freely from any thread, give it back with
 * engine_snap_put().
 */
#ifndef STFS_ENGINE_H
#define STFS_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "util/hist.h"

#include "util/buf.h"
#include "conf/conf.h"

/* JobStatus ordinals (the engine's JobStatus enum, README "The tree"), then
 * stfs's own two. */
enum job_state {
	JS_INITIALIZING = 0,
	JS_CREATED,
	JS_PENDING,
	JS_SCHEDULED,
	JS_RUNNING,
	JS_FAILING,
	JS_FAILED,
	JS_DOING_SAVEPOINT,
	JS_SAVEPOINT_DONE,
	JS_CANCELING,
	JS_CANCELED,
	JS_FINISHED,
	JS_UNKNOWABLE,
	JS_ORPHAN, /* storage only; the engine answered and knows no such job */
	JS_UNKNOWN, /* the engine could not be asked, or said nothing usable */
	JS_COUNT
};

/** "RUNNING", ...; "UNKNOWN" for out-of-range values. */
const char *job_state_name(int state);
/** Parse a JobStatus name (case-insensitive); -1 when not one. */
int job_state_parse(const char *name);
/** JobStatus.isEndState(): FAILED, SAVEPOINT_DONE, CANCELED, FINISHED,
 * UNKNOWABLE. */
bool job_state_is_end(int state);

/** One job as the engine reports it.  All strings are owned by the snapshot. */
struct engine_job {
	char *id;   /* decimal job id, as the engine wrote it */
	char *name; /* jobName, or NULL */
	int state; /* enum job_state; JS_UNKNOWN for an unparseable jobStatus */
	char *status_text; /* that jobStatus as the engine wrote it, or NULL */
	char *error_msg;   /* errorMsg, or NULL */
	int64_t create_s; /* createTime as epoch seconds (local time zone), or 0
			   */
	int64_t finish_s; /* finishTime as epoch seconds, or 0 */
	bool running;	  /* came from /running-jobs */
	bool restored;	  /* isStartWithSavePoint: started from a savepoint
			   * (`-r`); running-job objects only */
	int64_t ckpt_interval_ms; /* envOptions "checkpoint.interval", or 0 */
	/* the job object, compact, key order kept, + "\n"; a shared,
	 * refcounted text (engine_text_new): a refreshed list keeps the text
	 * of a job that did not change with the list before it, once
	 * (README "Memory") */
	char *json;
	size_t json_len;
	/* where the "metrics" object's text is inside json (kept once: README
	 * "Memory"); metrics_len 0: absent.  Read it with
	 * engine_job_metrics_text() */
	size_t metrics_off, metrics_len;
	int *pipelines; /* pipeline ids from jobDag.pipelineEdges, sorted */
	size_t n_pipelines;
	/* digest of everything above that a rendering shows (state, times,
	 * json), computed once where the job is made: the
	 * version of its pseudo-files (README "Performance") */
	uint64_t digest;
};

struct engine_name_idx;

struct engine_snap {
	int refs; /* atomic */
	int err;  /* 0: this data is a fresh answer; else -errno of the failed
		     fetch */
	char errmsg[200]; /* why the fetch failed (no secrets) */
	int64_t data_ms;  /* wall time when `jobs` was fetched (0: never) */
	int64_t fetched_mono_ms; /* monotonic time of the fetch attempt */
	char source[256];	 /* base URL that answered */
	struct engine_job *jobs; /* sorted by id (numeric order) */
	size_t n_jobs;
	json_t *root_running, *root_finished; /* owners of the jobs' json_t */
	json_t *root_extra; /* owner of job-info documents (fallback) */
	/*
	 * true when /finished-jobs failed as a whole and some per-state list
	 * failed too: the history is incomplete.  Jobs the caller has in
	 * storage were then asked one by one (/job-info); those whose answers
	 * failed are in `jobs` with state JS_UNKNOWN.
	 */
	bool partial;
	/* digest of every job's id and digest (engine_snap_seal), computed
	 * once per snapshot: stfs.prom's version */
	uint64_t digest;
	/* private: when non-NULL, `jobs` and the roots belong to this older
	 * snapshot (a failed fetch re-serving the last-known jobs); a ref is
	 * held on it and dropped with this one. */
	struct engine_snap *owner;
	/* private: engine_snap_by_name()'s index, built on first use */
	struct engine_name_idx *by_name;
};

struct engine;
struct engine_stats;

/**
 * The ids of the jobs the caller has in storage, asked for during a
 * refresh whose /finished-jobs list failed (the 2.3 engines: one bad
 * history entry makes the whole list a 500).  Fill *ids with a malloc'd
 * array of malloc'd decimal ids (the engine frees them); 0 or -errno.
 * Called from the refreshing thread, without any engine lock held; it must
 * not call into the engine.
 */
typedef int (*engine_ids_fn)(void *cookie, char ***ids, size_t *n);

/*
 * The seam.  Every operation has the contract of the engine_* function of
 * the same name below; every one is mandatory.  Thread-safe: any FUSE
 * worker calls them concurrently.
 */
struct engine_ops {
	const char *name; /* "rest", "fake", ... */
	struct engine_snap *(*jobs)(struct engine *e, unsigned max_age_ms);
	int (*job_info)(struct engine *e, const char *id,
			struct engine_job *out);
	int (*get_raw)(struct engine *e, const char *path, struct buf *out);
	int (*ckpt_monitor)(struct engine *e, const char *id, struct buf *out);
	void (*get_stats)(struct engine *e, struct engine_stats *out);
	void (*set_storage_ids)(struct engine *e, engine_ids_fn fn,
				void *cookie);
	void (*free)(struct engine *e);
};

struct engine {
	const struct engine_ops *ops;
};

/** Create the REST client for conf->engines. 0 or -ENOMEM/-EINVAL. */
int engine_new(const struct stfs_conf *conf, struct engine **out);
/** Free any implementation (NULL is fine). */
void engine_free(struct engine *e);

/** Install the storage-ids callback (before the first engine_jobs()). */
void engine_set_storage_ids(struct engine *e, engine_ids_fn fn, void *cookie);

/**
 * The engine's jobs, at most `max_age_ms` old (0: conf->engine_ttl_ms).
 * Never NULL.  When the fetch fails, the snapshot has err set and holds
 * the last jobs known (data_ms tells their age), or none.  Blocks at most
 * about conf->timeout_ms.  Release with engine_snap_put().
 */
struct engine_snap *engine_jobs(struct engine *e, unsigned max_age_ms);
void engine_snap_put(struct engine_snap *s);
/** Binary search by id; NULL when absent. */
const struct engine_job *engine_snap_find(const struct engine_snap *s,
					  const char *id);

/**
 * The jobs that have a name, sorted by name (strcmp) then id: an index
 * built on the first call and kept with the snapshot, so that by-name/
 * lookups cost O(log n).  *n gets the count; NULL when there is none (or
 * no memory for the index).  Thread-safe.
 */
const struct engine_job *const *engine_snap_by_name(struct engine_snap *s,
						    size_t *n);

/**
 * Ask /job-info/<id> now (no cache).  0 and *out filled (free with
 * engine_job_release); -ENOENT when the engine answered {"jobId":..} only;
 * -EAGAIN/-ETIMEDOUT/-EIO/-EPROTO (unparseable, or an answer about another
 * job id) / -EFBIG (over engine_max_mb) when it could not tell.
 */
int engine_job_info(struct engine *e, const char *id, struct engine_job *out);
void engine_job_release(struct engine_job *j);

/**
 * GET a raw document (e.g. "/overview", "/system-monitoring-information",
 * "/metrics") from the first engine that answers 2xx, cached for
 * engine_ttl_ms.  One fetch per document is in flight at a time: other
 * callers get the stale copy when there is one, else wait for that fetch
 * (at most about conf->timeout_ms) and share its result.  0 and `out`
 * filled; -errno otherwise.
 */
int engine_get_raw(struct engine *e, const char *path, struct buf *out);

/**
 * The engine's checkpoint monitor of a job (`/jobs/checkpoints/<id>`,
 * SeaTunnel 2.3.13 and later) into `out`, through engine_get_raw.  An
 * engine that does not offer it (2.3.12 and older answer 404 or 400) or
 * fails it is not asked again for 10 minutes: -ENOTSUP meanwhile.
 */
int engine_ckpt_monitor(struct engine *e, const char *id, struct buf *out);

struct engine_stats {
	uint64_t requests, failures, failovers, list_fetches, cache_hits;
	uint64_t fallbacks;  /* refreshes that used the per-state lists */
	struct hist latency; /* one observation per REST request */
};
void engine_get_stats(struct engine *e, struct engine_stats *out);

/* ---- pure parsing (engine_json.c); used by the client, tests and fuzzers */

/**
 * Parse a job list: a plain JSON array or the paged form {"data":[...],
 * "total":N}.  Appends to *jobs and *n (realloc'd; entries whose jobId is not
 * 1-19 digits, or that are not objects, are skipped with a log_warn).
 * `*root` is a JSON array (kept for the callers' bookkeeping; it holds
 * nothing now: a job keeps its texts, not its JSON tree, and a plain array
 * is parsed one element at a time, so the list is never one tree in
 * memory — README "Memory"): created when NULL on entry, appended to
 * otherwise;
 * the caller keeps it alive as long as the jobs, then json_decref's it.
 * `running` marks the jobs.  *total receives "total" (the array size when
 * "total" is missing or bad) or -1 for the plain form.  0, -EPROTO (not a
 * list / bad JSON / error body; msg says why), -ENOMEM.  Duplicate ids are
 * kept here; the client drops them when merging.
 */
int engine_parse_job_list(const char *txt, size_t len, bool running,
			  json_t **root, struct engine_job **jobs, size_t *n,
			  long *total, char *msg, size_t msgsz);
/**
 * Parse one job object (job-info answer).  0 with *root = the document
 * (json_decref it after `out`'s metrics are no longer used) and `out`
 * filled (running = the object has no "finishTime"); -ENOENT when it holds
 * only "jobId"; -EPROTO when it is an error body (msg has its message),
 * not an object, or has no valid jobId; -ENOMEM.  *root is NULL on error.
 */
int engine_parse_job_object(const char *txt, size_t len, json_t **root,
			    struct engine_job *out, char *msg, size_t msgsz);
/**
 * engine_parse_job_list, sharing with `prev` (may be NULL): a job whose
 * text is the same bytes as the job of the same id in `prev` takes a
 * reference on that text instead of keeping its own copy, as soon as it is
 * parsed, so that a refresh holds one copy of an unchanged history, not
 * two (README "Memory").
 */
int engine_parse_job_list_prev(const char *txt, size_t len, bool running,
			       json_t **root, struct engine_job **jobs,
			       size_t *n, long *total, char *msg, size_t msgsz,
			       const struct engine_snap *prev);
/**
 * A job list parsed as its bytes arrive, so that the HTTP body of a list
 * (/finished-jobs/ of 10,000 jobs: 20 MB) is never held whole (README
 * "Memory"): a plain array keeps only the entry being read, any other
 * document (the paged form, an error body) is kept whole and parsed at the
 * end.  The result is engine_parse_job_list_prev's for the same bytes
 * (jobs appended to *jobs / *n, sharing with `prev`; *root made when NULL),
 * with errors of its own wording.  `max`: the most bytes kept (0: no cap).
 * new: 0 or -ENOMEM.  feed: 0, or the error that ended the parse (-EPROTO,
 * -EFBIG, -ENOMEM; later feeds return it).  reset: drop what was appended
 * and start again (a retried request).  end: 0, -EPROTO (msg says why),
 * -EFBIG or -ENOMEM, with *total as engine_parse_job_list gives it; on an
 * error nothing stays appended.
 */
struct engine_list_stream;
int engine_list_stream_new(bool running, json_t **root,
			   struct engine_job **jobs, size_t *n,
			   const struct engine_snap *prev, size_t max,
			   struct engine_list_stream **out);
int engine_list_stream_feed(struct engine_list_stream *s, const char *p,
			    size_t len);
void engine_list_stream_reset(struct engine_list_stream *s);
int engine_list_stream_end(struct engine_list_stream *s, long *total, char *msg,
			   size_t msgsz);
/** NULL-safe. */
void engine_list_stream_free(struct engine_list_stream *s);
/** A job text of `n` bytes plus a NUL, refcounted (one reference); NULL on
 * ENOMEM.  engine_job.json is always one of these. */
char *engine_text_new(size_t n);
/** Drop a reference on such a text; true when it was the last (the text
 * is freed).  NULL-safe. */
bool engine_text_put(char *t);
/** When `j`'s text is the same bytes as `old`'s, drop j's copy and share
 * old's (a reference).  true when shared. */
bool engine_job_share_text(struct engine_job *j, const struct engine_job *old);
/** Fill one engine_job from a parsed object (borrowed refs into `obj`). */
int engine_job_from_json(json_t *obj, bool running, struct engine_job *out);
/** Free what engine_job_from_json allocated (not the json). */
void engine_job_clear(struct engine_job *j);
/** Set j->digest from the job's fields (engine_job_from_json does). */
void engine_job_digest(struct engine_job *j);
/** Set s->digest from its jobs' ids and digests, once the jobs are in. */
void engine_snap_seal(struct engine_snap *s);
/**
 * The job's "metrics" object as compact JSON text without a newline ("{}"
 * when the job has none), borrowed from j->json: the one place the
 * metrics are kept (README "Memory").  *len gets its length.
 */
const char *engine_job_metrics_text(const struct engine_job *j, size_t *len);
/**
 * The job's "metrics" object, parsed again from its text (a job keeps
 * the text only: the tree of 10,000 jobs' metrics cost ~100 MB): a new
 * reference (json_decref it), or NULL when absent or out of memory.
 */
json_t *engine_job_metrics(const struct engine_job *j);
/** "yyyy-MM-dd HH:mm:ss" (local time) -> epoch seconds; -1 if malformed. */
int64_t engine_parse_time(const char *s);

#endif
