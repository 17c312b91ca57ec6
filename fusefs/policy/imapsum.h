/*
 * imapsum — the decoded summary shown beside each IMap map directory
 * (imap/<cluster>/<map>.summary, README "IMap summaries"): records, live keys,
 * tombstones, bytes a compaction would reclaim, and which region
 * directories are superseded (every record in them, tombstones included,
 * has a newer record for the same key in another region, so removing the
 * region cannot change what the engine reads back today).
 *
 * Each region's verdict is what `rm -r` of it would answer
 * (rules_decide_region() in rules.c decides both; README "Reclaiming IMap
 * WAL space"): EPERM while it holds a record the reader keeps (or the
 * engine cannot load the map at all), EBUSY while a member may append
 * (empty, newest mtime, written within imap_grace, or the engine answers),
 * EAGAIN when the engine cannot be asked, removable once every member is
 * stopped.
 *
 * The WAL files of a map (wal.txt, or 1_wal.txt, 2_wal.txt ... on object
 * stores, N in numeric order) are each parsed on their own, as the
 * engine's reader does; a record the reader aborts on is reported as
 * "the engine would fail to load this map: ..., at file F offset O".
 * The files are streamed (wal_summarize_stream) in IMAPSUM_WINDOW-byte
 * windows, twice: memory is one window plus a copy of each distinct key,
 * whatever the size of the WAL.  Thread-safe.
 */
#ifndef STFS_IMAPSUM_H
#define STFS_IMAPSUM_H

#include "backends/backend.h"
#include "util/buf.h"
#include "util/pcache.h"
#include "policy/rules.h"

#define IMAPSUM_WINDOW ((size_t)1 << 20)

#define IMAPSUM_GRACE_S 3600 /* default of conf imap_grace */

struct imapsum_opts {
	int64_t now_ns;		   /* wall clock; 0: now */
	int64_t grace_ns;	   /* regions written this recently are live */
	enum region_engine engine; /* RE_*: what the engine answered */
	bool ro;		   /* the mount has `ro` */
	bool caller_denied;	   /* the caller is not root/delete_group */
	/* decoded maps kept by listing (every WAL file's name, size and
	 * mtime), so that a summary or a scrape of an unchanged map reads no
	 * WAL byte; NULL: decode afresh (rm always does) */
	struct pcache *cache;
};

/* The verdicts a region can get, in this order (label values of
 * stfs_imap_regions, README "Prometheus"). */
#define IMAPSUM_NV 6
extern const char *const imapsum_verdicts[IMAPSUM_NV];

/* A map's figures: what the summary's last lines and stfs.prom show. */
struct imapsum_fig {
	uint64_t regions;
	uint64_t bytes;		   /* of all its WAL files */
	uint64_t reclaim_bytes;	   /* regions whose verdict is removable */
	uint64_t superseded;	   /* regions superseded and not live */
	uint64_t superseded_bytes; /* their bytes: what stopping frees */
	uint64_t by_verdict[IMAPSUM_NV]; /* regions per verdict */
	bool failed;			 /* the engine would fail to load it */
};

/** Render the summary of map directory `mapdir` of backend `be`; `opts`
 * NULL: now, IMAPSUM_GRACE_S, engine cannot be asked.  0/-errno. */
int imapsum_render(struct backend *be, const char *mapdir,
		   const struct imapsum_opts *opts, struct buf *out);

/** The figures of map directory `mapdir`, each region's verdict as
 * imapsum_render() gives it.  0/-errno. */
int imapsum_figures(struct backend *be, const char *mapdir,
		    const struct imapsum_opts *opts, struct imapsum_fig *out);

/** Decide, as rm would, whether region directory `region` (its name below
 * the map) of map `mapdir` may be removed: 0 and *out filled; -ENOENT when
 * the map has no such region; -errno of reading. */
int imapsum_region_decide(struct backend *be, const char *mapdir,
			  const char *region, const struct imapsum_opts *opts,
			  struct rule_result *out);

/*
 * The documented layout (README "Layouts"; no engine writes it):
 * <base-dir>/wal/<name>-<partition>.wal.  The partition files of map
 * <name> in directory `waldir` are read like the engine's WAL files, each
 * on its own, and each is a region of its own: the same summary, and the
 * same rule (rules_decide_region) for rm of one of them.
 */
/** Whether `file` is "<name>-<digits>.wal"; *name_len: the name's length. */
bool imapsum_doc_partition(const char *file, size_t *name_len);
/** The summary of map `name`'s partition files in `waldir`.  0/-errno. */
int imapsum_doc_render(struct backend *be, const char *waldir, const char *name,
		       const struct imapsum_opts *opts, struct buf *out);
/** 0 and the newest mtime (and total size) of map `name`'s partition
 * files in `waldir`; -ENOENT when there are none.  Lists only. */
int imapsum_doc_stat(struct backend *be, const char *waldir, const char *name,
		     struct be_attr *out);
/** rm's decision for partition file `file` of `waldir`: 0 and *out;
 * -ENOENT when it is no partition file of a map there. */
int imapsum_doc_decide(struct backend *be, const char *waldir, const char *file,
		       const struct imapsum_opts *opts,
		       struct rule_result *out);

#endif
