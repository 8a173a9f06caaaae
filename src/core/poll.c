/* poll.c — zlink_poll over zlink sockets and raw OS sockets: check the
 * sockets' state first, and sleep in the OS only when nothing is ready, on
 * one sleeper for all the sockets (sleeper.h) and the raw sockets. */
#include <errno.h>
#include <stdlib.h>
#include <uv.h>

#include "backend.h"
#include "ctx.h"
#include "direct_send.h"
#include "fast_tls.h"
#include "sleeper.h"
#include "socket.h"
#include "wait.h"
#include "zlink.h"

/* Fills revents of zlink sockets from their state. Returns how many items
 * are ready, or -1. */
static int check_sockets(zlink_pollitem_t *items, int n)
{
    int ready = 0;
    for (int i = 0; i < n; i++) {
        if (!items[i].socket)
            continue;
        zl_socket *s = zl_socket_from_handle(items[i].socket);
        if (!s)
            return -1;
        if (zl_ctx_terminating(s->ctx)) {
            errno = ETERM;
            return -1;
        }
        int events = zl_socket_events_of(s, items[i].events);
        items[i].revents = (short)(events & items[i].events);
        if (items[i].revents)
            ready++;
    }
    return ready;
}

static int count_sockets(const zlink_pollitem_t *items, int n)
{
    int sockets = 0;
    for (int i = 0; i < n; i++)
        if (items[i].socket)
            sockets++;
    return sockets;
}

/* Before sleeping in the OS, recheck the sockets for a few microseconds
 * (wait.h). Per thread, since polls of one thread follow each other. */
static ZL_THREAD_LOCAL zl_waiter waiter;

/* Whether this poll may spin: no miss lately, and zlink sockets only,
 * each with few pipes, and a spin budget. */
static bool may_spin(zlink_pollitem_t *items, int n)
{
    if (zl_wait_skipping(&waiter))
        return false;
    for (int i = 0; i < n; i++) {
        zl_socket *s = zl_socket_from_handle(items[i].socket);
        if (!s || !zl_socket_may_spin_on(s) ||
            zl_ctx_spin_budget_ns(s->ctx) == 0)
            return false;
    }
    return true;
}

/* The smallest spin budget of the items' contexts (may_spin checked that
 * each is a zlink socket). */
static uint32_t spin_budget(zlink_pollitem_t *items, int n)
{
    uint32_t budget = UINT32_MAX;
    for (int i = 0; i < n; i++) {
        zl_socket *s = items[i].socket;
        uint32_t b = zl_ctx_spin_budget_ns(s->ctx);
        if (b < budget)
            budget = b;
    }
    return budget;
}

/* The rules of socket.c's spin, over every item (may_spin checked that
 * each is a zlink socket). */
static bool peers_are_threads(zlink_pollitem_t *items, int n)
{
    for (int i = 0; i < n; i++)
        if (!zl_socket_peers_are_threads(items[i].socket))
            return false;
    return true;
}

static bool spin_is_clear(zlink_pollitem_t *items, int n)
{
    for (int i = 0; i < n; i++)
        if (!zl_socket_spin_is_clear(items[i].socket))
            return false;
    return true;
}

static void settle_sockets(zlink_pollitem_t *items, int n, bool only_with_data)
{
    for (int i = 0; i < n; i++)
        zl_socket_settle_awake_pipes(items[i].socket, only_with_data);
}

/* A poll's look during its spin (zl_wait_spin). */
typedef struct spin_look {
    zlink_pollitem_t *items;
    int n;
} spin_look;

static int look_at_sockets(void *arg)
{
    spin_look *l = arg;
    settle_sockets(l->items, l->n, true);
    return check_sockets(l->items, l->n);
}

/* Moved onto an I/O thread's CPU: sleep, but not as a miss. */
static bool sockets_spin_is_clear(void *arg)
{
    spin_look *l = arg;
    return spin_is_clear(l->items, l->n);
}

/* Runs while zl_pipe_keep_reader_awake is set: a pipe found empty stays
 * awake, so the message that ends the spin costs its writer no
 * ACTIVATE_READ, and this thread no wakeup to read. gives_way: some peer
 * is an I/O thread's session (wait.h). */
static int spin_on_sockets(zlink_pollitem_t *items, int n, uint64_t started,
                           bool gives_way)
{
    spin_look look = {items, n};
    uint64_t until =
        zl_wait_spin_until(&waiter, started, spin_budget(items, n));
    return zl_wait_spin(&waiter, until, 0, gives_way, look_at_sockets,
                        sockets_spin_is_clear, &look);
}

/* Checks the sockets, spinning first when this poll may (may_spin) and
 * would otherwise sleep; leaves no pipe awake. A spin sets
 * *waiting_since, unless a look before it already did. */
static int check_or_spin(zlink_pollitem_t *items, int n, bool would_sleep,
                         uint64_t *waiting_since)
{
    bool spin = would_sleep && may_spin(items, n);
    if (spin)
        zl_pipe_keep_reader_awake(true);
    int ready = check_sockets(items, n);
    bool via_io = ready == 0 && spin && !peers_are_threads(items, n);
    if (ready == 0 && spin && (!via_io || spin_is_clear(items, n))) {
        uint64_t now = uv_hrtime();
        if (*waiting_since == 0)
            *waiting_since = now;
        ready = spin_on_sockets(items, n, now, via_io);
    } else if (ready == 0 && would_sleep && zl_wait_skipping(&waiter)) {
        zl_wait_skip_one(&waiter);
    }
    if (spin) {
        zl_pipe_keep_reader_awake(false);
        if (ready >= 0 && zl_pipe_any_left_awake()) {
            settle_sockets(items, n, false);
            /* A message that came after the last look was activated just
             * now, or its flush will wake us. */
            if (ready == 0)
                ready = check_sockets(items, n);
        }
    }
    return ready;
}

/* A poll slept and found a socket ready waited ns after it began: as a
 * receive does (socket.c, adapt_spin), the next poll spins that long
 * unless the spin would take an I/O thread's CPU. */
static void adapt_spin(zlink_pollitem_t *items, int n, uint64_t waited)
{
    uint32_t budget = spin_budget(items, n);
    if (waited > budget)
        return;
    for (int i = 0; i < n; i++)
        if (!zl_socket_may_adapt_spin(items[i].socket))
            return;
    zl_wait_adapt(&waiter, waited, budget);
}

/* Tells the I/O threads which CPU the sockets' owner sleeps on, or -1 once
 * awake (zl_mailbox_hold_signals). */
static void mark_sleepers(zlink_pollitem_t *items, int n, int cpu)
{
    for (int i = 0; i < n; i++)
        if (items[i].socket) {
            zl_socket *s = items[i].socket;
            zl_mailbox_set_sleeper_cpu(&s->mailbox, cpu);
        }
}

/* What one sleep waits on: a sleeper per context among the sockets, since
 * only its own context's threads may raise a pooled sleeper (sleeper.h),
 * and nearly always one. A socket alone in its poll, or one whose context
 * could not give a sleeper (no fd left), sleeps on its own (ctx NULL). */
typedef struct poll_sleeper {
    zl_ctx *ctx; /* the pool it came from, or NULL: a socket's own */
    zl_sleeper *sleeper;
} poll_sleeper;

/* The sleeper s raises while the poll sleeps; adds it to sleepers when it
 * is a new one. */
static zl_sleeper *sleeper_for(poll_sleeper *sleepers, int *count, zl_socket *s,
                               bool alone)
{
    for (int j = *count - 1; j >= 0 && !alone; j--)
        if (sleepers[j].ctx == s->ctx)
            return sleepers[j].sleeper;
    zl_sleeper *w = alone ? NULL : zl_sleeper_take(&s->ctx->sleepers);
    if (w) {
        sleepers[(*count)++] = (poll_sleeper){s->ctx, w};
    } else {
        w = &s->own_sleeper;
        sleepers[(*count)++] = (poll_sleeper){NULL, w};
    }
    return w;
}

/* Points every socket at a sleeper, so that a command that reaches one
 * raises it (socket.h, zl_socket_set_sleeper): one handle to sleep on per
 * context, and no system call for the sockets nobody sends to. True when
 * the poll may sleep, false when a socket may have a command already
 * (look again). */
static bool arm_sockets(zlink_pollitem_t *items, int n, int sockets,
                        poll_sleeper *sleepers, int *count, zl_sleeper **armed)
{
    for (int i = 0; i < n; i++) {
        zl_socket *s = items[i].socket;
        armed[i] = s ? sleeper_for(sleepers, count, s, sockets == 1) : NULL;
        if (s)
            zl_socket_set_sleeper(s, armed[i]);
    }
    zl_socket_sleepers_set();
    for (int i = 0; i < n; i++)
        if (items[i].socket && zl_socket_commands_pending(items[i].socket))
            return false;
    return true;
}

static void disarm_sockets(zlink_pollitem_t *items, int n,
                           poll_sleeper *sleepers, int count)
{
    for (int i = 0; i < n; i++)
        if (items[i].socket)
            zl_socket_set_sleeper(items[i].socket, NULL);
    for (int j = 0; j < count; j++)
        if (sleepers[j].ctx)
            zl_sleeper_give(&sleepers[j].ctx->sleepers, sleepers[j].sleeper);
}

/* The one socket whose connection a poll's sleep watches (its OS socket
 * among the pollfds), or whose engine it asked to wake it once it may
 * (socket.h, zl_socket_watch_connection). */
typedef struct poll_watch {
    int item;      /* -1: none */
    zl_pipe *pipe; /* NULL: neither */
    bool connection;
} poll_watch;

/* The item whose connection the sleep may watch: the one socket waited on
 * for input that may read its connection itself. Sockets beside it whose
 * peers are threads (inproc) cost nothing to wait on. With two or more
 * candidates, none: a watch changes the I/O thread's registration twice,
 * two system calls that a poll over many sockets would pay per socket on
 * every pass. -1 for none. */
static int watch_candidate(const zlink_pollitem_t *items, int n,
                           int socket_count)
{
    if (socket_count > ZLINK_POLLITEMS_DFLT)
        return -1;
    int found = -1;
    for (int i = 0; i < n; i++) {
        if (!items[i].socket || !(items[i].events & ZLINK_POLLIN) ||
            !zl_socket_may_watch_connection(items[i].socket))
            continue;
        if (found >= 0)
            return -1;
        found = i;
    }
    return found;
}

/* While the poll sleeps, the thread watches that connection: its input
 * wakes this thread instead of the I/O thread, and a message this thread
 * reads is held for the next receive, two wakeups fewer. Adds its OS
 * socket after the nfds pollfds; returns the new number. */
static int watch_connection(zlink_pollitem_t *items, zl_sleeper **armed,
                            poll_watch *w, zl_os_pollfd *fds, int nfds)
{
    w->pipe = NULL;
    if (w->item < 0)
        return nfds;
    zl_os_socket os_socket;
    w->pipe = zl_socket_watch_connection(items[w->item].socket, armed[w->item],
                                         &os_socket, &w->connection);
    if (w->pipe && w->connection)
        fds[nfds++] = (zl_os_pollfd){os_socket, ZL_OS_POLLIN, 0};
    return nfds;
}

/* Stops watching, before the sleepers go back to their pools (the engine
 * raises a watching thread's sleeper). A connection that had input while
 * no sleeper was raised has its message read, unless an older one waits
 * in the pipe (socket_direct_recv.c, take_unless_older). Returns 1 when
 * the socket holds one now, ready for input. */
static int unwatch_connection(zlink_pollitem_t *items, const poll_watch *w,
                              const zl_os_pollfd *fds, int at, bool woken)
{
    if (!w->pipe)
        return 0;
    bool readable = w->connection && !woken && fds[at].revents != 0;
    if (!zl_socket_unwatch_connection(items[w->item].socket, w->pipe, readable))
        return 0;
    items[w->item].revents = ZLINK_POLLIN;
    return 1;
}

/* The raw sockets' OS events, after the count sleepers. Returns the number
 * of pollfds. */
static int fill_raw_fds(const zlink_pollitem_t *items, int n, zl_os_pollfd *fds,
                        int count)
{
    for (int i = 0; i < n; i++) {
        if (items[i].socket)
            continue;
        zl_os_pollfd *f = &fds[count++];
        f->fd = (zl_os_socket)items[i].fd;
        f->events = 0;
        f->revents = 0;
        if (items[i].events & ZLINK_POLLIN)
            f->events |= ZL_OS_POLLIN;
        if (items[i].events & ZLINK_POLLOUT)
            f->events |= ZL_OS_POLLOUT;
        if (items[i].events & ZLINK_POLLPRI)
            f->events |= ZL_OS_POLLPRI;
    }
    return count;
}

/* The raw sockets' revents from the pollfds after the count sleepers;
 * returns how many are ready. */
static int raw_revents(zlink_pollitem_t *items, int n, const zl_os_pollfd *fds,
                       int count)
{
    int ready = 0;
    for (int i = 0; i < n; i++) {
        if (items[i].socket)
            continue;
        short os = fds[count++].revents, re = 0;
        if (os & ZL_OS_POLLIN)
            re |= ZLINK_POLLIN;
        if (os & ZL_OS_POLLOUT)
            re |= ZLINK_POLLOUT;
        if (os & ZL_OS_POLLERR)
            re |= ZLINK_POLLERR;
        if (os & ZL_OS_POLLPRI)
            re |= ZLINK_POLLPRI;
        items[i].revents = (short)(re & (items[i].events | ZLINK_POLLERR));
        if (items[i].revents)
            ready++;
    }
    return ready;
}

int zlink_poll(zlink_pollitem_t *items, int n, long timeout)
{
    /* As libzmq's zmq_poll(3): no items to look at is EFAULT. */
    if (n < 0 || (n > 0 && !items)) {
        errno = n < 0 ? EINVAL : EFAULT;
        return -1;
    }
    if (n == 0) {
        if (timeout > 0)
            uv_sleep((unsigned)timeout);
        return 0;
    }
    /* A sleep waits on the sleepers (at most one per socket), the raw
     * sockets and one connection watched: 2n pollfds at most. */
    zl_os_pollfd stack_fds[2 * ZLINK_POLLITEMS_DFLT];
    poll_sleeper stack_sleepers[ZLINK_POLLITEMS_DFLT];
    zl_sleeper *stack_armed[ZLINK_POLLITEMS_DFLT];
    zl_os_pollfd *fds = stack_fds;
    poll_sleeper *sleepers = stack_sleepers;
    zl_sleeper **armed = stack_armed;
    if (n > ZLINK_POLLITEMS_DFLT) {
        fds = malloc(2 * (size_t)n * sizeof *fds);
        sleepers = malloc((size_t)n * sizeof *sleepers);
        armed = malloc((size_t)n * sizeof *armed);
        if (!fds || !sleepers || !armed) {
            free(fds);
            free(sleepers);
            free(armed);
            errno = ENOMEM;
            return -1;
        }
    }
    uint64_t deadline =
        timeout > 0 ? uv_hrtime() / 1000000u + (uint64_t)timeout : 0;
    int socket_count = count_sockets(items, n);
    /* With zlink sockets only, a ready socket needs no OS call at all. */
    bool sockets_only = socket_count == n;
    uint64_t waiting_since = 0; /* when a look first found nothing */
    bool slept = false;
    int ready;
    for (;;) {
        for (int i = 0; i < n; i++)
            items[i].revents = 0;
        ready = check_or_spin(items, n, sockets_only && timeout != 0,
                              &waiting_since);
        if (ready == 0)
            zl_direct_note_pause();
        if (ready > 0 && sockets_only && slept)
            adapt_spin(items, n, uv_hrtime() - waiting_since);
        if (ready < 0 || (ready > 0 && sockets_only))
            break;
        int wait;
        if (ready > 0 || timeout == 0)
            wait = 0;
        else if (timeout < 0)
            wait = -1;
        else {
            uint64_t now = uv_hrtime() / 1000000u;
            wait = now >= deadline ? 0 : (int)(deadline - now);
        }
        if (waiting_since == 0)
            waiting_since = uv_hrtime();
        /* Sleeping: the sockets raise their context's sleeper. */
        int count = 0;
        bool look_again = false;
        if (wait != 0 &&
            !arm_sockets(items, n, socket_count, sleepers, &count, armed)) {
            look_again = true;
            wait = 0; /* the raw sockets still get their look */
        }
        for (int j = 0; j < count; j++)
            fds[j] = (zl_os_pollfd){zl_sleeper_fd(sleepers[j].sleeper),
                                    ZL_OS_POLLIN, 0};
        int nfds = fill_raw_fds(items, n, fds, count);
        int raw_end = nfds;
        poll_watch watch = {.item = -1};
        if (wait != 0) {
            watch.item = watch_candidate(items, n, socket_count);
            nfds = watch_connection(items, armed, &watch, fds, nfds);
        }
        int rc = 0;
        /* Nothing to ask the OS when there is neither a sleep nor a raw
         * socket: a look at zlink sockets alone makes no system call. */
        if (wait != 0 || nfds > count) {
            if (wait != 0)
                mark_sleepers(items, n, zl_thread_cpu());
            rc = zl_os_poll(fds, nfds, wait);
            if (wait != 0)
                mark_sleepers(items, n, -1);
        }
        bool woken = false;
        for (int j = 0; j < count && rc > 0; j++)
            if (fds[j].revents) {
                zl_sleeper_woken(sleepers[j].sleeper);
                woken = true;
            }
        int held =
            unwatch_connection(items, &watch, fds, raw_end, rc <= 0 || woken);
        disarm_sockets(items, n, sleepers, count);
        if (rc < 0) {
            errno = -rc;
            ready = -1;
            break;
        }
        ready += held + raw_revents(items, n, fds, count);
        if (ready > 0 || (wait == 0 && !look_again))
            break;
        slept = slept || !look_again;
        /* Otherwise a sleeper woke us (or nothing did, spuriously):
         * recheck the sockets. */
    }
    if (fds != stack_fds) {
        free(fds);
        free(sleepers);
        free(armed);
    }
    return ready;
}
