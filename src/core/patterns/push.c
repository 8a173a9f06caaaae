/* push.c — PUSH: load-balanced send to the pipes with room, blocking at the
 * HWM; no receive. */
#include <errno.h>

#include "fair_queue.h"
#include "load_balance.h"
#include "patterns/pattern.h"
#include "socket.h"

static zl_load_balance *out_of(zl_socket *s)
{
    return s->pattern;
}

static void push_init(zl_socket *s)
{
    zl_load_balance_init(out_of(s));
}

static void push_destroy(zl_socket *s)
{
    zl_load_balance_destroy(out_of(s));
}

static void push_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    (void)locally_initiated;
    if (zl_load_balance_attach(out_of(s), p) == 0)
        return;
    zl_pipe_terminate(p);
    zl_discard_input(p);
}

static void push_pipe_terminated(zl_socket *s, zl_pipe *p)
{
    zl_load_balance_remove(out_of(s), p);
}

/* A PULL never sends: whatever a peer sends anyway is dropped, so that it
 * cannot fill the pipe towards a socket that never reads it. */
static void push_read_activated(zl_socket *s, zl_pipe *p)
{
    if (zl_discard_input(p))
        zl_socket_pipe_done(s, p);
}

static void push_write_activated(zl_socket *s, zl_pipe *p)
{
    zl_load_balance_activate(out_of(s), p);
}

static int push_send(zl_socket *s, zlink_msg_t *msg)
{
    return zl_load_balance_send(out_of(s), msg);
}

static int push_recv(zl_socket *s, zlink_msg_t *msg)
{
    (void)s;
    (void)msg;
    errno = ENOTSUP;
    return -1;
}

static bool push_has_in(zl_socket *s)
{
    (void)s;
    return false;
}

static bool push_has_out(zl_socket *s)
{
    return zl_load_balance_has_out(out_of(s));
}

const zl_pattern_ops zl_push_ops = {
    .type = ZLINK_PUSH,
    .state_size = sizeof(zl_load_balance),
    .init = push_init,
    .destroy = push_destroy,
    .attach_pipe = push_attach_pipe,
    .pipe_terminated = push_pipe_terminated,
    .read_activated = push_read_activated,
    .write_activated = push_write_activated,
    .send = push_send,
    .recv = push_recv,
    .has_in = push_has_in,
    .has_out = push_has_out,
    .setsockopt = NULL,
    .getsockopt = NULL,
};
