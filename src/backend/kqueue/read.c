/* read.c — the read path of a handle, and where kqueue decides to recv. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kqueue_internal.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* The read-rearm policy (DESIGN.md §1).
 *
 * Every socket carries one EVFILT_READ with EV_CLEAR: it is reported when
 * data arrives, with `data` the number of bytes waiting. That count is kept
 * in h->io.readable and is the only reason to call recv: a read never
 * guesses.
 *  - A read submitted while bytes are known to wait goes to the tail of the
 *    loop's ready list; its recv runs from zl_loop_run_once, never inside
 *    the submitting call. Otherwise it waits for the next EVFILT_READ.
 *  - After a recv of n bytes, n of the known bytes are gone. When that
 *    leaves none (n may exceed the count: more came since), the next read
 *    waits for the event that new data raises. When some are left (the
 *    buffers were smaller), the next read recvs at once, in the next pass,
 *    behind every other ready handle: one recv per handle per pass bounds
 *    the burst. So EAGAIN does not happen in the normal course.
 *  - EV_EOF: no further event will come; reads go on until recv returns 0
 *    (ZL_EOF) or the error, which is the socket error EV_EOF carried in
 *    fflags when recv has none to give.
 *
 * A zero-length read is a readiness probe, as on IOCP: it completes with 0
 * bytes once data is waiting, without a syscall. */

static bool can_read(const zl_handle *h)
{
    return h->io.readable > 0 || h->input_ended;
}

void zl_handle_readv(zl_handle *h, zl_op *op, const zl_iovec *iov, int n)
{
    op->impl.io = &h->io;
    zl_read_req_set(&op->impl.req.read, iov, n);
    h->read_op = op;
    if (can_read(h))
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
    if (!op || !can_read(h))
        return;
    if (op->impl.req.read.len == 0) {
        finish_read(h, 0, 0);
        return;
    }
    struct msghdr msg = {.msg_iov = (struct iovec *)op->impl.req.read.iov,
                         .msg_iovlen = op->impl.req.read.count};
    ssize_t n = recvmsg(h->io.fd, &msg, 0);
    if (n > 0) {
        h->io.readable =
            (size_t)n < h->io.readable ? h->io.readable - (size_t)n : 0;
        finish_read(h, 0, (size_t)n);
    } else if (n == 0) {
        h->io.readable = 0;
        finish_read(h, h->eof_error ? -h->eof_error : ZL_EOF, 0);
    } else if (errno == EINTR) {
        zl_posix_ready_push(&h->io);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        /* The count was stale; wait for the next event. */
        h->io.readable = 0;
        if (h->input_ended && h->read_op)
            finish_read(h, h->eof_error ? -h->eof_error : ZL_EOF, 0);
    } else {
        finish_read(h, -errno, 0);
    }
}

/* While another thread watches the input, EVFILT_READ is disabled: the
 * filter still tracks the socket (kqueue(2): "The filter itself is not
 * disabled"), and EV_ENABLE reports input that waits then, as it would
 * have been reported. The end of the stream is seen by the watching thread
 * first, as input the engine must read. */
int zl_handle_watch_input(zl_handle *h, bool watched)
{
    return zl_kq_change(&h->io, EVFILT_READ, watched ? EV_DISABLE : EV_ENABLE);
}
