/* fuzz_connection.c — a libFuzzer target for a whole connection: a zlink
 * socket of each type with its session, engine and pipes, over the fake
 * backend (fake_backend/), whose peers send what the input says, in the
 * pieces it says, while the application sends and receives. Every input is
 * hostile; AddressSanitizer, UBSan and LeakSanitizer judge, and each input
 * ends with zlink_ctx_term, so whatever it left allocated is a leak.
 *
 * The input: byte 0 picks the socket type, STREAM's raw connections
 * among them (its top bit: a PLAIN client;
 * the next: a PLAIN server; 0x20: a ZAP handler bound, which admits every
 * request when the application receives; 0x10: a ZAP_DOMAIN, so that a
 * NULL socket asks it too), byte 1 the
 * options (bind or connect, heartbeats, MAXMSGSIZE, a small HWM, the type's
 * own option, a routing id, a monitor, linger). Then records, each an opcode
 * byte (low nibble: what, high nibble: an argument) and its operands; the loop
 * is given passes until it is idle after each record, so where one record of
 * peer bytes ends is where a read ends:
 *
 *   0-3, 12-15  DATA  bytes from a peer (connection arg & 3, or the newest
 *                     for 12-15): one length byte, then that many bytes
 *                     (times 64 when arg & 8)
 *   4  CLOCK     the loop's clock moves forward
 *   5  RECV      the application receives up to arg + 1 parts
 *   6  SEND      the application sends a message (arg: parts, large)
 *   7  HANG_UP   a peer hangs up (arg & 3), with EOF or a reset (arg & 4)
 *   8  ACCEPT    a peer connects to the bound socket
 *   9  STALL     peers stop reading, or start again (arg & 1)
 *  10  REFUSE    connects fail, or succeed again (arg & 1)
 *  11  TOPIC     SUB/XSUB subscribe or unsubscribe: one length byte, topic
 *
 * Built by ci/test.sh's fuzz stage with fuzz_zmtp; seeds (a valid
 * handshake and traffic for every socket type, on both sides) are written
 * into $ZLINK_FUZZ_SEEDS by LLVMFuzzerInitialize.
 *
 * Besides the sanitizers, one check of behaviour: what zlink writes to a
 * peer, whatever that peer sent, is a valid greeting and valid frames. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backend.h"
#include "fake_backend.h"
#include "zlink.h"
#include "zmtp/zmtp.h"

#define TYPE_COUNT 8
static const int socket_types[TYPE_COUNT] = {
    ZLINK_PAIR, ZLINK_PUB,    ZLINK_SUB,    ZLINK_XPUB,
    ZLINK_XSUB, ZLINK_DEALER, ZLINK_ROUTER, ZLINK_STREAM};
/* The type a well-behaved peer of each of the above has, for the seeds. A
 * STREAM's peer sends whatever it likes: the seed's ZMTP bytes will do. */
static const int peer_types[TYPE_COUNT] = {
    ZLINK_PAIR, ZLINK_SUB,    ZLINK_PUB,    ZLINK_XSUB,
    ZLINK_XPUB, ZLINK_ROUTER, ZLINK_DEALER, ZLINK_DEALER};

enum {
    OPT_CONNECT = 1 << 0,
    OPT_HEARTBEAT = 1 << 1,
    OPT_MAXMSG_SHIFT = 2, /* two bits */
    OPT_SMALL_HWM = 1 << 4,
    OPT_TYPE_OPTION = 1 << 5,
    OPT_ROUTING_ID = 1 << 6,
    OPT_MONITOR = 1 << 7,
};

enum {
    OP_CLOCK = 4,
    OP_RECV = 5,
    OP_SEND = 6,
    OP_HANG_UP = 7,
    OP_ACCEPT = 8,
    OP_STALL = 9,
    OP_REFUSE = 10,
    OP_TOPIC = 11,
    OP_DATA_NEWEST = 12,
};

/* Sends per input: a stalled peer with the default HWM would otherwise let
 * an input queue hundreds of megabytes. */
#define SENDS_MAX 256
#define ENDPOINT "tcp://127.0.0.1:5555"
#define MONITOR_ENDPOINT "inproc://fuzz-monitor"

static const uint32_t clock_steps_ms[16] = {
    1,    5,    10,   50,    100,   200,   300,   500,
    1000, 2000, 5000, 10000, 30000, 31000, 60000, 120000};
/* No "unlimited": a peer announcing 2^60 bytes would make the decoder ask
 * for them (fuzz_zmtp.c says why). */
static const int64_t max_msg_sizes[4] = {1 << 20, 0, 255, 70000};

typedef struct input {
    const uint8_t *data;
    size_t len, pos;
} input;

/* What zlink writes to a peer must be ZMTP: a greeting the peer accepts,
 * then frames its decoder accepts. */
typedef struct output_check {
    uint8_t greeting[ZL_GREETING_SIZE];
    size_t greeting_have;
    zl_decoder decoder;
    bool started;
} output_check;

typedef struct driver {
    int type;
    void *socket;
    void *monitor;
    void *zap_handler;       /* a REP at inproc://zeromq.zap.01, or NULL */
    uint8_t routing_id[256]; /* ROUTER: the last peer heard from */
    size_t routing_id_len;
    bool in_message; /* the last part received had MORE */
    int sends;
    unsigned sink;
    output_check checks[FAKE_CONN_MAX];
} driver;

static bool take(input *in, uint8_t *out)
{
    if (in->pos >= in->len)
        return false;
    *out = in->data[in->pos++];
    return true;
}

/* Up to len bytes from the input; how many there were. */
static size_t take_bytes(input *in, const uint8_t **out, size_t len)
{
    size_t left = in->len - in->pos;
    if (len > left)
        len = left;
    *out = in->data + in->pos;
    in->pos += len;
    return len;
}

static void set_int(void *socket, int option, int value)
{
    (void)zlink_setsockopt(socket, option, &value, sizeof value);
}

static void apply_options(driver *d, uint8_t opts)
{
    void *s = d->socket;
    int64_t max = max_msg_sizes[(opts >> OPT_MAXMSG_SHIFT) & 3];
    (void)zlink_setsockopt(s, ZLINK_MAXMSGSIZE, &max, sizeof max);
    set_int(s, ZLINK_RECONNECT_IVL, 100);
    if (opts & OPT_HEARTBEAT) {
        set_int(s, ZLINK_HEARTBEAT_IVL, 100);
        set_int(s, ZLINK_HEARTBEAT_TIMEOUT, 300);
        set_int(s, ZLINK_HEARTBEAT_TTL, 500);
    }
    if (opts & OPT_SMALL_HWM) {
        set_int(s, ZLINK_SNDHWM, 2);
        set_int(s, ZLINK_RCVHWM, 2);
    }
    if (opts & OPT_ROUTING_ID)
        (void)zlink_setsockopt(s, ZLINK_ROUTING_ID, "fuzz", 4);
    if (opts & OPT_TYPE_OPTION) {
        switch (d->type) {
        case ZLINK_ROUTER:
            set_int(s, ZLINK_ROUTER_MANDATORY, 1);
            break;
        case ZLINK_XPUB:
            set_int(s, ZLINK_XPUB_VERBOSE, 1);
            break;
        case ZLINK_SUB:
            (void)zlink_setsockopt(s, ZLINK_SUBSCRIBE, "", 0);
            break;
        case ZLINK_DEALER:
        case ZLINK_PAIR:
            set_int(s, ZLINK_IMMEDIATE, 1);
            break;
        default:
            break;
        }
    }
}

static void frame_out(driver *d, zlink_msg_t *msg)
{
    d->sink += (unsigned)zlink_msg_size(msg);
    zlink_msg_close(msg);
}

/* A crash is how the fuzzer reports output that is not ZMTP. */
static void check_output(driver *d, output_check *oc, const uint8_t *data,
                         size_t len)
{
    size_t pos = 0;
    if (!oc->started) {
        zl_decoder_init(&oc->decoder, -1);
        oc->started = true;
    }
    if (oc->greeting_have < ZL_GREETING_SIZE) {
        size_t n = ZL_GREETING_SIZE - oc->greeting_have;
        n = n < len ? n : len;
        memcpy(oc->greeting + oc->greeting_have, data, n);
        oc->greeting_have += n;
        pos += n;
        zl_greeting parsed;
        if (oc->greeting_have == ZL_GREETING_SIZE &&
            zl_greeting_decode(oc->greeting, &parsed) != 0)
            abort();
    }
    while (pos < len) {
        zlink_msg_t msg;
        void *direct;
        size_t direct_len;
        zl_decode_result r;
        if (zl_decoder_direct_buffer(&oc->decoder, &direct, &direct_len)) {
            size_t n = direct_len < len - pos ? direct_len : len - pos;
            memcpy(direct, data + pos, n);
            pos += n;
            r = zl_decoder_direct_done(&oc->decoder, n, &msg);
        } else {
            size_t consumed = 0;
            r = zl_decoder_decode(&oc->decoder, data + pos, len - pos,
                                  &consumed, &msg);
            pos += consumed;
        }
        if (r == ZL_DECODE_ERROR)
            abort();
        if (r == ZL_DECODE_FRAME)
            frame_out(d, &msg);
    }
}

static void check_outputs(driver *d)
{
    for (int i = 0; i < fake_conn_count(); i++) {
        size_t len;
        const uint8_t *out = fake_output(i, &len);
        /* A STREAM writes raw bytes: nothing to check but the sanitizers. */
        if (len > 0 && d->type != ZLINK_STREAM)
            check_output(d, &d->checks[i], out, len);
        fake_output_clear(i);
    }
}

/* Gives the I/O thread its turns, then reads what it wrote. */
static void run_loop(driver *d)
{
    fake_run();
    check_outputs(d);
}

static void drain_monitor(driver *d)
{
    if (!d->monitor)
        return;
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    while (zlink_msg_recv(&msg, d->monitor, ZLINK_DONTWAIT) >= 0)
        d->sink += (unsigned)zlink_msg_size(&msg);
    zlink_msg_close(&msg);
}

/* Admits every ZAP request queued for the handler. */
static void answer_zap(driver *d)
{
    static const char *const reply[] = {"1.0", "1", "200", "", "fuzz", ""};
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    while (d->zap_handler &&
           zlink_msg_recv(&msg, d->zap_handler, ZLINK_DONTWAIT) >= 0) {
        if (zlink_msg_more(&msg))
            continue;
        for (int i = 0; i < 6; i++)
            (void)zlink_send(d->zap_handler, reply[i], strlen(reply[i]),
                             ZLINK_DONTWAIT | (i < 5 ? ZLINK_SNDMORE : 0));
    }
    zlink_msg_close(&msg);
}

static void app_recv(driver *d, int parts)
{
    answer_zap(d);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    for (int i = 0; i < parts; i++) {
        if (zlink_msg_recv(&msg, d->socket, ZLINK_DONTWAIT) < 0)
            break;
        size_t size = zlink_msg_size(&msg);
        const uint8_t *body = zlink_msg_data(&msg);
        for (size_t k = 0; k < size; k++)
            d->sink += body[k];
        if ((d->type == ZLINK_ROUTER || d->type == ZLINK_STREAM) &&
            !d->in_message && size <= sizeof d->routing_id) {
            memcpy(d->routing_id, body, size);
            d->routing_id_len = size;
        }
        d->in_message = zlink_msg_more(&msg);
    }
    zlink_msg_close(&msg);
    drain_monitor(d);
}

static void send_part(driver *d, const void *body, size_t size, bool more)
{
    (void)zlink_send(d->socket, body, size,
                     ZLINK_DONTWAIT | (more ? ZLINK_SNDMORE : 0));
}

/* arg: bits 0-1 the parts after the first, bit 2 a large body. */
static void app_send(driver *d, input *in, int arg)
{
    static uint8_t body[255 * 64];
    uint8_t size_byte = 0;
    (void)take(in, &size_byte);
    size_t size = (arg & 4) ? (size_t)size_byte * 64 : size_byte;
    if (d->sends++ >= SENDS_MAX)
        return;
    memset(body, 'a' + (size_byte % 26), size);
    if (d->type == ZLINK_SUB)
        return; /* SUB sends nothing; TOPIC subscribes */
    if (d->type == ZLINK_XSUB && size > 0)
        body[0] = size_byte & 1; /* subscribe or cancel a topic */
    if (d->type == ZLINK_ROUTER || d->type == ZLINK_STREAM) {
        if (d->routing_id_len > 0)
            send_part(d, d->routing_id, d->routing_id_len, true);
        else
            send_part(d, "peer", 4, true);
    }
    int parts = (arg & 3) + 1;
    for (int i = 0; i < parts; i++)
        send_part(d, body, size, i + 1 < parts);
}

static void app_topic(driver *d, input *in, int arg)
{
    uint8_t len = 0;
    (void)take(in, &len);
    const uint8_t *topic;
    size_t n = take_bytes(in, &topic, len % 32);
    int option = (arg & 1) ? ZLINK_UNSUBSCRIBE : ZLINK_SUBSCRIBE;
    if (d->type == ZLINK_SUB) {
        (void)zlink_setsockopt(d->socket, option, topic, n);
    } else if (d->type == ZLINK_XSUB) {
        uint8_t msg[33];
        msg[0] = option == ZLINK_SUBSCRIBE;
        memcpy(msg + 1, topic, n);
        send_part(d, msg, n + 1, false);
    } else {
        app_recv(d, 1);
    }
}

static int conn_of(int arg)
{
    int count = fake_conn_count();
    return count == 0 ? -1 : (arg & 3) % count;
}

static void data_record(input *in, int op, int arg)
{
    uint8_t len_byte = 0;
    if (!take(in, &len_byte))
        return;
    size_t len = (size_t)len_byte + 1;
    if (arg & 8)
        len *= 64;
    const uint8_t *bytes;
    len = take_bytes(in, &bytes, len);
    int conn = op >= OP_DATA_NEWEST ? fake_conn_count() - 1 : conn_of(arg);
    fake_feed(conn, bytes, len);
}

static void run_record(driver *d, input *in, uint8_t code)
{
    int op = code & 15, arg = code >> 4;
    switch (op) {
    case OP_CLOCK:
        fake_advance_ms(clock_steps_ms[arg]);
        break;
    case OP_RECV:
        app_recv(d, arg + 1);
        break;
    case OP_SEND:
        app_send(d, in, arg);
        break;
    case OP_HANG_UP:
        fake_hang_up(conn_of(arg), (arg & 4) ? -ECONNRESET : ZL_EOF);
        break;
    case OP_ACCEPT:
        fake_accept();
        break;
    case OP_STALL:
        fake_stall_writes(arg & 1);
        break;
    case OP_REFUSE:
        fake_refuse_connects(arg & 1);
        break;
    case OP_TOPIC:
        app_topic(d, in, arg);
        break;
    default:
        data_record(in, op, arg);
        break;
    }
    run_loop(d);
}

static void open_monitor(driver *d, void *ctx)
{
    if (zlink_socket_monitor(d->socket, MONITOR_ENDPOINT, ZLINK_EVENT_ALL) != 0)
        return;
    d->monitor = zlink_socket(ctx, ZLINK_PAIR);
    if (d->monitor && zlink_connect(d->monitor, MONITOR_ENDPOINT) != 0) {
        zlink_close(d->monitor);
        d->monitor = NULL;
    }
}

static void run_input(const uint8_t *data, size_t size)
{
    input in = {.data = data + 2, .len = size - 2};
    driver d = {.type = socket_types[(data[0] & 0x3f) % TYPE_COUNT]};
    uint8_t opts = data[1];
    fake_reset();
    void *ctx = zlink_ctx_new();
    if (!ctx)
        abort();
    d.socket = zlink_socket(ctx, d.type);
    if (!d.socket)
        abort();
    apply_options(&d, opts);
    if (data[0] & 0x80) {
        (void)zlink_setsockopt(d.socket, ZLINK_PLAIN_USERNAME, "user", 4);
        (void)zlink_setsockopt(d.socket, ZLINK_PLAIN_PASSWORD, "pass", 4);
    } else if (data[0] & 0x40) {
        set_int(d.socket, ZLINK_PLAIN_SERVER, 1);
    }
    if (data[0] & 0x10)
        (void)zlink_setsockopt(d.socket, ZLINK_ZAP_DOMAIN, "fuzz", 4);
    if (data[0] & 0x20) {
        d.zap_handler = zlink_socket(ctx, ZLINK_REP);
        if (!d.zap_handler ||
            zlink_bind(d.zap_handler, "inproc://zeromq.zap.01") != 0)
            abort();
    }
    if (opts & OPT_MONITOR)
        open_monitor(&d, ctx);
    int rc = (opts & OPT_CONNECT) ? zlink_connect(d.socket, ENDPOINT)
                                  : zlink_bind(d.socket, ENDPOINT);
    if (rc != 0)
        abort();
    run_loop(&d);

    uint8_t code;
    while (take(&in, &code))
        run_record(&d, &in, code);

    /* Linger 0 or 100 ms of the fake clock, which free run jumps. */
    set_int(d.socket, ZLINK_LINGER, (data[0] / TYPE_COUNT) & 1 ? 100 : 0);
    zlink_close(d.socket);
    run_loop(&d);
    drain_monitor(&d);
    if (d.monitor)
        zlink_close(d.monitor);
    if (d.zap_handler)
        zlink_close(d.zap_handler);
    fake_free_run();
    /* libFuzzer's -timeout raises SIGALRM every timeout/2 + 1 s, which
     * interrupts the term's wait (EINTR, as libzmq's): it is called again,
     * as a libzmq program does, or the next input finds this one's loop. */
    while (zlink_ctx_term(ctx) != 0 && zlink_errno() == EINTR)
        ;
    for (int i = 0; i < FAKE_CONN_MAX; i++)
        if (d.checks[i].started)
            zl_decoder_destroy(&d.checks[i].decoder);
    fake_release();
    volatile unsigned sink = d.sink;
    (void)sink;
}

/* ---- seeds: valid sessions for every socket type, on both sides ---- */

typedef struct seed {
    uint8_t buf[8192];
    size_t len;
} seed;

static void put(seed *s, const void *data, size_t len)
{
    if (s->len + len > sizeof s->buf)
        abort();
    memcpy(s->buf + s->len, data, len);
    s->len += len;
}

static void put_op(seed *s, int op, int arg)
{
    uint8_t code = (uint8_t)(op | arg << 4);
    put(s, &code, 1);
}

/* Peer bytes for the newest connection, in records of up to 256 bytes. */
static void put_data(seed *s, const uint8_t *data, size_t len)
{
    while (len > 0) {
        size_t n = len < 256 ? len : 256;
        put_op(s, OP_DATA_NEWEST, 0);
        uint8_t len_byte = (uint8_t)(n - 1);
        put(s, &len_byte, 1);
        put(s, data, n);
        data += n;
        len -= n;
    }
}

static void put_frame(seed *s, uint8_t flags, const void *body, size_t size)
{
    uint8_t frame[ZL_FRAME_HEADER_MAX + 256];
    size_t n = zl_frame_header_encode(frame, flags, size);
    memcpy(frame + n, body, size);
    put_data(s, frame, n + size);
}

/* What a peer of type peer_type sends once it is ready. */
static void put_traffic(seed *s, int peer_type)
{
    static const uint8_t subscribe[] = "\x09SUBSCRIBEtopic";
    static const uint8_t ping[] = "\x04PING\x00\x0a";
    switch (peer_type) {
    case ZLINK_SUB:
    case ZLINK_XSUB:
        put_frame(s, ZL_FRAME_COMMAND, subscribe, sizeof subscribe - 1);
        put_frame(s, 0, "\x01other", 6);
        put_frame(s, 0, "\x00other", 6);
        break;
    case ZLINK_ROUTER:
        put_frame(s, ZL_FRAME_MORE, "", 0);
        put_frame(s, 0, "hello", 5);
        break;
    default:
        put_frame(s, ZL_FRAME_MORE, "topic", 5);
        put_frame(s, 0, "hello", 5);
        put_frame(s, 0, "topic2", 6);
        break;
    }
    put_frame(s, ZL_FRAME_COMMAND, ping, sizeof ping - 1);
}

static void write_seed(const char *dir, const char *name, const seed *s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(s->buf, 1, s->len, file) != s->len) {
        fprintf(stderr, "fuzz_connection: cannot write %s\n", path);
        exit(1);
    }
    fclose(file);
}

/* plain: our socket is a PLAIN client, and the peer a PLAIN server that
 * welcomes it. */
static void write_session_seed(const char *dir, int type_index, bool connect,
                               bool plain)
{
    seed s = {.len = 0};
    uint8_t head[2] = {(uint8_t)(type_index | (plain ? 0x80 : 0)),
                       (uint8_t)((connect ? OPT_CONNECT : 0) |
                                 (type_index == 2 ? OPT_TYPE_OPTION : 0))};
    put(&s, head, 2);
    if (!connect)
        put_op(&s, OP_ACCEPT, 0);
    uint8_t greeting[ZL_GREETING_SIZE];
    zl_greeting_encode(greeting, plain ? "PLAIN" : "NULL", plain);
    /* As libzmq sends it: 11 bytes, then the rest. */
    put_data(&s, greeting, 11);
    put_data(&s, greeting + 11, sizeof greeting - 11);
    if (plain) {
        uint8_t welcome[16];
        size_t len =
            zl_command_encode(welcome, sizeof welcome, "WELCOME", NULL, 0);
        put_data(&s, welcome, len);
    }
    uint8_t ready[256];
    size_t n =
        zl_ready_encode(ready, sizeof ready, peer_types[type_index], "peer", 4);
    put_data(&s, ready, n);
    put_traffic(&s, peer_types[type_index]);
    put_op(&s, OP_RECV, 7);
    put_op(&s, OP_SEND, 1);
    uint8_t size = 20;
    put(&s, &size, 1);
    put_op(&s, OP_CLOCK, 4);
    put_op(&s, OP_RECV, 3);
    put_op(&s, OP_HANG_UP, 0);
    put_op(&s, OP_CLOCK, 4);
    char name[64];
    snprintf(name, sizeof name, "session_%d_%s%s", type_index,
             connect ? "connect" : "bind", plain ? "_plain" : "");
    write_seed(dir, name, &s);
}

/* A bound ROUTER that is a PLAIN server, and a client's greeting and
 * HELLO: with no ZAP handler, the server refuses it. */
static void write_plain_server_seed(const char *dir)
{
    seed s = {.len = 0};
    uint8_t head[2] = {6 | 0x40, 0};
    put(&s, head, 2);
    put_op(&s, OP_ACCEPT, 0);
    uint8_t wire[ZL_GREETING_SIZE + 64];
    zl_greeting_encode(wire, "PLAIN", false);
    size_t len = ZL_GREETING_SIZE;
    len += zl_plain_hello_encode(wire + len, sizeof wire - len, "user", 4,
                                 "pass", 4);
    put_data(&s, wire, len);
    put_op(&s, OP_CLOCK, 4);
    write_seed(dir, "session_6_bind_plain_server", &s);
}

/* A bound ROUTER of the NULL mechanism with a ZAP_DOMAIN and a handler:
 * the client's READY comes before the handler is answered (at the RECV),
 * and waits for it. */
static void write_zap_null_seed(const char *dir)
{
    seed s = {.len = 0};
    uint8_t head[2] = {6 | 0x10 | 0x20, 0};
    put(&s, head, 2);
    put_op(&s, OP_ACCEPT, 0);
    uint8_t greeting[ZL_GREETING_SIZE];
    zl_greeting_encode(greeting, "NULL", false);
    put_data(&s, greeting, sizeof greeting);
    uint8_t ready[256];
    size_t n = zl_ready_encode(ready, sizeof ready, ZLINK_DEALER, "peer", 4);
    put_data(&s, ready, n);
    put_traffic(&s, ZLINK_DEALER);
    put_op(&s, OP_RECV, 3);
    put_op(&s, OP_CLOCK, 4);
    put_op(&s, OP_RECV, 3);
    put_op(&s, OP_HANG_UP, 0);
    put_op(&s, OP_CLOCK, 4);
    write_seed(dir, "session_6_bind_zap_null", &s);
}

static void write_seeds(const char *dir)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "fuzz_connection: cannot create %s\n", dir);
        exit(1);
    }
    for (int t = 0; t < TYPE_COUNT; t++) {
        write_session_seed(dir, t, false, false);
        write_session_seed(dir, t, true, false);
    }
    write_session_seed(dir, 5, true, true); /* a DEALER */
    write_zap_null_seed(dir);
    write_plain_server_seed(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("ZLINK_FUZZ_SEEDS");
    if (dir && *dir)
        write_seeds(dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    run_input(data, size);
    return 0;
}
