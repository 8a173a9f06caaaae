/* iocp_tcp_opts.c — TCP settings on Windows sockets, as libzmq sets them:
 * keepalive times through SIO_KEEPALIVE_VALS, MAXRT through TCP_MAXRT (in
 * seconds), TOS through IP_TOS; Windows has no SO_BINDTODEVICE. */
#include "iocp.h"

#include <mstcpip.h>

static int set_int(SOCKET s, int level, int name, int value)
{
    if (setsockopt(s, level, name, (const char *)&value, sizeof value) != 0)
        return zl_iocp_errno_from_wsa(WSAGetLastError());
    return 0;
}

int zl_iocp_tcp_prepare(SOCKET s, int family, const zl_tcp_opts *opts)
{
    if (!opts || (family != AF_INET && family != AF_INET6))
        return 0;
    if (opts->device[0] != '\0')
        return -ENOTSUP;
    /* A hint that Windows mostly ignores; never fatal, as in libzmq. */
    if (opts->tos != 0)
        set_int(s, IPPROTO_IP, IP_TOS, opts->tos);
    return 0;
}

static int keepalive(SOCKET s, const zl_tcp_opts *opts)
{
    if (opts->keepalive == -1)
        return 0;
    int rc = set_int(s, SOL_SOCKET, SO_KEEPALIVE, opts->keepalive);
    if (rc == 0 && opts->keepalive_idle != -1 && opts->keepalive_intvl != -1) {
        /* Windows sets both times at once, or neither (libzmq's rule). */
        struct tcp_keepalive vals;
        vals.onoff = (u_long)opts->keepalive;
        vals.keepalivetime = (u_long)opts->keepalive_idle * 1000;
        vals.keepaliveinterval = (u_long)opts->keepalive_intvl * 1000;
        DWORD bytes = 0;
        if (WSAIoctl(s, SIO_KEEPALIVE_VALS, &vals, sizeof vals, NULL, 0, &bytes,
                     NULL, NULL) != 0)
            rc = zl_iocp_errno_from_wsa(WSAGetLastError());
    }
    return rc;
}

int zl_handle_tune_tcp(zl_handle *h, const zl_tcp_opts *opts)
{
    if (!opts || (h->family != AF_INET && h->family != AF_INET6))
        return 0;
    int rc = keepalive(h->socket, opts);
#if defined(TCP_MAXRT)
    if (opts->maxrt > 0) {
        int r = set_int(h->socket, IPPROTO_TCP, TCP_MAXRT, opts->maxrt / 1000);
        rc = rc ? rc : r;
    }
#endif
    if (opts->tos != 0) {
        int r = set_int(h->socket, IPPROTO_IP, IP_TOS, opts->tos);
        rc = rc ? rc : r;
    }
    return rc;
}
