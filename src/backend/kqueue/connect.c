/* connect.c — outgoing connections: a non-blocking connect whose completion
 * comes with the first EVFILT_WRITE. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kqueue_internal.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_opts.h"

zl_handle *zl_handle_connect(zl_loop *loop, const zl_addr *addr, zl_op *op,
                             int *err)
{
    return zl_handle_connect_ex(loop, addr, NULL, NULL, op, err);
}

zl_handle *zl_handle_connect_ex(zl_loop *loop, const zl_addr *addr,
                                const zl_addr *src, const zl_tcp_opts *opts,
                                zl_op *op, int *err)
{
    int family = addr->u.sa.sa_family;
    int fd = zl_kq_socket(family);
    if (fd < 0) {
        if (err)
            *err = fd;
        return NULL;
    }
    int rc = zl_posix_tcp_prepare(fd, family, opts);
    if (rc == 0)
        rc = zl_posix_bind_source(fd, src);
    if (rc != 0) {
        close(fd);
        if (err)
            *err = rc;
        return NULL;
    }
    zl_handle *h = zl_kq_handle_new(loop, fd);
    if (!h) {
        close(fd);
        if (err)
            *err = -ENOMEM;
        return NULL;
    }
    if (err)
        *err = 0;
    zl_kq_set_nodelay(fd, family);
    op->impl.io = &h->io;
    op->impl.bytes = 0;

    int status = 0;
    if (connect(fd, &addr->u.sa, addr->len) != 0)
        status = -errno;
    /* An interrupted non-blocking connect goes on in the background. */
    if (status == -EINPROGRESS || status == -EINTR) {
        status = zl_kq_register(&h->io);
        if (status == 0)
            status = zl_kq_arm_write(h);
        if (status == 0) {
            h->connecting = true;
            h->writable = false;
            h->write_op = op;
            return h;
        }
    } else if (status == 0) {
        status = zl_kq_register(&h->io);
    }
    /* Connected at once (AF_UNIX usually) or failed: either way the owner
     * hears of it from run_once, not from this call. */
    zl_kq_complete(&h->io, op, status, 0);
    return h;
}

void zl_kq_connect_ready(zl_handle *h, const struct kevent *ev)
{
    zl_op *op = h->write_op;
    int error = 0;
    socklen_t len = sizeof error;
    if (getsockopt(h->io.fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0)
        error = errno;
    /* The socket error may already have been taken: the EV_EOF of either
     * filter carries it in fflags. */
    if (error == 0 && (ev->flags & EV_EOF))
        error = (int)ev->fflags;
    h->write_op = NULL;
    h->connecting = false;
    zl_kq_complete(&h->io, op, -error, 0);
}
