/* handle.c — a connected stream on the kqueue loop: creation, kevents,
 * cancel, close and socket options. Reads, writes and connects have their
 * own files. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kqueue_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "peer_cred.h"
#include "tcp_opts.h"

zl_handle *zl_kq_handle_new(zl_loop *loop, int fd)
{
    zl_handle *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    zl_kq_io_init(&h->io, loop, fd, ZL_KQ_HANDLE);
    link_init(&h->write_link);
    /* A connected socket takes the first write; EVFILT_WRITE is asked for
     * only after the socket refused part of one (write.c). */
    h->writable = true;
    return h;
}

static void read_event(zl_handle *h, const struct kevent *ev)
{
    h->io.readable = ev->data > 0 ? (size_t)ev->data : 0;
    if (ev->flags & EV_EOF) {
        h->input_ended = true;
        h->eof_error = (int)ev->fflags;
    }
    if (h->read_op && (h->io.readable || h->input_ended))
        zl_kq_ready_push(&h->io);
}

/* Events only record what the socket can do; the syscalls happen for ops
 * that are pending (reads from the ready list, in submission order). */
void zl_kq_handle_event(zl_handle *h, const struct kevent *ev)
{
    if (ev->filter == EVFILT_READ) {
        read_event(h, ev);
        return;
    }
    /* EVFILT_WRITE is one-shot: it is gone once reported. */
    h->write_armed = false;
    h->writable = true;
    if (!h->write_op)
        return;
    if (h->connecting)
        zl_kq_connect_ready(h, ev);
    else
        zl_kq_write_ready(h);
}

void zl_handle_cancel(zl_handle *h)
{
    zl_op *read_op = h->read_op;
    zl_op *write_op = h->write_op;
    zl_kq_ready_remove(&h->io);
    link_remove(&h->write_link);
    h->read_op = NULL;
    h->write_op = NULL;
    h->connecting = false;
    if (read_op)
        zl_kq_complete(&h->io, read_op, ZL_ECANCELED, 0);
    if (write_op)
        zl_kq_complete(&h->io, write_op, ZL_ECANCELED, write_op->impl.bytes);
}

void zl_handle_close(zl_handle *h)
{
    zl_handle_cancel(h);
    zl_kq_io_close(&h->io);
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

int zl_handle_tune_tcp(zl_handle *h, const zl_tcp_opts *opts)
{
    return zl_posix_tcp_tune(h->io.fd, opts);
}
