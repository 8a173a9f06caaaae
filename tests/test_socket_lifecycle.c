/* test_socket_lifecycle.c — connections coming and going: reconnecting
 * after the peer restarts, RECONNECT_IVL, connecting before the bind,
 * LINGER on close, unbind and disconnect, and shutting a context down
 * (ETERM for calls blocked in other threads, zlink_ctx_term waiting for the
 * sockets). Uses threads. */

#include "atomics.h"
#include "raw_socket.h"
#include "socket_testutil.h"

static const int restart_transports[] = {ZT_TCP4, ZT_TCP6, ZT_IPC,
                                         ZT_IPC_ABSTRACT};
#define RESTART_TRANSPORTS 4

/* Binds a fresh binder of `type` in its own context on ep, retrying while
 * the port is still held. */
static void *bind_in_new_ctx(void **ctx, int type, const char *ep, bool ipv6)
{
    *ctx = zt_ctx();
    void *s = zt_socket(*ctx, type);
    if (ipv6)
        zt_set_int(s, ZLINK_IPV6, 1);
    zt_bind_when_free(s, ep, ZT_TIMEOUT_MS);
    return s;
}

/* The binder lives in a context of its own: terminating that context
 * guarantees its listener is gone (socket file included) before the next
 * binder takes the endpoint. */
START_TEST(reconnect_after_peer_restart)
{
    int transport = restart_transports[_i % RESTART_TRANSPORTS];
    int type = _i < RESTART_TRANSPORTS ? ZLINK_DEALER : ZLINK_PAIR;
    bool ipv6 = transport == ZT_TCP6;
    char ep[300];
    if (!zt_endpoint(transport, ep, sizeof ep))
        return;
    void *server_ctx = zt_ctx();
    void *server = zt_socket(server_ctx, type);
    if (ipv6)
        zt_set_int(server, ZLINK_IPV6, 1);
    if (zlink_bind(server, ep) != 0) {
        ck_assert_int_eq(transport, ZT_TCP6); /* no IPv6 loopback */
        zt_close(server);
        zt_term(server_ctx);
        return;
    }
    zt_last_endpoint(server, ep, sizeof ep);

    void *ctx = zt_ctx();
    void *client = zt_socket(ctx, type);
    if (ipv6)
        zt_set_int(client, ZLINK_IPV6, 1);
    zt_connect(client, ep);
    zt_send_str(client, "hello", 0);
    zt_recv_str(server, "hello");
    zt_send_str(server, "welcome", 0);
    zt_recv_str(client, "welcome");

    for (int restart = 0; restart < 2; restart++) {
        zt_close(server);
        zt_term(server_ctx);
        server = bind_in_new_ctx(&server_ctx, type, ep, ipv6);
        ck_assert_msg(zt_ping_until(client, server, "ping", ZT_TIMEOUT_MS),
                      "no reconnect over %s", zt_transport_name(transport));
        zt_send_str(server, "welcome back", 0);
        zt_recv_str(client, "welcome back");
    }
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
    zt_term(server_ctx);
}
END_TEST

/* Sends "hi" to "srv" until the server gets it: sends made while the old
 * connection is going still enter its pipe and are lost, as in libzmq. With
 * poll_events, the client also takes in its pipes' state between tries;
 * see router_reconnect_send_only. */
static void router_hi_until_received(void *client, void *server,
                                     bool poll_events)
{
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    zt_set_int(server, ZLINK_RCVTIMEO, 20);
    for (;;) {
        ck_assert_msg(zl_test_now_ms() < deadline, "srv never reached");
        if (poll_events)
            zt_get_int(client, ZLINK_EVENTS);
        if (zlink_send(client, "srv", 3, ZLINK_SNDMORE | ZLINK_DONTWAIT) != 3) {
            ck_assert(zlink_errno() == EHOSTUNREACH || zlink_errno() == EAGAIN);
            zl_test_sleep_ms(5);
            continue;
        }
        zt_send_str(client, "hi", 0);
        char id[8];
        if (zt_recv_buf(server, id, sizeof id, 0) < 0)
            continue;
        ck_assert_str_eq(id, "cli");
        zt_recv_str(server, "hi");
        break;
    }
    /* Those that were still in flight. */
    char buf[8];
    while (zt_recv_buf(server, buf, sizeof buf, 0) >= 0)
        ;
    zt_set_int(server, ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
}

static void router_reconnect_case(bool poll_events)
{
    void *server_ctx = zt_ctx();
    void *server = zt_socket(server_ctx, ZLINK_ROUTER);
    char ep[300];
    zt_bind_tcp(server, ep, sizeof ep);
    void *ctx = zt_ctx();
    void *client = zt_socket(ctx, ZLINK_ROUTER);
    zt_set_int(client, ZLINK_ROUTER_MANDATORY, 1);
    ck_assert_int_eq(
        zlink_setsockopt(client, ZLINK_CONNECT_ROUTING_ID, "srv", 3), 0);
    ck_assert_int_eq(zlink_setsockopt(client, ZLINK_ROUTING_ID, "cli", 3), 0);
    zt_connect(client, ep);
    for (int round = 0; round < 3; round++) {
        router_hi_until_received(client, server, poll_events);
        zt_close(server);
        zt_term(server_ctx);
        if (round < 2)
            server = bind_in_new_ctx(&server_ctx, ZLINK_ROUTER, ep, false);
    }
    zt_close(client);
    zt_term(ctx);
}

/* A ROUTER that names its peer with CONNECT_ROUTING_ID finds it under the
 * same name after each reconnect. */
START_TEST(router_reconnect_keeps_connect_routing_id)
{
    router_reconnect_case(true);
}
END_TEST

/* The same for a ROUTER that only sends: the dead pipe, whose delimiter no
 * recv has read, gives its id up to the reconnected peer. */
START_TEST(router_reconnect_send_only)
{
    router_reconnect_case(false);
}
END_TEST

/* RECONNECT_IVL -1: a lost connection stays lost. */
START_TEST(reconnect_disabled)
{
    void *server_ctx = zt_ctx();
    void *server = zt_socket(server_ctx, ZLINK_DEALER);
    char ep[300];
    zt_bind_tcp(server, ep, sizeof ep);
    void *ctx = zt_ctx();
    void *client = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(client, ZLINK_RECONNECT_IVL, -1);
    ck_assert_int_eq(zt_get_int(client, ZLINK_RECONNECT_IVL), -1);
    zt_connect(client, ep);
    zt_send_str(client, "hello", 0);
    zt_recv_str(server, "hello");
    zt_close(server);
    zt_term(server_ctx);
    server = bind_in_new_ctx(&server_ctx, ZLINK_DEALER, ep, false);
    /* The pipe goes with the connection: no more room to send. */
    ck_assert(zl_test_wait_events(client, ZLINK_POLLOUT, 0, ZT_TIMEOUT_MS));
    zt_expect_errno(zlink_send(client, "x", 1, ZLINK_DONTWAIT), EAGAIN);
    char buf[8];
    zt_set_int(server, ZLINK_RCVTIMEO, 300);
    zt_expect_errno(zlink_recv(server, buf, sizeof buf, 0), EAGAIN);
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
    zt_term(server_ctx);
}
END_TEST

/* Connecting to a port nobody listens on yet: refused attempts are
 * retried, and what was sent meanwhile arrives once the bind happens. */
START_TEST(connect_before_bind)
{
    void *ctx = zt_ctx();
    char ep[300];
    void *probe = zt_socket(ctx, ZLINK_PAIR);
    zt_bind_tcp(probe, ep, sizeof ep);
    zt_close(probe);
    void *client = zt_socket(ctx, _i == 0 ? ZLINK_PAIR : ZLINK_DEALER);
    zt_set_int(client, ZLINK_RECONNECT_IVL, 20);
    void *mon = zl_test_monitor_open(ctx, client, "inproc://cbb-monitor",
                                     ZLINK_EVENT_CONNECT_RETRIED);
    zt_connect(client, ep);
    zt_send_str(client, "early", 0);
    ck_assert_msg(zl_test_wait_event(mon, ZLINK_EVENT_CONNECT_RETRIED, 2,
                                     2 * ZT_TIMEOUT_MS),
                  "no refused attempts were retried");
    zt_close(mon);
    void *server_ctx;
    void *server = bind_in_new_ctx(
        &server_ctx, _i == 0 ? ZLINK_PAIR : ZLINK_DEALER, ep, false);
    zt_recv_str(server, "early");
    zt_send_str(server, "late", 0);
    zt_recv_str(client, "late");
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
    zt_term(server_ctx);
}
END_TEST

/* ---- linger ---- */

#define LINGER_COUNT 100
#define LINGER_SIZE (64 * 1024)

/* libzmq reads LINGER when the socket is closed. zlink's sessions take it
 * when they are created, so the cases that pass set it before connecting;
 * the ZLINK_TEST_PENDING ones set it just before the close. */
enum { LINGER_BEFORE_CONNECT, LINGER_AT_CLOSE };

typedef struct linger_fixture {
    void *ctx, *sender;        /* the sender's context */
    void *peer_ctx, *receiver; /* the receiver's, a context of its own */
} linger_fixture;

/* A sender whose pipe still holds most of LINGER_COUNT big messages when
 * it is closed: the receiver takes at most one into its pipe and the
 * kernel buffers are small. The receiver lives in a context of its own, so
 * the sender's can be terminated while the receiver is still there. */
static void linger_setup(linger_fixture *f, int transport, int linger, int when)
{
    char ep[300];
    f->ctx = zt_ctx();
    f->peer_ctx = zt_ctx();
    f->receiver = zt_socket(f->peer_ctx, ZLINK_DEALER);
    f->sender = zt_socket(f->ctx, ZLINK_DEALER);
    zt_set_int(f->receiver, ZLINK_RCVHWM, 1);
    zt_set_int(f->receiver, ZLINK_RCVBUF, 65536);
    zt_set_int(f->sender, ZLINK_SNDBUF, 65536);
    if (when == LINGER_BEFORE_CONNECT)
        zt_set_int(f->sender, ZLINK_LINGER, linger);
    ck_assert(zt_join(f->receiver, f->sender, transport, ep, sizeof ep));
    zt_send_str(f->sender, "up", 0);
    zt_recv_str(f->receiver, "up");
    for (unsigned n = 0; n < LINGER_COUNT; n++)
        zt_send_part(f->sender, LINGER_SIZE, n, 0);
    if (when == LINGER_AT_CLOSE)
        zt_set_int(f->sender, ZLINK_LINGER, linger);
}

/* Reads what arrives, in order; returns how many. */
static unsigned drain_numbered(void *receiver, int quiet_ms)
{
    zt_set_int(receiver, ZLINK_RCVTIMEO, quiet_ms);
    unsigned n = 0;
    while (n < LINGER_COUNT) {
        zlink_msg_t msg;
        zlink_msg_init(&msg);
        if (zlink_msg_recv(&msg, receiver, 0) < 0) {
            ck_assert_int_eq(zlink_errno(), EAGAIN);
            zlink_msg_close(&msg);
            return n;
        }
        ck_assert_uint_eq(zlink_msg_size(&msg), LINGER_SIZE);
        zt_check_bytes(zlink_msg_data(&msg), LINGER_SIZE, n);
        zlink_msg_close(&msg);
        n++;
    }
    return n;
}

/* Closing with a long LINGER: everything queued still arrives, and the
 * sender's context waits for it. */
static void linger_delivers_case(int transport, int when)
{
    if (transport == ZT_IPC && !zt_have_ipc())
        return;
    linger_fixture f;
    linger_setup(&f, transport, 10000, when);
    zt_close(f.sender);
    ck_assert_uint_eq(drain_numbered(f.receiver, ZT_TIMEOUT_MS), LINGER_COUNT);
    zt_term(f.ctx);
    zt_close(f.receiver);
    zt_term(f.peer_ctx);
}

START_TEST(linger_delivers_after_close)
{
    linger_delivers_case(_i == 0 ? ZT_TCP4 : ZT_IPC, LINGER_BEFORE_CONNECT);
}
END_TEST

/* LINGER 0: what is still queued is dropped at close, and the context
 * terminates at once. */
START_TEST(linger_zero_drops)
{
    int transport = _i == 0 ? ZT_TCP4 : ZT_IPC;
    if (transport == ZT_IPC && !zt_have_ipc())
        return;
    linger_fixture f;
    linger_setup(&f, transport, 0, LINGER_BEFORE_CONNECT);
    zt_close(f.sender);
    zt_term(f.ctx);
    unsigned got = drain_numbered(f.receiver, 300);
    ck_assert_msg(got < LINGER_COUNT, "all %u delivered despite LINGER 0", got);
    zt_close(f.receiver);
    zt_term(f.peer_ctx);
}
END_TEST

/* A finite LINGER ends the wait for a peer that does not read: the
 * sender's context terminates once it expires. */
static void linger_expires_case(int when)
{
    linger_fixture f;
    linger_setup(&f, ZT_TCP4, 200, when);
    /* Timed from before the close: the linger runs from the close, on the
     * I/O thread, so a test thread descheduled between the close and the
     * term (a loaded machine) would otherwise see less than the linger. */
    uint64_t start = zl_test_now_ms();
    zt_close(f.sender);
    zt_term(f.ctx);
    uint64_t took = zl_test_now_ms() - start;
    ck_assert_uint_ge(took, 150);
    ck_assert_uint_lt(took, ZT_TIMEOUT_MS);
    zt_close(f.receiver);
    zt_term(f.peer_ctx);
}

START_TEST(linger_expires)
{
    linger_expires_case(LINGER_BEFORE_CONNECT);
}
END_TEST

typedef struct term_call {
    void *ctx;
    int rc;
    atomic_bool done;
} term_call;

static void term_main(void *arg)
{
    term_call *t = arg;
    t->rc = zlink_ctx_term(t->ctx);
    atomic_store(&t->done, true);
}

static bool wait_done(atomic_bool *done, int ms)
{
    uint64_t deadline = zl_test_now_ms() + (uint64_t)ms;
    while (!atomic_load(done) && zl_test_now_ms() < deadline)
        zl_test_sleep_ms(2);
    return atomic_load(done);
}

/* LINGER -1 (the default): the term waits for queued messages for as long
 * as their connection lives. */
static void infinite_linger_case(int when)
{
    linger_fixture f;
    linger_setup(&f, ZT_TCP4, -1, when);
    zt_close(f.sender);
    term_call t = {.ctx = f.ctx};
    atomic_init(&t.done, false);
    uv_thread_t thread;
    ck_assert_int_eq(uv_thread_create(&thread, term_main, &t), 0);
    /* A duration, not a wait: the term must still be waiting after it. */
    zl_test_sleep_ms(200);
    ck_assert_msg(!atomic_load(&t.done), "term did not wait for the linger");
    /* Reading everything lets the sender finish. */
    ck_assert_uint_eq(drain_numbered(f.receiver, ZT_TIMEOUT_MS), LINGER_COUNT);
    ck_assert_msg(wait_done(&t.done, ZT_TIMEOUT_MS), "term never returned");
    ck_assert_int_eq(uv_thread_join(&thread), 0);
    ck_assert_int_eq(t.rc, 0);
    zt_close(f.receiver);
    zt_term(f.peer_ctx);
}

START_TEST(ctx_term_waits_for_infinite_linger)
{
    infinite_linger_case(LINGER_BEFORE_CONNECT);
}
END_TEST

/* libzmq's LINGER is the one in force at close: ZL_CMD_TERM carries it to
 * the sessions. */
START_TEST(linger_set_at_close)
{
    linger_delivers_case(_i == 0 ? ZT_TCP4 : ZT_IPC, LINGER_AT_CLOSE);
}
END_TEST

START_TEST(linger_expires_set_at_close)
{
    linger_expires_case(LINGER_AT_CLOSE);
}
END_TEST

START_TEST(infinite_linger_set_at_close)
{
    infinite_linger_case(LINGER_AT_CLOSE);
}
END_TEST

/* libzmq keeps connecting during LINGER and delivers what was queued
 * before the peer existed. */
START_TEST(linger_delivers_before_connection)
{
    void *ctx = zt_ctx();
    char ep[300];
    void *probe = zt_socket(ctx, ZLINK_PAIR);
    zt_bind_tcp(probe, ep, sizeof ep);
    zt_close(probe);
    void *sender = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(sender, ZLINK_LINGER, 5000);
    zt_set_int(sender, ZLINK_RECONNECT_IVL, 20);
    zt_connect(sender, ep);
    zt_send_str(sender, "queued", 0);
    zt_close(sender);
    void *peer_ctx;
    void *receiver = bind_in_new_ctx(&peer_ctx, ZLINK_DEALER, ep, false);
    zt_recv_str(receiver, "queued");
    zt_term(ctx);
    zt_close(receiver);
    zt_term(peer_ctx);
}
END_TEST

/* A connection lost while the socket lingers is made again, as libzmq
 * does, and what was queued goes on the next one: here the first peer
 * takes the connection and drops it before its greeting, and the real one
 * binds the port after it. */
START_TEST(linger_outlives_a_lost_connection)
{
    raw_sockets_init();
    int port = 0;
    raw_fd listener = raw_listen(4, &port);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    void *ctx = zt_ctx();
    void *sender = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(sender, ZLINK_LINGER, 5000);
    zt_set_int(sender, ZLINK_RECONNECT_IVL, 20);
    zt_connect(sender, ep);
    zt_send_str(sender, "kept", 0);
    raw_fd first = raw_accept(listener, ZT_TIMEOUT_MS);
    ck_assert(first != RAW_INVALID);
    /* The sender's greeting shows its engine runs: the close lingers on
     * a live connection. */
    ck_assert(raw_readable(first, ZT_TIMEOUT_MS));
    zt_close(sender);
    raw_close(first);
    raw_close(listener);
    void *peer_ctx;
    void *receiver = bind_in_new_ctx(&peer_ctx, ZLINK_DEALER, ep, false);
    zt_recv_str(receiver, "kept");
    zt_term(ctx);
    zt_close(receiver);
    zt_term(peer_ctx);
}
END_TEST

/* ---- terminating the context ---- */

typedef struct blocked_call {
    void *socket;
    void *ctx;
    bool send; /* else recv */
    int rc;
    int err;
    atomic_bool done;
} blocked_call;

static void blocked_main(void *arg)
{
    blocked_call *b = arg;
    char buf[16] = "x";
    b->rc = b->send ? zlink_send(b->socket, buf, 1, 0)
                    : zlink_recv(b->socket, buf, sizeof buf, 0);
    b->err = zlink_errno();
    atomic_store(&b->done, true);
}

/* A recv (or a send at the HWM) blocked forever in another thread returns
 * -1/ETERM once the context is shut down. */
START_TEST(blocked_call_gets_eterm)
{
    bool send = _i == 1;
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    void *peer = zt_socket(ctx, ZLINK_PAIR);
    zt_set_int(s, ZLINK_RCVTIMEO, -1);
    zt_set_int(s, ZLINK_SNDTIMEO, -1);
    zt_set_int(s, ZLINK_SNDHWM, 1);
    zt_set_int(peer, ZLINK_RCVHWM, 1);
    zt_bind(peer, "inproc://eterm");
    zt_connect(s, "inproc://eterm");
    if (send) {
        while (zlink_send(s, "x", 1, ZLINK_DONTWAIT) == 1)
            ;
        ck_assert_int_eq(zlink_errno(), EAGAIN);
    }
    blocked_call b = {.socket = s, .send = send};
    atomic_init(&b.done, false);
    uv_thread_t thread;
    ck_assert_int_eq(uv_thread_create(&thread, blocked_main, &b), 0);
    /* A duration, not a wait: the call must not return by itself. Whether
     * it is blocked yet or not, the shutdown below must end it. */
    zl_test_sleep_ms(50);
    ck_assert(!atomic_load(&b.done));
    ck_assert_int_eq(zlink_ctx_shutdown(ctx), 0);
    ck_assert_msg(wait_done(&b.done, ZT_TIMEOUT_MS), "still blocked");
    ck_assert_int_eq(uv_thread_join(&thread), 0);
    ck_assert_int_eq(b.rc, -1);
    ck_assert_int_eq(b.err, ETERM);
    /* Everything else on the context now says ETERM too. */
    char buf[4];
    zt_expect_errno(zlink_recv(peer, buf, sizeof buf, ZLINK_DONTWAIT), ETERM);
    zt_expect_errno(zlink_send(peer, "x", 1, ZLINK_DONTWAIT), ETERM);
    zt_expect_errno(zlink_bind(peer, "inproc://other"), ETERM);
    zt_expect_errno(zlink_connect(peer, "tcp://127.0.0.1:1"), ETERM);
    ck_assert_ptr_null(zlink_socket(ctx, ZLINK_PAIR));
    ck_assert_int_eq(zlink_errno(), ETERM);
    zlink_pollitem_t item = {peer, 0, ZLINK_POLLIN, 0};
    zt_expect_errno(zlink_poll(&item, 1, 100), ETERM);
    int events;
    size_t len = sizeof events;
    zt_expect_errno(zlink_getsockopt(peer, ZLINK_EVENTS, &events, &len), ETERM);
    /* Options too, as libzmq: only close is left. */
    zt_expect_errno(zlink_getsockopt(peer, ZLINK_SNDHWM, &events, &len), ETERM);
    zt_expect_errno(zlink_getsockopt(peer, ZLINK_RCVMORE, &events, &len),
                    ETERM);
    int linger = 0;
    zt_expect_errno(
        zlink_setsockopt(peer, ZLINK_LINGER, &linger, sizeof linger), ETERM);
    zt_close(s);
    zt_close(peer);
    zt_term(ctx);
}
END_TEST

/* zlink_ctx_term from another thread: the socket's blocking calls fail
 * with ETERM, and the term returns only once the socket is closed. */
START_TEST(ctx_term_waits_for_close)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(s, ZLINK_RCVTIMEO, -1);
    zt_bind(s, "inproc://term");
    term_call t = {.ctx = ctx};
    atomic_init(&t.done, false);
    uv_thread_t thread;
    ck_assert_int_eq(uv_thread_create(&thread, term_main, &t), 0);
    char buf[8];
    /* Blocks until the term in the other thread begins. */
    zt_expect_errno(zlink_recv(s, buf, sizeof buf, 0), ETERM);
    /* A duration, not a wait: the term must not return while s is open. */
    zl_test_sleep_ms(100);
    ck_assert_msg(!atomic_load(&t.done), "term returned with a socket open");
    zt_close(s);
    ck_assert_msg(wait_done(&t.done, ZT_TIMEOUT_MS), "term never returned");
    ck_assert_int_eq(uv_thread_join(&thread), 0);
    ck_assert_int_eq(t.rc, 0);
}
END_TEST

START_TEST(ctx_term_without_sockets)
{
    void *ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_shutdown(ctx), 0);
    zt_term(ctx);
    zt_expect_errno(zlink_ctx_term(NULL), EFAULT);
    zt_expect_errno(zlink_close(NULL), ENOTSOCK);
}
END_TEST

/* ---- unbind and disconnect ---- */

/* After unbind the bound socket's connections go: nothing to send to. */
START_TEST(send_after_unbind_fails)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_DEALER);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    char ep[300];
    if (zt_join(server, client, _i == 0 ? ZT_TCP4 : ZT_IPC, ep, sizeof ep)) {
        zt_send_str(client, "ABC", 0);
        zt_recv_str(server, "ABC");
        zt_send_str(server, "DEF", 0);
        zt_recv_str(client, "DEF");
        ck_assert_int_eq(zlink_unbind(server, ep), 0);
        ck_assert(zl_test_wait_events(server, ZLINK_POLLOUT, 0, ZT_TIMEOUT_MS));
        zt_expect_errno(zlink_send(server, "ABC", 3, ZLINK_DONTWAIT), EAGAIN);
        zt_expect_errno(zlink_unbind(server, ep), ENOENT);
    }
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

/* After disconnect the connecting socket has no pipe left. */
START_TEST(send_after_disconnect_fails)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_DEALER);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    char ep[300];
    int transport = _i == 0 ? ZT_TCP4 : ZT_INPROC;
    ck_assert(zt_join(server, client, transport, ep, sizeof ep));
    zt_send_str(client, "ABC", 0);
    zt_recv_str(server, "ABC");
    ck_assert_int_eq(zlink_disconnect(client, ep), 0);
    zt_expect_errno(zlink_send(client, "ABC", 3, ZLINK_DONTWAIT), EAGAIN);
    zt_expect_errno(zlink_disconnect(client, ep), ENOENT);
    /* The server notices too. */
    ck_assert(zl_test_wait_events(server, ZLINK_POLLOUT, 0, ZT_TIMEOUT_MS));
    /* And the client may connect again. */
    zt_connect(client, ep);
    zt_send_str(client, "again", 0);
    zt_recv_str(server, "again");
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

/* An unbound endpoint can be bound again (by another socket). */
START_TEST(rebind_after_unbind)
{
    void *ctx = zt_ctx();
    void *a = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    zt_bind_tcp(a, ep, sizeof ep);
    ck_assert_int_eq(zlink_unbind(a, ep), 0);
    void *b = zt_socket(ctx, ZLINK_PAIR);
    zt_bind_when_free(b, ep, ZT_TIMEOUT_MS);
    void *c = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(c, ep);
    zt_send_str(c, "x", 0);
    zt_recv_str(b, "x");
    /* inproc names too. */
    zt_bind(a, "inproc://again");
    ck_assert_int_eq(zlink_unbind(a, "inproc://again"), 0);
    zt_bind(a, "inproc://again");
    zt_close(a);
    zt_close(b);
    zt_close(c);
    zt_term(ctx);
}
END_TEST

static Suite *lifecycle_suite(void)
{
    Suite *s = suite_create("socket_lifecycle");
    TCase *reconnect = tcase_create("reconnect");
    tcase_set_timeout(reconnect, 60);
    tcase_add_loop_test(reconnect, reconnect_after_peer_restart, 0,
                        2 * RESTART_TRANSPORTS);
    tcase_add_test(reconnect, router_reconnect_keeps_connect_routing_id);
    tcase_add_test(reconnect, router_reconnect_send_only);
    tcase_add_test(reconnect, reconnect_disabled);
    tcase_add_loop_test(reconnect, connect_before_bind, 0, 2);
    suite_add_tcase(s, reconnect);

    TCase *linger = tcase_create("linger");
    tcase_set_timeout(linger, 60);
    tcase_add_loop_test(linger, linger_delivers_after_close, 0, 2);
    tcase_add_loop_test(linger, linger_zero_drops, 0, 2);
    tcase_add_test(linger, linger_expires);
    tcase_add_test(linger, ctx_term_waits_for_infinite_linger);
    tcase_add_loop_test(linger, linger_set_at_close, 0, 2);
    tcase_add_test(linger, linger_expires_set_at_close);
    tcase_add_test(linger, infinite_linger_set_at_close);
    tcase_add_test(linger, linger_delivers_before_connection);
    tcase_add_test(linger, linger_outlives_a_lost_connection);
    suite_add_tcase(s, linger);

    TCase *term = tcase_create("term");
    tcase_set_timeout(term, 60);
    tcase_add_loop_test(term, blocked_call_gets_eterm, 0, 2);
    tcase_add_test(term, ctx_term_waits_for_close);
    tcase_add_test(term, ctx_term_without_sockets);
    suite_add_tcase(s, term);

    TCase *ends = tcase_create("endpoints");
    tcase_add_loop_test(ends, send_after_unbind_fails, 0, 2);
    tcase_add_loop_test(ends, send_after_disconnect_fails, 0, 2);
    tcase_add_test(ends, rebind_after_unbind);
    suite_add_tcase(s, ends);
    return s;
}

int main(void)
{
    return zl_test_run(lifecycle_suite());
}
