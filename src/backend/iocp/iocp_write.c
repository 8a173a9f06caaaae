/* iocp_write.c — zl_handle_write on IOCP: the owner's iovecs go out as
 * overlapped WSASend batches of at most ZL_IOCP_MAX_WSABUF buffers, and the
 * op completes only when every byte has been sent.
 *
 * Windows completes an overlapped send whole, but Wine completes it with
 * the bytes the socket took once its buffer is full, so any completion may
 * be short: the write always continues from where the kernel stopped. */
#include "iocp.h"
#include "write_cursor.h"

#include <limits.h>
#include <string.h>

/* One WSABUF holds at most a ULONG; stay well below it so a huge iovec is
 * simply split into several buffers. */
#define ZL_IOCP_MAX_WSABUF_LEN (1u << 30)

/* Fills the loop's scratch WSABUFs from where the write stands. */
static DWORD fill_batch(zl_loop *loop, const zl_op *op)
{
    zl_write_cursor walk = op->impl.req.write.cursor;
    zl_iovec piece;
    DWORD used = 0;
    while (used < ZL_IOCP_MAX_WSABUF &&
           zl_write_cursor_next(&walk, ZL_IOCP_MAX_WSABUF_LEN, &piece)) {
        loop->send_bufs[used].buf = piece.base;
        loop->send_bufs[used].len = (ULONG)piece.len;
        used++;
    }
    return used;
}

static void post_send(zl_handle *h, zl_op *op, DWORD count)
{
    DWORD bytes = 0;
    memset(&op->impl.overlapped, 0, sizeof op->impl.overlapped);
    int rc = WSASend(h->socket, h->loop->send_bufs, count, &bytes, 0,
                     &op->impl.overlapped, NULL);
    zl_iocp_after_submit(h->loop, op, rc == 0, rc == 0 ? 0 : WSAGetLastError(),
                         bytes, h->skip_port_on_success);
}

static int write_step(zl_op *op, int status, size_t bytes)
{
    zl_handle *h = op->impl.owner;
    if (op->impl.cancelled || status != 0)
        return zl_iocp_handle_complete(h, op, status, op->impl.req.write.done);
    op->impl.req.write.done += bytes;
    zl_write_cursor_advance(&op->impl.req.write.cursor, bytes);
    DWORD count = fill_batch(h->loop, op);
    if (count == 0)
        return zl_iocp_handle_complete(h, op, 0, op->impl.req.write.done);
    post_send(h, op, count);
    return 0;
}

void zl_handle_write(zl_handle *h, zl_op *op, const zl_iovec *iov, int n)
{
    op->impl.step = write_step;
    op->impl.owner = h;
    op->impl.cancelled = 0;
    zl_write_cursor_set(&op->impl.req.write.cursor, iov, n);
    op->impl.req.write.done = 0;
    h->write_op = op;
    h->pending++;
    DWORD count = fill_batch(h->loop, op);
    if (count == 0) {
        /* Nothing to send; still complete from the loop, never inline. */
        zl_iocp_defer(h->loop, op, 0, 0);
        return;
    }
    post_send(h, op, count);
}
