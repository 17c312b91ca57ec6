/*
 * test_render — the status and health pseudo-files over a fake backend and
 * an engine snapshot parsed from JSON: text from outside is escaped (issue 7
 * B9), engine ids are canonical (B10), an unknown jobStatus is shown.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fakes/fake_backend.h"
#include "fakes/testutil.h"
#include "fakes/fake_engine.h"
#include "view/render.h"
#include "policy/delete.h"
#include "mount/mount.h"
#include "view/tree.h"

#define OLD_NS ((int64_t)1600000000 * 1000000000)

static const char engine_json[] =
	"[{\"jobId\":\"0005\",\"jobName\":\"lead\",\"jobStatus\":\"RUNNING\","
	"\"createTime\":\"2025-03-07 14:02:11\",\"metrics\":{}},"
	"{\"jobId\":7,\"jobName\":\"n\\nstate       FINISHED\\u001b[2J\","
	"\"jobStatus\":\"WEIRD\\u001b]0;x\\u0007\",\"errorMsg\":\"e\\u009b1m\\r"
	"deletable yes\\nstack\",\"createTime\":\"2025-03-07 14:02:11\","
	"\"metrics\":{}},"
	"{\"jobId\":\"8\",\"jobName\":\"nostatus\",\"metrics\":{}}]";

struct fixture {
	struct stfs fs;
	struct view v;
};

static int setup_err(void **state, int engine_err)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct backend *be;
	struct engine *e;

	assert_non_null(f);
	assert_int_equal(conf_init_defaults(&f->fs.conf), 0);
	free(f->fs.conf.state_dir);
	f->fs.conf.state_dir = NULL;
	assert_int_equal(stfs_init(&f->fs), 0);
	assert_int_equal(delete_attach(&f->fs), 0);
	assert_int_equal(fake_be_open(&be), 0);
	assert_int_equal(fake_be_add_str(be, "5/1000-1-1-1.ser", "x", OLD_NS),
			 0);
	assert_int_equal(fake_be_add_str(be, "7/1000-1-1-1.ser", "x", OLD_NS),
			 0);
	f->fs.ckpt = be;
	assert_int_equal(fake_engine_new(&e), 0);
	assert_int_equal(fake_engine_add_json(e, engine_json, false), 0);
	fake_engine_set_data_ms(e, 1741356340000);
	if (engine_err) {
		/* the lists fail (the last jobs known stay), and so does
		 * /job-info */
		fake_engine_set_list_err(e, engine_err,
					 "engine said: bad\n\x1b[31mthing");
		fake_engine_fail(e, FENG_JOB_INFO, engine_err);
	}
	f->fs.engine = e;
	view_open(&f->fs, &f->v);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_err(state, 0);
}

static int setup_down(void **state)
{
	return setup_err(state, -EPROTO);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	view_close(&f->v);
	tu_mount_free(&f->fs);
	free(f);
	return 0;
}

static char *status_of(struct fixture *f, const char *id)
{
	struct job_view jv;
	struct buf b;

	assert_int_equal(view_job(&f->v, id, &jv), 0);
	buf_init(&b, BUF_DEFAULT_MAX);
	assert_int_equal(render_job_status(&f->v, &jv, &b), 0);
	return buf_detach(&b, NULL);
}

static size_t count_lines(const char *s, const char *prefix)
{
	size_t n = 0, pl = strlen(prefix);

	for (const char *l = s; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		if (!strncmp(l, prefix, pl))
			n++;
	return n;
}

static void no_controls(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f ||
		    (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			fail_msg("control byte 0x%02x in:\n%s", *p, s);
}

static void test_render_status_escapes_outside_text(void **state)
{
	struct fixture *f = *state;
	char *st = status_of(f, "7");

	no_controls(st);
	assert_int_equal(count_lines(st, "state"), 1);
	assert_int_equal(count_lines(st, "deletable"), 1);
	assert_non_null(
		strstr(st, "\nname        n\\nstate       FINISHED\\x1b[2J\n"));
	/* the first line of the message: up to its newline, CR escaped */
	assert_non_null(
		strstr(st, "\nerror       e\\xc2\\x9b1m\\rdeletable yes\n"));
	free(st);
}

static void test_render_unknown_job_status_as_the_engine_said(void **state)
{
	struct fixture *f = *state;
	char *st = status_of(f, "7");

	assert_non_null(strstr(st, "\nstate       UNKNOWN (the engine says "
				   "\"WEIRD\\x1b]0;x\\x07\", a state stfs "
				   "does not know)\n"));
	assert_non_null(strstr(st, "\ndeletable   no EAGAIN R3 "));
	free(st);
	st = status_of(f, "8");
	assert_non_null(strstr(st, "\nstate       UNKNOWN (the engine gives "
				   "the job no jobStatus)\n"));
	free(st);
}

static void test_render_engine_ids_are_canonical(void **state)
{
	struct fixture *f = *state;
	struct job_view jv;
	char *st;

	/* the engine's "0005" is job 5, known to storage and engine alike */
	assert_int_equal(view_job(&f->v, "5", &jv), 0);
	assert_string_equal(jv.id, "5");
	assert_int_equal(jv.state, JS_RUNNING);
	assert_non_null(jv.cj);
	assert_non_null(jv.ej);
	assert_string_equal(jv.ej->id, "5");
	for (const char *const *p = (const char *const[]){"05", "0005", "+5",
							  " 5", "5 ", NULL};
	     *p; p++)
		if (view_job(&f->v, *p, &jv) != -ENOENT)
			fail_msg("'%s' names a job", *p);
	st = status_of(f, "5");
	assert_non_null(strstr(st, "\nsource      engine and storage\n"));
	free(st);
}

static void test_render_health_escapes_engine_errors(void **state)
{
	struct fixture *f = *state;
	struct buf b;

	be_note_error(f->fs.ckpt, -EIO, "GET x: server said \x1b]8;;evil\a%s",
		      "\nok");
	buf_init(&b, BUF_DEFAULT_MAX);
	assert_int_equal(render_health(&f->v, &b), 0);
	no_controls(b.data);
	assert_non_null(
		strstr(b.data, "server said \\x1b]8;;evil\\x07\\nok\n"));
	assert_non_null(strstr(
		b.data, "last error: engine said: bad\\n\\x1b[31mthing\n"));
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_render_status_escapes_outside_text, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_render_unknown_job_status_as_the_engine_said,
			setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_render_engine_ids_are_canonical, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_render_health_escapes_engine_errors, setup_down,
			teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
