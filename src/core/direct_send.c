/* direct_send.c — the port through which the socket's thread writes a small
 * message to an idle connection itself (direct_send.h). */
#include "direct_send.h"

#include "fast_tls.h"
#include "msg.h"
#include "zmtp/zmtp.h"

/* Who may write on the connection. Only the socket's thread moves the state
 * from IDLE to APP and out of APP, and only the engine's thread moves it
 * to IDLE or NONE; PUBLISHED is set by the socket's thread from any state
 * but APP, and taken back by the engine. So IDLE always means: nothing is
 * queued in the pipe and nothing is being written. */
enum {
    NONE,      /* no open connection, or not one this port can write on */
    ENGINE,    /* the engine writes */
    PUBLISHED, /* the socket queued into the pipe: the engine reads first */
    IDLE,      /* nothing queued or being written: the socket may write */
    APP,       /* the socket's thread writes */
    APP_WANTED /* ... and the engine wants the port after it */
};

/* This thread's rhythm. A direct send goes out at once, alone, from this
 * thread; that is what a thread that sends one message and then waits for
 * the answer wants. A thread that sends many messages between its waits
 * (a server answering a batch, a game frame's updates) is better served
 * by the I/O thread, which writes them beside each other while this
 * thread goes on: such a thread does not send directly. */
static ZL_THREAD_LOCAL struct {
    bool paused;              /* found nothing since its last direct send */
    unsigned sends_since;     /* sends since it last found nothing */
    unsigned sends_last_time; /* ... between the two pauses before that */
} rhythm ZL_FAST_TLS;

void zl_direct_note_pause(void)
{
    if (rhythm.sends_since > 0)
        rhythm.sends_last_time = rhythm.sends_since;
    rhythm.sends_since = 0;
    rhythm.paused = true;
}

static atomic_uint sends_total, handovers_total;
/* Tests cut direct writes short here; 0: never. */
static atomic_uint write_limit;

void zl_direct_set_write_limit(unsigned bytes)
{
    atomic_store_explicit(&write_limit, bytes, memory_order_relaxed);
}

/* A write as the test limit cuts it, when one is set: the kernel decides
 * where a write ends, and a test cannot make it end inside a message. */
static int64_t try_write(zl_handle *handle, zl_iovec *iov, int n)
{
    size_t limit = atomic_load_explicit(&write_limit, memory_order_relaxed);
    if (limit == 0)
        return zl_handle_try_write(handle, iov, n);
    int used = 0;
    for (; used < n && limit > 0; used++) {
        if (iov[used].len > limit)
            iov[used].len = limit;
        limit -= iov[used].len;
    }
    return zl_handle_try_write(handle, iov, used);
}

unsigned zl_direct_sends_total(void)
{
    return (unsigned)atomic_load_explicit(&sends_total, memory_order_relaxed);
}

unsigned zl_direct_handovers_total(void)
{
    return (unsigned)atomic_load_explicit(&handovers_total,
                                          memory_order_relaxed);
}

void zl_direct_port_init(zl_direct_port *port)
{
    atomic_init(&port->state, NONE);
    port->handle = NULL;
    port->loop = NULL;
    port->pending_written = 0;
    port->has_pending = false;
}

bool zl_direct_part_fits(const zlink_msg_t *part)
{
    return !(zl_msg_flags(part) &
             (ZL_MSG_COMMAND | ZL_MSG_SUBSCRIBE | ZL_MSG_CANCEL));
}

bool zl_direct_may_send(zl_direct_port *port)
{
    rhythm.sends_since++;
    if (!rhythm.paused || rhythm.sends_last_time > 1 ||
        atomic_load_explicit(&port->state, memory_order_relaxed) != IDLE)
        return false;
    rhythm.paused = false;
    return true;
}

zl_direct_result zl_direct_write(zl_direct_port *port, zl_iovec *iov, int n,
                                 size_t total)
{
    int expected = IDLE;
    if (!atomic_compare_exchange_strong_explicit(&port->state, &expected, APP,
                                                 memory_order_acquire,
                                                 memory_order_relaxed))
        return ZL_DIRECT_NOT_TAKEN;
    if (!zl_loop_is_waiting(port->loop)) {
        /* The engine is at work: queued, the message goes out with
         * whatever else it writes next. If it asked for the port meanwhile,
         * the publish wakes it (zl_direct_port_release). */
        expected = APP;
        atomic_compare_exchange_strong_explicit(&port->state, &expected, IDLE,
                                                memory_order_relaxed,
                                                memory_order_relaxed);
        return ZL_DIRECT_NOT_TAKEN;
    }
    int64_t sent = try_write(port->handle, iov, n);
    atomic_fetch_add_explicit(&sends_total, 1, memory_order_relaxed);
    if (sent == (int64_t)total) {
        expected = APP;
        if (atomic_compare_exchange_strong_explicit(&port->state, &expected,
                                                    IDLE, memory_order_release,
                                                    memory_order_relaxed))
            return ZL_DIRECT_SENT;
        /* The engine asked for the port while we wrote: it waits for the
         * pipe's wake. */
        atomic_store_explicit(&port->state, PUBLISHED, memory_order_release);
        return ZL_DIRECT_SENT_WAKE;
    }
    /* The engine writes the rest, from the pipe, and reports a failed
     * write as its own. We keep the port until the message is published. */
    atomic_fetch_add_explicit(&handovers_total, 1, memory_order_relaxed);
    port->pending_written = sent > 0 ? (size_t)sent : 0;
    port->has_pending = true;
    return ZL_DIRECT_PARTIAL;
}

bool zl_direct_port_release(zl_direct_port *port)
{
    int s = atomic_load_explicit(&port->state, memory_order_relaxed);
    while (s == APP || s == APP_WANTED)
        if (atomic_compare_exchange_weak_explicit(&port->state, &s, PUBLISHED,
                                                  memory_order_release,
                                                  memory_order_relaxed))
            return true;
    return false;
}

void zl_direct_port_published(zl_direct_port *port)
{
    atomic_store_explicit(&port->state, PUBLISHED, memory_order_release);
}

bool zl_direct_port_take(zl_direct_port *port)
{
    int s = atomic_load_explicit(&port->state, memory_order_acquire);
    for (;;) {
        int next;
        switch (s) {
        case NONE:
        case ENGINE:
            return true;
        case PUBLISHED:
        case IDLE:
            next = ENGINE;
            break;
        case APP:
            next = APP_WANTED;
            break;
        default: /* APP_WANTED */
            return false;
        }
        if (atomic_compare_exchange_weak_explicit(&port->state, &s, next,
                                                  memory_order_acquire,
                                                  memory_order_acquire))
            return next == ENGINE;
    }
}

bool zl_direct_port_take_written(zl_direct_port *port, size_t *written)
{
    if (!port->has_pending)
        return false;
    *written = port->pending_written;
    port->has_pending = false;
    return true;
}

void zl_direct_port_open(zl_direct_port *port, zl_handle *handle, zl_loop *loop)
{
    int s = atomic_load_explicit(&port->state, memory_order_relaxed);
    if (s != NONE && s != ENGINE)
        return; /* PUBLISHED: the engine's wake is on its way */
    port->handle = handle;
    port->loop = loop;
    atomic_compare_exchange_strong_explicit(
        &port->state, &s, IDLE, memory_order_release, memory_order_relaxed);
}

void zl_direct_port_shut(zl_direct_port *port)
{
    int s = atomic_load_explicit(&port->state, memory_order_acquire);
    for (;;) {
        if (s == APP || s == APP_WANTED) {
            /* One non-blocking write: short, unless its thread was
             * preempted, when yielding lets it finish. */
            zl_thread_yield();
            s = atomic_load_explicit(&port->state, memory_order_acquire);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&port->state, &s, NONE,
                                                  memory_order_acquire,
                                                  memory_order_acquire))
            break;
    }
    port->handle = NULL;
    /* The message stays in the pipe, whole, for the next connection. */
    port->has_pending = false;
}
