/*
 * The node table (inodes.h), kept compact (README "Memory": the kernel
 * may hold over half a million nodes after one walk).  A node is a 40-byte
 * slot in a slab: its parent's slot, its own name (interned: the names
 * "info", "status", "1", ... are stored once for the whole table), its
 * place in its parent's list of children and in the name hash, its lookup
 * count and its generation; no path is stored, it is built by walking up
 * (the tree is never renamed).  A nodeid is generation << 32 | slot: a
 * slot freed and used again gets a new generation, so nodeids are never
 * reused within a mount.  A child keeps its parent: a node is freed when
 * the kernel holds no reference to it and it has no children (the kernel
 * forgets children first, but a path handed to inodes_ref may name
 * directories it never looked up); such a node is found by path but not
 * by nodeid, and a lookup of it gets a new nodeid.  The nodes at or below
 * /jobs/<id> are that node's subtree (inodes_invalidate_under).  A
 * directory's recorded listing lives in a slab of its own, only for
 * directories that have one.
 */
#include "fusefs/inodes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ROOT_ID	     1 /* FUSE_ROOT_ID: slot 1, generation 0 */
#define ROOT	     1u
#define PATH_MAX_LEN 4095
#define CHUNK_BITS   12 /* slots per slab chunk: 4096 */
#define CHUNK	     (1u << CHUNK_BITS)
#define GEN_MAX	     0x7fffffffu

struct name {
	struct name *next; /* in the name hash */
	uint32_t refs, hash;
	uint32_t len;
	char s[];
};

struct node {
	uint32_t parent;    /* slot; 0: the root's, or a free slot */
	uint32_t next_path; /* name hash chain; the free list for a free slot */
	uint32_t child;	    /* first child */
	uint32_t next_sib, prev_sib;
	uint32_t nlookup; /* saturates: a node at UINT32_MAX is kept */
	uint32_t dir;	  /* its recorded listing (struct dirrec); 0: none */
	uint32_t gen : 31, hashed : 1;
	struct name *name; /* NULL: a free slot */
};

struct dirrec {
	uint64_t digest; /* the free list's next index for a free record */
	int64_t ms;	 /* when the kernel took that listing */
};

struct inodes {
	pthread_mutex_t lock;
	struct node **chunks; /* n_chunks of CHUNK slots */
	size_t n_chunks;
	uint32_t top;	   /* slots ever used (slot 0 is never) */
	uint32_t free_top; /* free list of slots; 0: empty */
	uint32_t *by_path; /* nb buckets of slots, keyed (parent, name) */
	size_t nb, n;	   /* n: nodes in the table */
	size_t held;	   /* nodes the kernel holds, the root included */
	struct name **names;
	size_t names_nb, names_n;
	struct dirrec *dirs; /* dirs_cap records; 0 is never used */
	uint32_t dirs_cap, dirs_top, dirs_free;
	uint64_t epoch; /* atomic; bumped by inodes_invalidate_under */
};

static uint32_t hash_mem(const char *s, size_t n)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t k = 0; k < n; k++) {
		h ^= (unsigned char)s[k];
		h *= 16777619u;
	}
	return h;
}

static struct node *at(const struct inodes *t, uint32_t slot)
{
	return &t->chunks[slot >> CHUNK_BITS][slot & (CHUNK - 1)];
}

static uint64_t id_of(const struct inodes *t, uint32_t slot)
{
	return (uint64_t)at(t, slot)->gen << 32 | slot;
}

/* ---- interned names ---------------------------------------------------- */

static struct name *name_find(const struct inodes *t, const char *s, size_t len,
			      uint32_t h)
{
	struct name *m = t->names[h & (t->names_nb - 1)];

	while (m && (m->hash != h || m->len != len || memcmp(m->s, s, len)))
		m = m->next;
	return m;
}

static void names_grow(struct inodes *t)
{
	size_t nb = t->names_nb * 2;
	struct name **a = calloc(nb, sizeof(*a));

	if (!a)
		return; /* longer chains, still correct */
	for (size_t b = 0; b < t->names_nb; b++) {
		for (struct name *m = t->names[b], *nx; m; m = nx) {
			nx = m->next;
			m->next = a[m->hash & (nb - 1)];
			a[m->hash & (nb - 1)] = m;
		}
	}
	free(t->names);
	t->names = a;
	t->names_nb = nb;
}

/* One more reference to the interned `s` (created when new); NULL: no
 * memory. */
static struct name *name_get(struct inodes *t, const char *s, size_t len)
{
	uint32_t h = hash_mem(s, len);
	struct name *m = name_find(t, s, len, h);

	if (m) {
		m->refs++;
		return m;
	}
	m = malloc(sizeof(*m) + len + 1);
	if (!m)
		return NULL;
	memcpy(m->s, s, len);
	m->s[len] = '\0';
	m->len = (uint32_t)len;
	m->hash = h;
	m->refs = 1;
	if (t->names_n >= t->names_nb)
		names_grow(t);
	m->next = t->names[h & (t->names_nb - 1)];
	t->names[h & (t->names_nb - 1)] = m;
	t->names_n++;
	return m;
}

static void name_put(struct inodes *t, struct name *m)
{
	struct name **p;

	if (--m->refs)
		return;
	p = &t->names[m->hash & (t->names_nb - 1)];
	while (*p != m)
		p = &(*p)->next;
	*p = m->next;
	t->names_n--;
	free(m);
}

/* ---- the (parent, name) hash ------------------------------------------- */

static size_t path_slot(const struct inodes *t, uint32_t parent,
			const struct name *m)
{
	uint64_t h = ((uint64_t)parent * 0x9e3779b97f4a7c15ull) ^ m->hash;

	return (size_t)(h ^ (h >> 29)) & (t->nb - 1);
}

/* The hashed child `m` of `parent`, 0 when none. */
static uint32_t find_child(const struct inodes *t, uint32_t parent,
			   const struct name *m)
{
	uint32_t s = t->by_path[path_slot(t, parent, m)];

	while (s && (at(t, s)->parent != parent || at(t, s)->name != m))
		s = at(t, s)->next_path;
	return s;
}

static void link_path(struct inodes *t, uint32_t s)
{
	struct node *n = at(t, s);
	uint32_t *b = &t->by_path[path_slot(t, n->parent, n->name)];

	n->next_path = *b;
	*b = s;
	n->hashed = 1;
}

static void unlink_path(struct inodes *t, uint32_t s)
{
	struct node *n = at(t, s);
	uint32_t *p = &t->by_path[path_slot(t, n->parent, n->name)];

	while (*p && *p != s)
		p = &at(t, *p)->next_path;
	if (*p)
		*p = n->next_path;
	n->next_path = 0;
	n->hashed = 0;
}

/* Double the buckets; on no memory, keep the old ones. */
static void grow(struct inodes *t)
{
	size_t nb = t->nb * 2;
	uint32_t *a = calloc(nb, sizeof(*a));

	if (!a)
		return;
	free(t->by_path);
	t->by_path = a;
	t->nb = nb;
	for (uint32_t s = 1; s < t->top; s++)
		if (at(t, s)->name && at(t, s)->hashed)
			link_path(t, s);
}

/* ---- directory records ------------------------------------------------- */

static void dir_drop(struct inodes *t, struct node *n)
{
	if (!n->dir)
		return;
	t->dirs[n->dir].digest = t->dirs_free;
	t->dirs_free = n->dir;
	n->dir = 0;
}

/* The record of `n`, made when it has none; NULL: no memory. */
static struct dirrec *dir_rec(struct inodes *t, struct node *n)
{
	uint32_t d;

	if (n->dir)
		return &t->dirs[n->dir];
	if (t->dirs_free) {
		d = t->dirs_free;
		t->dirs_free = (uint32_t)t->dirs[d].digest;
	} else {
		if (t->dirs_top >= t->dirs_cap) {
			uint32_t nc = t->dirs_cap ? t->dirs_cap * 2 : 256;
			struct dirrec *a;

			if (nc <= t->dirs_cap)
				return NULL;
			a = realloc(t->dirs, (size_t)nc * sizeof(*a));
			if (!a)
				return NULL;
			t->dirs = a;
			t->dirs_cap = nc;
		}
		if (!t->dirs_top)
			t->dirs_top = 1;
		d = t->dirs_top++;
	}
	n->dir = d;
	return &t->dirs[d];
}

/* ---- slots ------------------------------------------------------------- */

/* A free slot (generation kept), or 0 when out of memory. */
static uint32_t slot_alloc(struct inodes *t)
{
	uint32_t s;

	if (t->free_top) {
		s = t->free_top;
		t->free_top = at(t, s)->next_path;
		return s;
	}
	if (t->top == UINT32_MAX)
		return 0;
	if ((t->top >> CHUNK_BITS) >= t->n_chunks) {
		struct node **c =
			realloc(t->chunks, (t->n_chunks + 1) * sizeof(*c));

		if (!c)
			return 0;
		t->chunks = c;
		c[t->n_chunks] = calloc(CHUNK, sizeof(**c));
		if (!c[t->n_chunks])
			return 0;
		t->n_chunks++;
	}
	return t->top++;
}

/* The slot of nodeid `id` while the kernel may hold it, 0 when none. */
static uint32_t find_id(const struct inodes *t, uint64_t id)
{
	uint32_t s = (uint32_t)id;
	const struct node *n;

	if (!s || s >= t->top)
		return 0;
	n = at(t, s);
	if (!n->name || n->gen != (id >> 32) || (!n->nlookup && s != ROOT))
		return 0;
	return s;
}

/* The kernel no longer holds node `n`: its nodeid is never valid again
 * (a lookup of it gets a new one).  After 2^31 of these a slot is retired
 * when freed (its nodeids would repeat). */
static void retire_id(struct node *n)
{
	if (n->gen < GEN_MAX)
		n->gen++;
}

/* Free `s` (no reference, no child) and the parents it alone kept. */
static void release(struct inodes *t, uint32_t s)
{
	while (s != ROOT) {
		struct node *n = at(t, s);
		uint32_t p = n->parent, gen = n->gen;

		if (n->nlookup || n->child)
			return;
		if (n->prev_sib)
			at(t, n->prev_sib)->next_sib = n->next_sib;
		else
			at(t, p)->child = n->next_sib;
		if (n->next_sib)
			at(t, n->next_sib)->prev_sib = n->prev_sib;
		if (n->hashed)
			unlink_path(t, s);
		dir_drop(t, n);
		name_put(t, n->name);
		memset(n, 0, sizeof(*n));
		n->gen = gen;
		if (gen < GEN_MAX) {
			n->next_path = t->free_top;
			t->free_top = s;
		}
		t->n--;
		s = p;
	}
}

static int inodes_init(struct inodes *t)
{
	struct node *r;
	uint32_t s;

	t->nb = 1024;
	t->names_nb = 256;
	t->by_path = calloc(t->nb, sizeof(*t->by_path));
	t->names = calloc(t->names_nb, sizeof(*t->names));
	if (!t->by_path || !t->names)
		return -ENOMEM;
	t->top = 1;
	s = slot_alloc(t);
	if (s != ROOT)
		return -ENOMEM;
	r = at(t, ROOT);
	r->name = name_get(t, "", 0);
	if (!r->name)
		return -ENOMEM;
	r->nlookup = 1;
	t->n = 1;
	t->held = 1;
	return 0;
}

int inodes_new(struct inodes **out)
{
	struct inodes *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	if (inodes_init(t)) {
		inodes_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void inodes_free(struct inodes *t)
{
	if (!t)
		return;
	for (size_t b = 0; t->names && b < t->names_nb; b++) {
		for (struct name *m = t->names[b], *nx; m; m = nx) {
			nx = m->next;
			free(m);
		}
	}
	for (size_t c = 0; c < t->n_chunks; c++)
		free(t->chunks[c]);
	pthread_mutex_destroy(&t->lock);
	free(t->chunks);
	free(t->by_path);
	free(t->names);
	free(t->dirs);
	free(t);
}

/* The node of the path's components from the root, 0 when one is not in
 * the table; `make`: create the missing ones (0: no memory). */
static uint32_t walk(struct inodes *t, const char *path, bool make)
{
	uint32_t s = ROOT;

	for (const char *c = path; *c;) {
		const char *e;
		size_t len;
		struct name *m;
		uint32_t k;

		if (*c == '/') {
			c++;
			continue;
		}
		e = strchr(c, '/');
		len = e ? (size_t)(e - c) : strlen(c);
		m = name_find(t, c, len, hash_mem(c, len));
		k = m ? find_child(t, s, m) : 0;
		if (!k) {
			struct node *n, *p;

			if (!make)
				return 0;
			if (!(m = name_get(t, c, len))) {
				release(t, s);
				return 0;
			}
			if (!(k = slot_alloc(t))) {
				name_put(t, m);
				release(t, s);
				return 0;
			}
			n = at(t, k);
			p = at(t, s);
			n->name = m;
			n->parent = s;
			n->next_sib = p->child;
			if (p->child)
				at(t, p->child)->prev_sib = k;
			p->child = k;
			if (t->n >= t->nb)
				grow(t);
			link_path(t, k);
			t->n++;
		}
		s = k;
		c += len;
	}
	return s;
}

/* The length of the path of `s` ("/" for the root). */
static size_t path_len(const struct inodes *t, uint32_t s)
{
	size_t l = 0;

	for (; s != ROOT; s = at(t, s)->parent)
		l += 1 + at(t, s)->name->len;
	return l ? l : 1;
}

/* Write the path of `s` (path_len(s) bytes and a NUL) into `buf`. */
static void path_fill(const struct inodes *t, uint32_t s, char *buf, size_t len)
{
	buf[len] = '\0';
	if (s == ROOT) {
		buf[0] = '/';
		return;
	}
	for (; s != ROOT; s = at(t, s)->parent) {
		const struct name *m = at(t, s)->name;

		len -= m->len;
		memcpy(buf + len, m->s, m->len);
		buf[--len] = '/';
	}
}

int inodes_path(struct inodes *t, uint64_t ino, char **path)
{
	uint32_t s;
	int rc = 0;

	*path = NULL;
	pthread_mutex_lock(&t->lock);
	s = find_id(t, ino);
	if (!s) {
		rc = -ENOENT;
	} else {
		size_t l = path_len(t, s);

		if (!(*path = malloc(l + 1)))
			rc = -ENOMEM;
		else
			path_fill(t, s, *path, l);
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int inodes_child(struct inodes *t, uint64_t parent, const char *name,
		 char **path)
{
	size_t nl = strlen(name), pl;
	uint32_t s;
	char *p = NULL;
	int rc = 0;

	*path = NULL;
	pthread_mutex_lock(&t->lock);
	s = find_id(t, parent);
	if (!s) {
		rc = -ENOENT;
	} else {
		pl = s == ROOT ? 0 : path_len(t, s);
		if (pl + 1 + nl > PATH_MAX_LEN)
			rc = -ENAMETOOLONG;
		else if (!(p = malloc(pl + nl + 2)))
			rc = -ENOMEM;
		else {
			if (pl)
				path_fill(t, s, p, pl);
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
	uint64_t id = 0;
	uint32_t s;

	pthread_mutex_lock(&t->lock);
	/* under the lock: two LOOKUPs of one path race */
	s = walk(t, path, true);
	if (s) {
		struct node *n = at(t, s);

		if (!n->nlookup)
			t->held++;
		if (n->nlookup < UINT32_MAX)
			n->nlookup++;
		id = id_of(t, s);
	}
	pthread_mutex_unlock(&t->lock);
	return id;
}

void inodes_forget(struct inodes *t, uint64_t ino, uint64_t n)
{
	uint32_t s;

	pthread_mutex_lock(&t->lock);
	s = find_id(t, ino);
	if (s && s != ROOT) {
		struct node *i = at(t, s);

		if (i->nlookup == UINT32_MAX) {
			/* saturated: the count is not known, kept */
		} else if (n >= i->nlookup) {
			i->nlookup = 0;
			t->held--;
			dir_drop(t, i);
			retire_id(i);
			release(t, s);
		} else {
			i->nlookup -= (uint32_t)n;
		}
	}
	pthread_mutex_unlock(&t->lock);
}

uint64_t inodes_find(struct inodes *t, const char *path)
{
	uint64_t id = 0;
	uint32_t s;

	pthread_mutex_lock(&t->lock);
	s = walk(t, path, false);
	if (s && (s == ROOT || at(t, s)->nlookup))
		id = id_of(t, s);
	pthread_mutex_unlock(&t->lock);
	return id;
}

void inodes_unhash(struct inodes *t, const char *path)
{
	uint32_t s;

	pthread_mutex_lock(&t->lock);
	s = walk(t, path, false);
	if (s && s != ROOT)
		unlink_path(t, s);
	pthread_mutex_unlock(&t->lock);
}

bool inodes_dir_same(struct inodes *t, uint64_t ino, uint64_t digest,
		     int64_t now_ms, int64_t max_age_ms, uint64_t epoch)
{
	struct dirrec *d;
	struct node *i;
	bool same = false;
	uint32_t s;

	pthread_mutex_lock(&t->lock);
	s = find_id(t, ino);
	i = s ? at(t, s) : NULL;
	if (i && epoch != __atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE)) {
		/* invalidated while this listing was taken: it may predate
		 * the change, so it is not a copy the kernel may keep */
		dir_drop(t, i);
	} else if (i) {
		d = i->dir ? &t->dirs[i->dir] : NULL;
		same = d && d->digest == digest && now_ms - d->ms < max_age_ms;
		if (!same && (d = dir_rec(t, i))) {
			d->digest = digest;
			d->ms = now_ms;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return same;
}

bool inodes_dir_valid(struct inodes *t, uint64_t ino, int64_t now_ms,
		      int64_t max_age_ms)
{
	bool valid = false;
	uint32_t s;

	pthread_mutex_lock(&t->lock);
	s = find_id(t, ino);
	if (s && at(t, s)->dir)
		valid = now_ms - t->dirs[at(t, s)->dir].ms < max_age_ms;
	pthread_mutex_unlock(&t->lock);
	return valid;
}

uint64_t inodes_epoch(struct inodes *t)
{
	/* read at every reply: no lock (written under it, atomically) */
	return __atomic_load_n(&t->epoch, __ATOMIC_ACQUIRE);
}

/* Whether `p` is a job directory's path, "/jobs/<id>". */
static bool job_dir(const char *p)
{
	return strncmp(p, "/jobs/", 6) == 0 && p[6] && !strchr(p + 6, '/');
}

/* Append the nodeid of every held node of the subtree of `top` to *v
 * (forgetting their recorded listings). 0 or -ENOMEM. */
static int collect(struct inodes *t, uint32_t top, uint64_t **v, size_t *k,
		   size_t *cap)
{
	uint32_t s = top;

	for (;;) {
		struct node *n = at(t, s);

		if (n->nlookup) {
			dir_drop(t, n);
			if (*k == *cap) {
				size_t nc = *cap ? *cap * 2 : 64;
				uint64_t *nv = realloc(*v, nc * sizeof(*nv));

				if (!nv)
					return -ENOMEM;
				*v = nv;
				*cap = nc;
			}
			(*v)[(*k)++] = id_of(t, s);
		}
		if (n->child) {
			s = n->child;
			continue;
		}
		while (s != top && !at(t, s)->next_sib)
			s = at(t, s)->parent;
		if (s == top)
			return 0;
		s = at(t, s)->next_sib;
	}
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
		uint32_t s;

		if (!job_dir(tops[j]))
			continue;
		s = walk(t, tops[j], false);
		if (s)
			rc = collect(t, s, &v, &k, &cap);
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
	uint32_t s;

	pthread_mutex_lock(&t->lock);
	s = find_id(t, ino);
	if (s)
		dir_drop(t, at(t, s));
	pthread_mutex_unlock(&t->lock);
}

size_t inodes_count(struct inodes *t)
{
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = t->held;
	pthread_mutex_unlock(&t->lock);
	return n;
}
