/* xsub.c — XSUB, and the subscriber core SUB shares: the subscription set,
 * subscriptions upstream (again after every reconnect), and receive with
 * optional filtering. */
#include "xsub.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "msg.h"
#include "patterns/pattern.h"
#include "socket.h"

static zl_xsub *state_of(zl_socket *s)
{
    return s->pattern;
}

static void drop(zlink_msg_t *msg)
{
    zlink_msg_close(msg);
    zlink_msg_init(msg);
}

void zl_xsub_init(zl_socket *s)
{
    zl_xsub *x = state_of(s);
    zl_fair_queue_init(&x->in);
    zl_dist_init(&x->out);
    zl_trie_init(&x->subscriptions);
    zlink_msg_init(&x->message);
    /* As libzmq: closing a subscriber need not wait for its subscriptions
     * to reach the wire. */
    s->options.linger = 0;
}

void zl_xsub_destroy(zl_socket *s)
{
    zl_xsub *x = state_of(s);
    zl_fair_queue_destroy(&x->in);
    zl_dist_destroy(&x->out);
    zl_trie_destroy(&x->subscriptions);
    zlink_msg_close(&x->message);
}

/* ---- subscriptions upstream ------------------------------------------ */

static void resend_one(const uint8_t *prefix, size_t len, void *arg)
{
    zl_pipe *p = arg;
    zlink_msg_t msg;
    if (zlink_msg_init_size(&msg, len + 1) != 0)
        return;
    uint8_t *data = zlink_msg_data(&msg);
    data[0] = 1;
    if (len > 0)
        memcpy(data + 1, prefix, len);
    zl_msg_set_flags(&msg, ZL_MSG_SUBSCRIBE);
    /* Past the HWM the subscription is lost, as libzmq loses it. */
    if (!zl_pipe_check_write(p) || !zl_pipe_write(p, &msg))
        zlink_msg_close(&msg);
}

/* Sends the whole subscription set to p, as a new peer needs it. */
static void resend_all(zl_xsub *x, zl_pipe *p)
{
    zl_trie_apply(&x->subscriptions, resend_one, p);
    zl_pipe_flush(p);
}

/* True when p is taking the message the application is sending: nothing
 * may be written to it until that message is whole. */
static bool inside_message(const zl_xsub *x, const zl_pipe *p)
{
    return x->out.more && p->dist_index < x->out.active;
}

static void resend_after_message(zl_xsub *x, zl_pipe *p)
{
    if (p->user_flags)
        return;
    p->user_flags = 1;
    x->resend_waiting++;
}

/* The message just ended: the pipes that waited get their set now. */
static void resend_waiting(zl_xsub *x)
{
    for (size_t i = 0; i < x->out.count && x->resend_waiting > 0; i++) {
        zl_pipe *p = x->out.pipes[i];
        if (p->user_flags) {
            p->user_flags = 0;
            x->resend_waiting--;
            resend_all(x, p);
        }
    }
}

/* Marks a whole message as a subscription, so that the engine sends it
 * as a SUBSCRIBE/CANCEL command to a ZMTP 3.1 peer. Parts of a multipart
 * message stay messages: a command cannot carry MORE. */
static void mark_subscription(zlink_msg_t *msg, bool whole, uint8_t flag)
{
    zl_msg_reset_flags(msg, ZL_MSG_SUBSCRIBE | ZL_MSG_CANCEL);
    if (whole)
        zl_msg_set_flags(msg, flag);
}

/* One part from the application, as libzmq's xsub_t::xsend: subscriptions
 * update the set and go to every peer (a cancel only when its count
 * reaches zero), anything else goes upstream as it is. */
static int send_part(zl_xsub *x, zlink_msg_t *msg)
{
    bool first = !x->more_send;
    bool more = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
    const uint8_t *data = zlink_msg_data(msg);
    size_t size = zlink_msg_size(msg);
    bool forward = true;
    if (size > 0 && data[0] == 1) {
        /* Every subscribe goes up, repeated or not: the XPUB deduplicates,
         * and XPUB_VERBOSE behind a proxy must see them all. */
        if (zl_trie_add(&x->subscriptions, data + 1, size - 1) < 0)
            return -1;
        mark_subscription(msg, first && !more, ZL_MSG_SUBSCRIBE);
    } else if (size > 0 && data[0] == 0) {
        forward = zl_trie_remove(&x->subscriptions, data + 1, size - 1);
        mark_subscription(msg, first && !more, ZL_MSG_CANCEL);
    } else {
        mark_subscription(msg, false, 0);
    }
    if (forward)
        zl_dist_send_to_all(&x->out, msg);
    else
        drop(msg);
    x->more_send = more;
    if (!more && x->resend_waiting > 0)
        resend_waiting(x);
    return 0;
}

static int xsub_send(zl_socket *s, zlink_msg_t *msg)
{
    return send_part(state_of(s), msg);
}

int zl_xsub_subscribe(zl_socket *s, bool subscribe, const void *topic,
                      size_t len)
{
    if (topic == NULL && len > 0) {
        errno = EINVAL;
        return -1;
    }
    zlink_msg_t msg;
    if (zlink_msg_init_size(&msg, len + 1) != 0)
        return -1;
    uint8_t *data = zlink_msg_data(&msg);
    data[0] = subscribe ? 1 : 0;
    if (len > 0)
        memcpy(data + 1, topic, len);
    int rc = send_part(state_of(s), &msg);
    zlink_msg_close(&msg);
    return rc;
}

/* ---- pipes ------------------------------------------------------------ */

void zl_xsub_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    (void)locally_initiated;
    zl_xsub *x = state_of(s);
    zl_fair_queue_set_conflate(&x->in, zl_options_conflates(&s->options));
    if (zl_fair_queue_attach(&x->in, p) == 0) {
        if (zl_dist_attach(&x->out, p) == 0) {
            /* A new pipe never takes part in a message already begun, so
             * its subscriptions can go at once. */
            p->user_flags = 0;
            resend_all(x, p);
            return;
        }
        zl_fair_queue_remove(&x->in, p);
    }
    /* Out of memory: a pipe we cannot track is closed rather than left
     * half attached. read_activated finishes it off. */
    zl_pipe_terminate(p);
    zl_discard_input(p);
}

void zl_xsub_pipe_terminated(zl_socket *s, zl_pipe *p)
{
    zl_xsub *x = state_of(s);
    if (zl_dist_contains(&x->out, p) && p->user_flags) {
        p->user_flags = 0;
        x->resend_waiting--;
    }
    zl_fair_queue_remove(&x->in, p);
    zl_dist_remove(&x->out, p);
}

void zl_xsub_read_activated(zl_socket *s, zl_pipe *p)
{
    zl_xsub *x = state_of(s);
    if (zl_fair_queue_contains(&x->in, p))
        zl_fair_queue_activate(&x->in, p);
    else if (zl_discard_input(p))
        zl_socket_pipe_done(s, p);
}

void zl_xsub_write_activated(zl_socket *s, zl_pipe *p)
{
    zl_dist_activate(&state_of(s)->out, p);
}

/* The connection behind p was lost and is being re-established: what we
 * queued for it was dropped, and the publisher on the other side starts
 * from nothing, so it gets the whole set again (libzmq's xhiccuped). */
void zl_xsub_hiccuped(zl_socket *s, zl_pipe *p)
{
    zl_xsub *x = state_of(s);
    if (!zl_dist_contains(&x->out, p))
        return;
    if (inside_message(x, p))
        resend_after_message(x, p);
    else
        resend_all(x, p);
}

/* ---- receiving -------------------------------------------------------- */

static bool wanted(zl_xsub *x, zlink_msg_t *msg)
{
    if (!x->filter)
        return true;
    bool match = zl_trie_check(&x->subscriptions, zlink_msg_data(msg),
                               zlink_msg_size(msg));
    /* INVERT_MATCHING: what matches no subscription, as libzmq's SUB. */
    return match != x->invert;
}

/* Drops the rest of a message whose first part the filter refused. The
 * pipe publishes whole messages, so the other parts are there. */
static void skip_rest(zl_xsub *x, zl_socket *s, zlink_msg_t *part)
{
    while (zl_msg_flags(part) & ZL_MSG_MORE) {
        drop(part);
        if (zl_fair_queue_recv(&x->in, s, part, NULL) != 0)
            break;
    }
    drop(part);
}

int zl_xsub_recv(zl_socket *s, zlink_msg_t *msg)
{
    zl_xsub *x = state_of(s);
    x->invert = s->options.invert_matching;
    if (x->has_message) {
        zlink_msg_move(msg, &x->message);
        x->has_message = false;
        x->more_recv = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
        return 0;
    }
    for (;;) {
        if (zl_fair_queue_recv(&x->in, s, msg, NULL) != 0)
            return -1;
        /* The filter looks at first parts only. */
        if (x->more_recv || wanted(x, msg)) {
            x->more_recv = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
            return 0;
        }
        skip_rest(x, s, msg);
    }
}

bool zl_xsub_has_in(zl_socket *s)
{
    zl_xsub *x = state_of(s);
    x->invert = s->options.invert_matching;
    if (x->more_recv || x->has_message)
        return true;
    for (;;) {
        zl_pipe *from = NULL;
        if (zl_fair_queue_recv(&x->in, s, &x->message, &from) != 0)
            return false;
        if (wanted(x, &x->message)) {
            /* Under CONFLATE a newer message may still come behind it:
             * the fair queue keeps it, to give the newest at the receive. */
            if (x->in.conflate && from != NULL &&
                !(zl_msg_flags(&x->message) & ZL_MSG_MORE)) {
                zl_fair_queue_unread(&x->in, &x->message, from);
                zlink_msg_init(&x->message);
                return true;
            }
            x->has_message = true;
            return true;
        }
        skip_rest(x, s, &x->message);
    }
}

static bool xsub_has_out(zl_socket *s)
{
    (void)s;
    return true;
}

const zl_pattern_ops zl_xsub_ops = {
    .type = ZLINK_XSUB,
    .state_size = sizeof(zl_xsub),
    .init = zl_xsub_init,
    .destroy = zl_xsub_destroy,
    .attach_pipe = zl_xsub_attach_pipe,
    .pipe_terminated = zl_xsub_pipe_terminated,
    .read_activated = zl_xsub_read_activated,
    .write_activated = zl_xsub_write_activated,
    .hiccuped = zl_xsub_hiccuped,
    .send = xsub_send,
    .recv = zl_xsub_recv,
    .has_in = zl_xsub_has_in,
    .has_out = xsub_has_out,
    .setsockopt = NULL,
    .getsockopt = NULL,
};
