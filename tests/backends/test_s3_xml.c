/*
 * Tests for backends/s3_xml.c against tests/fixtures/s3/ (run with cwd =
 * the repo root): ListObjectsV2 pages from s3rver (its odd namespace) and
 * real S3, malformed and hostile XML, Error bodies, the error-code table
 * and time parsing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakes/testutil.h"
#include "backends/s3_xml.h"

#define FIX "tests/fixtures/s3/"

static char *load(const char *name, size_t *len)
{
	char *p = NULL;

	assert_int_equal(tu_load(FIX, name, &p, len), 0);
	assert_true(*len > 0);
	return p;
}

static int parse_fixture(const char *name, struct s3_list *l)
{
	size_t len;
	char *x = load(name, &len);
	int rc = s3_xml_parse_list(x, len, l);

	free(x);
	return rc;
}

static void test_list_s3rver_page(void **state)
{
	struct s3_list l;

	(void)state;
	assert_int_equal(parse_fixture("list-s3rver-page1.xml", &l), 0);
	assert_int_equal(l.n_objs, 2);
	assert_string_equal(l.objs[0].key,
			    "seatunnel/checkpoint/123/1700000000-42-1-7.ser");
	assert_int_equal(l.objs[0].size, 36);
	/* 2026-11-30T10:09:40Z */
	assert_int_equal(l.objs[0].mtime_ns, 1796033380LL * 1000000000LL);
	assert_string_equal(l.objs[1].key,
			    "seatunnel/checkpoint/123/170000001-42-1-7.ser");
	assert_int_equal(l.objs[1].size, 100);
	assert_int_equal(l.n_prefixes, 0);
	assert_true(l.truncated);
	assert_string_equal(l.next_token,
			    "1uM/+QtS6x4tACTxqz3v5WhNXxfCNCoAtK4Mp/stdz/"
			    "gRFMcpUtnYebdth65UlGZ94mOJlLVt2xa3W2ybVA0ZSVtLq8/"
			    "Z3wg");
	assert_int_equal(l.n_bad, 0);
	s3_list_release(&l);
	assert_null(l.objs);
}

static void test_list_s3rver_prefixes_only(void **state)
{
	struct s3_list l;

	(void)state;
	assert_int_equal(parse_fixture("list-s3rver-prefixes.xml", &l), 0);
	assert_int_equal(l.n_objs, 0);
	assert_int_equal(l.n_prefixes, 2);
	assert_string_equal(l.prefixes[0], "seatunnel/checkpoint/123/");
	assert_string_equal(l.prefixes[1], "seatunnel/checkpoint/125/");
	assert_false(l.truncated);
	assert_null(l.next_token);
	s3_list_release(&l);
}

static void test_list_aws_namespace_and_entities(void **state)
{
	struct s3_list l;

	(void)state;
	assert_int_equal(parse_fixture("list-aws.xml", &l), 0);
	assert_int_equal(l.n_objs, 2);
	assert_string_equal(l.objs[0].key, "seatunnel/checkpoint/");
	assert_int_equal(l.objs[0].size, 0);
	assert_string_equal(l.objs[1].key,
			    "seatunnel/checkpoint/a b+c=d&e%f*~é.ser");
	assert_int_equal(l.objs[1].size, INT64_MAX);
	assert_int_equal(l.objs[1].mtime_ns,
			 1704164645LL * 1000000000LL + 123000000LL);
	assert_int_equal(l.n_prefixes, 2);
	assert_string_equal(l.prefixes[0], "seatunnel/checkpoint/123/");
	assert_string_equal(l.prefixes[1], "seatunnel/checkpoint/<cdata>/");
	s3_list_release(&l);
}

static void test_list_bad_entries_skipped(void **state)
{
	struct s3_list l;

	(void)state;
	assert_int_equal(parse_fixture("list-bad-entries.xml", &l), 0);
	/* no key, huge size, negative size, empty key: skipped */
	assert_int_equal(l.n_bad, 4);
	assert_int_equal(l.n_objs, 2);
	assert_string_equal(l.objs[0].key, "p/nosize");
	assert_int_equal(l.objs[0].size, 0);
	assert_string_equal(l.objs[1].key, "p/badtime");
	assert_int_equal(l.objs[1].size, 7);
	assert_int_equal(l.objs[1].mtime_ns, 0);
	s3_list_release(&l);
}

/* one key with a control character must not hide the others */
static void test_list_control_chars_sanitized(void **state)
{
	static const char xml[] =
		"<ListBucketResult><IsTruncated>false</IsTruncated>"
		"<Contents><Key>p/a\001b</Key><Size>1</Size></Contents>"
		"<Contents><Key>p/ok</Key><Size>2</Size></Contents>"
		"<Contents><Key>p/c&#x1f;d&#7;</Key><Size>3</Size></Contents>"
		"<Contents><Key>p/t\tab&#10;&#x41;</Key><Size>4</Size>"
		"</Contents></ListBucketResult>";
	static const char nul[] = "<ListBucketResult><Contents><Key>x\0y"
				  "</Key></Contents></ListBucketResult>";
	struct s3_list l;

	(void)state;
	assert_int_equal(s3_xml_parse_list(xml, sizeof(xml) - 1, &l), 0);
	assert_int_equal(l.n_objs, 4);
	assert_string_equal(l.objs[0].key, "p/a\x7f"
					   "b");
	assert_string_equal(l.objs[1].key, "p/ok");
	assert_int_equal(l.objs[1].size, 2);
	assert_string_equal(l.objs[2].key, "p/c\x7f"
					   "d\x7f");
	/* tab, LF and other references are XML's own: kept */
	assert_string_equal(l.objs[3].key, "p/t\tab\nA");
	s3_list_release(&l);
	/* a raw NUL too */
	assert_int_equal(s3_xml_parse_list(nul, sizeof(nul) - 1, &l), 0);
	assert_int_equal(l.n_objs, 1);
	assert_string_equal(l.objs[0].key, "x\x7fy");
	s3_list_release(&l);
}

static void test_list_entities_not_expanded(void **state)
{
	struct s3_list l;

	(void)state;
	assert_int_equal(parse_fixture("list-entities.xml", &l), 0);
	assert_int_equal(l.n_objs, 3);
	/* user entities contribute nothing; no file is read */
	assert_string_equal(l.objs[0].key, "k/x");
	assert_string_equal(l.objs[1].key, "k/y");
	/* character and predefined references are text */
	assert_string_equal(l.objs[2].key, "k/A<");
	s3_list_release(&l);
	/* a "billion laughs" document is refused, not expanded */
	assert_int_equal(parse_fixture("list-laughs.xml", &l), -EINVAL);
	assert_null(l.objs);
}

static void test_list_truncated_and_garbage(void **state)
{
	static const char *const bad[] = {
		"not xml at all",
		"<Error><Code>NoSuchBucket</Code></Error>",
		"<?xml version=\"1.0\"?>",
		"<ListBucketResult><Contents>",
	};
	struct s3_list l;

	(void)state;
	assert_int_equal(parse_fixture("list-truncated.xml", &l), -EINVAL);
	assert_null(l.objs);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(s3_xml_parse_list(bad[i], strlen(bad[i]), &l),
				 -EINVAL);
	assert_int_equal(s3_xml_parse_list(NULL, 0, &l), -EINVAL);
	assert_int_equal(s3_xml_parse_list("x", S3_XML_MAX + 1, &l), -EFBIG);
}

static void test_list_empty_token_ignored(void **state)
{
	const char x[] = "<ListBucketResult><IsTruncated>true</IsTruncated>"
			 "<NextContinuationToken></NextContinuationToken>"
			 "</ListBucketResult>";
	struct s3_list l;

	(void)state;
	assert_int_equal(s3_xml_parse_list(x, strlen(x), &l), 0);
	assert_true(l.truncated);
	assert_null(l.next_token);
	s3_list_release(&l);
}

static void test_error_bodies(void **state)
{
	struct s3_error e;
	size_t len;
	char *x;

	(void)state;
	x = load("error-nosuchkey.xml", &len);
	assert_int_equal(s3_xml_parse_error(x, len, &e), 0);
	assert_string_equal(e.code, "NoSuchKey");
	assert_string_equal(e.message, "The specified key does not exist.");
	free(x);
	x = load("error-signature.xml", &len);
	assert_int_equal(s3_xml_parse_error(x, len, &e), 0);
	assert_string_equal(e.code, "SignatureDoesNotMatch");
	assert_non_null(strstr(e.message, "signature we calculated"));
	free(x);
	assert_int_equal(s3_xml_parse_error("<html/>", 7, &e), -EINVAL);
	assert_string_equal(e.code, "");
	/* control characters in the message never reach a log line */
	{
		const char y[] = "<Error><Code>X</Code><Message>a&#10;b"
				 "</Message></Error>";

		assert_int_equal(s3_xml_parse_error(y, strlen(y), &e), 0);
		assert_string_equal(e.message, "a?b");
	}
}

static void test_code_to_errno(void **state)
{
	(void)state;
	assert_int_equal(s3_code_to_errno("NoSuchKey"), -ENOENT);
	assert_int_equal(s3_code_to_errno("NoSuchBucket"), -ENOENT);
	assert_int_equal(s3_code_to_errno("AccessDenied"), -EACCES);
	assert_int_equal(s3_code_to_errno("SignatureDoesNotMatch"), -EACCES);
	assert_int_equal(s3_code_to_errno("InvalidAccessKeyId"), -EACCES);
	assert_int_equal(s3_code_to_errno("SlowDown"), -EAGAIN);
	assert_int_equal(s3_code_to_errno("InvalidRange"), -ERANGE);
	assert_int_equal(s3_code_to_errno("InternalError"), -EIO);
	assert_int_equal(s3_code_to_errno("MalformedXML"), -EINVAL);
	assert_int_equal(s3_code_to_errno("NoSuchThing"), 0);
	assert_int_equal(s3_code_to_errno(""), 0);
	assert_int_equal(s3_code_to_errno(NULL), 0);
}

static void test_iso8601(void **state)
{
	int64_t ns = -1;

	(void)state;
	assert_int_equal(s3_parse_iso8601("1970-01-01T00:00:00Z", &ns), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(s3_parse_iso8601("2026-11-30T10:09:40.5Z", &ns), 0);
	assert_int_equal(ns, 1796033380LL * 1000000000LL + 500000000LL);
	assert_int_equal(s3_parse_iso8601("2026-11-30T10:09:40+00:00", &ns), 0);
	assert_int_equal(s3_parse_iso8601("2026-11-30T10:09:40+02:00", &ns),
			 -EINVAL);
	assert_int_equal(s3_parse_iso8601("2026-11-30", &ns), -EINVAL);
	assert_int_equal(s3_parse_iso8601("2026-11-30T10:09:40.Z", &ns),
			 -EINVAL);
	assert_int_equal(s3_parse_iso8601("", &ns), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_s3rver_page),
		cmocka_unit_test(test_list_s3rver_prefixes_only),
		cmocka_unit_test(test_list_aws_namespace_and_entities),
		cmocka_unit_test(test_list_bad_entries_skipped),
		cmocka_unit_test(test_list_control_chars_sanitized),
		cmocka_unit_test(test_list_entities_not_expanded),
		cmocka_unit_test(test_list_truncated_and_garbage),
		cmocka_unit_test(test_list_empty_token_ignored),
		cmocka_unit_test(test_error_bodies),
		cmocka_unit_test(test_code_to_errno),
		cmocka_unit_test(test_iso8601),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
