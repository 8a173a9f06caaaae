/* zmq_peer.c — the libzmq side of test_interop: one socket, driven by argv,
 * that echoes or originates the suite's message pattern and checks it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* Built against libzmq for test_interop; built against zlink (ZLINK_PEER)
 * as the Windows side of ci/test-windows.sh's cross-process check, where a
 * Wine-run zlink talks to this same program natively linked to libzmq. */
#ifdef ZLINK_PEER
#include <zlink_zmq.h>
#else
#include <zmq.h>
#endif

/* The pattern below must stay identical to the one in tests/test_interop.c:
 * message i has 1 + i % 3 parts, one empty part in every odd message, sizes
 * on both sides of the 255-byte short-frame limit, and one 1 MiB body. */
#define IX_DEFAULT_COUNT 10
#define IX_BIG_INDEX 4
#define IX_BIG_SIZE (1024 * 1024)
#define IX_MAX_PARTS 4 /* the pattern's 3 parts plus a ROUTER's routing id */

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

enum {
    EXIT_USAGE = 1,
    EXIT_TIMEOUT = 2,
    EXIT_MISMATCH = 3,
    EXIT_ZMQ = 4,
};

/* Generous per call, short overall: a stuck exchange ends this process.
 * ZLINK_PEER_TIMEOUT_MS raises it for a script whose exchange also waits
 * for other processes' start (tests/tls/interop.sh: stunnel). */
#define TIMEOUT_MS_DEFAULT 10000

static int timeout_ms(void)
{
    const char *env = getenv("ZLINK_PEER_TIMEOUT_MS");
    int ms = env ? atoi(env) : 0;
    return ms > 0 ? ms : TIMEOUT_MS_DEFAULT;
}
#define LINGER_MS 2000

struct peer {
    void *ctx;
    void *socket;
    int type;
    const char *routing_id; /* ROUTER: expected peer id; others: our own */
    int count;
};

static _Noreturn void fail(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("zmq_peer: ", stderr);
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

static int parse_type(const char *name)
{
    if (strcmp(name, "PAIR") == 0)
        return ZMQ_PAIR;
    if (strcmp(name, "DEALER") == 0)
        return ZMQ_DEALER;
    if (strcmp(name, "ROUTER") == 0)
        return ZMQ_ROUTER;
    if (strcmp(name, "REQ") == 0)
        return ZMQ_REQ;
    if (strcmp(name, "REP") == 0)
        return ZMQ_REP;
    if (strcmp(name, "PUSH") == 0)
        return ZMQ_PUSH;
    if (strcmp(name, "PULL") == 0)
        return ZMQ_PULL;
    fail(EXIT_USAGE, "unknown socket type '%s'", name);
}

static void set_int(void *socket, int option, int value, const char *name)
{
    if (zmq_setsockopt(socket, option, &value, sizeof value) != 0)
        fail_zmq(name);
}

#if defined(ZLINK_PEER) && defined(ZLINK_TLS_CERT)
/* The zlink build speaks tls:// too (ci's stunnel checks): its options come
 * from ZLINK_PEER_TLS_CERT, _KEY, _CA and _HOSTNAME. */
static void apply_tls_env(void *socket)
{
    static const struct {
        const char *name;
        int option;
    } env[] = {{"ZLINK_PEER_TLS_CERT", ZLINK_TLS_CERT},
               {"ZLINK_PEER_TLS_KEY", ZLINK_TLS_KEY},
               {"ZLINK_PEER_TLS_CA", ZLINK_TLS_CA},
               {"ZLINK_PEER_TLS_HOSTNAME", ZLINK_TLS_HOSTNAME}};
    for (size_t i = 0; i < sizeof env / sizeof env[0]; i++) {
        const char *value = getenv(env[i].name);
        if (value &&
            zlink_setsockopt(socket, env[i].option, value, strlen(value)) != 0)
            fail_zmq(env[i].name);
    }
}
#else
static void apply_tls_env(void *socket)
{
    (void)socket;
}
#endif

static void open_socket(struct peer *p, const char *mode, const char *endpoint)
{
    p->ctx = zmq_ctx_new();
    if (p->ctx == NULL)
        fail_zmq("zmq_ctx_new");
    p->socket = zmq_socket(p->ctx, p->type);
    if (p->socket == NULL)
        fail_zmq("zmq_socket");
    set_int(p->socket, ZMQ_RCVTIMEO, timeout_ms(), "ZMQ_RCVTIMEO");
    set_int(p->socket, ZMQ_SNDTIMEO, timeout_ms(), "ZMQ_SNDTIMEO");
    set_int(p->socket, ZMQ_LINGER, LINGER_MS, "ZMQ_LINGER");
    apply_tls_env(p->socket);
    if (p->type == ZMQ_ROUTER) {
        /* An unknown routing id must be an error we can retry, not a
         * silent drop. */
        set_int(p->socket, ZMQ_ROUTER_MANDATORY, 1, "ZMQ_ROUTER_MANDATORY");
    } else if (p->routing_id != NULL) {
        if (zmq_setsockopt(p->socket, ZMQ_ROUTING_ID, p->routing_id,
                           strlen(p->routing_id)) != 0)
            fail_zmq("ZMQ_ROUTING_ID");
    }

    if (strcmp(mode, "connect") == 0) {
        if (zmq_connect(p->socket, endpoint) != 0)
            fail_zmq("zmq_connect");
        return;
    }
    if (strcmp(mode, "bind") != 0)
        fail(EXIT_USAGE, "mode must be bind or connect, not '%s'", mode);
    if (zmq_bind(p->socket, endpoint) != 0)
        fail_zmq("zmq_bind");
    /* The zlink side reads this line to learn a wildcard port. */
    char last[1024];
    size_t len = sizeof last;
    if (zmq_getsockopt(p->socket, ZMQ_LAST_ENDPOINT, last, &len) != 0)
        fail_zmq("ZMQ_LAST_ENDPOINT");
    printf("%s\n", last);
    fflush(stdout);
}

/* Receives every part of one message; returns the part count. */
static int recv_message(struct peer *p, zmq_msg_t *parts, int index)
{
    int n = 0;
    int more = 1;
    while (more) {
        if (n == IX_MAX_PARTS)
            fail(EXIT_MISMATCH, "message %d: more than %d parts", index,
                 IX_MAX_PARTS);
        zmq_msg_init(&parts[n]);
        if (zmq_msg_recv(&parts[n], p->socket, 0) < 0)
            fail_zmq("zmq_msg_recv");
        more = zmq_msg_more(&parts[n]);
        n++;
    }
    return n;
}

static void check_routing_id(struct peer *p, zmq_msg_t *id, int index)
{
    if (p->routing_id == NULL)
        return;
    size_t len = strlen(p->routing_id);
    if (zmq_msg_size(id) != len ||
        memcmp(zmq_msg_data(id), p->routing_id, len) != 0)
        fail(EXIT_MISMATCH, "message %d: routing id is %.*s, expected %s",
             index, (int)zmq_msg_size(id), (const char *)zmq_msg_data(id),
             p->routing_id);
}

/* Checks parts[0..n) against message `index` of the pattern. */
static void check_pattern(zmq_msg_t *parts, int n, int index)
{
    if (n != ix_parts(index))
        fail(EXIT_MISMATCH, "message %d: %d parts, expected %d", index, n,
             ix_parts(index));
    for (int part = 0; part < n; part++) {
        size_t size = zmq_msg_size(&parts[part]);
        if (size != ix_size(index, part))
            fail(EXIT_MISMATCH, "message %d part %d: %zu bytes, expected %zu",
                 index, part, size, ix_size(index, part));
        const unsigned char *data = zmq_msg_data(&parts[part]);
        for (size_t off = 0; off < size; off++) {
            if (data[off] != ix_byte(index, part, off))
                fail(EXIT_MISMATCH, "message %d part %d: byte %zu differs",
                     index, part, off);
        }
    }
}

static void send_part(struct peer *p, zmq_msg_t *part, int flags)
{
    time_t give_up = time(NULL) + timeout_ms() / 1000;
    while (zmq_msg_send(part, p->socket, flags) < 0) {
        /* ROUTER_MANDATORY: the zlink peer has not finished its handshake
         * yet. Retry until it has, within the same bound as a receive. */
        if (zmq_errno() != EHOSTUNREACH)
            fail_zmq("zmq_msg_send");
        if (time(NULL) > give_up)
            fail(EXIT_TIMEOUT, "routing id %s never connected", p->routing_id);
        zmq_poll(NULL, 0, 10);
    }
}

static void send_routing_id(struct peer *p)
{
    zmq_msg_t id;
    size_t len = strlen(p->routing_id);
    zmq_msg_init_size(&id, len);
    memcpy(zmq_msg_data(&id), p->routing_id, len);
    send_part(p, &id, ZMQ_SNDMORE);
}

static void send_pattern(struct peer *p, int index)
{
    if (p->type == ZMQ_ROUTER)
        send_routing_id(p);
    int n = ix_parts(index);
    for (int part = 0; part < n; part++) {
        zmq_msg_t msg;
        size_t size = ix_size(index, part);
        if (zmq_msg_init_size(&msg, size) != 0)
            fail_zmq("zmq_msg_init_size");
        unsigned char *data = zmq_msg_data(&msg);
        for (size_t off = 0; off < size; off++)
            data[off] = ix_byte(index, part, off);
        send_part(p, &msg, part + 1 < n ? ZMQ_SNDMORE : 0);
    }
}

/* Receives one message, checks it, and returns the pattern part offset. */
static int recv_checked(struct peer *p, zmq_msg_t *parts, int index)
{
    int n = recv_message(p, parts, index);
    int first = 0;
    if (p->type == ZMQ_ROUTER) {
        check_routing_id(p, &parts[0], index);
        first = 1;
    }
    check_pattern(parts + first, n - first, index);
    return n;
}

static void run_echo(struct peer *p)
{
    for (int index = 0; index < p->count; index++) {
        zmq_msg_t parts[IX_MAX_PARTS];
        int n = recv_checked(p, parts, index);
        /* A ROUTER's first part is the routing id, so the echo goes back
         * to the peer it came from. */
        for (int part = 0; part < n; part++)
            send_part(p, &parts[part], part + 1 < n ? ZMQ_SNDMORE : 0);
    }
}

static void run_send(struct peer *p)
{
    if (p->type == ZMQ_ROUTER && p->routing_id == NULL)
        fail(EXIT_USAGE, "a ROUTER can only send to a known routing id");
    for (int index = 0; index < p->count; index++)
        send_pattern(p, index);
    for (int index = 0; index < p->count; index++) {
        zmq_msg_t parts[IX_MAX_PARTS];
        int n = recv_checked(p, parts, index);
        for (int part = 0; part < n; part++)
            zmq_msg_close(&parts[part]);
    }
}

/* REQ's turn-taking: each message out, then its echo back. */
static void run_request(struct peer *p)
{
    for (int index = 0; index < p->count; index++) {
        send_pattern(p, index);
        zmq_msg_t parts[IX_MAX_PARTS];
        int n = recv_checked(p, parts, index);
        for (int part = 0; part < n; part++)
            zmq_msg_close(&parts[part]);
    }
}

/* PUSH and PULL go one way only. */
static void run_source(struct peer *p)
{
    for (int index = 0; index < p->count; index++)
        send_pattern(p, index);
}

static void run_sink(struct peer *p)
{
    for (int index = 0; index < p->count; index++) {
        zmq_msg_t parts[IX_MAX_PARTS];
        int n = recv_checked(p, parts, index);
        for (int part = 0; part < n; part++)
            zmq_msg_close(&parts[part]);
    }
}

static _Noreturn void usage(void)
{
    fail(EXIT_USAGE,
         "usage: zmq_peer PAIR|DEALER|ROUTER|REQ|REP|PUSH|PULL "
         "bind|connect ENDPOINT echo|send|request|source|sink "
         "[COUNT [ROUTING_ID]]\n"
         "  echo: receive COUNT pattern messages, check and echo each\n"
         "  send: send COUNT pattern messages, then check their echoes\n"
         "  request: send each message and check its echo before the next\n"
         "  source / sink: only send / only receive and check\n"
         "  bind prints the bound endpoint (ZMQ_LAST_ENDPOINT) on stdout\n"
         "  ROUTING_ID: set on PAIR/DEALER; expected from the peer on "
         "ROUTER\n"
         "  exit: 0 ok, 1 usage, 2 timeout, 3 mismatch, 4 libzmq error");
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 7)
        usage();
    struct peer p = {0};
    p.type = parse_type(argv[1]);
    p.count = argc > 5 ? atoi(argv[5]) : IX_DEFAULT_COUNT;
    p.routing_id = argc > 6 ? argv[6] : NULL;
    if (p.count <= 0)
        usage();
    static const struct {
        const char *name;
        void (*run)(struct peer *);
    } scenarios[] = {{"echo", run_echo},
                     {"send", run_send},
                     {"request", run_request},
                     {"source", run_source},
                     {"sink", run_sink}};
    void (*run)(struct peer *) = NULL;
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        if (strcmp(argv[4], scenarios[i].name) == 0)
            run = scenarios[i].run;
    }
    if (!run)
        usage();

    open_socket(&p, argv[2], argv[3]);
    run(&p);

    zmq_close(p.socket);
    zmq_ctx_term(p.ctx);
    return 0;
}
