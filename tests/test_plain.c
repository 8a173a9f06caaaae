/* test_plain.c — PLAIN between zlink sockets, both sides: a server that
 * asks the application's ZAP handler (a REP at inproc://zeromq.zap.01,
 * served here by the test's own thread) about each client, and what each
 * side reports when the handler admits, refuses, answers wrongly, goes
 * away, or is not there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#include "raw_socket.h"
#include "testutil.h"
#include "zmtp/zmtp.h"

#define WAIT_MS 5000

/* The port of a tcp endpoint. */
static int port_of(const char *endpoint)
{
    const char *colon = strrchr(endpoint, ':');
    ck_assert_ptr_nonnull(colon);
    return atoi(colon + 1);
}

typedef struct plain_pair {
    void *ctx, *server, *client, *handler;
    void *server_monitor, *client_monitor;
    char endpoint[64];
} plain_pair;

/* A PLAIN ROUTER server and a DEALER client with the given password, or
 * with none both NULL sockets, the server with a ZAP_DOMAIN (and
 * ZAP_ENFORCE_DOMAIN when enforce); the handler is bound first unless
 * without_handler. */
static void pair_open_ex(plain_pair *p, const char *password, bool with_handler,
                         bool enforce)
{
    memset(p, 0, sizeof *p);
    p->ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(p->ctx);
    if (with_handler) {
        p->handler = zlink_socket(p->ctx, ZLINK_REP);
        zl_test_set_int(p->handler, ZLINK_LINGER, 0);
        zl_test_set_int(p->handler, ZLINK_RCVTIMEO, WAIT_MS);
        ck_assert_int_eq(zlink_bind(p->handler, "inproc://zeromq.zap.01"), 0);
    }
    p->server = zlink_socket(p->ctx, ZLINK_ROUTER);
    zl_test_set_int(p->server, ZLINK_LINGER, 0);
    zl_test_set_int(p->server, ZLINK_RCVTIMEO, WAIT_MS);
    if (password)
        zl_test_set_int(p->server, ZLINK_PLAIN_SERVER, 1);
    if (enforce)
        zl_test_set_int(p->server, ZLINK_ZAP_ENFORCE_DOMAIN, 1);
    ck_assert_int_eq(zlink_setsockopt(p->server, ZLINK_ZAP_DOMAIN, "test", 4),
                     0);
    p->server_monitor = zl_test_monitor_open(
        p->ctx, p->server, "inproc://server-events", ZLINK_EVENT_ALL);
    ck_assert_int_eq(zlink_bind(p->server, "tcp://127.0.0.1:*"), 0);
    size_t len = sizeof p->endpoint;
    ck_assert_int_eq(
        zlink_getsockopt(p->server, ZLINK_LAST_ENDPOINT, p->endpoint, &len), 0);

    p->client = zlink_socket(p->ctx, ZLINK_DEALER);
    zl_test_set_int(p->client, ZLINK_LINGER, 0);
    zl_test_set_int(p->client, ZLINK_RCVTIMEO, WAIT_MS);
    if (password) {
        ck_assert_int_eq(
            zlink_setsockopt(p->client, ZLINK_PLAIN_USERNAME, "admin", 5), 0);
        ck_assert_int_eq(zlink_setsockopt(p->client, ZLINK_PLAIN_PASSWORD,
                                          password, strlen(password)),
                         0);
    }
    p->client_monitor = zl_test_monitor_open(
        p->ctx, p->client, "inproc://client-events", ZLINK_EVENT_ALL);
    ck_assert_int_eq(zlink_connect(p->client, p->endpoint), 0);
}

static void pair_open(plain_pair *p, const char *password, bool with_handler)
{
    pair_open_ex(p, password, with_handler, false);
}

static void pair_close(plain_pair *p)
{
    ck_assert_int_eq(zlink_close(p->client_monitor), 0);
    ck_assert_int_eq(zlink_close(p->server_monitor), 0);
    ck_assert_int_eq(zlink_close(p->client), 0);
    ck_assert_int_eq(zlink_close(p->server), 0);
    if (p->handler)
        ck_assert_int_eq(zlink_close(p->handler), 0);
    ck_assert_int_eq(zl_test_ctx_term(p->ctx), 0);
}

/* Reads the next request part and checks it is text. */
static void expect_part(void *handler, const char *text)
{
    char buf[256];
    int n = zlink_recv(handler, buf, sizeof buf, 0);
    ck_assert_msg(n >= 0, "no ZAP request: %s", zlink_strerror(zlink_errno()));
    ck_assert_int_eq(n, (int)strlen(text));
    ck_assert_mem_eq(buf, text, (size_t)n);
}

/* The request RFC 27 gives, with the client's credentials. */
static void expect_request(void *handler, const char *password)
{
    expect_part(handler, "1.0");
    expect_part(handler, "1");
    expect_part(handler, "test");
    expect_part(handler, "127.0.0.1");
    expect_part(handler, ""); /* the server's routing id: none */
    expect_part(handler, "PLAIN");
    expect_part(handler, "admin");
    expect_part(handler, password);
    int more = 1;
    size_t len = sizeof more;
    ck_assert_int_eq(zlink_getsockopt(handler, ZLINK_RCVMORE, &more, &len), 0);
    ck_assert_int_eq(more, 0);
}

/* A pair whose client's request has reached the handler, unanswered. */
static void pair_open_asked(plain_pair *p, const char *password)
{
    pair_open(p, password, true);
    expect_request(p->handler, password);
}

/* Sends parts as one message, or as its start when more follows. */
static void send_parts(void *socket, const char *const *parts, int n, bool more)
{
    for (int i = 0; i < n; i++) {
        size_t len = strlen(parts[i]);
        int flags = i + 1 < n || more ? ZLINK_SNDMORE : 0;
        ck_assert_int_eq(zlink_send(socket, parts[i], len, flags), (int)len);
    }
}

/* The ZAP handler's properties, as a READY's: "Role" = "root". */
static const char zap_metadata[] = "\x04Role\x00\x00\x00\x04root";

static void reply(void *handler, const char *status, const char *user)
{
    const char *parts[] = {"1.0", "1", status, "", user};
    send_parts(handler, parts, 5, true);
    int rc = zlink_send(handler, zap_metadata, sizeof zap_metadata - 1, 0);
    ck_assert_msg(rc == (int)sizeof zap_metadata - 1, "reply: %s",
                  zlink_strerror(zlink_errno()));
}

static uint32_t wait_value(void *monitor, int event)
{
    uint32_t value = 0;
    ck_assert_msg(zl_test_wait_event_value(monitor, event, &value, WAIT_MS),
                  "no event 0x%x", event);
    return value;
}

/* The handler refused with 400: both sides report the code, the client
 * is disconnected, and no second request comes: it stays away. */
static void expect_refused_for_good(plain_pair *p)
{
    ck_assert_uint_eq(
        wait_value(p->server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH), 400);
    ck_assert_uint_eq(
        wait_value(p->client_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH), 400);
    wait_value(p->client_monitor, ZLINK_EVENT_DISCONNECTED);
    zl_test_set_int(p->handler, ZLINK_RCVTIMEO, 300);
    char buf[16];
    ck_assert_int_eq(zlink_recv(p->handler, buf, sizeof buf, 0), -1);
    ck_assert_int_eq(zlink_errno(), EAGAIN);
}

/* The handler admits the client: messages flow, and the server's carry
 * the User-Id and properties the handler gave. */
START_TEST(admitted)
{
    plain_pair p;
    pair_open_asked(&p, "secret");
    reply(p.handler, "200", "admin");
    ck_assert_int_eq(zlink_send(p.client, "hello", 5, 0), 5);
    char id[64];
    int id_len = zlink_recv(p.server, id, sizeof id, 0);
    ck_assert_int_gt(id_len, 0);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    ck_assert_int_eq(zlink_msg_recv(&msg, p.server, 0), 5);
    ck_assert_str_eq(zlink_msg_gets(&msg, "User-Id"), "admin");
    ck_assert_str_eq(zlink_msg_gets(&msg, "Role"), "root");
    ck_assert_str_eq(zlink_msg_gets(&msg, "Socket-Type"), "DEALER");
    zlink_msg_close(&msg);
    ck_assert_int_eq(zlink_send(p.server, id, (size_t)id_len, ZLINK_SNDMORE),
                     id_len);
    ck_assert_int_eq(zlink_send(p.server, "world", 5, 0), 5);
    char buf[16];
    ck_assert_int_eq(zlink_recv(p.client, buf, sizeof buf, 0), 5);
    ck_assert_mem_eq(buf, "world", 5);
    wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_SUCCEEDED);
    wait_value(p.client_monitor, ZLINK_EVENT_HANDSHAKE_SUCCEEDED);
    pair_close(&p);
}
END_TEST

/* The handler refuses: both sides report the code, and the client does
 * not try again. */
START_TEST(refused)
{
    plain_pair p;
    pair_open_asked(&p, "wrong");
    reply(p.handler, "400", "");
    expect_refused_for_good(&p);
    pair_close(&p);
}
END_TEST

/* No handler bound: libzmq 4.3 refuses every client, with EFAULT. */
START_TEST(without_handler)
{
    plain_pair p;
    pair_open(&p, "secret", false);
    ck_assert_uint_eq(
        wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL),
        EFAULT);
    wait_value(p.client_monitor, ZLINK_EVENT_DISCONNECTED);
    pair_close(&p);
}
END_TEST

/* NULL with a ZAP_DOMAIN, as libzmq: the handler is asked about the
 * client, with no credentials after the mechanism, and its 200 admits it
 * with its User-Id and properties. */
START_TEST(null_admitted)
{
    plain_pair p;
    pair_open(&p, NULL, true);
    expect_part(p.handler, "1.0");
    expect_part(p.handler, "1");
    expect_part(p.handler, "test");
    expect_part(p.handler, "127.0.0.1");
    expect_part(p.handler, "");
    expect_part(p.handler, "NULL");
    int more = 1;
    size_t len = sizeof more;
    ck_assert_int_eq(zlink_getsockopt(p.handler, ZLINK_RCVMORE, &more, &len),
                     0);
    ck_assert_int_eq(more, 0);
    /* The client's READY is there already: it waits for the reply. */
    zl_test_sleep_ms(50);
    ck_assert_int_eq(zlink_send(p.client, "early", 5, 0), 5);
    /* An empty user id, as CZMQ's zauth gives NULL peers: User-Id is
     * there, empty, as libzmq gives it. */
    reply(p.handler, "200", "");
    char id[64];
    ck_assert_int_gt(zlink_recv(p.server, id, sizeof id, 0), 0);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    ck_assert_int_eq(zlink_msg_recv(&msg, p.server, 0), 5);
    ck_assert_str_eq(zlink_msg_gets(&msg, "User-Id"), "");
    ck_assert_str_eq(zlink_msg_gets(&msg, "Role"), "root");
    zlink_msg_close(&msg);
    wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_SUCCEEDED);
    pair_close(&p);
}
END_TEST

/* The handler refuses a NULL client: the server reports the code, and the
 * client hears it in an ERROR and reports it too. */
START_TEST(null_refused)
{
    plain_pair p;
    pair_open(&p, NULL, true);
    char buf[64];
    for (int i = 0; i < 6; i++)
        ck_assert_int_ge(zlink_recv(p.handler, buf, sizeof buf, 0), 0);
    reply(p.handler, "400", "");
    expect_refused_for_good(&p);
    pair_close(&p);
}
END_TEST

/* No handler bound: NULL admits the client unasked, as libzmq 4.3 (no
 * User-Id then), unless ZAP_ENFORCE_DOMAIN, which refuses it with
 * EFAULT. */
START_TEST(null_without_handler)
{
    plain_pair p;
    pair_open(&p, NULL, false);
    ck_assert_int_eq(zlink_send(p.client, "in", 2, 0), 2);
    char buf[64];
    ck_assert_int_gt(zlink_recv(p.server, buf, sizeof buf, 0), 0);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    ck_assert_int_eq(zlink_msg_recv(&msg, p.server, 0), 2);
    ck_assert_ptr_null(zlink_msg_gets(&msg, "User-Id"));
    zlink_msg_close(&msg);
    pair_close(&p);

    pair_open_ex(&p, NULL, false, true);
    ck_assert_uint_eq(
        wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL),
        EFAULT);
    wait_value(p.client_monitor, ZLINK_EVENT_DISCONNECTED);
    int v = 0;
    size_t len = sizeof v;
    ck_assert_int_eq(
        zlink_getsockopt(p.server, ZLINK_ZAP_ENFORCE_DOMAIN, &v, &len), 0);
    ck_assert_int_eq(v, 1);
    pair_close(&p);
}
END_TEST

/* A handler's reply that breaks RFC 27 fails the handshake with libzmq's
 * reason for it. */
START_TEST(bad_replies)
{
    static const struct {
        const char *parts[7];
        int count;
        uint32_t reason;
    } cases[] = {
        {{"2.0", "1", "200", "", "", ""},
         6,
         ZLINK_PROTOCOL_ERROR_ZAP_BAD_VERSION},
        {{"1.0", "7", "200", "", "", ""},
         6,
         ZLINK_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID},
        {{"1.0", "1", "201", "", "", ""},
         6,
         ZLINK_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE},
        {{"1.0", "1", "200", ""}, 4, ZLINK_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY},
        {{"1.0", "1", "200", "", "", "\x05Role"},
         6,
         ZLINK_PROTOCOL_ERROR_ZAP_INVALID_METADATA},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plain_pair p;
        pair_open_asked(&p, "secret");
        send_parts(p.handler, cases[i].parts, cases[i].count, false);
        uint32_t reason =
            wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL);
        ck_assert_msg(reason == cases[i].reason, "case %d: 0x%x", (int)i,
                      reason);
        wait_value(p.client_monitor, ZLINK_EVENT_DISCONNECTED);
        pair_close(&p);
    }
}
END_TEST

/* The handler closes with the request unanswered: the handshake fails,
 * and nothing is left waiting for a reply that cannot come. */
START_TEST(handler_goes_away)
{
    plain_pair p;
    pair_open_asked(&p, "secret");
    ck_assert_int_eq(zlink_close(p.handler), 0);
    p.handler = NULL;
    ck_assert_uint_eq(
        wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL),
        ZLINK_PROTOCOL_ERROR_ZAP_UNSPECIFIED);
    pair_close(&p);
}
END_TEST

/* The server goes while its ZAP request is out: the handler's late reply
 * finds no one, and the context still ends. */
START_TEST(server_closes_while_asking)
{
    plain_pair p;
    pair_open_asked(&p, "secret");
    ck_assert_int_eq(zlink_close(p.server), 0);
    p.server = zlink_socket(p.ctx, ZLINK_PAIR); /* for pair_close */
    reply(p.handler, "200", "admin");
    pair_close(&p);
}
END_TEST

/* Raw clients that break PLAIN's order or its HELLO: each is closed with
 * libzmq's reason, and the handler is asked nothing. The last sends its
 * INITIATE before the handler answered: the late reply finds no one. */
START_TEST(bad_clients)
{
    static const struct {
        const char *name;
        const char *mechanism;
        const char *command;
        const char *data;
        size_t data_len;
        uint32_t reason;
    } cases[] = {
        {"HELLO with a byte too many", "PLAIN", "HELLO",
         "\x05"
         "admin\x06"
         "secretX",
         14, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO},
        {"HELLO cut short", "PLAIN", "HELLO",
         "\x09"
         "adm",
         4, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO},
        {"INITIATE first", "PLAIN", "INITIATE", "", 0,
         ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND},
        {"READY first", "PLAIN", "READY", "", 0,
         ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND},
        {"a NULL client", "NULL", NULL, NULL, 0,
         ZLINK_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH},
        {"INITIATE during the ZAP request", "PLAIN", "HELLO",
         "\x05"
         "admin\x06"
         "secret",
         13, ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND},
    };
    raw_sockets_init();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        plain_pair p;
        /* The DEALER's own handshake is asked about first; let it in. */
        pair_open_asked(&p, "secret");
        reply(p.handler, "200", "admin");
        raw_fd fd = raw_connect(port_of(p.endpoint));
        uint8_t out[256];
        zl_greeting_encode(out, cases[i].mechanism, false);
        size_t len = ZL_GREETING_SIZE;
        if (cases[i].command)
            len +=
                zl_command_encode(out + len, sizeof out - len, cases[i].command,
                                  cases[i].data, cases[i].data_len);
        if (i == 5)
            len += zl_command_encode(out + len, sizeof out - len, "INITIATE",
                                     NULL, 0);
        raw_send(fd, out, len);
        if (i == 5)
            expect_request(p.handler, "secret");
        ck_assert_msg(raw_closed_by_peer(fd, WAIT_MS), "%s: still open",
                      cases[i].name);
        raw_close(fd);
        uint32_t reason =
            wait_value(p.server_monitor, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL);
        ck_assert_msg(reason == cases[i].reason, "%s: reason 0x%x",
                      cases[i].name, reason);
        if (i == 5)
            reply(p.handler, "200", "admin"); /* to a session now gone */
        pair_close(&p);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("plain");
    TCase *tc = tcase_create("plain");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, admitted);
    tcase_add_test(tc, refused);
    tcase_add_test(tc, without_handler);
    tcase_add_test(tc, bad_replies);
    tcase_add_test(tc, null_admitted);
    tcase_add_test(tc, null_refused);
    tcase_add_test(tc, null_without_handler);
    tcase_add_test(tc, handler_goes_away);
    tcase_add_test(tc, server_closes_while_asking);
    tcase_add_test(tc, bad_clients);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
