/* test_monitor.c — zlink_socket_monitor: events in libzmq's two-frame
 * format (6 bytes: uint16 event and uint32 value in native order, then the
 * endpoint) for a binding socket (LISTENING, ACCEPTED, HANDSHAKE_SUCCEEDED,
 * DISCONNECTED, CLOSED, MONITOR_STOPPED), a connecting one (CONNECT_DELAYED,
 * CONNECTED, CONNECT_RETRIED), BIND_FAILED, handshake failures, filtering
 * and stopping.
 *
 * The OS socket values of LISTENING, ACCEPTED, CONNECTED, CLOSED and
 * DISCONNECTED are checked in test_monitor_values.c. */
#ifndef _WIN32
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

#include "socket_testutil.h"

typedef struct event {
    int id;
    uint32_t value;
    char endpoint[300];
} event;

static const char *event_name(int id)
{
    switch (id) {
    case ZLINK_EVENT_CONNECTED:
        return "CONNECTED";
    case ZLINK_EVENT_CONNECT_DELAYED:
        return "CONNECT_DELAYED";
    case ZLINK_EVENT_CONNECT_RETRIED:
        return "CONNECT_RETRIED";
    case ZLINK_EVENT_LISTENING:
        return "LISTENING";
    case ZLINK_EVENT_BIND_FAILED:
        return "BIND_FAILED";
    case ZLINK_EVENT_ACCEPTED:
        return "ACCEPTED";
    case ZLINK_EVENT_ACCEPT_FAILED:
        return "ACCEPT_FAILED";
    case ZLINK_EVENT_CLOSED:
        return "CLOSED";
    case ZLINK_EVENT_CLOSE_FAILED:
        return "CLOSE_FAILED";
    case ZLINK_EVENT_DISCONNECTED:
        return "DISCONNECTED";
    case ZLINK_EVENT_MONITOR_STOPPED:
        return "MONITOR_STOPPED";
    case ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        return "HANDSHAKE_FAILED_NO_DETAIL";
    case ZLINK_EVENT_HANDSHAKE_SUCCEEDED:
        return "HANDSHAKE_SUCCEEDED";
    case ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        return "HANDSHAKE_FAILED_PROTOCOL";
    case ZLINK_EVENT_HANDSHAKE_FAILED_AUTH:
        return "HANDSHAKE_FAILED_AUTH";
    default:
        return "?";
    }
}

/* The application's end of a monitor: a PAIR connected to its endpoint
 * before anything happens (events sent with no peer are lost, as in
 * libzmq). */
static void *open_monitor(void *ctx, void *s, const char *name, int events)
{
    ck_assert_int_eq(zlink_socket_monitor(s, name, events), 0);
    void *mon = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(mon, name);
    return mon;
}

/* Reads one event, checking the frame format. False on timeout. */
static bool read_event(void *mon, event *ev, int timeout_ms)
{
    zt_set_int(mon, ZLINK_RCVTIMEO, timeout_ms);
    zlink_msg_t frame;
    zlink_msg_init(&frame);
    if (zlink_msg_recv(&frame, mon, 0) < 0) {
        ck_assert_int_eq(zlink_errno(), EAGAIN);
        zlink_msg_close(&frame);
        return false;
    }
    ck_assert_uint_eq(zlink_msg_size(&frame), 6);
    ck_assert_int_eq(zlink_msg_more(&frame), 1);
    const uint8_t *data = zlink_msg_data(&frame);
    uint16_t id;
    memcpy(&id, data, 2);
    memcpy(&ev->value, data + 2, 4);
    ev->id = id;
    zlink_msg_close(&frame);
    zlink_msg_init(&frame);
    ck_assert_int_ge(zlink_msg_recv(&frame, mon, 0), 0);
    ck_assert_int_eq(zlink_msg_more(&frame), 0);
    size_t n = zlink_msg_size(&frame);
    ck_assert_uint_lt(n, sizeof ev->endpoint);
    memcpy(ev->endpoint, zlink_msg_data(&frame), n);
    ev->endpoint[n] = '\0';
    zlink_msg_close(&frame);
    return true;
}

/* Reads events until `id`; every event on the way must be in `allowed`
 * (a 0-terminated list). */
static void expect_event(void *mon, int id, const int *allowed, event *out)
{
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    for (;;) {
        event ev;
        int left = (int)(deadline - zl_test_now_ms());
        ck_assert_msg(left > 0 && read_event(mon, &ev, left), "no %s event",
                      event_name(id));
        if (ev.id == id) {
            if (out)
                *out = ev;
            return;
        }
        bool ok = false;
        for (const int *a = allowed; a && *a; a++)
            ok = ok || *a == ev.id;
        ck_assert_msg(ok, "%s (0x%x) while waiting for %s", event_name(ev.id),
                      ev.id, event_name(id));
    }
}

static void expect_no_event(void *mon, int quiet_ms)
{
    event ev;
    ck_assert_msg(!read_event(mon, &ev, quiet_ms), "unexpected %s",
                  event_name(ev.id));
}

/* ---- the binding side ---- */

START_TEST(monitor_bound_socket)
{
    int transport = _i == 0 ? ZT_TCP4 : ZT_IPC;
    char ep[300];
    if (!zt_endpoint(transport, ep, sizeof ep))
        return;
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_DEALER);
    void *mon =
        open_monitor(ctx, server, "inproc://mon-server", ZLINK_EVENT_ALL);
    zt_bind(server, ep);
    zt_last_endpoint(server, ep, sizeof ep);
    event ev;
    expect_event(mon, ZLINK_EVENT_LISTENING, NULL, &ev);
    ck_assert_str_eq(ev.endpoint, ep);

    void *client = zt_socket(ctx, ZLINK_DEALER);
    zt_connect(client, ep);
    expect_event(mon, ZLINK_EVENT_ACCEPTED, NULL, &ev);
    ck_assert_str_eq(ev.endpoint, ep);
    expect_event(mon, ZLINK_EVENT_HANDSHAKE_SUCCEEDED, NULL, &ev);
    ck_assert_uint_eq(ev.value, 0);
    ck_assert_str_eq(ev.endpoint, ep);
    zt_send_str(client, "x", 0);
    zt_recv_str(server, "x");

    /* The peer leaves. */
    zt_close(client);
    expect_event(mon, ZLINK_EVENT_DISCONNECTED, NULL, &ev);
    ck_assert_str_eq(ev.endpoint, ep);

    /* Unbinding closes the listener. */
    ck_assert_int_eq(zlink_unbind(server, ep), 0);
    expect_event(mon, ZLINK_EVENT_CLOSED, NULL, &ev);
    ck_assert_str_eq(ev.endpoint, ep);

    /* Closing: a listener's CLOSED first, then MONITOR_STOPPED, last. */
    zt_bind(server, ep);
    expect_event(mon, ZLINK_EVENT_LISTENING, NULL, NULL);
    zt_close(server);
    expect_event(mon, ZLINK_EVENT_CLOSED, NULL, NULL);
    expect_event(mon, ZLINK_EVENT_MONITOR_STOPPED, NULL, &ev);
    ck_assert_uint_eq(ev.value, 0);
    expect_no_event(mon, 100);
    zt_close(mon);
    zt_term(ctx);
}
END_TEST

/* ---- the connecting side ---- */

START_TEST(monitor_connecting_socket)
{
    void *ctx = zt_ctx();
    void *server_ctx = zt_ctx();
    void *server = zt_socket(server_ctx, ZLINK_DEALER);
    char ep[300];
    zt_bind_tcp(server, ep, sizeof ep);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(client, ZLINK_RECONNECT_IVL, 50);
    void *mon =
        open_monitor(ctx, client, "inproc://mon-client", ZLINK_EVENT_ALL);
    zt_connect(client, ep);
    event ev;
    expect_event(mon, ZLINK_EVENT_CONNECT_DELAYED, NULL, &ev);
    ck_assert_str_eq(ev.endpoint, ep);
    static const int delayed[] = {ZLINK_EVENT_CONNECT_DELAYED, 0};
    expect_event(mon, ZLINK_EVENT_CONNECTED, delayed, &ev);
    ck_assert_str_eq(ev.endpoint, ep);
    expect_event(mon, ZLINK_EVENT_HANDSHAKE_SUCCEEDED, NULL, &ev);
    ck_assert_str_eq(ev.endpoint, ep);
    zt_send_str(client, "x", 0);
    zt_recv_str(server, "x");

    /* The server goes away: DISCONNECTED, then refused retries, each
     * announced with the interval as its value (libzmq adds up to one
     * more interval at random). */
    zt_close(server);
    zt_term(server_ctx);
    expect_event(mon, ZLINK_EVENT_DISCONNECTED, NULL, &ev);
    ck_assert_str_eq(ev.endpoint, ep);
    static const int retrying[] = {ZLINK_EVENT_CONNECT_DELAYED,
                                   ZLINK_EVENT_CLOSED, 0};
    for (int n = 0; n < 2; n++) {
        expect_event(mon, ZLINK_EVENT_CONNECT_RETRIED, retrying, &ev);
        ck_assert_uint_ge(ev.value, 50);
        ck_assert_uint_le(ev.value, 100);
        ck_assert_str_eq(ev.endpoint, ep);
    }

    /* It comes back: connected again. */
    server = zt_socket(ctx, ZLINK_DEALER);
    zt_bind_when_free(server, ep, ZT_TIMEOUT_MS);
    static const int retrying_more[] = {ZLINK_EVENT_CONNECT_DELAYED,
                                        ZLINK_EVENT_CLOSED,
                                        ZLINK_EVENT_CONNECT_RETRIED, 0};
    expect_event(mon, ZLINK_EVENT_CONNECTED, retrying_more, NULL);
    expect_event(mon, ZLINK_EVENT_HANDSHAKE_SUCCEEDED, NULL, NULL);
    zt_close(client);
    static const int closing[] = {ZLINK_EVENT_CLOSED, ZLINK_EVENT_DISCONNECTED,
                                  0};
    expect_event(mon, ZLINK_EVENT_MONITOR_STOPPED, closing, NULL);
    zt_close(server);
    zt_close(mon);
    zt_term(ctx);
}
END_TEST

/* As libzmq, CONNECT_DELAYED means the connect waits on the network
 * (EINPROGRESS). A local ipc connect ends at once: CONNECTED comes first,
 * and a refused one is CLOSED at once. */
START_TEST(monitor_ipc_connect_not_delayed)
{
    if (!zt_have_ipc())
        return;
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_DEALER);
    char ep[300];
    zt_bind(server, "ipc://*");
    zt_last_endpoint(server, ep, sizeof ep);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(client, ZLINK_RECONNECT_IVL, 20);
    void *mon = open_monitor(ctx, client, "inproc://mon-ipc", ZLINK_EVENT_ALL);
    zt_connect(client, ep);
    expect_event(mon, ZLINK_EVENT_CONNECTED, NULL, NULL);
    expect_event(mon, ZLINK_EVENT_HANDSHAKE_SUCCEEDED, NULL, NULL);

    /* The path no longer listens: refused, with no delay announced. */
    zt_close(server);
    expect_event(mon, ZLINK_EVENT_DISCONNECTED, NULL, NULL);
    static const int refused[] = {ZLINK_EVENT_CLOSED, 0};
    for (int n = 0; n < 3; n++)
        expect_event(mon, ZLINK_EVENT_CONNECT_RETRIED, refused, NULL);
    zt_close(client);
    zt_close(mon);
    zt_term(ctx);
}
END_TEST

/* Nobody listens: CONNECT_RETRIED again and again, never CONNECTED. */
START_TEST(monitor_connect_refused)
{
    void *ctx = zt_ctx();
    char ep[300];
    void *probe = zt_socket(ctx, ZLINK_PAIR);
    zt_bind_tcp(probe, ep, sizeof ep);
    zt_close(probe);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(client, ZLINK_RECONNECT_IVL, 30);
    void *mon =
        open_monitor(ctx, client, "inproc://mon-refused", ZLINK_EVENT_ALL);
    zt_connect(client, ep);
    static const int retrying[] = {ZLINK_EVENT_CONNECT_DELAYED,
                                   ZLINK_EVENT_CLOSED, 0};
    for (int n = 0; n < 3; n++) {
        event ev;
        expect_event(mon, ZLINK_EVENT_CONNECT_RETRIED, retrying, &ev);
        ck_assert_uint_ge(ev.value, 30);
        ck_assert_uint_le(ev.value, 60);
    }
    zt_close(client);
    /* A refused connect reports its CLOSED and the next CONNECT_RETRIED
     * together: the close may come after either. */
    static const int closing[] = {ZLINK_EVENT_CONNECT_DELAYED,
                                  ZLINK_EVENT_CLOSED,
                                  ZLINK_EVENT_CONNECT_RETRIED, 0};
    expect_event(mon, ZLINK_EVENT_MONITOR_STOPPED, closing, NULL);
    zt_close(mon);
    zt_term(ctx);
}
END_TEST

/* As libzmq, the wait before a reconnect is RECONNECT_IVL and a random part
 * of it more, so that the clients of a restarted server spread out. */
static void expect_jittered(uint64_t value, uint64_t ivl)
{
    ck_assert_uint_ge(value, ivl);
    ck_assert_uint_lt(value, 2 * ivl);
}

/* As libzmq, CONNECT_RETRIED comes when the retry is scheduled, carrying
 * the interval, not when it fires: with a 60 s interval the monitor still
 * hears of it at once, after a refused connect and after a disconnect. */
START_TEST(monitor_retry_reported_when_scheduled)
{
    enum { LONG_IVL = 60000 };
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_DEALER);
    char ep[300];
    zt_bind_tcp(server, ep, sizeof ep);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(client, ZLINK_RECONNECT_IVL, LONG_IVL);
    void *mon =
        open_monitor(ctx, client, "inproc://mon-long-ivl", ZLINK_EVENT_ALL);
    zt_connect(client, ep);
    static const int connecting[] = {ZLINK_EVENT_CONNECT_DELAYED,
                                     ZLINK_EVENT_CONNECTED, 0};
    expect_event(mon, ZLINK_EVENT_HANDSHAKE_SUCCEEDED, connecting, NULL);

    /* The server goes: the retry is a minute away, its event is not. */
    uint64_t start = zl_test_now_ms();
    zt_close(server);
    expect_event(mon, ZLINK_EVENT_DISCONNECTED, NULL, NULL);
    event ev;
    expect_event(mon, ZLINK_EVENT_CONNECT_RETRIED, NULL, &ev);
    expect_jittered(ev.value, LONG_IVL);
    ck_assert_str_eq(ev.endpoint, ep);
    ck_assert_uint_lt(zl_test_now_ms() - start, ZT_TIMEOUT_MS);
    /* And only once: the next one waits for that retry. */
    expect_no_event(mon, 300);
    zt_close(client);
    static const int closing[] = {ZLINK_EVENT_CLOSED, 0};
    expect_event(mon, ZLINK_EVENT_MONITOR_STOPPED, closing, NULL);
    zt_close(mon);

    /* Nobody listens from the start: the refused connect schedules the
     * first retry, reported at once. */
    client = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(client, ZLINK_RECONNECT_IVL, LONG_IVL);
    mon = open_monitor(ctx, client, "inproc://mon-long-ivl-refused",
                       ZLINK_EVENT_ALL);
    zt_connect(client, ep);
    static const int refused[] = {ZLINK_EVENT_CONNECT_DELAYED,
                                  ZLINK_EVENT_CLOSED, 0};
    expect_event(mon, ZLINK_EVENT_CONNECT_RETRIED, refused, &ev);
    expect_jittered(ev.value, LONG_IVL);
    expect_no_event(mon, 300);
    zt_close(client);
    expect_event(mon, ZLINK_EVENT_MONITOR_STOPPED, refused, NULL);
    zt_close(mon);
    zt_term(ctx);
}
END_TEST

/* RECONNECT_IVL_MAX: the interval doubles up to the maximum. */
START_TEST(monitor_reconnect_backoff)
{
    void *ctx = zt_ctx();
    char ep[300];
    void *probe = zt_socket(ctx, ZLINK_PAIR);
    zt_bind_tcp(probe, ep, sizeof ep);
    zt_close(probe);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(client, ZLINK_RECONNECT_IVL, 20);
    zt_set_int(client, ZLINK_RECONNECT_IVL_MAX, 80);
    void *mon = open_monitor(ctx, client, "inproc://mon-backoff",
                             ZLINK_EVENT_CONNECT_RETRIED);
    zt_connect(client, ep);
    uint32_t previous = 0;
    for (int n = 0; n < 5; n++) {
        event ev;
        expect_event(mon, ZLINK_EVENT_CONNECT_RETRIED, NULL, &ev);
        /* libzmq: the current interval plus up to one base interval. */
        ck_assert_uint_ge(ev.value, 20);
        ck_assert_uint_le(ev.value, 80 + 20);
        if (n > 0)
            ck_assert_uint_ge(ev.value + 20, previous);
        previous = ev.value;
    }
    ck_assert_uint_ge(previous, 80);
    zt_close(client);
    zt_close(mon);
    zt_term(ctx);
}
END_TEST

/* Clients of the same dead endpoint wait different intervals (libzmq's
 * jitter): a server that restarts does not get them all at once. */
START_TEST(monitor_retry_jitter)
{
    enum { CLIENTS = 8, IVL = 1000 };
    void *ctx = zt_ctx();
    char ep[300];
    void *probe = zt_socket(ctx, ZLINK_PAIR);
    zt_bind_tcp(probe, ep, sizeof ep);
    zt_close(probe);
    void *clients[CLIENTS], *mons[CLIENTS];
    uint64_t values[CLIENTS];
    bool differ = false;
    for (int i = 0; i < CLIENTS; i++) {
        char name[64];
        snprintf(name, sizeof name, "inproc://mon-jitter-%d", i);
        clients[i] = zt_socket(ctx, ZLINK_DEALER);
        zt_set_int(clients[i], ZLINK_RECONNECT_IVL, IVL);
        mons[i] =
            open_monitor(ctx, clients[i], name, ZLINK_EVENT_CONNECT_RETRIED);
        zt_connect(clients[i], ep);
        event ev;
        expect_event(mons[i], ZLINK_EVENT_CONNECT_RETRIED, NULL, &ev);
        expect_jittered(ev.value, IVL);
        values[i] = ev.value;
        if (values[i] != values[0])
            differ = true;
    }
    ck_assert_msg(differ, "every client waits %u ms", (unsigned)values[0]);
    for (int i = 0; i < CLIENTS; i++) {
        zt_close(clients[i]);
        zt_close(mons[i]);
    }
    zt_term(ctx);
}
END_TEST

START_TEST(monitor_bind_failed)
{
    void *ctx = zt_ctx();
    void *holder = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    zt_bind_tcp(holder, ep, sizeof ep);
    void *s = zt_socket(ctx, ZLINK_PAIR);
    void *mon = open_monitor(ctx, s, "inproc://mon-bind", ZLINK_EVENT_ALL);
    zt_expect_errno(zlink_bind(s, ep), EADDRINUSE);
    event ev;
    expect_event(mon, ZLINK_EVENT_BIND_FAILED, NULL, &ev);
    ck_assert_uint_eq(ev.value, (uint32_t)EADDRINUSE);
    ck_assert_str_eq(ev.endpoint, ep);
    zt_close(s);
    expect_event(mon, ZLINK_EVENT_MONITOR_STOPPED, NULL, NULL);
    zt_close(mon);
    zt_close(holder);
    zt_term(ctx);
}
END_TEST

/* Only the events asked for; a stopped monitor says so and then nothing. */
START_TEST(monitor_filter_and_stop)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_DEALER);
    char ep[300];
    zt_bind_tcp(server, ep, sizeof ep);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    void *mon =
        open_monitor(ctx, client, "inproc://mon-filter",
                     ZLINK_EVENT_CONNECTED | ZLINK_EVENT_MONITOR_STOPPED);
    zt_connect(client, ep);
    expect_event(mon, ZLINK_EVENT_CONNECTED, NULL, NULL);
    zt_send_str(client, "x", 0);
    zt_recv_str(server, "x");
    expect_no_event(mon, 100); /* no HANDSHAKE_SUCCEEDED */
    ck_assert_int_eq(zlink_socket_monitor(client, NULL, 0), 0);
    expect_event(mon, ZLINK_EVENT_MONITOR_STOPPED, NULL, NULL);
    zt_close(server);
    expect_no_event(mon, 200); /* no DISCONNECTED: stopped */
    zt_close(client);
    zt_close(mon);
    zt_term(ctx);
}
END_TEST

/* A new monitor replaces the previous one. */
START_TEST(monitor_replaced)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_DEALER);
    void *first = open_monitor(ctx, s, "inproc://mon-first", ZLINK_EVENT_ALL);
    void *second = open_monitor(ctx, s, "inproc://mon-second", ZLINK_EVENT_ALL);
    expect_event(first, ZLINK_EVENT_MONITOR_STOPPED, NULL, NULL);
    zt_bind(s, "tcp://127.0.0.1:*");
    expect_event(second, ZLINK_EVENT_LISTENING, NULL, NULL);
    expect_no_event(first, 50);
    zt_close(s);
    zt_close(first);
    zt_close(second);
    zt_term(ctx);
}
END_TEST

START_TEST(monitor_errors)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_DEALER);
    zt_expect_errno(
        zlink_socket_monitor(s, "tcp://127.0.0.1:5555", ZLINK_EVENT_ALL),
        EPROTONOSUPPORT);
    zt_expect_errno(zlink_socket_monitor(s, "nonsense", ZLINK_EVENT_ALL),
                    EINVAL);
    void *other = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(other, "inproc://taken");
    zt_expect_errno(zlink_socket_monitor(s, "inproc://taken", ZLINK_EVENT_ALL),
                    EADDRINUSE);
    zt_expect_errno(zlink_socket_monitor(NULL, "inproc://x", ZLINK_EVENT_ALL),
                    ENOTSOCK);
    /* Events beyond the first version's 16 bits, as libzmq refuses them. */
    zt_expect_errno(zlink_socket_monitor(s, "inproc://wide", (int)0xFFFFFFFFu),
                    EINVAL);
    zt_expect_errno(zlink_socket_monitor(s, "inproc://wide", 0x10000), EINVAL);
    zt_close(other);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

#ifndef _WIN32
/* A peer that connects and stays silent fails its handshake after
 * HANDSHAKE_IVL. */
START_TEST(monitor_handshake_timeout)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(server, ZLINK_HANDSHAKE_IVL, 100);
    void *mon = open_monitor(ctx, server, "inproc://mon-hs", ZLINK_EVENT_ALL);
    char ep[300];
    zt_bind_tcp(server, ep, sizeof ep);
    expect_event(mon, ZLINK_EVENT_LISTENING, NULL, NULL);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons((uint16_t)atoi(strrchr(ep, ':') + 1));
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    expect_event(mon, ZLINK_EVENT_ACCEPTED, NULL, NULL);
    expect_event(mon, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL, NULL, NULL);
    expect_event(mon, ZLINK_EVENT_DISCONNECTED, NULL, NULL);
    close(fd);
    zt_close(server);
    zt_close(mon);
    zt_term(ctx);
}
END_TEST
#endif

static Suite *monitor_suite(void)
{
    Suite *s = suite_create("monitor");
    TCase *tc = tcase_create("monitor");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, monitor_bound_socket, 0, 2);
    tcase_add_test(tc, monitor_connecting_socket);
    tcase_add_test(tc, monitor_connect_refused);
    tcase_add_test(tc, monitor_ipc_connect_not_delayed);
    tcase_add_test(tc, monitor_reconnect_backoff);
    tcase_add_test(tc, monitor_retry_jitter);
    tcase_add_test(tc, monitor_retry_reported_when_scheduled);
    tcase_add_test(tc, monitor_bind_failed);
    tcase_add_test(tc, monitor_filter_and_stop);
    tcase_add_test(tc, monitor_replaced);
    tcase_add_test(tc, monitor_errors);
#ifndef _WIN32
    tcase_add_test(tc, monitor_handshake_timeout);
#endif
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(monitor_suite());
}
