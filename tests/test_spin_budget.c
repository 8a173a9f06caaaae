/* test_spin_budget.c — the context's spin budget (ZLINK_SPIN_BUDGET): its
 * values, that a budget of 0 lets a waiting thread sleep at once, so that
 * it costs no CPU between messages, and how spins that keep missing are
 * skipped (wait.h, io_spin.h). */
#include <check.h>
#include <stdatomic.h>
#include <time.h>

#include "socket_testutil.h"
#include "wait.h"
#if !defined(_WIN32)
#include "io_spin.h"
#endif

START_TEST(budget_has_a_default_and_a_range)
{
    void *ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_SPIN_BUDGET),
                     ZLINK_SPIN_BUDGET_DFLT);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_SPIN_BUDGET, 0), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_SPIN_BUDGET), 0);
    zt_expect_errno(zlink_ctx_set(ctx, ZLINK_SPIN_BUDGET, -1), EINVAL);
    zt_expect_errno(zlink_ctx_set(ctx, ZLINK_SPIN_BUDGET, 1000001), EINVAL);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_SPIN_BUDGET), 0);
    /* Also once the I/O threads run. */
    void *s = zt_socket(ctx, ZLINK_PAIR);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_SPIN_BUDGET, 1000000), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_SPIN_BUDGET), 1000000);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* Gaps between messages: within the default budget, so that a spinning
 * receiver, whose spin adapts to the gap, would take its CPU all the
 * time. Longer under the sanitizers, whose receive costs many times more:
 * the receiver's own work must stay well under the bound. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define ZL_TEST_SANITIZED 1 /* clang's way of saying it */
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) ||           \
    defined(ZL_TEST_SANITIZED)
#define GAP_NS 400000u
#else
#define GAP_NS 80000u
#endif
#define MEASURE_MS 300
/* Of the wall time: a receiver that sleeps between messages uses a few
 * percent, one that spins nearly all. */
#define CPU_BOUND 0.20

typedef struct sender_args {
    void *socket;
    atomic_bool stop;
} sender_args;

static void steady_sender(void *arg)
{
    sender_args *a = arg;
    uint64_t next = uv_hrtime();
    while (!atomic_load(&a->stop)) {
        next += GAP_NS;
        while (uv_hrtime() < next && !atomic_load(&a->stop))
            continue;
        zlink_send(a->socket, "tick", 4, ZLINK_DONTWAIT);
    }
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    ck_assert_int_eq(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts), 0);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Receives from a steady sender for MEASURE_MS, with a blocking receive
 * or (poll) zlink_poll then a receive, and returns this thread's CPU time
 * as a share of the wall time. */
static double receiver_cpu_share(int transport, bool poll, unsigned *received)
{
    void *ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_SPIN_BUDGET, 0), 0);
    void *receiver = zt_socket(ctx, ZLINK_PAIR);
    void *sender = zt_socket(ctx, ZLINK_PAIR);
    char ep[256];
    ck_assert(zt_join(receiver, sender, transport, ep, sizeof ep));
    zt_send_str(sender, "hello", 0);
    zt_recv_str(receiver, "hello");

    sender_args args = {.socket = sender};
    atomic_init(&args.stop, false);
    uv_thread_t thread;
    ck_assert_int_eq(uv_thread_create(&thread, steady_sender, &args), 0);
    uint64_t wall_start = uv_hrtime();
    uint64_t cpu_start = thread_cpu_ns();
    unsigned count = 0;
    char buf[16];
    while (uv_hrtime() - wall_start < (uint64_t)MEASURE_MS * 1000000u) {
        if (poll) {
            zlink_pollitem_t item = {receiver, 0, ZLINK_POLLIN, 0};
            ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
        }
        ck_assert_int_eq(zlink_recv(receiver, buf, sizeof buf, 0), 4);
        count++;
    }
    uint64_t cpu = thread_cpu_ns() - cpu_start;
    uint64_t wall = uv_hrtime() - wall_start;
    atomic_store(&args.stop, true);
    uv_thread_join(&thread);
    zt_close(sender);
    zt_close(receiver);
    zt_term(ctx);
    *received = count;
    return (double)cpu / (double)wall;
}

/* A receiver that spins uses its CPU in every window; one that sleeps can
 * still cross the bound in a window where other processes slow each
 * receive, so a few windows are allowed and one under the bound passes. */
#define MEASURE_TRIES 3

static void check_receiver_sleeps(int transport, bool poll)
{
    double share = 1.0;
    unsigned received = 0;
    for (int i = 0; i < MEASURE_TRIES && share >= CPU_BOUND; i++)
        share = receiver_cpu_share(transport, poll, &received);
    ck_assert_msg(share < CPU_BOUND,
                  "%s receiver used %.0f%% of a CPU over %u messages, in "
                  "each of %d windows",
                  poll ? "polling" : "blocking", share * 100, received,
                  MEASURE_TRIES);
}

START_TEST(no_budget_blocking_receive_sleeps_inproc)
{
    check_receiver_sleeps(ZT_INPROC, false);
}
END_TEST

START_TEST(no_budget_poll_sleeps_inproc)
{
    check_receiver_sleeps(ZT_INPROC, true);
}
END_TEST

START_TEST(no_budget_blocking_receive_sleeps_tcp)
{
    check_receiver_sleeps(ZT_TCP4, false);
}
END_TEST

/* Misses in a row skip more and more spins, up to the cap; a spin that
 * finds its message, or a sleep that a spin would have caught, starts
 * over at the first count. */
START_TEST(missed_spins_back_off)
{
    zl_waiter w = {0};
    int expected = ZL_WAIT_SKIPS_AFTER_A_MISS;
    for (int miss = 0; miss < 8; miss++) {
        zl_wait_missed(&w);
        ck_assert_int_eq(w.spins_to_skip, expected);
        ck_assert_uint_eq(w.spin_ns, 0);
        if (expected < ZL_WAIT_SKIPS_MAX)
            expected *= 2;
    }
    ck_assert_int_eq(w.spins_to_skip, ZL_WAIT_SKIPS_MAX);
    zl_wait_hit(&w);
    zl_wait_missed(&w);
    ck_assert_int_eq(w.spins_to_skip, ZL_WAIT_SKIPS_AFTER_A_MISS);
    zl_wait_missed(&w);
    ck_assert_int_eq(w.spins_to_skip, 2 * ZL_WAIT_SKIPS_AFTER_A_MISS);
    /* A sleep that came within the budget: spin about that long next. */
    zl_wait_adapt(&w, 20000, 30000);
    ck_assert_int_eq(w.spins_to_skip, 0);
    ck_assert_uint_eq(w.spin_ns, 25000);
    zl_wait_missed(&w);
    ck_assert_int_eq(w.spins_to_skip, ZL_WAIT_SKIPS_AFTER_A_MISS);
    /* One later than the budget changes nothing. */
    zl_wait_adapt(&w, 40000, 30000);
    ck_assert_int_eq(w.spins_to_skip, ZL_WAIT_SKIPS_AFTER_A_MISS);
}
END_TEST

#if !defined(_WIN32)
/* The I/O thread's spin alike: each miss in a row skips twice as many
 * waits, up to the cap, and a wake found while spinning starts over. */
START_TEST(io_thread_missed_spins_back_off)
{
    atomic_bool wake;
    atomic_init(&wake, false);
    zl_io_spin state = {0};
    int expected = ZL_IO_SPINS_SKIPPED_AFTER_A_MISS;
    for (int miss = 0; miss < 7; miss++) {
        ck_assert(!zl_io_spin_for_wake(&wake, &state, 1000));
        ck_assert_int_eq(state.spins_to_skip, expected);
        for (int i = 0; i < expected; i++)
            ck_assert(!zl_io_spin_for_wake(&wake, &state, 1000));
        ck_assert_int_eq(state.spins_to_skip, 0);
        if (expected < ZL_IO_SPINS_SKIPPED_MAX)
            expected *= 2;
    }
    ck_assert_int_eq(expected, ZL_IO_SPINS_SKIPPED_MAX);
    atomic_store(&wake, true);
    ck_assert(zl_io_spin_for_wake(&wake, &state, 1000));
    atomic_store(&wake, false);
    ck_assert(!zl_io_spin_for_wake(&wake, &state, 1000));
    ck_assert_int_eq(state.spins_to_skip, ZL_IO_SPINS_SKIPPED_AFTER_A_MISS);
    /* No budget: never spins, never counts a miss. */
    state = (zl_io_spin){0};
    ck_assert(!zl_io_spin_for_wake(&wake, &state, 0));
    ck_assert_int_eq(state.spins_to_skip, 0);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("spin_budget");
    TCase *tc = tcase_create("spin_budget");
    tcase_add_test(tc, budget_has_a_default_and_a_range);
    tcase_add_test(tc, no_budget_blocking_receive_sleeps_inproc);
    tcase_add_test(tc, no_budget_poll_sleeps_inproc);
    tcase_add_test(tc, no_budget_blocking_receive_sleeps_tcp);
    tcase_add_test(tc, missed_spins_back_off);
#if !defined(_WIN32)
    tcase_add_test(tc, io_thread_missed_spins_back_off);
#endif
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
