#include "ckinfo.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "pcache.h"
#include "protostuff.h"

#define CK_BUCKETS 4096
#define CK_HEAD	   256

struct ck_entry {
	char *key;
	uint64_t size;
	int64_t mtime_ns;
	int type;
	struct ck_entry *next;
};

struct ckinfo_table {
	pthread_mutex_t lock;
	struct ck_entry *bucket[CK_BUCKETS]; /* protected by lock */
};

struct ckinfo_table *ckinfo_new(void)
{
	struct ckinfo_table *t = calloc(1, sizeof(*t));

	if (t)
		pthread_mutex_init(&t->lock, NULL);
	return t;
}

void ckinfo_free(struct ckinfo_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < CK_BUCKETS; i++) {
		struct ck_entry *e = t->bucket[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e->key);
			free(e);
		}
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static int ck_lookup(struct ckinfo_table *t, const struct cat_obj *o, size_t b)
{
	int type = -1;

	pthread_mutex_lock(&t->lock);
	for (struct ck_entry *e = t->bucket[b]; e; e = e->next) {
		if (e->size == o->size && e->mtime_ns == o->mtime_ns &&
		    strcmp(e->key, o->key) == 0) {
			type = e->type;
			break;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return type;
}

static int ck_decode(struct stfs *fs, const struct cat_obj *o)
{
	uint8_t head[CK_HEAD], tail[2] = {0x48, 0x00};
	struct pstuff_ckpt info;
	ssize_t n;
	int rc;

	n = be_read(fs->ckpt, o->key, head, sizeof(head), 0);
	if (n < 0) {
		log_warn("%s: cannot read checkpoint header: %s", o->key,
			 strerror((int)-n));
		return CKPT_TYPE_UNKNOWN;
	}
	/* ordinals 0 (checkpoint in both tables), 3 and 4 (2.3.3+ only) need
	 * no tail; 1 and 2 mean different things before and after 2.3.3,
	 * which only field 9 at the end of the file tells */
	rc = pstuff_decode_ckpt_head(head, (size_t)n, tail, o->size, &info);
	if (rc == 0 && (info.type_ordinal == 1 || info.type_ordinal == 2) &&
	    o->size >= 2) {
		if (be_read(fs->ckpt, o->key, tail, 2, (off_t)(o->size - 2)) !=
		    2)
			return CKPT_TYPE_UNKNOWN;
		rc = pstuff_decode_ckpt_head(head, (size_t)n, tail, o->size,
					     &info);
	}
	if (rc) {
		log_warn("%s: not a PipelineState checkpoint (%s)", o->key,
			 strerror(-rc));
		return CKPT_TYPE_UNKNOWN;
	}
	return info.type;
}

int ckinfo_type(struct stfs *fs, const struct cat_obj *o)
{
	struct ckinfo_table *t = fs->ck;
	size_t b = pcache_hash(o->key) % CK_BUCKETS;
	struct ck_entry *e;
	int type = ck_lookup(t, o, b);

	if (type >= 0)
		return type;
	type = ck_decode(fs, o);
	e = calloc(1, sizeof(*e));
	if (!e || !(e->key = strdup(o->key))) {
		free(e);
		return type;
	}
	e->size = o->size;
	e->mtime_ns = o->mtime_ns;
	e->type = type;
	pthread_mutex_lock(&t->lock);
	e->next = t->bucket[b];
	t->bucket[b] = e;
	pthread_mutex_unlock(&t->lock);
	return type;
}

#define CK_THREADS 8

struct prefetch {
	struct stfs *fs;
	const struct cat_obj **objs;
	size_t n;
	size_t next; /* atomic */
};

static void *prefetch_worker(void *arg)
{
	struct prefetch *p = arg;
	size_t i;

	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n)
		ckinfo_type(p->fs, p->objs[i]);
	return NULL;
}

void ckinfo_prefetch_job(struct stfs *fs, const struct cat_job *cj)
{
	struct prefetch p = {.fs = fs};
	pthread_t t[CK_THREADS];
	size_t cap = 0, nt = 0;

	for (size_t i = 0; i < cj->n_pipes; i++)
		for (size_t j = 0; j < cj->pipes[i].n_ckpts; j++)
			cap += cj->pipes[i].ckpts[j].n_objs;
	p.objs = calloc(cap + 1, sizeof(*p.objs));
	if (!p.objs)
		return;
	for (size_t i = 0; i < cj->n_pipes; i++)
		for (size_t j = 0; j < cj->pipes[i].n_ckpts; j++) {
			const struct cat_ckpt *c = &cj->pipes[i].ckpts[j];

			for (size_t k = 0; k < c->n_objs; k++) {
				const struct cat_obj *o = c->objs[k];
				size_t b = pcache_hash(o->key) % CK_BUCKETS;

				if (o->kind == CAT_REAL && !o->rn.tmp &&
				    !o->restore_point &&
				    ck_lookup(fs->ck, o, b) < 0)
					p.objs[p.n++] = o;
			}
		}
	if (p.n > 1)
		for (; nt < CK_THREADS && nt < p.n; nt++)
			if (pthread_create(&t[nt], NULL, prefetch_worker, &p))
				break;
	prefetch_worker(&p); /* this thread helps, and finishes the rest */
	for (size_t i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	free(p.objs);
}
