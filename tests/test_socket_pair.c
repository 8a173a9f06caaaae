/* test_socket_pair.c — PAIR end to end over every transport: multipart
 * messages of every interesting size with every byte checked, order, the
 * zero-copy and constant-buffer sends, and refusing a second peer. */

#include "atomics.h"
#include "socket_testutil.h"

/* One message with a part of every size, then each size alone. */
static void exchange_sizes(void *from, void *to, unsigned seed)
{
    size_t count;
    const size_t *sizes = zt_sizes(&count);
    for (size_t i = 0; i < count; i++)
        zt_send_part(from, sizes[i], seed + (unsigned)i,
                     i + 1 < count ? ZLINK_SNDMORE : 0);
    for (size_t i = 0; i < count; i++)
        zt_recv_part(to, sizes[i], seed + (unsigned)i, i + 1 < count);
    for (size_t i = 0; i < count; i++)
        zt_send_part(from, sizes[i], seed + 100 + (unsigned)i, 0);
    for (size_t i = 0; i < count; i++)
        zt_recv_part(to, sizes[i], seed + 100 + (unsigned)i, false);
}

START_TEST(pair_sizes_and_multipart)
{
    zt_pair f;
    if (!zt_pair_open(&f, _i))
        return;
    ck_assert_int_eq(zt_get_int(f.connecter, ZLINK_RCVMORE), 0);
    exchange_sizes(f.connecter, f.binder, 1);
    exchange_sizes(f.binder, f.connecter, 7);
    zt_pair_close(&f);
}
END_TEST

/* Batches both ways, each message numbered, each with 1-3 parts. */
START_TEST(pair_order)
{
    zt_pair f;
    if (!zt_pair_open(&f, _i))
        return;
    void *ends[2] = {f.connecter, f.binder};
    for (int batch = 0; batch < 10; batch++) {
        for (int dir = 0; dir < 2; dir++) {
            void *from = ends[dir], *to = ends[1 - dir];
            for (int k = 0; k < 100; k++) {
                unsigned n = (unsigned)(batch * 100 + k);
                int parts = 1 + (int)(n % 3);
                for (int p = 0; p < parts; p++)
                    zt_send_part(from, (n * 7 + (unsigned)p) % 300,
                                 n * 3 + (unsigned)p,
                                 p + 1 < parts ? ZLINK_SNDMORE : 0);
            }
            for (int k = 0; k < 100; k++) {
                unsigned n = (unsigned)(batch * 100 + k);
                int parts = 1 + (int)(n % 3);
                for (int p = 0; p < parts; p++)
                    zt_recv_part(to, (n * 7 + (unsigned)p) % 300,
                                 n * 3 + (unsigned)p, p + 1 < parts);
            }
        }
    }
    /* Nothing left over. */
    char buf[8];
    zt_expect_errno(zlink_recv(f.binder, buf, sizeof buf, ZLINK_DONTWAIT),
                    EAGAIN);
    zt_expect_errno(zlink_recv(f.connecter, buf, sizeof buf, ZLINK_DONTWAIT),
                    EAGAIN);
    zt_pair_close(&f);
}
END_TEST

/* ---- zero copy ---- */

static atomic_int freed_count;
static void *freed_data;

static void count_free(void *data, void *hint)
{
    ck_assert_ptr_eq(hint, &freed_count);
    freed_data = data;
    atomic_fetch_add(&freed_count, 1);
    free(data);
}

static bool wait_freed(int expected)
{
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (atomic_load(&freed_count) != expected && zl_test_now_ms() < deadline)
        zl_test_sleep_ms(2);
    return atomic_load(&freed_count) == expected;
}

/* The free function runs exactly once, after the message went out and the
 * receiver let go of it (inproc passes the very buffer along). */
static void zero_copy_case(zt_pair *f, int transport, size_t size)
{
    atomic_store(&freed_count, 0);
    freed_data = NULL;
    uint8_t *buf = malloc(size);
    ck_assert_ptr_nonnull(buf);
    zt_fill(buf, size, 42);
    zlink_msg_t msg;
    ck_assert_int_eq(
        zlink_msg_init_data(&msg, buf, size, count_free, &freed_count), 0);
    ck_assert_ptr_eq(zlink_msg_data(&msg), buf);
    ck_assert_int_eq(zlink_msg_send(&msg, f->connecter, 0), (int)size);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);

    zlink_msg_t in;
    zlink_msg_init(&in);
    ck_assert_int_eq(zlink_msg_recv(&in, f->binder, 0), (int)size);
    zt_check_bytes(zlink_msg_data(&in), size, 42);
    bool inproc =
        transport == ZT_INPROC || transport == ZT_INPROC_CONNECT_FIRST;
    if (inproc) {
        ck_assert_ptr_eq(zlink_msg_data(&in), buf);
        /* A duration, not a wait: no free while the receiver holds it. */
        zl_test_sleep_ms(20);
        ck_assert_int_eq(atomic_load(&freed_count), 0);
    }
    ck_assert_int_eq(zlink_msg_close(&in), 0);
    ck_assert_msg(wait_freed(1), "free fn called %d times",
                  atomic_load(&freed_count));
    ck_assert_ptr_eq(freed_data, buf);
}

START_TEST(pair_zero_copy)
{
    zt_pair f;
    if (!zt_pair_open(&f, _i))
        return;
    zero_copy_case(&f, _i, 10);
    zero_copy_case(&f, _i, 64 * 1024);
    zero_copy_case(&f, _i, 1024 * 1024);
    zt_pair_close(&f);
    /* Never a second time, not even at shutdown. */
    ck_assert_int_eq(atomic_load(&freed_count), 1);
}
END_TEST

/* Received messages keep their bytes however long they are held. Large
 * bodies that arrive whole in one read share the engine's read buffer
 * (zl_decoder_set_input_owner), so the engine must read into a new buffer
 * while any of them lives. Sizes around a fifth and a quarter of the read
 * buffer put several whole bodies in each read. */
START_TEST(pair_held_messages_keep_their_bytes)
{
    enum { COUNT = 96 };
    static const size_t sizes[] = {8192, 6000, 8191, 9000, 12000};
    zt_pair f;
    if (!zt_pair_open(&f, _i))
        return;
    for (unsigned i = 0; i < COUNT; i++)
        zt_send_part(f.connecter, sizes[i % 5], i, 0);
    zlink_msg_t held[COUNT];
    for (unsigned i = 0; i < COUNT; i++) {
        zlink_msg_init(&held[i]);
        ck_assert_int_eq(zlink_msg_recv(&held[i], f.binder, 0),
                         (int)sizes[i % 5]);
    }
    for (unsigned i = 0; i < COUNT; i++) {
        zt_check_bytes(zlink_msg_data(&held[i]), sizes[i % 5], i);
        zlink_msg_close(&held[i]);
    }
    zt_pair_close(&f);
}
END_TEST

/* A copy shares the body; the free function waits for the last one. */
START_TEST(pair_zero_copy_shared)
{
    zt_pair f;
    if (!zt_pair_open(&f, ZT_TCP4))
        return;
    atomic_store(&freed_count, 0);
    size_t size = 100000;
    uint8_t *buf = malloc(size);
    ck_assert_ptr_nonnull(buf);
    zt_fill(buf, size, 9);
    zlink_msg_t msg, copy;
    ck_assert_int_eq(
        zlink_msg_init_data(&msg, buf, size, count_free, &freed_count), 0);
    zlink_msg_init(&copy);
    ck_assert_int_eq(zlink_msg_copy(&copy, &msg), 0);
    ck_assert_int_eq(zlink_msg_send(&msg, f.connecter, 0), (int)size);
    zt_recv_part(f.binder, size, 9, false);
    /* A duration, not a wait: no free while the copy holds the body. */
    zl_test_sleep_ms(20);
    ck_assert_int_eq(atomic_load(&freed_count), 0);
    zt_check_bytes(zlink_msg_data(&copy), size, 9);
    ck_assert_int_eq(zlink_msg_send(&copy, f.connecter, 0), (int)size);
    zt_recv_part(f.binder, size, 9, false);
    ck_assert(wait_freed(1));
    zlink_msg_close(&msg);
    zlink_msg_close(&copy);
    zt_pair_close(&f);
    ck_assert_int_eq(atomic_load(&freed_count), 1);
}
END_TEST

static const char const_small[] = "constant";
static uint8_t const_large[200000];

START_TEST(pair_send_const)
{
    zt_pair f;
    if (!zt_pair_open(&f, _i))
        return;
    zt_fill(const_large, sizeof const_large, 5);
    ck_assert_int_eq(zlink_send_const(f.connecter, const_small,
                                      strlen(const_small), ZLINK_SNDMORE),
                     (int)strlen(const_small));
    ck_assert_int_eq(
        zlink_send_const(f.connecter, const_large, sizeof const_large, 0),
        (int)sizeof const_large);
    zt_recv_str(f.binder, const_small);
    ck_assert_int_eq(zt_get_int(f.binder, ZLINK_RCVMORE), 1);
    zt_recv_part(f.binder, sizeof const_large, 5, false);
    zt_pair_close(&f);
}
END_TEST

/* zlink_recv copies what fits and returns the real size, as libzmq. */
START_TEST(pair_recv_truncates)
{
    zt_pair f;
    if (!zt_pair_open(&f, ZT_TCP4))
        return;
    zt_send_str(f.connecter, "0123456789", 0);
    char buf[8];
    memset(buf, 'x', sizeof buf);
    ck_assert_int_eq(zlink_recv(f.binder, buf, 4, 0), 10);
    ck_assert_int_eq(memcmp(buf, "0123xxxx", 8), 0);
    zt_pair_close(&f);
}
END_TEST

/* A moved message is sent once; the source is left empty. */
START_TEST(pair_msg_move)
{
    zt_pair f;
    if (!zt_pair_open(&f, ZT_INPROC))
        return;
    zlink_msg_t a, b;
    ck_assert_int_eq(zlink_msg_init_size(&a, 100), 0);
    zt_fill(zlink_msg_data(&a), 100, 3);
    zlink_msg_init(&b);
    ck_assert_int_eq(zlink_msg_move(&b, &a), 0);
    ck_assert_uint_eq(zlink_msg_size(&a), 0);
    ck_assert_int_eq(zlink_msg_send(&b, f.connecter, 0), 100);
    /* After a send the message is empty again, as in libzmq. */
    ck_assert_uint_eq(zlink_msg_size(&b), 0);
    zt_recv_part(f.binder, 100, 3, false);
    zlink_msg_close(&a);
    zlink_msg_close(&b);
    zt_pair_close(&f);
}
END_TEST

/* A receive into a message that holds a body releases the body first, as
 * libzmq does: it takes the new message in place, and a failed receive
 * leaves the message empty. A message that is not one is refused. */
START_TEST(pair_msg_recv_replaces_content)
{
    zt_pair f;
    if (!zt_pair_open(&f, ZT_INPROC))
        return;
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init_size(&msg, 300), 0);
    zt_fill(zlink_msg_data(&msg), 300, 5);
    zt_expect_errno(zlink_msg_recv(&msg, f.binder, ZLINK_DONTWAIT), EAGAIN);
    ck_assert_uint_eq(zlink_msg_size(&msg), 0);

    ck_assert_int_eq(zlink_msg_init_size(&msg, 300), 0);
    zt_send_str(f.connecter, "new", 0);
    ck_assert_int_eq(zlink_msg_recv(&msg, f.binder, 0), 3);
    ck_assert_mem_eq(zlink_msg_data(&msg), "new", 3);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);

    /* A closed message may be received into again. */
    zt_send_str(f.connecter, "again", 0);
    ck_assert_int_eq(zlink_msg_recv(&msg, f.binder, 0), 5);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);

    zlink_msg_t garbage;
    memset(&garbage, 0xee, sizeof garbage);
    zt_expect_errno(zlink_msg_recv(&garbage, f.binder, ZLINK_DONTWAIT), EFAULT);
    zt_pair_close(&f);
}
END_TEST

/* PAIR talks to one peer: a second connection is refused, with the
 * monitor's DISCONNECTED where there is a connection to close, and the
 * first keeps working. */
START_TEST(pair_refuses_second_peer)
{
    zt_pair f;
    if (!zt_pair_open(&f, _i))
        return;
    zt_send_str(f.connecter, "first", 0);
    zt_recv_str(f.binder, "first");
    bool networked = _i != ZT_INPROC && _i != ZT_INPROC_CONNECT_FIRST;
    void *monitor =
        networked ? zl_test_monitor_open(f.ctx, f.binder, "inproc://refusals",
                                         ZLINK_EVENT_DISCONNECTED)
                  : NULL;
    void *second = zt_socket(f.ctx, ZLINK_PAIR);
    zt_connect_over(second, _i, f.endpoint);
    zlink_send(second, "second", 6, ZLINK_DONTWAIT);
    zt_send_str(f.connecter, "again", 0);
    zt_recv_str(f.binder, "again");
    char buf[16];
    zt_set_int(f.binder, ZLINK_RCVTIMEO, 300);
    zt_expect_errno(zlink_recv(f.binder, buf, sizeof buf, 0), EAGAIN);
    zt_send_str(f.binder, "back", 0);
    zt_recv_str(f.connecter, "back");
    /* The binder refused the second peer as it took its commands. */
    if (monitor) {
        ck_assert(zl_test_wait_event(monitor, ZLINK_EVENT_DISCONNECTED, 1,
                                     ZT_TIMEOUT_MS));
        zt_close(monitor);
    }
    zt_close(second);
    zt_pair_close(&f);
}
END_TEST

/* A PAIR that connects twice refuses its second connect's pipe: that
 * connect ends for good (its session waits for the socket's TERM rather
 * than freeing itself under the socket's endpoint list), the first peer
 * keeps working, and closing everything is clean under ASan. */
START_TEST(pair_connects_twice)
{
    void *ctx = zt_ctx();
    void *first = zt_socket(ctx, ZLINK_PAIR);
    void *second = zt_socket(ctx, ZLINK_PAIR);
    void *connecter = zt_socket(ctx, ZLINK_PAIR);
    char ep1[64], ep2[64];
    size_t len = sizeof ep1;
    zt_bind(first, "tcp://127.0.0.1:*");
    ck_assert_int_eq(zlink_getsockopt(first, ZLINK_LAST_ENDPOINT, ep1, &len),
                     0);
    len = sizeof ep2;
    zt_bind(second, "tcp://127.0.0.1:*");
    ck_assert_int_eq(zlink_getsockopt(second, ZLINK_LAST_ENDPOINT, ep2, &len),
                     0);
    ck_assert_int_eq(zlink_connect(connecter, ep1), 0);
    ck_assert_int_eq(zlink_connect(connecter, ep2), 0);
    zt_send_str(connecter, "one", 0);
    zt_recv_str(first, "one");
    zt_set_int(second, ZLINK_RCVTIMEO, 200);
    char buf[8];
    zt_expect_errno(zlink_recv(second, buf, sizeof buf, 0), EAGAIN);
    zl_test_sleep_ms(50);
    zt_close(connecter);
    zt_close(second);
    zt_close(first);
    zt_term(ctx);
}
END_TEST

/* A PAIR with no peer at all cannot send. */
START_TEST(pair_without_peer)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(s, "inproc://lonely");
    zt_expect_errno(zlink_send(s, "x", 1, ZLINK_DONTWAIT), EAGAIN);
    zt_set_int(s, ZLINK_SNDTIMEO, 50);
    uint64_t start = zl_test_now_ms();
    zt_expect_errno(zlink_send(s, "x", 1, 0), EAGAIN);
    ck_assert_uint_ge(zl_test_now_ms() - start, 40);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

static Suite *pair_suite(void)
{
    Suite *s = suite_create("socket_pair");
    TCase *tc = tcase_create("pair");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, pair_sizes_and_multipart, 0, ZT_TRANSPORT_COUNT);
    tcase_add_loop_test(tc, pair_order, 0, ZT_TRANSPORT_COUNT);
    tcase_add_loop_test(tc, pair_zero_copy, 0, ZT_TRANSPORT_COUNT);
    tcase_add_test(tc, pair_zero_copy_shared);
    tcase_add_loop_test(tc, pair_held_messages_keep_their_bytes, 0,
                        ZT_TRANSPORT_COUNT);
    tcase_add_loop_test(tc, pair_send_const, 0, ZT_TRANSPORT_COUNT);
    tcase_add_test(tc, pair_recv_truncates);
    tcase_add_test(tc, pair_msg_move);
    tcase_add_test(tc, pair_msg_recv_replaces_content);
    tcase_add_loop_test(tc, pair_refuses_second_peer, 0, ZT_TRANSPORT_COUNT);
    tcase_add_test(tc, pair_without_peer);
    tcase_add_test(tc, pair_connects_twice);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(pair_suite());
}
