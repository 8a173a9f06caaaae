/* test_monitor_values.c — the values libzmq's monitor events carry: the OS
 * socket for LISTENING, ACCEPTED, CONNECTED, DISCONNECTED and CLOSED, and
 * the errno for HANDSHAKE_FAILED_NO_DETAIL. */
#include "raw_socket.h"
#include "socket_testutil.h"

typedef struct event {
    int id;
    uint32_t value;
} event;

static void *open_monitor(void *ctx, void *s, const char *name)
{
    ck_assert_int_eq(zlink_socket_monitor(s, name, ZLINK_EVENT_ALL), 0);
    void *mon = zt_socket(ctx, ZLINK_PAIR);
    zt_connect(mon, name);
    return mon;
}

/* Reads events until id comes (others are skipped); false on timeout. */
static bool wait_event(void *mon, int id, event *out)
{
    out->id = id;
    return zl_test_wait_event_value(mon, id, &out->value, ZT_TIMEOUT_MS);
}

/* The local and remote ports of an OS socket this process holds: proof
 * that an event's value is a live socket, and which one. */
static int local_port(uint32_t fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    ck_assert_int_eq(getsockname((raw_fd)fd, (struct sockaddr *)&ss, &len), 0);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static int remote_port(uint32_t fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    ck_assert_int_eq(getpeername((raw_fd)fd, (struct sockaddr *)&ss, &len), 0);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static int port_of(const char *ep)
{
    return atoi(strrchr(ep, ':') + 1);
}

START_TEST(socket_values)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_ROUTER);
    void *client = zt_socket(ctx, ZLINK_DEALER);
    void *smon = open_monitor(ctx, server, "inproc://mon-server");
    void *cmon = open_monitor(ctx, client, "inproc://mon-client");
    char ep[256];
    zt_bind_tcp(server, ep, sizeof ep);
    int port = port_of(ep);
    event listening, accepted, connected, disconnected, closed;
    ck_assert(wait_event(smon, ZLINK_EVENT_LISTENING, &listening));
    ck_assert_int_eq(local_port(listening.value), port);

    zt_connect(client, ep);
    ck_assert(wait_event(cmon, ZLINK_EVENT_CONNECTED, &connected));
    ck_assert(wait_event(smon, ZLINK_EVENT_ACCEPTED, &accepted));
    ck_assert_int_eq(remote_port(connected.value), port);
    ck_assert_int_eq(local_port(accepted.value), port);
    /* The two ends of one connection. */
    ck_assert_int_eq(remote_port(accepted.value), local_port(connected.value));

    zt_close(client);
    ck_assert(wait_event(smon, ZLINK_EVENT_DISCONNECTED, &disconnected));
    ck_assert_uint_eq(disconnected.value, accepted.value);
    ck_assert_int_eq(zlink_unbind(server, ep), 0);
    ck_assert(wait_event(smon, ZLINK_EVENT_CLOSED, &closed));
    ck_assert_uint_eq(closed.value, listening.value);
    zt_close(cmon);
    zt_close(smon);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

/* A refused connect reports the socket it tried with. */
START_TEST(refused_connect_closed)
{
    void *ctx = zt_ctx();
    void *probe = zt_socket(ctx, ZLINK_PAIR);
    char ep[256];
    zt_bind_tcp(probe, ep, sizeof ep);
    zt_close(probe); /* the port is free again, and nobody listens */
    void *client = zt_socket(ctx, ZLINK_DEALER);
    void *cmon = open_monitor(ctx, client, "inproc://mon-refused");
    zt_connect(client, ep);
    event closed;
    ck_assert(wait_event(cmon, ZLINK_EVENT_CLOSED, &closed));
    ck_assert_uint_ne(closed.value, 0);
    ck_assert_uint_ne(closed.value, UINT32_MAX);
    zt_close(cmon);
    zt_close(client);
    zt_term(ctx);
}
END_TEST

/* A peer that closes during the greeting: EPIPE, as libzmq sets for an
 * orderly close. */
START_TEST(no_detail_errno)
{
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_ROUTER);
    void *smon = open_monitor(ctx, server, "inproc://mon-nodetail");
    char ep[256];
    zt_bind_tcp(server, ep, sizeof ep);
    raw_fd fd = raw_connect(port_of(ep));
    uint8_t greeting[64];
    ck_assert(raw_recv_exact(fd, greeting, sizeof greeting, ZT_TIMEOUT_MS));
    raw_close(fd);
    event ev;
    ck_assert(wait_event(smon, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL, &ev));
    ck_assert_uint_eq(ev.value, EPIPE);
    zt_close(smon);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("monitor_values");
    TCase *tc = tcase_create("values");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, socket_values);
    tcase_add_test(tc, refused_connect_closed);
    tcase_add_test(tc, no_detail_errno);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
