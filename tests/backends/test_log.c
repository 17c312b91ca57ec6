/*
 * Unit tests for backends/util/log.c: level names, clamping and the SIGUSR2
 * cycle; filtering checked on what reaches stderr.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/log.h"

static void test_log_level_names(void **state)
{
	(void)state;
	assert_int_equal(log_level_parse("error"), LOG_ERR);
	assert_int_equal(log_level_parse("warning"), LOG_WARNING);
	assert_int_equal(log_level_parse("notice"), LOG_NOTICE);
	assert_int_equal(log_level_parse("info"), LOG_INFO);
	assert_int_equal(log_level_parse("debug"), LOG_DEBUG);
	assert_int_equal(log_level_parse("emerg"), -1); /* not settable */
	assert_int_equal(log_level_parse("Info"), -1);
	assert_int_equal(log_level_parse(""), -1);
	assert_int_equal(log_level_parse(NULL), -1);
	assert_string_equal(log_level_name(LOG_WARNING), "warning");
}

static void test_log_level_clamped_and_cycled(void **state)
{
	(void)state;
	log_set_level(LOG_EMERG);
	assert_int_equal(log_get_level(), LOG_ERR);
	log_set_level(99);
	assert_int_equal(log_get_level(), LOG_DEBUG);
	log_set_level(LOG_ERR);
	assert_int_equal(log_cycle_level(), LOG_WARNING);
	assert_int_equal(log_cycle_level(), LOG_NOTICE);
	assert_int_equal(log_cycle_level(), LOG_INFO);
	assert_int_equal(log_cycle_level(), LOG_DEBUG);
	assert_int_equal(log_cycle_level(), LOG_ERR); /* wraps */
	log_set_level(LOG_INFO);
}

/* what log_msg wrote to stderr while `lvl` was set */
static size_t stderr_of(int lvl, int msg_level, char *out, size_t n)
{
	FILE *f = tmpfile();
	int saved = dup(2);
	size_t got;

	assert_non_null(f);
	fflush(stderr);
	dup2(fileno(f), 2);
	log_set_level(lvl);
	log_msg(msg_level, "hello %d", 42);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	got = fread(out, 1, n - 1, f);
	out[got] = '\0';
	fclose(f);
	log_set_level(LOG_INFO);
	return got;
}

static void test_log_filters_by_level(void **state)
{
	char out[256];

	(void)state;
	log_setup(true, false, false);
	assert_int_equal(stderr_of(LOG_WARNING, LOG_INFO, out, sizeof(out)), 0);
	assert_int_equal(stderr_of(LOG_WARNING, LOG_DEBUG, out, sizeof(out)),
			 0);
	assert_true(stderr_of(LOG_WARNING, LOG_ERR, out, sizeof(out)) > 0);
	assert_string_equal(out, "stfs: error: hello 42\n");
	assert_true(stderr_of(LOG_DEBUG, LOG_DEBUG, out, sizeof(out)) > 0);
	assert_string_equal(out, "stfs: debug: hello 42\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_level_names),
		cmocka_unit_test(test_log_level_clamped_and_cycled),
		cmocka_unit_test(test_log_filters_by_level),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
