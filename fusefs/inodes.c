#include "fusefs/inodes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ROOT_ID	     1 /* FUSE_ROOT_ID */
#define PATH_MAX_LEN 4095

struct inode {
	uint64_t id;
	uint64_t nlookup;
	uint64_t hash; /* of path */
	char *path;
	bool hashed; /* in by_path */
	bool dir_known;
	uint64_t dir_digest;
	int64_t dir_ms;	   /* when the kernel took that listing */
	uint64_t job_hash; /* of its "/jobs/<id>" prefix; 0: not below one */
	struct inode *next_id, *next_path;
	/* in by_job (job_hash != 0): doubly linked, so FORGET is O(1) */
	struct inode *next_job, **pprev_job;
};

struct inodes {
	pthread_mutex_t lock;
	struct inode **by_id, **by_path, **by_job; /* nb buckets each */
	size_t nb, n;
	uint64_t next_id;
	uint64_t epoch; /* atomic; bumped by inodes_invalidate_under */
	struct inode *root;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ull;
	}
	return h;
}

/* The length of the "/jobs/<id>" prefix of `path`, 0 when it has none. */
static size_t job_prefix_len(const char *path)
{
	const char *e;

	if (strncmp(path, "/jobs/", 6) != 0 || !path[6])
		return 0;
	e = strchr(path + 6, '/');
	return e ? (size_t)(e - path) : strlen(path);
}

static uint64_t hash_mem(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (size_t k = 0; k < n; k++) {
		h ^= (unsigned char)s[k];
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

static size_t id_slot(const struct inodes *t, uint64_t id)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 17) & (t->nb - 1);
}

static struct inode *find_id(const struct inodes *t, uint64_t id)
{
	struct inode *i = t->by_id[id_slot(t, id)];

	while (i && i->id != id)
		i = i->next_id;
	return i;
}

static struct inode *find_path(const struct inodes *t, const char *path,
			       uint64_t h)
{
	struct inode *i = t->by_path[h & (t->nb - 1)];

	while (i && (i->hash != h || strcmp(i->path, path) != 0))
		i = i->next_path;
	return i;
}

static void link_id(struct inodes *t, struct inode *i)
{
	size_t s = id_slot(t, i->id);

	i->next_id = t->by_id[s];
	t->by_id[s] = i;
}

static void link_path(struct inodes *t, struct inode *i)
{
	size_t s = i->hash & (t->nb - 1);

	i->next_path = t->by_path[s];
	t->by_path[s] = i;
	i->hashed = true;
}

static void unlink_path(struct inodes *t, struct inode *i)
{
	struct inode **p = &t->by_path[i->hash & (t->nb - 1)];

	while (*p && *p != i)
		p = &(*p)->next_path;
	if (*p)
		*p = i->next_path;
	i->hashed = false;
}

static void link_job(struct inodes *t, struct inode *i)
{
	struct inode **head = &t->by_job[i->job_hash & (t->nb - 1)];

	if (!i->job_hash)
		return;
	i->next_job = *head;
	if (*head)
		(*head)->pprev_job = &i->next_job;
	*head = i;
	i->pprev_job = head;
}

static void unlink_job(struct inode *i)
{
	if (!i->pprev_job)
		return;
	*i->pprev_job = i->next_job;
	if (i->next_job)
		i->next_job->pprev_job = i->pprev_job;
	i->next_job = NULL;
	i->pprev_job = NULL;
}

static void unlink_id(struct inodes *t, struct inode *i)
{
	struct inode **p = &t->by_id[id_slot(t, i->id)];

	while (*p && *p != i)
		p = &(*p)->next_id;
	if (*p)
		*p = i->next_id;
}

/* Double the buckets (lock held); on no memory, keep the old ones. */
static void grow(struct inodes *t)
{
	size_t nb = t->nb * 2;
	struct inode **a = calloc(nb, sizeof(*a)), **b = calloc(nb, sizeof(*b));
	struct inode **c = calloc(nb, sizeof(*c));
	struct inode **oa = t->by_id, **ob = t->by_path, **oc = t->by_job;
	size_t onb = t->nb;

	if (!a || !b || !c) {
		free(a);
		free(b);
		free(c);
		return;
	}
	t->by_id = a;
	t->by_path = b;
	t->by_job = c;
	t->nb = nb;
	for (size_t s = 0; s < onb; s++) {
		for (struct inode *i = oa[s], *nx; i; i = nx) {
			nx = i->next_id;
			link_id(t, i);
		}
		for (struct inode *i = ob[s], *nx; i; i = nx) {
			nx = i->next_path;
			link_path(t, i);
		}
		for (struct inode *i = oc[s], *nx; i; i = nx) {
			nx = i->next_job;
			link_job(t, i);
		}
	}
	free(oa);
	free(ob);
	free(oc);
}

static struct inode *inode_alloc(const char *path)
{
	struct inode *i = calloc(1, sizeof(*i));

	if (!i)
		return NULL;
	i->path = strdup(path);
	if (!i->path) {
		free(i);
		return NULL;
	}
	i->hash = hash_str(path);
	if (job_prefix_len(path))
		i->job_hash = hash_mem(path, job_prefix_len(path));
	return i;
}

int inodes_new(struct inodes **out)
{
	struct inodes *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	t->nb = 1024;
	t->by_id = calloc(t->nb, sizeof(*t->by_id));
	t->by_path = calloc(t->nb, sizeof(*t->by_path));
	t->by_job = calloc(t->nb, sizeof(*t->by_job));
	t->root = inode_alloc("/");
	pthread_mutex_init(&t->lock, NULL);
	if (!t->by_id || !t->by_path || !t->by_job || !t->root) {
		if (t->root)
			free(t->root->path);
		free(t->root);
		t->root = NULL;
		inodes_free(t);
		return -ENOMEM;
	}
	t->root->id = ROOT_ID;
	t->root->nlookup = 1;
	t->next_id = ROOT_ID + 1;
	link_id(t, t->root);
	link_path(t, t->root);
	t->n = 1;
	*out = t;
	return 0;
}

void inodes_free(struct inodes *t)
{
	if (!t)
		return;
	for (size_t s = 0; t->by_id && s < t->nb; s++) {
		for (struct inode *i = t->by_id[s], *nx; i; i = nx) {
			nx = i->next_id;
			free(i->path);
			free(i);
		}
	}
	pthread_mutex_destroy(&t->lock);
	free(t->by_id);
	free(t->by_path);
	free(t->by_job);
	free(t);
}

int inodes_path(struct inodes *t, uint64_t ino, char **path)
{
	struct inode *i;
	int rc = 0;

	*path = NULL;
	pthread_mutex_lock(&t->lock);
	i = find_id(t, ino);
	if (!i)
		rc = -ENOENT;
	else if (!(*path = strdup(i->path)))
		rc = -ENOMEM;
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int inodes_child(struct inodes *t, uint64_t parent, const char *name,
		 char **path)
{
	size_t nl = strlen(name), pl;
	struct inode *i;
	char *p = NULL;
	int rc = 0;

	*path = NULL;
	pthread_mutex_lock(&t->lock);
	i = find_id(t, parent);
	if (!i) {
		rc = -ENOENT;
	} else {
		pl = strcmp(i->path, "/") == 0 ? 0 : strlen(i->path);
		if (pl + 1 + nl > PATH_MAX_LEN)
			rc = -ENAMETOOLONG;
		else if (!(p = malloc(pl + nl + 2)))
			rc = -ENOMEM;
		else {
			memcpy(p, i->path, pl);
			p[pl] = '/';
			memcpy(p + pl + 1, name, nl + 1);
		}
	}
	pthread_mutex_unlock(&t->lock);
	*path = p;
	return rc;
}

uint64_t inodes_ref(struct inodes *t, const char *path)
{
	uint64_t h = hash_str(path), id = 0;
	struct inode *i, *fresh = NULL;

	pthread_mutex_lock(&t->lock);
	i = find_path(t, path, h);
	if (!i) {
		/* allocated under the lock: two LOOKUPs of one path race */
		fresh = inode_alloc(path);
		if (fresh) {
			fresh->id = t->next_id++;
			if (t->n >= t->nb)
				grow(t);
			link_id(t, fresh);
			link_path(t, fresh);
			link_job(t, fresh);
			t->n++;
			i = fresh;
		}
	}
	if (i) {
		i->nlookup++;
		id = i->id;
	}
	pthread_mutex_unlock(&t->lock);
	return id;
}

void inodes_forget(struct inodes *t, uint64_t ino, uint64_t n)
{
	struct inode *i;

	pthread_mutex_lock(&t->lock);
	i = find_id(t, ino);
	if (i && i != t->root) {
		i->nlookup = n >= i->nlookup ? 0 : i->nlookup - n;
		if (i->nlookup == 0) {
			unlink_id(t, i);
			if (i->hashed)
				unlink_path(t, i);
			unlink_job(i);
			t->n--;
			free(i->path);
			free(i);
		}
	}
	pthread_mutex_unlock(&t->lock);
}

uint64_t inodes_find(struct inodes *t, const char *path)
{
	struct inode *i;
	uint64_t id;

	pthread_mutex_lock(&t->lock);
	i = find_path(t, path, hash_str(path));
	id = i ? i->id : 0;
	pthread_mutex_unlock(&t->lock);
	return id;
}

void inodes_unhash(struct inodes *t, const char *path)
{
	struct inode *i;

	pthread_mutex_lock(&t->lock);
	i = find_path(t, path, hash_str(path));
	if (i && i != t->root)
		unlink_path(t, i);
	pthread_mutex_unlock(&t->lock);
}

bool inodes_dir_same(struct inodes *t, uint64_t ino, uint64_t digest,
		     int64_t now_ms, int64_t max_age_ms, uint64_t epoch)
{
	struct inode *i;
	bool same = false;

	pthread_mutex_lock(&t->lock);
	i = find_id(t, ino);
	if (i && epoch != __atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE)) {
		/* invalidated while this listing was taken: it may predate
		 * the change, so it is not a copy the kernel may keep */
		i->dir_known = false;
	} else if (i) {
		same = i->dir_known && i->dir_digest == digest &&
		       now_ms - i->dir_ms < max_age_ms;
		if (!same) {
			i->dir_known = true;
			i->dir_digest = digest;
			i->dir_ms = now_ms;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return same;
}

bool inodes_dir_valid(struct inodes *t, uint64_t ino, int64_t now_ms,
		      int64_t max_age_ms)
{
	struct inode *i;
	bool valid;

	pthread_mutex_lock(&t->lock);
	i = find_id(t, ino);
	valid = i && i->dir_known && now_ms - i->dir_ms < max_age_ms;
	pthread_mutex_unlock(&t->lock);
	return valid;
}

uint64_t inodes_epoch(struct inodes *t)
{
	/* read at every reply: no lock (written under it, atomically) */
	return __atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE);
}

/* Whether node `i` is `top` ("/jobs/<id>", length tl) or below it. */
static bool under(const struct inode *i, const char *top, size_t tl)
{
	return strncmp(i->path, top, tl) == 0 &&
	       (i->path[tl] == '\0' || i->path[tl] == '/');
}

int inodes_invalidate_under(struct inodes *t, const char *const *tops, size_t n,
			    uint64_t **ids, size_t *n_ids)
{
	size_t cap = 0, k = 0;
	uint64_t *v = NULL;
	int rc = 0;

	*ids = NULL;
	*n_ids = 0;
	pthread_mutex_lock(&t->lock);
	__atomic_add_fetch(&t->epoch, 1, __ATOMIC_RELEASE);
	for (size_t j = 0; j < n && rc == 0; j++) {
		size_t tl = job_prefix_len(tops[j]);
		uint64_t h;

		if (!tl || tops[j][tl])
			continue; /* not a job directory's path */
		h = hash_mem(tops[j], tl);
		for (struct inode *i = t->by_job[h & (t->nb - 1)]; i;
		     i = i->next_job) {
			if (i->job_hash != h || !under(i, tops[j], tl))
				continue;
			i->dir_known = false;
			if (k == cap) {
				size_t nc = cap ? cap * 2 : 64;
				uint64_t *nv = realloc(v, nc * sizeof(*nv));

				if (!nv) {
					rc = -ENOMEM;
					break;
				}
				v = nv;
				cap = nc;
			}
			v[k++] = i->id;
		}
	}
	pthread_mutex_unlock(&t->lock);
	if (rc) {
		free(v);
		return rc;
	}
	*ids = v;
	*n_ids = k;
	return 0;
}

void inodes_dir_forget(struct inodes *t, uint64_t ino)
{
	struct inode *i;

	pthread_mutex_lock(&t->lock);
	i = find_id(t, ino);
	if (i)
		i->dir_known = false;
	pthread_mutex_unlock(&t->lock);
}

size_t inodes_count(struct inodes *t)
{
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = t->n;
	pthread_mutex_unlock(&t->lock);
	return n;
}
