/* handover_raw.c — what one cross-process round trip costs on this machine
 * with no messaging library, by which thread reads the reply: the
 * reference beside which issue 31's RTT and CPU-per-request cells are read
 * (bench/NOTES.md, "Who reads the reply").
 *
 * Two processes (this one and a forked child) ping-pong 64 B messages over
 * one loopback tcp connection, both with the same structure (--reader):
 *   own       the thread that waits for the reply reads the socket itself
 *             with a blocking recv, and the process has no other thread;
 *   idle      the same, and the process holds a second thread that only
 *             sleeps, as a library's I/O thread does while it has nothing
 *             to do;
 *   watched   the same, and the second thread waits in epoll on the socket
 *             (edge-triggered) and peeks at each arrival: an I/O thread
 *             that keeps watching a connection whose reads it handed to
 *             the application thread;
 *   toggled   as watched, but the waiting thread takes the socket out of
 *             the second thread's epoll interest for each wait (two
 *             epoll_ctl calls), so that thread is never woken;
 *   handover  the second thread waits in epoll, reads each message and
 *             wakes the waiting thread with an eventfd: the structure of
 *             zlink and libzmq today, where an I/O thread reads.
 *
 * --rate R paces the client to R round trips per second (a sleep before
 * each request), as game_bench --rate does; without it the round trips go
 * back to back, as zlink_bench --latency does. The client prints one CSV
 * row: reader, rate, one-way p50 (half the round trip's median), round-trip
 * p99, and the client process's CPU per round trip (getrusage, every
 * thread, the pacing sleeps included). */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSG_SIZE 64

typedef enum reader { OWN, IDLE, WATCHED, TOGGLED, HANDOVER } reader;
static const char *const reader_names[] = {"own", "idle", "watched", "toggled",
                                           "handover"};

/* One process's side: its connection and, for the structures with a second
 * thread, what that thread waits on. */
typedef struct side {
    reader how;
    int fd;
    int epoll_fd; /* the second thread's (watched, toggled, handover) */
    int wake_fd;  /* handover: the reader thread's eventfd */
    uint8_t buf[MSG_SIZE];
} side;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Reads exactly one message (blocking), or exits on the peer's close. */
static void read_message(int fd, uint8_t *buf, int flags)
{
    size_t got = 0;
    while (got < MSG_SIZE) {
        ssize_t n = recv(fd, buf + got, MSG_SIZE - got, flags);
        if (n == 0)
            exit(0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("recv");
        }
        got += (size_t)n;
    }
}

static void write_message(int fd, const uint8_t *buf)
{
    if (send(fd, buf, MSG_SIZE, MSG_NOSIGNAL) != MSG_SIZE)
        die("send");
}

static void *sleeping_thread(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

/* watched, toggled: wakes on each edge the epoll interest lets through and
 * looks, as an I/O thread's readiness probe would. */
static void *watching_thread(void *arg)
{
    side *s = arg;
    struct epoll_event ev;
    for (;;) {
        if (epoll_wait(s->epoll_fd, &ev, 1, -1) < 0 && errno != EINTR)
            die("epoll_wait");
        uint8_t byte;
        (void)recv(s->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    }
    return NULL;
}

/* handover: reads each message whole on its edge and wakes the waiting
 * thread. The waiting thread reads buf only after the eventfd, and the
 * next message comes only after its reply, so buf is never shared. */
static void *handover_thread(void *arg)
{
    side *s = arg;
    struct epoll_event ev;
    for (;;) {
        if (epoll_wait(s->epoll_fd, &ev, 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        uint8_t probe;
        while (recv(s->fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT) == 1) {
            read_message(s->fd, s->buf, 0);
            uint64_t one = 1;
            if (write(s->wake_fd, &one, sizeof one) != sizeof one)
                die("eventfd write");
        }
    }
    return NULL;
}

static void set_interest(side *s, uint32_t events)
{
    struct epoll_event ev = {.events = events | EPOLLET};
    if (epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, s->fd, &ev) != 0)
        die("epoll_ctl");
}

static void side_start(side *s)
{
    int one = 1;
    setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    pthread_t thread;
    void *(*body)(void *) = NULL;
    switch (s->how) {
    case OWN:
        return;
    case IDLE:
        body = sleeping_thread;
        break;
    case WATCHED:
    case TOGGLED:
        body = watching_thread;
        break;
    case HANDOVER:
        body = handover_thread;
        s->wake_fd = eventfd(0, EFD_CLOEXEC);
        if (s->wake_fd < 0)
            die("eventfd");
        break;
    }
    if (body != sleeping_thread) {
        s->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLET};
        if (s->epoll_fd < 0 ||
            epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->fd, &ev) != 0)
            die("epoll");
    }
    if (pthread_create(&thread, NULL, body, s) != 0)
        die("pthread_create");
    pthread_detach(thread);
}

/* Waits for the next message, the structure's way; it is in s->buf then. */
static void side_wait(side *s)
{
    switch (s->how) {
    case OWN:
    case IDLE:
    case WATCHED:
        read_message(s->fd, s->buf, 0);
        break;
    case TOGGLED:
        set_interest(s, 0);
        read_message(s->fd, s->buf, 0);
        set_interest(s, EPOLLIN);
        break;
    case HANDOVER: {
        uint64_t count;
        if (read(s->wake_fd, &count, sizeof count) != sizeof count)
            die("eventfd read");
        break;
    }
    }
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static void sleep_until(uint64_t when_ns)
{
    struct timespec t = {.tv_sec = (time_t)(when_ns / 1000000000u),
                         .tv_nsec = (long)(when_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
        ;
}

static void serve(side *s)
{
    side_start(s);
    for (;;) {
        side_wait(s);
        write_message(s->fd, s->buf);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: handover_raw --reader "
                    "own|idle|watched|toggled|handover [--rate R] "
                    "[--count N] [--header]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    side s = {.how = OWN, .epoll_fd = -1, .wake_fd = -1};
    long rate = 0, count = 5000, warmup = 500;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--header") == 0) {
            printf(
                "reader,rate,one_way_p50_us,rtt_p99_us,client_cpu_us_per_rt\n");
            return 0;
        } else if (strcmp(a, "--reader") == 0 && v) {
            int k = 0;
            while (k < 5 && strcmp(v, reader_names[k]) != 0)
                k++;
            if (k == 5)
                usage();
            s.how = (reader)k;
            i++;
        } else if (strcmp(a, "--rate") == 0 && v) {
            rate = atol(v);
            i++;
        } else if (strcmp(a, "--count") == 0 && v) {
            count = atol(v);
            i++;
        } else {
            usage();
        }
    }
    if (count < 1 || rate < 0)
        usage();

    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t addr_len = sizeof addr;
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, addr_len) ||
        listen(listener, 1) ||
        getsockname(listener, (struct sockaddr *)&addr, &addr_len))
        die("listen");
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        s.fd = accept(listener, NULL, NULL);
        if (s.fd < 0)
            die("accept");
        close(listener);
        serve(&s); /* exits when the client closes */
    }
    close(listener);
    s.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s.fd < 0 || connect(s.fd, (struct sockaddr *)&addr, addr_len) != 0)
        die("connect");
    side_start(&s);

    uint64_t *samples = malloc((size_t)count * sizeof *samples);
    if (!samples)
        die("malloc");
    uint64_t interval = rate ? 1000000000u / (uint64_t)rate : 0;
    uint64_t next = now_ns();
    double cpu_start = 0;
    for (long i = -warmup; i < count; i++) {
        if (i == 0)
            cpu_start = cpu_us();
        if (interval) {
            sleep_until(next);
            next += interval;
        }
        uint64_t sent = now_ns();
        write_message(s.fd, s.buf);
        side_wait(&s);
        if (i >= 0)
            samples[i] = now_ns() - sent;
    }
    double cpu = cpu_us() - cpu_start;
    shutdown(s.fd, SHUT_RDWR);
    kill(child, SIGTERM);
    waitpid(child, NULL, 0);
    qsort(samples, (size_t)count, sizeof *samples, compare_u64);
    printf("%s,%ld,%.1f,%.1f,%.1f\n", reader_names[s.how], rate,
           (double)samples[count / 2] / 2000.0,
           (double)samples[count * 99 / 100] / 1000.0, cpu / (double)count);
    free(samples);
    return 0;
}
