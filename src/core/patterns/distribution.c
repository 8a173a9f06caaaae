/* distribution.c — one message to many pipes (libzmq's dist_t). */
#include "distribution.h"

#include <errno.h>
#include <stdlib.h>

#include "msg.h"

void zl_dist_init(zl_dist *d)
{
    d->pipes = NULL;
    d->count = d->capacity = 0;
    d->matching = d->active = d->eligible = 0;
    d->more = false;
}

void zl_dist_destroy(zl_dist *d)
{
    free(d->pipes);
    zl_dist_init(d);
}

static void swap_pipes(zl_dist *d, size_t i, size_t j)
{
    zl_pipe *a = d->pipes[i];
    zl_pipe *b = d->pipes[j];
    d->pipes[i] = b;
    d->pipes[j] = a;
    b->dist_index = i;
    a->dist_index = j;
}

bool zl_dist_contains(const zl_dist *d, const zl_pipe *p)
{
    return p->dist_index < d->count && d->pipes[p->dist_index] == p;
}

int zl_dist_attach(zl_dist *d, zl_pipe *p)
{
    if (d->count == d->capacity) {
        size_t capacity = d->capacity ? d->capacity * 2 : 4;
        zl_pipe **pipes = realloc(d->pipes, capacity * sizeof *pipes);
        if (pipes == NULL) {
            errno = ENOMEM;
            return -1;
        }
        d->pipes = pipes;
        d->capacity = capacity;
    }
    p->dist_index = d->count;
    d->pipes[d->count++] = p;
    swap_pipes(d, p->dist_index, d->eligible);
    d->eligible++;
    /* Half a message would be garbage to the new peer: it waits for the
     * next one. */
    if (!d->more) {
        swap_pipes(d, p->dist_index, d->active);
        d->active++;
    }
    return 0;
}

void zl_dist_remove(zl_dist *d, zl_pipe *p)
{
    if (!zl_dist_contains(d, p))
        return;
    /* Step out of each region from the innermost, keeping the others
     * contiguous. */
    if (p->dist_index < d->matching)
        swap_pipes(d, p->dist_index, --d->matching);
    if (p->dist_index < d->active)
        swap_pipes(d, p->dist_index, --d->active);
    if (p->dist_index < d->eligible)
        swap_pipes(d, p->dist_index, --d->eligible);
    swap_pipes(d, p->dist_index, --d->count);
}

void zl_dist_activate(zl_dist *d, zl_pipe *p)
{
    if (!zl_dist_contains(d, p) || p->dist_index < d->eligible)
        return;
    swap_pipes(d, p->dist_index, d->eligible++);
    if (!d->more)
        swap_pipes(d, p->dist_index, d->active++);
}

void zl_dist_match(zl_dist *d, zl_pipe *p)
{
    if (!zl_dist_contains(d, p))
        return;
    size_t i = p->dist_index;
    if (i < d->matching || i >= d->eligible)
        return;
    swap_pipes(d, i, d->matching++);
}

void zl_dist_reverse_match(zl_dist *d)
{
    /* The eligible pipes past the matching ones move to the front. */
    size_t previous = d->matching;
    d->matching = 0;
    for (size_t i = previous; i < d->eligible; i++)
        swap_pipes(d, i, d->matching++);
}

void zl_dist_unmatch(zl_dist *d)
{
    d->matching = 0;
}

/* p (matching) gets nothing more of this message. */
static void drop_from_message(zl_dist *d, zl_pipe *p)
{
    swap_pipes(d, p->dist_index, --d->matching);
    swap_pipes(d, p->dist_index, --d->active);
}

/* p (matching) is full: it waits for zl_dist_activate. */
static void drop_until_activated(zl_dist *d, zl_pipe *p)
{
    drop_from_message(d, p);
    swap_pipes(d, p->dist_index, --d->eligible);
}

/* Writes one part to p, the original when it is the last receiver and a
 * copy otherwise. False when p lost the message (it left the matching
 * region, so the same index holds the next pipe). */
static bool write_part(zl_dist *d, zl_pipe *p, zlink_msg_t *msg, bool first,
                       bool last, bool *moved)
{
    if (first && !zl_pipe_check_write(p)) {
        drop_until_activated(d, p);
        return false;
    }
    bool original = p->dist_index == d->matching - 1;
    zlink_msg_t copy;
    zlink_msg_init(&copy);
    if (!original)
        zlink_msg_copy(&copy, msg);
    if (!zl_pipe_write(p, original ? msg : &copy)) {
        /* Out of memory, or the pipe is going away: the parts it already
         * took are withdrawn, so it gets nothing of this message. */
        zlink_msg_close(&copy);
        zl_pipe_rollback(p);
        drop_from_message(d, p);
        return false;
    }
    *moved = original;
    if (last)
        zl_pipe_flush(p);
    return true;
}

void zl_dist_send_to_matching(zl_dist *d, zlink_msg_t *msg)
{
    bool first = !d->more;
    bool last = !(zl_msg_flags(msg) & ZL_MSG_MORE);
    bool moved = false;
    size_t i = 0;
    while (i < d->matching) {
        if (write_part(d, d->pipes[i], msg, first, last, &moved))
            i++;
    }
    if (!moved) {
        zlink_msg_close(msg);
        zlink_msg_init(msg);
    }
    /* A message ends: the pipes that had room during it, or found room,
     * take the next one. */
    if (last)
        d->active = d->eligible;
    d->more = !last;
}

void zl_dist_send_to_all(zl_dist *d, zlink_msg_t *msg)
{
    d->matching = d->active;
    zl_dist_send_to_matching(d, msg);
}

bool zl_dist_check_hwm(zl_dist *d)
{
    for (size_t i = 0; i < d->matching; i++)
        if (!zl_pipe_check_write(d->pipes[i]))
            return false;
    return true;
}
