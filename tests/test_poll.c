/* test_poll.c — zlink_poll over zlink sockets and raw OS sockets (POLLIN,
 * POLLOUT, bounded timeouts, wakeups from I/O threads and from other
 * application threads, ETERM), and the ZLINK_FD / ZLINK_EVENTS pair.
 * Uses threads.
 *
 * ZLINK_FD semantics, as observed here (libzmq's, edge-triggered):
 *  - The FD is readable when the socket has commands it has not taken in
 *    yet: a message arrived on a pipe the socket had found empty, room came
 *    back on a full pipe, a peer attached or went away. It stays readable
 *    until the application calls into the socket (ZLINK_EVENTS, send, recv,
 *    zlink_poll), which takes the commands in and clears it.
 *  - So after zlink_recv returned EAGAIN, the next message to arrive makes
 *    the FD readable, and ZLINK_EVENTS then reports ZLINK_POLLIN.
 *  - Readable does not mean a message is there (it may be room to send, or
 *    a new peer): read ZLINK_EVENTS. Not readable does not mean nothing is
 *    queued: messages that arrive while others are still unread do not
 *    signal again. After the FD fires, receive while ZLINK_EVENTS has
 *    ZLINK_POLLIN, and only then wait on the FD again.
 *  - Reading ZLINK_EVENTS clears the FD even when it reports POLLIN. */

#ifndef _WIN32
#include <sys/socket.h>
#include <unistd.h>
#endif

#include "atomics.h"
#include "raw_socket.h"
#include "socket_testutil.h"

typedef struct poll_pair {
    void *ctx, *a, *b;
    char ep[300];
} poll_pair;

/* hwm 0: the defaults. Otherwise small HWMs and kernel buffers, so that
 * filling the connection takes few messages. */
static bool pair_open_hwm(poll_pair *p, int transport, int hwm)
{
    p->ctx = zt_ctx();
    p->a = zt_socket(p->ctx, ZLINK_PAIR);
    p->b = zt_socket(p->ctx, ZLINK_PAIR);
    if (hwm > 0) {
        zt_set_int(p->a, ZLINK_SNDHWM, hwm);
        zt_set_int(p->b, ZLINK_RCVHWM, hwm);
        zt_set_int(p->a, ZLINK_SNDBUF, 65536);
        zt_set_int(p->b, ZLINK_RCVBUF, 65536);
    }
    if (zt_join(p->a, p->b, transport, p->ep, sizeof p->ep)) {
        /* Both ends attached. */
        zt_send_str(p->b, "hello", 0);
        zt_recv_str(p->a, "hello");
        return true;
    }
    zt_close(p->a);
    zt_close(p->b);
    zt_term(p->ctx);
    return false;
}

static bool pair_open(poll_pair *p, int transport)
{
    return pair_open_hwm(p, transport, 0);
}

static void pair_close(poll_pair *p)
{
    zt_close(p->a);
    zt_close(p->b);
    zt_term(p->ctx);
}

START_TEST(poll_times_out)
{
    poll_pair p;
    ck_assert(pair_open(&p, ZT_INPROC));
    zlink_pollitem_t item = {p.a, 0, ZLINK_POLLIN, 0};
    uint64_t start = zl_test_now_ms();
    ck_assert_int_eq(zlink_poll(&item, 1, 100), 0);
    uint64_t took = zl_test_now_ms() - start;
    ck_assert_int_eq(item.revents, 0);
    ck_assert_uint_ge(took, 90);
    ck_assert_uint_lt(took, ZT_TIMEOUT_MS);
    start = zl_test_now_ms();
    ck_assert_int_eq(zlink_poll(&item, 1, 0), 0);
    ck_assert_uint_lt(zl_test_now_ms() - start, 90);
    /* No items: a plain sleep. */
    start = zl_test_now_ms();
    ck_assert_int_eq(zlink_poll(NULL, 0, 50), 0);
    ck_assert_uint_ge(zl_test_now_ms() - start, 40);
    pair_close(&p);
}
END_TEST

/* A message sent by the peer wakes a poll sleeping on the receiver (over
 * tcp/ipc it arrives through the I/O thread after the send returned). */
START_TEST(poll_pollin)
{
    poll_pair p;
    if (!pair_open(&p, _i))
        return;
    zlink_pollitem_t item = {p.a, 0, ZLINK_POLLIN, 0};
    ck_assert_int_eq(zlink_poll(&item, 1, 0), 0);
    zt_send_str(p.b, "wake", 0);
    ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(item.revents, ZLINK_POLLIN);
    /* Still readable until received. */
    ck_assert_int_eq(zlink_poll(&item, 1, 0), 1);
    zt_recv_str(p.a, "wake");
    ck_assert_int_eq(zlink_poll(&item, 1, 0), 0);
    ck_assert_int_eq(item.revents, 0);
    pair_close(&p);
}
END_TEST

START_TEST(poll_pollout)
{
    poll_pair p;
    if (!pair_open_hwm(&p, _i, 100))
        return;
    zlink_pollitem_t item = {p.a, 0, ZLINK_POLLIN | ZLINK_POLLOUT, 0};
    ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(item.revents, ZLINK_POLLOUT);
    zt_send_str(p.b, "in", 0);
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    do {
        ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
        ck_assert(zl_test_now_ms() < deadline);
    } while (item.revents != (ZLINK_POLLIN | ZLINK_POLLOUT));
    zt_recv_str(p.a, "in");
    /* Full at the HWM: POLLOUT goes, and comes back once the peer reads. */
    zt_set_int(p.a, ZLINK_SNDTIMEO, 0);
    int sent = 0;
    while (zlink_send(p.a, "x", 1, ZLINK_DONTWAIT) == 1)
        ck_assert_int_lt(++sent, 1000000);
    item.events = ZLINK_POLLOUT;
    if (_i == ZT_INPROC)
        ck_assert_int_eq(zlink_poll(&item, 1, 50), 0);
    for (int n = 0; n < sent; n++)
        zt_recv_str(p.b, "x");
    ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(item.revents, ZLINK_POLLOUT);
    pair_close(&p);
}
END_TEST

/* Several sockets: revents is set on exactly the ready ones and the count
 * says how many. */
START_TEST(poll_many_sockets)
{
    void *ctx = zt_ctx();
    void *rx[3], *tx[3];
    zlink_pollitem_t items[3];
    for (int i = 0; i < 3; i++) {
        rx[i] = zt_socket(ctx, ZLINK_PAIR);
        tx[i] = zt_socket(ctx, ZLINK_PAIR);
        char ep[300];
        ck_assert(
            zt_join(rx[i], tx[i], i == 1 ? ZT_TCP4 : ZT_INPROC, ep, sizeof ep));
        items[i] = (zlink_pollitem_t){rx[i], 0, ZLINK_POLLIN, 0};
    }
    ck_assert_int_eq(zlink_poll(items, 3, 50), 0);
    zt_send_str(tx[1], "one", 0);
    ck_assert_int_eq(zlink_poll(items, 3, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(items[0].revents, 0);
    ck_assert_int_eq(items[1].revents, ZLINK_POLLIN);
    ck_assert_int_eq(items[2].revents, 0);
    zt_send_str(tx[2], "two", 0);
    ck_assert_int_eq(zlink_poll(items, 3, ZT_TIMEOUT_MS), 2);
    ck_assert_int_eq(items[0].revents, 0);
    ck_assert_int_eq(items[1].revents, ZLINK_POLLIN);
    ck_assert_int_eq(items[2].revents, ZLINK_POLLIN);
    zt_recv_str(rx[1], "one");
    zt_recv_str(rx[2], "two");
    ck_assert_int_eq(zlink_poll(items, 3, 0), 0);
    for (int i = 0; i < 3; i++) {
        zt_close(rx[i]);
        zt_close(tx[i]);
    }
    zt_term(ctx);
}
END_TEST

/* A ROUTER with two inproc peers, polled while only one has sent: the
 * poll's spin looks at the empty pipe too, and must leave it asleep, so
 * that the other peer's message, sent after the poll returned, wakes the
 * next poll. Then the other way round, and with the poll sleeping first. */
START_TEST(poll_spin_leaves_no_pipe_unwatched)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *dealers[2];
    zt_bind(router, "inproc://spin-settle");
    for (int i = 0; i < 2; i++) {
        dealers[i] = zt_socket(ctx, ZLINK_DEALER);
        char id[2] = {(char)('a' + i), 0};
        ck_assert_int_eq(zlink_setsockopt(dealers[i], ZLINK_ROUTING_ID, id, 1),
                         0);
        zt_connect(dealers[i], "inproc://spin-settle");
    }
    zlink_pollitem_t item = {router, 0, ZLINK_POLLIN, 0};
    for (int round = 0; round < 20; round++) {
        void *first = dealers[round % 2], *second = dealers[1 - round % 2];
        zt_send_str(first, "first", 0);
        ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
        char buf[16];
        ck_assert_int_eq(zlink_recv(router, buf, sizeof buf, 0), 1);
        zt_recv_str(router, "first");
        if (round >= 10) /* the poll below sleeps before the message */
            ck_assert_int_eq(zlink_poll(&item, 1, 20), 0);
        zt_send_str(second, "second", 0);
        ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
        ck_assert_int_eq(zlink_recv(router, buf, sizeof buf, 0), 1);
        zt_recv_str(router, "second");
    }
    for (int i = 0; i < 2; i++)
        zt_close(dealers[i]);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* More items than fit on zlink_poll's stack. */
START_TEST(poll_many_items)
{
    enum { N = 40 };
    void *ctx = zt_ctx();
    void *rx[N], *tx[N];
    zlink_pollitem_t items[N];
    for (int i = 0; i < N; i++) {
        char ep[64];
        snprintf(ep, sizeof ep, "inproc://many-%d", i);
        rx[i] = zt_socket(ctx, ZLINK_PAIR);
        tx[i] = zt_socket(ctx, ZLINK_PAIR);
        zt_bind(rx[i], ep);
        zt_connect(tx[i], ep);
        items[i] = (zlink_pollitem_t){rx[i], 0, ZLINK_POLLIN, 0};
    }
    zt_send_str(tx[N - 1], "last", 0);
    ck_assert_int_eq(zlink_poll(items, N, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(items[N - 1].revents, ZLINK_POLLIN);
    for (int i = 0; i < N; i++) {
        zt_close(rx[i]);
        zt_close(tx[i]);
    }
    zt_term(ctx);
}
END_TEST

/* zlink_poll is level-triggered: a socket with a message is reported by
 * every poll until the message is read, whatever took the socket's
 * commands in meanwhile (ZLINK_EVENTS, another poll). */
START_TEST(poll_level_triggered)
{
    poll_pair p;
    if (!pair_open(&p, _i))
        return;
    zlink_pollitem_t items[2] = {{p.a, 0, ZLINK_POLLIN, 0},
                                 {p.b, 0, ZLINK_POLLIN, 0}};
    zt_send_str(p.b, "one", 0);
    zt_send_str(p.b, "two", 0);
    ck_assert_int_eq(zlink_poll(items, 2, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(items[0].revents, ZLINK_POLLIN);
    for (int round = 0; round < 3; round++) {
        ck_assert_int_eq(zlink_poll(items, 2, 0), 1);
        ck_assert_int_eq(items[0].revents, ZLINK_POLLIN);
        ck_assert_int_eq(items[1].revents, 0);
        ck_assert(zt_get_int(p.a, ZLINK_EVENTS) & ZLINK_POLLIN);
    }
    zt_recv_str(p.a, "one");
    /* "two" may still be on its way over tcp: a sleeping poll finds it. */
    ck_assert_int_eq(zlink_poll(items, 2, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(zlink_poll(items, 2, -1), 1);
    ck_assert_int_eq(items[0].revents, ZLINK_POLLIN);
    zt_recv_str(p.a, "two");
    ck_assert_int_eq(zlink_poll(items, 2, 0), 0);
    ck_assert_int_eq(zlink_poll(items, 2, 20), 0);
    ck_assert_int_eq(items[0].revents, 0);
    pair_close(&p);
}
END_TEST

/* One poll over the sockets of two contexts sleeps on both contexts'
 * handles, and a message on either wakes it. */
typedef struct later_send {
    void *socket;
    const char *text;
} later_send;

static void later_send_main(void *arg)
{
    later_send *l = arg;
    /* Late enough that the poll usually sleeps first; either way the poll
     * must see the message. */
    zl_test_sleep_ms(20);
    zlink_send(l->socket, l->text, strlen(l->text), 0);
}

START_TEST(poll_two_contexts)
{
    enum { PER_CTX = 3 };
    void *ctx[2], *rx[2][PER_CTX], *tx[2][PER_CTX];
    zlink_pollitem_t items[2 * PER_CTX];
    for (int c = 0; c < 2; c++) {
        ctx[c] = zt_ctx();
        for (int i = 0; i < PER_CTX; i++) {
            rx[c][i] = zt_socket(ctx[c], ZLINK_PAIR);
            tx[c][i] = zt_socket(ctx[c], ZLINK_PAIR);
            char ep[300];
            ck_assert(zt_join(rx[c][i], tx[c][i], i == 1 ? ZT_TCP4 : ZT_INPROC,
                              ep, sizeof ep));
            /* Interleaved, so that each context's sockets are apart. */
            items[i * 2 + c] = (zlink_pollitem_t){rx[c][i], 0, ZLINK_POLLIN, 0};
        }
    }
    for (int round = 0; round < 2 * 2 * PER_CTX; round++) {
        int c = round % 2, i = (round / 2) % PER_CTX;
        later_send l = {tx[c][i], "late"};
        uv_thread_t thread;
        ck_assert_int_eq(uv_thread_create(&thread, later_send_main, &l), 0);
        ck_assert_int_eq(zlink_poll(items, 2 * PER_CTX, ZT_TIMEOUT_MS), 1);
        ck_assert_int_eq(items[i * 2 + c].revents, ZLINK_POLLIN);
        ck_assert_int_eq(uv_thread_join(&thread), 0);
        zt_recv_str(rx[c][i], "late");
    }
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < PER_CTX; i++) {
            zt_close(rx[c][i]);
            zt_close(tx[c][i]);
        }
        zt_term(ctx[c]);
    }
}
END_TEST

/* Two threads play ping-pong, each waiting in zlink_poll over several
 * sockets of which one gets the ball, so that the sleeping side and the
 * sending side race on every round: a wakeup lost between a poll's last
 * look and its sleep would leave a poll waiting out its timeout. */
enum { PONG_SOCKETS = 64, PONG_ROUNDS = 3000, PONG_SECONDS = 4 };

typedef struct pong_side {
    void *rx[PONG_SOCKETS], *tx[PONG_SOCKETS];
    int rounds, failures;
} pong_side;

static int poll_one(void **rx, int *which)
{
    zlink_pollitem_t items[PONG_SOCKETS];
    for (int i = 0; i < PONG_SOCKETS; i++)
        items[i] = (zlink_pollitem_t){rx[i], 0, ZLINK_POLLIN, 0};
    int rc = zlink_poll(items, PONG_SOCKETS, ZT_TIMEOUT_MS);
    for (int i = 0; i < PONG_SOCKETS && rc == 1; i++)
        if (items[i].revents & ZLINK_POLLIN)
            *which = i;
    return rc;
}

static void pong_main(void *arg)
{
    pong_side *side = arg;
    for (int r = 0; r < side->rounds; r++) {
        int which = -1;
        char ball;
        if (poll_one(side->rx, &which) != 1 ||
            zlink_recv(side->rx[which], &ball, 1, ZLINK_DONTWAIT) != 1 ||
            zlink_send(side->tx[(which + 1) % PONG_SOCKETS], &ball, 1, 0) !=
                1) {
            side->failures++;
            return;
        }
    }
}

START_TEST(poll_wakeups_not_lost)
{
    void *ctx = zt_ctx();
    /* No spin: every poll that finds nothing goes to sleep. */
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_SPIN_BUDGET, 0), 0);
    pong_side ping = {.rounds = 0}, pong = {.rounds = 0};
    /* ping.tx[i] -> pong.rx[i] and pong.tx[i] -> ping.rx[i]. */
    for (int i = 0; i < PONG_SOCKETS; i++) {
        char ep[300];
        int transport = i % 8 == 1 ? ZT_TCP4 : _i;
        ping.tx[i] = zt_socket(ctx, ZLINK_PAIR);
        pong.rx[i] = zt_socket(ctx, ZLINK_PAIR);
        ck_assert(zt_join(pong.rx[i], ping.tx[i], transport, ep, sizeof ep));
        pong.tx[i] = zt_socket(ctx, ZLINK_PAIR);
        ping.rx[i] = zt_socket(ctx, ZLINK_PAIR);
        ck_assert(zt_join(ping.rx[i], pong.tx[i], transport, ep, sizeof ep));
    }
    /* Rounds in batches until the count or the time is used up. */
    uint64_t until = zl_test_now_ms() + PONG_SECONDS * 1000;
    int done = 0;
    while (done < PONG_ROUNDS && zl_test_now_ms() < until) {
        ping.rounds = pong.rounds = 100;
        uv_thread_t thread;
        ck_assert_int_eq(uv_thread_create(&thread, pong_main, &pong), 0);
        ck_assert_int_eq(zlink_send(ping.tx[0], "b", 1, 0), 1);
        ping.rounds = 99; /* pong answers the last ball; ping takes it */
        pong_main(&ping);
        ck_assert_int_eq(uv_thread_join(&thread), 0);
        ck_assert_int_eq(ping.failures, 0);
        ck_assert_int_eq(pong.failures, 0);
        int which = -1;
        ck_assert_int_eq(poll_one(ping.rx, &which), 1);
        char ball;
        ck_assert_int_eq(zlink_recv(ping.rx[which], &ball, 1, 0), 1);
        done += 100;
    }
    ck_assert_int_ge(done, 100);
    for (int i = 0; i < PONG_SOCKETS; i++) {
        zt_close(ping.rx[i]);
        zt_close(ping.tx[i]);
        zt_close(pong.rx[i]);
        zt_close(pong.tx[i]);
    }
    zt_term(ctx);
}
END_TEST

/* ---- other threads ---- */

typedef struct delayed_send {
    void *socket;
    int delay_ms;
} delayed_send;

static void delayed_send_main(void *arg)
{
    delayed_send *d = arg;
    zl_test_sleep_ms(d->delay_ms);
    zlink_send(d->socket, "late", 4, 0);
}

/* A poll sleeping in one thread wakes when another thread sends. */
START_TEST(poll_woken_by_other_thread)
{
    poll_pair p;
    ck_assert(pair_open(&p, _i == 0 ? ZT_INPROC : ZT_TCP4));
    delayed_send d = {p.b, 50};
    uv_thread_t thread;
    ck_assert_int_eq(uv_thread_create(&thread, delayed_send_main, &d), 0);
    zlink_pollitem_t item = {p.a, 0, ZLINK_POLLIN, 0};
    uint64_t start = zl_test_now_ms();
    ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
    ck_assert_uint_ge(zl_test_now_ms() - start, 30);
    ck_assert_int_eq(uv_thread_join(&thread), 0);
    zt_recv_str(p.a, "late");
    pair_close(&p);
}
END_TEST

typedef struct blocked_poll {
    void *socket, *other; /* other: a second socket polled, or NULL */
    int rc, err;
    atomic_bool done;
} blocked_poll;

static void blocked_poll_main(void *arg)
{
    blocked_poll *b = arg;
    zlink_pollitem_t items[2] = {{b->socket, 0, ZLINK_POLLIN, 0},
                                 {b->other, 0, ZLINK_POLLIN, 0}};
    b->rc = zlink_poll(items, b->other ? 2 : 1, -1);
    b->err = zlink_errno();
    atomic_store(&b->done, true);
}

/* A poll blocked forever returns -1/ETERM when the context shuts down:
 * over one socket (which sleeps on its own handle) and over two (which
 * sleep on their context's). */
START_TEST(poll_eterm)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    void *other = _i ? zt_socket(ctx, ZLINK_PAIR) : NULL;
    zt_bind(s, "inproc://poll-eterm");
    blocked_poll b = {.socket = s, .other = other};
    atomic_init(&b.done, false);
    uv_thread_t thread;
    ck_assert_int_eq(uv_thread_create(&thread, blocked_poll_main, &b), 0);
    zl_test_sleep_ms(50);
    ck_assert(!atomic_load(&b.done));
    ck_assert_int_eq(zlink_ctx_shutdown(ctx), 0);
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (!atomic_load(&b.done) && zl_test_now_ms() < deadline)
        zl_test_sleep_ms(2);
    ck_assert_msg(atomic_load(&b.done), "poll still blocked");
    ck_assert_int_eq(uv_thread_join(&thread), 0);
    ck_assert_int_eq(b.rc, -1);
    ck_assert_int_eq(b.err, ETERM);
    zt_close(s);
    if (other)
        zt_close(other);
    zt_term(ctx);
}
END_TEST

START_TEST(poll_errors)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    zlink_pollitem_t item = {s, 0, ZLINK_POLLIN, 0};
    zt_expect_errno(zlink_poll(&item, -1, 0), EINVAL);
    /* zmq_poll(3): no items is EFAULT. */
    zt_expect_errno(zlink_poll(NULL, 1, 0), EFAULT);
    /* Not a socket. */
    zlink_pollitem_t bad = {ctx, 0, ZLINK_POLLIN, 0};
    zt_expect_errno(zlink_poll(&bad, 1, 0), ENOTSOCK);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* ---- raw OS sockets ---- */

/* A loopback TCP connection of raw sockets: *client connected, *server
 * accepted. */
static void raw_tcp_pair(raw_fd *client, raw_fd *server)
{
    raw_sockets_init();
    int port;
    raw_fd listener = raw_listen(1, &port);
    *client = raw_connect(port);
    *server = raw_accept(listener, ZT_TIMEOUT_MS);
    ck_assert(*server != RAW_INVALID);
    raw_close(listener);
}

/* On every platform: an invalid socket in the items is ignored, as poll()
 * ignores a negative fd, and a peer's orderly close is readable, not an
 * error (WSAPoll reports it as a hang-up). */
START_TEST(poll_raw_tcp_close_and_invalid)
{
    raw_fd client, server;
    raw_tcp_pair(&client, &server);
    zlink_pollitem_t invalid = {NULL, (zlink_fd_t)RAW_INVALID, ZLINK_POLLIN, 0};
    ck_assert_int_eq(zlink_poll(&invalid, 1, 0), 0);
    ck_assert_int_eq(invalid.revents, 0);
    zlink_pollitem_t items[2] = {
        {NULL, (zlink_fd_t)RAW_INVALID, ZLINK_POLLIN, 0},
        {NULL, (zlink_fd_t)client, ZLINK_POLLIN, 0}};
    ck_assert_int_eq(zlink_poll(items, 2, 50), 0);
    raw_close(server);
    ck_assert_int_eq(zlink_poll(items, 2, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(items[0].revents, 0);
    ck_assert_int_eq(items[1].revents, ZLINK_POLLIN);
    raw_close(client);
}
END_TEST

/* ZLINK_POLLPRI on a raw tcp socket: TCP's urgent byte (MSG_OOB) is
 * reported as it, to zlink_poll and to the poller alike, and only to an
 * item that asks for it. Windows cannot wait for it: ENOTSUP. */
START_TEST(poll_pollpri)
{
    raw_fd client, server;
    raw_tcp_pair(&client, &server);
    zlink_pollitem_t item = {NULL, (zlink_fd_t)client,
                             ZLINK_POLLIN | ZLINK_POLLPRI, 0};
    void *poller = zlink_poller_new();
    ck_assert_ptr_nonnull(poller);
    ck_assert_int_eq(
        zlink_poller_add_fd(poller, (zlink_fd_t)client, NULL, ZLINK_POLLPRI),
        0);
    zlink_poller_event_t ev;
#if defined(_WIN32)
    ck_assert_int_eq(zlink_poll(&item, 1, 0), -1);
    ck_assert_int_eq(zlink_errno(), ENOTSUP);
    ck_assert_int_eq(zlink_poller_wait(poller, &ev, 0), -1);
    ck_assert_int_eq(zlink_errno(), ENOTSUP);
#else
    ck_assert_int_eq(zlink_poll(&item, 1, 50), 0);
    ck_assert_int_eq(send(server, "!", 1, MSG_OOB), 1);
    ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
    ck_assert(item.revents & ZLINK_POLLPRI);
    ck_assert_int_eq(zlink_poller_wait(poller, &ev, ZT_TIMEOUT_MS), 0);
    ck_assert_int_eq(ev.events, ZLINK_POLLPRI);
    /* An item that asks for input only is not told of it. */
    zlink_pollitem_t in_only = {NULL, (zlink_fd_t)client, ZLINK_POLLIN, 0};
    ck_assert_int_eq(zlink_poll(&in_only, 1, 0), 0);
    ck_assert_int_eq(in_only.revents, 0);
    char urgent = 0;
    ck_assert_int_eq(recv(client, &urgent, 1, MSG_OOB), 1);
    ck_assert_int_eq(urgent, '!');
    ck_assert_int_eq(zlink_poll(&item, 1, 0), 0);
#endif
    ck_assert_int_eq(zlink_poller_destroy(&poller), 0);
    raw_close(client);
    raw_close(server);
}
END_TEST

#ifndef _WIN32
START_TEST(poll_raw_socket)
{
    int fds[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    poll_pair p;
    ck_assert(pair_open(&p, ZT_INPROC));
    zlink_pollitem_t items[2] = {{NULL, fds[0], ZLINK_POLLIN, 0},
                                 {p.a, 0, ZLINK_POLLIN, 0}};
    ck_assert_int_eq(zlink_poll(items, 2, 50), 0);
    ck_assert_int_eq(write(fds[1], "r", 1), 1);
    ck_assert_int_eq(zlink_poll(items, 2, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(items[0].revents, ZLINK_POLLIN);
    ck_assert_int_eq(items[1].revents, 0);
    zt_send_str(p.b, "z", 0);
    ck_assert_int_eq(zlink_poll(items, 2, ZT_TIMEOUT_MS), 2);
    ck_assert_int_eq(items[0].revents, ZLINK_POLLIN);
    ck_assert_int_eq(items[1].revents, ZLINK_POLLIN);
    char c;
    ck_assert_int_eq(read(fds[0], &c, 1), 1);
    ck_assert_int_eq(zlink_poll(items, 2, 0), 1);
    ck_assert_int_eq(items[0].revents, 0);
    /* POLLOUT on a raw socket with room. */
    zlink_pollitem_t out = {NULL, fds[0], ZLINK_POLLOUT, 0};
    ck_assert_int_eq(zlink_poll(&out, 1, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(out.revents, ZLINK_POLLOUT);
    /* The peer's close shows as readable (EOF). */
    close(fds[1]);
    zlink_pollitem_t eof = {NULL, fds[0], ZLINK_POLLIN, 0};
    ck_assert_int_eq(zlink_poll(&eof, 1, ZT_TIMEOUT_MS), 1);
    ck_assert(eof.revents & ZLINK_POLLIN);
    close(fds[0]);
    zt_recv_str(p.a, "z");
    pair_close(&p);
}
END_TEST

typedef struct delayed_write {
    int fd;
    int delay_ms;
} delayed_write;

static void delayed_write_main(void *arg)
{
    delayed_write *d = arg;
    zl_test_sleep_ms(d->delay_ms);
    ssize_t n = write(d->fd, "w", 1);
    (void)n;
}

/* A raw socket becoming readable wakes a poll that also waits on zlink
 * sockets. */
START_TEST(poll_raw_socket_wakes)
{
    int fds[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    poll_pair p;
    ck_assert(pair_open(&p, ZT_TCP4));
    delayed_write d = {fds[1], 50};
    uv_thread_t thread;
    ck_assert_int_eq(uv_thread_create(&thread, delayed_write_main, &d), 0);
    zlink_pollitem_t items[2] = {{p.a, 0, ZLINK_POLLIN, 0},
                                 {NULL, fds[0], ZLINK_POLLIN, 0}};
    ck_assert_int_eq(zlink_poll(items, 2, ZT_TIMEOUT_MS), 1);
    ck_assert_int_eq(items[0].revents, 0);
    ck_assert_int_eq(items[1].revents, ZLINK_POLLIN);
    ck_assert_int_eq(uv_thread_join(&thread), 0);
    close(fds[0]);
    close(fds[1]);
    pair_close(&p);
}
END_TEST
#endif

/* ---- ZLINK_FD and ZLINK_EVENTS ---- */

static zlink_fd_t socket_fd(void *s)
{
    zlink_fd_t fd;
    size_t len = sizeof fd;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_FD, &fd, &len), 0);
    ck_assert_uint_eq(len, sizeof fd);
    return fd;
}

/* The FD polled as a raw OS handle. */
static bool fd_readable(zlink_fd_t fd, int timeout_ms)
{
    zlink_pollitem_t item = {NULL, fd, ZLINK_POLLIN, 0};
    int rc = zlink_poll(&item, 1, timeout_ms);
    ck_assert_int_ge(rc, 0);
    return rc == 1;
}

START_TEST(fd_signals_arrival_after_eagain)
{
    poll_pair p;
    if (!pair_open(&p, _i))
        return;
    zlink_fd_t fd = socket_fd(p.a);
    /* The same FD every time. */
    ck_assert(socket_fd(p.a) == fd);
    char buf[16];
    zt_expect_errno(zlink_recv(p.a, buf, sizeof buf, ZLINK_DONTWAIT), EAGAIN);
    ck_assert_int_eq(zt_get_int(p.a, ZLINK_EVENTS) & ZLINK_POLLIN, 0);
    ck_assert(!fd_readable(fd, 0));
    zt_send_str(p.b, "one", 0);
    ck_assert_msg(fd_readable(fd, ZT_TIMEOUT_MS), "FD never became readable");
    /* Readable until the socket is asked. */
    ck_assert(fd_readable(fd, 0));
    ck_assert_int_eq(zt_get_int(p.a, ZLINK_EVENTS),
                     ZLINK_POLLIN | ZLINK_POLLOUT);
    ck_assert(!fd_readable(fd, 0));
    zt_recv_str(p.a, "one");
    ck_assert_int_eq(zt_get_int(p.a, ZLINK_EVENTS), ZLINK_POLLOUT);

    /* A burst: the FD fires once; receive while EVENTS says POLLIN. */
    for (int n = 0; n < 5; n++)
        zt_send_str(p.b, "burst", 0);
    ck_assert(fd_readable(fd, ZT_TIMEOUT_MS));
    int got = 0;
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (got < 5) {
        ck_assert(zl_test_now_ms() < deadline);
        if (zt_get_int(p.a, ZLINK_EVENTS) & ZLINK_POLLIN) {
            zt_recv_str(p.a, "burst");
            got++;
        } else {
            /* The rest is still on its way: wait for the edge. */
            fd_readable(fd, 100);
        }
    }
    zt_expect_errno(zlink_recv(p.a, buf, sizeof buf, ZLINK_DONTWAIT), EAGAIN);
    pair_close(&p);
}
END_TEST

/* The FD and EVENTS also report room to send coming back. */
START_TEST(fd_signals_pollout)
{
    void *ctx = zt_ctx();
    void *a = zt_socket(ctx, ZLINK_PAIR);
    void *b = zt_socket(ctx, ZLINK_PAIR);
    zt_set_int(a, ZLINK_SNDHWM, 2);
    zt_set_int(b, ZLINK_RCVHWM, 2);
    zt_bind(b, "inproc://pollout");
    zt_connect(a, "inproc://pollout");
    int sent = 0;
    while (zlink_send(a, "x", 1, ZLINK_DONTWAIT) == 1)
        sent++;
    ck_assert_int_eq(sent, 4); /* inproc: both HWMs */
    ck_assert_int_eq(zt_get_int(a, ZLINK_EVENTS) & ZLINK_POLLOUT, 0);
    zlink_fd_t fd = socket_fd(a);
    ck_assert(!fd_readable(fd, 0));
    /* Draining the peer below its low-water mark gives the room back. */
    for (int n = 0; n < sent; n++)
        zt_recv_str(b, "x");
    ck_assert(fd_readable(fd, ZT_TIMEOUT_MS));
    ck_assert(zt_get_int(a, ZLINK_EVENTS) & ZLINK_POLLOUT);
    zt_close(a);
    zt_close(b);
    zt_term(ctx);
}
END_TEST

/* The FD taken after a message arrived, before the socket took it in:
 * readable at once (that command was never seen by the application). */
START_TEST(fd_taken_after_arrival)
{
    poll_pair p;
    if (!pair_open(&p, _i))
        return;
    char buf[16];
    zt_expect_errno(zlink_recv(p.b, buf, sizeof buf, ZLINK_DONTWAIT), EAGAIN);
    /* inproc delivers the activation from within the send. */
    zt_send_str(p.a, "early", 0);
    zlink_fd_t fd = socket_fd(p.b);
    ck_assert_msg(fd_readable(fd, 0), "FD not readable for an earlier arrival");
    ck_assert_int_eq(zt_get_int(p.b, ZLINK_EVENTS),
                     ZLINK_POLLIN | ZLINK_POLLOUT);
    ck_assert(!fd_readable(fd, 0));
    zt_recv_str(p.b, "early");
    pair_close(&p);
}
END_TEST

/* libzmq's FD is readable once after a bind or a connect over a network
 * transport, message or not, and programs wait on it before they first
 * read EVENTS (libzmq's test_poll_fd, through its poller). */
START_TEST(fd_readable_after_bind_and_connect)
{
    void *ctx = zt_ctx();
    void *vent = zt_socket(ctx, ZLINK_PUSH);
    void *bowl = zt_socket(ctx, ZLINK_PULL);
    char ep[300];
    if (!zt_join(vent, bowl, _i, ep, sizeof ep)) {
        zt_close(bowl);
        zt_close(vent);
        zt_term(ctx);
        return;
    }
    void *poller = zlink_poller_new();
    ck_assert_ptr_nonnull(poller);
    zlink_fd_t fd = socket_fd(bowl);
    ck_assert_int_eq(zlink_poller_add_fd(poller, fd, bowl, ZLINK_POLLIN), 0);
    zlink_poller_event_t event;
    ck_assert_int_eq(zlink_poller_wait(poller, &event, ZT_TIMEOUT_MS), 0);
    ck_assert(event.fd == fd);
    ck_assert_ptr_eq(event.user_data, bowl);
    ck_assert_int_eq(zlink_poller_destroy(&poller), 0);
    /* Nothing has come: EVENTS says so, and the FD is quiet again. */
    ck_assert_int_eq(zt_get_int(bowl, ZLINK_EVENTS), 0);
    ck_assert(!fd_readable(fd, 0));
    ck_assert(fd_readable(socket_fd(vent), 0));
    zt_close(bowl);
    zt_close(vent);
    zt_term(ctx);
}
END_TEST

typedef struct fd_sleeper {
    void *socket;
    zlink_fd_t fd;
    bool readable;
} fd_sleeper;

/* Sleeps on the FD as an application's event loop would. */
static void fd_sleeper_main(void *arg)
{
    fd_sleeper *f = arg;
    f->readable = fd_readable(f->fd, ZT_TIMEOUT_MS);
}

/* Once taken, the FD follows every arrival whatever the application waits
 * with: zlink_poll over several sockets, a blocking receive that sleeps,
 * or the FD itself in another thread. Each of these takes the socket's
 * commands in, and the FD is then quiet. */
START_TEST(fd_follows_other_waits)
{
    poll_pair p;
    if (!pair_open(&p, _i))
        return;
    void *idle = zt_socket(p.ctx, ZLINK_PAIR);
    zlink_fd_t fd = socket_fd(p.a);
    char buf[16];
    zt_expect_errno(zlink_recv(p.a, buf, sizeof buf, ZLINK_DONTWAIT), EAGAIN);
    ck_assert(!fd_readable(fd, 0));
    zlink_pollitem_t items[2] = {{idle, 0, ZLINK_POLLIN, 0},
                                 {p.a, 0, ZLINK_POLLIN, 0}};
    for (int round = 0; round < 3; round++) {
        /* zlink_poll, asleep when the message comes. */
        later_send l = {p.b, "polled"};
        uv_thread_t thread;
        ck_assert_int_eq(uv_thread_create(&thread, later_send_main, &l), 0);
        ck_assert_int_eq(zlink_poll(items, 2, ZT_TIMEOUT_MS), 1);
        ck_assert_int_eq(items[1].revents, ZLINK_POLLIN);
        ck_assert_int_eq(uv_thread_join(&thread), 0);
        ck_assert(!fd_readable(fd, 0));
        zt_recv_str(p.a, "polled");
        ck_assert(!fd_readable(fd, 0));

        /* A blocking receive that sleeps. */
        l.text = "blocked";
        ck_assert_int_eq(uv_thread_create(&thread, later_send_main, &l), 0);
        zt_recv_str(p.a, "blocked");
        ck_assert_int_eq(uv_thread_join(&thread), 0);
        ck_assert(!fd_readable(fd, 0));
        ck_assert_int_eq(zt_get_int(p.a, ZLINK_EVENTS), ZLINK_POLLOUT);

        /* The FD, slept on in another thread. */
        fd_sleeper f = {p.a, fd, false};
        ck_assert_int_eq(uv_thread_create(&thread, fd_sleeper_main, &f), 0);
        zt_send_str(p.b, "fd", 0);
        ck_assert_int_eq(uv_thread_join(&thread), 0);
        ck_assert_msg(f.readable, "FD never became readable");
        ck_assert_int_eq(zt_get_int(p.a, ZLINK_EVENTS),
                         ZLINK_POLLIN | ZLINK_POLLOUT);
        ck_assert(!fd_readable(fd, 0));
        zt_recv_str(p.a, "fd");
        zt_expect_errno(zlink_recv(p.a, buf, sizeof buf, ZLINK_DONTWAIT),
                        EAGAIN);
    }
    zt_close(idle);
    pair_close(&p);
}
END_TEST

static Suite *poll_suite(void)
{
    Suite *s = suite_create("poll");
    TCase *sockets = tcase_create("sockets");
    tcase_set_timeout(sockets, 30);
    tcase_add_test(sockets, poll_times_out);
    tcase_add_loop_test(sockets, poll_pollin, 0, ZT_TRANSPORT_COUNT);
    tcase_add_loop_test(sockets, poll_pollout, ZT_TCP4, ZT_TCP4 + 1);
    tcase_add_loop_test(sockets, poll_pollout, ZT_INPROC, ZT_INPROC + 1);
    tcase_add_test(sockets, poll_many_sockets);
    tcase_add_test(sockets, poll_many_items);
    tcase_add_loop_test(sockets, poll_level_triggered, 0, ZT_TRANSPORT_COUNT);
    tcase_add_test(sockets, poll_two_contexts);
    tcase_add_loop_test(sockets, poll_wakeups_not_lost, ZT_INPROC,
                        ZT_INPROC + 1);
    tcase_add_loop_test(sockets, poll_wakeups_not_lost, ZT_TCP4, ZT_TCP4 + 1);
    tcase_add_test(sockets, poll_spin_leaves_no_pipe_unwatched);
    tcase_add_loop_test(sockets, poll_woken_by_other_thread, 0, 2);
    tcase_add_loop_test(sockets, poll_eterm, 0, 2);
    tcase_add_test(sockets, poll_errors);
    tcase_add_test(sockets, poll_raw_tcp_close_and_invalid);
    tcase_add_test(sockets, poll_pollpri);
    suite_add_tcase(s, sockets);

#ifndef _WIN32
    TCase *raw = tcase_create("raw");
    tcase_set_timeout(raw, 30);
    tcase_add_test(raw, poll_raw_socket);
    tcase_add_test(raw, poll_raw_socket_wakes);
    suite_add_tcase(s, raw);
#endif

    TCase *fd = tcase_create("fd");
    tcase_set_timeout(fd, 30);
    tcase_add_loop_test(fd, fd_signals_arrival_after_eagain, 0,
                        ZT_TRANSPORT_COUNT);
    tcase_add_test(fd, fd_signals_pollout);
    tcase_add_loop_test(fd, fd_taken_after_arrival, ZT_INPROC, ZT_INPROC + 1);
    tcase_add_loop_test(fd, fd_readable_after_bind_and_connect, ZT_TCP4,
                        ZT_IPC_ABSTRACT + 1);
    tcase_add_loop_test(fd, fd_follows_other_waits, 0, ZT_TRANSPORT_COUNT);
    suite_add_tcase(s, fd);
    return s;
}

int main(void)
{
    return zl_test_run(poll_suite());
}
