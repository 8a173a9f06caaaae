/* iocp_listener.c — listening sockets on IOCP: bind and listen, AcceptEx
 * into a pre-created socket, and closing with the pending accept cancelled. */
#include "iocp.h"

#include <stdlib.h>
#include <string.h>

static int wsa_errno(void)
{
    return zl_iocp_errno_from_wsa(WSAGetLastError());
}

static LPFN_ACCEPTEX lookup_accept_ex(SOCKET s)
{
    GUID guid = WSAID_ACCEPTEX;
    LPFN_ACCEPTEX fn = NULL;
    DWORD bytes = 0;
    if (WSAIoctl(s, SIO_GET_EXTENSION_FUNCTION_POINTER, &guid, sizeof guid, &fn,
                 sizeof fn, &bytes, NULL, NULL) != 0)
        return NULL;
    return fn;
}

static void set_bind_options(SOCKET s, const zl_addr *addr)
{
    int family = addr->u.sa.sa_family;
    if (family == AF_UNIX)
        return;
    /* Windows' SO_REUSEADDR is not POSIX's: it lets a second socket bind a
     * port that is in use, so a zlink_bind on a taken port would "succeed".
     * Rebinding over TIME_WAIT connections needs no option on Windows;
     * SO_EXCLUSIVEADDRUSE also stops other programs from stealing the port
     * (libzmq does the same). */
    BOOL on = TRUE;
    setsockopt(s, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, (const char *)&on,
               sizeof on);
    if (family == AF_INET6 && IN6_IS_ADDR_UNSPECIFIED(&addr->u.in6.sin6_addr)) {
        DWORD off = 0;
        setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, (const char *)&off,
                   sizeof off);
    }
}

/* Winsock cuts a TCP backlog to about 200 unless it is asked with
 * SOMAXCONN_HINT(n), which keeps n within 200..65535; only the Microsoft
 * TCP/IP provider knows the hint, so AF_UNIX gets the number as it is. */
#ifndef SOMAXCONN_HINT
#define SOMAXCONN_HINT(b) (-(b))
#endif
static int listen_backlog(int family, int backlog)
{
    if (family != AF_INET && family != AF_INET6)
        return backlog > 0 ? backlog : SOMAXCONN;
    return SOMAXCONN_HINT(backlog > 0 && backlog < 65535 ? backlog : 65535);
}

int zl_listener_open_ex(zl_loop *loop, const zl_addr *addr, int backlog,
                        const zl_tcp_opts *opts, zl_listener **out)
{
    int family = addr->u.sa.sa_family;
    int err = 0;
    SOCKET s = zl_iocp_socket_open(family, &err);
    if (s == INVALID_SOCKET)
        return err;
    zl_listener *l = calloc(1, sizeof *l);
    if (l == NULL) {
        err = -ENOMEM;
        goto fail;
    }
    set_bind_options(s, addr);
    err = zl_iocp_tcp_prepare(s, family, opts);
    if (err != 0)
        goto fail;
    if (bind(s, &addr->u.sa, addr->len) != 0 ||
        listen(s, listen_backlog(family, backlog)) != 0) {
        err = wsa_errno();
        goto fail;
    }
    l->accept_ex = lookup_accept_ex(s);
    if (l->accept_ex == NULL) {
        err = wsa_errno();
        goto fail;
    }
    err = zl_iocp_socket_attach(loop, s, &l->skip_port_on_success);
    if (err != 0)
        goto fail;
    l->loop = loop;
    l->socket = s;
    l->family = family;
    *out = l;
    return 0;
fail:
    closesocket(s);
    free(l);
    return err;
}

static bool family_wanted(int family, bool local)
{
    return local ? family == AF_UNIX : family == AF_INET || family == AF_INET6;
}

int zl_listener_adopt(zl_loop *loop, zl_os_socket fd, bool local,
                      zl_listener **out)
{
    zl_addr addr;
    int len = sizeof addr.u.storage;
    BOOL listening = FALSE;
    int opt_len = sizeof listening;
    if (getsockname(fd, &addr.u.sa, &len) != 0 ||
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, (char *)&listening,
                   &opt_len) != 0 ||
        !listening || !family_wanted(addr.u.sa.sa_family, local))
        return -EINVAL;
    zl_listener *l = calloc(1, sizeof *l);
    if (l == NULL)
        return -ENOMEM;
    int err = 0;
    l->accept_ex = lookup_accept_ex(fd);
    if (l->accept_ex == NULL)
        err = wsa_errno();
    else
        err = zl_iocp_socket_attach(loop, fd, &l->skip_port_on_success);
    if (err != 0) {
        free(l);
        return err;
    }
    l->loop = loop;
    l->socket = fd;
    l->family = addr.u.sa.sa_family;
    *out = l;
    return 0;
}

int zl_listener_local_addr(zl_listener *l, zl_addr *out)
{
    int len = sizeof out->u.storage;
    memset(out, 0, sizeof *out);
    if (getsockname(l->socket, &out->u.sa, &len) != 0)
        return wsa_errno();
    out->len = len;
    return 0;
}

zl_os_socket zl_listener_os_socket(const zl_listener *l)
{
    return l->socket;
}

static void post_accept(zl_listener *l, zl_op *op)
{
    int err = 0;
    SOCKET s = zl_iocp_socket_open(l->family, &err);
    op->impl.req.accept.socket = s;
    if (s == INVALID_SOCKET) {
        zl_iocp_defer(l->loop, op, err, 0);
        return;
    }
    DWORD bytes = 0;
    memset(&op->impl.overlapped, 0, sizeof op->impl.overlapped);
    BOOL ok =
        l->accept_ex(l->socket, s, l->accept_addrs, 0, ZL_IOCP_ACCEPT_ADDR_LEN,
                     ZL_IOCP_ACCEPT_ADDR_LEN, &bytes, &op->impl.overlapped);
    zl_iocp_after_submit(l->loop, op, ok, ok ? 0 : WSAGetLastError(), 0,
                         l->skip_port_on_success);
}

static int complete_accept(zl_listener *l, zl_op *op, int status)
{
    if (op->impl.cancelled)
        status = ZL_ECANCELED;
    l->accept_op = NULL;
    l->pending--;
    zl_loop *loop = l->loop;
    if (l->closing && l->pending == 0) {
        loop->closing--;
        free(l);
    }
    if (loop->destroying)
        return 0;
    op->cb(op, status, 0);
    return 1;
}

/* The peer gave up between its SYN and our accept: that is its connection's
 * failure, not the listener's, so wait for the next one. */
static bool peer_gave_up(int status)
{
    return status == -ECONNRESET || status == -ECONNABORTED;
}

/* Turns the socket AcceptEx filled into a handle on the listener's loop. */
static int adopt_accepted(zl_listener *l, SOCKET s, zl_handle **out)
{
    /* Inherit the listener's properties; getpeername and shutdown need it.
     * It fails only for a connection that is already gone: count it as the
     * peer's failure, like libuv, and accept the next one. */
    if (setsockopt(s, SOL_SOCKET, SO_UPDATE_ACCEPT_CONTEXT,
                   (const char *)&l->socket, sizeof l->socket) != 0)
        return -ECONNABORTED;
    bool skip = false;
    int err = zl_iocp_socket_attach(l->loop, s, &skip);
    if (err != 0)
        return err;
    zl_iocp_set_nodelay(s, l->family);
    *out = zl_iocp_handle_new(l->loop, s, l->family, skip);
    return *out != NULL ? 0 : -ENOMEM;
}

static int accept_step(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    zl_listener *l = op->impl.owner;
    SOCKET s = op->impl.req.accept.socket;
    op->impl.req.accept.socket = INVALID_SOCKET;
    if (status == 0 && !op->impl.cancelled) {
        status = adopt_accepted(l, s, &op->accepted);
        if (status == 0)
            return complete_accept(l, op, 0);
    }
    if (s != INVALID_SOCKET)
        closesocket(s);
    if (!op->impl.cancelled && peer_gave_up(status)) {
        post_accept(l, op);
        return 0;
    }
    return complete_accept(l, op, status);
}

void zl_listener_accept(zl_listener *l, zl_op *op)
{
    op->impl.step = accept_step;
    op->impl.owner = l;
    op->impl.cancelled = 0;
    op->accepted = NULL;
    l->accept_op = op;
    l->pending++;
    post_accept(l, op);
}

void zl_listener_close(zl_listener *l)
{
    if (l == NULL)
        return;
    if (l->accept_op != NULL) {
        l->accept_op->impl.cancelled = 1;
        CancelIoEx((HANDLE)l->socket, NULL);
    }
    closesocket(l->socket);
    l->socket = INVALID_SOCKET;
    l->closing = true;
    if (l->pending == 0)
        free(l);
    else
        l->loop->closing++;
}
