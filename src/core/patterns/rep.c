/* rep.c — REP: a ROUTER that hands the application one request at a time
 * without its envelope (routing id and labels up to the empty delimiter),
 * and puts that envelope back in front of the reply. EFSM out of turn. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"
#include "patterns/pattern.h"
#include "patterns/router.h"
#include "socket.h"

/* A request's envelope is its routing id and the labels that proxies in
 * between added, each a frame. Most are a few deep and fit inline; a
 * deeper one moves to the heap. A peer's message, envelope included, is
 * capped by ZLINK_MAXMSGPARTS, so the envelope is too, as in libzmq, which
 * keeps any depth. */
#define ENVELOPE_INLINE 8

typedef struct rep_state {
    router_state router; /* first: zl_router_ops works on this block */
    bool sending_reply;
    bool request_begins;
    bool dropping; /* the rest of a malformed request */
    size_t envelope_count, envelope_cap;
    zlink_msg_t *envelope; /* envelope_inline, or the heap's */
    zlink_msg_t envelope_inline[ENVELOPE_INLINE];
} rep_state;

static rep_state *state_of(zl_socket *s)
{
    return s->pattern;
}

static void clear_envelope(rep_state *r)
{
    for (size_t i = 0; i < r->envelope_count; i++)
        zlink_msg_close(&r->envelope[i]);
    r->envelope_count = 0;
}

/* Room for one more label: false without memory. */
static bool envelope_room(rep_state *r)
{
    if (r->envelope_count < r->envelope_cap)
        return true;
    size_t cap = r->envelope_cap * 2;
    zlink_msg_t *grown = malloc(cap * sizeof *grown);
    if (!grown)
        return false;
    for (size_t i = 0; i < r->envelope_count; i++) {
        zlink_msg_init(&grown[i]);
        zlink_msg_move(&grown[i], &r->envelope[i]);
    }
    if (r->envelope != r->envelope_inline)
        free(r->envelope);
    r->envelope = grown;
    r->envelope_cap = cap;
    return true;
}

static void rep_init(zl_socket *s)
{
    zl_router_ops.init(s);
    rep_state *r = state_of(s);
    r->request_begins = true;
    r->envelope = r->envelope_inline;
    r->envelope_cap = ENVELOPE_INLINE;
}

static void rep_destroy(zl_socket *s)
{
    rep_state *r = state_of(s);
    clear_envelope(r);
    if (r->envelope != r->envelope_inline)
        free(r->envelope);
    zl_router_ops.destroy(s);
}

static void drop(zlink_msg_t *msg)
{
    zlink_msg_close(msg);
    zlink_msg_init(msg);
}

/* Reads the envelope of the next well-formed request into r->envelope.
 * A request without the empty delimiter is dropped whole, as libzmq drops
 * it (and one whose envelope finds no memory). */
static int read_envelope(zl_socket *s, rep_state *r, zlink_msg_t *msg)
{
    for (;;) {
        if (zl_router_ops.recv(s, msg) != 0)
            return -1;
        bool more = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
        if (r->dropping) {
            r->dropping = more;
            drop(msg);
            continue;
        }
        if (!more) {
            /* The message ended inside its envelope. */
            drop(msg);
            clear_envelope(r);
            continue;
        }
        if (!envelope_room(r)) {
            drop(msg);
            clear_envelope(r);
            r->dropping = true;
            continue;
        }
        bool bottom = zlink_msg_size(msg) == 0 && r->envelope_count > 0;
        zlink_msg_init(&r->envelope[r->envelope_count]);
        zlink_msg_move(&r->envelope[r->envelope_count++], msg);
        if (bottom)
            return 0;
    }
}

static int rep_recv(zl_socket *s, zlink_msg_t *msg)
{
    rep_state *r = state_of(s);
    if (r->sending_reply) {
        errno = EFSM;
        return -1;
    }
    if (r->request_begins) {
        if (read_envelope(s, r, msg) != 0)
            return -1;
        r->request_begins = false;
    }
    if (zl_router_ops.recv(s, msg) != 0)
        return -1;
    if (!(zl_msg_flags(msg) & ZL_MSG_MORE)) {
        r->sending_reply = true;
        r->request_begins = true;
    }
    return 0;
}

/* The envelope goes out first, as the reply's first parts. The router
 * drops a reply to a peer that has gone, as libzmq's REP does. */
static int send_envelope(zl_socket *s, rep_state *r)
{
    for (size_t i = 0; i < r->envelope_count; i++) {
        zl_msg_set_flags(&r->envelope[i], ZL_MSG_MORE);
        if (zl_router_ops.send(s, &r->envelope[i]) != 0)
            return -1;
    }
    clear_envelope(r);
    return 0;
}

static int rep_send(zl_socket *s, zlink_msg_t *msg)
{
    rep_state *r = state_of(s);
    if (!r->sending_reply) {
        errno = EFSM;
        return -1;
    }
    if (r->envelope_count > 0 && send_envelope(s, r) != 0)
        return -1;
    bool more = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
    if (zl_router_ops.send(s, msg) != 0)
        return -1;
    if (!more)
        r->sending_reply = false;
    return 0;
}

/* The socket's thread may read a request itself (direct_recv.h) between
 * two requests, from a peer the routing table knows, when its envelope
 * is the delimiter alone: [empty delimiter][body]. The routing id it
 * keeps for the reply must fit in a message without an allocation. */
static zl_direct_envelope rep_direct_recv_envelope(zl_socket *s, zl_pipe *p)
{
    rep_state *r = state_of(s);
    size_t id_len;
    (void)zl_pipe_routing_id(p, &id_len);
    if (r->sending_reply || !r->request_begins || r->dropping ||
        r->envelope_count != 0 || r->router.more_in || r->router.pending ||
        id_len > ZL_MSG_INLINE_MAX || !zl_fair_queue_contains(&r->router.in, p))
        return ZL_DIRECT_NOT_NOW;
    return ZL_DIRECT_DELIMITED;
}

/* Keeps the envelope read_envelope would have kept: the peer's routing id,
 * then the delimiter. */
static void rep_direct_recv_taken(zl_socket *s, zl_pipe *p, zlink_msg_t *msg)
{
    (void)msg; /* the body, which the receive returns as it is */
    rep_state *r = state_of(s);
    size_t len;
    const uint8_t *id = zl_pipe_routing_id(p, &len);
    zlink_msg_init_size(&r->envelope[0], len); /* inline: cannot fail */
    if (len > 0)
        memcpy(zlink_msg_data(&r->envelope[0]), id, len);
    zlink_msg_init(&r->envelope[1]);
    r->envelope_count = 2;
    r->sending_reply = true;
    r->request_begins = true;
}

/* Pipes come and go as for a ROUTER. */
static void rep_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    zl_router_ops.attach_pipe(s, p, locally_initiated);
}

static void rep_pipe_terminated(zl_socket *s, zl_pipe *p)
{
    zl_router_ops.pipe_terminated(s, p);
}

static void rep_read_activated(zl_socket *s, zl_pipe *p)
{
    zl_router_ops.read_activated(s, p);
}

static void rep_write_activated(zl_socket *s, zl_pipe *p)
{
    zl_router_ops.write_activated(s, p);
}

static bool rep_has_in(zl_socket *s)
{
    return !state_of(s)->sending_reply && zl_router_ops.has_in(s);
}

static bool rep_has_out(zl_socket *s)
{
    return state_of(s)->sending_reply && zl_router_ops.has_out(s);
}

const zl_pattern_ops zl_rep_ops = {
    .type = ZLINK_REP,
    .state_size = sizeof(rep_state),
    .init = rep_init,
    .destroy = rep_destroy,
    .attach_pipe = rep_attach_pipe,
    .pipe_terminated = rep_pipe_terminated,
    .read_activated = rep_read_activated,
    .write_activated = rep_write_activated,
    .send = rep_send,
    .recv = rep_recv,
    .has_in = rep_has_in,
    .has_out = rep_has_out,
    .setsockopt = NULL,
    .getsockopt = NULL,
    .direct_recv_envelope = rep_direct_recv_envelope,
    .direct_recv_taken = rep_direct_recv_taken,
};
