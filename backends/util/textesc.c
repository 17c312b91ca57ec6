/*
 * textesc — see textesc.h.
 */
#include "util/textesc.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Format characters that reorder or break the text a terminal shows. */
static bool is_format(uint32_t cp)
{
	return cp == 0x061c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

enum textesc_class textesc_classify(const unsigned char *s, size_t n,
				    size_t *len)
{
	unsigned char c = s[0];
	size_t l, i;
	uint32_t cp;

	*len = 1;
	if (c < 0x80)
		return c < 0x20 || c == 0x7f ? TEXTESC_CONTROL : TEXTESC_PLAIN;
	if (c >= 0xc2 && c <= 0xdf) {
		l = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		l = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		l = 4;
		cp = c & 0x07;
	} else {
		return TEXTESC_INVALID;
	}
	if (n < l)
		return TEXTESC_INVALID;
	for (i = 1; i < l; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return TEXTESC_INVALID;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong, surrogate, past U+10FFFF */
	if ((l == 3 && cp < 0x800) || (l == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return TEXTESC_INVALID;
	*len = l;
	if (cp <= 0x9f || is_format(cp))
		return TEXTESC_CONTROL;
	return TEXTESC_PLAIN;
}

/* The escape of one byte shown escaped. */
static size_t escape_byte(unsigned char c, char esc[4])
{
	static const char hex[] = "0123456789abcdef";

	esc[0] = '\\';
	switch (c) {
	case '\n':
		esc[1] = 'n';
		return 2;
	case '\r':
		esc[1] = 'r';
		return 2;
	case '\t':
		esc[1] = 't';
		return 2;
	default:
		esc[1] = 'x';
		esc[2] = hex[c >> 4];
		esc[3] = hex[c & 15];
		return 4;
	}
}

int textesc_map(struct buf *out, const char *s, size_t n, textesc_rep_fn fn,
		void *ctx)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0, l, e;
	char rep[TEXTESC_REP_MAX];
	int rc;

	while (i < n) {
		enum textesc_class k = textesc_classify(p + i, n - i, &l);

		e = fn(p + i, l, k, rep, ctx);
		if (!e) {
			i += l;
			run += l;
			continue;
		}
		rc = buf_append(out, p + i - run, run);
		if (!rc)
			rc = buf_append(out, rep, e);
		if (rc)
			return rc;
		run = 0;
		i += l;
	}
	return buf_append(out, p + i - run, run);
}

static size_t c_escape(const unsigned char *p, size_t l, enum textesc_class k,
		       char *rep, void *ctx)
{
	unsigned flags = *(const unsigned *)ctx;
	size_t e = 0;

	if (p[0] == '\\' || (p[0] == '"' && (flags & TEXTESC_QUOTE))) {
		rep[0] = '\\';
		rep[1] = (char)p[0];
		return 2;
	}
	if (k != TEXTESC_PLAIN || (p[0] >= 0x80 && (flags & TEXTESC_ASCII)))
		for (size_t b = 0; b < l; b++)
			e += escape_byte(p[b], rep + e);
	return e;
}

int textesc_append(struct buf *out, const char *s, size_t n, unsigned flags)
{
	return textesc_map(out, s, n, c_escape, &flags);
}

int textesc_puts(struct buf *out, const char *s)
{
	return s ? textesc_append(out, s, strlen(s), 0) : 0;
}
