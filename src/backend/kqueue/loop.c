/* loop.c — the kqueue loop: waiting in kevent, the ready list, the deferred
 * completion queue, the coalesced EVFILT_USER (or pipe) wake, and the order
 * of a run_once pass. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "io_spin.h"
#include "kqueue_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* The wake's kevent: ident 0 of EVFILT_USER, or the wake pipe; its udata is
 * NULL, which no handle or listener has. */
#define ZL_KQ_WAKE_IDENT 0

static struct zl_kq_io *io_of(struct zl_link *node)
{
    return (struct zl_kq_io *)((char *)node - offsetof(struct zl_kq_io, link));
}

/* ---- references, registration, closing ---- */

void zl_kq_io_init(struct zl_kq_io *io, zl_loop *loop, int fd,
                   enum zl_kq_kind kind)
{
    *io = (struct zl_kq_io){
        .loop = loop, .fd = fd, .refs = 1, .kind = (uint8_t)kind};
    link_init(&io->link);
}

static void io_unref(struct zl_kq_io *io)
{
    if (--io->refs > 0)
        return;
    link_remove(&io->link);
    free(io);
}

int zl_kq_change(struct zl_kq_io *io, short filter, unsigned short flags)
{
    struct kevent change;
    EV_SET(&change, (uintptr_t)io->fd, filter, flags, 0, 0, io);
    while (kevent(io->loop->kq, &change, 1, NULL, 0, NULL) != 0) {
        if (errno != EINTR)
            return -errno;
    }
    return 0;
}

int zl_kq_register(struct zl_kq_io *io)
{
    int rc = zl_kq_change(io, EVFILT_READ, EV_ADD | EV_CLEAR);
    if (rc == 0)
        io->registered = true;
    return rc;
}

void zl_kq_io_close(struct zl_kq_io *io)
{
    zl_kq_ready_remove(io);
    /* Closing the descriptor removes its kevents. */
    close(io->fd);
    io->fd = -1;
    io->registered = false;
    io->closed = true;
    /* Kept on the closing list so that zl_loop_destroy can free it even if
     * its cancelled completions are never dispatched. */
    link_append(&io->loop->closing, &io->link);
    io_unref(io);
}

/* ---- ready list ---- */

void zl_kq_ready_push(struct zl_kq_io *io)
{
    if (!link_linked(&io->link))
        link_append(&io->loop->ready, &io->link);
}

void zl_kq_ready_remove(struct zl_kq_io *io)
{
    if (!io->closed)
        link_remove(&io->link);
}

/* Only the ios that were ready when the pass began: one that becomes ready
 * again waits for the next pass, behind the others, so one busy peer cannot
 * starve the rest. */
static void run_ready(zl_loop *loop)
{
    struct zl_link batch;
    link_take_all(&loop->ready, &batch);
    while (link_linked(&batch)) {
        struct zl_kq_io *io = io_of(batch.next);
        link_remove(&io->link);
        if (io->kind == ZL_KQ_HANDLE)
            zl_kq_read_ready((zl_handle *)io);
        else
            zl_kq_listener_ready((zl_listener *)io);
    }
}

/* ---- completion queue ---- */

void zl_kq_complete(struct zl_kq_io *io, zl_op *op, int status, size_t bytes)
{
    op->impl.io = io;
    io->refs++;
    zl_completion_queue_push(&io->loop->completed, op, status, bytes);
}

static int run_completion(zl_op *op)
{
    struct zl_kq_io *io = op->impl.io;
    op->cb(op, op->impl.status, op->impl.bytes);
    io_unref(io);
    return 1;
}

/* ---- wake ---- */

#ifdef EVFILT_USER
static int wake_open(zl_loop *loop)
{
    struct kevent change;
    EV_SET(&change, ZL_KQ_WAKE_IDENT, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0,
           NULL);
    return kevent(loop->kq, &change, 1, NULL, 0, NULL) == 0 ? 0 : -errno;
}

static void wake_close(zl_loop *loop) {}

static void wake_signal(zl_loop *loop)
{
    struct kevent change;
    EV_SET(&change, ZL_KQ_WAKE_IDENT, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
    while (kevent(loop->kq, &change, 1, NULL, 0, NULL) != 0 && errno == EINTR)
        ;
}

/* EV_CLEAR reset the trigger when it was reported. */
static void wake_drain(zl_loop *loop) {}
#else
/* A pipe where kqueue has no EVFILT_USER (OpenBSD before 7.6 among
 * others). */
static int wake_open(zl_loop *loop)
{
    if (pipe(loop->wake_pipe) != 0)
        return -errno;
    for (int i = 0; i < 2; i++) {
        fcntl(loop->wake_pipe[i], F_SETFD, FD_CLOEXEC);
        fcntl(loop->wake_pipe[i], F_SETFL, O_NONBLOCK);
    }
    struct kevent change;
    EV_SET(&change, (uintptr_t)loop->wake_pipe[0], EVFILT_READ, EV_ADD, 0, 0,
           NULL);
    if (kevent(loop->kq, &change, 1, NULL, 0, NULL) != 0) {
        int err = -errno;
        close(loop->wake_pipe[0]);
        close(loop->wake_pipe[1]);
        return err;
    }
    return 0;
}

static void wake_close(zl_loop *loop)
{
    close(loop->wake_pipe[0]);
    close(loop->wake_pipe[1]);
}

static void wake_signal(zl_loop *loop)
{
    char one = 1;
    /* EAGAIN: the pipe is full, so the loop will wake anyway. */
    while (write(loop->wake_pipe[1], &one, 1) < 0 && errno == EINTR)
        ;
}

static void wake_drain(zl_loop *loop)
{
    char buf[64];
    while (read(loop->wake_pipe[0], buf, sizeof buf) > 0)
        ;
}
#endif

void zl_loop_wake(zl_loop *loop)
{
    /* Only the first wake since the loop last ran on_wake costs a syscall. */
    if (atomic_exchange(&loop->wake_pending, true))
        return;
    wake_signal(loop);
}

static int run_wake(zl_loop *loop)
{
    /* Cleared before the callback (and after the wake was drained), so a
     * wake that races with on_wake signals again. The exchange also
     * acquires whatever the waking thread published before waking. */
    if (!atomic_load_explicit(&loop->wake_pending, memory_order_relaxed) ||
        !atomic_exchange(&loop->wake_pending, false) || !loop->on_wake)
        return 0;
    loop->on_wake(loop->wake_arg);
    return 1;
}

/* ---- loop ---- */

int zl_loop_create(zl_loop **out, zl_wake_cb on_wake, void *wake_arg)
{
    zl_loop *loop = calloc(1, sizeof *loop);
    if (!loop)
        return -ENOMEM;
    loop->kq = kqueue();
    if (loop->kq < 0) {
        int err = -errno;
        free(loop);
        return err;
    }
    /* kqueue descriptors are not inherited by a child anyway, but an exec
     * that comes before that fork's exit would keep the number busy. */
    fcntl(loop->kq, F_SETFD, FD_CLOEXEC);
    int rc = wake_open(loop);
    if (rc != 0) {
        close(loop->kq);
        free(loop);
        return rc;
    }
    atomic_init(&loop->wake_pending, false);
    atomic_init(&loop->spin_ns, ZL_IO_SPIN_BEFORE_SLEEP_NS);
    loop->on_wake = on_wake;
    loop->wake_arg = wake_arg;
    link_init(&loop->ready);
    link_init(&loop->closing);
    link_init(&loop->deferred_writes);
    zl_completion_queue_init(&loop->completed);
    zl_timer_heap_init(&loop->timers);
    *out = loop;
    return 0;
}

void zl_loop_destroy(zl_loop *loop)
{
    /* Ops still queued are dropped unseen (their owners may be gone); the
     * closed handles they kept alive are freed here instead. */
    while (link_linked(&loop->closing)) {
        struct zl_kq_io *io = io_of(loop->closing.next);
        link_remove(&io->link);
        free(io);
    }
    zl_timer_heap_destroy(&loop->timers);
    wake_close(loop);
    close(loop->kq);
    free(loop);
}

uint64_t zl_loop_now(zl_loop *loop)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct zl_timer_heap *zl_backend_timer_heap(zl_loop *loop)
{
    return &loop->timers;
}

/* ---- deferred writes ---- */

/* Reads first, as on epoll (epoll/loop.c says what writing at once cost):
 * writes submitted during a pass are sent once no read is ready any more,
 * or at the end of the pass at the latest. */
void zl_kq_write_defer(zl_handle *h)
{
    if (!link_linked(&h->write_link))
        link_append(&h->io.loop->deferred_writes, &h->write_link);
}

static zl_handle *handle_of_write_link(struct zl_link *node)
{
    return (zl_handle *)((char *)node - offsetof(zl_handle, write_link));
}

/* True when something was written. */
static bool run_deferred_writes(zl_loop *loop)
{
    bool wrote = false;
    while (link_linked(&loop->deferred_writes)) {
        zl_handle *h = handle_of_write_link(loop->deferred_writes.next);
        link_remove(&h->write_link);
        if (h->write_op && h->writable && !h->connecting) {
            zl_kq_write_ready(h);
            wrote = true;
        }
    }
    return wrote;
}

/* ---- waiting ---- */

void zl_loop_set_spin_budget(zl_loop *loop, uint32_t budget_ns)
{
    atomic_store_explicit(&loop->spin_ns, zl_io_spin_within(budget_ns),
                          memory_order_relaxed);
}

static int wait_timeout(zl_loop *loop, int timeout_ms)
{
    if (!zl_completion_queue_empty(&loop->completed) ||
        link_linked(&loop->ready))
        return 0;
    int timeout =
        zl_timer_heap_timeout(&loop->timers, zl_loop_now(loop), timeout_ms);
    /* The I/O thread's spin (io_spin.h). */
    if (timeout != 0 &&
        zl_io_spin_for_wake(
            &loop->wake_pending, &loop->spins_to_skip,
            atomic_load_explicit(&loop->spin_ns, memory_order_relaxed)))
        return 0;
    return timeout;
}

static void process_events(zl_loop *loop, int count)
{
    for (int i = 0; i < count; i++) {
        const struct kevent *ev = &loop->events[i];
        struct zl_kq_io *io = ev->udata;
        if (!io)
            wake_drain(loop);
        else if (io->kind == ZL_KQ_HANDLE)
            zl_kq_handle_event((zl_handle *)io, ev);
        else
            zl_kq_listener_event((zl_listener *)io, ev);
    }
}

/* kevent for at most timeout_ms (-1: no limit); the number of events. */
static int wait_events(zl_loop *loop, int timeout_ms)
{
    struct timespec ts;
    struct timespec *limit = NULL;
    if (timeout_ms >= 0) {
        ts.tv_sec = timeout_ms / 1000;
        ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
        limit = &ts;
    }
    int count =
        kevent(loop->kq, NULL, 0, loop->events, ZL_KQ_MAX_EVENTS, limit);
    if (count > 0)
        process_events(loop, count);
    return count > 0 ? count : 0;
}

/* Rounds of ready reads served in one pass before kevent is asked again,
 * as on epoll. */
#define ZL_KQ_EXTRA_ROUNDS 8

int zl_loop_run_once(zl_loop *loop, int timeout_ms)
{
    wait_events(loop, wait_timeout(loop, timeout_ms));
    int ran = 0;
    /* Before a second write in the same pass, collect the events the first
     * one may have raised at a peer on this loop (epoll/loop.c says why). */
    bool wrote = false;
    for (int round = 0; round <= ZL_KQ_EXTRA_ROUNDS &&
                        (round == 0 || link_linked(&loop->ready) ||
                         !zl_completion_queue_empty(&loop->completed) ||
                         link_linked(&loop->deferred_writes));
         round++) {
        run_ready(loop);
        ran += zl_completion_queue_run(&loop->completed, run_completion);
        if (link_linked(&loop->ready) || !link_linked(&loop->deferred_writes))
            continue;
        if (wrote && wait_events(loop, 0) > 0 && link_linked(&loop->ready))
            continue; /* reads first, the writes next round */
        wrote |= run_deferred_writes(loop);
    }
    ran += run_wake(loop);
    ran += zl_timer_heap_run(&loop->timers, zl_loop_now(loop));
    /* Never carried past the pass: writes wait for reads, not forever. */
    run_deferred_writes(loop);
    return ran;
}
