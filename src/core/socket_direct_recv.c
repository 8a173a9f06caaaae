/* socket_direct_recv.c — the socket's side of direct receives
 * (direct_recv.h): which pipe's connection its thread may read itself,
 * watching that connection while a receive, a poll or a poller sleeps,
 * and the message a poll read and holds for the next receive. */
#include "socket.h"

#include <errno.h>

#include "ctx.h"
#include "direct_recv.h"
#include "pipe.h"
#include "sleeper.h"

/* The pipe whose connection this socket's thread may read itself
 * (direct_recv.h), and what comes before a message's body there; NULL
 * when it may not now: the socket has one connection, is not inside a
 * multipart message, and its pattern lets it. Not under CONFLATE, whose
 * session may hold an older message for the pipe. */
static zl_pipe *direct_pipe(zl_socket *s, zl_direct_envelope *envelope)
{
    if (!ZL_BACKEND_TRY_READ || s->pipe_count != 1 || s->rcvmore ||
        s->holding || !s->pipes[0]->peer_is_session ||
        !s->ops->direct_recv_envelope || zl_options_conflates(&s->options))
        return NULL;
    zl_pipe *p = s->pipes[0];
    *envelope = s->ops->direct_recv_envelope(s, p);
    return *envelope == ZL_DIRECT_NOT_NOW ? NULL : p;
}

/* The socket's thread read a message from p itself: the pattern moves as
 * if its receive had, and msg becomes what that receive returns first. */
static void direct_taken(zl_socket *s, zl_pipe *p, zlink_msg_t *msg)
{
    if (s->ops->direct_recv_taken)
        s->ops->direct_recv_taken(s, p, msg);
}

/* Watches the port's connection (true). While the engine is still
 * reading, the port closed, asks it instead to wake this thread when it
 * opens the port (*wanted), so that a wait that began too early can
 * still watch, rather than leave the next message to the I/O thread
 * too; the caller takes the request back with zl_recv_port_unwant. */
static bool watch_or_want(zl_recv_port *port, zl_sleeper *w, bool *wanted)
{
    *wanted = false;
    if (zl_recv_port_watch(port, w))
        return true;
    if (zl_recv_port_want(port)) {
        *wanted = true;
        return false;
    }
    return zl_recv_port_watch(port, w); /* opened between the two looks */
}

/* Takes the message waiting on p's connection, unless one older than it
 * waits in the pipe: read by the engine before the port opened, and
 * announced by a command whose signal may not have come yet (an I/O
 * thread holds signals back until its turn ends, zl_mailbox_hold_signals).
 * The next look then takes in the commands, and the engine reads the
 * input after that message. */
static zl_recv_result take_unless_older(zl_socket *s, zl_pipe *p,
                                        zl_direct_envelope envelope,
                                        zlink_msg_t *msg)
{
    if (zl_pipe_has_published(p)) {
        atomic_store_explicit(&s->commands_pending, true, memory_order_relaxed);
        return ZL_RECV_NOTHING;
    }
    return zl_recv_port_take(zl_pipe_recv_port(p), envelope, msg);
}

/* A blocking receive reads its connection itself while it waits, when the
 * engine has opened the port (direct_pipe): it sleeps as
 * zl_socket_sleep_for_command does, on its sleeper and on the connection
 * at once. */
int zl_socket_wait_reading_connection(zl_socket *s, zlink_msg_t *msg,
                                      int wait_ms)
{
    zl_direct_envelope envelope;
    zl_pipe *p = direct_pipe(s, &envelope);
    if (!p)
        return -1;
    zl_recv_port *port = zl_pipe_recv_port(p);
    zl_sleeper *w = &s->own_sleeper;
    bool wanted;
    if (!watch_or_want(port, w, &wanted)) {
        if (!wanted)
            return -1;
        int rc = zl_socket_sleep_for_command(s, wait_ms);
        zl_recv_port_unwant(port);
        return rc == -EINTR ? -EINTR : 0;
    }
    zl_recv_result r = ZL_RECV_NOTHING; /* a command came meanwhile */
    zl_socket_set_sleeper(s, w);
    zl_socket_sleepers_set();
    if (!zl_socket_commands_pending(s)) {
        zl_mailbox_set_sleeper_cpu(&s->mailbox, zl_thread_cpu());
        r = zl_recv_port_wait(port, w, wait_ms);
        zl_mailbox_set_sleeper_cpu(&s->mailbox, -1);
        if (r == ZL_RECV_WOKEN)
            zl_sleeper_woken(w);
        else if (r == ZL_RECV_READABLE)
            r = take_unless_older(s, p, envelope, msg);
    }
    zl_socket_set_sleeper(s, NULL);
    if (zl_recv_port_unwatch(port, r == ZL_RECV_FOR_ENGINE))
        zl_pipe_wake_writer(p);
    if (r == ZL_RECV_INTERRUPTED)
        return -EINTR;
    if (r != ZL_RECV_MESSAGE)
        return 0;
    direct_taken(s, p, msg);
    return 1;
}

bool zl_socket_may_watch_connection(zl_socket *s)
{
    zl_direct_envelope envelope;
    return direct_pipe(s, &envelope) != NULL;
}

zl_pipe *zl_socket_watch_connection(zl_socket *s, zl_sleeper *w,
                                    zl_os_socket *os_socket, bool *connection)
{
    zl_direct_envelope envelope;
    zl_pipe *p = direct_pipe(s, &envelope);
    if (!p)
        return NULL;
    zl_recv_port *port = zl_pipe_recv_port(p);
    bool wanted;
    *connection = watch_or_want(port, w, &wanted);
    if (!*connection && !wanted)
        return NULL;
    s->watched_envelope = *connection ? envelope : ZL_DIRECT_NOT_NOW;
    if (*connection)
        *os_socket = zl_recv_port_os_socket(port);
    return p;
}

bool zl_socket_unwatch_connection(zl_socket *s, zl_pipe *p, bool readable)
{
    zl_recv_port *port = zl_pipe_recv_port(p);
    if (s->watched_envelope == ZL_DIRECT_NOT_NOW) {
        zl_recv_port_unwant(port);
        return false;
    }
    zl_recv_result r = ZL_RECV_NOTHING;
    if (readable) {
        zlink_msg_init(&s->held);
        r = take_unless_older(s, p, s->watched_envelope, &s->held);
    }
    if (zl_recv_port_unwatch(port, r == ZL_RECV_FOR_ENGINE))
        zl_pipe_wake_writer(p);
    if (r != ZL_RECV_MESSAGE)
        return false;
    /* The pipe may go before the receive; the pattern then still needs
     * its routing id. */
    zl_pipe_ref(p);
    s->held_from = p;
    s->holding = true;
    return true;
}

void zl_socket_drop_held(zl_socket *s)
{
    if (!s->holding)
        return;
    zlink_msg_close(&s->held);
    zl_pipe_unref(s->held_from);
    s->held_from = NULL;
    s->holding = false;
}

/* The message a poll read for this socket (zl_socket_unwatch_connection)
 * comes before anything in the pipe, as it came first on the wire. The
 * pattern takes it now, as its receive would have. */
int zl_socket_take_held(zl_socket *s, zlink_msg_t *msg)
{
    if (zl_ctx_terminating(s->ctx)) {
        errno = ETERM;
        return -1;
    }
    zl_pipe *p = s->held_from;
    zlink_msg_move(msg, &s->held);
    s->held_from = NULL;
    s->holding = false;
    direct_taken(s, p, msg);
    zl_pipe_unref(p);
    return 0;
}
