/* loop.c — the loop the readiness backends share: references and closing,
 * the ready list, the completion queue, the deferred writes, the coalesced
 * wake, and the order of a run_once pass. Waiting and the events are each
 * backend's (poller.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "io_spin.h"
#include "readiness.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static struct zl_posix_io *io_of(struct zl_link *node)
{
    return (struct zl_posix_io *)((char *)node -
                                  offsetof(struct zl_posix_io, link));
}

/* ---- references, closing ---- */

void zl_posix_io_init(struct zl_posix_io *io, zl_loop *loop, int fd,
                      enum zl_posix_kind kind)
{
    *io = (struct zl_posix_io){
        .loop = loop, .fd = fd, .refs = 1, .kind = (uint8_t)kind};
    link_init(&io->link);
}

static void io_unref(struct zl_posix_io *io)
{
    if (--io->refs > 0)
        return;
    link_remove(&io->link);
    free(io);
}

void zl_posix_io_close(struct zl_posix_io *io)
{
    zl_posix_ready_remove(io);
    if (io->registered)
        zl_poller_unregister(io);
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

void zl_posix_ready_push(struct zl_posix_io *io)
{
    if (!link_linked(&io->link))
        link_append(&io->loop->ready, &io->link);
}

void zl_posix_ready_remove(struct zl_posix_io *io)
{
    if (!io->closed)
        link_remove(&io->link);
}

/* Only the ios that were ready when the pass began: one that becomes ready
 * again (a refilled buffer, an EINTR) waits for the next pass, behind the
 * others, so one busy peer cannot starve the rest. */
static void run_ready(zl_loop *loop)
{
    struct zl_link batch;
    link_take_all(&loop->ready, &batch);
    while (link_linked(&batch)) {
        struct zl_posix_io *io = io_of(batch.next);
        link_remove(&io->link);
        if (io->kind == ZL_POSIX_HANDLE)
            zl_poller_read_ready((zl_handle *)io);
        else
            zl_poller_listener_ready((zl_listener *)io);
    }
}

/* ---- completion queue ---- */

void zl_posix_complete(struct zl_posix_io *io, zl_op *op, int status,
                       size_t bytes)
{
    op->impl.io = io;
    io->refs++;
    zl_completion_queue_push(&io->loop->completed, op, status, bytes);
}

static int run_completion(zl_op *op)
{
    struct zl_posix_io *io = op->impl.io;
    op->cb(op, op->impl.status, op->impl.bytes);
    io_unref(io);
    return 1;
}

/* ---- wake ---- */

void zl_loop_wake(zl_loop *loop)
{
    /* Only the first wake since the loop last ran on_wake costs a syscall. */
    if (atomic_exchange(&loop->wake_pending, true))
        return;
    zl_poller_wake(loop);
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
    int rc = zl_poller_open(loop);
    if (rc != 0) {
        free(loop);
        return rc;
    }
    atomic_init(&loop->wake_pending, false);
    atomic_init(&loop->spin_ns, ZL_IO_SPIN_BEFORE_SLEEP_NS);
    atomic_init(&loop->waiting, false);
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
        struct zl_posix_io *io = io_of(loop->closing.next);
        link_remove(&io->link);
        free(io);
    }
    zl_timer_heap_destroy(&loop->timers);
    zl_poller_close(loop);
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

/* Reads first. Writes are submitted during the pass and sent once no read
 * is ready any more, or at the end of the pass at the latest; the syscall
 * count is the same. Writing at once, a loop that served both ends of a busy
 * connection wrote one batch per read round while the reader took two
 * rounds per large message: megabytes queued in the kernel and went cold
 * before they were read, and the reads (copies from cold memory) cost four
 * times as much as libzmq's. */
void zl_posix_write_defer(zl_handle *h)
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
    /* Writing only queues completions: nothing is deferred meanwhile. */
    while (link_linked(&loop->deferred_writes)) {
        zl_handle *h = handle_of_write_link(loop->deferred_writes.next);
        link_remove(&h->write_link);
        if (h->write_op && h->writable && !h->connecting) {
            zl_poller_write_ready(h);
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
    /* The I/O thread's spin (io_spin.h), only after a pass that read: an
     * application that was just given input may answer at once. After a
     * pass that only wrote, what comes next is the network's answer, which
     * a spin cannot see: it was delayed by the spin, and on a busy machine
     * by every yield in it. */
    if (timeout != 0 && loop->read_last_pass &&
        zl_io_spin_for_wake(
            &loop->wake_pending, &loop->spin,
            atomic_load_explicit(&loop->spin_ns, memory_order_relaxed)))
        return 0;
    return timeout;
}

/* Rounds of ready reads served in one pass before the readiness API is
 * asked again. */
#define ZL_POSIX_EXTRA_ROUNDS 8

bool zl_loop_is_waiting(zl_loop *loop)
{
    return atomic_load_explicit(&loop->waiting, memory_order_relaxed);
}

int zl_loop_run_once(zl_loop *loop, int timeout_ms)
{
    atomic_store_explicit(&loop->waiting, true, memory_order_relaxed);
    zl_poller_wait(loop, wait_timeout(loop, timeout_ms));
    atomic_store_explicit(&loop->waiting, false, memory_order_relaxed);
    loop->read_last_pass = link_linked(&loop->ready);
    int ran = 0;
    /* A handle whose read filled its buffer is ready again at once; serve a
     * few more rounds here rather than paying a wait(0) for each. Bounded,
     * so new events and timers still get their turn. Before a second write
     * in the same pass, collect the events the first one may have raised at
     * a peer on this loop: its drained handle hears of the data only from
     * the readiness API, and writing on without reading queued megabytes in
     * the kernel (see zl_posix_write_defer). */
    bool wrote = false;
    for (int round = 0; round <= ZL_POSIX_EXTRA_ROUNDS &&
                        (round == 0 || link_linked(&loop->ready) ||
                         !zl_completion_queue_empty(&loop->completed) ||
                         link_linked(&loop->deferred_writes));
         round++) {
        run_ready(loop);
        ran += zl_completion_queue_run(&loop->completed, run_completion);
        if (link_linked(&loop->ready) || !link_linked(&loop->deferred_writes))
            continue;
        if (wrote && zl_poller_wait(loop, 0) && link_linked(&loop->ready))
            continue; /* reads first, the writes next round */
        wrote |= run_deferred_writes(loop);
    }
    ran += run_wake(loop);
    ran += zl_timer_heap_run(&loop->timers, zl_loop_now(loop));
    /* Never carried past the pass: writes wait for reads, not forever.
     * Their completions run now: left queued, they made the next pass
     * begin with a wait(0) of their own, one syscall per reply sent. */
    if (run_deferred_writes(loop)) {
        ran += zl_completion_queue_run(&loop->completed, run_completion);
        run_deferred_writes(loop);
    }
    return ran;
}
