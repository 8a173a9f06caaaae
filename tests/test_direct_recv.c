/* test_direct_recv.c — a blocking receive reading its connection itself
 * (direct_recv.h): round trips between zlink sockets that take that path,
 * and a raw ZMTP peer whose bytes arrive while the receive waits: small
 * messages, a PING, frames split across writes, several messages in one
 * write, multipart and large messages, and hostile input, which must close
 * the connection as it does without the path. Where the backend cannot
 * read from another thread (IOCP), the same traffic must flow with no
 * direct read at all. */

#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "direct_recv_testutil.h"

/* ---- zlink to zlink ---- */

static const size_t round_trip_sizes[] = {0,    1,    64,   255,  256,
                                          2047, 2048, 2049, 8192, 30000};
#define ROUND_TRIP_SIZES (sizeof round_trip_sizes / sizeof round_trip_sizes[0])
#define ROUND_TRIPS 300

/* Every seventh round trip is a two-part message. */
static bool round_trip_multipart(unsigned i)
{
    return i % 7 == 3;
}

static void echo_peer(void *arg)
{
    void *s = arg;
    for (unsigned i = 0; i < ROUND_TRIPS; i++) {
        size_t size = round_trip_sizes[i % ROUND_TRIP_SIZES];
        if (round_trip_multipart(i)) {
            zt_recv_part(s, 5, i + 1000u, true);
            zt_send_part(s, 5, i + 1000u, ZLINK_SNDMORE);
        }
        zt_recv_part(s, size, i, false);
        zt_send_part(s, size, i, 0);
    }
}

/* One side sends and waits for the echo, the other echoes: both wait in a
 * blocking receive with their connection idle, so small single-part
 * messages may be read directly on both sides. */
static void round_trips(int transport, int waiter_type, int echo_type)
{
    void *ctx = zt_ctx();
    void *echo = zt_socket(ctx, echo_type);
    void *waiter = zt_socket(ctx, waiter_type);
    char ep[300];
    if (!zt_join(echo, waiter, transport, ep, sizeof ep)) {
        zt_close(echo);
        zt_close(waiter);
        zt_term(ctx);
        return;
    }
    uv_thread_t peer;
    ck_assert_int_eq(uv_thread_create(&peer, echo_peer, echo), 0);
    unsigned before = zl_direct_recvs_total();
    for (unsigned i = 0; i < ROUND_TRIPS; i++) {
        size_t size = round_trip_sizes[i % ROUND_TRIP_SIZES];
        if (round_trip_multipart(i))
            zt_send_part(waiter, 5, i + 1000u, ZLINK_SNDMORE);
        zt_send_part(waiter, size, i, 0);
        if (round_trip_multipart(i))
            zt_recv_part(waiter, 5, i + 1000u, true);
        zt_recv_part(waiter, size, i, false);
    }
    uv_thread_join(&peer);
    zt_check_direct_reads(before);
    zt_close(waiter);
    zt_close(echo);
    zt_term(ctx);
}

START_TEST(pair_round_trips)
{
    round_trips(_i == 0 ? ZT_TCP4 : ZT_IPC, ZLINK_PAIR, ZLINK_PAIR);
}
END_TEST

START_TEST(dealer_round_trips)
{
    round_trips(ZT_TCP4, ZLINK_DEALER, ZLINK_DEALER);
}
END_TEST

/* A write that waits for room in the socket while the receive watches
 * the input: the engine must still hear that the socket is writable (on
 * epoll, EPOLLOUT stays in the registration while a write waits). The
 * peer reads the large message only after a pause, then answers. */
#define LARGE_BODY (8u * 1024 * 1024)

static void slow_reader(void *arg)
{
    void *s = arg;
    zl_test_sleep_ms(100);
    zt_recv_part(s, LARGE_BODY, 1, false);
    zt_send_part(s, 10, 2, 0);
}

START_TEST(waiting_write_finishes_while_receive_watches)
{
    void *ctx = zt_ctx();
    void *writer = zt_socket(ctx, ZLINK_PAIR);
    void *reader = zt_socket(ctx, ZLINK_PAIR);
    /* Small kernel buffers, so that the large write waits for room. */
    zt_set_int(writer, ZLINK_SNDBUF, 65536);
    zt_set_int(reader, ZLINK_RCVBUF, 65536);
    char ep[300];
    if (!zt_join(writer, reader, _i == 0 ? ZT_TCP4 : ZT_IPC, ep, sizeof ep)) {
        zt_close(writer);
        zt_close(reader);
        zt_term(ctx);
        return;
    }
    zt_send_part(reader, 1, 0, 0);
    zt_recv_part(writer, 1, 0, false);
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, slow_reader, reader), 0);
    zt_send_part(writer, LARGE_BODY, 1, 0);
    zt_recv_part(writer, 10, 2, false);
    uv_thread_join(&t);
    zt_close(writer);
    zt_close(reader);
    zt_term(ctx);
}
END_TEST

/* ---- a raw ZMTP peer ---- */

/* Bytes the raw peer sends while zlink's thread waits in a receive: the
 * first split bytes after delay_ms, the rest gap_ms later. */
typedef struct delayed {
    raw_fd fd;
    uint8_t bytes[40000];
    size_t len, split;
    int delay_ms, gap_ms;
} delayed;

static void delayed_sender(void *arg)
{
    delayed *d = arg;
    zl_test_sleep_ms(d->delay_ms);
    size_t first = d->split ? d->split : d->len;
    raw_send(d->fd, d->bytes, first);
    if (first < d->len) {
        zl_test_sleep_ms(d->gap_ms);
        raw_send(d->fd, d->bytes + first, d->len - first);
    }
}

static void send_later(uv_thread_t *t, delayed *d)
{
    ck_assert_int_eq(uv_thread_create(t, delayed_sender, d), 0);
}

/* Appends a data frame of size bytes filled from seed. */
static void add_part(delayed *d, size_t size, unsigned seed, bool more)
{
    uint8_t *body = malloc(size ? size : 1);
    ck_assert_ptr_nonnull(body);
    zt_fill(body, size, seed);
    ck_assert_uint_le(d->len + size + 9, sizeof d->bytes);
    d->len += zt_put_frame(d->bytes + d->len, more ? 0x01 : 0, body, size);
    free(body);
}

typedef struct raw_fixture {
    void *ctx, *pair;
    int port;
    raw_fd fd;
    delayed d;
} raw_fixture;

static void raw_setup(raw_fixture *f, int maxmsgsize)
{
    raw_sockets_init();
    f->ctx = zt_ctx();
    f->pair = zt_socket(f->ctx, ZLINK_PAIR);
    if (maxmsgsize >= 0) {
        int64_t max = maxmsgsize;
        ck_assert_int_eq(
            zlink_setsockopt(f->pair, ZLINK_MAXMSGSIZE, &max, sizeof max), 0);
    }
    char ep[300];
    zt_bind_tcp(f->pair, ep, sizeof ep);
    f->port = atoi(strrchr(ep, ':') + 1);
    f->fd = zt_raw_pair(f->port);
    memset(&f->d, 0, sizeof f->d);
    f->d.fd = f->fd;
}

static void raw_teardown(raw_fixture *f)
{
    raw_close(f->fd);
    zt_close(f->pair);
    zt_term(f->ctx);
}

/* Sends what f->d holds while the receive below waits. */
static void start_sending(raw_fixture *f, uv_thread_t *t, int delay_ms)
{
    f->d.fd = f->fd;
    f->d.delay_ms = delay_ms;
    send_later(t, &f->d);
}

static void reset_bytes(raw_fixture *f)
{
    f->d.len = f->d.split = 0;
    f->d.gap_ms = 0;
}

START_TEST(raw_peer_messages_while_waiting)
{
    raw_fixture f;
    raw_setup(&f, -1);
    uv_thread_t t;

    /* Small messages, each coming while the receive waits. */
    unsigned before = zl_direct_recvs_total();
    for (unsigned i = 0; i < 20; i++) {
        reset_bytes(&f);
        add_part(&f.d, 64, i, false);
        start_sending(&f, &t, 5);
        zt_recv_part(f.pair, 64, i, false);
        uv_thread_join(&t);
    }
    if (ZL_BACKEND_TRY_READ)
        ck_assert_uint_gt(zl_direct_recvs_total() - before, 0);
    else
        ck_assert_uint_eq(zl_direct_recvs_total() - before, 0);

    /* A PING while the receive waits is the engine's: it answers, and the
     * message after it is delivered. The receive, which found the port
     * closed while the engine read the PING, was woken when the engine
     * opened it again, and reads that message itself. */
    reset_bytes(&f);
    static const char ping[] = "\x04PING\0\0ctx";
    f.d.len = zt_put_frame(f.d.bytes, 0x04, ping, sizeof ping - 1);
    f.d.split = f.d.len;
    f.d.gap_ms = 100;
    add_part(&f.d, 10, 77, false);
    before = zl_direct_recvs_total();
    start_sending(&f, &t, 5);
    zt_recv_part(f.pair, 10, 77, false);
    uv_thread_join(&t);
    if (ZL_BACKEND_TRY_READ)
        ck_assert_uint_eq(zl_direct_recvs_total() - before, 1);
    uint8_t flags, body[64];
    size_t size;
    ck_assert(zt_read_frame(f.fd, &flags, body, sizeof body, &size));
    ck_assert_uint_eq(flags, 0x04);
    ck_assert_uint_eq(size, 8);
    ck_assert(memcmp(body, "\x04PONGctx", 8) == 0);

    /* A frame split inside its header, and one split inside its body. */
    for (size_t split = 1; split <= 20; split += 19) {
        reset_bytes(&f);
        add_part(&f.d, 300, 5, false);
        f.d.split = split;
        f.d.gap_ms = 30;
        start_sending(&f, &t, 5);
        zt_recv_part(f.pair, 300, 5, false);
        uv_thread_join(&t);
    }

    /* Several messages in one write, a multipart message, an empty one, a
     * large one and a LONG frame with a small body, in order. */
    reset_bytes(&f);
    add_part(&f.d, 10, 1, false);
    add_part(&f.d, 20, 2, false);
    add_part(&f.d, 3, 3, true);
    add_part(&f.d, 4, 4, false);
    add_part(&f.d, 0, 5, false);
    add_part(&f.d, 30000, 6, false);
    uint8_t small[7];
    zt_fill(small, sizeof small, 7);
    f.d.bytes[f.d.len++] = 0x02;
    for (int i = 0; i < 7; i++)
        f.d.bytes[f.d.len++] = 0;
    f.d.bytes[f.d.len++] = sizeof small;
    memcpy(f.d.bytes + f.d.len, small, sizeof small);
    f.d.len += sizeof small;
    start_sending(&f, &t, 5);
    zt_recv_part(f.pair, 10, 1, false);
    zt_recv_part(f.pair, 20, 2, false);
    zt_recv_part(f.pair, 3, 3, true);
    zt_recv_part(f.pair, 4, 4, false);
    zt_recv_part(f.pair, 0, 5, false);
    zt_recv_part(f.pair, 30000, 6, false);
    zt_recv_part(f.pair, sizeof small, 7, false);
    uv_thread_join(&t);

    /* zlink's own sends still reach the peer. */
    zt_send_part(f.pair, 12, 9, 0);
    ck_assert(zt_read_frame(f.fd, &flags, body, sizeof body, &size));
    ck_assert_uint_eq(flags, 0);
    ck_assert_uint_eq(size, 12);
    zt_check_bytes(body, 12, 9);
    raw_teardown(&f);
}
END_TEST

/* What a hostile peer sends while the receive waits; each must close the
 * connection (or, the peer vanishing, leave it closed) with nothing
 * delivered, and the socket must take the next peer. */
enum {
    HOSTILE_RESERVED_FLAGS,
    HOSTILE_OVER_MAXMSGSIZE,
    HOSTILE_HUGE_LONG_FRAME,
    HOSTILE_COMMAND_WITH_MORE,
    HOSTILE_VANISH_MID_FRAME,
    HOSTILE_CASES
};
#define HOSTILE_MAXMSGSIZE 100

START_TEST(raw_peer_hostile_input_while_waiting)
{
    raw_fixture f;
    raw_setup(&f, HOSTILE_MAXMSGSIZE);
    zt_set_int(f.pair, ZLINK_RCVTIMEO, 300);
    uv_thread_t t;
    reset_bytes(&f);
    switch (_i) {
    case HOSTILE_RESERVED_FLAGS:
        f.d.len = zt_put_frame(f.d.bytes, 0x80, "abc", 3);
        break;
    case HOSTILE_OVER_MAXMSGSIZE:
        add_part(&f.d, HOSTILE_MAXMSGSIZE + 1, 1, false);
        break;
    case HOSTILE_HUGE_LONG_FRAME:
        f.d.bytes[0] = 0x02;
        f.d.bytes[1] = 0x7f;
        memset(f.d.bytes + 2, 0xff, 7);
        f.d.len = 9;
        break;
    case HOSTILE_COMMAND_WITH_MORE:
        f.d.len = zt_put_frame(f.d.bytes, 0x05, "\x04PING\0\0", 7);
        break;
    case HOSTILE_VANISH_MID_FRAME:
        f.d.len = zt_put_frame(f.d.bytes, 0, "0123456789", 10) - 5;
        break;
    }
    start_sending(&f, &t, 5);
    char buf[16];
    ck_assert_int_eq(zlink_recv(f.pair, buf, sizeof buf, 0), -1);
    ck_assert_int_eq(zlink_errno(), EAGAIN);
    uv_thread_join(&t);
    if (_i == HOSTILE_VANISH_MID_FRAME)
        raw_close(f.fd);
    else
        ck_assert(raw_closed_by_peer(f.fd, 5000));
    if (_i != HOSTILE_VANISH_MID_FRAME)
        raw_close(f.fd);

    /* The next peer is served. PAIR takes it only once the old connection
     * is gone, which the engine may see a little later than we do: a peer
     * it refused is closed, and the next one tries again. */
    zt_set_int(f.pair, ZLINK_RCVTIMEO, 1000);
    bool served = false;
    for (int attempt = 0; attempt < 10 && !served; attempt++) {
        f.fd = zt_raw_pair(f.port);
        reset_bytes(&f);
        add_part(&f.d, 16, 42, false);
        start_sending(&f, &t, 5);
        zlink_msg_t msg;
        zlink_msg_init(&msg);
        served = zlink_msg_recv(&msg, f.pair, 0) == 16;
        if (served)
            zt_check_bytes(zlink_msg_data(&msg), 16, 42);
        zlink_msg_close(&msg);
        uv_thread_join(&t);
        if (!served)
            raw_close(f.fd);
    }
    ck_assert(served);
    raw_teardown(&f);
}
END_TEST

/* A receive that waits on its connection ends with ETERM when the context
 * shuts down, and a timeout still ends it with EAGAIN. */
typedef struct blocked {
    void *pair;
    int rc, err;
} blocked;

static void blocked_receive(void *arg)
{
    blocked *b = arg;
    char buf[16];
    b->rc = zlink_recv(b->pair, buf, sizeof buf, 0);
    b->err = zlink_errno();
}

START_TEST(waiting_receive_ends_on_shutdown)
{
    raw_fixture f;
    raw_setup(&f, -1);
    zt_set_int(f.pair, ZLINK_RCVTIMEO, 50);
    char buf[16];
    ck_assert_int_eq(zlink_recv(f.pair, buf, sizeof buf, 0), -1);
    ck_assert_int_eq(zlink_errno(), EAGAIN);

    zt_set_int(f.pair, ZLINK_RCVTIMEO, -1);
    blocked b = {f.pair, 0, 0};
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, blocked_receive, &b), 0);
    zl_test_sleep_ms(50);
    ck_assert_int_eq(zlink_ctx_shutdown(f.ctx), 0);
    uv_thread_join(&t);
    ck_assert_int_eq(b.rc, -1);
    ck_assert_int_eq(b.err, ETERM);
    raw_teardown(&f);
}
END_TEST

/* A receive that begins before its connection does, and sleeps while the
 * engine is still busy with the handshake (the port closed): the engine
 * wakes it once it opens the port, and the message that comes later is
 * read directly. Without that wake the receive would sleep through its
 * whole wait and leave the message to the I/O thread. */
START_TEST(receive_begun_before_its_connection)
{
    void *ctx = zt_ctx();
    void *receiver = zt_socket(ctx, ZLINK_PAIR);
    void *sender = zt_socket(ctx, ZLINK_PAIR);
    zt_set_int(receiver, ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
    char ep[300];
    zt_bind_tcp(receiver, ep, sizeof ep);
    unsigned before = zl_direct_recvs_total();
    blocked b = {receiver, 0, 0};
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, blocked_receive, &b), 0);
    zl_test_sleep_ms(50);
    ck_assert_int_eq(zlink_connect(sender, ep), 0);
    zl_test_sleep_ms(200);
    zt_send_str(sender, "late", 0);
    uv_thread_join(&t);
    ck_assert_int_eq(b.rc, 4);
    if (ZL_BACKEND_TRY_READ)
        ck_assert_uint_eq(zl_direct_recvs_total() - before, 1);
    zt_close(sender);
    zt_close(receiver);
    zt_term(ctx);
}
END_TEST

static Suite *direct_recv_suite(void)
{
    Suite *s = suite_create("direct_recv");
    TCase *tc = tcase_create("direct_recv");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, pair_round_trips, 0, 2);
    tcase_add_test(tc, dealer_round_trips);
    tcase_add_loop_test(tc, waiting_write_finishes_while_receive_watches, 0, 2);
    tcase_add_test(tc, raw_peer_messages_while_waiting);
    tcase_add_loop_test(tc, raw_peer_hostile_input_while_waiting, 0,
                        HOSTILE_CASES);
    tcase_add_test(tc, waiting_receive_ends_on_shutdown);
    tcase_add_test(tc, receive_begun_before_its_connection);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(direct_recv_suite());
}
