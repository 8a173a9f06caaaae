/* test_mailbox.c — the command mailbox: order, signalling, producers on many
 * threads, signal hand-over, and the pipe references of queued commands. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "atomics.h"
#include "backend.h"
#include "mailbox.h"
#include "msg.h"
#include "pipe.h"
#include "testutil.h"

static int signals_a, signals_b;

static void count_a(void *arg)
{
    signals_a++;
}
static void count_b(void *arg)
{
    signals_b++;
}

static zl_cmd call_cmd(intptr_t arg)
{
    zl_cmd cmd = {.type = ZL_CMD_CALL, .arg = arg};
    return cmd;
}

START_TEST(test_fifo_order_and_growth)
{
    zl_mailbox mb;
    ck_assert_int_eq(zl_mailbox_init(&mb, NULL, NULL), 0);
    zl_cmd cmd;
    /* Wrap the ring before it grows, so growth has to unwrap it. */
    for (int i = 0; i < 40; i++) {
        cmd = call_cmd(i);
        zl_mailbox_send(&mb, &cmd);
    }
    for (int i = 0; i < 40; i++) {
        ck_assert(zl_mailbox_recv(&mb, &cmd));
        ck_assert_int_eq(cmd.arg, i);
    }
    for (int i = 0; i < 1000; i++) {
        cmd = call_cmd(i);
        zl_mailbox_send(&mb, &cmd);
    }
    for (int i = 0; i < 1000; i++) {
        ck_assert(zl_mailbox_recv(&mb, &cmd));
        ck_assert_int_eq(cmd.type, ZL_CMD_CALL);
        ck_assert_int_eq(cmd.arg, i);
    }
    ck_assert(!zl_mailbox_recv(&mb, &cmd));
    zl_mailbox_destroy(&mb);
}
END_TEST

START_TEST(test_signal_only_when_empty)
{
    zl_mailbox mb;
    signals_a = 0;
    ck_assert_int_eq(zl_mailbox_init(&mb, count_a, NULL), 0);
    zl_cmd cmd = call_cmd(1);
    zl_mailbox_send(&mb, &cmd);
    zl_mailbox_send(&mb, &cmd);
    zl_mailbox_send(&mb, &cmd);
    ck_assert_int_eq(signals_a, 1);
    /* Still non-empty after one recv: no new signal. */
    ck_assert(zl_mailbox_recv(&mb, &cmd));
    zl_mailbox_send(&mb, &cmd);
    ck_assert_int_eq(signals_a, 1);
    while (zl_mailbox_recv(&mb, &cmd))
        ;
    zl_mailbox_send(&mb, &cmd);
    ck_assert_int_eq(signals_a, 2);
    zl_mailbox_destroy(&mb);
}
END_TEST

START_TEST(test_set_signal)
{
    zl_mailbox mb;
    signals_a = signals_b = 0;
    ck_assert_int_eq(zl_mailbox_init(&mb, count_a, NULL), 0);
    /* Empty: the new callback is not called. */
    zl_mailbox_set_signal(&mb, count_b, NULL);
    ck_assert_int_eq(signals_b, 0);
    zl_mailbox_set_signal(&mb, count_a, NULL);
    zl_cmd cmd = call_cmd(7);
    zl_mailbox_send(&mb, &cmd);
    ck_assert_int_eq(signals_a, 1);
    /* Non-empty: the new owner hears about what is already queued. */
    zl_mailbox_set_signal(&mb, count_b, NULL);
    ck_assert_int_eq(signals_b, 1);
    zl_mailbox_send(&mb, &cmd);
    ck_assert_int_eq(signals_a, 1);
    ck_assert_int_eq(signals_b, 1);
    while (zl_mailbox_recv(&mb, &cmd))
        ;
    zl_mailbox_send(&mb, &cmd);
    ck_assert_int_eq(signals_a, 1);
    ck_assert_int_eq(signals_b, 2);
    zl_mailbox_destroy(&mb);
}
END_TEST

/* ---- Many producers --------------------------------------------------- */

#define PRODUCERS 4
#define PER_PRODUCER 100000

typedef struct waiter {
    uv_mutex_t lock;
    uv_cond_t cond;
    int signalled;
} waiter;

static void waiter_signal(void *arg)
{
    waiter *w = arg;
    uv_mutex_lock(&w->lock);
    w->signalled = 1;
    uv_cond_signal(&w->cond);
    uv_mutex_unlock(&w->lock);
}

static void waiter_wait(waiter *w)
{
    uv_mutex_lock(&w->lock);
    while (!w->signalled)
        uv_cond_wait(&w->cond, &w->lock);
    w->signalled = 0;
    uv_mutex_unlock(&w->lock);
}

typedef struct producer {
    zl_mailbox *mb;
    int id;
    uv_thread_t thread;
} producer;

static void produce(void *arg)
{
    producer *p = arg;
    for (intptr_t i = 0; i < PER_PRODUCER; i++) {
        zl_cmd cmd = call_cmd(i);
        cmd.target = p;
        zl_mailbox_send(p->mb, &cmd);
    }
}

START_TEST(test_many_producers)
{
    waiter w = {0};
    zl_mailbox mb;
    producer producers[PRODUCERS];
    intptr_t next[PRODUCERS] = {0};
    ck_assert_int_eq(uv_mutex_init(&w.lock), 0);
    ck_assert_int_eq(uv_cond_init(&w.cond), 0);
    ck_assert_int_eq(zl_mailbox_init(&mb, waiter_signal, &w), 0);
    for (int i = 0; i < PRODUCERS; i++) {
        producers[i].mb = &mb;
        producers[i].id = i;
        ck_assert_int_eq(
            uv_thread_create(&producers[i].thread, produce, &producers[i]), 0);
    }
    /* The owner's pattern: on signal, drain until empty. A lost signal
     * would hang here with commands queued. */
    int received = 0;
    while (received < PRODUCERS * PER_PRODUCER) {
        waiter_wait(&w);
        zl_cmd cmd;
        while (zl_mailbox_recv(&mb, &cmd)) {
            producer *p = cmd.target;
            ck_assert_int_eq(cmd.arg, next[p->id]);
            next[p->id]++;
            received++;
        }
    }
    for (int i = 0; i < PRODUCERS; i++) {
        uv_thread_join(&producers[i].thread);
        ck_assert_int_eq(next[i], PER_PRODUCER);
    }
    zl_mailbox_destroy(&mb);
    uv_cond_destroy(&w.cond);
    uv_mutex_destroy(&w.lock);
}
END_TEST

/* ---- Pipe references -------------------------------------------------- */

static int frees;

static void count_free(void *data, void *hint)
{
    frees++;
}

/* ---- signals an I/O thread holds back during its turn ---- */

static void count_into(void *arg)
{
    (*(int *)arg)++;
}

typedef struct held_case {
    /* Owners asleep on this CPU, asleep on another, and awake. (Not near
     * and far: Windows headers define those.) */
    zl_mailbox here, elsewhere, awake;
    int here_signals, elsewhere_signals, awake_signals;
} held_case;

static void held_case_init(held_case *c, int cpu)
{
    memset(c, 0, sizeof *c);
    ck_assert_int_eq(zl_mailbox_init(&c->here, count_into, &c->here_signals),
                     0);
    ck_assert_int_eq(
        zl_mailbox_init(&c->elsewhere, count_into, &c->elsewhere_signals), 0);
    ck_assert_int_eq(zl_mailbox_init(&c->awake, count_into, &c->awake_signals),
                     0);
    zl_mailbox_set_sleeper_cpu(&c->here, cpu);
    zl_mailbox_set_sleeper_cpu(&c->elsewhere, cpu + 1);
}

static void held_case_destroy(held_case *c)
{
    zl_mailbox_destroy(&c->here);
    zl_mailbox_destroy(&c->elsewhere);
    zl_mailbox_destroy(&c->awake);
}

/* Within a turn, only the owner asleep on this thread's CPU waits for its
 * signal, and it gets it at the release; outside a turn nothing waits. */
START_TEST(test_signal_held_for_a_sleeper_on_this_cpu)
{
    if (zl_thread_cpu() < 0)
        return; /* the OS cannot say: nothing is ever held */
    bool checked = false;
    /* The thread may move between CPUs mid-case: then try again. */
    for (int attempt = 0; attempt < 20 && !checked; attempt++) {
        int cpu = zl_thread_cpu();
        held_case c;
        held_case_init(&c, cpu);
        zl_cmd cmd = call_cmd(1);
        zl_mailbox_hold_signals();
        zl_mailbox_send(&c.here, &cmd);
        zl_mailbox_send(&c.elsewhere, &cmd);
        zl_mailbox_send(&c.awake, &cmd);
        bool stayed = zl_thread_cpu() == cpu;
        ck_assert_int_eq(c.elsewhere_signals, 1);
        ck_assert_int_eq(c.awake_signals, 1);
        if (stayed) {
            ck_assert_int_eq(c.here_signals, 0);
            ck_assert_int_eq(atomic_load(&c.here.signals_in_flight), 1);
        }
        zl_mailbox_release_signals();
        ck_assert_int_eq(c.here_signals, 1);
        ck_assert_int_eq(atomic_load(&c.here.signals_in_flight), 0);
        /* After the turn, a signal goes out at once. */
        while (zl_mailbox_recv(&c.here, &cmd))
            ;
        zl_mailbox_send(&c.here, &cmd);
        ck_assert_int_eq(c.here_signals, 2);
        held_case_destroy(&c);
        checked = stayed;
    }
    ck_assert_msg(checked, "the test thread never kept its CPU");
}
END_TEST

/* More owners asleep on this CPU than a turn holds: every one still gets
 * exactly one signal. */
START_TEST(test_every_held_signal_is_delivered)
{
    enum { OWNERS = 100 };
    static zl_mailbox mbs[OWNERS];
    static int counts[OWNERS];
    int cpu = zl_thread_cpu();
    for (int i = 0; i < OWNERS; i++) {
        counts[i] = 0;
        ck_assert_int_eq(zl_mailbox_init(&mbs[i], count_into, &counts[i]), 0);
        zl_mailbox_set_sleeper_cpu(&mbs[i], cpu);
    }
    zl_cmd cmd = call_cmd(2);
    zl_mailbox_hold_signals();
    for (int i = 0; i < OWNERS; i++)
        zl_mailbox_send(&mbs[i], &cmd);
    zl_mailbox_release_signals();
    for (int i = 0; i < OWNERS; i++) {
        ck_assert_int_eq(counts[i], 1);
        zl_mailbox_destroy(&mbs[i]);
    }
}
END_TEST

typedef struct handover {
    zl_mailbox *mb;
    atomic_bool done;
} handover;

static void hand_over(void *arg)
{
    handover *h = arg;
    zl_mailbox_set_signal(h->mb, count_b, NULL);
    atomic_store(&h->done, true);
}

/* A held signal counts as in flight: handing the mailbox over (a socket's
 * close) waits for it, so the old owner is never signalled afterwards. */
START_TEST(test_set_signal_waits_for_a_held_signal)
{
    bool checked = false;
    for (int attempt = 0; attempt < 20 && !checked; attempt++) {
        int cpu = zl_thread_cpu();
        if (cpu < 0)
            return;
        held_case c;
        held_case_init(&c, cpu);
        signals_b = 0;
        zl_cmd cmd = call_cmd(3);
        zl_mailbox_hold_signals();
        zl_mailbox_send(&c.here, &cmd);
        if (c.here_signals == 0) {
            handover h = {.mb = &c.here};
            atomic_init(&h.done, false);
            uv_thread_t thread;
            ck_assert_int_eq(uv_thread_create(&thread, hand_over, &h), 0);
            /* A duration, not a wait: set_signal must not return while the
             * signal is held. */
            zl_test_sleep_ms(20);
            ck_assert_msg(!atomic_load(&h.done),
                          "set_signal returned with a signal held");
            zl_mailbox_release_signals();
            uv_thread_join(&thread);
            ck_assert(atomic_load(&h.done));
            ck_assert_int_eq(c.here_signals, 1);
            checked = true;
        } else {
            zl_mailbox_release_signals();
        }
        held_case_destroy(&c);
    }
    ck_assert_msg(checked, "the test thread never kept its CPU");
}
END_TEST

START_TEST(test_destroy_releases_pipe_refs)
{
    zl_mailbox mb_a, mb_b;
    zl_pipe *a, *b;
    frees = 0;
    ck_assert_int_eq(zl_mailbox_init(&mb_a, NULL, NULL), 0);
    ck_assert_int_eq(zl_mailbox_init(&mb_b, NULL, NULL), 0);
    ck_assert_int_eq(zl_pipe_pair(&a, &b, 0, 0), 0);
    zl_pipe_set_owner(a, &mb_a, &mb_a);
    zl_pipe_set_owner(b, &mb_b, &mb_b);

    /* A message that can only be freed with the pipe's memory. */
    static char body[100];
    zlink_msg_t msg;
    ck_assert_int_eq(
        zlink_msg_init_data(&msg, body, sizeof body, count_free, NULL), 0);
    ck_assert(zl_pipe_write(a, &msg));
    zl_pipe_flush(a);
    /* PIPE_TERM for b, holding a reference, stays queued. */
    zl_pipe_terminate(a);
    zl_pipe_release(a);
    zl_pipe_release(b);
    ck_assert_int_eq(frees, 0);
    zl_mailbox_destroy(&mb_b);
    ck_assert_int_eq(frees, 1);
    zl_mailbox_destroy(&mb_a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mailbox");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fifo_order_and_growth);
    tcase_add_test(tc, test_signal_only_when_empty);
    tcase_add_test(tc, test_set_signal);
    tcase_add_test(tc, test_many_producers);
    tcase_add_test(tc, test_destroy_releases_pipe_refs);
    tcase_add_test(tc, test_signal_held_for_a_sleeper_on_this_cpu);
    tcase_add_test(tc, test_every_held_signal_is_delivered);
    tcase_add_test(tc, test_set_signal_waits_for_a_held_signal);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
