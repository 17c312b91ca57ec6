/*
 * ckinfo — what kind of checkpoint a real-layout object holds (a savepoint
 * is told apart only by CompletedCheckpoint.checkpointType inside the
 * file), decoded from the object's first bytes and last two bytes, and
 * remembered by (key, size, mtime): storage objects never change in place.
 * Thread-safe.
 */
#ifndef STFS_CKINFO_H
#define STFS_CKINFO_H

#include "catalog.h"
#include "stfs.h"

struct ckinfo_table *ckinfo_new(void);
void ckinfo_free(struct ckinfo_table *t);

/**
 * The enum ckpt_type of object `o` (reads it once through fs->ckpt), or
 * CKPT_TYPE_UNKNOWN when it cannot be read or decoded (logged once).
 */
int ckinfo_type(struct stfs *fs, const struct cat_obj *o);

#endif
