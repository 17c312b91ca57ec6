/*
 * Unit tests for fusefs/model/layout.c: strict parsing of real-layout names and
 * job ids.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model/catalog.h"

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

static void test_jobid_canonical_values(void **state)
{
	(void)state;
	assert_true(jobid_canonical("912345678901234567", 18));
	assert_true(jobid_canonical("0", 1));
	assert_true(jobid_canonical("9223372036854775807", 19));
	assert_true(jobid_canonical("123/abc", 3)); /* length-bounded */
	assert_false(jobid_canonical("9223372036854775808", 19));
	assert_false(jobid_canonical("12345678901234567890", 20));
	assert_false(jobid_canonical("", 0));
	assert_false(jobid_canonical("012", 3));
	assert_false(jobid_canonical("-12", 3));
	assert_false(jobid_canonical("+12", 3));
	assert_false(jobid_canonical("12a", 3));
	assert_false(jobid_canonical("savepoint", 9));
	assert_false(jobid_canonical(NULL, 3));
}

static void test_jobid_cmp_numeric(void **state)
{
	(void)state;
	assert_true(jobid_cmp("9", "10") < 0);
	assert_true(jobid_cmp("10", "9") > 0);
	assert_true(jobid_cmp("123", "123") == 0);
	assert_true(jobid_cmp("124", "123") > 0);
	assert_true(jobid_cmp("999999999999999999", "1000000000000000000") < 0);
}

static void test_jobid_normalize_engine_ids(void **state)
{
	static const char *const bad[] = {
		"",
		"+5",
		"-5",
		" 5",
		"5 ",
		"5x",
		"0x5",
		"5\n",
		"\xd9\xa5",
		"9223372036854775808",
		"00009223372036854775808",
	};
	char out[JOBID_SZ];

	(void)state;
	/* the engine reads "05" as job 5 (Long.parseLong): one name, "5" */
	assert_int_equal(jobid_normalize("05", 2, out), 0);
	assert_string_equal(out, "5");
	assert_int_equal(jobid_normalize("000", 3, out), 0);
	assert_string_equal(out, "0");
	assert_int_equal(jobid_normalize("0009223372036854775807", 22, out), 0);
	assert_string_equal(out, "9223372036854775807");
	assert_int_equal(jobid_normalize("953211384710987777", 18, out), 0);
	assert_string_equal(out, "953211384710987777");
	/* length-bounded: a NUL inside a JSON string is not a digit */
	assert_int_equal(jobid_normalize("5\0"
					 "1",
					 3, out),
			 -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (jobid_normalize(bad[i], strlen(bad[i]), out) != -EINVAL)
			fail_msg("'%s' normalized to '%s'", bad[i], out);
	assert_int_equal(jobid_normalize(NULL, 1, out), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_parse_real_ser),
		cmocka_unit_test(test_layout_parse_real_sertmp),
		cmocka_unit_test(test_layout_parse_real_limits),
		cmocka_unit_test(test_layout_parse_real_crc_sidecar),
		cmocka_unit_test(test_layout_parse_real_rejects),
		cmocka_unit_test(test_jobid_canonical_values),
		cmocka_unit_test(test_jobid_cmp_numeric),
		cmocka_unit_test(test_jobid_normalize_engine_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
