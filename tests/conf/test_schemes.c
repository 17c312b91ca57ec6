/*
 * Unit tests for the one scheme table (conf/schemes.h): every scheme conf
 * accepts in checkpoint=/imap= is served by a backend of the registry
 * (backends/backend.c), every backend of the registry serves a scheme of
 * the table, and a scheme outside the table is refused by both.
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

#include "backends/backend.h"
#include "conf/conf.h"
#include "conf/schemes.h"

/* a URI of scheme `s` that conf should accept */
static void uri_for(const struct stfs_scheme *s, char *out, size_t n)
{
	switch (s->addr) {
	case SCHEME_ADDR_PATH:
		snprintf(out, n, "%s:///tmp/seatunnel/ckpt/", s->name);
		break;
	case SCHEME_ADDR_HOST:
		snprintf(out, n, "%s://nn1:9870/seatunnel/ckpt/", s->name);
		break;
	case SCHEME_ADDR_BUCKET:
		snprintf(out, n, "%s://bucket-1/seatunnel/ckpt/", s->name);
		break;
	}
}

static bool conf_accepts(const char *uri)
{
	struct stfs_conf c;
	struct conf_err e;
	int rc;

	memset(&e, 0, sizeof(e));
	assert_int_equal(conf_init_defaults(&c), 0);
	rc = conf_set(&c, "checkpoint", uri, &e);
	if (!rc)
		rc = conf_set(&c, "imap", uri, &e);
	if (!rc)
		rc = conf_validate(&c, &e);
	conf_release(&c);
	return rc == 0;
}

static void test_every_scheme_is_served(void **state)
{
	const struct stfs_scheme *s;
	char uri[128];
	size_t n = 0;

	(void)state;
	for (size_t i = 0; (s = scheme_at(i)); i++, n++) {
		const struct be_ops *ops;

		uri_for(s, uri, sizeof(uri));
		if (!conf_accepts(uri))
			fail_msg("conf refuses %s", uri);
		ops = be_find(uri);
		if (!ops)
			fail_msg("no backend serves %s", uri);
		assert_string_equal(ops->name, s->backend);
	}
	assert_true(n >= 11);
}

static void test_every_backend_serves_a_scheme(void **state)
{
	const struct be_ops *ops;
	size_t n = 0;

	(void)state;
	for (size_t i = 0; (ops = be_registry_at(i)); i++, n++) {
		const struct stfs_scheme *s;
		bool served = false;

		for (size_t j = 0; (s = scheme_at(j)); j++)
			served |= !strcmp(s->backend, ops->name);
		if (!served)
			fail_msg("backend %s serves no scheme of the table",
				 ops->name);
	}
	assert_true(n >= 4);
	/* and every backend the table names is in the registry */
	for (size_t j = 0; scheme_at(j); j++) {
		bool found = false;

		for (size_t i = 0; (ops = be_registry_at(i)); i++)
			found |= !strcmp(scheme_at(j)->backend, ops->name);
		if (!found)
			fail_msg("scheme %s names backend %s, not registered",
				 scheme_at(j)->name, scheme_at(j)->backend);
	}
}

/* conf and the registry agree on schemes in and out of the table */
static void test_conf_and_registry_agree(void **state)
{
	static const char *const uris[] = {
		"s3n://bucket-1/ckpt/",	  "S3A://bucket-1/ckpt/",
		"hdfs://nn1:8020/ckpt/",  "webhdfs://nn1:9870/ckpt/",
		"ftp://host/ckpt/",	  "abfs://c@acct/ckpt/",
		"wasb://bucket-1/ckpt/",  "gcs://bucket-1/ckpt/",
		"viewfs://cluster/ckpt/", "file:///tmp/ckpt/",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(uris) / sizeof(uris[0]); i++) {
		bool conf_ok = conf_accepts(uris[i]);
		bool served = be_find(uris[i]) != NULL;

		if (conf_ok != served)
			fail_msg("%s: conf %s it, the registry %s it", uris[i],
				 conf_ok ? "accepts" : "refuses",
				 served ? "serves" : "does not serve");
	}
	/* the regression of issue 9: s3.c serves s3n://, conf refused it */
	assert_true(conf_accepts("s3n://bucket-1/ckpt/"));
	assert_false(conf_accepts("ftp://host/ckpt/"));
	assert_null(be_find("ftp://host/ckpt/"));
}

static void test_scheme_lookup(void **state)
{
	const char *names = scheme_unknown_why();

	(void)state;
	assert_non_null(scheme_find("S3N", 3));
	assert_int_equal(scheme_find("cosn", 4)->prov, SCHEME_PROV_COS);
	assert_null(scheme_find("s3", 1));
	assert_null(scheme_find("s3x", 3));
	assert_string_equal(scheme_of_uri("/tmp/x")->name, "file");
	assert_null(scheme_of_uri("no-scheme"));
	assert_null(scheme_of_uri(""));
	for (size_t i = 0; scheme_at(i); i++)
		assert_non_null(strstr(names, scheme_at(i)->name));
	assert_non_null(strstr(names, "(file, hdfs, "));
	assert_non_null(strstr(names, ", gs)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_scheme_is_served),
		cmocka_unit_test(test_every_backend_serves_a_scheme),
		cmocka_unit_test(test_conf_and_registry_agree),
		cmocka_unit_test(test_scheme_lookup),
	};

	return cmocka_run_group_tests_name("schemes", tests, NULL, NULL);
}
