/* backend_impl.h — the kqueue backend's parts of the public backend types:
 * the private state of an op and the pipe signaler. Included by backend.h
 * after its typedefs. */
#ifndef ZL_KQUEUE_BACKEND_IMPL_H
#define ZL_KQUEUE_BACKEND_IMPL_H

#include <stddef.h>

#define ZL_BACKEND_NAME "kqueue"

struct zl_kq_io;

/* What the backend needs to finish an op later: the request, how far a write
 * got, and the result while it waits in the loop's completion queue. */
struct zl_op_impl {
    zl_op *next;         /* completion queue link */
    struct zl_kq_io *io; /* handle or listener the op was submitted on */
    size_t bytes;        /* written so far, then the result */
    int status;
    union {
        zl_read_req read;
        zl_write_cursor write;
    } req;
};

/* A pipe: macOS has no eventfd. fds[0] is the end that is polled. */
struct zl_signaler {
    int fds[2];
};

#endif
