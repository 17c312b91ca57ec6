#include "fusefs/ops.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <fuse_lowlevel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "model/ckinfo.h"
#include "policy/delete.h"
#include "policy/imapdel.h"
#include "util/log.h"
#include "fusefs/notify.h"
#include "model/protostuff.h"
#include "view/render.h"
#include "fusefs/signals.h"
#include "mount/mount.h"
#include "view/tree.h"

static struct stfs *fs_ctx(void)
{
	return fuse_get_context()->private_data;
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
	struct fuse_context *ctx = fuse_get_context();
	int n;

	memset(c, 0, sizeof(*c));
	c->uid = ctx->uid;
	c->gid = ctx->gid;
	c->pid = ctx->pid;
	n = fuse_getgroups(64, c->groups);
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
	int rc = tree_stat(v, path, n, &st);

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

/* delete.c's invalidation worker asks the kernel through this */
static void invalidate_path(void *fuse, const char *path)
{
	fuse_invalidate_path(fuse, path);
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	struct stfs *fs = fs_ctx();
	double ttl = fs->conf.cache_ttl_ms / 1000.0;

	(void)conn;
	cfg->use_ino = 1;
	cfg->entry_timeout = ttl;
	cfg->attr_timeout = ttl;
	cfg->negative_timeout = ttl;
	cfg->nullpath_ok = 0;
	/* Ctrl-C on a long cat/du reaches a hung remote call: the kernel's
	 * INTERRUPT makes fuse_interrupted() true, which http.c polls (main
	 * installs the SIGUSR1 handler libfuse would install for "-o intr") */
	cfg->intr = 1;
	cfg->intr_signal = SIGUSR1;
	delete_set_invalidate(fs, invalidate_path, fuse_get_context()->fuse);
	/* Type=notify: READY=1 once a statfs of the mount is answered */
	notify_ready_when_mounted(30000);
	signals_start(); /* SIGHUP, SIGUSR2: after daemonizing, so here */
	return fs;
}

/* At unmount (ops_main has stopped the worker already; kept for a loop
 * run by other means): no invalidation after it. */
static void fs_destroy(void *private_data)
{
	delete_set_invalidate(private_data, NULL, NULL);
}

/* Resolve `path` in a fresh view; the caller closes the view. */
static int lookup(struct view *v, const char *path, struct node **n)
{
	int rc;

	view_open(fs_ctx(), v);
	v->caller_allowed = ops_caller_allowed;
	*n = malloc(sizeof(**n));
	if (!*n)
		return -ENOMEM;
	/* libfuse passes no path for an open file or directory whose node
	 * is gone (a `find` still reading a directory `rm -r` removed) */
	if (!path)
		return -ENOENT;
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

static int fs_getattr(const char *path, struct stat *st,
		      struct fuse_file_info *fi)
{
	struct stfs *fs = fs_ctx();
	struct handle *h = fi ? (struct handle *)(uintptr_t)fi->fh : NULL;
	struct view v;
	struct node *n = NULL;
	int rc;

	STFS_INC(fs, getattr);
	if (h && h->pe && path) {
		/* fstat of an open pseudo-file: its own snapshot */
		rc = lookup(&v, path, &n);
		if (rc == 0)
			rc = tree_stat(&v, path, n, st);
		if (rc == 0) {
			st->st_size = (off_t)h->pe->len;
			st->st_blocks = (blkcnt_t)((h->pe->len + 511) / 512);
			st->st_mtim.tv_sec = h->pe->mtime_s;
			st->st_mtim.tv_nsec = 0;
			st->st_ctim = st->st_atim = st->st_mtim;
		}
		goto out;
	}
	rc = lookup(&v, path, &n);
	if (rc == 0)
		rc = tree_stat(&v, path, n, st);
out:
	free(n);
	view_close(&v);
	return rc;
}

struct dir_fill {
	void *buf;
	fuse_fill_dir_t filler;
	bool plus;
	off_t next; /* offset of the entry being filled */
};

/*
 * Entries carry offsets (not the 0 of libfuse's buffered mode): only then
 * does libfuse's READDIRPLUS reply carry inode numbers and attributes that
 * the kernel keeps, sparing one LOOKUP per entry.
 */
static int dir_fill(void *cookie, const char *name, const struct stat *st)
{
	struct dir_fill *d = cookie;

	return d->filler(d->buf, name, st, ++d->next,
			 d->plus ? FUSE_FILL_DIR_PLUS : 0);
}

/*
 * An open directory: its listing, taken at the first readdir (and again at
 * a rewind to offset 0), so that a continuation at offset k resumes at
 * entry k instead of listing everything again (tree.h, tree_dir).
 */
struct dir_handle {
	pthread_mutex_t lock;
	struct tree_dir
		*d; /* protected by lock; NULL until the first readdir */
};

/*
 * A checkpoint's directory never changes but by deletion through stfs
 * (which the kernel sees): let the kernel keep its listing.  Every other
 * directory follows the sources and is listed afresh.  libfuse's high-level
 * opendir passes these two flags on from 3.16.1 only (README
 * "Performance"): with an older libfuse every listing reaches the daemon.
 */
static int fs_opendir(const char *path, struct fuse_file_info *fi)
{
	struct view v;
	struct node *n = NULL;
	struct dir_handle *dh;
	int rc;

	rc = lookup(&v, path, &n);
	if (rc == 0 && n->kind == ND_PSEUDO)
		rc = -ENOTDIR;
	if (rc == 0 && (n->kind == ND_CKPT ||
			(n->kind == ND_SUBDIR && n->group == OG_CKPT))) {
		fi->cache_readdir = 1;
		fi->keep_cache = 1;
	}
	if (rc == 0) {
		dh = calloc(1, sizeof(*dh));
		if (!dh) {
			rc = -ENOMEM;
		} else {
			pthread_mutex_init(&dh->lock, NULL);
			fi->fh = (uint64_t)(uintptr_t)dh;
		}
	}
	free(n);
	view_close(&v);
	return rc;
}

static int fs_releasedir(const char *path, struct fuse_file_info *fi)
{
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;

	(void)path;
	if (dh) {
		tree_dir_close(dh->d);
		pthread_mutex_destroy(&dh->lock);
		free(dh);
	}
	return 0;
}

/* Take the listing of `path` into dh (lock held). */
static int dir_take(struct dir_handle *dh, const char *path)
{
	struct view v;
	struct node *n = NULL;
	int rc;

	tree_dir_close(dh->d);
	dh->d = NULL;
	rc = lookup(&v, path, &n);
	if (rc == 0)
		rc = tree_dir_open(&v, path, n, &dh->d);
	else
		view_close(&v);
	free(n);
	return rc;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t filler,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	struct stfs *fs = fs_ctx();
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;
	struct dir_fill d = {.buf = buf,
			     .filler = filler,
			     .plus = (flags & FUSE_READDIR_PLUS) != 0};
	size_t from = off > 2 ? (size_t)(off - 2) : 0;
	int rc = 0;

	STFS_INC(fs, readdir);
	if (!dh)
		return -EBADF;
	pthread_mutex_lock(&dh->lock);
	if (off == 0 || !dh->d)
		rc = dir_take(dh, path);
	if (rc)
		goto out;
	/* "." is offset 1, ".." 2, entry k (from 0) 3 + k */
	if (off < 1 && filler(buf, ".", NULL, 1, 0))
		goto out;
	if (off < 2 && filler(buf, "..", NULL, 2, 0))
		goto out;
	d.next = 2 + (off_t)from;
	rc = tree_dir_fill(dh->d, from, dir_fill, &d);
out:
	pthread_mutex_unlock(&dh->lock);
	return rc;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct stfs *fs = fs_ctx();
	struct view v;
	struct node *n = NULL;
	struct handle *h = NULL;
	int rc;

	STFS_INC(fs, open);
	rc = lookup(&v, path, &n);
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

static int fs_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct stfs *fs = fs_ctx();
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	ssize_t n;

	(void)path;
	STFS_INC(fs, read);
	if (off < 0)
		return -EINVAL;
	if (h->pe) {
		if ((size_t)off >= h->pe->len)
			return 0;
		if (size > h->pe->len - (size_t)off)
			size = h->pe->len - (size_t)off;
		memcpy(buf, h->pe->data + off, size);
		n = (ssize_t)size;
	} else {
		n = be_read(h->be, h->key, buf, size, off);
	}
	if (n > 0)
		STFS_ADD(fs, read_bytes, (uint64_t)n);
	return (int)n;
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;

	(void)path;
	if (h) {
		pcache_put(h->pe);
		free(h->key);
		free(h);
	}
	return 0;
}

/* access(2), test -r: what open would say (writing: the op decides) */
static int fs_access(const char *path, int mask)
{
	struct view v;
	struct node *n = NULL;
	int rc;

	rc = lookup(&v, path, &n);
	if (rc == 0 && n->kind != ND_LINK)
		rc = node_access(&v, path, n, mask);
	free(n);
	view_close(&v);
	return rc;
}

static int fs_readlink(const char *path, char *buf, size_t size)
{
	struct view v;
	struct node *n = NULL;
	int rc;

	rc = lookup(&v, path, &n);
	if (rc == 0 && n->kind != ND_LINK)
		rc = -EINVAL;
	if (rc == 0 && size > 0)
		snprintf(buf, size, "%s", n->link);
	free(n);
	view_close(&v);
	return rc;
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

static int fs_getxattr(const char *path, const char *name, char *value,
		       size_t size)
{
	struct view v;
	struct node *n = NULL;
	char val[256];
	int rc;

	STFS_INC(fs_ctx(), xattr);
	/* ls -l asks every file for ACLs and security labels: answer
	 * without resolving anything */
	if (strncmp(name, "user.stfs.", 10) != 0)
		return -ENODATA;
	rc = lookup(&v, path, &n);
	if (rc == 0)
		rc = xattr_value(&v, n, name, val, sizeof(val));
	if (rc == 0) {
		size_t len = strlen(val);

		if (size == 0)
			rc = (int)len;
		else if (size < len)
			rc = -ERANGE;
		else {
			memcpy(value, val, len);
			rc = (int)len;
		}
	}
	free(n);
	view_close(&v);
	return rc;
}

/* Never EIO (restic stops on it): on any trouble, an empty list. */
static int fs_listxattr(const char *path, char *list, size_t size)
{
	struct view v;
	struct node *n = NULL;
	char val[256];
	size_t need = 0;

	STFS_INC(fs_ctx(), xattr);
	if (lookup(&v, path, &n) == 0) {
		for (size_t i = 0;
		     i < sizeof(xattr_names) / sizeof(*xattr_names); i++) {
			size_t len = strlen(xattr_names[i]) + 1;

			if (xattr_value(&v, n, xattr_names[i], val,
					sizeof(val)))
				continue;
			if (size && need + len <= size)
				memcpy(list + need, xattr_names[i], len);
			need += len;
		}
	}
	free(n);
	view_close(&v);
	if (size && need > size)
		return -ERANGE;
	return (int)need;
}

static int fs_statfs(const char *path, struct statvfs *sv)
{
	struct stfs *fs = fs_ctx();
	struct catalog *c = stfs_catalog(fs, 0);

	(void)path;
	memset(sv, 0, sizeof(*sv));
	sv->f_bsize = 4096;
	sv->f_frsize = 4096;
	sv->f_blocks = (c->bytes + 4095) / 4096;
	sv->f_files = c->n_objs;
	sv->f_namemax = 255;
	catalog_put(c);
	return 0;
}

/* ---- everything that would change the tree */

static int refuse(void)
{
	STFS_INC(fs_ctx(), refused_mutations);
	return -EROFS;
}

static int fs_mkdir(const char *p, mode_t m)
{
	(void)p;
	(void)m;
	return refuse();
}

static int fs_mknod(const char *p, mode_t m, dev_t d)
{
	(void)p;
	(void)m;
	(void)d;
	return refuse();
}

static int fs_unlink(const char *p)
{
	struct caller c;

	get_caller(&c);
	if (imapdel_is_region_path(p)) /* README "Reclaiming IMap WAL space" */
		return imapdel_unlink(fs_ctx(), &c, p);
	return delete_unlink(fs_ctx(), &c, p);
}

static int fs_rmdir(const char *p)
{
	struct caller c;

	get_caller(&c);
	if (imapdel_is_region_path(p))
		return imapdel_rmdir(fs_ctx(), &c, p);
	return delete_rmdir(fs_ctx(), &c, p);
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

static int fs_symlink(const char *a, const char *b)
{
	(void)a;
	(void)b;
	return refuse();
}

static int fs_rename(const char *a, const char *b, unsigned int flags)
{
	(void)a;
	(void)b;
	(void)flags;
	return refuse();
}

static int fs_link(const char *a, const char *b)
{
	(void)a;
	(void)b;
	return refuse();
}

static int fs_chmod(const char *p, mode_t m, struct fuse_file_info *fi)
{
	(void)p;
	(void)m;
	(void)fi;
	return refuse();
}

static int fs_chown(const char *p, uid_t u, gid_t g, struct fuse_file_info *fi)
{
	(void)p;
	(void)u;
	(void)g;
	(void)fi;
	return refuse();
}

static bool is_restore_control(const char *p)
{
	const char *slash = strrchr(p, '/');

	return strncmp(p, "/jobs/", 6) == 0 && slash &&
	       strcmp(slash, "/restore") == 0 &&
	       memchr(p + 6, '/', (size_t)(slash - (p + 6))) == NULL;
}

static int fs_truncate(const char *p, off_t o, struct fuse_file_info *fi)
{
	(void)fi;
	/* `echo release > restore` truncates first: a no-op */
	if (p && o == 0 && is_restore_control(p))
		return 0;
	return refuse();
}

static int fs_write(const char *p, const char *b, size_t s, off_t o,
		    struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	struct caller c;
	char job[64];
	bool release;
	int rc;

	(void)o;
	if (!h || !h->ctl || !p)
		return refuse();
	if (parse_control(b, s, &release))
		return -EINVAL;
	get_caller(&c);
	job_dir_of(p, job, sizeof(job));
	rc = delete_release(fs_ctx(), &c, job, release);
	return rc ? rc : (int)s;
}

static int fs_create(const char *p, mode_t m, struct fuse_file_info *fi)
{
	(void)p;
	(void)m;
	(void)fi;
	return refuse();
}

static int fs_utimens(const char *p, const struct timespec tv[2],
		      struct fuse_file_info *fi)
{
	(void)p;
	(void)tv;
	(void)fi;
	return refuse();
}

static int fs_setxattr(const char *p, const char *n, const char *v, size_t s,
		       int f)
{
	struct caller c;
	bool release;
	char job[64];

	(void)f;
	if (strcmp(n, "user.stfs.restore") != 0 || strncmp(p, "/jobs/", 6) ||
	    strchr(p + 6, '/'))
		return refuse();
	if (parse_control(v, s, &release))
		return -EINVAL;
	get_caller(&c);
	job_dir_of(p, job, sizeof(job));
	return delete_release(fs_ctx(), &c, job, release);
}

static int fs_removexattr(const char *p, const char *n)
{
	(void)p;
	(void)n;
	return refuse();
}

const struct fuse_operations stfs_ops = {
	.init = fs_init,
	.destroy = fs_destroy,
	.getattr = fs_getattr,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.releasedir = fs_releasedir,
	.open = fs_open,
	.read = fs_read,
	.release = fs_release,
	.access = fs_access,
	.readlink = fs_readlink,
	.getxattr = fs_getxattr,
	.listxattr = fs_listxattr,
	.statfs = fs_statfs,
	.mkdir = fs_mkdir,
	.mknod = fs_mknod,
	.unlink = fs_unlink,
	.rmdir = fs_rmdir,
	.symlink = fs_symlink,
	.rename = fs_rename,
	.link = fs_link,
	.chmod = fs_chmod,
	.chown = fs_chown,
	.truncate = fs_truncate,
	.write = fs_write,
	.create = fs_create,
	.utimens = fs_utimens,
	.setxattr = fs_setxattr,
	.removexattr = fs_removexattr,
};

int ops_main(struct fuse_args *args, struct stfs *fs)
{
	struct fuse_cmdline_opts opts = {0};
	struct fuse_session *se;
	struct fuse *fuse;
	int res;

	if (fuse_parse_cmdline(args, &opts) != 0)
		return 1;
	if (!opts.mountpoint) {
		fprintf(stderr, "stfs: no mountpoint specified\n");
		res = 2;
		goto out1;
	}
	fuse = fuse_new(args, &stfs_ops, sizeof(stfs_ops), fs);
	if (!fuse) {
		res = 3;
		goto out1;
	}
	if (fuse_mount(fuse, opts.mountpoint) != 0) {
		res = 4;
		goto out2;
	}
	if (fuse_daemonize(opts.foreground) != 0) {
		res = 5;
		goto out3;
	}
	se = fuse_get_session(fuse);
	if (fuse_set_signal_handlers(se) != 0) {
		res = 6;
		goto out3;
	}
	if (opts.singlethread) {
		res = fuse_loop(fuse);
	} else {
		struct fuse_loop_config *lc = fuse_loop_cfg_create();

		if (!lc) {
			res = 7;
			goto out4;
		}
		fuse_loop_cfg_set_clone_fd(lc, (unsigned)opts.clone_fd);
		fuse_loop_cfg_set_idle_threads(lc, opts.max_idle_threads);
		fuse_loop_cfg_set_max_threads(lc, opts.max_threads);
		res = fuse_loop_mt(fuse, lc);
		fuse_loop_cfg_destroy(lc);
	}
	if (res)
		res = 7;
out4:
	/* the worker calls fuse_invalidate_path(): stop it while the handle
	 * is whole (fuse_destroy frees its lock before calling .destroy) */
	delete_set_invalidate(fs, NULL, NULL);
	fuse_remove_signal_handlers(se);
out3:
	fuse_unmount(fuse);
out2:
	delete_set_invalidate(fs, NULL, NULL);
	fuse_destroy(fuse);
out1:
	free(opts.mountpoint);
	return res;
}
