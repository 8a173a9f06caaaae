/* direct_recv.c — the port through which a socket's thread, waiting in a
 * blocking receive, reads a small message from its connection itself
 * (direct_recv.h). */
#include "direct_recv.h"

#include <errno.h>
#include <string.h>
#include <uv.h>

#include "metadata.h"
#include "msg.h"
#include "sleeper.h"
#include "zmtp/zmtp.h"

/* Who reads the connection. The owner is in the low bits: only the engine
 * moves it to OPEN or CLOSED from CLOSED or OPEN, and only the socket's
 * thread moves it out of OPEN to WATCHED, to TAKEN and back, and out of
 * WATCHED again. The flags tell the socket's thread what happened
 * meanwhile. */
enum {
    CLOSED = 0,  /* the engine reads (or there is no connection) */
    OPEN = 1,    /* the engine waits for input with nothing buffered */
    WATCHED = 2, /* the socket's thread waits for the input itself */
    TAKEN = 3,   /* ... and reads a message */
    OWNER = 3,
    /* The engine's probe completed while the socket's thread watched: the
     * engine reads nothing until it is woken. */
    ENGINE_IDLE = 4,
    /* The engine closes the connection: the socket's thread lets go. */
    SHUT = 8,
    /* With CLOSED only: a receive waits and wants to watch; the engine's
     * next opening wakes it. */
    WANTED = 16
};

static atomic_uint recvs_total;

unsigned zl_direct_recvs_total(void)
{
    return (unsigned)atomic_load_explicit(&recvs_total, memory_order_relaxed);
}

bool zl_recv_port_is_open(zl_recv_port *port)
{
    return (atomic_load_explicit(&port->state, memory_order_acquire) & OWNER) ==
           OPEN;
}

bool zl_recv_port_is_watched(zl_recv_port *port)
{
    int owner =
        atomic_load_explicit(&port->state, memory_order_acquire) & OWNER;
    return owner == WATCHED || owner == TAKEN;
}

void zl_recv_port_init(zl_recv_port *port)
{
    memset(port, 0, sizeof *port);
    atomic_init(&port->state, CLOSED);
}

/* ---- the engine's thread ---- */

bool zl_recv_port_open(zl_recv_port *port, zl_handle *handle,
                       struct zl_metadata *metadata, int64_t max_msg_size,
                       int64_t max_msg_parts)
{
    /* Acquire: the socket's thread is done with the fields. */
    if ((atomic_load_explicit(&port->state, memory_order_acquire) & OWNER) !=
        CLOSED)
        return false; /* the socket's thread still lets go of the last one */
    port->handle = handle;
    if (port->metadata != metadata) {
        if (port->metadata)
            zl_metadata_release(port->metadata);
        if (metadata)
            zl_metadata_addref(metadata, 1);
        port->metadata = metadata;
    }
    port->max_msg_size = max_msg_size;
    port->max_msg_parts = max_msg_parts;
    /* Release: a thread that sees OPEN sees the fields. */
    return atomic_exchange_explicit(&port->state, OPEN, memory_order_acq_rel) &
           WANTED;
}

bool zl_recv_port_close(zl_recv_port *port)
{
    int s = atomic_load_explicit(&port->state, memory_order_acquire);
    for (;;) {
        int next = (s & OWNER) == CLOSED ? s
                   : (s & OWNER) == OPEN ? CLOSED
                                         : s | ENGINE_IDLE;
        if (next == s || atomic_compare_exchange_weak_explicit(
                             &port->state, &s, next, memory_order_acq_rel,
                             memory_order_acquire))
            return (next & OWNER) == CLOSED;
    }
}

void zl_recv_port_shut(zl_recv_port *port)
{
    int s = atomic_load_explicit(&port->state, memory_order_acquire);
    bool woken = false;
    unsigned waits = 0;
    for (;;) {
        int owner = s & OWNER;
        if (owner == CLOSED)
            break;
        if (owner == OPEN) {
            if (atomic_compare_exchange_weak_explicit(&port->state, &s, CLOSED,
                                                      memory_order_acq_rel,
                                                      memory_order_acquire))
                break;
            continue;
        }
        /* The socket's thread watches or reads: it lets go once it sees
         * SHUT, woken from its sleep by its sleeper. It never waits for
         * this thread meanwhile, so this wait is short. */
        if (!(s & SHUT) && !atomic_compare_exchange_weak_explicit(
                               &port->state, &s, s | SHUT, memory_order_acq_rel,
                               memory_order_acquire))
            continue;
        if (!woken) {
            zl_sleeper_raise(port->sleeper);
            woken = true;
        }
        /* Yields first: the woken thread usually lets go within
         * microseconds. One that is slow to run (preempted, stopped in a
         * debugger) is waited for without taking a CPU. */
        if (++waits < 64)
            zl_thread_yield();
        else
            uv_sleep(1);
        s = atomic_load_explicit(&port->state, memory_order_acquire);
    }
    port->handle = NULL;
    if (port->metadata)
        zl_metadata_release(port->metadata);
    port->metadata = NULL;
}

/* ---- the socket's thread ---- */

bool zl_recv_port_watch(zl_recv_port *port, struct zl_sleeper *w)
{
    int s = OPEN;
    if (atomic_load_explicit(&port->state, memory_order_relaxed) != OPEN)
        return false;
    port->sleeper = w; /* published by the exchange */
    if (!atomic_compare_exchange_strong_explicit(&port->state, &s, WATCHED,
                                                 memory_order_acq_rel,
                                                 memory_order_relaxed))
        return false;
    /* Should the registration fail, the loop's thread is woken too: its
     * probe then finds the port watched and waits, as it may anyway. */
    zl_handle_watch_input(port->handle, true);
    return true;
}

bool zl_recv_port_want(zl_recv_port *port)
{
    int s = CLOSED;
    return atomic_compare_exchange_strong_explicit(
               &port->state, &s, CLOSED | WANTED, memory_order_relaxed,
               memory_order_relaxed) ||
           s == (CLOSED | WANTED);
}

void zl_recv_port_unwant(zl_recv_port *port)
{
    int s = CLOSED | WANTED;
    atomic_compare_exchange_strong_explicit(
        &port->state, &s, CLOSED, memory_order_relaxed, memory_order_relaxed);
}

/* The input is readable: reads one message into msg when the port is
 * still ours and the message is one we take. Looks first (MSG_PEEK), so
 * that whatever we do not take stays in the socket, whole, for the
 * engine. */
static zl_recv_result
take_message(zl_recv_port *port, zl_direct_envelope envelope, zlink_msg_t *msg)
{
    int s = WATCHED;
    if (!atomic_compare_exchange_strong_explicit(&port->state, &s, TAKEN,
                                                 memory_order_acq_rel,
                                                 memory_order_acquire) &&
        !((s & ~ENGINE_IDLE) == WATCHED &&
          atomic_compare_exchange_strong_explicit(
              &port->state, &s, TAKEN | ENGINE_IDLE, memory_order_acq_rel,
              memory_order_acquire)))
        return ZL_RECV_NOTHING; /* SHUT: the engine wants the port */
    uint8_t buf[ZL_DIRECT_RECV_PEEK];
    zl_recv_result result = ZL_RECV_FOR_ENGINE;
    int64_t n = zl_handle_try_read(port->handle, buf, sizeof buf, true);
    size_t body_at, size;
    if (n == -EAGAIN) {
        result = ZL_RECV_NOTHING; /* nothing after all: look again */
    } else if (n > 0 &&
               zl_frame_whole_message(
                   buf, (size_t)n, envelope == ZL_DIRECT_DELIMITED,
                   port->max_msg_size, port->max_msg_parts, &body_at, &size) &&
               zlink_msg_init_size(msg, size) == 0) {
        memcpy(zlink_msg_data(msg), buf + body_at, size);
        /* Takes what we looked at: no other thread reads the socket while
         * the port is ours, so the bytes are the same. */
        zl_handle_try_read(port->handle, buf, body_at + size, false);
        if (port->metadata) {
            zl_metadata_addref(port->metadata, 1);
            zl_msg_set_metadata(msg, port->metadata);
        }
        atomic_fetch_add_explicit(&recvs_total, 1, memory_order_relaxed);
        result = ZL_RECV_MESSAGE;
    }
    /* Back to WATCHED, keeping what the engine flagged meanwhile. */
    atomic_fetch_sub_explicit(&port->state, TAKEN - WATCHED,
                              memory_order_acq_rel);
    return result;
}

zl_os_socket zl_recv_port_os_socket(const zl_recv_port *port)
{
    return zl_handle_os_socket(port->handle);
}

zl_recv_result zl_recv_port_take(zl_recv_port *port,
                                 zl_direct_envelope envelope, zlink_msg_t *msg)
{
    /* The engine's SHUT (which raised the sleeper too): let go. */
    if (atomic_load_explicit(&port->state, memory_order_acquire) & SHUT)
        return ZL_RECV_NOTHING;
    return take_message(port, envelope, msg);
}

zl_recv_result zl_recv_port_wait(zl_recv_port *port, struct zl_sleeper *w,
                                 int timeout_ms)
{
    zl_os_pollfd fds[2] = {
        {.fd = zl_sleeper_fd(w), .events = ZL_OS_POLLIN},
        {.fd = zl_recv_port_os_socket(port), .events = ZL_OS_POLLIN}};
    int n = zl_os_poll(fds, 2, timeout_ms);
    if (n > 0 && fds[0].revents)
        return ZL_RECV_WOKEN;
    /* A signal ends a blocking receive with EINTR, as libzmq's does, so
     * that a handler's flag (a Ctrl-C) is seen. */
    if (n == -EINTR)
        return ZL_RECV_INTERRUPTED;
    return n > 0 ? ZL_RECV_READABLE : ZL_RECV_NOTHING;
}

bool zl_recv_port_unwatch(zl_recv_port *port, bool for_engine)
{
    /* Before letting go: the handle stays open while the port is ours.
     * Input that waits is reported to the loop's thread at once. */
    zl_handle_watch_input(port->handle, false);
    int s = atomic_load_explicit(&port->state, memory_order_acquire);
    for (;;) {
        int next = for_engine || (s & (ENGINE_IDLE | SHUT)) ? CLOSED : OPEN;
        if (atomic_compare_exchange_weak_explicit(&port->state, &s, next,
                                                  memory_order_acq_rel,
                                                  memory_order_acquire))
            return (s & ENGINE_IDLE) && !(s & SHUT);
    }
}
