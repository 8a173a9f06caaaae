/* write.c — the rest of a handle's write on kqueue: sendmsg once the loop
 * has served the reads that are ready (posix/loop.c); only when the socket
 * takes less than everything does EVFILT_WRITE come in, once, for the
 * remainder. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kqueue_internal.h"
#include "sendv.h"

int zl_kq_arm_write(zl_handle *h)
{
    if (h->write_armed)
        return 0;
    /* One-shot: a socket that keeps its room would otherwise report it on
     * every kevent while nothing is left to write. */
    int rc = zl_kq_change(&h->io, EVFILT_WRITE, EV_ADD | EV_ONESHOT);
    if (rc == 0)
        h->write_armed = true;
    return rc;
}

void zl_poller_write_ready(zl_handle *h)
{
    zl_op *op = h->write_op;
    int rc = zl_posix_sendv(h->io.fd, &op->impl.req.write, &op->impl.bytes);
    if (rc == 0) {
        h->writable = false;
        rc = zl_kq_arm_write(h);
        if (rc == 0)
            return;
    }
    h->write_op = NULL;
    zl_posix_complete(&h->io, op, rc < 0 ? rc : 0, op->impl.bytes);
}
