/* ws_decoder.h — ZWS 2.0 input: WebSocket frames turned into the ZMTP bytes
 * the engine reads. Fragments are reassembled, control frames are collected
 * for the stream to answer, and every breach of RFC 6455 or of MAXMSGSIZE
 * marks the decoder failed. wslay parses every frame but one kind: a data
 * frame whose header is whole and well formed is taken here, so that its
 * payload is unmasked a word at a time, in place (wslay's own loop goes a
 * byte at a time, in a copy). */
#ifndef ZL_WS_DECODER_H
#define ZL_WS_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wslay/wslay.h>

#include "backend.h"
#include "zmtp/zmtp.h"

#define ZL_WS_CONTROL_MAX 125

/* Bytes read from the lower stream and not yet parsed. The stream owns the
 * buffer; the decoder takes bytes from pos up to end. */
typedef struct zl_ws_input {
    uint8_t *buf; /* NULL when idle */
    size_t pos, end;
} zl_ws_input;

/* The engine's pending read: where decoded bytes go. */
typedef struct zl_ws_read {
    zl_iovec iov[ZL_READ_IOV_MAX];
    int count;
    size_t total, done; /* total 0: a readiness probe */
    int index;
    size_t offset;
} zl_ws_read;

typedef struct zl_ws_decoder {
    wslay_frame_context_ptr wslay;
    zl_ws_input *input;
    bool client; /* frames from a server come unmasked */
    int64_t max_msg_size;

    bool in_frame;      /* inside a frame's payload */
    uint8_t frame_op;   /* its opcode */
    bool frame_fin;     /* it ends its message */
    uint64_t frame_len; /* its payload length */
    uint64_t frame_left;
    bool frame_wslay;     /* the next or current frame is wslay's to parse */
    uint64_t wslay_due;   /* bytes of that frame wslay has yet to take */
    uint8_t frame_key[4]; /* the mask of a frame parsed here */
    unsigned frame_phase; /* of that key, at the next payload byte */
    bool msg_active;      /* a data message has begun and not ended */
    bool msg_fragmented;  /* it spans frames: reassembled first */
    bool msg_started;     /* its flags byte is behind us */
    uint8_t *assembly;    /* a fragmented message, flags byte first */
    size_t assembly_len, assembly_cap;
    bool assembly_handed; /* the body points into assembly */
    uint8_t control[ZL_WS_CONTROL_MAX];
    size_t control_len;

    /* What the engine is owed next: a ZMTP header, then body bytes. */
    uint8_t hdr[ZL_FRAME_HEADER_MAX];
    size_t hdr_pos, hdr_len;
    const uint8_t *body;
    size_t body_len;

    /* For the stream: the latest ping's payload awaits its pong; a close
     * ends decoding; an error fails the connection. */
    bool ping_due;
    uint8_t ping[ZL_WS_CONTROL_MAX];
    size_t ping_len;
    bool close_received;
    uint8_t close_code[2];
    bool protocol_error;
} zl_ws_decoder;

/* 0, or -1 when wslay cannot allocate its context. */
int zl_ws_decoder_init(zl_ws_decoder *d, zl_ws_input *input, bool client);
void zl_ws_decoder_free(zl_ws_decoder *d);

/* Decodes into the engine's read while it has room; for a probe (total
 * 0), until something is owed. Stops when input runs short, on a close or
 * on an error. */
void zl_ws_decoder_fill(zl_ws_decoder *d, zl_ws_read *read);

/* Decoded bytes are waiting for the engine. */
static inline bool zl_ws_decoder_owed(const zl_ws_decoder *d)
{
    return d->hdr_pos < d->hdr_len || d->body_len > 0;
}

#endif
