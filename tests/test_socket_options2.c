/* test_socket_options2.c — options ported from libzmq: CONFLATE,
 * PROBE_ROUTER, ROUTER_HANDOVER, INVERT_MATCHING, and getsockopt of an int
 * into a larger buffer. */
#include <sys/stat.h>

#include "socket_testutil.h"

START_TEST(getsockopt_larger_buffer)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_DEALER);
    const int options[] = {ZLINK_LINGER, ZLINK_RCVMORE, ZLINK_EVENTS,
                           ZLINK_SNDHWM, ZLINK_CONFLATE};
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        unsigned char buf[16];
        memset(buf, 0x55, sizeof buf);
        size_t len = sizeof buf;
        ck_assert_int_eq(zlink_getsockopt(s, options[i], buf, &len), 0);
        ck_assert_uint_eq(len, sizeof(int));
        for (size_t b = sizeof(int); b < sizeof buf; b++)
            ck_assert_uint_eq(buf[b], 0);
    }
    int v = 0;
    size_t len = 2;
    zt_expect_errno(zlink_getsockopt(s, ZLINK_LINGER, &v, &len), EINVAL);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(option_values)
{
    void *ctx = zt_ctx();
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    int v = 2;
    zt_expect_errno(zlink_setsockopt(dealer, ZLINK_CONFLATE, &v, sizeof v),
                    EINVAL);
    zt_set_int(dealer, ZLINK_CONFLATE, 1);
    ck_assert_int_eq(zt_get_int(dealer, ZLINK_CONFLATE), 1);
    zt_set_int(dealer, ZLINK_INVERT_MATCHING, 1);
    ck_assert_int_eq(zt_get_int(dealer, ZLINK_INVERT_MATCHING), 1);
    /* Write-only, as libzmq. */
    zt_set_int(dealer, ZLINK_PROBE_ROUTER, 1);
    size_t len = sizeof v;
    zt_expect_errno(zlink_getsockopt(dealer, ZLINK_PROBE_ROUTER, &v, &len),
                    EINVAL);
    /* ROUTER only, any value >= 0. */
    v = 1;
    zt_expect_errno(
        zlink_setsockopt(dealer, ZLINK_ROUTER_HANDOVER, &v, sizeof v), EINVAL);
    zt_set_int(router, ZLINK_ROUTER_HANDOVER, 2);
    v = -1;
    zt_expect_errno(
        zlink_setsockopt(router, ZLINK_ROUTER_HANDOVER, &v, sizeof v), EINVAL);
    len = sizeof v;
    zt_expect_errno(zlink_getsockopt(router, ZLINK_ROUTER_HANDOVER, &v, &len),
                    EINVAL);
    zt_close(dealer);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* ---- CONFLATE ---- */

enum { CONFLATE_COUNT = 200 };

/* Receives numbered messages until the last one; returns how many came,
 * checking they only ever go forward. */
static int recv_until_last(void *s)
{
    int received = 0, previous = -1;
    for (;;) {
        char buf[16];
        int n = zt_recv_buf(s, buf, sizeof buf, 0);
        ck_assert_int_ge(n, 0);
        int number = atoi(buf);
        ck_assert_int_gt(number, previous);
        previous = number;
        received++;
        if (number == CONFLATE_COUNT - 1)
            return received;
    }
}

static void conflate_case(int receiver_type, int sender_type, int transport)
{
    void *ctx = zt_ctx();
    void *receiver = zt_socket(ctx, receiver_type);
    void *sender = zt_socket(ctx, sender_type);
    zt_set_int(receiver, ZLINK_CONFLATE, 1);
    if (receiver_type == ZLINK_SUB)
        ck_assert_int_eq(zlink_setsockopt(receiver, ZLINK_SUBSCRIBE, "", 0), 0);
    char ep[256];
    if (!zt_join(receiver, sender, transport, ep, sizeof ep))
        goto done;
    /* Connected (and subscribed) before the burst. */
    if (receiver_type == ZLINK_SUB) {
        ck_assert(zt_ping_until(sender, receiver, "ready", ZT_TIMEOUT_MS));
    } else {
        zt_send_str(sender, "ready", 0);
        zt_recv_str(receiver, "ready");
    }
    for (int i = 0; i < CONFLATE_COUNT; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d", i);
        zt_send_str(sender, buf, 0);
    }
    /* The newest arrives, and most of those before it were replaced. */
    int received = recv_until_last(receiver);
    ck_assert_int_lt(received, CONFLATE_COUNT / 2);
done:
    zt_close(sender);
    zt_close(receiver);
    zt_term(ctx);
}

START_TEST(conflate_pull)
{
    conflate_case(ZLINK_PULL, ZLINK_PUSH, _i);
}
END_TEST

START_TEST(conflate_sub)
{
    conflate_case(ZLINK_SUB, ZLINK_PUB, ZT_TCP4);
}
END_TEST

/* As libzmq: once a burst has arrived, one receive returns its newest
 * message and nothing older is left. (It returned the first too: the pipe
 * was one message deep, with the newest waiting behind it.) Loop index:
 * the transport; PULL, then SUB. */
START_TEST(conflate_newest_only)
{
    static const int transports[] = {ZT_TCP4, ZT_IPC, ZT_INPROC};
    int transport = transports[_i % 3];
    bool sub = _i >= 3;
    void *ctx = zt_ctx();
    void *receiver = zt_socket(ctx, sub ? ZLINK_SUB : ZLINK_PULL);
    void *sender = zt_socket(ctx, sub ? ZLINK_PUB : ZLINK_PUSH);
    zt_set_int(receiver, ZLINK_CONFLATE, 1);
    if (sub)
        ck_assert_int_eq(zlink_setsockopt(receiver, ZLINK_SUBSCRIBE, "", 0), 0);
    char ep[256];
    /* The receiver connects: over inproc, libzmq conflates for the
     * connecting socket. */
    if (!zt_join(sender, receiver, transport, ep, sizeof ep)) {
        /* This transport is not on this machine (ipc under Wine). */
        zt_close(sender);
        zt_close(receiver);
        zt_term(ctx);
        return;
    }
    if (sub) {
        ck_assert(zt_ping_until(sender, receiver, "ready", ZT_TIMEOUT_MS));
        char buf[16];
        while (zlink_recv(receiver, buf, sizeof buf, ZLINK_DONTWAIT) >= 0)
            ;
    } else {
        zt_send_str(sender, "ready", 0);
        zt_recv_str(receiver, "ready");
    }
    for (int i = 1; i <= 10; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "m%d", i);
        zt_send_str(sender, buf, 0);
    }
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (!(zt_get_int(receiver, ZLINK_EVENTS) & ZLINK_POLLIN)) {
        ck_assert(zl_test_now_ms() < deadline);
        zl_test_sleep_ms(5);
    }
    zl_test_sleep_ms(200); /* the rest of the burst */
    zt_recv_str(receiver, "m10");
    char buf[16];
    zt_expect_errno(zlink_recv(receiver, buf, sizeof buf, ZLINK_DONTWAIT),
                    EAGAIN);
    zt_close(sender);
    zt_close(receiver);
    zt_term(ctx);
}
END_TEST

/* The last message before its peer left: the receive that finds the
 * connection's end behind it, after a poll (SUB's has_in) took it aside,
 * still returns it, and the pipe that went is not read again (ASan). */
START_TEST(conflate_last_message_then_close)
{
    void *ctx = zt_ctx();
    void *sub = zt_socket(ctx, ZLINK_SUB);
    void *pub = zt_socket(ctx, ZLINK_PUB);
    zt_set_int(sub, ZLINK_CONFLATE, 1);
    ck_assert_int_eq(zlink_setsockopt(sub, ZLINK_SUBSCRIBE, "", 0), 0);
    char ep[256];
    /* The SUB binds: its accepted connection ends with the peer. */
    ck_assert(zt_join(sub, pub, ZT_TCP4, ep, sizeof ep));
    ck_assert(zt_ping_until(pub, sub, "ready", ZT_TIMEOUT_MS));
    char buf[16];
    while (zlink_recv(sub, buf, sizeof buf, ZLINK_DONTWAIT) >= 0)
        ;
    zt_send_str(pub, "last", 0);
    zl_test_sleep_ms(100); /* on the wire before the close */
    zt_close(pub);
    zl_test_sleep_ms(200);
    ck_assert(zt_get_int(sub, ZLINK_EVENTS) & ZLINK_POLLIN);
    zt_recv_str(sub, "last");
    zt_expect_errno(zlink_recv(sub, buf, sizeof buf, ZLINK_DONTWAIT), EAGAIN);
    zt_close(sub);
    zt_term(ctx);
}
END_TEST

/* CONFLATE on the sender, as libzmq: messages queued before the peer comes
 * give way to the newest, and each send succeeds meanwhile. */
START_TEST(conflate_sender_keeps_newest)
{
    void *ctx = zt_ctx();
    char ep[256];
    void *probe = zt_socket(ctx, ZLINK_PULL);
    zt_bind_tcp(probe, ep, sizeof ep);
    zt_close(probe);
    void *push = zt_socket(ctx, ZLINK_PUSH);
    zt_set_int(push, ZLINK_CONFLATE, 1);
    zt_connect(push, ep);
    for (int i = 1; i <= 5; i++) {
        char buf[8];
        snprintf(buf, sizeof buf, "q%d", i);
        ck_assert_int_eq(zlink_send(push, buf, strlen(buf), ZLINK_DONTWAIT),
                         (int)strlen(buf));
    }
    void *pull = zt_socket(ctx, ZLINK_PULL);
    zt_bind_when_free(pull, ep, ZT_TIMEOUT_MS);
    zt_recv_str(pull, "q5");
    zt_set_int(pull, ZLINK_RCVTIMEO, 200);
    char buf[8];
    zt_expect_errno(zlink_recv(pull, buf, sizeof buf, 0), EAGAIN);
    zt_close(push);
    zt_close(pull);
    zt_term(ctx);
}
END_TEST

/* Multipart messages are not conflated: every one arrives whole. */
START_TEST(conflate_multipart_whole)
{
    void *ctx = zt_ctx();
    void *pull = zt_socket(ctx, ZLINK_PULL);
    void *push = zt_socket(ctx, ZLINK_PUSH);
    zt_set_int(pull, ZLINK_CONFLATE, 1);
    char ep[256];
    ck_assert(zt_join(pull, push, ZT_TCP4, ep, sizeof ep));
    enum { N = 50 };
    for (int i = 0; i < N; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d", i);
        zt_send_str(push, "head", ZLINK_SNDMORE);
        zt_send_str(push, buf, 0);
    }
    for (int i = 0; i < N; i++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d", i);
        zt_recv_str(pull, "head");
        ck_assert_int_eq(zt_get_int(pull, ZLINK_RCVMORE), 1);
        zt_recv_str(pull, buf);
    }
    zt_close(push);
    zt_close(pull);
    zt_term(ctx);
}
END_TEST

/* ---- ROUTER ---- */

START_TEST(probe_router)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(dealer, ZLINK_PROBE_ROUTER, 1);
    zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "probe", 5);
    char ep[256];
    ck_assert(zt_join(router, dealer, _i, ep, sizeof ep));
    /* The probe: the dealer's id and an empty message, unasked. */
    zt_recv_str(router, "probe");
    char buf[8];
    ck_assert_int_eq(zt_recv_buf(router, buf, sizeof buf, 0), 0);
    ck_assert_int_eq(zt_get_int(router, ZLINK_RCVMORE), 0);
    /* The router can answer at once. */
    zt_send_str(router, "probe", ZLINK_SNDMORE);
    zt_send_str(router, "hello", 0);
    zt_recv_str(dealer, "hello");
    zt_close(dealer);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* A connecting ROUTER with PROBE_ROUTER probes as soon as the connection is
 * made, though its application does not call it again: zlink makes that
 * ROUTER's pipe at the handshake, and the probe waited for the socket's
 * next call to attach it. */
START_TEST(probe_from_connecting_router)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_ROUTER);
    void *client = zt_socket(ctx, ZLINK_ROUTER);
    zt_set_int(client, ZLINK_PROBE_ROUTER, 1);
    zlink_setsockopt(client, ZLINK_ROUTING_ID, "cli", 3);
    char ep[256];
    if (zt_join(server, client, _i, ep, sizeof ep)) {
        zt_recv_str(server, "cli");
        char buf[8];
        ck_assert_int_eq(zt_recv_buf(server, buf, sizeof buf, 0), 0);
        ck_assert_int_eq(zt_get_int(server, ZLINK_RCVMORE), 0);
        /* One probe: nothing else comes when the client's socket runs. */
        zt_set_int(client, ZLINK_RCVTIMEO, 0);
        ck_assert_int_eq(zlink_recv(client, buf, sizeof buf, 0), -1);
        zt_set_int(server, ZLINK_RCVTIMEO, 100);
        zt_expect_errno(zlink_recv(server, buf, sizeof buf, 0), EAGAIN);
    }
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

START_TEST(router_handover)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    zt_set_int(router, ZLINK_ROUTER_HANDOVER, 1);
    char ep[256];
    void *first = zt_socket(ctx, ZLINK_DEALER);
    void *second = zt_socket(ctx, ZLINK_DEALER);
    zlink_setsockopt(first, ZLINK_ROUTING_ID, "dup", 3);
    zlink_setsockopt(second, ZLINK_ROUTING_ID, "dup", 3);
    if (!zt_join(router, first, _i, ep, sizeof ep)) {
        /* This transport is not on this machine (ipc under Wine). */
        zt_close(first);
        zt_close(second);
        zt_close(router);
        zt_term(ctx);
        return;
    }
    zt_send_str(first, "one", 0);
    zt_recv_str(router, "dup");
    zt_recv_str(router, "one");
    zt_connect_over(second, _i, ep);
    zt_send_str(second, "two", 0);
    zt_recv_str(router, "dup");
    zt_recv_str(router, "two");
    /* The id now reaches the newcomer, and the first is disconnected. */
    zt_send_str(router, "dup", ZLINK_SNDMORE);
    zt_send_str(router, "for second", 0);
    zt_recv_str(second, "for second");
    zt_set_int(first, ZLINK_RCVTIMEO, 200);
    char buf[16];
    zt_expect_errno(zlink_recv(first, buf, sizeof buf, 0), EAGAIN);
    /* As in libzmq, the first's connection stays open and reads nothing:
     * it neither reaches the router nor reconnects to take the id back
     * (over several reconnect intervals). Over inproc its pipe is gone, and
     * the send finds no peer. */
    if (zlink_send(first, "late", 4, ZLINK_DONTWAIT) != 4)
        ck_assert_int_eq(zlink_errno(), EAGAIN);
    zt_set_int(router, ZLINK_RCVTIMEO, 400);
    zt_expect_errno(zlink_recv(router, buf, sizeof buf, 0), EAGAIN);
    zt_send_str(router, "dup", ZLINK_SNDMORE);
    zt_send_str(router, "still second", 0);
    zt_recv_str(second, "still second");
    zt_close(first);
    zt_close(second);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* ---- INVERT_MATCHING ---- */

START_TEST(invert_matching)
{
    void *ctx = zt_ctx();
    void *pub = zt_socket(ctx, _i == 0 ? ZLINK_PUB : ZLINK_XPUB);
    void *sub = zt_socket(ctx, ZLINK_SUB);
    zt_set_int(pub, ZLINK_INVERT_MATCHING, 1);
    zt_set_int(sub, ZLINK_INVERT_MATCHING, 1);
    ck_assert_int_eq(zlink_setsockopt(sub, ZLINK_SUBSCRIBE, "a", 1), 0);
    char ep[256];
    ck_assert(zt_join(pub, sub, ZT_TCP4, ep, sizeof ep));
    if (_i == 1) {
        char buf[8];
        ck_assert_int_eq(zt_recv_buf(pub, buf, sizeof buf, 0), 2);
        ck_assert_int_eq(buf[0], 1); /* the subscription to "a" */
    }
    /* Everything but "a…" reaches the subscriber. */
    ck_assert(zt_ping_until(pub, sub, "b-ping", ZT_TIMEOUT_MS));
    zt_send_str(pub, "a-not", 0);
    zt_send_str(pub, "b-yes", 0);
    zt_send_str(pub, "", 0);
    zt_recv_str(sub, "b-yes");
    zt_recv_str(sub, "");
    zt_close(sub);
    zt_close(pub);
    zt_term(ctx);
}
END_TEST

/* A SUB that inverts drops what matches even from a publisher that does
 * not filter for it (inproc XPUB with no subscription sent yet). */
START_TEST(invert_matching_sub_filters)
{
    void *ctx = zt_ctx();
    void *xpub = zt_socket(ctx, ZLINK_XPUB);
    void *sub = zt_socket(ctx, ZLINK_SUB);
    zt_set_int(sub, ZLINK_INVERT_MATCHING, 1);
    ck_assert_int_eq(zlink_setsockopt(sub, ZLINK_SUBSCRIBE, "a", 1), 0);
    ck_assert_int_eq(zlink_setsockopt(sub, ZLINK_SUBSCRIBE, "b", 1), 0);
    char ep[256];
    ck_assert(zt_join(xpub, sub, ZT_INPROC, ep, sizeof ep));
    char buf[8];
    ck_assert_int_eq(zt_recv_buf(xpub, buf, sizeof buf, 0), 2);
    ck_assert_int_eq(zt_recv_buf(xpub, buf, sizeof buf, 0), 2);
    /* XPUB (not inverting) sends only what matches: "a1" and "b1" reach
     * the SUB, which inverts and drops both; "c1" is filtered out at the
     * publisher. Nothing arrives. */
    zt_send_str(xpub, "a1", 0);
    zt_send_str(xpub, "b1", 0);
    zt_send_str(xpub, "c1", 0);
    zt_set_int(sub, ZLINK_RCVTIMEO, 200);
    zt_expect_errno(zlink_recv(sub, buf, sizeof buf, 0), EAGAIN);
    zt_close(sub);
    zt_close(xpub);
    zt_term(ctx);
}
END_TEST

/* ---- conformance ---- */

/* A closing ipc listener leaves a named socket file alone, as libzmq's: a
 * socket that bound the same path since owns the file there. The rounds
 * close a socket and at once bind another to its path, so some of them
 * give the new file the old one's inode number (the old listener's socket
 * is closed first) before the old listener is done closing. */
#define REBIND_ROUNDS 200

START_TEST(ipc_rebind_keeps_new_file)
{
    if (!zt_have_ipc())
        return;
    char ep[256];
    zl_test_ipc_endpoint(ep, sizeof ep);
    void *ctx = zt_ctx();
    void *current = NULL;
    for (int round = 0; round < REBIND_ROUNDS; round++) {
        void *old_ctx = zt_ctx();
        void *old = zt_socket(old_ctx, ZLINK_PULL);
        zt_bind(old, ep);
        zt_close(old);
        current = zt_socket(ctx, ZLINK_PULL);
        zt_bind(current, ep); /* takes the path over, as libzmq */
        zt_term(old_ctx);     /* the old listener is gone */
        struct stat st;
        ck_assert_msg(stat(ep + strlen("ipc://"), &st) == 0,
                      "round %d: the new socket file went with the old", round);
        if (round + 1 < REBIND_ROUNDS)
            zt_close(current);
    }
    void *push = zt_socket(ctx, ZLINK_PUSH);
    zt_connect(push, ep);
    zt_send_str(push, "reached", 0);
    zt_recv_str(current, "reached");
    zt_close(push);
    zt_close(current);
    zt_term(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("socket_options2");
    TCase *tc = tcase_create("options");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, getsockopt_larger_buffer);
    tcase_add_test(tc, option_values);
    tcase_add_loop_test(tc, conflate_pull, ZT_TCP4, ZT_TCP4 + 1);
    tcase_add_loop_test(tc, conflate_pull, ZT_IPC, ZT_IPC + 1);
    tcase_add_test(tc, conflate_sub);
    tcase_add_loop_test(tc, conflate_newest_only, 0, 6);
    tcase_add_test(tc, conflate_sender_keeps_newest);
    tcase_add_test(tc, conflate_last_message_then_close);
    tcase_add_test(tc, conflate_multipart_whole);
    tcase_add_loop_test(tc, probe_router, ZT_TCP4, ZT_TCP4 + 1);
    tcase_add_loop_test(tc, probe_router, ZT_INPROC, ZT_INPROC + 1);
    tcase_add_loop_test(tc, probe_from_connecting_router, 0,
                        ZT_TRANSPORT_COUNT);
    tcase_add_loop_test(tc, router_handover, 0, ZT_TRANSPORT_COUNT);
    tcase_add_loop_test(tc, invert_matching, 0, 2);
    tcase_add_test(tc, invert_matching_sub_filters);
    suite_add_tcase(s, tc);
    TCase *conformance = tcase_create("conformance");
    tcase_set_timeout(conformance, 60);
    tcase_add_test(conformance, ipc_rebind_keeps_new_file);
    suite_add_tcase(s, conformance);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
