/* handle.c — a connected stream on the epoll loop: creation, edge events,
 * cancel, close and socket options. Reads, writes and connects have their own
 * files. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "epoll_internal.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <stdlib.h>

#include "peer_cred.h"
#include "tcp_opts.h"

zl_handle *zl_epoll_handle_new(zl_loop *loop, int fd)
{
    zl_handle *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    zl_epoll_io_init(&h->io, loop, fd, ZL_EPOLL_HANDLE);
    link_init(&h->write_link);
    /* A connected socket can take the first write; the first read waits for
     * the EPOLLIN edge that registration reports when data is queued. */
    h->writable = true;
    return h;
}

void zl_epoll_set_nodelay(int fd, int family)
{
    int on = 1;
    if (family == AF_INET || family == AF_INET6)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

/* Edges only record what the socket can do; the syscalls happen for ops that
 * are pending (reads from the ready list, in submission order). */
void zl_epoll_handle_event(zl_handle *h, uint32_t events)
{
    if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        h->input_ended = true;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        h->io.readable = true;
    if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
        h->writable = true;
    if (h->write_op && h->writable) {
        if (h->connecting)
            zl_epoll_connect_ready(h);
        else
            zl_epoll_write_ready(h);
    }
    if (h->read_op && h->io.readable)
        zl_epoll_ready_push(&h->io);
}

void zl_handle_cancel(zl_handle *h)
{
    zl_op *read_op = h->read_op;
    zl_op *write_op = h->write_op;
    zl_epoll_ready_remove(&h->io);
    link_remove(&h->write_link);
    h->read_op = NULL;
    h->write_op = NULL;
    h->connecting = false;
    if (read_op)
        zl_epoll_complete(&h->io, read_op, ZL_ECANCELED, 0);
    if (write_op)
        zl_epoll_complete(&h->io, write_op, ZL_ECANCELED, write_op->impl.bytes);
}

void zl_handle_close(zl_handle *h)
{
    zl_handle_cancel(h);
    zl_epoll_io_close(&h->io);
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
