/* socket.c — the socket details that differ between the POSIX systems:
 * non-blocking and close-on-exec at creation where the OS can (SOCK_CLOEXEC,
 * accept4), by fcntl where it cannot (macOS), and no SIGPIPE from a write
 * to a closed peer (SO_NOSIGPIPE where there is no MSG_NOSIGNAL). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "readiness.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

/* macOS has no MSG_NOSIGNAL: the socket itself must not raise SIGPIPE. */
static void no_sigpipe(int fd)
{
#if defined(SO_NOSIGPIPE) && !defined(MSG_NOSIGNAL)
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, sizeof on);
#else
    (void)fd;
#endif
}

/* What socket() or accept() could not give a new socket itself: the fd,
 * or -errno with the fd closed. */
static int finish_socket(int fd)
{
#ifndef SOCK_CLOEXEC
    /* Between socket() and this call another thread's fork+exec may inherit
     * the descriptor; the OS gives no way to close that window. An accepted
     * socket does not inherit O_NONBLOCK everywhere either. */
    int flags = fcntl(fd, F_GETFL);
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || flags < 0 ||
        fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        int err = -errno;
        close(fd);
        return err;
    }
#endif
    no_sigpipe(fd);
    return fd;
}

int zl_posix_socket(int family)
{
#ifdef SOCK_CLOEXEC
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
#else
    int fd = socket(family, SOCK_STREAM, 0);
#endif
    return fd < 0 ? -errno : finish_socket(fd);
}

int zl_posix_accept(int listen_fd, zl_addr *peer)
{
    for (;;) {
        struct sockaddr *sa = peer ? &peer->u.sa : NULL;
        socklen_t *len = peer ? &peer->len : NULL;
        if (peer)
            peer->len = sizeof peer->u;
#ifdef SOCK_CLOEXEC
        int fd = accept4(listen_fd, sa, len, SOCK_NONBLOCK | SOCK_CLOEXEC);
#else
        int fd = accept(listen_fd, sa, len);
#endif
        if (fd >= 0)
            return finish_socket(fd);
        /* A connection reset while queued is not the listener's error;
         * each retry consumes one queued connection, so this ends. */
        if (errno != EINTR && errno != ECONNABORTED)
            return -errno;
    }
}

void zl_posix_set_nodelay(int fd, int family)
{
    int on = 1;
    if (family == AF_INET || family == AF_INET6)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}
