/* fair_queue.c — fair-queued receive over pipes (libzmq's fq_t). */
#include "fair_queue.h"

#include <errno.h>
#include <stdlib.h>

#include "msg.h"
#include "noinline.h"
#include "socket.h"

void zl_fair_queue_init(zl_fair_queue *fq)
{
    fq->pipes = NULL;
    fq->count = fq->active = fq->capacity = fq->current = 0;
    fq->more = false;
    fq->reading = NULL;
    fq->prefetched = false;
    fq->prefetched_from = NULL;
    zlink_msg_init(&fq->prefetched_msg);
}

void zl_fair_queue_destroy(zl_fair_queue *fq)
{
    zlink_msg_close(&fq->prefetched_msg);
    free(fq->pipes);
    fq->pipes = NULL;
    fq->count = fq->active = fq->capacity = 0;
}

static void swap_pipes(zl_fair_queue *fq, size_t i, size_t j)
{
    zl_pipe *a = fq->pipes[i];
    zl_pipe *b = fq->pipes[j];
    fq->pipes[i] = b;
    fq->pipes[j] = a;
    b->user_index = i;
    a->user_index = j;
}

bool zl_fair_queue_contains(const zl_fair_queue *fq, const zl_pipe *p)
{
    return p->user_index < fq->count && fq->pipes[p->user_index] == p;
}

int zl_fair_queue_attach(zl_fair_queue *fq, zl_pipe *p)
{
    if (fq->count == fq->capacity) {
        size_t capacity = fq->capacity ? fq->capacity * 2 : 4;
        zl_pipe **pipes = realloc(fq->pipes, capacity * sizeof *pipes);
        if (pipes == NULL) {
            errno = ENOMEM;
            return -1;
        }
        fq->pipes = pipes;
        fq->capacity = capacity;
    }
    /* A new pipe starts active: its reader has never slept, so no
     * ACTIVATE_READ would ever come for it. */
    p->user_index = fq->count;
    fq->pipes[fq->count++] = p;
    swap_pipes(fq, p->user_index, fq->active);
    fq->active++;
    return 0;
}

/* The pipe at i found its queue empty: it leaves the active region. The
 * pipe swapped into i is the next to read, so current stays. */
static void deactivate(zl_fair_queue *fq, size_t i)
{
    fq->active--;
    swap_pipes(fq, i, fq->active);
    if (fq->current >= fq->active)
        fq->current = 0;
}

void zl_fair_queue_remove(zl_fair_queue *fq, zl_pipe *p)
{
    if (!zl_fair_queue_contains(fq, p))
        return;
    if (p == fq->reading) {
        /* Only a forced removal gets here mid-message; the rest of it went
         * with the pipe. */
        fq->reading = NULL;
        fq->more = false;
    }
    if (fq->prefetched && p == fq->prefetched_from) {
        /* A read-ahead first part whose other parts are gone would be
         * half a message: drop it. A whole message is still good. */
        if (zl_msg_flags(&fq->prefetched_msg) & ZL_MSG_MORE) {
            zlink_msg_close(&fq->prefetched_msg);
            zlink_msg_init(&fq->prefetched_msg);
            fq->prefetched = false;
        }
        fq->prefetched_from = NULL;
    }

    zl_pipe *current = fq->current < fq->active ? fq->pipes[fq->current] : NULL;
    size_t i = p->user_index;
    if (i < fq->active) {
        fq->active--;
        swap_pipes(fq, i, fq->active);
        i = fq->active;
    }
    swap_pipes(fq, i, fq->count - 1);
    fq->count--;

    /* Round-robin goes on from the pipe it would have read next. */
    if (current != NULL && current != p)
        fq->current = current->user_index;
    if (fq->current >= fq->active)
        fq->current = 0;
}

void zl_fair_queue_activate(zl_fair_queue *fq, zl_pipe *p)
{
    if (!zl_fair_queue_contains(fq, p) || p->user_index < fq->active)
        return;
    swap_pipes(fq, p->user_index, fq->active);
    fq->active++;
}

/* A whole message came from p: the next one comes from the pipe after it,
 * round robin, without a division per message. */
static void next_round(zl_fair_queue *fq, const zl_pipe *p)
{
    size_t next = p->user_index + 1;
    fq->current = next < fq->active ? next : 0;
}

/* Reads the next part from the pipes, as libzmq's fq_t::recvpipe. While
 * more is false, reading is NULL: a message read whole leaves both alone,
 * and the stores they would cost are on the path of every message. Each
 * of its two callers has its own copy (callgrind, inproc PAIR 64 B: these
 * two changes, 19 instructions a message). */
static ZL_ALWAYS_INLINE int read_next(zl_fair_queue *fq, struct zl_socket *s,
                                      zlink_msg_t *msg, zl_pipe **from)
{
    /* The pipe publishes whole messages only, so the parts after a MORE
     * are already there. */
    if (fq->more) {
        zl_pipe *p = fq->reading;
        if (zl_pipe_read(p, msg) == ZL_PIPE_MSG) {
            *from = p;
            if (!(zl_msg_flags(msg) & ZL_MSG_MORE)) {
                fq->more = false;
                fq->reading = NULL;
                next_round(fq, p);
            }
            return 0;
        }
        fq->more = false;
        fq->reading = NULL;
    }

    while (fq->active > 0) {
        zl_pipe *p = fq->pipes[fq->current];
        switch (zl_pipe_read(p, msg)) {
        case ZL_PIPE_MSG:
            *from = p;
            if (zl_msg_flags(msg) & ZL_MSG_MORE) {
                fq->more = true;
                fq->reading = p;
            } else {
                next_round(fq, p);
            }
            return 0;
        case ZL_PIPE_EMPTY:
            deactivate(fq, fq->current);
            break;
        case ZL_PIPE_CLOSED:
            /* msg holds the delimiter now; it owns nothing. */
            zlink_msg_init(msg);
            /* Calls back pipe_terminated, which removes p from us. */
            zl_socket_pipe_done(s, p);
            break;
        }
    }
    errno = EAGAIN;
    return -1;
}

void zl_fair_queue_set_conflate(zl_fair_queue *fq, bool conflate)
{
    fq->conflate = conflate;
}

/* CONFLATE: msg, a whole single-part message from p, gives way to the
 * newest one queued behind it. A multipart message met there is delivered
 * instead, whole. False when p reached its delimiter and is gone. */
static ZL_NOINLINE bool keep_newest(zl_fair_queue *fq, struct zl_socket *s,
                                    zlink_msg_t *msg, zl_pipe *p)
{
    zlink_msg_t newer;
    zlink_msg_init(&newer);
    for (;;) {
        switch (zl_pipe_read(p, &newer)) {
        case ZL_PIPE_MSG:
            zlink_msg_close(msg);
            zlink_msg_init(msg);
            zlink_msg_move(msg, &newer);
            if (zl_msg_flags(msg) & ZL_MSG_MORE) {
                fq->more = true;
                fq->reading = p;
                return true;
            }
            break;
        case ZL_PIPE_EMPTY:
            /* p sleeps now; the next read finds it empty and sets it
             * aside, or finds what its ACTIVATE_READ announces. */
            return true;
        case ZL_PIPE_CLOSED:
            zlink_msg_init(&newer);
            zl_socket_pipe_done(s, p);
            return false;
        }
    }
}

int zl_fair_queue_recv(zl_fair_queue *fq, struct zl_socket *s, zlink_msg_t *msg,
                       zl_pipe **from)
{
    zl_pipe *source = NULL;
    bool first_part = !fq->more;
    if (fq->prefetched) {
        zlink_msg_move(msg, &fq->prefetched_msg);
        fq->prefetched = false;
        source = fq->prefetched_from;
        fq->prefetched_from = NULL;
    } else if (read_next(fq, s, msg, &source) != 0) {
        return -1;
    }
    /* The caller must not hear of a pipe that is gone. */
    if (fq->conflate && first_part && source != NULL &&
        !(zl_msg_flags(msg) & ZL_MSG_MORE) && !keep_newest(fq, s, msg, source))
        source = NULL;
    if (from != NULL)
        *from = source;
    return 0;
}

void zl_fair_queue_unread(zl_fair_queue *fq, zlink_msg_t *msg, zl_pipe *from)
{
    zlink_msg_move(&fq->prefetched_msg, msg);
    fq->prefetched = true;
    fq->prefetched_from = from;
}

bool zl_fair_queue_has_in(zl_fair_queue *fq, struct zl_socket *s)
{
    if (fq->more || fq->prefetched)
        return true;
    zl_pipe *source = NULL;
    if (read_next(fq, s, &fq->prefetched_msg, &source) != 0)
        return false;
    fq->prefetched = true;
    fq->prefetched_from = source;
    return true;
}

bool zl_discard_input(zl_pipe *p)
{
    zlink_msg_t msg;
    zlink_msg_init(&msg);
    for (;;) {
        switch (zl_pipe_read(p, &msg)) {
        case ZL_PIPE_MSG:
            zlink_msg_close(&msg);
            zlink_msg_init(&msg);
            break;
        case ZL_PIPE_EMPTY:
            return false;
        case ZL_PIPE_CLOSED:
            return true;
        }
    }
}
