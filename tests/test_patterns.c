/* test_patterns.c — the fair queue, the load balancer, and PAIR, DEALER and
 * ROUTER on top of them, driven directly over pipes with a stand-in socket
 * whose peers are the other ends of the pipes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "options.h"
#include "patterns/fair_queue.h"
#include "patterns/load_balance.h"
#include "patterns/pattern.h"
#include "pipe.h"
#include "socket.h"
#include "testutil.h"

#define MAX_PEERS 1024

/* One socket and its connections. The peer ends stand for sessions (or
 * inproc sockets): the test writes and reads them directly. */
static struct {
    zl_socket s;
    zl_mailbox peer_mailbox; /* commands for the peer ends, never read */
    zl_pipe *mine[MAX_PEERS];
    zl_pipe *peers[MAX_PEERS]; /* NULL once released */
    size_t n;
} fx;

static void socket_setup_ops(const zl_pattern_ops *ops, int type)
{
    memset(&fx, 0, sizeof fx);
    fx.s.magic = ZL_SOCKET_MAGIC;
    zl_options_init(&fx.s.options, type);
    fx.s.ops = ops;
    fx.s.pattern = calloc(1, ops->state_size);
    ck_assert_ptr_nonnull(fx.s.pattern);
    ck_assert_int_eq(zl_mailbox_init(&fx.s.mailbox, NULL, NULL), 0);
    ck_assert_int_eq(zl_mailbox_init(&fx.peer_mailbox, NULL, NULL), 0);
    ops->init(&fx.s);
}

static void socket_setup(int type)
{
    const zl_pattern_ops *ops = zl_pattern_for_type(type);
    ck_assert_ptr_nonnull(ops);
    socket_setup_ops(ops, type);
}

/* What the socket does on close, minus the lingering: every pipe goes. */
static void socket_teardown(void)
{
    while (fx.s.pipe_count > 0) {
        zl_pipe *p = fx.s.pipes[--fx.s.pipe_count];
        fx.s.ops->pipe_terminated(&fx.s, p);
        zl_pipe_release(p);
    }
    for (size_t i = 0; i < fx.n; i++) {
        if (fx.peers[i] != NULL)
            zl_pipe_release(fx.peers[i]);
    }
    fx.s.ops->destroy(&fx.s);
    free(fx.s.pattern);
    free(fx.s.pipes);
    zl_mailbox_destroy(&fx.s.mailbox);
    zl_mailbox_destroy(&fx.peer_mailbox);
}

static void register_pipe(zl_pipe *p)
{
    if (fx.s.pipe_count == fx.s.pipe_capacity) {
        size_t capacity = fx.s.pipe_capacity ? fx.s.pipe_capacity * 2 : 8;
        fx.s.pipes = realloc(fx.s.pipes, capacity * sizeof *fx.s.pipes);
        ck_assert_ptr_nonnull(fx.s.pipes);
        fx.s.pipe_capacity = capacity;
    }
    p->owner_index = fx.s.pipe_count;
    fx.s.pipes[fx.s.pipe_count++] = p;
}

/* A new connection; out_hwm limits what the socket sends to the peer.
 * routing_id is what the session would have learnt from the peer, or
 * NULL. Returns the connection's index. */
static size_t connect_peer(int out_hwm, int in_hwm, const char *routing_id)
{
    ck_assert_uint_lt(fx.n, MAX_PEERS);
    zl_pipe *mine, *theirs;
    ck_assert_int_eq(zl_pipe_pair(&mine, &theirs, out_hwm, in_hwm), 0);
    zl_pipe_set_owner(mine, &fx.s.mailbox, &fx.s);
    zl_pipe_set_owner(theirs, &fx.peer_mailbox, NULL);
    if (routing_id != NULL) {
        ck_assert_int_eq(zl_pipe_set_routing_id(mine,
                                                (const uint8_t *)routing_id,
                                                strlen(routing_id)),
                         0);
    }
    size_t i = fx.n++;
    fx.mine[i] = mine;
    fx.peers[i] = theirs;
    register_pipe(mine);
    fx.s.ops->attach_pipe(&fx.s, mine, false);
    return i;
}

/* The socket's command loop, as far as patterns see it. A PIPE_TERM means
 * the peer's delimiter is on its way: the pattern reads up to it. */
static void process_commands(void)
{
    zl_cmd cmd;
    while (zl_mailbox_recv(&fx.s.mailbox, &cmd)) {
        if (cmd.pipe != NULL && zl_pipe_cmd_live(cmd.pipe)) {
            switch (cmd.type) {
            case ZL_CMD_ACTIVATE_READ:
            case ZL_CMD_PIPE_TERM:
                fx.s.ops->read_activated(&fx.s, cmd.pipe);
                break;
            case ZL_CMD_ACTIVATE_WRITE:
                fx.s.ops->write_activated(&fx.s, cmd.pipe);
                break;
            default:
                break;
            }
        }
        if (cmd.pipe != NULL)
            zl_pipe_unref(cmd.pipe);
    }
}

/* The peer closes: its delimiter follows what it sent, and it lets go of
 * its end, as its own socket's zl_socket_pipe_done would. */
static void peer_close(size_t i)
{
    zl_pipe_terminate(fx.peers[i]);
    zl_pipe_release(fx.peers[i]);
    fx.peers[i] = NULL;
}

/* ---- Messages --------------------------------------------------------- */

static void msg_set(zlink_msg_t *m, const char *body, bool more)
{
    ck_assert_int_eq(zl_msg_init_buffer(m, body, strlen(body)), 0);
    if (more)
        zl_msg_set_flags(m, ZL_MSG_MORE);
}

static bool msg_is(zlink_msg_t *m, const char *body)
{
    return zlink_msg_size(m) == strlen(body) &&
           memcmp(zlink_msg_data(m), body, strlen(body)) == 0;
}

static bool msg_more(const zlink_msg_t *m)
{
    return (zl_msg_flags(m) & ZL_MSG_MORE) != 0;
}

static void peer_send(size_t i, const char *body, bool more)
{
    zlink_msg_t m;
    msg_set(&m, body, more);
    ck_assert(zl_pipe_write(fx.peers[i], &m));
    if (!more)
        zl_pipe_flush(fx.peers[i]);
}

static void peer_expect(size_t i, const char *body, bool more)
{
    zlink_msg_t m;
    zlink_msg_init(&m);
    ck_assert_int_eq(zl_pipe_read(fx.peers[i], &m), ZL_PIPE_MSG);
    ck_assert_msg(msg_is(&m, body), "peer %zu: expected '%s', got '%.*s'", i,
                  body, (int)zlink_msg_size(&m), (char *)zlink_msg_data(&m));
    ck_assert_int_eq(msg_more(&m), more);
    zlink_msg_close(&m);
}

static void peer_expect_nothing(size_t i)
{
    zlink_msg_t m;
    zlink_msg_init(&m);
    ck_assert_int_eq(zl_pipe_read(fx.peers[i], &m), ZL_PIPE_EMPTY);
}

static int sock_send(const char *body, bool more)
{
    zlink_msg_t m;
    msg_set(&m, body, more);
    int rc = fx.s.ops->send(&fx.s, &m);
    if (rc == 0)
        ck_assert_uint_eq(zlink_msg_size(&m), 0);
    zlink_msg_close(&m);
    return rc;
}

static void sock_expect(const char *body, bool more)
{
    zlink_msg_t m;
    zlink_msg_init(&m);
    ck_assert_int_eq(fx.s.ops->recv(&fx.s, &m), 0);
    ck_assert_msg(msg_is(&m, body), "expected '%s', got '%.*s'", body,
                  (int)zlink_msg_size(&m), (char *)zlink_msg_data(&m));
    ck_assert_int_eq(msg_more(&m), more);
    zlink_msg_close(&m);
}

static void sock_expect_nothing(void)
{
    zlink_msg_t m;
    zlink_msg_init(&m);
    errno = 0;
    ck_assert_int_eq(fx.s.ops->recv(&fx.s, &m), -1);
    ck_assert_int_eq(errno, EAGAIN);
    zlink_msg_close(&m);
}

/* A ROUTER's id frame into id (5 .. 255 bytes), checking MORE. */
static void sock_recv_id(zl_blob *id)
{
    zlink_msg_t m;
    zlink_msg_init(&m);
    ck_assert_int_eq(fx.s.ops->recv(&fx.s, &m), 0);
    ck_assert(msg_more(&m));
    ck_assert_uint_le(zlink_msg_size(&m), 255);
    id->len = (uint8_t)zlink_msg_size(&m);
    memcpy(id->data, zlink_msg_data(&m), id->len);
    zlink_msg_close(&m);
}

static int sock_send_id(const zl_blob *id)
{
    zlink_msg_t m;
    ck_assert_int_eq(zl_msg_init_buffer(&m, id->data, id->len), 0);
    zl_msg_set_flags(&m, ZL_MSG_MORE);
    int rc = fx.s.ops->send(&fx.s, &m);
    zlink_msg_close(&m);
    return rc;
}

static zl_blob blob_of(const char *s)
{
    zl_blob b;
    b.len = (uint8_t)strlen(s);
    memcpy(b.data, s, b.len);
    return b;
}

static bool blob_equal(const zl_blob *a, const zl_blob *b)
{
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

/* The routing id a pipe carries, as a blob. */
static zl_blob pipe_id(const zl_pipe *p)
{
    zl_blob b;
    size_t len;
    const uint8_t *data = zl_pipe_routing_id(p, &len);
    b.len = (uint8_t)len;
    if (len > 0)
        memcpy(b.data, data, len);
    return b;
}

static bool pipe_id_is(const zl_pipe *p, const zl_blob *b)
{
    zl_blob have = pipe_id(p);
    return blob_equal(&have, b);
}

/* ---- Fair queue and load balancer, on their own ----------------------- */

/* A minimal pattern so that zl_socket_pipe_done has someone to call back:
 * a fair queue and a load balancer over the same pipes. */
static zl_fair_queue unit_fq;
static zl_load_balance unit_lb;

static void unit_init(zl_socket *s)
{
    zl_fair_queue_init(&unit_fq);
    zl_load_balance_init(&unit_lb);
}

static void unit_destroy(zl_socket *s)
{
    zl_fair_queue_destroy(&unit_fq);
    zl_load_balance_destroy(&unit_lb);
}

static void unit_attach(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    ck_assert_int_eq(zl_fair_queue_attach(&unit_fq, p), 0);
    ck_assert_int_eq(zl_load_balance_attach(&unit_lb, p), 0);
}

static void unit_terminated(zl_socket *s, zl_pipe *p)
{
    zl_fair_queue_remove(&unit_fq, p);
    zl_load_balance_remove(&unit_lb, p);
}

static void unit_read_activated(zl_socket *s, zl_pipe *p)
{
    zl_fair_queue_activate(&unit_fq, p);
}

static void unit_write_activated(zl_socket *s, zl_pipe *p)
{
    zl_load_balance_activate(&unit_lb, p);
}

static const zl_pattern_ops unit_ops = {
    .type = -1,
    .state_size = 1,
    .init = unit_init,
    .destroy = unit_destroy,
    .attach_pipe = unit_attach,
    .pipe_terminated = unit_terminated,
    .read_activated = unit_read_activated,
    .write_activated = unit_write_activated,
};

static void fq_expect(const char *body, bool more)
{
    zlink_msg_t m;
    zlink_msg_init(&m);
    ck_assert_int_eq(zl_fair_queue_recv(&unit_fq, &fx.s, &m, NULL), 0);
    ck_assert_msg(msg_is(&m, body), "expected '%s', got '%.*s'", body,
                  (int)zlink_msg_size(&m), (char *)zlink_msg_data(&m));
    ck_assert_int_eq(msg_more(&m), more);
    zlink_msg_close(&m);
}

static void fq_expect_nothing(void)
{
    zlink_msg_t m;
    zlink_msg_init(&m);
    errno = 0;
    ck_assert_int_eq(zl_fair_queue_recv(&unit_fq, &fx.s, &m, NULL), -1);
    ck_assert_int_eq(errno, EAGAIN);
}

static int lb_send(const char *body, bool more)
{
    zlink_msg_t m;
    msg_set(&m, body, more);
    int rc = zl_load_balance_send(&unit_lb, &m);
    zlink_msg_close(&m);
    return rc;
}

START_TEST(fq_round_robin)
{
    socket_setup_ops(&unit_ops, ZLINK_DEALER);
    for (int i = 0; i < 3; i++)
        connect_peer(0, 0, NULL);
    const char *bodies[3][2] = {{"0a", "0b"}, {"1a", "1b"}, {"2a", "2b"}};
    for (size_t i = 0; i < 3; i++) {
        peer_send(i, bodies[i][0], false);
        peer_send(i, bodies[i][1], false);
    }
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < 3; i++)
            fq_expect(bodies[i][round], false);
    }
    fq_expect_nothing();
    socket_teardown();
}
END_TEST

START_TEST(fq_reports_source_pipe)
{
    socket_setup_ops(&unit_ops, ZLINK_DEALER);
    connect_peer(0, 0, NULL);
    connect_peer(0, 0, NULL);
    peer_send(1, "from-1", false);
    zlink_msg_t m;
    zlink_msg_init(&m);
    zl_pipe *from = NULL;
    ck_assert_int_eq(zl_fair_queue_recv(&unit_fq, &fx.s, &m, &from), 0);
    ck_assert_ptr_eq(from, fx.mine[1]);
    zlink_msg_close(&m);
    socket_teardown();
}
END_TEST

START_TEST(fq_multipart_atomic)
{
    socket_setup_ops(&unit_ops, ZLINK_DEALER);
    for (int i = 0; i < 3; i++)
        connect_peer(0, 0, NULL);
    peer_send(0, "a1", true);
    peer_send(0, "a2", true);
    peer_send(0, "a3", false);
    peer_send(1, "b1", false);
    peer_send(2, "c1", true);
    peer_send(2, "c2", false);
    peer_send(0, "a4", false);
    fq_expect("a1", true);
    fq_expect("a2", true);
    fq_expect("a3", false);
    fq_expect("b1", false);
    fq_expect("c1", true);
    fq_expect("c2", false);
    fq_expect("a4", false);
    fq_expect_nothing();
    socket_teardown();
}
END_TEST

START_TEST(fq_sleeps_and_wakes)
{
    socket_setup_ops(&unit_ops, ZLINK_DEALER);
    for (int i = 0; i < 3; i++)
        connect_peer(0, 0, NULL);
    fq_expect_nothing();
    ck_assert_uint_eq(unit_fq.active, 0);
    ck_assert(!zl_fair_queue_has_in(&unit_fq, &fx.s));

    peer_send(1, "wake", false);
    /* Until the wakeup is processed the pipe sleeps. */
    fq_expect_nothing();
    process_commands();
    ck_assert_uint_eq(unit_fq.active, 1);
    /* Spurious activations change nothing. */
    zl_fair_queue_activate(&unit_fq, fx.mine[1]);
    zl_fair_queue_activate(&unit_fq, fx.mine[1]);
    ck_assert_uint_eq(unit_fq.active, 1);
    ck_assert(zl_fair_queue_has_in(&unit_fq, &fx.s));
    fq_expect("wake", false);
    fq_expect_nothing();
    socket_teardown();
}
END_TEST

START_TEST(fq_has_in_skips_delimiter)
{
    socket_setup_ops(&unit_ops, ZLINK_DEALER);
    connect_peer(0, 0, NULL);
    peer_send(0, "last", false);
    peer_close(0);
    ck_assert(zl_fair_queue_has_in(&unit_fq, &fx.s));
    fq_expect("last", false);
    /* The delimiter is not input: the pipe is done with instead. */
    ck_assert(!zl_fair_queue_has_in(&unit_fq, &fx.s));
    ck_assert_uint_eq(fx.s.pipe_count, 0);
    ck_assert_uint_eq(unit_fq.count, 0);
    socket_teardown();
}
END_TEST

START_TEST(fq_closed_pipe_removed)
{
    socket_setup_ops(&unit_ops, ZLINK_DEALER);
    for (int i = 0; i < 3; i++)
        connect_peer(0, 0, NULL);
    peer_send(1, "bye", false);
    peer_close(1);
    process_commands();
    fq_expect("bye", false);
    fq_expect_nothing();
    ck_assert_uint_eq(fx.s.pipe_count, 2);
    ck_assert_uint_eq(unit_fq.count, 2);
    ck_assert_uint_eq(unit_lb.count, 2);

    /* The others carry on. */
    peer_send(0, "zero", false);
    peer_send(2, "two", false);
    process_commands();
    fq_expect("zero", false);
    fq_expect("two", false);
    socket_teardown();
}
END_TEST

START_TEST(fq_forced_removal_drops_half_message)
{
    static const char big[] = "a first part well past the inline size of a "
                              "message, so that a leak would show";
    socket_setup_ops(&unit_ops, ZLINK_DEALER);
    connect_peer(0, 0, NULL);
    connect_peer(0, 0, NULL);
    peer_send(0, big, true);
    peer_send(0, "rest", false);
    peer_send(1, "whole", false);
    ck_assert(zl_fair_queue_has_in(&unit_fq, &fx.s));

    /* The socket lets go of pipe 0 before its delimiter: the first part
     * read ahead must not come out without the rest. */
    zl_socket_pipe_done(&fx.s, fx.mine[0]);
    fq_expect("whole", false);
    fq_expect_nothing();
    socket_teardown();
}
END_TEST

START_TEST(lb_round_robin)
{
    socket_setup_ops(&unit_ops, ZLINK_DEALER);
    for (int i = 0; i < 3; i++)
        connect_peer(0, 0, NULL);
    const char *bodies[] = {"m0", "m1", "m2", "m3", "m4", "m5"};
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(lb_send(bodies[i], false), 0);
    for (size_t i = 0; i < 3; i++) {
        peer_expect(i, bodies[i], false);
        peer_expect(i, bodies[i + 3], false);
        peer_expect_nothing(i);
    }
    socket_teardown();
}
END_TEST

START_TEST(lb_multipart_on_one_pipe)
{
    socket_setup_ops(&unit_ops, ZLINK_DEALER);
    connect_peer(0, 0, NULL);
    connect_peer(0, 0, NULL);
    ck_assert_int_eq(lb_send("a", true), 0);
    ck_assert_int_eq(lb_send("b", true), 0);
    /* Nothing is visible before the last part. */
    peer_expect_nothing(0);
    ck_assert_int_eq(lb_send("c", false), 0);
    ck_assert_int_eq(lb_send("d", false), 0);
    peer_expect(0, "a", true);
    peer_expect(0, "b", true);
    peer_expect(0, "c", false);
    peer_expect(1, "d", false);
    socket_teardown();
}
END_TEST

START_TEST(lb_hwm_keeps_message)
{
    socket_setup_ops(&unit_ops, ZLINK_DEALER);
    connect_peer(1, 0, NULL);
    connect_peer(1, 0, NULL);
    ck_assert_int_eq(lb_send("x", false), 0);
    ck_assert_int_eq(lb_send("y", false), 0);
    ck_assert(!zl_load_balance_has_out(&unit_lb));

    zlink_msg_t m;
    msg_set(&m, "z", false);
    errno = 0;
    ck_assert_int_eq(zl_load_balance_send(&unit_lb, &m), -1);
    ck_assert_int_eq(errno, EAGAIN);
    ck_assert(msg_is(&m, "z"));

    peer_expect(0, "x", false);
    process_commands();
    ck_assert(zl_load_balance_has_out(&unit_lb));
    ck_assert_int_eq(zl_load_balance_send(&unit_lb, &m), 0);
    ck_assert_uint_eq(zlink_msg_size(&m), 0);
    zlink_msg_close(&m);
    peer_expect(0, "z", false);
    peer_expect(1, "y", false);
    socket_teardown();
}
END_TEST

START_TEST(lb_drops_rest_when_pipe_dies)
{
    socket_setup_ops(&unit_ops, ZLINK_DEALER);
    connect_peer(0, 0, NULL);
    connect_peer(0, 0, NULL);
    ck_assert_int_eq(lb_send("head", true), 0);
    ck_assert_ptr_eq(unit_lb.sending, fx.mine[0]);

    /* Peer 0 goes away mid-message; reading finds its delimiter. */
    peer_close(0);
    process_commands();
    fq_expect_nothing();
    ck_assert_uint_eq(fx.s.pipe_count, 1);

    ck_assert(zl_load_balance_has_out(&unit_lb));
    ck_assert_int_eq(lb_send("middle", true), 0);
    ck_assert_int_eq(lb_send("tail", false), 0);
    ck_assert_int_eq(lb_send("next", false), 0);
    peer_expect(1, "next", false);
    peer_expect_nothing(1);
    socket_teardown();
}
END_TEST

/* ---- DEALER ----------------------------------------------------------- */

START_TEST(dealer_round_robin)
{
    socket_setup(ZLINK_DEALER);
    for (int i = 0; i < 3; i++)
        connect_peer(0, 0, NULL);
    char body[32];
    for (int i = 0; i < 9; i++) {
        snprintf(body, sizeof body, "m%d", i);
        ck_assert_int_eq(sock_send(body, false), 0);
    }
    for (size_t i = 0; i < 3; i++) {
        for (size_t k = 0; k < 3; k++) {
            snprintf(body, sizeof body, "m%zu", i + 3 * k);
            peer_expect(i, body, false);
        }
        peer_expect_nothing(i);
    }
    socket_teardown();
}
END_TEST

START_TEST(dealer_fair_queue)
{
    socket_setup(ZLINK_DEALER);
    for (int i = 0; i < 3; i++)
        connect_peer(0, 0, NULL);
    char body[32];
    for (size_t i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++) {
            snprintf(body, sizeof body, "p%zu-%d", i, k);
            peer_send(i, body, false);
        }
    }
    for (int k = 0; k < 3; k++) {
        for (size_t i = 0; i < 3; i++) {
            snprintf(body, sizeof body, "p%zu-%d", i, k);
            ck_assert(fx.s.ops->has_in(&fx.s));
            sock_expect(body, false);
        }
    }
    ck_assert(!fx.s.ops->has_in(&fx.s));
    sock_expect_nothing();
    socket_teardown();
}
END_TEST

START_TEST(dealer_multipart_both_ways)
{
    socket_setup(ZLINK_DEALER);
    connect_peer(0, 0, NULL);
    connect_peer(0, 0, NULL);
    peer_send(0, "a1", true);
    peer_send(0, "a2", false);
    peer_send(1, "b1", true);
    peer_send(1, "b2", true);
    peer_send(1, "b3", false);
    sock_expect("a1", true);
    sock_expect("a2", false);
    sock_expect("b1", true);
    sock_expect("b2", true);
    sock_expect("b3", false);

    ck_assert_int_eq(sock_send("x1", true), 0);
    ck_assert_int_eq(sock_send("x2", false), 0);
    ck_assert_int_eq(sock_send("y1", true), 0);
    ck_assert_int_eq(sock_send("y2", false), 0);
    peer_expect(0, "x1", true);
    peer_expect(0, "x2", false);
    peer_expect(1, "y1", true);
    peer_expect(1, "y2", false);
    socket_teardown();
}
END_TEST

START_TEST(dealer_hwm_no_loss)
{
    enum { HWM = 10, PEERS = 3 };
    socket_setup(ZLINK_DEALER);
    for (int i = 0; i < PEERS; i++)
        connect_peer(HWM, 0, NULL);
    char body[32];
    int sent = 0;
    for (;;) {
        snprintf(body, sizeof body, "%d", sent);
        zlink_msg_t m;
        msg_set(&m, body, false);
        if (fx.s.ops->send(&fx.s, &m) != 0) {
            ck_assert_int_eq(errno, EAGAIN);
            ck_assert(msg_is(&m, body));
            zlink_msg_close(&m);
            break;
        }
        zlink_msg_close(&m);
        sent++;
    }
    ck_assert_int_eq(sent, HWM * PEERS);
    ck_assert(!fx.s.ops->has_out(&fx.s));

    /* Draining one peer lets the next send through, to that peer. */
    for (int k = 0; k < HWM; k++) {
        snprintf(body, sizeof body, "%d", k * PEERS + 1);
        peer_expect(1, body, false);
    }
    process_commands();
    ck_assert(fx.s.ops->has_out(&fx.s));
    snprintf(body, sizeof body, "%d", sent);
    ck_assert_int_eq(sock_send(body, false), 0);
    peer_expect(1, body, false);

    for (size_t i = 0; i < PEERS; i += 2) {
        for (int k = 0; k < HWM; k++) {
            snprintf(body, sizeof body, "%d", k * PEERS + (int)i);
            peer_expect(i, body, false);
        }
        peer_expect_nothing(i);
    }
    socket_teardown();
}
END_TEST

START_TEST(dealer_closed_pipe_removed)
{
    socket_setup(ZLINK_DEALER);
    for (int i = 0; i < 3; i++)
        connect_peer(0, 0, NULL);
    peer_send(1, "bye", false);
    peer_close(1);
    process_commands();
    sock_expect("bye", false);
    sock_expect_nothing();
    ck_assert_uint_eq(fx.s.pipe_count, 2);

    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(sock_send("m", false), 0);
    peer_expect(0, "m", false);
    peer_expect(0, "m", false);
    peer_expect(2, "m", false);
    peer_expect(2, "m", false);
    socket_teardown();
}
END_TEST

START_TEST(dealer_without_pipes)
{
    socket_setup(ZLINK_DEALER);
    errno = 0;
    ck_assert_int_eq(sock_send("m", false), -1);
    ck_assert_int_eq(errno, EAGAIN);
    ck_assert(!fx.s.ops->has_out(&fx.s));
    ck_assert(!fx.s.ops->has_in(&fx.s));
    sock_expect_nothing();
    socket_teardown();
}
END_TEST

/* ---- PAIR ------------------------------------------------------------- */

START_TEST(pair_send_recv)
{
    socket_setup(ZLINK_PAIR);
    connect_peer(0, 0, NULL);
    ck_assert(fx.s.ops->has_out(&fx.s));
    ck_assert_int_eq(sock_send("a", true), 0);
    ck_assert_int_eq(sock_send("b", false), 0);
    peer_expect(0, "a", true);
    peer_expect(0, "b", false);

    ck_assert(!fx.s.ops->has_in(&fx.s));
    peer_send(0, "c", true);
    peer_send(0, "d", false);
    process_commands();
    ck_assert(fx.s.ops->has_in(&fx.s));
    sock_expect("c", true);
    sock_expect("d", false);
    sock_expect_nothing();
    socket_teardown();
}
END_TEST

START_TEST(pair_hwm_no_loss)
{
    socket_setup(ZLINK_PAIR);
    connect_peer(4, 0, NULL);
    char body[32];
    for (int i = 0; i < 4; i++) {
        snprintf(body, sizeof body, "%d", i);
        ck_assert_int_eq(sock_send(body, false), 0);
    }
    ck_assert(!fx.s.ops->has_out(&fx.s));
    zlink_msg_t m;
    msg_set(&m, "4", false);
    errno = 0;
    ck_assert_int_eq(fx.s.ops->send(&fx.s, &m), -1);
    ck_assert_int_eq(errno, EAGAIN);
    ck_assert(msg_is(&m, "4"));

    for (int i = 0; i < 4; i++) {
        snprintf(body, sizeof body, "%d", i);
        peer_expect(0, body, false);
    }
    process_commands();
    ck_assert(fx.s.ops->has_out(&fx.s));
    ck_assert_int_eq(fx.s.ops->send(&fx.s, &m), 0);
    zlink_msg_close(&m);
    peer_expect(0, "4", false);
    socket_teardown();
}
END_TEST

START_TEST(pair_refuses_second_peer)
{
    socket_setup(ZLINK_PAIR);
    connect_peer(0, 0, NULL);
    size_t second = connect_peer(0, 0, NULL);
    ck_assert_uint_eq(fx.s.pipe_count, 2);

    /* The second peer is told to go at once. */
    zlink_msg_t m;
    zlink_msg_init(&m);
    ck_assert_int_eq(zl_pipe_read(fx.peers[second], &m), ZL_PIPE_CLOSED);

    /* What it sent before it noticed is dropped, never delivered. */
    peer_send(second, "intruder", false);
    peer_send(0, "friend", false);
    process_commands();
    sock_expect("friend", false);
    sock_expect_nothing();
    ck_assert_int_eq(sock_send("reply", false), 0);
    peer_expect(0, "reply", false);

    /* Once it lets go, its pipe is done with. */
    peer_close(second);
    process_commands();
    ck_assert_uint_eq(fx.s.pipe_count, 1);
    ck_assert_ptr_eq(fx.s.pipes[0], fx.mine[0]);
    socket_teardown();
}
END_TEST

START_TEST(pair_peer_closed)
{
    socket_setup(ZLINK_PAIR);
    connect_peer(0, 0, NULL);
    peer_send(0, "bye", false);
    peer_close(0);
    process_commands();
    sock_expect("bye", false);
    sock_expect_nothing();
    ck_assert_uint_eq(fx.s.pipe_count, 0);
    ck_assert(!fx.s.ops->has_out(&fx.s));
    errno = 0;
    ck_assert_int_eq(sock_send("lost?", false), -1);
    ck_assert_int_eq(errno, EAGAIN);

    /* A new peer is accepted after the old one is gone. */
    size_t next = connect_peer(0, 0, NULL);
    ck_assert_int_eq(sock_send("hello", false), 0);
    peer_expect(next, "hello", false);
    socket_teardown();
}
END_TEST

/* ---- ROUTER ----------------------------------------------------------- */

START_TEST(router_auto_ids)
{
    socket_setup(ZLINK_ROUTER);
    for (int i = 0; i < 3; i++)
        connect_peer(0, 0, NULL);
    char body[32];
    for (size_t i = 0; i < 3; i++) {
        snprintf(body, sizeof body, "hello-%zu", i);
        peer_send(i, body, false);
    }
    zl_blob ids[3];
    for (size_t i = 0; i < 3; i++) {
        sock_recv_id(&ids[i]);
        ck_assert_uint_eq(ids[i].len, 5);
        ck_assert_uint_eq(ids[i].data[0], 0);
        ck_assert(pipe_id_is(fx.mine[i], &ids[i]));
        snprintf(body, sizeof body, "hello-%zu", i);
        sock_expect(body, false);
    }
    ck_assert(!blob_equal(&ids[0], &ids[1]));
    ck_assert(!blob_equal(&ids[0], &ids[2]));
    ck_assert(!blob_equal(&ids[1], &ids[2]));

    /* Replies in reverse order reach the right peers. */
    for (size_t k = 3; k-- > 0;) {
        ck_assert_int_eq(sock_send_id(&ids[k]), 0);
        snprintf(body, sizeof body, "reply-%zu", k);
        ck_assert_int_eq(sock_send(body, false), 0);
    }
    for (size_t i = 0; i < 3; i++) {
        snprintf(body, sizeof body, "reply-%zu", i);
        peer_expect(i, body, false);
        peer_expect_nothing(i);
    }
    socket_teardown();
}
END_TEST

START_TEST(router_announced_id)
{
    socket_setup(ZLINK_ROUTER);
    connect_peer(0, 0, "alice");
    connect_peer(0, 0, "bob");
    peer_send(0, "hi", false);
    sock_expect("alice", true);
    sock_expect("hi", false);

    ck_assert_int_eq(sock_send("bob", true), 0);
    ck_assert_int_eq(sock_send("for bob", false), 0);
    ck_assert_int_eq(sock_send("alice", true), 0);
    ck_assert_int_eq(sock_send("for alice", false), 0);
    peer_expect(0, "for alice", false);
    peer_expect(1, "for bob", false);
    socket_teardown();
}
END_TEST

/* As libzmq 4.3 without ROUTER_HANDOVER: a second peer announcing an id
 * in use is ignored while the first is there. */
START_TEST(router_duplicate_id_ignored)
{
    socket_setup(ZLINK_ROUTER);
    connect_peer(0, 0, "alice");
    connect_peer(0, 0, "alice");
    zl_blob alice = blob_of("alice");
    ck_assert(pipe_id_is(fx.mine[0], &alice));

    peer_send(1, "second", false);
    ck_assert(!fx.s.ops->has_in(&fx.s));

    ck_assert_int_eq(sock_send("alice", true), 0);
    ck_assert_int_eq(sock_send("first", false), 0);
    peer_expect(0, "first", false);
    peer_expect_nothing(1);
    socket_teardown();
}
END_TEST

START_TEST(router_mandatory_unreachable)
{
    socket_setup(ZLINK_ROUTER);
    fx.s.options.router_mandatory = true;
    connect_peer(0, 0, "alice");
    zlink_msg_t m;
    msg_set(&m, "nobody", true);
    errno = 0;
    ck_assert_int_eq(fx.s.ops->send(&fx.s, &m), -1);
    ck_assert_int_eq(errno, EHOSTUNREACH);
    ck_assert(msg_is(&m, "nobody"));
    zlink_msg_close(&m);

    /* The socket is not left inside a message. */
    ck_assert_int_eq(sock_send("alice", true), 0);
    ck_assert_int_eq(sock_send("ok", false), 0);
    peer_expect(0, "ok", false);
    socket_teardown();
}
END_TEST

START_TEST(router_mandatory_full)
{
    socket_setup(ZLINK_ROUTER);
    fx.s.options.router_mandatory = true;
    connect_peer(2, 0, "alice");
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(sock_send("alice", true), 0);
        ck_assert_int_eq(sock_send(i ? "m1" : "m0", false), 0);
    }
    ck_assert(!fx.s.ops->has_out(&fx.s));
    zlink_msg_t m;
    msg_set(&m, "alice", true);
    errno = 0;
    ck_assert_int_eq(fx.s.ops->send(&fx.s, &m), -1);
    ck_assert_int_eq(errno, EAGAIN);
    ck_assert(msg_is(&m, "alice"));
    ck_assert(!fx.s.ops->has_out(&fx.s));

    peer_expect(0, "m0", false);
    process_commands();
    ck_assert(fx.s.ops->has_out(&fx.s));
    ck_assert_int_eq(fx.s.ops->send(&fx.s, &m), 0);
    zlink_msg_close(&m);
    ck_assert_int_eq(sock_send("m2", false), 0);
    peer_expect(0, "m1", false);
    peer_expect(0, "m2", false);
    peer_expect_nothing(0);
    socket_teardown();
}
END_TEST

START_TEST(router_drops_unroutable)
{
    /* Bodies past the inline size, so that a leak would show. */
    static const char big[] = "a body well past the inline size of a "
                              "message, to be sure it is freed";
    socket_setup(ZLINK_ROUTER);
    connect_peer(1, 0, "alice");

    ck_assert(fx.s.ops->has_out(&fx.s));
    ck_assert_int_eq(sock_send("nobody", true), 0);
    ck_assert_int_eq(sock_send(big, true), 0);
    ck_assert_int_eq(sock_send(big, false), 0);

    /* A full peer: dropped whole as well. */
    ck_assert_int_eq(sock_send("alice", true), 0);
    ck_assert_int_eq(sock_send("kept", false), 0);
    ck_assert_int_eq(sock_send("alice", true), 0);
    ck_assert_int_eq(sock_send(big, true), 0);
    ck_assert_int_eq(sock_send(big, false), 0);
    ck_assert(fx.s.ops->has_out(&fx.s));

    /* An id with nothing after it is ignored. */
    ck_assert_int_eq(sock_send("alice", false), 0);

    peer_expect(0, "kept", false);
    peer_expect_nothing(0);
    socket_teardown();
}
END_TEST

START_TEST(router_multipart_both_ways)
{
    socket_setup(ZLINK_ROUTER);
    connect_peer(0, 0, "p0");
    connect_peer(0, 0, "p1");
    peer_send(0, "a", true);
    peer_send(0, "b", true);
    peer_send(0, "c", false);
    peer_send(1, "x", true);
    peer_send(1, "y", false);
    sock_expect("p0", true);
    sock_expect("a", true);
    sock_expect("b", true);
    sock_expect("c", false);
    sock_expect("p1", true);
    sock_expect("x", true);
    sock_expect("y", false);
    sock_expect_nothing();

    ck_assert_int_eq(sock_send("p1", true), 0);
    ck_assert_int_eq(sock_send("1", true), 0);
    peer_expect_nothing(1);
    ck_assert_int_eq(sock_send("2", false), 0);
    peer_expect(1, "1", true);
    peer_expect(1, "2", false);
    socket_teardown();
}
END_TEST

START_TEST(router_has_in_reads_ahead)
{
    socket_setup(ZLINK_ROUTER);
    connect_peer(0, 0, "p0");
    ck_assert(!fx.s.ops->has_in(&fx.s));
    peer_send(0, "a", true);
    peer_send(0, "b", false);
    process_commands();
    ck_assert(fx.s.ops->has_in(&fx.s));
    ck_assert(fx.s.ops->has_in(&fx.s));
    sock_expect("p0", true);
    ck_assert(fx.s.ops->has_in(&fx.s));
    sock_expect("a", true);
    sock_expect("b", false);

    /* After the peer's last message, its delimiter is not input. */
    peer_close(0);
    process_commands();
    ck_assert(!fx.s.ops->has_in(&fx.s));
    ck_assert_uint_eq(fx.s.pipe_count, 0);
    socket_teardown();
}
END_TEST

START_TEST(router_skips_routing_id_messages)
{
    socket_setup(ZLINK_ROUTER);
    connect_peer(0, 0, "p0");
    zlink_msg_t m;
    msg_set(&m, "p0", false);
    zl_msg_set_flags(&m, ZL_MSG_ROUTING_ID);
    ck_assert(zl_pipe_write(fx.peers[0], &m));
    peer_send(0, "data", false);
    sock_expect("p0", true);
    sock_expect("data", false);
    sock_expect_nothing();
    socket_teardown();
}
END_TEST

START_TEST(router_closed_pipe_removed)
{
    socket_setup(ZLINK_ROUTER);
    fx.s.options.router_mandatory = true;
    connect_peer(0, 0, "alice");
    connect_peer(0, 0, "bob");
    peer_send(1, "bye", false);
    peer_close(1);
    process_commands();
    sock_expect("bob", true);
    sock_expect("bye", false);
    sock_expect_nothing();
    ck_assert_uint_eq(fx.s.pipe_count, 1);

    errno = 0;
    ck_assert_int_eq(sock_send("bob", true), -1);
    ck_assert_int_eq(errno, EHOSTUNREACH);
    ck_assert_int_eq(sock_send("alice", true), 0);
    ck_assert_int_eq(sock_send("still here", false), 0);
    peer_expect(0, "still here", false);

    /* The id is free again for a newcomer. */
    size_t again = connect_peer(0, 0, "bob");
    zl_blob bob = blob_of("bob");
    ck_assert(pipe_id_is(fx.mine[again], &bob));
    socket_teardown();
}
END_TEST

START_TEST(router_pipe_dies_mid_message)
{
    socket_setup(ZLINK_ROUTER);
    connect_peer(0, 0, "alice");
    connect_peer(0, 0, "bob");
    ck_assert_int_eq(sock_send("alice", true), 0);
    ck_assert_int_eq(sock_send("part", true), 0);
    peer_close(0);
    process_commands();
    sock_expect_nothing();
    ck_assert_uint_eq(fx.s.pipe_count, 1);
    /* The rest of the message is dropped; the next one routes. */
    ck_assert_int_eq(sock_send("end", false), 0);
    ck_assert_int_eq(sock_send("bob", true), 0);
    ck_assert_int_eq(sock_send("hi", false), 0);
    peer_expect(1, "hi", false);
    peer_expect_nothing(1);
    socket_teardown();
}
END_TEST

START_TEST(router_many_peers)
{
    enum { PEERS = 1000 };
    socket_setup(ZLINK_ROUTER);
    fx.s.options.router_mandatory = true;
    static zl_blob ids[PEERS];
    char body[32];
    for (size_t i = 0; i < PEERS; i++) {
        connect_peer(0, 0, NULL);
        snprintf(body, sizeof body, "%zu", i);
        peer_send(i, body, false);
    }
    /* Every peer is heard from once, with its own id. */
    static bool seen[PEERS];
    for (size_t k = 0; k < PEERS; k++) {
        zl_blob id;
        sock_recv_id(&id);
        zlink_msg_t m;
        zlink_msg_init(&m);
        ck_assert_int_eq(fx.s.ops->recv(&fx.s, &m), 0);
        ck_assert_uint_lt(zlink_msg_size(&m), sizeof body);
        memcpy(body, zlink_msg_data(&m), zlink_msg_size(&m));
        body[zlink_msg_size(&m)] = '\0';
        zlink_msg_close(&m);
        size_t i = (size_t)strtoul(body, NULL, 10);
        ck_assert_uint_lt(i, PEERS);
        ck_assert(!seen[i]);
        seen[i] = true;
        ck_assert(pipe_id_is(fx.mine[i], &id));
        ids[i] = id;
    }
    sock_expect_nothing();

    /* Half of them leave, which shuffles the table. */
    for (size_t i = 0; i < PEERS; i += 2)
        peer_close(i);
    process_commands();
    sock_expect_nothing();
    ck_assert_uint_eq(fx.s.pipe_count, PEERS / 2);

    for (size_t i = 0; i < PEERS; i++) {
        if (i % 2 == 0) {
            errno = 0;
            ck_assert_int_eq(sock_send_id(&ids[i]), -1);
            ck_assert_int_eq(errno, EHOSTUNREACH);
            continue;
        }
        ck_assert_int_eq(sock_send_id(&ids[i]), 0);
        snprintf(body, sizeof body, "to-%zu", i);
        ck_assert_int_eq(sock_send(body, false), 0);
    }
    for (size_t i = 1; i < PEERS; i += 2) {
        snprintf(body, sizeof body, "to-%zu", i);
        peer_expect(i, body, false);
        peer_expect_nothing(i);
    }
    socket_teardown();
}
END_TEST

START_TEST(pattern_table_lookup)
{
    ck_assert_ptr_eq(zl_pattern_for_type(ZLINK_PAIR), &zl_pair_ops);
    ck_assert_ptr_eq(zl_pattern_for_type(ZLINK_DEALER), &zl_dealer_ops);
    ck_assert_ptr_eq(zl_pattern_for_type(ZLINK_ROUTER), &zl_router_ops);
    ck_assert_ptr_null(zl_pattern_for_type(12345));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("patterns");
    TCase *units = tcase_create("fair_queue_load_balance");
    tcase_add_test(units, fq_round_robin);
    tcase_add_test(units, fq_reports_source_pipe);
    tcase_add_test(units, fq_multipart_atomic);
    tcase_add_test(units, fq_sleeps_and_wakes);
    tcase_add_test(units, fq_has_in_skips_delimiter);
    tcase_add_test(units, fq_closed_pipe_removed);
    tcase_add_test(units, fq_forced_removal_drops_half_message);
    tcase_add_test(units, lb_round_robin);
    tcase_add_test(units, lb_multipart_on_one_pipe);
    tcase_add_test(units, lb_hwm_keeps_message);
    tcase_add_test(units, lb_drops_rest_when_pipe_dies);
    suite_add_tcase(s, units);

    TCase *dealer = tcase_create("dealer");
    tcase_add_test(dealer, dealer_round_robin);
    tcase_add_test(dealer, dealer_fair_queue);
    tcase_add_test(dealer, dealer_multipart_both_ways);
    tcase_add_test(dealer, dealer_hwm_no_loss);
    tcase_add_test(dealer, dealer_closed_pipe_removed);
    tcase_add_test(dealer, dealer_without_pipes);
    suite_add_tcase(s, dealer);

    TCase *pair = tcase_create("pair");
    tcase_add_test(pair, pair_send_recv);
    tcase_add_test(pair, pair_hwm_no_loss);
    tcase_add_test(pair, pair_refuses_second_peer);
    tcase_add_test(pair, pair_peer_closed);
    suite_add_tcase(s, pair);

    TCase *router = tcase_create("router");
    tcase_add_test(router, router_auto_ids);
    tcase_add_test(router, router_announced_id);
    tcase_add_test(router, router_duplicate_id_ignored);
    tcase_add_test(router, router_mandatory_unreachable);
    tcase_add_test(router, router_mandatory_full);
    tcase_add_test(router, router_drops_unroutable);
    tcase_add_test(router, router_multipart_both_ways);
    tcase_add_test(router, router_has_in_reads_ahead);
    tcase_add_test(router, router_skips_routing_id_messages);
    tcase_add_test(router, router_closed_pipe_removed);
    tcase_add_test(router, router_pipe_dies_mid_message);
    tcase_add_test(router, router_many_peers);
    tcase_add_test(router, pattern_table_lookup);
    suite_add_tcase(s, router);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
