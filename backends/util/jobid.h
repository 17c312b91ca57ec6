/*
 * jobid — the one parser of job ids, for every place an id comes from:
 * storage directory names, the engine's answers, path lookups, state files.
 *
 * The engine writes an id as String.valueOf(long) (a non-negative long):
 * that canonical text is the only name a job has in stfs.  Anything else
 * ("0<id>", "+<id>", " <id>", 20 digits) is not a job id: a storage
 * directory of such a name is never a job, a path naming one is ENOENT,
 * so no id has two names (README "The tree").  Pure functions, thread-safe.
 */
#ifndef STFS_JOBID_H
#define STFS_JOBID_H

#include <stdbool.h>
#include <stddef.h>

/* longest canonical id (INT64_MAX) plus the NUL */
#define JOBID_SZ 20

/** Whether s[0..len) is a canonical id: 1-19 ASCII digits, no leading
 * zero (but "0" itself), value <= INT64_MAX. */
bool jobid_canonical(const char *s, size_t len);

/** Numeric order of two canonical ids (-1, 0, 1). */
int jobid_cmp(const char *a, const char *b);

/**
 * The canonical id of the text `s` an engine sent as a jobId: ASCII digits,
 * leading zeros dropped (the engine's Long.parseLong reads "05" as 5), value
 * <= INT64_MAX, into out[JOBID_SZ].  0, or -EINVAL for anything else (a
 * sign, a space, no digit, too large).
 */
int jobid_normalize(const char *s, size_t len, char out[JOBID_SZ]);

#endif
