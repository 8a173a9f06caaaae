/* socket_hwm.c — a socket's SNDHWM and RCVHWM on the pipes it already has.
 * Set after a connect or bind, they change the queues of the connections
 * already made, as libzmq 4.3's do (its update_pipe_options), and a pipe
 * that arrives later is brought up to the socket's values as it attaches. */
#include "options.h"
#include "pipe.h"
#include "socket.h"

static int send_hwm_of(const zl_socket *s, const zl_pipe *p)
{
    if (p->peer_is_session || p->peer_recv_hwm == ZL_PIPE_HWM_UNKNOWN)
        return s->options.sndhwm;
    return zl_pipe_combined_hwm(s->options.sndhwm, p->peer_recv_hwm);
}

/* Each end sets the limit of the queue it writes, and tells the other end
 * the limit it reads with, since only a queue's writer may change it. */
static void update_pipe(zl_socket *s, zl_pipe *p, bool attached)
{
    if (p->terminated)
        return;
    /* A conflating socket's inproc queue stays one message deep
     * (zl_inproc_connect). */
    bool conflated = zl_options_conflates(&s->options) && !p->peer_is_session;
    if (!conflated && zl_pipe_set_send_hwm(p, send_hwm_of(s, p)) && attached)
        s->ops->write_activated(s, p); /* the pattern may have set it aside */
    if (p->told_recv_hwm != s->options.rcvhwm)
        zl_pipe_tell_recv_hwm(p, s->options.rcvhwm);
}

void zl_socket_hwms_changed(zl_socket *s)
{
    /* Pipes that sessions made and offered are taken in first, so the
     * change reaches them now rather than at the next send or receive.
     * ETERM here is the next call's to report. */
    (void)zl_socket_process_commands(s, 0);
    for (size_t i = 0; i < s->pipe_count; i++)
        update_pipe(s, s->pipes[i], true);
}

void zl_socket_hwms_for_new_pipe(zl_socket *s, zl_pipe *p)
{
    update_pipe(s, p, false);
}

void zl_socket_peer_hwm_changed(zl_socket *s, zl_pipe *p, int peer_recv_hwm)
{
    if (p->peer_is_session)
        return; /* a session never tells: it takes the socket's values */
    p->peer_recv_hwm = peer_recv_hwm;
    update_pipe(s, p, true);
}
