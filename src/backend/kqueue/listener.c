/* listener.c — listening sockets: open from any thread, accept on the loop
 * thread, with a pause after an accept that failed for lack of
 * resources. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kqueue_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_opts.h"

/* How long a listener waits after accept failed with EMFILE, ENFILE,
 * ENOBUFS or ENOMEM. The connection stays queued, so accepting again at
 * once fails again at once: a busy loop that starves every other
 * connection on this thread. A tenth of a second frees the thread and
 * still takes the connection soon after a descriptor is given back. */
#define ZL_KQ_ACCEPT_BACKOFF_MS 100

static int open_socket(const zl_addr *addr, int backlog,
                       const zl_tcp_opts *opts)
{
    int family = addr->u.sa.sa_family;
    int fd = zl_kq_socket(family);
    if (fd < 0)
        return fd;
    int on = 1;
    int off = 0;
    if (family == AF_INET || family == AF_INET6)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    int rc = zl_posix_tcp_prepare(fd, family, opts);
    if (rc != 0) {
        close(fd);
        return rc;
    }
    if (bind(fd, &addr->u.sa, addr->len) != 0 ||
        listen(fd, backlog > 0 ? backlog : SOMAXCONN) != 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

/* Touches no loop state: this may run on any thread. The listener joins the
 * kqueue at its first accept, on the loop thread. */
int zl_listener_open(zl_loop *loop, const zl_addr *addr, int backlog,
                     zl_listener **out)
{
    return zl_listener_open_ex(loop, addr, backlog, NULL, out);
}

int zl_listener_open_ex(zl_loop *loop, const zl_addr *addr, int backlog,
                        const zl_tcp_opts *opts, zl_listener **out)
{
    int fd = open_socket(addr, backlog, opts);
    if (fd < 0)
        return fd;
    zl_listener *l = calloc(1, sizeof *l);
    if (!l) {
        close(fd);
        return -ENOMEM;
    }
    zl_kq_io_init(&l->io, loop, fd, ZL_KQ_LISTENER);
    l->family = addr->u.sa.sa_family;
    l->backoff.data = l;
    *out = l;
    return 0;
}

int zl_listener_local_addr(zl_listener *l, zl_addr *out)
{
    out->len = sizeof out->u;
    if (getsockname(l->io.fd, &out->u.sa, &out->len) != 0)
        return -errno;
    return 0;
}

zl_os_socket zl_listener_os_socket(const zl_listener *l)
{
    return l->io.fd;
}

static void finish_accept(zl_listener *l, int status)
{
    zl_op *op = l->accept_op;
    l->accept_op = NULL;
    zl_kq_complete(&l->io, op, status, 0);
}

static bool can_accept(const zl_listener *l)
{
    return l->accept_op && l->io.readable && !l->backing_off;
}

void zl_listener_accept(zl_listener *l, zl_op *op)
{
    op->accepted = NULL;
    op->impl.io = &l->io;
    l->accept_op = op;
    if (!l->io.registered) {
        /* Connections already queued are reported at once. */
        int rc = zl_kq_register(&l->io);
        if (rc != 0)
            finish_accept(l, rc);
        return;
    }
    if (can_accept(l))
        zl_kq_ready_push(&l->io);
}

void zl_kq_listener_event(zl_listener *l, const struct kevent *ev)
{
    /* data is the backlog; accepting goes on until EAGAIN all the same,
     * since a connection reset while queued leaves the count high. */
    l->io.readable = 1;
    if (can_accept(l))
        zl_kq_ready_push(&l->io);
}

static void backoff_over(zl_timer *timer)
{
    zl_listener *l = timer->data;
    l->backing_off = false;
    if (can_accept(l))
        zl_kq_ready_push(&l->io);
}

static bool out_of_resources(int err)
{
    return err == -EMFILE || err == -ENFILE || err == -ENOBUFS ||
           err == -ENOMEM;
}

void zl_kq_listener_ready(zl_listener *l)
{
    if (!can_accept(l))
        return;
    int fd = zl_kq_accept(l->io.fd);
    if (fd == -EAGAIN || fd == -EWOULDBLOCK) {
        l->io.readable = 0;
        return;
    }
    if (fd < 0) {
        /* Reported (a monitor's ACCEPT_FAILED), then a pause before the
         * next try. */
        if (out_of_resources(fd)) {
            l->backing_off = true;
            l->backoff.cb = backoff_over;
            zl_timer_start(l->io.loop, &l->backoff, ZL_KQ_ACCEPT_BACKOFF_MS);
        }
        finish_accept(l, fd);
        return;
    }
    zl_handle *h = zl_kq_handle_new(l->io.loop, fd);
    if (!h) {
        close(fd);
        finish_accept(l, -ENOMEM);
        return;
    }
    zl_kq_set_nodelay(fd, l->family);
    int rc = zl_kq_register(&h->io);
    if (rc != 0) {
        close(fd);
        free(h);
        finish_accept(l, rc);
        return;
    }
    /* More connections may be queued: the listener stays readable. */
    l->accept_op->accepted = h;
    finish_accept(l, 0);
}

void zl_listener_close(zl_listener *l)
{
    zl_timer_stop(l->io.loop, &l->backoff);
    l->backing_off = false;
    zl_kq_ready_remove(&l->io);
    if (l->accept_op)
        finish_accept(l, ZL_ECANCELED);
    zl_kq_io_close(&l->io);
}
