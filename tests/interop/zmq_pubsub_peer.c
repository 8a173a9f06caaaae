/* zmq_pubsub_peer.c — the libzmq side of test_interop_pubsub: one PUB, SUB
 * or XSUB driven by argv, which publishes until its stdin closes or checks
 * that only the topic it subscribed to arrives. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

enum {
    EXIT_USAGE = 1,
    EXIT_TIMEOUT = 2,
    EXIT_MISMATCH = 3,
    EXIT_ZMQ = 4,
};

/* Generous per call, bounded overall: a stuck exchange ends this process. */
#define TIMEOUT_MS 10000
#define RUN_LIMIT_S 30
#define LINGER_MS 2000
/* Messages of the subscribed topic a subscriber checks before it exits. */
#define EXPECTED 20

static _Noreturn void fail(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("zmq_pubsub_peer: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(code);
}

static _Noreturn void fail_zmq(const char *what)
{
    int err = zmq_errno();
    fail(err == EAGAIN ? EXIT_TIMEOUT : EXIT_ZMQ, "%s: %s", what,
         zmq_strerror(err));
}

static void set_int(void *socket, int option, int value, const char *name)
{
    if (zmq_setsockopt(socket, option, &value, sizeof value) != 0)
        fail_zmq(name);
}

static void open_endpoint(void *socket, const char *mode, const char *endpoint)
{
    if (strcmp(mode, "connect") == 0) {
        if (zmq_connect(socket, endpoint) != 0)
            fail_zmq("zmq_connect");
        return;
    }
    if (strcmp(mode, "bind") != 0)
        fail(EXIT_USAGE, "mode must be bind or connect, not '%s'", mode);
    if (zmq_bind(socket, endpoint) != 0)
        fail_zmq("zmq_bind");
    /* The zlink side reads this line to learn a wildcard port. */
    char last[1024];
    size_t len = sizeof last;
    if (zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, last, &len) != 0)
        fail_zmq("ZMQ_LAST_ENDPOINT");
    printf("%s\n", last);
    fflush(stdout);
}

/* True once the test closed our stdin: time to stop publishing. */
static int stdin_closed(int wait_ms)
{
    zmq_pollitem_t item = {NULL, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, wait_ms) <= 0)
        return 0;
    char buf[64];
    return read(0, buf, sizeof buf) <= 0;
}

/* Publishes "B-n" and "A-n" pairs until stdin closes. */
static void run_pub(void *socket)
{
    time_t give_up = time(NULL) + RUN_LIMIT_S;
    for (int n = 0; !stdin_closed(2); n++) {
        char msg[32];
        int len = snprintf(msg, sizeof msg, "B-%d", n);
        if (zmq_send(socket, msg, (size_t)len, 0) != len)
            fail_zmq("zmq_send");
        msg[0] = 'A';
        if (zmq_send(socket, msg, (size_t)len, 0) != len)
            fail_zmq("zmq_send");
        if (time(NULL) > give_up)
            fail(EXIT_TIMEOUT, "stdin never closed");
    }
}

static int recv_text(void *socket, char *buf, size_t cap)
{
    int n = zmq_recv(socket, buf, cap - 1, 0);
    if (n < 0)
        fail_zmq("zmq_recv");
    if ((size_t)n >= cap)
        fail(EXIT_MISMATCH, "message of %d bytes", n);
    buf[n] = '\0';
    return n;
}

/* Checks that EXPECTED messages arrive, all "A-n" with n increasing. */
static void expect_topic_a(void *socket)
{
    long last = -1;
    for (int i = 0; i < EXPECTED; i++) {
        char buf[64];
        recv_text(socket, buf, sizeof buf);
        if (strncmp(buf, "A-", 2) != 0)
            fail(EXIT_MISMATCH, "received '%s', subscribed to A only", buf);
        long n = strtol(buf + 2, NULL, 10);
        if (n <= last)
            fail(EXIT_MISMATCH, "'%s' after A-%ld", buf, last);
        last = n;
    }
}

/* Subscribes to A and S, takes an A message, cancels A, and waits for an
 * S message: the zlink XPUB sees both subscriptions and the cancel while
 * this peer is still connected. */
static void run_subcancel(void *socket)
{
    if (zmq_setsockopt(socket, ZMQ_SUBSCRIBE, "A", 1) != 0 ||
        zmq_setsockopt(socket, ZMQ_SUBSCRIBE, "S", 1) != 0)
        fail_zmq("ZMQ_SUBSCRIBE");
    char buf[64];
    do
        recv_text(socket, buf, sizeof buf);
    while (buf[0] != 'A');
    if (zmq_setsockopt(socket, ZMQ_UNSUBSCRIBE, "A", 1) != 0)
        fail_zmq("ZMQ_UNSUBSCRIBE");
    for (;;) {
        recv_text(socket, buf, sizeof buf);
        if (buf[0] == 'S')
            return;
        /* Sent before the cancel arrived. */
        if (buf[0] != 'A')
            fail(EXIT_MISMATCH, "received '%s'", buf);
    }
}

static _Noreturn void usage(void)
{
    fail(EXIT_USAGE,
         "usage: zmq_pubsub_peer pub|sub|xsub|subcancel bind|connect "
         "ENDPOINT\n"
         "  pub: PUB sending B-n and A-n until stdin closes\n"
         "  sub: SUB to A, checks %d A-n messages\n"
         "  xsub: XSUB sending its own subscription to A, the same check\n"
         "  subcancel: SUB to A and S; cancels A after one A, exits at an S\n"
         "  bind prints the bound endpoint (ZMQ_LAST_ENDPOINT) on stdout\n"
         "  exit: 0 ok, 1 usage, 2 timeout, 3 mismatch, 4 libzmq error",
         EXPECTED);
}

int main(int argc, char **argv)
{
    if (argc != 4)
        usage();
    const char *scenario = argv[1];
    int type;
    if (strcmp(scenario, "pub") == 0)
        type = ZMQ_PUB;
    else if (strcmp(scenario, "sub") == 0 || strcmp(scenario, "subcancel") == 0)
        type = ZMQ_SUB;
    else if (strcmp(scenario, "xsub") == 0)
        type = ZMQ_XSUB;
    else
        usage();

    void *ctx = zmq_ctx_new();
    if (ctx == NULL)
        fail_zmq("zmq_ctx_new");
    void *socket = zmq_socket(ctx, type);
    if (socket == NULL)
        fail_zmq("zmq_socket");
    set_int(socket, ZMQ_RCVTIMEO, TIMEOUT_MS, "ZMQ_RCVTIMEO");
    set_int(socket, ZMQ_SNDTIMEO, TIMEOUT_MS, "ZMQ_SNDTIMEO");
    set_int(socket, ZMQ_LINGER, LINGER_MS, "ZMQ_LINGER");
    open_endpoint(socket, argv[2], argv[3]);

    if (strcmp(scenario, "pub") == 0) {
        run_pub(socket);
    } else if (strcmp(scenario, "sub") == 0) {
        if (zmq_setsockopt(socket, ZMQ_SUBSCRIBE, "A", 1) != 0)
            fail_zmq("ZMQ_SUBSCRIBE");
        expect_topic_a(socket);
    } else if (strcmp(scenario, "xsub") == 0) {
        /* libzmq's XSUB does not filter: only the publisher can keep B
         * away. */
        if (zmq_send(socket, "\1A", 2, 0) != 2)
            fail_zmq("zmq_send subscription");
        expect_topic_a(socket);
    } else {
        run_subcancel(socket);
    }
    zmq_close(socket);
    zmq_ctx_term(ctx);
    return 0;
}
