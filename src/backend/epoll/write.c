/* write.c — the write path of a handle: sendmsg once the loop has served
 * the reads that are ready (loop.c), the remainder after EPOLLOUT, the
 * completion always deferred. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "epoll_internal.h"

#include <errno.h>
#include <limits.h>

enum {
    ZL_EPOLL_IOV_SLICE = IOV_MAX, /* the most one sendmsg takes */
    /* After a partial write the first iovec must be trimmed, which needs a
     * copy; only this many are copied, the next slice starts aligned. */
    ZL_EPOLL_IOV_RESUME = 64
};

static void advance(struct zl_op_impl *impl, size_t sent)
{
    const zl_iovec *iov = impl->req.write.iov;
    while (impl->req.write.index < impl->req.write.count) {
        size_t left = iov[impl->req.write.index].len - impl->req.write.offset;
        if (sent < left) {
            impl->req.write.offset += sent;
            return;
        }
        sent -= left;
        impl->req.write.index++;
        impl->req.write.offset = 0;
    }
}

/* 1 when everything is written, 0 to wait for EPOLLOUT, or -errno. */
static int write_some(zl_handle *h, zl_op *op)
{
    struct zl_op_impl *impl = &op->impl;
    while (impl->req.write.index < impl->req.write.count) {
        const zl_iovec *iov = impl->req.write.iov + impl->req.write.index;
        int left = impl->req.write.count - impl->req.write.index;
        struct iovec resume[ZL_EPOLL_IOV_RESUME];
        struct msghdr msg = {0};
        if (impl->req.write.offset == 0) {
            msg.msg_iov = (struct iovec *)iov;
            msg.msg_iovlen =
                left < ZL_EPOLL_IOV_SLICE ? left : ZL_EPOLL_IOV_SLICE;
        } else {
            int n = left < ZL_EPOLL_IOV_RESUME ? left : ZL_EPOLL_IOV_RESUME;
            for (int i = 0; i < n; i++)
                resume[i] = (struct iovec){iov[i].base, iov[i].len};
            resume[0].iov_base =
                (char *)resume[0].iov_base + impl->req.write.offset;
            resume[0].iov_len -= impl->req.write.offset;
            msg.msg_iov = resume;
            msg.msg_iovlen = n;
        }
        ssize_t sent = sendmsg(h->io.fd, &msg, MSG_NOSIGNAL);
        if (sent < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                return -errno;
            h->writable = false;
            return 0;
        }
        int slice_end = impl->req.write.index + (int)msg.msg_iovlen;
        impl->bytes += (size_t)sent;
        advance(impl, (size_t)sent);
        /* A partial write means the socket buffer is full: the kernel
         * reports EPOLLOUT once it drains, so don't spend an EAGAIN. */
        if (impl->req.write.index < slice_end) {
            h->writable = false;
            return 0;
        }
    }
    return 1;
}

void zl_handle_write(zl_handle *h, zl_op *op, const zl_iovec *iov, int n)
{
    op->impl.io = &h->io;
    op->impl.bytes = 0;
    op->impl.req.write.iov = iov;
    op->impl.req.write.count = n;
    op->impl.req.write.index = 0;
    op->impl.req.write.offset = 0;
    h->write_op = op;
    if (h->writable)
        zl_epoll_write_defer(h);
}

void zl_epoll_write_ready(zl_handle *h)
{
    zl_op *op = h->write_op;
    int rc = write_some(h, op);
    if (rc == 0)
        return;
    h->write_op = NULL;
    zl_epoll_complete(&h->io, op, rc < 0 ? rc : 0, op->impl.bytes);
}
