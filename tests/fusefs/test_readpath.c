/*
 * test_readpath — read paths do not write (README "Layout of the source"):
 * a stat, readdir and read of everything under a job whose release is void
 * (the engine reports it RUNNING again, after the release) changes nothing
 * under state_dir and writes no audit record; the release is voided where
 * the fresh engine answer arrives (stfs_engine with the hook the
 * composition root installs), audited once.  Over the fake backend and the
 * fake engine.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fakes/fake_backend.h"
#include "fakes/fake_engine.h"
#include "fakes/testutil.h"
#include "mount/mount.h"
#include "policy/audit.h"
#include "policy/delete.h"
#include "policy/release.h"
#include "util/pcache.h"
#include "view/tree.h"

#define JOB "700"
#define OLD ((int64_t)1600000000 * 1000000000) /* 2020: past any grace */

struct fx {
	struct stfs fs;
	struct engine *eng; /* the fake engine, owned by fs */
	char dir[64];
	char audit_path[128];
};

static int setup(void **st)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct backend *be;
	struct release_bind b = {.newest_ns = OLD + 2};
	char *bytes = NULL;
	size_t len = 0;

	assert_non_null(f);
	assert_int_equal(conf_init_defaults(&f->fs.conf), 0);
	free(f->fs.conf.state_dir);
	snprintf(f->dir, sizeof(f->dir), "/tmp/stfs-trp-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->fs.conf.state_dir = strdup(f->dir);
	f->fs.conf.cache_ttl_ms = 0;
	assert_int_equal(stfs_init(&f->fs), 0);
	assert_int_equal(delete_attach(&f->fs), 0);
	assert_int_equal(fake_be_open(&be), 0);
	/* real checkpoint bytes: every pseudo-file (info too) renders */
	assert_int_equal(tu_load("tests/fixtures/protostuff/",
				 "pipeline_state_checkpoint.ser", &bytes, &len),
			 0);
	assert_int_equal(
		fake_be_add(be, JOB "/1000-1-1-1.ser", bytes, len, OLD), 0);
	assert_int_equal(
		fake_be_add(be, JOB "/2000-2-1-2.ser", bytes, len, OLD + 1), 0);
	assert_int_equal(
		fake_be_add(be, JOB "/3000-3-1-3.ser", bytes, len, OLD + 2), 0);
	free(bytes);
	f->fs.ckpt = be;
	assert_int_equal(release_open(f->dir, "fake://", &f->fs.rel), 0);
	snprintf(f->audit_path, sizeof(f->audit_path), "%s/audit.log", f->dir);
	assert_int_equal(audit_open(f->audit_path, 1 << 16, &f->fs.audit), 0);
	/* released (the release file's mtime is its time) */
	assert_int_equal(release_set(f->fs.rel, JOB, true, 0, now_ms(), &b), 0);
	assert_true(release_is_released(f->fs.rel, JOB));
	/* the engine says RUNNING now */
	assert_int_equal(fake_engine_new(&f->eng), 0);
	assert_int_equal(fake_engine_set_job(f->eng, JOB, JS_RUNNING, 0), 0);
	/* an answer just after the release (the release file's mtime) */
	fake_engine_set_data_ms(f->eng, release_time_ms(f->fs.rel, JOB) + 1);
	f->fs.engine = f->eng;
	*st = f;
	return 0;
}

static int teardown(void **st)
{
	struct fx *f = *st;

	tu_mount_free(&f->fs);
	assert_int_equal(tu_rmtree(f->dir), 0);
	free(f);
	return 0;
}

/* Every file under `dir`: path, size, mtime, content hash, one a line. */
static void snapshot(const char *dir, struct buf *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[1024];
	struct stat st;

	assert_non_null(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		assert_int_equal(lstat(p, &st), 0);
		if (S_ISDIR(st.st_mode)) {
			buf_printf(out, "%s/\n", p);
			snapshot(p, out);
			continue;
		}
		char *bytes = NULL;
		size_t n = 0;

		assert_int_equal(tu_load("", p, &bytes, &n), 0);
		buf_printf(out, "%s %lld %lld.%09ld %016llx\n", p,
			   (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			   st.st_mtim.tv_nsec,
			   (unsigned long long)pcache_hash(bytes ? bytes : ""));
		free(bytes);
	}
	closedir(d);
}

struct walk {
	struct view *v;
	char path[512];
	size_t n;
};

static void walk(struct view *v, const char *path, size_t *visited);

static int walk_fill(void *cookie, const char *name, const struct stat *st)
{
	struct walk *w = cookie;
	char p[1024];

	(void)st;
	snprintf(p, sizeof(p), "%s/%s", w->path, name);
	walk(w->v, p, &w->n);
	return 0;
}

/* stat every node below `path`, list every directory, read every file */
static void walk(struct view *v, const char *path, size_t *visited)
{
	struct node n;
	struct stat st;
	struct walk w = {.v = v};

	assert_int_equal(tree_resolve(v, path, &n), 0);
	assert_int_equal(tree_stat(v, path, &n, &st), 0);
	(*visited)++;
	if (n.kind == ND_PSEUDO) {
		struct pc_entry *pe = NULL;

		if (tree_content(v, path, &n, &pe) == 0)
			pcache_put(pe);
		return;
	}
	if (!S_ISDIR(st.st_mode))
		return;
	snprintf(w.path, sizeof(w.path), "%s", path);
	assert_int_equal(tree_list(v, path, &n, walk_fill, &w), 0);
	*visited += w.n;
}

static void test_reads_write_nothing(void **st)
{
	struct fx *f = *st;
	struct buf before, after;
	struct view v;
	size_t visited = 0;

	buf_init(&before, 1 << 20);
	buf_init(&after, 1 << 20);
	snapshot(f->dir, &before);
	for (int pass = 0; pass < 2; pass++) {
		view_open(&f->fs, &v);
		walk(&v, "/jobs", &visited);
		view_close(&v);
	}
	assert_true(visited > 10); /* the job's files were reached */
	snapshot(f->dir, &after);
	assert_string_equal(before.data, after.data);
	/* the release is still there; nothing was audited */
	assert_true(release_is_released(f->fs.rel, JOB));
	{
		struct buf a;

		buf_init(&a, 1 << 20);
		assert_int_equal(audit_snapshot(f->fs.audit, &a), 0);
		assert_null(a.data && a.len ? strstr(a.data, "op=void") : NULL);
		buf_release(&a);
	}
	buf_release(&before);
	buf_release(&after);
}

static void test_voided_where_the_answer_arrives(void **st)
{
	struct fx *f = *st;
	struct engine_snap *s;
	struct buf a;

	delete_watch_engine(&f->fs);
	s = stfs_engine(&f->fs, 0);
	engine_snap_put(s);
	assert_false(release_is_released(f->fs.rel, JOB));
	buf_init(&a, 1 << 20);
	assert_int_equal(audit_snapshot(f->fs.audit, &a), 0);
	assert_non_null(a.data);
	assert_non_null(strstr(a.data, "op=void"));
	/* once: the same answer again voids nothing more */
	{
		const char *first = strstr(a.data, "op=void");

		assert_null(strstr(first + 7, "op=void"));
	}
	buf_release(&a);
}

/* an answer older than the release says nothing about the job since */
static void test_older_answer_keeps_the_release(void **st)
{
	struct fx *f = *st;
	struct engine_snap *s;

	fake_engine_set_data_ms(f->eng, release_time_ms(f->fs.rel, JOB) - 1);
	delete_watch_engine(&f->fs);
	s = stfs_engine(&f->fs, 0);
	engine_snap_put(s);
	assert_true(release_is_released(f->fs.rel, JOB));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reads_write_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_voided_where_the_answer_arrives, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_older_answer_keeps_the_release, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
