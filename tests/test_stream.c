/* test_stream.c — STREAM sockets (libzmq's ZMQ_STREAM): raw connections
 * with plain TCP peers on either side, the empty messages that announce a
 * connection and its end, closing one from the application, the errors
 * libzmq gives, and no loss under backpressure. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#include "raw_socket.h"
#include "testutil.h"

#define WAIT_MS 5000

typedef struct stream_server {
    void *ctx, *socket, *monitor;
    int port;
} stream_server;

static void *stream_socket(void *ctx)
{
    void *s = zlink_socket(ctx, ZLINK_STREAM);
    ck_assert_ptr_nonnull(s);
    zl_test_set_int(s, ZLINK_LINGER, 0);
    zl_test_set_int(s, ZLINK_RCVTIMEO, WAIT_MS);
    zl_test_set_int(s, ZLINK_SNDTIMEO, WAIT_MS);
    return s;
}

static void server_open(stream_server *sv, bool notify)
{
    sv->ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(sv->ctx);
    sv->socket = stream_socket(sv->ctx);
    if (!notify)
        zl_test_set_int(sv->socket, ZLINK_STREAM_NOTIFY, 0);
    sv->monitor = zl_test_monitor_open(
        sv->ctx, sv->socket, "inproc://stream-events", ZLINK_EVENT_ALL);
    ck_assert_int_eq(zlink_bind(sv->socket, "tcp://127.0.0.1:*"), 0);
    char endpoint[64];
    size_t len = sizeof endpoint;
    ck_assert_int_eq(
        zlink_getsockopt(sv->socket, ZLINK_LAST_ENDPOINT, endpoint, &len), 0);
    sv->port = atoi(strrchr(endpoint, ':') + 1);
}

static void server_close(stream_server *sv)
{
    zlink_close(sv->monitor);
    zlink_close(sv->socket);
    ck_assert_int_eq(zl_test_ctx_term(sv->ctx), 0);
}

/* One message: the id frame (with MORE) into id, the bytes into data.
 * Returns the bytes' size. */
static size_t recv_message(void *socket, zlink_msg_t *id, void *data,
                           size_t cap)
{
    zlink_msg_init(id);
    ck_assert_int_ge(zlink_msg_recv(id, socket, 0), 0);
    ck_assert(zlink_msg_more(id));
    int more = 1;
    size_t more_len = sizeof more;
    int n = zlink_recv(socket, data, cap, 0);
    ck_assert_int_ge(n, 0);
    ck_assert_int_eq(zlink_getsockopt(socket, ZLINK_RCVMORE, &more, &more_len),
                     0);
    ck_assert_int_eq(more, 0);
    return (size_t)n;
}

static int send_to(void *socket, const zlink_msg_t *id, const void *data,
                   size_t len)
{
    zlink_msg_t *m = (zlink_msg_t *)id;
    if (zlink_send(socket, zlink_msg_data(m), zlink_msg_size(m),
                   ZLINK_SNDMORE) < 0)
        return -1;
    return zlink_send(socket, data, len, 0);
}

static bool same_id(zlink_msg_t *a, zlink_msg_t *b)
{
    return zlink_msg_size(a) == zlink_msg_size(b) &&
           memcmp(zlink_msg_data(a), zlink_msg_data(b), zlink_msg_size(a)) == 0;
}

/* A raw TCP client: announced by an empty message under a generated id
 * (a zero byte and four more, as libzmq's), its bytes delivered under that
 * id with Peer-Address, our replies written as they are, and its close
 * announced by another empty message. */
START_TEST(raw_client_round_trip)
{
    stream_server sv;
    server_open(&sv, true);
    raw_fd fd = raw_connect(sv.port);
    zlink_msg_t id, id2;
    char buf[64];
    ck_assert_uint_eq(recv_message(sv.socket, &id, buf, sizeof buf), 0);
    ck_assert_uint_eq(zlink_msg_size(&id), 5);
    ck_assert_uint_eq(((uint8_t *)zlink_msg_data(&id))[0], 0);
    ck_assert_str_eq(zlink_msg_gets(&id, "Peer-Address"), "127.0.0.1");

    raw_send(fd, "hello", 5);
    size_t got = 0;
    while (got < 5) {
        size_t n = recv_message(sv.socket, &id2, buf + got, sizeof buf - got);
        ck_assert(same_id(&id, &id2));
        ck_assert_uint_gt(n, 0);
        got += n;
        zlink_msg_close(&id2);
    }
    ck_assert_int_eq(memcmp(buf, "hello", 5), 0);

    ck_assert_int_eq(send_to(sv.socket, &id, "world", 5), 5);
    ck_assert(raw_recv_exact(fd, buf, 5, WAIT_MS));
    ck_assert_int_eq(memcmp(buf, "world", 5), 0);

    raw_close(fd);
    ck_assert_uint_eq(recv_message(sv.socket, &id2, buf, sizeof buf), 0);
    ck_assert(same_id(&id, &id2));
    zlink_msg_close(&id2);
    /* No handshake to report: libzmq reports none for STREAM either. */
    ck_assert(
        zl_test_wait_event(sv.monitor, ZLINK_EVENT_DISCONNECTED, 1, WAIT_MS));
    ck_assert(!zl_test_wait_event(sv.monitor, ZLINK_EVENT_HANDSHAKE_SUCCEEDED,
                                  1, 100));
    /* Gone: its id names nothing any more. */
    int rc = 0;
    for (int i = 0; i < 100; i++) {
        rc = send_to(sv.socket, &id, "late", 4);
        if (rc < 0)
            break;
        zl_test_sleep_ms(10);
    }
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(zlink_errno(), EHOSTUNREACH);
    zlink_msg_close(&id);
    server_close(&sv);
}
END_TEST

/* An empty bytes frame closes that connection: its peer reads EOF, and
 * the id is unknown after. Another client is not touched. */
START_TEST(application_closes_connection)
{
    stream_server sv;
    server_open(&sv, true);
    raw_fd a = raw_connect(sv.port);
    zlink_msg_t id_a, id_b;
    char buf[64];
    ck_assert_uint_eq(recv_message(sv.socket, &id_a, buf, sizeof buf), 0);
    raw_fd b = raw_connect(sv.port);
    ck_assert_uint_eq(recv_message(sv.socket, &id_b, buf, sizeof buf), 0);
    ck_assert(!same_id(&id_a, &id_b));

    ck_assert_int_eq(send_to(sv.socket, &id_a, "", 0), 0);
    ck_assert(raw_closed_by_peer(a, WAIT_MS));
    ck_assert_int_eq(send_to(sv.socket, &id_a, "x", 1), -1);
    ck_assert_int_eq(zlink_errno(), EHOSTUNREACH);

    ck_assert_int_eq(send_to(sv.socket, &id_b, "still", 5), 5);
    ck_assert(raw_recv_exact(b, buf, 5, WAIT_MS));
    ck_assert_int_eq(memcmp(buf, "still", 5), 0);
    raw_close(a);
    raw_close(b);
    zlink_msg_close(&id_a);
    zlink_msg_close(&id_b);
    server_close(&sv);
}
END_TEST

/* A raw TCP listener, and a STREAM socket (in a new context) that has
 * connected to it, its connection accepted into *fd. */
typedef struct raw_server {
    raw_fd listener, fd;
    void *ctx, *socket;
} raw_server;

static void raw_server_open(raw_server *r, const char *connect_routing_id)
{
    int port;
    r->listener = raw_listen(4, &port);
    r->ctx = zlink_ctx_new();
    r->socket = stream_socket(r->ctx);
    zl_test_set_int(r->socket, ZLINK_RECONNECT_IVL, 20);
    if (connect_routing_id)
        ck_assert_int_eq(zlink_setsockopt(r->socket, ZLINK_CONNECT_ROUTING_ID,
                                          connect_routing_id,
                                          strlen(connect_routing_id)),
                         0);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", port);
    ck_assert_int_eq(zlink_connect(r->socket, endpoint), 0);
    r->fd = raw_accept(r->listener, WAIT_MS);
    ck_assert(r->fd != RAW_INVALID);
}

static void raw_server_close(raw_server *r)
{
    raw_close(r->fd);
    zlink_close(r->socket);
    ck_assert_int_eq(zl_test_ctx_term(r->ctx), 0);
    raw_close(r->listener);
}

/* A STREAM that connects, to a plain TCP server: CONNECT_ROUTING_ID names
 * the connection, its peer's bytes come under that name, and closing it
 * from the application is final: no reconnect follows. */
START_TEST(connects_to_raw_server)
{
    raw_server r;
    raw_server_open(&r, "web");
    void *s = r.socket;
    raw_fd fd = r.fd;

    zlink_msg_t id;
    char buf[64];
    ck_assert_uint_eq(recv_message(s, &id, buf, sizeof buf), 0);
    ck_assert_uint_eq(zlink_msg_size(&id), 3);
    ck_assert_int_eq(memcmp(zlink_msg_data(&id), "web", 3), 0);

    const char request[] = "GET / HTTP/1.0\r\n\r\n";
    ck_assert_int_eq(send_to(s, &id, request, sizeof request - 1),
                     (int)sizeof request - 1);
    ck_assert(raw_recv_exact(fd, buf, sizeof request - 1, WAIT_MS));
    ck_assert_int_eq(memcmp(buf, request, sizeof request - 1), 0);
    raw_send(fd, "200", 3);
    zlink_msg_t id2;
    size_t got = 0;
    while (got < 3) {
        got += recv_message(s, &id2, buf + got, sizeof buf - got);
        zlink_msg_close(&id2);
    }
    ck_assert_int_eq(memcmp(buf, "200", 3), 0);

    ck_assert_int_eq(send_to(s, &id, "", 0), 0);
    ck_assert(raw_closed_by_peer(fd, WAIT_MS));
    ck_assert(raw_accept(r.listener, 300) == RAW_INVALID);
    zlink_msg_close(&id);
    raw_server_close(&r);
}
END_TEST

/* A connect's peer goes away and comes back: its end is announced, the
 * connect is retried, and the new connection is announced under the same
 * id. */
START_TEST(reconnects_under_same_id)
{
    raw_server r;
    raw_server_open(&r, NULL);
    zlink_msg_t id, again;
    char buf[16];
    ck_assert_uint_eq(recv_message(r.socket, &id, buf, sizeof buf), 0);
    raw_close(r.fd);
    ck_assert_uint_eq(recv_message(r.socket, &again, buf, sizeof buf), 0);
    ck_assert(same_id(&id, &again));
    zlink_msg_close(&again);
    r.fd = raw_accept(r.listener, WAIT_MS);
    ck_assert(r.fd != RAW_INVALID);
    ck_assert_uint_eq(recv_message(r.socket, &again, buf, sizeof buf), 0);
    ck_assert(same_id(&id, &again));
    zlink_msg_close(&again);
    ck_assert_int_eq(send_to(r.socket, &id, "back", 4), 4);
    ck_assert(raw_recv_exact(r.fd, buf, 4, WAIT_MS));
    ck_assert_int_eq(memcmp(buf, "back", 4), 0);
    zlink_msg_close(&id);
    raw_server_close(&r);
}
END_TEST

/* STREAM_NOTIFY 0: the first message is the peer's bytes. */
START_TEST(notify_off)
{
    stream_server sv;
    server_open(&sv, false);
    raw_fd fd = raw_connect(sv.port);
    raw_send(fd, "a", 1);
    zlink_msg_t id;
    char buf[8];
    ck_assert_uint_eq(recv_message(sv.socket, &id, buf, sizeof buf), 1);
    ck_assert_int_eq(buf[0], 'a');
    zlink_msg_close(&id);
    raw_close(fd);
    server_close(&sv);
}
END_TEST

/* libzmq's answers: an unknown id is EHOSTUNREACH; STREAM_NOTIFY belongs to
 * STREAM and takes 0 or 1; inproc and ws carry no raw bytes. */
START_TEST(errors_and_options)
{
    void *ctx = zlink_ctx_new();
    void *s = stream_socket(ctx);
    ck_assert_int_eq(zlink_send(s, "nobody", 6, ZLINK_SNDMORE), -1);
    ck_assert_int_eq(zlink_errno(), EHOSTUNREACH);
    int v = 2;
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_STREAM_NOTIFY, &v, sizeof v),
                     -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    v = 0;
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_STREAM_NOTIFY, &v, sizeof v), 0);
    size_t len = sizeof v;
    v = -1;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_STREAM_NOTIFY, &v, &len), 0);
    ck_assert_int_eq(v, 0);
    len = sizeof v;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_TYPE, &v, &len), 0);
    ck_assert_int_eq(v, ZLINK_STREAM);
    ck_assert_int_eq(zlink_bind(s, "inproc://raw"), -1);
    ck_assert_int_eq(zlink_errno(), ENOCOMPATPROTO);
    ck_assert_int_eq(zlink_connect(s, "ws://127.0.0.1:1/x"), -1);
    ck_assert_int_eq(zlink_errno(), ENOCOMPATPROTO);

    void *dealer = zlink_socket(ctx, ZLINK_DEALER);
    v = 1;
    ck_assert_int_eq(
        zlink_setsockopt(dealer, ZLINK_STREAM_NOTIFY, &v, sizeof v), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    zlink_close(dealer);
    zlink_close(s);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

/* Two STREAM sockets over ipc: each side announces the other, and bytes
 * sent under one's id arrive under the other's. */
START_TEST(stream_to_stream_ipc)
{
    if (zl_test_skip_ipc())
        return;
    char endpoint[256];
    zl_test_ipc_endpoint(endpoint, sizeof endpoint);
    void *ctx = zlink_ctx_new();
    void *server = stream_socket(ctx);
    void *client = stream_socket(ctx);
    ck_assert_int_eq(zlink_bind(server, endpoint), 0);
    ck_assert_int_eq(zlink_connect(client, endpoint), 0);
    zlink_msg_t sid, cid;
    char buf[16];
    ck_assert_uint_eq(recv_message(server, &cid, buf, sizeof buf), 0);
    ck_assert_uint_eq(recv_message(client, &sid, buf, sizeof buf), 0);
    ck_assert_int_eq(send_to(client, &sid, "ping", 4), 4);
    zlink_msg_t from;
    size_t got = 0;
    while (got < 4) {
        got += recv_message(server, &from, buf + got, sizeof buf - got);
        ck_assert(same_id(&from, &cid));
        zlink_msg_close(&from);
    }
    ck_assert_int_eq(memcmp(buf, "ping", 4), 0);
    zlink_msg_close(&sid);
    zlink_msg_close(&cid);
    zlink_close(client);
    zlink_close(server);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

/* Big transfers both ways, byte for byte, while the application reads
 * slowly under RCVHWM 2: backpressure holds the peer's bytes back and
 * loses none. Large sends take the zero-copy path. */
#define BULK (2 * 1024 * 1024)

typedef struct bulk_sender {
    raw_fd fd;
    uint8_t *data;
} bulk_sender;

static void send_bulk(void *arg)
{
    bulk_sender *b = arg;
    raw_send(b->fd, b->data, BULK);
}

START_TEST(bulk_under_backpressure)
{
    stream_server sv;
    server_open(&sv, true);
    zl_test_set_int(sv.socket, ZLINK_RCVHWM, 2);
    raw_fd fd = raw_connect(sv.port);
    zlink_msg_t id;
    char none[4];
    ck_assert_uint_eq(recv_message(sv.socket, &id, none, sizeof none), 0);

    uint8_t *data = malloc(BULK), *got = malloc(BULK);
    for (size_t i = 0; i < BULK; i++)
        data[i] = (uint8_t)(i * 7 + i / 251);
    bulk_sender b = {fd, data};
    void *thread = zlink_threadstart(send_bulk, &b);
    size_t have = 0;
    int reads = 0;
    while (have < BULK) {
        zlink_msg_t from, bytes;
        zlink_msg_init(&from);
        zlink_msg_init(&bytes);
        ck_assert_int_ge(zlink_msg_recv(&from, sv.socket, 0), 0);
        ck_assert_int_ge(zlink_msg_recv(&bytes, sv.socket, 0), 1);
        size_t n = zlink_msg_size(&bytes);
        /* libzmq's raw decoder's most; RCVHWM counts these. */
        ck_assert_uint_le(n, 8192);
        ck_assert_uint_le(have + n, BULK);
        memcpy(got + have, zlink_msg_data(&bytes), n);
        have += n;
        zlink_msg_close(&from);
        zlink_msg_close(&bytes);
        if (++reads % 16 == 0)
            zl_test_sleep_ms(1);
    }
    zlink_threadclose(thread);
    ck_assert_int_eq(memcmp(got, data, BULK), 0);

    /* The other way: one 2 MiB message and small ones, in order. */
    ck_assert_int_eq(send_to(sv.socket, &id, data, BULK), BULK);
    ck_assert_int_eq(send_to(sv.socket, &id, "end", 3), 3);
    ck_assert(raw_recv_exact(fd, got, BULK, WAIT_MS));
    ck_assert_int_eq(memcmp(got, data, BULK), 0);
    ck_assert(raw_recv_exact(fd, got, 3, WAIT_MS));
    ck_assert_int_eq(memcmp(got, "end", 3), 0);
    free(data);
    free(got);
    zlink_msg_close(&id);
    raw_close(fd);
    server_close(&sv);
}
END_TEST

/* A peer that reads nothing: sends fill SNDHWM and then wait or fail
 * with EAGAIN, dropping nothing; once it reads, every byte sent arrives,
 * in order. */
START_TEST(send_waits_at_hwm)
{
    stream_server sv;
    server_open(&sv, true);
    zl_test_set_int(sv.socket, ZLINK_SNDHWM, 4);
    raw_fd fd = raw_connect_buffered(sv.port, SO_RCVBUF, 4096);
    zlink_msg_t id;
    char buf[16];
    ck_assert_uint_eq(recv_message(sv.socket, &id, buf, sizeof buf), 0);
    enum { PIECE = 16 * 1024, PIECES_MAX = 4096 };
    static uint8_t piece[PIECE];
    int sent = 0, rc = 0;
    zl_test_set_int(sv.socket, ZLINK_SNDTIMEO, 100);
    while (sent < PIECES_MAX) {
        memset(piece, (uint8_t)sent, sizeof piece);
        rc = send_to(sv.socket, &id, piece, sizeof piece);
        if (rc < 0)
            break;
        sent++;
    }
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(zlink_errno(), EAGAIN);
    ck_assert_int_lt(sent, PIECES_MAX);
    for (int i = 0; i < sent; i++) {
        ck_assert(raw_recv_exact(fd, piece, sizeof piece, WAIT_MS));
        ck_assert_uint_eq(piece[0], (uint8_t)i);
        ck_assert_uint_eq(piece[PIECE - 1], (uint8_t)i);
    }
    zlink_msg_close(&id);
    raw_close(fd);
    server_close(&sv);
}
END_TEST

int main(void)
{
    raw_sockets_init();
    Suite *suite = suite_create("stream");
    TCase *tc = tcase_create("stream");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, raw_client_round_trip);
    tcase_add_test(tc, application_closes_connection);
    tcase_add_test(tc, connects_to_raw_server);
    tcase_add_test(tc, reconnects_under_same_id);
    tcase_add_test(tc, notify_off);
    tcase_add_test(tc, errors_and_options);
    tcase_add_test(tc, stream_to_stream_ipc);
    tcase_add_test(tc, bulk_under_backpressure);
    tcase_add_test(tc, send_waits_at_hwm);
    suite_add_tcase(suite, tc);
    return zl_test_run(suite);
}
