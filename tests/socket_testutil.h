/* socket_testutil.h — helpers shared by the socket integration suites
 * (test_socket_*.c, test_poll.c, test_monitor.c): sockets with bounded
 * waits, joining two sockets over every transport, and messages whose
 * every byte is checked. Header-only: each suite is one translation unit. */
#ifndef ZL_SOCKET_TESTUTIL_H
#define ZL_SOCKET_TESTUTIL_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <zlink.h>

#include "testutil.h"

/* Every blocking call in the suites is bounded by this. */
#define ZT_TIMEOUT_MS 5000

/* The transports every pattern is run over. */
enum {
    ZT_TCP4,
    ZT_TCP6,
    ZT_IPC,
    ZT_IPC_WILDCARD,
    ZT_IPC_ABSTRACT,
    ZT_INPROC,               /* bind, then connect */
    ZT_INPROC_CONNECT_FIRST, /* connect, then bind */
    ZT_TRANSPORT_COUNT
};

static inline const char *zt_transport_name(int t)
{
    static const char *const names[] = {"tcp4",
                                        "tcp6",
                                        "ipc",
                                        "ipc-wildcard",
                                        "ipc-abstract",
                                        "inproc",
                                        "inproc-connect-first"};
    return t >= 0 && t < ZT_TRANSPORT_COUNT ? names[t] : "?";
}

static inline void zt_set_int(void *s, int option, int value)
{
    zl_test_set_int(s, option, value);
}

static inline int zt_get_int(void *s, int option)
{
    int value = -12345;
    size_t len = sizeof value;
    ck_assert_msg(zlink_getsockopt(s, option, &value, &len) == 0,
                  "getsockopt(%d): %s", option, zlink_strerror(zlink_errno()));
    ck_assert_uint_eq(len, sizeof value);
    return value;
}

static inline void *zt_ctx(void)
{
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    return ctx;
}

/* A socket that never waits longer than ZT_TIMEOUT_MS and never lingers. */
static inline void *zt_socket(void *ctx, int type)
{
    void *s = zlink_socket(ctx, type);
    ck_assert_msg(s != NULL, "zlink_socket(%d): %s", type,
                  zlink_strerror(zlink_errno()));
    zt_set_int(s, ZLINK_LINGER, 0);
    zt_set_int(s, ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
    zt_set_int(s, ZLINK_SNDTIMEO, ZT_TIMEOUT_MS);
    return s;
}

static inline void zt_close(void *s)
{
    ck_assert_int_eq(zlink_close(s), 0);
}

static inline void zt_term(void *ctx)
{
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}

static inline void zt_last_endpoint(void *s, char *buf, size_t cap)
{
    size_t len = cap;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, buf, &len), 0);
    ck_assert_uint_eq(len, strlen(buf) + 1);
}

static inline void zt_bind(void *s, const char *endpoint)
{
    ck_assert_msg(zlink_bind(s, endpoint) == 0, "bind %s: %s", endpoint,
                  zlink_strerror(zlink_errno()));
}

static inline void zt_connect(void *s, const char *endpoint)
{
    ck_assert_msg(zlink_connect(s, endpoint) == 0, "connect %s: %s", endpoint,
                  zlink_strerror(zlink_errno()));
}

/* Binds endpoint, retrying for up to timeout_ms while it is still taken
 * (EADDRINUSE): a listener closed just before goes on the I/O thread's
 * time, as in libzmq. */
static inline void zt_bind_when_free(void *s, const char *endpoint,
                                     int timeout_ms)
{
    uint64_t deadline = zl_test_now_ms() + (uint64_t)timeout_ms;
    while (zlink_bind(s, endpoint) != 0) {
        ck_assert_msg(zlink_errno() == EADDRINUSE, "bind %s: %s", endpoint,
                      zlink_strerror(zlink_errno()));
        ck_assert_msg(zl_test_now_ms() < deadline, "%s stayed taken", endpoint);
        zl_test_sleep_ms(5);
    }
}

/* Binds to tcp://127.0.0.1:* and writes the resolved endpoint. */
static inline void zt_bind_tcp(void *s, char *endpoint, size_t cap)
{
    zt_bind(s, "tcp://127.0.0.1:*");
    zt_last_endpoint(s, endpoint, cap);
}

static inline int zt_next_id(void)
{
    static int counter;
    return ++counter;
}

/* ipc is skipped under Wine, which has no AF_UNIX. */
static inline bool zt_have_ipc(void)
{
    return zlink_has("ipc") && !zl_test_skip_ipc();
}

/* A fresh endpoint for transport t that binder can bind (for wildcards:
 * the request; zt_join resolves it). False when t is unavailable here. */
static inline bool zt_endpoint(int t, char *ep, size_t cap)
{
    switch (t) {
    case ZT_TCP4:
        snprintf(ep, cap, "tcp://127.0.0.1:*");
        return true;
    case ZT_TCP6:
        snprintf(ep, cap, "tcp://[::1]:*");
        return true;
    case ZT_IPC:
        if (!zt_have_ipc())
            return false;
        zl_test_ipc_endpoint(ep, cap);
        return true;
    case ZT_IPC_WILDCARD:
        if (!zt_have_ipc())
            return false;
        snprintf(ep, cap, "ipc://*");
        return true;
    case ZT_IPC_ABSTRACT:
#ifdef __linux__
        snprintf(ep, cap, "ipc://@zlink-test-%d-%d", (int)uv_os_getpid(),
                 zt_next_id());
        return true;
#else
        return false;
#endif
    case ZT_INPROC:
    case ZT_INPROC_CONNECT_FIRST:
        snprintf(ep, cap, "inproc://zt-%d", zt_next_id());
        return true;
    default:
        return false;
    }
}

/* Connects one more socket to an endpoint zt_join gave for transport t:
 * over IPv6 it needs ZLINK_IPV6, as in libzmq. */
static inline void zt_connect_over(void *s, int t, const char *endpoint)
{
    if (t == ZT_TCP6)
        zt_set_int(s, ZLINK_IPV6, 1);
    zt_connect(s, endpoint);
}

/* Joins binder and connecter over transport t; writes the endpoint the
 * connecter used into ep. Returns false (nothing done) when t is not
 * available on this machine: the case then has nothing to check. */
static inline bool zt_join(void *binder, void *connecter, int t, char *ep,
                           size_t cap)
{
    if (!zt_endpoint(t, ep, cap))
        return false;
    if (t == ZT_TCP6) {
        zt_set_int(binder, ZLINK_IPV6, 1);
        zt_set_int(connecter, ZLINK_IPV6, 1);
        if (zlink_bind(binder, ep) != 0)
            return false; /* no IPv6 loopback here */
        zt_last_endpoint(binder, ep, cap);
        zt_connect(connecter, ep);
        return true;
    }
    if (t == ZT_INPROC_CONNECT_FIRST) {
        zt_connect(connecter, ep);
        zt_bind(binder, ep);
        return true;
    }
    zt_bind(binder, ep);
    zt_last_endpoint(binder, ep, cap);
    zt_connect(connecter, ep);
    return true;
}

/* Two PAIR sockets (zt_socket's) in a context of their own, joined over
 * a transport with zt_join. */
typedef struct zt_pair {
    void *ctx, *binder, *connecter;
    char endpoint[300];
} zt_pair;

/* False, with everything closed again, when the transport is not
 * available here (the case then has nothing to check). */
static inline bool zt_pair_open(zt_pair *p, int transport)
{
    p->ctx = zt_ctx();
    p->binder = zt_socket(p->ctx, ZLINK_PAIR);
    p->connecter = zt_socket(p->ctx, ZLINK_PAIR);
    if (zt_join(p->binder, p->connecter, transport, p->endpoint,
                sizeof p->endpoint))
        return true;
    zt_close(p->binder);
    zt_close(p->connecter);
    zt_term(p->ctx);
    return false;
}

static inline void zt_pair_close(zt_pair *p)
{
    zt_close(p->binder);
    zt_close(p->connecter);
    zt_term(p->ctx);
}

/* ---- messages whose every byte is checked ---- */

/* Body sizes around the inline bodies a short copy carries (24, msg.h),
 * the inline limit (104), the bound from which the engine copies bodies
 * with memcpy (128), the one-byte frame length (255),
 * a pool class edge (1024 + 64 - the 48-byte header), the zero-copy
 * threshold (8 KiB), the engine's read buffer (32 KiB), and large bodies
 * that span many reads. */
static inline const size_t *zt_sizes(size_t *count)
{
    static const size_t sizes[] = {0,
                                   1,
                                   24,
                                   25,
                                   48,
                                   104,
                                   105,
                                   127,
                                   128,
                                   255,
                                   256,
                                   1040,
                                   1041,
                                   8191,
                                   8192,
                                   32 * 1024 + 3,
                                   65536,
                                   1024 * 1024,
                                   4 * 1024 * 1024};
    *count = sizeof sizes / sizeof sizes[0];
    return sizes;
}

static inline uint8_t zt_byte(unsigned seed, size_t i)
{
    return (uint8_t)(seed * 131u + i * 7u + (i >> 8) * 13u + (i >> 16));
}

/* Eight bytes of the pattern from index i, a multiple of 8: i >> 8 and
 * i >> 16 are the same for all eight, so they are zt_byte(seed, i) plus
 * 0, 7, ..., 49, added in each byte without carries into the next. The
 * suites fill and check gigabytes: a word at a time keeps that cheap under
 * the sanitizers. */
static inline uint64_t zt_word(unsigned seed, size_t i)
{
    static const uint8_t steps[8] = {0, 7, 14, 21, 28, 35, 42, 49};
    uint64_t step;
    memcpy(&step, steps, sizeof step);
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
    uint64_t base = zt_byte(seed, i) * 0x0101010101010101ull;
    return ((base & low7) + (step & low7)) ^ ((base ^ step) & ~low7);
}

static inline void zt_fill(void *buf, size_t size, unsigned seed)
{
    uint8_t *p = buf;
    size_t i = 0;
    for (; i < size && i % 8 != 0; i++)
        p[i] = zt_byte(seed, i);
    for (; size - i >= 8; i += 8) {
        uint64_t word = zt_word(seed, i);
        memcpy(p + i, &word, sizeof word);
    }
    for (; i < size; i++)
        p[i] = zt_byte(seed, i);
}

/* The index of the first byte of buf that differs from the pattern, or
 * size if none does. For threads, where Check's asserts cannot run. */
static inline size_t zt_first_wrong_byte(const void *buf, size_t size,
                                         unsigned seed)
{
    const uint8_t *p = buf;
    size_t i = 0;
    for (; i < size && i % 8 != 0; i++)
        if (p[i] != zt_byte(seed, i))
            return i;
    for (; size - i >= 8; i += 8) {
        uint64_t word;
        memcpy(&word, p + i, sizeof word);
        if (word != zt_word(seed, i))
            break; /* the byte loop below finds which */
    }
    for (; i < size; i++)
        if (p[i] != zt_byte(seed, i))
            return i;
    return size;
}

static inline void zt_check_bytes(const void *buf, size_t size, unsigned seed)
{
    const uint8_t *p = buf;
    size_t i = zt_first_wrong_byte(buf, size, seed);
    if (i < size)
        ck_abort_msg("byte %zu of %zu (seed %u): 0x%02x, expected 0x%02x", i,
                     size, seed, p[i], zt_byte(seed, i));
}

static inline int zt_size_rc(size_t size)
{
    return size > INT_MAX ? INT_MAX : (int)size;
}

/* Sends one part of size bytes through zlink_msg_send. */
static inline void zt_send_part(void *s, size_t size, unsigned seed, int flags)
{
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init_size(&msg, size), 0);
    zt_fill(zlink_msg_data(&msg), size, seed);
    int rc = zlink_msg_send(&msg, s, flags);
    ck_assert_msg(rc == zt_size_rc(size), "msg_send(%zu): %d %s", size, rc,
                  zlink_strerror(zlink_errno()));
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
}

/* Receives one part through zlink_msg_recv and checks its size, every
 * byte, and whether more parts follow (both ways of asking). */
static inline void zt_recv_part(void *s, size_t size, unsigned seed, bool more)
{
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init(&msg), 0);
    int rc = zlink_msg_recv(&msg, s, 0);
    ck_assert_msg(rc >= 0, "msg_recv(expecting %zu): %s", size,
                  zlink_strerror(zlink_errno()));
    ck_assert_int_eq(rc, zt_size_rc(size));
    ck_assert_uint_eq(zlink_msg_size(&msg), size);
    zt_check_bytes(zlink_msg_data(&msg), size, seed);
    ck_assert_int_eq(zlink_msg_more(&msg), more ? 1 : 0);
    ck_assert_int_eq(zlink_msg_get(&msg, ZLINK_MORE), more ? 1 : 0);
    ck_assert_int_eq(zt_get_int(s, ZLINK_RCVMORE), more ? 1 : 0);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
}

static inline void zt_send_str(void *s, const char *text, int flags)
{
    int rc = zlink_send(s, text, strlen(text), flags);
    ck_assert_msg(rc == (int)strlen(text), "send '%s': %s", text,
                  zlink_strerror(zlink_errno()));
}

/* Receives one part into buf (NUL-terminated); returns its size. */
static inline int zt_recv_buf(void *s, char *buf, size_t cap, int flags)
{
    int rc = zlink_recv(s, buf, cap - 1, flags);
    if (rc >= 0)
        buf[(size_t)rc < cap - 1 ? (size_t)rc : cap - 1] = '\0';
    return rc;
}

static inline void zt_recv_str(void *s, const char *expected)
{
    char buf[256];
    int rc = zt_recv_buf(s, buf, sizeof buf, 0);
    ck_assert_msg(rc >= 0, "recv (expecting '%s'): %s", expected,
                  zlink_strerror(zlink_errno()));
    ck_assert_int_lt(rc, (int)sizeof buf);
    ck_assert_str_eq(buf, expected);
}

static inline void zt_expect_errno(int rc, int expected)
{
    int err = zlink_errno();
    ck_assert_msg(rc == -1 && err == expected,
                  "expected -1/%d (%s), got %d/%d (%s)", expected,
                  zlink_strerror(expected), rc, err, zlink_strerror(err));
}

/* Sends "text" on s until the peer's recv (with a short timeout) gets it:
 * for peers whose connection is still being made (ROUTER destinations,
 * reconnects). Every other message in between is dropped by the peer. */
static inline bool zt_ping_until(void *s, void *peer, const char *text,
                                 int timeout_ms)
{
    uint64_t deadline = zl_test_now_ms() + (uint64_t)timeout_ms;
    int saved = zt_get_int(peer, ZLINK_RCVTIMEO);
    zt_set_int(peer, ZLINK_RCVTIMEO, 50);
    bool ok = false;
    while (!ok && zl_test_now_ms() < deadline) {
        zlink_send(s, text, strlen(text), ZLINK_DONTWAIT);
        char buf[256];
        int rc = zt_recv_buf(peer, buf, sizeof buf, 0);
        ok = rc >= 0 && strcmp(buf, text) == 0;
    }
    /* The pings queued while the peer was away arrive in one burst. */
    zt_set_int(peer, ZLINK_RCVTIMEO, 200);
    char buf[256];
    while (ok && zt_recv_buf(peer, buf, sizeof buf, 0) >= 0)
        ck_assert_str_eq(buf, text);
    zt_set_int(peer, ZLINK_RCVTIMEO, saved);
    return ok;
}

#endif
