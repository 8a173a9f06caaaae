/* backend.h — the completion contract between src/core and the one OS backend
 * compiled into this build (epoll, kqueue or iocp). The only backend header
 * that core includes. See DESIGN.md §3.
 *
 * Threading: a zl_loop is driven by one thread (its I/O thread). Every call
 * below that takes a loop, handle, listener or op must be made on that thread,
 * except zl_loop_wake (any thread) and zl_listener_open (any thread, before
 * the first accept). zl_signaler and zl_os_poll are free-standing.
 *
 * Completions: every submitted op completes exactly once, with
 * (status, bytes), from inside zl_loop_run_once on the loop's thread, never
 * inside the call that submitted it. status is 0 or a negative errno value
 * (-ECONNRESET, …), ZL_ECANCELED after cancel/close, ZL_EOF when the peer
 * closed its side. The owner keeps the op, buffers and iovecs alive until
 * the op has completed. */
#ifndef ZL_BACKEND_H
#define ZL_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "os_types.h"

#define ZL_EOF (-4095)
#define ZL_ECANCELED (-4094)

typedef struct zl_loop zl_loop;
typedef struct zl_handle zl_handle;
typedef struct zl_listener zl_listener;
typedef struct zl_op zl_op;
typedef struct zl_timer zl_timer;
typedef struct zl_signaler zl_signaler;

/* Same fields as POSIX struct iovec; the backend converts where the OS
 * differs (WSABUF). */
typedef struct zl_iovec {
    void *base;
    size_t len;
} zl_iovec;
/* The most iovecs one read takes: the rest of a large body, then the read
 * buffer for whatever follows it. */
#define ZL_READ_IOV_MAX 2

/* A read as every backend keeps it in its op: the owner's iovecs, copied,
 * and their total, which decides whether a read was short. */
typedef struct zl_read_req {
    zl_iovec iov[ZL_READ_IOV_MAX];
    int count;
    size_t len;
} zl_read_req;

static inline void zl_read_req_set(zl_read_req *req, const zl_iovec *iov, int n)
{
    req->count = n;
    req->len = 0;
    for (int i = 0; i < n; i++) {
        req->iov[i] = iov[i];
        req->len += iov[i].len;
    }
}

/* Where a write stands in the owner's iovec array, which is never
 * modified; every backend keeps one in its op (write_cursor.h). */
typedef struct zl_write_cursor {
    const zl_iovec *iov;
    int count;
    int index;     /* first iovec not fully written */
    size_t offset; /* bytes of iov[index] already written */
} zl_write_cursor;

typedef void (*zl_op_cb)(zl_op *op, int status, size_t bytes);
typedef void (*zl_timer_cb)(zl_timer *timer);
typedef void (*zl_wake_cb)(void *arg);

/* Per-backend private parts: struct zl_op_impl, struct zl_signaler. */
#include "backend_impl.h"

/* An asynchronous request. Embedded by its owner; cb and data are the
 * owner's, the rest is filled in by the backend. */
struct zl_op {
    zl_op_cb cb;
    void *data;
    zl_handle *accepted; /* result of zl_listener_accept */
    struct zl_op_impl impl;
};

/* A timer owned by the loop. Embedded by its owner; zero-initialise. */
struct zl_timer {
    zl_timer_cb cb;
    void *data;
    uint64_t due_ms;
    size_t heap_index; /* 0 = not armed */
};

/* ---- loop ---- */
int zl_loop_create(zl_loop **out, zl_wake_cb on_wake, void *wake_arg);
void zl_loop_destroy(zl_loop *loop);
/* Waits up to timeout_ms (-1: until something happens) for completions, a
 * wake or a due timer, then dispatches completed ops, the wake callback (once
 * per coalesced wake) and due timers. Returns the number of callbacks run. */
int zl_loop_run_once(zl_loop *loop, int timeout_ms);
/* Thread-safe; many wakes before the next run_once make one callback. */
void zl_loop_wake(zl_loop *loop);
/* Monotonic milliseconds. */
uint64_t zl_loop_now(zl_loop *loop);
/* The longest the loop's thread may busy-wait for a wake before it sleeps
 * in the OS, in ns (the context's ZLINK_SPIN_BUDGET); 0: never. The
 * backend spins what it needs within that, or not at all. Thread-safe. */
void zl_loop_set_spin_budget(zl_loop *loop, uint32_t budget_ns);
/* Whether the loop's thread waits for something to do, spinning or in the
 * OS, rather than serving events. A hint, from any thread; false where the
 * backend does not say. */
bool zl_loop_is_waiting(zl_loop *loop);
void zl_timer_start(zl_loop *loop, zl_timer *timer, uint64_t after_ms);
void zl_timer_stop(zl_loop *loop, zl_timer *timer);
int zl_timer_active(const zl_timer *timer);

/* ---- connected streams ---- */
/* Reads up to the iovecs' total length, filling them in order; at most
 * ZL_READ_IOV_MAX of them, copied into the op (the buffers must stay alive,
 * the array need not). Completes with bytes > 0, or status ZL_EOF / error.
 * A read that returns less than the total has drained the socket, which is
 * what the read-rearm policy keys on (DESIGN.md §1). A total of 0 is a
 * readiness probe: it completes with 0 bytes once the handle is readable.
 * Only one read and one write may be pending per handle. */
void zl_handle_readv(zl_handle *h, zl_op *op, const zl_iovec *iov, int n);
static inline void zl_handle_read(zl_handle *h, zl_op *op, void *buf,
                                  size_t len)
{
    zl_iovec one = {buf, len};
    zl_handle_readv(h, op, &one, 1);
}
/* Writes all iovecs (n may exceed the OS limit; the backend continues).
 * Completes when every byte is written (bytes = total), or with an error. */
void zl_handle_write(zl_handle *h, zl_op *op, const zl_iovec *iov, int n);
/* Writes what the socket takes at once, without blocking, from any thread:
 * the application thread's direct send (DESIGN.md §5). The caller makes
 * sure that no write on h is pending or running and that h stays open
 * meanwhile. Returns the bytes written, fewer than asked once the send
 * buffer is full, or -errno (-EAGAIN: none). A backend whose writes must
 * go through its loop (IOCP) sets ZL_BACKEND_TRY_WRITE to 0 and returns
 * -ENOTSUP. */
int64_t zl_handle_try_write(zl_handle *h, const zl_iovec *iov, int n);
/* The application thread's own reads (DESIGN.md §5), where the backend
 * sets ZL_BACKEND_TRY_READ; elsewhere both return -ENOTSUP and do nothing.
 *
 * zl_handle_try_read: reads (or with peek, copies without taking) what the
 * socket holds, up to len, without blocking, from any thread. The caller
 * makes sure that no other thread reads h meanwhile and that h stays open.
 * Returns the bytes, 0 at the end of the stream, or -errno (-EAGAIN:
 * none).
 *
 * zl_handle_watch_input: while watched, input on h does not wake the
 * loop's thread: another thread waits for it (zl_handle_os_socket) and
 * reads it. Once no longer watched, input that is waiting is reported to
 * the loop at once, as if it had just come. From any thread, while h
 * stays open. */
int64_t zl_handle_try_read(zl_handle *h, void *buf, size_t len, bool peek);
int zl_handle_watch_input(zl_handle *h, bool watched);
/* Every pending op completes with ZL_ECANCELED. */
void zl_handle_cancel(zl_handle *h);
/* Cancels pending ops and closes the socket. The handle memory is released
 * by the backend after the cancelled completions have run; the owner must
 * not touch h after this call. */
void zl_handle_close(zl_handle *h);
/* Starts a non-blocking connect and returns the handle at once (NULL and
 * *err set when the socket could not even be created). op completes with 0
 * when connected. On failure the owner still closes the handle. */
zl_handle *zl_handle_connect(zl_loop *loop, const zl_addr *addr, zl_op *op,
                             int *err);
/* SO_SNDBUF / SO_RCVBUF (0 = leave the OS default). TCP_NODELAY is always
 * set on TCP handles by the backend. */
void zl_handle_set_buffers(zl_handle *h, int sndbuf, int rcvbuf);
/* The peer's address, as "tcp://1.2.3.4:5" fits; 0 or -errno. */
int zl_handle_peer_addr(zl_handle *h, zl_addr *out);
/* An AF_UNIX peer's credentials; 0, or -ENOTSUP where the OS does not tell
 * them. *pid is -1 where the OS tells the ids only. */
int zl_handle_peer_cred(zl_handle *h, unsigned *uid, unsigned *gid, int *pid);
/* What zl_handle_peer_cred tells on this OS, for the options that filter on
 * it: the uid and gid, and the pid. */
enum { ZL_PEER_CRED_IDS = 1, ZL_PEER_CRED_PID = 2 };
int zl_peer_cred_kinds(void);
/* Whether the OS's group database lists user uid as a member of group gid,
 * as libzmq's ipc listener asks it. May block on a directory service. */
bool zl_user_in_group(unsigned uid, unsigned gid);
/* The OS socket, for the values libzmq's monitor events carry. */
zl_os_socket zl_handle_os_socket(const zl_handle *h);
/* Whether the connect zl_handle_connect_ex started waits on the network,
 * libzmq's EINPROGRESS (its CONNECT_DELAYED event). False when it ended at
 * once, as a local AF_UNIX connect does; its completion still follows. */
bool zl_handle_connect_in_progress(const zl_handle *h);

/* ---- TCP settings (libzmq's ZMQ_TCP_KEEPALIVE*, ZMQ_TCP_MAXRT, ZMQ_TOS and
 * ZMQ_BINDTODEVICE), with libzmq's meanings: -1 leaves the OS default. */
#define ZL_DEVICE_MAX 16 /* libzmq's BINDDEVSIZ, IFNAMSIZ on Linux */
typedef struct zl_tcp_opts {
    int keepalive;       /* -1: OS default, 0: off, 1: on */
    int keepalive_cnt;   /* probes; -1: OS default */
    int keepalive_idle;  /* seconds; -1: OS default */
    int keepalive_intvl; /* seconds; -1: OS default */
    int maxrt;           /* ms before an unacknowledged send fails; 0: OS */
    int tos;             /* IP_TOS byte; 0: leave */
    char device[ZL_DEVICE_MAX + 1]; /* "": bound to no device */
} zl_tcp_opts;

static inline void zl_tcp_opts_init(zl_tcp_opts *o)
{
    o->keepalive = o->keepalive_cnt = -1;
    o->keepalive_idle = o->keepalive_intvl = -1;
    o->maxrt = 0;
    o->tos = 0;
    o->device[0] = '\0';
}

/* As zl_handle_connect, with TCP settings. Before connecting, TOS and the
 * device are set and, when src is given, the socket is bound to it (the
 * "tcp://src;dst" form). Nothing is applied to non-TCP addresses. A device
 * on a system without SO_BINDTODEVICE is -ENOTSUP in *err, as libzmq. */
zl_handle *zl_handle_connect_ex(zl_loop *loop, const zl_addr *addr,
                                const zl_addr *src, const zl_tcp_opts *opts,
                                zl_op *op, int *err);
/* Keepalive, MAXRT (TCP_USER_TIMEOUT, Windows' TCP_MAXRT, nothing where the
 * OS has neither) and TOS on a connected or accepted TCP handle. Best
 * effort, as the OS allows: 0 or the first -errno. */
int zl_handle_tune_tcp(zl_handle *h, const zl_tcp_opts *opts);

/* ---- listeners ---- */
/* Creates, binds and listens (SO_REUSEADDR on TCP, IPV6_V6ONLY off when
 * ipv6 is set for a wildcard IPv6 address). 0 or -errno. */
int zl_listener_open(zl_loop *loop, const zl_addr *addr, int backlog,
                     zl_listener **out);
/* As zl_listener_open, with TOS and the device set before bind (accepted
 * sockets inherit them; keepalive and MAXRT go on each accepted handle
 * with zl_handle_tune_tcp). */
int zl_listener_open_ex(zl_loop *loop, const zl_addr *addr, int backlog,
                        const zl_tcp_opts *opts, zl_listener **out);
/* ZLINK_USE_FD: takes over fd, a stream socket the application bound and
 * listens on (systemd's socket activation), and closes it with the
 * listener. -EINVAL when fd is not a listening socket of the family
 * wanted (local: AF_UNIX, else AF_INET or AF_INET6); fd is then still the
 * caller's. 0 or -errno. */
int zl_listener_adopt(zl_loop *loop, zl_os_socket fd, bool local,
                      zl_listener **out);
int zl_listener_local_addr(zl_listener *l, zl_addr *out);
zl_os_socket zl_listener_os_socket(const zl_listener *l);
/* Completes with op->accepted set to a new handle on this loop, or with
 * -errno and no handle. A failure ends the accept: the listener does not
 * try again on its own, the owner decides when (core backs off on a timer
 * when fds or memory ran out, DESIGN.md §3). */
void zl_listener_accept(zl_listener *l, zl_op *op);
/* Cancels the pending accept (ZL_ECANCELED) and closes; memory released
 * after that completion has run. */
void zl_listener_close(zl_listener *l);

/* ---- signaler: a pollable OS handle that one thread can wait on ----
 * (eventfd on Linux). Used for socket mailboxes and ZLINK_FD. */
int zl_signaler_init(zl_signaler *s);
void zl_signaler_close(zl_signaler *s);
/* Thread-safe. */
void zl_signaler_send(zl_signaler *s);
/* 0 when signalled, -EAGAIN after timeout_ms (-1: forever), -EINTR. Does not
 * consume the signal. */
int zl_signaler_wait(zl_signaler *s, int timeout_ms);
/* Consumes any pending signal; never blocks. */
void zl_signaler_reset(zl_signaler *s);
zl_os_socket zl_signaler_fd(const zl_signaler *s);

/* ---- polling OS sockets (zlink_poll) ---- */
#define ZL_OS_POLLIN 1
#define ZL_OS_POLLOUT 2
#define ZL_OS_POLLERR 4
/* Urgent data (POSIX POLLPRI). Where the OS cannot wait for it (Windows'
 * WSAPoll), zl_os_poll fails with -ENOTSUP when an entry asks for it. */
#define ZL_OS_POLLPRI 8
typedef struct zl_os_pollfd {
    zl_os_socket fd;
    short events;
    short revents;
} zl_os_pollfd;
/* Number of ready entries, 0 on timeout, or -errno. timeout_ms -1 = forever. */
int zl_os_poll(zl_os_pollfd *fds, int n, int timeout_ms);

/* ---- memory for the message pools ----
 * size bytes (a multiple of ZL_HUGE_SLAB), aligned to ZL_HUGE_SLAB, that the
 * OS may back with huge pages. Never freed: pool slabs live as long as the
 * process. NULL when out of memory. */
#define ZL_HUGE_SLAB ((size_t)2 * 1024 * 1024)
void *zl_os_slab_alloc(size_t size);

/* ---- the calling thread's CPU ----
 * Spinning threads use these to stay out of an I/O thread's way
 * (src/core/wait.h). zl_thread_cpu: the CPU the calling thread runs on now, or
 * -1 where the OS cannot say. zl_thread_yield: lets another thread that is
 * ready on this CPU run first; returns at once when there is none. */
int zl_thread_cpu(void);
void zl_thread_yield(void);

/* ---- I/O thread settings (libzmq's context options), best effort on the
 * calling thread; 0 or -errno (-ENOTSUP where the OS has no such thing).
 * zl_thread_set_name: as debuggers and top show it, cut to what the OS
 * keeps (15 bytes on Linux). zl_thread_set_sched: policy and priority as
 * ZMQ_THREAD_SCHED_POLICY / ZMQ_THREAD_PRIORITY, -1 leaves either as is.
 * zl_thread_set_affinity: the CPUs the thread may run on. */
int zl_thread_set_name(const char *name);
int zl_thread_set_sched(int policy, int priority);
int zl_thread_set_affinity(const int *cpus, int n);

/* ---- signals around the start of a thread zlink owns (src/core/thread.c)
 * zl_signals_block_all blocks every signal in the calling thread and keeps
 * the mask it had in saved; zl_signals_restore puts that back. Nothing on
 * Windows. */
void zl_signals_block_all(zl_signal_mask *saved);
void zl_signals_restore(const zl_signal_mask *saved);

/* ---- process-wide set-up (WSAStartup on Windows), refcounted ---- */
int zl_backend_global_init(void);
void zl_backend_global_term(void);
/* Backend name: "epoll", "kqueue" or "iocp". */
const char *zl_backend_name(void);
/* 1 when the system has AF_UNIX stream sockets, which ipc runs on: every
 * POSIX system, and Windows 10 1803 and later (not Wine 8). Any thread. */
int zl_backend_has_ipc(void);

#endif
