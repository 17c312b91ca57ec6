/*
 * libFuzzer target for backends/engine_json.c: the same bytes as a job
 * list (running and finished), as a job-info object, and as a time.
 * Invalid UTF-8 is repaired before parsing: whatever parses dumps back to
 * JSON that jansson accepts again (valid UTF-8).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *txt = (const char *)data;
	struct engine_job *jobs = NULL, one;
	json_t *root = NULL;
	size_t n = 0;
	long total;
	char msg[200], tbuf[32];

	/* twice into the same root: the paging path */
	if (engine_parse_job_list(txt, size, true, &root, &jobs, &n, &total,
				  msg, sizeof(msg)) == 0)
		engine_parse_job_list(txt, size, false, &root, &jobs, &n,
				      &total, msg, sizeof(msg));
	for (size_t i = 0; i < n; i++) {
		size_t ml;
		const char *mt = engine_job_metrics_text(&jobs[i], &ml);

		if (!jobs[i].id || !jobs[i].json ||
		    jobs[i].json[jobs[i].json_len - 1] != '\n')
			__builtin_trap();
		/* the metrics are an object's text, inside the job's */
		if (ml < 2 || mt[0] != '{' || mt[ml - 1] != '}' ||
		    (jobs[i].metrics_len &&
		     (mt < jobs[i].json ||
		      mt + ml > jobs[i].json + jobs[i].json_len)))
			__builtin_trap();
		{
			json_error_t je;
			json_t *again =
				json_loadb(jobs[i].json, jobs[i].json_len,
					   JSON_ALLOW_NUL, &je);

			if (!again)
				__builtin_trap();
			json_decref(again);
		}
		for (size_t k = 1; k < jobs[i].n_pipelines; k++)
			if (jobs[i].pipelines[k - 1] >= jobs[i].pipelines[k])
				__builtin_trap();
		engine_job_clear(&jobs[i]);
	}
	free(jobs);
	json_decref(root);

	root = NULL;
	if (engine_parse_job_object(txt, size, &root, &one, msg, sizeof(msg)) ==
	    0) {
		(void)job_state_name(one.state);
		engine_job_clear(&one);
		json_decref(root);
	}

	if (size < sizeof(tbuf)) {
		memcpy(tbuf, data, size);
		tbuf[size] = '\0';
		(void)engine_parse_time(tbuf);
	}
	return 0;
}
