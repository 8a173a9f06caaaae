/* fuzz_zmtp.c — a libFuzzer target for the ZMTP parsing that faces the
 * network: the greeting, the frame decoder, command bodies and READY
 * properties. Every input is a peer's bytes, and the peer is hostile:
 * nothing it sends may read or write out of bounds, leak, or break the
 * decoder's contract. AddressSanitizer, UBSan and LeakSanitizer judge.
 *
 * The decoder is fed as the engine feeds it (engine_input.c): reads of varying
 * length land in a refcounted read buffer that is the decoder's input
 * owner, so bodies of ZL_DECODER_DIRECT_MIN bytes or more that arrive whole
 * share it; a large body that does not is read straight into its message;
 * and a read buffer that decoded messages still share is never written
 * again, a new one takes its place. Decoded messages are held for a while
 * before they are closed, so that a shared buffer outlives the reads after
 * it.
 *
 * The input: byte 0 seeds the read lengths, byte 1 picks the maximum
 * message size (ZLINK_MAXMSGSIZE), the rest is the stream. A stream that
 * starts with a valid greeting has its frames decoded after it, as the
 * engine does; any other is decoded from its first byte. The frames'
 * start is also checked the way a blocking receive takes a small message
 * itself (check_direct_take).
 *
 * Built by ci/test.sh's fuzz stage (-DZLINK_BUILD_FUZZ=ON, clang), which
 * runs a fixed number of inputs from a fixed seed, starting from the seeds
 * that LLVMFuzzerInitialize writes into $ZLINK_FUZZ_SEEDS. Run it longer
 * by hand with -max_total_time=N. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "direct_recv.h"
#include "msg.h"
#include "zmtp/zmtp.h"

/* Small enough that short inputs cross its end, large enough to hold a
 * whole body the decoder may share. */
#define READ_BUFFER_SIZE (ZL_DECODER_DIRECT_MIN + 4096)
#define HELD_MAX 4

typedef struct feed {
    const uint8_t *stream;
    size_t len, pos;
    uint32_t rng;
    zl_content *block; /* the read buffer, the decoder's input owner */
    zlink_msg_t held[HELD_MAX];
    uint32_t held_hash[HELD_MAX]; /* of each held body, when decoded */
    size_t held_count, held_next;
    int64_t max_msg_size, max_msg_parts;
    uint64_t msg_bytes, msg_parts; /* of the message in progress */
    unsigned sink;                 /* every byte handed out is read into it */
} feed;

static void fail_contract(void)
{
    /* A broken promise of the decoder's API: a crash is what the fuzzer
     * reports, with the input that caused it. */
    abort();
}

/* The length of the next read: mostly short, sometimes long, as a socket
 * under load returns them. */
static size_t next_read_len(feed *f)
{
    f->rng = f->rng * 1103515245u + 12345u;
    uint32_t r = f->rng >> 8;
    size_t len = (r & 3) == 0 ? 1 + r % READ_BUFFER_SIZE : 1 + r % 64;
    size_t left = f->len - f->pos;
    return len < left ? len : left;
}

static void read_bytes(feed *f, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        f->sink += b[i];
}

/* FNV-1a of a message's body. */
static uint32_t body_hash(zlink_msg_t *msg)
{
    const uint8_t *b = zlink_msg_data(msg);
    uint32_t h = 2166136261u;
    for (size_t i = 0, n = zlink_msg_size(msg); i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

/* Closes a held message, whose bytes must still be those it was decoded
 * with: a read buffer written again while a message shares it changes
 * them. */
static void release_held(feed *f, size_t i)
{
    if (body_hash(&f->held[i]) != f->held_hash[i])
        fail_contract();
    zlink_msg_close(&f->held[i]);
    zlink_msg_init(&f->held[i]);
}

static int on_property(void *arg, const uint8_t *name, size_t name_len,
                       const uint8_t *value, size_t value_len)
{
    feed *f = arg;
    read_bytes(f, name, name_len);
    read_bytes(f, value, value_len);
    if (zl_command_is(name, name_len, "Socket-Type"))
        f->sink += (unsigned)zl_socket_type_from_name(value, value_len);
    return 0;
}

/* What the engine would do with a frame: read its bytes, parse it as a
 * command when it is one, then hold it for a while. */
static void take_frame(feed *f, zlink_msg_t *msg)
{
    size_t size = zlink_msg_size(msg);
    /* The limits hold for whole messages: all parts together. */
    if (!(zl_msg_flags(msg) & ZL_MSG_COMMAND)) {
        f->msg_bytes += size;
        f->msg_parts++;
        if ((f->max_msg_size >= 0 &&
             f->msg_bytes > (uint64_t)f->max_msg_size) ||
            (f->max_msg_parts >= 0 &&
             f->msg_parts > (uint64_t)f->max_msg_parts))
            fail_contract();
        if (!(zl_msg_flags(msg) & ZL_MSG_MORE))
            f->msg_bytes = f->msg_parts = 0;
    } else if (f->max_msg_size >= 0 && size > (uint64_t)f->max_msg_size) {
        fail_contract();
    }
    const uint8_t *body = zlink_msg_data(msg);
    read_bytes(f, body, size);
    const uint8_t *name, *data;
    size_t name_len, data_len;
    if ((zl_msg_flags(msg) & ZL_MSG_COMMAND) &&
        zl_command_parse(body, size, &name, &name_len, &data, &data_len) == 0 &&
        zl_command_is(name, name_len, "READY"))
        (void)zl_properties_parse(data, data_len, on_property, f);

    size_t i = f->held_next;
    f->held_next = (f->held_next + 1) % HELD_MAX;
    if (f->held_count == HELD_MAX)
        release_held(f, i);
    else
        f->held_count++;
    f->held_hash[i] = body_hash(msg);
    zlink_msg_move(&f->held[i], msg);
    zlink_msg_close(msg);
}

/* A read buffer to write into: the current one unless a message still
 * shares it (engine_input.c: ensure_in_buf_writable). */
static bool writable_block(feed *f, zl_decoder *d)
{
    if (f->block && atomic_load(&f->block->refs) > 1) {
        zl_content_release(f->block);
        f->block = NULL;
    }
    if (!f->block) {
        f->block = zl_content_alloc(READ_BUFFER_SIZE);
        if (!f->block)
            return false;
        zl_decoder_set_input_owner(d, f->block);
    }
    return true;
}

/* Decodes one read that landed in the read buffer. False once the decoder
 * reported a protocol error: the engine closes the connection there. */
static bool decode_read(feed *f, zl_decoder *d, size_t n)
{
    const uint8_t *buf = f->block->data;
    size_t off = 0;
    while (off < n) {
        size_t consumed = 0;
        zlink_msg_t msg;
        zl_decode_result r =
            zl_decoder_decode(d, buf + off, n - off, &consumed, &msg);
        if (consumed > n - off)
            fail_contract();
        off += consumed;
        if (r == ZL_DECODE_ERROR)
            return false;
        if (r == ZL_DECODE_NEED_MORE) {
            if (off != n) /* "all input consumed" */
                fail_contract();
            break;
        }
        take_frame(f, &msg);
    }
    return true;
}

static void decode_stream(feed *f)
{
    zl_decoder d;
    zl_decoder_init(&d, f->max_msg_size);
    zl_decoder_set_max_parts(&d, f->max_msg_parts);
    bool open = true;
    while (open && f->pos < f->len) {
        void *direct;
        size_t direct_len;
        size_t n = next_read_len(f);
        if (zl_decoder_direct_buffer(&d, &direct, &direct_len)) {
            /* The rest of a large body, straight into its message. */
            if (direct_len == 0)
                fail_contract();
            if (n > direct_len)
                n = direct_len;
            memcpy(direct, f->stream + f->pos, n);
            f->pos += n;
            zlink_msg_t msg;
            zl_decode_result r = zl_decoder_direct_done(&d, n, &msg);
            if (r == ZL_DECODE_ERROR)
                fail_contract(); /* the header was already accepted */
            if (r == ZL_DECODE_FRAME)
                take_frame(f, &msg);
            continue;
        }
        if (!writable_block(f, &d))
            break;
        memcpy(f->block->data, f->stream + f->pos, n);
        f->pos += n;
        /* New input: the decoder decides anew whether to share it. */
        zl_decoder_set_input_owner(&d, f->block);
        open = decode_read(f, &d, n);
    }
    zl_decoder_destroy(&d);
}

/* Checks the stream's start as a greeting; a valid one is skipped, as the
 * engine hands the decoder only what follows it. */
static void take_greeting(feed *f)
{
    const uint8_t *g = f->stream;
    size_t n = f->len < ZL_GREETING_SIZE ? f->len : ZL_GREETING_SIZE;
    for (size_t k = 1; k <= n; k++)
        f->sink += zl_greeting_signature_ok(g, k);
    zl_greeting parsed;
    if (n == ZL_GREETING_SIZE && zl_greeting_decode(g, &parsed) == 0) {
        read_bytes(f, &parsed, sizeof parsed);
        f->pos = ZL_GREETING_SIZE;
    }
}

/* A socket's thread in a blocking receive takes a message from a peek at
 * the connection without the decoder (direct_recv.c), so the two must
 * agree on the messages at a message's start: every message it takes,
 * the decoder decodes to the same body (behind an empty delimiter, for
 * REQ and REP), and every such message that fits in the peek, it takes. */
static void check_direct_take(const feed *f, bool delimited)
{
    const uint8_t *b = f->stream + f->pos;
    size_t n = f->len - f->pos;
    if (n > ZL_DIRECT_RECV_PEEK)
        n = ZL_DIRECT_RECV_PEEK;
    size_t body_at = 0, size = 0;
    bool taken = zl_frame_whole_message(b, n, delimited, f->max_msg_size,
                                        f->max_msg_parts, &body_at, &size);

    zl_decoder d;
    zl_decoder_init(&d, f->max_msg_size);
    zl_decoder_set_max_parts(&d, f->max_msg_parts);
    size_t at = 0, consumed = 0;
    zlink_msg_t msg;
    zl_decode_result r = ZL_DECODE_FRAME;
    bool expected = true;
    if (delimited) {
        r = zl_decoder_decode(&d, b, n, &consumed, &msg);
        if (r == ZL_DECODE_FRAME) {
            expected =
                zl_msg_flags(&msg) == ZL_MSG_MORE && zlink_msg_size(&msg) == 0;
            zlink_msg_close(&msg);
        }
        at = consumed;
    }
    if (r == ZL_DECODE_FRAME && expected) {
        r = zl_decoder_decode(&d, b + at, n - at, &consumed, &msg);
        expected = r == ZL_DECODE_FRAME &&
                   !(zl_msg_flags(&msg) & (ZL_MSG_MORE | ZL_MSG_COMMAND));
    } else {
        expected = false;
        r = ZL_DECODE_NEED_MORE; /* nothing more to close */
    }
    if (taken != expected)
        fail_contract();
    if (taken &&
        (at + consumed != body_at + size || zlink_msg_size(&msg) != size ||
         memcmp(zlink_msg_data(&msg), b + body_at, size) != 0))
        fail_contract();
    if (r == ZL_DECODE_FRAME)
        zlink_msg_close(&msg);
    zl_decoder_destroy(&d);
}

/* ---- seeds: well-formed streams, for the fuzzer to start from ---- */

static size_t put_frame(uint8_t *out, uint8_t flags, size_t size, uint8_t fill)
{
    size_t n = zl_frame_header_encode(out, flags, size);
    memset(out + n, fill, size);
    return n + size;
}

static void write_seed(const char *dir, const char *name, const uint8_t *data,
                       size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen(path, "wb");
    if (!file || fwrite(data, 1, len, file) != len) {
        fprintf(stderr, "fuzz_zmtp: cannot write %s\n", path);
        exit(1);
    }
    fclose(file);
}

/* A session as a peer opens it (greeting, READY, a multipart message and a
 * long frame), and a stream of large bodies, the largest past the 8 KiB
 * limit. Byte 0 and 1: read lengths and the 1 MiB limit. */
static void write_seeds(const char *dir)
{
    static uint8_t buf[64 * 1024];
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "fuzz_zmtp: cannot create %s\n", dir);
        exit(1);
    }
    size_t n = 0;
    buf[n++] = 1;
    buf[n++] = 0;
    zl_greeting_encode(buf + n, "NULL", false);
    n += ZL_GREETING_SIZE;
    n += zl_ready_encode(buf + n, sizeof buf - n, ZLINK_DEALER, "peer", 4);
    n += put_frame(buf + n, ZL_FRAME_MORE, 0, 0);
    n += put_frame(buf + n, 0, 5, 'a');
    n += put_frame(buf + n, 0, 300, 'b');
    write_seed(dir, "session", buf, n);

    n = 0;
    buf[n++] = 3;
    buf[n++] = 0;
    n += put_frame(buf + n, 0, ZL_DECODER_DIRECT_MIN, 'c');
    n += put_frame(buf + n, ZL_FRAME_MORE, 3, 'd');
    n += put_frame(buf + n, 0, ZL_DECODER_DIRECT_MIN + 1000, 'e');
    n += put_frame(buf + n, 0, 20000, 'f');
    write_seed(dir, "large_bodies", buf, n);

    /* What a blocking receive takes itself: a frame of the largest size it
     * takes, then a LONG header announcing a short body. */
    n = 0;
    buf[n++] = 5;
    buf[n++] = 0;
    n += put_frame(buf + n, 0, ZL_DIRECT_RECV_MAX, 'g');
    write_seed(dir, "direct_largest", buf, n);
    n = 2;
    buf[n++] = ZL_FRAME_LONG;
    memset(buf + n, 0, 7);
    n += 7;
    buf[n++] = 3;
    memcpy(buf + n, "abc", 3);
    n += 3;
    write_seed(dir, "direct_long_header", buf, n);
    n = 2;
    n += put_frame(buf + n, ZL_FRAME_MORE, 0, 0);
    n += put_frame(buf + n, 0, 40, 'h');
    write_seed(dir, "direct_delimited", buf, n);
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
    /* "Unlimited" too: a body's room grows only as its bytes arrive, so a
     * huge announced size costs ZL_DECODER_RESERVE_AHEAD at most. */
    static const int64_t max_sizes[] = {1 << 20, 0, 255, ZL_DECODER_DIRECT_MIN,
                                        -1,      1, 100, 1 << 16};
    static const int64_t max_parts[] = {-1, 1, 3, 8192};
    if (size < 2)
        return 0;
    feed f = {.stream = data + 2,
              .len = size - 2,
              .rng = data[0],
              .max_msg_size = max_sizes[data[1] & 7],
              .max_msg_parts = max_parts[(data[1] >> 3) & 3]};
    for (size_t i = 0; i < HELD_MAX; i++)
        zlink_msg_init(&f.held[i]);
    take_greeting(&f);
    check_direct_take(&f, false);
    check_direct_take(&f, true);
    decode_stream(&f);
    for (size_t i = 0; i < HELD_MAX; i++)
        if (i < f.held_count)
            release_held(&f, i);
        else
            zlink_msg_close(&f.held[i]);
    if (f.block)
        zl_content_release(f.block);
    /* Keeps the reads of every byte from being optimised away. */
    volatile unsigned sink = f.sink;
    (void)sink;
    return 0;
}
