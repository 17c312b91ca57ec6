/*
 * catalog — one recursive listing of the checkpoint namespace, classified
 * and grouped into jobs / pipelines / checkpoints (catalog.h).
 *
 * Building: the keys are validated (hostile ones dropped and counted),
 * sorted and de-duplicated, and cut into one run of keys per job
 * directory; then each job's objects are classified and sorted by (class,
 * pipeline, checkpoint, name), so that every group is a contiguous run,
 * and the job is made into one block (objects, keys, arrays), unless the
 * catalog it replaces has the same objects for that job: then that block is
 * shared (README "Memory").  After that the catalog is immutable; only
 * `refs` changes (atomics).
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

/* ---- one job's allocation (README "Memory") */

/*
 * Everything of one job lives in one block: its objects (in cmp_obj
 * order), their keys, its pipelines, checkpoints and pointer arrays.  A
 * block is immutable once built and shared by reference between catalogs:
 * a relisting keeps an unchanged job's block, catalog_remove_keys every
 * block it does not rebuild.
 */
struct cat_block {
	unsigned refs; /* atomic */
	unsigned n_objs;
	struct cat_obj *objs; /* the job's objects, in cmp_obj order */
	/* then: objects, strings, pipelines, checkpoints, pointer arrays */
};

static struct cat_block *block_get(struct cat_block *b)
{
	__atomic_fetch_add(&b->refs, 1, __ATOMIC_RELAXED);
	return b;
}

/* true when this was the last reference (the block is freed) */
static bool block_put(struct cat_block *b)
{
	if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return false;
	free(b);
	return true;
}

/* carving a block whose size was counted beforehand */
struct arena {
	char *p, *end;
};

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void *arena_take(struct arena *a, size_t n)
{
	void *r = a->p;

	n = round8(n);
	if (n > (size_t)(a->end - a->p))
		return NULL; /* a miscount: never happens */
	a->p += n;
	return r;
}

/* ---- freeing */

/* a catalog that frees this many objects gives the memory back */
#define CAT_TRIM_OBJS 4096

static void catalog_free(struct catalog *c)
{
	size_t freed = 0;

	for (size_t i = 0; c->blk && i < c->n_jobs; i++) {
		size_t n = c->jobs[i].n_objs;

		if (block_put(c->blk[i]))
			freed += n;
	}
	free(c->blk);
	free(c->jobs);
	free(c);
	if (freed >= CAT_TRIM_OBJS)
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
		      size_t b, struct arena *ar)
{
	bool any_real = false, all_tmp = true;
	size_t i;

	ck->id = objs[a].checkpoint_id;
	ck->objs = arena_take(ar, (b - a) * sizeof(*ck->objs));
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
		      size_t b, struct arena *ar)
{
	size_t i, n = 0, s;
	int rc;

	p->id = objs[a].pipeline_id;
	for (i = a; i < b; i++)
		if (i == a ||
		    objs[i].checkpoint_id != objs[i - 1].checkpoint_id)
			n++;
	p->ckpts = arena_take(ar, n * sizeof(*p->ckpts));
	if (!p->ckpts)
		return -ENOMEM;
	for (s = a, i = a + 1; i <= b; i++) {
		if (i < b && objs[i].checkpoint_id == objs[s].checkpoint_id)
			continue;
		rc = build_ckpt(&p->ckpts[p->n_ckpts++], objs, s, i, ar);
		if (rc < 0)
			return rc;
		p->bytes += p->ckpts[p->n_ckpts - 1].bytes;
		s = i;
	}
	pick_restore(p);
	return 0;
}

static struct cat_obj **ptr_run(struct cat_obj *objs, size_t a, size_t b,
				struct arena *ar)
{
	struct cat_obj **v;
	size_t i;

	if (a == b)
		return NULL;
	v = arena_take(ar, (b - a) * sizeof(*v));
	if (!v)
		return NULL;
	for (i = a; i < b; i++)
		v[i - a] = &objs[i];
	return v;
}

/* one job: objects [a, b) of objs, sorted by cmp_obj; jb->id is set */
static int build_job(struct cat_obj *objs, struct cat_job *jb, size_t a,
		     size_t b, struct arena *ar)
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
		jb->pipes = arena_take(ar, n * sizeof(*jb->pipes));
		if (!jb->pipes)
			return -ENOMEM;
		for (s = a, i = a + 1; i <= pe; i++) {
			if (i < pe &&
			    objs[i].pipeline_id == objs[s].pipeline_id)
				continue;
			rc = build_pipe(&jb->pipes[jb->n_pipes++], objs, s, i,
					ar);
			if (rc < 0)
				return rc;
			s = i;
		}
	}
	jb->sp_objs = ptr_run(objs, pe, se, ar);
	jb->n_sp = se - pe;
	jb->strays = ptr_run(objs, se, b, ar);
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

/* One object as a job is made from it: a listed entry, or an object of a
 * job rebuilt without some keys.  The key is only borrowed. */
struct src {
	const char *key;
	uint64_t size;
	int64_t mtime_ns;
	struct be_owner owner;
};

static bool same_owner(const struct be_owner *a, const struct be_owner *b)
{
	return a->has == b->has && a->perm == b->perm && a->uid == b->uid &&
	       a->gid == b->gid;
}

/* the block holds exactly these objects (classification and grouping
 * follow from the keys alone) */
static bool same_objs(const struct cat_block *b, const struct cat_obj *o,
		      size_t n)
{
	if (!b || b->n_objs != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (b->objs[i].size != o[i].size ||
		    b->objs[i].mtime_ns != o[i].mtime_ns ||
		    !same_owner(&b->objs[i].owner, &o[i].owner) ||
		    strcmp(b->objs[i].key, o[i].key) != 0)
			return false;
	return true;
}

/*
 * Make the job of the n objects s (all of one job, every key one that
 * classify() takes) into *jb and its block *blk.  A job of `prev` with
 * the same objects is shared instead: 1.  0 when built; -ENOMEM.
 */
static int job_make(const struct src *s, size_t n, const struct catalog *prev,
		    struct cat_job *jb, struct cat_block **blk)
{
	struct cat_obj *tmp = calloc(n, sizeof(*tmp)), *objs;
	size_t i, idlen, strs = 0, np = 0, nck = 0, total, idoff;
	const struct cat_obj *last = NULL;
	struct cat_block *b;
	struct arena ar;
	bool demoted = false;
	char *sp;
	int rc;

	*blk = NULL;
	memset(jb, 0, sizeof(*jb));
	if (!tmp)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		classify((char *)(uintptr_t)s[i].key, &tmp[i]);
		tmp[i].size = s[i].size;
		tmp[i].mtime_ns = s[i].mtime_ns;
		tmp[i].owner = s[i].owner;
		strs += strlen(s[i].key) + 1;
	}
	qsort(tmp, n, sizeof(*tmp), cmp_obj);
	/* a documented name equal to a real one in the same checkpoint
	 * would show twice in one directory: keep the real one */
	for (i = 1; i < n; i++) {
		if (!same_ckpt(&tmp[i - 1], &tmp[i]) ||
		    strcmp(tmp[i - 1].name, tmp[i].name))
			continue;
		make_stray(tmp[i - 1].kind == CAT_DOC ? &tmp[i - 1] : &tmp[i]);
		demoted = true;
	}
	if (demoted)
		qsort(tmp, n, sizeof(*tmp), cmp_obj);
	idoff = (size_t)(obj_job(&tmp[0], &idlen) - tmp[0].key);
	if (prev && idlen < 24) {
		char id[24];
		const struct cat_job *pj;

		memcpy(id, tmp[0].key + idoff, idlen);
		id[idlen] = '\0';
		pj = catalog_find(prev, id);
		if (pj && same_objs(prev->blk[pj - prev->jobs], tmp, n)) {
			*jb = *pj;
			*blk = block_get(prev->blk[pj - prev->jobs]);
			free(tmp);
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		if (obj_cls(&tmp[i]) != CLS_PIPE)
			continue;
		if (!last || last->pipeline_id != tmp[i].pipeline_id) {
			np++;
			nck++;
		} else if (last->checkpoint_id != tmp[i].checkpoint_id) {
			nck++;
		}
		last = &tmp[i];
	}
	total = round8(sizeof(*b)) + n * sizeof(*objs) +
		round8(strs + idlen + 1) + np * sizeof(struct cat_pipe) +
		nck * sizeof(struct cat_ckpt) + n * sizeof(struct cat_obj *);
	b = calloc(1, total);
	if (!b) {
		free(tmp);
		return -ENOMEM;
	}
	b->refs = 1;
	b->n_objs = (unsigned)n;
	ar.p = (char *)b + round8(sizeof(*b));
	ar.end = (char *)b + total;
	b->objs = objs = arena_take(&ar, n * sizeof(*objs));
	sp = arena_take(&ar, strs + idlen + 1);
	for (i = 0; i < n; i++) {
		size_t len = strlen(tmp[i].key) + 1;

		objs[i] = tmp[i];
		memcpy(sp, tmp[i].key, len);
		objs[i].key = sp;
		objs[i].name = sp + (tmp[i].name - tmp[i].key);
		sp += len;
	}
	memcpy(sp, objs[0].key + idoff, idlen);
	sp[idlen] = '\0';
	jb->id = sp;
	free(tmp);
	rc = build_job(objs, jb, 0, n, &ar);
	if (rc < 0) {
		free(b);
		memset(jb, 0, sizeof(*jb));
		return rc;
	}
	*blk = b;
	return 0;
}

/* The component of `key` that names its job: the first one, or the one
 * after "savepoint/" (what classify() takes as the id). */
static const char *job_comp(const char *key, size_t *len)
{
	const char *e;

	if (!strncmp(key, "savepoint/", 10))
		key += 10;
	e = strchr(key, '/');
	*len = e ? (size_t)(e - key) : strlen(key);
	return key;
}

/* A run of sorted entries [a, b) of one job, under <jobId>/ (sp false) or
 * savepoint/<jobId>/; a job has one or two. */
struct run {
	const char *id;
	size_t idlen, a, b;
	bool sp;
};

static int cmp_run(const void *pa, const void *pb)
{
	const struct run *x = pa, *y = pb;
	int c;

	if (x->idlen != y->idlen)
		return x->idlen < y->idlen ? -1 : 1;
	c = memcmp(x->id, y->id, x->idlen);
	if (c)
		return (c > 0) - (c < 0);
	return (int)x->sp - (int)y->sp;
}

static bool same_job(const struct run *x, const struct run *y)
{
	return x->idlen == y->idlen && !memcmp(x->id, y->id, x->idlen);
}

/* room for `more` jobs after c's (*cap: the arrays' size) */
static int jobs_room(struct catalog *c, size_t *cap, size_t more)
{
	struct cat_job *nj;
	struct cat_block **nb;
	size_t want = c->n_jobs + more, nc = *cap ? *cap : 16;

	if (want <= *cap)
		return 0;
	while (nc < want)
		nc *= 2;
	nj = realloc(c->jobs, nc * sizeof(*nj));
	if (!nj)
		return -ENOMEM;
	c->jobs = nj;
	nb = realloc(c->blk, nc * sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	c->blk = nb;
	*cap = nc;
	return 0;
}

/*
 * The jobs of entries `ents`, appended to c's (*cap: the size of its
 * arrays), each job once and in id order among them; `owners`: one per
 * entry (from a backend's listing), or NULL; `prev`: a catalog whose
 * unchanged jobs are shared.  0; -ENOMEM (c keeps what it has).
 */
static int add_entries(struct catalog *c, size_t *cap,
		       const struct cat_entry *ents,
		       const struct be_owner *owners, size_t n,
		       const struct catalog *prev)
{
	const struct cat_entry **sorted = NULL, *prev_e = NULL;
	struct run *runs = NULL, *nr;
	struct src *src = NULL, *ns_;
	size_t i, ns = 0, n_runs = 0, cap_runs = 0, cap_src = 0, njobs = 0;
	int rc = -ENOMEM;

	if (n == 0)
		return 0;

	sorted = calloc(n, sizeof(*sorted));
	if (!sorted)
		goto out;
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
	/* duplicates and keys that are no job's out; the rest in runs */
	for (i = 0; i < ns; i++) {
		struct cat_obj probe;
		struct run r;

		if (prev_e && !strcmp(sorted[i]->key, prev_e->key)) {
			c->n_ignored++; /* a duplicate: keep the first */
			sorted[i] = NULL;
			continue;
		}
		prev_e = sorted[i];
		if (!classify((char *)(uintptr_t)sorted[i]->key, &probe)) {
			c->n_ignored++;
			sorted[i] = NULL;
			continue;
		}
		r.id = job_comp(sorted[i]->key, &r.idlen);
		r.sp = r.id != sorted[i]->key;
		if (n_runs && runs[n_runs - 1].sp == r.sp &&
		    same_job(&runs[n_runs - 1], &r)) {
			runs[n_runs - 1].b = i + 1;
			continue;
		}
		if (n_runs == cap_runs) {
			cap_runs = cap_runs ? 2 * cap_runs : 64;
			nr = realloc(runs, cap_runs * sizeof(*runs));
			if (!nr)
				goto out;
			runs = nr;
		}
		r.a = i;
		r.b = i + 1;
		runs[n_runs++] = r;
	}
	if (!n_runs) {
		rc = 0; /* nothing but ignored keys */
		goto out;
	}
	/* jobs in numeric id order, a job's two runs adjacent */
	qsort(runs, n_runs, sizeof(*runs), cmp_run);
	for (i = 0; i < n_runs; i++)
		if (i == 0 || !same_job(&runs[i - 1], &runs[i]))
			njobs++;
	if (jobs_room(c, cap, njobs))
		goto out;
	for (i = 0; i < n_runs;) {
		size_t e = i + 1, m = 0, need = runs[i].b - runs[i].a;

		if (e < n_runs && same_job(&runs[i], &runs[e])) {
			need += runs[e].b - runs[e].a;
			e++;
		}
		if (need > cap_src) {
			ns_ = realloc(src, need * sizeof(*src));
			if (!ns_)
				goto out;
			src = ns_;
			cap_src = need;
		}
		for (size_t r = i; r < e; r++)
			for (size_t k = runs[r].a; k < runs[r].b; k++) {
				if (!sorted[k])
					continue;
				src[m++] = (struct src){
					.key = sorted[k]->key,
					.size = sorted[k]->size,
					.mtime_ns = sorted[k]->mtime_ns,
					.owner = owners ? owners[sorted[k] -
								 ents]
							: (struct be_owner){0},
				};
			}
		rc = job_make(src, m, prev, &c->jobs[c->n_jobs],
			      &c->blk[c->n_jobs]);
		if (rc < 0) {
			rc = -ENOMEM;
			goto out;
		}
		if (rc == 1)
			c->n_shared++;
		c->n_objs += c->jobs[c->n_jobs].n_objs;
		c->bytes += c->jobs[c->n_jobs].bytes;
		c->n_jobs++;
		i = e;
	}
	rc = 0;
out:
	free(src);
	free(runs);
	free(sorted);
	return rc < 0 ? -ENOMEM : 0;
}

static struct catalog *catalog_new(void)
{
	struct catalog *c = calloc(1, sizeof(*c));

	if (c) {
		c->refs = 1;
		c->built_ms = now_ms();
		c->built_mono_ms = mono_ms();
	}
	return c;
}

static int from_entries(const struct cat_entry *ents, size_t n,
			const struct catalog *prev, struct catalog **out)
{
	struct catalog *c = catalog_new();
	size_t cap = 0;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	if (add_entries(c, &cap, ents, NULL, n, prev)) {
		catalog_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

/* ---- removing objects without listing */

static bool key_in(const char *key, const char *const *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(keys[i], key) == 0)
			return true;
	return false;
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

const struct cat_obj *catalog_find_key(const struct catalog *c, const char *key)
{
	const struct cat_job *jb = key ? job_of_key(c, key) : NULL;
	const struct cat_block *b;

	if (!jb)
		return NULL;
	b = c->blk[jb - c->jobs];
	for (size_t i = 0; i < b->n_objs; i++)
		if (!strcmp(b->objs[i].key, key))
			return &b->objs[i];
	return NULL;
}

int catalog_remove_keys(struct catalog *c, const char *const *keys, size_t n,
			struct catalog **out)
{
	struct catalog *d;
	unsigned char *hit;
	struct src *src = NULL;
	size_t i;
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
	d->jobs = calloc(c->n_jobs, sizeof(*d->jobs));
	d->blk = calloc(c->n_jobs, sizeof(*d->blk));
	if (!d->jobs || !d->blk)
		goto fail;
	for (i = 0; i < c->n_jobs; i++) {
		const struct cat_block *b = c->blk[i];
		size_t m = 0;

		if (!hit[i]) {
			/* untouched: shared */
			d->jobs[d->n_jobs] = c->jobs[i];
			d->blk[d->n_jobs] = block_get(c->blk[i]);
		} else {
			free(src);
			src = calloc(b->n_objs ? b->n_objs : 1, sizeof(*src));
			if (!src)
				goto fail;
			for (size_t k = 0; k < b->n_objs; k++) {
				const struct cat_obj *o = &b->objs[k];

				if (key_in(o->key, keys, n))
					continue;
				src[m++] = (struct src){
					.key = o->key,
					.size = o->size,
					.mtime_ns = o->mtime_ns,
					.owner = o->owner,
				};
			}
			if (m == 0)
				continue; /* the job is gone */
			rc = job_make(src, m, NULL, &d->jobs[d->n_jobs],
				      &d->blk[d->n_jobs]);
			if (rc < 0)
				goto fail;
		}
		d->n_objs += d->jobs[d->n_jobs].n_objs;
		d->bytes += d->jobs[d->n_jobs].bytes;
		d->n_jobs++;
	}
	free(src);
	free(hit);
	*out = d;
	return 0;
fail:
	free(src);
	catalog_free(d);
fail_hit:
	free(hit);
	return -ENOMEM;
}

/* ---- building from a backend */

int catalog_from_entries(const struct cat_entry *ents, size_t n,
			 struct catalog **out)
{
	return from_entries(ents, n, NULL, out);
}

int catalog_from_entries_prev(const struct cat_entry *ents, size_t n,
			      const struct catalog *prev, struct catalog **out)
{
	return from_entries(ents, n, prev, out);
}

/*
 * A listing is made into jobs as it arrives (README "Memory": never the
 * whole listing in memory beside the catalog): the keys of one job
 * directory (<jobId>/ or savepoint/<jobId>/) come one after the other in
 * a recursive listing, so they are collected (in one pool) until a key of
 * another directory comes, and that run becomes its jobs at once.  A job
 * met in several runs (its savepoint/ directory; a store that lists out of
 * order) is made once more from its pieces at the end.
 */
struct collect {
	struct catalog *c;	    /* the catalog being made */
	size_t cap;		    /* of c's job arrays */
	const struct catalog *prev; /* whose unchanged jobs are shared */
	struct cat_entry *v;	    /* the current run */
	struct be_owner *owners;    /* one per entry of v */
	size_t *off;		    /* per entry: its key's offset in pool */
	size_t n, cap_v;
	char *pool;
	size_t pool_len, pool_cap;
	const char *prefix;
	bool nomem;
};

/* the first `n` entries of the run become jobs; 0 or -ENOMEM */
static int collect_flush(struct collect *col, size_t n)
{
	for (size_t i = 0; i < n; i++)
		col->v[i].key = col->pool + col->off[i];
	return add_entries(col->c, &col->cap, col->v, col->owners, n,
			   col->prev);
}

/* whether keys a and b are of one job directory */
static bool same_dir(const char *a, const char *b)
{
	size_t al, bl;
	const char *ja = job_comp(a, &al), *jb = job_comp(b, &bl);

	return (ja == a) == (jb == b) && al == bl && !memcmp(ja, jb, al);
}

static int collect_fill(void *cookie, const char *name,
			const struct be_attr *attr)
{
	struct collect *col = cookie;
	size_t pl = strlen(col->prefix), nl = strlen(name), last;

	if (attr->type != BE_FILE)
		return 0;
	if (col->n == col->cap_v) {
		size_t ncap = col->cap_v ? col->cap_v * 2 : 256;
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
		col->cap_v = ncap;
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
	last = col->pool_len;
	memcpy(col->pool + last, col->prefix, pl);
	memcpy(col->pool + last + pl, name, nl + 1);
	col->pool_len += pl + nl + 1;
	if (col->n && !same_dir(col->pool + col->off[0], col->pool + last)) {
		/* another directory: the run so far becomes its jobs, and
		 * this key starts the next one */
		if (collect_flush(col, col->n))
			goto nomem;
		memmove(col->pool, col->pool + last, pl + nl + 1);
		col->pool_len = pl + nl + 1;
		last = 0;
		col->n = 0;
	}
	col->off[col->n] = last;
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

static void collect_release(struct collect *col)
{
	free(col->v);
	free(col->owners);
	free(col->off);
	free(col->pool);
	col->v = NULL;
	col->owners = NULL;
	col->off = NULL;
	col->pool = NULL;
	col->n = col->cap_v = col->pool_len = col->pool_cap = 0;
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

struct job_ref {
	struct cat_job j;
	struct cat_block *b;
};

static int cmp_job_ref(const void *a, const void *b)
{
	const struct job_ref *x = a, *y = b;

	return jobid_cmp(x->j.id, y->j.id);
}

static int cmp_src_key(const void *a, const void *b)
{
	return strcmp(((const struct src *)a)->key,
		      ((const struct src *)b)->key);
}

/* jobs [a, b) of r, of one id, made into one (the first's slot) */
static int merge_job(struct catalog *c, struct job_ref *r, size_t a, size_t b,
		     const struct catalog *prev)
{
	struct src *src;
	struct job_ref m;
	size_t n = 0, k = 0;
	int rc;

	for (size_t i = a; i < b; i++)
		n += r[i].b->n_objs;
	src = calloc(n, sizeof(*src));
	if (!src)
		return -ENOMEM;
	for (size_t i = a; i < b; i++)
		for (size_t o = 0; o < r[i].b->n_objs; o++) {
			const struct cat_obj *x = &r[i].b->objs[o];

			src[k++] = (struct src){x->key, x->size, x->mtime_ns,
						x->owner};
		}
	qsort(src, n, sizeof(*src), cmp_src_key);
	for (size_t i = k = 0; i < n; i++) {
		if (k && !strcmp(src[k - 1].key, src[i].key)) {
			c->n_ignored++; /* listed twice: keep one */
			continue;
		}
		src[k++] = src[i];
	}
	rc = job_make(src, k, prev, &m.j, &m.b);
	free(src);
	if (rc < 0)
		return rc;
	for (size_t i = a; i < b; i++)
		block_put(r[i].b);
	r[a] = m;
	return 0;
}

/* c's jobs in id order, each once; its sums.  0 or -ENOMEM. */
static int collect_finish(struct catalog *c, const struct catalog *prev)
{
	struct job_ref *r;
	size_t i, e, w = 0;
	int rc = 0;

	if (!c->n_jobs)
		return 0;
	r = calloc(c->n_jobs, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = 0; i < c->n_jobs; i++)
		r[i] = (struct job_ref){c->jobs[i], c->blk[i]};
	qsort(r, c->n_jobs, sizeof(*r), cmp_job_ref);
	c->n_objs = 0;
	c->bytes = 0;
	c->n_shared = 0;
	for (i = 0; i < c->n_jobs; i = e) {
		for (e = i + 1; e < c->n_jobs && !cmp_job_ref(&r[i], &r[e]);
		     e++)
			;
		if (e - i > 1 && rc == 0)
			rc = merge_job(c, r, i, e, prev);
		else if (e - i > 1)
			for (size_t k = i + 1; k < e; k++)
				block_put(r[k].b);
		r[w++] = r[i];
	}
	for (i = 0; i < w; i++) {
		const struct cat_job *pj = catalog_find(prev, r[i].j.id);

		c->jobs[i] = r[i].j;
		c->blk[i] = r[i].b;
		c->n_objs += r[i].j.n_objs;
		c->bytes += r[i].j.bytes;
		if (pj && prev->blk[pj - prev->jobs] == r[i].b)
			c->n_shared++;
	}
	c->n_jobs = w;
	free(r);
	return rc;
}

static int build_from(struct backend *be, const char *const *dirs,
		      const char *const *prefixes, size_t nd,
		      const struct catalog *prev, struct catalog **out)
{
	struct collect col = {.prev = prev};
	size_t i;
	int rc = 0;

	*out = NULL;
	col.c = catalog_new();
	if (!col.c)
		return -ENOMEM;
	for (i = 0; i < nd && rc == 0; i++)
		rc = collect_dir(be, dirs[i], prefixes[i], &col);
	if (rc == 0 && col.n && collect_flush(&col, col.n))
		rc = -ENOMEM;
	collect_release(&col);
	if (rc == 0)
		rc = collect_finish(col.c, prev);
	if (rc) {
		catalog_free(col.c);
		return rc;
	}
	*out = col.c;
	return 0;
}

int catalog_build(struct backend *be, struct catalog **out)
{
	static const char *const dirs[] = {""};

	return build_from(be, dirs, dirs, 1, NULL, out);
}

int catalog_rebuild(struct backend *be, const struct catalog *prev,
		    struct catalog **out)
{
	static const char *const dirs[] = {""};

	return build_from(be, dirs, dirs, 1, prev, out);
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
	return build_from(be, dirs, prefixes, 2, NULL, out);
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
