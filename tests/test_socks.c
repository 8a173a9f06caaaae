/* test_socks.c — connecting through a SOCKS5 proxy (ZLINK_SOCKS_PROXY): a
 * small proxy inside the test, on a thread of its own, that forwards to a
 * zlink ROUTER or plays a hostile proxy from a script; the options; and
 * the protocol's encoder and reader alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <zlink.h>

#include "raw_socket.h"
#include "testutil.h"
#include "transport/socks.h"

#define WAIT_MS 5000

/* ---- the proxy ---- */

/* Read this many bytes from the client, then send these. */
typedef struct step {
    size_t read;
    const char *send;
    size_t send_len;
} step;

typedef enum proxy_mode {
    PROXY_FORWARD, /* a real proxy: the exchange, then relays to the peer */
    PROXY_SCRIPT,  /* plays steps, then closes */
    PROXY_HOLD     /* plays steps, then keeps the connection until the
                      client closes it */
} proxy_mode;

typedef struct proxy {
    raw_fd listener;
    int port;
    proxy_mode mode;
    const char *username, *password; /* FORWARD: required when set */
    bool coalesce; /* FORWARD: the peer speaks first (ZMTP, not ws) */
    step steps[4];
    int step_count;
    uv_thread_t thread;
    uv_mutex_t lock;
    /* Under lock: what the client sent before the relay, and the steps
     * played. */
    uint8_t seen[1024];
    size_t seen_len;
    int steps_done;
} proxy;

/* Reads exactly n bytes from the client, keeping them in seen. */
static bool take(proxy *p, raw_fd fd, uint8_t *out, size_t n)
{
    uint8_t buf[512];
    if (n > sizeof buf || !raw_recv_exact(fd, buf, n, WAIT_MS))
        return false;
    uv_mutex_lock(&p->lock);
    if (p->seen_len + n <= sizeof p->seen) {
        memcpy(p->seen + p->seen_len, buf, n);
        p->seen_len += n;
    }
    uv_mutex_unlock(&p->lock);
    if (out)
        memcpy(out, buf, n);
    return true;
}

static bool send_all(raw_fd fd, const void *data, size_t len)
{
    const char *c = data;
    while (len > 0) {
        int n = (int)send(fd, c, (int)len, 0);
        if (n <= 0)
            return false;
        c += n;
        len -= (size_t)n;
    }
    return true;
}

/* Copies bytes both ways until either side closes, for at most 30 s. */
static void relay(raw_fd a, raw_fd b)
{
    uint64_t deadline = zl_test_now_ms() + 30000;
    char buf[4096];
    while (zl_test_now_ms() < deadline) {
        fd_set set;
        FD_ZERO(&set);
        FD_SET(a, &set);
        FD_SET(b, &set);
        struct timeval tv = {0, 100000};
        int max = (int)(a > b ? a : b);
        if (select(max + 1, &set, NULL, NULL, &tv) <= 0)
            continue;
        raw_fd from[2] = {a, b}, to[2] = {b, a};
        for (int i = 0; i < 2; i++) {
            if (!FD_ISSET(from[i], &set))
                continue;
            int n = (int)recv(from[i], buf, sizeof buf, 0);
            if (n <= 0 || !send_all(to[i], buf, (size_t)n))
                return;
        }
    }
}

/* A proxy's side of RFC 1928 and 1929, then the relay. */
static void forward(proxy *p, raw_fd fd)
{
    uint8_t head[2], methods[255];
    if (!take(p, fd, head, 2) || !take(p, fd, methods, head[1]))
        return;
    if (p->username) {
        uint8_t len[1], user[256], pass[256];
        if (!send_all(fd, "\x05\x02", 2) || !take(p, fd, head, 2) ||
            !take(p, fd, user, head[1]) || !take(p, fd, len, 1) ||
            !take(p, fd, pass, len[0]))
            return;
        bool ok = head[1] == strlen(p->username) &&
                  memcmp(user, p->username, head[1]) == 0 &&
                  len[0] == strlen(p->password) &&
                  memcmp(pass, p->password, len[0]) == 0;
        if (!send_all(fd, ok ? "\x01\x00" : "\x01\x01", 2) || !ok)
            return;
    } else if (!send_all(fd, "\x05\x00", 2)) {
        return;
    }
    uint8_t request[4], address[300];
    if (!take(p, fd, request, 4))
        return;
    size_t rest = request[3] == 1 ? 4 + 2 : request[3] == 4 ? 16 + 2 : 0;
    if (request[3] == 3) {
        if (!take(p, fd, address, 1))
            return;
        rest = (size_t)address[0] + 2;
    }
    if (!take(p, fd, address, rest))
        return;
    /* Every peer here is on 127.0.0.1, whatever its name. */
    int port = address[rest - 2] << 8 | address[rest - 1];
    raw_fd peer = raw_connect(port);
    /* With coalesce, the reply and the peer's greeting go in one segment:
     * the client must read no further than the reply. */
    char out[10 + 64];
    memcpy(out, "\x05\x00\x00\x01\x7f\x00\x00\x01\x00\x00", 10);
    int greeting = 0;
    if (p->coalesce && raw_readable(peer, WAIT_MS))
        greeting = (int)recv(peer, out + 10, 64, 0);
    if (greeting >= 0 && send_all(fd, out, 10 + (size_t)greeting))
        relay(fd, peer);
    raw_close(peer);
}

static void play(proxy *p, raw_fd fd)
{
    for (int i = 0; i < p->step_count; i++) {
        const step *s = &p->steps[i];
        if (!take(p, fd, NULL, s->read) || !send_all(fd, s->send, s->send_len))
            return;
        uv_mutex_lock(&p->lock);
        p->steps_done++;
        uv_mutex_unlock(&p->lock);
    }
    if (p->mode == PROXY_HOLD)
        raw_closed_by_peer(fd, 30000);
}

static void proxy_main(void *arg)
{
    proxy *p = arg;
    raw_fd fd = raw_accept(p->listener, WAIT_MS);
    if (fd == RAW_INVALID)
        return;
    if (p->mode == PROXY_FORWARD)
        forward(p, fd);
    else
        play(p, fd);
    raw_close(fd);
}

static void proxy_start(proxy *p)
{
    p->listener = raw_listen(8, &p->port);
    ck_assert_int_eq(uv_mutex_init(&p->lock), 0);
    ck_assert_int_eq(uv_thread_create(&p->thread, proxy_main, p), 0);
}

static void proxy_stop(proxy *p)
{
    ck_assert_int_eq(uv_thread_join(&p->thread), 0);
    raw_close(p->listener);
    uv_mutex_destroy(&p->lock);
}

/* The proxy by address, or by name (looked up at each attempt). */
static void set_proxy_as(void *socket, const proxy *p, const char *host)
{
    char address[64];
    snprintf(address, sizeof address, "%s:%d", host, p->port);
    ck_assert_int_eq(
        zlink_setsockopt(socket, ZLINK_SOCKS_PROXY, address, strlen(address)),
        0);
}

static void set_proxy(void *socket, const proxy *p)
{
    set_proxy_as(socket, p, "127.0.0.1");
}

/* What the client sent the proxy, compared under its lock. */
static void expect_seen(proxy *p, const void *want, size_t len)
{
    uv_mutex_lock(&p->lock);
    bool same = p->seen_len == len && memcmp(p->seen, want, len) == 0;
    size_t got = p->seen_len;
    uv_mutex_unlock(&p->lock);
    ck_assert_msg(same, "the proxy saw %u bytes, not the %u expected",
                  (unsigned)got, (unsigned)len);
}

static bool steps_played(void *arg)
{
    proxy *p = arg;
    uv_mutex_lock(&p->lock);
    bool done = p->steps_done == p->step_count;
    uv_mutex_unlock(&p->lock);
    return done;
}

/* ---- zlink's side ---- */

typedef struct peers {
    void *ctx, *router, *dealer, *monitor;
    int router_port;
    const char *scheme, *path; /* "tcp", ""; or "ws", "/socks" */
} peers;

/* A ROUTER on 127.0.0.1 and a DEALER that monitors its connects; the
 * DEALER queues only to connected peers, so that a connect which failed
 * through the proxy holds none of its messages. */
static void peers_open_on(peers *t, const char *scheme, const char *path)
{
    memset(t, 0, sizeof *t);
    t->scheme = scheme;
    t->path = path;
    t->ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(t->ctx);
    t->router = zlink_socket(t->ctx, ZLINK_ROUTER);
    zl_test_set_int(t->router, ZLINK_LINGER, 0);
    zl_test_set_int(t->router, ZLINK_RCVTIMEO, WAIT_MS);
    /* A bind ignores the proxy. */
    ck_assert_int_eq(
        zlink_setsockopt(t->router, ZLINK_SOCKS_PROXY, "127.0.0.1:1", 11), 0);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "%s://127.0.0.1:*%s", scheme, path);
    ck_assert_int_eq(zlink_bind(t->router, endpoint), 0);
    size_t len = sizeof endpoint;
    ck_assert_int_eq(
        zlink_getsockopt(t->router, ZLINK_LAST_ENDPOINT, endpoint, &len), 0);
    t->router_port = atoi(strrchr(endpoint, ':') + 1);
    t->dealer = zlink_socket(t->ctx, ZLINK_DEALER);
    zl_test_set_int(t->dealer, ZLINK_LINGER, 0);
    zl_test_set_int(t->dealer, ZLINK_RCVTIMEO, WAIT_MS);
    zl_test_set_int(t->dealer, ZLINK_SNDTIMEO, WAIT_MS);
    zl_test_set_int(t->dealer, ZLINK_IMMEDIATE, 1);
    t->monitor = zl_test_monitor_open(
        t->ctx, t->dealer, "inproc://dealer-events", ZLINK_EVENT_ALL);
}

static void peers_open(peers *t)
{
    peers_open_on(t, "tcp", "");
}

static void peers_close(peers *t)
{
    zlink_close(t->monitor);
    if (t->dealer)
        zlink_close(t->dealer);
    zlink_close(t->router);
    ck_assert_int_eq(zl_test_ctx_term(t->ctx), 0);
}

/* A message each way between the DEALER and the ROUTER. */
static void round_trip(peers *t)
{
    ck_assert_int_eq(zl_test_send_retry(t->dealer, "hello", 5, 0), 5);
    char id[256], buf[16];
    int id_len = zl_test_recv_retry(t->router, id, sizeof id, 0);
    ck_assert_int_gt(id_len, 0);
    ck_assert_int_eq(zl_test_recv_retry(t->router, buf, sizeof buf, 0), 5);
    ck_assert_int_eq(memcmp(buf, "hello", 5), 0);
    ck_assert_int_eq(
        zl_test_send_retry(t->router, id, (size_t)id_len, ZLINK_SNDMORE),
        id_len);
    ck_assert_int_eq(zl_test_send_retry(t->router, "world", 5, 0), 5);
    ck_assert_int_eq(zl_test_recv_retry(t->dealer, buf, sizeof buf, 0), 5);
    ck_assert_int_eq(memcmp(buf, "world", 5), 0);
}

/* Reads monitor events in order until one of type last comes: the mask
 * of the events before it, and CLOSED's value. False after timeout_ms. */
static bool events_until(void *monitor, int last, unsigned *before,
                         uint32_t *closed_value, int timeout_ms)
{
    uint64_t deadline = zl_test_now_ms() + (uint64_t)timeout_ms;
    *before = 0;
    for (;;) {
        uint64_t now = zl_test_now_ms();
        if (now >= deadline)
            return false;
        zlink_pollitem_t item = {monitor, 0, ZLINK_POLLIN, 0};
        if (zlink_poll(&item, 1, (long)(deadline - now)) <= 0)
            continue;
        uint8_t head[6];
        char endpoint[512];
        ck_assert_int_eq(zl_test_recv_retry(monitor, head, sizeof head, 0), 6);
        ck_assert_int_ge(
            zl_test_recv_retry(monitor, endpoint, sizeof endpoint, 0), 0);
        uint16_t event;
        uint32_t value;
        memcpy(&event, head, sizeof event);
        memcpy(&value, head + 2, sizeof value);
        if (event == ZLINK_EVENT_CLOSED)
            *closed_value = value;
        if (event == last)
            return true;
        *before |= event;
    }
}

static void connect_to_router(peers *t, const char *host)
{
    char endpoint[96];
    snprintf(endpoint, sizeof endpoint, "%s://%s:%d%s", t->scheme, host,
             t->router_port, t->path);
    ck_assert_int_eq(zlink_connect(t->dealer, endpoint), 0);
}

/* The request a proxy should see for host (ATYP and address bytes) and
 * port, after the greeting. */
static size_t expected_request(uint8_t *out, const uint8_t *address,
                               size_t address_len, int port)
{
    memcpy(out, "\x05\x01\x00", 3);
    memcpy(out + 3, address, address_len);
    out[3 + address_len] = (uint8_t)(port >> 8);
    out[4 + address_len] = (uint8_t)(port & 0xff);
    return 5 + address_len;
}

/* (1) and (2): a name goes to the proxy unresolved, as ATYP 3; an IPv4
 * literal as ATYP 1; messages go both ways through it, and CONNECTED
 * is reported. */
static void through_proxy(const char *scheme, const char *path,
                          const char *host, const uint8_t *address,
                          size_t address_len)
{
    peers t;
    peers_open_on(&t, scheme, path);
    proxy p = {.mode = PROXY_FORWARD, .coalesce = strcmp(scheme, "tcp") == 0};
    proxy_start(&p);
    set_proxy(t.dealer, &p);
    connect_to_router(&t, host);
    round_trip(&t);
    unsigned before;
    uint32_t closed;
    ck_assert(events_until(t.monitor, ZLINK_EVENT_HANDSHAKE_SUCCEEDED, &before,
                           &closed, WAIT_MS));
    ck_assert(before & ZLINK_EVENT_CONNECTED);
    ck_assert(!(before & ZLINK_EVENT_CLOSED));
    uint8_t want[400];
    memcpy(want, "\x05\x01\x00", 3);
    size_t len =
        3 + expected_request(want + 3, address, address_len, t.router_port);
    expect_seen(&p, want, len);
    peers_close(&t);
    proxy_stop(&p);
}

START_TEST(name_goes_to_proxy)
{
    through_proxy("tcp", "", "localhost", (const uint8_t *)"\x03\x09localhost",
                  11);
}
END_TEST

/* ws runs on tcp: the proxy carries it too, and the upgrade still names
 * the endpoint's host. */
START_TEST(ws_through_proxy)
{
    if (!zlink_has("ws"))
        return;
    through_proxy("ws", "/socks", "localhost",
                  (const uint8_t *)"\x03\x09localhost", 11);
}
END_TEST

START_TEST(ipv4_literal)
{
    through_proxy("tcp", "", "127.0.0.1",
                  (const uint8_t *)"\x01\x7f\x00\x00\x01", 5);
}
END_TEST

/* With a source address (tcp://src;peer), the connect goes to the proxy:
 * the source's family must be the proxy's, whatever the peer's. */
START_TEST(source_meets_the_proxy)
{
    peers t;
    peers_open(&t);
    proxy p = {.mode = PROXY_FORWARD};
    proxy_start(&p);
    set_proxy(t.dealer, &p);
    zl_test_set_int(t.dealer, ZLINK_IPV6, 1);
    char endpoint[96];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1;[::1]:%d",
             t.router_port);
    ck_assert_int_eq(zlink_connect(t.dealer, endpoint), 0);
    round_trip(&t);
    uint8_t want[64];
    memcpy(want, "\x05\x01\x00", 3);
    static const uint8_t v6_loopback[17] = {4, [16] = 1};
    size_t len = 3 + expected_request(want + 3, v6_loopback, sizeof v6_loopback,
                                      t.router_port);
    expect_seen(&p, want, len);

    /* An IPv4 source cannot reach an IPv6 proxy, though the peer is IPv4. */
    void *other = zlink_socket(t.ctx, ZLINK_DEALER);
    zl_test_set_int(other, ZLINK_LINGER, 0);
    zl_test_set_int(other, ZLINK_IPV6, 1);
    ck_assert_int_eq(
        zlink_setsockopt(other, ZLINK_SOCKS_PROXY, "[::1]:1080", 10), 0);
    ck_assert_int_eq(zlink_connect(other, "tcp://127.0.0.1;127.0.0.1:5555"),
                     -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    zlink_close(other);
    peers_close(&t);
    proxy_stop(&p);
}
END_TEST

/* (3) RFC 1929: username/password offered, asked for, and accepted; the
 * proxy named, not given as an address. */
START_TEST(username_password)
{
    peers t;
    peers_open(&t);
    proxy p = {
        .mode = PROXY_FORWARD, .username = "alice", .password = "s3cret"};
    proxy_start(&p);
    set_proxy_as(t.dealer, &p, "localhost");
    ck_assert_int_eq(
        zlink_setsockopt(t.dealer, ZLINK_SOCKS_USERNAME, "alice", 5), 0);
    ck_assert_int_eq(
        zlink_setsockopt(t.dealer, ZLINK_SOCKS_PASSWORD, "s3cret", 6), 0);
    connect_to_router(&t, "127.0.0.1");
    round_trip(&t);
    uint8_t want[64];
    size_t len = 0;
    memcpy(want, "\x05\x02\x00\x02", 4); /* no auth, or username/password */
    len += 4;
    memcpy(want + len,
           "\x01\x05"
           "alice"
           "\x06"
           "s3cret",
           14);
    len += 14;
    len += expected_request(want + len, (const uint8_t *)"\x01\x7f\x00\x00\x01",
                            5, t.router_port);
    expect_seen(&p, want, len);
    peers_close(&t);
    proxy_stop(&p);
}
END_TEST

/* (4) A hostile proxy: what it answers after the greeting (3 bytes, or 4
 * with a username) and, for the later steps, what it read first. */
typedef struct hostile {
    const char *name;
    bool with_username;
    proxy_mode mode;
    step steps[3];
    int step_count;
    int handshake_ivl; /* 0: left at its default */
} hostile;

#define REQ_IPV4 10 /* the CONNECT request for 127.0.0.1:port */
#define AUTH_ALICE (3 + 5 + 6)
#define S(bytes) bytes, sizeof bytes - 1

static const hostile hostiles[] = {
    {"wrong version", false, PROXY_HOLD, {{3, S("\x04\x00")}}, 1, 0},
    {"no acceptable method", false, PROXY_HOLD, {{3, S("\x05\xff")}}, 1, 0},
    {"a method not offered", false, PROXY_HOLD, {{3, S("\x05\x02")}}, 1, 0},
    {"auth refused",
     true,
     PROXY_HOLD,
     {{4, S("\x05\x02")}, {AUTH_ALICE, S("\x01\x01")}},
     2,
     0},
    {"connection refused",
     false,
     PROXY_HOLD,
     {{3, S("\x05\x00")},
      {REQ_IPV4, S("\x05\x05\x00\x01\x00\x00\x00\x00\x00\x00")}},
     2,
     0},
    {"bad address type",
     false,
     PROXY_HOLD,
     {{3, S("\x05\x00")},
      {REQ_IPV4, S("\x05\x00\x00\x09\x00\x00\x00\x00\x00\x00")}},
     2,
     0},
    {"reserved byte set",
     false,
     PROXY_HOLD,
     {{3, S("\x05\x00")},
      {REQ_IPV4, S("\x05\x00\x01\x01\x00\x00\x00\x00\x00\x00")}},
     2,
     0},
    {"reply version wrong",
     false,
     PROXY_HOLD,
     {{3, S("\x05\x00")},
      {REQ_IPV4, S("\x04\x00\x00\x01\x00\x00\x00\x00\x00\x00")}},
     2,
     0},
    {"closes mid-reply",
     false,
     PROXY_SCRIPT,
     {{3, S("\x05\x00")}, {REQ_IPV4, S("\x05\x00\x00\x01\x7f\x00")}},
     2,
     0},
    {"closes after the greeting", false, PROXY_SCRIPT, {{3, S("")}}, 1, 0},
    {"stalls",
     false,
     PROXY_HOLD,
     {{3, S("\x05\x00")}, {REQ_IPV4, S("")}},
     2,
     300},
};

START_TEST(hostile_proxy)
{
    const hostile *h = &hostiles[_i];
    peers t;
    peers_open(&t);
    /* One attempt in the test's time: the retry is announced at once. */
    zl_test_set_int(t.dealer, ZLINK_RECONNECT_IVL, 10000);
    if (h->handshake_ivl)
        zl_test_set_int(t.dealer, ZLINK_HANDSHAKE_IVL, h->handshake_ivl);
    proxy p = {.mode = h->mode, .step_count = h->step_count};
    memcpy(p.steps, h->steps, sizeof h->steps);
    proxy_start(&p);
    set_proxy(t.dealer, &p);
    if (h->with_username) {
        ck_assert_int_eq(
            zlink_setsockopt(t.dealer, ZLINK_SOCKS_USERNAME, "alice", 5), 0);
        ck_assert_int_eq(
            zlink_setsockopt(t.dealer, ZLINK_SOCKS_PASSWORD, "s3cret", 6), 0);
    }
    uint64_t start = zl_test_now_ms();
    connect_to_router(&t, "127.0.0.1");
    unsigned before;
    uint32_t closed = 0;
    ck_assert_msg(events_until(t.monitor, ZLINK_EVENT_CONNECT_RETRIED, &before,
                               &closed, WAIT_MS),
                  "%s: no CONNECT_RETRIED", h->name);
    ck_assert_msg(before & ZLINK_EVENT_CLOSED, "%s: no CLOSED", h->name);
    ck_assert_msg(closed != 0, "%s: CLOSED without the socket", h->name);
    ck_assert_msg(!(before & ZLINK_EVENT_CONNECTED), "%s: CONNECTED", h->name);
    ck_assert(zl_test_wait_until(steps_played, &p, WAIT_MS));
    if (h->handshake_ivl)
        ck_assert_uint_ge(zl_test_now_ms() - start,
                          (uint64_t)h->handshake_ivl - 50);
    /* The same socket still connects directly. */
    ck_assert_int_eq(zlink_setsockopt(t.dealer, ZLINK_SOCKS_PROXY, "", 0), 0);
    connect_to_router(&t, "127.0.0.1");
    round_trip(&t);
    peers_close(&t);
    proxy_stop(&p);
}
END_TEST

/* Destroy, disconnect and CONNECT_TIMEOUT while the exchange waits on the
 * proxy, which holds after reading the greeting. */
typedef enum pending_end {
    END_BY_CLOSE,
    END_BY_DISCONNECT,
    END_BY_CONNECT_TIMEOUT
} pending_end;

static void end_while_pending(pending_end how)
{
    peers t;
    peers_open(&t);
    zl_test_set_int(t.dealer, ZLINK_RECONNECT_IVL, 10000);
    if (how == END_BY_CONNECT_TIMEOUT) {
        zl_test_set_int(t.dealer, ZLINK_CONNECT_TIMEOUT, 200);
        zl_test_set_int(t.dealer, ZLINK_HANDSHAKE_IVL, 0);
    }
    proxy p = {.mode = PROXY_HOLD, .step_count = 1};
    p.steps[0] = (step){3, S("")};
    proxy_start(&p);
    set_proxy(t.dealer, &p);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", t.router_port);
    ck_assert_int_eq(zlink_connect(t.dealer, endpoint), 0);
    ck_assert(zl_test_wait_until(steps_played, &p, WAIT_MS));
    unsigned before;
    uint32_t closed = 0;
    switch (how) {
    case END_BY_CLOSE:
        zlink_close(t.dealer);
        t.dealer = NULL;
        break;
    case END_BY_DISCONNECT:
        ck_assert_int_eq(zlink_disconnect(t.dealer, endpoint), 0);
        break;
    case END_BY_CONNECT_TIMEOUT:
        ck_assert(events_until(t.monitor, ZLINK_EVENT_CONNECT_RETRIED, &before,
                               &closed, WAIT_MS));
        ck_assert(before & ZLINK_EVENT_CLOSED);
        ck_assert(!(before & ZLINK_EVENT_CONNECTED));
        break;
    }
    peers_close(&t);
    proxy_stop(&p);
}

START_TEST(closed_while_pending)
{
    end_while_pending(END_BY_CLOSE);
}
END_TEST

START_TEST(disconnected_while_pending)
{
    end_while_pending(END_BY_DISCONNECT);
}
END_TEST

START_TEST(connect_timeout_while_pending)
{
    end_while_pending(END_BY_CONNECT_TIMEOUT);
}
END_TEST

/* (5) The options: strings read back with their NUL, "" and NULL unset,
 * credentials of at most 255 bytes, a proxy zlink_connect can use. */
START_TEST(options)
{
    void *ctx = zlink_ctx_new();
    void *s = zlink_socket(ctx, ZLINK_DEALER);
    zl_test_set_int(s, ZLINK_LINGER, 0);
    char got[300];
    size_t len = sizeof got;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_SOCKS_PROXY, got, &len), 0);
    ck_assert_uint_eq(len, 1);
    ck_assert_str_eq(got, "");
    ck_assert_int_eq(
        zlink_setsockopt(s, ZLINK_SOCKS_PROXY, "proxy.example:1080", 18), 0);
    len = sizeof got;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_SOCKS_PROXY, got, &len), 0);
    ck_assert_uint_eq(len, 19);
    ck_assert_str_eq(got, "proxy.example:1080");
    len = 5;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_SOCKS_PROXY, got, &len), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_SOCKS_PROXY, "", 0), 0);
    len = sizeof got;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_SOCKS_PROXY, got, &len), 0);
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_SOCKS_PROXY, "[::1]:1080", 11),
                     0);
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_SOCKS_PROXY, NULL, 0), 0);
    len = sizeof got;
    ck_assert_int_eq(zlink_getsockopt(s, ZLINK_SOCKS_PROXY, got, &len), 0);
    ck_assert_uint_eq(len, 1);

    char big[257];
    memset(big, 'u', sizeof big);
    int options[] = {ZLINK_SOCKS_USERNAME, ZLINK_SOCKS_PASSWORD};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(zlink_setsockopt(s, options[i], big, 255), 0);
        len = sizeof got;
        ck_assert_int_eq(zlink_getsockopt(s, options[i], got, &len), 0);
        ck_assert_uint_eq(len, 256);
        ck_assert_int_eq(zlink_setsockopt(s, options[i], big, 256), -1);
        ck_assert_int_eq(zlink_errno(), EINVAL);
        ck_assert_int_eq(zlink_setsockopt(s, options[i], "", 0), 0);
        len = sizeof got;
        ck_assert_int_eq(zlink_getsockopt(s, options[i], got, &len), 0);
        ck_assert_uint_eq(len, 1);
    }

    /* A proxy or peer SOCKS5 cannot name fails the connect. */
    ck_assert_int_eq(zlink_setsockopt(s, ZLINK_SOCKS_PROXY, "no-port", 7), 0);
    ck_assert_int_eq(zlink_connect(s, "tcp://127.0.0.1:5555"), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    ck_assert_int_eq(
        zlink_setsockopt(s, ZLINK_SOCKS_PROXY, "127.0.0.1:1080", 14), 0);
    ck_assert_int_eq(zlink_connect(s, "tcp://127.0.0.1:5555"), 0);
    zlink_close(s);
    ck_assert_int_eq(zl_test_ctx_term(ctx), 0);
}
END_TEST

/* ---- (6) the protocol alone ---- */

START_TEST(request_encoding)
{
    uint8_t buf[ZL_SOCKS_REQUEST_MAX];
    ck_assert_int_eq(zl_socks_encode_request(buf, sizeof buf, "localhost:5555"),
                     16);
    ck_assert_int_eq(memcmp(buf, "\x05\x01\x00\x03\x09localhost\x15\xb3", 16),
                     0);
    ck_assert_int_eq(zl_socks_encode_request(buf, sizeof buf, "10.1.2.3:80"),
                     10);
    ck_assert_int_eq(
        memcmp(buf, "\x05\x01\x00\x01\x0a\x01\x02\x03\x00\x50", 10), 0);
    ck_assert_int_eq(zl_socks_encode_request(buf, sizeof buf, "[::1]:443"), 22);
    ck_assert_int_eq(buf[3], 4);
    ck_assert_int_eq(buf[19], 1);
    ck_assert_int_eq(buf[20], 0x01);
    ck_assert_int_eq(buf[21], 0xbb);
    char host[300];
    memset(host, 'a', 255);
    memcpy(host + 255, ":1", 3);
    ck_assert_int_eq(zl_socks_encode_request(buf, sizeof buf, host), 262);
    memset(host, 'a', 256);
    memcpy(host + 256, ":1", 3);
    ck_assert_int_eq(zl_socks_encode_request(buf, sizeof buf, host), -1);
    ck_assert_int_eq(zl_socks_encode_request(buf, sizeof buf, "host"), -1);
    ck_assert_int_eq(zl_socks_encode_request(buf, sizeof buf, ":80"), -1);
    ck_assert_int_eq(zl_socks_encode_request(buf, sizeof buf, "h:65536"), -1);
    ck_assert_int_eq(zl_socks_encode_request(buf, sizeof buf, "h:8a"), -1);
    ck_assert_int_eq(zl_socks_encode_request(buf, 10, "h:80"), -1);
}
END_TEST

/* Feeds bytes one at a time, never more than the client asks for. */
static zl_socks_state feed(zl_socks_client *c, const char *bytes, size_t len)
{
    zl_socks_state state = c->state;
    for (size_t i = 0; i < len; i++) {
        uint8_t *buf;
        ck_assert_uint_ge(zl_socks_client_want(c, &buf), 1);
        *buf = (uint8_t)bytes[i];
        state = zl_socks_client_received(c, 1);
        if (state == ZL_SOCKS_FAILED)
            return state;
    }
    return state;
}

START_TEST(client_exchange)
{
    zl_socks_client c;
    uint8_t *buf;
    ck_assert_int_eq(zl_socks_client_init(&c, "peer.example:7", "u", "pw"), 0);
    ck_assert_uint_eq(c.send_len, 4);
    ck_assert_int_eq(memcmp(c.send, "\x05\x02\x00\x02", 4), 0);
    zl_socks_client_sent(&c);
    ck_assert_uint_eq(zl_socks_client_want(&c, &buf), 2);
    ck_assert_int_eq(feed(&c, "\x05\x02", 2), ZL_SOCKS_AUTH);
    ck_assert_uint_eq(c.send_len, 6);
    ck_assert_int_eq(memcmp(c.send, "\x01\x01u\x02pw", 6), 0);
    zl_socks_client_sent(&c);
    ck_assert_int_eq(feed(&c, "\x01\x00", 2), ZL_SOCKS_REPLY);
    ck_assert_uint_eq(c.send_len, 4 + 1 + 12 + 2);
    zl_socks_client_sent(&c);
    /* The reply's header first, then exactly its name and port. */
    ck_assert_uint_eq(zl_socks_client_want(&c, &buf), 4);
    ck_assert_int_eq(feed(&c, "\x05\x00\x00\x03", 4), ZL_SOCKS_REPLY);
    ck_assert_uint_eq(zl_socks_client_want(&c, &buf), 1);
    ck_assert_int_eq(feed(&c, "\x03", 1), ZL_SOCKS_REPLY);
    ck_assert_uint_eq(zl_socks_client_want(&c, &buf), 5);
    ck_assert_int_eq(feed(&c, "abc\x00\x07", 5), ZL_SOCKS_DONE);
    ck_assert_uint_eq(zl_socks_client_want(&c, &buf), 0);
    ck_assert_int_eq(zl_socks_client_received(&c, 1), ZL_SOCKS_FAILED);

    /* Without a username: no auth offered, and none accepted. */
    ck_assert_int_eq(zl_socks_client_init(&c, "1.2.3.4:5", "", "pw"), 0);
    ck_assert_uint_eq(c.send_len, 3);
    ck_assert_int_eq(memcmp(c.send, "\x05\x01\x00", 3), 0);
    zl_socks_client_sent(&c);
    ck_assert_int_eq(feed(&c, "\x05\x02", 2), ZL_SOCKS_FAILED);
    /* IPv6 reply: 4 + 16 + 2, in one read. */
    ck_assert_int_eq(zl_socks_client_init(&c, "1.2.3.4:5", NULL, NULL), 0);
    zl_socks_client_sent(&c);
    ck_assert_int_eq(feed(&c, "\x05\x00", 2), ZL_SOCKS_REPLY);
    zl_socks_client_sent(&c);
    ck_assert_int_eq(feed(&c, "\x05\x00\x00\x04", 4), ZL_SOCKS_REPLY);
    ck_assert_uint_eq(zl_socks_client_want(&c, &buf), 18);
    memset(buf, 0, 18);
    ck_assert_int_eq(zl_socks_client_received(&c, 18), ZL_SOCKS_DONE);
    /* Too long a credential. */
    char big[300];
    memset(big, 'x', 256);
    big[256] = '\0';
    ck_assert_int_eq(zl_socks_client_init(&c, "h:1", big, "p"), -1);
    ck_assert_int_eq(zl_socks_client_init(&c, "h:1", "u", big), -1);
}
END_TEST

/* Each hostile answer, at the step it comes. */
START_TEST(client_failures)
{
    static const struct {
        const char *answers; /* choice, then the rest */
        size_t len;
    } cases[] = {
        {S("\x04\x00")},                         /* wrong version */
        {S("\x05\xff")},                         /* nothing acceptable */
        {S("\x05\x01")},                         /* GSSAPI, not offered */
        {S("\x05\x02\x01\x01")},                 /* auth refused */
        {S("\x05\x02\x02\x00")},                 /* auth version wrong */
        {S("\x05\x02\x01\x00\x05\x01\x00\x01")}, /* general failure */
        {S("\x05\x02\x01\x00\x05\x00\x01\x01")}, /* reserved byte */
        {S("\x05\x02\x01\x00\x05\x00\x00\x00")}, /* address type 0 */
        {S("\x05\x02\x01\x00\x05\x00\x00\x05")}, /* address type 5 */
        {S("\x05\x02\x01\x00\x06\x00\x00\x01")}, /* reply version */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zl_socks_client c;
        ck_assert_int_eq(zl_socks_client_init(&c, "h:1", "u", "p"), 0);
        zl_socks_state state = ZL_SOCKS_CHOICE;
        for (size_t at = 0; at < cases[i].len && state != ZL_SOCKS_FAILED;
             at++) {
            zl_socks_client_sent(&c);
            state = feed(&c, cases[i].answers + at, 1);
        }
        ck_assert_msg(state == ZL_SOCKS_FAILED, "case %u accepted",
                      (unsigned)i);
        uint8_t *buf;
        ck_assert_uint_eq(zl_socks_client_want(&c, &buf), 0);
    }
}
END_TEST

static Suite *suite(void)
{
    raw_sockets_init();
    Suite *s = suite_create("socks");
    TCase *tc = tcase_create("socks");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, request_encoding);
    tcase_add_test(tc, client_exchange);
    tcase_add_test(tc, client_failures);
    tcase_add_test(tc, options);
    tcase_add_test(tc, name_goes_to_proxy);
    tcase_add_test(tc, ipv4_literal);
    tcase_add_test(tc, source_meets_the_proxy);
    tcase_add_test(tc, ws_through_proxy);
    tcase_add_test(tc, username_password);
    tcase_add_loop_test(tc, hostile_proxy, 0,
                        (int)(sizeof hostiles / sizeof hostiles[0]));
    tcase_add_test(tc, closed_while_pending);
    tcase_add_test(tc, disconnected_while_pending);
    tcase_add_test(tc, connect_timeout_while_pending);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
