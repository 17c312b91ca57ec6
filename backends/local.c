/*
 * local — the POSIX reference backend: a namespace is a directory.
 *
 *   file:///abs/path/   file:/abs/path   /abs/path
 *
 * Every op opens the root afresh (so a root created after mount, or
 * replaced, is picked up) and walks the relative path one component at a
 * time with O_NOFOLLOW|O_DIRECTORY, so no symlink anywhere below the root
 * is followed and no path can leave the root.  Symlinks and special files
 * are invisible: not listed, -ENOENT on stat/read/remove.
 *
 * Threads: priv is immutable after init; ops share nothing.
 */
#include "backend.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "relpath.h"

#define LOCAL_MAX_DEPTH 64

struct local_priv {
	char *root; /* absolute, without trailing '/' except for "/" */
};

static const char *const local_schemes[] = {"file", NULL};

static int local_init(struct backend *be, const char *uri,
		      const struct stfs_conf *conf)
{
	struct local_priv *lp = be->priv;
	const char *p = uri;
	size_t len;

	(void)conf;
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
	lp->root = strndup(p, len);
	if (!lp->root)
		return -ENOMEM;
	return 0;
}

static void local_destroy(struct backend *be)
{
	struct local_priv *lp = be->priv;

	if (lp)
		free(lp->root);
}

static int open_root(struct backend *be)
{
	struct local_priv *lp = be->priv;
	int fd = open(lp->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * openat() directory `name` below `fd` without following a symlink: a
 * symlink (Linux reports ENOTDIR or ELOOP for it) is -ENOENT, invisible.
 */
static int open_subdir(int fd, const char *name)
{
	struct stat st;
	int nfd, err;

	nfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (nfd >= 0)
		return nfd;
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
static int open_parent(struct backend *be, const char *path, const char **leaf)
{
	char comp[NAME_MAX + 1];
	const char *p = path, *e;
	int fd, nfd;

	fd = open_root(be);
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
		nfd = open_subdir(fd, comp);
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
	return open_parent(be, path, leaf);
}

/* open directory `dir` ("" = root), never following a symlink */
static int open_dir(struct backend *be, const char *dir)
{
	const char *leaf;
	int pfd, fd;

	if (!*dir)
		return open_root(be);
	pfd = open_parent(be, dir, &leaf);
	if (pfd < 0)
		return pfd;
	fd = open_subdir(pfd, leaf);
	close(pfd);
	return fd;
}

static void to_attr(const struct stat *st, struct be_attr *a)
{
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

/* one directory, non-recursive */
static int list_one(int fd, be_fill_fn fill, void *cookie)
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
		to_attr(&st, &a);
		if (fill(cookie, de->d_name, &a))
			break;
	}
	closedir(d);
	return rc;
}

struct walk_level {
	DIR *d;
	size_t prefix_len; /* length of the relative name up to this dir */
};

/* every regular file below fd, names relative to it; iterative */
static int list_recursive(int fd, const char *dir, be_fill_fn fill,
			  void *cookie)
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
			to_attr(&st, &a);
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
	int fd, rc;

	*next = NULL;
	/* one page holds the whole listing: we never hand out a cursor */
	if (cursor)
		return -EINVAL;
	rc = relpath_check(dir);
	if (rc < 0)
		return rc;
	fd = open_dir(be, dir);
	if (fd < 0) {
		note(be, "list", dir, fd);
		return fd;
	}
	if (flags & BE_LIST_RECURSIVE)
		rc = list_recursive(fd, dir, fill, cookie);
	else
		rc = list_one(fd, fill, cookie);
	note(be, "list", dir, rc);
	return rc;
}

static int local_stat(struct backend *be, const char *path, struct be_attr *out)
{
	const char *leaf;
	struct stat st;
	int fd, rc = 0;

	rc = relpath_check(path);
	if (rc < 0)
		return rc;
	if (!*path) {
		fd = open_root(be);
		if (fd < 0)
			return fd;
		if (fstat(fd, &st) < 0)
			rc = -errno;
	} else {
		fd = open_parent(be, path, &leaf);
		if (fd < 0)
			return fd;
		if (fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
			rc = -errno;
	}
	close(fd);
	if (rc == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		rc = -ENOENT; /* symlinks and specials are invisible */
	if (rc == 0)
		to_attr(&st, out);
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
	.schemes = local_schemes,
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
