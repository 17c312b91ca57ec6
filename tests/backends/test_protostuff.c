/*
 * Tests for fusefs/model/protostuff.c against the byte-exact fixtures in
 * tests/fixtures/protostuff/ (run with cwd = the repo root).
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
#include <jansson.h>

#include "fakes/testutil.h"
#include "model/protostuff.h"

#define FIX_DIR "tests/fixtures/protostuff/"

static const char *const ckpt_files[] = {
	"pipeline_state_checkpoint.ser",
	"pipeline_state_savepoint.ser",
	"pipeline_state_empty_tasks.ser",
	"pipeline_state_multi_action_nulls.ser",
	"variant_nopreserve_pipeline_state_checkpoint.ser",
};

static const char *const wal_files[] = {
	"wal_live_and_tombstone.wal", "wal_truncated_tail.wal",
	"wal_checkpoint_id_map.wal",  "wal_state_timestamps.wal",
	"wal_running_job_state.wal",
};

static uint8_t *load(const char *name, size_t *len)
{
	char *p = NULL;

	assert_int_equal(tu_load(FIX_DIR, name, &p, len), 0);
	return (uint8_t *)p;
}

static json_t *expected(void)
{
	json_error_t err;
	json_t *j = json_load_file(FIX_DIR "expected.json", 0, &err);

	assert_non_null(j);
	return j;
}

static int type_from_java_name(const char *s)
{
	static const char *const names[] = {
		"CHECKPOINT_TYPE", "SCHEMA_CHANGE_BEFORE_POINT_TYPE",
		"SCHEMA_CHANGE_AFTER_POINT_TYPE", "SAVEPOINT_TYPE",
		"COMPLETED_POINT_TYPE"};

	for (int i = 0; i < 5; i++)
		if (!strcmp(s, names[i]))
			return i;
	return CKPT_TYPE_UNKNOWN;
}

static int64_t jint(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* ---- checkpoint: full decode */

static void test_decode_ckpt_fixtures(void **state)
{
	json_t *exp = expected();

	(void)state;
	for (size_t i = 0; i < sizeof(ckpt_files) / sizeof(*ckpt_files); i++) {
		json_t *c = json_object_get(json_object_get(exp, ckpt_files[i]),
					    "content");
		json_t *st = json_object_get(c, "states");
		json_t *ty = json_object_get(st, "checkpointType");
		struct pstuff_ckpt ck;
		size_t n;
		uint8_t *p = load(ckpt_files[i], &n);

		assert_non_null(st);
		assert_int_equal(pstuff_decode_ckpt(p, n, &ck), 0);
		assert_string_equal(
			ck.job_id,
			json_string_value(json_object_get(c, "jobId")));
		assert_int_equal(ck.pipeline_id, jint(c, "pipelineId"));
		assert_int_equal(ck.checkpoint_id, jint(c, "checkpointId"));
		assert_true(ck.has_states);
		assert_int_equal(ck.cc_job_id, jint(st, "jobId"));
		assert_int_equal(ck.trigger_ts, jint(st, "triggerTimestamp"));
		assert_int_equal(ck.completed_ts,
				 jint(st, "completedTimestamp"));
		assert_int_equal(ck.type_ordinal, jint(ty, "ordinal"));
		assert_int_equal(ck.type,
				 type_from_java_name(json_string_value(
					 json_object_get(ty, "name"))));
		assert_int_equal(ck.table, 2);
		assert_false(ck.is_restored);
		assert_int_equal(ck.n_actions, json_array_size(json_object_get(
						       st, "taskStates")));
		/* the states field runs to the end of the file */
		assert_true(ck.states_len > 0 && ck.states_len < n);
		free(p);
	}
	json_decref(exp);
}

static void test_decode_ckpt_known_values(void **state)
{
	struct pstuff_ckpt ck;
	size_t n;
	uint8_t *p;

	(void)state;
	p = load("pipeline_state_savepoint.ser", &n);
	assert_int_equal(pstuff_decode_ckpt(p, n, &ck), 0);
	assert_int_equal(ck.type, CKPT_SAVEPOINT);
	assert_string_equal(ckpt_type_name(ck.type), "savepoint");
	assert_int_equal(ck.states_len, 415);
	free(p);
	p = load("pipeline_state_multi_action_nulls.ser", &n);
	assert_int_equal(pstuff_decode_ckpt(p, n, &ck), 0);
	assert_int_equal(ck.type, CKPT_SCHEMA_CHANGE_AFTER);
	assert_int_equal(ck.checkpoint_id, 300);
	assert_int_equal(ck.pipeline_id, 2);
	assert_int_equal(ck.n_actions, 2);
	free(p);
	assert_string_equal(ckpt_type_name(CKPT_CHECKPOINT), "checkpoint");
	assert_string_equal(ckpt_type_name(CKPT_COMPLETED), "completed-point");
	assert_string_equal(ckpt_type_name(99), "unknown");
	assert_string_equal(ckpt_type_name(-1), "unknown");
}

/*
 * A 2.3.0-2.3.2 file: the checkpoint fixture without field 9 (its last two
 * bytes), the states length fixed up, and checkpointType set to `ordinal`.
 */
static uint8_t *old_table_file(uint8_t ordinal, size_t *len)
{
	size_t n;
	uint8_t *p = load("pipeline_state_checkpoint.ser", &n);

	assert_int_equal(p[0x18], 0x22); /* states tag, length 9f 03 = 415 */
	assert_int_equal(p[0x19], 0x9f);
	assert_int_equal(p[0x1a], 0x03);
	assert_int_equal(p[n - 2], 0x48);
	p[0x19] = 0x9d; /* 413 */
	assert_int_equal(p[0x30], 0x28);
	p[0x31] = ordinal;
	*len = n - 2;
	return p;
}

static void test_decode_ckpt_old_table(void **state)
{
	static const struct {
		uint8_t ordinal;
		int type;
	} cases[] = {
		{0, CKPT_CHECKPOINT},
		{1, CKPT_SAVEPOINT},
		{2, CKPT_COMPLETED},
		{3, CKPT_TYPE_UNKNOWN},
	};
	struct pstuff_ckpt ck;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		uint8_t *p = old_table_file(cases[i].ordinal, &n);

		assert_int_equal(pstuff_decode_ckpt(p, n, &ck), 0);
		assert_int_equal(ck.table, 1);
		assert_int_equal(ck.type_ordinal, cases[i].ordinal);
		assert_int_equal(ck.type, cases[i].type);
		assert_int_equal(ck.n_actions, 1);
		free(p);
	}
}

static void test_decode_ckpt_negative_pipeline(void **state)
{
	static const uint8_t b[] = {0x0a, 0x01, '5',  0x10, 0xff, 0xff,
				    0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				    0xff, 0x01, 0x18, 0x01, 0x22, 0x06,
				    0x28, 0x04, 0x3b, 0x3c, 0x48, 0x01};
	struct pstuff_ckpt ck;

	(void)state;
	assert_int_equal(pstuff_decode_ckpt(b, sizeof(b), &ck), 0);
	assert_string_equal(ck.job_id, "5");
	assert_int_equal(ck.pipeline_id, -1);
	assert_int_equal(ck.checkpoint_id, 1);
	assert_int_equal(ck.type, CKPT_COMPLETED);
	assert_true(ck.is_restored);
	assert_int_equal(ck.n_actions, 0);
}

static void test_decode_ckpt_rejects_garbage(void **state)
{
	static const uint8_t long_varint[] = {0x10, 0xff, 0xff, 0xff,
					      0xff, 0xff, 0xff, 0xff,
					      0xff, 0xff, 0xff, 0x01};
	static const uint8_t stray_end[] = {0x10, 0x01, 0x0c};
	static const uint8_t bad_wt[] = {0x0a, 0x01, '1', 0x17};
	static const uint8_t states_past_end[] = {0x22, 0x7f, 0x08, 0x01};
	static const uint8_t wrong_wt_field5[] = {0x22, 0x02, 0x2a, 0x00};
	struct pstuff_ckpt ck;
	uint8_t deep[300];
	size_t n;
	uint8_t *p;

	(void)state;
	assert_int_equal(
		pstuff_decode_ckpt(long_varint, sizeof(long_varint), &ck),
		-EPROTO);
	assert_int_equal(pstuff_decode_ckpt(stray_end, sizeof(stray_end), &ck),
			 -EPROTO);
	assert_int_equal(pstuff_decode_ckpt(bad_wt, sizeof(bad_wt), &ck),
			 -EPROTO);
	assert_int_equal(pstuff_decode_ckpt(states_past_end,
					    sizeof(states_past_end), &ck),
			 -EPROTO);
	assert_int_equal(pstuff_decode_ckpt(wrong_wt_field5,
					    sizeof(wrong_wt_field5), &ck),
			 -EPROTO);
	assert_int_equal(pstuff_decode_ckpt(NULL, 0, &ck), -EPROTO);
	/* an unknown field nested 150 groups deep */
	memset(deep, 0x5b, 150); /* START_GROUP(11) */
	memset(deep + 150, 0x5c, 150);
	assert_int_equal(pstuff_decode_ckpt(deep, sizeof(deep), &ck),
			 -EOVERFLOW);
	/* but a shallow unknown group is skipped */
	assert_int_equal(pstuff_decode_ckpt(deep + 148, 4, &ck), -EPROTO);

	/*
	 * Every strict prefix of a real file fails cleanly, except those
	 * that stop before the states field: a PipelineState without states.
	 */
	p = load("pipeline_state_multi_action_nulls.ser", &n);
	assert_int_equal(p[0x19], 0x22); /* the states tag */
	for (size_t k = 1; k < n; k++) {
		uint8_t *q = malloc(k);
		int rc;

		assert_non_null(q);
		memcpy(q, p, k);
		rc = pstuff_decode_ckpt(q, k, &ck);
		if (k == 0x14 || k == 0x16 || k == 0x19) {
			assert_int_equal(rc, 0);
			assert_false(ck.has_states);
			assert_int_equal(ck.type, CKPT_TYPE_UNKNOWN);
		} else {
			assert_int_equal(rc, -EPROTO);
		}
		free(q);
	}
	free(p);
}

/* ---- checkpoint: head + tail */

static void test_decode_ckpt_head_matches_full(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ckpt_files) / sizeof(*ckpt_files); i++) {
		struct pstuff_ckpt full, h;
		size_t n;
		uint8_t *p = load(ckpt_files[i], &n);
		uint8_t tail[2];
		bool got = false;
		size_t first = 0;

		assert_int_equal(pstuff_decode_ckpt(p, n, &full), 0);
		tail[0] = p[n - 2];
		tail[1] = p[n - 1];
		for (size_t k = 0; k <= n; k++) {
			uint8_t *q = malloc(k + 1);
			int rc;

			assert_non_null(q);
			memcpy(q, p, k);
			rc = pstuff_decode_ckpt_head(q, k, tail, n, &h);
			if (k == 64 || k == 128 || k == n || got)
				assert_int_equal(rc, 0);
			else if (rc)
				assert_int_equal(rc, -EAGAIN);
			if (!rc) {
				if (!got)
					first = k;
				got = true;
				assert_int_equal(h.type, full.type);
				assert_int_equal(h.type_ordinal,
						 full.type_ordinal);
				assert_int_equal(h.table, full.table);
				assert_int_equal(h.pipeline_id,
						 full.pipeline_id);
				assert_int_equal(h.checkpoint_id,
						 full.checkpoint_id);
				assert_string_equal(h.job_id, full.job_id);
				assert_int_equal(h.trigger_ts, full.trigger_ts);
				assert_int_equal(h.states_len, full.states_len);
			}
			free(q);
		}
		/* the first head that works ends with field 5 (`28 <ord>`) */
		assert_true(first >= 2 && first < 64);
		assert_int_equal(p[first - 2], 0x28);
		assert_int_equal(p[first - 1], full.type_ordinal);
		free(p);
	}
}

static void test_decode_ckpt_head_old_table(void **state)
{
	struct pstuff_ckpt h, full;
	uint8_t tail[2];
	size_t n;
	uint8_t *p;

	(void)state;
	for (uint8_t ord = 0; ord < 5; ord++) {
		p = old_table_file(ord, &n);
		tail[0] = p[n - 2];
		tail[1] = p[n - 1];
		assert_int_equal(pstuff_decode_ckpt(p, n, &full), 0);
		assert_int_equal(pstuff_decode_ckpt_head(p, 64, tail, n, &h),
				 0);
		if (ord < 3) {
			assert_int_equal(h.table, 1);
			assert_int_equal(h.type, full.type);
		} else {
			/* 3 and 4 exist only in the new table */
			assert_int_equal(h.table, 2);
			assert_int_equal(h.type, ord == 3 ? CKPT_SAVEPOINT
							  : CKPT_COMPLETED);
		}
		free(p);
	}
	/* ordinal 1 means savepoint in an old file... */
	p = old_table_file(1, &n);
	tail[0] = p[n - 2];
	tail[1] = p[n - 1];
	assert_int_equal(pstuff_decode_ckpt_head(p, 64, tail, n, &h), 0);
	assert_int_equal(h.type, CKPT_SAVEPOINT);
	/* ...and schema-change-before when the file ends with field 9 */
	tail[0] = 0x48;
	tail[1] = 0x01;
	assert_int_equal(pstuff_decode_ckpt_head(p, 64, tail, n, &h), 0);
	assert_int_equal(h.type, CKPT_SCHEMA_CHANGE_BEFORE);
	assert_true(h.is_restored);
	free(p);
}

static void test_decode_ckpt_head_rejects_bad_length(void **state)
{
	struct pstuff_ckpt h;
	uint8_t tail[2] = {0x48, 0x00};
	size_t n;
	uint8_t *p = load("pipeline_state_checkpoint.ser", &n);

	(void)state;
	/* the file is said to be shorter than its states field */
	assert_int_equal(pstuff_decode_ckpt_head(p, 64, tail, 100, &h),
			 -EPROTO);
	p[0x30] = 0x29; /* field 5 with wire type 1 */
	assert_int_equal(pstuff_decode_ckpt_head(p, 64, tail, n, &h), -EPROTO);
	free(p);
}

/* ---- checkpoint: JSON */

static void test_ckpt_to_json_fixtures(void **state)
{
	json_t *exp = expected();

	(void)state;
	for (size_t i = 0; i < sizeof(ckpt_files) / sizeof(*ckpt_files); i++) {
		json_t *want = json_object_get(
			json_object_get(exp, ckpt_files[i]), "content");
		json_error_t err;
		json_t *got;
		struct buf b;
		size_t n;
		uint8_t *p = load(ckpt_files[i], &n);

		buf_init(&b, BUF_DEFAULT_MAX);
		assert_int_equal(pstuff_ckpt_to_json(p, n, &b), 0);
		got = json_loadb(b.data, b.len, 0, &err);
		assert_non_null(got);
		if (!json_equal(got, want)) {
			print_error("%s: got %s\n", ckpt_files[i], b.data);
			fail();
		}
		json_decref(got);
		buf_release(&b);
		free(p);
	}
	json_decref(exp);
}

static void test_ckpt_to_json_old_table_and_errors(void **state)
{
	json_error_t err;
	json_t *got;
	struct buf b;
	size_t n;
	uint8_t *p = old_table_file(1, &n);

	(void)state;
	buf_init(&b, BUF_DEFAULT_MAX);
	assert_int_equal(pstuff_ckpt_to_json(p, n, &b), 0);
	got = json_loadb(b.data, b.len, 0, &err);
	assert_non_null(got);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_object_get(got, "states"),
					"checkpointType"),
			"name")),
		"SAVEPOINT_TYPE");
	assert_null(
		json_object_get(json_object_get(got, "states"), "isRestored"));
	json_decref(got);
	/* a truncated file is refused, the buffer is untouched */
	buf_reset(&b);
	assert_int_equal(pstuff_ckpt_to_json(p, n - 5, &b), -EPROTO);
	assert_int_equal(b.len, 0);
	/* a too-small buffer reports -EFBIG */
	buf_release(&b);
	buf_init(&b, 64);
	assert_int_equal(pstuff_ckpt_to_json(p, n, &b), -EFBIG);
	buf_release(&b);
	free(p);
}

/* ---- WAL */

#define MAX_RECS 8

struct walk_log {
	unsigned n;
	struct wal_record r[MAX_RECS];
	int stop_after; /* 0: never */
};

static int log_rec(void *cookie, const struct wal_record *rec)
{
	struct walk_log *l = cookie;

	assert_true(l->n < MAX_RECS);
	l->r[l->n++] = *rec;
	if (l->stop_after && (int)l->n == l->stop_after)
		return 1;
	return 0;
}

static bool span_eq(const void *p, size_t n, const char *s)
{
	return p && n == strlen(s) && !memcmp(p, s, n);
}

/* `0b 30 <varint> 0c`: a wrapped java.lang.Long */
static int64_t wrapped_long(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	size_t i;

	assert_true(n >= 4);
	assert_int_equal(p[0], 0x0b);
	assert_int_equal(p[1], 0x30);
	for (i = 2; i < n - 1; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * (i - 2));
		if (!(p[i] & 0x80))
			break;
	}
	assert_int_equal(i, n - 2);
	assert_int_equal(p[n - 1], 0x0c);
	return (int64_t)v;
}

static void test_wal_walk_fixtures(void **state)
{
	json_t *exp = expected();

	(void)state;
	for (size_t i = 0; i < sizeof(wal_files) / sizeof(*wal_files); i++) {
		json_t *e = json_object_get(exp, wal_files[i]);
		json_t *recs = json_object_get(e, "records");
		json_t *tt = json_object_get(e, "truncated_tail");
		struct walk_log l = {0};
		uint64_t tail = 99;
		size_t n;
		uint8_t *p = load(wal_files[i], &n);

		assert_int_equal(wal_walk(p, n, log_rec, &l, &tail, NULL), 0);
		assert_int_equal(l.n, json_array_size(recs));
		if (tt) {
			assert_int_equal(tail,
					 n - (size_t)jint(tt, "truncated_at"));
			assert_int_equal(tail, 12 + jint(tt, "present"));
		} else {
			assert_int_equal(tail, 0);
		}
		for (unsigned k = 0; k < l.n; k++) {
			json_t *x = json_array_get(recs, k);
			const struct wal_record *r = &l.r[k];
			json_t *vc = json_object_get(x, "valueClassName");

			assert_int_equal(r->offset, jint(x, "_offset"));
			assert_int_equal(r->payload_len,
					 jint(x, "_payload_len"));
			assert_int_equal(
				r->deleted,
				json_is_true(json_object_get(x, "deleted")));
			assert_true(span_eq(r->key_class, r->key_class_len,
					    json_string_value(json_object_get(
						    x, "keyClassName"))));
			assert_int_equal(r->timestamp, jint(x, "timestamp"));
			if (vc) {
				assert_non_null(r->value);
				assert_true(span_eq(r->value_class,
						    r->value_class_len,
						    json_string_value(vc)));
			} else {
				assert_true(r->deleted);
				assert_null(r->value);
				assert_null(r->value_class);
			}
			if (span_eq(r->key_class, r->key_class_len,
				    "java.lang.Long"))
				assert_int_equal(
					wrapped_long(r->key, r->key_len),
					jint(x, "key"));
			if (vc &&
			    !strcmp(json_string_value(vc), "java.lang.Long"))
				assert_int_equal(
					wrapped_long(r->value, r->value_len),
					jint(x, "value"));
		}
		free(p);
	}
	json_decref(exp);
}

static void test_wal_walk_keys_and_values(void **state)
{
	struct walk_log l = {0};
	uint64_t tail;
	size_t n;
	uint8_t *p;

	(void)state;
	/* the same key gives the same bytes */
	p = load("wal_checkpoint_id_map.wal", &n);
	assert_int_equal(wal_walk(p, n, log_rec, &l, &tail, NULL), 0);
	assert_int_equal(l.n, 3);
	for (unsigned k = 1; k < 3; k++) {
		assert_int_equal(l.r[k].key_len, l.r[0].key_len);
		assert_memory_equal(l.r[k].key, l.r[0].key, l.r[0].key_len);
	}
	/* String key: 0b 4a 10 "DKlNj6dFS4cAAAAB" 0c */
	assert_int_equal(l.r[0].key_len, 20);
	assert_memory_equal(l.r[0].key,
			    "\x0b\x4a\x10"
			    "DKlNj6dFS4cAAAAB\x0c",
			    20);
	free(p);

	/* distinct keys give distinct bytes; the POJO key is not wrapped */
	l = (struct walk_log){0};
	p = load("wal_state_timestamps.wal", &n);
	assert_int_equal(wal_walk(p, n, log_rec, &l, &tail, NULL), 0);
	assert_int_equal(l.n, 2);
	assert_false(l.r[0].key_len == l.r[1].key_len &&
		     !memcmp(l.r[0].key, l.r[1].key, l.r[0].key_len));
	assert_int_equal(l.r[1].key[0], 0x08);
	assert_int_equal(l.r[1].key[l.r[1].key_len - 2], 0x10);
	assert_int_equal(l.r[1].key[l.r[1].key_len - 1], 0x01);
	free(p);

	/* a root enum value: 0a 07 "RUNNING" 10 04 18 00 */
	l = (struct walk_log){0};
	p = load("wal_running_job_state.wal", &n);
	assert_int_equal(wal_walk(p, n, log_rec, &l, &tail, NULL), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.r[0].value_len, 13);
	assert_memory_equal(l.r[0].value, "\x0a\x07RUNNING\x10\x04\x18\x00",
			    13);
	free(p);

	/* JobInfo value: 08 <initializationTimestamp> ... HeapData payload */
	l = (struct walk_log){0};
	p = load("wal_live_and_tombstone.wal", &n);
	assert_int_equal(wal_walk(p, n, log_rec, &l, &tail, NULL), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.r[0].value[0], 0x08);
	assert_non_null(memmem(l.r[0].value, l.r[0].value_len,
			       "\x0a\x0c\x00\x00\x00\x00\xff\xff\xff\xfe"
			       "\xca\xfe\xba\xbe",
			       14));
	assert_int_equal(l.r[0].key_len, l.r[1].key_len);
	assert_memory_equal(l.r[0].key, l.r[1].key, l.r[0].key_len);
	free(p);
}

/* wal_walk over q = a copy of p[0..n) with q[at] = byte, into a fresh *l. */
static int walk_patched(uint8_t *q, const uint8_t *p, size_t n, size_t at,
			uint8_t byte, struct walk_log *l, uint64_t *tail,
			struct wal_fail *f)
{
	*l = (struct walk_log){0};
	*f = (struct wal_fail){0};
	memcpy(q, p, n);
	q[at] = byte;
	return wal_walk(q, n, log_rec, l, tail, f);
}

static void test_wal_walk_hostile(void **state)
{
	struct walk_log l = {0};
	struct wal_fail f;
	uint64_t tail;
	uint8_t *q;
	size_t n;
	uint8_t *p = load("wal_live_and_tombstone.wal", &n);

	(void)state;
	q = malloc(n + 40);
	assert_non_null(q);

	/* header bytes 4..11 are ignored by the engine's reader */
	assert_int_equal(walk_patched(q, p, n, 7, 1, &l, &tail, &f), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(walk_patched(q, p, n, 175 + 11, 0x80, &l, &tail, &f),
			 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(tail, 0);

	/* a negative length makes the whole load fail, at that record */
	assert_int_equal(walk_patched(q, p, n, 175 + 3, 0x80, &l, &tail, &f),
			 -EBADMSG);
	assert_int_equal(f.offset, 175);
	assert_string_equal(f.what, "negative record length");

	/* a length past the end is a truncated tail */
	assert_int_equal(walk_patched(q, p, n, 175 + 2, 0x7f, &l, &tail, &f),
			 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(tail, n - 175);

	/* an undecodable payload (field 1, wire type 7) fails the load */
	assert_int_equal(walk_patched(q, p, n, 12, 0x0f, &l, &tail, &f),
			 -EBADMSG);
	assert_int_equal(l.n, 0);
	assert_int_equal(f.offset, 0);
	assert_string_equal(f.what, "undecodable record payload");

	/* exactly 12 trailing bytes are not read (start + 12 < length) */
	l = (struct walk_log){0};
	memcpy(q, p, n);
	memset(q + n, 0, 12);
	assert_int_equal(wal_walk(q, n + 12, log_rec, &l, &tail, &f), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(tail, 12);
	/* ...but 13 bytes with length 1 are a record (a bad one: no key) */
	l = (struct walk_log){0};
	memset(q + n, 0, 13);
	q[n] = 1;
	assert_int_equal(wal_walk(q, n + 13, log_rec, &l, &tail, &f), -EBADMSG);
	assert_int_equal(l.n, 2);
	assert_int_equal(f.offset, n);

	/* the callback stops the walk; negative values come back */
	l = (struct walk_log){.stop_after = 1};
	assert_int_equal(wal_walk(p, n, log_rec, &l, &tail, NULL), 0);
	assert_int_equal(l.n, 1);
	/* empty input and NULL outputs */
	assert_int_equal(wal_walk(NULL, 0, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(wal_walk(p, n, NULL, NULL, NULL, NULL), 0);
	free(q);
	free(p);
}

static int fail_cb(void *cookie, const struct wal_record *rec)
{
	(void)cookie;
	(void)rec;
	return -EIO;
}

static void test_wal_walk_callback_error(void **state)
{
	size_t n;
	uint8_t *p = load("wal_checkpoint_id_map.wal", &n);

	(void)state;
	assert_int_equal(wal_walk(p, n, fail_cb, NULL, NULL, NULL), -EIO);
	free(p);
}

/* ---- WAL summary, on files cut and pasted from fixture records */

struct cut {
	uint8_t *data;
	size_t len;
};

/* Append record `idx` of fixture `name` to c. */
static void cut_add(struct cut *c, const char *name, unsigned idx)
{
	struct walk_log l = {0};
	size_t n, sz;
	uint8_t *p = load(name, &n);

	assert_int_equal(wal_walk(p, n, log_rec, &l, NULL, NULL), 0);
	assert_true(idx < l.n);
	sz = 12 + l.r[idx].payload_len;
	c->data = realloc(c->data, c->len + sz);
	assert_non_null(c->data);
	memcpy(c->data + c->len, p + l.r[idx].offset, sz);
	c->len += sz;
	free(p);
}

/* Rewrite the timestamp (the payload's last field, `30 varint`) of the
 * record that ends c; the new varint must have the same length. */
static void cut_set_last_ts(struct cut *c, uint64_t ts)
{
	uint8_t v[10];
	size_t k = 0;

	do {
		v[k] = (uint8_t)(ts & 0x7f);
		ts >>= 7;
		if (ts)
			v[k] |= 0x80;
		k++;
	} while (ts);
	assert_true(c->len > k + 1);
	assert_int_equal(c->data[c->len - k - 1], 0x30);
	assert_int_equal(c->data[c->len - 1] & 0x80, 0);
	memcpy(c->data + c->len - k, v, k);
}

static int summarize(struct cut *c, size_t k, struct wal_summary *s, bool *sup)
{
	const uint8_t *files[8];
	size_t lens[8];

	assert_true(k <= 8);
	for (size_t i = 0; i < k; i++) {
		files[i] = c[i].data;
		lens[i] = c[i].len;
	}
	return wal_summarize(files, lens, NULL, k, s, sup);
}

static void cuts_free(struct cut *c, size_t k)
{
	for (size_t i = 0; i < k; i++)
		free(c[i].data);
}

static void test_wal_summarize_overwrite_and_tombstone(void **state)
{
	/* one key: 8 (f0), overwritten by 9 (f1), deleted (f2) */
	struct cut c[3] = {0};
	struct wal_summary s;
	bool sup[3] = {false, false, true};

	(void)state;
	cut_add(&c[0], "wal_checkpoint_id_map.wal", 0);
	cut_add(&c[1], "wal_checkpoint_id_map.wal", 1);
	cut_add(&c[2], "wal_checkpoint_id_map.wal", 2);
	assert_int_equal(summarize(c, 3, &s, sup), 0);
	assert_int_equal(s.records, 3);
	assert_int_equal(s.tombstones, 1);
	assert_int_equal(s.keys, 1);
	assert_int_equal(s.live_keys, 0);
	assert_int_equal(s.dead_keys, 1);
	assert_int_equal(s.total_bytes, 227);
	assert_int_equal(s.live_bytes, 0);
	assert_int_equal(s.reclaim_bytes, 227);
	assert_true(sup[0]);
	assert_true(sup[1]);
	assert_false(sup[2]); /* the tombstone is the newest */
	assert_int_equal(s.superseded_files, 2);

	/* without the tombstone, 9 lives in f1 */
	assert_int_equal(summarize(c, 2, &s, sup), 0);
	assert_int_equal(s.live_keys, 1);
	assert_int_equal(s.dead_keys, 0);
	assert_int_equal(s.live_bytes, 83);
	assert_int_equal(s.reclaim_bytes, 83);
	assert_true(sup[0]);
	assert_false(sup[1]);

	/* the same records in reverse file order: the winner is by time */
	{
		struct cut r[2] = {c[1], c[0]};

		assert_int_equal(summarize(r, 2, &s, sup), 0);
		assert_int_equal(s.live_bytes, 83);
		assert_false(sup[0]);
		assert_true(sup[1]);
	}
	cuts_free(c, 3);
}

static void test_wal_summarize_mixed_regions(void **state)
{
	/*
	 * f0: Long key A live (JobInfo) + String key B = 8
	 * f1: Long key A tombstone + String key B = 9 + PipelineLocation key C
	 * f2: B tombstone, with the same timestamp as B = 9 in f1
	 */
	struct cut c[3] = {0};
	struct wal_summary s;
	bool sup[3];

	(void)state;
	cut_add(&c[0], "wal_live_and_tombstone.wal", 0);
	cut_add(&c[0], "wal_checkpoint_id_map.wal", 0);
	cut_add(&c[1], "wal_live_and_tombstone.wal", 1);
	cut_add(&c[1], "wal_checkpoint_id_map.wal", 1);
	cut_add(&c[1], "wal_state_timestamps.wal", 1);
	cut_add(&c[2], "wal_checkpoint_id_map.wal", 2);
	cut_set_last_ts(&c[2], 1730001244567ULL);
	assert_int_equal(summarize(c, 3, &s, sup), 0);
	assert_int_equal(s.records, 6);
	assert_int_equal(s.tombstones, 2);
	assert_int_equal(s.keys, 3);
	assert_int_equal(s.live_keys, 1); /* C */
	assert_int_equal(s.dead_keys, 2); /* A, and B (later file on a tie) */
	assert_int_equal(s.live_bytes, 12 + 142);
	assert_int_equal(s.total_bytes, c[0].len + c[1].len + c[2].len);
	assert_int_equal(s.reclaim_bytes, s.total_bytes - s.live_bytes);
	assert_true(sup[0]);  /* A and B both newer in f1 */
	assert_false(sup[1]); /* holds the only C, and the tombstone */
	assert_false(sup[2]); /* B: f1 has the same time, not newer */
	assert_int_equal(s.superseded_files, 1);
	assert_int_equal(s.tail_bytes, 0);
	assert_false(s.failed);
	assert_int_equal(s.ties, 1); /* B: live 9 and a tombstone, one ms */
	cuts_free(c, 3);
}

static void test_wal_summarize_tail_and_empty(void **state)
{
	struct cut c[3] = {0};
	struct wal_summary s;
	bool sup[3];
	size_t n;

	(void)state;
	c[0].data = load("wal_truncated_tail.wal", &n);
	c[0].len = n;
	/* f1: header bytes 4..11 are not zero: ignored, as the engine does */
	c[1].data = load("wal_checkpoint_id_map.wal", &n);
	c[1].len = n;
	c[1].data[5] = 0xee;
	/* f2: empty */
	assert_int_equal(summarize(c, 3, &s, sup), 0);
	assert_false(s.failed);
	assert_int_equal(s.records, 5);
	assert_int_equal(s.tail_bytes, 22);
	assert_int_equal(s.keys, 2);
	assert_int_equal(s.total_bytes, 248 + 227);
	assert_true(sup[2]); /* nothing in it */
	/* no files at all, and a NULL superseded array */
	assert_int_equal(wal_summarize(NULL, NULL, NULL, 0, &s, NULL), 0);
	assert_int_equal(s.records, 0);
	assert_int_equal(summarize(c, 1, &s, NULL), 0);
	assert_int_equal(s.records, 2);
	assert_int_equal(wal_summarize(NULL, NULL, NULL, 1, &s, NULL), -EINVAL);
	cuts_free(c, 3);
}

/* A record the reader aborts on fails the whole map, at file F offset O. */
static void test_wal_summarize_load_fails(void **state)
{
	struct cut c[2] = {0};
	struct wal_summary s;
	bool sup[2] = {true, true};

	(void)state;
	cut_add(&c[0], "wal_checkpoint_id_map.wal", 0);
	cut_add(&c[1], "wal_checkpoint_id_map.wal", 1);
	cut_add(&c[1], "wal_checkpoint_id_map.wal", 2);
	c[1].data[83 + 3] = 0x80; /* second record of f1: negative length */
	assert_int_equal(summarize(c, 2, &s, sup), 0);
	assert_true(s.failed);
	assert_int_equal(s.fail_file, 1);
	assert_int_equal(s.fail.offset, 83);
	assert_string_equal(s.fail.what, "negative record length");
	assert_false(sup[0]);
	assert_false(sup[1]);
	assert_int_equal(s.superseded_files, 0);
	assert_int_equal(s.total_bytes, c[0].len + c[1].len);
	cuts_free(c, 2);
}

/* Files of one group (a region's 1_wal.txt, 2_wal.txt) do not supersede
 * each other: only records in another group count. */
static void test_wal_summarize_groups(void **state)
{
	struct cut c[3] = {0};
	struct wal_summary s;
	bool sup[3];
	const uint8_t *files[3];
	size_t lens[3], one[3] = {0, 0, 1}, each[3] = {0, 1, 2};

	(void)state;
	cut_add(&c[0], "wal_checkpoint_id_map.wal", 0);
	cut_add(&c[1], "wal_checkpoint_id_map.wal", 1);
	cut_add(&c[2], "wal_state_timestamps.wal", 0);
	for (int i = 0; i < 3; i++) {
		files[i] = c[i].data;
		lens[i] = c[i].len;
	}
	assert_int_equal(wal_summarize(files, lens, each, 3, &s, sup), 0);
	assert_true(sup[0]); /* its key is newer in f1 */
	assert_int_equal(wal_summarize(files, lens, one, 3, &s, sup), 0);
	assert_false(sup[0]); /* f1 is the same region */
	assert_false(sup[1]);
	assert_false(sup[2]);
	assert_int_equal(s.ties, 0);
	cuts_free(c, 3);
}

/* Same key, same timestamp: flagged unless the records agree. */
static void test_wal_summarize_ties(void **state)
{
	struct cut c[2] = {0};
	struct wal_summary s;

	(void)state;
	/* the same record twice (deleteAll writes tombstones twice) */
	cut_add(&c[0], "wal_checkpoint_id_map.wal", 2);
	cut_add(&c[1], "wal_checkpoint_id_map.wal", 2);
	assert_int_equal(summarize(c, 2, &s, NULL), 0);
	assert_int_equal(s.ties, 0);
	cuts_free(c, 2);
	memset(c, 0, sizeof(c));
	/* live 8 and live 9 at the same millisecond */
	cut_add(&c[0], "wal_checkpoint_id_map.wal", 0);
	cut_add(&c[1], "wal_checkpoint_id_map.wal", 1);
	cut_set_last_ts(&c[1], 1730001234567ULL);
	cut_set_last_ts(&c[0], 1730001234567ULL);
	assert_int_equal(summarize(c, 2, &s, NULL), 0);
	assert_int_equal(s.ties, 1);
	assert_int_equal(s.live_keys, 1);
	cuts_free(c, 2);
}

static void test_wal_summarize_single_file_fixtures(void **state)
{
	static const struct {
		const char *name;
		unsigned live, dead;
		uint64_t live_bytes;
	} cases[] = {
		{"wal_live_and_tombstone.wal", 0, 1, 0},
		{"wal_checkpoint_id_map.wal", 0, 1, 0},
		{"wal_state_timestamps.wal", 2, 0, 270},
		{"wal_running_job_state.wal", 1, 0, 114},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct cut c = {0};
		struct wal_summary s;
		bool sup = true;

		c.data = load(cases[i].name, &c.len);
		assert_int_equal(summarize(&c, 1, &s, &sup), 0);
		assert_int_equal(s.live_keys, cases[i].live);
		assert_int_equal(s.dead_keys, cases[i].dead);
		assert_int_equal(s.live_bytes, cases[i].live_bytes);
		assert_int_equal(s.reclaim_bytes, c.len - cases[i].live_bytes);
		assert_false(sup); /* one file: nothing in ANOTHER file */
		free(c.data);
	}
}

/* Engine-written bytes from the engine's own repository (upstream/README). */
static void test_decode_ckpt_upstream_fixtures(void **state)
{
	struct pstuff_ckpt c;
	size_t n;
	uint8_t *p = load("upstream/legacy_v0_pipeline_state.ser", &n);

	(void)state;
	assert_int_equal(pstuff_decode_ckpt(p, n, &c), 0);
	assert_string_equal(c.job_id, "733584788375093248");
	assert_int_equal(c.pipeline_id, 0);
	assert_int_equal(c.checkpoint_id, 7);
	assert_true(c.has_states);
	assert_int_equal(c.cc_job_id, 733584788375093248LL);
	assert_int_equal(c.trigger_ts, 1748595600000LL);
	assert_int_equal(c.completed_ts, 1748595600123LL);
	assert_int_equal(c.type, CKPT_SAVEPOINT);
	assert_int_equal(c.n_actions, 1);
	assert_false(c.is_restored);
	free(p);
}

struct memf {
	struct cut *c;
	unsigned reads;
};

static ssize_t memf_read(void *cookie, size_t f, void *buf, size_t len,
			 uint64_t off)
{
	struct memf *m = cookie;

	assert_true(off + len <= m->c[f].len);
	memcpy(buf, m->c[f].data + off, len);
	m->reads++;
	return (ssize_t)len;
}

/* The streaming summary gives the same answer in windows of any size, a
 * torn tail and a record longer than the window included. */
static void test_wal_summarize_stream_windows(void **state)
{
	struct cut c[3] = {0};
	struct wal_summary whole, w;
	bool sup[3], sup2[3];
	uint64_t sizes[3];
	size_t n;
	uint8_t *t = load("wal_truncated_tail.wal", &n);

	(void)state;
	cut_add(&c[0], "wal_live_and_tombstone.wal", 0);
	cut_add(&c[0], "wal_checkpoint_id_map.wal", 0);
	cut_add(&c[1], "wal_live_and_tombstone.wal", 1);
	cut_add(&c[1], "wal_checkpoint_id_map.wal", 1);
	c[2].data = t;
	c[2].len = n;
	assert_int_equal(summarize(c, 3, &whole, sup), 0);
	assert_true(whole.tail_bytes > 0);
	for (int i = 0; i < 3; i++)
		sizes[i] = c[i].len;
	for (size_t chunk = 1; chunk < 400; chunk += 7) {
		struct memf m = {.c = c};

		assert_int_equal(wal_summarize_stream(memf_read, &m, sizes,
						      NULL, 3, chunk, &w, sup2),
				 0);
		assert_memory_equal(&w, &whole, sizeof(w));
		assert_memory_equal(sup2, sup, sizeof(sup));
		if (chunk < 100)
			assert_true(m.reads > 6); /* really in windows */
	}
	cuts_free(c, 3);
}

/* ---- pstuff_summarize: the `info` decode */

static const struct pstuff_action *sum_action(const struct pstuff_summary *s,
					      const char *name)
{
	for (size_t i = 0; i < s->n_actions; i++)
		if (strcmp(s->actions[i].name, name) == 0)
			return &s->actions[i];
	return NULL;
}

/* bytes of the non-null hex strings of a JSON List<byte[]> */
static uint64_t hex_list_bytes(json_t *list)
{
	uint64_t b = 0;
	size_t i;
	json_t *e;

	json_array_foreach (list, i, e)
		if (json_is_string(e))
			b += strlen(json_string_value(e)) / 2;
	return b;
}

/* Every fixture, checked against the Java read-back in expected.json. */
static void test_summary_fixtures(void **state)
{
	json_t *exp = expected();

	(void)state;
	for (size_t f = 0; f < sizeof(ckpt_files) / sizeof(*ckpt_files); f++) {
		json_t *c = json_object_get(json_object_get(exp, ckpt_files[f]),
					    "content");
		json_t *st = json_object_get(c, "states"), *e;
		json_t *ts = json_object_get(st, "taskStates");
		json_t *stats = json_object_get(st, "taskStatistics");
		struct pstuff_summary s;
		size_t n, i;
		uint8_t *p = load(ckpt_files[f], &n);

		assert_int_equal(pstuff_summarize_mem(p, n, false, &s), 0);
		assert_string_equal(
			s.ck.job_id,
			json_string_value(json_object_get(c, "jobId")));
		assert_int_equal(
			s.ck.pipeline_id,
			json_integer_value(json_object_get(c, "pipelineId")));
		assert_int_equal(
			s.ck.checkpoint_id,
			json_integer_value(json_object_get(c, "checkpointId")));
		assert_int_equal(s.ck.trigger_ts,
				 json_integer_value(json_object_get(
					 st, "triggerTimestamp")));
		assert_int_equal(s.ck.completed_ts,
				 json_integer_value(json_object_get(
					 st, "completedTimestamp")));
		assert_int_equal(
			s.ck.type,
			type_from_java_name(json_string_value(json_object_get(
				json_object_get(st, "checkpointType"),
				"name"))));
		assert_int_equal(s.n_actions, json_array_size(ts));
		json_array_foreach (ts, i, e) {
			json_t *v = json_object_get(e, "value"), *sub, *co;
			const char *name = json_string_value(json_object_get(
				json_object_get(e, "key"), "name"));
			const struct pstuff_action *a = sum_action(&s, name);
			uint64_t bytes = 0, reported = 0;
			size_t j;

			assert_non_null(a);
			assert_int_equal(a->parallelism,
					 json_integer_value(json_object_get(
						 v, "parallelism")));
			json_array_foreach (json_object_get(v, "subtaskStates"),
					    j, sub)
				if (json_is_object(sub)) {
					reported++;
					bytes += hex_list_bytes(
						json_object_get(sub, "state"));
				}
			co = json_object_get(v, "coordinatorState");
			assert_int_equal(a->coordinator, co != NULL);
			if (co)
				bytes += hex_list_bytes(
					json_object_get(co, "state"));
			assert_int_equal(a->subtasks, reported);
			assert_int_equal(a->state_bytes, bytes);
		}
		assert_int_equal(s.n_stats, json_array_size(stats));
		json_array_foreach (stats, i, e) {
			json_t *v = json_object_get(e, "value"), *ss;
			json_int_t key =
				json_integer_value(json_object_get(e, "key"));
			uint64_t size = 0, reported = 0;
			size_t j, k;

			for (k = 0; k < s.n_stats; k++)
				if (s.stats[k].vertex_id == key)
					break;
			assert_true(k < s.n_stats);
			json_array_foreach (json_object_get(v, "subtaskStats"),
					    j, ss)
				if (json_is_object(ss)) {
					reported++;
					size += (uint64_t)json_integer_value(
						json_object_get(ss,
								"stateSize"));
				}
			assert_int_equal(
				s.stats[k].acked,
				json_integer_value(json_object_get(
					v, "numAcknowledgedSubtasks")));
			assert_int_equal(s.stats[k].subtasks, reported);
			assert_int_equal(s.stats[k].state_size, size);
		}
		pstuff_summary_free(&s);
		free(p);
	}
	json_decref(exp);
}

/* The engine's own bytes (upstream/README.md gives what they hold). */
static void test_summary_upstream(void **state)
{
	static const char *const files[] = {
		"upstream/legacy_v0_pipeline_state.ser",
		"upstream/legacy_v0_completed_checkpoint.bin",
	};
	struct pstuff_summary s;
	size_t n;
	uint8_t *p;

	(void)state;
	for (int f = 0; f < 2; f++) {
		p = load(files[f], &n);
		assert_int_equal(pstuff_summarize_mem(p, n, f == 1, &s), 0);
		if (f == 0)
			assert_string_equal(s.ck.job_id, "733584788375093248");
		assert_int_equal(s.ck.cc_job_id, 733584788375093248LL);
		assert_int_equal(s.ck.pipeline_id, 0);
		assert_int_equal(s.ck.checkpoint_id, 7);
		assert_int_equal(s.ck.trigger_ts, 1748595600000LL);
		assert_int_equal(s.ck.completed_ts, 1748595600123LL);
		assert_int_equal(s.ck.type, CKPT_SAVEPOINT);
		assert_int_equal(s.n_actions, 1);
		assert_string_equal(s.actions[0].name,
				    "ActionStateKey - fake-source");
		assert_int_equal(s.actions[0].parallelism, 2);
		assert_int_equal(s.actions[0].subtasks, 1); /* 1 is null */
		assert_true(s.actions[0].coordinator);
		assert_int_equal(s.actions[0].state_bytes,
				 6); /* 010203 090807 */
		assert_int_equal(s.n_stats, 1);
		assert_int_equal(s.stats[0].vertex_id, 0);
		assert_int_equal(s.stats[0].acked, 1);
		assert_int_equal(s.stats[0].state_size, 42);
		pstuff_summary_free(&s);
		/* the envelope is not a bare checkpoint, and back */
		assert_int_equal(pstuff_summarize_mem(p, n, f == 0, &s),
				 -EPROTO);
		free(p);
	}
	p = load("upstream/legacy_v0_completed_checkpoint_empty.bin", &n);
	assert_int_equal(pstuff_summarize_mem(p, n, true, &s), 0);
	assert_int_equal(s.ck.checkpoint_id, 8);
	assert_int_equal(s.ck.type, CKPT_COMPLETED);
	assert_true(s.ck.is_restored);
	assert_int_equal(s.n_actions, 0);
	assert_int_equal(s.n_stats, 0);
	pstuff_summary_free(&s);
	free(p);
}

struct win_src {
	const uint8_t *p;
	size_t n;
	uint64_t bytes; /* returned */
	int fail;	/* -errno every read returns, 0: none */
};

static ssize_t win_read(void *cookie, void *buf, size_t len, uint64_t off)
{
	struct win_src *w = cookie;

	if (w->fail)
		return w->fail;
	if (off >= w->n)
		return 0;
	if (len > w->n - off)
		len = w->n - off;
	memcpy(buf, w->p + off, len);
	w->bytes += len;
	return (ssize_t)len;
}

static void summary_equal(const struct pstuff_summary *a,
			  const struct pstuff_summary *b)
{
	assert_memory_equal(&a->ck, &b->ck, sizeof(a->ck));
	assert_int_equal(a->n_actions, b->n_actions);
	assert_int_equal(a->n_stats, b->n_stats);
	if (a->n_actions)
		assert_memory_equal(a->actions, b->actions,
				    a->n_actions * sizeof(*a->actions));
	if (a->n_stats)
		assert_memory_equal(a->stats, b->stats,
				    a->n_stats * sizeof(*a->stats));
}

/* Any window size gives the same summary; every truncation is -EPROTO. */
static void test_summary_windows_and_truncation(void **state)
{
	(void)state;
	for (size_t f = 0; f < sizeof(ckpt_files) / sizeof(*ckpt_files); f++) {
		struct pstuff_summary whole, s;
		size_t n;
		uint8_t *p = load(ckpt_files[f], &n);

		assert_int_equal(pstuff_summarize_mem(p, n, false, &whole), 0);
		for (size_t w = 64; w < n + 10; w += 13) {
			struct win_src src = {.p = p, .n = n};

			assert_int_equal(pstuff_summarize(win_read, &src, n, w,
							  false, &s),
					 0);
			summary_equal(&s, &whole);
			pstuff_summary_free(&s);
		}
		for (size_t k = 0; k < n; k++) {
			uint8_t *c = malloc(k ? k : 1);

			memcpy(c, p, k);
			assert_int_equal(pstuff_summarize_mem(c, k, false, &s),
					 -EPROTO);
			assert_int_equal(s.n_actions, 0);
			free(c);
		}
		/* an object shorter than its listed size is -EIO */
		{
			struct win_src src = {.p = p, .n = n};

			assert_int_equal(pstuff_summarize(win_read, &src, n + 5,
							  64, false, &s),
					 -EIO);
		}
		pstuff_summary_free(&whole);
		free(p);
	}
}

/* A tiny protostuff writer for hand-built checkpoints. */
struct pw {
	uint8_t *p;
	size_t n;
};

static void pw_byte(struct pw *w, uint8_t b)
{
	w->p = realloc(w->p, w->n + 1);
	assert_non_null(w->p);
	w->p[w->n++] = b;
}

static void pw_var(struct pw *w, uint64_t v)
{
	while (v >= 0x80) {
		pw_byte(w, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	pw_byte(w, (uint8_t)v);
}

static void pw_bytes(struct pw *w, uint32_t f, const void *b, size_t l)
{
	pw_var(w, (uint64_t)f << 3 | 2);
	pw_var(w, l);
	w->p = realloc(w->p, w->n + l + 1);
	assert_non_null(w->p);
	memcpy(w->p + w->n, b, l);
	w->n += l;
}

/* The engine's shape, one action whose subtasks hold states of `big`
 * bytes each: the summary reads the structure and steps over the states. */
static void test_summary_skips_states(void **state)
{
	const size_t big = (size_t)4 << 20, par = 3;
	const char *key = "ActionStateKey - pipeline-1 [Source[0]-Big]";
	struct pw cc = {0}, ps = {0};
	struct pstuff_summary s;
	struct win_src src;
	uint8_t *blob = calloc(1, big);

	(void)state;
	assert_non_null(blob);
	pw_var(&cc, 0x08), pw_var(&cc, 42);		  /* jobId */
	pw_var(&cc, 0x10), pw_var(&cc, 1);		  /* pipelineId */
	pw_var(&cc, 0x18), pw_var(&cc, 9);		  /* checkpointId */
	pw_var(&cc, 0x20), pw_var(&cc, 1730000000000ULL); /* trigger */
	pw_var(&cc, 0x28), pw_var(&cc, 0);		  /* CHECKPOINT */
	pw_var(&cc, 0x30), pw_var(&cc, 1730000001500ULL); /* completed */
	pw_var(&cc, 0x3b);				  /* taskStates { */
	pw_var(&cc, 0x0b);				  /* entry { */
	pw_var(&cc, 0x0b), pw_bytes(&cc, 1, key, strlen(key)),
		pw_var(&cc, 0x0c);
	pw_var(&cc, 0x13); /* ActionState { */
	pw_var(&cc, 0x0b), pw_bytes(&cc, 1, key, strlen(key)),
		pw_var(&cc, 0x0c);
	pw_var(&cc, 0x13); /* subtaskStates list { */
	for (size_t i = 0; i < par; i++) {
		pw_var(&cc, 0x0b); /* element */
		pw_var(&cc, 0x0b), pw_bytes(&cc, 1, key, strlen(key));
		pw_var(&cc, 0x0c);
		pw_var(&cc, 0x10), pw_var(&cc, i);
		pw_var(&cc, 0x1b), pw_bytes(&cc, 1, blob, big);
		pw_var(&cc, 0x1c);
		pw_var(&cc, 0x0c);
	}
	pw_var(&cc, 0x14);
	pw_var(&cc, 0x20), pw_var(&cc, par);  /* parallelism */
	pw_var(&cc, 0x14);		      /* } ActionState */
	pw_var(&cc, 0x0c);		      /* } entry */
	pw_var(&cc, 0x3c);		      /* } taskStates */
	pw_var(&cc, 0x43), pw_var(&cc, 0x44); /* taskStatistics {} */
	pw_var(&cc, 0x48), pw_var(&cc, 0);    /* isRestored */
	pw_bytes(&ps, 1, "42", 2);
	pw_var(&ps, 0x10), pw_var(&ps, 1);
	pw_var(&ps, 0x18), pw_var(&ps, 9);
	pw_bytes(&ps, 4, cc.p, cc.n);

	src = (struct win_src){.p = ps.p, .n = ps.n};
	assert_int_equal(
		pstuff_summarize(win_read, &src, ps.n, 4096, false, &s), 0);
	assert_int_equal(s.ck.checkpoint_id, 9);
	assert_int_equal(s.ck.completed_ts - s.ck.trigger_ts, 1500);
	assert_int_equal(s.n_actions, 1);
	assert_int_equal(s.actions[0].subtasks, par);
	assert_int_equal(s.actions[0].parallelism, par);
	assert_int_equal(s.actions[0].state_bytes, par * big);
	/* a few windows, not the 12 MiB */
	assert_true(src.bytes <= (par + 2) * 4096);
	assert_true(s.reads <= par + 2);
	pstuff_summary_free(&s);

	/* a read error is returned as is, and not retried as the 2.3.0 form */
	src = (struct win_src){.p = ps.p, .n = ps.n, .fail = -ETIMEDOUT};
	assert_int_equal(
		pstuff_summarize(win_read, &src, ps.n, 4096, false, &s),
		-ETIMEDOUT);
	assert_int_equal(s.reads, 1);
	free(cc.p);
	free(ps.p);
	free(blob);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_ckpt_fixtures),
		cmocka_unit_test(test_decode_ckpt_known_values),
		cmocka_unit_test(test_decode_ckpt_old_table),
		cmocka_unit_test(test_decode_ckpt_negative_pipeline),
		cmocka_unit_test(test_decode_ckpt_rejects_garbage),
		cmocka_unit_test(test_decode_ckpt_head_matches_full),
		cmocka_unit_test(test_decode_ckpt_head_old_table),
		cmocka_unit_test(test_decode_ckpt_head_rejects_bad_length),
		cmocka_unit_test(test_ckpt_to_json_fixtures),
		cmocka_unit_test(test_ckpt_to_json_old_table_and_errors),
		cmocka_unit_test(test_decode_ckpt_upstream_fixtures),
		cmocka_unit_test(test_summary_fixtures),
		cmocka_unit_test(test_summary_upstream),
		cmocka_unit_test(test_summary_windows_and_truncation),
		cmocka_unit_test(test_summary_skips_states),
		cmocka_unit_test(test_wal_walk_fixtures),
		cmocka_unit_test(test_wal_walk_keys_and_values),
		cmocka_unit_test(test_wal_walk_hostile),
		cmocka_unit_test(test_wal_walk_callback_error),
		cmocka_unit_test(test_wal_summarize_overwrite_and_tombstone),
		cmocka_unit_test(test_wal_summarize_mixed_regions),
		cmocka_unit_test(test_wal_summarize_tail_and_empty),
		cmocka_unit_test(test_wal_summarize_load_fails),
		cmocka_unit_test(test_wal_summarize_groups),
		cmocka_unit_test(test_wal_summarize_ties),
		cmocka_unit_test(test_wal_summarize_stream_windows),
		cmocka_unit_test(test_wal_summarize_single_file_fixtures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
