/* test_tls.c — tls://: every socket type over TLS, the ZLINK_TLS_* options
 * (files and PEM text), certificate failures reported with their reason,
 * and hostile input at the TLS layer as raw bytes (and as a real TLS
 * client misbehaving), each closing only its own connection. The
 * certificates come from tests/tls/make_certs.sh (openssl), run by ctest
 * before this suite into $ZLINK_TLS_CERTS. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>

#include "raw_socket.h"
#include "socket_testutil.h"
#include "testutil.h"
#include "tls_fixture.h"
#include "transport/tls_aes_gcm.h"
#include "transport/tls_internal.h"
#include "transport/tls_stream.h"

static int endpoint_port(const char *endpoint)
{
    return atoi(strrchr(endpoint, ':') + 1);
}

/* ---- exchanges ---- */

static void send_str(void *s, const char *text, int flags)
{
    int n = (int)strlen(text);
    ck_assert_int_eq(zlink_send(s, text, (size_t)n, flags), n);
}

static void recv_str(void *s, const char *want)
{
    char buf[256];
    int n = zlink_recv(s, buf, sizeof buf - 1, 0);
    ck_assert_msg(n >= 0, "recv failed: %s", zlink_strerror(zlink_errno()));
    buf[n < 0 ? 0 : n] = '\0';
    ck_assert_str_eq(buf, want);
}

/* A multipart message and a 1 MiB one from a to b; b may be a ROUTER
 * (whose first part is the routing id, returned in id). */
static void exchange(void *from, void *to, bool to_is_router, char *id,
                     size_t *id_len)
{
    send_str(from, "part one", ZLINK_SNDMORE);
    send_str(from, "part two", 0);
    size_t big = 1024 * 1024;
    char *body = malloc(big);
    char *got = malloc(big);
    ck_assert(body && got);
    for (size_t i = 0; i < big; i++)
        body[i] = (char)(i * 7 + 3);
    ck_assert_int_eq(zlink_send(from, body, big, 0), (int)big);
    if (to_is_router) {
        int n = zlink_recv(to, id, 255, 0);
        ck_assert_int_gt(n, 0);
        *id_len = (size_t)n;
    }
    recv_str(to, "part one");
    int more = 0;
    size_t more_len = sizeof more;
    zlink_getsockopt(to, ZLINK_RCVMORE, &more, &more_len);
    ck_assert_int_eq(more, 1);
    recv_str(to, "part two");
    if (to_is_router)
        ck_assert_int_gt(zlink_recv(to, id, 255, 0), 0);
    ck_assert_int_eq(zlink_recv(to, got, big, 0), (int)big);
    ck_assert(memcmp(body, got, big) == 0);
    free(body);
    free(got);
}

/* ---- the transport ---- */

START_TEST(has_tls)
{
    ck_assert_int_eq(zlink_has("tls"), 1);
}
END_TEST

START_TEST(options_round_trip)
{
    void *ctx = zlink_ctx_new();
    void *s = tls_socket(ctx, ZLINK_DEALER);
    char buf[64];
    size_t len = sizeof buf;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_TLS_CERT, buf, &len), 0);
    ck_assert_int_eq((int)len, 1);
    ck_assert_str_eq(buf, "");
    int v = -1;
    size_t vlen = sizeof v;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_TLS_VERIFY, &v, &vlen), 0);
    ck_assert_int_eq(v, 1);
    ck_assert_int_eq(
        zlink_getsockopt(s, ZLINK_TLS_REQUIRE_CLIENT_CERT, &v, &vlen), 0);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_TLS_TRUST_SYSTEM, &v, &vlen), 0);
    ck_assert_int_eq(v, 0);
    int options[] = {ZLINK_TLS_CERT,         ZLINK_TLS_KEY,
                     ZLINK_TLS_KEY_PASSWORD, ZLINK_TLS_CA,
                     ZLINK_TLS_CERT_PEM,     ZLINK_TLS_KEY_PEM,
                     ZLINK_TLS_CA_PEM,       ZLINK_TLS_HOSTNAME};
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        char value[32];
        snprintf(value, sizeof value, "value-%d", options[i]);
        tls_set_str(s, options[i], value);
        len = sizeof buf;
        ck_assert_int_eq(zlink_getsockopt(s, options[i], buf, &len), 0);
        ck_assert_str_eq(buf, value);
        ck_assert_int_eq((int)len, (int)strlen(value) + 1);
        len = 3; /* too small */
        ck_assert_int_eq(zlink_getsockopt(s, options[i], buf, &len), -1);
        ck_assert_int_eq(zlink_errno(), EINVAL);
    }
    /* With its NUL, as C callers often pass it; empty unsets. */
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_TLS_HOSTNAME, "h", 2), 0);
    len = sizeof buf;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_TLS_HOSTNAME, buf, &len), 0);
    ck_assert_str_eq(buf, "h");
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_TLS_HOSTNAME, "", 0), 0);
    len = sizeof buf;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_TLS_HOSTNAME, buf, &len), 0);
    ck_assert_str_eq(buf, "");
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_TLS_HOSTNAME, "a\0b", 3), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    v = 2;
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_TLS_VERIFY, &v, sizeof v), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    zl_test_set_int(s, ZLINK_TLS_VERIFY, 0);
    vlen = sizeof v;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_TLS_VERIFY, &v, &vlen), 0);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(
        zlink_setsockopt(s, ZLINK_TLS_TRUST_SYSTEM, &v, sizeof v - 1), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    zl_test_set_int(s, ZLINK_TLS_TRUST_SYSTEM, 1);
    vlen = sizeof v;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_TLS_TRUST_SYSTEM, &v, &vlen), 0);
    ck_assert_int_eq(v, 1);
    zlink_close(s);
    zlink_ctx_term(ctx);
}
END_TEST

/* Unusable settings fail bind and connect, never a connection later. */
START_TEST(bad_settings_fail_bind_and_connect)
{
    void *ctx = zlink_ctx_new();
    void *s = tls_socket(ctx, ZLINK_ROUTER);
    /* A server needs a certificate. */
    ck_assert_int_eq(zlink_bind(s, "tls://127.0.0.1:*"), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    tls_set_str(s, ZLINK_TLS_CERT, tls_cert("missing.pem"));
    tls_set_str(s, ZLINK_TLS_KEY, tls_cert("server.key"));
    ck_assert_int_eq(zlink_bind(s, "tls://127.0.0.1:*"), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    /* A key that does not parse (a certificate given as the key). */
    tls_set_str(s, ZLINK_TLS_CERT, tls_cert("server.pem"));
    tls_set_str(s, ZLINK_TLS_KEY, tls_cert("server.pem"));
    ck_assert_int_eq(zlink_bind(s, "tls://127.0.0.1:*"), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    /* An encrypted key needs its password. */
    tls_set_str(s, ZLINK_TLS_KEY, tls_cert("server-enc.key"));
    ck_assert_int_eq(zlink_bind(s, "tls://127.0.0.1:*"), -1);
    tls_set_str(s, ZLINK_TLS_KEY_PASSWORD, "wrong");
    ck_assert_int_eq(zlink_bind(s, "tls://127.0.0.1:*"), -1);
    tls_set_str(s, ZLINK_TLS_KEY_PASSWORD, "secret");
    ck_assert_int_eq(zlink_bind(s, "tls://127.0.0.1:*"), 0);
    void *c = tls_socket(ctx, ZLINK_DEALER);
    tls_set_str(c, ZLINK_TLS_CA, tls_cert("missing.pem"));
    ck_assert_int_eq(zlink_connect(c, "tls://127.0.0.1:5555"), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    zlink_close(c);
    zlink_close(s);
    zlink_ctx_term(ctx);
}
END_TEST

START_TEST(dealer_router_multipart_and_large)
{
    tls_pair p;
    tls_pair_open(&p, ZLINK_ROUTER, ZLINK_DEALER);
    char id[256];
    size_t id_len = 0;
    exchange(p.client, p.server, true, id, &id_len);
    /* And back, through the routing id: multipart, then 1 MiB. */
    ck_assert_int_eq(zlink_send(p.server, id, id_len, ZLINK_SNDMORE),
                     (int)id_len);
    send_str(p.server, "back one", ZLINK_SNDMORE);
    send_str(p.server, "back two", 0);
    size_t big = 1024 * 1024;
    char *body = calloc(1, big), *got = malloc(big);
    ck_assert(body && got);
    body[big - 1] = 'z';
    ck_assert_int_eq(zlink_send(p.server, id, id_len, ZLINK_SNDMORE),
                     (int)id_len);
    ck_assert_int_eq(zlink_send(p.server, body, big, 0), (int)big);
    recv_str(p.client, "back one");
    recv_str(p.client, "back two");
    ck_assert_int_eq(zlink_recv(p.client, got, big, 0), (int)big);
    ck_assert(memcmp(body, got, big) == 0);
    free(body);
    free(got);
    tls_pair_close(&p);
}
END_TEST

/* Every pattern over tls (bound side first in each pair). */
START_TEST(every_socket_type)
{
    static const int pairs[][2] = {
        {ZLINK_PAIR, ZLINK_PAIR},     {ZLINK_ROUTER, ZLINK_DEALER},
        {ZLINK_DEALER, ZLINK_DEALER}, {ZLINK_DEALER, ZLINK_ROUTER},
        {ZLINK_PUB, ZLINK_SUB},       {ZLINK_XPUB, ZLINK_XSUB},
        {ZLINK_PUB, ZLINK_XSUB},      {ZLINK_XPUB, ZLINK_SUB},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        tls_pair p;
        tls_pair_open(&p, pairs[i][0], pairs[i][1]);
        int server = pairs[i][0], client = pairs[i][1];
        if (client == ZLINK_SUB)
            ck_assert_int_eq(zlink_setsockopt(p.client, ZLINK_SUBSCRIBE, "", 0),
                             0);
        if (client == ZLINK_XSUB) {
            uint8_t sub = 1;
            ck_assert_int_eq(zlink_send(p.client, &sub, 1, 0), 1);
        }
        if (server == ZLINK_PUB || server == ZLINK_XPUB) {
            if (server == ZLINK_XPUB) {
                char sub[8];
                ck_assert_int_eq(zlink_recv(p.server, sub, sizeof sub, 0), 1);
            }
            /* Until the subscription has arrived, messages are dropped. */
            zl_test_set_int(p.client, ZLINK_RCVTIMEO, 50);
            char buf[16];
            int n = -1;
            for (int tries = 0; tries < 100 && n < 0; tries++) {
                send_str(p.server, "hello", 0);
                n = zlink_recv(p.client, buf, sizeof buf, 0);
            }
            ck_assert_int_eq(n, 5);
            /* Every "hello" still on its way comes before this one. */
            zl_test_set_int(p.client, ZLINK_RCVTIMEO, TLS_WAIT_MS);
            send_str(p.server, "sync", 0);
            do {
                n = zlink_recv(p.client, buf, sizeof buf - 1, 0);
                ck_assert_int_ge(n, 0);
                buf[n < 0 ? 0 : n] = '\0';
            } while (strcmp(buf, "sync") != 0);
            exchange(p.server, p.client, false, NULL, NULL);
        } else if (server == ZLINK_ROUTER) {
            char id[256];
            size_t id_len;
            exchange(p.client, p.server, true, id, &id_len);
        } else if (client == ZLINK_ROUTER) {
            /* The ROUTER learns the DEALER's id from its first message. */
            exchange(p.server, p.client, true, (char[256]){0}, &(size_t){0});
        } else {
            exchange(p.client, p.server, false, NULL, NULL);
            exchange(p.server, p.client, false, NULL, NULL);
        }
        tls_pair_close(&p);
    }
}
END_TEST

/* Many small messages in both directions: batches become records. */
START_TEST(many_small_messages)
{
    tls_pair p;
    tls_pair_open(&p, ZLINK_PAIR, ZLINK_PAIR);
    char buf[64];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(buf, sizeof buf, "message %d", i);
        ck_assert_int_eq(zlink_send(p.client, buf, (size_t)n, 0), n);
    }
    for (int i = 0; i < 20000; i++) {
        char want[64];
        snprintf(want, sizeof want, "message %d", i);
        recv_str(p.server, want);
    }
    tls_pair_close(&p);
}
END_TEST

START_TEST(pem_in_memory)
{
    void *ctx = zlink_ctx_new();
    void *server = tls_socket(ctx, ZLINK_PAIR);
    void *client = tls_socket(ctx, ZLINK_PAIR);
    char *chain = tls_read_cert("server-chain.pem");
    char *key = tls_read_cert("server.key");
    char *ca = tls_read_cert("root.pem");
    char *client_chain = tls_read_cert("client-chain.pem");
    char *client_key = tls_read_cert("client.key");
    tls_set_str(server, ZLINK_TLS_CERT_PEM, chain);
    tls_set_str(server, ZLINK_TLS_KEY_PEM, key);
    tls_set_str(server, ZLINK_TLS_CA_PEM, ca);
    zl_test_set_int(server, ZLINK_TLS_REQUIRE_CLIENT_CERT, 1);
    tls_set_str(client, ZLINK_TLS_CERT_PEM, client_chain);
    tls_set_str(client, ZLINK_TLS_KEY_PEM, client_key);
    tls_set_str(client, ZLINK_TLS_CA_PEM, ca);
    tls_set_str(client, ZLINK_TLS_HOSTNAME, "localhost");
    char endpoint[128];
    tls_bind(server, endpoint, sizeof endpoint);
    ck_assert_int_eq(zlink_connect(client, endpoint), 0);
    exchange(client, server, false, NULL, NULL);
    exchange(server, client, false, NULL, NULL);
    free(chain);
    free(key);
    free(ca);
    free(client_chain);
    free(client_key);
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
}
END_TEST

/* Client certificates from files, an encrypted server key, and the
 * endpoint's own host name checked ("localhost"). */
START_TEST(client_certificate_and_encrypted_key)
{
    void *ctx = zlink_ctx_new();
    void *server = tls_socket(ctx, ZLINK_ROUTER);
    void *client = tls_socket(ctx, ZLINK_DEALER);
    tls_set_str(server, ZLINK_TLS_CERT, tls_cert("server-chain.pem"));
    tls_set_str(server, ZLINK_TLS_KEY, tls_cert("server-enc.key"));
    tls_set_str(server, ZLINK_TLS_KEY_PASSWORD, "secret");
    tls_set_str(server, ZLINK_TLS_CA, tls_cert("root.pem"));
    zl_test_set_int(server, ZLINK_TLS_REQUIRE_CLIENT_CERT, 1);
    tls_server_identity(client, "client-chain.pem", "client.key");
    tls_set_str(client, ZLINK_TLS_CA, tls_cert("root.pem"));
    ck_assert_int_eq(zlink_bind(server, "tls://localhost:*"), 0);
    char endpoint[128];
    size_t len = sizeof endpoint;
    ck_assert_int_eq(
        zlink_getsockopt(server, ZLINK_LAST_ENDPOINT, endpoint, &len), 0);
    char by_name[160];
    snprintf(by_name, sizeof by_name, "tls://localhost:%d",
             endpoint_port(endpoint));
    ck_assert_int_eq(zlink_connect(client, by_name), 0);
    char id[256];
    size_t id_len;
    exchange(client, server, true, id, &id_len);
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
}
END_TEST

START_TEST(unbind_and_disconnect)
{
    tls_pair p;
    tls_pair_open(&p, ZLINK_ROUTER, ZLINK_DEALER);
    send_str(p.client, "one", 0);
    char id[256];
    ck_assert_int_gt(zlink_recv(p.server, id, sizeof id, 0), 0);
    recv_str(p.server, "one");
    ck_assert_int_eq(zlink_disconnect(p.client, p.endpoint), 0);
    ck_assert_int_eq(zlink_unbind(p.server, p.endpoint), 0);
    ck_assert_int_eq(zlink_unbind(p.server, p.endpoint), -1);
    ck_assert_int_eq(zlink_errno(), ENOENT);
    /* The port is freed (by the I/O thread): bind it once more. */
    uint64_t deadline = zl_test_now_ms() + TLS_WAIT_MS;
    while (zlink_bind(p.server, p.endpoint) != 0) {
        ck_assert_msg(zl_test_now_ms() < deadline, "port never freed");
        zl_test_sleep_ms(10);
    }
    ck_assert_int_eq(zlink_connect(p.client, p.endpoint), 0);
    send_str(p.client, "two", 0);
    ck_assert_int_gt(zlink_recv(p.server, id, sizeof id, 0), 0);
    recv_str(p.server, "two");
    tls_pair_close(&p);
}
END_TEST

/* As for tcp: another spelling of the host names a tls bind or connect. */
START_TEST(unbind_and_disconnect_by_another_spelling)
{
    void *ctx = zlink_ctx_new();
    void *s = tls_socket(ctx, ZLINK_DEALER);
    tls_server_identity(s, "server-chain.pem", "server.key");
    tls_client_trust(s, "root.pem");
    char ep[128], other[160];
    tls_bind(s, ep, sizeof ep);
    snprintf(other, sizeof other, "tls://localhost:%s", strrchr(ep, ':') + 1);
    ck_assert_int_eq(zlink_unbind(s, other), 0);
    ck_assert_int_eq(zlink_unbind(s, ep), -1);
    ck_assert_int_eq(zlink_errno(), ENOENT);
    ck_assert_int_eq(zlink_connect(s, "tls://127.0.0.1:1"), 0);
    ck_assert_int_eq(zlink_disconnect(s, "tls://localhost:1"), 0);
    ck_assert_int_eq(zlink_disconnect(s, "tls://127.0.0.1:1"), -1);
    ck_assert_int_eq(zlink_errno(), ENOENT);
    zlink_close(s);
    zlink_ctx_term(ctx);
}
END_TEST

/* ---- certificate failures ---- */

typedef struct failure_case {
    const char *name;
    const char *server_chain, *server_key; /* server's certificate */
    const char *client_ca;                 /* NULL: none set */
    const char *client_chain, *client_key; /* NULL: no client certificate */
    int require_client_cert;
    bool client_side; /* the client reports; else the server does */
    int event;
    uint32_t value;
} failure_case;

static const failure_case failures[] = {
    {"self-signed server", "selfsigned.pem", "selfsigned.key", "root.pem", NULL,
     NULL, 0, true, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
     ZLINK_TLS_AUTH_CERT_UNTRUSTED},
    {"chain from another CA", "server-chain.pem", "server.key", "other.pem",
     NULL, NULL, 0, true, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
     ZLINK_TLS_AUTH_CERT_UNTRUSTED},
    {"chain without its intermediate", "server.pem", "server.key", "root.pem",
     NULL, NULL, 0, true, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
     ZLINK_TLS_AUTH_CERT_UNTRUSTED},
    {"wrong host name", "wronghost-chain.pem", "wronghost.key", "root.pem",
     NULL, NULL, 0, true, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
     ZLINK_TLS_AUTH_HOSTNAME_MISMATCH},
    {"expired", "expired-chain.pem", "expired.key", "root.pem", NULL, NULL, 0,
     true, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, ZLINK_TLS_AUTH_CERT_EXPIRED},
    {"missing client certificate", "server-chain.pem", "server.key", "root.pem",
     NULL, NULL, 1, false, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
     ZLINK_TLS_AUTH_NO_PEER_CERT},
    {"self-signed client", "server-chain.pem", "server.key", "root.pem",
     "selfsigned.pem", "selfsigned.key", 1, false,
     ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, ZLINK_TLS_AUTH_CERT_UNTRUSTED},
#if defined(MBEDTLS_SSL_PROTO_TLS1_3) && MBEDTLS_VERSION_NUMBER >= 0x03060000
    /* mbedTLS 3.6 speaks TLS 1.3 to itself, where the client's handshake
     * is over before the server checks the client's certificate, and an
     * mbedTLS client cannot read an mbedTLS server's alert at that point
     * (it reports a bad MAC): it only learns that the connection failed. */
    {"client told of its rejection", "server-chain.pem", "server.key",
     "root.pem", "selfsigned.pem", "selfsigned.key", 1, true,
     ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
     ZLINK_PROTOCOL_ERROR_TLS_BAD_RECORD},
#else
    {"client told of its rejection", "server-chain.pem", "server.key",
     "root.pem", "selfsigned.pem", "selfsigned.key", 1, true,
     ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, ZLINK_TLS_AUTH_PEER_REJECTED},
#endif
};

static void run_failure(const failure_case *c)
{
    void *ctx = zlink_ctx_new();
    void *server = tls_socket(ctx, ZLINK_ROUTER);
    void *client = tls_socket(ctx, ZLINK_DEALER);
    tls_server_identity(server, c->server_chain, c->server_key);
    if (c->require_client_cert) {
        zl_test_set_int(server, ZLINK_TLS_REQUIRE_CLIENT_CERT, 1);
        tls_set_str(server, ZLINK_TLS_CA, tls_cert("root.pem"));
    }
    tls_client_trust(client, c->client_ca);
    if (c->client_chain)
        tls_server_identity(client, c->client_chain, c->client_key);
    void *monitor = tls_open_monitor(ctx, c->client_side ? client : server,
                                     "inproc://failure-monitor");
    char endpoint[128];
    tls_bind(server, endpoint, sizeof endpoint);
    ck_assert_int_eq(zlink_connect(client, endpoint), 0);
    uint32_t value = 0;
    ck_assert_msg(tls_wait_event(monitor, c->event, &value),
                  "%s: no event 0x%x", c->name, c->event);
    ck_assert_msg(value == c->value, "%s: value 0x%x, want 0x%x", c->name,
                  value, c->value);
    /* Nothing ever crosses. */
    zl_test_set_int(client, ZLINK_SNDTIMEO, 0);
    zlink_send(client, "x", 1, ZLINK_DONTWAIT);
    zl_test_set_int(server, ZLINK_RCVTIMEO, 200);
    char buf[16];
    ck_assert_int_eq(zlink_recv(server, buf, sizeof buf, 0), -1);
    zlink_close(monitor);
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
}

START_TEST(certificate_failures)
{
    run_failure(&failures[_i]);
}
END_TEST

/* No CA given: the system store, which does not know our root; never an
 * unverified connection. Without a store, connect fails outright. */
START_TEST(no_ca_uses_system_store)
{
    void *ctx = zlink_ctx_new();
    void *server = tls_socket(ctx, ZLINK_ROUTER);
    void *client = tls_socket(ctx, ZLINK_DEALER);
    tls_server_identity(server, "server-chain.pem", "server.key");
    tls_set_str(client, ZLINK_TLS_HOSTNAME, "localhost");
    void *monitor = tls_open_monitor(ctx, client, "inproc://store-monitor");
    char endpoint[128];
    tls_bind(server, endpoint, sizeof endpoint);
    if (zlink_connect(client, endpoint) == 0) {
        tls_expect_event(monitor, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
                         ZLINK_TLS_AUTH_CERT_UNTRUSTED);
    } else {
        ck_assert_int_eq(zlink_errno(), EINVAL);
        fprintf(stderr, "no_ca_uses_system_store: no system trust store\n");
    }
    /* VERIFY 0 is the one way to accept any server. */
    void *trusting = tls_socket(ctx, ZLINK_DEALER);
    zl_test_set_int(trusting, ZLINK_TLS_VERIFY, 0);
    ck_assert_int_eq(zlink_connect(trusting, endpoint), 0);
    send_str(trusting, "anyway", 0);
    char id[256];
    ck_assert_int_gt(zlink_recv(server, id, sizeof id, 0), 0);
    recv_str(server, "anyway");
    zlink_close(trusting);
    zlink_close(monitor);
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
}
END_TEST

/* A refused certificate does not end the connect: the client retries, as
 * after a refused connect (and as libzmq's wss), and reaches the server
 * once its certificate is one the client trusts. The endpoint stays
 * the client's to disconnect. */
START_TEST(client_retries_after_refusing_a_certificate)
{
    void *ctx = zlink_ctx_new();
    void *untrusted = tls_socket(ctx, ZLINK_ROUTER);
    tls_server_identity(untrusted, "selfsigned.pem", "selfsigned.key");
    void *client = tls_socket(ctx, ZLINK_DEALER);
    tls_client_trust(client, "root.pem");
    void *monitor = tls_open_monitor(ctx, client, "inproc://retry-monitor");
    char endpoint[128];
    tls_bind(untrusted, endpoint, sizeof endpoint);
    ck_assert_int_eq(zlink_connect(client, endpoint), 0);
    tls_expect_event(monitor, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
                     ZLINK_TLS_AUTH_CERT_UNTRUSTED);
    uint32_t ivl = 0;
    ck_assert_msg(tls_wait_event(monitor, ZLINK_EVENT_CONNECT_RETRIED, &ivl),
                  "no retry after the refused certificate");

    zlink_close(untrusted);
    void *server = tls_socket(ctx, ZLINK_ROUTER);
    tls_server_identity(server, "server-chain.pem", "server.key");
    zt_bind_when_free(server, endpoint, TLS_WAIT_MS);
    send_str(client, "renewed", 0);
    char id[256];
    ck_assert_int_gt(zlink_recv(server, id, sizeof id, 0), 0);
    recv_str(server, "renewed");
    ck_assert_int_eq(zlink_disconnect(client, endpoint), 0);
    zlink_close(monitor);
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
}
END_TEST

/* A plaintext ZMTP peer on a tls endpoint, and a TLS client on a tcp one. */
START_TEST(plaintext_and_tls_mixed)
{
    void *ctx = zlink_ctx_new();
    void *server = tls_socket(ctx, ZLINK_ROUTER);
    tls_server_identity(server, "server-chain.pem", "server.key");
    void *server_monitor = tls_open_monitor(ctx, server, "inproc://tls-server");
    char endpoint[128];
    tls_bind(server, endpoint, sizeof endpoint);
    void *plain = tls_socket(ctx, ZLINK_DEALER);
    char tcp[160];
    snprintf(tcp, sizeof tcp, "tcp://127.0.0.1:%d", endpoint_port(endpoint));
    ck_assert_int_eq(zlink_connect(plain, tcp), 0);
    tls_expect_event(server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                     ZLINK_PROTOCOL_ERROR_TLS_NOT_TLS);

    void *tcp_server = tls_socket(ctx, ZLINK_ROUTER);
    void *tcp_monitor =
        tls_open_monitor(ctx, tcp_server, "inproc://tcp-server");
    ck_assert_int_eq(zlink_bind(tcp_server, "tcp://127.0.0.1:*"), 0);
    size_t len = sizeof tcp;
    zlink_getsockopt(tcp_server, ZLINK_LAST_ENDPOINT, tcp, &len);
    void *client = tls_socket(ctx, ZLINK_DEALER);
    tls_client_trust(client, "root.pem");
    void *client_monitor = tls_open_monitor(ctx, client, "inproc://tls-client");
    char tls[160];
    snprintf(tls, sizeof tls, "tls://127.0.0.1:%d", endpoint_port(tcp));
    ck_assert_int_eq(zlink_connect(client, tls), 0);
    tls_expect_event(tcp_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                     ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
    tls_expect_event(client_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                     ZLINK_PROTOCOL_ERROR_TLS_NOT_TLS);
    zlink_close(client_monitor);
    zlink_close(tcp_monitor);
    zlink_close(server_monitor);
    zlink_close(client);
    zlink_close(tcp_server);
    zlink_close(plain);
    zlink_close(server);
    zlink_ctx_term(ctx);
}
END_TEST

/* ---- hostile input ---- */

/* A tls ROUTER with a good DEALER connected, watched by a monitor. */
typedef struct hostile {
    void *ctx, *router, *dealer, *monitor;
    char endpoint[128];
    int port, checks;
} hostile;

static void hostile_open(hostile *h, int handshake_ivl)
{
    h->ctx = zlink_ctx_new();
    h->router = tls_socket(h->ctx, ZLINK_ROUTER);
    tls_server_identity(h->router, "server-chain.pem", "server.key");
    if (handshake_ivl)
        zl_test_set_int(h->router, ZLINK_HANDSHAKE_IVL, handshake_ivl);
    h->monitor = tls_open_monitor(h->ctx, h->router, "inproc://hostile");
    tls_bind(h->router, h->endpoint, sizeof h->endpoint);
    h->port = endpoint_port(h->endpoint);
    h->dealer = tls_socket(h->ctx, ZLINK_DEALER);
    tls_client_trust(h->dealer, "root.pem");
    ck_assert_int_eq(zlink_connect(h->dealer, h->endpoint), 0);
    h->checks = 0;
}

/* The good connection still carries a round trip. */
static void check_good_peer(hostile *h)
{
    char text[32], id[256];
    snprintf(text, sizeof text, "good-%d", h->checks++);
    send_str(h->dealer, text, 0);
    int id_len = zlink_recv(h->router, id, sizeof id, 0);
    ck_assert_int_gt(id_len, 0);
    recv_str(h->router, text);
    ck_assert_int_eq(zlink_send(h->router, id, (size_t)id_len, ZLINK_SNDMORE),
                     id_len);
    send_str(h->router, text, 0);
    recv_str(h->dealer, text);
}

static void hostile_close(hostile *h)
{
    zlink_close(h->monitor);
    zlink_close(h->dealer);
    zlink_close(h->router);
    zlink_ctx_term(h->ctx);
}

/* Sends bytes as a raw peer; expects the server to close the connection
 * and report event/value (value ignored for 0). */
static void raw_case(hostile *h, const void *bytes, size_t len, bool keep_open,
                     int event, uint32_t value)
{
    check_good_peer(h);
    raw_fd fd = raw_connect(h->port);
    raw_send(fd, bytes, len);
    if (!keep_open)
        raw_shutdown_send(fd);
    tls_expect_event(h->monitor, event, value);
    ck_assert(raw_closed_by_peer(fd, TLS_WAIT_MS));
    raw_close(fd);
    check_good_peer(h);
}

START_TEST(raw_garbage)
{
    hostile h;
    hostile_open(&h, 0);
    static const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    raw_case(&h, http, sizeof http - 1, true,
             ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
             ZLINK_PROTOCOL_ERROR_TLS_NOT_TLS);
    /* A handshake record whose contents are junk. */
    uint8_t junk[5 + 64] = {0x16, 0x03, 0x01, 0x00, 64};
    for (int i = 5; i < (int)sizeof junk; i++)
        junk[i] = (uint8_t)(i * 37);
    raw_case(&h, junk, sizeof junk, true, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
             ZLINK_PROTOCOL_ERROR_TLS_HANDSHAKE);
    /* A ZMTP greeting, as a plaintext libzmq peer sends it. */
    uint8_t greeting[10] = {0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0x7f};
    raw_case(&h, greeting, sizeof greeting, true,
             ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
             ZLINK_PROTOCOL_ERROR_TLS_NOT_TLS);
    hostile_close(&h);
}
END_TEST

START_TEST(raw_oversized_record)
{
    hostile h;
    hostile_open(&h, 0);
    uint8_t header[5] = {0x16, 0x03, 0x03, 0xff, 0xff};
    raw_case(&h, header, sizeof header, true,
             ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
             ZLINK_PROTOCOL_ERROR_TLS_OVERSIZED_RECORD);
    hostile_close(&h);
}
END_TEST

START_TEST(raw_truncated_record)
{
    hostile h;
    hostile_open(&h, 0);
    uint8_t part[5 + 20] = {0x16, 0x03, 0x01, 0x01, 0x00, 0x01};
    raw_case(&h, part, sizeof part, false,
             ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
             ZLINK_PROTOCOL_ERROR_TLS_TRUNCATED);
    /* Cut inside the header itself. */
    raw_case(&h, part, 3, false, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
             ZLINK_PROTOCOL_ERROR_TLS_TRUNCATED);
    hostile_close(&h);
}
END_TEST

/* Half a ClientHello, then silence: HANDSHAKE_IVL frees the connection. */
START_TEST(raw_stall_mid_handshake)
{
    hostile h;
    hostile_open(&h, 300);
    uint8_t part[5 + 20] = {0x16, 0x03, 0x01, 0x01, 0x00, 0x01};
    /* The value is the errno, as libzmq's: the timer's ETIMEDOUT. */
    raw_case(&h, part, sizeof part, true,
             ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL, ETIMEDOUT);
    hostile_close(&h);
}
END_TEST

/* Connections that send nothing hold neither mbedTLS's record buffers nor
 * a read buffer: the server takes them once the peer speaks. Before, each
 * such connection held some 100 KB for all of HANDSHAKE_IVL. */
#define SILENT_PEERS 100

static size_t resident_bytes(void)
{
    size_t bytes = 0;
#if defined(__linux__)
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size, resident;
    if (f && fscanf(f, "%lu %lu", &size, &resident) == 2)
        bytes = (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
    if (f)
        fclose(f);
#endif
    return bytes;
}

START_TEST(silent_peers_cost_little)
{
    hostile h;
    hostile_open(&h, 0);
    check_good_peer(&h);
    unsigned setups = zl_tls_setups_total();
    size_t before = resident_bytes();
    raw_fd fds[SILENT_PEERS];
    for (int i = 0; i < SILENT_PEERS; i++)
        fds[i] = raw_connect(h.port);
    ck_assert(zl_test_wait_event(h.monitor, ZLINK_EVENT_ACCEPTED, SILENT_PEERS,
                                 TLS_WAIT_MS));
    check_good_peer(&h); /* and the I/O thread has seen them all */
    size_t after = resident_bytes();
    size_t growth = after > before ? after - before : 0;
    fprintf(stderr, "%d silent tls peers: RSS +%zu KiB\n", SILENT_PEERS,
            growth >> 10);
    ck_assert_uint_eq(zl_tls_setups_total(), setups);
#if defined(__linux__) && !defined(ZL_TEST_UNDER_SANITIZER)
    ck_assert_msg(growth < SILENT_PEERS * 24 * 1024,
                  "%d silent peers took %zu KiB", SILENT_PEERS, growth >> 10);
#endif
    for (int i = 0; i < SILENT_PEERS; i++)
        raw_close(fds[i]);
    hostile_close(&h);
}
END_TEST

/* ---- a real TLS client that misbehaves after its handshake ---- */

static int raw_bio_send(void *ctx, const unsigned char *buf, size_t len)
{
    raw_fd fd = *(raw_fd *)ctx;
    int n = (int)send(fd, (const char *)buf, (int)len, 0);
    return n > 0 ? n : MBEDTLS_ERR_SSL_INTERNAL_ERROR;
}

static int raw_bio_recv(void *ctx, unsigned char *buf, size_t len)
{
    raw_fd fd = *(raw_fd *)ctx;
    if (!raw_readable(fd, TLS_WAIT_MS))
        return MBEDTLS_ERR_SSL_TIMEOUT;
    int n = (int)recv(fd, (char *)buf, (int)len, 0);
    return n > 0 ? n : MBEDTLS_ERR_SSL_CONN_EOF;
}

typedef struct raw_tls {
    raw_fd fd;
    mbedtls_ssl_config conf;
    mbedtls_ssl_context ssl;
} raw_tls;

/* Whether two zlink peers speak TLS 1.2, whose AES-GCM records zlink seals
 * and opens itself where the CPU has AES-NI; with mbedTLS 3.x they speak
 * TLS 1.3, whose records mbedTLS keeps. */
static bool zlink_peers_use_own_records(void)
{
#if defined(MBEDTLS_SSL_PROTO_TLS1_3) && MBEDTLS_VERSION_NUMBER >= 0x03020000
    return false;
#else
    return zl_aes_gcm_accelerated();
#endif
}

/* The suites a misbehaving client offers, by the loop's index: AES-GCM,
 * whose records zlink opens itself after the handshake (tls_record.h), and
 * ChaCha20-Poly1305, whose records mbedTLS opens. */
static const int gcm_suites[] = {
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, 0};
static const int chacha_suites[] = {
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256, 0};
static const int *const raw_suites[] = {gcm_suites, chacha_suites};
#define RAW_SUITES 2

/* A blocking mbedTLS client on a raw socket offering raw_suites[suites],
 * handshake done. */
static void raw_tls_open(raw_tls *r, int port, int suites)
{
    r->fd = raw_connect(port);
    mbedtls_ssl_config_init(&r->conf);
    mbedtls_ssl_init(&r->ssl);
    ck_assert_int_eq(mbedtls_ssl_config_defaults(&r->conf,
                                                 MBEDTLS_SSL_IS_CLIENT,
                                                 MBEDTLS_SSL_TRANSPORT_STREAM,
                                                 MBEDTLS_SSL_PRESET_DEFAULT),
                     0);
    mbedtls_ssl_conf_rng(&r->conf, zl_tls_random, NULL);
    mbedtls_ssl_conf_authmode(&r->conf, MBEDTLS_SSL_VERIFY_NONE);
#if defined(MBEDTLS_SSL_RENEGOTIATION)
    mbedtls_ssl_conf_renegotiation(&r->conf, MBEDTLS_SSL_RENEGOTIATION_ENABLED);
#endif
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
    mbedtls_ssl_conf_max_tls_version(&r->conf, MBEDTLS_SSL_VERSION_TLS1_2);
#endif
    mbedtls_ssl_conf_ciphersuites(&r->conf, raw_suites[suites]);
    ck_assert_int_eq(mbedtls_ssl_setup(&r->ssl, &r->conf), 0);
    mbedtls_ssl_set_bio(&r->ssl, &r->fd, raw_bio_send, raw_bio_recv, NULL);
    unsigned own_before = zl_tls_own_records_total();
    int rc = mbedtls_ssl_handshake(&r->ssl);
    ck_assert_msg(rc == 0, "test client handshake: -0x%x", -rc);
    /* The server's side of the handshake ended before the client's. */
    ck_assert_uint_eq(zl_tls_own_records_total() - own_before,
                      raw_suites[suites] == gcm_suites ? 1u : 0u);
}

static void raw_tls_close(raw_tls *r)
{
    mbedtls_ssl_free(&r->ssl);
    mbedtls_ssl_config_free(&r->conf);
    raw_close(r->fd);
}

/* A STREAM socket over tls: a TLS client that speaks no ZMTP (mbedTLS
 * here) is announced, its plaintext comes as it is, and ours goes back
 * inside the session. */
START_TEST(stream_socket_over_tls)
{
    void *ctx = zlink_ctx_new();
    void *server = tls_socket(ctx, ZLINK_STREAM);
    tls_server_identity(server, "server-chain.pem", "server.key");
    char endpoint[64];
    tls_bind(server, endpoint, sizeof endpoint);
    raw_tls r;
    raw_tls_open(&r, endpoint_port(endpoint), 0);
    char id[256], buf[64];
    int id_len = zlink_recv(server, id, sizeof id, 0);
    ck_assert_int_eq(id_len, 5);
    ck_assert_int_eq(zlink_recv(server, buf, sizeof buf, 0), 0);
    ck_assert_int_eq(mbedtls_ssl_write(&r.ssl, (const unsigned char *)"hi", 2),
                     2);
    ck_assert_int_eq(zlink_recv(server, id, sizeof id, 0), id_len);
    ck_assert_int_eq(zlink_recv(server, buf, sizeof buf, 0), 2);
    ck_assert_int_eq(memcmp(buf, "hi", 2), 0);
    ck_assert_int_eq(zlink_send(server, id, (size_t)id_len, ZLINK_SNDMORE),
                     id_len);
    ck_assert_int_eq(zlink_send(server, "there", 5, 0), 5);
    ck_assert_int_eq(mbedtls_ssl_read(&r.ssl, (unsigned char *)buf, sizeof buf),
                     5);
    ck_assert_int_eq(memcmp(buf, "there", 5), 0);
    raw_tls_close(&r);
    zlink_close(server);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

#if defined(MBEDTLS_SSL_RENEGOTIATION)
START_TEST(renegotiation_closes)
{
    hostile h;
    hostile_open(&h, 0);
    check_good_peer(&h);
    raw_tls r;
    raw_tls_open(&r, h.port, _i);
    /* Sends a ClientHello inside the session; the answer never comes. */
    mbedtls_ssl_renegotiate(&r.ssl);
    tls_expect_event(h.monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                     ZLINK_PROTOCOL_ERROR_TLS_RENEGOTIATION);
    ck_assert(raw_closed_by_peer(r.fd, TLS_WAIT_MS));
    raw_tls_close(&r);
    check_good_peer(&h);
    hostile_close(&h);
}
END_TEST
#endif

/* After a good handshake: a record that fails its MAC, and one that is
 * too long, each close the connection. */
START_TEST(bad_records_after_handshake)
{
    hostile h;
    hostile_open(&h, 0);
    for (int round = 0; round < 2; round++) {
        check_good_peer(&h);
        raw_tls r;
        raw_tls_open(&r, h.port, _i);
        uint8_t record[5 + 48] = {0x17, 0x03, 0x03, 0x00, 48};
        for (int i = 5; i < (int)sizeof record; i++)
            record[i] = (uint8_t)(i * 13);
        size_t len = sizeof record;
        if (round == 1) {
            record[3] = 0x60; /* 24 KiB claimed */
            len = 5;
        }
        raw_send(r.fd, record, len);
        tls_expect_event(h.monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                         round == 0
                             ? ZLINK_PROTOCOL_ERROR_TLS_BAD_RECORD
                             : ZLINK_PROTOCOL_ERROR_TLS_OVERSIZED_RECORD);
        ck_assert(raw_closed_by_peer(r.fd, TLS_WAIT_MS));
        raw_tls_close(&r);
        check_good_peer(&h);
    }
    hostile_close(&h);
}
END_TEST

/* A peer that streams valid records of junk ZMTP far faster than it could
 * be read: the frame decoder refuses it, and the filter's buffers stay
 * bounded meanwhile (ASan sees the rest). */
START_TEST(valid_records_bad_zmtp)
{
    hostile h;
    hostile_open(&h, 0);
    check_good_peer(&h);
    raw_tls r;
    raw_tls_open(&r, h.port, _i);
    uint8_t junk[4096];
    memset(junk, 0xee, sizeof junk);
    mbedtls_ssl_write(&r.ssl, junk, sizeof junk);
    tls_expect_event(h.monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                     ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
    ck_assert(raw_closed_by_peer(r.fd, TLS_WAIT_MS));
    raw_tls_close(&r);
    check_good_peer(&h);
    hostile_close(&h);
}
END_TEST

/* After a good handshake: a fatal alert is reported as the peer's alert, a
 * close_notify is a plain disconnect, and a record cut short by the peer's
 * close is reported as truncated. */
START_TEST(alerts_and_cut_records_after_handshake)
{
    hostile h;
    hostile_open(&h, 0);
    for (int round = 0; round < 3; round++) {
        check_good_peer(&h);
        raw_tls r;
        raw_tls_open(&r, h.port, _i);
        if (round == 0) {
            mbedtls_ssl_send_alert_message(
                &r.ssl, MBEDTLS_SSL_ALERT_LEVEL_FATAL,
                MBEDTLS_SSL_ALERT_MSG_INTERNAL_ERROR);
            tls_expect_event(h.monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                             ZLINK_PROTOCOL_ERROR_TLS_ALERT);
        } else if (round == 1) {
            /* A warning is passed over: the junk after it still arrives. */
            mbedtls_ssl_send_alert_message(&r.ssl,
                                           MBEDTLS_SSL_ALERT_LEVEL_WARNING,
                                           MBEDTLS_SSL_ALERT_MSG_USER_CANCELED);
            uint8_t junk[64];
            memset(junk, 0xee, sizeof junk);
            mbedtls_ssl_write(&r.ssl, junk, sizeof junk);
            tls_expect_event(h.monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                             ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
        } else {
            /* Half a record header and body, then the end. */
            uint8_t part[5 + 20] = {0x17, 0x03, 0x03, 0x00, 48};
            raw_send(r.fd, part, sizeof part);
            raw_shutdown_send(r.fd);
            tls_expect_event(h.monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                             ZLINK_PROTOCOL_ERROR_TLS_TRUNCATED);
        }
        ck_assert(raw_closed_by_peer(r.fd, TLS_WAIT_MS));
        raw_tls_close(&r);
    }
    /* close_notify: the connection ends as a plain close does. */
    raw_tls r;
    raw_tls_open(&r, h.port, _i);
    uint8_t frame[6];
    char endpoint[256];
    while (zlink_recv(h.monitor, frame, sizeof frame, 0) == 6)
        ck_assert_int_ge(zlink_recv(h.monitor, endpoint, sizeof endpoint, 0),
                         0); /* the earlier rounds' events */
    mbedtls_ssl_close_notify(&r.ssl);
    uint16_t event = 0;
    uint64_t deadline = zl_test_now_ms() + TLS_WAIT_MS;
    while (event != ZLINK_EVENT_DISCONNECTED && zl_test_now_ms() < deadline) {
        if (zlink_recv(h.monitor, frame, sizeof frame, 0) != 6)
            continue;
        ck_assert_int_ge(zlink_recv(h.monitor, endpoint, sizeof endpoint, 0),
                         0);
        memcpy(&event, frame, sizeof event);
        ck_assert_msg(event != ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                      "close_notify reported as a protocol failure");
    }
    ck_assert_int_eq(event, ZLINK_EVENT_DISCONNECTED);
    ck_assert(raw_closed_by_peer(r.fd, TLS_WAIT_MS));
    raw_tls_close(&r);
    check_good_peer(&h);
    hostile_close(&h);
}
END_TEST

/* Two zlink peers with AES-NI agree on AES-GCM, and zlink seals and opens
 * the records itself: every size around the record and buffer limits
 * crosses both ways intact. */
START_TEST(own_records_carry_every_size)
{
    unsigned before = zl_tls_own_records_total();
    tls_pair p;
    tls_pair_open(&p, ZLINK_PAIR, ZLINK_PAIR);
    static const size_t sizes[] = {0,     1,     255,   256,   16383, 16384,
                                   16385, 32768, 65535, 65536, 65537, 200000};
    size_t max = 200000;
    uint8_t *body = malloc(max), *got = malloc(max + 1);
    ck_assert(body && got);
    for (size_t i = 0; i < max; i++)
        body[i] = (uint8_t)(i * 7 + (i >> 9));
    for (int way = 0; way < 2; way++) {
        void *from = way ? p.server : p.client, *to = way ? p.client : p.server;
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            ck_assert_int_eq(zlink_send(from, body, sizes[i], 0),
                             (int)sizes[i]);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            ck_assert_int_eq(zlink_recv(to, got, max + 1, 0), (int)sizes[i]);
            ck_assert(memcmp(got, body, sizes[i]) == 0);
        }
    }
    free(body);
    free(got);
    tls_pair_close(&p);
    if (zlink_peers_use_own_records())
        ck_assert_uint_eq(zl_tls_own_records_total() - before, 2);
    else
        fprintf(stderr, "own_records_carry_every_size: TLS 1.3 or no AES-NI "
                        "here, the peers kept mbedTLS's records\n");
}
END_TEST

/* Handshakes on two I/O threads at once: each connection's records are
 * keyed from its own handshake's secrets (mbedTLS 2.28 exports them through
 * the shared config, tls_stream.c tells them apart by thread). */
START_TEST(own_records_on_two_io_threads)
{
    enum { CLIENTS = 8, ROUNDS = 20 };
    unsigned before = zl_tls_own_records_total();
    void *ctx = zlink_ctx_new();
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 2), 0);
    void *router = tls_socket(ctx, ZLINK_ROUTER);
    tls_server_identity(router, "server-chain.pem", "server.key");
    char endpoint[128];
    tls_bind(router, endpoint, sizeof endpoint);
    void *dealers[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        dealers[i] = tls_socket(ctx, ZLINK_DEALER);
        tls_client_trust(dealers[i], "root.pem");
        ck_assert_int_eq(zlink_connect(dealers[i], endpoint), 0);
    }
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < CLIENTS; i++) {
            char text[32];
            snprintf(text, sizeof text, "dealer %d round %d", i, round);
            send_str(dealers[i], text, 0);
        }
        for (int i = 0; i < CLIENTS; i++) {
            char id[256], text[64];
            int id_len = zlink_recv(router, id, sizeof id, 0);
            ck_assert_int_gt(id_len, 0);
            int n = zlink_recv(router, text, sizeof text - 1, 0);
            ck_assert_int_gt(n, 0);
            ck_assert_int_eq(
                zlink_send(router, id, (size_t)id_len, ZLINK_SNDMORE), id_len);
            ck_assert_int_eq(zlink_send(router, text, (size_t)n, 0), n);
        }
        for (int i = 0; i < CLIENTS; i++) {
            char want[32];
            snprintf(want, sizeof want, "dealer %d round %d", i, round);
            recv_str(dealers[i], want);
        }
    }
    for (int i = 0; i < CLIENTS; i++)
        zlink_close(dealers[i]);
    zlink_close(router);
    zlink_ctx_term(ctx);
    if (zlink_peers_use_own_records())
        ck_assert_uint_eq(zl_tls_own_records_total() - before, 2 * CLIENTS);
}
END_TEST

/* ---- hostile servers: the zlink client's side ---- */

/* A zlink DEALER connecting to a raw server, watched by a monitor. */
typedef struct hostile_server {
    void *ctx, *dealer, *monitor;
    raw_fd listener, conn;
} hostile_server;

static void hostile_server_open(hostile_server *h)
{
    h->ctx = zlink_ctx_new();
    h->dealer = tls_socket(h->ctx, ZLINK_DEALER);
    tls_client_trust(h->dealer, "root.pem");
    h->monitor = tls_open_monitor(h->ctx, h->dealer, "inproc://hostile-server");
    int port;
    h->listener = raw_listen(4, &port);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tls://127.0.0.1:%d", port);
    ck_assert_int_eq(zlink_connect(h->dealer, endpoint), 0);
    h->conn = raw_accept(h->listener, TLS_WAIT_MS);
    ck_assert(h->conn != RAW_INVALID);
}

static void hostile_server_close(hostile_server *h)
{
    if (h->conn != RAW_INVALID)
        raw_close(h->conn);
    raw_close(h->listener);
    zlink_close(h->monitor);
    zlink_close(h->dealer);
    zlink_ctx_term(h->ctx);
}

/* What the client sends first (its ClientHello) is read and ignored. */
static void server_answers(const void *bytes, size_t len, bool then_close,
                           uint32_t want)
{
    hostile_server h;
    hostile_server_open(&h);
    /* All of it: a close with unread bytes would be a reset. */
    uint8_t hello[5 + 65536];
    ck_assert(raw_recv_exact(h.conn, hello, 5, TLS_WAIT_MS));
    ck_assert_int_eq(hello[0], 0x16);
    ck_assert(raw_recv_exact(h.conn, hello + 5,
                             (size_t)hello[3] << 8 | hello[4], TLS_WAIT_MS));
    raw_send(h.conn, bytes, len);
    if (then_close) {
        raw_close(h.conn);
        h.conn = RAW_INVALID;
    }
    tls_expect_event(h.monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, want);
    if (h.conn != RAW_INVALID)
        ck_assert(raw_closed_by_peer(h.conn, TLS_WAIT_MS));
    hostile_server_close(&h);
}

START_TEST(client_refuses_hostile_servers)
{
    static const char http[] = "HTTP/1.1 200 OK\r\n\r\n";
    server_answers(http, sizeof http - 1, false,
                   ZLINK_PROTOCOL_ERROR_TLS_NOT_TLS);
    uint8_t oversized[5] = {0x16, 0x03, 0x03, 0xff, 0xff};
    server_answers(oversized, sizeof oversized, false,
                   ZLINK_PROTOCOL_ERROR_TLS_OVERSIZED_RECORD);
    uint8_t cut[5 + 10] = {0x16, 0x03, 0x03, 0x01, 0x00, 0x02};
    server_answers(cut, sizeof cut, true, ZLINK_PROTOCOL_ERROR_TLS_TRUNCATED);
}
END_TEST

#if defined(MBEDTLS_SSL_RENEGOTIATION)
/* A real TLS server that asks the zlink client to renegotiate. */
START_TEST(client_refuses_renegotiation)
{
    hostile_server h;
    hostile_server_open(&h);
    mbedtls_ssl_config conf;
    mbedtls_ssl_context ssl;
    mbedtls_x509_crt crt;
    mbedtls_pk_context key;
    mbedtls_ssl_config_init(&conf);
    mbedtls_ssl_init(&ssl);
    mbedtls_x509_crt_init(&crt);
    mbedtls_pk_init(&key);
    ck_assert_int_eq(
        mbedtls_x509_crt_parse_file(&crt, tls_cert("server-chain.pem")), 0);
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
    ck_assert_int_eq(mbedtls_pk_parse_keyfile(&key, tls_cert("server.key"),
                                              NULL, zl_tls_random, NULL),
                     0);
#else
    ck_assert_int_eq(
        mbedtls_pk_parse_keyfile(&key, tls_cert("server.key"), NULL), 0);
#endif
    ck_assert_int_eq(mbedtls_ssl_config_defaults(&conf, MBEDTLS_SSL_IS_SERVER,
                                                 MBEDTLS_SSL_TRANSPORT_STREAM,
                                                 MBEDTLS_SSL_PRESET_DEFAULT),
                     0);
    mbedtls_ssl_conf_rng(&conf, zl_tls_random, NULL);
    ck_assert_int_eq(mbedtls_ssl_conf_own_cert(&conf, &crt, &key), 0);
    mbedtls_ssl_conf_renegotiation(&conf, MBEDTLS_SSL_RENEGOTIATION_ENABLED);
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
    mbedtls_ssl_conf_max_tls_version(&conf, MBEDTLS_SSL_VERSION_TLS1_2);
#endif
    ck_assert_int_eq(mbedtls_ssl_setup(&ssl, &conf), 0);
    mbedtls_ssl_set_bio(&ssl, &h.conn, raw_bio_send, raw_bio_recv, NULL);
    int rc = mbedtls_ssl_handshake(&ssl);
    ck_assert_msg(rc == 0, "test server handshake: -0x%x", -rc);
    /* Sends a HelloRequest; the client must not go along. */
    mbedtls_ssl_renegotiate(&ssl);
    tls_expect_event(h.monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                     ZLINK_PROTOCOL_ERROR_TLS_RENEGOTIATION);
    ck_assert(raw_closed_by_peer(h.conn, TLS_WAIT_MS));
    mbedtls_ssl_free(&ssl);
    mbedtls_ssl_config_free(&conf);
    mbedtls_x509_crt_free(&crt);
    mbedtls_pk_free(&key);
    hostile_server_close(&h);
}
END_TEST
#endif

static Suite *tls_suite(void)
{
    Suite *s = suite_create("tls");
    TCase *transport = tcase_create("transport");
    tcase_set_timeout(transport, 120);
    tcase_add_test(transport, has_tls);
    tcase_add_test(transport, stream_socket_over_tls);
    tcase_add_test(transport, options_round_trip);
    tcase_add_test(transport, bad_settings_fail_bind_and_connect);
    tcase_add_test(transport, dealer_router_multipart_and_large);
    tcase_add_test(transport, every_socket_type);
    tcase_add_test(transport, many_small_messages);
    tcase_add_test(transport, pem_in_memory);
    tcase_add_test(transport, client_certificate_and_encrypted_key);
    tcase_add_test(transport, unbind_and_disconnect);
    tcase_add_test(transport, unbind_and_disconnect_by_another_spelling);
    tcase_add_test(transport, own_records_carry_every_size);
    tcase_add_test(transport, own_records_on_two_io_threads);
    suite_add_tcase(s, transport);
    TCase *failing = tcase_create("failures");
    tcase_set_timeout(failing, 120);
    tcase_add_loop_test(failing, certificate_failures, 0,
                        (int)(sizeof failures / sizeof failures[0]));
    tcase_add_test(failing, no_ca_uses_system_store);
    tcase_add_test(failing, client_retries_after_refusing_a_certificate);
    tcase_add_test(failing, plaintext_and_tls_mixed);
    suite_add_tcase(s, failing);
    TCase *hostile_input = tcase_create("hostile");
    tcase_set_timeout(hostile_input, 120);
    tcase_add_test(hostile_input, raw_garbage);
    tcase_add_test(hostile_input, silent_peers_cost_little);
    tcase_add_test(hostile_input, raw_oversized_record);
    tcase_add_test(hostile_input, raw_truncated_record);
    tcase_add_test(hostile_input, raw_stall_mid_handshake);
#if defined(MBEDTLS_SSL_RENEGOTIATION)
    tcase_add_loop_test(hostile_input, renegotiation_closes, 0, RAW_SUITES);
#endif
    tcase_add_loop_test(hostile_input, bad_records_after_handshake, 0,
                        RAW_SUITES);
    tcase_add_loop_test(hostile_input, valid_records_bad_zmtp, 0, RAW_SUITES);
    tcase_add_loop_test(hostile_input, alerts_and_cut_records_after_handshake,
                        0, RAW_SUITES);
    tcase_add_test(hostile_input, client_refuses_hostile_servers);
#if defined(MBEDTLS_SSL_RENEGOTIATION)
    tcase_add_test(hostile_input, client_refuses_renegotiation);
#endif
    suite_add_tcase(s, hostile_input);
    return s;
}

int main(void)
{
    return tls_fixture_main("test_tls", tls_suite());
}
