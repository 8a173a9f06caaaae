/* test_endpoints.c — libzmq's endpoint forms beyond host:port: a source
 * address on connect ("tcp://src;dst"), interface names in binds
 * ("tcp://lo:*"), and the errors for malformed ones ("ipc://@"). */
#include "raw_socket.h"
#include "socket_testutil.h"

/* A loopback port that was free a moment ago. */
static int free_port(void)
{
    int port;
    raw_close(raw_listen(1, &port));
    return port;
}

/* The connection arrives from the source port asked for, in both the
 * "host:port" and "*:port" forms. */
START_TEST(source_address_seen_by_peer)
{
    void *ctx = zt_ctx();
    int port;
    raw_fd listener = raw_listen(4, &port);
    const char *forms[] = {"127.0.0.1:%d;127.0.0.1:%d", "*:%d;127.0.0.1:%d"};
    for (int i = 0; i < 2; i++) {
        void *s = zt_socket(ctx, ZLINK_DEALER);
        int src = free_port();
        char spec[64], ep[80];
        snprintf(spec, sizeof spec, forms[i], src, port);
        snprintf(ep, sizeof ep, "tcp://%s", spec);
        zt_connect(s, ep);
        raw_fd peer = raw_accept(listener, ZT_TIMEOUT_MS);
        ck_assert(peer != RAW_INVALID);
        struct sockaddr_in from;
        raw_len len = sizeof from;
        ck_assert_int_eq(getpeername(peer, (struct sockaddr *)&from, &len), 0);
        ck_assert_int_eq(ntohs(from.sin_port), src);
        ck_assert_uint_eq(ntohl(from.sin_addr.s_addr), INADDR_LOOPBACK);
        raw_close(peer);
        zt_close(s);
    }
    raw_close(listener);
    zt_term(ctx);
}
END_TEST

/* Messages flow over a source-address connect, with any source port
 * ("host:0"), whether the source is an address or a name, as over a plain
 * one. */
START_TEST(source_address_traffic)
{
    void *ctx = zt_ctx();
    const char *sources[] = {"127.0.0.1:0", "localhost:0"};
    for (int i = 0; i < 2; i++) {
        /* A server of its own each time: a PAIR takes one peer, and would
         * turn the next away until it has seen the last one go. */
        void *server = zt_socket(ctx, ZLINK_PAIR);
        char ep[300], with_src[340];
        zt_bind_tcp(server, ep, sizeof ep);
        void *client = zt_socket(ctx, ZLINK_PAIR);
        snprintf(with_src, sizeof with_src, "tcp://%s;%s", sources[i],
                 ep + strlen("tcp://"));
        zt_connect(client, with_src);
        zt_send_str(client, "from a chosen address", 0);
        zt_recv_str(server, "from a chosen address");
        zt_send_str(server, "back", 0);
        zt_recv_str(client, "back");
        /* The endpoint is disconnected by the name it was connected with. */
        ck_assert_int_eq(zlink_disconnect(client, with_src), 0);
        zt_close(client);
        zt_close(server);
    }
    zt_term(ctx);
}
END_TEST

/* A wildcard source ("*:0") is any local address of the destination's
 * family, whichever family ZLINK_IPV6 gives "*". */
START_TEST(wildcard_source_takes_the_destination_family)
{
    void *ctx = zt_ctx();
    const char *binds[] = {"tcp://127.0.0.1:*", "tcp://[::1]:*"};
    for (int ipv6 = 0; ipv6 < 2; ipv6++)
        for (int b = 0; b < 2; b++) {
            void *server = zt_socket(ctx, ZLINK_PAIR);
            zt_set_int(server, ZLINK_IPV6, 1);
            char ep[300], with_src[340];
            zt_bind(server, binds[b]);
            zt_last_endpoint(server, ep, sizeof ep);
            void *client = zt_socket(ctx, ZLINK_PAIR);
            zt_set_int(client, ZLINK_IPV6, ipv6);
            snprintf(with_src, sizeof with_src, "tcp://*:0;%s",
                     ep + strlen("tcp://"));
            zt_connect(client, with_src);
            zt_send_str(client, "from anywhere", 0);
            zt_recv_str(server, "from anywhere");
            zt_close(client);
            zt_close(server);
        }
    zt_term(ctx);
}
END_TEST

/* A connect from a port to that same port is answered by the socket itself
 * (TCP's simultaneous open), as a connect to an unused local port is when
 * the kernel happens to pick that port as the source. It counts as
 * refused: the connect retries, and a DEALER never receives what it sent
 * as if from a peer. */
START_TEST(connect_never_reaches_itself)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_DEALER);
    void *monitor = zl_test_monitor_open(ctx, s, "inproc://self-connect",
                                         ZLINK_EVENT_CONNECTED |
                                             ZLINK_EVENT_CONNECT_RETRIED);
    int port = free_port();
    char ep[80];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d;127.0.0.1:%d", port, port);
    zt_connect(s, ep);
    zt_send_str(s, "anyone?", ZLINK_DONTWAIT);
    ck_assert(zl_test_wait_event(monitor, ZLINK_EVENT_CONNECT_RETRIED, 2,
                                 ZT_TIMEOUT_MS));
    zt_set_int(s, ZLINK_RCVTIMEO, 200);
    char buf[16];
    zt_expect_errno(zlink_recv(s, buf, sizeof buf, 0), EAGAIN);
    zt_close(monitor);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(source_address_errors)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_DEALER);
    zt_expect_errno(zlink_connect(s, "tcp://;127.0.0.1:5555"), EINVAL);
    zt_expect_errno(zlink_connect(s, "tcp://127.0.0.1:99999;127.0.0.1:5555"),
                    EINVAL);
    /* A source that is neither an interface nor a name that resolves. */
    zt_expect_errno(
        zlink_connect(s, "tcp://zlink-no-such-host.invalid:0;127.0.0.1:5555"),
        ENODEV);
    zt_expect_errno(zlink_connect(s, "tcp://127.0.0.1:0;127.0.0.1:*"), EINVAL);
    /* A source of one family and an address of the other never meet. */
    zt_expect_errno(zlink_connect(s, "tcp://[::1]:0;127.0.0.1:5555"), EINVAL);
    zt_expect_errno(zlink_connect(s, "tcp://127.0.0.1:0;[::1]:5555"), EINVAL);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* The name of an interface that has 127.0.0.1, as the OS lists it. */
static bool loopback_interface(char *name, size_t cap)
{
    uv_interface_address_t *list;
    int count;
    if (uv_interface_addresses(&list, &count) != 0)
        return false;
    bool found = false;
    for (int i = 0; i < count && !found; i++) {
        const struct sockaddr_in *a = &list[i].address.address4;
        if (a->sin_family == AF_INET &&
            ntohl(a->sin_addr.s_addr) == INADDR_LOOPBACK) {
            snprintf(name, cap, "%s", list[i].name);
            found = true;
        }
    }
    uv_free_interface_addresses(list, count);
    return found;
}

START_TEST(interface_name_bind)
{
    char name[128];
    if (!loopback_interface(name, sizeof name)) {
        fprintf(stderr, "interface_name_bind: skipped, the OS lists no "
                        "interface with 127.0.0.1\n");
        return;
    }
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_PAIR);
    char ep[300], resolved[300];
    snprintf(ep, sizeof ep, "tcp://%s:*", name);
    zt_bind(server, ep);
    zt_last_endpoint(server, resolved, sizeof resolved);
    ck_assert_msg(strncmp(resolved, "tcp://127.0.0.1:", 16) == 0,
                  "%s bound to %s", ep, resolved);
    void *client = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(client, resolved);
    zt_send_str(client, "by interface", 0);
    zt_recv_str(server, "by interface");
    zt_close(client);

    /* An interface name is also a connect's source. */
    void *other = zt_socket(ctx, ZLINK_PAIR);
    zt_bind_tcp(other, ep, sizeof ep);
    char with_src[512];
    snprintf(with_src, sizeof with_src, "tcp://%s:0;%s", name,
             ep + strlen("tcp://"));
    client = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(client, with_src);
    zt_send_str(client, "from an interface", 0);
    zt_recv_str(other, "from an interface");
    zt_close(client);
    zt_close(other);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

START_TEST(unknown_interface)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    zt_expect_errno(zlink_bind(s, "tcp://zlink-no-such-if.invalid:*"), ENODEV);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* An abstract ipc name must have at least one character (libzmq). */
START_TEST(empty_abstract_ipc)
{
    if (!zt_have_ipc())
        return;
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    zt_expect_errno(zlink_bind(s, "ipc://@"), EINVAL);
    zt_expect_errno(zlink_connect(s, "ipc://@"), EINVAL);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

static Suite *endpoints_suite(void)
{
    Suite *s = suite_create("endpoints");
    TCase *tc = tcase_create("endpoints");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, source_address_seen_by_peer);
    tcase_add_test(tc, source_address_traffic);
    tcase_add_test(tc, source_address_errors);
    tcase_add_test(tc, wildcard_source_takes_the_destination_family);
    tcase_add_test(tc, connect_never_reaches_itself);
    tcase_add_test(tc, interface_name_bind);
    tcase_add_test(tc, unknown_interface);
    tcase_add_test(tc, empty_abstract_ipc);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(endpoints_suite());
}
