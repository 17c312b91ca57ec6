/*
 * audit — the audit trail.  See audit.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "policy/audit.h"
#include "util/fdio.h"
#include "util/log.h"
#include "util/textesc.h"
#include "util/timefmt.h"

#define LINE_MAX_BYTES ((size_t)256 << 10)

struct line {
	struct line *next;
	size_t len;
	char text[]; /* len bytes, '\n'-terminated, not NUL-terminated */
};

struct audit {
	pthread_mutex_t ring_lock;
	struct line *head, *tail; /* protected by ring_lock; oldest first */
	size_t ring_len;	  /* protected by ring_lock; bytes of text */
	size_t ring_max;

	pthread_mutex_t file_lock;
	int fd;		 /* protected by file_lock; -1: no file */
	char *file;	 /* NULL: no file */
	bool file_error; /* protected by file_lock; a failure was logged */

	bool use_syslog; /* atomic (__atomic builtins) */
};

int audit_open(const char *file, size_t ring_bytes, struct audit **out)
{
	struct audit *a;

	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->fd = -1;
	a->ring_max = ring_bytes;
	a->use_syslog = true;
	if (file) {
		a->file = strdup(file);
		if (!a->file) {
			free(a);
			return -ENOMEM;
		}
		a->fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
			     0600);
		if (a->fd < 0) {
			int rc = -errno;

			log_err("audit: cannot open %s: %s", file,
				strerror(-rc));
			free(a->file);
			free(a);
			return rc;
		}
	}
	pthread_mutex_init(&a->ring_lock, NULL);
	pthread_mutex_init(&a->file_lock, NULL);
	*out = a;
	return 0;
}

void audit_close(struct audit *a)
{
	struct line *l, *next;

	if (!a)
		return;
	for (l = a->head; l; l = next) {
		next = l->next;
		free(l);
	}
	if (a->fd >= 0)
		close(a->fd);
	free(a->file);
	pthread_mutex_destroy(&a->ring_lock);
	pthread_mutex_destroy(&a->file_lock);
	free(a);
}

void audit_set_syslog(struct audit *a, bool on)
{
	if (a)
		__atomic_store_n(&a->use_syslog, on, __ATOMIC_RELAXED);
}

int audit_reopen(struct audit *a)
{
	int fd;

	if (!a || !a->file)
		return 0;
	fd = open(a->file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		int rc = -errno;

		log_warn("audit: cannot reopen %s: %s", a->file, strerror(-rc));
		return rc;
	}
	pthread_mutex_lock(&a->file_lock);
	if (a->fd >= 0)
		close(a->fd);
	a->fd = fd;
	a->file_error = false;
	pthread_mutex_unlock(&a->file_lock);
	return 0;
}

/* ---- formatting */

static bool bare_ok(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\')
			return false;
	}
	return true;
}

static int put_value(struct buf *b, const char *key, const char *v)
{
	int rc;

	if (!v)
		v = "";
	rc = buf_printf(b, " %s=", key);
	if (rc)
		return rc;
	if (bare_ok(v))
		return buf_puts(b, v);
	/* ASCII only, as syslog wants it; the escapes of textesc.h */
	rc = buf_append(b, "\"", 1);
	if (!rc)
		rc = textesc_append(b, v, strlen(v),
				    TEXTESC_ASCII | TEXTESC_QUOTE);
	if (!rc)
		rc = buf_append(b, "\"", 1);
	return rc;
}

int audit_format(const struct audit_rec *r, struct buf *out)
{
	size_t start = out->len;
	char when[48], en[32];
	int rc;

	timefmt_iso_ms(r->time_ms, when, sizeof(when));
	if (r->err == 0) {
		snprintf(en, sizeof(en), "0");
	} else {
		const char *name = strerrorname_np(r->err);

		if (name)
			snprintf(en, sizeof(en), "%s", name);
		else
			snprintf(en, sizeof(en), "%d", r->err);
	}
	rc = buf_printf(out, "time=%s uid=%lu pid=%ld", when,
			(unsigned long)r->uid, (long)r->pid);
	if (!rc)
		rc = put_value(out, "comm", r->comm);
	if (!rc)
		rc = put_value(out, "op", r->op);
	if (!rc)
		rc = put_value(out, "path", r->path);
	if (!rc)
		rc = put_value(out, "object", r->object);
	if (!rc)
		rc = put_value(out, "state", r->state);
	if (!rc)
		rc = put_value(out, "source", r->state_source);
	if (!rc)
		rc = buf_printf(out, " age_ms=%" PRId64, r->state_age_ms);
	if (!rc)
		rc = put_value(out, "rule", r->rule);
	if (!rc)
		rc = buf_printf(out, " outcome=%s errno=%s\n",
				r->err ? "refused" : "allowed", en);
	if (rc) {
		/* roll back the partial line */
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
	}
	return rc;
}

/* ---- sinks */

static void ring_add(struct audit *a, const char *text, size_t len)
{
	struct line *l;

	if (!a->ring_max || len > a->ring_max)
		return;
	l = malloc(sizeof(*l) + len);
	if (!l)
		return;
	l->next = NULL;
	l->len = len;
	memcpy(l->text, text, len);
	pthread_mutex_lock(&a->ring_lock);
	while (a->head && a->ring_len + len > a->ring_max) {
		struct line *old = a->head;

		a->head = old->next;
		if (!a->head)
			a->tail = NULL;
		a->ring_len -= old->len;
		free(old);
	}
	if (a->tail)
		a->tail->next = l;
	else
		a->head = l;
	a->tail = l;
	a->ring_len += len;
	pthread_mutex_unlock(&a->ring_lock);
}

static void file_add(struct audit *a, const char *text, size_t len)
{
	int rc;

	pthread_mutex_lock(&a->file_lock);
	if (a->fd < 0) {
		pthread_mutex_unlock(&a->file_lock);
		return;
	}
	rc = fd_write_all(a->fd, text, len);
	if (!rc && fdatasync(a->fd) < 0)
		rc = -errno;
	if (rc && !a->file_error) {
		a->file_error = true;
		log_warn("audit: cannot write %s: %s", a->file, strerror(-rc));
	} else if (!rc) {
		a->file_error = false;
	}
	pthread_mutex_unlock(&a->file_lock);
}

void audit_record(struct audit *a, const struct audit_rec *r)
{
	struct buf b;

	if (!a || !r)
		return;
	buf_init(&b, LINE_MAX_BYTES);
	if (audit_format(r, &b) || !b.len) {
		log_warn("audit: record too large or out of memory (op %s)",
			 r->op ? r->op : "?");
		buf_release(&b);
		return;
	}
	if (__atomic_load_n(&a->use_syslog, __ATOMIC_RELAXED))
		syslog(LOG_AUTHPRIV | LOG_NOTICE, "%.*s", (int)(b.len - 1),
		       b.data);
	file_add(a, b.data, b.len);
	ring_add(a, b.data, b.len);
	buf_release(&b);
}

int audit_snapshot(struct audit *a, struct buf *out)
{
	const struct line *l;
	size_t total = 0, room;
	int rc = 0;

	if (!a)
		return 0;
	pthread_mutex_lock(&a->ring_lock);
	room = out->max > out->len ? out->max - out->len : 0;
	l = a->head;
	total = a->ring_len;
	while (l && total > room) {
		total -= l->len;
		l = l->next;
	}
	for (; l && !rc; l = l->next)
		rc = buf_append(out, l->text, l->len);
	pthread_mutex_unlock(&a->ring_lock);
	return rc;
}

int audit_comm(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd, rc;

	if (!size)
		return -EINVAL;
	snprintf(buf, size, "?");
	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc) {
		snprintf(buf, size, "?");
		return rc;
	}
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}
