/*
 * release — persistent restore releases.  See release.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fdio.h"
#include "util/log.h"
#include "util/pcache.h"
#include "policy/release.h"
#include "util/timefmt.h"

#define ID_SZ	   20
#define TMP_PREFIX ".tmp."

struct rel_ent {
	char id[ID_SZ];
	struct release_bind b; /* what the release covers */
};

struct release_store {
	pthread_mutex_t lock;
	int dfd;	      /* the namespace's releases directory */
	char dir[4096];	      /* its path, for log lines */
	struct rel_ent *ents; /* protected by ->lock; sorted by id (strcmp) */
	size_t n, cap;	      /* protected by ->lock */
	unsigned long tmp_n;  /* protected by ->lock; temp name counter */
	size_t n_legacy;      /* unscoped releases found (ignored) */
};

bool release_id_valid(const char *id)
{
	size_t i;

	if (!id)
		return false;
	for (i = 0; id[i]; i++)
		if (id[i] < '0' || id[i] > '9' || i >= ID_SZ - 1)
			return false;
	return i > 0;
}

/* Index of id, or of where it would go (*found false). Lock held. */
static size_t find(const struct release_store *rs, const char *id, bool *found)
{
	size_t lo = 0, hi = rs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(rs->ents[mid].id, id);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* Make room for one more id; 0 or -ENOMEM. Lock held. */
static int cache_reserve(struct release_store *rs)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		struct rel_ent *n = realloc(rs->ents, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		rs->ents = n;
		rs->cap = cap;
	}
	return 0;
}

/* Add id (or update its binding) in the cache; 0 or -ENOMEM. Lock held. */
static int cache_add(struct release_store *rs, const char *id,
		     const struct release_bind *b)
{
	bool found;
	size_t i = find(rs, id, &found);

	if (found) {
		rs->ents[i].b = *b;
		return 0;
	}
	if (cache_reserve(rs))
		return -ENOMEM;
	memmove(rs->ents + i + 1, rs->ents + i,
		(rs->n - i) * sizeof(*rs->ents));
	snprintf(rs->ents[i].id, ID_SZ, "%s", id);
	rs->ents[i].b = *b;
	rs->n++;
	return 0;
}

static void cache_del(struct release_store *rs, const char *id)
{
	bool found;
	size_t i = find(rs, id, &found);

	if (!found)
		return;
	memmove(rs->ents + i, rs->ents + i + 1,
		(rs->n - i - 1) * sizeof(*rs->ents));
	rs->n--;
}

static int mkdir_0700(const char *path)
{
	if (mkdir(path, 0700) == 0 || errno == EEXIST)
		return 0;
	return -errno;
}

/*
 * The binding of a release file's content "released <time> uid=<uid>
 * newest_ns=<n> finish_s=<s>"; false when it has none (then the file is
 * not taken for a release: a job stays protected rather than released by
 * a file that does not say what it released).
 */
static bool parse_bind(int dfd, const char *name, struct release_bind *b)
{
	char txt[256];
	const char *p, *q;
	ssize_t n;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, txt, sizeof(txt) - 1);
	close(fd);
	if (n <= 0)
		return false;
	txt[n] = '\0';
	p = strstr(txt, " newest_ns=");
	q = strstr(txt, " finish_s=");
	if (strncmp(txt, "released ", 9) != 0 || !p || !q)
		return false;
	return sscanf(p, " newest_ns=%" SCNd64, &b->newest_ns) == 1 &&
	       sscanf(q, " finish_s=%" SCNd64, &b->finish_s) == 1;
}

/* Count the unscoped releases of older versions in `dir` (never used). */
static size_t count_legacy(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (release_id_valid(de->d_name))
			n++;
	closedir(d);
	return n;
}

/* Remove stale temp files and load the ids.  Lock not needed (not shared). */
static int load(struct release_store *rs)
{
	int fd = openat(rs->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		rc = -errno;
		close(fd);
		return rc;
	}
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		struct stat st;

		if (!strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX))) {
			if (unlinkat(rs->dfd, name, 0) == 0)
				log_info("release: removed stale %s/%s",
					 rs->dir, name);
			else
				log_warn("release: cannot remove %s/%s: %s",
					 rs->dir, name, strerror(errno));
			continue;
		}
		if (!release_id_valid(name))
			continue;
		if (fstatat(rs->dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode)) {
			log_warn("release: ignoring %s/%s: not a regular file",
				 rs->dir, name);
			continue;
		}
		{
			struct release_bind b;

			if (!parse_bind(rs->dfd, name, &b)) {
				log_warn("release: ignoring %s/%s: it does not "
					 "say what it released (the job stays "
					 "protected)",
					 rs->dir, name);
				continue;
			}
			rc = cache_add(rs, name, &b);
		}
		if (rc)
			break;
	}
	closedir(d);
	return rc;
}

int release_open(const char *state_dir, const char *ns,
		 struct release_store **out)
{
	struct release_store *rs;
	char top[4096];
	int rc;

	*out = NULL;
	if (!state_dir || !*state_dir || !ns || !*ns)
		return -EINVAL;
	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	rs->dfd = -1;
	if ((size_t)snprintf(top, sizeof(top), "%s/releases", state_dir) >=
		    sizeof(top) ||
	    (size_t)snprintf(rs->dir, sizeof(rs->dir), "%s/%016" PRIx64, top,
			     pcache_hash(ns)) >= sizeof(rs->dir)) {
		free(rs);
		return -EINVAL;
	}
	rc = mkdir_0700(state_dir);
	if (!rc)
		rc = mkdir_0700(top);
	if (!rc)
		rc = mkdir_0700(rs->dir);
	if (rc) {
		log_err("release: cannot create %s (or its parent): %s",
			rs->dir, strerror(-rc));
		free(rs);
		return rc;
	}
	rs->dfd = open(rs->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rs->dfd < 0) {
		rc = -errno;
		log_err("release: cannot open %s: %s", rs->dir, strerror(-rc));
		free(rs);
		return rc;
	}
	rc = load(rs);
	if (rc) {
		log_err("release: cannot read %s: %s", rs->dir, strerror(-rc));
		close(rs->dfd);
		free(rs->ents);
		free(rs);
		return rc;
	}
	/* releases of versions that kept one directory for every namespace
	 * cannot tell which cluster they were for: ignored (protected) */
	rs->n_legacy = count_legacy(top);
	if (rs->n_legacy)
		log_warn("release: %zu release(s) in %s predate per-namespace "
			 "releases and are ignored (those jobs are protected; "
			 "release them again)",
			 rs->n_legacy, top);
	pthread_mutex_init(&rs->lock, NULL);
	*out = rs;
	return 0;
}

void release_close(struct release_store *rs)
{
	if (!rs)
		return;
	pthread_mutex_destroy(&rs->lock);
	close(rs->dfd);
	free(rs->ents);
	free(rs);
}

bool release_is_released(struct release_store *rs, const char *job_id)
{
	bool found;

	if (!rs || !release_id_valid(job_id))
		return false;
	pthread_mutex_lock(&rs->lock);
	find(rs, job_id, &found);
	pthread_mutex_unlock(&rs->lock);
	return found;
}

size_t release_list(struct release_store *rs, char (*ids)[20], size_t max)
{
	size_t n;

	if (!rs)
		return 0;
	pthread_mutex_lock(&rs->lock);
	n = rs->n;
	for (size_t i = 0; ids && i < n && i < max; i++)
		memcpy(ids[i], rs->ents[i].id, sizeof(ids[i]));
	pthread_mutex_unlock(&rs->lock);
	return n;
}

/*
 * Write releases/<id> atomically.  *renamed tells whether the file is in
 * place (even when the directory fsync then failed).  Lock held.
 */
static int write_release(struct release_store *rs, const char *id, uid_t uid,
			 int64_t now_ms, const struct release_bind *b,
			 bool *renamed)
{
	char tmp[64], when[48], line[192];
	int fd, rc, len;

	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%s.%ld.%lu", id, (long)getpid(),
		 rs->tmp_n++);
	timefmt_iso_ms(now_ms, when, sizeof(when));
	len = snprintf(line, sizeof(line),
		       "released %s uid=%lu newest_ns=%" PRId64
		       " finish_s=%" PRId64 "\n",
		       when, (unsigned long)uid, b->newest_ns, b->finish_s);
	fd = openat(rs->dfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rc = fd_write_all(fd, line, (size_t)len);
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && renameat(rs->dfd, tmp, rs->dfd, id) < 0)
		rc = -errno;
	if (rc) {
		unlinkat(rs->dfd, tmp, 0);
		return rc;
	}
	*renamed = true;
	if (fsync(rs->dfd) < 0)
		return -errno;
	return 0;
}

int release_set(struct release_store *rs, const char *job_id, bool released,
		uid_t uid, int64_t now_ms, const struct release_bind *bind)
{
	static const struct release_bind none;
	bool done = false;
	int rc = 0;

	if (!rs || !release_id_valid(job_id))
		return -EINVAL;
	if (!bind)
		bind = &none;
	pthread_mutex_lock(&rs->lock);
	if (released) {
		/* room first, so a file on disk is never missing in the cache
		 */
		rc = cache_reserve(rs);
		if (!rc)
			rc = write_release(rs, job_id, uid, now_ms, bind,
					   &done);
		if (done)
			(void)cache_add(rs, job_id, bind);
	} else {
		if (unlinkat(rs->dfd, job_id, 0) < 0 && errno != ENOENT) {
			rc = -errno;
		} else {
			done = true;
			if (fsync(rs->dfd) < 0)
				rc = -errno;
		}
		if (done)
			cache_del(rs, job_id);
	}
	pthread_mutex_unlock(&rs->lock);
	if (rc)
		log_err("release: %s %s/%s: %s",
			released ? "cannot write" : "cannot remove", rs->dir,
			job_id, strerror(-rc));
	return rc;
}

bool release_covers(struct release_store *rs, const char *job_id,
		    int64_t newest_ns, int64_t finish_s)
{
	bool found, ok = false;
	size_t i;

	if (!rs || !release_id_valid(job_id))
		return false;
	pthread_mutex_lock(&rs->lock);
	i = find(rs, job_id, &found);
	if (found)
		ok = newest_ns <= rs->ents[i].b.newest_ns &&
		     finish_s <= rs->ents[i].b.finish_s;
	pthread_mutex_unlock(&rs->lock);
	return ok;
}

const char *release_dir(const struct release_store *rs)
{
	return rs ? rs->dir : "";
}

size_t release_legacy_count(const struct release_store *rs)
{
	return rs ? rs->n_legacy : 0;
}

int64_t release_time_ms(struct release_store *rs, const char *job_id)
{
	struct stat st;
	int rc;

	if (!rs || !release_id_valid(job_id))
		return 0;
	pthread_mutex_lock(&rs->lock);
	rc = fstatat(rs->dfd, job_id, &st, AT_SYMLINK_NOFOLLOW);
	pthread_mutex_unlock(&rs->lock);
	if (rc)
		return 0;
	return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}
