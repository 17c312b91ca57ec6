/*
 * imapsum — the decoded summary shown beside each IMap map directory
 * (imap/<cluster>/<map>.summary, CONTRACT §5): records, live keys,
 * tombstones, bytes a compaction would reclaim, and which region
 * directories are superseded (every record in them, tombstones included,
 * has a newer record for the same key in another region, so removing the
 * region cannot change what the engine reads back).
 *
 * The WAL files of a region (wal.txt, or 1_wal.txt, 2_wal.txt ... on
 * object stores) are read in name order and decoded as one sequence.
 * Reading stops at imapsum_max_bytes in total: a larger map is reported
 * as too large to decode.  Thread-safe.
 */
#ifndef STFS_IMAPSUM_H
#define STFS_IMAPSUM_H

#include "backend.h"
#include "buf.h"

#define IMAPSUM_MAX_BYTES ((uint64_t)256 << 20)

/** Render the summary of map directory `mapdir` of backend `be`. 0/-errno. */
int imapsum_render(struct backend *be, const char *mapdir, struct buf *out);

#endif
