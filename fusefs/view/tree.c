/*
 * tree.c — path resolution, listing and attributes of the virtual tree.
 *
 * The tree is computed, never stored: a path is parsed component by
 * component against one view (catalog + engine snapshot).  Directories made
 * of storage objects (a documented-layout checkpoint's task folders, the
 * documented savepoint data, unrecognised objects) are derived from the
 * objects' names: a name prefix that ends in '/' is a directory.  Because
 * the objects of a group are sorted by name, all names sharing a prefix are
 * adjacent, which is what list_group() relies on.
 */
#include "view/tree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/audit.h"
#include "model/ckinfo.h"
#include "policy/delete.h"
#include "policy/imapdel.h"
#include "policy/imapsum.h"
#include "util/log.h"
#include "view/prom.h"
#include "model/protostuff.h"
#include "view/render.h"

#define MAX_DEPTH 64

static int64_t ns_to_s(int64_t ns)
{
	return ns / 1000000000;
}

/* ---- names */

void tree_escape_name(const char *name, char *out, size_t outsz)
{
	size_t o = 0;
	const unsigned char *p = (const unsigned char *)name;

	if (outsz == 0)
		return;
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		snprintf(out, outsz, "%s", name[1] ? "%2E%2E" : "%2E");
		return;
	}
	for (; *p && o + 4 < outsz; p++) {
		if (*p == '/' || *p == '%' || *p < 0x20 || *p == 0x7f) {
			snprintf(out + o, outsz - o, "%%%02X", *p);
			o += 3;
		} else {
			out[o++] = (char)*p;
		}
	}
	out[o] = '\0';
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int tree_unescape_name(const char *s, char *out, size_t outsz)
{
	size_t o = 0;

	for (; *s; s++) {
		int c = (unsigned char)*s;

		if (c == '%') {
			int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);

			if (hi < 0 || lo < 0)
				return -EINVAL;
			c = hi * 16 + lo;
			s += 2;
		}
		if (o + 1 >= outsz)
			return -ENAMETOOLONG;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* Parse a decimal component that must print back identically. */
static int parse_id(const char *s, int64_t *out)
{
	char *end;
	long long x;

	if (!*s || (s[0] == '0' && s[1]) || *s < '0' || *s > '9')
		return -ENOENT;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || *end)
		return -ENOENT;
	*out = x;
	return 0;
}

/* ---- object groups */

struct group {
	struct cat_obj *const *objs;
	size_t n;
};

static struct group node_group(const struct node *n)
{
	struct group g = {0};

	switch (n->group) {
	case OG_CKPT:
		if (n->ckpt) {
			g.objs = n->ckpt->objs;
			g.n = n->ckpt->n_objs;
		}
		break;
	case OG_SP:
		if (n->job.cj) {
			g.objs = n->job.cj->sp_objs;
			g.n = n->job.cj->n_sp;
		}
		break;
	case OG_OTHER:
		if (n->job.cj) {
			g.objs = n->job.cj->strays;
			g.n = n->job.cj->n_strays;
		}
		break;
	}
	return g;
}

/* The first object of the group whose name is >= key (strcmp). */
static size_t group_lower(struct group g, const char *key)
{
	size_t lo = 0, hi = g.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(g.objs[mid]->name, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The objects below directory `prefix` of a group ("" for all): names are
 * sorted, so the names starting with "<prefix>/" are the run from
 * "<prefix>/" up to "<prefix>0" ('0' follows '/').  [*a, *b).
 */
static void group_range(struct group g, const char *prefix, size_t *a,
			size_t *b)
{
	char key[1100];
	size_t len = strlen(prefix);

	if (!len || len + 2 > sizeof(key)) {
		*a = 0;
		*b = len ? 0 : g.n;
		return;
	}
	memcpy(key, prefix, len);
	key[len] = '/';
	key[len + 1] = '\0';
	*a = group_lower(g, key);
	key[len] = '/' + 1;
	*b = group_lower(g, key);
}

/* Resolve `rel` inside a group: 1 file (*obj set), 2 directory, 0 none. */
static int group_lookup(struct group g, const char *rel,
			const struct cat_obj **obj)
{
	size_t i = group_lower(g, rel), a, b;

	if (i < g.n && strcmp(g.objs[i]->name, rel) == 0) {
		*obj = g.objs[i];
		return 1;
	}
	group_range(g, rel, &a, &b);
	return a < b ? 2 : 0;
}

/* ---- by-name/: the engine's jobs by name (engine_snap_by_name's index) */

/* The run of jobs named `name` in the index: [*a, *b). */
static const struct engine_job *const *
named_jobs(struct view *v, const char *name, size_t *a, size_t *b)
{
	size_t n, lo = 0, hi;
	const struct engine_job *const *idx = engine_snap_by_name(v->snap, &n);

	hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(idx[mid]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*a = lo;
	for (hi = lo; hi < n && strcmp(idx[hi]->name, name) == 0; hi++)
		;
	*b = hi;
	return idx;
}

/* ---- attributes */

static void fill_common(struct view *v, const char *path, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = strcmp(path, "/") == 0 ? 1 : pcache_hash(path) | 2;
	st->st_uid = v->fs->uid;
	st->st_gid = v->fs->gid;
	st->st_blksize = 4096;
}

static void set_time(struct stat *st, int64_t s, long ns)
{
	st->st_mtim.tv_sec = s;
	st->st_mtim.tv_nsec = ns;
	st->st_ctim = st->st_mtim;
	st->st_atim = st->st_mtim;
}

static void stat_dir(struct view *v, const char *path, int64_t mtime_s,
		     struct stat *st)
{
	fill_common(v, path, st);
	st->st_mode = S_IFDIR | 0555;
	st->st_nlink = 2;
	set_time(st, mtime_s, 0);
}

/*
 * What stfs keeps to root, the daemon's user and delete_group (README "Who
 * can read what"): objects of a store without owners, .stfs/audit and
 * .stfs/config.
 */
static void restrict_mode(const struct view *v, struct stat *st)
{
	st->st_mode = S_IFREG | (v->fs->read_group ? 0440 : 0400);
	st->st_uid = v->fs->uid;
	st->st_gid = v->fs->read_gid;
}

/* `owner`: a storage object's (has: its source's); NULL: a pseudo-file */
static void stat_obj(struct view *v, const char *path, uint64_t size,
		     int64_t mtime_ns, const struct be_owner *owner,
		     struct stat *st)
{
	fill_common(v, path, st);
	st->st_mode = S_IFREG | 0444;
	if (owner && owner->has) {
		st->st_mode = S_IFREG | (owner->perm & 07777);
		st->st_uid = owner->uid;
		st->st_gid = owner->gid;
	} else if (owner) {
		restrict_mode(v, st);
	}
	st->st_nlink = 1;
	st->st_size = (off_t)size;
	st->st_blocks = (blkcnt_t)((size + 511) / 512);
	set_time(st, mtime_ns / 1000000000, mtime_ns % 1000000000);
}

static void stat_link(struct view *v, const char *path, const char *target,
		      int64_t mtime_s, struct stat *st)
{
	fill_common(v, path, st);
	st->st_mode = S_IFLNK | 0777;
	st->st_nlink = 1;
	st->st_size = (off_t)strlen(target);
	set_time(st, mtime_s, 0);
}

static int64_t group_mtime_s(struct group g, const char *prefix)
{
	int64_t m = 0;
	size_t a, b;

	group_range(g, prefix, &a, &b);
	for (size_t i = a; i < b; i++)
		if (g.objs[i]->mtime_ns > m)
			m = g.objs[i]->mtime_ns;
	return ns_to_s(m);
}

static int64_t pipe_mtime_s(const struct node *n)
{
	int64_t m = 0;

	if (!n->pipe)
		return n->job.mtime_s;
	for (size_t i = 0; i < n->pipe->n_ckpts; i++)
		if (n->pipe->ckpts[i].newest_mtime_ns > m)
			m = n->pipe->ckpts[i].newest_mtime_ns;
	return m ? ns_to_s(m) : n->job.mtime_s;
}

/* ---- resolution */

static const char *const job_files[] = {
	[PF_STATUS] = "status",	      [PF_JOB_JSON] = "job.json",
	[PF_METRICS] = "metrics",     [PF_METRICS_JSON] = "metrics.json",
	[PF_DELETABLE] = "deletable", [PF_RESTORE] = "restore",
};

static bool job_has_file(const struct job_view *jv, enum pseudo_file pf)
{
	if (pf == PF_JOB_JSON || pf == PF_METRICS_JSON)
		return jv->ej != NULL;
	return true;
}

static bool pipe_exists(const struct job_view *jv, int32_t pid,
			const struct cat_pipe **p)
{
	*p = jv->cj ? cat_job_pipe(jv->cj, pid) : NULL;
	if (*p)
		return true;
	if (jv->ej)
		for (size_t i = 0; i < jv->ej->n_pipelines; i++)
			if (jv->ej->pipelines[i] == pid)
				return true;
	return false;
}

/* join components [from, n) with '/' into out */
static int join(char **c, int from, int n, char *out, size_t outsz)
{
	size_t o = 0;

	out[0] = '\0';
	for (int i = from; i < n; i++) {
		int w = snprintf(out + o, outsz - o, "%s%s",
				 i > from ? "/" : "", c[i]);

		if (w < 0 || (size_t)w >= outsz - o)
			return -ENAMETOOLONG;
		o += (size_t)w;
	}
	return 0;
}

static int resolve_group(struct node *n, char **c, int from, int k)
{
	const struct cat_obj *obj = NULL;
	int r;

	if (from == k)
		return 0;
	if (join(c, from, k, n->sub, sizeof(n->sub)))
		return -ENAMETOOLONG;
	r = group_lookup(node_group(n), n->sub, &obj);
	if (r == 1) {
		n->kind = ND_OBJ;
		n->obj = obj;
		return 0;
	}
	if (r == 2) {
		n->kind = ND_SUBDIR;
		return 0;
	}
	return -ENOENT;
}

/* Savepoint link names: "<pid>-<cid>" for real-layout savepoints. */
static int parse_sp_link(const char *name, int32_t *pid, int64_t *cid)
{
	const char *dash = strchr(name, '-');
	char a[24];
	int64_t p;

	if (!dash || (size_t)(dash - name) >= sizeof(a))
		return -ENOENT;
	memcpy(a, name, (size_t)(dash - name));
	a[dash - name] = '\0';
	if (parse_id(a, &p) || p > INT32_MAX || parse_id(dash + 1, cid))
		return -ENOENT;
	*pid = (int32_t)p;
	return 0;
}

/*
 * Whether a real-layout savepoint can be among the job's objects.  A
 * savepoint ends its run (SAVEPOINT_DONE), and a job resumed from one says
 * so (isStartWithSavePoint); so a job the engine reports in a non-end state,
 * not resumed, holds none, and its objects' headers need not be read (one
 * GET each on an object store).  Everything else may: end states (the
 * finished-job object does not tell how the run started), orphans, and any
 * job while the engine cannot be asked.
 */
static bool savepoints_possible(const struct view *v, const struct job_view *jv)
{
	if (!jv->ej || jv->stale || v->snap->err)
		return true;
	if (job_state_is_end(jv->state) || jv->state == JS_DOING_SAVEPOINT)
		return true;
	return jv->ej->restored;
}

static const struct cat_obj *real_savepoint(struct view *v,
					    const struct cat_job *cj,
					    int32_t pid, int64_t cid)
{
	const struct cat_pipe *p = cj ? cat_job_pipe(cj, pid) : NULL;
	const struct cat_ckpt *ck = p ? cat_pipe_ckpt(p, cid) : NULL;

	if (!ck || ck->doc)
		return NULL;
	for (size_t i = 0; i < ck->n_objs; i++) {
		const struct cat_obj *o = ck->objs[i];

		if (o->kind == CAT_REAL && !o->rn.tmp &&
		    ckinfo_type(v->fs->ck, STFS_CK_SRC(v->fs), o) ==
			    CKPT_SAVEPOINT)
			return o;
	}
	return NULL;
}

static int resolve_job(struct view *v, struct node *n, char **c, int k)
{
	int64_t x;
	const struct cat_pipe *p;

	if (view_job(v, c[1], &n->job))
		return -ENOENT;
	n->kind = ND_JOB;
	if (k == 2)
		return 0;
	for (int pf = PF_STATUS; pf <= PF_RESTORE; pf++) {
		if (strcmp(c[2], job_files[pf]) == 0 &&
		    job_has_file(&n->job, (enum pseudo_file)pf)) {
			if (k > 3)
				return -ENOTDIR;
			n->kind = ND_PSEUDO;
			n->pf = (enum pseudo_file)pf;
			return 0;
		}
	}
	if (strcmp(c[2], "savepoints") == 0) {
		int32_t pid;

		n->kind = ND_SPS;
		n->group = OG_SP;
		if (k == 3)
			return 0;
		if (k == 4 && parse_sp_link(c[3], &pid, &x) == 0 &&
		    savepoints_possible(v, &n->job) &&
		    real_savepoint(v, n->job.cj, pid, x)) {
			n->kind = ND_LINK;
			snprintf(n->link, sizeof(n->link),
				 "../pipelines/%d/checkpoints/%" PRId64, pid,
				 x);
			return 0;
		}
		return resolve_group(n, c, 3, k);
	}
	if (strcmp(c[2], "other") == 0 && n->job.cj && n->job.cj->n_strays) {
		n->kind = ND_OTHER;
		n->group = OG_OTHER;
		return resolve_group(n, c, 3, k);
	}
	if (strcmp(c[2], "pipelines") != 0)
		return -ENOENT;
	n->kind = ND_PIPES;
	if (k == 3)
		return 0;
	if (parse_id(c[3], &x) || x > INT32_MAX ||
	    !pipe_exists(&n->job, (int32_t)x, &p))
		return -ENOENT;
	n->kind = ND_PIPE;
	n->pipe = p;
	n->pipe_id = (int32_t)x;
	if (k == 4)
		return 0;
	if (strcmp(c[4], "status") == 0) {
		if (k > 5)
			return -ENOTDIR;
		n->kind = ND_PSEUDO;
		n->pf = PF_PIPE_STATUS;
		return 0;
	}
	if (strcmp(c[4], "checkpoints") != 0)
		return -ENOENT;
	n->kind = ND_CKPTS;
	if (k == 5)
		return 0;
	if (strcmp(c[5], "latest") == 0 && p && p->restore_ckpt >= 0) {
		if (k > 6)
			return -ENOTDIR;
		n->kind = ND_LINK;
		snprintf(n->link, sizeof(n->link), "%" PRId64, p->restore_ckpt);
		return 0;
	}
	if (!p || parse_id(c[5], &x) || !(n->ckpt = cat_pipe_ckpt(p, x)))
		return v->cat->err ? v->cat->err : -ENOENT;
	n->kind = ND_CKPT;
	n->group = OG_CKPT;
	if (k >= 7 && strcmp(c[6], "info") == 0 &&
	    ckinfo_ckpt_object(n->ckpt)) {
		if (k > 7)
			return -ENOTDIR;
		n->kind = ND_PSEUDO;
		n->pf = PF_CKPT_INFO;
		return 0;
	}
	return resolve_group(n, c, 6, k);
}

static const char *const cluster_files[] = {
	[PF_CLUSTER_OVERVIEW] = "overview.json",
	[PF_CLUSTER_MEMBERS] = "members.json",
	[PF_CLUSTER_METRICS] = "metrics",
};

static const char *const stfs_files[] = {
	[PF_STATS] = "stats",
	[PF_HEALTH] = "health",
	[PF_CONFIG] = "config",
	[PF_AUDIT] = "audit",
};

static int resolve_named(struct node *n, const char *name,
			 const char *const *names, int lo, int hi)
{
	for (int i = lo; i <= hi; i++) {
		if (strcmp(name, names[i]) == 0) {
			n->kind = ND_PSEUDO;
			n->pf = (enum pseudo_file)i;
			return 0;
		}
	}
	return -ENOENT;
}

static int resolve_imap(struct view *v, struct node *n, char **c, int k)
{
	int rc;

	if (!v->fs->imap)
		return -ENOENT;
	n->kind = ND_IMAP;
	if (k == 1) {
		n->sub[0] = '\0';
		return 0;
	}
	if (join(c, 1, k, n->sub, sizeof(n->sub)))
		return -ENAMETOOLONG;
	/* imap/<cluster>/<map>.summary beside each map directory */
	if (k == 3 && strlen(c[2]) > 8 &&
	    strcmp(c[2] + strlen(c[2]) - 8, ".summary") == 0) {
		n->sub[strlen(n->sub) - 8] = '\0';
		rc = be_stat(v->fs->imap, n->sub, &n->imap_attr);
		if (rc == 0 && n->imap_attr.type == BE_DIR) {
			n->kind = ND_PSEUDO;
			n->pf = PF_IMAP_SUMMARY;
			return 0;
		}
		/* the documented layout: wal/<name>-<partition>.wal */
		if (strcmp(c[1], "wal") == 0 &&
		    imapsum_doc_stat(v->fs->imap, "wal", n->sub + 4,
				     &n->imap_attr) == 0) {
			n->kind = ND_PSEUDO;
			n->pf = PF_IMAP_DOC_SUMMARY;
			return 0;
		}
		if (join(c, 1, k, n->sub, sizeof(n->sub)))
			return -ENAMETOOLONG;
	}
	rc = be_stat(v->fs->imap, n->sub, &n->imap_attr);
	if (rc)
		return rc;
	if (n->imap_attr.type == BE_FILE)
		n->kind = ND_IMAP_OBJ;
	return 0;
}

int tree_resolve(struct view *v, const char *path, struct node *n)
{
	char buf[4096], *c[MAX_DEPTH], *save = NULL, *tok;
	int k = 0;

	memset(n, 0, sizeof(*n));
	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		if (k == MAX_DEPTH)
			return -ENOENT;
		if (strlen(tok) > 255)
			return -ENAMETOOLONG;
		c[k++] = tok;
	}
	n->kind = ND_ROOT;
	if (k == 0)
		return 0;

	if (strcmp(c[0], "jobs") == 0) {
		n->kind = ND_JOBS;
		return k == 1 ? 0 : resolve_job(v, n, c, k);
	}
	if (strcmp(c[0], "by-state") == 0) {
		n->kind = ND_BYSTATE;
		if (k == 1)
			return 0;
		n->state = job_state_parse(c[1]);
		if (strcmp(c[1], job_state_name(JS_ORPHAN)) == 0)
			n->state = JS_ORPHAN;
		else if (strcmp(c[1], job_state_name(JS_UNKNOWN)) == 0)
			n->state = JS_UNKNOWN;
		if (n->state < 0 || strcmp(c[1], job_state_name(n->state)) != 0)
			return -ENOENT;
		n->kind = ND_BYSTATE_DIR;
		if (k == 2)
			return 0;
		if (k > 3 || view_job(v, c[2], &n->job) ||
		    n->job.state != n->state)
			return -ENOENT;
		n->kind = ND_LINK;
		snprintf(n->link, sizeof(n->link), "../../jobs/%s", c[2]);
		return 0;
	}
	if (strcmp(c[0], "by-name") == 0) {
		const struct engine_job *ej;

		n->kind = ND_BYNAME;
		if (k == 1)
			return 0;
		if (tree_unescape_name(c[1], n->byname, sizeof(n->byname)))
			return -ENOENT;
		{
			char esc[1024];
			size_t a, b;

			/* the escaped form must be canonical */
			tree_escape_name(n->byname, esc, sizeof(esc));
			if (strcmp(esc, c[1]) != 0)
				return -ENOENT;
			named_jobs(v, n->byname, &a, &b);
			if (a == b)
				return -ENOENT;
		}
		n->kind = ND_BYNAME_DIR;
		if (k == 2)
			return 0;
		ej = engine_snap_find(v->snap, c[2]);
		if (k > 3 || !ej || !ej->name ||
		    strcmp(ej->name, n->byname) != 0)
			return -ENOENT;
		view_job(v, c[2], &n->job);
		n->kind = ND_LINK;
		snprintf(n->link, sizeof(n->link), "../../jobs/%s", c[2]);
		return 0;
	}
	if (strcmp(c[0], "cluster") == 0) {
		n->kind = ND_CLUSTER;
		if (k == 1)
			return 0;
		if (k > 2)
			return -ENOENT;
		return resolve_named(n, c[1], cluster_files,
				     PF_CLUSTER_OVERVIEW, PF_CLUSTER_METRICS);
	}
	if (strcmp(c[0], ".stfs") == 0) {
		n->kind = ND_STFS;
		if (k == 1)
			return 0;
		if (k > 2)
			return -ENOENT;
		return resolve_named(n, c[1], stfs_files, PF_STATS, PF_AUDIT);
	}
	if (strcmp(c[0], "stfs.prom") == 0 && k == 1) {
		n->kind = ND_PSEUDO;
		n->pf = PF_PROM_ALL;
		return 0;
	}
	if (strcmp(c[0], "imap") == 0)
		return resolve_imap(v, n, c, k);
	return -ENOENT;
}

/* ---- content */

/*
 * Files that show the daemon's own state now (README "Performance"): never
 * cached, rendered at every open and stat.
 */
static bool pf_live(enum pseudo_file pf)
{
	return pf == PF_STATS || pf == PF_HEALTH || pf == PF_AUDIT ||
	       pf == PF_RESTORE;
}

/*
 * Files rendered again from memory at little cost (the engine's texts, a
 * job's metrics, what the checkpoint summaries in memory say): the pcache
 * drops them before the others (`status` and `deletable` ask the engine
 * when rendered), so a walk over more files than its caps keeps those
 * (README "Performance").
 */
static bool pf_cheap(enum pseudo_file pf)
{
	return pf == PF_JOB_JSON || pf == PF_METRICS_JSON || pf == PF_METRICS ||
	       pf == PF_PIPE_STATUS || pf == PF_CKPT_INFO;
}

/*
 * The version of what a job's pseudo-file is rendered from: the job's
 * objects in the catalog, its engine record, the state stfs derives from
 * both (orphan age included), whether the engine answered, the release.
 * Equal versions render equal bytes, so the pcache serves the entry for as
 * long as the version holds (pcache.h).  0 for the other files: they are
 * kept for cache_ttl (cluster files, config, IMap summaries).
 */
static uint64_t content_version(const struct view *v, const struct node *n)
{
	const struct job_view *jv = &n->job;
	const struct cat_job *cj = jv->cj;
	const struct engine_job *ej = jv->ej;
	uint64_t h = 0xcbf29ce484222325ULL;
	int64_t f[8];

	switch (n->pf) {
	case PF_STATUS:
	case PF_JOB_JSON:
	case PF_METRICS:
	case PF_METRICS_JSON:
	case PF_DELETABLE:
	case PF_PIPE_STATUS:
		break;
	case PF_CKPT_INFO: {
		/* the object it is decoded from, where it sits, and whether
		 * it is the restore point (render_ckpt_info) */
		const struct cat_obj *o = ckinfo_ckpt_object(n->ckpt);

		if (!o)
			return 0;
		f[0] = (int64_t)o->size;
		f[1] = o->mtime_ns;
		f[2] = n->ckpt->id;
		f[3] = n->pipe_id | ((int64_t)n->ckpt->restore_point << 32);
		f[4] = n->pf;
		h = pcache_mix(h, f, 5 * sizeof(f[0]));
		h = pcache_mix(h, o->key, strlen(o->key));
		return pcache_mix(h, jv->id, strlen(jv->id));
	}
	default:
		return 0;
	}
	f[0] = jv->state;
	f[1] = jv->stale | (v->snap->err ? 2 : 0) | (v->snap->partial ? 4 : 0) |
	       (render_job_released(v->fs, jv->id) ? 8 : 0);
	f[2] = jv->mtime_s;
	f[3] = n->pf;
	h = pcache_mix(h, f, 4 * sizeof(f[0]));
	if (cj) {
		f[0] = (int64_t)cj->n_objs;
		f[1] = (int64_t)cj->bytes;
		f[2] = (int64_t)cj->n_tmp;
		f[3] = cj->newest_mtime_ns;
		f[4] = cj->newest_ckpt_ms;
		f[5] = (int64_t)cj->n_pipes;
		f[6] = (int64_t)(cj->n_sp + (cj->n_strays << 20));
		f[7] = cj->in_ckpt_dir | (cj->in_sp_dir << 1);
		h = pcache_mix(h, f, sizeof(f));
	}
	if (ej) /* its fields and texts, digested once per snapshot */
		h = pcache_mix(h, &ej->digest, sizeof(ej->digest));
	return h;
}

/* stfs.prom's jobs: what prom_fill reads of one job, folded into *cookie
 * (the engine's records are in the snapshot's digest) */
static int prom_ver_add(void *cookie, const struct job_view *jv)
{
	uint64_t *h = cookie;
	const struct cat_job *cj = jv->cj;
	int64_t f[6] = {jv->state, cj != NULL, 0, 0, 0, 0};

	*h = pcache_mix(*h, jv->id, strlen(jv->id) + 1);
	if (cj) {
		f[1] = (int64_t)cj->n_objs;
		f[2] = (int64_t)cj->bytes;
		f[3] = (int64_t)cj->n_tmp;
		f[4] = cj->newest_ckpt_ms;
		f[5] = (int64_t)cj->n_pipes;
	}
	*h = pcache_mix(*h, f, sizeof(f));
	for (size_t i = 0; cj && i < cj->n_pipes; i++) {
		const struct cat_obj *rp = cj->pipes[i].restore;
		int64_t p[3] = {(int64_t)cj->pipes[i].n_ckpts,
				rp ? (int64_t)rp->kind : -1,
				rp && rp->kind == CAT_REAL ? rp->rn.write_ts
							   : 0};

		*h = pcache_mix(*h, p, sizeof(p));
	}
	return 0;
}

static int render_prom(struct view *v, const struct job_view *one,
		       struct buf *out);
static int render_prom_tail(struct view *v, struct buf *out);

/*
 * stfs.prom's version (README "Performance"): the jobs' series depend on
 * the catalog's figures, the engine snapshot (its digest) and the states
 * derived from both; the daemon's own series (IMap figures, backend_up,
 * deletion counters) are rendered at every lookup and their bytes are part
 * of the version, so a deletion or a source going down shows at once.
 * 0 when they cannot be rendered (then stfs.prom is not kept).
 */
static uint64_t prom_version(struct view *v)
{
	uint64_t ver = 0xcbf29ce484222325ULL;
	int64_t f[2] = {v->snap->err != 0, v->snap->partial};
	struct buf tail;

	buf_init(&tail, (size_t)16 << 20);
	if (render_prom_tail(v, &tail) || buf_err(&tail)) {
		buf_release(&tail);
		return 0;
	}
	view_each_job(v, prom_ver_add, &ver);
	ver = pcache_mix(ver, &v->snap->digest, sizeof(v->snap->digest));
	ver = pcache_mix(ver, f, sizeof(f));
	ver = pcache_mix(ver, tail.data ? tail.data : "", tail.len);
	buf_release(&tail);
	return ver ? ver : 1;
}

/* Which cached content a pseudo-file node is: its key (the path, or the
 * path and who asks), its version, and whether it is live (never kept). */
struct content_id {
	const char *key;
	uint64_t ver;
	bool live;
	char buf[4200];
};

static void content_id(struct view *v, const char *path, const struct node *n,
		       struct content_id *id)
{
	id->key = path;
	id->ver =
		n->pf == PF_PROM_ALL ? prom_version(v) : content_version(v, n);
	id->live = pf_live(n->pf) || (n->pf == PF_PROM_ALL && !id->ver);
	/* `deletable` depends on who asks (R4) */
	if (n->pf == PF_DELETABLE && v->caller_allowed &&
	    !v->caller_allowed(v->fs)) {
		snprintf(id->buf, sizeof(id->buf), "%s#denied", path);
		id->key = id->buf;
	}
}

static int content_of(struct view *v, const struct node *n,
		      const struct content_id *id, struct pc_entry **out)
{
	struct buf b;
	int64_t mtime = 0;
	size_t len;
	char *data;
	int rc;

	*out = id->live ? NULL : pcache_lookup(v->fs->pc, id->key, id->ver);
	if (*out) {
		STFS_INC(v->fs, pcache_hits);
		return 0;
	}
	if (id->live)
		STFS_INC(v->fs, live_renders);
	else
		STFS_INC(v->fs, pcache_misses);
	buf_init(&b, (size_t)64 << 20);
	rc = tree_render(v, n, &b, &mtime);
	if (!rc)
		rc = buf_err(
			&b); /* a renderer that dropped an append's error */
	if (rc) {
		buf_release(&b);
		return rc;
	}
	data = buf_detach(&b, &len);
	if (!data)
		return -ENOMEM;
	if (id->live)
		*out = pcache_entry_new(id->key, data, len, mtime);
	else if (pf_cheap(n->pf))
		*out = pcache_insert_cheap(v->fs->pc, id->key, data, len, mtime,
					   id->ver);
	else
		*out = pcache_insert(v->fs->pc, id->key, data, len, mtime,
				     id->ver);
	return *out ? 0 : -ENOMEM;
}

int tree_content(struct view *v, const char *path, const struct node *n,
		 struct pc_entry **out)
{
	struct content_id id;

	content_id(v, path, n, &id);
	return content_of(v, n, &id, out);
}

/*
 * A pseudo-file's length and time for stat: those of the version kept in
 * the pcache, text or size alone (README "Performance": a stat of an
 * unchanged file renders nothing); rendered only when neither is kept.
 */
static int content_size(struct view *v, const char *path, const struct node *n,
			size_t *len, int64_t *mtime_s)
{
	struct content_id id;
	struct pc_entry *e;
	int rc;

	content_id(v, path, n, &id);
	if (!id.live &&
	    pcache_lookup_size(v->fs->pc, id.key, id.ver, len, mtime_s)) {
		STFS_INC(v->fs, pcache_hits);
		return 0;
	}
	rc = content_of(v, n, &id, &e);
	if (rc)
		return rc;
	*len = e->len;
	*mtime_s = e->mtime_s;
	pcache_put(e);
	return 0;
}

int tree_render(struct view *v, const struct node *n, struct buf *out,
		int64_t *mtime_s)
{
	const struct job_view *jv = &n->job;
	int rc;

	*mtime_s = jv->mtime_s;
	switch (n->pf) {
	case PF_STATUS:
		return render_job_status(v, jv, out);
	case PF_JOB_JSON:
		return buf_append(out, jv->ej->json, jv->ej->json_len);
	case PF_METRICS_JSON: {
		size_t ml;
		const char *mt = engine_job_metrics_text(jv->ej, &ml);

		rc = buf_append(out, mt, ml);
		return rc ? rc : buf_puts(out, "\n");
	}
	case PF_METRICS:
		return render_prom(v, jv, out);
	case PF_DELETABLE:
		return render_deletable(
			v, jv, !v->caller_allowed || v->caller_allowed(v->fs),
			out);
	case PF_RESTORE:
		return render_restore(v, jv, out);
	case PF_PIPE_STATUS:
		*mtime_s = pipe_mtime_s(n);
		/* a remote store: the summaries of every pipeline of the job in
		 * one go (a walk stats each pipeline's status in turn) */
		ckinfo_prefetch_info(v->fs->ck, STFS_CK_SRC(v->fs), jv->cj);
		return render_pipe_status(v, jv, n->pipe_id, n->pipe, out);
	case PF_CLUSTER_OVERVIEW:
	case PF_CLUSTER_MEMBERS:
	case PF_CLUSTER_METRICS: {
		static const char *const paths[] = {
			[PF_CLUSTER_OVERVIEW] = "/overview",
			[PF_CLUSTER_MEMBERS] = "/system-monitoring-information",
			[PF_CLUSTER_METRICS] = "/metrics",
		};

		*mtime_s = v->snap->data_ms ? v->snap->data_ms / 1000
					    : v->fs->start_ms / 1000;
		if (!v->fs->engine)
			return -EAGAIN;
		rc = engine_get_raw(v->fs->engine, paths[n->pf], out);
		if (rc == 0 && n->pf != PF_CLUSTER_METRICS &&
		    (out->len == 0 || out->data[out->len - 1] != '\n'))
			rc = buf_puts(out, "\n");
		return rc;
	}
	case PF_STATS:
		*mtime_s = v->now_ms / 1000;
		return render_stats(v, out);
	case PF_HEALTH:
		*mtime_s = v->now_ms / 1000;
		return render_health(v, out);
	case PF_CONFIG:
		*mtime_s = v->fs->start_ms / 1000;
		{
			int crc = conf_render(&v->fs->conf, out);

			/* the storage's credentials: provider, expiry */
			if (crc == 0)
				crc = be_describe(v->fs->ckpt, out);
			return crc;
		}
	case PF_AUDIT:
		*mtime_s = v->now_ms / 1000;
		return v->fs->audit ? audit_snapshot(v->fs->audit, out) : 0;
	case PF_PROM_ALL:
		*mtime_s = v->now_ms / 1000;
		rc = render_prom(v, NULL, out);
		return rc ? rc : render_prom_tail(v, out);
	case PF_IMAP_SUMMARY:
	case PF_IMAP_DOC_SUMMARY:
		*mtime_s = ns_to_s(n->imap_attr.mtime_ns);
		{
			struct imapsum_opts o = {
				.grace_ns = (int64_t)v->fs->conf.imap_grace_s *
					    1000000000,
				.engine = imapdel_engine(
					v->fs, v->fs->conf.engine_ttl_ms),
				.ro = v->fs->conf.ro,
				.cache = v->fs->walsum,
			};

			if (n->pf == PF_IMAP_DOC_SUMMARY)
				return imapsum_doc_render(v->fs->imap, "wal",
							  n->sub + 4, &o, out);
			return imapsum_render(v->fs->imap, n->sub, &o, out);
		}
	case PF_CKPT_INFO: {
		const struct cat_obj *o = ckinfo_ckpt_object(n->ckpt);

		*mtime_s = o ? ns_to_s(o->mtime_ns) : jv->mtime_s;
	}
		return render_ckpt_info(v, jv, n->pipe_id, n->ckpt, out);
	case PF_NONE:
		break;
	}
	return -EIO;
}

struct prom_collect {
	struct prom_job *jobs;
	size_t n, cap;
};

static void prom_fill(struct prom_job *pj, const struct job_view *jv)
{
	memset(pj, 0, sizeof(*pj));
	pj->id = jv->id;
	pj->name = jv->ej ? jv->ej->name : NULL;
	pj->state_name = job_state_name(jv->state);
	/* parsed by prom_render_jobs for this job's series only (README
	 * "Memory") */
	if (jv->ej)
		pj->metrics_text =
			engine_job_metrics_text(jv->ej, &pj->metrics_len);
	pj->ckpt_interval_ms = jv->ej ? jv->ej->ckpt_interval_ms : 0;
	pj->orphan = jv->state == JS_ORPHAN;
	pj->dead = pj->orphan || job_state_is_end(jv->state);
	if (jv->cj) {
		const struct cat_job *cj = jv->cj;

		pj->has_storage = 1;
		pj->objects = cj->n_objs;
		pj->bytes = cj->bytes;
		pj->tmp_objects = cj->n_tmp;
		pj->newest_ckpt_ms = cj->newest_ckpt_ms;
		pj->pipelines = cj->n_pipes;
		for (size_t i = 0; i < cj->n_pipes; i++) {
			const struct cat_obj *rp = cj->pipes[i].restore;

			pj->checkpoints += cj->pipes[i].n_ckpts;
			if (!rp)
				continue;
			pj->restore_points++;
			if (rp->kind == CAT_REAL && rp->rn.write_ts > 0 &&
			    (!pj->oldest_restore_ms ||
			     rp->rn.write_ts < pj->oldest_restore_ms))
				pj->oldest_restore_ms = rp->rn.write_ts;
		}
	}
}

static int prom_add(void *cookie, const struct job_view *jv)
{
	struct prom_collect *pc = cookie;

	if (pc->n == pc->cap) {
		size_t cap = pc->cap ? pc->cap * 2 : 64;
		struct prom_job *p = realloc(pc->jobs, cap * sizeof(*p));

		if (!p)
			return 1;
		pc->jobs = p;
		pc->cap = cap;
	}
	prom_fill(&pc->jobs[pc->n++], jv);
	return 0;
}

/* The directories of an IMap directory, collected (NUL-separated) before
 * anything else asks the backend. */
static int dir_fill(void *cookie, const char *name, const struct be_attr *a)
{
	struct buf *b = cookie;

	if (a && a->type == BE_DIR && buf_append(b, name, strlen(name) + 1))
		return 1;
	return 0;
}

/* stfs.prom's IMap WAL series: every imap/<cluster>/<map>, its figures
 * from the decoded-map cache (fs->walsum: no WAL byte is read while a
 * map's listing is unchanged). */
static int render_prom_imap(struct view *v, struct buf *out)
{
	struct stfs *fs = v->fs;
	struct imapsum_opts o = {
		.grace_ns = (int64_t)fs->conf.imap_grace_s * 1000000000,
		.ro = fs->conf.ro,
		.cache = fs->walsum,
	};
	struct buf clusters, maps;
	struct prom_imap_map *pm = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (!fs->imap)
		return 0;
	o.engine = imapdel_engine(fs, fs->conf.engine_ttl_ms);
	buf_init(&clusters, (size_t)16 << 20);
	buf_init(&maps, (size_t)16 << 20);
	if (be_list(fs->imap, "", 0, dir_fill, &clusters) != 0)
		goto out; /* imap down: stfs_backend_up says so */
	for (size_t c = 0; c < clusters.len;
	     c += strlen(clusters.data + c) + 1) {
		size_t from = maps.len;

		if (be_list(fs->imap, clusters.data + c, 0, dir_fill, &maps))
			maps.len = from;
		for (size_t m = from; m < maps.len;
		     m += strlen(maps.data + m) + 1) {
			char dir[2048];

			if (n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct prom_imap_map *p =
					realloc(pm, nc * sizeof(*p));

				if (!p) {
					rc = -ENOMEM;
					goto out;
				}
				pm = p;
				cap = nc;
			}
			if (snprintf(dir, sizeof(dir), "%s/%s",
				     clusters.data + c,
				     maps.data + m) >= (int)sizeof(dir) ||
			    imapsum_figures(fs->imap, dir, &o, &pm[n].fig))
				continue; /* this map cannot be read now */
			pm[n].cluster = clusters.data + c;
			pm[n++].map = maps.data + m;
		}
	}
	rc = prom_render_imap(out, pm, n);
out:
	free(pm);
	buf_release(&clusters);
	buf_release(&maps);
	return rc;
}

/* stfs.prom's series after the jobs': the IMap WAL figures, the daemon's */
static int render_prom_tail(struct view *v, struct buf *out)
{
	int rc = render_prom_imap(v, out);

	return rc ? rc : render_prom_daemon(v, out);
}

/* one job's metrics, or (one NULL) every job's series and their summary */
static int render_prom(struct view *v, const struct job_view *one,
		       struct buf *out)
{
	struct prom_collect pc = {0};
	int rc;

	if (one) {
		struct prom_job pj;

		prom_fill(&pj, one);
		return prom_render_jobs(out, &pj, 1);
	}
	view_each_job(v, prom_add, &pc);
	rc = prom_render_jobs(out, pc.jobs, pc.n);
	if (!rc)
		rc = prom_render_summary(out, pc.jobs, pc.n);
	free(pc.jobs);
	return rc;
}

/* ---- stat */

/* `size`: a pseudo-file's length and time too (else 0: not rendered) */
static int stat_node(struct view *v, const char *path, const struct node *n,
		     struct stat *st, bool size)
{
	size_t len = 0;
	int64_t mtime_s = 0;
	int rc;

	switch (n->kind) {
	case ND_ROOT:
	case ND_JOBS:
	case ND_BYSTATE:
	case ND_BYSTATE_DIR:
	case ND_BYNAME:
	case ND_BYNAME_DIR:
	case ND_CLUSTER:
	case ND_STFS:
		stat_dir(v, path, v->fs->start_ms / 1000, st);
		return 0;
	case ND_JOB:
	case ND_PIPES:
		stat_dir(v, path, n->job.mtime_s, st);
		return 0;
	case ND_PIPE:
	case ND_CKPTS:
		stat_dir(v, path, pipe_mtime_s(n), st);
		return 0;
	case ND_CKPT:
		stat_dir(v, path, ns_to_s(n->ckpt->newest_mtime_ns), st);
		return 0;
	case ND_SPS:
	case ND_OTHER: {
		int64_t m = group_mtime_s(node_group(n), "");

		stat_dir(v, path, m ? m : n->job.mtime_s, st);
		return 0;
	}
	case ND_SUBDIR:
		stat_dir(v, path, group_mtime_s(node_group(n), n->sub), st);
		return 0;
	case ND_OBJ:
		stat_obj(v, path, n->obj->size, n->obj->mtime_ns,
			 &n->obj->owner, st);
		return 0;
	case ND_LINK:
		stat_link(v, path, n->link, n->job.mtime_s, st);
		return 0;
	case ND_IMAP:
		stat_dir(v, path,
			 n->sub[0] ? ns_to_s(n->imap_attr.mtime_ns)
				   : v->fs->start_ms / 1000,
			 st);
		return 0;
	case ND_IMAP_OBJ:
		stat_obj(v, path, n->imap_attr.size, n->imap_attr.mtime_ns,
			 &n->imap_attr.owner, st);
		return 0;
	case ND_PSEUDO:
		rc = size ? content_size(v, path, n, &len, &mtime_s) : 0;
		if (rc)
			return rc;
		stat_obj(v, path, len, mtime_s * 1000000000, NULL, st);
		if (n->pf == PF_RESTORE)
			st->st_mode = S_IFREG | 0644;
		if (n->pf == PF_AUDIT || n->pf == PF_CONFIG)
			restrict_mode(v, st);
		return 0;
	}
	return -EIO;
}

int tree_stat(struct view *v, const char *path, const struct node *n,
	      struct stat *st)
{
	return stat_node(v, path, n, st, true);
}

int tree_stat_nosize(struct view *v, const char *path, const struct node *n,
		     struct stat *st)
{
	return stat_node(v, path, n, st, false);
}

/* ---- listing */

struct lister {
	struct view *v;
	const char *path;
	tree_fill_fn fill;
	void *cookie;
	int rc;
	int state;	  /* by-state filter */
	const char *name; /* by-name filter */
	bool names_only;  /* fill gets names, st NULL */
};

/* Resolve and stat "<dir>/<name>"; an entry that cannot be resolved or
 * rendered (a pseudo-file) is still listed, as a plain file. */
static int child_stat(struct view *v, const char *dir, const char *name,
		      struct stat *st)
{
	char child[4096];
	struct node *n;
	int rc;

	if (snprintf(child, sizeof(child), "%s%s%s", dir,
		     strcmp(dir, "/") == 0 ? "" : "/",
		     name) >= (int)sizeof(child))
		return -ENAMETOOLONG;
	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	rc = tree_resolve(v, child, n);
	if (rc == 0)
		rc = tree_stat(v, child, n, st);
	free(n);
	if (rc) {
		memset(st, 0, sizeof(*st));
		st->st_ino = pcache_hash(child) | 2;
		st->st_mode = S_IFREG | 0444;
	}
	return 0;
}

/* Hand one entry to the filler: resolved and stat'ed, or (names_only)
 * just its name. */
static int emit(struct lister *l, const char *name)
{
	struct stat st;
	int rc;

	STFS_INC(l->v->fs, list_entries);
	if (l->names_only)
		return l->fill(l->cookie, name, NULL);
	rc = child_stat(l->v, l->path, name, &st);
	if (rc == -ENAMETOOLONG)
		return 0;
	if (rc)
		return rc;
	return l->fill(l->cookie, name, &st);
}

static int emit_job(void *cookie, const struct job_view *jv)
{
	struct lister *l = cookie;

	if (l->state >= 0 && jv->state != l->state)
		return 0;
	return emit(l, jv->id);
}

static int list_group(struct lister *l, struct group g, const char *prefix)
{
	size_t len = strlen(prefix), a, b;
	char last[256] = "";

	group_range(g, prefix, &a, &b);
	for (size_t i = a; i < b; i++) {
		const char *name = g.objs[i]->name, *rest, *slash;
		char comp[256];
		size_t cl;

		rest = len ? name + len + 1 : name;
		slash = strchr(rest, '/');
		cl = slash ? (size_t)(slash - rest) : strlen(rest);
		if (cl == 0 || cl >= sizeof(comp))
			continue;
		memcpy(comp, rest, cl);
		comp[cl] = '\0';
		if (strcmp(comp, last) == 0)
			continue;
		snprintf(last, sizeof(last), "%s", comp);
		if (emit(l, comp))
			return 1;
	}
	return 0;
}

/* An IMap directory's names, collected first: emitting resolves each
 * entry through the same backend, which may not be re-entered from its
 * own listing callback. */
struct imap_names {
	struct buf names; /* NUL-separated */
	int depth;
	bool doc;	 /* listing imap/wal/: the documented layout */
	struct buf maps; /* doc: the map names seen, NUL-separated */
};

/* imap/wal/<name>-<partition>.wal: "<name>.summary" once per name. */
static int doc_summary_name(struct imap_names *in, const char *file)
{
	size_t nl;

	if (!imapsum_doc_partition(file, &nl))
		return 0;
	for (size_t o = 0; o < in->maps.len; o += strlen(in->maps.data + o) + 1)
		if (strlen(in->maps.data + o) == nl &&
		    memcmp(in->maps.data + o, file, nl) == 0)
			return 0;
	if (buf_append(&in->maps, file, nl) || buf_append(&in->maps, "", 1) ||
	    buf_append(&in->names, file, nl) ||
	    buf_append(&in->names, ".summary", sizeof(".summary")))
		return 1;
	return 0;
}

static int imap_fill(void *cookie, const char *name, const struct be_attr *a)
{
	struct imap_names *in = cookie;

	if (buf_append(&in->names, name, strlen(name) + 1))
		return 1;
	/* maps are the directories of a cluster directory: imap/<c>/<map> */
	if (a && a->type == BE_DIR && in->depth == 1 &&
	    (buf_puts(&in->names, name) ||
	     buf_append(&in->names, ".summary", sizeof(".summary"))))
		return 1;
	if (in->doc && a && a->type == BE_FILE)
		return doc_summary_name(in, name);
	return 0;
}

static int list_imap(struct lister *l, const struct node *n)
{
	struct imap_names in = {.depth = n->sub[0] ? 1 : 0,
				.doc = strcmp(n->sub, "wal") == 0};
	int rc;

	for (const char *s = n->sub; *s; s++)
		in.depth += *s == '/';
	buf_init(&in.names, (size_t)16 << 20);
	buf_init(&in.maps, (size_t)1 << 20);
	rc = be_list(l->v->fs->imap, n->sub, 0, imap_fill, &in);
	for (size_t o = 0; rc == 0 && o < in.names.len;
	     o += strlen(in.names.data + o) + 1)
		if (emit(l, in.names.data + o))
			break;
	buf_release(&in.names);
	buf_release(&in.maps);
	return rc;
}

static int list_names(struct lister *l, const char *const *names, int lo,
		      int hi)
{
	for (int i = lo; i <= hi; i++)
		if (names[i] && emit(l, names[i]))
			return 1;
	return 0;
}

static int list_node(struct view *v, const char *path, const struct node *n,
		     tree_fill_fn fill, void *cookie, bool names_only)
{
	struct lister l = {.v = v,
			   .path = path,
			   .fill = fill,
			   .cookie = cookie,
			   .state = -1,
			   .names_only = names_only};
	char name[64];

	switch (n->kind) {
	case ND_ROOT:
		emit(&l, "jobs");
		emit(&l, "by-state");
		emit(&l, "by-name");
		emit(&l, "cluster");
		if (v->fs->imap)
			emit(&l, "imap");
		emit(&l, "stfs.prom");
		return 0;
	case ND_JOBS:
		/* the storage could not be listed and the engine not asked */
		if (v->cat->err && v->snap->err)
			return v->cat->err;
		view_each_job(v, emit_job, &l);
		return 0;
	case ND_JOB:
		for (int pf = PF_STATUS; pf <= PF_RESTORE; pf++)
			if (job_has_file(&n->job, (enum pseudo_file)pf) &&
			    emit(&l, job_files[pf]))
				return 0;
		emit(&l, "pipelines");
		emit(&l, "savepoints");
		if (n->job.cj && n->job.cj->n_strays)
			emit(&l, "other");
		return 0;
	case ND_PIPES: {
		/* union of storage pipelines and the engine's, sorted */
		const struct cat_job *cj = n->job.cj;
		const struct engine_job *ej = n->job.ej;
		size_t i = 0, k = 0, ni = cj ? cj->n_pipes : 0,
		       nk = ej ? ej->n_pipelines : 0;

		while (i < ni || k < nk) {
			int32_t a = i < ni ? cj->pipes[i].id : INT32_MAX;
			int32_t b = k < nk ? ej->pipelines[k] : INT32_MAX;
			int32_t m = a < b ? a : b;

			if (a == m)
				i++;
			if (b == m)
				k++;
			snprintf(name, sizeof(name), "%d", m);
			if (emit(&l, name))
				return 0;
		}
		return 0;
	}
	case ND_PIPE:
		emit(&l, "status");
		emit(&l, "checkpoints");
		return 0;
	case ND_CKPTS:
		if (v->cat->err)
			return v->cat->err; /* say why, not "empty" */
		if (!n->pipe)
			return 0;
		for (size_t i = 0; i < n->pipe->n_ckpts; i++) {
			snprintf(name, sizeof(name), "%" PRId64,
				 n->pipe->ckpts[i].id);
			if (emit(&l, name))
				return 0;
		}
		if (n->pipe->restore_ckpt >= 0)
			emit(&l, "latest");
		return 0;
	case ND_CKPT:
		if (ckinfo_ckpt_object(n->ckpt) && emit(&l, "info"))
			return 0;
		list_group(&l, node_group(n), "");
		return 0;
	case ND_OTHER:
		list_group(&l, node_group(n), "");
		return 0;
	case ND_SUBDIR:
		list_group(&l, node_group(n), n->sub);
		return 0;
	case ND_SPS:
		if (list_group(&l, node_group(n), ""))
			return 0;
		if (!n->job.cj || !savepoints_possible(v, &n->job))
			return 0;
		ckinfo_prefetch_job(v->fs->ck, STFS_CK_SRC(v->fs), n->job.cj);
		for (size_t i = 0; i < n->job.cj->n_pipes; i++) {
			const struct cat_pipe *p = &n->job.cj->pipes[i];

			for (size_t j = 0; j < p->n_ckpts; j++) {
				if (!real_savepoint(v, n->job.cj, p->id,
						    p->ckpts[j].id))
					continue;
				snprintf(name, sizeof(name), "%d-%" PRId64,
					 p->id, p->ckpts[j].id);
				if (emit(&l, name))
					return 0;
			}
		}
		return 0;
	case ND_BYSTATE:
		for (int s = 0; s < JS_COUNT; s++)
			if (emit(&l, job_state_name(s)))
				return 0;
		return 0;
	case ND_BYSTATE_DIR:
		l.state = n->state;
		view_each_job(v, emit_job, &l);
		return 0;
	case ND_BYNAME: {
		/* distinct names, from the snapshot's sorted index */
		size_t nn;
		const struct engine_job *const *idx =
			engine_snap_by_name(v->snap, &nn);

		for (size_t i = 0; i < nn; i++) {
			char esc[1024];

			if (i && strcmp(idx[i]->name, idx[i - 1]->name) == 0)
				continue;
			tree_escape_name(idx[i]->name, esc, sizeof(esc));
			if (strlen(esc) > 255)
				continue;
			if (emit(&l, esc))
				break;
		}
		return 0;
	}
	case ND_BYNAME_DIR: {
		size_t a, b;
		const struct engine_job *const *idx =
			named_jobs(v, n->byname, &a, &b);

		for (size_t i = a; i < b; i++)
			if (emit(&l, idx[i]->id))
				return 0;
		return 0;
	}
	case ND_CLUSTER:
		list_names(&l, cluster_files, PF_CLUSTER_OVERVIEW,
			   PF_CLUSTER_METRICS);
		return 0;
	case ND_STFS:
		list_names(&l, stfs_files, PF_STATS, PF_AUDIT);
		return 0;
	case ND_IMAP:
		return list_imap(&l, n);
	case ND_PSEUDO:
	case ND_OBJ:
	case ND_LINK:
	case ND_IMAP_OBJ:
		return -ENOTDIR;
	}
	return -EIO;
}

int tree_list(struct view *v, const char *path, const struct node *n,
	      tree_fill_fn fill, void *cookie)
{
	return list_node(v, path, n, fill, cookie, false);
}

/* ---- listings served by position (readdir) */

struct tree_dir {
	struct view v;
	char *path;
	struct buf names; /* NUL-separated */
	size_t *off;	  /* entry i starts at names.data + off[i] */
	size_t n, cap;
	bool nomem;
};

static int name_fill(void *cookie, const char *name, const struct stat *st)
{
	struct tree_dir *d = cookie;

	(void)st;
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 64;
		size_t *o = realloc(d->off, cap * sizeof(*o));

		if (!o)
			goto nomem;
		d->off = o;
		d->cap = cap;
	}
	d->off[d->n] = d->names.len;
	if (buf_append(&d->names, name, strlen(name) + 1))
		goto nomem;
	d->n++;
	return 0;
nomem:
	d->nomem = true;
	return 1;
}

/*
 * jobs/ is opened again for every job a walk leaves (`du` and `find` go
 * back up through ".."), and listing it merges every job of the catalog and
 * the engine: its names are kept in the pcache for the job ids of both
 * (README "Performance").
 */
#define JOBS_LIST_KEY "\x01names:/jobs"

static uint64_t jobs_list_version(const struct view *v)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int64_t f[2] = {(int64_t)v->cat->n_jobs, (int64_t)v->snap->n_jobs};

	h = pcache_mix(h, f, sizeof(f));
	for (size_t i = 0; i < v->cat->n_jobs; i++)
		h = pcache_mix(h, v->cat->jobs[i].id,
			       strlen(v->cat->jobs[i].id) + 1);
	return pcache_mix(h, &v->snap->digest, sizeof(v->snap->digest));
}

/* Take the offsets of the `len` bytes of NUL-terminated names at `p`. */
static int names_take(struct tree_dir *d, const char *p, size_t len)
{
	if (buf_append(&d->names, p, len))
		return -ENOMEM;
	for (size_t at = 0; at < len; at += strlen(p + at) + 1) {
		if (d->n == d->cap) {
			size_t cap = d->cap ? 2 * d->cap : 64;
			size_t *o = realloc(d->off, cap * sizeof(*o));

			if (!o)
				return -ENOMEM;
			d->off = o;
			d->cap = cap;
		}
		d->off[d->n++] = at;
	}
	return 0;
}

static int list_jobs(struct tree_dir *d)
{
	struct node jobs = {.kind = ND_JOBS};
	uint64_t ver = jobs_list_version(&d->v);
	struct pc_entry *e = pcache_lookup(d->v.fs->pc, JOBS_LIST_KEY, ver);
	char *copy;
	int rc;

	if (e) {
		rc = names_take(d, e->data, e->len);
		STFS_ADD(d->v.fs, list_entries, d->n);
		pcache_put(e);
		return rc;
	}
	rc = list_node(&d->v, d->path, &jobs, name_fill, d, true);
	if (rc || d->nomem || !(copy = malloc(d->names.len + 1)))
		return rc;
	if (d->names.len)
		memcpy(copy, d->names.data, d->names.len);
	copy[d->names.len] = '\0';
	pcache_put(pcache_insert(d->v.fs->pc, JOBS_LIST_KEY, copy, d->names.len,
				 0, ver));
	return 0;
}

int tree_dir_open(struct view *v, const char *path, const struct node *n,
		  struct tree_dir **out)
{
	struct tree_dir *d = calloc(1, sizeof(*d));
	int rc;

	*out = NULL;
	if (!d || !(d->path = strdup(path))) {
		free(d);
		view_close(v);
		return -ENOMEM;
	}
	d->v = *v;
	v->cat = NULL;
	v->snap = NULL;
	/* names only: what a whole `ls` of 2.9M jobs needs is the names */
	buf_init(&d->names, (size_t)1 << 30);
	if (n->kind == ND_JOBS && !(d->v.cat->err && d->v.snap->err))
		rc = list_jobs(d);
	else
		rc = list_node(&d->v, d->path, n, name_fill, d, true);
	if (rc == 0 && d->nomem)
		rc = -ENOMEM;
	if (rc) {
		tree_dir_close(d);
		return rc;
	}
	*out = d;
	return 0;
}

size_t tree_dir_count(const struct tree_dir *d)
{
	return d->n;
}

uint64_t tree_dir_digest(const struct tree_dir *d)
{
	/* over "a\0b\0...", a word at a time: jobs/ is listed at every
	 * return to it */
	uint64_t h =
		pcache_mix(1469598103934665603ull,
			   d->names.data ? d->names.data : "", d->names.len);

	return h ^ (uint64_t)d->n;
}

int tree_dir_fill(struct tree_dir *d, size_t from, tree_fill_fn fill,
		  void *cookie)
{
	struct stat st;
	int rc;

	for (size_t i = from; i < d->n; i++) {
		const char *name = d->names.data + d->off[i];

		rc = child_stat(&d->v, d->path, name, &st);
		if (rc == -ENAMETOOLONG)
			continue;
		if (rc)
			return rc;
		if (fill(cookie, name, &st))
			break;
	}
	return 0;
}

void tree_dir_close(struct tree_dir *d)
{
	if (!d)
		return;
	view_close(&d->v);
	buf_release(&d->names);
	free(d->off);
	free(d->path);
	free(d);
}

int tree_delete_node(struct stfs *fs, struct catalog *cat,
		     struct engine_snap *snap, int64_t now_ms, const char *path,
		     struct del_node *out)
{
	struct view v = {.fs = fs, .cat = cat, .snap = snap, .now_ms = now_ms};
	struct node n;
	int rc = tree_resolve(&v, path, &n);

	if (rc)
		return rc;
	memset(out, 0, sizeof(*out));
	out->cj = n.job.cj;
	out->pipe = n.pipe;
	out->ckpt = n.ckpt;
	out->obj = n.obj;
	out->group = n.group;
	snprintf(out->sub, sizeof(out->sub), "%s", n.sub);
	switch (n.kind) {
	case ND_OBJ:
		out->kind = DK_OBJ;
		break;
	case ND_PSEUDO:
	case ND_LINK:
		out->kind = DK_FILE;
		break;
	case ND_JOB:
		out->kind = DK_JOB;
		break;
	case ND_PIPES:
		out->kind = DK_PIPES;
		break;
	case ND_PIPE:
	case ND_CKPTS:
		out->kind = DK_PIPE;
		break;
	case ND_CKPT:
		out->kind = DK_CKPT;
		break;
	case ND_SPS:
		out->kind = DK_SPS;
		break;
	case ND_OTHER:
		out->kind = DK_OTHER;
		break;
	case ND_SUBDIR:
		out->kind = DK_SUBDIR;
		break;
	default:
		out->kind = DK_DIR;
		break;
	}
	return 0;
}
