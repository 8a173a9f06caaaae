/* test_socket_hwm.c — high-water marks end to end: PAIR, DEALER and ROUTER
 * (with ROUTER_MANDATORY) block at SNDHWM and never drop, DONTWAIT gives
 * EAGAIN and SNDTIMEO bounds the wait; messages sent before a peer exists
 * queue up to the HWM unless IMMEDIATE; a ROUTER without ROUTER_MANDATORY
 * drops at the HWM, as libzmq does. Large messages are paced (pipe.c)
 * without changing any of that: DONTWAIT still fills to the HWM, and a
 * send under the HWM neither fails nor waits forever with no reader. Uses
 * a reader thread. */
#include "socket_testutil.h"

#define HWM 10
#define MAX_FILL 200000

/* The three senders that must never drop. */
enum { KIND_PAIR, KIND_DEALER, KIND_ROUTER, KIND_COUNT };
/* Transports for these cases. */
static const int hwm_transports[] = {ZT_TCP4, ZT_IPC, ZT_INPROC};
#define HWM_TRANSPORTS 3

static const char *kind_name(int kind)
{
    return kind == KIND_PAIR     ? "PAIR"
           : kind == KIND_DEALER ? "DEALER"
                                 : "ROUTER";
}

/* Pacing's size: 256 KiB bodies are paced from 32 queued (8 MiB). */
#define LARGE_SIZE (256 * 1024)
#define LARGE_HWM 100

/* 0: the sizes below; else every message's. */
static size_t fixed_size;

static size_t msg_size(unsigned n)
{
    return fixed_size ? fixed_size : 500 + (n * 37u) % 3000u;
}

typedef struct hwm_fixture {
    void *ctx, *sender, *receiver;
    int kind, transport;
    char endpoint[300];
} hwm_fixture;

/* Sends message n; the ROUTER sends to the receiver's id "r" first. */
static int send_numbered(hwm_fixture *f, unsigned n, int flags)
{
    if (f->kind == KIND_ROUTER &&
        zlink_send(f->sender, "r", 1, ZLINK_SNDMORE | flags) != 1)
        return -1;
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init_size(&msg, msg_size(n)), 0);
    zt_fill(zlink_msg_data(&msg), msg_size(n), n);
    int rc = zlink_msg_send(&msg, f->sender, flags);
    int err = zlink_errno();
    zlink_msg_close(&msg);
    /* A ROUTER checks room at the id frame: the body always goes. */
    if (f->kind == KIND_ROUTER)
        ck_assert_int_eq(rc, (int)msg_size(n));
    errno = err;
    return rc < 0 ? -1 : 0;
}

/* Opens a connected sender/receiver pair; both HWMs are `hwm`. False when
 * the transport is not available here. */
static bool hwm_open(hwm_fixture *f, int kind, int transport, int hwm)
{
    f->kind = kind;
    f->transport = transport;
    f->ctx = zt_ctx();
    int sender_type = kind == KIND_PAIR     ? ZLINK_PAIR
                      : kind == KIND_DEALER ? ZLINK_DEALER
                                            : ZLINK_ROUTER;
    f->sender = zt_socket(f->ctx, sender_type);
    f->receiver =
        zt_socket(f->ctx, kind == KIND_PAIR ? ZLINK_PAIR : ZLINK_DEALER);
    zt_set_int(f->sender, ZLINK_SNDHWM, hwm);
    zt_set_int(f->receiver, ZLINK_RCVHWM, hwm);
    /* Small kernel buffers: the wire holds little besides the pipes. Not
     * smaller: on loopback (MSS 32 KiB) a receive window under one MSS
     * leaves Linux trickling data through zero-window probes. */
    zt_set_int(f->sender, ZLINK_SNDBUF, 65536);
    zt_set_int(f->receiver, ZLINK_RCVBUF, 65536);
    if (kind == KIND_ROUTER) {
        zt_set_int(f->sender, ZLINK_ROUTER_MANDATORY, 1);
        ck_assert_int_eq(
            zlink_setsockopt(f->receiver, ZLINK_ROUTING_ID, "r", 1), 0);
    }
    /* The receiver binds so that inproc pipes get both HWMs. */
    if (!zt_join(f->receiver, f->sender, transport, f->endpoint,
                 sizeof f->endpoint)) {
        zt_close(f->sender);
        zt_close(f->receiver);
        zt_term(f->ctx);
        return false;
    }
    /* Make sure the connection is up before counting. */
    if (kind == KIND_ROUTER) {
        uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
        while (zlink_send(f->sender, "r", 1, ZLINK_SNDMORE | ZLINK_DONTWAIT) !=
               1) {
            ck_assert_int_eq(zlink_errno(), EHOSTUNREACH);
            ck_assert(zl_test_now_ms() < deadline);
            zl_test_sleep_ms(2);
        }
        zt_send_str(f->sender, "up", 0);
    } else {
        zt_send_str(f->sender, "up", 0);
    }
    zt_recv_str(f->receiver, "up");
    return true;
}

static void hwm_close(hwm_fixture *f)
{
    zt_close(f->sender);
    zt_close(f->receiver);
    zt_term(f->ctx);
}

/* Sends with DONTWAIT until the first EAGAIN; returns how many went. The
 * I/O thread may still be moving messages from the pipe to the wire: the
 * blocking sends after this wait for that room and count what it takes. */
static unsigned fill_until_blocked(hwm_fixture *f)
{
    unsigned n = 0;
    while (n < MAX_FILL && send_numbered(f, n, ZLINK_DONTWAIT) == 0)
        n++;
    ck_assert_msg(n < MAX_FILL && zlink_errno() == EAGAIN, "send %u: %s", n,
                  zlink_strerror(zlink_errno()));
    return n;
}

/* Case i of the loop tests: a kind over a transport, with this HWM. */
static void blocks_never_drops(int i, int hwm)
{
    hwm_fixture f;
    int kind = i / HWM_TRANSPORTS;
    int transport = hwm_transports[i % HWM_TRANSPORTS];
    if (!hwm_open(&f, kind, transport, hwm))
        return;
    unsigned sent = fill_until_blocked(&f);
    if (transport == ZT_INPROC)
        ck_assert_msg(sent == 2u * (unsigned)hwm,
                      "%s inproc: %u queued, expected %d", kind_name(kind),
                      sent, 2 * hwm);
    else
        ck_assert_msg(sent >= (unsigned)hwm, "%s: only %u queued",
                      kind_name(kind), sent);

    /* Blocking send: waits SNDTIMEO, then EAGAIN; nothing is dropped. The
     * I/O thread may still move messages to the wire and the kernel take a
     * little more (delayed window updates), so a send that goes through is
     * counted and the wait tried again. */
    zt_set_int(f.sender, ZLINK_SNDTIMEO, 100);
    for (int attempt = 0;; attempt++) {
        ck_assert_int_lt(attempt, 1000);
        uint64_t start = zl_test_now_ms();
        if (send_numbered(&f, sent, 0) == 0) {
            ck_assert_int_ne(transport, ZT_INPROC);
            sent++;
            continue;
        }
        ck_assert_int_eq(zlink_errno(), EAGAIN);
        ck_assert_uint_ge(zl_test_now_ms() - start, 90);
        break;
    }

    for (unsigned n = 0; n < sent; n++)
        zt_recv_part(f.receiver, msg_size(n), n, false);
    char buf[8];
    zt_set_int(f.receiver, ZLINK_RCVTIMEO, 100);
    zt_expect_errno(zlink_recv(f.receiver, buf, sizeof buf, 0), EAGAIN);

    /* Room again once the reader drained the queue. */
    zt_set_int(f.sender, ZLINK_SNDTIMEO, ZT_TIMEOUT_MS);
    ck_assert_int_eq(send_numbered(&f, 12345, 0), 0);
    zt_set_int(f.receiver, ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
    zt_recv_part(f.receiver, msg_size(12345), 12345, false);
    hwm_close(&f);
}

START_TEST(hwm_blocks_never_drops)
{
    blocks_never_drops(_i, HWM);
}
END_TEST

/* A send with DONTWAIT is never paced: large messages fill to the HWM. */
START_TEST(large_blocks_never_drops)
{
    fixed_size = LARGE_SIZE;
    blocks_never_drops(_i, LARGE_HWM);
    fixed_size = 0;
}
END_TEST

/* Sends count messages from first, none of which may fail. */
static void send_all(hwm_fixture *f, unsigned first, unsigned count)
{
    for (unsigned n = first; n < first + count; n++)
        ck_assert_msg(send_numbered(f, n, 0) == 0, "send %u: %s", n,
                      zlink_strerror(zlink_errno()));
}

static void recv_all(hwm_fixture *f, unsigned first, unsigned count)
{
    for (unsigned n = first; n < first + count; n++)
        zt_recv_part(f->receiver, msg_size(n), n, false);
}

/* Blocking sends of large messages under the HWM, with no one reading
 * while they go: pacing gives up on a reader that does not drain, within
 * the send's own timeout, and the sends go ahead. With a 1 ms SNDTIMEO
 * the paced send must not report EAGAIN; with none it must not hang. */
START_TEST(large_sends_without_reader)
{
    hwm_fixture f;
    int transport = hwm_transports[_i % HWM_TRANSPORTS];
    fixed_size = LARGE_SIZE;
    if (!hwm_open(&f, _i / HWM_TRANSPORTS, transport, LARGE_HWM)) {
        fixed_size = 0;
        return;
    }
    unsigned count = LARGE_HWM * 6 / 10; /* 60: paced from 32 */
    zt_set_int(f.sender, ZLINK_SNDTIMEO, 1);
    send_all(&f, 0, count);
    recv_all(&f, 0, count);
    zt_set_int(f.sender, ZLINK_SNDTIMEO, -1);
    send_all(&f, count, count);
    recv_all(&f, count, count);
    hwm_close(&f);
    fixed_size = 0;
}
END_TEST

/* Pacing is for sends only: a socket whose pipe paces is still writable
 * for zlink_poll and ZLINK_EVENTS while it is under the HWM, as in
 * libzmq. inproc, where no I/O thread drains the pipe meanwhile. */
START_TEST(large_paced_socket_stays_writable)
{
    hwm_fixture f;
    fixed_size = LARGE_SIZE;
    ck_assert(hwm_open(&f, _i, ZT_INPROC, LARGE_HWM));
    for (unsigned n = 0; n < LARGE_HWM / 2; n++) /* paced from 32 */
        ck_assert_int_eq(send_numbered(&f, n, ZLINK_DONTWAIT), 0);
    ck_assert_int_ne(zt_get_int(f.sender, ZLINK_EVENTS) & ZLINK_POLLOUT, 0);
    zlink_pollitem_t item = {f.sender, 0, ZLINK_POLLOUT, 0};
    ck_assert_int_eq(zlink_poll(&item, 1, 0), 1);
    ck_assert_int_eq(item.revents, ZLINK_POLLOUT);
    recv_all(&f, 0, LARGE_HWM / 2);
    hwm_close(&f);
    fixed_size = 0;
}
END_TEST

/* A DEALER passes over a peer's pipe that paces it, as it passes over a
 * full one, and when every pipe paces it, waits and then sends anyway:
 * with two peers that read nothing until the end, every blocking send
 * goes through, and each peer gets its share whole and in order. */
START_TEST(large_dealer_with_paced_peers)
{
    enum { PEERS = 2, COUNT = 150 };
    void *ctx = zt_ctx();
    void *sender = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(sender, ZLINK_SNDHWM, LARGE_HWM);
    void *peers[PEERS];
    for (int i = 0; i < PEERS; i++) {
        char ep[64];
        snprintf(ep, sizeof ep, "inproc://paced-peer-%d", i);
        peers[i] = zt_socket(ctx, ZLINK_DEALER);
        zt_set_int(peers[i], ZLINK_RCVHWM, LARGE_HWM);
        zt_bind(peers[i], ep);
        zt_connect(sender, ep);
    }
    for (unsigned n = 0; n < COUNT; n++) {
        zlink_msg_t msg;
        ck_assert_int_eq(zlink_msg_init_size(&msg, LARGE_SIZE), 0);
        memset(zlink_msg_data(&msg), 0, LARGE_SIZE);
        memcpy(zlink_msg_data(&msg), &n, sizeof n);
        ck_assert_int_eq(zlink_msg_send(&msg, sender, 0), LARGE_SIZE);
        zlink_msg_close(&msg);
    }
    unsigned received = 0;
    for (int i = 0; i < PEERS; i++) {
        unsigned last = 0, got = 0;
        zlink_msg_t msg;
        zlink_msg_init(&msg);
        while (zlink_msg_recv(&msg, peers[i], ZLINK_DONTWAIT) >= 0) {
            unsigned n;
            ck_assert_uint_eq(zlink_msg_size(&msg), LARGE_SIZE);
            memcpy(&n, zlink_msg_data(&msg), sizeof n);
            ck_assert(got == 0 || n > last);
            last = n;
            got++;
        }
        ck_assert_int_eq(zlink_errno(), EAGAIN);
        zlink_msg_close(&msg);
        ck_assert_uint_gt(got, 0);
        received += got;
    }
    ck_assert_uint_eq(received, COUNT);
    zt_close(sender);
    for (int i = 0; i < PEERS; i++)
        zt_close(peers[i]);
    zt_term(ctx);
}
END_TEST

/* ---- a slow reader on another thread ---- */

#define SLOW_COUNT 20000

typedef struct reader {
    void *socket;
    unsigned expected;
    unsigned pause_every; /* messages between 5 ms pauses */
    unsigned received;
    char error[256];
} reader;

static void reader_main(void *arg)
{
    reader *r = arg;
    for (unsigned n = 0; n < r->expected; n++) {
        /* A duration, on purpose: a reader slower than the sender. */
        if (n % r->pause_every == r->pause_every - 1)
            zl_test_sleep_ms(5);
        zlink_msg_t msg;
        zlink_msg_init(&msg);
        if (zlink_msg_recv(&msg, r->socket, 0) < 0) {
            snprintf(r->error, sizeof r->error, "recv %u: %s", n,
                     zlink_strerror(zlink_errno()));
            zlink_msg_close(&msg);
            return;
        }
        size_t size = zlink_msg_size(&msg);
        const uint8_t *p = zlink_msg_data(&msg);
        bool ok = size == msg_size(n) && !zlink_msg_more(&msg) &&
                  zt_first_wrong_byte(p, size, n) == size;
        zlink_msg_close(&msg);
        if (!ok) {
            snprintf(r->error, sizeof r->error,
                     "message %u: wrong size %zu or content", n, size);
            return;
        }
        r->received++;
    }
}

/* Case i: count messages to a reader on another thread that pauses every
 * pause_every; each arrives, whole and in order. */
static void slow_reader_gets_everything(int i, int hwm, unsigned count,
                                        unsigned pause_every)
{
    hwm_fixture f;
    int kind = i / HWM_TRANSPORTS;
    int transport = hwm_transports[i % HWM_TRANSPORTS];
    if (!hwm_open(&f, kind, transport, hwm))
        return;
    reader r = {
        .socket = f.receiver, .expected = count, .pause_every = pause_every};
    uv_thread_t thread;
    ck_assert_int_eq(uv_thread_create(&thread, reader_main, &r), 0);
    unsigned sent = 0;
    for (unsigned n = 0; n < count; n++) {
        if (send_numbered(&f, n, 0) != 0)
            break;
        sent++;
    }
    ck_assert_int_eq(uv_thread_join(&thread), 0);
    ck_assert_msg(r.error[0] == '\0', "%s over %s: %s", kind_name(kind),
                  zt_transport_name(transport), r.error);
    ck_assert_uint_eq(sent, count);
    ck_assert_uint_eq(r.received, count);
    hwm_close(&f);
}

START_TEST(hwm_slow_reader_gets_everything)
{
    slow_reader_gets_everything(_i, 50, SLOW_COUNT, 1000);
}
END_TEST

/* Paced sends, whose reader's pauses are as long as a paced wait. */
START_TEST(large_slow_reader_gets_everything)
{
    fixed_size = LARGE_SIZE;
    slow_reader_gets_everything(_i, LARGE_HWM, 300, 40);
    fixed_size = 0;
}
END_TEST

/* ---- before any peer ---- */

/* A port nobody listens on right now (it was just ours). */
static void free_tcp_endpoint(void *ctx, char *ep, size_t cap)
{
    void *probe = zt_socket(ctx, ZLINK_PAIR);
    zt_bind_tcp(probe, ep, cap);
    zt_close(probe);
}

static const int early_transports[] = {ZT_TCP4, ZT_IPC,
                                       ZT_INPROC_CONNECT_FIRST};

/* Sent before the peer exists: queued up to SNDHWM, delivered once it
 * binds. */
START_TEST(queued_before_peer_exists)
{
    int transport = early_transports[_i % 3];
    int type = _i < 3 ? ZLINK_DEALER : ZLINK_PAIR;
    void *ctx = zt_ctx();
    char ep[300];
    if (transport == ZT_TCP4)
        free_tcp_endpoint(ctx, ep, sizeof ep);
    else if (!zt_endpoint(transport, ep, sizeof ep)) {
        zt_term(ctx);
        return;
    }
    void *sender = zt_socket(ctx, type);
    zt_set_int(sender, ZLINK_SNDHWM, 5);
    zt_connect(sender, ep);
    for (unsigned n = 0; n < 5; n++)
        ck_assert_int_eq(
            send_numbered(&(hwm_fixture){.sender = sender, .kind = KIND_DEALER},
                          n, ZLINK_DONTWAIT),
            0);
    zt_expect_errno(zlink_send(sender, "x", 1, ZLINK_DONTWAIT), EAGAIN);

    void *receiver = zt_socket(ctx, type);
    zt_bind_when_free(receiver, ep, ZT_TIMEOUT_MS);
    for (unsigned n = 0; n < 5; n++)
        zt_recv_part(receiver, msg_size(n), n, false);
    zt_send_str(sender, "after", 0);
    zt_recv_str(receiver, "after");
    zt_close(sender);
    zt_close(receiver);
    zt_term(ctx);
}
END_TEST

/* IMMEDIATE: nothing queues for a peer that is not there; once it is, the
 * socket becomes writable. */
START_TEST(immediate_does_not_queue)
{
    int transport = _i == 0 ? ZT_TCP4 : ZT_IPC;
    void *ctx = zt_ctx();
    char ep[300];
    if (transport == ZT_TCP4)
        free_tcp_endpoint(ctx, ep, sizeof ep);
    else if (!zt_endpoint(transport, ep, sizeof ep)) {
        zt_term(ctx);
        return;
    }
    void *sender = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(sender, ZLINK_IMMEDIATE, 1);
    ck_assert_int_eq(zt_get_int(sender, ZLINK_IMMEDIATE), 1);
    zt_connect(sender, ep);
    zt_expect_errno(zlink_send(sender, "x", 1, ZLINK_DONTWAIT), EAGAIN);
    zt_set_int(sender, ZLINK_SNDTIMEO, 50);
    zt_expect_errno(zlink_send(sender, "x", 1, 0), EAGAIN);
    ck_assert_int_eq(zt_get_int(sender, ZLINK_EVENTS) & ZLINK_POLLOUT, 0);

    void *receiver = zt_socket(ctx, ZLINK_DEALER);
    zt_bind_when_free(receiver, ep, ZT_TIMEOUT_MS);
    zlink_pollitem_t item = {sender, 0, ZLINK_POLLOUT, 0};
    ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(item.revents, ZLINK_POLLOUT);
    zt_send_str(sender, "now", ZLINK_DONTWAIT);
    zt_recv_str(receiver, "now");
    /* Nothing from before the connection was kept. */
    char buf[8];
    zt_set_int(receiver, ZLINK_RCVTIMEO, 100);
    zt_expect_errno(zlink_recv(receiver, buf, sizeof buf, 0), EAGAIN);
    zt_close(sender);
    zt_close(receiver);
    zt_term(ctx);
}
END_TEST

/* A sender refused at the HWM is let in again once the reader has drained
 * the queue to half of it, and then in a batch, as in libzmq: retrying
 * after each message read gets nothing until then. Over inproc the two
 * HWMs of 10 add up to 20. PAIR, ROUTER with ROUTER_MANDATORY, and XPUB
 * with XPUB_NODROP, which look at the queue at each send. */
START_TEST(refused_sender_waits_for_half)
{
    static const int types[] = {ZLINK_PAIR, ZLINK_ROUTER, ZLINK_XPUB};
    static const int peers[] = {ZLINK_PAIR, ZLINK_DEALER, ZLINK_XSUB};
    void *ctx = zt_ctx();
    void *sender = zt_socket(ctx, types[_i]);
    void *receiver = zt_socket(ctx, peers[_i]);
    zt_set_int(sender, ZLINK_SNDHWM, 10);
    zt_set_int(receiver, ZLINK_RCVHWM, 10);
    if (_i == 1)
        zt_set_int(sender, ZLINK_ROUTER_MANDATORY, 1);
    if (_i == 2)
        zt_set_int(sender, ZLINK_XPUB_NODROP, 1);
    ck_assert_int_eq(zlink_setsockopt(receiver, ZLINK_ROUTING_ID, "r", 1), 0);
    zt_bind(sender, "inproc://refused");
    zt_connect(receiver, "inproc://refused");
    if (_i == 2) {
        zt_send_str(receiver, "\x01", 0); /* subscribe to everything */
        char sub[8];
        ck_assert_int_eq(zlink_recv(sender, sub, sizeof sub, 0), 1);
    } else if (_i == 1) {
        zt_send_str(receiver, "hi", 0); /* the ROUTER learns of "r" */
        char buf[8];
        ck_assert_int_eq(zlink_recv(sender, buf, sizeof buf, 0), 1);
        ck_assert_int_eq(zlink_recv(sender, buf, sizeof buf, 0), 2);
    }
    int sent = 0;
    for (int read = 0; read <= 10; read++) {
        if (read > 0) {
            char buf[8];
            ck_assert_int_eq(zlink_recv(receiver, buf, sizeof buf, 0), 1);
        }
        int now = 0;
        while ((_i != 1 || zlink_send(sender, "r", 1,
                                      ZLINK_SNDMORE | ZLINK_DONTWAIT) == 1) &&
               zlink_send(sender, "m", 1, ZLINK_DONTWAIT) == 1)
            now++;
        ck_assert_int_eq(zlink_errno(), EAGAIN);
        ck_assert_int_eq(now, read == 0 ? 20 : read == 10 ? 10 : 0);
        sent += now;
    }
    ck_assert_int_eq(sent, 30);
    zt_set_int(sender, ZLINK_LINGER, 0);
    zt_close(sender);
    zt_close(receiver);
    zt_term(ctx);
}
END_TEST

/* ---- the documented exceptions ---- */

/* libzmq: a ROUTER without ROUTER_MANDATORY drops what does not fit. */
START_TEST(router_drops_at_hwm_without_mandatory)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(router, ZLINK_SNDHWM, 5);
    zt_set_int(dealer, ZLINK_RCVHWM, 5);
    ck_assert_int_eq(zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "d", 1), 0);
    zt_bind(router, "inproc://drop");
    zt_connect(dealer, "inproc://drop");
    for (int n = 0; n < 100; n++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d", n);
        ck_assert_int_eq(
            zlink_send(router, "d", 1, ZLINK_SNDMORE | ZLINK_DONTWAIT), 1);
        zt_send_str(router, buf, ZLINK_DONTWAIT);
    }
    /* inproc: the two HWMs add up. The first ten are kept. */
    for (int n = 0; n < 10; n++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d", n);
        zt_recv_str(dealer, buf);
    }
    char buf[16];
    zt_expect_errno(zlink_recv(dealer, buf, sizeof buf, ZLINK_DONTWAIT),
                    EAGAIN);
    zt_close(dealer);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* HWM 0 means no limit. */
START_TEST(hwm_zero_is_unlimited)
{
    void *ctx = zt_ctx();
    void *a = zt_socket(ctx, ZLINK_PAIR);
    void *b = zt_socket(ctx, ZLINK_PAIR);
    zt_set_int(a, ZLINK_SNDHWM, 0);
    zt_set_int(b, ZLINK_RCVHWM, 0);
    zt_bind(b, "inproc://unlimited");
    zt_connect(a, "inproc://unlimited");
    for (int n = 0; n < 5000; n++)
        ck_assert_int_eq(zlink_send(a, &n, sizeof n, ZLINK_DONTWAIT),
                         (int)sizeof n);
    for (int n = 0; n < 5000; n++) {
        int v = -1;
        ck_assert_int_eq(zlink_recv(b, &v, sizeof v, 0), (int)sizeof v);
        ck_assert_int_eq(v, n);
    }
    zt_close(a);
    zt_close(b);
    zt_term(ctx);
}
END_TEST

/* Whether the corruption case flips byte i: every byte of the first
 * words, around the first 256-byte steps and the 64 KiB one, and of the
 * tail; a few between. */
static bool corruption_checked_at(size_t i, size_t size)
{
    size_t step = i & 0xff;
    return i < 64 || (i < 1040 && (step < 8 || step >= 248)) ||
           (i >= 65536 - 8 && i < 65536 + 8) || i + 16 >= size || i == 4099 ||
           i == 33333;
}

/* The suites' byte checks go a word at a time: the pattern is still
 * zt_byte's at every offset and alignment, and any one wrong byte (at the
 * start, in a word, in the tail, across a 256 or 64 KiB step) is found
 * where it is. */
START_TEST(byte_check_finds_every_wrong_byte)
{
    enum { SIZE = 65536 + 613 };
    uint8_t *buf = malloc(SIZE + 8);
    ck_assert_ptr_nonnull(buf);
    for (size_t start = 0; start < 8; start++) {
        uint8_t *p = buf + start;
        unsigned seed = 7u * (unsigned)start + 1u;
        zt_fill(p, SIZE, seed);
        for (size_t i = 0; i < SIZE; i++)
            if (p[i] != zt_byte(seed, i))
                ck_abort_msg("zt_fill: byte %zu (start %zu)", i, start);
        ck_assert_uint_eq(zt_first_wrong_byte(p, SIZE, seed), SIZE);
        for (size_t i = 0; i < SIZE; i++) {
            if (!corruption_checked_at(i, SIZE))
                continue;
            for (unsigned flip = 1; flip < 256; flip <<= 1) {
                p[i] ^= (uint8_t)flip;
                ck_assert_uint_eq(zt_first_wrong_byte(p, SIZE, seed), i);
                p[i] ^= (uint8_t)flip;
            }
        }
        /* Two wrong bytes: the first is reported. */
        p[SIZE - 1] ^= 0x80;
        p[100] ^= 0x01;
        ck_assert_uint_eq(zt_first_wrong_byte(p, SIZE, seed), 100);
        /* Shorter lengths end where they should, in words and bytes. */
        for (size_t len = 0; len < 40; len++)
            ck_assert_uint_eq(zt_first_wrong_byte(p, len, seed), len);
        ck_assert_uint_eq(zt_first_wrong_byte(p, 101, seed), 100);
    }
    free(buf);
}
END_TEST

static Suite *hwm_suite(void)
{
    Suite *s = suite_create("socket_hwm");
    TCase *block = tcase_create("blocking");
    tcase_set_timeout(block, 60);
    tcase_add_loop_test(block, hwm_blocks_never_drops, 0,
                        KIND_COUNT * HWM_TRANSPORTS);
    tcase_add_loop_test(block, hwm_slow_reader_gets_everything, 0,
                        KIND_COUNT * HWM_TRANSPORTS);
    /* Large messages, which are paced. */
    tcase_add_loop_test(block, large_blocks_never_drops, 0,
                        KIND_COUNT * HWM_TRANSPORTS);
    tcase_add_loop_test(block, large_sends_without_reader, 0,
                        KIND_COUNT * HWM_TRANSPORTS);
    tcase_add_loop_test(block, large_slow_reader_gets_everything, 0,
                        KIND_COUNT * HWM_TRANSPORTS);
    tcase_add_test(block, large_dealer_with_paced_peers);
    tcase_add_loop_test(block, large_paced_socket_stays_writable, 0,
                        KIND_COUNT);
    suite_add_tcase(s, block);

    TCase *early = tcase_create("before_peer");
    tcase_add_loop_test(early, queued_before_peer_exists, 0, 6);
    tcase_add_loop_test(early, immediate_does_not_queue, 0, 2);
    suite_add_tcase(s, early);

    TCase *other = tcase_create("exceptions");
    tcase_add_loop_test(other, refused_sender_waits_for_half, 0, 3);
    tcase_add_test(other, router_drops_at_hwm_without_mandatory);
    tcase_add_test(other, hwm_zero_is_unlimited);
    tcase_add_test(other, byte_check_finds_every_wrong_byte);
    suite_add_tcase(s, other);
    return s;
}

int main(void)
{
    return zl_test_run(hwm_suite());
}
