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

static void render(struct backend *be, const char *map, char *out, size_t outsz)
{
	struct buf b;

	buf_init(&b, 1 << 20);
	assert_int_equal(imapsum_render(be, map, &b), 0);
	assert_non_null(b.data);
	snprintf(out, outsz, "%s", b.data);
	buf_release(&b);
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
	assert_non_null(strstr(out, "superseded (removable)\n200 "));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_imapsum_old_region_superseded),
		cmocka_unit_test(test_imapsum_unrelated_regions_both_live),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
