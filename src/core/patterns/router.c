/* router.c — ROUTER: the routing table from routing ids to pipes, routing-id
 * assignment, and the id frame in front of every message. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fair_queue.h"
#include "load_balance.h"
#include "metadata.h"
#include "msg.h"
#include "patterns/pattern.h"
#include "patterns/router.h"
#include "socket.h"

/* ---- The socket ------------------------------------------------------- */

static router_state *state_of(zl_socket *s)
{
    return s->pattern;
}

static void router_init(zl_socket *s)
{
    router_state *r = state_of(s);
    zl_fair_queue_init(&r->in);
    zl_load_balance_init(&r->with_room);
    zl_routing_table_init(&r->table, &r->next_auto_id);
    zlink_msg_init(&r->pending_part);
}

static void router_destroy(zl_socket *s)
{
    router_state *r = state_of(s);
    zl_fair_queue_destroy(&r->in);
    zl_load_balance_destroy(&r->with_room);
    zl_routing_table_destroy(&r->table);
    zlink_msg_close(&r->pending_part);
}

/* Takes p out of the table, and out of the last-found cache with it. */
static void remove_route(router_state *r, zl_pipe *p)
{
    if (p == r->last_found)
        r->last_found = NULL;
    zl_routing_table_remove(&r->table, p);
}

/* The id's current holder gives it up: it is no longer routed to, and its
 * pipe ends unless it is already going. Its queued messages are still
 * read, up to its delimiter. Its connection stays open, reading nothing
 * (zl_pipe_give_up), so that its peer does not reconnect and take the id
 * back: libzmq's ROUTER_HANDOVER does the same. */
static void give_up_id(router_state *r, zl_pipe *holder)
{
    if (holder == r->current_out) {
        zl_pipe_rollback(holder);
        r->current_out = NULL;
    }
    remove_route(r, holder);
    if (!holder->terminated)
        zl_pipe_give_up(holder);
}

static void router_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    router_state *r = state_of(s);
    size_t len;
    const uint8_t *id = zl_pipe_routing_id(p, &len);
    zl_pipe *holder =
        len > 0 ? zl_routing_table_find(&r->table, id, len) : NULL;
    if (holder) {
        /* A peer reconnecting before its old pipe's delimiter was read
         * takes its id back; otherwise the newcomer takes it only under
         * ROUTER_HANDOVER. Without it libzmq 4.3 ignores the newcomer:
         * nothing of it is delivered and nothing can reach it. */
        if (!holder->terminated && !r->handover) {
            zl_discard_input(p);
            return;
        }
        give_up_id(r, holder);
    }
    if ((len > 0 ||
         zl_routing_table_assign_id(&r->table, &r->next_auto_id, p) == 0) &&
        zl_routing_table_insert(&r->table, p) == 0) {
        if (zl_fair_queue_attach(&r->in, p) == 0) {
            if (zl_load_balance_attach(&r->with_room, p) == 0)
                return;
            zl_fair_queue_remove(&r->in, p);
        }
        remove_route(r, p);
    }
    /* Out of memory: a pipe we cannot track is closed rather than left
     * half attached. read_activated finishes it off. */
    zl_pipe_terminate(p);
    zl_discard_input(p);
}

static void router_pipe_terminated(zl_socket *s, zl_pipe *p)
{
    router_state *r = state_of(s);
    if (p == r->current_out) {
        /* Its unfinished message is dropped whole: the parts already
         * written now, the rest as they come. */
        zl_pipe_rollback(p);
        r->current_out = NULL;
    }
    remove_route(r, p);
    zl_fair_queue_remove(&r->in, p);
    zl_load_balance_remove(&r->with_room, p);
}

static void router_read_activated(zl_socket *s, zl_pipe *p)
{
    router_state *r = state_of(s);
    if (zl_fair_queue_contains(&r->in, p))
        zl_fair_queue_activate(&r->in, p);
    else if (zl_discard_input(p))
        zl_socket_pipe_done(s, p);
}

static void router_write_activated(zl_socket *s, zl_pipe *p)
{
    zl_load_balance_activate(&state_of(s)->with_room, p);
}

/* The pipe whose routing id is the id frame's, or NULL. */
static zl_pipe *find_peer(router_state *r, zlink_msg_t *id_frame)
{
    const uint8_t *id = zlink_msg_data(id_frame);
    size_t len = zlink_msg_size(id_frame);
    if (r->last_found != NULL && zl_routing_id_equal(r->last_found, id, len))
        return r->last_found;
    zl_pipe *p = zl_routing_table_find(&r->table, id, len);
    if (p != NULL)
        r->last_found = p;
    return p;
}

static void drop(zlink_msg_t *msg)
{
    zlink_msg_close(msg);
    zlink_msg_init(msg);
}

/* The first part names the peer. Without ROUTER_MANDATORY a message for an
 * unknown or full peer is dropped whole; with it, the application hears
 * about it and keeps its message. */
static int send_routing_id(zl_socket *s, router_state *r, zlink_msg_t *msg)
{
    /* libzmq ignores an id frame with nothing after it. */
    if (!(zl_msg_flags(msg) & ZL_MSG_MORE)) {
        drop(msg);
        return 0;
    }
    bool mandatory = s->options.router_mandatory;
    zl_pipe *p = find_peer(r, msg);
    /* A peer that has left, its pipe waiting only for us to read up to its
     * delimiter, is unreachable: waiting for room there would never end. */
    if (p != NULL && p->terminated)
        p = NULL;
    if (p == NULL && mandatory) {
        errno = EHOSTUNREACH;
        return -1;
    }
    /* With ROUTER_MANDATORY the send waits for room, and may be paced
     * (pipe.h); without, a message for a full pipe is dropped. */
    if (p != NULL && mandatory) {
        zl_pipe_room room = zl_pipe_check_send(p);
        if (room != ZL_PIPE_ROOM) {
            errno = zl_pipe_refusal_errno(room);
            return -1;
        }
    } else if (p != NULL && !zl_pipe_check_write(p)) {
        p = NULL;
    }
    r->current_out = p;
    r->more_out = true;
    drop(msg);
    return 0;
}

static int router_send(zl_socket *s, zlink_msg_t *msg)
{
    router_state *r = state_of(s);
    if (!r->more_out)
        return send_routing_id(s, r, msg);

    r->more_out = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
    zl_pipe *p = r->current_out;
    if (p == NULL) {
        drop(msg);
        return 0;
    }
    /* Flushes the last part. */
    if (!zl_pipe_send(p, msg, false)) {
        /* Room was checked at the id frame: the pipe was terminated since,
         * or is out of memory. Either way the message is lost whole. */
        zl_pipe_rollback(p);
        r->current_out = NULL;
        drop(msg);
        return 0;
    }
    if (!r->more_out)
        r->current_out = NULL;
    return 0;
}

/* The next part from the pipes. libzmq skips routing-id messages, which
 * a reconnecting peer's session may repeat; the id itself is the pipe's
 * routing_id. */
static int read_part(zl_socket *s, router_state *r, zlink_msg_t *msg,
                     zl_pipe **from)
{
    for (;;) {
        if (zl_fair_queue_recv(&r->in, s, msg, from) != 0)
            return -1;
        if (!(zl_msg_flags(msg) & ZL_MSG_ROUTING_ID))
            return 0;
        drop(msg);
    }
}

/* The message whose first part is in pending_part came from `from`: the
 * part waits there until its id frame has been taken. */
static void hold_from(router_state *r, zl_pipe *from)
{
    size_t len;
    const uint8_t *id = zl_pipe_routing_id(from, &len);
    r->pending_id.len = (uint8_t)len;
    if (len > 0)
        memcpy(r->pending_id.data, id, len);
    r->pending = true;
    r->pending_id_sent = false;
}

/* Reads a message's first part into pending_part: read there at once, it
 * is moved only once, to the application. */
static int hold_first_part(zl_socket *s, router_state *r)
{
    zl_pipe *from = NULL;
    if (read_part(s, r, &r->pending_part, &from) != 0)
        return -1;
    hold_from(r, from);
    return 0;
}

/* The pending message's id frame, into msg (empty); -1 without memory,
 * which an id of at most ZL_MSG_INLINE_MAX bytes never needs. */
static int take_pending_id(router_state *r, zlink_msg_t *msg)
{
    if (zlink_msg_init_size(msg, r->pending_id.len) != 0) {
        zlink_msg_init(msg);
        return -1;
    }
    memcpy(zlink_msg_data(msg), r->pending_id.data, r->pending_id.len);
    zl_msg_set_flags(msg, ZL_MSG_MORE);
    /* The id frame has its connection's properties too, as in libzmq:
     * servers read "Peer-Address" from it. */
    struct zl_metadata *metadata = zl_msg_of(&r->pending_part)->metadata;
    if (metadata) {
        zl_metadata_addref(metadata, 1);
        zl_msg_set_metadata(msg, metadata);
    }
    r->pending_id_sent = true;
    r->more_in = true;
    return 0;
}

/* The socket's thread may read a message itself (direct_recv.h) between
 * two messages, from a peer the routing table knows, when its routing id
 * fits in a message without an allocation. */
static zl_direct_envelope router_direct_recv_envelope(zl_socket *s, zl_pipe *p)
{
    router_state *r = state_of(s);
    size_t id_len;
    (void)zl_pipe_routing_id(p, &id_len);
    if (r->more_in || r->pending || id_len > ZL_MSG_INLINE_MAX ||
        !zl_fair_queue_contains(&r->in, p))
        return ZL_DIRECT_NOT_NOW;
    return ZL_DIRECT_BARE;
}

/* As router_recv's first call: the part waits, the id frame goes out
 * (inline: router_direct_recv_envelope checked its size). */
static void router_direct_recv_taken(zl_socket *s, zl_pipe *p, zlink_msg_t *msg)
{
    router_state *r = state_of(s);
    zlink_msg_move(&r->pending_part, msg);
    hold_from(r, p);
    (void)take_pending_id(r, msg);
}

static int router_recv(zl_socket *s, zlink_msg_t *msg)
{
    router_state *r = state_of(s);
    if (r->more_in && !r->pending) {
        zl_pipe *from = NULL;
        if (read_part(s, r, msg, &from) != 0)
            return -1;
        r->more_in = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
        return 0;
    }
    if (!r->pending && hold_first_part(s, r) != 0)
        return -1;
    if (!r->pending_id_sent)
        return take_pending_id(r, msg);
    zlink_msg_move(msg, &r->pending_part);
    r->pending = false;
    r->more_in = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
    return 0;
}

static bool router_has_in(zl_socket *s)
{
    router_state *r = state_of(s);
    if (r->more_in || r->pending)
        return true;
    return hold_first_part(s, r) == 0;
}

static bool router_has_out(zl_socket *s)
{
    /* Without ROUTER_MANDATORY a send always succeeds. With it, libzmq
     * reports whether any peer has room. */
    return !s->options.router_mandatory ||
           zl_load_balance_has_out(&state_of(s)->with_room);
}

static int router_setsockopt(zl_socket *s, int option, const void *val,
                             size_t len)
{
    if (option != ZLINK_ROUTER_HANDOVER) {
        errno = EINVAL;
        return -1;
    }
    int v;
    if (zl_option_int(val, len, &v) != 0)
        return -1;
    /* libzmq takes any value >= 0 here (non-zero: on). */
    if (v < 0) {
        errno = EINVAL;
        return -1;
    }
    state_of(s)->handover = v != 0;
    return 0;
}

const zl_pattern_ops zl_router_ops = {
    .type = ZLINK_ROUTER,
    .state_size = sizeof(router_state),
    .init = router_init,
    .destroy = router_destroy,
    .attach_pipe = router_attach_pipe,
    .pipe_terminated = router_pipe_terminated,
    .read_activated = router_read_activated,
    .write_activated = router_write_activated,
    .send = router_send,
    .recv = router_recv,
    .has_in = router_has_in,
    .has_out = router_has_out,
    .setsockopt = router_setsockopt,
    .getsockopt = NULL,
    .direct_recv_envelope = router_direct_recv_envelope,
    .direct_recv_taken = router_direct_recv_taken,
};
