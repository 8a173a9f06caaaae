/* fair_queue.h — fair-queued receive over a socket's pipes (libzmq's fq_t),
 * and discarding the input of pipes that no pattern reads. */
#ifndef ZL_FAIR_QUEUE_H
#define ZL_FAIR_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "pipe.h"
#include "zlink.h"

struct zl_socket;

/* pipes[0, active) may hold messages and are read round-robin;
 * pipes[active, count) found their queue empty and sleep until
 * zl_fair_queue_activate. Each pipe keeps its position in its user_index,
 * so every operation is O(1) whatever the number of pipes. */
typedef struct zl_fair_queue {
    zl_pipe **pipes;
    size_t count, active, capacity;
    size_t current; /* the next active pipe to read from */

    /* CONFLATE: a single-part message read from a pipe gives way to the
     * newest queued behind it in that pipe (zl_fair_queue_set_conflate). */
    bool conflate;

    /* A multipart message is read from one pipe to its last part. */
    bool more;
    zl_pipe *reading;

    /* has_in reads ahead one part so that a pipe's delimiter never counts
     * as input. */
    bool prefetched;
    zl_pipe *prefetched_from;
    zlink_msg_t prefetched_msg;
} zl_fair_queue;

void zl_fair_queue_init(zl_fair_queue *fq);
void zl_fair_queue_destroy(zl_fair_queue *fq);

/* Adds an active pipe. -1 with errno ENOMEM. */
int zl_fair_queue_attach(zl_fair_queue *fq, zl_pipe *p);
bool zl_fair_queue_contains(const zl_fair_queue *fq, const zl_pipe *p);
/* The socket conflates (zl_options_conflates): each receive returns the
 * newest single-part message queued in the pipe it reads, as libzmq's
 * conflating pipes keep only the newest. A multipart message is delivered
 * whole (libzmq leaves that undefined). */
void zl_fair_queue_set_conflate(zl_fair_queue *fq, bool conflate);
/* Forgets p (a pattern's pipe_terminated). Does nothing if p is absent. */
void zl_fair_queue_remove(zl_fair_queue *fq, zl_pipe *p);
/* p has messages again. Spurious calls are harmless. */
void zl_fair_queue_activate(zl_fair_queue *fq, zl_pipe *p);

/* Next message part into msg (initialised, empty); -1 with errno EAGAIN
 * when none is ready. A pipe that reads ZL_PIPE_CLOSED is handed to
 * zl_socket_pipe_done, which calls back the pattern's pipe_terminated. If
 * from is not NULL it receives the part's pipe, or NULL when the part was
 * read ahead by has_in and its pipe has gone since. */
int zl_fair_queue_recv(zl_fair_queue *fq, struct zl_socket *s, zlink_msg_t *msg,
                       zl_pipe **from);
bool zl_fair_queue_has_in(zl_fair_queue *fq, struct zl_socket *s);
/* Puts back msg, a whole single-part message just received from `from`,
 * as has_in's read-ahead: the next receive returns it, or under CONFLATE
 * the newest queued behind it. For a pattern's has_in that must look at
 * the message (SUB's filter). */
void zl_fair_queue_unread(zl_fair_queue *fq, zlink_msg_t *msg, zl_pipe *from);
/* True between the first and the last part of a message: the next recv
 * returns the rest of it, from the same pipe. */
static inline bool zl_fair_queue_mid_message(const zl_fair_queue *fq)
{
    return fq->more;
}

/* Reads and drops everything queued in p, for a pipe that was refused or
 * could not be tracked. True once p has read its peer's delimiter: the
 * caller then owes a zl_socket_pipe_done, when it is safe to make one. */
bool zl_discard_input(zl_pipe *p);

#endif
