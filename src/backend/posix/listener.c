/* listener.c — listening sockets on a readiness loop: open from any thread,
 * accept on the loop thread. Each backend says what its events mean, how it
 * accepts and what follows a failed accept (listener.c of its own). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "readiness.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_opts.h"

static int open_socket(const zl_addr *addr, int backlog,
                       const zl_tcp_opts *opts)
{
    int family = addr->u.sa.sa_family;
    int fd = zl_posix_socket(family);
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
    zl_poller_prepare_socket(fd, addr);
    /* addr->len is passed as given: an abstract AF_UNIX name (sun_path[0]
     * == '\0') is defined by its length. */
    if (bind(fd, &addr->u.sa, addr->len) != 0 ||
        listen(fd, backlog > 0 ? backlog : SOMAXCONN) != 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    return fd;
}

/* Touches no loop state: this may run on any thread. The listener joins the
 * readiness API at its first accept, on the loop thread. */
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
    zl_posix_io_init(&l->io, loop, fd, ZL_POSIX_LISTENER);
    l->family = addr->u.sa.sa_family;
    l->backoff.data = l;
    zl_poller_listener_init(l, addr);
    *out = l;
    return 0;
}

static bool family_wanted(int family, bool local)
{
    return local ? family == AF_UNIX : family == AF_INET || family == AF_INET6;
}

int zl_listener_adopt(zl_loop *loop, zl_os_socket fd, bool local,
                      zl_listener **out)
{
    zl_addr addr;
    addr.len = sizeof addr.u;
    int listening = 0;
    socklen_t len = sizeof listening;
    if (getsockname(fd, &addr.u.sa, &addr.len) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 ||
        !listening || !family_wanted(addr.u.sa.sa_family, local))
        return -EINVAL;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
        return -errno;
    zl_listener *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    zl_posix_io_init(&l->io, loop, fd, ZL_POSIX_LISTENER);
    l->family = addr.u.sa.sa_family;
    l->backoff.data = l;
    zl_poller_listener_init(l, &addr);
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
    zl_posix_complete(&l->io, op, status, 0);
}

void zl_posix_listener_resume(zl_listener *l)
{
    if (l->accept_op && l->io.readable && !l->backing_off)
        zl_posix_ready_push(&l->io);
}

void zl_listener_accept(zl_listener *l, zl_op *op)
{
    op->accepted = NULL;
    op->impl.io = &l->io;
    l->accept_op = op;
    if (!l->io.registered) {
        /* Connections already queued are reported by the registration. */
        int rc = zl_poller_register(&l->io);
        if (rc != 0)
            finish_accept(l, rc);
        return;
    }
    zl_posix_listener_resume(l);
}

void zl_poller_listener_ready(zl_listener *l)
{
    if (!l->accept_op || l->backing_off)
        return;
    int fd = zl_poller_accept(l);
    if (fd == -EAGAIN || fd == -EWOULDBLOCK) {
        l->io.readable = 0;
        return;
    }
    if (fd < 0) {
        zl_poller_accept_failed(l, fd);
        finish_accept(l, fd);
        return;
    }
    zl_handle *h = zl_posix_handle_new(l->io.loop, fd);
    if (!h) {
        close(fd);
        finish_accept(l, -ENOMEM);
        return;
    }
    zl_posix_set_nodelay(fd, l->family);
    int rc = zl_poller_register(&h->io);
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
    zl_posix_ready_remove(&l->io);
    if (l->accept_op)
        finish_accept(l, ZL_ECANCELED);
    zl_posix_io_close(&l->io);
}
