/*
 * test_inodes — the low-level FUSE layer's node table (fusefs/inodes.h):
 * nodeid <-> path, lookup counts and FORGET, unhashing after a removal,
 * the per-directory listing digest, growth past the first buckets,
 * concurrent LOOKUP/FORGET of the same paths, invalidating the nodes
 * held below a job directory (the freshness ticker's part), the compact
 * structure (deep paths built from parents, a parent forgotten before its
 * children, a removed directory looked up again) and its cost per node.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fusefs/inodes.h"
#include "fakes/testutil.h"

static struct inodes *table(void)
{
	struct inodes *t = NULL;

	assert_int_equal(inodes_new(&t), 0);
	assert_non_null(t);
	return t;
}

static void assert_path(struct inodes *t, uint64_t ino, const char *want)
{
	char *p = NULL;

	assert_int_equal(inodes_path(t, ino, &p), 0);
	assert_string_equal(p, want);
	free(p);
}

static void test_root_and_children(void **state)
{
	struct inodes *t = table();
	char *p = NULL;
	uint64_t jobs, job;

	(void)state;
	assert_path(t, 1, "/");
	assert_int_equal(inodes_child(t, 1, "jobs", &p), 0);
	assert_string_equal(p, "/jobs");
	jobs = inodes_ref(t, p);
	free(p);
	assert_true(jobs > 1);
	assert_int_equal(inodes_child(t, jobs, "42", &p), 0);
	assert_string_equal(p, "/jobs/42");
	job = inodes_ref(t, p);
	free(p);
	assert_true(job != jobs && job > 1);
	/* the same path is the same node */
	assert_int_equal(inodes_ref(t, "/jobs"), jobs);
	assert_int_equal(inodes_find(t, "/jobs/42"), job);
	assert_int_equal(inodes_find(t, "/jobs/43"), 0);
	assert_int_equal(inodes_path(t, 9999, &p), -ENOENT);
	assert_null(p);
	assert_int_equal(inodes_child(t, 9999, "x", &p), -ENOENT);
	assert_int_equal(inodes_count(t), 3);
	inodes_free(t);
}

static void test_forget_counts_lookups(void **state)
{
	struct inodes *t = table();
	uint64_t a = inodes_ref(t, "/a");
	char *p = NULL;

	(void)state;
	assert_int_equal(inodes_ref(t, "/a"), a);
	assert_int_equal(inodes_ref(t, "/a"), a);
	inodes_forget(t, a, 2); /* one reference left */
	assert_path(t, a, "/a");
	assert_int_equal(inodes_find(t, "/a"), a);
	inodes_forget(t, a, 1);
	assert_int_equal(inodes_path(t, a, &p), -ENOENT);
	assert_int_equal(inodes_find(t, "/a"), 0);
	/* a new node for the path: a new nodeid, never a reused one */
	assert_true(inodes_ref(t, "/a") > a);
	/* the root is never forgotten */
	inodes_forget(t, 1, 100);
	assert_path(t, 1, "/");
	inodes_free(t);
}

static void test_unhash_after_removal(void **state)
{
	struct inodes *t = table();
	uint64_t a = inodes_ref(t, "/jobs/1/x"), b;

	(void)state;
	inodes_unhash(t, "/jobs/1/x");
	/* the kernel still holds the old node by its id */
	assert_path(t, a, "/jobs/1/x");
	assert_int_equal(inodes_find(t, "/jobs/1/x"), 0);
	b = inodes_ref(t, "/jobs/1/x");
	assert_true(b != a);
	inodes_forget(t, a, 1);
	assert_int_equal(inodes_find(t, "/jobs/1/x"), b);
	assert_path(t, b, "/jobs/1/x");
	inodes_free(t);
}

static void test_dir_digest(void **state)
{
	struct inodes *t = table();
	uint64_t d = inodes_ref(t, "/jobs");

	(void)state;
	/* nothing handed out yet */
	assert_false(inodes_dir_same(t, d, 7, 1000, 3000, 0));
	assert_true(inodes_dir_same(t, d, 7, 1500, 3000, 0));
	/* the age counts from when the kernel took it, not from the last
	 * opendir that let it keep it */
	assert_true(inodes_dir_same(t, d, 7, 3999, 3000, 0));
	assert_false(inodes_dir_same(t, d, 7, 4000, 3000, 0)); /* timed out */
	assert_true(
		inodes_dir_same(t, d, 7, 4100, 3000, 0)); /* taken at 4000 */
	assert_false(inodes_dir_same(t, d, 8, 4200, 3000, 0)); /* changed */
	assert_true(inodes_dir_same(t, d, 8, 4300, 3000, 0));
	inodes_dir_forget(t, d);
	assert_false(inodes_dir_same(t, d, 8, 4400, 3000, 0));
	assert_false(inodes_dir_same(t, 9999, 8, 4400, 3000, 0)); /* unknown */
	inodes_free(t);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* what the freshness ticker asks: the nodes held at and below
 * /jobs/<id>, not those of /jobs/<id>0 nor /jobs itself */
static void test_invalidate_under(void **state)
{
	struct inodes *t = table();
	uint64_t jobs = inodes_ref(t, "/jobs");
	uint64_t j1 = inodes_ref(t, "/jobs/1");
	uint64_t a = inodes_ref(t, "/jobs/1/pipelines");
	uint64_t b = inodes_ref(t, "/jobs/1/pipelines/1/checkpoints/3/x.ser");
	uint64_t j10 = inodes_ref(t, "/jobs/10");
	uint64_t c = inodes_ref(t, "/jobs/10/status");
	uint64_t j2 = inodes_ref(t, "/jobs/2");
	const char *tops[] = {"/jobs/1", "/by-state/RUNNING", "/jobs/2/x"};
	uint64_t want[] = {j1, a, b}, *ids = NULL;
	uint64_t e0 = inodes_epoch(t);
	size_t n = 0;

	(void)state;
	(void)jobs;
	(void)j2;
	assert_false(inodes_dir_same(t, a, 5, 100, 60000, e0));
	assert_false(inodes_dir_same(t, c, 5, 100, 60000, e0));
	assert_true(inodes_dir_valid(t, a, 200, 60000));
	assert_false(inodes_dir_valid(t, a, 60100, 60000)); /* timed out */
	assert_int_equal(inodes_invalidate_under(t, tops, 3, &ids, &n), 0);
	assert_int_equal(n, 3);
	qsort(ids, n, sizeof(*ids), cmp_u64);
	qsort(want, 3, sizeof(*want), cmp_u64);
	assert_memory_equal(ids, want, sizeof(want));
	free(ids);
	assert_true(inodes_epoch(t) != e0);
	/* the invalidated listing is no longer the kernel's; the other is */
	assert_false(inodes_dir_valid(t, a, 200, 60000));
	assert_true(inodes_dir_valid(t, c, 200, 60000));
	/* a listing taken before the invalidation is not recorded */
	assert_false(inodes_dir_same(t, a, 5, 300, 60000, e0));
	assert_false(inodes_dir_valid(t, a, 300, 60000));
	assert_false(inodes_dir_same(t, a, 5, 300, 60000, inodes_epoch(t)));
	assert_true(inodes_dir_valid(t, a, 300, 60000));
	/* forgotten nodes leave the index (ASan: no dangling link) */
	inodes_forget(t, b, 1);
	inodes_forget(t, j10, 1);
	inodes_forget(t, c, 1);
	assert_int_equal(inodes_invalidate_under(t, tops, 1, &ids, &n), 0);
	assert_int_equal(n, 2);
	free(ids);
	inodes_free(t);
}

/* the index survives the table's growth: every job's nodes found */
static void test_invalidate_after_growth(void **state)
{
	struct inodes *t = table();
	char p[64];
	uint64_t *ids = NULL;
	size_t n = 0;
	const char *top = "/jobs/77";

	(void)state;
	for (int i = 0; i < 3000; i++) {
		snprintf(p, sizeof(p), "/jobs/%d/f%d", i % 100, i);
		assert_true(inodes_ref(t, p) > 1);
	}
	assert_int_equal(inodes_invalidate_under(t, &top, 1, &ids, &n), 0);
	assert_int_equal(n, 30);
	for (size_t k = 0; k < n; k++) {
		char *path = NULL;

		assert_int_equal(inodes_path(t, ids[k], &path), 0);
		assert_int_equal(strncmp(path, "/jobs/77/", 9), 0);
		free(path);
	}
	free(ids);
	inodes_free(t);
}

static void test_long_name(void **state)
{
	struct inodes *t = table();
	char name[4100];
	char *p = NULL;

	(void)state;
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(inodes_child(t, 1, name, &p), -ENAMETOOLONG);
	assert_null(p);
	inodes_free(t);
}

static void test_many_nodes(void **state)
{
	struct inodes *t = table();
	static uint64_t ids[20000];
	char p[64];

	(void)state;
	for (int i = 0; i < 20000; i++) {
		snprintf(p, sizeof(p), "/jobs/%d", i);
		ids[i] = inodes_ref(t, p);
		assert_true(ids[i] > 1);
	}
	assert_int_equal(inodes_count(t), 20001);
	for (int i = 0; i < 20000; i++) {
		snprintf(p, sizeof(p), "/jobs/%d", i);
		assert_int_equal(inodes_find(t, p), ids[i]);
		assert_path(t, ids[i], p);
	}
	for (int i = 0; i < 20000; i += 2)
		inodes_forget(t, ids[i], 1);
	assert_int_equal(inodes_count(t), 10001);
	assert_int_equal(inodes_find(t, "/jobs/1"), ids[1]);
	assert_int_equal(inodes_find(t, "/jobs/2"), 0);
	inodes_free(t); /* frees what is left (ASan: no leak) */
}

/* A path 300 components deep, looked up one level at a time as the
 * kernel does, is built back from the parents; forgotten leaf first. */
static void test_deep_paths(void **state)
{
	struct inodes *t = table();
	static uint64_t ids[300];
	uint64_t dir = 1;
	char *p = NULL, *want = NULL;

	(void)state;
	for (int d = 0; d < 300; d++) {
		char name[16];

		snprintf(name, sizeof(name), "d%d", d % 7);
		assert_int_equal(inodes_child(t, dir, name, &p), 0);
		ids[d] = inodes_ref(t, p);
		assert_true(ids[d] > 1);
		if (d == 299)
			want = p;
		else
			free(p);
		dir = ids[d];
	}
	assert_path(t, ids[299], want);
	assert_int_equal(inodes_find(t, want), ids[299]);
	assert_int_equal(strlen(want), 300 * 3);
	assert_int_equal(inodes_count(t), 301);
	/* a sibling at the bottom: its own path, the same parents */
	assert_int_equal(inodes_child(t, ids[298], "x", &p), 0);
	assert_int_equal(strncmp(p, want, strlen(want) - 3), 0);
	assert_string_equal(p + strlen(want) - 3, "/x");
	free(p);
	for (int d = 299; d >= 0; d--)
		inodes_forget(t, ids[d], 1);
	assert_int_equal(inodes_count(t), 1);
	assert_int_equal(inodes_find(t, want), 0);
	free(want);
	inodes_free(t); /* ASan: nothing left behind */
}

/* A path handed to inodes_ref whole: the directories on the way are not
 * nodes the kernel holds (no nodeid to find), and go with the last child. */
static void test_parents_not_held(void **state)
{
	struct inodes *t = table();
	uint64_t a = inodes_ref(t, "/jobs/7/pipelines/1/x");
	char *p = NULL;

	(void)state;
	assert_int_equal(inodes_find(t, "/jobs/7/pipelines"), 0);
	assert_int_equal(inodes_count(t), 2);
	assert_path(t, a, "/jobs/7/pipelines/1/x");
	inodes_forget(t, a, 1);
	assert_int_equal(inodes_count(t), 1);
	assert_int_equal(inodes_path(t, a, &p), -ENOENT);
	inodes_free(t);
}

/* The kernel forgets a parent before its children (it should not, but a
 * table must not lose a child's path, nor hand out the parent's old
 * nodeid again): the child holds the parent. */
static void test_forget_parent_first(void **state)
{
	struct inodes *t = table();
	uint64_t a = inodes_ref(t, "/a"), b = inodes_ref(t, "/a/b"), a2, c;
	char *p = NULL;

	(void)state;
	inodes_forget(t, a, 1);
	assert_int_equal(inodes_path(t, a, &p), -ENOENT);
	assert_int_equal(inodes_child(t, a, "b", &p), -ENOENT);
	assert_int_equal(inodes_find(t, "/a"), 0);
	assert_path(t, b, "/a/b");
	assert_int_equal(inodes_find(t, "/a/b"), b);
	/* looked up again: a new nodeid for the same directory */
	a2 = inodes_ref(t, "/a");
	assert_true(a2 != a && a2 > 1);
	assert_int_equal(inodes_child(t, a2, "b", &p), 0);
	assert_string_equal(p, "/a/b");
	free(p);
	c = inodes_ref(t, "/a/c");
	inodes_forget(t, b, 1);
	assert_path(t, c, "/a/c");
	assert_path(t, a2, "/a");
	inodes_forget(t, a2, 1);
	inodes_forget(t, c, 1);
	assert_int_equal(inodes_count(t), 1);
	/* every slot free again: a new node never gets an old nodeid */
	a = inodes_ref(t, "/a");
	assert_true(a != a2 && a != b && a != c);
	inodes_free(t);
}

/* rmdir of a directory the kernel still holds, with a child it holds:
 * both keep their old path by nodeid; a new directory of that name gets
 * new nodes, and its children are not the old directory's. */
static void test_unhash_dir_relookup(void **state)
{
	struct inodes *t = table();
	uint64_t d = inodes_ref(t, "/jobs/1/d"),
		 x = inodes_ref(t, "/jobs/1/d/x");
	uint64_t d2, x2, *ids = NULL;
	const char *top = "/jobs/1";
	size_t n = 0;

	(void)state;
	inodes_unhash(t, "/jobs/1/d/x");
	inodes_unhash(t, "/jobs/1/d");
	assert_int_equal(inodes_find(t, "/jobs/1/d"), 0);
	assert_int_equal(inodes_find(t, "/jobs/1/d/x"), 0);
	assert_path(t, d, "/jobs/1/d");
	assert_path(t, x, "/jobs/1/d/x");
	d2 = inodes_ref(t, "/jobs/1/d");
	x2 = inodes_ref(t, "/jobs/1/d/x");
	assert_true(d2 != d && x2 != x);
	assert_int_equal(inodes_find(t, "/jobs/1/d/x"), x2);
	/* the old ones are still held below the job: invalidated too */
	assert_int_equal(inodes_invalidate_under(t, &top, 1, &ids, &n), 0);
	assert_int_equal(n, 4);
	free(ids);
	inodes_forget(t, x, 1);
	inodes_forget(t, d, 1);
	assert_path(t, x2, "/jobs/1/d/x");
	assert_int_equal(inodes_find(t, "/jobs/1/d"), d2);
	assert_int_equal(inodes_count(t), 3);
	inodes_free(t);
}

/* A directory's recorded listing goes with the node: forgotten and looked
 * up again (same slot while a child keeps it), it is not "the same". */
static void test_dir_record_forgotten(void **state)
{
	struct inodes *t = table();
	uint64_t d = inodes_ref(t, "/d"), x = inodes_ref(t, "/d/x"), d2;

	(void)state;
	assert_false(inodes_dir_same(t, d, 9, 100, 60000, 0));
	assert_true(inodes_dir_same(t, d, 9, 200, 60000, 0));
	inodes_forget(t, d, 1);
	d2 = inodes_ref(t, "/d");
	assert_false(inodes_dir_valid(t, d2, 300, 60000));
	assert_false(inodes_dir_same(t, d2, 9, 300, 60000, 0));
	assert_false(inodes_dir_same(t, d, 9, 300, 60000, 0)); /* stale id */
	inodes_forget(t, x, 1);
	inodes_free(t);
}

/* README "Memory": the nodes the kernel holds after walking the bench's
 * namespace (19-digit job ids, 2 pipelines x 5 checkpoints, a few files
 * each) cost at most 56 bytes a node, names and buckets included. */
static void test_bytes_per_node(void **state)
{
	static const char *const jf[] = {"job.json", "status", "metrics",
					 "deletable", "pipelines"};
	static const char *const cf[] = {"data", "info", "status"};
	struct inodes *t;
	size_t u0 = tu_heap_used(), u1, nodes;
	char p[160];

	(void)state;
	t = table();
	for (int j = 0; j < 2000; j++) {
		long long id = 1000000000000000000ll + j * 7919ll;

		for (size_t f = 0; f < sizeof(jf) / sizeof(*jf); f++) {
			snprintf(p, sizeof(p), "/jobs/%lld/%s", id, jf[f]);
			assert_true(inodes_ref(t, p) > 1);
		}
		for (int pl = 1; pl <= 2; pl++)
			for (int c = 1; c <= 5; c++)
				for (size_t f = 0; f < 3; f++) {
					snprintf(p, sizeof(p),
						 "/jobs/%lld/pipelines/%d/"
						 "checkpoints/%d/%s",
						 id, pl, c, cf[f]);
					assert_true(inodes_ref(t, p) > 1);
				}
	}
	u1 = tu_heap_used();
	nodes = 2000 * (1 + 5 + 2 * (2 + 5 * 4));
	print_message("%zu nodes: %zu bytes, %.1f a node\n", nodes, u1 - u0,
		      (double)(u1 - u0) / (double)nodes);
	assert_true(u1 - u0 <= 56 * nodes);
	inodes_free(t);
}

struct racer {
	struct inodes *t;
	int seed;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	char p[64];

	for (int i = 0; i < 20000; i++) {
		uint64_t id;

		snprintf(p, sizeof(p), "/jobs/%d", (i * 7 + r->seed) % 50);
		id = inodes_ref(r->t, p);
		if (id)
			inodes_forget(r->t, id, 1);
	}
	return NULL;
}

static void test_concurrent_lookup_forget(void **state)
{
	struct inodes *t = table();
	struct racer r[4];
	pthread_t th[4];

	(void)state;
	for (int i = 0; i < 4; i++) {
		r[i].t = t;
		r[i].seed = i;
		assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	/* every reference taken was given back: the root is left */
	assert_int_equal(inodes_count(t), 1);
	inodes_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_and_children),
		cmocka_unit_test(test_forget_counts_lookups),
		cmocka_unit_test(test_unhash_after_removal),
		cmocka_unit_test(test_dir_digest),
		cmocka_unit_test(test_invalidate_under),
		cmocka_unit_test(test_invalidate_after_growth),
		cmocka_unit_test(test_long_name),
		cmocka_unit_test(test_many_nodes),
		cmocka_unit_test(test_concurrent_lookup_forget),
		cmocka_unit_test(test_deep_paths),
		cmocka_unit_test(test_parents_not_held),
		cmocka_unit_test(test_forget_parent_first),
		cmocka_unit_test(test_unhash_dir_relookup),
		cmocka_unit_test(test_dir_record_forgotten),
		cmocka_unit_test(test_bytes_per_node),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
