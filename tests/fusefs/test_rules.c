/*
 * Unit tests for fusefs/policy/rules.c: the whole input space of rules_decide()
 * and rules_decide_release() against an expectation written here from
 * README "Deleting safely" (a hand-written per-state table, not
 * job_state_is_end()), spot checks of the precedence order, and
 * rules_caller_allowed() against the real group database.
 */
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backends/engine.h"
#include "policy/rules.h"

/* README "Deleting safely" and "The tree" (by-state), by hand. */
static const struct {
	int state;
	const char *name;
	bool dead;	 /* R1 passes: end state or orphan */
	bool no_restore; /* FINISHED: R2 does not apply (a CANCELED job's
			  * directory may be kept to restore it, 3.x) */
	bool unknown;	 /* R3 */
} states[] = {
	{JS_INITIALIZING, "INITIALIZING", false, false, false},
	{JS_CREATED, "CREATED", false, false, false},
	{JS_PENDING, "PENDING", false, false, false},
	{JS_SCHEDULED, "SCHEDULED", false, false, false},
	{JS_RUNNING, "RUNNING", false, false, false},
	{JS_FAILING, "FAILING", false, false, false},
	{JS_FAILED, "FAILED", true, false, false},
	{JS_DOING_SAVEPOINT, "DOING_SAVEPOINT", false, false, false},
	{JS_SAVEPOINT_DONE, "SAVEPOINT_DONE", true, false, false},
	{JS_CANCELING, "CANCELING", false, false, false},
	{JS_CANCELED, "CANCELED", true, false, false},
	{JS_FINISHED, "FINISHED", true, true, false},
	{JS_UNKNOWABLE, "UNKNOWABLE", true, false, false},
	{JS_ORPHAN, "ORPHAN", true, false, false},
	{JS_UNKNOWN, "UNKNOWN", false, false, true},
};
#define N_STATES (sizeof(states) / sizeof(states[0]))

struct expect {
	int err;
	const char *rule;
};

static struct expect expect_delete(size_t si, enum obj_class cls, bool released,
				   int engine_err, bool ro, bool allowed,
				   bool young)
{
	bool protected_cls = cls == OC_RESTORE_POINT || cls == OC_SAVEPOINT;

	if (ro)
		return (struct expect){EROFS, "R5"};
	if (!allowed)
		return (struct expect){EACCES, "R4"};
	if (engine_err)
		return (struct expect){EAGAIN, "R3"};
	/* the engine answered it knows no such job, storage is young */
	if (states[si].unknown && young)
		return (struct expect){EBUSY, "R1"};
	if (states[si].unknown)
		return (struct expect){EAGAIN, "R3"};
	if (!states[si].dead)
		return (struct expect){EBUSY, "R1"};
	/* R6 cannot fire here: a job that passed R1 is dead. */
	if (protected_cls && !states[si].no_restore && !released)
		return (struct expect){EPERM, "R2"};
	return (struct expect){0, ""};
}

static struct expect expect_release(size_t si, int engine_err, bool ro,
				    bool allowed, bool young)
{
	if (ro)
		return (struct expect){EROFS, "R5"};
	if (!allowed)
		return (struct expect){EACCES, "R4"};
	if (engine_err)
		return (struct expect){EAGAIN, "R3"};
	if (states[si].unknown && young)
		return (struct expect){EBUSY, "R1"};
	if (states[si].unknown)
		return (struct expect){EAGAIN, "R3"};
	if (!states[si].dead)
		return (struct expect){EBUSY, "R1"};
	return (struct expect){0, ""};
}

static void test_rules_state_table_matches_engine(void **st)
{
	(void)st;
	assert_int_equal(N_STATES, JS_COUNT);
	for (size_t i = 0; i < N_STATES; i++) {
		assert_int_equal(states[i].state, (int)i);
		assert_string_equal(job_state_name(states[i].state),
				    states[i].name);
	}
}

static void test_rules_decide_full_table(void **st)
{
	size_t n = 0, allowed_n = 0;

	(void)st;
	for (size_t si = 0; si < N_STATES; si++)
		for (int c = 0; c < OC_COUNT; c++)
			for (int bits = 0; bits < 32; bits++) {
				struct rule_input in = {
					.ro = bits & 1,
					.caller_allowed = bits & 2,
					.engine_err = (bits & 4) ? -EAGAIN : 0,
					.state = states[si].state,
					.released = bits & 8,
					.young_orphan = bits & 16,
					.cls = (enum obj_class)c,
				};
				struct rule_result r;
				struct expect e = expect_delete(
					si, in.cls, in.released, in.engine_err,
					in.ro, in.caller_allowed,
					in.young_orphan);

				memset(&r, 0x5a, sizeof(r));
				rules_decide(&in, &r);
				if (r.err != e.err || strcmp(r.rule, e.rule))
					fail_msg("state %s class %s ro=%d "
						 "allowed=%d eerr=%d rel=%d: "
						 "got %d %s, want %d %s",
						 states[si].name,
						 obj_class_name(in.cls), in.ro,
						 in.caller_allowed,
						 in.engine_err, in.released,
						 r.err, r.rule, e.err, e.rule);
				assert_non_null(
					memchr(r.reason, 0, sizeof(r.reason)));
				assert_null(strchr(r.reason, '\n'));
				assert_true(r.reason[0] != 0);
				n++;
				allowed_n += r.err == 0;
			}
	assert_int_equal(n, 15 * 6 * 32);
	/* allowed only with ro=0, caller=1, eerr=0 (released 0 or 1, young
	 * 0 or 1: it matters for UNKNOWN only) and a dead state (6 of them):
	 * FINISHED for all 6 classes either way, the other 5 dead states
	 * (CANCELED among them) for 4 classes unreleased and all 6
	 * released. */
	assert_int_equal(allowed_n, 2 * (2 * 6 + 5 * (4 + 6)));
}

static void test_rules_decide_release_full_table(void **st)
{
	(void)st;
	for (size_t si = 0; si < N_STATES; si++)
		for (int bits = 0; bits < 32; bits++) {
			struct rule_input in = {
				.ro = bits & 1,
				.caller_allowed = bits & 2,
				.engine_err = (bits & 4) ? -ETIMEDOUT : 0,
				.state = states[si].state,
				.released = bits & 8,
				.young_orphan = bits & 16,
				.cls = OC_RESTORE_POINT,
			};
			struct rule_result r;
			struct expect e = expect_release(
				si, in.engine_err, in.ro, in.caller_allowed,
				in.young_orphan);

			rules_decide_release(&in, &r);
			if (r.err != e.err || strcmp(r.rule, e.rule))
				fail_msg("release state %s bits %d: got %d %s, "
					 "want %d %s",
					 states[si].name, bits, r.err, r.rule,
					 e.err, e.rule);
		}
}

/* Everything refuses at once: each rule decides once the earlier pass. */
/* rules_type_matters() is true exactly where the savepoint/superseded
 * split changes the oracle's verdict (R2 binds): a dead state other than
 * FINISHED, not released, everything before R2 passing. */
static void test_rules_type_matters_full_table(void **st)
{
	size_t n_true = 0;

	(void)st;
	for (size_t si = 0; si < N_STATES; si++)
		for (int bits = 0; bits < 32; bits++) {
			struct rule_input in = {
				.ro = bits & 1,
				.caller_allowed = bits & 2,
				.engine_err = (bits & 4) ? -EIO : 0,
				.state = states[si].state,
				.released = bits & 8,
				.young_orphan = bits & 16,
			};
			bool want = !in.ro && in.caller_allowed &&
				    !in.engine_err && !in.released &&
				    states[si].dead && !states[si].no_restore;

			if (rules_type_matters(&in) != want)
				fail_msg("type_matters state %s bits %d: "
					 "want %d",
					 states[si].name, bits, want);
			n_true += want;
		}
	/* 5 dead states (FINISHED excluded) x young 0/1 */
	assert_int_equal(n_true, 5 * 2);
}

/* A CANCELED job's restore points and savepoints need a release (3.x
 * retain-after-job-cancelled); a young storage-only job the engine does
 * not know is R1 EBUSY for deletion and release. */
static void test_rules_canceled_and_young_orphan(void **st)
{
	struct rule_input in = {
		.caller_allowed = true,
		.state = JS_CANCELED,
		.cls = OC_RESTORE_POINT,
	};
	struct rule_result r;

	(void)st;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EPERM);
	assert_string_equal(r.rule, "R2");
	in.cls = OC_SAVEPOINT;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EPERM);
	in.released = true;
	rules_decide(&in, &r);
	assert_int_equal(r.err, 0);
	in.state = JS_UNKNOWN;
	in.young_orphan = true;
	in.cls = OC_SUPERSEDED;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EBUSY);
	assert_string_equal(r.rule, "R1");
	assert_non_null(strstr(r.reason, "orphan_grace"));
	rules_decide_release(&in, &r);
	assert_int_equal(r.err, EBUSY);
	assert_string_equal(r.rule, "R1");
	/* an engine that cannot be asked is still R3, young or not */
	in.engine_err = -ECONNREFUSED;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EAGAIN);
	assert_string_equal(r.rule, "R3");
}

static void test_rules_decide_precedence(void **st)
{
	struct rule_input in = {
		.ro = true,
		.caller_allowed = false,
		.engine_err = -EIO,
		.state = JS_RUNNING,
		.released = false,
		.cls = OC_INFLIGHT,
	};
	struct rule_result r;

	(void)st;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EROFS);
	assert_string_equal(r.rule, "R5");
	in.ro = false;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EACCES);
	assert_string_equal(r.rule, "R4");
	in.caller_allowed = true;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EAGAIN);
	assert_string_equal(r.rule, "R3");
	assert_non_null(strstr(r.reason, "EIO"));
	in.engine_err = 0;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EBUSY);
	assert_string_equal(r.rule, "R1");
	assert_non_null(strstr(r.reason, "RUNNING"));
	/* an in-flight object of a dead job: R6 allows, R2 n/a */
	in.state = JS_FAILED;
	rules_decide(&in, &r);
	assert_int_equal(r.err, 0);
	assert_string_equal(r.rule, "");
	in.cls = OC_RESTORE_POINT;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EPERM);
	assert_string_equal(r.rule, "R2");
	in.released = true;
	rules_decide(&in, &r);
	assert_int_equal(r.err, 0);
	/* an UNKNOWN state with a "fresh" answer is still R3 */
	in.state = JS_UNKNOWN;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EAGAIN);
	assert_string_equal(r.rule, "R3");
}

static void test_rules_decide_orphan_and_views(void **st)
{
	struct rule_input in = {
		.caller_allowed = true,
		.state = JS_ORPHAN,
	};
	struct rule_result r;

	(void)st;
	/* orphans count as dead, but their restore points need a release */
	in.cls = OC_INFLIGHT;
	rules_decide(&in, &r);
	assert_int_equal(r.err, 0);
	in.cls = OC_SAVEPOINT;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EPERM);
	assert_string_equal(r.rule, "R2");
	assert_non_null(strstr(r.reason, "savepoint"));
	in.cls = OC_STRAY;
	rules_decide(&in, &r);
	assert_int_equal(r.err, 0);
	/* a view of an unreleased dead job is allowed; of a live one not */
	in.cls = OC_VIEW;
	in.state = JS_SAVEPOINT_DONE;
	rules_decide(&in, &r);
	assert_int_equal(r.err, 0);
	in.state = JS_CANCELING;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EBUSY);
	assert_string_equal(r.rule, "R1");
}

static void test_rules_decide_out_of_range(void **st)
{
	struct rule_input in = {
		.caller_allowed = true,
		.state = 99,
		.cls = OC_SUPERSEDED,
	};
	struct rule_result r;

	(void)st;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EAGAIN);
	assert_string_equal(r.rule, "R3");
	in.state = -3;
	rules_decide_release(&in, &r);
	assert_int_equal(r.err, EAGAIN);
	/* a bad class is treated as the most protected one */
	in.state = JS_FAILED;
	in.cls = (enum obj_class)42;
	rules_decide(&in, &r);
	assert_int_equal(r.err, EPERM);
	assert_string_equal(r.rule, "R2");
	assert_string_equal(obj_class_name((enum obj_class)42), "?");
	assert_string_equal(obj_class_name(OC_INFLIGHT), "in-flight");
}

static void test_rules_caller_allowed_groups(void **st)
{
	gid_t g_daemon, g_root;
	struct group *gr;
	gid_t sup[3];

	(void)st;
	gr = getgrnam("daemon");
	assert_non_null(gr);
	g_daemon = gr->gr_gid;
	gr = getgrnam("root");
	assert_non_null(gr);
	g_root = gr->gr_gid;
	assert_int_not_equal(g_daemon, g_root);

	/* root always */
	assert_true(rules_caller_allowed(0, 12345, NULL, 0, NULL));
	assert_true(rules_caller_allowed(0, 12345, NULL, 0, "stfs-nosuch"));
	/* no delete_group: root only */
	assert_false(rules_caller_allowed(1000, g_daemon, NULL, 0, NULL));
	assert_false(rules_caller_allowed(1000, g_daemon, NULL, 0, ""));
	/* primary gid */
	assert_true(rules_caller_allowed(1000, g_daemon, NULL, 0, "daemon"));
	assert_false(rules_caller_allowed(1000, 54321, NULL, 0, "daemon"));
	/* supplementary groups */
	sup[0] = 54321;
	sup[1] = g_daemon;
	sup[2] = 777;
	assert_true(rules_caller_allowed(1000, 54321, sup, 3, "daemon"));
	assert_false(rules_caller_allowed(1000, 54321, sup, 1, "daemon"));
	assert_false(rules_caller_allowed(1000, 54321, sup, 0, "daemon"));
	/* group "root" for a non-root user in it */
	assert_true(rules_caller_allowed(1000, 54321, &g_root, 1, "root"));
	/* a nonexistent group name allows nobody but root */
	assert_false(rules_caller_allowed(1000, g_daemon, sup, 3,
					  "stfs-no-such-group-xyz"));
	/* a numeric gid when no group has that name */
	assert_true(rules_caller_allowed(1000, 54321, NULL, 0, "54321"));
	assert_false(rules_caller_allowed(1000, 54322, NULL, 0, "54321"));
	assert_false(rules_caller_allowed(1000, 54321, NULL, 0, "54321x"));
}

/* IMap regions: every combination of the facts.  Removal is allowed only
 * when nothing protects the region, and the errno is the first refusal in
 * the documented order W5 > W4 > W1 > W2 > W3. */
static void test_rules_decide_region_full_table(void **state)
{
	unsigned allowed = 0;

	(void)state;
	for (unsigned bits = 0; bits < 128; bits++) {
		for (int e = RE_UNKNOWN; e <= RE_STOPPED; e++) {
			struct region_input in = {
				.ro = bits & 1,
				.caller_allowed = bits & 2,
				.load_fails = bits & 4,
				.holds_kept = bits & 8,
				.empty = bits & 16,
				.newest = bits & 32,
				.recent = bits & 64,
				.engine = (enum region_engine)e,
			};
			struct rule_result r;
			int want;
			const char *rule;

			if (in.ro)
				want = EROFS, rule = "W5";
			else if (!in.caller_allowed)
				want = EACCES, rule = "W4";
			else if (in.load_fails || in.holds_kept)
				want = EPERM, rule = "W1";
			else if (in.empty || in.newest || in.recent)
				want = EBUSY, rule = "W2";
			else if (e == RE_UP)
				want = EBUSY, rule = "W3";
			else if (e == RE_UNKNOWN)
				want = EAGAIN, rule = "W3";
			else
				want = 0, rule = "";
			memset(&r, 0x55, sizeof(r));
			rules_decide_region(&in, &r);
			assert_int_equal(r.err, want);
			assert_string_equal(r.rule, rule);
			assert_true(strlen(r.reason) > 0);
			assert_null(strchr(r.reason, '\n'));
			if (r.err == 0) {
				/* the safety property, stated on its own */
				assert_true(!in.ro && in.caller_allowed &&
					    !in.load_fails && !in.holds_kept &&
					    !in.empty && !in.newest &&
					    !in.recent && e == RE_STOPPED);
				allowed++;
			}
		}
	}
	assert_int_equal(allowed, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_state_table_matches_engine),
		cmocka_unit_test(test_rules_decide_full_table),
		cmocka_unit_test(test_rules_decide_release_full_table),
		cmocka_unit_test(test_rules_type_matters_full_table),
		cmocka_unit_test(test_rules_canceled_and_young_orphan),
		cmocka_unit_test(test_rules_decide_precedence),
		cmocka_unit_test(test_rules_decide_orphan_and_views),
		cmocka_unit_test(test_rules_decide_out_of_range),
		cmocka_unit_test(test_rules_caller_allowed_groups),
		cmocka_unit_test(test_rules_decide_region_full_table),
	};

	return cmocka_run_group_tests_name("rules", tests, NULL, NULL);
}
