/* test_accept_backoff.c — a listener that runs out of fds backs off instead
 * of spinning: a server in a child process with a lowered RLIMIT_NOFILE and
 * every fd taken, clients waiting in its backlog; its I/O thread's CPU time
 * and the ACCEPT_FAILED events over a window, then every client served once
 * fds are free. `test_accept_backoff --report [window_ms [clients]]` runs
 * the same scene once and prints the figures instead of checking them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "socket_testutil.h"

/* Many clients at once, everywhere: each one is accepted and answered. */
START_TEST(every_client_served)
{
    enum { CLIENTS = 40 };
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_ROUTER);
    char ep[300];
    zt_bind_tcp(server, ep, sizeof ep);
    void *clients[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        clients[i] = zt_socket(ctx, ZLINK_DEALER);
        zt_connect(clients[i], ep);
        char text[16];
        snprintf(text, sizeof text, "c%d", i);
        zt_send_str(clients[i], text, 0);
    }
    for (int i = 0; i < CLIENTS; i++) {
        char id[256], body[16];
        int id_len = zt_recv_buf(server, id, sizeof id, 0);
        ck_assert_int_gt(id_len, 0);
        int len = zt_recv_buf(server, body, sizeof body - 1, 0);
        ck_assert_int_gt(len, 0);
        ck_assert_int_eq(zlink_send(server, id, (size_t)id_len, ZLINK_SNDMORE),
                         id_len);
        ck_assert_int_eq(zlink_send(server, body, (size_t)len, 0), len);
    }
    for (int i = 0; i < CLIENTS; i++) {
        char text[16];
        snprintf(text, sizeof text, "c%d", i);
        zt_recv_str(clients[i], text);
        zt_close(clients[i]);
    }
    zt_close(server);
    zt_term(ctx);
}
END_TEST

#ifdef __linux__
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

enum { FD_LIMIT = 256, DEFAULT_WINDOW_MS = 2000, DEFAULT_CLIENTS = 16 };

/* What the server child measured, sent to the parent through a pipe. */
typedef struct scene_result {
    int ok; /* the child set up its scene */
    uint64_t io_cpu_ms;
    uint64_t window_ms;
    int accept_failed;
    int first_failure_errno;
    int served;
    int unbound; /* unbind mode: CLOSED came while backing off */
} scene_result;

/* The stat files of every thread but the main one (the I/O thread and the
 * reaper), opened before the fds run out: reading them needs none then. */
enum { MAX_THREADS = 16 };
static int thread_stat_fds[MAX_THREADS];
static int thread_count;

static void open_thread_stats(void)
{
    thread_count = 0;
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return;
    pid_t self = getpid();
    struct dirent *d;
    while ((d = readdir(dir)) != NULL && thread_count < MAX_THREADS) {
        int tid = atoi(d->d_name);
        if (tid <= 0 || tid == self)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
            thread_stat_fds[thread_count++] = fd;
    }
    closedir(dir);
}

/* CPU time (user + system) of those threads, in milliseconds. */
static uint64_t other_threads_cpu_ms(void)
{
    long ticks_per_s = sysconf(_SC_CLK_TCK);
    uint64_t ticks = 0;
    for (int i = 0; i < thread_count; i++) {
        char line[1024];
        ssize_t n = pread(thread_stat_fds[i], line, sizeof line - 1, 0);
        if (n <= 0)
            continue;
        line[n] = '\0';
        /* Fields 14 and 15 (utime, stime) count from after the name, whose
         * closing parenthesis is the last one on the line. */
        char *p = strrchr(line, ')');
        unsigned long utime = 0, stime = 0;
        if (p &&
            sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                   &utime, &stime) == 2)
            ticks += utime + stime;
    }
    return ticks * 1000u / (uint64_t)ticks_per_s;
}

static void write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n <= 0)
            _exit(3);
        p += n;
        len -= (size_t)n;
    }
}

static bool read_all(int fd, void *data, size_t len)
{
    char *p = data;
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

static bool recv_event(void *mon, int *id, uint32_t *value, int timeout_ms)
{
    int t = timeout_ms > 0 ? timeout_ms : 0;
    zlink_setsockopt(mon, ZLINK_RCVTIMEO, &t, sizeof t);
    zlink_msg_t frame;
    zlink_msg_init(&frame);
    if (zlink_msg_recv(&frame, mon, 0) < 0) {
        zlink_msg_close(&frame);
        return false;
    }
    uint16_t event = 0;
    if (zlink_msg_size(&frame) == 6) {
        memcpy(&event, zlink_msg_data(&frame), 2);
        memcpy(value, (const char *)zlink_msg_data(&frame) + 2, 4);
    }
    *id = event;
    bool more = zlink_msg_more(&frame);
    zlink_msg_close(&frame);
    if (more) {
        zlink_msg_init(&frame);
        zlink_msg_recv(&frame, mon, 0);
        zlink_msg_close(&frame);
    }
    return true;
}

/* The server: a ROUTER that echoes, at its fd limit until the window has
 * passed, then with its fds back. With unbind, it unbinds instead while
 * the listener is backing off. Never returns. */
static void run_server(int to_parent, int window_ms, int clients, bool unbind)
{
    scene_result r = {0};
    void *ctx = zlink_ctx_new();
    void *server = zlink_socket(ctx, ZLINK_ROUTER);
    int zero = 0;
    zlink_setsockopt(server, ZLINK_LINGER, &zero, sizeof zero);
    zlink_socket_monitor(server, "inproc://accept-mon",
                         ZLINK_EVENT_ACCEPT_FAILED | ZLINK_EVENT_ACCEPTED |
                             ZLINK_EVENT_CLOSED);
    void *mon = zlink_socket(ctx, ZLINK_PAIR);
    zlink_connect(mon, "inproc://accept-mon");
    char ep[300];
    size_t len = sizeof ep;
    if (zlink_bind(server, "tcp://127.0.0.1:*") != 0 ||
        zlink_getsockopt(server, ZLINK_LAST_ENDPOINT, ep, &len) != 0)
        _exit(2);
    int port = atoi(strrchr(ep, ':') + 1);
    open_thread_stats();
    if (thread_count == 0)
        _exit(2);

    /* Every fd up to a low limit taken: accept() fails with EMFILE. */
    struct rlimit lim = {FD_LIMIT, FD_LIMIT};
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
        _exit(2);
    static int held[FD_LIMIT];
    int held_count = 0;
    for (;;) {
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            break;
        held[held_count++] = fd;
    }
    write_all(to_parent, &port, sizeof port);

    /* The window opens at the first failure, once clients are waiting. */
    int id = 0;
    uint32_t value = 0;
    while (recv_event(mon, &id, &value, 10000) &&
           id != ZLINK_EVENT_ACCEPT_FAILED)
        ;
    if (id == ZLINK_EVENT_ACCEPT_FAILED && unbind) {
        /* The listener waits on its timer, with no accept pending: the
         * unbind must still close it. */
        r.ok = zlink_unbind(server, ep) == 0;
        while (recv_event(mon, &id, &value, 10000) && id != ZLINK_EVENT_CLOSED)
            ;
        r.unbound = id == ZLINK_EVENT_CLOSED;
    } else if (id == ZLINK_EVENT_ACCEPT_FAILED) {
        r.ok = 1;
        r.accept_failed = 1;
        r.first_failure_errno = (int)value;
        uint64_t cpu0 = other_threads_cpu_ms();
        uint64_t start = zl_test_now_ms();
        uint64_t end = start + (uint64_t)window_ms;
        for (uint64_t now = start; now < end; now = zl_test_now_ms()) {
            if (recv_event(mon, &id, &value, (int)(end - now)) &&
                id == ZLINK_EVENT_ACCEPT_FAILED)
                r.accept_failed++;
        }
        r.io_cpu_ms = other_threads_cpu_ms() - cpu0;
        r.window_ms = zl_test_now_ms() - start;
    }

    /* fds free again: every client in the backlog gets its echo. */
    for (int i = 0; i < held_count; i++)
        close(held[i]);
    int timeout = 10000;
    zlink_setsockopt(server, ZLINK_RCVTIMEO, &timeout, sizeof timeout);
    while (r.ok && !unbind && r.served < clients) {
        char rid[256], body[64];
        int rid_len = zlink_recv(server, rid, sizeof rid, 0);
        if (rid_len <= 0)
            break;
        int body_len = zlink_recv(server, body, sizeof body, 0);
        if (body_len < 0)
            break;
        zlink_send(server, rid, (size_t)rid_len, ZLINK_SNDMORE);
        zlink_send(server, body, (size_t)body_len, 0);
        r.served++;
    }
    write_all(to_parent, &r, sizeof r);
    /* Until the parent has its answers: closing now could cut them off. */
    char done;
    if (read(to_parent, &done, 1) < 0)
        done = 0;
    zlink_close(mon);
    zlink_close(server);
    zlink_ctx_term(ctx);
    _exit(0);
}

/* The clients, in the parent: each sends one message and counts its echo.
 * Returns the number answered. */
static int run_clients(int port, int clients, int timeout_ms)
{
    void *ctx = zlink_ctx_new();
    void **socks = calloc((size_t)clients, sizeof *socks);
    char ep[64];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", port);
    for (int i = 0; i < clients; i++) {
        socks[i] = zlink_socket(ctx, ZLINK_DEALER);
        int zero = 0;
        zlink_setsockopt(socks[i], ZLINK_LINGER, &zero, sizeof zero);
        zlink_connect(socks[i], ep);
        char text[16];
        snprintf(text, sizeof text, "c%d", i);
        zlink_send(socks[i], text, strlen(text), 0);
    }
    int answered = 0;
    uint64_t deadline = zl_test_now_ms() + (uint64_t)timeout_ms;
    for (int i = 0; i < clients; i++) {
        int left = (int)(deadline - zl_test_now_ms());
        if (left <= 0)
            left = 1;
        zlink_setsockopt(socks[i], ZLINK_RCVTIMEO, &left, sizeof left);
        char text[16], got[16];
        snprintf(text, sizeof text, "c%d", i);
        int n = zlink_recv(socks[i], got, sizeof got, 0);
        if (n == (int)strlen(text) && memcmp(got, text, (size_t)n) == 0)
            answered++;
    }
    for (int i = 0; i < clients; i++)
        zlink_close(socks[i]);
    free(socks);
    zlink_ctx_term(ctx);
    return answered;
}

/* Runs the scene: a server child at its fd limit, the clients here. */
static scene_result run_scene(int window_ms, int clients, bool unbind,
                              int *answered)
{
    scene_result r = {0};
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return r;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return r;
    if (pid == 0) {
        close(sv[0]);
        run_server(sv[1], window_ms, clients, unbind);
    }
    close(sv[1]);
    int port = 0;
    if (read_all(sv[0], &port, sizeof port)) {
        /* Window, serving and slack: the clients wait through all of it. */
        *answered = run_clients(port, clients, unbind ? 0 : window_ms + 20000);
        if (!read_all(sv[0], &r, sizeof r))
            r.ok = 0;
    }
    char done = 1;
    write_all(sv[0], &done, 1);
    close(sv[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        r.ok = 0;
    return r;
}

/* The I/O thread used to retry at once, forever: a whole CPU, and millions
 * of ACCEPT_FAILED. Backing off, it makes about one try a second. The CPU
 * bound is loose on purpose (a loaded machine only lowers a spinning
 * thread's share, never raises a sleeping one's): it tells a spin from a
 * sleep, it does not time anything. */
START_TEST(fd_limit_does_not_spin)
{
    int answered = 0;
    scene_result r =
        run_scene(DEFAULT_WINDOW_MS, DEFAULT_CLIENTS, false, &answered);
    ck_assert_msg(r.ok, "the server child failed to set up its scene");
    ck_assert_int_eq(r.first_failure_errno, EMFILE);
    ck_assert_msg(
        r.io_cpu_ms * 20 < r.window_ms, "I/O thread busy %llu ms of %llu",
        (unsigned long long)r.io_cpu_ms, (unsigned long long)r.window_ms);
    /* 10 ms doubling to 1 s: seven tries in the first 1.3 s, then one a
     * second. */
    ck_assert_msg(r.accept_failed >= 1 && r.accept_failed <= 20,
                  "%d ACCEPT_FAILED in %llu ms", r.accept_failed,
                  (unsigned long long)r.window_ms);
    ck_assert_int_eq(r.served, DEFAULT_CLIENTS);
    ck_assert_int_eq(answered, DEFAULT_CLIENTS);
}
END_TEST

/* Unbinding a listener that waits out its backoff closes it at once. */
START_TEST(unbind_while_backing_off)
{
    int answered = 0;
    scene_result r = run_scene(0, 4, true, &answered);
    ck_assert_msg(r.ok, "the server child failed to unbind");
    ck_assert_msg(r.unbound, "no CLOSED after the unbind");
}
END_TEST

static int report(int argc, char **argv)
{
    int window_ms = argc > 2 ? atoi(argv[2]) : DEFAULT_WINDOW_MS;
    int clients = argc > 3 ? atoi(argv[3]) : DEFAULT_CLIENTS;
    int answered = 0;
    scene_result r = run_scene(window_ms, clients, false, &answered);
    if (!r.ok) {
        fprintf(stderr, "the server child failed to set up its scene\n");
        return 1;
    }
    double load = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1)
            load = 0;
        fclose(f);
    }
    printf("loadavg_1min=%.1f window_ms=%llu io_cpu_ms=%llu io_cpu_pct=%.1f "
           "accept_failed=%d first_errno=%d served=%d/%d answered=%d/%d\n",
           load, (unsigned long long)r.window_ms,
           (unsigned long long)r.io_cpu_ms,
           100.0 * (double)r.io_cpu_ms / (double)r.window_ms, r.accept_failed,
           r.first_failure_errno, r.served, clients, answered, clients);
    return 0;
}
#endif

static Suite *accept_suite(void)
{
    Suite *s = suite_create("accept_backoff");
    TCase *tc = tcase_create("accept");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, every_client_served);
#ifdef __linux__
    tcase_add_test(tc, fd_limit_does_not_spin);
    tcase_add_test(tc, unbind_while_backing_off);
#endif
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
#ifdef __linux__
    if (argc > 1 && strcmp(argv[1], "--report") == 0)
        return report(argc, argv);
#else
    (void)argc;
    (void)argv;
#endif
    return zl_test_run(accept_suite());
}
