#include "model/ckinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "util/log.h"
#include "util/pcache.h"
#include "model/protostuff.h"

#define CK_BUCKETS 4096
#define CK_HEAD	   256

/*
 * The two in-memory caches, decoded types and decoded summaries, are one
 * shape: entries keyed by object key, size and mtime (objects never change
 * in place) in a hash table, dropped oldest first while a cap (entries or
 * bytes) is exceeded (README "Memory").  Each entry embeds a ck_link as
 * `link`; the cache's drop() frees the entry around it.  Under the table's
 * lock.
 */
struct ck_link {
	char *key;
	uint64_t size;
	int64_t mtime_ns;
	struct ck_link *next;  /* bucket chain */
	struct ck_link *newer; /* insertion order */
	size_t cost;	       /* bytes charged to the cache */
};

struct ck_cache {
	struct ck_link *bucket[CK_BUCKETS];
	struct ck_link *oldest, *newest;
	size_t n, bytes, max_entries, max_bytes;
	uint64_t evictions;
	void (*drop)(struct ck_link *l);
};

/* the entry of `type` around link `l` */
#define CK_OF(l, type) ((type *)(void *)((char *)(l)-offsetof(type, link)))

struct ck_entry {
	struct ck_link link;
	int type;
};

struct ckinfo_table {
	pthread_mutex_t lock;
	/* README "Memory": type_cache_max_entries / _mb; protected by lock */
	struct ck_cache types;
	/* README "Memory": info_cache_max_entries / _mb; protected by lock */
	struct ck_cache sums;
	int fd;		       /* the persistent cache, appended to; -1: none */
	int sfd;	       /* the persistent summary cache; -1: none */
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

static struct ck_link *cc_find(const struct ck_cache *c, const char *key,
			       uint64_t size, int64_t mtime_ns, size_t b)
{
	for (struct ck_link *l = c->bucket[b]; l; l = l->next)
		if (l->size == size && l->mtime_ns == mtime_ns &&
		    strcmp(l->key, key) == 0)
			return l;
	return NULL;
}

/* Drop the oldest entries while a cap is exceeded.  A dropped one is
 * decoded again when asked: a cap costs reads, never a wrong type or
 * summary. */
static void cc_evict(struct ck_cache *c)
{
	while (c->oldest && ((c->max_entries && c->n > c->max_entries) ||
			     (c->max_bytes && c->bytes > c->max_bytes))) {
		struct ck_link *l = c->oldest, **pp;

		pp = &c->bucket[pcache_hash(l->key) % CK_BUCKETS];
		while (*pp && *pp != l)
			pp = &(*pp)->next;
		if (*pp)
			*pp = l->next;
		c->oldest = l->newer;
		if (!c->oldest)
			c->newest = NULL;
		c->n--;
		c->bytes -= l->cost;
		c->evictions++;
		c->drop(l);
	}
}

/* Add `l` (key, size, mtime and cost set) as the newest of bucket `b`. */
static void cc_add(struct ck_cache *c, struct ck_link *l, size_t b)
{
	l->next = c->bucket[b];
	c->bucket[b] = l;
	l->newer = NULL;
	if (c->newest)
		c->newest->newer = l;
	else
		c->oldest = l;
	c->newest = l;
	c->n++;
	c->bytes += l->cost;
	cc_evict(c);
}

static void cc_free_all(struct ck_cache *c)
{
	for (size_t i = 0; i < CK_BUCKETS; i++) {
		struct ck_link *l = c->bucket[i], *next;

		for (; l; l = next) {
			next = l->next;
			c->drop(l);
		}
		c->bucket[i] = NULL;
	}
	c->oldest = c->newest = NULL;
	c->n = c->bytes = 0;
}

static void cc_set_caps(struct ckinfo_table *t, struct ck_cache *c,
			size_t max_entries, size_t max_bytes)
{
	pthread_mutex_lock(&t->lock);
	c->max_entries = max_entries;
	c->max_bytes = max_bytes;
	cc_evict(c);
	pthread_mutex_unlock(&t->lock);
}

static void cc_stats(struct ckinfo_table *t, const struct ck_cache *c,
		     size_t *entries, size_t *bytes, uint64_t *evictions)
{
	pthread_mutex_lock(&t->lock);
	*entries = c->n;
	*bytes = c->bytes;
	*evictions = c->evictions;
	pthread_mutex_unlock(&t->lock);
}

static void ck_entry_drop(struct ck_link *l)
{
	free(l->key);
	free(CK_OF(l, struct ck_entry));
}

static void sum_entry_drop(struct ck_link *l);

struct ckinfo_table *ckinfo_new(void)
{
	struct ckinfo_table *t = calloc(1, sizeof(*t));

	if (t) {
		pthread_mutex_init(&t->lock, NULL);
		t->types.drop = ck_entry_drop;
		t->sums.drop = sum_entry_drop;
		t->fd = -1;
		t->sfd = -1;
	}
	return t;
}

void ckinfo_set_caps(struct ckinfo_table *t, size_t max_entries,
		     size_t max_bytes)
{
	cc_set_caps(t, &t->types, max_entries, max_bytes);
}

void ckinfo_get_stats(struct ckinfo_table *t, size_t *entries, size_t *bytes,
		      uint64_t *evictions)
{
	cc_stats(t, &t->types, entries, bytes, evictions);
}

static void ck_insert(struct ckinfo_table *t, const char *key, uint64_t size,
		      int64_t mtime_ns, int type);
static void sum_load(struct ckinfo_table *t, const char *path);

void ckinfo_free(struct ckinfo_table *t)
{
	if (!t)
		return;
	cc_free_all(&t->types);
	cc_free_all(&t->sums);
	if (t->fd >= 0)
		close(t->fd);
	if (t->sfd >= 0)
		close(t->sfd);
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
	/* the summaries beside it */
	snprintf(path, sizeof(path), "%s/ckinfo-%016" PRIx64 ".summary",
		 state_dir, pcache_hash(uri));
	sum_load(t, path);
	return 0;
}

static int ck_lookup(struct ckinfo_table *t, const struct cat_obj *o, size_t b)
{
	struct ck_link *l;
	int type = -1;

	pthread_mutex_lock(&t->lock);
	l = cc_find(&t->types, o->key, o->size, o->mtime_ns, b);
	if (l)
		type = CK_OF(l, struct ck_entry)->type;
	pthread_mutex_unlock(&t->lock);
	return type;
}

/* *read_err is set (-errno) when the store could not be read */
static int ck_decode(struct backend *be, const struct cat_obj *o, int *read_err)
{
	uint8_t head[CK_HEAD], tail[2] = {0x48, 0x00};
	struct pstuff_ckpt info;
	ssize_t n;
	int rc;

	n = be_read(be, o->key, head, sizeof(head), 0);
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
		n = be_read(be, o->key, tail, 2, (off_t)(o->size - 2));
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

	if (!e || !(e->link.key = strdup(key))) {
		free(e);
		return;
	}
	e->link.size = size;
	e->link.mtime_ns = mtime_ns;
	e->link.cost = sizeof(*e) + strlen(key) + 1;
	e->type = type;
	pthread_mutex_lock(&t->lock);
	cc_add(&t->types, &e->link, b);
	pthread_mutex_unlock(&t->lock);
}

/* Remember a known type, in memory and (across mounts) in state_dir. */
static void ck_remember(struct ckinfo_table *t, const struct cat_obj *o,
			int type)
{
	char line[4300];
	int n;

	ck_insert(t, o->key, o->size, o->mtime_ns, type);
	if (t->fd >= 0) {
		n = snprintf(line, sizeof(line),
			     "%d %" PRIu64 " %" PRId64 " %s\n", type, o->size,
			     o->mtime_ns, o->key);
		if (n > 0 && (size_t)n < sizeof(line) &&
		    write(t->fd, line, (size_t)n) != n)
			log_debug("ckinfo cache: short write");
	}
}

int ckinfo_type(struct ckinfo_table *t, const struct ckinfo_src *src,
		const struct cat_obj *o)
{
	size_t b;
	int type;
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
	type = ck_decode(src->be, o, &read_err);
	if (read_err == -ETIMEDOUT) {
		/* the store does not answer: for two deadlines no other
		 * header is asked (unknown counts as protected), so one `du`
		 * waits for one deadline, not one per object and pass (README
		 * "Failure modes") */
		pthread_mutex_lock(&t->lock);
		t->fail_until_ms = mono_ms() + 2 * (int64_t)src->timeout_ms;
		pthread_mutex_unlock(&t->lock);
	}
	/* an unknown type is never remembered, in memory or in state_dir: a
	 * read error may be transient, and the next ask must read again
	 * (callers count unknown as protected meanwhile) */
	if (type == CKPT_TYPE_UNKNOWN)
		return type;
	ck_remember(t, o, type);
	return type;
}

/* ---- full summaries (the `info` file and the pipeline status) */

const struct cat_obj *ckinfo_ckpt_object(const struct cat_ckpt *c)
{
	const struct cat_obj *best = NULL;

	if (!c || c->doc)
		return NULL;
	for (size_t i = 0; i < c->n_objs; i++) {
		const struct cat_obj *o = c->objs[i];

		if (o->kind != CAT_REAL || o->rn.tmp || o->rn.crc)
			continue;
		/* duplicates of one id: the engine's own choice, the newest
		 * write timestamp (strict >: the first in listing order) */
		if (!best || o->rn.write_ts > best->rn.write_ts)
			best = o;
	}
	return best;
}

#define CK_WINDOW ((size_t)64 << 10)

/*
 * A summary as the table keeps it (README "Memory"): the decoder's
 * fields, its statistics at their count, and its actions packed, each
 * name at its own length in one block (a struct pstuff_action holds
 * PSTUFF_NAME_MAX + 1 bytes of name: 280 bytes for a name of ~50, most of
 * an entry, so 21,000 summaries overflowed info_cache_max_mb).  `s` has no
 * actions of its own; sum_unpack rebuilds them for the caller.
 */
struct ck_act {
	uint64_t state_bytes;
	int32_t parallelism;
	uint32_t subtasks;
	uint32_t name_off; /* in ck_sum.names, NUL-terminated */
	bool coordinator;
};

struct ck_sum {
	struct ck_link link;
	struct pstuff_summary s; /* actions NULL; stats at their count */
	struct ck_act *acts;	 /* sum_n_ent(s.n_actions) of them, or NULL */
	char *names;
	size_t names_len;
};

static size_t sum_n_ent(size_t n)
{
	return n < PSTUFF_SUM_MAX_ENT ? n : PSTUFF_SUM_MAX_ENT;
}

static size_t sum_cost(const struct ck_sum *e)
{
	return sizeof(*e) + strlen(e->link.key) + 1 +
	       (e->acts ? sum_n_ent(e->s.n_actions) * sizeof(*e->acts) : 0) +
	       e->names_len +
	       (e->s.stats ? sum_n_ent(e->s.n_stats) * sizeof(*e->s.stats) : 0);
}

/* the statistics of `from` into `to` at their count; 0 or -ENOMEM */
static int stats_copy(const struct pstuff_summary *from,
		      struct pstuff_summary *to)
{
	size_t ns = sum_n_ent(from->n_stats);

	to->stats = NULL;
	if (!from->stats || !ns)
		return 0;
	to->stats = malloc(ns * sizeof(*to->stats));
	if (!to->stats)
		return -ENOMEM;
	memcpy(to->stats, from->stats, ns * sizeof(*to->stats));
	return 0;
}

/* `from` packed into *e (link untouched); 0 or -ENOMEM (*e then holds
 * nothing to free) */
static int sum_pack(const struct pstuff_summary *from, struct ck_sum *e)
{
	size_t na = from->actions ? sum_n_ent(from->n_actions) : 0, len = 0;

	e->s = *from;
	e->s.actions = NULL;
	e->acts = NULL;
	e->names = NULL;
	e->names_len = 0;
	if (stats_copy(from, &e->s))
		return -ENOMEM;
	if (!na)
		return 0;
	for (size_t i = 0; i < na; i++)
		len += strnlen(from->actions[i].name,
			       sizeof(from->actions[i].name) - 1) +
		       1;
	e->acts = malloc(na * sizeof(*e->acts));
	e->names = malloc(len);
	if (!e->acts || !e->names) {
		free(e->acts);
		free(e->names);
		free(e->s.stats);
		e->acts = NULL;
		e->names = NULL;
		e->s.stats = NULL;
		return -ENOMEM;
	}
	e->names_len = len;
	len = 0;
	for (size_t i = 0; i < na; i++) {
		const struct pstuff_action *a = &from->actions[i];
		size_t n = strnlen(a->name, sizeof(a->name) - 1);

		e->acts[i] = (struct ck_act){
			.state_bytes = a->state_bytes,
			.parallelism = a->parallelism,
			.subtasks = a->subtasks,
			.name_off = (uint32_t)len,
			.coordinator = a->coordinator,
		};
		memcpy(e->names + len, a->name, n);
		e->names[len + n] = '\0';
		len += n + 1;
	}
	return 0;
}

/* a copy of the kept summary `e` into *to, as the decoder made it (the
 * caller's, freed with pstuff_summary_free); 0 or -ENOMEM */
static int sum_unpack(const struct ck_sum *e, struct pstuff_summary *to)
{
	size_t na = e->acts ? sum_n_ent(e->s.n_actions) : 0;

	*to = e->s;
	to->actions = NULL;
	if (stats_copy(&e->s, to))
		return -ENOMEM;
	if (!na)
		return 0;
	to->actions = calloc(na, sizeof(*to->actions));
	if (!to->actions) {
		pstuff_summary_free(to);
		return -ENOMEM;
	}
	for (size_t i = 0; i < na; i++) {
		struct pstuff_action *a = &to->actions[i];
		const struct ck_act *k = &e->acts[i];

		snprintf(a->name, sizeof(a->name), "%s",
			 e->names + k->name_off);
		a->parallelism = k->parallelism;
		a->subtasks = k->subtasks;
		a->coordinator = k->coordinator;
		a->state_bytes = k->state_bytes;
	}
	return 0;
}

/* a deep copy of `from` into *to (the caller's, freed with
 * pstuff_summary_free); 0 or -ENOMEM */
static int sum_copy(const struct pstuff_summary *from,
		    struct pstuff_summary *to)
{
	size_t na = sum_n_ent(from->n_actions);

	*to = *from;
	to->actions = NULL;
	if (stats_copy(from, to))
		return -ENOMEM;
	if (from->actions && na) {
		to->actions = malloc(na * sizeof(*to->actions));
		if (!to->actions) {
			pstuff_summary_free(to);
			return -ENOMEM;
		}
		memcpy(to->actions, from->actions, na * sizeof(*to->actions));
	}
	return 0;
}

/* 1 and a copy in *out (when out is not NULL) if the table holds this
 * version of `o`, else 0; -ENOMEM */
static int sum_lookup(struct ckinfo_table *t, const struct cat_obj *o, size_t b,
		      struct pstuff_summary *out)
{
	struct ck_link *l;
	int rc = 0;

	pthread_mutex_lock(&t->lock);
	l = cc_find(&t->sums, o->key, o->size, o->mtime_ns, b);
	if (l)
		rc = out ? (sum_unpack(CK_OF(l, struct ck_sum), out) ? -ENOMEM
								     : 1)
			 : 1;
	pthread_mutex_unlock(&t->lock);
	return rc;
}

static void sum_entry_free(struct ck_sum *e)
{
	pstuff_summary_free(&e->s);
	free(e->acts);
	free(e->names);
	free(e->link.key);
	free(e);
}

static void sum_entry_drop(struct ck_link *l)
{
	sum_entry_free(CK_OF(l, struct ck_sum));
}

/* Whether `cost` more bytes in one more entry would pass a cap of `c`. */
static bool cc_full(const struct ck_cache *c, size_t cost)
{
	return (c->max_entries && c->n + 1 > c->max_entries) ||
	       (c->max_bytes && c->bytes + cost > c->max_bytes);
}

/* Consumes *s (freed and zeroed) whether it is kept or not; an entry for
 * the same version already there stays (another thread decoded it too).
 * `keep_old`: refuse it (false) rather than drop the oldest when the caps
 * are reached (loading state_dir); else true. */
static bool sum_insert_as(struct ckinfo_table *t, const char *key,
			  uint64_t size, int64_t mtime_ns,
			  struct pstuff_summary *s, bool keep_old)
{
	size_t b = pcache_hash(key) % CK_BUCKETS;
	struct ck_sum *e = calloc(1, sizeof(*e));

	if (!e || !(e->link.key = strdup(key))) {
		free(e);
		pstuff_summary_free(s);
		return true;
	}
	e->link.size = size;
	e->link.mtime_ns = mtime_ns;
	/* kept at its exact size: the decoder's arrays grow by 16 entries of
	 * ~280 bytes, most of it unused (67 MB for 15,000 summaries) */
	if (sum_pack(s, e)) {
		free(e->link.key);
		free(e);
		pstuff_summary_free(s);
		return true;
	}
	pstuff_summary_free(s);
	e->link.cost = sum_cost(e);
	pthread_mutex_lock(&t->lock);
	if (cc_find(&t->sums, key, size, mtime_ns, b)) {
		pthread_mutex_unlock(&t->lock);
		sum_entry_free(e);
		return true;
	}
	if (keep_old && cc_full(&t->sums, e->link.cost)) {
		pthread_mutex_unlock(&t->lock);
		sum_entry_free(e);
		return false;
	}
	cc_add(&t->sums, &e->link, b);
	pthread_mutex_unlock(&t->lock);
	return true;
}

static void sum_insert(struct ckinfo_table *t, const char *key, uint64_t size,
		       int64_t mtime_ns, struct pstuff_summary *s)
{
	(void)sum_insert_as(t, key, size, mtime_ns, s, false);
}

void ckinfo_set_summary_caps(struct ckinfo_table *t, size_t max_entries,
			     size_t max_bytes)
{
	cc_set_caps(t, &t->sums, max_entries, max_bytes);
}

void ckinfo_get_summary_stats(struct ckinfo_table *t, size_t *entries,
			      size_t *bytes, uint64_t *evictions)
{
	cc_stats(t, &t->sums, entries, bytes, evictions);
}

/* Strings go to the cache file as hex: keys and action names may be any
 * bytes, JSON wants UTF-8. */
static json_t *hex_str(const char *s)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = strlen(s);
	char *h = malloc(2 * n + 1);
	json_t *j;

	if (!h)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		h[2 * i] = digits[(unsigned char)s[i] >> 4];
		h[2 * i + 1] = digits[(unsigned char)s[i] & 15];
	}
	h[2 * n] = '\0';
	j = json_string(h);
	free(h);
	return j;
}

/* 0, or -1 when `j` is not hex of at most cap-1 NUL-free bytes */
static int unhex_str(json_t *j, char *out, size_t cap)
{
	const char *h = json_string_value(j);
	size_t n = h ? strlen(h) : 1;

	if (n % 2 || n / 2 >= cap)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(h + 2 * i, "%2x", &v) != 1 || !v)
			return -1;
		out[i] = (char)v;
	}
	out[n / 2] = '\0';
	return 0;
}

static void sum_persist(struct ckinfo_table *t, const char *key, uint64_t size,
			int64_t mtime_ns, const struct pstuff_summary *s)
{
	const struct pstuff_ckpt *c = &s->ck;
	json_t *acts = json_array(), *stats = json_array(), *j;
	size_t na = s->n_actions < PSTUFF_SUM_MAX_ENT ? s->n_actions
						      : PSTUFF_SUM_MAX_ENT;
	size_t ns = s->n_stats < PSTUFF_SUM_MAX_ENT ? s->n_stats
						    : PSTUFF_SUM_MAX_ENT;
	char *line;

	if (t->sfd < 0 || !acts || !stats) {
		json_decref(acts);
		json_decref(stats);
		return;
	}
	for (size_t i = 0; i < na; i++) {
		const struct pstuff_action *a = &s->actions[i];

		json_array_append_new(
			acts,
			json_pack("[o,i,I,b,I]", hex_str(a->name),
				  (int)a->parallelism, (json_int_t)a->subtasks,
				  a->coordinator, (json_int_t)a->state_bytes));
	}
	for (size_t i = 0; i < ns; i++) {
		const struct pstuff_taskstat *x = &s->stats[i];

		json_array_append_new(
			stats, json_pack("[I,i,I,I]", (json_int_t)x->vertex_id,
					 (int)x->acked, (json_int_t)x->subtasks,
					 (json_int_t)x->state_size));
	}
	j = json_pack("{s:o,s:I,s:I,s:o,s:i,s:I,s:I,s:I,s:I,s:i,s:i,s:i,s:b,"
		      "s:I,s:I,s:o,s:I,s:o}",
		      "k", hex_str(key), "s", (json_int_t)size, "m",
		      (json_int_t)mtime_ns, "j", hex_str(c->job_id), "p",
		      (int)c->pipeline_id, "c", (json_int_t)c->checkpoint_id,
		      "J", (json_int_t)c->cc_job_id, "t",
		      (json_int_t)c->trigger_ts, "d",
		      (json_int_t)c->completed_ts, "o", c->type_ordinal, "b",
		      c->table, "y", c->type, "r", c->is_restored, "l",
		      (json_int_t)c->states_len, "na", (json_int_t)s->n_actions,
		      "A", acts, "ns", (json_int_t)s->n_stats, "S", stats);
	if (!j)
		return;
	line = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (line) {
		size_t n = strlen(line);

		line[n] = '\n'; /* replaces the NUL: written with its length */
		if (write(t->sfd, line, n + 1) != (ssize_t)(n + 1))
			log_debug("ckinfo summary cache: short write");
		free(line);
	}
}

#define JI(o, k) json_integer_value(json_object_get(o, k))

/* One line of the summary cache file into the table; bad lines are
 * skipped (the object is decoded again when asked).  false: the table is
 * full (info_cache_max_entries / _mb), the line was not kept. */
static bool sum_load_line(struct ckinfo_table *t, const char *line)
{
	json_t *j = json_loads(line, 0, NULL), *e;
	struct pstuff_summary s = {0};
	char key[4096];
	size_t i;
	bool kept = true;

	if (!j)
		return true;
	if (unhex_str(json_object_get(j, "k"), key, sizeof(key)) ||
	    unhex_str(json_object_get(j, "j"), s.ck.job_id,
		      sizeof(s.ck.job_id)) ||
	    !json_is_array(json_object_get(j, "A")) ||
	    !json_is_array(json_object_get(j, "S")) || JI(j, "y") < 0 ||
	    JI(j, "y") > CKPT_TYPE_UNKNOWN)
		goto out;
	s.ck.pipeline_id = (int32_t)JI(j, "p");
	s.ck.checkpoint_id = JI(j, "c");
	s.ck.cc_job_id = JI(j, "J");
	s.ck.trigger_ts = JI(j, "t");
	s.ck.completed_ts = JI(j, "d");
	s.ck.type_ordinal = (int)JI(j, "o");
	s.ck.table = (int)JI(j, "b");
	s.ck.type = (int)JI(j, "y");
	s.ck.is_restored = json_is_true(json_object_get(j, "r"));
	s.ck.states_len = (uint64_t)JI(j, "l");
	s.ck.has_states = true;
	s.n_actions = (size_t)JI(j, "na");
	s.n_stats = (size_t)JI(j, "ns");
	if (json_array_size(json_object_get(j, "A")) !=
		    (s.n_actions < PSTUFF_SUM_MAX_ENT ? s.n_actions
						      : PSTUFF_SUM_MAX_ENT) ||
	    json_array_size(json_object_get(j, "S")) !=
		    (s.n_stats < PSTUFF_SUM_MAX_ENT ? s.n_stats
						    : PSTUFF_SUM_MAX_ENT))
		goto out;
	s.actions = calloc(json_array_size(json_object_get(j, "A")) + 1,
			   sizeof(*s.actions));
	s.stats = calloc(json_array_size(json_object_get(j, "S")) + 1,
			 sizeof(*s.stats));
	if (!s.actions || !s.stats)
		goto out;
	json_array_foreach (json_object_get(j, "A"), i, e) {
		struct pstuff_action *a = &s.actions[i];

		if (json_array_size(e) != 5 ||
		    unhex_str(json_array_get(e, 0), a->name, sizeof(a->name)))
			goto out;
		a->parallelism =
			(int32_t)json_integer_value(json_array_get(e, 1));
		a->subtasks =
			(uint32_t)json_integer_value(json_array_get(e, 2));
		a->coordinator = json_is_true(json_array_get(e, 3));
		a->state_bytes =
			(uint64_t)json_integer_value(json_array_get(e, 4));
	}
	json_array_foreach (json_object_get(j, "S"), i, e) {
		struct pstuff_taskstat *x = &s.stats[i];

		if (json_array_size(e) != 4)
			goto out;
		x->vertex_id = json_integer_value(json_array_get(e, 0));
		x->acked = (int32_t)json_integer_value(json_array_get(e, 1));
		x->subtasks =
			(uint32_t)json_integer_value(json_array_get(e, 2));
		x->state_size =
			(uint64_t)json_integer_value(json_array_get(e, 3));
	}
	kept = sum_insert_as(t, key, (uint64_t)JI(j, "s"), JI(j, "m"), &s,
			     true);
out:
	pstuff_summary_free(&s);
	json_decref(j);
	return kept;
}

static void sum_load(struct ckinfo_table *t, const char *path)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return;
	if (lseek(fd, 0, SEEK_END) > 4 * CK_FILE_MAX && ftruncate(fd, 0) != 0) {
		close(fd);
		return;
	}
	f = fdopen(dup(fd), "r");
	if (f) {
		rewind(f);
		/* the first lines that fit: the file is in the order of the
		 * walks that decoded them, and a walk in that order finds
		 * them; keeping the last ones instead (dropping the oldest)
		 * made each lookup of such a walk a miss that dropped the
		 * next summary it asks for (README "Memory") */
		while (getline(&line, &cap, f) > 0)
			if (!sum_load_line(t, line))
				break;
		free(line);
		fclose(f);
	}
	t->sfd = fd;
}

struct ck_src {
	struct backend *be;
	const char *key;
};

static ssize_t ck_src_read(void *cookie, void *buf, size_t len, uint64_t off)
{
	const struct ck_src *c = cookie;

	return be_read(c->be, c->key, buf, len, (off_t)off);
}

int ckinfo_summary(struct ckinfo_table *t, const struct ckinfo_src *from,
		   const struct cat_obj *o, struct pstuff_summary *out)
{
	struct ck_src src = {.be = from->be, .key = o->key};
	struct pstuff_summary s;
	size_t b = pcache_hash(o->key) % CK_BUCKETS;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = sum_lookup(t, o, b, out);
	if (rc < 0)
		return rc;
	if (rc > 0 && !out->ck.has_states) {
		pstuff_summary_free(out);
		return -EPROTO; /* this version does not decode (remembered) */
	}
	if (rc > 0)
		return 0;
	if (ck_failing(t))
		return -EAGAIN;
	rc = pstuff_summarize(ck_src_read, &src, o->size, CK_WINDOW, false, &s);
	if (rc == -ETIMEDOUT) {
		/* as for the types: one deadline per walk, not per object */
		pthread_mutex_lock(&t->lock);
		t->fail_until_ms = mono_ms() + 2 * (int64_t)from->timeout_ms;
		pthread_mutex_unlock(&t->lock);
	}
	if (rc) {
		log_warn("%s: cannot summarise the checkpoint: %s", o->key,
			 strerror(-rc));
		/* bytes that do not decode stay so for this version (objects
		 * never change in place): remembered in memory, so a walk does
		 * not read and log them again; a read error is not */
		if (rc == -EPROTO) {
			memset(&s, 0, sizeof(s));
			sum_insert(t, o->key, o->size, o->mtime_ns, &s);
		}
		return rc;
	}
	/* the type is known now too */
	if (s.ck.type != CKPT_TYPE_UNKNOWN && ck_lookup(t, o, b) < 0)
		ck_remember(t, o, s.ck.type);
	sum_persist(t, o->key, o->size, o->mtime_ns, &s);
	rc = sum_copy(&s, out);
	sum_insert(t, o->key, o->size, o->mtime_ns, &s);
	return rc;
}

/* reads in flight against a remote store, per prefetch (README
 * "Performance") */
#ifndef CK_THREADS
#define CK_THREADS 16
#endif

struct prefetch {
	struct ckinfo_table *t;
	const struct ckinfo_src *src;
	const struct cat_obj **objs;
	bool *sum; /* per object: ckinfo_summary, else ckinfo_type; NULL: all
		    * as `summary` says */
	size_t n;
	size_t next;  /* atomic */
	bool summary; /* ckinfo_summary, else ckinfo_type */
};

static void *prefetch_worker(void *arg)
{
	struct prefetch *p = arg;
	struct pstuff_summary s;
	size_t i;

	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) < p->n) {
		if (p->sum ? p->sum[i] : p->summary) {
			if (ckinfo_summary(p->t, p->src, p->objs[i], &s) == 0)
				pstuff_summary_free(&s);
		} else
			ckinfo_type(p->t, p->src, p->objs[i]);
	}
	return NULL;
}

/* Work through p->objs with a few threads against a remote store: one
 * read in flight per object, at most CK_THREADS (a thread costs far less
 * than the round trip it overlaps). */
static void prefetch_run(struct prefetch *p)
{
	pthread_t t[CK_THREADS];
	size_t nt = 0;

	/* threads pay off against a remote store only */
	if (p->n > 1 && (p->src->be->ops->caps & BE_CAP_REMOTE))
		for (; nt + 1 < CK_THREADS && nt + 1 < p->n; nt++)
			if (pthread_create(&t[nt], NULL, prefetch_worker, p))
				break;
	prefetch_worker(p); /* this thread helps, and finishes the rest */
	for (size_t i = 0; i < nt; i++)
		pthread_join(t[i], NULL);
}

void ckinfo_prefetch_info(struct ckinfo_table *t, const struct ckinfo_src *src,
			  const struct cat_job *cj)
{
	struct prefetch p = {.t = t, .src = src, .summary = true};
	size_t cap = 0;

	if (!cj || !(src->be->ops->caps & BE_CAP_REMOTE))
		return;
	for (size_t i = 0; i < cj->n_pipes; i++)
		cap += cj->pipes[i].n_ckpts;
	if (!cap || !(p.objs = calloc(cap, sizeof(*p.objs))))
		return;
	for (size_t i = 0; i < cj->n_pipes; i++)
		for (size_t j = 0; j < cj->pipes[i].n_ckpts; j++) {
			const struct cat_obj *o =
				ckinfo_ckpt_object(&cj->pipes[i].ckpts[j]);

			if (o &&
			    sum_lookup(t, o, pcache_hash(o->key) % CK_BUCKETS,
				       NULL) == 0)
				p.objs[p.n++] = o;
		}
	prefetch_run(&p);
	free(p.objs);
}

void ckinfo_prefetch_pipe(struct ckinfo_table *t, const struct ckinfo_src *src,
			  const struct cat_pipe *cp)
{
	struct prefetch p = {.t = t, .src = src, .summary = true};

	if (!cp || !cp->n_ckpts || !(src->be->ops->caps & BE_CAP_REMOTE))
		return; /* one local read each: nothing to overlap */
	p.objs = calloc(cp->n_ckpts, sizeof(*p.objs));
	if (!p.objs)
		return;
	for (size_t i = 0; i < cp->n_ckpts; i++) {
		const struct cat_obj *o = ckinfo_ckpt_object(&cp->ckpts[i]);

		if (o && sum_lookup(t, o, pcache_hash(o->key) % CK_BUCKETS,
				    NULL) == 0)
			p.objs[p.n++] = o;
	}
	prefetch_run(&p);
	free(p.objs);
}

/*
 * Whether the type of `o` is better learned from its full summary: on a
 * remote store, the object a checkpoint's `info` describes, when it fits
 * in one summary window.  The GET that reads its header reads all of it
 * then (a read-ahead window is larger), and the summary gives the type,
 * so the walk that stats `info` and the pipeline `status` next reads it
 * no second time, whatever the read-ahead cache kept meanwhile.  Larger
 * objects get the header read alone (their summary may take more reads).
 */
static bool type_by_summary(struct ckinfo_table *t,
			    const struct ckinfo_src *src,
			    const struct cat_ckpt *c, const struct cat_obj *o)
{
	return (src->be->ops->caps & BE_CAP_REMOTE) && o->size <= CK_WINDOW &&
	       ckinfo_ckpt_object(c) == o &&
	       sum_lookup(t, o, pcache_hash(o->key) % CK_BUCKETS, NULL) == 0;
}

void ckinfo_prefetch_job(struct ckinfo_table *t, const struct ckinfo_src *src,
			 const struct cat_job *cj)
{
	struct prefetch p = {.t = t, .src = src};
	size_t cap = 0;

	for (size_t i = 0; i < cj->n_pipes; i++)
		for (size_t j = 0; j < cj->pipes[i].n_ckpts; j++)
			cap += cj->pipes[i].ckpts[j].n_objs;
	p.objs = calloc(cap + 1, sizeof(*p.objs));
	p.sum = calloc(cap + 1, sizeof(*p.sum));
	if (!p.objs || !p.sum) {
		free(p.objs);
		free(p.sum);
		return;
	}
	for (size_t i = 0; i < cj->n_pipes; i++)
		for (size_t j = 0; j < cj->pipes[i].n_ckpts; j++) {
			const struct cat_ckpt *c = &cj->pipes[i].ckpts[j];

			for (size_t k = 0; k < c->n_objs; k++) {
				const struct cat_obj *o = c->objs[k];
				size_t b = pcache_hash(o->key) % CK_BUCKETS;

				if (o->kind != CAT_REAL || o->rn.tmp ||
				    o->rn.crc || ck_lookup(t, o, b) >= 0)
					continue;
				/* a restore point is protected whatever its
				 * type (the deletion path asks none); a small
				 * one is summarised all the same, for `info` */
				p.sum[p.n] = type_by_summary(t, src, c, o);
				if (!o->restore_point || p.sum[p.n])
					p.objs[p.n++] = o;
			}
		}
	prefetch_run(&p);
	free(p.objs);
	free(p.sum);
}
