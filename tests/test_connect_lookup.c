/* test_connect_lookup.c — a connect by host name resolves the name before
 * each attempt, as libzmq's does: zlink_connect accepts a name that does
 * not resolve yet, and a reconnect follows the name to a new address.
 * Where the C library is glibc, this program answers getaddrinfo for one
 * made-up name itself, so that the test decides what the name means. */
#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include "socket_testutil.h"

#include <stdatomic.h>

#if defined(__linux__) && defined(__GLIBC__)
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netdb.h>
#include <netinet/in.h>
#define HAVE_MOVING_NAME 1

#define MOVING_NAME "zlink-moving-host.test"
/* The IPv4 address MOVING_NAME resolves to (network order); 0: none. */
static atomic_uint moving_addr;
static atomic_int moving_lookups;

/* Defined here, it comes before the C library's for libuv too. */
int getaddrinfo(const char *node, const char *service,
                const struct addrinfo *hints, struct addrinfo **res)
{
    if (node && strcmp(node, MOVING_NAME) == 0) {
        atomic_fetch_add(&moving_lookups, 1);
        uint32_t addr = atomic_load(&moving_addr);
        if (addr == 0)
            return EAI_NONAME;
        /* One block, as glibc's freeaddrinfo frees it. */
        struct answer {
            struct addrinfo ai;
            struct sockaddr_in sin;
        } *a = calloc(1, sizeof *a);
        if (!a)
            return EAI_MEMORY;
        a->sin.sin_family = AF_INET;
        a->sin.sin_addr.s_addr = addr;
        a->ai.ai_family = AF_INET;
        a->ai.ai_socktype = SOCK_STREAM;
        a->ai.ai_protocol = IPPROTO_TCP;
        a->ai.ai_addr = (struct sockaddr *)&a->sin;
        a->ai.ai_addrlen = sizeof a->sin;
        *res = &a->ai;
        return 0;
    }
    int (*next)(const char *, const char *, const struct addrinfo *,
                struct addrinfo **);
    *(void **)&next = dlsym(RTLD_NEXT, "getaddrinfo");
    return next ? next(node, service, hints, res) : EAI_FAIL;
}
#endif

/* A name that resolves nowhere is accepted, as by libzmq, and each attempt
 * asks again: the attempts go on as for a peer that is not there yet. */
START_TEST(unresolved_name_is_retried)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(s, ZLINK_RECONNECT_IVL, 10);
    void *monitor = zl_test_monitor_open(ctx, s, "inproc://lookup-retried",
                                         ZLINK_EVENT_CONNECT_RETRIED);
    zt_connect(s, "tcp://zlink-no-such-host.invalid:5555");
    ck_assert(zl_test_wait_event(monitor, ZLINK_EVENT_CONNECT_RETRIED, 3,
                                 ZT_TIMEOUT_MS));
    /* Closed while a lookup may be under way: nothing waits for it. */
    zt_close(monitor);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* What can never be a host is refused at once, with EINVAL. */
START_TEST(malformed_hosts_refused)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_DEALER);
    const char *bad[] = {"tcp://local host:5555", "tcp://:5555",
                         "tcp://localhost:x",     "tcp://localhost:0",
                         "tcp://*:5555",          "tcp://[::1:5555",
                         "tcp://host/name:5555",  "tcp://127.0.0.1:0;a b:5555"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        ck_assert_msg(zlink_connect(s, bad[i]) == -1 && zlink_errno() == EINVAL,
                      "%s: %s", bad[i], zlink_strerror(zlink_errno()));
    }
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* A name connects and carries traffic; disconnect takes the name it was
 * connected with. */
START_TEST(name_connects)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_PAIR);
    char ep[300], by_name[300];
    zt_bind_tcp(server, ep, sizeof ep);
    snprintf(by_name, sizeof by_name, "tcp://localhost:%s",
             strrchr(ep, ':') + 1);
    void *client = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(client, by_name);
    zt_send_str(client, "by name", 0);
    zt_recv_str(server, "by name");
    ck_assert_int_eq(zlink_disconnect(client, by_name), 0);
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

#if defined(HAVE_MOVING_NAME)
/* The name resolves only after the connect, then comes to name another
 * address: the client reaches the first server, and after that one goes,
 * the second, as a libzmq client does when a service moves. */
START_TEST(reconnect_follows_the_name)
{
    void *ctx = zt_ctx();
    void *first = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    zt_bind_tcp(first, ep, sizeof ep);
    const char *port = strrchr(ep, ':') + 1;
    char second_ep[300], by_name[300];
    snprintf(second_ep, sizeof second_ep, "tcp://127.0.0.2:%s", port);
    snprintf(by_name, sizeof by_name, "tcp://%s:%s", MOVING_NAME, port);
    void *second = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(second, second_ep);

    atomic_store(&moving_addr, 0);
    atomic_store(&moving_lookups, 0);
    void *client = zt_socket(ctx, ZLINK_PAIR);
    zt_set_int(client, ZLINK_RECONNECT_IVL, 10);
    zt_connect(client, by_name);
    zt_send_str(client, "hello, first", 0);
    /* Not found a few times, then found. */
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (atomic_load(&moving_lookups) < 3 && zl_test_now_ms() < deadline)
        zl_test_sleep_ms(5);
    ck_assert_int_ge(atomic_load(&moving_lookups), 3);
    atomic_store(&moving_addr, htonl(INADDR_LOOPBACK));
    zt_recv_str(first, "hello, first");

    /* The name moves; the first server goes, the client follows. */
    atomic_store(&moving_addr, htonl(INADDR_LOOPBACK + 1));
    zt_close(first);
    ck_assert(zt_ping_until(client, second, "hello, second", ZT_TIMEOUT_MS));
    zt_close(client);
    zt_close(second);
    zt_term(ctx);
}
END_TEST
#endif

static Suite *connect_lookup_suite(void)
{
    Suite *s = suite_create("connect_lookup");
    TCase *tc = tcase_create("connect_lookup");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, unresolved_name_is_retried);
    tcase_add_test(tc, malformed_hosts_refused);
    tcase_add_test(tc, name_connects);
#if defined(HAVE_MOVING_NAME)
    tcase_add_test(tc, reconnect_follows_the_name);
#endif
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(connect_lookup_suite());
}
