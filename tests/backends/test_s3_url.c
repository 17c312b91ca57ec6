/*
 * Tests for backends/s3_url.c: URI parsing for every scheme, provider
 * defaults, path-style vs virtual-hosted addressing, percent-encoding of
 * hostile keys, canonical (sorted, encoded) query strings.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "backends/s3_url.h"

static char *enc(const char *s, size_t n, bool keep_slash)
{
	static char out[4096];
	struct buf b;

	buf_init(&b, sizeof(out) - 1);
	assert_int_equal(s3_pct_encode(&b, s, n, keep_slash), 0);
	assert_non_null(b.data);
	memcpy(out, b.data, b.len + 1);
	buf_release(&b);
	return out;
}

static void test_pct_encode_unreserved_kept(void **state)
{
	(void)state;
	assert_string_equal(enc("AZaz09-_.~", 10, false), "AZaz09-_.~");
	assert_string_equal(enc("", 0, false), "");
}

static void test_pct_encode_hostile_keys(void **state)
{
	const char key[] = "a b+c=d&e%f*g~h/é\x01\x7f";

	(void)state;
	assert_string_equal(enc(key, strlen(key), true),
			    "a%20b%2Bc%3Dd%26e%25f%2Ag~h/%C3%A9%01%7F");
	assert_string_equal(enc(key, strlen(key), false),
			    "a%20b%2Bc%3Dd%26e%25f%2Ag~h%2F%C3%A9%01%7F");
	/* an embedded NUL is encoded, not a terminator */
	assert_string_equal(enc("a\0b", 3, false), "a%00b");
}

static char *query(const struct s3_param *p, size_t n)
{
	static char out[4096];
	struct buf b;

	buf_init(&b, sizeof(out) - 1);
	assert_int_equal(s3_query_build(&b, p, n), 0);
	memcpy(out, b.data ? b.data : "", b.len + 1);
	buf_release(&b);
	return out;
}

static void test_query_sorted_encoded(void **state)
{
	struct s3_param p[] = {
		{"prefix", "seatunnel/checkpoint/123/"},
		{"list-type", "2"},
		{"max-keys", "2"},
		{"delimiter", "/"},
	};

	(void)state;
	/* the exact query the verifying s3rver accepted (README "Testing") */
	assert_string_equal(query(p, 4),
			    "delimiter=%2F&list-type=2&max-keys=2&prefix="
			    "seatunnel%2Fcheckpoint%2F123%2F");
}

static void test_query_empty_value_and_delete(void **state)
{
	struct s3_param p[] = {{"delete", ""}};
	struct s3_param q[] = {{"delete", NULL}, {"a", "1"}};

	(void)state;
	assert_string_equal(query(p, 1), "delete=");
	assert_string_equal(query(q, 2), "a=1&delete=");
}

static void test_query_continuation_token(void **state)
{
	struct s3_param p[] = {
		{"list-type", "2"},
		{"continuation-token", "1uM/+QtS6x4=/Z3wg=="},
	};

	(void)state;
	assert_string_equal(query(p, 2), "continuation-token=1uM%2F%2BQtS6x4%"
					 "3D%2FZ3wg%3D%3D&list-type=2");
}

static void test_query_sorts_by_encoded_name(void **state)
{
	/* '%' (0x25) sorts before letters once encoded */
	struct s3_param p[] = {{"b", "x"}, {"a b", "y"}, {"a", "z"}};

	(void)state;
	assert_string_equal(query(p, 3), "a=z&a%20b=y&b=x");
}

static void test_query_too_many(void **state)
{
	struct s3_param p[17];
	struct buf b;

	(void)state;
	for (size_t i = 0; i < 17; i++)
		p[i] = (struct s3_param){"a", "b"};
	buf_init(&b, 4096);
	assert_int_equal(s3_query_build(&b, p, 17), -E2BIG);
	buf_release(&b);
}

static void test_uri_every_scheme(void **state)
{
	static const struct {
		const char *uri;
		enum s3_provider prov;
	} t[] = {
		{"s3://b/p/", S3_PROV_AWS},  {"s3a://b/p/", S3_PROV_AWS},
		{"S3N://b/p/", S3_PROV_AWS}, {"oss://b/p/", S3_PROV_OSS},
		{"cos://b/p/", S3_PROV_COS}, {"cosn://b/p/", S3_PROV_COS},
		{"gs://b/p/", S3_PROV_GCS},
	};
	struct s3_uri u;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(s3_uri_parse(t[i].uri, &u), 0);
		assert_int_equal(u.prov, t[i].prov);
		assert_string_equal(u.bucket, "b");
		assert_string_equal(u.prefix, "p/");
	}
}

static void test_uri_prefix_normalised(void **state)
{
	struct s3_uri u;

	(void)state;
	assert_int_equal(s3_uri_parse("s3a://test//seatunnel/checkpoint", &u),
			 0);
	assert_string_equal(u.bucket, "test");
	assert_string_equal(u.prefix, "seatunnel/checkpoint/");
	assert_int_equal(s3_uri_parse("s3://bucket", &u), 0);
	assert_string_equal(u.prefix, "");
	assert_int_equal(s3_uri_parse("s3://bucket/", &u), 0);
	assert_string_equal(u.prefix, "");
	assert_int_equal(s3_uri_parse("gs://my.dotted.bucket/x y/", &u), 0);
	assert_string_equal(u.bucket, "my.dotted.bucket");
	assert_string_equal(u.prefix, "x y/");
}

static void test_uri_rejects_bad(void **state)
{
	static const char *const bad[] = {
		"http://b/p/", "s3:/b/p",	  "s3:///p/",	  "s3://b@x/p",
		"s3://b/../p", "s3://b/./p",	  "s3://b/p?x=1", "s3://b/p#f",
		"s3://b/a\nb", "hdfs://b/p",	  "s3://",	  "nope",
		"s3://b:80/p", "s3://b/p/../../",
	};
	struct s3_uri u;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(s3_uri_parse(bad[i], &u), -EINVAL);
	assert_int_equal(s3_uri_parse(NULL, &u), -EINVAL);
}

static void test_uri_too_long(void **state)
{
	char uri[1200] = "s3://b/";
	struct s3_uri u;

	(void)state;
	memset(uri + 7, 'a', 1100);
	uri[1107] = '\0';
	assert_int_equal(s3_uri_parse(uri, &u), -EINVAL);
}

static void test_endpoint_defaults(void **state)
{
	char ep[256];

	(void)state;
	assert_int_equal(s3_endpoint_default(S3_PROV_AWS, NULL, ep, sizeof(ep)),
			 0);
	assert_string_equal(ep, "https://s3.us-east-1.amazonaws.com");
	assert_int_equal(
		s3_endpoint_default(S3_PROV_AWS, "eu-west-1", ep, sizeof(ep)),
		0);
	assert_string_equal(ep, "https://s3.eu-west-1.amazonaws.com");
	assert_int_equal(
		s3_endpoint_default(S3_PROV_OSS, "cn-hangzhou", ep, sizeof(ep)),
		0);
	assert_string_equal(ep, "https://oss-cn-hangzhou.aliyuncs.com");
	assert_int_equal(
		s3_endpoint_default(S3_PROV_COS, "ap-beijing", ep, sizeof(ep)),
		0);
	assert_string_equal(ep, "https://cos.ap-beijing.myqcloud.com");
	assert_int_equal(
		s3_endpoint_default(S3_PROV_GCS, "auto", ep, sizeof(ep)), 0);
	assert_string_equal(ep, "https://storage.googleapis.com");
	assert_int_equal(
		s3_endpoint_default(S3_PROV_AWS, "x/evil", ep, sizeof(ep)),
		-EINVAL);
	assert_int_equal(s3_endpoint_default(S3_PROV_AWS, "eu-west-1", ep, 10),
			 -ENAMETOOLONG);
	assert_string_equal(s3_region_default(S3_PROV_AWS), "us-east-1");
	assert_string_equal(s3_region_default(S3_PROV_GCS), "auto");
}

static void test_region_from_endpoint(void **state)
{
	char r[64];

	(void)state;
	assert_int_equal(
		s3_region_from_endpoint("https://oss-cn-shanghai.aliyuncs.com",
					r, sizeof(r)),
		0);
	assert_string_equal(r, "cn-shanghai");
	assert_int_equal(
		s3_region_from_endpoint("oss-cn-beijing-internal.aliyuncs.com",
					r, sizeof(r)),
		0);
	assert_string_equal(r, "cn-beijing");
	assert_int_equal(
		s3_region_from_endpoint(
			"https://cos.ap-guangzhou.myqcloud.com/", r, sizeof(r)),
		0);
	assert_string_equal(r, "ap-guangzhou");
	assert_int_equal(s3_region_from_endpoint(
				 "https://s3.eu-central-1.amazonaws.com:443", r,
				 sizeof(r)),
			 0);
	assert_string_equal(r, "eu-central-1");
	assert_int_equal(
		s3_region_from_endpoint("http://127.0.0.1:4568", r, sizeof(r)),
		-ENOENT);
	assert_int_equal(s3_region_from_endpoint("https://s3.amazonaws.com", r,
						 sizeof(r)),
			 -ENOENT);
}

static void test_endpoint_is_local(void **state)
{
	(void)state;
	assert_true(s3_endpoint_is_local("http://127.0.0.1:4568"));
	assert_true(s3_endpoint_is_local("http://localhost:9000/"));
	assert_true(s3_endpoint_is_local("http://[::1]:9000"));
	assert_true(s3_endpoint_is_local("10.0.0.5"));
	assert_false(s3_endpoint_is_local("https://s3.amazonaws.com"));
	assert_false(s3_endpoint_is_local("https://minio.example:9000"));
}

static void test_addr_path_style(void **state)
{
	struct s3_addr a;
	struct buf b;
	struct s3_param p[] = {{"list-type", "2"}, {"delimiter", "/"}};

	(void)state;
	assert_int_equal(
		s3_addr_init(&a, "http://127.0.0.1:4568/", "ckpt", false), 0);
	assert_true(a.path_style);
	assert_string_equal(a.base, "http://127.0.0.1:4568/ckpt");
	buf_init(&b, 4096);
	assert_int_equal(s3_url_bucket(&b, &a, p, 2), 0);
	/* no trailing slash before '?' in path style */
	assert_string_equal(b.data, "http://127.0.0.1:4568/ckpt?delimiter=%2F&"
				    "list-type=2");
	buf_reset(&b);
	assert_int_equal(s3_url_object(&b, &a, "a b/é*+.ser", NULL, 0), 0);
	assert_string_equal(b.data, "http://127.0.0.1:4568/ckpt/a%20b/"
				    "%C3%A9%2A%2B.ser");
	buf_release(&b);
}

static void test_addr_virtual_hosted(void **state)
{
	struct s3_addr a;
	struct buf b;
	struct s3_param p[] = {{"delete", ""}};

	(void)state;
	assert_int_equal(s3_addr_init(&a, "https://s3.us-east-1.amazonaws.com",
				      "ckpt", false),
			 0);
	assert_false(a.path_style);
	assert_string_equal(a.base, "https://ckpt.s3.us-east-1.amazonaws.com");
	buf_init(&b, 4096);
	assert_int_equal(s3_url_bucket(&b, &a, p, 1), 0);
	assert_string_equal(b.data,
			    "https://ckpt.s3.us-east-1.amazonaws.com/?delete=");
	buf_reset(&b);
	assert_int_equal(s3_url_object(&b, &a, "k/x", NULL, 0), 0);
	assert_string_equal(b.data,
			    "https://ckpt.s3.us-east-1.amazonaws.com/k/x");
	buf_release(&b);
	/* forced path style, scheme-less endpoint means https */
	assert_int_equal(s3_addr_init(&a, "minio.example:9000", "ckpt", true),
			 0);
	assert_true(a.path_style);
	assert_string_equal(a.base, "https://minio.example:9000/ckpt");
	/* a dotted bucket over https cannot be a sub-domain */
	assert_int_equal(s3_addr_init(&a, "https://storage.googleapis.com",
				      "my.bucket", false),
			 0);
	assert_true(a.path_style);
	assert_string_equal(a.base, "https://storage.googleapis.com/my.bucket");
	/* upper-case scheme is normalised */
	assert_int_equal(s3_addr_init(&a,
				      "HTTPS://oss-cn-hangzhou.aliyuncs.com",
				      "b", false),
			 0);
	assert_string_equal(a.base, "https://b.oss-cn-hangzhou.aliyuncs.com");
}

static void test_addr_rejects_bad(void **state)
{
	struct s3_addr a;

	(void)state;
	assert_int_equal(s3_addr_init(&a, "ftp://host", "b", false), -EINVAL);
	assert_int_equal(s3_addr_init(&a, "http://u:p@host", "b", false),
			 -EINVAL);
	assert_int_equal(s3_addr_init(&a, "http://", "b", false), -EINVAL);
	assert_int_equal(s3_addr_init(&a, "", "b", false), -EINVAL);
	assert_int_equal(s3_addr_init(&a, "http://h st", "b", false), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pct_encode_unreserved_kept),
		cmocka_unit_test(test_pct_encode_hostile_keys),
		cmocka_unit_test(test_query_sorted_encoded),
		cmocka_unit_test(test_query_empty_value_and_delete),
		cmocka_unit_test(test_query_continuation_token),
		cmocka_unit_test(test_query_sorts_by_encoded_name),
		cmocka_unit_test(test_query_too_many),
		cmocka_unit_test(test_uri_every_scheme),
		cmocka_unit_test(test_uri_prefix_normalised),
		cmocka_unit_test(test_uri_rejects_bad),
		cmocka_unit_test(test_uri_too_long),
		cmocka_unit_test(test_endpoint_defaults),
		cmocka_unit_test(test_region_from_endpoint),
		cmocka_unit_test(test_endpoint_is_local),
		cmocka_unit_test(test_addr_path_style),
		cmocka_unit_test(test_addr_virtual_hosted),
		cmocka_unit_test(test_addr_rejects_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
