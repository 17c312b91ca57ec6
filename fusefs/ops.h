/*
 * ops — the FUSE operations table (high-level, path-based API).
 *
 * Every call takes one view (catalog + engine snapshot), resolves the path
 * with tree.c and answers from it.  Calls that would change anything fail
 * at once with EROFS (README "The tree"); the deletion rules (README "Deleting
 * safely") plug in at fs_unlink/fs_rmdir.  Errors are returned as -errno,
 * unchanged from the layer that produced them.
 */
#ifndef STFS_OPS_H
#define STFS_OPS_H

#include <fuse.h>

extern const struct fuse_operations stfs_ops;

struct stfs;
/**
 * Mount and serve `fs` with the options in `args` until unmounted, as
 * fuse_main() does, but with the kernel-invalidation worker stopped after
 * the loop ends and before libfuse frees its handle (its .destroy comes too
 * late for that).  0, or fuse_main()'s exit codes.
 */
int ops_main(struct fuse_args *args, struct stfs *fs);

#endif
