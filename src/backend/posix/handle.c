/* handle.c — a connected stream on a readiness loop: creation, write
 * submission, cancel, close and socket options. Its events, reads and the
 * rest of its writes are each backend's (poller.c, read.c, write.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "readiness.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "peer_cred.h"
#include "tcp_opts.h"
#include "write_cursor.h"

zl_handle *zl_posix_handle_new(zl_loop *loop, int fd)
{
    zl_handle *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    zl_posix_io_init(&h->io, loop, fd, ZL_POSIX_HANDLE);
    link_init(&h->write_link);
    /* A connected socket takes the first write; writability is waited for
     * only after the socket refused part of one. The first read waits for
     * the input event that registration reports when data is queued. */
    h->writable = true;
    return h;
}

void zl_handle_write(zl_handle *h, zl_op *op, const zl_iovec *iov, int n)
{
    op->impl.io = &h->io;
    op->impl.bytes = 0;
    zl_write_cursor_set(&op->impl.req.write, iov, n);
    h->write_op = op;
    if (h->writable)
        zl_posix_write_defer(h);
}

void zl_handle_cancel(zl_handle *h)
{
    zl_op *read_op = h->read_op;
    zl_op *write_op = h->write_op;
    zl_posix_ready_remove(&h->io);
    link_remove(&h->write_link);
    h->read_op = NULL;
    h->write_op = NULL;
    h->connecting = false;
    if (read_op)
        zl_posix_complete(&h->io, read_op, ZL_ECANCELED, 0);
    if (write_op)
        zl_posix_complete(&h->io, write_op, ZL_ECANCELED, write_op->impl.bytes);
}

void zl_handle_close(zl_handle *h)
{
    zl_handle_cancel(h);
    zl_posix_io_close(&h->io);
}

void zl_handle_set_buffers(zl_handle *h, int sndbuf, int rcvbuf)
{
    if (sndbuf > 0)
        setsockopt(h->io.fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (rcvbuf > 0)
        setsockopt(h->io.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
}

int zl_handle_peer_addr(zl_handle *h, zl_addr *out)
{
    out->len = sizeof out->u;
    if (getpeername(h->io.fd, &out->u.sa, &out->len) != 0)
        return -errno;
    return 0;
}

int zl_handle_peer_cred(zl_handle *h, unsigned *uid, unsigned *gid, int *pid)
{
    return zl_posix_peer_cred(h->io.fd, uid, gid, pid);
}

zl_os_socket zl_handle_os_socket(const zl_handle *h)
{
    return h->io.fd;
}

bool zl_handle_connect_in_progress(const zl_handle *h)
{
    return h->connecting;
}

int zl_handle_tune_tcp(zl_handle *h, const zl_tcp_opts *opts)
{
    return zl_posix_tcp_tune(h->io.fd, opts);
}
