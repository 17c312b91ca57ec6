/*
 * view — one consistent state of both sources for a whole FUSE call: one
 * catalog and one engine snapshot, taken together, and the jobs as both
 * see them.  What the tree (tree.h) and the renderers (render.h) are pure
 * functions of.  Read only: taking a view writes nothing (a release is
 * voided where the engine's answer arrives, delete_watch_engine).
 * Thread-safe.
 */
#ifndef STFS_VIEW_H
#define STFS_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/engine.h"
#include "model/catalog.h"
#include "mount/mount.h"

struct view {
	struct stfs *fs;
	struct catalog *cat;
	struct engine_snap *snap;
	int64_t now_ms;
	/* whether the caller may delete (for `deletable`); NULL: yes */
	bool (*caller_allowed)(struct stfs *fs);
};

/** Take the current catalog and engine snapshot (refs). */
void view_open(struct stfs *fs, struct view *v);
void view_close(struct view *v);

/** A job as both sources see it. */
struct job_view {
	const char *id;
	const struct cat_job *cj;    /* NULL: storage has nothing of it */
	const struct engine_job *ej; /* NULL: the engine does not report it */
	int state;	 /* enum job_state, ORPHAN/UNKNOWN included */
	bool stale;	 /* state is the engine's last known answer */
	int64_t mtime_s; /* newest of its sources' times */
};

/** -ENOENT when neither source knows `id`. */
int view_job(const struct view *v, const char *id, struct job_view *out);
/** Call fn for every job, in numeric id order; stops when fn returns non-zero.
 */
int view_each_job(const struct view *v,
		  int (*fn)(void *cookie, const struct job_view *jv),
		  void *cookie);

#endif
