/*
 * Unit tests for conf/conf.c: defaults, every key, durations, the engine
 * list, the file parser's errors and line numbers, secret file modes, the
 * seatunnel.yaml / hazelcast.yaml imports, validation and rendering.
 * Run from the repository root (fixtures are in tests/fixtures/conf/).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/buf.h"
#include "conf/conf.h"
#include "conf/hsite.h"

#define FIX "tests/fixtures/conf/"

static int setup(void **state)
{
	struct stfs_conf *c = calloc(1, sizeof(*c));

	if (!c || conf_init_defaults(c)) {
		free(c);
		return -1;
	}
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct stfs_conf *c = *state;

	conf_release(c);
	free(c);
	return 0;
}

static int parse(struct stfs_conf *c, const char *text, struct conf_err *e)
{
	return conf_parse_mem(c, "t.conf", text, strlen(text), e);
}

static char *render(const struct stfs_conf *c)
{
	struct buf b;

	buf_init(&b, BUF_DEFAULT_MAX);
	assert_int_equal(conf_render(c, &b), 0);
	return buf_detach(&b, NULL);
}

/* A temp file with `text` and `mode`; returns its path (free() it). */
static char *tmpfile_with(const char *text, mode_t mode)
{
	char tmpl[] = "/tmp/test_conf.XXXXXX";
	int fd = mkstemp(tmpl);
	size_t n = strlen(text);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, n), (ssize_t)n);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return strdup(tmpl);
}

/* A copy of fixture `name` with `mode` (git keeps no 0600): free() it. */
static char *fixture_copy(const char *name, mode_t mode)
{
	char path[256], *text, *p;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), FIX "%s", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	p = tmpfile_with(text, mode);
	free(text);
	return p;
}

static void unlink_free(char *p)
{
	unlink(p);
	free(p);
}

/* ---- defaults --------------------------------------------------------- */

static void test_conf_defaults(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_string_equal(c->checkpoint,
			    "file:///tmp/seatunnel/checkpoint_snapshot/");
	assert_int_equal(c->n_engines, 1);
	assert_string_equal(c->engines[0], "http://127.0.0.1:8080");
	assert_string_equal(c->imap, "file:///tmp/seatunnel/imap/");
	assert_string_equal(c->state_dir, "/var/lib/stfs");
	assert_null(c->delete_group);
	assert_null(c->audit_log);
	assert_false(c->ro);
	assert_int_equal(c->timeout_ms, 5000);
	assert_int_equal(c->connect_timeout_ms, 2000);
	assert_int_equal(c->engine_ttl_ms, 3000);
	assert_int_equal(c->storage_ttl_ms, 5000);
	assert_int_equal(c->cache_ttl_ms, 3000);
	assert_int_equal(c->decision_age_ms, 2000);
	assert_int_equal(c->orphan_grace_s, 600);
	assert_int_equal(c->retries, 2);
	assert_int_equal(c->imap_grace_s, 3600);
	assert_int_equal(c->engine_max_mb, 32);
	assert_int_equal(c->engine_max_jobs, 1000000);
	assert_false(conf_is_explicit(c, "engine"));
	assert_int_equal(conf_validate(c, &e), 0);
}

/* ---- keys ------------------------------------------------------------- */

static void test_conf_set_each_key(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	static const struct {
		const char *k, *v;
	} kv[] = {
		{"checkpoint", "hdfs://nn:9870/seatunnel/ckpt"},
		{"imap", "s3://bucket/imap"},
		{"seatunnel_yaml", "seatunnel.yaml"},
		{"hazelcast_yaml", "/etc/seatunnel/hazelcast.yaml"},
		{"state_dir", "/srv/stfs"},
		{"delete_group", "stfs-admins"},
		{"audit_log", "/var/log/stfs-audit.log"},
		{"ro", "yes"},
		{"timeout", "7s"},
		{"connect_timeout", "1500"},
		{"engine_ttl", "1m"},
		{"storage_ttl", "250ms"},
		{"cache_ttl", "0"},
		{"decision_age", "1s"},
		{"orphan_grace", "2h"},
		{"retries", "5"},
		{"engine_user", "ops"},
		{"engine_password", "pw"},
		{"access_key", "AK"},
		{"secret_key", "SK"},
		{"session_token", "TOK"},
		{"credentials_file", "/etc/stfs/creds"},
		{"endpoint", "https://minio.local:9000"},
		{"region", "eu-west-1"},
		{"ca_file", "/etc/ssl/ca.pem"},
		{"path_style", "on"},
	};

	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		assert_int_equal(conf_set(c, kv[i].k, kv[i].v, &e), 0);
		assert_true(conf_is_explicit(c, kv[i].k));
	}
	assert_string_equal(c->checkpoint, "hdfs://nn:9870/seatunnel/ckpt/");
	assert_string_equal(c->imap, "s3://bucket/imap/");
	assert_string_equal(c->seatunnel_yaml, "seatunnel.yaml");
	assert_string_equal(c->hazelcast_yaml, "/etc/seatunnel/hazelcast.yaml");
	assert_string_equal(c->state_dir, "/srv/stfs");
	assert_string_equal(c->delete_group, "stfs-admins");
	assert_string_equal(c->audit_log, "/var/log/stfs-audit.log");
	assert_true(c->ro);
	assert_int_equal(c->timeout_ms, 7000);
	assert_int_equal(c->connect_timeout_ms, 1500);
	assert_int_equal(c->engine_ttl_ms, 60000);
	assert_int_equal(c->storage_ttl_ms, 250);
	assert_int_equal(c->cache_ttl_ms, 0);
	assert_int_equal(c->decision_age_ms, 1000);
	assert_int_equal(c->orphan_grace_s, 7200);
	assert_int_equal(c->retries, 5);
	assert_string_equal(c->engine_user, "ops");
	assert_string_equal(c->engine_password, "pw");
	assert_string_equal(c->access_key, "AK");
	assert_string_equal(c->secret_key, "SK");
	assert_string_equal(c->session_token, "TOK");
	assert_string_equal(c->credentials_file, "/etc/stfs/creds");
	assert_string_equal(c->endpoint, "https://minio.local:9000");
	assert_string_equal(c->region, "eu-west-1");
	assert_string_equal(c->ca_file, "/etc/ssl/ca.pem");
	assert_true(c->path_style);
}

static void test_conf_set_unknown_key(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(conf_set(c, "allow_other", NULL, &e), -ENOENT);
	assert_int_equal(conf_set(c, "default_permissions", "1", &e), -ENOENT);
	assert_int_equal(conf_set(c, "Checkpoint", "file:///x", &e), -ENOENT);
}

static void test_conf_set_flags(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	static const char *const yes[] = {"yes", "true", "1", "on", "TRUE"};
	static const char *const no[] = {"no", "false", "0", "off", "Off"};

	assert_int_equal(conf_set(c, "ro", NULL, &e), 0);
	assert_true(c->ro);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(conf_set(c, "ro", no[i], &e), 0);
		assert_false(c->ro);
		assert_int_equal(conf_set(c, "path_style", yes[i], &e), 0);
		assert_true(c->path_style);
	}
	assert_int_equal(conf_set(c, "ro", "maybe", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "ro"));
	/* main() passes "" for a bare `-o ro` */
	assert_int_equal(conf_set(c, "ro", "no", &e), 0);
	assert_int_equal(conf_set(c, "ro", "", &e), 0);
	assert_true(c->ro);
	assert_int_equal(conf_set(c, "timeout", NULL, &e), -EINVAL);
}

static void test_conf_set_uris(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	static const struct {
		const char *in, *out;
	} ok[] = {
		{"file:///data/ckpt", "file:///data/ckpt/"},
		{"file:///data/ckpt/", "file:///data/ckpt/"},
		{"file:/tmp/hadoop/style", "file:///tmp/hadoop/style/"},
		{"file://localhost/x", "file:///x/"},
		{"hdfs://nn:9870", "hdfs://nn:9870/"},
		{"webhdfs://[::1]:9870/ns", "webhdfs://[::1]:9870/ns/"},
		{"s3://b", "s3://b/"},
		{"s3a://my-bucket/a/b", "s3a://my-bucket/a/b/"},
		{"oss://b/ns", "oss://b/ns/"},
		{"cos://b-1250000000/ns", "cos://b-1250000000/ns/"},
		{"cosn://b/ns", "cosn://b/ns/"},
		{"gs://b/ns", "gs://b/ns/"},
	};
	static const char *const bad[] = {
		"",
		"/tmp/x",
		"ftp://h/x",
		"file://",
		"file:///",
		"file://host/x",
		"s3://",
		"s3:///path",
		"hdfs:///x",
		"hdfs://nn:0/x",
		"hdfs://nn:99999/x",
		"hdfs://nn:9x/x",
		"s3://b/a/../b",
		"s3://b/x?y",
		"s3://b/a b",
		"s3://user@b/x",
		"s3://b\n/x",
		"HTTP://x/y",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(conf_set(c, "checkpoint", ok[i].in, &e), 0);
		assert_string_equal(c->checkpoint, ok[i].out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = conf_set(c, "imap", bad[i], &e);

		if (rc != -EINVAL)
			fail_msg("imap=%s accepted", bad[i]);
		assert_string_equal(c->imap, "file:///tmp/seatunnel/imap/");
	}
	assert_int_equal(conf_set(c, "imap", "ftp://h/x", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "scheme"));
	assert_string_equal(e.file, "");
	assert_int_equal(e.line, 0);
}

static void test_conf_set_paths(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(conf_set(c, "state_dir", "relative/dir", &e), -EINVAL);
	assert_int_equal(conf_set(c, "state_dir", "", &e), -EINVAL);
	assert_string_equal(c->state_dir, "/var/lib/stfs");
	assert_int_equal(conf_set(c, "audit_log", "audit.log", &e), -EINVAL);
	assert_int_equal(conf_set(c, "delete_group", "wheel", &e), 0);
	/* an empty optional value unsets it */
	assert_int_equal(conf_set(c, "delete_group", "", &e), 0);
	assert_null(c->delete_group);
	assert_int_equal(conf_set(c, "delete_group", "a\tb", &e), -EINVAL);
}

/* ---- durations -------------------------------------------------------- */

static void test_conf_duration_suffixes(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(conf_set(c, "timeout", "1500", &e), 0);
	assert_int_equal(c->timeout_ms, 1500);
	assert_int_equal(conf_set(c, "timeout", "1500ms", &e), 0);
	assert_int_equal(c->timeout_ms, 1500);
	assert_int_equal(conf_set(c, "timeout", "3s", &e), 0);
	assert_int_equal(c->timeout_ms, 3000);
	assert_int_equal(conf_set(c, "timeout", "2m", &e), 0);
	assert_int_equal(c->timeout_ms, 120000);
	assert_int_equal(conf_set(c, "timeout", "1h", &e), 0);
	assert_int_equal(c->timeout_ms, 3600000);
	assert_int_equal(conf_set(c, "orphan_grace", "90", &e), 0);
	assert_int_equal(c->orphan_grace_s, 90);
	assert_int_equal(conf_set(c, "orphan_grace", "10m", &e), 0);
	assert_int_equal(c->orphan_grace_s, 600);
	assert_int_equal(conf_set(c, "orphan_grace", "3000ms", &e), 0);
	assert_int_equal(c->orphan_grace_s, 3);
	assert_int_equal(conf_set(c, "orphan_grace", "1h", &e), 0);
	assert_int_equal(c->orphan_grace_s, 3600);
	assert_int_equal(conf_set(c, "imap_grace", "10m", &e), 0);
	assert_int_equal(c->imap_grace_s, 600);
	assert_int_equal(conf_set(c, "engine_max_mb", "64", &e), 0);
	assert_int_equal(c->engine_max_mb, 64);
	assert_int_equal(conf_set(c, "engine_max_mb", "0", &e), -EINVAL);
	assert_int_equal(conf_set(c, "engine_max_jobs", "5000", &e), 0);
	assert_int_equal(c->engine_max_jobs, 5000);
}

static void test_conf_duration_rejects(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	static const struct {
		const char *k, *v;
	} bad[] = {
		{"timeout", "0"},
		{"timeout", "0s"},
		{"timeout", "-5"},
		{"timeout", "+5"},
		{"timeout", " 5"},
		{"timeout", "5 s"},
		{"timeout", "5sec"},
		{"timeout", "5d"},
		{"timeout", "abc"},
		{"timeout", "0x10"},
		{"timeout", "1.5s"},
		{"timeout", "2h"},
		{"timeout", "99999999999999999999999"},
		{"timeout", "18446744073709551615h"},
		{"timeout", "4294967296"},
		{"connect_timeout", "0"},
		{"decision_age", "11m"},
		{"orphan_grace", "1500ms"},
		{"orphan_grace", "367d"},
		{"orphan_grace", "9000h"},
		{"retries", "11"},
		{"retries", "-1"},
		{"retries", "2s"},
		{"retries", ""},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = conf_set(c, bad[i].k, bad[i].v, &e);

		if (rc != -EINVAL)
			fail_msg("%s=%s accepted", bad[i].k, bad[i].v);
		assert_true(strlen(e.msg) > 0);
	}
	assert_int_equal(c->timeout_ms, 5000);
	assert_int_equal(c->orphan_grace_s, 600);
	assert_int_equal(c->retries, 2);
	assert_int_equal(conf_set(c, "cache_ttl", "0", &e), 0);
	assert_int_equal(conf_set(c, "retries", "0", &e), 0);
	assert_int_equal(c->retries, 0);
}

/* ---- engines ---------------------------------------------------------- */

static void test_conf_engine_replace_then_append(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(conf_set(c, "engine", "http://m1:8080/", &e), 0);
	assert_int_equal(c->n_engines, 1);
	assert_string_equal(c->engines[0], "http://m1:8080");
	assert_int_equal(conf_set(c, "engine", "https://m2:8443/api", &e), 0);
	assert_int_equal(c->n_engines, 2);
	assert_string_equal(c->engines[0], "http://m1:8080");
	assert_string_equal(c->engines[1], "https://m2:8443/api");
	assert_true(conf_is_explicit(c, "engine"));
}

static void test_conf_engine_command_line_replaces_file(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(parse(c,
			       "engine = http://f1:8080\n"
			       "engine = http://f2:8080\n",
			       &e),
			 0);
	assert_int_equal(c->n_engines, 2);
	/* the command line, after the file: replaces, then appends */
	assert_int_equal(conf_set(c, "engine", "http://c1:8080", &e), 0);
	assert_int_equal(conf_set(c, "engine", "http://c2:8080", &e), 0);
	assert_int_equal(c->n_engines, 2);
	assert_string_equal(c->engines[0], "http://c1:8080");
	assert_string_equal(c->engines[1], "http://c2:8080");
	/* a file without engine lines keeps the list */
	assert_int_equal(parse(c, "region = r\n", &e), 0);
	assert_int_equal(c->n_engines, 2);
}

static void test_conf_engine_bad_and_limit(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	char url[64];

	assert_int_equal(conf_set(c, "engine", "ftp://m1", &e), -EINVAL);
	assert_int_equal(conf_set(c, "engine", "http://", &e), -EINVAL);
	assert_int_equal(conf_set(c, "engine", "http://:8080", &e), -EINVAL);
	assert_int_equal(conf_set(c, "engine", "http://u:p@m1:8080", &e),
			 -EINVAL);
	assert_int_equal(conf_set(c, "engine", "m1:8080", &e), -EINVAL);
	assert_int_equal(conf_set(c, "engine", "", &e), -EINVAL);
	/* refused values neither replace nor append */
	assert_int_equal(c->n_engines, 1);
	assert_string_equal(c->engines[0], "http://127.0.0.1:8080");
	for (int i = 0; i < CONF_MAX_ENGINES; i++) {
		snprintf(url, sizeof(url), "http://m%d:8080", i);
		assert_int_equal(conf_set(c, "engine", url, &e), 0);
	}
	assert_int_equal(c->n_engines, CONF_MAX_ENGINES);
	assert_int_equal(conf_set(c, "engine", "http://one-too-many", &e),
			 -EINVAL);
	assert_int_equal(c->n_engines, CONF_MAX_ENGINES);
	assert_string_equal(c->engines[0], "http://m0:8080");
}

/* ---- the file parser -------------------------------------------------- */

static void test_conf_parse_basic(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	const char *text = "# stfs.conf\n"
			   "\n"
			   "checkpoint = s3://ckpt/seatunnel/checkpoint\n"
			   "  engine=http://m1:8080   # first master\n"
			   "engine\t=\thttp://m2:8080\n"
			   "ro = off\n"
			   "timeout = 10s\n"
			   "delete_group = ops#1\n"
			   "   # indented comment\n";

	assert_int_equal(parse(c, text, &e), 0);
	assert_string_equal(c->checkpoint, "s3://ckpt/seatunnel/checkpoint/");
	assert_int_equal(c->n_engines, 2);
	assert_string_equal(c->engines[0], "http://m1:8080");
	assert_string_equal(c->engines[1], "http://m2:8080");
	assert_false(c->ro);
	assert_int_equal(c->timeout_ms, 10000);
	assert_string_equal(c->delete_group, "ops#1");
}

static void test_conf_parse_quotes(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(parse(c,
			       "delete_group = \"my group # x\"  # c\n"
			       "engine_user = \"\"\n"
			       "region=\"eu-west-1\"\n",
			       &e),
			 0);
	assert_string_equal(c->delete_group, "my group # x");
	assert_null(c->engine_user);
	assert_string_equal(c->region, "eu-west-1");

	assert_int_equal(parse(c, "region = \"open\n", &e), -EINVAL);
	assert_int_equal(e.line, 1);
	assert_non_null(strstr(e.msg, "quote"));
	assert_int_equal(parse(c, "\nregion = \"a\" b\n", &e), -EINVAL);
	assert_int_equal(e.line, 2);
}

static void test_conf_parse_crlf(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(parse(c,
			       "region = r1\r\nretries = 3\r\n\r\n"
			       "engine = http://x:1/\r\n",
			       &e),
			 0);
	assert_string_equal(c->region, "r1");
	assert_int_equal(c->retries, 3);
	assert_string_equal(c->engines[0], "http://x:1");
}

static void test_conf_parse_error_lines(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(parse(c, "# a\nregion = r\nnot a pair\n", &e),
			 -EINVAL);
	assert_string_equal(e.file, "t.conf");
	assert_int_equal(e.line, 3);
	assert_non_null(strstr(e.msg, "key = value"));

	assert_int_equal(parse(c, "\n\n\n\ntimeout = soon\n", &e), -EINVAL);
	assert_int_equal(e.line, 5);
	assert_non_null(strstr(e.msg, "timeout"));

	assert_int_equal(parse(c, "a\n", &e), -EINVAL);
	assert_int_equal(e.line, 1);
	assert_int_equal(parse(c, " = v\n", &e), -EINVAL);
	assert_int_equal(parse(c, "re gion = v\n", &e), -EINVAL);

	/* a line that is not terminated still counts */
	assert_int_equal(parse(c, "region = r\r\nretries = x", &e), -EINVAL);
	assert_int_equal(e.line, 2);
}

static void test_conf_parse_unknown_key(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(parse(c, "region = r\nallow_other = 1\n", &e),
			 -EINVAL);
	assert_int_equal(e.line, 2);
	assert_string_equal(e.msg, "unknown key 'allow_other'");
}

static void test_conf_parse_nul_and_long_lines(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	static const char nul[] = "region = r\nregion = a\0b\n";
	size_t n = CONF_MAX_LINE + 20;
	char *big = malloc(n + 1);

	assert_int_equal(conf_parse_mem(c, "n", nul, sizeof(nul) - 1, &e),
			 -EINVAL);
	assert_int_equal(e.line, 2);
	assert_non_null(strstr(e.msg, "NUL"));

	assert_non_null(big);
	memset(big, ' ', n);
	memcpy(big, "\nregion = ", 10);
	big[n - 1] = 'x';
	big[n] = '\0';
	assert_int_equal(parse(c, big, &e), -EINVAL);
	assert_int_equal(e.line, 2);
	assert_non_null(strstr(e.msg, "too long"));

	/* exactly CONF_MAX_LINE bytes (plus CRLF) is fine */
	memset(big, 'a', n);
	memcpy(big, "region = ", 9);
	memcpy(big + CONF_MAX_LINE, "\r\n", 3);
	assert_int_equal(parse(c, big, &e), 0);
	assert_int_equal(strlen(c->region), CONF_MAX_LINE - 9);
	free(big);
}

static void test_conf_parse_secret_not_in_error(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(parse(c, "secret_key = s3cr\x01t-value\n", &e),
			 -EINVAL);
	assert_null(strstr(e.msg, "s3cr"));
	assert_non_null(strstr(e.msg, "secret_key"));
}

/* ---- files ------------------------------------------------------------ */

static void test_conf_load_file_ok_and_missing(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	char *p = tmpfile_with("retries = 4\nsecret_key = SK\naccess_key = A\n",
			       0600);

	assert_int_equal(conf_load_file(c, p, &e), 0);
	assert_int_equal(c->retries, 4);
	assert_string_equal(c->secret_key, "SK");
	unlink(p);
	assert_int_equal(conf_load_file(c, p, &e), -ENOENT);
	assert_string_equal(e.file, p);
	assert_non_null(strstr(e.msg, strerror(ENOENT)));
	free(p);

	assert_int_equal(conf_load_file(c, "/tmp", &e), -EINVAL);
}

static void test_conf_load_file_secret_mode(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	char *p = tmpfile_with("region = r\n"
			       "engine_user = u\n"
			       "engine_password = hunter2\n",
			       0640);
	char *q = tmpfile_with("region = r\nretries = 1\n", 0644);

	assert_int_equal(conf_load_file(c, p, &e), -EACCES);
	assert_string_equal(e.file, p);
	assert_int_equal(e.line, 3);
	assert_non_null(strstr(e.msg, "chmod 600"));
	assert_null(strstr(e.msg, "hunter2"));
	/* the same file with 0600 is accepted */
	assert_int_equal(chmod(p, 0600), 0);
	assert_int_equal(conf_load_file(c, p, &e), 0);
	assert_string_equal(c->engine_password, "hunter2");
	/* a world-readable file without secrets is fine */
	assert_int_equal(conf_load_file(c, q, &e), 0);
	assert_int_equal(c->retries, 1);
	unlink(p);
	unlink(q);
	free(p);
	free(q);
}

/* ---- yaml imports ----------------------------------------------------- */

static void test_conf_import_seatunnel_shipped(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	/* default-like values first, so the import visibly changes them */
	c->checkpoint[0] = 'x';
	assert_int_equal(
		conf_import_seatunnel_yaml(c, FIX "seatunnel.yaml", &e), 0);
	assert_string_equal(c->checkpoint,
			    "file:///tmp/seatunnel/checkpoint_snapshot/");
	assert_int_equal(c->n_engines, 1);
	assert_string_equal(c->engines[0], "http://127.0.0.1:8080");
	assert_string_equal(c->engine_http_port, "8080");
	assert_string_equal(c->seatunnel_yaml, FIX "seatunnel.yaml");
	assert_null(c->secret_key);
	assert_false(conf_is_explicit(c, "checkpoint"));
	assert_int_equal(conf_validate(c, &e), 0);
}

static void test_conf_import_seatunnel_s3(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	char *r;
	char *s3y = fixture_copy("seatunnel-s3.yaml", 0600);

	assert_int_equal(conf_import_seatunnel_yaml(c, s3y, &e), 0);
	unlink_free(s3y);
	assert_string_equal(c->checkpoint,
			    "s3://seatunnel-ckpt/seatunnel/checkpoint/");
	assert_string_equal(c->endpoint, "s3.cn-north-1.amazonaws.com.cn");
	assert_string_equal(c->region, "cn-north-1");
	assert_string_equal(c->access_key, "AKIAFIXTUREACCESSKEY");
	assert_string_equal(c->secret_key, "FIXTURE-s3-secret-do-not-leak");
	assert_true(c->path_style);
	assert_string_equal(c->engines[0], "http://127.0.0.1:8081/seatunnel");
	assert_string_equal(c->engine_user, "ops");
	assert_string_equal(c->engine_password, "FIXTURE-http-password");
	assert_int_equal(conf_validate(c, &e), 0);

	r = render(c);
	assert_null(strstr(r, "FIXTURE-s3-secret"));
	assert_null(strstr(r, "FIXTURE-http-password"));
	assert_non_null(strstr(r, "secret_key = <redacted>\n"));
	free(r);
}

static void test_conf_import_explicit_wins(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	char *s3y = fixture_copy("seatunnel-s3.yaml", 0600);

	assert_int_equal(conf_set(c, "engine", "http://m9:8080", &e), 0);
	assert_int_equal(conf_set(c, "region", "us-east-2", &e), 0);
	assert_int_equal(conf_set(c, "checkpoint", "file:///mine", &e), 0);
	assert_int_equal(conf_import_seatunnel_yaml(c, s3y, &e), 0);
	unlink_free(s3y);
	assert_string_equal(c->checkpoint, "file:///mine/");
	assert_int_equal(c->n_engines, 1);
	assert_string_equal(c->engines[0], "http://m9:8080");
	assert_string_equal(c->region, "us-east-2");
	/* what the user did not set is imported */
	assert_string_equal(c->access_key, "AKIAFIXTUREACCESSKEY");

	/* and an explicit value set after the import still replaces it */
	assert_int_equal(conf_set(c, "engine", "http://m8:8080", &e), 0);
	assert_int_equal(c->n_engines, 2);
}

static void test_conf_import_then_explicit_engine(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	char *s3y = fixture_copy("seatunnel-s3.yaml", 0600);

	assert_int_equal(conf_import_seatunnel_yaml(c, s3y, &e), 0);
	unlink_free(s3y);
	/* the first explicit engine replaces the imported one */
	assert_int_equal(conf_set(c, "engine", "http://m1:8080", &e), 0);
	assert_int_equal(c->n_engines, 1);
	assert_string_equal(c->engines[0], "http://m1:8080");
}

static void test_conf_import_seatunnel_variants(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	static const struct {
		const char *yaml, *checkpoint;
	} v[] = {
		{"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		 "    type: hdfs\n    plugin-config:\n"
		 "     namespace: /ns/ckpt\n     storage.type: hdfs\n"
		 "     fs.defaultFS: hdfs://nn:9000\n",
		 "hdfs://nn:9000/ns/ckpt/"},
		{"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		 "    type: hdfs\n    plugin-config:\n"
		 "     storage.type: oss\n     oss.bucket: oss://ob\n"
		 "     namespace: /st/ck\n",
		 "oss://ob/st/ck/"},
		{"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		 "    type: hdfs\n    plugin-config:\n"
		 "     storage.type: cos\n     cos.bucket: cosn://cb-125\n"
		 "     namespace: /st/ck\n"
		 "     fs.cosn.bucket.region: ap-guangzhou\n",
		 "cos://cb-125/st/ck/"},
		{"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		 "    type: hdfs\n    plugin-config:\n"
		 "     storage.type: gcs\n     gcs.bucket: gs://gb\n"
		 "     namespace: /st/ck\n",
		 "gs://gb/st/ck/"},
		/* storage.type defaults to local, fs.defaultFS to file:/// */
		{"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		 "    type: hdfs\n    plugin-config:\n"
		 "     namespace: /data/ck\n",
		 "file:///data/ck/"},
		/* no checkpoint section: localfile with an empty config */
		{"seatunnel:\n engine:\n  backup-count: 1\n",
		 "file:///tmp/seatunnel/checkpoint/"},
		{"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		 "    type: localfile\n    plugin-config:\n"
		 "     namespace: /var/st\n",
		 "file:///var/st/"},
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int rc = conf_import_seatunnel_yaml_mem(c, "y", v[i].yaml,
							strlen(v[i].yaml), &e);

		if (rc)
			fail_msg("variant %zu: %d %s", i, rc, e.msg);
		assert_string_equal(c->checkpoint, v[i].checkpoint);
	}
	assert_string_equal(c->region, "ap-guangzhou");
}

/* HDFS HA keys of a seatunnel.yaml give the namenodes' HTTP addresses */
static void test_conf_import_hdfs_ha(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	const char *head =
		"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		"    type: hdfs\n    plugin-config:\n"
		"     namespace: /st/ck/\n     storage.type: hdfs\n"
		"     fs.defaultFS: hdfs://prod\n"
		"     seatunnel.hadoop.dfs.nameservices: other,prod\n"
		"     seatunnel.hadoop.dfs.ha.namenodes.prod: nn1, nn2,nn3\n";
	const char *rpc =
		"     seatunnel.hadoop.dfs.namenode.rpc-address.prod.nn1: "
		"a.example:8020\n"
		"     seatunnel.hadoop.dfs.namenode.http-address.prod.nn2: "
		"b.example:50070\n"
		"     seatunnel.hadoop.dfs.namenode.rpc-address.prod.nn2: "
		"b.example:8020\n"
		"     seatunnel.hadoop.dfs.namenode.rpc-address.prod.nn3: "
		"c.example:8020\n";
	const char *missing =
		"     seatunnel.hadoop.dfs.namenode.rpc-address.prod.nn1: "
		"a.example:8020\n";
	char y[2048];
	int rc;

	snprintf(y, sizeof(y), "%s%s", head, rpc);
	rc = conf_import_seatunnel_yaml_mem(c, "y", y, strlen(y), &e);
	if (rc)
		fail_msg("%d %s", rc, e.msg);
	assert_string_equal(c->checkpoint, "hdfs://prod/st/ck/");
	/* rpc-address: the host only (the backend adds hdfs_http_port);
	 * http-address wins over rpc-address */
	assert_string_equal(c->namenodes,
			    "a.example,b.example:50070,c.example");
	/* a namenode with neither address is an error */
	snprintf(y, sizeof(y), "%s%s", head, missing);
	assert_int_equal(
		conf_import_seatunnel_yaml_mem(c, "y", y, strlen(y), &e),
		-EINVAL);
	assert_non_null(strstr(e.msg, "nn2"));
	/* an explicit namenodes is kept */
	assert_int_equal(conf_set(c, "namenodes", "x:1", &e), 0);
	snprintf(y, sizeof(y), "%s%s", head, rpc);
	assert_int_equal(
		conf_import_seatunnel_yaml_mem(c, "y", y, strlen(y), &e), 0);
	assert_string_equal(c->namenodes, "x:1");
}

/* one import into a fresh conf (explicit settings `pre`, "k=v;k=v") */
static int import_fresh(const char *pre, const char *yaml, bool hz, char **ckpt,
			char **nns, struct conf_err *e)
{
	struct stfs_conf c;
	char buf[256], *sp = NULL;
	int rc;

	*ckpt = *nns = NULL;
	if (conf_init_defaults(&c))
		return -ENOMEM;
	snprintf(buf, sizeof(buf), "%s", pre);
	for (char *kv = strtok_r(buf, ";", &sp); kv;
	     kv = strtok_r(NULL, ";", &sp)) {
		char *eq = strchr(kv, '=');

		*eq = '\0';
		if (conf_set(&c, kv, eq + 1, e)) {
			conf_release(&c);
			return -EINVAL;
		}
	}
	rc = hz ? conf_import_hazelcast_yaml_mem(&c, "y", yaml, strlen(yaml), e)
		: conf_import_seatunnel_yaml_mem(&c, "y", yaml, strlen(yaml),
						 e);
	if (!rc) {
		*ckpt = strdup(hz ? c.imap : c.checkpoint);
		*nns = c.namenodes ? strdup(c.namenodes) : NULL;
	}
	conf_release(&c);
	return rc;
}

/* variant i of an import_fresh() gave rc 0, checkpoint `ckpt` and
 * namenodes `nns` (NULL: none); frees ck and nn */
static void expect_import(size_t i, int rc, const struct conf_err *e, char *ck,
			  char *nn, const char *ckpt, const char *nns)
{
	if (rc)
		fail_msg("variant %zu: %d %s:%d %s", i, rc, e->file, e->line,
			 e->msg);
	if (strcmp(ck, ckpt) || (nns ? !nn || strcmp(nn, nns) : nn != NULL))
		fail_msg("variant %zu: checkpoint %s namenodes %s", i, ck,
			 nn ? nn : "(none)");
	free(ck);
	free(nn);
}

/*
 * README "HDFS", TLS: dfs.http.policy HTTPS_ONLY makes an imported HDFS
 * store swebhdfs:// on the namenodes' https-address (default port 9871);
 * HTTP_AND_HTTPS stays http, as Hadoop's own clients do; the scheme of an
 * explicit checkpoint= picks which addresses HA imports.
 */
static void test_conf_import_hdfs_https(void **state)
{
	static const char st[] =
		"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		"    type: hdfs\n    plugin-config:\n"
		"     namespace: /st/ck/\n     storage.type: hdfs\n";
	static const char ha[] =
		"     fs.defaultFS: hdfs://prod\n"
		"     seatunnel.hadoop.dfs.nameservices: prod\n"
		"     seatunnel.hadoop.dfs.ha.namenodes.prod: nn1,nn2,nn3\n"
		"     seatunnel.hadoop.dfs.namenode.rpc-address.prod.nn1: "
		"a.example:8020\n"
		"     seatunnel.hadoop.dfs.namenode.https-address.prod.nn1: "
		"a.example:9443\n"
		"     seatunnel.hadoop.dfs.namenode.rpc-address.prod.nn2: "
		"b.example:8020\n"
		"     seatunnel.hadoop.dfs.namenode.http-address.prod.nn2: "
		"b.example:50070\n"
		"     seatunnel.hadoop.dfs.namenode.rpc-address.prod.nn3: "
		"c.example:8020\n"
		"     seatunnel.hadoop.dfs.namenode.https-address.prod.nn3: "
		"0.0.0.0:9871\n";
	static const struct {
		const char *pre, *policy, *rest, *ckpt, *nns;
	} v[] = {
		/* one namenode: the host of fs.defaultFS, https port 9871 */
		{"", "HTTPS_ONLY",
		 "     fs.defaultFS: hdfs://nn1.example:8020\n",
		 "swebhdfs://nn1.example:9871/st/ck/", NULL},
		/* its https-address; a wildcard host is fs.defaultFS's */
		{"", "https_only",
		 "     fs.defaultFS: hdfs://nn1.example:8020\n"
		 "     seatunnel.hadoop.dfs.namenode.https-address: "
		 "0.0.0.0:50470\n",
		 "swebhdfs://nn1.example:50470/st/ck/", NULL},
		{"", "HTTPS_ONLY",
		 "     fs.defaultFS: hdfs://nn1.example:8020\n"
		 "     seatunnel.hadoop.dfs.namenode.https-address: "
		 "web.example:9443\n",
		 "swebhdfs://web.example:9443/st/ck/", NULL},
		/* both served: http, as before */
		{"", "HTTP_AND_HTTPS",
		 "     fs.defaultFS: hdfs://nn1.example:8020\n",
		 "hdfs://nn1.example:8020/st/ck/", NULL},
		/* HA: each https-address (wildcard: the rpc host), else the
		 * rpc host (the backend adds 9871); never the http-address */
		{"", "HTTPS_ONLY", ha, "swebhdfs://prod/st/ck/",
		 "a.example:9443,b.example,c.example:9871"},
		{"", "HTTP_AND_HTTPS", ha, "hdfs://prod/st/ck/",
		 "a.example,b.example:50070,c.example"},
		/* an explicit checkpoint wins, its scheme picks the addresses
		 */
		{"checkpoint=hdfs://prod/mine/", "HTTPS_ONLY", ha,
		 "hdfs://prod/mine/", "a.example,b.example:50070,c.example"},
		{"checkpoint=swebhdfs://prod/mine/", "HTTP_ONLY", ha,
		 "swebhdfs://prod/mine/",
		 "a.example:9443,b.example,c.example:9871"},
		{"namenodes=x:1", "HTTPS_ONLY", ha, "swebhdfs://prod/st/ck/",
		 "x:1"},
	};
	static const char hz[] =
		"hazelcast:\n map:\n  engine*:\n   map-store:\n"
		"    properties:\n     type: hdfs\n     namespace: /st/imap\n"
		"     fs.defaultFS: hdfs://nn:8020\n"
		"     seatunnel.hadoop.dfs.http.policy: HTTPS_ONLY\n";
	static const char *const bad[] = {
		/* not a policy */
		"     fs.defaultFS: hdfs://nn1.example:8020\n"
		"     seatunnel.hadoop.dfs.http.policy: HTTPS\n",
		/* no port, a bad port */
		"     fs.defaultFS: hdfs://nn1.example:8020\n"
		"     seatunnel.hadoop.dfs.http.policy: HTTPS_ONLY\n"
		"     seatunnel.hadoop.dfs.namenode.https-address: web\n",
		"     fs.defaultFS: hdfs://nn1.example:8020\n"
		"     seatunnel.hadoop.dfs.http.policy: HTTPS_ONLY\n"
		"     seatunnel.hadoop.dfs.namenode.https-address: w:99999\n",
		/* a wildcard with no rpc host to put in its place */
		"     fs.defaultFS: hdfs://prod\n"
		"     seatunnel.hadoop.dfs.http.policy: HTTPS_ONLY\n"
		"     seatunnel.hadoop.dfs.nameservices: prod\n"
		"     seatunnel.hadoop.dfs.ha.namenodes.prod: nn1\n"
		"     seatunnel.hadoop.dfs.namenode.https-address.prod.nn1: "
		"0.0.0.0:9871\n",
	};
	struct conf_err e = {0};
	char y[4096], *ck, *nn;
	int rc;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(y, sizeof(y),
			 "%s     seatunnel.hadoop.dfs.http.policy: %s\n%s", st,
			 v[i].policy, v[i].rest);
		rc = import_fresh(v[i].pre, y, false, &ck, &nn, &e);
		expect_import(i, rc, &e, ck, nn, v[i].ckpt, v[i].nns);
	}
	/* the imap of a hazelcast.yaml alike */
	assert_int_equal(import_fresh("", hz, true, &ck, &nn, &e), 0);
	assert_string_equal(ck, "swebhdfs://nn:9871/st/imap/");
	free(ck);
	free(nn);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(y, sizeof(y), "%s%s", st, bad[i]);
		rc = import_fresh("", y, false, &ck, &nn, &e);
		if (rc != -EINVAL)
			fail_msg("bad %zu: rc %d", i, rc);
		assert_true(e.line > 0);
		assert_non_null(
			strstr(e.msg, i ? "address" : "dfs.http.policy"));
	}
}

/*
 * README "HDFS": an HDFS plugin-config's hdfs_site_path file is read as the
 * engine reads it: its https and HA keys count as if written as
 * seatunnel.hadoop.* (which win over the file, as Hadoop's set() wins over
 * a resource); what stfs cannot read is an error naming the file and line.
 */
static void test_conf_import_hdfs_site(void **state)
{
	static const char xml_https[] =
		"<?xml version=\"1.0\"?>\n<configuration>\n"
		" <property>\n  <name>dfs.http.policy</name>\n"
		"  <value> HTTPS_ONLY </value>\n </property>\n"
		" <property><name>dfs.namenode.https-address</name>"
		"<value>0.0.0.0:50470</value></property>\n"
		"</configuration>\n";
	static const char xml_ha[] =
		"<configuration>\n"
		"<property><name>dfs.http.policy</name>"
		"<value>HTTPS_ONLY</value></property>\n"
		"<property name=\"dfs.nameservices\" value=\"prod\"/>\n"
		"<property><name>dfs.ha.namenodes.prod</name>"
		"<value>nn1,nn2</value></property>\n"
		"<property><name>dfs.namenode.rpc-address.prod.nn1</name>"
		"<value>a.example:8020</value></property>\n"
		"<property><name>dfs.namenode.https-address.prod.nn1</name>"
		"<value>a.example:9443</value><final>true</final></property>\n"
		/* a final one stays: this later definition is ignored */
		"<property><name>dfs.namenode.https-address.prod.nn1</name>"
		"<value>z.example:1</value></property>\n"
		"<property><name>dfs.namenode.rpc-address.prod.nn2</name>"
		"<value>b.example:8020</value></property>\n"
		"</configuration>\n";
	static const char st[] =
		"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		"    type: hdfs\n    plugin-config:\n"
		"     namespace: /st/ck/\n     storage.type: hdfs\n";
	struct conf_err e = {0};
	char y[4096], *ck, *nn, *fa = tmpfile_with(xml_https, 0644),
				*fh = tmpfile_with(xml_ha, 0644);
	const struct {
		const char *fs, *site, *rest, *ckpt, *nns;
	} v[] = {
		/* the file's HTTPS_ONLY and https-address (wildcard: the host)
		 */
		{"hdfs://nn1.example:8020", fa, "",
		 "swebhdfs://nn1.example:50470/st/ck/", NULL},
		/* seatunnel.hadoop.* wins over the file */
		{"hdfs://nn1.example:8020", fa,
		 "     seatunnel.hadoop.dfs.http.policy: HTTP_AND_HTTPS\n",
		 "hdfs://nn1.example:8020/st/ck/", NULL},
		/* HA from the file: nameservice, namenodes, addresses; the
		 * final one kept */
		{"hdfs://prod", fh, "", "swebhdfs://prod/st/ck/",
		 "a.example:9443,b.example"},
	};
	int rc;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		snprintf(y, sizeof(y),
			 "%s     fs.defaultFS: %s\n     hdfs_site_path: %s\n%s",
			 st, v[i].fs, v[i].site, v[i].rest);
		rc = import_fresh("", y, false, &ck, &nn, &e);
		expect_import(i, rc, &e, ck, nn, v[i].ckpt, v[i].nns);
	}
	/* the imap of a hazelcast.yaml alike */
	snprintf(y, sizeof(y),
		 "hazelcast:\n map:\n  engine*:\n   map-store:\n"
		 "    properties:\n     type: hdfs\n     namespace: /st/imap\n"
		 "     fs.defaultFS: hdfs://nn:8020\n"
		 "     hdfs_site_path: %s\n",
		 fa);
	assert_int_equal(import_fresh("", y, true, &ck, &nn, &e), 0);
	assert_string_equal(ck, "swebhdfs://nn:50470/st/imap/");
	free(ck);
	free(nn);
	unlink(fa);
	unlink(fh);
	free(fa);
	free(fh);
}

/* what hdfs_site_path's file may not be: each an error naming it */
static void test_conf_import_hdfs_site_errors(void **state)
{
	static const struct {
		const char *xml, *msg;
		int line; /* in the xml; 0: the yaml's (or none) */
	} v[] = {
		{"<configuration><property><name>dfs.http.policy</name>\n"
		 "<value>HTTPS</value></property></configuration>",
		 "dfs.http.policy 'HTTPS'", 1},
		{"<configuration>\n<property><name>dfs.http.policy</name>"
		 "<value>HTTPS_ONLY</value></property>\n"
		 "<property><name>dfs.namenode.https-address</name>"
		 "<value>${x}:9871</value></property></configuration>",
		 "uses ${...}", 3},
		{"<configuration>\n<property><name>dfs.http.policy</name>"
		 "<value>HTTPS_ONLY</value></property>\n"
		 "<property><name>dfs.namenode.https-address</name>"
		 "<value>web</value></property></configuration>",
		 "'dfs.namenode.https-address' is not a host:port", 3},
		{"<configuration xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n"
		 "<xi:include href=\"other.xml\"/></configuration>",
		 "xi:include is not supported", 2},
		{"<configuration>\n<property><value>x</value></property>"
		 "</configuration>",
		 "a property without a name", 2},
		{"<properties/>", "not <configuration>", 1},
		{"<configuration><property>", "not XML", 0},
		{"", "empty file", 0},
	};
	static const char st[] =
		"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		"    type: hdfs\n    plugin-config:\n"
		"     namespace: /st/ck/\n     storage.type: hdfs\n"
		"     fs.defaultFS: hdfs://nn1.example:8020\n";
	struct conf_err e = {0};
	char y[2048], *ck, *nn;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char *f = tmpfile_with(v[i].xml, 0644);
		int rc;

		snprintf(y, sizeof(y), "%s     hdfs_site_path: %s\n", st, f);
		memset(&e, 0, sizeof(e));
		rc = import_fresh("", y, false, &ck, &nn, &e);
		if (rc != -EINVAL || !strstr(e.msg, v[i].msg) ||
		    strcmp(e.file, f) || (v[i].line && e.line != v[i].line))
			fail_msg("case %zu: rc %d %s:%d %s", i, rc, e.file,
				 e.line, e.msg);
		unlink(f);
		free(f);
	}
	/* a missing file, a relative path */
	snprintf(y, sizeof(y), "%s     hdfs_site_path: /nonexistent/h.xml\n",
		 st);
	assert_int_equal(import_fresh("", y, false, &ck, &nn, &e), -ENOENT);
	assert_string_equal(e.file, "/nonexistent/h.xml");
	assert_non_null(strstr(e.msg, "hdfs_site_path: cannot open"));
	snprintf(y, sizeof(y), "%s     hdfs_site_path: conf/h.xml\n", st);
	assert_int_equal(import_fresh("", y, false, &ck, &nn, &e), -EINVAL);
	assert_string_equal(e.file, "y");
	assert_int_equal(e.line, 10);
	assert_non_null(strstr(e.msg, "not an absolute path"));
}

/* the parser itself: forms Hadoop accepts, and entities never expanded */
static void test_hsite_parse(void **state)
{
	static const char xml[] =
		"<?xml version=\"1.0\"?>\n"
		"<!DOCTYPE configuration [<!ENTITY big \"BIG\">]>\n"
		"<configuration>\n"
		"<property name=\"a\" value=\"1\"/>\n"
		"<property><name>a</name><value>2</value></property>\n"
		"<property><name>b</name><value><![CDATA[ x&y ]]></value>"
		"<final>true</final></property>\n"
		"<property><name>b</name><value>later</value></property>\n"
		"<property><name>c</name><value>&big;&amp;</value></property>\n"
		"<property><name>d</name></property>\n"
		"<configuration><property name=\"e\" value=\"nested\"/>"
		"</configuration>\n"
		"</configuration>\n";
	struct hsite s;
	char why[128];
	int line;

	(void)state;
	assert_int_equal(
		hsite_parse(xml, strlen(xml), &s, why, sizeof(why), &line), 0);
	assert_string_equal(hsite_get(&s, "a")->value, "2");
	assert_int_equal(hsite_get(&s, "a")->line, 5);
	assert_string_equal(hsite_get(&s, "b")->value, "x&y");
	assert_true(hsite_get(&s, "b")->final);
	/* an internal-subset entity stays unexpanded: nothing of it */
	assert_string_equal(hsite_get(&s, "c")->value, "&");
	assert_string_equal(hsite_get(&s, "d")->value, "");
	assert_string_equal(hsite_get(&s, "e")->value, "nested");
	assert_null(hsite_get(&s, "f"));
	hsite_release(&s);
	/* a control character in a value */
	{
		static const char ctl[] =
			"<configuration><property name=\"a\" "
			"value=\"x&#9;y&#10;\"/>"
			"<property name=\"b\" value=\"x&#127;\"/>"
			"</configuration>";

		assert_int_equal(hsite_parse(ctl, strlen(ctl), &s, why,
					     sizeof(why), &line),
				 -EINVAL);
		assert_non_null(strstr(why, "control character"));
	}
	hsite_release(&s);
}

/* README "HDFS", Kerberos: the engine's own keys of its HDFS plugin-config */
static void test_conf_import_hdfs_kerberos(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	const char *y =
		"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		"    type: hdfs\n    plugin-config:\n"
		"     namespace: /st/ck/\n     storage.type: hdfs\n"
		"     fs.defaultFS: hdfs://nn1.example:8020\n"
		"     kerberosPrincipal: seatunnel@EXAMPLE.COM\n"
		"     kerberosKeytabFilePath: /etc/security/st.keytab\n";
	const char *rel = "seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
			  "    type: hdfs\n    plugin-config:\n"
			  "     storage.type: hdfs\n"
			  "     fs.defaultFS: hdfs://nn1.example:8020\n"
			  "     kerberosKeytabFilePath: st.keytab\n";
	int rc;

	rc = conf_import_seatunnel_yaml_mem(c, "y", y, strlen(y), &e);
	if (rc)
		fail_msg("%d %s", rc, e.msg);
	assert_string_equal(c->kerberos_principal, "seatunnel@EXAMPLE.COM");
	assert_string_equal(c->kerberos_keytab, "/etc/security/st.keytab");
	/* a relative keytab path is refused (the daemon changes directory) */
	assert_int_equal(
		conf_import_seatunnel_yaml_mem(c, "y", rel, strlen(rel), &e),
		-EINVAL);
	/* an explicit option is kept */
	assert_int_equal(conf_set(c, "kerberos_keytab", "/k/other", &e), 0);
	assert_int_equal(
		conf_import_seatunnel_yaml_mem(c, "y", y, strlen(y), &e), 0);
	assert_string_equal(c->kerberos_keytab, "/k/other");
	assert_int_equal(conf_set(c, "kerberos_keytab", "rel.keytab", &e),
			 -EINVAL);
}

static void test_conf_import_seatunnel_errors(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	static const char *const bad[] = {
		"seatunnel: [unclosed\n",
		"key: value\n",
		"",
		"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		"    type: hdfs\n    plugin-config:\n"
		"     storage.type: s3\n     namespace: /x\n",
		"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		"    type: hdfs\n    plugin-config:\n"
		"     storage.type: hdfs\n",
		"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		"    type: rocksdb\n",
		"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		"    type: hdfs\n    plugin-config:\n"
		"     fs.defaultFS: viewfs://cluster\n",
		"seatunnel:\n engine:\n  http:\n   port: 99999\n",
		"seatunnel:\n engine:\n  http:\n   port: [1]\n",
		"seatunnel:\n engine:\n  checkpoint:\n   storage:\n"
		"    type: hdfs\n    plugin-config: [a, b]\n",
		"\t\x01\x02",
	};
	const char *cyc = "seatunnel: &a\n engine: *a\n";
	const char *syn = "seatunnel:\n  engine:\n x: [\n";

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = conf_import_seatunnel_yaml_mem(c, "bad.yaml", bad[i],
							strlen(bad[i]), &e);

		if (rc != -EINVAL)
			fail_msg("bad yaml %zu: rc %d", i, rc);
		assert_string_equal(e.file, "bad.yaml");
		assert_true(strlen(e.msg) > 0);
	}
	/* the syntax error is reported on its line */
	assert_int_equal(conf_import_seatunnel_yaml_mem(c, "bad.yaml", syn,
							strlen(syn), &e),
			 -EINVAL);
	assert_true(e.line >= 3);
	assert_int_equal(
		conf_import_seatunnel_yaml(c, FIX "nonexistent.yaml", &e),
		-ENOENT);
	/* a self-referencing alias is walked without looping */
	assert_int_equal(
		conf_import_seatunnel_yaml_mem(c, "c", cyc, strlen(cyc), &e),
		0);
	assert_string_equal(c->engines[0], "http://127.0.0.1:8080");
	/* nothing half-applied beyond valid values */
	assert_int_equal(conf_validate(c, &e), 0);
}

static void test_conf_import_hazelcast(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	const char *hdfs = "hazelcast:\n map:\n  engine*:\n   map-store:\n"
			   "    enabled: true\n    properties:\n"
			   "     type: hdfs\n     namespace: /st/imap\n"
			   "     clusterName: c1\n"
			   "     fs.defaultFS: hdfs://nn:9000\n";
	const char *s3 = "hazelcast:\n map:\n  engine_runningJobInfo:\n"
			 "   map-store:\n    properties:\n"
			 "     storage.type: s3\n     s3.bucket: s3a://ib\n"
			 "     clusterName: c1\n"
			 "     fs.s3a.access.key: IMAPAK\n"
			 "     fs.s3a.secret.key: IMAPSK\n";
	const char *off = "hazelcast:\n map:\n  engine*:\n   map-store:\n"
			  "    enabled: false\n    properties:\n"
			  "     namespace: /never\n"
			  "     fs.defaultFS: file:///\n";
	const char *nofs = "hazelcast:\n map:\n  engine*:\n   map-store:\n"
			   "    properties:\n     namespace: /x\n";

	assert_int_equal(
		conf_import_hazelcast_yaml(c, FIX "hazelcast.yaml", &e), 0);
	assert_string_equal(c->imap, "file:///tmp/seatunnel/imap/");
	assert_string_equal(c->hazelcast_yaml, FIX "hazelcast.yaml");

	assert_int_equal(
		conf_import_hazelcast_yaml_mem(c, "h", hdfs, strlen(hdfs), &e),
		0);
	assert_string_equal(c->imap, "hdfs://nn:9000/st/imap/");

	/* the namespace defaults to /seatunnel-imap */
	assert_int_equal(
		conf_import_hazelcast_yaml_mem(c, "h", s3, strlen(s3), &e), 0);
	assert_string_equal(c->imap, "s3://ib/seatunnel-imap/");
	assert_string_equal(c->access_key, "IMAPAK");
	assert_string_equal(c->secret_key, "IMAPSK");

	/* disabled map-store, shipped file: nothing changes */
	assert_int_equal(
		conf_import_hazelcast_yaml_mem(c, "h", off, strlen(off), &e),
		0);
	assert_string_equal(c->imap, "s3://ib/seatunnel-imap/");
	assert_int_equal(
		conf_import_hazelcast_yaml(c, FIX "hazelcast-shipped.yaml", &e),
		0);
	assert_string_equal(c->imap, "s3://ib/seatunnel-imap/");

	/* the imap store defaults to hdfs, which needs fs.defaultFS */
	assert_int_equal(
		conf_import_hazelcast_yaml_mem(c, "h", nofs, strlen(nofs), &e),
		-EINVAL);
	assert_int_equal(e.line, 6);
	assert_int_equal(
		conf_import_hazelcast_yaml_mem(c, "h", "hazelcast: [", 12, &e),
		-EINVAL);
	assert_int_equal(
		conf_import_hazelcast_yaml_mem(c, "h", "other: 1\n", 9, &e),
		-EINVAL);

	/* explicit imap wins */
	assert_int_equal(conf_set(c, "imap", "file:///mine", &e), 0);
	assert_int_equal(
		conf_import_hazelcast_yaml_mem(c, "h", hdfs, strlen(hdfs), &e),
		0);
	assert_string_equal(c->imap, "file:///mine/");
}

static void test_conf_apply_imports_and_env(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(parse(c,
			       "seatunnel_yaml = " FIX "seatunnel.yaml\n"
			       "hazelcast_yaml = " FIX "hazelcast.yaml\n"
			       "checkpoint = s3://envb/ns\n",
			       &e),
			 0);
	setenv("AWS_ACCESS_KEY_ID", "ENVAK", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSK", 1);
	assert_int_equal(conf_apply_imports(c, &e), 0);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	assert_string_equal(c->checkpoint, "s3://envb/ns/");
	assert_string_equal(c->imap, "file:///tmp/seatunnel/imap/");
	assert_string_equal(c->engine_http_port, "8080");
	assert_string_equal(c->access_key, "ENVAK");
	assert_string_equal(c->secret_key, "ENVSK");
	assert_int_equal(conf_validate(c, &e), 0);
}

/*
 * The environment is read in one place, conf_import_env(), for every
 * provider the storage URIs name: GOOGLE_* for gs://, OSS_SESSION_TOKEN for
 * oss://, AWS_* for s3n://, and the imap= namespace's provider too.
 */
static void env_case(const char *ckpt, const char *imap,
		     const char *const *vars, const char *ak, const char *sk,
		     const char *tok)
{
	struct stfs_conf c;
	struct conf_err e = {0};

	assert_int_equal(conf_init_defaults(&c), 0);
	assert_int_equal(conf_set(&c, "checkpoint", ckpt, &e), 0);
	if (imap)
		assert_int_equal(conf_set(&c, "imap", imap, &e), 0);
	for (size_t i = 0; vars[i]; i += 2)
		setenv(vars[i], vars[i + 1], 1);
	assert_int_equal(conf_import_env(&c), 0);
	for (size_t i = 0; vars[i]; i += 2)
		unsetenv(vars[i]);
	if (!ak)
		assert_null(c.access_key);
	else
		assert_string_equal(c.access_key ? c.access_key : "(null)", ak);
	if (!sk)
		assert_null(c.secret_key);
	else
		assert_string_equal(c.secret_key ? c.secret_key : "(null)", sk);
	if (!tok)
		assert_null(c.session_token);
	else
		assert_string_equal(
			c.session_token ? c.session_token : "(null)", tok);
	conf_release(&c);
}

/*
 * glibc's malloc knobs are captured with every other variable (README
 * "Memory": set, they win over stfs's own tuning); GLIBC_TUNABLES too.
 */
static void test_conf_env_captures_malloc_knobs(void **state)
{
	struct conf_env env = {0};

	(void)state;
	setenv("MALLOC_ARENA_MAX", "4", 1);
	setenv("MALLOC_MMAP_THRESHOLD_", "131072", 1);
	setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=3", 1);
	assert_int_equal(conf_env_capture(&env), 0);
	unsetenv("MALLOC_ARENA_MAX");
	unsetenv("MALLOC_MMAP_THRESHOLD_");
	unsetenv("GLIBC_TUNABLES");
	assert_string_equal(conf_env_get(&env, "MALLOC_ARENA_MAX") ?: "(null)",
			    "4");
	assert_string_equal(conf_env_get(&env, "MALLOC_MMAP_THRESHOLD_")
				    ?: "(null)",
			    "131072");
	assert_string_equal(conf_env_get(&env, "GLIBC_TUNABLES") ?: "(null)",
			    "glibc.malloc.arena_max=3");
	/* captured once: a later unset is not seen until the next capture */
	assert_int_equal(conf_env_capture(&env), 0);
	assert_null(conf_env_get(&env, "MALLOC_ARENA_MAX"));
	conf_env_release(&env);
}

static void test_conf_import_env_every_provider(void **state)
{
	static const char *const gs[] = {"GOOGLE_ACCESS_KEY_ID", "GAK",
					 "GOOGLE_SECRET_ACCESS_KEY", "GSK",
					 NULL};
	static const char *const oss[] = {"OSS_ACCESS_KEY_ID",
					  "OAK",
					  "OSS_ACCESS_KEY_SECRET",
					  "OSK",
					  "OSS_SESSION_TOKEN",
					  "OTOK",
					  NULL};
	static const char *const aws[] = {"AWS_ACCESS_KEY_ID",
					  "AAK",
					  "AWS_SECRET_ACCESS_KEY",
					  "ASK",
					  "AWS_SESSION_TOKEN",
					  "ATOK",
					  NULL};
	static const char *const cos[] = {"COSN_SECRET_ID", "CAK",
					  "COSN_SECRET_KEY", "CSK", NULL};

	(void)state;
	env_case("gs://b/ns", NULL, gs, "GAK", "GSK", NULL);
	env_case("oss://b/ns", NULL, oss, "OAK", "OSK", "OTOK");
	env_case("s3n://b/ns", NULL, aws, "AAK", "ASK", "ATOK");
	env_case("cosn://b/ns", NULL, cos, "CAK", "CSK", NULL);
	/* another provider's variables are not taken */
	env_case("gs://b/ns", NULL, aws, NULL, NULL, NULL);
	env_case("file:///tmp/ns", NULL, gs, NULL, NULL, NULL);
	/* the imap= namespace's provider counts too */
	env_case("file:///tmp/ns", "gs://b/imap", gs, "GAK", "GSK", NULL);
}

/* the backends' settings: the table's defaults, no engine key */
static void test_conf_objstore_settings(void **state)
{
	struct stfs_conf *c = *state;
	struct objstore_settings o;
	struct conf_err e = {0};

	struct local_settings l;

	assert_int_equal(conf_default_u("timeout"), 5000);
	assert_int_equal(conf_default_u("orphan_grace"), 600); /* seconds */
	assert_int_equal(conf_default_u("engine_max_jobs"), 1000000);
	assert_int_equal(conf_default_u("hdfs_http_port"), 0); /* none */
	assert_int_equal(conf_default_u("no_such_key"), 0);
	conf_local_settings(NULL, &l);
	assert_null(l.namespace_owner);
	assert_int_equal(conf_set(c, "namespace_owner", "seatunnel", &e), 0);
	conf_local_settings(c, &l);
	assert_string_equal(l.namespace_owner, "seatunnel");
	assert_int_equal(conf_set(c, "namespace_owner", "", &e), 0);
	conf_local_settings(c, &l);
	assert_null(l.namespace_owner);

	conf_objstore_settings(NULL, &o);
	assert_int_equal(o.timeout_ms, 5000);
	assert_int_equal(o.retries, 2);
	assert_int_equal(o.storage_ttl_ms, 5000);
	assert_null(o.access_key);
	assert_null(o.keys_from);

	assert_int_equal(conf_set(c, "timeout", "7s", &e), 0);
	assert_int_equal(conf_set(c, "access_key", "AK", &e), 0);
	assert_int_equal(conf_set(c, "secret_key", "SK", &e), 0);
	assert_int_equal(conf_set(c, "endpoint", "", &e), 0);
	assert_int_equal(conf_set(c, "path_style", NULL, &e), 0);
	conf_objstore_settings(c, &o);
	assert_int_equal(o.timeout_ms, 7000);
	assert_string_equal(o.access_key, "AK");
	assert_string_equal(o.secret_key, "SK");
	assert_string_equal(o.keys_from, "config keys");
	assert_null(o.endpoint);
	assert_null(o.session_token);
	assert_true(o.path_style);

	/* imported keys say where they came from */
	free(c->access_key);
	c->access_key = NULL;
	c->explicit_keys = 0;
	setenv("AWS_ACCESS_KEY_ID", "ENVAK", 1);
	assert_int_equal(conf_set(c, "checkpoint", "s3://b/ns", &e), 0);
	c->explicit_keys = 0;
	assert_int_equal(conf_import_env(c), 0);
	unsetenv("AWS_ACCESS_KEY_ID");
	conf_objstore_settings(c, &o);
	assert_string_equal(o.access_key, "ENVAK");
	assert_string_equal(o.keys_from, "environment");
}

/* ---- validate / render / release -------------------------------------- */

static void test_conf_validate_errors(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	char *p;

	assert_int_equal(conf_set(c, "connect_timeout", "6s", &e), 0);
	assert_int_equal(conf_validate(c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "connect_timeout"));
	assert_int_equal(conf_set(c, "connect_timeout", "1s", &e), 0);

	assert_int_equal(conf_set(c, "secret_key", "x", &e), 0);
	assert_int_equal(conf_validate(c, &e), -EINVAL);
	assert_int_equal(conf_set(c, "access_key", "a", &e), 0);
	assert_int_equal(conf_validate(c, &e), 0);

	p = tmpfile_with("[default]\n", 0644);
	assert_int_equal(conf_set(c, "credentials_file", p, &e), 0);
	assert_int_equal(conf_validate(c, &e), -EACCES);
	assert_non_null(strstr(e.msg, "chmod 600"));
	assert_int_equal(chmod(p, 0600), 0);
	assert_int_equal(conf_validate(c, &e), 0);
	unlink(p);
	assert_int_equal(conf_validate(c, &e), -ENOENT);
	free(p);
	assert_int_equal(conf_set(c, "credentials_file", "", &e), 0);

	for (size_t i = 0; i < c->n_engines; i++)
		free(c->engines[i]);
	c->n_engines = 0;
	assert_int_equal(conf_validate(c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "engine"));
}

static void test_conf_render_redacts_and_roundtrips(void **state)
{
	struct stfs_conf *c = *state;
	struct stfs_conf d;
	struct conf_err e = {0};
	char *r, *r2;

	assert_int_equal(parse(c,
			       "engine = http://a:1\nengine = http://b:2\n"
			       "secret_key = TOPSECRET-1\n"
			       "session_token = TOPSECRET-2\n"
			       "engine_password = TOPSECRET-3\n"
			       "engine_user = u\naccess_key = AK\n"
			       "delete_group = \"g #1\"\nro = yes\n"
			       "orphan_grace = 1h\n",
			       &e),
			 0);
	r = render(c);
	assert_null(strstr(r, "TOPSECRET"));
	assert_non_null(strstr(r, "secret_key = <redacted>\n"));
	assert_non_null(strstr(r, "session_token = <redacted>\n"));
	assert_non_null(strstr(r, "engine_password = <redacted>\n"));
	assert_non_null(
		strstr(r, "engine = http://a:1\nengine = http://b:2\n"));
	assert_non_null(strstr(r, "audit_log = \n"));
	assert_non_null(strstr(r, "ro = yes\n"));
	assert_non_null(strstr(r, "orphan_grace = 3600\n"));
	assert_non_null(strstr(r, "delete_group = \"g #1\"\n"));
	assert_true(strncmp(r, "checkpoint = ", 13) == 0);

	/* the rendering parses back to the same rendering */
	assert_int_equal(conf_init_defaults(&d), 0);
	assert_int_equal(conf_parse_mem(&d, "r", r, strlen(r), &e), 0);
	r2 = render(&d);
	assert_string_equal(r, r2);
	conf_release(&d);
	free(r);
	free(r2);
}

static void test_conf_release_zeroes(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};

	assert_int_equal(conf_set(c, "secret_key", "S", &e), 0);
	conf_release(c);
	assert_null(c->checkpoint);
	assert_null(c->secret_key);
	assert_int_equal(c->n_engines, 0);
	assert_int_equal(c->explicit_keys, 0);
	conf_release(c); /* twice is harmless */
	assert_int_equal(conf_init_defaults(c), 0);
}

/* issue 7: a refused URL never echoes the credentials it carries */
static void test_conf_url_credentials_not_echoed(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	static const struct {
		const char *key, *value;
	} v[] = {
		{"engine", "http://admin:PASSWORD-1@m1:8080"},
		{"engine", "https://admin:PASSWORD-1@m1:8080/ctx?x=1"},
		{"engine", "http://PASSWORD-1@m1"},
		{"engine", "http://a:PASSWORD-1@b:PASSWORD-1@m1/"},
		{"engine", "ftp://admin:PASSWORD-1@m1"},
		{"checkpoint", "s3://AKIA:PASSWORD-1@bucket/ns"},
		{"imap", "hdfs://u:PASSWORD-1@nn:9000/x/../y"},
	};
	char line[256];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(conf_set(c, v[i].key, v[i].value, &e),
				 -EINVAL);
		if (strstr(e.msg, "PASSWORD") || strstr(e.msg, "admin") ||
		    strstr(e.msg, "AKIA"))
			fail_msg("%s=%s: '%s' echoes the credentials", v[i].key,
				 v[i].value, e.msg);
		assert_non_null(strstr(e.msg, v[i].key));
		/* the same from a config file line */
		snprintf(line, sizeof(line), "%s = %s\n", v[i].key, v[i].value);
		assert_int_equal(parse(c, line, &e), -EINVAL);
		assert_null(strstr(e.msg, "PASSWORD"));
	}
	/* the host is still named, so the user knows which value it was */
	assert_int_equal(
		conf_set(c, "engine", "http://admin:PASSWORD-1@m1:8080", &e),
		-EINVAL);
	assert_non_null(strstr(e.msg, "m1:8080"));
	assert_non_null(strstr(e.msg, "credentials"));
	/* a password may hold '/': everything up to the last '@' goes */
	assert_int_equal(conf_set(c, "engine", "http://u:PASS/WORD@m1/.", &e),
			 -EINVAL);
	assert_null(strstr(e.msg, "PASS"));
	assert_non_null(strstr(e.msg, "'http://***@m1/.'"));
	/* a value without '@' is echoed whole */
	assert_int_equal(conf_set(c, "engine", "http://m1/a/../c", &e),
			 -EINVAL);
	assert_non_null(strstr(e.msg, "'http://m1/a/../c'"));
}

/* issue 7: secrets imported from a yaml file obey the config= mode rule */
static void test_conf_import_secret_mode(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e = {0};
	char *s3y = fixture_copy("seatunnel-s3.yaml", 0644);
	char *plain = fixture_copy("seatunnel.yaml", 0644);
	char *hz =
		tmpfile_with("hazelcast:\n map:\n  engine*:\n"
			     "   map-store:\n    properties:\n"
			     "     storage.type: s3\n     s3.bucket: s3a://ib\n"
			     "     fs.s3a.access.key: IMAPAK\n"
			     "     fs.s3a.secret.key: IMAP-SECRET-9\n",
			     0604);
	char *auth = tmpfile_with("seatunnel:\n engine:\n  http:\n"
				  "   enable-basic-auth: true\n"
				  "   basic-auth-password: HTTP-SECRET-7\n",
				  0640);

	assert_int_equal(conf_import_seatunnel_yaml(c, s3y, &e), -EACCES);
	assert_string_equal(e.file, s3y);
	assert_int_equal(e.line, 19); /* fs.s3a.secret.key */
	assert_non_null(strstr(e.msg, "chmod 600"));
	assert_non_null(strstr(e.msg, "0644"));
	assert_null(strstr(e.msg, "FIXTURE"));
	assert_int_equal(conf_import_hazelcast_yaml(c, hz, &e), -EACCES);
	assert_string_equal(e.file, hz);
	assert_int_equal(e.line, 9);
	assert_null(strstr(e.msg, "IMAP-SECRET"));
	assert_int_equal(conf_import_seatunnel_yaml(c, auth, &e), -EACCES);
	assert_int_equal(e.line, 5);
	assert_null(strstr(e.msg, "HTTP-SECRET"));
	/* 0600: accepted; a world-readable file without secrets too */
	assert_int_equal(chmod(s3y, 0600), 0);
	assert_int_equal(conf_import_seatunnel_yaml(c, s3y, &e), 0);
	assert_string_equal(c->secret_key, "FIXTURE-s3-secret-do-not-leak");
	assert_int_equal(chmod(hz, 0600), 0);
	assert_int_equal(conf_import_hazelcast_yaml(c, hz, &e), 0);
	assert_int_equal(conf_import_seatunnel_yaml(c, plain, &e), 0);
	/* the file is refused even when an explicit value wins over it */
	assert_int_equal(conf_set(c, "engine_password", "x", &e), 0);
	assert_int_equal(conf_import_seatunnel_yaml(c, auth, &e), -EACCES);
	unlink_free(s3y);
	unlink_free(plain);
	unlink_free(hz);
	unlink_free(auth);
}

/* a secret makes the process non-dumpable; without one it stays dumpable */
static void test_conf_protect_secrets(void **state)
{
	struct stfs_conf *c = *state;
	struct conf_err e;

	assert_false(conf_holds_secret(c));
	assert_int_equal(conf_protect_secrets(c), 0);
	assert_int_equal(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
	assert_int_equal(conf_set(c, "secret_key", "S3CR3T", &e), 0);
	assert_true(conf_holds_secret(c));
	assert_int_equal(conf_protect_secrets(c), 1);
	assert_int_equal(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
	/* back, for the tests after this one */
	assert_int_equal(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_conf_defaults),
		T(test_conf_set_each_key),
		T(test_conf_set_unknown_key),
		T(test_conf_set_flags),
		T(test_conf_set_uris),
		T(test_conf_set_paths),
		T(test_conf_duration_suffixes),
		T(test_conf_duration_rejects),
		T(test_conf_engine_replace_then_append),
		T(test_conf_engine_command_line_replaces_file),
		T(test_conf_engine_bad_and_limit),
		T(test_conf_parse_basic),
		T(test_conf_parse_quotes),
		T(test_conf_parse_crlf),
		T(test_conf_parse_error_lines),
		T(test_conf_parse_unknown_key),
		T(test_conf_parse_nul_and_long_lines),
		T(test_conf_parse_secret_not_in_error),
		T(test_conf_load_file_ok_and_missing),
		T(test_conf_load_file_secret_mode),
		T(test_conf_import_seatunnel_shipped),
		T(test_conf_import_seatunnel_s3),
		T(test_conf_import_explicit_wins),
		T(test_conf_import_then_explicit_engine),
		T(test_conf_import_seatunnel_variants),
		T(test_conf_import_hdfs_ha),
		T(test_conf_import_hdfs_https),
		T(test_conf_import_hdfs_kerberos),
		T(test_conf_import_hdfs_site),
		T(test_conf_import_hdfs_site_errors),
		T(test_hsite_parse),
		T(test_conf_import_seatunnel_errors),
		T(test_conf_import_hazelcast),
		T(test_conf_url_credentials_not_echoed),
		T(test_conf_import_secret_mode),
		T(test_conf_apply_imports_and_env),
		T(test_conf_import_env_every_provider),
		T(test_conf_env_captures_malloc_knobs),
		T(test_conf_objstore_settings),
		T(test_conf_validate_errors),
		T(test_conf_render_redacts_and_roundtrips),
		T(test_conf_release_zeroes),
		T(test_conf_protect_secrets),
#undef T
	};

	return cmocka_run_group_tests_name("conf", tests, NULL, NULL);
}
