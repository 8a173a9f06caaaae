/* raw_socket.c — see raw_socket.h. */
#include "raw_socket.h"

#if !defined(_WIN32)
#include <signal.h>
#endif

#include <stdint.h>
#include <string.h>

#include "testutil.h"

void raw_sockets_init(void)
{
#if defined(_WIN32)
    WSADATA wsa;
    WSAStartup(MAKEWORD(2, 2), &wsa);
#else
    signal(SIGPIPE, SIG_IGN);
#endif
}

void raw_close(raw_fd fd)
{
#if defined(_WIN32)
    closesocket(fd);
#else
    close(fd);
#endif
}

void raw_shutdown_send(raw_fd fd)
{
#if defined(_WIN32)
    shutdown(fd, SD_SEND);
#else
    shutdown(fd, SHUT_WR);
#endif
}

raw_fd raw_listen(int backlog, int *port)
{
    raw_fd fd = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    ck_assert(fd != RAW_INVALID);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    ck_assert_int_eq(listen(fd, backlog), 0);
    raw_len len = sizeof addr;
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
    *port = ntohs(addr.sin_port);
    return fd;
}

static void set_nodelay(raw_fd fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, (const char *)&one, sizeof one);
}

raw_fd raw_accept(raw_fd listener, int timeout_ms)
{
    if (!raw_readable(listener, timeout_ms))
        return RAW_INVALID;
    raw_fd fd = accept(listener, NULL, NULL);
    ck_assert(fd != RAW_INVALID);
    set_nodelay(fd);
    return fd;
}

raw_fd raw_connect(int port)
{
    return raw_connect_buffered(port, 0, 0);
}

raw_fd raw_connect_buffered(int port, int buffer_option, int size)
{
    raw_fd fd = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    ck_assert(fd != RAW_INVALID);
    set_nodelay(fd);
    if (buffer_option != 0)
        ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, buffer_option,
                                    (const char *)&size, sizeof size),
                         0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((unsigned short)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    return fd;
}

void raw_send(raw_fd fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        int chunk = len > 65536 ? 65536 : (int)len;
        int n = (int)send(fd, p, chunk, 0);
        ck_assert_msg(n > 0, "raw send failed");
        p += n;
        len -= (size_t)n;
    }
}

bool raw_readable(raw_fd fd, int timeout_ms)
{
    fd_set set;
    FD_ZERO(&set);
    FD_SET(fd, &set);
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    return select((int)fd + 1, &set, NULL, NULL, &tv) > 0;
}

bool raw_recv_exact(raw_fd fd, void *buf, size_t len, int timeout_ms)
{
    char *p = buf;
    uint64_t deadline = zl_test_now_ms() + (uint64_t)timeout_ms;
    while (len > 0) {
        uint64_t now = zl_test_now_ms();
        if (now >= deadline || !raw_readable(fd, (int)(deadline - now)))
            return false;
        int chunk = len > 65536 ? 65536 : (int)len;
        int n = (int)recv(fd, p, chunk, 0);
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

bool raw_closed_by_peer(raw_fd fd, int timeout_ms)
{
    uint64_t deadline = zl_test_now_ms() + (uint64_t)timeout_ms;
    char buf[4096];
    for (;;) {
        uint64_t now = zl_test_now_ms();
        if (now >= deadline || !raw_readable(fd, (int)(deadline - now)))
            return false;
        if (recv(fd, buf, sizeof buf, 0) <= 0)
            return true;
    }
}
