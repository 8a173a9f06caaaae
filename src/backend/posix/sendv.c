/* sendv.c — sendmsg over the rest of a write request, in slices of IOV_MAX
 * iovecs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sendv.h"

#include <errno.h>
#include <limits.h>
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

static void advance(zl_write_req *c, size_t sent)
{
    while (c->index < c->count) {
        size_t left = c->iov[c->index].len - c->offset;
        if (sent < left) {
            c->offset += sent;
            return;
        }
        sent -= left;
        c->index++;
        c->offset = 0;
    }
}

int zl_posix_sendv(int fd, zl_write_req *c, size_t *bytes)
{
    while (c->index < c->count) {
        const zl_iovec *iov = c->iov + c->index;
        int left = c->count - c->index;
        struct iovec resume[ZL_IOV_RESUME];
        struct msghdr msg = {0};
        if (c->offset == 0) {
            msg.msg_iov = (struct iovec *)iov;
            msg.msg_iovlen = left < ZL_IOV_SLICE ? left : ZL_IOV_SLICE;
        } else {
            int n = left < ZL_IOV_RESUME ? left : ZL_IOV_RESUME;
            for (int i = 0; i < n; i++)
                resume[i] = (struct iovec){iov[i].base, iov[i].len};
            resume[0].iov_base = (char *)resume[0].iov_base + c->offset;
            resume[0].iov_len -= c->offset;
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
        int slice_end = c->index + (int)msg.msg_iovlen;
        *bytes += (size_t)sent;
        advance(c, (size_t)sent);
        if (c->index < slice_end)
            return 0;
    }
    return 1;
}
