#include "fusefs/ops.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "fusefs/freshness.h"
#include "fusefs/inodes.h"
#include "fusefs/notify.h"
#include "fusefs/signals.h"
#include "model/ckinfo.h"
#include "model/protostuff.h"
#include "mount/mount.h"
#include "policy/delete.h"
#include "policy/imapdel.h"
#include "util/log.h"
#include "view/render.h"
#include "view/tree.h"

/* one mount per process: set by ops_main before the session starts */
static struct stfs *g_fs;
static struct inodes *g_nodes;
static double g_ttl; /* entry, attribute and negative timeouts (s) */
/* README "Caching in the kernel": entry and attribute timeouts below jobs/
 * (s), longer than g_ttl only while the freshness ticker runs */
static double g_kttl;
static struct freshness *g_fresh;
static bool g_expire_only; /* the kernel can expire an entry in place */
/* README "Caching in the kernel": FUSE_CAP_NO_OPENDIR_SUPPORT taken (only
 * with the ticker, which drops the listings the kernel keeps) */
static bool g_no_opendir;
/* auto_unmount among the mount options: fusermount3 unmounts a dead mount
 * only when opening its root fails (ENOTCONN), which without OPENDIR the
 * kernel never asks the daemon, so NO_OPENDIR is not taken then */
static bool g_auto_unmount;

/* ---- the request being served by this thread, and its interruption */

static __thread fuse_req_t cur_req;

/*
 * Ctrl-C on a long cat/du reaches a hung remote call: the kernel's
 * INTERRUPT marks the request (fuse_req_interrupted, which http.c polls
 * through ops_interrupted) and, as libfuse's high-level "-o intr" did,
 * SIGUSR1 is sent to the serving thread until it is done, so a blocked
 * system call returns EINTR (main installs a handler that does nothing).
 */
struct intr {
	pthread_t id;
	bool finished; /* protected by intr_lock */
};
static pthread_mutex_t intr_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t intr_cond = PTHREAD_COND_INITIALIZER;

static void intr_fn(fuse_req_t req, void *arg)
{
	struct intr *d = arg;

	(void)req;
	if (pthread_equal(d->id, pthread_self()))
		return; /* interrupted before it started: it polls */
	pthread_mutex_lock(&intr_lock);
	while (!d->finished) {
		struct timespec ts;

		pthread_kill(d->id, SIGUSR1);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&intr_cond, &intr_lock, &ts);
	}
	pthread_mutex_unlock(&intr_lock);
}

/* Every handler runs its work between call_begin and call_end, and
 * replies after call_end (a reply frees the request). */
static void call_begin(struct intr *d, fuse_req_t req)
{
	d->id = pthread_self();
	d->finished = false;
	cur_req = req;
	fuse_req_interrupt_func(req, intr_fn, d);
}

static void call_end(struct intr *d)
{
	pthread_mutex_lock(&intr_lock);
	d->finished = true;
	pthread_cond_broadcast(&intr_cond);
	pthread_mutex_unlock(&intr_lock);
	fuse_req_interrupt_func(cur_req, NULL, NULL);
	cur_req = NULL;
}

int ops_interrupted(void)
{
	return cur_req ? fuse_req_interrupted(cur_req) : 0;
}

/* An open file: a storage object (read through the backend) or a
 * pseudo-file (a reference to its rendered content). */
struct handle {
	struct backend *be; /* NULL for a pseudo-file */
	char *key;
	struct pc_entry *pe;
	bool ctl; /* the `restore` control, opened for writing */
};

static void get_caller(struct caller *c)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(cur_req);
	int n;

	memset(c, 0, sizeof(*c));
	c->uid = ctx->uid;
	c->gid = ctx->gid;
	c->pid = ctx->pid;
	n = fuse_req_getgroups(cur_req, 64, c->groups);
	c->ngroups = n < 0 ? 0 : n > 64 ? 64 : n;
}

/*
 * README "Who can read what": the mount does not use default_permissions
 * (R4 must see, and audit, a refused rm), so stfs checks reading itself,
 * by the owner, group and other bits getattr shows, as the kernel would.
 * Writing is not judged here: EROFS, or the rules for rm and `restore`.
 */
static bool caller_may(const struct caller *c, const struct stat *st, int mask)
{
	unsigned bits;

	mask &= R_OK | X_OK;
	if (c->uid == 0)
		return !(mask & X_OK) || S_ISDIR(st->st_mode) ||
		       (st->st_mode & 0111);
	if (c->uid == st->st_uid) {
		bits = (st->st_mode >> 6) & 7;
	} else {
		bool in = c->gid == st->st_gid;

		for (int i = 0; !in && i < c->ngroups; i++)
			in = c->groups[i] == st->st_gid;
		bits = in ? (st->st_mode >> 3) & 7 : st->st_mode & 7;
	}
	return ((int)bits & mask) == mask;
}

/*
 * Whether the caller may `mask` node `n`.  A storage object with an owner
 * is judged by its source's mode now, not by the last listing's.
 */
static int node_access(struct view *v, const char *path, const struct node *n,
		       int mask)
{
	struct caller c;
	struct stat st;
	struct be_attr a;
	/* the mode and owner only: a pseudo-file is not rendered for it */
	int rc = tree_stat_nosize(v, path, n, &st);

	if (rc)
		return rc;
	if (n->kind == ND_OBJ && n->obj->owner.has) {
		rc = be_stat(v->fs->ckpt, n->obj->key, &a);
		if (rc)
			return rc;
		st.st_mode = S_IFREG | (a.owner.perm & 07777);
		st.st_uid = a.owner.uid;
		st.st_gid = a.owner.gid;
	}
	get_caller(&c);
	return caller_may(&c, &st, mask) ? 0 : -EACCES;
}

static bool ops_caller_allowed(struct stfs *fs)
{
	struct caller c;

	get_caller(&c);
	return delete_caller_allowed(fs, &c);
}

/* The node of the directory holding `path` (0: none held), and the name
 * of `path` in it (*name points into path). */
static uint64_t parent_of(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	char parent[4096];
	size_t pl;

	if (!slash || !slash[1])
		return 0;
	pl = slash == path ? 1 : (size_t)(slash - path);
	if (pl >= sizeof(parent))
		return 0;
	memcpy(parent, path, pl);
	parent[pl] = '\0';
	*name = slash + 1;
	return inodes_find(g_nodes, parent);
}

/* A notification to the kernel answered `rc`: counted in .stfs/stats
 * (README "Prometheus"); ENOENT, the kernel held no such node or name,
 * is the common answer and counted apart. */
static void notified(int rc)
{
	STFS_INC(g_fs, notify_sent);
	if (rc == -ENOENT)
		STFS_INC(g_fs, notify_enoent);
	else if (rc)
		STFS_INC(g_fs, notify_failed);
}

/* Tell the kernel that node `ino` at `path` may have changed: its
 * attributes, data and listing, and its name in its parent (expired in
 * place where the kernel can: the next use asks LOOKUP, or a READDIRPLUS
 * of the parent refreshes it, and an unchanged node keeps its nodeid). */
static void inval_node(struct fuse_session *se, uint64_t ino, const char *path)
{
	const char *name = NULL;
	uint64_t pino;
	int rc = -ENOSYS;

	notified(fuse_lowlevel_notify_inval_inode(se, ino, 0, 0));
	pino = parent_of(path, &name);
	if (!pino)
		return;
	if (g_expire_only)
		rc = fuse_lowlevel_notify_expire_entry(
			se, pino, name, strlen(name), FUSE_LL_EXPIRE_ONLY);
	if (rc != -ENOSYS) {
		notified(rc);
		return;
	}
	notified(
		fuse_lowlevel_notify_inval_entry(se, pino, name, strlen(name)));
}

static void invalidate_jobs(struct fuse_session *se, const char *const *ids,
			    size_t n, bool set_changed);

/* the job id of "/jobs/<id>" exactly, or NULL */
static const char *job_dir_id(const char *path)
{
	return strncmp(path, "/jobs/", 6) == 0 && path[6] &&
			       !strchr(path + 6, '/')
		       ? path + 6
		       : NULL;
}

/*
 * delete.c's invalidation worker asks the kernel through this, off the
 * FUSE call path: a node the kernel holds loses its attributes, data and
 * cached listing (the next stat or readdir asks again); a name it holds no
 * node for loses its negative entry.  A job directory stands for the whole
 * job while the freshness ticker runs (README "Caching in the kernel"):
 * a deletion or release changed its pipelines' status, links and
 * listings too.
 */
static void invalidate_path(void *cookie, const char *path)
{
	struct fuse_session *se = cookie;
	uint64_t ino = inodes_find(g_nodes, path), pino;
	const char *job = job_dir_id(path), *name = NULL;

	if (job && g_fresh) {
		invalidate_jobs(se, &job, 1, false);
	} else if (ino) {
		inodes_dir_forget(g_nodes, ino);
		notified(fuse_lowlevel_notify_inval_inode(se, ino, 0, 0));
	} else if ((pino = parent_of(path, &name))) {
		notified(fuse_lowlevel_notify_inval_entry(se, pino, name,
							  strlen(name)));
	}
}

/*
 * README "Caching in the kernel": jobs `ids` were added, removed or
 * changed (the freshness ticker, or a deletion): every node the kernel
 * holds at or below /jobs/<id> is invalidated (found by prefix in the
 * inode table, at the cost of those nodes), a job the kernel holds no
 * node of loses its negative entry, and /jobs its listing when the set of
 * jobs changed.  n == 0: only the epoch moves (the ticker's first digest).
 */
static void invalidate_jobs(struct fuse_session *se, const char *const *ids,
			    size_t n, bool set_changed)
{
	char(*tops)[80] = n ? calloc(n, sizeof(*tops)) : NULL;
	const char **tp = n ? calloc(n, sizeof(*tp)) : NULL;
	uint64_t *inos = NULL, jobs;
	size_t n_inos = 0, m = 0;

	if (n && (!tops || !tp)) {
		free(tops);
		free(tp);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (snprintf(tops[m], sizeof(tops[m]), "/jobs/%s", ids[i]) >=
		    (int)sizeof(tops[m]))
			continue;
		tp[m] = tops[m];
		m++;
	}
	STFS_ADD(g_fs, jobs_invalidated, m);
	if (inodes_invalidate_under(g_nodes, tp, m, &inos, &n_inos) == 0) {
		if (m)
			log_debug("kernel: %zu job(s) changed (%s%s), %zu "
				  "node(s) invalidated",
				  m, tp[0] + 6, m > 1 ? ", ..." : "", n_inos);
		for (size_t i = 0; i < n_inos; i++) {
			char *path = NULL;

			if (inodes_path(g_nodes, inos[i], &path) == 0)
				inval_node(se, inos[i], path);
			free(path);
		}
	}
	jobs = inodes_find(g_nodes, "/jobs");
	for (size_t i = 0; jobs && i < m; i++)
		if (!inodes_find(g_nodes, tp[i])) /* a negative entry */
			notified(fuse_lowlevel_notify_inval_entry(
				se, jobs, tp[i] + 6, strlen(tp[i] + 6)));
	if (jobs && set_changed) {
		inodes_dir_forget(g_nodes, jobs);
		notified(fuse_lowlevel_notify_inval_inode(se, jobs, 0, 0));
	}
	free(inos);
	free(tops);
	free(tp);
}

static struct fuse_session *g_se;

static void fresh_changed(void *cookie, const char *const *ids, size_t n,
			  bool set_changed)
{
	invalidate_jobs(cookie, ids, n, set_changed);
}

/* Whether `path` is kept long in the kernel: jobs/ and below, but for the
 * live `restore` files (README "Caching in the kernel"). */
static bool long_path(const char *path)
{
	const char *slash;

	if (g_kttl <= g_ttl || strncmp(path, "/jobs", 5) != 0 ||
	    (path[5] && path[5] != '/'))
		return false;
	slash = strrchr(path, '/');
	return !(slash && strcmp(slash, "/restore") == 0 && slash > path + 5 &&
		 memchr(path + 6, '/', (size_t)(slash - (path + 6))) == NULL);
}

/* The lifetime of a reply about `path`, built from a view taken at
 * invalidation epoch `epoch`: long below jobs/ when nothing was
 * invalidated since (else the reply may predate what the kernel was told). */
static double reply_ttl(const char *path, uint64_t epoch)
{
	if (!long_path(path) || !fresh_ready(g_fresh) ||
	    inodes_epoch(g_nodes) != epoch)
		return g_ttl;
	fresh_touch(g_fresh);
	return g_kttl;
}

/*
 * README "Caching in the kernel": without OPENDIR the kernel opens every
 * directory with FOPEN_KEEP_CACHE | FOPEN_CACHE_DIR (fs/fuse/file.c,
 * fuse_file_open) and keeps a listing it read (fs/fuse/readdir.c,
 * fuse_readdir_cached) until its pages are dropped (notify_inval_inode)
 * or its mtime changes, i.e. forever for a directory whose listing changes
 * without its mtime.  So every listing handed out gets a lease: cache_ttl
 * (outside jobs/, and a listing that may predate an invalidation), or
 * kernel_ttl below jobs/, where the freshness ticker drops a changed job's
 * listings at once.  The ticker's thread drops each listing when its lease
 * is over (lease_due).  One queue per lifetime, each in due order.
 */
struct lease {
	uint64_t ino;
	int64_t due; /* mono ms */
};
struct leases {
	struct lease *v;
	size_t head, n, cap;
};
static pthread_mutex_t lease_lock = PTHREAD_MUTEX_INITIALIZER;
static struct leases g_leases[2]; /* protected by lease_lock; [1]: long */

static int lease_add(uint64_t ino, bool lng)
{
	struct leases *q = &g_leases[lng];
	int64_t due = mono_ms() + (int64_t)(lng ? g_fs->conf.kernel_ttl_ms
						: g_fs->conf.cache_ttl_ms);
	int rc = 0;

	pthread_mutex_lock(&lease_lock);
	if (q->head && q->n == q->cap) {
		memmove(q->v, q->v + q->head, (q->n - q->head) * sizeof(*q->v));
		q->n -= q->head;
		q->head = 0;
	}
	if (q->n == q->cap) {
		size_t nc = q->cap ? 2 * q->cap : 1024;
		struct lease *nv = realloc(q->v, nc * sizeof(*nv));

		if (nv) {
			q->v = nv;
			q->cap = nc;
		}
	}
	if (q->n < q->cap)
		q->v[q->n++] = (struct lease){ino, due};
	else
		rc = -ENOMEM;
	pthread_mutex_unlock(&lease_lock);
	return rc;
}

/* fresh_due_fn: drop the listings whose lease is over. */
static int64_t lease_due(void *cookie)
{
	struct fuse_session *se = cookie;
	int64_t now = mono_ms(), next = -1;

	for (int k = 0; k < 2; k++) {
		struct leases *q = &g_leases[k];

		for (;;) {
			struct lease l;

			pthread_mutex_lock(&lease_lock);
			if (q->head == q->n) {
				q->head = q->n = 0;
				pthread_mutex_unlock(&lease_lock);
				break;
			}
			l = q->v[q->head];
			if (l.due > now) {
				pthread_mutex_unlock(&lease_lock);
				if (next < 0 || l.due - now < next)
					next = l.due - now;
				break;
			}
			q->head++;
			pthread_mutex_unlock(&lease_lock);
			notified(fuse_lowlevel_notify_inval_inode(se, l.ino, 0,
								  0));
		}
	}
	return next;
}

static void leases_free(void)
{
	pthread_mutex_lock(&lease_lock);
	for (int k = 0; k < 2; k++) {
		free(g_leases[k].v);
		memset(&g_leases[k], 0, sizeof(g_leases[k]));
	}
	pthread_mutex_unlock(&lease_lock);
}

static void ll_init(void *userdata, struct fuse_conn_info *conn)
{
	struct stfs *fs = userdata;

	/* READDIRPLUS (auto) and parallel dirops: the defaults */
	if (g_kttl > g_ttl) {
		/* links below jobs/ change only with their job (invalidated
		 * then), those of by-state/ and by-name/ never */
		if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
			conn->want |= FUSE_CAP_CACHE_SYMLINKS;
		g_expire_only = (conn->capable & FUSE_CAP_EXPIRE_ONLY) != 0;
		if (fresh_start(fs, fs->conf.cache_ttl_ms,
				fs->conf.kernel_ttl_ms, fresh_changed, g_se,
				&g_fresh)) {
			log_warn("no freshness ticker: kernel_ttl falls back "
				 "to cache_ttl");
			g_kttl = g_ttl;
		} else if (!g_auto_unmount &&
			   (conn->capable & FUSE_CAP_NO_OPENDIR_SUPPORT)) {
			/* no OPENDIR/RELEASEDIR per directory: the kernel
			 * keeps every listing, dropped by lease (above) */
			conn->want |= FUSE_CAP_NO_OPENDIR_SUPPORT;
			g_no_opendir = true;
			fresh_set_due(g_fresh, lease_due, g_se);
		}
	}
	delete_set_invalidate(fs, invalidate_path, g_se);
	/* Type=notify: READY=1 once a statfs of the mount is answered */
	notify_ready_when_mounted(30000);
	signals_start(); /* SIGHUP, SIGUSR2: after daemonizing, so here */
}

/* At unmount (ops_main has stopped the worker already): no invalidation
 * after it. */
static void ll_destroy(void *userdata)
{
	delete_set_invalidate(userdata, NULL, NULL);
	fresh_stop(g_fresh);
	g_fresh = NULL;
}

/* Resolve `path` in a fresh view; the caller closes the view (always
 * opened, whatever the result). */
static int resolve(struct view *v, const char *path, struct node **n)
{
	int rc;

	view_open(g_fs, v);
	v->caller_allowed = ops_caller_allowed;
	*n = malloc(sizeof(**n));
	if (!*n)
		return -ENOMEM;
	rc = tree_resolve(v, path, *n);
	if (rc == -ENOENT && strncmp(path, "/jobs/", 6) == 0) {
		/* emptied by an ongoing `rm -r`: still there until its rmdir */
		struct catalog *g = delete_ghost(v->fs, path);

		if (g) {
			catalog_put(v->cat);
			v->cat = g;
			rc = tree_resolve(v, path, *n);
			if (rc == 0 && (*n)->kind == ND_OBJ &&
			    delete_is_removed(v->fs, (*n)->obj->key))
				rc = -ENOENT;
		}
	}
	return rc;
}

/* The attributes of `path` (resolved afresh); `size`: false for an open
 * pseudo-file, whose length and time are its handle's (tree_stat_nosize). */
static int path_stat_as(const char *path, struct stat *st, bool size)
{
	struct view v;
	struct node *n = NULL;
	int rc = resolve(&v, path, &n);

	if (rc == 0)
		rc = size ? tree_stat(&v, path, n, st)
			  : tree_stat_nosize(&v, path, n, st);
	free(n);
	view_close(&v);
	return rc;
}

static int path_stat(const char *path, struct stat *st)
{
	return path_stat_as(path, st, true);
}

static void entry_of(struct fuse_entry_param *e, uint64_t ino,
		     const struct stat *st, double ttl)
{
	memset(e, 0, sizeof(*e));
	e->ino = ino;
	e->generation = 1; /* nodeids are never reused (inodes.h) */
	e->attr = *st;
	e->attr_timeout = ttl;
	e->entry_timeout = ttl;
}

static void ll_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	struct intr d;
	struct stat st;
	char *path = NULL;
	uint64_t ino = 0, epoch = inodes_epoch(g_nodes);
	double ttl = g_ttl;
	int rc;

	call_begin(&d, req);
	STFS_INC(g_fs, lookup);
	rc = inodes_child(g_nodes, parent, name, &path);
	if (rc == 0)
		rc = path_stat(path, &st);
	if (rc == 0 && !(ino = inodes_ref(g_nodes, path)))
		rc = -ENOMEM;
	call_end(&d);
	if (rc == 0)
		ttl = reply_ttl(path, epoch);
	free(path);
	if (rc == -ENOENT && g_ttl > 0) {
		/* a negative entry, kept as long as a positive one */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = g_ttl;
		fuse_reply_entry(req, &e);
		return;
	}
	if (rc) {
		fuse_reply_err(req, -rc);
		return;
	}
	entry_of(&e, ino, &st, ttl);
	if (fuse_reply_entry(req, &e) == -ENOENT)
		inodes_forget(g_nodes, ino, 1); /* interrupted: not taken */
}

static void ll_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	STFS_INC(g_fs, forget);
	inodes_forget(g_nodes, ino, nlookup);
	fuse_reply_none(req);
}

static void ll_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	STFS_ADD(g_fs, forget, count);
	for (size_t i = 0; i < count; i++)
		inodes_forget(g_nodes, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void ll_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct handle *h = fi ? (struct handle *)(uintptr_t)fi->fh : NULL;
	struct intr d;
	struct stat st;
	char *path = NULL;
	uint64_t epoch = inodes_epoch(g_nodes);
	double ttl = g_ttl;
	int rc;

	call_begin(&d, req);
	STFS_INC(g_fs, getattr);
	rc = inodes_path(g_nodes, ino, &path);
	if (rc == 0)
		rc = path_stat_as(path, &st, !(h && h->pe));
	if (rc == 0 && h && h->pe) {
		/* fstat of an open pseudo-file: its own snapshot */
		st.st_size = (off_t)h->pe->len;
		st.st_blocks = (blkcnt_t)((h->pe->len + 511) / 512);
		st.st_mtim.tv_sec = h->pe->mtime_s;
		st.st_mtim.tv_nsec = 0;
		st.st_ctim = st.st_atim = st.st_mtim;
	}
	call_end(&d);
	/* an open pseudo-file's own snapshot is not kept */
	if (rc == 0 && !(h && h->pe))
		ttl = reply_ttl(path, epoch);
	free(path);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, ttl);
}

/*
 * An open directory: its listing, taken at opendir (and again at a rewind
 * to offset 0), so that a continuation at offset k resumes at entry k
 * instead of listing everything again (tree.h, tree_dir).
 */
struct dir_handle {
	pthread_mutex_t lock;
	struct tree_dir *d; /* protected by lock; NULL: not listed yet */
	uint64_t epoch;	    /* protected by lock; when d was listed */
	bool served;	    /* protected by lock; a readdir answered */
};

static void dh_free(struct dir_handle *dh)
{
	if (dh) {
		tree_dir_close(dh->d);
		pthread_mutex_destroy(&dh->lock);
		free(dh);
	}
}

static void dir_handle_free(struct fuse_file_info *fi)
{
	dh_free((struct dir_handle *)(uintptr_t)fi->fh);
}

/*
 * Without OPENDIR (g_no_opendir) no handle carries a listing from one
 * READDIR to the next: the listing taken at offset 0 is kept here, by
 * directory, until the call that finds its end (or until LIST_SLOTS
 * listings being read at once push out the least recent one), so that a
 * continuation at offset k resumes at entry k of the same listing.  A
 * continuation that finds none lists again.
 */
#define LIST_SLOTS 16
static struct {
	uint64_t ino;
	struct dir_handle *dh;
	uint64_t used;
} g_lists[LIST_SLOTS]; /* protected by lists_lock */
static pthread_mutex_t lists_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t lists_clock; /* protected by lists_lock */

/* The listing kept for `ino` (taken out: the caller keeps or frees it). */
static struct dir_handle *list_take(uint64_t ino)
{
	struct dir_handle *dh = NULL;

	pthread_mutex_lock(&lists_lock);
	for (size_t i = 0; i < LIST_SLOTS; i++)
		if (g_lists[i].dh && g_lists[i].ino == ino) {
			dh = g_lists[i].dh;
			g_lists[i].dh = NULL;
			break;
		}
	pthread_mutex_unlock(&lists_lock);
	return dh;
}

static void list_keep(uint64_t ino, struct dir_handle *dh)
{
	struct dir_handle *old = NULL;
	size_t at = 0;

	pthread_mutex_lock(&lists_lock);
	for (size_t i = 0; i < LIST_SLOTS; i++) {
		if (g_lists[i].dh && g_lists[i].ino == ino) {
			at = i; /* another pass over it: the newer wins */
			break;
		}
		if (!g_lists[i].dh ||
		    (g_lists[at].dh && g_lists[i].used < g_lists[at].used))
			at = i;
	}
	old = g_lists[at].dh;
	g_lists[at].ino = ino;
	g_lists[at].dh = dh;
	g_lists[at].used = ++lists_clock;
	pthread_mutex_unlock(&lists_lock);
	dh_free(old);
}

static void lists_clear(void)
{
	pthread_mutex_lock(&lists_lock);
	for (size_t i = 0; i < LIST_SLOTS; i++) {
		dh_free(g_lists[i].dh);
		g_lists[i].dh = NULL;
	}
	pthread_mutex_unlock(&lists_lock);
}

/* The listing of directory `path` (resolved afresh). */
static int dir_list(const char *path, struct tree_dir **out)
{
	struct view v;
	struct node *n = NULL;
	int rc = resolve(&v, path, &n);

	*out = NULL;
	if (rc == 0 && n->kind == ND_PSEUDO)
		rc = -ENOTDIR;
	if (rc == 0)
		rc = tree_dir_open(&v, path, n, out); /* closes v */
	else
		view_close(&v);
	free(n);
	return rc;
}

/*
 * README "Performance, as measured here": the kernel caches every
 * listing (cache_readdir), and keeps its copy across this opendir
 * (keep_cache) only when the listing just taken names the same entries as
 * the copy it holds, taken less than cache_ttl ago (inodes_dir_same).  A
 * walk after a change therefore sees it: every opendir lists afresh, and
 * only an unchanged listing is served from the kernel's copy, sparing the
 * readdir calls and, while the entries it came with are valid, every
 * per-entry LOOKUP.  Below jobs/, where the freshness ticker invalidates
 * what changed (README "Caching in the kernel"), a copy taken less than
 * kernel_ttl ago and not invalidated since is kept without listing again;
 * the listing is taken at the first readdir, if the kernel asks one.
 * Without the ticker only: with it the kernel sends no OPENDIR (the first
 * one is answered ENOSYS, g_no_opendir) and listings are leased instead.
 */
static void ll_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct dir_handle *dh = NULL;
	struct tree_dir *td = NULL;
	struct intr d;
	char *path = NULL;
	uint64_t epoch = inodes_epoch(g_nodes);
	bool kept = false, lng = false;
	int rc;

	STFS_INC(g_fs, opendir);
	if (g_no_opendir) {
		/* README "Caching in the kernel": the kernel then opens
		 * directories by itself from now on (no RELEASEDIR either) */
		fuse_reply_err(req, ENOSYS);
		return;
	}
	call_begin(&d, req);
	rc = inodes_path(g_nodes, ino, &path);
	if (rc == 0) {
		lng = long_path(path) && fresh_ready(g_fresh);
		kept = lng &&
		       inodes_dir_valid(g_nodes, ino, mono_ms(),
					(int64_t)g_fs->conf.kernel_ttl_ms);
	}
	if (rc == 0 && !kept)
		rc = dir_list(path, &td);
	if (rc == 0 && !(dh = calloc(1, sizeof(*dh))))
		rc = -ENOMEM;
	if (rc == 0) {
		pthread_mutex_init(&dh->lock, NULL);
		dh->d = td;
		dh->epoch = epoch;
		td = NULL;
		fi->fh = (uint64_t)(uintptr_t)dh;
		fi->cache_readdir = 1;
		fi->keep_cache =
			kept ||
			inodes_dir_same(g_nodes, ino, tree_dir_digest(dh->d),
					mono_ms(),
					lng ? (int64_t)g_fs->conf.kernel_ttl_ms
					    : (int64_t)g_fs->conf.cache_ttl_ms,
					epoch);
	}
	call_end(&d);
	tree_dir_close(td);
	free(path);
	if (rc) {
		fuse_reply_err(req, -rc);
	} else if (fuse_reply_open(req, fi) == -ENOENT) {
		/* interrupted: no releasedir will come */
		inodes_dir_forget(g_nodes, ino);
		dir_handle_free(fi);
	}
}

static void ll_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	(void)ino;
	STFS_INC(g_fs, releasedir);
	dir_handle_free(fi);
	fuse_reply_err(req, 0);
}

/* A readdir reply being filled. */
struct dir_fill {
	fuse_req_t req;
	char *buf;
	size_t size, pos;
	bool plus;
	const char *dir;
	off_t next;	/* offset of the entry being filled */
	double ttl;	/* READDIRPLUS: the entries' lifetime */
	uint64_t *refs; /* READDIRPLUS: the nodeids handed out */
	size_t n_refs, max_refs;
};

static bool dir_add(struct dir_fill *f, const char *name, const struct stat *st,
		    uint64_t ino, double ttl)
{
	size_t room = f->size - f->pos, need;

	if (f->plus) {
		struct fuse_entry_param e;

		need = fuse_add_direntry_plus(f->req, NULL, 0, name, NULL, 0);
		if (need > room)
			return false;
		entry_of(&e, ino, st, ttl);
		fuse_add_direntry_plus(f->req, f->buf + f->pos, room, name, &e,
				       f->next);
	} else {
		need = fuse_add_direntry(f->req, NULL, 0, name, NULL, 0);
		if (need > room)
			return false;
		fuse_add_direntry(f->req, f->buf + f->pos, room, name, st,
				  f->next);
	}
	f->pos += need;
	return true;
}

/*
 * One entry, resolved and stat'ed: READDIRPLUS hands the kernel its node
 * (a reference, as a LOOKUP would) and attributes, so `du` and `find -type`
 * need no LOOKUP of their own.
 */
static int dir_fill_one(void *cookie, const char *name, const struct stat *st)
{
	struct dir_fill *f = cookie;
	uint64_t ino = 0;
	char child[4096];
	double ttl = g_ttl;

	f->next++;
	if (f->plus) {
		size_t need =
			fuse_add_direntry_plus(f->req, NULL, 0, name, NULL, 0);

		if (need > f->size - f->pos || f->n_refs == f->max_refs)
			return 1;
		if (snprintf(child, sizeof(child), "%s%s%s", f->dir,
			     strcmp(f->dir, "/") == 0 ? "" : "/",
			     name) < (int)sizeof(child)) {
			ino = inodes_ref(g_nodes, child);
			if (f->ttl > g_ttl && long_path(child))
				ttl = f->ttl;
		}
		if (ino)
			f->refs[f->n_refs++] = ino;
	}
	return dir_add(f, name, st, ino, ttl) ? 0 : 1;
}

static void dir_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi, bool plus)
{
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;
	struct dir_fill f = {
		.req = req, .size = size, .plus = plus, .ttl = g_ttl};
	size_t from = off > 2 ? (size_t)(off - 2) : 0;
	struct stat dot = {.st_mode = S_IFDIR, .st_ino = ino};
	char *path = NULL;
	struct intr d;
	bool own = false; /* no OPENDIR: dh is ours (g_lists) */
	int rc = 0;

	if (!dh && g_no_opendir) {
		own = true;
		dh = off > 0 ? list_take(ino) : NULL;
		if (!dh && (dh = calloc(1, sizeof(*dh))))
			pthread_mutex_init(&dh->lock, NULL);
	}
	if (!dh) {
		fuse_reply_err(req, own ? ENOMEM : EBADF);
		return;
	}
	call_begin(&d, req);
	STFS_INC(g_fs, readdir);
	f.buf = malloc(size ? size : 1);
	rc = inodes_path(g_nodes, ino, &path);
	f.dir = path;
	f.max_refs = size / 24 + 1; /* an entry takes more than 24 bytes */
	if (rc == 0 && !f.buf)
		rc = -ENOMEM;
	if (rc == 0 && plus && !(f.refs = calloc(f.max_refs, sizeof(*f.refs))))
		rc = -ENOMEM;
	if (rc)
		goto out;
	pthread_mutex_lock(&dh->lock);
	if (!dh->d || (off == 0 && dh->served)) {
		/* not listed at opendir (the kernel was to keep its copy, and
		 * asks nonetheless), or a rewind: list now */
		struct tree_dir *td = NULL;
		uint64_t epoch = inodes_epoch(g_nodes);
		bool first = !dh->d;

		rc = dir_list(path, &td);
		if (rc == 0) {
			tree_dir_close(dh->d);
			dh->d = td;
			dh->epoch = epoch;
		}
		if (rc == 0 && first)
			(void)inodes_dir_same(
				g_nodes, ino, tree_dir_digest(td), mono_ms(),
				(int64_t)g_fs->conf.kernel_ttl_ms, epoch);
		else
			inodes_dir_forget(g_nodes, ino);
	}
	dh->served = true;
	if (rc == 0 && plus) {
		f.ttl = reply_ttl(path, dh->epoch);
		if (f.ttl < g_kttl && long_path(path))
			/* these entries are short-lived: the copy the kernel
			 * takes of the listing is not to be kept long */
			inodes_dir_forget(g_nodes, ino);
	}
	/* "." is offset 1, ".." 2, entry k (from 0) 3 + k */
	if (rc == 0 && off < 1) {
		f.next = 1;
		if (!dir_add(&f, ".", &dot, 0, g_ttl))
			goto unlock;
	}
	if (rc == 0 && off < 2) {
		f.next = 2;
		if (!dir_add(&f, "..", &dot, 0, g_ttl))
			goto unlock;
	}
	if (rc == 0) {
		f.next = 2 + (off_t)from;
		rc = tree_dir_fill(dh->d, from, dir_fill_one, &f);
	}
unlock:
	/* no OPENDIR: the kernel keeps what it reads now until its lease is
	 * over (a listing that may predate an invalidation: a short one) */
	if (rc == 0 && own && (off == 0 || inodes_epoch(g_nodes) != dh->epoch))
		rc = lease_add(ino, f.ttl >= g_kttl && f.ttl > g_ttl &&
					    inodes_epoch(g_nodes) == dh->epoch);
	pthread_mutex_unlock(&dh->lock);
out:
	if (own) {
		if (rc == 0 && f.pos > 0)
			list_keep(ino, dh);
		else
			dh_free(dh); /* its end, or an error */
		dh = NULL;
	}
	call_end(&d);
	if (rc) {
		for (size_t i = 0; i < f.n_refs; i++)
			inodes_forget(g_nodes, f.refs[i], 1);
		fuse_reply_err(req, -rc);
	} else if (fuse_reply_buf(req, f.buf, f.pos) == -ENOENT) {
		/* interrupted: the kernel took none of the entries */
		for (size_t i = 0; i < f.n_refs; i++)
			inodes_forget(g_nodes, f.refs[i], 1);
	}
	free(f.refs);
	free(f.buf);
	free(path);
}

static void ll_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	dir_read(req, ino, size, off, fi, false);
}

static void ll_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	dir_read(req, ino, size, off, fi, true);
}

static int do_open(const char *path, struct fuse_file_info *fi)
{
	struct stfs *fs = g_fs;
	struct view v;
	struct node *n = NULL;
	struct handle *h = NULL;
	int rc;

	STFS_INC(fs, open);
	rc = resolve(&v, path, &n);
	if (rc)
		goto out;
	h = calloc(1, sizeof(*h));
	if (!h) {
		rc = -ENOMEM;
		goto out;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
		if (n->kind != ND_PSEUDO || n->pf != PF_RESTORE) {
			STFS_INC(fs, refused_mutations);
			rc = -EROFS;
			goto out;
		}
		/* the release control: `echo release > restore` */
		h->ctl = true;
	} else {
		rc = node_access(&v, path, n, R_OK);
		if (rc)
			goto out;
	}
	switch (n->kind) {
	case ND_OBJ:
	case ND_IMAP_OBJ:
		h->be = n->kind == ND_OBJ ? fs->ckpt : fs->imap;
		h->key = strdup(n->kind == ND_OBJ ? n->obj->key : n->sub);
		if (!h->key)
			rc = -ENOMEM;
		fi->keep_cache = 1;
		break;
	case ND_PSEUDO:
		rc = tree_content(&v, path, n, &h->pe);
		fi->direct_io = 1;
		break;
	case ND_LINK:
		rc = -ELOOP;
		break;
	default:
		rc = -EISDIR;
		break;
	}
	if (rc == 0) {
		fi->fh = (uint64_t)(uintptr_t)h;
		h = NULL;
	}
out:
	if (h) {
		free(h->key);
		free(h);
	}
	free(n);
	view_close(&v);
	return rc;
}

static void handle_free(struct handle *h)
{
	if (h) {
		pcache_put(h->pe);
		free(h->key);
		free(h);
	}
}

static void ll_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct intr d;
	char *path = NULL;
	int rc;

	call_begin(&d, req);
	rc = inodes_path(g_nodes, ino, &path);
	if (rc == 0)
		rc = do_open(path, fi);
	call_end(&d);
	free(path);
	if (rc)
		fuse_reply_err(req, -rc);
	else if (fuse_reply_open(req, fi) == -ENOENT)
		handle_free((struct handle *)(uintptr_t)fi->fh);
}

/*
 * Each serving thread's read buffer, kept between reads: a malloc per
 * 256 KiB read is an mmap and its page faults (the large-block threshold,
 * mount.c), which halved the throughput of a big object.  fuse_reply_buf
 * has copied the bytes out when it returns, so the buffer is the thread's
 * again; freed when the thread ends.
 */
static pthread_key_t rbuf_key;
static pthread_once_t rbuf_once = PTHREAD_ONCE_INIT;

struct rbuf {
	size_t cap;
	char data[];
};

static void rbuf_make_key(void)
{
	(void)pthread_key_create(&rbuf_key, free);
}

static char *read_buf(size_t size)
{
	struct rbuf *b;

	pthread_once(&rbuf_once, rbuf_make_key);
	b = pthread_getspecific(rbuf_key);
	if (!b || b->cap < size) {
		struct rbuf *nb = malloc(sizeof(*nb) + size);

		if (!nb)
			return NULL;
		nb->cap = size;
		free(b);
		b = nb;
		if (pthread_setspecific(rbuf_key, b) != 0) {
			free(b);
			return NULL;
		}
	}
	return b->data;
}

static void ll_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	struct intr d;
	char *buf = NULL;
	ssize_t n;

	(void)ino;
	call_begin(&d, req);
	STFS_INC(g_fs, read);
	if (off < 0) {
		n = -EINVAL;
	} else if (h->pe) {
		/* copied: once the kernel has the reply, the reader may close
		 * the file and its RELEASE free the content while writev has
		 * not returned (the sanitizers read the iovec after it) */
		if ((size_t)off >= h->pe->len)
			size = 0;
		else if (size > h->pe->len - (size_t)off)
			size = h->pe->len - (size_t)off;
		n = (ssize_t)size;
		if (size && (buf = read_buf(size)))
			memcpy(buf, h->pe->data + off, size);
		else if (size)
			n = -ENOMEM;
	} else if (!(buf = read_buf(size ? size : 1))) {
		n = -ENOMEM;
	} else {
		n = be_read(h->be, h->key, buf, size, off);
	}
	if (n > 0)
		STFS_ADD(g_fs, read_bytes, (uint64_t)n);
	call_end(&d);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

static void ll_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	(void)ino;
	STFS_INC(g_fs, release);
	handle_free((struct handle *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/* access(2), test -r: what open would say (writing: the op decides) */
static void ll_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct view v;
	struct node *n = NULL;
	struct intr d;
	char *path = NULL;
	int rc;

	STFS_INC(g_fs, access);
	call_begin(&d, req);
	rc = inodes_path(g_nodes, ino, &path);
	if (rc == 0) {
		rc = resolve(&v, path, &n);
		if (rc == 0 && n->kind != ND_LINK)
			rc = node_access(&v, path, n, mask);
		free(n);
		view_close(&v);
	}
	call_end(&d);
	free(path);
	fuse_reply_err(req, -rc);
}

static void ll_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct view v;
	struct node *n = NULL;
	struct intr d;
	char *path = NULL, *target = NULL;
	int rc;

	STFS_INC(g_fs, readlink);
	call_begin(&d, req);
	rc = inodes_path(g_nodes, ino, &path);
	if (rc == 0) {
		rc = resolve(&v, path, &n);
		if (rc == 0 && n->kind != ND_LINK)
			rc = -EINVAL;
		if (rc == 0 && !(target = strdup(n->link)))
			rc = -ENOMEM;
		free(n);
		view_close(&v);
	}
	call_end(&d);
	free(path);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_readlink(req, target);
	free(target);
}

/* ---- extended attributes: stfs's own user.stfs.* */

static int xattr_value(struct view *v, const struct node *n, const char *name,
		       char *out, size_t outsz)
{
	if (n->kind == ND_JOB && strcmp(name, "user.stfs.state") == 0) {
		snprintf(out, outsz, "%s", job_state_name(n->job.state));
		return 0;
	}
	if (n->kind == ND_JOB && strcmp(name, "user.stfs.restore") == 0) {
		snprintf(out, outsz, "%s",
			 render_job_released(v->fs, n->job.id) ? "released"
							       : "protected");
		return 0;
	}
	if ((n->kind == ND_OBJ && n->group == OG_CKPT) || n->kind == ND_CKPT) {
		bool rp = n->kind == ND_OBJ ? n->obj->restore_point
					    : n->ckpt->restore_point;

		if (strcmp(name, "user.stfs.restore_point") == 0) {
			snprintf(out, outsz, "%s", rp ? "yes" : "no");
			return 0;
		}
		if (n->kind == ND_OBJ && n->obj->kind == CAT_REAL &&
		    !n->obj->rn.tmp &&
		    strcmp(name, "user.stfs.checkpoint_type") == 0) {
			snprintf(out, outsz, "%s",
				 ckpt_type_name(ckinfo_type(v->fs->ck,
							    STFS_CK_SRC(v->fs),
							    n->obj)));
			return 0;
		}
	}
	return -ENODATA;
}

static const char *const xattr_names[] = {
	"user.stfs.state",
	"user.stfs.restore",
	"user.stfs.restore_point",
	"user.stfs.checkpoint_type",
};

static void ll_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	struct view v;
	struct node *n = NULL;
	struct intr d;
	char *path = NULL;
	char val[256];
	size_t len = 0;
	int rc;

	STFS_INC(g_fs, getxattr);
	/* ls -l asks every file for ACLs and security labels: answer
	 * without resolving anything.  stfs has neither, so outside user.*
	 * the namespace is not supported (EOPNOTSUPP, as a filesystem
	 * without ACLs or labels answers): ls then stops asking on this
	 * device, where ENODATA made it ask 3 times per entry at every walk
	 * (the kernel caches no xattr; README "Performance, as measured
	 * here") */
	if (strncmp(name, "user.", 5) != 0) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (strncmp(name, "user.stfs.", 10) != 0) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	call_begin(&d, req);
	rc = inodes_path(g_nodes, ino, &path);
	if (rc == 0) {
		rc = resolve(&v, path, &n);
		if (rc == 0)
			rc = xattr_value(&v, n, name, val, sizeof(val));
		free(n);
		view_close(&v);
	}
	if (rc == 0) {
		len = strlen(val);
		if (size && size < len)
			rc = -ERANGE;
	}
	call_end(&d);
	free(path);
	if (rc)
		fuse_reply_err(req, -rc);
	else if (size == 0)
		fuse_reply_xattr(req, len);
	else
		fuse_reply_buf(req, val, len);
}

/* Never EIO (restic stops on it): on any trouble, an empty list. */
static void ll_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char list[256];
	struct view v;
	struct node *n = NULL;
	struct intr d;
	char *path = NULL;
	char val[256];
	size_t need = 0;

	STFS_INC(g_fs, listxattr);
	call_begin(&d, req);
	if (inodes_path(g_nodes, ino, &path) == 0) {
		if (resolve(&v, path, &n) == 0) {
			for (size_t i = 0;
			     i < sizeof(xattr_names) / sizeof(*xattr_names);
			     i++) {
				size_t len = strlen(xattr_names[i]) + 1;

				if (xattr_value(&v, n, xattr_names[i], val,
						sizeof(val)))
					continue;
				memcpy(list + need, xattr_names[i], len);
				need += len;
			}
		}
		free(n);
		view_close(&v);
	}
	call_end(&d);
	free(path);
	if (size == 0)
		fuse_reply_xattr(req, need);
	else if (need > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, list, need);
}

static void ll_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;
	struct catalog *c;
	struct intr d;

	(void)ino;
	STFS_INC(g_fs, statfs);
	call_begin(&d, req);
	c = stfs_catalog(g_fs, 0);
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	sv.f_blocks = (c->bytes + 4095) / 4096;
	sv.f_files = c->n_objs;
	sv.f_namemax = 255;
	catalog_put(c);
	call_end(&d);
	fuse_reply_statfs(req, &sv);
}

/* ---- everything that would change the tree */

static void refuse(fuse_req_t req)
{
	STFS_INC(g_fs, refused_mutations);
	fuse_reply_err(req, EROFS);
}

static void ll_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	(void)parent;
	(void)name;
	(void)mode;
	refuse(req);
}

static void ll_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)rdev;
	refuse(req);
}

static void ll_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	(void)link;
	(void)parent;
	(void)name;
	refuse(req);
}

static void ll_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	(void)parent;
	(void)name;
	(void)newparent;
	(void)newname;
	(void)flags;
	refuse(req);
}

static void ll_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	(void)ino;
	(void)newparent;
	(void)newname;
	refuse(req);
}

static void ll_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)fi;
	refuse(req);
}

static void ll_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino;
	(void)name;
	refuse(req);
}

/* rm and rmdir: README "Deleting safely" (delete.c), and "Reclaiming IMap
 * WAL space" for the IMap regions (imapdel.c) */
static void remove_entry(fuse_req_t req, fuse_ino_t parent, const char *name,
			 bool dir)
{
	struct caller c;
	struct intr d;
	char *p = NULL;
	int rc;

	call_begin(&d, req);
	rc = inodes_child(g_nodes, parent, name, &p);
	if (rc == 0) {
		get_caller(&c);
		if (imapdel_is_region_path(p))
			rc = dir ? imapdel_rmdir(g_fs, &c, p)
				 : imapdel_unlink(g_fs, &c, p);
		else
			rc = dir ? delete_rmdir(g_fs, &c, p)
				 : delete_unlink(g_fs, &c, p);
		if (rc == 0) /* the next lookup of the name is a new node */
			inodes_unhash(g_nodes, p);
	}
	call_end(&d);
	free(p);
	fuse_reply_err(req, -rc);
}

static void ll_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, false);
}

static void ll_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, true);
}

/* "release" or "protect", surrounded by white space; -EINVAL otherwise */
static int parse_control(const char *b, size_t s, bool *release)
{
	while (s && (b[s - 1] == '\n' || b[s - 1] == ' ' || b[s - 1] == '\t' ||
		     b[s - 1] == '\r' || b[s - 1] == '\0'))
		s--;
	while (s && (*b == ' ' || *b == '\t')) {
		b++;
		s--;
	}
	if (s == 7 && memcmp(b, "release", 7) == 0)
		*release = true;
	else if (s == 7 && memcmp(b, "protect", 7) == 0)
		*release = false;
	else
		return -EINVAL;
	return 0;
}

/* the job directory of a path below /jobs/<id>/ */
static void job_dir_of(const char *p, char *out, size_t outsz)
{
	const char *e = strchr(p + (strncmp(p, "/jobs/", 6) == 0 ? 6 : 0), '/');
	size_t n = e ? (size_t)(e - p) : strlen(p);

	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

static bool is_restore_control(const char *p)
{
	const char *slash = strrchr(p, '/');

	return strncmp(p, "/jobs/", 6) == 0 && slash &&
	       strcmp(slash, "/restore") == 0 &&
	       memchr(p + 6, '/', (size_t)(slash - (p + 6))) == NULL;
}

/*
 * chmod, chown, truncate, utimens, in the order libfuse's path API took
 * them; only the truncation that `echo release > restore` makes first is
 * let through (a no-op).
 */
static void ll_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct intr d;
	struct stat st;
	char *path = NULL;
	int rc;

	(void)fi;
	call_begin(&d, req);
	rc = inodes_path(g_nodes, ino, &path);
	if (rc == 0 && (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID |
				  FUSE_SET_ATTR_GID)))
		rc = -EROFS;
	if (rc == 0 && (to_set & FUSE_SET_ATTR_SIZE) &&
	    !(attr->st_size == 0 && is_restore_control(path)))
		rc = -EROFS;
	if (rc == 0 && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)))
		rc = -EROFS;
	if (rc == -EROFS)
		STFS_INC(g_fs, refused_mutations);
	if (rc == 0) {
		STFS_INC(g_fs, getattr);
		rc = path_stat(path, &st);
	}
	call_end(&d);
	free(path);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, g_ttl);
}

/* `echo release > restore` and `setfattr -n user.stfs.restore`: the
 * release control of the job directory of `path` (README "Deleting
 * safely") */
static int control(fuse_req_t req, const char *path, const char *b, size_t s)
{
	struct caller c;
	struct intr d;
	char job[64];
	bool release;
	int rc;

	call_begin(&d, req);
	rc = parse_control(b, s, &release);
	if (rc == 0) {
		get_caller(&c);
		job_dir_of(path, job, sizeof(job));
		rc = delete_release(g_fs, &c, job, release);
	}
	call_end(&d);
	return rc;
}

static void ll_write(fuse_req_t req, fuse_ino_t ino, const char *b, size_t s,
		     off_t o, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	char *path = NULL;
	int rc;

	(void)o;
	if (!h || !h->ctl || inodes_path(g_nodes, ino, &path)) {
		free(path);
		refuse(req);
		return;
	}
	rc = control(req, path, b, s);
	free(path);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_write(req, s);
}

static void ll_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	char *p = NULL;
	int rc;

	(void)flags;
	if (strcmp(name, "user.stfs.restore") != 0 ||
	    inodes_path(g_nodes, ino, &p) || strncmp(p, "/jobs/", 6) ||
	    strchr(p + 6, '/')) {
		free(p);
		refuse(req);
		return;
	}
	rc = control(req, p, value, size);
	free(p);
	fuse_reply_err(req, -rc);
}

static const struct fuse_lowlevel_ops stfs_ops = {
	.init = ll_init,
	.destroy = ll_destroy,
	.lookup = ll_lookup,
	.forget = ll_forget,
	.forget_multi = ll_forget_multi,
	.getattr = ll_getattr,
	.setattr = ll_setattr,
	.readlink = ll_readlink,
	.mknod = ll_mknod,
	.mkdir = ll_mkdir,
	.unlink = ll_unlink,
	.rmdir = ll_rmdir,
	.symlink = ll_symlink,
	.rename = ll_rename,
	.link = ll_link,
	.open = ll_open,
	.read = ll_read,
	.write = ll_write,
	.release = ll_release,
	.opendir = ll_opendir,
	.readdir = ll_readdir,
	.readdirplus = ll_readdirplus,
	.releasedir = ll_releasedir,
	.statfs = ll_statfs,
	.setxattr = ll_setxattr,
	.getxattr = ll_getxattr,
	.listxattr = ll_listxattr,
	.removexattr = ll_removexattr,
	.access = ll_access,
	.create = ll_create,
};

/* whether mount option `name` is among args' -o lists */
static bool has_mount_opt(const struct fuse_args *args, const char *name)
{
	size_t n = strlen(name);

	for (int i = 0; i < args->argc; i++) {
		const char *o = args->argv[i];

		if (strncmp(o, "-o", 2) != 0)
			continue;
		o = o[2] ? o + 2 : (i + 1 < args->argc ? args->argv[++i] : "");
		for (const char *p = o; (p = strstr(p, name)) != NULL; p += n)
			if ((p == o || p[-1] == ',') && (p[n] == ',' || !p[n]))
				return true;
	}
	return false;
}

int ops_main(struct fuse_args *args, struct stfs *fs)
{
	struct fuse_cmdline_opts opts = {0};
	struct fuse_session *se;
	int res;

	if (fuse_parse_cmdline(args, &opts) != 0)
		return 1;
	if (!opts.mountpoint) {
		fprintf(stderr, "stfs: no mountpoint specified\n");
		res = 2;
		goto out1;
	}
	if (inodes_new(&g_nodes)) {
		res = 3;
		goto out1;
	}
	g_fs = fs;
	g_ttl = fs->conf.cache_ttl_ms / 1000.0;
	/* README "Caching in the kernel": kernel_ttl 0 (or not above a
	 * cache_ttl that is not 0) keeps the old lifetimes, and no ticker */
	g_kttl = fs->conf.cache_ttl_ms &&
				 fs->conf.kernel_ttl_ms > fs->conf.cache_ttl_ms
			 ? fs->conf.kernel_ttl_ms / 1000.0
			 : g_ttl;
	g_auto_unmount = has_mount_opt(args, "auto_unmount");
	se = fuse_session_new(args, &stfs_ops, sizeof(stfs_ops), fs);
	if (!se) {
		res = 3;
		goto out1;
	}
	g_se = se;
	if (fuse_session_mount(se, opts.mountpoint) != 0) {
		res = 4;
		goto out2;
	}
	if (fuse_daemonize(opts.foreground) != 0) {
		res = 5;
		goto out3;
	}
	if (fuse_set_signal_handlers(se) != 0) {
		res = 6;
		goto out3;
	}
	if (opts.singlethread) {
		res = fuse_session_loop(se);
	} else {
		struct fuse_loop_config *lc = fuse_loop_cfg_create();

		if (!lc) {
			res = 7;
			goto out4;
		}
		fuse_loop_cfg_set_clone_fd(lc, (unsigned)opts.clone_fd);
		fuse_loop_cfg_set_idle_threads(lc, opts.max_idle_threads);
		fuse_loop_cfg_set_max_threads(lc, opts.max_threads);
		res = fuse_session_loop_mt(se, lc);
		fuse_loop_cfg_destroy(lc);
	}
	if (res)
		res = 7;
out4:
	/* the worker sends notifications on the session: stop it while the
	 * session is whole; the ticker too */
	delete_set_invalidate(fs, NULL, NULL);
	fresh_stop(g_fresh);
	g_fresh = NULL;
	fuse_remove_signal_handlers(se);
out3:
	fuse_session_unmount(se);
out2:
	delete_set_invalidate(fs, NULL, NULL);
	fuse_session_destroy(se);
out1:
	lists_clear();
	leases_free();
	inodes_free(g_nodes);
	g_nodes = NULL;
	free(opts.mountpoint);
	return res;
}
