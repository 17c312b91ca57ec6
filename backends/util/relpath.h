/*
 * relpath — the one rule for the relative paths the backends accept.
 *
 * A backend path is "" (the namespace root) or components separated by
 * single '/', none of them empty, "." or "..": no leading, trailing or
 * doubled slash.
 *
 * Ownership: nothing is allocated or kept.
 * Threads: pure function, safe from any thread.
 */
#ifndef STFS_RELPATH_H
#define STFS_RELPATH_H

/** 0 when `path` is a valid backend path; -EINVAL otherwise (or NULL). */
int relpath_check(const char *path);

#endif
