/*
 * Unit tests for fusefs/policy/release.c in a mkdtemp directory: set/get and
 * the file's content and mode, survival across close+reopen (a remount),
 * protect, id validation, concurrent writers, stale temp files, listing,
 * and an unusable state_dir.
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

#include <inttypes.h>

#include "util/pcache.h"
#include "policy/release.h"

#define NS "file:///var/ns/"

struct fx {
	char dir[64];
	char ns[128]; /* dir/releases/<16 hex of the namespace's hash> */
};

static int rm_rf(const char *path)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd);
}

static int setup(void **st)
{
	struct fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/stfs-release-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->ns, sizeof(fx->ns), "%s/releases/%016" PRIx64, fx->dir,
		 pcache_hash(NS));
	*st = fx;
	return 0;
}

static int teardown(void **st)
{
	struct fx *fx = *st;

	rm_rf(fx->dir);
	free(fx);
	return 0;
}

static bool file_exists(const struct fx *fx, const char *name)
{
	char p[256];
	struct stat sb;

	snprintf(p, sizeof(p), "%s/%s", fx->ns, name);
	return stat(p, &sb) == 0;
}

static void read_file(const struct fx *fx, const char *name, char *out,
		      size_t sz)
{
	char p[256];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", fx->ns, name);
	f = fopen(p, "r");
	assert_non_null(f);
	n = fread(out, 1, sz - 1, f);
	out[n] = 0;
	fclose(f);
}

static void test_release_set_get(void **st)
{
	struct fx *fx = *st;
	struct release_store *rs;
	char p[256], txt[192];
	struct stat sb;
	struct release_bind bind = {.newest_ns = 1741356000123456789LL,
				    .finish_s = 1741356100};

	assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	snprintf(p, sizeof(p), "%s/releases", fx->dir);
	assert_int_equal(stat(p, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0700);
	assert_string_equal(release_dir(rs), fx->ns);
	assert_int_equal(stat(fx->ns, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0700);

	assert_false(release_is_released(rs, "953211384710987777"));
	assert_false(file_exists(fx, "953211384710987777"));
	/* 2025-03-07T14:02:11.042Z */
	assert_int_equal(release_set(rs, "953211384710987777", true, 1001,
				     1741356131042LL, &bind),
			 0);
	assert_true(release_is_released(rs, "953211384710987777"));
	assert_false(release_is_released(rs, "953211384710987778"));
	assert_true(file_exists(fx, "953211384710987777"));
	read_file(fx, "953211384710987777", txt, sizeof(txt));
	assert_string_equal(txt, "released 2025-03-07T14:02:11.042Z uid=1001 "
				 "newest_ns=1741356000123456789 "
				 "finish_s=1741356100\n");
	/* releasing again rewrites with the new time and uid */
	assert_int_equal(
		release_set(rs, "953211384710987777", true, 0, 0, NULL), 0);
	read_file(fx, "953211384710987777", txt, sizeof(txt));
	assert_string_equal(txt, "released 1970-01-01T00:00:00.000Z uid=0 "
				 "newest_ns=0 finish_s=0\n");
	release_close(rs);
	release_close(NULL);
}

static void test_release_survives_reopen(void **st)
{
	struct fx *fx = *st;
	struct release_store *rs;

	assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	assert_int_equal(release_set(rs, "1", true, 0, 1000, NULL), 0);
	assert_int_equal(release_set(rs, "42", true, 0, 1000, NULL), 0);
	release_close(rs);

	assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	assert_true(release_is_released(rs, "1"));
	assert_true(release_is_released(rs, "42"));
	assert_false(release_is_released(rs, "4"));
	assert_int_equal(release_set(rs, "42", false, 0, 2000, NULL), 0);
	release_close(rs);

	assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	assert_true(release_is_released(rs, "1"));
	assert_false(release_is_released(rs, "42"));
	release_close(rs);
}

static void test_release_protect_removes(void **st)
{
	struct fx *fx = *st;
	struct release_store *rs;

	assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	/* protecting a job that was never released is fine */
	assert_int_equal(release_set(rs, "7", false, 0, 0, NULL), 0);
	assert_int_equal(release_set(rs, "7", true, 0, 0, NULL), 0);
	assert_true(file_exists(fx, "7"));
	assert_int_equal(release_set(rs, "7", false, 0, 0, NULL), 0);
	assert_false(file_exists(fx, "7"));
	assert_false(release_is_released(rs, "7"));
	release_close(rs);
}

static void test_release_bad_ids(void **st)
{
	struct fx *fx = *st;
	struct release_store *rs;
	static const char *const bad[] = {
		"",
		"../1",
		"1/2",
		"/1",
		".",
		"..",
		"12a",
		" 12",
		"12 ",
		"-1",
		"+1",
		"1\n",
		"01234567890123456789", /* 20 digits */
		".tmp.1.2.3",
	};

	assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(release_set(rs, bad[i], true, 0, 0, NULL),
				 -EINVAL);
		assert_int_equal(release_set(rs, bad[i], false, 0, 0, NULL),
				 -EINVAL);
		assert_false(release_is_released(rs, bad[i]));
		assert_false(release_id_valid(bad[i]));
	}
	assert_int_equal(release_set(rs, NULL, true, 0, 0, NULL), -EINVAL);
	assert_int_equal(release_set(NULL, "1", true, 0, 0, NULL), -EINVAL);
	assert_false(release_is_released(rs, NULL));
	assert_false(release_is_released(NULL, "1"));
	/* 19 digits is the maximum */
	assert_true(release_id_valid("9223372036854775807"));
	assert_int_equal(
		release_set(rs, "9223372036854775807", true, 0, 0, NULL), 0);
	assert_true(release_is_released(rs, "9223372036854775807"));
	release_close(rs);
}

#define N_THREADS  8
#define PER_THREAD 40

struct worker {
	struct release_store *rs;
	int t;
	int rc;
};

static void *worker(void *arg)
{
	struct worker *w = arg;
	char id[24];

	for (int i = 0; i < PER_THREAD; i++) {
		snprintf(id, sizeof(id), "%d", w->t * 1000 + i);
		w->rc |= release_set(w->rs, id, true, (uid_t)w->t, i, NULL);
		/* everyone also fights over the same id */
		w->rc |= release_set(w->rs, "5", (i + w->t) % 2, 0, i, NULL);
		if (i % 3 == 0)
			w->rc |= release_set(w->rs, id, false, 0, i, NULL);
		/* readers run alongside */
		(void)release_is_released(w->rs, "5");
	}
	return NULL;
}

static void test_release_concurrent_threads(void **st)
{
	struct fx *fx = *st;
	struct release_store *rs;
	pthread_t th[N_THREADS];
	struct worker w[N_THREADS];
	char id[24];
	char(*ids)[20];
	size_t n, want = 0;

	assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	for (int t = 0; t < N_THREADS; t++) {
		w[t] = (struct worker){.rs = rs, .t = t + 1};
		assert_int_equal(pthread_create(&th[t], NULL, worker, &w[t]),
				 0);
	}
	for (int t = 0; t < N_THREADS; t++) {
		assert_int_equal(pthread_join(th[t], NULL), 0);
		assert_int_equal(w[t].rc, 0);
	}
	for (int t = 1; t <= N_THREADS; t++)
		for (int i = 0; i < PER_THREAD; i++) {
			bool on = i % 3 != 0;

			snprintf(id, sizeof(id), "%d", t * 1000 + i);
			assert_int_equal(release_is_released(rs, id), on);
			assert_int_equal(file_exists(fx, id), on);
			want += on;
		}
	/* cache and disk agree on the contested id */
	assert_int_equal(release_is_released(rs, "5"), file_exists(fx, "5"));
	want += release_is_released(rs, "5");
	ids = calloc(want + 4, sizeof(*ids));
	assert_non_null(ids);
	n = release_list(rs, ids, want + 4);
	assert_int_equal(n, want);
	for (size_t i = 1; i < n; i++)
		assert_true(strcmp(ids[i - 1], ids[i]) < 0);
	/* a short array: the total still comes back */
	assert_int_equal(release_list(rs, ids, 2), want);
	release_close(rs);

	/* the disk holds exactly the same set */
	assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	assert_int_equal(release_list(rs, ids, want + 4), want);
	release_close(rs);
	free(ids);
}

static void test_release_stale_temp_cleaned(void **st)
{
	struct fx *fx = *st;
	struct release_store *rs;
	char p[256];
	int fd;

	assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	release_close(rs);
	/* a crash between write and rename leaves a temp file behind */
	snprintf(p, sizeof(p), "%s/.tmp.123.999.0", fx->ns);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "released", 8), 8);
	close(fd);
	/* and junk that is not an id is ignored (not removed) */
	snprintf(p, sizeof(p), "%s/README", fx->ns);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	/* a directory named like an id is not a release */
	snprintf(p, sizeof(p), "%s/77", fx->ns);
	assert_int_equal(mkdir(p, 0700), 0);

	assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	assert_false(file_exists(fx, ".tmp.123.999.0"));
	assert_true(file_exists(fx, "README"));
	assert_false(release_is_released(rs, "123"));
	assert_false(release_is_released(rs, "77"));
	assert_int_equal(release_list(rs, NULL, 0), 0);
	/* writing still works, and leaves no temp file */
	assert_int_equal(release_set(rs, "123", true, 0, 0, NULL), 0);
	assert_true(file_exists(fx, "123"));
	assert_false(file_exists(fx, ".tmp.123.999.0"));
	release_close(rs);
}

/*
 * A release covers the job as it was: an object newer than the newest at
 * release, or a later finish time (a resumed run that ended again), is not
 * covered; the binding survives a reopen.
 */
static void test_release_binding(void **st)
{
	struct fx *fx = *st;
	struct release_store *rs;
	struct release_bind b = {.newest_ns = 5000, .finish_s = 70};

	assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	assert_false(release_covers(rs, "11", 0, 0));
	assert_int_equal(release_set(rs, "11", true, 0, 1000, &b), 0);
	for (int round = 0; round < 2; round++) {
		assert_true(release_covers(rs, "11", 5000, 70));
		assert_true(release_covers(rs, "11", 10, 0));
		assert_false(release_covers(rs, "11", 5001, 70));
		assert_false(release_covers(rs, "11", 5000, 71));
		assert_false(release_covers(rs, "12", 0, 0));
		release_close(rs);
		assert_int_equal(release_open(fx->dir, NS, &rs), 0);
	}
	/* releasing again binds anew */
	b.newest_ns = 9000;
	b.finish_s = 90;
	assert_int_equal(release_set(rs, "11", true, 0, 2000, &b), 0);
	assert_true(release_covers(rs, "11", 9000, 90));
	assert_int_equal(release_set(rs, "11", false, 0, 3000, NULL), 0);
	assert_false(release_covers(rs, "11", 0, 0));
	release_close(rs);
}

/*
 * Releases are kept per namespace: a release made through one checkpoint
 * URI is not one through another sharing the state_dir.  Files of older
 * versions (directly in releases/) and files that do not say what they
 * released are ignored: those jobs stay protected.
 */
static void test_release_namespaces_and_legacy(void **st)
{
	struct fx *fx = *st;
	struct release_store *a, *b;
	char p[256];
	int fd;

	assert_int_equal(release_open(fx->dir, NS, &a), 0);
	assert_int_equal(release_open(fx->dir, "file:///other/ns/", &b), 0);
	assert_string_not_equal(release_dir(a), release_dir(b));
	assert_int_equal(release_set(a, "21", true, 0, 1000, NULL), 0);
	assert_true(release_is_released(a, "21"));
	assert_false(release_is_released(b, "21"));
	release_close(b);
	assert_int_equal(release_open(fx->dir, "file:///other/ns/", &b), 0);
	assert_false(release_is_released(b, "21"));
	assert_int_equal(release_legacy_count(b), 0);
	release_close(b);
	release_close(a);
	/* an unscoped release of an older version, and an unbound one */
	for (int i = 0; i < 2; i++) {
		if (i == 0)
			snprintf(p, sizeof(p), "%s/releases/31", fx->dir);
		else
			snprintf(p, sizeof(p), "%s/32", fx->ns);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
		assert_true(fd >= 0);
		assert_int_equal(
			write(fd, "released 2025-01-01T00:00:00.000Z uid=0\n",
			      40),
			40);
		close(fd);
	}
	assert_int_equal(release_open(fx->dir, NS, &a), 0);
	assert_int_equal(release_legacy_count(a), 1);
	assert_false(release_is_released(a, "31"));
	assert_false(release_is_released(a, "32"));
	assert_true(release_is_released(a, "21"));
	assert_int_equal(release_open(fx->dir, "", &b), -EINVAL);
	assert_int_equal(release_open(fx->dir, NULL, &b), -EINVAL);
	release_close(a);
}

static void test_release_open_errors(void **st)
{
	struct fx *fx = *st;
	struct release_store *rs = (struct release_store *)fx;
	char p[256];
	int fd;

	assert_int_equal(release_open("", NS, &rs), -EINVAL);
	assert_null(rs);
	assert_int_equal(release_open(NULL, NS, &rs), -EINVAL);
	/* state_dir is a regular file */
	snprintf(p, sizeof(p), "%s/file", fx->dir);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(release_open(p, NS, &rs), -ENOTDIR);
	assert_null(rs);
	/* a missing parent */
	snprintf(p, sizeof(p), "%s/no/such", fx->dir);
	assert_int_equal(release_open(p, NS, &rs), -ENOENT);
	/* a missing state_dir itself is created */
	snprintf(p, sizeof(p), "%s/new", fx->dir);
	assert_int_equal(release_open(p, NS, &rs), 0);
	assert_non_null(rs);
	release_close(rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_release_set_get, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_release_survives_reopen,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_protect_removes,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_bad_ids, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_release_concurrent_threads,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_stale_temp_cleaned,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_binding, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_release_namespaces_and_legacy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release_open_errors, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("release", tests, NULL, NULL);
}
