/* stream.c — STREAM: raw connections (no ZMTP on the wire, engine.c's raw
 * mode), each named by a routing id this socket gives it. Every message is
 * two parts either way: the id, then bytes. libzmq's ZMQ_STREAM. */
#include <errno.h>
#include <string.h>

#include "fair_queue.h"
#include "metadata.h"
#include "msg.h"
#include "patterns/pattern.h"
#include "patterns/routing_table.h"
#include "socket.h"

typedef struct stream_state {
    zl_fair_queue in;
    routing_table table;
    uint32_t next_auto_id;

    /* Sending: the id frame chose current_out, or NULL to drop. */
    bool more_out;
    zl_pipe *current_out;

    /* Receiving: the bytes wait in pending_part while their id frame is
     * handed out first. */
    bool pending;
    bool pending_id_sent;
    zl_blob pending_id;
    zlink_msg_t pending_part;
} stream_state;

static stream_state *state_of(zl_socket *s)
{
    return s->pattern;
}

static void stream_init(zl_socket *s)
{
    stream_state *st = state_of(s);
    zl_fair_queue_init(&st->in);
    zl_routing_table_init(&st->table, &st->next_auto_id);
    zlink_msg_init(&st->pending_part);
}

static void stream_destroy(zl_socket *s)
{
    stream_state *st = state_of(s);
    zl_fair_queue_destroy(&st->in);
    zl_routing_table_destroy(&st->table);
    zlink_msg_close(&st->pending_part);
}

/* Raw peers announce nothing, so every connection gets a generated id,
 * unless CONNECT_ROUTING_ID named the one we made (the session set it on
 * the pipe). A name already in use turns the newcomer away. */
static void stream_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    stream_state *st = state_of(s);
    size_t len;
    const uint8_t *id = zl_pipe_routing_id(p, &len);
    if (!locally_initiated)
        len = 0;
    if (len > 0 && zl_routing_table_find(&st->table, id, len) != NULL) {
        zl_pipe_refuse(p);
        zl_discard_input(p);
        return;
    }
    if ((len > 0 ||
         zl_routing_table_assign_id(&st->table, &st->next_auto_id, p) == 0) &&
        zl_routing_table_insert(&st->table, p) == 0) {
        if (zl_fair_queue_attach(&st->in, p) == 0)
            return;
        zl_routing_table_remove(&st->table, p);
    }
    /* Out of memory: closed rather than half attached. */
    zl_pipe_terminate(p);
    zl_discard_input(p);
}

static void stream_pipe_terminated(zl_socket *s, zl_pipe *p)
{
    stream_state *st = state_of(s);
    if (p == st->current_out)
        st->current_out = NULL;
    zl_routing_table_remove(&st->table, p);
    zl_fair_queue_remove(&st->in, p);
}

static void stream_read_activated(zl_socket *s, zl_pipe *p)
{
    stream_state *st = state_of(s);
    if (zl_fair_queue_contains(&st->in, p))
        zl_fair_queue_activate(&st->in, p);
    else if (zl_discard_input(p))
        zl_socket_pipe_done(s, p);
}

static void stream_write_activated(zl_socket *s, zl_pipe *p)
{
    (void)s;
    (void)p; /* a blocked send retries on its own */
}

static void drop(zlink_msg_t *msg)
{
    zlink_msg_close(msg);
    zlink_msg_init(msg);
}

/* The id frame: an unknown peer is EHOSTUNREACH, a full one EAGAIN (a
 * blocking send waits for room), as libzmq's STREAM. An id frame with
 * nothing after it is ignored, and so is the frame after it. */
static int send_routing_id(stream_state *st, zlink_msg_t *msg)
{
    zl_pipe *p = NULL;
    if (zl_msg_flags(msg) & ZL_MSG_MORE) {
        p = zl_routing_table_find(&st->table, zlink_msg_data(msg),
                                  zlink_msg_size(msg));
        if (p == NULL || p->terminated) {
            errno = EHOSTUNREACH;
            return -1;
        }
        zl_pipe_room room = zl_pipe_check_send(p);
        if (room != ZL_PIPE_ROOM) {
            errno = zl_pipe_refusal_errno(room);
            return -1;
        }
    }
    st->current_out = p;
    st->more_out = true;
    drop(msg);
    return 0;
}

static int stream_send(zl_socket *s, zlink_msg_t *msg)
{
    stream_state *st = state_of(s);
    if (!st->more_out)
        return send_routing_id(st, msg);
    /* The bytes frame ends the message, whatever its MORE flag says. */
    st->more_out = false;
    zl_pipe *p = st->current_out;
    st->current_out = NULL;
    zl_msg_set_flags(msg, zl_msg_flags(msg) & (uint8_t)~ZL_MSG_MORE);
    if (p == NULL) {
        drop(msg);
        return 0;
    }
    if (zlink_msg_size(msg) == 0) {
        /* The application closes this connection: what is still queued for
         * it is dropped, and a connect is not retried, as in libzmq. What it
         * sent before is still read, up to its pipe's end. */
        drop(msg);
        zl_routing_table_remove(&st->table, p);
        zl_pipe_terminate(p);
        return 0;
    }
    if (!zl_pipe_send(p, msg, false))
        drop(msg); /* terminated since the id frame: the bytes are lost */
    return 0;
}

/* Reads the next bytes into pending_part, their pipe's id beside them. */
static int hold_next(zl_socket *s, stream_state *st)
{
    zl_pipe *from = NULL;
    if (zl_fair_queue_recv(&st->in, s, &st->pending_part, &from) != 0)
        return -1;
    size_t len = 0;
    const uint8_t *id = from ? zl_pipe_routing_id(from, &len) : NULL;
    st->pending_id.len = (uint8_t)len;
    if (len > 0)
        memcpy(st->pending_id.data, id, len);
    st->pending = true;
    st->pending_id_sent = false;
    return 0;
}

static int stream_recv(zl_socket *s, zlink_msg_t *msg)
{
    stream_state *st = state_of(s);
    if (!st->pending && hold_next(s, st) != 0)
        return -1;
    if (st->pending_id_sent) {
        zlink_msg_move(msg, &st->pending_part);
        st->pending = false;
        return 0;
    }
    if (zlink_msg_init_size(msg, st->pending_id.len) != 0) {
        zlink_msg_init(msg);
        return -1;
    }
    memcpy(zlink_msg_data(msg), st->pending_id.data, st->pending_id.len);
    zl_msg_set_flags(msg, ZL_MSG_MORE);
    /* The id frame carries the connection's properties too (Peer-Address),
     * as in libzmq. */
    struct zl_metadata *metadata = zl_msg_of(&st->pending_part)->metadata;
    if (metadata) {
        zl_metadata_addref(metadata, 1);
        zl_msg_set_metadata(msg, metadata);
    }
    st->pending_id_sent = true;
    return 0;
}

static bool stream_has_in(zl_socket *s)
{
    stream_state *st = state_of(s);
    return st->pending || hold_next(s, st) == 0;
}

static bool stream_has_out(zl_socket *s)
{
    (void)s;
    return true; /* whether a send succeeds depends on its peer */
}

const zl_pattern_ops zl_stream_socket_ops = {
    .type = ZLINK_STREAM,
    .state_size = sizeof(stream_state),
    .init = stream_init,
    .destroy = stream_destroy,
    .attach_pipe = stream_attach_pipe,
    .pipe_terminated = stream_pipe_terminated,
    .read_activated = stream_read_activated,
    .write_activated = stream_write_activated,
    .send = stream_send,
    .recv = stream_recv,
    .has_in = stream_has_in,
    .has_out = stream_has_out,
};
