/*
 * Unit tests for fusefs/policy/audit.c: the exact line format, escaping of
 * hostile values (one record stays one line), the ring bound and
 * snapshot order, file appends across two opens, audit_comm, and
 * concurrent recorders.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy/audit.h"
#include "util/buf.h"

static struct audit_rec base_rec(void)
{
	return (struct audit_rec){
		.time_ms = 1741356131042LL, /* 2025-03-07T14:02:11.042Z */
		.uid = 1000,
		.pid = 4242,
		.comm = "rm",
		.op = "unlink",
		.path = "/jobs/1/pipelines/1/checkpoints/3/x.ser",
		.object = "ns/1/x.ser",
		.state = "FAILED",
		.state_source = "engine",
		.state_age_ms = 120,
		.rule = "",
		.err = 0,
	};
}

static char *fmt(const struct audit_rec *r)
{
	struct buf b;
	char *s;

	buf_init(&b, BUF_DEFAULT_MAX);
	assert_int_equal(audit_format(r, &b), 0);
	s = buf_detach(&b, NULL);
	assert_non_null(s);
	return s;
}

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

/*
 * A reader of the format, written from the header: split `line` into
 * key=value pairs, unquoting and unescaping.  Returns the number of pairs
 * (keys[i], vals[i] are malloc'd), or -1 when the line is malformed.
 */
static int parse_line(const char *line, char **keys, char **vals, int max)
{
	const char *p = line;
	int n = 0;

	while (*p && *p != '\n') {
		const char *k = p, *eq = strchr(p, '=');
		char *v;
		size_t vl = 0;

		if (!eq || n == max)
			return -1;
		keys[n] = strndup(k, (size_t)(eq - k));
		v = malloc(strlen(eq) + 1);
		p = eq + 1;
		if (*p == '"') {
			for (p++; *p != '"'; p++) {
				if (!*p || *p == '\n')
					return -1;
				if (*p != '\\') {
					v[vl++] = *p;
					continue;
				}
				p++;
				switch (*p) {
				case 'n':
					v[vl++] = '\n';
					break;
				case 'r':
					v[vl++] = '\r';
					break;
				case 't':
					v[vl++] = '\t';
					break;
				case 'x': {
					char h[3] = {p[1], p[2], 0};

					v[vl++] = (char)strtol(h, NULL, 16);
					p += 2;
					break;
				}
				case '"':
				case '\\':
					v[vl++] = *p;
					break;
				default:
					return -1;
				}
			}
			p++;
		} else {
			while (*p && *p != ' ' && *p != '\n')
				v[vl++] = *p++;
		}
		v[vl] = 0;
		vals[n++] = v;
		if (*p == ' ')
			p++;
		else if (*p != '\n')
			return -1;
	}
	return *p == '\n' && p[1] == 0 ? n : -1;
}

static const char *const keys_order[] = {
	"time",	 "uid",	   "pid",    "comm", "op",	"path",	 "object",
	"state", "source", "age_ms", "rule", "outcome", "errno",
};

static void test_audit_format_allowed(void **st)
{
	struct audit_rec r = base_rec();
	char *s;

	(void)st;
	s = fmt(&r);
	assert_string_equal(
		s, "time=2025-03-07T14:02:11.042Z uid=1000 pid=4242 comm=rm "
		   "op=unlink path=/jobs/1/pipelines/1/checkpoints/3/x.ser "
		   "object=ns/1/x.ser state=FAILED source=engine age_ms=120 "
		   "rule=\"\" outcome=allowed errno=0\n");
	free(s);
}

static void test_audit_format_refused(void **st)
{
	struct audit_rec r = base_rec();
	char *s;

	(void)st;
	r.time_ms = 0;
	r.uid = 0;
	r.pid = 1;
	r.op = "release";
	r.path = "/jobs/1/restore";
	r.object = NULL;
	r.state = "RUNNING";
	r.state_source = "engine(last known)";
	r.state_age_ms = 65000;
	r.rule = "R1";
	r.err = EBUSY;
	s = fmt(&r);
	assert_string_equal(
		s, "time=1970-01-01T00:00:00.000Z uid=0 pid=1 comm=rm "
		   "op=release path=/jobs/1/restore object=\"\" state=RUNNING "
		   "source=\"engine(last known)\" age_ms=65000 rule=R1 "
		   "outcome=refused errno=EBUSY\n");
	free(s);
}

static void test_audit_format_escaping(void **st)
{
	struct audit_rec r = base_rec();
	char *s;

	(void)st;
	/* a hostile name trying to forge a second record */
	r.path = "/jobs/1/a\nb\" outcome=allowed errno=0\ntime=x \\ \t\x01\xff";
	r.comm = "my prog";
	r.err = EPERM;
	r.rule = "R2";
	s = fmt(&r);
	assert_int_equal(count_char(s, '\n'), 1);
	assert_int_equal(s[strlen(s) - 1], '\n');
	assert_non_null(strstr(
		s, " path=\"/jobs/1/a\\nb\\\" outcome=allowed errno=0\\ntime=x "
		   "\\\\ \\t\\x01\\xff\" "));
	assert_non_null(strstr(s, " comm=\"my prog\" "));
	assert_non_null(strstr(s, " outcome=refused errno=EPERM\n"));
	/* a reader sees exactly the 13 keys, and the original values */
	{
		char *k[20], *v[20];
		int n = parse_line(s, k, v, 20);

		assert_int_equal(n, 13);
		for (int i = 0; i < n; i++)
			assert_string_equal(k[i], keys_order[i]);
		assert_string_equal(v[5], r.path);
		assert_string_equal(v[3], "my prog");
		assert_string_equal(v[10], "R2");
		assert_string_equal(v[11], "refused");
		assert_string_equal(v[12], "EPERM");
		for (int i = 0; i < n; i++) {
			free(k[i]);
			free(v[i]);
		}
	}
	free(s);
}

static void test_audit_format_quote_without_space(void **st)
{
	struct audit_rec r = base_rec();
	char *s;

	(void)st;
	r.comm = "a\"b";
	r.object = "x\\y";
	r.path = "/jobs/1/k=v";
	r.state = "\xc3\xa9";
	s = fmt(&r);
	assert_non_null(strstr(s, " comm=\"a\\\"b\" "));
	assert_non_null(strstr(s, " object=\"x\\\\y\" "));
	assert_non_null(strstr(s, " path=/jobs/1/k=v "));
	assert_non_null(strstr(s, " state=\"\\xc3\\xa9\" "));
	free(s);
}

static void test_audit_format_negative_time_and_odd_errno(void **st)
{
	struct audit_rec r = base_rec();
	char *s;

	(void)st;
	r.time_ms = -1; /* 1969-12-31T23:59:59.999Z */
	r.err = 4000;	/* no symbolic name */
	s = fmt(&r);
	assert_true(strncmp(s, "time=1969-12-31T23:59:59.999Z ", 30) == 0);
	assert_non_null(strstr(s, " outcome=refused errno=4000\n"));
	free(s);
}

static void rec_n(struct audit *a, int i)
{
	struct audit_rec r = base_rec();
	char p[64];

	snprintf(p, sizeof(p), "/jobs/%d", i);
	r.path = p;
	audit_record(a, &r);
}

static void test_audit_ring_bound_and_snapshot(void **st)
{
	struct audit *a;
	struct buf b;
	char *s, *line0;
	size_t one;
	const char *p;

	(void)st;
	/* learn one line's size ("/jobs/N", N one digit) */
	{
		struct audit_rec r = base_rec();

		r.path = "/jobs/0";
		s = fmt(&r);
		one = strlen(s);
		line0 = s;
	}
	assert_int_equal(audit_open(NULL, 3 * one + one / 2, &a), 0);
	audit_set_syslog(a, false);
	buf_init(&b, BUF_DEFAULT_MAX);
	assert_int_equal(audit_snapshot(a, &b), 0);
	assert_int_equal(b.len, 0);
	for (int i = 0; i < 7; i++)
		rec_n(a, i);
	assert_int_equal(audit_snapshot(a, &b), 0);
	/* only the newest 3 are kept, oldest first */
	assert_int_equal(b.len, 3 * one);
	assert_int_equal(count_char(b.data, '\n'), 3);
	p = strstr(b.data, "path=/jobs/4 ");
	assert_non_null(p);
	assert_true(p < strstr(b.data, "path=/jobs/5 "));
	assert_true(strstr(b.data, "path=/jobs/5 ") <
		    strstr(b.data, "path=/jobs/6 "));
	assert_null(strstr(b.data, "path=/jobs/3 "));
	buf_release(&b);

	/* a snapshot into a small buffer keeps the newest lines that fit */
	buf_init(&b, 2 * one + 5);
	assert_int_equal(audit_snapshot(a, &b), 0);
	assert_int_equal(b.len, 2 * one);
	assert_null(strstr(b.data, "path=/jobs/4 "));
	assert_non_null(strstr(b.data, "path=/jobs/6 "));
	buf_release(&b);
	audit_close(a);

	/* ring_bytes 0: no ring */
	assert_int_equal(audit_open(NULL, 0, &a), 0);
	audit_set_syslog(a, false);
	rec_n(a, 1);
	buf_init(&b, BUF_DEFAULT_MAX);
	assert_int_equal(audit_snapshot(a, &b), 0);
	assert_int_equal(b.len, 0);
	buf_release(&b);
	audit_close(a);
	audit_close(NULL);
	free(line0);
}

static void test_audit_file_append_two_opens(void **st)
{
	char dir[] = "/tmp/stfs-audit-XXXXXX", path[128], txt[4096];
	struct audit *a;
	struct stat sb;
	FILE *f;
	size_t n;

	(void)st;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	assert_int_equal(audit_open(path, 4096, &a), 0);
	audit_set_syslog(a, false);
	rec_n(a, 1);
	rec_n(a, 2);
	audit_close(a);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);

	assert_int_equal(audit_open(path, 4096, &a), 0);
	audit_set_syslog(a, false);
	rec_n(a, 3);
	/* reopen (logrotate) keeps appending to the same path */
	assert_int_equal(audit_reopen(a), 0);
	rec_n(a, 4);
	audit_close(a);

	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(txt, 1, sizeof(txt) - 1, f);
	txt[n] = 0;
	fclose(f);
	assert_int_equal(count_char(txt, '\n'), 4);
	assert_true(strstr(txt, "path=/jobs/1 ") <
		    strstr(txt, "path=/jobs/2 "));
	assert_true(strstr(txt, "path=/jobs/2 ") <
		    strstr(txt, "path=/jobs/3 "));
	assert_true(strstr(txt, "path=/jobs/3 ") <
		    strstr(txt, "path=/jobs/4 "));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);

	/* an unwritable path fails at open */
	assert_int_equal(audit_open("/nonexistent-dir/audit.log", 0, &a),
			 -ENOENT);
	assert_null(a);
}

static void test_audit_syslog_sink_does_not_fail(void **st)
{
	struct audit *a;
	struct buf b;

	(void)st;
	/* with or without a syslog daemon, recording must not fail */
	assert_int_equal(audit_open(NULL, 1024, &a), 0);
	rec_n(a, 9);
	buf_init(&b, BUF_DEFAULT_MAX);
	assert_int_equal(audit_snapshot(a, &b), 0);
	assert_non_null(strstr(b.data, "path=/jobs/9 "));
	buf_release(&b);
	audit_close(a);
}

static void test_audit_comm_self(void **st)
{
	char buf[32], small[3];

	(void)st;
	assert_int_equal(audit_comm(getpid(), buf, sizeof(buf)), 0);
	/* the kernel's comm is the executable name cut to 15 bytes */
	assert_true(strlen(buf) >= 1 && strlen(buf) <= 15);
	assert_true(strncmp(buf, program_invocation_short_name, strlen(buf)) ==
		    0);
	assert_null(strchr(buf, '\n'));
	assert_int_equal(audit_comm(getpid(), small, sizeof(small)), 0);
	assert_int_equal(strlen(small), strlen(buf) < 2 ? strlen(buf) : 2);
	assert_memory_equal(small, program_invocation_short_name,
			    strlen(small));
	assert_int_equal(audit_comm(0, buf, sizeof(buf)), -ESRCH);
	assert_string_equal(buf, "?");
	assert_int_equal(audit_comm(0x7ffffff0, buf, sizeof(buf)), -ENOENT);
	assert_string_equal(buf, "?");
}

struct worker {
	struct audit *a;
	int t;
};

static void *worker(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 200; i++)
		rec_n(w->a, w->t * 1000 + i);
	return NULL;
}

static void test_audit_concurrent_records(void **st)
{
	char dir[] = "/tmp/stfs-audit-XXXXXX", path[128];
	struct worker w[4];
	pthread_t th[4];
	struct audit *a;
	struct buf b;
	struct stat sb;

	(void)st;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	assert_int_equal(audit_open(path, 1 << 20, &a), 0);
	audit_set_syslog(a, false);
	for (int t = 0; t < 4; t++) {
		w[t] = (struct worker){.a = a, .t = t + 1};
		assert_int_equal(pthread_create(&th[t], NULL, worker, &w[t]),
				 0);
	}
	for (int t = 0; t < 4; t++)
		assert_int_equal(pthread_join(th[t], NULL), 0);
	buf_init(&b, BUF_DEFAULT_MAX);
	assert_int_equal(audit_snapshot(a, &b), 0);
	assert_int_equal(count_char(b.data, '\n'), 800);
	assert_int_equal(stat(path, &sb), 0);
	/* every line has the same length here: file == ring */
	assert_int_equal((size_t)sb.st_size, b.len);
	buf_release(&b);
	audit_close(a);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_audit_format_allowed),
		cmocka_unit_test(test_audit_format_refused),
		cmocka_unit_test(test_audit_format_escaping),
		cmocka_unit_test(test_audit_format_quote_without_space),
		cmocka_unit_test(test_audit_format_negative_time_and_odd_errno),
		cmocka_unit_test(test_audit_ring_bound_and_snapshot),
		cmocka_unit_test(test_audit_file_append_two_opens),
		cmocka_unit_test(test_audit_syslog_sink_does_not_fail),
		cmocka_unit_test(test_audit_comm_self),
		cmocka_unit_test(test_audit_concurrent_records),
	};

	return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
