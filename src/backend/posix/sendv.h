/* sendv.h — the write path the POSIX backends share: sendmsg over the rest
 * of an op's iovecs, as far as the socket takes them. */
#ifndef ZL_POSIX_SENDV_H
#define ZL_POSIX_SENDV_H

#include <stddef.h>

#include "backend.h"

/* Sends the rest of c, adding what went out to *bytes. 1 when everything
 * is written; 0 when the socket took no more (EAGAIN, or a partial write,
 * which means the send buffer is full: the caller waits for writability
 * instead of spending an EAGAIN); -errno on failure. Never raises SIGPIPE:
 * MSG_NOSIGNAL where it exists, else the socket carries SO_NOSIGPIPE. */
int zl_posix_sendv(int fd, zl_write_cursor *c, size_t *bytes);

#endif
