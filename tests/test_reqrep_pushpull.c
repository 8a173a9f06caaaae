/* test_reqrep_pushpull.c — REQ, REP, PUSH and PULL: libzmq's semantics,
 * over every transport: REQ/REP's strict alternation (EFSM), the empty
 * delimiter and envelopes, REQ_RELAXED and REQ_CORRELATE, PUSH's
 * round-robin and HWM, PULL's fair queue. */
#include <string.h>

#include "socket_testutil.h"

static void send_str(void *s, const char *text, int flags)
{
    int rc = zlink_send(s, text, strlen(text), flags);
    ck_assert_msg(rc == (int)strlen(text), "send %s: %s", text,
                  zlink_strerror(zlink_errno()));
}

static void recv_str(void *s, const char *expect)
{
    char buf[256];
    int rc = zlink_recv(s, buf, sizeof buf, 0);
    ck_assert_msg(rc >= 0, "recv: %s", zlink_strerror(zlink_errno()));
    ck_assert_int_eq(rc, (int)strlen(expect));
    ck_assert_mem_eq(buf, expect, (size_t)rc);
}

static int rcvmore(void *s)
{
    return zt_get_int(s, ZLINK_RCVMORE);
}

/* A REP's reply as a DEALER sees it: the request's labels in order, the
 * empty delimiter, then the body as the last part. */
static void expect_reply(void *dealer, const char *const *labels, int n,
                         const char *body)
{
    for (int i = 0; i < n; i++) {
        recv_str(dealer, labels[i]);
        ck_assert_int_eq(rcvmore(dealer), 1);
    }
    recv_str(dealer, "");
    ck_assert_int_eq(rcvmore(dealer), 1);
    recv_str(dealer, body);
    ck_assert_int_eq(rcvmore(dealer), 0);
}

START_TEST(test_req_rep_round_trips)
{
    void *ctx = zt_ctx();
    void *rep = zt_socket(ctx, ZLINK_REP);
    void *req = zt_socket(ctx, ZLINK_REQ);
    char ep[256];
    if (!zt_join(rep, req, _i, ep, sizeof ep)) {
        zt_close(req);
        zt_close(rep);
        zt_term(ctx);
        return;
    }
    for (int round = 0; round < 3; round++) {
        send_str(req, "hello", ZLINK_SNDMORE);
        send_str(req, "world", 0);
        recv_str(rep, "hello");
        ck_assert_int_eq(rcvmore(rep), 1);
        recv_str(rep, "world");
        ck_assert_int_eq(rcvmore(rep), 0);
        send_str(rep, "reply", 0);
        recv_str(req, "reply");
        ck_assert_int_eq(rcvmore(req), 0);
    }
    zt_close(req);
    zt_close(rep);
    zt_term(ctx);
}
END_TEST

START_TEST(test_strict_alternation_is_efsm)
{
    void *ctx = zt_ctx();
    void *rep = zt_socket(ctx, ZLINK_REP);
    void *req = zt_socket(ctx, ZLINK_REQ);
    zt_bind(rep, "inproc://efsm");
    zt_connect(req, "inproc://efsm");
    char buf[16];
    ck_assert_int_eq(zlink_recv(req, buf, sizeof buf, 0), -1);
    ck_assert_int_eq(zlink_errno(), EFSM);
    ck_assert_int_eq(zlink_send(rep, "x", 1, 0), -1);
    ck_assert_int_eq(zlink_errno(), EFSM);
    send_str(req, "q", 0);
    ck_assert_int_eq(zlink_send(req, "again", 5, 0), -1);
    ck_assert_int_eq(zlink_errno(), EFSM);
    ck_assert_int_eq(zt_get_int(req, ZLINK_EVENTS) & ZLINK_POLLOUT, 0);
    recv_str(rep, "q");
    ck_assert_int_eq(zlink_recv(rep, buf, sizeof buf, ZLINK_DONTWAIT), -1);
    ck_assert_int_eq(zlink_errno(), EFSM);
    send_str(rep, "a", 0);
    recv_str(req, "a");
    zt_close(req);
    zt_close(rep);
    zt_term(ctx);
}
END_TEST

/* A ROUTER sees REQ's envelope: its routing id, then the empty delimiter;
 * and a DEALER talking to REP must supply that delimiter itself. */
START_TEST(test_envelopes_on_the_wire)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *req = zt_socket(ctx, ZLINK_REQ);
    char ep[256];
    zt_bind_tcp(router, ep, sizeof ep);
    zt_connect(req, ep);
    send_str(req, "ping", 0);
    char id[256];
    int id_len = zlink_recv(router, id, sizeof id, 0);
    ck_assert_int_gt(id_len, 0);
    recv_str(router, "");
    ck_assert_int_eq(rcvmore(router), 1);
    recv_str(router, "ping");
    zlink_send(router, id, (size_t)id_len, ZLINK_SNDMORE);
    send_str(router, "", ZLINK_SNDMORE);
    send_str(router, "pong", 0);
    recv_str(req, "pong");

    void *rep = zt_socket(ctx, ZLINK_REP);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    zt_bind_tcp(rep, ep, sizeof ep);
    zt_connect(dealer, ep);
    /* Without the delimiter REP drops the request whole. */
    send_str(dealer, "no delimiter", 0);
    send_str(dealer, "label", ZLINK_SNDMORE);
    send_str(dealer, "", ZLINK_SNDMORE);
    send_str(dealer, "body", 0);
    recv_str(rep, "body");
    send_str(rep, "answer", 0);
    const char *label = "label";
    expect_reply(dealer, &label, 1, "answer");
    zt_close(dealer);
    zt_close(rep);
    zt_close(req);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* A request behind many proxies' labels is answered whole, as by libzmq:
 * the envelope outgrows what REP keeps inline. It was dropped past 64. */
#define DEEP_LABELS 300

START_TEST(test_rep_deep_envelope)
{
    void *ctx = zt_ctx();
    void *rep = zt_socket(ctx, ZLINK_REP);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    char ep[256], names[DEEP_LABELS][16];
    const char *labels[DEEP_LABELS];
    for (int i = 0; i < DEEP_LABELS; i++) {
        snprintf(names[i], sizeof names[i], "hop-%d", i);
        labels[i] = names[i];
    }
    zt_bind_tcp(rep, ep, sizeof ep);
    zt_connect(dealer, ep);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < DEEP_LABELS; i++)
            send_str(dealer, labels[i], ZLINK_SNDMORE);
        send_str(dealer, "", ZLINK_SNDMORE);
        send_str(dealer, "deep", 0);
        recv_str(rep, "deep");
        send_str(rep, "answer", 0);
        expect_reply(dealer, labels, DEEP_LABELS, "answer");
    }
    zt_close(dealer);
    zt_close(rep);
    zt_term(ctx);
}
END_TEST

/* REQ spreads requests round-robin and takes each reply only from the
 * peer it asked. */
START_TEST(test_req_round_robin_and_relaxed)
{
    void *ctx = zt_ctx();
    void *req = zt_socket(ctx, ZLINK_REQ);
    void *reps[2];
    for (int i = 0; i < 2; i++) {
        char ep[64];
        snprintf(ep, sizeof ep, "inproc://rr-%d", i);
        reps[i] = zt_socket(ctx, ZLINK_REP);
        zt_bind(reps[i], ep);
        zt_connect(req, ep);
    }
    for (int i = 0; i < 4; i++) {
        send_str(req, "r", 0);
        void *rep = reps[i % 2];
        recv_str(rep, "r");
        send_str(rep, i % 2 ? "one" : "zero", 0);
        recv_str(req, i % 2 ? "one" : "zero");
    }
    /* Relaxed: a second request goes out before the first is answered,
     * and the late answer to the first is dropped. */
    zt_set_int(req, ZLINK_REQ_RELAXED, 1);
    zt_set_int(req, ZLINK_REQ_CORRELATE, 1);
    ck_assert_int_eq(zt_get_int(req, ZLINK_REQ_RELAXED), 1);
    send_str(req, "first", 0);
    recv_str(reps[0], "first");
    send_str(req, "second", 0);
    recv_str(reps[1], "second");
    send_str(reps[0], "late", 0);
    send_str(reps[1], "fresh", 0);
    recv_str(req, "fresh");
    char buf[16];
    ck_assert_int_eq(zlink_recv(req, buf, sizeof buf, 0), -1);
    ck_assert_int_eq(zlink_errno(), EFSM);
    for (int i = 0; i < 2; i++)
        zt_close(reps[i]);
    zt_close(req);
    zt_term(ctx);
}
END_TEST

/* With REQ_CORRELATE a ROUTER sees the request id before the delimiter,
 * and a reply carrying another id is dropped. */
START_TEST(test_correlate_drops_wrong_ids)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *req = zt_socket(ctx, ZLINK_REQ);
    zt_set_int(req, ZLINK_REQ_CORRELATE, 1);
    zt_bind(router, "inproc://correlate");
    zt_connect(req, "inproc://correlate");
    send_str(req, "q", 0);
    char id[256], req_id[16];
    int id_len = zlink_recv(router, id, sizeof id, 0);
    ck_assert_int_gt(id_len, 0);
    ck_assert_int_eq(zlink_recv(router, req_id, sizeof req_id, 0), 4);
    recv_str(router, "");
    recv_str(router, "q");
    uint8_t wrong[4];
    memcpy(wrong, req_id, 4);
    wrong[0] ^= 0xff;
    zlink_send(router, id, (size_t)id_len, ZLINK_SNDMORE);
    zlink_send(router, wrong, 4, ZLINK_SNDMORE);
    send_str(router, "", ZLINK_SNDMORE);
    send_str(router, "stale", 0);
    zlink_send(router, id, (size_t)id_len, ZLINK_SNDMORE);
    zlink_send(router, req_id, 4, ZLINK_SNDMORE);
    send_str(router, "", ZLINK_SNDMORE);
    send_str(router, "right", 0);
    recv_str(req, "right");
    zt_close(req);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

START_TEST(test_push_pull)
{
    void *ctx = zt_ctx();
    void *push = zt_socket(ctx, ZLINK_PUSH);
    void *pulls[2];
    char ep[256];
    zt_bind_tcp(push, ep, sizeof ep);
    for (int i = 0; i < 2; i++) {
        pulls[i] = zt_socket(ctx, ZLINK_PULL);
        zt_connect(pulls[i], ep);
    }
    /* Wait until both are connected, so the round-robin is over both. */
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    int got[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        char first[8];
        do {
            send_str(push, "probe", 0);
        } while (zlink_recv(pulls[i], first, sizeof first, ZLINK_DONTWAIT) <
                     0 &&
                 (zl_test_sleep_ms(5), zl_test_now_ms() < deadline));
    }
    /* Drain probes, then count a clean round. */
    for (int i = 0; i < 2; i++) {
        zt_set_int(pulls[i], ZLINK_RCVTIMEO, 100);
        char buf[8];
        while (zlink_recv(pulls[i], buf, sizeof buf, 0) >= 0)
            ;
        zt_set_int(pulls[i], ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
    }
    for (int i = 0; i < 10; i++)
        send_str(push, "m", 0);
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < 5; k++) {
            recv_str(pulls[i], "m");
            got[i]++;
        }
    }
    ck_assert_int_eq(got[0] + got[1], 10);
    char buf[8];
    ck_assert_int_eq(zlink_recv(push, buf, sizeof buf, 0), -1);
    ck_assert_int_eq(zlink_errno(), ENOTSUP);
    ck_assert_int_eq(zlink_send(pulls[0], "x", 1, 0), -1);
    ck_assert_int_eq(zlink_errno(), ENOTSUP);
    for (int i = 0; i < 2; i++)
        zt_close(pulls[i]);
    zt_close(push);
    zt_term(ctx);
}
END_TEST

/* PUSH never drops: at the HWM a DONTWAIT send is EAGAIN, and everything
 * sent arrives, in order. */
START_TEST(test_push_blocks_at_hwm)
{
    void *ctx = zt_ctx();
    void *push = zt_socket(ctx, ZLINK_PUSH);
    void *pull = zt_socket(ctx, ZLINK_PULL);
    zt_set_int(push, ZLINK_SNDHWM, 10);
    zt_set_int(pull, ZLINK_RCVHWM, 10);
    zt_bind(pull, "inproc://hwm");
    zt_connect(push, "inproc://hwm");
    int sent = 0;
    while (sent < 1000 &&
           zlink_send(push, &sent, sizeof sent, ZLINK_DONTWAIT) >= 0)
        sent++;
    ck_assert_int_lt(sent, 1000);
    ck_assert_int_eq(zlink_errno(), EAGAIN);
    for (int i = 0; i < sent; i++) {
        int v = -1;
        ck_assert_int_eq(zlink_recv(pull, &v, sizeof v, 0), sizeof v);
        ck_assert_int_eq(v, i);
    }
    zt_close(pull);
    zt_close(push);
    zt_term(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("reqrep_pushpull");
    TCase *tc = tcase_create("reqrep");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_req_rep_round_trips, 0, ZT_TRANSPORT_COUNT);
    tcase_add_test(tc, test_strict_alternation_is_efsm);
    tcase_add_test(tc, test_envelopes_on_the_wire);
    tcase_add_test(tc, test_rep_deep_envelope);
    tcase_add_test(tc, test_req_round_robin_and_relaxed);
    tcase_add_test(tc, test_correlate_drops_wrong_ids);
    suite_add_tcase(s, tc);
    TCase *pp = tcase_create("pushpull");
    tcase_add_test(pp, test_push_pull);
    tcase_add_test(pp, test_push_blocks_at_hwm);
    suite_add_tcase(s, pp);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
