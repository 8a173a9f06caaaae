/* kqueue_internal.h — the structures and cross-file calls of the kqueue
 * backend (loop, handle, listener). Private to src/backend/kqueue. */
#ifndef ZL_KQUEUE_INTERNAL_H
#define ZL_KQUEUE_INTERNAL_H

#include "atomics.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <sys/event.h>

#include "backend.h"
#include "completion_queue.h"
#include "link.h"
#include "timer_heap.h"

enum { ZL_KQ_MAX_EVENTS = 256 };

enum zl_kq_kind { ZL_KQ_HANDLE, ZL_KQ_LISTENER };

/* The part handles and listeners share; kevents and queued completions
 * point at it. First member of both, so it is also what gets freed. */
struct zl_kq_io {
    zl_loop *loop;
    struct zl_link link; /* ready list while open, closing list after */
    int fd;
    uint32_t refs; /* the owner's, plus one per queued completion */
    uint8_t kind;
    bool registered; /* EVFILT_READ added */
    /* Bytes (or connections) EVFILT_READ last said are waiting, less what
     * was read since: the read-rearm policy reads only while this is not
     * zero (read.c). */
    size_t readable;
    bool closed;
};

struct zl_handle {
    struct zl_kq_io io;
    zl_op *read_op;
    zl_op *write_op;           /* the connect op while connecting */
    struct zl_link write_link; /* in the loop's deferred writes */
    bool writable;             /* no EAGAIN or partial write since */
    bool write_armed;          /* a one-shot EVFILT_WRITE is registered */
    /* EV_EOF seen on EVFILT_READ: no further event will come, so reads go
     * on until recv returns the end (or the error in eof_error). */
    bool input_ended;
    int eof_error; /* fflags of that EV_EOF: the socket error, if any */
    bool connecting;
};

struct zl_listener {
    struct zl_kq_io io;
    zl_op *accept_op;
    int family; /* of the accepted sockets */
    /* Accept failed for lack of resources: no accept until it fires. */
    zl_timer backoff;
    bool backing_off;
};

struct zl_loop {
    int kq;
#ifndef EVFILT_USER
    int wake_pipe[2]; /* where there is no EVFILT_USER */
#endif
    atomic_bool wake_pending;
    zl_wake_cb on_wake;
    void *wake_arg;
    struct zl_link ready;           /* ios whose pending op can proceed now */
    struct zl_link closing;         /* closed ios waiting for completions */
    struct zl_link deferred_writes; /* handles, via write_link */
    struct zl_completion_queue completed; /* not yet dispatched */
    struct zl_timer_heap timers;
    int spins_to_skip;   /* waits that sleep without spinning first */
    atomic_uint spin_ns; /* how long a wait spins first (io_spin.h) */
    struct kevent events[ZL_KQ_MAX_EVENTS];
};

/* loop.c */
void zl_kq_io_init(struct zl_kq_io *io, zl_loop *loop, int fd,
                   enum zl_kq_kind kind);
/* Queues op's completion for the next dispatch; holds io until then. */
void zl_kq_complete(struct zl_kq_io *io, zl_op *op, int status, size_t bytes);
/* Puts io at the tail of the ready list (no-op when already there). */
void zl_kq_ready_push(struct zl_kq_io *io);
void zl_kq_ready_remove(struct zl_kq_io *io);
/* Applies one change for io's fd at once. 0 or -errno. */
int zl_kq_change(struct zl_kq_io *io, short filter, unsigned short flags);
/* Adds EVFILT_READ, edge-triggered (EV_CLEAR). 0 or -errno. */
int zl_kq_register(struct zl_kq_io *io);
/* Closes the fd (which drops its kevents) and the owner's reference. */
void zl_kq_io_close(struct zl_kq_io *io);
/* Runs h's pending write once no read is ready (at the latest at the end
 * of the pass); a no-op when already deferred. */
void zl_kq_write_defer(zl_handle *h);

/* socket.c: the per-OS socket details. */
/* A non-blocking, close-on-exec stream socket that raises no SIGPIPE. */
int zl_kq_socket(int family);
/* accept with the same properties; -errno on failure. */
int zl_kq_accept(int listen_fd);
/* TCP_NODELAY on TCP sockets; a no-op for other families. */
void zl_kq_set_nodelay(int fd, int family);

/* handle.c */
zl_handle *zl_kq_handle_new(zl_loop *loop, int fd);
void zl_kq_handle_event(zl_handle *h, const struct kevent *ev);

/* read.c */
void zl_kq_read_ready(zl_handle *h);
/* write.c: continues the pending write; arms EVFILT_WRITE when the socket
 * takes no more. */
void zl_kq_write_ready(zl_handle *h);
/* Registers a one-shot EVFILT_WRITE unless one is armed. */
int zl_kq_arm_write(zl_handle *h);
/* connect.c */
void zl_kq_connect_ready(zl_handle *h, const struct kevent *ev);

/* listener.c */
void zl_kq_listener_event(zl_listener *l, const struct kevent *ev);
void zl_kq_listener_ready(zl_listener *l);

#endif
