/* ws_decoder.c — ZWS 2.0 input: WebSocket frames (wslay's, and plain data
 * frames of our own) to the engine's ZMTP bytes. */
#include "ws_decoder.h"

#include <stdlib.h>
#include <string.h>

#include "ws_mask.h"
#include "ws_stream.h"

/* wslay pulls its input through this: the bytes of the one frame it is
 * given, so that it never holds the start of the next one, which may be
 * ours. */
static ssize_t on_wslay_recv(uint8_t *buf, size_t len, int flags, void *arg)
{
    (void)flags;
    zl_ws_decoder *d = arg;
    zl_ws_input *in = d->input;
    size_t avail = in->end - in->pos;
    size_t n = avail < len ? avail : len;
    if (n > d->wslay_due)
        n = (size_t)d->wslay_due;
    if (n == 0)
        return 0; /* wslay: want read */
    memcpy(buf, in->buf + in->pos, n);
    in->pos += n;
    d->wslay_due -= n;
    return (ssize_t)n;
}

static ssize_t on_wslay_send(const uint8_t *data, size_t len, int flags,
                             void *arg)
{
    (void)data;
    (void)len;
    (void)flags;
    (void)arg;
    return -1; /* frames are written by the encoder */
}

static int on_wslay_genmask(uint8_t *buf, size_t len, void *arg)
{
    (void)buf;
    (void)len;
    (void)arg;
    return -1;
}

int zl_ws_decoder_init(zl_ws_decoder *d, zl_ws_input *input, bool client)
{
    memset(d, 0, sizeof *d);
    d->input = input;
    d->client = client;
    d->max_msg_size = -1;
    struct wslay_frame_callbacks callbacks = {on_wslay_send, on_wslay_recv,
                                              on_wslay_genmask};
    if (wslay_frame_context_init(&d->wslay, &callbacks, d) != 0) {
        d->wslay = NULL;
        return -1;
    }
    return 0;
}

void zl_ws_decoder_free(zl_ws_decoder *d)
{
    if (d->wslay)
        wslay_frame_context_free(d->wslay);
    d->wslay = NULL;
    free(d->assembly);
    d->assembly = NULL;
}

static bool protocol_fail(zl_ws_decoder *d)
{
    d->protocol_error = true;
    return false;
}

/* The ZMTP header for a message of size bytes after its flags byte. */
static void set_zmtp_header(zl_ws_decoder *d, uint8_t ws_flags, uint64_t size)
{
    uint8_t flags = 0;
    if (ws_flags & ZL_WS_FLAG_MORE)
        flags |= ZL_FRAME_MORE;
    if (ws_flags & (ZL_WS_FLAG_COMMAND | ZL_WS_FLAG_ZMTP_COMMAND))
        flags |= ZL_FRAME_COMMAND;
    d->hdr_len = zl_frame_header_encode(d->hdr, flags, size);
    d->hdr_pos = 0;
}

static bool too_large(const zl_ws_decoder *d, uint64_t payload)
{
    /* The payload is the flags byte and the body MAXMSGSIZE limits. */
    return d->max_msg_size >= 0 && payload > (uint64_t)d->max_msg_size + 1;
}

/* A new frame's header, as wslay reports it with its first bytes. */
static bool frame_begins(zl_ws_decoder *d, const struct wslay_frame_iocb *io)
{
    if (io->rsv != 0 || io->mask != (d->client ? 0 : 1))
        return protocol_fail(d);
    d->in_frame = true;
    d->frame_op = io->opcode;
    d->frame_fin = io->fin;
    d->frame_len = io->payload_length;
    d->frame_left = io->payload_length;
    switch (io->opcode) {
    case WSLAY_BINARY_FRAME:
        if (d->msg_active)
            return protocol_fail(d); /* a message inside a message */
        if (io->payload_length == 0 || too_large(d, io->payload_length))
            return protocol_fail(d);
        d->msg_active = true;
        d->msg_fragmented = !io->fin;
        d->msg_started = false;
        return true;
    case WSLAY_CONTINUATION_FRAME:
        if (!d->msg_active || !d->msg_fragmented ||
            too_large(d, d->assembly_len + io->payload_length))
            return protocol_fail(d);
        return true;
    case WSLAY_CONNECTION_CLOSE:
    case WSLAY_PING:
    case WSLAY_PONG:
        d->control_len = 0;
        return true;
    default: /* text, reserved opcodes */
        return protocol_fail(d);
    }
}

static bool assemble(zl_ws_decoder *d, const uint8_t *data, size_t len)
{
    if (d->assembly_len + len > d->assembly_cap) {
        /* Grown as the bytes arrive, never on the strength of a length. */
        size_t cap = d->assembly_cap ? d->assembly_cap : 4096;
        while (cap < d->assembly_len + len)
            cap *= 2;
        uint8_t *grown = realloc(d->assembly, cap);
        if (!grown)
            return protocol_fail(d);
        d->assembly = grown;
        d->assembly_cap = cap;
    }
    memcpy(d->assembly + d->assembly_len, data, len);
    d->assembly_len += len;
    return true;
}

static void on_control(zl_ws_decoder *d)
{
    switch (d->frame_op) {
    case WSLAY_PING:
        /* Only the latest ping needs its pong (RFC 6455 §5.5.3). */
        memcpy(d->ping, d->control, d->control_len);
        d->ping_len = d->control_len;
        d->ping_due = true;
        break;
    case WSLAY_CONNECTION_CLOSE:
        d->close_received = true;
        /* Echoed in our answer, as RFC 6455 §5.5.1 suggests. */
        d->close_code[0] = d->control_len >= 2 ? d->control[0] : 0x03;
        d->close_code[1] = d->control_len >= 2 ? d->control[1] : 0xe8;
        break;
    default: /* a pong: nothing to do */
        break;
    }
}

/* A frame header at the front of the input. */
typedef struct ws_header {
    struct wslay_frame_iocb io; /* fin, rsv, opcode, mask, payload_length */
    uint8_t key[4];
    size_t size; /* the mask key included */
    bool plain_data;
} ws_header;

/* Reads the header at p; false while it is incomplete. plain_data: a data
 * frame whose length takes the fewest bytes and is under 2^63, as wslay
 * demands. Any other header is wslay's to parse and judge. */
static bool header_read(const uint8_t *p, size_t avail, ws_header *h)
{
    if (avail < 2)
        return false;
    uint8_t short_len = p[1] & 0x7f;
    size_t ext = short_len == 126 ? 2 : short_len == 127 ? 8 : 0;
    bool masked = (p[1] & 0x80) != 0;
    h->size = 2 + ext + (masked ? 4 : 0);
    if (avail < h->size)
        return false;
    memset(&h->io, 0, sizeof h->io);
    h->io.fin = p[0] >> 7;
    h->io.rsv = (p[0] >> 4) & 7;
    h->io.opcode = p[0] & 0x0f;
    h->io.mask = masked;
    uint64_t len = short_len;
    if (ext) {
        len = 0;
        for (size_t i = 0; i < ext; i++)
            len = len << 8 | p[2 + i];
    }
    h->io.payload_length = len;
    if (masked)
        memcpy(h->key, p + 2 + ext, 4);
    bool shortest = ext == 0 || (ext == 2 && len >= 126) ||
                    (ext == 8 && len > 0xffff && len < (uint64_t)1 << 63);
    h->plain_data = shortest && (h->io.opcode == WSLAY_BINARY_FRAME ||
                                 h->io.opcode == WSLAY_CONTINUATION_FRAME);
    return true;
}

/* The next frame, once its header is whole: a plain data frame is taken
 * here, any other frame is handed to wslay with exactly its bytes. false
 * while the header is incomplete, or when the frame breaks a rule. */
static bool next_frame(zl_ws_decoder *d)
{
    zl_ws_input *in = d->input;
    ws_header h;
    size_t avail = in->end - in->pos;
    if (avail < 2 || !header_read(in->buf + in->pos, avail, &h))
        return false;
    if (!h.plain_data) {
        d->frame_wslay = true;
        uint64_t payload = h.io.payload_length;
        d->wslay_due =
            payload > UINT64_MAX - h.size ? UINT64_MAX : h.size + payload;
        return true;
    }
    in->pos += h.size;
    memcpy(d->frame_key, h.key, 4);
    d->frame_phase = 0;
    return frame_begins(d, &h.io);
}

/* The payload bytes of our own frame that the input holds. */
static bool take_payload(zl_ws_decoder *d, const uint8_t **data, size_t *len)
{
    static const uint8_t none[1];
    zl_ws_input *in = d->input;
    size_t avail = in->end - in->pos;
    size_t n = d->frame_left < avail ? (size_t)d->frame_left : avail;
    if (n == 0) {
        *data = none;
        *len = 0;
        return d->frame_left == 0; /* an empty frame ends here */
    }
    uint8_t *p = in->buf + in->pos;
    if (!d->client) /* frame_begins saw that a client's frame is masked */
        d->frame_phase = zl_ws_mask(p, p, n, d->frame_key, d->frame_phase);
    in->pos += n;
    *data = p;
    *len = n;
    return true;
}

/* The next piece of wslay's frame. */
static bool take_from_wslay(zl_ws_decoder *d, const uint8_t **data, size_t *len)
{
    struct wslay_frame_iocb io;
    memset(&io, 0, sizeof io);
    ssize_t r = wslay_frame_recv(d->wslay, &io);
    if (r == WSLAY_ERR_WANT_READ)
        return false;
    if (r < 0)
        return protocol_fail(d); /* a 2^63 length, a long control frame */
    if (!d->in_frame && !frame_begins(d, &io))
        return false;
    *data = io.data;
    *len = io.data_length;
    return true;
}

/* Takes one piece of a frame. false when nothing more can be taken now:
 * input is short, the connection closes, or it failed. */
static bool decode_one(zl_ws_decoder *d)
{
    if (d->protocol_error || d->close_received)
        return false;
    if (!d->in_frame && !d->frame_wslay && !next_frame(d))
        return false;
    const uint8_t *data;
    size_t len;
    if (!(d->frame_wslay ? take_from_wslay(d, &data, &len)
                         : take_payload(d, &data, &len)))
        return false;
    d->frame_left -= len;
    bool frame_end = d->frame_left == 0;
    if (frame_end)
        d->in_frame = d->frame_wslay = false;
    bool message_end = frame_end && d->frame_fin;
    if (wslay_is_ctrl_frame(d->frame_op)) {
        memcpy(d->control + d->control_len, data, len);
        d->control_len += len;
        if (frame_end)
            on_control(d); /* answered by the stream */
        return true;
    }
    if (d->msg_fragmented) {
        if (!assemble(d, data, len))
            return false;
        if (!message_end)
            return true;
        if (d->assembly_len == 0)
            return protocol_fail(d);
        set_zmtp_header(d, d->assembly[0], d->assembly_len - 1);
        d->body = d->assembly + 1;
        d->body_len = d->assembly_len - 1;
        d->assembly_handed = true;
        d->msg_active = false;
        return true;
    }
    if (!d->msg_started && len > 0) {
        set_zmtp_header(d, data[0], d->frame_len - 1);
        d->msg_started = true;
        data++;
        len--;
    }
    d->body = data;
    d->body_len = len;
    if (message_end)
        d->msg_active = false;
    return true;
}

/* Copies into the engine's read iovecs. */
static void put(zl_ws_read *read, const uint8_t **src, size_t *len)
{
    while (*len > 0 && read->index < read->count) {
        zl_iovec *iov = &read->iov[read->index];
        size_t room = iov->len - read->offset;
        size_t n = *len < room ? *len : room;
        memcpy((uint8_t *)iov->base + read->offset, *src, n);
        read->offset += n;
        read->done += n;
        *src += n;
        *len -= n;
        if (read->offset == iov->len) {
            read->index++;
            read->offset = 0;
        }
    }
}

void zl_ws_decoder_fill(zl_ws_decoder *d, zl_ws_read *read)
{
    for (;;) {
        if (read->total == 0) {
            if (zl_ws_decoder_owed(d) || !decode_one(d))
                return;
            continue;
        }
        if (read->done == read->total)
            return;
        if (d->hdr_pos < d->hdr_len) {
            const uint8_t *src = d->hdr + d->hdr_pos;
            size_t len = d->hdr_len - d->hdr_pos;
            put(read, &src, &len);
            d->hdr_pos = d->hdr_len - len;
            continue;
        }
        if (d->body_len > 0) {
            put(read, &d->body, &d->body_len);
            continue;
        }
        if (d->assembly_handed) {
            /* The reassembled message is out: its memory goes too. */
            free(d->assembly);
            d->assembly = NULL;
            d->assembly_len = d->assembly_cap = 0;
            d->assembly_handed = false;
        }
        if (!decode_one(d))
            return;
    }
}
