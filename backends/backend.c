/*
 * backend — the core half of backend.h: the registry of backends by URI
 * scheme, allocation, and the be_* wrappers that count and time every op.
 *
 * Stats are updated with __atomic builtins (relaxed: they are counters for
 * .stfs/stats, not synchronisation).  Health fields are guarded by
 * be->health_lock.
 */
#include "backends/backend.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "conf/schemes.h"
#include "util/log.h"

/*
 * Every backend stfs can serve a namespace with.  NULL-terminated.  Which
 * backend serves a URI is said by the scheme table (conf/schemes.h, by
 * be_ops.name): ADD NEW SCHEMES THERE, new backends here (declare their ops
 * in backend.h next to be_local_ops).
 */
static const struct be_ops *const be_registry[] = {
	&be_local_ops,
	&be_gcs_ops, /* gs://: JSON API, or the s3 backend with HMAC keys */
	&be_s3_ops,
	&be_webhdfs_ops, /* hdfs://, webhdfs://, swebhdfs:// */
	NULL,
};

int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void stat_add(uint64_t *ctr, uint64_t n)
{
	__atomic_fetch_add(ctr, n, __ATOMIC_RELAXED);
}

/* count one finished op: its latency, and an error unless routine */
static void stat_done(struct backend *be, uint64_t t0, long long rc)
{
	uint64_t us = mono_us() - t0;

	stat_add(&be->stats.latency_us_sum, us);
	hist_observe(&be->stats.latency, us);
	if (rc < 0 && rc != -ENOENT)
		stat_add(&be->stats.errors, 1);
}

/*
 * The scheme of `uri`: "file" for a bare absolute path, else the RFC 3986
 * scheme before ':' (ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
 * 0 and scheme copied; -EINVAL.
 */
static int uri_scheme(const char *uri, char *out, size_t outsz)
{
	size_t i;

	if (!uri || !*uri)
		return -EINVAL;
	if (uri[0] == '/') {
		snprintf(out, outsz, "file");
		return 0;
	}
	if (!((uri[0] >= 'a' && uri[0] <= 'z') ||
	      (uri[0] >= 'A' && uri[0] <= 'Z')))
		return -EINVAL;
	for (i = 0; uri[i] && uri[i] != ':'; i++) {
		char c = uri[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '+' || c == '-' ||
		      c == '.'))
			return -EINVAL;
	}
	if (uri[i] != ':' || i >= outsz)
		return -EINVAL;
	memcpy(out, uri, i);
	out[i] = '\0';
	return 0;
}

int be_open_ops(const struct be_ops *ops, const char *uri,
		const struct stfs_conf *conf, struct backend **out)
{
	struct backend *be;
	int rc;

	*out = NULL;
	if (!ops || !ops->init || !ops->destroy || !ops->list_page ||
	    !ops->stat || !ops->read)
		return -EINVAL;
	be = calloc(1, sizeof(*be));
	if (!be)
		return -ENOMEM;
	be->ops = ops;
	be->conf = conf;
	pthread_mutex_init(&be->health_lock, NULL);
	be->uri = strdup(uri ? uri : "");
	if (!be->uri) {
		rc = -ENOMEM;
		goto out_free;
	}
	if (ops->priv_size) {
		be->priv = calloc(1, ops->priv_size);
		if (!be->priv) {
			rc = -ENOMEM;
			goto out_free;
		}
	}
	rc = ops->init(be, be->uri, conf);
	if (rc < 0) {
		ops->destroy(be);
		goto out_free;
	}
	*out = be;
	return 0;

out_free:
	pthread_mutex_destroy(&be->health_lock);
	free(be->priv);
	free(be->uri);
	free(be);
	return rc;
}

const struct be_ops *be_registry_at(size_t i)
{
	return i < sizeof(be_registry) / sizeof(be_registry[0]) - 1
		       ? be_registry[i]
		       : NULL;
}

const struct be_ops *be_find(const char *uri)
{
	char scheme[32];
	const struct stfs_scheme *s;

	if (uri_scheme(uri, scheme, sizeof(scheme)) < 0)
		return NULL;
	s = scheme_find(scheme, strlen(scheme));
	for (size_t i = 0; s && be_registry[i]; i++)
		if (!strcmp(be_registry[i]->name, s->backend))
			return be_registry[i];
	return NULL;
}

int be_open(const char *uri, const struct stfs_conf *conf, struct backend **out)
{
	char scheme[32];
	const struct be_ops *ops;

	*out = NULL;
	if (uri_scheme(uri, scheme, sizeof(scheme)) < 0) {
		log_err("storage URI '%s' has no scheme", uri ? uri : "");
		return -EINVAL;
	}
	ops = be_find(uri);
	if (ops)
		return be_open_ops(ops, uri, conf, out);
	log_err("storage URI '%s': no backend serves '%s:'", uri, scheme);
	return -EPROTONOSUPPORT;
}

void be_close(struct backend *be)
{
	if (!be)
		return;
	be->ops->destroy(be);
	pthread_mutex_destroy(&be->health_lock);
	free(be->priv);
	free(be->uri);
	free(be);
}

/* be_list: stop requesting pages once the caller's fill asked to stop */
struct list_ctx {
	be_fill_fn fill;
	void *cookie;
	bool stopped;
};

static int list_fill(void *cookie, const char *name, const struct be_attr *attr)
{
	struct list_ctx *lc = cookie;
	int rc = lc->fill(lc->cookie, name, attr);

	if (rc)
		lc->stopped = true;
	return rc;
}

int be_list(struct backend *be, const char *dir, unsigned flags,
	    be_fill_fn fill, void *cookie)
{
	struct list_ctx lc = {.fill = fill, .cookie = cookie};
	char *cursor = NULL, *next;
	uint64_t t0 = mono_us();
	int rc;

	do {
		next = NULL;
		stat_add(&be->stats.lists, 1);
		rc = be->ops->list_page(be, dir, flags, cursor, list_fill, &lc,
					&next);
		if (rc < 0) {
			free(next);
			next = NULL;
			break;
		}
		if (next && cursor && !strcmp(next, cursor)) {
			/* a cursor that does not advance would loop forever */
			log_err("%s: list of '%s' does not advance",
				be->ops->name, dir);
			free(next);
			next = NULL;
			rc = -EIO;
			break;
		}
		free(cursor);
		cursor = next;
	} while (cursor && !lc.stopped);
	free(cursor);
	stat_done(be, t0, rc);
	return rc;
}

int be_stat(struct backend *be, const char *path, struct be_attr *out)
{
	uint64_t t0 = mono_us();
	int rc;

	stat_add(&be->stats.stats, 1);
	rc = be->ops->stat(be, path, out);
	stat_done(be, t0, rc);
	return rc;
}

ssize_t be_read(struct backend *be, const char *path, void *buf, size_t size,
		off_t off)
{
	uint64_t t0 = mono_us();
	ssize_t rc;

	if (off < 0)
		return -EINVAL;
	stat_add(&be->stats.reads, 1);
	rc = be->ops->read(be, path, buf, size, off);
	if (rc > 0)
		stat_add(&be->stats.read_bytes, (uint64_t)rc);
	stat_done(be, t0, rc);
	return rc;
}

int be_remove(struct backend *be, const char *path)
{
	uint64_t t0;
	int rc;

	if (!be->ops->remove || !(be->ops->caps & BE_CAP_DELETE))
		return -EROFS;
	t0 = mono_us();
	stat_add(&be->stats.removes, 1);
	rc = be->ops->remove(be, path);
	stat_done(be, t0, rc);
	return rc;
}

int be_rmdir(struct backend *be, const char *path)
{
	uint64_t t0;
	int rc;

	if (!be->ops->remove || !(be->ops->caps & BE_CAP_DELETE))
		return -EROFS;
	if (!be->ops->rmdir)
		return 0;
	t0 = mono_us();
	stat_add(&be->stats.removes, 1);
	rc = be->ops->rmdir(be, path);
	stat_done(be, t0, rc);
	return rc;
}

void be_note_error(struct backend *be, int err, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&be->health_lock);
	be->last_err = err > 0 ? -err : err;
	be->last_err_ms = now_ms();
	va_start(ap, fmt);
	vsnprintf(be->last_err_msg, sizeof(be->last_err_msg), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&be->health_lock);
}

void be_note_ok(struct backend *be)
{
	int64_t t = now_ms();

	pthread_mutex_lock(&be->health_lock);
	be->last_ok_ms = t;
	pthread_mutex_unlock(&be->health_lock);
}

void be_health(struct backend *be, int *last_err, int64_t *last_err_ms,
	       int64_t *last_ok_ms, char *msg, size_t msgsz)
{
	pthread_mutex_lock(&be->health_lock);
	if (last_err)
		*last_err = be->last_err;
	if (last_err_ms)
		*last_err_ms = be->last_err_ms;
	if (last_ok_ms)
		*last_ok_ms = be->last_ok_ms;
	if (msg && msgsz)
		snprintf(msg, msgsz, "%s", be->last_err_msg);
	pthread_mutex_unlock(&be->health_lock);
}

int be_describe(struct backend *be, struct buf *out)
{
	if (!be || !be->ops->describe)
		return 0;
	return be->ops->describe(be, out);
}
