/* game_bench.c — game-server loads across two processes, compiled twice:
 * against zlink (BENCH_ZLINK, through zlink_zmq.h) and against libzmq
 * (<zmq.h>). One process is a ROUTER echo server; the other is the client:
 *
 *   --clients N --inflight K   N DEALERs, each keeping K requests in flight
 *                              (msg/s, RTT, CPU per message, RSS per
 *                              connection, connect time)
 *   --rate R                   one DEALER sending R requests/s, one at a
 *                              time, waiting for each reply (CPU per
 *                              request, RTT)
 *   --idle N                   N connections that carry one round trip and
 *                              then stay silent (CPU of each process)
 *
 * The server is forked before either process has a context, and is driven
 * by a pipe that it polls beside its ROUTER: the client asks it to mark the
 * start and the end of the timed window, so both processes time the same
 * window. CPU is getrusage(RUSAGE_SELF) of each process, every thread of it
 * (I/O threads included). One CSV line per run. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(BENCH_ZLINK)
#include "zlink_zmq.h"
#define LIB_NAME "zlink"
#else
#include <zmq.h>
#define LIB_NAME "libzmq"
#endif

#define MAX_SAMPLES 2000000
/* Where a request carries its send time (now_s()) and its sequence. */
#define STAMP_AT 0
#define MIN_SIZE 16

enum mode { MODE_NONE, MODE_MULTI, MODE_RATE, MODE_IDLE };

/* --wait: in the receive itself, or in zmq_poll or a zmq_poller (libzmq:
 * zmq_poll, its packages leave the poller out) before a receive that does
 * not wait. */
enum wait_kind { WAIT_RECV, WAIT_POLL, WAIT_POLLER };

struct config {
    enum mode mode;
    long clients;
    long inflight;
    long rate;
    size_t size;
    double seconds;
    double warmup_s;
    int backlog;         /* 0: the library's default */
    enum wait_kind wait; /* --rate: how the client waits for each reply */
    bool csv;
};

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "game_bench_%s: ", LIB_NAME);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* CPU time of this process, every thread, in microseconds. */
static double cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Context switches of this process, every thread: how often it woke. */
static long switches(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

static long vm_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* The system's count of SYNs and handshakes dropped by full listen queues
 * (TcpExt ListenDrops), or -1. System-wide: other processes count too. */
static long listen_drops(void)
{
    FILE *f = fopen("/proc/net/netstat", "r");
    if (!f)
        return -1;
    char names[4096], values[4096];
    long result = -1;
    while (fgets(names, sizeof names, f) && fgets(values, sizeof values, f)) {
        if (strncmp(names, "TcpExt:", 7) != 0)
            continue;
        char *sn, *sv;
        char *n = strtok_r(names, " \n", &sn);
        char *v = strtok_r(values, " \n", &sv);
        while (n && v) {
            if (strcmp(n, "ListenDrops") == 0)
                result = atol(v);
            n = strtok_r(NULL, " \n", &sn);
            v = strtok_r(NULL, " \n", &sv);
        }
    }
    fclose(f);
    return result;
}

static void raise_nofile(long want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || (long)rl.rlim_cur >= want)
        return;
    struct rlimit next = rl;
    next.rlim_cur = (rlim_t)want;
    if ((long)next.rlim_max < want)
        next.rlim_max = (rlim_t)want;
    if (setrlimit(RLIMIT_NOFILE, &next) != 0) {
        next = rl;
        next.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &next);
    }
}

static void set_int(void *s, int option, int value)
{
    if (zmq_setsockopt(s, option, &value, sizeof value) != 0)
        die("zmq_setsockopt(%d): %s", option, zmq_strerror(zmq_errno()));
}

/* --spin-budget: ZLINK_SPIN_BUDGET for both processes (zlink only); -1
 * keeps the library's default. */
static int spin_budget_us = -1;

static void *new_ctx(long sockets)
{
    void *ctx = zmq_ctx_new();
    if (!ctx)
        die("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
#if defined(BENCH_ZLINK)
    if (spin_budget_us >= 0 &&
        zmq_ctx_set(ctx, ZLINK_SPIN_BUDGET, spin_budget_us) != 0)
        die("zmq_ctx_set(SPIN_BUDGET): %s", zmq_strerror(zmq_errno()));
#endif
    if (zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, (int)sockets + 16) != 0)
        die("zmq_ctx_set(MAX_SOCKETS): %s", zmq_strerror(zmq_errno()));
    return ctx;
}

static void write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("pipe write failed");
        p += w;
        n -= (size_t)w;
    }
}

static bool read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

/* ---- server ---------------------------------------------------------------
 */

/* What the server reports when the client marks a window's end. */
struct server_report {
    double cpu_us;   /* CPU over the window */
    long rss_before; /* VmRSS with the ROUTER bound, before any client */
    long rss_at_end; /* VmRSS at the window's end */
    long echoed;     /* messages echoed over the window */
    long switches;   /* context switches over the window */
};

/* Echoes every message back to its sender until the control pipe says
 * quit. Commands: 's' window start, 'e' window end (answered with a
 * server_report), 'q' quit. Each is acknowledged on the up pipe. */
static void server_main(const struct config *cfg, int ctl, int up)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    raise_nofile(2 * cfg->clients + 512);
    void *ctx = new_ctx(1);
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    if (!router)
        die("zmq_socket(ROUTER): %s", zmq_strerror(zmq_errno()));
    set_int(router, ZMQ_LINGER, 0);
    if (cfg->backlog > 0)
        set_int(router, ZMQ_BACKLOG, cfg->backlog);
    if (zmq_bind(router, "tcp://127.0.0.1:*") != 0)
        die("zmq_bind: %s", zmq_strerror(zmq_errno()));
    char endpoint[256] = {0};
    size_t len = sizeof endpoint;
    if (zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, endpoint, &len) != 0)
        die("zmq_getsockopt(LAST_ENDPOINT): %s", zmq_strerror(zmq_errno()));
    struct server_report report = {.rss_before = vm_rss_kib()};
    write_all(up, endpoint, sizeof endpoint);

    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    double cpu_start = 0;
    long echoed = 0, echoed_start = 0, switches_start = 0;
    bool running = true;
    while (running) {
        zmq_pollitem_t items[2] = {{router, 0, ZMQ_POLLIN, 0},
                                   {NULL, ctl, ZMQ_POLLIN, 0}};
        if (zmq_poll(items, 2, -1) < 0) {
            if (zmq_errno() == EINTR)
                continue;
            die("zmq_poll: %s", zmq_strerror(zmq_errno()));
        }
        if (items[0].revents & ZMQ_POLLIN) {
            while (zmq_msg_recv(&id, router, ZMQ_DONTWAIT) >= 0) {
                if (zmq_msg_recv(&body, router, 0) < 0)
                    die("server recv: %s", zmq_strerror(zmq_errno()));
                if (zmq_msg_send(&id, router, ZMQ_SNDMORE) < 0 ||
                    zmq_msg_send(&body, router, 0) < 0)
                    die("server send: %s", zmq_strerror(zmq_errno()));
                echoed++;
            }
        }
        if (items[1].revents & ZMQ_POLLIN) {
            char cmd;
            if (!read_all(ctl, &cmd, 1))
                break;
            if (cmd == 's') {
                cpu_start = cpu_us();
                switches_start = switches();
                echoed_start = echoed;
                write_all(up, "k", 1);
            } else if (cmd == 'e') {
                report.cpu_us = cpu_us() - cpu_start;
                report.switches = switches() - switches_start;
                report.echoed = echoed - echoed_start;
                report.rss_at_end = vm_rss_kib();
                write_all(up, &report, sizeof report);
            } else {
                running = false;
            }
        }
    }
    zmq_msg_close(&id);
    zmq_msg_close(&body);
    zmq_close(router);
    zmq_ctx_term(ctx);
    write_all(up, "q", 1);
    _exit(0);
}

struct server {
    pid_t pid;
    int ctl, up;
    char endpoint[256];
};

/* Forks the server; call before this process has a context. */
static void server_start(const struct config *cfg, struct server *s)
{
    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0)
        die("pipe failed");
    s->pid = fork();
    if (s->pid < 0)
        die("fork failed");
    if (s->pid == 0) {
        close(down[1]);
        close(up[0]);
        server_main(cfg, down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    s->ctl = down[1];
    s->up = up[0];
    if (!read_all(s->up, s->endpoint, sizeof s->endpoint))
        die("the server did not start");
}

static void server_mark_start(struct server *s)
{
    char ack;
    write_all(s->ctl, "s", 1);
    if (!read_all(s->up, &ack, 1))
        die("the server died");
}

static struct server_report server_mark_end(struct server *s)
{
    struct server_report r;
    write_all(s->ctl, "e", 1);
    if (!read_all(s->up, &r, sizeof r))
        die("the server died");
    return r;
}

static void server_stop(struct server *s)
{
    char ack;
    write_all(s->ctl, "q", 1);
    read_all(s->up, &ack, 1);
    int status;
    waitpid(s->pid, &status, 0);
}

/* ---- client ---------------------------------------------------------------
 */

/* How the client waits for its DEALERs. zlink: its poller, whose wait
 * looks only at the sockets that were signalled since the last one, as a
 * game server over many clients would wait. libzmq: zmq_poll, which looks
 * at every socket; libzmq 4.3 has zmq_poller_* only as draft API, which
 * its packages (Debian's among them) leave out of the library. Built with
 * GAME_BENCH_POLL defined, the zlink client waits with zmq_poll too
 * (zlink_poll), for comparing the two ways. */
#if defined(BENCH_ZLINK) && !defined(GAME_BENCH_POLL)
#define WAIT_WITH_POLLER 1
#endif

struct waiter {
    long n;
#if defined(WAIT_WITH_POLLER)
    void *poller;
    zmq_poller_event_t *events;
#else
    zmq_pollitem_t *items;
#endif
};

static void waiter_init(struct waiter *w, void **dealers, long n)
{
    w->n = n;
#if defined(WAIT_WITH_POLLER)
    w->poller = zmq_poller_new();
    w->events = calloc((size_t)n, sizeof *w->events);
    if (!w->poller || !w->events)
        die("out of memory");
    for (long i = 0; i < n; i++)
        if (zmq_poller_add(w->poller, dealers[i], (void *)(intptr_t)i,
                           ZMQ_POLLIN) != 0)
            die("zmq_poller_add: %s", zmq_strerror(zmq_errno()));
#else
    w->items = calloc((size_t)n, sizeof *w->items);
    if (!w->items)
        die("out of memory");
    for (long i = 0; i < n; i++)
        w->items[i] = (zmq_pollitem_t){dealers[i], 0, ZMQ_POLLIN, 0};
#endif
}

static void waiter_destroy(struct waiter *w)
{
#if defined(WAIT_WITH_POLLER)
    zmq_poller_destroy(&w->poller);
    free(w->events);
#else
    free(w->items);
#endif
}

/* Waits up to timeout_ms for DEALERs with a reply; fills ready with their
 * indexes. Returns how many, 0 on timeout, or -1. */
static long wait_ready(struct waiter *w, long *ready, long timeout_ms)
{
#if defined(WAIT_WITH_POLLER)
    int rc = zmq_poller_wait_all(w->poller, w->events, (int)w->n, timeout_ms);
    if (rc < 0)
        return zmq_errno() == EAGAIN ? 0 : -1;
    for (int k = 0; k < rc; k++)
        ready[k] = (long)(intptr_t)w->events[k].user_data;
    return rc;
#else
    int rc = zmq_poll(w->items, (int)w->n, timeout_ms);
    long found = 0;
    for (long i = 0; i < w->n && rc > 0; i++)
        if (w->items[i].revents & ZMQ_POLLIN)
            ready[found++] = i;
    return rc < 0 ? -1 : found;
#endif
}

static unsigned char *request_buf;

static int send_request(void *dealer, size_t size, int flags)
{
    double t = now_s();
    memcpy(request_buf + STAMP_AT, &t, sizeof t);
    return zmq_send(dealer, request_buf, size, flags) == (int)size ? 0 : -1;
}

/* Receives one reply if there is one; its round trip in seconds into rtt.
 * 1 received, 0 none waiting, -1 an error. */
static int recv_reply(void *dealer, zmq_msg_t *msg, size_t size, double *rtt,
                      int flags)
{
    if (zmq_msg_recv(msg, dealer, flags) < 0)
        return zmq_errno() == EAGAIN ? 0 : -1;
    if (zmq_msg_size(msg) != size)
        return -1;
    double sent;
    memcpy(&sent, (unsigned char *)zmq_msg_data(msg) + STAMP_AT, sizeof sent);
    *rtt = now_s() - sent;
    return 1;
}

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* p50 and p99 of n samples in microseconds (sorted in place). */
static void percentiles(float *samples, long n, double *p50, double *p99)
{
    if (n == 0) {
        *p50 = *p99 = 0;
        return;
    }
    qsort(samples, (size_t)n, sizeof *samples, compare_float);
    *p50 = samples[(n - 1) / 2];
    *p99 = samples[(long)((double)(n - 1) * 0.99)];
}

struct clients {
    void *ctx;
    void **dealers;
    struct waiter waiter;
    long *ready; /* indexes of the DEALERs wait_ready found ready */
    long n;
    double connect_s;
    long drops; /* ListenDrops over the connect phase */
};

/* Connects n DEALERs and carries one round trip on each: the connect time
 * runs from the first connect until every DEALER has its reply. */
static bool clients_connect(struct clients *c, long n, const char *endpoint,
                            size_t size)
{
    c->n = n;
    c->dealers = calloc((size_t)n, sizeof *c->dealers);
    c->ready = calloc((size_t)n, sizeof *c->ready);
    bool *answered = calloc((size_t)n, sizeof *answered);
    if (!c->dealers || !c->ready || !answered)
        die("out of memory");
    long drops_before = listen_drops();
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        void *d = zmq_socket(c->ctx, ZMQ_DEALER);
        if (!d)
            die("zmq_socket #%ld: %s", i, zmq_strerror(zmq_errno()));
        set_int(d, ZMQ_LINGER, 0);
        if (zmq_connect(d, endpoint) != 0)
            die("zmq_connect #%ld: %s", i, zmq_strerror(zmq_errno()));
        if (send_request(d, size, 0) != 0)
            die("send #%ld: %s", i, zmq_strerror(zmq_errno()));
        c->dealers[i] = d;
    }
    waiter_init(&c->waiter, c->dealers, n);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    long pending = n;
    double deadline = t0 + 60;
    while (pending > 0 && now_s() < deadline) {
        long found = wait_ready(&c->waiter, c->ready, 100);
        if (found < 0)
            die("poll: %s", zmq_strerror(zmq_errno()));
        for (long k = 0; k < found; k++) {
            long i = c->ready[k];
            double rtt;
            while (recv_reply(c->dealers[i], &msg, size, &rtt, ZMQ_DONTWAIT) >
                   0)
                if (!answered[i]) {
                    answered[i] = true;
                    pending--;
                }
        }
    }
    zmq_msg_close(&msg);
    free(answered);
    c->connect_s = now_s() - t0;
    long drops_after = listen_drops();
    c->drops =
        drops_before >= 0 && drops_after >= 0 ? drops_after - drops_before : -1;
    return pending == 0;
}

static void clients_close(struct clients *c)
{
    for (long i = 0; i < c->n; i++)
        zmq_close(c->dealers[i]);
    waiter_destroy(&c->waiter);
    free(c->dealers);
    free(c->ready);
}

/* Samples room, touched before the baseline RSS is read, or the pages the
 * window's samples fill would count as the library's memory. A memset of
 * zeros after malloc is not enough: the compiler makes the pair a calloc,
 * which leaves fresh pages untouched. */
static float *new_samples(void)
{
    float *s = malloc(MAX_SAMPLES * sizeof *s);
    if (!s)
        die("out of memory");
    volatile float *touch = s;
    for (size_t i = 0; i < MAX_SAMPLES; i += 1024)
        touch[i] = 0;
    return s;
}

static int run_multi(const struct config *cfg)
{
    long n = cfg->clients;
    struct server srv;
    server_start(cfg, &srv);
    raise_nofile(4 * n + 512);
    float *samples = new_samples();
    struct clients c = {.ctx = new_ctx(n)};
    long rss_before = vm_rss_kib();
    const char *status = "OK";
    if (!clients_connect(&c, n, srv.endpoint, cfg->size))
        status = "FAILED:connect";

    zmq_msg_t msg;
    zmq_msg_init(&msg);
    for (long i = 0; i < n && strcmp(status, "OK") == 0; i++)
        for (long k = 0; k < cfg->inflight; k++)
            if (send_request(c.dealers[i], cfg->size, 0) != 0)
                status = "FAILED:send";
    double start = now_s();
    double window_start = start + cfg->warmup_s;
    double window_end = window_start + cfg->seconds;
    bool in_window = false;
    long done = 0, sampled = 0;
    double cpu_start = 0, cpu_end = 0, elapsed = 0;
    long rss_busy = 0;
    struct server_report sr = {0};
    while (strcmp(status, "OK") == 0) {
        double t = now_s();
        if (!in_window && t >= window_start) {
            server_mark_start(&srv);
            cpu_start = cpu_us();
            window_start = now_s();
            window_end = window_start + cfg->seconds;
            in_window = true;
        } else if (in_window && t >= window_end) {
            cpu_end = cpu_us();
            elapsed = now_s() - window_start;
            rss_busy = vm_rss_kib();
            sr = server_mark_end(&srv);
            break;
        }
        long found = wait_ready(&c.waiter, c.ready, 1000);
        if (found < 0) {
            status = "FAILED:poll";
            break;
        }
        if (found == 0) {
            status = "FAILED:stalled";
            break;
        }
        for (long k = 0; k < found; k++) {
            long i = c.ready[k];
            double rtt;
            int r;
            while ((r = recv_reply(c.dealers[i], &msg, cfg->size, &rtt,
                                   ZMQ_DONTWAIT)) > 0) {
                if (in_window) {
                    done++;
                    if (sampled < MAX_SAMPLES)
                        samples[sampled++] = (float)(rtt * 1e6);
                }
                if (send_request(c.dealers[i], cfg->size, 0) != 0) {
                    status = "FAILED:send";
                    break;
                }
            }
            if (r < 0)
                status = "FAILED:recv";
        }
    }
    zmq_msg_close(&msg);
    server_stop(&srv);
    clients_close(&c);
    zmq_ctx_term(c.ctx);

    double p50, p99;
    percentiles(samples, sampled, &p50, &p99);
    free(samples);
    bool ok = strcmp(status, "OK") == 0 && done > 0;
    double per = ok ? 1.0 / (double)done : 0;
    printf("%s,multi,%ld,%ld,%zu,%s,%.0f,%.1f,%.1f,%.3f,%.3f,%.2f,%.2f,%.4f,"
           "%ld,%ld,%.3f\n",
           LIB_NAME, n, cfg->inflight, cfg->size, ok ? "OK" : status,
           ok ? (double)done / elapsed : 0, p50, p99,
           (cpu_end - cpu_start) * per, sr.cpu_us * per,
           (double)(rss_busy - rss_before) / (double)n,
           (double)(sr.rss_at_end - sr.rss_before) / (double)n, c.connect_s,
           c.drops, done, elapsed);
    return ok ? 0 : 1;
}

/* What --rate's client waits in before each receive: one pollitem, or a
 * poller of one socket (libzmq: the pollitem, see wait_kind). */
struct reply_waiter {
    zmq_pollitem_t item;
#if defined(BENCH_ZLINK)
    void *poller;
#endif
};

static void reply_waiter_init(struct reply_waiter *w, void *dealer,
                              enum wait_kind kind)
{
    w->item = (zmq_pollitem_t){dealer, 0, ZMQ_POLLIN, 0};
#if defined(BENCH_ZLINK)
    w->poller = NULL;
    if (kind == WAIT_POLLER) {
        w->poller = zmq_poller_new();
        if (!w->poller || zmq_poller_add(w->poller, dealer, NULL, ZMQ_POLLIN))
            die("zmq_poller: %s", zmq_strerror(zmq_errno()));
    }
#else
    (void)kind;
#endif
}

static void reply_waiter_destroy(struct reply_waiter *w)
{
#if defined(BENCH_ZLINK)
    if (w->poller)
        zmq_poller_destroy(&w->poller);
#else
    (void)w;
#endif
}

/* True once the DEALER has a reply to read. */
static bool wait_for_reply(struct reply_waiter *w)
{
#if defined(BENCH_ZLINK)
    if (w->poller) {
        zmq_poller_event_t event;
        return zmq_poller_wait(w->poller, &event, 5000) == 0;
    }
#endif
    return zmq_poll(&w->item, 1, 5000) == 1;
}

static int run_rate(const struct config *cfg)
{
    struct server srv;
    server_start(cfg, &srv);
    /* The default timer slack (50 us) would stretch every sleep between
     * requests, and a 10k req/s schedule has 100 us between them. */
    prctl(PR_SET_TIMERSLACK, 1UL);
    float *samples = new_samples();
    struct clients c = {.ctx = new_ctx(1)};
    const char *status = "OK";
    if (!clients_connect(&c, 1, srv.endpoint, cfg->size))
        status = "FAILED:connect";
    void *dealer = c.dealers[0];
    set_int(dealer, ZMQ_RCVTIMEO, 5000);
    struct reply_waiter waiter;
    reply_waiter_init(&waiter, dealer, cfg->wait);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    /* The window is timed, not counted: a rate the pair cannot keep up
     * shows as a lower achieved rate, not as a longer run. A send that
     * falls behind its time goes at once, so the average holds where it
     * can. */
    double interval = 1.0 / (double)cfg->rate;
    double next = now_s();
    double window_start = next + cfg->warmup_s, window_end = 0;
    double cpu_start = 0;
    bool in_window = false;
    struct server_report sr = {0};
    long done = 0, sampled = 0;
    while (strcmp(status, "OK") == 0) {
        double t = now_s();
        if (!in_window && t >= window_start) {
            server_mark_start(&srv);
            cpu_start = cpu_us();
            window_start = now_s();
            window_end = window_start + cfg->seconds;
            next = window_start;
            in_window = true;
        } else if (in_window && t >= window_end) {
            break;
        }
        sleep_until(next);
        next += interval;
        double rtt;
        if (send_request(dealer, cfg->size, 0) != 0) {
            status = "FAILED:send";
            break;
        }
        /* --wait poll, poller: as a client that also watches a timeout
         * (zguide's lazy pirate, a zpoller) waits, then reads without
         * waiting. */
        if (cfg->wait != WAIT_RECV && !wait_for_reply(&waiter)) {
            status = "FAILED:poll";
            break;
        }
        if (recv_reply(dealer, &msg, cfg->size, &rtt,
                       cfg->wait != WAIT_RECV ? ZMQ_DONTWAIT : 0) != 1) {
            status = "FAILED:recv";
            break;
        }
        if (in_window) {
            done++;
            if (sampled < MAX_SAMPLES)
                samples[sampled++] = (float)(rtt * 1e6);
        }
    }
    double cpu = cpu_us() - cpu_start;
    double elapsed = now_s() - window_start;
    if (strcmp(status, "OK") == 0)
        sr = server_mark_end(&srv);
    zmq_msg_close(&msg);
    reply_waiter_destroy(&waiter);
    server_stop(&srv);
    clients_close(&c);
    zmq_ctx_term(c.ctx);
    double p50, p99;
    percentiles(samples, sampled, &p50, &p99);
    free(samples);
    bool ok = strcmp(status, "OK") == 0 && done > 0;
    double per = ok ? 1.0 / (double)done : 0;
    /* The key names the wait when it is not the receive itself. */
    static const char *const wait_names[] = {"", " (poll)", " (poller)"};
    printf("%s,rate,%ld%s,%zu,%s,%.0f,%.1f,%.1f,%.3f,%.3f,%ld,%.3f\n", LIB_NAME,
           cfg->rate, wait_names[cfg->wait], cfg->size, ok ? "OK" : status,
           ok ? (double)done / elapsed : 0, p50, p99, cpu * per,
           sr.cpu_us * per, done, elapsed);
    return ok ? 0 : 1;
}

static int run_idle(const struct config *cfg)
{
    long n = cfg->clients;
    struct server srv;
    server_start(cfg, &srv);
    raise_nofile(4 * n + 512);
    struct clients c = {.ctx = new_ctx(n)};
    const char *status = "OK";
    if (!clients_connect(&c, n, srv.endpoint, cfg->size))
        status = "FAILED:connect";
    struct server_report sr = {0};
    double cpu = 0;
    long woke = 0;
    if (strcmp(status, "OK") == 0) {
        /* Let the connections' last acknowledgements settle first. */
        sleep_until(now_s() + 0.3);
        server_mark_start(&srv);
        double cpu_start = cpu_us();
        long switches_start = switches();
        sleep_until(now_s() + cfg->seconds);
        cpu = cpu_us() - cpu_start;
        woke = switches() - switches_start;
        sr = server_mark_end(&srv);
    }
    server_stop(&srv);
    clients_close(&c);
    zmq_ctx_term(c.ctx);
    bool ok = strcmp(status, "OK") == 0;
    printf("%s,idle,%ld,%.1f,%s,%.0f,%.0f,%ld,%ld,%.4f,%ld\n", LIB_NAME, n,
           cfg->seconds, ok ? "OK" : status, cpu, sr.cpu_us, woke, sr.switches,
           c.connect_s, c.drops);
    return ok ? 0 : 1;
}

/* ---- main -----------------------------------------------------------------
 */

static long parse_long(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0)
        die("bad %s: %s", what, s);
    return v;
}

static void usage(void)
{
    fprintf(
        stderr,
        "usage: game_bench_%s --clients N --inflight K [--size S]\n"
        "       game_bench_%s --rate R [--size S] [--wait recv|poll|poller]\n"
        "       game_bench_%s --idle N\n"
        "  common: --seconds D (window, default 2), --warmup-s W "
        "(default 0.5), --backlog B (default: the library's),\n"
        "  --spin-budget US (zlink: ZLINK_SPIN_BUDGET of both "
        "processes)\n"
        "  --header prints the CSV header of the mode given\n",
        LIB_NAME, LIB_NAME, LIB_NAME);
    exit(2);
}

static void print_header(enum mode m)
{
    if (m == MODE_MULTI)
        printf("lib,kind,clients,inflight,size,status,msg_s,rtt_p50_us,"
               "rtt_p99_us,client_cpu_us_per_msg,server_cpu_us_per_msg,"
               "client_kib_per_conn,server_kib_per_conn,connect_s,"
               "listen_drops,messages,window_s\n");
    else if (m == MODE_RATE)
        printf("lib,kind,rate,size,status,achieved_req_s,rtt_p50_us,"
               "rtt_p99_us,client_cpu_us_per_req,server_cpu_us_per_req,"
               "requests,window_s\n");
    else
        printf("lib,kind,conns,seconds,status,client_cpu_us,server_cpu_us,"
               "client_switches,server_switches,connect_s,listen_drops\n");
}

int main(int argc, char **argv)
{
    struct config cfg = {
        .inflight = 1, .size = 64, .seconds = 2, .warmup_s = 0.5};
    bool header = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--header") == 0) {
            header = true;
            continue;
        }
        if (!v)
            usage();
        if (strcmp(a, "--clients") == 0) {
            cfg.mode = MODE_MULTI;
            cfg.clients = parse_long(v, "clients");
        } else if (strcmp(a, "--inflight") == 0) {
            cfg.inflight = parse_long(v, "inflight");
        } else if (strcmp(a, "--rate") == 0) {
            cfg.mode = MODE_RATE;
            cfg.rate = parse_long(v, "rate");
        } else if (strcmp(a, "--wait") == 0) {
            if (strcmp(v, "recv") == 0)
                cfg.wait = WAIT_RECV;
            else if (strcmp(v, "poll") == 0)
                cfg.wait = WAIT_POLL;
            else if (strcmp(v, "poller") == 0)
                cfg.wait = WAIT_POLLER;
            else
                usage();
        } else if (strcmp(a, "--idle") == 0) {
            cfg.mode = MODE_IDLE;
            cfg.clients = parse_long(v, "idle");
        } else if (strcmp(a, "--size") == 0) {
            cfg.size = (size_t)parse_long(v, "size");
        } else if (strcmp(a, "--seconds") == 0) {
            cfg.seconds = atof(v);
        } else if (strcmp(a, "--warmup-s") == 0) {
            cfg.warmup_s = atof(v);
        } else if (strcmp(a, "--backlog") == 0) {
            cfg.backlog = (int)parse_long(v, "backlog");
        } else if (strcmp(a, "--spin-budget") == 0) {
#if !defined(BENCH_ZLINK)
            die("--spin-budget is zlink's (ZLINK_SPIN_BUDGET)");
#endif
            spin_budget_us = (int)parse_long(v, "spin budget");
        } else {
            usage();
        }
        i++;
    }
    if (cfg.mode == MODE_NONE)
        usage();
    if (header) {
        print_header(cfg.mode);
        return 0;
    }
    if (cfg.size < MIN_SIZE)
        die("--size must be at least %d", MIN_SIZE);
    if (cfg.seconds <= 0 || cfg.warmup_s < 0)
        die("--seconds must be positive");
    if ((cfg.mode != MODE_RATE && cfg.clients < 1) ||
        (cfg.mode == MODE_RATE && cfg.rate < 1) || cfg.inflight < 1)
        usage();
    signal(SIGPIPE, SIG_IGN);
    request_buf = malloc(cfg.size);
    if (!request_buf)
        die("out of memory");
    memset(request_buf, 0x5a, cfg.size);
    if (cfg.mode == MODE_MULTI)
        return run_multi(&cfg);
    if (cfg.mode == MODE_RATE)
        return run_rate(&cfg);
    return run_idle(&cfg);
}
