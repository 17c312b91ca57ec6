/*
 * catalog — what the checkpoint storage holds, organised as jobs,
 * pipelines and checkpoints, in both layouts stfs understands
 * (README "Layouts"):
 *
 *   real (engine code):
 * <jobId>/<writeTs>-<rand>-<pipelineId>-<checkpointId>.ser and in-flight
 * ...sertmp documented:
 * <jobId>/<pipelineId>/<checkpointId>/<task-location>/state-data doc
 * savepoints:      savepoint/<jobId>/<ts or id>/...  (any depth)
 *
 * A catalog is built from ONE recursive listing of the namespace and is
 * then immutable and reference-counted: readers on any thread take a ref
 * (catalog_get) and drop it (catalog_put).  Objects whose names fit no
 * layout are kept as a job's `strays` (shown, never interpreted).
 *
 * Memory (README "Memory"): everything of one job (its objects, their
 * keys, its pipelines, checkpoints and arrays) is one allocation, shared
 * by reference between catalogs: a relisting keeps the jobs whose objects
 * did not change from the catalog it replaces (catalog_rebuild), and
 * catalog_remove_keys rebuilds only the jobs it touches.
 *
 * The restore point of a pipeline (README "Deleting safely", R2) is the object
 * the engine would load on `-r`: in the real layout the finished `.ser` with
 * the greatest write timestamp (ties: the later name), in the documented layout
 * the checkpoint with the greatest id.
 */
#ifndef STFS_CATALOG_H
#define STFS_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"
#include "util/jobid.h"

/* ---- pure name parsing (layout) */

struct real_name {
	int64_t write_ts; /* ms */
	int32_t rnd;	  /* 0..999 in practice */
	int32_t pipeline_id;
	int64_t checkpoint_id;
	bool tmp; /* .sertmp */
	bool crc; /* ".<name>.crc": the Hadoop checksum sidecar of <name> */
};

/**
 * Parse "<ts>-<rand>-<pid>-<cid>.ser" or ".sertmp" (no directory part), or
 * the checksum sidecar ".<that name>.crc" Hadoop's LocalFileSystem writes
 * beside it on file:/// (crc set, the other fields those of its object).
 * 0 and *out filled; -EINVAL when the name is not of that form (signs,
 * empty fields, overflow, extra characters all refused).
 */
int layout_parse_real(const char *name, struct real_name *out);

/* ---- the catalog */

/* which group of a job's objects one belongs to (the tree's ND_SUBDIR and
 * ND_OBJ, the deletion path's classes) */
enum obj_group {
	OG_CKPT,  /* objects of one checkpoint */
	OG_SP,	  /* documented savepoint data */
	OG_OTHER, /* strays */
};

enum cat_kind {
	CAT_REAL = 1,	/* real-layout file */
	CAT_DOC = 2,	/* documented-layout checkpoint file */
	CAT_DOC_SP = 3, /* documented savepoint data (savepoint/<jobId>/...) */
	CAT_STRAY = 4,	/* under <jobId>/ but fits no layout */
};

/* `key` and `name` are owned by the catalog: `name` points into `key`.
 * (Fields ordered for size: 104 bytes.) */
struct cat_obj {
	char *key;  /* backend path, relative to the namespace */
	char *name; /* path below its directory in the tree: the file
		       name (real), "<task-location>/state-data" (doc),
		       the path below savepoint/<jobId>/ (doc sp),
		       the path below <jobId>/ (stray) */
	uint64_t size;
	int64_t mtime_ns;
	struct cat_obj *of; /* a .crc sidecar: its object, when present (the
			       sidecar's restore point and type are its) */
	int64_t checkpoint_id;
	struct real_name rn;   /* CAT_REAL only */
	struct be_owner owner; /* at the source, when the store has owners */
	int32_t pipeline_id;   /* CAT_REAL, CAT_DOC */
	uint8_t kind;	       /* enum cat_kind */
	bool restore_point;    /* this object is its pipeline's restore point */
};

struct cat_ckpt {
	int64_t id;
	struct cat_obj **objs; /* sorted by name */
	size_t n_objs;
	uint64_t bytes;
	int64_t newest_mtime_ns;
	bool doc;	    /* documented layout */
	bool restore_point; /* holds the pipeline's restore point */
	bool only_tmp;	    /* every object is a .sertmp */
};

struct cat_pipe {
	int32_t id;
	struct cat_ckpt *ckpts; /* sorted by id */
	size_t n_ckpts;
	struct cat_obj *restore; /* the restore point object, or NULL */
	int64_t restore_ckpt;	 /* its checkpoint id, or -1 */
	uint64_t bytes;
};

struct cat_job {
	char *id;
	struct cat_pipe *pipes; /* sorted by id */
	size_t n_pipes;
	struct cat_obj *
		*sp_objs; /* documented savepoint data, sorted by name */
	size_t n_sp;
	struct cat_obj **strays; /* sorted by name */
	size_t n_strays;
	bool in_ckpt_dir; /* <ns>/<jobId>/ exists */
	bool in_sp_dir;	  /* <ns>/savepoint/<jobId>/ exists */
	uint64_t bytes;	  /* every object of the job */
	size_t n_objs;
	size_t n_tmp;
	int64_t newest_mtime_ns; /* over every object, .sertmp included */
	int64_t newest_ckpt_ms; /* newest finished checkpoint's write time (ms),
				   or 0 */
};

struct cat_block;

struct catalog {
	int refs; /* atomic */
	int err;  /* 0, or -errno of the listing that failed */
	int64_t built_mono_ms;
	int64_t built_ms;
	struct cat_job *jobs; /* sorted by id, numerically */
	size_t n_jobs;
	size_t n_objs;
	uint64_t bytes;
	size_t n_ignored; /* entries of the namespace that are not jobs
			     (hostile keys and duplicates included) */
	/* private: per job, the allocation that holds it (a reference; a
	 * job may be shared with other catalogs) */
	struct cat_block **blk;
	size_t n_shared; /* jobs taken from an earlier catalog */
};

/** One entry fed to the builder (tests use this without a backend). */
struct cat_entry {
	const char *key;
	uint64_t size;
	int64_t mtime_ns;
};

/**
 * Build a catalog from a flat list of file keys (relative to the
 * namespace).  Directory-marker keys (ending in '/') are ignored.  Never
 * fails on odd names: they become strays or are ignored.  0 and *out; -ENOMEM.
 */
int catalog_from_entries(const struct cat_entry *ents, size_t n,
			 struct catalog **out);
/**
 * List the backend's namespace recursively and build.  0 or -errno.  A
 * namespace that does not exist (yet) is an empty catalog, not -ENOENT.
 */
int catalog_build(struct backend *be, struct catalog **out);
/**
 * catalog_build, sharing with `prev` (NULL: none) every job whose objects
 * (keys, sizes, times, owners) are the ones `prev` has: a relisting of an
 * unchanged namespace costs the listing, not a second catalog.  `prev` is
 * untouched and may be dropped at once.
 */
int catalog_rebuild(struct backend *be, const struct catalog *prev,
		    struct catalog **out);
/** catalog_from_entries sharing with `prev` (as catalog_rebuild). */
int catalog_from_entries_prev(const struct cat_entry *ents, size_t n,
			      const struct catalog *prev, struct catalog **out);
/** Build the catalog of one job only (fresh listing of <jobId>/ and
 * savepoint/<jobId>/), for decisions that must not use a stale view.
 * Missing directories are fine (the catalog then has no such job);
 * -EINVAL when job_id is not a job id; else -errno of a listing. */
int catalog_build_job(struct backend *be, const char *job_id,
		      struct catalog **out);

/**
 * The catalog `c` without the objects whose keys are among `keys`, made
 * without listing anything (after a deletion through stfs): the jobs that
 * lose objects are rebuilt, their restore points chosen again, and a job
 * left without objects disappears; every other job is shared with `c`.
 * Costs O(jobs + objects of the rebuilt jobs).  Keys `c` does not hold are
 * ignored.  0 and *out (a new reference; `c` is untouched); -ENOMEM.
 */
int catalog_remove_keys(struct catalog *c, const char *const *keys, size_t n,
			struct catalog **out);

/** Take a reference (atomic; any thread).  Returns c.  NULL-safe. */
struct catalog *catalog_get(struct catalog *c);
/** Drop a reference; the last one frees everything.  NULL-safe. */
void catalog_put(struct catalog *c);

/* Lookups (binary search); NULL when absent.  Results live as long as the
 * caller's reference on the catalog. */
const struct cat_job *catalog_find(const struct catalog *c, const char *id);
const struct cat_pipe *cat_job_pipe(const struct cat_job *j, int32_t pid);
/** The object of this key, or NULL. */
const struct cat_obj *catalog_find_key(const struct catalog *c,
				       const char *key);
const struct cat_ckpt *cat_pipe_ckpt(const struct cat_pipe *p, int64_t cid);

#endif
