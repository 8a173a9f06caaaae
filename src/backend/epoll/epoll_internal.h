/* epoll_internal.h — the structures and cross-file calls of the epoll backend
 * (loop, handle, listener). Private to src/backend/epoll. */
#ifndef ZL_EPOLL_INTERNAL_H
#define ZL_EPOLL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/uio.h>

#include "atomics.h"
#include "backend.h"
#include "completion_queue.h"
#include "link.h"
#include "timer_heap.h"

/* read.c passes the op's copy of the read iovecs to the kernel as they are
 * (sendv.c checks that zl_iovec matches struct iovec). */
enum { ZL_EPOLL_MAX_EVENTS = 256 };

enum zl_epoll_kind { ZL_EPOLL_HANDLE, ZL_EPOLL_LISTENER };

/* The part handles and listeners share; epoll events and queued completions
 * point at it. First member of both, so it is also what gets freed. */
struct zl_epoll_io {
    zl_loop *loop;
    struct zl_link link; /* ready list while open, closing list after */
    int fd;
    uint32_t refs; /* the owner's, plus one per queued completion */
    uint8_t kind;
    bool registered; /* added to the epoll set */
    bool readable;   /* an EPOLLIN edge came and the input is not drained */
    bool closed;
};

struct zl_handle {
    struct zl_epoll_io io;
    zl_op *read_op;
    zl_op *write_op;           /* the connect op while connecting */
    struct zl_link write_link; /* in the loop's deferred writes */
    bool writable; /* no EAGAIN or partial write since the last EPOLLOUT */
    /* RDHUP, HUP or ERR seen: no further EPOLLIN edge will come, so a short
     * read must not mark the input drained or EOF would never be read. */
    bool input_ended;
    bool connecting;
};

struct zl_listener {
    struct zl_epoll_io io;
    zl_op *accept_op;
    int family; /* of the accepted sockets */
    /* Bound to a loopback address: accepted sockets inherit its congestion
     * control (loopback.c) and need no call of their own. */
    bool on_loopback;
};

struct zl_loop {
    int epoll_fd;
    int wake_fd; /* eventfd; its epoll data.ptr is NULL */
    atomic_bool wake_pending;
    zl_wake_cb on_wake;
    void *wake_arg;
    struct zl_link ready;   /* ios whose pending op can proceed now */
    struct zl_link closing; /* closed ios waiting for their completions */
    struct zl_link deferred_writes;       /* handles, via write_link */
    struct zl_completion_queue completed; /* not yet dispatched */
    struct zl_timer_heap timers;
    int spins_to_skip;   /* waits that sleep without spinning first */
    atomic_uint spin_ns; /* how long a wait spins first (io_spin.h) */
    struct epoll_event events[ZL_EPOLL_MAX_EVENTS];
};

/* loop.c */
/* Fills the shared part of a new handle or listener: one reference, the
 * owner's, and in no list. */
void zl_epoll_io_init(struct zl_epoll_io *io, zl_loop *loop, int fd,
                      enum zl_epoll_kind kind);
/* Queues op's completion for the next dispatch; holds io until then. */
void zl_epoll_complete(struct zl_epoll_io *io, zl_op *op, int status,
                       size_t bytes);
/* Puts io at the tail of the ready list (no-op when already there). */
void zl_epoll_ready_push(struct zl_epoll_io *io);
void zl_epoll_ready_remove(struct zl_epoll_io *io);
/* Adds io to the epoll set, edge-triggered. 0 or -errno. */
int zl_epoll_register(struct zl_epoll_io *io);
/* Leaves the epoll set, closes the fd and drops the owner's reference. */
void zl_epoll_io_close(struct zl_epoll_io *io);

/* handle.c */
/* A handle for a connected (or connecting) socket, holding the owner's
 * reference; not yet registered. NULL when out of memory. */
zl_handle *zl_epoll_handle_new(zl_loop *loop, int fd);
void zl_epoll_handle_event(zl_handle *h, uint32_t events);
/* TCP_NODELAY on TCP sockets; a no-op for other families. */
void zl_epoll_set_nodelay(int fd, int family);

/* loopback.c: a congestion control that does not pace, when addr is a
 * loopback address: the peer, before connect() and after accept(), or the
 * address a listener binds, before listen(). */
struct sockaddr;
void zl_epoll_unpace_loopback(int fd, const struct sockaddr *addr);
/* 127.0.0.0/8, ::1, or 127.0.0.0/8 mapped into IPv6. */
bool zl_epoll_is_loopback(const struct sockaddr *sa);

/* read.c: the pending read of a handle on the ready list. */
void zl_epoll_read_ready(zl_handle *h);
/* loop.c: runs h's pending write once no read is ready (at the latest at the
 * end of the pass); a no-op when already deferred. */
void zl_epoll_write_defer(zl_handle *h);
/* write.c: continues the pending write after EPOLLOUT. */
void zl_epoll_write_ready(zl_handle *h);
/* connect.c: finishes the pending connect after EPOLLOUT. */
void zl_epoll_connect_ready(zl_handle *h);

/* listener.c */
void zl_epoll_listener_event(zl_listener *l, uint32_t events);
void zl_epoll_listener_ready(zl_listener *l);

#endif
