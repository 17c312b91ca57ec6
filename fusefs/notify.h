/*
 * notify — service-manager readiness (systemd's Type=notify, stfs(1)
 * "SYSTEMD").  READY=1 is sent once the mount answers a request, not when
 * the daemon starts: a unit ordered After=stfs.service may use the tree at
 * once.  Without $NOTIFY_SOCKET everything here is a no-op.
 */
#ifndef STFS_NOTIFY_H
#define STFS_NOTIFY_H

/** Remember the mount point (the last non-option argument wins). 0 or
 * -ENOMEM. */
int notify_set_mountpoint(const char *path);

/**
 * From the filesystem's init callback: start a detached thread that waits
 * (at most `timeout_ms`) until statfs() of the mount point is answered by a
 * FUSE filesystem, then tells the service manager READY=1 with a STATUS line.
 * Never blocks the caller.
 */
void notify_ready_when_mounted(int timeout_ms);

/** Tell the service manager we are stopping (STOPPING=1); no-op without it. */
void notify_stopping(void);

#endif
