/* try_read.c — a read of a handle's socket from another thread than its
 * loop's, which never blocks (zl_handle_try_read, DESIGN.md §5). */
#include "readiness.h"

#include <errno.h>
#include <sys/socket.h>

int64_t zl_handle_try_read(zl_handle *h, void *buf, size_t len, bool peek)
{
    int flags = MSG_DONTWAIT | (peek ? MSG_PEEK : 0);
    for (;;) {
        ssize_t n = recv(h->io.fd, buf, len, flags);
        if (n >= 0)
            return n;
        if (errno != EINTR)
            return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
}
