/* mailbox.h — commands between threads: an MPSC queue plus one wakeup per
 * empty→non-empty transition (DESIGN.md §5). */
#ifndef ZL_MAILBOX_H
#define ZL_MAILBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "atomics.h"

struct zl_pipe;

typedef enum zl_cmd_type {
    ZL_CMD_ACTIVATE_READ,  /* pipe has messages again (its reader slept) */
    ZL_CMD_ACTIVATE_WRITE, /* pipe dropped under its low-water mark */
    ZL_CMD_PIPE_TERM,      /* the peer end wrote its delimiter */
    ZL_CMD_ATTACH_PIPE,    /* a session offers a new pipe to its socket */
    ZL_CMD_PLUG,           /* start an I/O object on its thread */
    ZL_CMD_TERM,           /* stop an I/O object (close, unbind, disconnect) */
    ZL_CMD_TERM_ACK,       /* an I/O object of this socket is gone */
    ZL_CMD_STOP,           /* stop an I/O thread */
    ZL_CMD_CALL,           /* run fn(target, arg) on the receiving thread */
    ZL_CMD_HICCUP,         /* the connection behind a pipe is being re-made */
    ZL_CMD_RECV_PORT_OPEN, /* a receive may watch the connection now */
    ZL_CMD_PEER_HWM        /* the peer end's owner takes arg messages now */
} zl_cmd_type;

typedef struct zl_cmd {
    zl_cmd_type type;
    void *target;         /* the receiving object (socket, session, …) */
    struct zl_pipe *pipe; /* holds a reference while queued, or NULL */
    void (*fn)(void *target, intptr_t arg);
    intptr_t arg;
} zl_cmd;

/* Called from the sending thread, just after it released the mailbox's
 * lock: it must only wake the owner (loop wake, condvar, semaphore), never
 * call back into this mailbox. */
typedef void (*zl_mailbox_signal_fn)(void *arg);

typedef struct zl_mailbox {
    uv_mutex_t lock;
    zl_cmd *items;
    size_t head, count, capacity;
    zl_mailbox_signal_fn signal;
    void *signal_arg;
    atomic_int signals_in_flight; /* chosen under the lock, not yet done */
    /* The CPU the owner sleeps on until signalled, or -1. */
    atomic_int sleeper_cpu;
} zl_mailbox;

int zl_mailbox_init(zl_mailbox *mb, zl_mailbox_signal_fn signal, void *arg);
/* Releases the pipe references of commands still queued. */
void zl_mailbox_destroy(zl_mailbox *mb);
/* Thread-safe. Takes over cmd->pipe's reference. Signals only when the
 * queue was empty. */
void zl_mailbox_send(zl_mailbox *mb, const zl_cmd *cmd);
/* Pops one command; false when empty. Owner thread only. */
bool zl_mailbox_recv(zl_mailbox *mb, zl_cmd *out);
/* Redirects future signals (a closed socket hands its mailbox to the
 * reaper). Signals at once if commands are already queued. Once it returns,
 * the old callback is never called again. */
void zl_mailbox_set_signal(zl_mailbox *mb, zl_mailbox_signal_fn signal,
                           void *arg);

/* The owner is about to sleep until a signal comes, on cpu; -1 once it is
 * awake. Only a hint, for zl_mailbox_hold_signals. */
void zl_mailbox_set_sleeper_cpu(zl_mailbox *mb, int cpu);

/* An I/O thread's turn. Between these two calls, a signal the calling
 * thread owes a mailbox whose owner sleeps on this thread's CPU is held
 * back, and release delivers it. Woken at once, that owner would only
 * preempt this thread, on the CPU they share, once per message: at 64 KiB
 * and 256 KiB over tcp that was one switch each way per message or four.
 * Held, it wakes once the turn's completions are done, and takes all the
 * messages they brought. Until then the mailbox counts the signal as in
 * flight, so set_signal and destroy wait for it as for any other. */
void zl_mailbox_hold_signals(void);
void zl_mailbox_release_signals(void);

#endif
