/*
 * timefmt — time stamps for the lines stfs writes to files (the audit
 * trail, the release store).
 *
 * Ownership: the caller owns the output buffer.  Allocates nothing.
 * Threads: reentrant (gmtime_r, no static state).
 */
#ifndef STFS_TIMEFMT_H
#define STFS_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

/**
 * Format `ms` (milliseconds since the epoch, may be negative) as UTC ISO
 * 8601 with milliseconds, "2024-01-02T03:04:05.678Z"; when gmtime_r()
 * cannot represent it, "@<ms>".  Truncated to `sz` (48 always fits).
 */
void timefmt_iso_ms(int64_t ms, char *out, size_t sz);

#endif
