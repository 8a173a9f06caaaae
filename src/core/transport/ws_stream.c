/* ws_stream.c — the WebSocket filter: the upgrade, then ZMTP frames to and
 * from binary WebSocket messages. wslay parses the incoming frames; the
 * few bytes of an outgoing frame header are written here, so that a frame
 * is masked (as a client must) in the same pass that copies it. */
#include "ws_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <wslay/wslay.h>

#include "zlink.h"
#include "zmtp/zmtp.h"

/* One read from the lower stream. It also holds a whole upgrade request
 * (ZL_WS_HTTP_MAX) while that is parsed. */
#define RAW_CAP (64 * 1024)
/* One write to the lower stream: framed, masked output. */
#define WIRE_CAP (64 * 1024)
/* A data frame header: 2 bytes, an 8-byte length, a 4-byte mask key. */
#define WS_HEADER_MAX 14
#define CONTROL_MAX 125
/* A control frame at its largest, header included. */
#define CONTROL_FRAME_MAX (2 + 4 + CONTROL_MAX)

typedef enum phase {
    PHASE_UPGRADE,   /* the HTTP exchange */
    PHASE_ACCEPTING, /* a server writing its 101 */
    PHASE_REFUSING,  /* a server writing its refusal, then failing */
    PHASE_OPEN,      /* frames */
    PHASE_FAILED
} phase;

/* Where the ZMTP bytes the engine writes are, frame by frame. */
typedef enum out_state {
    OUT_ZMTP_HEADER, /* collecting a ZMTP frame's flags and size */
    OUT_WS_HEADER,   /* the WebSocket header for it is due */
    OUT_BODY         /* copying the frame's body */
} out_state;

typedef struct ws_stream {
    zl_stream base; /* first: the engine sees a zl_stream */
    zl_stream *lower;
    zl_loop *loop;
    zl_stream_deferred deferred;
    zl_timer free_timer;
    bool client;
    bool closing;
    int depth; /* callbacks of ours on the stack: no freeing under them */
    phase phase;
    zl_framing framing;
    int64_t max_msg_size;
    int failure_event;

    /* The upgrade. */
    zl_op *handshake_op;
    char key[ZL_WS_KEY_LEN + 1];
    char host[ZL_WS_FIELD_MAX];
    char path[ZL_WS_PATH_MAX];
    zl_ws_route_fn route;
    void *route_arg;

    /* The lower stream, and its own handshake (wss: TLS) before ours. */
    zl_op lower_handshake_op;
    bool lower_handshake_pending, lower_handshake_done;
    zl_op lower_read_op, lower_write_op;
    bool lower_read_pending, lower_write_pending, lower_read_probe;
    bool lower_readable; /* a probe said so: the next read is a real one */
    int lower_status;    /* ZL_EOF or an error once the lower stream ended */
    uint8_t *raw;        /* read from lower, not yet parsed; NULL when idle */
    size_t raw_pos, raw_end;
    uint8_t *wire; /* framed output being written; NULL when idle */
    size_t wire_len;
    zl_iovec wire_iov; /* a write's iovecs stay alive until it completes */

    /* Input: wslay's frames to the engine's ZMTP bytes. */
    wslay_frame_context_ptr wslay;
    bool in_frame;      /* inside a frame's payload */
    uint8_t frame_op;   /* its opcode */
    bool frame_fin;     /* it ends its message */
    uint64_t frame_len; /* its payload length */
    uint64_t frame_left;
    bool msg_active;     /* a data message has begun and not ended */
    bool msg_fragmented; /* it spans frames: reassembled first */
    bool msg_started;    /* its flags byte is behind us */
    uint8_t *assembly;   /* a fragmented message, flags byte first */
    size_t assembly_len, assembly_cap;
    bool assembly_handed; /* the body points into assembly */
    uint8_t control[CONTROL_MAX];
    size_t control_len;
    bool protocol_error;
    bool close_received;
    /* What the engine is owed next: a ZMTP header, then body bytes. */
    uint8_t hdr[ZL_FRAME_HEADER_MAX];
    size_t hdr_pos, hdr_len;
    const uint8_t *body;
    size_t body_len;

    /* The engine's read. */
    zl_op *read_op;
    zl_iovec read_iov[ZL_READ_IOV_MAX];
    int read_count;
    size_t read_total, read_done;
    int read_iov_index;
    size_t read_iov_offset;

    /* The engine's write. */
    zl_op *write_op;
    const zl_iovec *write_iov;
    int write_count, write_index;
    size_t write_offset, write_total;
    out_state out;
    uint8_t out_hdr[ZL_FRAME_HEADER_MAX];
    size_t out_hdr_have;
    uint64_t out_left;
    uint8_t mask_key[4];
    size_t mask_pos;
    uint64_t rng;

    /* Control frames we owe the peer. */
    bool pong_due;
    uint8_t pong[CONTROL_MAX];
    size_t pong_len;
    bool close_due;
    bool close_queued; /* in the wire being written */
    bool close_sent;   /* on the wire */
    uint8_t close_code[2];
} ws_stream;

static void pump_write(ws_stream *f, bool from_loop);
static void serve_read(ws_stream *f, bool from_loop);
static void lower_read(ws_stream *f);
static void upgrade_progress(ws_stream *f);

static ws_stream *ws_of(zl_stream *s)
{
    return (ws_stream *)s;
}

/* ---- completions ---- */

/* Completes one of the engine's ops: at once when we run from the loop
 * (a lower completion), deferred when inside the engine's own call. */
static void complete(ws_stream *f, zl_op **slot, int status, size_t bytes,
                     bool from_loop)
{
    zl_op *op = *slot;
    *slot = NULL;
    if (!op)
        return;
    if (from_loop)
        op->cb(op, status, bytes);
    else
        zl_stream_defer(&f->deferred, op, status, bytes);
}

static void destroy(ws_stream *f)
{
    zl_stream_deferred_stop(&f->deferred);
    zl_timer_stop(f->loop, &f->free_timer);
    if (f->wslay)
        wslay_frame_context_free(f->wslay);
    free(f->raw);
    free(f->wire);
    free(f->assembly);
    free(f);
}

/* A closed filter goes once no completion of the lower stream and none of
 * its deferred ones can still reach it. */
static void maybe_free(ws_stream *f)
{
    if (!f->closing || f->depth > 0 || f->lower_read_pending ||
        f->lower_write_pending || f->lower_handshake_pending)
        return;
    if (zl_stream_deferred_pending(&f->deferred)) {
        if (!zl_timer_active(&f->free_timer))
            zl_timer_start(f->loop, &f->free_timer, 0);
        return;
    }
    destroy(f);
}

static void on_free_timer(zl_timer *t)
{
    maybe_free(t->data);
}

/* ---- random numbers for keys and masks ---- */

/* Mask keys only have to be unpredictable to the scripts of a browser
 * page (RFC 6455 §10.3); a per-connection xorshift seeded from the OS is
 * that, without a syscall per frame. */
static uint32_t next_random(ws_stream *f)
{
    uint64_t x = f->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    f->rng = x;
    return (uint32_t)(x >> 16);
}

/* ---- the lower stream ---- */

static bool ensure_raw(ws_stream *f)
{
    if (!f->raw)
        f->raw = malloc(RAW_CAP);
    return f->raw != NULL;
}

static bool ensure_wire(ws_stream *f)
{
    if (!f->wire)
        f->wire = malloc(WIRE_CAP);
    return f->wire != NULL;
}

static void on_lower_read(zl_op *op, int status, size_t bytes)
{
    ws_stream *f = op->data;
    f->lower_read_pending = false;
    f->depth++;
    if (!f->closing) {
        bool probe = f->lower_read_probe;
        f->lower_read_probe = false;
        f->lower_readable = probe && status == 0;
        if (status != 0)
            f->lower_status = status;
        else if (!probe && bytes == 0)
            f->lower_status = ZL_EOF;
        else
            f->raw_end += bytes;
        if (f->phase == PHASE_UPGRADE)
            upgrade_progress(f);
        else if (f->phase == PHASE_OPEN)
            serve_read(f, true);
    }
    f->depth--;
    maybe_free(f);
}

/* Reads from the lower stream into raw; a probe when raw is empty and the
 * engine only probes too, so an idle connection holds no buffer. */
static void lower_read(ws_stream *f)
{
    if (f->lower_read_pending || f->closing || f->lower_status)
        return;
    if (f->raw_pos == f->raw_end) {
        f->raw_pos = f->raw_end = 0;
        if (f->phase == PHASE_OPEN && f->read_op && f->read_total == 0 &&
            !f->lower_readable) {
            free(f->raw);
            f->raw = NULL;
            f->lower_read_pending = f->lower_read_probe = true;
            zl_iovec none = {f->control, 0};
            zl_stream_readv(f->lower, &f->lower_read_op, &none, 1);
            return;
        }
    } else if (f->raw_pos > 0) {
        memmove(f->raw, f->raw + f->raw_pos, f->raw_end - f->raw_pos);
        f->raw_end -= f->raw_pos;
        f->raw_pos = 0;
    }
    if (!ensure_raw(f)) {
        f->lower_status = -ENOMEM;
        return;
    }
    if (f->raw_end == RAW_CAP)
        return; /* full: it is parsed before more is read */
    f->lower_read_pending = true;
    zl_iovec iov = {f->raw + f->raw_end, RAW_CAP - f->raw_end};
    zl_stream_readv(f->lower, &f->lower_read_op, &iov, 1);
}

static void on_lower_write(zl_op *op, int status, size_t bytes);

static void lower_write(ws_stream *f)
{
    f->lower_write_pending = true;
    f->wire_iov = (zl_iovec){f->wire, f->wire_len};
    zl_stream_write(f->lower, &f->lower_write_op, &f->wire_iov, 1);
}

/* ---- the upgrade ---- */

static void fail_handshake(ws_stream *f, bool protocol)
{
    f->phase = PHASE_FAILED;
    if (protocol)
        f->failure_event = ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL;
    complete(f, &f->handshake_op, -EPROTO, 0, true);
}

static void start_wire_text(ws_stream *f, const char *text, size_t len)
{
    if (!len || !ensure_wire(f)) {
        fail_handshake(f, false);
        return;
    }
    memcpy(f->wire, text, len);
    f->wire_len = len;
    lower_write(f);
}

static void refuse(ws_stream *f, int status)
{
    char text[256];
    f->phase = PHASE_REFUSING;
    start_wire_text(f, text, zl_ws_response_refuse(text, sizeof text, status));
}

static void server_upgrade(ws_stream *f)
{
    zl_ws_request request;
    int r = zl_ws_request_parse(f->raw + f->raw_pos, f->raw_end - f->raw_pos,
                                &request);
    if (r == 0) {
        if (f->lower_status)
            fail_handshake(f, false); /* gone before asking */
        else
            lower_read(f);
        return;
    }
    if (r < 0) {
        refuse(f, -r);
        return;
    }
    f->raw_pos += (size_t)r;
    int status = f->route ? f->route(f->route_arg, &f->base, &request) : 404;
    if (status != 0) {
        refuse(f, status);
        return;
    }
    f->framing = request.framing;
    snprintf(f->path, sizeof f->path, "%s", request.path);
    char text[512];
    f->phase = PHASE_ACCEPTING;
    start_wire_text(
        f, text,
        zl_ws_response_accept(text, sizeof text, request.key, request.framing));
}

static void client_upgrade(ws_stream *f)
{
    int r = zl_ws_response_parse(f->raw + f->raw_pos, f->raw_end - f->raw_pos,
                                 f->key, &f->framing);
    if (r == 0) {
        if (f->lower_status)
            fail_handshake(f, false);
        else
            lower_read(f);
        return;
    }
    if (r < 0) {
        fail_handshake(f, true);
        return;
    }
    /* Frames the server sent right behind its answer stay in raw. */
    f->raw_pos += (size_t)r;
    f->phase = PHASE_OPEN;
    complete(f, &f->handshake_op, 0, 0, true);
}

static void upgrade_progress(ws_stream *f)
{
    if (f->client)
        client_upgrade(f);
    else
        server_upgrade(f);
}

static void on_lower_write(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    ws_stream *f = op->data;
    f->lower_write_pending = false;
    f->wire_len = 0;
    f->depth++;
    if (!f->closing) {
        if (status != 0 && !f->lower_status)
            f->lower_status = status;
        switch (f->phase) {
        case PHASE_ACCEPTING:
            if (status != 0) {
                fail_handshake(f, false);
                break;
            }
            f->phase = PHASE_OPEN;
            complete(f, &f->handshake_op, 0, 0, true);
            break;
        case PHASE_REFUSING:
            fail_handshake(f, true);
            break;
        case PHASE_OPEN:
            if (f->close_queued && status == 0)
                f->close_sent = true;
            pump_write(f, true);
            /* A peer's close is answered; now the engine hears of it. */
            if (f->close_sent)
                serve_read(f, true);
            break;
        default:
            break;
        }
    }
    f->depth--;
    maybe_free(f);
}

/* ---- input: frames to ZMTP bytes ---- */

static ssize_t on_wslay_recv(uint8_t *buf, size_t len, int flags, void *arg)
{
    (void)flags;
    ws_stream *f = arg;
    size_t avail = f->raw_end - f->raw_pos;
    size_t n = avail < len ? avail : len;
    if (n == 0)
        return 0; /* wslay: want read */
    memcpy(buf, f->raw + f->raw_pos, n);
    f->raw_pos += n;
    return (ssize_t)n;
}

static ssize_t on_wslay_send(const uint8_t *data, size_t len, int flags,
                             void *arg)
{
    (void)data;
    (void)len;
    (void)flags;
    (void)arg;
    return -1; /* frames are written by write_ws_header */
}

static int on_wslay_genmask(uint8_t *buf, size_t len, void *arg)
{
    (void)buf;
    (void)len;
    (void)arg;
    return -1;
}

static bool protocol_fail(ws_stream *f)
{
    f->protocol_error = true;
    f->failure_event = ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL;
    return false;
}

/* The ZMTP header for a message of size bytes after its flags byte. */
static void set_zmtp_header(ws_stream *f, uint8_t ws_flags, uint64_t size)
{
    uint8_t flags = 0;
    if (ws_flags & ZL_WS_FLAG_MORE)
        flags |= ZL_FRAME_MORE;
    if (ws_flags & (ZL_WS_FLAG_COMMAND | ZL_WS_FLAG_ZMTP_COMMAND))
        flags |= ZL_FRAME_COMMAND;
    f->hdr_len = zl_frame_header_encode(f->hdr, flags, size);
    f->hdr_pos = 0;
}

static bool too_large(const ws_stream *f, uint64_t payload)
{
    /* The payload is the flags byte and the body MAXMSGSIZE limits. */
    return f->max_msg_size >= 0 && payload > (uint64_t)f->max_msg_size + 1;
}

/* A new frame's header, as wslay reports it with its first bytes. */
static bool frame_begins(ws_stream *f, const struct wslay_frame_iocb *io)
{
    if (io->rsv != 0 || io->mask != (f->client ? 0 : 1))
        return protocol_fail(f);
    f->in_frame = true;
    f->frame_op = io->opcode;
    f->frame_fin = io->fin;
    f->frame_len = io->payload_length;
    f->frame_left = io->payload_length;
    switch (io->opcode) {
    case WSLAY_BINARY_FRAME:
        if (f->msg_active)
            return protocol_fail(f); /* a message inside a message */
        if (io->payload_length == 0 || too_large(f, io->payload_length))
            return protocol_fail(f);
        f->msg_active = true;
        f->msg_fragmented = !io->fin;
        f->msg_started = false;
        return true;
    case WSLAY_CONTINUATION_FRAME:
        if (!f->msg_active || !f->msg_fragmented ||
            too_large(f, f->assembly_len + io->payload_length))
            return protocol_fail(f);
        return true;
    case WSLAY_CONNECTION_CLOSE:
    case WSLAY_PING:
    case WSLAY_PONG:
        f->control_len = 0;
        return true;
    default: /* text, reserved opcodes */
        return protocol_fail(f);
    }
}

static bool assemble(ws_stream *f, const uint8_t *data, size_t len)
{
    if (f->assembly_len + len > f->assembly_cap) {
        /* Grown as the bytes arrive, never on the strength of a length. */
        size_t cap = f->assembly_cap ? f->assembly_cap : 4096;
        while (cap < f->assembly_len + len)
            cap *= 2;
        uint8_t *grown = realloc(f->assembly, cap);
        if (!grown)
            return protocol_fail(f);
        f->assembly = grown;
        f->assembly_cap = cap;
    }
    memcpy(f->assembly + f->assembly_len, data, len);
    f->assembly_len += len;
    return true;
}

static void on_control(ws_stream *f)
{
    switch (f->frame_op) {
    case WSLAY_PING:
        /* Only the latest ping needs its pong (RFC 6455 §5.5.3). */
        memcpy(f->pong, f->control, f->control_len);
        f->pong_len = f->control_len;
        f->pong_due = true;
        break;
    case WSLAY_CONNECTION_CLOSE:
        f->close_received = true;
        if (!f->close_queued) {
            f->close_due = true;
            /* Echo the status code, as RFC 6455 §5.5.1 suggests. */
            f->close_code[0] = f->control_len >= 2 ? f->control[0] : 0x03;
            f->close_code[1] = f->control_len >= 2 ? f->control[1] : 0xe8;
        }
        break;
    default: /* a pong: nothing to do */
        break;
    }
}

/* Takes one piece of a frame from wslay. false when nothing more can be
 * taken now: input is short, the connection closes, or it failed. */
static bool decode_one(ws_stream *f)
{
    if (f->protocol_error || f->close_received)
        return false;
    struct wslay_frame_iocb io;
    memset(&io, 0, sizeof io);
    ssize_t r = wslay_frame_recv(f->wslay, &io);
    if (r == WSLAY_ERR_WANT_READ)
        return false;
    if (r < 0)
        return protocol_fail(f); /* a 2^63 length, a long control frame */
    if (!f->in_frame && !frame_begins(f, &io))
        return false;
    f->frame_left -= io.data_length;
    bool frame_end = f->frame_left == 0;
    if (frame_end)
        f->in_frame = false;
    bool message_end = frame_end && f->frame_fin;
    const uint8_t *data = io.data;
    size_t len = io.data_length;
    if (wslay_is_ctrl_frame(f->frame_op)) {
        memcpy(f->control + f->control_len, data, len);
        f->control_len += len;
        if (frame_end)
            on_control(f); /* answered by serve_read's pump_write */
        return true;
    }
    if (f->msg_fragmented) {
        if (!assemble(f, data, len))
            return false;
        if (!message_end)
            return true;
        if (f->assembly_len == 0)
            return protocol_fail(f);
        set_zmtp_header(f, f->assembly[0], f->assembly_len - 1);
        f->body = f->assembly + 1;
        f->body_len = f->assembly_len - 1;
        f->assembly_handed = true;
        f->msg_active = false;
        return true;
    }
    if (!f->msg_started && len > 0) {
        set_zmtp_header(f, data[0], f->frame_len - 1);
        f->msg_started = true;
        data++;
        len--;
    }
    f->body = data;
    f->body_len = len;
    if (message_end)
        f->msg_active = false;
    return true;
}

static bool engine_owed(const ws_stream *f)
{
    return f->hdr_pos < f->hdr_len || f->body_len > 0;
}

/* Copies into the engine's read iovecs. */
static void put(ws_stream *f, const uint8_t **src, size_t *len)
{
    while (*len > 0 && f->read_iov_index < f->read_count) {
        zl_iovec *iov = &f->read_iov[f->read_iov_index];
        size_t room = iov->len - f->read_iov_offset;
        size_t n = *len < room ? *len : room;
        memcpy((uint8_t *)iov->base + f->read_iov_offset, *src, n);
        f->read_iov_offset += n;
        f->read_done += n;
        *src += n;
        *len -= n;
        if (f->read_iov_offset == iov->len) {
            f->read_iov_index++;
            f->read_iov_offset = 0;
        }
    }
}

/* Hands the engine what is owed, decoding more frames while its read has
 * room; for a probe, decodes until something is owed. */
static void fill(ws_stream *f)
{
    for (;;) {
        if (f->read_total == 0) {
            if (engine_owed(f) || !decode_one(f))
                return;
            continue;
        }
        if (f->read_done == f->read_total)
            return;
        if (f->hdr_pos < f->hdr_len) {
            const uint8_t *src = f->hdr + f->hdr_pos;
            size_t len = f->hdr_len - f->hdr_pos;
            put(f, &src, &len);
            f->hdr_pos = f->hdr_len - len;
            continue;
        }
        if (f->body_len > 0) {
            put(f, &f->body, &f->body_len);
            continue;
        }
        if (f->assembly_handed) {
            /* The reassembled message is out: its memory goes too. */
            free(f->assembly);
            f->assembly = NULL;
            f->assembly_len = f->assembly_cap = 0;
            f->assembly_handed = false;
        }
        if (!decode_one(f))
            return;
    }
}

/* Gives the engine's pending read whatever can be had, or waits for the
 * lower stream. */
static void serve_read(ws_stream *f, bool from_loop)
{
    if (!f->read_op)
        return;
    fill(f);
    if (f->pong_due || f->close_due) {
        pump_write(f, from_loop);
        if (f->closing)
            return;
    }
    if (f->protocol_error) {
        complete(f, &f->read_op, -EPROTO, 0, from_loop);
        return;
    }
    if (f->read_done > 0 || (f->read_total == 0 && engine_owed(f))) {
        complete(f, &f->read_op, 0, f->read_done, from_loop);
        return;
    }
    if (f->close_received) {
        /* Once our answer is out (or cannot go), the engine hears EOF. */
        if (f->close_sent || f->lower_status)
            complete(f, &f->read_op, ZL_EOF, 0, from_loop);
        return;
    }
    if (f->lower_status) {
        complete(f, &f->read_op, f->lower_status, 0, from_loop);
        return;
    }
    lower_read(f);
}

/* ---- output: ZMTP bytes to frames ---- */

static void mask_copy(ws_stream *f, uint8_t *dst, const uint8_t *src, size_t n)
{
    if (!f->client) {
        memcpy(dst, src, n);
        return;
    }
    size_t i = 0, pos = f->mask_pos;
    while (i < n && (pos & 3)) {
        dst[i] = src[i] ^ f->mask_key[pos & 3];
        i++;
        pos++;
    }
    uint8_t key8[8];
    for (int k = 0; k < 8; k++)
        key8[k] = f->mask_key[k & 3];
    uint64_t key;
    memcpy(&key, key8, sizeof key);
    for (; i + 8 <= n; i += 8, pos += 8) {
        uint64_t v;
        memcpy(&v, src + i, sizeof v);
        v ^= key;
        memcpy(dst + i, &v, sizeof v);
    }
    for (; i < n; i++, pos++)
        dst[i] = src[i] ^ f->mask_key[pos & 3];
    f->mask_pos = pos;
}

/* Writes a frame header into the wire and starts its mask. */
static void write_ws_header(ws_stream *f, uint8_t opcode, uint64_t payload)
{
    uint8_t *p = f->wire + f->wire_len;
    size_t n = 0;
    p[n++] = (uint8_t)(0x80 | opcode);
    uint8_t mask_bit = f->client ? 0x80 : 0;
    if (payload < 126) {
        p[n++] = (uint8_t)(mask_bit | payload);
    } else if (payload <= 0xffff) {
        p[n++] = mask_bit | 126;
        p[n++] = (uint8_t)(payload >> 8);
        p[n++] = (uint8_t)payload;
    } else {
        p[n++] = mask_bit | 127;
        for (int i = 7; i >= 0; i--)
            p[n++] = (uint8_t)(payload >> (8 * i));
    }
    if (f->client) {
        uint32_t key = next_random(f);
        memcpy(f->mask_key, &key, 4);
        memcpy(p + n, f->mask_key, 4);
        n += 4;
    }
    f->mask_pos = 0;
    f->wire_len += n;
}

static void write_control(ws_stream *f, uint8_t opcode, const uint8_t *data,
                          size_t len)
{
    write_ws_header(f, opcode, len);
    mask_copy(f, f->wire + f->wire_len, data, len);
    f->wire_len += len;
}

/* Control frames go between data frames, never inside one. */
static void write_controls(ws_stream *f)
{
    if (f->out != OUT_ZMTP_HEADER || f->out_hdr_have != 0 ||
        WIRE_CAP - f->wire_len < 2 * CONTROL_FRAME_MAX)
        return;
    if (f->pong_due) {
        write_control(f, WSLAY_PONG, f->pong, f->pong_len);
        f->pong_due = false;
    }
    if (f->close_due) {
        write_control(f, WSLAY_CONNECTION_CLOSE, f->close_code, 2);
        f->close_due = false;
        f->close_queued = true;
    }
}

static size_t zmtp_header_need(const ws_stream *f)
{
    return f->out_hdr_have > 0 && (f->out_hdr[0] & ZL_FRAME_LONG)
               ? ZL_FRAME_HEADER_MAX
               : 2;
}

/* Turns the engine's bytes into frames in the wire, until it is full or
 * they are all taken. */
static void transform(ws_stream *f)
{
    while (f->write_op) {
        if (f->out == OUT_WS_HEADER) {
            /* Needs no input: an empty body ends its frame here. */
            if (WIRE_CAP - f->wire_len < WS_HEADER_MAX + 1)
                return;
            write_ws_header(f, WSLAY_BINARY_FRAME, f->out_left + 1);
            uint8_t flags = 0;
            if (f->out_hdr[0] & ZL_FRAME_MORE)
                flags |= ZL_WS_FLAG_MORE;
            if (f->out_hdr[0] & ZL_FRAME_COMMAND)
                flags |= ZL_WS_FLAG_COMMAND;
            mask_copy(f, f->wire + f->wire_len, &flags, 1);
            f->wire_len++;
            f->out = OUT_BODY;
        }
        if (f->out == OUT_BODY && f->out_left == 0) {
            f->out = OUT_ZMTP_HEADER;
            f->out_hdr_have = 0;
            write_controls(f);
        }
        if (f->write_index >= f->write_count)
            return;
        const zl_iovec *iov = &f->write_iov[f->write_index];
        const uint8_t *src = (const uint8_t *)iov->base + f->write_offset;
        size_t avail = iov->len - f->write_offset;
        if (avail == 0) {
            f->write_index++;
            f->write_offset = 0;
            continue;
        }
        if (f->out == OUT_ZMTP_HEADER) {
            f->out_hdr[f->out_hdr_have++] = *src;
            f->write_offset++;
            if (f->out_hdr_have < zmtp_header_need(f))
                continue;
            uint64_t size = 0;
            for (size_t i = 1; i < f->out_hdr_have; i++)
                size = size << 8 | f->out_hdr[i];
            f->out_left = size;
            f->out = OUT_WS_HEADER;
            continue;
        }
        size_t room = WIRE_CAP - f->wire_len;
        size_t n = avail < room ? avail : room;
        if (n > f->out_left)
            n = (size_t)f->out_left;
        if (n == 0)
            return; /* the wire is full */
        mask_copy(f, f->wire + f->wire_len, src, n);
        f->wire_len += n;
        f->write_offset += n;
        f->out_left -= n;
    }
}

static bool write_all_taken(const ws_stream *f)
{
    return f->write_op && f->write_index >= f->write_count &&
           f->out == OUT_ZMTP_HEADER && f->out_hdr_have == 0;
}

/* Starts the next lower write: control frames due, then the engine's
 * bytes; completes the engine's write once all of it is on the wire. */
static void pump_write(ws_stream *f, bool from_loop)
{
    if (f->lower_write_pending || f->closing || f->phase != PHASE_OPEN)
        return;
    if (f->lower_status) {
        complete(f, &f->write_op, f->lower_status, 0, from_loop);
        return;
    }
    if (write_all_taken(f)) {
        /* The last of its bytes went with the write that just ended. Its
         * callback may write again, or close us. */
        complete(f, &f->write_op, 0, f->write_total, from_loop);
        if (f->lower_write_pending || f->closing)
            return;
    }
    if (!f->write_op && !f->pong_due && !f->close_due) {
        free(f->wire);
        f->wire = NULL;
        return;
    }
    if (!ensure_wire(f)) {
        complete(f, &f->write_op, -ENOMEM, 0, from_loop);
        return;
    }
    f->wire_len = 0;
    write_controls(f);
    transform(f);
    if (f->wire_len > 0)
        lower_write(f);
}

/* ---- the stream's ops ---- */

/* The upgrade itself, once the lower stream is ready. */
static void start_upgrade(ws_stream *f)
{
    if (f->client) {
        char text[1024];
        size_t n =
            zl_ws_request_build(text, sizeof text, f->host, f->path, f->key);
        if (!n || !ensure_wire(f)) {
            complete(f, &f->handshake_op, -ENOMEM, 0, false);
            return;
        }
        memcpy(f->wire, text, n);
        f->wire_len = n;
        lower_write(f);
    }
    lower_read(f);
}

static void on_lower_handshake(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    ws_stream *f = op->data;
    f->lower_handshake_pending = false;
    if (f->closing) {
        maybe_free(f);
        return;
    }
    if (status != 0) {
        /* ws_failure gives the lower stream's reason. */
        complete(f, &f->handshake_op, status, 0, false);
        return;
    }
    f->lower_handshake_done = true;
    start_upgrade(f);
}

static void ws_handshake(zl_stream *s, zl_op *op)
{
    ws_stream *f = ws_of(s);
    if (f->phase == PHASE_OPEN) {
        /* A server stream the listener upgraded before handing it on. */
        zl_stream_defer(&f->deferred, op, 0, 0);
        return;
    }
    f->handshake_op = op;
    /* wss: TLS first, then the upgrade inside it. */
    if (!f->lower_handshake_done &&
        zl_stream_handshake(f->lower, &f->lower_handshake_op)) {
        f->lower_handshake_pending = true;
        return;
    }
    f->lower_handshake_done = true;
    start_upgrade(f);
}

static void ws_readv(zl_stream *s, zl_op *op, const zl_iovec *iov, int n)
{
    ws_stream *f = ws_of(s);
    f->read_op = op;
    f->read_count = n;
    f->read_total = 0;
    for (int i = 0; i < n; i++) {
        f->read_iov[i] = iov[i];
        f->read_total += iov[i].len;
    }
    f->read_done = 0;
    f->read_iov_index = 0;
    f->read_iov_offset = 0;
    serve_read(f, false);
}

static void ws_write(zl_stream *s, zl_op *op, const zl_iovec *iov, int n)
{
    ws_stream *f = ws_of(s);
    f->write_op = op;
    f->write_iov = iov;
    f->write_count = n;
    f->write_index = 0;
    f->write_offset = 0;
    f->write_total = 0;
    for (int i = 0; i < n; i++)
        f->write_total += iov[i].len;
    pump_write(f, false);
}

static void ws_close(zl_stream *s)
{
    ws_stream *f = ws_of(s);
    f->closing = true;
    complete(f, &f->handshake_op, ZL_ECANCELED, 0, false);
    complete(f, &f->read_op, ZL_ECANCELED, 0, false);
    complete(f, &f->write_op, ZL_ECANCELED, 0, false);
    /* The lower stream's cancelled completions come back to our ops. */
    zl_stream_close(f->lower);
    f->lower = NULL;
    maybe_free(f);
}

static zl_framing ws_framing(const zl_stream *s)
{
    return ((const ws_stream *)s)->framing;
}

static int ws_failure(const zl_stream *s, uint64_t *value)
{
    const ws_stream *f = (const ws_stream *)s;
    if (!f->failure_event)
        return f->lower ? zl_stream_failure(f->lower, value) : 0;
    *value = ZLINK_PROTOCOL_ERROR_WS_UNSPECIFIED;
    return f->failure_event;
}

static const zl_stream_ops ws_ops = {
    .handshake = ws_handshake,
    .readv = ws_readv,
    .write = ws_write,
    .close = ws_close,
    .framing = ws_framing,
    .failure = ws_failure,
};

static ws_stream *ws_new(zl_loop *loop, zl_stream *lower, bool client)
{
    ws_stream *f = calloc(1, sizeof *f);
    if (!f) {
        errno = ENOMEM;
        return NULL;
    }
    struct wslay_frame_callbacks callbacks = {on_wslay_send, on_wslay_recv,
                                              on_wslay_genmask};
    if (wslay_frame_context_init(&f->wslay, &callbacks, f) != 0 ||
        uv_random(NULL, NULL, &f->rng, sizeof f->rng, 0, NULL) != 0) {
        if (f->wslay)
            wslay_frame_context_free(f->wslay);
        free(f);
        errno = ENOMEM;
        return NULL;
    }
    f->rng |= 1; /* xorshift never leaves 0 */
    f->base.ops = &ws_ops;
    f->base.handle = lower->handle;
    f->lower = lower;
    f->loop = loop;
    f->client = client;
    f->max_msg_size = -1;
    f->framing = ZL_FRAMING_ZWS_NULL;
    zl_stream_deferred_init(&f->deferred, loop);
    f->free_timer.cb = on_free_timer;
    f->free_timer.data = f;
    f->lower_handshake_op.cb = on_lower_handshake;
    f->lower_handshake_op.data = f;
    f->lower_read_op.cb = on_lower_read;
    f->lower_read_op.data = f;
    f->lower_write_op.cb = on_lower_write;
    f->lower_write_op.data = f;
    return f;
}

zl_stream *zl_ws_stream_create_client(zl_loop *loop, zl_stream *lower,
                                      const char *host, const char *path,
                                      const zl_options *options)
{
    if (strlen(host) >= ZL_WS_FIELD_MAX || strlen(path) >= ZL_WS_PATH_MAX) {
        errno = EINVAL;
        return NULL;
    }
    ws_stream *f = ws_new(loop, lower, true);
    if (!f)
        return NULL;
    if (zl_ws_key_generate(f->key) != 0) {
        destroy(f);
        errno = ENOMEM;
        return NULL;
    }
    snprintf(f->host, sizeof f->host, "%s", host);
    snprintf(f->path, sizeof f->path, "%s", path);
    f->max_msg_size = options->maxmsgsize;
    return &f->base;
}

zl_stream *zl_ws_stream_create_server(zl_loop *loop, zl_stream *lower,
                                      zl_ws_route_fn route, void *route_arg)
{
    ws_stream *f = ws_new(loop, lower, false);
    if (!f)
        return NULL;
    f->route = route;
    f->route_arg = route_arg;
    return &f->base;
}

void zl_ws_stream_set_max_msg(zl_stream *ws, int64_t max_msg_size)
{
    ws_of(ws)->max_msg_size = max_msg_size;
}

const char *zl_ws_stream_path(const zl_stream *ws)
{
    return ((const ws_stream *)ws)->path;
}

int zl_ws_endpoint_split(const char *rest, char *hostport, size_t hostport_cap,
                         char *path, size_t path_cap)
{
    /* An IPv6 literal's brackets may hold no '/', but skip them anyway. */
    const char *from = rest;
    if (rest[0] == '[') {
        const char *close = strchr(rest, ']');
        if (close)
            from = close;
    }
    const char *slash = strchr(from, '/');
    size_t host_len = slash ? (size_t)(slash - rest) : strlen(rest);
    const char *p = slash ? slash : "/";
    if (host_len == 0 || host_len >= hostport_cap || strlen(p) >= path_cap ||
        strlen(p) >= ZL_WS_PATH_MAX) {
        errno = EINVAL;
        return -1;
    }
    memcpy(hostport, rest, host_len);
    hostport[host_len] = '\0';
    snprintf(path, path_cap, "%s", p);
    return 0;
}
