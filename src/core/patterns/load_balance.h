/* load_balance.h — round-robin send over the pipes that have room
 * (libzmq's lb_t). */
#ifndef ZL_LOAD_BALANCE_H
#define ZL_LOAD_BALANCE_H

#include <stdbool.h>
#include <stddef.h>

#include "pipe.h"
#include "zlink.h"

/* pipes[0, active) had room when last tried; pipes[active, count) were full
 * and wait for zl_load_balance_activate. Each pipe keeps its position in its
 * user_flags: user_index belongs to the fair queue, which DEALER uses on
 * the same pipes. */
typedef struct zl_load_balance {
    zl_pipe **pipes;
    size_t count, active, capacity;
    size_t current; /* the next active pipe to send to */

    /* A multipart message goes to one pipe, from its first part to its
     * last. */
    bool more;
    zl_pipe *sending;
    /* That pipe went away mid-message: its remaining parts are dropped. */
    bool dropping;
} zl_load_balance;

void zl_load_balance_init(zl_load_balance *lb);
void zl_load_balance_destroy(zl_load_balance *lb);

/* Adds an active pipe. -1 with errno ENOMEM. */
int zl_load_balance_attach(zl_load_balance *lb, zl_pipe *p);
bool zl_load_balance_contains(const zl_load_balance *lb, const zl_pipe *p);
/* Forgets p (a pattern's pipe_terminated). Does nothing if p is absent. */
void zl_load_balance_remove(zl_load_balance *lb, zl_pipe *p);
/* p has room again. Spurious calls are harmless. */
void zl_load_balance_activate(zl_load_balance *lb, zl_pipe *p);

/* Sends one part. On success msg is left empty. -1 with errno EAGAIN and
 * msg untouched when no pipe has room for a new message. */
int zl_load_balance_send(zl_load_balance *lb, zlink_msg_t *msg);
bool zl_load_balance_has_out(zl_load_balance *lb);
/* The pipe the message in progress goes to, once its first part is sent;
 * NULL between messages (REQ remembers it to take the reply from it). */
static inline zl_pipe *zl_load_balance_sending(const zl_load_balance *lb)
{
    return lb->more ? lb->sending : NULL;
}

#endif
