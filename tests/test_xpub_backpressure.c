/* test_xpub_backpressure.c — an XPUB's queue for recv (subscription notices
 * and upstream messages) holds at most RCVHWM parts: past it the XPUB stops
 * reading its peers, and reads them again once the application receives.
 * A CANCEL of a topic that peer never subscribed to is no notice (but for
 * XPUB_VERBOSER). The peers are raw ZMTP 3.1 sockets, flooding.
 * `test_xpub_backpressure --report` prints, for 300k CANCELs and for 300k
 * SUBSCRIBEs into an XPUB that does not receive, the queue's peak length
 * (and on Linux the growth of the RSS). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "patterns/xpub.h"
#include "socket.h"
#include "socket_testutil.h"

#include "raw_socket.h"

#define GREETING_SIZE 64
#define FLAG_MORE 0x01
#define FLAG_LONG 0x02
#define FLAG_COMMAND 0x04

enum { FLOOD = 300000, TOPIC_LEN = 48 };

/* ---- raw ZMTP ---------------------------------------------------------- */

static size_t put_frame(uint8_t *out, uint8_t flags, const void *body,
                        size_t len)
{
    /* Everything here is short. */
    out[0] = flags;
    out[1] = (uint8_t)len;
    memcpy(out + 2, body, len);
    return 2 + len;
}

static size_t put_command(uint8_t *out, const char *name, const void *data,
                          size_t len)
{
    uint8_t body[256];
    size_t name_len = strlen(name);
    body[0] = (uint8_t)name_len;
    memcpy(body + 1, name, name_len);
    memcpy(body + 1 + name_len, data, len);
    return put_frame(out, FLAG_COMMAND, body, 1 + name_len + len);
}

/* Greets as a ZMTP 3.1 peer of the given type; reads zlink's greeting and
 * READY. */
static void greet(raw_fd fd, const char *type)
{
    uint8_t out[256];
    memset(out, 0, GREETING_SIZE);
    out[0] = 0xff;
    out[8] = 0x01;
    out[9] = 0x7f;
    out[10] = 3;
    out[11] = 1;
    memcpy(out + 12, "NULL", 4);
    uint8_t props[64];
    size_t type_len = strlen(type);
    props[0] = 11;
    memcpy(props + 1, "Socket-Type", 11);
    props[12] = props[13] = props[14] = 0;
    props[15] = (uint8_t)type_len;
    memcpy(props + 16, type, type_len);
    size_t at = GREETING_SIZE;
    at += put_command(out + at, "READY", props, 16 + type_len);
    raw_send(fd, out, at);
    uint8_t in[GREETING_SIZE + 2];
    ck_assert(raw_recv_exact(fd, in, sizeof in, ZT_TIMEOUT_MS));
    ck_assert_uint_eq(in[10], 3);
    ck_assert_uint_eq(in[GREETING_SIZE], FLAG_COMMAND);
    uint8_t ready[256];
    ck_assert(raw_recv_exact(fd, ready, in[GREETING_SIZE + 1], ZT_TIMEOUT_MS));
}

/* A raw peer with small socket buffers, so that what the XPUB leaves
 * unread soon stops it: the kernel would otherwise hold megabytes. */
static raw_fd raw_peer(void *xpub, const char *type)
{
    char ep[300];
    zt_last_endpoint(xpub, ep, sizeof ep);
    raw_fd fd = raw_connect(atoi(strrchr(ep, ':') + 1));
    int size = 65536;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, (const char *)&size, sizeof size);
    greet(fd, type);
    return fd;
}

static void topic_of(int i, char *topic)
{
    char text[TOPIC_LEN + 1];
    snprintf(text, sizeof text, "%0*d", TOPIC_LEN, i);
    memcpy(topic, text, TOPIC_LEN);
}

/* n SUBSCRIBE or CANCEL commands for topics 0..n-1. */
static uint8_t *flood_of(const char *command, int n, size_t *len)
{
    size_t each = 2 + 1 + strlen(command) + TOPIC_LEN;
    uint8_t *buf = malloc(each * (size_t)n);
    ck_assert_ptr_nonnull(buf);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        char topic[TOPIC_LEN];
        topic_of(i, topic);
        at += put_command(buf + at, command, topic, TOPIC_LEN);
    }
    *len = at;
    return buf;
}

/* What a peer still has to send, fed as far as the socket takes it. */
typedef struct feed {
    raw_fd fd;
    const uint8_t *data;
    size_t len, sent;
} feed;

static bool raw_writable(raw_fd fd, int timeout_ms)
{
    fd_set set;
    FD_ZERO(&set);
    FD_SET(fd, &set);
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    return select((int)fd + 1, NULL, &set, NULL, &tv) == 1;
}

/* Sends while the socket is writable within wait_ms; true when something
 * went. */
static bool feed_more(feed *f, int wait_ms)
{
    bool progress = false;
    while (f->sent < f->len && raw_writable(f->fd, wait_ms)) {
        size_t chunk = f->len - f->sent > 4096 ? 4096 : f->len - f->sent;
        int n =
            (int)send(f->fd, (const char *)f->data + f->sent, (int)chunk, 0);
        ck_assert_int_gt(n, 0);
        f->sent += (size_t)n;
        progress = true;
        wait_ms = 0;
    }
    return progress;
}

/* ---- the XPUB ----------------------------------------------------------- */

static size_t queued(void *xpub)
{
    zl_socket *s = zl_socket_from_handle(xpub);
    return ((zl_xpub *)s->pattern)->pending_count;
}

/* Lets the XPUB take its commands (pipes with input), as any call does. */
static void poke(void *xpub)
{
    int events;
    size_t len = sizeof events;
    ck_assert_int_eq(zlink_getsockopt(xpub, ZLINK_EVENTS, &events, &len), 0);
}

static void *xpub_socket(void *ctx, int verboser)
{
    void *xpub = zt_socket(ctx, ZLINK_XPUB);
    zt_set_int(xpub, ZLINK_RCVBUF, 65536);
    if (verboser)
        zt_set_int(xpub, ZLINK_XPUB_VERBOSER, 1);
    char ep[300];
    zt_bind_tcp(xpub, ep, sizeof ep);
    return xpub;
}

static void expect_notice(void *xpub, uint8_t kind, const char *topic,
                          size_t len)
{
    uint8_t buf[256];
    int n = zlink_recv(xpub, buf, sizeof buf, 0);
    ck_assert_msg(n >= 0, "no notice: %s", zlink_strerror(zlink_errno()));
    ck_assert_int_eq(n, (int)len + 1);
    ck_assert_uint_eq(buf[0], kind);
    ck_assert(memcmp(buf + 1, topic, len) == 0);
}

static void expect_no_notice(void *xpub)
{
    uint8_t buf[256];
    ck_assert_int_lt(zlink_recv(xpub, buf, sizeof buf, ZLINK_DONTWAIT), 0);
    ck_assert_int_eq(zlink_errno(), EAGAIN);
}

/* ---- cases ------------------------------------------------------------- */

/* CANCEL of a topic the peer never subscribed to: no notice, unless
 * XPUB_VERBOSER, which reports every cancel. */
START_TEST(cancel_of_unknown_topic)
{
    int verboser = _i;
    void *ctx = zt_ctx();
    void *xpub = xpub_socket(ctx, verboser);
    zt_set_int(xpub, ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
    raw_fd fd = raw_peer(xpub, "SUB");
    uint8_t out[256];
    size_t at = put_command(out, "SUBSCRIBE", "A", 1);
    at += put_command(out + at, "CANCEL", "B", 1);
    at += put_command(out + at, "CANCEL", "A", 1);
    at += put_command(out + at, "CANCEL", "A", 1);
    at += put_command(out + at, "SUBSCRIBE", "C", 1);
    raw_send(fd, out, at);
    expect_notice(xpub, 1, "A", 1);
    if (verboser)
        expect_notice(xpub, 0, "B", 1);
    expect_notice(xpub, 0, "A", 1);
    if (verboser)
        expect_notice(xpub, 0, "A", 1);
    expect_notice(xpub, 1, "C", 1);
    expect_no_notice(xpub);
    raw_close(fd);
    zt_close(xpub);
    zt_term(ctx);
}
END_TEST

/* 300k CANCELs of topics never subscribed to, while the application does
 * not receive: nothing is queued, and the subscription behind them is the
 * first notice. */
START_TEST(cancel_flood_queues_nothing)
{
    void *ctx = zt_ctx();
    void *xpub = xpub_socket(ctx, 0);
    raw_fd fd = raw_peer(xpub, "SUB");
    size_t len;
    uint8_t *flood = flood_of("CANCEL", FLOOD, &len);
    feed f = {fd, flood, len, 0};
    size_t peak = 0;
    uint64_t deadline = zl_test_now_ms() + 60000;
    while (f.sent < f.len) {
        ck_assert_msg(zl_test_now_ms() < deadline, "sent %zu of %zu", f.sent,
                      f.len);
        feed_more(&f, 10);
        poke(xpub);
        if (queued(xpub) > peak)
            peak = queued(xpub);
    }
    ck_assert_uint_eq(peak, 0);
    uint8_t out[64];
    raw_send(fd, out, put_command(out, "SUBSCRIBE", "end", 3));
    zt_set_int(xpub, ZLINK_RCVTIMEO, 30000);
    expect_notice(xpub, 1, "end", 3);
    free(flood);
    raw_close(fd);
    zt_close(xpub);
    zt_term(ctx);
}
END_TEST

/* 300k new subscriptions while the application does not receive: the
 * queue stops at RCVHWM and the peer is no longer read; each receive lets
 * more in, and every notice arrives, in order. */
START_TEST(subscribe_flood_is_held_back)
{
    enum { HWM = 1000 }; /* the default RCVHWM */
    void *ctx = zt_ctx();
    void *xpub = xpub_socket(ctx, 0);
    ck_assert_int_eq(zt_get_int(xpub, ZLINK_RCVHWM), HWM);
    raw_fd fd = raw_peer(xpub, "SUB");
    size_t len;
    uint8_t *flood = flood_of("SUBSCRIBE", FLOOD, &len);
    feed f = {fd, flood, len, 0};

    /* Fed until the XPUB holds a full queue and the peer has stalled. */
    size_t peak = 0;
    uint64_t deadline = zl_test_now_ms() + 30000;
    uint64_t last_progress = zl_test_now_ms();
    for (;;) {
        uint64_t now = zl_test_now_ms();
        ck_assert_msg(now < deadline, "queue %zu, sent %zu", queued(xpub),
                      f.sent);
        if (feed_more(&f, 10))
            last_progress = now;
        poke(xpub);
        if (queued(xpub) > peak)
            peak = queued(xpub);
        if (queued(xpub) == HWM && now - last_progress > 500)
            break;
    }
    ck_assert_uint_le(peak, HWM);
    ck_assert_msg(f.sent < f.len, "all %zu bytes were taken", f.len);

    /* Receiving: the peer is read again, up to the last subscription. */
    zt_set_int(xpub, ZLINK_RCVTIMEO, 0);
    deadline = zl_test_now_ms() + 120000;
    for (int i = 0; i < FLOOD;) {
        ck_assert_msg(zl_test_now_ms() < deadline, "%d notices of %d", i,
                      FLOOD);
        feed_more(&f, 0);
        uint8_t buf[TOPIC_LEN + 8];
        int n = zlink_recv(xpub, buf, sizeof buf, 0);
        if (n < 0) {
            ck_assert_int_eq(zlink_errno(), EAGAIN);
            feed_more(&f, 10);
            continue;
        }
        char topic[TOPIC_LEN];
        topic_of(i, topic);
        ck_assert_int_eq(n, TOPIC_LEN + 1);
        ck_assert_msg(buf[0] == 1 && memcmp(buf + 1, topic, TOPIC_LEN) == 0,
                      "notice %d out of order", i);
        ck_assert_uint_le(queued(xpub), HWM);
        i++;
    }
    ck_assert_uint_eq(f.sent, f.len);
    expect_no_notice(xpub);
    free(flood);
    raw_close(fd);
    zt_close(xpub);
    zt_term(ctx);
}
END_TEST

/* An XSUB's upstream messages count too, and the queue stops only between
 * two messages: each arrives whole, in order. */
START_TEST(upstream_messages_are_held_back)
{
    enum { HWM = 100, MESSAGES = 20000 };
    void *ctx = zt_ctx();
    void *xpub = zt_socket(ctx, ZLINK_XPUB);
    zt_set_int(xpub, ZLINK_RCVHWM, HWM);
    zt_set_int(xpub, ZLINK_RCVBUF, 65536);
    char ep[300];
    zt_bind_tcp(xpub, ep, sizeof ep);
    raw_fd fd = raw_peer(xpub, "XSUB");
    /* Three parts each: an odd count, so HWM falls inside a message. */
    uint8_t *data = malloc((size_t)MESSAGES * 3 * 16);
    ck_assert_ptr_nonnull(data);
    size_t at = 0;
    for (int i = 0; i < MESSAGES; i++) {
        char text[16];
        int n = snprintf(text, sizeof text, "m%d", i);
        at += put_frame(data + at, FLAG_MORE, text, (size_t)n);
        at += put_frame(data + at, FLAG_MORE, "x", 1);
        at += put_frame(data + at, 0, "y", 1);
    }
    feed f = {fd, data, at, 0};
    size_t peak = 0;
    uint64_t deadline = zl_test_now_ms() + 30000;
    uint64_t last_progress = zl_test_now_ms();
    for (;;) {
        uint64_t now = zl_test_now_ms();
        ck_assert_msg(now < deadline, "queue %zu", queued(xpub));
        if (feed_more(&f, 10))
            last_progress = now;
        poke(xpub);
        if (queued(xpub) > peak)
            peak = queued(xpub);
        if (queued(xpub) >= HWM && now - last_progress > 500)
            break;
    }
    /* Taken whole: the limit, rounded up to the end of a message. */
    ck_assert_uint_eq(peak, (HWM + 2) / 3 * 3);
    ck_assert(f.sent < f.len);

    zt_set_int(xpub, ZLINK_RCVTIMEO, 0);
    deadline = zl_test_now_ms() + 60000;
    for (int i = 0; i < MESSAGES;) {
        ck_assert(zl_test_now_ms() < deadline);
        feed_more(&f, 0);
        char buf[16];
        int n = zlink_recv(xpub, buf, sizeof buf, 0);
        if (n < 0) {
            feed_more(&f, 10);
            continue;
        }
        char text[16];
        int len = snprintf(text, sizeof text, "m%d", i);
        ck_assert_int_eq(n, len);
        ck_assert(memcmp(buf, text, (size_t)len) == 0);
        ck_assert_int_eq(zt_get_int(xpub, ZLINK_RCVMORE), 1);
        zt_set_int(xpub, ZLINK_RCVTIMEO, ZT_TIMEOUT_MS);
        ck_assert_int_eq(zlink_recv(xpub, buf, sizeof buf, 0), 1);
        ck_assert_int_eq(zt_get_int(xpub, ZLINK_RCVMORE), 1);
        ck_assert_int_eq(zlink_recv(xpub, buf, sizeof buf, 0), 1);
        ck_assert_int_eq(buf[0], 'y');
        ck_assert_int_eq(zt_get_int(xpub, ZLINK_RCVMORE), 0);
        zt_set_int(xpub, ZLINK_RCVTIMEO, 0);
        i++;
    }
    ck_assert_uint_le(peak, HWM + 2);
    free(data);
    raw_close(fd);
    zt_close(xpub);
    zt_term(ctx);
}
END_TEST

/* ---- --report ---------------------------------------------------------- */

/* Resident set in KiB, or 0 where /proc is not there. */
static long rss_kib(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * 4;
}

/* Floods a fresh XPUB that never receives until the peer stalls or all is
 * sent, and prints the queue's peak. */
static void report_flood(const char *command)
{
    void *ctx = zt_ctx();
    void *xpub = xpub_socket(ctx, 0);
    raw_fd fd = raw_peer(xpub, "SUB");
    size_t len;
    uint8_t *flood = flood_of(command, FLOOD, &len);
    long rss_before = rss_kib();
    feed f = {fd, flood, len, 0};
    size_t peak = 0;
    uint64_t start = zl_test_now_ms();
    uint64_t last_progress = start;
    for (;;) {
        uint64_t now = zl_test_now_ms();
        if (feed_more(&f, 10))
            last_progress = now;
        poke(xpub);
        if (queued(xpub) > peak)
            peak = queued(xpub);
        if ((f.sent == f.len || now - last_progress > 1000) &&
            now - last_progress > 200)
            break;
        if (now - start > 60000)
            break;
    }
    printf("%d %ss: queue_peak=%zu sent=%zu/%zu bytes rss_growth_kib=%ld\n",
           FLOOD, command, peak, f.sent, f.len, rss_kib() - rss_before);
    fflush(stdout);
    free(flood);
    raw_close(fd);
    zt_close(xpub);
    zt_term(ctx);
}

static Suite *xpub_backpressure_suite(void)
{
    Suite *s = suite_create("xpub_backpressure");
    TCase *tc = tcase_create("xpub");
    tcase_set_timeout(tc, 240);
    tcase_add_loop_test(tc, cancel_of_unknown_topic, 0, 2);
    tcase_add_test(tc, cancel_flood_queues_nothing);
    tcase_add_test(tc, subscribe_flood_is_held_back);
    tcase_add_test(tc, upstream_messages_are_held_back);
    suite_add_tcase(s, tc);
    return s;
}

START_TEST(report)
{
    report_flood("CANCEL");
    report_flood("SUBSCRIBE");
}
END_TEST

/* The figures come from a test case of their own: the helpers check as
 * they go, which needs Check running. */
static Suite *report_suite(void)
{
    Suite *s = suite_create("xpub_backpressure_report");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, report);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--report") == 0)
        return zl_test_run(report_suite());
    return zl_test_run(xpub_backpressure_suite());
}
