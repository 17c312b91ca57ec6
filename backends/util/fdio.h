/*
 * fdio — whole writes to a file descriptor.
 *
 * Ownership: the caller owns the descriptor and the bytes.
 * Threads: as write(2); two threads writing one fd need their own lock.
 */
#ifndef STFS_FDIO_H
#define STFS_FDIO_H

#include <stddef.h>

/**
 * write(2) all `n` bytes of `p` to `fd`, retrying on EINTR and after
 * short writes.  0, or the -errno of the write that failed (some bytes
 * may have been written by then).
 */
int fd_write_all(int fd, const char *p, size_t n);

#endif
