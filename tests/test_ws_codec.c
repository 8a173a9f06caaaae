/* test_ws_codec.c — the ZWS 2.0 frame codec alone. The decoder is fed
 * hand-written frames in pieces of every size: the ZMTP bytes it yields
 * whichever of its two parsers (its own for plain data frames, wslay for
 * the rest) takes a frame, and every breach of RFC 6455 or MAXMSGSIZE
 * failing it, on the side (client or server) each rule belongs to. The
 * encoder's frames, from iovecs cut anywhere, decode back to its input. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "transport/ws_decoder.h"
#include "transport/ws_encoder.h"
#include "transport/ws_mask.h"
#include "transport/ws_stream.h"

#define WIRE_MAX (200 * 1024)

/* ---- frames ---- */

typedef struct wire {
    uint8_t bytes[WIRE_MAX];
    size_t len;
} wire;

static const uint8_t KEY[4] = {0x9a, 0x3c, 0x01, 0xf7};

/* Appends one frame; ext forces the length's form (0: the shortest, 2 or
 * 8: that many extended bytes); claimed is the length it states. */
static void frame_ext(wire *w, bool fin, int rsv, int opcode, bool mask,
                      const void *data, size_t len, uint64_t claimed, int ext)
{
    uint8_t *p = w->bytes + w->len;
    size_t n = 0;
    p[n++] = (uint8_t)((fin ? 0x80 : 0) | rsv << 4 | opcode);
    uint8_t m = mask ? 0x80 : 0;
    if (ext == 0)
        ext = claimed < 126 ? 0 : claimed <= 0xffff ? 2 : 8;
    if (ext == 0) {
        p[n++] = (uint8_t)(m | claimed);
    } else {
        p[n++] = (uint8_t)(m | (ext == 2 ? 126 : 127));
        for (int i = ext - 1; i >= 0; i--)
            p[n++] = (uint8_t)(claimed >> (8 * i));
    }
    if (mask) {
        memcpy(p + n, KEY, 4);
        n += 4;
    }
    ck_assert_uint_le(w->len + n + len, WIRE_MAX);
    const uint8_t *src = data;
    for (size_t i = 0; i < len; i++)
        p[n + i] = mask ? src[i] ^ KEY[i & 3] : src[i];
    w->len += n + len;
}

static void frame(wire *w, bool fin, int opcode, bool mask, const void *data,
                  size_t len)
{
    frame_ext(w, fin, 0, opcode, mask, data, len, len, 0);
}

/* A ZWS message: flags byte, then body, in one frame or in pieces. */
static void message(wire *w, bool mask, uint8_t flags, const uint8_t *body,
                    size_t len, size_t pieces)
{
    static uint8_t payload[WIRE_MAX];
    payload[0] = flags;
    memcpy(payload + 1, body, len);
    size_t total = len + 1, at = 0;
    for (size_t i = 0; i < pieces; i++) {
        size_t n = i + 1 == pieces ? total - at : total / pieces;
        frame(w, i + 1 == pieces, i ? WSLAY_CONTINUATION_FRAME : 2, mask,
              payload + at, n);
        at += n;
    }
}

/* The ZMTP bytes the engine should read for that message. */
static void zmtp(wire *w, uint8_t ws_flags, const uint8_t *body, size_t len)
{
    uint8_t flags = 0;
    if (ws_flags & ZL_WS_FLAG_MORE)
        flags |= ZL_FRAME_MORE;
    if (ws_flags & (ZL_WS_FLAG_COMMAND | ZL_WS_FLAG_ZMTP_COMMAND))
        flags |= ZL_FRAME_COMMAND;
    w->len += zl_frame_header_encode(w->bytes + w->len, flags, len);
    memcpy(w->bytes + w->len, body, len);
    w->len += len;
}

/* ---- running the decoder as ws_stream.c does ---- */

typedef struct result {
    bool failed, closed;
    int pings;
    uint8_t ping[ZL_WS_CONTROL_MAX];
    size_t ping_len;
    uint8_t close_code[2];
    wire out;
} result;

/* What the stream takes from the decoder after each fill. */
static void take_ping(zl_ws_decoder *d, result *r)
{
    if (d->ping_due) {
        r->pings++;
        memcpy(r->ping, d->ping, d->ping_len);
        r->ping_len = d->ping_len;
        d->ping_due = false;
    }
}

/* Reads everything owed, read_len bytes (0: probes first) at a time. */
static void drain(zl_ws_decoder *d, result *r, size_t read_len)
{
    for (;;) {
        zl_ws_read read;
        memset(&read, 0, sizeof read);
        if (read_len == 0) {
            read.count = 1; /* a probe: total 0 */
            zl_ws_decoder_fill(d, &read);
            take_ping(d, r);
            if (!zl_ws_decoder_owed(d))
                return;
        }
        size_t n = read_len ? read_len : 4096;
        ck_assert_uint_le(r->out.len + n, WIRE_MAX);
        read.iov[0] = (zl_iovec){r->out.bytes + r->out.len, n};
        read.count = 1;
        read.total = n;
        zl_ws_decoder_fill(d, &read);
        take_ping(d, r);
        r->out.len += read.done;
        if (read.done == 0)
            return;
    }
}

/* Feeds w to a decoder chunk bytes at a time (0: all at once). */
static void run(const wire *w, bool client, int64_t max, size_t chunk,
                size_t read_len, result *r)
{
    memset(r, 0, sizeof *r);
    zl_ws_input in = {0};
    in.buf = malloc(WIRE_MAX);
    ck_assert_ptr_nonnull(in.buf);
    zl_ws_decoder d;
    ck_assert_int_eq(zl_ws_decoder_init(&d, &in, client), 0);
    d.max_msg_size = max;
    size_t fed = 0;
    for (;;) {
        drain(&d, r, read_len);
        if (d.protocol_error || d.close_received || fed == w->len)
            break;
        /* As zl_ws_lower_read: what is left moves to the front. */
        memmove(in.buf, in.buf + in.pos, in.end - in.pos);
        in.end -= in.pos;
        in.pos = 0;
        size_t n = chunk ? chunk : w->len;
        if (n > w->len - fed)
            n = w->len - fed;
        memcpy(in.buf + in.end, w->bytes + fed, n);
        in.end += n;
        fed += n;
    }
    r->failed = d.protocol_error;
    r->closed = d.close_received;
    memcpy(r->close_code, d.close_code, 2);
    zl_ws_decoder_free(&d);
    free(in.buf);
}

static const size_t chunks[] = {0, 1, 3, 7, 13, 64, 1000, 4096};
#define NCHUNKS (sizeof chunks / sizeof chunks[0])

/* ---- the bytes it yields ---- */

static uint8_t big[70000];

static void fill_big(void)
{
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 31 + (i >> 8));
}

/* Messages of every length form, fragments with control frames between
 * them, a ping right behind a data frame: the same ZMTP bytes from every
 * cut of the input, as server (masked) and client (plain). */
START_TEST(same_bytes_from_every_cut)
{
    fill_big();
    bool client = _i % 2 == 1;
    bool mask = !client;
    static wire in, want;
    in.len = want.len = 0;
    message(&in, mask, 0x01, (const uint8_t *)"id", 2, 1);
    zmtp(&want, 0x01, (const uint8_t *)"id", 2);
    message(&in, mask, 0x00, big, 0, 1); /* flags only */
    zmtp(&want, 0x00, big, 0);
    message(&in, mask, 0x02, big, 200, 1); /* 16-bit length */
    zmtp(&want, 0x02, big, 200);
    message(&in, mask, 0x00, big, sizeof big, 1); /* 64-bit length */
    zmtp(&want, 0x00, big, sizeof big);
    frame(&in, true, WSLAY_PING, mask, "p1", 2);
    message(&in, mask, 0x01, big + 7, 1021, 1);
    zmtp(&want, 0x01, big + 7, 1021);
    /* Fragmented, a ping and a pong between the pieces, and an empty
     * last piece. */
    static uint8_t payload[3001];
    payload[0] = 0x00;
    memcpy(payload + 1, big + 100, 3000);
    frame(&in, false, 2, mask, payload, 1);
    frame(&in, false, WSLAY_CONTINUATION_FRAME, mask, payload + 1, 1500);
    frame(&in, true, WSLAY_PING, mask, "p2", 2);
    frame(&in, true, WSLAY_PONG, mask, "", 0);
    frame(&in, false, WSLAY_CONTINUATION_FRAME, mask, payload + 1501, 1500);
    frame(&in, true, WSLAY_CONTINUATION_FRAME, mask, "", 0);
    zmtp(&want, 0x00, big + 100, 3000);
    message(&in, mask, 0x00, big + 5, 6000, 3);
    zmtp(&want, 0x00, big + 5, 6000);
    frame(&in, true, WSLAY_PING, mask, "last", 4);
    static const size_t reads[] = {0, 7, 4096};
    for (size_t c = 0; c < NCHUNKS; c++) {
        for (size_t k = 0; k < sizeof reads / sizeof reads[0]; k++) {
            static result r;
            run(&in, client, -1, chunks[c], reads[k], &r);
            ck_assert_msg(!r.failed, "chunk %zu read %zu", chunks[c], reads[k]);
            ck_assert_uint_eq(r.out.len, want.len);
            ck_assert_msg(memcmp(r.out.bytes, want.bytes, want.len) == 0,
                          "chunk %zu read %zu", chunks[c], reads[k]);
            ck_assert_int_ge(r.pings, 1);
            ck_assert_uint_eq(r.ping_len, 4);
            ck_assert_mem_eq(r.ping, "last", 4);
        }
    }
}
END_TEST

/* A close ends decoding, with its code kept for the answer; the frames
 * behind it are never read. */
START_TEST(close_ends_decoding)
{
    static wire in;
    in.len = 0;
    message(&in, true, 0, (const uint8_t *)"a", 1, 1);
    frame(&in, true, WSLAY_CONNECTION_CLOSE, true, "\x03\xe9", 2);
    message(&in, true, 0, (const uint8_t *)"b", 1, 1);
    for (size_t c = 0; c < NCHUNKS; c++) {
        static result r;
        run(&in, false, -1, chunks[c], 4096, &r);
        ck_assert(!r.failed);
        ck_assert(r.closed);
        ck_assert_mem_eq(r.close_code, "\x03\xe9", 2);
        ck_assert_uint_eq(r.out.len, 3); /* "a" only */
    }
}
END_TEST

/* ---- what fails it ---- */

typedef struct bad_case {
    const char *name;
    bool client; /* the side that receives it */
    int64_t max;
    void (*build)(wire *w, bool mask);
} bad_case;

static void long_form_for_short(wire *w, bool mask)
{
    frame_ext(w, true, 0, 2, mask, "\x00xyz", 4, 4, 2);
}

static void long64_for_16bit(wire *w, bool mask)
{
    frame_ext(w, true, 0, 2, mask, big, 200, 200, 8);
}

static void length_2_63(wire *w, bool mask)
{
    frame_ext(w, true, 0, 2, mask, "\x00xy", 3, (uint64_t)1 << 63, 8);
}

static void rsv_bits(wire *w, bool mask)
{
    frame_ext(w, true, 4, 2, mask, "\x00xy", 3, 3, 0);
}

static void continuation_first(wire *w, bool mask)
{
    frame(w, true, WSLAY_CONTINUATION_FRAME, mask, "\x00xy", 3);
}

static void message_in_message(wire *w, bool mask)
{
    frame(w, false, 2, mask, "\x00xy", 3);
    frame(w, true, 2, mask, "\x00zz", 3);
}

static void empty_binary(wire *w, bool mask)
{
    frame(w, true, 2, mask, "", 0);
}

static void empty_fragments(wire *w, bool mask)
{
    frame(w, false, 2, mask, "", 0);
    frame(w, true, WSLAY_CONTINUATION_FRAME, mask, "", 0);
}

static void text(wire *w, bool mask)
{
    frame(w, true, 1, mask, "\x00xy", 3);
}

static void reserved_data_opcode(wire *w, bool mask)
{
    frame(w, true, 3, mask, "\x00xy", 3);
}

static void reserved_control_opcode(wire *w, bool mask)
{
    frame(w, true, 0xb, mask, "xy", 2);
}

static void control_not_fin(wire *w, bool mask)
{
    frame(w, false, WSLAY_PING, mask, "xy", 2);
}

static void control_126(wire *w, bool mask)
{
    frame(w, true, WSLAY_PING, mask, big, 126);
}

static void over_max(wire *w, bool mask)
{
    frame(w, true, 2, mask, big, 102); /* flags + 101 bytes */
}

static void over_max_16bit(wire *w, bool mask)
{
    frame(w, true, 2, mask, big, 300);
}

static void over_max_in_fragments(wire *w, bool mask)
{
    frame(w, false, 2, mask, big, 60);
    frame(w, true, WSLAY_CONTINUATION_FRAME, mask, big, 42);
}

/* Sends a good message first, so that each case fails mid-stream. */
static const bad_case bad[] = {
    {"16-bit form for 4 bytes", false, -1, long_form_for_short},
    {"64-bit form for 200 bytes", false, -1, long64_for_16bit},
    {"2^63 length", false, -1, length_2_63},
    {"2^63 length, client", true, -1, length_2_63},
    {"RSV bits", false, -1, rsv_bits},
    {"RSV bits, client", true, -1, rsv_bits},
    {"continuation first", false, -1, continuation_first},
    {"a message inside a message", false, -1, message_in_message},
    {"a message inside a message, client", true, -1, message_in_message},
    {"empty binary", false, -1, empty_binary},
    {"empty fragments", false, -1, empty_fragments},
    {"text", false, -1, text},
    {"reserved data opcode", false, -1, reserved_data_opcode},
    {"reserved control opcode", false, -1, reserved_control_opcode},
    {"control without fin", false, -1, control_not_fin},
    {"control of 126", false, -1, control_126},
    {"over MAXMSGSIZE", false, 100, over_max},
    {"over MAXMSGSIZE, 16-bit", false, 100, over_max_16bit},
    {"over MAXMSGSIZE, client", true, 100, over_max},
    {"over MAXMSGSIZE in fragments", false, 100, over_max_in_fragments},
};

START_TEST(breaches_fail)
{
    fill_big();
    const bad_case *b = &bad[_i];
    bool mask = !b->client;
    static wire in;
    for (size_t c = 0; c < NCHUNKS; c++) {
        in.len = 0;
        message(&in, mask, 0, (const uint8_t *)"ok", 2, 1);
        b->build(&in, mask);
        static result r;
        run(&in, b->client, b->max, chunks[c], 4096, &r);
        ck_assert_msg(r.failed, "%s, chunk %zu", b->name, chunks[c]);
        ck_assert_uint_eq(r.out.len, 4); /* the good message */
    }
}
END_TEST

/* The mask rule by side: a server takes only masked frames, a client only
 * plain ones, data and control frames alike. */
START_TEST(mask_by_side)
{
    static wire in;
    for (int client = 0; client < 2; client++) {
        for (int control = 0; control < 2; control++) {
            in.len = 0;
            if (control)
                frame(&in, true, WSLAY_PING, client, "xy", 2);
            else
                message(&in, client, 0, (const uint8_t *)"xy", 2, 1);
            static result r;
            run(&in, client, -1, 0, 4096, &r);
            ck_assert_msg(r.failed, "client %d control %d", client, control);
        }
    }
}
END_TEST

/* MAXMSGSIZE counts the body, not the flags byte: exactly the limit
 * passes, in one frame or in fragments. */
START_TEST(max_msg_size_exact)
{
    fill_big();
    static wire in;
    static result r;
    for (size_t pieces = 1; pieces <= 3; pieces++) {
        in.len = 0;
        message(&in, true, 0, big, 100, pieces);
        run(&in, false, 100, 1, 4096, &r);
        ck_assert(!r.failed);
        ck_assert_uint_eq(r.out.len, 2 + 100);
    }
    in.len = 0;
    message(&in, true, 0, big, 0, 1);
    run(&in, false, 0, 0, 4096, &r);
    ck_assert(!r.failed);
}
END_TEST

/* zl_ws_mask against the byte-by-byte rule, at every phase and length
 * around its word steps, in place and into another buffer. */
START_TEST(mask_matches_bytewise)
{
    uint8_t src[100], dst[100], want[100];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + 3);
    for (unsigned phase = 0; phase < 4; phase++) {
        for (size_t n = 0; n <= sizeof src; n++) {
            for (size_t i = 0; i < n; i++)
                want[i] = src[i] ^ KEY[(phase + i) & 3];
            ck_assert_uint_eq(zl_ws_mask(dst, src, n, KEY, phase),
                              (phase + n) & 3);
            ck_assert(memcmp(dst, want, n) == 0);
            memcpy(dst, src, n);
            zl_ws_mask(dst, dst, n, KEY, phase);
            ck_assert(memcmp(dst, want, n) == 0);
        }
    }
}
END_TEST

/* ---- the encoder ---- */

/* ZMTP frames as the engine writes them (short and long, MORE, a
 * command), cut into three iovecs at every pair of places in turn, framed
 * into a small wire (so it fills mid-frame), with a ping between frames:
 * the other side decodes the ZMTP bytes back, masked by a client, plain
 * from a server. */
START_TEST(encoder_round_trip)
{
    fill_big();
    bool client = _i == 1;
    static wire zmtp_in, framed;
    zmtp_in.len = 0;
    zmtp(&zmtp_in, ZL_WS_FLAG_MORE, big, 5);
    zmtp(&zmtp_in, ZL_WS_FLAG_COMMAND, (const uint8_t *)"\x04PING", 5);
    zmtp(&zmtp_in, 0, big, 300);
    zmtp(&zmtp_in, 0, big, 0);
    const size_t len = zmtp_in.len;
    for (size_t cut1 = 0; cut1 <= len; cut1 += 1 + cut1 / 8) {
        for (size_t cut2 = cut1; cut2 <= len; cut2 += 7) {
            zl_iovec iov[3] = {{zmtp_in.bytes, cut1},
                               {zmtp_in.bytes + cut1, cut2 - cut1},
                               {zmtp_in.bytes + cut2, len - cut2}};
            zl_ws_write w = {iov, 3, 0, 0, len};
            zl_ws_encoder e;
            zl_ws_encoder_init(&e, client, 12345);
            framed.len = 0;
            uint8_t chunk[100];
            for (int guard = 0; guard < 1000; guard++) {
                size_t n = 0;
                bool frame_end =
                    zl_ws_encoder_encode(&e, chunk, &n, sizeof chunk, &w);
                memcpy(framed.bytes + framed.len, chunk, n);
                framed.len += n;
                if (frame_end) {
                    ck_assert(zl_ws_encoder_between_frames(&e));
                    framed.len += zl_ws_encoder_control(
                        &e, framed.bytes + framed.len, WSLAY_PING,
                        (const uint8_t *)"pp", 2);
                } else if (n == 0) {
                    break;
                }
            }
            ck_assert_uint_eq(w.index, 3);
            ck_assert(zl_ws_encoder_between_frames(&e));
            static result r;
            run(&framed, !client, -1, 0, 4096, &r);
            ck_assert(!r.failed);
            ck_assert_int_ge(r.pings, 1);
            ck_assert_mem_eq(r.ping, "pp", 2);
            ck_assert_uint_eq(r.out.len, len);
            ck_assert_msg(memcmp(r.out.bytes, zmtp_in.bytes, len) == 0,
                          "cuts %zu %zu", cut1, cut2);
        }
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ws_codec");
    TCase *tc = tcase_create("codec");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, same_bytes_from_every_cut, 0, 2);
    tcase_add_test(tc, close_ends_decoding);
    tcase_add_loop_test(tc, breaches_fail, 0, sizeof bad / sizeof bad[0]);
    tcase_add_test(tc, mask_by_side);
    tcase_add_test(tc, max_msg_size_exact);
    tcase_add_test(tc, mask_matches_bytewise);
    tcase_add_loop_test(tc, encoder_round_trip, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
