/* test_tls_resume.c — TLS session resumption: a client that reconnects to
 * the same name and endpoint resumes its session (a session ticket of the
 * server's), and never where that would skip a check it still owes: another
 * endpoint, another server at the same endpoint, or changed trust settings.
 * Certificates come from tests/tls/make_certs.sh, run by ctest into
 * $ZLINK_TLS_CERTS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#include "testutil.h"
#include "tls_fixture.h"
#include "transport/tls_stream.h"

static void *server_of(void *ctx, const char *chain, const char *key)
{
    void *s = tls_socket(ctx, ZLINK_ROUTER);
    tls_server_identity(s, chain, key);
    return s;
}

static void *client_of(void *ctx)
{
    void *s = tls_socket(ctx, ZLINK_DEALER);
    tls_client_trust(s, "root.pem");
    return s;
}

/* Binds endpoint again once its last listener has let the port go. */
static void bind_again(void *s, const char *endpoint)
{
    uint64_t deadline = zl_test_now_ms() + TLS_WAIT_MS;
    while (zlink_bind(s, endpoint) != 0) {
        ck_assert_msg(zl_test_now_ms() < deadline, "port never freed");
        zl_test_sleep_ms(10);
    }
}

/* The client connects to endpoint and one message reaches server. */
static void connect_and_deliver(void *client, void *server,
                                const char *endpoint)
{
    ck_assert_int_eq(zlink_connect(client, endpoint), 0);
    ck_assert_int_eq(zlink_send(client, "hi", 2, 0), 2);
    char id[256], body[8];
    ck_assert_int_gt(zlink_recv(server, id, sizeof id, 0), 0);
    ck_assert_int_eq(zlink_recv(server, body, sizeof body, 0), 2);
}

START_TEST(reconnect_resumes)
{
    void *ctx = zlink_ctx_new();
    void *server = server_of(ctx, "server-chain.pem", "server.key");
    void *client = client_of(ctx);
    char endpoint[128];
    tls_bind(server, endpoint, sizeof endpoint);
    unsigned before = zl_tls_resumed_total();
    connect_and_deliver(client, server, endpoint);
    ck_assert_uint_eq(zl_tls_resumed_total(), before);
    for (unsigned i = 1; i <= 3; i++) {
        ck_assert_int_eq(zlink_disconnect(client, endpoint), 0);
        connect_and_deliver(client, server, endpoint);
        ck_assert_uint_eq(zl_tls_resumed_total(), before + i);
    }
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
}
END_TEST

/* A server that requires client certificates resumes too, and still has
 * the client's certificate to check. */
START_TEST(resumes_with_client_certificate)
{
    void *ctx = zlink_ctx_new();
    void *server = server_of(ctx, "server-chain.pem", "server.key");
    zl_test_set_int(server, ZLINK_TLS_REQUIRE_CLIENT_CERT, 1);
    tls_set_str(server, ZLINK_TLS_CA, tls_cert("root.pem"));
    void *client = client_of(ctx);
    tls_set_str(client, ZLINK_TLS_CERT, tls_cert("client-chain.pem"));
    tls_set_str(client, ZLINK_TLS_KEY, tls_cert("client.key"));
    char endpoint[128];
    tls_bind(server, endpoint, sizeof endpoint);
    unsigned before = zl_tls_resumed_total();
    connect_and_deliver(client, server, endpoint);
    ck_assert_int_eq(zlink_disconnect(client, endpoint), 0);
    connect_and_deliver(client, server, endpoint);
    ck_assert_uint_eq(zl_tls_resumed_total(), before + 1);
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
}
END_TEST

/* One server socket on two ports shares one ticket key, so only the
 * client's own rule keeps a session from crossing to the other port. */
START_TEST(other_endpoint_not_resumed)
{
    void *ctx = zlink_ctx_new();
    void *server = server_of(ctx, "server-chain.pem", "server.key");
    void *client = client_of(ctx);
    char first[128], second[128];
    tls_bind(server, first, sizeof first);
    tls_bind(server, second, sizeof second);
    unsigned before = zl_tls_resumed_total();
    connect_and_deliver(client, server, first);
    connect_and_deliver(client, server, second);
    ck_assert_uint_eq(zl_tls_resumed_total(), before);
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
}
END_TEST

/* Waits for the client's HANDSHAKE_FAILED_AUTH; returns its value. */
static uint32_t auth_failure_of(void *monitor)
{
    uint32_t value = 0;
    ck_assert_msg(
        tls_wait_event(monitor, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, &value),
        "no HANDSHAKE_FAILED_AUTH");
    return value;
}

/* Another server takes over the endpoint: a trusted one (another ticket
 * key) makes a full handshake, an untrusted one is refused, although the
 * client still holds a session for that endpoint. */
START_TEST(new_server_at_same_endpoint_is_verified)
{
    void *ctx = zlink_ctx_new();
    void *server = server_of(ctx, "server-chain.pem", "server.key");
    void *client = client_of(ctx);
    char endpoint[128];
    tls_bind(server, endpoint, sizeof endpoint);
    connect_and_deliver(client, server, endpoint);
    unsigned before = zl_tls_resumed_total();

    /* A trusted server with its own key: no resumption, full check. */
    ck_assert_int_eq(zlink_disconnect(client, endpoint), 0);
    zlink_close(server);
    server = server_of(ctx, "server-chain.pem", "server.key");
    bind_again(server, endpoint);
    connect_and_deliver(client, server, endpoint);
    ck_assert_uint_eq(zl_tls_resumed_total(), before);

    /* An impostor with a self-signed certificate: refused. */
    ck_assert_int_eq(zlink_disconnect(client, endpoint), 0);
    zlink_close(server);
    server = server_of(ctx, "selfsigned.pem", "selfsigned.key");
    bind_again(server, endpoint);
    void *monitor = tls_open_monitor(ctx, client, "inproc://resume-monitor");
    ck_assert_int_eq(zlink_connect(client, endpoint), 0);
    ck_assert_uint_eq(auth_failure_of(monitor), ZLINK_TLS_AUTH_CERT_UNTRUSTED);
    ck_assert_uint_eq(zl_tls_resumed_total(), before);
    zlink_close(monitor);
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
}
END_TEST

/* Sessions belong to the settings they were verified with: after the
 * client trusts another CA, its next connection is checked again (and
 * fails), though the same server would have resumed. */
START_TEST(changed_trust_is_not_resumed)
{
    void *ctx = zlink_ctx_new();
    void *server = server_of(ctx, "server-chain.pem", "server.key");
    void *client = client_of(ctx);
    char endpoint[128];
    tls_bind(server, endpoint, sizeof endpoint);
    connect_and_deliver(client, server, endpoint);
    unsigned before = zl_tls_resumed_total();
    ck_assert_int_eq(zlink_disconnect(client, endpoint), 0);
    tls_set_str(client, ZLINK_TLS_CA, tls_cert("other.pem"));
    void *monitor = tls_open_monitor(ctx, client, "inproc://trust-monitor");
    ck_assert_int_eq(zlink_connect(client, endpoint), 0);
    ck_assert_uint_eq(auth_failure_of(monitor), ZLINK_TLS_AUTH_CERT_UNTRUSTED);
    ck_assert_uint_eq(zl_tls_resumed_total(), before);
    zlink_close(monitor);
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
}
END_TEST

static Suite *resume_suite(void)
{
    Suite *s = suite_create("tls_resume");
    TCase *t = tcase_create("resume");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, reconnect_resumes);
    tcase_add_test(t, resumes_with_client_certificate);
    tcase_add_test(t, other_endpoint_not_resumed);
    tcase_add_test(t, new_server_at_same_endpoint_is_verified);
    tcase_add_test(t, changed_trust_is_not_resumed);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tls_fixture_main("test_tls_resume", resume_suite());
}
