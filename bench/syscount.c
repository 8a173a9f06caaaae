/* syscount.c — an LD_PRELOAD library that counts the I/O and wait calls a
 * messaging library makes, so that zlink and libzmq can be compared per
 * message. zlink_bench brackets its timed window with syscount_mark(0) and
 * syscount_mark(1) and reads the difference with syscount_delta.
 *
 * It wraps every call either library (or libuv) imports for socket I/O,
 * wakeups and waiting: recv, recvfrom, recvmsg, read, readv, send, sendto,
 * sendmsg, write, writev, epoll_wait, epoll_pwait, poll and ppoll. A read or
 * write is counted as socket I/O when its fd is a socket, and as a wakeup
 * (eventfd or pipe) otherwise. Calls glibc makes internally are not seen,
 * nor are futex waits; `perf stat -e raw_syscalls:sys_enter` gives the
 * total. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum counter {
    C_RECV,        /* recv-family calls, and read/readv, on sockets */
    C_RECV_EAGAIN, /* ... that returned EAGAIN */
    C_SEND,        /* send-family calls, and write/writev, on sockets */
    C_SEND_EAGAIN,
    C_EPOLL_WAIT, /* epoll_wait + epoll_pwait */
    C_POLL,       /* poll + ppoll */
    C_WAKE_WRITE, /* write on a non-socket fd: eventfd/pipe signals */
    C_WAKE_READ,  /* read on a non-socket fd */
    C_TOTAL,      /* every wrapped call */
    C_COUNT
};
static const char *const counter_names[C_COUNT] = {
    "recv", "recv_eagain", "send",      "send_eagain", "epoll_wait",
    "poll", "wake_write",  "wake_read", "total"};

static atomic_ullong counters[C_COUNT];
static unsigned long long base[C_COUNT];
static unsigned long long end[C_COUNT];

/* Per fd: 0 not yet known, 1 socket, 2 something else. */
#define FD_CACHE 1048576
static atomic_uchar fd_kind[FD_CACHE];

static void bump(enum counter c)
{
    atomic_fetch_add_explicit(&counters[c], 1, memory_order_relaxed);
}

static int is_socket(int fd)
{
    if (fd < 0 || fd >= FD_CACHE)
        return 0;
    unsigned char k = atomic_load_explicit(&fd_kind[fd], memory_order_relaxed);
    if (k == 0) {
        int saved = errno;
        struct stat st;
        k = (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) ? 1 : 2;
        errno = saved;
        atomic_store_explicit(&fd_kind[fd], k, memory_order_relaxed);
    }
    return k == 1;
}

/* Every wrapped call counts once in C_TOTAL and once under its kind. */
static void count_call(enum counter kind)
{
    bump(C_TOTAL);
    bump(kind);
}

static void count_io(enum counter kind, enum counter eagain, ssize_t rc)
{
    count_call(kind);
    if (rc < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        bump(eagain);
}

static void count_recv(ssize_t rc)
{
    count_io(C_RECV, C_RECV_EAGAIN, rc);
}

static void count_send(ssize_t rc)
{
    count_io(C_SEND, C_SEND_EAGAIN, rc);
}

/* read/readv and write/writev: socket I/O on a socket, a wakeup (eventfd or
 * pipe) on anything else. */
static void count_read(int fd, ssize_t rc)
{
    if (is_socket(fd))
        count_recv(rc);
    else
        count_call(C_WAKE_READ);
}

static void count_write(int fd, ssize_t rc)
{
    if (is_socket(fd))
        count_send(rc);
    else
        count_call(C_WAKE_WRITE);
}

#define REAL(name) real_##name
#define DECLARE_REAL(ret, name, ...) static ret (*real_##name)(__VA_ARGS__)

DECLARE_REAL(ssize_t, recv, int, void *, size_t, int);
DECLARE_REAL(ssize_t, recvfrom, int, void *, size_t, int, struct sockaddr *,
             socklen_t *);
DECLARE_REAL(ssize_t, recvmsg, int, struct msghdr *, int);
DECLARE_REAL(ssize_t, read, int, void *, size_t);
DECLARE_REAL(ssize_t, readv, int, const struct iovec *, int);
DECLARE_REAL(ssize_t, send, int, const void *, size_t, int);
DECLARE_REAL(ssize_t, sendto, int, const void *, size_t, int,
             const struct sockaddr *, socklen_t);
DECLARE_REAL(ssize_t, sendmsg, int, const struct msghdr *, int);
DECLARE_REAL(ssize_t, write, int, const void *, size_t);
DECLARE_REAL(ssize_t, writev, int, const struct iovec *, int);
DECLARE_REAL(int, epoll_wait, int, struct epoll_event *, int, int);
DECLARE_REAL(int, epoll_pwait, int, struct epoll_event *, int, int,
             const sigset_t *);
DECLARE_REAL(int, poll, struct pollfd *, nfds_t, int);
DECLARE_REAL(int, ppoll, struct pollfd *, nfds_t, const struct timespec *,
             const sigset_t *);
DECLARE_REAL(int, close, int);

#define RESOLVE(name) (*(void **)&real_##name = dlsym(RTLD_NEXT, #name))

__attribute__((constructor)) static void resolve_all(void)
{
    RESOLVE(recv);
    RESOLVE(recvfrom);
    RESOLVE(recvmsg);
    RESOLVE(read);
    RESOLVE(readv);
    RESOLVE(send);
    RESOLVE(sendto);
    RESOLVE(sendmsg);
    RESOLVE(write);
    RESOLVE(writev);
    RESOLVE(epoll_wait);
    RESOLVE(epoll_pwait);
    RESOLVE(poll);
    RESOLVE(ppoll);
    RESOLVE(close);
}

#define ENSURE(name)                                                           \
    do {                                                                       \
        if (!real_##name)                                                      \
            RESOLVE(name);                                                     \
    } while (0)

EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    ENSURE(recv);
    ssize_t rc = REAL(recv)(fd, buf, len, flags);
    count_recv(rc);
    return rc;
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
                        struct sockaddr *addr, socklen_t *addrlen)
{
    ENSURE(recvfrom);
    ssize_t rc = REAL(recvfrom)(fd, buf, len, flags, addr, addrlen);
    count_recv(rc);
    return rc;
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
    ENSURE(recvmsg);
    ssize_t rc = REAL(recvmsg)(fd, msg, flags);
    count_recv(rc);
    return rc;
}

EXPORT ssize_t read(int fd, void *buf, size_t len)
{
    ENSURE(read);
    ssize_t rc = REAL(read)(fd, buf, len);
    count_read(fd, rc);
    return rc;
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
    ENSURE(readv);
    ssize_t rc = REAL(readv)(fd, iov, n);
    count_read(fd, rc);
    return rc;
}

EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    ENSURE(send);
    ssize_t rc = REAL(send)(fd, buf, len, flags);
    count_send(rc);
    return rc;
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
                      const struct sockaddr *addr, socklen_t addrlen)
{
    ENSURE(sendto);
    ssize_t rc = REAL(sendto)(fd, buf, len, flags, addr, addrlen);
    count_send(rc);
    return rc;
}

EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
    ENSURE(sendmsg);
    ssize_t rc = REAL(sendmsg)(fd, msg, flags);
    count_send(rc);
    return rc;
}

EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
    ENSURE(write);
    ssize_t rc = REAL(write)(fd, buf, len);
    count_write(fd, rc);
    return rc;
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
    ENSURE(writev);
    ssize_t rc = REAL(writev)(fd, iov, n);
    count_write(fd, rc);
    return rc;
}

EXPORT int epoll_wait(int epfd, struct epoll_event *events, int max,
                      int timeout)
{
    ENSURE(epoll_wait);
    int rc = REAL(epoll_wait)(epfd, events, max, timeout);
    count_call(C_EPOLL_WAIT);
    return rc;
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *events, int max,
                       int timeout, const sigset_t *mask)
{
    ENSURE(epoll_pwait);
    int rc = REAL(epoll_pwait)(epfd, events, max, timeout, mask);
    count_call(C_EPOLL_WAIT);
    return rc;
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    ENSURE(poll);
    int rc = REAL(poll)(fds, n, timeout);
    count_call(C_POLL);
    return rc;
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
                 const sigset_t *mask)
{
    ENSURE(ppoll);
    int rc = REAL(ppoll)(fds, n, ts, mask);
    count_call(C_POLL);
    return rc;
}

/* A closed fd number may come back as something else. */
EXPORT int close(int fd)
{
    ENSURE(close);
    if (fd >= 0 && fd < FD_CACHE)
        atomic_store_explicit(&fd_kind[fd], 0, memory_order_relaxed);
    return REAL(close)(fd);
}

static void snapshot(unsigned long long *into)
{
    for (int i = 0; i < C_COUNT; i++)
        into[i] = atomic_load_explicit(&counters[i], memory_order_relaxed);
}

/* phase 0 starts the window, phase 1 ends it. */
EXPORT void syscount_mark(int phase)
{
    snapshot(phase == 0 ? base : end);
}

/* The counts within the window, with their names; returns how many. */
EXPORT int syscount_delta(unsigned long long *out, int n, const char **names)
{
    int k = n < C_COUNT ? n : C_COUNT;
    for (int i = 0; i < k; i++) {
        out[i] = end[i] - base[i];
        names[i] = counter_names[i];
    }
    return k;
}
