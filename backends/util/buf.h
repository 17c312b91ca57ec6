/*
 * buf — a growable byte buffer with a hard cap (curl's dynbuf, git's strbuf).
 *
 * Invariants: after buf_init() `data` may be NULL and `len` is 0; once
 * anything was appended, `data` is NUL-terminated (the NUL is not counted in
 * `len`).  A buffer never grows past `max` bytes: an append that would is
 * refused with -EFBIG and leaves the buffer as it was.
 * Errors are sticky (git's strbuf has none; curl's dynbuf frees on error):
 * the first failed append is kept in `err` until buf_reset()/buf_release(),
 * so a renderer that ignores one append's return still cannot hand out a
 * silently truncated text — whoever publishes the contents checks buf_err().
 * Not thread-safe; a buffer belongs to one thread at a time.
 */
#ifndef STFS_BUF_H
#define STFS_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max;
	int err; /* first failed append (-EFBIG, -ENOMEM, -EINVAL), or 0 */
};

#define BUF_DEFAULT_MAX ((size_t)1 << 20)

/** Set up an empty buffer that may hold at most `max` bytes. Allocates nothing.
 */
void buf_init(struct buf *b, size_t max);
/** Append `n` bytes. 0; -EFBIG past the cap; -ENOMEM. */
int buf_append(struct buf *b, const void *p, size_t n);
/** Append a NUL-terminated string. Same returns as buf_append(). */
int buf_puts(struct buf *b, const char *s);
/** printf-append. Same returns as buf_append(). */
int buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/**
 * snprintf into a fixed array, truncating silently (messages, names): for
 * places where a cut-off text is fine and a warning about it is not.
 */
void buf_fmt(char *dst, size_t sz, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** The first append error since init/reset (0: the contents are whole). */
int buf_err(const struct buf *b);

/** Drop the contents and the error, keep the allocation. */
void buf_reset(struct buf *b);
/** Free the contents; the buffer is empty again (buf_init state, same max,
 * no error). */
void buf_release(struct buf *b);
/**
 * Hand the contents to the caller, who must free() them; `*len` (may be
 * NULL) receives the length.  Returns a NUL-terminated string, never NULL
 * unless out of memory.  The buffer is empty afterwards.
 */
char *buf_detach(struct buf *b, size_t *len);

#endif
