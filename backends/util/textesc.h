/*
 * textesc — text from outside (job names, engine messages, object and map
 * names) made safe for a line-oriented file that people `cat` and scripts
 * parse: it can neither forge a line nor drive a terminal.
 *
 * The escapes are C's: \\ for a backslash, \n \r \t, and \xHH for every
 * other byte that is shown escaped: C0 controls, DEL, the bytes of a C1
 * control (U+0080..U+009F: a UTF-8 terminal takes U+009B as CSI), of a
 * bidirectional or line-separator format character (U+061C, U+200E/F,
 * U+2028..U+202E, U+2066..U+2069: they reorder or break what is shown) and
 * of invalid UTF-8.  Printable ASCII and every other valid UTF-8 character
 * pass unchanged, so names in any script stay readable.  The output is
 * unambiguous: unescaping it gives back the input bytes.
 * Pure functions, thread-safe.
 */
#ifndef STFS_TEXTESC_H
#define STFS_TEXTESC_H

#include <stddef.h>

#include "util/buf.h"

/* flags of textesc_append() */
#define TEXTESC_ASCII 1u /* every byte >= 0x80 as \xHH (syslog, audit) */
#define TEXTESC_QUOTE 2u /* '"' as \" (inside a quoted value) */

/** What the character at s[0..n) (n >= 1) is; *len gets its byte length. */
enum textesc_class {
	TEXTESC_PLAIN,	 /* shown as is */
	TEXTESC_CONTROL, /* a control or format character: *len bytes */
	TEXTESC_INVALID, /* not UTF-8: *len is 1 */
};
enum textesc_class textesc_classify(const unsigned char *s, size_t n,
				    size_t *len);

/* longest replacement of one character (4 bytes, 5 each: "\\\\xHH") */
#define TEXTESC_REP_MAX 32

/**
 * The replacement of the character p[0..len) of class k, written to
 * rep[TEXTESC_REP_MAX]: its length, or 0 to keep the character as is.
 */
typedef size_t (*textesc_rep_fn)(const unsigned char *p, size_t len,
				 enum textesc_class k, char *rep, void *ctx);

/** Append s[0..n), each character replaced as fn says (the walk that
 * textesc_append() and other dialects, as Prometheus', share). */
int textesc_map(struct buf *out, const char *s, size_t n, textesc_rep_fn fn,
		void *ctx);

/** Append s[0..n) escaped.  0; -EFBIG / -ENOMEM as buf_append(). */
int textesc_append(struct buf *out, const char *s, size_t n, unsigned flags);
/** textesc_append() of a NUL-terminated string (NULL: nothing), no flags. */
int textesc_puts(struct buf *out, const char *s);

#endif
