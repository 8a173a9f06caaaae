/* timers.c — zlink_timers_*: timers an application runs from its own loop
 * (libzmq's zmq_timers_*), on the monotonic clock. A game loop holds a few
 * of them, so they live in a plain array, looked through on each call. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <uv.h>

#include "zlink.h"

#define TIMERS_MAGIC 0x7a6c746du /* "zltm" */

typedef struct timer {
    int id;
    size_t interval;
    uint64_t due; /* ms on the uv_hrtime clock */
    zlink_timer_fn *handler;
    void *arg;
} timer;

typedef struct timers {
    uint32_t magic;
    int last_id;
    timer *list;
    size_t count, capacity;
} timers;

static uint64_t now_ms(void)
{
    return uv_hrtime() / 1000000u;
}

static timers *from_handle(void *handle)
{
    timers *t = handle;
    if (!t || t->magic != TIMERS_MAGIC) {
        errno = EFAULT;
        return NULL;
    }
    return t;
}

static timer *find(timers *t, int id)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->list[i].id == id)
            return &t->list[i];
    errno = EINVAL;
    return NULL;
}

void *zlink_timers_new(void)
{
    timers *t = calloc(1, sizeof *t);
    if (!t) {
        errno = ENOMEM;
        return NULL;
    }
    t->magic = TIMERS_MAGIC;
    return t;
}

int zlink_timers_destroy(void **timers_p)
{
    timers *t = timers_p ? from_handle(*timers_p) : NULL;
    if (!t) {
        errno = EFAULT;
        return -1;
    }
    t->magic = 0;
    free(t->list);
    free(t);
    *timers_p = NULL;
    return 0;
}

int zlink_timers_add(void *handle, size_t interval, zlink_timer_fn handler,
                     void *arg)
{
    timers *t = from_handle(handle);
    if (!t)
        return -1;
    if (!handler) {
        errno = EFAULT;
        return -1;
    }
    if (t->count == t->capacity) {
        size_t cap = t->capacity ? t->capacity * 2 : 8;
        timer *grown = realloc(t->list, cap * sizeof *grown);
        if (!grown) {
            errno = ENOMEM;
            return -1;
        }
        t->list = grown;
        t->capacity = cap;
    }
    /* Ids are never reused while the set lives, as in libzmq. */
    if (t->last_id == INT32_MAX) {
        errno = ENOMEM;
        return -1;
    }
    int id = ++t->last_id;
    t->list[t->count++] =
        (timer){id, interval, now_ms() + interval, handler, arg};
    return id;
}

int zlink_timers_cancel(void *handle, int timer_id)
{
    timers *t = from_handle(handle);
    timer *tm = t ? find(t, timer_id) : NULL;
    if (!tm)
        return -1;
    *tm = t->list[--t->count];
    return 0;
}

int zlink_timers_set_interval(void *handle, int timer_id, size_t interval)
{
    timers *t = from_handle(handle);
    timer *tm = t ? find(t, timer_id) : NULL;
    if (!tm)
        return -1;
    tm->interval = interval;
    tm->due = now_ms() + interval;
    return 0;
}

int zlink_timers_reset(void *handle, int timer_id)
{
    timers *t = from_handle(handle);
    timer *tm = t ? find(t, timer_id) : NULL;
    if (!tm)
        return -1;
    tm->due = now_ms() + tm->interval;
    return 0;
}

long zlink_timers_timeout(void *handle)
{
    timers *t = from_handle(handle);
    if (!t)
        return -1;
    if (t->count == 0)
        return -1;
    uint64_t first = t->list[0].due;
    for (size_t i = 1; i < t->count; i++)
        if (t->list[i].due < first)
            first = t->list[i].due;
    uint64_t now = now_ms();
    if (first <= now)
        return 0;
    /* long is 32 bits on Windows: a wait past 24 days would turn negative
     * ("no timer") or wrap short. */
    return first - now > (uint64_t)LONG_MAX ? LONG_MAX : (long)(first - now);
}

typedef struct due_timer {
    uint64_t due;
    int id;
} due_timer;

static int by_due(const void *a, const void *b)
{
    const due_timer *x = a, *y = b;
    if (x->due != y->due)
        return x->due < y->due ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int zlink_timers_execute(void *handle)
{
    timers *t = from_handle(handle);
    if (!t)
        return -1;
    uint64_t now = now_ms();
    size_t n = 0;
    for (size_t i = 0; i < t->count; i++)
        n += t->list[i].due <= now;
    if (n == 0)
        return 0;
    /* The timers due now, in due order, each run once and due again one
     * interval after now. Handlers may add, cancel or reschedule timers:
     * each is looked up again before it runs, and one added meanwhile
     * waits for the next call. */
    due_timer *due = malloc(n * sizeof *due);
    if (!due) {
        errno = ENOMEM;
        return -1;
    }
    n = 0;
    for (size_t i = 0; i < t->count; i++)
        if (t->list[i].due <= now)
            due[n++] = (due_timer){t->list[i].due, t->list[i].id};
    qsort(due, n, sizeof *due, by_due);
    for (size_t i = 0; i < n; i++) {
        timer *tm = NULL;
        for (size_t k = 0; k < t->count && !tm; k++)
            if (t->list[k].id == due[i].id)
                tm = &t->list[k];
        if (!tm || tm->due > now)
            continue; /* cancelled or rescheduled by an earlier handler */
        /* Rescheduled first, so that the handler's own reset, set_interval
         * or cancel wins. */
        tm->due = now + tm->interval;
        tm->handler(due[i].id, tm->arg);
    }
    free(due);
    return 0;
}
