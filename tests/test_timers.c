/* test_timers.c — zlink_timers_*: libzmq 4.3's zmq_timers_* semantics (ids,
 * EINVAL on unknown ids, timeout -1 with none, execute running the due
 * handlers once each, in due order, and rescheduling them), including
 * handlers that change the set while it runs. Single-threaded. */
#include <errno.h>
#include <zlink.h>

#include "testutil.h"

typedef struct record {
    int calls;
    int last_id;
    int order[16];
    int n;
} record;

static void count(int id, void *arg)
{
    record *r = arg;
    r->calls++;
    r->last_id = id;
    if (r->n < 16)
        r->order[r->n++] = id;
}

static void *timers_new(void)
{
    void *t = zlink_timers_new();
    ck_assert_ptr_nonnull(t);
    return t;
}

static void assert_fails(int rc, int err)
{
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(zlink_errno(), err);
}

START_TEST(timers_errors)
{
    int junk = 0;
    void *bogus = &junk;
    assert_fails(zlink_timers_destroy(NULL), EFAULT);
    assert_fails(zlink_timers_destroy(&bogus), EFAULT);
    assert_fails(zlink_timers_add(&junk, 10, count, NULL), EFAULT);
    assert_fails(zlink_timers_execute(NULL), EFAULT);
    void *t = timers_new();
    assert_fails(zlink_timers_add(t, 10, NULL, NULL), EFAULT);
    assert_fails(zlink_timers_cancel(t, 1), EINVAL);
    assert_fails(zlink_timers_set_interval(t, 1, 10), EINVAL);
    assert_fails(zlink_timers_reset(t, 1), EINVAL);
    ck_assert_int_eq(zlink_timers_timeout(t), -1);
    ck_assert_int_eq(zlink_timers_execute(t), 0);
    /* A wait past a 32-bit long (Windows') is clamped, never negative. */
    int distant = zlink_timers_add(t, (size_t)3000000000u, count, NULL);
    ck_assert_int_gt(distant, 0);
    ck_assert_int_gt(zlink_timers_timeout(t), 0);
    ck_assert_int_eq(zlink_timers_cancel(t, distant), 0);
    ck_assert_int_eq(zlink_timers_execute(t), 0);

    record r = {0};
    int id = zlink_timers_add(t, 1000, count, &r);
    ck_assert_int_gt(id, 0);
    int id2 = zlink_timers_add(t, 1000, count, &r);
    ck_assert_int_gt(id2, id);
    ck_assert_int_eq(zlink_timers_cancel(t, id), 0);
    assert_fails(zlink_timers_cancel(t, id), EINVAL);
    assert_fails(zlink_timers_reset(t, id), EINVAL);
    assert_fails(zlink_timers_set_interval(t, id, 5), EINVAL);
    /* Ids are not reused. */
    ck_assert_int_gt(zlink_timers_add(t, 1000, count, &r), id2);
    ck_assert_int_eq(zlink_timers_destroy(&t), 0);
    ck_assert_ptr_null(t);
}
END_TEST

/* Waits with zlink_timers_timeout as a loop would, until r has calls. */
static void run_until(void *t, record *r, int calls, int limit_ms)
{
    uint64_t deadline = zl_test_now_ms() + (uint64_t)limit_ms;
    while (r->calls < calls && zl_test_now_ms() < deadline) {
        long timeout = zlink_timers_timeout(t);
        ck_assert_int_ge(timeout, 0);
        zl_test_sleep_ms(timeout > 0 ? (int)timeout : 1);
        ck_assert_int_eq(zlink_timers_execute(t), 0);
    }
}

START_TEST(timers_fire_and_repeat)
{
    void *t = timers_new();
    record r = {0};
    uint64_t start = zl_test_now_ms();
    int id = zlink_timers_add(t, 50, count, &r);
    long timeout = zlink_timers_timeout(t);
    ck_assert_int_gt(timeout, 0);
    ck_assert_int_le(timeout, 50);
    /* Not due yet. */
    ck_assert_int_eq(zlink_timers_execute(t), 0);
    ck_assert_int_eq(r.calls, 0);
    run_until(t, &r, 1, 5000);
    ck_assert_int_eq(r.calls, 1);
    ck_assert_int_eq(r.last_id, id);
    ck_assert_uint_ge(zl_test_now_ms() - start, 45);
    /* Once per execute, however late (the sleeps in this suite are the
     * durations the timers measure). */
    zl_test_sleep_ms(120);
    ck_assert_int_eq(zlink_timers_timeout(t), 0);
    ck_assert_int_eq(zlink_timers_execute(t), 0);
    ck_assert_int_eq(r.calls, 2);
    ck_assert_int_gt(zlink_timers_timeout(t), 0);
    run_until(t, &r, 3, 5000);
    ck_assert_int_eq(r.calls, 3);
    ck_assert_int_eq(zlink_timers_destroy(&t), 0);
}
END_TEST

START_TEST(timers_cancel_reset_set_interval)
{
    void *t = timers_new();
    record r = {0};
    int id = zlink_timers_add(t, 40, count, &r);
    zl_test_sleep_ms(30);
    /* reset: a whole interval from now. */
    ck_assert_int_eq(zlink_timers_reset(t, id), 0);
    ck_assert_int_gt(zlink_timers_timeout(t), 30);
    /* set_interval: the new interval, from now. */
    ck_assert_int_eq(zlink_timers_set_interval(t, id, 1000), 0);
    ck_assert_int_gt(zlink_timers_timeout(t), 900);
    ck_assert_int_eq(zlink_timers_set_interval(t, id, 10), 0);
    ck_assert_int_le(zlink_timers_timeout(t), 10);
    run_until(t, &r, 1, 5000);
    ck_assert_int_eq(r.calls, 1);
    ck_assert_int_eq(zlink_timers_cancel(t, id), 0);
    ck_assert_int_eq(zlink_timers_timeout(t), -1);
    zl_test_sleep_ms(30);
    ck_assert_int_eq(zlink_timers_execute(t), 0);
    ck_assert_int_eq(r.calls, 1);
    ck_assert_int_eq(zlink_timers_destroy(&t), 0);
}
END_TEST

/* Due timers run in due order, each once per execute. */
START_TEST(timers_order)
{
    void *t = timers_new();
    record r = {0};
    int late = zlink_timers_add(t, 30, count, &r);
    int early = zlink_timers_add(t, 10, count, &r);
    int zero = zlink_timers_add(t, 0, count, &r);
    zl_test_sleep_ms(50);
    ck_assert_int_eq(zlink_timers_execute(t), 0);
    ck_assert_int_eq(r.calls, 3);
    ck_assert_int_eq(r.order[0], zero);
    ck_assert_int_eq(r.order[1], early);
    ck_assert_int_eq(r.order[2], late);
    ck_assert_int_eq(zlink_timers_destroy(&t), 0);
}
END_TEST

typedef struct meddler {
    void *timers;
    int victim;
    int calls;
    int added;
} meddler;

/* Cancels another due timer, cancels itself and adds a new one. */
static void meddle(int id, void *arg)
{
    meddler *m = arg;
    m->calls++;
    ck_assert_int_eq(zlink_timers_cancel(m->timers, m->victim), 0);
    ck_assert_int_eq(zlink_timers_cancel(m->timers, id), 0);
    m->added = zlink_timers_add(m->timers, 0, count, NULL);
}

static void never(int id, void *arg)
{
    (void)id;
    (void)arg;
    ck_abort_msg("a cancelled timer ran");
}

START_TEST(timers_changed_by_handler)
{
    void *t = timers_new();
    meddler m = {t, 0, 0, 0};
    zlink_timers_add(t, 0, meddle, &m);
    m.victim = zlink_timers_add(t, 5, never, NULL);
    zl_test_sleep_ms(20);
    ck_assert_int_eq(zlink_timers_execute(t), 0);
    ck_assert_int_eq(m.calls, 1);
    ck_assert_int_gt(m.added, 0);
    /* Only the added timer is left. */
    assert_fails(zlink_timers_cancel(t, m.victim), EINVAL);
    ck_assert_int_eq(zlink_timers_cancel(t, m.added), 0);
    ck_assert_int_eq(zlink_timers_timeout(t), -1);
    ck_assert_int_eq(zlink_timers_destroy(&t), 0);
}
END_TEST

static Suite *timers_suite(void)
{
    Suite *s = suite_create("timers");
    TCase *tc = tcase_create("timers");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, timers_errors);
    tcase_add_test(tc, timers_fire_and_repeat);
    tcase_add_test(tc, timers_cancel_reset_set_interval);
    tcase_add_test(tc, timers_order);
    tcase_add_test(tc, timers_changed_by_handler);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(timers_suite());
}
