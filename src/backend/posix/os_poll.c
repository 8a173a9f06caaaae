/* os_poll.c — zl_os_poll on poll(2), shared by the POSIX backends (epoll,
 * kqueue): zlink_poll's raw file descriptors and signaler fds. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>

enum { ZL_OS_POLL_STACK = 32 };

int zl_os_poll(zl_os_pollfd *fds, int n, int timeout_ms)
{
    struct pollfd stack[ZL_OS_POLL_STACK];
    struct pollfd *pfds = stack;
    if (n < 0)
        return -EINVAL;
    if (n > ZL_OS_POLL_STACK) {
        pfds = malloc((size_t)n * sizeof *pfds);
        if (!pfds)
            return -ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        pfds[i].fd = fds[i].fd;
        pfds[i].events = 0;
        pfds[i].revents = 0;
        if (fds[i].events & ZL_OS_POLLIN)
            pfds[i].events |= POLLIN;
        if (fds[i].events & ZL_OS_POLLOUT)
            pfds[i].events |= POLLOUT;
        if (fds[i].events & ZL_OS_POLLPRI)
            pfds[i].events |= POLLPRI;
    }
    int rc = poll(pfds, (nfds_t)n, timeout_ms < 0 ? -1 : timeout_ms);
    if (rc < 0)
        rc = -errno;
    for (int i = 0; i < n; i++) {
        short revents = 0;
        if (rc > 0) {
            if (pfds[i].revents & POLLIN)
                revents |= ZL_OS_POLLIN;
            if (pfds[i].revents & POLLOUT)
                revents |= ZL_OS_POLLOUT;
            if (pfds[i].revents & POLLPRI)
                revents |= ZL_OS_POLLPRI;
            if (pfds[i].revents & ~(POLLIN | POLLOUT | POLLPRI))
                revents |= ZL_OS_POLLERR;
        }
        fds[i].revents = revents;
    }
    if (pfds != stack)
        free(pfds);
    return rc;
}
