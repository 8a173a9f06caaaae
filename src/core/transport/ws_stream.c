/* ws_stream.c — the WebSocket filter: its life, the lower stream under it,
 * and the engine's ops, moving bytes between the engine, the frame decoder
 * and encoder (ws_decoder.c, ws_encoder.c) and the lower stream once the
 * upgrade (ws_upgrade.c) is done. */
#include "ws_stream_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "zlink.h"
#include "zmtp/zmtp.h"

static void pump_write(ws_stream *f, bool from_loop);
static void serve_read(ws_stream *f, bool from_loop);

/* ---- completions ---- */

/* Completes one of the engine's ops: at once when we run from the loop
 * (a lower completion), deferred when inside the engine's own call. */
void zl_ws_complete(ws_stream *f, zl_op **slot, int status, size_t bytes,
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
    zl_ws_decoder_free(&f->dec);
    free(f->in.buf);
    free(f->wire);
    free(f);
}

/* A closed filter goes once no completion of the lower stream and none of
 * its deferred ones can still reach it. */
void zl_ws_maybe_free(ws_stream *f)
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
    zl_ws_maybe_free(t->data);
}

/* ---- the lower stream ---- */

static bool ensure_raw(ws_stream *f)
{
    if (!f->in.buf)
        f->in.buf = malloc(ZL_WS_RAW_CAP);
    return f->in.buf != NULL;
}

/* A wire of at least want bytes (within its bounds); only while it holds
 * nothing. */
static bool size_wire(ws_stream *f, size_t want)
{
    if (want < ZL_WS_WIRE_MIN)
        want = ZL_WS_WIRE_MIN;
    if (want > ZL_WS_WIRE_MAX)
        want = ZL_WS_WIRE_MAX;
    if (f->wire && f->wire_cap >= want)
        return true;
    free(f->wire);
    f->wire = malloc(want);
    f->wire_cap = f->wire ? want : 0;
    return f->wire != NULL;
}

bool zl_ws_ensure_wire(ws_stream *f)
{
    return size_wire(f, ZL_WS_WIRE_MIN);
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
            f->in.end += bytes;
        if (f->phase == PHASE_UPGRADE)
            zl_ws_upgrade_progress(f);
        else if (f->phase == PHASE_OPEN)
            serve_read(f, true);
    }
    f->depth--;
    zl_ws_maybe_free(f);
}

/* Reads from the lower stream into in; a probe when it is empty and the
 * engine only probes too, so an idle connection holds no buffer. */
void zl_ws_lower_read(ws_stream *f)
{
    if (f->lower_read_pending || f->closing || f->lower_status)
        return;
    if (f->in.pos == f->in.end) {
        f->in.pos = f->in.end = 0;
        if (f->phase == PHASE_OPEN && f->read_op && f->read.total == 0 &&
            !f->lower_readable) {
            free(f->in.buf);
            f->in.buf = NULL;
            f->lower_read_pending = f->lower_read_probe = true;
            zl_iovec none = {f->pong, 0};
            zl_stream_readv(f->lower, &f->lower_read_op, &none, 1);
            return;
        }
    } else if (f->in.pos > 0) {
        memmove(f->in.buf, f->in.buf + f->in.pos, f->in.end - f->in.pos);
        f->in.end -= f->in.pos;
        f->in.pos = 0;
    }
    if (!ensure_raw(f)) {
        f->lower_status = -ENOMEM;
        return;
    }
    if (f->in.end == ZL_WS_RAW_CAP)
        return; /* full: it is parsed before more is read */
    f->lower_read_pending = true;
    zl_iovec iov = {f->in.buf + f->in.end, ZL_WS_RAW_CAP - f->in.end};
    zl_stream_readv(f->lower, &f->lower_read_op, &iov, 1);
}

static void on_lower_write(zl_op *op, int status, size_t bytes);

void zl_ws_lower_write(ws_stream *f)
{
    f->lower_write_pending = true;
    f->wire_iov = (zl_iovec){f->wire, f->wire_len};
    zl_stream_write(f->lower, &f->lower_write_op, &f->wire_iov, 1);
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
                zl_ws_upgrade_fail(f, false);
                break;
            }
            f->phase = PHASE_OPEN;
            zl_ws_complete(f, &f->handshake_op, 0, 0, true);
            break;
        case PHASE_REFUSING:
            zl_ws_upgrade_fail(f, true);
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
    zl_ws_maybe_free(f);
}

/* ---- input: frames to ZMTP bytes ---- */

/* Takes over what the decoder collected for us to answer: the latest
 * ping's pong, and a close, echoed unless ours is already going. */
static void take_controls(ws_stream *f)
{
    zl_ws_decoder *d = &f->dec;
    if (d->ping_due) {
        memcpy(f->pong, d->ping, d->ping_len);
        f->pong_len = d->ping_len;
        f->pong_due = true;
        d->ping_due = false;
    }
    if (d->close_received && !f->close_taken) {
        f->close_taken = true;
        if (!f->close_queued) {
            f->close_due = true;
            memcpy(f->close_code, d->close_code, 2);
        }
    }
}

/* Gives the engine's pending read whatever can be had, or waits for the
 * lower stream. */
static void serve_read(ws_stream *f, bool from_loop)
{
    if (!f->read_op)
        return;
    zl_ws_decoder_fill(&f->dec, &f->read);
    take_controls(f);
    if (f->pong_due || f->close_due) {
        pump_write(f, from_loop);
        if (f->closing)
            return;
    }
    /* What came before a bad frame (an oversized one, say) is the peer's
     * good messages: the engine takes them first, and the next read fails,
     * as over tcp. */
    if (f->read.done > 0 ||
        (f->read.total == 0 && zl_ws_decoder_owed(&f->dec))) {
        zl_ws_complete(f, &f->read_op, 0, f->read.done, from_loop);
        return;
    }
    if (f->dec.protocol_error) {
        zl_ws_complete(f, &f->read_op, -EPROTO, 0, from_loop);
        return;
    }
    if (f->dec.close_received) {
        /* Once our answer is out (or cannot go), the engine hears EOF. */
        if (f->close_sent || f->lower_status)
            zl_ws_complete(f, &f->read_op, ZL_EOF, 0, from_loop);
        return;
    }
    if (f->lower_status) {
        zl_ws_complete(f, &f->read_op, f->lower_status, 0, from_loop);
        return;
    }
    zl_ws_lower_read(f);
}

/* ---- output: ZMTP bytes to frames ---- */

static void write_control(ws_stream *f, uint8_t opcode, const uint8_t *data,
                          size_t len)
{
    f->wire_len += zl_ws_encoder_control(&f->enc, f->wire + f->wire_len, opcode,
                                         data, len);
}

/* Control frames go between data frames, never inside one. */
static void write_controls(ws_stream *f)
{
    if (!zl_ws_encoder_between_frames(&f->enc) ||
        f->wire_cap - f->wire_len < 2 * ZL_WS_CONTROL_FRAME_MAX)
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

/* Turns the engine's bytes into frames in the wire, until it is full or
 * they are all taken; control frames due go in at each frame's end. */
static void transform(ws_stream *f)
{
    while (f->write_op && zl_ws_encoder_encode(&f->enc, f->wire, &f->wire_len,
                                               f->wire_cap, &f->write))
        write_controls(f);
}

static bool write_all_taken(const ws_stream *f)
{
    return f->write_op && f->write.index >= f->write.count &&
           zl_ws_encoder_between_frames(&f->enc);
}

/* Room for the engine's write once framed: each frame's header outgrows
 * its ZMTP one by a few bytes (an eighth more covers bodies down to 64 B;
 * smaller ones may take a second write), and the control frames that may
 * go between frames. */
static size_t wire_wanted(const ws_stream *f)
{
    size_t total = f->write_op ? f->write.total : 0;
    return total + total / 8 + 2 * ZL_WS_CONTROL_FRAME_MAX + ZL_WS_HEADER_MAX +
           1;
}

/* Starts the next lower write: control frames due, then the engine's
 * bytes; completes the engine's write once all of it is on the wire. */
static void pump_write(ws_stream *f, bool from_loop)
{
    if (f->lower_write_pending || f->closing || f->phase != PHASE_OPEN)
        return;
    if (f->lower_status) {
        zl_ws_complete(f, &f->write_op, f->lower_status, 0, from_loop);
        return;
    }
    if (write_all_taken(f)) {
        /* The last of its bytes went with the write that just ended. Its
         * callback may write again, or close us. */
        zl_ws_complete(f, &f->write_op, 0, f->write.total, from_loop);
        if (f->lower_write_pending || f->closing)
            return;
    }
    if (!f->write_op && !f->pong_due && !f->close_due) {
        free(f->wire);
        f->wire = NULL;
        f->wire_cap = 0;
        return;
    }
    if (!size_wire(f, wire_wanted(f))) {
        zl_ws_complete(f, &f->write_op, -ENOMEM, 0, from_loop);
        return;
    }
    f->wire_len = 0;
    write_controls(f);
    transform(f);
    if (f->wire_len > 0)
        zl_ws_lower_write(f);
}

/* ---- the stream's ops ---- */

static void ws_readv(zl_stream *s, zl_op *op, const zl_iovec *iov, int n)
{
    ws_stream *f = zl_ws_of(s);
    f->read_op = op;
    f->read.count = n;
    f->read.total = 0;
    for (int i = 0; i < n; i++) {
        f->read.iov[i] = iov[i];
        f->read.total += iov[i].len;
    }
    f->read.done = 0;
    f->read.index = 0;
    f->read.offset = 0;
    serve_read(f, false);
}

static void ws_write(zl_stream *s, zl_op *op, const zl_iovec *iov, int n)
{
    ws_stream *f = zl_ws_of(s);
    f->write_op = op;
    f->write.iov = iov;
    f->write.count = n;
    f->write.index = 0;
    f->write.offset = 0;
    f->write.total = 0;
    for (int i = 0; i < n; i++)
        f->write.total += iov[i].len;
    pump_write(f, false);
}

static void ws_close(zl_stream *s)
{
    ws_stream *f = zl_ws_of(s);
    f->closing = true;
    zl_ws_complete(f, &f->handshake_op, ZL_ECANCELED, 0, false);
    zl_ws_complete(f, &f->read_op, ZL_ECANCELED, 0, false);
    zl_ws_complete(f, &f->write_op, ZL_ECANCELED, 0, false);
    /* The lower stream's cancelled completions come back to our ops. */
    zl_stream_close(f->lower);
    f->lower = NULL;
    zl_ws_maybe_free(f);
}

static zl_framing ws_framing(const zl_stream *s)
{
    return ((const ws_stream *)s)->framing;
}

/* A refused upgrade or a bad frame ends a connect, as in libzmq's ws, but
 * a path not bound yet (404) is retried; a failure of the TLS under wss
 * is the TLS stream's to judge. */
static int ws_failure(const zl_stream *s, uint64_t *value, bool *retry)
{
    const ws_stream *f = (const ws_stream *)s;
    int event = f->failure_event;
    if (!event && f->dec.protocol_error)
        event = ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL;
    if (!event)
        return f->lower ? zl_stream_failure(f->lower, value, retry) : 0;
    *value = ZLINK_PROTOCOL_ERROR_WS_UNSPECIFIED;
    *retry = f->failure_retries;
    return event;
}

static const zl_stream_ops ws_ops = {
    .handshake = zl_ws_handshake,
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
    uint64_t seed;
    if (uv_random(NULL, NULL, &seed, sizeof seed, 0, NULL) != 0 ||
        zl_ws_decoder_init(&f->dec, &f->in, client) != 0) {
        free(f);
        errno = ENOMEM;
        return NULL;
    }
    zl_ws_encoder_init(&f->enc, client, seed);
    f->base.ops = &ws_ops;
    f->base.handle = lower->handle;
    f->lower = lower;
    f->loop = loop;
    f->client = client;
    f->framing = ZL_FRAMING_ZWS_NULL;
    zl_stream_deferred_init(&f->deferred, loop);
    f->free_timer.cb = on_free_timer;
    f->free_timer.data = f;
    f->lower_handshake_op.cb = zl_ws_on_lower_handshake;
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
    f->dec.max_msg_size = options->maxmsgsize;
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
    zl_ws_of(ws)->dec.max_msg_size = max_msg_size;
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
    for (const char *c = p; *c; c++) {
        if ((unsigned char)*c <= 0x20 || *c == 0x7f) {
            errno = EINVAL;
            return -1;
        }
    }
    memcpy(hostport, rest, host_len);
    hostport[host_len] = '\0';
    snprintf(path, path_cap, "%s", p);
    return 0;
}
