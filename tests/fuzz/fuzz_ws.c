/* fuzz_ws.c — a libFuzzer target for what ws:// reads from the network:
 * the HTTP upgrade (request and answer parsers) and the frame path of the
 * ws filter, run as a server over a fake lower stream that hands it the
 * input in reads of varying length, on a real loop. The filter is read the
 * way the engine reads it (buffers of varying size, probes) and written a
 * few ZMTP frames while it reads, so pongs and closes interleave with data.
 * Nothing the peer sends may read or write out of bounds, leak, or break
 * the stream contract (each op completes once, never inside its call).
 *
 * The frame decoder also runs alone, as a client or a server, so that both
 * of its parsers (its own for plain data frames, wslay for the rest) see
 * input cut at every place, masked and plain.
 *
 * The input: byte 0 picks the mode (bit 0: parse only; bit 1: prepend a
 * valid upgrade, so the rest are frames; bit 2: the route refuses; bit 3:
 * the decoder alone, bit 4 then making it a client's) and seeds the read
 * lengths, byte 1 picks MAXMSGSIZE, the rest is the stream. Built and run
 * by ci/test.sh's fuzz stage like fuzz_zmtp. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_server.h"
#include "transport/stream.h"
#include "transport/ws_decoder.h"
#include "transport/ws_http.h"
#include "transport/ws_stream.h"

#define MAX_TURNS 100000

static const char UPGRADE[] =
    "GET /f HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
    "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ZWS2.0\r\n\r\n";

/* ---- the fake lower stream: the input, in pieces ---- */

typedef struct fake {
    zl_stream base;
    zl_stream_deferred deferred;
    const uint8_t *data;
    size_t len, pos;
    uint32_t rng;
    bool closed;
} fake;

static void fake_readv(zl_stream *s, zl_op *op, const zl_iovec *iov, int n)
{
    fake *f = (fake *)s;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += iov[i].len;
    if (f->pos == f->len) {
        zl_stream_defer(&f->deferred, op, ZL_EOF, 0);
        return;
    }
    if (total == 0) { /* a probe: there is input */
        zl_stream_defer(&f->deferred, op, 0, 0);
        return;
    }
    size_t want = 1 + fuzz_next_rng(&f->rng) % 2048;
    if (want > f->len - f->pos)
        want = f->len - f->pos;
    size_t done = 0;
    for (int i = 0; i < n && done < want; i++) {
        size_t k = iov[i].len < want - done ? iov[i].len : want - done;
        memcpy(iov[i].base, f->data + f->pos + done, k);
        done += k;
    }
    f->pos += done;
    zl_stream_defer(&f->deferred, op, 0, done);
}

static void fake_write(zl_stream *s, zl_op *op, const zl_iovec *iov, int n)
{
    fake *f = (fake *)s;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += iov[i].len;
    zl_stream_defer(&f->deferred, op, 0, total);
}

static void fake_close(zl_stream *s)
{
    /* Whatever it queued still completes; the ws filter waits for it. */
    ((fake *)s)->closed = true;
}

static const zl_stream_ops fake_ops = {
    .readv = fake_readv, .write = fake_write, .close = fake_close};

/* ---- the engine's side ---- */

/* What the driver writes: a short frame with MORE, a command, a long one. */
static size_t zmtp_frames(uint8_t *frames)
{
    size_t n = 0;
    frames[n++] = 0x01;
    frames[n++] = 3;
    memcpy(frames + n, "abc", 3);
    n += 3;
    frames[n++] = 0x04;
    frames[n++] = 6;
    memcpy(frames + n, "\x04PING", 5);
    frames[n + 5] = 0;
    n += 6;
    frames[n++] = 0x02;
    memset(frames + n, 0, 7);
    frames[n + 7] = 0x01;
    frames[n + 8] = 0x2c; /* 300 */
    n += 8;
    memset(frames + n, 'z', 300);
    n += 300;
    return n;
}

static int64_t max_msg;
static bool refuse;

static int route(void *arg, zl_stream *ws, const zl_ws_request *request)
{
    (void)arg;
    (void)request;
    if (refuse)
        return 404;
    zl_ws_stream_set_max_msg(ws, max_msg);
    return 0;
}

static void parse_only(const uint8_t *data, size_t len)
{
    zl_ws_request request;
    int r = zl_ws_request_parse(data, len, &request);
    if (r > 0 && (size_t)r > len)
        abort();
    zl_framing framing;
    r = zl_ws_response_parse(data, len, "dGhlIHNhbXBsZSBub25jZQ==", &framing);
    if (r > 0 && (size_t)r > len)
        abort();
}

/* ---- the decoder alone ---- */

/* Feeds the input in pieces of varying size, as the stream would, and
 * reads what it owes in reads of varying size and probes. */
static void decoder_only(const uint8_t *data, size_t len, bool client,
                         uint32_t rng)
{
    zl_ws_input in = {0};
    in.buf = malloc(len ? len : 1);
    if (!in.buf)
        return;
    zl_ws_decoder d;
    if (zl_ws_decoder_init(&d, &in, client) != 0) {
        free(in.buf);
        return;
    }
    d.max_msg_size = max_msg;
    static uint8_t out[4096];
    size_t fed = 0;
    unsigned sink = 0;
    for (;;) {
        for (;;) {
            zl_ws_read read;
            memset(&read, 0, sizeof read);
            size_t n = fuzz_next_rng(&rng) % 5 == 0
                           ? 0
                           : 1 + fuzz_next_rng(&rng) % 4096;
            read.iov[0] = (zl_iovec){out, n};
            read.count = 1;
            read.total = n;
            zl_ws_decoder_fill(&d, &read);
            d.ping_due = false;
            for (size_t i = 0; i < read.done; i++)
                sink += out[i];
            if (n == 0 ? !zl_ws_decoder_owed(&d) : read.done == 0)
                break;
        }
        if (d.protocol_error || d.close_received || fed == len)
            break;
        /* As the stream's lower read: what is left moves to the front. */
        memmove(in.buf, in.buf + in.pos, in.end - in.pos);
        in.end -= in.pos;
        in.pos = 0;
        size_t n = 1 + fuzz_next_rng(&rng) % 2048;
        if (n > len - fed)
            n = len - fed;
        memcpy(in.buf + in.end, data + fed, n);
        in.end += n;
        fed += n;
    }
    if (sink == 0xdeadbeef) /* keeps the reads from being optimised out */
        fputs("", stderr);
    zl_ws_decoder_free(&d);
    free(in.buf);
}

/* ---- seeds ---- */

/* A frame as a client masks it (mask false: as a server sends it). */
static size_t seed_frame_as(uint8_t *out, bool mask, uint8_t head,
                            const char *payload, size_t len)
{
    static const uint8_t key[4] = {1, 2, 3, 4};
    size_t n = 0;
    out[n++] = head;
    uint8_t m = mask ? 0x80 : 0;
    if (len < 126) {
        out[n++] = (uint8_t)(m | len);
    } else {
        out[n++] = m | 126;
        out[n++] = (uint8_t)(len >> 8);
        out[n++] = (uint8_t)len;
    }
    if (mask) {
        memcpy(out + n, key, 4);
        n += 4;
    }
    for (size_t i = 0; i < len; i++)
        out[n++] = (uint8_t)payload[i] ^ (mask ? key[i & 3] : 0);
    return n;
}

static size_t seed_frame(uint8_t *out, uint8_t head, const char *payload,
                         size_t len)
{
    return seed_frame_as(out, true, head, payload, len);
}

/* Frames for the decoder alone: every length form, fragments around a
 * ping, then a close. */
static size_t seed_frames(uint8_t *out, bool mask)
{
    static char body[300];
    memset(body, 'b', sizeof body);
    body[0] = 0x01;
    size_t n = 0;
    n += seed_frame_as(out + n, mask, 0x82, body, 20);
    n += seed_frame_as(out + n, mask, 0x82, body, 300);
    n += seed_frame_as(out + n, mask, 0x02, body, 130);
    n += seed_frame_as(out + n, mask, 0x89, "ping", 4);
    n += seed_frame_as(out + n, mask, 0x80, body, 7);
    n += seed_frame_as(out + n, mask, 0x88, "\x03\xe8", 2);
    return n;
}

/* Seeds the corpus ($ZLINK_FUZZ_SEEDS) with a request, and with frames
 * after one: data, a ping, a fragmented message, a close. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("ZLINK_FUZZ_SEEDS");
    if (!dir || !*dir)
        return 0;
    static uint8_t seed[1024];
    size_t n = 0;
    seed[n++] = 1; /* parse only */
    seed[n++] = 0;
    memcpy(seed + n, UPGRADE, sizeof UPGRADE - 1);
    n += sizeof UPGRADE - 1;
    fuzz_write_seed(dir, 0, seed, n);
    n = 0;
    seed[n++] = 2; /* frames after a valid upgrade */
    seed[n++] = 3;
    n += seed_frame(seed + n, 0x82, "", 1);
    n += seed_frame(seed + n, 0x82, "\x01hello", 6);
    n += seed_frame(seed + n, 0x89, "ping", 4);
    n += seed_frame(seed + n, 0x02,
                    "\x00"
                    "fr",
                    3);
    n += seed_frame(seed + n, 0x80, "ag", 2);
    n += seed_frame(seed + n, 0x88, "\x03\xe8", 2);
    fuzz_write_seed(dir, 1, seed, n);
    seed[0] = 0; /* the same with the request in the input */
    memmove(seed + 2 + sizeof UPGRADE - 1, seed + 2, n - 2);
    memcpy(seed + 2, UPGRADE, sizeof UPGRADE - 1);
    fuzz_write_seed(dir, 2, seed, n + sizeof UPGRADE - 1);
    for (int client = 0; client < 2; client++) {
        seed[0] = client ? 0x18 : 0x08; /* the decoder alone */
        seed[1] = 0;
        n = 2 + seed_frames(seed + 2, !client);
        fuzz_write_seed(dir, 3 + client, seed, n);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    uint8_t mode = data[0];
    static const int64_t limits[] = {-1, 0, 1, 100, 4096, 70000};
    max_msg = limits[data[1] % 6];
    data += 2;
    size -= 2;
    if (mode & 1) {
        parse_only(data, size);
        return 0;
    }
    if (mode & 8) {
        decoder_only(data, size, (mode & 0x10) != 0, mode);
        return 0;
    }
    refuse = (mode & 4) != 0;
    uint8_t *input = malloc(sizeof UPGRADE + size);
    if (!input)
        return 0;
    size_t len = 0;
    if (mode & 2) {
        memcpy(input, UPGRADE, sizeof UPGRADE - 1);
        len = sizeof UPGRADE - 1;
    }
    memcpy(input + len, data, size);
    len += size;

    zl_loop *loop;
    if (zl_loop_create(&loop, NULL, NULL) != 0)
        abort();
    fake *lower = calloc(1, sizeof *lower);
    lower->base.ops = &fake_ops;
    lower->data = input;
    lower->len = len;
    lower->rng = mode;
    zl_stream_deferred_init(&lower->deferred, loop);
    static uint8_t frames[2 + 3 + 2 + 6 + 9 + 300];
    fuzz_driver d;
    memset(&d, 0, sizeof d);
    d.read_max = 4096;
    d.frames = frames;
    d.frames_len = zmtp_frames(frames);
    d.rng = mode * 7u + 1;
    d.writes_left = 3;
    fuzz_driver_start(
        &d, zl_ws_stream_create_server(loop, &lower->base, route, NULL));
    for (int turn = 0; turn < MAX_TURNS && !d.failed; turn++)
        zl_loop_run_once(loop, 0);
    fuzz_driver_close(&d, loop);
    zl_stream_deferred_stop(&lower->deferred);
    free(lower);
    zl_loop_destroy(loop);
    free(input);
    return 0;
}
