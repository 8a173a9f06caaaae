/* direct_recv_testutil.h — what the direct-receive suites share: the
 * check that a run read directly exactly where the backend can, and a raw
 * ZMTP 3.1 PAIR peer (frames out and in, the handshake). Header-only, as
 * socket_testutil.h. */
#ifndef ZLINK_DIRECT_RECV_TESTUTIL_H
#define ZLINK_DIRECT_RECV_TESTUTIL_H

#include <string.h>

#include "backend.h"
#include "direct_recv.h"
#include "raw_socket.h"
#include "socket_testutil.h"

/* Direct reads since before: some where the backend can read from the
 * socket's thread (epoll, kqueue), none where it cannot (IOCP). */
static inline void zt_check_direct_reads(unsigned before)
{
    unsigned direct = zl_direct_recvs_total() - before;
    if (ZL_BACKEND_TRY_READ)
        ck_assert_uint_gt(direct, 0);
    else
        ck_assert_uint_eq(direct, 0);
}

/* Writes a frame (LONG above 255 bytes); body NULL leaves it unwritten.
 * Returns its length. */
static inline size_t zt_put_frame(uint8_t *out, uint8_t flags, const void *body,
                                  uint64_t size)
{
    size_t n = 0;
    if (size > 255) {
        out[n++] = flags | 0x02;
        for (int i = 7; i >= 0; i--)
            out[n++] = (uint8_t)(size >> (8 * i));
    } else {
        out[n++] = flags;
        out[n++] = (uint8_t)size;
    }
    if (body)
        memcpy(out + n, body, (size_t)size);
    return n + (size_t)size;
}

/* One frame from zlink; false on timeout or EOF. */
static inline bool zt_read_frame(raw_fd fd, uint8_t *flags, uint8_t *body,
                                 size_t cap, size_t *size)
{
    uint8_t head[9];
    if (!raw_recv_exact(fd, head, 2, 5000))
        return false;
    uint64_t n = head[1];
    if (head[0] & 0x02) {
        if (!raw_recv_exact(fd, head + 2, 7, 5000))
            return false;
        n = 0;
        for (int i = 1; i < 9; i++)
            n = (n << 8) | head[i];
    }
    ck_assert_uint_le(n, cap);
    *flags = head[0];
    *size = (size_t)n;
    return raw_recv_exact(fd, body, (size_t)n, 5000);
}

/* Connects a raw ZMTP 3.1 PAIR to zlink's port and completes the
 * handshake: both greetings and both READYs. */
static inline raw_fd zt_raw_pair(int port)
{
    raw_fd fd = raw_connect(port);
    uint8_t greeting[64] = {0xff, 0,    0, 0, 0,   0,   0,   0,
                            0,    0x7f, 3, 1, 'N', 'U', 'L', 'L'};
    raw_send(fd, greeting, sizeof greeting);
    static const char ready[] = "\x05READY\x0bSocket-Type\0\0\0\x04PAIR";
    uint8_t frame[64];
    raw_send(fd, frame, zt_put_frame(frame, 0x04, ready, sizeof ready - 1));
    ck_assert(raw_recv_exact(fd, greeting, sizeof greeting, 5000));
    uint8_t flags, body[512];
    size_t size;
    ck_assert(zt_read_frame(fd, &flags, body, sizeof body, &size));
    ck_assert_uint_eq(flags, 0x04);
    ck_assert(size > 6 && memcmp(body, "\x05READY", 6) == 0);
    return fd;
}

#endif
