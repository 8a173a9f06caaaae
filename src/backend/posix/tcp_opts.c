/* tcp_opts.c — TCP settings on POSIX sockets, with libzmq's rules: keepalive
 * values only when TCP_KEEPALIVE is not -1, MAXRT through TCP_USER_TIMEOUT
 * where the OS has it, TOS for IPv4 and IPv6 alike. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tcp_opts.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

static int set_int(int fd, int level, int name, int value)
{
    return setsockopt(fd, level, name, &value, sizeof value) == 0 ? 0 : -errno;
}

static bool is_tcp(int family)
{
    return family == AF_INET || family == AF_INET6;
}

static int set_tos(int fd, int family, int tos)
{
    int rc = set_int(fd, IPPROTO_IP, IP_TOS, tos);
#if defined(IPV6_TCLASS)
    /* An IPv4 socket refuses it (ENOPROTOOPT, EINVAL): only IPv6 cares. */
    if (family == AF_INET6)
        rc = set_int(fd, IPPROTO_IPV6, IPV6_TCLASS, tos);
#else
    (void)family;
#endif
    return rc;
}

int zl_posix_tcp_prepare(int fd, int family, const zl_tcp_opts *opts)
{
    if (!opts || !is_tcp(family))
        return 0;
    if (opts->tos != 0)
        set_tos(fd, family, opts->tos); /* a hint: never fatal, as libzmq */
    if (opts->device[0] != '\0') {
#if defined(SO_BINDTODEVICE)
        if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, opts->device,
                       (socklen_t)strlen(opts->device)) != 0)
            return -errno;
#else
        return -ENOTSUP;
#endif
    }
    return 0;
}

int zl_posix_bind_source(int fd, const zl_addr *src)
{
    if (!src)
        return 0;
    set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1);
    return bind(fd, &src->u.sa, src->len) == 0 ? 0 : -errno;
}

static int keepalive(int fd, const zl_tcp_opts *opts)
{
    if (opts->keepalive == -1)
        return 0;
    int rc = set_int(fd, SOL_SOCKET, SO_KEEPALIVE, opts->keepalive);
#if defined(TCP_KEEPCNT)
    if (rc == 0 && opts->keepalive_cnt != -1)
        rc = set_int(fd, IPPROTO_TCP, TCP_KEEPCNT, opts->keepalive_cnt);
#endif
#if defined(TCP_KEEPIDLE)
    if (rc == 0 && opts->keepalive_idle != -1)
        rc = set_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, opts->keepalive_idle);
#elif defined(TCP_KEEPALIVE)
    /* macOS names the idle time TCP_KEEPALIVE. */
    if (rc == 0 && opts->keepalive_idle != -1)
        rc = set_int(fd, IPPROTO_TCP, TCP_KEEPALIVE, opts->keepalive_idle);
#endif
#if defined(TCP_KEEPINTVL)
    if (rc == 0 && opts->keepalive_intvl != -1)
        rc = set_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, opts->keepalive_intvl);
#endif
    return rc;
}

/* Handles do not keep their family; one getsockname per connection. */
static int socket_family(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return AF_UNSPEC;
    return ss.ss_family;
}

int zl_posix_tcp_tune(int fd, const zl_tcp_opts *opts)
{
    if (!opts || (opts->keepalive == -1 && opts->maxrt <= 0 && opts->tos == 0))
        return 0;
    int family = socket_family(fd);
    if (!is_tcp(family))
        return 0;
    int rc = keepalive(fd, opts);
#if defined(TCP_USER_TIMEOUT)
    if (opts->maxrt > 0) {
        int r = set_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, opts->maxrt);
        rc = rc ? rc : r;
    }
#endif
    if (opts->tos != 0) {
        int r = set_tos(fd, family, opts->tos);
        rc = rc ? rc : r;
    }
    return rc;
}
