/* completion_queue.h — the loop's queue of finished ops, shared by every
 * backend: completions are queued where they happen and run later from
 * zl_loop_run_once, never inside the call that submitted the op (DESIGN.md
 * §3). Every backend's struct zl_op_impl has the fields it uses: next,
 * status and bytes. Inline: a push and a pop per message on the hot path. */
#ifndef ZL_COMPLETION_QUEUE_H
#define ZL_COMPLETION_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"

/* A FIFO linked through op->impl.next. */
struct zl_completion_queue {
    zl_op *head;
    zl_op *tail;
};

static inline void zl_completion_queue_init(struct zl_completion_queue *q)
{
    q->head = NULL;
    q->tail = NULL;
}

static inline bool
zl_completion_queue_empty(const struct zl_completion_queue *q)
{
    return q->head == NULL;
}

/* Queues op with its result, after those already queued. */
static inline void zl_completion_queue_push(struct zl_completion_queue *q,
                                            zl_op *op, int status, size_t bytes)
{
    op->impl.status = status;
    op->impl.bytes = bytes;
    op->impl.next = NULL;
    if (q->tail)
        q->tail->impl.next = op;
    else
        q->head = op;
    q->tail = op;
}

/* Runs run(op) for each op queued before this call, oldest first, and
 * returns the sum of what they return. Ops that run() queues wait for the
 * next call, so a callback never runs inside another one and one busy
 * handle cannot hold the loop. run may resubmit or free its op. */
static inline int zl_completion_queue_run(struct zl_completion_queue *q,
                                          int (*run)(zl_op *op))
{
    zl_op *op = q->head;
    int ran = 0;
    q->head = NULL;
    q->tail = NULL;
    while (op) {
        zl_op *next = op->impl.next; /* read before run() reuses the op */
        ran += run(op);
        op = next;
    }
    return ran;
}

#endif
