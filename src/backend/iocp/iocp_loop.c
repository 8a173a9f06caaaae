/* iocp_loop.c — the IOCP loop: one completion port per loop, drained in
 * batches, the deferred list for steps that finished inline, the coalesced
 * wake and the loop's timers. */
#include "iocp.h"

#include <limits.h>
#include <stdlib.h>

int zl_loop_create(zl_loop **out, zl_wake_cb on_wake, void *wake_arg)
{
    zl_loop *loop = calloc(1, sizeof *loop);
    if (loop == NULL)
        return -ENOMEM;
    /* One thread drains the port, so let the kernel run exactly one. */
    loop->port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
    if (loop->port == NULL) {
        int err = zl_iocp_errno_from_wsa((int)GetLastError());
        free(loop);
        return err;
    }
    loop->on_wake = on_wake;
    loop->wake_arg = wake_arg;
    atomic_init(&loop->wake_posted, 0);
    zl_completion_queue_init(&loop->deferred);
    zl_timer_heap_init(&loop->timers);
    *out = loop;
    return 0;
}

struct zl_timer_heap *zl_backend_timer_heap(zl_loop *loop)
{
    return &loop->timers;
}

uint64_t zl_loop_now(zl_loop *loop)
{
    (void)loop;
    /* QueryPerformanceCounter, not GetTickCount64: the tick is 15.6 ms,
     * coarser than a heartbeat test can tolerate. */
    static LARGE_INTEGER frequency;
    LARGE_INTEGER counter;
    if (frequency.QuadPart == 0)
        QueryPerformanceFrequency(&frequency); /* constant; races are benign */
    QueryPerformanceCounter(&counter);
    return (uint64_t)(counter.QuadPart / frequency.QuadPart) * 1000u +
           (uint64_t)(counter.QuadPart % frequency.QuadPart) * 1000u /
               (uint64_t)frequency.QuadPart;
}

void zl_loop_set_spin_budget(zl_loop *loop, uint32_t budget_ns)
{
    /* The IOCP loop never spins: it sleeps in GetQueuedCompletionStatusEx
     * at once. */
    (void)loop;
    (void)budget_ns;
}

bool zl_loop_is_waiting(zl_loop *loop)
{
    /* Only asked for direct sends, which IOCP does not make
     * (ZL_BACKEND_TRY_WRITE). */
    (void)loop;
    return false;
}

void zl_loop_wake(zl_loop *loop)
{
    /* Only the first wake since the loop last saw one posts a packet; the
     * loop clears the flag before it runs the callback, so a wake that races
     * with the callback posts again rather than getting lost. */
    if (atomic_exchange(&loop->wake_posted, 1) == 0)
        PostQueuedCompletionStatus(loop->port, 0, ZL_IOCP_KEY_WAKE, NULL);
}

zl_op *zl_iocp_op_of(OVERLAPPED *overlapped)
{
    return (zl_op *)((char *)overlapped - offsetof(zl_op, impl.overlapped));
}

void zl_iocp_defer(zl_loop *loop, zl_op *op, int status, size_t bytes)
{
    zl_completion_queue_push(&loop->deferred, op, status, bytes);
}

void zl_iocp_after_submit(zl_loop *loop, zl_op *op, bool ok, int err,
                          size_t bytes, bool skip_port_on_success)
{
    if (ok) {
        /* Without skip mode the port still gets a packet for an inline
         * success, and that packet is the one to act on. */
        if (skip_port_on_success)
            zl_iocp_defer(loop, op, 0, bytes);
        return;
    }
    if (err == WSA_IO_PENDING || err == ERROR_IO_PENDING)
        return;
    /* A call that fails at once queues no packet in either mode. */
    zl_iocp_defer(loop, op, zl_iocp_errno_from_wsa(err), 0);
}

static int run_step(zl_op *op)
{
    return op->impl.step(op, op->impl.status, op->impl.bytes);
}

/* Runs the steps deferred before this call; steps deferred while it runs
 * (a probe's follow-up read, a write's next batch) wait for the next pass,
 * so one busy handle cannot hold the loop. */
static int run_deferred(zl_loop *loop)
{
    return zl_completion_queue_run(&loop->deferred, run_step);
}

static DWORD wait_ms(zl_loop *loop, int timeout_ms)
{
    if (!zl_completion_queue_empty(&loop->deferred))
        return 0;
    int wait =
        zl_timer_heap_timeout(&loop->timers, zl_loop_now(loop), timeout_ms);
    return wait < 0 ? INFINITE : (DWORD)wait;
}

/* Runs the steps of up to one batch of port packets, then the deferred
 * list. Returns the owner callbacks run; *woken tells of a wake packet. */
static int drain_port(zl_loop *loop, DWORD wait, bool *woken)
{
    OVERLAPPED_ENTRY entries[ZL_IOCP_BATCH];
    ULONG count = 0;
    if (!GetQueuedCompletionStatusEx(loop->port, entries, ZL_IOCP_BATCH, &count,
                                     wait, FALSE))
        count = 0; /* WAIT_TIMEOUT: nothing arrived */
    int ran = 0;
    for (ULONG i = 0; i < count; i++) {
        if (entries[i].lpCompletionKey == ZL_IOCP_KEY_WAKE) {
            *woken = true;
            continue;
        }
        zl_op *op = zl_iocp_op_of(entries[i].lpOverlapped);
        ran += op->impl.step(op,
                             zl_iocp_overlapped_status(entries[i].lpOverlapped),
                             entries[i].dwNumberOfBytesTransferred);
    }
    return ran + run_deferred(loop);
}

static int run_ready(zl_loop *loop, DWORD wait)
{
    bool woken = false;
    int ran = drain_port(loop, wait, &woken);
    if (woken) {
        atomic_store(&loop->wake_posted, 0);
        if (loop->on_wake != NULL)
            loop->on_wake(loop->wake_arg);
        ran++;
    }
    return ran + zl_timer_heap_run(&loop->timers, zl_loop_now(loop));
}

int zl_loop_run_once(zl_loop *loop, int timeout_ms)
{
    uint64_t deadline =
        zl_loop_now(loop) + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms);
    for (;;) {
        int ran = run_ready(loop, wait_ms(loop, timeout_ms));
        /* Internal steps (a probe answered, a write batch sent) run no
         * callback, and the wait can end a little before the first timer is
         * due by the performance counter: keep waiting until something
         * reaches an owner or the caller's timeout is spent. */
        if (ran > 0 || timeout_ms == 0)
            return ran;
        uint64_t now = zl_loop_now(loop);
        if (timeout_ms > 0) {
            if (now >= deadline)
                return 0;
            timeout_ms = (int)(deadline - now);
        }
    }
}

void zl_loop_destroy(zl_loop *loop)
{
    if (loop == NULL)
        return;
    /* Handles and listeners closed with ops still in the kernel are freed
     * only when those ops come back (the kernel writes their OVERLAPPEDs
     * until then). Cancelled I/O returns promptly, so collect it here,
     * bounded, without calling the owners back. */
    loop->destroying = true;
    bool woken = false;
    for (int i = 0; i < 100 && loop->closing > 0; i++)
        drain_port(loop, !zl_completion_queue_empty(&loop->deferred) ? 0 : 10,
                   &woken);
    CloseHandle(loop->port);
    zl_timer_heap_destroy(&loop->timers);
    free(loop);
}
