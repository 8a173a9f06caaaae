/* engine_output.c — the engine's write side: batches of messages pulled
 * from the session's pipe, encoded into one output buffer with large
 * bodies sent zero-copy beside it, our own greeting and commands queued
 * ahead of them, and the write that carries them. */
#include <string.h>

#include "compiler.h"
#include "direct_send.h"
#include "engine_private.h"
#include "msg_pool.h"
#include "noinline.h"
#include "small_copy.h"

/* Batches start small, which keeps latency low, and double while the pipe
 * stays deep (DESIGN.md §4). The largest carries two 256 KiB bodies or
 * eight 64 KiB ones per write; 1 MiB ran slower, once the socket buffers
 * it fills outgrow the core's L2 (bench/NOTES.md). */
#define BATCH_MIN (8 * 1024)
#define BATCH_MAX (512 * 1024)
/* Of a batch, at most this many bytes are copied into the output buffer;
 * zero-copy bodies fill the rest. The copied bytes are written once here and
 * read once by the kernel, and they cost least while they stay in the
 * core's L2 alongside the socket buffers the kernel fills from them
 * (bench/NOTES.md). */
#define COPIED_MAX (64 * 1024)
/* Bodies this large go out from the message itself: zero copy. */
#define ZERO_COPY_MIN (8 * 1024)
#define MAX_IOV ZL_ENGINE_MAX_IOV
#define MAX_INFLIGHT ZL_ENGINE_MAX_INFLIGHT
/* The queue of our own greeting and commands is a pool block taken when
 * one is queued and given back once it is in the output buffer: these are
 * rare, and ten thousand idle connections would otherwise each hold the
 * room. It holds the greeting, a READY and an ERROR at once. */
#define COMMANDS_CAP (ZL_GREETING_SIZE + 2 * ZL_ENGINE_COMMAND_ROOM)

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

void zl_engine_release_output(zl_engine *e)
{
    if (e->has_stalled_out)
        zlink_msg_close(&e->stalled_out);
    for (int i = 0; i < e->inflight_count; i++)
        zlink_msg_close(&e->slots->inflight[i]);
    release_out_buf(e);
    release_commands(e);
}

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

/* Taken by the first zero-copy body of a busy period, and kept until the
 * output goes idle. */
static bool ensure_slots(zl_engine *e)
{
    if (!e->slots)
        e->slots = zl_pool_alloc(sizeof *e->slots, &e->slots_class);
    return e->slots != NULL;
}

/* Without slots, no zero-copy body is in this batch, so the output buffer
 * is its only iovec. */
static zl_iovec *write_iovs(zl_engine *e)
{
    return e->slots ? e->slots->iov : &e->single_iov;
}

static void close_segment(zl_engine *e)
{
    if (e->out_len > e->segment_start) {
        zl_iovec *iov = &write_iovs(e)[e->iov_count];
        iov->base = e->out_buf + e->segment_start;
        iov->len = e->out_len - e->segment_start;
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

/* A large body goes out from the message itself, beside the output
 * buffer, which keeps it until the write completes. */
static void add_zero_copy(zl_engine *e, zlink_msg_t *msg, const uint8_t *data,
                          size_t len)
{
    close_segment(e);
    e->slots->iov[e->iov_count].base = (void *)data;
    e->slots->iov[e->iov_count].len = len;
    e->iov_count++;
    zlink_msg_init(&e->slots->inflight[e->inflight_count]);
    zlink_msg_move(&e->slots->inflight[e->inflight_count], msg);
    e->inflight_count++;
    e->inflight_bytes += len;
    zlink_msg_close(msg);
}

/* A STREAM socket's message: its bytes alone, with no frame header. */
static bool encode_raw(zl_engine *e, zlink_msg_t *msg)
{
    size_t size = zlink_msg_size(msg);
    if (size < ZERO_COPY_MIN) {
        if (!ensure_out_capacity(e, size))
            return false;
        append_bytes(e, zlink_msg_data(msg), size);
        zlink_msg_close(msg);
        return true;
    }
    if (e->iov_count + 2 >= MAX_IOV || e->inflight_count == e->inflight_max ||
        !ensure_slots(e))
        return false;
    add_zero_copy(e, msg, zlink_msg_data(msg), size);
    return true;
}

/* A CURVE connection's part, sealed into the output buffer: encryption
 * writes new bytes, so nothing goes out zero-copy. */
static bool encode_sealed(zl_engine *e, zlink_msg_t *msg)
{
    const char *command;
    size_t skip = subscription_prefix(e, msg, &command);
    uint8_t name[16];
    size_t name_len = 0;
    uint8_t flags = zl_msg_flags(msg) & ZL_MSG_MORE;
    if (command) {
        flags = ZL_MSG_COMMAND;
        name_len = strlen(command);
        name[0] = (uint8_t)name_len;
        memcpy(name + 1, command, name_len);
        name_len += 1;
    }
    const uint8_t *body = zlink_msg_data(msg);
    size_t size = zlink_msg_size(msg) - skip;
    if (!ensure_out_capacity(e, zl_engine_curve_sealed_size(name_len + size)))
        return false;
    e->out_len += zl_engine_curve_seal(e, e->out_buf + e->out_len, flags, name,
                                       name_len, body + skip, size);
    zlink_msg_close(msg);
    return true;
}

/* Encodes one part; false when the batch has no room left for it. */
static bool encode_part(zl_engine *e, zlink_msg_t *msg)
{
    if (e->raw)
        return encode_raw(e, msg);
    if (e->curve)
        return encode_sealed(e, msg);
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
    if (zero_copy && (e->iov_count + 2 >= MAX_IOV ||
                      e->inflight_count == e->inflight_max || !ensure_slots(e)))
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
    add_zero_copy(e, msg, body + skip, payload);
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

void zl_engine_init_output(zl_engine *e, const zl_options *options)
{
    e->batch_limit = BATCH_MIN;
    e->inflight_max = inflight_limit(options->sndhwm);
    zlink_msg_init(&e->stalled_out);
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
        int r = e->conflate_out ? zl_session_pull_newest(e->session, &msg)
                                : zl_session_pull(e->session, &msg);
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

/* A write completed: what it carried is the kernel's now. */
void zl_engine_write_finished(zl_engine *e)
{
    e->write_pending = false;
    for (int i = 0; i < e->inflight_count; i++)
        zlink_msg_close(&e->slots->inflight[i]);
    e->inflight_count = 0;
    e->inflight_bytes = 0;
    e->out_len = e->segment_start = 0;
    e->iov_count = 0;
}

/* The rest of a message the socket's thread began writing goes out first:
 * its first bytes are on the wire already. It is the next message in the
 * pipe, published before the port came back to us, and small
 * (ZL_DIRECT_BODY_MAX), so it is copied into the room fill_output made. */
static void finish_direct_write(zl_engine *e)
{
    size_t written;
    if (!e->direct_port || !e->session ||
        !zl_direct_port_take_written(e->direct_port, &written))
        return;
    size_t start = e->out_len;
    bool more = true;
    while (more) {
        zlink_msg_t part;
        zlink_msg_init(&part);
        if (zl_session_pull(e->session, &part) != ZL_PIPE_MSG)
            break; /* not reached: the socket published it */
        more = (zl_msg_flags(&part) & ZL_MSG_MORE) != 0;
        encode_part(e, &part);
    }
    if (e->out_len - start < written)
        written = e->out_len - start;
    memmove(e->out_buf + start, e->out_buf + start + written,
            e->out_len - start - written);
    e->out_len -= written;
}

/* Nothing is queued or being written, and the pipe was found empty: until
 * the socket publishes into it again, its thread may write a small message
 * itself instead of waking us (direct_send.h). Only on a plain ZMTP
 * stream, whose bytes the engine writes as they are. */
static void open_direct_port(zl_engine *e)
{
    if (!ZL_BACKEND_TRY_WRITE || e->state != ZL_ENGINE_ACTIVE || !e->session ||
        e->pipe_closed || e->has_stalled_out || !zl_engine_speaks_commands(e) ||
        e->curve)
        return;
    zl_handle *handle = zl_stream_plain_handle(e->stream);
    if (!handle)
        return;
    if (!e->direct_port)
        e->direct_port = zl_session_direct_port(e->session);
    if (e->direct_port)
        zl_direct_port_open(e->direct_port, handle, e->loop);
}

/* Writes what is queued: our greeting and commands, then, once the
 * connection is ACTIVE, a batch from the pipe. With nothing to write, the
 * state machine hears OUTPUT_IDLE. */
void zl_engine_fill_output(zl_engine *e)
{
    if (e->write_pending || e->state == ZL_ENGINE_CLOSED)
        return;
    if (e->direct_port && !zl_direct_port_take(e->direct_port))
        return; /* the socket's thread is writing; it wakes us after */
    /* Room for a full batch of copied parts, so encoding a small part never
     * fails halfway through. */
    size_t copied_limit =
        e->batch_limit < COPIED_MAX ? e->batch_limit : COPIED_MAX;
    if (!ensure_out_capacity(e, COMMANDS_CAP + copied_limit + ZERO_COPY_MIN +
                                    ZL_FRAME_HEADER_MAX))
        return; /* out of memory: try again at the next activation */
    finish_direct_write(e);
    if (e->commands) {
        append_bytes(e, e->commands, e->commands_len);
        release_commands(e);
    }
    if (e->state == ZL_ENGINE_ACTIVE && e->session && !e->pipe_closed) {
        /* The stalled part fits a fresh batch; only a failed allocation of
         * the slots keeps it for the next activation. */
        if (e->has_stalled_out)
            e->has_stalled_out = !encode_part(e, &e->stalled_out);
        if (!e->has_stalled_out) {
            bool deep = fill_batch(e);
            /* Grow while the pipe stays deep, fall back once it empties. */
            if (deep && e->batch_limit < BATCH_MAX)
                e->batch_limit *= 2;
            else if (!deep)
                e->batch_limit = BATCH_MIN;
        }
    }
    close_segment(e);
    if (e->iov_count == 0) {
        e->out_len = e->segment_start = 0;
        /* Nothing to write: an idle connection keeps no output buffer. */
        release_out_buf(e);
        open_direct_port(e);
        zl_engine_dispatch(e, ZL_ENGINE_OUTPUT_IDLE, NULL);
        return;
    }
    e->write_pending = true;
    e->pending_ops++;
    zl_stream_write(e->stream, &e->write_op, write_iovs(e), e->iov_count);
}

/* Queues bytes of our own (greeting, READY, commands) for the next write;
 * false without memory or room. */
bool zl_engine_queue_bytes(zl_engine *e, const void *data, size_t len)
{
    if (!e->commands) {
        e->commands = zl_pool_alloc(COMMANDS_CAP, &e->commands_class);
        if (!e->commands)
            return false;
    }
    if (len > COMMANDS_CAP - e->commands_len)
        return false;
    memcpy(e->commands + e->commands_len, data, len);
    e->commands_len += len;
    return true;
}

/* Queues one of our own commands (PONG, PING, ERROR) for the next write.
 * Without memory or room it is dropped, as a full queue drops it: a PING
 * or PONG comes again, and an ERROR is followed by the close anyway. */
void zl_engine_queue_command(zl_engine *e, const char *name, const void *data,
                             size_t len)
{
    if (!zl_engine_speaks_commands(e))
        return; /* a raw or plain ZWS2.0 peer knows no commands */
    uint8_t command[ZL_ENGINE_COMMAND_ROOM];
    size_t n;
    if (e->curve && e->state == ZL_ENGINE_ACTIVE) {
        /* Sealed as a part with the command flag, as libzmq sends them. */
        uint8_t prefix[1 + UINT8_MAX];
        size_t name_len = strlen(name);
        if (zl_engine_curve_sealed_size(1 + name_len + len) > sizeof command)
            return;
        prefix[0] = (uint8_t)name_len;
        memcpy(prefix + 1, name, name_len);
        n = zl_engine_curve_seal(e, command, ZL_MSG_COMMAND, prefix,
                                 1 + name_len, data, len);
    } else {
        n = zl_command_encode(command, sizeof command, name, data, len);
    }
    zl_engine_queue_bytes(e, command, n);
}

/* Queues a command and starts the write that carries it. */
void zl_engine_send_command(zl_engine *e, const char *name, const void *data,
                            size_t len)
{
    zl_engine_queue_command(e, name, data, len);
    zl_engine_fill_output(e);
}
