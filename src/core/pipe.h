/* pipe.h — one end of a bidirectional message pipe between a socket and a
 * session, or between two inproc sockets (DESIGN.md §5).
 *
 * Each direction is a single-producer/single-consumer lock-free queue of
 * messages in chunks. A reader that finds its queue empty goes to sleep and
 * the writer's flush then sends one ZL_CMD_ACTIVATE_READ: one wakeup per
 * sleep, not one per message. The high-water mark counts whole messages; a
 * writer that hits it gets one ZL_CMD_ACTIVATE_WRITE once the reader has
 * drained the queue to the low-water mark (HWM/2).
 *
 * Termination is in-band: zl_pipe_terminate() writes a delimiter after the
 * messages already queued and sends ZL_CMD_PIPE_TERM to the peer's owner,
 * which reads up to the delimiter (ZL_PIPE_CLOSED) and then releases. The
 * shared memory goes away when both ends are released and no command refers
 * to it.
 *
 * Every function is called by the thread that owns this end, except where
 * marked. */
#ifndef ZL_PIPE_H
#define ZL_PIPE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "mailbox.h"
#include "zlink.h"

typedef struct zl_pipe zl_pipe;
struct zl_pipe_shared;
struct zl_msg_queue;

typedef enum zl_pipe_read_result {
    ZL_PIPE_MSG,   /* *msg holds the next message part */
    ZL_PIPE_EMPTY, /* nothing now; this end sleeps until ACTIVATE_READ */
    ZL_PIPE_CLOSED /* the peer's delimiter: nothing will ever come */
} zl_pipe_read_result;

/* A routing id of up to 255 bytes. */
typedef struct zl_blob {
    uint8_t len;
    uint8_t data[255];
} zl_blob;

/* A routing id held by a pipe: its length and that many bytes. */
typedef struct zl_pipe_id {
    uint8_t len;
    uint8_t data[];
} zl_pipe_id;

struct zl_pipe {
    /* Free for the owner's use (pattern state, session pointer, …). */
    void *user;
    int user_flags;
    size_t user_index;
    size_t dist_index; /* slot in a distribution (PUB, XPUB, XSUB) */
    /* The peer's routing id, as this end's owner knows it (a ROUTER's);
     * NULL when there is none. Held apart and sized to the id: most pipes
     * never have one, and ten thousand connections would each carry 256
     * bytes per end for it. Set with zl_pipe_set_routing_id. */
    struct zl_pipe_id *routing_id;
    size_t owner_index; /* slot in the owning socket's pipe list */
    /* The other end is a session's: an I/O thread writes what we read,
     * and needs the CPU that a receive spinning for it would take. */
    bool peer_is_session;
    /* That session sent PROBE_ROUTER's empty message itself. */
    bool probe_sent;
    /* The RCVHWM our owner last gave the peer's owner (ZL_CMD_PEER_HWM),
     * or ZL_PIPE_HWM_UNKNOWN. */
    int told_recv_hwm;
    /* Between two sockets (inproc): the peer's RCVHWM, which adds to our
     * SNDHWM as in libzmq, or ZL_PIPE_HWM_UNKNOWN until its owner says. */
    int peer_recv_hwm;

    /* Private to pipe.c. */
    struct zl_pipe_shared *shared;
    zl_pipe *peer;
    struct zl_msg_queue *in;  /* we read */
    struct zl_msg_queue *out; /* we write */
    zl_mailbox *mailbox;      /* where commands for this end go */
    void *owner;              /* cmd.target of those commands */
    bool terminated;          /* we wrote our delimiter */
    bool closed;              /* we read the peer's delimiter */
    bool released;
    bool in_message; /* the last write had MORE set */
    bool left_awake; /* found empty while kept awake: not asleep */
};

/* Creates both ends. hwm 0 means no limit. a_to_b_hwm limits messages that
 * a writes and b reads. Both ends start without an owner: set it before the
 * first command can be sent, i.e. before handing the end to another
 * thread. */
int zl_pipe_pair(zl_pipe **a, zl_pipe **b, int a_to_b_hwm, int b_to_a_hwm);
void zl_pipe_set_owner(zl_pipe *p, zl_mailbox *mailbox, void *owner);
/* Sets p's routing id to a copy of id (len 0: none). Set it before p is
 * handed to its owner's thread, or on that thread. -1 with ENOMEM, or
 * EINVAL for an id over 255 bytes. */
int zl_pipe_set_routing_id(zl_pipe *p, const uint8_t *id, size_t len);
/* p's routing id and its length (0 and NULL when it has none). */
static inline const uint8_t *zl_pipe_routing_id(const zl_pipe *p, size_t *len)
{
    *len = p->routing_id ? p->routing_id->len : 0;
    return p->routing_id ? p->routing_id->data : NULL;
}

/* High-water marks that change after the pipe was made (ZLINK_SNDHWM and
 * ZLINK_RCVHWM set on a connected socket, as libzmq 4.3 applies them). */
#define ZL_PIPE_HWM_UNKNOWN (-1)
/* libzmq's rule between two sockets (inproc): the limits of the writer's
 * SNDHWM and the reader's RCVHWM add up, unless either is unlimited. */
static inline int zl_pipe_combined_hwm(int send, int receive)
{
    return (send != 0 && receive != 0) ? send + receive : 0;
}
/* Limits the queue this end writes to hwm messages (0: none) from now on;
 * what it already holds stays. True when the limit rose: a writer the old
 * one stopped may go on. */
bool zl_pipe_set_send_hwm(zl_pipe *p, int hwm);
/* Tells the peer end's owner that ours now takes hwm messages
 * (ZL_CMD_PEER_HWM, with hwm as its arg), and records it in
 * told_recv_hwm. */
void zl_pipe_tell_recv_hwm(zl_pipe *p, int hwm);

/* Writing. */
/* p is written by an I/O thread (pipe.c says why it matters). Call it
 * before p is handed to another thread. */
void zl_pipe_set_burst_writer(zl_pipe *p);
/* The queue p writes is bounded by parts too, not only by whole messages:
 * zl_pipe_check_write refuses a new message once the queue holds more than
 * PARTS_PER_MSG parts per message of its HWM (pipe.c). Sessions call it:
 * a peer's messages of thousands of empty parts each hold a queue slot per
 * part, and would otherwise fill the HWM thousands of times over. */
void zl_pipe_weigh_parts(zl_pipe *p);
/* True when a new message may start: under the HWM and not terminated.
 * False at HWM arms one ZL_CMD_ACTIVATE_WRITE. */
bool zl_pipe_check_write(zl_pipe *p);
/* Room for a new message in a send that waits when refused: a PAIR's, a
 * DEALER's, a ROUTER's with ROUTER_MANDATORY (pipe.c, "Pacing"). */
typedef enum zl_pipe_room {
    ZL_PIPE_ROOM,
    ZL_PIPE_FULL,  /* at the HWM or terminated, as zl_pipe_check_write */
    ZL_PIPE_PACED, /* under the HWM, but the queue holds a pacing budget of
                    * large messages: ACTIVATE_WRITE is armed */
} zl_pipe_room;
zl_pipe_room zl_pipe_check_send(zl_pipe *p);

/* The errno of a send refused with ZL_PIPE_PACED. The socket never returns
 * it: it waits, at most ZL_PIPE_PACE_WAIT_MS, or retries unpaced. */
#define ZL_EPACED (ZLINK_HAUSNUMERO + 100)
#define ZL_PIPE_PACE_WAIT_MS 5

/* The errno of a send that a check refused: ZL_EPACED or EAGAIN. */
static inline int zl_pipe_refusal_errno(zl_pipe_room room)
{
    return room == ZL_PIPE_PACED ? ZL_EPACED : EAGAIN;
}

/* This thread's pacing. A send starts with ZL_PIPE_PACE_ON, and the socket
 * sets another mode only to retry a refused send, and back after it. */
typedef enum zl_pipe_pacing {
    ZL_PIPE_PACE_ON,
    ZL_PIPE_PACE_OFF,    /* the send does not wait: only the HWM refuses */
    ZL_PIPE_PACE_GAVE_UP /* the send waited its ZL_PIPE_PACE_WAIT_MS */
} zl_pipe_pacing;
void zl_pipe_set_pacing(zl_pipe_pacing mode);

/* Moves msg into the pipe; msg is left as an empty message. The reader sees
 * nothing of a multipart message until its last part is written and flushed.
 * Returns false (msg untouched) after terminate, with errno EAGAIN, or
 * without memory, with ENOMEM. */
bool zl_pipe_write(zl_pipe *p, zlink_msg_t *msg);
/* Publishes complete messages; wakes a sleeping reader. */
void zl_pipe_flush(zl_pipe *p);
/* zl_pipe_check_send when first_part (not ZL_PIPE_ROOM: false with
 * EAGAIN or ZL_EPACED, msg untouched), then zl_pipe_write, then zl_pipe_flush
 * when msg was the last part of its message. A whole small message for an
 * idle connection is written to it at once instead (direct_send.h). */
bool zl_pipe_send(zl_pipe *p, zlink_msg_t *msg, bool first_part);
/* The port through which the socket's end writes straight into the
 * session's connection (direct_send.h), for the session's end to open. */
struct zl_direct_port *zl_pipe_direct_port(zl_pipe *p);
/* The port through which the socket's end reads the session's connection
 * itself (direct_recv.h), for the session's end to open. */
struct zl_recv_port *zl_pipe_recv_port(zl_pipe *p);
/* The reader's end: sends the writer ACTIVATE_WRITE, whatever the queue
 * holds (the engine, idle while the socket's thread read its connection,
 * reads again). */
void zl_pipe_wake_writer(zl_pipe *p);
/* The writer's end (the session): sends the reader RECV_PORT_OPEN, which
 * only wakes it (a receive that waits to watch the connection). */
void zl_pipe_wake_reader(zl_pipe *p);
/* Drops the parts of an unfinished multipart message. */
void zl_pipe_rollback(zl_pipe *p);

/* While set (per thread), a reader that finds a queue empty does not go to
 * sleep on it: the end is marked left_awake instead, and its writer
 * publishes without sending ACTIVATE_READ. So whoever set it must, before
 * it sleeps or returns, settle every end left awake: zl_pipe_check_read
 * (with the flag cleared) either finds data or puts the end to sleep. */
void zl_pipe_keep_reader_awake(bool awake);
/* True when, since this thread last set the flag, an end was left awake;
 * when false there is nothing to settle. */
bool zl_pipe_any_left_awake(void);
/* True when a read would not find the queue empty; never sleeps. */
bool zl_pipe_has_published(zl_pipe *p);

/* Reading. *msg is overwritten, not closed: pass an empty or closed one. */
zl_pipe_read_result zl_pipe_read(zl_pipe *p, zlink_msg_t *msg);
/* True when a message part or the delimiter is ready. False puts this end to
 * sleep, as ZL_PIPE_EMPTY does. */
bool zl_pipe_check_read(zl_pipe *p);
/* Messages queued for this end to read (complete ones only). */
uint64_t zl_pipe_readable_count(zl_pipe *p);
/* Slots of the chunk this end writes into: how deep its queue has been. */
int zl_pipe_write_chunk_slots(const zl_pipe *p);

/* Tells the peer end's owner (ZL_CMD_HICCUP) that the connection behind
 * this end was lost and is being re-established, as libzmq's hiccup: a SUB
 * then sends its subscriptions again. */
void zl_pipe_hiccup(zl_pipe *p);

/* Termination. */
void zl_pipe_terminate(zl_pipe *p);
/* As zl_pipe_terminate, and a session at the other end keeps its
 * connection open, without a pipe: whatever the peer sends is dropped
 * (ZL_CMD_PIPE_TERM's arg). A ROUTER that hands a peer's id over to a newer
 * peer does so, as libzmq's; closing the old connection would make that
 * peer reconnect and take the id back. */
void zl_pipe_give_up(zl_pipe *p);
#define ZL_PIPE_TERM_KEEP_CONNECTION 1
/* As zl_pipe_terminate, for a peer the socket turns away (a PAIR's second
 * peer): the session closes the connection and reports DISCONNECTED. */
void zl_pipe_refuse(zl_pipe *p);
#define ZL_PIPE_TERM_REFUSED 2
/* This end is done. No command for it will be delivered after this (those
 * in flight are discarded by zl_pipe_cmd_live). */
void zl_pipe_release(zl_pipe *p);

/* Commands carry a reference to the end they are for. The receiver calls
 * zl_pipe_cmd_live() first (false: the end was released, ignore it) and
 * zl_pipe_unref() when done. */
bool zl_pipe_cmd_live(const zl_pipe *p);
void zl_pipe_ref(zl_pipe *p);
void zl_pipe_unref(zl_pipe *p);

#endif
