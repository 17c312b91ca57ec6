/*
 * test_delete — the deletion path (fusefs/policy/delete.c) over the in-memory
 * fake backend and the fake engine (tests/fakes/fake_engine.h: the engine's
 * /job-info answers scripted), with read errors injected into the fake
 * backend: unknown
 * checkpoint types are protected and never cached, the session's ghost does not
 * decide, a release covers only the run it released, each layout keeps its
 * restore point, CANCELED jobs are protected like FAILED ones, a young job the
 * engine does not know is R1, and `deletable` predicts what unlink does.
 * Every case checks the fake's raw object is really gone or still there.
 * Real protostuff bytes come from tests/fixtures/protostuff/ (cwd = repo
 * root).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "model/ckinfo.h"
#include "policy/delete.h"
#include "fakes/fake_backend.h"
#include "fakes/fake_engine.h"
#include "fakes/testutil.h"
#include "model/protostuff.h"
#include "policy/release.h"
#include "mount/mount.h"

#define FIX  "tests/fixtures/protostuff/"
#define JOB  "555"
#define OLD  ((int64_t)1600000000 * 1000000000) /* 2020: past any grace */
#define CKPT "555/1000-1-1-1.ser"		/* superseded checkpoint */
#define SP   "555/2000-2-1-2.ser"		/* real-layout savepoint */
#define RP   "555/3000-3-1-3.ser"		/* the restore point */

/* what the fake engine answers for JOB (pushed before every call) */
static struct {
	int rc; /* 0, -ENOENT, or another -errno */
	int state;
	int64_t finish_s;
} eng;

struct fx {
	struct stfs fs;
	struct backend *be;
	char dir[64];
	char *ckpt_bytes, *sp_bytes;
	size_t ckpt_len, sp_len;
};

static int setup(void **st)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(conf_init_defaults(&f->fs.conf), 0);
	free(f->fs.conf.state_dir);
	f->fs.conf.state_dir = NULL;
	f->fs.conf.decision_age_ms = 0; /* every call asks afresh */
	assert_int_equal(stfs_init(&f->fs), 0);
	assert_int_equal(fake_be_open(&f->be), 0);
	f->fs.ckpt = f->be;
	assert_int_equal(fake_engine_new(&f->fs.engine), 0);
	snprintf(f->dir, sizeof(f->dir), "/tmp/stfs-tdel-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(release_open(f->dir, "fake://", &f->fs.rel), 0);
	assert_int_equal(tu_load(FIX, "pipeline_state_checkpoint.ser",
				 &f->ckpt_bytes, &f->ckpt_len),
			 0);
	assert_int_equal(tu_load(FIX, "pipeline_state_savepoint.ser",
				 &f->sp_bytes, &f->sp_len),
			 0);
	/* job 555, pipeline 1: checkpoint 1, savepoint 2, restore point 3 */
	assert_int_equal(
		fake_be_add(f->be, CKPT, f->ckpt_bytes, f->ckpt_len, OLD), 0);
	assert_int_equal(fake_be_add(f->be, SP, f->sp_bytes, f->sp_len, OLD),
			 0);
	assert_int_equal(
		fake_be_add(f->be, RP, f->ckpt_bytes, f->ckpt_len, OLD + 1), 0);
	eng.rc = 0;
	eng.state = JS_FAILED;
	eng.finish_s = 1600000100;
	*st = f;
	return 0;
}

static int teardown(void **st)
{
	struct fx *f = *st;
	char cmd[128];

	stfs_release(&f->fs);
	conf_release(&f->fs.conf);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f->ckpt_bytes);
	free(f->sp_bytes);
	free(f);
	return 0;
}

static const struct caller root = {.uid = 0, .pid = 1};

/* script JOB's /job-info answer from `eng` */
static void push(struct fx *f)
{
	assert_int_equal(fake_engine_set_info(f->fs.engine, JOB, eng.rc,
					      eng.state, eng.finish_s),
			 0);
}

/*
 * decision_age=0 still reuses a decision made within the same millisecond:
 * every call below waits 2 ms first, so each decides on a fresh answer.
 */
static int assess(struct fx *f, struct delete_assessment *a)
{
	tu_sleep_ms(2);
	push(f);
	return delete_assess(&f->fs, JOB, true, a);
}

static int release(struct fx *f, bool rel)
{
	tu_sleep_ms(2);
	push(f);
	return delete_release(&f->fs, &root, "/jobs/" JOB, rel);
}

static int unlink_path(struct fx *f, const char *path)
{
	tu_sleep_ms(2);
	push(f);
	return delete_unlink(&f->fs, &root, path);
}

static int rmdir_path(struct fx *f, const char *path)
{
	tu_sleep_ms(2);
	push(f);
	return delete_rmdir(&f->fs, &root, path);
}

static int rm(struct fx *f, const char *key)
{
	char path[256];
	const char *name = strrchr(key, '/') + 1;
	struct real_name rn;

	if (layout_parse_real(name, &rn) == 0)
		snprintf(path, sizeof(path),
			 "/jobs/" JOB "/pipelines/%d/checkpoints/%lld/%s",
			 (int)rn.pipeline_id, (long long)rn.checkpoint_id,
			 name);
	else
		snprintf(path, sizeof(path), "/jobs/" JOB "/%s", key + 4);
	return unlink_path(f, path);
}

static const struct cat_obj *find_obj(const struct catalog *c, const char *key)
{
	for (size_t i = 0; i < c->n_objs; i++)
		if (strcmp(c->objs[i].key, key) == 0)
			return &c->objs[i];
	return NULL;
}

/* A1: a read error while the savepoint's header is read must not make it
 * deletable, and must not stick once the store answers again. */
static void test_unknown_type_is_protected_and_not_cached(void **st)
{
	struct fx *f = *st;
	struct delete_assessment a;
	struct catalog *c;

	assert_int_equal(fake_be_fail(f->be, FAKE_READ, SP, -EIO), 0);
	assert_int_equal(rm(f, SP), -EPERM);
	assert_true(fake_be_has(f->be, SP));
	assert_int_equal(assess(f, &a), 0);
	assert_int_equal(a.res[OC_SAVEPOINT].err, EPERM);
	assert_int_equal(a.cnt[OC_SAVEPOINT], 1);
	assert_int_equal(a.cnt[OC_SUPERSEDED], 1);
	/* the superseded checkpoint beside it still goes */
	assert_int_equal(rm(f, CKPT), 0);
	assert_false(fake_be_has(f->be, CKPT));
	/* the store recovers: the type is read again, not a cached unknown */
	fake_be_clear_faults(f->be);
	assert_int_equal(catalog_build_job(f->be, JOB, &c), 0);
	assert_int_equal(ckinfo_type(&f->fs, find_obj(c, SP)), CKPT_SAVEPOINT);
	catalog_put(c);
	assert_int_equal(rm(f, SP), -EPERM);
	assert_true(fake_be_has(f->be, SP));
}

/* A1: undecodable bytes are unknown too: protected while R2 binds, and
 * they go once the job is released. */
static void test_undecodable_is_protected(void **st)
{
	struct fx *f = *st;

	assert_int_equal(fake_be_add_str(f->be, "555/1500-9-1-1.ser",
					 "not protostuff", OLD),
			 0);
	assert_int_equal(rm(f, "555/1500-9-1-1.ser"), -EPERM);
	assert_true(fake_be_has(f->be, "555/1500-9-1-1.ser"));
	assert_int_equal(release(f, true), 0);
	assert_int_equal(rm(f, "555/1500-9-1-1.ser"), 0);
	assert_false(fake_be_has(f->be, "555/1500-9-1-1.ser"));
}

/* CANCELED (3.x retain-after-job-cancelled) is protected like FAILED. */
static void test_canceled_is_protected(void **st)
{
	struct fx *f = *st;

	eng.state = JS_CANCELED;
	assert_int_equal(rm(f, RP), -EPERM);
	assert_int_equal(rm(f, SP), -EPERM);
	assert_int_equal(rm(f, CKPT), 0);
	assert_true(fake_be_has(f->be, RP));
	assert_true(fake_be_has(f->be, SP));
	assert_false(fake_be_has(f->be, CKPT));
	eng.state = JS_FINISHED;
	assert_int_equal(rm(f, RP), 0);
	assert_false(fake_be_has(f->be, RP));
}

/* A storage-only job younger than orphan_grace that the engine says it
 * does not know: R1 EBUSY (not R3: the engine did answer). */
static void test_young_unknown_job_is_r1(void **st)
{
	struct fx *f = *st;
	struct delete_assessment a;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	assert_int_equal(fake_be_add(f->be, "555/4000-4-1-4.sertmp", "x", 1,
				     (int64_t)ts.tv_sec * 1000000000),
			 0);
	eng.rc = -ENOENT;
	assert_int_equal(rm(f, CKPT), -EBUSY);
	assert_true(fake_be_has(f->be, CKPT));
	assert_int_equal(assess(f, &a), 0);
	assert_int_equal(a.verdict.err, EBUSY);
	assert_string_equal(a.verdict.rule, "R1");
	assert_int_equal(release(f, true), -EBUSY);
	/* the engine cannot be asked: R3 */
	eng.rc = -ETIMEDOUT;
	assert_int_equal(rm(f, CKPT), -EAGAIN);
	assert_true(fake_be_has(f->be, CKPT));
}

/* A2: release, rm the restore point, protect: the next restore point (in
 * the fresh listing) is protected, whatever the session's ghost says. */
static void test_ghost_does_not_decide(void **st)
{
	struct fx *f = *st;
	char path[128];

	/* a checkpoint between SP and RP: superseded while RP is there */
	assert_int_equal(fake_be_add(f->be, "555/2500-7-1-4.ser", f->ckpt_bytes,
				     f->ckpt_len, OLD),
			 0);
	assert_int_equal(release(f, true), 0);
	assert_int_equal(rm(f, RP), 0);
	assert_false(fake_be_has(f->be, RP));
	assert_int_equal(release(f, false), 0);
	/* 2500 is now the newest object: the restore point that `restore`
	 * and `latest` name (the ghost still calls it superseded) */
	assert_int_equal(rm(f, "555/2500-7-1-4.ser"), -EPERM);
	assert_true(fake_be_has(f->be, "555/2500-7-1-4.ser"));
	assert_int_equal(rm(f, SP), -EPERM);
	assert_true(fake_be_has(f->be, SP));
	/* a file created after the session began is decided, not ENOENT */
	assert_int_equal(fake_be_add(f->be, "555/500-5-2-9.ser", f->ckpt_bytes,
				     f->ckpt_len, OLD),
			 0);
	assert_int_equal(rm(f, "555/500-5-2-9.ser"), -EPERM); /* pipeline 2's
								 restore */
	/* emptied directories stay resolvable for rmdir within the session */
	assert_int_equal(rm(f, CKPT), 0);
	snprintf(path, sizeof(path), "/jobs/" JOB "/pipelines/1/checkpoints/1");
	assert_int_equal(rmdir_path(f, path), 0);
	snprintf(path, sizeof(path), "/jobs/" JOB "/pipelines/1/checkpoints/3");
	assert_int_equal(rmdir_path(f, path), 0);
	snprintf(path, sizeof(path), "/jobs/" JOB "/pipelines/1/checkpoints/2");
	assert_int_equal(rmdir_path(f, path), -ENOTEMPTY);
}

/* A3: a release covers the run it released; a newer object or a later
 * finish (resumed, failed again, unseen by stfs) voids it. */
static void test_release_voided_by_newer_run(void **st)
{
	struct fx *f = *st;

	assert_int_equal(release(f, true), 0);
	assert_true(release_is_released(f->fs.rel, JOB));
	/* the engine resumed it: a new checkpoint, then it failed again */
	assert_int_equal(fake_be_add(f->be, "555/5000-5-1-5.ser", f->ckpt_bytes,
				     f->ckpt_len, OLD + 1000000000),
			 0);
	eng.finish_s += 3600;
	assert_int_equal(rm(f, "555/5000-5-1-5.ser"), -EPERM);
	assert_true(fake_be_has(f->be, "555/5000-5-1-5.ser"));
	assert_false(release_is_released(f->fs.rel, JOB));
	/* a later finish alone voids it too */
	assert_int_equal(release(f, true), 0);
	assert_int_equal(rm(f, CKPT), 0);
	eng.finish_s += 60;
	assert_int_equal(rm(f, "555/5000-5-1-5.ser"), -EPERM);
	assert_true(fake_be_has(f->be, "555/5000-5-1-5.ser"));
	/* released again, the new run goes */
	assert_int_equal(release(f, true), 0);
	assert_int_equal(rm(f, "555/5000-5-1-5.ser"), 0);
	assert_false(fake_be_has(f->be, "555/5000-5-1-5.ser"));
}

/* A5: a real-layout object does not take R2 away from the documented
 * layout's restore point in the same pipeline. */
static void test_mixed_layouts_protect_both(void **st)
{
	struct fx *f = *st;

	assert_int_equal(
		fake_be_add_str(f->be, "555/1/7/task-0/state-data", "old", OLD),
		0);
	assert_int_equal(
		fake_be_add_str(f->be, "555/1/8/task-0/state-data", "new", OLD),
		0);
	assert_int_equal(
		unlink_path(f, "/jobs/" JOB
			       "/pipelines/1/checkpoints/8/task-0/state-data"),
		-EPERM);
	assert_true(fake_be_has(f->be, "555/1/8/task-0/state-data"));
	assert_int_equal(
		unlink_path(f, "/jobs/" JOB
			       "/pipelines/1/checkpoints/7/task-0/state-data"),
		0);
	assert_false(fake_be_has(f->be, "555/1/7/task-0/state-data"));
	assert_int_equal(rm(f, RP), -EPERM);
	assert_true(fake_be_has(f->be, RP));
}

/* A6: the prediction is computed from the decision's own inputs. */
static void test_assess_matches_unlink(void **st)
{
	struct fx *f = *st;
	static const int states[] = {JS_RUNNING, JS_FAILED, JS_CANCELED,
				     JS_FINISHED};
	static const char *const keys[] = {CKPT, SP, RP};
	static const enum obj_class cls[] = {OC_SUPERSEDED, OC_SAVEPOINT,
					     OC_RESTORE_POINT};

	for (size_t s = 0; s < sizeof(states) / sizeof(*states); s++) {
		struct delete_assessment a;

		eng.state = states[s];
		for (int e = 0; e < 2; e++) {
			eng.rc = e ? -EIO : 0;
			assert_int_equal(assess(f, &a), 0);
			for (size_t k = 0; k < 3; k++) {
				int want = a.res[cls[k]].err;
				int got = rm(f, keys[k]);

				if (got != -want)
					fail_msg("state %d eng %d %s: "
						 "predicted %d, rm %d",
						 states[s], e, keys[k], want,
						 got);
				assert_int_equal(fake_be_has(f->be, keys[k]),
						 want != 0);
				if (!want)
					assert_int_equal(
						fake_be_add(
							f->be, keys[k],
							k == 1 ? f->sp_bytes
							       : f->ckpt_bytes,
							k == 1 ? f->sp_len
							       : f->ckpt_len,
							OLD + (k == 2)),
						0);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_unknown_type_is_protected_and_not_cached, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_undecodable_is_protected,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_canceled_is_protected,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_young_unknown_job_is_r1,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_ghost_does_not_decide,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_release_voided_by_newer_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_layouts_protect_both,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_assess_matches_unlink,
						setup, teardown),
	};

	return cmocka_run_group_tests_name("delete", tests, NULL, NULL);
}
