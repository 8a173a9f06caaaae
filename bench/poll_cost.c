/* poll_cost.c — what one zlink_poll pass over many sockets costs, for
 * counting its system calls (strace -c -f, or perf stat -e
 * raw_syscalls:sys_enter): N DEALERs connected over tcp to one ROUTER in
 * this process, then
 *
 *   idle      PASSES zlink_poll(dealers, N, 0) with nothing to do;
 *   sleep     PASSES zlink_poll(dealers, N, 1) with nothing to do;
 *   busy      PASSES rounds: the ROUTER sends one message to each of
 *             BATCH dealers, then zlink_poll(dealers, N, -1) and a receive
 *             on every ready dealer until all BATCH have arrived.
 *
 * Usage: poll_cost idle|sleep|busy [N [PASSES [BATCH]]]. It prints the
 * passes made and the wall time; the system calls are the tracer's. Only
 * the phase asked for runs after the set-up, so the tracer's figures for
 * two phases differ by the phase alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "zlink.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "poll_cost: %s: %s\n", what, zlink_strerror(zlink_errno()));
    exit(1);
}

int main(int argc, char **argv)
{
    const char *phase = argc > 1 ? argv[1] : "idle";
    int n = argc > 2 ? atoi(argv[2]) : 1000;
    int passes = argc > 3 ? atoi(argv[3]) : 1000;
    int batch = argc > 4 ? atoi(argv[4]) : 1;
    if (n < 1 || passes < 1 || batch < 1 || batch > n) {
        fprintf(stderr,
                "usage: poll_cost idle|sleep|busy [N [PASSES [BATCH]]]\n");
        return 2;
    }
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    void *ctx = zlink_ctx_new();
    void *router = zlink_socket(ctx, ZLINK_ROUTER);
    if (!router || zlink_bind(router, "tcp://127.0.0.1:*") != 0)
        die("bind");
    char ep[256];
    size_t len = sizeof ep;
    zlink_getsockopt(router, ZLINK_LAST_ENDPOINT, ep, &len);
    void **dealers = calloc((size_t)n, sizeof *dealers);
    zlink_pollitem_t *items = calloc((size_t)n, sizeof *items);
    char(*ids)[12] = calloc((size_t)n, sizeof *ids);
    for (int i = 0; i < n; i++) {
        dealers[i] = zlink_socket(ctx, ZLINK_DEALER);
        snprintf(ids[i], sizeof ids[i], "%07d", i % 10000000);
        if (!dealers[i] ||
            zlink_setsockopt(dealers[i], ZLINK_ROUTING_ID, ids[i], 7) != 0 ||
            zlink_connect(dealers[i], ep) != 0)
            die("connect");
        items[i] = (zlink_pollitem_t){dealers[i], 0, ZLINK_POLLIN, 0};
    }
    /* Every dealer says hello, so that the router can route to it. */
    char buf[64];
    for (int i = 0; i < n; i++)
        if (zlink_send(dealers[i], "hi", 2, 0) != 2)
            die("send");
    for (int i = 0; i < n; i++) {
        if (zlink_recv(router, buf, sizeof buf, 0) < 0 ||
            zlink_recv(router, buf, sizeof buf, 0) < 0)
            die("recv");
    }
    double start = now_s();
    long got = 0;
    if (strcmp(phase, "idle") == 0 || strcmp(phase, "sleep") == 0) {
        long timeout = phase[0] == 'i' ? 0 : 1;
        for (int p = 0; p < passes; p++)
            if (zlink_poll(items, n, timeout) != 0)
                die("poll");
    } else {
        int next = 0;
        for (int p = 0; p < passes; p++) {
            for (int b = 0; b < batch; b++) {
                int i = (next + b) % n;
                if (zlink_send(router, ids[i], 7, ZLINK_SNDMORE) != 7 ||
                    zlink_send(router, "x", 1, 0) != 1)
                    die("route");
            }
            next = (next + batch) % n;
            for (int left = batch; left > 0;) {
                if (zlink_poll(items, n, -1) < 0)
                    die("poll");
                for (int i = 0; i < n; i++)
                    if (items[i].revents & ZLINK_POLLIN)
                        while (zlink_recv(dealers[i], buf, sizeof buf,
                                          ZLINK_DONTWAIT) >= 0) {
                            left--;
                            got++;
                        }
            }
        }
    }
    double took = now_s() - start;
    printf("%s: %d sockets, %d passes, %ld messages, %.3f s, %.2f us/pass\n",
           phase, n, passes, got, took, took * 1e6 / passes);
    int zero = 0;
    for (int i = 0; i < n; i++) {
        zlink_setsockopt(dealers[i], ZLINK_LINGER, &zero, sizeof zero);
        zlink_close(dealers[i]);
    }
    zlink_setsockopt(router, ZLINK_LINGER, &zero, sizeof zero);
    zlink_close(router);
    zlink_ctx_term(ctx);
    free(dealers);
    free(items);
    free(ids);
    return 0;
}
