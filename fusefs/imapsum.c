#include "imapsum.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protostuff.h"
#include "textesc.h"

struct region {
	char name[256];
	uint8_t *data;
	size_t len;
	size_t files;
	int64_t mtime_ns; /* newest mtime of its WAL files */
};

struct wal_file {
	char *name; /* below the map directory */
	uint64_t size;
	int64_t mtime_ns;
};

struct walk {
	struct wal_file *files;
	size_t n_files, cap_files;
	struct region *regions;
	size_t n, cap;
	uint64_t total;
	int err;
};

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

	if (!is_wal(name) || a->type != BE_FILE)
		return 0;
	if (w->total + a->size > IMAPSUM_MAX_BYTES) {
		w->err = -EFBIG;
		return 1;
	}
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

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct wal_file *)a)->name,
		      ((const struct wal_file *)b)->name);
}

/* Read every collected file into its region, in name order. */
static int read_regions(struct walk *w, struct backend *be, const char *mapdir)
{
	char path[2048];

	qsort(w->files, w->n_files, sizeof(*w->files), cmp_file);
	for (size_t i = 0; i < w->n_files; i++) {
		const char *name = w->files[i].name, *slash = strchr(name, '/');
		struct region *r;
		uint8_t *p;
		ssize_t got;

		/* the region is the first directory below the map */
		r = region_of(w, name, slash ? (size_t)(slash - name) : 0);
		if (!r)
			return -ENOMEM;
		p = realloc(r->data, r->len + w->files[i].size + 1);
		if (!p)
			return -ENOMEM;
		r->data = p;
		snprintf(path, sizeof(path), "%s/%s", mapdir, name);
		got = w->files[i].size ? be_read(be, path, p + r->len,
						 w->files[i].size, 0)
				       : 0;
		if (got < 0)
			return (int)got;
		r->len += (size_t)got;
		if (r->files == 0 || w->files[i].mtime_ns > r->mtime_ns)
			r->mtime_ns = w->files[i].mtime_ns;
		r->files++;
	}
	return 0;
}

static int cmp_region(const void *a, const void *b)
{
	return strcmp(((const struct region *)a)->name,
		      ((const struct region *)b)->name);
}

/*
 * Verdicts (README "imap/").  A region the engine may still append to is
 * never called removable: the engine keeps one region per map and member
 * start open for appends (created empty on HDFS/local), its name is a
 * System.nanoTime() value (no order across restarts), and a running
 * member's region can hold nothing but superseded records.
 */
enum verdict {
	V_LIVE,	   /* holds a record the engine would read back */
	V_EMPTY,   /* no bytes: a member created it and appends to it */
	V_NEWEST,  /* newest mtime of the map: the latest start's region */
	V_RECENT,  /* written within the grace period */
	V_KEEP,	   /* superseded, but the engine runs (or may): keep */
	V_STOPPED, /* superseded; removable once every member is stopped */
};

static const char *const verdict_text[] = {
	[V_LIVE] = "live",
	[V_EMPTY] = "live (empty: a member appends here)",
	[V_NEWEST] = "live (newest region: a member may append)",
	[V_RECENT] = "live (written within imap_grace)",
	[V_KEEP] = "superseded (keep: the engine runs, a member may append)",
	[V_STOPPED] = "superseded (removable once every member is stopped)",
};

static enum verdict verdict_of(const struct region *r, bool superseded,
			       int64_t newest_ns, const struct imapsum_opts *o)
{
	if (!superseded)
		return V_LIVE;
	if (r->len == 0)
		return V_EMPTY;
	if (r->mtime_ns >= newest_ns)
		return V_NEWEST;
	if (r->mtime_ns > o->now_ns - o->grace_ns)
		return V_RECENT;
	if (o->engine != IMAPSUM_ENGINE_DOWN)
		return V_KEEP;
	return V_STOPPED;
}

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int imapsum_render(struct backend *be, const char *mapdir,
		   const struct imapsum_opts *opts, struct buf *out)
{
	struct imapsum_opts o = {
		.grace_ns = (int64_t)IMAPSUM_GRACE_S * 1000000000,
		.engine = IMAPSUM_ENGINE_UNKNOWN,
	};
	struct walk w = {0};
	int64_t newest_ns = INT64_MIN;
	uint64_t n_sup = 0;
	enum verdict *ver = NULL;
	struct wal_summary s;
	const uint8_t **files = NULL;
	size_t *lens = NULL;
	bool *sup = NULL;
	const char *map = strrchr(mapdir, '/');
	int rc;

	if (opts)
		o = *opts;
	if (!o.now_ns)
		o.now_ns = wall_ns();
	rc = be_list(be, mapdir, BE_LIST_RECURSIVE, walk_fill, &w);
	if (rc == 0)
		rc = w.err;
	if (rc == 0)
		rc = read_regions(&w, be, mapdir);
	/* map and region names are directory names: escaped (textesc.h) */
	buf_printf(out, "%-13s", "map");
	textesc_puts(out, map ? map + 1 : mapdir);
	buf_puts(out, "\n");
	if (rc == -EFBIG) {
		rc = buf_printf(out,
				"%-13smore than %" PRIu64
				" bytes of WAL: too large to decode here\n",
				"summary", IMAPSUM_MAX_BYTES);
		goto out;
	}
	if (rc)
		goto out;
	qsort(w.regions, w.n, sizeof(*w.regions), cmp_region);
	files = calloc(w.n + 1, sizeof(*files));
	lens = calloc(w.n + 1, sizeof(*lens));
	sup = calloc(w.n + 1, sizeof(*sup));
	ver = calloc(w.n + 1, sizeof(*ver));
	if (!files || !lens || !sup || !ver) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < w.n; i++) {
		files[i] = w.regions[i].data;
		lens[i] = w.regions[i].len;
	}
	rc = wal_summarize(files, lens, w.n, &s, sup);
	if (rc)
		goto out;
	for (size_t i = 0; i < w.n; i++)
		if (w.regions[i].mtime_ns > newest_ns)
			newest_ns = w.regions[i].mtime_ns;
	for (size_t i = 0; i < w.n; i++) {
		ver[i] = verdict_of(&w.regions[i], sup[i], newest_ns, &o);
		n_sup += ver[i] == V_KEEP || ver[i] == V_STOPPED;
	}
	buf_printf(out, "%-13s%zu\n", "regions", w.n);
	buf_printf(out, "%-13s%" PRIu64 "\n", "records", s.records);
	buf_printf(out, "%-13s%" PRIu64 "\n", "keys", s.keys);
	buf_printf(out, "%-13s%" PRIu64 "\n", "live_keys", s.live_keys);
	buf_printf(out, "%-13s%" PRIu64 "\n", "tombstones", s.tombstones);
	buf_printf(out, "%-13s%" PRIu64 "\n", "bad_records", s.bad);
	buf_printf(out, "%-13s%" PRIu64 "\n", "bytes", s.total_bytes);
	buf_printf(out, "%-13s%" PRIu64 "\n", "live_bytes", s.live_bytes);
	buf_printf(out, "%-13s%" PRIu64 "\n", "reclaimable", s.reclaim_bytes);
	buf_printf(out, "%-13s%" PRIu64 "\n", "superseded", n_sup);
	buf_printf(out, "\n%-24s %-6s %-12s %s\n", "region", "files", "bytes",
		   "verdict");
	for (size_t i = 0; i < w.n; i++) {
		size_t mark = out->len;

		textesc_puts(out,
			     w.regions[i].name[0] ? w.regions[i].name : ".");
		buf_printf(out, "%*s %-6zu %-12zu %s\n",
			   out->len - mark < 24 ? (int)(24 - (out->len - mark))
						: 0,
			   "", w.regions[i].files, w.regions[i].len,
			   verdict_text[ver[i]]);
	}
out:
	for (size_t i = 0; i < w.n_files; i++)
		free(w.files[i].name);
	free(w.files);
	for (size_t i = 0; i < w.n; i++)
		free(w.regions[i].data);
	free(w.regions);
	free(files);
	free(lens);
	free(sup);
	free(ver);
	return rc;
}
