/* timer_heap.h — the loop's timers: a binary min-heap of zl_timer ordered by
 * due time, shared by every backend. The backend owns one heap per loop and
 * hands it out through zl_backend_timer_heap(); zl_timer_start/stop/active
 * are implemented once, on top of it, in timer_heap.c. */
#ifndef ZL_TIMER_HEAP_H
#define ZL_TIMER_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

/* due is copied out of the timer so that sifting touches only the array;
 * seq keeps timers with the same due time in the order they were started. */
struct zl_timer_heap_entry {
    uint64_t due;
    uint64_t seq;
    zl_timer *timer;
};

struct zl_timer_heap {
    struct zl_timer_heap_entry *entries; /* entries[i] has heap_index i+1 */
    size_t count;
    size_t capacity;
    uint64_t next_seq;
};

void zl_timer_heap_init(struct zl_timer_heap *heap);
/* Frees the array. Timers still armed are not touched: their owners may
 * already have released them. */
void zl_timer_heap_destroy(struct zl_timer_heap *heap);
/* The wait a loop may block for: timeout_ms (-1 = forever) shortened to the
 * first due timer. */
int zl_timer_heap_timeout(const struct zl_timer_heap *heap, uint64_t now_ms,
                          int timeout_ms);
/* Runs the timers due at now_ms that were started before this call (a timer
 * re-armed from its own callback waits for the next call). Returns the number
 * of callbacks run. */
int zl_timer_heap_run(struct zl_timer_heap *heap, uint64_t now_ms);

/* Provided by the backend: the heap of a loop. */
struct zl_timer_heap *zl_backend_timer_heap(zl_loop *loop);

#endif
