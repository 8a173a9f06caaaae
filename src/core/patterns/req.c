/* req.c — REQ: a request to one peer at a time (load-balanced), then its
 * reply from that peer only (fair queue), each behind an empty delimiter;
 * EFSM out of turn. REQ_RELAXED and REQ_CORRELATE as in libzmq. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fair_queue.h"
#include "load_balance.h"
#include "msg.h"
#include "patterns/pattern.h"
#include "socket.h"

typedef struct req_state {
    zl_fair_queue in;
    zl_load_balance out;
    bool receiving_reply; /* the request is out; the reply is awaited */
    bool message_begins;  /* the next part sent or read starts a message */
    bool skipping;        /* dropping the rest of a reply that did not fit */
    bool id_matched;      /* the reply's request id frame was right */
    zl_pipe *reply_pipe;  /* where the request went; NULL once it is gone */
    bool strict;          /* !REQ_RELAXED */
    bool correlate;       /* REQ_CORRELATE: a request id frame first */
    uint32_t request_id;
} req_state;

static req_state *state_of(zl_socket *s)
{
    return s->pattern;
}

static void req_init(zl_socket *s)
{
    req_state *r = state_of(s);
    zl_fair_queue_init(&r->in);
    zl_load_balance_init(&r->out);
    r->message_begins = true;
    r->strict = true;
    /* libzmq starts the ids at a random value; the address of the state
     * differs from socket to socket and is enough to keep two REQs apart. */
    uintptr_t seed = (uintptr_t)r;
    r->request_id = (uint32_t)(seed ^ (seed >> 32) ^ 0x9e3779b9u);
}

static void req_destroy(zl_socket *s)
{
    zl_fair_queue_destroy(&state_of(s)->in);
    zl_load_balance_destroy(&state_of(s)->out);
}

static void req_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    (void)locally_initiated;
    req_state *r = state_of(s);
    if (zl_fair_queue_attach(&r->in, p) == 0) {
        if (zl_load_balance_attach(&r->out, p) == 0)
            return;
        zl_fair_queue_remove(&r->in, p);
    }
    zl_pipe_terminate(p);
    zl_discard_input(p);
}

static void req_pipe_terminated(zl_socket *s, zl_pipe *p)
{
    req_state *r = state_of(s);
    if (r->reply_pipe == p)
        r->reply_pipe = NULL;
    zl_fair_queue_remove(&r->in, p);
    zl_load_balance_remove(&r->out, p);
}

static void req_read_activated(zl_socket *s, zl_pipe *p)
{
    req_state *r = state_of(s);
    if (zl_fair_queue_contains(&r->in, p))
        zl_fair_queue_activate(&r->in, p);
    else if (zl_discard_input(p))
        zl_socket_pipe_done(s, p);
}

static void req_write_activated(zl_socket *s, zl_pipe *p)
{
    zl_load_balance_activate(&state_of(s)->out, p);
}

static void drop(zlink_msg_t *msg)
{
    zlink_msg_close(msg);
    zlink_msg_init(msg);
}

/* Reads one part of a message from the pipe the request went to; parts
 * from any other peer (a late reply to an earlier request) are dropped. */
static int read_reply_part(zl_socket *s, req_state *r, zlink_msg_t *msg)
{
    for (;;) {
        zl_pipe *from = NULL;
        if (zl_fair_queue_recv(&r->in, s, msg, &from) != 0)
            return -1;
        if (from != NULL && from == r->reply_pipe)
            return 0;
        drop(msg);
    }
}

/* Sends the request's envelope: the request id (REQ_CORRELATE), then the
 * empty delimiter. */
static int send_envelope(req_state *r)
{
    zlink_msg_t part;
    if (r->correlate) {
        uint32_t id = r->request_id + 1;
        if (zlink_msg_init_size(&part, sizeof id) != 0)
            return -1;
        memcpy(zlink_msg_data(&part), &id, sizeof id);
        zl_msg_set_flags(&part, ZL_MSG_MORE);
        if (zl_load_balance_send(&r->out, &part) != 0) {
            zlink_msg_close(&part);
            return -1;
        }
        r->request_id = id;
    }
    zlink_msg_init(&part);
    zl_msg_set_flags(&part, ZL_MSG_MORE);
    if (zl_load_balance_send(&r->out, &part) != 0) {
        zlink_msg_close(&part);
        return -1;
    }
    r->reply_pipe = zl_load_balance_sending(&r->out);
    return 0;
}

static int req_send(zl_socket *s, zlink_msg_t *msg)
{
    req_state *r = state_of(s);
    if (r->receiving_reply) {
        if (r->strict) {
            errno = EFSM;
            return -1;
        }
        /* REQ_RELAXED: the old request is given up, and its reply will be
         * dropped as coming from another pipe (or, with REQ_CORRELATE,
         * carrying another id). */
        r->receiving_reply = false;
        r->message_begins = true;
    }
    if (r->message_begins) {
        r->reply_pipe = NULL;
        r->skipping = false;
        r->id_matched = false;
        if (send_envelope(r) != 0)
            return -1;
        r->message_begins = false;
        /* Replies queued before this request are stale: an hour-old answer
         * from another peer must not pass for this one's. So is one that
         * zlink_poll read and holds. */
        zl_socket_drop_held(s);
        zlink_msg_t stale;
        zlink_msg_init(&stale);
        while (zl_fair_queue_recv(&r->in, s, &stale, NULL) == 0)
            drop(&stale);
    }
    bool more = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
    if (zl_load_balance_send(&r->out, msg) != 0)
        return -1;
    if (!more) {
        r->receiving_reply = true;
        r->message_begins = true;
    }
    return 0;
}

/* Drops what is left of a reply that does not match; false while its
 * remaining parts have not all arrived yet. */
static bool skip_rest(zl_socket *s, req_state *r, zlink_msg_t *msg)
{
    while (zl_msg_flags(msg) & ZL_MSG_MORE) {
        drop(msg);
        if (read_reply_part(s, r, msg) != 0) {
            r->skipping = true;
            return false;
        }
    }
    drop(msg);
    r->skipping = false;
    return true;
}

/* Reads up to the first part of the reply's body: a message from the
 * right peer that starts with the right request id (REQ_CORRELATE) and
 * the empty delimiter. Anything else is dropped whole. */
static int read_reply_envelope(zl_socket *s, req_state *r, zlink_msg_t *msg)
{
    if (r->skipping) {
        zl_msg_set_flags(msg, ZL_MSG_MORE);
        if (!skip_rest(s, r, msg))
            return -1;
    }
    while (r->message_begins) {
        if (r->correlate && !r->id_matched) {
            if (read_reply_part(s, r, msg) != 0)
                return -1;
            uint32_t id = 0;
            bool matches = (zl_msg_flags(msg) & ZL_MSG_MORE) &&
                           zlink_msg_size(msg) == sizeof id;
            if (matches)
                memcpy(&id, zlink_msg_data(msg), sizeof id);
            if (!matches || id != r->request_id) {
                if (!skip_rest(s, r, msg))
                    return -1;
                continue;
            }
            drop(msg);
            r->id_matched = true;
        }
        if (read_reply_part(s, r, msg) != 0)
            return -1;
        r->id_matched = false;
        bool more = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
        if (!more || zlink_msg_size(msg) != 0) {
            if (!skip_rest(s, r, msg))
                return -1;
            continue;
        }
        drop(msg);
        r->message_begins = false;
    }
    return 0;
}

static int req_recv(zl_socket *s, zlink_msg_t *msg)
{
    req_state *r = state_of(s);
    if (!r->receiving_reply) {
        errno = EFSM;
        return -1;
    }
    if (read_reply_envelope(s, r, msg) != 0)
        return -1;
    if (read_reply_part(s, r, msg) != 0)
        return -1;
    if (!(zl_msg_flags(msg) & ZL_MSG_MORE)) {
        r->receiving_reply = false;
        r->message_begins = true;
    }
    return 0;
}

/* The socket's thread may read the reply itself (direct_recv.h) when it
 * is the next message expected, from the peer the request went to:
 * [empty delimiter][body]. Not with REQ_CORRELATE, whose id frame comes
 * first, nor once part of a reply has been read. */
static zl_direct_envelope req_direct_recv_envelope(zl_socket *s, zl_pipe *p)
{
    req_state *r = state_of(s);
    if (!r->receiving_reply || !r->message_begins || r->skipping ||
        r->correlate || r->reply_pipe != p)
        return ZL_DIRECT_NOT_NOW;
    return ZL_DIRECT_DELIMITED;
}

static void req_direct_recv_taken(zl_socket *s, zl_pipe *p, zlink_msg_t *msg)
{
    (void)msg; /* the body, which the receive returns as it is */
    (void)p;
    req_state *r = state_of(s);
    r->receiving_reply = false;
    r->message_begins = true;
}

static bool req_has_in(zl_socket *s)
{
    req_state *r = state_of(s);
    return r->receiving_reply && zl_fair_queue_has_in(&r->in, s);
}

static bool req_has_out(zl_socket *s)
{
    req_state *r = state_of(s);
    if (r->receiving_reply && r->strict)
        return false;
    return zl_load_balance_has_out(&r->out);
}

static int int_value(const void *val, size_t len, int *out)
{
    if (len != sizeof(int) || !val) {
        errno = EINVAL;
        return -1;
    }
    memcpy(out, val, sizeof *out);
    return 0;
}

static int req_setsockopt(zl_socket *s, int option, const void *val, size_t len)
{
    req_state *r = state_of(s);
    int v;
    if ((option != ZLINK_REQ_CORRELATE && option != ZLINK_REQ_RELAXED) ||
        int_value(val, len, &v) != 0) {
        errno = EINVAL;
        return -1;
    }
    if (option == ZLINK_REQ_CORRELATE)
        r->correlate = v != 0;
    else
        r->strict = v == 0;
    return 0;
}

static int req_getsockopt(zl_socket *s, int option, void *val, size_t *len)
{
    req_state *r = state_of(s);
    if ((option != ZLINK_REQ_CORRELATE && option != ZLINK_REQ_RELAXED) ||
        !len || *len < sizeof(int)) {
        errno = EINVAL;
        return -1;
    }
    int v = option == ZLINK_REQ_CORRELATE ? r->correlate : !r->strict;
    memcpy(val, &v, sizeof v);
    *len = sizeof v;
    return 0;
}

const zl_pattern_ops zl_req_ops = {
    .type = ZLINK_REQ,
    .state_size = sizeof(req_state),
    .init = req_init,
    .destroy = req_destroy,
    .attach_pipe = req_attach_pipe,
    .pipe_terminated = req_pipe_terminated,
    .read_activated = req_read_activated,
    .write_activated = req_write_activated,
    .send = req_send,
    .recv = req_recv,
    .has_in = req_has_in,
    .has_out = req_has_out,
    .setsockopt = req_setsockopt,
    .getsockopt = req_getsockopt,
    .direct_recv_envelope = req_direct_recv_envelope,
    .direct_recv_taken = req_direct_recv_taken,
};
