/* poller.c — the epoll side of the shared loop (posix/loop.c): the epoll
 * set, edge-triggered registration, the eventfd wake, the wait, and what a
 * handle's edges record. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "epoll_internal.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

int zl_poller_open(zl_loop *loop)
{
    struct zl_poller *p = &loop->poller;
    p->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    /* Edge-triggered: every write to an eventfd is a new edge, so the wake
     * is never read back, which saved the woken thread a read per wake.
     * The counter only grows by one per wake that was not pending already
     * (zl_loop_wake); it cannot reach its limit. */
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.ptr = NULL};
    if (p->epoll_fd < 0 || p->wake_fd < 0 ||
        epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, p->wake_fd, &ev) != 0) {
        int err = -errno;
        if (p->epoll_fd >= 0)
            close(p->epoll_fd);
        if (p->wake_fd >= 0)
            close(p->wake_fd);
        return err;
    }
    return 0;
}

void zl_poller_close(zl_loop *loop)
{
    close(loop->poller.wake_fd);
    close(loop->poller.epoll_fd);
}

void zl_poller_wake(zl_loop *loop)
{
    uint64_t one = 1;
    while (write(loop->poller.wake_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
}

int zl_poller_register(struct zl_posix_io *io)
{
    struct epoll_event ev = {.data.ptr = io};
    ev.events = EPOLLET | EPOLLIN;
    if (io->kind == ZL_POSIX_HANDLE)
        ev.events |= EPOLLOUT | EPOLLRDHUP;
    if (epoll_ctl(io->loop->poller.epoll_fd, EPOLL_CTL_ADD, io->fd, &ev) != 0)
        return -errno;
    if (io->kind == ZL_POSIX_HANDLE)
        ((zl_handle *)io)->interest = ev.events;
    io->registered = true;
    return 0;
}

void zl_poller_unregister(struct zl_posix_io *io)
{
    epoll_ctl(io->loop->poller.epoll_fd, EPOLL_CTL_DEL, io->fd, NULL);
}

/* Before connect, and before listen so that accepted sockets inherit it
 * and a pacing default never starts on them (loopback.c). */
void zl_poller_prepare_socket(int fd, const zl_addr *addr)
{
    zl_epoll_unpace_loopback(fd, &addr->u.sa);
}

int zl_poller_register_connecting(zl_handle *h)
{
    /* Registered only now: an unconnected socket would report a spurious
     * EPOLLHUP. EPOLLOUT reports the end of the connect. */
    return zl_poller_register(&h->io);
}

/* Edges only record what the socket can do; the syscalls happen for ops that
 * are pending (reads from the ready list, in submission order). */
void zl_epoll_handle_event(zl_handle *h, uint32_t events)
{
    if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        h->input_ended = true;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        h->io.readable = 1;
    if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
        h->writable = true;
    if (h->write_op && h->writable) {
        if (h->connecting)
            zl_posix_connect_done(h, 0);
        else
            zl_poller_write_ready(h);
    }
    if (h->read_op && h->io.readable)
        zl_posix_ready_push(&h->io);
}

bool zl_poller_wait(zl_loop *loop, int timeout_ms)
{
    struct zl_poller *p = &loop->poller;
    int count =
        epoll_wait(p->epoll_fd, p->events, ZL_EPOLL_MAX_EVENTS, timeout_ms);
    for (int i = 0; i < count; i++) {
        struct epoll_event *ev = &p->events[i];
        struct zl_posix_io *io = ev->data.ptr;
        if (!io)
            continue; /* the wake: loop->wake_pending says the rest */
        if (io->kind == ZL_POSIX_HANDLE)
            zl_epoll_handle_event((zl_handle *)io, ev->events);
        else
            zl_epoll_listener_event((zl_listener *)io, ev->events);
    }
    return count > 0;
}
