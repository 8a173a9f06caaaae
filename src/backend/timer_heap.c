/* timer_heap.c — the loop's timer min-heap and the zl_timer_* calls built on
 * it, shared by every backend. */
#include "timer_heap.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

enum { ZL_TIMER_HEAP_MIN_CAPACITY = 16 };

static int entry_before(const struct zl_timer_heap_entry *a,
                        const struct zl_timer_heap_entry *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void place(struct zl_timer_heap *heap, size_t pos,
                  struct zl_timer_heap_entry entry)
{
    heap->entries[pos] = entry;
    entry.timer->heap_index = pos + 1;
}

static void sift_up(struct zl_timer_heap *heap, size_t pos)
{
    struct zl_timer_heap_entry entry = heap->entries[pos];
    while (pos > 0) {
        size_t parent = (pos - 1) / 2;
        if (!entry_before(&entry, &heap->entries[parent]))
            break;
        place(heap, pos, heap->entries[parent]);
        pos = parent;
    }
    place(heap, pos, entry);
}

static void sift_down(struct zl_timer_heap *heap, size_t pos)
{
    struct zl_timer_heap_entry entry = heap->entries[pos];
    for (;;) {
        size_t child = 2 * pos + 1;
        if (child >= heap->count)
            break;
        if (child + 1 < heap->count &&
            entry_before(&heap->entries[child + 1], &heap->entries[child]))
            child++;
        if (!entry_before(&heap->entries[child], &entry))
            break;
        place(heap, pos, heap->entries[child]);
        pos = child;
    }
    place(heap, pos, entry);
}

static void heap_remove(struct zl_timer_heap *heap, zl_timer *timer)
{
    size_t pos = timer->heap_index - 1;
    timer->heap_index = 0;
    heap->count--;
    if (pos == heap->count)
        return;
    /* The last entry fills the hole; it may belong above or below it. */
    heap->entries[pos] = heap->entries[heap->count];
    if (pos > 0 &&
        entry_before(&heap->entries[pos], &heap->entries[(pos - 1) / 2]))
        sift_up(heap, pos);
    else
        sift_down(heap, pos);
}

static void heap_insert(struct zl_timer_heap *heap, zl_timer *timer)
{
    if (heap->count == heap->capacity) {
        size_t capacity =
            heap->capacity ? heap->capacity * 2 : ZL_TIMER_HEAP_MIN_CAPACITY;
        void *grown = realloc(heap->entries, capacity * sizeof *heap->entries);
        if (grown == NULL) {
            /* zl_timer_start cannot report failure, and a lost heartbeat
             * or handshake timeout would hang a connection silently. */
            fputs("zlink: out of memory arming a timer\n", stderr);
            abort();
        }
        heap->entries = grown;
        heap->capacity = capacity;
    }
    heap->entries[heap->count] = (struct zl_timer_heap_entry){
        .due = timer->due_ms, .seq = heap->next_seq++, .timer = timer};
    heap->count++;
    sift_up(heap, heap->count - 1);
}

void zl_timer_heap_init(struct zl_timer_heap *heap)
{
    *heap = (struct zl_timer_heap){0};
}

void zl_timer_heap_destroy(struct zl_timer_heap *heap)
{
    free(heap->entries);
    *heap = (struct zl_timer_heap){0};
}

int zl_timer_heap_timeout(const struct zl_timer_heap *heap, uint64_t now_ms,
                          int timeout_ms)
{
    if (heap->count == 0)
        return timeout_ms;
    uint64_t due = heap->entries[0].due;
    if (due <= now_ms)
        return 0;
    uint64_t wait = due - now_ms;
    if (timeout_ms >= 0 && wait > (uint64_t)timeout_ms)
        return timeout_ms;
    return wait > INT_MAX ? INT_MAX : (int)wait;
}

int zl_timer_heap_run(struct zl_timer_heap *heap, uint64_t now_ms)
{
    uint64_t started_before = heap->next_seq;
    int ran = 0;
    while (heap->count > 0) {
        struct zl_timer_heap_entry first = heap->entries[0];
        /* Ordered by (due, seq): a timer re-armed during this call is either
         * not due yet or sorts after every older timer due now. */
        if (first.due > now_ms || first.seq >= started_before)
            break;
        heap_remove(heap, first.timer);
        first.timer->cb(first.timer);
        ran++;
    }
    return ran;
}

void zl_timer_start(zl_loop *loop, zl_timer *timer, uint64_t after_ms)
{
    struct zl_timer_heap *heap = zl_backend_timer_heap(loop);
    if (timer->heap_index != 0)
        heap_remove(heap, timer);
    uint64_t now = zl_loop_now(loop);
    timer->due_ms = after_ms > UINT64_MAX - now ? UINT64_MAX : now + after_ms;
    heap_insert(heap, timer);
}

void zl_timer_stop(zl_loop *loop, zl_timer *timer)
{
    if (timer->heap_index != 0)
        heap_remove(zl_backend_timer_heap(loop), timer);
}

int zl_timer_active(const zl_timer *timer)
{
    return timer->heap_index != 0;
}
