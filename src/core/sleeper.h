/* sleeper.h — what an application thread sleeps on while it waits for
 * sockets (a blocking send or receive, zlink_poll): one OS handle per
 * sleep, whatever the number of sockets, raised at most once per sleep.
 *
 * A sleeping thread points each socket it waits for at a sleeper
 * (zl_socket_set_sleeper); a command that reaches such a socket's mailbox
 * raises the sleeper. A socket nobody sleeps on costs its signalling
 * thread no system call, and the thread that takes the command in none
 * either.
 *
 * Each socket has its own sleeper, which is also its ZLINK_FD: a wait on
 * one socket sleeps on it. A zlink_poll over several sleeps on one sleeper
 * from their context's pool. Pooled sleepers are freed with the context,
 * after the last socket and I/O thread: a signalling thread that read a
 * socket's sleeper just before it was put back still raises live memory
 * (at worst a spurious wakeup for its next user). A socket's own sleeper
 * is only ever raised for that socket, so it goes with it. */
#ifndef ZL_SLEEPER_H
#define ZL_SLEEPER_H

#include <stdbool.h>
#include <uv.h>

#include "atomics.h"
#include "backend.h"

typedef struct zl_sleeper {
    zl_signaler signaler;
    /* Set by the first raise since the last settle: later raises make no
     * system call. True means a raise landed or is on its way. */
    atomic_bool raised;
    struct zl_sleeper *next; /* in the pool's free list */
    struct zl_sleeper *all;  /* every sleeper of the pool, for destroy */
} zl_sleeper;

typedef struct zl_sleeper_pool {
    uv_mutex_t lock;
    zl_sleeper *free_list;
    zl_sleeper *all;
} zl_sleeper_pool;

/* One sleeper (a socket's own): 0 or -errno. */
int zl_sleeper_init(zl_sleeper *w);
void zl_sleeper_close(zl_sleeper *w);

void zl_sleeper_pool_init(zl_sleeper_pool *pool);
/* Once no thread can raise any of its sleepers any more. */
void zl_sleeper_pool_destroy(zl_sleeper_pool *pool);

/* A sleeper for one sleep; NULL with errno (EMFILE, ENOMEM). */
zl_sleeper *zl_sleeper_take(zl_sleeper_pool *pool);
/* Back to the pool once the sleeping thread unpointed its sockets. */
void zl_sleeper_give(zl_sleeper_pool *pool, zl_sleeper *w);

/* Any thread: wakes the sleeper's thread, or its next sleep. */
void zl_sleeper_raise(zl_sleeper *w);
/* Any thread: makes the handle readable whether or not it is already, as
 * ZLINK_FD's edge-triggered contract wants (libzmq's). */
void zl_sleeper_signal(zl_sleeper *w);
/* The owner saw the handle readable (zl_os_poll, zl_sleeper_wait):
 * consumes the raise, so that the next sleep sleeps. */
void zl_sleeper_woken(zl_sleeper *w);
/* 0 once raised, -EAGAIN after timeout_ms (-1: forever), or -errno. */
int zl_sleeper_wait(zl_sleeper *w, int timeout_ms);

static inline zl_os_socket zl_sleeper_fd(const zl_sleeper *w)
{
    return zl_signaler_fd(&w->signaler);
}

#endif
