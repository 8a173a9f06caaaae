/* listener.c — what kqueue keeps of a listener (posix/listener.c): its
 * kevents, and a pause after an accept that failed for lack of
 * resources. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kqueue_internal.h"

#include <errno.h>

/* How long a listener waits after accept failed with EMFILE, ENFILE,
 * ENOBUFS or ENOMEM. The connection stays queued, so accepting again at
 * once fails again at once: a busy loop that starves every other
 * connection on this thread. A tenth of a second frees the thread and
 * still takes the connection soon after a descriptor is given back. */
#define ZL_KQ_ACCEPT_BACKOFF_MS 100

void zl_poller_listener_init(zl_listener *l, const zl_addr *addr)
{
    (void)l;
    (void)addr;
}

void zl_kq_listener_event(zl_listener *l, const struct kevent *ev)
{
    (void)ev;
    /* data is the backlog; accepting goes on until EAGAIN all the same,
     * since a connection reset while queued leaves the count high. */
    l->io.readable = 1;
    zl_posix_listener_resume(l);
}

int zl_poller_accept(zl_listener *l)
{
    return zl_posix_accept(l->io.fd, NULL);
}

static void backoff_over(zl_timer *timer)
{
    zl_listener *l = timer->data;
    l->backing_off = false;
    zl_posix_listener_resume(l);
}

static bool out_of_resources(int err)
{
    return err == -EMFILE || err == -ENFILE || err == -ENOBUFS ||
           err == -ENOMEM;
}

/* Reported (a monitor's ACCEPT_FAILED), then a pause before the next
 * try. */
void zl_poller_accept_failed(zl_listener *l, int err)
{
    if (!out_of_resources(err))
        return;
    l->backing_off = true;
    l->backoff.cb = backoff_over;
    zl_timer_start(l->io.loop, &l->backoff, ZL_KQ_ACCEPT_BACKOFF_MS);
}
