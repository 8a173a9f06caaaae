/* test_socket_dealer_router.c — DEALER and ROUTER end to end over every
 * transport: DEALER↔ROUTER, DEALER↔DEALER and ROUTER↔ROUTER with multipart
 * messages of every size, round-robin send and fair-queued receive, routing
 * ids (generated and announced), and ROUTER_MANDATORY. */
#include "socket_testutil.h"

static void send_sizes(void *s, unsigned seed, bool last)
{
    size_t count;
    const size_t *sizes = zt_sizes(&count);
    for (size_t i = 0; i < count; i++)
        zt_send_part(s, sizes[i], seed + (unsigned)i,
                     i + 1 < count || !last ? ZLINK_SNDMORE : 0);
}

static void recv_sizes(void *s, unsigned seed)
{
    size_t count;
    const size_t *sizes = zt_sizes(&count);
    for (size_t i = 0; i < count; i++)
        zt_recv_part(s, sizes[i], seed + (unsigned)i, i + 1 < count);
}

/* Receives a routing-id frame (MORE set) into id; returns its size. */
static size_t recv_id(void *router, uint8_t *id, size_t cap)
{
    int rc = zlink_recv(router, id, cap, 0);
    ck_assert_msg(rc > 0, "routing id: %d %s", rc,
                  zlink_strerror(zlink_errno()));
    ck_assert_int_le(rc, (int)cap);
    ck_assert_int_eq(zt_get_int(router, ZLINK_RCVMORE), 1);
    return (size_t)rc;
}

static void send_id(void *router, const void *id, size_t len)
{
    ck_assert_int_eq(zlink_send(router, id, len, ZLINK_SNDMORE), (int)len);
}

/* Sends text to the peer named id and checks that this peer gets it. */
static void route_text(void *router, const char *id, void *peer,
                       const char *text)
{
    send_id(router, id, strlen(id));
    zt_send_str(router, text, 0);
    zt_recv_str(peer, text);
}

/* With ROUTER_MANDATORY: sends the id frame once the peer is routable
 * (its handshake may still be running). The caller sends the rest. */
static void send_id_when_routable(void *router, const void *id, size_t len)
{
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    for (;;) {
        int rc = zlink_send(router, id, len, ZLINK_SNDMORE | ZLINK_DONTWAIT);
        if (rc == (int)len)
            return;
        ck_assert_msg(zlink_errno() == EHOSTUNREACH || zlink_errno() == EAGAIN,
                      "id frame: %s", zlink_strerror(zlink_errno()));
        ck_assert_msg(zl_test_now_ms() < deadline, "peer never routable");
        zl_test_sleep_ms(2);
    }
}

/* ---- every size, every transport ---- */

START_TEST(dealer_router_sizes)
{
    char ep[300];
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    if (zt_join(router, dealer, _i, ep, sizeof ep)) {
        for (int round = 0; round < 2; round++) {
            send_sizes(dealer, 10u * (unsigned)round, true);
            uint8_t id[256];
            size_t id_len = recv_id(router, id, sizeof id);
            recv_sizes(router, 10u * (unsigned)round);
            send_id(router, id, id_len);
            send_sizes(router, 50u + 10u * (unsigned)round, true);
            recv_sizes(dealer, 50u + 10u * (unsigned)round);
        }
    }
    zt_close(dealer);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

START_TEST(dealer_dealer_sizes)
{
    char ep[300];
    void *ctx = zt_ctx();
    void *a = zt_socket(ctx, ZLINK_DEALER);
    void *b = zt_socket(ctx, ZLINK_DEALER);
    if (zt_join(a, b, _i, ep, sizeof ep)) {
        send_sizes(b, 1, true);
        recv_sizes(a, 1);
        send_sizes(a, 2, true);
        recv_sizes(b, 2);
    }
    zt_close(b);
    zt_close(a);
    zt_term(ctx);
}
END_TEST

/* The connecter names the binder with CONNECT_ROUTING_ID; the binder knows
 * the connecter by the ROUTING_ID it announced. */
START_TEST(router_router_sizes)
{
    char ep[300];
    void *ctx = zt_ctx();
    void *server = zt_socket(ctx, ZLINK_ROUTER);
    void *client = zt_socket(ctx, ZLINK_ROUTER);
    ck_assert_int_eq(zlink_setsockopt(server, ZLINK_ROUTING_ID, "srv", 3), 0);
    ck_assert_int_eq(zlink_setsockopt(client, ZLINK_ROUTING_ID, "cli", 3), 0);
    ck_assert_int_eq(
        zlink_setsockopt(client, ZLINK_CONNECT_ROUTING_ID, "server-alias", 12),
        0);
    zt_set_int(client, ZLINK_ROUTER_MANDATORY, 1);
    zt_set_int(server, ZLINK_ROUTER_MANDATORY, 1);
    if (zt_join(server, client, _i, ep, sizeof ep)) {
        send_id_when_routable(client, "server-alias", 12);
        send_sizes(client, 3, true);
        uint8_t id[256];
        size_t id_len = recv_id(server, id, sizeof id);
        ck_assert_uint_eq(id_len, 3);
        ck_assert_int_eq(memcmp(id, "cli", 3), 0);
        recv_sizes(server, 3);
        send_id(server, "cli", 3);
        send_sizes(server, 4, true);
        id_len = recv_id(client, id, sizeof id);
        ck_assert_uint_eq(id_len, 12);
        ck_assert_int_eq(memcmp(id, "server-alias", 12), 0);
        recv_sizes(client, 4);
    }
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

/* ---- load balancing and fair queueing ---- */

#define PEERS 3
#define PER_PEER 10

static int parse_number(const char *text)
{
    return atoi(text);
}

/* Each peer gets every third message, in order: round robin. */
static void check_round_robin(void *peers[PEERS])
{
    bool residue_seen[PEERS] = {false};
    for (int p = 0; p < PEERS; p++) {
        int first = -1;
        for (int k = 0; k < PER_PEER; k++) {
            char buf[32];
            ck_assert_int_ge(zt_recv_buf(peers[p], buf, sizeof buf, 0), 0);
            int n = parse_number(buf);
            if (k == 0) {
                first = n;
                ck_assert_int_lt(first, PEERS);
                ck_assert(!residue_seen[first]);
                residue_seen[first] = true;
            }
            ck_assert_int_eq(n, first + k * PEERS);
        }
        char buf[32];
        zt_expect_errno(zlink_recv(peers[p], buf, sizeof buf, ZLINK_DONTWAIT),
                        EAGAIN);
    }
}

/* A DEALER connecting to three peers: its pipes exist from the start. */
START_TEST(dealer_round_robin_connecting)
{
    void *ctx = zt_ctx();
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    void *peers[PEERS];
    for (int p = 0; p < PEERS; p++) {
        char ep[300];
        peers[p] = zt_socket(ctx, ZLINK_DEALER);
        ck_assert(zt_endpoint(_i, ep, sizeof ep));
        zt_bind(peers[p], ep);
        zt_last_endpoint(peers[p], ep, sizeof ep);
        zt_connect(dealer, ep);
    }
    for (int n = 0; n < PEERS * PER_PEER; n++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", n);
        zt_send_str(dealer, buf, 0);
    }
    check_round_robin(peers);
    for (int p = 0; p < PEERS; p++)
        zt_close(peers[p]);
    zt_close(dealer);
    zt_term(ctx);
}
END_TEST

/* A bound DEALER (a server handing out work) over peers that connected. */
START_TEST(dealer_round_robin_bound)
{
    void *ctx = zt_ctx();
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    char ep[300];
    ck_assert(zt_endpoint(_i, ep, sizeof ep));
    zt_bind(dealer, ep);
    zt_last_endpoint(dealer, ep, sizeof ep);
    void *peers[PEERS];
    for (int p = 0; p < PEERS; p++) {
        peers[p] = zt_socket(ctx, ZLINK_DEALER);
        zt_connect(peers[p], ep);
        /* Once its hello is in, the peer's pipe is attached. */
        zt_send_str(peers[p], "hello", 0);
        zt_recv_str(dealer, "hello");
    }
    for (int n = 0; n < PEERS * PER_PEER; n++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%d", n);
        zt_send_str(dealer, buf, 0);
    }
    check_round_robin(peers);
    for (int p = 0; p < PEERS; p++)
        zt_close(peers[p]);
    zt_close(dealer);
    zt_term(ctx);
}
END_TEST

/* Messages queued by three peers before the receiver reads come out one
 * per peer in turn; each peer's own order is kept. Over inproc everything
 * is queued before the first recv, so the interleaving is exact. */
START_TEST(dealer_fair_queue)
{
    void *ctx = zt_ctx();
    void *receiver = zt_socket(ctx, ZLINK_DEALER);
    char ep[300];
    ck_assert(zt_endpoint(_i, ep, sizeof ep));
    zt_bind(receiver, ep);
    zt_last_endpoint(receiver, ep, sizeof ep);
    bool exact = _i == ZT_INPROC;
    void *peers[PEERS];
    for (int p = 0; p < PEERS; p++) {
        peers[p] = zt_socket(ctx, ZLINK_DEALER);
        zt_connect(peers[p], ep);
    }
    for (int k = 0; k < PER_PEER; k++)
        for (int p = 0; p < PEERS; p++) {
            char buf[32];
            snprintf(buf, sizeof buf, "%d %d", p, k);
            zt_send_str(peers[p], buf, 0);
        }
    int next[PEERS] = {0};
    for (int round = 0; round < PER_PEER; round++) {
        bool seen[PEERS] = {false};
        for (int j = 0; j < PEERS; j++) {
            char buf[32];
            ck_assert_int_ge(zt_recv_buf(receiver, buf, sizeof buf, 0), 0);
            int p, k;
            ck_assert_int_eq(sscanf(buf, "%d %d", &p, &k), 2);
            ck_assert(p >= 0 && p < PEERS);
            ck_assert_int_eq(k, next[p]);
            next[p]++;
            if (exact) {
                ck_assert_msg(!seen[p], "peer %d twice in round %d", p, round);
                seen[p] = true;
            }
        }
    }
    for (int p = 0; p < PEERS; p++) {
        ck_assert_int_eq(next[p], PER_PEER);
        zt_close(peers[p]);
    }
    zt_close(receiver);
    zt_term(ctx);
}
END_TEST

/* ---- routing ids ---- */

/* Peers that announce nothing get libzmq's generated ids: five bytes, the
 * first zero. Replies reach the right peer. */
START_TEST(router_generated_ids)
{
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    char ep[300];
    if (!zt_endpoint(_i, ep, sizeof ep)) {
        zt_close(router);
        zt_term(ctx);
        return;
    }
    if (_i == ZT_TCP6)
        zt_set_int(router, ZLINK_IPV6, 1);
    if (zlink_bind(router, ep) != 0) {
        ck_assert_int_eq(_i, ZT_TCP6); /* no IPv6 loopback here */
        zt_close(router);
        zt_term(ctx);
        return;
    }
    zt_last_endpoint(router, ep, sizeof ep);
    void *dealers[2];
    uint8_t ids[2][256];
    size_t id_lens[2];
    for (int d = 0; d < 2; d++) {
        dealers[d] = zt_socket(ctx, ZLINK_DEALER);
        if (_i == ZT_TCP6)
            zt_set_int(dealers[d], ZLINK_IPV6, 1);
        zt_connect(dealers[d], ep);
        zt_send_str(dealers[d], d == 0 ? "A" : "B", 0);
        id_lens[d] = recv_id(router, ids[d], sizeof ids[d]);
        ck_assert_uint_eq(id_lens[d], 5);
        ck_assert_uint_eq(ids[d][0], 0);
        zt_recv_str(router, d == 0 ? "A" : "B");
        ck_assert_int_eq(zt_get_int(router, ZLINK_RCVMORE), 0);
    }
    ck_assert(memcmp(ids[0], ids[1], 5) != 0);
    for (int d = 1; d >= 0; d--) {
        send_id(router, ids[d], id_lens[d]);
        zt_send_str(router, d == 0 ? "to A" : "to B", 0);
    }
    zt_recv_str(dealers[0], "to A");
    zt_recv_str(dealers[1], "to B");
    for (int d = 0; d < 2; d++)
        zt_close(dealers[d]);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* A ROUTING_ID announced by the peer is the id the ROUTER sees; the ROUTER
 * may speak first once the peer is routable. */
START_TEST(router_announced_id)
{
    char ep[300];
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    ck_assert_int_eq(zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "alice", 5), 0);
    zt_set_int(router, ZLINK_ROUTER_MANDATORY, 1);
    if (zt_join(router, dealer, _i, ep, sizeof ep)) {
        send_id_when_routable(router, "alice", 5);
        zt_send_str(router, "hi alice", 0);
        zt_recv_str(dealer, "hi alice");
        zt_send_str(dealer, "hi router", 0);
        uint8_t id[256];
        ck_assert_uint_eq(recv_id(router, id, sizeof id), 5);
        ck_assert_int_eq(memcmp(id, "alice", 5), 0);
        zt_recv_str(router, "hi router");
    }
    zt_close(dealer);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* ROUTER_MANDATORY: an unknown id fails with EHOSTUNREACH at the id frame,
 * with or without DONTWAIT, and the socket stays usable. */
START_TEST(router_mandatory_unreachable)
{
    char ep[300];
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    ck_assert_int_eq(zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "bob", 3), 0);
    zt_set_int(router, ZLINK_ROUTER_MANDATORY, 1);
    ck_assert(zt_join(router, dealer, ZT_TCP4, ep, sizeof ep));
    zt_expect_errno(zlink_send(router, "nobody", 6, ZLINK_SNDMORE),
                    EHOSTUNREACH);
    zt_expect_errno(
        zlink_send(router, "nobody", 6, ZLINK_SNDMORE | ZLINK_DONTWAIT),
        EHOSTUNREACH);
    send_id_when_routable(router, "bob", 3);
    zt_send_str(router, "for bob", 0);
    zt_recv_str(dealer, "for bob");
    zt_expect_errno(zlink_send(router, "nobody", 6, ZLINK_SNDMORE),
                    EHOSTUNREACH);
    route_text(router, "bob", dealer, "still fine");
    zt_close(dealer);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* A ROUTER remembers the last peer an id frame found (router.c,
 * find_peer). Sends that alternate between peers still reach each one,
 * and once a peer is gone its id is unknown until a new peer takes it,
 * which then gets the messages. */
START_TEST(router_last_peer_follows_its_id)
{
    char ep[300];
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    zt_set_int(router, ZLINK_ROUTER_MANDATORY, 1);
    void *alice = zt_socket(ctx, ZLINK_DEALER);
    void *bob = zt_socket(ctx, ZLINK_DEALER);
    ck_assert_int_eq(zlink_setsockopt(alice, ZLINK_ROUTING_ID, "alice", 5), 0);
    ck_assert_int_eq(zlink_setsockopt(bob, ZLINK_ROUTING_ID, "bob", 3), 0);
    ck_assert(zt_join(router, alice, _i, ep, sizeof ep));
    zt_connect(bob, ep);
    send_id_when_routable(router, "alice", 5);
    zt_send_str(router, "a0", 0);
    send_id_when_routable(router, "bob", 3);
    zt_send_str(router, "b0", 0);
    for (int i = 1; i < 4; i++) {
        char text[8];
        snprintf(text, sizeof text, "a%d", i);
        send_id(router, "alice", 5);
        zt_send_str(router, text, 0);
        snprintf(text, sizeof text, "b%d", i);
        send_id(router, "bob", 3);
        zt_send_str(router, text, 0);
    }
    for (int i = 0; i < 4; i++) {
        char text[8];
        snprintf(text, sizeof text, "a%d", i);
        zt_recv_str(alice, text);
        snprintf(text, sizeof text, "b%d", i);
        zt_recv_str(bob, text);
    }

    /* bob was found last; now he leaves. */
    route_text(router, "bob", bob, "last for bob");
    zt_close(bob);
    /* Until the router has taken bob's pipe down, the id still routes
     * (the message is lost) or reports a full pipe. The pipe goes once the
     * router has read to its end, so the loop also receives. */
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    for (;;) {
        char buf[16];
        zt_expect_errno(zlink_recv(router, buf, sizeof buf, ZLINK_DONTWAIT),
                        EAGAIN);
        int rc = zlink_send(router, "bob", 3, ZLINK_SNDMORE | ZLINK_DONTWAIT);
        if (rc == 3)
            zt_send_str(router, "to nobody", 0);
        else if (zlink_errno() == EHOSTUNREACH)
            break;
        else
            ck_assert_int_eq(zlink_errno(), EAGAIN);
        ck_assert_msg(zl_test_now_ms() < deadline, "bob never left");
        zl_test_sleep_ms(2);
    }

    void *new_bob = zt_socket(ctx, ZLINK_DEALER);
    ck_assert_int_eq(zlink_setsockopt(new_bob, ZLINK_ROUTING_ID, "bob", 3), 0);
    zt_connect(new_bob, ep);
    send_id_when_routable(router, "bob", 3);
    zt_send_str(router, "for the new bob", 0);
    zt_recv_str(new_bob, "for the new bob");
    route_text(router, "alice", alice, "still alice");
    zt_close(new_bob);
    zt_close(alice);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* ROUTER_MANDATORY: a peer that has left is unreachable, though the router
 * has not read its pipe to the end (nothing receives here). A blocking send
 * to it returned EAGAIN with DONTWAIT, and without it waited for ever. */
START_TEST(router_mandatory_departed_peer)
{
    char ep[300];
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    ck_assert_int_eq(zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "gone", 4), 0);
    zt_set_int(router, ZLINK_ROUTER_MANDATORY, 1);
    if (!zt_join(router, dealer, _i, ep, sizeof ep)) {
        /* This transport is not on this machine (ipc under Wine). */
        zt_close(dealer);
        zt_close(router);
        zt_term(ctx);
        return;
    }
    send_id_when_routable(router, "gone", 4);
    zt_send_str(router, "last", 0);
    zt_recv_str(dealer, "last");
    zt_close(dealer);

    /* Until the router hears that the peer left, a message may still go
     * into its pipe (and is lost, as in libzmq). */
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    for (;;) {
        int rc = zlink_send(router, "gone", 4, ZLINK_SNDMORE | ZLINK_DONTWAIT);
        if (rc == 4) {
            zt_send_str(router, "to nobody", 0);
        } else {
            ck_assert_msg(zlink_errno() == EHOSTUNREACH, "send: %s",
                          zlink_strerror(zlink_errno()));
            break;
        }
        ck_assert_msg(zl_test_now_ms() < deadline, "the peer never left");
        zl_test_sleep_ms(5);
    }
    zt_expect_errno(zlink_send(router, "gone", 4, ZLINK_SNDMORE), EHOSTUNREACH);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* Without ROUTER_MANDATORY a message for an unknown id is dropped whole
 * and every send reports success. */
START_TEST(router_drops_unroutable)
{
    char ep[300];
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    ck_assert_int_eq(zlink_setsockopt(dealer, ZLINK_ROUTING_ID, "bob", 3), 0);
    ck_assert(zt_join(router, dealer, _i, ep, sizeof ep));
    /* Wait for bob with a message of his. */
    zt_send_str(dealer, "ready", 0);
    uint8_t id[16];
    ck_assert_uint_eq(recv_id(router, id, sizeof id), 3);
    zt_recv_str(router, "ready");
    ck_assert_int_eq(zlink_send(router, "nobody", 6, ZLINK_SNDMORE), 6);
    ck_assert_int_eq(zlink_send(router, "lost", 4, ZLINK_SNDMORE), 4);
    ck_assert_int_eq(zlink_send(router, "lost too", 8, 0), 8);
    send_id(router, "bob", 3);
    zt_send_str(router, "kept", 0);
    zt_recv_str(dealer, "kept");
    ck_assert_int_eq(zt_get_int(dealer, ZLINK_RCVMORE), 0);
    char buf[16];
    zt_set_int(dealer, ZLINK_RCVTIMEO, 100);
    zt_expect_errno(zlink_recv(dealer, buf, sizeof buf, 0), EAGAIN);
    zt_close(dealer);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* The routing id frame comes with RCVMORE, then the body parts in order,
 * and a DEALER peer sees exactly the parts after the id. */
START_TEST(router_multipart_envelope)
{
    char ep[300];
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    void *dealer = zt_socket(ctx, ZLINK_DEALER);
    ck_assert(zt_join(router, dealer, _i, ep, sizeof ep));
    for (int n = 0; n < 50; n++) {
        zt_send_str(dealer, "", ZLINK_SNDMORE); /* REQ-style delimiter */
        char body[32];
        snprintf(body, sizeof body, "request %d", n);
        zt_send_str(dealer, body, 0);
    }
    for (int n = 0; n < 50; n++) {
        uint8_t id[16];
        size_t id_len = recv_id(router, id, sizeof id);
        zt_recv_str(router, "");
        ck_assert_int_eq(zt_get_int(router, ZLINK_RCVMORE), 1);
        char body[32];
        snprintf(body, sizeof body, "request %d", n);
        zt_recv_str(router, body);
        ck_assert_int_eq(zt_get_int(router, ZLINK_RCVMORE), 0);
        send_id(router, id, id_len);
        zt_send_str(router, "", ZLINK_SNDMORE);
        snprintf(body, sizeof body, "reply %d", n);
        zt_send_str(router, body, 0);
    }
    for (int n = 0; n < 50; n++) {
        zt_recv_str(dealer, "");
        char body[32];
        snprintf(body, sizeof body, "reply %d", n);
        zt_recv_str(dealer, body);
    }
    zt_close(dealer);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* libzmq 4.3 (without ROUTER_HANDOVER) ignores a second peer announcing a
 * routing id already in use: its messages are not received while the first
 * is connected. */
START_TEST(router_ignores_duplicate_id)
{
    char ep[300];
    void *ctx = zt_ctx();
    void *router = zt_socket(ctx, ZLINK_ROUTER);
    zt_bind_tcp(router, ep, sizeof ep);
    void *first = zt_socket(ctx, ZLINK_DEALER);
    void *second = zt_socket(ctx, ZLINK_DEALER);
    ck_assert_int_eq(zlink_setsockopt(first, ZLINK_ROUTING_ID, "dup", 3), 0);
    ck_assert_int_eq(zlink_setsockopt(second, ZLINK_ROUTING_ID, "dup", 3), 0);
    zt_connect(first, ep);
    zt_send_str(first, "one", 0);
    zt_recv_str(router, "dup");
    zt_recv_str(router, "one");
    zt_connect(second, ep);
    zt_send_str(second, "two", 0);
    char buf[16];
    zt_set_int(router, ZLINK_RCVTIMEO, 300);
    zt_expect_errno(zlink_recv(router, buf, sizeof buf, 0), EAGAIN);
    zt_close(first);
    zt_close(second);
    zt_close(router);
    zt_term(ctx);
}
END_TEST

/* libzmq: a ROUTER that connects with CONNECT_ROUTING_ID can send to that
 * id at once; messages queue until the connection is made. */
START_TEST(router_connect_routing_id_queues)
{
    void *ctx = zt_ctx();
    char ep[300];
    void *probe = zt_socket(ctx, ZLINK_PAIR);
    zt_bind_tcp(probe, ep, sizeof ep);
    zt_close(probe);
    void *client = zt_socket(ctx, ZLINK_ROUTER);
    zt_set_int(client, ZLINK_ROUTER_MANDATORY, 1);
    ck_assert_int_eq(
        zlink_setsockopt(client, ZLINK_CONNECT_ROUTING_ID, "srv", 3), 0);
    zt_connect(client, ep);
    send_id(client, "srv", 3);
    zt_send_str(client, "early", 0);
    void *server = zt_socket(ctx, ZLINK_DEALER);
    zt_bind_when_free(server, ep, ZT_TIMEOUT_MS);
    zt_recv_str(server, "early");
    zt_close(client);
    zt_close(server);
    zt_term(ctx);
}
END_TEST

static Suite *dealer_router_suite(void)
{
    Suite *s = suite_create("socket_dealer_router");
    TCase *sizes = tcase_create("sizes");
    tcase_set_timeout(sizes, 60);
    tcase_add_loop_test(sizes, dealer_router_sizes, 0, ZT_TRANSPORT_COUNT);
    tcase_add_loop_test(sizes, dealer_dealer_sizes, 0, ZT_TRANSPORT_COUNT);
    tcase_add_loop_test(sizes, router_router_sizes, 0, ZT_TRANSPORT_COUNT);
    suite_add_tcase(s, sizes);

    TCase *lb = tcase_create("load_balance");
    tcase_add_loop_test(lb, dealer_round_robin_connecting, ZT_TCP4,
                        ZT_TCP4 + 1);
    tcase_add_loop_test(lb, dealer_round_robin_connecting, ZT_INPROC,
                        ZT_INPROC + 1);
    tcase_add_loop_test(lb, dealer_round_robin_bound, ZT_TCP4, ZT_TCP4 + 1);
    tcase_add_loop_test(lb, dealer_round_robin_bound, ZT_INPROC, ZT_INPROC + 1);
    tcase_add_loop_test(lb, dealer_fair_queue, ZT_TCP4, ZT_TCP4 + 1);
    tcase_add_loop_test(lb, dealer_fair_queue, ZT_INPROC, ZT_INPROC + 1);
    suite_add_tcase(s, lb);

    TCase *ids = tcase_create("routing_ids");
    tcase_add_loop_test(ids, router_generated_ids, 0, ZT_INPROC + 1);
    tcase_add_loop_test(ids, router_announced_id, 0, ZT_TRANSPORT_COUNT);
    tcase_add_test(ids, router_mandatory_unreachable);
    tcase_add_loop_test(ids, router_mandatory_departed_peer, 0,
                        ZT_TRANSPORT_COUNT);
    tcase_add_loop_test(ids, router_last_peer_follows_its_id, ZT_TCP4,
                        ZT_TCP4 + 1);
    tcase_add_loop_test(ids, router_last_peer_follows_its_id, ZT_INPROC,
                        ZT_INPROC + 1);
    tcase_add_loop_test(ids, router_drops_unroutable, ZT_TCP4, ZT_TCP4 + 1);
    tcase_add_loop_test(ids, router_drops_unroutable, ZT_INPROC, ZT_INPROC + 1);
    tcase_add_loop_test(ids, router_multipart_envelope, ZT_TCP4, ZT_TCP4 + 1);
    tcase_add_loop_test(ids, router_multipart_envelope, ZT_INPROC,
                        ZT_INPROC + 1);
    tcase_add_test(ids, router_ignores_duplicate_id);
    tcase_add_test(ids, router_connect_routing_id_queues);
    suite_add_tcase(s, ids);
    return s;
}

int main(void)
{
    return zl_test_run(dealer_router_suite());
}
