/* test_iocp.c — IOCP-only behaviour behind the backend contract: the error
 * mapping (995/676 as ZL_ECANCELED), WSASend batches past 1024 WSABUFs, the
 * zero-byte read probe, both completion modes (skip-on-success and
 * always-through-the-port), and a TCP backlog past Winsock's default cap.
 * Elsewhere it is one passing, skipping case. */
#include "testutil.h"

#include <stdio.h>

#ifdef _WIN32

#include <stdlib.h>
#include <string.h>

#include "iocp.h"

enum { PUMP_LIMIT_MS = 20000, PASS_MS = 10 };

#define PUMP_UNTIL(loop, cond)                                                 \
    do {                                                                       \
        uint64_t deadline_ = zl_test_now_ms() + PUMP_LIMIT_MS;                 \
        while (!(cond)) {                                                      \
            ck_assert_msg(zl_test_now_ms() < deadline_,                        \
                          "timed out waiting for %s", #cond);                  \
            zl_loop_run_once((loop), PASS_MS);                                 \
        }                                                                      \
    } while (0)

typedef struct result {
    zl_op op;
    int done;
    int status;
    size_t bytes;
} result;

static void result_cb(zl_op *op, int status, size_t bytes)
{
    result *r = op->data;
    r->done++;
    r->status = status;
    r->bytes = bytes;
}

static void result_init(result *r)
{
    memset(r, 0, sizeof *r);
    r->op.cb = result_cb;
    r->op.data = r;
}

typedef struct pair {
    zl_loop *loop;
    zl_listener *listener;
    zl_handle *client;
    zl_handle *server;
} pair;

/* A TCP listener on 127.0.0.1 and a free port, whose address *addr gets. */
static zl_listener *listen_loopback(zl_loop *loop, int backlog, zl_addr *addr)
{
    zl_listener *listener;
    memset(addr, 0, sizeof *addr);
    addr->u.in4.sin_family = AF_INET;
    addr->u.in4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr->len = sizeof addr->u.in4;
    ck_assert_int_eq(zl_listener_open(loop, addr, backlog, &listener), 0);
    ck_assert_int_eq(zl_listener_local_addr(listener, addr), 0);
    return listener;
}

static void pair_open(pair *p)
{
    memset(p, 0, sizeof *p);
    ck_assert_int_eq(zl_loop_create(&p->loop, NULL, NULL), 0);
    zl_addr addr;
    p->listener = listen_loopback(p->loop, 4, &addr);
    result accepted, connected;
    result_init(&accepted);
    result_init(&connected);
    int err = 0;
    zl_listener_accept(p->listener, &accepted.op);
    p->client = zl_handle_connect(p->loop, &addr, &connected.op, &err);
    ck_assert_ptr_nonnull(p->client);
    PUMP_UNTIL(p->loop, accepted.done && connected.done);
    ck_assert_int_eq(accepted.status, 0);
    ck_assert_int_eq(connected.status, 0);
    p->server = accepted.op.accepted;
}

static void pair_close(pair *p)
{
    if (p->client)
        zl_handle_close(p->client);
    if (p->server)
        zl_handle_close(p->server);
    zl_listener_close(p->listener);
    for (int i = 0; i < 20; i++)
        zl_loop_run_once(p->loop, 0);
    zl_loop_destroy(p->loop);
}

static void write_all(pair *p, zl_handle *h, const zl_iovec *iov, int n,
                      size_t total)
{
    result w;
    result_init(&w);
    zl_handle_write(h, &w.op, iov, n);
    ck_assert_int_eq(w.done, 0);
    PUMP_UNTIL(p->loop, w.done);
    ck_assert_int_eq(w.done, 1);
    ck_assert_int_eq(w.status, 0);
    ck_assert_uint_eq(w.bytes, total);
}

static void read_exact(pair *p, zl_handle *h, unsigned char *dst, size_t len)
{
    size_t got = 0;
    while (got < len) {
        result r;
        result_init(&r);
        zl_handle_read(h, &r.op, dst + got, len - got);
        PUMP_UNTIL(p->loop, r.done);
        ck_assert_int_eq(r.status, 0);
        got += r.bytes;
    }
}

START_TEST(test_errno_mapping)
{
    ck_assert_int_eq(zl_iocp_errno_from_wsa(0), 0);
    ck_assert_int_eq(zl_iocp_errno_from_wsa(ERROR_OPERATION_ABORTED),
                     ZL_ECANCELED);
    ck_assert_int_eq(zl_iocp_errno_from_wsa(676), ZL_ECANCELED); /* Wine */
    ck_assert_int_eq(zl_iocp_errno_from_wsa(WSAECONNRESET), -ECONNRESET);
    ck_assert_int_eq(zl_iocp_errno_from_wsa(ERROR_NETNAME_DELETED),
                     -ECONNRESET);
    ck_assert_int_eq(zl_iocp_errno_from_wsa(WSAECONNREFUSED), -ECONNREFUSED);
    ck_assert_int_eq(zl_iocp_errno_from_wsa(ERROR_CONNECTION_REFUSED),
                     -ECONNREFUSED);
    ck_assert_int_eq(zl_iocp_errno_from_wsa(WSAEADDRINUSE), -EADDRINUSE);
    ck_assert_int_eq(zl_iocp_errno_from_wsa(WSAEWOULDBLOCK), -EAGAIN);
    ck_assert_int_eq(zl_iocp_errno_from_wsa(WSAETIMEDOUT), -ETIMEDOUT);
    ck_assert_int_eq(zl_iocp_errno_from_wsa(123456), -EIO);

    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ck_assert_int_eq(zl_iocp_overlapped_status(&ov), 0);
    ov.Internal = (ULONG_PTR)(LONG)0xC0000120; /* STATUS_CANCELLED */
    ck_assert_int_eq(zl_iocp_overlapped_status(&ov), ZL_ECANCELED);
    ov.Internal = (ULONG_PTR)(LONG)0xC000020D; /* STATUS_CONNECTION_RESET */
    ck_assert_int_eq(zl_iocp_overlapped_status(&ov), -ECONNRESET);
    ov.Internal = (ULONG_PTR)(LONG)0xC0000236; /* STATUS_CONNECTION_REFUSED */
    ck_assert_int_eq(zl_iocp_overlapped_status(&ov), -ECONNREFUSED);
}
END_TEST

/* What closesocket does to a pending overlapped read, read straight from the
 * port: 995 on Windows, 676 under Wine; both must map to ZL_ECANCELED. */
START_TEST(test_closesocket_aborts_read)
{
    pair p;
    pair_open(&p);
    HANDLE port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0, 1);
    ck_assert_ptr_nonnull(port);
    /* A fresh socket on its own port, so the loop never sees the packet. */
    zl_addr addr;
    ck_assert_int_eq(zl_listener_local_addr(p.listener, &addr), 0);
    int err = 0;
    SOCKET s = zl_iocp_socket_open(AF_INET, &err);
    ck_assert(s != INVALID_SOCKET);
    ck_assert_int_eq(connect(s, &addr.u.sa, addr.len), 0);
    ck_assert_ptr_nonnull(CreateIoCompletionPort((HANDLE)s, port, 7, 0));

    char buf[16];
    WSABUF wsabuf = {sizeof buf, buf};
    DWORD flags = 0;
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    int rc = WSARecv(s, &wsabuf, 1, NULL, &flags, &ov, NULL);
    int wsa_err = WSAGetLastError(); /* before Check's calls reset it */
    ck_assert_int_eq(rc, SOCKET_ERROR);
    ck_assert_int_eq(wsa_err, WSA_IO_PENDING);
    closesocket(s);

    DWORD bytes = 0;
    ULONG_PTR key = 0;
    OVERLAPPED *done = NULL;
    BOOL ok = GetQueuedCompletionStatus(port, &bytes, &key, &done, 5000);
    DWORD win32 = ok ? 0 : GetLastError();
    ck_assert_ptr_eq(done, &ov);
    fprintf(stderr,
            "test_closesocket_aborts_read: NTSTATUS 0x%08lx, Win32 %lu%s\n",
            (unsigned long)ov.Internal, (unsigned long)win32,
            zl_test_under_wine() ? " (Wine)" : "");
    ck_assert_int_eq(zl_iocp_overlapped_status(&ov), ZL_ECANCELED);
    ck_assert_int_eq(zl_iocp_errno_from_wsa((int)win32), ZL_ECANCELED);
    CloseHandle(port);

    /* The listener accepted nothing from us; drop that backlog entry. */
    pair_close(&p);
}
END_TEST

/* An idle connection's read is a zero-byte probe (no buffer pinned); a read
 * after one that filled its buffer goes straight to the buffer. */
START_TEST(test_zero_byte_probe)
{
    pair p;
    pair_open(&p);
    unsigned char buf[64];
    result r;
    result_init(&r);
    zl_handle_read(p.server, &r.op, buf, sizeof buf);
    zl_loop_run_once(p.loop, 0);
    ck_assert_int_eq(r.done, 0);
    ck_assert_int_eq(r.op.impl.probing, 1);

    zl_iovec iov = {"0123456789", 10};
    write_all(&p, p.client, &iov, 1, 10);
    PUMP_UNTIL(p.loop, r.done);
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(r.bytes, 10);
    ck_assert(memcmp(buf, "0123456789", 10) == 0);
    ck_assert(p.server->drained); /* short read: idle again */

    /* Fill the buffer exactly: the handle counts as busy. */
    write_all(&p, p.client, &iov, 1, 10);
    zl_test_sleep_ms(20);
    result_init(&r);
    zl_handle_read(p.server, &r.op, buf, 4);
    PUMP_UNTIL(p.loop, r.done);
    ck_assert_uint_eq(r.bytes, 4);
    ck_assert(!p.server->drained);
    result_init(&r);
    zl_handle_read(p.server, &r.op, buf, 6);
    ck_assert_int_eq(r.op.impl.probing, 0);
    PUMP_UNTIL(p.loop, r.done);
    ck_assert_uint_eq(r.bytes, 6);
    ck_assert(memcmp(buf, "456789", 6) == 0);

    /* The probe also reports the peer's FIN, as ZL_EOF. */
    result_init(&r);
    zl_handle_read(p.server, &r.op, buf, sizeof buf);
    zl_handle_close(p.client);
    p.client = NULL;
    PUMP_UNTIL(p.loop, r.done);
    ck_assert_int_eq(r.status, ZL_EOF);
    pair_close(&p);
}
END_TEST

/* Runs a round trip and a write of more than 3 × 1024 iovecs, so WSASend is
 * called in several batches, the last one partial. */
static void exercise_pair(pair *p)
{
    enum { COUNT = 3 * ZL_IOCP_MAX_WSABUF + 7, PIECE = 5 };
    static unsigned char src[COUNT * PIECE], dst[COUNT * PIECE];
    static zl_iovec iov[COUNT];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    for (int i = 0; i < COUNT; i++) {
        iov[i].base = src + (size_t)i * PIECE;
        iov[i].len = PIECE;
    }
    memset(dst, 0, sizeof dst);
    write_all(p, p->client, iov, COUNT, sizeof src);
    read_exact(p, p->server, dst, sizeof dst);
    ck_assert(memcmp(src, dst, sizeof src) == 0);

    /* Exactly the limit, and one past it. */
    for (int n = ZL_IOCP_MAX_WSABUF; n <= ZL_IOCP_MAX_WSABUF + 1; n++) {
        write_all(p, p->server, iov, n, (size_t)n * PIECE);
        read_exact(p, p->client, dst, (size_t)n * PIECE);
        ck_assert(memcmp(src, dst, (size_t)n * PIECE) == 0);
    }
}

START_TEST(test_skip_mode)
{
    pair p;
    pair_open(&p);
    fprintf(stderr, "test_skip_mode: FILE_SKIP_COMPLETION_PORT_ON_SUCCESS %s\n",
            p.server->skip_port_on_success ? "on" : "off (non-IFS provider)");
    exercise_pair(&p);
    pair_close(&p);
}
END_TEST

/* Non-IFS providers force every completion through the port; the same
 * traffic must work that way too. */
START_TEST(test_port_only_mode)
{
    zl_iocp_skip_mode_allowed = false;
    pair p;
    pair_open(&p);
    ck_assert(!p.server->skip_port_on_success);
    ck_assert(!p.client->skip_port_on_success);
    exercise_pair(&p);
    pair_close(&p);
    zl_iocp_skip_mode_allowed = true;
}
END_TEST

/* An abortive close by the peer (RST) fails the pending read with
 * -ECONNRESET, not ZL_EOF. */
START_TEST(test_peer_reset)
{
    pair p;
    pair_open(&p);
    unsigned char buf[16];
    result r;
    result_init(&r);
    zl_handle_read(p.server, &r.op, buf, sizeof buf);
    zl_loop_run_once(p.loop, 0);
    struct linger abort_close = {.l_onoff = 1, .l_linger = 0};
    ck_assert_int_eq(setsockopt(p.client->socket, SOL_SOCKET, SO_LINGER,
                                (const char *)&abort_close, sizeof abort_close),
                     0);
    zl_handle_close(p.client);
    p.client = NULL;
    PUMP_UNTIL(p.loop, r.done);
    ck_assert_int_eq(r.status, -ECONNRESET);
    pair_close(&p);
}
END_TEST

/* More clients than Winsock's default cap of about 200 connect at once to
 * a listener that nobody accepts on: SOMAXCONN_HINT lets the backlog hold
 * them (without it Windows refuses the rest; Wine passes the number to
 * Linux, which holds them either way). */
START_TEST(test_listen_backlog_past_200)
{
    enum { CLIENTS = 300 };
    zl_loop *loop;
    ck_assert_int_eq(zl_loop_create(&loop, NULL, NULL), 0);
    zl_addr addr;
    zl_listener *listener = listen_loopback(loop, 4096, &addr);
    result *connected = calloc(CLIENTS, sizeof *connected);
    zl_handle **clients = calloc(CLIENTS, sizeof *clients);
    ck_assert_ptr_nonnull(connected);
    ck_assert_ptr_nonnull(clients);
    for (int i = 0; i < CLIENTS; i++) {
        int err = 0;
        result_init(&connected[i]);
        clients[i] = zl_handle_connect(loop, &addr, &connected[i].op, &err);
        ck_assert_ptr_nonnull(clients[i]);
    }
    for (int i = 0; i < CLIENTS; i++) {
        PUMP_UNTIL(loop, connected[i].done);
        ck_assert_msg(connected[i].status == 0, "client %d: status %d", i,
                      connected[i].status);
    }
    for (int i = 0; i < CLIENTS; i++)
        zl_handle_close(clients[i]);
    zl_listener_close(listener);
    for (int i = 0; i < 20; i++)
        zl_loop_run_once(loop, 0);
    zl_loop_destroy(loop);
    free(clients);
    free(connected);
}
END_TEST

static Suite *iocp_suite(void)
{
    Suite *s = suite_create("iocp");
    TCase *tc = tcase_create("iocp");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_errno_mapping);
    tcase_add_test(tc, test_closesocket_aborts_read);
    tcase_add_test(tc, test_zero_byte_probe);
    tcase_add_test(tc, test_skip_mode);
    tcase_add_test(tc, test_port_only_mode);
    tcase_add_test(tc, test_peer_reset);
    tcase_add_test(tc, test_listen_backlog_past_200);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (zl_backend_global_init() != 0)
        return EXIT_FAILURE;
    int rc = zl_test_run(iocp_suite());
    zl_backend_global_term();
    return rc;
}

#else /* !_WIN32 */

START_TEST(test_iocp_skipped)
{
    fprintf(stderr, "test_iocp: IOCP-only, skipped on this backend\n");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("iocp");
    TCase *tc = tcase_create("skipped");
    tcase_add_test(tc, test_iocp_skipped);
    suite_add_tcase(s, tc);
    return zl_test_run(s);
}

#endif
