/*
 * Unit tests for backends/util/buf.c: the cap, NUL termination, and the sticky
 * error that keeps a renderer from publishing a truncated text.
 */
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/buf.h"

static void test_buf_append_terminates(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 64);
	assert_int_equal(buf_puts(&b, "ab"), 0);
	assert_int_equal(buf_printf(&b, "%d-%s", 7, "x"), 0);
	assert_int_equal(b.len, 5);
	assert_string_equal(b.data, "ab7-x");
	assert_int_equal(buf_err(&b), 0);
	buf_release(&b);
}

static void test_buf_cap_refused_and_sticky(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 8);
	assert_int_equal(buf_puts(&b, "1234"), 0);
	/* over the cap: refused, the contents unchanged */
	assert_int_equal(buf_puts(&b, "56789"), -EFBIG);
	assert_string_equal(b.data, "1234");
	/* a later append that fits still works, but the error stays */
	assert_int_equal(buf_puts(&b, "5"), 0);
	assert_int_equal(buf_err(&b), -EFBIG);
	assert_int_equal(buf_printf(&b, "%s", "toolongtext"), -EFBIG);
	assert_int_equal(buf_err(&b), -EFBIG);
	buf_release(&b);
}

static void test_buf_reset_and_release_clear_error(void **state)
{
	struct buf b;
	char *p;
	size_t len;

	(void)state;
	buf_init(&b, 4);
	assert_int_equal(buf_puts(&b, "12345"), -EFBIG);
	assert_int_equal(buf_err(&b), -EFBIG);
	buf_reset(&b);
	assert_int_equal(buf_err(&b), 0);
	assert_int_equal(buf_puts(&b, "abcdef"), -EFBIG);
	buf_release(&b);
	assert_int_equal(buf_err(&b), 0);
	assert_int_equal(b.max, 4);
	assert_int_equal(buf_puts(&b, "ab"), 0);
	p = buf_detach(&b, &len);
	assert_non_null(p);
	assert_int_equal(len, 2);
	assert_string_equal(p, "ab");
	assert_int_equal(buf_err(&b), 0);
	free(p);
}

static void test_buf_detach_empty_is_string(void **state)
{
	struct buf b;
	size_t len = 99;
	char *p;

	(void)state;
	buf_init(&b, 16);
	p = buf_detach(&b, &len);
	assert_non_null(p);
	assert_int_equal(len, 0);
	assert_string_equal(p, "");
	free(p);
}

/* README "Memory": a detached text (a cached pseudo-file) keeps its length,
 * not the doubling's slack: 3,000 bytes appended grow the buffer to 4,096 */
static void test_buf_detach_fits(void **state)
{
	struct buf b;
	char chunk[100];
	size_t len;
	char *p;

	(void)state;
	memset(chunk, 'x', sizeof(chunk));
	buf_init(&b, 1 << 20);
	for (int i = 0; i < 30; i++)
		assert_int_equal(buf_append(&b, chunk, sizeof(chunk)), 0);
	p = buf_detach(&b, &len);
	assert_non_null(p);
	assert_int_equal(len, 3000);
	assert_int_equal(p[len], '\0');
	assert_int_equal(p[len - 1], 'x');
	assert_true(malloc_usable_size(p) < 3000 + 64);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_append_terminates),
		cmocka_unit_test(test_buf_cap_refused_and_sticky),
		cmocka_unit_test(test_buf_reset_and_release_clear_error),
		cmocka_unit_test(test_buf_detach_empty_is_string),
		cmocka_unit_test(test_buf_detach_fits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
