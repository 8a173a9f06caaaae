/* engine_private.h — what the engine's files share: the connection's
 * states and events, its struct, and the functions one part of the engine
 * calls in another (engine.c: the state machine; engine_handshake.c:
 * greeting and READY; engine_input.c: reads and decoding; engine_output.c:
 * batches and writes). Nothing outside src/core/engine*.c includes it. */
#ifndef ZL_ENGINE_PRIVATE_H
#define ZL_ENGINE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "engine.h"
#include "metadata.h"
#include "msg.h"
#include "session.h"
#include "transport/stream.h"
#include "zmtp/zmtp.h"

/* The phases of a connection. Only engine.c changes the state, and only
 * along the edges of its transition table. */
typedef enum zl_engine_state {
    ZL_ENGINE_TRANSPORT, /* waiting for the stream's handshake (TLS, ws) */
    ZL_ENGINE_GREETING,  /* our greeting is queued; reading the peer's */
    ZL_ENGINE_HANDSHAKE, /* our READY is queued; waiting for the peer's */
    ZL_ENGINE_ACTIVE,    /* framing messages both ways */
    ZL_ENGINE_FAILING,   /* writing an ERROR, then closing */
    ZL_ENGINE_CLOSED,    /* waiting for pending completions, then freed */
    ZL_ENGINE_STATES
} zl_engine_state;

/* What happens to a connection. The first group comes from outside (the
 * backend's completions, the session, the loop's timers); the second from
 * the engine's own decoding and writing. Each is handled by state in
 * engine.c's dispatch. */
typedef enum zl_engine_event {
    ZL_ENGINE_TRANSPORT_DONE,     /* the stream's own handshake completed */
    ZL_ENGINE_READ_DONE,          /* bytes in, a probe, the FIN or an error */
    ZL_ENGINE_WRITE_DONE,         /* a write completed */
    ZL_ENGINE_PIPE_READABLE,      /* the session has messages to send */
    ZL_ENGINE_PIPE_WRITABLE,      /* the session has room for input again */
    ZL_ENGINE_HANDSHAKE_TIMEOUT,  /* HANDSHAKE_IVL passed */
    ZL_ENGINE_HEARTBEAT,          /* time to send a PING */
    ZL_ENGINE_HEARTBEAT_DEADLINE, /* the peer was silent too long */
    ZL_ENGINE_CLOSE,              /* the session destroys us */
    ZL_ENGINE_GREETING_DONE,      /* the peer's greeting is valid */
    ZL_ENGINE_PEER_READY,         /* its READY (or ZWS routing id) is valid */
    ZL_ENGINE_PEER_REJECTED,      /* its socket type cannot talk to ours */
    ZL_ENGINE_OUTPUT_IDLE         /* everything queued is written */
} zl_engine_event;

/* What an event carries: a completion's status and bytes, or the peer's
 * routing id with PEER_READY. */
typedef struct zl_engine_args {
    int status;
    size_t bytes;
    const zl_blob *peer_routing_id;
    const char *error_reason; /* PEER_REJECTED: ERROR's short string */
} zl_engine_args;

/* The pending read, if any. */
typedef enum zl_read_state {
    ZL_READ_IDLE,
    ZL_READ_PENDING, /* into the read buffer and/or a body */
    ZL_READ_PROBE    /* zero bytes: a readiness probe, no buffer held */
} zl_read_state;

/* Room for one of our own commands (READY, PONG, ERROR). */
#define ZL_ENGINE_COMMAND_ROOM 600
#define ZL_ENGINE_MAX_IOV 128
/* Zero-copy bodies per write. 32 keeps 8 KiB bodies at 256 KiB a write:
 * 64 of them (512 KiB) ran slower. */
#define ZL_ENGINE_MAX_INFLIGHT 32

/* What a write in flight points at besides the output buffer. It is 6 KiB,
 * so it is held only while a batch carries zero-copy bodies: a write of
 * the output buffer alone goes out through the engine's single_iov. */
typedef struct zl_write_slots {
    zl_iovec iov[ZL_ENGINE_MAX_IOV];
    zlink_msg_t inflight[ZL_ENGINE_MAX_INFLIGHT]; /* bodies in the iovecs */
} zl_write_slots;

struct zl_engine {
    zl_engine_state state;
    zl_session *session;
    zl_loop *loop;
    zl_stream *stream;
    zl_op transport_op; /* the stream's handshake */
    int socket_type;
    /* The socket's thread may read this type's messages itself: the
     * engine opens the receive port (direct_recv.h) for it. */
    bool recv_port_fits;
    /* CONFLATE on outbound data (zl_options_conflates_out). */
    bool conflate_out;
    /* A STREAM socket's connection (engine_raw.c): no ZMTP, bytes as they
     * come either way; raw_notify announces it and its end. */
    bool raw, raw_notify;
    /* Ours, announced in READY; NULL when empty, as it usually is, so that
     * a connection does not carry 256 bytes for it. */
    zl_blob *routing_id;
    /* PLAIN, either side (engine_handshake.c): NULL under the NULL
     * mechanism and once the handshake is over. */
    struct zl_plain *plain;
    /* CURVE, either side (engine_curve.c): NULL under other mechanisms. It
     * lives as long as the connection: every frame is sealed. */
    struct zl_curve *curve;
    int handshake_ivl;
    int heartbeat_ivl, heartbeat_ttl, heartbeat_timeout;
    int pending_ops;
    int fail_errno; /* why the connection failed, for NO_DETAIL */

    /* The peer's properties, given to every message read (zlink_msg_gets).
     * References are taken METADATA_CREDIT at a time, so that a message
     * costs no atomic operation on this thread. */
    zl_metadata *metadata;
    unsigned metadata_credit;

    /* Input. */
    zl_op read_op;
    zl_read_state read_state;
    size_t read_direct; /* bytes of the pending read that go into a body */
    size_t read_len;    /* the pending read's total */
    /* Backpressure: the pipe refused the decoded part held in stalled, and
     * nothing more is decoded or read until it takes it. */
    bool input_stopped;
    /* The read buffer, a refcounted block that large bodies decoded from
     * it share (zl_decoder_set_input_owner); NULL while idle. The decoder
     * is told this block is its input's owner: whatever feeds the decoder
     * from another buffer (a future TLS filter's plaintext, say) must name
     * that buffer's block instead, or NULL. */
    zl_content *in_block;
    size_t read_buffer_want; /* the size reads want now (choose_read_buffer) */
    unsigned frames_this_read;
    size_t in_pos, in_end;
    zl_decoder decoder;
    zlink_msg_t stalled;
    uint8_t greeting[ZL_GREETING_SIZE];
    size_t greeting_have;
    uint8_t peer_minor;
    /* Plain ZWS2.0: no READY and no commands either way; the first message
     * each way is the sender's routing id. Set once, when ZMTP starts. */
    bool routing_id_first;

    /* Output. */
    zl_op write_op;
    bool write_pending;
    bool pipe_closed;        /* pulled the socket's delimiter */
    zlink_msg_t stalled_out; /* a pulled part the batch had no room for */
    bool has_stalled_out;
    uint8_t *out_buf; /* NULL while nothing is being written */
    uint8_t out_buf_class;
    size_t out_cap, out_len, segment_start, batch_limit;
    zl_write_slots *slots; /* NULL until a batch carries a zero-copy body */
    zl_iovec single_iov;   /* the write's one iovec while slots is NULL */
    uint8_t slots_class;
    int iov_count;
    int inflight_count;
    /* Zero-copy bodies a batch may take: MAX_INFLIGHT, or fewer under a
     * small SNDHWM (engine_output.c). */
    int inflight_max;
    size_t inflight_bytes; /* zero-copy bytes in this batch */
    /* Where the socket's thread writes small messages itself while our
     * output is idle (direct_send.h); NULL until first opened. */
    struct zl_direct_port *direct_port;
    /* Where the socket's thread reads the connection itself while we wait
     * for input (direct_recv.h); NULL until first opened. */
    struct zl_recv_port *recv_port;
    /* Our own greeting and commands, queued for the next write; NULL when
     * none. */
    uint8_t *commands;
    uint8_t commands_class;
    size_t commands_len;

    zl_timer handshake_timer;
    /* Starts the protocol of a stream with no handshake of its own on the
     * loop's next turn, so that the session holds the engine first. */
    zl_timer start_timer;
    zl_timer heartbeat_timer;    /* sends PING every heartbeat_ivl */
    zl_timer heartbeat_deadline; /* no traffic for this long: close */
};

/* engine.c: the state machine. */
void zl_engine_dispatch(zl_engine *e, zl_engine_event ev,
                        const zl_engine_args *args);
void zl_engine_fail(zl_engine *e, bool protocol);
void zl_engine_fail_io(zl_engine *e, int status);
void zl_engine_protocol_error(zl_engine *e, uint32_t reason);
void zl_engine_arm_deadline(zl_engine *e, int ms);

/* engine_handshake.c: our greeting and READY, the peer's. */
bool zl_engine_queue_greeting(zl_engine *e);
bool zl_engine_queue_ready(zl_engine *e);
/* Our first command after the greeting: READY, or a PLAIN client's HELLO
 * (a PLAIN server waits for the client's). */
bool zl_engine_queue_mechanism_start(zl_engine *e);
/* The peer's READY or INITIATE properties: the connection's metadata and
 * routing id, then PEER_READY (our READY first when answer_ready), or
 * PEER_REJECTED for a socket type we do not talk to. */
void zl_engine_accept_properties(zl_engine *e, const uint8_t *data, size_t len,
                                 uint32_t malformed, bool answer_ready);
/* Metadata with Peer-Address alone, for peers that announce nothing. */
void zl_engine_make_bare_metadata(zl_engine *e);
/* Peer-Address as libzmq gives it ("" when unknown). */
void zl_engine_peer_address(zl_engine *e, char *out, size_t cap);

/* engine_plain.c: PLAIN, either side. */
typedef struct zl_plain zl_plain;
bool zl_engine_init_plain(zl_engine *e, const zl_options *options);
void zl_engine_release_plain(zl_engine *e);
bool zl_engine_plain_server(const zl_engine *e);
/* PLAIN, not NULL asking ZAP (which shares the struct). */
bool zl_engine_mechanism_is_plain(const zl_engine *e);
/* NULL asks no ZAP handler on this connection (plain ZWS2.0 carries no
 * READY to hold back). */
void zl_engine_forget_null_zap(zl_engine *e);
bool zl_engine_plain_start(zl_engine *e);
/* A command before READY: PLAIN's, READY or ERROR. */
void zl_engine_plain_command(zl_engine *e, const uint8_t *body, size_t len);
/* A server's User-Id and the ZAP handler's properties, for the metadata. */
void zl_engine_plain_add_metadata(zl_engine *e, zl_metadata_builder *b);
/* The ZAP handler's reply, which PLAIN, CURVE and NULL read alike: true
 * when it admits the peer (reply's User-Id and metadata are the caller's);
 * otherwise the connection is failing, the peer told why. */
struct zl_zap_reply;
bool zl_engine_zap_admits(zl_engine *e, struct zl_zap_reply *reply,
                          uint32_t reason);
/* No handler is bound where one must be: refused, with EFAULT. */
void zl_engine_zap_refuse_unbound(zl_engine *e);
bool zl_engine_consume_greeting(zl_engine *e);
bool zl_engine_handshake_frame(zl_engine *e, zlink_msg_t *msg);

/* engine_curve.c: CURVE, either side. A build without CURVE refuses its
 * options (options.c), so e->curve stays NULL, and these are never reached
 * beyond init and release. */
typedef struct zl_curve zl_curve;
bool zl_engine_init_curve(zl_engine *e, const zl_options *options);
void zl_engine_release_curve(zl_engine *e);
bool zl_engine_curve_server(const zl_engine *e);
/* The decoder's frame limit for MAXMSGSIZE: a sealed part is larger. */
int64_t zl_engine_curve_frame_max(int64_t max_msg_size);
/* A client's HELLO (a server waits for it). */
bool zl_engine_curve_start(zl_engine *e);
/* A command before the connection is ACTIVE. */
void zl_engine_curve_command(zl_engine *e, const uint8_t *body, size_t len);
/* A server's READY, sealed. */
bool zl_engine_curve_queue_ready(zl_engine *e);
void zl_engine_curve_zap_replied(zl_engine *e, struct zl_zap_reply *reply,
                                 uint32_t reason);
void zl_engine_curve_add_metadata(zl_engine *e, zl_metadata_builder *b);
/* The most bytes a part of payload bytes takes sealed, frame included. */
size_t zl_engine_curve_sealed_size(size_t payload);
/* Seals one part (its flags, then prefix and body, as one plaintext) into
 * a MESSAGE frame at out; returns the frame's length. */
size_t zl_engine_curve_seal(zl_engine *e, uint8_t *out, uint8_t msg_flags,
                            const uint8_t *prefix, size_t prefix_len,
                            const uint8_t *body, size_t body_len);
/* Replaces a MESSAGE frame with the part it seals; false, with the
 * connection failing, when it is not one or not authentic. */
bool zl_engine_curve_open(zl_engine *e, zlink_msg_t *msg);

/* engine_raw.c: a STREAM socket's connection. */
/* The session's pipe, and the empty message that announces the peer;
 * false when the connection failed for want of memory for the pipe. */
bool zl_engine_raw_start(zl_engine *e);
/* The empty message that announces the peer's end, before the session
 * hears of it. */
void zl_engine_raw_notify_end(zl_engine *e);
/* The read buffer's bytes, as one message; false when input must stop. */
bool zl_engine_raw_input(zl_engine *e);
/* Whether this connection carries ZMTP commands (PING, ERROR...). */
static inline bool zl_engine_speaks_commands(const zl_engine *e)
{
    return !e->raw && !e->routing_id_first;
}

/* engine_input.c: reads and decoding. */
void zl_engine_init_input(zl_engine *e, const zl_options *options);
void zl_engine_start_read(zl_engine *e);
void zl_engine_read_completed(zl_engine *e, int status, size_t bytes);
void zl_engine_resume_input(zl_engine *e);
/* Hands a message to the session with the connection's metadata; a part
 * the pipe has no room for is held and input stops (false). */
bool zl_engine_push_input(zl_engine *e, zlink_msg_t *msg);
void zl_engine_release_input(zl_engine *e);

/* engine_output.c: batches, our commands, writes. */
void zl_engine_init_output(zl_engine *e, const zl_options *options);
void zl_engine_fill_output(zl_engine *e);
void zl_engine_write_finished(zl_engine *e);
bool zl_engine_queue_bytes(zl_engine *e, const void *data, size_t len);
void zl_engine_queue_command(zl_engine *e, const char *name, const void *data,
                             size_t len);
void zl_engine_send_command(zl_engine *e, const char *name, const void *data,
                            size_t len);
void zl_engine_release_output(zl_engine *e);

#endif
