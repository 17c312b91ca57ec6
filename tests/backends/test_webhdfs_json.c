/*
 * Tests for backends/webhdfs_json.c against tests/fixtures/webhdfs/ (real
 * answers of a Hadoop 3.5.0 namenode; run with cwd = the repo root): paged
 * and plain listings, file status, DELETE's boolean, RemoteException bodies,
 * hostile and malformed documents, and the exception table.
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
#include "backends/webhdfs_json.h"

#define FIX "tests/fixtures/webhdfs/"

static char *load(const char *name, size_t *len)
{
	char *p = NULL;

	assert_int_equal(tu_load(FIX, name, &p, len), 0);
	assert_true(*len > 0);
	return p;
}

static int parse_fixture(const char *name, struct whj_list *l)
{
	size_t len;
	char *x = load(name, &len);
	int rc = whj_parse_list(x, len, l);

	free(x);
	return rc;
}

static void test_batch_pages(void **state)
{
	struct whj_list l;

	(void)state;
	assert_int_equal(parse_fixture("batch_page1.json", &l), 0);
	assert_true(l.batch);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.remaining, 4);
	assert_string_equal(l.ents[0].name, "1.ser");
	assert_string_equal(l.ents[1].name, "2.ser");
	assert_int_equal(l.ents[0].type, WHJ_FILE);
	assert_int_equal(l.ents[0].length, 5);
	assert_int_equal(l.ents[0].mtime_ms, 1796123056877LL);
	assert_int_equal(l.n_bad, 0);
	whj_list_release(&l);

	assert_int_equal(parse_fixture("batch_page2.json", &l), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.remaining, 2);
	assert_string_equal(l.ents[0].name, "3.ser");
	assert_string_equal(l.ents[1].name, "4.ser");
	whj_list_release(&l);

	assert_int_equal(parse_fixture("batch_last.json", &l), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.remaining, 0);
	assert_string_equal(l.ents[0].name, "5.ser");
	assert_string_equal(l.ents[1].name, "sub");
	assert_int_equal(l.ents[1].type, WHJ_DIR);
	assert_int_equal(l.ents[1].length, 0);
	whj_list_release(&l);

	assert_int_equal(parse_fixture("batch_empty.json", &l), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.remaining, 0);
	whj_list_release(&l);

	assert_int_equal(parse_fixture("err_startafter_gone.json", &l), 0);
	assert_int_equal(l.n, 0);
	whj_list_release(&l);
}

static void test_listing_of_file(void **state)
{
	struct whj_list l;

	(void)state;
	/* a file lists as itself with an empty pathSuffix */
	assert_int_equal(parse_fixture("batch_of_file.json", &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.ents[0].name, "");
	assert_int_equal(l.ents[0].type, WHJ_FILE);
	whj_list_release(&l);
}

static void test_liststatus(void **state)
{
	struct whj_list l;

	(void)state;
	assert_int_equal(parse_fixture("liststatus.json", &l), 0);
	assert_false(l.batch);
	assert_int_equal(l.n, 6);
	assert_string_equal(l.ents[4].name, "5.ser");
	assert_string_equal(l.ents[5].name, "sub");
	assert_int_equal(l.ents[5].type, WHJ_DIR);
	whj_list_release(&l);
}

static void test_status(void **state)
{
	struct whj_entry e;
	size_t len;
	char *x;

	(void)state;
	x = load("filestatus_file.json", &len);
	assert_int_equal(whj_parse_status(x, len, &e), 0);
	assert_int_equal(e.type, WHJ_FILE);
	assert_int_equal(e.length, 5);
	assert_int_equal(e.mtime_ms, 1796123056877LL);
	assert_null(e.name);
	free(x);
	x = load("filestatus_dir.json", &len);
	assert_int_equal(whj_parse_status(x, len, &e), 0);
	assert_int_equal(e.type, WHJ_DIR);
	free(x);
	/* a listing is no status, an error body neither */
	x = load("batch_page1.json", &len);
	assert_int_equal(whj_parse_status(x, len, &e), -EPROTO);
	free(x);
	x = load("err_filenotfound.json", &len);
	assert_int_equal(whj_parse_status(x, len, &e), -EPROTO);
	free(x);
}

static void test_errors(void **state)
{
	static const struct {
		const char *file, *exc;
		int err;
		unsigned flags;
	} t[] = {
		{"err_filenotfound.json", "FileNotFoundException", -ENOENT, 0},
		{"err_standby.json", "StandbyException", -EAGAIN, WHJ_FAILOVER},
		{"err_accesscontrol.json", "AccessControlException", -EACCES,
		 0},
		{"err_delete_nonempty.json", "PathIsNotEmptyDirectoryException",
		 -ENOTEMPTY, 0},
		{"err_offset.json", "IOException", 0, 0},
	};
	struct whj_error e;
	unsigned fl;
	size_t len;
	char *x;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		x = load(t[i].file, &len);
		assert_int_equal(whj_parse_error(x, len, &e), 0);
		assert_string_equal(e.exception, t[i].exc);
		assert_true(e.message[0] != '\0');
		assert_int_equal(whj_exception_errno(e.exception, &fl),
				 t[i].err);
		assert_int_equal(fl, t[i].flags);
		free(x);
	}
	/* the SPNEGO filter's 401 is HTML */
	x = strdup("<html><body><h2>HTTP ERROR 401 Authentication "
		   "required</h2></body></html>");
	assert_int_equal(whj_parse_error(x, strlen(x), &e), -EPROTO);
	assert_string_equal(e.exception, "");
	free(x);
	/* control characters in a message are neutralised */
	x = strdup("{\"RemoteException\":{\"exception\":\"X\",\"message\":"
		   "\"a\\nb\\u001bc\"}}");
	assert_int_equal(whj_parse_error(x, strlen(x), &e), 0);
	assert_string_equal(e.message, "a?b?c");
	free(x);
	assert_int_equal(whj_exception_errno("", &fl), 0);
	assert_int_equal(whj_exception_errno("NoSuchThing", NULL), 0);
	assert_int_equal(whj_exception_errno("RetriableException", &fl),
			 -EAGAIN);
	assert_int_equal(fl, WHJ_RETRY);
}

static void test_boolean(void **state)
{
	bool v = false;

	(void)state;
	assert_int_equal(whj_parse_boolean("{\"boolean\":true}", 16, &v), 0);
	assert_true(v);
	assert_int_equal(whj_parse_boolean("{\"boolean\":false}", 17, &v), 0);
	assert_false(v);
	assert_int_equal(whj_parse_boolean("{\"boolean\":1}", 13, &v), -EPROTO);
	assert_int_equal(whj_parse_boolean("true", 4, &v), -EPROTO);
}

/* GETDELEGATIONTOKEN / RENEWDELEGATIONTOKEN answers of a kerberized 3.5.0 */
static void test_token(void **state)
{
	char tok[WHJ_TOKEN_MAX + 1], small[8];
	size_t len;
	char *x = load("token.json", &len);
	int64_t v = 0;
	struct whj_error e;

	(void)state;
	assert_int_equal(whj_parse_token(x, len, tok, sizeof(tok)), 0);
	assert_int_equal(strncmp(tok, "HAAEc3RmcwRzdGZz", 16), 0);
	assert_int_equal(strlen(tok), 114);
	/* too small a buffer is refused, not truncated */
	assert_int_equal(whj_parse_token(x, len, small, sizeof(small)),
			 -EPROTO);
	free(x);
	x = load("renew.json", &len);
	assert_int_equal(whj_parse_long(x, len, &v), 0);
	assert_true(v == 1796219042300LL);
	free(x);
	/* a cancelled token: 403 SecurityException naming InvalidToken */
	x = load("err_token_cancelled.json", &len);
	assert_int_equal(whj_parse_error(x, len, &e), 0);
	assert_string_equal(e.exception, "SecurityException");
	assert_non_null(strstr(e.message, "InvalidToken"));
	free(x);
	/* the SPNEGO filter's 401 is HTML */
	x = load("err_401_spnego.html", &len);
	assert_int_equal(whj_parse_error(x, len, &e), -EPROTO);
	assert_int_equal(whj_parse_token(x, len, tok, sizeof(tok)), -EPROTO);
	free(x);
	assert_int_equal(whj_parse_token("{\"Token\":null}",
					 strlen("{\"Token\":null}"), tok,
					 sizeof(tok)),
			 -EPROTO);
	assert_int_equal(
		whj_parse_token("{\"Token\":{\"urlString\":\"a&b=c\"}}",
				strlen("{\"Token\":{\"urlString\":\"a&b=c\"}}"),
				tok, sizeof(tok)),
		-EPROTO);
	assert_int_equal(
		whj_parse_token("{\"Token\":{\"urlString\":\"\"}}",
				strlen("{\"Token\":{\"urlString\":\"\"}}"), tok,
				sizeof(tok)),
		-EPROTO);
	assert_int_equal(whj_parse_long("{\"long\":\"1\"}",
					strlen("{\"long\":\"1\"}"), &v),
			 -EPROTO);
}

static void test_hostile(void **state)
{
	static const char *const bad_docs[] = {
		"",
		"[]",
		"{\"FileStatuses\":{}}",
		"{\"FileStatuses\":{\"FileStatus\":{}}}",
		"{\"DirectoryListing\":{\"partialListing\":{\"FileStatuses\":"
		"{\"FileStatus\":[]}}}}", /* no remainingEntries */
		"{\"DirectoryListing\":{\"partialListing\":{\"FileStatuses\":"
		"{\"FileStatus\":[]}},\"remainingEntries\":-1}}",
		"{\"FileStatuses\":{\"FileStatus\":[]},\"FileStatuses\":{}}",
		"{\"FileStatuses\":{\"FileStatus\":[",
		/* jansson refuses a NUL inside a string */
		"{\"FileStatuses\":{\"FileStatus\":[{\"pathSuffix\":"
		"\"n\\u0000ul\",\"type\":\"FILE\"}]}}",
	};
	/* each entry bad in its own way, plus one good one */
	const char *mixed =
		"{\"FileStatuses\":{\"FileStatus\":["
		"1,"
		"{\"type\":\"FILE\",\"length\":1},"
		"{\"pathSuffix\":\"a/b\",\"type\":\"FILE\",\"length\":1},"
		"{\"pathSuffix\":\"..\",\"type\":\"DIRECTORY\"},"
		"{\"pathSuffix\":\".\",\"type\":\"DIRECTORY\"},"
		"{\"pathSuffix\":\"\",\"type\":\"FILE\",\"length\":1},"
		"{\"pathSuffix\":\"c\\u0001\",\"type\":\"FILE\",\"length\":1},"
		"{\"pathSuffix\":\"neg\",\"type\":\"FILE\",\"length\":-5},"
		"{\"pathSuffix\":\"str\",\"type\":\"FILE\",\"length\":\"5\"},"
		"{\"pathSuffix\":\"odd\",\"type\":\"SOCKET\"},"
		"{\"pathSuffix\":\"ok\",\"type\":\"FILE\",\"length\":7,"
		"\"modificationTime\":-3}"
		"]}}";
	struct whj_list l;

	(void)state;
	for (size_t i = 0; i < sizeof(bad_docs) / sizeof(bad_docs[0]); i++) {
		assert_int_equal(
			whj_parse_list(bad_docs[i], strlen(bad_docs[i]), &l),
			-EPROTO);
		assert_int_equal(l.n, 0);
		assert_null(l.ents);
	}
	assert_int_equal(whj_parse_list(mixed, strlen(mixed), &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.n_bad, 10);
	assert_string_equal(l.ents[0].name, "ok");
	assert_int_equal(l.ents[0].length, 7);
	assert_int_equal(l.ents[0].mtime_ms, 0);
	whj_list_release(&l);
	assert_int_equal(whj_parse_list("{}", WHJ_MAX + 1, &l), -EFBIG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_pages),
		cmocka_unit_test(test_listing_of_file),
		cmocka_unit_test(test_liststatus),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_boolean),
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
