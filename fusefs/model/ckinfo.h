/*
 * ckinfo — what kind of checkpoint a real-layout object holds (a savepoint
 * is told apart only by CompletedCheckpoint.checkpointType inside the
 * file), decoded from the object's first bytes and last two bytes, and
 * remembered by (key, size, mtime): storage objects never change in place.
 * Thread-safe.
 */
#ifndef STFS_CKINFO_H
#define STFS_CKINFO_H

#include "backends/backend.h"
#include "model/catalog.h"
#include "model/protostuff.h"

/* Where the objects are read: the checkpoint namespace and its deadline
 * (after a read that timed out, no header is asked for two of them). */
struct ckinfo_src {
	struct backend *be;
	unsigned timeout_ms;
};

struct ckinfo_table *ckinfo_new(void);
void ckinfo_free(struct ckinfo_table *t);
/** Hold at most `max_entries` types and `max_bytes` bytes (0: no cap of
 * that kind); past them the oldest are dropped (README "Memory"). */
void ckinfo_set_caps(struct ckinfo_table *t, size_t max_entries,
		     size_t max_bytes);
void ckinfo_get_stats(struct ckinfo_table *t, size_t *entries, size_t *bytes,
		      uint64_t *evictions);
/** The same for the summaries of ckinfo_summary() (info_cache_max_entries
 * and info_cache_max_mb): past them the oldest are dropped and decoded
 * again when asked. */
void ckinfo_set_summary_caps(struct ckinfo_table *t, size_t max_entries,
			     size_t max_bytes);
void ckinfo_get_summary_stats(struct ckinfo_table *t, size_t *entries,
			      size_t *bytes, uint64_t *evictions);

/**
 * Keep decoded types in state_dir (one file per namespace `uri`, lines
 * "type size mtime_ns key"), loading what an earlier mount decoded: objects
 * never change in place, so a type is known for good by (key, size,
 * mtime).  0 or -errno (then the cache is memory-only).
 */
int ckinfo_persist(struct ckinfo_table *t, const char *state_dir,
		   const char *uri);

/**
 * The enum ckpt_type of object `o` (read once from src->be), or
 * CKPT_TYPE_UNKNOWN when it cannot be read or decoded (logged).  Only
 * known types are remembered: an unknown one is read again on the next
 * call, so a transient read error never sticks.  The deletion path counts
 * unknown as a savepoint (protected) where R2 binds.
 */
int ckinfo_type(struct ckinfo_table *t, const struct ckinfo_src *src,
		const struct cat_obj *o);

/**
 * Decode, in parallel (a few threads), the types of every real-layout
 * object of job `cj` not yet known, so that the ckinfo_type() calls that
 * follow are cache hits.  On a remote store, the object of a checkpoint's
 * `info` that fits in one window is summarised instead (ckinfo_summary:
 * the same one GET, and the type with it), so that a walk reads it once.
 * Best effort; blocks until done.
 */
void ckinfo_prefetch_job(struct ckinfo_table *t, const struct ckinfo_src *src,
			 const struct cat_job *cj);

/** The object a real-layout checkpoint's `info` describes (its newest
 * .ser; no .sertmp, no .crc), or NULL (documented layout, in flight). */
const struct cat_obj *ckinfo_ckpt_object(const struct cat_ckpt *c);

/**
 * The full summary of real-layout object `o` (the `info` file): decoded
 * once per object version (key, size, mtime) by pstuff_summarize() in
 * windows of 64 KiB from src->be, which step over the states by their
 * length prefixes, then remembered in memory and in state_dir beside the
 * types (ckinfo_persist), so a later walk or mount reads nothing; at most
 * info_cache_max_entries / _mb in memory (ckinfo_set_summary_caps).  0 and
 * *out, the caller's copy (free it with pstuff_summary_free; zeroed on any
 * error); -EPROTO when the object
 * does not decode; the store's -errno; -EAGAIN for two deadlines after a
 * read timed out (as ckinfo_type).  -EPROTO is remembered in memory for
 * that version; a read error is not.
 */
int ckinfo_summary(struct ckinfo_table *t, const struct ckinfo_src *src,
		   const struct cat_obj *o, struct pstuff_summary *out);

/**
 * Summarise, with a few threads, the checkpoints of pipeline `cp` not yet
 * known, so that the ckinfo_summary() calls that follow (its status, its
 * checkpoints' `info`) are hits.  Remote stores only (a local read is
 * cheaper than a thread); best effort; blocks until done.
 */
void ckinfo_prefetch_pipe(struct ckinfo_table *t, const struct ckinfo_src *src,
			  const struct cat_pipe *cp);

/**
 * The same for every pipeline of job `cj` at once, so that the reads of a
 * job are in flight together, not one pipeline after the other (a walk
 * stats every pipeline's `status`).  Remote stores only; blocks until
 * done.
 */
void ckinfo_prefetch_info(struct ckinfo_table *t, const struct ckinfo_src *src,
			  const struct cat_job *cj);

#endif
