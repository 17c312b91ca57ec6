/*
 * pcache — rendered pseudo-file contents, keyed by path and by the version
 * of what they were rendered from.
 *
 * README "Attributes backup tools rely on": a pseudo-file is rendered once
 * and kept with its attributes, so `stat`, `read`, `stat` agree.  getattr
 * renders (or finds) an entry and reports its exact length; open takes a
 * reference to the same entry, so reads of one open file see one content
 * whatever happens meanwhile.
 *
 * An entry stored with a version (non-zero: a digest of the sources the
 * content was rendered from, tree.c) serves every lookup with that version
 * and none with another, whatever time passes: an unchanged tree renders
 * nothing again (README "Performance").  It is dropped when a lookup with
 * another version replaces it or after PCACHE_IDLE_MS without a lookup.  An
 * entry stored with version 0 lives the cache's TTL.
 *
 * Entries are immutable and reference-counted.  Thread-safe (one mutex).
 * The cache is bounded by entries and by bytes (README "Memory"): when an
 * insert goes past either cap the least recently used entries are dropped
 * first, those stored as cheap to render again (pcache_insert_cheap)
 * before any other, so that a walk over more pseudo-files than the caps
 * hold keeps the dear ones (a
 * dropped entry stays valid for whoever holds a reference; the next
 * lookup misses and renders again).
 *
 * A versioned cheap entry whose text is dropped by a cap or never stored
 * for lack of room, and an entry larger than the whole byte cap, leave
 * their length and time behind in a small table of their own
 * (pcache_keep_sizes: a slice of the byte cap, 32 bytes per file), so that
 * a stat of an unchanged file renders nothing whether its text is kept or
 * not (pcache_lookup_size; README "Performance").  Such content must be a
 * function of its version alone, as a cheap file's is: a dear entry
 * dropped by a cap (`status` asks the engine) leaves nothing, and its next
 * stat renders it again.
 */
#ifndef STFS_PCACHE_H
#define STFS_PCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pc_entry {
	int refs; /* atomic */
	uint64_t hash;
	char *path;
	char *data; /* NUL-terminated; len bytes of content */
	size_t len;
	int64_t mtime_s; /* the source's time, not "now" */
	uint64_t ver;	 /* the sources' version, or 0: kept for the TTL */
	int64_t expires_mono_ms; /* protected by the cache lock */
	struct pc_entry *next;	 /* chain; protected by the cache lock */
	/* least recently used first; protected by the cache lock */
	struct pc_entry *older, *newer;
	size_t cost; /* bytes charged to the cache */
	bool cheap;  /* dropped first (pcache_insert_cheap) */
};

struct pcache;

/* a versioned entry not looked up for this long is dropped (memory) */
#define PCACHE_IDLE_MS (10 * 60 * 1000)

/** A cache whose unversioned entries live `ttl_ms`, without caps.  NULL on
 * ENOMEM. */
struct pcache *pcache_new(unsigned ttl_ms);
/**
 * The same, holding at most `max_entries` entries and `max_bytes` bytes
 * (content, path and bookkeeping; 0: no cap of that kind).
 */
struct pcache *pcache_new_capped(unsigned ttl_ms, size_t max_entries,
				 size_t max_bytes);
void pcache_free(struct pcache *pc);
/**
 * Keep the length and time of versioned entries whose text is dropped, in
 * a table of about `bytes` (taken from the byte cap when there is one; at
 * most half of it).  0, or -ENOMEM (then no table: every such stat renders).
 */
int pcache_keep_sizes(struct pcache *pc, size_t bytes);
/**
 * The length and time of `path` rendered from version `ver` (non-zero):
 * true when the cache holds its text or its size (no reference taken, no
 * render needed to stat it), false when it must be rendered.
 */
bool pcache_lookup_size(struct pcache *pc, const char *path, uint64_t ver,
			size_t *len, int64_t *mtime_s);

/**
 * The entry for `path` rendered from version `ver` (0: any entry still in
 * its TTL), a reference (pcache_put it), or NULL.
 */
struct pc_entry *pcache_lookup(struct pcache *pc, const char *path,
			       uint64_t ver);
/**
 * Store `data` (malloc'd, ownership taken) for `path` and return a
 * reference to the entry now cached — an entry that another thread stored
 * meanwhile wins, so that every caller sees the same content.  NULL when
 * out of memory (data is freed).
 */
struct pc_entry *pcache_insert(struct pcache *pc, const char *path, char *data,
			       size_t len, int64_t mtime_s, uint64_t ver);
/** pcache_insert for content rendered again from memory at little cost:
 * a cap drops such entries before any other, and one is stored only while
 * the caps leave room for it (else the reference is to an entry no cache
 * holds). */
struct pc_entry *pcache_insert_cheap(struct pcache *pc, const char *path,
				     char *data, size_t len, int64_t mtime_s,
				     uint64_t ver);
/**
 * An entry that no cache holds (a live file's one rendering, for one open
 * handle or one stat): a reference, or NULL when out of memory (data is
 * freed).
 */
struct pc_entry *pcache_entry_new(const char *path, char *data, size_t len,
				  int64_t mtime_s);
struct pc_entry *pcache_ref(struct pc_entry *e);
void pcache_put(struct pc_entry *e);
/** Drop every entry (held references stay valid). */
void pcache_clear(struct pcache *pc);
/** Number of cached entries (for stats). */
size_t pcache_count(struct pcache *pc);

struct pcache_stats {
	size_t entries, bytes; /* bytes: the size table included */
	uint64_t evictions;    /* entries dropped by a cap (not by age) */
	uint64_t size_hits;    /* pcache_lookup_size answered by the table */
};
void pcache_get_stats(struct pcache *pc, struct pcache_stats *out);

/** 64-bit FNV-1a of a string; also the stable inode number of a path. */
uint64_t pcache_hash(const char *s);
/** Fold `len` bytes at `p` into the running digest `h` (for versions). */
uint64_t pcache_mix(uint64_t h, const void *p, size_t len);

#endif
