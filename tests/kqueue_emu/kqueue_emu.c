/* kqueue_emu.c — a test-only kqueue over epoll, so that the kqueue backend's
 * logic runs on Linux. It proves that logic against kqueue's documented
 * semantics (FreeBSD kqueue(2)), not against a BSD or macOS kernel.
 *
 * The model is the kernel's own: a knote per (ident, filter) that becomes
 * active when its source may have changed, and whose condition is evaluated
 * when kevent collects it. epoll supplies the "may have changed": each
 * filter has its own epoll set (so a write wakeup never activates a read
 * knote), edge-triggered, nested in the epoll descriptor that is the kqueue.
 * Collection then asks the descriptor itself (poll, FIONREAD), so:
 *  - EV_CLEAR: the knote goes inactive when reported and returns only after
 *    a new edge; without it, an active knote is reported while its
 *    condition holds (level);
 *  - EV_ONESHOT deletes the knote once reported, EV_DISPATCH disables it;
 *  - EV_ENABLE/EV_DISABLE keep the knote, and activity seen while disabled
 *    is reported on enable;
 *  - EVFILT_READ: data is the bytes waiting (FIONREAD), or the accept
 *    backlog of a listening socket; EV_EOF once the read side is shut,
 *    with the socket error in fflags;
 *  - EVFILT_WRITE: data is the room in the send buffer; EV_EOF when nothing
 *    more can be sent;
 *  - EVFILT_USER: NOTE_TRIGGER, and NOTE_FFNOP/FFAND/FFOR/FFCOPY on the low
 *    24 bits of fflags;
 *  - change errors as EV_ERROR events (always with EV_RECEIPT), or -1 and
 *    errno when the event list has no room.
 * Linux cannot read a socket's pending error without clearing it: the
 * emulation keeps the error it took and reports it in every later EV_EOF of
 * that descriptor, so recv and SO_ERROR then see none. One global lock
 * guards every kqueue; it is not held while waiting. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/event.h>
#undef close

#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

enum { FILTER_READ, FILTER_WRITE, FILTER_USER, FILTER_COUNT };

struct knote {
    struct kevent kev; /* ident, filter, flags as added, udata, user data */
    struct knote *active_prev, *active_next;
    struct knote *user_next; /* EVFILT_USER knotes of the kqueue */
    bool active;
    bool enabled;
    bool triggered; /* EVFILT_USER */
};

struct emu_fd {
    struct knote *note[2]; /* FILTER_READ, FILTER_WRITE */
    int error;             /* socket error taken from the descriptor */
};

struct emu_kq {
    int fd;             /* the kqueue descriptor: an epoll set of the rest */
    int set[2];         /* per-filter epoll sets of the descriptors */
    int user_fd;        /* eventfd: a user event was triggered */
    struct emu_fd *fds; /* by descriptor */
    int fd_cap;
    struct knote active; /* sentinel of the active list */
    struct knote *user;
};

static pthread_mutex_t emu_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_kq **kqs;
static int kq_count;
static int kq_cap;

static int filter_index(short filter)
{
    switch (filter) {
    case EVFILT_READ:
        return FILTER_READ;
    case EVFILT_WRITE:
        return FILTER_WRITE;
    case ZL_KQEMU_EVFILT_USER:
        return FILTER_USER;
    default:
        return -1;
    }
}

static struct emu_kq *find_kq(int fd)
{
    for (int i = 0; i < kq_count; i++)
        if (kqs[i]->fd == fd)
            return kqs[i];
    return NULL;
}

/* ---- the active list ---- */

static void activate(struct emu_kq *kq, struct knote *kn)
{
    if (kn->active)
        return;
    kn->active = true;
    kn->active_prev = kq->active.active_prev;
    kn->active_next = &kq->active;
    kq->active.active_prev->active_next = kn;
    kq->active.active_prev = kn;
}

static void deactivate(struct knote *kn)
{
    if (!kn->active)
        return;
    kn->active = false;
    kn->active_prev->active_next = kn->active_next;
    kn->active_next->active_prev = kn->active_prev;
}

/* ---- knotes ---- */

static struct emu_fd *fd_slot(struct emu_kq *kq, int fd, bool grow)
{
    if (fd < 0)
        return NULL;
    if (fd >= kq->fd_cap) {
        if (!grow)
            return NULL;
        int cap = kq->fd_cap ? kq->fd_cap : 64;
        while (cap <= fd)
            cap *= 2;
        struct emu_fd *fds = realloc(kq->fds, (size_t)cap * sizeof *fds);
        if (!fds)
            return NULL;
        memset(fds + kq->fd_cap, 0, (size_t)(cap - kq->fd_cap) * sizeof *fds);
        kq->fds = fds;
        kq->fd_cap = cap;
    }
    return &kq->fds[fd];
}

static struct knote **user_link(struct emu_kq *kq, uintptr_t ident)
{
    struct knote **at = &kq->user;
    while (*at && (*at)->kev.ident != ident)
        at = &(*at)->user_next;
    return at;
}

static struct knote *find_knote(struct emu_kq *kq, const struct kevent *kev)
{
    int f = filter_index(kev->filter);
    if (f == FILTER_USER)
        return *user_link(kq, kev->ident);
    struct emu_fd *slot = fd_slot(kq, (int)kev->ident, false);
    return slot ? slot->note[f] : NULL;
}

static void drop_knote(struct emu_kq *kq, struct knote *kn)
{
    int f = filter_index(kn->kev.filter);
    deactivate(kn);
    if (f == FILTER_USER) {
        *user_link(kq, kn->kev.ident) = kn->user_next;
    } else {
        int fd = (int)kn->kev.ident;
        epoll_ctl(kq->set[f], EPOLL_CTL_DEL, fd, NULL);
        kq->fds[fd].note[f] = NULL;
        if (!kq->fds[fd].note[0] && !kq->fds[fd].note[1])
            kq->fds[fd].error = 0;
    }
    free(kn);
}

/* ---- conditions, evaluated at collection as the kernel's f_event ---- */

static bool is_listening(int fd)
{
    int on = 0;
    socklen_t len = sizeof on;
    return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on;
}

/* The accept backlog: exact for TCP (the LISTEN state's unacked count),
 * "at least one" for other families. */
static intptr_t backlog(int fd)
{
    struct tcp_info info;
    socklen_t len = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
        info.tcpi_unacked > 0)
        return (intptr_t)info.tcpi_unacked;
    return 1;
}

static int take_error(struct emu_kq *kq, int fd, short revents)
{
    struct emu_fd *slot = &kq->fds[fd];
    if (revents & POLLERR) {
        int error = 0;
        socklen_t len = sizeof error;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error)
            slot->error = error;
    }
    return slot->error;
}

/* Fills out and returns true when kn's condition holds now. */
static bool evaluate(struct emu_kq *kq, struct knote *kn, struct kevent *out)
{
    *out = kn->kev;
    out->flags = kn->kev.flags & (EV_ONESHOT | EV_CLEAR | EV_DISPATCH);
    out->fflags = 0;
    out->data = 0;
    if (kn->kev.filter == ZL_KQEMU_EVFILT_USER) {
        out->fflags = kn->kev.fflags & NOTE_FFLAGSMASK;
        out->data = kn->kev.data;
        return kn->triggered;
    }
    int fd = (int)kn->kev.ident;
    bool read = kn->kev.filter == EVFILT_READ;
    struct pollfd pfd = {.fd = fd,
                         .events = read ? POLLIN | POLLRDHUP : POLLOUT};
    if (poll(&pfd, 1, 0) <= 0 || (pfd.revents & POLLNVAL))
        return false;
    if (read) {
        if (!(pfd.revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)))
            return false;
        int waiting = 0;
        if (is_listening(fd))
            out->data = backlog(fd);
        else if (ioctl(fd, FIONREAD, &waiting) == 0)
            out->data = waiting;
        if (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)) {
            out->flags |= EV_EOF;
            out->fflags = (unsigned)take_error(kq, fd, pfd.revents);
        }
        return true;
    }
    if (!(pfd.revents & (POLLOUT | POLLHUP | POLLERR)))
        return false;
    int sndbuf = 0, queued = 0;
    socklen_t len = sizeof sndbuf;
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) == 0 &&
        ioctl(fd, SIOCOUTQ, &queued) == 0 && sndbuf > queued)
        out->data = sndbuf - queued;
    if (pfd.revents & (POLLHUP | POLLERR)) {
        out->flags |= EV_EOF;
        out->fflags = (unsigned)take_error(kq, fd, pfd.revents);
    }
    return true;
}

/* ---- changes ---- */

static void user_fflags(struct knote *kn, unsigned int fflags)
{
    unsigned int value = fflags & NOTE_FFLAGSMASK;
    unsigned int *have = &kn->kev.fflags;
    switch (fflags & NOTE_FFCTRLMASK) {
    case NOTE_FFAND:
        *have &= value;
        break;
    case NOTE_FFOR:
        *have |= value;
        break;
    case NOTE_FFCOPY:
        *have = value;
        break;
    default: /* NOTE_FFNOP */
        break;
    }
}

/* A thread waiting in kevent on kq collects again. */
static void wake_waiters(struct emu_kq *kq)
{
    uint64_t one = 1;
    while (write(kq->user_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
}

static void trigger(struct emu_kq *kq, struct knote *kn)
{
    kn->triggered = true;
    activate(kq, kn);
    wake_waiters(kq);
}

/* As the kernel does on attach: a knote whose condition already holds is
 * active at once. */
static void check_now(struct emu_kq *kq, struct knote *kn)
{
    struct kevent ignored;
    if (evaluate(kq, kn, &ignored))
        activate(kq, kn);
}

static int add_knote(struct emu_kq *kq, const struct kevent *kev)
{
    int f = filter_index(kev->filter);
    struct knote *kn = calloc(1, sizeof *kn);
    if (!kn)
        return ENOMEM;
    kn->kev = *kev;
    kn->kev.fflags = 0;
    if (f == FILTER_USER) {
        user_fflags(kn, kev->fflags);
        kn->user_next = kq->user;
        kq->user = kn;
        return 0;
    }
    int fd = (int)kev->ident;
    struct emu_fd *slot = fd_slot(kq, fd, true);
    if (!slot) {
        free(kn);
        return ENOMEM;
    }
    struct epoll_event ev = {.data.fd = fd};
    ev.events = EPOLLET | (f == FILTER_READ ? EPOLLIN | EPOLLRDHUP : EPOLLOUT);
    if (epoll_ctl(kq->set[f], EPOLL_CTL_ADD, fd, &ev) != 0) {
        int err = errno == EPERM ? EINVAL : errno; /* not pollable */
        free(kn);
        return err;
    }
    slot->note[f] = kn;
    return 0;
}

static int apply_change(struct emu_kq *kq, const struct kevent *kev)
{
    int f = filter_index(kev->filter);
    if (f < 0)
        return EINVAL;
    if (f != FILTER_USER && fcntl((int)kev->ident, F_GETFD) < 0)
        return EBADF;
    struct knote *kn = find_knote(kq, kev);
    if (kev->flags & EV_DELETE) {
        if (!kn)
            return ENOENT;
        drop_knote(kq, kn);
        return 0;
    }
    if (kev->flags & EV_ADD) {
        if (!kn) {
            int err = add_knote(kq, kev);
            if (err)
                return err;
            kn = find_knote(kq, kev);
        } else {
            kn->kev.flags = kev->flags;
            kn->kev.udata = kev->udata;
            if (f == FILTER_USER)
                user_fflags(kn, kev->fflags);
        }
        kn->kev.flags = kev->flags & (EV_ONESHOT | EV_CLEAR | EV_DISPATCH);
        kn->enabled = !(kev->flags & EV_DISABLE);
    } else if (!kn) {
        return ENOENT;
    } else if (f == FILTER_USER) {
        user_fflags(kn, kev->fflags);
    }
    if (kev->flags & EV_DISABLE)
        kn->enabled = false;
    if ((kev->flags & EV_ENABLE) && !kn->enabled) {
        kn->enabled = true;
        /* Activity seen while disabled is reported now: a thread asleep
         * in kevent must look again. */
        if (kn->active)
            wake_waiters(kq);
    }
    if (f == FILTER_USER) {
        if (kev->fflags & NOTE_TRIGGER)
            trigger(kq, kn);
    } else if (kev->flags & EV_ADD) {
        check_now(kq, kn);
    }
    return 0;
}

/* ---- collection ---- */

/* Activates the knotes whose descriptors had an edge since the last look. */
static void take_edges(struct emu_kq *kq)
{
    struct epoll_event evs[64];
    for (int f = 0; f < 2; f++) {
        int n;
        do {
            n = epoll_wait(kq->set[f], evs, 64, 0);
            for (int i = 0; i < n; i++) {
                struct emu_fd *slot = fd_slot(kq, evs[i].data.fd, false);
                if (slot && slot->note[f])
                    activate(kq, slot->note[f]);
            }
        } while (n == 64);
    }
    uint64_t count;
    while (read(kq->user_fd, &count, sizeof count) > 0)
        ;
}

static int collect(struct emu_kq *kq, struct kevent *out, int room)
{
    int count = 0;
    take_edges(kq);
    struct knote *next;
    for (struct knote *kn = kq->active.active_next;
         kn != &kq->active && count < room; kn = next) {
        next = kn->active_next;
        if (!kn->enabled)
            continue; /* stays active: reported on EV_ENABLE */
        if (!evaluate(kq, kn, &out[count])) {
            deactivate(kn);
            continue;
        }
        count++;
        if (kn->kev.flags & EV_ONESHOT) {
            drop_knote(kq, kn);
            continue;
        }
        if (kn->kev.flags & EV_DISPATCH)
            kn->enabled = false;
        if (kn->kev.flags & EV_CLEAR) {
            deactivate(kn);
            if (kn->kev.filter == ZL_KQEMU_EVFILT_USER) {
                kn->triggered = false;
                kn->kev.fflags = 0;
            }
        } else {
            /* Level: to the back, so the other active knotes get their
             * turn when the list is longer than the room. */
            deactivate(kn);
            activate(kq, kn);
        }
    }
    return count;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int kevent(int kqfd, const struct kevent *changelist, int nchanges,
           struct kevent *eventlist, int nevents,
           const struct timespec *timeout)
{
    pthread_mutex_lock(&emu_lock);
    struct emu_kq *kq = find_kq(kqfd);
    if (!kq || nchanges < 0 || nevents < 0) {
        pthread_mutex_unlock(&emu_lock);
        errno = kq ? EINVAL : EBADF;
        return -1;
    }
    int errors = 0;
    for (int i = 0; i < nchanges; i++) {
        int err = apply_change(kq, &changelist[i]);
        if (!err && !(changelist[i].flags & EV_RECEIPT))
            continue;
        if (errors >= nevents) {
            pthread_mutex_unlock(&emu_lock);
            errno = err;
            return -1;
        }
        eventlist[errors] = changelist[i];
        eventlist[errors].flags = EV_ERROR;
        eventlist[errors].data = err;
        errors++;
    }
    if (errors > 0 || nevents == 0) {
        pthread_mutex_unlock(&emu_lock);
        return errors;
    }
    int64_t deadline = -1;
    if (timeout)
        deadline = now_ms() + (int64_t)timeout->tv_sec * 1000 +
                   (timeout->tv_nsec + 999999) / 1000000;
    int main_fd = kq->fd;
    for (;;) {
        int count = collect(kq, eventlist, nevents);
        pthread_mutex_unlock(&emu_lock);
        if (count > 0)
            return count;
        int wait_ms = -1;
        if (deadline >= 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0)
                return 0;
            wait_ms = left > 60000 ? 60000 : (int)left;
        }
        struct epoll_event ev;
        if (epoll_wait(main_fd, &ev, 1, wait_ms) < 0 && errno == EINTR)
            return -1;
        pthread_mutex_lock(&emu_lock);
        kq = find_kq(kqfd);
        if (!kq) {
            pthread_mutex_unlock(&emu_lock);
            errno = EBADF;
            return -1;
        }
    }
}

/* ---- kqueue and close ---- */

static void destroy_kq(struct emu_kq *kq)
{
    while (kq->active.active_next != &kq->active)
        deactivate(kq->active.active_next);
    while (kq->user)
        drop_knote(kq, kq->user);
    for (int fd = 0; fd < kq->fd_cap; fd++)
        for (int f = 0; f < 2; f++)
            free(kq->fds[fd].note[f]);
    free(kq->fds);
    close(kq->set[0]);
    close(kq->set[1]);
    close(kq->user_fd);
    free(kq);
}

int kqueue(void)
{
    struct emu_kq *kq = calloc(1, sizeof *kq);
    if (!kq)
        return -1;
    kq->active.active_next = kq->active.active_prev = &kq->active;
    kq->fd = epoll_create1(EPOLL_CLOEXEC);
    kq->set[0] = epoll_create1(EPOLL_CLOEXEC);
    kq->set[1] = epoll_create1(EPOLL_CLOEXEC);
    kq->user_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int inner[3] = {kq->set[0], kq->set[1], kq->user_fd};
    bool ok =
        kq->fd >= 0 && kq->set[0] >= 0 && kq->set[1] >= 0 && kq->user_fd >= 0;
    for (int i = 0; ok && i < 3; i++) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = inner[i]};
        ok = epoll_ctl(kq->fd, EPOLL_CTL_ADD, inner[i], &ev) == 0;
    }
    pthread_mutex_lock(&emu_lock);
    if (ok && kq_count == kq_cap) {
        int cap = kq_cap ? kq_cap * 2 : 8;
        struct emu_kq **grown = realloc(kqs, (size_t)cap * sizeof *grown);
        if (grown) {
            kqs = grown;
            kq_cap = cap;
        }
        ok = grown != NULL;
    }
    if (ok)
        kqs[kq_count++] = kq;
    pthread_mutex_unlock(&emu_lock);
    if (ok)
        return kq->fd;
    int err = errno;
    for (int i = 0; i < 3; i++)
        if (inner[i] >= 0)
            close(inner[i]);
    if (kq->fd >= 0)
        close(kq->fd);
    free(kq);
    errno = err;
    return -1;
}

int zl_kqemu_close(int fd)
{
    pthread_mutex_lock(&emu_lock);
    for (int i = 0; i < kq_count; i++) {
        struct emu_kq *kq = kqs[i];
        if (kq->fd == fd) {
            kqs[i--] = kqs[--kq_count];
            destroy_kq(kq);
            continue;
        }
        struct emu_fd *slot = fd_slot(kq, fd, false);
        for (int f = 0; slot && f < 2; f++)
            if (slot->note[f])
                drop_knote(kq, slot->note[f]);
    }
    pthread_mutex_unlock(&emu_lock);
    return close(fd);
}
