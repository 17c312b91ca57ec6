/*
 * ops — the FUSE operations (libfuse's low-level, inode-based API).
 *
 * The kernel names nodes by nodeid; inodes.h maps them to paths, and every
 * call takes one view (catalog + engine snapshot), resolves the path with
 * tree.c and answers from it.  Calls that would change anything fail at
 * once with EROFS (README "The tree"); the deletion rules (README "Deleting
 * safely") plug in at unlink/rmdir.  Errors are returned as errno, unchanged
 * from the layer that produced them.  The kernel caches listings,
 * entries and attributes (README "Performance, as measured here").
 */
#ifndef STFS_OPS_H
#define STFS_OPS_H

#include <fuse_lowlevel.h>

struct stfs;
/**
 * Mount and serve `fs` with the options in `args` until unmounted, as
 * fuse_main() does, with the kernel-invalidation worker stopped after the
 * loop ends and before the session is destroyed.  0, or fuse_main()'s exit
 * codes.
 */
int ops_main(struct fuse_args *args, struct stfs *fs);
/** Whether the request this thread serves was interrupted (Ctrl-C): the
 * predicate http.c polls (http_set_abort_check). */
int ops_interrupted(void);

#endif
