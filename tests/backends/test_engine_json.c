/*
 * Tests for backends/engine_json.c: job lists, job objects, states, times,
 * on the REST API v2 example responses and on hostile input.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "backends/engine.h"
#include "fakes/testutil.h"

#define FIX "tests/fixtures/engine/"

/* the job's metrics text, NUL-terminated (a copy in a static buffer) */
static const char *mtext(const struct engine_job *j)
{
	static char b[8192];
	size_t n;
	const char *t = engine_job_metrics_text(j, &n);

	if (n >= sizeof(b))
		n = sizeof(b) - 1;
	memcpy(b, t, n);
	b[n] = '\0';
	return b;
}

static char *load_fixture(const char *name, size_t *len)
{
	char *data = NULL;

	assert_int_equal(tu_load(FIX, name, &data, len), 0);
	return data;
}

struct list {
	json_t *root;
	struct engine_job *jobs;
	size_t n;
	long total;
	char msg[200];
};

static int parse_list_str(struct list *l, const char *txt, size_t len,
			  bool running)
{
	return engine_parse_job_list(txt, len, running, &l->root, &l->jobs,
				     &l->n, &l->total, l->msg, sizeof(l->msg));
}

static int parse_list_fix(struct list *l, const char *name, bool running)
{
	size_t len;
	char *txt = load_fixture(name, &len);
	int rc = parse_list_str(l, txt, len, running);

	free(txt);
	return rc;
}

/* engine_parse_job_object() on a fixture; the text is freed again. */
static int parse_obj_fix(const char *name, json_t **root, struct engine_job *j,
			 char *msg, size_t msgsz)
{
	size_t len;
	char *txt = load_fixture(name, &len);
	int rc = engine_parse_job_object(txt, len, root, j, msg, msgsz);

	free(txt);
	return rc;
}

static void list_free(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		engine_job_clear(&l->jobs[i]);
	free(l->jobs);
	json_decref(l->root);
	memset(l, 0, sizeof(*l));
}

static void set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

static void test_job_state_names(void **state)
{
	(void)state;
	assert_string_equal(job_state_name(JS_RUNNING), "RUNNING");
	assert_string_equal(job_state_name(JS_SAVEPOINT_DONE),
			    "SAVEPOINT_DONE");
	assert_string_equal(job_state_name(JS_ORPHAN), "ORPHAN");
	assert_string_equal(job_state_name(JS_UNKNOWN), "UNKNOWN");
	assert_string_equal(job_state_name(-1), "UNKNOWN");
	assert_string_equal(job_state_name(JS_COUNT), "UNKNOWN");
	assert_int_equal(job_state_parse("RUNNING"), JS_RUNNING);
	assert_int_equal(job_state_parse("finished"), JS_FINISHED);
	assert_int_equal(job_state_parse("UNKNOWABLE"), JS_UNKNOWABLE);
	assert_int_equal(job_state_parse("INITIALIZING"), 0);
	assert_int_equal(job_state_parse("ORPHAN"), -1);
	assert_int_equal(job_state_parse("WEIRD"), -1);
	assert_int_equal(job_state_parse(""), -1);
	assert_int_equal(job_state_parse(NULL), -1);
	for (int s = 0; s <= JS_UNKNOWABLE; s++)
		assert_int_equal(job_state_parse(job_state_name(s)), s);
}

static void test_job_state_is_end(void **state)
{
	(void)state;
	assert_true(job_state_is_end(JS_FAILED));
	assert_true(job_state_is_end(JS_SAVEPOINT_DONE));
	assert_true(job_state_is_end(JS_CANCELED));
	assert_true(job_state_is_end(JS_FINISHED));
	assert_true(job_state_is_end(JS_UNKNOWABLE));
	assert_false(job_state_is_end(JS_RUNNING));
	assert_false(job_state_is_end(JS_CANCELING));
	assert_false(job_state_is_end(JS_DOING_SAVEPOINT));
	assert_false(job_state_is_end(JS_FAILING));
	assert_false(job_state_is_end(JS_ORPHAN));
	assert_false(job_state_is_end(JS_UNKNOWN));
}

static void test_engine_parse_time_local(void **state)
{
	(void)state;
	set_tz("UTC");
	assert_int_equal(engine_parse_time("2025-03-07 14:02:11"), 1741356131);
	assert_int_equal(engine_parse_time("1970-01-01 00:00:00"), 0);
	set_tz("Asia/Shanghai");
	assert_int_equal(engine_parse_time("2025-03-07 14:02:11"),
			 1741356131 - 8 * 3600);
	set_tz("UTC");
}

static void test_engine_parse_time_malformed(void **state)
{
	(void)state;
	assert_int_equal(engine_parse_time(NULL), -1);
	assert_int_equal(engine_parse_time(""), -1);
	assert_int_equal(engine_parse_time("2025-3-07 14:02:11"), -1);
	assert_int_equal(engine_parse_time("2025-03-07T14:02:11"), -1);
	assert_int_equal(engine_parse_time("2025-13-07 14:02:11"), -1);
	assert_int_equal(engine_parse_time("2025-03-07 24:02:11"), -1);
	assert_int_equal(engine_parse_time("2025-03-07 14:02:11 "), -1);
	assert_int_equal(engine_parse_time("20x5-03-07 14:02:11"), -1);
	assert_int_equal(engine_parse_time("+025-03-07 14:02:11"), -1);
}

static void test_engine_parse_job_list_running(void **state)
{
	struct list l = {0};
	const struct engine_job *j;
	const char *prefix =
		"{\"jobId\":\"953211384710987777\",\"jobName\":"
		"\"fake_to_console\",\"jobStatus\":\"RUNNING\",\"envOptions\":"
		"{\"job.mode\":\"STREAMING\",\"checkpoint.interval\":\"5000\"";

	(void)state;
	set_tz("UTC");
	assert_int_equal(parse_list_fix(&l, "running-jobs.json", true), 0);
	assert_int_equal(l.total, -1);
	assert_int_equal(l.n, 1);
	assert_int_equal(json_array_size(l.root), 0);
	j = &l.jobs[0];
	assert_string_equal(j->id, "953211384710987777");
	assert_string_equal(j->name, "fake_to_console");
	assert_int_equal(j->state, JS_RUNNING);
	assert_true(j->running);
	assert_null(j->error_msg);
	assert_int_equal(j->create_s, 1741356131);
	assert_int_equal(j->finish_s, 0);
	assert_int_equal(j->n_pipelines, 1);
	assert_int_equal(j->pipelines[0], 1);
	assert_int_equal(strncmp(j->json, prefix, strlen(prefix)), 0);
	assert_int_equal(j->json_len, strlen(j->json));
	assert_string_equal(j->json + j->json_len - 3, "}}\n");
	assert_null(strstr(j->json, "\": "));
	assert_null(strstr(j->json, "\n "));
	assert_non_null(strstr(j->json, "\"isStartWithSavePoint\":false,"
					"\"metrics\":{"));
	assert_true(tu_has_metrics(j));
	assert_string_equal(tu_metric(j, "SinkWriteCount"), "1200");
	assert_int_equal(
		strncmp(mtext(j), "{\"SourceReceivedCount\":\"1200\",", 30), 0);
	/* kept once: the metrics text is the job text's own bytes */
	{
		size_t ml;
		const char *mt = engine_job_metrics_text(j, &ml);

		assert_true(mt > j->json && mt + ml <= j->json + j->json_len);
		assert_int_equal(mt[ml - 1], '}');
		assert_int_equal(ml, strlen(mtext(j)));
	}
	list_free(&l);
}

static void test_engine_parse_job_list_finished(void **state)
{
	struct list l = {0};
	const struct engine_job *a, *b;

	(void)state;
	set_tz("UTC");
	assert_int_equal(parse_list_fix(&l, "finished-jobs.json", false), 0);
	assert_int_equal(l.n, 2);
	a = &l.jobs[0];
	b = &l.jobs[1];
	assert_false(a->running);
	assert_int_equal(a->state, JS_FINISHED);
	assert_null(a->error_msg);
	assert_int_equal(a->finish_s, 1741356340);
	assert_non_null(strstr(a->json, "\"errorMsg\":null,"));
	assert_string_equal(b->id, "953211384710987790");
	assert_int_equal(b->state, JS_FAILED);
	assert_string_equal(b->error_msg, "java.lang.RuntimeException: boom");
	/* pipelines sorted although "2" comes first in the object */
	assert_int_equal(b->n_pipelines, 2);
	assert_int_equal(b->pipelines[0], 1);
	assert_int_equal(b->pipelines[1], 2);
	/* non-ASCII kept as UTF-8, not \u escapes */
	assert_string_equal(b->name, "mysql_cdc_\xe4\xb8\xad\xe6\x96\x87");
	assert_non_null(strstr(b->json, "mysql_cdc_\xe4\xb8\xad\xe6\x96\x87"));
	assert_null(strstr(b->json, "\\u"));
	/* "1.0E-4" stays a string, verbatim */
	assert_non_null(strstr(mtext(b), "\"SourceReceivedQPS\":\"1.0E-4\""));
	assert_non_null(strstr(
		mtext(b), "\"TableSourceReceivedQPS\":{\"fake\":\"1.0E-4\"}"));
	list_free(&l);
}

static void test_engine_parse_job_list_paged(void **state)
{
	struct list l = {0};

	(void)state;
	assert_int_equal(parse_list_fix(&l, "running-jobs-paged-1.json", true),
			 0);
	assert_int_equal(l.total, 5);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.jobs[0].id, "1001");
	/* a second page appends to the same root and array */
	assert_int_equal(parse_list_fix(&l, "running-jobs-paged-2.json", true),
			 0);
	assert_int_equal(l.n, 4);
	assert_int_equal(json_array_size(l.root), 0);
	assert_string_equal(l.jobs[3].id, "1004");
	assert_string_equal(tu_metric(&l.jobs[3], "SourceReceivedCount"),
			    "1200");
	list_free(&l);
}

static void test_engine_parse_job_list_error_body(void **state)
{
	struct list l = {0};

	(void)state;
	assert_int_equal(parse_list_fix(&l, "error-400.json", true), -EPROTO);
	assert_non_null(strstr(l.msg, "The jobId must not be empty."));
	assert_null(l.root);
	assert_int_equal(l.n, 0);
	list_free(&l);
}

static void test_engine_parse_job_list_garbage(void **state)
{
	static const char *const bad[] = {
		"",
		"not json",
		"{}",
		"[",
		"{\"data\":5}",
		"\"x\"",
		"null",
		"[{\"jobId\":99999999999999999999}]",
		"[1e99999]",
	};
	struct list l = {0};
	char *deep;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(
			parse_list_str(&l, bad[i], strlen(bad[i]), true),
			-EPROTO);
		assert_true(l.msg[0] != '\0');
		assert_int_equal(l.n, 0);
		assert_null(l.root);
	}
	assert_int_equal(parse_list_str(&l, NULL, 0, true), -EPROTO);
	/* nesting far past jansson's depth limit */
	deep = malloc(200001);
	assert_non_null(deep);
	memset(deep, '[', 100000);
	memset(deep + 100000, ']', 100000);
	deep[200000] = '\0';
	assert_int_equal(parse_list_str(&l, deep, 200000, true), -EPROTO);
	free(deep);
	/* an empty list is fine */
	assert_int_equal(parse_list_str(&l, "[]", 2, true), 0);
	assert_int_equal(l.n, 0);
	assert_non_null(l.root);
	list_free(&l);
}

/* A job keeps its texts and nothing of the list's JSON tree (README
 * "Memory": the tree of 10,000 jobs cost ~250 MB); the plain array
 * is read one element at a time, strings with brackets and quotes
 * included, and a bad element anywhere refuses the whole list. */
static void test_engine_parse_job_list_keeps_no_tree(void **state)
{
	const char *txt =
		" [ {\"jobId\":\"1\",\"jobName\":\"a]\\\"},[x{\","
		"\"metrics\":{\"SinkWriteCount\":\"7\"}} ,"
		"{\"jobId\":\"2\"},{\"jobId\":\"3\",\"metrics\":{\"a\":[1]}}]\n";
	static const char *const bad_late[] = {
		"[{\"jobId\":\"1\"},{\"jobId\":\"2\",}]",
		"[{\"jobId\":\"1\"},{\"jobId\":\"2\"}",
		"[{\"jobId\":\"1\"} {\"jobId\":\"2\"}]",
		"[{\"jobId\":\"1\"}] x",
	};
	struct list l = {0};

	(void)state;
	assert_int_equal(parse_list_str(&l, txt, strlen(txt), true), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.jobs[0].name, "a]\"},[x{");
	/* nothing of the JSON tree is kept */
	assert_int_equal(json_array_size(l.root), 0);
	assert_true(tu_has_metrics(&l.jobs[0]));
	assert_true(tu_has_metrics(&l.jobs[2]));
	assert_string_equal(mtext(&l.jobs[1]), "{}");
	assert_string_equal(tu_metric(&l.jobs[0], "SinkWriteCount"), "7");
	list_free(&l);
	for (size_t i = 0; i < sizeof(bad_late) / sizeof(bad_late[0]); i++) {
		memset(&l, 0, sizeof(l));
		assert_int_equal(parse_list_str(&l, bad_late[i],
						strlen(bad_late[i]), true),
				 -EPROTO);
		assert_true(l.msg[0] != '\0');
		assert_int_equal(l.n, 0);
		assert_null(l.root);
		list_free(&l);
	}
}

static void test_engine_parse_job_list_hostile_entries(void **state)
{
	const char *txt =
		"[5, \"s\", null, [], {\"jobId\":\"abc\"},"
		"{\"jobId\":\"12345678901234567890\"}, {\"jobId\":-1},"
		"{\"jobId\":1.5}, {\"jobId\":\"9223372036854775808\"},"
		"{\"jobId\":\"\"}, {\"jobName\":\"noid\"}, {\"jobId\":true},"
		"{\"jobId\":\"42\",\"jobStatus\":\"WEIRD\",\"createTime\":5,"
		"\"finishTime\":\"yesterday\",\"jobName\":7,\"jobDag\":[],"
		"\"metrics\":\"x\",\"errorMsg\":{}},"
		"{\"jobId\":\"43\",\"jobStatus\":7,\"jobDag\":{\"pipelineEdges\":"
		"{\"x\":[],\"-1\":[],\"0\":[],\"99999999999\":[],\"7\":1,"
		"\"7\":2},\"vertexInfoMap\":[5,{\"vertexName\":3},"
		"{\"vertexName\":\"pipeline-\"},{\"vertexName\":\"pipeline-9x\"},"
		"{\"vertexName\":\"pipeline-4\"}]}},"
		"{\"jobId\":\"9223372036854775807\"},"
		"{\"jobId\":\"42\",\"jobStatus\":\"RUNNING\"}]";
	struct list l = {0};

	(void)state;
	assert_int_equal(parse_list_str(&l, txt, strlen(txt), false), 0);
	assert_int_equal(l.n, 4);
	assert_int_equal(json_array_size(l.root), 0);
	assert_string_equal(l.jobs[0].id, "42");
	assert_int_equal(l.jobs[0].state, JS_UNKNOWN);
	assert_null(l.jobs[0].name);
	assert_null(l.jobs[0].error_msg);
	assert_int_equal(l.jobs[0].create_s, 0);
	assert_int_equal(l.jobs[0].finish_s, 0);
	assert_int_equal(l.jobs[0].n_pipelines, 0);
	assert_string_equal(mtext(&l.jobs[0]), "{}");
	assert_string_equal(l.jobs[1].id, "43");
	assert_int_equal(l.jobs[1].state, JS_UNKNOWN);
	assert_int_equal(l.jobs[1].n_pipelines, 2);
	assert_int_equal(l.jobs[1].pipelines[0], 4);
	assert_int_equal(l.jobs[1].pipelines[1], 7);
	assert_string_equal(l.jobs[2].id, "9223372036854775807");
	/* duplicate ids are the client's business */
	assert_string_equal(l.jobs[3].id, "42");
	list_free(&l);
}

static void test_engine_parse_job_object_running(void **state)
{
	struct engine_job j;
	json_t *root = NULL;
	char msg[200];

	(void)state;
	assert_int_equal(parse_obj_fix("job-info-running.json", &root, &j, msg,
				       sizeof(msg)),
			 0);
	assert_non_null(root);
	assert_string_equal(j.id, "953211384710987777");
	assert_int_equal(j.state, JS_RUNNING);
	assert_true(j.running);
	assert_false(j.restored); /* "isStartWithSavePoint":false */
	assert_non_null(strstr(j.json, "\"envOptions\":{\"job.mode\":"
				       "\"STREAMING\",\"checkpoint.interval\":"
				       "\"5000\",\"parallelism\":\"1\"}"));
	engine_job_clear(&j);
	json_decref(root);
}

static void test_engine_parse_job_object_restored(void **state)
{
	static const char txt[] = "{\"jobId\":\"5\",\"jobStatus\":\"RUNNING\","
				  "\"isStartWithSavePoint\":true}";
	struct engine_job j;
	json_t *root = NULL;
	char msg[200];

	(void)state;
	assert_int_equal(engine_parse_job_object(txt, strlen(txt), &root, &j,
						 msg, sizeof(msg)),
			 0);
	assert_true(j.restored);
	engine_job_clear(&j);
	json_decref(root);
}

static void test_engine_parse_job_object_finished(void **state)
{
	struct engine_job j;
	json_t *root = NULL;
	char msg[200];

	(void)state;
	set_tz("UTC");
	assert_int_equal(parse_obj_fix("job-info-finished.json", &root, &j, msg,
				       sizeof(msg)),
			 0);
	assert_int_equal(j.state, JS_FINISHED);
	assert_false(j.running);
	assert_int_equal(j.finish_s, 1741356340);
	assert_int_equal(j.create_s, 1741356131);
	assert_string_equal(tu_metric(&j, "SourceReceivedCount"), "5");
	engine_job_clear(&j);
	json_decref(root);
}

static void test_engine_parse_job_object_unknown(void **state)
{
	struct engine_job j;
	json_t *root = NULL;
	char msg[200];

	(void)state;
	assert_int_equal(parse_obj_fix("job-info-unknown.json", &root, &j, msg,
				       sizeof(msg)),
			 -ENOENT);
	assert_null(root);
	assert_null(j.id);
	/* a numeric jobId alone is unknown too */
	assert_int_equal(engine_parse_job_object("{\"jobId\":123}", 13, &root,
						 &j, msg, sizeof(msg)),
			 -ENOENT);
}

static void test_engine_parse_job_object_error_body(void **state)
{
	struct engine_job j;
	json_t *root = NULL;
	char msg[200];

	(void)state;
	assert_int_equal(
		parse_obj_fix("error-400.json", &root, &j, msg, sizeof(msg)),
		-EPROTO);
	assert_non_null(strstr(msg, "The jobId must not be empty."));
	assert_null(root);
	assert_int_equal(
		engine_parse_job_object("[]", 2, &root, &j, msg, sizeof(msg)),
		-EPROTO);
	assert_int_equal(engine_parse_job_object("{\"jobId\":\"x\",\"a\":1}",
						 19, &root, &j, msg,
						 sizeof(msg)),
			 -EPROTO);
	assert_int_equal(
		engine_parse_job_object("{", 1, &root, &j, msg, sizeof(msg)),
		-EPROTO);
	assert_null(root);
}

static void test_engine_job_from_json_numeric_id(void **state)
{
	struct list l = {0};
	size_t len;
	char *obj = load_fixture("job-numeric-id.json", &len);
	char *txt = malloc(len + 3);

	(void)state;
	assert_non_null(txt);
	snprintf(txt, len + 3, "[%s]", obj);
	assert_int_equal(parse_list_str(&l, txt, strlen(txt), true), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.jobs[0].id, "77");
	/* no pipelineEdges: pipelines come from vertexInfoMap names */
	assert_int_equal(l.jobs[0].n_pipelines, 2);
	assert_int_equal(l.jobs[0].pipelines[0], 2);
	assert_int_equal(l.jobs[0].pipelines[1], 3);
	assert_string_equal(mtext(&l.jobs[0]), "{}");
	assert_int_equal(strncmp(l.jobs[0].json, "{\"jobId\":77,", 12), 0);
	list_free(&l);
	free(txt);
	free(obj);
}

/* Issue 7 A6: one job name with invalid UTF-8 spoils only itself. */
static void test_engine_parse_job_list_invalid_utf8(void **state)
{
	/* job 1: a Latin-1 byte, a truncated sequence, an overlong NUL and a
	 * CESU surrogate; job 2: a lone surrogate escape; job 3: clean, with
	 * a valid pair escape and real UTF-8 */
	static const char txt[] =
		"[{\"jobId\":\"1\",\"jobName\":\"caf\xe9 \xe2\x82 \xc0\x80 "
		"\xed\xa0\x80!\",\"jobStatus\":\"RUNNING\"},"
		"{\"jobId\":\"2\",\"jobName\":\"a\\ud800b\\udc00c\","
		"\"jobStatus\":\"FAILED\"},"
		"{\"jobId\":\"3\",\"jobName\":\"\\ud83d\\ude00 \xc3\xa9\\\\ud800\","
		"\"jobStatus\":\"FINISHED\"}]";
	struct list l = {0};

	(void)state;
	assert_int_equal(parse_list_str(&l, txt, sizeof(txt) - 1, true), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.jobs[0].id, "1");
	assert_int_equal(l.jobs[0].state, JS_RUNNING);
	assert_string_equal(l.jobs[0].name,
			    "caf\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd "
			    "\xef\xbf\xbd\xef\xbf\xbd "
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd!");
	assert_string_equal(l.jobs[1].name, "a\xef\xbf\xbd"
					    "b\xef\xbf\xbd"
					    "c");
	assert_int_equal(l.jobs[1].state, JS_FAILED);
	/* valid text is untouched; an escaped backslash is not an escape */
	assert_string_equal(l.jobs[2].name, "\xf0\x9f\x98\x80 \xc3\xa9\\ud800");
	list_free(&l);
}

/* An escaped NUL in a name does not spoil the document either. */
static void test_engine_parse_job_object_nul_and_diagnostics(void **state)
{
	static const char txt[] =
		"{\"jobId\":\"9\",\"jobName\":\"a\\u0000b\",\"jobStatus\":"
		"\"FAILED\",\"finishTime\":\"2026-11-30 11:00:00\","
		"\"diagnostics\":{\"rootCause\":\"x\",\"hints\":[1,2]},"
		"\"metrics\":{}}";
	json_t *root = NULL;
	struct engine_job j;
	char msg[160];

	(void)state;
	assert_int_equal(engine_parse_job_object(txt, sizeof(txt) - 1, &root,
						 &j, msg, sizeof(msg)),
			 0);
	assert_string_equal(j.id, "9");
	assert_int_equal(j.state, JS_FAILED);
	assert_string_equal(j.name, "a");
	/* 3.x diagnostics pass through to job.json verbatim */
	assert_non_null(strstr(j.json, "\"diagnostics\":{\"rootCause\":\"x\","
				       "\"hints\":[1,2]}"));
	assert_non_null(strstr(j.json, "\"jobName\":\"a\\u0000b\""));
	engine_job_clear(&j);
	json_decref(root);
}

/* Truncated and odd escapes near the end of the text never read past it. */
static void test_engine_parse_job_list_utf8_edges(void **state)
{
	static const char *const bad[] = {
		"[\"\\u",	  "[\"\\ud800",
		"[\"\\ud800\\u",  "[\"\xf4\x90\x80\x80\"]",
		"[\"\xff\"]",	  "[\"\xe0\x80\xaf\"]",
		"\xef\xbb\xbf[]",
	};
	struct list l = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		int rc = parse_list_str(&l, bad[i], strlen(bad[i]), true);

		assert_true(rc == 0 || rc == -EPROTO);
		assert_int_equal(l.n, 0);
		list_free(&l);
	}
	/* a list of strings is a list of non-objects: skipped, not fatal */
	assert_int_equal(parse_list_str(&l, "[\"\xff\"]", 5, true), 0);
	list_free(&l);
}

/* SeaTunnel 2.3.8 (README "The real engine in the tests"): a finished job's
 * jobDag is the physical DAG as a JSON string, a running job's the logical
 * one ({"vertices","edges"}, no pipeline ids); bytes from a real node. */
static void test_engine_parse_job_list_dag_string(void **state)
{
	const char *txt =
		"[{\"jobId\":\"1180103157604220929\",\"jobName\":\"b\","
		"\"jobStatus\":\"FINISHED\",\"errorMsg\":null,"
		"\"createTime\":\"2026-12-01 11:08:40\","
		"\"finishTime\":\"2026-12-01 11:08:42\",\"jobDag\":"
		"\"{\\\"jobId\\\":1180103157604220929,\\\"pipelineEdges\\\":{"
		"\\\"1\\\":[{\\\"inputVertexId\\\":1,\\\"targetVertexId\\\":2}],"
		"\\\"2\\\":[]},\\\"vertexInfoMap\\\":{\\\"1\\\":{\\\"vertexId\\\":1,"
		"\\\"type\\\":\\\"SOURCE\\\",\\\"connectorType\\\":"
		"\\\"pipeline-1 [Source[0]-FakeSource]\\\"}}}\","
		"\"pluginJarsUrls\":[],\"metrics\":{}},"
		"{\"jobId\":\"2\",\"jobStatus\":\"FAILED\",\"jobDag\":\"{\"},"
		"{\"jobId\":\"3\",\"jobStatus\":\"FAILED\",\"jobDag\":\"[1]\"},"
		"{\"jobId\":\"4\",\"jobStatus\":\"RUNNING\",\"jobDag\":{\"vertices\":"
		"[{\"id\":1,\"name\":\"Source[0]-FakeSource(id=1)\",\"parallelism\":1}],"
		"\"edges\":[{\"inputVertex\":\"Source[0]-FakeSource\","
		"\"targetVertex\":\"Sink[0]-Console-MultiTableSink\"}]}}]";
	struct list l = {0};

	(void)state;
	assert_int_equal(parse_list_str(&l, txt, strlen(txt), false), 0);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.jobs[0].state, JS_FINISHED);
	assert_int_equal(l.jobs[0].n_pipelines, 2);
	assert_int_equal(l.jobs[0].pipelines[0], 1);
	assert_int_equal(l.jobs[0].pipelines[1], 2);
	/* a string that is no DAG: no pipelines, the job is still there */
	assert_int_equal(l.jobs[1].state, JS_FAILED);
	assert_int_equal(l.jobs[1].n_pipelines, 0);
	assert_int_equal(l.jobs[2].n_pipelines, 0);
	assert_int_equal(l.jobs[3].n_pipelines, 0);
	list_free(&l);
}

/* Parse `txt` as a stream fed `chunk` bytes at a time (0: in one piece),
 * after a false start of its first half (a retried request: reset). */
static int stream_parse(const char *txt, size_t len, size_t chunk,
			bool false_start, struct list *l)
{
	struct engine_list_stream *ls = NULL;
	int rc = 0;

	memset(l, 0, sizeof(*l));
	assert_int_equal(engine_list_stream_new(true, &l->root, &l->jobs, &l->n,
						NULL, 0, &ls),
			 0);
	if (false_start) {
		(void)engine_list_stream_feed(ls, txt, len / 2);
		engine_list_stream_reset(ls);
	}
	for (size_t o = 0; o < len && rc == 0;) {
		size_t k = chunk && chunk < len - o ? chunk : len - o;

		rc = engine_list_stream_feed(ls, txt + o, k);
		o += k;
	}
	rc = engine_list_stream_end(ls, &l->total, l->msg, sizeof(l->msg));
	engine_list_stream_free(ls);
	return rc;
}

/* README "Memory": a list parsed as it arrives gives what the whole text
 * gives (the same jobs, texts, total, or an error), whatever the pieces
 * it arrives in, also after a retry started it again. */
static void test_engine_list_stream_same_as_whole(void **state)
{
	static const char *const txts[] = {
		"[]",
		" \n[ ]\n ",
		"[{\"jobId\":\"1\",\"jobName\":\"a]b}c,\\\"[{\","
		"\"jobStatus\":\"RUNNING\",\"x\":[1,[2,{\"y\":\"]\"}]]},"
		" {\"jobId\":\"22\",\"jobStatus\":\"FAILED\"} ]",
		"[1, \"s\\\"]\", null, true, {\"jobId\":\"3\","
		"\"jobStatus\":\"FINISHED\"}, [ ], 2.5e3]",
		"{\"data\":[{\"jobId\":\"4\",\"jobStatus\":\"RUNNING\"}],"
		"\"total\":7}",
		"{\"status\":\"fail\",\"message\":\"boom\"}",
		"[{\"jobId\":\"5\",\"jobName\":\"caf\xe9 \xed\xa0\x80\","
		"\"jobStatus\":\"RUNNING\"}]",
		"[{\"jobId\":\"6\",\"jobName\":\"a\\ud800b\"}]",
		"",
		"   ",
		"[",
		"[{\"jobId\":\"1\"}",
		"[{\"jobId\":\"1\"},]",
		"[{\"jobId\":\"1\"}]x",
		"[{\"jobId\":\"1\"} {\"jobId\":\"2\"}]",
		"[{\"jobId\":\"1\"]}]",
		"[,{\"jobId\":\"1\"}]",
		"[{\"jobId\":99999999999999999999}]",
		"[1e99999]",
		"[{\"jobId\":\"1\",\"jobName\":\"unterminated}]",
		"[\"x]",
		"nul",
	};
	static const size_t chunks[] = {0, 1, 2, 3, 7, 64};

	(void)state;
	for (size_t i = 0; i < sizeof(txts) / sizeof(*txts); i++) {
		size_t len = strlen(txts[i]);
		struct list w = {0};
		int wrc = parse_list_str(&w, txts[i], len, true);

		for (size_t c = 0; c < sizeof(chunks) / sizeof(*chunks); c++) {
			for (int fs = 0; fs < 2; fs++) {
				struct list l;
				int rc = stream_parse(txts[i], len, chunks[c],
						      fs, &l);

				assert_int_equal(rc == 0, wrc == 0);
				if (rc) {
					assert_true(l.msg[0] != '\0');
					assert_int_equal(l.n, 0);
				}
				assert_int_equal(l.n, w.n);
				assert_int_equal(l.total, w.total);
				for (size_t k = 0; k < l.n; k++) {
					assert_string_equal(l.jobs[k].id,
							    w.jobs[k].id);
					assert_int_equal(l.jobs[k].json_len,
							 w.jobs[k].json_len);
					assert_memory_equal(l.jobs[k].json,
							    w.jobs[k].json,
							    w.jobs[k].json_len);
					assert_int_equal(l.jobs[k].digest,
							 w.jobs[k].digest);
				}
				list_free(&l);
			}
		}
		list_free(&w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_parse_job_list_invalid_utf8),
		cmocka_unit_test(
			test_engine_parse_job_object_nul_and_diagnostics),
		cmocka_unit_test(test_engine_parse_job_list_utf8_edges),
		cmocka_unit_test(test_job_state_names),
		cmocka_unit_test(test_job_state_is_end),
		cmocka_unit_test(test_engine_parse_time_local),
		cmocka_unit_test(test_engine_parse_time_malformed),
		cmocka_unit_test(test_engine_parse_job_list_running),
		cmocka_unit_test(test_engine_parse_job_list_finished),
		cmocka_unit_test(test_engine_parse_job_list_paged),
		cmocka_unit_test(test_engine_parse_job_list_error_body),
		cmocka_unit_test(test_engine_parse_job_list_garbage),
		cmocka_unit_test(test_engine_list_stream_same_as_whole),
		cmocka_unit_test(test_engine_parse_job_list_hostile_entries),
		cmocka_unit_test(test_engine_parse_job_list_keeps_no_tree),
		cmocka_unit_test(test_engine_parse_job_list_dag_string),
		cmocka_unit_test(test_engine_parse_job_object_running),
		cmocka_unit_test(test_engine_parse_job_object_restored),
		cmocka_unit_test(test_engine_parse_job_object_finished),
		cmocka_unit_test(test_engine_parse_job_object_unknown),
		cmocka_unit_test(test_engine_parse_job_object_error_body),
		cmocka_unit_test(test_engine_job_from_json_numeric_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
