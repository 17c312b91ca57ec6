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

#endif
