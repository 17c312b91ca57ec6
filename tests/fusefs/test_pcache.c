/*
 * test_pcache — the pseudo-file cache: what stat saw is what read gets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/pcache.h"

static char *dup_str(const char *s)
{
	char *p = strdup(s);

	assert_non_null(p);
	return p;
}

/* `n` bytes of `c`, NUL-terminated (malloc'd) */
static char *filled(size_t n, char c)
{
	char *p = malloc(n + 1);

	assert_non_null(p);
	memset(p, c, n);
	p[n] = '\0';
	return p;
}

static void test_pcache_insert_then_lookup(void **state)
{
	struct pcache *pc = pcache_new(10000);
	struct pc_entry *a, *b;

	(void)state;
	assert_non_null(pc);
	assert_null(pcache_lookup(pc, "/jobs/1/status", 0));
	a = pcache_insert(pc, "/jobs/1/status", dup_str("hello\n"), 6, 42, 0);
	assert_non_null(a);
	b = pcache_lookup(pc, "/jobs/1/status", 0);
	assert_ptr_equal(a, b);
	assert_int_equal(b->len, 6);
	assert_int_equal(b->mtime_s, 42);
	assert_string_equal(b->data, "hello\n");
	assert_null(pcache_lookup(pc, "/jobs/2/status", 0));
	assert_int_equal(pcache_count(pc), 1);
	pcache_put(a);
	pcache_put(b);
	pcache_free(pc);
}

static void test_pcache_first_render_wins(void **state)
{
	struct pcache *pc = pcache_new(10000);
	struct pc_entry *a, *b;

	(void)state;
	a = pcache_insert(pc, "/p", dup_str("first"), 5, 1, 0);
	/* a second thread that rendered meanwhile gets the first content,
	 * so every caller sees one size */
	b = pcache_insert(pc, "/p", dup_str("second!"), 7, 2, 0);
	assert_ptr_equal(a, b);
	assert_string_equal(b->data, "first");
	assert_int_equal(pcache_count(pc), 1);
	pcache_put(a);
	pcache_put(b);
	pcache_free(pc);
}

static void test_pcache_expiry_and_held_refs(void **state)
{
	struct pcache *pc = pcache_new(50);
	struct pc_entry *a, *b;

	(void)state;
	a = pcache_insert(pc, "/p", dup_str("old"), 3, 1, 0);
	usleep(80 * 1000);
	assert_null(pcache_lookup(pc, "/p", 0));
	b = pcache_insert(pc, "/p", dup_str("newer"), 5, 2, 0);
	assert_ptr_not_equal(a, b);
	/* an open file keeps its snapshot after expiry and replacement */
	assert_string_equal(a->data, "old");
	assert_string_equal(b->data, "newer");
	pcache_clear(pc);
	assert_int_equal(pcache_count(pc), 0);
	assert_string_equal(a->data, "old");
	pcache_put(a);
	pcache_put(b);
	pcache_free(pc);
}

/* cache_ttl=0: every entry is born expired; the sweep that every 8192nd
 * insert runs must not free the entry it is returning (a walker under
 * test_cloud.sh's cache_ttl=0 mount crashed the daemon there) */
static void test_pcache_zero_ttl_sweep_keeps_returned(void **state)
{
	struct pcache *pc = pcache_new(0);
	char path[32];

	(void)state;
	for (int i = 0; i < 3 * 8192; i++) {
		struct pc_entry *e;

		snprintf(path, sizeof(path), "/p/%d", i);
		e = pcache_insert(pc, path, dup_str("content"), 7, 1, 0);
		assert_non_null(e);
		assert_int_equal(e->len, 7);
		assert_memory_equal(e->data, "content", 7);
		assert_string_equal(e->path, path);
		pcache_put(e);
	}
	pcache_free(pc);
}

/* a versioned entry outlives the TTL and serves only its own version */
static void test_pcache_versions(void **state)
{
	struct pcache *pc = pcache_new(50);
	struct pc_entry *a, *b, *c;

	(void)state;
	a = pcache_insert(pc, "/p", dup_str("v7"), 2, 1, 7);
	assert_non_null(a);
	usleep(80 * 1000);
	b = pcache_lookup(pc, "/p", 7);
	assert_ptr_equal(a, b);
	pcache_put(b);
	assert_null(pcache_lookup(pc, "/p", 8));
	assert_null(pcache_lookup(pc, "/p", 0));
	/* a new version replaces the old one, which held refs keep */
	b = pcache_insert(pc, "/p", dup_str("v8!"), 3, 2, 8);
	assert_ptr_not_equal(a, b);
	assert_string_equal(b->data, "v8!");
	assert_string_equal(a->data, "v7");
	assert_null(pcache_lookup(pc, "/p", 7));
	c = pcache_lookup(pc, "/p", 8);
	assert_ptr_equal(b, c);
	assert_int_equal(pcache_count(pc), 1);
	pcache_put(a);
	pcache_put(b);
	pcache_put(c);
	/* an entry no cache holds */
	a = pcache_entry_new("/live", dup_str("now"), 3, 5);
	assert_non_null(a);
	assert_int_equal(a->len, 3);
	assert_null(pcache_lookup(pc, "/live", 0));
	pcache_put(a);
	pcache_free(pc);
}

/* An entry cap: the oldest go first, the newest keep their own content, a
 * held reference outlives its eviction, and evictions are counted. */
static void test_pcache_entry_cap_evicts_oldest(void **state)
{
	struct pcache *pc = pcache_new_capped(100000, 3, 0);
	struct pc_entry *held, *e;
	struct pcache_stats st;
	char path[32], body[32];

	(void)state;
	assert_non_null(pc);
	held = pcache_insert(pc, "/p/0", dup_str("body 0\n"), 7, 0, 0);
	assert_non_null(held);
	for (int i = 1; i < 6; i++) {
		snprintf(path, sizeof(path), "/p/%d", i);
		snprintf(body, sizeof(body), "body %d\n", i);
		pcache_put(pcache_insert(pc, path, dup_str(body), strlen(body),
					 0, 0));
	}
	assert_int_equal(pcache_count(pc), 3);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/p/%d", i);
		assert_null(pcache_lookup(pc, path, 0));
	}
	for (int i = 3; i < 6; i++) {
		snprintf(path, sizeof(path), "/p/%d", i);
		snprintf(body, sizeof(body), "body %d\n", i);
		e = pcache_lookup(pc, path, 0);
		assert_non_null(e);
		assert_string_equal(e->data, body);
		pcache_put(e);
	}
	/* the evicted entry an open file holds is intact */
	assert_string_equal(held->data, "body 0\n");
	pcache_get_stats(pc, &st);
	assert_int_equal(st.entries, 3);
	assert_int_equal(st.evictions, 3);
	/* evicted then rendered again: the new content, never the old */
	e = pcache_insert(pc, "/p/0", dup_str("body 0 again\n"), 13, 0, 0);
	assert_string_equal(e->data, "body 0 again\n");
	pcache_put(e);
	e = pcache_lookup(pc, "/p/0", 0);
	assert_non_null(e);
	assert_string_equal(e->data, "body 0 again\n");
	pcache_put(e);
	pcache_put(held);
	pcache_free(pc);
}

/* A byte cap: the cache never holds more than max_bytes; an entry larger
 * than the cap alone is served to its caller but not kept. */
static void test_pcache_byte_cap(void **state)
{
	struct pcache *pc = pcache_new_capped(100000, 0, 4096);
	struct pcache_stats st;
	struct pc_entry *big, *e;
	char path[32];

	(void)state;
	assert_non_null(pc);
	for (int i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "/b/%d", i);
		pcache_put(pcache_insert(pc, path,
					 filled(300, (char)('a' + i % 26)), 300,
					 0, 0));
		pcache_get_stats(pc, &st);
		assert_true(st.bytes <= 4096);
	}
	assert_true(st.entries >= 5 && st.entries < 14);
	assert_int_equal(st.evictions, 100 - st.entries);
	e = pcache_lookup(pc, "/b/99", 0);
	assert_non_null(e);
	assert_int_equal(e->data[0], 'a' + 99 % 26);
	pcache_put(e);
	assert_null(pcache_lookup(pc, "/b/0", 0));
	big = pcache_insert(pc, "/big", filled(10000, 'z'), 10000, 0, 0);
	assert_non_null(big);
	assert_int_equal(big->len, 10000);
	assert_int_equal(big->data[9999], 'z');
	pcache_get_stats(pc, &st);
	assert_true(st.bytes <= 4096);
	assert_null(pcache_lookup(pc, "/big", 0));
	/* an entry larger than the cap is handed out unstored: what the
	 * cache held stays (a 40 MB stfs.prom emptied it at every render) */
	e = pcache_lookup(pc, "/b/99", 0);
	assert_non_null(e);
	pcache_put(e);
	assert_int_equal(st.evictions, 100 - st.entries);
	pcache_put(big);
	pcache_free(pc);
}

/*
 * A walk over more files than the cap holds, in the same order twice (what
 * `du` does): the dear entries stored by the first pass are all hits in the
 * second, and so are the cheap ones stored while there was room; the other
 * cheap ones are not stored (an LRU alone would hit none).
 */
static void test_pcache_cheap_dropped_first(void **state)
{
	struct pcache *pc = pcache_new_capped(100000, 40, 0);
	struct pc_entry *e;
	char path[32];
	int hits = 0, cheap_hits = 0;

	(void)state;
	assert_non_null(pc);
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < 100; i++) {
			bool dear = i % 5 == 0; /* 20 dear, 80 cheap */

			snprintf(path, sizeof(path), "/w/%d", i);
			e = pcache_lookup(pc, path, 7);
			if (e && pass == 1 && dear)
				hits++;
			if (e && pass == 1 && !dear)
				cheap_hits++;
			if (!e && dear)
				e = pcache_insert(pc, path, dup_str("d"), 1, 0,
						  7);
			else if (!e)
				e = pcache_insert_cheap(pc, path, dup_str("c"),
							1, 0, 7);
			assert_non_null(e);
			assert_string_equal(e->data, dear ? "d" : "c");
			pcache_put(e);
			assert_true(pcache_count(pc) <= 40);
		}
	}
	assert_int_equal(hits, 20);
	/* the cheap ones stored while there was room stay and hit too */
	assert_int_equal(cheap_hits, 20);
	/* with only dear entries over the cap, the oldest of them go */
	for (int i = 0; i < 50; i++) {
		snprintf(path, sizeof(path), "/d/%d", i);
		pcache_put(pcache_insert(pc, path, dup_str("d"), 1, 0, 7));
	}
	assert_int_equal(pcache_count(pc), 40);
	assert_null(pcache_lookup(pc, "/d/0", 7));
	e = pcache_lookup(pc, "/d/49", 7);
	assert_non_null(e);
	pcache_put(e);
	pcache_free(pc);
}

/*
 * The size of a versioned entry whose text is not kept (no room for a cheap
 * one, or dropped by a cap) is still known for that version, so a stat of
 * an unchanged file renders nothing (README "Performance"); another version
 * is not answered, and the table's bytes count against the byte cap.
 */
static void test_pcache_sizes_outlive_text(void **state)
{
	struct pcache *pc = pcache_new_capped(100000, 2, 1 << 20);
	struct pcache_stats st;
	struct pc_entry *e;
	char path[32];
	size_t len = 0;
	int64_t mt = 0;

	(void)state;
	assert_non_null(pc);
	assert_false(pcache_lookup_size(pc, "/s/0", 7, &len, &mt));
	assert_int_equal(pcache_keep_sizes(pc, 64 << 10), 0);
	pcache_get_stats(pc, &st);
	assert_int_equal(st.bytes, 64 << 10); /* the table, charged */
	for (int i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "/s/%d", i);
		e = pcache_insert_cheap(pc, path, dup_str("abcdef"),
					(size_t)(i % 6 + 1), 1000 + i, 7);
		assert_non_null(e);
		pcache_put(e);
	}
	assert_int_equal(pcache_count(pc), 2);
	for (int i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "/s/%d", i);
		/* text kept (the first two) or not, the size is known */
		assert_true(pcache_lookup_size(pc, path, 7, &len, &mt));
		assert_int_equal(len, i % 6 + 1);
		assert_int_equal(mt, 1000 + i);
		/* for that version only */
		assert_false(pcache_lookup_size(pc, path, 8, &len, &mt));
		assert_false(pcache_lookup_size(pc, path, 0, &len, &mt));
	}
	pcache_get_stats(pc, &st);
	assert_int_equal(st.size_hits, 98);
	/* a cheap entry dropped by the cap leaves its size (the stored
	 * /s/0 goes for dear ones), a dear entry dropped leaves nothing (its
	 * next stat renders it again) */
	pcache_put(pcache_insert(pc, "/d/a", dup_str("xy"), 2, 5, 9));
	pcache_put(pcache_insert(pc, "/d/b", dup_str("xyz"), 3, 5, 9));
	pcache_put(pcache_insert(pc, "/d/c", dup_str("xyzw"), 4, 5, 9));
	assert_null(pcache_lookup(pc, "/s/0", 7));
	assert_true(pcache_lookup_size(pc, "/s/0", 7, &len, &mt));
	assert_int_equal(len, 1);
	assert_null(pcache_lookup(pc, "/d/a", 9));
	assert_false(pcache_lookup_size(pc, "/d/a", 9, &len, &mt));
	assert_true(pcache_lookup_size(pc, "/d/c", 9, &len, &mt));
	assert_int_equal(len, 4);
	/* cleared with the texts */
	pcache_clear(pc);
	assert_false(pcache_lookup_size(pc, "/d/c", 9, &len, &mt));
	assert_false(pcache_lookup_size(pc, "/s/50", 7, &len, &mt));
	pcache_free(pc);

	/* with a byte cap the table takes at most half of it, its bytes
	 * count, and an entry larger than what is left is served unstored,
	 * its size kept */
	pc = pcache_new_capped(100000, 0, 8192);
	assert_non_null(pc);
	/* at most half the cap */
	assert_int_equal(pcache_keep_sizes(pc, 1 << 20), 0);
	pcache_get_stats(pc, &st);
	assert_true(st.bytes > 0 && st.bytes <= 4096);
	for (int i = 0; i < 100; i++) {
		snprintf(path, sizeof(path), "/b/%d", i);
		pcache_put(
			pcache_insert(pc, path, filled(300, 'a'), 300, 0, 3));
		pcache_get_stats(pc, &st);
		assert_true(st.bytes <= 8192);
	}
	e = pcache_insert(pc, "/big", filled(6000, 'z'), 6000, 0, 3);
	assert_non_null(e);
	pcache_put(e);
	assert_null(pcache_lookup(pc, "/big", 3));
	assert_true(pcache_lookup_size(pc, "/big", 3, &len, &mt));
	assert_int_equal(len, 6000);
	pcache_free(pc);
}

static void test_pcache_hash_is_stable(void **state)
{
	(void)state;
	/* FNV-1a 64 of "" and "a": the inode numbers depend on it */
	assert_true(pcache_hash("") == 0xcbf29ce484222325ULL);
	assert_true(pcache_hash("a") == 0xaf63dc4c8601ec8cULL);
	assert_true(pcache_hash("/jobs/1") != pcache_hash("/jobs/2"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pcache_insert_then_lookup),
		cmocka_unit_test(test_pcache_first_render_wins),
		cmocka_unit_test(test_pcache_expiry_and_held_refs),
		cmocka_unit_test(test_pcache_versions),
		cmocka_unit_test(test_pcache_hash_is_stable),
		cmocka_unit_test(test_pcache_zero_ttl_sweep_keeps_returned),
		cmocka_unit_test(test_pcache_entry_cap_evicts_oldest),
		cmocka_unit_test(test_pcache_byte_cap),
		cmocka_unit_test(test_pcache_cheap_dropped_first),
		cmocka_unit_test(test_pcache_sizes_outlive_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
