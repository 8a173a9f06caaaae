/* test_direct_recv_poll.c — zlink_poll and zlink_poller_wait reading one
 * socket's connection themselves while they sleep (poll.c,
 * watch_connection; poller.c, watch_begins): a message read there is held
 * for the next receive, before anything in the pipe. Round trips through
 * a poll and a poller for PAIR, DEALER, ROUTER, REQ and REP (which take a
 * held message only when it is read); messages in bursts drained in
 * order; what a held message looks like from
 * outside (ZLINK_EVENTS, a poll that does not wait, a close that never
 * reads it, a context shut down); and hostile bytes from a raw peer while
 * the poll sleeps, which close the connection as they do without the
 * path. Where the backend cannot read from another thread, the same
 * traffic must flow with no direct read at all. */

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "direct_recv_testutil.h"
#include "pipe.h"
#include "socket.h"

#define ROUND_TRIPS 200

static const size_t sizes[] = {0, 1, 64, 200, 2048, 2049, 9000};
#define SIZES (sizeof sizes / sizeof sizes[0])

static bool multipart(unsigned i)
{
    return i % 6 == 4;
}

/* Waits in zlink_poll for input on s alone, as a client that watches a
 * timeout does. */
static void poll_in(void *s, long timeout)
{
    zlink_pollitem_t item = {.socket = s, .events = ZLINK_POLLIN};
    ck_assert_int_eq(zlink_poll(&item, 1, timeout), 1);
    ck_assert_int_eq(item.revents, ZLINK_POLLIN);
}

/* The same in a zlink_poller that holds s (poller.c, watch_begins), as a
 * zpoller or a game client's loop waits. */
static void poller_in(void *poller, void *s, long timeout)
{
    zlink_poller_event_t event;
    ck_assert_int_eq(zlink_poller_wait(poller, &event, timeout), 0);
    ck_assert_ptr_eq(event.socket, s);
    ck_assert_int_eq(event.events, ZLINK_POLLIN);
}

static void *poller_of(void *s)
{
    void *poller = zlink_poller_new();
    ck_assert_ptr_nonnull(poller);
    ck_assert_int_eq(zlink_poller_add(poller, s, NULL, ZLINK_POLLIN), 0);
    return poller;
}

/* A tcp PAIR with a peer: beside another socket whose connection a poll
 * could watch, the poll watches neither (two candidates), so its thread
 * never reads directly. */
static void *connected_idle(void *ctx, void **peer)
{
    void *s = zt_socket(ctx, ZLINK_PAIR);
    *peer = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    ck_assert(zt_join(s, *peer, ZT_TCP4, ep, sizeof ep));
    return s;
}

/* The echo side waits in a poll over two sockets, which never reads
 * directly, so that every direct read is the side under test's; or
 * (alone) over its echo socket only, when both sides are under test. */
typedef struct echo_side {
    void *echo, *idle, *idle_peer;
    bool alone;
    unsigned rounds;
} echo_side;

/* Reads a whole message, then sends it back: a REP may answer only once
 * it has read all of the request. */
#define ECHO_PARTS_MAX 4

static void echo_loop(void *arg)
{
    echo_side *e = arg;
    for (unsigned i = 0; i < e->rounds; i++) {
        zlink_pollitem_t items[2] = {
            {.socket = e->echo, .events = ZLINK_POLLIN},
            {.socket = e->idle, .events = ZLINK_POLLIN}};
        ck_assert_int_eq(zlink_poll(items, e->alone ? 1 : 2, ZT_TIMEOUT_MS), 1);
        zlink_msg_t parts[ECHO_PARTS_MAX];
        int n = 0;
        do {
            ck_assert_int_lt(n, ECHO_PARTS_MAX);
            zlink_msg_init(&parts[n]);
            ck_assert_int_ge(zlink_msg_recv(&parts[n], e->echo, ZLINK_DONTWAIT),
                             0);
        } while (zlink_msg_more(&parts[n++]));
        for (int k = 0; k < n; k++) {
            ck_assert_int_ge(zlink_msg_send(&parts[k], e->echo,
                                            k + 1 < n ? ZLINK_SNDMORE : 0),
                             0);
            zlink_msg_close(&parts[k]);
        }
    }
}

/* The side under test waits in zlink_poll, or (with_poller) in a
 * zlink_poller. */
static void poll_round_trips(int transport, int waiter_type, int echo_type,
                             bool echo_alone, bool with_poller)
{
    void *ctx = zt_ctx();
    echo_side e = {.echo = zt_socket(ctx, echo_type),
                   .alone = echo_alone,
                   .rounds = ROUND_TRIPS};
    e.idle = connected_idle(ctx, &e.idle_peer);
    void *waiter = zt_socket(ctx, waiter_type);
    bool router = waiter_type == ZLINK_ROUTER;
    if (router) {
        /* The echoing DEALER is "w"; the first send waits until the
         * ROUTER knows it. */
        zlink_setsockopt(e.echo, ZLINK_ROUTING_ID, "w", 1);
        zt_set_int(waiter, ZLINK_ROUTER_MANDATORY, 1);
    }
    char ep[300];
    if (!zt_join(e.echo, waiter, transport, ep, sizeof ep)) {
        zt_close(waiter);
        zt_close(e.echo);
        zt_close(e.idle);
        zt_close(e.idle_peer);
        zt_term(ctx);
        return;
    }
    void *poller = with_poller ? poller_of(waiter) : NULL;
    unsigned before = zl_direct_recvs_total();
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, echo_loop, &e), 0);
    for (int tries = 0; router && tries < 500; tries++) {
        if (zlink_send(waiter, "w", 1, ZLINK_SNDMORE | ZLINK_DONTWAIT) == 1)
            break;
        ck_assert_int_eq(zlink_errno(), EHOSTUNREACH);
        zl_test_sleep_ms(10);
    }
    for (unsigned i = 0; i < ROUND_TRIPS; i++) {
        size_t size = sizes[i % SIZES];
        if (router && i > 0)
            zt_send_str(waiter, "w", ZLINK_SNDMORE);
        if (multipart(i))
            zt_send_part(waiter, 3, i + 500u, ZLINK_SNDMORE);
        zt_send_part(waiter, size, i, 0);
        long timeout = i % 2 ? -1 : ZT_TIMEOUT_MS;
        if (poller)
            poller_in(poller, waiter, timeout);
        else
            poll_in(waiter, timeout);
        if (router) {
            /* Behind the DEALER's routing id, as ever. */
            zt_recv_str(waiter, "w");
            ck_assert_int_eq(zt_get_int(waiter, ZLINK_RCVMORE), 1);
        }
        if (multipart(i))
            zt_recv_part(waiter, 3, i + 500u, true);
        zlink_msg_t msg;
        zlink_msg_init(&msg);
        ck_assert_int_eq(zlink_msg_recv(&msg, waiter, ZLINK_DONTWAIT),
                         zt_size_rc(size));
        zt_check_bytes(zlink_msg_data(&msg), size, i);
        ck_assert_int_eq(zt_get_int(waiter, ZLINK_RCVMORE), 0);
        zlink_msg_close(&msg);
        /* The poll held nothing more (a REQ has nothing to wait for). */
        char c;
        zt_expect_errno(zlink_recv(waiter, &c, 1, ZLINK_DONTWAIT),
                        waiter_type == ZLINK_REQ ? EFSM : EAGAIN);
    }
    uv_thread_join(&t);
    zt_check_direct_reads(before);
    if (poller)
        ck_assert_int_eq(zlink_poller_destroy(&poller), 0);
    zt_close(waiter);
    zt_close(e.echo);
    zt_close(e.idle);
    zt_close(e.idle_peer);
    zt_term(ctx);
}

START_TEST(pair_poll_round_trips)
{
    poll_round_trips(_i == 0 ? ZT_TCP4 : ZT_IPC, ZLINK_PAIR, ZLINK_PAIR, false,
                     false);
}
END_TEST

START_TEST(dealer_poll_round_trips)
{
    poll_round_trips(ZT_TCP4, ZLINK_DEALER, ZLINK_DEALER, false, false);
}
END_TEST

/* A ROUTER server waiting in a poll, one DEALER client. */
START_TEST(router_poll_round_trips)
{
    poll_round_trips(ZT_TCP4, ZLINK_ROUTER, ZLINK_DEALER, false, false);
}
END_TEST

/* zguide's lazy pirate: a REQ client that polls for its reply with a
 * timeout; and a REP server polling its one socket too. */
START_TEST(req_rep_poll_round_trips)
{
    poll_round_trips(_i == 0 ? ZT_TCP4 : ZT_IPC, ZLINK_REQ, ZLINK_REP, true,
                     false);
}
END_TEST

/* The same through a zlink_poller: PAIR over tcp and ipc, a DEALER, a
 * ROUTER server, and a REQ client (its REP polling alone). */
START_TEST(poller_round_trips)
{
    static const struct {
        int transport, waiter_type, echo_type;
    } cases[] = {{ZT_TCP4, ZLINK_PAIR, ZLINK_PAIR},
                 {ZT_IPC, ZLINK_PAIR, ZLINK_PAIR},
                 {ZT_TCP4, ZLINK_DEALER, ZLINK_DEALER},
                 {ZT_TCP4, ZLINK_ROUTER, ZLINK_DEALER},
                 {ZT_TCP4, ZLINK_REQ, ZLINK_REP}};
    poll_round_trips(cases[_i].transport, cases[_i].waiter_type,
                     cases[_i].echo_type, cases[_i].echo_type == ZLINK_REP,
                     true);
}
END_TEST

/* Bursts with pauses: some messages are read by the I/O thread, some by
 * the poll; a receiver that drains after each poll sees them all, once,
 * in order. */
#define BURST_MESSAGES 600

static void burst_sender(void *arg)
{
    void *s = arg;
    for (unsigned i = 0; i < BURST_MESSAGES; i++) {
        size_t size = sizes[(i * 7) % SIZES];
        if (multipart(i))
            zt_send_part(s, 2, i + 5000u, ZLINK_SNDMORE);
        zt_send_part(s, size, i, 0);
        /* A pause in which the receiver drains and sleeps again, even on
         * a loaded machine: the next burst's first message may then be
         * read directly. */
        if (i % 9 == 0)
            zl_test_sleep_ms(3);
    }
}

START_TEST(poll_then_drain_keeps_order)
{
    void *ctx = zt_ctx();
    void *sender = zt_socket(ctx, ZLINK_PAIR);
    void *receiver = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    ck_assert(zt_join(receiver, sender, ZT_TCP4, ep, sizeof ep));
    unsigned before = zl_direct_recvs_total();
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, burst_sender, sender), 0);
    unsigned next = 0;
    while (next < BURST_MESSAGES) {
        poll_in(receiver, ZT_TIMEOUT_MS);
        for (;;) {
            size_t size = sizes[(next * 7) % SIZES];
            zlink_msg_t msg;
            zlink_msg_init(&msg);
            int rc = zlink_msg_recv(&msg, receiver, ZLINK_DONTWAIT);
            if (rc < 0) {
                ck_assert_int_eq(zlink_errno(), EAGAIN);
                zlink_msg_close(&msg);
                break;
            }
            if (multipart(next)) {
                ck_assert_int_eq(rc, 2);
                zt_check_bytes(zlink_msg_data(&msg), 2, next + 5000u);
                ck_assert(zlink_msg_more(&msg));
                zlink_msg_close(&msg);
                zlink_msg_init(&msg);
                rc = zlink_msg_recv(&msg, receiver, ZLINK_DONTWAIT);
            }
            ck_assert_int_eq(rc, zt_size_rc(size));
            zt_check_bytes(zlink_msg_data(&msg), size, next);
            ck_assert(!zlink_msg_more(&msg));
            zlink_msg_close(&msg);
            next++;
        }
    }
    uv_thread_join(&t);
    zt_check_direct_reads(before);
    zt_close(sender);
    zt_close(receiver);
    zt_term(ctx);
}
END_TEST

/* Starts send_later(arg) on a thread and waits in one poll until s is
 * readable: the poll read that one message itself, where the backend can.
 * Should the poll begin before the engine is done with the handshake's
 * input, the engine raises it when it opens the port, and its next sleep
 * watches. */
static void poll_one_sent_later(void *s, void (*send_later)(void *), void *arg)
{
    unsigned before = zl_direct_recvs_total();
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, send_later, arg), 0);
    poll_in(s, ZT_TIMEOUT_MS);
    uv_thread_join(&t);
    if (ZL_BACKEND_TRY_READ)
        ck_assert_uint_eq(zl_direct_recvs_total() - before, 1);
}

/* A message the poll held: POLLIN in ZLINK_EVENTS and in a poll that does
 * not wait, until it is read; a close that never reads it frees it (the
 * sanitizers judge); a context shut down ends the receive with ETERM. */
static void send_one_later(void *arg)
{
    zl_test_sleep_ms(100);
    zt_send_part(arg, 1000, 77, 0);
}

START_TEST(held_message_from_outside)
{
    bool read_after_shutdown = _i == 1;
    void *ctx = zt_ctx();
    void *sender = zt_socket(ctx, ZLINK_PAIR);
    void *receiver = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    ck_assert(zt_join(receiver, sender, ZT_TCP4, ep, sizeof ep));
    poll_one_sent_later(receiver, send_one_later, sender);
    ck_assert(zt_get_int(receiver, ZLINK_EVENTS) & ZLINK_POLLIN);
    poll_in(receiver, 0);
    if (read_after_shutdown) {
        ck_assert_int_eq(zlink_ctx_shutdown(ctx), 0);
        char c;
        zt_expect_errno(zlink_recv(receiver, &c, 1, 0), ETERM);
    }
    zt_close(sender);
    zt_close(receiver);
    zt_term(ctx);
}
END_TEST

/* ---- REQ and REP: a held message is not read yet ---- */

typedef struct replier {
    void *rep, *idle, *idle_peer;
    int replies;
} replier;

/* Echoes each request a while after it came, so that the other side's
 * poll is long asleep, watching, when the reply arrives. Waits in a poll
 * over two sockets, which never reads directly. */
static void reply_later(void *arg)
{
    replier *r = arg;
    for (int i = 0; i < r->replies; i++) {
        zlink_pollitem_t items[2] = {
            {.socket = r->rep, .events = ZLINK_POLLIN},
            {.socket = r->idle, .events = ZLINK_POLLIN}};
        ck_assert_int_eq(zlink_poll(items, 2, ZT_TIMEOUT_MS), 1);
        char buf[16];
        int n = zlink_recv(r->rep, buf, sizeof buf, ZLINK_DONTWAIT);
        ck_assert_int_gt(n, 0);
        zl_test_sleep_ms(100);
        ck_assert_int_eq(zlink_send(r->rep, buf, (size_t)n, 0), n);
    }
}

/* A REQ holding its reply behaves as libzmq's with the reply queued: POLLIN
 * and no POLLOUT, EFSM for another request; read, it may send again. With
 * REQ_RELAXED a new request makes the held reply stale: the receive
 * returns the new request's reply, never the old one. */
START_TEST(req_holding_its_reply)
{
    bool relaxed = _i == 1;
    void *ctx = zt_ctx();
    void *req = zt_socket(ctx, ZLINK_REQ);
    replier r = {.rep = zt_socket(ctx, ZLINK_REP), .replies = relaxed ? 2 : 1};
    r.idle = connected_idle(ctx, &r.idle_peer);
    if (relaxed)
        zt_set_int(req, ZLINK_REQ_RELAXED, 1);
    char ep[300];
    ck_assert(zt_join(r.rep, req, ZT_TCP4, ep, sizeof ep));
    unsigned before = zl_direct_recvs_total();
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, reply_later, &r), 0);
    zt_send_str(req, "one", 0);
    poll_in(req, ZT_TIMEOUT_MS);
    if (ZL_BACKEND_TRY_READ)
        ck_assert_uint_eq(zl_direct_recvs_total() - before, 1);
    /* A relaxed REQ may always send: POLLOUT, as libzmq's. */
    ck_assert_int_eq(zt_get_int(req, ZLINK_EVENTS),
                     relaxed ? ZLINK_POLLIN | ZLINK_POLLOUT : ZLINK_POLLIN);
    if (!relaxed) {
        zt_expect_errno(zlink_send(req, "x", 1, ZLINK_DONTWAIT), EFSM);
        zt_recv_str(req, "one");
    } else {
        zt_send_str(req, "two", 0);
        zt_recv_str(req, "two");
    }
    ck_assert_int_eq(zt_get_int(req, ZLINK_EVENTS), ZLINK_POLLOUT);
    uv_thread_join(&t);
    zt_close(req);
    zt_close(r.rep);
    zt_close(r.idle);
    zt_close(r.idle_peer);
    zt_term(ctx);
}
END_TEST

/* A REP holding a request has not read it: no POLLOUT, and EFSM for a
 * reply; read, its reply goes back to the requester. Should the requester
 * be gone by the time the request is read (_i == 1), the request is still
 * read and its reply dropped, as libzmq's REP does. */
static void request_later(void *arg)
{
    zl_test_sleep_ms(100);
    zt_send_str(arg, "ask", 0);
}

START_TEST(rep_holding_a_request)
{
    bool requester_gone = _i == 1;
    void *ctx = zt_ctx();
    void *rep = zt_socket(ctx, ZLINK_REP);
    void *req = zt_socket(ctx, ZLINK_REQ);
    char ep[300];
    ck_assert(zt_join(rep, req, ZT_TCP4, ep, sizeof ep));
    poll_one_sent_later(rep, request_later, req);
    ck_assert_int_eq(zt_get_int(rep, ZLINK_EVENTS), ZLINK_POLLIN);
    zt_expect_errno(zlink_send(rep, "x", 1, ZLINK_DONTWAIT), EFSM);
    if (requester_gone) {
        zt_close(req);
        req = NULL;
        /* Until the REP has taken in the end of that connection. */
        for (int i = 0; i < 20; i++) {
            zl_test_sleep_ms(10);
            (void)zt_get_int(rep, ZLINK_EVENTS);
        }
    }
    zt_recv_str(rep, "ask");
    ck_assert_int_eq(zt_get_int(rep, ZLINK_EVENTS), ZLINK_POLLOUT);
    zt_send_str(rep, "answer", 0);
    if (req) {
        zt_recv_str(req, "answer");
        zt_close(req);
    }
    zt_close(rep);
    zt_term(ctx);
}
END_TEST

/* ---- a raw ZMTP peer ---- */

/* A zlink PAIR bound on tcp, and a raw ZMTP 3.1 PAIR connected to it. */
typedef struct raw_peer {
    void *ctx, *pair;
    raw_fd fd;
} raw_peer;

static raw_peer raw_peer_open(void)
{
    raw_sockets_init();
    raw_peer f = {.ctx = zt_ctx()};
    f.pair = zt_socket(f.ctx, ZLINK_PAIR);
    char ep[300];
    zt_bind_tcp(f.pair, ep, sizeof ep);
    f.fd = zt_raw_pair(atoi(strrchr(ep, ':') + 1));
    return f;
}

static void raw_peer_close(raw_peer *f)
{
    raw_close(f->fd);
    zt_close(f->pair);
    zt_term(f->ctx);
}

typedef struct raw_later {
    raw_fd fd;
    const uint8_t *bytes;
    size_t len;
} raw_later;

static void raw_send_later(void *arg)
{
    raw_later *l = arg;
    zl_test_sleep_ms(30);
    raw_send(l->fd, l->bytes, l->len);
}

/* While the poll or the poller sleeps: a good message is held and read;
 * then reserved flags, a command with MORE, and a frame cut short by the
 * peer's exit, each of which the engine judges as it always does. */
enum {
    RAW_GOOD,
    RAW_RESERVED_FLAGS,
    RAW_COMMAND_WITH_MORE,
    RAW_CUT,
    RAW_CASES
};

START_TEST(raw_peer_while_polling)
{
    bool with_poller = _i >= RAW_CASES;
    int raw_case = _i % RAW_CASES;
    raw_peer f = raw_peer_open();
    void *pair = f.pair;
    raw_fd fd = f.fd;
    uint8_t bytes[64];
    size_t len = 0;
    switch (raw_case) {
    case RAW_GOOD:
        len = zt_put_frame(bytes, 0, "hello", 5);
        break;
    case RAW_RESERVED_FLAGS:
        len = zt_put_frame(bytes, 0x80, "abc", 3);
        break;
    case RAW_COMMAND_WITH_MORE:
        len = zt_put_frame(bytes, 0x05, "\x04PING\0\0", 7);
        break;
    case RAW_CUT:
        len = zt_put_frame(bytes, 0, "0123456789", 10) - 5;
        break;
    }
    raw_later l = {fd, bytes, len};
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, raw_send_later, &l), 0);
    long timeout = raw_case == RAW_GOOD ? ZT_TIMEOUT_MS : 300;
    int rc;
    if (with_poller) {
        void *poller = poller_of(pair);
        zlink_poller_event_t event;
        rc = zlink_poller_wait(poller, &event, timeout) == 0;
        ck_assert_int_eq(zlink_poller_destroy(&poller), 0);
    } else {
        zlink_pollitem_t item = {.socket = pair, .events = ZLINK_POLLIN};
        rc = zlink_poll(&item, 1, timeout);
    }
    uv_thread_join(&t);
    if (raw_case == RAW_GOOD) {
        ck_assert_int_eq(rc, 1);
        zt_recv_str(pair, "hello");
    } else {
        ck_assert_int_eq(rc, 0);
        if (raw_case == RAW_CUT)
            raw_shutdown_send(fd);
        else
            ck_assert(raw_closed_by_peer(fd, 5000));
        /* Nothing was delivered; the socket still answers. */
        char c;
        zt_expect_errno(zlink_recv(pair, &c, 1, ZLINK_DONTWAIT), EAGAIN);
    }
    raw_peer_close(&f);
}
END_TEST

/* A poll over a tcp PAIR beside an inproc PAIR (a thread's control
 * socket, as a zactor has): the tcp socket is the one whose connection
 * the poll may watch, and its replies are read directly; messages on the
 * inproc socket still wake the poll, and a reply that came meanwhile is
 * left to the I/O thread, never lost. The same in a zlink_poller, with a
 * raw fd beside them that becomes readable now and then. The echo side
 * polls over two tcp sockets (echo_loop), which never reads directly:
 * every direct read is the waiter's. */
#define BESIDE_ROUNDS 100

/* What one wait beside found ready. */
typedef struct beside_ready {
    bool reply, control, flag;
} beside_ready;

/* Waits on the waiter and its control socket: in zlink_poll, or in a
 * zlink_poller that also holds a raw fd (another poller's handle, raised
 * by a message to its own socket). */
static beside_ready wait_beside(void *waiter, void *control, void *poller)
{
    beside_ready r = {0};
    if (!poller) {
        zlink_pollitem_t items[2] = {
            {.socket = waiter, .events = ZLINK_POLLIN},
            {.socket = control, .events = ZLINK_POLLIN}};
        ck_assert_int_ge(zlink_poll(items, 2, ZT_TIMEOUT_MS), 1);
        r.reply = items[0].revents & ZLINK_POLLIN;
        r.control = items[1].revents & ZLINK_POLLIN;
        return r;
    }
    zlink_poller_event_t events[3];
    int n = zlink_poller_wait_all(poller, events, 3, ZT_TIMEOUT_MS);
    ck_assert_int_ge(n, 1);
    for (int k = 0; k < n; k++) {
        ck_assert_int_eq(events[k].events, ZLINK_POLLIN);
        if (events[k].socket == waiter)
            r.reply = true;
        else if (events[k].socket == control)
            r.control = true;
        else
            r.flag = events[k].socket == NULL;
    }
    return r;
}

START_TEST(poll_beside_an_inproc_socket)
{
    bool with_poller = _i == 1;
    void *ctx = zt_ctx();
    void *waiter = zt_socket(ctx, ZLINK_PAIR);
    void *control = zt_socket(ctx, ZLINK_PAIR);
    void *controller = zt_socket(ctx, ZLINK_PAIR);
    void *flag = zt_socket(ctx, ZLINK_PAIR);
    void *flagger = zt_socket(ctx, ZLINK_PAIR);
    echo_side e = {.echo = zt_socket(ctx, ZLINK_PAIR), .rounds = BESIDE_ROUNDS};
    e.idle = connected_idle(ctx, &e.idle_peer);
    char ep[300];
    ck_assert(zt_join(e.echo, waiter, ZT_TCP4, ep, sizeof ep));
    ck_assert(zt_join(control, controller, ZT_INPROC, ep, sizeof ep));
    ck_assert(zt_join(flag, flagger, ZT_INPROC, ep, sizeof ep));
    void *poller = NULL, *flag_poller = NULL;
    if (with_poller) {
        poller = poller_of(waiter);
        ck_assert_int_eq(zlink_poller_add(poller, control, NULL, ZLINK_POLLIN),
                         0);
        flag_poller = poller_of(flag);
        zlink_fd_t fd;
        ck_assert_int_eq(zlink_poller_fd(flag_poller, &fd), 0);
        ck_assert_int_eq(zlink_poller_add_fd(poller, fd, NULL, ZLINK_POLLIN),
                         0);
    }
    unsigned before = zl_direct_recvs_total();
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, echo_loop, &e), 0);
    for (unsigned i = 0; i < BESIDE_ROUNDS; i++) {
        zt_send_part(waiter, 64, i, 0);
        bool commanded = i % 10 == 5, flagged = with_poller && i % 10 == 8;
        if (commanded)
            zt_send_str(controller, "tick", 0);
        if (flagged)
            zt_send_str(flagger, "flag", 0);
        bool replied = false, ticked = false, seen_flag = false;
        while (!replied || (commanded && !ticked) || (flagged && !seen_flag)) {
            beside_ready r = wait_beside(waiter, control, poller);
            if (r.control) {
                ck_assert(commanded && !ticked);
                zt_recv_str(control, "tick");
                ticked = true;
            }
            if (r.flag) {
                ck_assert(flagged && !seen_flag);
                zt_recv_str(flag, "flag");
                seen_flag = true;
            }
            if (r.reply) {
                ck_assert(!replied);
                zlink_msg_t msg;
                zlink_msg_init(&msg);
                ck_assert_int_eq(zlink_msg_recv(&msg, waiter, ZLINK_DONTWAIT),
                                 64);
                zt_check_bytes(zlink_msg_data(&msg), 64, i);
                zlink_msg_close(&msg);
                replied = true;
            }
        }
    }
    uv_thread_join(&t);
    zt_check_direct_reads(before);
    if (with_poller) {
        ck_assert_int_eq(zlink_poller_destroy(&poller), 0);
        ck_assert_int_eq(zlink_poller_destroy(&flag_poller), 0);
    }
    zt_close(waiter);
    zt_close(control);
    zt_close(controller);
    zt_close(flag);
    zt_close(flagger);
    zt_close(e.echo);
    zt_close(e.idle);
    zt_close(e.idle_peer);
    zt_term(ctx);
}
END_TEST

/* A PING that the poll's watch leaves to the engine, then a message: the
 * poll, which then found the port closed while the engine answered the
 * PING, is raised when the engine opens it again, and its next sleep
 * reads the message itself. */
static void ping_then_message(void *arg)
{
    raw_fd fd = *(raw_fd *)arg;
    uint8_t bytes[64];
    static const char ping[] = "\x04PING\0\0ctx";
    zl_test_sleep_ms(30);
    raw_send(fd, bytes, zt_put_frame(bytes, 0x04, ping, sizeof ping - 1));
    zl_test_sleep_ms(100);
    raw_send(fd, bytes, zt_put_frame(bytes, 0, "after", 5));
}

START_TEST(poll_after_a_ping_reads_directly)
{
    raw_peer f = raw_peer_open();
    void *pair = f.pair;
    raw_fd fd = f.fd;
    unsigned before = zl_direct_recvs_total();
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, ping_then_message, &fd), 0);
    zlink_pollitem_t item = {.socket = pair, .events = ZLINK_POLLIN};
    ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
    uv_thread_join(&t);
    if (ZL_BACKEND_TRY_READ)
        ck_assert_uint_eq(zl_direct_recvs_total() - before, 1);
    zt_recv_str(pair, "after");
    uint8_t flags, body[64];
    size_t size;
    ck_assert(zt_read_frame(fd, &flags, body, sizeof body, &size));
    ck_assert_uint_eq(size, 8);
    ck_assert(memcmp(body, "\x04PONGctx", 8) == 0);
    raw_peer_close(&f);
}
END_TEST

/* A message the engine read before the port opened waits in the pipe,
 * but the command that announces it has not reached the socket yet: an
 * I/O thread holds such signals back until its turn ends when the owner
 * sleeps on its CPU (zl_mailbox_hold_signals). The test lowers the flag
 * that command raised, as if its signal were still held. Input the
 * thread then finds on the connection came later: a poll or a poller does
 * not take it before the message in the pipe. (A blocking receive reads
 * the pipe before it watches.) Only where a thread can read directly:
 * elsewhere the flag, never raised again, would leave the wait asleep. */
typedef struct send_when_watched {
    zl_recv_port *port;
    raw_later send;
} send_when_watched;

static void send_once_watched(void *arg)
{
    send_when_watched *w = arg;
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (!zl_recv_port_is_watched(w->port) && zl_test_now_ms() < deadline)
        zl_test_sleep_ms(1);
    raw_send(w->send.fd, w->send.bytes, w->send.len);
}

START_TEST(older_message_in_the_pipe_comes_first)
{
    if (!ZL_BACKEND_TRY_READ)
        return;
    raw_peer f = raw_peer_open();
    void *pair = f.pair;
    raw_fd fd = f.fd;
    zl_socket *s = zl_socket_from_handle(pair);
    /* Attached, and asleep on its pipe: the next message is announced. */
    char c;
    for (int i = 0; i < 500 && s->pipe_count == 0; i++) {
        zt_expect_errno(zlink_recv(pair, &c, 1, ZLINK_DONTWAIT), EAGAIN);
        zl_test_sleep_ms(2);
    }
    ck_assert_uint_eq(s->pipe_count, 1);
    zt_expect_errno(zlink_recv(pair, &c, 1, ZLINK_DONTWAIT), EAGAIN);
    zl_recv_port *port = zl_pipe_recv_port(s->pipes[0]);
    uint8_t first[16], second[16];
    raw_send(fd, first, zt_put_frame(first, 0, "first", 5));
    /* Read into the pipe and announced, and the port open again. */
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (!(zl_pipe_has_published(s->pipes[0]) &&
             zl_socket_commands_pending(s) && zl_recv_port_is_open(port)) &&
           zl_test_now_ms() < deadline)
        zl_test_sleep_ms(1);
    ck_assert(zl_socket_commands_pending(s) && zl_recv_port_is_open(port));
    atomic_store(&s->commands_pending, false);
    send_when_watched later = {
        port, {fd, second, zt_put_frame(second, 0, "second", 6)}};
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, send_once_watched, &later), 0);
    if (_i == 0) {
        poll_in(pair, ZT_TIMEOUT_MS);
    } else {
        void *poller = poller_of(pair);
        poller_in(poller, pair, ZT_TIMEOUT_MS);
        ck_assert_int_eq(zlink_poller_destroy(&poller), 0);
    }
    zt_recv_str(pair, "first");
    uv_thread_join(&t);
    zt_set_int(pair, ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
    zt_recv_str(pair, "second");
    raw_peer_close(&f);
}
END_TEST

static Suite *direct_recv_poll_suite(void)
{
    Suite *s = suite_create("direct_recv_poll");
    TCase *tc = tcase_create("direct_recv_poll");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, pair_poll_round_trips, 0, 2);
    tcase_add_test(tc, dealer_poll_round_trips);
    tcase_add_test(tc, router_poll_round_trips);
    tcase_add_loop_test(tc, req_rep_poll_round_trips, 0, 2);
    tcase_add_loop_test(tc, poller_round_trips, 0, 5);
    tcase_add_loop_test(tc, req_holding_its_reply, 0, 2);
    tcase_add_loop_test(tc, rep_holding_a_request, 0, 2);
    tcase_add_test(tc, poll_then_drain_keeps_order);
    tcase_add_loop_test(tc, held_message_from_outside, 0, 2);
    tcase_add_loop_test(tc, raw_peer_while_polling, 0, 2 * RAW_CASES);
    tcase_add_test(tc, poll_after_a_ping_reads_directly);
    tcase_add_loop_test(tc, poll_beside_an_inproc_socket, 0, 2);
    tcase_add_loop_test(tc, older_message_in_the_pipe_comes_first, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(direct_recv_poll_suite());
}
