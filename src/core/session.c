/* session.c — one connection's life on its I/O thread: connecting and
 * reconnecting with backoff, the pipe to the socket, the engine, linger, and
 * the partial messages a dropped connection leaves behind. */
#include "session.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "engine.h"
#include "monitor.h"
#include "msg.h"
#include "random.h"
#include "socket.h"
#include "socks_connect.h"
#include "transport/address.h"
#include "transport/listener.h"
#include "transport/resolver.h"
#include "transport/stream.h"

static void start_connect(zl_session *s);
static void destroy(zl_session *s);
static void end_on_own(zl_session *s);

static const zl_io_object_ops session_ops;

const char *zl_session_endpoint(const zl_session *s)
{
    return s->endpoint;
}

int zl_session_socket_type(const zl_session *s)
{
    return s->options.type;
}

zl_socket *zl_session_socket(zl_session *s)
{
    return s->socket;
}

struct zl_direct_port *zl_session_direct_port(zl_session *s)
{
    return s->pipe ? zl_pipe_direct_port(s->pipe) : NULL;
}

struct zl_recv_port *zl_session_recv_port(zl_session *s)
{
    return s->pipe ? zl_pipe_recv_port(s->pipe) : NULL;
}

void zl_session_recv_port_opened(zl_session *s)
{
    if (s->pipe)
        zl_pipe_wake_reader(s->pipe);
}

/* ---- the pipe ---- */

/* Pipe HWMs between socket and session: SNDHWM limits what the socket
 * queues for the wire, RCVHWM what the wire queues for the application. */
static int create_pipe(zl_session *s, zl_pipe **socket_end)
{
    zl_pipe *ours;
    /* CONFLATE keeps the newest message each way: the engine takes the
     * newest the socket queued (zl_session_pull_newest), the socket reads
     * the newest the engine queued (zl_fair_queue_set_conflate), and
     * beyond RCVHWM the newest waits in the session (session_push). */
    if (zl_pipe_pair(socket_end, &ours, s->options.sndhwm, s->options.rcvhwm) !=
        0)
        return -1;
    zl_pipe_set_owner(*socket_end, &s->socket->mailbox, s->socket);
    zl_pipe_set_owner(ours, &s->base.thread->mailbox, s);
    zl_pipe_set_burst_writer(ours);
    zl_pipe_weigh_parts(ours);
    (*socket_end)->peer_is_session = true;
    /* The socket tells us a newer RCVHWM as it attaches the pipe. */
    (*socket_end)->told_recv_hwm = s->options.rcvhwm;
    s->pipe = ours;
    return 0;
}

static void send_to_socket(zl_session *s, zl_cmd_type type, zl_pipe *p)
{
    zl_cmd cmd = {
        .type = type, .target = s->socket, .pipe = p, .arg = s->connect_side};
    if (p)
        zl_pipe_ref(p);
    zl_mailbox_send(&s->socket->mailbox, &cmd);
}

/* Removes what a dropped connection left half done, so that the next
 * connection starts at a message boundary in both directions. */
static void clean_partial_messages(zl_session *s)
{
    if (!s->pipe)
        return;
    if (s->in_in_message) {
        zl_pipe_rollback(s->pipe);
        s->in_in_message = false;
    }
    while (s->out_in_message) {
        zlink_msg_t msg;
        zlink_msg_init(&msg);
        if (zl_pipe_read(s->pipe, &msg) != ZL_PIPE_MSG)
            break;
        s->out_in_message = (zl_msg_flags(&msg) & ZL_MSG_MORE) != 0;
        zlink_msg_close(&msg);
    }
    s->out_in_message = false;
}

static void close_pipe(zl_session *s)
{
    if (!s->pipe)
        return;
    zl_pipe_terminate(s->pipe);
    zl_pipe_release(s->pipe);
    s->pipe = NULL;
}

/* A connecting ROUTER learns its peer's name at the handshake, unless
 * CONNECT_ROUTING_ID gave one. */
static bool router_waits_for_id(const zl_options *o)
{
    return o->type == ZLINK_ROUTER && !o->connect_routing_id;
}

/* ---- called by the engine ---- */

int zl_session_engine_ready(zl_session *s, const zl_blob *peer_routing_id)
{
    /* A STREAM connection has no handshake, and libzmq reports none. */
    if (s->options.type != ZLINK_STREAM)
        zl_monitor_event(s->socket, ZLINK_EVENT_HANDSHAKE_SUCCEEDED, 0,
                         s->endpoint);
    s->reconnect_ivl_now = s->options.reconnect_ivl;
    if (s->pipe)
        return 0;
    zl_pipe *socket_end;
    if (create_pipe(s, &socket_end) != 0)
        return -1;
    /* CONNECT_ROUTING_ID names this peer on our side, whatever it
     * announced. */
    const zl_blob *id = s->options.connect_routing_id
                            ? s->options.connect_routing_id
                            : peer_routing_id;
    if (zl_pipe_set_routing_id(socket_end, id->data, id->len) != 0) {
        /* Out of memory, as create_pipe failing. The socket never saw
         * its end, which is released first, so closing ours sends it no
         * command. */
        zl_pipe_release(socket_end);
        close_pipe(s);
        return -1;
    }
    /* The socket writes PROBE_ROUTER's message when it attaches a pipe,
     * which waits for the application's next call. A pipe made at
     * connect (libzmq's way) has it sent as soon as the peer is ready;
     * one made here, at the handshake, sends it from here for the same. */
    if (s->connect_side && zl_options_probes_router(&s->options)) {
        s->probe_pending = true;
        socket_end->probe_sent = true;
    }
    send_to_socket(s, ZL_CMD_ATTACH_PIPE, socket_end);
    return 0;
}

int zl_session_pull(zl_session *s, zlink_msg_t *msg)
{
    if (!s->pipe || s->pipe_closed)
        return ZL_PIPE_EMPTY;
    if (s->probe_pending) {
        s->probe_pending = false;
        zlink_msg_init(msg);
        return ZL_PIPE_MSG;
    }
    zl_pipe_read_result r = zl_pipe_read(s->pipe, msg);
    if (r == ZL_PIPE_MSG)
        s->out_in_message = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
    else if (r == ZL_PIPE_CLOSED)
        s->pipe_closed = true;
    return r;
}

int zl_session_pull_newest(zl_session *s, zlink_msg_t *msg)
{
    bool probe = s->probe_pending;
    int r = zl_session_pull(s, msg);
    if (r != ZL_PIPE_MSG || s->out_in_message || probe)
        return r;
    zlink_msg_t newer;
    zlink_msg_init(&newer);
    for (;;) {
        switch (zl_session_pull(s, &newer)) {
        case ZL_PIPE_MSG:
            zlink_msg_close(msg);
            zlink_msg_init(msg);
            zlink_msg_move(msg, &newer);
            if (s->out_in_message)
                return ZL_PIPE_MSG; /* a multipart message: it goes whole */
            break;
        case ZL_PIPE_CLOSED:
            /* The socket's delimiter: the next pull reads it again and
             * reports it, after this message. */
            zlink_msg_init(&newer);
            s->pipe_closed = false;
            return ZL_PIPE_MSG;
        default:
            return ZL_PIPE_MSG;
        }
    }
}

/* The pipe is full. Under CONFLATE a single-part message replaces the one
 * waiting, so the engine never stops reading and the application gets the
 * newest. A multipart message is not conflated: libzmq leaves that
 * undefined, and zlink delivers it whole, with backpressure as usual. */
static bool conflate(zl_session *s, zlink_msg_t *msg)
{
    if (!zl_options_conflates(&s->options) || (zl_msg_flags(msg) & ZL_MSG_MORE))
        return false;
    if (s->has_conflated)
        zlink_msg_close(&s->conflated);
    zlink_msg_init(&s->conflated);
    zlink_msg_move(&s->conflated, msg);
    s->has_conflated = true;
    return true;
}

static void flush_conflated(zl_session *s);

/* A message comes while a conflated one still waits for room (the pipe
 * took some back, but its ACTIVATE_WRITE has not come yet). The waiting
 * one must never follow it into the pipe: a single-part message replaces
 * it, the newest being what CONFLATE keeps; a multipart message waits
 * behind it. False when msg must wait. */
static bool settle_conflated(zl_session *s, const zlink_msg_t *msg)
{
    if (!(zl_msg_flags(msg) & ZL_MSG_MORE)) {
        zlink_msg_close(&s->conflated);
        zlink_msg_init(&s->conflated);
        s->has_conflated = false;
        return true;
    }
    flush_conflated(s);
    return !s->has_conflated;
}

bool zl_session_push(zl_session *s, zlink_msg_t *msg)
{
    if (!s->pipe || s->pipe->terminated) {
        /* Nobody will read it: drop, as there is no one to keep it for. */
        zlink_msg_close(msg);
        zlink_msg_init(msg);
        return true;
    }
    if (s->has_conflated && !s->in_in_message && !settle_conflated(s, msg))
        return false;
    if (!s->in_in_message && !zl_pipe_check_write(s->pipe))
        return conflate(s, msg);
    s->in_in_message = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
    zl_pipe_write(s->pipe, msg);
    return true;
}

/* The conflated message goes into the pipe once it has room. */
static void flush_conflated(zl_session *s)
{
    if (!s->has_conflated || !s->pipe || s->pipe->terminated ||
        !zl_pipe_check_write(s->pipe))
        return;
    zl_pipe_write(s->pipe, &s->conflated);
    zl_pipe_flush(s->pipe);
    zlink_msg_init(&s->conflated);
    s->has_conflated = false;
}

void zl_session_flush(zl_session *s)
{
    if (s->pipe && !s->pipe->terminated)
        zl_pipe_flush(s->pipe);
}

static void on_reconnect_timer(zl_timer *t)
{
    zl_session *s = t->data;
    start_connect(s);
}

static void schedule_reconnect(zl_session *s)
{
    if (s->abandoned)
        return; /* the socket's TERM is on its way */
    if (s->options.reconnect_ivl < 0) {
        end_on_own(s);
        return;
    }
    /* As libzmq: a random part of RECONNECT_IVL is added, so that the
     * clients of a server that restarts do not all come back at once. */
    int ivl = s->reconnect_ivl_now;
    if (s->options.reconnect_ivl > 0) {
        int jitter = (int)(zl_random_next(&s->jitter_state) %
                           (uint64_t)s->options.reconnect_ivl);
        ivl = ivl < INT_MAX - jitter ? ivl + jitter : INT_MAX;
    }
    zl_timer_start(s->base.thread->loop, &s->reconnect_timer, (uint64_t)ivl);
    /* As libzmq: announced when the retry is scheduled, with the interval
     * it waits, so a monitor hears of it at once however long that is. */
    zl_monitor_event(s->socket, ZLINK_EVENT_CONNECT_RETRIED, (uint64_t)ivl,
                     s->endpoint);
    /* Exponential backoff up to RECONNECT_IVL_MAX when it is set. */
    if (s->options.reconnect_ivl_max > s->options.reconnect_ivl) {
        int now = s->reconnect_ivl_now;
        int next = now < INT_MAX / 2 ? now * 2 : INT_MAX;
        s->reconnect_ivl_now = next > s->options.reconnect_ivl_max
                                   ? s->options.reconnect_ivl_max
                                   : next;
    }
}

/* A SUB or XSUB keeps its pipe across reconnects, but the publisher it
 * reaches next knows none of its subscriptions. As libzmq's pipe hiccup:
 * what the socket queued for the lost connection is dropped, and the socket
 * is told to queue its whole subscription set again. */
static void hiccup(zl_session *s)
{
    if (!s->pipe ||
        (s->options.type != ZLINK_SUB && s->options.type != ZLINK_XSUB))
        return;
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    while (zl_session_pull(s, &msg) == ZL_PIPE_MSG) {
        zlink_msg_close(&msg);
        zlink_msg_init(&msg);
    }
    zl_pipe_hiccup(s->pipe);
}

/* A closed socket's connect that still holds messages to deliver, and may
 * wait LINGER for a connection to deliver them on. IMMEDIATE pipes, and
 * ROUTER pipes named by the peer, go with their connection. */
static bool lingers_to_deliver(zl_session *s)
{
    return s->connect_side && s->pipe && s->options.linger != 0 &&
           !s->options.immediate && !router_waits_for_id(&s->options) &&
           zl_pipe_readable_count(s->pipe) > 0;
}

void zl_session_engine_error(zl_session *s, bool protocol)
{
    s->engine = NULL;
    zl_session_close_zap(s);
    zl_monitor_event(s->socket, ZLINK_EVENT_DISCONNECTED, s->fd, s->endpoint);
    clean_partial_messages(s);
    if (s->terminating && !protocol && lingers_to_deliver(s)) {
        /* As libzmq: a connection lost (or a handshake refused) while the
         * socket lingers is made again, and what is queued still goes if
         * a connection comes within LINGER. */
        schedule_reconnect(s);
        return;
    }
    if (s->terminating || !s->connect_side || protocol) {
        /* libzmq stops reconnecting after a protocol error. */
        end_on_own(s);
        return;
    }
    /* IMMEDIATE pipes, and ROUTER pipes named by the peer, exist only while
     * connected. */
    if (s->options.immediate || router_waits_for_id(&s->options))
        close_pipe(s);
    else
        hiccup(s);
    schedule_reconnect(s);
}

void zl_session_engine_drained(zl_session *s)
{
    if (s->terminating)
        destroy(s);
}

/* ---- connecting ---- */

/* ipc's send buffer while SNDBUF is left at its default (-1). AF_UNIX's
 * own default (208 KiB on Linux) holds less than one 256 KiB message, so
 * such a message took two writes with a wait for the reader in between;
 * 512 KiB holds it (bench/NOTES.md, "Comment figures").
 * The kernel charges the buffer only while bytes are queued. tcp keeps the
 * OS default: its buffers grow on their own, and a fixed size would stop
 * that. */
#define IPC_SNDBUF_DEFAULT (512 * 1024)

static void set_buffer_sizes(zl_handle *h, const zl_options *options,
                             const char *endpoint)
{
    int sndbuf = options->sndbuf > 0 ? options->sndbuf : 0;
    zl_transport transport;
    const char *rest;
    if (options->sndbuf < 0 &&
        zl_endpoint_split(endpoint, &transport, &rest) == 0 &&
        transport == ZL_TRANSPORT_IPC)
        sndbuf = IPC_SNDBUF_DEFAULT;
    zl_handle_set_buffers(h, sndbuf, options->rcvbuf > 0 ? options->rcvbuf : 0);
    /* Keepalive, MAXRT and TOS on both sides of a tcp connection, as
     * libzmq; the backend leaves other transports alone. */
    zl_handle_tune_tcp(h, &options->tcp);
}

/* Wraps the connected handle in its transport's stream and starts an
 * engine on it; on failure the handle is closed. */
static bool start_engine_on(zl_session *s, zl_stream *stream)
{
    s->fd = (uint64_t)zl_handle_os_socket(stream->handle);
    s->engine = zl_engine_create(s, s->base.thread->loop, stream, &s->options);
    if (!s->engine) {
        zl_stream_close(stream);
        return false;
    }
    return true;
}

static bool start_engine(zl_session *s, zl_handle *h, bool connecting)
{
    /* The stream takes the handle, and closes it if it cannot be made. */
    zl_stream *stream = zl_stream_create(s->base.thread->loop, h, s->endpoint,
                                         &s->options, connecting);
    if (!stream)
        return false;
    return start_engine_on(s, stream);
}

/* The attempt ended: connected (through the proxy, if any) when status
 * is 0. */
static void end_connect_attempt(zl_session *s, int status)
{
    zl_handle *h = s->connecting;
    s->connecting = NULL;
    zl_timer_stop(s->base.thread->loop, &s->connect_timer);
    zl_timer_stop(s->base.thread->loop, &s->socks_timer);
    /* CONNECT_TIMEOUT cancelled it: a failed attempt, retried as libzmq
     * does (CLOSED, then CONNECT_RETRIED). */
    if (status == ZL_ECANCELED && s->connect_timed_out && !s->destroying)
        status = -ETIMEDOUT;
    s->connect_timed_out = false;
    if (status == ZL_ECANCELED || s->destroying) {
        /* Destroyed while connecting means destroy() closed h already:
         * closing it twice freed it under this very completion. */
        if (h && !s->destroying)
            zl_handle_close(h);
        if (s->destroying && !s->engine)
            destroy(s);
        return;
    }
    uint64_t fd = (uint64_t)zl_handle_os_socket(h);
    if (status != 0 || s->abandoned) {
        zl_handle_close(h);
        if (s->abandoned)
            return;
        zl_monitor_event(s->socket, ZLINK_EVENT_CLOSED, fd, s->endpoint);
        schedule_reconnect(s);
        return;
    }
    set_buffer_sizes(h, &s->options, s->endpoint);
    zl_monitor_event(s->socket, ZLINK_EVENT_CONNECTED, fd, s->endpoint);
    if (!start_engine(s, h, true))
        schedule_reconnect(s);
}

static void on_socks_done(void *owner, int status)
{
    end_connect_attempt(owner, status);
}

/* Connected to the proxy: the attempt goes on with the SOCKS exchange,
 * s->connecting still pending as far as destroy, CONNECT_TIMEOUT and
 * abandon_connect are concerned. As libzmq, CONNECTED waits for the
 * proxy's success. */
static int start_socks(zl_session *s)
{
    s->connect_timed_out = false;
    if (zl_socks_connect_start(
            s->connecting, s->socks_peer, s->options.socks_username,
            s->options.socks_password, on_socks_done, s) != 0)
        return -errno;
    if (s->options.handshake_ivl > 0)
        zl_timer_start(s->base.thread->loop, &s->socks_timer,
                       (uint64_t)s->options.handshake_ivl);
    return 0;
}

static void on_connected(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    zl_session *s = op->data;
    if (status == 0 && s->socks_peer && !s->destroying && !s->abandoned) {
        status = start_socks(s);
        if (status == 0)
            return;
    }
    end_connect_attempt(s, status);
}

/* CONNECT_TIMEOUT, or HANDSHAKE_IVL over the SOCKS exchange. */
static void on_connect_timeout(zl_timer *t)
{
    zl_session *s = t->data;
    if (!s->connecting)
        return;
    s->connect_timed_out = true;
    zl_handle_cancel(s->connecting); /* on_connected takes it from here */
}

static void connect_to_addr(zl_session *s)
{
    int err = 0;
    zl_loop *loop = s->base.thread->loop;
    /* A name may resolve to the family its source is not: that attempt
     * fails, as one to a peer that is not there. */
    zl_addr src;
    bool src_usable =
        !s->has_src || zl_tcp_connect_source(&s->src, &s->addr, &src) == 0;
    s->connecting =
        src_usable
            ? zl_handle_connect_ex(loop, &s->addr, s->has_src ? &src : NULL,
                                   &s->options.tcp, &s->connect_op, &err)
            : NULL;
    if (!s->connecting) {
        zl_monitor_event(s->socket, ZLINK_EVENT_CLOSED, 0, s->endpoint);
        schedule_reconnect(s);
        return;
    }
    if (s->options.connect_timeout > 0)
        zl_timer_start(loop, &s->connect_timer,
                       (uint64_t)s->options.connect_timeout);
    if (zl_handle_connect_in_progress(s->connecting))
        zl_monitor_event(s->socket, ZLINK_EVENT_CONNECT_DELAYED, EINPROGRESS,
                         s->endpoint);
}

static void on_looked_up(void *owner, int status, const zl_addr *addr)
{
    zl_session *s = owner;
    s->lookup = NULL;
    /* As libzmq, a name that does not resolve is one more failed attempt:
     * CONNECT_RETRIED, and the next attempt asks again. */
    if (status != 0) {
        schedule_reconnect(s);
        return;
    }
    s->addr = *addr;
    connect_to_addr(s);
}

static void start_connect(zl_session *s)
{
    if (!s->lookup_hostport) {
        connect_to_addr(s);
        return;
    }
    zl_resolver *r = zl_ctx_resolver(s->socket->ctx);
    s->lookup = r ? zl_lookup_start(r, s->base.thread, s->lookup_hostport,
                                    s->options.ipv6, on_looked_up, s)
                  : NULL;
    if (!s->lookup)
        schedule_reconnect(s);
}

/* ---- termination ---- */

static void destroy(zl_session *s)
{
    zl_loop *loop = s->base.thread->loop;
    zl_timer_stop(loop, &s->reconnect_timer);
    zl_timer_stop(loop, &s->linger_timer);
    s->destroying = true;
    zl_timer_stop(loop, &s->connect_timer);
    zl_timer_stop(loop, &s->socks_timer);
    if (s->lookup) {
        zl_lookup_cancel(s->lookup);
        s->lookup = NULL;
    }
    if (s->connecting) {
        /* Its completion still refers to us: wait for it. */
        s->terminating = true;
        zl_handle_close(s->connecting);
        return;
    }
    if (s->engine) {
        zl_engine_destroy(s->engine);
        s->engine = NULL;
    }
    zl_session_close_zap(s);
    close_pipe(s);
    if (s->has_conflated)
        zlink_msg_close(&s->conflated);
    if (s->listener)
        zl_listener_child_gone(s->listener, s);
    atomic_fetch_sub(&s->base.thread->load, 1);
    zl_socket *socket = s->socket;
    zl_options_destroy(&s->options);
    free(s->lookup_hostport);
    free(s->socks_peer);
    free(s);
    zl_cmd ack = {.type = ZL_CMD_TERM_ACK, .target = socket};
    zl_mailbox_send(&socket->mailbox, &ack);
}

/* Runs on the socket's thread (the reaper's once it is closed). Whoever
 * removes the endpoint entry sends the one TERM that frees the session:
 * this, or zlink_close / zlink_disconnect if they came first. */
static void forget_connect_session(void *socket, intptr_t arg)
{
    zl_session *s = (zl_session *)arg;
    if (zl_socket_forget_object(socket, &s->base))
        zl_io_thread_send_term(s->base.thread, &s->base, s->options.linger);
}

/* A session that ends without being told to (protocol error, no
 * reconnect). An accepted one goes at once: only its listener, on this
 * thread, knows it. A connected one is listed in its socket's endpoints,
 * and freeing it here left zlink_close and zlink_disconnect sending TERM
 * to freed memory. So it lets go of its pipe and waits for that TERM,
 * asking the socket to send it now (libzmq's owned objects do the same). */
static void end_on_own(zl_session *s)
{
    if (!s->connect_side || s->terminating) {
        destroy(s);
        return;
    }
    zl_timer_stop(s->base.thread->loop, &s->reconnect_timer);
    close_pipe(s);
    zl_cmd cmd = {.type = ZL_CMD_CALL,
                  .target = s->socket,
                  .fn = forget_connect_session,
                  .arg = (intptr_t)s};
    zl_mailbox_send(&s->socket->mailbox, &cmd);
}

static void on_linger_expired(zl_timer *t)
{
    destroy(t->data);
}

/* Stop: keep sending what the socket queued until its delimiter, for at most
 * LINGER ms, then go. */
static void begin_termination(zl_session *s)
{
    if (s->terminating)
        return;
    s->terminating = true;
    if (s->pipe && !s->pipe->terminated)
        zl_pipe_terminate(s->pipe); /* the socket answers with its own */
    if (!s->engine && lingers_to_deliver(s)) {
        /* Not connected yet, with messages queued: as libzmq, keep trying
         * to connect for LINGER ms; the engine then delivers them and
         * reports the delimiter drained. */
        if (s->options.linger > 0)
            zl_timer_start(s->base.thread->loop, &s->linger_timer,
                           (uint64_t)s->options.linger);
        return;
    }
    zl_timer_stop(s->base.thread->loop, &s->reconnect_timer);
    if (!s->engine || s->options.linger == 0 || !s->pipe) {
        destroy(s);
        return;
    }
    if (zl_engine_drained(s->engine)) {
        destroy(s);
        return;
    }
    if (s->options.linger > 0)
        zl_timer_start(s->base.thread->loop, &s->linger_timer,
                       (uint64_t)s->options.linger);
    zl_engine_restart_output(s->engine);
}

static void session_plug(zl_io_object *obj)
{
    zl_session *s = (zl_session *)obj;
    if (s->connect_side && !s->terminating)
        start_connect(s);
}

static void session_term(zl_io_object *obj, int linger)
{
    zl_session *s = (zl_session *)obj;
    s->options.linger = linger;
    begin_termination(s);
}

/* The socket gave the pipe up but not the connection (zl_pipe_give_up):
 * from now on what the peer sends is dropped (session_push without a pipe),
 * and its leaving ends us as usual. A connecting session makes a new pipe
 * at its next handshake. */
static void keep_connection_without_pipe(zl_session *s)
{
    if (s->engine)
        zl_engine_pipe_gone(s->engine);
    close_pipe(s);
    s->pipe_closed = false;
    s->in_in_message = false;
    s->out_in_message = false;
    s->probe_pending = false;
    if (s->has_conflated) {
        zlink_msg_close(&s->conflated);
        s->has_conflated = false;
    }
    /* The engine reads on, so it sees the peer leave; it may stop on a
     * protocol error, which can free s. */
    if (s->engine)
        zl_engine_restart_input(s->engine);
}

/* The socket let go of a connect's pipe but not of its endpoint: a STREAM
 * closing the connection, a PAIR refusing a second peer. The connection
 * ends now, no other is made, and what was queued for it is dropped, as in
 * libzmq. The socket still lists the session, so the session waits for
 * its TERM (end_on_own) rather than freeing itself under that entry. */
static void abandon_connect(zl_session *s, bool refused)
{
    s->abandoned = true;
    zl_loop *loop = s->base.thread->loop;
    zl_timer_stop(loop, &s->reconnect_timer);
    if (s->lookup) {
        zl_lookup_cancel(s->lookup);
        s->lookup = NULL;
    }
    if (s->engine) {
        if (refused)
            zl_monitor_event(s->socket, ZLINK_EVENT_DISCONNECTED, s->fd,
                             s->endpoint);
        zl_engine_destroy(s->engine);
        s->engine = NULL;
    }
    end_on_own(s);
}

static void session_pipe_command(zl_io_object *obj, const zl_cmd *cmd)
{
    zl_session *s = (zl_session *)obj;
    if (s->zap && cmd->pipe == s->zap) {
        zl_session_zap_command(s, cmd); /* may free s */
        return;
    }
    if (cmd->pipe != s->pipe)
        return;
    switch (cmd->type) {
    case ZL_CMD_ACTIVATE_READ:
        if (s->engine)
            zl_engine_restart_output(s->engine);
        break;
    case ZL_CMD_ACTIVATE_WRITE:
        flush_conflated(s);
        if (s->engine)
            zl_engine_restart_input(s->engine);
        break;
    case ZL_CMD_PIPE_TERM:
        if (cmd->arg == ZL_PIPE_TERM_KEEP_CONNECTION && !s->terminating) {
            keep_connection_without_pipe(s); /* may free s */
            break;
        }
        if (s->connect_side && !s->terminating) {
            abandon_connect(s, cmd->arg == ZL_PIPE_TERM_REFUSED);
            break;
        }
        /* The socket let go of the pipe (close, or PAIR refusing a second
         * peer). Deliver what it queued, then end. A refused peer's
         * connection is closed by us: the monitor hears of it. */
        if (cmd->arg == ZL_PIPE_TERM_REFUSED && s->engine && !s->terminating)
            zl_monitor_event(s->socket, ZLINK_EVENT_DISCONNECTED, s->fd,
                             s->endpoint);
        begin_termination(s); /* may free s */
        break;
    case ZL_CMD_PEER_HWM:
        /* The socket's RCVHWM changed: it bounds what we queue for it, on
         * this pipe and on any we make after a reconnect. */
        s->options.rcvhwm = (int)cmd->arg;
        zl_pipe_set_send_hwm(s->pipe, s->options.rcvhwm);
        flush_conflated(s);
        if (s->engine)
            zl_engine_restart_input(s->engine);
        break;
    default:
        break;
    }
}

static const zl_io_object_ops session_ops = {
    .plug = session_plug,
    .term = session_term,
    .pipe_command = session_pipe_command,
};

static zl_session *session_new(zl_socket *socket, zl_io_thread *thread,
                               const zl_options *options, const char *endpoint)
{
    size_t endpoint_size = strlen(endpoint) + 1;
    zl_session *s = calloc(1, sizeof *s + endpoint_size);
    if (!s)
        return NULL;
    s->base.ops = &session_ops;
    s->base.thread = thread;
    s->socket = socket;
    if (zl_options_copy(&s->options, options) != 0) {
        free(s);
        return NULL;
    }
    s->reconnect_ivl_now = options->reconnect_ivl;
    s->jitter_state = zl_random_seed(s);
    memcpy(s->endpoint, endpoint, endpoint_size);
    s->reconnect_timer.cb = on_reconnect_timer;
    s->reconnect_timer.data = s;
    s->linger_timer.cb = on_linger_expired;
    s->linger_timer.data = s;
    s->connect_op.cb = on_connected;
    s->connect_op.data = s;
    s->connect_timer.cb = on_connect_timeout;
    s->connect_timer.data = s;
    s->socks_timer.cb = on_connect_timeout;
    s->socks_timer.data = s;
    atomic_fetch_add(&thread->load, 1);
    atomic_fetch_add(&socket->io_objects, 1);
    return s;
}

/* Undoes session_new, for a session that failed before it started. */
static void session_free_unstarted(zl_session *s)
{
    atomic_fetch_sub(&s->base.thread->load, 1);
    atomic_fetch_sub(&s->socket->io_objects, 1);
    zl_options_destroy(&s->options);
    free(s->lookup_hostport);
    free(s->socks_peer);
    free(s);
}

zl_session *zl_session_create_connect(zl_socket *socket, zl_io_thread *thread,
                                      const zl_addr *addr,
                                      const char *lookup_hostport,
                                      const zl_addr *src,
                                      const char *socks_peer,
                                      const char *endpoint)
{
    zl_session *s = session_new(socket, thread, &socket->options, endpoint);
    if (!s)
        return NULL;
    s->connect_side = true;
    s->addr = *addr;
    if ((lookup_hostport && !(s->lookup_hostport = strdup(lookup_hostport))) ||
        (socks_peer && !(s->socks_peer = strdup(socks_peer)))) {
        session_free_unstarted(s);
        return NULL;
    }
    if (src) {
        s->src = *src;
        s->has_src = true;
    }
    /* Messages sent before the peer arrives queue in this pipe, unless
     * IMMEDIATE asks to queue only to connected peers. A ROUTER needs the
     * peer's routing id first, so its pipe waits for the handshake, unless
     * CONNECT_ROUTING_ID names the peer already (libzmq queues then). */
    if (!socket->options.immediate && !router_waits_for_id(&s->options)) {
        zl_pipe *socket_end;
        const zl_blob *id = s->options.connect_routing_id;
        if (create_pipe(s, &socket_end) != 0) {
            session_free_unstarted(s);
            return NULL;
        }
        if (id && zl_pipe_set_routing_id(socket_end, id->data, id->len) != 0) {
            zl_pipe_release(socket_end);
            close_pipe(s);
            session_free_unstarted(s);
            return NULL;
        }
        zl_socket_attach_pipe(socket, socket_end, true);
    }
    return s;
}

zl_session *zl_session_create_accepted(zl_socket *socket, zl_io_thread *thread,
                                       const zl_options *options,
                                       zl_handle *handle, const char *endpoint)
{
    zl_session *s = session_new(socket, thread, options, endpoint);
    if (!s)
        return NULL;
    set_buffer_sizes(handle, options, endpoint);
    if (!start_engine(s, handle, false)) {
        session_free_unstarted(s);
        return NULL;
    }
    return s;
}

zl_session *zl_session_create_accepted_stream(
    zl_socket *socket, zl_io_thread *thread, const zl_options *options,
    zl_stream *stream, uint64_t handshake_spent_ms, const char *endpoint)
{
    zl_session *s = session_new(socket, thread, options, endpoint);
    if (!s) {
        zl_stream_close(stream);
        return NULL;
    }
    /* HANDSHAKE_IVL counts from the accept: the engine has what is left. */
    int ivl = s->options.handshake_ivl;
    if (ivl > 0)
        s->options.handshake_ivl = handshake_spent_ms < (uint64_t)ivl
                                       ? ivl - (int)handshake_spent_ms
                                       : 1;
    set_buffer_sizes(stream->handle, options, endpoint);
    if (!start_engine_on(s, stream)) {
        session_free_unstarted(s);
        return NULL;
    }
    return s;
}
