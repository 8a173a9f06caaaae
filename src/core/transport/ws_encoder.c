/* ws_encoder.c — ZWS 2.0 output: ZMTP bytes to masked or plain frames. */
#include "ws_encoder.h"

#include <string.h>
#include <wslay/wslay.h>

#include "ws_mask.h"
#include "ws_stream.h"

void zl_ws_encoder_init(zl_ws_encoder *e, bool client, uint64_t seed)
{
    memset(e, 0, sizeof *e);
    e->client = client;
    e->out = ZL_WS_OUT_ZMTP_HEADER;
    e->rng = seed | 1; /* xorshift never leaves 0 */
}

/* Mask keys only have to be unpredictable to the scripts of a browser
 * page (RFC 6455 §10.3); a per-connection xorshift seeded from the OS is
 * that, without a syscall per frame. */
static uint32_t next_random(zl_ws_encoder *e)
{
    uint64_t x = e->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    e->rng = x;
    return (uint32_t)(x >> 16);
}

static void mask_copy(zl_ws_encoder *e, uint8_t *dst, const uint8_t *src,
                      size_t n)
{
    if (e->client)
        e->mask_phase = zl_ws_mask(dst, src, n, e->mask_key, e->mask_phase);
    else
        memcpy(dst, src, n);
}

/* Writes a frame header at p and starts its mask; its length. */
static size_t write_ws_header(zl_ws_encoder *e, uint8_t *p, uint8_t opcode,
                              uint64_t payload)
{
    size_t n = 0;
    p[n++] = (uint8_t)(0x80 | opcode);
    uint8_t mask_bit = e->client ? 0x80 : 0;
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
    if (e->client) {
        uint32_t key = next_random(e);
        memcpy(e->mask_key, &key, 4);
        memcpy(p + n, e->mask_key, 4);
        n += 4;
    }
    e->mask_phase = 0;
    return n;
}

size_t zl_ws_encoder_control(zl_ws_encoder *e, uint8_t *dst, uint8_t opcode,
                             const uint8_t *data, size_t len)
{
    size_t n = write_ws_header(e, dst, opcode, len);
    mask_copy(e, dst + n, data, len);
    return n + len;
}

static size_t zmtp_header_need(const zl_ws_encoder *e)
{
    return e->out_hdr_have > 0 && (e->out_hdr[0] & ZL_FRAME_LONG)
               ? ZL_FRAME_HEADER_MAX
               : 2;
}

bool zl_ws_encoder_encode(zl_ws_encoder *e, uint8_t *wire, size_t *wire_len,
                          size_t cap, zl_ws_write *w)
{
    for (;;) {
        if (e->out == ZL_WS_OUT_WS_HEADER) {
            /* Needs no input: an empty body ends its frame here. */
            if (cap - *wire_len < ZL_WS_HEADER_MAX + 1)
                return false;
            *wire_len += write_ws_header(e, wire + *wire_len,
                                         WSLAY_BINARY_FRAME, e->out_left + 1);
            uint8_t flags = 0;
            if (e->out_hdr[0] & ZL_FRAME_MORE)
                flags |= ZL_WS_FLAG_MORE;
            if (e->out_hdr[0] & ZL_FRAME_COMMAND)
                flags |= ZL_WS_FLAG_COMMAND;
            mask_copy(e, wire + *wire_len, &flags, 1);
            (*wire_len)++;
            e->out = ZL_WS_OUT_BODY;
        }
        if (e->out == ZL_WS_OUT_BODY && e->out_left == 0) {
            e->out = ZL_WS_OUT_ZMTP_HEADER;
            e->out_hdr_have = 0;
            return true;
        }
        if (w->index >= w->count)
            return false;
        const zl_iovec *iov = &w->iov[w->index];
        const uint8_t *src = (const uint8_t *)iov->base + w->offset;
        size_t avail = iov->len - w->offset;
        if (avail == 0) {
            w->index++;
            w->offset = 0;
            continue;
        }
        if (e->out == ZL_WS_OUT_ZMTP_HEADER) {
            e->out_hdr[e->out_hdr_have++] = *src;
            w->offset++;
            if (e->out_hdr_have < zmtp_header_need(e))
                continue;
            uint64_t size = 0;
            for (size_t i = 1; i < e->out_hdr_have; i++)
                size = size << 8 | e->out_hdr[i];
            e->out_left = size;
            e->out = ZL_WS_OUT_WS_HEADER;
            continue;
        }
        size_t room = cap - *wire_len;
        size_t n = avail < room ? avail : room;
        if (n > e->out_left)
            n = (size_t)e->out_left;
        if (n == 0)
            return false; /* the wire is full */
        mask_copy(e, wire + *wire_len, src, n);
        *wire_len += n;
        w->offset += n;
        e->out_left -= n;
    }
}
