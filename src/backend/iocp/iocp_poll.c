/* iocp_poll.c — zl_os_poll on Windows: WSAPoll over the application's own
 * sockets for zlink_poll.
 *
 * Not the I/O path: zlink_poll waits on an application thread for raw OS
 * sockets the user passed in (and on signaler sockets), which were never
 * attached to a zlink completion port. zlink's connections are driven only
 * by the I/O threads' completion ports. */
#include "iocp.h"

#include <stdlib.h>

static short to_wsapoll(short events)
{
    /* WSAPoll rejects POLLPRI and POLLRDBAND on some stacks; ask for normal
     * data only. */
    short out = 0;
    if (events & ZL_OS_POLLIN)
        out |= POLLRDNORM;
    if (events & ZL_OS_POLLOUT)
        out |= POLLWRNORM;
    return out;
}

static short from_wsapoll(short revents)
{
    /* WSAPoll reports a peer's orderly close as POLLHUP, where POSIX poll
     * and libzmq's select give only readability: a read then sees the end.
     * Errors stay ZL_OS_POLLERR. */
    short out = 0;
    if (revents & (POLLRDNORM | POLLHUP))
        out |= ZL_OS_POLLIN;
    if (revents & POLLWRNORM)
        out |= ZL_OS_POLLOUT;
    if (revents & (POLLERR | POLLNVAL))
        out |= ZL_OS_POLLERR;
    return out;
}

int zl_os_poll(zl_os_pollfd *fds, int n, int timeout_ms)
{
    if (n <= 0) {
        /* WSAPoll refuses an empty set; zlink_poll with no sockets is a
         * sleep, as poll() makes it on POSIX. */
        Sleep(timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms);
        return 0;
    }
    /* WSAPoll has no urgent-data event that every stack takes (libzmq
     * waits for it with select's exceptfds). */
    for (int i = 0; i < n; i++)
        if (fds[i].events & ZL_OS_POLLPRI)
            return -ENOTSUP;
    WSAPOLLFD stack_fds[16];
    WSAPOLLFD *pfds = n <= 16 ? stack_fds : malloc(n * sizeof *pfds);
    if (pfds == NULL)
        return -ENOMEM;
    /* An invalid socket is ignored, as poll() ignores a negative fd (and as
     * WSAPoll is documented to, though not every stack does). */
    int valid = 0;
    for (int i = 0; i < n; i++) {
        fds[i].revents = 0;
        if (fds[i].fd == INVALID_SOCKET)
            continue;
        pfds[valid].fd = fds[i].fd;
        pfds[valid].events = to_wsapoll(fds[i].events);
        pfds[valid].revents = 0;
        valid++;
    }
    int rc;
    if (valid == 0) {
        Sleep(timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms);
        rc = 0;
    } else {
        rc = WSAPoll(pfds, (ULONG)valid, timeout_ms < 0 ? -1 : timeout_ms);
    }
    if (rc < 0) {
        rc = zl_iocp_errno_from_wsa(WSAGetLastError());
    } else {
        for (int i = 0, at = 0; i < n && at < valid; i++)
            if (fds[i].fd != INVALID_SOCKET)
                fds[i].revents = from_wsapoll(pfds[at++].revents);
    }
    if (pfds != stack_fds)
        free(pfds);
    return rc;
}
