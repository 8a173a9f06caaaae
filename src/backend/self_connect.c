/* self_connect.c — a TCP connect to a local port nobody listens on
 * succeeds when the kernel picks that very port as the source (TCP's
 * simultaneous open), and the socket then talks to itself: a PUSH fails
 * its own handshake and drops what it holds, a DEALER receives its own
 * messages. Every backend treats such a connect as refused. */
#include "self_connect.h"

#include <string.h>

bool zl_socket_connected_to_itself(zl_os_socket s)
{
    zl_addr local, peer;
    local.len = peer.len = (zl_socklen)sizeof local.u.storage;
    if (getsockname(s, &local.u.sa, &local.len) != 0 ||
        getpeername(s, &peer.u.sa, &peer.len) != 0 ||
        local.u.sa.sa_family != peer.u.sa.sa_family)
        return false;
    if (local.u.sa.sa_family == AF_INET)
        return local.u.in4.sin_port == peer.u.in4.sin_port &&
               local.u.in4.sin_addr.s_addr == peer.u.in4.sin_addr.s_addr;
    if (local.u.sa.sa_family == AF_INET6)
        return local.u.in6.sin6_port == peer.u.in6.sin6_port &&
               memcmp(&local.u.in6.sin6_addr, &peer.u.in6.sin6_addr,
                      sizeof local.u.in6.sin6_addr) == 0;
    return false;
}
