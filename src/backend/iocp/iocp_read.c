/* iocp_read.c — zl_handle_readv on IOCP, and where IOCP decides how to read.
 *
 * Read-rearm policy (DESIGN.md §1). The engine submits exactly one read
 * after it has decoded the previous one; this file decides what that read
 * costs:
 *
 * - Busy connection: the previous read filled the owner's buffer, so more
 *   data is likely waiting. Post the overlapped WSARecv on the buffer at
 *   once. With FILE_SKIP_COMPLETION_PORT_ON_SUCCESS the kernel copies data
 *   that is already there inside the call, and the op goes straight to the
 *   loop's deferred list: one syscall, no port round trip. If nothing is
 *   there yet the read stays posted, so a busy connection always has one
 *   overlapped read in the kernel.
 * - Idle connection: the previous read came back short (or the connection
 *   is new), so the peer has nothing more for now. Post a zero-byte WSARecv
 *   as a readiness probe instead: it completes when data or a FIN arrives
 *   and pins no buffer while the connection waits, which matters with
 *   thousands of quiet peers. When it completes, the real WSARecv is posted
 *   from the loop and, with skip mode, finishes inline.
 *
 * So a short read ends the burst, as in libuv and the epoll backend, and an
 * idle connection costs one extra syscall per wake-up, not a pinned buffer.
 * A read of 0 bytes into a non-empty buffer is the peer's FIN: ZL_EOF. */
#include "iocp.h"

#include <limits.h>
#include <string.h>

/* A zero-length buffer still needs a valid address for some providers. */
static char probe_target;

static void post_recv(zl_handle *h, zl_op *op, const zl_iovec *iov, int n)
{
    WSABUF wsabufs[ZL_READ_IOV_MAX];
    for (int i = 0; i < n; i++)
        wsabufs[i] = (WSABUF){.len = iov[i].len > ULONG_MAX ? ULONG_MAX
                                                            : (ULONG)iov[i].len,
                              .buf = iov[i].base};
    DWORD bytes = 0;
    DWORD flags = 0;
    memset(&op->impl.overlapped, 0, sizeof op->impl.overlapped);
    int rc = WSARecv(h->socket, wsabufs, (DWORD)n, &bytes, &flags,
                     &op->impl.overlapped, NULL);
    zl_iocp_after_submit(h->loop, op, rc == 0, rc == 0 ? 0 : WSAGetLastError(),
                         bytes, h->skip_port_on_success);
}

static void post_probe(zl_handle *h, zl_op *op)
{
    zl_iovec empty = {&probe_target, 0};
    post_recv(h, op, &empty, 1);
}

static int read_step(zl_op *op, int status, size_t bytes)
{
    zl_handle *h = op->impl.owner;
    if (op->impl.cancelled || status != 0)
        return zl_iocp_handle_complete(h, op, status, 0);
    if (op->impl.probing) {
        /* Data (or the FIN) is there now: fetch it. */
        op->impl.probing = 0;
        post_recv(h, op, op->impl.req.read.iov, op->impl.req.read.count);
        return 0;
    }
    if (bytes == 0 && op->impl.req.read.len > 0)
        return zl_iocp_handle_complete(h, op, ZL_EOF, 0);
    h->drained = bytes < op->impl.req.read.len;
    return zl_iocp_handle_complete(h, op, 0, bytes);
}

void zl_handle_readv(zl_handle *h, zl_op *op, const zl_iovec *iov, int n)
{
    op->impl.step = read_step;
    op->impl.owner = h;
    op->impl.cancelled = 0;
    zl_read_req_set(&op->impl.req.read, iov, n);
    h->read_op = op;
    h->pending++;
    op->impl.probing = h->drained && op->impl.req.read.len > 0;
    if (op->impl.probing)
        post_probe(h, op);
    else
        post_recv(h, op, op->impl.req.read.iov, n);
}
