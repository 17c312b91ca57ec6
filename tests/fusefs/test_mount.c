/*
 * test_mount — the per-mount set-up: glibc malloc's tuning (README
 * "Memory") leaves each knob the environment sets to the environment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "conf/conf.h"
#include "mount/mount.h"

/* the tuning stfs applies with these variables set (the rest unset) */
static unsigned tuned_with(const char *arenas, const char *mmap_thr,
			   const char *tunables)
{
	struct conf_env env = {0};
	unsigned got;

	unsetenv("MALLOC_ARENA_MAX");
	unsetenv("MALLOC_MMAP_THRESHOLD_");
	unsetenv("GLIBC_TUNABLES");
	if (arenas)
		setenv("MALLOC_ARENA_MAX", arenas, 1);
	if (mmap_thr)
		setenv("MALLOC_MMAP_THRESHOLD_", mmap_thr, 1);
	if (tunables)
		setenv("GLIBC_TUNABLES", tunables, 1);
	assert_int_equal(conf_env_capture(&env), 0);
	got = stfs_malloc_tune(&env);
	conf_env_release(&env);
	unsetenv("MALLOC_ARENA_MAX");
	unsetenv("MALLOC_MMAP_THRESHOLD_");
	unsetenv("GLIBC_TUNABLES");
	return got;
}

static void test_malloc_tune_environment_wins(void **state)
{
	(void)state;
	assert_int_equal(tuned_with(NULL, NULL, NULL),
			 STFS_TUNED_ARENAS | STFS_TUNED_MMAP);
	assert_int_equal(tuned_with("8", NULL, NULL), STFS_TUNED_MMAP);
	assert_int_equal(tuned_with(NULL, "65536", NULL), STFS_TUNED_ARENAS);
	assert_int_equal(tuned_with("8", "65536", NULL), 0);
	/* the same knobs as glibc tunables */
	assert_int_equal(tuned_with(NULL, NULL, "glibc.malloc.arena_max=8"),
			 STFS_TUNED_MMAP);
	assert_int_equal(
		tuned_with(NULL, NULL,
			   "glibc.malloc.check=0:glibc.malloc.mmap_threshold="
			   "65536"),
		STFS_TUNED_ARENAS);
	/* other tunables, or a name that only ends like one: stfs tunes */
	assert_int_equal(
		tuned_with(NULL, NULL,
			   "glibc.malloc.tcache_count=0:x.glibc.malloc.arena_"
			   "maxx=1"),
		STFS_TUNED_ARENAS | STFS_TUNED_MMAP);
	/* no captured environment (unit tests' bare confs): stfs tunes */
	assert_int_equal(stfs_malloc_tune(NULL),
			 STFS_TUNED_ARENAS | STFS_TUNED_MMAP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malloc_tune_environment_wins),
	};

	return cmocka_run_group_tests_name("mount", tests, NULL, NULL);
}
