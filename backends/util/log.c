#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static bool log_stderr = true;
static bool log_syslog;
static int log_level = LOG_INFO; /* atomic */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const names[] = {"emerg",   "alert",	 "crit", "error",
				    "warning", "notice", "info", "debug"};

void log_setup(bool to_stderr, bool to_syslog, bool debug)
{
	log_stderr = to_stderr;
	log_syslog = to_syslog;
	if (debug)
		log_set_level(LOG_DEBUG);
	if (to_syslog)
		openlog("stfs", LOG_PID, LOG_DAEMON);
}

void log_set_level(int level)
{
	if (level < LOG_ERR)
		level = LOG_ERR;
	if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	__atomic_store_n(&log_level, level, __ATOMIC_RELAXED);
}

int log_get_level(void)
{
	return __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

int log_level_parse(const char *name)
{
	for (int l = LOG_ERR; l <= LOG_DEBUG; l++)
		if (name && strcmp(name, names[l]) == 0)
			return l;
	return -1;
}

const char *log_level_name(int level)
{
	return names[level & 7];
}

static void log_emit(int level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void log_emit(int level, const char *fmt, va_list ap)
{
	va_list cp;

	if (log_syslog) {
		va_copy(cp, ap);
		vsyslog(level, fmt, cp);
		va_end(cp);
	}
	if (log_stderr) {
		pthread_mutex_lock(&log_lock);
		fprintf(stderr, "stfs: %s: ", names[level & 7]);
		va_copy(cp, ap);
		vfprintf(stderr, fmt, cp);
		va_end(cp);
		fputc('\n', stderr);
		pthread_mutex_unlock(&log_lock);
	}
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if ((level & 7) > log_get_level())
		return;
	va_start(ap, fmt);
	log_emit(level, fmt, ap);
	va_end(ap);
}

static void log_always(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void log_always(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(level, fmt, ap);
	va_end(ap);
}

int log_cycle_level(void)
{
	int next = log_get_level() + 1;

	if (next > LOG_DEBUG)
		next = LOG_ERR;
	log_set_level(next);
	log_always(LOG_NOTICE, "log level is now %s (SIGUSR2 cycles it)",
		   names[next]);
	return next;
}
