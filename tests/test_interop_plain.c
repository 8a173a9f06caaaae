/* test_interop_plain.c — zlink as a PLAIN client of a real libzmq 4.3 PLAIN
 * server (tests/interop/zmq_plain_server), whose ZAP handler checks the
 * credentials: the wrong ones are refused with HANDSHAKE_FAILED_AUTH 400,
 * the right ones carry a message both ways. */

#include "peer_process.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#define ZL_TIMEOUT_MS 10000

static char peer_path[1024];

static void *plain_dealer(void *ctx, const char *password, void **monitor,
                          const char *monitor_name)
{
    void *dealer = zlink_socket(ctx, ZLINK_DEALER);
    ck_assert_ptr_nonnull(dealer);
    zl_test_set_int(dealer, ZLINK_LINGER, 0);
    zl_test_set_int(dealer, ZLINK_RCVTIMEO, ZL_TIMEOUT_MS);
    ck_assert_int_eq(zlink_setsockopt(dealer, ZLINK_PLAIN_USERNAME, "admin", 5),
                     0);
    ck_assert_int_eq(zlink_setsockopt(dealer, ZLINK_PLAIN_PASSWORD, password,
                                      strlen(password)),
                     0);
    *monitor = zl_test_monitor_open(ctx, dealer, monitor_name, ZLINK_EVENT_ALL);
    return dealer;
}

START_TEST(plain_client_against_libzmq)
{
    struct peer peer;
    char *args[] = {peer_path, "tcp://127.0.0.1:*", NULL};
    peer_start(&peer, args, false);
    const char *endpoint = peer_read_endpoint(&peer);
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);

    /* The ZAP handler refuses: an authentication failure, and no retry. */
    void *monitor;
    void *wrong = plain_dealer(ctx, "wrong", &monitor, "inproc://wrong");
    ck_assert_int_eq(zlink_connect(wrong, endpoint), 0);
    uint32_t value = 0;
    ck_assert_msg(zl_test_wait_event_value(monitor,
                                           ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
                                           &value, ZL_TIMEOUT_MS),
                  "no HANDSHAKE_FAILED_AUTH");
    ck_assert_uint_eq(value, 400);
    ck_assert_int_eq(zlink_close(monitor), 0);
    ck_assert_int_eq(zlink_close(wrong), 0);

    /* It lets the right credentials in, and the server sees their user. */
    void *right = plain_dealer(ctx, "secret", &monitor, "inproc://right");
    ck_assert_int_eq(zlink_connect(right, endpoint), 0);
    ck_assert_int_eq(zlink_send(right, "hello", 5, 0), 5);
    char reply[64];
    int n = zlink_recv(right, reply, sizeof reply - 1, 0);
    ck_assert_msg(n >= 0, "no reply: %s", zlink_strerror(zlink_errno()));
    reply[n] = '\0';
    ck_assert_str_eq(reply, "hello from admin");
    ck_assert_int_eq(zlink_close(monitor), 0);
    ck_assert_int_eq(zlink_close(right), 0);

    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("interop_plain");
    TCase *tc = tcase_create("plain");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, plain_client_against_libzmq);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (!peer_find("zmq_plain_server", peer_path, sizeof peer_path)) {
        printf("interop_plain: libzmq peer not built, skipped\n");
        return EXIT_SUCCESS;
    }
    atexit(peer_kill_running);
    return zl_test_run(suite());
}
