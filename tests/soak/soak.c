/* soak.c — a bounded-time soak: many raw-socket peers, in a child process,
 * connect to zlink sockets of every type, send valid and invalid traffic,
 * stall and vanish mid-frame, while zlink clients that behave exchange
 * messages with the same sockets. Afterwards the process's fd count is back
 * at its baseline, its RSS within a margin of it, and every well-behaved
 * client still gets its messages through; the sanitizers judge the rest.
 *
 *   soak [--seconds N] [--peers N] [--seed N] [--growth] [--verbose]
 *
 * --growth (or ZLINK_SOAK_GROWTH=1) adds the traffic that only a bounded
 * implementation survives: multipart messages that never end, frames that
 * announce gigabytes (MAXMSGSIZE unlimited), CANCEL floods at an XPUB
 * whose application does not read, and 8 KiB messages at such a DEALER.
 * The peak RSS is checked in every run, the peak address space outside
 * the sanitizers.
 *
 * Linux only: it reads /proc/self. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "soak.h"
#include "zlink.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define SOAK_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SOAK_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define SOAK_TSAN 1
#endif

#ifdef SOAK_ASAN
/* A small quarantine: freed memory is held back that long before reuse,
 * and the default 256 MiB of it would read as growth. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "quarantine_size_mb=16";
}
#endif

uint64_t soak_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

const int soak_types[SOAK_TYPES] = {ZLINK_PAIR,   ZLINK_PUB,  ZLINK_SUB,
                                    ZLINK_XPUB,   ZLINK_XSUB, ZLINK_DEALER,
                                    ZLINK_ROUTER, ZLINK_XPUB, ZLINK_DEALER};

/* ---- what /proc says ---- */

/* Open fds, less the one that lists them. */
static int fd_count(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (!dir)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)))
        if (e->d_name[0] != '.')
            n++;
    closedir(dir);
    return n - 1;
}

/* A field of /proc/self/status, in KiB, or -1. */
static long status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    size_t n = strlen(field);
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            kib = strtol(line + n + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kib;
}

static long rss_kib(void)
{
    return status_kib("VmRSS");
}

/* RSS after handing freed heap back to the OS where the allocator can: a
 * figure that counts what is live, not what glibc keeps for later. */
static long settled_rss_kib(void)
{
#if defined(__GLIBC__) && !defined(SOAK_ASAN) && !defined(SOAK_TSAN)
    malloc_trim(0);
#endif
    return rss_kib();
}

/* ---- the zlink side ---- */

#define SERVE_PARTS_MAX 4
#define REPORT_EVERY_MS 30000

typedef struct server {
    int type;
    void *socket;
    int port;
    bool deaf; /* its application reads only once the peers are gone */
    zlink_msg_t parts[SERVE_PARTS_MAX]; /* of the message coming in */
    int part_count;
    bool truncated; /* it had more parts than that */
} server;

/* A well-behaved client of each server, in a context of its own: what it
 * sends (or the server sends it) must keep arriving. */
typedef struct healthy {
    void *client;
    uint64_t through; /* messages that arrived at their receiver */
} healthy;

typedef struct soak {
    soak_config cfg;
    void *ctx, *client_ctx;
    server servers[SOAK_TYPES];
    healthy healthy[SOAK_TYPES];
    uint64_t sent, received, published;
    /* The peers are gone: the deaf server is read at last, so that a
     * connection its backpressure stopped reading sees its peer's close. */
    bool deaf_reads;
    long peak_rss_kib;
    long peak_vm_kib; /* address space: what a reservation costs */
} soak;

static void set_int(void *s, int option, int value)
{
    if (zlink_setsockopt(s, option, &value, sizeof value) != 0) {
        fprintf(stderr, "soak: setsockopt %d: %s\n", option,
                zlink_strerror(zlink_errno()));
        exit(1);
    }
}

static void *new_socket(void *ctx, int type)
{
    void *s = zlink_socket(ctx, type);
    if (!s) {
        fprintf(stderr, "soak: zlink_socket: %s\n",
                zlink_strerror(zlink_errno()));
        exit(1);
    }
    set_int(s, ZLINK_LINGER, 0);
    return s;
}

static void open_servers(soak *k)
{
    for (int i = 0; i < SOAK_TYPES; i++) {
        server *sv = &k->servers[i];
        sv->type = soak_types[i];
        sv->deaf = i == SOAK_DEAF_XPUB || i == SOAK_DEAF_DEALER;
        sv->socket = new_socket(k->ctx, sv->type);
        set_int(sv->socket, ZLINK_SNDHWM, 100);
        set_int(sv->socket, ZLINK_RCVHWM, 100);
        /* Silent and stalled peers go within a few seconds. */
        set_int(sv->socket, ZLINK_HANDSHAKE_IVL, 1000);
        set_int(sv->socket, ZLINK_HEARTBEAT_IVL, 500);
        set_int(sv->socket, ZLINK_HEARTBEAT_TIMEOUT, 1500);
        int64_t max = k->cfg.growth ? -1 : SOAK_MAXMSGSIZE;
        zlink_setsockopt(sv->socket, ZLINK_MAXMSGSIZE, &max, sizeof max);
        if (sv->type == ZLINK_SUB)
            zlink_setsockopt(sv->socket, ZLINK_SUBSCRIBE, "", 0);
        if (zlink_bind(sv->socket, "tcp://127.0.0.1:*") != 0) {
            fprintf(stderr, "soak: bind: %s\n", zlink_strerror(zlink_errno()));
            exit(1);
        }
        char endpoint[256];
        size_t len = sizeof endpoint;
        zlink_getsockopt(sv->socket, ZLINK_LAST_ENDPOINT, endpoint, &len);
        sv->port = atoi(strrchr(endpoint, ':') + 1);
        if (sv->type == ZLINK_XSUB)
            zlink_send(sv->socket, "\x01", 1, ZLINK_DONTWAIT);
    }
}

static const int healthy_types[SOAK_TYPES] = {
    ZLINK_PAIR,   ZLINK_SUB,    ZLINK_PUB, ZLINK_SUB,   ZLINK_PUB,
    ZLINK_DEALER, ZLINK_DEALER, ZLINK_SUB, ZLINK_DEALER};

static void open_healthy(soak *k)
{
    for (int i = 0; i < SOAK_TYPES; i++) {
        void *c = new_socket(k->client_ctx, healthy_types[i]);
        if (healthy_types[i] == ZLINK_SUB)
            zlink_setsockopt(c, ZLINK_SUBSCRIBE, SOAK_HEALTHY,
                             strlen(SOAK_HEALTHY));
        char endpoint[64];
        snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d",
                 k->servers[i].port);
        if (zlink_connect(c, endpoint) != 0) {
            fprintf(stderr, "soak: connect: %s\n",
                    zlink_strerror(zlink_errno()));
            exit(1);
        }
        k->healthy[i].client = c;
    }
}

static bool is_healthy(const void *data, size_t size)
{
    size_t n = strlen(SOAK_HEALTHY);
    return size >= n && memcmp(data, SOAK_HEALTHY, n) == 0;
}

/* A whole message is in: counts it when the healthy client sent it, and
 * answers as the pattern allows (a ROUTER to whoever sent, a PAIR or
 * DEALER to whoever it picks), so that replies also go to peers that are
 * gone. A message longer than SERVE_PARTS_MAX parts is dropped. */
static void finish_message(soak *k, int i)
{
    server *sv = &k->servers[i];
    zlink_msg_t *last = &sv->parts[sv->part_count - 1];
    bool whole = !sv->truncated;
    if (whole && is_healthy(zlink_msg_data(last), zlink_msg_size(last)))
        k->healthy[i].through++;
    bool echo = whole && (sv->type == ZLINK_ROUTER ||
                          sv->type == ZLINK_DEALER || sv->type == ZLINK_PAIR);
    for (int p = 0; p < sv->part_count; p++) {
        int more = p + 1 < sv->part_count ? ZLINK_SNDMORE : 0;
        if (echo && zlink_msg_send(&sv->parts[p], sv->socket,
                                   ZLINK_DONTWAIT | more) >= 0)
            k->sent++;
        zlink_msg_close(&sv->parts[p]);
    }
    sv->part_count = 0;
    sv->truncated = false;
}

/* Reads what a server has, a bounded number of parts per round; a message
 * whose last part has not come yet waits for a later round. */
static void serve(soak *k, int i)
{
    server *sv = &k->servers[i];
    if (sv->deaf && !k->deaf_reads)
        return;
    for (int n = 0; n < 400; n++) {
        zlink_msg_t msg;
        zlink_msg_init(&msg);
        if (zlink_msg_recv(&msg, sv->socket, ZLINK_DONTWAIT) < 0) {
            zlink_msg_close(&msg);
            return;
        }
        k->received++;
        bool more = zlink_msg_more(&msg);
        if (sv->part_count < SERVE_PARTS_MAX) {
            zlink_msg_init(&sv->parts[sv->part_count]);
            zlink_msg_move(&sv->parts[sv->part_count++], &msg);
        } else {
            sv->truncated = true;
        }
        zlink_msg_close(&msg);
        if (!more)
            finish_message(k, i);
    }
}

static void publish(soak *k, uint64_t n)
{
    char body[64];
    int len = snprintf(body, sizeof body, "%s %llu", SOAK_HEALTHY,
                       (unsigned long long)n);
    for (int i = 0; i < SOAK_TYPES; i++) {
        int type = k->servers[i].type;
        if (type != ZLINK_PUB && type != ZLINK_XPUB)
            continue;
        if (zlink_send(k->servers[i].socket, body, (size_t)len,
                       ZLINK_DONTWAIT) >= 0)
            k->published++;
        zlink_send(k->servers[i].socket, "other topic", 11, ZLINK_DONTWAIT);
    }
    for (int i = 0; i < SOAK_TYPES; i++) {
        int type = healthy_types[i];
        if (type != ZLINK_SUB)
            zlink_send(k->healthy[i].client, body, (size_t)len, ZLINK_DONTWAIT);
    }
}

/* What arrives at the clients: published messages, and echoes. */
static void drain_clients(soak *k)
{
    for (int i = 0; i < SOAK_TYPES; i++) {
        zlink_msg_t msg;
        zlink_msg_init(&msg);
        while (zlink_msg_recv(&msg, k->healthy[i].client, ZLINK_DONTWAIT) >=
               0) {
            bool receiver_is_client = k->servers[i].type != ZLINK_SUB &&
                                      k->servers[i].type != ZLINK_XSUB &&
                                      k->servers[i].type != ZLINK_DEALER;
            if (receiver_is_client && !zlink_msg_more(&msg) &&
                is_healthy(zlink_msg_data(&msg), zlink_msg_size(&msg)))
                k->healthy[i].through++;
        }
        zlink_msg_close(&msg);
    }
}

/* Reads the deaf servers' queues to their end, once their peers are gone,
 * so that what they held is freed before RSS is read. */
static void drain_deaf(soak *k)
{
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    for (int d = SOAK_DEAF_XPUB; d <= SOAK_DEAF_DEALER; d++)
        for (long i = 0; i < 100000000L; i++)
            if (zlink_msg_recv(&msg, k->servers[d].socket, ZLINK_DONTWAIT) < 0)
                break;
    zlink_msg_close(&msg);
}

/* One round of the application: serve, publish, drain, watch RSS. */
static void app_round(soak *k, uint64_t *n)
{
    for (int i = 0; i < SOAK_TYPES; i++)
        serve(k, i);
    publish(k, (*n)++);
    drain_clients(k);
    long rss = rss_kib(), vm = status_kib("VmSize");
    if (rss > k->peak_rss_kib)
        k->peak_rss_kib = rss;
    if (vm > k->peak_vm_kib)
        k->peak_vm_kib = vm;
}

/* Runs the application until the child says line (or exits), then
 * returns. */
static bool run_until_child(soak *k, int ctl, const char *line,
                            uint64_t limit_ms)
{
    uint64_t start = soak_now_ms(), n = 0, deadline = start + limit_ms;
    uint64_t next_report = start + REPORT_EVERY_MS;
    char buf[256];
    size_t len = 0;
    while (soak_now_ms() < deadline) {
        app_round(k, &n);
        if (k->cfg.verbose && soak_now_ms() >= next_report) {
            /* The trend of a long run: growth shows here first. */
            printf("soak:   %llu s: fds %d, RSS %ld KiB\n",
                   (unsigned long long)(soak_now_ms() - start) / 1000,
                   fd_count(), rss_kib());
            fflush(stdout);
            next_report += REPORT_EVERY_MS;
        }
        struct pollfd p = {ctl, POLLIN, 0};
        if (poll(&p, 1, 5) <= 0)
            continue;
        ssize_t r = read(ctl, buf + len, sizeof buf - 1 - len);
        if (r <= 0)
            return false;
        len += (size_t)r;
        buf[len] = '\0';
        if (strstr(buf, line))
            return true;
    }
    return false;
}

/* Keeps serving until the fd count is back at baseline or time is up. */
static int settle_fds(soak *k, int baseline, uint64_t limit_ms)
{
    uint64_t n = 0, deadline = soak_now_ms() + limit_ms;
    int fds = fd_count();
    while (fds != baseline && soak_now_ms() < deadline) {
        app_round(k, &n);
        sleep_ms(10);
        fds = fd_count();
    }
    return fds;
}

/* True when every healthy pair got messages through within limit_ms. */
static bool healthy_pass(soak *k, uint64_t limit_ms, int want)
{
    uint64_t start[SOAK_TYPES];
    for (int i = 0; i < SOAK_TYPES; i++)
        start[i] = k->healthy[i].through;
    uint64_t n = 0, deadline = soak_now_ms() + limit_ms;
    for (;;) {
        bool all = true;
        for (int i = 0; i < SOAK_TYPES; i++)
            if (!k->servers[i].deaf &&
                k->healthy[i].through - start[i] < (uint64_t)want)
                all = false;
        if (all)
            return true;
        if (soak_now_ms() >= deadline)
            break;
        app_round(k, &n);
        sleep_ms(5);
    }
    for (int i = 0; i < SOAK_TYPES; i++)
        if (!k->servers[i].deaf &&
            k->healthy[i].through - start[i] < (uint64_t)want)
            fprintf(stderr,
                    "soak: healthy client of server %d (type %d): "
                    "%llu of %d messages\n",
                    i, k->servers[i].type,
                    (unsigned long long)(k->healthy[i].through - start[i]),
                    want);
    return false;
}

static void say(int ctl, const char *line)
{
    size_t len = strlen(line);
    if (write(ctl, line, len) != (ssize_t)len) {
        perror("soak: write");
        exit(1);
    }
}

static int run_parent(soak *k, int ctl, pid_t child)
{
    int failures = 0;
    k->ctx = zlink_ctx_new();
    k->client_ctx = zlink_ctx_new();
    open_servers(k);
    open_healthy(k);
    if (!healthy_pass(k, 10000, 3)) {
        fprintf(stderr, "soak: the healthy clients fail before any peer\n");
        failures++;
    }
    int base_fds = fd_count();
    char ports[256];
    size_t off = 0;
    for (int i = 0; i < SOAK_TYPES; i++)
        off += (size_t)snprintf(ports + off, sizeof ports - off, "%d ",
                                k->servers[i].port);
    snprintf(ports + off, sizeof ports - off, "\n");
    say(ctl, ports);

    /* Warm-up: the allocator and the pools reach their working size. */
    if (!run_until_child(k, ctl, "paused", 60000)) {
        fprintf(stderr, "soak: the peers did not finish their warm-up\n");
        failures++;
    }
    k->deaf_reads = true;
    int warm_fds = settle_fds(k, base_fds, 10000);
    if (warm_fds != base_fds) {
        fprintf(stderr, "soak: fd count %d after the warm-up, %d before\n",
                warm_fds, base_fds);
        failures++;
    }
    drain_deaf(k);
    k->deaf_reads = false;
    long base_rss = settled_rss_kib();
    long base_vm = status_kib("VmSize");
    k->peak_rss_kib = base_rss;
    k->peak_vm_kib = base_vm;

    say(ctl, "go\n");
    uint64_t started = soak_now_ms();
    if (!run_until_child(k, ctl, "done",
                         (uint64_t)k->cfg.seconds * 1000u + 60000)) {
        fprintf(stderr, "soak: the peers did not finish\n");
        failures++;
    }
    uint64_t churn_ms = soak_now_ms() - started;
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "soak: the peer process failed (status %d)\n", status);
        failures++;
    }

    k->deaf_reads = true;
    int end_fds = settle_fds(k, base_fds, 10000);
    bool through = healthy_pass(k, 10000, 10);
    drain_deaf(k);
    long end_rss = settled_rss_kib();
    long margin = SOAK_RSS_MARGIN_KIB + base_rss / 4;
    printf("soak: %llu ms of peers; fds %d -> %d; RSS %ld -> %ld KiB "
           "(peak %ld, margin %ld); address space peak +%ld KiB; server "
           "messages in %llu, out %llu, published %llu\n",
           (unsigned long long)churn_ms, base_fds, end_fds, base_rss, end_rss,
           k->peak_rss_kib, margin, k->peak_vm_kib - base_vm,
           (unsigned long long)k->received, (unsigned long long)k->sent,
           (unsigned long long)k->published);
    for (int i = 0; i < SOAK_TYPES; i++)
        printf("soak: healthy client of server %d (type %d): %llu through\n", i,
               k->servers[i].type, (unsigned long long)k->healthy[i].through);
    if (end_fds != base_fds) {
        fprintf(stderr, "soak: fd count %d, baseline %d\n", end_fds, base_fds);
        failures++;
    }
#ifdef SOAK_TSAN
    /* ThreadSanitizer's shadow memory and allocator make RSS say nothing
     * about zlink's. */
    base_rss = end_rss = k->peak_rss_kib = 0;
#endif
    if (end_rss > base_rss + margin) {
        fprintf(stderr, "soak: RSS %ld KiB, baseline %ld + margin %ld\n",
                end_rss, base_rss, margin);
        failures++;
    }
    if (k->peak_rss_kib > base_rss + SOAK_PEAK_MARGIN_KIB) {
        fprintf(stderr, "soak: peak RSS %ld KiB, baseline %ld + %d\n",
                k->peak_rss_kib, base_rss, SOAK_PEAK_MARGIN_KIB);
        failures++;
    }
#if !defined(SOAK_ASAN) && !defined(SOAK_TSAN)
    /* The sanitizers reserve terabytes of shadow: only a plain build can
     * tell a reservation made on the strength of a length field. */
    if (k->peak_vm_kib > base_vm + SOAK_PEAK_VM_MARGIN_KIB) {
        fprintf(stderr,
                "soak: peak address space %ld KiB, baseline %ld + %ld\n",
                k->peak_vm_kib, base_vm, (long)SOAK_PEAK_VM_MARGIN_KIB);
        failures++;
    }
#endif
    if (!through) {
        fprintf(stderr, "soak: a healthy client no longer gets through\n");
        failures++;
    }

    for (int i = 0; i < SOAK_TYPES; i++) {
        for (int p = 0; p < k->servers[i].part_count; p++)
            zlink_msg_close(&k->servers[i].parts[p]);
        zlink_close(k->servers[i].socket);
        zlink_close(k->healthy[i].client);
    }
    while (zlink_ctx_term(k->client_ctx) != 0 && zlink_errno() == EINTR)
        ;
    while (zlink_ctx_term(k->ctx) != 0 && zlink_errno() == EINTR)
        ;
    return failures;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: soak [--seconds N] [--peers N] [--seed N] "
            "[--growth] [--kind NAME] [--skip-kind NAME] [--verbose]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    soak k = {.cfg = {.seconds = 20,
                      .peers = 48,
                      .seed = 1,
                      .only_kind = -1,
                      .skip_kind = -1}};
    const char *growth = getenv("ZLINK_SOAK_GROWTH");
    k.cfg.growth = growth && strcmp(growth, "1") == 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            k.cfg.seconds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--peers") == 0 && i + 1 < argc)
            k.cfg.peers = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            k.cfg.seed = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--growth") == 0)
            k.cfg.growth = true;
        else if (strcmp(argv[i], "--kind") == 0 && i + 1 < argc &&
                 (k.cfg.only_kind = soak_kind_from_name(argv[++i])) >= 0)
            continue;
        else if (strcmp(argv[i], "--skip-kind") == 0 && i + 1 < argc &&
                 (k.cfg.skip_kind = soak_kind_from_name(argv[++i])) >= 0)
            continue;
        else if (strcmp(argv[i], "--verbose") == 0)
            k.cfg.verbose = true;
        else
            usage();
    }
    if (k.cfg.seconds < 1 || k.cfg.peers < 1 || k.cfg.peers > SOAK_PEERS_MAX)
        usage();
    signal(SIGPIPE, SIG_IGN);
    printf("soak: %d s, %d peers, seed %u%s\n", k.cfg.seconds, k.cfg.peers,
           k.cfg.seed, k.cfg.growth ? ", growth traffic" : "");
    fflush(stdout);

    /* The peers' process is forked before any zlink thread exists. */
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        perror("soak: socketpair");
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("soak: fork");
        return 1;
    }
    if (child == 0) {
        close(pair[0]);
        exit(soak_run_peers(&k.cfg, pair[1]));
    }
    close(pair[1]);
    int failures = run_parent(&k, pair[0], child);
    close(pair[0]);
    printf("soak: %s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
