/*
 * hist — a latency histogram with fixed Prometheus buckets, updated with
 * atomic builtins from any thread (README "Prometheus", .stfs/stats).
 * Buckets (seconds): 0.001 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 +Inf.
 */
#ifndef STFS_HIST_H
#define STFS_HIST_H

#include <stdint.h>

#include "util/buf.h"

#define HIST_N 13 /* buckets, +Inf included */

struct hist {
	uint64_t le[HIST_N]; /* observations in bucket i (not cumulative) */
	uint64_t count;
	uint64_t sum_us;
};

/** Count one observation of `us` microseconds. */
void hist_observe(struct hist *h, uint64_t us);

/**
 * Append the _bucket (cumulative), _sum and _count lines of family `name`
 * with the label text `labels` (`backend="checkpoint"`, or "" for none);
 * the caller writes HELP and TYPE once per family.  0 or buf's error.
 */
int hist_render(struct buf *out, const char *name, const char *labels,
		const struct hist *h);

#endif
