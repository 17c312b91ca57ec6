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
#include "policy/audit.h"
#include "policy/release.h"
#include "policy/rules.h"
#include "view/tree.h"
#include "mount/mount.h"
#include "view/tree.h"

#define FIX	  "tests/fixtures/protostuff/"
#define JOB	  "555"
#define OLD	  ((int64_t)1600000000 * 1000000000) /* 2020: past any grace */
#define CKPT	  "555/1000-1-1-1.ser"		     /* superseded checkpoint */
#define SP	  "555/2000-2-1-2.ser"		     /* real-layout savepoint */
#define RP	  "555/3000-3-1-3.ser"		     /* the restore point */
#define CKPT_PATH "/jobs/" JOB "/pipelines/1/checkpoints/1/1000-1-1-1.ser"
#define SP_PATH	  "/jobs/" JOB "/pipelines/1/checkpoints/2/2000-2-1-2.ser"

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
	assert_int_equal(delete_attach(&f->fs), 0);
	delete_set_resolver(&f->fs, tree_delete_node);
	assert_int_equal(fake_be_open(&f->be), 0);
	f->fs.ckpt = f->be;
	assert_int_equal(fake_engine_new(&f->fs.engine), 0);
	assert_int_equal(audit_open(NULL, 1 << 16, &f->fs.audit), 0);
	audit_set_syslog(f->fs.audit, false);
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

	tu_mount_free(&f->fs);
	assert_int_equal(tu_rmtree(f->dir), 0);
	free(f->ckpt_bytes);
	free(f->sp_bytes);
	free(f);
	return 0;
}

static const struct caller root = {.uid = 0, .pid = 1};
static const struct caller user = {.uid = 4242, .gid = 4242, .pid = 1};

/* script JOB's /job-info answer from `eng` */
static void push(struct fx *f)
{
	if (!f->fs.engine)
		return; /* no engine at all */
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

static int unlink_as(struct fx *f, const struct caller *c, const char *path)
{
	tu_sleep_ms(2);
	push(f);
	return delete_unlink(&f->fs, c, path);
}

static int unlink_path(struct fx *f, const char *path)
{
	return unlink_as(f, &root, path);
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
	return catalog_find_key(c, key);
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
	assert_int_equal(
		ckinfo_type(f->fs.ck, STFS_CK_SRC(&f->fs), find_obj(c, SP)),
		CKPT_SAVEPOINT);
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

/* ---- helpers of the cases below */

#define DOC_SP	    "savepoint/555/1700/1/task-0/state-data" /* documented */
#define TMP	    "555/4000-4-1-4.sertmp"		     /* in flight */
#define STRAY	    "555/readme.txt"
#define DOC_SP_PATH "/jobs/" JOB "/savepoints/1700/1/task-0/state-data"

/* how many objects job 555 has in the fake store */
static size_t job_objects(struct fx *f)
{
	static const char *const keys[] = {CKPT, SP, RP, DOC_SP, TMP, STRAY};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		n += fake_be_has(f->be, keys[i]);
	return n;
}

/* the audit ring holds a record with every one of the key=value pairs */
static bool audited(struct fx *f, const char *a, const char *b)
{
	struct buf out;
	bool found = false;
	char *line, *save = NULL;

	buf_init(&out, BUF_DEFAULT_MAX);
	assert_int_equal(audit_snapshot(f->fs.audit, &out), 0);
	for (line = strtok_r(out.data, "\n", &save); line && !found;
	     line = strtok_r(NULL, "\n", &save))
		found = strstr(line, a) && (!b || strstr(line, b));
	buf_release(&out);
	return found;
}

/* of a dead unreleased job, what R2 protects is left, and only that */
static void only_protected_left(struct fx *f)
{
	assert_false(fake_be_has(f->be, CKPT));
	assert_false(fake_be_has(f->be, TMP));
	assert_false(fake_be_has(f->be, STRAY));
	assert_true(fake_be_has(f->be, RP));
	assert_true(fake_be_has(f->be, SP));
	assert_true(fake_be_has(f->be, DOC_SP));
}

/* the savepoint and the superseded checkpoint back, where removed */
static void put_back(struct fx *f)
{
	if (!fake_be_has(f->be, SP))
		assert_int_equal(
			fake_be_add(f->be, SP, f->sp_bytes, f->sp_len, OLD), 0);
	if (!fake_be_has(f->be, CKPT))
		assert_int_equal(fake_be_add(f->be, CKPT, f->ckpt_bytes,
					     f->ckpt_len, OLD),
				 0);
}

static void add_extra(struct fx *f)
{
	assert_int_equal(fake_be_add_str(f->be, DOC_SP, "sp", OLD), 0);
	assert_int_equal(fake_be_add_str(f->be, TMP, "tmp", OLD), 0);
	assert_int_equal(fake_be_add_str(f->be, STRAY, "?", OLD), 0);
}

/*
 * `rm -r /jobs/555` as rm walks it: list a directory, unlink its files,
 * descend into its directories, then rmdir it.  Paths resolve as the FUSE
 * layer resolves them (fusefs/ops.c): against the current catalog, and
 * while a session is recent against its ghost for emptied directories.
 * Counts the calls that failed in *fails; returns the first errno.
 */
struct walk {
	char names[64][256];
	bool dir[64];
	size_t n;
};

static int walk_fill(void *cookie, const char *name, const struct stat *st)
{
	struct walk *w = cookie;

	if (w->n < 64) {
		snprintf(w->names[w->n], sizeof(w->names[0]), "%s", name);
		w->dir[w->n++] = S_ISDIR(st->st_mode);
	}
	return 0;
}

static int resolve_like_ops(struct view *v, const char *path, struct node *n)
{
	int rc = tree_resolve(v, path, n);
	struct catalog *g;

	if (rc == -ENOENT && (g = delete_ghost(v->fs, path))) {
		catalog_put(v->cat);
		v->cat = g;
		rc = tree_resolve(v, path, n);
		if (rc == 0 && n->kind == ND_OBJ &&
		    delete_is_removed(v->fs, n->obj->key))
			rc = -ENOENT;
	}
	return rc;
}

static int rm_r(struct fx *f, const char *path, int *fails)
{
	struct view v;
	struct node *n = calloc(1, sizeof(*n));
	struct walk *w = calloc(1, sizeof(*w));
	int first = 0, rc;

	assert_non_null(n);
	assert_non_null(w);
	view_open(&f->fs, &v);
	rc = resolve_like_ops(&v, path, n);
	if (rc == 0)
		rc = tree_list(&v, path, n, walk_fill, w);
	view_close(&v);
	if (rc)
		goto out;
	for (size_t i = 0; i < w->n; i++) {
		char child[1024];
		int r;

		snprintf(child, sizeof(child), "%s/%s", path, w->names[i]);
		if (w->dir[i]) {
			r = rm_r(f, child, fails);
		} else {
			r = unlink_path(f, child);
			*fails += r != 0;
		}
		if (r && !first)
			first = r;
	}
	rc = rmdir_path(f, path);
	*fails += rc != 0;
out:
	free(n);
	free(w);
	return first ? first : rc;
}

/* ---- R1-R6 and their order */

/* Each rule in the contract's order R5 > R4 > R3 > R1 > R6 > R2: with all
 * of them refusing, lift them one by one; the errno and the audited rule
 * are those of the first that still refuses, and nothing goes until all
 * allow. */
static void test_rule_order(void **st)
{
	struct fx *f = *st;
	struct delete_assessment a;
	size_t before;

	add_extra(f);
	before = job_objects(f);
	f->fs.conf.ro = true;
	eng.state = JS_RUNNING;
	fake_engine_fail(f->fs.engine, FENG_JOB_INFO, -EAGAIN);
	assert_int_equal(unlink_as(f, &user, CKPT_PATH), -EROFS);
	assert_true(audited(f, "rule=R5", "errno=EROFS"));
	f->fs.conf.ro = false;
	assert_int_equal(unlink_as(f, &user, CKPT_PATH), -EACCES);
	assert_true(audited(f, "rule=R4", "errno=EACCES"));
	assert_int_equal(fake_engine_calls(f->fs.engine, FENG_JOB_INFO), 0);
	assert_int_equal(rm(f, CKPT), -EAGAIN); /* R3: root, engine down */
	assert_true(audited(f, "rule=R3", "errno=EAGAIN"));
	assert_true(fake_engine_calls(f->fs.engine, FENG_JOB_INFO) > 0);
	assert_int_equal(assess(f, &a), 0);
	assert_string_equal(a.verdict.rule, "R3");
	fake_engine_fail(f->fs.engine, FENG_JOB_INFO, 0);
	assert_int_equal(rm(f, CKPT), -EBUSY); /* R1: RUNNING */
	assert_true(audited(f, "rule=R1", "state=RUNNING"));
	/* R6 is shadowed by R1 for a live job: its .sertmp is R1 too */
	assert_int_equal(rm(f, TMP), -EBUSY);
	assert_int_equal(assess(f, &a), 0);
	assert_string_equal(a.verdict.rule, "R1");
	assert_string_equal(a.res[OC_INFLIGHT].rule, "R1");
	assert_int_equal(job_objects(f), before); /* nothing went */
	/* dead, unreleased: R2 on the restore point and the savepoints */
	eng.state = JS_FAILED;
	assert_int_equal(rm(f, RP), -EPERM);
	assert_true(audited(f, "rule=R2", "errno=EPERM"));
	assert_int_equal(unlink_path(f, DOC_SP_PATH), -EPERM);
	assert_int_equal(job_objects(f), before);
	assert_int_equal(assess(f, &a), 0);
	assert_int_equal(a.verdict.err, EPERM);
	assert_string_equal(a.verdict.rule, "R2");
	/* the rest may go: superseded, in flight of a dead job, stray */
	assert_int_equal(rm(f, CKPT), 0);
	assert_int_equal(rm(f, TMP), 0);
	assert_int_equal(unlink_path(f, "/jobs/" JOB "/other/readme.txt"), 0);
	only_protected_left(f);
	assert_true(audited(f, "outcome=allowed", "object=555/1000-1-1-1.ser"));
	/* release obeys R5, R4, R3, R1 in the same order */
	f->fs.conf.ro = true;
	assert_int_equal(release(f, true), -EROFS);
	f->fs.conf.ro = false;
	tu_sleep_ms(2);
	assert_int_equal(
		delete_release(&f->fs, &user, "/jobs/" JOB "/restore", true),
		-EACCES);
	eng.state = JS_RUNNING;
	assert_int_equal(release(f, true), -EBUSY);
	assert_false(release_is_released(f->fs.rel, JOB));
}

/* R6: an in-flight .sertmp goes once the job is dead (an orphan too). */
static void test_inflight_of_dead_job(void **st)
{
	struct fx *f = *st;

	add_extra(f);
	eng.state = JS_CANCELED;
	assert_int_equal(rm(f, TMP), 0);
	assert_false(fake_be_has(f->be, TMP));
	assert_int_equal(fake_be_add_str(f->be, TMP, "tmp", OLD), 0);
	eng.rc = -ENOENT; /* an old orphan */
	assert_int_equal(rm(f, TMP), 0);
	assert_false(fake_be_has(f->be, TMP));
}

/* ---- the engine down: EAGAIN and nothing deleted */

static void test_engine_down_deletes_nothing(void **st)
{
	struct fx *f = *st;
	static const int errs[] = {-EAGAIN, -ETIMEDOUT, -EIO, -EPROTO};
	struct delete_assessment a;
	size_t before;
	int fails;

	add_extra(f);
	before = job_objects(f);
	assert_int_equal(release(f, true), 0); /* even released */
	for (size_t e = 0; e < sizeof(errs) / sizeof(*errs); e++) {
		eng.rc = errs[e];
		assert_int_equal(rm(f, CKPT), -EAGAIN);
		assert_int_equal(rm(f, RP), -EAGAIN);
		assert_int_equal(rm(f, SP), -EAGAIN);
		assert_int_equal(rm(f, TMP), -EAGAIN);
		fails = 0;
		assert_int_equal(rm_r(f, "/jobs/" JOB, &fails), -EAGAIN);
		assert_true(fails > 5);
		assert_int_equal(job_objects(f), before);
		assert_int_equal(assess(f, &a), 0);
		assert_int_equal(a.verdict.err, EAGAIN);
		assert_string_equal(a.verdict.rule, "R3");
		/* releasing needs an answer; protecting is always safe */
		assert_int_equal(release(f, true), -EAGAIN);
	}
	assert_int_equal(release(f, false), 0);
	assert_false(release_is_released(f->fs.rel, JOB));
	/* failures injected into the engine itself, not its answer */
	eng.rc = 0;
	fake_engine_clear_info(f->fs.engine);
	fake_engine_fail(f->fs.engine, FENG_JOB_INFO, -ETIMEDOUT);
	assert_int_equal(unlink_as(f, &root, CKPT_PATH), -EAGAIN);
	/* no engine at all */
	engine_free(f->fs.engine);
	f->fs.engine = NULL;
	assert_int_equal(unlink_as(f, &root, CKPT_PATH), -EAGAIN);
	assert_int_equal(job_objects(f), before);
}

/* The job's storage cannot be listed: R3, nothing deleted, and
 * `deletable` says so. */
static void test_storage_down_deletes_nothing(void **st)
{
	struct fx *f = *st;
	struct delete_assessment a;

	assert_int_equal(fake_be_fail(f->be, FAKE_LIST, NULL, -EIO), 0);
	assert_int_equal(rm(f, CKPT), -EAGAIN);
	assert_true(audited(f, "rule=R3", "op=unlink"));
	assert_int_equal(release(f, true), -EAGAIN);
	assert_int_equal(assess(f, &a), -EIO);
	assert_int_equal(a.verdict.err, EAGAIN);
	assert_string_equal(a.verdict.rule, "R3");
	assert_non_null(strstr(a.verdict.reason, "cannot be listed"));
	fake_be_clear_faults(f->be);
	assert_true(fake_be_has(f->be, CKPT));
	assert_int_equal(fake_be_count(f->be), 3);
}

/* ---- sessions of rm -r */

/* A released FAILED job: rm -r removes every object (real layout,
 * documented savepoint, in flight, stray), unlinks the pseudo-files as
 * views, rmdirs every emptied directory and exits 0. */
static void test_rm_r_released_job(void **st)
{
	struct fx *f = *st;
	int fails = 0;

	add_extra(f);
	assert_int_equal(release(f, true), 0);
	assert_int_equal(rm_r(f, "/jobs/" JOB, &fails), 0);
	assert_int_equal(fails, 0);
	assert_int_equal(job_objects(f), 0);
	assert_int_equal(fake_be_count(f->be), 0);
	assert_true(fake_be_calls(f->be, FAKE_RMDIR) > 0); /* pruned */
	assert_true(audited(f, "op=rmdir", "path=/jobs/555 "));
}

/* rm -r of an unreleased FAILED job: the superseded and stray objects go,
 * the restore point and the savepoints stay (EPERM), their directories are
 * not empty; released afterwards, a second rm -r takes the rest. */
static void test_rm_r_unreleased_then_released(void **st)
{
	struct fx *f = *st;
	int fails = 0;

	add_extra(f);
	assert_int_equal(rm_r(f, "/jobs/" JOB, &fails), -EPERM);
	assert_true(fails > 0);
	only_protected_left(f);
	assert_int_equal(rmdir_path(f, "/jobs/" JOB), -ENOTEMPTY);
	assert_int_equal(rmdir_path(f, "/jobs/" JOB "/savepoints"), -ENOTEMPTY);
	assert_int_equal(rmdir_path(f, "/jobs/" JOB "/pipelines/1"),
			 -ENOTEMPTY);
	assert_true(audited(f, "outcome=refused", "errno=ENOTEMPTY"));
	assert_int_equal(release(f, true), 0);
	fails = 0;
	assert_int_equal(rm_r(f, "/jobs/" JOB, &fails), 0);
	assert_int_equal(fails, 0);
	assert_int_equal(fake_be_count(f->be), 0);
}

/* A CANCELED job the engine no longer knows (an old orphan) needs a
 * release too: R2 names every dead state but FINISHED. */
static void test_rm_r_orphan(void **st)
{
	struct fx *f = *st;
	struct delete_assessment a;
	int fails = 0;

	eng.rc = -ENOENT;
	assert_int_equal(assess(f, &a), 0);
	assert_int_equal(a.state, JS_ORPHAN);
	assert_int_equal(rm_r(f, "/jobs/" JOB, &fails), -EPERM);
	assert_true(fake_be_has(f->be, RP));
	assert_true(fake_be_has(f->be, SP));
	assert_false(fake_be_has(f->be, CKPT));
	assert_int_equal(release(f, true), 0);
	assert_int_equal(rm_r(f, "/jobs/" JOB, &fails), 0);
	assert_int_equal(fake_be_count(f->be), 0);
}

/* Unlink and rmdir of the wrong kind of node, outside /jobs, twice. */
static void test_unlink_rmdir_edges(void **st)
{
	struct fx *f = *st;

	eng.state = JS_FINISHED;
	assert_int_equal(unlink_path(f, "/jobs/" JOB "/pipelines"), -EISDIR);
	assert_int_equal(rmdir_path(f, "/jobs/" JOB "/status"), -ENOTDIR);
	assert_int_equal(unlink_path(f, "/stfs/stats"), -EROFS);
	assert_int_equal(unlink_path(f, "/jobs/x1"), -EROFS);
	assert_int_equal(unlink_path(f, "/jobs/" JOB "/nope"), -ENOENT);
	assert_int_equal(
		rmdir_path(f, "/jobs/" JOB "/pipelines/1/checkpoints/1"),
		-ENOTEMPTY);
	/* a store that fails the remove: the errno, the object stays */
	assert_int_equal(fake_be_fail(f->be, FAKE_REMOVE, CKPT, -EIO), 0);
	assert_int_equal(rm(f, CKPT), -EIO);
	assert_true(fake_be_has(f->be, CKPT));
	assert_true(audited(f, "errno=EIO", "object=555/1000-1-1-1.ser"));
	/* gone from the store meanwhile: what rm wanted */
	assert_int_equal(fake_be_fail(f->be, FAKE_REMOVE, CKPT, -ENOENT), 0);
	assert_int_equal(rm(f, CKPT), 0);
	fake_be_clear_faults(f->be);
	assert_int_equal(rm(f, RP), 0);
	/* removed in this session: a second unlink is ENOENT */
	assert_int_equal(rm(f, RP), -ENOENT);
	assert_false(fake_be_has(f->be, RP));
	/* no release store: the control is read-only */
	release_close(f->fs.rel);
	f->fs.rel = NULL;
	assert_int_equal(release(f, true), -EROFS);
}

/* ---- voiding of releases */

static void test_release_voided_when_seen_running(void **st)
{
	struct fx *f = *st;
	int64_t t;

	assert_int_equal(release(f, true), 0);
	assert_true(release_is_released(f->fs.rel, JOB));
	/* an answer older than the release says nothing about it */
	t = release_time_ms(f->fs.rel, JOB);
	delete_void_release(&f->fs, JOB, JS_RUNNING, t - 1000);
	assert_true(release_is_released(f->fs.rel, JOB));
	/* the engine restored the job (-r): the fresh answer voids it */
	eng.state = JS_RUNNING;
	assert_int_equal(rm(f, RP), -EBUSY);
	assert_false(release_is_released(f->fs.rel, JOB));
	assert_true(audited(f, "op=void", "rule=R2"));
	/* it failed again: protected, though it had been released */
	eng.state = JS_FAILED;
	assert_int_equal(rm(f, RP), -EPERM);
	assert_int_equal(rm(f, SP), -EPERM);
	assert_true(fake_be_has(f->be, RP));
	assert_true(fake_be_has(f->be, SP));
	/* the same through delete_void_release with a newer answer */
	assert_int_equal(release(f, true), 0);
	delete_void_release(&f->fs, JOB, JS_RUNNING, now_ms() + 1000);
	assert_false(release_is_released(f->fs.rel, JOB));
	assert_int_equal(rm(f, RP), -EPERM);
	assert_true(fake_be_has(f->be, RP));
}

/* ---- real-layout savepoints */

/* R2 for a real-layout savepoint (real protostuff bytes, type SAVEPOINT
 * read from its header) in every dead state: protected unless released,
 * except in FINISHED, whose savepoints the engine deletes itself.  The
 * header is read only where the type can change the verdict. */
static void test_real_savepoint_by_state(void **st)
{
	struct fx *f = *st;
	static const int dead[] = {JS_FAILED,	      JS_CANCELED,
				   JS_SAVEPOINT_DONE, JS_UNKNOWABLE,
				   JS_FINISHED,	      JS_ORPHAN};

	for (size_t s = 0; s < sizeof(dead) / sizeof(*dead); s++) {
		bool finished = dead[s] == JS_FINISHED;
		unsigned reads;

		eng.rc = dead[s] == JS_ORPHAN ? -ENOENT : 0;
		eng.state = dead[s];
		/* a fresh type cache each round: the read is counted */
		ckinfo_free(f->fs.ck);
		f->fs.ck = ckinfo_new();
		assert_non_null(f->fs.ck);
		reads = fake_be_calls(f->be, FAKE_READ);
		if (finished) {
			assert_int_equal(rm(f, SP), 0);
			assert_false(fake_be_has(f->be, SP));
			/* the split cannot matter: no header read */
			assert_int_equal(fake_be_calls(f->be, FAKE_READ),
					 reads);
		} else {
			assert_int_equal(rm(f, SP), -EPERM);
			assert_true(fake_be_has(f->be, SP));
			assert_true(fake_be_calls(f->be, FAKE_READ) > reads);
			/* the superseded checkpoint beside it goes */
			assert_int_equal(rm(f, CKPT), 0);
			assert_false(fake_be_has(f->be, CKPT));
			assert_int_equal(release(f, true), 0);
			assert_int_equal(rm(f, SP), 0);
			assert_false(fake_be_has(f->be, SP));
			assert_int_equal(release(f, false), 0);
		}
		put_back(f);
	}
}

/*
 * Every place that asks "does the savepoint/superseded split matter"
 * (rules_type_matters, and its callers in delete.c: the classification
 * unlink decides on and the one `deletable` counts with) agrees with
 * rules_decide over the whole input space: mount ro or not, caller
 * allowed or not, the engine down or answering each state (the orphan
 * included), released or not.  A real-layout savepoint and a superseded
 * checkpoint (real bytes) are unlinked each time and must get exactly
 * rules_decide's answer for their true class.
 */
/* one point of the input space below; see there */
static void check_split(struct fx *f, bool ro, bool who, bool down, int s,
			bool rel)
{
	const struct caller *c = who ? &root : &user;
	struct rule_input in = {0};
	struct rule_result want_sp, want_ck;
	struct delete_assessment a;
	bool matters;
	int got;

	eng.rc = down ? -EAGAIN : s == JS_ORPHAN ? -ENOENT : 0;
	eng.state = s;
	f->fs.conf.ro = false;
	assert_int_equal(release(f, false), 0);
	got = rel ? release(f, true) : 0;
	if (rel && !down && (job_state_is_end(s) || s == JS_ORPHAN))
		assert_int_equal(got, 0);
	f->fs.conf.ro = ro;
	tu_sleep_ms(2);
	push(f);
	assert_int_equal(delete_assess(&f->fs, JOB, who, &a), 0);
	/* the oracle's input: the facts the decision was made on */
	in.ro = ro;
	in.caller_allowed = who;
	in.engine_err = down ? -EAGAIN : 0;
	in.state = down ? JS_UNKNOWN : s;
	in.released = a.released;
	if (!down)
		assert_int_equal(a.state, s);
	in.cls = OC_SAVEPOINT;
	rules_decide(&in, &want_sp);
	in.cls = OC_SUPERSEDED;
	rules_decide(&in, &want_ck);
	matters = want_sp.err != want_ck.err ||
		  strcmp(want_sp.rule, want_ck.rule) != 0;
	if (rules_type_matters(&in) != matters)
		fail_msg("rules_type_matters ro %d who %d down %d state %d "
			 "rel %d",
			 ro, who, down, s, rel);
	/* deletable: the savepoint counted apart exactly when the split
	 * matters, and each class predicted by the rules */
	if (a.cnt[OC_SAVEPOINT] != (matters ? 1u : 0u) ||
	    a.merged != !matters || a.res[OC_SAVEPOINT].err != want_sp.err ||
	    a.res[OC_SUPERSEDED].err != want_ck.err)
		fail_msg("deletable ro %d who %d down %d state %d rel %d: "
			 "savepoints %zu merged %d",
			 ro, who, down, s, rel, a.cnt[OC_SAVEPOINT], a.merged);
	/* unlink: exactly the rules' answer for the object's true class */
	got = unlink_as(f, c, SP_PATH);
	if (got != -want_sp.err || fake_be_has(f->be, SP) != (want_sp.err != 0))
		fail_msg("rm savepoint ro %d who %d down %d state %d rel %d: "
			 "%d, the rules say %d (%s)",
			 ro, who, down, s, rel, got, -want_sp.err,
			 want_sp.rule);
	got = unlink_as(f, c, CKPT_PATH);
	if (got != -want_ck.err ||
	    fake_be_has(f->be, CKPT) != (want_ck.err != 0))
		fail_msg("rm checkpoint ro %d who %d down %d state %d rel %d: "
			 "%d, the rules say %d (%s)",
			 ro, who, down, s, rel, got, -want_ck.err,
			 want_ck.rule);
	put_back(f);
}

/*
 * Every place that asks "does the savepoint/superseded split matter"
 * (rules_type_matters, and its callers in delete.c: the classification
 * unlink decides on and the one `deletable` counts with) agrees with
 * rules_decide over the whole input space: mount ro or not, caller
 * allowed or not, the engine down or answering each state (the orphan
 * included), released or not.  A real-layout savepoint and a superseded
 * checkpoint (real bytes) are unlinked each time and must get exactly
 * rules_decide's answer for their true class.
 */
static void test_type_split_agrees_with_rules(void **st)
{
	struct fx *f = *st;
	unsigned checked = 0;

	for (unsigned k = 0; k < 16u * JS_COUNT; k++) {
		bool ro = k & 1, who = k & 2, down = k & 4, rel = k & 8;
		int s = (int)(k / 16);

		if (down && s)
			continue; /* nobody tells the state: once is enough */
		check_split(f, ro, who, down, s, rel);
		checked++;
	}
	assert_int_equal(checked, 8 * JS_COUNT + 8);
}

/* ---- predictions: shared for decision_age, voided by every change */

static void test_prediction_cached_and_voided(void **st)
{
	struct fx *f = *st;
	struct delete_assessment a, b;
	unsigned asked;

	f->fs.conf.decision_age_ms = 60000;
	assert_int_equal(assess(f, &a), 0);
	asked = fake_engine_calls(f->fs.engine, FENG_JOB_INFO);
	assert_int_equal(asked, 1);
	assert_int_equal(assess(f, &b), 0);
	assert_int_equal(fake_engine_calls(f->fs.engine, FENG_JOB_INFO), 1);
	assert_int_equal(b.cnt[OC_SUPERSEDED], a.cnt[OC_SUPERSEDED]);
	/* a deletion voids the prediction: the next one counts one less */
	assert_int_equal(rm(f, CKPT), 0);
	assert_int_equal(assess(f, &b), 0);
	assert_int_equal(b.cnt[OC_SUPERSEDED] + 1, a.cnt[OC_SUPERSEDED]);
}

/*
 * README "Failure modes": an engine that cannot be asked is met once per
 * deadline, not once per pseudo-file.  `status` and `deletable` share one
 * prediction; when the ask took the whole deadline (longer than
 * decision_age), the failure is still remembered right after it, for
 * `timeout` from when it was learned (a du of the job waits once).
 */
static void test_failed_ask_remembered_after_it(void **st)
{
	struct fx *f = *st;
	struct delete_assessment a, b;
	int64_t t0;

	f->fs.conf.decision_age_ms = 20;
	f->fs.conf.timeout_ms = 2000;
	eng.rc = -ETIMEDOUT;
	push(f);
	fake_engine_delay(f->fs.engine, FENG_JOB_INFO, 80); /* > decision_age */
	assert_int_equal(delete_assess(&f->fs, JOB, true, &a), 0);
	assert_int_equal(a.verdict.err, EAGAIN);
	assert_int_equal(fake_engine_calls(f->fs.engine, FENG_JOB_INFO), 1);
	t0 = tu_mono_ms();
	assert_int_equal(delete_assess(&f->fs, JOB, true, &b), 0);
	assert_true(tu_mono_ms() - t0 < 40);
	assert_int_equal(b.verdict.err, EAGAIN);
	assert_int_equal(fake_engine_calls(f->fs.engine, FENG_JOB_INFO), 1);
	/* an answer is kept decision_age from when it came, then asked again */
	eng.rc = 0;
	push(f);
	fake_engine_delay(f->fs.engine, FENG_JOB_INFO, 0);
	f->fs.conf.timeout_ms = 30;
	tu_sleep_ms(40);
	assert_int_equal(delete_assess(&f->fs, JOB, true, &a), 0);
	assert_int_equal(fake_engine_calls(f->fs.engine, FENG_JOB_INFO), 2);
	/* a rm asks afresh whatever was predicted, and the raw object goes */
	assert_int_equal(rm(f, CKPT), 0);
	assert_false(fake_be_has(f->be, CKPT));
	assert_int_equal(fake_engine_calls(f->fs.engine, FENG_JOB_INFO), 3);
}

/* type_cache_max_entries: past the cap the oldest decoded type goes and is
 * read again when asked — the right type every time, the savepoint still
 * protected; the newest stay cached (no read). */
static void test_type_cache_cap(void **st)
{
	struct fx *f = *st;
	struct catalog *c;
	size_t n, bytes;
	uint64_t ev;
	unsigned r0;

	ckinfo_set_caps(f->fs.ck, 2, 0);
	assert_int_equal(catalog_build_job(f->be, JOB, &c), 0);
	assert_int_equal(
		ckinfo_type(f->fs.ck, STFS_CK_SRC(&f->fs), find_obj(c, SP)),
		CKPT_SAVEPOINT);
	assert_int_equal(
		ckinfo_type(f->fs.ck, STFS_CK_SRC(&f->fs), find_obj(c, CKPT)),
		CKPT_CHECKPOINT);
	assert_int_equal(
		ckinfo_type(f->fs.ck, STFS_CK_SRC(&f->fs), find_obj(c, RP)),
		CKPT_CHECKPOINT);
	ckinfo_get_stats(f->fs.ck, &n, &bytes, &ev);
	assert_int_equal(n, 2);
	assert_int_equal(ev, 1);
	assert_true(bytes > 0);
	/* the two newest: no read */
	r0 = fake_be_calls(f->be, FAKE_READ);
	assert_int_equal(
		ckinfo_type(f->fs.ck, STFS_CK_SRC(&f->fs), find_obj(c, RP)),
		CKPT_CHECKPOINT);
	assert_int_equal(
		ckinfo_type(f->fs.ck, STFS_CK_SRC(&f->fs), find_obj(c, CKPT)),
		CKPT_CHECKPOINT);
	assert_int_equal(fake_be_calls(f->be, FAKE_READ), r0);
	/* the evicted savepoint: read again, still a savepoint */
	assert_int_equal(
		ckinfo_type(f->fs.ck, STFS_CK_SRC(&f->fs), find_obj(c, SP)),
		CKPT_SAVEPOINT);
	assert_true(fake_be_calls(f->be, FAKE_READ) > r0);
	catalog_put(c);
	assert_int_equal(rm(f, SP), -EPERM);
	assert_true(fake_be_has(f->be, SP));
	ckinfo_get_stats(f->fs.ck, &n, &bytes, &ev);
	assert_true(n <= 2);
}

/* Issue 14 item 3: the checkpoint summaries behind `info` are capped by
 * info_cache_max_entries (conf table, applied by stfs_init): past the cap
 * the oldest summary goes, the table never holds more, and a dropped one
 * is decoded again to the same summary; the newest stay cached (no read). */
static void test_summary_cache_cap(void **st)
{
	static const char *const keys[] = {CKPT, SP, RP};
	struct fx *f = *st;
	struct pstuff_summary s[3], again;
	struct catalog *c;
	size_t n, bytes;
	uint64_t ev;
	unsigned r0;

	/* stfs_init applied the conf default */
	ckinfo_get_summary_stats(f->fs.ck, &n, &bytes, &ev);
	assert_int_equal(n, 0);
	assert_true(conf_default_u("info_cache_max_entries") > 0);
	ckinfo_set_summary_caps(f->fs.ck, 2, 0);
	assert_int_equal(catalog_build_job(f->be, JOB, &c), 0);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(ckinfo_summary(f->fs.ck, STFS_CK_SRC(&f->fs),
						find_obj(c, keys[i]), &s[i]),
				 0);
		ckinfo_get_summary_stats(f->fs.ck, &n, &bytes, &ev);
		assert_true(n <= 2);
	}
	assert_int_equal(n, 2);
	assert_int_equal(ev, 1);
	assert_true(bytes > 0);
	assert_int_equal(s[1].ck.type, CKPT_SAVEPOINT);
	/* the two newest: no read */
	r0 = fake_be_calls(f->be, FAKE_READ);
	for (size_t i = 1; i < 3; i++) {
		assert_int_equal(ckinfo_summary(f->fs.ck, STFS_CK_SRC(&f->fs),
						find_obj(c, keys[i]), &again),
				 0);
		assert_int_equal(again.ck.type, s[i].ck.type);
		pstuff_summary_free(&again);
	}
	assert_int_equal(fake_be_calls(f->be, FAKE_READ), r0);
	/* the dropped one: read again, the same summary */
	assert_int_equal(ckinfo_summary(f->fs.ck, STFS_CK_SRC(&f->fs),
					find_obj(c, keys[0]), &again),
			 0);
	assert_true(fake_be_calls(f->be, FAKE_READ) > r0);
	assert_int_equal(again.ck.type, s[0].ck.type);
	assert_int_equal(again.ck.checkpoint_id, s[0].ck.checkpoint_id);
	assert_int_equal(again.ck.completed_ts, s[0].ck.completed_ts);
	assert_int_equal(again.n_actions, s[0].n_actions);
	assert_int_equal(again.n_stats, s[0].n_stats);
	if (again.n_actions)
		assert_memory_equal(
			again.actions, s[0].actions,
			sizeof(*again.actions) *
				(again.n_actions < PSTUFF_SUM_MAX_ENT
					 ? again.n_actions
					 : PSTUFF_SUM_MAX_ENT));
	pstuff_summary_free(&again);
	ckinfo_get_summary_stats(f->fs.ck, &n, &bytes, &ev);
	assert_int_equal(n, 2);
	assert_int_equal(ev, 2);
	/* the byte cap alone: one summary's worth keeps one */
	ckinfo_set_summary_caps(f->fs.ck, 0, bytes / 2 + 1);
	assert_int_equal(ckinfo_summary(f->fs.ck, STFS_CK_SRC(&f->fs),
					find_obj(c, keys[1]), &again),
			 0);
	pstuff_summary_free(&again);
	ckinfo_get_summary_stats(f->fs.ck, &n, &bytes, &ev);
	assert_int_equal(n, 1);
	for (size_t i = 0; i < 3; i++)
		pstuff_summary_free(&s[i]);
	catalog_put(c);
}

/* Issue 11: a summary is kept at the size of what it holds (an action's
 * name is its own length, not PSTUFF_NAME_MAX + 1 bytes), so that the
 * default info_cache_max_mb holds a namespace of 20,000 checkpoints; the
 * copy handed out is the decoder's, byte for byte. */
static void test_summary_cache_compact(void **st)
{
	struct fx *f = *st;
	struct pstuff_summary s, again;
	struct catalog *c;
	size_t n, bytes, names = 0;
	uint64_t ev;

	assert_int_equal(catalog_build_job(f->be, JOB, &c), 0);
	assert_int_equal(ckinfo_summary(f->fs.ck, STFS_CK_SRC(&f->fs),
					find_obj(c, CKPT), &s),
			 0);
	assert_true(s.n_actions > 0);
	for (size_t i = 0; i < s.n_actions; i++)
		names += strlen(s.actions[i].name) + 1;
	ckinfo_get_summary_stats(f->fs.ck, &n, &bytes, &ev);
	assert_int_equal(n, 1);
	/* the entry, its key, the names, 32 bytes per action and statistic */
	assert_true(bytes <= 256 + strlen(CKPT) + names +
				     32 * (s.n_actions + s.n_stats));
	assert_int_equal(ckinfo_summary(f->fs.ck, STFS_CK_SRC(&f->fs),
					find_obj(c, CKPT), &again),
			 0);
	assert_int_equal(again.n_actions, s.n_actions);
	assert_int_equal(again.n_stats, s.n_stats);
	assert_memory_equal(&again.ck, &s.ck, sizeof(s.ck));
	assert_memory_equal(again.actions, s.actions,
			    sizeof(*s.actions) * s.n_actions);
	if (s.n_stats)
		assert_memory_equal(again.stats, s.stats,
				    sizeof(*s.stats) * s.n_stats);
	pstuff_summary_free(&again);
	pstuff_summary_free(&s);
	catalog_put(c);
}

/* Issue 11: summaries loaded from state_dir beyond info_cache_max_entries
 * keep the first ones of the file (the order of the walk that decoded
 * them), so the next walk in that order finds them; keeping the last ones
 * made every lookup of that walk a miss that dropped the next one. */
static void test_summary_state_dir_past_cap(void **st)
{
	static const char *const keys[] = {CKPT, SP, RP};
	struct fx *f = *st;
	struct pstuff_summary s;
	struct catalog *c;
	unsigned r0;

	assert_int_equal(ckinfo_persist(f->fs.ck, f->dir, "fake://"), 0);
	assert_int_equal(catalog_build_job(f->be, JOB, &c), 0);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(ckinfo_summary(f->fs.ck, STFS_CK_SRC(&f->fs),
						find_obj(c, keys[i]), &s),
				 0);
		pstuff_summary_free(&s);
	}
	/* the next mount, two summaries at most */
	ckinfo_free(f->fs.ck);
	f->fs.ck = ckinfo_new();
	assert_non_null(f->fs.ck);
	ckinfo_set_summary_caps(f->fs.ck, 2, 0);
	assert_int_equal(ckinfo_persist(f->fs.ck, f->dir, "fake://"), 0);
	r0 = fake_be_calls(f->be, FAKE_READ);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(ckinfo_summary(f->fs.ck, STFS_CK_SRC(&f->fs),
						find_obj(c, keys[i]), &s),
				 0);
		pstuff_summary_free(&s);
	}
	assert_int_equal(fake_be_calls(f->be, FAKE_READ), r0);
	/* the third is decoded again (and drops the oldest) */
	assert_int_equal(ckinfo_summary(f->fs.ck, STFS_CK_SRC(&f->fs),
					find_obj(c, keys[2]), &s),
			 0);
	pstuff_summary_free(&s);
	assert_true(fake_be_calls(f->be, FAKE_READ) > r0);
	catalog_put(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_type_cache_cap, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_summary_cache_cap, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_summary_cache_compact,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_state_dir_past_cap,
						setup, teardown),
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
		cmocka_unit_test_setup_teardown(test_rule_order, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_inflight_of_dead_job,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_engine_down_deletes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_storage_down_deletes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rm_r_released_job, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_rm_r_unreleased_then_released, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rm_r_orphan, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_unlink_rmdir_edges, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_release_voided_when_seen_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_savepoint_by_state,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_type_split_agrees_with_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_prediction_cached_and_voided, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_failed_ask_remembered_after_it, setup, teardown),
	};

	return cmocka_run_group_tests_name("delete", tests, NULL, NULL);
}
