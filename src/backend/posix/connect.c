/* connect.c — outgoing connections on a readiness loop: a non-blocking
 * connect whose end the first writability reports. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "readiness.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "self_connect.h"
#include "tcp_opts.h"

zl_handle *zl_handle_connect_ex(zl_loop *loop, const zl_addr *addr,
                                const zl_addr *src, const zl_tcp_opts *opts,
                                zl_op *op, int *err)
{
    int family = addr->u.sa.sa_family;
    int fd = zl_posix_socket(family);
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
    zl_handle *h = zl_posix_handle_new(loop, fd);
    if (!h) {
        close(fd);
        if (err)
            *err = -ENOMEM;
        return NULL;
    }
    if (err)
        *err = 0;
    zl_posix_set_nodelay(fd, family);
    zl_poller_prepare_socket(fd, addr);
    op->impl.io = &h->io;
    op->impl.bytes = 0;

    int status = 0;
    if (connect(fd, &addr->u.sa, addr->len) != 0)
        status = -errno;
    /* An interrupted non-blocking connect goes on in the background. */
    if (status == -EINPROGRESS || status == -EINTR) {
        status = zl_poller_register_connecting(h);
        if (status == 0) {
            h->connecting = true;
            h->writable = false;
            h->write_op = op;
            return h;
        }
    } else if (status == 0) {
        status = zl_socket_connected_to_itself(fd) ? -ECONNREFUSED
                                                   : zl_poller_register(&h->io);
    }
    /* Connected at once (AF_UNIX usually) or failed: either way the owner
     * hears of it from run_once, not from this call. */
    zl_posix_complete(&h->io, op, status, 0);
    return h;
}

void zl_posix_connect_done(zl_handle *h, int error_hint)
{
    zl_op *op = h->write_op;
    int error = 0;
    socklen_t len = sizeof error;
    if (getsockopt(h->io.fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0)
        error = errno;
    if (error == 0)
        error = error_hint;
    /* Refused, as it is in effect: the connect retries. */
    if (error == 0 && zl_socket_connected_to_itself(h->io.fd))
        error = ECONNREFUSED;
    h->write_op = NULL;
    h->connecting = false;
    zl_posix_complete(&h->io, op, -error, 0);
}
