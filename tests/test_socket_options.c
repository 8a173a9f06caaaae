/* test_socket_options.c — socket and context options through the public
 * API: libzmq's defaults, set/get of every option in zlink.h, EINVAL for
 * bad values, unknown and read-only options; ZLINK_LAST_ENDPOINT; endpoint
 * errors (EINVAL, EPROTONOSUPPORT, EADDRINUSE, ENOENT); unbind/disconnect
 * by endpoint; RCVTIMEO, MAXMSGSIZE and HANDSHAKE_IVL at work; the send
 * buffer ipc asks for. */
#include <sys/stat.h>

#ifndef _WIN32
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#endif

#include "socket_testutil.h"

static const int types[] = {ZLINK_PAIR, ZLINK_DEALER, ZLINK_ROUTER};
#define TYPE_COUNT 3

static int get_int_raw(void *s, int option, int *value)
{
    size_t len = sizeof *value;
    return zlink_getsockopt(s, option, value, &len);
}

/* ---- defaults ---- */

typedef struct int_default {
    int option;
    int value;
} int_default;

/* libzmq 4.3's defaults. */
static const int_default int_defaults[] = {
    {ZLINK_SNDHWM, 1000},
    {ZLINK_RCVHWM, 1000},
    {ZLINK_LINGER, -1},
    {ZLINK_RCVTIMEO, -1},
    {ZLINK_SNDTIMEO, -1},
    {ZLINK_RECONNECT_IVL, 100},
    {ZLINK_RECONNECT_IVL_MAX, 0},
    {ZLINK_BACKLOG, ZLINK_BACKLOG_DFLT}, /* zlink's own: 100 drops SYNs */
    {ZLINK_HANDSHAKE_IVL, 30000},
    {ZLINK_SNDBUF, -1},
    {ZLINK_RCVBUF, -1},
    {ZLINK_IMMEDIATE, 0},
    {ZLINK_IPV6, 0},
    {ZLINK_HEARTBEAT_IVL, 0},
    {ZLINK_HEARTBEAT_TTL, 0},
    {ZLINK_HEARTBEAT_TIMEOUT, -1},
    {ZLINK_RCVMORE, 0},
    {ZLINK_MAXMSGPARTS, ZLINK_MAXMSGPARTS_DFLT}, /* zlink's own */
};

START_TEST(defaults)
{
    int type = types[_i];
    void *ctx = zt_ctx();
    void *s = zlink_socket(ctx, type);
    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < sizeof int_defaults / sizeof int_defaults[0]; i++) {
        int value = -12345;
        ck_assert_msg(get_int_raw(s, int_defaults[i].option, &value) == 0,
                      "option %d: %s", int_defaults[i].option,
                      zlink_strerror(zlink_errno()));
        ck_assert_msg(value == int_defaults[i].value,
                      "option %d: default %d, libzmq's is %d",
                      int_defaults[i].option, value, int_defaults[i].value);
    }
    ck_assert_int_eq(zt_get_int(s, ZLINK_TYPE), type);
    int64_t max = 0;
    size_t len = sizeof max;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_MAXMSGSIZE, &max, &len), 0);
    ck_assert_uint_eq(len, sizeof max);
    ck_assert(max == -1);
    uint8_t id[256];
    len = sizeof id;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_ROUTING_ID, id, &len), 0);
    ck_assert_uint_eq(len, 0);
    char ep[64];
    len = sizeof ep;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, ep, &len), 0);
    ck_assert_uint_eq(len, 1);
    ck_assert_str_eq(ep, "");
    zlink_fd_t fd;
    len = sizeof fd;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_FD, &fd, &len), 0);
    ck_assert_uint_eq(len, sizeof fd);
#ifndef _WIN32
    ck_assert_int_ge(fd, 0);
#endif
    /* No peer: nothing to read; only a ROUTER (without ROUTER_MANDATORY)
     * always accepts a send. */
    ck_assert_int_eq(zt_get_int(s, ZLINK_EVENTS),
                     type == ZLINK_ROUTER ? ZLINK_POLLOUT : 0);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* ---- set and get ---- */

typedef struct int_case {
    int option;
    int good[3];
    int bad[2]; /* 0 terminates unless it is the first */
    int bad_count;
} int_case;

static const int_case int_cases[] = {
    {ZLINK_SNDHWM, {0, 1, 50000}, {-1}, 1},
    {ZLINK_RCVHWM, {0, 1, 50000}, {-1}, 1},
    {ZLINK_LINGER, {-1, 0, 5000}, {-2}, 1},
    {ZLINK_RCVTIMEO, {-1, 0, 250}, {-2}, 1},
    {ZLINK_SNDTIMEO, {-1, 0, 250}, {-2}, 1},
    {ZLINK_RECONNECT_IVL, {-1, 0, 2500}, {-2}, 1},
    {ZLINK_RECONNECT_IVL_MAX, {0, 100, 60000}, {-1}, 1},
    {ZLINK_BACKLOG, {0, 1, 1000}, {-1}, 1},
    {ZLINK_HANDSHAKE_IVL, {0, 1, 60000}, {-1}, 1},
    {ZLINK_SNDBUF, {-1, 0, 1 << 20}, {-2}, 1},
    {ZLINK_RCVBUF, {-1, 0, 1 << 20}, {-2}, 1},
    {ZLINK_IMMEDIATE, {0, 1, 0}, {2, -1}, 2},
    {ZLINK_IPV6, {0, 1, 0}, {2, -1}, 2},
    {ZLINK_HEARTBEAT_IVL, {0, 100, 10000}, {-1}, 1},
    {ZLINK_HEARTBEAT_TTL, {-99, 1000, 6553599}, {-100, 6553600}, 2},
    {ZLINK_HEARTBEAT_TIMEOUT, {0, 100, 10000}, {-1}, 1},
    {ZLINK_MAXMSGPARTS, {-1, 1, 100000}, {0, -2}, 2},
};

START_TEST(int_options_set_get)
{
    void *ctx = zt_ctx();
    void *s = zlink_socket(ctx, types[_i]);
    ck_assert_ptr_nonnull(s);
    for (size_t i = 0; i < sizeof int_cases / sizeof int_cases[0]; i++) {
        const int_case *c = &int_cases[i];
        for (int g = 0; g < 3; g++) {
            int v = c->good[g];
            ck_assert_msg(zlink_setsockopt(s, c->option, &v, sizeof v) == 0,
                          "option %d = %d: %s", c->option, v,
                          zlink_strerror(zlink_errno()));
            int got = -12345;
            ck_assert_int_eq(get_int_raw(s, c->option, &got), 0);
            /* HEARTBEAT_TTL travels in deciseconds, libzmq keeps it so. */
            if (c->option == ZLINK_HEARTBEAT_TTL)
                ck_assert_int_eq(got, v - v % 100);
            else
                ck_assert_int_eq(got, v);
        }
        int before = -12345;
        ck_assert_int_eq(get_int_raw(s, c->option, &before), 0);
        for (int b = 0; b < c->bad_count; b++) {
            int v = c->bad[b];
            zt_expect_errno(zlink_setsockopt(s, c->option, &v, sizeof v),
                            EINVAL);
        }
        /* The wrong size, or no value at all. */
        int64_t wide = 1;
        zt_expect_errno(zlink_setsockopt(s, c->option, &wide, sizeof wide),
                        EINVAL);
        zt_expect_errno(zlink_setsockopt(s, c->option, NULL, sizeof(int)),
                        EINVAL);
        zt_expect_errno(zlink_setsockopt(s, c->option, &wide, 2), EINVAL);
        int after = -12345;
        ck_assert_int_eq(get_int_raw(s, c->option, &after), 0);
        ck_assert_int_eq(after, before);
        /* A buffer too small for the answer. */
        char small[2];
        size_t len = sizeof small;
        zt_expect_errno(zlink_getsockopt(s, c->option, small, &len), EINVAL);
    }
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(maxmsgsize_option)
{
    void *ctx = zt_ctx();
    void *s = zlink_socket(ctx, ZLINK_DEALER);
    int64_t values[] = {0, 1, 1 << 20, (int64_t)1 << 40, -1};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        ck_assert_int_eq(
            zlink_setsockopt(s, ZLINK_MAXMSGSIZE, &values[i], sizeof values[i]),
            0);
        int64_t got = 0;
        size_t len = sizeof got;
        ck_assert_int_eq(zlink_getsockopt(s, ZLINK_MAXMSGSIZE, &got, &len), 0);
        ck_assert(got == values[i]);
    }
    /* It is an int64_t, as in libzmq: an int is the wrong size. */
    int narrow = 100;
    zt_expect_errno(
        zlink_setsockopt(s, ZLINK_MAXMSGSIZE, &narrow, sizeof narrow), EINVAL);
    size_t len = sizeof narrow;
    zt_expect_errno(zlink_getsockopt(s, ZLINK_MAXMSGSIZE, &narrow, &len),
                    EINVAL);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(routing_id_option)
{
    void *ctx = zt_ctx();
    void *s = zlink_socket(ctx, types[_i]);
    uint8_t id[255];
    for (size_t i = 0; i < sizeof id; i++)
        id[i] = (uint8_t)(i * 7 + 1);
    size_t sizes[] = {1, 5, 255};
    for (size_t k = 0; k < 3; k++) {
        ck_assert_int_eq(zlink_setsockopt(s, ZLINK_ROUTING_ID, id, sizes[k]),
                         0);
        uint8_t got[256];
        size_t len = sizeof got;
        ck_assert_int_eq(zlink_getsockopt(s, ZLINK_ROUTING_ID, got, &len), 0);
        ck_assert_uint_eq(len, sizes[k]);
        ck_assert_int_eq(memcmp(got, id, sizes[k]), 0);
    }
    /* libzmq 4.3 takes any 1-255 bytes, a leading zero byte included. */
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_ROUTING_ID, "\0abc", 4), 0);
    uint8_t big[256] = {1};
    zt_expect_errno(zlink_setsockopt(s, ZLINK_ROUTING_ID, big, 256), EINVAL);
    zt_expect_errno(zlink_setsockopt(s, ZLINK_ROUTING_ID, big, 0), EINVAL);
    uint8_t small[2];
    size_t len = sizeof small;
    zt_expect_errno(zlink_getsockopt(s, ZLINK_ROUTING_ID, small, &len), EINVAL);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(router_only_options)
{
    void *ctx = zt_ctx();
    void *router = zlink_socket(ctx, ZLINK_ROUTER);
    void *dealer = zlink_socket(ctx, ZLINK_DEALER);
    int on = 1, off = 0, neg = -1, two = 2;
    ck_assert_int_eq(
        zlink_setsockopt(router, ZLINK_ROUTER_MANDATORY, &on, sizeof on), 0);
    ck_assert_int_eq(
        zlink_setsockopt(router, ZLINK_ROUTER_MANDATORY, &two, sizeof two), 0);
    ck_assert_int_eq(
        zlink_setsockopt(router, ZLINK_ROUTER_MANDATORY, &off, sizeof off), 0);
    zt_expect_errno(
        zlink_setsockopt(router, ZLINK_ROUTER_MANDATORY, &neg, sizeof neg),
        EINVAL);
    zt_expect_errno(
        zlink_setsockopt(dealer, ZLINK_ROUTER_MANDATORY, &on, sizeof on),
        EINVAL);
    ck_assert_int_eq(
        zlink_setsockopt(router, ZLINK_CONNECT_ROUTING_ID, "peer", 4), 0);
    uint8_t big[256] = {1};
    zt_expect_errno(
        zlink_setsockopt(router, ZLINK_CONNECT_ROUTING_ID, big, 256), EINVAL);
    /* As ROUTER_MANDATORY, a ROUTER's option alone. */
    zt_expect_errno(
        zlink_setsockopt(dealer, ZLINK_CONNECT_ROUTING_ID, "peer", 4), EINVAL);
    zt_close(router);
    zt_close(dealer);
    zt_term(ctx);
}
END_TEST

/* PLAIN's options, as libzmq takes them: either credential makes a PLAIN
 * client, PLAIN_SERVER a PLAIN server, NULL with length 0 or PLAIN_SERVER 0
 * go back to NULL, and strings read back with their NUL. */
START_TEST(plain_options)
{
    void *ctx = zt_ctx();
    void *s = zlink_socket(ctx, types[_i]);
    char got[300];
    size_t len = sizeof got;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_PLAIN_USERNAME, got, &len), 0);
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_PLAIN_USERNAME, "admin", 5), 0);
    ck_assert_int_eq(zt_get_int(s, ZLINK_MECHANISM), ZLINK_PLAIN);
    len = sizeof got;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_PLAIN_USERNAME, got, &len), 0);
    ck_assert_uint_eq(len, 6);
    ck_assert_str_eq(got, "admin");
    len = 5;
    zt_expect_errno(zlink_getsockopt(s, ZLINK_PLAIN_USERNAME, got, &len),
                    EINVAL);
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_PLAIN_USERNAME, NULL, 0), 0);
    ck_assert_int_eq(zt_get_int(s, ZLINK_MECHANISM), ZLINK_NULL);
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_PLAIN_PASSWORD, "pw", 2), 0);
    ck_assert_int_eq(zt_get_int(s, ZLINK_MECHANISM), ZLINK_PLAIN);
    uint8_t big[256] = {1};
    zt_expect_errno(zlink_setsockopt(s, ZLINK_PLAIN_PASSWORD, big, 256),
                    EINVAL);
    zt_expect_errno(zlink_setsockopt(s, ZLINK_PLAIN_PASSWORD, "", 0), EINVAL);
    int on = 1, off = 0, two = 2;
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_PLAIN_SERVER, &on, sizeof on),
                     0);
    ck_assert_int_eq(zt_get_int(s, ZLINK_MECHANISM), ZLINK_PLAIN);
    ck_assert_int_eq(zt_get_int(s, ZLINK_PLAIN_SERVER), 1);
    /* A credential makes it a client again. */
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_PLAIN_USERNAME, "u", 1), 0);
    ck_assert_int_eq(zt_get_int(s, ZLINK_PLAIN_SERVER), 0);
    zt_expect_errno(zlink_setsockopt(s, ZLINK_PLAIN_SERVER, &two, sizeof two),
                    EINVAL);
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_PLAIN_SERVER, &off, sizeof off),
                     0);
    ck_assert_int_eq(zt_get_int(s, ZLINK_MECHANISM), ZLINK_NULL);
    ck_assert_int_eq(zt_get_int(s, ZLINK_PLAIN_SERVER), 0);
    /* The domain a server names in its ZAP requests. */
    len = sizeof got;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_ZAP_DOMAIN, got, &len), 0);
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_ZAP_DOMAIN, "global", 6), 0);
    len = sizeof got;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_ZAP_DOMAIN, got, &len), 0);
    ck_assert_str_eq(got, "global");
    zt_expect_errno(zlink_setsockopt(s, ZLINK_ZAP_DOMAIN, big, 256), EINVAL);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* Unknown options, read-only ones, write-only ones, other types' ones. */
START_TEST(unknown_and_read_only)
{
    void *ctx = zt_ctx();
    void *s = zlink_socket(ctx, types[_i]);
    int v = 1;
    size_t len = sizeof v;
    zt_expect_errno(zlink_setsockopt(s, 9999, &v, sizeof v), EINVAL);
    zt_expect_errno(zlink_getsockopt(s, 9999, &v, &len), EINVAL);
    zt_expect_errno(zlink_setsockopt(s, -1, &v, sizeof v), EINVAL);
    static const int read_only[] = {
        ZLINK_TYPE,          ZLINK_RCVMORE,   ZLINK_EVENTS,     ZLINK_FD,
        ZLINK_LAST_ENDPOINT, ZLINK_MECHANISM, ZLINK_THREAD_SAFE};
    for (size_t i = 0; i < sizeof read_only / sizeof read_only[0]; i++)
        zt_expect_errno(zlink_setsockopt(s, read_only[i], &v, sizeof v),
                        EINVAL);
    ck_assert_int_eq(zt_get_int(s, ZLINK_TYPE), types[_i]);
    /* As libzmq's: the NULL mechanism until a PLAIN credential is set
     * (zlink's TLS is under ZMTP), and no socket type zlink has is
     * thread-safe. */
    ck_assert_int_eq(zt_get_int(s, ZLINK_MECHANISM), ZLINK_NULL);
    ck_assert_int_eq(zt_get_int(s, ZLINK_THREAD_SAFE), 0);
    /* Subscriptions belong to SUB and XSUB. */
    zt_expect_errno(zlink_setsockopt(s, ZLINK_SUBSCRIBE, "a", 1), EINVAL);
    zt_expect_errno(zlink_setsockopt(s, ZLINK_UNSUBSCRIBE, "a", 1), EINVAL);
    len = sizeof v;
    zt_expect_errno(zlink_getsockopt(s, ZLINK_SUBSCRIBE, &v, &len), EINVAL);
    /* Not a socket. */
    zt_expect_errno(zlink_setsockopt(NULL, ZLINK_LINGER, &v, sizeof v),
                    ENOTSOCK);
    len = sizeof v;
    zt_expect_errno(zlink_getsockopt(ctx, ZLINK_LINGER, &v, &len), ENOTSOCK);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* ---- context options ---- */

START_TEST(context_options)
{
    void *ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_IO_THREADS), 1);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_MAX_SOCKETS), 1023);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_MSG_T_SIZE), 128);
    ck_assert_int_gt(zlink_ctx_get(ctx, ZLINK_SOCKET_LIMIT), 0);
    zt_expect_errno(zlink_ctx_get(ctx, 9999), EINVAL);
    zt_expect_errno(zlink_ctx_set(ctx, 9999, 1), EINVAL);
    zt_expect_errno(zlink_ctx_set(ctx, ZLINK_IO_THREADS, -1), EINVAL);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 3), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_IO_THREADS), 3);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_MAX_SOCKETS, 3), 0);
    void *s[3];
    for (int i = 0; i < 3; i++) {
        s[i] = zlink_socket(ctx, ZLINK_DEALER);
        ck_assert_ptr_nonnull(s[i]);
        zt_set_int(s[i], ZLINK_LINGER, 0);
        zt_set_int(s[i], ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
    }
    ck_assert_ptr_null(zlink_socket(ctx, ZLINK_DEALER));
    ck_assert_int_eq(zlink_errno(), EMFILE);
    /* Three I/O threads carry traffic as one does. */
    char ep[300];
    zt_bind_tcp(s[0], ep, sizeof ep);
    zt_connect(s[1], ep);
    zt_connect(s[2], ep);
    zt_send_str(s[1], "one", 0);
    zt_send_str(s[2], "two", 0);
    char a[8], b[8];
    ck_assert_int_eq(zt_recv_buf(s[0], a, sizeof a, 0), 3);
    ck_assert_int_eq(zt_recv_buf(s[0], b, sizeof b, 0), 3);
    ck_assert((strcmp(a, "one") == 0 && strcmp(b, "two") == 0) ||
              (strcmp(a, "two") == 0 && strcmp(b, "one") == 0));
    for (int i = 0; i < 3; i++)
        zt_close(s[i]);
    zt_term(ctx);
    zt_expect_errno(zlink_ctx_get(NULL, ZLINK_IO_THREADS), EFAULT);
    zt_expect_errno(zlink_ctx_set(NULL, ZLINK_IO_THREADS, 1), EFAULT);
}
END_TEST

START_TEST(bad_socket_type)
{
    void *ctx = zt_ctx();
    ck_assert_ptr_null(zlink_socket(ctx, 99));
    ck_assert_int_eq(zlink_errno(), EINVAL);
    ck_assert_ptr_null(zlink_socket(ctx, -1));
    ck_assert_int_eq(zlink_errno(), EINVAL);
    ck_assert_ptr_null(zlink_socket(NULL, ZLINK_PAIR));
    ck_assert_int_eq(zlink_errno(), EFAULT);
    zt_term(ctx);
}
END_TEST

/* ---- LAST_ENDPOINT ---- */

static int port_of(const char *endpoint)
{
    const char *colon = strrchr(endpoint, ':');
    ck_assert_ptr_nonnull(colon);
    char *end;
    long port = strtol(colon + 1, &end, 10);
    ck_assert(*end == '\0');
    return (int)port;
}

START_TEST(last_endpoint_tcp_wildcard)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    zt_bind(s, "tcp://127.0.0.1:*");
    zt_last_endpoint(s, ep, sizeof ep);
    ck_assert_int_eq(strncmp(ep, "tcp://127.0.0.1:", 16), 0);
    int port = port_of(ep);
    ck_assert(port > 0 && port <= 65535);
    void *peer = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(peer, ep);
    zt_send_str(peer, "via last endpoint", 0);
    zt_recv_str(s, "via last endpoint");
    /* After a connect, the connect's endpoint. */
    zt_last_endpoint(peer, ep, sizeof ep);
    ck_assert_int_eq(port_of(ep), port);
    /* The any-address wildcard, and the buffer that is one too small. */
    void *any = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(any, "tcp://*:*");
    zt_last_endpoint(any, ep, sizeof ep);
    ck_assert_int_eq(strncmp(ep, "tcp://0.0.0.0:", 14), 0);
    ck_assert_int_gt(port_of(ep), 0);
    char small[8];
    size_t len = sizeof small;
    zt_expect_errno(zlink_getsockopt(any, ZLINK_LAST_ENDPOINT, small, &len),
                    EINVAL);
    /* A name resolves to its address. */
    void *named = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(named, "tcp://localhost:*");
    zt_last_endpoint(named, ep, sizeof ep);
    ck_assert_msg(strncmp(ep, "tcp://127.0.0.1:", 16) == 0 ||
                      strncmp(ep, "tcp://[::1]:", 12) == 0,
                  "localhost bound as %s", ep);
    zt_close(named);
    zt_close(any);
    zt_close(peer);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(last_endpoint_tcp6)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    /* As libzmq: without ZLINK_IPV6 a socket binds IPv4 only, literals
     * too. */
    zt_expect_errno(zlink_bind(s, "tcp://[::1]:*"), ENODEV);
    zt_set_int(s, ZLINK_IPV6, 1);
    if (zlink_bind(s, "tcp://[::1]:*") == 0) {
        char ep[300];
        zt_last_endpoint(s, ep, sizeof ep);
        ck_assert_int_eq(strncmp(ep, "tcp://[::1]:", 12), 0);
        ck_assert_int_gt(port_of(ep), 0);
        /* A connect to an IPv6 literal needs no ZLINK_IPV6: the endpoint
         * names the family (libzmq accepts it, and never connects). */
        void *v4 = zt_socket(ctx, ZLINK_PAIR);
        zt_connect(v4, ep);
        zt_send_str(v4, "over ::1", 0);
        zt_recv_str(s, "over ::1");
        zt_close(v4);
    }
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(last_endpoint_ipc_wildcard)
{
    if (!zt_have_ipc())
        return;
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(s, "ipc://*");
    char ep[300];
    zt_last_endpoint(s, ep, sizeof ep);
    ck_assert_int_eq(strncmp(ep, "ipc://", 6), 0);
    ck_assert_str_ne(ep, "ipc://*");
    struct stat st;
    ck_assert_msg(stat(ep + 6, &st) == 0, "no socket file at %s", ep + 6);
    void *peer = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(peer, ep);
    zt_send_str(peer, "ipc", 0);
    zt_recv_str(s, "ipc");
    /* Two wildcard binds get two paths. */
    void *other = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(other, "ipc://*");
    char ep2[300];
    zt_last_endpoint(other, ep2, sizeof ep2);
    ck_assert_str_ne(ep, ep2);
    zt_close(other);
    zt_close(peer);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(last_endpoint_ipc_named)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    char ep[300], got[300];
#ifdef __linux__
    ck_assert(zt_endpoint(ZT_IPC_ABSTRACT, ep, sizeof ep));
    zt_bind(s, ep);
    zt_last_endpoint(s, got, sizeof got);
    ck_assert_str_eq(got, ep);
#endif
    if (zt_have_ipc()) {
        ck_assert(zt_endpoint(ZT_IPC, ep, sizeof ep));
        zt_bind(s, ep);
        zt_last_endpoint(s, got, sizeof got);
        ck_assert_str_eq(got, ep);
        /* A path longer than sun_path. */
        char long_ep[400] = "ipc:///tmp/";
        memset(long_ep + 11, 'x', 300);
        long_ep[311] = '\0';
        zt_expect_errno(zlink_bind(s, long_ep), ENAMETOOLONG);
    }
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* ipc runs where the system has AF_UNIX stream sockets (every POSIX
 * system, Windows 10 1803 and later); elsewhere (Wine 8) zlink_has says
 * so and bind and connect fail as libzmq's do for a transport it was
 * built without. */
START_TEST(ipc_only_where_af_unix)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    zl_test_ipc_endpoint(ep, sizeof ep);
    if (zlink_has("ipc")) {
        zt_bind(s, ep);
        void *peer = zt_socket(ctx, ZLINK_PAIR);
        zt_connect(peer, ep);
        zt_send_str(peer, "af_unix", 0);
        zt_recv_str(s, "af_unix");
        zt_close(peer);
    } else {
        fprintf(stderr, "ipc_only_where_af_unix: no AF_UNIX here\n");
        zt_expect_errno(zlink_bind(s, ep), EPROTONOSUPPORT);
        zt_expect_errno(zlink_connect(s, ep), EPROTONOSUPPORT);
        zt_expect_errno(zlink_bind(s, "ipc://*"), EPROTONOSUPPORT);
    }
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(last_endpoint_inproc)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(s, "inproc://named");
    char ep[300];
    zt_last_endpoint(s, ep, sizeof ep);
    ck_assert_str_eq(ep, "inproc://named");
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* ---- endpoint errors ---- */

typedef struct endpoint_case {
    const char *endpoint;
    int bind_errno; /* 0: bind succeeds */
    int connect_errno;
} endpoint_case;

static const endpoint_case bad_endpoints[] = {
    {"", EINVAL, EINVAL},
    {"127.0.0.1:5555", EINVAL, EINVAL},
    {"tcp:/127.0.0.1:5555", EINVAL, EINVAL},
    {"tcp://", EINVAL, EINVAL},
    {"foo://bar", EPROTONOSUPPORT, EPROTONOSUPPORT},
    {"udp://127.0.0.1:5555", EPROTONOSUPPORT, EPROTONOSUPPORT},
    {"tcp://127.0.0.1", EINVAL, EINVAL},
    {"tcp://127.0.0.1:", EINVAL, EINVAL},
    {"tcp://127.0.0.1:abc", EINVAL, EINVAL},
    {"tcp://127.0.0.1:99999", EINVAL, EINVAL},
    {"tcp://127.0.0.1:-1", EINVAL, EINVAL},
    {"tcp://127.0.0.1:*", 0, EINVAL},
    {"tcp://*:*", 0, EINVAL},
    {"inproc://", EINVAL, EINVAL},
    {"ipc://", EINVAL, EINVAL},
};

START_TEST(bad_endpoints_rejected)
{
    const endpoint_case *c = &bad_endpoints[_i];
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    int rc = zlink_bind(s, c->endpoint);
    if (c->bind_errno == 0)
        ck_assert_msg(rc == 0, "bind %s: %s", c->endpoint,
                      zlink_strerror(zlink_errno()));
    else
        ck_assert_msg(rc == -1 && zlink_errno() == c->bind_errno,
                      "bind '%s': %d/%s, expected %s", c->endpoint, rc,
                      zlink_strerror(zlink_errno()),
                      zlink_strerror(c->bind_errno));
    rc = zlink_connect(s, c->endpoint);
    ck_assert_msg(rc == -1 && zlink_errno() == c->connect_errno,
                  "connect '%s': %d/%s, expected %s", c->endpoint, rc,
                  zlink_strerror(zlink_errno()),
                  zlink_strerror(c->connect_errno));
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(null_endpoints)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    zt_expect_errno(zlink_bind(s, NULL), EINVAL);
    zt_expect_errno(zlink_connect(s, NULL), EINVAL);
    zt_expect_errno(zlink_unbind(s, NULL), EINVAL);
    zt_expect_errno(zlink_disconnect(s, NULL), EINVAL);
    zt_expect_errno(zlink_bind(NULL, "inproc://x"), ENOTSOCK);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(address_in_use)
{
    void *ctx = zt_ctx();
    void *a = zt_socket(ctx, ZLINK_PAIR);
    void *b = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    zt_bind_tcp(a, ep, sizeof ep);
    zt_expect_errno(zlink_bind(b, ep), EADDRINUSE);
    zt_expect_errno(zlink_bind(a, ep), EADDRINUSE);
    zt_bind(a, "inproc://taken");
    zt_expect_errno(zlink_bind(b, "inproc://taken"), EADDRINUSE);
    zt_expect_errno(zlink_bind(a, "inproc://taken"), EADDRINUSE);
#ifdef __linux__
    char abstract[64];
    snprintf(abstract, sizeof abstract, "ipc://@zlink-inuse-%d",
             (int)uv_os_getpid());
    zt_bind(a, abstract);
    zt_expect_errno(zlink_bind(b, abstract), EADDRINUSE);
#endif
    /* The failed binds left nothing behind: b still binds elsewhere. */
    zt_bind(b, "tcp://127.0.0.1:*");
    zt_close(a);
    zt_close(b);
    zt_term(ctx);
}
END_TEST

/* ---- unbind and disconnect by endpoint ---- */

START_TEST(unbind_by_resolved_endpoint)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    zt_bind(s, "tcp://127.0.0.1:*");
    zt_last_endpoint(s, ep, sizeof ep);
    /* libzmq: a wildcard bind is unbound by what it resolved to only. */
    zt_expect_errno(zlink_unbind(s, "tcp://127.0.0.1:*"), ENOENT);
    ck_assert_int_eq(zlink_unbind(s, ep), 0);
    zt_expect_errno(zlink_unbind(s, ep), ENOENT);
    if (zt_have_ipc()) {
        zt_bind(s, "ipc://*");
        zt_last_endpoint(s, ep, sizeof ep);
        zt_expect_errno(zlink_unbind(s, "ipc://*"), ENOENT);
        ck_assert_int_eq(zlink_unbind(s, ep), 0);
        /* The socket file goes with the listener (asynchronously). */
        struct stat st;
        uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
        while (stat(ep + 6, &st) == 0) {
            ck_assert(zl_test_now_ms() < deadline);
            zl_test_sleep_ms(5);
        }
    }
    /* A name is unbound by the name or by its address. */
    zt_bind(s, "tcp://localhost:*");
    zt_last_endpoint(s, ep, sizeof ep);
    ck_assert_int_eq(zlink_unbind(s, ep), 0);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* libzmq resolves a tcp endpoint that names nothing as given: another
 * spelling of the same address ends it. */
START_TEST(unbind_and_disconnect_by_another_spelling)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_DEALER);
    char ep[300], other[300];
    zt_bind(s, "tcp://127.0.0.1:*");
    zt_last_endpoint(s, ep, sizeof ep);
    const char *port = strrchr(ep, ':') + 1;
    snprintf(other, sizeof other, "tcp://localhost:%s", port);
    ck_assert_int_eq(zlink_unbind(s, other), 0);
    zt_expect_errno(zlink_unbind(s, ep), ENOENT);

    zt_connect(s, "tcp://127.0.0.1:1");
    ck_assert_int_eq(zlink_disconnect(s, "tcp://localhost:1"), 0);
    zt_expect_errno(zlink_disconnect(s, "tcp://127.0.0.1:1"), ENOENT);
    /* A name that resolves to no endpoint of the socket is still ENOENT. */
    zt_connect(s, "tcp://127.0.0.1:2");
    zt_expect_errno(zlink_disconnect(s, "tcp://localhost:3"), ENOENT);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(unbind_disconnect_errors)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_DEALER);
    char ep[300];
    zt_bind_tcp(s, ep, sizeof ep);
    zt_connect(s, "tcp://127.0.0.1:1");
    zt_bind(s, "inproc://unbind-me");
    /* Each by the wrong call. */
    zt_expect_errno(zlink_disconnect(s, ep), ENOENT);
    zt_expect_errno(zlink_unbind(s, "tcp://127.0.0.1:1"), ENOENT);
    zt_expect_errno(zlink_disconnect(s, "inproc://unbind-me"), ENOENT);
    /* Never seen. */
    zt_expect_errno(zlink_unbind(s, "tcp://127.0.0.1:2"), ENOENT);
    zt_expect_errno(zlink_disconnect(s, "tcp://127.0.0.1:2"), ENOENT);
    zt_expect_errno(zlink_unbind(s, "inproc://never"), ENOENT);
    zt_expect_errno(zlink_disconnect(s, "inproc://never"), ENOENT);
    /* Malformed. */
    zt_expect_errno(zlink_unbind(s, "garbage"), EINVAL);
    zt_expect_errno(zlink_disconnect(s, "foo://bar"), EPROTONOSUPPORT);
    /* And the right calls. */
    ck_assert_int_eq(zlink_unbind(s, ep), 0);
    ck_assert_int_eq(zlink_disconnect(s, "tcp://127.0.0.1:1"), 0);
    ck_assert_int_eq(zlink_unbind(s, "inproc://unbind-me"), 0);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* ---- options at work ---- */

START_TEST(rcvtimeo_honoured)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(s, "inproc://alone");
    char buf[4];
    zt_set_int(s, ZLINK_RCVTIMEO, 0);
    zt_expect_errno(zlink_recv(s, buf, sizeof buf, 0), EAGAIN);
    zt_set_int(s, ZLINK_RCVTIMEO, 100);
    uint64_t start = zl_test_now_ms();
    zt_expect_errno(zlink_recv(s, buf, sizeof buf, 0), EAGAIN);
    uint64_t took = zl_test_now_ms() - start;
    ck_assert_uint_ge(took, 90);
    ck_assert_uint_lt(took, ZT_TIMEOUT_MS);
    /* DONTWAIT wins over the timeout. */
    start = zl_test_now_ms();
    zt_expect_errno(zlink_recv(s, buf, sizeof buf, ZLINK_DONTWAIT), EAGAIN);
    ck_assert_uint_lt(zl_test_now_ms() - start, 90);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* A message over the receiver's MAXMSGSIZE ends that connection; it is
 * never delivered. */
START_TEST(maxmsgsize_drops_connection)
{
    void *ctx = zt_ctx();
    void *receiver = zt_socket(ctx, ZLINK_DEALER);
    void *sender = zt_socket(ctx, ZLINK_DEALER);
    int64_t max = 100;
    ck_assert_int_eq(
        zlink_setsockopt(receiver, ZLINK_MAXMSGSIZE, &max, sizeof max), 0);
    char ep[300];
    if (zt_join(receiver, sender, _i == 0 ? ZT_TCP4 : ZT_IPC, ep, sizeof ep)) {
        zt_send_part(sender, 100, 1, 0);
        zt_recv_part(receiver, 100, 1, false);
        zt_send_part(sender, 101, 2, 0);
        zt_send_part(sender, 10, 3, 0);
        /* Neither the big one nor what followed it on that connection. */
        char buf[200];
        zt_set_int(receiver, ZLINK_RCVTIMEO, 300);
        int rc = zlink_recv(receiver, buf, sizeof buf, 0);
        ck_assert_msg(rc != 101, "oversized message delivered");
        /* The sender reconnects and traffic goes on. */
        ck_assert(zt_ping_until(sender, receiver, "small", ZT_TIMEOUT_MS));
    }
    zt_close(sender);
    zt_close(receiver);
    zt_term(ctx);
}
END_TEST

#ifndef _WIN32
/* A peer that connects and never sends its greeting is dropped after
 * HANDSHAKE_IVL. */
START_TEST(handshake_ivl_drops_silent_peer)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    zt_set_int(s, ZLINK_HANDSHAKE_IVL, 200);
    char ep[300];
    zt_bind_tcp(s, ep, sizeof ep);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)port_of(ep))};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    struct timeval tv = {.tv_sec = ZT_TIMEOUT_MS / 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    /* Our greeting comes first, then the close. */
    uint8_t buf[256];
    size_t total = 0;
    uint64_t start = zl_test_now_ms();
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            break;
        total += (size_t)n;
    }
    uint64_t took = zl_test_now_ms() - start;
    ck_assert_uint_ge(total, 10); /* at least the signature */
    ck_assert_uint_ge(took, 150);
    ck_assert_uint_lt(took, ZT_TIMEOUT_MS - 500);
    close(fd);
    zt_close(s);
    zt_term(ctx);
}
END_TEST
#endif

#ifdef __linux__
#include <sys/un.h>

/* The SO_SNDBUF of each connected AF_UNIX stream socket of this process
 * whose own or peer address is path. */
static int unix_sndbufs_at(const char *path, int *out, int cap)
{
    int found = 0;
    for (int fd = 3; fd < 1024 && found < cap; fd++) {
        struct sockaddr_un own = {0}, peer = {0};
        socklen_t own_len = sizeof own, peer_len = sizeof peer;
        if (getsockname(fd, (struct sockaddr *)&own, &own_len) != 0 ||
            own.sun_family != AF_UNIX)
            continue;
        int type = 0, listening = 1;
        socklen_t len = sizeof type;
        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len);
        len = sizeof listening;
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len);
        if (type != SOCK_STREAM || listening)
            continue;
        getpeername(fd, (struct sockaddr *)&peer, &peer_len);
        if (strcmp(own.sun_path, path) != 0 && strcmp(peer.sun_path, path) != 0)
            continue;
        len = sizeof out[found];
        ck_assert_int_eq(
            getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &out[found], &len), 0);
        found++;
    }
    return found;
}

/* What Linux reports for SO_SNDBUF after a request of `asked` bytes: twice
 * that, capped at twice net.core.wmem_max. */
static int reported_sndbuf(int asked)
{
    int wmem_max = asked;
    FILE *f = fopen("/proc/sys/net/core/wmem_max", "r");
    if (f) {
        if (fscanf(f, "%d", &wmem_max) != 1)
            wmem_max = asked;
        fclose(f);
    }
    return 2 * (asked < wmem_max ? asked : wmem_max);
}

/* Both ends of an ipc connection ask for a 512 KiB send buffer while
 * SNDBUF is at its default (AF_UNIX's own is smaller than one 256 KiB
 * message), and take the user's SNDBUF when it is set. */
START_TEST(ipc_send_buffer_size)
{
    const int user_sndbuf = 100000;
    void *ctx = zt_ctx();
    void *a = zt_socket(ctx, ZLINK_PAIR);
    void *b = zt_socket(ctx, ZLINK_PAIR);
    if (_i == 1) {
        zt_set_int(a, ZLINK_SNDBUF, user_sndbuf);
        zt_set_int(b, ZLINK_SNDBUF, user_sndbuf);
    }
    char ep[300];
    zt_endpoint(ZT_IPC, ep, sizeof ep);
    zt_bind(a, ep);
    zt_connect(b, ep);
    ck_assert(zt_ping_until(b, a, "ping", ZT_TIMEOUT_MS));
    ck_assert(zt_ping_until(a, b, "pong", ZT_TIMEOUT_MS));
    int sndbufs[4];
    ck_assert_int_eq(unix_sndbufs_at(ep + strlen("ipc://"), sndbufs, 4), 2);
    int expected = reported_sndbuf(_i == 1 ? user_sndbuf : 512 * 1024);
    ck_assert_int_eq(sndbufs[0], expected);
    ck_assert_int_eq(sndbufs[1], expected);
    zt_close(a);
    zt_close(b);
    zt_term(ctx);
}
END_TEST
#endif

static Suite *options_suite(void)
{
    Suite *s = suite_create("socket_options");
    TCase *opts = tcase_create("options");
    tcase_add_loop_test(opts, defaults, 0, TYPE_COUNT);
    tcase_add_loop_test(opts, int_options_set_get, 0, TYPE_COUNT);
    tcase_add_test(opts, maxmsgsize_option);
    tcase_add_loop_test(opts, routing_id_option, 0, TYPE_COUNT);
    tcase_add_test(opts, router_only_options);
    tcase_add_loop_test(opts, plain_options, 0, TYPE_COUNT);
    tcase_add_loop_test(opts, unknown_and_read_only, 0, TYPE_COUNT);
    tcase_add_test(opts, context_options);
    tcase_add_test(opts, bad_socket_type);
    suite_add_tcase(s, opts);

    TCase *eps = tcase_create("endpoints");
    tcase_add_test(eps, last_endpoint_tcp_wildcard);
    tcase_add_test(eps, last_endpoint_tcp6);
    tcase_add_test(eps, last_endpoint_ipc_wildcard);
    tcase_add_test(eps, last_endpoint_ipc_named);
    tcase_add_test(eps, last_endpoint_inproc);
    tcase_add_test(eps, ipc_only_where_af_unix);
    tcase_add_loop_test(eps, bad_endpoints_rejected, 0,
                        sizeof bad_endpoints / sizeof bad_endpoints[0]);
    tcase_add_test(eps, null_endpoints);
    tcase_add_test(eps, address_in_use);
    tcase_add_test(eps, unbind_by_resolved_endpoint);
    tcase_add_test(eps, unbind_and_disconnect_by_another_spelling);
    tcase_add_test(eps, unbind_disconnect_errors);
    suite_add_tcase(s, eps);

    TCase *work = tcase_create("at_work");
    tcase_set_timeout(work, 30);
    tcase_add_test(work, rcvtimeo_honoured);
    tcase_add_loop_test(work, maxmsgsize_drops_connection, 0, 2);
#ifndef _WIN32
    tcase_add_test(work, handshake_ivl_drops_silent_peer);
#endif
#ifdef __linux__
    tcase_add_loop_test(work, ipc_send_buffer_size, 0, 2);
#endif
    suite_add_tcase(s, work);
    return s;
}

int main(void)
{
    return zl_test_run(options_suite());
}
