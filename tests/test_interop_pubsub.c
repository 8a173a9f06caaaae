/* test_interop_pubsub.c — zlink's PUB, SUB, XPUB and XSUB against a real
 * libzmq 4.3 (tests/interop/zmq_pubsub_peer), either side binding, over tcp
 * and ipc, with topic filtering checked on both sides. */

#include "peer_process.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <zlink.h>

/* Every wait is bounded, so a broken peer or a broken zlink fails the case
 * instead of hanging the suite. */
#define ZL_TIMEOUT_MS 10000
/* A subscriber checks this many messages of its topic (as the peer does). */
#define EXPECTED 20

static char peer_path[1024];
/* What a failed case leaves behind: the running peer (peer_process.c) and
 * the ipc file. */
static char ipc_path[512];

static void clean_up_case(void)
{
    peer_kill_running();
    if (ipc_path[0] != '\0')
        remove(ipc_path);
    ipc_path[0] = '\0';
}

/* The peer's stdin staying open keeps a publishing peer publishing. */
static void start_peer(struct peer *p, const char *scenario, const char *mode,
                       const char *endpoint)
{
    char *args[] = {peer_path, (char *)scenario, (char *)mode, (char *)endpoint,
                    NULL};
    peer_start(p, args, true);
}

/* ---- the zlink side ----------------------------------------------------- */

static void send_text(void *socket, const char *text)
{
    int rc = zl_test_send_retry(socket, text, strlen(text), 0);
    ck_assert_msg(rc == (int)strlen(text), "send '%s': %s", text,
                  zlink_strerror(zlink_errno()));
}

static void recv_text(void *socket, char *buf, size_t cap)
{
    int n = zl_test_recv_retry(socket, buf, cap - 1, 0);
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
    int n = zl_test_recv_retry(xpub, buf, sizeof buf, 0);
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
        int got = zl_test_recv_retry(xpub, buf, sizeof buf, ZLINK_DONTWAIT);
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
    zl_test_set_int(socket, ZLINK_RCVTIMEO, ZL_TIMEOUT_MS);
    zl_test_set_int(socket, ZLINK_SNDTIMEO, ZL_TIMEOUT_MS);
    zl_test_set_int(socket, ZLINK_LINGER, 0);
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
        start_peer(&peer, v->scenario, "connect", endpoint);
    } else {
        start_peer(&peer, v->scenario, "bind", bind_endpoint);
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
        ck_assert_int_eq(zl_test_send_retry(socket, "\1A", 2, 0), 2);
        expect_topic_a(socket);
        peer_stop(&peer);
        break;
    }

    int status = peer_wait(&peer);
    ck_assert_msg(status == 0,
                  "libzmq peer exited with %d (2 timeout, 3 mismatch)", status);
    peer_close(&peer);
    ck_assert_int_eq(zlink_close(socket), 0);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
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
    if (!peer_find("zmq_pubsub_peer", peer_path, sizeof peer_path)) {
        printf("interop pubsub: libzmq peer not built, skipped\n");
        return EXIT_SUCCESS;
    }
    atexit(clean_up_case);
    return zl_test_run(suite());
}
