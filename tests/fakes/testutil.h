/*
 * testutil — small helpers the unit tests share: the monotonic clock, a
 * millisecond sleep, reading a fixture file whole, removing a temp tree,
 * freeing a test's mount.
 *
 * Ownership: tu_load() hands the caller a malloc'd buffer to free().
 * Threads: every function is safe to call from any thread.
 */
#ifndef STFS_TESTS_TESTUTIL_H
#define STFS_TESTS_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stfs;

/** CLOCK_MONOTONIC in milliseconds. */
int64_t tu_mono_ms(void);
/** Sleep ms milliseconds (once; an interrupted sleep is cut short). */
void tu_sleep_ms(int ms);

/**
 * Read the file `dir` + `name` (dir ends in '/', or is "") whole into a
 * fresh buffer with a NUL after its last byte, so text fixtures are C
 * strings.  0 with *out set (free() it) and *len (if not NULL) the size;
 * -ENAMETOOLONG, -ENOMEM, or the -errno of open/seek/read (then *out is
 * untouched).
 */
int tu_load(const char *dir, const char *name, char **out, size_t *len);

struct engine_job;
/** The job's metric `k` (a string), parsed from its metrics text, in a
 * static buffer (not thread-safe); NULL when absent. */
const char *tu_metric(const struct engine_job *j, const char *k);
/** Whether the job's metrics text parses to an object. */
bool tu_has_metrics(const struct engine_job *j);

/** Heap bytes in use: glibc's count (chunks with their headers), or under
 * ASan (make check) the sanitizer's count of the bytes asked for. */
size_t tu_heap_used(void);

/** rm -rf `dir` (a test's mkdtemp directory).  0, or -1 when it failed. */
int tu_rmtree(const char *dir);

/** Free a test's mount (stfs_init + delete_attach): the policy's parts
 * (delete_detach), the mount (stfs_release) and its conf. */
void tu_mount_free(struct stfs *fs);

#endif
