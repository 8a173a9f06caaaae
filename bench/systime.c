/* systime.c — an LD_PRELOAD library that times the socket and wakeup calls
 * of a whole run and prints the totals at exit: how many, how long in the
 * kernel (wall time around the call), and how many bytes. It answers "where
 * does the I/O thread's time go" for large messages, where both libraries
 * make the same few calls and the time is in the kernel's copies.
 *
 *   bench/run.sh --quick              (builds it: BUILD/bench/systime.so)
 *   LD_PRELOAD=BUILD/bench/systime.so BUILD/bench/zlink_bench_zlink \
 *       --pattern PAIR --transport tcp --size 262144 --count 10000 --csv
 *
 * Unlike syscount.c it covers the whole run, warm-up included, and sees
 * only the calls named below. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum kind { K_RECV, K_SEND, K_WRITE, K_COUNT };
static const char *const kind_names[K_COUNT] = {"recv", "send", "write"};

static atomic_llong calls[K_COUNT], nanos[K_COUNT], bytes[K_COUNT];

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void account(enum kind k, long long start, ssize_t rc)
{
    atomic_fetch_add(&nanos[k], now_ns() - start);
    atomic_fetch_add(&calls[k], 1);
    if (rc > 0)
        atomic_fetch_add(&bytes[k], rc);
}

#define REAL(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    long long start = now_ns();
    ssize_t rc = REAL(recv)(fd, buf, len, flags);
    account(K_RECV, start, rc);
    return rc;
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
                 struct sockaddr *addr, socklen_t *addr_len)
{
    long long start = now_ns();
    ssize_t rc = REAL(recvfrom)(fd, buf, len, flags, addr, addr_len);
    account(K_RECV, start, rc);
    return rc;
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    long long start = now_ns();
    ssize_t rc = REAL(sendmsg)(fd, msg, flags);
    account(K_SEND, start, rc);
    return rc;
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
               const struct sockaddr *addr, socklen_t addr_len)
{
    long long start = now_ns();
    ssize_t rc = REAL(sendto)(fd, buf, len, flags, addr, addr_len);
    account(K_SEND, start, rc);
    return rc;
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    long long start = now_ns();
    ssize_t rc = REAL(send)(fd, buf, len, flags);
    account(K_SEND, start, rc);
    return rc;
}

/* Both libraries wake a sleeping thread with write() on an eventfd. */
ssize_t write(int fd, const void *buf, size_t len)
{
    long long start = now_ns();
    ssize_t rc = REAL(write)(fd, buf, len);
    account(K_WRITE, start, rc);
    return rc;
}

__attribute__((destructor)) static void report(void)
{
    for (int k = 0; k < K_COUNT; k++)
        fprintf(stderr, "systime %-5s calls=%lld seconds=%.3f MB=%.0f\n",
                kind_names[k], (long long)calls[k], nanos[k] / 1e9,
                bytes[k] / 1e6);
}
