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

/** Choose the sinks: stderr, syslog; `debug` sets the level to LOG_DEBUG. */
void log_setup(bool to_stderr, bool to_syslog, bool debug);

/* Levels (stfs(1) "LOGGING"): a line passes when its syslog level is at or
 * above the current one in severity (LOG_ERR .. LOG_DEBUG); LOG_INFO by
 * default.  Thread-safe; may change while the daemon runs. */
void log_set_level(int level);
int log_get_level(void);
/** error, warning, notice, info, debug -> LOG_*; -1 for anything else. */
int log_level_parse(const char *name);
const char *log_level_name(int level);
/** SIGUSR2: the next level (error -> warning -> ... -> debug -> error),
 * announced in a line that passes whatever the level.  Returns it. */
int log_cycle_level(void);
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
