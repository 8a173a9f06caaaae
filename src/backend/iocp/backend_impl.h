/* backend_impl.h — the IOCP backend's parts of the public backend types: the
 * op's OVERLAPPED and continuation state, and the loopback-socket signaler.
 * Included by backend.h after its typedefs. */
#ifndef ZL_IOCP_BACKEND_IMPL_H
#define ZL_IOCP_BACKEND_IMPL_H

#include <stddef.h>
#include <winsock2.h>

/* Writes go through the port and its completions (zl_handle_try_write). */
#define ZL_BACKEND_TRY_WRITE 0
/* Reads complete on the port; no other thread takes them. */
#define ZL_BACKEND_TRY_READ 0

/* Called on the loop thread when the kernel (or the deferred list) reports
 * the op's current step done; decides whether the op continues or completes.
 * Returns the number of owner callbacks it ran (0 or 1). */
typedef int (*zl_iocp_step_fn)(zl_op *op, int status, size_t bytes);

struct zl_op_impl {
    OVERLAPPED overlapped; /* the port hands this back; see zl_iocp_op_of */
    zl_iocp_step_fn step;
    void *owner;  /* zl_handle or zl_listener the op was submitted on */
    zl_op *next;  /* deferred list link */
    int status;   /* result of a step that finished inside its submitting */
    size_t bytes; /* call, kept until the loop dispatches it */
    unsigned char cancelled; /* cancel/close came first: report ZL_ECANCELED */
    unsigned char probing;   /* a read's zero-byte readiness probe is posted */
    union {
        zl_read_req read;
        struct {
            zl_write_cursor cursor;
            size_t done; /* bytes written by earlier WSASend calls */
        } write;
        struct {
            SOCKET socket; /* pre-created socket AcceptEx fills */
        } accept;
    } req;
};

/* A connected loopback TCP pair: ZLINK_FD must be a SOCKET an application
 * can hand to select/WSAPoll, and Windows has no eventfd. */
struct zl_signaler {
    SOCKET read_end;  /* readable while signalled; returned by zl_signaler_fd */
    SOCKET write_end; /* one byte per zl_signaler_send */
};

#endif
