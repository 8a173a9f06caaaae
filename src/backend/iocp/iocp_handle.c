/* iocp_handle.c — sockets and connected-stream handles: creating them,
 * binding them to a loop's port, completing their ops to the owner,
 * cancelling and closing. */
#include "iocp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool zl_iocp_skip_mode_allowed = true;

int zl_iocp_protocol_of(int family)
{
    return family == AF_UNIX ? 0 : IPPROTO_TCP;
}

SOCKET zl_iocp_socket_open(int family, int *err)
{
    SOCKET s =
        WSASocketW(family, SOCK_STREAM, zl_iocp_protocol_of(family), NULL, 0,
                   WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
    if (s == INVALID_SOCKET && WSAGetLastError() == WSAEINVAL) {
        /* Windows before 7 SP1 rejects WSA_FLAG_NO_HANDLE_INHERIT. */
        s = WSASocketW(family, SOCK_STREAM, zl_iocp_protocol_of(family), NULL,
                       0, WSA_FLAG_OVERLAPPED);
        if (s != INVALID_SOCKET)
            SetHandleInformation((HANDLE)s, HANDLE_FLAG_INHERIT, 0);
    }
    if (s == INVALID_SOCKET)
        *err = zl_iocp_errno_from_wsa(WSAGetLastError());
    return s;
}

/* Skipping the port on inline success is only safe when every layer of the
 * socket is an IFS handle: a non-IFS layered provider (old firewalls, some
 * VPN clients) completes through its own path and would lose the result. */
static bool provider_allows_skip(SOCKET s)
{
    WSAPROTOCOL_INFOW info;
    int len = sizeof info;
    if (getsockopt(s, SOL_SOCKET, SO_PROTOCOL_INFOW, (char *)&info, &len) != 0)
        return false;
    return (info.dwServiceFlags1 & XP1_IFS_HANDLES) != 0;
}

int zl_iocp_socket_attach(zl_loop *loop, SOCKET s, bool *skip_port_on_success)
{
    if (CreateIoCompletionPort((HANDLE)s, loop->port, ZL_IOCP_KEY_IO, 0) ==
        NULL)
        return zl_iocp_errno_from_wsa((int)GetLastError());
    *skip_port_on_success =
        zl_iocp_skip_mode_allowed && provider_allows_skip(s) &&
        SetFileCompletionNotificationModes(
            (HANDLE)s, FILE_SKIP_COMPLETION_PORT_ON_SUCCESS |
                           FILE_SKIP_SET_EVENT_ON_HANDLE);
    return 0;
}

void zl_iocp_set_nodelay(SOCKET s, int family)
{
    if (family == AF_UNIX)
        return;
    BOOL on = TRUE;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, (const char *)&on, sizeof on);
}

zl_handle *zl_iocp_handle_new(zl_loop *loop, SOCKET s, int family,
                              bool skip_port_on_success)
{
    zl_handle *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    h->loop = loop;
    h->socket = s;
    h->family = family;
    h->skip_port_on_success = skip_port_on_success;
    /* A new connection has nothing to read yet: probe before pinning a
     * buffer (see iocp_read.c). */
    h->drained = true;
    return h;
}

int zl_iocp_handle_complete(zl_handle *h, zl_op *op, int status, size_t bytes)
{
    if (op->impl.cancelled) {
        status = ZL_ECANCELED;
        bytes = 0;
    }
    if (h->read_op == op)
        h->read_op = NULL;
    else if (h->write_op == op)
        h->write_op = NULL;
    else if (h->connect_op == op)
        h->connect_op = NULL;
    h->pending--;
    /* Decided before the callback, and h freed first: a closed handle is
     * never touched by its owner again, and a callback may close h itself
     * (then close frees it). */
    bool release = h->closing && h->pending == 0;
    zl_loop *loop = h->loop;
    if (release) {
        loop->closing--;
        free(h);
    }
    if (loop->destroying)
        return 0;
    op->cb(op, status, bytes);
    return 1;
}

void zl_handle_cancel(zl_handle *h)
{
    zl_op *ops[] = {h->read_op, h->write_op, h->connect_op};
    bool any = false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        if (ops[i] != NULL) {
            /* The flag covers steps whose packet is already queued or that
             * sit on the deferred list, which CancelIoEx cannot reach. */
            ops[i]->impl.cancelled = 1;
            any = true;
        }
    }
    if (any && h->socket != INVALID_SOCKET)
        CancelIoEx((HANDLE)h->socket, NULL);
}

void zl_handle_close(zl_handle *h)
{
    if (h == NULL)
        return;
    zl_handle_cancel(h);
    if (h->socket != INVALID_SOCKET)
        closesocket(h->socket);
    h->socket = INVALID_SOCKET;
    h->closing = true;
    /* Cancelled ops still hold h until the loop has run their callbacks. */
    if (h->pending == 0)
        free(h);
    else
        h->loop->closing++;
}

void zl_handle_set_buffers(zl_handle *h, int sndbuf, int rcvbuf)
{
    if (sndbuf > 0)
        setsockopt(h->socket, SOL_SOCKET, SO_SNDBUF, (const char *)&sndbuf,
                   sizeof sndbuf);
    if (rcvbuf > 0)
        setsockopt(h->socket, SOL_SOCKET, SO_RCVBUF, (const char *)&rcvbuf,
                   sizeof rcvbuf);
}

int zl_handle_peer_addr(zl_handle *h, zl_addr *out)
{
    int len = sizeof out->u.storage;
    memset(out, 0, sizeof *out);
    if (getpeername(h->socket, &out->u.sa, &len) != 0)
        return zl_iocp_errno_from_wsa(WSAGetLastError());
    out->len = len;
    return 0;
}

/* Winsock has no peer credentials for AF_UNIX. */
int zl_handle_peer_cred(zl_handle *h, unsigned *uid, unsigned *gid, int *pid)
{
    (void)h;
    (void)uid;
    (void)gid;
    (void)pid;
    return -ENOTSUP;
}

int zl_peer_cred_kinds(void)
{
    return 0;
}

bool zl_user_in_group(unsigned uid, unsigned gid)
{
    (void)uid;
    (void)gid;
    return false;
}

zl_os_socket zl_handle_os_socket(const zl_handle *h)
{
    return h->socket;
}

/* Only a ConnectEx left pending waits on the network: one that failed
 * inline (an unreachable network) or succeeded at once does not, nor a
 * local AF_UNIX connect, whichever way it was made (iocp_connect.c). */
bool zl_handle_connect_in_progress(const zl_handle *h)
{
    return h->connect_waits;
}

int64_t zl_handle_try_write(zl_handle *h, const zl_iovec *iov, int n)
{
    (void)h;
    (void)iov;
    (void)n;
    return -ENOTSUP;
}

int64_t zl_handle_try_read(zl_handle *h, void *buf, size_t len, bool peek)
{
    (void)h;
    (void)buf;
    (void)len;
    (void)peek;
    return -ENOTSUP;
}

int zl_handle_watch_input(zl_handle *h, bool watched)
{
    (void)h;
    (void)watched;
    return -ENOTSUP;
}
