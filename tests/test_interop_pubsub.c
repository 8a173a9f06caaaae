/* test_interop_pubsub.c — zlink's PUB, SUB, XPUB and XSUB against a real
 * libzmq 4.3 (tests/interop/zmq_pubsub_peer), either side binding, over tcp
 * and ipc, with topic filtering checked on both sides. */
#define _POSIX_C_SOURCE 200809L /* SIGKILL */

#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <zlink.h>

/* Every wait is bounded, so a broken peer or a broken zlink fails the case
 * instead of hanging the suite. */
#define ZL_TIMEOUT_MS 10000
#define PEER_LINE_TIMEOUT_MS 10000
#define PEER_EXIT_TIMEOUT_MS 20000
#define PEER_KILL_GRACE_MS 5000
/* A subscriber checks this many messages of its topic (as the peer does). */
#define EXPECTED 20

static char peer_path[1024];
/* What a failed case leaves behind: the running peer and the ipc file. */
static int running_peer_pid;
static char ipc_path[512];

/* The peer process: its stdout gives the endpoint it bound, its stdin
 * staying open keeps a publishing peer publishing. */
struct peer {
    uv_loop_t loop;
    uv_process_t process;
    uv_pipe_t in, out;
    uv_timer_t timer;
    char line[1024];
    size_t len;
    char scratch[256];
    bool line_done;
    bool out_closed;
    bool exited;
    bool timer_fired;
    int64_t exit_status;
    int term_signal;
};

static bool file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    fclose(f);
    return true;
}

static bool find_peer(void)
{
    char dir[768];
    size_t len = sizeof dir;
    if (uv_os_getenv("ZLINK_TEST_PEER_DIR", dir, &len) != 0)
        return false;
    snprintf(peer_path, sizeof peer_path, "%s/zmq_pubsub_peer", dir);
    if (file_exists(peer_path))
        return true;
    snprintf(peer_path, sizeof peer_path, "%s/zmq_pubsub_peer.exe", dir);
    return file_exists(peer_path);
}

static void clean_up_case(void)
{
    if (running_peer_pid != 0)
        uv_kill(running_peer_pid, SIGKILL);
    running_peer_pid = 0;
    if (ipc_path[0] != '\0')
        remove(ipc_path);
    ipc_path[0] = '\0';
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
    struct peer *p = handle->data;
    size_t room = sizeof p->line - 1 - p->len;
    if (p->line_done || room == 0)
        *buf = uv_buf_init(p->scratch, sizeof p->scratch);
    else
        *buf = uv_buf_init(p->line + p->len, (unsigned)room);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf)
{
    struct peer *p = stream->data;
    if (nread < 0) {
        p->out_closed = true;
        uv_read_stop(stream);
        return;
    }
    if (p->line_done || buf->base == p->scratch)
        return;
    p->len += (size_t)nread;
    p->line[p->len] = '\0';
    char *newline = strchr(p->line, '\n');
    if (newline != NULL) {
        *newline = '\0';
        if (newline > p->line && newline[-1] == '\r')
            newline[-1] = '\0';
        p->line_done = true;
    }
}

static void on_peer_exit(uv_process_t *process, int64_t status, int term_signal)
{
    struct peer *p = process->data;
    p->exited = true;
    p->exit_status = status;
    p->term_signal = term_signal;
    running_peer_pid = 0;
}

static void on_timer(uv_timer_t *timer)
{
    struct peer *p = timer->data;
    p->timer_fired = true;
}

static bool run_until(struct peer *p, const bool *done, uint64_t timeout_ms)
{
    p->timer_fired = false;
    uv_timer_start(&p->timer, on_timer, timeout_ms, 0);
    while (!*done && !p->timer_fired)
        uv_run(&p->loop, UV_RUN_ONCE);
    uv_timer_stop(&p->timer);
    return *done;
}

static void peer_start(struct peer *p, const char *scenario, const char *mode,
                       const char *endpoint)
{
    memset(p, 0, sizeof *p);
    ck_assert_int_eq(uv_loop_init(&p->loop), 0);
    ck_assert_int_eq(uv_pipe_init(&p->loop, &p->in, 0), 0);
    ck_assert_int_eq(uv_pipe_init(&p->loop, &p->out, 0), 0);
    ck_assert_int_eq(uv_timer_init(&p->loop, &p->timer), 0);
    p->out.data = p;
    p->timer.data = p;
    p->process.data = p;

    char *args[] = {peer_path, (char *)scenario, (char *)mode, (char *)endpoint,
                    NULL};
    uv_stdio_container_t stdio[3];
    stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
    stdio[0].data.stream = (uv_stream_t *)&p->in;
    stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    stdio[1].data.stream = (uv_stream_t *)&p->out;
    stdio[2].flags = UV_INHERIT_FD;
    stdio[2].data.fd = 2;
    uv_process_options_t options = {0};
    options.file = peer_path;
    options.args = args;
    options.stdio = stdio;
    options.stdio_count = 3;
    options.exit_cb = on_peer_exit;

    int rc = uv_spawn(&p->loop, &p->process, &options);
    ck_assert_msg(rc == 0, "uv_spawn %s: %s", peer_path, uv_strerror(rc));
    running_peer_pid = p->process.pid;
    rc = uv_read_start((uv_stream_t *)&p->out, on_alloc, on_read);
    ck_assert_msg(rc == 0, "uv_read_start: %s", uv_strerror(rc));
}

static const char *peer_read_endpoint(struct peer *p)
{
    p->timer_fired = false;
    uv_timer_start(&p->timer, on_timer, PEER_LINE_TIMEOUT_MS, 0);
    while (!p->line_done && !p->out_closed && !p->timer_fired)
        uv_run(&p->loop, UV_RUN_ONCE);
    uv_timer_stop(&p->timer);
    ck_assert_msg(p->line_done, "peer printed no endpoint (%s)",
                  p->timer_fired ? "timed out" : "stdout closed");
    return p->line;
}

static void close_handle(uv_handle_t *handle)
{
    if (!uv_is_closing(handle))
        uv_close(handle, NULL);
}

/* Closing its stdin tells a publishing peer to stop. */
static void peer_stop(struct peer *p)
{
    close_handle((uv_handle_t *)&p->in);
}

/* Waits for the peer to exit, killing it past the bound; its exit code. */
static int peer_wait(struct peer *p)
{
    if (!run_until(p, &p->exited, PEER_EXIT_TIMEOUT_MS)) {
        uv_process_kill(&p->process, SIGKILL);
        run_until(p, &p->exited, PEER_KILL_GRACE_MS);
        ck_abort_msg("peer did not exit within %d ms, killed",
                     PEER_EXIT_TIMEOUT_MS);
    }
    ck_assert_msg(p->term_signal == 0, "peer died of signal %d",
                  p->term_signal);
    return (int)p->exit_status;
}

static void peer_close(struct peer *p)
{
    close_handle((uv_handle_t *)&p->process);
    close_handle((uv_handle_t *)&p->in);
    close_handle((uv_handle_t *)&p->out);
    close_handle((uv_handle_t *)&p->timer);
    uv_run(&p->loop, UV_RUN_DEFAULT);
    ck_assert_int_eq(uv_loop_close(&p->loop), 0);
}

/* ---- the zlink side ----------------------------------------------------- */

static void set_int(void *socket, int option, int value)
{
    int rc = zlink_setsockopt(socket, option, &value, sizeof value);
    ck_assert_msg(rc == 0, "zlink_setsockopt(%d): %s", option,
                  zlink_strerror(zlink_errno()));
}

/* The peer's exit raises SIGCHLD, which may interrupt a blocking call
 * (EINTR, as in libzmq): retry those. */
static int send_retry(void *socket, const void *buf, size_t len, int flags)
{
    int rc;
    do
        rc = zlink_send(socket, buf, len, flags);
    while (rc < 0 && zlink_errno() == EINTR);
    return rc;
}

static int recv_retry(void *socket, void *buf, size_t len, int flags)
{
    int rc;
    do
        rc = zlink_recv(socket, buf, len, flags);
    while (rc < 0 && zlink_errno() == EINTR);
    return rc;
}

static void send_text(void *socket, const char *text)
{
    int rc = send_retry(socket, text, strlen(text), 0);
    ck_assert_msg(rc == (int)strlen(text), "send '%s': %s", text,
                  zlink_strerror(zlink_errno()));
}

static void recv_text(void *socket, char *buf, size_t cap)
{
    int n = recv_retry(socket, buf, cap - 1, 0);
    ck_assert_msg(n >= 0, "recv: %s", zlink_strerror(zlink_errno()));
    ck_assert_int_lt(n, (int)cap);
    buf[n] = '\0';
}

/* What the peer's publisher sends is "B-n" and "A-n"; a subscriber to A
 * must see A-n only, n increasing. */
static void expect_topic_a(void *socket)
{
    long last = -1;
    for (int i = 0; i < EXPECTED; i++) {
        char buf[64];
        recv_text(socket, buf, sizeof buf);
        ck_assert_msg(strncmp(buf, "A-", 2) == 0,
                      "received '%s', subscribed to A only", buf);
        long n = strtol(buf + 2, NULL, 10);
        ck_assert_msg(n > last, "'%s' after A-%ld", buf, last);
        last = n;
    }
}

/* Publishes "B-n" and "A-n" until the peer (a subscriber checking what it
 * gets) exits. */
static void publish_until_exit(void *socket, struct peer *p)
{
    uint64_t give_up = zl_test_now_ms() + PEER_EXIT_TIMEOUT_MS;
    for (int n = 0; !p->exited; n++) {
        ck_assert_msg(zl_test_now_ms() < give_up, "peer still running");
        char msg[32];
        snprintf(msg, sizeof msg, "B-%d", n);
        send_text(socket, msg);
        msg[0] = 'A';
        send_text(socket, msg);
        uv_run(&p->loop, UV_RUN_NOWAIT);
        zl_test_sleep_ms(2);
    }
}

/* A notice as an XPUB delivers it: kind byte + topic. */
static void expect_notice(void *xpub, int kind, char topic)
{
    char buf[8];
    int n = recv_retry(xpub, buf, sizeof buf, 0);
    ck_assert_msg(n == 2 && buf[0] == kind && buf[1] == topic,
                  "notice of %d bytes: %d '%c', expected %d '%c'", n,
                  n > 0 ? buf[0] : -1, n > 1 ? buf[1] : '?', kind, topic);
}

/* The libzmq SUB subscribes to A and S; the XPUB sends A until it sees the
 * SUB's cancel of A, then S until the SUB has it and exits. */
static void xpub_sees_subscribe_and_cancel(void *xpub, struct peer *p)
{
    expect_notice(xpub, 1, 'A');
    expect_notice(xpub, 1, 'S');
    uint64_t give_up = zl_test_now_ms() + ZL_TIMEOUT_MS;
    for (int n = 0;; n++) {
        ck_assert_msg(zl_test_now_ms() < give_up, "no cancel of A");
        char msg[32];
        snprintf(msg, sizeof msg, "A-%d", n);
        send_text(xpub, msg);
        char buf[8];
        int got = recv_retry(xpub, buf, sizeof buf, ZLINK_DONTWAIT);
        if (got >= 0) {
            ck_assert_msg(got == 2 && buf[0] == 0 && buf[1] == 'A',
                          "unexpected notice");
            break;
        }
        ck_assert_int_eq(zlink_errno(), EAGAIN);
        zl_test_sleep_ms(2);
    }
    give_up = zl_test_now_ms() + PEER_EXIT_TIMEOUT_MS;
    while (!p->exited) {
        ck_assert_msg(zl_test_now_ms() < give_up, "peer still running");
        send_text(xpub, "S");
        uv_run(&p->loop, UV_RUN_NOWAIT);
        zl_test_sleep_ms(2);
    }
}

enum zlink_role {
    ZLINK_SUBSCRIBES,   /* zlink SUB ← libzmq PUB */
    ZLINK_PUBLISHES,    /* zlink PUB → libzmq SUB or XSUB */
    ZLINK_XPUB_WATCHES, /* zlink XPUB ← libzmq SUB */
    ZLINK_XSUB_ASKS     /* zlink XSUB → libzmq PUB */
};

struct variant {
    const char *name;
    int zlink_type;
    const char *scenario; /* the peer's */
    enum zlink_role role;
};

static const struct variant variants[] = {
    {"libzmq PUB -> zlink SUB", ZLINK_SUB, "pub", ZLINK_SUBSCRIBES},
    {"zlink PUB -> libzmq SUB", ZLINK_PUB, "sub", ZLINK_PUBLISHES},
    {"zlink PUB -> libzmq XSUB", ZLINK_PUB, "xsub", ZLINK_PUBLISHES},
    {"libzmq SUB -> zlink XPUB", ZLINK_XPUB, "subcancel", ZLINK_XPUB_WATCHES},
    {"zlink XSUB -> libzmq PUB", ZLINK_XSUB, "pub", ZLINK_XSUB_ASKS},
};
#define VARIANT_COUNT ((int)(sizeof variants / sizeof variants[0]))
/* Each variant runs four ways: who binds (zlink, libzmq) x (tcp, ipc). */
#define WAYS 4

static void run_case(const struct variant *v, bool zlink_binds, bool ipc)
{
    fprintf(stderr, "interop: %s, %s, %s binds\n", v->name, ipc ? "ipc" : "tcp",
            zlink_binds ? "zlink" : "libzmq");
    char bind_endpoint[512] = "tcp://127.0.0.1:*";
    if (ipc) {
        zl_test_ipc_endpoint(bind_endpoint, sizeof bind_endpoint);
        snprintf(ipc_path, sizeof ipc_path, "%s",
                 bind_endpoint + strlen("ipc://"));
    }

    void *ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(ctx);
    void *socket = zlink_socket(ctx, v->zlink_type);
    ck_assert_ptr_nonnull(socket);
    set_int(socket, ZLINK_RCVTIMEO, ZL_TIMEOUT_MS);
    set_int(socket, ZLINK_SNDTIMEO, ZL_TIMEOUT_MS);
    set_int(socket, ZLINK_LINGER, 0);
    if (v->role == ZLINK_SUBSCRIBES)
        ck_assert_int_eq(zlink_setsockopt(socket, ZLINK_SUBSCRIBE, "A", 1), 0);

    struct peer peer;
    if (zlink_binds) {
        int rc = zlink_bind(socket, bind_endpoint);
        ck_assert_msg(rc == 0, "zlink_bind(%s): %s", bind_endpoint,
                      zlink_strerror(zlink_errno()));
        char endpoint[512];
        size_t len = sizeof endpoint;
        ck_assert_int_eq(
            zlink_getsockopt(socket, ZLINK_LAST_ENDPOINT, endpoint, &len), 0);
        peer_start(&peer, v->scenario, "connect", endpoint);
    } else {
        peer_start(&peer, v->scenario, "bind", bind_endpoint);
        const char *endpoint = peer_read_endpoint(&peer);
        int rc = zlink_connect(socket, endpoint);
        ck_assert_msg(rc == 0, "zlink_connect(%s): %s", endpoint,
                      zlink_strerror(zlink_errno()));
    }

    switch (v->role) {
    case ZLINK_SUBSCRIBES:
        expect_topic_a(socket);
        peer_stop(&peer);
        break;
    case ZLINK_PUBLISHES:
        publish_until_exit(socket, &peer);
        break;
    case ZLINK_XPUB_WATCHES:
        xpub_sees_subscribe_and_cancel(socket, &peer);
        break;
    case ZLINK_XSUB_ASKS:
        /* An XSUB does not filter: only libzmq's PUB keeps B away. */
        ck_assert_int_eq(send_retry(socket, "\1A", 2, 0), 2);
        expect_topic_a(socket);
        peer_stop(&peer);
        break;
    }

    int status = peer_wait(&peer);
    ck_assert_msg(status == 0,
                  "libzmq peer exited with %d (2 timeout, 3 mismatch)", status);
    peer_close(&peer);
    ck_assert_int_eq(zlink_close(socket), 0);
    ck_assert_int_eq(zlink_ctx_term(ctx), 0);
    clean_up_case();
}

START_TEST(test_interop_pubsub_case)
{
    const struct variant *v = &variants[_i / WAYS];
    int way = _i % WAYS;
    run_case(v, way < 2, way % 2 == 1);
}
END_TEST

static void teardown(void)
{
    clean_up_case();
}

static Suite *suite(void)
{
    Suite *s = suite_create("interop pubsub");
    for (int v = 0; v < VARIANT_COUNT; v++) {
        TCase *tc = tcase_create(variants[v].name);
        tcase_set_timeout(tc, 120);
        tcase_add_checked_fixture(tc, NULL, teardown);
        tcase_add_loop_test(tc, test_interop_pubsub_case, v * WAYS,
                            (v + 1) * WAYS);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    if (!find_peer()) {
        printf("interop pubsub: libzmq peer not built, skipped\n");
        return EXIT_SUCCESS;
    }
    atexit(clean_up_case);
    return zl_test_run(suite());
}
