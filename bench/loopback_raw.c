/* loopback_raw.c — plain write/read loops on one loopback connection, with
 * no messaging library: the reference beside which the large-message cells
 * of zlink_bench are read. Bodies of --size bytes go through one tcp
 * (127.0.0.1) or ipc (AF_UNIX stream socketpair) connection, unframed, and
 * are counted whole on the far side. It shows what the kernel's two copies
 * cost on this machine, and how that cost depends on where the bodies sit
 * in memory; it is not a bound (a library that batches or reads ahead can
 * beat these loops).
 *
 * The source bodies are filled once, before the clock starts, and sent in
 * turn from --depth of them. Depth 1 sends one body over and over, always
 * in cache. Depth 1000 is what a messaging library's queue holds at its
 * default high-water mark: each body is sent again only after 999 others,
 * from memory the caches have long dropped.
 *
 * Structures (--threads):
 *   1  one thread writes and reads both ends without blocking, as one I/O
 *      thread does for a connection whose two ends it both serves: both
 *      kernel copies on one core.
 *   2  a writer thread and a reader thread, each copying its own side and
 *      retrying at once on EAGAIN (they never sleep): the copies run on two
 *      cores, and the socket buffer's contents cross between them.
 *
 * --splice sends each body without the writer's copy: vmsplice maps its
 * pages into a pipe and splice hands them to the socket, so the reader's
 * copy is the only one. The loop may do so because it never writes a body
 * again; a library could not free or refill a body until its peer had read
 * it. It measures the writer's copy of a body that the writing core has
 * cached. (Inside zlink the sender fills each body on another core, and
 * the same send gained nothing there: README.)
 *
 * --filler fills each body just before it is sent, in a second thread, as
 * zlink_bench's sender fills each message on its own core before it sends
 * it: the filler runs up to --depth bodies ahead of the writer and then
 * waits for it to catch up by half (depth 32 of 256 KiB is the 8 MiB that
 * pacing lets a queue hold, and a paced sender is woken at half of it;
 * depth 1000 is about as deep as a PUB's queue grows in a bench run), and
 * the writer's copy then fetches each body from the filler's core. One I/O
 * thread only (--threads 1).
 *
 * --transport none makes no connection: the one thread only fills each
 * body in turn, as zlink_bench's sender fills every message before it
 * sends it. The inproc cells make no kernel copy, so this fill is what
 * bounds them; at depth 1000 it is also what the sender of a tcp or ipc
 * cell costs on its own.
 *
 * Prints one CSV line:
 * transport,size,depth,threads,count,seconds,msg_s,send,fill
 * (send: write, splice, or - for transport none; fill: before, when the
 * bodies were filled before the clock, or thread, under --filler). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* zlink's ipc SO_SNDBUF (connect_pair). */
#define IPC_SNDBUF (512 * 1024)

struct run {
    bool tcp;
    bool fill_only;      /* --transport none */
    bool splice;         /* --splice: vmsplice + splice instead of write */
    bool filler;         /* --filler: a second thread fills each body */
    atomic_long filled;  /* --filler: bodies filled, in order */
    atomic_long written; /* --filler: bodies the writer has finished */
    int pipe_fds[2];     /* --splice: [0] read end, [1] write end */
    size_t in_pipe;      /* --splice: bytes of the current body in the pipe */
    size_t size;
    long count;
    int depth;
    int threads;
    int writer_fd;
    int reader_fd;
    char **bodies;
    char *read_body;
};

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
        die("fcntl");
}

/* The congestion control zlink gives a loopback connection
 * (src/backend/epoll/loopback.c): cubic, or reno, where the system's
 * default may be bbr, whose pacing split this loop's tcp runs at 256 KiB
 * between about 28k and 13k msg/s. Set before connect() and listen(), as
 * zlink does. */
static void unpace(int fd)
{
    static const char *const names[] = {"cubic", "reno"};
    for (int i = 0; i < 2; i++)
        if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, names[i],
                       (socklen_t)strlen(names[i])) == 0)
            return;
}

/* A connected pair: [0] writes, [1] reads. */
static void connect_pair(bool tcp, int fds[2])
{
    if (!tcp) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
            die("socketpair");
        /* zlink's ipc send buffer (session.c, IPC_SNDBUF_DEFAULT), so that
         * the loop is read beside zlink on the same terms: AF_UNIX's own
         * 208 KiB carried 2-3% less at 256 KiB. */
        int sndbuf = IPC_SNDBUF;
        for (int i = 0; i < 2; i++)
            setsockopt(fds[i], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
        return;
    }
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    if (listener >= 0)
        unpace(listener);
    if (listener < 0 || bind(listener, (void *)&addr, sizeof addr) != 0 ||
        listen(listener, 1) != 0 ||
        getsockname(listener, (void *)&addr, &len) != 0)
        die("listen");
    fds[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (fds[0] >= 0)
        unpace(fds[0]);
    if (fds[0] < 0 || connect(fds[0], (void *)&addr, sizeof addr) != 0)
        die("connect");
    fds[1] = accept(listener, NULL, NULL);
    if (fds[1] < 0)
        die("accept");
    close(listener);
    /* As both libraries set it; it does not matter for whole bodies. */
    int one = 1;
    setsockopt(fds[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* The writer's step under --splice: the rest of the body from offset goes
 * into the pipe once the pipe is empty (it holds a whole body), and on from
 * the pipe into the socket as far as the socket takes it. in_pipe is then
 * the next bytes of the body, from offset on. */
static size_t splice_step(struct run *r, long body, size_t offset)
{
    if (r->in_pipe == 0) {
        struct iovec rest = {r->bodies[body % r->depth] + offset,
                             r->size - offset};
        ssize_t n = vmsplice(r->pipe_fds[1], &rest, 1, 0);
        if (n < 0 && errno != EAGAIN)
            die("vmsplice");
        r->in_pipe = n > 0 ? (size_t)n : 0;
    }
    ssize_t n = splice(r->pipe_fds[0], NULL, r->writer_fd, NULL, r->in_pipe,
                       SPLICE_F_NONBLOCK);
    if (n < 0 && errno != EAGAIN)
        die("splice");
    if (n <= 0)
        return 0;
    r->in_pipe -= (size_t)n;
    return (size_t)n;
}

/* One non-blocking step of each side. Returns the bytes moved, 0 on
 * EAGAIN; any other failure ends the program. */
static size_t write_step(struct run *r, long body, size_t *offset)
{
    if (r->splice)
        return splice_step(r, body, *offset);
    ssize_t n = write(r->writer_fd, r->bodies[body % r->depth] + *offset,
                      r->size - *offset);
    if (n < 0 && errno != EAGAIN)
        die("write");
    return n > 0 ? (size_t)n : 0;
}

static size_t read_step(struct run *r, size_t *offset)
{
    ssize_t n = read(r->reader_fd, r->read_body + *offset, r->size - *offset);
    if (n == 0) {
        fprintf(stderr, "loopback_raw: unexpected end of stream\n");
        exit(1);
    }
    if (n < 0 && errno != EAGAIN)
        die("read");
    return n > 0 ? (size_t)n : 0;
}

/* Advances a body count by the bytes just moved. */
static void advance(struct run *r, size_t moved, size_t *offset, long *bodies)
{
    *offset += moved;
    if (*offset == r->size) {
        *offset = 0;
        (*bodies)++;
    }
}

/* Under --filler, whether body n has been filled. */
static bool body_ready(struct run *r, long n)
{
    return !r->filler ||
           atomic_load_explicit(&r->filled, memory_order_acquire) > n;
}

static void one_thread(struct run *r)
{
    long sent = 0, received = 0;
    size_t sent_offset = 0, received_offset = 0;
    while (received < r->count) {
        if (sent < r->count && body_ready(r, sent)) {
            advance(r, write_step(r, sent, &sent_offset), &sent_offset, &sent);
            /* write() has copied it: the filler may reuse its slot. */
            atomic_store_explicit(&r->written, sent, memory_order_release);
        }
        advance(r, read_step(r, &received_offset), &received_offset, &received);
    }
}

/* Spins until the writer has finished at least n bodies. */
static void wait_written(struct run *r, long n)
{
    while (atomic_load_explicit(&r->written, memory_order_acquire) < n)
        ;
}

/* --filler's thread: fills body i, each time with another byte, and
 * publishes it. Body i takes the slot of body i - depth, so it waits for
 * that one to be written; and once it has had to wait, it lets the writer
 * catch up to half the depth first, as a paced zlink sender is woken at
 * half its budget (a filler that refilled each slot as it came free ran
 * 10% slower at depth 32 of 256 KiB over ipc). It spins while it waits,
 * as the writer does, each on its own core. */
static void *filler_thread(void *arg)
{
    struct run *r = arg;
    for (long i = 0; i < r->count; i++) {
        long slot_free_at = i - r->depth + 1;
        if (atomic_load_explicit(&r->written, memory_order_acquire) <
            slot_free_at)
            wait_written(r, i - r->depth / 2);
        wait_written(r, slot_free_at);
        memset(r->bodies[i % r->depth], (int)(i & 0x7f), r->size);
        atomic_store_explicit(&r->filled, i + 1, memory_order_release);
    }
    return NULL;
}

/* Where fill_only leaves a byte of each body, so that no fill can be
 * dropped as unused. */
static volatile unsigned char fill_sink;

/* Fills the bodies in turn, each time with another byte. */
static void fill_only(struct run *r)
{
    for (long i = 0; i < r->count; i++) {
        char *body = r->bodies[i % r->depth];
        memset(body, (int)(i & 0x7f), r->size);
        fill_sink = (unsigned char)body[i % (long)r->size];
    }
}

static void *writer_thread(void *arg)
{
    struct run *r = arg;
    long sent = 0;
    size_t offset = 0;
    while (sent < r->count)
        advance(r, write_step(r, sent, &offset), &offset, &sent);
    return NULL;
}

static void two_threads(struct run *r)
{
    pthread_t writer;
    if (pthread_create(&writer, NULL, writer_thread, r) != 0)
        die("pthread_create");
    long received = 0;
    size_t offset = 0;
    while (received < r->count)
        advance(r, read_step(r, &offset), &offset, &received);
    pthread_join(writer, NULL);
}

static int usage(void)
{
    fprintf(stderr, "usage: loopback_raw [--transport tcp|ipc|none] [--size N] "
                    "[--count N] [--depth N] [--threads 1|2] [--splice | "
                    "--filler]\n"
                    "--filler needs --threads 1 and a connection\n");
    return 2;
}

static long parse(const char *name, const char *value, long min, long max)
{
    char *end;
    long v = strtol(value, &end, 10);
    if (*value == '\0' || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "loopback_raw: %s must be within %ld..%ld\n", name, min,
                max);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    struct run r = {.size = 262144, .count = 10000, .depth = 1, .threads = 1};
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(argv[i], "--transport") == 0) {
            if (strcmp(value, "tcp") != 0 && strcmp(value, "ipc") != 0 &&
                strcmp(value, "none") != 0) {
                fprintf(stderr, "loopback_raw: --transport tcp|ipc|none\n");
                return 2;
            }
            r.tcp = strcmp(value, "tcp") == 0;
            r.fill_only = strcmp(value, "none") == 0;
        } else if (strcmp(argv[i], "--size") == 0)
            r.size = (size_t)parse("--size", value, 1, 64L << 20);
        else if (strcmp(argv[i], "--count") == 0)
            r.count = parse("--count", value, 1, 10000000);
        else if (strcmp(argv[i], "--depth") == 0)
            r.depth = (int)parse("--depth", value, 1, 100000);
        else if (strcmp(argv[i], "--threads") == 0)
            r.threads = (int)parse("--threads", value, 1, 2);
        else if (strcmp(argv[i], "--splice") == 0) {
            r.splice = true;
            continue; /* takes no value */
        } else if (strcmp(argv[i], "--filler") == 0) {
            r.filler = true;
            continue;
        } else {
            return usage();
        }
        i++;
    }
    /* A filler refills a body once write() has copied it, which a spliced
     * body's pages would not survive; and it feeds one I/O thread. */
    if (r.filler && (r.splice || r.threads != 1 || r.fill_only))
        return usage();

    r.bodies = malloc((size_t)r.depth * sizeof *r.bodies);
    r.read_body = malloc(r.size);
    if (!r.bodies || !r.read_body)
        die("malloc");
    for (int i = 0; i < r.depth; i++) {
        r.bodies[i] = malloc(r.size);
        if (!r.bodies[i])
            die("malloc");
        memset(r.bodies[i], 'a' + i % 26, r.size);
    }
    memset(r.read_body, 0, r.size);
    if (r.fill_only) {
        double start = now_s();
        fill_only(&r);
        double seconds = now_s() - start;
        printf("none,%zu,%d,1,%ld,%.6f,%.1f,-,before\n", r.size, r.depth,
               r.count, seconds, (double)r.count / seconds);
        return 0;
    }
    int fds[2];
    connect_pair(r.tcp, fds);
    set_nonblocking(fds[0]);
    set_nonblocking(fds[1]);
    r.writer_fd = fds[0];
    r.reader_fd = fds[1];
    if (r.splice) {
        if (pipe2(r.pipe_fds, O_NONBLOCK) != 0)
            die("pipe2");
        /* Room for a whole body, so one vmsplice takes it. */
        if (fcntl(r.pipe_fds[1], F_SETPIPE_SZ, (int)r.size + 4096) < 0)
            die("F_SETPIPE_SZ");
    }

    pthread_t filler;
    double start = now_s();
    if (r.filler && pthread_create(&filler, NULL, filler_thread, &r) != 0)
        die("pthread_create");
    if (r.threads == 1)
        one_thread(&r);
    else
        two_threads(&r);
    double seconds = now_s() - start;
    if (r.filler)
        pthread_join(filler, NULL);
    printf("%s,%zu,%d,%d,%ld,%.6f,%.1f,%s,%s\n", r.tcp ? "tcp" : "ipc", r.size,
           r.depth, r.threads, r.count, seconds, (double)r.count / seconds,
           r.splice ? "splice" : "write", r.filler ? "thread" : "before");
    return 0;
}
