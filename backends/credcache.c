/*
 * credcache — shared refresh discipline for credentials.  See credcache.h.
 */
#include "backends/credcache.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/backend.h"
#include "util/log.h"

int credcache_init(struct credcache *c)
{
	pthread_condattr_t ca;
	int rc;

	memset(c, 0, sizeof(*c));
	if (pthread_mutex_init(&c->lock, NULL))
		return -ENOMEM;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	rc = pthread_cond_init(&c->done, &ca) ? -ENOMEM : 0;
	pthread_condattr_destroy(&ca);
	if (rc)
		pthread_mutex_destroy(&c->lock);
	return rc;
}

void credcache_destroy(struct credcache *c)
{
	pthread_cond_destroy(&c->done);
	pthread_mutex_destroy(&c->lock);
}

int credcache_step(struct credcache *c, bool usable, bool due, bool *tried,
		   int64_t deadline_ms)
{
	int64_t now = mono_ms();
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ms / 1000),
		.tv_nsec = (long)(deadline_ms % 1000) * 1000000L,
	};

	if (usable && !due)
		return CC_USE;
	if (!c->refreshing && !*tried && now >= c->next_try_ms) {
		c->refreshing = true;
		*tried = true;
		return CC_FETCH;
	}
	if (usable)
		return CC_USE; /* another thread fetches, or it failed */
	if (!c->refreshing)
		return -EACCES;
	if (now >= deadline_ms ||
	    pthread_cond_timedwait(&c->done, &c->lock, &ts) == ETIMEDOUT)
		return -ETIMEDOUT;
	return CC_AGAIN;
}

void credcache_done(struct credcache *c, bool ok)
{
	if (!ok)
		c->next_try_ms = mono_ms() + CREDCACHE_RETRY_MS;
	c->refreshing = false;
	pthread_cond_broadcast(&c->done);
}

void secret_free(char **s)
{
	if (*s) {
		explicit_bzero(*s, strlen(*s));
		free(*s);
		*s = NULL;
	}
}

/*
 * Read a whole file that only its owner may access into *out (NUL-ended,
 * wipe it).  -ENOENT (no such file: the provider is not there), -EACCES
 * (mode, logged), -errno.
 */
int secret_file_read(const char *who, const char *path, size_t max, char **out,
		     size_t *len)
{
	struct stat st;
	char *b;
	size_t n = 0;
	ssize_t r;
	int fd;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size > max) {
		close(fd);
		log_err("%s: '%s' is not a regular file of at most %zu bytes",
			who, path, max);
		return -EINVAL;
	}
	if (st.st_mode & 077) {
		close(fd);
		log_err("%s: '%s' is accessible by group or others (mode "
			"%03o); refusing it (chmod 600)",
			who, path, (unsigned)(st.st_mode & 0777));
		return -EACCES;
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	while (n < (size_t)st.st_size) {
		r = read(fd, b + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	b[n] = '\0';
	*out = b;
	*len = n;
	return 0;
}
