/* iocp.h — the IOCP backend's internal structures and the zl_iocp_* calls its
 * files share. Nothing outside src/backend/iocp (and tests/test_iocp.c)
 * includes it. */
#ifndef ZL_IOCP_H
#define ZL_IOCP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

/* backend.h brings winsock2.h, which must come before windows.h and
 * mswsock.h. */
#include "atomics.h"
#include "backend.h"
#include "completion_queue.h"
#include "timer_heap.h"

#include <mswsock.h>
#include <windows.h>

/* One WSASend takes at most this many WSABUFs (Winsock's limit, and Wine
 * enforces it); a longer iovec list continues in the next call. */
#define ZL_IOCP_MAX_WSABUF 1024
/* Completions drained per GetQueuedCompletionStatusEx call. */
#define ZL_IOCP_BATCH 128

/* Completion keys: every socket is associated with ZL_IOCP_KEY_IO; the wake
 * packet carries ZL_IOCP_KEY_WAKE and no OVERLAPPED. */
enum { ZL_IOCP_KEY_IO = 0, ZL_IOCP_KEY_WAKE = 1 };

struct zl_loop {
    HANDLE port;
    zl_wake_cb on_wake;
    void *wake_arg;
    atomic_int wake_posted; /* a wake packet is in the port, not yet seen */
    /* Steps finished inside their submitting call; each op's step runs from
     * the queue. */
    struct zl_completion_queue deferred;
    struct zl_timer_heap timers;
    int closing;     /* closed handles/listeners waiting for their ops */
    bool destroying; /* zl_loop_destroy collects those ops: no callbacks */
    /* Scratch for building one WSASend's buffers. Winsock copies the array
     * before WSASend returns, and the loop runs on one thread. */
    WSABUF send_bufs[ZL_IOCP_MAX_WSABUF];
};

struct zl_handle {
    zl_loop *loop;
    SOCKET socket;
    int family;
    /* FILE_SKIP_COMPLETION_PORT_ON_SUCCESS is on: a call that succeeds
     * inline queues no packet, so the backend defers the step itself. */
    bool skip_port_on_success;
    /* The last read came back short, so the peer has nothing more for now:
     * the next read starts with a zero-byte probe (see iocp_read.c). */
    bool drained;
    bool closing;
    /* ConnectEx is pending: the connect waits on the network (libzmq's
     * EINPROGRESS), where one that failed or ended inline does not. */
    bool connect_waits;
    int pending; /* ops submitted and not yet completed to the owner */
    zl_op *read_op;
    zl_op *write_op;
    zl_op *connect_op;
};

/* AcceptEx writes both addresses, each with 16 bytes of slack. */
#define ZL_IOCP_ACCEPT_ADDR_LEN ((DWORD)sizeof(struct sockaddr_storage) + 16)

struct zl_listener {
    zl_loop *loop;
    SOCKET socket;
    int family;
    int protocol;
    bool skip_port_on_success;
    bool closing;
    int pending;
    zl_op *accept_op;
    LPFN_ACCEPTEX accept_ex; /* the provider's own, looked up on this socket */
    char accept_addrs[2 * ZL_IOCP_ACCEPT_ADDR_LEN];
};

/* ---- iocp_loop.c ---- */
zl_op *zl_iocp_op_of(OVERLAPPED *overlapped);
/* Queues a step that finished inside its submitting call; the loop runs
 * op->impl.step from zl_loop_run_once. */
void zl_iocp_defer(zl_loop *loop, zl_op *op, int status, size_t bytes);
/* After WSARecv/WSASend/AcceptEx/ConnectEx: ok is the call's success, err
 * its WSAGetLastError() when it failed. Routes the step to the port (pending,
 * or inline success without skip mode) or to the deferred list. */
void zl_iocp_after_submit(zl_loop *loop, zl_op *op, bool ok, int err,
                          size_t bytes, bool skip_port_on_success);

/* ---- iocp_errno.c ---- */
/* Winsock (WSAE*) or Win32 (ERROR_*) code → negative errno, ZL_ECANCELED
 * for aborted operations. */
int zl_iocp_errno_from_wsa(int code);
/* The status of a completed OVERLAPPED (its NTSTATUS) as 0 or -errno. */
int zl_iocp_overlapped_status(const OVERLAPPED *overlapped);

/* ---- iocp_handle.c ---- */
/* False makes new sockets keep posting a packet for inline successes; tests
 * clear it to exercise the port path that non-IFS providers force. */
extern bool zl_iocp_skip_mode_allowed;
/* An overlapped, non-inheritable socket; INVALID_SOCKET and *err = -errno
 * on failure. */
SOCKET zl_iocp_socket_open(int family, int *err);
int zl_iocp_protocol_of(int family);
/* Associates the socket with the loop's port and turns on skip mode where
 * the provider allows it. 0 or -errno. */
int zl_iocp_socket_attach(zl_loop *loop, SOCKET s, bool *skip_port_on_success);
/* Wraps a connected (or connecting) socket already attached to the loop. */
zl_handle *zl_iocp_handle_new(zl_loop *loop, SOCKET s, int family,
                              bool skip_port_on_success);
/* Clears the op's slot, runs the owner's callback (reporting ZL_ECANCELED
 * once cancelled) and frees a closed handle after its last op. Returns 1. */
int zl_iocp_handle_complete(zl_handle *h, zl_op *op, int status, size_t bytes);
void zl_iocp_set_nodelay(SOCKET s, int family);

/* ---- iocp_tcp_opts.c ---- */
/* Before bind or connect: TOS; a device is -ENOTSUP (no SO_BINDTODEVICE). */
int zl_iocp_tcp_prepare(SOCKET s, int family, const zl_tcp_opts *opts);

/* ---- iocp_global.c ---- */
/* RtlNtStatusToDosError, looked up once in ntdll. */
ULONG zl_iocp_ntstatus_to_win32(LONG status);

#endif
