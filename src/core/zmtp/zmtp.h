/* zmtp.h — ZMTP 3.x wire format, with no I/O: the greeting, frame headers,
 * the frame decoder, commands and READY metadata (rfc.zeromq.org spec 37). */
#ifndef ZL_ZMTP_H
#define ZL_ZMTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zlink.h"

#define ZL_GREETING_SIZE 64
/* Bytes needed to learn the peer's major and minor version. */
#define ZL_GREETING_VERSION_SIZE 12

/* Frame flag bits. */
#define ZL_FRAME_MORE 0x01
#define ZL_FRAME_LONG 0x02
#define ZL_FRAME_COMMAND 0x04
#define ZL_FRAME_RESERVED 0xf8

/* The largest frame header: flags + 8-byte size. */
#define ZL_FRAME_HEADER_MAX 9

/* MORE and COMMAND between a frame's flags and a message's (msg.h): the
 * encoder and the decoder map them the two ways. */
uint8_t zl_frame_flags_of_msg(uint8_t msg_flags);
uint8_t zl_msg_flags_of_frame(uint8_t frame_flags);

/* Writes our 64-byte greeting: signature, version 3.1, mechanism, as-server,
 * zero filler. */
void zl_greeting_encode(uint8_t out[ZL_GREETING_SIZE], const char *mechanism,
                        bool as_server);

typedef struct zl_greeting {
    uint8_t major, minor;
    char mechanism[21]; /* NUL-terminated, trailing NULs stripped */
    bool as_server;
} zl_greeting;

/* Checks the signature in the first n bytes seen so far (any padding is
 * accepted; byte 0 must be 0xFF and byte 9 must have bit 0 set). Returns
 * false when what is there can never be a ZMTP 3 greeting. */
bool zl_greeting_signature_ok(const uint8_t *bytes, size_t n);
/* Parses a complete 64-byte greeting. Returns 0, or -1 when the signature is
 * bad, the major version is below 3, or the mechanism field has bytes after
 * its NUL padding has begun. */
int zl_greeting_decode(const uint8_t in[ZL_GREETING_SIZE], zl_greeting *out);

/* Writes a frame header for a body of size bytes; returns its length (2 or
 * 9). flags may hold ZL_FRAME_MORE and ZL_FRAME_COMMAND. */
size_t zl_frame_header_encode(uint8_t *out, uint8_t flags, uint64_t size);

/* True when the n bytes at b start with a whole message of one data frame,
 * behind an empty delimiter frame when delimited (a REQ's reply, a
 * request to a REP), within max_msg_size and max_msg_parts (-1: no
 * limit); gives where its body starts and its size. False for anything
 * else (a command, more parts, reserved flags, a message not yet whole).
 * It must agree with the decoder on every message it accepts: fuzz_zmtp
 * checks that the two agree. */
bool zl_frame_whole_message(const uint8_t *b, size_t n, bool delimited,
                            int64_t max_msg_size, int64_t max_msg_parts,
                            size_t *body_at, size_t *size);

/* Incremental frame decoder. Bodies of at least ZL_DECODER_DIRECT_MIN bytes
 * may be read straight into their message (zl_decoder_direct_buffer). A
 * body is allocated whole up to ZL_DECODER_RESERVE_AHEAD bytes; a larger
 * one starts there and doubles as its bytes arrive, so that a header alone
 * never reserves more than that, whatever size it announces. A large body
 * that arrives whole inside input with an owner (zl_decoder_set_input_owner)
 * is not copied at all: its message shares the owner's block, provided the
 * large bodies of that input fill at least half the block (a queue of
 * messages then never pins more than twice its own size). */
#define ZL_DECODER_DIRECT_MIN 8192
/* The message pool's largest body (msg_pool.c): a pooled body keeps its one
 * allocation, and only bodies that come from malloc anyway grow, where
 * realloc can often move pages instead of bytes. Starting lower, a body
 * just over the start paid a copy on the C library's heap as it grew. */
#define ZL_DECODER_RESERVE_AHEAD (512 * 1024)

typedef enum zl_decode_result {
    ZL_DECODE_NEED_MORE, /* all input consumed, no complete frame */
    ZL_DECODE_FRAME,     /* *out holds a frame; flags in its msg flags */
    ZL_DECODE_ERROR      /* protocol error; see decoder->error */
} zl_decode_result;

typedef enum zl_decode_error {
    ZL_DECODE_ERR_NONE,
    ZL_DECODE_ERR_RESERVED_FLAGS,
    ZL_DECODE_ERR_TOO_LARGE,         /* the message exceeds max_msg_size */
    ZL_DECODE_ERR_BAD_COMMAND_FLAGS, /* command with MORE set */
    ZL_DECODE_ERR_NO_MEMORY,
    ZL_DECODE_ERR_TOO_MANY_PARTS /* the message exceeds max_msg_parts */
} zl_decode_error;

typedef struct zl_decoder {
    /* Limits on a whole message, all its parts together; -1: none. */
    int64_t max_msg_size;
    int64_t max_msg_parts;
    /* A limit on each frame, commands included; -1: none. */
    int64_t max_frame_size;
    zl_decode_error error;
    /* private */
    int state;
    uint8_t header[ZL_FRAME_HEADER_MAX];
    size_t header_have, header_need;
    uint8_t flags;
    uint64_t body_size, body_have;
    size_t body_room; /* bytes the message holds room for so far */
    /* The message in progress: parts received before the current frame,
     * and their bytes. */
    uint64_t msg_parts, msg_bytes;
    zlink_msg_t msg;
    struct zl_content *input_owner;
    /* Whether the input ending at share_end may be shared (decoder.c). */
    const uint8_t *share_end;
    bool share;
} zl_decoder;

/* No limit on parts; max_msg_size -1 for none. */
void zl_decoder_init(zl_decoder *d, int64_t max_msg_size);
/* The most parts a message may have (-1: no limit). */
void zl_decoder_set_max_parts(zl_decoder *d, int64_t max_msg_parts);
/* The largest frame, command or not (-1: no limit): what a handshake
 * allows, before MAXMSGSIZE alone bounds messages. */
void zl_decoder_set_max_frame(zl_decoder *d, int64_t max_frame_size);
void zl_decoder_destroy(zl_decoder *d);
/* Between two messages: no frame begun, and no part of a message taken. */
bool zl_decoder_at_message_start(const zl_decoder *d);
/* Decodes at most one frame from data[0..len). Sets *consumed. On
 * ZL_DECODE_FRAME, *out is overwritten (it must not hold a live message)
 * with a new message the caller owns; message flags carry ZL_MSG_MORE and
 * ZL_MSG_COMMAND. Call again with the rest of the input. Once it has
 * returned ZL_DECODE_ERROR, the decoder returns it for every call. */
zl_decode_result zl_decoder_decode(zl_decoder *d, const uint8_t *data,
                                   size_t len, size_t *consumed,
                                   zlink_msg_t *out);
/* The refcounted block that holds the input of the next decode calls, or
 * NULL (every body is copied). A body the decoder shares takes a reference,
 * so the caller must not write into the block again while any other
 * reference remains. Call it again each time new bytes are read into the
 * block: whether to share is decided once per input. */
void zl_decoder_set_input_owner(zl_decoder *d, struct zl_content *owner);
/* While a body of at least ZL_DECODER_DIRECT_MIN bytes is partly received,
 * where its next bytes go; false otherwise (or when the room for them could
 * not be allocated: the next decode call then reports it). *len may be less
 * than zl_decoder_body_missing while the body's room grows. */
bool zl_decoder_direct_buffer(zl_decoder *d, void **buf, size_t *len);
/* Reports n (at most the *len offered) bytes read into that buffer; may
 * complete the frame into *out (returns ZL_DECODE_FRAME) or not
 * (ZL_DECODE_NEED_MORE). */
zl_decode_result zl_decoder_direct_done(zl_decoder *d, size_t n,
                                        zlink_msg_t *out);
/* Bytes of the current frame's body still to come; 0 between frames. */
static inline uint64_t zl_decoder_body_missing(const zl_decoder *d)
{
    return d->body_size - d->body_have;
}

/* Commands: body = name-length byte, name, data. */
/* Splits a command frame body. Returns 0, or -1 when malformed (empty, a
 * zero-length name, or a name longer than the body). */
int zl_command_parse(const uint8_t *body, size_t len, const uint8_t **name,
                     size_t *name_len, const uint8_t **data, size_t *data_len);
bool zl_command_is(const uint8_t *name, size_t name_len, const char *expect);
/* Writes a complete command frame (header + body) into out, which has room
 * for cap bytes. Returns the frame length, or 0 if it does not fit. */
size_t zl_command_encode(uint8_t *out, size_t cap, const char *name,
                         const void *data, size_t data_len);

/* READY / metadata properties: name-length byte, name, 4-byte big-endian
 * value length, value. */
typedef int (*zl_property_fn)(void *arg, const uint8_t *name, size_t name_len,
                              const uint8_t *value, size_t value_len);
/* Calls fn for each property, in wire order; returns 0, -1 when a length
 * runs past the end (fn may have been called for earlier properties), or
 * fn's non-zero result. */
int zl_properties_parse(const uint8_t *data, size_t len, zl_property_fn fn,
                        void *arg);
/* Appends one property; returns bytes written or 0 if it does not fit. */
size_t zl_property_encode(uint8_t *out, size_t cap, const char *name,
                          const void *value, size_t value_len);
/* A complete READY command frame with Socket-Type and, for REQ, DEALER and
 * ROUTER or when identity_len > 0, Identity. Returns the frame length or 0 if
 * it does not fit. */
size_t zl_ready_encode(uint8_t *out, size_t cap, int socket_type,
                       const void *identity, size_t identity_len);
/* READY's properties alone (Socket-Type, and Identity where it means
 * something), as CURVE boxes them; 0 if they do not fit. */
#define ZL_PROPERTIES_MAX 300
size_t zl_properties_encode(uint8_t *out, size_t cap, int socket_type,
                            const void *identity, size_t identity_len);
/* The same properties under another command name: PLAIN's INITIATE. */
size_t zl_metadata_command_encode(uint8_t *out, size_t cap, const char *name,
                                  int socket_type, const void *identity,
                                  size_t identity_len);

/* ZMTP-PLAIN (rfc.zeromq.org spec 24). A complete HELLO command frame with
 * the client's credentials (at most 255 bytes each). Returns the frame
 * length or 0 if it does not fit. */
size_t zl_plain_hello_encode(uint8_t *out, size_t cap, const void *username,
                             size_t username_len, const void *password,
                             size_t password_len);
/* libzmq 4.3's PLAIN server writes its ERROR as "^RROR" and the reason:
 * its C string "\x05ERROR" reads "\x05E" as one hex escape. Its own
 * clients match those bytes, so ours must too. True for such a body, with
 * the reason in *data. */
bool zl_plain_libzmq43_error(const uint8_t *body, size_t len,
                             const uint8_t **data, size_t *data_len);
/* The status code a ZAP handler's refusal carries in an ERROR's reason
 * ("300", "400" or "500"), as libzmq reports it; 0 for any other reason. */
int zl_error_status_code(const uint8_t *data, size_t len);

/* Socket types by their ZMTP names ("PAIR", "DEALER", …). */
const char *zl_socket_type_name(int socket_type);
/* -1 when unknown. */
int zl_socket_type_from_name(const uint8_t *name, size_t len);
/* Whether spec 37's table lets these two talk. */
bool zl_socket_types_compatible(int ours, int theirs);
/* REQ, DEALER and ROUTER: the types whose peers route by identity, so
 * (as in libzmq) the ones that announce one in READY and send a set
 * ROUTING_ID. */
bool zl_socket_type_announces_identity(int socket_type);

#endif
