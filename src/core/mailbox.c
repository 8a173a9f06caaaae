/* mailbox.c — the MPSC command queue: a growable ring under one mutex, and
 * one signal per empty→non-empty transition. */
#include "mailbox.h"

#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

#include "backend.h"
#include "fast_tls.h"
#include "pipe.h"

/* A quiet socket holds a few commands at a time (an activation, a bind);
 * a busy one doubles the ring once or twice and keeps it. Starting at 64
 * slots cost every socket 2.5 KiB, a fifth of an idle DEALER connection.
 * A power of two, so that wrapping is a mask. */
#define MAILBOX_INITIAL_CAPACITY 8

int zl_mailbox_init(zl_mailbox *mb, zl_mailbox_signal_fn signal, void *arg)
{
    mb->items = malloc(MAILBOX_INITIAL_CAPACITY * sizeof *mb->items);
    if (mb->items == NULL)
        return -1;
    if (uv_mutex_init(&mb->lock) != 0) {
        free(mb->items);
        mb->items = NULL;
        return -1;
    }
    mb->head = 0;
    mb->count = 0;
    mb->capacity = MAILBOX_INITIAL_CAPACITY;
    mb->signal = signal;
    mb->signal_arg = arg;
    atomic_init(&mb->signals_in_flight, 0);
    atomic_init(&mb->sleeper_cpu, -1);
    return 0;
}

/* Signals held back during an I/O thread's turn (zl_mailbox_hold_signals).
 * Beyond HELD_MAX in one turn, signals go out at once. */
typedef struct held_signal {
    zl_mailbox *mb;
    zl_mailbox_signal_fn signal;
    void *arg;
} held_signal;

#define HELD_MAX 32
#define CPU_NOT_LOOKED_UP (-2)

static ZL_THREAD_LOCAL bool holding ZL_FAST_TLS;
static ZL_THREAD_LOCAL int holding_cpu ZL_FAST_TLS;
static ZL_THREAD_LOCAL int held_count;
static ZL_THREAD_LOCAL held_signal held[HELD_MAX];

void zl_mailbox_hold_signals(void)
{
    holding = true;
    /* Looked up at the first signal of the turn: the thread may have moved
     * while it waited for completions. */
    holding_cpu = CPU_NOT_LOOKED_UP;
}

void zl_mailbox_release_signals(void)
{
    holding = false;
    for (int i = 0; i < held_count; i++) {
        held[i].signal(held[i].arg);
        atomic_fetch_sub_explicit(&held[i].mb->signals_in_flight, 1,
                                  memory_order_release);
    }
    held_count = 0;
}

/* True when the signal for mb is held until the turn ends. */
static bool hold(zl_mailbox *mb, zl_mailbox_signal_fn signal, void *arg)
{
    if (!holding || held_count == HELD_MAX)
        return false;
    int sleeper = atomic_load_explicit(&mb->sleeper_cpu, memory_order_relaxed);
    if (sleeper < 0)
        return false;
    if (holding_cpu == CPU_NOT_LOOKED_UP)
        holding_cpu = zl_thread_cpu();
    if (sleeper != holding_cpu)
        return false;
    held[held_count++] = (held_signal){mb, signal, arg};
    return true;
}

void zl_mailbox_set_sleeper_cpu(zl_mailbox *mb, int cpu)
{
    atomic_store_explicit(&mb->sleeper_cpu, cpu, memory_order_relaxed);
}

/* Waits out signals that senders decided on under the lock but deliver
 * after it. They are a syscall long. */
static void wait_for_signals(zl_mailbox *mb)
{
    while (atomic_load_explicit(&mb->signals_in_flight, memory_order_acquire) >
           0)
        uv_sleep(0);
}

void zl_mailbox_destroy(zl_mailbox *mb)
{
    wait_for_signals(mb);
    /* Nobody sends any more, so the queue can be walked without the lock. */
    for (size_t i = 0; i < mb->count; i++) {
        zl_cmd *cmd = &mb->items[(mb->head + i) & (mb->capacity - 1)];
        if (cmd->pipe != NULL)
            zl_pipe_unref(cmd->pipe);
    }
    free(mb->items);
    mb->items = NULL;
    mb->count = 0;
    uv_mutex_destroy(&mb->lock);
}

/* Doubles the ring, unwrapping it so the oldest command is first again. */
static void mailbox_grow(zl_mailbox *mb)
{
    size_t capacity = mb->capacity * 2;
    zl_cmd *items = malloc(capacity * sizeof *items);
    if (items == NULL) {
        /* send has no way to fail: a lost command (a PIPE_TERM, a TERM_ACK)
         * would hang a shutdown forever, which is worse than stopping. */
        fprintf(stderr, "zlink: out of memory in mailbox\n");
        abort();
    }
    for (size_t i = 0; i < mb->count; i++)
        items[i] = mb->items[(mb->head + i) & (mb->capacity - 1)];
    free(mb->items);
    mb->items = items;
    mb->head = 0;
    mb->capacity = capacity;
}

void zl_mailbox_send(zl_mailbox *mb, const zl_cmd *cmd)
{
    uv_mutex_lock(&mb->lock);
    if (mb->count == mb->capacity)
        mailbox_grow(mb);
    mb->items[(mb->head + mb->count) & (mb->capacity - 1)] = *cmd;
    mb->count++;
    /* Only the push into an empty queue signals: the receiver drains until
     * empty, so it cannot miss the commands that follow. The signal is
     * chosen under the lock but delivered after it: a woken owner that
     * reaches for the lock while we still hold it costs a futex wait and a
     * second wakeup, per message on a sleeping reader. The in-flight count
     * lets set_signal and destroy wait for such a signal to finish. */
    zl_mailbox_signal_fn signal = NULL;
    void *signal_arg = NULL;
    if (mb->count == 1 && mb->signal != NULL) {
        signal = mb->signal;
        signal_arg = mb->signal_arg;
        atomic_fetch_add_explicit(&mb->signals_in_flight, 1,
                                  memory_order_relaxed);
    }
    uv_mutex_unlock(&mb->lock);
    if (signal && !hold(mb, signal, signal_arg)) {
        signal(signal_arg);
        atomic_fetch_sub_explicit(&mb->signals_in_flight, 1,
                                  memory_order_release);
    }
}

bool zl_mailbox_recv(zl_mailbox *mb, zl_cmd *out)
{
    uv_mutex_lock(&mb->lock);
    bool found = mb->count > 0;
    if (found) {
        *out = mb->items[mb->head];
        mb->head = (mb->head + 1) & (mb->capacity - 1);
        mb->count--;
    }
    uv_mutex_unlock(&mb->lock);
    return found;
}

void zl_mailbox_set_signal(zl_mailbox *mb, zl_mailbox_signal_fn signal,
                           void *arg)
{
    uv_mutex_lock(&mb->lock);
    mb->signal = signal;
    mb->signal_arg = arg;
    /* Commands queued before the swap were signalled to the old owner, who
     * may never drain them; the new one must hear about them. */
    if (mb->count > 0 && signal != NULL)
        signal(arg);
    uv_mutex_unlock(&mb->lock);
    /* A sender may still be delivering to the old callback. */
    wait_for_signals(mb);
}
