/* poller.c — zlink_poller_*: a set of sockets and raw fds whose wait looks
 * only at the sockets that signalled since, never at the idle ones.
 *
 * Each socket keeps the list of poller items watching it (zl_poll_links).
 * When a command reaches its mailbox, the thread that sent it pushes those
 * items onto their pollers' ready lists. A wait takes the ready list, asks
 * each socket on it for its events, and puts back the ones still ready:
 * level triggered, as libzmq's, at the cost of the sockets with something
 * to do only. Raw fds are polled by the OS, together with the signaler, in
 * one call.
 *
 * The signaler is raised only when someone can see it: while a wait
 * sleeps, or once zlink_poller_fd gave it out. A poller nobody sleeps on
 * (an application that receives between waits, or waits with a zero
 * timeout) then costs the signalling thread no system call and the owner
 * no reset and no lock per send or receive. Once given out, the signaler
 * follows the list: raised while it is not empty, which a send or receive
 * keeps true (zl_poller_recheck).
 *
 * A wait over few sockets, one of which may read its connection itself
 * (direct_recv.h), watches that connection while it sleeps, as zlink_poll
 * does. */
#include "poller.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "ctx.h"
#include "direct_send.h"
#include "sleeper.h"
#include "socket.h"
#include "zlink.h"

#define POLLER_MAGIC 0x7a6c706cu /* "zlpl" */
#define VALID_EVENTS                                                           \
    (ZLINK_POLLIN | ZLINK_POLLOUT | ZLINK_POLLERR | ZLINK_POLLPRI)

typedef struct zl_poller zl_poller;

typedef struct zl_poller_item {
    zl_poller *poller;
    zl_socket *socket; /* NULL for a raw fd; compared, never used once closed */
    zlink_fd_t fd;
    void *user_data;
    short events;
    /* Guarded by the poller's lock. */
    bool closed;       /* the socket was closed while watched */
    size_t ready_slot; /* index in the ready list + 1; 0 when not queued */
} zl_poller_item;

struct zl_poller {
    uint32_t magic;
    /* Owner thread only. */
    zl_poller_item **items;
    size_t count, capacity, fd_count;
    zl_poller_item **batch; /* the ready list as a wait took it */
    size_t batch_capacity;
    zl_os_pollfd *fds; /* the signaler, then the raw fds */
    size_t fds_capacity;
    /* Shared with the threads that signal the sockets. */
    uv_mutex_t lock;
    zl_signaler signaler;
    bool raised;   /* the signaler is raised (the list is not empty) */
    bool sleeping; /* a wait sleeps on the signaler */
    /* zlink_poller_fd gave the signaler out. Set once, by the owner; read
     * by the sockets' owners (zl_poller_recheck) without the lock. */
    atomic_bool fd_given;
    zl_poller_item **ready;
    size_t ready_count, ready_capacity; /* capacity >= socket items */
};

/* ---- the ready list (under the poller's lock) ---- */

static void queue_locked(zl_poller *p, zl_poller_item *item)
{
    if (item->ready_slot)
        return;
    p->ready[p->ready_count++] = item;
    item->ready_slot = p->ready_count;
    if (!p->raised &&
        (p->sleeping ||
         atomic_load_explicit(&p->fd_given, memory_order_relaxed))) {
        p->raised = true;
        zl_signaler_send(&p->signaler);
    }
}

static void unqueue_locked(zl_poller *p, zl_poller_item *item)
{
    if (!item->ready_slot)
        return;
    zl_poller_item *last = p->ready[--p->ready_count];
    p->ready[item->ready_slot - 1] = last;
    last->ready_slot = item->ready_slot;
    item->ready_slot = 0;
}

/* The signaler follows the list: lowered once it is empty. */
static void settle_signal_locked(zl_poller *p)
{
    if (p->ready_count == 0 && p->raised) {
        p->raised = false;
        zl_signaler_reset(&p->signaler);
    }
}

static void queue(zl_poller *p, zl_poller_item *item)
{
    uv_mutex_lock(&p->lock);
    queue_locked(p, item);
    uv_mutex_unlock(&p->lock);
}

/* ---- the socket side ---- */

void zl_poll_links_init(zl_poll_links *links)
{
    uv_mutex_init(&links->lock);
    atomic_init(&links->count, 0);
    atomic_init(&links->notified, 0);
    links->items = NULL;
    links->capacity = 0;
}

void zl_poll_links_destroy(zl_poll_links *links)
{
    free(links->items);
    uv_mutex_destroy(&links->lock);
}

void zl_poller_notify(zl_socket *s)
{
    zl_poll_links *links = &s->pollers;
    if (atomic_load_explicit(&links->count, memory_order_acquire) == 0)
        return;
    atomic_fetch_add_explicit(&links->notified, 1, memory_order_release);
    uv_mutex_lock(&links->lock);
    int n = atomic_load_explicit(&links->count, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        queue(links->items[i]->poller, links->items[i]);
    uv_mutex_unlock(&links->lock);
}

static int link_item(zl_socket *s, zl_poller_item *item)
{
    zl_poll_links *links = &s->pollers;
    size_t n =
        (size_t)atomic_load_explicit(&links->count, memory_order_relaxed);
    uv_mutex_lock(&links->lock);
    if (n == links->capacity) {
        size_t cap = links->capacity ? links->capacity * 2 : 2;
        zl_poller_item **grown = realloc(links->items, cap * sizeof *grown);
        if (!grown) {
            uv_mutex_unlock(&links->lock);
            errno = ENOMEM;
            return -1;
        }
        links->items = grown;
        links->capacity = cap;
    }
    links->items[n] = item;
    atomic_store_explicit(&links->count, (int)n + 1, memory_order_release);
    uv_mutex_unlock(&links->lock);
    return 0;
}

static void unlink_item(zl_socket *s, zl_poller_item *item)
{
    zl_poll_links *links = &s->pollers;
    uv_mutex_lock(&links->lock);
    int n = atomic_load_explicit(&links->count, memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        if (links->items[i] == item) {
            links->items[i] = links->items[n - 1];
            atomic_store_explicit(&links->count, n - 1, memory_order_release);
            break;
        }
    }
    uv_mutex_unlock(&links->lock);
}

/* How often a recheck looks again at a socket a signal reached during its
 * look, before it leaves the item queued: a spurious wake then, never a
 * lost one. */
#define RECHECK_TRIES 4

void zl_poller_recheck(zl_socket *s)
{
    /* The owner thread is the only one that changes the list: it reads it
     * without the lock. Only a signaler that was given out must follow
     * the list at once; a wait drops what is no longer ready by itself.
     * Events before the lock: taking commands in may signal other sockets,
     * whose notify must not wait on a lock held here. A signal that comes
     * between that look and the lock finds the item still queued; the look
     * may have missed the message it announced, so it is taken again. The
     * count tells: a signal's increment comes after its command is posted
     * and before its lock, so one that the look may have missed shows
     * under the lock. */
    int events = -1, tries = 0;
    unsigned notified = 0;
    zl_poll_links *links = &s->pollers;
    int n = atomic_load_explicit(&links->count, memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        zl_poller_item *item = links->items[i];
        zl_poller *p = item->poller;
        if (!atomic_load_explicit(&p->fd_given, memory_order_relaxed))
            continue;
        for (;;) {
            if (events < 0) {
                notified = atomic_load_explicit(&links->notified,
                                                memory_order_acquire);
                events = zl_socket_events(s);
            }
            uv_mutex_lock(&p->lock);
            bool raced = atomic_load_explicit(&links->notified,
                                              memory_order_relaxed) != notified;
            if ((events & item->events) ||
                (raced && ++tries >= RECHECK_TRIES)) {
                queue_locked(p, item);
            } else if (raced) {
                uv_mutex_unlock(&p->lock);
                events = -1;
                continue;
            } else {
                unqueue_locked(p, item);
                settle_signal_locked(p);
            }
            uv_mutex_unlock(&p->lock);
            break;
        }
    }
}

void zl_poller_socket_closed(zl_socket *s)
{
    zl_poll_links *links = &s->pollers;
    uv_mutex_lock(&links->lock);
    int n = atomic_load_explicit(&links->count, memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        zl_poller_item *item = links->items[i];
        uv_mutex_lock(&item->poller->lock);
        item->closed = true;
        queue_locked(item->poller, item);
        uv_mutex_unlock(&item->poller->lock);
    }
    atomic_store_explicit(&links->count, 0, memory_order_release);
    uv_mutex_unlock(&links->lock);
}

/* ---- the poller ---- */

static zl_poller *poller_from_handle(void *handle)
{
    zl_poller *p = handle;
    if (!p || p->magic != POLLER_MAGIC) {
        errno = EFAULT;
        return NULL;
    }
    return p;
}

void *zlink_poller_new(void)
{
    zl_poller *p = calloc(1, sizeof *p);
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    if (zl_signaler_init(&p->signaler) != 0) {
        free(p);
        errno = EMFILE;
        return NULL;
    }
    uv_mutex_init(&p->lock);
    atomic_init(&p->fd_given, false);
    p->magic = POLLER_MAGIC;
    return p;
}

int zlink_poller_destroy(void **poller_p)
{
    zl_poller *p = poller_p ? poller_from_handle(*poller_p) : NULL;
    if (!p) {
        errno = EFAULT;
        return -1;
    }
    /* Once unlinked from every socket, no other thread can reach p. */
    for (size_t i = 0; i < p->count; i++) {
        zl_poller_item *item = p->items[i];
        if (item->socket && !item->closed)
            unlink_item(item->socket, item);
        free(item);
    }
    p->magic = 0;
    zl_signaler_close(&p->signaler);
    uv_mutex_destroy(&p->lock);
    free(p->items);
    free(p->batch);
    free(p->fds);
    free(p->ready);
    free(p);
    *poller_p = NULL;
    return 0;
}

int zlink_poller_size(void *handle)
{
    zl_poller *p = poller_from_handle(handle);
    return p ? (int)p->count : -1;
}

static int check_ready(zl_poller *p, zlink_poller_event_t *events, int n);

int zlink_poller_fd(void *handle, zlink_fd_t *fd)
{
    zl_poller *p = poller_from_handle(handle);
    if (!p)
        return -1;
    if (!fd) {
        errno = EFAULT;
        return -1;
    }
    if (!atomic_load_explicit(&p->fd_given, memory_order_relaxed)) {
        /* From now on the signaler follows the list. The list may hold
         * sockets that are no longer ready: looked at once more, so that
         * the handle is readable only for one that is. */
        atomic_store_explicit(&p->fd_given, true, memory_order_relaxed);
        int saved = errno;
        check_ready(p, NULL, 0); /* an error is the next wait's to report */
        errno = saved;
    }
    *fd = (zlink_fd_t)zl_signaler_fd(&p->signaler);
    return 0;
}

static zl_poller_item *find(zl_poller *p, const void *socket, zlink_fd_t fd)
{
    for (size_t i = 0; i < p->count; i++) {
        zl_poller_item *item = p->items[i];
        if (socket ? item->socket == socket : (!item->socket && item->fd == fd))
            return item;
    }
    return NULL;
}

static bool events_valid(short events)
{
    if (events & ~VALID_EVENTS) {
        errno = EINVAL;
        return false;
    }
    return true;
}

/* Room for one more item, in the item array and (for a socket) in the
 * ready list, which a signalling thread must never have to grow. */
static int reserve(zl_poller *p, bool socket)
{
    if (p->count == p->capacity) {
        size_t cap = p->capacity ? p->capacity * 2 : 16;
        zl_poller_item **grown = realloc(p->items, cap * sizeof *grown);
        if (!grown)
            goto nomem;
        p->items = grown;
        p->capacity = cap;
    }
    size_t sockets = p->count - p->fd_count + (socket ? 1 : 0);
    if (sockets > p->ready_capacity) {
        size_t cap = p->capacity;
        uv_mutex_lock(&p->lock);
        zl_poller_item **grown = realloc(p->ready, cap * sizeof *grown);
        if (grown) {
            p->ready = grown;
            p->ready_capacity = cap;
        }
        uv_mutex_unlock(&p->lock);
        if (!grown)
            goto nomem;
    }
    return 0;
nomem:
    errno = ENOMEM;
    return -1;
}

static zl_poller_item *add_item(zl_poller *p, zl_socket *s, zlink_fd_t fd,
                                void *user_data, short events)
{
    if (reserve(p, s != NULL) != 0)
        return NULL;
    zl_poller_item *item = calloc(1, sizeof *item);
    if (!item) {
        errno = ENOMEM;
        return NULL;
    }
    item->poller = p;
    item->socket = s;
    item->fd = fd;
    item->user_data = user_data;
    item->events = events;
    p->items[p->count++] = item;
    return item;
}

static void remove_item(zl_poller *p, zl_poller_item *item)
{
    if (item->socket && !item->closed)
        unlink_item(item->socket, item);
    uv_mutex_lock(&p->lock);
    unqueue_locked(p, item);
    settle_signal_locked(p);
    uv_mutex_unlock(&p->lock);
    for (size_t i = 0; i < p->count; i++) {
        if (p->items[i] == item) {
            p->items[i] = p->items[--p->count];
            break;
        }
    }
    if (!item->socket)
        p->fd_count--;
    free(item);
}

int zlink_poller_add(void *handle, void *socket, void *user_data, short events)
{
    zl_poller *p = poller_from_handle(handle);
    if (!p)
        return -1;
    zl_socket *s = zl_socket_from_handle(socket);
    if (!s || !events_valid(events))
        return -1;
    if (find(p, s, 0)) {
        errno = EINVAL;
        return -1;
    }
    zl_poller_item *item = add_item(p, s, 0, user_data, events);
    if (!item)
        return -1;
    if (link_item(s, item) != 0) {
        int err = errno;
        item->closed = true; /* nothing to unlink */
        remove_item(p, item);
        errno = err;
        return -1;
    }
    /* Whatever s is ready for now, the next wait finds out. */
    queue(p, item);
    return 0;
}

/* The invalid handle is EBADF to every fd call, as in libzmq. */
static bool fd_valid(zlink_fd_t fd)
{
    if (fd != (zlink_fd_t)-1)
        return true;
    errno = EBADF;
    return false;
}

int zlink_poller_add_fd(void *handle, zlink_fd_t fd, void *user_data,
                        short events)
{
    zl_poller *p = poller_from_handle(handle);
    if (!p || !fd_valid(fd))
        return -1;
    if (!events_valid(events))
        return -1;
    if (find(p, NULL, fd)) {
        errno = EINVAL;
        return -1;
    }
    if (!add_item(p, NULL, fd, user_data, events))
        return -1;
    p->fd_count++;
    return 0;
}

/* The item of a socket handle: a closed socket is still found by its
 * address, so that it can be removed. */
static zl_poller_item *find_socket(zl_poller *p, void *socket)
{
    zl_poller_item *item = socket ? find(p, socket, 0) : NULL;
    if (item)
        return item;
    if (zl_socket_from_handle(socket))
        errno = EINVAL;
    return NULL;
}

int zlink_poller_modify(void *handle, void *socket, short events)
{
    zl_poller *p = poller_from_handle(handle);
    if (!p)
        return -1;
    zl_poller_item *item = find_socket(p, socket);
    if (!item || !events_valid(events))
        return -1;
    item->events = events;
    queue(p, item);
    return 0;
}

int zlink_poller_remove(void *handle, void *socket)
{
    zl_poller *p = poller_from_handle(handle);
    if (!p)
        return -1;
    zl_poller_item *item = find_socket(p, socket);
    if (!item)
        return -1;
    remove_item(p, item);
    return 0;
}

int zlink_poller_modify_fd(void *handle, zlink_fd_t fd, short events)
{
    zl_poller *p = poller_from_handle(handle);
    if (!p || !fd_valid(fd))
        return -1;
    if (!events_valid(events))
        return -1;
    zl_poller_item *item = find(p, NULL, fd);
    if (!item) {
        errno = EINVAL;
        return -1;
    }
    item->events = events;
    return 0;
}

int zlink_poller_remove_fd(void *handle, zlink_fd_t fd)
{
    zl_poller *p = poller_from_handle(handle);
    if (!p || !fd_valid(fd))
        return -1;
    zl_poller_item *item = find(p, NULL, fd);
    if (!item) {
        errno = EINVAL;
        return -1;
    }
    remove_item(p, item);
    return 0;
}

/* ---- waiting ---- */

static void put_event(zlink_poller_event_t *event, const zl_poller_item *item,
                      short events)
{
    event->socket = item->socket;
    /* zmq_poller(3): a socket's event carries the invalid socket. */
    event->fd = item->socket ? (zlink_fd_t)-1 : item->fd;
    event->user_data = item->user_data;
    event->events = events;
}

/* Takes the ready list, reports up to n of its sockets, and puts back every
 * one still ready (and any it had no room to report). Returns how many it
 * reported, or -1 (ETERM, ENOTSOCK). With events NULL, reports nothing and
 * puts back the ready ones only. */
static int check_ready(zl_poller *p, zlink_poller_event_t *events, int n)
{
    uv_mutex_lock(&p->lock);
    size_t taken = p->ready_count;
    if (taken > p->batch_capacity) {
        zl_poller_item **grown =
            realloc(p->batch, p->ready_capacity * sizeof *grown);
        if (!grown) {
            uv_mutex_unlock(&p->lock);
            errno = ENOMEM;
            return -1;
        }
        p->batch = grown;
        p->batch_capacity = p->ready_capacity;
    }
    for (size_t i = 0; i < taken; i++) {
        p->batch[i] = p->ready[i];
        p->batch[i]->ready_slot = 0;
    }
    p->ready_count = 0;
    uv_mutex_unlock(&p->lock);

    int found = 0, rc = 0;
    size_t kept = 0;
    for (size_t i = 0; i < taken; i++) {
        zl_poller_item *item = p->batch[i];
        bool keep = true;
        if (rc == 0 && item->closed) {
            errno = ENOTSOCK;
            rc = -1;
        } else if (rc == 0 && zl_ctx_terminating(item->socket->ctx)) {
            errno = ETERM;
            rc = -1;
        } else if (rc == 0 && (!events || found < n)) {
            short ready =
                (short)(zl_socket_events_of(item->socket, item->events) &
                        item->events);
            keep = ready != 0;
            if (ready && events)
                put_event(&events[found++], item, ready);
        }
        if (keep)
            p->batch[kept++] = item;
    }

    uv_mutex_lock(&p->lock);
    for (size_t i = 0; i < kept; i++)
        queue_locked(p, p->batch[i]);
    settle_signal_locked(p);
    uv_mutex_unlock(&p->lock);
    return rc < 0 ? -1 : found;
}

static short from_os_events(short revents, short wanted)
{
    short events = 0;
    if (revents & ZL_OS_POLLIN)
        events |= ZLINK_POLLIN;
    if (revents & ZL_OS_POLLOUT)
        events |= ZLINK_POLLOUT;
    if (revents & ZL_OS_POLLERR)
        events |= ZLINK_POLLERR;
    if (revents & ZL_OS_POLLPRI)
        events |= ZLINK_POLLPRI;
    return (short)(events & (wanted | ZLINK_POLLERR));
}

/* The one socket whose connection a sleeping wait watches, as zlink_poll's
 * does (poll.c): its input wakes this thread instead of the I/O thread,
 * and a message read meanwhile is held for the next receive. The engine
 * raises the socket's own sleeper when it must take the connection back;
 * commands still reach the wait through the signaler. */
typedef struct poller_watch {
    zl_poller_item *item; /* NULL: none */
    zl_pipe *pipe;        /* NULL: neither watched nor asked for */
    bool connection;      /* watched: its OS socket is polled */
    zl_os_socket os_socket;
    bool readable; /* it had input, and nothing else woke the wait */
} poller_watch;

/* The item whose connection the sleep may watch: the one socket waited on
 * for input that may read its connection itself, in a poller of no more
 * sockets than a poll's default; none with two or more candidates
 * (poll.c, watch_candidate). Called once sleep_begins found the list
 * empty: no item's socket is closed then, since a closed one stays
 * queued. */
static zl_poller_item *watch_candidate(const zl_poller *p)
{
    if (p->count - p->fd_count > ZLINK_POLLITEMS_DFLT)
        return NULL;
    zl_poller_item *found = NULL;
    for (size_t i = 0; i < p->count; i++) {
        zl_poller_item *item = p->items[i];
        if (!item->socket || !(item->events & ZLINK_POLLIN) ||
            !zl_socket_may_watch_connection(item->socket))
            continue;
        if (found)
            return NULL;
        found = item;
    }
    return found;
}

static void watch_begins(zl_poller *p, poller_watch *w)
{
    *w = (poller_watch){.item = watch_candidate(p)};
    if (!w->item)
        return;
    zl_socket *s = w->item->socket;
    w->pipe = zl_socket_watch_connection(s, &s->own_sleeper, &w->os_socket,
                                         &w->connection);
}

/* After the sleep: a socket that holds a message now is queued, for the
 * next look to report; so is one whose input was left unread, which may
 * wait behind an older message in its pipe (socket_direct_recv.c). */
static void watch_ends(zl_poller *p, const poller_watch *w)
{
    if (!w->pipe)
        return;
    bool held =
        zl_socket_unwatch_connection(w->item->socket, w->pipe, w->readable);
    if (held || w->readable)
        queue(p, w->item);
}

/* One OS poll over the signaler, the raw fds and the connection watched;
 * appends the fds' events after the found sockets' ones. Returns the new
 * total, or -1. */
static int poll_fds(zl_poller *p, zlink_poller_event_t *events, int n,
                    int found, int wait_ms, poller_watch *w)
{
    size_t want = p->fd_count + 3;
    if (want > p->fds_capacity) {
        zl_os_pollfd *grown = realloc(p->fds, want * sizeof *grown);
        if (!grown) {
            errno = ENOMEM;
            return -1;
        }
        p->fds = grown;
        p->fds_capacity = want;
    }
    size_t k = 1;
    p->fds[0] = (zl_os_pollfd){zl_signaler_fd(&p->signaler), ZL_OS_POLLIN, 0};
    for (size_t i = 0; i < p->count; i++) {
        zl_poller_item *item = p->items[i];
        if (item->socket)
            continue;
        short os = 0;
        if (item->events & ZLINK_POLLIN)
            os |= ZL_OS_POLLIN;
        if (item->events & ZLINK_POLLOUT)
            os |= ZL_OS_POLLOUT;
        if (item->events & ZLINK_POLLPRI)
            os |= ZL_OS_POLLPRI;
        p->fds[k++] = (zl_os_pollfd){(zl_os_socket)item->fd, os, 0};
    }
    size_t watched = k;
    if (w->connection) {
        zl_sleeper *sleeper = &w->item->socket->own_sleeper;
        p->fds[k++] = (zl_os_pollfd){zl_sleeper_fd(sleeper), ZL_OS_POLLIN, 0};
        p->fds[k++] = (zl_os_pollfd){w->os_socket, ZL_OS_POLLIN, 0};
    }
    int rc = zl_os_poll(p->fds, (int)k, wait_ms);
    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    if (w->connection) {
        bool woken = p->fds[0].revents || p->fds[watched].revents;
        if (p->fds[watched].revents)
            zl_sleeper_woken(&w->item->socket->own_sleeper);
        w->readable = !woken && p->fds[watched + 1].revents;
    }
    k = 1;
    for (size_t i = 0; i < p->count && found < n; i++) {
        zl_poller_item *item = p->items[i];
        if (item->socket)
            continue;
        short ready = from_os_events(p->fds[k++].revents, item->events);
        if (ready)
            put_event(&events[found++], item, ready);
    }
    return found;
}

/* A wait is about to sleep on the signaler: from now on a socket that
 * signals raises it. False when one signalled since the last look (the
 * list is not empty): look again instead. */
static bool sleep_begins(zl_poller *p)
{
    uv_mutex_lock(&p->lock);
    bool empty = p->ready_count == 0;
    if (empty)
        p->sleeping = true;
    uv_mutex_unlock(&p->lock);
    return empty;
}

/* The wait woke: signals stop raising the signaler again, unless it was
 * given out. A raise that came meanwhile is lowered by the next look that
 * empties the list. */
static void sleep_ends(zl_poller *p)
{
    uv_mutex_lock(&p->lock);
    p->sleeping = false;
    uv_mutex_unlock(&p->lock);
}

/* libzmq's answers for a poller with nothing to wait on: EFAULT rather
 * than sleep forever, else EAGAIN once the timeout has passed. */
static int wait_on_nothing(long timeout)
{
    if (timeout < 0) {
        errno = EFAULT;
        return -1;
    }
    if (timeout > 0)
        uv_sleep((unsigned)timeout);
    errno = EAGAIN;
    return -1;
}

static bool has_events(const zl_poller *p)
{
    for (size_t i = 0; i < p->count; i++)
        if (p->items[i]->events)
            return true;
    return false;
}

/* Milliseconds left before deadline_ms, or -1 for none (timeout < 0). */
static int remaining_ms(long timeout, uint64_t deadline_ms)
{
    if (timeout < 0)
        return -1;
    uint64_t now = uv_hrtime() / 1000000u;
    return now >= deadline_ms ? 0 : (int)(deadline_ms - now);
}

int zlink_poller_wait_all(void *handle, zlink_poller_event_t *events,
                          int n_events, long timeout)
{
    zl_poller *p = poller_from_handle(handle);
    if (!p)
        return -1;
    if (!events) {
        errno = EFAULT;
        return -1;
    }
    if (n_events < 0) {
        errno = EINVAL;
        return -1;
    }
    if (n_events == 0 || !has_events(p))
        return wait_on_nothing(timeout);
    uint64_t deadline =
        timeout > 0 ? uv_hrtime() / 1000000u + (uint64_t)timeout : 0;
    for (;;) {
        int found = check_ready(p, events, n_events);
        if (found < 0)
            return -1;
        if (found == 0)
            zl_direct_note_pause();
        int wait = found > 0 ? 0 : remaining_ms(timeout, deadline);
        if (wait != 0 && !sleep_begins(p))
            continue; /* a socket signalled since the look: look again */
        poller_watch watch = {0};
        if (wait != 0)
            watch_begins(p, &watch);
        int rc = 0;
        if (p->fd_count > 0 || watch.connection)
            found = poll_fds(p, events, n_events, found, wait, &watch);
        else if (wait != 0)
            rc = zl_signaler_wait(&p->signaler, wait);
        if (wait != 0) {
            sleep_ends(p);
            watch_ends(p, &watch);
        }
        if (rc != 0 && rc != -EAGAIN) {
            errno = -rc;
            return -1;
        }
        if (found < 0)
            return -1;
        if (found > 0) {
            memset(events + found, 0,
                   (size_t)(n_events - found) * sizeof *events);
            return found;
        }
        if (wait == 0) {
            errno = EAGAIN;
            return -1;
        }
        /* A socket signalled (or the time is up): look again. */
    }
}

int zlink_poller_wait(void *handle, zlink_poller_event_t *event, long timeout)
{
    int rc = zlink_poller_wait_all(handle, event, 1, timeout);
    if (rc < 0 && event) {
        memset(event, 0, sizeof *event);
        event->fd = (zlink_fd_t)-1;
    }
    return rc < 0 ? -1 : 0;
}
