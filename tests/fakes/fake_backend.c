/*
 * fake_backend — see fake_backend.h.
 *
 * Files are kept sorted by path, so the files below a directory are one
 * contiguous run and a listing is deterministic; a list cursor is the
 * decimal index of the next entry of that (re-computed) listing.
 */
#include "fake_backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fake_file {
	char *path;
	char *data;
	size_t len;
	int64_t mtime_ns;
};

struct fake_fault {
	enum fake_op op;
	char *path; /* NULL: every path */
	int err;
};

struct fake_priv {
	pthread_mutex_t lock;
	struct fake_file *files;
	size_t n, cap;
	struct fake_fault *faults;
	size_t n_faults;
	unsigned calls[FAKE_N_OPS];
	size_t page_size;
};

static int fake_init(struct backend *be, const char *uri,
		     const struct stfs_conf *conf)
{
	struct fake_priv *fp = be->priv;

	(void)uri;
	(void)conf;
	pthread_mutex_init(&fp->lock, NULL);
	return 0;
}

static void fake_destroy(struct backend *be)
{
	struct fake_priv *fp = be->priv;
	size_t i;

	for (i = 0; i < fp->n; i++) {
		free(fp->files[i].path);
		free(fp->files[i].data);
	}
	free(fp->files);
	fake_be_clear_faults(be);
	pthread_mutex_destroy(&fp->lock);
}

/* index of `path`, or of where it would go; *found */
static size_t find(struct fake_priv *fp, const char *path, bool *found)
{
	size_t lo = 0, hi = fp->n, mid;
	int c;

	*found = false;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = strcmp(fp->files[mid].path, path);
		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* count the call, and return the injected fault (0: none); lock held */
static int enter(struct fake_priv *fp, enum fake_op op, const char *path)
{
	int global = 0;
	size_t i;

	fp->calls[op]++;
	for (i = 0; i < fp->n_faults; i++) {
		if (fp->faults[i].op != op)
			continue;
		if (!fp->faults[i].path)
			global = fp->faults[i].err;
		else if (path && !strcmp(fp->faults[i].path, path))
			return fp->faults[i].err;
	}
	return global;
}

/* first index of the run of files below `dir` ("" = all) and its end */
static void dir_run(struct fake_priv *fp, const char *dir, size_t *a, size_t *b)
{
	size_t dl = strlen(dir), i;
	bool found;

	if (!dl) {
		*a = 0;
		*b = fp->n;
		return;
	}
	/* "dir/" sorts right after "dir" and its other siblings */
	i = find(fp, dir, &found);
	while (i < fp->n && strncmp(fp->files[i].path, dir, dl) == 0 &&
	       fp->files[i].path[dl] != '/')
		i++;
	*a = i;
	while (i < fp->n && strncmp(fp->files[i].path, dir, dl) == 0 &&
	       fp->files[i].path[dl] == '/')
		i++;
	*b = i;
}

static int fake_list_page(struct backend *be, const char *dir, unsigned flags,
			  const char *cursor, be_fill_fn fill, void *cookie,
			  char **next)
{
	struct fake_priv *fp = be->priv;
	size_t a, b, i, skip = 0, emitted = 0, idx = 0, off;
	char name[4096];
	const char *last_dir = NULL;
	size_t last_dir_len = 0;
	bool found;
	int rc;

	*next = NULL;
	pthread_mutex_lock(&fp->lock);
	rc = enter(fp, FAKE_LIST, dir);
	if (rc)
		goto out;
	if (cursor) {
		char *end;

		errno = 0;
		skip = strtoul(cursor, &end, 10);
		if (errno || *end || end == cursor) {
			rc = -EINVAL;
			goto out;
		}
	}
	dir_run(fp, dir, &a, &b);
	if (a == b && *dir) {
		find(fp, dir, &found);
		rc = found ? -ENOTDIR : -ENOENT;
		goto out;
	}
	off = *dir ? strlen(dir) + 1 : 0;
	for (i = a; i < b; i++) {
		const char *rel = fp->files[i].path + off;
		const char *slash = strchr(rel, '/');
		struct be_attr at = {.type = BE_FILE};

		if (slash && !(flags & BE_LIST_RECURSIVE)) {
			size_t cl = (size_t)(slash - rel);

			if (last_dir && cl == last_dir_len &&
			    !memcmp(last_dir, rel, cl))
				continue;
			last_dir = rel;
			last_dir_len = cl;
			snprintf(name, sizeof(name), "%.*s", (int)cl, rel);
			at.type = BE_DIR;
		} else {
			snprintf(name, sizeof(name), "%s", rel);
			at.size = fp->files[i].len;
			at.mtime_ns = fp->files[i].mtime_ns;
		}
		if (idx++ < skip)
			continue;
		if (fp->page_size && emitted == fp->page_size) {
			if (asprintf(next, "%zu", idx - 1) < 0) {
				*next = NULL;
				rc = -ENOMEM;
			}
			break;
		}
		emitted++;
		if (fill(cookie, name, &at))
			break;
	}
out:
	pthread_mutex_unlock(&fp->lock);
	return rc;
}

static int fake_stat(struct backend *be, const char *path, struct be_attr *out)
{
	struct fake_priv *fp = be->priv;
	size_t i, a, b;
	bool found;
	int rc;

	pthread_mutex_lock(&fp->lock);
	rc = enter(fp, FAKE_STAT, path);
	if (rc)
		goto out;
	i = find(fp, path, &found);
	if (found) {
		*out = (struct be_attr){.type = BE_FILE,
					.size = fp->files[i].len,
					.mtime_ns = fp->files[i].mtime_ns};
		goto out;
	}
	dir_run(fp, path, &a, &b);
	if (a < b || !*path)
		*out = (struct be_attr){.type = BE_DIR};
	else
		rc = -ENOENT;
out:
	pthread_mutex_unlock(&fp->lock);
	return rc;
}

static ssize_t fake_read(struct backend *be, const char *path, void *buf,
			 size_t size, off_t off)
{
	struct fake_priv *fp = be->priv;
	struct fake_file *f;
	ssize_t rc;
	size_t i, n = 0;
	bool found;

	pthread_mutex_lock(&fp->lock);
	rc = enter(fp, FAKE_READ, path);
	if (rc)
		goto out;
	i = find(fp, path, &found);
	if (!found) {
		size_t a, b;

		dir_run(fp, path, &a, &b);
		rc = a < b ? -EISDIR : -ENOENT;
		goto out;
	}
	f = &fp->files[i];
	if ((uint64_t)off < f->len) {
		n = f->len - (size_t)off;
		if (n > size)
			n = size;
		memcpy(buf, f->data + off, n);
	}
	rc = (ssize_t)n;
out:
	pthread_mutex_unlock(&fp->lock);
	return rc;
}

/* lock held */
static int remove_locked(struct fake_priv *fp, const char *path)
{
	size_t i;
	bool found;

	i = find(fp, path, &found);
	if (!found)
		return -ENOENT;
	free(fp->files[i].path);
	free(fp->files[i].data);
	memmove(&fp->files[i], &fp->files[i + 1],
		(fp->n - i - 1) * sizeof(*fp->files));
	fp->n--;
	return 0;
}

static int fake_remove(struct backend *be, const char *path)
{
	struct fake_priv *fp = be->priv;
	int rc;

	pthread_mutex_lock(&fp->lock);
	rc = enter(fp, FAKE_REMOVE, path);
	if (!rc)
		rc = remove_locked(fp, path);
	pthread_mutex_unlock(&fp->lock);
	return rc;
}

static int fake_rmdir(struct backend *be, const char *path)
{
	struct fake_priv *fp = be->priv;
	size_t a, b;
	bool found;
	int rc;

	pthread_mutex_lock(&fp->lock);
	rc = enter(fp, FAKE_RMDIR, path);
	if (!rc) {
		find(fp, path, &found);
		dir_run(fp, path, &a, &b);
		if (found)
			rc = -ENOTDIR;
		else if (a < b)
			rc = -ENOTEMPTY;
	}
	pthread_mutex_unlock(&fp->lock);
	return rc;
}

/* one store, three sets of capability bits (fake_be_open_caps) */
#define FAKE_OPS(caps_)                                                      \
	{                                                                    \
		.name = "fake", .caps = (caps_),                             \
		.priv_size = sizeof(struct fake_priv), .init = fake_init,    \
		.destroy = fake_destroy, .list_page = fake_list_page,        \
		.stat = fake_stat, .read = fake_read, .remove = fake_remove, \
		.rmdir = fake_rmdir,                                         \
	}
const struct be_ops fake_be_ops = FAKE_OPS(BE_CAP_DELETE);
static const struct be_ops fake_be_ops_remote =
	FAKE_OPS(BE_CAP_DELETE | BE_CAP_REMOTE);
static const struct be_ops fake_be_ops_nodelete = FAKE_OPS(0);

int fake_be_open(struct backend **out)
{
	return be_open_ops(&fake_be_ops, "fake://", NULL, out);
}

int fake_be_open_caps(unsigned caps, struct backend **out)
{
	const struct be_ops *ops = &fake_be_ops;

	if (caps == (BE_CAP_DELETE | BE_CAP_REMOTE))
		ops = &fake_be_ops_remote;
	else if (caps == 0)
		ops = &fake_be_ops_nodelete;
	else if (caps != BE_CAP_DELETE)
		return -EINVAL;
	return be_open_ops(ops, "fake://", NULL, out);
}

int fake_be_add(struct backend *be, const char *path, const void *data,
		size_t len, int64_t mtime_ns)
{
	struct fake_priv *fp = be->priv;
	struct fake_file nf = {.len = len, .mtime_ns = mtime_ns};
	size_t i;
	bool found;

	if (!path)
		return -EINVAL;
	nf.path = strdup(path);
	nf.data = malloc(len ? len : 1);
	if (!nf.path || !nf.data) {
		free(nf.path);
		free(nf.data);
		return -ENOMEM;
	}
	if (len)
		memcpy(nf.data, data, len);
	pthread_mutex_lock(&fp->lock);
	i = find(fp, path, &found);
	if (found) {
		free(fp->files[i].path);
		free(fp->files[i].data);
		fp->files[i] = nf;
		pthread_mutex_unlock(&fp->lock);
		return 0;
	}
	if (fp->n == fp->cap) {
		size_t ncap = fp->cap ? fp->cap * 2 : 16;
		struct fake_file *v = realloc(fp->files, ncap * sizeof(*v));

		if (!v) {
			pthread_mutex_unlock(&fp->lock);
			free(nf.path);
			free(nf.data);
			return -ENOMEM;
		}
		fp->files = v;
		fp->cap = ncap;
	}
	memmove(&fp->files[i + 1], &fp->files[i],
		(fp->n - i) * sizeof(*fp->files));
	fp->files[i] = nf;
	fp->n++;
	pthread_mutex_unlock(&fp->lock);
	return 0;
}

int fake_be_add_str(struct backend *be, const char *path, const char *s,
		    int64_t mtime_ns)
{
	return fake_be_add(be, path, s, strlen(s), mtime_ns);
}

bool fake_be_has(struct backend *be, const char *path)
{
	struct fake_priv *fp = be->priv;
	bool found;

	pthread_mutex_lock(&fp->lock);
	find(fp, path, &found);
	pthread_mutex_unlock(&fp->lock);
	return found;
}

size_t fake_be_count(struct backend *be)
{
	struct fake_priv *fp = be->priv;
	size_t n;

	pthread_mutex_lock(&fp->lock);
	n = fp->n;
	pthread_mutex_unlock(&fp->lock);
	return n;
}

int fake_be_fail(struct backend *be, enum fake_op op, const char *path, int err)
{
	struct fake_priv *fp = be->priv;
	struct fake_fault *v;
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&fp->lock);
	for (i = 0; i < fp->n_faults; i++) {
		struct fake_fault *f = &fp->faults[i];

		if (f->op != op || !!f->path != !!path ||
		    (path && strcmp(f->path, path)))
			continue;
		if (err) {
			f->err = err;
		} else {
			free(f->path);
			*f = fp->faults[--fp->n_faults];
		}
		goto out;
	}
	if (!err)
		goto out;
	v = realloc(fp->faults, (fp->n_faults + 1) * sizeof(*v));
	if (!v) {
		rc = -ENOMEM;
		goto out;
	}
	fp->faults = v;
	v[fp->n_faults] = (struct fake_fault){.op = op, .err = err};
	if (path) {
		v[fp->n_faults].path = strdup(path);
		if (!v[fp->n_faults].path) {
			rc = -ENOMEM;
			goto out;
		}
	}
	fp->n_faults++;
out:
	pthread_mutex_unlock(&fp->lock);
	return rc;
}

void fake_be_clear_faults(struct backend *be)
{
	struct fake_priv *fp = be->priv;
	size_t i;

	pthread_mutex_lock(&fp->lock);
	for (i = 0; i < fp->n_faults; i++)
		free(fp->faults[i].path);
	free(fp->faults);
	fp->faults = NULL;
	fp->n_faults = 0;
	pthread_mutex_unlock(&fp->lock);
}

unsigned fake_be_calls(struct backend *be, enum fake_op op)
{
	struct fake_priv *fp = be->priv;
	unsigned n;

	pthread_mutex_lock(&fp->lock);
	n = op < FAKE_N_OPS ? fp->calls[op] : 0;
	pthread_mutex_unlock(&fp->lock);
	return n;
}

void fake_be_set_page_size(struct backend *be, size_t n)
{
	struct fake_priv *fp = be->priv;

	pthread_mutex_lock(&fp->lock);
	fp->page_size = n;
	pthread_mutex_unlock(&fp->lock);
}
