/* ws_encoder.h — ZWS 2.0 output: the engine's ZMTP bytes turned into
 * binary WebSocket frames (one per ZMTP frame, a flags byte first), and
 * control frames. The few bytes of a frame header are written here rather
 * than by wslay, so that a client masks a frame in the same pass that
 * copies it. */
#ifndef ZL_WS_ENCODER_H
#define ZL_WS_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "zmtp/zmtp.h"

/* A data frame header: 2 bytes, an 8-byte length, a 4-byte mask key. */
#define ZL_WS_HEADER_MAX 14
/* A control frame at its largest, header included. */
#define ZL_WS_CONTROL_FRAME_MAX (2 + 4 + 125)

/* The engine's pending write: where the ZMTP bytes come from. */
typedef struct zl_ws_write {
    const zl_iovec *iov;
    int count, index;
    size_t offset, total;
} zl_ws_write;

/* Where the ZMTP bytes the engine writes are, frame by frame. */
typedef enum zl_ws_out_state {
    ZL_WS_OUT_ZMTP_HEADER, /* collecting a ZMTP frame's flags and size */
    ZL_WS_OUT_WS_HEADER,   /* the WebSocket header for it is due */
    ZL_WS_OUT_BODY         /* copying the frame's body */
} zl_ws_out_state;

typedef struct zl_ws_encoder {
    bool client; /* masks every frame */
    zl_ws_out_state out;
    uint8_t out_hdr[ZL_FRAME_HEADER_MAX];
    size_t out_hdr_have;
    uint64_t out_left;
    uint8_t mask_key[4];
    unsigned mask_phase; /* of the key, at the next byte */
    uint64_t rng;
} zl_ws_encoder;

/* seed: random bits from the OS, for the mask keys. */
void zl_ws_encoder_init(zl_ws_encoder *e, bool client, uint64_t seed);

/* Between two data frames, where a control frame may go. */
static inline bool zl_ws_encoder_between_frames(const zl_ws_encoder *e)
{
    return e->out == ZL_WS_OUT_ZMTP_HEADER && e->out_hdr_have == 0;
}

/* Writes one control frame (len <= 125) at dst, which has room for
 * ZL_WS_CONTROL_FRAME_MAX bytes; the bytes written. Only between frames. */
size_t zl_ws_encoder_control(zl_ws_encoder *e, uint8_t *dst, uint8_t opcode,
                             const uint8_t *data, size_t len);

/* Frames the write's bytes into wire[*wire_len..cap), advancing both.
 * true when it stopped because a data frame just ended (a control frame
 * may go now, then call again); false when the wire is full or the
 * write's bytes are all taken. */
bool zl_ws_encoder_encode(zl_ws_encoder *e, uint8_t *wire, size_t *wire_len,
                          size_t cap, zl_ws_write *write);

#endif
