/* sendv.c — sendmsg over the rest of a write cursor, in slices of IOV_MAX
 * iovecs, and the one-shot write of an application thread's direct send. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sendv.h"
#include "readiness.h"
#include "write_cursor.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

_Static_assert(sizeof(zl_iovec) == sizeof(struct iovec) &&
                   offsetof(zl_iovec, base) ==
                       offsetof(struct iovec, iov_base) &&
                   offsetof(zl_iovec, len) == offsetof(struct iovec, iov_len),
               "zl_iovec must match struct iovec");

#ifdef MSG_NOSIGNAL
#define ZL_SEND_FLAGS MSG_NOSIGNAL
#else
#define ZL_SEND_FLAGS 0
#endif

enum {
    ZL_IOV_SLICE = IOV_MAX, /* the most one sendmsg takes */
    /* After a partial write the first iovec must be trimmed, which needs a
     * copy; only this many are copied, the next slice starts aligned. */
    ZL_IOV_RESUME = 64
};

int zl_posix_sendv(int fd, zl_write_cursor *c, size_t *bytes)
{
    while (!zl_write_cursor_done(c)) {
        struct iovec resume[ZL_IOV_RESUME];
        struct msghdr msg = {0};
        zl_write_cursor end = *c; /* where this call's buffers end */
        if (c->offset == 0) {
            int left = c->count - c->index;
            msg.msg_iov = (struct iovec *)(c->iov + c->index);
            msg.msg_iovlen = left < ZL_IOV_SLICE ? left : ZL_IOV_SLICE;
            end.index += (int)msg.msg_iovlen;
        } else {
            int n = 0;
            zl_iovec piece;
            while (n < ZL_IOV_RESUME &&
                   zl_write_cursor_next(&end, SIZE_MAX, &piece))
                resume[n++] = (struct iovec){piece.base, piece.len};
            msg.msg_iov = resume;
            msg.msg_iovlen = n;
        }
        ssize_t sent = sendmsg(fd, &msg, ZL_SEND_FLAGS);
        if (sent < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return -errno;
            return 0;
        }
        *bytes += (size_t)sent;
        zl_write_cursor_advance(c, (size_t)sent);
        if (zl_write_cursor_before(c, &end))
            return 0;
    }
    return 1;
}

int64_t zl_handle_try_write(zl_handle *h, const zl_iovec *iov, int n)
{
    struct msghdr msg = {0};
    msg.msg_iov = (struct iovec *)iov;
    msg.msg_iovlen = n;
    for (;;) {
        ssize_t sent = sendmsg(h->io.fd, &msg, ZL_SEND_FLAGS | MSG_DONTWAIT);
        if (sent >= 0)
            return sent;
        if (errno != EINTR)
            return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
}
