/*
 * Fuzz target for fusefs/model/layout.c and fusefs/model/catalog.c: the input,
 * split on '\n', is a listing of keys.  Every line goes through
 * layout_parse_real(); all lines together through catalog_from_entries(),
 * whose tree is then walked and checked against its invariants; then the
 * same listing (every job shared) and the listing without its first half
 * (odd jobs rebuilt) again, sharing with the first catalog, which is
 * dropped before the second is walked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                          \
	do {                              \
		if (!(x))                 \
			__builtin_trap(); \
	} while (0)

static void check_obj(const struct cat_obj *o)
{
	size_t kl = strlen(o->key), nl = strlen(o->name);

	/* the name is a non-empty suffix of the key */
	CHECK(nl > 0 && nl < kl && o->name == o->key + (kl - nl));
	CHECK(o->name[-1] == '/');
}

static void walk(const struct catalog *c)
{
	size_t i, j, k, m, n = 0;

	for (i = 0; i < c->n_jobs; i++) {
		const struct cat_job *jb = &c->jobs[i];

		CHECK(jobid_canonical(jb->id, strlen(jb->id)));
		CHECK(catalog_find(c, jb->id) == jb);
		if (i)
			CHECK(jobid_cmp(c->jobs[i - 1].id, jb->id) < 0);
		for (j = 0; j < jb->n_pipes; j++) {
			const struct cat_pipe *p = &jb->pipes[j];

			CHECK(cat_job_pipe(jb, p->id) == p);
			CHECK(!p->restore || p->restore->restore_point);
			CHECK(!p->restore ||
			      cat_pipe_ckpt(p, p->restore_ckpt)->restore_point);
			for (k = 0; k < p->n_ckpts; k++) {
				const struct cat_ckpt *ck = &p->ckpts[k];

				CHECK(cat_pipe_ckpt(p, ck->id) == ck);
				CHECK(ck->n_objs > 0);
				for (m = 0; m < ck->n_objs; m++) {
					check_obj(ck->objs[m]);
					CHECK(ck->objs[m]->checkpoint_id ==
					      ck->id);
					if (m)
						CHECK(strcmp(ck->objs[m - 1]
								     ->name,
							     ck->objs[m]
								     ->name) <
						      0);
					n++;
				}
			}
		}
		for (m = 0; m < jb->n_sp; m++, n++)
			check_obj(jb->sp_objs[m]);
		for (m = 0; m < jb->n_strays; m++, n++)
			check_obj(jb->strays[m]);
	}
	CHECK(n == c->n_objs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cat_entry *ents;
	struct catalog *c = NULL;
	struct real_name rn;
	char *text, *p, *nl;
	size_t n = 0, cap = size / 2 + 1;

	text = malloc(size + 1);
	ents = calloc(cap, sizeof(*ents));
	if (!text || !ents)
		goto out;
	memcpy(text, data, size);
	text[size] = '\0';
	for (p = text; p && n < cap; p = nl) {
		nl = strchr(p, '\n');
		if (nl)
			*nl++ = '\0';
		layout_parse_real(p, &rn);
		ents[n] = (struct cat_entry){
			.key = p,
			.size = n * 7,
			.mtime_ns = (int64_t)(n * 1000003) - 50,
		};
		n++;
	}
	if (catalog_from_entries(ents, n, &c) == 0) {
		struct catalog *d = NULL;

		walk(c);
		CHECK(catalog_get(c) == c);
		catalog_put(c);
		if (catalog_from_entries_prev(ents, n, c, &d) == 0) {
			CHECK(d->n_shared == c->n_jobs);
			CHECK(d->n_jobs == c->n_jobs && d->n_objs == c->n_objs);
			catalog_put(d);
		}
		if (catalog_from_entries_prev(ents + n / 2, n - n / 2, c, &d) ==
		    0) {
			catalog_put(c);
			c = NULL;
			walk(d);
			catalog_put(d);
		}
		catalog_put(c);
	}
out:
	free(ents);
	free(text);
	return 0;
}
