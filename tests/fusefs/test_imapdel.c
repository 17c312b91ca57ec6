/*
 * test_imapdel — `rm` of IMap WAL regions (fusefs/policy/imapdel.c) over
 * the fake backend (regions built from the real WAL fixtures) and the fake
 * engine: the engine's three answers (up, refusing connections, cannot be
 * asked) against W1-W5, each case checking the raw object in the fake.
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

#include "fakes/fake_backend.h"
#include "fakes/fake_engine.h"
#include "fakes/testutil.h"
#include "model/protostuff.h"
#include "mount/mount.h"
#include "policy/audit.h"
#include "policy/delete.h"
#include "policy/imapdel.h"

#define FIX "tests/fixtures/protostuff/"
/* region 100 holds a live record, region 200 (newest) its tombstone: 100
 * is superseded, 200 is where a member appends */
#define OLDW "c/m/100/wal.txt"
#define NEWW "c/m/200/wal.txt"

struct fx {
	struct stfs fs;
	struct backend *be;
};

static int first_record_end(void *cookie, const struct wal_record *rec)
{
	uint64_t *off = cookie;

	if (rec->offset > 0) {
		*off = rec->offset;
		return 1;
	}
	return 0;
}

static int setup(void **st)
{
	struct fx *f = calloc(1, sizeof(*f));
	char *wal = NULL;
	size_t len;
	uint64_t off = 0;

	assert_non_null(f);
	assert_int_equal(conf_init_defaults(&f->fs.conf), 0);
	free(f->fs.conf.state_dir);
	f->fs.conf.state_dir = NULL;
	assert_int_equal(stfs_init(&f->fs), 0);
	assert_int_equal(delete_attach(&f->fs), 0);
	assert_int_equal(tu_load(FIX, "wal_live_and_tombstone.wal", &wal, &len),
			 0);
	assert_int_equal(wal_walk((uint8_t *)wal, len, first_record_end, &off,
				  NULL, NULL),
			 0);
	assert_true(off > 0 && off < len);
	assert_int_equal(fake_be_open(&f->be), 0);
	assert_int_equal(fake_be_add(f->be, OLDW, wal, off, 1), 0);
	assert_int_equal(fake_be_add(f->be, NEWW, wal + off, len - off, 2), 0);
	assert_int_equal(fake_be_add_str(f->be, "c/m/100/notes.md", "x", 1), 0);
	free(wal);
	f->fs.imap = f->be;
	assert_int_equal(fake_engine_new(&f->fs.engine), 0);
	assert_int_equal(audit_open(NULL, 1 << 16, &f->fs.audit), 0);
	audit_set_syslog(f->fs.audit, false);
	*st = f;
	return 0;
}

static int teardown(void **st)
{
	struct fx *f = *st;

	tu_mount_free(&f->fs);
	free(f);
	return 0;
}

static const struct caller root = {.uid = 0, .pid = 1};
static const struct caller user = {.uid = 4242, .gid = 4242, .pid = 1};

static bool audited(struct fx *f, const char *a, const char *b)
{
	struct buf out;
	bool found;

	buf_init(&out, BUF_DEFAULT_MAX);
	assert_int_equal(audit_snapshot(f->fs.audit, &out), 0);
	found = out.data && strstr(out.data, a) && strstr(out.data, b);
	buf_release(&out);
	return found;
}

/* The engine answers: a member may still read the superseded region. */
static void test_engine_up_keeps_regions(void **st)
{
	struct fx *f = *st;

	assert_int_equal(imapdel_engine(&f->fs, 0), RE_UP);
	assert_int_equal(imapdel_unlink(&f->fs, &root, "/imap/" OLDW), -EBUSY);
	assert_true(fake_be_has(f->be, OLDW));
	assert_true(audited(f, "rule=W3", "errno=EBUSY"));
	assert_int_equal(imapdel_rmdir(&f->fs, &root, "/imap/c/m/100"), -EBUSY);
	assert_true(fake_be_has(f->be, OLDW));
	assert_int_equal(fake_be_calls(f->be, FAKE_RMDIR), 0);
	assert_true(fake_engine_calls(f->fs.engine, FENG_JOBS) >= 2);
}

/* The engine cannot be asked (timeout, error, none configured): kept. */
static void test_engine_unknown_keeps_regions(void **st)
{
	struct fx *f = *st;

	fake_engine_fail(f->fs.engine, FENG_JOBS, -ETIMEDOUT);
	assert_int_equal(imapdel_engine(&f->fs, 0), RE_UNKNOWN);
	assert_int_equal(imapdel_unlink(&f->fs, &root, "/imap/" OLDW), -EAGAIN);
	assert_true(fake_be_has(f->be, OLDW));
	engine_free(f->fs.engine);
	f->fs.engine = NULL;
	assert_int_equal(imapdel_engine(&f->fs, 0), RE_UNKNOWN);
	assert_int_equal(imapdel_unlink(&f->fs, &root, "/imap/" OLDW), -EAGAIN);
	assert_true(fake_be_has(f->be, OLDW));
}

/* Every member stopped (connections refused): the superseded region goes,
 * the one holding what the reader keeps stays, and what is not a WAL file
 * is never judged removable. */
static void test_engine_stopped_frees_superseded(void **st)
{
	struct fx *f = *st;

	fake_engine_set_list_err(f->fs.engine, -ECONNREFUSED, "refused");
	assert_int_equal(imapdel_engine(&f->fs, 0), RE_STOPPED);
	/* the newest region holds the record the reader keeps (W1) */
	assert_int_equal(imapdel_unlink(&f->fs, &root, "/imap/" NEWW), -EPERM);
	assert_true(fake_be_has(f->be, NEWW));
	assert_true(audited(f, "rule=W1", "errno=EPERM"));
	assert_int_equal(
		imapdel_unlink(&f->fs, &root, "/imap/c/m/100/notes.md"),
		-EPERM);
	assert_true(fake_be_has(f->be, "c/m/100/notes.md"));
	/* R5 and R4 come first */
	f->fs.conf.ro = true;
	assert_int_equal(imapdel_unlink(&f->fs, &root, "/imap/" OLDW), -EROFS);
	f->fs.conf.ro = false;
	assert_int_equal(imapdel_unlink(&f->fs, &user, "/imap/" OLDW), -EACCES);
	assert_true(fake_be_has(f->be, OLDW));
	assert_int_equal(imapdel_unlink(&f->fs, &root, "/imap/" OLDW), 0);
	assert_false(fake_be_has(f->be, OLDW));
	assert_true(audited(f, "op=unlink", "outcome=allowed"));
	/* a directory is not unlinked; a file is not rmdir'ed */
	assert_int_equal(imapdel_unlink(&f->fs, &root, "/imap/c/m/200"),
			 -EISDIR);
	assert_int_equal(imapdel_unlink(&f->fs, &root, "/imap/c/m/9/wal.txt"),
			 -ENOENT);
	assert_true(fake_be_has(f->be, NEWW));
}

static void test_region_paths(void **st)
{
	(void)st;
	assert_true(imapdel_is_region_path("/imap/c/m/100"));
	assert_true(imapdel_is_region_path("/imap/c/m/100/wal.txt"));
	assert_false(imapdel_is_region_path("/imap/c/m"));
	assert_false(imapdel_is_region_path("/imap/c/m/"));
	assert_false(imapdel_is_region_path("/jobs/1/pipelines"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_engine_up_keeps_regions,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_engine_unknown_keeps_regions, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_engine_stopped_frees_superseded, setup, teardown),
		cmocka_unit_test(test_region_paths),
	};

	return cmocka_run_group_tests_name("imapdel", tests, NULL, NULL);
}
