#include "policy/imapsum.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/protostuff.h"
#include "policy/rules.h"
#include "util/pcache.h"
#include "util/textesc.h"

struct region {
	char name[256];
	size_t len; /* bytes of all its WAL files */
	size_t files;
	int64_t mtime_ns; /* newest mtime of its WAL files */
	bool sup;	  /* every file of it superseded */
};

struct wal_file {
	char *name; /* below the map directory */
	uint64_t size;
	int64_t mtime_ns;
	size_t region; /* index into walk.regions */
};

static bool is_wal(const char *name);

struct walk {
	struct wal_file *files;
	size_t n_files, cap_files;
	struct region *regions;
	size_t n, cap;
	uint64_t total;
	int err;
	/* the documented layout (README "Layouts"): the map's name, its files
	 * are <doc>-<partition>.wal directly in the directory, each file its
	 * own region; NULL: the engine's <region>/wal.txt */
	const char *doc;
};

bool imapsum_doc_partition(const char *file, size_t *name_len)
{
	size_t n = strlen(file);
	const char *dash, *p;

	if (n < 6 || strcmp(file + n - 4, ".wal") != 0 || strchr(file, '/'))
		return false;
	dash = NULL;
	for (p = file + n - 5; p > file; p--)
		if (*p == '-') {
			dash = p;
			break;
		}
	if (!dash || dash == file + n - 5 + 1)
		return false;
	for (p = dash + 1; p < file + n - 4; p++)
		if (*p < '0' || *p > '9')
			return false;
	if (p == dash + 1)
		return false;
	if (name_len)
		*name_len = (size_t)(dash - file);
	return true;
}

/* Whether `name` is one of the map's WAL files. */
static bool is_map_file(const struct walk *w, const char *name)
{
	size_t nl;

	if (!w->doc)
		return is_wal(name);
	return imapsum_doc_partition(name, &nl) && nl == strlen(w->doc) &&
	       memcmp(name, w->doc, nl) == 0;
}

static bool is_wal(const char *name)
{
	size_t n = strlen(name);

	return n >= 7 && strcmp(name + n - 7, "wal.txt") == 0;
}

static struct region *region_of(struct walk *w, const char *name, size_t len)
{
	for (size_t i = 0; i < w->n; i++)
		if (strlen(w->regions[i].name) == len &&
		    memcmp(w->regions[i].name, name, len) == 0)
			return &w->regions[i];
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		struct region *r = realloc(w->regions, cap * sizeof(*r));

		if (!r)
			return NULL;
		w->regions = r;
		w->cap = cap;
	}
	memset(&w->regions[w->n], 0, sizeof(w->regions[0]));
	if (len >= sizeof(w->regions[0].name))
		len = sizeof(w->regions[0].name) - 1;
	memcpy(w->regions[w->n].name, name, len);
	return &w->regions[w->n++];
}

/* Collect the WAL files; they are read after the listing (a backend may
 * hold its own lock while it calls back). */
static int walk_fill(void *cookie, const char *name, const struct be_attr *a)
{
	struct walk *w = cookie;

	if (a->type != BE_FILE || !is_map_file(w, name))
		return 0;
	if (w->n_files == w->cap_files) {
		size_t cap = w->cap_files ? w->cap_files * 2 : 16;
		struct wal_file *f = realloc(w->files, cap * sizeof(*f));

		if (!f) {
			w->err = -ENOMEM;
			return 1;
		}
		w->files = f;
		w->cap_files = cap;
	}
	w->files[w->n_files].name = strdup(name);
	if (!w->files[w->n_files].name) {
		w->err = -ENOMEM;
		return 1;
	}
	w->files[w->n_files].mtime_ns = a->mtime_ns;
	w->files[w->n_files++].size = a->size;
	w->total += a->size;
	return 0;
}

/* The region of a file: the first directory below the map. */
static size_t region_len(const char *name)
{
	const char *slash = strchr(name, '/');

	return slash ? (size_t)(slash - name) : 0;
}

/* N of ".../<N>_wal.txt" (object stores), 0 for "wal.txt". */
static uint64_t wal_index(const char *name)
{
	const char *base = strrchr(name, '/');
	uint64_t v = 0;

	base = base ? base + 1 : name;
	for (; *base >= '0' && *base <= '9'; base++)
		v = v > UINT64_MAX / 10 - 1 ? UINT64_MAX
					    : v * 10 + (uint64_t)(*base - '0');
	return v;
}

/* Region, then N numerically (10_wal.txt after 2_wal.txt), then name. */
static int cmp_file(const void *a, const void *b)
{
	const char *x = ((const struct wal_file *)a)->name;
	const char *y = ((const struct wal_file *)b)->name;
	size_t lx = region_len(x), ly = region_len(y);
	int c = memcmp(x, y, lx < ly ? lx : ly);
	uint64_t nx, ny;

	if (c || lx != ly)
		return c ? c : lx < ly ? -1 : 1;
	nx = wal_index(x);
	ny = wal_index(y);
	if (nx != ny)
		return nx < ny ? -1 : 1;
	return strcmp(x, y);
}

/* Tie every collected file, in order, to its region; nothing is read
 * here: the summary streams each file on its own (the engine's reader
 * parses each file separately). */
static int read_regions(struct walk *w)
{
	qsort(w->files, w->n_files, sizeof(*w->files), cmp_file);
	for (size_t i = 0; i < w->n_files; i++) {
		struct wal_file *f = &w->files[i];
		struct region *r = region_of(w, f->name,
					     w->doc ? strlen(f->name)
						    : region_len(f->name));

		if (!r)
			return -ENOMEM;
		f->region = (size_t)(r - w->regions);
		r->len += f->size;
		if (r->files == 0 || f->mtime_ns > r->mtime_ns)
			r->mtime_ns = f->mtime_ns;
		r->files++;
	}
	return 0;
}

struct be_files {
	struct backend *be;
	const char *mapdir;
	const struct walk *w;
};

static ssize_t be_files_read(void *cookie, size_t f, void *buf, size_t len,
			     uint64_t off)
{
	const struct be_files *b = cookie;
	char path[2048];
	size_t done = 0;

	if (snprintf(path, sizeof(path), "%s/%s", b->mapdir,
		     b->w->files[f].name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	while (done < len) {
		ssize_t got = be_read(b->be, path, (uint8_t *)buf + done,
				      len - done, (off_t)(off + done));

		if (got < 0)
			return got;
		if (got == 0)
			return -EIO; /* shorter than listed */
		done += (size_t)got;
	}
	return (ssize_t)done;
}

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A decoded map: its files, regions and the reader's summary. */
struct mapsum {
	struct walk w;
	struct wal_summary s;
	int64_t newest_ns;
};

static void mapsum_free(struct mapsum *m)
{
	for (size_t i = 0; i < m->w.n_files; i++)
		free(m->w.files[i].name);
	free(m->w.files);
	free(m->w.regions);
}

/* The cache key of a decoded map: its directory and two 64-bit FNV-1a
 * hashes (different bases) of its sorted listing -- every WAL file's name,
 * size and mtime.  A file that grows, is rewritten, added or removed
 * changes the key, so a cached decode is never stale. */
static void cache_key(const char *mapdir, const char *doc, const struct walk *w,
		      char *key, size_t keysz)
{
	uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;

	for (size_t i = 0; i < w->n_files; i++) {
		char num[48];
		const char *parts[2] = {w->files[i].name, num};

		snprintf(num, sizeof(num), "/%" PRIu64 "/%" PRId64 "/",
			 w->files[i].size, w->files[i].mtime_ns);
		for (size_t k = 0; k < 2; k++)
			for (const char *c = parts[k]; *c; c++) {
				h1 = (h1 ^ (unsigned char)*c) *
				     0x100000001b3ULL;
				h2 = (h2 ^ (unsigned char)*c) *
				     0x100000001b3ULL;
			}
	}
	snprintf(key, keysz, "imapsum:%s\n%s\n%016" PRIx64 "%016" PRIx64 "/%zu",
		 mapdir, doc ? doc : "", h1, h2, w->n_files);
}

/* What decoding a map yields beyond its listing: the reader's summary and
 * one superseded flag per region, as stored in the cache. */
static size_t cached_len(const struct walk *w)
{
	return sizeof(struct wal_summary) + w->n;
}

static bool cache_get(struct pcache *pc, const char *key, struct mapsum *m)
{
	struct pc_entry *e = pcache_lookup(pc, key, 0); /* its TTL */
	bool hit = e && e->len == cached_len(&m->w);

	if (hit) {
		memcpy(&m->s, e->data, sizeof(m->s));
		for (size_t i = 0; i < m->w.n; i++)
			m->w.regions[i].sup = e->data[sizeof(m->s) + i] != 0;
	}
	pcache_put(e);
	return hit;
}

static void cache_set(struct pcache *pc, const char *key,
		      const struct mapsum *m)
{
	size_t len = cached_len(&m->w);
	char *data = malloc(len + 1);

	if (!data)
		return; /* only a cache */
	memcpy(data, &m->s, sizeof(m->s));
	for (size_t i = 0; i < m->w.n; i++)
		data[sizeof(m->s) + i] = m->w.regions[i].sup ? 1 : 0;
	data[len] = '\0';
	pcache_put(pcache_insert(pc, key, data, len, 0, 0));
}

/* Decode the WAL files of map `mapdir`: list them, then (unless `cache`
 * holds this very listing) stream every file through the reader. */
static int mapsum_load(struct backend *be, const char *mapdir, const char *doc,
		       struct pcache *cache, struct mapsum *m)
{
	struct be_files bf = {.be = be, .mapdir = mapdir, .w = &m->w};
	uint64_t *sizes = NULL;
	size_t *group = NULL;
	bool *sup = NULL;
	char key[2400];
	int rc;

	memset(m, 0, sizeof(*m));
	m->newest_ns = INT64_MIN;
	m->w.doc = doc;
	rc = be_list(be, mapdir, doc ? 0 : BE_LIST_RECURSIVE, walk_fill, &m->w);
	if (rc == 0)
		rc = m->w.err;
	if (rc == 0)
		rc = read_regions(&m->w);
	if (rc)
		return rc;
	for (size_t i = 0; i < m->w.n; i++)
		if (m->w.regions[i].mtime_ns > m->newest_ns)
			m->newest_ns = m->w.regions[i].mtime_ns;
	if (cache) {
		cache_key(mapdir, doc, &m->w, key, sizeof(key));
		if (cache_get(cache, key, m))
			return 0;
	}
	sizes = calloc(m->w.n_files + 1, sizeof(*sizes));
	group = calloc(m->w.n_files + 1, sizeof(*group));
	sup = calloc(m->w.n_files + 1, sizeof(*sup));
	if (!sizes || !group || !sup) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < m->w.n_files; i++) {
		sizes[i] = m->w.files[i].size;
		group[i] = m->w.files[i].region;
	}
	rc = wal_summarize_stream(be_files_read, &bf, sizes, group,
				  m->w.n_files, IMAPSUM_WINDOW, &m->s, sup);
	if (rc)
		goto out;
	for (size_t i = 0; i < m->w.n; i++)
		m->w.regions[i].sup = true;
	for (size_t i = 0; i < m->w.n_files; i++)
		if (!sup[i])
			m->w.regions[m->w.files[i].region].sup = false;
	if (cache)
		cache_set(cache, key, m);
out:
	free(sizes);
	free(group);
	free(sup);
	return rc;
}

/* The facts rules_decide_region() needs, for region r of map m. */
static void region_facts(const struct mapsum *m, const struct region *r,
			 const struct imapsum_opts *o, struct region_input *in)
{
	*in = (struct region_input){
		.ro = o->ro,
		.caller_allowed = !o->caller_denied,
		.load_fails = m->s.failed,
		.holds_kept = !r->sup,
		.empty = r->len == 0,
		.newest = r->mtime_ns >= m->newest_ns,
		.recent = r->mtime_ns > o->now_ns - o->grace_ns,
		.engine = o->engine,
	};
}

static struct imapsum_opts opts_of(const struct imapsum_opts *opts)
{
	struct imapsum_opts o = {
		.grace_ns = (int64_t)IMAPSUM_GRACE_S * 1000000000,
		.engine = RE_UNKNOWN,
	};

	if (opts)
		o = *opts;
	if (!o.now_ns)
		o.now_ns = wall_ns();
	return o;
}

static int decide_in(struct backend *be, const char *mapdir, const char *doc,
		     const char *region, const struct imapsum_opts *opts,
		     struct rule_result *out)
{
	struct imapsum_opts o = opts_of(opts);
	struct mapsum m;
	struct region_input in;
	int rc = mapsum_load(be, mapdir, doc, NULL, &m); /* rm: afresh */

	if (rc == 0) {
		rc = -ENOENT;
		for (size_t i = 0; i < m.w.n; i++) {
			if (strcmp(m.w.regions[i].name, region) != 0)
				continue;
			region_facts(&m, &m.w.regions[i], &o, &in);
			rules_decide_region(&in, out);
			rc = 0;
			break;
		}
	}
	mapsum_free(&m);
	return rc;
}

const char *const imapsum_verdicts[IMAPSUM_NV] = {
	"removable", "EPERM", "EBUSY", "EAGAIN", "EROFS", "EACCES",
};

static size_t verdict_index(int err)
{
	switch (err) {
	case 0:
		return 0;
	case EPERM:
		return 1;
	case EBUSY:
		return 2;
	case EAGAIN:
		return 3;
	case EROFS:
		return 4;
	default:
		return 5;
	}
}

/* Every region's verdict, added up: the one place the summary's
 * superseded/reclaim_now lines and the Prometheus series come from. */
static void mapsum_figures(const struct mapsum *m, const struct imapsum_opts *o,
			   struct imapsum_fig *fig)
{
	memset(fig, 0, sizeof(*fig));
	fig->regions = m->w.n;
	fig->bytes = m->w.total;
	fig->failed = m->s.failed;
	for (size_t i = 0; i < m->w.n; i++) {
		const struct region *r = &m->w.regions[i];
		struct region_input in;
		struct rule_result res;

		region_facts(m, r, o, &in);
		rules_decide_region(&in, &res);
		/* superseded and not live: what stopping the engine frees */
		if (!in.load_fails && !in.holds_kept && !in.empty &&
		    !in.newest && !in.recent) {
			fig->superseded++;
			fig->superseded_bytes += r->len;
		}
		if (res.err == 0)
			fig->reclaim_bytes += r->len;
		fig->by_verdict[verdict_index(res.err)]++;
	}
}

int imapsum_figures(struct backend *be, const char *mapdir,
		    const struct imapsum_opts *opts, struct imapsum_fig *out)
{
	struct imapsum_opts o = opts_of(opts);
	struct mapsum m;
	int rc = mapsum_load(be, mapdir, NULL, o.cache, &m);

	if (rc == 0)
		mapsum_figures(&m, &o, out);
	mapsum_free(&m);
	return rc;
}

static int render_in(struct backend *be, const char *mapdir, const char *doc,
		     const struct imapsum_opts *opts, struct buf *out)
{
	struct imapsum_opts o = opts_of(opts);
	struct mapsum m;
	const struct wal_summary *s = &m.s;
	struct imapsum_fig fig;
	const char *map = strrchr(mapdir, '/');
	int rc = mapsum_load(be, mapdir, doc, o.cache, &m);

	/* map and region names are directory names: escaped (textesc.h) */
	buf_printf(out, "%-13s", "map");
	textesc_puts(out, doc ? doc : map ? map + 1 : mapdir);
	buf_puts(out, "\n");
	if (doc)
		buf_printf(out, "%-13s%s\n", "layout",
			   "documented: <name>-<partition>.wal, each "
			   "partition file a region");
	if (rc)
		goto out;
	buf_printf(out, "%-13s%zu\n", "regions", m.w.n);
	if (s->failed) {
		const struct wal_file *f = &m.w.files[s->fail_file];

		buf_printf(
			out,
			"%-13sthe engine would fail to load this map: %s, at file ",
			"verdict", s->fail.what);
		textesc_puts(out, f->name);
		buf_printf(out, " offset %" PRIu64 "\n", s->fail.offset);
		buf_printf(out, "%-13s%" PRIu64 "\n", "bytes", s->total_bytes);
	} else {
		buf_printf(out, "%-13s%" PRIu64 "\n", "records", s->records);
		buf_printf(out, "%-13s%" PRIu64 "\n", "keys", s->keys);
		buf_printf(out, "%-13s%" PRIu64 "\n", "live_keys",
			   s->live_keys);
		buf_printf(out, "%-13s%" PRIu64 "\n", "tombstones",
			   s->tombstones);
		buf_printf(out, "%-13s%" PRIu64 "\n", "ties", s->ties);
		buf_printf(out, "%-13s%" PRIu64 "\n", "tail_bytes",
			   s->tail_bytes);
		buf_printf(out, "%-13s%" PRIu64 "\n", "bytes", s->total_bytes);
		buf_printf(out, "%-13s%" PRIu64 "\n", "live_bytes",
			   s->live_bytes);
		buf_printf(out, "%-13s%" PRIu64 "\n", "reclaimable",
			   s->reclaim_bytes);
	}
	mapsum_figures(&m, &o, &fig);
	buf_printf(out, "%-13s%" PRIu64 "\n", "superseded", fig.superseded);
	buf_printf(out, "%-13s%" PRIu64 "\n", "reclaim_now", fig.reclaim_bytes);
	buf_printf(out, "\n%-24s %-6s %-12s %s\n", "region", "files", "bytes",
		   "rm (verdict)");
	for (size_t i = 0; i < m.w.n; i++) {
		const struct region *r = &m.w.regions[i];
		size_t mark = out->len;
		struct region_input in;
		struct rule_result res;

		region_facts(&m, r, &o, &in);
		rules_decide_region(&in, &res);
		textesc_puts(out, r->name[0] ? r->name : ".");
		buf_printf(out, "%*s %-6zu %-12zu %s (%s)\n",
			   out->len - mark < 24 ? (int)(24 - (out->len - mark))
						: 0,
			   "", r->files, r->len,
			   res.err ? strerrorname_np(res.err) : "removable",
			   res.reason);
	}
	if (s->ties && !s->failed)
		buf_puts(out,
			 "\nties: keys whose newest records share a "
			 "timestamp and disagree; the engine's order is "
			 "undefined there (newer engines let the tombstone "
			 "win)\n");
out:
	mapsum_free(&m);
	return rc;
}

int imapsum_region_decide(struct backend *be, const char *mapdir,
			  const char *region, const struct imapsum_opts *opts,
			  struct rule_result *out)
{
	return decide_in(be, mapdir, NULL, region, opts, out);
}

int imapsum_render(struct backend *be, const char *mapdir,
		   const struct imapsum_opts *opts, struct buf *out)
{
	return render_in(be, mapdir, NULL, opts, out);
}

int imapsum_doc_render(struct backend *be, const char *waldir, const char *name,
		       const struct imapsum_opts *opts, struct buf *out)
{
	return render_in(be, waldir, name, opts, out);
}

int imapsum_doc_decide(struct backend *be, const char *waldir, const char *file,
		       const struct imapsum_opts *opts, struct rule_result *out)
{
	char name[256];
	size_t nl;

	if (!imapsum_doc_partition(file, &nl) || nl >= sizeof(name))
		return -ENOENT;
	memcpy(name, file, nl);
	name[nl] = '\0';
	return decide_in(be, waldir, name, file, opts, out);
}

int imapsum_doc_stat(struct backend *be, const char *waldir, const char *name,
		     struct be_attr *out)
{
	struct walk w = {.doc = name};
	int rc = be_list(be, waldir, 0, walk_fill, &w);

	if (rc == 0)
		rc = w.err;
	if (rc == 0 && w.n_files == 0)
		rc = -ENOENT;
	if (rc == 0) {
		memset(out, 0, sizeof(*out));
		out->type = BE_FILE;
		out->mtime_ns = INT64_MIN;
		for (size_t i = 0; i < w.n_files; i++) {
			out->size += w.files[i].size;
			if (w.files[i].mtime_ns > out->mtime_ns)
				out->mtime_ns = w.files[i].mtime_ns;
		}
	}
	for (size_t i = 0; i < w.n_files; i++)
		free(w.files[i].name);
	free(w.files);
	return rc;
}
