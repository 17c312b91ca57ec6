/*
 * render — the human and machine-readable pseudo-files of the tree:
 * jobs/<id>/status, deletable, restore, pipelines/<pid>/status, and the
 * daemon's own .stfs/stats and .stfs/health.
 *
 * Rendering is deterministic: the same sources give the same bytes (no
 * "now", no ages), so that backup tools see stable files.  Pure functions
 * of the view; thread-safe.
 */
#ifndef STFS_RENDER_H
#define STFS_RENDER_H

#include "util/buf.h"
#include "model/catalog.h"
#include "view/view.h"

/* The verdict of README "Deleting safely" for `rm -r jobs/<id>` by a permitted
 * caller. */
struct verdict {
	int err;	  /* 0: allowed; else the errno rm would see */
	const char *rule; /* "R1".."R6", or "" */
	char reason[160];
};

/** Whether the job's restore points were released (state_dir). */
bool render_job_released(struct stfs *fs, const char *id);

/** The caller-independent verdict (R5, R3, R1, R6, R2 in that order). */
void render_verdict(struct view *v, const struct job_view *jv,
		    struct verdict *out);

int render_job_status(struct view *v, const struct job_view *jv,
		      struct buf *out);
int render_pipe_status(struct view *v, const struct job_view *jv,
		       int32_t pipe_id, const struct cat_pipe *p,
		       struct buf *out);
/** checkpoints/<cid>/info (README "Checkpoint info"); -ENOENT without an
 * object; -EIO when it does not decode; the store's -errno. */
int render_ckpt_info(struct view *v, const struct job_view *jv, int32_t pipe_id,
		     const struct cat_ckpt *c, struct buf *out);
/** `caller_allowed`: render for a caller who may delete (R4 passes). */
int render_deletable(struct view *v, const struct job_view *jv,
		     bool caller_allowed, struct buf *out);
int render_restore(struct view *v, const struct job_view *jv, struct buf *out);
int render_stats(struct view *v, struct buf *out);
int render_health(struct view *v, struct buf *out);
/** stfs.prom's daemon series: stfs_backend_up per source, the deletion
 * counters (README "Prometheus"). */
int render_prom_daemon(struct view *v, struct buf *out);

/** "2026-11-30 11:02:03 UTC" from ms since the epoch. */
void render_time_ms(int64_t ms, char *out, size_t outsz);
/** "45.1 KiB" */
void render_bytes(uint64_t n, char *out, size_t outsz);

#endif
