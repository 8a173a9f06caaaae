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
#include "transport/tls_stream.h"
#if !defined(_WIN32)
#include <signal.h>
#endif

#define WAIT_MS 5000

static char certs_dir[512];

static const char *cert(const char *name)
{
    static char paths[4][600];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, 600, "%s/%s", certs_dir, name);
    return p;
}

static void set_str(void *s, int option, const char *value)
{
    ck_assert_int_eq(zlink_setsockopt(s, option, value, strlen(value)), 0);
}

static void *socket_of(void *ctx, int type)
{
    void *s = zlink_socket(ctx, type);
    ck_assert_ptr_nonnull(s);
    zl_test_set_int(s, ZLINK_LINGER, 0);
    zl_test_set_int(s, ZLINK_RCVTIMEO, WAIT_MS);
    zl_test_set_int(s, ZLINK_SNDTIMEO, WAIT_MS);
    return s;
}

static void *server_of(void *ctx, const char *chain, const char *key)
{
    void *s = socket_of(ctx, ZLINK_ROUTER);
    set_str(s, ZLINK_TLS_CERT, cert(chain));
    set_str(s, ZLINK_TLS_KEY, cert(key));
    return s;
}

static void *client_of(void *ctx)
{
    void *s = socket_of(ctx, ZLINK_DEALER);
    set_str(s, ZLINK_TLS_CA, cert("root.pem"));
    set_str(s, ZLINK_TLS_HOSTNAME, "localhost");
    return s;
}

static void bind_any(void *s, char *endpoint, size_t cap)
{
    ck_assert_int_eq(zlink_bind(s, "tls://127.0.0.1:*"), 0);
    size_t len = cap;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, endpoint, &len),
                     0);
}

/* Binds endpoint again once its last listener has let the port go. */
static void bind_again(void *s, const char *endpoint)
{
    uint64_t deadline = zl_test_now_ms() + WAIT_MS;
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
    bind_any(server, endpoint, sizeof endpoint);
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
    set_str(server, ZLINK_TLS_CA, cert("root.pem"));
    void *client = client_of(ctx);
    set_str(client, ZLINK_TLS_CERT, cert("client-chain.pem"));
    set_str(client, ZLINK_TLS_KEY, cert("client.key"));
    char endpoint[128];
    bind_any(server, endpoint, sizeof endpoint);
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
    bind_any(server, first, sizeof first);
    bind_any(server, second, sizeof second);
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
    uint64_t deadline = zl_test_now_ms() + WAIT_MS;
    while (zl_test_now_ms() < deadline) {
        uint8_t frame[6];
        char endpoint[256];
        if (zlink_recv(monitor, frame, sizeof frame, 0) != 6)
            continue;
        ck_assert_int_ge(zlink_recv(monitor, endpoint, sizeof endpoint, 0), 0);
        uint16_t event;
        uint32_t value;
        memcpy(&event, frame, 2);
        memcpy(&value, frame + 2, 4);
        if (event == ZLINK_EVENT_HANDSHAKE_FAILED_AUTH)
            return value;
    }
    ck_abort_msg("no HANDSHAKE_FAILED_AUTH");
    return 0;
}

static void *monitor_of(void *ctx, void *socket, const char *name)
{
    ck_assert_int_eq(zlink_socket_monitor(socket, name, ZLINK_EVENT_ALL), 0);
    void *m = zlink_socket(ctx, ZLINK_PAIR);
    ck_assert_ptr_nonnull(m);
    zl_test_set_int(m, ZLINK_LINGER, 0);
    zl_test_set_int(m, ZLINK_RCVTIMEO, 100);
    ck_assert_int_eq(zlink_connect(m, name), 0);
    return m;
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
    bind_any(server, endpoint, sizeof endpoint);
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
    void *monitor = monitor_of(ctx, client, "inproc://resume-monitor");
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
    bind_any(server, endpoint, sizeof endpoint);
    connect_and_deliver(client, server, endpoint);
    unsigned before = zl_tls_resumed_total();
    ck_assert_int_eq(zlink_disconnect(client, endpoint), 0);
    set_str(client, ZLINK_TLS_CA, cert("other.pem"));
    void *monitor = monitor_of(ctx, client, "inproc://trust-monitor");
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
#if defined(_WIN32)
    WSADATA wsa;
    WSAStartup(MAKEWORD(2, 2), &wsa);
#else
    signal(SIGPIPE, SIG_IGN);
#endif
    const char *dir = getenv("ZLINK_TLS_CERTS");
    if (!dir) {
        fprintf(stderr, "test_tls_resume: ZLINK_TLS_CERTS is not set (ctest "
                        "sets it after tests/tls/make_certs.sh)\n");
        return 1;
    }
    snprintf(certs_dir, sizeof certs_dir, "%s", dir);
    return zl_test_run(resume_suite());
}
