/* xsub.h — the subscriber side shared by XSUB and SUB (libzmq's xsub_t):
 * counted subscriptions sent to every upstream peer, re-sent to a new or
 * reconnected one, and fair-queued receive. SUB is XSUB with filtering on,
 * setsockopt subscriptions, and no send. */
#ifndef ZL_XSUB_H
#define ZL_XSUB_H

#include <stdbool.h>
#include <stddef.h>

#include "distribution.h"
#include "fair_queue.h"
#include "patterns/trie.h"
#include "pipe.h"
#include "zlink.h"

struct zl_socket;

typedef struct zl_xsub {
    zl_fair_queue in;
    zl_dist out;
    zl_trie subscriptions;
    bool filter;    /* SUB: only messages that match reach the application */
    bool invert;    /* INVERT_MATCHING, taken from the options per receive */
    bool more_send; /* the application is inside a message it sends */
    bool more_recv; /* … or one it receives */
    /* has_in reads ahead to skip what the filter drops. */
    bool has_message;
    zlink_msg_t message;
    /* Pipes that reconnected in the middle of a message we were sending
     * them (marked in user_flags): their subscriptions go after it. */
    size_t resend_waiting;
} zl_xsub;

void zl_xsub_init(struct zl_socket *s);
void zl_xsub_destroy(struct zl_socket *s);
void zl_xsub_attach_pipe(struct zl_socket *s, zl_pipe *p,
                         bool locally_initiated);
void zl_xsub_pipe_terminated(struct zl_socket *s, zl_pipe *p);
void zl_xsub_read_activated(struct zl_socket *s, zl_pipe *p);
void zl_xsub_write_activated(struct zl_socket *s, zl_pipe *p);
void zl_xsub_hiccuped(struct zl_socket *s, zl_pipe *p);
int zl_xsub_recv(struct zl_socket *s, zlink_msg_t *msg);
bool zl_xsub_has_in(struct zl_socket *s);

/* ZLINK_SUBSCRIBE / ZLINK_UNSUBSCRIBE on a SUB: the subscription message
 * goes upstream as if the application had sent it through an XSUB. */
int zl_xsub_subscribe(struct zl_socket *s, bool subscribe, const void *topic,
                      size_t len);

#endif
