/* readiness.h — what the readiness backends (epoll, kqueue) share: the
 * loop, handle and listener, with the readiness API's own part of the loop
 * (struct zl_poller, loop_impl.h) inside, and the calls between the shared
 * files in src/backend/posix and each backend's own. */
#ifndef ZL_POSIX_READINESS_H
#define ZL_POSIX_READINESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "atomics.h"
#include "backend.h"
#include "completion_queue.h"
#include "io_spin.h"
#include "link.h"
#include "loop_impl.h"
#include "timer_heap.h"

enum zl_posix_kind { ZL_POSIX_HANDLE, ZL_POSIX_LISTENER };

/* The part handles and listeners share; events and queued completions
 * point at it. First member of both, so it is also what gets freed. */
struct zl_posix_io {
    zl_loop *loop;
    struct zl_link link; /* ready list while open, closing list after */
    int fd;
    uint32_t refs; /* the owner's, plus one per queued completion */
    uint8_t kind;
    bool registered; /* known to the readiness API */
    bool closed;
    /* What the events said of the input, less what was read since; each
     * backend's read-rearm policy reads only while it is not zero (read.c).
     * epoll: 1 from an EPOLLIN edge until drained; kqueue: the bytes (or
     * connections) EVFILT_READ said are waiting. */
    size_t readable;
};

struct zl_handle {
    struct zl_posix_io io;
    zl_op *read_op;
    zl_op *write_op;           /* the connect op while connecting */
    struct zl_link write_link; /* in the loop's deferred writes */
    bool writable; /* no EAGAIN or partial write since writability came */
    /* No further input event will come (epoll's RDHUP, HUP or ERR, kqueue's
     * EV_EOF): a short read must not mark the input drained, reads go on
     * until recv returns the end. */
    bool input_ended;
    bool connecting;
    bool write_armed; /* kqueue: a one-shot EVFILT_WRITE is registered */
    /* epoll: the events h is registered for, and why (epoll/interest.c).
     * The lock orders the loop's thread, whose waiting write wants
     * EPOLLOUT, against a thread that watches the input. */
    atomic_bool interest_lock;
    bool input_watched;
    bool output_waits;
    uint32_t interest;
    int eof_error; /* kqueue: the socket error EV_EOF carried, if any */
};

struct zl_listener {
    struct zl_posix_io io;
    zl_op *accept_op;
    int family; /* of the accepted sockets */
    /* epoll: bound to a loopback address, so accepted sockets inherit its
     * congestion control (epoll/loopback.c) and need no call of their own. */
    bool on_loopback;
    /* kqueue: accept failed for lack of resources, no accept until the
     * backoff timer fires. */
    bool backing_off;
    zl_timer backoff;
};

struct zl_loop {
    atomic_bool wake_pending;
    /* The thread waits for work, spinning or in the readiness API; false
     * while it serves events (zl_loop_is_waiting). */
    atomic_bool waiting;
    zl_wake_cb on_wake;
    void *wake_arg;
    struct zl_link ready;           /* ios whose pending op can proceed now */
    struct zl_link closing;         /* closed ios waiting for completions */
    struct zl_link deferred_writes; /* handles, via write_link */
    struct zl_completion_queue completed; /* not yet dispatched */
    struct zl_timer_heap timers;
    zl_io_spin spin;     /* when a wait spins first (io_spin.h) */
    bool read_last_pass; /* the last pass served reads: a wait may spin */
    atomic_uint spin_ns; /* how long a wait spins first (io_spin.h) */
    struct zl_poller poller;
};

/* ---- posix/loop.c ---- */
/* Fills the shared part of a new handle or listener: one reference, the
 * owner's, and in no list. */
void zl_posix_io_init(struct zl_posix_io *io, zl_loop *loop, int fd,
                      enum zl_posix_kind kind);
/* Queues op's completion for the next dispatch; holds io until then. */
void zl_posix_complete(struct zl_posix_io *io, zl_op *op, int status,
                       size_t bytes);
/* Puts io at the tail of the ready list (no-op when already there). */
void zl_posix_ready_push(struct zl_posix_io *io);
void zl_posix_ready_remove(struct zl_posix_io *io);
/* Leaves the readiness API, closes the fd and drops the owner's
 * reference. */
void zl_posix_io_close(struct zl_posix_io *io);
/* Runs h's pending write once no read is ready (at the latest at the end
 * of the pass); a no-op when already deferred. */
void zl_posix_write_defer(zl_handle *h);

/* ---- posix/handle.c ---- */
/* A handle for a connected (or connecting) socket, holding the owner's
 * reference; not yet registered. NULL when out of memory. */
zl_handle *zl_posix_handle_new(zl_loop *loop, int fd);

/* ---- posix/listener.c ---- */
/* The pending accept of a listener on the ready list. */
void zl_poller_listener_ready(zl_listener *l);
/* Puts l on the ready list when an accept is pending, the listener is
 * readable and not backing off. */
void zl_posix_listener_resume(zl_listener *l);

/* ---- posix/connect.c ---- */
/* Finishes the pending connect once the socket is writable: the socket's
 * error, or error_hint when the socket has none left to give (kqueue's
 * EV_EOF carries it after another call took it). */
void zl_posix_connect_done(zl_handle *h, int error_hint);

/* ---- posix/socket.c: the socket details that differ between systems ---- */
/* A non-blocking, close-on-exec stream socket that raises no SIGPIPE, or
 * -errno. */
int zl_posix_socket(int family);
/* accept with the same properties, the peer's address in *peer when peer
 * is not NULL; -errno on failure. */
int zl_posix_accept(int listen_fd, zl_addr *peer);
/* TCP_NODELAY on TCP sockets; a no-op for other families. */
void zl_posix_set_nodelay(int fd, int family);

/* ---- each backend's own (poller.c, read.c, write.c, listener.c) ---- */
/* The readiness API's descriptor and the loop's wake. 0 or -errno. */
int zl_poller_open(zl_loop *loop);
void zl_poller_close(zl_loop *loop);
/* Makes the next or current wait return; thread-safe. */
void zl_poller_wake(zl_loop *loop);
/* Waits up to timeout_ms (-1: no limit) and hands each event to its handle
 * or listener, draining the wake. True when something was reported. */
bool zl_poller_wait(zl_loop *loop, int timeout_ms);
/* Adds io to the readiness API, edge-triggered. 0 or -errno. */
int zl_poller_register(struct zl_posix_io *io);
/* Before the fd is closed. */
void zl_poller_unregister(struct zl_posix_io *io);
/* After socket() of a connect, or before listen(): per-OS settings that
 * depend on the address. */
void zl_poller_prepare_socket(int fd, const zl_addr *addr);
/* Registers a handle whose connect is in progress, so that its end is
 * reported. 0 or -errno. */
int zl_poller_register_connecting(zl_handle *h);
/* The pending read of a handle on the ready list: the read-rearm policy. */
void zl_poller_read_ready(zl_handle *h);
/* Continues the pending write. */
void zl_poller_write_ready(zl_handle *h);
/* Fills what the backend keeps of a new listener. */
void zl_poller_listener_init(zl_listener *l, const zl_addr *addr);
/* Accepts one connection from l: the socket (non-blocking, close-on-exec),
 * or -errno. */
int zl_poller_accept(zl_listener *l);
/* After an accept failed with err, before the owner hears of it. */
void zl_poller_accept_failed(zl_listener *l, int err);

#endif
