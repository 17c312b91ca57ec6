/*
 * rules — README "Deleting safely" decisions.  See rules.h.
 */
#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/engine.h"
#include "policy/rules.h"

static const char *const class_names[OC_COUNT] = {
	[OC_SUPERSEDED] = "superseded", [OC_RESTORE_POINT] = "restore-point",
	[OC_SAVEPOINT] = "savepoint",	[OC_INFLIGHT] = "in-flight",
	[OC_STRAY] = "stray",		[OC_VIEW] = "view",
};

const char *obj_class_name(enum obj_class cls)
{
	if ((int)cls < 0 || cls >= OC_COUNT)
		return "?";
	return class_names[cls];
}

static void set(struct rule_result *out, int err, const char *rule,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void set(struct rule_result *out, int err, const char *rule,
		const char *fmt, ...)
{
	va_list ap;

	out->err = err;
	out->rule = rule;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
}

static int norm_state(int state)
{
	if (state < 0 || state >= JS_COUNT)
		return JS_UNKNOWN;
	return state;
}

/* "dead" for R1/R6: an end state or an orphan. */
static bool state_dead(int state)
{
	return job_state_is_end(state) || state == JS_ORPHAN;
}

/*
 * R5, R4, R3, R1 — shared by deletion and release.  True when one refused
 * (and *out says which).
 */
static bool job_rules(const struct rule_input *in, int state,
		      struct rule_result *out, const char *what)
{
	if (in->ro) {
		set(out, EROFS, "R5", "the mount is read-only (ro)");
		return true;
	}
	if (!in->caller_allowed) {
		set(out, EACCES, "R4",
		    "only root and members of delete_group may %s", what);
		return true;
	}
	if (in->engine_err) {
		int e = in->engine_err < 0 ? -in->engine_err : in->engine_err;
		const char *en = strerrorname_np(e);

		if (en)
			set(out, EAGAIN, "R3",
			    "the engine cannot be asked (%s)", en);
		else
			set(out, EAGAIN, "R3",
			    "the engine cannot be asked (error %d)", e);
		return true;
	}
	if (state == JS_UNKNOWN && in->young_orphan) {
		set(out, EBUSY, "R1",
		    "the engine knows no such job, but its newest object is "
		    "younger than orphan_grace");
		return true;
	}
	if (state == JS_UNKNOWN) {
		set(out, EAGAIN, "R3", "the engine did not tell the job state");
		return true;
	}
	if (!state_dead(state)) {
		set(out, EBUSY, "R1", "the job is %s, not in an end state",
		    job_state_name(state));
		return true;
	}
	return false;
}

void rules_decide(const struct rule_input *in, struct rule_result *out)
{
	int state = norm_state(in->state);
	enum obj_class cls = in->cls;

	if ((int)cls < 0 || cls >= OC_COUNT)
		cls = OC_RESTORE_POINT;
	if (job_rules(in, state, out, "delete"))
		return;
	if (cls == OC_INFLIGHT && !state_dead(state)) {
		set(out, EBUSY, "R6", "an in-flight .sertmp object of a %s job",
		    job_state_name(state));
		return;
	}
	/* the engine deletes a FINISHED job's directory; a CANCELED one's
	 * it may keep to restore it into a new job (README "Deleting") */
	if ((cls == OC_RESTORE_POINT || cls == OC_SAVEPOINT) &&
	    state != JS_FINISHED && !in->released) {
		set(out, EPERM, "R2",
		    "a %s of a %s job that was not released (echo release > restore)",
		    cls == OC_SAVEPOINT ? "savepoint" : "restore point",
		    job_state_name(state));
		return;
	}
	set(out, 0, "", "%s object of a %s job%s", obj_class_name(cls),
	    job_state_name(state), in->released ? " (released)" : "");
}

bool rules_type_matters(const struct rule_input *in)
{
	struct rule_input x = *in;
	struct rule_result a, b;

	x.cls = OC_SAVEPOINT;
	rules_decide(&x, &a);
	x.cls = OC_SUPERSEDED;
	rules_decide(&x, &b);
	return a.err != b.err || strcmp(a.rule, b.rule) != 0;
}

/* the rule order of README "Deleting safely": a lower rank decides */
static int rule_rank(const char *rule)
{
	static const char *const order[] = {"R5", "R4", "R3", "R1", "R6", "R2"};

	for (int i = 0; i < 6; i++)
		if (strcmp(rule, order[i]) == 0)
			return i;
	return 6;
}

void rules_decide_job(const struct rule_input *in, const size_t cnt[OC_COUNT],
		      struct rule_result res[OC_COUNT],
		      struct rule_result *verdict)
{
	struct rule_input x = *in;
	int best = 7;

	set(verdict, 0, "", "every object may go");
	for (int c = 0; c < OC_COUNT; c++) {
		x.cls = (enum obj_class)c;
		rules_decide(&x, &res[c]);
		if (!res[c].err || (!cnt[c] && c != OC_VIEW) ||
		    rule_rank(res[c].rule) >= best)
			continue;
		best = rule_rank(res[c].rule);
		*verdict = res[c];
		if (c != OC_VIEW && strcmp(res[c].rule, "R2") == 0)
			set(verdict, res[c].err, res[c].rule,
			    "%zu %s not released (echo release > restore)",
			    cnt[c],
			    c == OC_RESTORE_POINT ? "restore point(s)"
						  : "savepoint(s)");
	}
}

void rules_decide_release(const struct rule_input *in, struct rule_result *out)
{
	int state = norm_state(in->state);

	if (job_rules(in, state, out, "release"))
		return;
	set(out, 0, "", "the job is %s", job_state_name(state));
}

/* Resolve a group name (or an all-digit gid) to a gid; 0 or -errno. */
static int group_gid(const char *name, gid_t *gid)
{
	struct group gr, *res = NULL;
	size_t sz = 1024;
	char *mem = NULL;
	int rc;

	for (;;) {
		char *n = realloc(mem, sz);

		if (!n) {
			free(mem);
			return -ENOMEM;
		}
		mem = n;
		rc = getgrnam_r(name, &gr, mem, sz, &res);
		if (rc != ERANGE || sz >= (1u << 20))
			break;
		sz *= 2;
	}
	if (rc == 0 && res) {
		*gid = res->gr_gid;
		free(mem);
		return 0;
	}
	free(mem);
	if (rc && rc != ENOENT && rc != ESRCH)
		return -rc;
	if (name[0] >= '0' && name[0] <= '9' && strlen(name) <= 10) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(name, &end, 10);
		if (!errno && !*end && v >= 0 && v < (long long)(gid_t)-1) {
			*gid = (gid_t)v;
			return 0;
		}
	}
	return -ENOENT;
}

bool rules_caller_allowed(uid_t uid, gid_t gid, const gid_t *groups,
			  int ngroups, const char *delete_group)
{
	gid_t g = (gid_t)-1;

	if (uid == 0)
		return true;
	if (!delete_group || !*delete_group)
		return false;
	if (group_gid(delete_group, &g) < 0)
		return false;
	if (g == gid)
		return true;
	for (int i = 0; groups && i < ngroups; i++)
		if (groups[i] == g)
			return true;
	return false;
}

int rules_group_gid(const char *name, gid_t *gid)
{
	if (!name || !*name)
		return -ENOENT;
	return group_gid(name, gid);
}

void rules_decide_region(const struct region_input *in, struct rule_result *out)
{
	if (in->ro)
		set(out, EROFS, "W5", "the mount is read-only (ro)");
	else if (!in->caller_allowed)
		set(out, EACCES, "W4",
		    "only root and members of delete_group may delete");
	else if (in->load_fails)
		set(out, EPERM, "W1",
		    "the engine cannot load this map: keep everything");
	else if (in->holds_kept)
		set(out, EPERM, "W1", "holds records the engine reads back");
	else if (in->empty)
		set(out, EBUSY, "W2", "empty: a member appends here");
	else if (in->newest)
		set(out, EBUSY, "W2", "newest region: a member may append");
	else if (in->recent)
		set(out, EBUSY, "W2", "written within imap_grace");
	else if (in->engine == RE_UP)
		set(out, EBUSY, "W3",
		    "superseded, but the engine runs: a member may append");
	else if (in->engine != RE_STOPPED)
		set(out, EAGAIN, "W3",
		    "superseded, but the engine cannot be asked");
	else
		set(out, 0, "", "superseded and every member is stopped");
}
