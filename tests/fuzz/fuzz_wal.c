/*
 * Fuzz the WAL walker and the multi-file summary.  The input is cut into up
 * to four "files" at the byte sequence "FILE"; each is copied to its own
 * allocation so ASan catches reads past any one of them; files 2 and 3
 * share a group (one region's 1_wal.txt and 2_wal.txt).  Cross-checks:
 * record and byte counts between wal_walk and wal_summarize, and a load
 * failure reported at the same file and offset by both.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/protostuff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILES 4

struct count {
	uint64_t n;
	uint64_t tomb;
};

static int count_rec(void *cookie, const struct wal_record *rec)
{
	struct count *c = cookie;
	volatile uint8_t sink = 0;

	c->n++;
	c->tomb += rec->deleted;
	/* touch every borrowed byte */
	for (size_t i = 0; i < rec->key_len; i++)
		sink ^= rec->key[i];
	for (size_t i = 0; i < rec->key_class_len; i++)
		sink ^= (uint8_t)rec->key_class[i];
	for (size_t i = 0; rec->value && i < rec->value_len; i++)
		sink ^= rec->value[i];
	for (size_t i = 0; rec->value_class && i < rec->value_class_len; i++)
		sink ^= (uint8_t)rec->value_class[i];
	(void)sink;
	return 0;
}

struct mem {
	uint8_t **files;
	size_t *lens;
};

static ssize_t mem_read(void *cookie, size_t f, void *buf, size_t len,
			uint64_t off)
{
	struct mem *m = cookie;

	if (off > m->lens[f] || len > m->lens[f] - off)
		abort(); /* the reader asks only for what exists */
	memcpy(buf, m->files[f] + off, len);
	return (ssize_t)len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *files[MAX_FILES] = {0};
	size_t lens[MAX_FILES] = {0};
	bool sup[MAX_FILES];
	struct wal_summary s;
	struct count total = {0};
	uint64_t tails = 0;
	const size_t group[MAX_FILES] = {0, 1, 2, 2};
	struct wal_fail fail = {0};
	size_t fail_file = 0;
	bool failed = false;
	size_t nf = 0, start = 0;

	while (nf < MAX_FILES) {
		const uint8_t *cut = NULL;
		size_t end;

		if (nf < MAX_FILES - 1 && size - start >= 4)
			cut = memmem(data + start, size - start, "FILE", 4);
		end = cut ? (size_t)(cut - data) : size;
		lens[nf] = end - start;
		files[nf] = malloc(lens[nf] ? lens[nf] : 1);
		if (!files[nf])
			goto out;
		memcpy(files[nf], data + start, lens[nf]);
		nf++;
		if (!cut)
			break;
		start = end + 4;
	}
	for (size_t i = 0; i < nf; i++) {
		uint64_t tail;
		struct wal_fail f = {0};
		int rc = wal_walk(files[i], lens[i], count_rec, &total, &tail,
				  &f);

		if (rc == 0) {
			if (tail > lens[i])
				abort();
			tails += tail;
		} else if (rc == -EBADMSG) {
			if (!failed) {
				failed = true;
				fail_file = i;
				fail = f;
			}
			if (f.offset + 12 >= lens[i] || !f.what)
				abort();
		} else {
			abort();
		}
	}
	if (wal_summarize((const uint8_t *const *)files, lens, group, nf, &s,
			  sup))
		goto out;
	if (s.failed != failed)
		abort();
	{
		/* the streaming form, in the smallest windows, agrees */
		struct wal_summary t;
		bool sup2[MAX_FILES];
		uint64_t sizes[MAX_FILES];
		struct mem m = {files, lens};

		for (size_t i = 0; i < nf; i++)
			sizes[i] = lens[i];
		if (wal_summarize_stream(mem_read, &m, sizes, group, nf, 1, &t,
					 sup2))
			abort();
		if (memcmp(&t.records, &s.records,
			   offsetof(struct wal_summary, failed)) ||
		    t.failed != s.failed ||
		    (t.failed && (t.fail_file != s.fail_file ||
				  t.fail.offset != s.fail.offset)))
			abort();
		for (size_t i = 0; i < nf; i++)
			if (sup2[i] != sup[i])
				abort();
	}
	if (failed) {
		if (s.fail_file != fail_file || s.fail.offset != fail.offset ||
		    strcmp(s.fail.what, fail.what) != 0 ||
		    s.superseded_files != 0)
			abort();
		goto out;
	}
	if (s.records != total.n || s.tombstones != total.tomb ||
	    s.tail_bytes != tails || s.live_keys + s.dead_keys != s.keys ||
	    s.keys > s.records || s.ties > s.keys ||
	    s.live_bytes > s.total_bytes ||
	    s.reclaim_bytes != s.total_bytes - s.live_bytes)
		abort();
out:
	for (size_t i = 0; i < nf; i++)
		free(files[i]);
	return 0;
}
