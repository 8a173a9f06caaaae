/* test_interop_curve.c — CURVE between zlink and a real libzmq 4.3
 * (tests/interop/zmq_curve_peer), both ways, with libzmq's test keys:
 * messages of every size and shape carried sealed, the ZAP handler's say
 * on a client's key (libzmq's handler for a zlink client, a zlink REP
 * served here for libzmq's client), a client with the wrong server key,
 * and heartbeats each way. */

#include "peer_process.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#define ZL_TIMEOUT_MS 10000
#define KEY_SIZE 32
#define BIG_SIZE 300000
/* As the peer's: a PING every 50 ms, and a connection dropped when one
 * goes unanswered for 500 ms, well inside the second the case waits. */
#define HEARTBEAT_IVL_MS 50
#define HEARTBEAT_TIMEOUT_MS 500
#define HEARTBEAT_QUIET_MS 1000
#define DRAIN_MS 100

/* libzmq's test keys (zmq_curve(7)). */
static const char server_public[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
static const char server_secret[] = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
static const char client_public[] = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
static const char client_secret[] = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

static char peer_path[1024];

static void set_key(void *socket, int option, const char *z85)
{
    ck_assert_int_eq(zlink_setsockopt(socket, option, z85, strlen(z85)), 0);
}

/* A body of len bytes that differs with seed, as the peer makes it. */
static char *make_body(size_t len, unsigned seed)
{
    char *body = malloc(len);
    ck_assert_ptr_nonnull(body);
    for (size_t i = 0; i < len; i++)
        body[i] = (char)(i * 31 + seed);
    return body;
}

/* A DEALER, a CURVE client of libzmq's server with these keys, and its
 * monitor. */
static void *client_open(void *ctx, const char *public_key,
                         const char *secret_key, void **monitor)
{
    void *dealer = zlink_socket(ctx, ZLINK_DEALER);
    ck_assert_ptr_nonnull(dealer);
    zl_test_set_int(dealer, ZLINK_LINGER, 0);
    zl_test_set_int(dealer, ZLINK_RCVTIMEO, ZL_TIMEOUT_MS);
    set_key(dealer, ZLINK_CURVE_SERVERKEY, server_public);
    set_key(dealer, ZLINK_CURVE_PUBLICKEY, public_key);
    set_key(dealer, ZLINK_CURVE_SECRETKEY, secret_key);
    *monitor = zl_test_monitor_open(ctx, dealer, "inproc://client-events",
                                    ZLINK_EVENT_ALL);
    return dealer;
}

/* A ROUTER, a CURVE server with libzmq's test server key, bound on tcp,
 * with its monitor; its endpoint goes into endpoint. */
static void *server_open(void *ctx, void **monitor, char *endpoint, size_t cap)
{
    void *router = zlink_socket(ctx, ZLINK_ROUTER);
    ck_assert_ptr_nonnull(router);
    zl_test_set_int(router, ZLINK_LINGER, 0);
    zl_test_set_int(router, ZLINK_RCVTIMEO, PEER_START_TIMEOUT_MS);
    zl_test_set_int(router, ZLINK_CURVE_SERVER, 1);
    set_key(router, ZLINK_CURVE_SECRETKEY, server_secret);
    *monitor = zl_test_monitor_open(ctx, router, "inproc://server-events",
                                    ZLINK_EVENT_ALL);
    ck_assert_int_eq(zlink_bind(router, "tcp://127.0.0.1:*"), 0);
    ck_assert_int_eq(
        zlink_getsockopt(router, ZLINK_LAST_ENDPOINT, endpoint, &cap), 0);
    return router;
}

/* The ZAP handler, a REP bound before the server it answers for. */
static void *handler_open(void *ctx)
{
    void *handler = zlink_socket(ctx, ZLINK_REP);
    ck_assert_ptr_nonnull(handler);
    zl_test_set_int(handler, ZLINK_LINGER, 0);
    zl_test_set_int(handler, ZLINK_RCVTIMEO, PEER_START_TIMEOUT_MS);
    ck_assert_int_eq(zlink_bind(handler, "inproc://zeromq.zap.01"), 0);
    return handler;
}

static void send_parts(void *socket, char *const parts[], const size_t sizes[],
                       int count)
{
    for (int i = 0; i < count; i++)
        ck_assert_int_eq(zl_test_send_retry(socket, parts[i], sizes[i],
                                            i + 1 < count ? ZLINK_SNDMORE : 0),
                         (int)sizes[i]);
}

/* One part of a message, as it went, with more parts after it or not. */
static void expect_part(void *socket, const void *data, size_t size, bool more)
{
    zlink_msg_t part;
    zlink_msg_init(&part);
    /* The peer may exit as soon as it has answered: its SIGCHLD must not
     * end the wait (EINTR). */
    int n = zl_test_msg_recv_retry(&part, socket, 0);
    ck_assert_msg(n >= 0, "no reply: %s", zlink_strerror(zlink_errno()));
    ck_assert_uint_eq(zlink_msg_size(&part), size);
    ck_assert(memcmp(zlink_msg_data(&part), data, size) == 0);
    ck_assert_int_eq(zlink_msg_more(&part), more);
    zlink_msg_close(&part);
}

/* libzmq's server echoes the message with the User-Id it saw on its parts
 * as one more part. */
static void round_trip(void *dealer, char *const parts[], const size_t sizes[],
                       int count, const char *user)
{
    send_parts(dealer, parts, sizes, count);
    for (int i = 0; i < count; i++)
        expect_part(dealer, parts[i], sizes[i], true);
    expect_part(dealer, user, strlen(user), false);
}

/* The events so far say one handshake succeeded and nothing dropped: a
 * heartbeat that went unanswered would have cost a reconnection. */
static void expect_connection_held(void *monitor)
{
    int handshakes = 0;
    zlink_pollitem_t item = {monitor, 0, ZLINK_POLLIN, 0};
    uint64_t deadline = zl_test_now_ms() + DRAIN_MS;
    while (zl_test_now_ms() < deadline) {
        if (zlink_poll(&item, 1, DRAIN_MS) <= 0)
            continue;
        /* An event is 2 bytes of event and 4 of value, then the
         * endpoint. */
        uint8_t head[6];
        char endpoint[512];
        ck_assert_int_eq(zl_test_recv_retry(monitor, head, sizeof head, 0), 6);
        ck_assert_int_ge(
            zl_test_recv_retry(monitor, endpoint, sizeof endpoint, 0), 0);
        uint16_t event;
        uint32_t value;
        memcpy(&event, head, sizeof event);
        memcpy(&value, head + 2, sizeof value);
        ck_assert_msg(event != ZLINK_EVENT_DISCONNECTED &&
                          event != ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL &&
                          event != ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
                          event != ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
                      "connection dropped: event 0x%x value 0x%x", event,
                      value);
        if (event == ZLINK_EVENT_HANDSHAKE_SUCCEEDED)
            handshakes++;
        deadline = zl_test_now_ms() + DRAIN_MS;
    }
    ck_assert_int_eq(handshakes, 1);
}

/* A zlink client of libzmq's server, admitted by its ZAP handler:
 * "hello", 300000 bytes and three parts come back as they went, each
 * with the User-Id "alice" libzmq's handler gave the client. */
START_TEST(zlink_client_of_a_libzmq_server)
{
    struct peer peer;
    char *args[] = {peer_path, "server", "tcp://127.0.0.1:*", NULL};
    peer_start(&peer, args, false);
    const char *endpoint = peer_read_endpoint(&peer);
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    void *monitor;
    void *dealer = client_open(ctx, client_public, client_secret, &monitor);
    ck_assert_int_eq(zlink_connect(dealer, endpoint), 0);

    char hello[] = "hello";
    char *one[] = {hello};
    size_t one_size[] = {5};
    round_trip(dealer, one, one_size, 1, "alice");
    char *big = make_body(BIG_SIZE, 7);
    char *large[] = {big};
    size_t large_size[] = {BIG_SIZE};
    round_trip(dealer, large, large_size, 1, "alice");
    free(big);
    char a[] = "first", b[] = "", c[] = "third part";
    char *three[] = {a, b, c};
    size_t three_sizes[] = {5, 0, 10};
    round_trip(dealer, three, three_sizes, 3, "alice");

    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);
    ck_assert_int_eq(zlink_close(monitor), 0);
    ck_assert_int_eq(zlink_close(dealer), 0);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

/* A zlink client with keys of its own: libzmq's handler refuses them, and
 * its 400 reaches the client as an authentication failure. The peer exits
 * 0 once its own monitor has reported the refusal. */
START_TEST(zlink_client_refused_by_libzmq)
{
    struct peer peer;
    char *args[] = {peer_path, "server-refuse", "tcp://127.0.0.1:*", NULL};
    peer_start(&peer, args, false);
    const char *endpoint = peer_read_endpoint(&peer);
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    char other_public[41], other_secret[41];
    ck_assert_int_eq(zlink_curve_keypair(other_public, other_secret), 0);
    void *monitor;
    void *dealer = client_open(ctx, other_public, other_secret, &monitor);
    ck_assert_int_eq(zlink_connect(dealer, endpoint), 0);
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

/* Answers one ZAP request, a CURVE one whose credential is the client's
 * 32-byte key: libzmq's test client as "alice", anyone else with 400. */
static void serve_zap(void *handler, bool expect_admitted)
{
    char parts[7][256];
    int lens[7];
    for (int i = 0; i < 7; i++) {
        lens[i] = zl_test_recv_retry(handler, parts[i], sizeof parts[i], 0);
        ck_assert_msg(lens[i] >= 0, "no ZAP request: %s",
                      zlink_strerror(zlink_errno()));
        int more = 0;
        size_t size = sizeof more;
        ck_assert_int_eq(zlink_getsockopt(handler, ZLINK_RCVMORE, &more, &size),
                         0);
        ck_assert_int_eq(more, i < 6);
    }
    ck_assert_int_eq(lens[0], 3);
    ck_assert_mem_eq(parts[0], "1.0", 3);
    ck_assert_int_eq(lens[5], 5);
    ck_assert_mem_eq(parts[5], "CURVE", 5);
    ck_assert_int_eq(lens[6], KEY_SIZE);
    uint8_t key[KEY_SIZE];
    ck_assert_ptr_nonnull(zlink_z85_decode(key, client_public));
    bool admit = memcmp(parts[6], key, KEY_SIZE) == 0;
    ck_assert_int_eq(admit, expect_admitted);
    const char *reply[] = {
        "1.0", "", admit ? "200" : "400", "", admit ? "alice" : "", ""};
    for (int i = 0; i < 6; i++) {
        const char *data = i == 1 ? parts[1] : reply[i];
        size_t size = i == 1 ? (size_t)lens[1] : strlen(reply[i]);
        ck_assert_int_eq(
            zl_test_send_retry(handler, data, size, i < 5 ? ZLINK_SNDMORE : 0),
            (int)size);
    }
}

/* Echoes one message to its sender, each part with user as its User-Id
 * (or with none, when user is NULL); the count of its parts. */
static int echo_one(void *router, const char *user)
{
    zlink_msg_t part;
    zlink_msg_init(&part);
    ck_assert_msg(zl_test_msg_recv_retry(&part, router, 0) > 0,
                  "no message: %s", zlink_strerror(zlink_errno()));
    ck_assert_int_gt(zl_test_msg_send_retry(&part, router, ZLINK_SNDMORE), 0);
    int count = 0;
    bool more = true;
    while (more) {
        ck_assert_int_ge(zl_test_msg_recv_retry(&part, router, 0), 0);
        const char *got = zlink_msg_gets(&part, "User-Id");
        if (user)
            ck_assert_msg(got && strcmp(got, user) == 0,
                          "part %d's User-Id is %s, not %s", count,
                          got ? got : "none", user);
        else
            ck_assert_ptr_null(got);
        more = zlink_msg_more(&part);
        ck_assert_int_ge(
            zl_test_msg_send_retry(&part, router, more ? ZLINK_SNDMORE : 0), 0);
        count++;
    }
    zlink_msg_close(&part);
    return count;
}

/* libzmq's client of a zlink server whose ZAP handler, served here, admits
 * its key as "alice": every part it sends carries that User-Id, and its
 * messages come back as they went (the peer checks them). */
START_TEST(libzmq_client_of_a_zlink_server)
{
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    void *handler = handler_open(ctx);
    void *monitor;
    char endpoint[64];
    void *server = server_open(ctx, &monitor, endpoint, sizeof endpoint);

    struct peer peer;
    char *args[] = {peer_path, "client", endpoint, NULL};
    peer_start(&peer, args, false);
    serve_zap(handler, true);
    ck_assert_int_eq(echo_one(server, "alice"), 1);
    ck_assert_int_eq(echo_one(server, "alice"), 1);
    ck_assert_int_eq(echo_one(server, "alice"), 3);
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);

    ck_assert_int_eq(zlink_close(monitor), 0);
    ck_assert_int_eq(zlink_close(server), 0);
    ck_assert_int_eq(zlink_close(handler), 0);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

/* libzmq's client with keys of its own: the handler here refuses it, the
 * zlink server reports the 400, and so does libzmq's client, from the
 * ERROR zlink sent it (the peer exits 0 on that). */
START_TEST(libzmq_client_refused_by_zlink)
{
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    void *handler = handler_open(ctx);
    void *monitor;
    char endpoint[64];
    void *server = server_open(ctx, &monitor, endpoint, sizeof endpoint);

    struct peer peer;
    char *args[] = {peer_path, "client-refused", endpoint, NULL};
    peer_start(&peer, args, false);
    serve_zap(handler, false);
    uint32_t value = 0;
    ck_assert_msg(zl_test_wait_event_value(monitor,
                                           ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
                                           &value, ZL_TIMEOUT_MS),
                  "no HANDSHAKE_FAILED_AUTH");
    ck_assert_uint_eq(value, 400);
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);

    ck_assert_int_eq(zlink_close(monitor), 0);
    ck_assert_int_eq(zlink_close(server), 0);
    ck_assert_int_eq(zlink_close(handler), 0);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

/* libzmq's client with the wrong server key: its HELLO's box opens under
 * no key of the server's, which reports a cryptographic error and takes
 * no message. The peer exits 0 once its monitor reports the handshake
 * failed. */
START_TEST(libzmq_client_with_a_wrong_server_key)
{
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    void *monitor;
    char endpoint[64];
    void *server = server_open(ctx, &monitor, endpoint, sizeof endpoint);

    struct peer peer;
    char *args[] = {peer_path, "client-wrongkey", endpoint, NULL};
    peer_start(&peer, args, false);
    uint32_t value = 0;
    ck_assert_msg(
        zl_test_wait_event_value(monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                                 &value, PEER_START_TIMEOUT_MS),
        "no HANDSHAKE_FAILED_PROTOCOL");
    ck_assert_uint_eq(value, ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC);
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);
    char buf[16];
    ck_assert_int_eq(zlink_recv(server, buf, sizeof buf, ZLINK_DONTWAIT), -1);
    ck_assert_int_eq(zlink_errno(), EAGAIN);

    ck_assert_int_eq(zlink_close(monitor), 0);
    ck_assert_int_eq(zlink_close(server), 0);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

/* libzmq's client PINGs every 50 ms: zlink's sealed PONGs keep the one
 * connection up for a second, and a message goes through after it (the
 * peer checks that its own connection held too). */
START_TEST(heartbeats_from_libzmq)
{
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    void *monitor;
    char endpoint[64];
    void *server = server_open(ctx, &monitor, endpoint, sizeof endpoint);

    struct peer peer;
    char *args[] = {peer_path, "client-heartbeat", endpoint, NULL};
    peer_start(&peer, args, false);
    ck_assert_int_eq(echo_one(server, NULL), 1);
    /* The second message comes after the quiet second; the check is made
     * before its echo, after which the peer goes. */
    ck_assert(
        zl_test_wait_events(server, ZLINK_POLLIN, ZLINK_POLLIN, ZL_TIMEOUT_MS));
    expect_connection_held(monitor);
    ck_assert_int_eq(echo_one(server, NULL), 1);
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);

    ck_assert_int_eq(zlink_close(monitor), 0);
    ck_assert_int_eq(zlink_close(server), 0);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

/* zlink's client PINGs libzmq's server every 50 ms: libzmq's sealed PONGs
 * keep the one connection up for a second, and a message goes through
 * after it (the peer checks that its own connection held too). */
START_TEST(heartbeats_to_libzmq)
{
    struct peer peer;
    char *args[] = {peer_path, "server-heartbeat", "tcp://127.0.0.1:*", NULL};
    peer_start(&peer, args, false);
    const char *endpoint = peer_read_endpoint(&peer);
    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    void *monitor;
    void *dealer = client_open(ctx, client_public, client_secret, &monitor);
    zl_test_set_int(dealer, ZLINK_HEARTBEAT_IVL, HEARTBEAT_IVL_MS);
    zl_test_set_int(dealer, ZLINK_HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS);
    ck_assert_int_eq(zlink_connect(dealer, endpoint), 0);

    char hello[] = "hello", again[] = "again";
    char *first[] = {hello}, *second[] = {again};
    size_t size[] = {5};
    round_trip(dealer, first, size, 1, "alice");
    zl_test_sleep_ms(HEARTBEAT_QUIET_MS);
    /* Checked before the second message, whose echo lets the peer go. */
    expect_connection_held(monitor);
    round_trip(dealer, second, size, 1, "alice");
    ck_assert_int_eq(peer_wait(&peer), 0);
    peer_close(&peer);

    ck_assert_int_eq(zlink_close(monitor), 0);
    ck_assert_int_eq(zlink_close(dealer), 0);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("interop_curve");
    TCase *tc = tcase_create("curve");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, zlink_client_of_a_libzmq_server);
    tcase_add_test(tc, zlink_client_refused_by_libzmq);
    tcase_add_test(tc, libzmq_client_of_a_zlink_server);
    tcase_add_test(tc, libzmq_client_refused_by_zlink);
    tcase_add_test(tc, libzmq_client_with_a_wrong_server_key);
    tcase_add_test(tc, heartbeats_from_libzmq);
    tcase_add_test(tc, heartbeats_to_libzmq);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (!zlink_has("curve")) {
        printf("interop_curve: zlink built without CURVE, skipped\n");
        return EXIT_SUCCESS;
    }
    if (!peer_find("zmq_curve_peer", peer_path, sizeof peer_path)) {
        printf("interop_curve: libzmq peer not built, skipped\n");
        return EXIT_SUCCESS;
    }
    atexit(peer_kill_running);
    return zl_test_run(suite());
}
