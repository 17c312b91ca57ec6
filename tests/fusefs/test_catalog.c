/*
 * Unit tests for fusefs/model/catalog.c: classification, grouping, sums and
 * restore-point selection (from entries), and building over the fake
 * backend with paging and faults.
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

#include "model/catalog.h"
#include "fakes/fake_backend.h"
#include "fakes/testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define MS	 1000000LL /* ns per ms */

static struct catalog *build(const struct cat_entry *e, size_t n)
{
	struct catalog *c = NULL;

	assert_int_equal(catalog_from_entries(e, n, &c), 0);
	assert_non_null(c);
	return c;
}

/* The string pool holds each key once and each job id once (it held every
 * key twice): many jobs in both layouts, ids that prefix one another, jobs
 * only under savepoint/ — every id and key intact (ASan in make check). */
static void test_catalog_pool_ids(void **state)
{
	enum { NJ = 300 };
	struct cat_entry *e = calloc(3 * NJ, sizeof(*e));
	char(*keys)[64] = calloc(3 * NJ, 64);
	struct catalog *c;
	size_t n = 0;
	char id[24];

	(void)state;
	assert_non_null(e);
	assert_non_null(keys);
	for (int j = 1; j <= NJ; j++) {
		snprintf(keys[n], 64, "%d/%d-1-1-%d.ser", j * 10, 1000 + j, j);
		e[n].key = keys[n];
		n++;
		snprintf(keys[n], 64, "savepoint/%d/x/state-data", j * 10);
		e[n].key = keys[n];
		n++;
		snprintf(keys[n], 64, "savepoint/%d/y", j * 10 + 1);
		e[n].key = keys[n];
		n++;
	}
	assert_int_equal(catalog_from_entries(e, n, &c), 0);
	assert_int_equal(c->n_jobs, 2 * NJ);
	assert_int_equal(c->n_objs, 3 * NJ);
	for (int j = 1; j <= NJ; j++) {
		const struct cat_job *jb;

		snprintf(id, sizeof(id), "%d", j * 10);
		jb = catalog_find(c, id);
		assert_non_null(jb);
		assert_string_equal(jb->id, id);
		assert_int_equal(jb->n_objs, 2);
		assert_int_equal(jb->n_sp, 1);
		snprintf(id, sizeof(id), "%d", j * 10 + 1);
		jb = catalog_find(c, id);
		assert_non_null(jb);
		assert_string_equal(jb->id, id);
		assert_string_equal(jb->sp_objs[0]->name, "y");
	}
	catalog_put(c);
	free(keys);
	free(e);
}

static void test_catalog_real_layout_groups(void **state)
{
	static const struct cat_entry e[] = {
		{"10/1700000000300-5-1-3.ser", 30, 3 * MS},
		{"10/1700000000100-5-1-1.ser", 10, 1 * MS},
		{"10/1700000000200-7-1-2.ser", 20, 2 * MS},
		{"10/1700000000250-7-2-1.ser", 5, 4 * MS},
		{"9/1700000000000-1-1-1.ser", 1, 1 * MS},
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_job *j;
	const struct cat_pipe *p;
	const struct cat_ckpt *ck;

	(void)state;
	assert_int_equal(c->n_jobs, 2);
	assert_string_equal(c->jobs[0].id, "9"); /* numeric order */
	assert_string_equal(c->jobs[1].id, "10");
	assert_int_equal(c->n_objs, 5);
	assert_int_equal(c->bytes, 66);
	assert_int_equal(c->n_ignored, 0);
	assert_int_equal(c->refs, 1);

	j = catalog_find(c, "10");
	assert_non_null(j);
	assert_ptr_equal(j, &c->jobs[1]);
	assert_true(j->in_ckpt_dir);
	assert_false(j->in_sp_dir);
	assert_int_equal(j->n_pipes, 2);
	assert_int_equal(j->bytes, 65);
	assert_int_equal(j->n_objs, 4);
	assert_int_equal(j->n_tmp, 0);
	assert_int_equal(j->newest_mtime_ns, 4 * MS);
	assert_int_equal(j->newest_ckpt_ms, 1700000000300LL);

	p = cat_job_pipe(j, 1);
	assert_non_null(p);
	assert_int_equal(p->n_ckpts, 3);
	assert_int_equal(p->ckpts[0].id, 1);
	assert_int_equal(p->ckpts[1].id, 2);
	assert_int_equal(p->ckpts[2].id, 3);
	assert_int_equal(p->bytes, 60);
	assert_non_null(p->restore);
	assert_string_equal(p->restore->name, "1700000000300-5-1-3.ser");
	assert_string_equal(p->restore->key, "10/1700000000300-5-1-3.ser");
	assert_int_equal(p->restore->kind, CAT_REAL);
	assert_int_equal(p->restore_ckpt, 3);
	assert_true(p->restore->restore_point);
	ck = cat_pipe_ckpt(p, 3);
	assert_non_null(ck);
	assert_true(ck->restore_point);
	assert_false(ck->doc);
	assert_false(ck->only_tmp);
	assert_int_equal(ck->bytes, 30);
	assert_false(cat_pipe_ckpt(p, 1)->restore_point);
	assert_false(cat_pipe_ckpt(p, 1)->objs[0]->restore_point);
	assert_null(cat_pipe_ckpt(p, 4));
	assert_null(cat_job_pipe(j, 3));

	p = cat_job_pipe(j, 2);
	assert_non_null(p);
	assert_int_equal(p->restore_ckpt, 1);
	assert_null(catalog_find(c, "11"));
	assert_null(catalog_find(c, "010"));
	catalog_put(c);
}

/* the engine picks by write timestamp, not by checkpoint id */
static void test_catalog_restore_point_by_timestamp(void **state)
{
	static const struct cat_entry e[] = {
		/* checkpoint 9 written before checkpoint 2 (after a restore,
		 * ids restart from an older run's counter) */
		{"5/1000-1-1-9.ser", 1, 0},
		{"5/2000-1-1-2.ser", 1, 0},
		/* a newer in-flight tmp must not be the restore point */
		{"5/3000-1-1-3.sertmp", 1, 9 * MS},
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_pipe *p = cat_job_pipe(catalog_find(c, "5"), 1);

	(void)state;
	assert_non_null(p);
	assert_int_equal(p->n_ckpts, 3);
	assert_int_equal(p->restore_ckpt, 2);
	assert_string_equal(p->restore->name, "2000-1-1-2.ser");
	assert_false(cat_pipe_ckpt(p, 3)->restore_point);
	assert_true(cat_pipe_ckpt(p, 3)->only_tmp);
	assert_false(cat_pipe_ckpt(p, 3)->objs[0]->restore_point);
	assert_int_equal(catalog_find(c, "5")->n_tmp, 1);
	/* newest mtime counts the tmp; newest finished ckpt does not */
	assert_int_equal(catalog_find(c, "5")->newest_mtime_ns, 9 * MS);
	assert_int_equal(catalog_find(c, "5")->newest_ckpt_ms, 2000);
	catalog_put(c);
}

static void test_catalog_restore_point_tie_takes_greater_name(void **state)
{
	static const struct cat_entry e[] = {
		{"5/2000-100-1-4.ser", 1, 0},
		{"5/2000-99-1-5.ser", 1, 0}, /* "2000-99" > "2000-10" */
		{"5/1999-999-1-6.ser", 1, 0},
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_pipe *p = cat_job_pipe(catalog_find(c, "5"), 1);

	(void)state;
	assert_non_null(p->restore);
	assert_string_equal(p->restore->name, "2000-99-1-5.ser");
	assert_int_equal(p->restore_ckpt, 5);
	catalog_put(c);
}

static void test_catalog_only_tmp_has_no_restore_point(void **state)
{
	static const struct cat_entry e[] = {
		{"5/2000-1-1-1.sertmp", 1, 0},
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_pipe *p = cat_job_pipe(catalog_find(c, "5"), 1);

	(void)state;
	assert_null(p->restore);
	assert_int_equal(p->restore_ckpt, -1);
	assert_true(p->ckpts[0].only_tmp);
	assert_int_equal(catalog_find(c, "5")->newest_ckpt_ms, 0);
	catalog_put(c);
}

static void test_catalog_doc_layout(void **state)
{
	static const struct cat_entry e[] = {
		{"7/1/2/task-1/state-data", 10, 5 * MS},
		{"7/1/2/task-0/state-data", 11, 6 * MS},
		{"7/1/10/task-0/state-data", 12, 4 * MS},
		{"7/1/1/task-0/state-data", 13, 2 * MS},
		{"7/2/1/a/b/c", 1, 1 * MS},
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_job *j = catalog_find(c, "7");
	const struct cat_pipe *p;
	const struct cat_ckpt *ck;

	(void)state;
	assert_non_null(j);
	assert_int_equal(j->n_pipes, 2);
	assert_int_equal(j->n_strays, 0);
	p = cat_job_pipe(j, 1);
	assert_int_equal(p->n_ckpts, 3);
	assert_int_equal(p->ckpts[0].id, 1);
	assert_int_equal(p->ckpts[1].id, 2);
	assert_int_equal(p->ckpts[2].id, 10); /* numeric, not "10" < "2" */
	assert_int_equal(p->restore_ckpt, 10);
	assert_string_equal(p->restore->name, "task-0/state-data");
	ck = cat_pipe_ckpt(p, 2);
	assert_true(ck->doc);
	assert_int_equal(ck->n_objs, 2);
	assert_string_equal(ck->objs[0]->name, "task-0/state-data");
	assert_string_equal(ck->objs[1]->name, "task-1/state-data");
	assert_int_equal(ck->objs[0]->kind, CAT_DOC);
	assert_int_equal(ck->objs[0]->pipeline_id, 1);
	assert_int_equal(ck->objs[0]->checkpoint_id, 2);
	assert_int_equal(ck->bytes, 21);
	assert_int_equal(ck->newest_mtime_ns, 6 * MS);
	assert_false(ck->restore_point);
	assert_false(ck->objs[0]->restore_point);
	assert_true(cat_pipe_ckpt(p, 10)->restore_point);
	assert_true(cat_pipe_ckpt(p, 10)->objs[0]->restore_point);
	assert_string_equal(cat_job_pipe(j, 2)->restore->name, "a/b/c");
	assert_int_equal(j->newest_ckpt_ms, 6);
	catalog_put(c);
}

/* a pipeline with both layouts: the real rule wins */
static void test_catalog_mixed_layout_prefers_real(void **state)
{
	static const struct cat_entry e[] = {
		{"7/1/99/task-0/state-data", 1, 9 * MS},
		{"7/1000-1-1-3.ser", 1, 1 * MS},
		{"7/1000-1-1-99.ser", 1, 1 * MS}, /* same ckpt as doc data */
		{"7/900-1-1-4.ser", 1, 1 * MS},
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_pipe *p = cat_job_pipe(catalog_find(c, "7"), 1);
	const struct cat_ckpt *ck;

	(void)state;
	assert_int_equal(p->n_ckpts, 3);
	assert_string_equal(p->restore->name, "1000-1-1-99.ser");
	assert_int_equal(p->restore_ckpt, 99);
	ck = cat_pipe_ckpt(p, 99);
	assert_int_equal(ck->n_objs, 2);
	assert_false(ck->doc);
	/* each layout keeps its restore point (R2 protects both); the real
	 * one is what `restore` and `latest` name */
	assert_string_equal(ck->objs[0]->name, "1000-1-1-99.ser");
	assert_true(ck->objs[0]->restore_point);
	assert_string_equal(ck->objs[1]->name, "task-0/state-data");
	assert_true(ck->objs[1]->restore_point);
	catalog_put(c);
}

/* mixed layouts: an older documented checkpoint is superseded, the newest
 * documented one stays a restore point beside the real one */
static void test_catalog_mixed_layout_keeps_doc_restore(void **state)
{
	static const struct cat_entry e[] = {
		{"7/1/5/task-0/state-data", 1, 1 * MS},
		{"7/1/6/task-0/state-data", 1, 2 * MS},
		{"7/1000-1-1-3.ser", 1, 1 * MS},
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_pipe *p = cat_job_pipe(catalog_find(c, "7"), 1);

	(void)state;
	assert_int_equal(p->n_ckpts, 3);
	assert_string_equal(p->restore->name, "1000-1-1-3.ser");
	assert_int_equal(p->restore_ckpt, 3);
	assert_false(cat_pipe_ckpt(p, 5)->objs[0]->restore_point);
	assert_true(cat_pipe_ckpt(p, 6)->objs[0]->restore_point);
	assert_true(cat_pipe_ckpt(p, 6)->restore_point);
	assert_true(cat_pipe_ckpt(p, 3)->objs[0]->restore_point);
	catalog_put(c);
}

static void test_catalog_strays_and_ignored(void **state)
{
	static const struct cat_entry e[] = {
		{"8/notes.txt", 3, 0},	     /* stray */
		{"8/1-1-1-1.ser.bak", 3, 0}, /* stray */
		{"8/1/2", 3, 0},	     /* stray: no name below */
		{"8/01/2/x", 3, 0},	     /* stray: not canonical */
		{"8/1/x/y", 3, 0},	     /* stray */
		{"8/sub/1-1-1-1.ser", 3, 0}, /* stray */
		{"README", 1, 0},	     /* ignored: top file */
		{"abc/1-1-1-1.ser", 1, 0},   /* ignored: not a job */
		{"08/1-1-1-1.ser", 1, 0},    /* ignored: leading 0 */
		{"savepoint/x/1/y", 1, 0},   /* ignored */
		{"savepoint/12", 1, 0},	     /* ignored */
		{"12", 1, 0},		     /* ignored */
		{"8/", 0, 0},		     /* marker: skipped */
		{"savepoint/", 0, 0},	     /* marker: skipped */
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_job *j = catalog_find(c, "8");

	(void)state;
	assert_int_equal(c->n_jobs, 1);
	assert_non_null(j);
	assert_int_equal(j->n_pipes, 0);
	assert_int_equal(j->n_strays, 6);
	assert_true(j->in_ckpt_dir);
	assert_string_equal(j->strays[0]->name, "01/2/x");
	assert_string_equal(j->strays[1]->name, "1-1-1-1.ser.bak");
	assert_string_equal(j->strays[2]->name, "1/2");
	assert_string_equal(j->strays[3]->name, "1/x/y");
	assert_string_equal(j->strays[4]->name, "notes.txt");
	assert_string_equal(j->strays[5]->name, "sub/1-1-1-1.ser");
	assert_int_equal(j->strays[5]->kind, CAT_STRAY);
	assert_int_equal(j->bytes, 18);
	assert_int_equal(j->newest_ckpt_ms, 0);
	assert_int_equal(c->n_ignored, 6);
	catalog_put(c);
}

static void test_catalog_hostile_keys_ignored(void **state)
{
	static const struct cat_entry e[] = {
		{"9/../1-1-1-1.ser", 1, 0},
		{"9/./1-1-1-1.ser", 1, 0},
		{"../9/1-1-1-1.ser", 1, 0},
		{"9//1-1-1-1.ser", 1, 0},
		{"/9/1-1-1-1.ser", 1, 0},
		{"9/1-1-1-1.ser\n", 1, 0},
		{"9/a\x7f", 1, 0},
		{"9/a\tb", 1, 0},
		{"savepoint/9/..", 1, 0},
		{"", 1, 0},
		{NULL, 1, 0},
		{"9/1-1-1-1.ser", 1, 0},
		{"9/1-1-1-1.ser", 1, 0}, /* duplicate */
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_job *j = catalog_find(c, "9");

	(void)state;
	assert_int_equal(c->n_objs, 1);
	assert_int_equal(c->n_ignored, 12);
	assert_non_null(j);
	assert_int_equal(j->n_objs, 1);
	assert_int_equal(j->n_strays, 0);
	assert_string_equal(j->pipes[0].ckpts[0].objs[0]->key, "9/1-1-1-1.ser");
	catalog_put(c);
}

static void test_catalog_savepoint_only_job(void **state)
{
	static const struct cat_entry e[] = {
		{"savepoint/42/1700000000000/1/task-0/state-data", 5, 2 * MS},
		{"savepoint/42/7/_metadata.ser", 6, 3 * MS},
		{"savepoint/43/x", 1, 0},
		{"43/1-1-1-1.ser", 1, 0},
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_job *j = catalog_find(c, "42");

	(void)state;
	assert_int_equal(c->n_jobs, 2);
	assert_non_null(j);
	assert_false(j->in_ckpt_dir);
	assert_true(j->in_sp_dir);
	assert_int_equal(j->n_pipes, 0);
	assert_int_equal(j->n_sp, 2);
	assert_string_equal(j->sp_objs[0]->name,
			    "1700000000000/1/task-0/state-data");
	assert_string_equal(j->sp_objs[1]->name, "7/_metadata.ser");
	assert_int_equal(j->sp_objs[1]->kind, CAT_DOC_SP);
	assert_int_equal(j->bytes, 11);
	assert_int_equal(j->newest_mtime_ns, 3 * MS);
	j = catalog_find(c, "43");
	assert_true(j->in_ckpt_dir);
	assert_true(j->in_sp_dir);
	assert_int_equal(j->n_sp, 1);
	assert_int_equal(j->n_pipes, 1);
	catalog_put(c);
}

/* a documented name equal to a real one must not show twice */
static void test_catalog_doc_name_collision_becomes_stray(void **state)
{
	static const struct cat_entry e[] = {
		{"3/1-1-1-5.ser", 1, 0},
		{"3/1/5/1-1-1-5.ser", 2, 0},
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_job *j = catalog_find(c, "3");

	(void)state;
	assert_int_equal(j->pipes[0].ckpts[0].n_objs, 1);
	assert_int_equal(j->pipes[0].ckpts[0].objs[0]->kind, CAT_REAL);
	assert_int_equal(j->n_strays, 1);
	assert_string_equal(j->strays[0]->name, "1/5/1-1-1-5.ser");
	catalog_put(c);
}

/* .crc sidecars (Hadoop's checksum filesystem on file:///) belong to their
 * object's checkpoint, follow its restore-point status and never become
 * the restore point themselves, nor strays */
static void test_catalog_crc_sidecars(void **state)
{
	static const struct cat_entry e[] = {
		{"10/1700000000100-5-1-1.ser", 100, 1 * MS},
		{"10/.1700000000100-5-1-1.ser.crc", 12, 1 * MS},
		{"10/1700000000200-7-1-2.ser", 100, 2 * MS},
		{"10/.1700000000200-7-1-2.ser.crc", 12, 2 * MS},
		/* a sidecar written later than its object, as a tie breaker
		   it must never win */
		{"10/.1700000000300-9-1-3.sertmp.crc", 12, 3 * MS},
		{"10/1700000000300-9-1-3.sertmp", 100, 3 * MS},
	};
	struct catalog *c = build(e, NELEM(e));
	const struct cat_job *j = catalog_find(c, "10");
	const struct cat_pipe *p;
	const struct cat_ckpt *ck;

	(void)state;
	assert_non_null(j);
	assert_int_equal(j->n_strays, 0);
	assert_int_equal(j->n_objs, 6);
	assert_int_equal(j->bytes, 336);
	assert_int_equal(j->n_tmp, 2);
	p = cat_job_pipe(j, 1);
	assert_non_null(p);
	assert_int_equal(p->n_ckpts, 3);
	assert_int_equal(p->bytes, 336);
	assert_non_null(p->restore);
	assert_string_equal(p->restore->name, "1700000000200-7-1-2.ser");
	assert_int_equal(p->restore_ckpt, 2);
	ck = cat_pipe_ckpt(p, 2);
	assert_non_null(ck);
	assert_int_equal(ck->n_objs, 2);
	assert_int_equal(ck->bytes, 112);
	for (size_t i = 0; i < ck->n_objs; i++)
		assert_true(ck->objs[i]->restore_point);
	ck = cat_pipe_ckpt(p, 1);
	assert_non_null(ck);
	assert_int_equal(ck->n_objs, 2);
	for (size_t i = 0; i < ck->n_objs; i++)
		assert_false(ck->objs[i]->restore_point);
	/* the sidecar names its object */
	assert_string_equal(ck->objs[0]->name, ".1700000000100-5-1-1.ser.crc");
	assert_ptr_equal(ck->objs[0]->of, ck->objs[1]);
	assert_null(ck->objs[1]->of);
	ck = cat_pipe_ckpt(p, 3);
	assert_non_null(ck);
	assert_true(ck->only_tmp);
	catalog_put(c);
}

static void test_catalog_empty_and_refcount(void **state)
{
	struct catalog *c = build(NULL, 0);

	(void)state;
	assert_int_equal(c->n_jobs, 0);
	assert_null(catalog_find(c, "1"));
	assert_ptr_equal(catalog_get(c), c);
	assert_int_equal(c->refs, 2);
	catalog_put(c);
	assert_int_equal(c->refs, 1);
	catalog_put(c);
	catalog_put(NULL);
	assert_null(catalog_get(NULL));
}

/* ---- over the fake backend */

static struct backend *fake_with_tree(void)
{
	struct backend *be = NULL;

	assert_int_equal(fake_be_open(&be), 0);
	assert_int_equal(fake_be_add_str(be, "11/1000-1-1-1.ser", "a", 1), 0);
	assert_int_equal(fake_be_add_str(be, "11/2000-1-1-2.ser", "bb", 2), 0);
	assert_int_equal(fake_be_add_str(be, "11/2001-1-2-2.sertmp", "c", 3),
			 0);
	assert_int_equal(fake_be_add_str(be, "12/1/1/t/state-data", "dd", 4),
			 0);
	assert_int_equal(
		fake_be_add_str(be, "savepoint/11/77/1/t/state-data", "e", 5),
		0);
	assert_int_equal(fake_be_add_str(be, "savepoint/13/x", "f", 6), 0);
	assert_int_equal(fake_be_add_str(be, "other/file", "g", 7), 0);
	return be;
}

static void test_catalog_build_paged(void **state)
{
	struct backend *be = fake_with_tree();
	struct catalog *c = NULL;
	const struct cat_job *j;

	(void)state;
	fake_be_set_page_size(be, 2);
	assert_int_equal(catalog_build(be, &c), 0);
	/* 7 files at 2 per page: 4 pages */
	assert_int_equal(fake_be_calls(be, FAKE_LIST), 4);
	assert_int_equal(c->n_jobs, 3);
	assert_int_equal(c->n_objs, 6);
	assert_int_equal(c->n_ignored, 1);
	j = catalog_find(c, "11");
	assert_int_equal(j->n_pipes, 2);
	assert_int_equal(j->n_sp, 1);
	assert_int_equal(j->n_tmp, 1);
	assert_int_equal(j->bytes, 5);
	assert_int_equal(j->newest_mtime_ns, 5);
	assert_string_equal(cat_job_pipe(j, 1)->restore->key,
			    "11/2000-1-1-2.ser");
	assert_null(cat_job_pipe(j, 2)->restore);
	assert_int_equal(cat_job_pipe(catalog_find(c, "12"), 1)->restore_ckpt,
			 1);
	assert_false(catalog_find(c, "13")->in_ckpt_dir);
	catalog_put(c);
	be_close(be);
}

static void test_catalog_build_errors(void **state)
{
	struct backend *be = fake_with_tree();
	struct catalog *c = NULL;

	(void)state;
	fake_be_set_page_size(be, 3);
	/* a failing listing fails the build, with its errno */
	assert_int_equal(fake_be_fail(be, FAKE_LIST, "", -EIO), 0);
	assert_int_equal(catalog_build(be, &c), -EIO);
	assert_null(c);
	fake_be_clear_faults(be);
	/* a namespace that does not exist yet is empty */
	assert_int_equal(fake_be_fail(be, FAKE_LIST, "", -ENOENT), 0);
	assert_int_equal(catalog_build(be, &c), 0);
	assert_int_equal(c->n_jobs, 0);
	catalog_put(c);
	be_close(be);
}

static void test_catalog_build_job(void **state)
{
	struct backend *be = fake_with_tree();
	struct catalog *c = NULL;
	const struct cat_job *j;

	(void)state;
	fake_be_set_page_size(be, 1);
	assert_int_equal(catalog_build_job(be, "11", &c), 0);
	assert_int_equal(c->n_jobs, 1);
	j = catalog_find(c, "11");
	assert_non_null(j);
	assert_int_equal(j->n_objs, 4);
	assert_int_equal(j->n_sp, 1);
	assert_string_equal(j->sp_objs[0]->key,
			    "savepoint/11/77/1/t/state-data");
	assert_string_equal(cat_job_pipe(j, 1)->restore->key,
			    "11/2000-1-1-2.ser");
	catalog_put(c);

	/* savepoint-only job: the missing <jobId>/ is fine */
	assert_int_equal(catalog_build_job(be, "13", &c), 0);
	assert_int_equal(catalog_find(c, "13")->n_sp, 1);
	catalog_put(c);
	/* nothing at all */
	assert_int_equal(catalog_build_job(be, "14", &c), 0);
	assert_int_equal(c->n_jobs, 0);
	catalog_put(c);

	assert_int_equal(catalog_build_job(be, "../11", &c), -EINVAL);
	assert_int_equal(catalog_build_job(be, "011", &c), -EINVAL);
	assert_int_equal(fake_be_fail(be, FAKE_LIST, "savepoint/11", -EIO), 0);
	assert_int_equal(catalog_build_job(be, "11", &c), -EIO);
	assert_null(c);
	be_close(be);
}

/* ---- catalog_remove_keys: the oracle is a catalog built afresh */

static void assert_same_obj(const struct cat_obj *a, const struct cat_obj *b)
{
	assert_string_equal(a->key, b->key);
	assert_string_equal(a->name, b->name);
	assert_int_equal(a->size, b->size);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->restore_point, b->restore_point);
	assert_int_equal(a->of == NULL, b->of == NULL);
	if (a->of)
		assert_string_equal(a->of->key, b->of->key);
}

static void assert_same_catalog(const struct catalog *a,
				const struct catalog *b)
{
	assert_int_equal(a->n_jobs, b->n_jobs);
	assert_int_equal(a->n_objs, b->n_objs);
	assert_int_equal(a->bytes, b->bytes);
	for (size_t i = 0; i < a->n_jobs; i++) {
		const struct cat_job *x = &a->jobs[i], *y = &b->jobs[i];

		assert_string_equal(x->id, y->id);
		assert_ptr_equal(catalog_find(a, x->id), x);
		assert_int_equal(x->n_pipes, y->n_pipes);
		assert_int_equal(x->n_sp, y->n_sp);
		assert_int_equal(x->n_strays, y->n_strays);
		assert_int_equal(x->bytes, y->bytes);
		assert_int_equal(x->n_objs, y->n_objs);
		assert_int_equal(x->n_tmp, y->n_tmp);
		assert_int_equal(x->in_ckpt_dir, y->in_ckpt_dir);
		assert_int_equal(x->in_sp_dir, y->in_sp_dir);
		assert_int_equal(x->newest_mtime_ns, y->newest_mtime_ns);
		assert_int_equal(x->newest_ckpt_ms, y->newest_ckpt_ms);
		for (size_t j = 0; j < x->n_pipes; j++) {
			const struct cat_pipe *p = &x->pipes[j],
					      *q = &y->pipes[j];

			assert_int_equal(p->id, q->id);
			assert_int_equal(p->n_ckpts, q->n_ckpts);
			assert_int_equal(p->restore_ckpt, q->restore_ckpt);
			assert_int_equal(p->bytes, q->bytes);
			assert_int_equal(p->restore == NULL,
					 q->restore == NULL);
			if (p->restore)
				assert_string_equal(p->restore->key,
						    q->restore->key);
			for (size_t k = 0; k < p->n_ckpts; k++) {
				assert_int_equal(p->ckpts[k].id,
						 q->ckpts[k].id);
				assert_int_equal(p->ckpts[k].n_objs,
						 q->ckpts[k].n_objs);
				assert_int_equal(p->ckpts[k].restore_point,
						 q->ckpts[k].restore_point);
				assert_int_equal(p->ckpts[k].doc,
						 q->ckpts[k].doc);
				for (size_t m = 0; m < p->ckpts[k].n_objs; m++)
					assert_same_obj(p->ckpts[k].objs[m],
							q->ckpts[k].objs[m]);
			}
		}
		for (size_t j = 0; j < x->n_sp; j++)
			assert_same_obj(x->sp_objs[j], y->sp_objs[j]);
		for (size_t j = 0; j < x->n_strays; j++)
			assert_same_obj(x->strays[j], y->strays[j]);
	}
}

static void test_catalog_remove_keys_matches_a_fresh_build(void **state)
{
	static const struct cat_entry all[] = {
		{"10/1700000000100-5-1-1.ser", 10, 1 * MS},
		{"10/1700000000200-7-1-2.ser", 20, 2 * MS},
		{"10/1700000000300-5-1-3.ser", 30, 3 * MS},
		{"10/.1700000000300-5-1-3.ser.crc", 1, 3 * MS},
		{"10/1700000000400-5-1-4.sertmp", 3, 5 * MS},
		{"10/1700000000250-7-2-1.ser", 5, 4 * MS},
		{"10/notes.txt", 1, 1 * MS},
		{"11/1/7/task-0/state-data", 7, 1 * MS},
		{"11/1/8/task-0/state-data", 8, 2 * MS},
		{"11/1/8/task-1/state-data", 9, 2 * MS},
		{"savepoint/11/1700/1/task-0/state-data", 4, 1 * MS},
		{"12/1700000000000-1-1-1.ser", 1, 1 * MS},
		{"9/x/y", 2, 1 * MS},
	};
	/* the order of the deletions: restore points first, so the next one
	 * must be chosen; every job emptied in the end */
	static const size_t order[] = {2, 7, 8,	 0, 12, 4, 9,
				       3, 5, 11, 1, 6,	10};
	bool gone[NELEM(all)] = {false};
	struct catalog *c = build(all, NELEM(all)), *d;

	(void)state;
	for (size_t step = 0; step < NELEM(order); step++) {
		struct cat_entry left[NELEM(all)];
		const char *key = all[order[step]].key;
		struct catalog *fresh;
		size_t n = 0;

		gone[order[step]] = true;
		for (size_t i = 0; i < NELEM(all); i++)
			if (!gone[i])
				left[n++] = all[i];
		assert_int_equal(catalog_remove_keys(c, &key, 1, &d), 0);
		catalog_put(c); /* the derived one must not need it */
		fresh = build(left, n);
		assert_same_catalog(d, fresh);
		catalog_put(fresh);
		c = d;
	}
	assert_int_equal(c->n_jobs, 0);
	/* a key the catalog does not hold: the same catalog */
	{
		const char *none = "10/nothing.ser";

		assert_int_equal(catalog_remove_keys(c, &none, 1, &d), 0);
		assert_ptr_equal(d, c);
		catalog_put(d);
	}
	catalog_put(c);
}

static void test_catalog_remove_keys_shares_other_jobs(void **state)
{
	static const struct cat_entry e[] = {
		{"10/1700000000100-5-1-1.ser", 10, 1 * MS},
		{"10/1700000000200-5-1-2.ser", 10, 2 * MS},
		{"20/1700000000100-5-1-1.ser", 10, 1 * MS},
	};
	const char *k[] = {"10/1700000000100-5-1-1.ser",
			   "10/1700000000200-5-1-2.ser"};
	struct catalog *c = build(e, NELEM(e)), *d;

	(void)state;
	assert_int_equal(catalog_remove_keys(c, k, 1, &d), 0);
	/* job 20 untouched: its arrays are the listed catalog's */
	assert_ptr_equal(catalog_find(d, "20")->pipes,
			 catalog_find(c, "20")->pipes);
	assert_ptr_not_equal(catalog_find(d, "10")->pipes,
			     catalog_find(c, "10")->pipes);
	catalog_put(c);
	/* both keys at once, from a derived catalog */
	c = d;
	assert_int_equal(catalog_remove_keys(c, k, 2, &d), 0);
	catalog_put(c);
	assert_null(catalog_find(d, "10"));
	assert_non_null(catalog_find(d, "20"));
	assert_int_equal(d->n_objs, 1);
	assert_int_equal(d->bytes, 10);
	catalog_put(d);
}

/* ---- memory (README "Memory") */

/* The bench's namespace (scripts/genstate.py): NJ jobs of 19-digit ids x
 * 2 pipelines x 5 checkpoints, one .ser each. */
#define BIG_JOBS 10000
#define BIG_OBJS (BIG_JOBS * 10)

struct big {
	struct cat_entry e[BIG_OBJS];
	char keys[BIG_OBJS][96];
};

static struct big *big_new(void)
{
	struct big *b = calloc(1, sizeof(*b));
	size_t k = 0;

	assert_non_null(b);
	for (int j = 0; j < BIG_JOBS; j++)
		for (int p = 1; p <= 2; p++)
			for (int c = 1; c <= 5; c++) {
				snprintf(b->keys[k], sizeof(b->keys[k]),
					 "%llu/%lld-%d-%d-%d.ser",
					 900000000000000000ULL +
						 (unsigned long long)j * 7919,
					 1764600000000LL + c * 1000, 100 + c, p,
					 c);
				b->e[k].key = b->keys[k];
				b->e[k].size = 1000 + (uint64_t)c;
				b->e[k].mtime_ns = c * MS;
				k++;
			}
	return b;
}

/* A catalog of 100,000 objects costs at most 240 bytes an object, all
 * included (272 before a job was one allocation and the object 104 bytes:
 * one array per checkpoint, 120-byte objects). */
static void test_catalog_bytes_per_object(void **state)
{
	struct big *b = big_new();
	struct catalog *c;
	size_t u0, u1;

	(void)state;
	u0 = tu_heap_used();
	assert_int_equal(catalog_from_entries(b->e, BIG_OBJS, &c), 0);
	u1 = tu_heap_used();
	assert_int_equal(c->n_objs, BIG_OBJS);
	assert_int_equal(c->n_jobs, BIG_JOBS);
	print_message("catalog: %.1f bytes per object\n",
		      (double)(u1 - u0) / BIG_OBJS);
	assert_true(u1 - u0 <= (size_t)240 * BIG_OBJS);
	catalog_put(c);
	free(b);
}

/* A relisting shares every unchanged job with the catalog it replaces:
 * while both are alive the new one costs at most 32 bytes an object (its
 * job table), not a second catalog; the changed jobs are made afresh and
 * the result is the catalog a fresh build gives. */
static void test_catalog_rebuild_shares_unchanged_jobs(void **state)
{
	struct big *b = big_new();
	struct catalog *c, *d, *fresh;
	const char *changed = "900000000000007919"; /* job 1 */
	struct cat_entry *e2 = calloc(BIG_OBJS + 1, sizeof(*e2));
	size_t u0, u1;

	(void)state;
	assert_non_null(e2);
	assert_int_equal(catalog_from_entries(b->e, BIG_OBJS, &c), 0);
	/* the same listing: nothing but the job table is new */
	u0 = tu_heap_used();
	assert_int_equal(catalog_from_entries_prev(b->e, BIG_OBJS, c, &d), 0);
	u1 = tu_heap_used();
	print_message("rebuild: %.1f bytes per object\n",
		      (double)(u1 - u0) / BIG_OBJS);
	assert_true(u1 - u0 <= (size_t)32 * BIG_OBJS);
	assert_int_equal(d->n_shared, BIG_JOBS);
	assert_ptr_equal(catalog_find(d, changed)->pipes,
			 catalog_find(c, changed)->pipes);
	catalog_put(d);
	/* job 1 grows a checkpoint, job 2's first object changes size */
	memcpy(e2, b->e, BIG_OBJS * sizeof(*e2));
	e2[BIG_OBJS] = (struct cat_entry){
		"900000000000007919/1764600009000-1-1-9.ser", 5, 9 * MS};
	e2[20].size++;
	assert_int_equal(catalog_from_entries_prev(e2, BIG_OBJS + 1, c, &d), 0);
	assert_int_equal(d->n_shared, BIG_JOBS - 2);
	assert_ptr_not_equal(catalog_find(d, changed)->pipes,
			     catalog_find(c, changed)->pipes);
	assert_ptr_equal(catalog_find(d, "900000000000023757")->pipes,
			 catalog_find(c, "900000000000023757")->pipes);
	catalog_put(c); /* d must not need it */
	fresh = build(e2, BIG_OBJS + 1);
	assert_same_catalog(d, fresh);
	assert_int_equal(catalog_find(d, changed)->pipes[0].restore_ckpt, 9);
	assert_non_null(catalog_find_key(d, e2[BIG_OBJS].key));
	assert_null(catalog_find_key(d, "900000000000007919/nothing"));
	catalog_put(fresh);
	catalog_put(d);
	free(e2);
	free(b);
}

/* A relisting over a backend shares the jobs that did not change, a job
 * listed in two directories (<jobId>/ and savepoint/<jobId>/) included,
 * and remakes the one that did. */
static void test_catalog_rebuild_over_a_listing(void **state)
{
	struct backend *be = fake_with_tree();
	struct catalog *c = NULL, *d = NULL, *e = NULL, *fresh = NULL;

	(void)state;
	fake_be_set_page_size(be, 2);
	assert_int_equal(catalog_build(be, &c), 0);
	assert_int_equal(c->n_shared, 0);
	assert_int_equal(catalog_rebuild(be, c, &d), 0);
	assert_int_equal(d->n_jobs, 3);
	assert_int_equal(d->n_shared, 3);
	assert_int_equal(d->n_ignored, c->n_ignored);
	assert_ptr_equal(catalog_find(d, "11")->pipes,
			 catalog_find(c, "11")->pipes);
	assert_ptr_equal(catalog_find(d, "11")->sp_objs,
			 catalog_find(c, "11")->sp_objs);
	catalog_put(c);
	assert_int_equal(fake_be_add_str(be, "savepoint/11/78/x", "h", 8), 0);
	assert_int_equal(catalog_rebuild(be, d, &e), 0);
	assert_int_equal(e->n_shared, 2);
	assert_ptr_not_equal(catalog_find(e, "11")->sp_objs,
			     catalog_find(d, "11")->sp_objs);
	assert_ptr_equal(catalog_find(e, "12")->pipes,
			 catalog_find(d, "12")->pipes);
	catalog_put(d);
	assert_int_equal(catalog_build(be, &fresh), 0);
	assert_same_catalog(e, fresh);
	assert_int_equal(e->n_ignored, fresh->n_ignored);
	assert_int_equal(catalog_find(e, "11")->n_sp, 2);
	catalog_put(fresh);
	catalog_put(e);
	be_close(be);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog_real_layout_groups),
		cmocka_unit_test(test_catalog_pool_ids),
		cmocka_unit_test(test_catalog_restore_point_by_timestamp),
		cmocka_unit_test(
			test_catalog_restore_point_tie_takes_greater_name),
		cmocka_unit_test(test_catalog_only_tmp_has_no_restore_point),
		cmocka_unit_test(test_catalog_doc_layout),
		cmocka_unit_test(test_catalog_mixed_layout_prefers_real),
		cmocka_unit_test(test_catalog_mixed_layout_keeps_doc_restore),
		cmocka_unit_test(test_catalog_strays_and_ignored),
		cmocka_unit_test(test_catalog_hostile_keys_ignored),
		cmocka_unit_test(test_catalog_savepoint_only_job),
		cmocka_unit_test(test_catalog_doc_name_collision_becomes_stray),
		cmocka_unit_test(test_catalog_crc_sidecars),
		cmocka_unit_test(test_catalog_empty_and_refcount),
		cmocka_unit_test(test_catalog_build_paged),
		cmocka_unit_test(test_catalog_build_errors),
		cmocka_unit_test(test_catalog_build_job),
		cmocka_unit_test(
			test_catalog_remove_keys_matches_a_fresh_build),
		cmocka_unit_test(test_catalog_remove_keys_shares_other_jobs),
		cmocka_unit_test(test_catalog_bytes_per_object),
		cmocka_unit_test(test_catalog_rebuild_shares_unchanged_jobs),
		cmocka_unit_test(test_catalog_rebuild_over_a_listing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
