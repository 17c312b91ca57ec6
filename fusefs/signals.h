/*
 * signals — what a mounted daemon does on SIGHUP and SIGUSR2 (stfs(1)
 * "SIGNALS"):
 *   SIGHUP   re-read the configuration (the same sources and precedence as
 *            at mount: defaults, config=, -o, imports), apply log_level,
 *            reopen audit_log (after logrotate moved it) and drop the
 *            caches; settings that only a new mount can apply are named in
 *            a log line;
 *   SIGUSR2  cycle the log level (error, warning, notice, info, debug).
 * Both are blocked in every thread and taken by one sigwait() thread, so
 * nothing runs in a signal handler and libfuse's own SIGHUP handler (which
 * would unmount) never fires.
 */
#ifndef STFS_SIGNALS_H
#define STFS_SIGNALS_H

#include <stddef.h>

struct stfs;
struct stfs_conf;

/** Builds a fresh, validated configuration; 0, or -errno with a message. */
typedef int (*signals_reload_fn)(struct stfs_conf *out, char *msg, size_t n);

/** In main, before any thread exists: block SIGHUP and SIGUSR2. */
int signals_block(void);
/** Remember what the thread works on (before the mount). */
void signals_prepare(struct stfs *fs, signals_reload_fn reload);
/** From the filesystem's init (after daemonizing): start the thread. */
void signals_start(void);
/** After the mount ended: stop and join the thread. */
void signals_stop(void);

#endif
