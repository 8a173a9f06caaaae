/* test_poller.c — zlink_poller_*: libzmq's zmq_poller semantics and errnos,
 * level-triggered waits and zlink_poller_fd, many sockets with one active,
 * raw fd items, removal and close while ready, ETERM, and wakeups from I/O
 * and application threads. Uses threads. */
#include "atomics.h"
#include "socket_testutil.h"

typedef struct pair {
    void *a, *b; /* a sends, b is polled */
} pair;

static pair pair_open(void *ctx, int transport)
{
    pair p = {zt_socket(ctx, ZLINK_PAIR), zt_socket(ctx, ZLINK_PAIR)};
    char ep[300];
    ck_assert(zt_join(p.b, p.a, transport, ep, sizeof ep));
    /* Both ends attached. */
    zt_send_str(p.a, "hello", 0);
    zt_recv_str(p.b, "hello");
    return p;
}

static void pair_close(pair *p)
{
    zt_close(p->a);
    zt_close(p->b);
}

static void *poller_new(void)
{
    void *poller = zlink_poller_new();
    ck_assert_ptr_nonnull(poller);
    return poller;
}

static void poller_destroy(void *poller)
{
    ck_assert_int_eq(zlink_poller_destroy(&poller), 0);
    ck_assert_ptr_null(poller);
}

static void assert_fails(int rc, int err)
{
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(zlink_errno(), err);
}

/* Whether an OS handle is readable within timeout_ms, asked of the OS
 * through zlink_poll's raw item. */
static bool fd_readable(zlink_fd_t fd, int timeout_ms)
{
    zlink_pollitem_t item = {NULL, fd, ZLINK_POLLIN, 0};
    int rc = zlink_poll(&item, 1, timeout_ms);
    ck_assert_int_ge(rc, 0);
    return rc == 1;
}

START_TEST(poller_errors)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    void *poller = poller_new();
    zlink_poller_event_t ev;
    int user;

    assert_fails(zlink_poller_destroy(NULL), EFAULT);
    void *bogus = &user;
    assert_fails(zlink_poller_destroy(&bogus), EFAULT);
    assert_fails(zlink_poller_add(&user, s, NULL, ZLINK_POLLIN), EFAULT);
    assert_fails(zlink_poller_add(poller, NULL, NULL, ZLINK_POLLIN), ENOTSOCK);
    assert_fails(zlink_poller_add(poller, &user, NULL, ZLINK_POLLIN), ENOTSOCK);
    assert_fails(zlink_poller_add(poller, s, NULL, 0x40), EINVAL);
    assert_fails(zlink_poller_modify(poller, s, ZLINK_POLLIN), EINVAL);
    assert_fails(zlink_poller_remove(poller, s), EINVAL);

    /* A poller with nothing in it: EFAULT rather than sleep forever,
     * EAGAIN once a finite timeout has passed. */
    ck_assert_int_eq(zlink_poller_size(poller), 0);
    assert_fails(zlink_poller_wait(poller, &ev, -1), EFAULT);
    assert_fails(zlink_poller_wait(poller, &ev, 0), EAGAIN);
    ck_assert_ptr_null(ev.socket);
    uint64_t start = zl_test_now_ms();
    assert_fails(zlink_poller_wait(poller, &ev, 30), EAGAIN);
    ck_assert_uint_ge(zl_test_now_ms() - start, 25);

    ck_assert_int_eq(zlink_poller_add(poller, s, &user, ZLINK_POLLIN), 0);
    assert_fails(zlink_poller_add(poller, s, NULL, ZLINK_POLLIN), EINVAL);
    ck_assert_int_eq(zlink_poller_size(poller), 1);
    assert_fails(zlink_poller_modify(poller, s, 0x40), EINVAL);
    assert_fails(zlink_poller_wait_all(poller, NULL, 1, 0), EFAULT);
    assert_fails(zlink_poller_wait_all(poller, &ev, -1, 0), EINVAL);
    /* Nothing to wait for (no peer): EAGAIN, within the timeout. */
    assert_fails(zlink_poller_wait(poller, &ev, 0), EAGAIN);
    start = zl_test_now_ms();
    assert_fails(zlink_poller_wait(poller, &ev, 30), EAGAIN);
    ck_assert_uint_ge(zl_test_now_ms() - start, 25);

    assert_fails(
        zlink_poller_add_fd(poller, (zlink_fd_t)-1, NULL, ZLINK_POLLIN), EBADF);
    assert_fails(zlink_poller_modify_fd(poller, (zlink_fd_t)-1, ZLINK_POLLIN),
                 EBADF);
    assert_fails(zlink_poller_remove_fd(poller, (zlink_fd_t)-1), EBADF);
    zlink_fd_t fd;
    ck_assert_int_eq(zlink_poller_fd(poller, &fd), 0);
    assert_fails(zlink_poller_fd(poller, NULL), EFAULT);
    assert_fails(zlink_poller_modify_fd(poller, fd, ZLINK_POLLIN), EINVAL);
    assert_fails(zlink_poller_remove_fd(poller, fd), EINVAL);
    void *other = poller_new();
    zlink_fd_t other_fd;
    ck_assert_int_eq(zlink_poller_fd(other, &other_fd), 0);
    ck_assert_int_eq(zlink_poller_add_fd(poller, other_fd, NULL, ZLINK_POLLIN),
                     0);
    assert_fails(zlink_poller_add_fd(poller, other_fd, NULL, ZLINK_POLLIN),
                 EINVAL);
    ck_assert_int_eq(zlink_poller_modify_fd(poller, other_fd, ZLINK_POLLOUT),
                     0);
    ck_assert_int_eq(zlink_poller_size(poller), 2);
    ck_assert_int_eq(zlink_poller_remove_fd(poller, other_fd), 0);
    ck_assert_int_eq(zlink_poller_remove(poller, s), 0);
    assert_fails(zlink_poller_remove(poller, s), EINVAL);
    ck_assert_int_eq(zlink_poller_size(poller), 0);

    poller_destroy(other);
    poller_destroy(poller);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* POLLIN with the item's user data, level-triggered until read. */
START_TEST(poller_pollin)
{
    void *ctx = zt_ctx();
    pair p = pair_open(ctx, _i);
    void *poller = poller_new();
    int user;
    zlink_poller_event_t ev;
    ck_assert_int_eq(zlink_poller_add(poller, p.b, &user, ZLINK_POLLIN), 0);
    assert_fails(zlink_poller_wait(poller, &ev, 0), EAGAIN);

    zt_send_str(p.a, "one", 0);
    ck_assert_int_eq(zlink_poller_wait(poller, &ev, ZT_TIMEOUT_MS), 0);
    ck_assert_ptr_eq(ev.socket, p.b);
    ck_assert_ptr_eq(ev.user_data, &user);
    ck_assert_int_eq(ev.events, ZLINK_POLLIN);
    /* zmq_poller(3): a socket's event carries the invalid fd, never 0 (a
     * valid one, stdin). */
    ck_assert(ev.fd == (zlink_fd_t)-1);
    /* Still there: reported again. */
    memset(&ev, 0, sizeof ev);
    ck_assert_int_eq(zlink_poller_wait(poller, &ev, 0), 0);
    ck_assert_ptr_eq(ev.socket, p.b);
    zt_recv_str(p.b, "one");
    assert_fails(zlink_poller_wait(poller, &ev, 0), EAGAIN);
    ck_assert_ptr_null(ev.socket);

    /* Watching for nothing, or for POLLOUT only, a waiting message is no
     * event; back to POLLIN, it is. */
    zt_send_str(p.a, "two", 0);
    ck_assert_int_eq(zlink_poller_modify(poller, p.b, 0), 0);
    /* Once "two" is waiting (tcp: on its way until then). */
    ck_assert(
        zl_test_wait_events(p.b, ZLINK_POLLIN, ZLINK_POLLIN, ZT_TIMEOUT_MS));
    assert_fails(zlink_poller_wait(poller, &ev, 0), EAGAIN);
    ck_assert_int_eq(zlink_poller_modify(poller, p.b, ZLINK_POLLIN), 0);
    ck_assert_int_eq(zlink_poller_wait(poller, &ev, ZT_TIMEOUT_MS), 0);
    ck_assert_int_eq(ev.events, ZLINK_POLLIN);
    zt_recv_str(p.b, "two");

    poller_destroy(poller);
    pair_close(&p);
    zt_term(ctx);
}
END_TEST

START_TEST(poller_pollout)
{
    void *ctx = zt_ctx();
    pair p = pair_open(ctx, _i == 0 ? ZT_INPROC : ZT_TCP4);
    void *poller = poller_new();
    zlink_poller_event_t ev;
    ck_assert_int_eq(
        zlink_poller_add(poller, p.b, NULL, ZLINK_POLLIN | ZLINK_POLLOUT), 0);
    ck_assert_int_eq(zlink_poller_wait(poller, &ev, 0), 0);
    ck_assert_int_eq(ev.events, ZLINK_POLLOUT);
    zt_send_str(p.a, "in", 0);
    ck_assert_int_eq(zlink_poller_wait(poller, &ev, 0), 0);
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (ev.events != (ZLINK_POLLIN | ZLINK_POLLOUT) &&
           zl_test_now_ms() < deadline)
        ck_assert_int_eq(zlink_poller_wait(poller, &ev, 10), 0);
    ck_assert_int_eq(ev.events, ZLINK_POLLIN | ZLINK_POLLOUT);
    zt_recv_str(p.b, "in");
    poller_destroy(poller);
    pair_close(&p);
    zt_term(ctx);
}
END_TEST

/* The poller's handle is readable exactly while a socket is ready: not
 * before the message, until it is read, and not after. */
START_TEST(poller_fd_level_triggered)
{
    void *ctx = zt_ctx();
    pair p = pair_open(ctx, _i == 0 ? ZT_INPROC : ZT_TCP4);
    void *poller = poller_new();
    zlink_fd_t fd;
    ck_assert_int_eq(zlink_poller_fd(poller, &fd), 0);
    ck_assert_int_eq(zlink_poller_add(poller, p.b, NULL, ZLINK_POLLIN), 0);
    /* Added: readable until a wait has found it idle. */
    zlink_poller_event_t ev;
    assert_fails(zlink_poller_wait(poller, &ev, 0), EAGAIN);
    ck_assert(!fd_readable(fd, 0));

    for (int round = 0; round < 3; round++) {
        zt_send_str(p.a, "ping", 0);
        ck_assert_msg(fd_readable(fd, ZT_TIMEOUT_MS), "fd never readable");
        ck_assert(fd_readable(fd, 0));
        ck_assert(fd_readable(fd, 0));
        /* Read without a wait: the handle follows. */
        zt_recv_str(p.b, "ping");
        ck_assert(!fd_readable(fd, 0));
    }
    /* Two messages: readable until both are read. */
    zt_send_str(p.a, "1", 0);
    zt_send_str(p.a, "2", 0);
    ck_assert(fd_readable(fd, ZT_TIMEOUT_MS));
    zt_recv_str(p.b, "1");
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (!fd_readable(fd, 0) && zl_test_now_ms() < deadline)
        zl_test_sleep_ms(1); /* tcp: "2" may still be on its way */
    ck_assert(fd_readable(fd, 0));
    zt_recv_str(p.b, "2");
    ck_assert(!fd_readable(fd, 0));

    poller_destroy(poller);
    pair_close(&p);
    zt_term(ctx);
}
END_TEST

#define MANY 200

/* 200 sockets, one of which gets messages: each wait reports that one
 * only, for any of them. */
START_TEST(poller_many_sockets)
{
    void *ctx = zt_ctx();
    pair *pairs = calloc(MANY, sizeof *pairs);
    ck_assert_ptr_nonnull(pairs);
    void *poller = poller_new();
    for (int i = 0; i < MANY; i++) {
        pairs[i] = pair_open(ctx, ZT_INPROC);
        ck_assert_int_eq(
            zlink_poller_add(poller, pairs[i].b, &pairs[i], ZLINK_POLLIN), 0);
    }
    ck_assert_int_eq(zlink_poller_size(poller), MANY);
    zlink_poller_event_t *events = calloc(MANY, sizeof *events);
    ck_assert_ptr_nonnull(events);
    assert_fails(zlink_poller_wait_all(poller, events, MANY, 0), EAGAIN);
    for (int k = 0; k < 3 * MANY; k += 37) {
        int active = k % MANY;
        zt_send_str(pairs[active].a, "x", 0);
        for (int repeat = 0; repeat < 2; repeat++) {
            int n = zlink_poller_wait_all(poller, events, MANY, ZT_TIMEOUT_MS);
            ck_assert_int_eq(n, 1);
            ck_assert_ptr_eq(events[0].socket, pairs[active].b);
            ck_assert_ptr_eq(events[0].user_data, &pairs[active]);
            ck_assert_ptr_null(events[1].socket);
        }
        zt_recv_str(pairs[active].b, "x");
        assert_fails(zlink_poller_wait_all(poller, events, MANY, 0), EAGAIN);
    }
    /* Three ready and room for two: none is lost, all stay ready. */
    for (int i = 0; i < 3; i++)
        zt_send_str(pairs[i * 50].a, "y", 0);
    ck_assert_int_eq(zlink_poller_wait_all(poller, events, 2, ZT_TIMEOUT_MS),
                     2);
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    int n = 0;
    while (n < 3 && zl_test_now_ms() < deadline)
        n = zlink_poller_wait_all(poller, events, MANY, 10);
    ck_assert_int_eq(n, 3);
    for (int i = 0; i < 3; i++) {
        pair *owner = events[i].user_data;
        ck_assert_int_eq((int)(owner - pairs) % 50, 0);
        zt_recv_str(owner->b, "y");
    }
    assert_fails(zlink_poller_wait_all(poller, events, MANY, 0), EAGAIN);

    poller_destroy(poller);
    for (int i = 0; i < MANY; i++)
        pair_close(&pairs[i]);
    free(events);
    free(pairs);
    zt_term(ctx);
}
END_TEST

/* A raw fd item: here another poller's handle, which is an OS handle on
 * every system. */
START_TEST(poller_raw_fd)
{
    void *ctx = zt_ctx();
    pair p = pair_open(ctx, ZT_INPROC);
    void *inner = poller_new();
    void *outer = poller_new();
    zlink_fd_t fd;
    ck_assert_int_eq(zlink_poller_fd(inner, &fd), 0);
    ck_assert_int_eq(zlink_poller_add(inner, p.b, NULL, ZLINK_POLLIN), 0);
    zlink_poller_event_t ev;
    assert_fails(zlink_poller_wait(inner, &ev, 0), EAGAIN);
    int user;
    ck_assert_int_eq(zlink_poller_add_fd(outer, fd, &user, ZLINK_POLLIN), 0);
    assert_fails(zlink_poller_wait(outer, &ev, 0), EAGAIN);
    assert_fails(zlink_poller_wait(outer, &ev, 20), EAGAIN);

    zt_send_str(p.a, "raw", 0);
    ck_assert_int_eq(zlink_poller_wait(outer, &ev, ZT_TIMEOUT_MS), 0);
    ck_assert_ptr_null(ev.socket);
    ck_assert(ev.fd == fd);
    ck_assert_ptr_eq(ev.user_data, &user);
    ck_assert_int_eq(ev.events, ZLINK_POLLIN);
    zt_recv_str(p.b, "raw");
    assert_fails(zlink_poller_wait(outer, &ev, 0), EAGAIN);

    /* Sockets and fds in one poller: both reported in one wait. */
    void *c = zt_socket(ctx, ZLINK_PAIR);
    void *d = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(c, "inproc://poller-raw-fd");
    zt_connect(d, "inproc://poller-raw-fd");
    ck_assert_int_eq(zlink_poller_add(outer, c, NULL, ZLINK_POLLIN), 0);
    zt_send_str(d, "sock", 0);
    zt_send_str(p.a, "fd", 0);
    zlink_poller_event_t evs[3];
    int got = 0;
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (got < 2 && zl_test_now_ms() < deadline)
        got = zlink_poller_wait_all(outer, evs, 3, 10);
    ck_assert_int_eq(got, 2);
    ck_assert(evs[0].socket == c || evs[1].socket == c);
    ck_assert_ptr_null(evs[2].socket);

    poller_destroy(outer);
    poller_destroy(inner);
    zt_close(c);
    zt_close(d);
    pair_close(&p);
    zt_term(ctx);
}
END_TEST

/* Removal while ready forgets the socket at once; closing a watched socket
 * makes the poller report ENOTSOCK until it is removed. */
START_TEST(poller_remove_and_close_while_ready)
{
    void *ctx = zt_ctx();
    pair p = pair_open(ctx, ZT_INPROC);
    pair q = pair_open(ctx, ZT_INPROC);
    void *poller = poller_new();
    zlink_fd_t fd;
    ck_assert_int_eq(zlink_poller_fd(poller, &fd), 0);
    zlink_poller_event_t ev;
    ck_assert_int_eq(zlink_poller_add(poller, p.b, NULL, ZLINK_POLLIN), 0);
    ck_assert_int_eq(zlink_poller_add(poller, q.b, NULL, ZLINK_POLLIN), 0);
    assert_fails(zlink_poller_wait(poller, &ev, 0), EAGAIN);
    zt_send_str(p.a, "m", 0);
    ck_assert(fd_readable(fd, ZT_TIMEOUT_MS));
    ck_assert_int_eq(zlink_poller_remove(poller, p.b), 0);
    ck_assert(!fd_readable(fd, 0));
    assert_fails(zlink_poller_wait(poller, &ev, 0), EAGAIN);
    ck_assert_int_eq(zlink_poller_add(poller, p.b, NULL, ZLINK_POLLIN), 0);
    ck_assert_int_eq(zlink_poller_wait(poller, &ev, 0), 0);
    ck_assert_ptr_eq(ev.socket, p.b);
    zt_recv_str(p.b, "m");

    zt_close(q.b);
    assert_fails(zlink_poller_wait(poller, &ev, 0), ENOTSOCK);
    ck_assert_int_eq(zlink_poller_remove(poller, q.b), 0);
    assert_fails(zlink_poller_wait(poller, &ev, 0), EAGAIN);
    zt_close(q.a);

    poller_destroy(poller);
    pair_close(&p);
    zt_term(ctx);
}
END_TEST

typedef struct blocked_wait {
    void *poller;
    int rc, err;
    zlink_poller_event_t ev;
    atomic_bool done;
} blocked_wait;

static void blocked_wait_main(void *arg)
{
    blocked_wait *b = arg;
    b->rc = zlink_poller_wait(b->poller, &b->ev, -1);
    b->err = zlink_errno();
    atomic_store(&b->done, true);
}

static void wait_done(blocked_wait *b)
{
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (!atomic_load(&b->done) && zl_test_now_ms() < deadline)
        zl_test_sleep_ms(2);
    ck_assert_msg(atomic_load(&b->done), "wait still blocked");
}

/* A wait blocked forever returns -1/ETERM when the context shuts down. */
START_TEST(poller_eterm)
{
    void *ctx = zt_ctx();
    void *s = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(s, "inproc://poller-eterm");
    blocked_wait b = {.poller = poller_new()};
    atomic_init(&b.done, false);
    ck_assert_int_eq(zlink_poller_add(b.poller, s, NULL, ZLINK_POLLIN), 0);
    uv_thread_t thread;
    ck_assert_int_eq(uv_thread_create(&thread, blocked_wait_main, &b), 0);
    /* A duration, not a wait: the wait must not return by itself; blocked
     * yet or not, the shutdown below must end it. */
    zl_test_sleep_ms(50);
    ck_assert(!atomic_load(&b.done));
    ck_assert_int_eq(zlink_ctx_shutdown(ctx), 0);
    wait_done(&b);
    ck_assert_int_eq(uv_thread_join(&thread), 0);
    ck_assert_int_eq(b.rc, -1);
    ck_assert_int_eq(b.err, ETERM);
    /* And so does every wait after. */
    zlink_poller_event_t ev;
    assert_fails(zlink_poller_wait(b.poller, &ev, 0), ETERM);
    poller_destroy(b.poller);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* The poller's signaler as the OS sees it: whether it was ever raised.
 * The epoll backend's is an eventfd, which Linux names in /proc with its
 * counter; the kqueue backend's (on its emulation here) is not. */
#if defined(ZLINK_BACKEND_EPOLL)
#include <dirent.h>
#include <unistd.h>

#define MAX_FDS 4096

/* Marks the eventfds this process has open in is_eventfd. */
static void list_eventfds(bool *is_eventfd)
{
    memset(is_eventfd, 0, MAX_FDS * sizeof *is_eventfd);
    DIR *dir = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(dir);
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        int fd = atoi(e->d_name);
        char path[64], target[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n <= 0 || fd < 0 || fd >= MAX_FDS)
            continue;
        target[n] = 0;
        is_eventfd[fd] = strcmp(target, "anon_inode:[eventfd]") == 0;
    }
    closedir(dir);
}

/* The eventfd a new poller opened: the one not open before it. */
static int new_eventfd(const bool *before)
{
    static bool after[MAX_FDS];
    list_eventfds(after);
    int found = -1;
    for (int fd = 0; fd < MAX_FDS; fd++)
        if (after[fd] && !before[fd]) {
            ck_assert_int_eq(found, -1);
            found = fd;
        }
    ck_assert_int_ge(found, 0);
    return found;
}

/* How many raises the eventfd counted since it was last reset. */
static unsigned long long eventfd_count(int fd)
{
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    unsigned long long count = ~0ull;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "eventfd-count:", 14) == 0)
            count = strtoull(line + 14, NULL, 16);
    fclose(f);
    ck_assert(count != ~0ull);
    return count;
}

/* A poller that nobody sleeps on and whose handle was not given out never
 * raises its signaler, however many messages its socket takes in: an
 * application that receives between its waits pays no system call, and
 * no lock, for the poller per message. Once the handle is given out, it
 * follows the sockets' readiness from the first message on. */
START_TEST(poller_unwatched_signaler_stays_quiet)
{
    static bool before[MAX_FDS];
    void *ctx = zt_ctx();
    pair p = pair_open(ctx, _i == 0 ? ZT_INPROC : ZT_TCP4);
    list_eventfds(before);
    void *poller = poller_new();
    int signaler = new_eventfd(before);
    ck_assert_int_eq(zlink_poller_add(poller, p.b, NULL, ZLINK_POLLIN), 0);
    for (int i = 0; i < 20; i++) {
        zt_send_str(p.a, "ping", 0);
        ck_assert(zl_test_wait_events(p.b, ZLINK_POLLIN, ZLINK_POLLIN,
                                      ZT_TIMEOUT_MS));
        ck_assert_uint_eq(eventfd_count(signaler), 0);
        zt_recv_str(p.b, "ping");
    }
    zlink_poller_event_t ev;
    assert_fails(zlink_poller_wait(poller, &ev, 0), EAGAIN);
    ck_assert_uint_eq(eventfd_count(signaler), 0);

    /* A message waiting when the handle is given out makes it readable
     * at once; a socket that was ready and no longer is does not. */
    zt_send_str(p.a, "one", 0);
    zt_recv_str(p.b, "one");
    zt_send_str(p.a, "two", 0);
    ck_assert(
        zl_test_wait_events(p.b, ZLINK_POLLIN, ZLINK_POLLIN, ZT_TIMEOUT_MS));
    zlink_fd_t fd;
    ck_assert_int_eq(zlink_poller_fd(poller, &fd), 0);
    ck_assert_int_eq((int)fd, signaler);
    ck_assert(fd_readable(fd, 0));
    zt_recv_str(p.b, "two");
    ck_assert(!fd_readable(fd, 0));
    zt_send_str(p.a, "three", 0);
    ck_assert(fd_readable(fd, ZT_TIMEOUT_MS));
    zt_recv_str(p.b, "three");
    ck_assert(!fd_readable(fd, 0));

    poller_destroy(poller);
    pair_close(&p);
    zt_term(ctx);
}
END_TEST
#endif

/* A handle given out after the socket was ready and read without a wait:
 * the stale entry does not make it readable. */
START_TEST(poller_fd_given_after_traffic)
{
    void *ctx = zt_ctx();
    pair p = pair_open(ctx, _i == 0 ? ZT_INPROC : ZT_TCP4);
    void *poller = poller_new();
    ck_assert_int_eq(zlink_poller_add(poller, p.b, NULL, ZLINK_POLLIN), 0);
    zt_send_str(p.a, "one", 0);
    zt_recv_str(p.b, "one");
    zlink_fd_t fd;
    ck_assert_int_eq(zlink_poller_fd(poller, &fd), 0);
    ck_assert(!fd_readable(fd, 0));
    zt_send_str(p.a, "two", 0);
    ck_assert(fd_readable(fd, ZT_TIMEOUT_MS));
    /* Readable may come first from another command (tcp): "two" follows. */
    zlink_poller_event_t ev;
    ck_assert_int_eq(zlink_poller_wait(poller, &ev, ZT_TIMEOUT_MS), 0);
    ck_assert_ptr_eq(ev.socket, p.b);
    zt_recv_str(p.b, "two");
    ck_assert(!fd_readable(fd, 0));
    poller_destroy(poller);
    pair_close(&p);
    zt_term(ctx);
}
END_TEST

typedef struct delayed_send {
    void *socket;
    int delay_ms;
} delayed_send;

static void delayed_send_main(void *arg)
{
    delayed_send *d = arg;
    zl_test_sleep_ms(d->delay_ms); /* a late sender, on purpose */
    zlink_send(d->socket, "late", 4, 0);
}

/* A wait sleeping in one thread wakes for a message sent by another
 * application thread (inproc) or brought by an I/O thread (tcp). */
START_TEST(poller_woken)
{
    void *ctx = zt_ctx();
    pair p = pair_open(ctx, _i == 0 ? ZT_INPROC : ZT_TCP4);
    blocked_wait b = {.poller = poller_new()};
    atomic_init(&b.done, false);
    ck_assert_int_eq(zlink_poller_add(b.poller, p.b, &b, ZLINK_POLLIN), 0);
    delayed_send d = {p.a, 50};
    uv_thread_t sender;
    ck_assert_int_eq(uv_thread_create(&sender, delayed_send_main, &d), 0);
    blocked_wait_main(&b);
    ck_assert_int_eq(uv_thread_join(&sender), 0);
    ck_assert_int_eq(b.rc, 0);
    ck_assert_ptr_eq(b.ev.socket, p.b);
    ck_assert_ptr_eq(b.ev.user_data, &b);
    zt_recv_str(p.b, "late");
    poller_destroy(b.poller);
    pair_close(&p);
    zt_term(ctx);
}
END_TEST

/* A ROUTER serving DEALERs over tcp: each request is seen once, and the
 * poller goes idle once all are answered. */
START_TEST(poller_router_dealers)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    char ep[300];
    zt_bind_tcp(router, ep, sizeof ep);
    enum { CLIENTS = 20 };
    void *dealers[CLIENTS];
    void *poller = poller_new();
    ck_assert_int_eq(zlink_poller_add(poller, router, NULL, ZLINK_POLLIN), 0);
    for (int i = 0; i < CLIENTS; i++) {
        dealers[i] = zt_socket(ctx, ZLINK_DEALER);
        zt_connect(dealers[i], ep);
        zt_send_str(dealers[i], "req", 0);
    }
    int served = 0;
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    zlink_poller_event_t ev;
    while (served < CLIENTS && zl_test_now_ms() < deadline) {
        if (zlink_poller_wait(poller, &ev, 100) != 0)
            continue;
        char id[64], body[16];
        int idn = zlink_recv(router, id, sizeof id, ZLINK_DONTWAIT);
        ck_assert_int_gt(idn, 0);
        ck_assert_int_eq(zlink_recv(router, body, sizeof body, 0), 3);
        ck_assert_int_eq(zlink_send(router, id, (size_t)idn, ZLINK_SNDMORE),
                         idn);
        ck_assert_int_eq(zlink_send(router, "rep", 3, 0), 3);
        served++;
    }
    ck_assert_int_eq(served, CLIENTS);
    assert_fails(zlink_poller_wait(poller, &ev, 0), EAGAIN);
    for (int i = 0; i < CLIENTS; i++) {
        zt_recv_str(dealers[i], "rep");
        zt_close(dealers[i]);
    }
    poller_destroy(poller);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

static Suite *poller_suite(void)
{
    Suite *s = suite_create("poller");
    TCase *api = tcase_create("api");
    tcase_set_timeout(api, 60);
    tcase_add_test(api, poller_errors);
    tcase_add_loop_test(api, poller_pollin, ZT_TCP4, ZT_TCP4 + 1);
    tcase_add_loop_test(api, poller_pollin, ZT_INPROC, ZT_INPROC + 1);
    tcase_add_loop_test(api, poller_pollout, 0, 2);
    tcase_add_loop_test(api, poller_fd_level_triggered, 0, 2);
    tcase_add_loop_test(api, poller_fd_given_after_traffic, 0, 2);
#if defined(ZLINK_BACKEND_EPOLL)
    tcase_add_loop_test(api, poller_unwatched_signaler_stays_quiet, 0, 2);
#endif
    tcase_add_test(api, poller_many_sockets);
    tcase_add_test(api, poller_raw_fd);
    tcase_add_test(api, poller_remove_and_close_while_ready);
    tcase_add_test(api, poller_eterm);
    tcase_add_loop_test(api, poller_woken, 0, 2);
    tcase_add_test(api, poller_router_dealers);
    suite_add_tcase(s, api);
    return s;
}

int main(void)
{
    return zl_test_run(poller_suite());
}
