/* address.h — parsing endpoints ("tcp://host:port", "ipc://path",
 * "inproc://name") and resolving them to socket addresses. */
#ifndef ZL_ADDRESS_H
#define ZL_ADDRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "os_types.h"

typedef enum zl_transport {
    ZL_TRANSPORT_TCP,
    ZL_TRANSPORT_IPC,
    ZL_TRANSPORT_INPROC,
    ZL_TRANSPORT_TLS, /* tcp addresses, a TLS stream */
    ZL_TRANSPORT_WS,  /* "ws://host:port[/path]": tcp under a WebSocket */
    ZL_TRANSPORT_WSS  /* the same over TLS */
} zl_transport;

/* The transports that bind and connect tcp addresses ("host:port"). */
static inline bool zl_transport_is_tcp(zl_transport t)
{
    return t == ZL_TRANSPORT_TCP || t == ZL_TRANSPORT_TLS;
}

/* The scheme of an endpoint of transport t ("tcp", "tls", …). */
const char *zl_transport_scheme(zl_transport t);

/* Splits "proto://rest". -1 with errno EINVAL (malformed) or
 * EPROTONOSUPPORT (unknown protocol). */
int zl_endpoint_split(const char *endpoint, zl_transport *transport,
                      const char **rest);

/* The host of "host:port" or "[v6]:port" into buf (without brackets);
 * -1 when it does not fit or there is no port. */
int zl_tcp_host(const char *hostport, char *buf, size_t cap);

/* "host:port", "*:port", "[v6]:port", "host:*"; hostnames go through
 * getaddrinfo. for_bind allows "*" as host and port, and interface names
 * ("lo:*", "eth0:5555") before DNS names. -1 with errno EINVAL
 * or ENODEV (no such host). */
int zl_tcp_resolve(const char *hostport, bool for_bind, bool ipv6,
                   zl_addr *out);

/* A connect's "host:port": an address literal into *out, or a host name
 * (*is_name), which the connecting session looks up at each attempt, as
 * libzmq does. -1 with EINVAL when it can be neither. */
int zl_tcp_connect_target(const char *hostport, bool ipv6, zl_addr *out,
                          bool *is_name);

/* A connect's "host:port" or "src;host:port" (libzmq's source-address
 * form: src is "host:port", "*:port", "interface:port", a bare host, or a
 * DNS name, resolved now). *has_src tells whether src was given; the
 * destination is as zl_tcp_connect_target's. Whether src can reach the
 * address a connect goes to is zl_tcp_connect_source's to say. */
int zl_tcp_resolve_connect(const char *rest, bool ipv6, zl_addr *dst,
                           bool *dst_is_name, zl_addr *src, bool *has_src);

/* The source to bind for a connect from src to dst: src itself, or for a
 * wildcard source ("*:port") of the other family, that family's wildcard.
 * -1 when src is an address of the other family. */
int zl_tcp_connect_source(const zl_addr *src, const zl_addr *dst, zl_addr *out);

/* "path", "@abstract", or "*" (for_bind: a fresh temporary directory; its
 * path is written into tmpdir, else tmpdir is set to ""). */
int zl_ipc_resolve(const char *path, bool for_bind, zl_addr *out, char *tmpdir,
                   size_t tmpdir_cap);

/* The "tcp://1.2.3.4:5" or "ipc://path" form of an address. */
int zl_addr_format(const zl_addr *addr, char *buf, size_t cap);

#endif
