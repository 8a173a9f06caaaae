/* zlink_bench.c — one benchmark program, compiled twice: against zlink
 * (BENCH_ZLINK, through zlink_zmq.h) and against libzmq (<zmq.h>). It
 * measures throughput, round-trip latency and idle memory per connection,
 * and prints one CSV line per cell.
 *
 * Honesty rules: both builds run this same code with the same socket
 * options, which are printed with every result. Warm-up messages are sent
 * and discarded before the timed ones. Every timed message carries a
 * sequence number that the receiver checks, and a cell whose count does not
 * come out exact is reported FAILED, never as a number. */
/* MAP_ANONYMOUS (the build defines _POSIX_C_SOURCE alone). */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* Present only when bench/syscount.so is preloaded: they bracket the timed
 * window so that the syscall counts leave out setup and teardown. */
extern void syscount_mark(int phase) __attribute__((weak));
extern int syscount_delta(unsigned long long *out, int n, const char **names)
    __attribute__((weak));

/* PUBSUB's one high-water mark, on both sides and in both libraries. It is
 * above the largest count this program sends (checked in parse_args), so a
 * publisher that runs ahead queues instead of dropping. */
#define PUBSUB_HWM 10000000
/* libzmq's default, set explicitly so that both libraries surely use it. */
#define DEFAULT_HWM 1000
#define MAX_COUNT 5000000

enum pattern {
    PAT_PAIR,
    PAT_PUBSUB,
    PAT_DEALER_DEALER,
    PAT_DEALER_ROUTER,
    PAT_ROUTER_ROUTER,
    PAT_ROUTER_ROUTER_POLL,
    PAT_REQ_REP, /* latency only: libzmq's perf/local_lat and remote_lat */
    /* latency only: both sides wait in zmq_poll before each receive, as
     * zguide's lazy pirate client and a server watching a timeout do */
    PAT_REQ_REP_POLL,
    PAT_COUNT
};
static const char *const pattern_names[PAT_COUNT] = {
    "PAIR",          "PUBSUB",        "DEALER_DEALER",
    "DEALER_ROUTER", "ROUTER_ROUTER", "ROUTER_ROUTER_POLL",
    "REQ_REP",       "REQ_REP_POLL"};

/* tls: zlink's TLS (certificates from $ZLINK_BENCH_TLS_CERTS, as
 * tests/tls/make_certs.sh makes them); curve: CURVE over tcp (both), the
 * encryption a libzmq user has; ws where the library has it (zlink; libzmq
 * only in a draft build); wss: zlink's ws over its TLS, with tls's
 * certificates. Each is UNSUPPORTED where it is missing. */
enum transport {
    TR_TCP,
    TR_IPC,
    TR_INPROC,
    TR_TLS,
    TR_CURVE,
    TR_WS,
    TR_WSS,
    TR_COUNT
};
static const char *const transport_names[TR_COUNT] = {
    "tcp", "ipc", "inproc", "tls", "curve", "ws", "wss"};

/* Message markers, in the first byte of every payload. */
#define MARK_WARMUP 'W'
#define MARK_DATA 'D'
/* Where a burst run's probe carries its send time (now_s()). */
#define BURST_STAMP_AT 8
#define BURST_DEFAULT_COUNT 2000
/* The routing ids the ROUTER sockets give themselves. */
#define RECEIVER_ID "R"
#define SENDER_ID "S"

struct config {
    enum pattern pattern;
    enum transport transport;
    size_t size;
    long count;  /* timed messages (or round trips) */
    long warmup; /* untimed messages sent first */
    bool latency;
    long burst;    /* > 0: one-way latency after bursts of this many */
    long pause_us; /* the sender's pause between a burst and its probe */
    bool csv;
    bool header;
    bool idle_memory;
    long conns;
    int io_threads;
    long stall_ms;
    long handshakes; /* > 0: connections per second, this many */
    bool cross_process;
    bool reconnect; /* handshakes by one DEALER that reconnects */
};

/* What the two sides of a cell share while it runs: memory of this
 * process, or, with --cross-process, a mapping shared with the other
 * side's process. */
struct cell_shared {
    atomic_int ready;      /* receiver saw the first warm-up message */
    atomic_int send_errno; /* first send failure in the sender thread */
    atomic_long progress;  /* bumps as messages arrive; the watchdog reads */
    atomic_long received;  /* timed messages received so far */
    atomic_int phase;      /* 0 run, 1 teardown, 2 done */
    atomic_long probes;    /* burst runs: probes received, warm-up too */
    atomic_int bound;      /* cross-process: endpoint holds the bound one */
    char endpoint[256];
};

/* Which sockets this process opens: both (one process), or, across two,
 * the measuring side (the receiver; the client of a latency run) or the
 * other one. */
enum side { SIDE_BOTH, SIDE_MEASURING, SIDE_OTHER };

/* Everything the two threads of a cell share. */
struct cell {
    const struct config *cfg;
    void *ctx;
    void *sender;   /* sends (throughput) or is the client (latency) */
    void *receiver; /* receives (throughput) or echoes (latency) */
    bool sender_is_router;
    bool receiver_is_router;
    bool poll_before_recv;
    char endpoint[256];
    char options[256];
    enum side side;
    pid_t other; /* cross-process: the other side's process */
    struct cell_shared *sh;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "zlink_bench_%s: ", LIB_NAME);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

static void usage(void)
{
    fprintf(
        stderr,
        "usage: zlink_bench_%s --pattern P --transport T --size N "
        "[--count C] [--warmup W] [--latency] [--csv] [--header]\n"
        "       zlink_bench_%s ... --burst N [--pause-us P] (default 5)\n"
        "       zlink_bench_%s --idle-memory [--conns N] [--csv]\n"
        "       zlink_bench_%s --handshakes N --transport T [--reconnect] "
        "[--csv]\n"
        "  P: PAIR PUBSUB DEALER_DEALER DEALER_ROUTER ROUTER_ROUTER "
        "ROUTER_ROUTER_POLL REQ_REP REQ_REP_POLL (--latency)\n"
        "  T: tcp ipc inproc tls curve\n"
        "  other: --io-threads N (default 1), --stall-ms MS (default "
        "10000),\n"
        "         --cross-process (tcp, ipc, ws, curve: the other side in a "
        "second process)\n",
        LIB_NAME, LIB_NAME, LIB_NAME, LIB_NAME);
    exit(2);
}

static const char *lib_version(void)
{
    static char buf[32];
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
    snprintf(buf, sizeof buf, "%d.%d.%d", major, minor, patch);
    return buf;
}

/* The default count for a size: about 0.2–1 s per cell at libzmq's speed
 * on a small machine. */
static long default_count(size_t size, bool latency)
{
    if (latency)
        return 10000;
    if (size <= 64)
        return 2000000;
    if (size <= 256)
        return 1000000;
    if (size <= 1024)
        return 500000;
    if (size <= 8192)
        return 100000;
    if (size <= 65536)
        return 20000;
    return 5000;
}

static int lookup(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

static long parse_long(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end)
        die("bad %s: %s", what, s);
    return v;
}

static void parse_args(int argc, char **argv, struct config *cfg)
{
    *cfg = (struct config){.pattern = PAT_COUNT,
                           .transport = TR_COUNT,
                           .count = -1,
                           .warmup = -1,
                           .conns = 10000,
                           .io_threads = 1,
                           .pause_us = 5,
                           .stall_ms = 10000};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--pattern") == 0 && v) {
            int p = lookup(v, pattern_names, PAT_COUNT);
            if (p < 0)
                die("unknown pattern %s", v);
            cfg->pattern = (enum pattern)p;
            i++;
        } else if (strcmp(a, "--transport") == 0 && v) {
            int t = lookup(v, transport_names, TR_COUNT);
            if (t < 0)
                die("unknown transport %s", v);
            cfg->transport = (enum transport)t;
            i++;
        } else if (strcmp(a, "--size") == 0 && v) {
            cfg->size = (size_t)parse_long(v, "size");
            i++;
        } else if (strcmp(a, "--count") == 0 && v) {
            cfg->count = parse_long(v, "count");
            i++;
        } else if (strcmp(a, "--warmup") == 0 && v) {
            cfg->warmup = parse_long(v, "warmup");
            i++;
        } else if (strcmp(a, "--conns") == 0 && v) {
            cfg->conns = parse_long(v, "conns");
            i++;
        } else if (strcmp(a, "--io-threads") == 0 && v) {
            cfg->io_threads = (int)parse_long(v, "io-threads");
            i++;
        } else if (strcmp(a, "--stall-ms") == 0 && v) {
            cfg->stall_ms = parse_long(v, "stall-ms");
            i++;
        } else if (strcmp(a, "--latency") == 0) {
            cfg->latency = true;
        } else if (strcmp(a, "--burst") == 0 && v) {
            cfg->burst = parse_long(v, "burst");
            i++;
        } else if (strcmp(a, "--pause-us") == 0 && v) {
            cfg->pause_us = parse_long(v, "pause-us");
            i++;
        } else if (strcmp(a, "--csv") == 0) {
            cfg->csv = true;
        } else if (strcmp(a, "--header") == 0) {
            cfg->header = true;
        } else if (strcmp(a, "--cross-process") == 0) {
            cfg->cross_process = true;
        } else if (strcmp(a, "--idle-memory") == 0) {
            cfg->idle_memory = true;
        } else if (strcmp(a, "--handshakes") == 0 && v) {
            cfg->handshakes = atol(v);
            i++;
        } else if (strcmp(a, "--reconnect") == 0) {
            cfg->reconnect = true;
        } else {
            usage();
        }
    }
    if (cfg->idle_memory) {
        if (cfg->conns < 1)
            die("--conns must be at least 1");
        return;
    }
    if (cfg->header && cfg->pattern == PAT_COUNT)
        return;
    if (cfg->handshakes > 0) {
        if (cfg->transport == TR_COUNT)
            usage();
        return;
    }
    if (cfg->pattern == PAT_COUNT || cfg->transport == TR_COUNT ||
        cfg->size == 0)
        usage();
    if (cfg->burst > 0) {
        /* The probe carries its send time after the marker and sequence. */
        if (cfg->size < BURST_STAMP_AT + sizeof(double))
            die("--burst needs --size of at least %zu",
                BURST_STAMP_AT + sizeof(double));
        cfg->latency = false;
    }
    /* Room for the marker byte and the sequence number. */
    if (cfg->size < 8)
        die("--size must be at least 8");
    if (cfg->count < 0)
        cfg->count = cfg->burst > 0 ? BURST_DEFAULT_COUNT
                                    : default_count(cfg->size, cfg->latency);
    if (cfg->count < 2 || cfg->count > MAX_COUNT)
        die("--count must be within 2..%d", MAX_COUNT);
    if (cfg->warmup < 0) {
        long w = cfg->count / 10;
        cfg->warmup = w < 100 ? 100 : w > 100000 ? 100000 : w;
    }
    if (cfg->latency && cfg->warmup < 1)
        cfg->warmup = 1;
    if (cfg->latency && cfg->pattern == PAT_PUBSUB)
        die("--latency needs a two-way pattern, not PUBSUB");
    if (!cfg->latency &&
        (cfg->pattern == PAT_REQ_REP || cfg->pattern == PAT_REQ_REP_POLL))
        die("REQ_REP takes turns: it runs with --latency only");
}

/* Cross-process cells are kinds of their own: xthr, xlat, xburst. */
static const char *kind_name(const struct config *cfg)
{
    const char *k = cfg->burst > 0 ? "burst" : cfg->latency ? "lat" : "thr";
    if (!cfg->cross_process)
        return k;
    static char buf[16];
    snprintf(buf, sizeof buf, "x%s", k);
    return buf;
}

/* ---- CSV ---------------------------------------------------------------- */

static void print_header(void)
{
    printf("lib,kind,pattern,transport,size,count,received,status,"
           "elapsed_s,msg_s,mb_s,lat_p50_us,lat_p99_us,lat_mean_us,"
           "options\n");
}

/* One result line; for latency lines msg_s is round trips per second. */
static void print_result(const struct cell *c, const char *status,
                         long received, double elapsed, double p50, double p99,
                         double mean)
{
    const struct config *cfg = c->cfg;
    double rate = elapsed > 0 ? (double)(cfg->count - 1) / elapsed : 0;
    double mbs = rate * (double)cfg->size / 1e6;
    if (cfg->csv) {
        printf("%s,%s,%s,%s,%zu,%ld,%ld,%s,%.6f,%.1f,", LIB_NAME,
               kind_name(cfg), pattern_names[cfg->pattern],
               transport_names[cfg->transport], cfg->size, cfg->count, received,
               status, elapsed, rate);
        if (!cfg->latency && cfg->burst == 0)
            printf("%.2f,,,,", mbs);
        else if (strcmp(status, "OK") == 0)
            printf(",%.2f,%.2f,%.2f,", p50, p99, mean);
        else
            printf(",,,,");
        printf("%s\n", c->options);
    } else if (strcmp(status, "OK") != 0) {
        printf("%s %s %s %s %zu B: %s (%ld of %ld received)\n", LIB_NAME,
               lib_version(), pattern_names[cfg->pattern],
               transport_names[cfg->transport], cfg->size, status, received,
               cfg->count);
    } else if (cfg->burst > 0) {
        printf("%s %s %s %s %zu B one-way latency of a message %ld us after "
               "a burst of %ld: p50 %.2f us, p99 %.2f us, mean %.2f us over "
               "%ld bursts\n",
               LIB_NAME, lib_version(), pattern_names[cfg->pattern],
               transport_names[cfg->transport], cfg->size, cfg->pause_us,
               cfg->burst, p50, p99, mean, cfg->count);
    } else if (cfg->latency) {
        printf("%s %s %s %s %zu B latency (one-way = rtt/2): p50 %.2f us, "
               "p99 %.2f us, mean %.2f us over %ld round trips\n",
               LIB_NAME, lib_version(), pattern_names[cfg->pattern],
               transport_names[cfg->transport], cfg->size, p50, p99, mean,
               cfg->count);
    } else {
        printf("%s %s %s %s %zu B: %.0f msg/s, %.1f MB/s (%ld messages in "
               "%.3f s)\n",
               LIB_NAME, lib_version(), pattern_names[cfg->pattern],
               transport_names[cfg->transport], cfg->size, rate, mbs,
               cfg->count, elapsed);
    }
    if (!cfg->csv)
        printf("  options: %s\n", c->options);
    fflush(stdout);
}

/* Syscall counts per timed message, when syscount.so is preloaded. */
static void print_syscounts(const struct cell *c)
{
    if (!syscount_delta)
        return;
    unsigned long long counts[16];
    const char *names[16];
    int n = syscount_delta(counts, 16, names);
    double per = 1.0 / (double)(c->cfg->count - 1);
    printf("%s,sys,%s,%s,%zu,%ld", LIB_NAME, pattern_names[c->cfg->pattern],
           transport_names[c->cfg->transport], c->cfg->size, c->cfg->count);
    for (int i = 0; i < n; i++)
        printf(",%s=%.5f", names[i], (double)counts[i] * per);
    printf("\n");
    fflush(stdout);
}

/* ---- watchdog ------------------------------------------------------------ */

/* A cell that stops making progress is reported FAILED and the process
 * exits at once: closing sockets that are stuck could hang as well. */
static void *watchdog_main(void *arg)
{
    struct cell *c = arg;
    long last = -1;
    double since = now_s();
    double teardown_since = 0;
    for (;;) {
        sleep_ms(50);
        int phase = atomic_load(&c->sh->phase);
        if (phase == 2)
            return NULL;
        if (phase == 1) {
            if (teardown_since == 0)
                teardown_since = now_s();
            if (now_s() - teardown_since > 10.0) {
                fprintf(stderr,
                        "zlink_bench_%s: teardown (zmq_close/zmq_ctx_term) "
                        "hung for 10 s\n",
                        LIB_NAME);
                _exit(3);
            }
            continue;
        }
        long p = atomic_load_explicit(&c->sh->progress, memory_order_relaxed);
        if (p != last) {
            last = p;
            since = now_s();
        } else if ((now_s() - since) * 1000.0 > (double)c->cfg->stall_ms) {
            char status[96];
            int se = atomic_load(&c->sh->send_errno);
            if (se)
                snprintf(status, sizeof status, "FAILED:send_errno_%d", se);
            else if (!atomic_load(&c->sh->ready))
                snprintf(status, sizeof status, "FAILED:no_connection");
            else
                snprintf(status, sizeof status, "FAILED:stalled");
            print_result(c, status, atomic_load(&c->sh->received), 0, 0, 0, 0);
            fprintf(stderr,
                    "zlink_bench_%s: no progress for %ld ms, giving up\n",
                    LIB_NAME, c->cfg->stall_ms);
            _exit(1);
        }
    }
}

/* ---- sockets ------------------------------------------------------------- */

static void append_option(struct cell *c, const char *fmt, ...)
{
    size_t used = strlen(c->options);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->options + used, sizeof c->options - used, fmt, ap);
    va_end(ap);
}

static void set_int(void *socket, int option, int value)
{
    if (zmq_setsockopt(socket, option, &value, sizeof value) != 0)
        die("zmq_setsockopt(%d): %s", option, zmq_strerror(zmq_errno()));
}

static void set_bytes(void *socket, int option, const char *value)
{
    if (zmq_setsockopt(socket, option, value, strlen(value)) != 0)
        die("zmq_setsockopt(%d): %s", option, zmq_strerror(zmq_errno()));
}

/* Creates a socket, or reports the cell UNSUPPORTED when this library does
 * not have the socket type yet. */
static void *open_socket(struct cell *c, int type, int hwm)
{
    void *s = zmq_socket(c->ctx, type);
    if (!s) {
        char status[64];
        snprintf(status, sizeof status, "UNSUPPORTED:socket_type_%d", type);
        print_result(c, status, 0, 0, 0, 0, 0);
        fprintf(stderr, "zlink_bench_%s: zmq_socket(%d): %s\n", LIB_NAME, type,
                zmq_strerror(zmq_errno()));
        exit(0);
    }
    set_int(s, ZMQ_LINGER, 0);
    set_int(s, ZMQ_SNDHWM, hwm);
    set_int(s, ZMQ_RCVHWM, hwm);
    return s;
}

/* ---- encryption: TLS (zlink), CURVE (both) ---- */

/* A transport this build does not have: reported as such, not failed. */
static void unsupported_transport(const struct config *cfg)
{
    printf("%s,%s,%s,%s,%zu,0,0,UNSUPPORTED:transport,,,,,,,\n", LIB_NAME,
           cfg->handshakes > 0 ? "handshakes" : kind_name(cfg),
           cfg->pattern < PAT_COUNT ? pattern_names[cfg->pattern] : "-",
           transport_names[cfg->transport], cfg->size);
    exit(0);
}

#if defined(BENCH_ZLINK) && defined(ZLINK_TLS_CERT)
static void set_tls_file(void *s, int option, const char *name)
{
    const char *dir = getenv("ZLINK_BENCH_TLS_CERTS");
    if (!dir)
        die("tls needs ZLINK_BENCH_TLS_CERTS (tests/tls/make_certs.sh DIR)");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    set_bytes(s, option, path);
}
#endif

static char curve_server_public[41], curve_server_secret[41];
static char curve_client_public[41], curve_client_secret[41];

/* Made once, before a cross-process cell forks, so that both sides have
 * them; a build without CURVE fails to make them. */
static void ensure_curve_keys(const struct config *cfg)
{
    if (!curve_server_public[0] &&
        (zmq_curve_keypair(curve_server_public, curve_server_secret) != 0 ||
         zmq_curve_keypair(curve_client_public, curve_client_secret) != 0))
        unsupported_transport(cfg);
}

/* The bound side is the server (TLS certificate, CURVE server key); the
 * connecting side verifies it. Across processes each has one of the two
 * (the other is NULL). */
static void secure_sockets(const struct config *cfg, void *binder,
                           void *connecter)
{
    if (cfg->transport == TR_TLS || cfg->transport == TR_WSS) {
#if defined(BENCH_ZLINK) && defined(ZLINK_TLS_CERT)
        set_tls_file(binder, ZLINK_TLS_CERT, "server-chain.pem");
        set_tls_file(binder, ZLINK_TLS_KEY, "server.key");
        set_tls_file(connecter, ZLINK_TLS_CA, "root.pem");
        set_bytes(connecter, ZLINK_TLS_HOSTNAME, "localhost");
#else
        (void)binder;
        (void)connecter;
        unsupported_transport(cfg);
#endif
    } else if (cfg->transport == TR_CURVE) {
        ensure_curve_keys(cfg);
        if (binder) {
            set_int(binder, ZMQ_CURVE_SERVER, 1);
            set_bytes(binder, ZMQ_CURVE_SECRETKEY, curve_server_secret);
        }
        if (connecter) {
            set_bytes(connecter, ZMQ_CURVE_SERVERKEY, curve_server_public);
            set_bytes(connecter, ZMQ_CURVE_PUBLICKEY, curve_client_public);
            set_bytes(connecter, ZMQ_CURVE_SECRETKEY, curve_client_secret);
        }
    }
}

static bool tcp_like(enum transport t)
{
    return t == TR_TCP || t == TR_TLS || t == TR_CURVE || t == TR_WS ||
           t == TR_WSS;
}

static void make_endpoint(struct cell *c)
{
    static int seq;
    switch (c->cfg->transport) {
    case TR_TCP:
    case TR_CURVE:
        snprintf(c->endpoint, sizeof c->endpoint, "tcp://127.0.0.1:*");
        break;
    case TR_TLS:
        snprintf(c->endpoint, sizeof c->endpoint, "tls://127.0.0.1:*");
        break;
    case TR_IPC:
        snprintf(c->endpoint, sizeof c->endpoint,
                 "ipc:///tmp/zlink_bench_%ld_%d.ipc", (long)getpid(), seq++);
        break;
    case TR_WS:
        snprintf(c->endpoint, sizeof c->endpoint, "ws://127.0.0.1:*/bench");
        break;
    case TR_WSS:
        snprintf(c->endpoint, sizeof c->endpoint, "wss://127.0.0.1:*/bench");
        break;
    default:
        snprintf(c->endpoint, sizeof c->endpoint, "inproc://bench_%d", seq++);
        break;
    }
}

/* Across processes: the side that holds the bound socket binds and
 * publishes the endpoint in the shared mapping; the other side waits for
 * it and connects. */
static void cross_process_wire(struct cell *c, void *binder, void *connecter)
{
    const struct config *cfg = c->cfg;
    if (binder) {
        make_endpoint(c);
        if (zmq_bind(binder, c->endpoint) != 0)
            die("zmq_bind(%s): %s", c->endpoint, zmq_strerror(zmq_errno()));
        size_t len = sizeof c->endpoint;
        if (tcp_like(cfg->transport) &&
            zmq_getsockopt(binder, ZMQ_LAST_ENDPOINT, c->endpoint, &len) != 0)
            die("zmq_getsockopt(LAST_ENDPOINT): %s", zmq_strerror(zmq_errno()));
        memcpy(c->sh->endpoint, c->endpoint, sizeof c->endpoint);
        atomic_store(&c->sh->bound, 1);
        return;
    }
    double until = now_s() + 10;
    while (!atomic_load(&c->sh->bound)) {
        if (now_s() > until)
            die("the other process never bound");
        sleep_ms(1);
    }
    memcpy(c->endpoint, c->sh->endpoint, sizeof c->endpoint);
    if (zmq_connect(connecter, c->endpoint) != 0)
        die("zmq_connect(%s): %s", c->endpoint, zmq_strerror(zmq_errno()));
}

/* Opens and wires the cell's two sockets. The bound side binds first; a tcp
 * wildcard port is replaced by the one the system chose. */
static void setup_cell(struct cell *c)
{
    const struct config *cfg = c->cfg;
    int sender_type, receiver_type;
    switch (cfg->pattern) {
    case PAT_PAIR:
        sender_type = receiver_type = ZMQ_PAIR;
        break;
    case PAT_PUBSUB:
        sender_type = ZMQ_PUB;
        receiver_type = ZMQ_SUB;
        break;
    case PAT_DEALER_DEALER:
        sender_type = receiver_type = ZMQ_DEALER;
        break;
    case PAT_DEALER_ROUTER:
        sender_type = ZMQ_DEALER;
        receiver_type = ZMQ_ROUTER;
        break;
    case PAT_REQ_REP:
    case PAT_REQ_REP_POLL:
        sender_type = ZMQ_REQ;
        receiver_type = ZMQ_REP;
        break;
    default:
        sender_type = receiver_type = ZMQ_ROUTER;
        break;
    }
    c->sender_is_router = sender_type == ZMQ_ROUTER;
    c->receiver_is_router = receiver_type == ZMQ_ROUTER;
    c->poll_before_recv = cfg->pattern == PAT_ROUTER_ROUTER_POLL ||
                          cfg->pattern == PAT_REQ_REP_POLL;
    int hwm = cfg->pattern == PAT_PUBSUB ? PUBSUB_HWM : DEFAULT_HWM;

    c->ctx = zmq_ctx_new();
    if (!c->ctx)
        die("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
    if (zmq_ctx_set(c->ctx, ZMQ_IO_THREADS, cfg->io_threads) != 0)
        die("zmq_ctx_set(IO_THREADS): %s", zmq_strerror(zmq_errno()));
    snprintf(c->options, sizeof c->options,
             "io_threads=%d;sndhwm=%d;rcvhwm=%d;linger=0", cfg->io_threads, hwm,
             hwm);

    if (cfg->cross_process)
        append_option(c, ";cross_process");
    /* Across processes the measuring side holds the receiver, except in a
     * latency run, where it holds the client (the sender). */
    bool measure_sends = cfg->latency;
    bool open_sender =
        c->side == SIDE_BOTH || (c->side == SIDE_MEASURING) == measure_sends;
    bool open_receiver = c->side == SIDE_BOTH || !open_sender;
    c->sender = open_sender ? open_socket(c, sender_type, hwm) : NULL;
    c->receiver = open_receiver ? open_socket(c, receiver_type, hwm) : NULL;
    if (c->sender_is_router && c->sender) {
        set_bytes(c->sender, ZMQ_ROUTING_ID, SENDER_ID);
        /* Without it a ROUTER drops at HWM instead of blocking. */
        set_int(c->sender, ZMQ_ROUTER_MANDATORY, 1);
    }
    if (c->sender_is_router)
        append_option(c, ";sender_router_mandatory=1;sender_routing_id=%s",
                      SENDER_ID);
    if (c->receiver_is_router && c->receiver)
        set_bytes(c->receiver, ZMQ_ROUTING_ID, RECEIVER_ID);
    if (c->receiver_is_router) {
        append_option(c, ";receiver_routing_id=%s", RECEIVER_ID);
        if (cfg->latency && !c->sender_is_router) {
            /* The echoing ROUTER must not drop replies silently either. */
            if (c->receiver)
                set_int(c->receiver, ZMQ_ROUTER_MANDATORY, 1);
            append_option(c, ";receiver_router_mandatory=1");
        }
    }
    if (receiver_type == ZMQ_SUB) {
        if (c->receiver)
            set_bytes(c->receiver, ZMQ_SUBSCRIBE, "");
        append_option(c, ";subscribe=all");
    }
    if (c->poll_before_recv)
        append_option(c, ";zmq_poll_before_each_recv");

    /* The publisher binds; otherwise the receiving (or echoing) side
     * does. */
    bool sender_binds = receiver_type == ZMQ_SUB;
    void *binder = sender_binds ? c->sender : c->receiver;
    void *connecter = sender_binds ? c->receiver : c->sender;
    if (c->side != SIDE_BOTH) {
        /* tls and wss are refused before the fork (fork_other_side). */
        secure_sockets(cfg, binder, connecter);
        cross_process_wire(c, binder, connecter);
        return;
    }
    secure_sockets(cfg, binder, connecter);
    make_endpoint(c);
    if (zmq_bind(binder, c->endpoint) != 0)
        die("zmq_bind(%s): %s", c->endpoint, zmq_strerror(zmq_errno()));
    if (tcp_like(cfg->transport)) {
        size_t len = sizeof c->endpoint;
        if (zmq_getsockopt(binder, ZMQ_LAST_ENDPOINT, c->endpoint, &len) != 0)
            die("zmq_getsockopt(LAST_ENDPOINT): %s", zmq_strerror(zmq_errno()));
    }
    if (zmq_connect(connecter, c->endpoint) != 0)
        die("zmq_connect(%s): %s", c->endpoint, zmq_strerror(zmq_errno()));
}

static void teardown_cell(struct cell *c)
{
    atomic_store(&c->sh->phase, 1);
    if (c->sender)
        zmq_close(c->sender);
    if (c->receiver)
        zmq_close(c->receiver);
    zmq_ctx_term(c->ctx);
    if (c->other > 0) {
        int wstatus;
        waitpid(c->other, &wstatus, 0);
    }
    if (c->cfg->transport == TR_IPC && c->side != SIDE_OTHER)
        unlink(c->endpoint + strlen("ipc://"));
    atomic_store(&c->sh->phase, 2);
}

/* ---- messages ------------------------------------------------------------ */

/* Sends one message: the receiver's routing id first when the sender is a
 * ROUTER, then a body of the cell's size that starts with the marker and
 * the sequence number. Every byte of the body is written, as an application
 * would: an untouched fresh allocation maps the kernel's shared zero page,
 * and tcp/ipc would then copy one cached page instead of the body. Returns
 * 0, or -1 with zmq_errno() set. */
static int send_message(struct cell *c, void *s, char mark, uint32_t seq,
                        int flags)
{
    if (c->sender_is_router && s == c->sender &&
        zmq_send(s, RECEIVER_ID, 1, flags | ZMQ_SNDMORE) != 1)
        return -1;
    zmq_msg_t msg;
    if (zmq_msg_init_size(&msg, c->cfg->size) != 0)
        return -1;
    unsigned char *p = zmq_msg_data(&msg);
    memset(p, 0x5a, c->cfg->size);
    p[0] = (unsigned char)mark;
    memcpy(p + 1, &seq, sizeof seq);
    if (mark == MARK_DATA && c->cfg->burst > 0) {
        /* A burst run's probe: its one-way delay starts here. */
        double sent = now_s();
        memcpy(p + BURST_STAMP_AT, &sent, sizeof sent);
    }
    if (zmq_msg_send(&msg, s, flags) < 0) {
        int e = zmq_errno();
        zmq_msg_close(&msg);
        errno = e;
        return -1;
    }
    return 0;
}

/* Receives one whole message into body (an initialised zmq_msg_t). When
 * the socket is a ROUTER the routing id arrives first, into id. Returns 0,
 * or -1 on an error or a malformed message. */
static int recv_message(struct cell *c, void *s, zmq_msg_t *id, zmq_msg_t *body)
{
    if (c->poll_before_recv) {
        zmq_pollitem_t item = {s, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, -1) != 1)
            return -1;
    }
    bool router =
        s == c->receiver ? c->receiver_is_router : c->sender_is_router;
    if (router) {
        if (zmq_msg_recv(id, s, 0) < 0 || !zmq_msg_more(id))
            return -1;
    }
    if (zmq_msg_recv(body, s, 0) < 0)
        return -1;
    if (zmq_msg_more(body) || zmq_msg_size(body) != c->cfg->size)
        return -1;
    return 0;
}

static char body_mark(zmq_msg_t *body)
{
    return (char)((unsigned char *)zmq_msg_data(body))[0];
}

static uint32_t body_seq(zmq_msg_t *body)
{
    uint32_t seq;
    memcpy(&seq, (unsigned char *)zmq_msg_data(body) + 1, sizeof seq);
    return seq;
}

/* ---- throughput ---------------------------------------------------------- */

static void note_send_error(struct cell *c)
{
    int expected = 0;
    int e = zmq_errno();
    atomic_compare_exchange_strong(&c->sh->send_errno, &expected, e ? e : -1);
}

/* Sends warm-up messages until the receiver has one: a publisher drops
 * them until the subscription arrives. False when a send failed. */
static bool wait_until_received(struct cell *c)
{
    while (!atomic_load(&c->sh->ready)) {
        if (send_message(c, c->sender, MARK_WARMUP, 0, ZMQ_DONTWAIT) != 0 &&
            zmq_errno() != EAGAIN && zmq_errno() != EHOSTUNREACH) {
            note_send_error(c);
            return false;
        }
        sleep_ms(1);
    }
    return true;
}

/* The sending thread: warm-up messages until the receiver has one, more
 * warm-up, then the timed messages. */
static void *throughput_sender(void *arg)
{
    struct cell *c = arg;
    if (!wait_until_received(c))
        return NULL;
    for (long i = 0; i < c->cfg->warmup; i++)
        if (send_message(c, c->sender, MARK_WARMUP, 0, 0) != 0) {
            note_send_error(c);
            return NULL;
        }
    for (long i = 0; i < c->cfg->count; i++)
        if (send_message(c, c->sender, MARK_DATA, (uint32_t)i, 0) != 0) {
            note_send_error(c);
            return NULL;
        }
    return NULL;
}

/* Starts the cell's other side, fn, in a thread; across processes it
 * runs already, in the other process. */
static void start_peer(struct cell *c, void *(*fn)(void *), pthread_t *thread)
{
    if (c->side == SIDE_BOTH && pthread_create(thread, NULL, fn, c) != 0)
        die("pthread_create failed");
}

static void join_peer(struct cell *c, pthread_t thread)
{
    if (c->side == SIDE_BOTH)
        pthread_join(thread, NULL);
}

/* Ends the receiving side of a run whose sender is a thread: a receive or
 * a send that failed ends the process with its status printed; otherwise
 * the sender is joined. */
static void join_sender(struct cell *c, pthread_t sender, const char *status,
                        long received)
{
    if (strcmp(status, "OK") != 0) {
        print_result(c, status, received, 0, 0, 0, 0);
        _exit(1);
    }
    join_peer(c, sender);
    if (atomic_load(&c->sh->send_errno)) {
        print_result(c, "FAILED:send", received, 0, 0, 0, 0);
        _exit(1);
    }
}

static int run_throughput(struct cell *c)
{
    const struct config *cfg = c->cfg;
    pthread_t sender;
    start_peer(c, throughput_sender, &sender);

    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    const char *status = "OK";
    long received = 0, seen = 0;
    double first = 0, last = 0;
    while (received < cfg->count) {
        if (recv_message(c, c->receiver, &id, &body) != 0) {
            status = "FAILED:recv";
            break;
        }
        atomic_store_explicit(&c->sh->progress, ++seen, memory_order_relaxed);
        char mark = body_mark(&body);
        if (mark == MARK_WARMUP) {
            if (!atomic_load_explicit(&c->sh->ready, memory_order_relaxed))
                atomic_store(&c->sh->ready, 1);
            continue;
        }
        if (mark != MARK_DATA || body_seq(&body) != (uint32_t)received) {
            /* Lost, reordered or foreign: the count would be a lie. */
            status = "FAILED:sequence";
            break;
        }
        if (received == 0) {
            first = now_s();
            if (syscount_mark)
                syscount_mark(0);
        }
        received++;
        atomic_store_explicit(&c->sh->received, received, memory_order_relaxed);
    }
    if (received == cfg->count) {
        last = now_s();
        if (syscount_mark)
            syscount_mark(1);
    }
    zmq_msg_close(&id);
    zmq_msg_close(&body);
    join_sender(c, sender, status, received);
    print_result(c, "OK", received, last - first, 0, 0, 0);
    print_syscounts(c);
    return 0;
}

/* ---- latency ------------------------------------------------------------- */

/* The echoing side: every message goes straight back where it came from. */
static void *latency_echo(void *arg)
{
    struct cell *c = arg;
    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    long total = c->cfg->warmup + c->cfg->count;
    for (long i = 0; i < total; i++) {
        if (recv_message(c, c->receiver, &id, &body) != 0)
            break;
        if (c->receiver_is_router &&
            zmq_msg_send(&id, c->receiver, ZMQ_SNDMORE) < 0)
            break;
        if (zmq_msg_send(&body, c->receiver, 0) < 0)
            break;
    }
    zmq_msg_close(&id);
    zmq_msg_close(&body);
    return NULL;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Starts the cell's other side, fn, in a thread, and returns room for the
 * run's samples. */
static double *start_other_side(struct cell *c, void *(*fn)(void *),
                                pthread_t *thread)
{
    start_peer(c, fn, thread);
    double *samples = malloc((size_t)c->cfg->count * sizeof *samples);
    if (!samples)
        die("out of memory");
    return samples;
}

/* Prints an OK result with the p50, p99 and mean of n samples in seconds
 * (sorted in place), each times scale. */
static void print_latencies(struct cell *c, double *samples, long n,
                            double scale, double elapsed)
{
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += samples[i];
    qsort(samples, (size_t)n, sizeof *samples, compare_double);
    double p50 = samples[(n - 1) / 2] * scale;
    double p99 = samples[(long)((double)(n - 1) * 0.99)] * scale;
    print_result(c, "OK", n, elapsed, p50, p99, sum / (double)n * scale);
}

static int run_latency(struct cell *c)
{
    const struct config *cfg = c->cfg;
    pthread_t echo;
    double *rtt = start_other_side(c, latency_echo, &echo);

    /* A ROUTER client must wait for the echo side's routing id to be
     * known before its first request can go out. */
    if (c->sender_is_router) {
        while (send_message(c, c->sender, MARK_WARMUP, 0, ZMQ_DONTWAIT) != 0) {
            if (zmq_errno() != EHOSTUNREACH && zmq_errno() != EAGAIN)
                die("send: %s", zmq_strerror(zmq_errno()));
            sleep_ms(1);
        }
    } else if (send_message(c, c->sender, MARK_WARMUP, 0, 0) != 0) {
        die("send: %s", zmq_strerror(zmq_errno()));
    }
    atomic_store(&c->sh->ready, 1);

    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    const char *status = "OK";
    long done = 0;
    double started = 0;
    /* The first request is already out; it is warm-up round trip 0. */
    for (long i = 0; i < cfg->warmup + cfg->count; i++) {
        double t0 = now_s();
        if (i > 0) {
            char mark = i < cfg->warmup ? MARK_WARMUP : MARK_DATA;
            if (send_message(c, c->sender, mark, (uint32_t)i, 0) != 0) {
                status = "FAILED:send";
                break;
            }
        }
        if (recv_message(c, c->sender, &id, &body) != 0) {
            status = "FAILED:recv";
            break;
        }
        double t1 = now_s();
        if (i > 0 && body_seq(&body) != (uint32_t)i) {
            status = "FAILED:sequence";
            break;
        }
        atomic_store_explicit(&c->sh->progress, i + 1, memory_order_relaxed);
        if (i == cfg->warmup) {
            started = t0;
            if (syscount_mark)
                syscount_mark(0);
        }
        if (i >= cfg->warmup) {
            rtt[done++] = t1 - t0;
            atomic_store_explicit(&c->sh->received, done, memory_order_relaxed);
        }
    }
    double finished = now_s();
    if (syscount_mark && done == cfg->count)
        syscount_mark(1);
    zmq_msg_close(&id);
    zmq_msg_close(&body);
    if (strcmp(status, "OK") != 0 || done != cfg->count) {
        print_result(c, status, done, 0, 0, 0, 0);
        _exit(1);
    }
    join_peer(c, echo);

    /* One-way = round trip / 2, in microseconds. */
    print_latencies(c, rtt, done, 1e6 / 2, finished - started);
    free(rtt);
    print_syscounts(c);
    return 0;
}

/* ---- latency after a burst ---------------------------------------------- */

/* Waits without sleeping: a sleep would take far longer than the pause. */
static void pause_busy(long us)
{
    double until = now_s() + (double)us / 1e6;
    while (now_s() < until)
        ;
}

/* The sending thread of a burst run: per round, a burst of messages, a
 * pause, then the probe, which carries its send time; the next round
 * starts once the probe has arrived, so no queue builds up from round to
 * round. The probe's one-way delay shows how soon a receiver sees a
 * message that ends a quiet moment in a stream, where a receiver that
 * batches its looks at the pipe pays. */
static void *burst_sender(void *arg)
{
    struct cell *c = arg;
    const struct config *cfg = c->cfg;
    if (!wait_until_received(c))
        return NULL;
    for (long r = 0; r < cfg->warmup + cfg->count; r++) {
        for (long i = 0; i < cfg->burst; i++)
            if (send_message(c, c->sender, MARK_WARMUP, 0, 0) != 0) {
                note_send_error(c);
                return NULL;
            }
        pause_busy(cfg->pause_us);
        if (send_message(c, c->sender, MARK_DATA, (uint32_t)r, 0) != 0) {
            note_send_error(c);
            return NULL;
        }
        while (atomic_load(&c->sh->probes) <= r &&
               atomic_load(&c->sh->phase) == 0)
            sched_yield();
    }
    return NULL;
}

static int run_burst_latency(struct cell *c)
{
    const struct config *cfg = c->cfg;
    pthread_t sender;
    double *delay = start_other_side(c, burst_sender, &sender);
    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    const char *status = "OK";
    long done = 0, seen = 0;
    double started = 0;
    while (done < cfg->count) {
        if (recv_message(c, c->receiver, &id, &body) != 0) {
            status = "FAILED:recv";
            break;
        }
        double arrived = now_s();
        atomic_store_explicit(&c->sh->progress, ++seen, memory_order_relaxed);
        if (body_mark(&body) == MARK_WARMUP) {
            if (!atomic_load_explicit(&c->sh->ready, memory_order_relaxed))
                atomic_store(&c->sh->ready, 1);
            continue;
        }
        uint32_t round = body_seq(&body);
        atomic_fetch_add(&c->sh->probes, 1);
        if (round < (uint32_t)cfg->warmup)
            continue;
        if (round != (uint32_t)(cfg->warmup + done)) {
            status = "FAILED:sequence";
            break;
        }
        double sent;
        memcpy(&sent, (unsigned char *)zmq_msg_data(&body) + BURST_STAMP_AT,
               sizeof sent);
        if (done == 0)
            started = sent;
        delay[done++] = arrived - sent;
        atomic_store_explicit(&c->sh->received, done, memory_order_relaxed);
    }
    double finished = now_s();
    zmq_msg_close(&id);
    zmq_msg_close(&body);
    join_sender(c, sender, status, done);
    print_latencies(c, delay, done, 1e6, finished - started);
    free(delay);
    return 0;
}

/* ---- idle memory --------------------------------------------------------- */

/* VmRSS of this process in KiB, or -1. */
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

/* Raises RLIMIT_NOFILE to at least want (root may raise the hard limit
 * too). Returns the limit in force. */
static long raise_nofile(long want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 1024;
    if ((long)rl.rlim_cur >= want)
        return (long)rl.rlim_cur;
    struct rlimit next = rl;
    next.rlim_cur = (rlim_t)want;
    if ((long)next.rlim_max < want)
        next.rlim_max = (rlim_t)want;
    if (setrlimit(RLIMIT_NOFILE, &next) == 0)
        return want;
    next = rl;
    next.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &next) == 0)
        return (long)rl.rlim_max;
    return (long)rl.rlim_cur;
}

static void write_all(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            die("pipe write failed");
        s += w;
        n -= (size_t)w;
    }
}

/* Reads one newline-terminated line from a pipe. */
static bool read_line(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        if (buf[n] == '\n')
            break;
        n++;
    }
    buf[n] = '\0';
    return true;
}

static void *idle_ctx(long sockets)
{
    void *ctx = zmq_ctx_new();
    if (!ctx)
        die("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
    if (zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, (int)sockets + 16) != 0)
        die("zmq_ctx_set(MAX_SOCKETS): %s", zmq_strerror(zmq_errno()));
    return ctx;
}

/* Open file descriptors of this process. */
static long count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    long n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3; /* ".", ".." and the directory's own fd */
}

/* A client process: n DEALERs, each connects, says hello, and waits for
 * the server's answer, so that every connection has finished its
 * handshake and carried one message each way. */
static void idle_client(long n, int from_parent, int to_parent)
{
    char endpoint[256];
    if (!read_line(from_parent, endpoint, sizeof endpoint))
        _exit(2);
    void *ctx = idle_ctx(n);
    long before = vm_rss_kib();
    long fds_before = count_fds();
    void **dealers = calloc((size_t)n, sizeof *dealers);
    if (!dealers)
        die("out of memory");
    char buf[8];
    for (long i = 0; i < n; i++) {
        dealers[i] = zmq_socket(ctx, ZMQ_DEALER);
        if (!dealers[i])
            die("client: zmq_socket #%ld: %s", i, zmq_strerror(zmq_errno()));
        set_int(dealers[i], ZMQ_LINGER, 0);
        set_int(dealers[i], ZMQ_RCVTIMEO, 120000);
        if (zmq_connect(dealers[i], endpoint) != 0)
            die("client: zmq_connect #%ld: %s", i, zmq_strerror(zmq_errno()));
        if (zmq_send(dealers[i], "h", 1, 0) != 1)
            die("client: zmq_send #%ld: %s", i, zmq_strerror(zmq_errno()));
    }
    for (long i = 0; i < n; i++)
        if (zmq_recv(dealers[i], buf, sizeof buf, 0) != 1)
            die("client: no answer on dealer #%ld: %s", i,
                zmq_strerror(zmq_errno()));
    sleep_ms(300);
    long after = vm_rss_kib();
    char line[128];
    snprintf(line, sizeof line, "%ld %ld %ld\n", before, after,
             count_fds() - fds_before);
    write_all(to_parent, line);
    /* Hold every connection open until the server has measured too. */
    read_line(from_parent, line, sizeof line);
    for (long i = 0; i < n; i++)
        zmq_close(dealers[i]);
    zmq_ctx_term(ctx);
    _exit(0);
}

#define MAX_CLIENT_PROCS 64

/* Idle memory: one ROUTER process and the DEALERs in one or more client
 * processes (as many as RLIMIT_NOFILE requires), all over tcp loopback.
 * RSS is measured before the sockets exist and after every connection has
 * carried one message each way; the difference is divided by the number
 * of connections, separately for the server and the clients. */
static int run_idle_memory(struct config *cfg)
{
    long n = cfg->conns;
    /* Allow up to 3 fds per DEALER (socket, mailbox, spare). */
    long limit = raise_nofile(3 * n + 512);
    long per_proc = (limit - 512) / 3;
    if (per_proc < 1)
        die("RLIMIT_NOFILE %ld is too low", limit);
    const char *scaled = "";
    if (n + 512 > limit) {
        /* The ROUTER's process holds one fd per connection. */
        fprintf(stderr,
                "zlink_bench_%s: RLIMIT_NOFILE is %ld and cannot be raised: "
                "measuring %ld connections instead of %ld\n",
                LIB_NAME, limit, limit - 512, n);
        n = limit - 512;
        scaled = ";conns_scaled_down_by_RLIMIT_NOFILE";
    }
    int procs = (int)((n + per_proc - 1) / per_proc);
    if (procs > MAX_CLIENT_PROCS)
        die("too many client processes needed");
    int down[MAX_CLIENT_PROCS][2], up[MAX_CLIENT_PROCS][2];
    pid_t pids[MAX_CLIENT_PROCS];
    long shares[MAX_CLIENT_PROCS];
    /* Fork before this process has a context or threads. */
    for (int k = 0; k < procs; k++) {
        shares[k] = n / procs + (k < n % procs ? 1 : 0);
        if (pipe(down[k]) != 0 || pipe(up[k]) != 0)
            die("pipe failed");
        pids[k] = fork();
        if (pids[k] < 0)
            die("fork failed");
        if (pids[k] == 0) {
            for (int j = 0; j < k; j++) {
                close(down[j][1]);
                close(up[j][0]);
            }
            close(down[k][1]);
            close(up[k][0]);
            idle_client(shares[k], down[k][0], up[k][1]);
        }
        close(down[k][0]);
        close(up[k][1]);
    }

    void *ctx = idle_ctx(1);
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    if (!router)
        die("zmq_socket(ROUTER): %s", zmq_strerror(zmq_errno()));
    set_int(router, ZMQ_LINGER, 0);
    set_int(router, ZMQ_RCVTIMEO, 120000);
    set_int(router, ZMQ_BACKLOG, 4096);
    if (zmq_bind(router, "tcp://127.0.0.1:*") != 0)
        die("zmq_bind: %s", zmq_strerror(zmq_errno()));
    char endpoint[256];
    size_t len = sizeof endpoint;
    if (zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, endpoint, &len) != 0)
        die("zmq_getsockopt(LAST_ENDPOINT): %s", zmq_strerror(zmq_errno()));
    long before = vm_rss_kib();
    long fds_before = count_fds();
    char line[300];
    snprintf(line, sizeof line, "%s\n", endpoint);
    for (int k = 0; k < procs; k++)
        write_all(down[k][1], line);

    double t0 = now_s();
    const char *status = "OK";
    long answered = 0;
    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    for (; answered < n; answered++) {
        if (zmq_msg_recv(&id, router, 0) < 0 ||
            zmq_msg_recv(&body, router, 0) < 0) {
            status = "FAILED:server_recv";
            break;
        }
        if (zmq_msg_send(&id, router, ZMQ_SNDMORE) < 0 ||
            zmq_send(router, "r", 1, 0) != 1) {
            status = "FAILED:server_send";
            break;
        }
    }
    zmq_msg_close(&id);
    zmq_msg_close(&body);
    long client_delta = 0, client_fds = 0;
    long client_before = 0, client_after = 0;
    for (int k = 0; k < procs && strcmp(status, "OK") == 0; k++) {
        long b, a, f;
        if (!read_line(up[k][0], line, sizeof line) ||
            sscanf(line, "%ld %ld %ld", &b, &a, &f) != 3) {
            status = "FAILED:client";
            break;
        }
        client_before += b;
        client_after += a;
        client_delta += a - b;
        client_fds += f;
    }
    double setup_s = now_s() - t0;
    sleep_ms(300);
    long after = vm_rss_kib();
    long server_fds = count_fds() - fds_before;
    for (int k = 0; k < procs; k++)
        write_all(down[k][1], "done\n");

    double server_per = (double)(after - before) / (double)n;
    double client_per = (double)client_delta / (double)n;
    if (cfg->csv) {
        printf("lib,kind,conns,status,server_kib_per_conn,"
               "client_kib_per_conn,server_fds_per_conn,"
               "client_fds_per_conn,server_rss_before_kib,"
               "server_rss_after_kib,client_rss_before_kib,"
               "client_rss_after_kib,client_procs,setup_s,options\n");
        printf("%s,idle,%ld,%s,%.2f,%.2f,%.2f,%.2f,%ld,%ld,%ld,%ld,%d,%.2f,"
               "tcp;one_message_each_way;linger=0;backlog=4096%s\n",
               LIB_NAME, n, status, server_per, client_per,
               (double)server_fds / (double)n, (double)client_fds / (double)n,
               before, after, client_before, client_after, procs, setup_s,
               scaled);
    } else {
        printf("%s %s idle memory, %ld DEALERs (%d client process%s) -> 1 "
               "ROUTER over tcp: %s\n"
               "  server %.2f KiB/conn (VmRSS %ld -> %ld KiB, %.2f fds/conn)"
               "\n  client %.2f KiB/conn (VmRSS sum %ld -> %ld KiB, %.2f "
               "fds/conn), setup %.2f s\n",
               LIB_NAME, lib_version(), n, procs, procs == 1 ? "" : "es",
               status, server_per, before, after,
               (double)server_fds / (double)n, client_per, client_before,
               client_after, (double)client_fds / (double)n, setup_s);
    }
    fflush(stdout);
    for (int k = 0; k < procs; k++) {
        int wstatus = 0;
        waitpid(pids[k], &wstatus, 0);
    }
    zmq_close(router);
    zmq_ctx_term(ctx);
    return strcmp(status, "OK") == 0 ? 0 : 1;
}

/* Connections per second: a ROUTER binds, and each of n DEALERs in turn
 * connects, completes its handshake (TLS or CURVE, then ZMTP), carries one
 * message to the ROUTER and closes. With --reconnect, one DEALER connects,
 * carries its message and disconnects n times: what a client that lost its
 * connection pays (TLS session resumption applies there). */
static int run_handshakes(const struct config *cfg)
{
    void *ctx = zmq_ctx_new();
    if (!ctx)
        die("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    set_int(router, ZMQ_LINGER, 0);
    set_int(router, ZMQ_RCVTIMEO, 10000);
    void *probe = zmq_socket(ctx, ZMQ_DEALER);
    secure_sockets(cfg, router, probe);
    zmq_close(probe);
    struct cell c = {.cfg = cfg};
    make_endpoint(&c);
    if (zmq_bind(router, c.endpoint) != 0)
        die("zmq_bind(%s): %s", c.endpoint, zmq_strerror(zmq_errno()));
    size_t len = sizeof c.endpoint;
    zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, c.endpoint, &len);
    double start = now_s();
    long done = 0;
    void *dealer = NULL;
    for (; done < cfg->handshakes; done++) {
        if (!dealer) {
            dealer = zmq_socket(ctx, ZMQ_DEALER);
            set_int(dealer, ZMQ_LINGER, 0);
            /* Only the server's key matters to the router's side of
             * CURVE, which any client key satisfies. */
            void *spare = zmq_socket(ctx, ZMQ_DEALER);
            secure_sockets(cfg, spare, dealer);
            zmq_close(spare);
        }
        if (zmq_connect(dealer, c.endpoint) != 0)
            die("zmq_connect: %s", zmq_strerror(zmq_errno()));
        zmq_send(dealer, "h", 1, 0);
        char id[256], body[8];
        if (zmq_recv(router, id, sizeof id, 0) < 0 ||
            zmq_recv(router, body, sizeof body, 0) != 1)
            break;
        if (cfg->reconnect) {
            zmq_disconnect(dealer, c.endpoint);
        } else {
            zmq_close(dealer);
            dealer = NULL;
        }
    }
    if (dealer)
        zmq_close(dealer);
    double elapsed = now_s() - start;
    const char *status = done == cfg->handshakes ? "OK" : "FAILED";
    printf("%s,%s,DEALER_ROUTER,%s,0,%ld,%ld,%s,%.3f,%.1f,,,,,\n", LIB_NAME,
           cfg->reconnect ? "reconnects" : "handshakes",
           transport_names[cfg->transport], cfg->handshakes, done, status,
           elapsed, done / elapsed);
    zmq_close(router);
    zmq_ctx_term(ctx);
    return done == cfg->handshakes ? 0 : 1;
}

/* The other side of a cross-process cell, in the child: it opens its own
 * context and socket, runs its part, and keeps its socket open until the
 * measuring side has finished (LINGER is 0). */
static void run_other_side(struct cell *c)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    setup_cell(c);
    const struct config *cfg = c->cfg;
    if (cfg->burst > 0)
        burst_sender(c);
    else if (cfg->latency)
        latency_echo(c);
    else
        throughput_sender(c);
    while (atomic_load(&c->sh->phase) == 0)
        sleep_ms(1);
    teardown_cell(c);
    _exit(0);
}

/* Forks the other side before this process has a context or threads; the
 * two share the cell's run state through an anonymous shared mapping. */
static void fork_other_side(struct cell *c)
{
    enum transport t = c->cfg->transport;
    if (t != TR_TCP && t != TR_IPC && t != TR_WS && t != TR_CURVE)
        unsupported_transport(c->cfg);
    if (t == TR_CURVE)
        ensure_curve_keys(c->cfg);
    void *m = mmap(NULL, sizeof *c->sh, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        die("mmap failed");
    c->sh = m;
    memset(c->sh, 0, sizeof *c->sh);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork failed");
    if (pid == 0) {
        c->side = SIDE_OTHER;
        run_other_side(c);
    }
    c->side = SIDE_MEASURING;
    c->other = pid;
}

int main(int argc, char **argv)
{
    struct config cfg;
    parse_args(argc, argv, &cfg);
    if (cfg.header && cfg.pattern == PAT_COUNT && !cfg.idle_memory) {
        print_header();
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    if (cfg.idle_memory)
        return run_idle_memory(&cfg);
    if (cfg.handshakes > 0)
        return run_handshakes(&cfg);
    if (cfg.header)
        print_header();

    static struct cell c;
    static struct cell_shared shared;
    c.cfg = &cfg;
    c.sh = &shared;
    if (cfg.cross_process)
        fork_other_side(&c);
    setup_cell(&c);
    pthread_t watchdog;
    if (pthread_create(&watchdog, NULL, watchdog_main, &c) != 0)
        die("pthread_create failed");
    int rc = cfg.burst > 0 ? run_burst_latency(&c)
             : cfg.latency ? run_latency(&c)
                           : run_throughput(&c);
    teardown_cell(&c);
    pthread_join(watchdog, NULL);
    return rc;
}
