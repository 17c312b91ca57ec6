#include "fusefs/notify.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "util/log.h"

#define FUSE_SUPER_MAGIC 0x65735546

static char *mountpoint;
static int wait_ms;

int notify_set_mountpoint(const char *path)
{
	/* absolute: a daemon that forks into the background leaves its cwd */
	char *p = realpath(path, NULL);

	if (!p)
		p = strdup(path);
	if (!p)
		return -ENOMEM;
	free(mountpoint);
	mountpoint = p;
	return 0;
}

static void *ready_thread(void *arg)
{
	struct timespec step = {0, 20 * 1000 * 1000};
	struct statfs sf;

	(void)arg;
	for (int waited = 0; waited < wait_ms; waited += 20) {
		/* answered by the kernel only once INIT is done, i.e. by us */
		if (statfs(mountpoint, &sf) == 0 &&
		    sf.f_type == FUSE_SUPER_MAGIC) {
			sd_notifyf(0, "READY=1\nSTATUS=mounted on %s",
				   mountpoint);
			return NULL;
		}
		nanosleep(&step, NULL);
	}
	log_msg(LOG_WARNING, "readiness: %s did not answer within %d ms",
		mountpoint, wait_ms);
	sd_notifyf(0, "STATUS=mount point %s not answering", mountpoint);
	return NULL;
}

void notify_ready_when_mounted(int timeout_ms)
{
	pthread_t t;

	if (!getenv("NOTIFY_SOCKET") || !mountpoint)
		return;
	wait_ms = timeout_ms;
	if (pthread_create(&t, NULL, ready_thread, NULL) == 0)
		pthread_detach(t);
	else
		sd_notify(0, "READY=1"); /* better early than never */
}

void notify_stopping(void)
{
	if (getenv("NOTIFY_SOCKET"))
		sd_notify(0, "STOPPING=1");
}
