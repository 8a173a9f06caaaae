/* read.c — the read path of a handle, and where epoll decides to recv. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "epoll_internal.h"

#include <errno.h>

/* The read-rearm policy (DESIGN.md §1).
 *
 * Every fd is registered once, edge-triggered. An EPOLLIN edge only sets
 * h->io.readable; it never causes a recv unless a read is pending. A read
 * submitted on a readable handle goes to the tail of the loop's ready list and
 * its recv runs from zl_loop_run_once, never inside the submitting call. A
 * read submitted on a drained handle waits for the next edge.
 *
 * After the recv:
 *  - the buffers were filled: more data is likely, the handle stays readable,
 *    and the engine's next read recvs at once (in the next pass, behind every
 *    other ready handle: one recv per handle per pass bounds the burst);
 *  - a short read: the socket is drained; the next read waits for EPOLLIN.
 *    So EAGAIN is rare: it comes only from a stale edge;
 *  - EAGAIN: drained, the read stays pending until the next edge;
 *  - 0: ZL_EOF.
 * Once RDHUP/HUP/ERR was seen no further edge will come, so a short read no
 * longer marks the handle drained: the next recv returns the EOF or error.
 *
 * New handles start not readable. Registering a socket that already holds data
 * (a client that wrote before we accepted) reports EPOLLIN on the next
 * epoll_wait, so the first read still sees its edge.
 *
 * A zero-length read is a readiness probe, as on IOCP: it completes with 0
 * bytes once the handle is readable, without a syscall. */

void zl_handle_readv(zl_handle *h, zl_op *op, const zl_iovec *iov, int n)
{
    op->impl.io = &h->io;
    zl_read_req_set(&op->impl.req.read, iov, n);
    h->read_op = op;
    if (h->io.readable)
        zl_posix_ready_push(&h->io);
}

static void finish_read(zl_handle *h, int status, size_t bytes)
{
    zl_op *op = h->read_op;
    h->read_op = NULL;
    zl_posix_complete(&h->io, op, status, bytes);
}

void zl_poller_read_ready(zl_handle *h)
{
    zl_op *op = h->read_op;
    if (!op)
        return;
    size_t len = op->impl.req.read.len;
    if (len == 0) {
        finish_read(h, 0, 0);
        return;
    }
    struct msghdr msg = {.msg_iov = (struct iovec *)op->impl.req.read.iov,
                         .msg_iovlen = (size_t)op->impl.req.read.count};
    ssize_t n = recvmsg(h->io.fd, &msg, 0);
    if (n > 0) {
        if ((size_t)n < len && !h->input_ended)
            h->io.readable = 0;
        finish_read(h, 0, (size_t)n);
    } else if (n == 0) {
        finish_read(h, ZL_EOF, 0);
    } else if (errno == EINTR) {
        zl_posix_ready_push(&h->io);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        h->io.readable = 0;
    } else {
        finish_read(h, -errno, 0);
    }
}
