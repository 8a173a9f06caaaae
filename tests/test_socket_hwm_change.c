/* test_socket_hwm_change.c — SNDHWM and RCVHWM set on a socket that is
 * already connected change the queues it has, as in libzmq 4.3: the inproc
 * cases are libzmq's own test_sockopt_hwm, the tcp ones check each end of a
 * connection's pipe (the socket's queue, and the session's). */
#include "socket_testutil.h"

#define MAX_SENDS 100000

/* DONTWAIT sends of numbered messages until one is refused; *next numbers
 * them across calls. */
static int send_until_refused(void *s, unsigned *next, size_t size)
{
    int sent = 0;
    char buf[1024] = {0};
    ck_assert_uint_le(size, sizeof buf);
    ck_assert_uint_ge(size, sizeof *next);
    while (sent < MAX_SENDS) {
        memcpy(buf, next, sizeof *next);
        if (zlink_send(s, buf, size, ZLINK_DONTWAIT) != (int)size) {
            ck_assert_int_eq(zlink_errno(), EAGAIN);
            break;
        }
        (*next)++;
        sent++;
    }
    return sent;
}

/* Receives what is queued; each must carry the number after the last. */
static int recv_in_order(void *s, unsigned *next, int timeout_ms)
{
    int got = 0;
    char buf[1024];
    zt_set_int(s, ZLINK_RCVTIMEO, timeout_ms);
    int rc;
    while ((rc = zlink_recv(s, buf, sizeof buf, 0)) >= 0) {
        unsigned n;
        ck_assert_int_ge(rc, (int)sizeof n);
        memcpy(&n, buf, sizeof n);
        ck_assert_uint_eq(n, *next);
        (*next)++;
        got++;
    }
    ck_assert_int_eq(zlink_errno(), EAGAIN);
    return got;
}

static void new_pair(void **push, void **pull, void **ctx)
{
    *ctx = zt_ctx();
    *push = zt_socket(*ctx, ZLINK_PUSH);
    *pull = zt_socket(*ctx, ZLINK_PULL);
}

static void close_pair(void *push, void *pull, void *ctx)
{
    zt_set_int(push, ZLINK_LINGER, 0);
    zt_close(push);
    zt_close(pull);
    zt_term(ctx);
}

/* libzmq's test_change_before_connected: over inproc, the sender's SNDHWM
 * and the receiver's RCVHWM add up, though the receiver connected before
 * the sender bound. */
START_TEST(inproc_hwms_add_up_when_connected_first)
{
    void *ctx, *push, *pull;
    new_pair(&push, &pull, &ctx);
    zt_set_int(pull, ZLINK_RCVHWM, 2);
    zt_set_int(push, ZLINK_SNDHWM, 2);
    zt_connect(pull, "inproc://a");
    zt_bind(push, "inproc://a");
    unsigned next = 0;
    ck_assert_int_eq(send_until_refused(push, &next, 4), 4);
    close_pair(push, pull, ctx);
}
END_TEST

/* libzmq's test_change_after_connected, with either side connecting
 * first, and with the receiver's RCVHWM raised instead (_i 2, 3), also
 * between its connect and the sender's bind (_i 4). */
START_TEST(inproc_hwm_raised_after_connect)
{
    void *ctx, *push, *pull;
    new_pair(&push, &pull, &ctx);
    zt_set_int(pull, ZLINK_RCVHWM, 1);
    zt_set_int(push, ZLINK_SNDHWM, 1);
    if (_i % 2 == 0) {
        zt_connect(pull, "inproc://a");
        if (_i == 4)
            zt_set_int(pull, ZLINK_RCVHWM, 5);
        zt_bind(push, "inproc://a");
    } else {
        zt_bind(push, "inproc://a");
        zt_connect(pull, "inproc://a");
    }
    if (_i < 2) {
        zt_set_int(push, ZLINK_SNDHWM, 5);
        ck_assert_int_eq(zt_get_int(push, ZLINK_SNDHWM), 5);
    } else if (_i < 4) {
        zt_set_int(pull, ZLINK_RCVHWM, 5);
    }
    unsigned next = 0;
    ck_assert_int_eq(send_until_refused(push, &next, 4), 6);
    close_pair(push, pull, ctx);
}
END_TEST

/* libzmq's test_decrease_when_full: what was queued under the old HWM is
 * all delivered, and the next fill stops at the new one. */
START_TEST(inproc_hwm_lowered_when_full)
{
    void *ctx, *push, *pull;
    new_pair(&push, &pull, &ctx);
    zt_set_int(pull, ZLINK_RCVHWM, 1);
    zt_set_int(push, ZLINK_SNDHWM, 100);
    zt_bind(push, "inproc://a");
    zt_connect(pull, "inproc://a");
    unsigned sent = 0, read = 0;
    ck_assert_int_eq(send_until_refused(push, &sent, 4), 101);
    zt_set_int(push, ZLINK_SNDHWM, 70);
    ck_assert_int_eq(zt_get_int(push, ZLINK_SNDHWM), 70);
    ck_assert_int_eq(recv_in_order(pull, &read, 0), 101);
    /* The reader's ACTIVATE_WRITE comes through the sender's mailbox. */
    int refill = 0;
    for (int i = 0; i < 100 && refill == 0; i++) {
        refill = send_until_refused(push, &sent, 4);
        if (refill == 0)
            zl_test_sleep_ms(5);
    }
    ck_assert_int_eq(refill, 71);
    close_pair(push, pull, ctx);
}
END_TEST

/* The socket's own queue of a tcp connect still waiting for its peer: a
 * raised SNDHWM queues more at once, a lowered one refuses, and everything
 * queued is delivered in order when the peer comes. */
START_TEST(sndhwm_changes_a_waiting_connection)
{
    void *ctx = zt_ctx();
    char ep[300];
    void *probe = zt_socket(ctx, ZLINK_PULL);
    zt_bind_tcp(probe, ep, sizeof ep);
    zt_close(probe);

    void *push = zt_socket(ctx, ZLINK_PUSH);
    zt_set_int(push, ZLINK_SNDHWM, 5);
    zt_connect(push, ep);
    unsigned sent = 0, read = 0;
    ck_assert_int_eq(send_until_refused(push, &sent, 8), 5);
    zt_set_int(push, ZLINK_SNDHWM, 8);
    ck_assert_int_eq(send_until_refused(push, &sent, 8), 3);
    zt_set_int(push, ZLINK_SNDHWM, 2);
    ck_assert_int_eq(send_until_refused(push, &sent, 8), 0);

    void *pull = zt_socket(ctx, ZLINK_PULL);
    zt_bind_when_free(pull, ep, ZT_TIMEOUT_MS);
    int got = 0;
    for (int i = 0; i < 100 && got < 8; i++)
        got += recv_in_order(pull, &read, 50);
    ck_assert_int_eq(got, 8);
    close_pair(push, pull, ctx);
}
END_TEST

/* Fills until rounds stop adding: the sender's queue, the socket buffers
 * and the receiver's queue are full. A change takes a few hops between
 * threads to show (more under a sanitizer), so it takes QUIET_ROUNDS
 * empty rounds in a row to stop. Bounded in rounds. */
#define QUIET_ROUNDS 10
static int fill_until_settled(void *s, unsigned *next, size_t size)
{
    int total = 0, quiet = 0;
    for (int round = 0; round < 1000 && quiet < QUIET_ROUNDS; round++) {
        int sent = send_until_refused(s, next, size);
        total += sent;
        quiet = sent == 0 ? quiet + 1 : 0;
        zl_test_sleep_ms(20);
    }
    return total;
}

/* The receiver's RCVHWM bounds the queue its I/O thread fills from the
 * connection: raised, the I/O thread reads on, and the sender, stopped by
 * the old one once the socket buffers filled, can send that many more. */
START_TEST(rcvhwm_changes_a_connection)
{
    enum { SIZE = 1000, OLD_HWM = 2, NEW_HWM = 30000 };
    void *ctx, *push, *pull;
    new_pair(&push, &pull, &ctx);
    zt_set_int(push, ZLINK_SNDHWM, 1000);
    zt_set_int(pull, ZLINK_RCVHWM, OLD_HWM);
    char ep[300];
    zt_bind_tcp(pull, ep, sizeof ep);
    zt_connect(push, ep);
    unsigned sent = 0, read = 0;
    int before = fill_until_settled(push, &sent, SIZE);
    ck_assert_int_lt(before, NEW_HWM / 4);
    zt_set_int(pull, ZLINK_RCVHWM, NEW_HWM);
    int after = fill_until_settled(push, &sent, SIZE);
    ck_assert_msg(after > NEW_HWM / 2, "%d sent before, %d after", before,
                  after);
    int got = 0;
    for (int i = 0; i < 100 && got < before + after; i++)
        got += recv_in_order(pull, &read, 50);
    ck_assert_int_eq(got, before + after);
    close_pair(push, pull, ctx);
}
END_TEST

static Suite *hwm_change_suite(void)
{
    Suite *s = suite_create("socket_hwm_change");
    TCase *inproc = tcase_create("inproc");
    tcase_add_test(inproc, inproc_hwms_add_up_when_connected_first);
    tcase_add_loop_test(inproc, inproc_hwm_raised_after_connect, 0, 5);
    tcase_add_test(inproc, inproc_hwm_lowered_when_full);
    suite_add_tcase(s, inproc);
    TCase *tcp = tcase_create("tcp");
    tcase_set_timeout(tcp, 60);
    tcase_add_test(tcp, sndhwm_changes_a_waiting_connection);
    tcase_add_test(tcp, rcvhwm_changes_a_connection);
    suite_add_tcase(s, tcp);
    return s;
}

int main(void)
{
    return zl_test_run(hwm_change_suite());
}
