/*
 * test_imapsum — the IMap map summary over a fake backend holding WAL
 * regions built from the real protostuff fixtures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakes/fake_backend.h"
#include "fakes/testutil.h"
#include "imapsum.h"
#include "protostuff.h"

#define FIX "tests/fixtures/protostuff/"

static uint8_t *load(const char *name, size_t *len)
{
	char *data = NULL;

	assert_int_equal(tu_load("", name, &data, len), 0);
	return (uint8_t *)data;
}

static int second_record(void *cookie, const struct wal_record *rec)
{
	uint64_t *off = cookie;

	if (rec->offset > 0) {
		*off = rec->offset;
		return 1;
	}
	return 0;
}

static void render_o(struct backend *be, const char *map,
		     const struct imapsum_opts *o, char *out, size_t outsz)
{
	struct buf b;

	buf_init(&b, 1 << 20);
	assert_int_equal(imapsum_render(be, map, o, &b), 0);
	assert_non_null(b.data);
	snprintf(out, outsz, "%s", b.data);
	buf_release(&b);
}

static void render(struct backend *be, const char *map, char *out, size_t outsz)
{
	render_o(be, map, NULL, out, outsz);
}

#define NS   1000000000LL
#define NOW  (1800000000LL * NS)
#define HOUR (3600LL * NS)

/* the fixture split in two: *old holds the live record, the rest its
 * newer tombstone */
static uint8_t *split_wal(size_t *len, uint64_t *off)
{
	uint8_t *wal = load(FIX "wal_live_and_tombstone.wal", len);

	*off = 0;
	assert_int_equal(wal_walk(wal, *len, second_record, off, NULL, NULL),
			 0);
	assert_true(*off > 0 && *off < *len);
	return wal;
}

static void test_imapsum_old_region_superseded(void **state)
{
	struct backend *be;
	uint8_t *wal;
	size_t len;
	uint64_t off = 0;
	char out[4096];

	(void)state;
	wal = load(FIX "wal_live_and_tombstone.wal", &len);
	assert_int_equal(wal_walk(wal, len, second_record, &off, NULL, NULL),
			 0);
	assert_true(off > 0 && off < len);
	assert_int_equal(fake_be_open(&be), 0);
	/* region 100 holds the live record, region 200 its newer tombstone */
	assert_int_equal(
		fake_be_add(be, "seatunnel/m/100/wal.txt", wal, off, 1), 0);
	assert_int_equal(fake_be_add(be, "seatunnel/m/200/wal.txt", wal + off,
				     len - off, 2),
			 0);
	render(be, "seatunnel/m", out, sizeof(out));
	assert_non_null(strstr(out, "map          m\n"));
	assert_non_null(strstr(out, "regions      2\n"));
	assert_non_null(strstr(out, "records      2\n"));
	assert_non_null(strstr(out, "live_keys    0\n"));
	assert_non_null(strstr(out, "tombstones   1\n"));
	assert_non_null(strstr(out, "superseded   1\n"));
	assert_non_null(strstr(out, "\n100 "));
	/* the engine's state is not known: a superseded region is kept */
	assert_non_null(strstr(out, "superseded (keep: the engine runs"));
	assert_null(strstr(out, "superseded (removable)"));
	assert_non_null(strstr(out, "\n200 "));
	be_close(be);
	free(wal);
}

static void test_imapsum_unrelated_regions_both_live(void **state)
{
	struct backend *be;
	uint8_t *a, *b;
	size_t la, lb;
	char out[4096];

	(void)state;
	a = load(FIX "wal_live_and_tombstone.wal", &la);
	b = load(FIX "wal_checkpoint_id_map.wal", &lb);
	assert_int_equal(fake_be_open(&be), 0);
	assert_int_equal(fake_be_add(be, "c/m/1/wal.txt", a, la, 1), 0);
	assert_int_equal(fake_be_add(be, "c/m/2/1_wal.txt", b, lb, 1), 0);
	assert_int_equal(fake_be_add(be, "c/m/2/notes.md", "x", 1, 1), 0);
	render(be, "c/m", out, sizeof(out));
	/* 2 records of one key + 3 of another; both keys end in a tombstone */
	assert_non_null(strstr(out, "records      5\n"));
	assert_non_null(strstr(out, "keys         2\n"));
	assert_non_null(strstr(out, "live_keys    0\n"));
	assert_non_null(strstr(out, "tombstones   2\n"));
	assert_non_null(strstr(out, "superseded   0\n"));
	be_close(be);
	free(a);
	free(b);
}

/* Two halves of one WAL (a live record, then its newer tombstone) and an
 * engine that does not answer, at NOW with a one-hour grace. */
struct fx {
	struct backend *be;
	uint8_t *wal;
	size_t len;
	uint64_t off;
	struct imapsum_opts o;
	char out[4096];
};

static void fx_open(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	f->wal = split_wal(&f->len, &f->off);
	assert_int_equal(fake_be_open(&f->be), 0);
	f->o = (struct imapsum_opts){
		.now_ns = NOW, .grace_ns = HOUR, .engine = IMAPSUM_ENGINE_DOWN};
}

/* Region `path` holding part `which` of the WAL: 0 the live record, 1 the
 * tombstone, 2 nothing. */
static void fx_add(struct fx *f, const char *path, int which, int64_t mtime)
{
	const uint8_t *p = which == 1 ? f->wal + f->off : f->wal;
	size_t n = which == 0 ? f->off : which == 1 ? f->len - f->off : 0;

	assert_int_equal(fake_be_add(f->be, path, p, n, mtime), 0);
}

static const char *fx_render(struct fx *f)
{
	render_o(f->be, "c/m", &f->o, f->out, sizeof(f->out));
	return f->out;
}

static void fx_close(struct fx *f)
{
	be_close(f->be);
	free(f->wal);
}

/* Issue 8 item 4: the engine creates an empty wal.txt at every start and
 * appends to it; an empty region is never removable. */
static void test_imapsum_empty_region_is_live(void **state)
{
	struct fx f;
	const char *out;

	(void)state;
	fx_open(&f);
	assert_int_equal(fake_be_add(f.be, "c/m/100/wal.txt", f.wal, f.len,
				     NOW - 5 * HOUR),
			 0);
	/* a member started, created its region, has written nothing yet */
	fx_add(&f, "c/m/700/wal.txt", 2, NOW - 3 * HOUR);
	out = fx_render(&f);
	assert_non_null(strstr(out, "regions      2\n"));
	assert_non_null(strstr(out, "superseded   0\n"));
	assert_non_null(strstr(out, "\n700 "));
	assert_non_null(strstr(out, "live (empty: a member appends here)\n"));
	assert_null(strstr(out, "removable"));
	fx_close(&f);
}

/* Region names are nanoTime values, not chronological across restarts:
 * the newest region is the one whose files were written last, and it is
 * live even when all its records are superseded. */
static void test_imapsum_newest_by_mtime_is_live(void **state)
{
	struct fx f;
	const char *out;

	(void)state;
	fx_open(&f);
	/* "900" holds the older (superseded) record but was written last:
	 * the newest start, whatever its nanoTime name says */
	fx_add(&f, "c/m/900/wal.txt", 0, NOW - 2 * HOUR);
	fx_add(&f, "c/m/050/wal.txt", 1, NOW - 4 * HOUR);
	out = fx_render(&f);
	assert_non_null(strstr(out, "superseded   0\n"));
	assert_non_null(strstr(out, "\n900 "));
	assert_non_null(
		strstr(out, "live (newest region: a member may append)\n"));
	assert_null(strstr(out, "removable"));
	fx_close(&f);
}

/* Every region written within the grace period is live; older superseded
 * ones are kept while the engine answers and only called removable (once
 * every member is stopped) when it does not. */
static void test_imapsum_grace_and_engine_state(void **state)
{
	struct fx f;
	const char *out;

	(void)state;
	fx_open(&f);
	/* 100: the live record, superseded by 200's tombstone; 300 newest */
	fx_add(&f, "c/m/100/wal.txt", 0, NOW - 30 * 60 * NS);
	fx_add(&f, "c/m/200/wal.txt", 1, NOW - 20 * 60 * NS);
	fx_add(&f, "c/m/300/wal.txt", 2, NOW - 10 * 60 * NS);
	out = fx_render(&f);
	assert_non_null(strstr(out, "live (written within imap_grace)\n200 "));
	assert_non_null(strstr(out, "superseded   0\n"));

	/* two hours later: 100 is old enough */
	f.o.now_ns = NOW + 2 * HOUR;
	out = fx_render(&f);
	assert_non_null(strstr(out, "superseded   1\n"));
	assert_non_null(strstr(
		out,
		"superseded (removable once every member is stopped)\n200 "));
	/* the engine answers: any member may still append to it */
	f.o.engine = IMAPSUM_ENGINE_UP;
	out = fx_render(&f);
	assert_non_null(strstr(out, "superseded   1\n"));
	assert_non_null(strstr(
		out,
		"superseded (keep: the engine runs, a member may append)\n200 "));
	assert_null(strstr(out, "removable"));
	f.o.engine = IMAPSUM_ENGINE_UNKNOWN;
	out = fx_render(&f);
	assert_null(strstr(out, "removable"));
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_imapsum_old_region_superseded),
		cmocka_unit_test(test_imapsum_unrelated_regions_both_live),
		cmocka_unit_test(test_imapsum_empty_region_is_live),
		cmocka_unit_test(test_imapsum_newest_by_mtime_is_live),
		cmocka_unit_test(test_imapsum_grace_and_engine_state),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
