/* socket.h — the socket as the application thread sees it: options, the
 * pattern, the attached pipes, the endpoints it bound or connected, and its
 * mailbox. */
#ifndef ZL_SOCKET_H
#define ZL_SOCKET_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "atomics.h"
#include "backend.h"
#include "mailbox.h"
#include "options.h"
#include "patterns/pattern.h"
#include "pipe.h"
#include "poller.h"
#include "sleeper.h"
#include "wait.h"

struct zl_ctx;
struct zl_io_object;
struct zl_monitor;

#define ZL_SOCKET_MAGIC 0x7a6c736bu /* "zlsk" */
/* A closed socket's magic: its handle is no longer a socket, and one
 * comparison says so on every call (closed stays for the reaper). */
#define ZL_SOCKET_CLOSED_MAGIC 0x7a6c6364u /* "zlcd" */

/* Something the socket bound or connected, for unbind/disconnect. */
typedef struct zl_endpoint_entry {
    char *endpoint;              /* as resolved (LAST_ENDPOINT form) */
    char *requested;             /* as the application wrote it */
    struct zl_io_object *object; /* listener or session; NULL for inproc */
    zl_pipe *pipe; /* connect: our end, when it exists from the start */
    bool bound;    /* bind (else connect) */
} zl_endpoint_entry;

typedef struct zl_socket {
    uint32_t magic;
    struct zl_ctx *ctx;
    zl_options options;
    const zl_pattern_ops *ops;
    void *pattern;

    zl_mailbox mailbox;
    /* What a wait on this socket alone sleeps on, and its ZLINK_FD, which
     * follows every command only once the application took it
     * (fd_exported; socket.c, signal_socket). */
    zl_sleeper own_sleeper;
    atomic_bool fd_exported;
    /* The sleeper of the thread that sleeps waiting for this socket, or
     * NULL (zl_socket_set_sleeper). */
    zl_atomic_ptr sleeper;
    /* Raised with each wakeup of the mailbox: a send or recv that keeps
     * succeeding still takes in new peers and activations, as libzmq's
     * do (it checks every millisecond; a flag costs a load). */
    atomic_bool commands_pending;
    zl_waiter waiter; /* how this socket's blocking receives spin */
    bool streaming;   /* the last message received was waiting */

    zl_pipe **pipes; /* every attached pipe; pipe->owner_index is its slot */
    size_t pipe_count, pipe_capacity;

    zl_endpoint_entry *endpoints;
    size_t endpoint_count, endpoint_capacity;
    char last_endpoint[300];

    /* I/O objects (listeners, sessions) alive for this socket. Raised by
     * whoever creates one, lowered by the socket on ZL_CMD_TERM_ACK. */
    atomic_int io_objects;

    /* The zlink_poller items watching this socket. */
    zl_poll_links pollers;

    struct zl_monitor *monitor; /* guarded by monitor_lock */
    uv_mutex_t monitor_lock;
    bool rcvmore;
    /* A message this thread read from the connection while zlink_poll
     * slept (zl_socket_unwatch_connection), its envelope dropped: the next
     * receive returns it, before anything in the pipe. The pattern takes
     * it only then (direct_recv_taken), so that until the application
     * reads it a REQ or REP stays where libzmq's would: no POLLOUT, EFSM
     * for a send out of turn. */
    bool holding;
    zlink_msg_t held;
    zl_pipe *held_from; /* with a reference, while holding */
    /* What the connection being watched puts before a message's body;
     * NOT_NOW while a poll waits for the port instead. */
    zl_direct_envelope watched_envelope;
    bool closed; /* zlink_close was called; the reaper owns it */
    size_t ctx_slot;
} zl_socket;

/* For patterns: the pipe read ZL_PIPE_CLOSED (or must go): tells the
 * pattern, releases the pipe and forgets it. */
void zl_socket_pipe_done(zl_socket *s, zl_pipe *p);

/* Attaches a pipe whose owner is this socket (inproc, sessions). */
void zl_socket_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated);
/* socket_hwm.c: ZLINK_SNDHWM or ZLINK_RCVHWM changed; applies them to every
 * pipe. */
void zl_socket_hwms_changed(zl_socket *s);
/* Brings a pipe made with older values up to the socket's, before the
 * pattern sees it. */
void zl_socket_hwms_for_new_pipe(zl_socket *s, zl_pipe *p);
/* ZL_CMD_PEER_HWM: the other socket of an inproc pipe changed its
 * RCVHWM, which adds to our SNDHWM on that pipe. */
void zl_socket_peer_hwm_changed(zl_socket *s, zl_pipe *p, int peer_recv_hwm);

/* Processes queued commands; if wait_ms != 0 and none are queued, first
 * waits up to wait_ms (-1: forever) for one. Returns 0, or -1 with ETERM when
 * the context is shutting down, EAGAIN on timeout, EINTR. */
int zl_socket_process_commands(zl_socket *s, int wait_ms);

/* One command for this socket (also used by the reaper). */
void zl_socket_handle_command(zl_socket *s, const zl_cmd *cmd);

/* ---- direct receives (socket_direct_recv.c) ---- */

/* Whether s's thread may read its connection itself now (direct_recv.h):
 * one connection, and a pattern that lets it. */
bool zl_socket_may_watch_connection(zl_socket *s);
/* A poll or a poller is about to sleep on s; w is the sleeper the engine
 * raises when it must take the connection back. When s's thread may read
 * its connection itself, watches it and gives the OS socket to sleep on
 * too (*connection true). When the engine is still reading, asks it
 * instead to wake s's thread with a command once it opens the port, so
 * that the next sleep can watch (*connection false, no OS socket).
 * Returns the pipe, or NULL for neither. */
zl_pipe *zl_socket_watch_connection(zl_socket *s, struct zl_sleeper *w,
                                    zl_os_socket *os_socket, bool *connection);
/* After that sleep: readable when the connection had input and nothing
 * else woke the sleep. Reads a message into s->held when it can, and
 * stops watching. True when s holds a message now. */
bool zl_socket_unwatch_connection(zl_socket *s, zl_pipe *p, bool readable);
/* A REQ's new request makes the reply s holds stale, as those queued in
 * its pipes are: drops it. */
void zl_socket_drop_held(zl_socket *s);
/* A blocking receive that found nothing: waits up to wait_ms reading the
 * connection itself, when it may. 1 with a message in msg, 0 when it
 * waited (woken, or wait_ms passed), -EINTR when a signal interrupted the
 * wait, -1 when it did not wait. */
int zl_socket_wait_reading_connection(zl_socket *s, zlink_msg_t *msg,
                                      int wait_ms);
/* The receive of a socket that holds a message: returns that one, and the
 * pattern takes it now. 0, or -1 (ETERM). */
int zl_socket_take_held(zl_socket *s, zlink_msg_t *msg);

/* Sleeps on s's own sleeper until a command reaches s, or wait_ms (-1:
 * forever) passes: 0, -EAGAIN, or -errno. */
int zl_socket_sleep_for_command(zl_socket *s, int wait_ms);

/* Send/receive one part with socket semantics (timeouts, ETERM). */
int zl_socket_send_msg(zl_socket *s, zlink_msg_t *msg, int flags);
int zl_socket_recv_msg(zl_socket *s, zlink_msg_t *msg, int flags);

/* Sleeping until a command reaches s (sleeper.h). The thread points s at
 * its sleeper w, then calls zl_socket_sleepers_set (a fence, once for any
 * number of sockets), then looks at zl_socket_commands_pending: if one may
 * have come already, it looks at s again instead of sleeping; otherwise
 * any later command raises w. Awake, it sets the sleeper back to NULL. */
void zl_socket_set_sleeper(zl_socket *s, zl_sleeper *w);
void zl_socket_sleepers_set(void);
bool zl_socket_commands_pending(const zl_socket *s);
/* Wakes whatever waits for s: its sleeper, ZLINK_FD, its pollers (the
 * context is shutting down). Any thread. */
void zl_socket_wake(zl_socket *s);

/* ZLINK_EVENTS after processing commands. */
int zl_socket_events(zl_socket *s);
/* The same, looking only at the events in wanted: a poll over many
 * sockets waited on for input alone spares each one the look at its
 * output pipes. */
int zl_socket_events_of(zl_socket *s, int wanted);
/* Spinning on s watches every pipe: worth it for a few only. */
bool zl_socket_may_spin_on(const zl_socket *s);
/* True when every peer of s is an application thread (inproc), none an
 * I/O thread's session (wait.h). */
bool zl_socket_peers_are_threads(const zl_socket *s);
/* True when a spin for s's messages takes no CPU an I/O thread needs:
 * every peer is an application thread, or this thread runs on a CPU no
 * I/O thread of s's context was last seen on (wait.h). */
bool zl_socket_spin_is_clear(const zl_socket *s);
/* Whether a wait on s that slept may lengthen the next spin (zl_wait_adapt):
 * few pipes, and a spin that takes no CPU an I/O thread needs. */
bool zl_socket_may_adapt_spin(const zl_socket *s);
/* How long a spinning receive waits between looks (wait.h). */
uint32_t zl_socket_spin_gap_ns(const zl_socket *s, bool gives_way);
/* Pipes found empty while zl_pipe_keep_reader_awake was set: each one that
 * has data is activated, and (unless only_with_data) the rest sleep. */
void zl_socket_settle_awake_pipes(zl_socket *s, bool only_with_data);

/* Validates a void* from the application. NULL (errno ENOTSOCK) if bad. */
zl_socket *zl_socket_from_handle(void *handle);

/* A connect session that ended on its own (protocol error, no reconnect)
 * asks to be forgotten. True when its endpoint entry was still listed and
 * is now removed: the caller then sends the TERM that frees it, which
 * zlink_close or zlink_disconnect would otherwise send. */
bool zl_socket_forget_object(zl_socket *s, struct zl_io_object *object);

/* Reaper: true once a closed socket has nothing left and can be freed. */
bool zl_socket_reapable(zl_socket *s);
void zl_socket_destroy(zl_socket *s);

#endif
