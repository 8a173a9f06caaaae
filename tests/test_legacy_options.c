/* test_legacy_options.c — libzmq's older options: the accept filters
 * (ZLINK_TCP_ACCEPT_FILTER, ZLINK_IPC_FILTER_*: what they take, and a bound
 * socket that closes the connections they do not admit, at once and
 * reported, while the ones they admit go on), ZLINK_AFFINITY,
 * ZLINK_IPV4ONLY and the multicast settings. */
#include <check.h>
#if !defined(_WIN32)
#include <fcntl.h>
#include <sys/un.h>
#include <unistd.h>
#endif

#include "ctx.h"
#include "raw_socket.h"
#include "socket_testutil.h"

static int set_str(void *s, int option, const char *value)
{
    return zlink_setsockopt(s, option, value, value ? strlen(value) : 0);
}

static void assert_refused(void *s, int option, const char *value)
{
    ck_assert_msg(set_str(s, option, value) == -1 && zlink_errno() == EINVAL,
                  "%s was taken", value ? value : "NULL");
}

START_TEST(tcp_filter_values)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_ROUTER);
    ck_assert_int_eq(set_str(s, ZLINK_TCP_ACCEPT_FILTER, "127.0.0.1"), 0);
    ck_assert_int_eq(set_str(s, ZLINK_TCP_ACCEPT_FILTER, "10.0.0.0/8"), 0);
    ck_assert_int_eq(set_str(s, ZLINK_TCP_ACCEPT_FILTER, "0.0.0.0/0"), 0);
    ck_assert_int_eq(set_str(s, ZLINK_TCP_ACCEPT_FILTER, "192.168.1.7/32"), 0);
    /* With its NUL, as C strings are often passed. */
    ck_assert_int_eq(
        zlink_setsockopt(s, ZLINK_TCP_ACCEPT_FILTER, "127.0.0.1", 10), 0);
    assert_refused(s, ZLINK_TCP_ACCEPT_FILTER, "127.0.0.1/33");
    assert_refused(s, ZLINK_TCP_ACCEPT_FILTER, "127.0.0.1/");
    assert_refused(s, ZLINK_TCP_ACCEPT_FILTER, "127.0.0.1/x");
    assert_refused(s, ZLINK_TCP_ACCEPT_FILTER, "/8");
    assert_refused(s, ZLINK_TCP_ACCEPT_FILTER, "localhost");
    assert_refused(s, ZLINK_TCP_ACCEPT_FILTER, "1.2.3");
    /* IPv6 filters need ZLINK_IPV6 first, as libzmq's. */
    assert_refused(s, ZLINK_TCP_ACCEPT_FILTER, "::1");
    zt_set_int(s, ZLINK_IPV6, 1);
    ck_assert_int_eq(set_str(s, ZLINK_TCP_ACCEPT_FILTER, "::1"), 0);
    ck_assert_int_eq(set_str(s, ZLINK_TCP_ACCEPT_FILTER, "[fe80::]/10"), 0);
    assert_refused(s, ZLINK_TCP_ACCEPT_FILTER, "::1/129");
    char longer[300];
    memset(longer, '1', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    assert_refused(s, ZLINK_TCP_ACCEPT_FILTER, longer);
    /* Cleared by NULL or "". */
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_TCP_ACCEPT_FILTER, NULL, 0), 0);
    ck_assert_int_eq(set_str(s, ZLINK_TCP_ACCEPT_FILTER, ""), 0);
    /* Write-only, as libzmq's. */
    char buf[64];
    size_t len = sizeof buf;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_TCP_ACCEPT_FILTER, buf, &len),
                     -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* A bound ROUTER with filters, a DEALER that connects from 127.0.0.1:
 * admitted, a hello comes through; refused, the server's monitor says
 * ACCEPT_FAILED (EACCES) and never ACCEPTED, and nothing comes. */
static void check_filtered(const char *scheme, const char *const *filters,
                           bool admitted)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_ROUTER);
    for (const char *const *f = filters; *f; f++)
        ck_assert_int_eq(set_str(server, ZLINK_TCP_ACCEPT_FILTER, *f), 0);
    char name[64];
    snprintf(name, sizeof name, "inproc://filter-monitor-%d", zt_next_id());
    void *monitor = zl_test_monitor_open(
        ctx, server, name, ZLINK_EVENT_ACCEPTED | ZLINK_EVENT_ACCEPT_FAILED);
    char endpoint[256];
    snprintf(endpoint, sizeof endpoint, "%s://127.0.0.1:*%s", scheme,
             strcmp(scheme, "ws") == 0 ? "/filtered" : "");
    zt_bind(server, endpoint);
    zt_last_endpoint(server, endpoint, sizeof endpoint);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(client, ZLINK_RECONNECT_IVL, 20);
    zt_connect(client, endpoint);
    ck_assert_int_eq(zlink_send(client, "hello", 5, 0), 5);
    if (admitted) {
        ck_assert(zl_test_wait_event(monitor, ZLINK_EVENT_ACCEPTED, 1,
                                     ZT_TIMEOUT_MS));
        char id[256], body[16];
        ck_assert_int_gt(zlink_recv(server, id, sizeof id, 0), 0);
        ck_assert_int_eq(zlink_recv(server, body, sizeof body, 0), 5);
        ck_assert(memcmp(body, "hello", 5) == 0);
    } else {
        uint32_t value = 0;
        /* It reconnects and is refused again: two refusals, no ACCEPTED. */
        for (int i = 0; i < 2; i++) {
            ck_assert(zl_test_wait_event_value(
                monitor, ZLINK_EVENT_ACCEPT_FAILED, &value, ZT_TIMEOUT_MS));
            ck_assert_uint_eq(value, EACCES);
        }
        zt_set_int(server, ZLINK_RCVTIMEO, 100);
        char id[256];
        ck_assert_int_eq(zlink_recv(server, id, sizeof id, 0), -1);
        ck_assert_int_eq(zlink_errno(), EAGAIN);
        ck_assert(!zl_test_wait_event(monitor, ZLINK_EVENT_ACCEPTED, 1, 0));
    }
    zt_close(client);
    zt_close(monitor);
    zt_close(server);
    zt_term(ctx);
}

static const char *const admit_loopback[] = {"127.0.0.1", NULL};
static const char *const admit_net[] = {"10.0.0.0/8", "127.0.0.0/8", NULL};
static const char *const admit_all[] = {"0.0.0.0/0", NULL};
static const char *const admit_bits[] = {"127.0.0.0/31", NULL};
static const char *const refuse_other[] = {"10.0.0.0/8", "127.0.0.2", NULL};
static const char *const refuse_bits[] = {"127.0.0.2/31", NULL};
static const char *const refuse_v6[] = {"192.168.0.0/16", NULL};

START_TEST(tcp_filter_admits_and_refuses)
{
    const char *scheme = "tcp";
    check_filtered(scheme, admit_loopback, true);
    check_filtered(scheme, admit_net, true);
    check_filtered(scheme, admit_all, true);
    check_filtered(scheme, admit_bits, true);
    check_filtered(scheme, refuse_other, false);
    check_filtered(scheme, refuse_bits, false);
}
END_TEST

#if defined(ZLINK_WITH_WS)
START_TEST(ws_filter_admits_and_refuses)
{
    check_filtered("ws", admit_loopback, true);
    check_filtered("ws", refuse_v6, false);
}
END_TEST
#endif

/* On an IPV6 socket bound to the wildcard, an IPv4 peer shows as
 * ::ffff:127.0.0.1: IPv4 filters still name it. */
START_TEST(tcp_filter_dual_stack)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_ROUTER);
    zt_set_int(server, ZLINK_IPV6, 1);
    ck_assert_int_eq(set_str(server, ZLINK_TCP_ACCEPT_FILTER, "127.0.0.1"), 0);
    if (zlink_bind(server, "tcp://[::]:*") != 0) {
        fprintf(stderr, "tcp_filter_dual_stack: no IPv6 here, skipped\n");
        zt_close(server);
        zt_term(ctx);
        return;
    }
    char endpoint[256];
    zt_last_endpoint(server, endpoint, sizeof endpoint);
    const char *port = strrchr(endpoint, ':');
    char target[64];
    snprintf(target, sizeof target, "tcp://127.0.0.1%s", port);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    zt_connect(client, target);
    ck_assert_int_eq(zlink_send(client, "v4", 2, 0), 2);
    char id[256], body[8];
    ck_assert_int_gt(zlink_recv(server, id, sizeof id, 0), 0);
    ck_assert_int_eq(zlink_recv(server, body, sizeof body, 0), 2);
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

/* Linux and macOS tell an ipc peer's uid, gid and pid; the BSDs its uid and
 * gid; Windows none. */
#if defined(__linux__) || defined(__APPLE__)
#define HAVE_PEER_PID 1
#endif

#if !defined(_WIN32)
static void check_ipc_filter(int option, long id, size_t size, bool admitted)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_ROUTER);
    ck_assert_int_eq(zlink_setsockopt(server, option, &id, size), 0);
    char name[64];
    snprintf(name, sizeof name, "inproc://ipc-filter-monitor-%d", zt_next_id());
    void *monitor = zl_test_monitor_open(
        ctx, server, name, ZLINK_EVENT_ACCEPTED | ZLINK_EVENT_ACCEPT_FAILED);
    char endpoint[256];
    zl_test_ipc_endpoint(endpoint, sizeof endpoint);
    zt_bind(server, endpoint);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(client, ZLINK_RECONNECT_IVL, 20);
    zt_connect(client, endpoint);
    ck_assert_int_eq(zlink_send(client, "hi", 2, 0), 2);
    if (admitted) {
        char id_buf[256], body[8];
        ck_assert_int_gt(zlink_recv(server, id_buf, sizeof id_buf, 0), 0);
        ck_assert_int_eq(zlink_recv(server, body, sizeof body, 0), 2);
    } else {
        uint32_t value = 0;
        ck_assert(zl_test_wait_event_value(monitor, ZLINK_EVENT_ACCEPT_FAILED,
                                           &value, ZT_TIMEOUT_MS));
        ck_assert_uint_eq(value, EACCES);
        ck_assert(!zl_test_wait_event(monitor, ZLINK_EVENT_ACCEPTED, 1, 50));
    }
    zt_close(client);
    zt_close(monitor);
    zt_close(server);
    zt_term(ctx);
}

START_TEST(ipc_filters)
{
    if (!zt_have_ipc())
        return;
    /* The ids are passed in their own types' sizes (4 bytes here). */
    check_ipc_filter(ZLINK_IPC_FILTER_UID, (long)getuid(), sizeof(uid_t), true);
    check_ipc_filter(ZLINK_IPC_FILTER_UID, (long)getuid() + 4242, sizeof(uid_t),
                     false);
    check_ipc_filter(ZLINK_IPC_FILTER_GID, (long)getgid(), sizeof(gid_t), true);
#if defined(HAVE_PEER_PID)
    check_ipc_filter(ZLINK_IPC_FILTER_PID, (long)getpid(), sizeof(pid_t), true);
    check_ipc_filter(ZLINK_IPC_FILTER_PID, (long)getpid() + 1, sizeof(pid_t),
                     false);
#endif
}
END_TEST

START_TEST(ipc_filter_values)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_ROUTER);
    uid_t uid = getuid();
    ck_assert_int_eq(
        zlink_setsockopt(s, ZLINK_IPC_FILTER_UID, &uid, sizeof uid), 0);
    uint64_t wide = 0;
    ck_assert_int_eq(
        zlink_setsockopt(s, ZLINK_IPC_FILTER_UID, &wide, sizeof wide), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_IPC_FILTER_UID, NULL, 0), 0);
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_IPC_FILTER_GID, NULL, 0), 0);
    /* A tcp filter leaves ipc connections alone, and the reverse. */
    ck_assert_int_eq(set_str(s, ZLINK_TCP_ACCEPT_FILTER, "10.0.0.1"), 0);
    char endpoint[256];
    zl_test_ipc_endpoint(endpoint, sizeof endpoint);
    if (zt_have_ipc()) {
        zt_bind(s, endpoint);
        void *client = zt_socket(ctx, ZLINK_DEALER);
        zt_connect(client, endpoint);
        ck_assert_int_eq(zlink_send(client, "ok", 2, 0), 2);
        char id[256], body[8];
        ck_assert_int_gt(zlink_recv(s, id, sizeof id, 0), 0);
        ck_assert_int_eq(zlink_recv(s, body, sizeof body, 0), 2);
        zt_close(client);
    }
    zt_close(s);
    zt_term(ctx);
}
END_TEST
#endif

/* Where the OS cannot tell a credential, its filter is refused rather than
 * admitting everyone, as a libzmq built there refuses it. */
#if !defined(HAVE_PEER_PID)
START_TEST(ipc_filters_the_os_cannot_serve)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_ROUTER);
    int32_t id = 1;
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_IPC_FILTER_PID, &id, sizeof id),
                     -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
#if defined(_WIN32)
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_IPC_FILTER_UID, &id, sizeof id),
                     -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_IPC_FILTER_GID, &id, sizeof id),
                     -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
#endif
    zt_close(s);
    zt_term(ctx);
}
END_TEST
#endif

START_TEST(ipv4only)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_DEALER);
    ck_assert_int_eq(zt_get_int(s, ZLINK_IPV4ONLY), 1);
    zt_set_int(s, ZLINK_IPV4ONLY, 0);
    ck_assert_int_eq(zt_get_int(s, ZLINK_IPV6), 1);
    ck_assert_int_eq(zt_get_int(s, ZLINK_IPV4ONLY), 0);
    zt_set_int(s, ZLINK_IPV6, 0);
    ck_assert_int_eq(zt_get_int(s, ZLINK_IPV4ONLY), 1);
    int two = 2;
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_IPV4ONLY, &two, sizeof two), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* A DEALER sends "ping" to server at endpoint; server (a ROUTER) gets it. */
static void assert_reaches(void *ctx, void *server, const char *endpoint)
{
    void *client = zt_socket(ctx, ZLINK_DEALER);
    zt_connect(client, endpoint);
    ck_assert_int_eq(zlink_send(client, "ping", 4, 0), 4);
    char id[256], body[8];
    ck_assert_int_gt(zlink_recv(server, id, sizeof id, 0), 0);
    ck_assert_int_eq(zlink_recv(server, body, sizeof body, 0), 4);
    ck_assert(memcmp(body, "ping", 4) == 0);
    zt_close(client);
}

/* USE_FD: a bind takes the application's listening socket, whatever the
 * address it names, and refuses one that is not listening or not of the
 * endpoint's kind. */
START_TEST(use_fd_tcp)
{
    raw_sockets_init();
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_ROUTER);
    ck_assert_int_eq(zt_get_int(server, ZLINK_USE_FD), -1);
    int port = 0;
    raw_fd listener = raw_listen(16, &port);
    /* Not listening: EINVAL, and the socket is still ours. */
    raw_fd idle = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    ck_assert(idle != RAW_INVALID);
    zt_set_int(server, ZLINK_USE_FD, (int)idle);
    ck_assert_int_eq(zlink_bind(server, "tcp://127.0.0.1:*"), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    raw_close(idle);
    /* A tcp listener for an ipc endpoint: EINVAL. */
    zt_set_int(server, ZLINK_USE_FD, (int)listener);
    if (zt_have_ipc()) {
        ck_assert_int_eq(zlink_bind(server, "ipc://not-looked-at"), -1);
        ck_assert_int_eq(zlink_errno(), EINVAL);
    }
    /* The port named is not looked at: the socket's own is used. */
    zt_bind(server, "tcp://127.0.0.1:1");
    char endpoint[256], want[64];
    zt_last_endpoint(server, endpoint, sizeof endpoint);
    snprintf(want, sizeof want, "tcp://127.0.0.1:%d", port);
    ck_assert_str_eq(endpoint, want);
    assert_reaches(ctx, server, endpoint);
    zt_close(server);
    zt_term(ctx);
#if !defined(_WIN32)
    /* Closed with its bind. */
    ck_assert_int_eq(fcntl(listener, F_GETFD), -1);
    ck_assert_int_eq(errno, EBADF);
#endif
}
END_TEST

#if defined(__linux__)
START_TEST(use_fd_ipc)
{
    if (!zt_have_ipc())
        return;
    char endpoint[256];
    zl_test_ipc_endpoint(endpoint, sizeof endpoint);
    const char *path = endpoint + strlen("ipc://");
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    ck_assert_uint_lt(strlen(path), sizeof addr.sun_path);
    strcpy(addr.sun_path, path);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    ck_assert_int_eq(listen(fd, 16), 0);
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_ROUTER);
    zt_set_int(server, ZLINK_USE_FD, fd);
    /* A unix socket for a tcp endpoint: EINVAL. */
    ck_assert_int_eq(zlink_bind(server, "tcp://127.0.0.1:*"), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    zt_bind(server, "ipc://not-looked-at");
    assert_reaches(ctx, server, endpoint);
    zt_close(server);
    zt_term(ctx);
}
END_TEST
#endif

/* Kept and read back with libzmq's defaults and bounds; the transports
 * they are for are not there. */
START_TEST(multicast_settings)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PUB);
    ck_assert_int_eq(zt_get_int(s, ZLINK_RATE), 100);
    ck_assert_int_eq(zt_get_int(s, ZLINK_RECOVERY_IVL), 10000);
    ck_assert_int_eq(zt_get_int(s, ZLINK_MULTICAST_HOPS), 1);
    ck_assert_int_eq(zt_get_int(s, ZLINK_MULTICAST_MAXTPDU), 1500);
    zt_set_int(s, ZLINK_RATE, 1000);
    zt_set_int(s, ZLINK_RECOVERY_IVL, 0);
    zt_set_int(s, ZLINK_MULTICAST_HOPS, 8);
    zt_set_int(s, ZLINK_MULTICAST_MAXTPDU, 9000);
    ck_assert_int_eq(zt_get_int(s, ZLINK_RATE), 1000);
    ck_assert_int_eq(zt_get_int(s, ZLINK_RECOVERY_IVL), 0);
    ck_assert_int_eq(zt_get_int(s, ZLINK_MULTICAST_HOPS), 8);
    ck_assert_int_eq(zt_get_int(s, ZLINK_MULTICAST_MAXTPDU), 9000);
    static const struct {
        int option, value;
    } refused[] = {{ZLINK_RATE, 0},
                   {ZLINK_RECOVERY_IVL, -1},
                   {ZLINK_MULTICAST_HOPS, 0},
                   {ZLINK_MULTICAST_MAXTPDU, 0}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        ck_assert_int_eq(zlink_setsockopt(s, refused[i].option,
                                          &refused[i].value, sizeof(int)),
                         -1);
        ck_assert_int_eq(zlink_errno(), EINVAL);
    }
    ck_assert_int_eq(zlink_connect(s, "epgm://127.0.0.1;239.192.1.1:5555"), -1);
    ck_assert_int_eq(zlink_errno(), EPROTONOSUPPORT);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

static int thread_load(void *ctx, int i)
{
    return atomic_load(&((zl_ctx *)ctx)->threads[i].load);
}

/* AFFINITY places the socket's binds and connects on the I/O threads it
 * names, and fails them with EMTHREAD when it names none. */
START_TEST(affinity)
{
    void *ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 3), 0);
    void *server = zt_socket(ctx, ZLINK_ROUTER);
    uint64_t mask = 0xFF;
    size_t len = sizeof mask;
    ck_assert_int_eq(zlink_getsockopt(server, ZLINK_AFFINITY, &mask, &len), 0);
    ck_assert_uint_eq(mask, 0);
    int narrow = 2;
    ck_assert_int_eq(
        zlink_setsockopt(server, ZLINK_AFFINITY, &narrow, sizeof narrow), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);

    mask = (uint64_t)1 << 3; /* a fourth thread: there is none */
    ck_assert_int_eq(
        zlink_setsockopt(server, ZLINK_AFFINITY, &mask, sizeof mask), 0);
    ck_assert_int_eq(zlink_bind(server, "tcp://127.0.0.1:*"), -1);
    ck_assert_int_eq(zlink_errno(), EMTHREAD);

    /* Thread 2 only, for the listener and what it accepts. */
    mask = (uint64_t)1 << 2;
    ck_assert_int_eq(
        zlink_setsockopt(server, ZLINK_AFFINITY, &mask, sizeof mask), 0);
    ck_assert_int_eq(zlink_getsockopt(server, ZLINK_AFFINITY, &mask, &len), 0);
    ck_assert_uint_eq(mask, (uint64_t)1 << 2);
    int before[3];
    for (int i = 0; i < 3; i++)
        before[i] = thread_load(ctx, i);
    char endpoint[256];
    zt_bind_tcp(server, endpoint, sizeof endpoint);
    ck_assert_int_eq(thread_load(ctx, 2), before[2] + 1);
    ck_assert_int_eq(thread_load(ctx, 0) + thread_load(ctx, 1),
                     before[0] + before[1]);

    /* A client on thread 0 or 1 only. */
    void *client = zt_socket(ctx, ZLINK_DEALER);
    mask = 3;
    ck_assert_int_eq(
        zlink_setsockopt(client, ZLINK_AFFINITY, &mask, sizeof mask), 0);
    zt_connect(client, endpoint);
    ck_assert_int_eq(thread_load(ctx, 0) + thread_load(ctx, 1),
                     before[0] + before[1] + 1);
    ck_assert_int_eq(zlink_send(client, "x", 1, 0), 1);
    char id[256], body[4];
    ck_assert_int_gt(zlink_recv(server, id, sizeof id, 0), 0);
    ck_assert_int_eq(zlink_recv(server, body, sizeof body, 0), 1);
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

static Suite *legacy_options_suite(void)
{
    Suite *s = suite_create("legacy_options");
    TCase *tc = tcase_create("filters");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, tcp_filter_values);
    tcase_add_test(tc, tcp_filter_admits_and_refuses);
#if defined(ZLINK_WITH_WS)
    tcase_add_test(tc, ws_filter_admits_and_refuses);
#endif
    tcase_add_test(tc, tcp_filter_dual_stack);
#if !defined(_WIN32)
    tcase_add_test(tc, ipc_filters);
    tcase_add_test(tc, ipc_filter_values);
#endif
#if !defined(HAVE_PEER_PID)
    tcase_add_test(tc, ipc_filters_the_os_cannot_serve);
#endif
    tcase_add_test(tc, ipv4only);
    tcase_add_test(tc, multicast_settings);
    tcase_add_test(tc, use_fd_tcp);
#if defined(__linux__)
    tcase_add_test(tc, use_fd_ipc);
#endif
    tcase_add_test(tc, affinity);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(legacy_options_suite());
}
