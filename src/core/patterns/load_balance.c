/* load_balance.c — round-robin send over pipes with room (libzmq's lb_t). */
#include "load_balance.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "msg.h"

static size_t position(const zl_pipe *p)
{
    return (size_t)p->user_flags;
}

static void set_position(zl_pipe *p, size_t i)
{
    p->user_flags = (int)i;
}

void zl_load_balance_init(zl_load_balance *lb)
{
    lb->pipes = NULL;
    lb->count = lb->active = lb->capacity = lb->current = 0;
    lb->more = false;
    lb->sending = NULL;
    lb->dropping = false;
}

void zl_load_balance_destroy(zl_load_balance *lb)
{
    free(lb->pipes);
    lb->pipes = NULL;
    lb->count = lb->active = lb->capacity = 0;
}

static void swap_pipes(zl_load_balance *lb, size_t i, size_t j)
{
    zl_pipe *a = lb->pipes[i];
    zl_pipe *b = lb->pipes[j];
    lb->pipes[i] = b;
    lb->pipes[j] = a;
    set_position(b, i);
    set_position(a, j);
}

bool zl_load_balance_contains(const zl_load_balance *lb, const zl_pipe *p)
{
    return p->user_flags >= 0 && position(p) < lb->count &&
           lb->pipes[position(p)] == p;
}

int zl_load_balance_attach(zl_load_balance *lb, zl_pipe *p)
{
    if (lb->count == lb->capacity) {
        size_t capacity = lb->capacity ? lb->capacity * 2 : 4;
        zl_pipe **pipes = capacity <= (size_t)INT_MAX + 1
                              ? realloc(lb->pipes, capacity * sizeof *pipes)
                              : NULL;
        if (pipes == NULL) {
            errno = ENOMEM;
            return -1;
        }
        lb->pipes = pipes;
        lb->capacity = capacity;
    }
    set_position(p, lb->count);
    lb->pipes[lb->count++] = p;
    swap_pipes(lb, position(p), lb->active);
    lb->active++;
    return 0;
}

/* The pipe at i is full: it leaves the active region. The pipe swapped
 * into i is the next to try, so current stays. */
static void deactivate(zl_load_balance *lb, size_t i)
{
    lb->active--;
    swap_pipes(lb, i, lb->active);
    if (lb->current >= lb->active)
        lb->current = 0;
}

void zl_load_balance_remove(zl_load_balance *lb, zl_pipe *p)
{
    if (!zl_load_balance_contains(lb, p))
        return;
    if (p == lb->sending) {
        lb->dropping = lb->more;
        lb->more = false;
        lb->sending = NULL;
    }

    zl_pipe *current = lb->current < lb->active ? lb->pipes[lb->current] : NULL;
    size_t i = position(p);
    if (i < lb->active) {
        lb->active--;
        swap_pipes(lb, i, lb->active);
        i = lb->active;
    }
    swap_pipes(lb, i, lb->count - 1);
    lb->count--;

    if (current != NULL && current != p)
        lb->current = position(current);
    if (lb->current >= lb->active)
        lb->current = 0;
}

void zl_load_balance_activate(zl_load_balance *lb, zl_pipe *p)
{
    if (!zl_load_balance_contains(lb, p) || position(p) < lb->active)
        return;
    swap_pipes(lb, position(p), lb->active);
    lb->active++;
}

/* The first active pipe with room for a new message, deactivating the full
 * ones on the way; NULL when there is none, with errno EAGAIN, or
 * ZL_EPACED when some pipe paced a send (for_send; pipe.h). Such a pipe is
 * passed over but stays active: it is under the HWM, and the send's retry
 * may take it after all. has_out asks without for_send: room is the HWM's,
 * as POLLOUT is in libzmq. */
static zl_pipe_room room_in(zl_pipe *p, bool for_send)
{
    if (for_send)
        return zl_pipe_check_send(p);
    return zl_pipe_check_write(p) ? ZL_PIPE_ROOM : ZL_PIPE_FULL;
}

static zl_pipe *pick_pipe(zl_load_balance *lb, bool for_send)
{
    size_t paced = 0;
    while (lb->active > paced) {
        zl_pipe *p = lb->pipes[lb->current];
        zl_pipe_room room = room_in(p, for_send);
        if (room == ZL_PIPE_ROOM)
            return p;
        if (room == ZL_PIPE_FULL) {
            deactivate(lb, lb->current);
        } else {
            paced++;
            lb->current = (lb->current + 1) % lb->active;
        }
    }
    errno = paced ? ZL_EPACED : EAGAIN;
    return NULL;
}

static void drop(zlink_msg_t *msg)
{
    zlink_msg_close(msg);
    zlink_msg_init(msg);
}

int zl_load_balance_send(zl_load_balance *lb, zlink_msg_t *msg)
{
    bool last = !(zl_msg_flags(msg) & ZL_MSG_MORE);
    if (lb->dropping) {
        lb->dropping = !last;
        drop(msg);
        return 0;
    }
    if (!lb->more) {
        lb->sending = pick_pipe(lb, true);
        if (lb->sending == NULL)
            return -1;
    }

    zl_pipe *p = lb->sending;
    /* Flushes the last part. */
    if (!zl_pipe_send(p, msg, false)) {
        /* check_write said yes, so the pipe is out of memory (ENOMEM), or
         * it was terminated since the message began (EAGAIN). */
        if (!lb->more)
            return -1;
        zl_pipe_rollback(p);
        lb->more = false;
        lb->sending = NULL;
        lb->dropping = !last;
        drop(msg);
        return 0;
    }

    lb->more = !last;
    if (last) {
        lb->sending = NULL;
        lb->current = (position(p) + 1) % lb->active;
    }
    return 0;
}

bool zl_load_balance_has_out(zl_load_balance *lb)
{
    /* The rest of a message always goes: to its pipe, or to the floor. */
    if (lb->more || lb->dropping)
        return true;
    return pick_pipe(lb, false) != NULL;
}
