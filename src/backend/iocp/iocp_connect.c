/* iocp_connect.c — zl_handle_connect on IOCP: ConnectEx on a socket bound to
 * a wildcard address first, as ConnectEx requires. */
#include "iocp.h"
#include "self_connect.h"

#include <stdlib.h>
#include <string.h>

/* ConnectEx is an extension of the socket's own provider (TCP and AF_UNIX
 * have different ones), so it is looked up on the socket itself. */
static LPFN_CONNECTEX lookup_connect_ex(SOCKET s)
{
    GUID guid = WSAID_CONNECTEX;
    LPFN_CONNECTEX fn = NULL;
    DWORD bytes = 0;
    if (WSAIoctl(s, SIO_GET_EXTENSION_FUNCTION_POINTER, &guid, sizeof guid, &fn,
                 sizeof fn, &bytes, NULL, NULL) != 0)
        return NULL;
    return fn;
}

/* The unnamed local address ConnectEx insists on. For AF_UNIX that is an
 * empty path: the socket stays unnamed, as a POSIX client's does. */
static int bind_wildcard(SOCKET s, int family)
{
    zl_addr local;
    memset(&local, 0, sizeof local);
    local.u.sa.sa_family = (ADDRESS_FAMILY)family;
    switch (family) {
    case AF_INET:
        local.len = sizeof local.u.in4;
        break;
    case AF_INET6:
        local.len = sizeof local.u.in6;
        break;
    default:
        local.len = sizeof local.u.un;
        break;
    }
    if (bind(s, &local.u.sa, local.len) != 0)
        return zl_iocp_errno_from_wsa(WSAGetLastError());
    return 0;
}

static int connect_step(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    zl_handle *h = op->impl.owner;
    h->connect_waits = false;
    if (status == 0 && !op->impl.cancelled) {
        /* Without this the socket has no peer as far as getpeername,
         * shutdown and later setsockopt calls are concerned. */
        if (setsockopt(h->socket, SOL_SOCKET, SO_UPDATE_CONNECT_CONTEXT, NULL,
                       0) != 0)
            status = zl_iocp_errno_from_wsa(WSAGetLastError());
        else if (zl_socket_connected_to_itself(h->socket))
            status = -ECONNREFUSED; /* in effect: the connect retries */
    }
    return zl_iocp_handle_complete(h, op, status, 0);
}

/* AF_UNIX providers may refuse ConnectEx. A local AF_UNIX connect never
 * waits on the network: it succeeds or is refused at once, so a plain
 * connect is as good, and its result still reaches the owner from the loop. */
static void connect_unix_directly(zl_handle *h, zl_op *op, const zl_addr *addr)
{
    int status = 0;
    if (connect(h->socket, &addr->u.sa, addr->len) != 0)
        status = zl_iocp_errno_from_wsa(WSAGetLastError());
    zl_iocp_defer(h->loop, op, status, 0);
}

/* The "tcp://src;dst" form: ConnectEx's bind goes to the given source. */
static int bind_source(SOCKET s, const zl_addr *src)
{
    BOOL on = TRUE;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, (const char *)&on, sizeof on);
    if (bind(s, &src->u.sa, src->len) != 0)
        return zl_iocp_errno_from_wsa(WSAGetLastError());
    return 0;
}

static void start_connect(zl_handle *h, zl_op *op, const zl_addr *addr,
                          const zl_addr *src)
{
    bool is_unix = h->family == AF_UNIX;
    int err = src && !is_unix ? bind_source(h->socket, src)
                              : bind_wildcard(h->socket, h->family);
    LPFN_CONNECTEX connect_ex = err == 0 ? lookup_connect_ex(h->socket) : NULL;
    if (connect_ex == NULL) {
        if (is_unix) {
            connect_unix_directly(h, op, addr);
            return;
        }
        if (err == 0)
            err = zl_iocp_errno_from_wsa(WSAGetLastError());
        zl_iocp_defer(h->loop, op, err, 0);
        return;
    }
    memset(&op->impl.overlapped, 0, sizeof op->impl.overlapped);
    BOOL ok = connect_ex(h->socket, &addr->u.sa, addr->len, NULL, 0, NULL,
                         &op->impl.overlapped);
    int wsa_err = ok ? 0 : WSAGetLastError();
    if (is_unix && (wsa_err == WSAEINVAL || wsa_err == WSAEOPNOTSUPP)) {
        connect_unix_directly(h, op, addr);
        return;
    }
    h->connect_waits = wsa_err == WSA_IO_PENDING && !is_unix;
    zl_iocp_after_submit(h->loop, op, ok, wsa_err, 0, h->skip_port_on_success);
}

zl_handle *zl_handle_connect_ex(zl_loop *loop, const zl_addr *addr,
                                const zl_addr *src, const zl_tcp_opts *opts,
                                zl_op *op, int *err)
{
    int family = addr->u.sa.sa_family;
    SOCKET s = zl_iocp_socket_open(family, err);
    if (s == INVALID_SOCKET)
        return NULL;
    int rc = zl_iocp_tcp_prepare(s, family, opts);
    if (rc != 0) {
        closesocket(s);
        *err = rc;
        return NULL;
    }
    bool skip = false;
    rc = zl_iocp_socket_attach(loop, s, &skip);
    zl_handle *h = rc == 0 ? zl_iocp_handle_new(loop, s, family, skip) : NULL;
    if (h == NULL) {
        closesocket(s);
        *err = rc != 0 ? rc : -ENOMEM;
        return NULL;
    }
    zl_iocp_set_nodelay(s, family);
    op->impl.step = connect_step;
    op->impl.owner = h;
    op->impl.cancelled = 0;
    op->accepted = NULL;
    h->connect_op = op;
    h->pending++;
    start_connect(h, op, addr, src);
    return h;
}
