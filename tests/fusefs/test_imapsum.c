/*
 * test_imapsum — the IMap map summary over a fake backend holding WAL
 * regions built from the real protostuff fixtures.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakes/fake_backend.h"
#include "fakes/testutil.h"
#include "policy/imapsum.h"
#include "model/protostuff.h"
#include "mount/mount.h"
#include "conf/conf.h"

#define FIX "tests/fixtures/protostuff/"

static uint8_t *load(const char *name, size_t *len)
{
	char *data = NULL;

	assert_int_equal(tu_load("", name, &data, len), 0);
	return (uint8_t *)data;
}

static int second_record(void *cookie, const struct wal_record *rec)
{
	uint64_t *off = cookie;

	if (rec->offset > 0) {
		*off = rec->offset;
		return 1;
	}
	return 0;
}

static void render_o(struct backend *be, const char *map,
		     const struct imapsum_opts *o, char *out, size_t outsz)
{
	struct buf b;

	buf_init(&b, 1 << 20);
	assert_int_equal(imapsum_render(be, map, o, &b), 0);
	assert_non_null(b.data);
	snprintf(out, outsz, "%s", b.data);
	buf_release(&b);
}

static void render(struct backend *be, const char *map, char *out, size_t outsz)
{
	render_o(be, map, NULL, out, outsz);
}

#define NS   1000000000LL
#define NOW  (1800000000LL * NS)
#define HOUR (3600LL * NS)

/* the fixture split in two: *old holds the live record, the rest its
 * newer tombstone */
static uint8_t *split_wal(size_t *len, uint64_t *off)
{
	uint8_t *wal = load(FIX "wal_live_and_tombstone.wal", len);

	*off = 0;
	assert_int_equal(wal_walk(wal, *len, second_record, off, NULL, NULL),
			 0);
	assert_true(*off > 0 && *off < *len);
	return wal;
}

static void test_imapsum_old_region_superseded(void **state)
{
	struct backend *be;
	uint8_t *wal;
	size_t len;
	uint64_t off = 0;
	char out[4096];

	(void)state;
	wal = load(FIX "wal_live_and_tombstone.wal", &len);
	assert_int_equal(wal_walk(wal, len, second_record, &off, NULL, NULL),
			 0);
	assert_true(off > 0 && off < len);
	assert_int_equal(fake_be_open(&be), 0);
	/* region 100 holds the live record, region 200 its newer tombstone */
	assert_int_equal(
		fake_be_add(be, "seatunnel/m/100/wal.txt", wal, off, 1), 0);
	assert_int_equal(fake_be_add(be, "seatunnel/m/200/wal.txt", wal + off,
				     len - off, 2),
			 0);
	render(be, "seatunnel/m", out, sizeof(out));
	assert_non_null(strstr(out, "map          m\n"));
	assert_non_null(strstr(out, "regions      2\n"));
	assert_non_null(strstr(out, "records      2\n"));
	assert_non_null(strstr(out, "live_keys    0\n"));
	assert_non_null(strstr(out, "tombstones   1\n"));
	assert_non_null(strstr(out, "superseded   1\n"));
	assert_non_null(strstr(out, "\n100 "));
	/* no engine to ask: a superseded region is kept */
	assert_non_null(strstr(
		out, "EAGAIN (superseded, but the engine cannot be asked)\n"));
	assert_null(strstr(out, "removable"));
	assert_non_null(strstr(out, "\n200 "));
	be_close(be);
	free(wal);
}

static void test_imapsum_unrelated_regions_both_live(void **state)
{
	struct backend *be;
	uint8_t *a, *b;
	size_t la, lb;
	char out[4096];

	(void)state;
	a = load(FIX "wal_live_and_tombstone.wal", &la);
	b = load(FIX "wal_checkpoint_id_map.wal", &lb);
	assert_int_equal(fake_be_open(&be), 0);
	assert_int_equal(fake_be_add(be, "c/m/1/wal.txt", a, la, 1), 0);
	assert_int_equal(fake_be_add(be, "c/m/2/1_wal.txt", b, lb, 1), 0);
	assert_int_equal(fake_be_add(be, "c/m/2/notes.md", "x", 1, 1), 0);
	render(be, "c/m", out, sizeof(out));
	/* 2 records of one key + 3 of another; both keys end in a tombstone */
	assert_non_null(strstr(out, "records      5\n"));
	assert_non_null(strstr(out, "keys         2\n"));
	assert_non_null(strstr(out, "live_keys    0\n"));
	assert_non_null(strstr(out, "tombstones   2\n"));
	assert_non_null(strstr(out, "superseded   0\n"));
	be_close(be);
	free(a);
	free(b);
}

/* Two halves of one WAL (a live record, then its newer tombstone) and an
 * engine that does not answer, at NOW with a one-hour grace. */
struct fx {
	struct backend *be;
	uint8_t *wal;
	size_t len;
	uint64_t off;
	struct imapsum_opts o;
	char out[4096];
};

static void fx_open(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	f->wal = split_wal(&f->len, &f->off);
	assert_int_equal(fake_be_open(&f->be), 0);
	f->o = (struct imapsum_opts){
		.now_ns = NOW, .grace_ns = HOUR, .engine = RE_STOPPED};
}

/* Region `path` holding part `which` of the WAL: 0 the live record, 1 the
 * tombstone, 2 nothing. */
static void fx_add(struct fx *f, const char *path, int which, int64_t mtime)
{
	const uint8_t *p = which == 1 ? f->wal + f->off : f->wal;
	size_t n = which == 0 ? f->off : which == 1 ? f->len - f->off : 0;

	assert_int_equal(fake_be_add(f->be, path, p, n, mtime), 0);
}

static const char *fx_render(struct fx *f)
{
	render_o(f->be, "c/m", &f->o, f->out, sizeof(f->out));
	return f->out;
}

static void fx_close(struct fx *f)
{
	be_close(f->be);
	free(f->wal);
}

/* Issue 8 item 4: the engine creates an empty wal.txt at every start and
 * appends to it; an empty region is never removable. */
static void test_imapsum_empty_region_is_live(void **state)
{
	struct fx f;
	const char *out;

	(void)state;
	fx_open(&f);
	assert_int_equal(fake_be_add(f.be, "c/m/100/wal.txt", f.wal, f.len,
				     NOW - 5 * HOUR),
			 0);
	/* a member started, created its region, has written nothing yet */
	fx_add(&f, "c/m/700/wal.txt", 2, NOW - 3 * HOUR);
	out = fx_render(&f);
	assert_non_null(strstr(out, "regions      2\n"));
	assert_non_null(strstr(out, "superseded   0\n"));
	assert_non_null(strstr(out, "\n700 "));
	assert_non_null(strstr(out, "EBUSY (empty: a member appends here)\n"));
	assert_null(strstr(out, "removable"));
	fx_close(&f);
}

/* Region names are nanoTime values, not chronological across restarts:
 * the newest region is the one whose files were written last, and it is
 * live even when all its records are superseded. */
static void test_imapsum_newest_by_mtime_is_live(void **state)
{
	struct fx f;
	const char *out;

	(void)state;
	fx_open(&f);
	/* "900" holds the older (superseded) record but was written last:
	 * the newest start, whatever its nanoTime name says */
	fx_add(&f, "c/m/900/wal.txt", 0, NOW - 2 * HOUR);
	fx_add(&f, "c/m/050/wal.txt", 1, NOW - 4 * HOUR);
	out = fx_render(&f);
	assert_non_null(strstr(out, "superseded   0\n"));
	assert_non_null(strstr(out, "\n900 "));
	assert_non_null(
		strstr(out, "EBUSY (newest region: a member may append)\n"));
	assert_null(strstr(out, "removable"));
	fx_close(&f);
}

/* Every region written within the grace period is live; older superseded
 * ones are kept while the engine answers and only called removable (once
 * every member is stopped) when it does not. */
static void test_imapsum_grace_and_engine_state(void **state)
{
	struct fx f;
	const char *out;

	(void)state;
	fx_open(&f);
	/* 100: the live record, superseded by 200's tombstone; 300 newest */
	fx_add(&f, "c/m/100/wal.txt", 0, NOW - 30 * 60 * NS);
	fx_add(&f, "c/m/200/wal.txt", 1, NOW - 20 * 60 * NS);
	fx_add(&f, "c/m/300/wal.txt", 2, NOW - 10 * 60 * NS);
	out = fx_render(&f);
	assert_non_null(strstr(out, "EBUSY (written within imap_grace)\n200 "));
	assert_non_null(strstr(out, "superseded   0\n"));

	/* two hours later: 100 is old enough */
	f.o.now_ns = NOW + 2 * HOUR;
	out = fx_render(&f);
	assert_non_null(strstr(out, "superseded   1\n"));
	assert_non_null(strstr(
		out,
		"removable (superseded and every member is stopped)\n200 "));
	assert_non_null(strstr(out, "reclaim_now  "));
	/* the engine answers: any member may still append to it */
	f.o.engine = RE_UP;
	out = fx_render(&f);
	assert_non_null(strstr(out, "superseded   1\n"));
	assert_non_null(strstr(
		out,
		"EBUSY (superseded, but the engine runs: a member may append)\n200 "));
	assert_null(strstr(out, "removable"));
	f.o.engine = RE_UNKNOWN;
	out = fx_render(&f);
	assert_null(strstr(out, "removable"));
	fx_close(&f);
}

/* Issue 12 item 2: each WAL file is parsed on its own, as the engine's
 * reader does: a truncated tail in 1_wal.txt does not swallow the start of
 * 2_wal.txt (the files were concatenated before). */
static void test_imapsum_files_parsed_each_on_own(void **state)
{
	struct backend *be;
	uint8_t *wal, *cut;
	size_t len;
	uint64_t off = 0;
	char out[4096];

	(void)state;
	wal = split_wal(&len, &off);
	cut = malloc(off + 20);
	assert_non_null(cut);
	memcpy(cut, wal, off);
	memcpy(cut + off, wal + off, 20); /* a torn second record */
	assert_int_equal(fake_be_open(&be), 0);
	assert_int_equal(fake_be_add(be, "c/m/5/1_wal.txt", cut, off + 20, 1),
			 0);
	assert_int_equal(
		fake_be_add(be, "c/m/5/2_wal.txt", wal + off, len - off, 2), 0);
	render(be, "c/m", out, sizeof(out));
	assert_non_null(strstr(out, "records      2\n"));
	assert_non_null(strstr(out, "tombstones   1\n"));
	assert_non_null(strstr(out, "live_keys    0\n"));
	be_close(be);
	free(cut);
	free(wal);
}

/* <N>_wal.txt order numerically: 10_wal.txt was written after 2_wal.txt,
 * so on a same-millisecond tie its tombstone is the later record (and the
 * tie is flagged: the engine's own order is undefined there). */
static void test_imapsum_numeric_file_order_and_ties(void **state)
{
	struct backend *be;
	uint8_t *wal, *live;
	size_t len;
	uint64_t off = 0;
	char out[4096];
	struct wal_record last = {0};
	size_t k;

	(void)state;
	wal = split_wal(&len, &off);
	live = malloc(off);
	assert_non_null(live);
	memcpy(live, wal, off);
	/* give the live record the tombstone's timestamp (same varint
	 * length: both are 41-bit millisecond values) */
	assert_int_equal(wal_walk(wal + off, len - off, NULL, NULL, NULL, NULL),
			 0);
	for (k = len - 1; k > off && wal[k - 1] != 0x30; k--)
		;
	assert_true(k > off);
	memcpy(live + off - (len - k), wal + k, len - k);
	(void)last;
	assert_int_equal(fake_be_open(&be), 0);
	assert_int_equal(fake_be_add(be, "c/m/5/2_wal.txt", live, off, 1), 0);
	assert_int_equal(
		fake_be_add(be, "c/m/5/10_wal.txt", wal + off, len - off, 2),
		0);
	render(be, "c/m", out, sizeof(out));
	assert_non_null(strstr(out, "records      2\n"));
	assert_non_null(strstr(out, "live_keys    0\n"));
	assert_non_null(strstr(out, "ties         1\n"));
	be_close(be);
	free(live);
	free(wal);
}

/* Header bytes 4..11 are ignored by the reader. */
static void test_imapsum_header_bytes_ignored(void **state)
{
	struct backend *be;
	uint8_t *wal;
	size_t len;
	char out[4096];

	(void)state;
	wal = load(FIX "wal_live_and_tombstone.wal", &len);
	wal[5] = 0xee;
	assert_int_equal(fake_be_open(&be), 0);
	assert_int_equal(fake_be_add(be, "c/m/5/wal.txt", wal, len, 1), 0);
	render(be, "c/m", out, sizeof(out));
	assert_non_null(strstr(out, "records      2\n"));
	be_close(be);
	free(wal);
}

/* A negative length makes the engine's whole load fail: a verdict, not a
 * live-key count the engine could never reach. */
static void test_imapsum_load_fails_verdict(void **state)
{
	struct backend *be;
	uint8_t *wal;
	size_t len;
	uint64_t off = 0;
	char out[4096];

	(void)state;
	wal = split_wal(&len, &off);
	wal[off + 3] = 0x80;
	assert_int_equal(fake_be_open(&be), 0);
	assert_int_equal(fake_be_add(be, "c/m/1/wal.txt", wal, off, 1), 0);
	assert_int_equal(fake_be_add(be, "c/m/7/wal.txt", wal, len, 1), 0);
	render(be, "c/m", out, sizeof(out));
	{
		char want[160];

		snprintf(want, sizeof(want),
			 "the engine would fail to load this map: negative "
			 "record length, at file 7/wal.txt offset %llu\n",
			 (unsigned long long)off);
		assert_non_null(strstr(out, want));
	}
	assert_null(strstr(out, "live_keys"));
	be_close(be);
	free(wal);
}

/* rm's decision (imapsum_region_decide) is the summary's verdict, for
 * every region, engine state, mount flag and caller. */
static void test_imapsum_rm_decision_is_the_verdict(void **state)
{
	static const char *const names[] = {"100", "200", "300", "400"};
	struct fx f;

	(void)state;
	fx_open(&f);
	fx_add(&f, "c/m/100/wal.txt", 0, NOW - 3 * HOUR);
	fx_add(&f, "c/m/200/wal.txt", 1, NOW - 2 * HOUR);
	fx_add(&f, "c/m/300/wal.txt", 2, NOW - 10 * 60 * NS);
	fx_add(&f, "c/m/400/wal.txt", 0, NOW - 4 * HOUR);
	for (int e = RE_UNKNOWN; e <= RE_STOPPED; e++) {
		for (int flags = 0; flags < 4; flags++) {
			const char *out;

			f.o.engine = (enum region_engine)e;
			f.o.ro = flags & 1;
			f.o.caller_denied = flags & 2;
			out = fx_render(&f);
			for (size_t i = 0; i < 4; i++) {
				struct rule_result r;
				char want[64];
				const char *line;

				assert_int_equal(imapsum_region_decide(
							 f.be, "c/m", names[i],
							 &f.o, &r),
						 0);
				snprintf(want, sizeof(want), "\n%s ", names[i]);
				line = strstr(out, want);
				assert_non_null(line);
				line = strstr(line + 1,
					      r.err ? strerrorname_np(r.err)
						    : "removable");
				assert_non_null(line);
				assert_true(line < strchr(strstr(out, want) + 1,
							  '\n'));
			}
		}
	}
	{
		struct rule_result r;

		assert_int_equal(
			imapsum_region_decide(f.be, "c/m", "999", &f.o, &r),
			-ENOENT);
	}
	fx_close(&f);
}

/* Issue 13 item 3: the figures (stfs.prom) come from a cache keyed by the
 * map's listing: an unchanged map reads no WAL byte again, any change of
 * a file's size or mtime decodes afresh, and rm never uses the cache. */
static void test_imapsum_figures_cached_by_listing(void **state)
{
	struct fx f;
	struct imapsum_fig g;
	struct rule_result r;
	unsigned reads;

	(void)state;
	fx_open(&f);
	f.o.cache = pcache_new(60000);
	assert_non_null(f.o.cache);
	fx_add(&f, "c/m/100/wal.txt", 0, NOW - 3 * HOUR); /* superseded */
	fx_add(&f, "c/m/200/wal.txt", 1, NOW - 2 * HOUR); /* keeps tombstone */
	assert_int_equal(imapsum_figures(f.be, "c/m", &f.o, &g), 0);
	assert_int_equal(g.regions, 2);
	assert_int_equal(g.bytes, f.len);
	assert_int_equal(g.reclaim_bytes, f.off); /* 100, engine stopped */
	assert_int_equal(g.superseded, 1);
	assert_int_equal(g.superseded_bytes, f.off);
	assert_int_equal(g.by_verdict[0], 1); /* removable */
	assert_int_equal(g.by_verdict[1], 1); /* EPERM */
	reads = fake_be_calls(f.be, FAKE_READ);
	assert_true(reads > 0);

	/* again, and the summary too: no read */
	assert_int_equal(imapsum_figures(f.be, "c/m", &f.o, &g), 0);
	assert_int_equal(g.reclaim_bytes, f.off);
	fx_render(&f);
	assert_non_null(strstr(f.out, "reclaim_now  "));
	assert_int_equal(fake_be_calls(f.be, FAKE_READ), reads);
	/* verdicts are not cached: the engine answers, nothing removable */
	f.o.engine = RE_UP;
	assert_int_equal(imapsum_figures(f.be, "c/m", &f.o, &g), 0);
	assert_int_equal(g.reclaim_bytes, 0);
	assert_int_equal(g.by_verdict[2], 1); /* EBUSY */
	assert_int_equal(fake_be_calls(f.be, FAKE_READ), reads);
	f.o.engine = RE_STOPPED;

	/* rm decides afresh */
	assert_int_equal(imapsum_region_decide(f.be, "c/m", "100", &f.o, &r),
			 0);
	assert_int_equal(r.err, 0);
	assert_true(fake_be_calls(f.be, FAKE_READ) > reads);
	reads = fake_be_calls(f.be, FAKE_READ);

	/* region 100 rewritten with the tombstone too (same mtime, another
	 * size): it now holds a record the reader keeps */
	assert_int_equal(fake_be_add(f.be, "c/m/100/wal.txt", f.wal, f.len,
				     NOW - 3 * HOUR),
			 0);
	assert_int_equal(imapsum_figures(f.be, "c/m", &f.o, &g), 0);
	assert_true(fake_be_calls(f.be, FAKE_READ) > reads);
	assert_int_equal(g.reclaim_bytes, 0);
	reads = fake_be_calls(f.be, FAKE_READ);
	/* only the mtime changes: decoded afresh as well */
	assert_int_equal(fake_be_add(f.be, "c/m/100/wal.txt", f.wal, f.len,
				     NOW - 3 * HOUR + 1),
			 0);
	assert_int_equal(imapsum_figures(f.be, "c/m", &f.o, &g), 0);
	assert_true(fake_be_calls(f.be, FAKE_READ) > reads);
	pcache_free(f.o.cache);
	fx_close(&f);
}

/* Issue 14 item 3: the decoded-map cache (fs->walsum) is capped by
 * walsum_max_entries and walsum_max_mb, set from the conf table by
 * stfs_init: past the cap the oldest map goes, the cache never holds more,
 * and a dropped map is decoded again to the same figures. */
static void test_imapsum_walsum_cache_capped(void **state)
{
	static const char *const maps[] = {"c/m0", "c/m1", "c/m2", "c/m3"};
	struct imapsum_fig g, first[4];
	struct pcache_stats ps;
	struct conf_err err;
	struct stfs fs;
	struct fx f;
	unsigned reads;
	char path[64];

	(void)state;
	fx_open(&f);
	memset(&fs, 0, sizeof(fs));
	assert_int_equal(conf_init_defaults(&fs.conf), 0);
	assert_int_equal(conf_set(&fs.conf, "walsum_max_entries", "2", &err),
			 0);
	assert_int_equal(stfs_init(&fs), 0);
	f.o.cache = fs.walsum;
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/100/wal.txt", maps[i]);
		fx_add(&f, path, 0, NOW - 3 * HOUR);
		snprintf(path, sizeof(path), "%s/200/wal.txt", maps[i]);
		fx_add(&f, path, 1, NOW - 2 * HOUR);
	}
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(
			imapsum_figures(f.be, maps[i], &f.o, &first[i]), 0);
		pcache_get_stats(fs.walsum, &ps);
		assert_true(ps.entries <= 2);
	}
	assert_true(ps.evictions >= 2);
	/* the newest map is still cached: no read */
	reads = fake_be_calls(f.be, FAKE_READ);
	assert_int_equal(imapsum_figures(f.be, maps[3], &f.o, &g), 0);
	assert_int_equal(fake_be_calls(f.be, FAKE_READ), reads);
	/* the oldest was dropped: decoded again, the same figures */
	assert_int_equal(imapsum_figures(f.be, maps[0], &f.o, &g), 0);
	assert_true(fake_be_calls(f.be, FAKE_READ) > reads);
	assert_int_equal(g.regions, first[0].regions);
	assert_int_equal(g.bytes, first[0].bytes);
	assert_int_equal(g.reclaim_bytes, first[0].reclaim_bytes);
	assert_int_equal(g.superseded, first[0].superseded);
	assert_int_equal(g.superseded_bytes, first[0].superseded_bytes);
	assert_int_equal(g.reclaim_bytes, f.off);
	pcache_get_stats(fs.walsum, &ps);
	assert_true(ps.entries <= 2);
	/* the byte cap: 1 MiB holds these small maps; the default is set */
	assert_true(conf_default_u("walsum_max_mb") > 0);
	stfs_release(&fs);
	conf_release(&fs.conf);
	fx_close(&f);
}

/* Issue 12 item 4: the documented layout, wal/<name>-<partition>.wal; each
 * partition file a region of its map, decided by the same rule. */
static void test_imapsum_documented_layout(void **state)
{
	struct fx f;
	struct rule_result r;
	struct be_attr a;
	size_t nl = 0;
	struct buf b;

	(void)state;
	assert_true(imapsum_doc_partition("engine_x-12.wal", &nl));
	assert_int_equal(nl, 8);
	assert_true(imapsum_doc_partition("a-b-0.wal", &nl));
	assert_int_equal(nl, 3);
	assert_false(imapsum_doc_partition("x-.wal", NULL));
	assert_false(imapsum_doc_partition("-1.wal", NULL));
	assert_false(imapsum_doc_partition("x-1a.wal", NULL));
	assert_false(imapsum_doc_partition("x-1.wal.txt", NULL));
	assert_false(imapsum_doc_partition("d/x-1.wal", NULL));
	fx_open(&f);
	fx_add(&f, "wal/m-0.wal", 0, NOW - 3 * HOUR);  /* superseded */
	fx_add(&f, "wal/m-1.wal", 1, NOW - 2 * HOUR);  /* the tombstone */
	fx_add(&f, "wal/mm-0.wal", 0, NOW - 3 * HOUR); /* another map */
	fx_add(&f, "wal/m-2.wal", 2, NOW - 2 * HOUR);  /* empty */
	assert_int_equal(imapsum_doc_stat(f.be, "wal", "m", &a), 0);
	assert_int_equal(a.size, f.len);
	assert_int_equal(a.mtime_ns, NOW - 2 * HOUR);
	assert_int_equal(imapsum_doc_stat(f.be, "wal", "zz", &a), -ENOENT);
	buf_init(&b, 1 << 20);
	assert_int_equal(imapsum_doc_render(f.be, "wal", "m", &f.o, &b), 0);
	assert_non_null(strstr(b.data, "regions      3\n"));
	assert_non_null(strstr(b.data, "records      2\n"));
	assert_non_null(strstr(b.data, "\nm-0.wal "));
	assert_null(strstr(b.data, "mm-0.wal"));
	buf_release(&b);
	assert_int_equal(imapsum_doc_decide(f.be, "wal", "m-0.wal", &f.o, &r),
			 0);
	assert_int_equal(r.err, 0);
	assert_int_equal(imapsum_doc_decide(f.be, "wal", "m-1.wal", &f.o, &r),
			 0);
	assert_int_equal(r.err, EPERM);
	assert_int_equal(imapsum_doc_decide(f.be, "wal", "m-2.wal", &f.o, &r),
			 0);
	assert_int_equal(r.err, EBUSY);
	/* mm-0 alone in its map: its record is the one the reader keeps */
	assert_int_equal(imapsum_doc_decide(f.be, "wal", "mm-0.wal", &f.o, &r),
			 0);
	assert_int_equal(r.err, EPERM);
	assert_int_equal(imapsum_doc_decide(f.be, "wal", "m-9.wal", &f.o, &r),
			 -ENOENT);
	assert_int_equal(imapsum_doc_decide(f.be, "wal", "junk", &f.o, &r),
			 -ENOENT);
	fx_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_imapsum_old_region_superseded),
		cmocka_unit_test(test_imapsum_unrelated_regions_both_live),
		cmocka_unit_test(test_imapsum_empty_region_is_live),
		cmocka_unit_test(test_imapsum_newest_by_mtime_is_live),
		cmocka_unit_test(test_imapsum_grace_and_engine_state),
		cmocka_unit_test(test_imapsum_files_parsed_each_on_own),
		cmocka_unit_test(test_imapsum_numeric_file_order_and_ties),
		cmocka_unit_test(test_imapsum_header_bytes_ignored),
		cmocka_unit_test(test_imapsum_load_fails_verdict),
		cmocka_unit_test(test_imapsum_rm_decision_is_the_verdict),
		cmocka_unit_test(test_imapsum_figures_cached_by_listing),
		cmocka_unit_test(test_imapsum_walsum_cache_capped),
		cmocka_unit_test(test_imapsum_documented_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
