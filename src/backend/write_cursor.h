/* write_cursor.h — where a gather write stands in the owner's iovec array
 * (struct zl_write_cursor, backend.h), shared by every backend: how far the
 * kernel has taken it, and the buffers of the next send call. The owner's
 * array is never modified. */
#ifndef ZL_WRITE_CURSOR_H
#define ZL_WRITE_CURSOR_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"

static inline void zl_write_cursor_set(zl_write_cursor *c, const zl_iovec *iov,
                                       int n)
{
    c->iov = iov;
    c->count = n;
    c->index = 0;
    c->offset = 0;
}

static inline bool zl_write_cursor_done(const zl_write_cursor *c)
{
    return c->index >= c->count;
}

/* True when a stands before b in the same array. */
static inline bool zl_write_cursor_before(const zl_write_cursor *a,
                                          const zl_write_cursor *b)
{
    return a->index < b->index ||
           (a->index == b->index && a->offset < b->offset);
}

/* Moves the cursor past bytes the kernel reported sent, and past any empty
 * iovecs that follow them. */
void zl_write_cursor_advance(zl_write_cursor *c, size_t bytes);

/* One step of a walk over the unwritten bytes: the next piece from the
 * walk's position, at most max_len long, empty iovecs skipped, and the walk
 * moved past it. False at the end. A send call's buffers are built by
 * walking a copy of the cursor; the copy then marks where they end. */
bool zl_write_cursor_next(zl_write_cursor *walk, size_t max_len,
                          zl_iovec *piece);

#endif
