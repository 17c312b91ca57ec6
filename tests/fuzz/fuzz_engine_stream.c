/*
 * libFuzzer target for the job list parsed as it arrives
 * (engine_list_stream_*, backends/engine_json.c): the bytes after the
 * first, fed in pieces whose size the first byte picks (after a false
 * start of a third of them when its top bit is set: a retried request),
 * must give what engine_parse_job_list gives for the whole text: both
 * fail, or both give the same jobs with the same texts and total.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct engine_job *wj = NULL, *sj = NULL;
	json_t *wr = NULL, *sr = NULL;
	struct engine_list_stream *ls = NULL;
	size_t wn = 0, sn = 0, chunk;
	long wt, st;
	char msg[200];
	int wrc, src = 0;

	if (size < 1)
		return 0;
	chunk = (data[0] & 0x7f) + 1u;
	wrc = engine_parse_job_list((const char *)data + 1, size - 1, false,
				    &wr, &wj, &wn, &wt, msg, sizeof(msg));
	if (engine_list_stream_new(false, &sr, &sj, &sn, NULL, 0, &ls))
		goto out;
	if (data[0] & 0x80) {
		(void)engine_list_stream_feed(ls, (const char *)data + 1,
					      (size - 1) / 3);
		engine_list_stream_reset(ls);
	}
	for (size_t o = 1; o < size && src == 0; o += chunk) {
		size_t k = chunk < size - o ? chunk : size - o;

		src = engine_list_stream_feed(ls, (const char *)data + o, k);
	}
	src = engine_list_stream_end(ls, &st, msg, sizeof(msg));
	if (src == -ENOMEM || wrc == -ENOMEM)
		goto out;
	if ((src == 0) != (wrc == 0))
		__builtin_trap();
	if (src && (sn || !msg[0]))
		__builtin_trap();
	if (src == 0 && (sn != wn || st != wt))
		__builtin_trap();
	for (size_t i = 0; src == 0 && i < sn; i++)
		if (strcmp(sj[i].id, wj[i].id) ||
		    sj[i].json_len != wj[i].json_len ||
		    memcmp(sj[i].json, wj[i].json, wj[i].json_len) ||
		    sj[i].digest != wj[i].digest)
			__builtin_trap();
out:
	engine_list_stream_free(ls);
	for (size_t i = 0; i < wn; i++)
		engine_job_clear(&wj[i]);
	for (size_t i = 0; i < sn; i++)
		engine_job_clear(&sj[i]);
	free(wj);
	free(sj);
	json_decref(wr);
	json_decref(sr);
	return 0;
}
