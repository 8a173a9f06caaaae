/* test_porting.c — the older libzmq entry points and utilities that
 * zlink_zmq.h maps (zmq_init, zmq_sendiov, zmq_z85_*, the atomic counter,
 * the stopwatch, threads), with libzmq's return conventions. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <zlink_zmq.h>

#if !defined(_WIN32)
#include <sys/uio.h>
#else
struct iovec {
    void *iov_base;
    size_t iov_len;
};
#endif

START_TEST(test_z85_spec_vector)
{
    /* rfc.zeromq.org spec 32's own example. */
    const uint8_t data[8] = {0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B};
    char text[11];
    ck_assert_ptr_eq(zmq_z85_encode(text, data, sizeof data), text);
    ck_assert_str_eq(text, "HelloWorld");
    uint8_t back[8];
    ck_assert_ptr_eq(zmq_z85_decode(back, "HelloWorld"), back);
    ck_assert_mem_eq(back, data, sizeof data);
}
END_TEST

START_TEST(test_z85_round_trip_of_every_byte)
{
    uint8_t data[256];
    for (int i = 0; i < 256; i++)
        data[i] = (uint8_t)i;
    char text[256 * 5 / 4 + 1];
    ck_assert_ptr_nonnull(zmq_z85_encode(text, data, sizeof data));
    ck_assert_uint_eq(strlen(text), 320);
    uint8_t back[256];
    ck_assert_ptr_nonnull(zmq_z85_decode(back, text));
    ck_assert_mem_eq(back, data, sizeof data);
}
END_TEST

START_TEST(test_z85_rejects_bad_input)
{
    uint8_t data[5] = {0};
    char text[16];
    errno = 0;
    ck_assert_ptr_null(zmq_z85_encode(text, data, 5)); /* not 4n bytes */
    ck_assert_int_eq(errno, EINVAL);
    uint8_t out[8];
    ck_assert_ptr_nonnull(zmq_z85_decode(out, "Hello"));
    errno = 0;
    ck_assert_ptr_null(zmq_z85_decode(out, "Hell")); /* not 5n chars */
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_null(zmq_z85_decode(out, "")); /* nothing, as libzmq */
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_null(zmq_z85_decode(out, "Hell\"")); /* not Z85 */
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_ptr_null(zmq_z85_decode(out, "%%%%%")); /* over 32 bits */
}
END_TEST

START_TEST(test_atomic_counter)
{
    void *counter = zmq_atomic_counter_new();
    ck_assert_ptr_nonnull(counter);
    ck_assert_int_eq(zmq_atomic_counter_value(counter), 0);
    ck_assert_int_eq(zmq_atomic_counter_inc(counter), 0); /* old value */
    ck_assert_int_eq(zmq_atomic_counter_inc(counter), 1);
    ck_assert_int_eq(zmq_atomic_counter_value(counter), 2);
    ck_assert_int_eq(zmq_atomic_counter_dec(counter), 1); /* still > 0 */
    ck_assert_int_eq(zmq_atomic_counter_dec(counter), 0); /* now zero */
    zmq_atomic_counter_set(counter, 7);
    ck_assert_int_eq(zmq_atomic_counter_value(counter), 7);
    zmq_atomic_counter_destroy(&counter);
    ck_assert_ptr_null(counter);
}
END_TEST

static void bump(void *arg)
{
    for (int i = 0; i < 10000; i++)
        zmq_atomic_counter_inc(arg);
}

START_TEST(test_threads_and_counter)
{
    void *counter = zmq_atomic_counter_new();
    void *a = zmq_threadstart(bump, counter);
    void *b = zmq_threadstart(bump, counter);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    zmq_threadclose(a);
    zmq_threadclose(b);
    ck_assert_int_eq(zmq_atomic_counter_value(counter), 20000);
    zmq_atomic_counter_destroy(&counter);
}
END_TEST

START_TEST(test_stopwatch)
{
    void *watch = zmq_stopwatch_start();
    ck_assert_ptr_nonnull(watch);
    zl_test_sleep_ms(20); /* the duration the stopwatch must see */
    unsigned long mid = zmq_stopwatch_intermediate(watch);
    ck_assert_uint_ge(mid, 15000); /* microseconds */
    unsigned long total = zmq_stopwatch_stop(watch);
    ck_assert_uint_ge(total, mid);
}
END_TEST

START_TEST(test_init_sendiov_recviov)
{
    void *ctx = zmq_init(1);
    ck_assert_ptr_nonnull(ctx);
    void *a = zmq_socket(ctx, ZMQ_PAIR);
    void *b = zmq_socket(ctx, ZMQ_PAIR);
    ck_assert_int_eq(zmq_bind(a, "inproc://porting"), 0);
    ck_assert_int_eq(zmq_connect(b, "inproc://porting"), 0);
    int timeout = 5000;
    zmq_setsockopt(b, ZMQ_RCVTIMEO, &timeout, sizeof timeout);

    /* As libzmq's zmq_sendiov: SNDMORE makes the parts one whole message
     * (the last part is sent without it), 0 makes each part a message. */
    char p1[] = "one", p2[] = "three";
    struct iovec out[2] = {{p1, 3}, {p2, 5}};
    ck_assert_int_eq(zmq_sendiov(a, out, 2, ZMQ_SNDMORE), 5); /* the last */
    ck_assert_int_eq(zmq_send(a, "next", 4, 0), 4);
    struct iovec in[4];
    size_t count = 4;
    ck_assert_int_eq(zmq_recviov(b, in, &count, 0), 2);
    ck_assert_uint_eq(count, 2);
    ck_assert_uint_eq(in[0].iov_len, 3);
    ck_assert_mem_eq(in[0].iov_base, "one", 3);
    ck_assert_uint_eq(in[1].iov_len, 5);
    ck_assert_mem_eq(in[1].iov_base, "three", 5);
    free(in[0].iov_base);
    free(in[1].iov_base);
    count = 4;
    ck_assert_int_eq(zmq_recviov(b, in, &count, 0), 1);
    ck_assert_mem_eq(in[0].iov_base, "next", 4);
    free(in[0].iov_base);
    ck_assert_int_eq(zmq_sendiov(a, out, 2, 0), 5);
    for (int i = 0; i < 2; i++) {
        count = 4;
        ck_assert_int_eq(zmq_recviov(b, in, &count, 0), 1);
        ck_assert_uint_eq(in[0].iov_len, i == 0 ? 3 : 5);
        free(in[0].iov_base);
    }
    count = 0;
    ck_assert_int_eq(zmq_recviov(b, in, &count, 0), -1);
    ck_assert_int_eq(zmq_errno(), EINVAL);

    zmq_msg_t msg;
    zmq_msg_init_size(&msg, 2);
    memcpy(zmq_msg_data(&msg), "hi", 2);
    ck_assert_int_eq(zmq_sendmsg(a, &msg, 0), 2);
    zmq_msg_init(&msg);
    ck_assert_int_eq(zmq_recvmsg(b, &msg, 0), 2);
    ck_assert_mem_eq(zmq_msg_data(&msg), "hi", 2);
    zmq_msg_close(&msg);

    ck_assert_int_eq(zmq_device(99, a, b), -1);
    ck_assert_int_eq(zmq_errno(), EINVAL);
    zmq_close(a);
    zmq_close(b);
    ck_assert_int_eq(zmq_term(ctx), 0);
    ck_assert_ptr_null(zmq_init(-1));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("porting");
    TCase *tc = tcase_create("legacy api");
    tcase_add_test(tc, test_z85_spec_vector);
    tcase_add_test(tc, test_z85_round_trip_of_every_byte);
    tcase_add_test(tc, test_z85_rejects_bad_input);
    tcase_add_test(tc, test_atomic_counter);
    tcase_add_test(tc, test_threads_and_counter);
    tcase_add_test(tc, test_stopwatch);
    tcase_add_test(tc, test_init_sendiov_recviov);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
