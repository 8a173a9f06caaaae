/* stream_bench.c — a STREAM socket (ZMQ_STREAM) serving a raw TCP client
 * in another process, the load a web or telnet front end puts on it. Two
 * cells:
 *   --ingest MIB  the client writes MIB MiB as fast as it can, and the
 *                 server reads it all: MB/s, and the server's CPU per MiB;
 *   --echo N      the client sends 64 B and waits for them back, N times:
 *                 the round trip's p50/p99, and the server's CPU per
 *                 request.
 * CPU is user + system over every thread of the process. Built against
 * zlink (BENCH_ZLINK, through zlink_zmq.h) and against libzmq; the client
 * uses no library. Linux and other POSIX systems.
 *
 *   stream_bench_zlink --ingest 1024 | --echo 20000 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
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

#define ECHO_BODY 64
#define CHUNK (64 * 1024)

static void die(const char *what)
{
    fprintf(stderr, "stream_bench: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* ---- the raw client (child process, no library) ---- */

static int raw_connect(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        _exit(2);
    return fd;
}

static void write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n <= 0)
            _exit(3);
        p += n;
        len -= (size_t)n;
    }
}

static void read_all(int fd, char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = read(fd, p, len);
        if (n <= 0)
            _exit(4);
        p += n;
        len -= (size_t)n;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void client(int port, long mib, long echoes)
{
    int fd = raw_connect(port);
    if (mib > 0) {
        static char chunk[CHUNK];
        memset(chunk, 'x', sizeof chunk);
        for (long i = 0; i < mib * (1024 * 1024 / CHUNK); i++)
            write_all(fd, chunk, sizeof chunk);
        char done;
        read_all(fd, &done, 1); /* the server has it all */
    } else {
        uint64_t *rtt = calloc((size_t)echoes, sizeof *rtt);
        char req[ECHO_BODY], rep[ECHO_BODY];
        memset(req, 'r', sizeof req);
        for (long i = 0; i < echoes; i++) {
            uint64_t t0 = now_ns();
            write_all(fd, req, sizeof req);
            read_all(fd, rep, sizeof rep);
            rtt[i] = now_ns() - t0;
        }
        qsort(rtt, (size_t)echoes, sizeof *rtt, cmp_u64);
        printf("rtt_p50_us=%.1f rtt_p99_us=%.1f ", rtt[echoes / 2] / 1e3,
               rtt[echoes * 99 / 100] / 1e3);
        fflush(stdout);
    }
    close(fd);
    _exit(0);
}

/* ---- the STREAM server (this process) ---- */

/* One message: the id into id, the bytes into buf; returns their size. */
static int recv_bytes(void *s, char *id, int *id_len, char *buf, size_t cap)
{
    *id_len = zmq_recv(s, id, 256, 0);
    if (*id_len < 0)
        die("recv id");
    int n = zmq_recv(s, buf, cap, 0);
    if (n < 0)
        die("recv bytes");
    return n;
}

int main(int argc, char **argv)
{
    long mib = 0, echoes = 0;
    if (argc == 3 && strcmp(argv[1], "--ingest") == 0)
        mib = atol(argv[2]);
    else if (argc == 3 && strcmp(argv[1], "--echo") == 0)
        echoes = atol(argv[2]);
    if (mib <= 0 && echoes <= 0) {
        fprintf(stderr, "usage: stream_bench --ingest MIB | --echo N\n");
        return 64;
    }
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_STREAM);
    if (!s || zmq_bind(s, "tcp://127.0.0.1:*") != 0)
        die("bind");
    char endpoint[64];
    size_t len = sizeof endpoint;
    zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, endpoint, &len);
    int port = atoi(strrchr(endpoint, ':') + 1);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        client(port, mib, echoes);

    char id[256], first_id[256];
    int id_len, first_len;
    static char buf[CHUNK];
    /* The connect notification names the client. */
    if (recv_bytes(s, first_id, &first_len, buf, sizeof buf) != 0)
        die("no connect notification");
    double cpu0 = cpu_us();
    uint64_t t0 = now_ns();
    if (mib > 0) {
        long long want = (long long)mib << 20, have = 0;
        while (have < want)
            have += recv_bytes(s, id, &id_len, buf, sizeof buf);
        double secs = (double)(now_ns() - t0) / 1e9;
        double cpu = cpu_us() - cpu0;
        zmq_send(s, first_id, (size_t)first_len, ZMQ_SNDMORE);
        zmq_send(s, "k", 1, 0);
        printf("%s ingest %ld MiB: %.0f MB/s, server %.0f us CPU per MiB\n",
               LIB_NAME, mib, (double)want / secs / 1e6, cpu / (double)mib);
    } else {
        for (long i = 0; i < echoes; i++) {
            int have = 0;
            while (have < ECHO_BODY)
                have += recv_bytes(s, id, &id_len, buf + have,
                                   sizeof buf - (size_t)have);
            zmq_send(s, id, (size_t)id_len, ZMQ_SNDMORE);
            zmq_send(s, buf, ECHO_BODY, 0);
        }
        double cpu = cpu_us() - cpu0;
        fflush(stdout);
        int status;
        waitpid(pid, &status, 0);
        pid = 0;
        printf("%s echo %ld x %d B: server %.2f us CPU per request\n", LIB_NAME,
               echoes, ECHO_BODY, cpu / (double)echoes);
    }
    if (pid > 0) {
        int status;
        waitpid(pid, &status, 0);
    }
    int linger = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(s);
    zmq_ctx_term(ctx);
    return 0;
}
