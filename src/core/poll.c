/* poll.c — zlink_poll over zlink sockets and raw OS sockets: check the
 * sockets' state first, and sleep in the OS only when nothing is ready. */
#include <errno.h>
#include <stdlib.h>
#include <uv.h>

#include "backend.h"
#include "ctx.h"
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
 * (spin.h). Per thread, since polls of one thread follow each other. */
static _Thread_local int spins_to_skip;

static int spin_on_sockets(zlink_pollitem_t *items, int n)
{
    if (spins_to_skip > 0) {
        spins_to_skip--;
        return 0;
    }
    uint64_t until = uv_hrtime() + ZL_SPIN_BEFORE_SLEEP_NS;
    do {
        for (int i = 0; i < 16; i++) {
            int ready = check_sockets(items, n);
            if (ready != 0)
                return ready;
            zl_cpu_relax();
        }
    } while (uv_hrtime() < until);
    spins_to_skip = ZL_SPINS_SKIPPED_AFTER_A_MISS;
    return 0;
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
    zl_os_pollfd *fds = n <= ZLINK_POLLITEMS_DFLT
                            ? stack_fds
                            : malloc((size_t)n * sizeof *fds);
    if (!fds) {
        errno = ENOMEM;
        return -1;
    }
    uint64_t deadline = timeout > 0 ? uv_hrtime() / 1000000u + (uint64_t)timeout
                                    : 0;
    /* With zlink sockets only, a ready socket needs no OS call at all. */
    bool sockets_only = only_sockets(items, n);
    int ready;
    for (;;) {
        for (int i = 0; i < n; i++)
            items[i].revents = 0;
        ready = check_sockets(items, n);
        if (ready == 0 && sockets_only && timeout != 0)
            ready = spin_on_sockets(items, n);
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
        int rc = zl_os_poll(fds, n, wait);
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
        /* Otherwise a signaler woke us (or nothing did, spuriously):
         * recheck the sockets. */
    }
    if (fds != stack_fds)
        free(fds);
    return ready;
}
