/* write.c — the write path of a handle: sendmsg once the loop has served
 * the reads that are ready (loop.c), the remainder after EPOLLOUT, the
 * completion always deferred. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "epoll_internal.h"
#include "sendv.h"
#include "write_cursor.h"

void zl_handle_write(zl_handle *h, zl_op *op, const zl_iovec *iov, int n)
{
    op->impl.io = &h->io;
    op->impl.bytes = 0;
    zl_write_cursor_set(&op->impl.req.write, iov, n);
    h->write_op = op;
    if (h->writable)
        zl_epoll_write_defer(h);
}

void zl_epoll_write_ready(zl_handle *h)
{
    zl_op *op = h->write_op;
    int rc = zl_posix_sendv(h->io.fd, &op->impl.req.write, &op->impl.bytes);
    if (rc == 0) {
        /* EAGAIN or a partial write: the kernel reports EPOLLOUT once the
         * send buffer drains. */
        h->writable = false;
        return;
    }
    h->write_op = NULL;
    zl_epoll_complete(&h->io, op, rc < 0 ? rc : 0, op->impl.bytes);
}
