/*
 * test_freshness — the ticker that keeps the kernel's long-lived entries
 * exact (fusefs/freshness.h), over the fake backend and engine: nothing
 * handed over while nothing changes, the job that gained an object, the
 * job whose engine state changed, the job that aged into ORPHAN (each
 * twice: at its tick and the next), and no request at all while idle.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "fakes/fake_backend.h"
#include "fakes/fake_engine.h"
#include "fakes/testutil.h"
#include "fusefs/freshness.h"
#include "policy/delete.h"

#define OLD_NS ((int64_t)1600000000 * 1000000000)

static const char engine_json[] =
	"[{\"jobId\":\"200\",\"jobName\":\"x\",\"jobStatus\":\"RUNNING\","
	"\"createTime\":\"2025-03-07 14:02:11\",\"jobDag\":{\"jobId\":\"200\","
	"\"pipelineEdges\":{\"1\":[]}},\"metrics\":{}}]";

struct seen {
	pthread_mutex_t lock;
	int calls;     /* callbacks with n > 0 */
	int first;     /* the n == 0 one */
	char ids[512]; /* every id handed, space separated */
	bool set_changed;
};

static void on_change(void *cookie, const char *const *ids, size_t n,
		      bool set_changed)
{
	struct seen *s = cookie;

	pthread_mutex_lock(&s->lock);
	if (n == 0) {
		s->first++;
	} else {
		s->calls++;
		s->set_changed |= set_changed;
		for (size_t i = 0; i < n; i++) {
			strncat(s->ids, ids[i],
				sizeof(s->ids) - strlen(s->ids) - 2);
			strncat(s->ids, " ",
				sizeof(s->ids) - strlen(s->ids) - 1);
		}
	}
	pthread_mutex_unlock(&s->lock);
}

static void nap(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* the ids handed over since the last call, and how many callbacks */
static int take_seen(struct seen *s, char *ids, size_t idsz)
{
	int n;

	pthread_mutex_lock(&s->lock);
	n = s->calls;
	snprintf(ids, idsz, "%s", s->ids);
	s->calls = 0;
	s->ids[0] = '\0';
	pthread_mutex_unlock(&s->lock);
	return n;
}

struct fixture {
	struct stfs fs;
	struct backend *be;
	struct seen seen;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(conf_init_defaults(&f->fs.conf), 0);
	free(f->fs.conf.state_dir);
	f->fs.conf.state_dir = NULL;
	f->fs.conf.storage_ttl_ms = 1;
	f->fs.conf.engine_ttl_ms = 1;
	f->fs.conf.orphan_grace_s = 2;
	assert_int_equal(stfs_init(&f->fs), 0);
	assert_int_equal(delete_attach(&f->fs), 0);
	assert_int_equal(fake_be_open(&f->be), 0);
	assert_int_equal(
		fake_be_add_str(f->be, "100/1000-1-1-1.ser", "x", OLD_NS), 0);
	assert_int_equal(
		fake_be_add_str(f->be, "200/1000-1-1-1.ser", "x", OLD_NS), 0);
	f->fs.ckpt = f->be;
	assert_int_equal(fake_engine_new(&f->fs.engine), 0);
	assert_int_equal(fake_engine_add_json(f->fs.engine, engine_json, true),
			 0);
	pthread_mutex_init(&f->seen.lock, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	tu_mount_free(&f->fs);
	pthread_mutex_destroy(&f->seen.lock);
	free(f);
	return 0;
}

static void wait_ready(struct freshness *fr, struct seen *s)
{
	for (int i = 0; i < 200 && !fresh_ready(fr); i++)
		nap(10);
	assert_true(fresh_ready(fr));
	assert_int_equal(s->first, 1);
}

/* while active (touched), each change is handed over at its tick and the
 * next, and nothing else */
static void test_changes_handed_twice(void **state)
{
	struct fixture *f = *state;
	struct freshness *fr = NULL;
	char ids[512];
	int64_t now_ns;

	assert_int_equal(
		fresh_start(&f->fs, 20, 600000, on_change, &f->seen, &fr), 0);
	wait_ready(fr, &f->seen);
	fresh_touch(fr);
	nap(150);
	assert_int_equal(take_seen(&f->seen, ids, sizeof(ids)), 0);
	/* .stfs/stats: the ticks counted, no change yet */
	assert_true(STFS_GET(&f->fs, fresh_ticks) > 0);
	assert_int_equal(STFS_GET(&f->fs, fresh_jobs_changed), 0);

	/* an object added to job 100 in storage */
	assert_int_equal(
		fake_be_add_str(f->be, "100/2000-2-1-2.ser", "yy", OLD_NS + 5),
		0);
	fresh_touch(fr);
	nap(200);
	assert_int_equal(take_seen(&f->seen, ids, sizeof(ids)), 2);
	assert_string_equal(ids, "100 100 ");
	assert_false(f->seen.set_changed);
	/* one change, handed over twice: counted once */
	assert_int_equal(STFS_GET(&f->fs, fresh_jobs_changed), 1);

	/* job 200's engine state */
	assert_int_equal(
		fake_engine_set_job(f->fs.engine, "200", JS_FAILED, 1741356340),
		0);
	fresh_touch(fr);
	nap(200);
	assert_int_equal(take_seen(&f->seen, ids, sizeof(ids)), 2);
	assert_string_equal(ids, "200 200 ");

	/* a storage-only job written now: added (the set changed), then
	 * UNKNOWN until orphan_grace (2 s), then ORPHAN: changed again */
	now_ns = now_ms() * 1000000;
	assert_int_equal(
		fake_be_add_str(f->be, "300/1000-1-1-1.ser", "z", now_ns), 0);
	fresh_touch(fr);
	nap(200);
	assert_int_equal(take_seen(&f->seen, ids, sizeof(ids)), 2);
	assert_string_equal(ids, "300 300 ");
	assert_true(f->seen.set_changed);
	for (int i = 0; i < 30; i++) {
		fresh_touch(fr);
		nap(100);
	}
	assert_int_equal(take_seen(&f->seen, ids, sizeof(ids)), 2);
	assert_string_equal(ids, "300 300 ");
	/* 100, 200, 300 added, 300 aged */
	assert_int_equal(STFS_GET(&f->fs, fresh_jobs_changed), 4);
	fresh_stop(fr);
}

/* nothing long-lived in the kernel: no tick asks the sources */
static void test_idle_asks_nothing(void **state)
{
	struct fixture *f = *state;
	struct freshness *fr = NULL;
	unsigned e0, l0;
	uint64_t t0;

	assert_int_equal(fresh_start(&f->fs, 20, 100, on_change, &f->seen, &fr),
			 0);
	wait_ready(fr, &f->seen);
	e0 = fake_engine_calls(f->fs.engine, FENG_JOBS);
	l0 = fake_be_calls(f->be, FAKE_LIST);
	t0 = fresh_ticks(fr);
	assert_int_equal(STFS_GET(&f->fs, fresh_ticks), t0); /* .stfs/stats */
	nap(300);
	assert_int_equal(fresh_ticks(fr), t0);
	assert_int_equal(fake_engine_calls(f->fs.engine, FENG_JOBS), e0);
	assert_int_equal(fake_be_calls(f->be, FAKE_LIST), l0);
	/* a long-lived reply: ticks ask again, until the horizon passes */
	fresh_touch(fr);
	nap(60);
	assert_true(fresh_ticks(fr) > t0);
	assert_true(fake_engine_calls(f->fs.engine, FENG_JOBS) > e0);
	nap(200);
	t0 = fresh_ticks(fr);
	nap(200);
	assert_int_equal(fresh_ticks(fr), t0);
	fresh_stop(fr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_changes_handed_twice,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_asks_nothing, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
