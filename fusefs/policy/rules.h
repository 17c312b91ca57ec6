/*
 * rules — README "Deleting safely" as a pure function: may this object be
 *deleted, may this job be released?
 *
 * The caller gathers the facts (mount flags, who asks, the engine's fresh
 * answer, the release store, what kind of object it is) into a
 * struct rule_input; rules_decide() says yes (err 0) or names the errno and
 * the first rule that refuses, in the contract's order
 *
 *	R5 (ro) > R4 (caller) > R3 (engine unknown) > R1 (state) > R6 (.sertmp)
 *	> R2 (restore points and savepoints)
 *
 * Consequence of the order: R6 can only decide for a job in an end state
 * or orphaned, where it allows, so an in-flight object of a live job is
 * always refused by R1 (EBUSY, the same errno).  R6 stays in the table so
 * a change of R1 cannot silently open it.
 *
 * Ownership: nothing is allocated; `out->rule` points to a string literal.
 * Thread safety: rules_decide() and rules_decide_release() are pure and
 * reentrant.  rules_caller_allowed() reads the group database with
 * getgrnam_r() (reentrant; it may block on NSS, e.g. LDAP).
 */
#ifndef STFS_RULES_H
#define STFS_RULES_H

#include <stdbool.h>
#include <sys/types.h>

/* What an object under jobs/<jobId>/ is, as far as the deletion rules care. */
enum obj_class {
	OC_SUPERSEDED,	  /* a checkpoint object that is not a restore point */
	OC_RESTORE_POINT, /* what the engine would load on `-r <jobId>` */
	OC_SAVEPOINT,	  /* documented-layout savepoint data, or a real-layout
			   * object whose checkpoint type is SAVEPOINT */
	OC_INFLIGHT,	  /* a `.sertmp` object */
	OC_STRAY,	  /* an unrecognised object of the job: as superseded */
	OC_VIEW,	  /* a pseudo-file or virtual directory of the job:
			   * unlinking it removes nothing; allowed when the
			   * job passes R5, R4, R3 and R1 */
	OC_COUNT
};

struct rule_input {
	bool ro;	     /* the mount has `ro` */
	bool caller_allowed; /* rules_caller_allowed() for the caller */
	int engine_err;	     /* 0: the engine answered freshly; else -errno */
	int state; /* enum job_state, JS_ORPHAN and JS_UNKNOWN included */
	/*
	 * With state JS_UNKNOWN: the engine was asked and answered that it
	 * knows no such job, but the job's newest object is younger than
	 * orphan_grace: not dead yet (R1, EBUSY), not unknowable (R3).
	 * Ignored for every other state.
	 */
	bool young_orphan;
	bool released;	    /* the release store holds a release for the job */
	enum obj_class cls; /* ignored by rules_decide_release() */
};

struct rule_result {
	int err;	  /* 0 (allowed) or a positive errno */
	const char *rule; /* "R1".."R6", or "" when allowed */
	char reason[160]; /* one line, no newline: why (also when allowed) */
};

/** Short name of a class: "superseded", "restore-point", ...; "?" if bad. */
const char *obj_class_name(enum obj_class cls);

/**
 * Decide whether the object described by `in` may be deleted.  Fills *out
 * on every path.  An out-of-range `cls` is treated as OC_RESTORE_POINT
 * (the most protected class); an out-of-range `state` as JS_UNKNOWN.
 */
void rules_decide(const struct rule_input *in, struct rule_result *out);

/**
 * Whether telling a real-layout savepoint from a superseded checkpoint can
 * change the verdict for the job described by `in` (`in->cls` ignored):
 * true exactly when rules_decide() answers differently for OC_SAVEPOINT
 * and OC_SUPERSEDED.  Callers read an object's header (one GET on S3) only
 * when this is true; every place that asks must ask here.
 */
bool rules_type_matters(const struct rule_input *in);

/**
 * What `rm -r` of a whole job does, given how many objects of each class it
 * has (`cnt`): every class is decided (res[c], with in->cls = c), and the
 * refusal of highest precedence among classes that have objects (and
 * OC_VIEW, the pseudo-files, always) is the verdict; an R2 verdict's
 * reason counts the protected objects.  in->cls is ignored.
 */
void rules_decide_job(const struct rule_input *in, const size_t cnt[OC_COUNT],
		      struct rule_result res[OC_COUNT],
		      struct rule_result *verdict);

/**
 * Decide whether the job may be released (`echo release > restore`) or
 * protected again: R5, R4, R3, then R1 (a job in no end state cannot be
 * released: EBUSY; an orphan counts as ended).  `in->cls` and
 * `in->released` are ignored.  Fills *out on every path.
 */
void rules_decide_release(const struct rule_input *in, struct rule_result *out);

/**
 * R4: true for uid 0, or when `delete_group` (a group name; when no group
 * has that name and it is all digits, a numeric gid) resolves to a gid equal
 * to `gid` or found among groups[0..ngroups).  False when delete_group is
 * NULL or "", or unknown, or on a lookup error.  `groups` may be NULL when
 * ngroups <= 0.
 */
bool rules_caller_allowed(uid_t uid, gid_t gid, const gid_t *groups,
			  int ngroups, const char *delete_group);

/**
 * The gid of `delete_group` as rules_caller_allowed() resolves it (a name,
 * else an all-digit gid): 0 and *gid; -ENOENT (NULL, "" or unknown);
 * -errno of the lookup.
 */
int rules_group_gid(const char *name, gid_t *gid);

/*
 * IMap WAL regions (README "Reclaiming IMap WAL space"): may the region
 * directory imap/<cluster>/<map>/<region> (or a file of it) be removed?
 * The caller gathers the facts from the map's summary; the same function
 * gives the summary's verdict and rm's answer, so they cannot disagree.
 * Order: W5 (ro, EROFS) > W4 (caller, EACCES) > W1 (records the reader
 * keeps, or a map the engine cannot load, EPERM) > W2 (empty, newest or
 * written within imap_grace: a member may append, EBUSY) > W3 (the
 * engine answers: EBUSY; it cannot be asked: EAGAIN; it refuses
 * connections: every member is stopped, allowed).
 */
enum region_engine {
	RE_UNKNOWN = 0, /* not configured, or no clear answer: cannot ask */
	RE_UP,		/* the engine answered */
	RE_STOPPED,	/* the engine refused the connection */
};

struct region_input {
	bool ro;	     /* the mount has `ro` */
	bool caller_allowed; /* rules_caller_allowed() for the caller */
	bool load_fails;     /* the engine's reader would abort on the map */
	bool holds_kept;     /* a record of it is one the reader keeps */
	bool empty;	     /* no bytes: a member created it and appends */
	bool newest;	     /* newest mtime of the map's regions */
	bool recent;	     /* written within imap_grace */
	enum region_engine engine;
};

/** Decide whether the region described by `in` may be removed; fills *out
 * (err 0 or EROFS/EACCES/EPERM/EBUSY/EAGAIN, rule "W1".."W5"). Pure. */
void rules_decide_region(const struct region_input *in,
			 struct rule_result *out);

#endif
