/* Unit tests for backends/util/hist.c: bucket edges, cumulative rendering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/hist.h"

static void test_hist_buckets_and_render(void **state)
{
	struct hist h;
	struct buf b;

	(void)state;
	memset(&h, 0, sizeof(h));
	hist_observe(&h, 1000);	    /* exactly 1 ms: le="0.001" */
	hist_observe(&h, 1001);	    /* just above: le="0.005" */
	hist_observe(&h, 700000);   /* le="1" */
	hist_observe(&h, 60000000); /* a minute: only +Inf */
	buf_init(&b, 8192);
	assert_int_equal(hist_render(&b, "x_seconds", "backend=\"c\"", &h), 0);
	assert_non_null(strstr(b.data, "x_seconds_bucket{backend=\"c\","
				       "le=\"0.001\"} 1\n"));
	assert_non_null(strstr(b.data, "x_seconds_bucket{backend=\"c\","
				       "le=\"0.005\"} 2\n"));
	assert_non_null(strstr(b.data, "x_seconds_bucket{backend=\"c\","
				       "le=\"0.5\"} 2\n"));
	assert_non_null(strstr(b.data, "x_seconds_bucket{backend=\"c\","
				       "le=\"1\"} 3\n"));
	assert_non_null(strstr(b.data, "x_seconds_bucket{backend=\"c\","
				       "le=\"10\"} 3\n"));
	assert_non_null(strstr(b.data, "x_seconds_bucket{backend=\"c\","
				       "le=\"+Inf\"} 4\n"));
	assert_non_null(
		strstr(b.data, "x_seconds_sum{backend=\"c\"} 60.702001\n"));
	assert_non_null(strstr(b.data, "x_seconds_count{backend=\"c\"} 4\n"));
	buf_reset(&b);
	assert_int_equal(hist_render(&b, "y", "", &h), 0);
	assert_non_null(strstr(b.data, "y_bucket{le=\"+Inf\"} 4\n"));
	assert_non_null(strstr(b.data, "\ny_count 4\n"));
	buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_buckets_and_render),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
