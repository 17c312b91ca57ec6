#include "fusefs/signals.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>

#include "policy/audit.h"
#include "util/buf.h"
#include "conf/conf.h"
#include "util/log.h"
#include "mount/mount.h"

static struct stfs *sig_fs;
static signals_reload_fn sig_reload;
static pthread_t sig_thread;
static bool sig_running;
static int sig_stop; /* atomic */

int signals_block(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR2);
	return -pthread_sigmask(SIG_BLOCK, &set, NULL);
}

void signals_prepare(struct stfs *fs, signals_reload_fn reload)
{
	sig_fs = fs;
	sig_reload = reload;
}

/* `line` ("key = value") of `b` is absent from `other` */
static bool line_missing(const char *line, size_t n, const struct buf *other)
{
	const char *p = other->data ? other->data : "";

	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && memcmp(p, line, n) == 0)
			return false;
		p += len + (e != NULL);
	}
	return true;
}

/* the keys whose rendered line changed (log_level aside), comma-separated */
static void changed_keys(const struct buf *now, const struct buf *old,
			 struct buf *out)
{
	const char *p = now->data ? now->data : "";

	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		size_t klen = strcspn(p, " =\n");

		if (len && p[0] != '#' && line_missing(p, len, old) &&
		    !(klen == 9 && strncmp(p, "log_level", 9) == 0))
			buf_printf(out, "%s%.*s", out->len ? ", " : "",
				   (int)klen, p);
		p += len + (e != NULL);
	}
}

static void reload(void)
{
	struct stfs_conf nc;
	struct buf now, old, changed;
	char msg[300] = "";
	int lvl;

	if (sig_reload(&nc, msg, sizeof(msg))) {
		log_err("SIGHUP: configuration not re-read, the old one stays: "
			"%s",
			msg);
		return;
	}
	buf_init(&now, (size_t)1 << 20);
	buf_init(&old, (size_t)1 << 20);
	buf_init(&changed, 4096);
	if (conf_render(&nc, &now) == 0 &&
	    conf_render(&sig_fs->conf, &old) == 0)
		changed_keys(&now, &old, &changed);
	lvl = log_level_parse(nc.log_level);
	if (lvl >= 0)
		log_set_level(lvl);
	if (sig_fs->audit)
		audit_reopen(sig_fs->audit);
	stfs_invalidate(sig_fs);
	log_msg(LOG_NOTICE,
		"SIGHUP: configuration re-read (log_level %s), audit log "
		"reopened, caches dropped%s%s%s",
		log_level_name(log_get_level()),
		changed.len ? "; changed, applied at the next mount: " : "",
		changed.len ? changed.data : "", buf_err(&changed) ? "…" : "");
	buf_release(&now);
	buf_release(&old);
	buf_release(&changed);
	conf_release(&nc);
}

static void *sig_main(void *arg)
{
	sigset_t set;
	int sig;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR2);
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		if (__atomic_load_n(&sig_stop, __ATOMIC_ACQUIRE))
			break;
		if (sig == SIGUSR2)
			log_cycle_level();
		else if (sig == SIGHUP && sig_fs && sig_reload)
			reload();
	}
	return NULL;
}

void signals_start(void)
{
	if (sig_running)
		return;
	if (pthread_create(&sig_thread, NULL, sig_main, NULL) == 0)
		sig_running = true;
	else
		log_warn("signals: no thread for SIGHUP/SIGUSR2; they are "
			 "ignored");
}

void signals_stop(void)
{
	if (!sig_running)
		return;
	__atomic_store_n(&sig_stop, 1, __ATOMIC_RELEASE);
	pthread_kill(sig_thread, SIGHUP); /* blocked: sigwait takes it */
	pthread_join(sig_thread, NULL);
	sig_running = false;
}
