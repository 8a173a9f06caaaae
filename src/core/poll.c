/* poll.c — zlink_poll over zlink sockets and raw OS sockets: check the
 * sockets' state first, and sleep in the OS only when nothing is ready. */
#include <errno.h>
#include <stdlib.h>
#include <uv.h>

#include "backend.h"
#include "ctx.h"
#include "fast_tls.h"
#include "socket.h"
#include "spin.h"
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
        int events = zl_socket_events(s);
        items[i].revents = (short)(events & items[i].events);
        if (items[i].revents)
            ready++;
    }
    return ready;
}

static bool only_sockets(const zlink_pollitem_t *items, int n)
{
    for (int i = 0; i < n; i++)
        if (!items[i].socket)
            return false;
    return true;
}

/* Before sleeping in the OS, recheck the sockets for a few microseconds
 * (spin.h). Per thread, since polls of one thread follow each other: how
 * many polls skip the spin after one that found nothing, and how long the
 * next spin lasts (0: ZL_SPIN_BEFORE_SLEEP_NS). */
static ZL_THREAD_LOCAL int spins_to_skip;
static ZL_THREAD_LOCAL uint32_t spin_ns;

/* Whether this poll may spin: no miss lately, and zlink sockets only,
 * each with few pipes. */
static bool may_spin(zlink_pollitem_t *items, int n)
{
    if (spins_to_skip > 0)
        return false;
    for (int i = 0; i < n; i++) {
        zl_socket *s = zl_socket_from_handle(items[i].socket);
        if (!s || !zl_socket_may_spin_on(s))
            return false;
    }
    return true;
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

/* Runs while zl_pipe_keep_reader_awake is set: a pipe found empty stays
 * awake, so the message that ends the spin costs its writer no
 * ACTIVATE_READ, and this thread no wakeup to read. gives_way: some peer
 * is an I/O thread's session (spin.h). */
static int spin_on_sockets(zlink_pollitem_t *items, int n, uint64_t started,
                           bool gives_way)
{
    uint64_t until = started + (spin_ns ? spin_ns : ZL_SPIN_BEFORE_SLEEP_NS);
    for (bool first_round = true;; first_round = false) {
        /* As in socket.c's spin: a yield is always followed by a look. */
        if (gives_way && !first_round) {
            /* Moved onto an I/O thread's CPU: sleep, but not as a miss. */
            if (!spin_is_clear(items, n))
                return 0;
            zl_thread_yield();
        }
        for (int i = 0; i < 16; i++) {
            settle_sockets(items, n, true);
            int ready = check_sockets(items, n);
            if (ready != 0)
                return ready;
            zl_cpu_relax();
        }
        if (uv_hrtime() >= until)
            break;
    }
    spins_to_skip = ZL_SPINS_SKIPPED_AFTER_A_MISS;
    spin_ns = 0;
    return 0;
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
    } else if (ready == 0 && would_sleep && spins_to_skip > 0) {
        spins_to_skip--;
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
    if (waited > ZL_SPIN_ADAPT_MAX_NS)
        return;
    for (int i = 0; i < n; i++)
        if (!zl_socket_may_adapt_spin(items[i].socket))
            return;
    spin_ns = zl_spin_for(waited);
    spins_to_skip = 0;
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

int zlink_poll(zlink_pollitem_t *items, int n, long timeout)
{
    if (n < 0 || (n > 0 && !items)) {
        errno = EINVAL;
        return -1;
    }
    if (n == 0) {
        if (timeout > 0)
            uv_sleep((unsigned)timeout);
        return 0;
    }
    zl_os_pollfd stack_fds[ZLINK_POLLITEMS_DFLT];
    zl_os_pollfd *fds =
        n <= ZLINK_POLLITEMS_DFLT ? stack_fds : malloc((size_t)n * sizeof *fds);
    if (!fds) {
        errno = ENOMEM;
        return -1;
    }
    uint64_t deadline =
        timeout > 0 ? uv_hrtime() / 1000000u + (uint64_t)timeout : 0;
    /* With zlink sockets only, a ready socket needs no OS call at all. */
    bool sockets_only = only_sockets(items, n);
    uint64_t waiting_since = 0; /* when a look first found nothing */
    bool slept = false;
    int ready;
    for (;;) {
        for (int i = 0; i < n; i++)
            items[i].revents = 0;
        ready = check_or_spin(items, n, sockets_only && timeout != 0,
                              &waiting_since);
        if (ready > 0 && sockets_only && slept)
            adapt_spin(items, n, uv_hrtime() - waiting_since);
        if (ready < 0 || (ready > 0 && sockets_only))
            break;
        /* Raw sockets and the sockets' signalers in one OS wait. */
        for (int i = 0; i < n; i++) {
            fds[i].revents = 0;
            if (items[i].socket) {
                zl_socket *s = items[i].socket;
                fds[i].fd = zl_signaler_fd(&s->signaler);
                fds[i].events = ZL_OS_POLLIN;
            } else {
                fds[i].fd = (zl_os_socket)items[i].fd;
                fds[i].events = 0;
                if (items[i].events & ZLINK_POLLIN)
                    fds[i].events |= ZL_OS_POLLIN;
                if (items[i].events & ZLINK_POLLOUT)
                    fds[i].events |= ZL_OS_POLLOUT;
            }
        }
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
        if (wait != 0)
            mark_sleepers(items, n, zl_thread_cpu());
        int rc = zl_os_poll(fds, n, wait);
        if (wait != 0)
            mark_sleepers(items, n, -1);
        if (rc < 0) {
            errno = -rc;
            ready = -1;
            break;
        }
        for (int i = 0; i < n; i++) {
            if (items[i].socket)
                continue;
            short re = 0;
            if (fds[i].revents & ZL_OS_POLLIN)
                re |= ZLINK_POLLIN;
            if (fds[i].revents & ZL_OS_POLLOUT)
                re |= ZLINK_POLLOUT;
            if (fds[i].revents & ZL_OS_POLLERR)
                re |= ZLINK_POLLERR;
            items[i].revents = (short)(re & (items[i].events | ZLINK_POLLERR));
            if (items[i].revents)
                ready++;
        }
        if (ready > 0 || wait == 0)
            break;
        slept = true;
        /* Otherwise a signaler woke us (or nothing did, spuriously):
         * recheck the sockets. */
    }
    if (fds != stack_fds)
        free(fds);
    return ready;
}
