/*
 * protostuff — bounded decoders for SeaTunnel's protostuff 1.8.0 bytes.
 *
 * Ground truth: tests/fixtures/protostuff/README.md.  Everything here reads
 * through `struct rd`, one cursor over bytes in memory or over an object
 * read in windows, that never goes past its end: running out of bytes is
 * -ENODATA inside this file (so the head decoder can tell "need more bytes"
 * from garbage) and becomes -EPROTO (or -EAGAIN) at the API.
 */
#include "model/protostuff.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

enum {
	WT_VARINT = 0,
	WT_I64 = 1,
	WT_LEN = 2,
	WT_SGROUP = 3,
	WT_EGROUP = 4,
	WT_I32 = 5,
};

#define PSTUFF_MAX_DEPTH 64
#define PSTUFF_MAX_ELEMS 65536 /* slots of one list/array in the JSON view */
#define WAL_HEADER_LEN	 12

/*
 * The one cursor every decoder here reads through.  The window p holds
 * bytes [base, base + n) of the object; pos is the cursor and end bounds
 * the current message (object offsets both: the states of a PipelineState
 * end before the object does).  Over bytes in memory the window is all of
 * them (rd_mem: no source).  With a window source (the `info` summary) the
 * window is refilled through the source's callback only when the cursor
 * reaches bytes it does not hold, and a body the decoder does not need (a
 * state byte[]) is stepped over, not read.
 */
struct rd_src {
	pstuff_read_fn read;
	void *cookie;
	uint64_t size; /* of the object */
	uint8_t *buf;  /* the window's storage */
	size_t cap;
	uint64_t reads, read_bytes; /* read calls made, bytes they returned */
};

struct rd {
	const uint8_t *p;
	size_t n;
	uint64_t base;
	uint64_t pos, end;
	struct rd_src *src; /* NULL: p holds every byte up to end */
};

static struct rd rd_mem(const uint8_t *p, size_t n)
{
	return (struct rd){.p = p, .n = n, .end = n};
}

/*
 * A varint of at most 10 bytes from p[0..n): *used bytes; bits past 64 are
 * dropped as Java does.  -ENODATA when p ends first.
 */
static int varint_dec(const uint8_t *p, size_t n, uint64_t *v, size_t *used)
{
	uint64_t x = 0;

	for (unsigned i = 0; i < 10; i++) {
		if (i >= n)
			return -ENODATA;
		x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = x;
			*used = i + 1;
			return 0;
		}
	}
	return -EPROTO;
}

/* A tag's field number and wire type; -EPROTO for what cannot be one. */
static int tag_split(uint64_t t, uint32_t *field, int *wt)
{
	if (t > UINT32_MAX || (t >> 3) == 0 || (t & 7) > WT_I32)
		return -EPROTO;
	*field = (uint32_t)(t >> 3);
	*wt = (int)(t & 7);
	return 0;
}

/* Read the window at pos from the source: need (<= end - pos) bytes. */
static int rd_refill(struct rd *r, size_t need)
{
	struct rd_src *s = r->src;
	size_t want = s->cap;
	ssize_t got;

	if (need > s->cap)
		return -EOVERFLOW; /* a body larger than the window */
	if (want > s->size - r->pos)
		want = (size_t)(s->size - r->pos);
	got = s->read(s->cookie, s->buf, want, r->pos);
	s->reads++;
	if (got < 0)
		return got == -ENODATA ? -EIO : (int)got;
	if ((size_t)got < need || (size_t)got > want)
		return -EIO; /* shorter than its size */
	s->read_bytes += (uint64_t)got;
	r->p = s->buf;
	r->base = r->pos;
	r->n = (size_t)got;
	return 0;
}

/*
 * Make the window hold the next min(need, end - pos) bytes.  Running past
 * `end` is -ENODATA; a source's error is its -errno, -EIO when the object
 * is shorter than its size.  Inline: every byte read passes here, and the
 * decoders over memory must not pay a call for a window they always hold.
 */
static inline int rd_fill(struct rd *r, size_t need)
{
	if (r->pos >= r->end)
		return -ENODATA;
	if (!r->src)
		return 0; /* in memory: the window holds every byte to end */
	if (need > r->end - r->pos)
		need = (size_t)(r->end - r->pos);
	if (r->pos >= r->base && r->pos - r->base < r->n &&
	    r->n - (size_t)(r->pos - r->base) >= need)
		return 0;
	return rd_refill(r, need);
}

/* The window's bytes from the cursor up to end (after rd_fill). */
static const uint8_t *rd_here(const struct rd *r, size_t *avail)
{
	size_t off = (size_t)(r->pos - r->base);

	*avail = r->n - off;
	if (*avail > r->end - r->pos)
		*avail = (size_t)(r->end - r->pos);
	return r->p + off;
}

static int rd_byte(struct rd *r, uint8_t *b)
{
	size_t avail;
	int rc = rd_fill(r, 1);

	if (rc)
		return rc;
	*b = *rd_here(r, &avail);
	r->pos++;
	return 0;
}

static int rd_varint(struct rd *r, uint64_t *v)
{
	size_t avail, used = 0;
	const uint8_t *p;
	int rc = rd_fill(r, 10);

	if (rc)
		return rc;
	p = rd_here(r, &avail);
	rc = varint_dec(p, avail, v, &used);
	r->pos += used;
	return rc;
}

/* A varint field's value; -EPROTO for another wire type. */
static int rd_getvar(struct rd *r, int wt, uint64_t *v)
{
	return wt == WT_VARINT ? rd_varint(r, v) : -EPROTO;
}

static int rd_tag(struct rd *r, uint32_t *field, int *wt)
{
	uint64_t t;
	int rc;

	*field = 0; /* set on every path (callers loop on the result) */
	*wt = 0;
	rc = rd_varint(r, &t);
	return rc ? rc : tag_split(t, field, wt);
}

/* Step over k bytes, unread. */
static int rd_step(struct rd *r, uint64_t k)
{
	if (k > r->end - r->pos)
		return -ENODATA;
	r->pos += k;
	return 0;
}

/* The length of a length-delimited body; the cursor stays before it. */
static int rd_len(struct rd *r, uint64_t *l)
{
	int rc = rd_varint(r, l);

	if (rc)
		return rc;
	if (*l > INT32_MAX)
		return -EPROTO; /* protostuff lengths are int32 */
	return *l > r->end - r->pos ? -ENODATA : 0;
}

/* A length-delimited body: *b points into the window (which holds it). */
static int rd_bytes(struct rd *r, const uint8_t **b, size_t *len)
{
	size_t avail;
	uint64_t l;
	int rc = rd_len(r, &l);

	if (!rc && l)
		rc = rd_fill(r, (size_t)l);
	if (rc)
		return rc;
	*b = l ? rd_here(r, &avail) : r->p;
	*len = (size_t)l;
	r->pos += l;
	return 0;
}

/* Copy a length-delimited body of `l` bytes: at most cap-1 kept, NUL-ended
 * (a NUL byte ends the copy), the rest stepped over. */
static int rd_copy_str(struct rd *r, uint64_t l, char *dst, size_t cap)
{
	size_t o = 0;
	bool ended = false;
	uint8_t b;
	int rc;

	while (l && o + 1 < cap) {
		rc = rd_byte(r, &b);
		if (rc)
			return rc;
		l--;
		if (!b)
			ended = true;
		if (!ended)
			dst[o++] = (char)b;
	}
	dst[o] = '\0';
	return rd_step(r, l);
}

static int rd_skip(struct rd *r, uint32_t field, int wt, int depth);

/* Skip the rest of a group opened by START_GROUP(field). */
static int rd_skip_group(struct rd *r, uint32_t field, int depth)
{
	uint32_t f = 0;
	int wt = 0, rc;

	if (depth >= PSTUFF_MAX_DEPTH)
		return -EOVERFLOW;
	for (;;) {
		rc = rd_tag(r, &f, &wt);
		if (rc)
			return rc;
		if (wt == WT_EGROUP)
			return f == field ? 0 : -EPROTO;
		rc = rd_skip(r, f, wt, depth + 1);
		if (rc)
			return rc;
	}
}

static int rd_skip(struct rd *r, uint32_t field, int wt, int depth)
{
	uint64_t v = 0;
	int rc;

	switch (wt) {
	case WT_VARINT:
		return rd_varint(r, &v);
	case WT_I64:
		return rd_step(r, 8);
	case WT_LEN:
		rc = rd_len(r, &v);
		return rc ? rc : rd_step(r, v);
	case WT_SGROUP:
		return rd_skip_group(r, field, depth);
	case WT_I32:
		return rd_step(r, 4);
	default:
		return -EPROTO; /* a stray END_GROUP */
	}
}

/*
 * Next field of a message that ends with END_GROUP(endf), or at `end` when
 * endf is 0.  1: a field is in *f and *wt; 0: ended.
 */
static int rd_next(struct rd *r, uint32_t endf, uint32_t *f, int *wt)
{
	int rc;

	if (!endf && r->pos == r->end)
		return 0;
	rc = rd_tag(r, f, wt);
	if (rc)
		return rc;
	if (*wt == WT_EGROUP)
		return endf && *f == endf ? 0 : -EPROTO;
	return 1;
}

static int api_err(int rc)
{
	return rc == -ENODATA ? -EPROTO : rc;
}

/* ---- checkpoint type */

const char *ckpt_type_name(int type)
{
	static const char *const names[] = {
		[CKPT_CHECKPOINT] = "checkpoint",
		[CKPT_SCHEMA_CHANGE_BEFORE] = "schema-change-before-point",
		[CKPT_SCHEMA_CHANGE_AFTER] = "schema-change-after-point",
		[CKPT_SAVEPOINT] = "savepoint",
		[CKPT_COMPLETED] = "completed-point",
	};

	if (type < 0 || type >= CKPT_TYPE_UNKNOWN)
		return "unknown";
	return names[type];
}

static int type_from_ordinal(int ordinal, int table)
{
	static const int old_table[] = {CKPT_CHECKPOINT, CKPT_SAVEPOINT,
					CKPT_COMPLETED};

	if (ordinal < 0)
		return CKPT_TYPE_UNKNOWN;
	if (table == 2)
		return ordinal < CKPT_TYPE_UNKNOWN ? ordinal
						   : CKPT_TYPE_UNKNOWN;
	if (ordinal < 3)
		return old_table[ordinal];
	return CKPT_TYPE_UNKNOWN;
}

/* The Java enum names, per ordinal table (1: 2.3.0-2.3.2, 2: 2.3.3+). */
static const char *ckpt_java_name(int ordinal, int table)
{
	static const char *const old_names[] = {
		"CHECKPOINT_TYPE", "SAVEPOINT_TYPE", "COMPLETED_POINT_TYPE"};
	static const char *const new_names[] = {
		"CHECKPOINT_TYPE", "SCHEMA_CHANGE_BEFORE_POINT_TYPE",
		"SCHEMA_CHANGE_AFTER_POINT_TYPE", "SAVEPOINT_TYPE",
		"COMPLETED_POINT_TYPE"};

	if (ordinal < 0)
		return NULL;
	if (table == 2)
		return ordinal < 5 ? new_names[ordinal] : NULL;
	return ordinal < 3 ? old_names[ordinal] : NULL;
}

static void ckpt_init(struct pstuff_ckpt *out)
{
	*out = (struct pstuff_ckpt){
		.type_ordinal = -1,
		.type = CKPT_TYPE_UNKNOWN,
	};
}

static void ckpt_finish_type(struct pstuff_ckpt *out)
{
	out->type = type_from_ordinal(out->type_ordinal, out->table);
}

/* Count the entries (field 1 groups) of a map group, skipping the rest. */
static int count_map_entries(struct rd *r, uint32_t field, unsigned *count)
{
	uint32_t f;
	int wt, rc;

	while ((rc = rd_next(r, field, &f, &wt)) == 1) {
		if (f == 1 && wt == WT_SGROUP && *count < UINT32_MAX)
			(*count)++;
		rc = rd_skip(r, f, wt, 1);
		if (rc)
			return rc;
	}
	return rc;
}

/*
 * CompletedCheckpoint fields into *out.  With `head`, stop at field 7 or
 * later and return 1 (the head decoder wants only the scalars).  *seen5
 * tells whether field 5 was read.
 */
static int decode_cc(struct rd *r, struct pstuff_ckpt *out, bool head,
		     bool *seen5)
{
	uint32_t f;
	uint64_t v = 0;
	int wt, rc;

	while ((rc = rd_next(r, 0, &f, &wt)) == 1) {
		if (head && f >= 7)
			return 1;
		if (f <= 6 || f == 9) {
			rc = rd_getvar(r, wt, &v);
			if (rc)
				return rc;
		}
		switch (f) {
		case 1:
			out->cc_job_id = (int64_t)v;
			break;
		case 2:
		case 3:
			break; /* duplicates of PipelineState's */
		case 4:
			out->trigger_ts = (int64_t)v;
			break;
		case 5:
			out->type_ordinal = (int)(int32_t)(uint32_t)v;
			*seen5 = true;
			break;
		case 6:
			out->completed_ts = (int64_t)v;
			break;
		case 7:
			if (wt != WT_SGROUP)
				return -EPROTO;
			rc = count_map_entries(r, 7, &out->n_actions);
			break;
		case 8:
			if (wt != WT_SGROUP)
				return -EPROTO;
			rc = rd_skip_group(r, 8, 1);
			break;
		case 9:
			out->is_restored = v != 0;
			out->table = 2;
			break;
		default:
			rc = rd_skip(r, f, wt, 0);
			break;
		}
		if (rc)
			return rc;
	}
	return rc;
}

/* PipelineState fields 1-3; stops after the length of field 4. */
static int decode_ps_head(struct rd *r, struct pstuff_ckpt *out,
			  size_t *states_at, bool *has4)
{
	uint32_t f;
	uint64_t v = 0, l;
	int wt, rc;

	*has4 = false;
	while ((rc = rd_next(r, 0, &f, &wt)) == 1) {
		switch (f) {
		case 1:
			rc = wt == WT_LEN ? rd_len(r, &l) : -EPROTO;
			if (!rc)
				rc = rd_copy_str(r, l, out->job_id,
						 sizeof(out->job_id));
			if (rc)
				return rc;
			break;
		case 2:
		case 3:
			rc = rd_getvar(r, wt, &v);
			if (rc)
				return rc;
			if (f == 2)
				out->pipeline_id = (int32_t)(uint32_t)v;
			else
				out->checkpoint_id = (int64_t)v;
			break;
		case 4:
			if (wt != WT_LEN)
				return -EPROTO;
			rc = rd_varint(r, &v);
			if (rc)
				return rc;
			if (v > INT32_MAX)
				return -EPROTO;
			out->states_len = v;
			*states_at = (size_t)r->pos;
			*has4 = true;
			return 0;
		default:
			rc = rd_skip(r, f, wt, 0);
			if (rc)
				return rc;
		}
	}
	return rc;
}

int pstuff_decode_ckpt(const uint8_t *p, size_t n, struct pstuff_ckpt *out)
{
	struct rd r = rd_mem(p, n);
	size_t at = 0;
	bool has4, seen5 = false, seen = false;
	int rc;

	if (!out || (!p && n))
		return -EINVAL;
	ckpt_init(out);
	/* decode_ps_head stops after the length of each field 4 it meets */
	while ((rc = decode_ps_head(&r, out, &at, &has4)) == 0 && has4) {
		struct rd s;

		if (out->states_len > n - at)
			return -EPROTO;
		s = rd_mem(p + at, (size_t)out->states_len);
		r.pos = at + (size_t)out->states_len;
		out->table = 1;
		out->n_actions = 0;
		rc = decode_cc(&s, out, false, &seen5);
		if (rc)
			return api_err(rc);
		out->has_states = true;
		seen = true;
	}
	if (rc)
		return api_err(rc);
	if (!seen && !out->job_id[0] && !out->pipeline_id &&
	    !out->checkpoint_id)
		return -EPROTO; /* nothing of a PipelineState */
	ckpt_finish_type(out);
	return 0;
}

static void table_from_tail(struct pstuff_ckpt *out, const uint8_t tail[2])
{
	if (tail[0] == 0x48 && tail[1] <= 1) {
		out->table = 2;
		out->is_restored = tail[1] == 1;
	} else {
		out->table = 1;
	}
	if (out->type_ordinal == 3 || out->type_ordinal == 4)
		out->table = 2;
}

int pstuff_decode_ckpt_head(const uint8_t *head, size_t head_len,
			    const uint8_t tail[2], uint64_t total,
			    struct pstuff_ckpt *out)
{
	struct rd r = rd_mem(head, head_len);
	struct rd s;
	size_t at = 0, end;
	bool has4, seen5 = false;
	int rc;

	if (!out || !tail || (!head && head_len))
		return -EINVAL;
	if (head_len >= total)
		return pstuff_decode_ckpt(head, (size_t)total, out);
	ckpt_init(out);
	rc = decode_ps_head(&r, out, &at, &has4);
	if (rc)
		return rc == -ENODATA ? -EAGAIN : rc;
	if (!has4)
		return -EAGAIN; /* the head ended before field 4 */
	if (out->states_len > total - at)
		return -EPROTO;
	if (out->states_len <= head_len - at) {
		/* the whole state is in the head */
		s = rd_mem(head + at, (size_t)out->states_len);
		out->table = 1;
		rc = decode_cc(&s, out, false, &seen5);
		if (rc)
			return api_err(rc);
		out->has_states = true;
		ckpt_finish_type(out);
		return 0;
	}
	end = head_len;
	s = rd_mem(head + at, end - at);
	rc = decode_cc(&s, out, true, &seen5);
	if (rc == -ENODATA || rc == 0) {
		/* the head ended inside the state */
		if (!seen5)
			return -EAGAIN;
		rc = 0; /* ... after field 5: enough */
	}
	if (rc < 0)
		return rc;
	out->has_states = true;
	table_from_tail(out, tail);
	ckpt_finish_type(out);
	return 0;
}

/* ---- JSON view */

enum list_mode {
	MODE_PRESERVE,	 /* lists wrapped in a group, nulls as runs */
	MODE_NOPRESERVE, /* lists as repeated fields, nulls dropped */
};

struct jctx {
	enum list_mode mode;
	uint64_t budget; /* array slots left for the whole document */
};

/* Valid UTF-8 in, else a copy with each bad byte replaced by U+FFFD. */
static json_t *json_utf8(const uint8_t *s, size_t len)
{
	json_t *j = json_stringn((const char *)s, len);
	struct buf b;
	size_t i = 0;

	if (j)
		return j;
	buf_init(&b, len * 3 + 16);
	while (i < len) {
		uint8_t c = s[i];
		size_t k = 0;
		uint32_t cp = 0, min = 0;

		if (c < 0x80)
			k = 1, cp = c;
		else if ((c & 0xe0) == 0xc0)
			k = 2, cp = c & 0x1f, min = 0x80;
		else if ((c & 0xf0) == 0xe0)
			k = 3, cp = c & 0x0f, min = 0x800;
		else if ((c & 0xf8) == 0xf0)
			k = 4, cp = c & 0x07, min = 0x10000;
		if (k && k <= len - i) {
			size_t m;

			for (m = 1; m < k; m++) {
				if ((s[i + m] & 0xc0) != 0x80)
					break;
				cp = (cp << 6) | (s[i + m] & 0x3f);
			}
			if (m == k && cp >= min && cp <= 0x10ffff &&
			    (cp < 0xd800 || cp > 0xdfff)) {
				if (buf_append(&b, s + i, k))
					goto fail;
				i += k;
				continue;
			}
		}
		if (buf_append(&b, "\xef\xbf\xbd", 3))
			goto fail;
		i++;
	}
	j = json_stringn(b.data ? b.data : "", b.len);
	buf_release(&b);
	return j;
fail:
	buf_release(&b);
	return NULL;
}

static json_t *json_hex(const uint8_t *b, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char *s = malloc(len * 2 + 1);
	json_t *j;
	size_t i;

	if (!s)
		return NULL;
	for (i = 0; i < len; i++) {
		s[2 * i] = hex[b[i] >> 4];
		s[2 * i + 1] = hex[b[i] & 15];
	}
	j = json_stringn(s, len * 2);
	free(s);
	return j;
}

static json_t *json_enum(int ordinal, const char *name)
{
	return json_pack("{s:i,s:s?}", "ordinal", ordinal, "name", name);
}

/* Steal `v` into obj[k]; -ENOMEM if v is NULL or the set fails. */
static int jset(json_t *obj, const char *k, json_t *v)
{
	if (!v)
		return -ENOMEM;
	return json_object_set_new(obj, k, v) ? -ENOMEM : 0;
}

static int jpush(struct jctx *c, json_t *arr, json_t *v)
{
	if (!v)
		return -ENOMEM;
	if (!c->budget || json_array_size(arr) >= PSTUFF_MAX_ELEMS) {
		json_decref(v);
		return -EOVERFLOW;
	}
	c->budget--;
	return json_array_append_new(arr, v) ? -ENOMEM : 0;
}

static int jnulls(struct jctx *c, json_t *arr, uint64_t k)
{
	int rc;

	while (k--) {
		rc = jpush(c, arr, json_null());
		if (rc)
			return rc;
	}
	return 0;
}

/* The array at obj[k], created on first use (lists may come in pieces). */
static json_t *jarray_at(json_t *obj, const char *k)
{
	json_t *a = json_object_get(obj, k);

	if (json_is_array(a))
		return a;
	a = json_array();
	if (!a || json_object_set_new(obj, k, a))
		return NULL;
	return a;
}

typedef int (*msg_fn)(struct jctx *c, struct rd *r, uint32_t endf, int depth,
		      json_t **out);

static int set_int32(json_t *o, const char *k, struct rd *r, int wt)
{
	uint64_t v = 0;
	int rc = rd_getvar(r, wt, &v);

	if (rc)
		return rc;
	return jset(o, k, json_integer((int32_t)(uint32_t)v));
}

static int set_int64(json_t *o, const char *k, struct rd *r, int wt)
{
	uint64_t v = 0;
	int rc = rd_getvar(r, wt, &v);

	if (rc)
		return rc;
	return jset(o, k, json_integer((json_int_t)(int64_t)v));
}

/* Java primitives exist even when absent on the wire: default them. */
static int set_default(json_t *o, const char *k, json_t *v)
{
	if (json_object_get(o, k)) {
		json_decref(v);
		return 0;
	}
	return jset(o, k, v);
}

/*
 * End a message decoder: on success, give each Java int/long field named in
 * `zeros` (NULL-ended; NULL for none) that was absent on the wire its
 * default 0 (see set_default), then hand `o` to *out; on any error, drop o.
 */
static int msg_end(json_t *o, int rc, const char *const *zeros, json_t **out)
{
	for (; !rc && zeros && *zeros; zeros++)
		rc = set_default(o, *zeros, json_integer(0));
	if (rc) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return 0;
}

/*
 * One message-typed field `f` holding a single nested POJO (a group).
 */
static int field_msg(struct jctx *c, struct rd *r, json_t *o, const char *k,
		     uint32_t f, int wt, int depth, msg_fn fn)
{
	json_t *v = NULL;
	int rc;

	if (wt != WT_SGROUP)
		return -EPROTO;
	rc = fn(c, r, f, depth + 1, &v);
	if (rc)
		return rc;
	return jset(o, k, v);
}

/*
 * One list element at field `ef` with wire type `wt` into arr: a POJO group
 * read by `fn`, or with fn NULL a byte[] (as hex).
 */
static int list_elem(struct jctx *c, struct rd *r, json_t *arr, uint32_t ef,
		     int wt, int depth, msg_fn fn)
{
	json_t *v = NULL;
	const uint8_t *b;
	size_t l;
	int rc;

	if (!fn) {
		if (wt != WT_LEN)
			return -EPROTO;
		rc = rd_bytes(r, &b, &l);
		if (rc)
			return rc;
		return jpush(c, arr, json_hex(b, l));
	}
	if (wt != WT_SGROUP)
		return -EPROTO;
	rc = fn(c, r, ef, depth, &v);
	if (rc)
		return rc;
	return jpush(c, arr, v);
}

/*
 * A List field `f` of POJOs read by `fn`, or with fn NULL a List<byte[]>: a
 * wrapping group (elements at 1, null runs at 2) in preserve mode, one
 * element per field `f` otherwise.
 */
static int field_list(struct jctx *c, struct rd *r, json_t *o, const char *k,
		      uint32_t f, int wt, int depth, msg_fn fn)
{
	json_t *arr = jarray_at(o, k);
	uint32_t ef;
	uint64_t nulls;
	int ewt, rc;

	if (!arr)
		return -ENOMEM;
	if (fn) {
		/* a POJO list is a group in both modes */
		if (wt != WT_SGROUP)
			return -EPROTO;
		if (depth >= PSTUFF_MAX_DEPTH)
			return -EOVERFLOW;
	}
	if (c->mode == MODE_NOPRESERVE)
		return list_elem(c, r, arr, f, wt, depth + 1, fn);
	if (wt != WT_SGROUP)
		return -EPROTO;
	while ((rc = rd_next(r, f, &ef, &ewt)) == 1) {
		if (ef == 1) {
			rc = list_elem(c, r, arr, 1, ewt, depth + 2, fn);
		} else if (ef == 2) {
			rc = rd_getvar(r, ewt, &nulls);
			if (!rc)
				rc = jnulls(c, arr, nulls);
		} else {
			rc = rd_skip(r, ef, ewt, depth + 1);
		}
		if (rc)
			return rc;
	}
	return rc;
}

/* A boolean[] field `f`: group {1 length, 2 element*, 3 null run*}. */
static int field_bool_array(struct jctx *c, struct rd *r, json_t *o,
			    const char *k, uint32_t f, int wt, int depth)
{
	json_t *arr;
	uint32_t ef;
	uint64_t v = 0, len = 0, i = 0;
	bool have_len = false;
	int ewt, rc;

	if (wt != WT_SGROUP)
		return -EPROTO;
	arr = json_array();
	if (!arr)
		return -ENOMEM;
	while ((rc = rd_next(r, f, &ef, &ewt)) == 1) {
		if (ef >= 1 && ef <= 3) {
			rc = rd_getvar(r, ewt, &v);
			if (rc)
				break;
		}
		if (ef == 1) {
			if (have_len || v > PSTUFF_MAX_ELEMS || v > c->budget) {
				rc = have_len ? -EPROTO : -EOVERFLOW;
				break;
			}
			have_len = true;
			len = v;
			for (uint64_t j = 0; !rc && j < len; j++)
				rc = jpush(c, arr, json_false());
		} else if (ef == 2 || ef == 3) {
			uint64_t step = ef == 2 ? 1 : v;

			if (!have_len || step > len - i) {
				rc = -EPROTO;
				break;
			}
			if (ef == 2)
				rc = json_array_set_new(arr, (size_t)i,
							json_boolean(v != 0))
					     ? -ENOMEM
					     : 0;
			i += step;
		} else {
			rc = rd_skip(r, ef, ewt, depth + 1);
		}
		if (rc)
			break;
	}
	if (!rc && !have_len)
		rc = -EPROTO;
	if (rc) {
		json_decref(arr);
		return rc;
	}
	return jset(o, k, arr);
}

/* ActionStateKey {1 String name} */
static int msg_action_key(struct jctx *c, struct rd *r, uint32_t endf,
			  int depth, json_t **out)
{
	json_t *o = json_object();
	const uint8_t *b;
	uint32_t f;
	size_t l;
	int wt, rc;

	(void)c;
	if (!o)
		return -ENOMEM;
	while ((rc = rd_next(r, endf, &f, &wt)) == 1) {
		if (f == 1) {
			rc = wt == WT_LEN ? rd_bytes(r, &b, &l) : -EPROTO;
			if (!rc)
				rc = jset(o, "name", json_utf8(b, l));
		} else {
			rc = rd_skip(r, f, wt, depth);
		}
		if (rc)
			break;
	}
	return msg_end(o, rc, NULL, out);
}

/* ActionSubtaskState {1 ActionStateKey, 2 int index, 3 List<byte[]> state} */
static int msg_subtask_state(struct jctx *c, struct rd *r, uint32_t endf,
			     int depth, json_t **out)
{
	json_t *o = json_object();
	uint32_t f;
	int wt, rc;

	if (!o)
		return -ENOMEM;
	if (depth >= PSTUFF_MAX_DEPTH)
		rc = -EOVERFLOW;
	else
		while ((rc = rd_next(r, endf, &f, &wt)) == 1) {
			switch (f) {
			case 1:
				rc = field_msg(c, r, o, "stateKey", f, wt,
					       depth, msg_action_key);
				break;
			case 2:
				rc = set_int32(o, "index", r, wt);
				break;
			case 3:
				rc = field_list(c, r, o, "state", f, wt, depth,
						NULL);
				break;
			default:
				rc = rd_skip(r, f, wt, depth);
			}
			if (rc)
				break;
		}
	return msg_end(o, rc, (const char *const[]){"index", NULL}, out);
}

/* ActionState {1 stateKey, 2 List subtaskStates, 3 coordinatorState, 4 int} */
static int msg_action_state(struct jctx *c, struct rd *r, uint32_t endf,
			    int depth, json_t **out)
{
	json_t *o = json_object();
	uint32_t f;
	int wt, rc;

	if (!o)
		return -ENOMEM;
	while ((rc = rd_next(r, endf, &f, &wt)) == 1) {
		switch (f) {
		case 1:
			rc = field_msg(c, r, o, "stateKey", f, wt, depth,
				       msg_action_key);
			break;
		case 2:
			rc = field_list(c, r, o, "subtaskStates", f, wt, depth,
					msg_subtask_state);
			break;
		case 3:
			rc = field_msg(c, r, o, "coordinatorState", f, wt,
				       depth, msg_subtask_state);
			break;
		case 4:
			rc = set_int32(o, "parallelism", r, wt);
			break;
		default:
			rc = rd_skip(r, f, wt, depth);
		}
		if (rc)
			break;
	}
	return msg_end(o, rc, (const char *const[]){"parallelism", NULL}, out);
}

/* SubtaskStatistics {1 int, 2 long, 3 long, 4 SubtaskStatus} */
static int msg_subtask_stats(struct jctx *c, struct rd *r, uint32_t endf,
			     int depth, json_t **out)
{
	static const char *const status[] = {
		"RUNNING", "SAVEPOINT_PREPARE_CLOSE", "AUTO_PREPARE_CLOSE"};
	json_t *o = json_object();
	uint32_t f;
	uint64_t v = 0;
	int wt, rc, ord;

	(void)c;
	if (!o)
		return -ENOMEM;
	while ((rc = rd_next(r, endf, &f, &wt)) == 1) {
		switch (f) {
		case 1:
			rc = set_int32(o, "subtaskIndex", r, wt);
			break;
		case 2:
			rc = set_int64(o, "ackTimestamp", r, wt);
			break;
		case 3:
			rc = set_int64(o, "stateSize", r, wt);
			break;
		case 4:
			rc = rd_getvar(r, wt, &v);
			if (rc)
				break;
			ord = (int32_t)(uint32_t)v;
			rc = jset(o, "subtaskStatus",
				  json_enum(ord, ord >= 0 && ord < 3
							 ? status[ord]
							 : NULL));
			break;
		default:
			rc = rd_skip(r, f, wt, depth);
		}
		if (rc)
			break;
	}
	return msg_end(o, rc,
		       (const char *const[]){"subtaskIndex", "ackTimestamp",
					     "stateSize", NULL},
		       out);
}

/* TaskStatistics {1 Long, 2 List, 3 boolean[], 4 int, 5 SubtaskStatistics} */
static int msg_task_stats(struct jctx *c, struct rd *r, uint32_t endf,
			  int depth, json_t **out)
{
	json_t *o = json_object();
	uint32_t f;
	int wt, rc;

	if (!o)
		return -ENOMEM;
	while ((rc = rd_next(r, endf, &f, &wt)) == 1) {
		switch (f) {
		case 1:
			rc = set_int64(o, "jobVertexId", r, wt);
			break;
		case 2:
			rc = field_list(c, r, o, "subtaskStats", f, wt, depth,
					msg_subtask_stats);
			break;
		case 3:
			rc = field_bool_array(c, r, o, "subtaskCompleted", f,
					      wt, depth);
			break;
		case 4:
			rc = set_int32(o, "numAcknowledgedSubtasks", r, wt);
			break;
		case 5:
			rc = field_msg(c, r, o, "latestAckedSubtaskStatistics",
				       f, wt, depth, msg_subtask_stats);
			break;
		default:
			rc = rd_skip(r, f, wt, depth);
		}
		if (rc)
			break;
	}
	return msg_end(o, rc,
		       (const char *const[]){"numAcknowledgedSubtasks", NULL},
		       out);
}

/*
 * A Map field `f`: group of entry groups at field 1, key at 1 and value at
 * 2.  A Long key is a varint (`key_fn` NULL), a POJO key a group.
 */
static int field_map(struct jctx *c, struct rd *r, json_t *o, const char *k,
		     uint32_t f, int wt, int depth, msg_fn key_fn,
		     msg_fn val_fn)
{
	json_t *arr = jarray_at(o, k), *e = NULL, *v;
	uint32_t ef, kf;
	uint64_t n;
	int ewt, kwt, rc;

	if (!arr)
		return -ENOMEM;
	if (wt != WT_SGROUP)
		return -EPROTO;
	if (depth + 2 >= PSTUFF_MAX_DEPTH)
		return -EOVERFLOW;
	while ((rc = rd_next(r, f, &ef, &ewt)) == 1) {
		if (ef != 1) {
			rc = rd_skip(r, ef, ewt, depth + 1);
			if (rc)
				return rc;
			continue;
		}
		if (ewt != WT_SGROUP)
			return -EPROTO;
		e = json_pack("{s:n,s:n}", "key", "value");
		if (!e)
			return -ENOMEM;
		while ((rc = rd_next(r, 1, &kf, &kwt)) == 1) {
			v = NULL;
			if (kf == 1 && key_fn) {
				rc = kwt == WT_SGROUP
					     ? key_fn(c, r, 1, depth + 2, &v)
					     : -EPROTO;
				if (!rc)
					rc = jset(e, "key", v);
			} else if (kf == 1) {
				rc = rd_getvar(r, kwt, &n);
				if (!rc)
					rc = jset(e, "key",
						  json_integer((json_int_t)n));
			} else if (kf == 2) {
				rc = kwt == WT_SGROUP
					     ? val_fn(c, r, 2, depth + 2, &v)
					     : -EPROTO;
				if (!rc)
					rc = jset(e, "value", v);
			} else {
				rc = rd_skip(r, kf, kwt, depth + 2);
			}
			if (rc)
				break;
		}
		if (!rc)
			rc = jpush(c, arr, e);
		else
			json_decref(e);
		if (rc)
			return rc;
	}
	return rc;
}

static int cc_to_json(struct jctx *c, struct rd *r, json_t **out)
{
	json_t *o = json_object();
	uint32_t f;
	uint64_t v = 0;
	int wt, rc, ordinal = -1, table = 1;

	if (!o)
		return -ENOMEM;
	while ((rc = rd_next(r, 0, &f, &wt)) == 1) {
		switch (f) {
		case 1:
			rc = set_int64(o, "jobId", r, wt);
			break;
		case 2:
			rc = set_int32(o, "pipelineId", r, wt);
			break;
		case 3:
			rc = set_int64(o, "checkpointId", r, wt);
			break;
		case 4:
			rc = set_int64(o, "triggerTimestamp", r, wt);
			break;
		case 5:
			rc = rd_getvar(r, wt, &v);
			if (rc)
				break;
			ordinal = (int32_t)(uint32_t)v;
			/* placeholder keeps the key order; named below */
			rc = jset(o, "checkpointType", json_null());
			break;
		case 6:
			rc = set_int64(o, "completedTimestamp", r, wt);
			break;
		case 7:
			rc = field_map(c, r, o, "taskStates", f, wt, 0,
				       msg_action_key, msg_action_state);
			break;
		case 8:
			rc = field_map(c, r, o, "taskStatistics", f, wt, 0,
				       NULL, msg_task_stats);
			break;
		case 9:
			rc = rd_getvar(r, wt, &v);
			if (!rc)
				rc = jset(o, "isRestored", json_boolean(v));
			table = 2;
			break;
		default:
			rc = rd_skip(r, f, wt, 0);
		}
		if (rc)
			break;
	}
	if (!rc && json_object_get(o, "checkpointType"))
		rc = jset(o, "checkpointType",
			  json_enum(ordinal, ckpt_java_name(ordinal, table)));
	return msg_end(o, rc,
		       (const char *const[]){"jobId", "pipelineId",
					     "checkpointId", "triggerTimestamp",
					     "completedTimestamp", NULL},
		       out);
}

static int ps_to_json(struct jctx *c, const uint8_t *p, size_t n, json_t **out)
{
	struct rd r = rd_mem(p, n), s;
	json_t *o = json_object(), *st;
	const uint8_t *b;
	uint32_t f;
	size_t l;
	int wt, rc;

	if (!o)
		return -ENOMEM;
	while ((rc = rd_next(&r, 0, &f, &wt)) == 1) {
		switch (f) {
		case 1:
			rc = wt == WT_LEN ? rd_bytes(&r, &b, &l) : -EPROTO;
			if (!rc)
				rc = jset(o, "jobId", json_utf8(b, l));
			break;
		case 2:
			rc = set_int32(o, "pipelineId", &r, wt);
			break;
		case 3:
			rc = set_int64(o, "checkpointId", &r, wt);
			break;
		case 4:
			rc = wt == WT_LEN ? rd_bytes(&r, &b, &l) : -EPROTO;
			if (rc)
				break;
			s = rd_mem(b, l);
			st = NULL;
			rc = cc_to_json(c, &s, &st);
			if (!rc)
				rc = jset(o, "states", st);
			break;
		default:
			rc = rd_skip(&r, f, wt, 0);
		}
		if (rc)
			break;
	}
	if (!rc && !json_object_size(o) && !r.pos)
		rc = -EPROTO;
	return msg_end(
		o, rc,
		(const char *const[]){"pipelineId", "checkpointId", NULL}, out);
}

int pstuff_ckpt_to_json(const uint8_t *p, size_t n, struct buf *out)
{
	struct jctx c = {.mode = MODE_PRESERVE};
	json_t *root = NULL;
	char *s;
	int rc;

	if (!out || (!p && n))
		return -EINVAL;
	c.budget = (uint64_t)n + PSTUFF_MAX_ELEMS;
	rc = ps_to_json(&c, p, n, &root);
	if (rc == -EPROTO || rc == -ENODATA) {
		/* 2.3.0-style checkpoint lists: plain repeated fields */
		c = (struct jctx){.mode = MODE_NOPRESERVE,
				  .budget = (uint64_t)n + PSTUFF_MAX_ELEMS};
		if (!ps_to_json(&c, p, n, &root))
			rc = 0;
	}
	if (rc)
		return api_err(rc);
	s = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!s)
		return -ENOMEM;
	rc = buf_printf(out, "%s\n", s); /* all or nothing */
	free(s);
	return rc;
}

/* ---- full summary, read in windows */

/* What one pass of the summary reads into, in which list mode. */
struct sctx {
	enum list_mode mode;
	struct pstuff_summary *out;
};

/* A List<byte[]> element or a plain byte[]: its length added, stepped. */
static int s_state_bytes(struct rd *r, int wt, uint64_t *sum)
{
	uint64_t l;
	int rc;

	if (wt != WT_LEN)
		return -EPROTO;
	rc = rd_len(r, &l);
	if (rc)
		return rc;
	*sum += l;
	return rd_step(r, l);
}

/* ActionSubtaskState {1 key, 2 index, 3 List<byte[]> state}: its state
 * bytes into *sum. */
static int s_subtask_state(struct sctx *c, struct rd *r, uint32_t endf,
			   int depth, uint64_t *sum)
{
	uint32_t f = 0, ef = 0;
	uint64_t v = 0;
	int wt = 0, ewt = 0, rc;

	if (depth >= PSTUFF_MAX_DEPTH)
		return -EOVERFLOW;
	while ((rc = rd_next(r, endf, &f, &wt)) == 1) {
		if (f == 3 && c->mode == MODE_NOPRESERVE) {
			rc = s_state_bytes(r, wt, sum);
		} else if (f == 3) {
			if (wt != WT_SGROUP)
				return -EPROTO;
			while ((rc = rd_next(r, 3, &ef, &ewt)) == 1) {
				if (ef == 1)
					rc = s_state_bytes(r, ewt, sum);
				else if (ef == 2)
					rc = rd_getvar(r, ewt, &v);
				else
					rc = rd_skip(r, ef, ewt, depth + 1);
				if (rc)
					return rc;
			}
		} else if (f == 2) {
			rc = rd_getvar(r, wt, &v);
		} else {
			rc = rd_skip(r, f, wt, depth);
		}
		if (rc)
			return rc;
	}
	return rc;
}

/* ActionStateKey {1 name} into a->name (when name is not NULL). */
static int s_action_key(struct rd *r, uint32_t endf, char *name, size_t cap)
{
	uint32_t f = 0;
	uint64_t l;
	int wt = 0, rc;

	while ((rc = rd_next(r, endf, &f, &wt)) == 1) {
		if (f == 1 && wt == WT_LEN && name) {
			rc = rd_len(r, &l);
			if (!rc)
				rc = rd_copy_str(r, l, name, cap);
		} else if (f == 1 && wt != WT_LEN) {
			rc = -EPROTO;
		} else {
			rc = rd_skip(r, f, wt, 2);
		}
		if (rc)
			return rc;
	}
	return rc;
}

typedef int (*s_elem_fn)(struct sctx *c, struct rd *r, uint32_t endf, int depth,
			 uint64_t *sum);

/*
 * A List<message> field 2 whose START_GROUP was read, in either list
 * mode: in MODE_NOPRESERVE the group is the one
 * element; in MODE_PRESERVE it wraps the elements (field 1) and runs of
 * nulls (field 2, a count).  Each element is counted in *n and read by fn
 * into *sum.
 */
static int s_list(struct sctx *c, struct rd *r, int depth, s_elem_fn fn,
		  uint32_t *n, uint64_t *sum)
{
	uint32_t ef = 0;
	uint64_t v = 0;
	int ewt = 0, rc;

	if (c->mode == MODE_NOPRESERVE) {
		(*n)++;
		return fn(c, r, 2, depth + 1, sum);
	}
	while ((rc = rd_next(r, 2, &ef, &ewt)) == 1) {
		if (ef == 1 && ewt == WT_SGROUP) {
			(*n)++;
			rc = fn(c, r, 1, depth + 2, sum);
		} else if (ef == 1) {
			rc = -EPROTO;
		} else if (ef == 2) {
			rc = rd_getvar(r, ewt, &v);
		} else {
			rc = rd_skip(r, ef, ewt, depth + 1);
		}
		if (rc)
			return rc;
	}
	return rc;
}

/* ActionState {1 key, 2 List subtaskStates, 3 coordinator, 4 parallelism} */
static int s_action_state(struct sctx *c, struct rd *r, uint32_t endf,
			  int depth, struct pstuff_action *a)
{
	uint32_t f = 0;
	uint64_t v = 0;
	int wt = 0, rc;

	while ((rc = rd_next(r, endf, &f, &wt)) == 1) {
		switch (f) {
		case 1: /* the map key says the same; kept when it is absent */
			if (wt != WT_SGROUP)
				return -EPROTO;
			rc = s_action_key(r, 1, a->name[0] ? NULL : a->name,
					  sizeof(a->name));
			break;
		case 2:
			rc = wt == WT_SGROUP
				     ? s_list(c, r, depth, s_subtask_state,
					      &a->subtasks, &a->state_bytes)
				     : -EPROTO;
			break;
		case 3:
			if (wt != WT_SGROUP)
				return -EPROTO;
			a->coordinator = true;
			rc = s_subtask_state(c, r, 3, depth + 1,
					     &a->state_bytes);
			break;
		case 4:
			rc = rd_getvar(r, wt, &v);
			a->parallelism = (int32_t)(uint32_t)v;
			break;
		default:
			rc = rd_skip(r, f, wt, depth);
		}
		if (rc)
			return rc;
	}
	return rc;
}

/* SubtaskStatistics {1 index, 2 ack ts, 3 stateSize, 4 status} */
static int s_subtask_stats(struct sctx *c, struct rd *r, uint32_t endf,
			   int depth, uint64_t *size)
{
	uint32_t f = 0;
	uint64_t v = 0;
	int wt = 0, rc;

	(void)c;
	while ((rc = rd_next(r, endf, &f, &wt)) == 1) {
		if (f >= 1 && f <= 4)
			rc = rd_getvar(r, wt, &v);
		else
			rc = rd_skip(r, f, wt, depth);
		if (rc)
			return rc;
		if (f == 3)
			*size += v;
	}
	return rc;
}

/* TaskStatistics {1 vertex, 2 List stats, 3 boolean[], 4 acked, 5 latest} */
static int s_task_stats(struct sctx *c, struct rd *r, uint32_t endf, int depth,
			struct pstuff_taskstat *t)
{
	uint32_t f = 0;
	uint64_t v = 0;
	int wt = 0, rc;

	while ((rc = rd_next(r, endf, &f, &wt)) == 1) {
		switch (f) {
		case 2:
			rc = wt == WT_SGROUP
				     ? s_list(c, r, depth, s_subtask_stats,
					      &t->subtasks, &t->state_size)
				     : -EPROTO;
			break;
		case 4:
			rc = rd_getvar(r, wt, &v);
			t->acked = (int32_t)(uint32_t)v;
			break;
		default: /* 1 repeats the key; 3 and 5 are not shown */
			rc = rd_skip(r, f, wt, depth);
		}
		if (rc)
			return rc;
	}
	return rc;
}

static int grow_to(void **arr, size_t n, size_t elem)
{
	void *p;

	if (n % 16)
		return 0;
	p = realloc(*arr, (n + 16) * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

/* One entry of taskStates (field 7) or taskStatistics (field 8). */
static int s_map_entry(struct sctx *c, struct rd *r, uint32_t map)
{
	struct pstuff_summary *o = c->out;
	struct pstuff_action a = {0};
	struct pstuff_taskstat t = {0};
	uint32_t f = 0;
	uint64_t v = 0;
	int wt = 0, rc;

	while ((rc = rd_next(r, 1, &f, &wt)) == 1) {
		if (f == 1 && map == 7) {
			rc = wt == WT_SGROUP ? s_action_key(r, 1, a.name,
							    sizeof(a.name))
					     : -EPROTO;
		} else if (f == 1) {
			rc = rd_getvar(r, wt, &v);
			t.vertex_id = (int64_t)v;
		} else if (f == 2 && wt != WT_SGROUP) {
			rc = -EPROTO;
		} else if (f == 2 && map == 7) {
			rc = s_action_state(c, r, 2, 3, &a);
		} else if (f == 2) {
			rc = s_task_stats(c, r, 2, 3, &t);
		} else {
			rc = rd_skip(r, f, wt, 2);
		}
		if (rc)
			return rc;
	}
	if (map == 7) {
		if (o->n_actions < PSTUFF_SUM_MAX_ENT) {
			if (grow_to((void **)&o->actions, o->n_actions,
				    sizeof(a)))
				return -ENOMEM;
			o->actions[o->n_actions] = a;
		}
		o->n_actions++;
	} else {
		if (o->n_stats < PSTUFF_SUM_MAX_ENT) {
			if (grow_to((void **)&o->stats, o->n_stats, sizeof(t)))
				return -ENOMEM;
			o->stats[o->n_stats] = t;
		}
		o->n_stats++;
	}
	return 0;
}

/* A CompletedCheckpoint up to r->end. */
static int s_cc(struct sctx *c, struct rd *r)
{
	struct pstuff_ckpt *ck = &c->out->ck;
	uint32_t f = 0, ef = 0;
	uint64_t v = 0;
	int wt = 0, ewt = 0, rc;

	ck->table = 1;
	while ((rc = rd_next(r, 0, &f, &wt)) == 1) {
		if (f <= 6 || f == 9) {
			rc = rd_getvar(r, wt, &v);
			if (rc)
				return rc;
		}
		switch (f) {
		case 1:
			ck->cc_job_id = (int64_t)v;
			break;
		case 2:
			if (c->out->bare)
				ck->pipeline_id = (int32_t)(uint32_t)v;
			break;
		case 3:
			if (c->out->bare)
				ck->checkpoint_id = (int64_t)v;
			break;
		case 4:
			ck->trigger_ts = (int64_t)v;
			break;
		case 5:
			ck->type_ordinal = (int)(int32_t)(uint32_t)v;
			break;
		case 6:
			ck->completed_ts = (int64_t)v;
			break;
		case 7:
		case 8:
			if (wt != WT_SGROUP)
				return -EPROTO;
			while ((rc = rd_next(r, f, &ef, &ewt)) == 1) {
				if (ef == 1 && ewt == WT_SGROUP)
					rc = s_map_entry(c, r, f);
				else
					rc = ef == 1 ? -EPROTO
						     : rd_skip(r, ef, ewt, 1);
				if (rc)
					return rc;
			}
			break;
		case 9:
			ck->is_restored = v != 0;
			ck->table = 2;
			break;
		default:
			rc = rd_skip(r, f, wt, 0);
		}
		if (rc)
			return rc;
	}
	return rc;
}

static void sum_reset(struct pstuff_summary *o, bool bare)
{
	free(o->actions);
	free(o->stats);
	*o = (struct pstuff_summary){.bare = bare};
	ckpt_init(&o->ck);
}

/* One pass in one list mode. */
static int s_decode(struct sctx *c, struct rd *r)
{
	struct pstuff_ckpt *ck = &c->out->ck;
	uint32_t f = 0;
	uint64_t v = 0, l;
	bool any = false;
	int wt = 0, rc;

	if (c->out->bare) {
		rc = s_cc(c, r);
		if (!rc && !ck->table)
			rc = -EPROTO;
		if (!rc)
			c->out->ck.has_states = true;
		return rc;
	}
	while ((rc = rd_next(r, 0, &f, &wt)) == 1) {
		any = true;
		switch (f) {
		case 1:
			rc = wt == WT_LEN ? rd_len(r, &l) : -EPROTO;
			if (!rc)
				rc = rd_copy_str(r, l, ck->job_id,
						 sizeof(ck->job_id));
			break;
		case 2:
		case 3:
			rc = rd_getvar(r, wt, &v);
			if (f == 2)
				ck->pipeline_id = (int32_t)(uint32_t)v;
			else
				ck->checkpoint_id = (int64_t)v;
			break;
		case 4: {
			uint64_t outer_end = r->end;

			rc = wt == WT_LEN ? rd_len(r, &l) : -EPROTO;
			if (rc)
				break;
			/* a repeated field 4: the last one wins, as in
			 * protostuff's merge */
			c->out->n_actions = c->out->n_stats = 0;
			ck->states_len = l;
			r->end = r->pos + l;
			rc = s_cc(c, r);
			if (!rc && r->pos != r->end)
				rc = -EPROTO;
			r->end = outer_end;
			ck->has_states = true;
			break;
		}
		default:
			rc = rd_skip(r, f, wt, 0);
		}
		if (rc)
			return rc;
	}
	if (!rc && (!any || !ck->has_states))
		rc = -EPROTO; /* a checkpoint file always holds its states */
	return rc;
}

int pstuff_summarize(pstuff_read_fn rd, void *cookie, uint64_t size,
		     size_t window, bool bare, struct pstuff_summary *out)
{
	struct rd_src src = {.read = rd, .cookie = cookie, .size = size};
	struct rd r = {.src = &src}; /* an empty window at 0 */
	struct sctx c = {.out = out};
	int rc = -EPROTO;

	if (!out || !rd || window < 64)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	src.cap = window;
	src.buf = malloc(window);
	if (!src.buf)
		return -ENOMEM;
	for (int m = MODE_PRESERVE; m <= MODE_NOPRESERVE; m++) {
		sum_reset(out, bare);
		c.mode = (enum list_mode)m;
		r.pos = 0; /* the window is kept: its bytes are the same */
		r.end = size;
		rc = s_decode(&c, &r);
		if (rc != -EPROTO && rc != -ENODATA)
			break; /* done, or a read error: no second try */
	}
	free(src.buf);
	if (rc)
		sum_reset(out, bare);
	out->reads = src.reads;
	out->read_bytes = src.read_bytes;
	if (rc)
		return api_err(rc);
	ckpt_finish_type(&out->ck);
	return 0;
}

struct mem_src {
	const uint8_t *p;
	size_t n;
};

static ssize_t mem_src_read(void *cookie, void *buf, size_t len, uint64_t off)
{
	const struct mem_src *m = cookie;

	if (off >= m->n)
		return 0;
	if (len > m->n - off)
		len = (size_t)(m->n - off);
	memcpy(buf, m->p + off, len);
	return (ssize_t)len;
}

int pstuff_summarize_mem(const uint8_t *p, size_t n, bool bare,
			 struct pstuff_summary *out)
{
	struct mem_src m = {.p = p, .n = n};

	if (!p && n)
		return -EINVAL;
	return pstuff_summarize(mem_src_read, &m, n, 4096, bare, out);
}

void pstuff_summary_free(struct pstuff_summary *s)
{
	if (!s)
		return;
	free(s->actions);
	free(s->stats);
	memset(s, 0, sizeof(*s));
}

/* ---- WAL */

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* IMapFileData {1 bool, 2 bytes, 3 String, 4 bytes, 5 String, 6 long} */
static int decode_imap_data(const uint8_t *p, size_t n, struct wal_record *rec)
{
	struct rd r = rd_mem(p, n);
	const uint8_t *b;
	uint32_t f;
	uint64_t v = 0;
	size_t l;
	bool has_key = false;
	int wt, rc;

	while ((rc = rd_next(&r, 0, &f, &wt)) == 1) {
		if (f == 1 || f == 6) {
			rc = rd_getvar(&r, wt, &v);
			if (rc)
				return rc;
			if (f == 1)
				rec->deleted = v != 0;
			else
				rec->timestamp = (int64_t)v;
			continue;
		}
		if (f < 2 || f > 5) {
			rc = rd_skip(&r, f, wt, 0);
			if (rc)
				return rc;
			continue;
		}
		if (wt != WT_LEN)
			return -EPROTO;
		rc = rd_bytes(&r, &b, &l);
		if (rc)
			return rc;
		switch (f) {
		case 2:
			rec->key = b;
			rec->key_len = l;
			has_key = true;
			break;
		case 3:
			rec->key_class = (const char *)b;
			rec->key_class_len = l;
			break;
		case 4:
			rec->value = b;
			rec->value_len = l;
			break;
		default:
			rec->value_class = (const char *)b;
			rec->value_class_len = l;
			break;
		}
	}
	if (rc)
		return rc;
	return has_key ? 0 : -EPROTO;
}

int wal_walk(const uint8_t *p, size_t n, wal_record_fn fn, void *cookie,
	     uint64_t *tail_bytes, struct wal_fail *fail)
{
	size_t pos = 0;
	int rc = 0;

	if (tail_bytes)
		*tail_bytes = 0;
	if (!p && n)
		return -EINVAL;
	while (n - pos > WAL_HEADER_LEN) {
		const uint8_t *h = p + pos;
		int32_t len = (int32_t)le32(h); /* bytes 4..11: ignored */
		struct wal_record rec;
		const char *what = NULL;

		if (len < 0)
			what = "negative record length";
		else if ((size_t)len > n - pos - WAL_HEADER_LEN)
			break; /* a truncated tail: the file ends here */
		rec = (struct wal_record){
			.offset = pos,
			.payload_len = len < 0 ? 0 : (uint32_t)len,
		};
		if (!what &&
		    decode_imap_data(h + WAL_HEADER_LEN, (size_t)len, &rec))
			what = "undecodable record payload";
		if (what) {
			if (fail)
				*fail = (struct wal_fail){.offset = pos,
							  .what = what};
			return -EBADMSG;
		}
		if (fn) {
			rc = fn(cookie, &rec);
			if (rc) {
				pos += WAL_HEADER_LEN + (size_t)len;
				break;
			}
		}
		pos += WAL_HEADER_LEN + (size_t)len;
	}
	if (tail_bytes && !rc)
		*tail_bytes = n - pos;
	return rc < 0 ? rc : 0;
}

/* ---- WAL summary */

struct key_slot {
	uint8_t *key; /* owned copy; NULL: empty slot */
	size_t key_len;
	uint64_t hash;
	/* the winner: newest (ts, file, offset) */
	int64_t win_ts;
	size_t win_file;
	uint64_t win_off;
	uint64_t win_bytes;
	bool win_deleted;
	bool tie;	    /* a disagreeing record shares win_ts */
	uint64_t win_vhash; /* of the winner's value (0 for a tombstone) */
	size_t win_val_len;
	/* newest timestamp (ts1, in group f1) and newest in any group != f1 */
	int64_t ts1;
	size_t f1;
	int64_t ts2;
	bool has2;
};

struct sum_ctx {
	struct key_slot *slots;
	size_t mask;   /* slots - 1, a power of two minus one */
	size_t used;   /* occupied slots */
	size_t file;   /* the file being walked */
	size_t group;  /* of `file` */
	uint64_t base; /* file offset of the window being walked */
	bool file_ok;  /* pass 2: no record of this file survives */
	int err;       /* -ENOMEM from a callback */
	struct wal_summary *out;
};

static uint64_t key_hash(const uint8_t *k, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= k[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static struct key_slot *slot_of(struct key_slot *slots, size_t mask,
				const uint8_t *k, size_t n, uint64_t h)
{
	size_t i = (size_t)h & mask;

	for (;;) {
		struct key_slot *s = &slots[i];

		if (!s->key ||
		    (s->hash == h && s->key_len == n && !memcmp(s->key, k, n)))
			return s;
		i = (i + 1) & mask;
	}
}

/* Double the table (keys are owned: they move with their slots). */
static int grow(struct sum_ctx *c)
{
	size_t cap = (c->mask + 1) * 2, i;
	struct key_slot *n;

	if (cap > SIZE_MAX / sizeof(*n))
		return -EOVERFLOW;
	n = calloc(cap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (i = 0; i <= c->mask; i++)
		if (c->slots[i].key)
			*slot_of(n, cap - 1, c->slots[i].key,
				 c->slots[i].key_len, c->slots[i].hash) =
				c->slots[i];
	free(c->slots);
	c->slots = n;
	c->mask = cap - 1;
	return 0;
}

/* The slot of key k; a fresh one (a copy of k) when `insert`, else NULL
 * when absent.  *fresh tells which; NULL with c->err set on ENOMEM. */
static struct key_slot *key_find(struct sum_ctx *c, const uint8_t *k, size_t n,
				 bool insert, bool *fresh)
{
	uint64_t h = key_hash(k, n);
	struct key_slot *s = slot_of(c->slots, c->mask, k, n, h);

	*fresh = !s->key;
	if (!*fresh || !insert)
		return *fresh ? NULL : s;
	if ((c->used + 1) * 2 > c->mask + 1) {
		int rc = grow(c);

		if (rc) {
			c->err = rc;
			return NULL;
		}
		s = slot_of(c->slots, c->mask, k, n, h);
	}
	s->key = malloc(n ? n : 1);
	if (!s->key) {
		c->err = -ENOMEM;
		return NULL;
	}
	memcpy(s->key, k, n);
	s->key_len = n;
	s->hash = h;
	c->used++;
	return s;
}

/* Two records of one key at one timestamp that the reader may order either
 * way and that do not say the same thing. */
static bool disagree(const struct key_slot *s, const struct wal_record *rec,
		     uint64_t vhash)
{
	if (s->win_deleted != rec->deleted)
		return true;
	if (rec->deleted)
		return false; /* deleteAll writes each tombstone twice */
	return s->win_val_len != rec->value_len || s->win_vhash != vhash;
}

static int sum_insert(void *cookie, const struct wal_record *rec)
{
	struct sum_ctx *c = cookie;
	struct key_slot *s;
	bool fresh;
	int64_t ts = rec->timestamp;
	uint64_t off = c->base + rec->offset;
	uint64_t vh = rec->deleted ? 0 : key_hash(rec->value, rec->value_len);

	s = key_find(c, rec->key, rec->key_len, true, &fresh);
	if (!s)
		return c->err;
	c->out->records++;
	if (rec->deleted)
		c->out->tombstones++;
	if (!fresh && ts == s->win_ts && disagree(s, rec, vh))
		s->tie = true;
	if (fresh || ts > s->win_ts ||
	    (ts == s->win_ts &&
	     (c->file > s->win_file ||
	      (c->file == s->win_file && off > s->win_off)))) {
		if (fresh || ts > s->win_ts)
			s->tie = false;
		s->win_ts = ts;
		s->win_file = c->file;
		s->win_off = off;
		s->win_bytes = WAL_HEADER_LEN + (uint64_t)rec->payload_len;
		s->win_deleted = rec->deleted;
		s->win_vhash = vh;
		s->win_val_len = rec->deleted ? 0 : rec->value_len;
	}
	if (fresh) {
		s->ts1 = ts;
		s->f1 = c->group;
		s->has2 = false;
	} else if (c->group == s->f1) {
		if (ts > s->ts1)
			s->ts1 = ts;
	} else if (ts > s->ts1) {
		s->ts2 = s->ts1; /* old f1 differs from this group */
		s->has2 = true;
		s->ts1 = ts;
		s->f1 = c->group;
	} else if (!s->has2 || ts > s->ts2) {
		s->ts2 = ts;
		s->has2 = true;
	}
	return 0;
}

static int sum_check(void *cookie, const struct wal_record *rec)
{
	struct sum_ctx *c = cookie;
	struct key_slot *s;
	bool fresh;

	s = key_find(c, rec->key, rec->key_len, false, &fresh);
	if (!s)
		return -EFAULT; /* cannot happen: pass 1 inserted every key */
	if (s->f1 != c->group) {
		if (s->ts1 > rec->timestamp)
			return 0;
	} else if (s->has2 && s->ts2 > rec->timestamp) {
		return 0;
	}
	c->file_ok = false;
	return 1; /* one surviving record is enough */
}

/*
 * Walk file `f` in windows of at most `chunk` bytes (grown to hold one
 * whole record): the records seen, offsets relative to the file, are the
 * ones wal_walk() would see on the whole file.  `go` (may be NULL) ends
 * the walk early once false.  0 / -EBADMSG (*fail) / -errno.
 */
static int walk_file(wal_read_fn rd, void *cookie, size_t f, uint64_t size,
		     size_t chunk, wal_record_fn fn, struct sum_ctx *c,
		     const bool *go, uint64_t *tail, struct wal_fail *fail)
{
	uint8_t *buf = NULL;
	size_t cap = 0, have = 0;
	uint64_t base = 0;
	int rc = 0;

	*tail = 0;
	if (chunk < 64)
		chunk = 64;
	for (;;) {
		uint64_t left = size - base - have, t;
		size_t want = cap - have;
		ssize_t got;

		if (!cap || (have == cap && left)) {
			size_t ncap = cap ? cap * 2 : chunk;
			uint8_t *nb;

			if (ncap > size - base)
				ncap = size - base ? (size_t)(size - base) : 1;
			if (ncap <= cap)
				ncap = cap + 1;
			nb = realloc(buf, ncap);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap = ncap;
			want = cap - have;
		}
		if (want > left)
			want = (size_t)left;
		got = want ? rd(cookie, f, buf + have, want, base + have) : 0;
		if (got < 0) {
			rc = (int)got;
			break;
		}
		if ((size_t)got != want) {
			rc = -EIO; /* the file shrank under us */
			break;
		}
		have += (size_t)got;
		c->base = base;
		rc = wal_walk(buf, have, fn, c, &t, fail);
		if (rc == -EBADMSG && fail)
			fail->offset += base;
		if (rc < 0 || (go && !*go))
			break;
		rc = 0;
		if (base + have == size) {
			*tail = t;
			break;
		}
		if (t < have) {
			/* keep the unfinished record; the window starts there
			 */
			memmove(buf, buf + have - t, (size_t)t);
			base += have - t;
			have = (size_t)t;
		} else if (have >= WAL_HEADER_LEN) {
			/* one record longer than the window: make room */
			int32_t len = (int32_t)le32(buf);

			if (len >= 0 &&
			    base + WAL_HEADER_LEN + (uint64_t)len > size) {
				*tail = size - base; /* a truncated tail */
				break;
			}
		}
	}
	free(buf);
	return rc;
}

struct mem_files {
	const uint8_t *const *files;
	const size_t *lens;
};

static ssize_t mem_read(void *cookie, size_t f, void *buf, size_t len,
			uint64_t off)
{
	const struct mem_files *m = cookie;

	if (off > m->lens[f] || len > m->lens[f] - off)
		return -EIO;
	memcpy(buf, m->files[f] + off, len);
	return (ssize_t)len;
}

int wal_summarize_stream(wal_read_fn rd, void *cookie, const uint64_t *sizes,
			 const size_t *group, size_t nfiles, size_t chunk,
			 struct wal_summary *out, bool *superseded)
{
	struct sum_ctx c = {.out = out};
	uint64_t tail;
	size_t i;
	int rc = 0;

	if (!out || (nfiles && (!rd || !sizes)))
		return -EINVAL;
	*out = (struct wal_summary){0};
	for (i = 0; i < nfiles; i++)
		out->total_bytes += sizes[i];
	c.slots = calloc(16, sizeof(*c.slots));
	if (!c.slots)
		return -ENOMEM;
	c.mask = 15;
	for (i = 0; i < nfiles && !rc; i++) {
		c.file = i;
		c.group = group ? group[i] : i;
		rc = walk_file(rd, cookie, i, sizes[i], chunk, sum_insert, &c,
			       NULL, &tail, &out->fail);
		if (rc == -EBADMSG) {
			out->failed = true;
			out->fail_file = i;
			rc = 0;
			break;
		}
		out->tail_bytes += tail;
	}
	if (rc || out->failed) {
		/* the engine never gets past that file: nothing to count */
		for (i = 0; superseded && i < nfiles; i++)
			superseded[i] = false;
		out->reclaim_bytes = out->total_bytes;
		out->records = out->tombstones = out->tail_bytes = 0;
		goto done;
	}
	for (i = 0; i <= c.mask; i++) {
		struct key_slot *s = &c.slots[i];

		if (!s->key)
			continue;
		out->keys++;
		out->ties += s->tie;
		if (s->win_deleted) {
			out->dead_keys++;
		} else {
			out->live_keys++;
			out->live_bytes += s->win_bytes;
		}
	}
	out->reclaim_bytes = out->total_bytes - out->live_bytes;
	for (i = 0; i < nfiles; i++) {
		c.file = i;
		c.group = group ? group[i] : i;
		c.file_ok = true;
		rc = walk_file(rd, cookie, i, sizes[i], chunk, sum_check, &c,
			       &c.file_ok, &tail, NULL);
		if (rc < 0)
			goto done;
		rc = 0;
		if (superseded)
			superseded[i] = c.file_ok;
		if (c.file_ok)
			out->superseded_files++;
	}
done:
	for (i = 0; i <= c.mask; i++)
		free(c.slots[i].key);
	free(c.slots);
	return rc;
}

int wal_summarize(const uint8_t *const *files, const size_t *lens,
		  const size_t *group, size_t nfiles, struct wal_summary *out,
		  bool *superseded)
{
	struct mem_files m = {.files = files, .lens = lens};
	uint64_t *sizes;
	size_t i, chunk = 64;
	int rc;

	if (!out || (nfiles && (!files || !lens)))
		return -EINVAL;
	sizes = calloc(nfiles + 1, sizeof(*sizes));
	if (!sizes)
		return -ENOMEM;
	for (i = 0; i < nfiles; i++) {
		sizes[i] = lens[i];
		if (lens[i] > chunk)
			chunk = lens[i];
	}
	rc = wal_summarize_stream(mem_read, &m, sizes, group, nfiles, chunk,
				  out, superseded);
	free(sizes);
	return rc;
}
