/* accept_backoff.h — how a listener waits after an accept that failed for
 * want of fds or memory, instead of accepting again at once: shared by the
 * socket's own listener and the ws port that several sockets bind. */
#ifndef ZL_ACCEPT_BACKOFF_H
#define ZL_ACCEPT_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

typedef struct zl_accept_backoff {
    zl_timer timer;      /* the next accept, once the wait is over */
    uint32_t backoff_ms; /* 0 while accepts succeed */
} zl_accept_backoff;

/* retry(timer) runs when a wait is over; timer->data is data. */
void zl_accept_backoff_init(zl_accept_backoff *b, zl_timer_cb retry,
                            void *data);
/* After an accept completed with status: true when the next accept must
 * wait (the timer is armed then), false when it may start at once. */
bool zl_accept_backoff_after(zl_accept_backoff *b, zl_loop *loop, int status);
/* True while a wait is under way: no accept is pending then. */
bool zl_accept_backoff_waiting(const zl_accept_backoff *b);
void zl_accept_backoff_stop(zl_accept_backoff *b, zl_loop *loop);

#endif
