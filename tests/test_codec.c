/* test_codec.c — the ZMTP wire codec against byte vectors written by hand
 * from rfc.zeromq.org spec 37: greeting, frame headers, the incremental
 * decoder, commands, READY properties and the socket-type table. */
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "small_copy.h"
#include "testutil.h"
#include "zmtp/zmtp.h"

/* Socket types zlink.h does not name, numbered as in libzmq. */
#define REQ 3
#define REP 4
#define PULL 7
#define PUSH 8

/* String literals with embedded NULs: sizeof counts the terminating NUL. */
#define BYTES(s) ((const uint8_t *)(s)), (sizeof(s) - 1)

/* --- greeting --------------------------------------------------------- */

/* Signature with zero padding, version 3.1, "NULL"; as-server and the 31
 * filler bytes are the zeros that fill the rest of the array. */
static const uint8_t null_greeting[ZL_GREETING_SIZE] =
    "\xff\0\0\0\0\0\0\0\0\x7f"
    "\x03\x01"
    "NULL";

START_TEST(greeting_encode_null)
{
    uint8_t out[ZL_GREETING_SIZE];
    memset(out, 0xaa, sizeof out);
    zl_greeting_encode(out, "NULL", false);
    ck_assert_mem_eq(out, null_greeting, ZL_GREETING_SIZE);
}
END_TEST

START_TEST(greeting_encode_plain_as_server)
{
    uint8_t out[ZL_GREETING_SIZE];
    zl_greeting_encode(out, "PLAIN", true);
    ck_assert_mem_eq(out, "\xff\0\0\0\0\0\0\0\0\x7f\x03\x01PLAIN\0", 18);
    ck_assert_uint_eq(out[32], 1);
    for (size_t i = 33; i < ZL_GREETING_SIZE; i++)
        ck_assert_uint_eq(out[i], 0);
}
END_TEST

START_TEST(greeting_encode_truncates_mechanism)
{
    uint8_t out[ZL_GREETING_SIZE];
    zl_greeting_encode(out, "ABCDEFGHIJKLMNOPQRSTUVWXYZ", false);
    ck_assert_mem_eq(out + 12, "ABCDEFGHIJKLMNOPQRST", 20);
    ck_assert_uint_eq(out[32], 0);
}
END_TEST

START_TEST(greeting_decode_null)
{
    zl_greeting g;
    ck_assert_int_eq(zl_greeting_decode(null_greeting, &g), 0);
    ck_assert_uint_eq(g.major, 3);
    ck_assert_uint_eq(g.minor, 1);
    ck_assert_str_eq(g.mechanism, "NULL");
    ck_assert(!g.as_server);
}
END_TEST

START_TEST(greeting_decode_twenty_char_mechanism)
{
    uint8_t in[ZL_GREETING_SIZE];
    zl_greeting g;
    zl_greeting_encode(in, "ABCDEFGHIJKLMNOPQRST", true);
    ck_assert_int_eq(zl_greeting_decode(in, &g), 0);
    ck_assert_str_eq(g.mechanism, "ABCDEFGHIJKLMNOPQRST");
    ck_assert(g.as_server);
}
END_TEST

START_TEST(greeting_decode_rejects_junk_after_mechanism)
{
    uint8_t in[ZL_GREETING_SIZE];
    zl_greeting g;
    memcpy(in, null_greeting, sizeof in);
    in[12 + 6] = 'X'; /* "NULL\0\0X" */
    ck_assert_int_eq(zl_greeting_decode(in, &g), -1);
}
END_TEST

/* libzmq 4.3 and JeroMQ: padding ending in 0x01, then 10 bytes alone, then
 * the major version, then the rest once our major has arrived. */
START_TEST(greeting_libzmq_in_pieces)
{
    static const uint8_t first[] = {0xff, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x7f};
    uint8_t in[ZL_GREETING_SIZE];
    memset(in, 0, sizeof in);
    memcpy(in, first, sizeof first);
    for (size_t n = 0; n <= sizeof first; n++)
        ck_assert(zl_greeting_signature_ok(in, n));
    in[10] = 3;
    ck_assert(zl_greeting_signature_ok(in, 11));
    in[11] = 1;
    memcpy(in + 12, "NULL", 4);
    ck_assert(zl_greeting_signature_ok(in, ZL_GREETING_VERSION_SIZE));
    ck_assert(zl_greeting_signature_ok(in, ZL_GREETING_SIZE));

    zl_greeting g;
    ck_assert_int_eq(zl_greeting_decode(in, &g), 0);
    ck_assert_uint_eq(g.major, 3);
    ck_assert_uint_eq(g.minor, 1);
    ck_assert_str_eq(g.mechanism, "NULL");
    ck_assert(!g.as_server);
}
END_TEST

START_TEST(greeting_accepts_any_padding)
{
    uint8_t in[ZL_GREETING_SIZE];
    zl_greeting g;
    memcpy(in, null_greeting, sizeof in);
    memcpy(in + 1, "\x12\x34\x56\x78\x9a\xbc\xde\xf0", 8);
    ck_assert_int_eq(zl_greeting_decode(in, &g), 0);
}
END_TEST

START_TEST(greeting_bad_signature)
{
    uint8_t in[ZL_GREETING_SIZE];
    zl_greeting g;

    ck_assert(zl_greeting_signature_ok(null_greeting, 0));

    memcpy(in, null_greeting, sizeof in);
    in[0] = 0xfe;
    ck_assert(!zl_greeting_signature_ok(in, 1));
    ck_assert_int_eq(zl_greeting_decode(in, &g), -1);

    /* Byte 9 is judged only once it has arrived. */
    memcpy(in, null_greeting, sizeof in);
    in[9] = 0x7e;
    ck_assert(zl_greeting_signature_ok(in, 9));
    ck_assert(!zl_greeting_signature_ok(in, 10));
    ck_assert_int_eq(zl_greeting_decode(in, &g), -1);

    /* An HTTP request on a ZMTP port. */
    ck_assert(!zl_greeting_signature_ok((const uint8_t *)"GET / HTTP", 10));
}
END_TEST

START_TEST(greeting_versions)
{
    uint8_t in[ZL_GREETING_SIZE];
    zl_greeting g;
    memcpy(in, null_greeting, sizeof in);

    in[10] = 3; /* JeroMQ, zmq4, zmq.rs */
    in[11] = 0;
    ck_assert_int_eq(zl_greeting_decode(in, &g), 0);
    ck_assert_uint_eq(g.minor, 0);

    in[10] = 2;
    ck_assert_int_eq(zl_greeting_decode(in, &g), -1);
    in[10] = 1;
    ck_assert_int_eq(zl_greeting_decode(in, &g), -1);

    in[10] = 4; /* a future major: the peer downgrades to us */
    in[11] = 0;
    ck_assert_int_eq(zl_greeting_decode(in, &g), 0);
    ck_assert_uint_eq(g.major, 4);
}
END_TEST

/* --- frame headers ---------------------------------------------------- */

START_TEST(frame_header_short)
{
    uint8_t out[ZL_FRAME_HEADER_MAX];
    ck_assert_uint_eq(zl_frame_header_encode(out, 0, 5), 2);
    ck_assert_mem_eq(out, "\x00\x05", 2);
    ck_assert_uint_eq(zl_frame_header_encode(out, ZL_FRAME_MORE, 0), 2);
    ck_assert_mem_eq(out, "\x01\x00", 2);
    ck_assert_uint_eq(zl_frame_header_encode(out, ZL_FRAME_COMMAND, 255), 2);
    ck_assert_mem_eq(out, "\x04\xff", 2);
}
END_TEST

START_TEST(frame_header_long)
{
    uint8_t out[ZL_FRAME_HEADER_MAX];
    ck_assert_uint_eq(zl_frame_header_encode(out, 0, 256), 9);
    ck_assert_mem_eq(out, "\x02\x00\x00\x00\x00\x00\x00\x01\x00", 9);
    ck_assert_uint_eq(
        zl_frame_header_encode(out, ZL_FRAME_MORE, 0x0102030405060708ull), 9);
    ck_assert_mem_eq(out, "\x03\x01\x02\x03\x04\x05\x06\x07\x08", 9);
    ck_assert_uint_eq(zl_frame_header_encode(out, ZL_FRAME_COMMAND, 70000), 9);
    ck_assert_mem_eq(out, "\x06\x00\x00\x00\x00\x00\x01\x11\x70", 9);
}
END_TEST

START_TEST(frame_header_never_sends_reserved_bits)
{
    uint8_t out[ZL_FRAME_HEADER_MAX];
    ck_assert_uint_eq(zl_frame_header_encode(out, 0xff, 1), 2);
    ck_assert_mem_eq(out, "\x05\x01", 2);
}
END_TEST

/* --- decoder ---------------------------------------------------------- */

static void check_frame(zlink_msg_t *msg, const void *body, size_t size,
                        uint8_t flags)
{
    ck_assert_uint_eq(zlink_msg_size(msg), size);
    if (size > 0)
        ck_assert_mem_eq(zlink_msg_data(msg), body, size);
    ck_assert_uint_eq(zl_msg_flags(msg) & (ZL_MSG_MORE | ZL_MSG_COMMAND),
                      flags);
    ck_assert_int_eq(zlink_msg_more(msg), (flags & ZL_MSG_MORE) ? 1 : 0);
    ck_assert_int_eq(zlink_msg_close(msg), 0);
}

START_TEST(decode_short_frame)
{
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    zl_decoder_init(&d, -1);
    ck_assert_int_eq(
        zl_decoder_decode(&d, BYTES("\x00\x05hello"), &consumed, &msg),
        ZL_DECODE_FRAME);
    ck_assert_uint_eq(consumed, 7);
    check_frame(&msg, "hello", 5, 0);
    zl_decoder_destroy(&d);
}
END_TEST

/* Whole frames of every size around the small-copy bound, back to back
 * in one input, each body different: a copy that misses or overruns a
 * byte shows in its own frame or the next one. */
START_TEST(decode_whole_frames_of_every_small_size)
{
    enum { LARGEST = 2 * ZL_COPY_SMALL_MAX + 2 };
    static uint8_t in[LARGEST * (LARGEST + ZL_FRAME_HEADER_MAX)];
    static uint8_t bodies[LARGEST][LARGEST];
    size_t len = 0;
    for (size_t size = 0; size < LARGEST; size++) {
        for (size_t i = 0; i < size; i++)
            bodies[size][i] = (uint8_t)(size * 31 + i * 7 + 1);
        len += zl_frame_header_encode(in + len, 0, size);
        memcpy(in + len, bodies[size], size);
        len += size;
    }
    zl_decoder d;
    zl_decoder_init(&d, -1);
    size_t pos = 0;
    for (size_t size = 0; size < LARGEST; size++) {
        zlink_msg_t msg;
        size_t consumed;
        ck_assert_int_eq(
            zl_decoder_decode(&d, in + pos, len - pos, &consumed, &msg),
            ZL_DECODE_FRAME);
        pos += consumed;
        check_frame(&msg, bodies[size], size, 0);
    }
    ck_assert_uint_eq(pos, len);
    zl_decoder_destroy(&d);
}
END_TEST

/* zl_copy_small for every length it takes, at several alignments, against
 * guard bytes on both sides. */
START_TEST(small_copy_every_length)
{
    uint8_t src[ZL_COPY_SMALL_MAX + 8], dst[ZL_COPY_SMALL_MAX + 16];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 13 + 5);
    for (size_t len = 0; len < ZL_COPY_SMALL_MAX; len++) {
        for (size_t shift = 0; shift < 4; shift++) {
            memset(dst, 0xee, sizeof dst);
            zl_copy_small(dst + 4 + shift, src + shift, len);
            for (size_t i = 0; i < sizeof dst; i++) {
                bool inside = i >= 4 + shift && i < 4 + shift + len;
                ck_assert_uint_eq(dst[i], inside ? src[i - 4] : (uint8_t)0xee);
            }
        }
    }
}
END_TEST

START_TEST(decode_one_frame_per_call)
{
    static const uint8_t in[] = "\x01\x01"
                                "a"
                                "\x00\x02"
                                "bc";
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    zl_decoder_init(&d, -1);
    ck_assert_int_eq(zl_decoder_decode(&d, in, 7, &consumed, &msg),
                     ZL_DECODE_FRAME);
    ck_assert_uint_eq(consumed, 3);
    check_frame(&msg, "a", 1, ZL_MSG_MORE);
    ck_assert_int_eq(zl_decoder_decode(&d, in + 3, 4, &consumed, &msg),
                     ZL_DECODE_FRAME);
    ck_assert_uint_eq(consumed, 4);
    check_frame(&msg, "bc", 2, 0);
    ck_assert_int_eq(zl_decoder_decode(&d, in + 7, 0, &consumed, &msg),
                     ZL_DECODE_NEED_MORE);
    ck_assert_uint_eq(consumed, 0);
    zl_decoder_destroy(&d);
}
END_TEST

START_TEST(decode_zero_length_frames)
{
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    zl_decoder_init(&d, 0);
    ck_assert_int_eq(zl_decoder_decode(&d, BYTES("\x01\x00"), &consumed, &msg),
                     ZL_DECODE_FRAME);
    ck_assert_uint_eq(consumed, 2);
    check_frame(&msg, NULL, 0, ZL_MSG_MORE);
    /* The long form of zero is legal too. */
    ck_assert_int_eq(
        zl_decoder_decode(&d, BYTES("\x02\0\0\0\0\0\0\0\0"), &consumed, &msg),
        ZL_DECODE_FRAME);
    ck_assert_uint_eq(consumed, 9);
    check_frame(&msg, NULL, 0, 0);
    zl_decoder_destroy(&d);
}
END_TEST

START_TEST(decode_long_frame)
{
    uint8_t in[9 + 256];
    memcpy(in, "\x02\x00\x00\x00\x00\x00\x00\x01\x00", 9);
    for (size_t i = 0; i < 256; i++)
        in[9 + i] = (uint8_t)i;
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    zl_decoder_init(&d, 256);
    ck_assert_int_eq(zl_decoder_decode(&d, in, sizeof in, &consumed, &msg),
                     ZL_DECODE_FRAME);
    ck_assert_uint_eq(consumed, sizeof in);
    check_frame(&msg, in + 9, 256, 0);
    zl_decoder_destroy(&d);
}
END_TEST

/* Whole long frames in one buffer take the decoder's fast path: one frame
 * per call, any size with the LONG flag, and the same refusals as the
 * general path (a size over the limit, a size no buffer holds) without
 * allocating for them. */
START_TEST(decode_whole_long_frames)
{
    uint8_t in[2 * (9 + 300) + 9 + 5];
    size_t at = 0;
    for (int f = 0; f < 2; f++) {
        memcpy(in + at, f == 0 ? "\x03" : "\x02",
               1); /* LONG: MORE, then last */
        memcpy(in + at + 1, "\x00\x00\x00\x00\x00\x00\x01\x2c", 8);
        at += 9;
        for (size_t i = 0; i < 300; i++)
            in[at + i] = (uint8_t)(i + (size_t)f);
        at += 300;
    }
    memcpy(in + at, "\x02\x00\x00\x00\x00\x00\x00\x00\x05hello", 14);
    at += 14;
    ck_assert_uint_eq(at, sizeof in);

    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed, pos = 0;
    zl_decoder_init(&d, -1);
    for (int f = 0; f < 2; f++) {
        ck_assert_int_eq(
            zl_decoder_decode(&d, in + pos, sizeof in - pos, &consumed, &msg),
            ZL_DECODE_FRAME);
        ck_assert_uint_eq(consumed, 9 + 300);
        check_frame(&msg, in + pos + 9, 300, f == 0 ? ZL_MSG_MORE : 0);
        zlink_msg_close(&msg);
        pos += consumed;
    }
    ck_assert_int_eq(
        zl_decoder_decode(&d, in + pos, sizeof in - pos, &consumed, &msg),
        ZL_DECODE_FRAME);
    ck_assert_uint_eq(consumed, 14);
    check_frame(&msg, "hello", 5, 0);
    zlink_msg_close(&msg);
    zl_decoder_destroy(&d);

    /* Over the limit, with the whole body there. */
    zl_decoder_init(&d, 299);
    ck_assert_int_eq(zl_decoder_decode(&d, in, 9 + 300, &consumed, &msg),
                     ZL_DECODE_ERROR);
    ck_assert_int_eq(d.error, ZL_DECODE_ERR_TOO_LARGE);
    zl_decoder_destroy(&d);

    /* 2^64 - 1 announced in one piece: refused, never allocated. */
    zl_decoder_init(&d, -1);
    ck_assert_int_eq(
        zl_decoder_decode(&d, BYTES("\x02\xff\xff\xff\xff\xff\xff\xff\xff"),
                          &consumed, &msg),
        ZL_DECODE_ERROR);
    ck_assert_int_eq(d.error, ZL_DECODE_ERR_TOO_LARGE);
    zl_decoder_destroy(&d);
}
END_TEST

START_TEST(decode_command_frame)
{
    /* PING with TTL 10 (deciseconds) and context "ab". */
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    zl_decoder_init(&d, -1);
    ck_assert_int_eq(zl_decoder_decode(&d,
                                       BYTES("\x04\x09\x04PING\x00\x0a"
                                             "ab"),
                                       &consumed, &msg),
                     ZL_DECODE_FRAME);
    ck_assert_uint_eq(consumed, 11);
    check_frame(&msg,
                "\x04PING\x00\x0a"
                "ab",
                9, ZL_MSG_COMMAND);
    zl_decoder_destroy(&d);
}
END_TEST

START_TEST(decode_inline_and_content_bodies)
{
    uint8_t in[2 + ZL_MSG_INLINE_MAX + 1];
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    memset(in, 'x', sizeof in);
    zl_decoder_init(&d, -1);

    in[0] = 0;
    in[1] = ZL_MSG_INLINE_MAX;
    ck_assert_int_eq(
        zl_decoder_decode(&d, in, 2 + ZL_MSG_INLINE_MAX, &consumed, &msg),
        ZL_DECODE_FRAME);
    ck_assert_uint_eq(zl_msg_of(&msg)->kind, ZL_MSG_INLINE);
    check_frame(&msg, in + 2, ZL_MSG_INLINE_MAX, 0);

    in[1] = ZL_MSG_INLINE_MAX + 1;
    ck_assert_int_eq(
        zl_decoder_decode(&d, in, 2 + ZL_MSG_INLINE_MAX + 1, &consumed, &msg),
        ZL_DECODE_FRAME);
    ck_assert_uint_eq(zl_msg_of(&msg)->kind, ZL_MSG_CONTENT);
    check_frame(&msg, in + 2, ZL_MSG_INLINE_MAX + 1, 0);
    zl_decoder_destroy(&d);
}
END_TEST

/* A stream mixing every kind of frame, for the split tests below. */
typedef struct expected_frame {
    size_t size;
    uint8_t flags;
    uint8_t fill;
} expected_frame;

static const expected_frame stream_frames[] = {
    {5, ZL_MSG_MORE, 'a'},
    {0, ZL_MSG_MORE, 0},
    {300, 0, 'b'},
    {6, ZL_MSG_COMMAND, 'c'},
    {ZL_DECODER_DIRECT_MIN + 1000, ZL_MSG_MORE, 'd'},
    {48, 0, 'e'},
    {255, 0, 'f'},
};
#define STREAM_FRAME_COUNT (sizeof stream_frames / sizeof stream_frames[0])

static uint8_t *build_stream(size_t *len)
{
    size_t total = 0;
    for (size_t i = 0; i < STREAM_FRAME_COUNT; i++)
        total += ZL_FRAME_HEADER_MAX + stream_frames[i].size;
    uint8_t *stream = malloc(total);
    ck_assert_ptr_nonnull(stream);
    size_t at = 0;
    for (size_t i = 0; i < STREAM_FRAME_COUNT; i++) {
        const expected_frame *f = &stream_frames[i];
        uint8_t flags = 0;
        if (f->flags & ZL_MSG_MORE)
            flags |= ZL_FRAME_MORE;
        if (f->flags & ZL_MSG_COMMAND)
            flags |= ZL_FRAME_COMMAND;
        at += zl_frame_header_encode(stream + at, flags, f->size);
        memset(stream + at, f->fill, f->size);
        at += f->size;
    }
    *len = at;
    return stream;
}

static void check_stream_frame(zlink_msg_t *msg, size_t index)
{
    ck_assert_uint_lt(index, STREAM_FRAME_COUNT);
    const expected_frame *f = &stream_frames[index];
    ck_assert_uint_eq(zlink_msg_size(msg), f->size);
    const uint8_t *body = zlink_msg_data(msg);
    for (size_t i = 0; i < f->size; i++)
        ck_assert_uint_eq(body[i], f->fill);
    ck_assert_uint_eq(zl_msg_flags(msg) & (ZL_MSG_MORE | ZL_MSG_COMMAND),
                      f->flags);
    zlink_msg_close(msg);
}

/* Feeds the stream in chunks of chunk bytes; every frame must come out. */
static void decode_stream_in_chunks(size_t chunk)
{
    size_t len;
    uint8_t *stream = build_stream(&len);
    zl_decoder d;
    zl_decoder_init(&d, -1);
    size_t frames = 0;
    for (size_t at = 0; at < len; at += chunk) {
        size_t n = len - at < chunk ? len - at : chunk;
        size_t pos = 0;
        while (pos < n) {
            zlink_msg_t msg;
            size_t consumed;
            zl_decode_result r = zl_decoder_decode(&d, stream + at + pos,
                                                   n - pos, &consumed, &msg);
            ck_assert_int_ne(r, ZL_DECODE_ERROR);
            pos += consumed;
            if (r == ZL_DECODE_FRAME)
                check_stream_frame(&msg, frames++);
            else
                ck_assert_uint_eq(pos, n);
        }
    }
    ck_assert_uint_eq(frames, STREAM_FRAME_COUNT);
    zl_decoder_destroy(&d);
    free(stream);
}

START_TEST(decode_byte_by_byte)
{
    decode_stream_in_chunks(1);
}
END_TEST

START_TEST(decode_arbitrary_splits)
{
    static const size_t chunks[] = {2,  3,   7,   8,    9,    10,
                                    64, 255, 256, 4096, 8191, 65536};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++)
        decode_stream_in_chunks(chunks[i]);
}
END_TEST

START_TEST(decode_reserved_flag_bits)
{
    for (int bit = 3; bit < 8; bit++) {
        uint8_t in[] = {(uint8_t)(1u << bit), 1, 'x'};
        zl_decoder d;
        zlink_msg_t msg;
        size_t consumed;
        zl_decoder_init(&d, -1);
        ck_assert_int_eq(zl_decoder_decode(&d, in, sizeof in, &consumed, &msg),
                         ZL_DECODE_ERROR);
        ck_assert_int_eq(d.error, ZL_DECODE_ERR_RESERVED_FLAGS);
        ck_assert_uint_eq(consumed, 1);
        /* A failed decoder stays failed. */
        ck_assert_int_eq(
            zl_decoder_decode(&d, BYTES("\x00\x00"), &consumed, &msg),
            ZL_DECODE_ERROR);
        ck_assert_uint_eq(consumed, 0);
        zl_decoder_destroy(&d);
    }
}
END_TEST

START_TEST(decode_reserved_bits_after_good_frame)
{
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    zl_decoder_init(&d, -1);
    ck_assert_int_eq(
        zl_decoder_decode(&d, BYTES("\x00\x01z\x81\x01z"), &consumed, &msg),
        ZL_DECODE_FRAME);
    check_frame(&msg, "z", 1, 0);
    ck_assert_int_eq(zl_decoder_decode(&d, BYTES("\x81\x01z"), &consumed, &msg),
                     ZL_DECODE_ERROR);
    ck_assert_int_eq(d.error, ZL_DECODE_ERR_RESERVED_FLAGS);
    zl_decoder_destroy(&d);
}
END_TEST

START_TEST(decode_command_with_more)
{
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    zl_decoder_init(&d, -1);
    ck_assert_int_eq(
        zl_decoder_decode(&d, BYTES("\x05\x05\x04PING"), &consumed, &msg),
        ZL_DECODE_ERROR);
    ck_assert_int_eq(d.error, ZL_DECODE_ERR_BAD_COMMAND_FLAGS);
    zl_decoder_destroy(&d);
}
END_TEST

START_TEST(decode_over_max_msg_size)
{
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;

    zl_decoder_init(&d, 5);
    ck_assert_int_eq(
        zl_decoder_decode(&d, BYTES("\x00\x05hello"), &consumed, &msg),
        ZL_DECODE_FRAME);
    check_frame(&msg, "hello", 5, 0);
    zl_decoder_destroy(&d);

    zl_decoder_init(&d, 4);
    ck_assert_int_eq(
        zl_decoder_decode(&d, BYTES("\x00\x05hello"), &consumed, &msg),
        ZL_DECODE_ERROR);
    ck_assert_int_eq(d.error, ZL_DECODE_ERR_TOO_LARGE);
    ck_assert_uint_eq(consumed, 2); /* judged on the header alone */
    zl_decoder_destroy(&d);

    /* Commands count too. */
    zl_decoder_init(&d, 0);
    ck_assert_int_eq(zl_decoder_decode(&d, BYTES("\x04\x01"), &consumed, &msg),
                     ZL_DECODE_ERROR);
    ck_assert_int_eq(d.error, ZL_DECODE_ERR_TOO_LARGE);
    zl_decoder_destroy(&d);
}
END_TEST

/* Sizes a hostile peer might announce. None may be allocated: under ASan an
 * attempt at 2^62 bytes aborts the test. */
START_TEST(decode_hostile_long_sizes)
{
    static const struct {
        const char *header;
        int64_t max;
    } cases[] = {
        {"\x02\x80\x00\x00\x00\x00\x00\x00\x00", -1},      /* 2^63 */
        {"\x02\xff\xff\xff\xff\xff\xff\xff\xff", -1},      /* 2^64 - 1 */
        {"\x02\x40\x00\x00\x00\x00\x00\x00\x00", 1 << 20}, /* 2^62 */
        {"\x02\x00\x00\x00\x00\x00\x10\x00\x01", 1 << 20}, /* 1 MiB + 1 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        zl_decoder d;
        zlink_msg_t msg;
        size_t consumed;
        zl_decoder_init(&d, cases[i].max);
        /* Split inside the size, where a careless decoder would act. */
        ck_assert_int_eq(zl_decoder_decode(&d, (const uint8_t *)cases[i].header,
                                           4, &consumed, &msg),
                         ZL_DECODE_NEED_MORE);
        ck_assert_uint_eq(consumed, 4);
        ck_assert_int_eq(zl_decoder_decode(&d,
                                           (const uint8_t *)cases[i].header + 4,
                                           5, &consumed, &msg),
                         ZL_DECODE_ERROR);
        ck_assert_int_eq(d.error, ZL_DECODE_ERR_TOO_LARGE);
        ck_assert_uint_eq(consumed, 5);
        zl_decoder_destroy(&d);
    }
}
END_TEST

/* A large body: part arrives with the header, the engine reads the rest
 * straight into the message in two reads. */
START_TEST(decode_direct_body)
{
    enum { SIZE = 10000, FIRST = 100, SECOND = 5000 };
    uint8_t *wire = malloc(ZL_FRAME_HEADER_MAX + SIZE);
    size_t header = zl_frame_header_encode(wire, ZL_FRAME_MORE, SIZE);
    for (size_t i = 0; i < SIZE; i++)
        wire[header + i] = (uint8_t)(i * 7);
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    void *buf;
    size_t len;
    zl_decoder_init(&d, -1);

    ck_assert(!zl_decoder_direct_buffer(&d, &buf, &len));
    ck_assert_int_eq(
        zl_decoder_decode(&d, wire, header + FIRST, &consumed, &msg),
        ZL_DECODE_NEED_MORE);
    ck_assert_uint_eq(consumed, header + FIRST);

    ck_assert(zl_decoder_direct_buffer(&d, &buf, &len));
    ck_assert_uint_eq(len, SIZE - FIRST);
    memcpy(buf, wire + header + FIRST, SECOND);
    ck_assert_int_eq(zl_decoder_direct_done(&d, SECOND, &msg),
                     ZL_DECODE_NEED_MORE);

    ck_assert(zl_decoder_direct_buffer(&d, &buf, &len));
    ck_assert_uint_eq(len, SIZE - FIRST - SECOND);
    memcpy(buf, wire + header + FIRST + SECOND, len);
    ck_assert_int_eq(zl_decoder_direct_done(&d, len, &msg), ZL_DECODE_FRAME);
    ck_assert(!zl_decoder_direct_buffer(&d, &buf, &len));
    check_frame(&msg, wire + header, SIZE, ZL_MSG_MORE);

    /* The decoder is back at a frame boundary. */
    ck_assert_int_eq(
        zl_decoder_decode(&d, BYTES("\x00\x02hi"), &consumed, &msg),
        ZL_DECODE_FRAME);
    check_frame(&msg, "hi", 2, 0);
    zl_decoder_destroy(&d);
    free(wire);
}
END_TEST

/* A direct read that fills part of the body, then ordinary decoding of a
 * buffer holding the rest and the next frame. */
START_TEST(decode_direct_then_buffered)
{
    enum { SIZE = ZL_DECODER_DIRECT_MIN };
    uint8_t *wire = malloc(ZL_FRAME_HEADER_MAX + SIZE + 3);
    size_t header = zl_frame_header_encode(wire, 0, SIZE);
    memset(wire + header, 'q', SIZE);
    memcpy(wire + header + SIZE, "\x00\x01r", 3);
    size_t total = header + SIZE + 3;
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    void *buf;
    size_t len;
    zl_decoder_init(&d, -1);

    ck_assert_int_eq(zl_decoder_decode(&d, wire, header, &consumed, &msg),
                     ZL_DECODE_NEED_MORE);
    ck_assert(zl_decoder_direct_buffer(&d, &buf, &len));
    ck_assert_uint_eq(len, SIZE);
    memcpy(buf, wire + header, 1000);
    ck_assert_int_eq(zl_decoder_direct_done(&d, 1000, &msg),
                     ZL_DECODE_NEED_MORE);

    size_t at = header + 1000;
    ck_assert_int_eq(
        zl_decoder_decode(&d, wire + at, total - at, &consumed, &msg),
        ZL_DECODE_FRAME);
    ck_assert_uint_eq(consumed, SIZE - 1000);
    check_frame(&msg, wire + header, SIZE, 0);
    at += consumed;
    ck_assert_int_eq(
        zl_decoder_decode(&d, wire + at, total - at, &consumed, &msg),
        ZL_DECODE_FRAME);
    check_frame(&msg, "r", 1, 0);
    zl_decoder_destroy(&d);
    free(wire);
}
END_TEST

/* With an input owner, a whole large body in the input is shared, not
 * copied: its message points into the owner's block and holds a reference
 * to it. A smaller body and a body that starts before this input are
 * copied, as without an owner. */
START_TEST(decode_shares_large_bodies_with_the_input_owner)
{
    enum { LARGE = ZL_DECODER_DIRECT_MIN, SMALL = 1000 };
    /* The large body fills most of the block: it may share it. */
    size_t room = 2 * ZL_FRAME_HEADER_MAX + LARGE + SMALL;
    zl_content *block = zl_content_alloc(room);
    ck_assert_ptr_nonnull(block);
    uint8_t *wire = block->data;
    size_t at = zl_frame_header_encode(wire, ZL_FRAME_MORE, LARGE);
    memset(wire + at, 'L', LARGE);
    size_t second = at + LARGE;
    size_t end = second + zl_frame_header_encode(wire + second, 0, SMALL);
    memset(wire + end, 's', SMALL);
    end += SMALL;

    zl_decoder d;
    zlink_msg_t large, small;
    size_t consumed;
    zl_decoder_init(&d, -1);
    zl_decoder_set_input_owner(&d, block);
    ck_assert_int_eq(zl_decoder_decode(&d, wire, end, &consumed, &large),
                     ZL_DECODE_FRAME);
    ck_assert_uint_eq(consumed, second);
    ck_assert_ptr_eq(zlink_msg_data(&large), wire + at);
    ck_assert_int_eq(zlink_msg_get(&large, ZLINK_SHARED), 1);
    ck_assert(zlink_msg_more(&large));
    ck_assert_uint_eq(atomic_load(&block->refs), 2);
    ck_assert_int_eq(
        zl_decoder_decode(&d, wire + second, end - second, &consumed, &small),
        ZL_DECODE_FRAME);
    ck_assert_ptr_ne(zlink_msg_data(&small), wire + end - SMALL);
    check_frame(&small, wire + end - SMALL, SMALL, 0);
    ck_assert_uint_eq(atomic_load(&block->refs), 2);

    /* The owner lets go first; the message keeps the block alive (ASan). */
    zl_decoder_set_input_owner(&d, NULL);
    zl_content_release(block);
    uint8_t expect[LARGE];
    memset(expect, 'L', LARGE);
    check_frame(&large, expect, LARGE, ZL_MSG_MORE);
    zl_decoder_destroy(&d);
}
END_TEST

/* Large bodies share their input's block only when together they fill at
 * least half of it: one large body in a mostly empty block is copied, and
 * does not pin the block. The decision is made anew for each input. */
static size_t put_large_frames(uint8_t *wire, size_t count, size_t size)
{
    size_t at = 0;
    for (size_t k = 0; k < count; k++) {
        at += zl_frame_header_encode(wire + at, 0, size);
        memset(wire + at, 'a' + (int)k, size);
        at += size;
    }
    return at;
}

START_TEST(decode_shares_only_a_mostly_full_block)
{
    enum { LARGE = ZL_DECODER_DIRECT_MIN, FRAMES = 4 };
    zl_content *block =
        zl_content_alloc(FRAMES * (ZL_FRAME_HEADER_MAX + LARGE));
    ck_assert_ptr_nonnull(block);
    uint8_t *wire = block->data;
    zl_decoder d;
    zl_decoder_init(&d, -1);
    /* 1 and 2 of 4 bodies: under half the block, copied. 3: shared. */
    for (size_t count = 1; count <= 3; count++) {
        size_t end = put_large_frames(wire, count, LARGE);
        zl_decoder_set_input_owner(&d, block);
        zlink_msg_t msgs[3];
        size_t at = 0;
        for (size_t k = 0; k < count; k++) {
            size_t consumed;
            ck_assert_int_eq(
                zl_decoder_decode(&d, wire + at, end - at, &consumed, &msgs[k]),
                ZL_DECODE_FRAME);
            at += consumed;
            bool shared = zlink_msg_data(&msgs[k]) == wire + at - LARGE;
            ck_assert_int_eq(shared, count == 3);
            ck_assert_int_eq(zlink_msg_get(&msgs[k], ZLINK_SHARED), count == 3);
        }
        ck_assert_uint_eq(atomic_load(&block->refs), count == 3 ? 4 : 1);
        for (size_t k = 0; k < count; k++) {
            uint8_t expect[LARGE];
            memset(expect, 'a' + (int)k, LARGE);
            check_frame(&msgs[k], expect, LARGE, 0);
        }
    }
    zl_decoder_set_input_owner(&d, NULL);
    zl_content_release(block);
    zl_decoder_destroy(&d);
}
END_TEST

/* MAXMSGSIZE bounds all the parts of a message together, and the parts
 * cap their number; a complete message starts both counts again, and
 * commands count in neither. */
START_TEST(decode_limits_whole_messages)
{
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    /* 3 parts of 40 bytes: 120 > 100. */
    uint8_t wire[3 * (2 + 40)];
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        at += zl_frame_header_encode(wire + at, k < 2 ? ZL_FRAME_MORE : 0, 40);
        memset(wire + at, 'p', 40);
        at += 40;
    }
    zl_decoder_init(&d, 100);
    for (int round = 0; round < 3; round++) {
        /* Two parts and a command between messages are fine, again and
         * again: the count starts over with each message. */
        ck_assert_int_eq(zl_decoder_decode(&d, wire, 42, &consumed, &msg),
                         ZL_DECODE_FRAME);
        zlink_msg_close(&msg);
        ck_assert_int_eq(
            zl_decoder_decode(&d, wire + 42, 2 + 40, &consumed, &msg),
            ZL_DECODE_FRAME);
        zlink_msg_close(&msg);
        ck_assert_int_eq(
            zl_decoder_decode(&d, BYTES("\x04\x05\x04PING"), &consumed, &msg),
            ZL_DECODE_FRAME);
        zlink_msg_close(&msg);
        ck_assert_int_eq(zl_decoder_decode(&d,
                                           BYTES("\x00\x03"
                                                 "end"),
                                           &consumed, &msg),
                         ZL_DECODE_FRAME);
        zlink_msg_close(&msg);
    }
    ck_assert_int_eq(zl_decoder_decode(&d, wire, at, &consumed, &msg),
                     ZL_DECODE_FRAME);
    zlink_msg_close(&msg);
    ck_assert_int_eq(zl_decoder_decode(&d, wire + 42, at - 42, &consumed, &msg),
                     ZL_DECODE_FRAME);
    zlink_msg_close(&msg);
    ck_assert_int_eq(zl_decoder_decode(&d, wire + 84, at - 84, &consumed, &msg),
                     ZL_DECODE_ERROR);
    ck_assert_int_eq(d.error, ZL_DECODE_ERR_TOO_LARGE);
    zl_decoder_destroy(&d);

    /* Parts: 3 allowed, the 4th refused at its header. */
    zl_decoder_init(&d, -1);
    zl_decoder_set_max_parts(&d, 3);
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < 3; k++) {
            const uint8_t *part =
                (const uint8_t *)(k < 2 ? "\x01\x01x" : "\x00\x01y");
            ck_assert_int_eq(zl_decoder_decode(&d, part, 3, &consumed, &msg),
                             ZL_DECODE_FRAME);
            zlink_msg_close(&msg);
        }
    }
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(
            zl_decoder_decode(&d, BYTES("\x01\x01x"), &consumed, &msg),
            ZL_DECODE_FRAME);
        zlink_msg_close(&msg);
    }
    ck_assert_int_eq(zl_decoder_decode(&d, BYTES("\x00"), &consumed, &msg),
                     ZL_DECODE_NEED_MORE);
    ck_assert_int_eq(zl_decoder_decode(&d, BYTES("\x01"), &consumed, &msg),
                     ZL_DECODE_ERROR);
    ck_assert_int_eq(d.error, ZL_DECODE_ERR_TOO_MANY_PARTS);
    zl_decoder_destroy(&d);
}
END_TEST

/* A huge announced body reserves ZL_DECODER_RESERVE_AHEAD at first, and
 * its room at most doubles as bytes arrive; the body still arrives whole,
 * by direct reads and by copies from the input alike. */
START_TEST(decode_large_body_grows_as_it_arrives)
{
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    void *buf;
    size_t len;
    uint8_t header[ZL_FRAME_HEADER_MAX];
    zl_decoder_init(&d, -1);
    size_t hlen = zl_frame_header_encode(header, 0, (uint64_t)8 << 30);
    ck_assert_int_eq(zl_decoder_decode(&d, header, hlen, &consumed, &msg),
                     ZL_DECODE_NEED_MORE);
    ck_assert(zl_decoder_direct_buffer(&d, &buf, &len));
    ck_assert_uint_eq(len, ZL_DECODER_RESERVE_AHEAD);
    ck_assert_int_eq(zl_decoder_direct_done(&d, 5, &msg), ZL_DECODE_NEED_MORE);
    ck_assert(zl_decoder_direct_buffer(&d, &buf, &len));
    ck_assert_uint_eq(len, ZL_DECODER_RESERVE_AHEAD - 5);
    zl_decoder_destroy(&d); /* frees the partial body (ASan) */

    enum { SIZE = 3 * 1024 * 1024 + 7 };
    uint8_t *wire = malloc(ZL_FRAME_HEADER_MAX + SIZE + 4);
    ck_assert_ptr_nonnull(wire);
    hlen = zl_frame_header_encode(wire, ZL_FRAME_MORE, SIZE);
    for (size_t i = 0; i < SIZE; i++)
        wire[hlen + i] = (uint8_t)(i * 13 + i / 4099);
    memcpy(wire + hlen + SIZE, "\x00\x02ok", 4);
    size_t total = hlen + SIZE + 4;
    zl_decoder_init(&d, -1);
    size_t at = 0, have = 0;
    int frames = 0;
    for (int turn = 0; at < total; turn++) {
        if (turn % 2 == 0 && zl_decoder_direct_buffer(&d, &buf, &len)) {
            /* Never more room than twice what arrived (or the first). */
            ck_assert_uint_le(have + len, have * 2 > ZL_DECODER_RESERVE_AHEAD
                                              ? have * 2
                                              : ZL_DECODER_RESERVE_AHEAD);
            size_t n = len > 100000 ? 100000 : len;
            memcpy(buf, wire + at, n);
            at += n;
            have += n;
            ck_assert_int_eq(zl_decoder_direct_done(&d, n, &msg),
                             ZL_DECODE_NEED_MORE);
            continue;
        }
        /* Through the input path: up to 300000 bytes at a time. */
        size_t n = total - at > 300000 ? 300000 : total - at;
        zl_decode_result r =
            zl_decoder_decode(&d, wire + at, n, &consumed, &msg);
        ck_assert_int_ne(r, ZL_DECODE_ERROR);
        if (at < hlen + SIZE)
            have += consumed - (at < hlen ? hlen - at : 0);
        at += consumed;
        if (r == ZL_DECODE_FRAME) {
            if (frames++ == 0)
                check_frame(&msg, wire + hlen, SIZE, ZL_MSG_MORE);
            else
                check_frame(&msg, "ok", 2, 0);
        }
    }
    ck_assert_int_eq(frames, 2);
    zl_decoder_destroy(&d);
    free(wire);
}
END_TEST

START_TEST(decode_no_direct_for_small_bodies)
{
    uint8_t wire[ZL_FRAME_HEADER_MAX];
    size_t header = zl_frame_header_encode(wire, 0, ZL_DECODER_DIRECT_MIN - 1);
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    void *buf;
    size_t len;
    zl_decoder_init(&d, -1);
    ck_assert_int_eq(zl_decoder_decode(&d, wire, header, &consumed, &msg),
                     ZL_DECODE_NEED_MORE);
    ck_assert(!zl_decoder_direct_buffer(&d, &buf, &len));
    /* Destroying mid-body frees the partial message (ASan checks). */
    zl_decoder_destroy(&d);
}
END_TEST

START_TEST(decode_destroy_mid_direct_body)
{
    uint8_t wire[ZL_FRAME_HEADER_MAX];
    size_t header = zl_frame_header_encode(wire, 0, 100000);
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    void *buf;
    size_t len;
    zl_decoder_init(&d, -1);
    ck_assert_int_eq(zl_decoder_decode(&d, wire, header, &consumed, &msg),
                     ZL_DECODE_NEED_MORE);
    ck_assert(zl_decoder_direct_buffer(&d, &buf, &len));
    ck_assert_int_eq(zl_decoder_direct_done(&d, 10, &msg), ZL_DECODE_NEED_MORE);
    zl_decoder_destroy(&d);
}
END_TEST

/* --- commands --------------------------------------------------------- */

START_TEST(command_parse)
{
    const uint8_t *name, *data;
    size_t name_len, data_len;
    ck_assert_int_eq(zl_command_parse(BYTES("\x04PING\x00\x0a"), &name,
                                      &name_len, &data, &data_len),
                     0);
    ck_assert_uint_eq(name_len, 4);
    ck_assert_mem_eq(name, "PING", 4);
    ck_assert_uint_eq(data_len, 2);
    ck_assert_mem_eq(data, "\x00\x0a", 2);
    ck_assert(zl_command_is(name, name_len, "PING"));
    ck_assert(!zl_command_is(name, name_len, "PONG"));
    ck_assert(!zl_command_is(name, name_len, "PIN"));
    ck_assert(!zl_command_is(name, name_len, "PINGS"));

    ck_assert_int_eq(zl_command_parse(BYTES("\x05READY"), &name, &name_len,
                                      &data, &data_len),
                     0);
    ck_assert(zl_command_is(name, name_len, "READY"));
    ck_assert_uint_eq(data_len, 0);
}
END_TEST

START_TEST(command_parse_malformed)
{
    const uint8_t *name, *data;
    size_t name_len, data_len;
    ck_assert_int_eq(zl_command_parse((const uint8_t *)"", 0, &name, &name_len,
                                      &data, &data_len),
                     -1);
    ck_assert_int_eq(
        zl_command_parse(BYTES("\x00"), &name, &name_len, &data, &data_len),
        -1);
    ck_assert_int_eq(
        zl_command_parse(BYTES("\x05READ"), &name, &name_len, &data, &data_len),
        -1);
    ck_assert_int_eq(zl_command_parse(BYTES("\xff"
                                            "abc"),
                                      &name, &name_len, &data, &data_len),
                     -1);
}
END_TEST

START_TEST(command_encode)
{
    uint8_t out[512];
    ck_assert_uint_eq(zl_command_encode(out, sizeof out, "PING", "\x00\x0a", 2),
                      9);
    ck_assert_mem_eq(out, "\x04\x07\x04PING\x00\x0a", 9);
    ck_assert_uint_eq(zl_command_encode(out, 9, "PING", "\x00\x0a", 2), 9);
    ck_assert_uint_eq(zl_command_encode(out, 8, "PING", "\x00\x0a", 2), 0);

    ck_assert_uint_eq(zl_command_encode(out, sizeof out, "PONG", NULL, 0), 7);
    ck_assert_mem_eq(out, "\x04\x05\x04PONG", 7);

    ck_assert_uint_eq(
        zl_command_encode(out, sizeof out, "SUBSCRIBE", "topic", 5), 17);
    ck_assert_mem_eq(out, "\x04\x0f\x09SUBSCRIBEtopic", 17);

    /* A body over 255 bytes takes the long header. */
    uint8_t data[300];
    memset(data, 'z', sizeof data);
    ck_assert_uint_eq(zl_command_encode(out, sizeof out, "ERROR", data, 300),
                      9 + 1 + 5 + 300);
    ck_assert_mem_eq(out,
                     "\x06\x00\x00\x00\x00\x00\x00\x01\x32\x05"
                     "ERROR",
                     15);
    ck_assert_mem_eq(out + 15, data, 300);

    ck_assert_uint_eq(zl_command_encode(out, sizeof out, "", NULL, 0), 0);
}
END_TEST

START_TEST(property_encode)
{
    uint8_t out[32];
    ck_assert_uint_eq(zl_property_encode(out, sizeof out, "Identity", "abc", 3),
                      16);
    ck_assert_mem_eq(out,
                     "\x08Identity\x00\x00\x00\x03"
                     "abc",
                     16);
    ck_assert_uint_eq(zl_property_encode(out, 16, "Identity", "abc", 3), 16);
    ck_assert_uint_eq(zl_property_encode(out, 15, "Identity", "abc", 3), 0);
    ck_assert_uint_eq(zl_property_encode(out, sizeof out, "X", NULL, 0), 6);
    ck_assert_mem_eq(out, "\x01X\x00\x00\x00\x00", 6);
}
END_TEST

/* body: 1 + 5 ("READY") + 1 + 11 ("Socket-Type") + 4 + 6 ("DEALER") = 28,
 * + 1 + 8 ("Identity") + 4 + 0 = 41: a DEALER announces its empty identity,
 * as libzmq does. */
static const char ready_dealer[] = "\x04\x29\x05READY\x0bSocket-Type"
                                   "\x00\x00\x00\x06"
                                   "DEALER\x08Identity\x00\x00\x00\x00";

START_TEST(ready_encode_dealer)
{
    uint8_t out[64];
    ck_assert_uint_eq(sizeof ready_dealer - 1, 43);
    ck_assert_uint_eq(zl_ready_encode(out, sizeof out, ZLINK_DEALER, NULL, 0),
                      43);
    ck_assert_mem_eq(out, ready_dealer, 43);
    ck_assert_uint_eq(zl_ready_encode(out, 43, ZLINK_DEALER, NULL, 0), 43);
    ck_assert_uint_eq(zl_ready_encode(out, 42, ZLINK_DEALER, NULL, 0), 0);
    /* REQ and ROUTER too; the other types announce none. */
    ck_assert_uint_eq(zl_ready_encode(out, sizeof out, ZLINK_REQ, NULL, 0), 40);
    ck_assert_uint_eq(zl_ready_encode(out, sizeof out, ZLINK_ROUTER, NULL, 0),
                      43);
    ck_assert_uint_eq(zl_ready_encode(out, sizeof out, ZLINK_PUSH, NULL, 0),
                      28);
}
END_TEST

START_TEST(ready_encode_with_identity)
{
    /* 28 as above for ROUTER, + 1 + 8 ("Identity") + 4 + 3 = 44 */
    static const char expect[] = "\x04\x2c\x05READY\x0bSocket-Type"
                                 "\x00\x00\x00\x06"
                                 "ROUTER\x08Identity\x00\x00\x00\x03"
                                 "id1";
    uint8_t out[64];
    ck_assert_uint_eq(zl_ready_encode(out, sizeof out, ZLINK_ROUTER, "id1", 3),
                      46);
    ck_assert_mem_eq(out, expect, 46);

    ck_assert_uint_eq(zl_ready_encode(out, sizeof out, ZLINK_SUB, NULL, 0), 27);
    ck_assert_mem_eq(out, "\x04\x19\x05READY\x0bSocket-Type\x00\x00\x00\x03SUB",
                     27);
}
END_TEST

START_TEST(ready_encode_long_identity)
{
    /* A 255-byte identity makes the body long enough for the long header. */
    uint8_t identity[255];
    uint8_t out[400];
    memset(identity, 'i', sizeof identity);
    size_t n = zl_ready_encode(out, sizeof out, ZLINK_DEALER, identity, 255);
    ck_assert_uint_eq(n, 9 + 28 + 13 + 255);
    ck_assert_mem_eq(out, "\x06\x00\x00\x00\x00\x00\x00\x01\x28\x05READY", 15);
}
END_TEST

START_TEST(ready_encode_unknown_type)
{
    uint8_t out[64];
    ck_assert_uint_eq(zl_ready_encode(out, sizeof out, 11, NULL, 0), 0);
    ck_assert_uint_eq(zl_ready_encode(out, sizeof out, -1, NULL, 0), 0);
}
END_TEST

typedef struct collected {
    int count;
    char names[4][32];
    char values[4][32];
    int stop_at; /* 1-based index to stop at, with result 7 */
} collected;

static int collect(void *arg, const uint8_t *name, size_t name_len,
                   const uint8_t *value, size_t value_len)
{
    collected *c = arg;
    ck_assert_int_lt(c->count, 4);
    ck_assert_uint_lt(name_len, 32);
    ck_assert_uint_lt(value_len, 32);
    memcpy(c->names[c->count], name, name_len);
    c->names[c->count][name_len] = '\0';
    memcpy(c->values[c->count], value, value_len);
    c->values[c->count][value_len] = '\0';
    c->count++;
    return c->count == c->stop_at ? 7 : 0;
}

/* Our own READY, through the decoder and back, as the engine will do. */
/* PLAIN's HELLO: the name, then each credential as a short string. */
START_TEST(plain_hello_encode)
{
    uint8_t out[600];
    size_t n = zl_plain_hello_encode(out, sizeof out, "ab", 2, "xyz", 3);
    static const uint8_t want[] = {0x04, 13,  5,   'H', 'E', 'L', 'L', 'O',
                                   2,    'a', 'b', 3,   'x', 'y', 'z'};
    ck_assert_uint_eq(n, sizeof want);
    ck_assert_mem_eq(out, want, sizeof want);
    /* Empty credentials are two zero lengths; 255 bytes each still fit. */
    ck_assert_uint_eq(zl_plain_hello_encode(out, sizeof out, NULL, 0, NULL, 0),
                      2 + 8);
    uint8_t big[256] = {0};
    ck_assert_uint_eq(
        zl_plain_hello_encode(out, sizeof out, big, 255, big, 255),
        9 + 6 + 2 + 510);
    ck_assert_uint_eq(zl_plain_hello_encode(out, sizeof out, big, 256, big, 1),
                      0);
    ck_assert_uint_eq(zl_plain_hello_encode(out, 10, "ab", 2, "xyz", 3), 0);
}
END_TEST

/* The status code of an ERROR whose reason is text. */
static int status_of(const char *text)
{
    uint8_t reason[64];
    size_t n = strlen(text);
    ck_assert_uint_lt(n, sizeof reason);
    reason[0] = (uint8_t)n;
    memcpy(reason + 1, text, n);
    return zl_error_status_code(reason, n + 1);
}

/* An ERROR's reason gives a ZAP status code only when it is exactly 300,
 * 400 or 500; libzmq 4.3's "^RROR" body is recognised by its name. */
START_TEST(plain_error_reasons)
{
    ck_assert_int_eq(status_of("300"), 300);
    ck_assert_int_eq(status_of("400"), 400);
    ck_assert_int_eq(status_of("500"), 500);
    ck_assert_int_eq(status_of("200"), 0);
    ck_assert_int_eq(status_of("401"), 0);
    ck_assert_int_eq(status_of("4000"), 0);
    ck_assert_int_eq(status_of("Invalid socket type"), 0);
    static const uint8_t truncated[] = {3, '4', '0'};
    ck_assert_int_eq(zl_error_status_code(truncated, sizeof truncated), 0);
    ck_assert_int_eq(zl_error_status_code(NULL, 0), 0);
    static const uint8_t libzmq43[] = {0x5e, 'R', 'R', 'O', 'R',
                                       3,    '4', '0', '0'};
    const uint8_t *data;
    size_t len;
    ck_assert(zl_plain_libzmq43_error(libzmq43, sizeof libzmq43, &data, &len));
    ck_assert_uint_eq(len, 4);
    ck_assert_int_eq(zl_error_status_code(data, len), 400);
    static const uint8_t error[] = {5,   'E', 'R', 'R', 'O',
                                    'R', 3,   '4', '0', '0'};
    ck_assert(!zl_plain_libzmq43_error(error, sizeof error, &data, &len));
    ck_assert(!zl_plain_libzmq43_error(libzmq43, 4, &data, &len));
}
END_TEST

START_TEST(ready_round_trip)
{
    uint8_t wire[64];
    size_t n = zl_ready_encode(wire, sizeof wire, ZLINK_ROUTER, "me", 2);
    zl_decoder d;
    zlink_msg_t msg;
    size_t consumed;
    zl_decoder_init(&d, -1);
    ck_assert_int_eq(zl_decoder_decode(&d, wire, n, &consumed, &msg),
                     ZL_DECODE_FRAME);
    ck_assert_uint_eq(consumed, n);
    ck_assert(zl_msg_flags(&msg) & ZL_MSG_COMMAND);

    const uint8_t *name, *data;
    size_t name_len, data_len;
    ck_assert_int_eq(zl_command_parse(zlink_msg_data(&msg),
                                      zlink_msg_size(&msg), &name, &name_len,
                                      &data, &data_len),
                     0);
    ck_assert(zl_command_is(name, name_len, "READY"));
    collected c = {0};
    ck_assert_int_eq(zl_properties_parse(data, data_len, collect, &c), 0);
    ck_assert_int_eq(c.count, 2);
    ck_assert_str_eq(c.names[0], "Socket-Type");
    ck_assert_str_eq(c.values[0], "ROUTER");
    ck_assert_str_eq(c.names[1], "Identity");
    ck_assert_str_eq(c.values[1], "me");
    zlink_msg_close(&msg);
    zl_decoder_destroy(&d);
}
END_TEST

/* zmq4 style: Identity first, an unknown property, an empty value. */
static const char mixed_properties[] = "\x08Identity\x00\x00\x00\x00"
                                       "\x05X-Foo\x00\x00\x00\x03"
                                       "bar"
                                       "\x0bSocket-Type\x00\x00\x00\x03"
                                       "PUB";
/* Where each property ends: the only lengths that parse. */
static const size_t mixed_ends[] = {0, 13, 13 + 13, 13 + 13 + 19};

START_TEST(properties_any_order)
{
    collected c = {0};
    ck_assert_uint_eq(sizeof mixed_properties - 1, 45);
    ck_assert_int_eq(zl_properties_parse(BYTES(mixed_properties), collect, &c),
                     0);
    ck_assert_int_eq(c.count, 3);
    ck_assert_str_eq(c.names[0], "Identity");
    ck_assert_str_eq(c.values[0], "");
    ck_assert_str_eq(c.names[1], "X-Foo");
    ck_assert_str_eq(c.values[1], "bar");
    ck_assert_str_eq(c.names[2], "Socket-Type");
    ck_assert_str_eq(c.values[2], "PUB");
}
END_TEST

START_TEST(properties_truncated)
{
    const uint8_t *in = (const uint8_t *)mixed_properties;
    size_t full = sizeof mixed_properties - 1;
    for (size_t len = 0; len <= full; len++) {
        bool at_end = false;
        for (size_t i = 0; i < sizeof mixed_ends / sizeof mixed_ends[0]; i++)
            at_end |= mixed_ends[i] == len;
        collected c = {0};
        /* A copy of exactly len bytes, so ASan sees any over-read. */
        uint8_t *copy = malloc(len + 1);
        memcpy(copy, in, len);
        ck_assert_msg(zl_properties_parse(copy, len, collect, &c) ==
                          (at_end ? 0 : -1),
                      "length %zu", len);
        free(copy);
    }
}
END_TEST

START_TEST(properties_hostile_lengths)
{
    collected c = {0};
    ck_assert_int_eq(zl_properties_parse(BYTES("\x01X\xff\xff\xff\xff"
                                               "abc"),
                                         collect, &c),
                     -1);
    ck_assert_int_eq(zl_properties_parse(BYTES("\x01X\x00\x00\x00\x04"
                                               "abc"),
                                         collect, &c),
                     -1);
    ck_assert_int_eq(zl_properties_parse(BYTES("\xff"
                                               "X"),
                                         collect, &c),
                     -1);
    ck_assert_int_eq(c.count, 0);
}
END_TEST

START_TEST(properties_callback_stops)
{
    collected c = {.stop_at = 2};
    ck_assert_int_eq(zl_properties_parse(BYTES(mixed_properties), collect, &c),
                     7);
    ck_assert_int_eq(c.count, 2);
}
END_TEST

/* --- socket types ----------------------------------------------------- */

START_TEST(socket_type_names)
{
    static const char *const names[] = {"PAIR", "PUB",    "SUB",    "REQ",
                                        "REP",  "DEALER", "ROUTER", "PULL",
                                        "PUSH", "XPUB",   "XSUB"};
    for (int type = 0; type < 11; type++) {
        ck_assert_str_eq(zl_socket_type_name(type), names[type]);
        ck_assert_int_eq(zl_socket_type_from_name((const uint8_t *)names[type],
                                                  strlen(names[type])),
                         type);
    }
    ck_assert_int_eq(ZLINK_PAIR, 0);
    ck_assert_int_eq(ZLINK_PUB, 1);
    ck_assert_int_eq(ZLINK_SUB, 2);
    ck_assert_int_eq(ZLINK_DEALER, 5);
    ck_assert_int_eq(ZLINK_ROUTER, 6);
    ck_assert_int_eq(ZLINK_XPUB, 9);
    ck_assert_int_eq(ZLINK_XSUB, 10);
    ck_assert_ptr_null(zl_socket_type_name(-1));
    ck_assert_ptr_null(zl_socket_type_name(11));
    ck_assert_int_eq(zl_socket_type_from_name(BYTES("dealer")), -1);
    ck_assert_int_eq(zl_socket_type_from_name(BYTES("DEALERS")), -1);
    ck_assert_int_eq(zl_socket_type_from_name(BYTES("DEAL")), -1);
    ck_assert_int_eq(zl_socket_type_from_name(BYTES("SERVER")), -1);
    ck_assert_int_eq(zl_socket_type_from_name(BYTES("")), -1);
    ck_assert_int_eq(zl_socket_type_from_name(BYTES("PUB\0")), -1);
}
END_TEST

START_TEST(socket_type_compatibility)
{
    /* Spec 37's table, one row per socket type. */
    static const struct {
        int type;
        int peers[4];
        int count;
    } table[] = {
        {ZLINK_PAIR, {ZLINK_PAIR}, 1},
        {ZLINK_PUB, {ZLINK_SUB, ZLINK_XSUB}, 2},
        {ZLINK_SUB, {ZLINK_PUB, ZLINK_XPUB}, 2},
        {REQ, {REP, ZLINK_ROUTER}, 2},
        {REP, {REQ, ZLINK_DEALER}, 2},
        {ZLINK_DEALER, {REP, ZLINK_DEALER, ZLINK_ROUTER}, 3},
        {ZLINK_ROUTER, {REQ, ZLINK_DEALER, ZLINK_ROUTER}, 3},
        {PULL, {PUSH}, 1},
        {PUSH, {PULL}, 1},
        {ZLINK_XPUB, {ZLINK_SUB, ZLINK_XSUB}, 2},
        {ZLINK_XSUB, {ZLINK_PUB, ZLINK_XPUB}, 2},
    };
    int allowed = 0;
    for (size_t row = 0; row < sizeof table / sizeof table[0]; row++) {
        for (int theirs = -1; theirs <= 11; theirs++) {
            bool expect = false;
            for (int i = 0; i < table[row].count; i++)
                expect |= table[row].peers[i] == theirs;
            ck_assert_msg(zl_socket_types_compatible(table[row].type, theirs) ==
                              expect,
                          "%d with %d", table[row].type, theirs);
            /* The table is symmetric. */
            ck_assert(zl_socket_types_compatible(theirs, table[row].type) ==
                      expect);
            allowed += expect;
        }
    }
    ck_assert_int_eq(allowed, 21);
    ck_assert(!zl_socket_types_compatible(11, 11));
    ck_assert(!zl_socket_types_compatible(-1, ZLINK_PAIR));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("codec");
    TCase *tc = tcase_create("greeting");
    tcase_add_test(tc, greeting_encode_null);
    tcase_add_test(tc, greeting_encode_plain_as_server);
    tcase_add_test(tc, greeting_encode_truncates_mechanism);
    tcase_add_test(tc, greeting_decode_null);
    tcase_add_test(tc, greeting_decode_twenty_char_mechanism);
    tcase_add_test(tc, greeting_decode_rejects_junk_after_mechanism);
    tcase_add_test(tc, greeting_libzmq_in_pieces);
    tcase_add_test(tc, greeting_accepts_any_padding);
    tcase_add_test(tc, greeting_bad_signature);
    tcase_add_test(tc, greeting_versions);
    suite_add_tcase(s, tc);

    tc = tcase_create("frame");
    tcase_add_test(tc, frame_header_short);
    tcase_add_test(tc, frame_header_long);
    tcase_add_test(tc, frame_header_never_sends_reserved_bits);
    suite_add_tcase(s, tc);

    tc = tcase_create("decoder");
    tcase_add_test(tc, decode_short_frame);
    tcase_add_test(tc, decode_whole_frames_of_every_small_size);
    tcase_add_test(tc, small_copy_every_length);
    tcase_add_test(tc, decode_one_frame_per_call);
    tcase_add_test(tc, decode_zero_length_frames);
    tcase_add_test(tc, decode_long_frame);
    tcase_add_test(tc, decode_whole_long_frames);
    tcase_add_test(tc, decode_command_frame);
    tcase_add_test(tc, decode_inline_and_content_bodies);
    tcase_add_test(tc, decode_byte_by_byte);
    tcase_add_test(tc, decode_arbitrary_splits);
    tcase_add_test(tc, decode_reserved_flag_bits);
    tcase_add_test(tc, decode_reserved_bits_after_good_frame);
    tcase_add_test(tc, decode_command_with_more);
    tcase_add_test(tc, decode_over_max_msg_size);
    tcase_add_test(tc, decode_hostile_long_sizes);
    tcase_add_test(tc, decode_direct_body);
    tcase_add_test(tc, decode_direct_then_buffered);
    tcase_add_test(tc, decode_shares_large_bodies_with_the_input_owner);
    tcase_add_test(tc, decode_shares_only_a_mostly_full_block);
    tcase_add_test(tc, decode_limits_whole_messages);
    tcase_add_test(tc, decode_large_body_grows_as_it_arrives);
    tcase_add_test(tc, decode_no_direct_for_small_bodies);
    tcase_add_test(tc, decode_destroy_mid_direct_body);
    suite_add_tcase(s, tc);

    tc = tcase_create("command");
    tcase_add_test(tc, command_parse);
    tcase_add_test(tc, command_parse_malformed);
    tcase_add_test(tc, command_encode);
    tcase_add_test(tc, property_encode);
    tcase_add_test(tc, ready_encode_dealer);
    tcase_add_test(tc, ready_encode_with_identity);
    tcase_add_test(tc, ready_encode_long_identity);
    tcase_add_test(tc, ready_encode_unknown_type);
    tcase_add_test(tc, ready_round_trip);
    tcase_add_test(tc, plain_hello_encode);
    tcase_add_test(tc, plain_error_reasons);
    tcase_add_test(tc, properties_any_order);
    tcase_add_test(tc, properties_truncated);
    tcase_add_test(tc, properties_hostile_lengths);
    tcase_add_test(tc, properties_callback_stops);
    suite_add_tcase(s, tc);

    tc = tcase_create("socket_type");
    tcase_add_test(tc, socket_type_names);
    tcase_add_test(tc, socket_type_compatibility);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
