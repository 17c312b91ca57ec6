/*
 * local — the POSIX reference backend: a namespace is a directory.
 *
 *   file:///abs/path/   file:/abs/path   /abs/path
 *
 * The root is pinned (README "Who can read what", stfs(1) SECURITY): it is
 * opened once, component by component from "/" with O_NOFOLLOW|O_DIRECTORY,
 * and that descriptor is kept; every op works relative to it.  On the way
 * each directory is judged: one owned by a user other than root, the
 * daemon's user or `namespace_owner`, or writable by group or others
 * (except a sticky root-owned parent such as /tmp), could be swapped by
 * that user for a symlink to anywhere, so the namespace is refused.  A root
 * that does not exist yet is pinned when it appears (judged then); a
 * pinned root that is removed is pinned again from its path, the same way.
 * A root renamed away and replaced by a symlink stays pinned to the
 * directory: the symlink is never followed.
 *
 * Below the root the relative path is walked one component at a time with
 * O_NOFOLLOW|O_DIRECTORY, so no symlink anywhere below the root is followed
 * and no path can leave the root.  Symlinks and special files are
 * invisible: not listed, -ENOENT on stat/read/remove.
 *
 * Every entry carries its owner and permission bits (be_owner), reduced by
 * what the directories on the way to it (root and parents included) deny.
 *
 * Threads: the pin (root_fd, chain) is guarded by pin_lock, held only for
 * local system calls; everything else in priv is immutable after init.
 */
#include "backends/backend.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/log.h"
#include "util/relpath.h"

#define LOCAL_MAX_DEPTH 64
/* directories from "/" to the deepest listed one: the root's own path
 * (at most LOCAL_MAX_DEPTH components) and LOCAL_MAX_DEPTH below it */
#define LOCAL_MAX_CHAIN (2 * LOCAL_MAX_DEPTH + 1)

/* one directory on the way to an entry: what it lets through */
struct anc {
	uid_t uid;
	gid_t gid;
	mode_t mode;
};

/* the directories from "/" to the directory being worked in */
struct chain {
	struct anc d[LOCAL_MAX_CHAIN];
	int n;
	bool lost; /* a directory did not fit or could not be read */
};

struct local_priv {
	char *root; /* absolute, without trailing '/' except for "/" */
	bool has_owner;
	uid_t owner; /* namespace_owner */
	bool lock_ok;
	pthread_mutex_t pin_lock;
	/* protected by pin_lock */
	bool pinned;
	int root_fd;
	struct chain root_chain;      /* "/" .. the root, inclusive */
	char refused[PATH_MAX + 160]; /* the last refusal logged */
};

/* false (and the chain is lost) when it is full */
static bool chain_push(struct chain *c, const struct stat *st)
{
	if (c->n == LOCAL_MAX_CHAIN) {
		c->lost = true;
		return false;
	}
	c->d[c->n++] = (struct anc){st->st_uid, st->st_gid, st->st_mode};
	return true;
}

/*
 * The class bits of an entry that directory `d` lets through: a class
 * keeps its bits when it may search `d`.  Who is in the entry's owner or
 * group class is not known here, so the judgement is the strict one: the
 * entry's owner searches `d` with d's owner bits only when it owns `d`,
 * its group with d's group bits only when `d` has the same group, and
 * everyone else with d's other bits.
 */
static mode_t reach(const struct anc *d, const struct stat *st)
{
	mode_t keep = 0;

	if (d->uid == st->st_uid ? (d->mode & S_IXUSR) : (d->mode & S_IXOTH))
		keep |= S_IRWXU;
	if (d->gid == st->st_gid ? (d->mode & S_IXGRP) : (d->mode & S_IXOTH))
		keep |= S_IRWXG;
	if (d->mode & S_IXOTH)
		keep |= S_IRWXO;
	return keep;
}

static void to_owner(const struct chain *c, const struct stat *st,
		     struct be_owner *o)
{
	/* a way not known in full lets no one but root through */
	mode_t keep = c->lost ? 0 : S_IRWXU | S_IRWXG | S_IRWXO;

	for (int i = 0; i < c->n; i++)
		keep &= reach(&c->d[i], st);
	o->has = true;
	o->perm = (uint32_t)(st->st_mode & (07000 | keep));
	o->uid = (uint32_t)st->st_uid;
	o->gid = (uint32_t)st->st_gid;
}

/* namespace_owner: a user name, else a numeric uid */
static int resolve_owner(const char *name, uid_t *uid)
{
	struct passwd pw, *res = NULL;
	char mem[4096], *end;
	unsigned long v;

	if (getpwnam_r(name, &pw, mem, sizeof(mem), &res) == 0 && res) {
		*uid = res->pw_uid;
		return 0;
	}
	errno = 0;
	v = strtoul(name, &end, 10);
	if (name[0] >= '0' && name[0] <= '9' && !*end && !errno &&
	    v < (unsigned long)(uid_t)-1) {
		*uid = (uid_t)v;
		return 0;
	}
	return -EINVAL;
}

/*
 * Whether directory `st` (the path up to `len` bytes of the root's path)
 * may stand on the way to the namespace: NULL when safe, else why not, in
 * `why`.
 */
static const char *unsafe_dir(const struct local_priv *lp,
			      const struct stat *st, bool is_root, char *why,
			      size_t whysz, size_t len)
{
	const char *path = len ? lp->root : "/";
	int plen = len ? (int)len : 1;

	if (st->st_uid != 0 && st->st_uid != geteuid() &&
	    !(lp->has_owner && st->st_uid == lp->owner)) {
		snprintf(why, whysz,
			 "%.*s is owned by uid %u, neither root nor this "
			 "daemon's user: that user could point the namespace "
			 "anywhere (trust them with -o namespace_owner)",
			 plen, path, (unsigned)st->st_uid);
		return why;
	}
	/* a sticky directory of root's (/tmp) is the normal parent: others
	 * may create beside, never rename or replace what is not theirs */
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) &&
	    (is_root || !(st->st_mode & S_ISVTX) || st->st_uid != 0)) {
		snprintf(why, whysz,
			 "%.*s is writable by %s (mode %04o): they could point "
			 "the namespace anywhere",
			 plen, path,
			 st->st_mode & S_IWOTH ? "every user" : "its group",
			 (unsigned)(st->st_mode & 07777));
		return why;
	}
	return NULL;
}

/*
 * Walk from "/" to the root without following a symlink, judging every
 * directory; on success pin the root.  pin_lock is held.  0; -ENOENT (not
 * there yet: its existing parents were judged); -EPERM (unsafe or a
 * symlink, reason in `why`); -errno.
 */
static int pin_root(struct local_priv *lp, char *why, size_t whysz)
{
	char comp[NAME_MAX + 1];
	const char *p = lp->root + 1, *e;
	struct chain ch = {.n = 0};
	struct stat st;
	int fd, nfd, rc;

	why[0] = '\0';
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		goto fail_errno;
	if (unsafe_dir(lp, &st, !*p, why, whysz, 0)) {
		close(fd);
		return -EPERM;
	}
	chain_push(&ch, &st);
	while (*p) {
		size_t n;

		e = strchr(p, '/');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n > NAME_MAX) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		nfd = openat(fd, comp,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			rc = -errno;
			if ((rc == -ELOOP || rc == -ENOTDIR) &&
			    fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode)) {
				snprintf(why, whysz,
					 "%.*s is a symbolic link: stfs never "
					 "follows one to its namespace (give "
					 "the real path)",
					 (int)(p + n - lp->root), lp->root);
				rc = -EPERM;
			}
			close(fd);
			return rc;
		}
		close(fd);
		fd = nfd;
		if (fstat(fd, &st) < 0)
			goto fail_errno;
		if (unsafe_dir(lp, &st, !e || !e[1], why, whysz,
			       (size_t)(p + n - lp->root))) {
			close(fd);
			return -EPERM;
		}
		chain_push(&ch, &st);
		p = e ? e + 1 : p + n;
	}
	lp->root_fd = fd;
	lp->root_chain = ch;
	lp->pinned = true;
	return 0;
fail_errno:
	rc = -errno;
	close(fd);
	return rc;
}

/* Log a refusal once (until the reason changes). pin_lock is held. */
static void note_refusal(struct local_priv *lp, const char *why)
{
	if (!why[0] || strcmp(why, lp->refused) == 0)
		return;
	snprintf(lp->refused, sizeof(lp->refused), "%s", why);
	log_err("local: namespace %s refused: %s", lp->root, why);
}

static int local_init(struct backend *be, const char *uri,
		      const struct stfs_conf *conf)
{
	struct local_priv *lp = be->priv;
	struct local_settings set;
	const char *p = uri;
	char why[sizeof(lp->refused)];
	size_t len;
	int rc;

	if (!strncasecmp(p, "file://", 7)) {
		p += 7;
		/* file://localhost/abs is the same as file:///abs */
		if (!strncasecmp(p, "localhost/", 10))
			p += 9;
	} else if (!strncasecmp(p, "file:", 5)) {
		p += 5;
	}
	if (p[0] != '/') {
		log_err("local: '%s' is not file:///ABSOLUTE/PATH", uri);
		return -EINVAL;
	}
	len = strlen(p);
	while (len > 1 && p[len - 1] == '/')
		len--;
	if (len >= PATH_MAX)
		return -ENAMETOOLONG;
	lp->root = strndup(p, len);
	if (!lp->root)
		return -ENOMEM;
	/* the backend's own settings: nothing else of conf is read */
	conf_local_settings(conf, &set);
	if (set.namespace_owner) {
		if (resolve_owner(set.namespace_owner, &lp->owner)) {
			log_err("local: namespace_owner=%s: no such user",
				set.namespace_owner);
			return -EINVAL;
		}
		lp->has_owner = true;
	}
	if (pthread_mutex_init(&lp->pin_lock, NULL))
		return -ENOMEM;
	lp->lock_ok = true;
	/* an unsafe or symlinked root is refused at mount; one that does
	 * not exist yet is pinned when it appears */
	rc = pin_root(lp, why, sizeof(why));
	if (rc == -EPERM) {
		note_refusal(lp, why);
		return rc;
	}
	return 0;
}

static void local_destroy(struct backend *be)
{
	struct local_priv *lp = be->priv;

	if (!lp)
		return;
	if (lp->pinned)
		close(lp->root_fd);
	if (lp->lock_ok)
		pthread_mutex_destroy(&lp->pin_lock);
	free(lp->root);
}

/*
 * A fresh descriptor of the pinned root (its own offset, for readdir), or
 * -errno; *ch (when not NULL) gets the directories from "/" to it.  A
 * pinned root that was removed (no links left) is pinned again.
 */
static int open_root(struct backend *be, struct chain *ch)
{
	struct local_priv *lp = be->priv;
	char why[sizeof(lp->refused)];
	struct stat st;
	int fd = -1, rc = 0;

	pthread_mutex_lock(&lp->pin_lock);
	for (int attempt = 0; attempt < 2 && fd < 0 && rc == 0; attempt++) {
		if (!lp->pinned) {
			rc = pin_root(lp, why, sizeof(why));
			if (rc == -EPERM)
				note_refusal(lp, why);
			if (rc)
				break;
		}
		fd = openat(lp->root_fd, ".",
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_nlink > 0) {
			/* the root's own mode as it is now; its parents'
			 * as they were when it was pinned */
			struct chain *rch = &lp->root_chain;

			rch->d[rch->n - 1] =
				(struct anc){st.st_uid, st.st_gid, st.st_mode};
			break;
		}
		if (fd < 0 && errno != ENOENT) {
			rc = -errno;
			break;
		}
		/* removed: forget it and pin what is at the path now */
		if (fd >= 0)
			close(fd);
		fd = -1;
		close(lp->root_fd);
		lp->pinned = false;
	}
	if (fd >= 0 && ch)
		*ch = lp->root_chain;
	pthread_mutex_unlock(&lp->pin_lock);
	if (fd < 0)
		return rc ? rc : -ENOENT;
	return fd;
}

/*
 * openat() directory `name` below `fd` without following a symlink: a
 * symlink (Linux reports ENOTDIR or ELOOP for it) is -ENOENT, invisible.
 * With `ch`, the directory is appended to it.
 */
static int open_subdir(int fd, const char *name, struct chain *ch)
{
	struct stat st;
	int nfd, err;

	nfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (nfd >= 0) {
		if (ch && fstat(nfd, &st) == 0)
			chain_push(ch, &st);
		else if (ch)
			ch->lost = true;
		return nfd;
	}
	err = errno;
	if ((err == ENOTDIR || err == ELOOP) &&
	    fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(st.st_mode))
		return -ENOENT;
	return -err;
}

/*
 * Open the directory holding the last component of `path` (which must be
 * non-empty) and point *leaf at that component.  Returns the fd or -errno.
 * A symlink on the way is -ENOENT (invisible), a file on the way -ENOTDIR.
 */
static int open_parent(struct backend *be, const char *path, const char **leaf,
		       struct chain *ch)
{
	char comp[NAME_MAX + 1];
	const char *p = path, *e;
	int fd, nfd;

	fd = open_root(be, ch);
	if (fd < 0)
		return fd;
	while ((e = strchr(p, '/'))) {
		size_t n = (size_t)(e - p);

		if (n > NAME_MAX) {
			close(fd);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		nfd = open_subdir(fd, comp, ch);
		close(fd);
		if (nfd < 0)
			return nfd;
		fd = nfd;
		p = e + 1;
	}
	*leaf = p;
	return fd;
}

/*
 * Check `path`, refuse the root itself with `root_err`, and open the
 * directory holding the last component (*leaf), as open_parent().
 */
static int open_leaf_dir(struct backend *be, const char *path, int root_err,
			 const char **leaf)
{
	int rc = relpath_check(path);

	if (rc < 0)
		return rc;
	if (!*path)
		return root_err;
	return open_parent(be, path, leaf, NULL);
}

/* open directory `dir` ("" = root), never following a symlink; *ch gets
 * the directories from "/" to it, itself included */
static int open_dir(struct backend *be, const char *dir, struct chain *ch)
{
	const char *leaf;
	int pfd, fd;

	if (!*dir)
		return open_root(be, ch);
	pfd = open_parent(be, dir, &leaf, ch);
	if (pfd < 0)
		return pfd;
	fd = open_subdir(pfd, leaf, ch);
	close(pfd);
	return fd;
}

/* `ch`: the directories from "/" to the one holding the entry */
static void to_attr(const struct chain *ch, const struct stat *st,
		    struct be_attr *a)
{
	to_owner(ch, st, &a->owner);
	a->type = S_ISDIR(st->st_mode) ? BE_DIR : BE_FILE;
	a->size = S_ISREG(st->st_mode) ? (uint64_t)st->st_size : 0;
	a->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000LL +
		      st->st_mtim.tv_nsec;
}

static void note(struct backend *be, const char *op, const char *path, int rc)
{
	/* the caller's mistakes and routine misses are not the store's
	 * failures: neither logged nor reported as health */
	if (rc == -ENOENT || rc == -ENOTDIR || rc == -EISDIR || rc == -EINVAL ||
	    rc == -ENOTEMPTY)
		return;
	if (rc >= 0) {
		be_note_ok(be);
	} else {
		log_warn("local: %s '%s': %s", op, path, strerror(-rc));
		be_note_error(be, rc, "%s %s: %s", op, path, strerror(-rc));
	}
}

/* one directory, non-recursive; `ch` runs from "/" to it */
static int list_one(int fd, const struct chain *ch, be_fill_fn fill,
		    void *cookie)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	struct stat st;
	struct be_attr a;
	int rc = 0;

	if (!d) {
		rc = -errno;
		close(fd);
		return rc;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			rc = errno ? -errno : 0;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) <
		    0) {
			if (errno == ENOENT)
				continue; /* removed meanwhile */
			rc = -errno;
			break;
		}
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			continue;
		to_attr(ch, &st, &a);
		if (fill(cookie, de->d_name, &a))
			break;
	}
	closedir(d);
	return rc;
}

struct walk_level {
	DIR *d;
	size_t prefix_len; /* length of the relative name up to this dir */
	bool pushed;	   /* this dir is on the chain */
};

/* every regular file below fd, names relative to it; iterative.  `ch`
 * runs from "/" to fd's directory and follows the walk down and up. */
static int list_recursive(int fd, const char *dir, struct chain *ch,
			  be_fill_fn fill, void *cookie)
{
	struct walk_level stack[LOCAL_MAX_DEPTH];
	struct buf name;
	struct dirent *de;
	struct stat st;
	struct be_attr a;
	int depth = 0, rc = 0, nfd;
	bool warned = false;

	buf_init(&name, 1 << 16);
	stack[0].d = fdopendir(fd);
	if (!stack[0].d) {
		rc = -errno;
		close(fd);
		return rc;
	}
	stack[0].prefix_len = 0;
	stack[0].pushed = false; /* the caller's */
	while (depth >= 0) {
		struct walk_level *lv = &stack[depth];

		errno = 0;
		de = readdir(lv->d);
		if (!de) {
			if (errno) {
				rc = -errno;
				break;
			}
			closedir(lv->d);
			if (lv->pushed)
				ch->n--;
			depth--;
			continue;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(lv->d), de->d_name, &st,
			    AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue;
			rc = -errno;
			break;
		}
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
			continue;
		name.len = lv->prefix_len;
		if (name.data)
			name.data[name.len] = '\0';
		if ((lv->prefix_len && buf_puts(&name, "/") < 0) ||
		    buf_puts(&name, de->d_name) < 0) {
			rc = -ENAMETOOLONG;
			break;
		}
		if (S_ISREG(st.st_mode)) {
			to_attr(ch, &st, &a);
			if (fill(cookie, name.data, &a))
				break;
			continue;
		}
		if (depth + 1 >= LOCAL_MAX_DEPTH) {
			if (!warned)
				log_warn("local: '%s/%s' is deeper than %d "
					 "levels; not listed",
					 dir, name.data, LOCAL_MAX_DEPTH);
			warned = true;
			continue;
		}
		nfd = openat(dirfd(lv->d), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			if (errno == ENOENT || errno == ELOOP ||
			    errno == ENOTDIR)
				continue; /* replaced meanwhile */
			rc = -errno;
			break;
		}
		stack[depth + 1].d = fdopendir(nfd);
		if (!stack[depth + 1].d) {
			rc = -errno;
			close(nfd);
			break;
		}
		stack[depth + 1].prefix_len = name.len;
		stack[depth + 1].pushed = chain_push(ch, &st);
		depth++;
	}
	for (; depth >= 0; depth--)
		closedir(stack[depth].d);
	buf_release(&name);
	return rc;
}

static int local_list_page(struct backend *be, const char *dir, unsigned flags,
			   const char *cursor, be_fill_fn fill, void *cookie,
			   char **next)
{
	struct chain ch = {.n = 0};
	int fd, rc;

	*next = NULL;
	/* one page holds the whole listing: we never hand out a cursor */
	if (cursor)
		return -EINVAL;
	rc = relpath_check(dir);
	if (rc < 0)
		return rc;
	fd = open_dir(be, dir, &ch);
	if (fd < 0) {
		note(be, "list", dir, fd);
		return fd;
	}
	if (flags & BE_LIST_RECURSIVE)
		rc = list_recursive(fd, dir, &ch, fill, cookie);
	else
		rc = list_one(fd, &ch, fill, cookie);
	note(be, "list", dir, rc);
	return rc;
}

static int local_stat(struct backend *be, const char *path, struct be_attr *out)
{
	struct chain ch = {.n = 0};
	const char *leaf;
	struct stat st;
	int fd, rc = 0;

	rc = relpath_check(path);
	if (rc < 0)
		return rc;
	if (!*path) {
		fd = open_root(be, &ch);
		if (fd < 0)
			return fd;
		if (fstat(fd, &st) < 0)
			rc = -errno;
		ch.n--; /* the root's own parents */
	} else {
		fd = open_parent(be, path, &leaf, &ch);
		if (fd < 0)
			return fd;
		if (fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
			rc = -errno;
	}
	close(fd);
	if (rc == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		rc = -ENOENT; /* symlinks and specials are invisible */
	if (rc == 0)
		to_attr(&ch, &st, out);
	return rc;
}

static ssize_t local_read(struct backend *be, const char *path, void *buf,
			  size_t size, off_t off)
{
	const char *leaf;
	struct stat st;
	size_t done = 0;
	ssize_t n;
	int pfd, fd, rc;

	pfd = open_leaf_dir(be, path, -EISDIR, &leaf);
	if (pfd < 0)
		return pfd;
	/* O_NONBLOCK: opening a FIFO must not hang a FUSE worker */
	fd = openat(pfd, leaf,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	rc = errno;
	close(pfd);
	if (fd < 0)
		return rc == ELOOP ? -ENOENT : -rc;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = -EISDIR;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -ENOENT;
		goto out;
	}
	while (done < size) {
		n = pread(fd, (char *)buf + done, size - done,
			  off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
out:
	close(fd);
	note(be, "read", path, rc);
	return rc < 0 ? rc : (ssize_t)done;
}

static int local_remove(struct backend *be, const char *path)
{
	const char *leaf;
	struct stat st;
	int fd, rc = 0;

	fd = open_leaf_dir(be, path, -EISDIR, &leaf);
	if (fd < 0)
		return fd;
	if (fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		rc = -errno;
	else if (S_ISDIR(st.st_mode))
		rc = -EISDIR;
	else if (!S_ISREG(st.st_mode))
		rc = -ENOENT;
	else if (unlinkat(fd, leaf, 0) < 0)
		rc = -errno;
	close(fd);
	note(be, "remove", path, rc);
	return rc;
}

static int local_rmdir(struct backend *be, const char *path)
{
	const char *leaf;
	struct stat st;
	int fd, rc = 0;

	/* never the namespace itself */
	fd = open_leaf_dir(be, path, -EINVAL, &leaf);
	if (fd < 0)
		return fd;
	if (fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		rc = -errno;
	else if (!S_ISDIR(st.st_mode))
		rc = S_ISREG(st.st_mode) ? -ENOTDIR : -ENOENT;
	else if (unlinkat(fd, leaf, AT_REMOVEDIR) < 0)
		rc = errno == EEXIST ? -ENOTEMPTY : -errno;
	close(fd);
	note(be, "rmdir", path, rc);
	return rc;
}

const struct be_ops be_local_ops = {
	.name = "local",
	.caps = BE_CAP_DELETE,
	.priv_size = sizeof(struct local_priv),
	.init = local_init,
	.destroy = local_destroy,
	.list_page = local_list_page,
	.stat = local_stat,
	.read = local_read,
	.remove = local_remove,
	.rmdir = local_rmdir,
};
