#include "util/pcache.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PC_BUCKETS 4096
#define PC_WAYS	   8 /* size records per set of the size table */

/* what a dropped versioned entry leaves: 32 bytes (pcache_keep_sizes) */
struct pc_size {
	uint64_t hash, ver; /* ver 0: an empty slot */
	uint64_t len;
	int64_t mtime_s;
};

struct pcache {
	pthread_mutex_t lock;
	unsigned ttl_ms;
	size_t max_entries, max_bytes; /* 0: no cap */
	size_t count, bytes;
	uint64_t evictions;
	/* least recently used first, one list per class: [0] dear, [1]
	 * cheap (pcache_insert_cheap), dropped first */
	struct pc_entry *oldest[2], *newest[2];
	size_t inserts_since_sweep;
	struct pc_entry *bucket[PC_BUCKETS]; /* protected by lock */
	/* n_sets * PC_WAYS size records, newest first in a set; NULL: none
	 * kept.  size_bytes is charged to the byte cap */
	struct pc_size *sizes;
	size_t n_sets, size_bytes;
	uint64_t size_hits;
};

static int64_t pc_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t pcache_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t pcache_mix(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t w;

	/* word at a time: a job's JSON is kilobytes, hashed per lookup */
	for (; len >= 8; b += 8, len -= 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	for (; len; b++, len--)
		h = (h ^ *b) * 0x100000001b3ULL;
	h ^= h >> 32;
	return h ? h : 1;
}

struct pcache *pcache_new_capped(unsigned ttl_ms, size_t max_entries,
				 size_t max_bytes)
{
	struct pcache *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return NULL;
	pthread_mutex_init(&pc->lock, NULL);
	pc->ttl_ms = ttl_ms;
	pc->max_entries = max_entries;
	pc->max_bytes = max_bytes;
	return pc;
}

/* over the byte cap, the size table counted */
static bool pc_over_bytes(const struct pcache *pc, size_t extra)
{
	return pc->max_bytes &&
	       pc->bytes + pc->size_bytes + extra > pc->max_bytes;
}

struct pcache *pcache_new(unsigned ttl_ms)
{
	return pcache_new_capped(ttl_ms, 0, 0);
}

struct pc_entry *pcache_ref(struct pc_entry *e)
{
	__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
	return e;
}

void pcache_put(struct pc_entry *e)
{
	if (!e)
		return;
	if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(e->path);
		free(e->data);
		free(e);
	}
}

int pcache_keep_sizes(struct pcache *pc, size_t bytes)
{
	size_t sets = 1, set_bytes = PC_WAYS * sizeof(struct pc_size);
	struct pc_size *t;

	if (pc->max_bytes && bytes > pc->max_bytes / 2)
		bytes = pc->max_bytes / 2;
	if (bytes < set_bytes)
		return 0;
	while (2 * sets * set_bytes <= bytes)
		sets *= 2; /* a power of two: the set is hash & (sets - 1) */
	t = calloc(sets * PC_WAYS, sizeof(*t));
	if (!t)
		return -ENOMEM;
	pthread_mutex_lock(&pc->lock);
	free(pc->sizes);
	pc->sizes = t;
	pc->n_sets = sets;
	pc->size_bytes = sets * set_bytes;
	pthread_mutex_unlock(&pc->lock);
	return 0;
}

/* The slot holding (hash, ver), or NULL.  Lock held. */
static struct pc_size *pc_size_find(struct pcache *pc, uint64_t hash,
				    uint64_t ver)
{
	struct pc_size *set;

	if (!pc->sizes || !ver)
		return NULL;
	set = pc->sizes + (hash & (pc->n_sets - 1)) * PC_WAYS;
	for (int i = 0; i < PC_WAYS; i++)
		if (set[i].ver == ver && set[i].hash == hash)
			return &set[i];
	return NULL;
}

/* Remember the length and time of versioned `e`, whose text goes: the
 * newest first in its set, the oldest of a full set out.  Lock held. */
static void pc_size_keep(struct pcache *pc, const struct pc_entry *e)
{
	struct pc_size *set, *slot;
	int n = PC_WAYS - 1;

	if (!pc->sizes || !e->ver)
		return;
	set = pc->sizes + (e->hash & (pc->n_sets - 1)) * PC_WAYS;
	if ((slot = pc_size_find(pc, e->hash, e->ver)))
		n = (int)(slot - set);
	memmove(set + 1, set, (size_t)n * sizeof(*set));
	set[0] = (struct pc_size){.hash = e->hash,
				  .ver = e->ver,
				  .len = e->len,
				  .mtime_s = e->mtime_s};
}

/* Take `e`, already out of its chain, out of the order list and the
 * counts, and drop the cache's reference.  Lock held. */
static void pc_forget(struct pcache *pc, struct pc_entry *e)
{
	if (e->older)
		e->older->newer = e->newer;
	else
		pc->oldest[e->cheap] = e->newer;
	if (e->newer)
		e->newer->older = e->older;
	else
		pc->newest[e->cheap] = e->older;
	pc->count--;
	pc->bytes -= e->cost;
	pcache_put(e);
}

/* Unlink `e` from its chain, then forget it.  Lock held. */
static void pc_unlink(struct pcache *pc, struct pc_entry *e)
{
	struct pc_entry **pp = &pc->bucket[e->hash % PC_BUCKETS];

	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (*pp)
		*pp = e->next;
	pc_forget(pc, e);
}

/* Unlink expired entries of every chain. Called with the lock held. */
static void pc_sweep(struct pcache *pc, int64_t now)
{
	for (size_t i = 0; i < PC_BUCKETS; i++) {
		struct pc_entry **pp = &pc->bucket[i];

		while (*pp) {
			struct pc_entry *e = *pp;

			if (e->expires_mono_ms <= now) {
				*pp = e->next;
				pc_forget(pc, e);
			} else {
				pp = &e->next;
			}
		}
	}
	pc->inserts_since_sweep = 0;
}

/* Make `e` the newest of the order list (a hit): eviction drops what was
 * used least recently.  Lock held. */
static void pc_touch(struct pcache *pc, struct pc_entry *e)
{
	int c = e->cheap;

	if (pc->newest[c] == e)
		return;
	if (e->older)
		e->older->newer = e->newer;
	else
		pc->oldest[c] = e->newer;
	e->newer->older = e->older;
	e->older = pc->newest[c];
	e->newer = NULL;
	pc->newest[c]->newer = e;
	pc->newest[c] = e;
}

static bool pc_over(const struct pcache *pc)
{
	return (pc->max_entries && pc->count > pc->max_entries) ||
	       pc_over_bytes(pc, 0);
}

/* Drop the least recently used entries while a cap is exceeded, the
 * cheap ones first.  Lock held. */
static void pc_evict(struct pcache *pc)
{
	while (pc_over(pc)) {
		struct pc_entry *e =
			pc->oldest[1] ? pc->oldest[1] : pc->oldest[0];

		if (!e)
			break;
		/* a cheap one is a function of its version (pcache.h) */
		if (e->cheap)
			pc_size_keep(pc, e);
		pc_unlink(pc, e);
		pc->evictions++;
	}
}

struct pc_entry *pcache_lookup(struct pcache *pc, const char *path,
			       uint64_t ver)
{
	uint64_t h = pcache_hash(path);
	int64_t now = pc_mono_ms();
	struct pc_entry *e, *found = NULL;

	pthread_mutex_lock(&pc->lock);
	for (e = pc->bucket[h % PC_BUCKETS]; e; e = e->next) {
		if (e->hash == h && e->ver == ver && e->expires_mono_ms > now &&
		    strcmp(e->path, path) == 0) {
			if (ver)
				e->expires_mono_ms = now + PCACHE_IDLE_MS;
			pc_touch(pc, e);
			found = pcache_ref(e);
			break;
		}
	}
	pthread_mutex_unlock(&pc->lock);
	return found;
}

struct pc_entry *pcache_entry_new(const char *path, char *data, size_t len,
				  int64_t mtime_s)
{
	struct pc_entry *e = calloc(1, sizeof(*e));

	if (!e || !(e->path = strdup(path))) {
		free(e);
		free(data);
		return NULL;
	}
	e->hash = pcache_hash(path);
	e->data = data;
	e->len = len;
	e->mtime_s = mtime_s;
	e->refs = 1;
	return e;
}

static struct pc_entry *pc_insert(struct pcache *pc, const char *path,
				  char *data, size_t len, int64_t mtime_s,
				  uint64_t ver, bool cheap)
{
	uint64_t h = pcache_hash(path);
	int64_t now = pc_mono_ms();
	struct pc_entry *e, **pp, *ret;

	e = pcache_entry_new(path, data, len, mtime_s); /* the cache's ref */
	if (!e)
		return NULL;
	e->ver = ver;
	e->cheap = cheap;
	e->expires_mono_ms = now + (ver ? PCACHE_IDLE_MS : pc->ttl_ms);
	e->cost = sizeof(*e) + len + 1 + strlen(path) + 1;

	pthread_mutex_lock(&pc->lock);
	for (pp = &pc->bucket[h % PC_BUCKETS]; *pp; pp = &(*pp)->next) {
		struct pc_entry *old = *pp;

		if (old->hash != h || strcmp(old->path, path) != 0)
			continue;
		if (old->ver == ver && old->expires_mono_ms > now) {
			/* another thread rendered it first: theirs wins */
			ret = pcache_ref(old);
			pthread_mutex_unlock(&pc->lock);
			pcache_put(e);
			return ret;
		}
		*pp = old->next;
		pc_forget(pc, old);
		break;
	}
	if ((pc->max_bytes && e->cost + pc->size_bytes > pc->max_bytes) ||
	    (cheap && ((pc->max_entries && pc->count + 1 > pc->max_entries) ||
		       pc_over_bytes(pc, e->cost)))) {
		/* no room: an entry larger than the whole cap, or a cheap one
		 * while the caps are reached, is not stored (the cache's
		 * reference becomes the caller's), so what is stored stays
		 * instead of each being dropped before a walk comes back to
		 * it (a big entry would empty the cache and then go itself);
		 * its size is kept */
		pc_size_keep(pc, e);
		if (++pc->inserts_since_sweep > 8192)
			pc_sweep(pc, now);
		pthread_mutex_unlock(&pc->lock);
		return e;
	}
	e->next = pc->bucket[h % PC_BUCKETS];
	pc->bucket[h % PC_BUCKETS] = e;
	e->older = pc->newest[cheap];
	if (pc->newest[cheap])
		pc->newest[cheap]->newer = e;
	else
		pc->oldest[cheap] = e;
	pc->newest[cheap] = e;
	pc->count++;
	pc->bytes += e->cost;
	/* the caller's reference before the sweep and the eviction: with a ttl
	 * of 0 the sweep drops the entry just inserted, and e itself may be
	 * over a cap; either way it must outlive them for the caller */
	ret = pcache_ref(e);
	if (++pc->inserts_since_sweep > 8192)
		pc_sweep(pc, now);
	pc_evict(pc);
	pthread_mutex_unlock(&pc->lock);
	return ret;
}

struct pc_entry *pcache_insert(struct pcache *pc, const char *path, char *data,
			       size_t len, int64_t mtime_s, uint64_t ver)
{
	return pc_insert(pc, path, data, len, mtime_s, ver, false);
}

struct pc_entry *pcache_insert_cheap(struct pcache *pc, const char *path,
				     char *data, size_t len, int64_t mtime_s,
				     uint64_t ver)
{
	return pc_insert(pc, path, data, len, mtime_s, ver, true);
}

bool pcache_lookup_size(struct pcache *pc, const char *path, uint64_t ver,
			size_t *len, int64_t *mtime_s)
{
	uint64_t h = pcache_hash(path);
	int64_t now = pc_mono_ms();
	struct pc_entry *e;
	struct pc_size *z;
	bool found = false;

	if (!ver)
		return false;
	pthread_mutex_lock(&pc->lock);
	for (e = pc->bucket[h % PC_BUCKETS]; e; e = e->next) {
		if (e->hash == h && e->ver == ver && e->expires_mono_ms > now &&
		    strcmp(e->path, path) == 0) {
			/* a use, as a lookup is */
			e->expires_mono_ms = now + PCACHE_IDLE_MS;
			pc_touch(pc, e);
			*len = e->len;
			*mtime_s = e->mtime_s;
			found = true;
			break;
		}
	}
	if (!found && (z = pc_size_find(pc, h, ver))) {
		*len = (size_t)z->len;
		*mtime_s = z->mtime_s;
		pc->size_hits++;
		found = true;
	}
	pthread_mutex_unlock(&pc->lock);
	return found;
}

void pcache_clear(struct pcache *pc)
{
	pthread_mutex_lock(&pc->lock);
	pc_sweep(pc, INT64_MAX);
	if (pc->sizes)
		memset(pc->sizes, 0, pc->n_sets * PC_WAYS * sizeof(*pc->sizes));
	pthread_mutex_unlock(&pc->lock);
}

size_t pcache_count(struct pcache *pc)
{
	size_t n;

	pthread_mutex_lock(&pc->lock);
	n = pc->count;
	pthread_mutex_unlock(&pc->lock);
	return n;
}

void pcache_get_stats(struct pcache *pc, struct pcache_stats *out)
{
	pthread_mutex_lock(&pc->lock);
	out->entries = pc->count;
	out->bytes = pc->bytes + pc->size_bytes;
	out->evictions = pc->evictions;
	out->size_hits = pc->size_hits;
	pthread_mutex_unlock(&pc->lock);
}

void pcache_free(struct pcache *pc)
{
	if (!pc)
		return;
	pcache_clear(pc);
	pthread_mutex_destroy(&pc->lock);
	free(pc->sizes);
	free(pc);
}
