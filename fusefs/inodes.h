/*
 * inodes — the low-level FUSE layer's table of the nodes the kernel holds
 * (README "Performance, as measured here": kernel caching).
 *
 * The kernel names a node by a 64-bit nodeid; the tree (view/tree.h) by its
 * path.  Every successful LOOKUP and every READDIRPLUS entry hands the
 * kernel one reference to a nodeid (inodes_ref); FORGET and BATCH_FORGET
 * give them back (inodes_forget), and a node is freed when none is left.
 * Nothing in the tree is ever renamed, so a node's path is fixed (it is
 * built from its parents when asked: a node keeps its name only); a path
 * removed by `rm`/`rmdir` is unhashed (the next lookup of the same name
 * gets a new nodeid, the old one lives until the kernel forgets it).
 * Nodeids are never reused within a mount, so every generation is 1.
 * The root (FUSE_ROOT_ID, "/") is always there.
 *
 * Per directory the table keeps the digest of the listing the kernel last
 * took and when: the kernel may keep its cached listing only when the new
 * one has the same digest (inodes_dir_same), or, below /jobs/<id>/ where
 * the freshness ticker invalidates what changed (freshness.h), while it
 * was not invalidated since (inodes_dir_valid).  The nodes below each
 * /jobs/<id> are that directory's subtree, so that invalidating one job
 * costs its own nodes, not every node held (inodes_invalidate_under).
 *
 * Thread-safe (one mutex, held for no longer than a hash lookup).
 */
#ifndef STFS_INODES_H
#define STFS_INODES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct inodes;

/** A table holding the root only. 0 or -ENOMEM. */
int inodes_new(struct inodes **out);
/** NULL-safe. */
void inodes_free(struct inodes *t);

/** The path of node `ino` (malloc'd, *path). 0; -ENOENT (unknown);
 * -ENOMEM. */
int inodes_path(struct inodes *t, uint64_t ino, char **path);
/** The path of `name` in directory node `parent` (malloc'd). 0; -ENOENT;
 * -ENAMETOOLONG (over 4095 bytes); -ENOMEM. */
int inodes_child(struct inodes *t, uint64_t parent, const char *name,
		 char **path);
/** One more kernel reference to the node of `path` (created when new):
 * its nodeid, or 0 when out of memory. */
uint64_t inodes_ref(struct inodes *t, const char *path);
/** The kernel drops `n` references to `ino`; freed at none (not the root). */
void inodes_forget(struct inodes *t, uint64_t ino, uint64_t n);
/** The nodeid the kernel holds for `path`, or 0. */
uint64_t inodes_find(struct inodes *t, const char *path);
/** `path` no longer names its node (removed). */
void inodes_unhash(struct inodes *t, const char *path);
/**
 * Directory `ino` is opened with a listing of digest `digest` at `now_ms`:
 * whether the kernel may keep its cached copy, i.e. the copy it was last
 * made to take (the last time this said no) has the same digest and was
 * taken less than `max_age_ms` ago, so that the names and attributes that
 * came with it have not timed out in the kernel (a cached listing whose
 * entries timed out costs one LOOKUP per entry, where listing again costs
 * one READDIRPLUS per screenful).  When it says no, `digest` and `now_ms`
 * are recorded as the copy the kernel takes now, unless the table was
 * invalidated since `epoch` (inodes_epoch, read before the listing was
 * taken): that listing may predate the change, and nothing is recorded.
 */
bool inodes_dir_same(struct inodes *t, uint64_t ino, uint64_t digest,
		     int64_t now_ms, int64_t max_age_ms, uint64_t epoch);
/** Whether the listing recorded for `ino` (by inodes_dir_same) is still the
 * kernel's: neither forgotten nor invalidated since, and younger than
 * `max_age_ms`. */
bool inodes_dir_valid(struct inodes *t, uint64_t ino, int64_t now_ms,
		      int64_t max_age_ms);
/** The invalidation epoch: a reply built from a view taken before it moved
 * may predate a change the kernel was told of (it gets a short lifetime). */
uint64_t inodes_epoch(struct inodes *t);
/**
 * The nodes held at or below each of the job directories `tops`
 * ("/jobs/<id>"; other paths are ignored): their recorded listings are
 * forgotten, the epoch moves on, and their nodeids are returned (*ids,
 * malloc'd, *n_ids of them; the caller tells the kernel).  Costs the nodes
 * of those jobs.  0; -ENOMEM (nothing returned; the epoch moved).
 */
int inodes_invalidate_under(struct inodes *t, const char *const *tops, size_t n,
			    uint64_t **ids, size_t *n_ids);
/** Forget the recorded listing of `ino` (the next one is not "the same"). */
void inodes_dir_forget(struct inodes *t, uint64_t ino);
/** Nodes the kernel holds (the root included); the directories on the way
 * to them that it does not hold are not counted. */
size_t inodes_count(struct inodes *t);

#endif
