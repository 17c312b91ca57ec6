#include "model/ckinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"
#include "util/pcache.h"
#include "model/protostuff.h"

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
	int fd;		       /* the persistent cache, appended to; -1: none */
	int64_t fail_until_ms; /* protected by lock; no header read before
				* (mono ms): one timed out, see ckinfo_type */
};

static bool ck_failing(struct ckinfo_table *t)
{
	bool f;

	pthread_mutex_lock(&t->lock);
	f = mono_ms() < t->fail_until_ms;
	pthread_mutex_unlock(&t->lock);
	return f;
}

struct ckinfo_table *ckinfo_new(void)
{
	struct ckinfo_table *t = calloc(1, sizeof(*t));

	if (t) {
		pthread_mutex_init(&t->lock, NULL);
		t->fd = -1;
	}
	return t;
}

static void ck_insert(struct ckinfo_table *t, const char *key, uint64_t size,
		      int64_t mtime_ns, int type);

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
	if (t->fd >= 0)
		close(t->fd);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* A cache file this large is started again rather than read. */
#define CK_FILE_MAX ((off_t)32 << 20)

int ckinfo_persist(struct ckinfo_table *t, const char *state_dir,
		   const char *uri)
{
	char path[4096], line[4300];
	FILE *f;
	int fd;

	if (!state_dir)
		return -EINVAL;
	/* one file per namespace: keys are relative to it */
	snprintf(path, sizeof(path), "%s/ckinfo-%016" PRIx64 ".cache",
		 state_dir, pcache_hash(uri));
	fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return -errno;
	if (lseek(fd, 0, SEEK_END) > CK_FILE_MAX && ftruncate(fd, 0) != 0) {
		close(fd);
		return -EIO;
	}
	f = fdopen(dup(fd), "r");
	if (f) {
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			char *p = line, *end;
			long type;
			uint64_t size;
			long long mtime;

			type = strtol(p, &end, 10);
			if (end == p || *end != ' ' || type < 0 ||
			    type >= CKPT_TYPE_UNKNOWN)
				continue;
			p = end + 1;
			size = strtoull(p, &end, 10);
			if (end == p || *end != ' ')
				continue;
			p = end + 1;
			mtime = strtoll(p, &end, 10);
			if (end == p || *end != ' ')
				continue;
			p = end + 1;
			p[strcspn(p, "\n")] = '\0';
			if (*p)
				ck_insert(t, p, size, mtime, (int)type);
		}
		fclose(f);
	}
	t->fd = fd;
	return 0;
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

/* *read_err is set (-errno) when the store could not be read */
static int ck_decode(struct stfs *fs, const struct cat_obj *o, int *read_err)
{
	uint8_t head[CK_HEAD], tail[2] = {0x48, 0x00};
	struct pstuff_ckpt info;
	ssize_t n;
	int rc;

	n = be_read(fs->ckpt, o->key, head, sizeof(head), 0);
	if (n < 0) {
		log_warn("%s: cannot read checkpoint header: %s", o->key,
			 strerror((int)-n));
		*read_err = (int)n;
		return CKPT_TYPE_UNKNOWN;
	}
	if ((uint64_t)n < (o->size < CK_HEAD ? o->size : CK_HEAD)) {
		log_warn("%s: short read of the checkpoint header", o->key);
		return CKPT_TYPE_UNKNOWN;
	}
	/* ordinals 0 (checkpoint in both tables), 3 and 4 (2.3.3+ only) need
	 * no tail; 1 and 2 mean different things before and after 2.3.3,
	 * which only field 9 at the end of the file tells */
	rc = pstuff_decode_ckpt_head(head, (size_t)n, tail, o->size, &info);
	if (rc == 0 && (info.type_ordinal == 1 || info.type_ordinal == 2) &&
	    o->size >= 2) {
		n = be_read(fs->ckpt, o->key, tail, 2, (off_t)(o->size - 2));
		if (n != 2) {
			*read_err = n < 0 ? (int)n : -EIO;
			return CKPT_TYPE_UNKNOWN;
		}
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

static void ck_insert(struct ckinfo_table *t, const char *key, uint64_t size,
		      int64_t mtime_ns, int type)
{
	size_t b = pcache_hash(key) % CK_BUCKETS;
	struct ck_entry *e = calloc(1, sizeof(*e));

	if (!e || !(e->key = strdup(key))) {
		free(e);
		return;
	}
	e->size = size;
	e->mtime_ns = mtime_ns;
	e->type = type;
	pthread_mutex_lock(&t->lock);
	e->next = t->bucket[b];
	t->bucket[b] = e;
	pthread_mutex_unlock(&t->lock);
}

int ckinfo_type(struct stfs *fs, const struct cat_obj *o)
{
	struct ckinfo_table *t = fs->ck;
	size_t b;
	int type;
	char line[4300];
	int n;
	int read_err = 0;

	/* a .crc sidecar holds checksums: its type is its object's */
	if (o->kind == CAT_REAL && o->rn.crc) {
		if (!o->of)
			return CKPT_TYPE_UNKNOWN;
		o = o->of;
	}
	b = pcache_hash(o->key) % CK_BUCKETS;
	type = ck_lookup(t, o, b);
	if (type >= 0)
		return type;
	if (ck_failing(t))
		return CKPT_TYPE_UNKNOWN;
	type = ck_decode(fs, o, &read_err);
	if (read_err == -ETIMEDOUT) {
		/* the store does not answer: for two deadlines no other
		 * header is asked (unknown counts as protected), so one `du`
		 * waits for one deadline, not one per object and pass (README
		 * "Failure modes") */
		pthread_mutex_lock(&t->lock);
		t->fail_until_ms = mono_ms() + 2 * (int64_t)fs->conf.timeout_ms;
		pthread_mutex_unlock(&t->lock);
	}
	/* an unknown type is never remembered, in memory or in state_dir: a
	 * read error may be transient, and the next ask must read again
	 * (callers count unknown as protected meanwhile) */
	if (type == CKPT_TYPE_UNKNOWN)
		return type;
	ck_insert(t, o->key, o->size, o->mtime_ns, type);
	/* remember decoded types across mounts */
	if (t->fd >= 0) {
		n = snprintf(line, sizeof(line),
			     "%d %" PRIu64 " %" PRId64 " %s\n", type, o->size,
			     o->mtime_ns, o->key);
		if (n > 0 && (size_t)n < sizeof(line) &&
		    write(t->fd, line, (size_t)n) != n)
			log_debug("ckinfo cache: short write");
	}
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
				    !o->rn.crc && !o->restore_point &&
				    ck_lookup(fs->ck, o, b) < 0)
					p.objs[p.n++] = o;
			}
		}
	/* threads pay off against a remote store only */
	if (p.n > 4 && strcmp(fs->ckpt->ops->name, "local") != 0)
		for (; nt < CK_THREADS && nt < p.n / 2; nt++)
			if (pthread_create(&t[nt], NULL, prefetch_worker, &p))
				break;
	prefetch_worker(&p); /* this thread helps, and finishes the rest */
	for (size_t i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
	free(p.objs);
}
