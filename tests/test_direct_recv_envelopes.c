/* test_direct_recv_envelopes.c — the patterns with envelopes reading their
 * connection themselves in a blocking receive (direct_recv.h). REQ and
 * REP: a message behind an empty delimiter is taken whole, the delimiter
 * dropped, and the pattern moves on as if its receive had read both.
 * ROUTER: the message read waits behind its peer's routing id. Anything
 * else (a longer envelope, a reply without its delimiter, a correlated
 * reply, a message over MAXMSGPARTS, more parts) goes through the engine
 * and the pattern as before.
 * Where the backend cannot read from another thread, the same traffic must
 * flow with no direct read at all. */

#include <string.h>
#include <uv.h>

#include "direct_recv_testutil.h"

#define ROUND_TRIPS 200

static const size_t sizes[] = {0, 1, 64, 255, 256, 2047, 2048, 2049, 9000};
#define SIZES (sizeof sizes / sizeof sizes[0])

/* Every fifth request and reply has two parts: the path is for one. */
static bool multipart(unsigned i)
{
    return i % 5 == 2;
}

typedef struct sockets {
    void *ctx, *server, *client;
    bool joined;
} sockets;

static void open_sockets(sockets *k, int server_type, int client_type,
                         int transport)
{
    char ep[300];
    k->ctx = zt_ctx();
    k->server = zt_socket(k->ctx, server_type);
    k->client = zt_socket(k->ctx, client_type);
    k->joined = zt_join(k->server, k->client, transport, ep, sizeof ep);
}

static void close_sockets(sockets *k)
{
    zt_close(k->client);
    zt_close(k->server);
    zt_term(k->ctx);
}

static void rep_echo(void *arg)
{
    void *rep = arg;
    for (unsigned i = 0; i < ROUND_TRIPS; i++) {
        size_t size = sizes[i % SIZES];
        if (multipart(i))
            zt_recv_part(rep, 3, i + 500u, true);
        zt_recv_part(rep, size, i, false);
        if (multipart(i))
            zt_send_part(rep, 3, i + 900u, ZLINK_SNDMORE);
        zt_send_part(rep, size, i + 7u, 0);
    }
}

/* REQ and REP both wait in blocking receives: both may read directly. */
START_TEST(req_rep_round_trips)
{
    sockets k;
    open_sockets(&k, ZLINK_REP, ZLINK_REQ, _i == 0 ? ZT_TCP4 : ZT_IPC);
    if (!k.joined) {
        close_sockets(&k);
        return;
    }
    unsigned before = zl_direct_recvs_total();
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, rep_echo, k.server), 0);
    for (unsigned i = 0; i < ROUND_TRIPS; i++) {
        size_t size = sizes[i % SIZES];
        if (multipart(i))
            zt_send_part(k.client, 3, i + 500u, ZLINK_SNDMORE);
        zt_send_part(k.client, size, i, 0);
        if (multipart(i))
            zt_recv_part(k.client, 3, i + 900u, true);
        zt_recv_part(k.client, size, i + 7u, false);
        /* Out of turn, as ever. */
        char c;
        zt_expect_errno(zlink_recv(k.client, &c, 1, ZLINK_DONTWAIT), EFSM);
    }
    uv_thread_join(&t);
    zt_check_direct_reads(before);
    close_sockets(&k);
}
END_TEST

/* A DEALER talks to a REP with envelopes of its own choosing: the bare
 * delimiter may be read directly, a label in front of it may not, and
 * each reply must come back behind the envelope its request had. Several
 * rounds: a request that comes before the REP waits again goes through
 * the engine, so one round alone might read nothing directly. */
#define ENVELOPE_ROUNDS 10

static const char *const bodies[] = {"a", "b", "c", "d"};

static void rep_answers(void *arg)
{
    void *rep = arg;
    /* One wait per request: one that begins while the engine is still
     * reading is woken when the engine opens the port, and watches. */
    zt_set_int(rep, ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
    for (unsigned i = 0; i < 4 * ENVELOPE_ROUNDS; i++) {
        zt_recv_str(rep, bodies[i % 4]);
        ck_assert_int_eq(zt_get_int(rep, ZLINK_RCVMORE), 0);
        char reply[8] = {(char)('A' + i % 4), 0};
        zt_send_str(rep, reply, 0);
    }
}

START_TEST(rep_keeps_each_requests_envelope)
{
    sockets k;
    open_sockets(&k, ZLINK_REP, ZLINK_DEALER, ZT_TCP4);
    ck_assert(k.joined);
    unsigned before = zl_direct_recvs_total();
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, rep_answers, k.server), 0);
    /* a: the delimiter alone; b: a label first; c: alone again; d: two
     * labels. The DEALER waits for each reply, so the REP waits too. */
    static const char *const labels[4][2] = {
        {NULL, NULL}, {"x", NULL}, {NULL, NULL}, {"p", "q"}};
    for (unsigned n = 0; n < 4 * ENVELOPE_ROUNDS; n++) {
        unsigned i = n % 4;
        zl_test_sleep_ms(2); /* the REP waits anew meanwhile */
        for (unsigned l = 0; l < 2 && labels[i][l]; l++)
            zt_send_str(k.client, labels[i][l], ZLINK_SNDMORE);
        zt_send_str(k.client, "", ZLINK_SNDMORE);
        zt_send_str(k.client, bodies[i], 0);
        for (unsigned l = 0; l < 2 && labels[i][l]; l++)
            zt_recv_str(k.client, labels[i][l]);
        zt_recv_str(k.client, "");
        ck_assert_int_eq(zt_get_int(k.client, ZLINK_RCVMORE), 1);
        char reply[8] = {(char)('A' + i), 0};
        zt_recv_str(k.client, reply);
        ck_assert_int_eq(zt_get_int(k.client, ZLINK_RCVMORE), 0);
    }
    uv_thread_join(&t);
    /* The DEALER's replies are multipart: every direct read was the
     * REP's. */
    zt_check_direct_reads(before);
    close_sockets(&k);
}
END_TEST

/* A ROUTER answers a REQ, sometimes wrongly: a reply without the empty
 * delimiter is dropped, the right one after it is received. */
typedef struct router_side {
    void *router;
    bool correlate;
} router_side;

static void recv_request(void *router, char *id, size_t cap, size_t *id_len,
                         uint8_t *req_id, const char *body, bool correlate)
{
    int n = zlink_recv(router, id, cap, 0);
    ck_assert_int_gt(n, 0);
    *id_len = (size_t)n;
    if (correlate)
        ck_assert_int_eq(zlink_recv(router, req_id, 4, 0), 4);
    zt_recv_str(router, "");
    zt_recv_str(router, body);
}

static void router_answers(void *arg)
{
    router_side *r = arg;
    char id[256];
    size_t id_len;
    uint8_t req_id[4];
    recv_request(r->router, id, sizeof id, &id_len, req_id, "q1", r->correlate);
    /* Wrong: no delimiter. Then right. */
    ck_assert_int_eq(zlink_send(r->router, id, id_len, ZLINK_SNDMORE),
                     (int)id_len);
    zt_send_str(r->router, "no delimiter", 0);
    /* Time for the REQ to drop it and wait again, reading directly. */
    zl_test_sleep_ms(100);
    ck_assert_int_eq(zlink_send(r->router, id, id_len, ZLINK_SNDMORE),
                     (int)id_len);
    if (r->correlate)
        ck_assert_int_eq(zlink_send(r->router, req_id, 4, ZLINK_SNDMORE), 4);
    zt_send_str(r->router, "", ZLINK_SNDMORE);
    zt_send_str(r->router, "r1", 0);
}

START_TEST(req_drops_a_reply_without_delimiter)
{
    bool correlate = _i == 1;
    sockets k;
    open_sockets(&k, ZLINK_ROUTER, ZLINK_REQ, ZT_TCP4);
    ck_assert(k.joined);
    if (correlate)
        zt_set_int(k.client, ZLINK_REQ_CORRELATE, 1);
    zt_set_int(k.client, ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
    unsigned before = zl_direct_recvs_total();
    router_side r = {k.server, correlate};
    uv_thread_t t;
    zt_send_str(k.client, "q1", 0);
    ck_assert_int_eq(uv_thread_create(&t, router_answers, &r), 0);
    zt_recv_str(k.client, "r1");
    ck_assert_int_eq(zt_get_int(k.client, ZLINK_RCVMORE), 0);
    uv_thread_join(&t);
    /* The ROUTER reads through its engine: the direct reads were the
     * REQ's, and a correlated reply (its id frame first) has none. */
    if (correlate)
        ck_assert_uint_eq(zl_direct_recvs_total() - before, 0);
    else
        zt_check_direct_reads(before);
    close_sockets(&k);
}
END_TEST

/* MAXMSGPARTS 1 on a REQ: a reply, two parts on the wire, exceeds it.
 * The engine closes the connection, as without the path, and the REQ's
 * receive gets nothing. */
static void router_answers_once(void *arg)
{
    void *router = arg;
    char id[256];
    size_t id_len;
    uint8_t req_id[4];
    recv_request(router, id, sizeof id, &id_len, req_id, "q", false);
    ck_assert_int_eq(zlink_send(router, id, id_len, ZLINK_SNDMORE),
                     (int)id_len);
    zt_send_str(router, "", ZLINK_SNDMORE);
    zt_send_str(router, "r", 0);
}

START_TEST(req_reply_over_maxmsgparts_is_refused)
{
    sockets k;
    k.ctx = zt_ctx();
    k.server = zt_socket(k.ctx, ZLINK_ROUTER);
    k.client = zt_socket(k.ctx, ZLINK_REQ);
    zt_set_int(k.client, ZLINK_MAXMSGPARTS, 1);
    zt_set_int(k.client, ZLINK_RCVTIMEO, 300);
    char ep[300];
    ck_assert(zt_join(k.server, k.client, ZT_TCP4, ep, sizeof ep));
    unsigned before = zl_direct_recvs_total();
    zt_send_str(k.client, "q", 0);
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, router_answers_once, k.server), 0);
    char buf[8];
    zt_expect_errno(zlink_recv(k.client, buf, sizeof buf, 0), EAGAIN);
    uv_thread_join(&t);
    ck_assert_uint_eq(zl_direct_recvs_total() - before, 0);
    close_sockets(&k);
}
END_TEST

/* A ROUTER with one peer echoes what a DEALER sends: each message comes
 * behind the DEALER's routing id, single parts read directly, multipart
 * ones through the engine. The DEALER polls before it reads, which never
 * reads directly: every direct read is the ROUTER's. */
static void router_echo(void *arg)
{
    void *router = arg;
    for (unsigned i = 0; i < ROUND_TRIPS; i++) {
        size_t size = sizes[i % SIZES];
        zt_recv_str(router, "client-7");
        ck_assert_int_eq(zt_get_int(router, ZLINK_RCVMORE), 1);
        zt_send_str(router, "client-7", ZLINK_SNDMORE);
        if (multipart(i)) {
            zt_recv_part(router, 3, i + 500u, true);
            zt_send_part(router, 3, i + 900u, ZLINK_SNDMORE);
        }
        zt_recv_part(router, size, i, false);
        zt_send_part(router, size, i + 7u, 0);
    }
}

static void poll_in(void *s)
{
    zlink_pollitem_t item = {.socket = s, .events = ZLINK_POLLIN};
    ck_assert_int_eq(zlink_poll(&item, 1, ZT_TIMEOUT_MS), 1);
}

START_TEST(router_round_trips)
{
    sockets k;
    k.ctx = zt_ctx();
    k.server = zt_socket(k.ctx, ZLINK_ROUTER);
    k.client = zt_socket(k.ctx, ZLINK_DEALER);
    zlink_setsockopt(k.client, ZLINK_ROUTING_ID, "client-7", 8);
    char ep[300];
    ck_assert(zt_join(k.server, k.client, ZT_TCP4, ep, sizeof ep));
    unsigned before = zl_direct_recvs_total();
    uv_thread_t t;
    ck_assert_int_eq(uv_thread_create(&t, router_echo, k.server), 0);
    for (unsigned i = 0; i < ROUND_TRIPS; i++) {
        size_t size = sizes[i % SIZES];
        if (multipart(i))
            zt_send_part(k.client, 3, i + 500u, ZLINK_SNDMORE);
        zt_send_part(k.client, size, i, 0);
        poll_in(k.client);
        if (multipart(i))
            zt_recv_part(k.client, 3, i + 900u, true);
        zt_recv_part(k.client, size, i + 7u, false);
    }
    uv_thread_join(&t);
    zt_check_direct_reads(before);
    close_sockets(&k);
}
END_TEST

static Suite *direct_recv_envelopes_suite(void)
{
    Suite *s = suite_create("direct_recv_envelopes");
    TCase *tc = tcase_create("direct_recv_envelopes");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, req_rep_round_trips, 0, 2);
    tcase_add_test(tc, rep_keeps_each_requests_envelope);
    tcase_add_loop_test(tc, req_drops_a_reply_without_delimiter, 0, 2);
    tcase_add_test(tc, req_reply_over_maxmsgparts_is_refused);
    tcase_add_test(tc, router_round_trips);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(direct_recv_envelopes_suite());
}
