/* test_metadata.c — zlink_msg_gets: the peer's READY properties,
 * Peer-Address, their lifetime, a hostile READY, and a libzmq peer. */
#include "peer_process.h"
#include "raw_socket.h"
#include "socket_testutil.h"

#include <zlink_zmq.h>

static void expect_property(zlink_msg_t *msg, const char *name,
                            const char *value)
{
    errno = 0;
    const char *got = zlink_msg_gets(msg, name);
    if (value == NULL) {
        ck_assert_msg(got == NULL, "%s: expected none, got '%s'", name, got);
        ck_assert_int_eq(zlink_errno(), EINVAL);
        return;
    }
    ck_assert_msg(got != NULL, "%s: missing", name);
    ck_assert_str_eq(got, value);
}

/* Receives one message into msg (its last part for a ROUTER). */
static void recv_last_part(void *s, zlink_msg_t *msg)
{
    do {
        zlink_msg_close(msg);
        zlink_msg_init(msg);
        ck_assert_int_ge(zlink_msg_recv(msg, s, 0), 0);
    } while (zlink_msg_more(msg));
}

START_TEST(tcp_dealer_to_router)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "alice", 5);
    char ep[256];
    ck_assert(zt_join(router, dealer, ZT_TCP4, ep, sizeof ep));
    zt_send_str(dealer, "hello", 0);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    recv_last_part(router, &msg);
    expect_property(&msg, "Socket-Type", "DEALER");
    expect_property(&msg, "Identity", "alice");
    expect_property(&msg, ZMQ_MSG_PROPERTY_ROUTING_ID, "alice");
    expect_property(&msg, ZMQ_MSG_PROPERTY_PEER_ADDRESS, "127.0.0.1");
    expect_property(&msg, "socket-type", NULL); /* exact names, as libzmq */
    expect_property(&msg, "User-Id", NULL);
    expect_property(&msg, "No-Such", NULL);
    /* SRCFD, libzmq's deprecated property: the router's end of the
     * connection, bound to the port it listens on. */
    int fd = zlink_msg_get(&msg, ZMQ_SRCFD);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in local;
    raw_len local_len = sizeof local;
    ck_assert_int_eq(
        getsockname((raw_fd)fd, (struct sockaddr *)&local, &local_len), 0);
    ck_assert_int_eq(ntohs(local.sin_port), atoi(strrchr(ep, ':') + 1));

    /* A copy shares the block; it outlives the original and both sockets. */
    zlink_msg_t copy;
    zlink_msg_init(&copy);
    ck_assert_int_eq(zlink_msg_copy(&copy, &msg), 0);
    zlink_msg_close(&msg);
    zt_close(dealer);
    zt_close(router);
    zt_term(ctx);
    expect_property(&copy, "Socket-Type", "DEALER");
    zlink_msg_t moved;
    zlink_msg_init(&moved);
    ck_assert_int_eq(zlink_msg_move(&moved, &copy), 0);
    expect_property(&copy, "Socket-Type", NULL);
    expect_property(&moved, "Identity", "alice");
    zlink_msg_close(&moved);
    zlink_msg_close(&copy);
}
END_TEST

/* A ROUTER's id frame carries its connection's properties too, as in
 * libzmq: servers log "Peer-Address" from the first frame. Messages read
 * by the I/O thread and by the receiving thread itself are both checked. */
START_TEST(router_id_frame_has_properties)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "carol", 5);
    char ep[256];
    ck_assert(zt_join(router, dealer, ZT_TCP4, ep, sizeof ep));
    for (int round = 0; round < 2; round++) {
        /* Round 0 waits in the receive; round 1 finds both queued. */
        for (int i = 0; i <= round; i++)
            zt_send_str(dealer, "hi", 0);
        if (round == 1)
            zl_test_sleep_ms(50);
        for (int i = 0; i <= round; i++) {
            zlink_msg_t id, body;
            zlink_msg_init(&id);
            zlink_msg_init(&body);
            ck_assert_int_eq(zlink_msg_recv(&id, router, 0), 5);
            ck_assert(zlink_msg_more(&id));
            expect_property(&id, "Socket-Type", "DEALER");
            expect_property(&id, "Identity", "carol");
            expect_property(&id, ZMQ_MSG_PROPERTY_PEER_ADDRESS, "127.0.0.1");
            ck_assert_int_eq(zlink_msg_recv(&body, router, 0), 2);
            expect_property(&body, "Socket-Type", "DEALER");
            zlink_msg_close(&id);
            zlink_msg_close(&body);
        }
    }
    zt_close(dealer);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* PAIR announces no Identity (as libzmq); IPv6 peers are named without
 * brackets, as getnameinfo writes them. */
START_TEST(tcp6_pair)
{
    void *ctx = zt_ctx();
    void *a = zt_socket(ctx, ZLINK_PAIR);
    void *b = zt_socket(ctx, ZLINK_PAIR);
    char ep[256];
    if (!zt_join(a, b, ZT_TCP6, ep, sizeof ep)) {
        zt_close(a);
        zt_close(b);
        zt_term(ctx);
        return; /* no IPv6 loopback here */
    }
    zt_send_str(b, "x", 0);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    ck_assert_int_ge(zlink_msg_recv(&msg, a, 0), 0);
    expect_property(&msg, "Socket-Type", "PAIR");
    expect_property(&msg, "Identity", NULL);
    expect_property(&msg, "Routing-Id", NULL);
    expect_property(&msg, "Peer-Address", "::1");
    zlink_msg_close(&msg);
    zt_close(a);
    zt_close(b);
    zt_term(ctx);
}
END_TEST

START_TEST(ipc_peer_address)
{
    void *ctx = zt_ctx();
    void *a = zt_socket(ctx, ZLINK_PULL);
    void *b = zt_socket(ctx, ZLINK_PUSH);
    char ep[256];
    if (!zt_join(a, b, ZT_IPC, ep, sizeof ep)) {
        zt_close(a);
        zt_close(b);
        zt_term(ctx);
        return;
    }
    zt_send_str(b, "x", 0);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    ck_assert_int_ge(zlink_msg_recv(&msg, a, 0), 0);
    expect_property(&msg, "Socket-Type", "PUSH");
#if defined(__linux__)
    /* libzmq on Linux: "localhost:uid:gid:pid" from SO_PEERCRED. */
    char want[128];
    snprintf(want, sizeof want, "localhost:%u:%u:%d", (unsigned)getuid(),
             (unsigned)getgid(), (int)getpid());
    expect_property(&msg, "Peer-Address", want);
#endif
    zlink_msg_close(&msg);
    zt_close(a);
    zt_close(b);
    zt_term(ctx);
}
END_TEST

/* inproc has no handshake and a local message no connection: libzmq gives
 * them no properties at all. */
START_TEST(inproc_and_local_have_none)
{
    void *ctx = zt_ctx();
    void *a = zt_socket(ctx, ZLINK_PAIR);
    void *b = zt_socket(ctx, ZLINK_PAIR);
    char ep[256];
    ck_assert(zt_join(a, b, ZT_INPROC, ep, sizeof ep));
    zt_send_str(b, "x", 0);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    ck_assert_int_ge(zlink_msg_recv(&msg, a, 0), 0);
    expect_property(&msg, "Socket-Type", NULL);
    expect_property(&msg, "Peer-Address", NULL);
    ck_assert_int_eq(zlink_msg_get(&msg, ZLINK_SRCFD), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    zlink_msg_close(&msg);
    zlink_msg_init_size(&msg, 300);
    expect_property(&msg, "Socket-Type", NULL);
    zlink_msg_close(&msg);
    zt_close(a);
    zt_close(b);
    zt_term(ctx);
}
END_TEST

/* Messages queued before their connection went keep its properties. */
START_TEST(survives_disconnect)
{
    void *ctx = zt_ctx();
    void *pull = zt_socket(ctx, ZLINK_PULL);
    void *push = zt_socket(ctx, ZLINK_PUSH);
    zt_set_int(push, ZLINK_LINGER, 5000);
    char ep[256];
    ck_assert(zt_join(pull, push, ZT_TCP4, ep, sizeof ep));
    zt_send_str(push, "first", 0);
    zt_recv_str(pull, "first");
    enum { N = 600 }; /* more than one batch of the engine's credit */
    for (int i = 0; i < N; i++)
        zt_send_str(push, "queued", 0);
    zt_close(push);
    zlink_msg_t msgs[N];
    for (int i = 0; i < N; i++) {
        zlink_msg_init(&msgs[i]);
        ck_assert_int_ge(zlink_msg_recv(&msgs[i], pull, 0), 0);
    }
    /* The connection is gone by now (the pusher closed after its linger). */
    zt_close(pull);
    zt_term(ctx);
    for (int i = 0; i < N; i++) {
        expect_property(&msgs[i], "Socket-Type", "PUSH");
        zlink_msg_close(&msgs[i]);
    }
}
END_TEST

/* ---- a raw ZMTP peer's READY ---- */

static int port_of(const char *ep)
{
    const char *colon = strrchr(ep, ':');
    ck_assert_ptr_nonnull(colon);
    return atoi(colon + 1);
}

static size_t put_property(uint8_t *out, const char *name, const char *value)
{
    size_t n = strlen(name), v = strlen(value);
    out[0] = (uint8_t)n;
    memcpy(out + 1, name, n);
    out[1 + n] = (uint8_t)(v >> 24);
    out[2 + n] = (uint8_t)(v >> 16);
    out[3 + n] = (uint8_t)(v >> 8);
    out[4 + n] = (uint8_t)v;
    memcpy(out + 5 + n, value, v);
    return 5 + n + v;
}

/* Greeting, then a READY with count extra properties "P<i>" after
 * Socket-Type DEALER and Identity "raw" and X-Custom, then one message. */
static size_t make_peer_bytes(uint8_t *out, int extra)
{
    size_t at = 0;
    memset(out, 0, 64);
    out[0] = 0xff;
    out[8] = 0x01;
    out[9] = 0x7f;
    out[10] = 3;
    out[11] = 1;
    memcpy(out + 12, "NULL", 4);
    at = 64;
    uint8_t body[8192];
    size_t b = 0;
    body[b++] = 5;
    memcpy(body + b, "READY", 5);
    b += 5;
    b += put_property(body + b, "Socket-Type", "DEALER");
    b += put_property(body + b, "Identity", "raw");
    b += put_property(body + b, "X-Custom", "hello");
    b += put_property(body + b, "Empty", "");
    for (int i = 0; i < extra; i++) {
        char name[16];
        snprintf(name, sizeof name, "P%d", i);
        b += put_property(body + b, name, "v");
    }
    out[at++] = 0x04 | 0x02; /* long command */
    for (int i = 7; i >= 0; i--)
        out[at++] = (uint8_t)((uint64_t)b >> (8 * i));
    memcpy(out + at, body, b);
    at += b;
    out[at++] = 0x00;
    out[at++] = 2;
    out[at++] = 'h';
    out[at++] = 'i';
    return at;
}

START_TEST(raw_ready_properties)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    char ep[256];
    zt_bind_tcp(router, ep, sizeof ep);
    static uint8_t bytes[16384];
    size_t len = make_peer_bytes(bytes, 10);
    raw_fd fd = raw_connect(port_of(ep));
    raw_send(fd, bytes, len);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    ck_assert_int_ge(zlink_msg_recv(&msg, router, 0), 0); /* routing id */
    ck_assert_uint_eq(zlink_msg_size(&msg), 3);
    recv_last_part(router, &msg);
    ck_assert_uint_eq(zlink_msg_size(&msg), 2);
    expect_property(&msg, "X-Custom", "hello");
    expect_property(&msg, "Empty", "");
    expect_property(&msg, "P9", "v");
    expect_property(&msg, "Identity", "raw");
    expect_property(&msg, "Peer-Address", "127.0.0.1");
    zlink_msg_close(&msg);
    raw_close(fd);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* More properties than the bounds keep (64, metadata.h): the connection
 * stands, and the first ones are kept. */
START_TEST(raw_ready_too_many_properties)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    char ep[256];
    zt_bind_tcp(router, ep, sizeof ep);
    static uint8_t bytes[16384];
    size_t len = make_peer_bytes(bytes, 100);
    raw_fd fd = raw_connect(port_of(ep));
    raw_send(fd, bytes, len);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    recv_last_part(router, &msg);
    expect_property(&msg, "X-Custom", "hello");
    expect_property(&msg, "P59", "v");
    expect_property(&msg, "P60", NULL);
    expect_property(&msg, "P99", NULL);
    expect_property(&msg, "Peer-Address", "127.0.0.1");
    zlink_msg_close(&msg);
    raw_close(fd);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* ---- a libzmq peer ---- */

static char peer_path[1024];

START_TEST(libzmq_dealer)
{
    if (peer_path[0] == '\0')
        return; /* no libzmq peer in this build (printed by main) */
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    char ep[256];
    zt_bind_tcp(router, ep, sizeof ep);
    struct peer p;
    char *args[] = {peer_path, "DEALER", "connect", ep,
                    "send",    "1",      "bob",     NULL};
    peer_start(&p, args, false);
    zt_set_int(router, ZLINK_RCVTIMEO, 10000);
    zlink_msg_t id, body;
    zlink_msg_init(&id);
    zlink_msg_init(&body);
    ck_assert_int_ge(zlink_msg_recv(&id, router, 0), 0);
    ck_assert_int_ge(zlink_msg_recv(&body, router, 0), 0);
    expect_property(&body, "Socket-Type", "DEALER");
    expect_property(&body, "Identity", "bob");
    expect_property(&body, "Peer-Address", "127.0.0.1");
    /* The peer waits for its message back before it exits. */
    ck_assert_int_ge(zlink_msg_send(&id, router, ZLINK_SNDMORE), 0);
    ck_assert_int_ge(zlink_msg_send(&body, router, 0), 0);
    ck_assert_int_eq(peer_wait(&p), 0);
    peer_close(&p);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("metadata");
    TCase *tc = tcase_create("gets");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, tcp_dealer_to_router);
    tcase_add_test(tc, router_id_frame_has_properties);
    tcase_add_test(tc, tcp6_pair);
    tcase_add_test(tc, ipc_peer_address);
    tcase_add_test(tc, inproc_and_local_have_none);
    tcase_add_test(tc, survives_disconnect);
    tcase_add_test(tc, raw_ready_properties);
    tcase_add_test(tc, raw_ready_too_many_properties);
    tcase_add_test(tc, libzmq_dealer);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (!peer_find("zmq_peer", peer_path, sizeof peer_path)) {
        printf("metadata: libzmq peer not built, its case skipped\n");
        peer_path[0] = '\0';
    }
    atexit(peer_kill_running);
    return zl_test_run(suite());
}
