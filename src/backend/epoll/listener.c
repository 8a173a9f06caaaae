/* listener.c — what epoll keeps of a listener (posix/listener.c): its
 * edges, and an accept that takes the peer's address, whose congestion
 * control loopback.c may change. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "epoll_internal.h"

void zl_poller_listener_init(zl_listener *l, const zl_addr *addr)
{
    l->on_loopback = zl_epoll_is_loopback(&addr->u.sa);
}

void zl_epoll_listener_event(zl_listener *l, uint32_t events)
{
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        l->io.readable = 1;
    zl_posix_listener_resume(l);
}

int zl_poller_accept(zl_listener *l)
{
    zl_addr peer;
    int fd = zl_posix_accept(l->io.fd, &peer);
    /* Sockets accepted on a loopback listener inherited its setting. */
    if (fd >= 0 && !l->on_loopback)
        zl_epoll_unpace_loopback(fd, &peer.u.sa);
    return fd;
}

/* The owner decides when to accept again (core backs off on a timer). */
void zl_poller_accept_failed(zl_listener *l, int err)
{
    (void)l;
    (void)err;
}
