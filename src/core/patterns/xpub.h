/* xpub.h — the publisher side shared by XPUB and PUB (libzmq's xpub_t):
 * subscriptions read from the pipes into an mtrie, and each message sent to
 * the pipes whose subscriptions match its first part. PUB is XPUB that
 * never hands anything to the application. */
#ifndef ZL_XPUB_H
#define ZL_XPUB_H

#include <stdbool.h>
#include <stddef.h>

#include "distribution.h"
#include "fair_queue.h"
#include "patterns/trie.h"
#include "pipe.h"
#include "zlink.h"

struct zl_socket;

/* A message waiting for the application's recv: a (un)subscription or a
 * message an XSUB sent upstream. */
typedef struct zl_xpub_pending {
    zlink_msg_t msg;
    /* XPUB_MANUAL: the pipe a subscription came from (NULL once that pipe
     * is gone), which recv makes the last pipe. */
    zl_pipe *pipe;
    bool sets_last_pipe;
} zl_xpub_pending;

typedef struct zl_xpub {
    zl_dist dist;
    zl_mtrie subscriptions;
    /* XPUB_MANUAL: what each pipe asked for, so that its departure can be
     * reported; the application decides what goes into subscriptions. */
    zl_mtrie manual_subscriptions;
    bool verbose_subs;   /* XPUB_VERBOSE: every subscribe */
    bool verbose_unsubs; /* XPUB_VERBOSER: every unsubscribe as well */
    bool lossy;          /* not XPUB_NODROP */
    bool manual;         /* XPUB_MANUAL */
    zl_pipe *last_pipe;  /* XPUB_MANUAL: target of SUBSCRIBE/UNSUBSCRIBE */
    bool more_send;      /* the application is inside a message */
    bool has_welcome;
    zlink_msg_t welcome; /* XPUB_WELCOME_MSG */

    /* The pipes the subscribers feed, read round robin into the ring
     * below while it holds fewer than RCVHWM parts (zl_xpub_pump). */
    zl_fair_queue in;

    /* A ring of messages for recv. */
    zl_xpub_pending *pending;
    size_t pending_head, pending_count, pending_capacity;
} zl_xpub;

void zl_xpub_init(struct zl_socket *s);
void zl_xpub_destroy(struct zl_socket *s);
void zl_xpub_attach_pipe(struct zl_socket *s, zl_pipe *p,
                         bool locally_initiated);
void zl_xpub_pipe_terminated(struct zl_socket *s, zl_pipe *p);
void zl_xpub_read_activated(struct zl_socket *s, zl_pipe *p);
void zl_xpub_write_activated(struct zl_socket *s, zl_pipe *p);
int zl_xpub_send(struct zl_socket *s, zlink_msg_t *msg);
bool zl_xpub_has_out(struct zl_socket *s);
int zl_xpub_setsockopt(struct zl_socket *s, int option, const void *val,
                       size_t len);

#endif
