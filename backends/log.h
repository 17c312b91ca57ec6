/*
 * log — the daemon's one logging choke point.
 *
 * Before the daemon detaches, lines go to stderr; after, to syslog (and to
 * stderr as well in foreground mode).  Levels are syslog's.  Thread-safe.
 * Nothing secret may be passed here: callers redact first.
 */
#ifndef STFS_LOG_H
#define STFS_LOG_H

#include <stdbool.h>
#include <syslog.h>

/** Choose the sinks: stderr, syslog, and whether LOG_DEBUG lines pass. */
void log_setup(bool to_stderr, bool to_syslog, bool debug);
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
