/* loopback.c — TCP connections whose peer is a loopback address run a
 * congestion control that does not pace.
 *
 * Loopback has no link to share and never loses a segment, so congestion
 * control has nothing to do there. A pacing one does harm: where the
 * system's default is bbr (some distributions and cloud images choose it),
 * each loopback connection paces its sends with an hrtimer at the rate bbr
 * estimated. An I/O thread that serves both ends of a busy connection makes
 * that estimate fall: its sends wait on the timer, each timer costs it a
 * softirq, and the rate it then delivers, which bbr measures next, is lower
 * still, so runs split between two speeds (bench/NOTES.md, "Loopback
 * congestion control"). So such a connection asks for cubic, or for reno
 * where an unprivileged process may not pick cubic
 * (tcp_allowed_congestion_control then lists only the default and reno).
 *
 * Set before bbr starts on a socket, or it leaves the kernel's own pacing
 * armed, at cubic's rate: the connecting side sets it before connect(),
 * and a listener on a loopback address before listen(), which its accepted
 * sockets inherit. An accepted socket of a wildcard listener can only
 * switch after accept(), and keeps many of the pacing timers that way.
 * Failure is harmless: the connection keeps the default. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "epoll_internal.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>

bool zl_epoll_is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a =
            &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return true;
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return false;
}

static bool set_congestion_control(int fd, const char *name)
{
    return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, strlen(name)) == 0;
}

void zl_epoll_unpace_loopback(int fd, const struct sockaddr *addr)
{
    if (!zl_epoll_is_loopback(addr))
        return;
    if (!set_congestion_control(fd, "cubic"))
        (void)set_congestion_control(fd, "reno");
}
