/* test_curve.c — CURVE between zlink sockets: keys as options, messages of
 * every size both ways, the ZAP handler's say on a client's key, sealed
 * heartbeats and subscriptions, MAXMSGSIZE on what a box holds, and
 * hostile peers, in raw bytes, at each step of the handshake and after. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#include "curve_crypto.h"
#include "raw_socket.h"
#include "testutil.h"
#include "zmtp/zmtp.h"

#define WAIT_MS 5000

/* libzmq's test keys (zmq_curve(7)). */
static const char server_public[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
static const char server_secret[] = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
static const char client_public[] = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
static const char client_secret[] = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

static int port_of(const char *endpoint)
{
    const char *colon = strrchr(endpoint, ':');
    ck_assert_ptr_nonnull(colon);
    return atoi(colon + 1);
}

static void set_key(void *socket, int option, const char *z85)
{
    ck_assert_int_eq(zlink_setsockopt(socket, option, z85, 40), 0);
}

typedef struct curve_pair {
    void *ctx, *server, *client, *handler;
    void *server_monitor, *client_monitor;
    char endpoint[256];
} curve_pair;

/* A CURVE server of server_type bound at endpoint (tcp when NULL) and a
 * client of client_type that knows it by serverkey; the ZAP handler is
 * bound first when with_handler. */
static void pair_open_typed(curve_pair *p, int server_type, int client_type,
                            const char *endpoint, const char *serverkey,
                            bool with_handler)
{
    memset(p, 0, sizeof *p);
    p->ctx = zlink_ctx_new();
    if (with_handler) {
        p->handler = zlink_socket(p->ctx, ZLINK_REP);
        zl_test_set_int(p->handler, ZLINK_LINGER, 0);
        zl_test_set_int(p->handler, ZLINK_RCVTIMEO, WAIT_MS);
        ck_assert_int_eq(zlink_bind(p->handler, "inproc://zeromq.zap.01"), 0);
    }
    p->server = zlink_socket(p->ctx, server_type);
    zl_test_set_int(p->server, ZLINK_LINGER, 0);
    zl_test_set_int(p->server, ZLINK_RCVTIMEO, WAIT_MS);
    zl_test_set_int(p->server, ZLINK_CURVE_SERVER, 1);
    set_key(p->server, ZLINK_CURVE_SECRETKEY, server_secret);
    ck_assert_int_eq(zlink_setsockopt(p->server, ZLINK_ZAP_DOMAIN, "test", 4),
                     0);
    p->server_monitor = zl_test_monitor_open(
        p->ctx, p->server, "inproc://server-events", ZLINK_EVENT_ALL);
    ck_assert_int_eq(
        zlink_bind(p->server, endpoint ? endpoint : "tcp://127.0.0.1:*"), 0);
    size_t len = sizeof p->endpoint;
    ck_assert_int_eq(
        zlink_getsockopt(p->server, ZLINK_LAST_ENDPOINT, p->endpoint, &len), 0);

    p->client = zlink_socket(p->ctx, client_type);
    zl_test_set_int(p->client, ZLINK_LINGER, 0);
    zl_test_set_int(p->client, ZLINK_RCVTIMEO, WAIT_MS);
    set_key(p->client, ZLINK_CURVE_SERVERKEY, serverkey);
    set_key(p->client, ZLINK_CURVE_PUBLICKEY, client_public);
    set_key(p->client, ZLINK_CURVE_SECRETKEY, client_secret);
    p->client_monitor = zl_test_monitor_open(
        p->ctx, p->client, "inproc://client-events", ZLINK_EVENT_ALL);
    ck_assert_int_eq(zlink_connect(p->client, p->endpoint), 0);
}

static void pair_open(curve_pair *p, const char *endpoint, bool with_handler)
{
    pair_open_typed(p, ZLINK_ROUTER, ZLINK_DEALER, endpoint, server_public,
                    with_handler);
}

static void pair_close(curve_pair *p)
{
    ck_assert_int_eq(zlink_close(p->client_monitor), 0);
    ck_assert_int_eq(zlink_close(p->server_monitor), 0);
    ck_assert_int_eq(zlink_close(p->client), 0);
    ck_assert_int_eq(zlink_close(p->server), 0);
    if (p->handler)
        ck_assert_int_eq(zlink_close(p->handler), 0);
    ck_assert_int_eq(zl_test_ctx_term(p->ctx), 0);
}

static uint32_t wait_value(void *monitor, int event)
{
    uint32_t value = 0;
    ck_assert_msg(zl_test_wait_event_value(monitor, event, &value, WAIT_MS),
                  "no event 0x%x", event);
    return value;
}

/* A body of len bytes that differs with seed, so that a part swapped or
 * misplaced shows. */
static char *make_body(size_t len, unsigned seed)
{
    char *b = malloc(len ? len : 1);
    for (size_t i = 0; i < len; i++)
        b[i] = (char)(i * 31 + seed);
    return b;
}

/* The client's message of sizes[] parts reaches the server whole, and the
 * server's answer (the same parts, reversed) comes back whole. */
static void exchange(curve_pair *p, const size_t *sizes, int parts)
{
    for (int i = 0; i < parts; i++) {
        char *b = make_body(sizes[i], (unsigned)i);
        int flags = i + 1 < parts ? ZLINK_SNDMORE : 0;
        ck_assert_int_eq(zlink_send(p->client, b, sizes[i], flags),
                         (int)sizes[i]);
        free(b);
    }
    zlink_msg_t id;
    zlink_msg_init(&id);
    ck_assert_int_gt(zlink_msg_recv(&id, p->server, 0), 0);
    for (int i = 0; i < parts; i++) {
        zlink_msg_t m;
        zlink_msg_init(&m);
        ck_assert_int_eq(zlink_msg_recv(&m, p->server, 0), (int)sizes[i]);
        char *b = make_body(sizes[i], (unsigned)i);
        ck_assert(memcmp(zlink_msg_data(&m), b, sizes[i]) == 0);
        ck_assert_int_eq(zlink_msg_more(&m), i + 1 < parts);
        free(b);
        zlink_msg_close(&m);
    }
    int id_len = (int)zlink_msg_size(&id);
    ck_assert_int_eq(zlink_msg_send(&id, p->server, ZLINK_SNDMORE), id_len);
    for (int i = parts - 1; i >= 0; i--) {
        char *b = make_body(sizes[i], (unsigned)i + 7);
        ck_assert_int_eq(
            zlink_send(p->server, b, sizes[i], i > 0 ? ZLINK_SNDMORE : 0),
            (int)sizes[i]);
        free(b);
    }
    for (int i = parts - 1; i >= 0; i--) {
        zlink_msg_t m;
        zlink_msg_init(&m);
        ck_assert_int_eq(zlink_msg_recv(&m, p->client, 0), (int)sizes[i]);
        char *b = make_body(sizes[i], (unsigned)i + 7);
        ck_assert(memcmp(zlink_msg_data(&m), b, sizes[i]) == 0);
        free(b);
        zlink_msg_close(&m);
    }
}

/* Keys in and out as libzmq takes and gives them. */
START_TEST(options)
{
    ck_assert_int_eq(zlink_has("curve"), 1);
    void *ctx = zlink_ctx_new();
    void *s = zlink_socket(ctx, ZLINK_DEALER);
    int mechanism = -1;
    size_t len = sizeof mechanism;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_MECHANISM, &mechanism, &len), 0);
    ck_assert_int_eq(mechanism, ZLINK_NULL);
    /* Z85, with and without its NUL, and binary. */
    ck_assert_int_eq(
        zlink_setsockopt(s, ZLINK_CURVE_SERVERKEY, server_public, 41), 0);
    uint8_t binary[32];
    ck_assert_ptr_nonnull(zlink_z85_decode(binary, client_public));
    ck_assert_int_eq(
        zlink_setsockopt(s, ZLINK_CURVE_PUBLICKEY, binary, sizeof binary), 0);
    set_key(s, ZLINK_CURVE_SECRETKEY, client_secret);
    len = sizeof mechanism;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_MECHANISM, &mechanism, &len), 0);
    ck_assert_int_eq(mechanism, ZLINK_CURVE);
    char z85[41];
    len = sizeof z85;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_CURVE_PUBLICKEY, z85, &len), 0);
    ck_assert_str_eq(z85, client_public);
    uint8_t back[32];
    len = sizeof back;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_CURVE_SERVERKEY, back, &len), 0);
    ck_assert_ptr_nonnull(zlink_z85_decode(binary, server_public));
    ck_assert_mem_eq(back, binary, 32);
    int server = 1;
    len = sizeof server;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_CURVE_SERVER, &server, &len), 0);
    ck_assert_int_eq(server, 0);
    /* Wrong lengths and characters outside Z85 are refused. */
    ck_assert_int_eq(
        zlink_setsockopt(s, ZLINK_CURVE_PUBLICKEY, client_public, 39), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    ck_assert_int_eq(
        zlink_setsockopt(s, ZLINK_CURVE_PUBLICKEY,
                         "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~", 40),
        -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    len = 40;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_CURVE_PUBLICKEY, z85, &len), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    /* CURVE_SERVER 1 makes a server, 0 goes back to NULL. */
    zl_test_set_int(s, ZLINK_CURVE_SERVER, 1);
    len = sizeof server;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_CURVE_SERVER, &server, &len), 0);
    ck_assert_int_eq(server, 1);
    zl_test_set_int(s, ZLINK_CURVE_SERVER, 0);
    len = sizeof mechanism;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_MECHANISM, &mechanism, &len), 0);
    ck_assert_int_eq(mechanism, ZLINK_NULL);
    zlink_close(s);
    zl_test_ctx_term(ctx);
}
END_TEST

/* Every size both ways, across frame and batch boundaries, multipart too;
 * with no handler bound, the client is admitted unasked (libzmq 4.3). */
static void round_trips(const char *endpoint)
{
    curve_pair p;
    pair_open(&p, endpoint, false);
    static const size_t sizes[] = {0,    1,       220,  221,   255,
                                   256,  8191,    8192, 65536, 70000,
                                   1000, 2 << 20, 33,   12345};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        exchange(&p, &sizes[i], 1);
    exchange(&p, sizes, (int)(sizeof sizes / sizeof sizes[0]));
    /* A burst, so that batches of many sealed parts are written. */
    for (int i = 0; i < 2000; i++)
        ck_assert_int_eq(zlink_send(p.client, "burst", 5, 0), 5);
    for (int i = 0; i < 2000; i++) {
        char buf[64];
        ck_assert_int_gt(zlink_recv(p.server, buf, sizeof buf, 0), 0);
        ck_assert_int_eq(zlink_recv(p.server, buf, sizeof buf, 0), 5);
    }
    wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_SUCCEEDED);
    wait_value(p.client_monitor, ZLINK_EVENT_HANDSHAKE_SUCCEEDED);
    pair_close(&p);
}

START_TEST(round_trip_tcp)
{
    round_trips(NULL);
}
END_TEST

START_TEST(round_trip_ipc)
{
    if (!zlink_has("ipc"))
        return;
    char endpoint[256];
    zl_test_ipc_endpoint(endpoint, sizeof endpoint);
    round_trips(endpoint);
}
END_TEST

/* A client that has the wrong server key cannot open the server's boxes,
 * nor the server its HELLO: the server reports it and nothing gets
 * through. */
START_TEST(wrong_server_key)
{
    curve_pair p;
    pair_open_typed(&p, ZLINK_ROUTER, ZLINK_DEALER, NULL, client_public, false);
    ck_assert_uint_eq(
        wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL),
        ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC);
    zlink_send(p.client, "x", 1, ZLINK_DONTWAIT);
    zl_test_set_int(p.server, ZLINK_RCVTIMEO, 200);
    char buf[16];
    ck_assert_int_eq(zlink_recv(p.server, buf, sizeof buf, 0), -1);
    pair_close(&p);
}
END_TEST

static void expect_part(void *handler, const void *data, size_t len)
{
    char buf[256];
    int n = zlink_recv(handler, buf, sizeof buf, 0);
    ck_assert_msg(n >= 0, "no ZAP request: %s", zlink_strerror(zlink_errno()));
    ck_assert_int_eq(n, (int)len);
    ck_assert_mem_eq(buf, data, len);
}

/* RFC 27's request, with the client's permanent key as its credential. */
static void expect_request(void *handler)
{
    uint8_t key[32];
    ck_assert_ptr_nonnull(zlink_z85_decode(key, client_public));
    expect_part(handler, "1.0", 3);
    expect_part(handler, "1", 1);
    expect_part(handler, "test", 4);
    expect_part(handler, "127.0.0.1", 9);
    expect_part(handler, "", 0);
    expect_part(handler, "CURVE", 5);
    expect_part(handler, key, sizeof key);
    int more = 1;
    size_t len = sizeof more;
    ck_assert_int_eq(zlink_getsockopt(handler, ZLINK_RCVMORE, &more, &len), 0);
    ck_assert_int_eq(more, 0);
}

static void reply(void *handler, const char *status, const char *user)
{
    const char *parts[] = {"1.0", "1", status, "", user};
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(
            zlink_send(handler, parts[i], strlen(parts[i]), ZLINK_SNDMORE),
            (int)strlen(parts[i]));
    ck_assert_int_eq(zlink_send(handler, "", 0, 0), 0);
}

START_TEST(zap_admits)
{
    curve_pair p;
    pair_open(&p, NULL, true);
    expect_request(p.handler);
    reply(p.handler, "200", "alice");
    ck_assert_int_eq(zlink_send(p.client, "hello", 5, 0), 5);
    char id[64];
    ck_assert_int_gt(zlink_recv(p.server, id, sizeof id, 0), 0);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    ck_assert_int_eq(zlink_msg_recv(&msg, p.server, 0), 5);
    ck_assert_str_eq(zlink_msg_gets(&msg, "User-Id"), "alice");
    ck_assert_str_eq(zlink_msg_gets(&msg, "Socket-Type"), "DEALER");
    zlink_msg_close(&msg);
    pair_close(&p);
}
END_TEST

/* Refused: both sides hear the code, the client stays away. */
START_TEST(zap_refuses)
{
    curve_pair p;
    pair_open(&p, NULL, true);
    expect_request(p.handler);
    reply(p.handler, "400", "");
    ck_assert_uint_eq(
        wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH), 400);
    ck_assert_uint_eq(
        wait_value(p.client_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH), 400);
    pair_close(&p);
}
END_TEST

/* A server with ZAP_ENFORCE_DOMAIN, a ZAP_DOMAIN or none, and a handler
 * bound or not; its monitor in p->server_monitor. */
static void open_enforced(curve_pair *p, bool with_domain, bool with_handler)
{
    memset(p, 0, sizeof *p);
    p->ctx = zlink_ctx_new();
    if (with_handler) {
        p->handler = zlink_socket(p->ctx, ZLINK_REP);
        zl_test_set_int(p->handler, ZLINK_LINGER, 0);
        ck_assert_int_eq(zlink_bind(p->handler, "inproc://zeromq.zap.01"), 0);
    }
    p->server = zlink_socket(p->ctx, ZLINK_ROUTER);
    zl_test_set_int(p->server, ZLINK_LINGER, 0);
    zl_test_set_int(p->server, ZLINK_RCVTIMEO, WAIT_MS);
    zl_test_set_int(p->server, ZLINK_CURVE_SERVER, 1);
    zl_test_set_int(p->server, ZLINK_ZAP_ENFORCE_DOMAIN, 1);
    if (with_domain)
        ck_assert_int_eq(
            zlink_setsockopt(p->server, ZLINK_ZAP_DOMAIN, "test", 4), 0);
    set_key(p->server, ZLINK_CURVE_SECRETKEY, server_secret);
    p->server_monitor = zl_test_monitor_open(
        p->ctx, p->server, "inproc://server-events", ZLINK_EVENT_ALL);
    ck_assert_int_eq(zlink_bind(p->server, "tcp://127.0.0.1:*"), 0);
    size_t len = sizeof p->endpoint;
    zlink_getsockopt(p->server, ZLINK_LAST_ENDPOINT, p->endpoint, &len);
    p->client = zlink_socket(p->ctx, ZLINK_DEALER);
    zl_test_set_int(p->client, ZLINK_LINGER, 0);
    set_key(p->client, ZLINK_CURVE_SERVERKEY, server_public);
    set_key(p->client, ZLINK_CURVE_PUBLICKEY, client_public);
    set_key(p->client, ZLINK_CURVE_SECRETKEY, client_secret);
    p->client_monitor = zl_test_monitor_open(
        p->ctx, p->client, "inproc://client-events", ZLINK_EVENT_ALL);
    ck_assert_int_eq(zlink_connect(p->client, p->endpoint), 0);
}

/* A ZAP_DOMAIN with ZAP_ENFORCE_DOMAIN and no handler: refused with
 * EFAULT. */
START_TEST(enforced_without_handler)
{
    curve_pair p;
    open_enforced(&p, true, false);
    ck_assert_uint_eq(
        wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL),
        EFAULT);
    pair_close(&p);
}
END_TEST

/* ZAP_ENFORCE_DOMAIN with no domain asks no handler, as libzmq: the client
 * is admitted, encrypted but not authenticated. */
START_TEST(enforced_without_domain)
{
    curve_pair p;
    open_enforced(&p, false, true);
    ck_assert_int_eq(zlink_send(p.client, "hello", 5, 0), 5);
    char buf[64];
    ck_assert_int_gt(zlink_recv(p.server, buf, sizeof buf, 0), 0);
    ck_assert_int_eq(zlink_recv(p.server, buf, sizeof buf, 0), 5);
    zl_test_set_int(p.handler, ZLINK_RCVTIMEO, 100);
    ck_assert_int_eq(zlink_recv(p.handler, buf, sizeof buf, 0), -1);
    pair_close(&p);
}
END_TEST

/* PINGs and PONGs go sealed: a connection that heartbeats stays up. */
START_TEST(heartbeats)
{
    curve_pair p;
    memset(&p, 0, sizeof p);
    pair_open(&p, NULL, false);
    zlink_close(p.client);
    p.client = zlink_socket(p.ctx, ZLINK_DEALER);
    zl_test_set_int(p.client, ZLINK_LINGER, 0);
    zl_test_set_int(p.client, ZLINK_RCVTIMEO, WAIT_MS);
    zl_test_set_int(p.client, ZLINK_HEARTBEAT_IVL, 20);
    zl_test_set_int(p.client, ZLINK_HEARTBEAT_TIMEOUT, 200);
    set_key(p.client, ZLINK_CURVE_SERVERKEY, server_public);
    set_key(p.client, ZLINK_CURVE_PUBLICKEY, client_public);
    set_key(p.client, ZLINK_CURVE_SECRETKEY, client_secret);
    ck_assert_int_eq(zlink_connect(p.client, p.endpoint), 0);
    size_t size = 5;
    exchange(&p, &size, 1);
    zl_test_sleep_ms(500); /* some 25 PINGs, each answered */
    exchange(&p, &size, 1);
    ck_assert(!zl_test_wait_event(
        p.server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, 1, 10));
    pair_close(&p);
}
END_TEST

/* SUBSCRIBE goes sealed as a command, and the topic filters. */
START_TEST(pub_sub)
{
    curve_pair p;
    pair_open_typed(&p, ZLINK_PUB, ZLINK_SUB, NULL, server_public, false);
    ck_assert_int_eq(zlink_setsockopt(p.client, ZLINK_SUBSCRIBE, "a", 1), 0);
    char buf[16];
    int n = -1;
    for (int i = 0; i < 200 && n < 0; i++) {
        zlink_send(p.server, "b-no", 4, 0);
        zlink_send(p.server, "a-yes", 5, 0);
        zl_test_sleep_ms(10);
        n = zlink_recv(p.client, buf, sizeof buf, ZLINK_DONTWAIT);
    }
    ck_assert_int_eq(n, 5);
    ck_assert_mem_eq(buf, "a-yes", 5);
    pair_close(&p);
}
END_TEST

/* MAXMSGSIZE bounds the message a box holds, not the box. */
START_TEST(max_message_size)
{
    curve_pair p;
    pair_open(&p, NULL, false);
    size_t size = 5;
    exchange(&p, &size, 1);
    zlink_close(p.client);
    int64_t max = 1000;
    ck_assert_int_eq(
        zlink_setsockopt(p.server, ZLINK_MAXMSGSIZE, &max, sizeof max), 0);
    zlink_unbind(p.server, p.endpoint);
    ck_assert_int_eq(zlink_bind(p.server, "tcp://127.0.0.1:*"), 0);
    size_t len = sizeof p.endpoint;
    zlink_getsockopt(p.server, ZLINK_LAST_ENDPOINT, p.endpoint, &len);
    p.client = zlink_socket(p.ctx, ZLINK_DEALER);
    zl_test_set_int(p.client, ZLINK_LINGER, 0);
    zl_test_set_int(p.client, ZLINK_RCVTIMEO, WAIT_MS);
    set_key(p.client, ZLINK_CURVE_SERVERKEY, server_public);
    set_key(p.client, ZLINK_CURVE_PUBLICKEY, client_public);
    set_key(p.client, ZLINK_CURVE_SECRETKEY, client_secret);
    ck_assert_int_eq(zlink_connect(p.client, p.endpoint), 0);
    size = 1000;
    exchange(&p, &size, 1);
    /* 600 + 401 bytes in one message pass the limit. */
    char body[1001] = {0};
    ck_assert_int_eq(zlink_send(p.client, body, 600, ZLINK_SNDMORE), 600);
    ck_assert_int_eq(zlink_send(p.client, body, 401, 0), 401);
    wait_value(p.server_monitor, ZLINK_EVENT_DISCONNECTED);
    zl_test_set_int(p.server, ZLINK_RCVTIMEO, 100);
    char id[64];
    ck_assert_int_eq(zlink_recv(p.server, id, sizeof id, 0), -1);
    pair_close(&p);
}
END_TEST

/* ---- a raw client, step by step ---- */

typedef struct raw_curve {
    raw_fd fd;
    uint8_t box_key[32];
    uint64_t nonce;
} raw_curve;

static void put_u64(uint8_t *out, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (uint8_t)v;
}

static void send_command(raw_fd fd, const uint8_t *body, size_t len)
{
    uint8_t header[ZL_FRAME_HEADER_MAX];
    raw_send(fd, header, zl_frame_header_encode(header, ZL_FRAME_COMMAND, len));
    raw_send(fd, body, len);
}

/* The next frame's body (at most cap bytes); its length. */
static size_t recv_frame(raw_fd fd, uint8_t *body, size_t cap)
{
    uint8_t header[9];
    ck_assert(raw_recv_exact(fd, header, 2, WAIT_MS));
    size_t len = header[1];
    if (header[0] & ZL_FRAME_LONG) {
        ck_assert(raw_recv_exact(fd, header + 2, 7, WAIT_MS));
        len = 0;
        for (int i = 1; i < 9; i++)
            len = len << 8 | header[i];
    }
    ck_assert_uint_le(len, cap);
    ck_assert(raw_recv_exact(fd, body, len, WAIT_MS));
    return len;
}

static void nonce_of(uint8_t nonce[24], const char *prefix, const uint8_t *rest)
{
    size_t n = strlen(prefix);
    memcpy(nonce, prefix, n);
    memcpy(nonce + n, rest, 24 - n);
}

/* A DEALER's handshake, written out from spec 26 with the library's own
 * primitives: HELLO, WELCOME, INITIATE, READY. */
static void raw_handshake(raw_curve *r, int port)
{
    uint8_t s[32], c[32], cs[32], t[32], ts[32], key[32], nonce[24];
    ck_assert_ptr_nonnull(zlink_z85_decode(s, server_public));
    ck_assert_ptr_nonnull(zlink_z85_decode(c, client_public));
    ck_assert_ptr_nonnull(zlink_z85_decode(cs, client_secret));
    ck_assert_int_eq(zl_curve_keypair(t, ts), 0);
    r->fd = raw_connect(port);
    uint8_t greeting[ZL_GREETING_SIZE];
    zl_greeting_encode(greeting, "CURVE", false);
    raw_send(r->fd, greeting, sizeof greeting);
    ck_assert(raw_recv_exact(r->fd, greeting, sizeof greeting, WAIT_MS));

    uint8_t hello[200] = {5, 'H', 'E', 'L', 'L', 'O', 1, 0};
    uint8_t zeros[64] = {0};
    memcpy(hello + 80, t, 32);
    put_u64(hello + 112, 1);
    nonce_of(nonce, "CurveZMQHELLO---", hello + 112);
    ck_assert_int_eq(zl_curve_beforenm(key, s, ts), 0);
    zl_secretbox_seal(hello + 120, zeros, 64, nonce, key);
    send_command(r->fd, hello, sizeof hello);

    uint8_t welcome[168], plain[128];
    ck_assert_uint_eq(recv_frame(r->fd, welcome, sizeof welcome), 168);
    nonce_of(nonce, "WELCOME-", welcome + 8);
    ck_assert(zl_secretbox_open(plain, welcome + 24, 144, nonce, key));
    const uint8_t *server_transient = plain;
    ck_assert_int_eq(zl_curve_beforenm(r->box_key, server_transient, ts), 0);

    static const uint8_t properties[] = "\x0bSocket-Type\0\0\0\x06"
                                        "DEALER";
    uint8_t inner[128 + sizeof properties - 1], vouch[64];
    memcpy(inner, c, 32);
    memset(inner + 32, 0x42, 16);
    memcpy(vouch, t, 32);
    memcpy(vouch + 32, s, 32);
    nonce_of(nonce, "VOUCH---", inner + 32);
    ck_assert_int_eq(zl_curve_beforenm(key, server_transient, cs), 0);
    zl_secretbox_seal(inner + 48, vouch, 64, nonce, key);
    memcpy(inner + 128, properties, sizeof properties - 1);
    uint8_t initiate[9 + 96 + 8 + 16 + sizeof inner];
    memcpy(initiate, "\x08INITIATE", 9);
    memcpy(initiate + 9, plain + 32, 96);
    put_u64(initiate + 105, 2);
    nonce_of(nonce, "CurveZMQINITIATE", initiate + 105);
    zl_secretbox_seal(initiate + 113, inner, sizeof inner, nonce, r->box_key);
    send_command(r->fd, initiate, sizeof initiate);

    uint8_t ready[512];
    size_t len = recv_frame(r->fd, ready, sizeof ready);
    ck_assert_mem_eq(ready, "\x05READY", 6);
    nonce_of(nonce, "CurveZMQREADY---", ready + 6);
    ck_assert(
        zl_secretbox_open(ready, ready + 14, len - 14, nonce, r->box_key));
    r->nonce = 3;
}

/* A MESSAGE frame sealing flags and body under the short nonce n. */
static void send_message(raw_curve *r, uint64_t n, const char *body, bool forge)
{
    size_t len = strlen(body);
    uint8_t plain[64], frame[2 + 16 + 16 + 64], nonce[24];
    plain[0] = 0;
    memcpy(plain + 1, body, len);
    frame[0] = 0;
    frame[1] = (uint8_t)(16 + 16 + 1 + len);
    memcpy(frame + 2, "\x07MESSAGE", 8);
    put_u64(frame + 10, n);
    nonce_of(nonce, "CurveZMQMESSAGEC", frame + 10);
    zl_secretbox_seal(frame + 18, plain, 1 + len, nonce, r->box_key);
    if (forge)
        frame[2 + 16 + 16] ^= 1;
    raw_send(r->fd, frame, 2 + 16 + 16 + 1 + len);
}

/* A peer that got through the handshake and then misbehaves is cut off,
 * with the reason; the server's other connections go on. */
START_TEST(hostile_messages)
{
    static const struct {
        const char *name;
        int how; /* 0: replay, 1: forged, 2: too short, 3: not MESSAGE */
        uint32_t reason;
    } cases[] = {
        {"a replayed nonce", 0, ZLINK_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE},
        {"a forged box", 1, ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC},
        {"a box too short", 2,
         ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE},
        {"no MESSAGE", 3, ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND},
    };
    raw_sockets_init();
    curve_pair p;
    pair_open(&p, NULL, false);
    size_t size = 10;
    exchange(&p, &size, 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        raw_curve r;
        raw_handshake(&r, port_of(p.endpoint));
        send_message(&r, r.nonce++, "hello", false);
        char buf[64];
        ck_assert_int_gt(zlink_recv(p.server, buf, sizeof buf, 0), 0);
        ck_assert_int_eq(zlink_recv(p.server, buf, sizeof buf, 0), 5);
        if (cases[i].how == 0) {
            send_message(&r, r.nonce - 1, "again", false);
        } else if (cases[i].how == 1) {
            send_message(&r, r.nonce++, "forged", true);
        } else {
            const char *bytes = cases[i].how == 2
                                    ? "\x07MESSAGE\0\0\0\0\0\0\0\x09"
                                    : "\x07MASSAGE";
            uint8_t frame[2 + 32] = {0, cases[i].how == 2 ? 32 : 8};
            memcpy(frame + 2, bytes, cases[i].how == 2 ? 16 : 8);
            raw_send(r.fd, frame, 2 + frame[1]);
        }
        ck_assert_msg(raw_closed_by_peer(r.fd, WAIT_MS), "%s: still open",
                      cases[i].name);
        raw_close(r.fd);
        uint32_t reason =
            wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL);
        ck_assert_msg(reason == cases[i].reason, "%s: reason 0x%x",
                      cases[i].name, reason);
        exchange(&p, &size, 1);
    }
    pair_close(&p);
}
END_TEST

/* A peer that breaks the handshake is cut off at once, with the reason. */
START_TEST(hostile_handshakes)
{
    static uint8_t bad_box[200] = {5, 'H', 'E', 'L', 'L', 'O', 1, 0};
    static const uint8_t bad_version[200] = {5, 'H', 'E', 'L', 'L', 'O', 2, 0};
    memset(bad_box + 8, 0x55, 192);
    static const uint8_t initiate[300] = {8,   'I', 'N', 'I', 'T',
                                          'I', 'A', 'T', 'E'};
    static const struct {
        const char *name, *mechanism;
        const uint8_t *body;
        size_t len;
        uint32_t reason;
    } cases[] = {
        {"a short HELLO", "CURVE", (const uint8_t *)"\x05HELLO\x01\x00", 8,
         ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO},
        {"HELLO 2.0", "CURVE", bad_version, 200,
         ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO},
        {"a HELLO box not for us", "CURVE", bad_box, 200,
         ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC},
        {"INITIATE first", "CURVE", initiate, sizeof initiate,
         ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND},
        {"a NULL client", "NULL", NULL, 0,
         ZLINK_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH},
    };
    raw_sockets_init();
    curve_pair p;
    pair_open(&p, NULL, false);
    size_t size = 10;
    exchange(&p, &size, 1);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        raw_fd fd = raw_connect(port_of(p.endpoint));
        uint8_t greeting[ZL_GREETING_SIZE];
        zl_greeting_encode(greeting, cases[i].mechanism, false);
        raw_send(fd, greeting, sizeof greeting);
        if (cases[i].body)
            send_command(fd, cases[i].body, cases[i].len);
        ck_assert_msg(raw_closed_by_peer(fd, WAIT_MS), "%s: still open",
                      cases[i].name);
        raw_close(fd);
        uint32_t reason =
            wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL);
        ck_assert_msg(reason == cases[i].reason, "%s: reason 0x%x",
                      cases[i].name, reason);
        exchange(&p, &size, 1);
    }
    pair_close(&p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("curve");
    TCase *tc = tcase_create("curve");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, options);
    tcase_add_test(tc, round_trip_tcp);
    tcase_add_test(tc, round_trip_ipc);
    tcase_add_test(tc, wrong_server_key);
    tcase_add_test(tc, zap_admits);
    tcase_add_test(tc, zap_refuses);
    tcase_add_test(tc, enforced_without_handler);
    tcase_add_test(tc, enforced_without_domain);
    tcase_add_test(tc, heartbeats);
    tcase_add_test(tc, pub_sub);
    tcase_add_test(tc, max_message_size);
    tcase_add_test(tc, hostile_messages);
    tcase_add_test(tc, hostile_handshakes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
