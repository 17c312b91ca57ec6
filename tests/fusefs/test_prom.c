/*
 * Unit tests for fusefs/view/prom.c: exact rendering of a small job, label
 * escaping, garbage skipping, family grouping across jobs, number forms,
 * name clashes, and buffer-cap rollback.
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
#include <jansson.h>

#include "util/buf.h"
#include "view/prom.h"

static json_t *load(const char *text)
{
	json_error_t err;
	json_t *j = json_loads(text, 0, &err);

	if (!j)
		fail_msg("bad test JSON: %s", err.text);
	return j;
}

/* Render jobs into a fresh string the caller frees. */
static char *render(const struct prom_job *jobs, size_t n)
{
	struct buf b;
	char *s;

	buf_init(&b, BUF_DEFAULT_MAX);
	assert_int_equal(prom_render_jobs(&b, jobs, n), 0);
	s = buf_detach(&b, NULL);
	assert_non_null(s);
	return s;
}

static size_t count_substr(const char *s, const char *sub)
{
	size_t n = 0;

	while ((s = strstr(s, sub))) {
		n++;
		s += strlen(sub);
	}
	return n;
}

static void test_prom_render_exact_small_job(void **state)
{
	(void)state;
	json_t *m = load("{\"SourceReceivedQPS\":\"20.0\","
			 "\"TableSinkWriteCount\":{\"fake\":\"1200\"},"
			 "\"SourceReceivedCount\":\"1200\"}");
	struct prom_job j = {
		.id = "953211384710987777",
		.name = "fake_to_console",
		.state_name = "RUNNING",
		.metrics = m,
		.has_storage = 1,
		.objects = 3,
		.bytes = 4096,
		.tmp_objects = 1,
		.newest_ckpt_ms = 1741356131005,
		.pipelines = 1,
		.checkpoints = 2,
		.restore_points = 1,
		.oldest_restore_ms = 1741356130001,
		.ckpt_interval_ms = 2500,
	};
	const char *L = "{job_id=\"953211384710987777\",job_name=\"fake_to_"
			"console\"}";
	char want[4096];
	char *got;

	snprintf(
		want, sizeof(want),
		"# HELP seatunnel_job_source_received_count_total SeaTunnel engine job metric SourceReceivedCount\n"
		"# TYPE seatunnel_job_source_received_count_total counter\n"
		"seatunnel_job_source_received_count_total%s 1200\n"
		"# HELP seatunnel_job_source_received_qps SeaTunnel engine job metric SourceReceivedQPS\n"
		"# TYPE seatunnel_job_source_received_qps gauge\n"
		"seatunnel_job_source_received_qps%s 20\n"
		"# HELP seatunnel_job_state Job state reported by the engine: 1 for the job's current state\n"
		"# TYPE seatunnel_job_state gauge\n"
		"seatunnel_job_state{job_id=\"953211384710987777\",job_name=\"fake_to_console\",state=\"RUNNING\"} 1\n"
		"# HELP seatunnel_job_table_sink_write_count_total SeaTunnel engine job metric TableSinkWriteCount, per table\n"
		"# TYPE seatunnel_job_table_sink_write_count_total counter\n"
		"seatunnel_job_table_sink_write_count_total{job_id=\"953211384710987777\",job_name=\"fake_to_console\",table=\"fake\"} 1200\n"
		"# HELP stfs_job_checkpoint_interval_seconds The job's configured checkpoint.interval\n"
		"# TYPE stfs_job_checkpoint_interval_seconds gauge\n"
		"stfs_job_checkpoint_interval_seconds%s 2.500\n"
		"# HELP stfs_job_checkpoints Checkpoints of the job in storage\n"
		"# TYPE stfs_job_checkpoints gauge\n"
		"stfs_job_checkpoints%s 2\n"
		"# HELP stfs_job_newest_checkpoint_timestamp_seconds Time of the job's newest checkpoint, seconds since the epoch\n"
		"# TYPE stfs_job_newest_checkpoint_timestamp_seconds gauge\n"
		"stfs_job_newest_checkpoint_timestamp_seconds%s 1741356131.005\n"
		"# HELP stfs_job_oldest_restore_point_timestamp_seconds Write time of the job's oldest restore point, seconds since the epoch\n"
		"# TYPE stfs_job_oldest_restore_point_timestamp_seconds gauge\n"
		"stfs_job_oldest_restore_point_timestamp_seconds%s 1741356130.001\n"
		"# HELP stfs_job_pipelines Pipelines of the job with checkpoint data\n"
		"# TYPE stfs_job_pipelines gauge\n"
		"stfs_job_pipelines%s 1\n"
		"# HELP stfs_job_restore_points Pipelines of the job with a restore point in storage\n"
		"# TYPE stfs_job_restore_points gauge\n"
		"stfs_job_restore_points%s 1\n"
		"# HELP stfs_job_storage_bytes Total size of the job's checkpoint storage objects\n"
		"# TYPE stfs_job_storage_bytes gauge\n"
		"stfs_job_storage_bytes%s 4096\n"
		"# HELP stfs_job_storage_inflight_objects Unfinished (.sertmp) checkpoint objects of the job\n"
		"# TYPE stfs_job_storage_inflight_objects gauge\n"
		"stfs_job_storage_inflight_objects%s 1\n"
		"# HELP stfs_job_storage_objects Checkpoint storage objects of the job\n"
		"# TYPE stfs_job_storage_objects gauge\n"
		"stfs_job_storage_objects%s 3\n",
		L, L, L, L, L, L, L, L, L, L, L);
	got = render(&j, 1);
	assert_string_equal(got, want);
	free(got);
	json_decref(m);
}

static void test_prom_escape_label_specials_and_utf8(void **state)
{
	(void)state;
	struct buf b;

	buf_init(&b, 1024);
	/* the tab is a control character: the text \x09 (issue 7 B9) */
	assert_int_equal(prom_escape_label(&b, "a\\b\"c\nd\te"), 0);
	assert_string_equal(b.data, "a\\\\b\\\"c\\nd\\\\x09e");
	buf_reset(&b);
	/* ESC, BEL, DEL, a C1 CSI (U+009B) and a bidi override (U+202E)
	 * cannot reach a terminal: each byte is the text \xHH */
	assert_int_equal(prom_escape_label(&b, "\x1b]0;t\a|\x7f|\xc2\x9b|"
					       "\xe2\x80\xae|\xe2\x82\xac"),
			 0);
	assert_string_equal(b.data, "\\\\x1b]0;t\\\\x07|\\\\x7f|"
				    "\\\\xc2\\\\x9b|"
				    "\\\\xe2\\\\x80\\\\xae|\xe2\x82\xac");
	buf_reset(&b);
	/* valid multibyte kept; stray continuation, overlong, surrogate and
	 * truncated sequences replaced byte by byte */
	assert_int_equal(prom_escape_label(&b, "\xc3\xa9|\x80|\xc0\xaf|"
					       "\xed\xa0\x80|\xe2\x82"),
			 0);
	assert_string_equal(b.data, "\xc3\xa9|\xef\xbf\xbd|"
				    "\xef\xbf\xbd\xef\xbf\xbd|"
				    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
				    "\xef\xbf\xbd\xef\xbf\xbd");
	buf_reset(&b);
	/* past U+10FFFF: 4 bytes, 4 replacements; U+10FFFF itself kept */
	assert_int_equal(prom_escape_label(&b, "\xf4\x90\x80\x80|"
					       "\xf4\x8f\xbf\xbf"),
			 0);
	assert_string_equal(b.data, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				    "\xef\xbf\xbd|\xf4\x8f\xbf\xbf");
	buf_release(&b);
}

static void test_prom_render_escapes_labels(void **state)
{
	(void)state;
	json_t *m = load("{\"TableSinkWriteQPS\":{\"db.\\\"t\\\"\\n\\\\x\":"
			 "\"1.5\"}}");
	struct prom_job j = {.id = "7", .name = "bad\xff\"name", .metrics = m};
	char *got = render(&j, 1);

	assert_non_null(strstr(got,
			       "seatunnel_job_table_sink_write_qps{"
			       "job_id=\"7\",job_name=\"bad\xef\xbf\xbd"
			       "\\\"name\",table=\"db.\\\"t\\\"\\n\\\\x\"} "
			       "1.5\n"));
	/* HELP text escapes newline and backslash of an unknown key */
	free(got);
	json_decref(m);
	m = load("{\"we\\nird\\\\\":\"1\"}");
	j = (struct prom_job){.id = "7", .metrics = m};
	got = render(&j, 1);
	assert_string_equal(got,
			    "# HELP seatunnel_job_we_ird SeaTunnel engine job "
			    "metric we\\nird\\\\\n"
			    "# TYPE seatunnel_job_we_ird gauge\n"
			    "seatunnel_job_we_ird{job_id=\"7\"} 1\n");
	free(got);
	json_decref(m);
}

static void test_prom_render_skips_garbage(void **state)
{
	(void)state;
	json_t *m =
		load("{\"A\":\"NaN\",\"B\":\"abc\",\"C\":\"\",\"D\":\"1e999\","
		     "\"E\":\"0x10\",\"F\":true,\"G\":null,\"H\":\" 1\","
		     "\"I\":\"1 \",\"J\":\"Infinity\",\"K\":[1],\"L\":\".\","
		     "\"M\":\"1e\",\"N\":\"--1\",\"O\":{\"t\":{\"x\":\"1\"}},"
		     "\"P\":{},\"Q\":{\"t\":\"nan\"},\"R\":\"-Infinity\","
		     "\"SinkWriteQPS\":\"2.5\"}");
	struct prom_job j = {.id = "1", .metrics = m};
	char *got = render(&j, 1);

	assert_string_equal(got,
			    "# HELP seatunnel_job_sink_write_qps SeaTunnel "
			    "engine job metric SinkWriteQPS\n"
			    "# TYPE seatunnel_job_sink_write_qps gauge\n"
			    "seatunnel_job_sink_write_qps{job_id=\"1\"} 2.5\n");
	free(got);
	json_decref(m);
}

static void test_prom_render_groups_families_of_three_jobs(void **state)
{
	(void)state;
	json_t *m1 = load("{\"SinkWriteCount\":\"5\",\"TableSinkWriteCount\":"
			  "{\"b\":\"2\",\"a\":\"3\"}}");
	json_t *m2 = load("{\"SinkWriteCount\":\"7\"}");
	json_t *m3 = load("{\"TableSinkWriteCount\":{\"z\":\"1\"}}");
	/* ids out of order: output sorts them (numerically by length) */
	struct prom_job jobs[] = {
		{.id = "30", .state_name = "FAILED", .metrics = m3},
		{.id = "100",
		 .name = "big",
		 .state_name = "RUNNING",
		 .metrics = m1,
		 .has_storage = 1,
		 .objects = 4},
		{.id = "9", .state_name = "ORPHAN", .metrics = m2},
	};
	char *got = render(jobs, 3);
	const char *want =
		"# HELP seatunnel_job_sink_write_count_total SeaTunnel engine job metric SinkWriteCount\n"
		"# TYPE seatunnel_job_sink_write_count_total counter\n"
		"seatunnel_job_sink_write_count_total{job_id=\"9\"} 7\n"
		"seatunnel_job_sink_write_count_total{job_id=\"100\",job_name=\"big\"} 5\n"
		"# HELP seatunnel_job_state Job state reported by the engine: 1 for the job's current state\n"
		"# TYPE seatunnel_job_state gauge\n"
		"seatunnel_job_state{job_id=\"9\",state=\"ORPHAN\"} 1\n"
		"seatunnel_job_state{job_id=\"30\",state=\"FAILED\"} 1\n"
		"seatunnel_job_state{job_id=\"100\",job_name=\"big\",state=\"RUNNING\"} 1\n"
		"# HELP seatunnel_job_table_sink_write_count_total SeaTunnel engine job metric TableSinkWriteCount, per table\n"
		"# TYPE seatunnel_job_table_sink_write_count_total counter\n"
		"seatunnel_job_table_sink_write_count_total{job_id=\"30\",table=\"z\"} 1\n"
		"seatunnel_job_table_sink_write_count_total{job_id=\"100\",job_name=\"big\",table=\"a\"} 3\n"
		"seatunnel_job_table_sink_write_count_total{job_id=\"100\",job_name=\"big\",table=\"b\"} 2\n"
		"# HELP stfs_job_checkpoints Checkpoints of the job in storage\n"
		"# TYPE stfs_job_checkpoints gauge\n"
		"stfs_job_checkpoints{job_id=\"100\",job_name=\"big\"} 0\n"
		"# HELP stfs_job_pipelines Pipelines of the job with checkpoint data\n"
		"# TYPE stfs_job_pipelines gauge\n"
		"stfs_job_pipelines{job_id=\"100\",job_name=\"big\"} 0\n"
		"# HELP stfs_job_restore_points Pipelines of the job with a restore point in storage\n"
		"# TYPE stfs_job_restore_points gauge\n"
		"stfs_job_restore_points{job_id=\"100\",job_name=\"big\"} 0\n"
		"# HELP stfs_job_storage_bytes Total size of the job's checkpoint storage objects\n"
		"# TYPE stfs_job_storage_bytes gauge\n"
		"stfs_job_storage_bytes{job_id=\"100\",job_name=\"big\"} 0\n"
		"# HELP stfs_job_storage_inflight_objects Unfinished (.sertmp) checkpoint objects of the job\n"
		"# TYPE stfs_job_storage_inflight_objects gauge\n"
		"stfs_job_storage_inflight_objects{job_id=\"100\",job_name=\"big\"} 0\n"
		"# HELP stfs_job_storage_objects Checkpoint storage objects of the job\n"
		"# TYPE stfs_job_storage_objects gauge\n"
		"stfs_job_storage_objects{job_id=\"100\",job_name=\"big\"} 4\n";

	assert_string_equal(got, want);
	assert_int_equal(count_substr(got, "# TYPE"), 9);
	free(got);
	json_decref(m1);
	json_decref(m2);
	json_decref(m3);
}

static void test_prom_render_summary_counts_dead_jobs(void **state)
{
	const struct prom_job jobs[] = {
		{.id = "1", .has_storage = 1, .bytes = 100, .dead = 1},
		{.id = "2",
		 .has_storage = 1,
		 .bytes = 50,
		 .dead = 1,
		 .orphan = 1},
		{.id = "3", .has_storage = 1, .bytes = 7000}, /* running */
		{.id = "4", .dead = 1}, /* engine only: no storage */
	};
	struct buf b;

	(void)state;
	buf_init(&b, 4096);
	assert_int_equal(prom_render_summary(&b, jobs, 4), 0);
	assert_non_null(strstr(b.data, "\nstfs_dead_jobs_storage_bytes 150\n"));
	assert_non_null(strstr(b.data, "\nstfs_dead_jobs 3\n"));
	assert_non_null(strstr(b.data, "\nstfs_orphan_jobs 1\n"));
	assert_int_equal(count_substr(b.data, "# TYPE"), 3);
	buf_release(&b);
}

static void test_prom_render_empty_input(void **state)
{
	(void)state;
	struct buf b;
	json_t *m = load("{}");
	struct prom_job jobs[] = {
		{.id = "1", .metrics = m},
		{.id = "2", .metrics = NULL},
		{.id = NULL, .state_name = "RUNNING", .has_storage = 1},
	};

	buf_init(&b, 1024);
	assert_int_equal(prom_render_jobs(&b, NULL, 0), 0);
	assert_int_equal(b.len, 0);
	assert_int_equal(prom_render_jobs(&b, jobs, 3), 0);
	assert_int_equal(b.len, 0);
	buf_release(&b);
	json_decref(m);
}

static void test_prom_render_number_forms(void **state)
{
	(void)state;
	json_t *m = load(
		"{\"T\":{\"a\":\"1.0E-4\",\"b\":\"9223372036854775807\","
		"\"c\":\"-9223372036854775808\",\"d\":\"99999999999999999999\","
		"\"e\":\"007\",\"f\":5,\"g\":0.1,\"h\":\"0.0\","
		"\"i\":\"1640.0\",\"j\":\"0.00010\",\"k\":\"+3\","
		"\"l\":\"1e-400\",\"m\":\"-0.0\",\"n\":\"12345678901234567\"}}");
	struct prom_job j = {.id = "1", .metrics = m};
	char *got = render(&j, 1);
	static const char *const want[] = {
		"\"a\"} 0.0001\n",
		"\"b\"} 9223372036854775807\n",
		"\"c\"} -9223372036854775808\n",
		"\"d\"} 1e+20\n",
		"\"e\"} 7\n",
		"\"f\"} 5\n",
		"\"g\"} 0.1\n",
		"\"h\"} 0\n",
		"\"i\"} 1640\n",
		"\"j\"} 0.0001\n",
		"\"k\"} 3\n",
		"\"l\"} 0\n",
		"\"m\"} -0\n",
		"\"n\"} 12345678901234567\n",
	};
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strstr(got, want[i]))
			fail_msg("missing %s in:\n%s", want[i], got);
	}
	assert_int_equal(count_substr(got, "table="), 14);
	free(got);
	json_decref(m);
}

/*
 * issue 7: a counter cannot be negative (Prometheus takes a decrease for a
 * reset; OpenMetrics refuses the sample): negative counter samples are
 * dropped, a counter's -0 is 0; gauges keep their sign.
 */
static void test_prom_render_drops_negative_counters(void **state)
{
	(void)state;
	json_t *m = load("{\"SinkWriteCount\":\"-5\",\"SourceReceivedCount\":"
			 "\"7\",\"SinkWriteBytes\":-1,\"SourceReceivedBytes\":"
			 "-0.0,\"TableSinkWriteCount\":{\"a\":\"-1\",\"b\":"
			 "\"2\",\"c\":-2.5},\"SinkWriteQPS\":\"-1.5\"}");
	struct prom_job j = {.id = "1", .metrics = m};
	char *got = render(&j, 1);

	assert_null(strstr(got, "seatunnel_job_sink_write_count_total"));
	assert_null(strstr(got, "seatunnel_job_sink_write_bytes_total"));
	assert_non_null(strstr(got, "seatunnel_job_source_received_count_total"
				    "{job_id=\"1\"} 7\n"));
	assert_non_null(strstr(got, "seatunnel_job_source_received_bytes_total"
				    "{job_id=\"1\"} 0\n"));
	assert_non_null(strstr(got, "table=\"b\"} 2\n"));
	assert_null(strstr(got, "table=\"a\""));
	assert_null(strstr(got, "table=\"c\""));
	assert_non_null(strstr(
		got, "seatunnel_job_sink_write_qps{job_id=\"1\"} -1.5\n"));
	assert_null(strstr(got, "} -5\n"));
	free(got);
	json_decref(m);
}

/*
 * issue 8: 3.x keys per-table metrics by vertex, then table, whose name has
 * dots itself ("Sink[0].db.table"): split after the ']' into a vertex and
 * a table label.  2.3 keys ("db.table", "fake") stay a table label only;
 * a key that only looks like a vertex stays a table.
 */
static void test_prom_render_vertex_and_table_labels(void **state)
{
	(void)state;
	json_t *m = load("{\"TableSinkWriteCount\":{\"Sink[0].db.t1\":\"3\","
			 "\"Sink[1].db.t1\":\"4\",\"Source[12].fake\":\"5\","
			 "\"db.t2\":\"6\",\"Sink[0].\":\"7\",\"[0].x\":\"8\","
			 "\"Sink[a].x\":\"9\",\"Sink[0]x\":\"10\"}}");
	struct prom_job j = {.id = "1", .metrics = m};
	char *got = render(&j, 1);
	static const char *const want[] = {
		"{job_id=\"1\",vertex=\"Sink[0]\",table=\"db.t1\"} 3\n",
		"{job_id=\"1\",vertex=\"Sink[1]\",table=\"db.t1\"} 4\n",
		"{job_id=\"1\",vertex=\"Source[12]\",table=\"fake\"} 5\n",
		"{job_id=\"1\",table=\"db.t2\"} 6\n",
		"{job_id=\"1\",table=\"Sink[0].\"} 7\n",
		"{job_id=\"1\",table=\"[0].x\"} 8\n",
		"{job_id=\"1\",table=\"Sink[a].x\"} 9\n",
		"{job_id=\"1\",table=\"Sink[0]x\"} 10\n",
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(got, want[i]))
			fail_msg("missing %s in:\n%s", want[i], got);
	assert_int_equal(count_substr(got, "vertex="), 3);
	free(got);
	json_decref(m);
}

static void test_prom_metric_name_snake_case(void **state)
{
	(void)state;
	char out[PROM_NAME_MAX + 1];
	char tiny[8];

	prom_metric_name("SourceReceivedQPS", out, sizeof(out));
	assert_string_equal(out, "seatunnel_job_source_received_qps");
	prom_metric_name("SinkWriteBytesPerSeconds", out, sizeof(out));
	assert_string_equal(out, "seatunnel_job_sink_write_bytes_per_seconds");
	prom_metric_name("IntermediateQueueSize", out, sizeof(out));
	assert_string_equal(out, "seatunnel_job_intermediate_queue_size");
	prom_metric_name("QPSRate", out, sizeof(out));
	assert_string_equal(out, "seatunnel_job_qps_rate");
	prom_metric_name("Source[0].x--y__", out, sizeof(out));
	assert_string_equal(out, "seatunnel_job_source_0_x_y");
	prom_metric_name("9lives\xc3\xa9Ok", out, sizeof(out));
	assert_string_equal(out, "seatunnel_job_9lives_ok");
	prom_metric_name("[]", out, sizeof(out));
	assert_string_equal(out, "");
	prom_metric_name("SourceReceivedQPS", tiny, sizeof(tiny));
	assert_string_equal(tiny, "");
}

static void test_prom_render_types_and_suffixes(void **state)
{
	(void)state;
	json_t *m = load("{\"SinkCommittedBytes\":\"10\","
			 "\"IntermediateQueueSize\":\"3\",\"FooTotal\":\"1\","
			 "\"LatencySum\":\"2\",\"TableSinkCommittedQPS\":"
			 "{\"Source[0].db.t\":\"1.0\"}}");
	struct prom_job j = {.id = "1", .metrics = m};
	char *got = render(&j, 1);

	assert_non_null(strstr(
		got,
		"# TYPE seatunnel_job_sink_committed_bytes_total counter\n"));
	assert_non_null(strstr(
		got, "# TYPE seatunnel_job_intermediate_queue_size gauge\n"));
	assert_non_null(
		strstr(got, "# TYPE seatunnel_job_foo_total counter\n"));
	assert_non_null(
		strstr(got, "# TYPE seatunnel_job_latency_sum_value gauge\n"));
	assert_non_null(strstr(
		got,
		"seatunnel_job_table_sink_committed_qps{job_id=\"1\",vertex=\"Source[0]\",table=\"db.t\"} 1\n"));
	free(got);
	json_decref(m);
}

static void test_prom_render_avoids_lint_segments(void **state)
{
	(void)state;
	json_t *m = load("{\"LatencyMs\":\"1\",\"MsX\":\"2\",\"S\":\"3\","
			 "\"KB\":\"4\",\"FooGaugeCount\":\"5\","
			 "\"WaitMilliseconds\":\"6\",\"K_B\":\"7\"}");
	struct prom_job j = {.id = "1", .metrics = m};
	char *got = render(&j, 1);

	assert_non_null(
		strstr(got, "\nseatunnel_job_latencyms{job_id=\"1\"} 1\n"));
	assert_non_null(
		strstr(got, "\nseatunnel_job_msvalue_x{job_id=\"1\"} 2\n"));
	assert_non_null(
		strstr(got, "\nseatunnel_job_svalue{job_id=\"1\"} 3\n"));
	assert_non_null(
		strstr(got, "\nseatunnel_job_kbvalue{job_id=\"1\"} 4\n"));
	assert_non_null(strstr(
		got, "\nseatunnel_job_foogauge_count_total{job_id=\"1\"} 5\n"));
	assert_non_null(strstr(
		got, "\nseatunnel_job_waitmilliseconds{job_id=\"1\"} 6\n"));
	/* "k"+"b" would glue into "kb": appended instead */
	assert_non_null(
		strstr(got, "\nseatunnel_job_k_bvalue{job_id=\"1\"} 7\n"));
	free(got);
	json_decref(m);
}

static void test_prom_render_name_clash_keeps_one_family(void **state)
{
	(void)state;
	json_t *m1 = load("{\"foo\":\"1\",\"Foo\":\"2\",\"State\":\"3\","
			  "\"TableX\":\"4\",\"X\":{\"t\":\"5\"}}");
	struct prom_job j = {.id = "1", .state_name = "RUNNING", .metrics = m1};
	char *got = render(&j, 1);

	assert_int_equal(count_substr(got, "# TYPE seatunnel_job_foo "), 1);
	/* "Foo" < "foo" in bytes: Foo wins */
	assert_non_null(strstr(got, "seatunnel_job_foo{job_id=\"1\"} 2\n"));
	assert_int_equal(count_substr(got, "# TYPE seatunnel_job_state "), 1);
	assert_int_equal(count_substr(got, "seatunnel_job_state{"), 1);
	assert_int_equal(count_substr(got, "# TYPE seatunnel_job_table_x "), 1);
	assert_int_equal(count_substr(got, "seatunnel_job_table_x{"), 1);
	free(got);
	json_decref(m1);
}

static void test_prom_render_duplicate_job_ids_once(void **state)
{
	(void)state;
	struct prom_job jobs[] = {
		{.id = "5", .state_name = "RUNNING"},
		{.id = "5", .state_name = "FAILED"},
	};
	char *got = render(jobs, 2);

	assert_int_equal(count_substr(got, "seatunnel_job_state{"), 1);
	assert_non_null(strstr(got, "state=\"RUNNING\"} 1\n"));
	free(got);
}

static void test_prom_render_cap_rolls_back(void **state)
{
	(void)state;
	json_t *m = load("{\"SinkWriteCount\":\"5\"}");
	struct prom_job j = {.id = "1", .state_name = "RUNNING", .metrics = m};
	struct buf b;

	buf_init(&b, 200);
	assert_int_equal(buf_puts(&b, "keep\n"), 0);
	assert_int_equal(prom_render_jobs(&b, &j, 1), -EFBIG);
	assert_int_equal(b.len, 5);
	assert_string_equal(b.data, "keep\n");
	buf_release(&b);
	json_decref(m);
}

static void test_prom_render_no_storage_no_newest(void **state)
{
	(void)state;
	struct prom_job jobs[] = {
		{.id = "1", .has_storage = 1, .newest_ckpt_ms = 0},
		{.id = "2", .has_storage = 0, .newest_ckpt_ms = 5000},
	};
	char *got = render(jobs, 2);

	assert_null(strstr(got, "newest_checkpoint"));
	assert_non_null(
		strstr(got, "stfs_job_storage_objects{job_id=\"1\"} 0\n"));
	assert_null(strstr(got, "job_id=\"2\""));
	free(got);
}

/* The IMap WAL series: one sample per map and family, six verdicts each,
 * labels escaped; nothing for no map. */
static void test_prom_render_imap(void **state)
{
	struct prom_imap_map m[2] = {
		{.cluster = "seatunnel", .map = "engine_a"},
		{.cluster = "c\"x", .map = "m"},
	};
	struct buf b;

	(void)state;
	m[0].fig.bytes = 300;
	m[0].fig.reclaim_bytes = 100;
	m[0].fig.superseded_bytes = 200;
	m[0].fig.by_verdict[0] = 1;
	m[0].fig.by_verdict[2] = 3;
	m[1].fig.failed = true;
	buf_init(&b, 1 << 20);
	assert_int_equal(prom_render_imap(&b, m, 0), 0);
	assert_int_equal(b.len, 0);
	assert_int_equal(prom_render_imap(&b, m, 2), 0);
	assert_non_null(strstr(
		b.data,
		"# TYPE stfs_imap_reclaimable_bytes gauge\n"
		"stfs_imap_reclaimable_bytes{cluster=\"seatunnel\","
		"map=\"engine_a\"} 100\n"
		"stfs_imap_reclaimable_bytes{cluster=\"c\\\"x\",map=\"m\"} 0\n"));
	{
		static const char *const want[] = {
			"stfs_imap_superseded_bytes{cluster=\"seatunnel\","
			"map=\"engine_a\"} 200\n",
			"stfs_imap_wal_bytes{cluster=\"seatunnel\","
			"map=\"engine_a\"} 300\n",
			"stfs_imap_load_failed{cluster=\"c\\\"x\",map=\"m\"} 1\n",
			"stfs_imap_regions{cluster=\"seatunnel\","
			"map=\"engine_a\",verdict=\"EBUSY\"} 3\n",
			"stfs_imap_regions{cluster=\"seatunnel\","
			"map=\"engine_a\",verdict=\"EACCES\"} 0\n",
		};

		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			assert_non_null(strstr(b.data, want[k]));
	}
	{
		size_t n = 0;

		for (const char *p = b.data;
		     (p = strstr(p, "\nstfs_imap_regions{")); p++)
			n++;
		assert_int_equal(n, 2 * IMAPSUM_NV);
	}
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prom_render_exact_small_job),
		cmocka_unit_test(test_prom_escape_label_specials_and_utf8),
		cmocka_unit_test(test_prom_render_escapes_labels),
		cmocka_unit_test(test_prom_render_skips_garbage),
		cmocka_unit_test(
			test_prom_render_groups_families_of_three_jobs),
		cmocka_unit_test(test_prom_render_summary_counts_dead_jobs),
		cmocka_unit_test(test_prom_render_empty_input),
		cmocka_unit_test(test_prom_render_number_forms),
		cmocka_unit_test(test_prom_metric_name_snake_case),
		cmocka_unit_test(test_prom_render_types_and_suffixes),
		cmocka_unit_test(test_prom_render_avoids_lint_segments),
		cmocka_unit_test(test_prom_render_name_clash_keeps_one_family),
		cmocka_unit_test(test_prom_render_duplicate_job_ids_once),
		cmocka_unit_test(test_prom_render_cap_rolls_back),
		cmocka_unit_test(test_prom_render_no_storage_no_newest),
		cmocka_unit_test(test_prom_render_drops_negative_counters),
		cmocka_unit_test(test_prom_render_vertex_and_table_labels),
		cmocka_unit_test(test_prom_render_imap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
