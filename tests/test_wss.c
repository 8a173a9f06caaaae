/* test_wss.c — wss://: the ws filter over the TLS filter. Messages of
 * every size cross it both ways, an untrusted server is refused with the
 * TLS reason, and a plain ws client on a wss port gets nowhere. */
#include <stdlib.h>
#include <string.h>

#include "socket_testutil.h"
#include "tls_fixture.h"
#include "zlink_zmq.h"

static void *wss_server(void *ctx, int type, char *endpoint, size_t cap)
{
    void *s = zt_socket(ctx, type);
    tls_server_identity(s, "server-chain.pem", "server.key");
    ck_assert_int_eq(zlink_bind(s, "wss://127.0.0.1:*/zmq"), 0);
    zt_last_endpoint(s, endpoint, cap);
    ck_assert_msg(strncmp(endpoint, "wss://127.0.0.1:", 16) == 0, "%s",
                  endpoint);
    return s;
}

static void *wss_client(void *ctx, int type, const char *ca,
                        const char *endpoint)
{
    void *s = zt_socket(ctx, type);
    tls_client_trust(s, ca);
    zt_connect(s, endpoint);
    return s;
}

START_TEST(test_wss_sizes_both_ways)
{
    void *ctx = zt_ctx();
    char ep[256];
    void *server = wss_server(ctx, ZLINK_PAIR, ep, sizeof ep);
    void *client = wss_client(ctx, ZLINK_PAIR, "root.pem", ep);
    static const size_t sizes[] = {0, 1, 125, 126, 65535, 65536, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int dir = 0; dir < 2; dir++) {
            void *from = dir ? server : client, *to = dir ? client : server;
            zlink_msg_t msg;
            ck_assert_int_eq(zlink_msg_init_size(&msg, sizes[i]), 0);
            zt_fill(zlink_msg_data(&msg), sizes[i], (unsigned)i);
            ck_assert_int_eq(zlink_msg_send(&msg, from, ZLINK_SNDMORE),
                             (int)sizes[i]);
            ck_assert_int_eq(zlink_send(from, "end", 3, 0), 3);
            zlink_msg_init(&msg);
            int n = zlink_msg_recv(&msg, to, 0);
            ck_assert_msg(n == (int)sizes[i], "size %zu: %d (%s)", sizes[i], n,
                          zlink_strerror(zlink_errno()));
            zt_check_bytes(zlink_msg_data(&msg), sizes[i], (unsigned)i);
            ck_assert(zlink_msg_more(&msg));
            zlink_msg_close(&msg);
            char end[8];
            ck_assert_int_eq(zlink_recv(to, end, sizeof end, 0), 3);
        }
    }
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

/* A client that does not trust the server's CA never gets a message
 * through, and says why: the chain did not verify. */
START_TEST(test_wss_untrusted_server_is_refused)
{
    void *ctx = zt_ctx();
    char ep[256];
    void *server = wss_server(ctx, ZLINK_ROUTER, ep, sizeof ep);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    ck_assert_int_eq(zlink_socket_monitor(client, "inproc://wss-mon",
                                          ZLINK_EVENT_HANDSHAKE_FAILED_AUTH),
                     0);
    void *mon = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(mon, "inproc://wss-mon");
    tls_client_trust(client, "other.pem");
    zt_connect(client, ep);
    zlink_msg_t event;
    zlink_msg_init(&event);
    ck_assert_int_ge(zlink_msg_recv(&event, mon, 0), 6);
    /* libzmq's layout: the event and its value in host order. */
    const uint8_t *d = zlink_msg_data(&event);
    uint16_t id;
    uint32_t value;
    memcpy(&id, d, sizeof id);
    memcpy(&value, d + 2, sizeof value);
    ck_assert_int_eq(id, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH);
    ck_assert_uint_eq(value, ZLINK_TLS_AUTH_CERT_UNTRUSTED);
    zlink_msg_close(&event);
    zt_close(mon);
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

/* Plain ws to a wss port: the server's TLS layer refuses the HTTP text,
 * and nothing reaches the application. */
START_TEST(test_plain_ws_client_on_wss_port)
{
    void *ctx = zt_ctx();
    char ep[256], plain[256];
    void *server = wss_server(ctx, ZLINK_PAIR, ep, sizeof ep);
    snprintf(plain, sizeof plain, "ws://%s", ep + strlen("wss://"));
    void *client = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(client, plain);
    zt_set_int(client, ZLINK_SNDTIMEO, 0);
    zlink_send(client, "x", 1, 0);
    zt_set_int(server, ZLINK_RCVTIMEO, 300);
    char buf[8];
    ck_assert_int_eq(zlink_recv(server, buf, sizeof buf, 0), -1);
    ck_assert_int_eq(zlink_errno(), EAGAIN);
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

/* A program written for libzmq's wss, as its own test_wss_transport is:
 * ZMQ_WSS_* options with PEM text, a wildcard bind with a path, and a
 * connect to 127.0.0.1 built from ZMQ_LAST_ENDPOINT. TRUST_SYSTEM adds
 * the system's store to the CA given, which still verifies the server. */
START_TEST(test_libzmq_wss_options)
{
    void *ctx = zt_ctx();
    char *chain = tls_read_cert("server-chain.pem");
    char *key = tls_read_cert("server.key");
    char *ca = tls_read_cert("root.pem");
    void *sb = zt_socket(ctx, ZMQ_REP);
    ck_assert_int_eq(zmq_setsockopt(sb, ZMQ_WSS_CERT_PEM, chain, strlen(chain)),
                     0);
    ck_assert_int_eq(zmq_setsockopt(sb, ZMQ_WSS_KEY_PEM, key, strlen(key)), 0);
    void *sc = zt_socket(ctx, ZMQ_REQ);
    ck_assert_int_eq(zmq_setsockopt(sc, ZMQ_WSS_TRUST_PEM, ca, strlen(ca)), 0);
    ck_assert_int_eq(zmq_setsockopt(sc, ZMQ_WSS_HOSTNAME, "localhost", 9), 0);
    zt_set_int(sc, ZMQ_WSS_TRUST_SYSTEM, 1);

    char bind_address[256], connect_address[300];
    ck_assert_int_eq(zmq_bind(sb, "wss://*:*/roundtrip"), 0);
    zt_last_endpoint(sb, bind_address, sizeof bind_address);
    snprintf(connect_address, sizeof connect_address, "wss://127.0.0.1%s",
             strrchr(bind_address, ':'));
    ck_assert_str_eq(strchr(connect_address + 6, '/'), "/roundtrip");
    zt_connect(sc, connect_address);
    zt_send_str(sc, "request", 0);
    zt_recv_str(sb, "request");
    zt_send_str(sb, "reply", 0);
    zt_recv_str(sc, "reply");
    ck_assert_int_eq(zmq_disconnect(sc, connect_address), 0);
    ck_assert_int_eq(zmq_unbind(sb, bind_address), 0);
    free(chain);
    free(key);
    free(ca);
    zt_close(sc);
    zt_close(sb);
    zt_term(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("wss");
    TCase *tc = tcase_create("wss");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_wss_sizes_both_ways);
    tcase_add_test(tc, test_wss_untrusted_server_is_refused);
    tcase_add_test(tc, test_plain_ws_client_on_wss_port);
    tcase_add_test(tc, test_libzmq_wss_options);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (!zlink_has("wss") || !tls_fixture_init()) {
        printf("wss: no certificates or no wss in this build, skipped\n");
        return 0;
    }
    return zl_test_run(suite());
}
