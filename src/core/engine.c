/* engine.c — the ZMTP state machine of one connection: greeting → READY
 * handshake → active framing → closed. Every input (read done, write done,
 * pipe readable, pipe writable, timer, destroy) enters through one of the
 * functions at the bottom, and each checks the state it is valid in. */
#include "engine.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "metadata.h"
#include "monitor.h"
#include "msg.h"
#include "msg_pool.h"
#include "noinline.h"
#include "pipe.h"
#include "session.h"
#include "small_copy.h"
#include "transport/stream.h"
#include "zmtp/zmtp.h"

#include <uv.h>

typedef enum zl_engine_state {
    ZL_ENGINE_TRANSPORT, /* waiting for the stream's handshake (TLS, ws) */
    ZL_ENGINE_GREETING,  /* waiting for the peer's 64-byte greeting */
    ZL_ENGINE_HANDSHAKE, /* waiting for the peer's READY */
    ZL_ENGINE_ACTIVE,    /* framing messages both ways */
    ZL_ENGINE_FAILING,   /* sending ERROR, then closing */
    ZL_ENGINE_CLOSED     /* waiting for pending completions, then freed */
} zl_engine_state;

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
/* Batches start small, which keeps latency low, and double while the pipe
 * stays deep (DESIGN.md §4). The largest carries two 256 KiB bodies or
 * eight 64 KiB ones per write: against 256 KiB, 64 KiB messages ran
 * 1.03-1.2x faster and 256 KiB ones about 1.05x. 1 MiB ran slower (tcp
 * 256 KiB: 0.65x), once the socket buffers it fills outgrow the core's L2. */
#define BATCH_MIN (8 * 1024)
#define BATCH_MAX (512 * 1024)
/* Of a batch, at most this many bytes are copied into the output buffer;
 * zero-copy bodies fill the rest. The copied bytes are written once here and
 * read once by the kernel, and they cost least while they stay in the
 * core's L2 alongside the socket buffers the kernel fills from them. A
 * 256 KiB copied batch did not: PUBSUB 1 KiB, whose bodies arrive cold from
 * a deep queue, ran 1.2-1.5x faster with 64 KiB (32 KiB and 128 KiB were
 * slower; bench/zlink_bench, alternating builds). */
#define COPIED_MAX (64 * 1024)
/* Bodies this large go out from the message itself: zero copy. */
#define ZERO_COPY_MIN (8 * 1024)
#define MAX_IOV 128
/* Zero-copy bodies per write. 32 keeps 8 KiB bodies at 256 KiB a write:
 * 64 of them (512 KiB) ran 0.6-0.85x as fast. */
#define MAX_INFLIGHT 32
/* Room for our own commands (PONG, ERROR, READY) outside the batch. The
 * queue for PONG, PING and ERROR is a pool block taken when one is queued
 * and given back once it is in the output buffer: these are rare, and ten
 * thousand idle connections would otherwise each hold the room. */
#define COMMAND_ROOM 600

/* What a write in flight points at besides the output buffer. It is 6 KiB,
 * so it too is held only while there is something to write. */
typedef struct write_slots {
    zl_iovec iov[MAX_IOV];
    zlink_msg_t inflight[MAX_INFLIGHT]; /* bodies the iovecs point into */
} write_slots;

struct zl_engine {
    zl_engine_state state;
    zl_session *session;
    zl_loop *loop;
    zl_stream *stream;
    zl_op transport_op; /* the stream's handshake */
    int socket_type;
    /* Ours, announced in READY; NULL when empty, as it usually is, so that
     * a connection does not carry 256 bytes for it. */
    zl_blob *routing_id;
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
    bool read_pending;
    bool read_probe;    /* the pending read is a zero-byte readiness probe */
    size_t read_direct; /* bytes of the pending read that go into a body */
    size_t read_len;    /* the pending read's total */
    bool input_stopped; /* backpressure: the pipe is at its HWM */
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
    zlink_msg_t stalled; /* a decoded part the pipe had no room for */
    bool has_stalled;
    uint8_t greeting[ZL_GREETING_SIZE];
    size_t greeting_have;
    uint8_t peer_minor;
    bool ready_received;
    /* Plain ZWS2.0: no READY and no commands either way; the first message
     * each way is the sender's routing id. */
    bool routing_id_first;

    /* Output. */
    zl_op write_op;
    bool write_pending;
    bool greeting_sent, ready_sent;
    bool pipe_closed;        /* pulled the socket's delimiter */
    zlink_msg_t stalled_out; /* a pulled part the batch had no room for */
    bool has_stalled_out;
    uint8_t *out_buf; /* NULL while nothing is being written */
    uint8_t out_buf_class;
    size_t out_cap, out_len, segment_start, batch_limit;
    write_slots *slots; /* NULL while nothing is being written */
    uint8_t slots_class;
    int iov_count;
    int inflight_count;
    /* Zero-copy bodies a batch may take: MAX_INFLIGHT, or fewer under a
     * small SNDHWM (inflight_limit). */
    int inflight_max;
    size_t inflight_bytes; /* zero-copy bytes in this batch */
    uint8_t *commands;     /* queued commands of our own; NULL when none */
    uint8_t commands_class;
    size_t commands_len;

    zl_timer handshake_timer;
    zl_timer heartbeat_timer;    /* sends PING every heartbeat_ivl */
    zl_timer heartbeat_deadline; /* no traffic for this long: close */
};

static void start_read(zl_engine *e);
static void fill_output(zl_engine *e);
static void fail(zl_engine *e, bool protocol);

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

static void release_commands(zl_engine *e)
{
    if (e->commands)
        zl_pool_free(e->commands, e->commands_class);
    e->commands = NULL;
    e->commands_len = 0;
}

static void release_out_buf(zl_engine *e)
{
    if (e->out_buf)
        zl_pool_free(e->out_buf, e->out_buf_class);
    e->out_buf = NULL;
    e->out_cap = 0;
    if (e->slots)
        zl_pool_free(e->slots, e->slots_class);
    e->slots = NULL;
}

static void maybe_free(zl_engine *e)
{
    if (e->state != ZL_ENGINE_CLOSED || e->session || e->pending_ops > 0)
        return;
    zl_decoder_destroy(&e->decoder);
    if (e->has_stalled)
        zlink_msg_close(&e->stalled);
    if (e->has_stalled_out)
        zlink_msg_close(&e->stalled_out);
    for (int i = 0; i < e->inflight_count; i++)
        zlink_msg_close(&e->slots->inflight[i]);
    release_in_buf(e);
    release_out_buf(e);
    release_commands(e);
    if (e->metadata)
        zl_metadata_release_n(e->metadata, e->metadata_credit + 1);
    free(e->routing_id);
    free(e);
}

static void stop_timers(zl_engine *e)
{
    zl_timer_stop(e->loop, &e->handshake_timer);
    zl_timer_stop(e->loop, &e->heartbeat_timer);
    zl_timer_stop(e->loop, &e->heartbeat_deadline);
}

/* Closes the connection; the session hears of it once (unless it is the one
 * destroying us). */
static void close_connection(zl_engine *e, bool protocol)
{
    if (e->state == ZL_ENGINE_CLOSED)
        return;
    e->state = ZL_ENGINE_CLOSED;
    stop_timers(e);
    if (e->stream) {
        zl_stream_close(e->stream);
        e->stream = NULL;
    }
    zl_session *s = e->session;
    e->session = NULL;
    if (s)
        zl_session_engine_error(s, protocol);
    maybe_free(e);
}

/* A protocol violation during the handshake is reported with its reason
 * before the DISCONNECTED that every close reports. */
/* A failed read or write, or the peer's FIN: NO_DETAIL carries its errno
 * as libzmq's does (EPIPE for an orderly close, as libzmq sets it). */
static void fail_io(zl_engine *e, int status)
{
    e->fail_errno = status == ZL_EOF || status == 0 ? EPIPE
                    : status == ZL_ECANCELED        ? ECANCELED
                                                    : -status;
    fail(e, false);
}

static void handshake_failed(zl_engine *e, uint32_t reason)
{
    if (e->session)
        zl_monitor_event(zl_session_socket(e->session),
                         ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, reason,
                         zl_session_endpoint(e->session));
    fail(e, true);
}

/* Any failure: report and close. A stream that knows why it failed (a
 * certificate that does not verify, a bad HTTP upgrade) says so; other
 * handshake failures that are not protocol violations (timeout, reset)
 * are reported as NO_DETAIL, as libzmq does. */
static void fail(zl_engine *e, bool protocol)
{
    if (e->state == ZL_ENGINE_CLOSED)
        return;
    uint64_t value = 0;
    int event = e->stream ? zl_stream_failure(e->stream, &value) : 0;
    if (event && e->session) {
        zl_monitor_event(zl_session_socket(e->session), event, value,
                         zl_session_endpoint(e->session));
        protocol = true;
    } else if (!protocol && e->session &&
               (e->state == ZL_ENGINE_TRANSPORT ||
                e->state == ZL_ENGINE_GREETING ||
                e->state == ZL_ENGINE_HANDSHAKE))
        zl_monitor_event(zl_session_socket(e->session),
                         ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                         (uint64_t)e->fail_errno,
                         zl_session_endpoint(e->session));
    close_connection(e, protocol);
}

/* ---- output ---- */

static bool ensure_out_capacity(zl_engine *e, size_t need)
{
    if (e->out_len + need <= e->out_cap)
        return true;
    /* Never move the buffer under iovecs already pointing into it: only
     * grow between batches. */
    if (e->iov_count > 0 || e->segment_start > 0)
        return false;
    size_t cap = e->out_cap ? e->out_cap : BATCH_MIN;
    while (cap < e->out_len + need)
        cap *= 2;
    if (!e->slots) {
        e->slots = zl_pool_alloc(sizeof *e->slots, &e->slots_class);
        if (!e->slots)
            return false;
    }
    uint8_t grown_class;
    uint8_t *grown = zl_pool_alloc(cap, &grown_class);
    if (!grown)
        return false;
    if (e->out_len)
        memcpy(grown, e->out_buf, e->out_len);
    if (e->out_buf)
        zl_pool_free(e->out_buf, e->out_buf_class);
    e->out_buf = grown;
    e->out_buf_class = grown_class;
    e->out_cap = cap;
    return true;
}

static void close_segment(zl_engine *e)
{
    if (e->out_len > e->segment_start) {
        e->slots->iov[e->iov_count].base = e->out_buf + e->segment_start;
        e->slots->iov[e->iov_count].len = e->out_len - e->segment_start;
        e->iov_count++;
    }
    e->segment_start = e->out_len;
}

/* A copy of LARGE_COPY_MIN bytes or more goes to the C library's memcpy.
 * Every body copied into a batch is under ZERO_COPY_MIN, and GCC, which
 * sees that bound, expands memcpy inline as `rep movsq`, whose start-up
 * costs tens of cycles, and glibc's memcpy beat it from a few hundred
 * bytes up. The smallest bodies, inline ones among them, copy faster
 * inline, as fixed-size moves (small_copy.h). */
#define LARGE_COPY_MIN 128
_Static_assert(LARGE_COPY_MIN <= ZL_COPY_SMALL_MAX,
               "a copy under LARGE_COPY_MIN is a small copy");

static ZL_NOINLINE void copy_large(void *dst, const void *src, size_t len)
{
    ZL_FORGET_VALUE(len); /* hides the bound */
    memcpy(dst, src, len);
}

static void append_bytes(zl_engine *e, const void *data, size_t len)
{
    if (len < LARGE_COPY_MIN)
        zl_copy_small(e->out_buf + e->out_len, data, len);
    else
        copy_large(e->out_buf + e->out_len, data, len);
    e->out_len += len;
}

/* Subscriptions travel as commands to ZMTP 3.1 peers and as 0x01/0x00
 * messages to 3.0 peers (DESIGN.md §4a). */
static size_t subscription_prefix(zl_engine *e, const zlink_msg_t *msg,
                                  const char **command)
{
    uint8_t flags = zl_msg_flags(msg);
    *command = NULL;
    if (e->peer_minor < 1 || !(flags & (ZL_MSG_SUBSCRIBE | ZL_MSG_CANCEL)))
        return 0;
    *command = (flags & ZL_MSG_SUBSCRIBE) ? "SUBSCRIBE" : "CANCEL";
    return 1; /* the 0x01/0x00 byte the command replaces */
}

/* Encodes one part; false when the batch has no room left for it. */
static bool encode_part(zl_engine *e, zlink_msg_t *msg)
{
    /* The usual part: a copied body that is not a subscription. */
    uint8_t msg_flags = zl_msg_flags(msg);
    size_t msg_size = zlink_msg_size(msg);
    if (!(msg_flags & (ZL_MSG_SUBSCRIBE | ZL_MSG_CANCEL)) &&
        msg_size < ZERO_COPY_MIN) {
        if (!ensure_out_capacity(e, ZL_FRAME_HEADER_MAX + msg_size))
            return false;
        e->out_len +=
            zl_frame_header_encode(e->out_buf + e->out_len,
                                   zl_frame_flags_of_msg(msg_flags), msg_size);
        append_bytes(e, zlink_msg_data(msg), msg_size);
        zlink_msg_close(msg);
        return true;
    }
    const uint8_t *body = zlink_msg_data(msg);
    size_t size = zlink_msg_size(msg);
    uint8_t flags = zl_msg_flags(msg);
    uint8_t frame_flags = 0;
    const char *command;
    size_t skip = subscription_prefix(e, msg, &command);
    uint8_t name[16];
    size_t name_len = 0;
    if (command) {
        frame_flags = ZL_FRAME_COMMAND;
        name_len = strlen(command);
        name[0] = (uint8_t)name_len;
        memcpy(name + 1, command, name_len);
        name_len += 1;
    } else {
        frame_flags = zl_frame_flags_of_msg(flags);
    }
    size_t payload = size - skip;
    bool zero_copy = payload >= ZERO_COPY_MIN;
    size_t need = ZL_FRAME_HEADER_MAX + name_len + (zero_copy ? 0 : payload);
    if (zero_copy &&
        (e->iov_count + 2 >= MAX_IOV || e->inflight_count == e->inflight_max))
        return false;
    if (!ensure_out_capacity(e, need))
        return false;
    e->out_len += zl_frame_header_encode(e->out_buf + e->out_len, frame_flags,
                                         name_len + payload);
    append_bytes(e, name, name_len);
    if (!zero_copy) {
        append_bytes(e, body + skip, payload);
        zlink_msg_close(msg);
        return true;
    }
    close_segment(e);
    e->slots->iov[e->iov_count].base = (void *)(body + skip);
    e->slots->iov[e->iov_count].len = payload;
    e->iov_count++;
    zlink_msg_init(&e->slots->inflight[e->inflight_count]);
    zlink_msg_move(&e->slots->inflight[e->inflight_count], msg);
    e->inflight_count++;
    e->inflight_bytes += payload;
    zlink_msg_close(msg);
    return true;
}

/* What a batch takes from the pipe stays out of the HWM's count until the
 * kernel has it all. Copied bytes are few (COPIED_MAX), but a deep batch
 * of zero-copy bodies holds MAX_INFLIGHT of them: under a small SNDHWM
 * that would let a sender queue many times its HWM (SNDHWM 1, 64 KiB
 * bodies: eight in one batch). So a batch takes no more of them than
 * SNDHWM, and a sender holds at most twice its HWM, as libzmq's engine
 * holding one message does at SNDHWM 1. */
static int inflight_limit(int sndhwm)
{
    return sndhwm > 0 && sndhwm < MAX_INFLIGHT ? sndhwm : MAX_INFLIGHT;
}

/* Pulls messages from the pipe into one batch. Returns true when the batch
 * stopped because it was full (the pipe is deep). */
static bool fill_batch(zl_engine *e)
{
    while (e->out_len + e->inflight_bytes < e->batch_limit &&
           e->out_len < COPIED_MAX && e->iov_count + 2 < MAX_IOV &&
           e->inflight_count < e->inflight_max) {
        zlink_msg_t msg;
        zlink_msg_init(&msg);
        int r = zl_session_pull(e->session, &msg);
        if (r == ZL_PIPE_EMPTY)
            return false;
        if (r == ZL_PIPE_CLOSED) {
            e->pipe_closed = true;
            return false;
        }
        if (!encode_part(e, &msg)) {
            /* No room in this batch: give the part back for the next one
             * by keeping it as the first of the next batch. */
            zlink_msg_move(&e->stalled_out, &msg);
            e->has_stalled_out = true;
            return true;
        }
    }
    return true;
}

static void on_write(zl_op *op, int status, size_t bytes)
{
    zl_engine *e = op->data;
    e->write_pending = false;
    for (int i = 0; i < e->inflight_count; i++)
        zlink_msg_close(&e->slots->inflight[i]);
    e->inflight_count = 0;
    e->inflight_bytes = 0;
    e->out_len = e->segment_start = 0;
    e->iov_count = 0;
    /* pending_ops still counts this write, so that a close inside cannot
     * free e under us; it drops at the end. */
    if (e->state != ZL_ENGINE_CLOSED) {
        if (status != 0)
            fail_io(e, status);
        else
            /* In FAILING, this sends the READY and ERROR queued while the
             * write was in flight, or closes once they are out. */
            fill_output(e);
    }
    e->pending_ops--;
    maybe_free(e);
}

static void fill_output(zl_engine *e)
{
    if (e->write_pending || e->state == ZL_ENGINE_CLOSED ||
        e->state == ZL_ENGINE_TRANSPORT)
        return;
    /* Room for a full batch of copied parts, so encoding a small part never
     * fails halfway through. */
    size_t copied_limit =
        e->batch_limit < COPIED_MAX ? e->batch_limit : COPIED_MAX;
    if (!ensure_out_capacity(e, ZL_GREETING_SIZE + 2 * COMMAND_ROOM +
                                    copied_limit + ZERO_COPY_MIN +
                                    ZL_FRAME_HEADER_MAX))
        return; /* out of memory: try again at the next activation */
    if (!e->greeting_sent) {
        zl_greeting_encode(e->out_buf + e->out_len, "NULL", false);
        e->out_len += ZL_GREETING_SIZE;
        e->greeting_sent = true;
    }
    if (e->state != ZL_ENGINE_GREETING && !e->ready_sent &&
        e->routing_id_first) {
        size_t id_len = e->routing_id ? e->routing_id->len : 0;
        e->out_len +=
            zl_frame_header_encode(e->out_buf + e->out_len, 0, id_len);
        if (id_len)
            append_bytes(e, e->routing_id->data, id_len);
        e->ready_sent = true;
    } else if (e->state != ZL_ENGINE_GREETING && !e->ready_sent) {
        e->out_len += zl_ready_encode(
            e->out_buf + e->out_len, COMMAND_ROOM, e->socket_type,
            e->routing_id ? e->routing_id->data : NULL,
            e->routing_id ? e->routing_id->len : 0);
        e->ready_sent = true;
    }
    if (e->commands) {
        append_bytes(e, e->commands, e->commands_len);
        release_commands(e);
    }
    if (e->state == ZL_ENGINE_ACTIVE && e->session && !e->pipe_closed) {
        if (e->has_stalled_out) {
            e->has_stalled_out = false;
            encode_part(e, &e->stalled_out);
        }
        bool deep = fill_batch(e);
        /* Grow while the pipe stays deep, fall back once it empties. */
        if (deep && e->batch_limit < BATCH_MAX)
            e->batch_limit *= 2;
        else if (!deep)
            e->batch_limit = BATCH_MIN;
    }
    close_segment(e);
    if (e->iov_count == 0) {
        e->out_len = e->segment_start = 0;
        /* Nothing to write: an idle connection keeps no output buffer. */
        release_out_buf(e);
        /* The ERROR is on the wire: now close (spec 37: ERROR, then
         * close). */
        if (e->state == ZL_ENGINE_FAILING) {
            close_connection(e, true);
            return;
        }
        if (e->pipe_closed && e->session)
            zl_session_engine_drained(e->session);
        return;
    }
    e->write_pending = true;
    e->pending_ops++;
    zl_stream_write(e->stream, &e->write_op, e->slots->iov, e->iov_count);
}

/* Queues one of our own commands (PONG, PING, ERROR) for the next write.
 * Without memory or room it is dropped, as a full queue drops it: a PING
 * or PONG comes again, and an ERROR is followed by the close anyway. */
static void queue_command(zl_engine *e, const char *name, const void *data,
                          size_t len)
{
    if (e->routing_id_first)
        return; /* a plain ZWS2.0 peer knows no commands */
    if (!e->commands) {
        e->commands = zl_pool_alloc(COMMAND_ROOM, &e->commands_class);
        if (!e->commands)
            return;
    }
    e->commands_len +=
        zl_command_encode(e->commands + e->commands_len,
                          COMMAND_ROOM - e->commands_len, name, data, len);
}

/* Queues a command and starts the write that carries it. */
static void send_command(zl_engine *e, const char *name, const void *data,
                         size_t len)
{
    queue_command(e, name, data, len);
    fill_output(e);
}

/* ---- input ---- */

/* The peer has this long to send anything at all. Armed only by a PING,
 * ours or the peer's TTL, as libzmq does: arming it at READY and on every
 * read closed a quiet but healthy peer at the moment our first PING went
 * out, when HEARTBEAT_TIMEOUT equals HEARTBEAT_IVL (the default). */
static void arm_deadline(zl_engine *e, int ms)
{
    if (ms <= 0)
        return;
    /* Ours and the peer's TTL share the timer: the earlier one counts. */
    uint64_t due = zl_loop_now(e->loop) + (uint64_t)ms;
    if (!zl_timer_active(&e->heartbeat_deadline) ||
        due < e->heartbeat_deadline.due_ms)
        zl_timer_start(e->loop, &e->heartbeat_deadline, (uint64_t)ms);
}

typedef struct ready_props {
    zl_engine *engine;
    int peer_type;
    zl_blob identity;
    zl_metadata_builder metadata;
} ready_props;

/* Peer-Address as libzmq gives it: the IP without port for tcp (and the
 * transports over it), "localhost:uid:gid:pid" for ipc where the OS tells
 * the peer's credentials. */
static void format_peer_address(zl_engine *e, char *out, size_t cap)
{
    zl_addr addr;
    out[0] = '\0';
    if (!e->stream || !e->stream->handle ||
        zl_handle_peer_addr(e->stream->handle, &addr) != 0)
        return;
    if (addr.u.sa.sa_family == AF_INET) {
        uv_ip4_name(&addr.u.in4, out, cap);
    } else if (addr.u.sa.sa_family == AF_INET6) {
        uv_ip6_name(&addr.u.in6, out, cap);
    } else if (addr.u.sa.sa_family == AF_UNIX) {
        unsigned uid, gid;
        int pid;
        if (zl_handle_peer_cred(e->stream->handle, &uid, &gid, &pid) == 0)
            snprintf(out, cap, "localhost:%u:%u:%d", uid, gid, pid);
    }
}

/* The connection's metadata, made once the peer's properties are known;
 * without memory for it, messages simply carry none. */
static void make_metadata(zl_engine *e, zl_metadata_builder *b)
{
    format_peer_address(e, b->peer_address, sizeof b->peer_address);
    e->metadata = zl_metadata_build(b);
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

static int on_property(void *arg, const uint8_t *name, size_t name_len,
                       const uint8_t *value, size_t value_len)
{
    ready_props *p = arg;
    /* Kept for zlink_msg_gets within the builder's bounds; what passes
     * them is not kept, but the READY stays valid (a peer may pad it). */
    zl_metadata_builder_add(&p->metadata, name, name_len, value, value_len);
    if (name_len == 11 && memcmp(name, "Socket-Type", 11) == 0) {
        p->peer_type = zl_socket_type_from_name(value, value_len);
        if (p->peer_type < 0)
            return 1;
    } else if (name_len == 8 && memcmp(name, "Identity", 8) == 0) {
        if (value_len > 255)
            return 1;
        p->identity.len = (uint8_t)value_len;
        memcpy(p->identity.data, value, value_len);
    }
    return 0; /* other properties are ignored (DESIGN.md §4a) */
}

static void on_ready(zl_engine *e, const uint8_t *data, size_t len)
{
    ready_props props = {.engine = e, .peer_type = -1};
    zl_metadata_builder_init(&props.metadata);
    int rc = zl_properties_parse(data, len, on_property, &props);
    if (rc != 0 || props.peer_type < 0) {
        handshake_failed(
            e, rc < 0 ? ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY
                      : ZLINK_PROTOCOL_ERROR_ZMTP_INVALID_METADATA);
        return;
    }
    if (!zl_socket_types_compatible(e->socket_type, props.peer_type)) {
        /* Tell the peer why before closing, as the spec asks. */
        static const char reason[] = "\x13Invalid socket type";
        queue_command(e, "ERROR", reason, sizeof reason - 1);
        zl_monitor_event(zl_session_socket(e->session),
                         ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                         ZLINK_PROTOCOL_ERROR_ZMTP_INVALID_METADATA,
                         zl_session_endpoint(e->session));
        e->state = ZL_ENGINE_FAILING;
        fill_output(e);
        return;
    }
    make_metadata(e, &props.metadata);
    e->ready_received = true;
    e->state = ZL_ENGINE_ACTIVE;
    zl_timer_stop(e->loop, &e->handshake_timer);
    if (e->heartbeat_ivl > 0)
        zl_timer_start(e->loop, &e->heartbeat_timer,
                       (uint64_t)e->heartbeat_ivl);
    zl_session_engine_ready(e->session, &props.identity);
    fill_output(e);
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
    if (zl_session_push(e->session, &msg))
        return true;
    zlink_msg_move(&e->stalled, &msg);
    e->has_stalled = true;
    return false;
}

/* Returns false when input must stop (backpressure or failure). */
static bool on_command(zl_engine *e, zlink_msg_t *msg)
{
    const uint8_t *name, *data;
    size_t name_len, data_len;
    int rc = zl_command_parse(zlink_msg_data(msg), zlink_msg_size(msg), &name,
                              &name_len, &data, &data_len);
    bool keep_going = true;
    if (rc != 0) {
        if (e->state == ZL_ENGINE_HANDSHAKE)
            handshake_failed(
                e, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED);
        else
            fail(e, true);
        keep_going = false;
    } else if (e->state == ZL_ENGINE_HANDSHAKE) {
        if (zl_command_is(name, name_len, "READY"))
            on_ready(e, data, data_len);
        else if (zl_command_is(name, name_len, "ERROR"))
            fail(e, true);
        else
            handshake_failed(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND);
        keep_going = e->state == ZL_ENGINE_ACTIVE;
    } else if (zl_command_is(name, name_len, "PING")) {
        /* Always answered, echoing the context after the 2-byte TTL. The
         * TTL (in tenths of a second) is how long the peer may be silent. */
        if (data_len >= 2) {
            arm_deadline(e, (data[0] << 8 | data[1]) * 100);
            send_command(e, "PONG", data + 2,
                         data_len - 2 > 16 ? 16 : data_len - 2);
        }
    } else if (zl_command_is(name, name_len, "ERROR")) {
        fail(e, false);
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

/* A plain ZWS2.0 peer's first message: its routing id, which a ROUTER
 * names it by (an empty one lets the ROUTER pick). Nothing is checked of
 * its socket type: ZWS2.0 does not say it. */
static bool on_routing_id(zl_engine *e, zlink_msg_t *msg)
{
    size_t len = zlink_msg_size(msg);
    if (len > 255 || (zl_msg_flags(msg) & ZL_MSG_MORE)) {
        zlink_msg_close(msg);
        handshake_failed(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
        return false;
    }
    zl_blob id;
    id.len = (uint8_t)len;
    if (len)
        memcpy(id.data, zlink_msg_data(msg), len);
    zlink_msg_close(msg);
    zl_metadata_builder b;
    zl_metadata_builder_init(&b);
    make_metadata(e, &b);
    e->ready_received = true;
    e->state = ZL_ENGINE_ACTIVE;
    zl_timer_stop(e->loop, &e->handshake_timer);
    zl_session_engine_ready(e->session, &id);
    fill_output(e);
    return e->state == ZL_ENGINE_ACTIVE;
}

/* Returns false when input must stop. */
static bool on_frame(zl_engine *e, zlink_msg_t *msg)
{
    e->frames_this_read++;
    if (zl_msg_flags(msg) & ZL_MSG_COMMAND)
        return on_command(e, msg);
    if (e->state == ZL_ENGINE_HANDSHAKE && e->routing_id_first)
        return on_routing_id(e, msg);
    if (e->state != ZL_ENGINE_ACTIVE) {
        zlink_msg_close(msg);
        handshake_failed(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND);
        return false;
    }
    attach_metadata(e, msg);
    if (zl_session_push(e->session, msg))
        return true;
    zlink_msg_move(&e->stalled, msg);
    e->has_stalled = true;
    return false;
}

/* Consumes greeting bytes; checks each byte range as soon as it arrives,
 * since libzmq sends its greeting in two steps (DESIGN.md §4a). */
static bool consume_greeting(zl_engine *e)
{
    size_t want = ZL_GREETING_SIZE - e->greeting_have;
    size_t avail = e->in_end - e->in_pos;
    size_t n = avail < want ? avail : want;
    memcpy(e->greeting + e->greeting_have, in_buf(e) + e->in_pos, n);
    e->greeting_have += n;
    e->in_pos += n;
    if (!zl_greeting_signature_ok(e->greeting, e->greeting_have) ||
        (e->greeting_have > 10 && e->greeting[10] < 3)) {
        handshake_failed(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
        return false;
    }
    if (e->greeting_have < ZL_GREETING_SIZE)
        return true;
    zl_greeting peer;
    if (zl_greeting_decode(e->greeting, &peer) != 0) {
        handshake_failed(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
        return false;
    }
    if (strcmp(peer.mechanism, "NULL") != 0) {
        handshake_failed(e, ZLINK_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH);
        return false;
    }
    /* A 3.0 peer gets subscriptions as messages; 3.2+ behaves as 3.1. */
    e->peer_minor = peer.major > 3 ? 1 : peer.minor;
    e->state = ZL_ENGINE_HANDSHAKE;
    fill_output(e); /* our READY */
    return true;
}

/* Decodes everything held in the read buffer. */
static void process_input(zl_engine *e)
{
    while (e->in_pos < e->in_end && !e->input_stopped) {
        if (e->state == ZL_ENGINE_GREETING) {
            if (!consume_greeting(e))
                return;
            continue;
        }
        if (e->state != ZL_ENGINE_HANDSHAKE && e->state != ZL_ENGINE_ACTIVE)
            return;
        size_t consumed = 0;
        zlink_msg_t msg;
        zl_decode_result r =
            zl_decoder_decode(&e->decoder, in_buf(e) + e->in_pos,
                              e->in_end - e->in_pos, &consumed, &msg);
        e->in_pos += consumed;
        if (r == ZL_DECODE_ERROR) {
            if (e->state == ZL_ENGINE_HANDSHAKE)
                handshake_failed(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
            else
                fail(e, true);
            return;
        }
        if (r == ZL_DECODE_NEED_MORE)
            break;
        if (!on_frame(e, &msg)) {
            if (e->state == ZL_ENGINE_ACTIVE && e->has_stalled)
                e->input_stopped = true;
            break;
        }
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
                ZL_DECODE_FRAME &&
            !on_frame(e, &msg)) {
            if (e->state == ZL_ENGINE_ACTIVE && e->has_stalled)
                e->input_stopped = true;
        }
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
    start_read(e);
}

static void on_read(zl_op *op, int status, size_t bytes)
{
    zl_engine *e = op->data;
    e->read_pending = false;
    /* pending_ops still counts this read: a protocol error found while
     * decoding closes the engine, and must not free it under us. */
    if (e->state != ZL_ENGINE_CLOSED) {
        if (status != 0)
            fail_io(e, status);
        else if (e->read_probe) {
            /* Readable now (data or the FIN): read into a buffer. */
            e->read_probe = false;
            if (acquire_in_buf(e))
                start_read(e);
            else
                fail_io(e, -ENOMEM);
        } else if (bytes == 0)
            fail_io(e, ZL_EOF);
        else
            read_done(e, bytes);
    }
    e->pending_ops--;
    maybe_free(e);
}

/* Submits the next read, unless input is stopped. Whether it costs a
 * syscall now is the backend's read-rearm decision (DESIGN.md §1). */
static void start_read(zl_engine *e)
{
    if (e->read_pending || e->input_stopped || !e->stream ||
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
    e->read_probe = n == 0 && !e->in_block;
    size_t buffered = !e->in_block || body_only            ? 0
                      : e->read_direct >= READ_BUFFER_SIZE ? DIRECT_TAIL
                                                           : e->in_block->size;
    if (e->read_probe)
        iov[n++] = (zl_iovec){e->greeting, 0}; /* nothing is read */
    else if (buffered > 0)
        iov[n++] = (zl_iovec){in_buf(e), buffered};
    e->read_len = e->read_direct + buffered;
    e->read_pending = true;
    e->pending_ops++;
    zl_stream_readv(e->stream, &e->read_op, iov, n);
}

/* ---- timers ---- */

static void on_handshake_timeout(zl_timer *t)
{
    /* libzmq reports whatever errno held; the cause is the clock. */
    fail_io(t->data, -ETIMEDOUT);
}

static void on_heartbeat(zl_timer *t)
{
    zl_engine *e = t->data;
    uint16_t ttl = (uint16_t)(e->heartbeat_ttl / 100);
    uint8_t body[2] = {(uint8_t)(ttl >> 8), (uint8_t)ttl};
    send_command(e, "PING", body, sizeof body);
    arm_deadline(e, e->heartbeat_timeout);
    zl_timer_start(e->loop, &e->heartbeat_timer, (uint64_t)e->heartbeat_ivl);
}

static void on_heartbeat_deadline(zl_timer *t)
{
    fail_io(t->data, -ETIMEDOUT);
}

/* ---- entry points ---- */

/* The stream is ready: ZMTP starts, in the form the stream carries. */
static void start_protocol(zl_engine *e)
{
    switch (zl_stream_framing(e->stream)) {
    case ZL_FRAMING_ZWS_RAW:
        e->routing_id_first = true;
        /* fall through */
    case ZL_FRAMING_ZWS_NULL:
        /* The subprotocol named the mechanism: no greeting either way.
         * ZWS peers (libzmq's ws, jszmq) take subscriptions as 0x01/0x00
         * messages, as a ZMTP 3.0 peer does. */
        e->greeting_sent = true;
        e->peer_minor = 0;
        e->state = ZL_ENGINE_HANDSHAKE;
        break;
    case ZL_FRAMING_ZMTP:
    default:
        e->state = ZL_ENGINE_GREETING;
        break;
    }
    fill_output(e);
    start_read(e);
}

static void on_transport_ready(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    zl_engine *e = op->data;
    if (e->state == ZL_ENGINE_TRANSPORT) {
        if (status != 0)
            fail_io(e, status);
        else
            start_protocol(e);
    }
    e->pending_ops--;
    maybe_free(e);
}

zl_engine *zl_engine_create(zl_session *session, zl_loop *loop,
                            zl_stream *stream, const zl_options *options)
{
    zl_engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->session = session;
    e->loop = loop;
    e->stream = stream;
    e->socket_type = options->type;
    /* libzmq announces an Identity only where it means something. */
    if ((options->type == ZLINK_REQ || options->type == ZLINK_DEALER ||
         options->type == ZLINK_ROUTER) &&
        options->routing_id) {
        e->routing_id = malloc(sizeof *e->routing_id);
        if (!e->routing_id) {
            free(e);
            return NULL;
        }
        *e->routing_id = *options->routing_id;
    }
    e->handshake_ivl = options->handshake_ivl;
    e->read_buffer_want = READ_BUFFER_SIZE;
    e->heartbeat_ivl = options->heartbeat_ivl;
    e->heartbeat_ttl = options->heartbeat_ttl;
    e->heartbeat_timeout = options->heartbeat_timeout >= 0
                               ? options->heartbeat_timeout
                               : options->heartbeat_ivl;
    e->batch_limit = BATCH_MIN;
    e->inflight_max = inflight_limit(options->sndhwm);
    e->peer_minor = 1;
    zl_decoder_init(&e->decoder, options->maxmsgsize);
    zl_decoder_set_max_parts(&e->decoder, options->maxmsgparts);
    zlink_msg_init(&e->stalled);
    zlink_msg_init(&e->stalled_out);
    e->read_op.cb = on_read;
    e->read_op.data = e;
    e->write_op.cb = on_write;
    e->write_op.data = e;
    e->transport_op.cb = on_transport_ready;
    e->transport_op.data = e;
    e->handshake_timer.cb = on_handshake_timeout;
    e->handshake_timer.data = e;
    e->heartbeat_timer.cb = on_heartbeat;
    e->heartbeat_timer.data = e;
    e->heartbeat_deadline.cb = on_heartbeat_deadline;
    e->heartbeat_deadline.data = e;
    if (e->handshake_ivl > 0)
        zl_timer_start(loop, &e->handshake_timer, (uint64_t)e->handshake_ivl);
    /* HANDSHAKE_IVL covers the transport's own handshake too. */
    e->state = ZL_ENGINE_TRANSPORT;
    e->pending_ops++;
    if (!zl_stream_handshake(stream, &e->transport_op)) {
        e->pending_ops--;
        start_protocol(e);
    }
    return e;
}

void zl_engine_restart_output(zl_engine *e)
{
    if (e->state == ZL_ENGINE_ACTIVE)
        fill_output(e);
}

void zl_engine_restart_input(zl_engine *e)
{
    if (!e->input_stopped || e->state != ZL_ENGINE_ACTIVE)
        return;
    if (e->has_stalled) {
        if (!zl_session_push(e->session, &e->stalled))
            return; /* still full; the next activation tries again */
        e->has_stalled = false;
        zlink_msg_init(&e->stalled);
    }
    e->input_stopped = false;
    /* Decode what we already hold before asking for more: never a
     * speculative read (DESIGN.md §1). A protocol error in it closes us;
     * the extra count keeps e alive until we are done with it. */
    e->pending_ops++;
    process_input(e);
    if (e->session && e->state == ZL_ENGINE_ACTIVE)
        zl_session_flush(e->session);
    start_read(e);
    e->pending_ops--;
    maybe_free(e);
}

bool zl_engine_drained(const zl_engine *e)
{
    return e->pipe_closed && !e->write_pending && e->commands_len == 0;
}

void zl_engine_destroy(zl_engine *e)
{
    e->session = NULL;
    if (e->state == ZL_ENGINE_CLOSED) {
        maybe_free(e);
        return;
    }
    close_connection(e, false);
}
