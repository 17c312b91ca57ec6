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

#include "policy/rules.h"
#include "mount/mount.h"

struct caller {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	gid_t groups[64];
	int ngroups;
};

struct decision_cache;

struct decision_cache *decision_cache_new(void);
void decision_cache_free(struct decision_cache *dc);

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
void delete_void_release(struct stfs *fs, const char *id, int state,
			 int64_t seen_ms);

/** Start the kernel-invalidation worker (needs the struct fuse); NULL ends
 * it and waits for it (at unmount, before libfuse frees the handle). */
void delete_set_fuse(struct stfs *fs, void *fuse);

#endif
