/* wait_budget.c — CPU per request at a steady request rate, across two
 * processes: the measure behind ZLINK_SPIN_BUDGET's default
 * (docs/options.md). A DEALER client sends one 64 B request at a time at a
 * fixed rate over tcp loopback and waits for each reply; a ROUTER server
 * in a child process echoes them. Each process reports the CPU time
 * (user + system, every thread) it spent per request, and the client the
 * round trip's p50/p99. Built against zlink (BENCH_ZLINK, through
 * zlink_zmq.h) and against libzmq.
 *
 *   wait_budget_zlink --rate 10000 [--seconds 2] [--budget US] [--csv]
 *
 * --budget sets ZLINK_SPIN_BUDGET in both processes (zlink only; default:
 * the library's). A rate the round trip cannot keep up with runs back to
 * back; the achieved rate is reported. Linux and other POSIX systems. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

#define BODY 64
#define WARMUP 500

static void die(const char *what)
{
    fprintf(stderr, "wait_budget: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static void *new_ctx(int budget)
{
    void *ctx = zmq_ctx_new();
    if (!ctx)
        die("zmq_ctx_new");
#if defined(BENCH_ZLINK)
    if (budget >= 0 && zlink_ctx_set(ctx, ZLINK_SPIN_BUDGET, budget) != 0)
        die("ZLINK_SPIN_BUDGET");
#else
    (void)budget;
#endif
    return ctx;
}

/* The child: echoes every request; "start" and "stop" bracket the
 * measured requests, and the CPU spent between them goes back through
 * report_fd. */
static void serve(int budget, int endpoint_fd, int report_fd)
{
    void *ctx = new_ctx(budget);
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    /* The reply to "stop" must leave before the context goes. */
    int linger = 1000;
    zmq_setsockopt(router, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_bind(router, "tcp://127.0.0.1:*") != 0)
        die("bind");
    char endpoint[256];
    size_t len = sizeof endpoint;
    zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, endpoint, &len);
    if (write(endpoint_fd, endpoint, strlen(endpoint) + 1) < 0)
        die("write endpoint");
    uint64_t cpu_start = 0;
    for (;;) {
        char id[256], body[BODY];
        int id_len = zmq_recv(router, id, sizeof id, 0);
        int body_len = zmq_recv(router, body, sizeof body, 0);
        if (id_len < 0 || body_len < 0)
            die("server recv");
        if (body_len == 5 && memcmp(body, "start", 5) == 0)
            cpu_start = cpu_us();
        bool stop = body_len == 4 && memcmp(body, "stop", 4) == 0;
        if (stop) {
            uint64_t used = cpu_us() - cpu_start;
            if (write(report_fd, &used, sizeof used) < 0)
                die("write report");
        }
        zmq_send(router, id, (size_t)id_len, ZMQ_SNDMORE);
        zmq_send(router, body, (size_t)body_len, 0);
        if (stop)
            break;
    }
    zmq_close(router);
    zmq_ctx_term(ctx);
}

static void request(void *dealer, const char *body, size_t len)
{
    char reply[BODY];
    if (zmq_send(dealer, body, len, 0) < 0 ||
        zmq_recv(dealer, reply, sizeof reply, 0) < 0)
        die("request");
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    double seconds = 2;
    long rate = 10000;
    int budget = -1;
    bool csv = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rate") && i + 1 < argc)
            rate = atol(argv[++i]);
        else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            budget = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv"))
            csv = true;
        else {
            fprintf(stderr,
                    "usage: %s --rate R [--seconds S] [--budget US] "
                    "[--csv]\n",
                    argv[0]);
            return 2;
        }
    }
    if (rate < 1 || seconds <= 0)
        return 2;
    int endpoint_pipe[2], report_pipe[2];
    if (pipe(endpoint_pipe) != 0 || pipe(report_pipe) != 0)
        return 1;
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        serve(budget, endpoint_pipe[1], report_pipe[1]);
        _exit(0);
    }
    char endpoint[256];
    ssize_t got = read(endpoint_pipe[0], endpoint, sizeof endpoint);
    if (got <= 0)
        return 1;

    void *ctx = new_ctx(budget);
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(dealer, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(dealer, endpoint) != 0)
        die("connect");
    char body[BODY];
    memset(body, 'x', sizeof body);
    for (int i = 0; i < WARMUP; i++)
        request(dealer, body, sizeof body);

    long count = (long)(rate * seconds);
    uint64_t *rtt = malloc((size_t)count * sizeof *rtt);
    if (!rtt)
        return 1;
    request(dealer, "start", 5);
    uint64_t period = 1000000000u / (uint64_t)rate;
    uint64_t cpu_start = cpu_us();
    uint64_t start = now_ns();
    for (long i = 0; i < count; i++) {
        uint64_t due = start + (uint64_t)i * period;
        uint64_t now = now_ns();
        if (now < due) {
            struct timespec ts = {(time_t)(due / 1000000000u),
                                  (long)(due % 1000000000u)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
                   EINTR)
                continue;
        }
        uint64_t sent = now_ns();
        request(dealer, body, sizeof body);
        rtt[i] = now_ns() - sent;
    }
    uint64_t elapsed = now_ns() - start;
    uint64_t client_cpu = cpu_us() - cpu_start;
    request(dealer, "stop", 4);
    uint64_t server_cpu = 0;
    if (read(report_pipe[0], &server_cpu, sizeof server_cpu) !=
        (ssize_t)sizeof server_cpu)
        return 1;
    zmq_close(dealer);
    zmq_ctx_term(ctx);
    waitpid(child, NULL, 0);

    qsort(rtt, (size_t)count, sizeof *rtt, by_value);
    double achieved = (double)count / ((double)elapsed / 1e9);
    double p50 = (double)rtt[count / 2] / 1000.0;
    double p99 = (double)rtt[count * 99 / 100] / 1000.0;
    if (csv)
        printf("%s,%d,%ld,%.0f,%.2f,%.2f,%.1f,%.1f\n", LIB_NAME, budget, rate,
               achieved, (double)client_cpu / (double)count,
               (double)server_cpu / (double)count, p50, p99);
    else
        printf("%s budget %d: %ld req/s asked, %.0f done; CPU per request: "
               "client %.2f us, server %.2f us; RTT p50 %.1f us, p99 %.1f "
               "us\n",
               LIB_NAME, budget, rate, achieved,
               (double)client_cpu / (double)count,
               (double)server_cpu / (double)count, p50, p99);
    free(rtt);
    return 0;
}
