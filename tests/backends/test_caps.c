/*
 * Capability bits decide (README "Layout of the source"): a backend
 * without BE_CAP_DELETE deletes nothing (EROFS) and a local store's
 * checkpoints are not read ahead by a thread pool, a remote one's are
 * (BE_CAP_REMOTE).  Over the fake backend.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "fakes/fake_backend.h"
#include "model/catalog.h"
#include "model/ckinfo.h"

#define JOB    "900000000000000001"
#define OBJ(n) JOB "/1700000000000-100-1-" #n ".ser"

static void test_no_delete_bit_refuses(void **state)
{
	struct backend *be;

	(void)state;
	assert_int_equal(fake_be_open_caps(0, &be), 0);
	assert_int_equal(
		fake_be_add_str(be, OBJ(1), "x", 1700000000000000000LL), 0);
	assert_int_equal(be_remove(be, OBJ(1)), -EROFS);
	assert_true(fake_be_has(be, OBJ(1)));
	assert_int_equal(fake_be_calls(be, FAKE_REMOVE), 0);
	be_close(be);

	assert_int_equal(fake_be_open_caps(BE_CAP_DELETE, &be), 0);
	assert_int_equal(
		fake_be_add_str(be, OBJ(1), "x", 1700000000000000000LL), 0);
	assert_int_equal(be_remove(be, OBJ(1)), 0);
	assert_false(fake_be_has(be, OBJ(1)));
	be_close(be);
}

/* reads done by ckinfo_prefetch_pipe over a pipeline of 8 checkpoints */
static unsigned prefetch_reads(unsigned caps)
{
	struct backend *be;
	struct catalog *c;
	struct ckinfo_table *t = ckinfo_new();
	const char *objs[] = {OBJ(1), OBJ(2), OBJ(3), OBJ(4),
			      OBJ(5), OBJ(6), OBJ(7), OBJ(8)};
	unsigned r0, n;

	assert_non_null(t);
	assert_int_equal(fake_be_open_caps(caps, &be), 0);
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		assert_int_equal(fake_be_add_str(be, objs[i],
						 "not a checkpoint",
						 1700000000000000000LL),
				 0);
	assert_int_equal(catalog_build_job(be, JOB, &c), 0);
	assert_int_equal(c->n_jobs, 1);
	assert_int_equal(c->jobs[0].n_pipes, 1);
	struct ckinfo_src src = {.be = be, .timeout_ms = 1000};
	r0 = fake_be_calls(be, FAKE_READ);
	ckinfo_prefetch_pipe(t, &src, &c->jobs[0].pipes[0]);
	n = fake_be_calls(be, FAKE_READ) - r0;
	catalog_put(c);
	ckinfo_free(t);
	be_close(be);
	return n;
}

static void test_remote_bit_prefetches(void **state)
{
	(void)state;
	/* local: one read each when asked, nothing read ahead */
	assert_int_equal(prefetch_reads(BE_CAP_DELETE), 0);
	/* remote: every checkpoint of the pipeline read ahead */
	assert_true(prefetch_reads(BE_CAP_DELETE | BE_CAP_REMOTE) >= 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_delete_bit_refuses),
		cmocka_unit_test(test_remote_bit_prefetches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
