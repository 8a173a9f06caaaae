/* dealer.c — DEALER: load-balanced send, fair-queued receive. */
#include "fair_queue.h"
#include "load_balance.h"
#include "patterns/pattern.h"
#include "socket.h"

typedef struct dealer_state {
    zl_fair_queue in;
    zl_load_balance out;
} dealer_state;

static dealer_state *state_of(zl_socket *s)
{
    return s->pattern;
}

static void dealer_init(zl_socket *s)
{
    zl_fair_queue_init(&state_of(s)->in);
    zl_load_balance_init(&state_of(s)->out);
}

static void dealer_destroy(zl_socket *s)
{
    zl_fair_queue_destroy(&state_of(s)->in);
    zl_load_balance_destroy(&state_of(s)->out);
}

static void dealer_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    dealer_state *dealer = state_of(s);
    zl_fair_queue_set_conflate(&dealer->in, zl_options_conflates(&s->options));
    if (zl_fair_queue_attach(&dealer->in, p) == 0) {
        if (zl_load_balance_attach(&dealer->out, p) == 0)
            return;
        zl_fair_queue_remove(&dealer->in, p);
    }
    /* Out of memory: a pipe we cannot track is closed rather than left
     * half attached. read_activated finishes it off. */
    zl_pipe_terminate(p);
    zl_discard_input(p);
}

static void dealer_pipe_terminated(zl_socket *s, zl_pipe *p)
{
    zl_fair_queue_remove(&state_of(s)->in, p);
    zl_load_balance_remove(&state_of(s)->out, p);
}

static void dealer_read_activated(zl_socket *s, zl_pipe *p)
{
    dealer_state *dealer = state_of(s);
    if (zl_fair_queue_contains(&dealer->in, p))
        zl_fair_queue_activate(&dealer->in, p);
    else if (zl_discard_input(p))
        zl_socket_pipe_done(s, p);
}

static void dealer_write_activated(zl_socket *s, zl_pipe *p)
{
    zl_load_balance_activate(&state_of(s)->out, p);
}

static int dealer_send(zl_socket *s, zlink_msg_t *msg)
{
    return zl_load_balance_send(&state_of(s)->out, msg);
}

static int dealer_recv(zl_socket *s, zlink_msg_t *msg)
{
    return zl_fair_queue_recv(&state_of(s)->in, s, msg, NULL);
}

static bool dealer_has_in(zl_socket *s)
{
    return zl_fair_queue_has_in(&state_of(s)->in, s);
}

static bool dealer_has_out(zl_socket *s)
{
    return zl_load_balance_has_out(&state_of(s)->out);
}

const zl_pattern_ops zl_dealer_ops = {
    .type = ZLINK_DEALER,
    .state_size = sizeof(dealer_state),
    .init = dealer_init,
    .destroy = dealer_destroy,
    .attach_pipe = dealer_attach_pipe,
    .pipe_terminated = dealer_pipe_terminated,
    .read_activated = dealer_read_activated,
    .write_activated = dealer_write_activated,
    .send = dealer_send,
    .recv = dealer_recv,
    .has_in = dealer_has_in,
    .has_out = dealer_has_out,
    .setsockopt = NULL,
    .getsockopt = NULL,
    .direct_recv_envelope = zl_pattern_direct_bare,
};
