/* distribution.h — one message to many pipes (libzmq's dist_t): PUB and
 * XPUB send to the subscribers whose subscriptions match, XSUB sends to
 * every upstream peer. */
#ifndef ZL_DISTRIBUTION_H
#define ZL_DISTRIBUTION_H

#include <stdbool.h>
#include <stddef.h>

#include "pipe.h"
#include "zlink.h"

/* The pipes are kept in one array split into nested regions, each pipe's
 * position in its dist_index, so that every operation is O(1) per pipe:
 *   [0, matching)  receive the message being sent;
 *   [0, active)    may receive it: they were there when it began;
 *   [0, eligible)  had room when last tried;
 *   [eligible, count) were full and wait for zl_dist_activate.
 * Outside a message, active == eligible. */
typedef struct zl_dist {
    zl_pipe **pipes;
    size_t count, capacity;
    size_t matching, active, eligible;
    bool more; /* inside a multipart message */
} zl_dist;

void zl_dist_init(zl_dist *d);
void zl_dist_destroy(zl_dist *d);

/* Adds a pipe with room. A pipe attached in the middle of a multipart
 * message starts with the next message. -1 with errno ENOMEM. */
int zl_dist_attach(zl_dist *d, zl_pipe *p);
bool zl_dist_contains(const zl_dist *d, const zl_pipe *p);
/* Forgets p (a pattern's pipe_terminated). Does nothing if p is absent. */
void zl_dist_remove(zl_dist *d, zl_pipe *p);
/* p has room again. Spurious calls are harmless. */
void zl_dist_activate(zl_dist *d, zl_pipe *p);

/* Marks p as a receiver of the message about to be sent; only pipes with
 * room count. */
void zl_dist_match(zl_dist *d, zl_pipe *p);
void zl_dist_unmatch(zl_dist *d);
/* The pipes with room that were not matched become the matching ones
 * (INVERT_MATCHING), as libzmq's dist_t::reverse_match. */
void zl_dist_reverse_match(zl_dist *d);

/* Sends one part to every matching pipe. A pipe without room for a new
 * message loses that message whole and leaves the eligible pipes until
 * it has room again; the others still get it. Never fails: msg is left
 * empty. The matching set stays until zl_dist_unmatch. */
void zl_dist_send_to_matching(zl_dist *d, zlink_msg_t *msg);
/* The same to every pipe that may receive the message. */
void zl_dist_send_to_all(zl_dist *d, zlink_msg_t *msg);

/* True when every matching pipe has room for a new message; a full one is
 * armed to report its room (ZLINK_XPUB_NODROP). */
bool zl_dist_check_hwm(zl_dist *d);

#endif
