/*
 * tree — the virtual tree of README "The tree", as pure functions of a "view"
 * (one catalog + one engine snapshot, taken together so that a whole FUSE
 * call sees one consistent state).
 *
 *   tree_resolve()  path -> node (what it is, and what it refers to)
 *   tree_list()     the entries of a directory node
 *   tree_stat()     a node's struct stat (pseudo-file sizes via pcache)
 *   tree_content()  a pseudo-file's bytes (cached in pcache)
 *   tree_readlink() a symlink's target
 *
 * Nodes borrow from the view (view/view.h): valid until view_close().
 * Thread-safe.
 */
#ifndef STFS_TREE_H
#define STFS_TREE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "util/buf.h"
#include "model/catalog.h"
#include "backends/engine.h"
#include "util/pcache.h"
#include "mount/mount.h"
#include "policy/delete.h"
#include "view/view.h"

enum node_kind {
	ND_ROOT,
	ND_JOBS,
	ND_JOB,
	ND_PSEUDO, /* a rendered file: see `pf` */
	ND_PIPES,
	ND_PIPE,
	ND_CKPTS,
	ND_CKPT,
	ND_SUBDIR, /* a directory made of object name prefixes */
	ND_OBJ,	   /* a storage object */
	ND_LINK,   /* a symlink: latest, savepoint links, by-* */
	ND_SPS,
	ND_OTHER,
	ND_BYSTATE,
	ND_BYSTATE_DIR,
	ND_BYNAME,
	ND_BYNAME_DIR,
	ND_CLUSTER,
	ND_STFS,
	ND_IMAP,     /* a directory of the IMap namespace */
	ND_IMAP_OBJ, /* a file of the IMap namespace */
};

enum pseudo_file {
	PF_NONE,
	PF_STATUS,
	PF_JOB_JSON,
	PF_METRICS,
	PF_METRICS_JSON,
	PF_DELETABLE,
	PF_RESTORE,
	PF_PIPE_STATUS,
	PF_CLUSTER_OVERVIEW,
	PF_CLUSTER_MEMBERS,
	PF_CLUSTER_METRICS,
	PF_STATS,
	PF_HEALTH,
	PF_CONFIG,
	PF_AUDIT,
	PF_PROM_ALL,
	PF_IMAP_SUMMARY,
	PF_IMAP_DOC_SUMMARY, /* imap/wal/<name>.summary (documented layout) */
	PF_CKPT_INFO,	     /* checkpoints/<cid>/info */
};

struct node {
	enum node_kind kind;
	enum pseudo_file pf;
	struct job_view job;	     /* ND_JOB and everything below it */
	const struct cat_pipe *pipe; /* NULL for an engine-only pipeline */
	int32_t pipe_id;
	const struct cat_ckpt *ckpt;
	const struct cat_obj *obj; /* ND_OBJ */
	enum obj_group group;
	char sub[1024]; /* ND_SUBDIR: the name prefix; ND_IMAP*: backend path */
	int state;	/* ND_BYSTATE_DIR */
	char link[1024];	  /* ND_LINK: the target */
	char byname[256];	  /* ND_BYNAME_DIR: the decoded name */
	struct be_attr imap_attr; /* ND_IMAP_OBJ */
};

/** Resolve an absolute path.  0; -ENOENT; -ENAMETOOLONG; -EIO (imap backend).
 */
int tree_resolve(struct view *v, const char *path, struct node *n);

typedef int (*tree_fill_fn)(void *cookie, const char *name,
			    const struct stat *st);
/** List a directory node (without "." and ".."). 0; -ENOTDIR; -errno. */
int tree_list(struct view *v, const char *path, const struct node *n,
	      tree_fill_fn fill, void *cookie);

/*
 * A directory's listing taken once and served by position, for readdir: a
 * continuation at entry k resumes there without walking entries 0..k-1
 * again.  Entries are named when the listing is taken and resolved and
 * stat'ed as they are handed out, against the view the listing was taken
 * in (held until tree_dir_close), so one `ls` sees one state.
 */
struct tree_dir;
/**
 * List directory node `n` at `path`.  Takes over the view's references
 * (`v` is closed on return, whatever the result).  0 and *out;
 * -ENOTDIR; -errno as tree_list.
 */
int tree_dir_open(struct view *v, const char *path, const struct node *n,
		  struct tree_dir **out);
/** The number of entries. */
size_t tree_dir_count(const struct tree_dir *d);
/** A digest of the entries' names, in order: two listings with the same
 * digest name the same entries (what the kernel caches of a listing). */
uint64_t tree_dir_digest(const struct tree_dir *d);
/** Hand entries from index `from` on to fill (resolved and stat'ed) until
 * it returns non-zero or the entries end.  0; -ENOMEM. */
int tree_dir_fill(struct tree_dir *d, size_t from, tree_fill_fn fill,
		  void *cookie);
/** NULL-safe. */
void tree_dir_close(struct tree_dir *d);

/** Attributes of a node; for a pseudo-file its length and time are those
 * of the version kept in the pcache, else it is rendered. */
int tree_stat(struct view *v, const char *path, const struct node *n,
	      struct stat *st);
/** tree_stat without a pseudo-file's length and time (0: nothing rendered),
 * for what needs only the type, mode and owner (an access check; the fstat
 * of an open pseudo-file, whose size is its handle's). */
int tree_stat_nosize(struct view *v, const char *path, const struct node *n,
		     struct stat *st);

/**
 * The cached content of a pseudo-file node (a reference: pcache_put it).
 * 0 and *out set; -errno when it cannot be rendered (e.g. cluster/ files
 * while the engine is down).
 */
int tree_content(struct view *v, const char *path, const struct node *n,
		 struct pc_entry **out);

/** Escape a job name for by-name/ ('/' -> %2F, '%' -> %25, controls). */
void tree_escape_name(const char *name, char *out, size_t outsz);
/** Undo tree_escape_name; -EINVAL on a malformed escape. */
int tree_unescape_name(const char *s, char *out, size_t outsz);

/** delete_resolve_fn (policy/delete.h) over tree_resolve: what the
 * deletion path needs of a node. */
int tree_delete_node(struct stfs *fs, struct catalog *cat,
		     struct engine_snap *snap, int64_t now_ms, const char *path,
		     struct del_node *out);

/** Render pseudo-file `n` into out (no caching). *mtime_s gets its time. */
int tree_render(struct view *v, const struct node *n, struct buf *out,
		int64_t *mtime_s);

#endif
