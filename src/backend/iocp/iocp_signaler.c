/* iocp_signaler.c — zl_signaler on Windows: a connected loopback TCP pair,
 * readable while signalled, like libzmq's signaler.
 *
 * This is the application thread's wait (socket mailboxes, ZLINK_FD), not
 * the I/O path: these sockets are never attached to a completion port, and
 * zl_signaler_wait blocks in WSAPoll on this one socket only. The I/O
 * threads never poll anything; they only drain their completion ports. */
#include "iocp.h"

#include <string.h>

static SOCKET plain_socket(void)
{
    /* No WSA_FLAG_OVERLAPPED: these sockets are read and written
     * synchronously and never touch a port. */
    return WSASocketW(AF_INET, SOCK_STREAM, IPPROTO_TCP, NULL, 0,
                      WSA_FLAG_NO_HANDLE_INHERIT);
}

static int set_nonblocking(SOCKET s)
{
    u_long on = 1;
    return ioctlsocket(s, FIONBIO, &on) == 0 ? 0 : -1;
}

static bool same_endpoint(const struct sockaddr_in *a,
                          const struct sockaddr_in *b)
{
    return a->sin_port == b->sin_port &&
           a->sin_addr.s_addr == b->sin_addr.s_addr;
}

/* Accepts until the connection that comes from our own writer: any local
 * process may connect to the ephemeral port in between, and such a stranger
 * must not become the signaler's read end. */
static SOCKET accept_own_writer(SOCKET listener, SOCKET writer)
{
    struct sockaddr_in writer_addr;
    int len = sizeof writer_addr;
    if (getsockname(writer, (struct sockaddr *)&writer_addr, &len) != 0)
        return INVALID_SOCKET;
    for (int attempt = 0; attempt < 8; attempt++) {
        struct sockaddr_in peer;
        len = sizeof peer;
        SOCKET s = accept(listener, (struct sockaddr *)&peer, &len);
        if (s == INVALID_SOCKET)
            return INVALID_SOCKET;
        if (same_endpoint(&peer, &writer_addr))
            return s;
        closesocket(s);
    }
    return INVALID_SOCKET;
}

static int connect_pair(SOCKET listener, zl_signaler *s)
{
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int len = sizeof addr;
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(listener, 1) != 0 ||
        getsockname(listener, (struct sockaddr *)&addr, &len) != 0)
        return -1;
    s->write_end = plain_socket();
    if (s->write_end == INVALID_SOCKET ||
        connect(s->write_end, (struct sockaddr *)&addr, sizeof addr) != 0)
        return -1;
    s->read_end = accept_own_writer(listener, s->write_end);
    if (s->read_end == INVALID_SOCKET)
        return -1;
    /* One byte per signal must leave at once, not wait for Nagle. */
    BOOL on = TRUE;
    setsockopt(s->write_end, IPPROTO_TCP, TCP_NODELAY, (const char *)&on,
               sizeof on);
    if (set_nonblocking(s->write_end) != 0 || set_nonblocking(s->read_end) != 0)
        return -1;
    return 0;
}

int zl_signaler_init(zl_signaler *s)
{
    s->read_end = s->write_end = INVALID_SOCKET;
    SOCKET listener = plain_socket();
    if (listener == INVALID_SOCKET)
        return zl_iocp_errno_from_wsa(WSAGetLastError());
    int rc = connect_pair(listener, s);
    int err = rc == 0 ? 0 : zl_iocp_errno_from_wsa(WSAGetLastError());
    closesocket(listener);
    if (rc != 0) {
        zl_signaler_close(s);
        return err != 0 ? err : -EIO;
    }
    return 0;
}

void zl_signaler_close(zl_signaler *s)
{
    if (s->read_end != INVALID_SOCKET)
        closesocket(s->read_end);
    if (s->write_end != INVALID_SOCKET)
        closesocket(s->write_end);
    s->read_end = s->write_end = INVALID_SOCKET;
}

static bool read_end_readable(zl_signaler *s)
{
    WSAPOLLFD fd = {.fd = s->read_end, .events = POLLRDNORM};
    return WSAPoll(&fd, 1, 0) > 0;
}

void zl_signaler_send(zl_signaler *s)
{
    char byte = 0;
    /* On Windows WSAEWOULDBLOCK means the pipe is full of unread signals:
     * the read end is readable already, which is all a signal has to
     * achieve. Wine also returns it, now and then, for a send that races
     * another thread's send on the same socket, with nothing unread (seen
     * under load in test_wakeups: the receiver slept through its message).
     * So a send that did not go through is retried until it does or the
     * read end shows a signal. */
    for (int attempt = 0;; attempt++) {
        if (send(s->write_end, &byte, 1, 0) != SOCKET_ERROR ||
            WSAGetLastError() != WSAEWOULDBLOCK || read_end_readable(s))
            return;
        if (attempt > 0)
            Sleep(0);
    }
}

int zl_signaler_wait(zl_signaler *s, int timeout_ms)
{
    WSAPOLLFD fd = {.fd = s->read_end, .events = POLLRDNORM};
    int rc = WSAPoll(&fd, 1, timeout_ms < 0 ? -1 : timeout_ms);
    if (rc < 0)
        return zl_iocp_errno_from_wsa(WSAGetLastError());
    return rc > 0 ? 0 : -EAGAIN;
}

void zl_signaler_reset(zl_signaler *s)
{
    char drain[64];
    while (recv(s->read_end, drain, sizeof drain, 0) == (int)sizeof drain)
        ;
}

zl_os_socket zl_signaler_fd(const zl_signaler *s)
{
    return s->read_end;
}
