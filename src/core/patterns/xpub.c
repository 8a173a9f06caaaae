/* xpub.c — XPUB, and the publisher core PUB shares: subscriptions from the
 * pipes into the mtrie, matching and distribution on send, and what the
 * application hears of subscriptions (VERBOSE, VERBOSER, MANUAL), queued
 * for recv up to RCVHWM. */
#include "xpub.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fair_queue.h"
#include "msg.h"
#include "patterns/pattern.h"
#include "socket.h"

/* Flags that mean something only inside zlink; a message handed to the
 * application keeps none of them. */
#define INTERNAL_FLAGS                                                         \
    (ZL_MSG_COMMAND | ZL_MSG_SUBSCRIBE | ZL_MSG_CANCEL | ZL_MSG_ROUTING_ID)

static zl_xpub *state_of(zl_socket *s)
{
    return s->pattern;
}

static bool is_xpub(const zl_socket *s)
{
    return s->options.type == ZLINK_XPUB;
}

/* ---- the messages waiting for recv ------------------------------------ */

static bool pending_grow(zl_xpub *x)
{
    size_t capacity = x->pending_capacity ? x->pending_capacity * 2 : 16;
    zl_xpub_pending *ring = malloc(capacity * sizeof *ring);
    if (ring == NULL)
        return false;
    for (size_t i = 0; i < x->pending_count; i++)
        ring[i] = x->pending[(x->pending_head + i) % x->pending_capacity];
    free(x->pending);
    x->pending = ring;
    x->pending_head = 0;
    x->pending_capacity = capacity;
    return true;
}

/* Takes msg over (it is left empty). Out of memory, the message is lost,
 * as a full queue would lose it. */
static void pending_push(zl_xpub *x, zlink_msg_t *msg, zl_pipe *pipe,
                         bool sets_last_pipe)
{
    if (x->pending_count == x->pending_capacity && !pending_grow(x)) {
        zlink_msg_close(msg);
        zlink_msg_init(msg);
        return;
    }
    size_t tail = (x->pending_head + x->pending_count) % x->pending_capacity;
    zl_xpub_pending *e = &x->pending[tail];
    zlink_msg_init(&e->msg);
    zlink_msg_move(&e->msg, msg);
    e->pipe = pipe;
    e->sets_last_pipe = sets_last_pipe;
    x->pending_count++;
}

/* A subscription notice built from a prefix: 0x00/0x01 + prefix. */
static void pending_push_notice(zl_xpub *x, uint8_t kind, const uint8_t *prefix,
                                size_t len, zl_pipe *pipe, bool sets_last_pipe)
{
    zlink_msg_t msg;
    if (zlink_msg_init_size(&msg, len + 1) != 0)
        return;
    uint8_t *data = zlink_msg_data(&msg);
    data[0] = kind;
    if (len > 0)
        memcpy(data + 1, prefix, len);
    pending_push(x, &msg, pipe, sets_last_pipe);
}

/* The pipe is going away: nothing may point at it any more. */
static void forget_pipe(zl_xpub *x, const zl_pipe *p)
{
    if (x->last_pipe == p)
        x->last_pipe = NULL;
    for (size_t i = 0; i < x->pending_count; i++) {
        zl_xpub_pending *e =
            &x->pending[(x->pending_head + i) % x->pending_capacity];
        if (e->pipe == p)
            e->pipe = NULL;
    }
}

/* ---- the socket ------------------------------------------------------- */

void zl_xpub_init(zl_socket *s)
{
    zl_xpub *x = state_of(s);
    zl_dist_init(&x->dist);
    zl_mtrie_init(&x->subscriptions);
    zl_mtrie_init(&x->manual_subscriptions);
    zl_fair_queue_init(&x->in);
    x->lossy = true;
    zlink_msg_init(&x->welcome);
}

void zl_xpub_destroy(zl_socket *s)
{
    zl_xpub *x = state_of(s);
    zl_dist_destroy(&x->dist);
    zl_mtrie_destroy(&x->subscriptions);
    zl_mtrie_destroy(&x->manual_subscriptions);
    zl_fair_queue_destroy(&x->in);
    zlink_msg_close(&x->welcome);
    for (size_t i = 0; i < x->pending_count; i++)
        zlink_msg_close(
            &x->pending[(x->pending_head + i) % x->pending_capacity].msg);
    free(x->pending);
    x->pending = NULL;
    x->pending_count = x->pending_capacity = 0;
}

/* One message a subscriber sent: a (un)subscription when it starts with
 * 0x01 or 0x00 (the engine turns SUBSCRIBE and CANCEL commands into that
 * form), anything else is a message for the application (XSUB upstream
 * traffic). Leaves msg empty. */
static void take_message(zl_socket *s, zl_xpub *x, zl_pipe *p, zlink_msg_t *msg)
{
    const uint8_t *data = zlink_msg_data(msg);
    size_t size = zlink_msg_size(msg);
    if (size > 0 && (data[0] == 0 || data[0] == 1)) {
        bool subscribe = data[0] == 1;
        bool notify;
        if (x->manual) {
            /* Kept only to report the pipe's subscriptions when it goes;
             * the application decides what the pipe receives. */
            if (subscribe)
                zl_mtrie_add(&x->manual_subscriptions, data + 1, size - 1, p);
            else
                zl_mtrie_remove(&x->manual_subscriptions, data + 1, size - 1,
                                p);
            notify = true;
        } else if (subscribe) {
            int rc = zl_mtrie_add(&x->subscriptions, data + 1, size - 1, p);
            notify = rc == 1 || (rc == 0 && x->verbose_subs);
        } else {
            /* Only the last cancel of a prefix, or every one under
             * XPUB_VERBOSER. libzmq 4.3 also reports a cancel of a prefix
             * the pipe never subscribed to: that told the application
             * nothing, and let one peer fill its queue with notices. */
            zl_mtrie_rm_result r =
                zl_mtrie_remove(&x->subscriptions, data + 1, size - 1, p);
            notify = r == ZL_MTRIE_REMOVED_LAST || x->verbose_unsubs;
        }
        if (is_xpub(s) && notify) {
            zl_msg_reset_flags(msg, ZL_MSG_MORE | INTERNAL_FLAGS);
            pending_push(x, msg, x->manual ? p : NULL, x->manual);
            return;
        }
    } else if (is_xpub(s)) {
        zl_msg_reset_flags(msg, INTERNAL_FLAGS);
        pending_push(x, msg, NULL, false);
        return;
    }
    zlink_msg_close(msg);
    zlink_msg_init(msg);
}

/* The most parts the queue for recv holds before the pipes wait: RCVHWM,
 * the bound libzmq puts on an XPUB's inbound pipes (0: no limit). */
static size_t pending_limit(const zl_socket *s)
{
    return s->options.rcvhwm > 0 ? (size_t)s->options.rcvhwm : SIZE_MAX;
}

/* Takes what the pipes hold, round robin, while the queue for recv is
 * under its limit. Subscriptions are applied as they are taken: as long as
 * the application reads, or the traffic makes no notice (PUB, repeated
 * subscriptions), nothing waits. Past the limit the pipes are left unread
 * and fill to their own HWM, and then the sessions stop reading their
 * peers: backpressure, nothing dropped. A message is always taken whole,
 * so the queue never ends in half of one. */
static void pump(zl_socket *s, zl_xpub *x)
{
    size_t limit = pending_limit(s);
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    while (x->pending_count < limit || zl_fair_queue_mid_message(&x->in)) {
        zl_pipe *from = NULL;
        if (zl_fair_queue_recv(&x->in, s, &msg, &from) != 0)
            return;
        take_message(s, x, from, &msg);
    }
}

void zl_xpub_read_activated(zl_socket *s, zl_pipe *p)
{
    zl_xpub *x = state_of(s);
    if (!zl_fair_queue_contains(&x->in, p)) {
        /* A pipe we could not track: drain it until it closes. */
        if (zl_discard_input(p))
            zl_socket_pipe_done(s, p);
        return;
    }
    zl_fair_queue_activate(&x->in, p);
    pump(s, x);
}

void zl_xpub_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    (void)locally_initiated;
    zl_xpub *x = state_of(s);
    if (zl_dist_attach(&x->dist, p) != 0) {
        /* Out of memory: a pipe we cannot track is closed rather than left
         * half attached. read_activated finishes it off. */
        zl_pipe_terminate(p);
        zl_discard_input(p);
        return;
    }
    if (zl_fair_queue_attach(&x->in, p) != 0) {
        zl_dist_remove(&x->dist, p);
        zl_pipe_terminate(p);
        zl_discard_input(p);
        return;
    }
    if (x->has_welcome) {
        zlink_msg_t copy;
        zlink_msg_init(&copy);
        zlink_msg_copy(&copy, &x->welcome);
        if (zl_pipe_write(p, &copy))
            zl_pipe_flush(p);
        else
            zlink_msg_close(&copy);
    }
    /* The peer may have subscribed already. */
    zl_xpub_read_activated(s, p);
}

/* Each prefix the departed pipe leaves behind, as a cancel for the
 * application (an mtrie callback). */
static void report_unsubscription(const uint8_t *prefix, size_t len, void *arg)
{
    zl_socket *s = arg;
    zl_xpub *x = state_of(s);
    if (!is_xpub(s))
        return;
    pending_push_notice(x, 0, prefix, len, NULL, x->manual);
    if (x->manual)
        x->last_pipe = NULL;
}

void zl_xpub_pipe_terminated(zl_socket *s, zl_pipe *p)
{
    zl_xpub *x = state_of(s);
    if (x->manual) {
        zl_mtrie_rm_pipe_verbose(&x->manual_subscriptions, p,
                                 report_unsubscription, s);
        zl_mtrie_rm_pipe(&x->subscriptions, p, NULL, NULL);
    } else if (x->verbose_unsubs) {
        zl_mtrie_rm_pipe_verbose(&x->subscriptions, p, report_unsubscription,
                                 s);
    } else {
        zl_mtrie_rm_pipe(&x->subscriptions, p, report_unsubscription, s);
    }
    forget_pipe(x, p);
    zl_fair_queue_remove(&x->in, p);
    zl_dist_remove(&x->dist, p);
}

void zl_xpub_write_activated(zl_socket *s, zl_pipe *p)
{
    zl_dist_activate(&state_of(s)->dist, p);
}

static void mark_matching(void *pipe, void *arg)
{
    zl_dist_match(arg, pipe);
}

int zl_xpub_send(zl_socket *s, zlink_msg_t *msg)
{
    zl_xpub *x = state_of(s);
    bool more = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
    if (!x->more_send) {
        /* New subscribers and subscriptions reach us even though a send
         * never blocks: the socket takes pending commands before each one
         * (socket.c, with_timeout). */
        zl_dist_unmatch(&x->dist);
        zl_mtrie_match(&x->subscriptions, zlink_msg_data(msg),
                       zlink_msg_size(msg), mark_matching, &x->dist);
        if (s->options.invert_matching)
            zl_dist_reverse_match(&x->dist);
    }
    if (!x->lossy && !zl_dist_check_hwm(&x->dist)) {
        errno = EAGAIN;
        return -1;
    }
    zl_dist_send_to_matching(&x->dist, msg);
    if (!more)
        zl_dist_unmatch(&x->dist);
    x->more_send = more;
    return 0;
}

bool zl_xpub_has_out(zl_socket *s)
{
    (void)s;
    return true;
}

static int bool_option(const void *val, size_t len, bool *out)
{
    int v;
    if (val == NULL || len != sizeof v) {
        errno = EINVAL;
        return -1;
    }
    memcpy(&v, val, sizeof v);
    if (v < 0) {
        errno = EINVAL;
        return -1;
    }
    *out = v != 0;
    return 0;
}

static int set_welcome(zl_xpub *x, const void *val, size_t len)
{
    zlink_msg_t welcome;
    if (len > 0 && zl_msg_init_buffer(&welcome, val, len) != 0)
        return -1;
    zlink_msg_close(&x->welcome);
    zlink_msg_init(&x->welcome);
    x->has_welcome = len > 0;
    if (x->has_welcome)
        zlink_msg_move(&x->welcome, &welcome);
    return 0;
}

int zl_xpub_setsockopt(zl_socket *s, int option, const void *val, size_t len)
{
    zl_xpub *x = state_of(s);
    bool on;
    if (val == NULL && len > 0) {
        errno = EINVAL;
        return -1;
    }
    switch (option) {
    case ZLINK_XPUB_VERBOSE:
        if (bool_option(val, len, &on) != 0)
            return -1;
        x->verbose_subs = on;
        x->verbose_unsubs = false;
        return 0;
    case ZLINK_XPUB_VERBOSER:
        if (bool_option(val, len, &on) != 0)
            return -1;
        x->verbose_subs = on;
        x->verbose_unsubs = on;
        return 0;
    case ZLINK_XPUB_NODROP:
        if (bool_option(val, len, &on) != 0)
            return -1;
        x->lossy = !on;
        return 0;
    case ZLINK_XPUB_MANUAL:
        return bool_option(val, len, &x->manual);
    case ZLINK_SUBSCRIBE:
    case ZLINK_UNSUBSCRIBE:
        /* Outside XPUB_MANUAL, libzmq knows no such option here. */
        if (!x->manual) {
            errno = EINVAL;
            return -1;
        }
        if (x->last_pipe == NULL)
            return 0;
        if (option == ZLINK_SUBSCRIBE)
            return zl_mtrie_add(&x->subscriptions, val, len, x->last_pipe) < 0
                       ? -1
                       : 0;
        zl_mtrie_remove(&x->subscriptions, val, len, x->last_pipe);
        return 0;
    case ZLINK_XPUB_WELCOME_MSG:
        return set_welcome(x, val, len);
    default:
        errno = EINVAL;
        return -1;
    }
}

static int xpub_recv(zl_socket *s, zlink_msg_t *msg)
{
    zl_xpub *x = state_of(s);
    if (x->pending_count == 0) {
        errno = EAGAIN;
        return -1;
    }
    zl_xpub_pending *e = &x->pending[x->pending_head];
    /* XPUB_MANUAL: SUBSCRIBE/UNSUBSCRIBE now answer the pipe this
     * subscription came from. */
    if (x->manual && e->sets_last_pipe)
        x->last_pipe = e->pipe;
    zlink_msg_move(msg, &e->msg);
    x->pending_head = (x->pending_head + 1) % x->pending_capacity;
    x->pending_count--;
    /* The pipes left unread go on once half the queue is taken, as a
     * pipe's writer does at its low-water mark. */
    if (x->pending_count <= pending_limit(s) / 2)
        pump(s, x);
    return 0;
}

static bool xpub_has_in(zl_socket *s)
{
    return state_of(s)->pending_count > 0;
}

const zl_pattern_ops zl_xpub_ops = {
    .type = ZLINK_XPUB,
    .state_size = sizeof(zl_xpub),
    .init = zl_xpub_init,
    .destroy = zl_xpub_destroy,
    .attach_pipe = zl_xpub_attach_pipe,
    .pipe_terminated = zl_xpub_pipe_terminated,
    .read_activated = zl_xpub_read_activated,
    .write_activated = zl_xpub_write_activated,
    .send = zl_xpub_send,
    .recv = xpub_recv,
    .has_in = xpub_has_in,
    .has_out = zl_xpub_has_out,
    .setsockopt = zl_xpub_setsockopt,
    .getsockopt = NULL,
};
