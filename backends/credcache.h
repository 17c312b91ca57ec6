/*
 * credcache — the refresh discipline that awscred (AWS credentials) and
 * gcsauth (GCS tokens) share: one thread at a time fetches new credentials
 * while the others keep using the current ones as long as they are usable;
 * only unusable ones make callers wait, with a deadline; a failed fetch is
 * not tried again for CREDCACHE_RETRY_MS.  The caller owns the credentials
 * and the lock; credcache only decides.
 *
 *	pthread_mutex_lock(&c.lock);
 *	for (;;) {
 *		usable = ...; due = ...;
 *		a = credcache_step(&c, usable, due, &tried, deadline_ms);
 *		if (a == CC_FETCH) { unlock; fetch; lock; install;
 *				     credcache_done(&c, ok); continue; }
 *		if (a == CC_AGAIN) continue;
 *		break;		// CC_USE, or -errno
 *	}
 */
#ifndef STFS_CREDCACHE_H
#define STFS_CREDCACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define CREDCACHE_RETRY_MS 1000 /* after a failed fetch */

struct credcache {
	pthread_mutex_t lock; /* the caller's lock over its credentials too */
	pthread_cond_t done;  /* a fetch ended (monotonic clock) */
	bool refreshing;      /* a thread is fetching */
	int64_t next_try_ms;  /* monotonic: no fetch before, after a failure */
};

enum { CC_USE = 0, CC_FETCH = 1, CC_AGAIN = 2 };

/** Set up the lock and the condition.  0 or -ENOMEM. */
int credcache_init(struct credcache *c);
void credcache_destroy(struct credcache *c);

/**
 * With c->lock held: what to do now.  CC_USE (use the current
 * credentials), CC_FETCH (this thread fetches: *tried is set, unlock,
 * fetch, lock, credcache_done), CC_AGAIN (waited for another thread's
 * fetch: look again), -EACCES (unusable and a fetch just failed) or
 * -ETIMEDOUT (waited past deadline_ms, monotonic).
 */
int credcache_step(struct credcache *c, bool usable, bool due, bool *tried,
		   int64_t deadline_ms);

/** With c->lock held: the fetch this thread started ended. */
void credcache_done(struct credcache *c, bool ok);

/**
 * Read a whole file of at most `max` bytes that only its owner may access
 * into *out (NUL-ended; wipe and free it), *len its length.  -ENOENT or
 * another -errno when it cannot be opened (not logged); -EINVAL (not a
 * regular file, too big) and -EACCES (group/other bits) are logged with
 * `who` ("s3", "gcs").
 */
int secret_file_read(const char *who, const char *path, size_t max, char **out,
		     size_t *len);

/** Wipe and free a secret string; *s becomes NULL. */
void secret_free(char **s);

#endif
