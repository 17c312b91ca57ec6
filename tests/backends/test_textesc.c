/*
 * Tests for backends/util/textesc.c: what is escaped (C0, DEL, C1, bidi and
 * line-separator format characters, invalid UTF-8, the backslash), what is
 * kept (printable ASCII, other UTF-8), the flags, and that the output is
 * one line of printable text that unescapes to the input.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/textesc.h"

static char out[8192];

static const char *esc_n(const char *s, size_t n, unsigned flags)
{
	struct buf b;

	buf_init(&b, sizeof(out) - 1);
	assert_int_equal(textesc_append(&b, s, n, flags), 0);
	memcpy(out, b.data ? b.data : "", b.len + 1);
	buf_release(&b);
	return out;
}

static const char *esc(const char *s)
{
	return esc_n(s, strlen(s), 0);
}

static void test_textesc_forged_lines_and_terminal_escapes(void **state)
{
	(void)state;
	assert_string_equal(esc("x\nstate       FINISHED\r\tok"),
			    "x\\nstate       FINISHED\\r\\tok");
	assert_string_equal(esc("\x1b]0;pwned\a\x1b[2J\x7f\x01"),
			    "\\x1b]0;pwned\\x07\\x1b[2J\\x7f\\x01");
	/* C1 CSI (U+009B) and NEL (U+0085), bidi override U+202E, isolate
	 * U+2066, line separator U+2028, ALM U+061C */
	assert_string_equal(esc("\xc2\x9b"
				"31m|\xc2\x85|\xe2\x80\xae|"
				"\xe2\x81\xa6|\xe2\x80\xa8|\xd8\x9c"),
			    "\\xc2\\x9b"
			    "31m|\\xc2\\x85|\\xe2\\x80\\xae|"
			    "\\xe2\\x81\\xa6|\\xe2\\x80\\xa8|\\xd8\\x9c");
	/* the backslash itself, so that the output is unambiguous */
	assert_string_equal(esc("a\\nb"), "a\\\\nb");
}

static void test_textesc_keeps_text(void **state)
{
	(void)state;
	assert_string_equal(esc("fake_to_console a/b %2F \"q\" ~"),
			    "fake_to_console a/b %2F \"q\" ~");
	/* é, U+00A0 (first after C1), €, U+2029 is escaped but U+202F not,
	 * a 4-byte emoji, U+10FFFF */
	assert_string_equal(esc("\xc3\xa9\xc2\xa0\xe2\x82\xac\xe2\x80\xaf"
				"\xf0\x9f\x90\xb3\xf4\x8f\xbf\xbf"),
			    "\xc3\xa9\xc2\xa0\xe2\x82\xac\xe2\x80\xaf"
			    "\xf0\x9f\x90\xb3\xf4\x8f\xbf\xbf");
	assert_string_equal(esc(""), "");
}

static void test_textesc_invalid_utf8(void **state)
{
	(void)state;
	/* stray continuation, overlong, surrogate, past U+10FFFF, truncated */
	assert_string_equal(esc("\x80|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|"
				"\xe2\x82"),
			    "\\x80|\\xc0\\xaf|\\xed\\xa0\\x80|"
			    "\\xf4\\x90\\x80\\x80|\\xe2\\x82");
	/* length-bounded: a sequence cut by n is invalid, a NUL is escaped */
	assert_string_equal(esc_n("\xc3\xa9", 1, 0), "\\xc3");
	assert_string_equal(esc_n("a\0b", 3, 0), "a\\x00b");
}

static void test_textesc_flags(void **state)
{
	(void)state;
	assert_string_equal(esc_n("say \"\xc3\xa9\"", 8, TEXTESC_QUOTE),
			    "say \\\"\xc3\xa9\\\"");
	assert_string_equal(esc_n("\xc3\xa9\xff", 3, TEXTESC_ASCII),
			    "\\xc3\\xa9\\xff");
	assert_string_equal(esc_n("\xf0\x9f\x90\xb3", 4, TEXTESC_ASCII),
			    "\\xf0\\x9f\\x90\\xb3");
}

/* Undo the escapes: \\ \n \r \t \" \xHH */
static size_t unescape(const char *s, char *dst)
{
	size_t o = 0;

	for (; *s; s++) {
		if (*s != '\\') {
			dst[o++] = *s;
			continue;
		}
		s++;
		if (*s == 'n')
			dst[o++] = '\n';
		else if (*s == 'r')
			dst[o++] = '\r';
		else if (*s == 't')
			dst[o++] = '\t';
		else if (*s == 'x') {
			char h[3] = {s[1], s[2], 0};

			dst[o++] = (char)strtol(h, NULL, 16);
			s += 2;
		} else
			dst[o++] = *s;
	}
	return o;
}

static void test_textesc_round_trip_every_byte_pair(void **state)
{
	unsigned char in[3];
	char back[64];

	(void)state;
	for (unsigned a = 0; a < 256; a++)
		for (unsigned b = 0; b < 256; b++) {
			const char *e;

			in[0] = (unsigned char)a;
			in[1] = (unsigned char)b;
			in[2] = 0xa9;
			e = esc_n((const char *)in, 3, 0);
			for (const char *p = e; *p; p++)
				if ((unsigned char)*p < 0x20 ||
				    (unsigned char)*p == 0x7f)
					fail_msg("control 0x%02x in output",
						 (unsigned char)*p);
			if (unescape(e, back) != 3 || memcmp(back, in, 3))
				fail_msg("%02x %02x a9 does not round-trip", a,
					 b);
		}
}

static void test_textesc_cap(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b, 8);
	assert_int_equal(textesc_append(&b, "\x1b\x1b\x1b", 3, 0), -EFBIG);
	buf_release(&b);
	buf_init(&b, 8);
	assert_int_equal(textesc_puts(&b, NULL), 0);
	assert_int_equal(b.len, 0);
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_textesc_forged_lines_and_terminal_escapes),
		cmocka_unit_test(test_textesc_keeps_text),
		cmocka_unit_test(test_textesc_invalid_utf8),
		cmocka_unit_test(test_textesc_flags),
		cmocka_unit_test(test_textesc_round_trip_every_byte_pair),
		cmocka_unit_test(test_textesc_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
