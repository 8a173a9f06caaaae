/* poller.h — what a socket knows of the pollers watching it (zlink_poller_*,
 * poller.c): the list it pushes itself from when its readiness may change. */
#ifndef ZL_POLLER_H
#define ZL_POLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "atomics.h"

struct zl_socket;
struct zl_poller_item;

/* Embedded in each socket. The owner thread changes the list; the threads
 * that signal the socket read it under the lock. */
typedef struct zl_poll_links {
    uv_mutex_t lock;
    atomic_int count; /* lets a signal skip the lock while no poller watches */
    /* Counts the signals, so that a recheck can tell that one came while
     * it looked at the socket's events (zl_poller_recheck). */
    atomic_uint notified;
    struct zl_poller_item **items;
    size_t capacity;
} zl_poll_links;

void zl_poll_links_init(zl_poll_links *links);
void zl_poll_links_destroy(zl_poll_links *links);

/* Any thread: s may have become ready (a command reached its mailbox, or
 * its context is shutting down). Queues s on every poller watching it. */
void zl_poller_notify(struct zl_socket *s);

/* Owner thread, after a send or receive on s: s may no longer be ready,
 * and a poller's handle (zlink_poller_fd) must then stop being readable. */
void zl_poller_recheck(struct zl_socket *s);

static inline bool zl_poller_watching(zl_poll_links *links)
{
    return atomic_load_explicit(&links->count, memory_order_relaxed) != 0;
}

/* Owner thread, at zlink_close: every poller forgets s, and reports it as
 * ENOTSOCK until the application removes it. */
void zl_poller_socket_closed(struct zl_socket *s);

#endif
