/* pattern.h — what every socket type implements: how messages are routed
 * between the application and the socket's pipes. One file per pattern. */
#ifndef ZL_PATTERN_H
#define ZL_PATTERN_H

#include <stdbool.h>
#include <stddef.h>

#include "direct_recv.h"
#include "pipe.h"
#include "zlink.h"

struct zl_socket;

typedef struct zl_pattern_ops {
    int type;
    size_t state_size; /* zeroed block at socket->pattern */
    void (*init)(struct zl_socket *s);
    void (*destroy)(struct zl_socket *s);
    /* A new pipe; locally_initiated when this socket connected. */
    void (*attach_pipe)(struct zl_socket *s, zl_pipe *p,
                        bool locally_initiated);
    /* The pipe is gone: drop every reference to it (the socket releases it
     * right after). */
    void (*pipe_terminated)(struct zl_socket *s, zl_pipe *p);
    /* The pipe has messages again / room again. May be spurious. */
    void (*read_activated)(struct zl_socket *s, zl_pipe *p);
    void (*write_activated)(struct zl_socket *s, zl_pipe *p);
    /* The connection behind the pipe was lost and is being re-established
     * (ZL_CMD_HICCUP): SUB and XSUB send their subscriptions again. May be
     * NULL. */
    void (*hiccuped)(struct zl_socket *s, zl_pipe *p);
    /* Send one message part (ZL_MSG_MORE in its flags). On success the
     * message is moved and msg is left empty. -1 with errno EAGAIN when it
     * would block, or another errno (EHOSTUNREACH, ENOTSUP, EFSM). */
    int (*send)(struct zl_socket *s, zlink_msg_t *msg);
    /* Receive one message part into msg (initialised, empty). -1/EAGAIN. */
    int (*recv)(struct zl_socket *s, zlink_msg_t *msg);
    bool (*has_in)(struct zl_socket *s);
    bool (*has_out)(struct zl_socket *s);
    /* Pattern-specific options; -1 with errno EINVAL when unknown. May be
     * NULL. */
    int (*setsockopt)(struct zl_socket *s, int option, const void *val,
                      size_t len);
    int (*getsockopt)(struct zl_socket *s, int option, void *val, size_t *len);
    /* A blocking receive (or a poll in which this socket alone could read
     * directly) found nothing, and p is the socket's one pipe: whether the
     * socket's thread may read the next message from p's connection itself
     * (direct_recv.h), and what comes on the wire before its body. NULL: never,
     * and the engine does not open the port (zl_pattern_reads_directly). */
    zl_direct_envelope (*direct_recv_envelope)(struct zl_socket *s, zl_pipe *p);
    /* The socket's thread read a whole message from p itself, envelope and
     * body, and msg holds the body: the pattern's state moves as if its
     * receive had read them, and msg becomes what that receive returns
     * first (ROUTER: the routing id, the body waiting behind it). May be
     * NULL when nothing moves. */
    void (*direct_recv_taken)(struct zl_socket *s, zl_pipe *p,
                              zlink_msg_t *msg);
} zl_pattern_ops;

/* direct_recv_envelope for the patterns that hand messages out as they
 * come: PAIR, DEALER, PULL. */
zl_direct_envelope zl_pattern_direct_bare(struct zl_socket *s, zl_pipe *p);

/* Looked up by socket type; NULL when the type is unsupported. */
const zl_pattern_ops *zl_pattern_for_type(int type);
/* Whether the socket's thread may read messages of this type's pattern
 * from the connection itself (direct_recv_envelope): the engine opens the
 * receive port for these types only. */
bool zl_pattern_reads_directly(int type);

extern const zl_pattern_ops zl_pair_ops;
extern const zl_pattern_ops zl_dealer_ops;
extern const zl_pattern_ops zl_router_ops;
extern const zl_pattern_ops zl_pub_ops;
extern const zl_pattern_ops zl_sub_ops;
extern const zl_pattern_ops zl_xpub_ops;
extern const zl_pattern_ops zl_xsub_ops;
extern const zl_pattern_ops zl_req_ops;
extern const zl_pattern_ops zl_rep_ops;
extern const zl_pattern_ops zl_push_ops;
extern const zl_pattern_ops zl_pull_ops;
extern const zl_pattern_ops zl_stream_socket_ops;

#endif
