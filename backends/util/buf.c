#include "util/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
	b->err = 0;
}

static int buf_fail(struct buf *b, int rc)
{
	if (!b->err)
		b->err = rc;
	return rc;
}

int buf_err(const struct buf *b)
{
	return b->err;
}

static int buf_grow(struct buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > b->max || b->len > b->max - extra)
		return buf_fail(b, -EFBIG);
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return buf_fail(b, -ENOMEM);
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
	int rc = buf_grow(b, n);

	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n, rc;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return buf_fail(b, -EINVAL);
	rc = buf_grow(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->data)
		b->data[0] = '\0';
}

void buf_release(struct buf *b)
{
	free(b->data);
	buf_init(b, b->max);
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *p = b->data;

	/* README "Memory": what is kept (a cached pseudo-file) keeps its
	 * length, not the doubling's slack (up to as much again) */
	if (p && b->cap - b->len > 64) {
		char *q = realloc(p, b->len + 1);

		if (q)
			p = q;
	}
	if (!p)
		p = calloc(1, 1);
	if (len)
		*len = b->len;
	buf_init(b, b->max);
	return p;
}

void buf_fmt(char *dst, size_t sz, const char *fmt, ...)
{
	va_list ap;

	if (!sz)
		return;
	va_start(ap, fmt);
	vsnprintf(dst, sz, fmt, ap);
	va_end(ap);
}
