/* socket.c — zlink_socket and the calls made on it: options, bind/connect,
 * send/recv with blocking and timeouts, and the commands other threads send
 * to the socket. */
#include "socket.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "direct_send.h"
#include "monitor.h"
#include "msg.h"
#include "noinline.h"
#include "pipe.h"
#include "poller.h"
#include "session.h"
#include "sleeper.h"
#include "transport/address.h"
#include "transport/inproc.h"
#include "transport/listener.h"
#include "transport/socks.h"
#include "transport/stream.h"
#include "wait.h"
#if defined(ZLINK_WITH_WS)
#include "transport/ws_listener.h"
#include "transport/ws_stream.h"
#endif

zl_socket *zl_socket_from_handle(void *handle)
{
    zl_socket *s = handle;
    if (!s || s->magic != ZL_SOCKET_MAGIC) {
        errno = ENOTSOCK;
        return NULL;
    }
    return s;
}

/* A command reached the mailbox. Only a thread that sleeps is woken, with
 * a system call: its sleeper, the application's ZLINK_FD once it took it,
 * its pollers. An owner that is awake finds the flag. */
static void signal_socket(void *arg)
{
    zl_socket *s = arg;
    atomic_store_explicit(&s->commands_pending, true, memory_order_relaxed);
    /* Pairs with zl_socket_sleepers_set: either the sleeper sees the flag,
     * or this sees the sleeper. */
    atomic_thread_fence(memory_order_seq_cst);
    zl_sleeper *w = atomic_load_explicit(&s->sleeper, memory_order_acquire);
    if (atomic_load_explicit(&s->fd_exported, memory_order_relaxed)) {
        zl_sleeper_signal(&s->own_sleeper);
        if (w == &s->own_sleeper)
            w = NULL; /* raised just now */
    }
    if (w)
        zl_sleeper_raise(w);
    zl_poller_notify(s);
}

void zl_socket_set_sleeper(zl_socket *s, zl_sleeper *w)
{
    atomic_store_explicit(&s->sleeper, w, memory_order_release);
}

void zl_socket_sleepers_set(void)
{
    atomic_thread_fence(memory_order_seq_cst);
}

bool zl_socket_commands_pending(const zl_socket *s)
{
    return atomic_load_explicit(&s->commands_pending, memory_order_relaxed);
}

void zl_socket_wake(zl_socket *s)
{
    signal_socket(s);
}

void *zlink_socket(void *ctx_handle, int type)
{
    zl_ctx *ctx = ctx_handle;
    if (!ctx || ctx->magic != ZL_CTX_MAGIC) {
        errno = EFAULT;
        return NULL;
    }
    const zl_pattern_ops *ops = zl_pattern_for_type(type);
    if (!ops) {
        errno = EINVAL;
        return NULL;
    }
    zl_socket *s = calloc(1, sizeof *s);
    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    s->pattern = calloc(1, ops->state_size ? ops->state_size : 1);
    if (!s->pattern || zl_sleeper_init(&s->own_sleeper) != 0) {
        free(s->pattern);
        free(s);
        errno = EMFILE;
        return NULL;
    }
    atomic_init(&s->commands_pending, false);
    atomic_init(&s->fd_exported, false);
    atomic_init(&s->sleeper, NULL);
    if (zl_mailbox_init(&s->mailbox, signal_socket, s) != 0) {
        zl_sleeper_close(&s->own_sleeper);
        free(s->pattern);
        free(s);
        errno = ENOMEM;
        return NULL;
    }
    s->magic = ZL_SOCKET_MAGIC;
    s->ctx = ctx;
    s->ops = ops;
    zl_options_init(&s->options, type);
    uv_mutex_init(&s->monitor_lock);
    zl_poll_links_init(&s->pollers);
    atomic_init(&s->io_objects, 0);
    if (ops->init)
        ops->init(s);
    if (zl_ctx_add_socket(ctx, s) != 0) {
        int err = errno;
        zl_socket_destroy(s);
        errno = err;
        return NULL;
    }
    return s;
}

/* ---- pipes ---- */

/* PROBE_ROUTER: an empty message is the first a new peer gets, so that a
 * ROUTER there learns of us before we send anything (libzmq's DEALER,
 * ROUTER and REQ do this at attach). */
static void probe_router(zl_socket *s, zl_pipe *p)
{
    if (!zl_options_probes_router(&s->options) || p->probe_sent)
        return;
    zlink_msg_t probe;
    zlink_msg_init(&probe);
    if (zl_pipe_write(p, &probe))
        zl_pipe_flush(p);
    else
        zlink_msg_close(&probe);
}

void zl_socket_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    if (s->pipe_count == s->pipe_capacity) {
        size_t cap = s->pipe_capacity ? s->pipe_capacity * 2 : 8;
        zl_pipe **grown = realloc(s->pipes, cap * sizeof *grown);
        if (!grown) {
            zl_pipe_terminate(p);
            zl_pipe_release(p);
            return;
        }
        s->pipes = grown;
        s->pipe_capacity = cap;
    }
    p->owner_index = s->pipe_count;
    s->pipes[s->pipe_count++] = p;
    zl_socket_hwms_for_new_pipe(s, p);
    probe_router(s, p);
    s->ops->attach_pipe(s, p, locally_initiated);
}

static bool is_attached(const zl_socket *s, const zl_pipe *p)
{
    return p->owner_index < s->pipe_count && s->pipes[p->owner_index] == p;
}

void zl_socket_pipe_done(zl_socket *s, zl_pipe *p)
{
    if (!is_attached(s, p))
        return;
    s->ops->pipe_terminated(s, p);
    zl_pipe *last = s->pipes[--s->pipe_count];
    s->pipes[p->owner_index] = last;
    last->owner_index = p->owner_index;
    for (size_t i = 0; i < s->endpoint_count; i++)
        if (s->endpoints[i].pipe == p)
            s->endpoints[i].pipe = NULL;
    if (!p->terminated)
        zl_pipe_terminate(p);
    zl_pipe_release(p);
}

/* ---- commands ---- */

void zl_socket_handle_command(zl_socket *s, const zl_cmd *cmd)
{
    zl_pipe *p = cmd->pipe;
    switch (cmd->type) {
    case ZL_CMD_ATTACH_PIPE:
        if (s->closed) {
            zl_pipe_terminate(p);
            zl_pipe_release(p);
        } else {
            zl_socket_attach_pipe(s, p, cmd->arg != 0);
        }
        break;
    case ZL_CMD_ACTIVATE_READ:
        if (zl_pipe_cmd_live(p) && is_attached(s, p))
            s->ops->read_activated(s, p);
        break;
    case ZL_CMD_ACTIVATE_WRITE:
        if (zl_pipe_cmd_live(p) && is_attached(s, p))
            s->ops->write_activated(s, p);
        break;
    case ZL_CMD_PIPE_TERM:
        /* The peer wrote its delimiter. Answer with ours so it can finish;
         * the pattern reads up to the delimiter and then lets go. */
        if (zl_pipe_cmd_live(p) && is_attached(s, p)) {
            if (!p->terminated)
                zl_pipe_terminate(p);
            s->ops->read_activated(s, p);
        }
        break;
    case ZL_CMD_RECV_PORT_OPEN:
        break; /* the wake was the point: the receive looks at the port */
    case ZL_CMD_PEER_HWM:
        if (zl_pipe_cmd_live(p) && is_attached(s, p))
            zl_socket_peer_hwm_changed(s, p, (int)cmd->arg);
        break;
    case ZL_CMD_HICCUP:
        if (zl_pipe_cmd_live(p) && is_attached(s, p) && s->ops->hiccuped)
            s->ops->hiccuped(s, p);
        break;
    case ZL_CMD_TERM_ACK:
        atomic_fetch_sub(&s->io_objects, 1);
        break;
    case ZL_CMD_CALL:
        cmd->fn(cmd->target, cmd->arg);
        break;
    default:
        break;
    }
    if (p)
        zl_pipe_unref(p);
}

static int drain_mailbox(zl_socket *s)
{
    int handled = 0;
    zl_cmd cmd;
    while (zl_mailbox_recv(&s->mailbox, &cmd)) {
        zl_socket_handle_command(s, &cmd);
        handled++;
    }
    return handled;
}

/* Drains the mailbox. Once the application took ZLINK_FD, its signaler
 * follows the mailbox: it fires when the mailbox goes from empty to
 * non-empty, so it needs resetting only after commands were signalled.
 * Each reset is followed by another drain: a command queued between the
 * last drain and the reset had its signal consumed, so it must be taken
 * now. */
static int drain_commands(zl_socket *s)
{
    /* Lowered before draining: a command queued after the drain raises
     * it again. */
    bool signalled = atomic_exchange_explicit(&s->commands_pending, false,
                                              memory_order_acq_rel);
    int total = drain_mailbox(s);
    if ((total == 0 && !signalled) ||
        !atomic_load_explicit(&s->fd_exported, memory_order_relaxed))
        return total;
    for (;;) {
        zl_sleeper_woken(&s->own_sleeper);
        int n = drain_mailbox(s);
        total += n;
        if (n == 0)
            return total;
    }
}

int zl_socket_sleep_for_command(zl_socket *s, int wait_ms)
{
    zl_sleeper *w = &s->own_sleeper;
    int rc = 0; /* a command came meanwhile: as if woken */
    zl_socket_set_sleeper(s, w);
    zl_socket_sleepers_set();
    if (!zl_socket_commands_pending(s)) {
        zl_mailbox_set_sleeper_cpu(&s->mailbox, zl_thread_cpu());
        rc = zl_sleeper_wait(w, wait_ms);
        zl_mailbox_set_sleeper_cpu(&s->mailbox, -1);
        if (rc == 0)
            zl_sleeper_woken(w);
    }
    zl_socket_set_sleeper(s, NULL);
    return rc;
}

int zl_socket_process_commands(zl_socket *s, int wait_ms)
{
    if (zl_ctx_terminating(s->ctx)) {
        errno = ETERM;
        return -1;
    }
    if (drain_commands(s) > 0 || wait_ms == 0)
        return 0;
    int rc = zl_socket_sleep_for_command(s, wait_ms);
    if (zl_ctx_terminating(s->ctx)) {
        errno = ETERM;
        return -1;
    }
    if (rc == -EAGAIN) {
        errno = EAGAIN;
        return -1;
    }
    if (rc != 0) {
        errno = -rc;
        return -1;
    }
    drain_commands(s);
    return 0;
}

/* ---- send and receive ---- */

/* Milliseconds left before deadline, or -1 for no deadline. */
static int remaining_ms(uint64_t deadline)
{
    if (deadline == 0)
        return -1;
    uint64_t now = uv_hrtime() / 1000000u;
    return now >= deadline ? 0 : (int)(deadline - now);
}

/* A blocking receive retries for a few microseconds before it sleeps
 * (wait.h), with its pipes kept awake so that their writers send no
 * ACTIVATE_READ meanwhile. A receive whose peers are I/O threads' sessions
 * (tcp, ipc) spins only on a CPU no I/O thread is on, and gives way to
 * other threads as it goes: a spin on the I/O thread's CPU takes the CPU
 * that thread needs to bring the message. Sockets with many pipes do not
 * spin: watching them all costs more than it saves. */
#define SPIN_MAX_PIPES 8

bool zl_socket_may_spin_on(const zl_socket *s)
{
    return s->pipe_count > 0 && s->pipe_count <= SPIN_MAX_PIPES;
}

bool zl_socket_peers_are_threads(const zl_socket *s)
{
    for (size_t i = 0; i < s->pipe_count; i++)
        if (s->pipes[i]->peer_is_session)
            return false;
    return true;
}

bool zl_socket_spin_is_clear(const zl_socket *s)
{
    return zl_socket_peers_are_threads(s) || !zl_ctx_shares_cpu_with_io(s->ctx);
}

bool zl_socket_may_adapt_spin(const zl_socket *s)
{
    return zl_socket_may_spin_on(s) && zl_socket_spin_is_clear(s);
}

static bool may_spin(zl_socket *s)
{
    if (!zl_socket_may_spin_on(s) || zl_ctx_spin_budget_ns(s->ctx) == 0)
        return false;
    if (zl_wait_skipping(&s->waiter)) {
        zl_wait_skip_one(&s->waiter);
        return false;
    }
    return true;
}

/* The pattern took every pipe it found empty for asleep and waits for its
 * ACTIVATE_READ. A pipe left awake gets none, so it is activated here once
 * it has data, or (unless only_with_data) put to sleep for real. */
void zl_socket_settle_awake_pipes(zl_socket *s, bool only_with_data)
{
    for (size_t i = 0; i < s->pipe_count; i++) {
        zl_pipe *p = s->pipes[i];
        if (!p->left_awake)
            continue;
        bool ready =
            only_with_data ? zl_pipe_has_published(p) : zl_pipe_check_read(p);
        if (!ready && only_with_data)
            continue;
        p->left_awake = false;
        if (ready)
            s->ops->read_activated(s, p);
        /* read_activated may drop pipes: start again, it is a short list. */
        i = (size_t)-1;
    }
}

/* The time between two looks of a spinning receive: none, or the
 * streaming gap (wait.h). Only for application threads' pipes: an I/O
 * thread publishes a whole read's messages at once, and a receiver that
 * looked later only left it waiting on a fuller pipe (bench/NOTES.md,
 * "Streaming gap"). */
uint32_t zl_socket_spin_gap_ns(const zl_socket *s, bool gives_way)
{
    return s->streaming && !gives_way ? ZL_WAIT_STREAMING_GAP_NS : 0;
}

/* A receive's look during its spin (zl_wait_spin). */
typedef struct spin_look {
    zl_socket *s;
    int (*op)(zl_socket *, zlink_msg_t *);
    zlink_msg_t *msg;
} spin_look;

static int look_for_message(void *arg)
{
    spin_look *l = arg;
    zl_socket *s = l->s;
    if (atomic_load_explicit(&s->commands_pending, memory_order_relaxed) &&
        zl_socket_process_commands(s, 0) != 0)
        return -1;
    zl_socket_settle_awake_pipes(s, true);
    if (l->op(s, l->msg) == 0)
        return 1;
    return errno == EAGAIN ? 0 : -1;
}

/* Moved onto an I/O thread's CPU: sleep, but not as a miss. */
static bool io_cpu_is_clear(void *arg)
{
    const spin_look *l = arg;
    return !zl_ctx_shares_cpu_with_io(l->s->ctx);
}

/* 0 with a message, or -1 with errno (EAGAIN: nothing came in time).
 * gives_way: some peer is an I/O thread's session (wait.h). */
static int spin_receive(zl_socket *s, int (*op)(zl_socket *, zlink_msg_t *),
                        zlink_msg_t *msg, uint64_t started, bool gives_way)
{
    spin_look look = {s, op, msg};
    uint64_t until =
        zl_wait_spin_until(&s->waiter, started, zl_ctx_spin_budget_ns(s->ctx));
    int found =
        zl_wait_spin(&s->waiter, until, zl_socket_spin_gap_ns(s, gives_way),
                     gives_way, look_for_message, io_cpu_is_clear, &look);
    if (found > 0)
        return 0;
    if (found == 0)
        errno = EAGAIN;
    return -1;
}

/* A receive slept and got its message waited ns after it began: if a
 * spin that long would have caught it, the next receive spins (wait.h).
 * Not where the spin would take an I/O thread's CPU: that made tcp round
 * trips slower, not faster. */
static void adapt_spin(zl_socket *s, uint64_t waited)
{
    if (zl_socket_may_adapt_spin(s))
        zl_wait_adapt(&s->waiter, waited, zl_ctx_spin_budget_ns(s->ctx));
}

/* How long a send that a pipe refused for pacing (ZL_EPACED, pipe.h)
 * waits for its ACTIVATE_WRITE: until ZL_PIPE_PACE_WAIT_MS after the first
 * refusal (*pace_deadline), and no longer than the send's own limit (wait,
 * -1 for none). 0 once either has passed: the send then gives up pacing
 * and is retried, so that a timeout is never reported under the HWM. */
static int pace_wait_ms(uint64_t *pace_deadline, int wait)
{
    uint64_t now = uv_hrtime();
    if (*pace_deadline == 0)
        *pace_deadline = now + (uint64_t)ZL_PIPE_PACE_WAIT_MS * 1000000u;
    if (wait == 0 || now >= *pace_deadline) {
        zl_pipe_set_pacing(ZL_PIPE_PACE_GAVE_UP);
        return 0;
    }
    int left = (int)((*pace_deadline - now + 999999u) / 1000000u);
    return wait < 0 || left < wait ? left : wait;
}

static bool would_block(int err)
{
    return err == EAGAIN || err == ZL_EPACED;
}

/* The rest of with_timeout, once the first try found nothing (or left a
 * pipe awake): commands, the spin, settling, then sleeping until the
 * timeout. */
static int retry_or_wait(zl_socket *s, int (*op)(zl_socket *, zlink_msg_t *),
                         zlink_msg_t *msg, int flags, int timeout,
                         bool blocking_receive, bool spin, int rc)
{
    /* Only a receive that found nothing waits; one that found its message
     * came here to settle pipes, and needs no clock. */
    uint64_t started = blocking_receive && rc != 0 ? uv_hrtime() : 0;
    /* Before giving up or sleeping, take in what other threads told us:
     * new pipes (a ROUTER's EHOSTUNREACH may be one of them), room or
     * messages on existing ones. */
    if (rc != 0 && would_block(errno)) {
        rc = zl_socket_process_commands(s, 0);
        if (rc == 0)
            rc = op(s, msg);
    }
    if (rc != 0 && errno == EAGAIN && spin) {
        bool via_io = !zl_socket_peers_are_threads(s);
        if (!via_io || !zl_ctx_shares_cpu_with_io(s->ctx))
            rc = spin_receive(s, op, msg, started, via_io);
    }
    /* Streaming only if its message was waiting: one the spin caught came
     * later. A message's later parts come with its first, so only the
     * first part tells. */
    if (blocking_receive && !s->rcvmore)
        s->streaming = started == 0;
    if (spin) {
        zl_pipe_keep_reader_awake(false);
        if (zl_pipe_any_left_awake()) {
            int saved = errno;
            zl_socket_settle_awake_pipes(s, false);
            errno = saved;
            /* A message that came after the last look was activated just
             * now, or its flush will wake us. */
            if (rc != 0 && errno == EAGAIN)
                rc = op(s, msg);
        }
    }
    if (rc == 0)
        return 0;
    if (!would_block(errno) || (flags & ZLINK_DONTWAIT) || timeout == 0)
        return -1;
    uint64_t deadline =
        timeout > 0 ? uv_hrtime() / 1000000u + (uint64_t)timeout : 0;
    uint64_t pace_deadline = 0;
    for (;;) {
        int wait = remaining_ms(deadline);
        bool paced = errno == ZL_EPACED;
        if (paced) {
            wait = pace_wait_ms(&pace_deadline, wait);
        } else if (wait == 0) {
            errno = EAGAIN;
            return -1;
        }
        if (blocking_receive && !paced) {
            int read = zl_socket_wait_reading_connection(s, msg, wait);
            if (read > 0) {
                adapt_spin(s, uv_hrtime() - started);
                return 0;
            }
            if (read == -EINTR) {
                errno = EINTR;
                return -1;
            }
            if (read == 0)
                wait = 0; /* it waited: take in what woke it */
        }
        /* A paced wait that ends without a command is no failure. */
        if (zl_socket_process_commands(s, wait) != 0 &&
            !(paced && errno == EAGAIN))
            return -1;
        if (op(s, msg) == 0) {
            if (blocking_receive)
                adapt_spin(s, uv_hrtime() - started);
            return 0;
        }
        if (!would_block(errno))
            return -1;
    }
}

/* retry_or_wait, with this thread's pacing (pipe.h) off for a send that
 * does not wait, and back on for the next send after any. Kept out of line
 * so that a try that succeeds at once costs no more than it must. */
static ZL_NOINLINE int wait_for_op(zl_socket *s,
                                   int (*op)(zl_socket *, zlink_msg_t *),
                                   zlink_msg_t *msg, int flags, int timeout,
                                   bool blocking_receive, bool spin, int rc)
{
    if ((flags & ZLINK_DONTWAIT) || timeout == 0)
        zl_pipe_set_pacing(ZL_PIPE_PACE_OFF);
    rc = retry_or_wait(s, op, msg, flags, timeout, blocking_receive, spin, rc);
    zl_pipe_set_pacing(ZL_PIPE_PACE_ON);
    if (rc != 0 && errno == ZL_EPACED)
        errno = EAGAIN; /* not reached; ZL_EPACED stays inside */
    return rc;
}

/* Runs op until it succeeds, fails for a reason other than EAGAIN, or the
 * timeout passes. A blocking receive spins briefly before it sleeps.
 * Inlined into both of its callers: as a call, the receive paid its frame
 * and six argument moves on every message (callgrind, inproc PAIR 64 B: 26
 * instructions a message). */
static ZL_ALWAYS_INLINE int with_timeout(zl_socket *s,
                                         int (*op)(zl_socket *, zlink_msg_t *),
                                         zlink_msg_t *msg, int flags,
                                         int timeout, bool receive)
{
    if (zl_ctx_terminating(s->ctx)) {
        errno = ETERM;
        return -1;
    }
    /* Commands first when there are any: without this, a ROUTER that
     * drops for unknown ids, or a receiver that always finds a message on
     * one pipe, would never learn of new peers or of other pipes' data. */
    if (atomic_load_explicit(&s->commands_pending, memory_order_relaxed) &&
        zl_socket_process_commands(s, 0) != 0)
        return -1;
    bool blocking_receive =
        receive && !(flags & ZLINK_DONTWAIT) && timeout != 0;
    bool spin = blocking_receive && may_spin(s);
    /* The flag is clear between calls: only a spinning receive sets it. */
    if (spin)
        zl_pipe_keep_reader_awake(true);
    int rc = op(s, msg);
    /* A try that found its message at once usually left no pipe awake,
     * and then there is nothing to settle. */
    if (rc == 0 && !(spin && zl_pipe_any_left_awake())) {
        if (receive && !s->rcvmore)
            s->streaming = true;
        if (spin)
            zl_pipe_keep_reader_awake(false);
        return 0;
    }
    if (receive && rc != 0)
        zl_direct_note_pause();
    return wait_for_op(s, op, msg, flags, timeout, blocking_receive, spin, rc);
}

/* A send or receive may have left s no longer ready: the pollers watching
 * it must not keep reporting it (zlink_poller_fd is level-triggered). */
static ZL_NOINLINE void recheck_pollers(zl_socket *s)
{
    int saved = errno;
    zl_poller_recheck(s);
    errno = saved;
}

int zl_socket_send_msg(zl_socket *s, zlink_msg_t *msg, int flags)
{
    if (zl_msg_cof(msg)->kind == ZL_MSG_CLOSED) {
        errno = EFAULT;
        return -1;
    }
    if (flags & ZLINK_SNDMORE)
        zl_msg_set_flags(msg, ZL_MSG_MORE);
    else
        zl_msg_reset_flags(msg, ZL_MSG_MORE);
    int rc =
        with_timeout(s, s->ops->send, msg, flags, s->options.sndtimeo, false);
    if (rc != 0)
        zl_msg_reset_flags(msg, ZL_MSG_MORE);
    if (zl_poller_watching(&s->pollers))
        recheck_pollers(s);
    return rc;
}

int zl_socket_recv_msg(zl_socket *s, zlink_msg_t *msg, int flags)
{
    int rc = s->holding ? zl_socket_take_held(s, msg)
                        : with_timeout(s, s->ops->recv, msg, flags,
                                       s->options.rcvtimeo, true);
    if (rc == 0)
        s->rcvmore = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
    if (zl_poller_watching(&s->pollers))
        recheck_pollers(s);
    return rc;
}

int zlink_msg_send(zlink_msg_t *msg, void *handle, int flags)
{
    zl_socket *s = zl_socket_from_handle(handle);
    if (!s)
        return -1;
    size_t size = zlink_msg_size(msg);
    if (zl_socket_send_msg(s, msg, flags) != 0)
        return -1;
    return size > INT32_MAX ? INT32_MAX : (int)size;
}

int zlink_msg_recv(zlink_msg_t *msg, void *handle, int flags)
{
    zl_socket *s = zl_socket_from_handle(handle);
    if (!s)
        return -1;
    /* As in libzmq, the old content goes first and a failed receive
     * leaves an empty message; receiving in place spares a 128-byte move
     * per message. */
    if (zl_msg_reset(msg) != 0)
        return -1;
    if (zl_socket_recv_msg(s, msg, flags) != 0) {
        int saved = errno;
        zl_msg_reset(msg);
        errno = saved;
        return -1;
    }
    size_t size = zlink_msg_size(msg);
    return size > INT32_MAX ? INT32_MAX : (int)size;
}

static int send_prepared(void *handle, zlink_msg_t *msg, size_t len, int flags)
{
    zl_socket *s = zl_socket_from_handle(handle);
    if (!s || zl_socket_send_msg(s, msg, flags) != 0) {
        int err = errno;
        zlink_msg_close(msg);
        errno = err;
        return -1;
    }
    zlink_msg_close(msg);
    return len > INT32_MAX ? INT32_MAX : (int)len;
}

int zlink_send(void *handle, const void *buf, size_t len, int flags)
{
    zlink_msg_t msg;
    if (!buf && len) {
        errno = EFAULT;
        return -1;
    }
    if (zl_msg_init_buffer(&msg, buf, len) != 0)
        return -1;
    return send_prepared(handle, &msg, len, flags);
}

int zlink_send_const(void *handle, const void *buf, size_t len, int flags)
{
    zlink_msg_t msg;
    if (!buf && len) {
        errno = EFAULT;
        return -1;
    }
    if (zl_msg_init_const(&msg, buf, len) != 0)
        return -1;
    return send_prepared(handle, &msg, len, flags);
}

int zlink_recv(void *handle, void *buf, size_t len, int flags)
{
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    int rc = zlink_msg_recv(&msg, handle, flags);
    if (rc < 0) {
        int err = errno;
        zlink_msg_close(&msg);
        errno = err;
        return -1;
    }
    size_t size = zlink_msg_size(&msg);
    /* Truncated to the caller's buffer; the return says how much there was,
     * as libzmq does. */
    if (size && buf)
        memcpy(buf, zlink_msg_data(&msg), size < len ? size : len);
    zlink_msg_close(&msg);
    return rc;
}

/* ---- options ---- */

int zl_socket_events_of(zl_socket *s, int wanted)
{
    /* The flag spares a poll of a busy socket the mailbox lock. */
    if (atomic_load_explicit(&s->commands_pending, memory_order_relaxed))
        zl_socket_process_commands(s, 0);
    int events = 0;
    if ((wanted & ZLINK_POLLIN) && (s->holding || s->ops->has_in(s)))
        events |= ZLINK_POLLIN;
    if ((wanted & ZLINK_POLLOUT) && s->ops->has_out(s))
        events |= ZLINK_POLLOUT;
    return events;
}

int zl_socket_events(zl_socket *s)
{
    return zl_socket_events_of(s, ZLINK_POLLIN | ZLINK_POLLOUT);
}

int zlink_setsockopt(void *handle, int option, const void *val, size_t len)
{
    zl_socket *s = zl_socket_from_handle(handle);
    if (!s)
        return -1;
    /* As libzmq (zmq_ctx_shutdown(3)): once the context shuts down, every
     * call on its sockets but close is ETERM. */
    if (zl_ctx_terminating(s->ctx)) {
        errno = ETERM;
        return -1;
    }
    if (s->ops->setsockopt) {
        int rc = s->ops->setsockopt(s, option, val, len);
        if (rc == 0 || errno != EINVAL)
            return rc;
    }
    int rc = zl_options_set(&s->options, option, val, len);
    if (rc != 0 && errno == ENOTSUP)
        errno = EINVAL; /* libzmq's answer for an unknown option */
    if (rc == 0 && (option == ZLINK_SNDHWM || option == ZLINK_RCVHWM))
        zl_socket_hwms_changed(s);
    return rc;
}

int zlink_getsockopt(void *handle, int option, void *val, size_t *len)
{
    zl_socket *s = zl_socket_from_handle(handle);
    if (!s)
        return -1;
    if (zl_ctx_terminating(s->ctx)) {
        errno = ETERM;
        return -1;
    }
    switch (option) {
    case ZLINK_RCVMORE:
        return zl_option_put_int(val, len, s->rcvmore);
    case ZLINK_EVENTS:
        return zl_option_put_int(val, len, zl_socket_events(s));
    case ZLINK_FD: {
        if (!val || !len || *len < sizeof(zlink_fd_t)) {
            errno = EINVAL;
            return -1;
        }
        /* From now on the application may sleep on it at any time. It
         * starts quiet (a wait on this socket may have left it raised),
         * and a command that came before, and that the socket has not
         * taken in, shows at once. Either this sees the flag, or
         * signal_socket sees the export. */
        if (!atomic_load_explicit(&s->fd_exported, memory_order_relaxed)) {
            zl_sleeper_woken(&s->own_sleeper);
            atomic_store_explicit(&s->fd_exported, true, memory_order_relaxed);
            atomic_thread_fence(memory_order_seq_cst);
            if (zl_socket_commands_pending(s))
                zl_sleeper_signal(&s->own_sleeper);
        }
        zlink_fd_t fd = (zlink_fd_t)zl_sleeper_fd(&s->own_sleeper);
        memcpy(val, &fd, sizeof fd);
        *len = sizeof fd;
        return 0;
    }
    case ZLINK_LAST_ENDPOINT: {
        size_t n = strlen(s->last_endpoint) + 1;
        if (!val || !len || *len < n) {
            errno = EINVAL;
            return -1;
        }
        memcpy(val, s->last_endpoint, n);
        *len = n;
        return 0;
    }
    default:
        break;
    }
    if (s->ops->getsockopt) {
        int rc = s->ops->getsockopt(s, option, val, len);
        if (rc == 0 || errno != EINVAL)
            return rc;
    }
    int rc = zl_options_get(&s->options, option, val, len);
    if (rc != 0 && errno == ENOTSUP)
        errno = EINVAL;
    return rc;
}

/* ---- endpoints ---- */

static int add_endpoint(zl_socket *s, const char *requested,
                        const char *resolved, zl_io_object *object,
                        zl_pipe *pipe)
{
    if (s->endpoint_count == s->endpoint_capacity) {
        size_t cap = s->endpoint_capacity ? s->endpoint_capacity * 2 : 4;
        zl_endpoint_entry *grown = realloc(s->endpoints, cap * sizeof *grown);
        if (!grown) {
            errno = ENOMEM;
            return -1;
        }
        s->endpoints = grown;
        s->endpoint_capacity = cap;
    }
    zl_endpoint_entry *e = &s->endpoints[s->endpoint_count];
    e->requested = strdup(requested);
    e->endpoint = strdup(resolved);
    e->object = object;
    e->pipe = pipe;
    e->bound = false;
    s->endpoint_count++;
    snprintf(s->last_endpoint, sizeof s->last_endpoint, "%s", resolved);
    return 0;
}

static void remove_endpoint(zl_socket *s, size_t i)
{
    free(s->endpoints[i].requested);
    free(s->endpoints[i].endpoint);
    s->endpoints[i] = s->endpoints[--s->endpoint_count];
}

bool zl_socket_forget_object(zl_socket *s, struct zl_io_object *object)
{
    for (size_t i = 0; i < s->endpoint_count; i++) {
        if (s->endpoints[i].object == object) {
            remove_endpoint(s, i);
            return true;
        }
    }
    return false;
}

/* Starts a bind's listener or a connect's session on its I/O thread. The
 * socket's ZLINK_FD then becomes readable once, as libzmq's does after a
 * bind or connect over a network transport (its socket sends itself a
 * command then): programs written for libzmq, its own test_poll_fd among
 * them, may wait on the FD before they first read ZLINK_EVENTS. */
static void plug(zl_socket *s, zl_io_object *object)
{
    zl_io_thread_send(object->thread, ZL_CMD_PLUG, object);
    zl_socket_wake(s);
}

/* What bind, connect, unbind and disconnect check first: the context still
 * runs (ETERM), the endpoint is "transport://rest" (EINVAL, or
 * EPROTONOSUPPORT for an unknown transport), and the socket type can use
 * the transport (ENOCOMPATPROTO): a STREAM socket's raw bytes need a byte
 * stream, which inproc and ws do not carry. */
static int split_endpoint(zl_socket *s, const char *endpoint,
                          zl_transport *transport, const char **rest)
{
    if (zl_ctx_terminating(s->ctx)) {
        errno = ETERM;
        return -1;
    }
    if (zl_endpoint_split(endpoint, transport, rest) != 0)
        return -1;
    if (s->options.type == ZLINK_STREAM && *transport != ZL_TRANSPORT_TCP &&
        *transport != ZL_TRANSPORT_IPC && *transport != ZL_TRANSPORT_TLS) {
        errno = ENOCOMPATPROTO;
        return -1;
    }
    return 0;
}

int zlink_bind(void *handle, const char *endpoint)
{
    zl_socket *s = zl_socket_from_handle(handle);
    zl_transport transport;
    const char *rest;
    if (!s || split_endpoint(s, endpoint, &transport, &rest) != 0)
        return -1;
    if (transport == ZL_TRANSPORT_INPROC) {
        if (zl_inproc_bind(s, rest) != 0)
            return -1;
        if (add_endpoint(s, endpoint, endpoint, NULL, NULL) != 0)
            return -1;
        s->endpoints[s->endpoint_count - 1].bound = true;
        return 0;
    }
#if defined(ZLINK_WITH_WS)
    if (transport == ZL_TRANSPORT_WS || transport == ZL_TRANSPORT_WSS) {
        zl_listener_object *routed;
        char ws_resolved[300];
        /* wss: the port copies the socket's TLS settings when it opens. */
        if (zl_stream_prepare(&s->options, transport, true) != 0 ||
            zl_ws_bind(s, transport == ZL_TRANSPORT_WSS, rest, ws_resolved,
                       sizeof ws_resolved, &routed) != 0) {
            int err = errno;
            zl_monitor_event(s, ZLINK_EVENT_BIND_FAILED, (uint64_t)err,
                             endpoint);
            errno = err;
            return -1;
        }
        add_endpoint(s, endpoint, ws_resolved, (zl_io_object *)routed, NULL);
        s->endpoints[s->endpoint_count - 1].bound = true;
        zl_monitor_event(s, ZLINK_EVENT_LISTENING, 0, ws_resolved);
        plug(s, (zl_io_object *)routed);
        return 0;
    }
#endif
    zl_addr addr;
    memset(&addr, 0, sizeof addr);
    char tmpdir[300] = "";
    /* With USE_FD the application's socket is bound already: as libzmq,
     * the address given is not looked at. */
    int rc = s->options.use_fd >= 0 ? 0
             : zl_transport_is_tcp(transport)
                 ? zl_tcp_resolve(rest, true, s->options.ipv6, &addr)
                 : zl_ipc_resolve(rest, true, &addr, tmpdir, sizeof tmpdir);
    if (rc != 0 || zl_stream_prepare(&s->options, transport, true) != 0)
        return -1;
    zl_io_thread *thread = zl_ctx_choose_thread(s->ctx, s->options.affinity);
    if (!thread)
        return -1;
    zl_listener_object *listener;
    char resolved[300];
    if (zl_listener_object_create(s, thread, &addr, transport, tmpdir, resolved,
                                  sizeof resolved, &listener) != 0) {
        int err = errno;
        zl_monitor_event(s, ZLINK_EVENT_BIND_FAILED, (uint64_t)err, endpoint);
        errno = err;
        return -1;
    }
    add_endpoint(s, endpoint, resolved, (zl_io_object *)listener, NULL);
    s->endpoints[s->endpoint_count - 1].bound = true;
    zl_monitor_event(s, ZLINK_EVENT_LISTENING, zl_listener_object_fd(listener),
                     resolved);
    plug(s, (zl_io_object *)listener);
    return 0;
}

/* Where a connect goes: an address, or a host name whose session looks
 * it up before each attempt ("host:port" in lookup); and its source.
 * Through a SOCKS proxy, that is the proxy, and peer the "host:port" it
 * is asked to reach. */
typedef struct connect_target {
    zl_addr addr, src;
    bool has_src, is_name;
    char lookup[300];
    char peer[300];
} connect_target;

static int resolve_connect_target(const zl_socket *s, zl_transport transport,
                                  const char *rest, connect_target *t)
{
    memset(t, 0, sizeof *t);
    bool ipv6 = s->options.ipv6;
#if defined(ZLINK_WITH_WS)
    if (transport == ZL_TRANSPORT_WS || transport == ZL_TRANSPORT_WSS) {
        char path[ZL_WS_PATH_MAX];
        if (zl_ws_endpoint_split(rest, t->lookup, sizeof t->lookup, path,
                                 sizeof path) != 0)
            return -1;
        return zl_tcp_connect_target(t->lookup, ipv6, &t->addr, &t->is_name);
    }
#endif
    if (!zl_transport_is_tcp(transport))
        return zl_ipc_resolve(rest, false, &t->addr, NULL, 0);
    const char *semi = strrchr(rest, ';');
    const char *dst = semi ? semi + 1 : rest;
    if (strlen(dst) >= sizeof t->lookup) {
        errno = EINVAL;
        return -1;
    }
    memcpy(t->lookup, dst, strlen(dst) + 1);
    return zl_tcp_resolve_connect(rest, ipv6, &t->addr, &t->is_name, &t->src,
                                  &t->has_src);
}

/* ZLINK_SOCKS_PROXY: the connect goes to the proxy, which is asked to
 * reach the peer's host (unresolved) and port. libzmq does so for tcp;
 * zlink for tls, ws and wss too, whose layers still see the endpoint's
 * host. A proxy or peer SOCKS5 cannot name is EINVAL. */
static int route_through_proxy(const zl_socket *s, connect_target *t)
{
    uint8_t request[ZL_SOCKS_REQUEST_MAX];
    const char *proxy = s->options.socks_proxy;
    if (zl_socks_encode_request(request, sizeof request, t->lookup) < 0 ||
        strlen(proxy) >= sizeof t->lookup) {
        errno = EINVAL;
        return -1;
    }
    memcpy(t->peer, t->lookup, sizeof t->peer);
    memcpy(t->lookup, proxy, strlen(proxy) + 1);
    return zl_tcp_connect_target(t->lookup, s->options.ipv6, &t->addr,
                                 &t->is_name);
}

/* A source of one family cannot reach an address of the other: say so
 * now, where libzmq accepts it and never connects. The address is the
 * one the connect goes to: through a proxy, the proxy's. A name is looked
 * up later, and checked then (session.c). */
static int check_source_family(const connect_target *t)
{
    zl_addr usable;
    if (t->has_src && !t->is_name &&
        zl_tcp_connect_source(&t->src, &t->addr, &usable) != 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int zlink_connect(void *handle, const char *endpoint)
{
    zl_socket *s = zl_socket_from_handle(handle);
    zl_transport transport;
    const char *rest;
    if (!s || split_endpoint(s, endpoint, &transport, &rest) != 0)
        return -1;
    if (transport == ZL_TRANSPORT_INPROC) {
        zl_pipe *ours;
        if (zl_inproc_connect(s, rest, &ours) != 0)
            return -1;
        zl_options_consume_connect_id(&s->options);
        return add_endpoint(s, endpoint, endpoint, NULL, ours);
    }
    connect_target target;
    int rc = resolve_connect_target(s, transport, rest, &target);
    bool socks = s->options.socks_proxy && transport != ZL_TRANSPORT_IPC;
    if (rc == 0 && socks)
        rc = route_through_proxy(s, &target);
    if (rc == 0)
        rc = check_source_family(&target);
    if (rc != 0 || zl_stream_prepare(&s->options, transport, false) != 0)
        return -1;
    if (target.is_name && !zl_ctx_resolver(s->ctx)) {
        errno = ENOMEM;
        return -1;
    }
    zl_io_thread *thread = zl_ctx_choose_thread(s->ctx, s->options.affinity);
    if (!thread)
        return -1;
    size_t pipes_before = s->pipe_count;
    zl_session *session = zl_session_create_connect(
        s, thread, &target.addr, target.is_name ? target.lookup : NULL,
        target.has_src ? &target.src : NULL, socks ? target.peer : NULL,
        endpoint);
    if (!session) {
        errno = ENOMEM;
        return -1;
    }
    /* CONNECT_ROUTING_ID applies to this one connect only. */
    zl_options_consume_connect_id(&s->options);
    /* Unless IMMEDIATE (or ROUTER), the session attached its pipe at once;
     * disconnect ends it at once, as libzmq does. */
    zl_pipe *ours =
        s->pipe_count > pipes_before ? s->pipes[s->pipe_count - 1] : NULL;
    add_endpoint(s, endpoint, endpoint, &session->base, ours);
    plug(s, &session->base);
    return 0;
}

/* A wildcard request (tcp port "*" or "0", ipc path "*"): libzmq unbinds
 * such binds only by the endpoint they resolved to (ZLINK_LAST_ENDPOINT),
 * never by the request, which would name every one of them at once. */
static bool is_wildcard(const char *endpoint)
{
    if (strcmp(endpoint, "ipc://*") == 0)
        return true;
    const char *hostport;
    if (strncmp(endpoint, "tcp://", 6) == 0)
        hostport = endpoint + 6;
    else if (strncmp(endpoint, "tls://", 6) == 0)
        hostport = endpoint + 6;
    else if (strncmp(endpoint, "ws://", 5) == 0)
        hostport = endpoint + 5;
    else if (strncmp(endpoint, "wss://", 6) == 0)
        hostport = endpoint + 6;
    else
        return false;
    /* ws endpoints carry a path after the port. */
    const char *v6_end = hostport[0] == '[' ? strchr(hostport, ']') : NULL;
    const char *slash = strchr(v6_end ? v6_end : hostport, '/');
    size_t len = slash ? (size_t)(slash - hostport) : strlen(hostport);
    return len >= 2 && hostport[len - 2] == ':' &&
           (hostport[len - 1] == '*' || hostport[len - 1] == '0');
}

/* Ends every endpoint of the kind (bound or connected) that endpoint names;
 * false when none does. */
static bool end_matching(zl_socket *s, const char *endpoint, bool bound)
{
    bool found = false;
    for (size_t i = 0; i < s->endpoint_count;) {
        zl_endpoint_entry *e = &s->endpoints[i];
        if (e->bound != bound || (strcmp(e->endpoint, endpoint) != 0 &&
                                  (strcmp(e->requested, endpoint) != 0 ||
                                   is_wildcard(e->requested)))) {
            i++;
            continue;
        }
        found = true;
        if (e->object)
            zl_io_thread_send_term(e->object->thread, e->object,
                                   s->options.linger);
        else if (bound)
            zl_inproc_unbind(s, e->endpoint + strlen("inproc://"));
        /* Nothing more goes to a disconnected peer: what was queued
         * before still leaves within LINGER. */
        if (!bound && e->pipe)
            zl_socket_pipe_done(s, e->pipe);
        remove_endpoint(s, i);
    }
    return found;
}

/* A tcp "host:port" resolved to the "tcp://address:port" form that a bind
 * records, then matched; for_bind also reads "*" and interface names. */
static bool end_resolved(zl_socket *s, zl_transport transport,
                         const char *hostport, bool for_bind, bool bound)
{
    zl_addr addr;
    char resolved[sizeof s->last_endpoint];
    if (zl_tcp_resolve(hostport, for_bind, s->options.ipv6, &addr) != 0 ||
        zl_addr_format(&addr, resolved, sizeof resolved) != 0)
        return false;
    /* zl_addr_format names tcp; a tls endpoint is the same address under
     * its own scheme. */
    if (transport == ZL_TRANSPORT_TLS) {
        static const char tcp[] = "tcp://";
        char named[sizeof s->last_endpoint];
        if (strncmp(resolved, tcp, sizeof tcp - 1) != 0 ||
            snprintf(named, sizeof named, "tls://%s",
                     resolved + sizeof tcp - 1) >= (int)sizeof named)
            return false;
        return end_matching(s, named, bound);
    }
    return end_matching(s, resolved, bound);
}

static int end_endpoint(zl_socket *s, const char *endpoint, bool bound)
{
    /* As libzmq: no endpoint is EINVAL before a shut-down context's ETERM,
     * and a malformed one is EINVAL or EPROTONOSUPPORT, not ENOENT. */
    if (!endpoint) {
        errno = EINVAL;
        return -1;
    }
    zl_transport transport;
    const char *rest;
    if (split_endpoint(s, endpoint, &transport, &rest) != 0)
        return -1;
    zl_socket_process_commands(s, 0);
    /* As libzmq: another spelling of a tcp address ("localhost" for
     * "127.0.0.1") names it once resolved, first as a peer's address, then
     * as a bind's; and so for tls, which has tcp's addresses. */
    if (!end_matching(s, endpoint, bound) &&
        !(zl_transport_is_tcp(transport) &&
          (end_resolved(s, transport, rest, false, bound) ||
           end_resolved(s, transport, rest, true, bound)))) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

int zlink_unbind(void *handle, const char *endpoint)
{
    zl_socket *s = zl_socket_from_handle(handle);
    return s ? end_endpoint(s, endpoint, true) : -1;
}

int zlink_disconnect(void *handle, const char *endpoint)
{
    zl_socket *s = zl_socket_from_handle(handle);
    return s ? end_endpoint(s, endpoint, false) : -1;
}

/* ---- closing ---- */

int zlink_close(void *handle)
{
    zl_socket *s = zl_socket_from_handle(handle);
    if (!s)
        return -1;
    zl_poller_socket_closed(s);
    drain_mailbox(s);
    zl_ctx_remove_socket(s->ctx, s);
    /* The monitor stays until the reaper frees the socket, as libzmq's:
     * the CLOSED of its listeners (and whatever else the closing causes)
     * come before MONITOR_STOPPED. */
    zl_inproc_unbind_all(s);
    while (s->endpoint_count > 0) {
        zl_endpoint_entry *e = &s->endpoints[0];
        if (e->object)
            zl_io_thread_send_term(e->object->thread, e->object,
                                   s->options.linger);
        remove_endpoint(s, 0);
    }
    /* Our delimiters follow whatever is queued, so sessions deliver it
     * within LINGER before they go. */
    while (s->pipe_count > 0)
        zl_socket_pipe_done(s, s->pipes[s->pipe_count - 1]);
    s->closed = true;
    s->magic = ZL_SOCKET_CLOSED_MAGIC;
    zl_ctx_reap(s->ctx, s);
    return 0;
}

bool zl_socket_reapable(zl_socket *s)
{
    return s->closed && s->pipe_count == 0 && atomic_load(&s->io_objects) == 0;
}

void zl_socket_destroy(zl_socket *s)
{
    zl_socket_drop_held(s);
    if (s->ops->destroy)
        s->ops->destroy(s);
    zl_monitor_destroy(s);
    zl_mailbox_destroy(&s->mailbox);
    zl_sleeper_close(&s->own_sleeper);
    uv_mutex_destroy(&s->monitor_lock);
    zl_poll_links_destroy(&s->pollers);
    for (size_t i = 0; i < s->endpoint_count; i++) {
        free(s->endpoints[i].requested);
        free(s->endpoints[i].endpoint);
    }
    free(s->endpoints);
    free(s->pipes);
    free(s->pattern);
    zl_options_destroy(&s->options);
    s->magic = 0;
    free(s);
}
