/* zmq_ws_peer.c — one ws:// socket driven by argv: ROUTER echo server, DEALER
 * client, PUB server, SUB client; the servers behind the browser test and the
 * libzmq side of the ws interop checks. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* Built against a libzmq with ws (ci/libzmq-ws.sh), or against zlink
 * (ZLINK_PEER): the same program then serves the browser as a zlink server,
 * so both stacks are checked by one definition of the exchange. */
#ifdef ZLINK_PEER
#include <zlink_zmq.h>
#else
#include <zmq.h>
#endif

/*
 * Usage (one socket, endpoints like ws://127.0.0.1:* or ws://127.0.0.1:*\/p):
 *   zmq_ws_peer ROUTER bind EP echo [COUNT]      echo every message back
 *   zmq_ws_peer DEALER connect EP send [COUNT]   send, check each echo
 *   zmq_ws_peer PUB bind EP publish [COUNT]      publish topics A and B
 *   zmq_ws_peer SUB connect EP subscribe [COUNT] subscribe to A, check
 * A binder prints "endpoint ws://HOST:PORT/PATH" once bound, then serves
 * until COUNT messages (0 or none: until SIGTERM/SIGINT), and never longer
 * than LIFETIME_S. Exit status: 0 passed, 1 usage, 2 timeout, 3 mismatch,
 * 4 library error.
 */

enum {
    EXIT_USAGE = 1,
    EXIT_TIMEOUT = 2,
    EXIT_MISMATCH = 3,
    EXIT_ZMQ = 4,
};

#define LIFETIME_S 300
#define TIMEOUT_MS 10000 /* a client's wait for one message */
#define POLL_MS 200      /* how often a server looks at its stop flag */
#define LINGER_MS 2000
#define MAX_PARTS 4 /* the DEALER pattern's 3 parts plus a routing id */
#define PUB_INTERVAL_MS 10

/* Sizes from 5 B to 64 KiB, on both sides of ZMTP's and WebSocket's length
 * encodings (255/256 and 125/126/65535/65536). */
static const size_t sizes[] = {5, 125, 126, 255, 256, 1000, 4096, 65535, 65536};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static volatile sig_atomic_t stop;

/* C's signal() may reset the handler on delivery (glibc does in strict C11
 * mode, and so does Windows), and `timeout` forwards a TERM twice: to the
 * child and to its process group. Re-arming keeps the second one harmless. */
static void on_signal(int sig)
{
    signal(sig, on_signal);
    stop = 1;
}

static _Noreturn void fail(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("zmq_ws_peer: ", stderr);
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

static int message_parts(int i)
{
    return 1 + i % 3;
}

static size_t part_size(int i, int part)
{
    return sizes[(size_t)(i + part * 4) % N_SIZES];
}

static unsigned char part_byte(int i, int part, size_t offset)
{
    return (unsigned char)(i * 31 + part * 7 + offset * 13 + (offset >> 8));
}

static void sleep_ms(int ms)
{
    /* zmq_poll with no items sleeps portably (Windows has no nanosleep in
     * every runtime). */
    zmq_poll(NULL, 0, ms);
}

static void set_int(void *socket, int option, int value, const char *what)
{
    if (zmq_setsockopt(socket, option, &value, sizeof value) != 0)
        fail_zmq(what);
}

/* Receives one whole message into parts[]; returns the part count, 0 when
 * nothing came within the socket's RCVTIMEO or a signal interrupted. */
static int recv_message(void *socket, zmq_msg_t *parts, int max_parts)
{
    int n = 0;
    for (;;) {
        if (n == max_parts)
            fail(EXIT_MISMATCH, "more than %d parts in one message", max_parts);
        zmq_msg_init(&parts[n]);
        if (zmq_msg_recv(&parts[n], socket, 0) < 0) {
            zmq_msg_close(&parts[n]);
            int err = zmq_errno();
            if ((err == EAGAIN || err == EINTR) && n == 0)
                return 0;
            fail_zmq("zmq_msg_recv");
        }
        int more = zmq_msg_more(&parts[n]);
        n++;
        if (!more)
            return n;
    }
}

static void close_parts(zmq_msg_t *parts, int n)
{
    for (int i = 0; i < n; i++)
        zmq_msg_close(&parts[i]);
}

/* A signal that interrupts a send only means stop: the caller's loop ends. */
static void send_part(void *socket, const void *data, size_t size, int more)
{
    if (zmq_send(socket, data, size, more ? ZMQ_SNDMORE : 0) < 0 &&
        !(zmq_errno() == EINTR && stop))
        fail_zmq("zmq_send");
}

static void print_endpoint(void *socket)
{
    char endpoint[256];
    size_t size = sizeof endpoint;
    if (zmq_getsockopt(socket, ZMQ_LAST_ENDPOINT, endpoint, &size) != 0)
        fail_zmq("ZMQ_LAST_ENDPOINT");
    printf("endpoint %s\n", endpoint);
    fflush(stdout);
}

/* Whole seconds suffice for the lifetime cap, and time() is everywhere. */
static int serving(int done, int count, time_t deadline)
{
    return !stop && (count == 0 || done < count) && time(NULL) < deadline;
}

static int router_echo(void *socket, int count, time_t deadline)
{
    set_int(socket, ZMQ_RCVTIMEO, POLL_MS, "ZMQ_RCVTIMEO");
    int done = 0;
    zmq_msg_t parts[MAX_PARTS + 1];
    while (serving(done, count, deadline)) {
        int n = recv_message(socket, parts, MAX_PARTS + 1);
        for (int p = 0; p < n; p++)
            if (zmq_msg_send(&parts[p], socket, p + 1 < n ? ZMQ_SNDMORE : 0) <
                0)
                fail_zmq("zmq_msg_send (echo)");
        close_parts(parts, n);
        done += n > 0;
    }
    printf("echoed %d messages\n", done);
    return count == 0 || done == count ? 0 : EXIT_TIMEOUT;
}

static void check_echo(int i, zmq_msg_t *parts, int n)
{
    if (n != message_parts(i))
        fail(EXIT_MISMATCH, "message %d: %d parts, expected %d", i, n,
             message_parts(i));
    for (int p = 0; p < n; p++) {
        const unsigned char *data = zmq_msg_data(&parts[p]);
        size_t size = zmq_msg_size(&parts[p]);
        if (size != part_size(i, p))
            fail(EXIT_MISMATCH, "message %d part %d: %zu bytes, expected %zu",
                 i, p, size, part_size(i, p));
        for (size_t k = 0; k < size; k++)
            if (data[k] != part_byte(i, p, k))
                fail(EXIT_MISMATCH, "message %d part %d: byte %zu differs", i,
                     p, k);
    }
}

static int dealer_send(void *socket, int count)
{
    set_int(socket, ZMQ_RCVTIMEO, TIMEOUT_MS, "ZMQ_RCVTIMEO");
    set_int(socket, ZMQ_SNDTIMEO, TIMEOUT_MS, "ZMQ_SNDTIMEO");
    unsigned char *buffer = malloc(sizes[N_SIZES - 1]);
    if (!buffer)
        fail(EXIT_ZMQ, "out of memory");
    zmq_msg_t parts[MAX_PARTS];
    for (int i = 0; i < count; i++) {
        int n = message_parts(i);
        for (int p = 0; p < n; p++) {
            size_t size = part_size(i, p);
            for (size_t k = 0; k < size; k++)
                buffer[k] = part_byte(i, p, k);
            send_part(socket, buffer, size, p + 1 < n);
        }
        int got = recv_message(socket, parts, MAX_PARTS);
        if (got == 0)
            fail(EXIT_TIMEOUT, "message %d: no echo within %d ms", i,
                 TIMEOUT_MS);
        check_echo(i, parts, got);
        close_parts(parts, got);
    }
    free(buffer);
    printf("DEALER: %d echoes checked\n", count);
    return 0;
}

/* Topic A as two parts, topic B as one and then two parts in turn: a SUB
 * that leaked B would see both shapes. */
static int pub_publish(void *socket, int count, time_t deadline)
{
    char topic[32];
    int rounds = 0;
    while (serving(rounds, count, deadline)) {
        snprintf(topic, sizeof topic, "B-%d", rounds);
        send_part(socket, topic, strlen(topic), rounds % 2);
        if (rounds % 2)
            send_part(socket, "b", 1, 0);
        snprintf(topic, sizeof topic, "A-%d", rounds);
        send_part(socket, topic, strlen(topic), 1);
        send_part(socket, "a", 1, 0);
        rounds++;
        sleep_ms(PUB_INTERVAL_MS);
    }
    printf("published %d rounds\n", rounds);
    return 0;
}

static int sub_subscribe(void *socket, int count)
{
    set_int(socket, ZMQ_RCVTIMEO, TIMEOUT_MS, "ZMQ_RCVTIMEO");
    if (zmq_setsockopt(socket, ZMQ_SUBSCRIBE, "A", 1) != 0)
        fail_zmq("ZMQ_SUBSCRIBE");
    zmq_msg_t parts[MAX_PARTS];
    for (int i = 0; i < count; i++) {
        int n = recv_message(socket, parts, MAX_PARTS);
        if (n == 0)
            fail(EXIT_TIMEOUT, "message %d: nothing within %d ms", i,
                 TIMEOUT_MS);
        const char *data = zmq_msg_data(&parts[0]);
        if (n != 2 || zmq_msg_size(&parts[0]) < 2 || memcmp(data, "A-", 2) != 0)
            fail(EXIT_MISMATCH, "message %d: not a topic A message (%d parts)",
                 i, n);
        close_parts(parts, n);
    }
    printf("SUB: %d topic A messages, no other topic\n", count);
    return 0;
}

static int socket_type(const char *name)
{
    static const struct {
        const char *name;
        int type;
    } types[] = {{"ROUTER", ZMQ_ROUTER},
                 {"DEALER", ZMQ_DEALER},
                 {"PUB", ZMQ_PUB},
                 {"SUB", ZMQ_SUB}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(name, types[i].name) == 0)
            return types[i].type;
    fail(EXIT_USAGE, "unknown socket type %s", name);
}

int main(int argc, char **argv)
{
    if (argc < 5)
        fail(EXIT_USAGE,
             "usage: %s ROUTER|DEALER|PUB|SUB bind|connect "
             "ENDPOINT echo|send|publish|subscribe [COUNT]",
             argv[0]);
    int type = socket_type(argv[1]);
    int bind = strcmp(argv[2], "bind") == 0;
    const char *endpoint = argv[3];
    const char *action = argv[4];
    int count = argc > 5 ? atoi(argv[5]) : 0;
    time_t deadline = time(NULL) + LIFETIME_S;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    void *ctx = zmq_ctx_new();
    void *socket = ctx ? zmq_socket(ctx, type) : NULL;
    if (!socket)
        fail_zmq("zmq_socket");
    set_int(socket, ZMQ_LINGER, LINGER_MS, "ZMQ_LINGER");
#if defined(ZLINK_PEER) && defined(ZLINK_TLS_CERT)
    /* The zlink build serves wss:// too (ci/test-browser.sh), with its
     * certificate and key from ZLINK_PEER_TLS_CERT and _KEY. */
    const char *cert = getenv("ZLINK_PEER_TLS_CERT");
    const char *key = getenv("ZLINK_PEER_TLS_KEY");
    if (cert && zlink_setsockopt(socket, ZLINK_TLS_CERT, cert, strlen(cert)))
        fail_zmq("ZLINK_TLS_CERT");
    if (key && zlink_setsockopt(socket, ZLINK_TLS_KEY, key, strlen(key)))
        fail_zmq("ZLINK_TLS_KEY");
#endif
    if (bind ? zmq_bind(socket, endpoint) : zmq_connect(socket, endpoint))
        fail_zmq(bind ? "zmq_bind" : "zmq_connect");
    if (bind)
        print_endpoint(socket);

    int rc;
    if (type == ZMQ_ROUTER && strcmp(action, "echo") == 0)
        rc = router_echo(socket, count, deadline);
    else if (type == ZMQ_DEALER && strcmp(action, "send") == 0)
        rc = dealer_send(socket, count > 0 ? count : 30);
    else if (type == ZMQ_PUB && strcmp(action, "publish") == 0)
        rc = pub_publish(socket, count, deadline);
    else if (type == ZMQ_SUB && strcmp(action, "subscribe") == 0)
        rc = sub_subscribe(socket, count > 0 ? count : 50);
    else
        fail(EXIT_USAGE, "%s cannot %s", argv[1], action);

    zmq_close(socket);
    zmq_ctx_term(ctx);
    return rc;
}
