/* engine.c — the state machine of one ZMTP connection. Every event enters
 * zl_engine_dispatch, which says in one place what each event does in
 * each state; every change of state happens there too, along the edges of
 * one table. The work itself lives in engine_handshake.c (greeting,
 * READY), engine_input.c (reads, decoding) and engine_output.c (batches,
 * writes).
 *
 *   TRANSPORT ──stream ready──► GREETING ──peer's greeting──► HANDSHAKE
 *       └───────stream ready, ZWS framing (no greeting)───────────┘
 *   TRANSPORT ──stream ready, STREAM socket (raw, engine_raw.c)──► ACTIVE
 *   HANDSHAKE ──peer's READY──► ACTIVE
 *   HANDSHAKE ──peer's socket type rejected──► FAILING ──ERROR out──► CLOSED
 *   any state ──failure, timeout, the FIN, destroy──► CLOSED
 */
#include "direct_recv.h"
#include "direct_send.h"
#include "engine_private.h"
#include "patterns/pattern.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "monitor.h"

#define EDGE(s) (1u << (s))

/* Which states may follow each state: every edge of the machine, checked
 * where assertions are on. */
#ifndef NDEBUG
static const unsigned edges[ZL_ENGINE_STATES] = {
    [ZL_ENGINE_TRANSPORT] = EDGE(ZL_ENGINE_GREETING) |
                            EDGE(ZL_ENGINE_HANDSHAKE) | EDGE(ZL_ENGINE_ACTIVE) |
                            EDGE(ZL_ENGINE_CLOSED),
    [ZL_ENGINE_GREETING] = EDGE(ZL_ENGINE_HANDSHAKE) | EDGE(ZL_ENGINE_CLOSED),
    [ZL_ENGINE_HANDSHAKE] = EDGE(ZL_ENGINE_ACTIVE) | EDGE(ZL_ENGINE_FAILING) |
                            EDGE(ZL_ENGINE_CLOSED),
    [ZL_ENGINE_ACTIVE] = EDGE(ZL_ENGINE_CLOSED),
    [ZL_ENGINE_FAILING] = EDGE(ZL_ENGINE_CLOSED),
    [ZL_ENGINE_CLOSED] = 0,
};
#endif

static void set_state(zl_engine *e, zl_engine_state next)
{
    assert(edges[e->state] & EDGE(next));
    e->state = next;
}

static void maybe_free(zl_engine *e)
{
    if (e->state != ZL_ENGINE_CLOSED || e->session || e->pending_ops > 0)
        return;
    zl_engine_release_input(e);
    zl_engine_release_output(e);
    if (e->metadata)
        zl_metadata_release_n(e->metadata, e->metadata_credit + 1);
    free(e->routing_id);
    zl_engine_release_plain(e);
    zl_engine_release_curve(e);
    free(e);
}

static void stop_timers(zl_engine *e)
{
    zl_timer_stop(e->loop, &e->handshake_timer);
    zl_timer_stop(e->loop, &e->start_timer);
    zl_timer_stop(e->loop, &e->heartbeat_timer);
    zl_timer_stop(e->loop, &e->heartbeat_deadline);
}

/* Before the handle closes, or the pipe they belong to goes: the socket's
 * thread may be writing, or watching the connection. */
static void shut_ports(zl_engine *e)
{
    if (e->direct_port) {
        zl_direct_port_shut(e->direct_port);
        e->direct_port = NULL;
    }
    if (e->recv_port) {
        zl_recv_port_shut(e->recv_port);
        e->recv_port = NULL;
    }
}

void zl_engine_pipe_gone(zl_engine *e)
{
    shut_ports(e);
}

/* Closes the connection; the session hears of it once (unless it is the one
 * destroying us). */
static void close_connection(zl_engine *e, bool protocol)
{
    if (e->state == ZL_ENGINE_CLOSED)
        return;
    if (e->raw && e->state == ZL_ENGINE_ACTIVE)
        zl_engine_raw_notify_end(e);
    set_state(e, ZL_ENGINE_CLOSED);
    stop_timers(e);
    shut_ports(e);
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

static bool handshaking(const zl_engine *e)
{
    return e->state == ZL_ENGINE_TRANSPORT || e->state == ZL_ENGINE_GREETING ||
           e->state == ZL_ENGINE_HANDSHAKE;
}

/* Any failure: report and close. A stream that knows why it failed (a
 * certificate that does not verify, a bad HTTP upgrade) says so, and
 * whether a connect retries; other handshake failures that are not
 * protocol violations (timeout, reset) are reported as NO_DETAIL, as
 * libzmq does. */
void zl_engine_fail(zl_engine *e, bool protocol)
{
    if (e->state == ZL_ENGINE_CLOSED)
        return;
    uint64_t value = 0;
    bool retry = true;
    int event = e->stream ? zl_stream_failure(e->stream, &value, &retry) : 0;
    if (event && e->session) {
        zl_monitor_event(zl_session_socket(e->session), event, value,
                         zl_session_endpoint(e->session));
        protocol = !retry;
    } else if (!protocol && e->session && handshaking(e))
        zl_monitor_event(zl_session_socket(e->session),
                         ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                         (uint64_t)e->fail_errno,
                         zl_session_endpoint(e->session));
    close_connection(e, protocol);
}

/* A failed read or write, or the peer's FIN: NO_DETAIL carries its errno
 * as libzmq's does (EPIPE for an orderly close, as libzmq sets it). */
void zl_engine_fail_io(zl_engine *e, int status)
{
    e->fail_errno = status == ZL_EOF || status == 0 ? EPIPE
                    : status == ZL_ECANCELED        ? ECANCELED
                                                    : -status;
    zl_engine_fail(e, false);
}

/* A protocol violation closes the connection. During the handshake it is
 * reported with its reason, before the DISCONNECTED that every close
 * reports; after it, only the close is. */
void zl_engine_protocol_error(zl_engine *e, uint32_t reason)
{
    if (e->session && handshaking(e))
        zl_monitor_event(zl_session_socket(e->session),
                         ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, reason,
                         zl_session_endpoint(e->session));
    zl_engine_fail(e, true);
}

/* The peer has this long to send anything at all. Armed only by a PING,
 * ours or the peer's TTL, as libzmq does: arming it at READY and on every
 * read closed a quiet but healthy peer at the moment our first PING went
 * out, when HEARTBEAT_TIMEOUT equals HEARTBEAT_IVL (the default). */
void zl_engine_arm_deadline(zl_engine *e, int ms)
{
    if (ms <= 0)
        return;
    /* Ours and the peer's TTL share the timer: the earlier one counts. */
    uint64_t due = zl_loop_now(e->loop) + (uint64_t)ms;
    if (!zl_timer_active(&e->heartbeat_deadline) ||
        due < e->heartbeat_deadline.due_ms)
        zl_timer_start(e->loop, &e->heartbeat_deadline, (uint64_t)ms);
}

static void send_heartbeat(zl_engine *e)
{
    uint16_t ttl = (uint16_t)(e->heartbeat_ttl / 100);
    uint8_t body[2] = {(uint8_t)(ttl >> 8), (uint8_t)ttl};
    zl_engine_send_command(e, "PING", body, sizeof body);
    zl_engine_arm_deadline(e, e->heartbeat_timeout);
    zl_timer_start(e->loop, &e->heartbeat_timer, (uint64_t)e->heartbeat_ivl);
}

static void timed_out(zl_engine *e)
{
    /* libzmq reports whatever errno held; the cause is the clock. */
    zl_engine_fail_io(e, -ETIMEDOUT);
}

static void write_done(zl_engine *e, int status)
{
    if (status != 0)
        zl_engine_fail_io(e, status);
    else
        zl_engine_fill_output(e);
}

/* TRANSPORT → GREETING or HANDSHAKE: ZMTP starts, in the form the stream
 * carries. */
static void start_protocol(zl_engine *e)
{
    bool queued;
    if (e->raw) {
        set_state(e, ZL_ENGINE_ACTIVE);
        zl_timer_stop(e->loop, &e->handshake_timer);
        if (!zl_engine_raw_start(e))
            return;
        zl_engine_fill_output(e);
        zl_engine_start_read(e);
        return;
    }
    switch (zl_stream_framing(e->stream)) {
    case ZL_FRAMING_ZWS_RAW:
    case ZL_FRAMING_ZWS_NULL:
        /* The subprotocol named the mechanism: no greeting either way.
         * ZWS peers (libzmq's ws, jszmq) take subscriptions as 0x01/0x00
         * messages, as a ZMTP 3.0 peer does. */
        e->routing_id_first =
            zl_stream_framing(e->stream) == ZL_FRAMING_ZWS_RAW;
        e->peer_minor = 0;
        set_state(e, ZL_ENGINE_HANDSHAKE);
        if (zl_engine_mechanism_is_plain(e) || e->curve) {
            /* Never a silent fall back to NULL: ws carries NULL only. */
            zl_engine_protocol_error(
                e, ZLINK_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH);
            return;
        }
        /* NULL asks its ZAP handler before its READY, as over ZMTP; plain
         * ZWS2.0 has no READY to hold back, so it asks none. */
        if (e->routing_id_first)
            zl_engine_forget_null_zap(e);
        queued = e->plain ? zl_engine_plain_start(e) : zl_engine_queue_ready(e);
        break;
    case ZL_FRAMING_ZMTP:
    default:
        set_state(e, ZL_ENGINE_GREETING);
        queued = zl_engine_queue_greeting(e);
        break;
    }
    if (!queued) {
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    zl_engine_fill_output(e);
    zl_engine_start_read(e);
}

/* HANDSHAKE → ACTIVE: the session gets its pipe and the peer's routing
 * id. A plain ZWS2.0 peer knows no commands, so no PING either. */
static void become_active(zl_engine *e, const zl_blob *peer_routing_id)
{
    set_state(e, ZL_ENGINE_ACTIVE);
    zl_timer_stop(e->loop, &e->handshake_timer);
    /* The peer is admitted: MAXMSGSIZE alone bounds what it sends now. */
    zl_decoder_set_max_frame(&e->decoder, -1);
    if (e->heartbeat_ivl > 0 && zl_engine_speaks_commands(e))
        zl_timer_start(e->loop, &e->heartbeat_timer,
                       (uint64_t)e->heartbeat_ivl);
    if (zl_session_engine_ready(e->session, peer_routing_id) != 0) {
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    zl_engine_fill_output(e);
}

/* HANDSHAKE → FAILING: tell the peer why before closing, as the spec
 * asks; the close follows once the ERROR is written (OUTPUT_IDLE). The
 * reason is a short string: its length byte, then the text. */
static void reject_peer(zl_engine *e, const char *reason)
{
    if (!reason)
        reason = "\x13Invalid socket type";
    set_state(e, ZL_ENGINE_FAILING);
    zl_engine_queue_command(e, "ERROR", reason, 1 + (uint8_t)reason[0]);
    zl_engine_fill_output(e);
}

/* The transition function: what every event does in every state. Each
 * state's switch lists only its own events, and the events that it ignores
 * where the shared switch below would act; the rest fall through to that
 * switch, which handles the events common to every open state. An event
 * neither lists cannot happen in that state (no read is pending before
 * GREETING or in FAILING, no pipe is attached before ACTIVE) or is
 * ignored. */
void zl_engine_dispatch(zl_engine *e, zl_engine_event ev,
                        const zl_engine_args *args)
{
    switch (e->state) {
    case ZL_ENGINE_TRANSPORT:
        switch (ev) {
        case ZL_ENGINE_TRANSPORT_DONE:
            if (args->status != 0)
                zl_engine_fail_io(e, args->status);
            else
                start_protocol(e);
            return;
        case ZL_ENGINE_READ_DONE:
        case ZL_ENGINE_WRITE_DONE:
            return; /* nothing is read or written before the stream is up */
        default:
            break;
        }
        break;
    case ZL_ENGINE_GREETING:
        switch (ev) {
        case ZL_ENGINE_GREETING_DONE:
            /* Our READY (or HELLO) follows; decoding goes on with the
             * peer's. */
            set_state(e, ZL_ENGINE_HANDSHAKE);
            if (zl_engine_queue_mechanism_start(e))
                zl_engine_fill_output(e);
            else
                zl_engine_fail_io(e, -ENOMEM);
            return;
        default:
            break;
        }
        break;
    case ZL_ENGINE_HANDSHAKE:
        switch (ev) {
        case ZL_ENGINE_PEER_READY:
            become_active(e, args->peer_routing_id);
            return;
        case ZL_ENGINE_PEER_REJECTED:
            reject_peer(e, args ? args->error_reason : NULL);
            return;
        default:
            break;
        }
        break;
    case ZL_ENGINE_ACTIVE:
        switch (ev) {
        case ZL_ENGINE_PIPE_READABLE:
            zl_engine_fill_output(e);
            return;
        case ZL_ENGINE_PIPE_WRITABLE:
            zl_engine_resume_input(e);
            return;
        case ZL_ENGINE_HEARTBEAT:
            send_heartbeat(e);
            return;
        case ZL_ENGINE_HEARTBEAT_DEADLINE:
            timed_out(e);
            return;
        case ZL_ENGINE_OUTPUT_IDLE:
            /* The delimiter's turn came and all before it is written:
             * linger is over. */
            if (e->pipe_closed && e->session)
                zl_session_engine_drained(e->session);
            return;
        case ZL_ENGINE_HANDSHAKE_TIMEOUT:
            return; /* the handshake is over: HANDSHAKE_IVL no longer counts */
        default:
            break;
        }
        break;
    case ZL_ENGINE_FAILING:
        switch (ev) {
        case ZL_ENGINE_OUTPUT_IDLE:
            /* The ERROR is on the wire: now close (spec 37: ERROR, then
             * close). */
            close_connection(e, true);
            return;
        case ZL_ENGINE_READ_DONE:
            return; /* the peer's input no longer matters */
        default:
            break;
        }
        break;
    case ZL_ENGINE_CLOSED:
    default:
        /* Completions still pending drain here; the last one frees. */
        if (ev == ZL_ENGINE_CLOSE)
            maybe_free(e);
        return;
    }

    /* Common to every open state. */
    switch (ev) {
    case ZL_ENGINE_READ_DONE:
        zl_engine_read_completed(e, args->status, args->bytes);
        return;
    case ZL_ENGINE_WRITE_DONE:
        write_done(e, args->status);
        return;
    case ZL_ENGINE_HANDSHAKE_TIMEOUT:
        timed_out(e);
        return;
    case ZL_ENGINE_CLOSE:
        close_connection(e, false);
        return;
    default:
        return;
    }
}
/* ---- completions and timers: each becomes an event ---- */

/* An op's completion as an event. pending_ops still counts the op during
 * the dispatch: a protocol error found there closes the engine, and must
 * not free it under us. */
static void dispatch_completion(zl_engine *e, zl_engine_event event, int status,
                                size_t bytes)
{
    zl_engine_args args = {.status = status, .bytes = bytes};
    zl_engine_dispatch(e, event, &args);
    e->pending_ops--;
    maybe_free(e);
}

static void on_read(zl_op *op, int status, size_t bytes)
{
    dispatch_completion(op->data, ZL_ENGINE_READ_DONE, status, bytes);
}

static void on_write(zl_op *op, int status, size_t bytes)
{
    zl_engine_write_finished(op->data);
    dispatch_completion(op->data, ZL_ENGINE_WRITE_DONE, status, bytes);
}

static void on_transport_ready(zl_op *op, int status, size_t bytes)
{
    dispatch_completion(op->data, ZL_ENGINE_TRANSPORT_DONE, status, bytes);
}

static void on_stream_ready(zl_timer *t)
{
    zl_engine_args ready = {.status = 0};
    zl_engine_dispatch(t->data, ZL_ENGINE_TRANSPORT_DONE, &ready);
}

static void on_handshake_timeout(zl_timer *t)
{
    zl_engine_dispatch(t->data, ZL_ENGINE_HANDSHAKE_TIMEOUT, NULL);
}

static void on_heartbeat(zl_timer *t)
{
    zl_engine_dispatch(t->data, ZL_ENGINE_HEARTBEAT, NULL);
}

static void on_heartbeat_deadline(zl_timer *t)
{
    zl_engine_dispatch(t->data, ZL_ENGINE_HEARTBEAT_DEADLINE, NULL);
}

/* ---- entry points ---- */

zl_engine *zl_engine_create(zl_session *session, zl_loop *loop,
                            zl_stream *stream, const zl_options *options)
{
    zl_engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->state = ZL_ENGINE_TRANSPORT;
    e->session = session;
    e->loop = loop;
    e->stream = stream;
    e->socket_type = options->type;
    e->recv_port_fits = zl_pattern_reads_directly(options->type);
    e->conflate_out = zl_options_conflates_out(options);
    e->raw = options->type == ZLINK_STREAM;
    e->raw_notify = options->stream_notify;
    /* libzmq announces an Identity only where it means something. */
    if (zl_socket_type_announces_identity(options->type) &&
        options->routing_id) {
        e->routing_id = malloc(sizeof *e->routing_id);
        if (!e->routing_id) {
            free(e);
            return NULL;
        }
        *e->routing_id = *options->routing_id;
    }
    if (!e->raw && (!zl_engine_init_plain(e, options) ||
                    !zl_engine_init_curve(e, options))) {
        zl_engine_release_plain(e);
        free(e->routing_id);
        free(e);
        return NULL;
    }
    e->handshake_ivl = options->handshake_ivl;
    e->heartbeat_ivl = options->heartbeat_ivl;
    e->heartbeat_ttl = options->heartbeat_ttl;
    e->heartbeat_timeout = options->heartbeat_timeout >= 0
                               ? options->heartbeat_timeout
                               : options->heartbeat_ivl;
    e->peer_minor = 1;
    zl_engine_init_input(e, options);
    zl_engine_init_output(e, options);
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
    /* HANDSHAKE_IVL covers the transport's own handshake too. */
    if (e->handshake_ivl > 0)
        zl_timer_start(loop, &e->handshake_timer, (uint64_t)e->handshake_ivl);
    e->pending_ops++;
    if (!zl_stream_handshake(stream, &e->transport_op)) {
        /* No handshake of its own: the stream is ready now. Starting it
         * here could fail the engine inside this call, and tell a session
         * that does not hold it yet. */
        e->pending_ops--;
        e->start_timer.cb = on_stream_ready;
        e->start_timer.data = e;
        zl_timer_start(loop, &e->start_timer, 0);
    }
    return e;
}

void zl_engine_restart_output(zl_engine *e)
{
    zl_engine_dispatch(e, ZL_ENGINE_PIPE_READABLE, NULL);
}

void zl_engine_restart_input(zl_engine *e)
{
    /* A protocol error in what is decoded now closes us; the extra count
     * keeps e alive until we are done with it. */
    e->pending_ops++;
    zl_engine_dispatch(e, ZL_ENGINE_PIPE_WRITABLE, NULL);
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
    zl_engine_dispatch(e, ZL_ENGINE_CLOSE, NULL);
}
