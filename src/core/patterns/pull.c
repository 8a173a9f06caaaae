/* pull.c — PULL: fair-queued receive from every pipe; no send. */
#include <errno.h>

#include "fair_queue.h"
#include "patterns/pattern.h"
#include "socket.h"

static zl_fair_queue *in_of(zl_socket *s)
{
    return s->pattern;
}

static void pull_init(zl_socket *s)
{
    zl_fair_queue_init(in_of(s));
}

static void pull_destroy(zl_socket *s)
{
    zl_fair_queue_destroy(in_of(s));
}

static void pull_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    (void)locally_initiated;
    zl_fair_queue_set_conflate(in_of(s), zl_options_conflates(&s->options));
    if (zl_fair_queue_attach(in_of(s), p) == 0)
        return;
    zl_pipe_terminate(p);
    zl_discard_input(p);
}

static void pull_pipe_terminated(zl_socket *s, zl_pipe *p)
{
    zl_fair_queue_remove(in_of(s), p);
}

static void pull_read_activated(zl_socket *s, zl_pipe *p)
{
    if (zl_fair_queue_contains(in_of(s), p))
        zl_fair_queue_activate(in_of(s), p);
    else if (zl_discard_input(p))
        zl_socket_pipe_done(s, p);
}

static void pull_write_activated(zl_socket *s, zl_pipe *p)
{
    (void)s;
    (void)p;
}

static int pull_send(zl_socket *s, zlink_msg_t *msg)
{
    (void)s;
    (void)msg;
    errno = ENOTSUP;
    return -1;
}

static int pull_recv(zl_socket *s, zlink_msg_t *msg)
{
    return zl_fair_queue_recv(in_of(s), s, msg, NULL);
}

static bool pull_has_in(zl_socket *s)
{
    return zl_fair_queue_has_in(in_of(s), s);
}

static bool pull_has_out(zl_socket *s)
{
    (void)s;
    return false;
}

const zl_pattern_ops zl_pull_ops = {
    .type = ZLINK_PULL,
    .state_size = sizeof(zl_fair_queue),
    .init = pull_init,
    .destroy = pull_destroy,
    .attach_pipe = pull_attach_pipe,
    .pipe_terminated = pull_pipe_terminated,
    .read_activated = pull_read_activated,
    .write_activated = pull_write_activated,
    .send = pull_send,
    .recv = pull_recv,
    .has_in = pull_has_in,
    .has_out = pull_has_out,
    .setsockopt = NULL,
    .getsockopt = NULL,
    .direct_recv_envelope = zl_pattern_direct_bare,
};
