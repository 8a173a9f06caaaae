/* engine_input.c — the engine's read side: the read buffer and the reads
 * into it (or straight into a large body), decoding everything read, and
 * what an ACTIVE connection does with each frame: data to the session's
 * pipe, PING answered, subscriptions handed on. */
#include <errno.h>
#include <string.h>

#include "direct_recv.h"
#include "engine_private.h"

/* The read buffer. A full read is followed by another at once (the backend
 * decides), so this bounds how much one connection decodes per turn. It is
 * held only while the connection is busy: a short read (the socket is
 * drained) gives it back to the pool, and the next read is a zero-byte
 * readiness probe. So an idle connection pins no read buffer. */
#define READ_BUFFER_SIZE (32 * 1024)
/* The read buffer of a connection whose last read brought frames of
 * LARGE_READS_FRAME_MIN to READ_BUFFER_SIZE bytes on average
 * (choose_read_buffer). Mid-size messages then take a quarter of the
 * reads, and an 8 KiB body no longer ends a read so often, split, with the
 * rest read into it by another syscall. Not for every connection: small
 * frames would then pile an HWM's worth into one read, and large bodies,
 * read straight into their message, would drag a copied part of the next
 * one behind them (bench/NOTES.md, "Read buffer size"). */
#define READ_BUFFER_LARGE (128 * 1024)
#define LARGE_READS_FRAME_MIN 512
/* When a read already brings a read buffer's worth or more of a large body
 * straight into its message, the read buffer behind it takes only this
 * much: the next header and the small frames after it. What the buffer
 * takes of a next large body is decoded by a copy, and a whole buffer there
 * copied half of every 64 KiB body twice. A smaller rest keeps the whole
 * buffer, or 8 KiB messages would cost a read each. */
#define DIRECT_TAIL (4 * 1024)

/* The read buffer's bytes; only while there is one. */
static uint8_t *in_buf(const zl_engine *e)
{
    return e->in_block->data;
}

/* Both buffers come from the message pool: taking and giving them back
 * around every burst costs a per-thread free-list operation. */
static bool acquire_in_buf(zl_engine *e)
{
    if (!e->in_block) {
        e->in_block = zl_content_alloc(e->read_buffer_want);
        zl_decoder_set_input_owner(&e->decoder, e->in_block);
    }
    return e->in_block != NULL;
}

static void release_in_buf(zl_engine *e)
{
    if (e->in_block)
        zl_content_release(e->in_block);
    e->in_block = NULL;
    zl_decoder_set_input_owner(&e->decoder, NULL);
}

/* Before a read overwrites the read buffer: while messages still share it,
 * the read goes into a new one and the last of them frees the old. The
 * acquire pairs with their release, so their reads of it are over. A
 * buffer of another size than reads now want is replaced too. */
static bool ensure_in_buf_writable(zl_engine *e)
{
    if (e->in_block &&
        (e->in_block->size != e->read_buffer_want ||
         atomic_load_explicit(&e->in_block->refs, memory_order_acquire) > 1))
        release_in_buf(e);
    return acquire_in_buf(e);
}

/* The largest frame before the connection is ACTIVE. Handshake commands
 * (READY, HELLO, INITIATE) are small; without this bound, a peer could fill
 * memory with one during HANDSHAKE_IVL, before it is even admitted, when
 * MAXMSGSIZE is left unlimited (its default). */
#define HANDSHAKE_FRAME_MAX (64 * 1024)

void zl_engine_init_input(zl_engine *e, const zl_options *options)
{
    e->read_buffer_want = READ_BUFFER_SIZE;
    zl_decoder_init(&e->decoder,
                    e->curve ? zl_engine_curve_frame_max(options->maxmsgsize)
                             : options->maxmsgsize);
    zl_decoder_set_max_parts(&e->decoder, options->maxmsgparts);
    zl_decoder_set_max_frame(&e->decoder, HANDSHAKE_FRAME_MAX);
    zlink_msg_init(&e->stalled);
}

void zl_engine_release_input(zl_engine *e)
{
    zl_decoder_destroy(&e->decoder);
    if (e->input_stopped)
        zlink_msg_close(&e->stalled);
    release_in_buf(e);
}

/* Takes one of the engine's references for msg. */
static inline void attach_metadata(zl_engine *e, zlink_msg_t *msg)
{
    enum { METADATA_CREDIT = 256 };
    if (!e->metadata)
        return;
    if (e->metadata_credit == 0) {
        zl_metadata_addref(e->metadata, METADATA_CREDIT);
        e->metadata_credit = METADATA_CREDIT;
    }
    e->metadata_credit--;
    zl_msg_set_metadata(msg, e->metadata);
}

/* Hands a decoded part to the session; a part the pipe has no room for is
 * held, and input stops until the pipe takes it (backpressure). Returns
 * false then. */
static bool push(zl_engine *e, zlink_msg_t *msg)
{
    if (zl_session_push(e->session, msg))
        return true;
    zlink_msg_move(&e->stalled, msg);
    e->input_stopped = true;
    return false;
}

bool zl_engine_push_input(zl_engine *e, zlink_msg_t *msg)
{
    attach_metadata(e, msg);
    return push(e, msg);
}

/* A subscription command becomes the 0x01/0x00 + topic message that
 * PUB/XPUB read, whatever the ZMTP version. Any other socket would take it
 * for data (a SUB would deliver it), so there it is dropped. */
static bool push_subscription(zl_engine *e, bool subscribe,
                              const uint8_t *topic, size_t len)
{
    if (e->socket_type != ZLINK_PUB && e->socket_type != ZLINK_XPUB)
        return true;
    zlink_msg_t msg;
    if (zlink_msg_init_size(&msg, len + 1) != 0)
        return true;
    uint8_t *p = zlink_msg_data(&msg);
    p[0] = subscribe ? 1 : 0;
    memcpy(p + 1, topic, len);
    return push(e, &msg);
}

/* A command on an ACTIVE connection. Returns false when input must stop
 * (backpressure or failure). */
static bool on_command(zl_engine *e, zlink_msg_t *msg)
{
    const uint8_t *name, *data;
    size_t name_len, data_len;
    int rc = zl_command_parse(zlink_msg_data(msg), zlink_msg_size(msg), &name,
                              &name_len, &data, &data_len);
    bool keep_going = true;
    if (rc != 0) {
        zl_engine_protocol_error(
            e, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED);
        keep_going = false;
    } else if (zl_command_is(name, name_len, "PING")) {
        /* Always answered, echoing the context after the 2-byte TTL. The
         * TTL (in tenths of a second) is how long the peer may be silent. */
        if (data_len >= 2) {
            zl_engine_arm_deadline(e, (data[0] << 8 | data[1]) * 100);
            zl_engine_send_command(e, "PONG", data + 2,
                                   data_len - 2 > 16 ? 16 : data_len - 2);
        }
    } else if (zl_command_is(name, name_len, "ERROR")) {
        zl_engine_fail(e, false);
        keep_going = false;
    } else if (zl_command_is(name, name_len, "SUBSCRIBE")) {
        keep_going = push_subscription(e, true, data, data_len);
    } else if (zl_command_is(name, name_len, "CANCEL")) {
        keep_going = push_subscription(e, false, data, data_len);
    }
    /* PONG and unknown commands only prove the peer is alive. */
    zlink_msg_close(msg);
    return keep_going;
}

/* One decoded frame. Returns false when input must stop. */
static bool on_frame(zl_engine *e, zlink_msg_t *msg)
{
    e->frames_this_read++;
    if (e->state != ZL_ENGINE_ACTIVE)
        return zl_engine_handshake_frame(e, msg);
    if (e->curve && !zl_engine_curve_open(e, msg))
        return false;
    if (zl_msg_flags(msg) & ZL_MSG_COMMAND)
        return on_command(e, msg);
    return zl_engine_push_input(e, msg);
}

/* Decodes one frame from the read buffer. Returns false when decoding must
 * stop: the buffer is used up, input stopped, or the connection failed. */
static bool decode_frame(zl_engine *e)
{
    size_t consumed = 0;
    zlink_msg_t msg;
    zl_decode_result r =
        zl_decoder_decode(&e->decoder, in_buf(e) + e->in_pos,
                          e->in_end - e->in_pos, &consumed, &msg);
    e->in_pos += consumed;
    if (r == ZL_DECODE_ERROR) {
        zl_engine_protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
        return false;
    }
    if (r == ZL_DECODE_NEED_MORE)
        return false;
    return on_frame(e, &msg);
}

/* Decodes everything held in the read buffer: the peer's greeting while
 * the state wants it, then frames. */
static void process_input(zl_engine *e)
{
    while (e->in_pos < e->in_end && !e->input_stopped) {
        bool more;
        switch (e->state) {
        case ZL_ENGINE_GREETING:
            more = zl_engine_consume_greeting(e);
            break;
        case ZL_ENGINE_HANDSHAKE:
            more = decode_frame(e);
            break;
        case ZL_ENGINE_ACTIVE:
            more = e->raw ? zl_engine_raw_input(e) : decode_frame(e);
            break;
        default:
            more = false; /* FAILING and CLOSED read nothing more */
            break;
        }
        if (!more)
            break;
    }
    if (e->session && e->state == ZL_ENGINE_ACTIVE)
        zl_session_flush(e->session);
}

/* Sizes the next read buffers after what a read of bytes brought: frames
 * of mid-size on average get READ_BUFFER_LARGE. A read that only went on
 * with one frame's body says nothing new. */
static void choose_read_buffer(zl_engine *e, size_t bytes)
{
    if (e->frames_this_read == 0)
        return;
    size_t average = bytes / e->frames_this_read;
    e->read_buffer_want =
        average >= LARGE_READS_FRAME_MIN && average < READ_BUFFER_SIZE
            ? READ_BUFFER_LARGE
            : READ_BUFFER_SIZE;
}

static void read_done(zl_engine *e, size_t bytes)
{
    /* Any traffic proves the peer alive (libzmq cancels its heartbeat
     * timers on every message too). */
    zl_timer_stop(e->loop, &e->heartbeat_deadline);
    size_t into_body = bytes < e->read_direct ? bytes : e->read_direct;
    e->frames_this_read = 0;
    if (e->read_direct) {
        zlink_msg_t msg;
        if (zl_decoder_direct_done(&e->decoder, into_body, &msg) ==
            ZL_DECODE_FRAME)
            on_frame(e, &msg);
    }
    /* What followed the body, or the whole read, is in the read buffer:
     * new input, whose bodies the decoder decides anew whether to share. */
    e->in_pos = 0;
    e->in_end = bytes - into_body;
    zl_decoder_set_input_owner(&e->decoder, e->in_block);
    process_input(e);
    choose_read_buffer(e, bytes);
    /* A short read drained the socket: until it is readable again the
     * buffer is the pool's (unless backpressure left input in it). */
    if (bytes < e->read_len && e->in_pos == e->in_end)
        release_in_buf(e);
    zl_engine_start_read(e);
}

/* A read completed: a failure, the FIN, a probe's readiness, or bytes. */
void zl_engine_read_completed(zl_engine *e, int status, size_t bytes)
{
    zl_read_state was = e->read_state;
    e->read_state = ZL_READ_IDLE;
    if (status != 0)
        zl_engine_fail_io(e, status);
    else if (was == ZL_READ_PROBE) {
        /* Readable now (data or the FIN): read into a buffer, unless the
         * socket's thread reads it (it wakes us after). */
        if (e->recv_port && !zl_recv_port_close(e->recv_port))
            return;
        if (acquire_in_buf(e))
            zl_engine_start_read(e);
        else
            zl_engine_fail_io(e, -ENOMEM);
    } else if (bytes == 0)
        zl_engine_fail_io(e, ZL_EOF);
    else
        read_done(e, bytes);
}

/* Waiting for input with nothing buffered, between two messages, on a
 * plain ZMTP stream: the socket's thread may read the next message itself
 * (direct_recv.h). Not while heartbeats or the peer's TTL time the input:
 * what that thread reads would not count as traffic. */
static void open_recv_port(zl_engine *e)
{
    if (!ZL_BACKEND_TRY_READ || e->state != ZL_ENGINE_ACTIVE || !e->session ||
        e->routing_id_first || e->curve || !e->recv_port_fits ||
        e->heartbeat_ivl > 0 || zl_timer_active(&e->heartbeat_deadline) ||
        !zl_decoder_at_message_start(&e->decoder))
        return;
    zl_handle *handle = zl_stream_plain_handle(e->stream);
    if (!handle)
        return;
    if (!e->recv_port)
        e->recv_port = zl_session_recv_port(e->session);
    if (e->recv_port &&
        zl_recv_port_open(e->recv_port, handle, e->metadata,
                          e->decoder.max_msg_size, e->decoder.max_msg_parts))
        zl_session_recv_port_opened(e->session);
}

/* Submits the next read, unless input is stopped. Whether it costs a
 * syscall now is the backend's read-rearm decision (DESIGN.md §1). */
void zl_engine_start_read(zl_engine *e)
{
    if (e->read_state != ZL_READ_IDLE || e->input_stopped || !e->stream ||
        (e->state != ZL_ENGINE_GREETING && e->state != ZL_ENGINE_HANDSHAKE &&
         e->state != ZL_ENGINE_ACTIVE))
        return;
    zl_iovec iov[ZL_READ_IOV_MAX];
    int n = 0;
    bool body_only = false;
    e->read_direct = 0;
    if (zl_decoder_direct_buffer(&e->decoder, &iov[0].base, &iov[0].len)) {
        /* The rest of a large body goes straight into its message, and
         * the read buffer behind it takes what follows, so one syscall
         * also brings the next header; without it, a read that ended
         * exactly at the body's end would look full and cost an EAGAIN.
         * While the body's room is still growing, what follows the room
         * is body too: then the read fills the room alone. */
        e->read_direct = iov[0].len;
        n = 1;
        body_only = iov[0].len < zl_decoder_body_missing(&e->decoder);
        if (!body_only)
            ensure_in_buf_writable(e); /* without one, the body alone */
    } else if (e->in_block) {
        ensure_in_buf_writable(e); /* without one, a probe */
    }
    bool probe = n == 0 && !e->in_block;
    size_t buffered = !e->in_block || body_only            ? 0
                      : e->read_direct >= READ_BUFFER_SIZE ? DIRECT_TAIL
                                                           : e->in_block->size;
    if (probe)
        iov[n++] = (zl_iovec){e->greeting, 0}; /* nothing is read */
    else if (buffered > 0)
        iov[n++] = (zl_iovec){in_buf(e), buffered};
    e->read_len = e->read_direct + buffered;
    e->read_state = probe ? ZL_READ_PROBE : ZL_READ_PENDING;
    e->pending_ops++;
    if (probe)
        open_recv_port(e);
    zl_stream_readv(e->stream, &e->read_op, iov, n);
}

/* The pipe has room again: hand it the stalled part, decode what the read
 * buffer still holds, then read on. Never a speculative read first
 * (DESIGN.md §1). The same ACTIVATE_WRITE wakes an engine that waited
 * without a read while the socket's thread read the connection
 * (direct_recv.h). */
void zl_engine_resume_input(zl_engine *e)
{
    if (!e->input_stopped) {
        /* Idle since the socket's thread read the connection: read on. */
        zl_engine_start_read(e);
        return;
    }
    if (!zl_session_push(e->session, &e->stalled))
        return; /* still full; the next activation tries again */
    zlink_msg_init(&e->stalled);
    e->input_stopped = false;
    process_input(e);
    if (e->session && e->state == ZL_ENGINE_ACTIVE)
        zl_session_flush(e->session);
    zl_engine_start_read(e);
}
