/* test_signals.c — a signal ends every blocking wait with EINTR, as in
 * libzmq: a program whose handler sets a flag (a Ctrl-C) sees it in its
 * loop. The waits: a receive that reads its connection itself (tcp, ipc),
 * one that waits for its pipe (inproc), a REQ's, a receive with a
 * timeout, zlink_poll, a poller, a send at the HWM, and zlink_ctx_term's
 * wait for lingering sockets. And zlink's own threads take no signal. POSIX
 * only: with another OS it is one passing, skipping case. */
#include "testutil.h"

#include <stdio.h>

#if !defined(_WIN32)

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "socket_testutil.h"

static atomic_int handled;

static void on_signal(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

/* Signals the waiting thread every 10 ms until it returns: one signal
 * that comes before its wait begins is simply handled, the next one
 * interrupts the wait. Bounded: a wait that ignores signals then ends by
 * its own timeout, or by a message from unblock, a socket the waiting
 * thread leaves alone meanwhile. */
typedef struct interrupter {
    pthread_t target, thread;
    atomic_bool returned;
    void *unblock;
} interrupter;

static void *interrupt_until_returned(void *arg)
{
    interrupter *in = arg;
    for (int i = 0; i < 300 && !atomic_load(&in->returned); i++) {
        zl_test_sleep_ms(10);
        if (!atomic_load(&in->returned))
            pthread_kill(in->target, SIGUSR1);
    }
    if (in->unblock && !atomic_load(&in->returned))
        zlink_send(in->unblock, "unblock", 7, ZLINK_DONTWAIT);
    return NULL;
}

static void interrupter_start(interrupter *in, void *unblock)
{
    /* No SA_RESTART: libzmq's waits are not restarted either. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
    in->target = pthread_self();
    in->unblock = unblock;
    atomic_init(&in->returned, false);
    atomic_store(&handled, 0);
    ck_assert_int_eq(
        pthread_create(&in->thread, NULL, interrupt_until_returned, in), 0);
}

/* The wait returned rc: it must be -1 with EINTR, after a handled signal. */
static void interrupter_check(interrupter *in, int rc)
{
    int err = zlink_errno();
    atomic_store(&in->returned, true);
    pthread_join(in->thread, NULL);
    signal(SIGUSR1, SIG_IGN);
    ck_assert_msg(rc == -1 && err == EINTR, "expected -1/EINTR, got %d/%d (%s)",
                  rc, err, zlink_strerror(err));
    ck_assert_int_gt(atomic_load(&handled), 0);
}

/* A connected pair over transport t whose binder waits up to twice the
 * interrupter's run, so that a wait that ignores signals ends with EAGAIN
 * rather than hanging the suite. */
static bool open_pair(zt_pair *p, int t, int binder_type, int connecter_type)
{
    p->ctx = zt_ctx();
    p->binder = zt_socket(p->ctx, binder_type);
    p->connecter = zt_socket(p->ctx, connecter_type);
    zt_set_int(p->binder, ZLINK_RCVTIMEO, 2 * ZT_TIMEOUT_MS);
    zt_set_int(p->binder, ZLINK_SNDTIMEO, 2 * ZT_TIMEOUT_MS);
    if (!zt_join(p->binder, p->connecter, t, p->endpoint, sizeof p->endpoint)) {
        zt_pair_close(p);
        return false;
    }
    return true;
}

/* Waits until the pair is connected, then until the binder's receive is
 * the thread's to read (the engine opens its port after the handshake and
 * the first message). */
static void settle(zt_pair *p)
{
    zt_send_str(p->connecter, "hello", 0);
    zt_recv_str(p->binder, "hello");
    zl_test_sleep_ms(20);
}

static const int transports[] = {ZT_TCP4, ZT_IPC, ZT_INPROC};
enum { TRANSPORTS = sizeof transports / sizeof transports[0] };

/* The waits of a PAIR binder with nothing to read, each until a signal
 * ends it: the binder's own timeout (twice the interrupter's run) bounds
 * a wait that ignores signals, but for the first, which waits forever as
 * a Ctrl-C loop does and is ended by a message instead. */
static int receive_forever(zt_pair *p)
{
    zt_set_int(p->binder, ZLINK_RCVTIMEO, -1);
    char buf[16];
    int rc = zlink_recv(p->binder, buf, sizeof buf, 0);
    zt_set_int(p->binder, ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
    return rc;
}

static int receive_with_timeout(zt_pair *p)
{
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    int rc = zlink_msg_recv(&msg, p->binder, 0);
    int err = zlink_errno();
    zlink_msg_close(&msg);
    errno = err;
    return rc;
}

static int poll_for_input(zt_pair *p)
{
    zlink_pollitem_t item = {p->binder, 0, ZLINK_POLLIN, 0};
    return zlink_poll(&item, 1, 2 * ZT_TIMEOUT_MS);
}

static int poller_wait_for_input(zt_pair *p)
{
    void *poller = zlink_poller_new();
    ck_assert_ptr_nonnull(poller);
    ck_assert_int_eq(zlink_poller_add(poller, p->binder, NULL, ZLINK_POLLIN),
                     0);
    zlink_poller_event_t event;
    int rc = zlink_poller_wait(poller, &event, 2 * ZT_TIMEOUT_MS);
    int err = zlink_errno();
    ck_assert_int_eq(zlink_poller_destroy(&poller), 0);
    errno = err;
    return rc;
}

static const struct {
    int (*wait)(zt_pair *p);
    bool forever;
} pair_waits[] = {{receive_forever, true},
                  {receive_with_timeout, false},
                  {poll_for_input, false},
                  {poller_wait_for_input, false}};
enum { PAIR_WAITS = sizeof pair_waits / sizeof pair_waits[0] };

START_TEST(pair_wait_is_interrupted)
{
    zt_pair p;
    if (!open_pair(&p, transports[_i % TRANSPORTS], ZLINK_PAIR, ZLINK_PAIR))
        return;
    settle(&p);
    bool forever = pair_waits[_i / TRANSPORTS].forever;
    interrupter in;
    interrupter_start(&in, forever ? p.connecter : NULL);
    interrupter_check(&in, pair_waits[_i / TRANSPORTS].wait(&p));
    /* The socket still works after the interruption. */
    zt_send_str(p.connecter, "after", 0);
    zt_recv_str(p.binder, "after");
    zt_pair_close(&p);
}
END_TEST

START_TEST(req_receive_is_interrupted)
{
    zt_pair p;
    /* The REQ binds here, so that it is the binder that waits. */
    if (!open_pair(&p, transports[_i], ZLINK_REQ, ZLINK_REP))
        return;
    zt_send_str(p.binder, "request", 0);
    zt_recv_str(p.connecter, "request");
    zt_send_str(p.connecter, "reply", 0);
    zt_recv_str(p.binder, "reply");
    zt_send_str(p.binder, "request", 0);
    zt_recv_str(p.connecter, "request");
    zl_test_sleep_ms(20);
    interrupter in;
    interrupter_start(&in, NULL);
    char buf[16];
    interrupter_check(&in, zlink_recv(p.binder, buf, sizeof buf, 0));
    /* The reply that comes after the interruption is still the REQ's. */
    zt_send_str(p.connecter, "late", 0);
    zt_recv_str(p.binder, "late");
    zt_pair_close(&p);
}
END_TEST

START_TEST(send_at_hwm_is_interrupted)
{
    zt_pair p;
    if (!open_pair(&p, transports[_i], ZLINK_PAIR, ZLINK_PAIR))
        return;
    zt_set_int(p.binder, ZLINK_SNDHWM, 1);
    zt_set_int(p.connecter, ZLINK_RCVHWM, 1);
    settle(&p);
    /* Fills the pipes and, over a connection, the kernel's buffers (the
     * connecter never reads), until a pause makes no room either. */
    static char body[64 * 1024];
    int sends = 0;
    for (int pauses = 0; pauses < 100; pauses++) {
        while (sends < 10000 && zlink_send(p.binder, body, sizeof body,
                                           ZLINK_DONTWAIT) == (int)sizeof body)
            sends++;
        zt_expect_errno(-1, EAGAIN);
        zl_test_sleep_ms(50);
        if (zlink_send(p.binder, body, sizeof body, ZLINK_DONTWAIT) < 0)
            break;
        sends++;
    }
    zt_expect_errno(-1, EAGAIN);
    zt_set_int(p.binder, ZLINK_SNDTIMEO, -1);
    interrupter in;
    interrupter_start(&in, NULL);
    interrupter_check(&in, zlink_send(p.binder, body, sizeof body, 0));
    zt_pair_close(&p);
}
END_TEST

/* zlink_ctx_term waiting for a socket that lingers over a message it
 * cannot deliver: a signal ends the wait with EINTR, the context stays
 * valid, and a second call ends it once the linger has run out. */
START_TEST(ctx_term_is_interrupted)
{
    void *ctx = zt_ctx();
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    zt_set_int(dealer, ZLINK_LINGER, 1000);
    /* Nobody listens there: the message stays queued. */
    zt_connect(dealer, "tcp://127.0.0.1:1");
    zt_send_str(dealer, "unsent", 0);
    zt_close(dealer);
    interrupter in;
    interrupter_start(&in, NULL);
    interrupter_check(&in, zlink_ctx_term(ctx));
    ck_assert_int_eq(zlink_ctx_term(ctx), 0);
}
END_TEST

/* A signal sent to the process goes to an application thread, never to
 * one of zlink's (its I/O thread, its reaper, a zlink_threadstart thread),
 * as with libzmq. Here the only thread that takes it is none: every
 * application thread blocks it, so it must stay pending until sigwait,
 * and no handler runs. */
static void wait_for_stop(void *arg)
{
    char buf[8];
    zlink_recv(arg, buf, sizeof buf, 0);
}

START_TEST(zlink_threads_take_no_signals)
{
    zt_pair p;
    ck_assert(zt_pair_open(&p, ZT_TCP4)); /* starts the I/O thread */
    settle(&p);
    void *stop = zt_socket(p.ctx, ZLINK_PAIR);
    void *stopper = zt_socket(p.ctx, ZLINK_PAIR);
    zt_set_int(stop, ZLINK_RCVTIMEO, -1);
    zt_bind(stop, "inproc://stop");
    zt_connect(stopper, "inproc://stop");
    void *thread = zlink_threadstart(wait_for_stop, stop);
    ck_assert_ptr_nonnull(thread);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGUSR2, &sa, NULL), 0);
    atomic_store(&handled, 0);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &usr2, NULL), 0);
    ck_assert_int_eq(kill(getpid(), SIGUSR2), 0);
    zl_test_sleep_ms(100);

    sigset_t pending;
    ck_assert_int_eq(sigpending(&pending), 0);
    ck_assert_int_eq(atomic_load(&handled), 0);
    ck_assert_int_eq(sigismember(&pending, SIGUSR2), 1);
    int sig = 0;
    ck_assert_int_eq(sigwait(&usr2, &sig), 0);
    ck_assert_int_eq(sig, SIGUSR2);

    zt_send_str(stopper, "stop", 0);
    zlink_threadclose(thread);
    zt_close(stopper);
    zt_close(stop);
    zt_pair_close(&p);
}
END_TEST

#else /* _WIN32 */

START_TEST(test_signals_skipped)
{
    fprintf(stderr, "test_signals: POSIX signals only, skipped\n");
}
END_TEST

#endif

int main(void)
{
    Suite *s = suite_create("signals");
    TCase *tc = tcase_create("signals");
    tcase_set_timeout(tc, 60);
#if !defined(_WIN32)
    tcase_add_loop_test(tc, pair_wait_is_interrupted, 0,
                        TRANSPORTS * PAIR_WAITS);
    tcase_add_loop_test(tc, req_receive_is_interrupted, 0, TRANSPORTS);
    tcase_add_loop_test(tc, send_at_hwm_is_interrupted, 0, TRANSPORTS);
    tcase_add_test(tc, ctx_term_is_interrupted);
    tcase_add_test(tc, zlink_threads_take_no_signals);
#else
    tcase_add_test(tc, test_signals_skipped);
#endif
    suite_add_tcase(s, tc);
    return zl_test_run(s);
}
