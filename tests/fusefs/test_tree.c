/*
 * test_tree — the virtual tree over an in-memory fake backend and an engine
 * snapshot parsed from JSON: resolution, listings, states, links, sizes.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <malloc.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fakes/fake_backend.h"
#include "fakes/testutil.h"
#include "fakes/fake_engine.h"
#include "fakes/testutil.h"
#include "util/jobid.h"
#include "view/render.h"
#include "policy/delete.h"
#include "mount/mount.h"
#include "view/tree.h"

#define OLD_NS \
	((int64_t)1600000000 * 1000000000) /* 2020: older than any grace */

static const char engine_json[] =
	"[{\"jobId\":\"100\",\"jobName\":\"a/b\",\"jobStatus\":\"FAILED\","
	"\"errorMsg\":\"boom\\nstack\",\"createTime\":\"2025-03-07 14:02:11\","
	"\"finishTime\":\"2025-03-07 14:05:40\",\"jobDag\":{\"jobId\":\"100\","
	"\"pipelineEdges\":{\"1\":[],\"2\":[]}},\"metrics\":"
	"{\"SourceReceivedCount\":\"5\"}},"
	"{\"jobId\":\"200\",\"jobName\":\"x\",\"jobStatus\":\"RUNNING\","
	"\"createTime\":\"2025-03-07 14:02:11\",\"jobDag\":{\"jobId\":\"200\","
	"\"pipelineEdges\":{\"1\":[]}},\"metrics\":{}},"
	"{\"jobId\":\"400\",\"jobName\":\"x\",\"jobStatus\":\"FINISHED\","
	"\"createTime\":\"2025-03-07 14:02:11\",\"finishTime\":\"2025-03-07 "
	"14:05:40\",\"jobDag\":{\"jobId\":\"400\",\"pipelineEdges\":{\"3\":[]}},"
	"\"metrics\":{}}]";

struct fixture {
	struct stfs fs;
	struct view v;
};

/* the engine knows engine_json's jobs; with `err`, its lists fail (the
 * last jobs known stay) and so does /job-info */
static struct engine *make_engine(int err)
{
	struct engine *e;

	assert_int_equal(fake_engine_new(&e), 0);
	assert_int_equal(fake_engine_add_json(e, engine_json, false), 0);
	fake_engine_set_data_ms(e, 1741356340000);
	if (err) {
		fake_engine_set_list_err(e, err, "");
		fake_engine_fail(e, FENG_JOB_INFO, err);
	}
	return e;
}

static void add(struct backend *be, const char *key, int64_t mtime_ns)
{
	assert_int_equal(fake_be_add_str(be, key, key, mtime_ns), 0);
}

/* A mount context without state_dir over a fresh fake backend. */
static struct fixture *fixture_alloc(struct backend **be)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(conf_init_defaults(&f->fs.conf), 0);
	free(f->fs.conf.state_dir);
	f->fs.conf.state_dir = NULL;
	assert_int_equal(stfs_init(&f->fs), 0);
	assert_int_equal(delete_attach(&f->fs), 0);
	assert_int_equal(fake_be_open(be), 0);
	return f;
}

static struct fixture *setup_with(int engine_err)
{
	struct backend *be;
	struct fixture *f = fixture_alloc(&be);

	/* job 100: real layout, a newer .sertmp, a stray */
	add(be, "100/1000-1-1-1.ser", OLD_NS);
	add(be, "100/2000-2-1-2.ser", OLD_NS + 1);
	add(be, "100/3000-3-1-3.sertmp", OLD_NS + 2);
	add(be, "100/1500-4-2-5.ser", OLD_NS);
	add(be, "100/readme.txt", OLD_NS);
	/* job 200: documented layout and documented savepoint */
	add(be, "200/1/7/task-0/state-data", OLD_NS);
	add(be, "200/1/8/task-0/state-data", OLD_NS);
	add(be, "savepoint/200/1700/1/task-0/state-data", OLD_NS);
	/* job 300: storage only, old: an orphan */
	add(be, "300/1000-1-1-1.ser", OLD_NS);
	f->fs.ckpt = be;
	f->fs.engine = make_engine(engine_err);
	view_open(&f->fs, &f->v);
	return f;
}

static int setup(void **state)
{
	*state = setup_with(0);
	return 0;
}

static int setup_down(void **state)
{
	*state = setup_with(-ECONNREFUSED);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	view_close(&f->v);
	tu_mount_free(&f->fs);
	free(f);
	return 0;
}

struct names {
	char buf[4096];
};

static int collect(void *cookie, const char *name, const struct stat *st)
{
	struct names *n = cookie;

	(void)st;
	strncat(n->buf, name, sizeof(n->buf) - strlen(n->buf) - 2);
	strncat(n->buf, " ", sizeof(n->buf) - strlen(n->buf) - 1);
	return 0;
}

static const char *list(struct fixture *f, const char *path)
{
	static struct names n;
	struct node nd;

	memset(&n, 0, sizeof(n));
	assert_int_equal(tree_resolve(&f->v, path, &nd), 0);
	assert_int_equal(tree_list(&f->v, path, &nd, collect, &n), 0);
	return n.buf;
}

static int state_of(struct fixture *f, const char *id)
{
	struct job_view jv;

	assert_int_equal(view_job(&f->v, id, &jv), 0);
	return jv.state;
}

static void test_tree_jobs_are_the_union(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(list(f, "/jobs"), "100 200 300 400 ");
	assert_string_equal(list(f, "/"),
			    "jobs by-state by-name cluster stfs.prom ");
}

static void test_tree_states_from_both_sources(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(state_of(f, "100"), JS_FAILED);
	assert_int_equal(state_of(f, "200"), JS_RUNNING);
	assert_int_equal(state_of(f, "300"), JS_ORPHAN);
	assert_int_equal(state_of(f, "400"), JS_FINISHED);
	assert_string_equal(list(f, "/by-state/ORPHAN"), "300 ");
	assert_string_equal(list(f, "/by-state/FAILED"), "100 ");
	assert_string_equal(list(f, "/by-state/CANCELED"), "");
}

static void test_tree_engine_down_gives_unknown(void **state)
{
	struct fixture *f = *state;
	struct job_view jv;

	assert_int_equal(state_of(f, "300"), JS_UNKNOWN);
	assert_int_equal(view_job(&f->v, "100", &jv), 0);
	assert_int_equal(jv.state, JS_FAILED);
	assert_true(jv.stale);
}

static void test_tree_job_directory(void **state)
{
	struct fixture *f = *state;

	assert_string_equal(list(f, "/jobs/100"),
			    "status job.json metrics metrics.json deletable "
			    "restore pipelines savepoints other ");
	/* storage only: no engine documents */
	assert_string_equal(list(f, "/jobs/300"),
			    "status metrics deletable restore pipelines "
			    "savepoints ");
	/* union of storage and engine pipelines */
	assert_string_equal(list(f, "/jobs/100/pipelines"), "1 2 ");
	assert_string_equal(list(f, "/jobs/400/pipelines"), "3 ");
	assert_string_equal(list(f, "/jobs/400/pipelines/3/checkpoints"), "");
	assert_string_equal(list(f, "/jobs/100/other"), "readme.txt ");
}

static void test_tree_latest_skips_sertmp(void **state)
{
	struct fixture *f = *state;
	struct node n;

	assert_string_equal(list(f, "/jobs/100/pipelines/1/checkpoints"),
			    "1 2 3 latest ");
	assert_int_equal(
		tree_resolve(&f->v, "/jobs/100/pipelines/1/checkpoints/latest",
			     &n),
		0);
	assert_int_equal(n.kind, ND_LINK);
	assert_string_equal(n.link, "2");
	assert_int_equal(tree_resolve(&f->v,
				      "/jobs/100/pipelines/1/checkpoints/3/"
				      "3000-3-1-3.sertmp",
				      &n),
			 0);
	assert_int_equal(n.kind, ND_OBJ);
	assert_false(n.obj->restore_point);
}

static void test_tree_documented_layout(void **state)
{
	struct fixture *f = *state;
	struct node n;

	assert_string_equal(list(f, "/jobs/200/pipelines/1/checkpoints"),
			    "7 8 latest ");
	assert_string_equal(list(f, "/jobs/200/pipelines/1/checkpoints/8"),
			    "task-0 ");
	assert_int_equal(tree_resolve(&f->v,
				      "/jobs/200/pipelines/1/checkpoints/8/"
				      "task-0/state-data",
				      &n),
			 0);
	assert_int_equal(n.kind, ND_OBJ);
	assert_string_equal(n.obj->key, "200/1/8/task-0/state-data");
	assert_true(n.obj->restore_point);
	assert_int_equal(
		tree_resolve(&f->v, "/jobs/200/pipelines/1/checkpoints/latest",
			     &n),
		0);
	assert_string_equal(n.link, "8");
	assert_string_equal(list(f, "/jobs/200/savepoints"), "1700 ");
	assert_int_equal(tree_resolve(&f->v,
				      "/jobs/200/savepoints/1700/1/task-0/"
				      "state-data",
				      &n),
			 0);
	assert_int_equal(n.kind, ND_OBJ);
	assert_string_equal(n.obj->key,
			    "savepoint/200/1700/1/task-0/state-data");
}

static void test_tree_nonsense_paths(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = {
		"/nope",
		"/jobs/999",
		"/jobs/100/pipelines/9",
		"/jobs/100/pipelines/01",
		"/jobs/100/pipelines/1/checkpoints/9",
		"/jobs/100/pipelines/1/checkpoints/02",
		"/by-state/NOPE",
		"/by-state/failed",
		"/by-state/RUNNING/100",
		"/jobs/300/job.json",
		"/jobs/100/other/nope",
		"/by-name/a/b",
		"/by-name/a%2fb",
		"/cluster/nope",
		"/.stfs/nope",
		"/jobs/200/other",
	};
	struct node n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		int rc = tree_resolve(&f->v, bad[i], &n);

		if (rc != -ENOENT)
			fail_msg("%s: %d", bad[i], rc);
	}
	assert_int_equal(tree_resolve(&f->v, "/jobs/100/status/x", &n),
			 -ENOTDIR);
}

static void test_tree_by_name(void **state)
{
	struct fixture *f = *state;
	struct node n;

	assert_string_equal(list(f, "/by-name"), "a%2Fb x ");
	assert_string_equal(list(f, "/by-name/x"), "200 400 ");
	assert_int_equal(tree_resolve(&f->v, "/by-name/a%2Fb/100", &n), 0);
	assert_int_equal(n.kind, ND_LINK);
	assert_string_equal(n.link, "../../jobs/100");
}

static void test_tree_pseudo_sizes_are_exact(void **state)
{
	struct fixture *f = *state;
	static const char *const files[] = {
		"/jobs/100/status",  "/jobs/100/job.json",
		"/jobs/100/metrics", "/jobs/100/deletable",
		"/jobs/300/status",  "/jobs/100/pipelines/1/status",
		"/stfs.prom",	     "/.stfs/config",
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		struct node n;
		struct stat st;
		struct pc_entry *e;

		assert_int_equal(tree_resolve(&f->v, files[i], &n), 0);
		assert_int_equal(tree_stat(&f->v, files[i], &n, &st), 0);
		assert_int_equal(tree_content(&f->v, files[i], &n, &e), 0);
		assert_int_equal(st.st_size, e->len);
		assert_int_equal(st.st_blocks, (e->len + 511) / 512);
		assert_int_equal(strlen(e->data), e->len);
		pcache_put(e);
	}
}

/* README "Who can read what": the modes open and access judge by */
static void test_tree_modes(void **state)
{
	struct fixture *f = *state;
	static const char obj[] = "/jobs/100/pipelines/1/checkpoints/1/"
				  "1000-1-1-1.ser";
	struct node n;
	struct stat st;

	/* the fake store has no owners: an object store's documented mode */
	assert_int_equal(tree_resolve(&f->v, obj, &n), 0);
	assert_int_equal(tree_stat(&f->v, obj, &n, &st), 0);
	assert_int_equal(st.st_mode, S_IFREG | 0400);
	assert_int_equal(st.st_uid, f->fs.uid);
	assert_int_equal(tree_resolve(&f->v, "/.stfs/config", &n), 0);
	assert_int_equal(tree_stat(&f->v, "/.stfs/config", &n, &st), 0);
	assert_int_equal(st.st_mode, S_IFREG | 0400);
	assert_int_equal(tree_resolve(&f->v, "/.stfs/health", &n), 0);
	assert_int_equal(tree_stat(&f->v, "/.stfs/health", &n, &st), 0);
	assert_int_equal(st.st_mode, S_IFREG | 0444);
	assert_int_equal(tree_resolve(&f->v, "/jobs/100/status", &n), 0);
	assert_int_equal(tree_stat(&f->v, "/jobs/100/status", &n, &st), 0);
	assert_int_equal(st.st_mode, S_IFREG | 0444);

	/* with a delete_group, its members too */
	f->fs.read_group = true;
	f->fs.read_gid = 4242;
	assert_int_equal(tree_resolve(&f->v, obj, &n), 0);
	assert_int_equal(tree_stat(&f->v, obj, &n, &st), 0);
	assert_int_equal(st.st_mode, S_IFREG | 0440);
	assert_int_equal(st.st_gid, 4242);
	assert_int_equal(tree_resolve(&f->v, "/.stfs/config", &n), 0);
	assert_int_equal(tree_stat(&f->v, "/.stfs/config", &n, &st), 0);
	assert_int_equal(st.st_mode, S_IFREG | 0440);
	assert_int_equal(st.st_gid, 4242);
}

static void test_tree_status_content(void **state)
{
	struct fixture *f = *state;
	struct node n;
	struct pc_entry *e;

	assert_int_equal(tree_resolve(&f->v, "/jobs/100/status", &n), 0);
	assert_int_equal(tree_content(&f->v, "/jobs/100/status", &n, &e), 0);
	assert_non_null(strstr(e->data, "state       FAILED\n"));
	assert_non_null(strstr(e->data, "error       boom\n"));
	assert_non_null(strstr(e->data, "2000-2-1-2.ser"));
	assert_non_null(strstr(e->data, "deletable   no EPERM R2"));
	pcache_put(e);
	assert_int_equal(tree_resolve(&f->v, "/jobs/200/status", &n), 0);
	assert_int_equal(tree_content(&f->v, "/jobs/200/status", &n, &e), 0);
	assert_non_null(strstr(e->data, "deletable   no EBUSY R1"));
	pcache_put(e);
	assert_int_equal(tree_resolve(&f->v, "/jobs/100/job.json", &n), 0);
	assert_int_equal(tree_content(&f->v, "/jobs/100/job.json", &n, &e), 0);
	assert_memory_equal(e->data, "{\"jobId\":\"100\"", 14);
	assert_int_equal(e->data[e->len - 1], '\n');
	pcache_put(e);
}

static void test_tree_inodes_and_mtimes(void **state)
{
	struct fixture *f = *state;
	const char *p = "/jobs/100/pipelines/1/checkpoints/2/2000-2-1-2.ser";
	struct node n;
	struct stat a, b, c;

	assert_int_equal(tree_resolve(&f->v, p, &n), 0);
	assert_int_equal(tree_stat(&f->v, p, &n, &a), 0);
	assert_int_equal(tree_stat(&f->v, p, &n, &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(a.st_mtim.tv_sec, OLD_NS / 1000000000);
	assert_int_equal(a.st_mtim.tv_nsec, 1);
	assert_int_equal(a.st_ctim.tv_sec, a.st_mtim.tv_sec);
	assert_int_equal(a.st_size, strlen("100/2000-2-1-2.ser"));
	assert_int_equal(tree_resolve(&f->v, "/jobs/100", &n), 0);
	assert_int_equal(tree_stat(&f->v, "/jobs/100", &n, &c), 0);
	assert_true(S_ISDIR(c.st_mode));
	assert_int_not_equal(c.st_ino, a.st_ino);
	/* finish time wins over older objects */
	assert_true(c.st_mtim.tv_sec > OLD_NS / 1000000000);
}

static void test_tree_name_escaping(void **state)
{
	static const char *const names[] = {
		"plain", "a/b", "50%", ".", "..", "tab\there", "x/../y", "é/ü",
	};
	char esc[256], back[256];

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		tree_escape_name(names[i], esc, sizeof(esc));
		assert_null(strchr(esc, '/'));
		assert_string_not_equal(esc, ".");
		assert_string_not_equal(esc, "..");
		assert_int_equal(tree_unescape_name(esc, back, sizeof(back)),
				 0);
		assert_string_equal(back, names[i]);
	}
	assert_int_equal(tree_unescape_name("%G1", back, sizeof(back)),
			 -EINVAL);
	assert_int_equal(tree_unescape_name("%4", back, sizeof(back)), -EINVAL);
}

/* ---- big directories: readdir continuations (issue: quadratic listings) */

struct pager {
	size_t room, taken; /* entries the "buffer" takes per call */
	char **names;
	size_t n, cap;
};

/* a readdir buffer: takes `room` entries, refuses the next (returns 1) */
static int page_fill(void *cookie, const char *name, const struct stat *st)
{
	struct pager *p = cookie;

	assert_non_null(st);
	if (p->taken == p->room)
		return 1;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 256;
		p->names = realloc(p->names, p->cap * sizeof(*p->names));
		assert_non_null(p->names);
	}
	p->names[p->n++] = strdup(name);
	p->taken++;
	return 0;
}

/* list `path` as readdir does, `room` entries per call; returns the pager */
static void page_through(struct fixture *f, const char *path, size_t room,
			 struct pager *p)
{
	struct tree_dir *d = NULL;
	struct node n;
	struct view v;
	size_t from = 0;

	memset(p, 0, sizeof(*p));
	p->room = room;
	view_open(&f->fs, &v);
	assert_int_equal(tree_resolve(&v, path, &n), 0);
	assert_int_equal(tree_dir_open(&v, path, &n, &d), 0);
	while (from < tree_dir_count(d)) {
		p->taken = 0;
		assert_int_equal(tree_dir_fill(d, from, page_fill, p), 0);
		assert_true(p->taken > 0);
		from += p->taken;
	}
	tree_dir_close(d);
}

static void pager_free(struct pager *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->names[i]);
	free(p->names);
}

#define BIG 3000

static int setup_big(void **state)
{
	struct fixture *f = setup_with(0);
	char key[128];

	view_close(&f->v);
	for (int i = 0; i < BIG; i++) {
		snprintf(key, sizeof(key), "%d/1000-1-1-1.ser", 10000 + i);
		add(f->fs.ckpt, key, OLD_NS);
		/* strays of job 300 (other/): files and directories whose
		 * names sort around the '/' that makes a directory */
		snprintf(key, sizeof(key), "300/s%05d", i);
		add(f->fs.ckpt, key, OLD_NS);
		if (i % 10 == 0) {
			snprintf(key, sizeof(key), "300/s%05d-x", i);
			add(f->fs.ckpt, key, OLD_NS);
			snprintf(key, sizeof(key), "300/d%05d/f", i);
			add(f->fs.ckpt, key, OLD_NS);
		}
	}
	stfs_invalidate(&f->fs);
	view_open(&f->fs, &f->v);
	*state = f;
	return 0;
}

static void test_tree_big_listing_continues_without_replay(void **state)
{
	struct fixture *f = *state;
	struct pager p;
	uint64_t before;
	size_t want = BIG + 4; /* + 100, 200, 300, 400 */

	before = f->fs.n.list_entries;
	page_through(f, "/jobs", 50, &p);
	/* every job exactly once, in numeric order */
	assert_int_equal(p.n, want);
	for (size_t i = 1; i < p.n; i++)
		assert_true(jobid_cmp(p.names[i - 1], p.names[i]) < 0);
	/* the work: one walk to take the listing, not one per continuation
	 * (which walked BIG^2/100 = 90,000 entries) */
	if (f->fs.n.list_entries - before > 2 * want)
		fail_msg("listing %zu entries 50 at a time walked %llu", want,
			 (unsigned long long)(f->fs.n.list_entries - before));
	pager_free(&p);

	before = f->fs.n.list_entries;
	page_through(f, "/jobs/300/other", 7, &p);
	assert_int_equal(p.n, BIG + 2 * (BIG / 10));
	for (size_t i = 1; i < p.n; i++)
		assert_true(strcmp(p.names[i - 1], p.names[i]) < 0);
	if (f->fs.n.list_entries - before > 2 * p.n)
		fail_msg("other/: %zu entries walked %llu", p.n,
			 (unsigned long long)(f->fs.n.list_entries - before));
	pager_free(&p);
}

/* lookups in a group by binary search: names that sort around the '/'
 * that makes a directory ("s00010" < "s00010-x" < "s00010/..." ) */
static void test_tree_group_lookup_edges(void **state)
{
	struct fixture *f = *state;
	struct node n;

	assert_int_equal(tree_resolve(&f->v, "/jobs/300/other/s00010", &n), 0);
	assert_int_equal(n.kind, ND_OBJ);
	assert_string_equal(n.obj->key, "300/s00010");
	assert_int_equal(tree_resolve(&f->v, "/jobs/300/other/s00010-x", &n),
			 0);
	assert_int_equal(n.kind, ND_OBJ);
	assert_int_equal(tree_resolve(&f->v, "/jobs/300/other/d00010", &n), 0);
	assert_int_equal(n.kind, ND_SUBDIR);
	assert_string_equal(list(f, "/jobs/300/other/d00010"), "f ");
	assert_int_equal(tree_resolve(&f->v, "/jobs/300/other/d00010/f", &n),
			 0);
	assert_int_equal(n.kind, ND_OBJ);
	assert_string_equal(n.obj->key, "300/d00010/f");
	assert_int_equal(tree_resolve(&f->v, "/jobs/300/other/d0001", &n),
			 -ENOENT);
	assert_int_equal(tree_resolve(&f->v, "/jobs/300/other/d00010/g", &n),
			 -ENOENT);
	assert_int_equal(tree_resolve(&f->v, "/jobs/300/other/s00011-x", &n),
			 -ENOENT);
	assert_int_equal(tree_resolve(&f->v, "/jobs/300/other/zzz", &n),
			 -ENOENT);
}

/* a deletion through stfs updates the catalog without listing again */
static void test_tree_removal_updates_catalog_in_place(void **state)
{
	struct fixture *f = *state;
	const char *key = "100/2000-2-1-2.ser";
	struct node n;
	unsigned lists;

	assert_int_equal(
		tree_resolve(&f->v, "/jobs/100/pipelines/1/checkpoints/latest",
			     &n),
		0);
	assert_string_equal(n.link, "2");
	view_close(&f->v);
	lists = fake_be_calls(f->fs.ckpt, FAKE_LIST);
	assert_int_equal(be_remove(f->fs.ckpt, key), 0);
	stfs_catalog_removed(&f->fs, &key, 1);
	view_open(&f->fs, &f->v);
	assert_int_equal(fake_be_calls(f->fs.ckpt, FAKE_LIST), lists);
	assert_int_equal(
		tree_resolve(&f->v, "/jobs/100/pipelines/1/checkpoints/2", &n),
		-ENOENT);
	/* the restore point is chosen again: the newest finished .ser left */
	assert_int_equal(
		tree_resolve(&f->v, "/jobs/100/pipelines/1/checkpoints/latest",
			     &n),
		0);
	assert_string_equal(n.link, "1");
	assert_string_equal(list(f, "/jobs/100/pipelines/1/checkpoints"),
			    "1 3 latest ");
	/* and the other jobs are still there */
	assert_string_equal(list(f, "/jobs"), "100 200 300 400 ");
}

/* jobs/ is listed from names kept for the job ids of the catalog and the
 * engine (README "Performance"): an unchanged listing is served again, and
 * a relisting of the namespace that finds another job shows it, the pcache
 * untouched. */
static void test_tree_jobs_listing_follows_catalog(void **state)
{
	struct fixture *f = *state;
	struct pager p;
	struct catalog *c;
	int tries = 0;

	page_through(f, "/jobs", 100, &p);
	assert_int_equal(p.n, 4);
	pager_free(&p);
	page_through(f, "/jobs", 100, &p);
	assert_int_equal(p.n, 4);
	assert_string_equal(p.names[3], "400");
	pager_free(&p);
	add(f->fs.ckpt, "500/1000-1-1-1.ser", OLD_NS);
	/* a relisting in the background, as storage_ttl makes one */
	do {
		c = stfs_catalog(&f->fs, 1);
		catalog_put(c);
		c = stfs_catalog(&f->fs, 0);
		if (c->n_jobs == 3) { /* 100 200 300; 400 is the engine's */
			catalog_put(c);
			usleep(10000);
			continue;
		}
		catalog_put(c);
		break;
	} while (++tries < 500);
	page_through(f, "/jobs", 100, &p);
	assert_int_equal(p.n, 5);
	assert_string_equal(p.names[4], "500");
	pager_free(&p);
}

/* checkpoints/<cid>/info over a real engine-shaped object (the protostuff
 * fixture): listed only where a .ser is, exact size, decoded once; a store
 * that times out is not asked again for two deadlines. */
#define INFO_DIR "/jobs/912345678901234567/pipelines/1/checkpoints/"

static int setup_info(void **state)
{
	struct backend *be;
	struct fixture *f = fixture_alloc(&be);
	char *p = NULL;
	size_t n;

	assert_int_equal(tu_load("tests/fixtures/protostuff/",
				 "pipeline_state_checkpoint.ser", &p, &n),
			 0);
	assert_int_equal(
		fake_be_add(be, "912345678901234567/1730001234600-1-1-7.ser", p,
			    n, OLD_NS),
		0);
	assert_int_equal(
		fake_be_add(be, "912345678901234567/1730001234700-1-1-8.ser", p,
			    n, OLD_NS + 1),
		0);
	add(be, "912345678901234567/1730001234800-1-1-9.sertmp", OLD_NS + 2);
	add(be, "912345678901234567/1730001234650-1-1-10.ser", OLD_NS);
	add(be, "200/1/7/task-0/state-data", OLD_NS);
	free(p);
	f->fs.ckpt = be;
	f->fs.engine = make_engine(0);
	view_open(&f->fs, &f->v);
	*state = f;
	return 0;
}

static void test_tree_ckpt_info(void **state)
{
	struct fixture *f = *state;
	const char *path = INFO_DIR "7/info", *path10 = INFO_DIR "10/info";
	struct pc_entry *e;
	struct node nd;
	struct stat st;
	unsigned reads;

	assert_string_equal(
		list(f, "/jobs/912345678901234567/pipelines/1/checkpoints/7"),
		"info 1730001234600-1-1-7.ser ");
	/* documented layout and in-flight: no info */
	assert_string_equal(list(f, "/jobs/200/pipelines/1/checkpoints/7"),
			    "task-0 ");
	assert_int_equal(
		tree_resolve(&f->v, "/jobs/200/pipelines/1/checkpoints/7/info",
			     &nd),
		-ENOENT);
	assert_int_equal(tree_resolve(&f->v, path, &nd), 0);
	assert_int_equal(nd.kind, ND_PSEUDO);
	assert_int_equal(tree_stat(&f->v, path, &nd, &st), 0);
	assert_int_equal(tree_content(&f->v, path, &nd, &e), 0);
	assert_int_equal(st.st_size, e->len);
	/* the fixture's ids (checkpoint 7) and content */
	assert_non_null(strstr(e->data, "\ncheckpoint             7\n"));
	assert_non_null(
		strstr(e->data, "\ntype                   checkpoint\n"));
	assert_non_null(strstr(e->data, "\nrestore_point          no\n"));
	assert_non_null(strstr(e->data, "\nduration_ms            567\n"));
	assert_non_null(strstr(
		e->data,
		"\naction.0.name          pipeline-1 [Source[0]-FakeSource]\n"));
	assert_non_null(strstr(e->data, "\naction.0.state_bytes   14\n"));
	assert_non_null(strstr(e->data, "\nstate_size             4\n"));
	/* its name says 7, the file says 7: no warning; 8 holds 7 inside */
	assert_null(strstr(e->data, "warning"));
	pcache_put(e);
	assert_int_equal(
		tree_resolve(
			&f->v,
			"/jobs/912345678901234567/pipelines/1/checkpoints/8/info",
			&nd),
		0);
	assert_int_equal(
		tree_content(
			&f->v,
			"/jobs/912345678901234567/pipelines/1/checkpoints/8/info",
			&nd, &e),
		0);
	assert_non_null(strstr(e->data, "\nwarning "));
	assert_non_null(strstr(e->data, "\nrestore_point          yes\n"));
	pcache_put(e);
	/* bytes that do not decode: an info that says so (its stat answers,
	 * so a lookup during rm -r does not fail with EIO), the ids of its
	 * name; not read again per walk */
	assert_int_equal(tree_resolve(&f->v, path10, &nd), 0);
	assert_int_equal(tree_stat(&f->v, path10, &nd, &st), 0);
	assert_int_equal(tree_content(&f->v, path10, &nd, &e), 0);
	assert_int_equal(st.st_size, e->len);
	assert_non_null(strstr(e->data, "\ncheckpoint             10\n"));
	assert_non_null(
		strstr(e->data,
		       "\nerror                  the object does not decode"));
	assert_null(strstr(e->data, "\nactions "));
	pcache_put(e);
	reads = fake_be_calls(f->fs.ckpt, FAKE_READ);
	pcache_clear(f->fs.pc);
	assert_int_equal(tree_content(&f->v, path10, &nd, &e), 0);
	pcache_put(e);
	assert_int_equal(fake_be_calls(f->fs.ckpt, FAKE_READ), reads);
	/* decoded once: the pipeline status needs no further read */
	reads = fake_be_calls(f->fs.ckpt, FAKE_READ);
	pcache_clear(f->fs.pc);
	assert_int_equal(
		tree_resolve(&f->v,
			     "/jobs/912345678901234567/pipelines/1/status",
			     &nd),
		0);
	assert_int_equal(
		tree_content(&f->v,
			     "/jobs/912345678901234567/pipelines/1/status", &nd,
			     &e),
		0);
	assert_non_null(strstr(e->data, "checkpoint 567ms"));
	pcache_put(e);
	assert_int_equal(fake_be_calls(f->fs.ckpt, FAKE_READ), reads);
}

/* the object of checkpoint 7 goes (the engine's own cleanup, another
 * mount's rm) between the listing and the read of its `info`: ENOENT,
 * what the checkpoint now is, not EIO; its status and listing still
 * work (README "Checkpoint info") */
static void test_tree_ckpt_info_object_gone(void **state)
{
	struct fixture *f = *state;
	const char *path = INFO_DIR "7/info";
	struct pc_entry *e = NULL;
	struct node nd;
	struct stat st;

	assert_int_equal(tree_resolve(&f->v, path, &nd), 0);
	assert_int_equal(nd.kind, ND_PSEUDO);
	/* behind the catalog's back: the listing still holds it */
	assert_int_equal(
		be_remove(f->fs.ckpt,
			  "912345678901234567/1730001234600-1-1-7.ser"),
		0);
	assert_int_equal(tree_content(&f->v, path, &nd, &e), -ENOENT);
	assert_null(e);
	assert_int_equal(tree_stat(&f->v, path, &nd, &st), -ENOENT);
	/* and a read that fails so mid-walk is not remembered as undecodable:
	 * the object back (a restore), its info decodes */
	{
		char *p = NULL;
		size_t n;

		assert_int_equal(tu_load("tests/fixtures/protostuff/",
					 "pipeline_state_checkpoint.ser", &p,
					 &n),
				 0);
		assert_int_equal(
			fake_be_add(
				f->fs.ckpt,
				"912345678901234567/1730001234600-1-1-7.ser", p,
				n, OLD_NS),
			0);
		free(p);
	}
	assert_int_equal(tree_resolve(&f->v, path, &nd), 0);
	assert_int_equal(tree_content(&f->v, path, &nd, &e), 0);
	assert_non_null(strstr(e->data, "\ncheckpoint             7\n"));
	pcache_put(e);
}

static void test_tree_ckpt_info_timeout(void **state)
{
	struct fixture *f = *state;
	const char *p7 = INFO_DIR "7/info", *p8 = INFO_DIR "8/info";
	struct pc_entry *e;
	struct node nd;
	unsigned reads;

	assert_int_equal(fake_be_fail(f->fs.ckpt, FAKE_READ, NULL, -ETIMEDOUT),
			 0);
	assert_int_equal(tree_resolve(&f->v, p7, &nd), 0);
	assert_int_equal(tree_content(&f->v, p7, &nd, &e), -ETIMEDOUT);
	reads = fake_be_calls(f->fs.ckpt, FAKE_READ);
	/* the next checkpoint is not asked: one deadline per walk */
	assert_int_equal(tree_resolve(&f->v, p8, &nd), 0);
	assert_int_equal(tree_content(&f->v, p8, &nd, &e), -EAGAIN);
	assert_int_equal(fake_be_calls(f->fs.ckpt, FAKE_READ), reads);
}

/*
 * stfs.prom reads the jobs one at a time (README "Memory"): jansson's live
 * bytes during the render stay within a few jobs' metrics trees, not
 * every job's (the render parsed all jobs' metrics at once: 48 MB for
 * 10,000 jobs).  Counted through jansson's allocator hooks with
 * malloc_usable_size, so frees of trees made before the hooks balance.
 */
#define PROM_JOBS 200
#define PROM_KEYS 24

static long long js_live, js_peak;

static void *js_malloc(size_t n)
{
	void *p = malloc(n);

	if (p) {
		js_live += (long long)malloc_usable_size(p);
		if (js_live > js_peak)
			js_peak = js_live;
	}
	return p;
}

static void js_free(void *p)
{
	if (p)
		js_live -= (long long)malloc_usable_size(p);
	free(p);
}

static char *prom_jobs_json(void)
{
	struct buf b;

	buf_init(&b, (size_t)16 << 20);
	buf_puts(&b, "[");
	for (int i = 0; i < PROM_JOBS; i++) {
		buf_printf(&b,
			   "%s{\"jobId\":\"%d\",\"jobName\":\"j%d\","
			   "\"jobStatus\":\"RUNNING\",\"createTime\":"
			   "\"2025-03-07 14:02:11\",\"jobDag\":{\"jobId\":"
			   "\"%d\",\"pipelineEdges\":{\"1\":[]}},\"metrics\":{",
			   i ? "," : "", 5000 + i, i, 5000 + i);
		for (int k = 0; k < PROM_KEYS; k++)
			buf_printf(&b, "%s\"Key%dCount\":\"%d\"", k ? "," : "",
				   k, i * 100 + k);
		buf_puts(&b, ",\"TableSinkWriteCount\":{\"db.t1\":\"1\","
			     "\"db.t2\":\"2\"}}}");
	}
	buf_puts(&b, "]");
	assert_int_equal(buf_err(&b), 0);
	return buf_detach(&b, NULL);
}

static void test_tree_prom_streams_jobs(void **state)
{
	struct fixture *f = *state;
	char *json = prom_jobs_json();
	const char *one = strstr(json, "\"metrics\":") + 10;
	long long tree;
	struct pc_entry *e;
	struct node n;
	json_t *m;
	char *p;
	int samples = 0;

	view_close(&f->v);
	assert_int_equal(fake_engine_add_json(f->fs.engine, json, true), 0);
	stfs_invalidate(&f->fs);
	view_open(&f->fs, &f->v);
	/* one job's metrics tree */
	json_set_alloc_funcs(js_malloc, js_free);
	js_live = js_peak = 0;
	m = json_loadb(one, strlen(one), JSON_DISABLE_EOF_CHECK, NULL);
	assert_non_null(m);
	tree = js_peak;
	json_decref(m);
	js_live = js_peak = 0;
	assert_int_equal(tree_resolve(&f->v, "/stfs.prom", &n), 0);
	assert_int_equal(tree_content(&f->v, "/stfs.prom", &n, &e), 0);
	json_set_alloc_funcs(malloc, free);
	assert_true(tree > 1000);
	/* every job's series are there, grouped: one HELP per family */
	for (p = e->data; (p = strstr(p, "\nseatunnel_job_key7_count_total{"));
	     p++)
		samples++;
	assert_int_equal(samples, PROM_JOBS);
	assert_non_null(strstr(e->data,
			       "seatunnel_job_table_sink_write_count_"
			       "total{job_id=\"5199\",job_name=\"j199\","
			       "table=\"db.t2\"} 2\n"));
	p = strstr(e->data, "# HELP seatunnel_job_key7_count_total ");
	assert_non_null(p);
	assert_null(strstr(p + 1, "# HELP seatunnel_job_key7_count_total "));
	pcache_put(e);
	/* all trees at once would be PROM_JOBS trees */
	assert_true(js_peak < 4 * tree);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_tree_jobs_listing_follows_catalog, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_tree_ckpt_info, setup_info,
						teardown),
		cmocka_unit_test_setup_teardown(test_tree_ckpt_info_timeout,
						setup_info, teardown),
		cmocka_unit_test_setup_teardown(test_tree_ckpt_info_object_gone,
						setup_info, teardown),
		cmocka_unit_test_setup_teardown(test_tree_jobs_are_the_union,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_tree_states_from_both_sources, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_tree_engine_down_gives_unknown, setup_down,
			teardown),
		cmocka_unit_test_setup_teardown(test_tree_job_directory, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tree_latest_skips_sertmp,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_tree_documented_layout,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_tree_nonsense_paths, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tree_by_name, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_tree_pseudo_sizes_are_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tree_modes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tree_status_content, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tree_inodes_and_mtimes,
						setup, teardown),
		cmocka_unit_test(test_tree_name_escaping),
		cmocka_unit_test_setup_teardown(
			test_tree_big_listing_continues_without_replay,
			setup_big, teardown),
		cmocka_unit_test_setup_teardown(test_tree_group_lookup_edges,
						setup_big, teardown),
		cmocka_unit_test_setup_teardown(
			test_tree_removal_updates_catalog_in_place, setup,
			teardown),
		cmocka_unit_test_setup_teardown(test_tree_prom_streams_jobs,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
