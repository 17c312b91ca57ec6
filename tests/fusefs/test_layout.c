/*
 * Unit tests for fusefs/layout.c: strict parsing of real-layout names and
 * job ids.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "catalog.h"

static void test_layout_parse_real_ser(void **state)
{
	struct real_name rn;

	(void)state;
	assert_int_equal(layout_parse_real("1730001234567-482-1-17.ser", &rn),
			 0);
	assert_int_equal(rn.write_ts, 1730001234567LL);
	assert_int_equal(rn.rnd, 482);
	assert_int_equal(rn.pipeline_id, 1);
	assert_int_equal(rn.checkpoint_id, 17);
	assert_false(rn.tmp);
}

static void test_layout_parse_real_sertmp(void **state)
{
	struct real_name rn;

	(void)state;
	assert_int_equal(layout_parse_real("1730001234570-77-2-9.sertmp", &rn),
			 0);
	assert_int_equal(rn.write_ts, 1730001234570LL);
	assert_int_equal(rn.rnd, 77);
	assert_int_equal(rn.pipeline_id, 2);
	assert_int_equal(rn.checkpoint_id, 9);
	assert_true(rn.tmp);
}

/* Hadoop's checksum filesystem (file:///) writes ".<name>.crc" beside each
 * object (README "The real engine in the tests") */
static void test_layout_parse_real_crc_sidecar(void **state)
{
	struct real_name rn;

	(void)state;
	assert_int_equal(
		layout_parse_real(".1796120421272-817-1-12.ser.crc", &rn), 0);
	assert_true(rn.crc);
	assert_false(rn.tmp);
	assert_int_equal(rn.write_ts, 1796120421272LL);
	assert_int_equal(rn.rnd, 817);
	assert_int_equal(rn.pipeline_id, 1);
	assert_int_equal(rn.checkpoint_id, 12);
	assert_int_equal(
		layout_parse_real(".1796120421272-817-2-3.sertmp.crc", &rn), 0);
	assert_true(rn.crc);
	assert_true(rn.tmp);
	assert_int_equal(layout_parse_real("1730001234567-482-1-17.ser", &rn),
			 0);
	assert_false(rn.crc);
	/* only the exact sidecar form */
	assert_int_equal(
		layout_parse_real("1730001234567-482-1-17.ser.crc", &rn),
		-EINVAL);
	assert_int_equal(layout_parse_real(".1730001234567-482-1-17.ser", &rn),
			 -EINVAL);
	assert_int_equal(layout_parse_real(".1730001234567-482-1-17.crc", &rn),
			 -EINVAL);
	assert_int_equal(
		layout_parse_real("..1730001234567-482-1-17.ser.crc", &rn),
		-EINVAL);
	assert_int_equal(
		layout_parse_real(".1730001234567-482-1-17.ser.crc.crc", &rn),
		-EINVAL);
	assert_int_equal(layout_parse_real(".ser.crc", &rn), -EINVAL);
}

static void test_layout_parse_real_limits(void **state)
{
	struct real_name rn;

	(void)state;
	/* the largest values that fit */
	assert_int_equal(
		layout_parse_real("9223372036854775807-2147483647-2147483647-"
				  "9223372036854775807.ser",
				  &rn),
		0);
	assert_int_equal(rn.write_ts, INT64_MAX);
	assert_int_equal(rn.rnd, INT32_MAX);
	assert_int_equal(rn.pipeline_id, INT32_MAX);
	assert_int_equal(rn.checkpoint_id, INT64_MAX);
	assert_int_equal(layout_parse_real("0-0-0-0.ser", &rn), 0);
	assert_int_equal(rn.write_ts, 0);
}

static void test_layout_parse_real_rejects(void **state)
{
	static const char *const bad[] = {
		"",
		".ser",
		"-1-1-1.ser",
		"1-2-3.ser",
		"1-2-3-4-5.ser",
		"a-1-1-1.ser",
		"1-a-1-1.ser",
		"1-1-1-1.ser.bak",
		"1-1-1-1.se",
		"1-1-1-1.SER",
		"1-1-1-1.sertmp2",
		"1-1-1-1ser",
		"1-1-1-1",
		"+1-1-1-1.ser",
		"1-+1-1-1.ser",
		"1--1-1.ser",
		"1-1-1-.ser",
		" 1-1-1-1.ser",
		"1-1-1-1.ser ",
		"1-1-1-1..ser",
		"x/1-1-1-1.ser",
		"9223372036854775808-1-1-1.ser",  /* ts overflow */
		"99999999999999999999-1-1-1.ser", /* 20 digits */
		"00000000000000000001-1-1-1.ser", /* 20 digits */
		"1-2147483648-1-1.ser",		  /* rnd overflow */
		"1-1-2147483648-1.ser",		  /* pid overflow */
		"1-1-1-9223372036854775808.ser",  /* cid overflow */
		"1-1-1-1.ser\n",
	};
	struct real_name rn;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = layout_parse_real(bad[i], &rn);

		if (rc != -EINVAL)
			fail_msg("'%s' parsed (rc %d)", bad[i], rc);
	}
	assert_int_equal(layout_parse_real(NULL, &rn), -EINVAL);
}

static void test_layout_is_job_id_values(void **state)
{
	(void)state;
	assert_true(layout_is_job_id("912345678901234567", 18));
	assert_true(layout_is_job_id("0", 1));
	assert_true(layout_is_job_id("9223372036854775807", 19));
	assert_true(layout_is_job_id("123/abc", 3)); /* length-bounded */
	assert_false(layout_is_job_id("9223372036854775808", 19));
	assert_false(layout_is_job_id("12345678901234567890", 20));
	assert_false(layout_is_job_id("", 0));
	assert_false(layout_is_job_id("012", 3));
	assert_false(layout_is_job_id("-12", 3));
	assert_false(layout_is_job_id("+12", 3));
	assert_false(layout_is_job_id("12a", 3));
	assert_false(layout_is_job_id("savepoint", 9));
	assert_false(layout_is_job_id(NULL, 3));
}

static void test_layout_cmp_job_id_numeric(void **state)
{
	(void)state;
	assert_true(layout_cmp_job_id("9", "10") < 0);
	assert_true(layout_cmp_job_id("10", "9") > 0);
	assert_true(layout_cmp_job_id("123", "123") == 0);
	assert_true(layout_cmp_job_id("124", "123") > 0);
	assert_true(layout_cmp_job_id("999999999999999999",
				      "1000000000000000000") < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_parse_real_ser),
		cmocka_unit_test(test_layout_parse_real_sertmp),
		cmocka_unit_test(test_layout_parse_real_limits),
		cmocka_unit_test(test_layout_parse_real_crc_sidecar),
		cmocka_unit_test(test_layout_parse_real_rejects),
		cmocka_unit_test(test_layout_is_job_id_values),
		cmocka_unit_test(test_layout_cmp_job_id_numeric),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
