/*
 * imapsum — the decoded summary shown beside each IMap map directory
 * (imap/<cluster>/<map>.summary, CONTRACT §5): records, live keys,
 * tombstones, bytes a compaction would reclaim, and which region
 * directories are superseded (every record in them, tombstones included,
 * has a newer record for the same key in another region, so removing the
 * region cannot change what the engine reads back today).
 *
 * A region the engine may still append to is never called removable
 * (README "imap/"): an empty region, the region with the newest mtime of
 * the map, and every region written within the grace period are live; a
 * superseded region is only "removable once every member is stopped" when
 * the engine does not answer, and "keep" while it does (or its state is
 * not known): a running member's region can hold only superseded records.
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

#define IMAPSUM_GRACE_S 3600 /* default of conf imap_grace */

enum {
	IMAPSUM_ENGINE_UNKNOWN = 0, /* treated as running */
	IMAPSUM_ENGINE_UP,	    /* the engine answered */
	IMAPSUM_ENGINE_DOWN,	    /* configured, and it did not answer */
};

struct imapsum_opts {
	int64_t now_ns;	  /* wall clock; 0: now */
	int64_t grace_ns; /* regions written this recently are live */
	int engine;	  /* IMAPSUM_ENGINE_* */
};

/** Render the summary of map directory `mapdir` of backend `be`; `opts`
 * NULL: now, IMAPSUM_GRACE_S, engine state unknown.  0/-errno. */
int imapsum_render(struct backend *be, const char *mapdir,
		   const struct imapsum_opts *opts, struct buf *out);

#endif
