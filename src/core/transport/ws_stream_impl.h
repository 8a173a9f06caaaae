/* ws_stream_impl.h — the WebSocket filter's state, shared by the files
 * that make it up: ws_stream.c (the lower stream, the engine's ops) and
 * ws_upgrade.c (the HTTP upgrade). Nothing else includes it. */
#ifndef ZL_WS_STREAM_IMPL_H
#define ZL_WS_STREAM_IMPL_H

#include "ws_decoder.h"
#include "ws_encoder.h"
#include "ws_stream.h"

/* One read from the lower stream. It also holds a whole upgrade request
 * (ZL_WS_HTTP_MAX) while that is parsed. */
#define ZL_WS_RAW_CAP (64 * 1024)
/* One write to the lower stream: framed, masked output. The wire is sized
 * to the engine's write, headers included, so that each of its batches
 * goes out in one lower write, as over tcp; a fixed 64 KiB wire split
 * every full batch (COPIED_MAX in engine.c) into a second, small write.
 * WIRE_MAX holds the engine's largest batch (BATCH_MAX). */
#define ZL_WS_WIRE_MIN (16 * 1024)
#define ZL_WS_WIRE_MAX (640 * 1024)

typedef enum ws_phase {
    PHASE_UPGRADE,   /* the HTTP exchange */
    PHASE_ACCEPTING, /* a server writing its 101 */
    PHASE_REFUSING,  /* a server writing its refusal, then failing */
    PHASE_OPEN,      /* frames */
    PHASE_FAILED
} ws_phase;

typedef struct ws_stream {
    zl_stream base; /* first: the engine sees a zl_stream */
    zl_stream *lower;
    zl_loop *loop;
    zl_stream_deferred deferred;
    zl_timer free_timer;
    bool client;
    bool closing;
    int depth; /* callbacks of ours on the stack: no freeing under them */
    ws_phase phase;
    zl_framing framing;
    int failure_event;
    bool failure_retries; /* a connect tries again after it (404) */

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
    zl_ws_input in;      /* read from lower, not yet parsed */
    uint8_t *wire;       /* framed output being written; NULL when idle */
    size_t wire_len, wire_cap;
    zl_iovec wire_iov; /* a write's iovecs stay alive until it completes */

    zl_ws_decoder dec;
    zl_op *read_op; /* the engine's read */
    zl_ws_read read;
    zl_ws_encoder enc;
    zl_op *write_op; /* the engine's write */
    zl_ws_write write;

    /* Control frames we owe the peer. */
    bool pong_due;
    uint8_t pong[ZL_WS_CONTROL_MAX];
    size_t pong_len;
    bool close_due;
    bool close_queued; /* in the wire being written */
    bool close_sent;   /* on the wire */
    bool close_taken;  /* the decoder's close is answered or moot */
    uint8_t close_code[2];
} ws_stream;

static inline ws_stream *zl_ws_of(zl_stream *s)
{
    return (ws_stream *)s;
}

/* ws_stream.c: completes one of the engine's ops, at once from the loop
 * or deferred inside the engine's own call. */
void zl_ws_complete(ws_stream *f, zl_op **slot, int status, size_t bytes,
                    bool from_loop);
/* A wire of at least ZL_WS_WIRE_MIN bytes. */
bool zl_ws_ensure_wire(ws_stream *f);
/* Frees a closed filter once nothing can reach it any more. */
void zl_ws_maybe_free(ws_stream *f);
/* Writes the wire's wire_len bytes to the lower stream. */
void zl_ws_lower_write(ws_stream *f);
/* Reads more from the lower stream into in, unless one is pending. */
void zl_ws_lower_read(ws_stream *f);

/* ws_upgrade.c: the stream's handshake op; the lower stream's handshake
 * (wss: TLS) first, then the upgrade. */
void zl_ws_handshake(zl_stream *s, zl_op *op);
void zl_ws_on_lower_handshake(zl_op *op, int status, size_t bytes);
/* New bytes in in: parses the request or answer so far. */
void zl_ws_upgrade_progress(ws_stream *f);
/* Fails the handshake op; protocol: the peer broke the upgrade. */
void zl_ws_upgrade_fail(ws_stream *f, bool protocol);

#endif
