/*
 * imapdel — `rm` of IMap WAL regions and their files (README "Reclaiming
 * IMap WAL space"): imap/<cluster>/<map>/<region> and the files below it.
 * The map is decoded afresh on every call (imapsum_region_decide), the
 * engine is asked afresh (never a cached answer), rules_decide_region()
 * decides, and every decision, allowed or refused, is audited like a
 * checkpoint deletion.  Functions return 0 or -errno, what `rm` prints.
 * Thread-safe.
 */
#ifndef STFS_IMAPDEL_H
#define STFS_IMAPDEL_H

#include <stdbool.h>

#include "policy/delete.h"
#include "backends/engine.h"
#include "policy/rules.h"
#include "mount/mount.h"

/** Whether `path` (in the mount) lies below /imap/<cluster>/<map>/. */
bool imapdel_is_region_path(const char *path);

/**
 * What the engine says for a region (RE_*), from an answer at most
 * `max_age_ms` old (waits for the fetch; never the previous answer while
 * a refresh runs): only a refused connection means every member is
 * stopped; no engine configured, a timeout or an error is RE_UNKNOWN.
 */
enum region_engine imapdel_engine(struct stfs *fs, unsigned max_age_ms);

/** unlink(2) of a WAL file in a region. */
int imapdel_unlink(struct stfs *fs, const struct caller *c, const char *path);
/** rmdir(2) of a region directory (or a directory below it). */
int imapdel_rmdir(struct stfs *fs, const struct caller *c, const char *path);

#endif
