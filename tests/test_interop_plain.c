/* test_interop_plain.c — PLAIN, and NULL with a ZAP_DOMAIN, between
 * zlink and a real libzmq 4.3 (tests/interop/zmq_plain_peer), both ways.
 * A zlink client of libzmq's server, whose ZAP handler checks the
 * credentials (or the domain); and libzmq's client of a zlink server,
 * whose handler is a zlink REP served by this test. The refused client
 * reports it; the admitted one carries a message both ways. */

#include "peer_process.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#define ZL_TIMEOUT_MS 10000

static char peer_path[1024];

/* A DEALER, a PLAIN client with the password, or of the NULL mechanism
 * without one, and its monitor. */
static void *client_dealer(void *ctx, const char *password, void **monitor,
                           const char *monitor_name)
{
    void *dealer = zlink_socket(ctx, ZLINK_DEALER);
    ck_assert_ptr_nonnull(dealer);
    zl_test_set_int(dealer, ZLINK_LINGER, 0);
    zl_test_set_int(dealer, ZLINK_RCVTIMEO, ZL_TIMEOUT_MS);
    if (password) {
        ck_assert_int_eq(
            zlink_setsockopt(dealer, ZLINK_PLAIN_USERNAME, "admin", 5), 0);
        ck_assert_int_eq(zlink_setsockopt(dealer, ZLINK_PLAIN_PASSWORD,
                                          password, strlen(password)),
                         0);
    }
    *monitor = zl_test_monitor_open(ctx, dealer, monitor_name, ZLINK_EVENT_ALL);
    return dealer;
}

/* The libzmq server's ZAP handler refuses the client: an authentication
 * failure with its code. */
static void expect_refused(void *ctx, const char *password,
                           const char *endpoint)
{
    void *monitor;
    void *dealer = client_dealer(ctx, password, &monitor, "inproc://refused");
    ck_assert_int_eq(zlink_connect(dealer, endpoint), 0);
    uint32_t value = 0;
    ck_assert_msg(zl_test_wait_event_value(monitor,
                                           ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
                                           &value, ZL_TIMEOUT_MS),
                  "no HANDSHAKE_FAILED_AUTH");
    ck_assert_uint_eq(value, 400);
    ck_assert_int_eq(zlink_close(monitor), 0);
    ck_assert_int_eq(zlink_close(dealer), 0);
}

/* It admits the client, and its echo names the user it saw. */
static void expect_admitted(void *ctx, const char *password,
                            const char *endpoint, const char *echo)
{
    void *monitor;
    void *dealer = client_dealer(ctx, password, &monitor, "inproc://admitted");
    ck_assert_int_eq(zlink_connect(dealer, endpoint), 0);
    ck_assert_int_eq(zlink_send(dealer, "hello", 5, 0), 5);
    char reply[64];
    /* The peer may exit as soon as it has answered: its SIGCHLD must not
     * end the wait (EINTR). */
    int n = zl_test_recv_retry(dealer, reply, sizeof reply - 1, 0);
    ck_assert_msg(n >= 0, "no reply: %s", zlink_strerror(zlink_errno()));
    reply[n > 0 ? n : 0] = '\0'; /* mingw's gcc cannot tell n >= 0 here */
    ck_assert_str_eq(reply, echo);
    ck_assert_int_eq(zlink_close(monitor), 0);
    ck_assert_int_eq(zlink_close(dealer), 0);
}

START_TEST(plain_client_against_libzmq)
{
    struct peer peer;
    char *args[] = {peer_path, "server", "tcp://127.0.0.1:*", NULL};
    peer_start(&peer, args, false);
    const char *endpoint = peer_read_endpoint(&peer);
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    expect_refused(ctx, "wrong", endpoint);
    expect_admitted(ctx, "secret", endpoint, "hello from admin");
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

/* A ZAP reply to request "1" with no metadata. */
static void send_zap_reply(void *handler, const char *status, const char *user)
{
    const char *reply[] = {"1.0", "1", status, "", user, ""};
    for (int i = 0; i < 6; i++)
        ck_assert_int_ge(zlink_send(handler, reply[i], strlen(reply[i]),
                                    i < 5 ? ZLINK_SNDMORE : 0),
                         0);
}

/* A zlink ROUTER bound on tcp, and its ZAP handler (a REP) bound first:
 * a PLAIN server, or a NULL one with a ZAP_DOMAIN. Its endpoint goes into
 * endpoint. */
static void *zap_server_open(void *ctx, bool plain, void **handler,
                             char *endpoint, size_t cap)
{
    *handler = zlink_socket(ctx, ZLINK_REP);
    zl_test_set_int(*handler, ZLINK_LINGER, 0);
    zl_test_set_int(*handler, ZLINK_RCVTIMEO, PEER_START_TIMEOUT_MS);
    ck_assert_int_eq(zlink_bind(*handler, "inproc://zeromq.zap.01"), 0);
    void *server = zlink_socket(ctx, ZLINK_ROUTER);
    zl_test_set_int(server, ZLINK_LINGER, 0);
    zl_test_set_int(server, ZLINK_RCVTIMEO, ZL_TIMEOUT_MS);
    if (plain)
        zl_test_set_int(server, ZLINK_PLAIN_SERVER, 1);
    else
        ck_assert_int_eq(
            zlink_setsockopt(server, ZLINK_ZAP_DOMAIN, "global", 6), 0);
    ck_assert_int_eq(zlink_bind(server, "tcp://127.0.0.1:*"), 0);
    ck_assert_int_eq(
        zlink_getsockopt(server, ZLINK_LAST_ENDPOINT, endpoint, &cap), 0);
    return server;
}

/* The admitted libzmq client's "hello" carries user as its User-Id; it
 * gets "world" back. */
static void answer_admitted(void *server, const char *user)
{
    char id[64];
    int id_len = zlink_recv(server, id, sizeof id, 0);
    ck_assert_int_gt(id_len, 0);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    ck_assert_int_eq(zlink_msg_recv(&msg, server, 0), 5);
    ck_assert_str_eq(zlink_msg_gets(&msg, "User-Id"), user);
    zlink_msg_close(&msg);
    ck_assert_int_eq(zlink_send(server, id, (size_t)id_len, ZLINK_SNDMORE),
                     id_len);
    ck_assert_int_eq(zlink_send(server, "world", 5, 0), 5);
}

/* Answers one ZAP request on handler. PLAIN: admin with secret only, as
 * "admin". NULL (six parts, no credentials): as "anon" when admit. */
static void serve_zap(void *handler, bool plain, bool admit)
{
    int count = plain ? 8 : 6;
    char parts[8][256];
    int lens[8];
    for (int i = 0; i < count; i++) {
        lens[i] = zlink_recv(handler, parts[i], sizeof parts[i], 0);
        ck_assert_msg(lens[i] >= 0, "no ZAP request: %s",
                      zlink_strerror(zlink_errno()));
    }
    ck_assert_mem_eq(parts[5], plain ? "PLAIN" : "NULL", plain ? 5 : 4);
    if (plain)
        admit = lens[6] == 5 && memcmp(parts[6], "admin", 5) == 0 &&
                lens[7] == 6 && memcmp(parts[7], "secret", 6) == 0;
    send_zap_reply(handler, admit ? "200" : "400",
                   !admit  ? ""
                   : plain ? "admin"
                           : "anon");
}

/* libzmq's client of a zlink server, PLAIN (_i 0) or NULL with a
 * ZAP_DOMAIN (_i 1), whose handler is a zlink REP served here: refused,
 * the peer exits 0 once its monitor says so; admitted, its "hello" carries
 * the User-Id, and it gets an answer. */
START_TEST(libzmq_client_of_a_zlink_server)
{
    bool plain = _i == 0;
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    void *handler;
    char endpoint[64];
    void *server =
        zap_server_open(ctx, plain, &handler, endpoint, sizeof endpoint);

    struct peer peer;
    char *refused[] = {peer_path, "client", endpoint,
                       plain ? "wrong" : "null-refused", NULL};
    peer_start(&peer, refused, false);
    serve_zap(handler, plain, false);
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);

    char *admitted[] = {peer_path, "client", endpoint,
                        plain ? "secret" : "null-ok", NULL};
    peer_start(&peer, admitted, false);
    serve_zap(handler, plain, true);
    answer_admitted(server, plain ? "admin" : "anon");
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
    expect_admitted(ctx, NULL, peer_read_endpoint(&peer), "hello from anon");
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);

    char *refuse[] = {peer_path, "server", "tcp://127.0.0.1:*",
                      "null",    "refuse", NULL};
    peer_start(&peer, refuse, false);
    expect_refused(ctx, NULL, peer_read_endpoint(&peer));
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
    tcase_add_loop_test(tc, libzmq_client_of_a_zlink_server, 0, 2);
    tcase_add_test(tc, null_client_against_libzmq_zap);
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
