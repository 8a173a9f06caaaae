/* poller.c — the kqueue side of the shared loop (posix/loop.c): the
 * kqueue, registration, the EVFILT_USER (or pipe) wake, the wait, and what
 * a handle's kevents record. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kqueue_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

/* The wake's kevent: ident 0 of EVFILT_USER, or the wake pipe; its udata is
 * NULL, which no handle or listener has. */
#define ZL_KQ_WAKE_IDENT 0

/* ---- registration ---- */

int zl_kq_change(struct zl_posix_io *io, short filter, unsigned short flags)
{
    struct kevent change;
    EV_SET(&change, (uintptr_t)io->fd, filter, flags, 0, 0, io);
    while (kevent(io->loop->poller.kq, &change, 1, NULL, 0, NULL) != 0) {
        if (errno != EINTR)
            return -errno;
    }
    return 0;
}

/* EVFILT_READ, edge-triggered (EV_CLEAR). */
int zl_poller_register(struct zl_posix_io *io)
{
    int rc = zl_kq_change(io, EVFILT_READ, EV_ADD | EV_CLEAR);
    if (rc == 0)
        io->registered = true;
    return rc;
}

/* Closing the descriptor removes its kevents. */
void zl_poller_unregister(struct zl_posix_io *io)
{
    (void)io;
}

void zl_poller_prepare_socket(int fd, const zl_addr *addr)
{
    (void)fd;
    (void)addr;
}

int zl_poller_register_connecting(zl_handle *h)
{
    /* The end of the connect comes with EVFILT_WRITE. */
    int rc = zl_poller_register(&h->io);
    if (rc == 0)
        rc = zl_kq_arm_write(h);
    return rc;
}

/* ---- wake ---- */

#ifdef EVFILT_USER
static int wake_open(zl_loop *loop)
{
    struct kevent change;
    EV_SET(&change, ZL_KQ_WAKE_IDENT, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0,
           NULL);
    return kevent(loop->poller.kq, &change, 1, NULL, 0, NULL) == 0 ? 0 : -errno;
}

static void wake_close(zl_loop *loop) {}

void zl_poller_wake(zl_loop *loop)
{
    struct kevent change;
    EV_SET(&change, ZL_KQ_WAKE_IDENT, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
    while (kevent(loop->poller.kq, &change, 1, NULL, 0, NULL) != 0 &&
           errno == EINTR)
        ;
}

/* EV_CLEAR reset the trigger when it was reported. */
static void wake_drain(zl_loop *loop) {}
#else
/* A pipe where kqueue has no EVFILT_USER (OpenBSD before 7.6 among
 * others). */
static int wake_open(zl_loop *loop)
{
    int *fds = loop->poller.wake_pipe;
    if (pipe(fds) != 0)
        return -errno;
    for (int i = 0; i < 2; i++) {
        fcntl(fds[i], F_SETFD, FD_CLOEXEC);
        fcntl(fds[i], F_SETFL, O_NONBLOCK);
    }
    struct kevent change;
    EV_SET(&change, (uintptr_t)fds[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
    if (kevent(loop->poller.kq, &change, 1, NULL, 0, NULL) != 0) {
        int err = -errno;
        close(fds[0]);
        close(fds[1]);
        return err;
    }
    return 0;
}

static void wake_close(zl_loop *loop)
{
    close(loop->poller.wake_pipe[0]);
    close(loop->poller.wake_pipe[1]);
}

void zl_poller_wake(zl_loop *loop)
{
    char one = 1;
    /* EAGAIN: the pipe is full, so the loop will wake anyway. */
    while (write(loop->poller.wake_pipe[1], &one, 1) < 0 && errno == EINTR)
        ;
}

static void wake_drain(zl_loop *loop)
{
    char buf[64];
    while (read(loop->poller.wake_pipe[0], buf, sizeof buf) > 0)
        ;
}
#endif

/* ---- the kqueue ---- */

int zl_poller_open(zl_loop *loop)
{
    loop->poller.kq = kqueue();
    if (loop->poller.kq < 0)
        return -errno;
    /* kqueue descriptors are not inherited by a child anyway, but an exec
     * that comes before that fork's exit would keep the number busy. */
    fcntl(loop->poller.kq, F_SETFD, FD_CLOEXEC);
    int rc = wake_open(loop);
    if (rc != 0)
        close(loop->poller.kq);
    return rc;
}

void zl_poller_close(zl_loop *loop)
{
    wake_close(loop);
    close(loop->poller.kq);
}

/* ---- events ---- */

static void read_event(zl_handle *h, const struct kevent *ev)
{
    h->io.readable = ev->data > 0 ? (size_t)ev->data : 0;
    if (ev->flags & EV_EOF) {
        h->input_ended = true;
        h->eof_error = (int)ev->fflags;
    }
    if (h->read_op && (h->io.readable || h->input_ended))
        zl_posix_ready_push(&h->io);
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
        /* The socket error may already have been taken: the EV_EOF of
         * either filter carries it in fflags. */
        zl_posix_connect_done(h, (ev->flags & EV_EOF) ? (int)ev->fflags : 0);
    else
        zl_poller_write_ready(h);
}

bool zl_poller_wait(zl_loop *loop, int timeout_ms)
{
    struct zl_poller *p = &loop->poller;
    struct timespec ts;
    struct timespec *limit = NULL;
    if (timeout_ms >= 0) {
        ts.tv_sec = timeout_ms / 1000;
        ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
        limit = &ts;
    }
    int count = kevent(p->kq, NULL, 0, p->events, ZL_KQ_MAX_EVENTS, limit);
    for (int i = 0; i < count; i++) {
        const struct kevent *ev = &p->events[i];
        struct zl_posix_io *io = ev->udata;
        if (!io)
            wake_drain(loop);
        else if (io->kind == ZL_POSIX_HANDLE)
            zl_kq_handle_event((zl_handle *)io, ev);
        else
            zl_kq_listener_event((zl_listener *)io, ev);
    }
    return count > 0;
}
