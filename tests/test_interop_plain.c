/* test_interop_plain.c — PLAIN between zlink and a real libzmq 4.3
 * (tests/interop/zmq_plain_peer), both ways. A zlink client of libzmq's
 * PLAIN server, whose ZAP handler checks the credentials; and libzmq's
 * client of a zlink PLAIN server, whose handler is a zlink REP served by
 * this test. The wrong password is refused, the right one carries a
 * message both ways. */

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
    char *args[] = {peer_path, "server", "tcp://127.0.0.1:*", NULL};
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

/* Answers one ZAP request on handler: admin with secret only. */
static void serve_zap(void *handler)
{
    char parts[8][256];
    int lens[8];
    for (int i = 0; i < 8; i++) {
        lens[i] = zlink_recv(handler, parts[i], sizeof parts[i], 0);
        ck_assert_msg(lens[i] >= 0, "no ZAP request: %s",
                      zlink_strerror(zlink_errno()));
    }
    bool ok = lens[6] == 5 && memcmp(parts[6], "admin", 5) == 0 &&
              lens[7] == 6 && memcmp(parts[7], "secret", 6) == 0;
    const char *reply[] = {
        "1.0", "1", ok ? "200" : "400", "", ok ? "admin" : "", ""};
    for (int i = 0; i < 6; i++)
        ck_assert_int_ge(zlink_send(handler, reply[i], strlen(reply[i]),
                                    i < 5 ? ZLINK_SNDMORE : 0),
                         0);
}

START_TEST(libzmq_client_of_a_zlink_server)
{
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    void *handler = zlink_socket(ctx, ZLINK_REP);
    zl_test_set_int(handler, ZLINK_LINGER, 0);
    zl_test_set_int(handler, ZLINK_RCVTIMEO, PEER_START_TIMEOUT_MS);
    ck_assert_int_eq(zlink_bind(handler, "inproc://zeromq.zap.01"), 0);
    void *server = zlink_socket(ctx, ZLINK_ROUTER);
    zl_test_set_int(server, ZLINK_LINGER, 0);
    zl_test_set_int(server, ZLINK_RCVTIMEO, ZL_TIMEOUT_MS);
    zl_test_set_int(server, ZLINK_PLAIN_SERVER, 1);
    ck_assert_int_eq(zlink_bind(server, "tcp://127.0.0.1:*"), 0);
    char endpoint[64];
    size_t len = sizeof endpoint;
    ck_assert_int_eq(
        zlink_getsockopt(server, ZLINK_LAST_ENDPOINT, endpoint, &len), 0);

    /* Refused: the peer exits 0 once its monitor says so. */
    struct peer peer;
    char *wrong[] = {peer_path, "client", endpoint, "wrong", NULL};
    peer_start(&peer, wrong, false);
    serve_zap(handler);
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);

    /* Admitted: its "hello" carries the User-Id, and it gets an answer. */
    char *right[] = {peer_path, "client", endpoint, "secret", NULL};
    peer_start(&peer, right, false);
    serve_zap(handler);
    char id[64];
    int id_len = zlink_recv(server, id, sizeof id, 0);
    ck_assert_int_gt(id_len, 0);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    ck_assert_int_eq(zlink_msg_recv(&msg, server, 0), 5);
    ck_assert_str_eq(zlink_msg_gets(&msg, "User-Id"), "admin");
    zlink_msg_close(&msg);
    ck_assert_int_eq(zlink_send(server, id, (size_t)id_len, ZLINK_SNDMORE),
                     id_len);
    ck_assert_int_eq(zlink_send(server, "world", 5, 0), 5);
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);

    ck_assert_int_eq(zlink_close(server), 0);
    ck_assert_int_eq(zlink_close(handler), 0);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

/* NULL with ZAP_DOMAIN against libzmq's NULL server and its handler: a
 * domain it admits lets the zlink client in as "anon"; in another, its
 * refusal reaches the zlink client as an authentication failure. */
START_TEST(null_client_against_libzmq_zap)
{
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    struct peer peer;
    char *admit[] = {peer_path, "server", "tcp://127.0.0.1:*",
                     "null",    "admit",  NULL};
    peer_start(&peer, admit, false);
    void *dealer = zlink_socket(ctx, ZLINK_DEALER);
    zl_test_set_int(dealer, ZLINK_LINGER, 0);
    zl_test_set_int(dealer, ZLINK_RCVTIMEO, ZL_TIMEOUT_MS);
    ck_assert_int_eq(zlink_connect(dealer, peer_read_endpoint(&peer)), 0);
    ck_assert_int_eq(zlink_send(dealer, "hello", 5, 0), 5);
    char reply[64];
    int n = zlink_recv(dealer, reply, sizeof reply - 1, 0);
    ck_assert_msg(n >= 0, "no reply: %s", zlink_strerror(zlink_errno()));
    reply[n] = '\0';
    ck_assert_str_eq(reply, "hello from anon");
    ck_assert_int_eq(zlink_close(dealer), 0);
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);

    char *refuse[] = {peer_path, "server", "tcp://127.0.0.1:*",
                      "null",    "refuse", NULL};
    peer_start(&peer, refuse, false);
    void *monitor;
    dealer = zlink_socket(ctx, ZLINK_DEALER);
    zl_test_set_int(dealer, ZLINK_LINGER, 0);
    monitor = zl_test_monitor_open(ctx, dealer, "inproc://null-refused",
                                   ZLINK_EVENT_ALL);
    ck_assert_int_eq(zlink_connect(dealer, peer_read_endpoint(&peer)), 0);
    uint32_t value = 0;
    ck_assert_msg(zl_test_wait_event_value(monitor,
                                           ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
                                           &value, ZL_TIMEOUT_MS),
                  "no HANDSHAKE_FAILED_AUTH");
    ck_assert_uint_eq(value, 400);
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);
    ck_assert_int_eq(zlink_close(monitor), 0);
    ck_assert_int_eq(zlink_close(dealer), 0);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

/* Answers one NULL request (six parts after the delimiter REP strips). */
static void serve_null_zap(void *handler, bool admit)
{
    char part[256];
    for (int i = 0; i < 6; i++)
        ck_assert_msg(zlink_recv(handler, part, sizeof part, 0) >= 0,
                      "no ZAP request: %s", zlink_strerror(zlink_errno()));
    ck_assert_mem_eq(part, "NULL", 4);
    const char *reply[] = {
        "1.0", "1", admit ? "200" : "400", "", admit ? "anon" : "", ""};
    for (int i = 0; i < 6; i++)
        ck_assert_int_ge(zlink_send(handler, reply[i], strlen(reply[i]),
                                    i < 5 ? ZLINK_SNDMORE : 0),
                         0);
}

/* libzmq's NULL client of a zlink NULL server with a ZAP_DOMAIN: refused,
 * it reports the failure; admitted, its message carries "anon". */
START_TEST(libzmq_null_client_of_a_zlink_zap_server)
{
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    void *handler = zlink_socket(ctx, ZLINK_REP);
    zl_test_set_int(handler, ZLINK_LINGER, 0);
    zl_test_set_int(handler, ZLINK_RCVTIMEO, PEER_START_TIMEOUT_MS);
    ck_assert_int_eq(zlink_bind(handler, "inproc://zeromq.zap.01"), 0);
    void *server = zlink_socket(ctx, ZLINK_ROUTER);
    zl_test_set_int(server, ZLINK_LINGER, 0);
    zl_test_set_int(server, ZLINK_RCVTIMEO, ZL_TIMEOUT_MS);
    ck_assert_int_eq(zlink_setsockopt(server, ZLINK_ZAP_DOMAIN, "global", 6),
                     0);
    ck_assert_int_eq(zlink_bind(server, "tcp://127.0.0.1:*"), 0);
    char endpoint[64];
    size_t len = sizeof endpoint;
    ck_assert_int_eq(
        zlink_getsockopt(server, ZLINK_LAST_ENDPOINT, endpoint, &len), 0);

    struct peer peer;
    char *refused[] = {peer_path, "client", endpoint, "null-refused", NULL};
    peer_start(&peer, refused, false);
    serve_null_zap(handler, false);
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);

    char *admitted[] = {peer_path, "client", endpoint, "null-ok", NULL};
    peer_start(&peer, admitted, false);
    serve_null_zap(handler, true);
    char id[64];
    int id_len = zlink_recv(server, id, sizeof id, 0);
    ck_assert_int_gt(id_len, 0);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    ck_assert_int_eq(zlink_msg_recv(&msg, server, 0), 5);
    ck_assert_str_eq(zlink_msg_gets(&msg, "User-Id"), "anon");
    zlink_msg_close(&msg);
    ck_assert_int_eq(zlink_send(server, id, (size_t)id_len, ZLINK_SNDMORE),
                     id_len);
    ck_assert_int_eq(zlink_send(server, "world", 5, 0), 5);
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);

    ck_assert_int_eq(zlink_close(server), 0);
    ck_assert_int_eq(zlink_close(handler), 0);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("interop_plain");
    TCase *tc = tcase_create("plain");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, plain_client_against_libzmq);
    tcase_add_test(tc, libzmq_client_of_a_zlink_server);
    tcase_add_test(tc, null_client_against_libzmq_zap);
    tcase_add_test(tc, libzmq_null_client_of_a_zlink_zap_server);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (!peer_find("zmq_plain_peer", peer_path, sizeof peer_path)) {
        printf("interop_plain: libzmq peer not built, skipped\n");
        return EXIT_SUCCESS;
    }
    atexit(peer_kill_running);
    return zl_test_run(suite());
}
