/* test_wakeups.c — the ways a waiting thread learns of new input: a blocking
 * receive that spins with its pipes kept awake and then sleeps, zlink_poll
 * that spins and then sleeps, and an engine that gives its buffers back
 * when a connection goes quiet and reads again after a zero-byte probe.
 * Each test sends at gaps shorter than, about as long as, and much longer
 * than the spins (wait.h), so that every path runs: a message found while
 * spinning, one that comes as the spin gives up, and one that must wake a
 * sleeper. A lost wakeup shows as a receive timeout. */
#if defined(__linux__)
#define _GNU_SOURCE /* pthread_setaffinity_np */
#include <pthread.h>
#include <sched.h>
#endif
#include <uv.h>

#include "atomics.h"
#include "backend.h"
#include "io_spin.h"
#include "socket.h"
#include "socket_testutil.h"
#include "wait.h"

/* Gaps between messages, in microseconds: within a spin, around its end
 * (10 us for applications, 30 us for I/O threads), and well past it. */
static const unsigned gaps_us[] = {0, 2, 9, 12, 28, 35, 200, 3000};
#define GAP_COUNT (sizeof gaps_us / sizeof gaps_us[0])
#define ROUNDS 3 /* each gap, this many times */

typedef struct sender_args {
    void *socket;
    unsigned seed;
} sender_args;

/* Sends GAP_COUNT * ROUNDS one-part messages of 64 bytes (inline), seeded
 * in order, with the gaps between them. */
static void gap_sender(void *arg)
{
    sender_args *a = arg;
    unsigned n = 0;
    for (int round = 0; round < ROUNDS; round++)
        for (size_t g = 0; g < GAP_COUNT; g++) {
            zl_test_wait_us(gaps_us[g]);
            zt_send_part(a->socket, 64, a->seed + n++, 0);
        }
}

typedef struct wake_fixture {
    void *ctx, *receiver, *senders[2];
    int sender_count;
    char endpoint[300];
} wake_fixture;

/* A DEALER receiver with one or two DEALER peers: two peers mean two pipes
 * for the receive spin to keep awake and settle. */
static bool wake_open(wake_fixture *f, int transport, int senders)
{
    f->ctx = zt_ctx();
    f->receiver = zt_socket(f->ctx, ZLINK_DEALER);
    f->sender_count = 0;
    for (int i = 0; i < senders; i++) {
        f->senders[i] = zt_socket(f->ctx, ZLINK_DEALER);
        f->sender_count++;
        bool joined =
            i == 0 ? zt_join(f->receiver, f->senders[0], transport, f->endpoint,
                             sizeof f->endpoint)
                   : (zt_connect_over(f->senders[i], transport, f->endpoint),
                      true);
        if (!joined) {
            for (int j = 0; j <= i; j++)
                zt_close(f->senders[j]);
            zt_close(f->receiver);
            zt_term(f->ctx);
            return false;
        }
    }
    /* Connected before the timing starts: one message each way. */
    for (int i = 0; i < senders; i++) {
        zt_send_part(f->senders[i], 1, 900 + (unsigned)i, 0);
        zt_recv_part(f->receiver, 1, 900 + (unsigned)i, false);
    }
    return true;
}

static void wake_close(wake_fixture *f)
{
    for (int i = 0; i < f->sender_count; i++)
        zt_close(f->senders[i]);
    zt_close(f->receiver);
    zt_term(f->ctx);
}

/* Each peer's messages arrive in its own order, whatever the interleaving
 * of the peers. */
static void receive_in_order(void *receiver, const sender_args *args,
                             int senders, bool poll_first)
{
    unsigned next[2] = {0, 0};
    int total = senders * (int)(GAP_COUNT * ROUNDS);
    for (int n = 0; n < total; n++) {
        if (poll_first) {
            zlink_pollitem_t item = {receiver, 0, ZLINK_POLLIN, 0};
            ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
            ck_assert(item.revents & ZLINK_POLLIN);
        }
        zlink_msg_t msg;
        zlink_msg_init(&msg);
        int rc = zlink_msg_recv(&msg, receiver, 0);
        ck_assert_msg(rc == 64, "message %d of %d: %s", n, total,
                      zlink_strerror(zlink_errno()));
        /* The first byte tells the peer (seeds 0 and 1000 differ). */
        int from = -1;
        for (int i = 0; i < senders; i++)
            if (((uint8_t *)zlink_msg_data(&msg))[0] ==
                zt_byte(args[i].seed + next[i], 0)) {
                from = i;
                break;
            }
        ck_assert_msg(from >= 0, "message %d is out of order", n);
        zt_check_bytes(zlink_msg_data(&msg), 64, args[from].seed + next[from]);
        next[from]++;
        zlink_msg_close(&msg);
    }
}

static void run_gaps(int transport, int senders, bool poll_first)
{
    wake_fixture f;
    if (!wake_open(&f, transport, senders))
        return;
    sender_args args[2] = {{f.senders[0], 0}, {f.senders[1], 1000}};
    uv_thread_t threads[2];
    for (int i = 0; i < senders; i++)
        ck_assert_int_eq(uv_thread_create(&threads[i], gap_sender, &args[i]),
                         0);
    receive_in_order(f.receiver, args, senders, poll_first);
    for (int i = 0; i < senders; i++)
        uv_thread_join(&threads[i]);
    wake_close(&f);
}

START_TEST(blocking_recv_at_every_gap)
{
    run_gaps(_i, 1, false);
}
END_TEST

START_TEST(blocking_recv_two_pipes_at_every_gap)
{
    run_gaps(_i, 2, false);
}
END_TEST

START_TEST(poll_then_recv_at_every_gap)
{
    run_gaps(_i, 2, true);
}
END_TEST

/* A poll that finds nothing waits its timeout out, spin or not. */
START_TEST(poll_times_out_when_nothing_comes)
{
    wake_fixture f;
    if (!wake_open(&f, ZT_INPROC, 1))
        return;
    zlink_pollitem_t item = {f.receiver, 0, ZLINK_POLLIN, 0};
    uint64_t start = zl_test_now_ms();
    ck_assert_int_eq(zlink_poll(&item, 1, 50), 0);
    ck_assert_int_eq(item.revents, 0);
    ck_assert_uint_ge(zl_test_now_ms() - start, 45);
    ck_assert_int_eq(zlink_poll(&item, 1, 0), 0);
    wake_close(&f);
}
END_TEST

/* Quiet periods long enough for the engines to give their buffers back,
 * then bodies that take a probe and one read, several reads, and a read
 * straight into the message. */
START_TEST(connection_reads_after_quiet_periods)
{
    wake_fixture f;
    if (!wake_open(&f, _i, 1))
        return;
    static const size_t sizes[] = {64, 40000, 300000, 64, 9000};
    for (unsigned round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            zl_test_sleep_ms(20);
            unsigned seed = round * 10 + (unsigned)i;
            zt_send_part(f.senders[0], sizes[i], seed, 0);
            zt_recv_part(f.receiver, sizes[i], seed, false);
            zt_send_part(f.receiver, sizes[i], seed + 100, 0);
            zt_recv_part(f.senders[0], sizes[i], seed + 100, false);
        }
    wake_close(&f);
}
END_TEST

/* The gap between a spinning receive's looks (wait.h): after a receive
 * that found its message waiting, for application threads' pipes only;
 * none after a receive that had to wait for it. */
static uint32_t spin_gap_of(void *receiver)
{
    zl_socket *s = zl_socket_from_handle(receiver);
    return zl_socket_spin_gap_ns(s, !zl_socket_peers_are_threads(s));
}

/* Sends one two-part message 20 ms from now: a receive started now waits
 * for its first part and finds the second waiting. */
static void late_sender(void *socket)
{
    zl_test_sleep_ms(20); /* late on purpose */
    zt_send_part(socket, 64, 7, ZLINK_SNDMORE);
    zt_send_part(socket, 64, 8, 0);
}

START_TEST(streaming_receive_looks_at_a_gap)
{
    wake_fixture f;
    if (!wake_open(&f, _i, 1))
        return;
    bool inproc = _i == ZT_INPROC || _i == ZT_INPROC_CONNECT_FIRST;
    for (unsigned i = 0; i < 3; i++)
        zt_send_part(f.senders[0], 64, i, 0);
    /* Over tcp or ipc the messages come through the I/O thread: the first
     * receive may wait for them, the later ones find them waiting. */
    for (unsigned i = 0; i < 3; i++)
        zt_recv_part(f.receiver, 64, i, false);
    uint32_t expected = inproc ? ZL_WAIT_STREAMING_GAP_NS : 0;
    ck_assert_uint_eq(spin_gap_of(f.receiver), expected);
    /* The second part was waiting, but only a message's first part
     * tells whether the receiver keeps finding its messages waiting. On a
     * loaded machine this thread may reach its receive after the late
     * sender has sent, and find the first part waiting too: then the case
     * is tried again, a bounded number of times. */
    bool waited = false;
    for (int attempt = 0; attempt < 5 && !waited; attempt++) {
        uv_thread_t sender;
        ck_assert_int_eq(uv_thread_create(&sender, late_sender, f.senders[0]),
                         0);
        zt_recv_part(f.receiver, 64, 7, true);
        zt_recv_part(f.receiver, 64, 8, false);
        uv_thread_join(&sender);
        waited = spin_gap_of(f.receiver) == 0;
    }
    ck_assert_msg(waited, "a receive that waited left a gap of %u ns",
                  (unsigned)spin_gap_of(f.receiver));
    wake_close(&f);
}
END_TEST

/* A blocking receive or a zlink_poll that sleeps names the CPU it sleeps
 * on in its socket's mailbox, for the I/O threads to hold their signals
 * (zl_mailbox_hold_signals), and takes it back once awake. */
typedef struct sleeper {
    void *socket;
    bool poll;
    atomic_bool done;
} sleeper;

static void sleep_in_wait(void *arg)
{
    sleeper *w = arg;
    if (w->poll) {
        zlink_pollitem_t item = {w->socket, 0, ZLINK_POLLIN, 0};
        zlink_poll(&item, 1, 300);
    } else {
        char byte;
        zlink_recv(w->socket, &byte, 1, 0); /* ZLINK_RCVTIMEO: 300 ms */
    }
    atomic_store(&w->done, true);
}

START_TEST(sleeping_wait_names_its_cpu)
{
    if (zl_thread_cpu() < 0)
        return; /* the OS cannot say: nothing to name */
    wake_fixture f;
    if (!wake_open(&f, ZT_TCP4, 1))
        return;
    int timeout = 300;
    ck_assert_int_eq(
        zlink_setsockopt(f.receiver, ZLINK_RCVTIMEO, &timeout, sizeof timeout),
        0);
    zl_socket *s = zl_socket_from_handle(f.receiver);
    for (int poll = 0; poll < 2; poll++) {
        sleeper w = {.socket = f.receiver, .poll = poll == 1};
        atomic_init(&w.done, false);
        uv_thread_t thread;
        ck_assert_int_eq(uv_thread_create(&thread, sleep_in_wait, &w), 0);
        int named = -1;
        for (int i = 0; i < 200 && named < 0 && !atomic_load(&w.done); i++) {
            zl_test_sleep_ms(1);
            named = atomic_load(&s->mailbox.sleeper_cpu);
        }
        uv_thread_join(&thread);
        ck_assert_msg(named >= 0, "a sleeping %s named no CPU",
                      poll ? "zlink_poll" : "receive");
        ck_assert_int_eq(atomic_load(&s->mailbox.sleeper_cpu), -1);
    }
    wake_close(&f);
}
END_TEST

#if defined(__linux__)
/* Where a receive whose peer is an I/O thread may spin (wait.h): never on
 * that thread's CPU. A thread inherits its creator's CPU mask, so pinning
 * this thread before the context makes its I/O thread pins the I/O thread
 * too. */
static bool pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

/* The CPUs this thread may use, and the first two of them (-1 where
 * there are fewer). */
static void allowed_cpus(cpu_set_t *allowed, int *a, int *b)
{
    *a = *b = -1;
    ck_assert_int_eq(
        pthread_getaffinity_np(pthread_self(), sizeof *allowed, allowed), 0);
    for (int cpu = 0; cpu < CPU_SETSIZE && *b < 0; cpu++)
        if (CPU_ISSET(cpu, allowed))
            *(*a < 0 ? a : b) = cpu;
}

static void unpin(const cpu_set_t *allowed)
{
    ck_assert_int_eq(
        pthread_setaffinity_np(pthread_self(), sizeof *allowed, allowed), 0);
}

START_TEST(spin_is_clear_only_off_the_io_threads_cpu)
{
    cpu_set_t allowed;
    int a, b;
    allowed_cpus(&allowed, &a, &b);
    if (b < 0)
        return; /* one CPU: nothing to tell apart */
    ck_assert(pin_to(a));
    wake_fixture tcp, inproc;
    ck_assert(wake_open(&tcp, ZT_TCP4, 1)); /* the I/O thread has run on a */
    ck_assert(wake_open(&inproc, ZT_INPROC, 1));
    zl_socket *by_tcp = zl_socket_from_handle(tcp.receiver);
    zl_socket *by_inproc = zl_socket_from_handle(inproc.receiver);
    ck_assert(!zl_socket_spin_is_clear(by_tcp));
    ck_assert(zl_socket_spin_is_clear(by_inproc));
    ck_assert(pin_to(b));
    ck_assert(zl_socket_spin_is_clear(by_tcp));
    ck_assert(zl_socket_spin_is_clear(by_inproc));
    wake_close(&inproc);
    wake_close(&tcp);
    unpin(&allowed);
}
END_TEST

#define SLOW_MESSAGES 20

/* Sends SLOW_MESSAGES, each a millisecond after the last: every receive
 * waits for its message far longer than any spin. */
static void slow_sender(void *socket)
{
    for (unsigned i = 0; i < SLOW_MESSAGES; i++) {
        zl_test_sleep_ms(1);
        zt_send_part(socket, 64, i, 0);
    }
}

/* Everything on one CPU: a tcp receive sleeps at once and lets the I/O
 * thread bring its message. A spin there could only run out, and one that
 * runs out makes the next receives skip theirs (spins_to_skip). */
START_TEST(tcp_receive_on_the_io_threads_cpu_never_spins)
{
    cpu_set_t allowed;
    int a, b;
    allowed_cpus(&allowed, &a, &b);
    ck_assert(pin_to(a));
    wake_fixture f;
    ck_assert(wake_open(&f, ZT_TCP4, 1));
    zl_socket *receiver = zl_socket_from_handle(f.receiver);
    uv_thread_t sender;
    ck_assert_int_eq(uv_thread_create(&sender, slow_sender, f.senders[0]), 0);
    for (unsigned i = 0; i < SLOW_MESSAGES; i++) {
        zt_recv_part(f.receiver, 64, i, false);
        ck_assert_msg(receiver->waiter.spins_to_skip == 0 &&
                          receiver->waiter.spin_ns == 0,
                      "receive %u spun on the I/O thread's CPU", i);
    }
    uv_thread_join(&sender);
    wake_close(&f);
    unpin(&allowed);
}
END_TEST

/* A thread that keeps its CPU busy until told to stop. */
typedef struct busy_thread {
    int cpu;
    atomic_bool running, stop;
} busy_thread;

static void busy_main(void *arg)
{
    busy_thread *b = arg;
    ck_assert(pin_to(b->cpu));
    atomic_store(&b->running, true);
    while (!atomic_load(&b->stop))
        ;
}

static int never_found(void *arg)
{
    (void)arg;
    return 0;
}

static bool always_clear(void *arg)
{
    (void)arg;
    return true;
}

/* With another runnable thread on its CPU, a spin's yield lets that thread
 * run for a time slice: the spin stops as a miss that skips the most
 * spins, for an application thread and for an I/O thread alike, rather
 * than keep taking the CPU from the threads it waits for. */
START_TEST(spin_on_a_busy_cpu_backs_off_the_most)
{
    cpu_set_t allowed;
    int a, b;
    allowed_cpus(&allowed, &a, &b);
    ck_assert(pin_to(a));
    busy_thread busy = {.cpu = a};
    atomic_init(&busy.running, false);
    atomic_init(&busy.stop, false);
    uv_thread_t thread;
    ck_assert_int_eq(uv_thread_create(&thread, busy_main, &busy), 0);
    while (!atomic_load(&busy.running))
        zl_thread_yield();

    zl_waiter w = {0};
    uint64_t until = uv_hrtime() + 20000000u; /* 20 ms: many yields */
    ck_assert_int_eq(
        zl_wait_spin(&w, until, 0, true, never_found, always_clear, NULL), 0);
    ck_assert_int_eq(w.spins_to_skip, ZL_WAIT_SKIPS_MAX);

    atomic_bool wake;
    atomic_init(&wake, false);
    zl_io_spin io = {0};
    ck_assert(!zl_io_spin_for_wake(&wake, &io, 20000000u));
    ck_assert_int_eq(io.spins_to_skip, ZL_IO_SPINS_SKIPPED_MAX);

    atomic_store(&busy.stop, true);
    uv_thread_join(&thread);
    unpin(&allowed);
}
END_TEST
#endif

int main(void)
{
    Suite *s = suite_create("wakeups");
    TCase *tc = tcase_create("wakeups");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, blocking_recv_at_every_gap, 0, ZT_TRANSPORT_COUNT);
    tcase_add_loop_test(tc, blocking_recv_two_pipes_at_every_gap, 0,
                        ZT_TRANSPORT_COUNT);
    tcase_add_loop_test(tc, poll_then_recv_at_every_gap, 0, ZT_TRANSPORT_COUNT);
    tcase_add_test(tc, poll_times_out_when_nothing_comes);
    tcase_add_loop_test(tc, streaming_receive_looks_at_a_gap, 0,
                        ZT_TRANSPORT_COUNT);
    tcase_add_test(tc, sleeping_wait_names_its_cpu);
    tcase_add_loop_test(tc, connection_reads_after_quiet_periods, 0,
                        ZT_TRANSPORT_COUNT);
#if defined(__linux__)
    tcase_add_test(tc, spin_is_clear_only_off_the_io_threads_cpu);
    tcase_add_test(tc, tcp_receive_on_the_io_threads_cpu_never_spins);
    tcase_add_test(tc, spin_on_a_busy_cpu_backs_off_the_most);
#endif
    suite_add_tcase(s, tc);
    return zl_test_run(s);
}
