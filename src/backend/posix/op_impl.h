/* op_impl.h — the private state of an op on the readiness backends (epoll,
 * kqueue), which each one's backend_impl.h takes. */
#ifndef ZL_POSIX_OP_IMPL_H
#define ZL_POSIX_OP_IMPL_H

#include <stddef.h>

struct zl_posix_io;

/* What the backend needs to finish an op later: the request, how far a write
 * got, and the result while it waits in the loop's completion queue. */
struct zl_op_impl {
    zl_op *next;            /* completion queue link */
    struct zl_posix_io *io; /* handle or listener the op was submitted on */
    size_t bytes;           /* written so far, then the result */
    int status;
    union {
        zl_read_req read;
        zl_write_cursor write;
    } req;
};

#endif
