/*
 * Unit tests for backends/local.c (through the backend.c wrappers), in a
 * mkdtemp directory: URIs, listing, recursive listing, stat, read, remove,
 * rmdir, and attempts to leave the root.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "conf/conf.h"
#include "fakes/fake_backend.h"

struct fixture {
	char dir[64]; /* the temp dir; "root" below it is the namespace */
	char root[96];
	struct backend *be;
};

static void put(const struct fixture *f, const char *rel, const char *s)
{
	char p[512];
	FILE *fp;

	snprintf(p, sizeof(p), "%s/%s", f->root, rel);
	fp = fopen(p, "w");
	assert_non_null(fp);
	fputs(s, fp);
	fclose(fp);
}

static void mkd(const struct fixture *f, const char *rel)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", f->root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char uri[128], p[512];

	snprintf(f->dir, sizeof(f->dir), "/tmp/stfs-test-local-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->root, sizeof(f->root), "%s/root", f->dir);
	mkdir(f->root, 0755);
	mkd(f, "100");
	put(f, "100/1700000000000-1-1-1.ser", "0123456789");
	put(f, "100/1700000000001-2-1-2.sertmp", "x");
	mkd(f, "100/1");
	mkd(f, "100/1/2");
	mkd(f, "100/1/2/task-0");
	put(f, "100/1/2/task-0/state-data", "doc");
	mkd(f, "empty");
	put(f, "top.txt", "t");
	/* outside the root: must stay unreachable */
	snprintf(p, sizeof(p), "%s/secret", f->dir);
	{
		FILE *fp = fopen(p, "w");

		fputs("secret", fp);
		fclose(fp);
	}
	snprintf(p, sizeof(p), "%s/root/link", f->dir);
	if (symlink("../secret", p) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/root/dirlink", f->dir);
	if (symlink("..", p) < 0)
		return -1;
	snprintf(p, sizeof(p), "%s/root/fifo", f->dir);
	if (mkfifo(p, 0644) < 0)
		return -1;
	snprintf(uri, sizeof(uri), "file://%s/", f->root);
	if (be_open(uri, NULL, &f->be) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[160];

	be_close(f->be);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

struct seen {
	char names[32][128];
	struct be_attr attrs[32];
	int n;
	int stop_after;
};

static int seen_fill(void *cookie, const char *name, const struct be_attr *a)
{
	struct seen *s = cookie;

	if (s->n < 32) {
		snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
		s->attrs[s->n] = *a;
	}
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

static int find_name(const struct seen *s, const char *name)
{
	int i;

	for (i = 0; i < s->n && i < 32; i++)
		if (!strcmp(s->names[i], name))
			return i;
	return -1;
}

static void test_local_uri_forms(void **state)
{
	struct fixture *f = *state;
	struct backend *be = NULL;
	struct be_attr a;
	char uri[160];

	snprintf(uri, sizeof(uri), "file:%s", f->root);
	assert_int_equal(be_open(uri, NULL, &be), 0);
	assert_int_equal(be_stat(be, "top.txt", &a), 0);
	be_close(be);
	assert_int_equal(be_open(f->root, NULL, &be), 0);
	assert_string_equal(be->ops->name, "local");
	assert_int_equal(be_stat(be, "top.txt", &a), 0);
	be_close(be);
	assert_int_equal(be_open("file://relative/x", NULL, &be), -EINVAL);
	assert_null(be);
	assert_int_equal(be_open("file:relative", NULL, &be), -EINVAL);
	assert_int_equal(be_open("nosuch://x", NULL, &be), -EPROTONOSUPPORT);
	assert_int_equal(be_open("no scheme", NULL, &be), -EINVAL);
	assert_int_equal(be_open("", NULL, &be), -EINVAL);
}

static void test_local_list_one_dir(void **state)
{
	struct fixture *f = *state;
	struct seen s = {0};
	int i;

	assert_int_equal(be_list(f->be, "", 0, seen_fill, &s), 0);
	/* 100, empty, top.txt; not link, dirlink, fifo, ".", ".." */
	assert_int_equal(s.n, 3);
	i = find_name(&s, "100");
	assert_true(i >= 0);
	assert_int_equal(s.attrs[i].type, BE_DIR);
	i = find_name(&s, "top.txt");
	assert_true(i >= 0);
	assert_int_equal(s.attrs[i].type, BE_FILE);
	assert_int_equal(s.attrs[i].size, 1);
	assert_true(find_name(&s, "empty") >= 0);

	memset(&s, 0, sizeof(s));
	assert_int_equal(be_list(f->be, "100", 0, seen_fill, &s), 0);
	assert_int_equal(s.n, 3);
	i = find_name(&s, "1700000000000-1-1-1.ser");
	assert_true(i >= 0);
	assert_int_equal(s.attrs[i].size, 10);
	assert_int_equal(s.attrs[find_name(&s, "1")].type, BE_DIR);

	memset(&s, 0, sizeof(s));
	assert_int_equal(be_list(f->be, "empty", 0, seen_fill, &s), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(be_list(f->be, "nope", 0, seen_fill, &s), -ENOENT);
	assert_int_equal(be_list(f->be, "top.txt", 0, seen_fill, &s), -ENOTDIR);
	assert_int_equal(be_list(f->be, "dirlink", 0, seen_fill, &s), -ENOENT);
	assert_true(f->be->stats.lists >= 5);
}

static void test_local_list_recursive(void **state)
{
	struct fixture *f = *state;
	struct seen s = {0};
	int i;

	assert_int_equal(be_list(f->be, "", BE_LIST_RECURSIVE, seen_fill, &s),
			 0);
	/* files only, at any depth, no symlinks or fifos */
	assert_int_equal(s.n, 4);
	assert_true(find_name(&s, "top.txt") >= 0);
	assert_true(find_name(&s, "100/1700000000000-1-1-1.ser") >= 0);
	assert_true(find_name(&s, "100/1700000000001-2-1-2.sertmp") >= 0);
	i = find_name(&s, "100/1/2/task-0/state-data");
	assert_true(i >= 0);
	assert_int_equal(s.attrs[i].type, BE_FILE);
	assert_int_equal(s.attrs[i].size, 3);
	assert_true(s.attrs[i].mtime_ns > 0);

	memset(&s, 0, sizeof(s));
	assert_int_equal(
		be_list(f->be, "100/1", BE_LIST_RECURSIVE, seen_fill, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.names[0], "2/task-0/state-data");

	/* the fill function can stop the walk */
	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	assert_int_equal(be_list(f->be, "", BE_LIST_RECURSIVE, seen_fill, &s),
			 0);
	assert_int_equal(s.n, 2);
}

static void test_local_list_depth_limit(void **state)
{
	struct fixture *f = *state;
	char rel[1024] = "deep";
	struct seen s = {0};
	size_t len = 4;
	int i;

	mkd(f, rel);
	for (i = 0; i < 70; i++) {
		len += (size_t)snprintf(rel + len, sizeof(rel) - len, "/d");
		mkd(f, rel);
	}
	snprintf(rel + len, sizeof(rel) - len, "/f");
	put(f, rel, "z");
	put(f, "deep/d/shallow", "y");
	assert_int_equal(
		be_list(f->be, "deep", BE_LIST_RECURSIVE, seen_fill, &s), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.names[0], "d/shallow");
}

static void test_local_stat(void **state)
{
	struct fixture *f = *state;
	struct be_attr a;
	struct timeval tv[2] = {{.tv_sec = 1700000000, .tv_usec = 123456},
				{.tv_sec = 1700000000, .tv_usec = 123456}};
	char p[512];

	snprintf(p, sizeof(p), "%s/100/1700000000000-1-1-1.ser", f->root);
	assert_int_equal(utimes(p, tv), 0);
	assert_int_equal(be_stat(f->be, "100/1700000000000-1-1-1.ser", &a), 0);
	assert_int_equal(a.type, BE_FILE);
	assert_int_equal(a.size, 10);
	assert_int_equal(a.mtime_ns, 1700000000123456000LL);
	assert_int_equal(be_stat(f->be, "100", &a), 0);
	assert_int_equal(a.type, BE_DIR);
	assert_int_equal(a.size, 0);
	assert_int_equal(be_stat(f->be, "", &a), 0);
	assert_int_equal(a.type, BE_DIR);
	assert_int_equal(be_stat(f->be, "nope", &a), -ENOENT);
	assert_int_equal(be_stat(f->be, "link", &a), -ENOENT);
	assert_int_equal(be_stat(f->be, "fifo", &a), -ENOENT);
	assert_int_equal(be_stat(f->be, "dirlink/secret", &a), -ENOENT);
	assert_int_equal(be_stat(f->be, "top.txt/x", &a), -ENOTDIR);
	assert_int_equal(f->be->stats.stats, 8);
}

static void test_local_read(void **state)
{
	struct fixture *f = *state;
	const char *k = "100/1700000000000-1-1-1.ser";
	char buf[32];

	memset(buf, 0, sizeof(buf));
	assert_int_equal(be_read(f->be, k, buf, sizeof(buf), 0), 10);
	assert_memory_equal(buf, "0123456789", 10);
	assert_int_equal(be_read(f->be, k, buf, 3, 4), 3);
	assert_memory_equal(buf, "456", 3);
	assert_int_equal(be_read(f->be, k, buf, 8, 7), 3); /* short at EOF */
	assert_memory_equal(buf, "789", 3);
	assert_int_equal(be_read(f->be, k, buf, 8, 10), 0);   /* at EOF */
	assert_int_equal(be_read(f->be, k, buf, 8, 1000), 0); /* past EOF */
	assert_int_equal(be_read(f->be, k, buf, 0, 0), 0);
	assert_int_equal(be_read(f->be, k, buf, 1, -1), -EINVAL);
	assert_int_equal(be_read(f->be, "nope", buf, 8, 0), -ENOENT);
	assert_int_equal(be_read(f->be, "100", buf, 8, 0), -EISDIR);
	assert_int_equal(be_read(f->be, "link", buf, 8, 0), -ENOENT);
	assert_int_equal(be_read(f->be, "fifo", buf, 8, 0), -ENOENT);
	assert_int_equal(f->be->stats.read_bytes, 16);
}

static void test_local_path_escape_refused(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = {
		"../secret", "a/../../secret", "..",   ".",	  "./top.txt",
		"/top.txt",  "100//1",	       "100/", "100/./1",
	};
	struct seen s = {0};
	struct be_attr a;
	char buf[16];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(be_stat(f->be, bad[i], &a), -EINVAL);
		assert_int_equal(be_read(f->be, bad[i], buf, sizeof(buf), 0),
				 -EINVAL);
		assert_int_equal(be_remove(f->be, bad[i]), -EINVAL);
		assert_int_equal(be_list(f->be, bad[i], 0, seen_fill, &s),
				 -EINVAL);
	}
	assert_int_equal(s.n, 0);
	/* symlinks are never followed, neither as leaf nor on the way */
	assert_int_equal(be_read(f->be, "dirlink/secret", buf, 16, 0), -ENOENT);
	assert_int_equal(be_remove(f->be, "link"), -ENOENT);
	assert_int_equal(be_remove(f->be, "dirlink/secret"), -ENOENT);
	assert_int_equal(access(f->dir, F_OK), 0);
}

static void test_local_remove_and_rmdir(void **state)
{
	struct fixture *f = *state;
	struct be_attr a;
	const char *paths[] = {"100/1700000000000-1-1-1.ser",
			       "100/1700000000001-2-1-2.sertmp", "100/nope"};

	assert_int_equal(be_remove(f->be, "100/1/2/task-0/state-data"), 0);
	assert_int_equal(be_stat(f->be, "100/1/2/task-0/state-data", &a),
			 -ENOENT);
	assert_int_equal(be_remove(f->be, "100/1/2/task-0/state-data"),
			 -ENOENT);
	assert_int_equal(be_remove(f->be, "100/1"), -EISDIR);
	assert_int_equal(be_rmdir(f->be, "100/1"), -ENOTEMPTY);
	assert_int_equal(be_rmdir(f->be, "100/1/2/task-0"), 0);
	assert_int_equal(be_rmdir(f->be, "100/1/2"), 0);
	assert_int_equal(be_rmdir(f->be, "100/1"), 0);
	assert_int_equal(be_rmdir(f->be, "top.txt"), -ENOTDIR);
	assert_int_equal(be_rmdir(f->be, ""), -EINVAL);
	assert_int_equal(be_rmdir(f->be, "dirlink"), -ENOENT);

	for (size_t i = 0; i < 3; i++)
		assert_int_equal(be_remove(f->be, paths[i]),
				 i < 2 ? 0 : -ENOENT);
	assert_int_equal(be_rmdir(f->be, "100"), 0);
	assert_int_equal(be_stat(f->be, "100", &a), -ENOENT);
	/* the link's target is untouched */
	assert_int_equal(be_remove(f->be, "link"), -ENOENT);
	{
		char p[160];

		snprintf(p, sizeof(p), "%s/secret", f->dir);
		assert_int_equal(access(p, F_OK), 0);
	}
}

static void test_local_health(void **state)
{
	struct fixture *f = *state;
	struct be_attr a;
	char msg[64];
	int err = 1;
	int64_t e_ms = -1, ok_ms = -1;

	assert_int_equal(be_stat(f->be, "", &a), 0);
	be_note_error(f->be, EIO, "boom %d", 7);
	be_health(f->be, &err, &e_ms, &ok_ms, msg, sizeof(msg));
	assert_int_equal(err, -EIO);
	assert_string_equal(msg, "boom 7");
	assert_true(e_ms > 1700000000000LL);
	assert_true(now_ms() >= e_ms);
	assert_true(mono_ms() > 0);
}

/* ---- the core wrappers (backend.c), over the fake and a read-only table */

static void test_backend_list_pages_and_stop(void **state)
{
	struct backend *be = NULL;
	struct seen s = {0};
	char k[16];
	int i;

	(void)state;
	assert_int_equal(fake_be_open(&be), 0);
	for (i = 0; i < 7; i++) {
		snprintf(k, sizeof(k), "d/f%d", i);
		assert_int_equal(fake_be_add_str(be, k, "x", i), 0);
	}
	fake_be_set_page_size(be, 2);
	assert_int_equal(be_list(be, "d", 0, seen_fill, &s), 0);
	assert_int_equal(s.n, 7);
	assert_string_equal(s.names[6], "f6");
	assert_int_equal(fake_be_calls(be, FAKE_LIST), 4);
	assert_int_equal(be->stats.lists, 4);

	/* stopping in page 2 requests no page 3 */
	memset(&s, 0, sizeof(s));
	s.stop_after = 3;
	assert_int_equal(be_list(be, "d", 0, seen_fill, &s), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(fake_be_calls(be, FAKE_LIST), 6);

	/* an error on any page is the result; ENOENT is not an error */
	assert_int_equal(fake_be_fail(be, FAKE_LIST, "d", -ETIMEDOUT), 0);
	assert_int_equal(be_list(be, "d", 0, seen_fill, &s), -ETIMEDOUT);
	assert_int_equal(be_list(be, "nope", 0, seen_fill, &s), -ENOENT);
	assert_int_equal(be->stats.errors, 1);
	be_close(be);
}

static void test_backend_remove_and_stats(void **state)
{
	struct backend *be = NULL;
	char buf[8];

	(void)state;
	assert_int_equal(fake_be_open(&be), 0);
	assert_int_equal(fake_be_add_str(be, "a", "1", 0), 0);
	assert_int_equal(fake_be_add_str(be, "b", "22", 0), 0);
	assert_int_equal(fake_be_fail(be, FAKE_REMOVE, "b", -EACCES), 0);
	assert_int_equal(be_remove(be, "a"), 0);
	assert_int_equal(be_remove(be, "b"), -EACCES);
	assert_int_equal(be_remove(be, "c"), -ENOENT);
	assert_int_equal(fake_be_calls(be, FAKE_REMOVE), 3);
	assert_int_equal(be->stats.removes, 3);
	assert_false(fake_be_has(be, "a"));
	assert_true(fake_be_has(be, "b"));
	assert_int_equal(be_read(be, "b", buf, sizeof(buf), 1), 1);
	assert_int_equal(be->stats.read_bytes, 1);
	assert_int_equal(be->stats.reads, 1);
	assert_int_equal(be_rmdir(be, "b"), -ENOTDIR);
	be_close(be);
}

static void test_backend_null_slots_are_erofs(void **state)
{
	struct be_ops ops = fake_be_ops;
	struct backend *be = NULL;

	(void)state;
	ops.remove = NULL;
	ops.rmdir = NULL;
	assert_int_equal(be_open_ops(&ops, "fake://", NULL, &be), 0);
	assert_int_equal(fake_be_add_str(be, "a", "1", 0), 0);
	assert_int_equal(be_remove(be, "a"), -EROFS);
	assert_int_equal(be_rmdir(be, "x"), -EROFS);
	assert_true(fake_be_has(be, "a"));
	be_close(be);

	/* remove without rmdir: no directories, rmdir is a no-op */
	ops.remove = fake_be_ops.remove;
	assert_int_equal(be_open_ops(&ops, "fake://", NULL, &be), 0);
	assert_int_equal(be_rmdir(be, "x"), 0);
	assert_int_equal(fake_be_calls(be, FAKE_RMDIR), 0);
	be_close(be);

	ops.list_page = NULL;
	assert_int_equal(be_open_ops(&ops, "fake://", NULL, &be), -EINVAL);
	assert_null(be);
}

/* ---- the pinned root (README "Who can read what") */

static void path_of(const struct fixture *f, const char *rel, char *p,
		    size_t psz)
{
	snprintf(p, psz, "%s/%s", f->dir, rel);
}

static int open_at(const struct fixture *f, const char *rel,
		   const struct stfs_conf *conf, struct backend **be)
{
	char uri[256];

	snprintf(uri, sizeof(uri), "file://%s/%s/", f->dir, rel);
	return be_open(uri, conf, be);
}

static void test_local_root_swapped_for_symlink(void **state)
{
	struct fixture *f = *state;
	char p[512], q[512];
	struct seen s = {.n = 0};
	struct be_attr a;

	/* `secret` beside the root: the attacker's target */
	path_of(f, "root", p, sizeof(p));
	path_of(f, "root.old", q, sizeof(q));
	assert_int_equal(rename(p, q), 0);
	path_of(f, "outside", q, sizeof(q));
	assert_int_equal(mkdir(q, 0755), 0);
	path_of(f, "outside/secret", q, sizeof(q));
	{
		FILE *fp = fopen(q, "w");

		assert_non_null(fp);
		fputs("s", fp);
		fclose(fp);
	}
	assert_int_equal(symlink("outside", p), 0);
	/* still the pinned directory, never the symlink's target */
	assert_int_equal(be_stat(f->be, "secret", &a), -ENOENT);
	assert_int_equal(be_stat(f->be, "top.txt", &a), 0);
	assert_int_equal(be_list(f->be, "", 0, seen_fill, &s), 0);
	assert_true(find_name(&s, "100") >= 0);
	assert_true(find_name(&s, "secret") < 0);

	/* the pinned directory removed for good: the symlink is not
	 * followed either, the namespace is empty */
	path_of(f, "root.old", q, sizeof(q));
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", q);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(be_stat(f->be, "secret", &a), -EPERM);
	s.n = 0;
	assert_true(be_list(f->be, "", 0, seen_fill, &s) < 0);
	assert_int_equal(s.n, 0);

	/* a real directory in its place again is pinned */
	assert_int_equal(unlink(p), 0);
	assert_int_equal(mkdir(p, 0755), 0);
	put(f, "new", "n");
	assert_int_equal(be_stat(f->be, "new", &a), 0);
	assert_int_equal(be_stat(f->be, "secret", &a), -ENOENT);
}

static void test_local_root_symlink_refused(void **state)
{
	struct fixture *f = *state;
	struct backend *be = NULL;
	char p[512];

	path_of(f, "ln", p, sizeof(p));
	assert_int_equal(symlink("root", p), 0);
	assert_int_equal(open_at(f, "ln", NULL, &be), -EPERM);
	assert_null(be);
	/* a symlink in a parent is refused the same way */
	assert_int_equal(open_at(f, "ln/100", NULL, &be), -EPERM);
	/* the real path is fine */
	assert_int_equal(open_at(f, "root/100", NULL, &be), 0);
	be_close(be);
}

static void test_local_unsafe_parents_refused(void **state)
{
	struct fixture *f = *state;
	struct backend *be = NULL;
	char p[512];

	path_of(f, "w", p, sizeof(p));
	assert_int_equal(mkdir(p, 0755), 0);
	path_of(f, "w/ns", p, sizeof(p));
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(open_at(f, "w/ns", NULL, &be), 0);
	be_close(be);
	be = NULL;

	path_of(f, "w", p, sizeof(p));
	assert_int_equal(chmod(p, 0777), 0);
	assert_int_equal(open_at(f, "w/ns", NULL, &be), -EPERM);
	assert_int_equal(chmod(p, 0775), 0);
	assert_int_equal(open_at(f, "w/ns", NULL, &be), -EPERM);
	/* sticky: a normal parent only when root owns it, like /tmp */
	assert_int_equal(chmod(p, 01777), 0);
	assert_int_equal(open_at(f, "w/ns", NULL, &be),
			 geteuid() == 0 ? 0 : -EPERM);
	be_close(be);
	be = NULL;
	/* never the root itself, sticky or not */
	assert_int_equal(open_at(f, "w", NULL, &be), -EPERM);
	assert_int_equal(chmod(p, 0755), 0);
	path_of(f, "w/ns", p, sizeof(p));
	assert_int_equal(chmod(p, 0757), 0);
	assert_int_equal(open_at(f, "w/ns", NULL, &be), -EPERM);
	assert_int_equal(chmod(p, 0755), 0);

	/* a root that appears later is judged when it appears */
	assert_int_equal(open_at(f, "w/later", NULL, &be), 0);
	path_of(f, "w/later", p, sizeof(p));
	assert_int_equal(mkdir(p, 0777), 0);
	assert_int_equal(chmod(p, 0777), 0);
	{
		struct be_attr a;

		assert_int_equal(be_stat(be, "", &a), -EPERM);
		assert_int_equal(chmod(p, 0755), 0);
		assert_int_equal(be_stat(be, "", &a), 0);
	}
	be_close(be);
}

static void test_local_namespace_owner(void **state)
{
	struct fixture *f = *state;
	struct stfs_conf c;
	struct backend *be = NULL;
	char p[512];

	if (geteuid() != 0)
		skip(); /* only root can give a directory away */
	path_of(f, "theirs", p, sizeof(p));
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(chown(p, 4242, 4242), 0);
	assert_int_equal(open_at(f, "theirs", NULL, &be), -EPERM);
	memset(&c, 0, sizeof(c));
	assert_int_equal(conf_init_defaults(&c), 0);
	c.namespace_owner = strdup("4242");
	assert_int_equal(open_at(f, "theirs", &c, &be), 0);
	be_close(be);
	be = NULL;
	free(c.namespace_owner);
	c.namespace_owner = strdup("no-such-user-stfs");
	assert_int_equal(open_at(f, "theirs", &c, &be), -EINVAL);
	conf_release(&c);
}

static void test_local_owner_and_mode(void **state)
{
	struct fixture *f = *state;
	struct seen s = {.n = 0};
	struct be_attr a;
	char p[512];
	int i;

	/* the fixture's directory is 0700: group and other reach nothing */
	assert_int_equal(be_stat(f->be, "top.txt", &a), 0);
	assert_true(a.owner.has);
	assert_int_equal(a.owner.uid, geteuid());
	assert_int_equal(a.owner.perm, 0600);
	/* parents count as they were when the root was pinned */
	path_of(f, "", p, sizeof(p));
	assert_int_equal(chmod(p, 0711), 0);
	assert_int_equal(be_stat(f->be, "top.txt", &a), 0);
	assert_int_equal(a.owner.perm, 0600);
	{
		struct backend *be = NULL;

		assert_int_equal(open_at(f, "root", NULL, &be), 0);
		assert_int_equal(be_stat(be, "top.txt", &a), 0);
		assert_int_equal(a.owner.perm, 0644);
		be_close(be);
	}
	be_close(f->be);
	f->be = NULL;
	assert_int_equal(open_at(f, "root", NULL, &f->be), 0);
	/* the root's own mode as it is now */
	assert_int_equal(chmod(f->root, 0750), 0);
	assert_int_equal(be_stat(f->be, "top.txt", &a), 0);
	assert_int_equal(a.owner.perm, 0640);
	assert_int_equal(chmod(f->root, 0755), 0);

	/* the file's own mode */
	snprintf(p, sizeof(p), "%s/top.txt", f->root);
	assert_int_equal(chmod(p, 0600), 0);
	assert_int_equal(be_stat(f->be, "top.txt", &a), 0);
	assert_int_equal(a.owner.perm, 0600);
	snprintf(p, sizeof(p), "%s/100/1700000000000-1-1-1.ser", f->root);
	assert_int_equal(chmod(p, 0), 0);

	/* a directory below the root closed to others: its files too,
	 * in a stat and in both listings */
	snprintf(p, sizeof(p), "%s/100/1", f->root);
	assert_int_equal(chmod(p, 0750), 0);
	assert_int_equal(be_stat(f->be, "100/1/2/task-0/state-data", &a), 0);
	assert_int_equal(a.owner.perm, 0640);
	assert_int_equal(be_stat(f->be, "100/1700000000001-2-1-2.sertmp", &a),
			 0);
	assert_int_equal(a.owner.perm, 0644);
	assert_int_equal(
		be_list(f->be, "100", BE_LIST_RECURSIVE, seen_fill, &s), 0);
	i = find_name(&s, "1/2/task-0/state-data");
	assert_true(i >= 0);
	assert_int_equal(s.attrs[i].owner.perm, 0640);
	i = find_name(&s, "1700000000000-1-1-1.ser");
	assert_true(i >= 0);
	assert_int_equal(s.attrs[i].owner.perm, 0);
	/* the walk came back up: a sibling after the closed directory */
	i = find_name(&s, "1700000000001-2-1-2.sertmp");
	assert_true(i >= 0);
	assert_int_equal(s.attrs[i].owner.perm, 0644);
	s.n = 0;
	assert_int_equal(be_list(f->be, "100/1/2/task-0", 0, seen_fill, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.attrs[0].owner.perm, 0640);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_local_uri_forms, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_local_list_one_dir, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_local_list_recursive,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_list_depth_limit,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_stat, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_local_read, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_local_path_escape_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_remove_and_rmdir,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_health, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_local_root_swapped_for_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_root_symlink_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_local_unsafe_parents_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_namespace_owner,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_owner_and_mode,
						setup, teardown),
		cmocka_unit_test(test_backend_list_pages_and_stop),
		cmocka_unit_test(test_backend_remove_and_stats),
		cmocka_unit_test(test_backend_null_slots_are_erofs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
