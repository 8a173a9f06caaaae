/* backend_impl.h — the fake backend's parts of the public backend types, for
 * the connection fuzzer (fake_backend.c): an op's queue link and result, and
 * the eventfd signaler it borrows from the epoll backend. */
#ifndef ZL_FAKE_BACKEND_IMPL_H
#define ZL_FAKE_BACKEND_IMPL_H

#include <stddef.h>

struct zl_fake_io;

/* Every write goes through the fake loop, where the fuzzer sees it. */
#define ZL_BACKEND_TRY_WRITE 0
#define ZL_BACKEND_TRY_READ 0

struct zl_op_impl {
    zl_op *next;           /* completion queue link */
    struct zl_fake_io *io; /* handle or listener the op was submitted on */
    size_t bytes;          /* the result while queued */
    int status;
    union {
        zl_read_req read;
        struct {
            const zl_iovec *iov; /* the owner's array */
            int count;
        } write;
    } req;
};

struct zl_signaler {
    int fd; /* eventfd, as epoll/signaler.c keeps it */
};

#endif
