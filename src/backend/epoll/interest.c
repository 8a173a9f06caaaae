/* interest.c — the events an epoll handle is registered for once another
 * thread may watch its input (zl_handle_watch_input, DESIGN.md §5).
 *
 * A handle starts registered for EPOLLIN, EPOLLOUT and EPOLLRDHUP,
 * edge-triggered. While its input is watched, EPOLLIN leaves the
 * registration, so that input wakes only the watching thread; EPOLLRDHUP
 * stays, and the loop's thread still hears of the end of the stream.
 * Every EPOLL_CTL_MOD reports the events of the new set that hold now, so
 * a set that kept EPOLLOUT would wake the loop's thread for a writable
 * socket on each change: once watched, a handle is registered for
 * EPOLLOUT only while a write waits for it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "epoll_internal.h"

#include <errno.h>
#include <sched.h>
#include <sys/epoll.h>

/* Held for one epoll_ctl at most. */
static void lock_interest(zl_handle *h)
{
    while (
        atomic_exchange_explicit(&h->interest_lock, true, memory_order_acquire))
        sched_yield();
}

static void unlock_interest(zl_handle *h)
{
    atomic_store_explicit(&h->interest_lock, false, memory_order_release);
}

/* Registers the events h needs now; under the lock. 0 or -errno. */
static int apply_interest(zl_handle *h)
{
    uint32_t want = EPOLLET | EPOLLRDHUP | (h->input_watched ? 0 : EPOLLIN) |
                    (h->output_waits ? EPOLLOUT : 0);
    if (want == h->interest)
        return 0;
    struct epoll_event ev = {.events = want, .data.ptr = &h->io};
    if (epoll_ctl(h->io.loop->poller.epoll_fd, EPOLL_CTL_MOD, h->io.fd, &ev) !=
        0)
        return -errno;
    h->interest = want;
    return 0;
}

int zl_handle_watch_input(zl_handle *h, bool watched)
{
    lock_interest(h);
    h->input_watched = watched;
    int rc = apply_interest(h);
    unlock_interest(h);
    return rc;
}

void zl_epoll_output_waits(zl_handle *h, bool waits)
{
    lock_interest(h);
    h->output_waits = waits;
    /* A write that stopped waiting leaves EPOLLOUT in place: an edge it
     * brings is harmless, and the next change of the input's watch drops
     * it. */
    if (waits && !(h->interest & EPOLLOUT))
        apply_interest(h);
    unlock_interest(h);
}
