/* test_ws.c — ws:// (ZWS 2.0): every socket pair over it, large and
 * multipart messages, paths shared on one port, 404 and origins, plain
 * ZWS2.0 against a hand-written client, and hostile bytes, each of which
 * must close its own connection and touch nothing else. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raw_socket.h"
#include "socket_testutil.h"
#include "transport/ws_http.h"

/* ---- a raw WebSocket peer ---- */

static int port_of(const char *endpoint)
{
    const char *colon = strrchr(endpoint, ':');
    ck_assert_ptr_nonnull(colon);
    return atoi(colon + 1);
}

static void *bind_ws(void *s, const char *path, char *ep, size_t cap)
{
    char request[128];
    snprintf(request, sizeof request, "ws://127.0.0.1:*%s", path);
    zt_bind(s, request);
    zt_last_endpoint(s, ep, cap);
    return s;
}

/* Sends an upgrade request with the given extra header lines. */
static void send_upgrade(raw_fd fd, const char *path, const char *protocol,
                         const char *extra)
{
    char req[2048];
    snprintf(req, sizeof req,
             "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
             "Connection: keep-alive, Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
             "Sec-WebSocket-Version: 13\r\n"
             "Sec-WebSocket-Protocol: %s\r\n"
             "Sec-WebSocket-Extensions: permessage-deflate\r\n%s\r\n",
             path, protocol, extra ? extra : "");
    raw_send(fd, req, strlen(req));
}

/* Reads the HTTP answer's header block into buf; its status code. */
static int read_answer(raw_fd fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap) {
        if (!raw_recv_exact(fd, buf + n, 1, ZT_TIMEOUT_MS))
            break;
        n++;
        buf[n] = '\0';
        if (n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0)
            break;
    }
    buf[n] = '\0';
    int status = 0;
    if (sscanf(buf, "HTTP/1.1 %d", &status) != 1)
        return -1;
    return status;
}

static raw_fd raw_upgrade(int port, const char *path, const char *protocol)
{
    raw_fd fd = raw_connect(port);
    send_upgrade(fd, path, protocol, NULL);
    char answer[1024];
    ck_assert_int_eq(read_answer(fd, answer, sizeof answer), 101);
    ck_assert_ptr_nonnull(strstr(answer, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    ck_assert_ptr_null(strstr(answer, "Extensions")); /* deflate declined */
    return fd;
}

/* One frame as a client sends it (masked), or unmasked when mask is 0. */
static size_t ws_frame(uint8_t *out, bool fin, int opcode, const void *data,
                       uint64_t len, uint64_t claimed, bool mask)
{
    size_t n = 0;
    out[n++] = (uint8_t)((fin ? 0x80 : 0) | opcode);
    uint8_t m = mask ? 0x80 : 0;
    if (claimed < 126) {
        out[n++] = (uint8_t)(m | claimed);
    } else if (claimed <= 0xffff) {
        out[n++] = m | 126;
        out[n++] = (uint8_t)(claimed >> 8);
        out[n++] = (uint8_t)claimed;
    } else {
        out[n++] = m | 127;
        for (int i = 7; i >= 0; i--)
            out[n++] = (uint8_t)(claimed >> (8 * i));
    }
    static const uint8_t key[4] = {0x12, 0x34, 0x56, 0x78};
    if (mask) {
        memcpy(out + n, key, 4);
        n += 4;
    }
    const uint8_t *p = data;
    for (uint64_t i = 0; i < len; i++)
        out[n++] = mask ? p[i] ^ key[i & 3] : p[i];
    return n;
}

/* Sends one ZWS message: flags byte then body, in one masked frame. */
static void raw_send_msg(raw_fd fd, uint8_t flags, const void *body, size_t len)
{
    uint8_t payload[512], frame[600];
    ck_assert_uint_lt(len, sizeof payload);
    payload[0] = flags;
    memcpy(payload + 1, body, len);
    size_t n = ws_frame(frame, true, 2, payload, len + 1, len + 1, true);
    raw_send(fd, frame, n);
}

/* Reads one unmasked binary frame from the server; its payload. */
static size_t raw_recv_msg(raw_fd fd, uint8_t *out, size_t cap)
{
    uint8_t h[10];
    ck_assert(raw_recv_exact(fd, h, 2, ZT_TIMEOUT_MS));
    ck_assert_int_eq(h[0], 0x82);
    ck_assert_int_eq(h[1] & 0x80, 0); /* a server never masks */
    uint64_t len = h[1] & 0x7f;
    if (len == 126) {
        ck_assert(raw_recv_exact(fd, h, 2, ZT_TIMEOUT_MS));
        len = (uint64_t)h[0] << 8 | h[1];
    } else if (len == 127) {
        ck_assert(raw_recv_exact(fd, h, 8, ZT_TIMEOUT_MS));
        len = 0;
        for (int i = 0; i < 8; i++)
            len = len << 8 | h[i];
    }
    ck_assert_uint_le(len, cap);
    ck_assert(raw_recv_exact(fd, out, (size_t)len, ZT_TIMEOUT_MS));
    return (size_t)len;
}

/* ---- every socket pair ---- */

typedef struct pair_case {
    int binder, connecter;
} pair_case;

static const pair_case pairs[] = {
    {ZLINK_PAIR, ZLINK_PAIR},     {ZLINK_PUB, ZLINK_SUB},
    {ZLINK_SUB, ZLINK_PUB},       {ZLINK_XPUB, ZLINK_XSUB},
    {ZLINK_XSUB, ZLINK_XPUB},     {ZLINK_PUB, ZLINK_XSUB},
    {ZLINK_DEALER, ZLINK_DEALER}, {ZLINK_ROUTER, ZLINK_DEALER},
    {ZLINK_DEALER, ZLINK_ROUTER}, {ZLINK_ROUTER, ZLINK_ROUTER},
};

static bool is_pub(int t)
{
    return t == ZLINK_PUB || t == ZLINK_XPUB;
}

/* Sends from `from` a multipart message `to` must receive, with what each
 * pattern needs around it (routing ids, subscriptions). */
START_TEST(every_pair)
{
    const pair_case *pc = &pairs[_i];
    void *ctx = zt_ctx();
    void *b = zt_socket(ctx, pc->binder);
    void *c = zt_socket(ctx, pc->connecter);
    if (pc->connecter == ZLINK_ROUTER || pc->binder == ZLINK_ROUTER) {
        zlink_setsockopt(b, ZLINK_ROUTING_ID, "B", 1);
        zlink_setsockopt(c, ZLINK_ROUTING_ID, "C", 1);
    }
    char ep[256];
    bind_ws(b, "/pairs", ep, sizeof ep);
    zt_connect(c, ep);
    void *pub = is_pub(pc->binder) ? b : is_pub(pc->connecter) ? c : NULL;
    void *sub = pub == b ? c : pub == c ? b : NULL;
    if (sub) {
        if (zt_get_int(sub, ZLINK_TYPE) == ZLINK_SUB)
            zlink_setsockopt(sub, ZLINK_SUBSCRIBE, "T", 1);
        else
            zt_send_str(sub, "\x01T", 0);
        /* Until the subscription is there, what PUB sends is dropped. */
        ck_assert(zt_ping_until(pub, sub, "T-ping", ZT_TIMEOUT_MS));
        zt_send_str(pub, "U-unsubscribed", 0);
        zt_send_str(pub, "T", ZLINK_SNDMORE);
        zt_send_part(pub, 65536, 3, ZLINK_SNDMORE);
        zt_send_part(pub, 1024 * 1024, 4, 0);
        zt_recv_str(sub, "T");
        zt_recv_part(sub, 65536, 3, true);
        zt_recv_part(sub, 1024 * 1024, 4, false);
    } else {
        void *from = c, *to = b;
        if (pc->connecter == ZLINK_ROUTER) {
            /* A ROUTER sends only to a peer it knows: wait for it. */
            uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
            zt_set_int(c, ZLINK_ROUTER_MANDATORY, 1);
            while (zlink_send(c, "B", 1, ZLINK_SNDMORE | ZLINK_DONTWAIT) < 0 &&
                   zl_test_now_ms() < deadline)
                zl_test_sleep_ms(10);
        }
        zt_send_part(from, 5, 1, ZLINK_SNDMORE);
        zt_send_part(from, 65536, 2, ZLINK_SNDMORE);
        zt_send_part(from, 1024 * 1024, 3, 0);
        if (pc->binder == ZLINK_ROUTER) {
            char id[16];
            int n = zt_recv_buf(to, id, sizeof id, 0);
            ck_assert_int_eq(n, 1);
            ck_assert_str_eq(id, "C");
        }
        zt_recv_part(to, 5, 1, true);
        zt_recv_part(to, 65536, 2, true);
        zt_recv_part(to, 1024 * 1024, 3, false);
    }
    zt_close(c);
    zt_close(b);
    zt_term(ctx);
}
END_TEST

/* Every size of the shared list, both ways, on one PAIR connection. */
START_TEST(pair_sizes)
{
    void *ctx = zt_ctx();
    void *a = zt_socket(ctx, ZLINK_PAIR);
    void *b = zt_socket(ctx, ZLINK_PAIR);
    char ep[256];
    bind_ws(a, "", ep, sizeof ep);
    ck_assert_ptr_nonnull(strstr(ep, "ws://127.0.0.1:"));
    ck_assert(ep[strlen(ep) - 1] == '/'); /* the path defaults to / */
    zt_connect(b, ep);
    size_t count;
    const size_t *sizes = zt_sizes(&count);
    for (size_t i = 0; i < count; i++) {
        zt_send_part(b, sizes[i], (unsigned)i, 0);
        zt_recv_part(a, sizes[i], (unsigned)i, false);
        zt_send_part(a, sizes[i], (unsigned)i + 100, 0);
        zt_recv_part(b, sizes[i], (unsigned)i + 100, false);
    }
    zt_close(a);
    zt_close(b);
    zt_term(ctx);
}
END_TEST

START_TEST(has_ws)
{
    ck_assert_int_eq(zlink_has("ws"), 1);
}
END_TEST

/* ---- paths ---- */

START_TEST(paths_share_a_port)
{
    void *ctx = zt_ctx();
    void *one = zt_socket(ctx, ZLINK_PAIR);
    void *two = zt_socket(ctx, ZLINK_PAIR);
    char ep1[256], ep2[256];
    bind_ws(one, "/one", ep1, sizeof ep1);
    int port = port_of(ep1);
    snprintf(ep2, sizeof ep2, "ws://127.0.0.1:%d/two", port);
    zt_bind(two, ep2);
    /* The same path twice on one port is refused. */
    void *dup = zt_socket(ctx, ZLINK_PAIR);
    zt_expect_errno(zlink_bind(dup, ep2), EADDRINUSE);
    zt_close(dup);

    void *c1 = zt_socket(ctx, ZLINK_PAIR);
    void *c2 = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(c1, ep1);
    zt_connect(c2, ep2);
    zt_send_str(c1, "to-one", 0);
    zt_send_str(c2, "to-two", 0);
    zt_recv_str(one, "to-one");
    zt_recv_str(two, "to-two");

    /* Unknown path: 404 and a close. */
    raw_fd fd = raw_connect(port);
    send_upgrade(fd, "/three", "ZWS2.0", NULL);
    char answer[1024];
    ck_assert_int_eq(read_answer(fd, answer, sizeof answer), 404);
    ck_assert(raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
    raw_close(fd);

    /* Unbinding one path keeps the other. */
    ck_assert_int_eq(zlink_unbind(one, ep1), 0);
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    int status = 0;
    while (status != 404 && zl_test_now_ms() < deadline) {
        fd = raw_connect(port);
        send_upgrade(fd, "/one", "ZWS2.0", NULL);
        status = read_answer(fd, answer, sizeof answer);
        raw_close(fd);
    }
    ck_assert_int_eq(status, 404);
    zt_send_str(c2, "still-two", 0);
    zt_recv_str(two, "still-two");
    void *c3 = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(c3, ep2); /* PAIR two keeps its first peer; this one waits */
    zt_close(c3);
    zt_close(c1);
    zt_close(c2);
    zt_close(one);
    zt_close(two);
    zt_term(ctx);
}
END_TEST

START_TEST(allowed_origins)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    const char *list = "https://good.example, http://localhost:8080";
    ck_assert_int_eq(
        zlink_setsockopt(s, ZLINK_WS_ALLOWED_ORIGINS, list, strlen(list)), 0);
    char got[128];
    size_t len = sizeof got;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_WS_ALLOWED_ORIGINS, got, &len),
                     0);
    ck_assert_str_eq(got, list);
    char ep[256];
    bind_ws(s, "/o", ep, sizeof ep);
    int port = port_of(ep);
    char answer[1024];
    const char *cases[][2] = {
        {"Origin: https://evil.example\r\n", "403"},
        {"", "403"}, /* a list is set: no Origin is refused too */
        {"Origin: https://good.example\r\n", "101"},
        {"Origin: http://localhost:8080\r\n", "101"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        raw_fd fd = raw_connect(port);
        send_upgrade(fd, "/o", "ZWS2.0", cases[i][0]);
        ck_assert_int_eq(read_answer(fd, answer, sizeof answer),
                         atoi(cases[i][1]));
        if (atoi(cases[i][1]) == 403)
            ck_assert(raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
        raw_close(fd);
    }
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* ---- plain ZWS2.0 (what jszmq speaks) ---- */

START_TEST(raw_client_subscribes)
{
    void *ctx = zt_ctx();
    void *pub = zt_socket(ctx, ZLINK_PUB);
    char ep[256];
    bind_ws(pub, "/feed", ep, sizeof ep);
    raw_fd fd = raw_upgrade(port_of(ep), "/feed", "ZWS2.0");
    /* Our routing id (empty), then a subscription message. */
    raw_send_msg(fd, 0, "", 0);
    raw_send_msg(fd, 0,
                 "\x01"
                 "A",
                 2);
    uint8_t buf[512];
    /* The server's first message is its routing id: empty. */
    size_t n = raw_recv_msg(fd, buf, sizeof buf);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(buf[0], 0);
    /* Only topic A may arrive; send until one does. */
    bool got = false;
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (!got && zl_test_now_ms() < deadline) {
        zt_send_str(pub, "B-never", 0);
        zt_send_str(pub, "A-yes", 0);
        got = raw_readable(fd, 20);
    }
    ck_assert(got);
    n = raw_recv_msg(fd, buf, sizeof buf);
    ck_assert_uint_eq(n, 6);
    ck_assert_mem_eq(buf,
                     "\x00"
                     "A-yes",
                     6);
    /* Cancel, and nothing more comes. */
    raw_send_msg(fd, 0,
                 "\x00"
                 "A",
                 2);
    while (raw_readable(fd, 200)) {
        n = raw_recv_msg(fd, buf, sizeof buf);
        ck_assert_mem_eq(buf,
                         "\x00"
                         "A-yes",
                         6);
    }
    zt_send_str(pub, "A-after-cancel", 0);
    ck_assert(!raw_readable(fd, 200));
    raw_close(fd);
    zt_close(pub);
    zt_term(ctx);
}
END_TEST

START_TEST(raw_client_router_echo)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    char ep[256];
    bind_ws(router, "/echo", ep, sizeof ep);
    raw_fd fd = raw_upgrade(port_of(ep), "/echo", "ZWS2.0");
    raw_send_msg(fd, 0, "", 0);
    raw_send_msg(fd, 1, "part1", 5);
    raw_send_msg(fd, 0, "part2", 5);
    /* The ROUTER names the peer itself (it sent an empty id). */
    zlink_msg_t id;
    zlink_msg_init(&id);
    ck_assert_int_gt(zlink_msg_recv(&id, router, 0), 0);
    zt_recv_str(router, "part1");
    zt_recv_str(router, "part2");
    ck_assert_int_ge(zlink_msg_send(&id, router, ZLINK_SNDMORE), 0);
    zt_send_str(router, "echo1", ZLINK_SNDMORE);
    zt_send_str(router, "echo2", 0);
    uint8_t buf[512];
    ck_assert_uint_eq(raw_recv_msg(fd, buf, sizeof buf), 1); /* its id */
    ck_assert_uint_eq(raw_recv_msg(fd, buf, sizeof buf), 6);
    ck_assert_mem_eq(buf,
                     "\x01"
                     "echo1",
                     6);
    ck_assert_uint_eq(raw_recv_msg(fd, buf, sizeof buf), 6);
    ck_assert_mem_eq(buf,
                     "\x00"
                     "echo2",
                     6);
    /* A fragmented message and a ping in between: reassembled, ponged. */
    uint8_t frame[64];
    size_t n = ws_frame(frame, false, 2,
                        "\x00"
                        "fr",
                        3, 3, true);
    raw_send(fd, frame, n);
    n = ws_frame(frame, true, 9, "pp", 2, 2, true);
    raw_send(fd, frame, n);
    n = ws_frame(frame, true, 0, "ag", 2, 2, true);
    raw_send(fd, frame, n);
    uint8_t h[4];
    ck_assert(raw_recv_exact(fd, h, 4, ZT_TIMEOUT_MS));
    ck_assert_mem_eq(h, "\x8a\x02pp", 4);
    zlink_msg_t part;
    zlink_msg_init(&part);
    ck_assert_int_gt(zlink_msg_recv(&part, router, 0), 0); /* the id */
    zlink_msg_close(&part);
    zt_recv_str(router, "frag");
    zlink_msg_close(&id);
    raw_close(fd);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* ---- hostile input ---- */

/* A server with a healthy client beside the hostile one: after each case
 * the healthy one must still talk. */
typedef struct arena {
    void *ctx, *server, *client;
    char ep[256];
    int port;
} arena;

static void arena_open(arena *a, int handshake_ivl)
{
    a->ctx = zt_ctx();
    a->server = zt_socket(a->ctx, ZLINK_ROUTER);
    if (handshake_ivl)
        zt_set_int(a->server, ZLINK_HANDSHAKE_IVL, handshake_ivl);
    bind_ws(a->server, "/h", a->ep, sizeof a->ep);
    a->port = port_of(a->ep);
    a->client = zt_socket(a->ctx, ZLINK_DEALER);
    zt_connect(a->client, a->ep);
}

static void arena_check_and_close(arena *a)
{
    zt_send_str(a->client, "alive", 0);
    zlink_msg_t id;
    zlink_msg_init(&id);
    ck_assert_int_gt(zlink_msg_recv(&id, a->server, 0), 0);
    zlink_msg_close(&id);
    zt_recv_str(a->server, "alive");
    zt_close(a->client);
    zt_close(a->server);
    zt_term(a->ctx);
}

static void expect_refused(int port, const char *request, int status)
{
    raw_fd fd = raw_connect(port);
    raw_send(fd, request, strlen(request));
    char answer[1024];
    ck_assert_int_eq(read_answer(fd, answer, sizeof answer), status);
    ck_assert(raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
    raw_close(fd);
}

/* The next monitor event: its id and value. */
static void expect_monitor_event(void *mon, int id, uint32_t value)
{
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (zl_test_now_ms() < deadline) {
        uint8_t frame[6];
        char endpoint[256];
        ck_assert_int_eq(zlink_recv(mon, frame, sizeof frame, 0), 6);
        ck_assert_int_ge(zt_recv_buf(mon, endpoint, sizeof endpoint, 0), 0);
        uint16_t got;
        uint32_t got_value;
        memcpy(&got, frame, 2);
        memcpy(&got_value, frame + 2, 4);
        if (got == id) {
            ck_assert_uint_eq(got_value, value);
            return;
        }
    }
    ck_abort_msg("no event 0x%x", id);
}

START_TEST(hostile_upgrades)
{
    arena a;
    arena_open(&a, 0);
    ck_assert_int_eq(
        zlink_socket_monitor(a.server, "inproc://ws-mon-up",
                             ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL),
        0);
    void *mon = zt_socket(a.ctx, ZLINK_PAIR);
    zt_connect(mon, "inproc://ws-mon-up");
    /* Missing key. */
    expect_refused(a.port,
                   "GET /h HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                   "Sec-WebSocket-Protocol: ZWS2.0\r\n\r\n",
                   400);
    /* Before any socket is known, every socket on the port hears of it. */
    expect_monitor_event(mon, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                         ZLINK_PROTOCOL_ERROR_WS_UNSPECIFIED);
    zt_close(mon);
    /* Wrong version: 426, naming ours. */
    expect_refused(a.port,
                   "GET /h HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Version: 8\r\n"
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   "Sec-WebSocket-Protocol: ZWS2.0\r\n\r\n",
                   426);
    /* A key that is not 16 bytes of base64. */
    expect_refused(a.port,
                   "GET /h HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                   "Sec-WebSocket-Key: short\r\n"
                   "Sec-WebSocket-Protocol: ZWS2.0\r\n\r\n",
                   400);
    /* No ZWS subprotocol. */
    expect_refused(a.port,
                   "GET /h HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                   "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                   "Sec-WebSocket-Protocol: chat\r\n\r\n",
                   400);
    /* Not HTTP at all. */
    expect_refused(a.port, "\xff\x01\x02\r\n\r\n", 400);
    /* An oversized header block: refused once 8 KiB pass, never kept. */
    raw_fd fd = raw_connect(a.port);
    static char big[10 * 1024];
    const char *start = "GET /h HTTP/1.1\r\nHost: x\r\n";
    size_t len = strlen(start);
    memcpy(big, start, len);
    for (int i = 0; i < 9; i++) {
        memset(big + len, 'a', 1024);
        memcpy(big + len, "X-Pad: ", 7);
        memcpy(big + len + 1022, "\r\n", 2);
        len += 1024;
    }
    raw_send(fd, big, len); /* one send: the refusal may follow at once */
    char answer[1024];
    ck_assert_int_eq(read_answer(fd, answer, sizeof answer), 400);
    ck_assert(raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
    raw_close(fd);
    arena_check_and_close(&a);
}
END_TEST

START_TEST(slowloris_upgrade)
{
    arena a;
    arena_open(&a, 300);
    raw_fd fd = raw_connect(a.port);
    /* One byte now and then, never finishing: HANDSHAKE_IVL ends it. */
    const char *req = "GET /h HTTP/1.1\r\nHost: x\r\n";
    uint64_t start = zl_test_now_ms();
    bool closed = false;
    for (size_t i = 0; i < strlen(req) && !closed; i++) {
        raw_send(fd, req + i, 1);
        closed = raw_closed_by_peer(fd, 100);
    }
    ck_assert(closed || raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
    ck_assert_uint_lt(zl_test_now_ms() - start, ZT_TIMEOUT_MS);
    raw_close(fd);
    arena_check_and_close(&a);
}
END_TEST

/* HANDSHAKE_IVL counts from the accept, the upgrade included: a peer that
 * upgrades late and then says nothing goes at the interval, not an
 * interval after its upgrade. Either way the monitor says ETIMEDOUT. */
#define IVL_MS 1000

START_TEST(handshake_ivl_spans_the_upgrade)
{
    arena a;
    arena_open(&a, IVL_MS);
    ck_assert_int_eq(
        zlink_socket_monitor(a.server, "inproc://ws-mon-ivl",
                             ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL),
        0);
    void *mon = zt_socket(a.ctx, ZLINK_PAIR);
    zt_connect(mon, "inproc://ws-mon-ivl");
    /* Silent: the upgrade's own timer. */
    raw_fd quiet = raw_connect(a.port);
    expect_monitor_event(mon, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                         ETIMEDOUT);
    ck_assert(raw_closed_by_peer(quiet, ZT_TIMEOUT_MS));
    raw_close(quiet);
    /* Upgraded late, then silent: the engine's timer, with what was left. */
    raw_fd fd = raw_connect(a.port);
    uint64_t start = zl_test_now_ms();
    zl_test_sleep_ms(IVL_MS * 9 / 10);
    send_upgrade(fd, "/h", "ZWS2.0", NULL);
    char answer[1024];
    ck_assert_int_eq(read_answer(fd, answer, sizeof answer), 101);
    ck_assert(raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
    uint64_t took = zl_test_now_ms() - start;
    /* An interval after the upgrade would be 1.9 intervals. */
    ck_assert_msg(took < IVL_MS * 17 / 10, "closed after %llu ms",
                  (unsigned long long)took);
    expect_monitor_event(mon, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                         ETIMEDOUT);
    raw_close(fd);
    zt_close(mon);
    arena_check_and_close(&a);
}
END_TEST

/* Frames that break RFC 6455 after a good upgrade: each closes, with a
 * HANDSHAKE_FAILED_PROTOCOL event that says ws. */
START_TEST(hostile_frames)
{
    arena a;
    arena_open(&a, 0);
    ck_assert_int_eq(
        zlink_socket_monitor(a.server, "inproc://ws-mon",
                             ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL),
        0);
    void *mon = zt_socket(a.ctx, ZLINK_PAIR);
    zt_connect(mon, "inproc://ws-mon");
    static const struct {
        const char *name;
        bool fin;
        int opcode;
        uint64_t claimed;
        bool mask;
        bool second; /* a second, interleaved data frame */
    } cases[] = {
        {"2^63 length", true, 2, (uint64_t)1 << 63, true, false},
        {"control > 125", true, 9, 126, true, false},
        {"text frame", true, 1, 3, true, false},
        {"reserved opcode", true, 3, 3, true, false},
        {"unmasked from a client", true, 2, 3, false, false},
        {"interleaved fragment", false, 2, 3, true, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        raw_fd fd = raw_upgrade(a.port, "/h", "ZWS2.0/NULL");
        uint8_t frame[64];
        size_t n = ws_frame(frame, cases[i].fin, cases[i].opcode, "\x00xy", 3,
                            cases[i].claimed, cases[i].mask);
        raw_send(fd, frame, n);
        if (cases[i].second) {
            n = ws_frame(frame, true, 2, "\x00zz", 3, 3, true);
            raw_send(fd, frame, n);
        }
        ck_assert_msg(raw_closed_by_peer(fd, ZT_TIMEOUT_MS), "%s",
                      cases[i].name);
        expect_monitor_event(mon, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                             ZLINK_PROTOCOL_ERROR_WS_UNSPECIFIED);
        raw_close(fd);
    }
    /* A close in the middle of a message: answered with a close. */
    raw_fd fd = raw_upgrade(a.port, "/h", "ZWS2.0/NULL");
    uint8_t frame[64];
    size_t n = ws_frame(frame, false, 2,
                        "\x00"
                        "ab",
                        3, 3, true);
    raw_send(fd, frame, n);
    n = ws_frame(frame, true, 8, "\x03\xe8", 2, 2, true);
    raw_send(fd, frame, n);
    uint8_t h[4];
    bool got_close = raw_recv_exact(fd, h, 4, ZT_TIMEOUT_MS);
    /* The READY command may come first; skip to the close frame. */
    while (got_close && h[0] != 0x88) {
        size_t rest = h[1] - 2;
        uint8_t skip[256];
        got_close = raw_recv_exact(fd, skip, rest, ZT_TIMEOUT_MS) &&
                    raw_recv_exact(fd, h, 4, ZT_TIMEOUT_MS);
    }
    ck_assert(got_close);
    ck_assert_mem_eq(h, "\x88\x02\x03\xe8", 4);
    ck_assert(raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
    raw_close(fd);
    zt_close(mon);
    arena_check_and_close(&a);
}
END_TEST

/* ---- a raw server, for the client's side ---- */

/* Accepts the zlink client, reads its upgrade, and answers it with
 * accept_ok deciding whether the hash is right. */
static raw_fd serve_upgrade(raw_fd listener, const char *protocol,
                            bool accept_ok)
{
    raw_fd fd = raw_accept(listener, ZT_TIMEOUT_MS);
    ck_assert(fd != RAW_INVALID);
    char request[2048];
    ck_assert_int_eq(read_answer(fd, request, sizeof request), -1);
    ck_assert_ptr_nonnull(strstr(request, "GET /x HTTP/1.1\r\n"));
    ck_assert_ptr_nonnull(strstr(request, "ZWS2.0/NULL, ZWS2.0"));
    const char *k = strstr(request, "Sec-WebSocket-Key: ");
    ck_assert_ptr_nonnull(k);
    char key[ZL_WS_KEY_LEN + 1];
    memcpy(key, k + strlen("Sec-WebSocket-Key: "), ZL_WS_KEY_LEN);
    key[ZL_WS_KEY_LEN] = '\0';
    char accept_hash[ZL_WS_ACCEPT_LEN + 1];
    ck_assert_int_eq(zl_ws_accept_hash(key, accept_hash), 0);
    if (!accept_ok)
        accept_hash[0] = accept_hash[0] == 'A' ? 'B' : 'A';
    char answer[512];
    snprintf(answer, sizeof answer,
             "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
             "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n"
             "Sec-WebSocket-Protocol: %s\r\n\r\n",
             accept_hash, protocol);
    raw_send(fd, answer, strlen(answer));
    return fd;
}

START_TEST(client_against_raw_server)
{
    void *ctx = zt_ctx();
    int port;
    raw_fd listener = raw_listen(4, &port);
    char ep[128];
    snprintf(ep, sizeof ep, "ws://127.0.0.1:%d/x", port);

    /* A good server speaking plain ZWS2.0: ids first, then data. */
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "me", 2);
    zt_connect(dealer, ep);
    raw_fd fd = serve_upgrade(listener, "ZWS2.0", true);
    uint8_t h[2], body[16];
    /* Our client masks: header, key, then flags and "me". */
    ck_assert(raw_recv_exact(fd, h, 2, ZT_TIMEOUT_MS));
    ck_assert_int_eq(h[0], 0x82);
    ck_assert_int_eq(h[1], 0x80 | 3);
    ck_assert(raw_recv_exact(fd, body, 4 + 3, ZT_TIMEOUT_MS));
    for (int i = 0; i < 3; i++)
        body[4 + i] ^= body[i & 3];
    ck_assert_mem_eq(body + 4, "\x00me", 3);
    uint8_t frame[64];
    size_t n = ws_frame(frame, true, 2, "\x00", 1, 1, false); /* our id */
    raw_send(fd, frame, n);
    n = ws_frame(frame, true, 2, "\x00hi", 3, 3, false);
    raw_send(fd, frame, n);
    zt_recv_str(dealer, "hi");
    raw_close(fd);
    zt_close(dealer);

    /* A server that masks its frames breaks RFC 6455: the client closes. */
    dealer = zt_socket(ctx, ZLINK_DEALER);
    zt_connect(dealer, ep);
    fd = serve_upgrade(listener, "ZWS2.0", true);
    n = ws_frame(frame, true, 2, "\x00", 1, 1, true);
    raw_send(fd, frame, n);
    ck_assert(raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
    raw_close(fd);
    zt_close(dealer);

    /* A wrong accept hash, and a subprotocol we did not offer. */
    for (int i = 0; i < 2; i++) {
        dealer = zt_socket(ctx, ZLINK_DEALER);
        zt_connect(dealer, ep);
        fd = serve_upgrade(listener, i ? "chat" : "ZWS2.0", i != 0);
        ck_assert(raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
        raw_close(fd);
        /* As in libzmq's ws, a broken upgrade ends the connect: no retry
         * comes within twice the longest first reconnect wait. */
        ck_assert(!raw_readable(listener, 400));
        zt_close(dealer);
    }
    raw_close(listener);
    zt_term(ctx);
}
END_TEST

/* Paths a request line cannot carry are refused at once, and so is a bind
 * with a query, which routing (by path alone) could never reach; a
 * connect's query goes to the server, which routes without it. */
START_TEST(endpoint_paths)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    zt_expect_errno(zlink_bind(s, "ws://127.0.0.1:*/a b"), EINVAL);
    zt_expect_errno(zlink_bind(s, "ws://127.0.0.1:*/a\tb"), EINVAL);
    zt_expect_errno(zlink_bind(s, "ws://127.0.0.1:*/a?x=1"), EINVAL);
    zt_expect_errno(zlink_connect(s, "ws://127.0.0.1:5999/a b"), EINVAL);
    char ep[256], with_query[300];
    bind_ws(s, "/a", ep, sizeof ep);
    snprintf(with_query, sizeof with_query, "%s?x=1", ep);
    void *client = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(client, with_query);
    zt_send_str(client, "queried", 0);
    zt_recv_str(s, "queried");
    zt_close(client);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* A connect made before its path is bound, on a port another path already
 * serves: the 404 is retried, as a refused connect is, and the message
 * goes once the bind is made. */
START_TEST(connect_before_bind_on_a_shared_port)
{
    void *ctx = zt_ctx();
    void *first = zt_socket(ctx, ZLINK_PAIR);
    char ep1[256], ep2[256];
    bind_ws(first, "/first", ep1, sizeof ep1);
    snprintf(ep2, sizeof ep2, "ws://127.0.0.1:%d/later", port_of(ep1));
    void *client = zt_socket(ctx, ZLINK_PAIR);
    ck_assert_int_eq(
        zlink_socket_monitor(client, "inproc://ws-later",
                             ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                 ZLINK_EVENT_CONNECT_RETRIED),
        0);
    void *mon = zt_socket(ctx, ZLINK_PAIR);
    zt_set_int(mon, ZLINK_RCVTIMEO, 100);
    zt_connect(mon, "inproc://ws-later");
    zt_connect(client, ep2);
    expect_monitor_event(mon, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                         ZLINK_PROTOCOL_ERROR_WS_UNSPECIFIED);
    ck_assert_msg(
        zl_test_wait_event(mon, ZLINK_EVENT_CONNECT_RETRIED, 1, ZT_TIMEOUT_MS),
        "no retry after the 404");
    void *later = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(later, ep2);
    zt_send_str(client, "made it", 0);
    zt_recv_str(later, "made it");
    zt_close(mon);
    zt_close(client);
    zt_close(later);
    zt_close(first);
    zt_term(ctx);
}
END_TEST

/* MAXMSGSIZE holds over ws: a longer message closes the connection. */
START_TEST(max_msg_size)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_PAIR);
    int64_t max = 100;
    ck_assert_int_eq(
        zlink_setsockopt(server, ZLINK_MAXMSGSIZE, &max, sizeof max), 0);
    char ep[256];
    bind_ws(server, "/m", ep, sizeof ep);
    raw_fd fd = raw_upgrade(port_of(ep), "/m", "ZWS2.0");
    uint8_t body[200] = {0};
    uint8_t frame[300];
    size_t n = ws_frame(frame, true, 2, body, 102, 102, true); /* 101 B */
    raw_send(fd, frame, n);
    ck_assert(raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
    raw_close(fd);

    /* A good message in the same segment as the oversized frame after it
     * is delivered before the close, as over tcp. */
    fd = raw_upgrade(port_of(ep), "/m", "ZWS2.0");
    uint8_t segment[400];
    size_t at = ws_frame(segment, true, 2, body, 1, 1, true); /* its id */
    uint8_t good[51] = {0};
    memcpy(good + 1, "fifty", 5);
    at += ws_frame(segment + at, true, 2, good, sizeof good, sizeof good, true);
    at += ws_frame(segment + at, true, 2, body, 150, 150, true);
    ck_assert_uint_le(at, sizeof segment);
    raw_send(fd, segment, at);
    char got[64];
    ck_assert_int_eq(zlink_recv(server, got, sizeof got, 0), 50);
    ck_assert_mem_eq(got, "fifty", 5);
    ck_assert(raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
    raw_close(fd);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

/* ws carries the NULL mechanism only: a PLAIN client fails its handshake
 * rather than connect without its credentials. */
START_TEST(plain_client_refused)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_PAIR);
    void *client = zt_socket(ctx, ZLINK_PAIR);
    char ep[256];
    bind_ws(server, "/p", ep, sizeof ep);
    ck_assert_int_eq(zlink_setsockopt(client, ZLINK_PLAIN_USERNAME, "u", 1), 0);
    ck_assert_int_eq(
        zlink_socket_monitor(client, "inproc://plain-ws", ZLINK_EVENT_ALL), 0);
    void *mon = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(mon, "inproc://plain-ws");
    zt_connect(client, ep);
    expect_monitor_event(mon, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                         ZLINK_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH);
    zt_close(mon);
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

/* The server's side of the same: a PLAIN or CURVE server refuses a ws
 * peer, whose upgrade is done before its session starts, and goes on
 * serving. */
START_TEST(plain_server_refuses_ws_peers)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_PAIR);
    zt_set_int(server, ZLINK_PLAIN_SERVER, 1);
    ck_assert_int_eq(
        zlink_socket_monitor(server, "inproc://plain-ws-server",
                             ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL),
        0);
    void *mon = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(mon, "inproc://plain-ws-server");
    char ep[256];
    bind_ws(server, "/p", ep, sizeof ep);
    for (int i = 0; i < 2; i++) {
        raw_fd fd =
            raw_upgrade(port_of(ep), "/p", i ? "ZWS2.0/NULL" : "ZWS2.0");
        expect_monitor_event(mon, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                             ZLINK_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH);
        ck_assert(raw_closed_by_peer(fd, ZT_TIMEOUT_MS));
        raw_close(fd);
    }
    zt_close(mon);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

/* NULL with a ZAP_DOMAIN over ws (ZWS2.0/NULL, which exchanges READY):
 * the server asks its handler first, as over tcp, and a refusal reaches
 * both monitors. */
START_TEST(null_zap_refused)
{
    void *ctx = zt_ctx();
    void *handler = zt_socket(ctx, ZLINK_REP);
    zt_bind(handler, "inproc://zeromq.zap.01");
    void *server = zt_socket(ctx, ZLINK_PAIR);
    ck_assert_int_eq(zlink_setsockopt(server, ZLINK_ZAP_DOMAIN, "ws", 2), 0);
    void *client = zt_socket(ctx, ZLINK_PAIR);
    char ep[256];
    bind_ws(server, "/z", ep, sizeof ep);
    ck_assert_int_eq(
        zlink_socket_monitor(client, "inproc://zap-ws", ZLINK_EVENT_ALL), 0);
    void *mon = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(mon, "inproc://zap-ws");
    zt_connect(client, ep);
    char part[64];
    int n = 0;
    for (int i = 0; i < 6; i++)
        n = zlink_recv(handler, part, sizeof part, 0);
    ck_assert_int_eq(n, 4);
    ck_assert_mem_eq(part, "NULL", 4);
    const char *reply[] = {"1.0", "1", "400", "", "", ""};
    for (int i = 0; i < 6; i++)
        zlink_send(handler, reply[i], strlen(reply[i]),
                   i < 5 ? ZLINK_SNDMORE : 0);
    expect_monitor_event(mon, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, 400);
    zt_close(mon);
    zt_close(client);
    zt_close(server);
    zt_close(handler);
    zt_term(ctx);
}
END_TEST

Suite *ws_suite(void)
{
    Suite *s = suite_create("ws");
    TCase *tc = tcase_create("ws");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, has_ws);
    tcase_add_loop_test(tc, every_pair, 0, sizeof pairs / sizeof pairs[0]);
    tcase_add_test(tc, pair_sizes);
    tcase_add_test(tc, plain_client_refused);
    tcase_add_test(tc, plain_server_refuses_ws_peers);
    tcase_add_test(tc, null_zap_refused);
    tcase_add_test(tc, paths_share_a_port);
    tcase_add_test(tc, allowed_origins);
    tcase_add_test(tc, raw_client_subscribes);
    tcase_add_test(tc, raw_client_router_echo);
    tcase_add_test(tc, hostile_upgrades);
    tcase_add_test(tc, slowloris_upgrade);
    tcase_add_test(tc, handshake_ivl_spans_the_upgrade);
    tcase_add_test(tc, hostile_frames);
    tcase_add_test(tc, max_msg_size);
    tcase_add_test(tc, client_against_raw_server);
    tcase_add_test(tc, connect_before_bind_on_a_shared_port);
    tcase_add_test(tc, endpoint_paths);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(ws_suite());
}
