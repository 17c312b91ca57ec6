/*
 * delete — `rm`, `rmdir` and the release control, by the rules of
 * README "Deleting safely".
 *
 * Every decision uses state that is at most conf.decision_age_ms old: the
 * first deletion in a job asks the engine afresh (/job-info/<id>) and lists
 * the job's storage afresh; later deletions in the same job reuse that
 * answer until it is older than decision_age_ms.  The rule engine
 * (rules.h) decides; every decision, allowed or refused, is audited; after
 * a deletion the daemon's caches are dropped and the kernel's entries for
 * the job's pseudo-files are invalidated (from a worker thread, never from
 * inside the FUSE call, which could deadlock on the kernel's locks).
 *
 * Thread-safe.  Functions return 0 or -errno, the errno `rm` will print.
 */
#ifndef STFS_DELETE_H
#define STFS_DELETE_H

#include <stdbool.h>
#include <sys/types.h>

#include "model/catalog.h"
#include "mount/mount.h"
#include "policy/rules.h"

struct caller {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	gid_t groups[64];
	int ngroups;
};

/**
 * The policy's per-mount parts: the decision cache (fs->dc) and who may
 * read what (fs->read_group, fs->read_gid, from delete_group).  Called by
 * the composition root after stfs_init; 0 or -ENOMEM.  delete_detach
 * frees them and closes fs->rel and fs->audit (before stfs_release).
 */
int delete_attach(struct stfs *fs);
void delete_detach(struct stfs *fs);

/**
 * Void releases where the engine's fresh answers arrive: installs the
 * stfs_engine hook that voids the release of every job the answer reports
 * in a non-end state, when the answer is newer than the release (audited).
 * Views never write (README "Layout of the source").
 */
void delete_watch_engine(struct stfs *fs);

/** unlink(2) of `path`. */
int delete_unlink(struct stfs *fs, const struct caller *c, const char *path);
/** rmdir(2) of `path`: allowed once no storage object remains below. */
int delete_rmdir(struct stfs *fs, const struct caller *c, const char *path);
/**
 * `echo release > jobs/<id>/restore` (release=true) or `protect`
 * (release=false) for the job at `job_path` ("/jobs/<id>" or below).
 */
int delete_release(struct stfs *fs, const struct caller *c,
		   const char *job_path, bool release);

/* What `rm -r jobs/<id>` would do, per object class. */
struct delete_assessment {
	size_t cnt[OC_COUNT];		  /* the job's live objects per class */
	struct rule_result res[OC_COUNT]; /* the decision for each class */
	struct rule_result verdict;	  /* rules_decide_job() */
	int state;			  /* enum job_state decided on */
	bool released;			  /* a release covers the job */
	bool merged;	/* real-layout objects were not told apart (the split
			 * does not matter here): savepoints counted superseded */
	int engine_err; /* -errno: the engine could not be asked (R3) */
};

/**
 * Predict `rm -r jobs/<id>` for a caller (`caller_allowed`: R4) from the
 * very inputs unlink/rmdir decide on: the same fresh decision (the
 * engine's /job-info answer and the fresh listing of the job, shared for
 * decision_age), the same release check and the same classification of
 * each object.  Fills *a on every path; 0, or -errno when the job's storage
 * cannot be listed (then the verdict is R3 EAGAIN, as unlink's would be).
 */
int delete_assess(struct stfs *fs, const char *id, bool caller_allowed,
		  struct delete_assessment *a);

/** Whether the caller may delete/release at all (root or delete_group). */
bool delete_caller_allowed(struct stfs *fs, const struct caller *c);

/**
 * While `rm -r` empties a job, the job's directories must stay resolvable
 * until rm reaches their rmdir: the catalog of the job as it was when the
 * deletion session began (a ref: catalog_put it), or NULL when no session
 * of the job is recent.
 */
struct catalog *delete_ghost(struct stfs *fs, const char *path);
/** Whether storage key `key` was deleted in a recent session. */
bool delete_is_removed(struct stfs *fs, const char *key);

/**
 * Void a release of a job seen in a non-end state again (audited), when
 * the engine's answer (`seen_ms`, epoch ms) is newer than the release.
 */
/**
 * Count a deletion decision and write its audit record (README "Deleting
 * safely"); checkpoint and IMap region removals share it.
 */
void delete_audit(struct stfs *fs, const struct caller *c, const char *op,
		  const char *path, const char *object, const char *state,
		  const char *source, int64_t age_ms, const char *rule,
		  int err);
void delete_void_release(struct stfs *fs, const char *id, int state,
			 int64_t seen_ms);

/*
 * What a path below /jobs/<id> is, for unlink and rmdir: the tree says it
 * (the view layer above hands delete_set_resolver its resolver), so there
 * is one path grammar.
 */
enum del_kind {
	DK_OBJ,	   /* a storage object: `obj`, in group `group` */
	DK_FILE,   /* a pseudo-file or link: a view, nothing to remove */
	DK_JOB,	   /* jobs/<id>: everything of `cj` */
	DK_PIPES,  /* pipelines/: every pipeline of `cj` */
	DK_PIPE,   /* pipelines/<pid> or its checkpoints/: `pipe` (NULL:
		    * engine only) */
	DK_CKPT,   /* one checkpoint: `ckpt` */
	DK_SPS,	   /* savepoints/: the documented savepoint data of `cj` */
	DK_OTHER,  /* other/: the strays of `cj` */
	DK_SUBDIR, /* a directory of object name prefix `sub` in `group` */
	DK_DIR,	   /* any other directory: no storage object below */
};

struct del_node {
	enum del_kind kind;
	const struct cat_job *cj; /* NULL: storage has nothing of the job */
	const struct cat_pipe *pipe;
	const struct cat_ckpt *ckpt;
	const struct cat_obj *obj;
	enum obj_group group;
	char sub[1024];
};

/**
 * Resolve `path` against catalog `cat` and engine snapshot `snap` (at
 * wall time now_ms) into *out.  0 or -errno (-ENOENT: no such path).
 */
typedef int (*delete_resolve_fn)(struct stfs *fs, struct catalog *cat,
				 struct engine_snap *snap, int64_t now_ms,
				 const char *path, struct del_node *out);
/** Install the resolver (after delete_attach); unlink and rmdir refuse
 * with ENOSYS without one. */
void delete_set_resolver(struct stfs *fs, delete_resolve_fn fn);

/** Drops what the kernel caches of `path` (its node's attributes, data and
 * listing, or a negative entry; installed by the FUSE layer, ops.c). */
typedef void (*delete_inval_fn)(void *cookie, const char *path);
/**
 * Start the kernel-invalidation worker, which calls `fn(cookie, path)` off
 * the FUSE call path; fn NULL ends it and waits for it (at unmount, before
 * libfuse frees its handle).
 */
void delete_set_invalidate(struct stfs *fs, delete_inval_fn fn, void *cookie);

#endif
