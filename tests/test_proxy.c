/* test_proxy.c — zlink_proxy and zlink_proxy_steerable on a thread of their
 * own: an XSUB↔XPUB forwarder with a capture socket, a ROUTER↔DEALER broker,
 * the control commands, and the ETERM exit when the context shuts down. */
#include <stdio.h>
#include <string.h>
#include <uv.h>
#include <zlink.h>

#include "testutil.h"

#define WAIT_MS 5000

enum { TCP, IPC, INPROC, TRANSPORTS };

static void *ctx;

static void *sock(int type)
{
    void *s = zlink_socket(ctx, type);
    ck_assert_ptr_nonnull(s);
    zl_test_set_int(s, ZLINK_LINGER, 0);
    zl_test_set_int(s, ZLINK_RCVTIMEO, WAIT_MS);
    zl_test_set_int(s, ZLINK_SNDTIMEO, WAIT_MS);
    return s;
}

static bool transport_usable(int t)
{
    if (t == IPC && (!zlink_has("ipc") || zl_test_skip_ipc())) {
        printf("proxy: ipc not available, case skipped\n");
        return false;
    }
    return true;
}

static void bind_on(void *s, int t, char *ep, size_t cap)
{
    static int inproc_names;
    char want[512];
    if (t == TCP)
        snprintf(want, sizeof want, "tcp://127.0.0.1:*");
    else if (t == IPC)
        zl_test_ipc_endpoint(want, sizeof want);
    else
        snprintf(want, sizeof want, "inproc://proxy-%d", ++inproc_names);
    ck_assert_msg(zlink_bind(s, want) == 0, "bind %s: %s", want,
                  zlink_strerror(zlink_errno()));
    size_t len = cap;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, ep, &len), 0);
}

static void connect_to(void *s, const char *ep)
{
    ck_assert_msg(zlink_connect(s, ep) == 0, "connect %s: %s", ep,
                  zlink_strerror(zlink_errno()));
}

static void send_str(void *s, const char *str, int flags)
{
    int rc = zlink_send(s, str, strlen(str), flags);
    ck_assert_msg(rc == (int)strlen(str), "send: %s",
                  zlink_strerror(zlink_errno()));
}

static int recv_buf(void *s, char *buf, size_t cap)
{
    int n = zlink_recv(s, buf, cap - 1, 0);
    ck_assert_msg(n >= 0, "recv: %s", zlink_strerror(zlink_errno()));
    ck_assert_int_lt(n, (int)cap);
    buf[n] = '\0';
    return n;
}

static bool rcvmore(void *s)
{
    int more = 0;
    size_t len = sizeof more;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_RCVMORE, &more, &len), 0);
    return more != 0;
}

static void expect_str(void *s, const char *str, bool more)
{
    char buf[256];
    recv_buf(s, buf, sizeof buf);
    ck_assert_str_eq(buf, str);
    ck_assert_int_eq(rcvmore(s), more);
}

static bool poll_in(void *s, int wait_ms)
{
    zlink_pollitem_t item = {s, 0, ZLINK_POLLIN, 0};
    int rc = zlink_poll(&item, 1, wait_ms);
    ck_assert_int_ge(rc, 0);
    return rc > 0;
}

/* ---- the proxy's thread ------------------------------------------------ */

/* The proxy's sockets belong to its thread from the start until it closes
 * them after the proxy returns. */
typedef struct proxy_run {
    void *frontend, *backend, *capture, *control;
    int rc, err;
    uv_thread_t thread;
} proxy_run;

static void proxy_main(void *arg)
{
    proxy_run *r = arg;
    if (r->control != NULL)
        r->rc = zlink_proxy_steerable(r->frontend, r->backend, r->capture,
                                      r->control);
    else
        r->rc = zlink_proxy(r->frontend, r->backend, r->capture);
    r->err = zlink_errno();
    void *sockets[] = {r->frontend, r->backend, r->capture, r->control};
    for (int i = 0; i < 4; i++)
        if (sockets[i] != NULL && (i != 1 || sockets[1] != sockets[0]))
            zlink_close(sockets[i]);
}

static void proxy_start(proxy_run *r)
{
    ck_assert_int_eq(uv_thread_create(&r->thread, proxy_main, r), 0);
}

static void proxy_join(proxy_run *r)
{
    ck_assert_int_eq(uv_thread_join(&r->thread), 0);
}

/* Ends a proxy the way an application does: the context shuts down, the
 * proxy returns -1 with ETERM, and every socket is closed. */
static void shut_down(proxy_run *r, void **mine, int count)
{
    ck_assert_int_eq(zlink_ctx_shutdown(ctx), 0);
    proxy_join(r);
    ck_assert_int_eq(r->rc, -1);
    ck_assert_int_eq(r->err, ETERM);
    for (int i = 0; i < count; i++)
        ck_assert_int_eq(zlink_close(mine[i]), 0);
    ck_assert_int_eq(zlink_ctx_term(ctx), 0);
    ctx = NULL;
}

/* ---- XSUB ↔ XPUB --------------------------------------------------------- */

/* PUB → XSUB [proxy] XPUB → SUB: subscriptions travel up, matching data
 * down, and the capture socket sees both. */
START_TEST(forwarder)
{
    if (!transport_usable(_i))
        return;
    ctx = zlink_ctx_new();
    char up[512], down[512], cap[512];
    proxy_run r = {0};
    r.frontend = sock(ZLINK_XSUB);
    r.backend = sock(ZLINK_XPUB);
    r.capture = sock(ZLINK_PAIR);
    bind_on(r.frontend, _i, up, sizeof up);
    bind_on(r.backend, _i, down, sizeof down);
    bind_on(r.capture, INPROC, cap, sizeof cap);
    void *tap = sock(ZLINK_PAIR);
    connect_to(tap, cap);
    proxy_start(&r);

    void *pub = sock(ZLINK_PUB);
    connect_to(pub, up);
    void *sub = sock(ZLINK_SUB);
    ck_assert_int_eq(zlink_setsockopt(sub, ZLINK_SUBSCRIBE, "A", 1), 0);
    ck_assert_int_eq(zlink_setsockopt(sub, ZLINK_SUBSCRIBE, "S", 1), 0);
    connect_to(sub, down);

    /* Until the subscriptions have made it up, nothing comes down. */
    uint64_t deadline = zl_test_now_ms() + WAIT_MS;
    do {
        ck_assert_msg(zl_test_now_ms() < deadline, "nothing came through");
        send_str(pub, "S", 0);
    } while (!poll_in(sub, 5));
    send_str(pub, "B1", ZLINK_SNDMORE);
    send_str(pub, "b", 0);
    send_str(pub, "A1", ZLINK_SNDMORE);
    send_str(pub, "a", 0);
    char buf[64];
    do
        recv_buf(sub, buf, sizeof buf);
    while (strcmp(buf, "S") == 0);
    ck_assert_str_eq(buf, "A1");
    ck_assert(rcvmore(sub));
    expect_str(sub, "a", false);

    /* The capture saw the subscription going up and the data coming down,
     * parts and all. */
    bool saw_subscription = false;
    for (;;) {
        recv_buf(tap, buf, sizeof buf);
        if (buf[0] == 1 && buf[1] == 'A')
            saw_subscription = true;
        if (strcmp(buf, "A1") == 0)
            break;
    }
    ck_assert(saw_subscription);
    ck_assert(rcvmore(tap));
    expect_str(tap, "a", false);

    void *mine[] = {pub, sub, tap};
    shut_down(&r, mine, 3);
}
END_TEST

/* ---- ROUTER ↔ DEALER --------------------------------------------------- */

/* DEALER clients → ROUTER [proxy] DEALER → a DEALER worker that echoes:
 * each reply finds its way back to the client that asked. */
START_TEST(broker)
{
    if (!transport_usable(_i))
        return;
    ctx = zlink_ctx_new();
    char front[512], back[512];
    proxy_run r = {0};
    r.frontend = sock(ZLINK_ROUTER);
    r.backend = sock(ZLINK_DEALER);
    bind_on(r.frontend, _i, front, sizeof front);
    bind_on(r.backend, _i, back, sizeof back);
    proxy_start(&r);

    void *worker = sock(ZLINK_DEALER);
    connect_to(worker, back);
    void *clients[2];
    for (int c = 0; c < 2; c++) {
        clients[c] = sock(ZLINK_DEALER);
        connect_to(clients[c], front);
    }
    for (int round = 0; round < 3; round++) {
        for (int c = 0; c < 2; c++) {
            char body[32];
            snprintf(body, sizeof body, "client %d round %d", c, round);
            send_str(clients[c], "request", ZLINK_SNDMORE);
            send_str(clients[c], body, 0);
        }
        /* The worker sees the client's routing id in front, and sends the
         * whole message back. */
        for (int c = 0; c < 2; c++) {
            zlink_msg_t parts[3];
            int n = 0;
            do {
                ck_assert_int_lt(n, 3);
                zlink_msg_init(&parts[n]);
                ck_assert_int_ge(zlink_msg_recv(&parts[n], worker, 0), 0);
            } while (zlink_msg_more(&parts[n++]));
            ck_assert_int_eq(n, 3);
            for (int i = 0; i < n; i++)
                ck_assert_int_ge(zlink_msg_send(&parts[i], worker,
                                                i < n - 1 ? ZLINK_SNDMORE : 0),
                                 0);
        }
        for (int c = 0; c < 2; c++) {
            char body[32];
            snprintf(body, sizeof body, "client %d round %d", c, round);
            expect_str(clients[c], "request", true);
            expect_str(clients[c], body, false);
        }
    }
    void *mine[] = {worker, clients[0], clients[1]};
    shut_down(&r, mine, 3);
}
END_TEST

/* ---- steering ---------------------------------------------------------- */

static uint64_t recv_u64(void *s, bool more)
{
    uint64_t value = 0;
    ck_assert_int_eq(zlink_recv(s, &value, sizeof value, 0), sizeof value);
    ck_assert_int_eq(rcvmore(s), more);
    return value;
}

START_TEST(steerable)
{
    ctx = zlink_ctx_new();
    char front[512], back[512], control[512];
    proxy_run r = {0};
    r.frontend = sock(ZLINK_PAIR);
    r.backend = sock(ZLINK_PAIR);
    r.control = sock(ZLINK_PAIR);
    bind_on(r.frontend, INPROC, front, sizeof front);
    bind_on(r.backend, INPROC, back, sizeof back);
    bind_on(r.control, INPROC, control, sizeof control);
    void *fpeer = sock(ZLINK_PAIR);
    void *bpeer = sock(ZLINK_PAIR);
    void *cpeer = sock(ZLINK_PAIR);
    connect_to(fpeer, front);
    connect_to(bpeer, back);
    connect_to(cpeer, control);
    proxy_start(&r);

    send_str(fpeer, "one", 0);
    expect_str(bpeer, "one", false);
    send_str(bpeer, "back", 0);
    expect_str(fpeer, "back", false);

    /* PAUSE holds messages where they are until RESUME. The command is
     * queued before the message, and the proxy takes commands first. */
    send_str(cpeer, "PAUSE", 0);
    send_str(fpeer, "two", 0);
    ck_assert(!poll_in(bpeer, 100));
    send_str(cpeer, "RESUME", 0);
    expect_str(bpeer, "two", false);

    /* Anything else is ignored. */
    send_str(cpeer, "NONSENSE", 0);

    /* frontend in, bytes in, out, bytes out; then the backend's. */
    send_str(cpeer, "STATISTICS", 0);
    ck_assert_uint_eq(recv_u64(cpeer, true), 2);
    ck_assert_uint_eq(recv_u64(cpeer, true), 6);
    ck_assert_uint_eq(recv_u64(cpeer, true), 1);
    ck_assert_uint_eq(recv_u64(cpeer, true), 4);
    ck_assert_uint_eq(recv_u64(cpeer, true), 1);
    ck_assert_uint_eq(recv_u64(cpeer, true), 4);
    ck_assert_uint_eq(recv_u64(cpeer, true), 2);
    ck_assert_uint_eq(recv_u64(cpeer, false), 6);

    send_str(cpeer, "TERMINATE", 0);
    proxy_join(&r);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(zlink_close(fpeer), 0);
    ck_assert_int_eq(zlink_close(bpeer), 0);
    ck_assert_int_eq(zlink_close(cpeer), 0);
    ck_assert_int_eq(zlink_ctx_term(ctx), 0);
    ctx = NULL;
}
END_TEST

/* A target with no room makes its direction wait, without stopping the
 * other direction or the control socket. */
START_TEST(blocked_direction)
{
    ctx = zlink_ctx_new();
    char front[512], back[512], control[512];
    proxy_run r = {0};
    r.frontend = sock(ZLINK_PAIR);
    r.backend = sock(ZLINK_DEALER); /* no peer yet: no room */
    r.control = sock(ZLINK_PAIR);
    bind_on(r.frontend, INPROC, front, sizeof front);
    bind_on(r.backend, INPROC, back, sizeof back);
    bind_on(r.control, INPROC, control, sizeof control);
    void *fpeer = sock(ZLINK_PAIR);
    void *cpeer = sock(ZLINK_PAIR);
    connect_to(fpeer, front);
    connect_to(cpeer, control);
    proxy_start(&r);

    send_str(fpeer, "waiting", 0);
    send_str(cpeer, "STATISTICS", 0);
    for (int i = 0; i < 8; i++)
        ck_assert_uint_eq(recv_u64(cpeer, i < 7), 0);
    void *bpeer = sock(ZLINK_DEALER);
    connect_to(bpeer, back);
    expect_str(bpeer, "waiting", false);

    send_str(cpeer, "TERMINATE", 0);
    proxy_join(&r);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(zlink_close(fpeer), 0);
    ck_assert_int_eq(zlink_close(bpeer), 0);
    ck_assert_int_eq(zlink_close(cpeer), 0);
    ck_assert_int_eq(zlink_ctx_term(ctx), 0);
    ctx = NULL;
}
END_TEST

START_TEST(bad_arguments)
{
    ck_assert_int_eq(zlink_proxy(NULL, NULL, NULL), -1);
    ck_assert_int_eq(zlink_errno(), EFAULT);
    int not_a_socket = 0;
    ck_assert_int_eq(zlink_proxy(&not_a_socket, &not_a_socket, NULL), -1);
    ck_assert_int_eq(zlink_errno(), ENOTSOCK);
}
END_TEST

#define ADD_CASE(suite, name, test, ways)                                      \
    do {                                                                       \
        TCase *tc = tcase_create(name);                                        \
        tcase_set_timeout(tc, 60);                                             \
        tcase_add_loop_test(tc, test, 0, ways);                                \
        suite_add_tcase(suite, tc);                                            \
    } while (0)

static Suite *suite(void)
{
    Suite *s = suite_create("proxy");
    ADD_CASE(s, "forwarder", forwarder, TRANSPORTS);
    ADD_CASE(s, "broker", broker, TRANSPORTS);
    ADD_CASE(s, "steerable", steerable, 1);
    ADD_CASE(s, "blocked direction", blocked_direction, 1);
    ADD_CASE(s, "bad arguments", bad_arguments, 1);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
