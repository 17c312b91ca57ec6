#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static bool log_stderr = true;
static bool log_syslog;
static bool log_dbg;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_setup(bool to_stderr, bool to_syslog, bool debug)
{
	log_stderr = to_stderr;
	log_syslog = to_syslog;
	log_dbg = debug;
	if (to_syslog)
		openlog("stfs", LOG_PID, LOG_DAEMON);
}

void log_msg(int level, const char *fmt, ...)
{
	static const char *const names[] = {"emerg", "alert",	"crit",
					    "error", "warning", "notice",
					    "info",  "debug"};
	va_list ap;

	if (level == LOG_DEBUG && !log_dbg)
		return;
	if (log_syslog) {
		va_start(ap, fmt);
		vsyslog(level, fmt, ap);
		va_end(ap);
	}
	if (log_stderr) {
		pthread_mutex_lock(&log_lock);
		fprintf(stderr, "stfs: %s: ", names[level & 7]);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
		pthread_mutex_unlock(&log_lock);
	}
}
