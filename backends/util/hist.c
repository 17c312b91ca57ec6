#include "util/hist.h"

#include <inttypes.h>

static const uint64_t bound_us[HIST_N - 1] = {
	1000,	5000,	10000,	 25000,	  50000,   100000,
	250000, 500000, 1000000, 2500000, 5000000, 10000000,
};
static const char *const bound_txt[HIST_N] = {
	"0.001", "0.005", "0.01", "0.025", "0.05", "0.1",  "0.25",
	"0.5",	 "1",	  "2.5",  "5",	   "10",   "+Inf",
};

void hist_observe(struct hist *h, uint64_t us)
{
	int i = 0;

	while (i < HIST_N - 1 && us > bound_us[i])
		i++;
	__atomic_fetch_add(&h->le[i], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->sum_us, us, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->count, 1, __ATOMIC_RELAXED);
}

int hist_render(struct buf *out, const char *name, const char *labels,
		const struct hist *h)
{
	uint64_t cum = 0, sum = __atomic_load_n(&h->sum_us, __ATOMIC_RELAXED);
	const char *sep = labels[0] ? "," : "";

	for (int i = 0; i < HIST_N; i++) {
		cum += __atomic_load_n(&h->le[i], __ATOMIC_RELAXED);
		buf_printf(out, "%s_bucket{%s%sle=\"%s\"} %" PRIu64 "\n", name,
			   labels, sep, bound_txt[i], cum);
	}
	/* the count is the +Inf bucket, so the two always agree */
	buf_printf(out, "%s_sum%s%s%s %" PRIu64 ".%06" PRIu64 "\n", name,
		   labels[0] ? "{" : "", labels, labels[0] ? "}" : "",
		   sum / 1000000, sum % 1000000);
	buf_printf(out, "%s_count%s%s%s %" PRIu64 "\n", name,
		   labels[0] ? "{" : "", labels, labels[0] ? "}" : "", cum);
	return buf_err(out);
}
