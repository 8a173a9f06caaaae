/* write.c — the rest of a handle's write on epoll: sendmsg once the loop
 * has served the reads that are ready (posix/loop.c), the remainder after
 * EPOLLOUT, the completion always deferred. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "epoll_internal.h"
#include "sendv.h"

void zl_poller_write_ready(zl_handle *h)
{
    zl_op *op = h->write_op;
    int rc = zl_posix_sendv(h->io.fd, &op->impl.req.write, &op->impl.bytes);
    if (rc == 0) {
        /* EAGAIN or a partial write: the kernel reports EPOLLOUT once the
         * send buffer drains. */
        h->writable = false;
        zl_epoll_output_waits(h, true);
        return;
    }
    if (h->output_waits)
        zl_epoll_output_waits(h, false);
    h->write_op = NULL;
    zl_posix_complete(&h->io, op, rc < 0 ? rc : 0, op->impl.bytes);
}
