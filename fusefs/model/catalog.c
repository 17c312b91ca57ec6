/*
 * catalog — one recursive listing of the checkpoint namespace, classified
 * and grouped into jobs / pipelines / checkpoints (catalog.h).
 *
 * Building: the keys are validated (hostile ones dropped and counted),
 * sorted and de-duplicated, copied into one string pool, classified, then
 * sorted by (job, class, pipeline, checkpoint, name) so that every group is
 * a contiguous run; the tree's arrays are cut from those runs.  After that
 * the catalog is immutable; only `refs` changes (atomics).
 */
#include "model/catalog.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* classes, in the order a job's objects are sorted */
enum { CLS_PIPE = 0, CLS_SP = 1, CLS_STRAY = 2 };

/* The job id of an object (into its key, not terminated) and its class:
 * derived from the key and kind, so that the builder sorts the catalog's
 * own array and needs no second copy of every object. */
static const char *obj_job(const struct cat_obj *o, size_t *len)
{
	const char *j = o->kind == CAT_DOC_SP ? o->key + 10 : o->key;
	const char *e = strchr(j, '/');

	*len = e ? (size_t)(e - j) : strlen(j);
	return j;
}

static int obj_cls(const struct cat_obj *o)
{
	return o->kind == CAT_DOC_SP  ? CLS_SP
	       : o->kind == CAT_STRAY ? CLS_STRAY
				      : CLS_PIPE;
}

/* ---- key validation and classification */

/*
 * A key stfs may place in the tree: no control characters, no empty, "."
 * or ".." component.  Directory markers ("x/") are reported separately.
 */
static bool key_is_sane(const char *k)
{
	const unsigned char *p = (const unsigned char *)k;
	size_t clen = 0;
	const unsigned char *cstart = p;

	for (;; p++) {
		if (*p == '/' || *p == '\0') {
			if (clen == 0)
				return false;
			if (clen == 1 && cstart[0] == '.')
				return false;
			if (clen == 2 && cstart[0] == '.' && cstart[1] == '.')
				return false;
			if (*p == '\0')
				return true;
			clen = 0;
			cstart = p + 1;
			continue;
		}
		if (*p < 0x20 || *p == 0x7f)
			return false;
		clen++;
	}
}

/* canonical decimal (no sign, no leading zero unless "0"), <= max */
static bool canon_num(const char *s, size_t n, int64_t max, int64_t *out)
{
	int64_t v = 0;
	size_t i;

	if (n == 0 || n > 19 || (n > 1 && s[0] == '0'))
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, s[i] - '0', &v) || v > max)
			return false;
	}
	*out = v;
	return true;
}

/* rest below <jobId>/: "<pid>/<cid>/<name...>" */
static bool parse_doc(const char *rest, int32_t *pid, int64_t *cid,
		      const char **name)
{
	const char *s1 = strchr(rest, '/'), *s2;
	int64_t p, c;

	if (!s1)
		return false;
	s2 = strchr(s1 + 1, '/');
	if (!s2 || !s2[1])
		return false;
	if (!canon_num(rest, (size_t)(s1 - rest), INT32_MAX, &p) ||
	    !canon_num(s1 + 1, (size_t)(s2 - s1 - 1), INT64_MAX, &c))
		return false;
	*pid = (int32_t)p;
	*cid = c;
	*name = s2 + 1;
	return true;
}

/* classify `key` (already sane, in the pool) into *o; false: ignored */
static bool classify(char *key, struct cat_obj *o)
{
	char *s = strchr(key, '/'), *rest, *s2;
	size_t c0 = s ? (size_t)(s - key) : 0;
	const char *name;

	memset(o, 0, sizeof(*o));
	o->key = key;
	o->checkpoint_id = -1;
	o->pipeline_id = -1;
	if (!s)
		return false; /* a file at the top level */
	if (c0 == 9 && !memcmp(key, "savepoint", 9)) {
		rest = s + 1;
		s2 = strchr(rest, '/');
		if (!s2 || !jobid_canonical(rest, (size_t)(s2 - rest)))
			return false;
		o->kind = CAT_DOC_SP;
		o->name = s2 + 1;
		return true;
	}
	if (!jobid_canonical(key, c0))
		return false;
	rest = s + 1;
	if (!strchr(rest, '/') && layout_parse_real(rest, &o->rn) == 0) {
		o->kind = CAT_REAL;
		o->name = rest;
		o->pipeline_id = o->rn.pipeline_id;
		o->checkpoint_id = o->rn.checkpoint_id;
		return true;
	}
	if (parse_doc(rest, &o->pipeline_id, &o->checkpoint_id, &name)) {
		o->kind = CAT_DOC;
		o->name = (char *)(uintptr_t)name;
		return true;
	}
	o->kind = CAT_STRAY;
	o->name = rest;
	o->pipeline_id = -1;
	o->checkpoint_id = -1;
	return true;
}

static void make_stray(struct cat_obj *o)
{
	size_t jlen;

	obj_job(o, &jlen);
	o->kind = CAT_STRAY;
	o->name = o->key + jlen + 1;
	o->pipeline_id = -1;
	o->checkpoint_id = -1;
}

/* ---- sorting */

static int cmp_entry_key(const void *a, const void *b)
{
	const struct cat_entry *const *x = a, *const *y = b;

	return strcmp((*x)->key, (*y)->key);
}

static int cmp_job(const struct cat_obj *x, const struct cat_obj *y)
{
	size_t xl, yl;
	const char *xj = obj_job(x, &xl), *yj = obj_job(y, &yl);
	int c;

	if (xl != yl)
		return xl < yl ? -1 : 1;
	c = memcmp(xj, yj, xl);
	return (c > 0) - (c < 0);
}

static int cmp_obj(const void *a, const void *b)
{
	const struct cat_obj *x = a, *y = b;
	int c = cmp_job(x, y), xc, yc;

	if (c)
		return c;
	xc = obj_cls(x);
	yc = obj_cls(y);
	if (xc != yc)
		return xc < yc ? -1 : 1;
	if (xc == CLS_PIPE) {
		if (x->pipeline_id != y->pipeline_id)
			return x->pipeline_id < y->pipeline_id ? -1 : 1;
		if (x->checkpoint_id != y->checkpoint_id)
			return x->checkpoint_id < y->checkpoint_id ? -1 : 1;
	}
	return strcmp(x->name, y->name);
}

static bool same_ckpt(const struct cat_obj *x, const struct cat_obj *y)
{
	return !cmp_job(x, y) && obj_cls(x) == CLS_PIPE &&
	       obj_cls(y) == CLS_PIPE && x->pipeline_id == y->pipeline_id &&
	       x->checkpoint_id == y->checkpoint_id;
}

/* ---- freeing */

static void job_arrays_free(struct cat_job *jb)
{
	for (size_t j = 0; j < jb->n_pipes; j++) {
		for (size_t k = 0; k < jb->pipes[j].n_ckpts; k++)
			free(jb->pipes[j].ckpts[k].objs);
		free(jb->pipes[j].ckpts);
	}
	free(jb->pipes);
	free(jb->sp_objs);
	free(jb->strays);
}

/* a catalog of this many objects gives its memory back when freed */
#define CAT_TRIM_OBJS 4096

static void catalog_free(struct catalog *c)
{
	bool big = !c->base && c->n_objs >= CAT_TRIM_OBJS;
	size_t i;

	/* a derived catalog frees only the jobs it rebuilt */
	for (i = 0; i < c->n_jobs; i++)
		if (!c->base || (c->owned && c->owned[i]))
			job_arrays_free(&c->jobs[i]);
	for (i = 0; i < c->n_blocks; i++)
		free(c->blocks[i]);
	free(c->blocks);
	free(c->owned);
	free(c->jobs);
	free(c->objs);
	free(c->pool);
	catalog_put(c->base);
	free(c);
	if (big)
		malloc_trim(0); /* README "Memory": the old listing's pages */
}

struct catalog *catalog_get(struct catalog *c)
{
	if (c)
		__atomic_fetch_add(&c->refs, 1, __ATOMIC_RELAXED);
	return c;
}

void catalog_put(struct catalog *c)
{
	if (c && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0)
		catalog_free(c);
}

/* ---- grouping */

/* a ".<name>.crc" sidecar belongs to the object <name> of its checkpoint */
static void link_sidecars(struct cat_ckpt *ck)
{
	for (size_t i = 0; i < ck->n_objs; i++) {
		struct cat_obj *sc = ck->objs[i];
		size_t len;

		if (sc->kind != CAT_REAL || !sc->rn.crc)
			continue;
		len = strlen(sc->name) - 5; /* without "." and ".crc" */
		for (size_t k = 0; k < ck->n_objs; k++) {
			struct cat_obj *o = ck->objs[k];

			if (o->kind == CAT_REAL && !o->rn.crc &&
			    strlen(o->name) == len &&
			    !memcmp(o->name, sc->name + 1, len)) {
				sc->of = o;
				break;
			}
		}
	}
}

static int build_ckpt(struct cat_ckpt *ck, struct cat_obj *objs, size_t a,
		      size_t b)
{
	bool any_real = false, all_tmp = true;
	size_t i;

	ck->id = objs[a].checkpoint_id;
	ck->objs = calloc(b - a, sizeof(*ck->objs));
	if (!ck->objs)
		return -ENOMEM;
	ck->n_objs = b - a;
	ck->newest_mtime_ns = INT64_MIN;
	for (i = a; i < b; i++) {
		struct cat_obj *o = &objs[i];

		ck->objs[i - a] = o;
		ck->bytes += o->size;
		if (o->mtime_ns > ck->newest_mtime_ns)
			ck->newest_mtime_ns = o->mtime_ns;
		if (o->kind == CAT_REAL)
			any_real = true;
		if (o->kind != CAT_REAL || !o->rn.tmp)
			all_tmp = false;
	}
	ck->doc = !any_real;
	ck->only_tmp = all_tmp;
	link_sidecars(ck);
	return 0;
}

/* README "Deleting safely", R2: what the engine would load on -r for this
 * pipeline */
static void pick_restore(struct cat_pipe *p)
{
	struct cat_obj *best = NULL;
	struct cat_ckpt *best_ck = NULL;
	size_t i, k;

	p->restore = NULL;
	p->restore_ckpt = -1;
	for (i = 0; i < p->n_ckpts; i++) {
		struct cat_ckpt *ck = &p->ckpts[i];

		for (k = 0; k < ck->n_objs; k++) {
			struct cat_obj *o = ck->objs[k];

			if (o->kind != CAT_REAL || o->rn.tmp || o->rn.crc)
				continue;
			if (!best || o->rn.write_ts > best->rn.write_ts ||
			    (o->rn.write_ts == best->rn.write_ts &&
			     strcmp(o->name, best->name) > 0)) {
				best = o;
				best_ck = ck;
			}
		}
	}
	if (best) {
		best->restore_point = true;
		best_ck->restore_point = true;
		for (k = 0; k < best_ck->n_objs; k++)
			if (best_ck->objs[k]->of == best)
				best_ck->objs[k]->restore_point = true;
		p->restore = best;
		p->restore_ckpt = best_ck->id;
	}
	/* documented layout: the greatest checkpoint id holding doc data.
	 * In a pipeline with both layouts each keeps its restore point (R2
	 * protects both); `restore`/`latest` name the real one. */
	for (i = p->n_ckpts; i-- > 0;) {
		struct cat_ckpt *ck = &p->ckpts[i];
		bool doc = false;

		for (k = 0; k < ck->n_objs; k++) {
			struct cat_obj *o = ck->objs[k];

			if (o->kind != CAT_DOC)
				continue;
			o->restore_point = true;
			doc = true;
			if (!p->restore)
				p->restore = o;
		}
		if (doc) {
			ck->restore_point = true;
			if (p->restore_ckpt < 0)
				p->restore_ckpt = ck->id;
			return;
		}
	}
}

static int build_pipe(struct cat_pipe *p, struct cat_obj *objs, size_t a,
		      size_t b)
{
	size_t i, n = 0, s;
	int rc;

	p->id = objs[a].pipeline_id;
	for (i = a; i < b; i++)
		if (i == a ||
		    objs[i].checkpoint_id != objs[i - 1].checkpoint_id)
			n++;
	p->ckpts = calloc(n, sizeof(*p->ckpts));
	if (!p->ckpts)
		return -ENOMEM;
	for (s = a, i = a + 1; i <= b; i++) {
		if (i < b && objs[i].checkpoint_id == objs[s].checkpoint_id)
			continue;
		rc = build_ckpt(&p->ckpts[p->n_ckpts++], objs, s, i);
		if (rc < 0)
			return rc;
		p->bytes += p->ckpts[p->n_ckpts - 1].bytes;
		s = i;
	}
	pick_restore(p);
	return 0;
}

static struct cat_obj **ptr_run(struct cat_obj *objs, size_t a, size_t b)
{
	struct cat_obj **v;
	size_t i;

	if (a == b)
		return NULL;
	v = calloc(b - a, sizeof(*v));
	if (!v)
		return NULL;
	for (i = a; i < b; i++)
		v[i - a] = &objs[i];
	return v;
}

/* one job: objects [a, b) of objs, sorted by cmp_obj; jb->id is set */
static int build_job(struct cat_obj *objs, struct cat_job *jb, size_t a,
		     size_t b)
{
	size_t pe = a, se, i, s, n = 0;
	int rc;

	while (pe < b && obj_cls(&objs[pe]) == CLS_PIPE)
		pe++;
	se = pe;
	while (se < b && obj_cls(&objs[se]) == CLS_SP)
		se++;

	for (i = a; i < pe; i++)
		if (i == a || objs[i].pipeline_id != objs[i - 1].pipeline_id)
			n++;
	if (n) {
		jb->pipes = calloc(n, sizeof(*jb->pipes));
		if (!jb->pipes)
			return -ENOMEM;
		for (s = a, i = a + 1; i <= pe; i++) {
			if (i < pe &&
			    objs[i].pipeline_id == objs[s].pipeline_id)
				continue;
			rc = build_pipe(&jb->pipes[jb->n_pipes++], objs, s, i);
			if (rc < 0)
				return rc;
			s = i;
		}
	}
	jb->sp_objs = ptr_run(objs, pe, se);
	jb->n_sp = se - pe;
	jb->strays = ptr_run(objs, se, b);
	jb->n_strays = b - se;
	if ((jb->n_sp && !jb->sp_objs) || (jb->n_strays && !jb->strays))
		return -ENOMEM;

	jb->in_ckpt_dir = pe > a || b > se;
	jb->in_sp_dir = se > pe;
	jb->newest_mtime_ns = INT64_MIN;
	for (i = a; i < b; i++) {
		const struct cat_obj *o = &objs[i];
		int64_t ms = 0;

		jb->bytes += o->size;
		jb->n_objs++;
		if (o->mtime_ns > jb->newest_mtime_ns)
			jb->newest_mtime_ns = o->mtime_ns;
		if (o->kind == CAT_REAL && o->rn.tmp)
			jb->n_tmp++;
		else if (o->kind == CAT_REAL)
			ms = o->rn.write_ts;
		else if (o->kind == CAT_DOC)
			ms = o->mtime_ns / 1000000;
		if (ms > jb->newest_ckpt_ms)
			jb->newest_ckpt_ms = ms;
	}
	return 0;
}

/* The component of `key` that names its job: the first one, or the one
 * after "savepoint/" (an upper bound of what classify() takes as the id). */
static const char *job_comp(const char *key, size_t *len)
{
	const char *e;

	if (!strncmp(key, "savepoint/", 10))
		key += 10;
	e = strchr(key, '/');
	*len = e ? (size_t)(e - key) : strlen(key);
	return key;
}

/* `owners`: one per entry (from a backend's listing), or NULL;
 * `release(cookie)`, when set, is called as soon as the entries (and
 * owners) are no longer read, before the catalog's own arrays are made:
 * the listing and the catalog are not both alive at the peak */
static int from_entries(const struct cat_entry *ents,
			const struct be_owner *owners, size_t n,
			void (*release)(void *cookie), void *cookie,
			struct catalog **out)
{
	const struct cat_entry **sorted = NULL, *prev = NULL;
	const char *jc, *pjc = NULL;
	size_t jl, pjl = 0;
	struct cat_obj *bo = NULL, *shrunk;
	struct catalog *c;
	size_t i, ns = 0, nb = 0, pool_sz = 0, njobs = 0, s;
	char *pp;
	bool demoted = false;
	int rc = -ENOMEM;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		if (release)
			release(cookie);
		return -ENOMEM;
	}
	c->refs = 1;
	c->built_ms = now_ms();
	c->built_mono_ms = mono_ms();
	if (n == 0)
		goto done;

	sorted = calloc(n, sizeof(*sorted));
	if (!sorted)
		goto fail;
	for (i = 0; i < n; i++) {
		const char *k = ents[i].key;
		size_t len = k ? strlen(k) : 0;

		if (len && k[len - 1] == '/')
			continue; /* directory marker */
		if (!len || !key_is_sane(k)) {
			c->n_ignored++;
			continue;
		}
		sorted[ns++] = &ents[i];
	}
	qsort(sorted, ns, sizeof(*sorted), cmp_entry_key);
	for (i = 0; i < ns; i++) {
		if (prev && !strcmp(sorted[i]->key, prev->key)) {
			c->n_ignored++; /* a duplicate: keep the first */
			sorted[i] = NULL;
			continue;
		}
		prev = sorted[i];
		/* the key, and room for its job id once per run of keys of
		 * one job directory (sorted: a job's keys are adjacent) */
		pool_sz += strlen(sorted[i]->key) + 1;
		jc = job_comp(sorted[i]->key, &jl);
		if (!pjc || jl != pjl || memcmp(jc, pjc, jl)) {
			pool_sz += jl + 1;
			pjc = jc;
			pjl = jl;
		}
	}

	/* the objects are classified into the catalog's own array */
	c->pool = malloc(pool_sz ? pool_sz : 1);
	c->objs = bo = calloc(ns ? ns : 1, sizeof(*bo));
	if (!c->pool || !bo)
		goto fail;
	pp = c->pool;
	for (i = 0; i < ns; i++) {
		size_t len;

		if (!sorted[i])
			continue;
		len = strlen(sorted[i]->key) + 1;
		memcpy(pp, sorted[i]->key, len);
		if (!classify(pp, &bo[nb])) {
			c->n_ignored++;
			continue; /* its pool bytes are simply unused */
		}
		bo[nb].size = sorted[i]->size;
		bo[nb].mtime_ns = sorted[i]->mtime_ns;
		if (owners)
			bo[nb].owner = owners[sorted[i] - ents];
		pp += len;
		nb++;
	}
	free(sorted);
	sorted = NULL;
	if (release) {
		release(cookie);
		release = NULL;
	}
	if (nb < ns) {
		shrunk = realloc(bo, (nb ? nb : 1) * sizeof(*bo));
		if (shrunk)
			c->objs = bo = shrunk;
	}
	qsort(bo, nb, sizeof(*bo), cmp_obj);
	/* a documented name equal to a real one in the same checkpoint
	 * would show twice in one directory: keep the real one */
	for (i = 1; i < nb; i++) {
		if (!same_ckpt(&bo[i - 1], &bo[i]) ||
		    strcmp(bo[i - 1].name, bo[i].name))
			continue;
		make_stray(bo[i - 1].kind == CAT_DOC ? &bo[i - 1] : &bo[i]);
		demoted = true;
	}
	if (demoted)
		qsort(bo, nb, sizeof(*bo), cmp_obj);

	c->n_objs = nb;
	for (i = 0; i < nb; i++) {
		c->bytes += bo[i].size;
		if (i == 0 || cmp_job(&bo[i - 1], &bo[i]))
			njobs++;
	}
	if (njobs) {
		c->jobs = calloc(njobs, sizeof(*c->jobs));
		if (!c->jobs)
			goto fail;
	}
	for (s = 0, i = 1; i <= nb && nb; i++) {
		size_t jlen;
		const char *job;

		if (i < nb && !cmp_job(&bo[s], &bo[i]))
			continue;
		job = obj_job(&bo[s], &jlen);
		memcpy(pp, job, jlen);
		pp[jlen] = '\0';
		c->jobs[c->n_jobs].id = pp;
		pp += jlen + 1;
		rc = build_job(c->objs, &c->jobs[c->n_jobs++], s, i);
		if (rc < 0)
			goto fail;
		s = i;
	}
done:
	free(sorted);
	if (release)
		release(cookie);
	*out = c;
	return 0;
fail:
	free(sorted);
	if (release)
		release(cookie);
	catalog_free(c);
	return -ENOMEM;
}

/* ---- removing objects without listing */

static bool key_in(const char *key, const char *const *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(keys[i], key) == 0)
			return true;
	return false;
}

/* Call fn for every object of job `jb`, in the catalog's order (pipelines,
 * checkpoints, names; then savepoint data; then strays). */
static void job_each_obj(const struct cat_job *jb,
			 void (*fn)(void *cookie, const struct cat_obj *o),
			 void *cookie)
{
	for (size_t j = 0; j < jb->n_pipes; j++)
		for (size_t k = 0; k < jb->pipes[j].n_ckpts; k++)
			for (size_t m = 0; m < jb->pipes[j].ckpts[k].n_objs;
			     m++)
				fn(cookie, jb->pipes[j].ckpts[k].objs[m]);
	for (size_t j = 0; j < jb->n_sp; j++)
		fn(cookie, jb->sp_objs[j]);
	for (size_t j = 0; j < jb->n_strays; j++)
		fn(cookie, jb->strays[j]);
}

struct keep {
	const char *const *keys;
	size_t n_keys;
	struct cat_obj *objs; /* the kept ones, in the catalog's order */
	size_t n;
	size_t dropped;
	uint64_t dropped_bytes;
};

static void keep_obj(void *cookie, const struct cat_obj *o)
{
	struct keep *k = cookie;
	struct cat_obj *b;

	if (key_in(o->key, k->keys, k->n_keys)) {
		k->dropped++;
		k->dropped_bytes += o->size;
		return;
	}
	b = &k->objs[k->n++];
	*b = *o;
	b->restore_point = false; /* chosen again */
	b->of = NULL;		  /* linked again, to the copies */
}

/*
 * Rebuild job `old` without `keys` into *jb (owned by d).  0, with
 * *left the objects kept (0: the job is gone, nothing allocated).
 */
static int rebuild_job(struct catalog *d, const struct cat_job *old,
		       const char *const *keys, size_t n_keys,
		       struct cat_job *jb, size_t *left, struct keep *k)
{
	struct cat_obj **nb;
	int rc;

	memset(k, 0, sizeof(*k));
	k->keys = keys;
	k->n_keys = n_keys;
	k->objs = calloc(old->n_objs ? old->n_objs : 1, sizeof(*k->objs));
	if (!k->objs)
		return -ENOMEM;
	job_each_obj(old, keep_obj, k);
	*left = k->n;
	memset(jb, 0, sizeof(*jb));
	jb->id = old->id;
	if (k->n == 0) {
		free(k->objs);
		return 0;
	}
	nb = realloc(d->blocks, (d->n_blocks + 1) * sizeof(*nb));
	if (!nb) {
		free(k->objs);
		return -ENOMEM;
	}
	d->blocks = nb;
	d->blocks[d->n_blocks++] = k->objs; /* d owns them now */
	/* the order kept is the order build_job needs (cmp_obj's) */
	rc = build_job(k->objs, jb, 0, k->n);
	if (rc < 0)
		job_arrays_free(jb);
	return rc;
}

/* the job a key belongs to ("<id>/..." or "savepoint/<id>/..."), or NULL */
static const struct cat_job *job_of_key(const struct catalog *c,
					const char *key)
{
	char id[24];
	const char *p = key, *e;

	if (strncmp(p, "savepoint/", 10) == 0)
		p += 10;
	e = strchr(p, '/');
	if (!e || (size_t)(e - p) >= sizeof(id))
		return NULL;
	memcpy(id, p, (size_t)(e - p));
	id[e - p] = '\0';
	return catalog_find(c, id);
}

int catalog_remove_keys(struct catalog *c, const char *const *keys, size_t n,
			struct catalog **out)
{
	struct catalog *d;
	unsigned char *hit;
	size_t i, k = 0;
	bool any = false;
	int rc = -ENOMEM;

	*out = NULL;
	hit = calloc(c->n_jobs ? c->n_jobs : 1, 1);
	if (!hit)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct cat_job *jb = job_of_key(c, keys[i]);

		if (jb) {
			hit[jb - c->jobs] = 1;
			any = true;
		}
	}
	if (!any) {
		free(hit);
		*out = catalog_get(c);
		return 0;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		goto fail_hit;
	d->refs = 1;
	d->err = c->err;
	d->built_ms = c->built_ms;
	d->built_mono_ms = c->built_mono_ms;
	d->n_ignored = c->n_ignored;
	d->n_objs = c->n_objs;
	d->bytes = c->bytes;
	d->base = catalog_get(c->base ? c->base : c);
	d->jobs = calloc(c->n_jobs, sizeof(*d->jobs));
	d->owned = calloc(c->n_jobs, 1);
	if (!d->jobs || !d->owned)
		goto fail;
	for (i = 0; i < c->n_jobs; i++) {
		struct keep kp;
		size_t left;

		/* jobs `c` rebuilt die with `c`: rebuild them again (they
		 * are few: the jobs deleted from since the last listing) */
		if (!hit[i] && !(c->owned && c->owned[i])) {
			d->jobs[k++] = c->jobs[i];
			continue;
		}
		rc = rebuild_job(d, &c->jobs[i], hit[i] ? keys : NULL,
				 hit[i] ? n : 0, &d->jobs[k], &left, &kp);
		if (rc < 0)
			goto fail;
		d->n_objs -= kp.dropped;
		d->bytes -= kp.dropped_bytes;
		if (left)
			d->owned[k++] = 1;
	}
	d->n_jobs = k;
	free(hit);
	*out = d;
	return 0;
fail:
	d->n_jobs = k;
	catalog_free(d);
fail_hit:
	free(hit);
	return -ENOMEM;
}

/* ---- building from a backend */

int catalog_from_entries(const struct cat_entry *ents, size_t n,
			 struct catalog **out)
{
	return from_entries(ents, NULL, n, NULL, NULL, out);
}

/* A listing: the keys in one pool (offsets while it grows, pointers once
 * it is complete), not one allocation per object. */
struct collect {
	struct cat_entry *v;
	struct be_owner *owners; /* one per entry of v */
	size_t *off;		 /* per entry: its key's offset in pool */
	size_t n, cap;
	char *pool;
	size_t pool_len, pool_cap;
	const char *prefix;
	bool nomem;
};

static int collect_fill(void *cookie, const char *name,
			const struct be_attr *attr)
{
	struct collect *col = cookie;
	size_t pl = strlen(col->prefix), nl = strlen(name);

	if (attr->type != BE_FILE)
		return 0;
	if (col->n == col->cap) {
		size_t ncap = col->cap ? col->cap * 2 : 256;
		struct cat_entry *nv = realloc(col->v, ncap * sizeof(*nv));
		struct be_owner *no;
		size_t *noff;

		if (!nv)
			goto nomem;
		col->v = nv;
		no = realloc(col->owners, ncap * sizeof(*no));
		if (!no)
			goto nomem;
		col->owners = no;
		noff = realloc(col->off, ncap * sizeof(*noff));
		if (!noff)
			goto nomem;
		col->off = noff;
		col->cap = ncap;
	}
	if (col->pool_cap - col->pool_len < pl + nl + 1) {
		size_t ncap = col->pool_cap ? col->pool_cap : 4096;
		char *np;

		while (ncap - col->pool_len < pl + nl + 1)
			ncap *= 2;
		np = realloc(col->pool, ncap);
		if (!np)
			goto nomem;
		col->pool = np;
		col->pool_cap = ncap;
	}
	memcpy(col->pool + col->pool_len, col->prefix, pl);
	memcpy(col->pool + col->pool_len + pl, name, nl + 1);
	col->off[col->n] = col->pool_len;
	col->pool_len += pl + nl + 1;
	col->v[col->n++] = (struct cat_entry){
		.key = NULL, /* set from off[] once the pool stops moving */
		.size = attr->size,
		.mtime_ns = attr->mtime_ns,
	};
	col->owners[col->n - 1] = attr->owner;
	return 0;
nomem:
	col->nomem = true;
	return 1;
}

static void collect_release(void *cookie)
{
	struct collect *col = cookie;

	free(col->v);
	free(col->owners);
	free(col->off);
	free(col->pool);
	memset(col, 0, sizeof(*col));
}

/* list `dir` recursively into col; a missing dir lists nothing */
static int collect_dir(struct backend *be, const char *dir, const char *prefix,
		       struct collect *col)
{
	int rc;

	col->prefix = prefix;
	rc = be_list(be, dir, BE_LIST_RECURSIVE, collect_fill, col);
	if (col->nomem)
		return -ENOMEM;
	if (rc == -ENOENT || (rc == -ENOTDIR && *dir))
		return 0;
	return rc;
}

static int build_from(struct backend *be, const char *const *dirs,
		      const char *const *prefixes, size_t nd,
		      struct catalog **out)
{
	struct collect col = {0};
	size_t i;
	int rc = 0;

	*out = NULL;
	for (i = 0; i < nd && rc == 0; i++)
		rc = collect_dir(be, dirs[i], prefixes[i], &col);
	if (rc) {
		collect_release(&col);
		return rc;
	}
	for (i = 0; i < col.n; i++)
		col.v[i].key = col.pool + col.off[i];
	free(col.off);
	col.off = NULL;
	/* from_entries releases the listing once it is copied */
	return from_entries(col.v, col.owners, col.n, collect_release, &col,
			    out);
}

int catalog_build(struct backend *be, struct catalog **out)
{
	static const char *const dirs[] = {""};

	return build_from(be, dirs, dirs, 1, out);
}

int catalog_build_job(struct backend *be, const char *job_id,
		      struct catalog **out)
{
	char d0[24], p0[24], d1[40], p1[40];
	const char *dirs[2] = {d0, d1}, *prefixes[2] = {p0, p1};

	*out = NULL;
	if (!job_id || !jobid_canonical(job_id, strlen(job_id)))
		return -EINVAL;
	snprintf(d0, sizeof(d0), "%s", job_id);
	snprintf(p0, sizeof(p0), "%s/", job_id);
	snprintf(d1, sizeof(d1), "savepoint/%s", job_id);
	snprintf(p1, sizeof(p1), "savepoint/%s/", job_id);
	return build_from(be, dirs, prefixes, 2, out);
}

/* ---- lookups */

const struct cat_job *catalog_find(const struct catalog *c, const char *id)
{
	size_t lo = 0, hi, mid;
	int r;

	if (!c || !id || !jobid_canonical(id, strlen(id)))
		return NULL;
	hi = c->n_jobs;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		r = jobid_cmp(c->jobs[mid].id, id);
		if (r == 0)
			return &c->jobs[mid];
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct cat_pipe *cat_job_pipe(const struct cat_job *j, int32_t pid)
{
	size_t lo = 0, hi, mid;

	if (!j)
		return NULL;
	hi = j->n_pipes;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (j->pipes[mid].id == pid)
			return &j->pipes[mid];
		if (j->pipes[mid].id < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct cat_ckpt *cat_pipe_ckpt(const struct cat_pipe *p, int64_t cid)
{
	size_t lo = 0, hi, mid;

	if (!p)
		return NULL;
	hi = p->n_ckpts;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (p->ckpts[mid].id == cid)
			return &p->ckpts[mid];
		if (p->ckpts[mid].id < cid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
