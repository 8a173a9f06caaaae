/* pair.c — PAIR: exactly one peer; any further pipe is refused. */
#include <errno.h>

#include "fair_queue.h"
#include "msg.h"
#include "patterns/pattern.h"
#include "socket.h"

typedef struct pair_state {
    zl_pipe *pipe;
    /* A fair queue over one pipe: it reads past the peer's delimiter and
     * keeps has_in exact. */
    zl_fair_queue in;
    bool more_out; /* the last part sent had MORE */
} pair_state;

static pair_state *state_of(zl_socket *s)
{
    return s->pattern;
}

static void pair_init(zl_socket *s)
{
    zl_fair_queue_init(&state_of(s)->in);
}

static void pair_destroy(zl_socket *s)
{
    zl_fair_queue_destroy(&state_of(s)->in);
}

/* Terminating tells the peer to let go; its delimiter will come back and
 * read_activated then hands the pipe to zl_socket_pipe_done. Reading now
 * also puts this end to sleep, so that the delimiter's flush wakes it. */
static void refuse_pipe(zl_pipe *p)
{
    zl_pipe_refuse(p);
    zl_discard_input(p);
}

static void pair_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    pair_state *pair = state_of(s);
    if (pair->pipe != NULL || zl_fair_queue_attach(&pair->in, p) != 0) {
        refuse_pipe(p);
        return;
    }
    pair->pipe = p;
    pair->more_out = false;
}

static void pair_pipe_terminated(zl_socket *s, zl_pipe *p)
{
    pair_state *pair = state_of(s);
    if (p != pair->pipe)
        return;
    zl_fair_queue_remove(&pair->in, p);
    pair->pipe = NULL;
    pair->more_out = false;
}

static void pair_read_activated(zl_socket *s, zl_pipe *p)
{
    pair_state *pair = state_of(s);
    if (p == pair->pipe)
        zl_fair_queue_activate(&pair->in, p);
    else if (zl_discard_input(p))
        zl_socket_pipe_done(s, p);
}

static void pair_write_activated(zl_socket *s, zl_pipe *p)
{
    /* One pipe: send simply tries it again. */
}

static int pair_send(zl_socket *s, zlink_msg_t *msg)
{
    pair_state *pair = state_of(s);
    zl_pipe *p = pair->pipe;
    if (p == NULL) {
        errno = EAGAIN;
        return -1;
    }
    bool last = !(zl_msg_flags(msg) & ZL_MSG_MORE);
    /* EAGAIN at the HWM or once the pipe is terminated; or ENOMEM. */
    if (!zl_pipe_send(p, msg, !pair->more_out))
        return -1;
    pair->more_out = !last;
    return 0;
}

static int pair_recv(zl_socket *s, zlink_msg_t *msg)
{
    return zl_fair_queue_recv(&state_of(s)->in, s, msg, NULL);
}

static bool pair_has_in(zl_socket *s)
{
    return zl_fair_queue_has_in(&state_of(s)->in, s);
}

static bool pair_has_out(zl_socket *s)
{
    pair_state *pair = state_of(s);
    return pair->pipe != NULL &&
           (pair->more_out || zl_pipe_check_write(pair->pipe));
}

const zl_pattern_ops zl_pair_ops = {
    .type = ZLINK_PAIR,
    .state_size = sizeof(pair_state),
    .init = pair_init,
    .destroy = pair_destroy,
    .attach_pipe = pair_attach_pipe,
    .pipe_terminated = pair_pipe_terminated,
    .read_activated = pair_read_activated,
    .write_activated = pair_write_activated,
    .send = pair_send,
    .recv = pair_recv,
    .has_in = pair_has_in,
    .has_out = pair_has_out,
    .setsockopt = NULL,
    .getsockopt = NULL,
    .direct_recv_envelope = zl_pattern_direct_bare,
};
