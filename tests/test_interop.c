/* test_interop.c — zlink against a real libzmq 4.3 (tests/interop/zmq_peer),
 * or another ZMTP stack's peer (ZLINK_INTEROP_PEER): PAIR, DEALER/ROUTER,
 * REQ/REP and PUSH/PULL in both directions, either side binding, tcp/ipc. */

#include "peer_process.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <zlink.h>

/* The pattern below must stay identical to the one in
 * tests/interop/zmq_peer.c: message i has 1 + i % 3 parts, one empty part in
 * every odd message, sizes on both sides of the 255-byte short-frame limit,
 * and one 1 MiB body. */
#define IX_COUNT 10
#define IX_BIG_INDEX 4
#define IX_BIG_SIZE (1024 * 1024)

static int ix_parts(int i)
{
    return 1 + i % 3;
}

static size_t ix_size(int i, int part)
{
    if (i == IX_BIG_INDEX && part == 0)
        return IX_BIG_SIZE;
    if (i % 2 == 1 && part == 1)
        return 0;
    return (size_t)(1 + (i * 37 + part * 111) % 300);
}

static unsigned char ix_byte(int i, int part, size_t offset)
{
    return (unsigned char)(i * 31 + part * 7 + offset * 13 + (offset >> 8));
}

/* Every wait is bounded, so a broken peer or a broken zlink fails the case
 * instead of hanging the suite. */
#define ZL_TIMEOUT_MS 10000
/* Parts up to this size go through zlink_send/zlink_recv, larger ones
 * through zlink_msg_*, so both halves of the API meet the peer. */
#define SMALL_PART_MAX 256

static char peer_path[1024];
/* What a case leaves behind if an assertion ends it: the peer still
 * running (peer_process.c) and the ipc socket file. */
static char ipc_path[512];

static void clean_up_case(void)
{
    peer_kill_running();
    if (ipc_path[0] != '\0')
        remove(ipc_path);
    ipc_path[0] = '\0';
}

static void start_peer(struct peer *p, const char *type, const char *mode,
                       const char *endpoint, const char *scenario,
                       const char *routing_id)
{
    char count[16];
    snprintf(count, sizeof count, "%d", IX_COUNT);
    char *args[] = {
        peer_path,        (char *)type, (char *)mode,       (char *)endpoint,
        (char *)scenario, count,        (char *)routing_id, NULL};
    peer_start(p, args, false);
}

static void *open_socket(void *ctx, int type, const char *routing_id)
{
    void *socket = zlink_socket(ctx, type);
    ck_assert_msg(socket != NULL, "zlink_socket(%d): %s", type,
                  zlink_strerror(zlink_errno()));
    zl_test_set_int(socket, ZLINK_RCVTIMEO, ZL_TIMEOUT_MS);
    zl_test_set_int(socket, ZLINK_SNDTIMEO, ZL_TIMEOUT_MS);
    zl_test_set_int(socket, ZLINK_LINGER, 0);
    /* A JeroMQ connector now and then reads our greeting and never sends
     * its own; it does so to libzmq too. Closing such a connection early
     * makes the peer connect again, well inside its own timeouts, when it
     * still polls its socket (ci/test.sh retries the stacks when not). */
    zl_test_set_int(socket, ZLINK_HANDSHAKE_IVL, 2000);
    if (type == ZLINK_ROUTER) {
        /* Sending to a peer that has not connected yet must fail with
         * EHOSTUNREACH, which we retry, not drop silently. */
        zl_test_set_int(socket, ZLINK_ROUTER_MANDATORY, 1);
    } else if (routing_id != NULL) {
        int rc = zlink_setsockopt(socket, ZLINK_ROUTING_ID, routing_id,
                                  strlen(routing_id));
        ck_assert_msg(rc == 0, "ZLINK_ROUTING_ID: %s",
                      zlink_strerror(zlink_errno()));
    }
    return socket;
}

static void fill_part(unsigned char *data, int index, int part)
{
    size_t size = ix_size(index, part);
    for (size_t off = 0; off < size; off++)
        data[off] = ix_byte(index, part, off);
}

static void check_part(const unsigned char *data, size_t size, int index,
                       int part)
{
    ck_assert_msg(size == ix_size(index, part),
                  "message %d part %d: %zu bytes, expected %zu", index, part,
                  size, ix_size(index, part));
    for (size_t off = 0; off < size; off++) {
        if (data[off] != ix_byte(index, part, off))
            ck_abort_msg("message %d part %d: byte %zu is %u, expected %u",
                         index, part, off, data[off],
                         ix_byte(index, part, off));
    }
}

static void check_rcvmore(void *socket, bool expected, int index, int part)
{
    int more = -1;
    size_t len = sizeof more;
    ck_assert_int_eq(zlink_getsockopt(socket, ZLINK_RCVMORE, &more, &len), 0);
    ck_assert_msg((more != 0) == expected,
                  "message %d part %d: RCVMORE is %d, expected %d", index, part,
                  more, expected);
}

static void send_routing_id(void *socket, const char *routing_id,
                            uint64_t timeout_ms)
{
    uint64_t give_up = zl_test_now_ms() + timeout_ms;
    size_t len = strlen(routing_id);
    while (zl_test_send_retry(socket, routing_id, len, ZLINK_SNDMORE) !=
           (int)len) {
        /* The peer's DEALER may still be connecting or handshaking. */
        int err = zlink_errno();
        ck_assert_msg(err == EHOSTUNREACH, "send routing id: %s",
                      zlink_strerror(err));
        ck_assert_msg(zl_test_now_ms() < give_up,
                      "routing id %s never became reachable", routing_id);
        zl_test_sleep_ms(10);
    }
}

static void recv_routing_id(void *socket, const char *routing_id, int index)
{
    char id[256];
    int n = zl_test_recv_retry(socket, id, sizeof id, 0);
    ck_assert_msg(n >= 0, "message %d: recv routing id: %s", index,
                  zlink_strerror(zlink_errno()));
    ck_assert_msg((size_t)n == strlen(routing_id) &&
                      memcmp(id, routing_id, (size_t)n) == 0,
                  "message %d: routing id is '%.*s', expected '%s'", index,
                  n < (int)sizeof id ? n : (int)sizeof id, id, routing_id);
    check_rcvmore(socket, true, index, -1);
}

/* Sends message `index` of the pattern; a ROUTER addresses routing_id, and
 * waits for the peer's start before the first. */
static void send_pattern(void *socket, int type, const char *routing_id,
                         int index)
{
    if (type == ZLINK_ROUTER)
        send_routing_id(socket, routing_id,
                        index == 0 ? PEER_START_TIMEOUT_MS : ZL_TIMEOUT_MS);
    int parts = ix_parts(index);
    for (int part = 0; part < parts; part++) {
        size_t size = ix_size(index, part);
        int flags = part + 1 < parts ? ZLINK_SNDMORE : 0;
        int rc;
        if (size <= SMALL_PART_MAX) {
            unsigned char buf[SMALL_PART_MAX];
            fill_part(buf, index, part);
            rc = zl_test_send_retry(socket, buf, size, flags);
        } else {
            zlink_msg_t msg;
            ck_assert_int_eq(zlink_msg_init_size(&msg, size), 0);
            fill_part(zlink_msg_data(&msg), index, part);
            rc = zl_test_msg_send_retry(&msg, socket, flags);
            if (rc < 0)
                zlink_msg_close(&msg);
        }
        ck_assert_msg(rc == (int)size, "message %d part %d: send: %s", index,
                      part, rc < 0 ? zlink_strerror(zlink_errno()) : "short");
    }
}

/* Receives message `index` and checks every part; a ROUTER also checks
 * the routing-id frame in front of it. */
static void recv_pattern(void *socket, int type, const char *routing_id,
                         int index)
{
    if (type == ZLINK_ROUTER)
        recv_routing_id(socket, routing_id, index);
    int parts = ix_parts(index);
    for (int part = 0; part < parts; part++) {
        bool more = part + 1 < parts;
        if (ix_size(index, part) <= SMALL_PART_MAX) {
            unsigned char buf[SMALL_PART_MAX];
            int n = zl_test_recv_retry(socket, buf, sizeof buf, 0);
            ck_assert_msg(n >= 0, "message %d part %d: recv: %s", index, part,
                          zlink_strerror(zlink_errno()));
            check_part(buf, (size_t)n, index, part);
        } else {
            zlink_msg_t msg;
            ck_assert_int_eq(zlink_msg_init(&msg), 0);
            int n = zl_test_msg_recv_retry(&msg, socket, 0);
            ck_assert_msg(n >= 0, "message %d part %d: recv: %s", index, part,
                          zlink_strerror(zlink_errno()));
            ck_assert_int_eq((size_t)n, zlink_msg_size(&msg));
            check_part(zlink_msg_data(&msg), zlink_msg_size(&msg), index, part);
            ck_assert_int_eq(zlink_msg_more(&msg) != 0, more);
            zlink_msg_close(&msg);
        }
        check_rcvmore(socket, more, index, part);
    }
}

static void check_nothing_pending(void *socket)
{
    char buf[16];
    int n = zl_test_recv_retry(socket, buf, sizeof buf, ZLINK_DONTWAIT);
    ck_assert_msg(n == -1 && zlink_errno() == EAGAIN,
                  "unexpected message after the exchange (%d)", n);
}

/* Who starts, and how: all sends then all echoes (SENDS), one request and
 * its reply at a time (REQUESTS, for REQ), or one way only (PUSHES). */
enum initiator {
    ZLINK_SENDS,
    PEER_SENDS,
    ZLINK_REQUESTS,
    PEER_REQUESTS,
    ZLINK_PUSHES,
    PEER_PUSHES
};

struct variant {
    const char *name;
    int zlink_type;
    const char *peer_type;
    enum initiator initiator;
    /* The DEALER's routing id, whichever side the DEALER is on: the ROUTER
     * side checks it on every message and addresses its sends with it. */
    const char *routing_id;
};

static const struct variant variants[] = {
    {"zlink PAIR -> peer PAIR", ZLINK_PAIR, "PAIR", ZLINK_SENDS, NULL},
    {"peer PAIR -> zlink PAIR", ZLINK_PAIR, "PAIR", PEER_SENDS, NULL},
    {"zlink DEALER -> peer ROUTER", ZLINK_DEALER, "ROUTER", ZLINK_SENDS,
     "zlink-dealer"},
    {"peer DEALER -> zlink ROUTER", ZLINK_ROUTER, "DEALER", PEER_SENDS,
     "zmq-dealer"},
    {"peer ROUTER -> zlink DEALER", ZLINK_DEALER, "ROUTER", PEER_SENDS,
     "zlink-dealer"},
    {"zlink ROUTER -> peer DEALER", ZLINK_ROUTER, "DEALER", ZLINK_SENDS,
     "zmq-dealer"},
    {"zlink REQ -> peer REP", ZLINK_REQ, "REP", ZLINK_REQUESTS, NULL},
    {"peer REQ -> zlink REP", ZLINK_REP, "REQ", PEER_REQUESTS, NULL},
    {"zlink PUSH -> peer PULL", ZLINK_PUSH, "PULL", ZLINK_PUSHES, NULL},
    {"peer PUSH -> zlink PULL", ZLINK_PULL, "PUSH", PEER_PUSHES, NULL},
};
#define VARIANT_COUNT ((int)(sizeof variants / sizeof variants[0]))
/* Each variant runs four ways: who binds (zlink, peer) x (tcp, ipc). */
#define WAYS 4

/* The peer's stack: libzmq's zmq_peer by default, or any program with its
 * argv and exit codes named by ZLINK_INTEROP_PEER (ci/interop-stacks.sh
 * runs pyzmq, JeroMQ and go-zeromq peers this way). ZLINK_INTEROP_NO_IPC
 * skips ipc for a stack without it. */
static const char *peer_stack = "libzmq";
static bool peer_has_ipc = true;
/* ZLINK_INTEROP_SKIP: variants whose name contains this text are skipped,
 * for a stack's own bug (ci/interop-stacks.sh says which and why). */
static const char *skip_variants;

static void run_case(const struct variant *v, bool zlink_binds, bool ipc)
{
    fprintf(stderr, "interop (%s): %s, %s, %s binds\n", peer_stack, v->name,
            ipc ? "ipc" : "tcp", zlink_binds ? "zlink" : "the peer");
    if (ipc && !peer_has_ipc) {
        fprintf(stderr, "interop (%s): no ipc, skipped\n", peer_stack);
        return;
    }
    if (skip_variants && strstr(v->name, skip_variants)) {
        fprintf(stderr, "interop (%s): skipped (ZLINK_INTEROP_SKIP)\n",
                peer_stack);
        return;
    }

    char bind_endpoint[512] = "tcp://127.0.0.1:*";
    if (ipc) {
        zl_test_ipc_endpoint(bind_endpoint, sizeof bind_endpoint);
        snprintf(ipc_path, sizeof ipc_path, "%s",
                 bind_endpoint + strlen("ipc://"));
    }
    /* What the peer does, by initiator. */
    static const char *const scenarios[] = {
        [ZLINK_SENDS] = "echo",    [PEER_SENDS] = "send",
        [ZLINK_REQUESTS] = "echo", [PEER_REQUESTS] = "request",
        [ZLINK_PUSHES] = "sink",   [PEER_PUSHES] = "source"};
    const char *scenario = scenarios[v->initiator];

    void *ctx = zlink_ctx_new();
    ck_assert_msg(ctx != NULL, "zlink_ctx_new: %s",
                  zlink_strerror(zlink_errno()));
    void *socket = open_socket(ctx, v->zlink_type, v->routing_id);

    struct peer peer;
    if (zlink_binds) {
        int rc = zlink_bind(socket, bind_endpoint);
        ck_assert_msg(rc == 0, "zlink_bind(%s): %s", bind_endpoint,
                      zlink_strerror(zlink_errno()));
        char endpoint[512];
        size_t len = sizeof endpoint;
        ck_assert_int_eq(
            zlink_getsockopt(socket, ZLINK_LAST_ENDPOINT, endpoint, &len), 0);
        start_peer(&peer, v->peer_type, "connect", endpoint, scenario,
                   v->routing_id);
    } else {
        start_peer(&peer, v->peer_type, "bind", bind_endpoint, scenario,
                   v->routing_id);
        const char *endpoint = peer_read_endpoint(&peer);
        int rc = zlink_connect(socket, endpoint);
        ck_assert_msg(rc == 0, "zlink_connect(%s): %s", endpoint,
                      zlink_strerror(zlink_errno()));
    }

    /* The first message, either way, also waits for the peer's start: a
     * send blocks until the peer connects, a receive until it sends. */
    zl_test_set_int(socket, ZLINK_RCVTIMEO, PEER_START_TIMEOUT_MS);
    zl_test_set_int(socket, ZLINK_SNDTIMEO, PEER_START_TIMEOUT_MS);
    for (int i = 0; i < IX_COUNT; i++) {
        if (i == 1) {
            zl_test_set_int(socket, ZLINK_RCVTIMEO, ZL_TIMEOUT_MS);
            zl_test_set_int(socket, ZLINK_SNDTIMEO, ZL_TIMEOUT_MS);
        }
        switch (v->initiator) {
        case ZLINK_SENDS:
        case ZLINK_PUSHES:
            send_pattern(socket, v->zlink_type, v->routing_id, i);
            break;
        case ZLINK_REQUESTS:
            send_pattern(socket, v->zlink_type, v->routing_id, i);
            recv_pattern(socket, v->zlink_type, v->routing_id, i);
            break;
        case PEER_SENDS:
        case PEER_REQUESTS:
            recv_pattern(socket, v->zlink_type, v->routing_id, i);
            send_pattern(socket, v->zlink_type, v->routing_id, i);
            break;
        case PEER_PUSHES:
            recv_pattern(socket, v->zlink_type, v->routing_id, i);
            break;
        }
    }
    if (v->initiator == ZLINK_SENDS) {
        for (int i = 0; i < IX_COUNT; i++)
            recv_pattern(socket, v->zlink_type, v->routing_id, i);
    }
    /* A PUSH cannot receive, and a REQ not while no request is out. */
    if (v->zlink_type != ZLINK_PUSH && v->zlink_type != ZLINK_REQ)
        check_nothing_pending(socket);

    /* The peer exits 0 only after it checked every message it received,
     * routing ids included; LINGER 0 is safe only once it has. */
    int status = peer_wait(&peer);
    ck_assert_msg(status == 0, "%s peer exited with %d (2 timeout, 3 mismatch)",
                  peer_stack, status);
    peer_close(&peer);

    ck_assert_int_eq(zlink_close(socket), 0);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
    clean_up_case();
}

START_TEST(test_interop_case)
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
    Suite *s = suite_create("interop");
    for (int v = 0; v < VARIANT_COUNT; v++) {
        TCase *tc = tcase_create(variants[v].name);
        /* The peer may be a JVM or an interpreter started cold, and the
         * suite also runs outside ctest (ci/interop-stacks.sh), where
         * Check's default would be 4 s. */
        tcase_set_timeout(tc, 60);
        tcase_add_checked_fixture(tc, NULL, teardown);
        tcase_add_loop_test(tc, test_interop_case, v * WAYS, (v + 1) * WAYS);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    const char *custom = getenv("ZLINK_INTEROP_PEER");
    if (custom && custom[0] != '\0') {
        snprintf(peer_path, sizeof peer_path, "%s", custom);
        const char *stack = getenv("ZLINK_INTEROP_STACK");
        peer_stack = stack && stack[0] != '\0' ? stack : custom;
        peer_has_ipc = getenv("ZLINK_INTEROP_NO_IPC") == NULL;
        skip_variants = getenv("ZLINK_INTEROP_SKIP");
    } else if (!peer_find("zmq_peer", peer_path, sizeof peer_path)) {
        printf("interop: libzmq peer not built, skipped\n");
        return EXIT_SUCCESS;
    }
    /* A failed case is cleaned up by the checked teardown (CK_FORK=no) or
     * by Check killing the forked test's process group; this covers an
     * exit() from anywhere else. */
    atexit(clean_up_case);
    return zl_test_run(suite());
}
