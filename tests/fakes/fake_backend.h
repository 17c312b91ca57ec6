/*
 * fake_backend — an in-memory be_ops for unit tests.
 *
 * Files are (path, bytes, mtime) triples; directories are implied by the
 * paths ("a/b/c" makes "a" and "a/b" directories).  Faults can be injected
 * per op, for every path or for one exact path, and every op is counted.
 * With a page size set, list_page() returns that many entries per page and
 * a cursor, so callers' paging loops get exercised.
 *
 * Ownership: fake_be_open() returns a backend to be freed with be_close().
 * Threads: every function is safe to call concurrently (one mutex).
 */
#ifndef STFS_FAKE_BACKEND_H
#define STFS_FAKE_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"

enum fake_op {
	FAKE_LIST = 0,
	FAKE_STAT,
	FAKE_READ,
	FAKE_REMOVE,
	FAKE_RMDIR,
	FAKE_N_OPS,
};

extern const struct be_ops fake_be_ops;

/** A fresh, empty fake backend ("fake://").  0 or -ENOMEM. */
int fake_be_open(struct backend **out);
/** The same with capability bits `caps` (BE_CAP_DELETE, alone or with
 * BE_CAP_REMOTE, or 0).  0, -EINVAL, -ENOMEM. */
int fake_be_open_caps(unsigned caps, struct backend **out);

/** Add (or replace) a file with a copy of `data`.  0; -EINVAL; -ENOMEM. */
int fake_be_add(struct backend *be, const char *path, const void *data,
		size_t len, int64_t mtime_ns);
/** Add a file whose content is the string `s`. */
int fake_be_add_str(struct backend *be, const char *path, const char *s,
		    int64_t mtime_ns);
/** true when `path` is a file of the fake. */
bool fake_be_has(struct backend *be, const char *path);
/** Number of files held. */
size_t fake_be_count(struct backend *be);

/**
 * Make `op` fail with `err` (a negative errno) for `path` (NULL: every
 * path; for FAKE_LIST the path is the listed dir).  err == 0 clears that
 * fault.  A path fault wins over a global one.  0; -ENOMEM.
 */
int fake_be_fail(struct backend *be, enum fake_op op, const char *path,
		 int err);
/** Remove every injected fault. */
void fake_be_clear_faults(struct backend *be);
/** How many times `op` was called (list counts pages). */
unsigned fake_be_calls(struct backend *be, enum fake_op op);
/** Entries per list page; 0 (the default) lists everything at once. */
void fake_be_set_page_size(struct backend *be, size_t n);

#endif
