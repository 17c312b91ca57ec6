/*
 * Fuzz the checkpoint decoders: the full decode, the head decode on every
 * prefix length the input suggests, and the JSON view.  Cross-checks: the
 * head decode of the whole input agrees with the full decode, and a JSON
 * view that succeeds is valid JSON.  The `info` summary, whole and in
 * small windows, must agree with itself and with the full decode's ids.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "model/protostuff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz_src {
	const uint8_t *p;
	size_t n;
};

/* windows copied out, so ASan sees a read past the object */
static ssize_t fz_read(void *cookie, void *buf, size_t len, uint64_t off)
{
	const struct fz_src *s = cookie;

	if (off >= s->n)
		return 0;
	if (len > s->n - off)
		len = (size_t)(s->n - off);
	memcpy(buf, s->p + off, len);
	return (ssize_t)len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pstuff_ckpt full, head;
	uint8_t tail[2] = {0, 0};
	struct buf b;
	int rc_full, rc;

	rc_full = pstuff_decode_ckpt(data, size, &full);
	if (size >= 2) {
		tail[0] = data[size - 2];
		tail[1] = data[size - 1];
	}
	/* heads of a few lengths, copied so ASan sees reads past them */
	for (size_t k = 0; k <= size; k += (k < 160 ? 1 : size / 8 + 1)) {
		uint8_t *h = malloc(k ? k : 1);

		if (!h)
			return 0;
		memcpy(h, data, k);
		rc = pstuff_decode_ckpt_head(h, k, tail, size, &head);
		if (k == size && rc != rc_full)
			abort();
		if (k == size && !rc && head.type != full.type)
			abort();
		free(h);
	}
	/* a head claiming a larger file than given */
	(void)pstuff_decode_ckpt_head(data, size, tail, (uint64_t)size + 1000,
				      &head);

	buf_init(&b, BUF_DEFAULT_MAX);
	rc = pstuff_ckpt_to_json(data, size, &b);
	if (!rc) {
		json_t *j = json_loadb(b.data, b.len, JSON_ALLOW_NUL, NULL);

		if (!j)
			abort();
		json_decref(j);
	}
	buf_release(&b);

	for (int bare = 0; bare < 2; bare++) {
		struct pstuff_summary s1, s2;
		struct fz_src src = {.p = data, .n = size};
		int r1 = pstuff_summarize_mem(data, size, bare, &s1);
		int r2 = pstuff_summarize(fz_read, &src, size, 64, bare, &s2);

		if (r1 != r2)
			abort();
		if (!r1 &&
		    (s1.n_actions != s2.n_actions || s1.n_stats != s2.n_stats ||
		     memcmp(&s1.ck, &s2.ck, sizeof(s1.ck)) != 0))
			abort();
		if (!r1 && !bare && !rc_full &&
		    (s1.ck.pipeline_id != full.pipeline_id ||
		     s1.ck.checkpoint_id != full.checkpoint_id))
			abort();
		pstuff_summary_free(&s1);
		pstuff_summary_free(&s2);
	}
	return 0;
}
