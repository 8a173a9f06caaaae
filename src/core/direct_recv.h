/* direct_recv.h — the application thread reading a small message from its
 * connection itself, while it waits for one in a blocking receive, a poll
 * or a poller, instead of the I/O thread reading it and waking it
 * (DESIGN.md §5).
 *
 * A port belongs to the pipe between a socket and its session, beside the
 * direct-send port. Its engine opens it whenever it waits for input with
 * nothing buffered, at a message boundary, on a plain ZMTP stream. The
 * socket's thread, about to sleep in a receive that found nothing, may
 * then watch the connection: the loop's thread is no longer woken by its
 * input (zl_handle_watch_input), and the socket's thread sleeps on its own
 * sleeper and on the connection at once. When input comes, it takes the
 * message if it is a whole single-part data frame of at most
 * ZL_DIRECT_RECV_MAX bytes (behind an empty delimiter, for REQ and REP:
 * the pattern says which, zl_pattern_ops.direct_recv_envelope), and only
 * while the pipe holds nothing older (socket_direct_recv.c). Anything
 * else (commands, multipart messages, larger or incomplete frames, the
 * end of the stream) stays in the socket for the engine, which reads it
 * as it would have. One state word orders the two threads. */
#ifndef ZL_DIRECT_RECV_H
#define ZL_DIRECT_RECV_H

#include <stdbool.h>
#include <stdint.h>

#include "atomics.h"
#include "backend.h"
#include "zlink.h"
#include "zmtp/zmtp.h"

struct zl_metadata;
struct zl_sleeper;

/* The largest body the socket's thread reads itself: the point is the
 * latency of small messages, and its copy is made on the stack. */
#define ZL_DIRECT_RECV_MAX 2048
/* What it looks at: room for the largest body, its header and a short
 * empty delimiter. */
#define ZL_DIRECT_RECV_PEEK (2 + ZL_FRAME_HEADER_MAX + ZL_DIRECT_RECV_MAX)

/* What the pattern expects on the wire before the message's body. */
typedef enum zl_direct_envelope {
    ZL_DIRECT_NOT_NOW = -1, /* the pattern's receive must run instead */
    ZL_DIRECT_BARE,         /* nothing: the body is the message */
    ZL_DIRECT_DELIMITED     /* an empty delimiter frame, then the body */
} zl_direct_envelope;

typedef struct zl_recv_port {
    atomic_int state; /* direct_recv.c */
    /* Set by the engine while it opens the port; the socket's thread reads
     * them only while it watches. */
    zl_handle *handle;
    struct zl_metadata *metadata; /* one reference, the port's; or NULL */
    int64_t max_msg_size;         /* MAXMSGSIZE; -1: none */
    int64_t max_msg_parts;        /* MAXMSGPARTS; -1: none */
    /* The watching thread's sleeper, which the engine raises when it must
     * close the connection. */
    struct zl_sleeper *sleeper;
} zl_recv_port;

void zl_recv_port_init(zl_recv_port *port);

/* ---- the engine's thread ---- */

/* The engine waits for input with a readiness probe, at a message
 * boundary with nothing buffered: the socket's thread may watch. Takes a
 * reference to metadata (given to each message read), kept until
 * zl_recv_port_shut. True when a receive began to wait while the port was
 * closed and wants to watch (zl_recv_port_want): the engine then wakes
 * that thread through the pipe (ZL_CMD_RECV_PORT_OPEN). */
bool zl_recv_port_open(zl_recv_port *port, zl_handle *handle,
                       struct zl_metadata *metadata, int64_t max_msg_size,
                       int64_t max_msg_parts);
/* The engine's probe completed. True when the engine reads now (the port
 * is closed); false while the socket's thread watches the input: the
 * engine then waits, without a read, until the pipe's ACTIVATE_WRITE
 * (zl_recv_port_unwatch) wakes it. */
bool zl_recv_port_close(zl_recv_port *port);
/* The connection closes: wakes a watching thread and waits until it has
 * let go, then closes the port and drops its metadata. */
void zl_recv_port_shut(zl_recv_port *port);

/* ---- the socket's thread ---- */

/* Starts watching the connection when the port is open; false otherwise.
 * w is this thread's sleeper, which the engine raises to get the port
 * back. */
bool zl_recv_port_watch(zl_recv_port *port, struct zl_sleeper *w);
/* The port is closed because the engine is still reading: asks the engine
 * to wake this thread when it opens it (true), so that a wait that began
 * too early can still watch. unwant takes the request back once the wait
 * is over; a wake that comes after is a harmless command. */
bool zl_recv_port_want(zl_recv_port *port);
void zl_recv_port_unwant(zl_recv_port *port);

typedef enum zl_recv_result {
    ZL_RECV_MESSAGE,   /* a message was read into msg */
    ZL_RECV_WOKEN,     /* the sleeper was raised (consume it) */
    ZL_RECV_READABLE,  /* the connection has input: take it, or not */
    ZL_RECV_NOTHING,   /* timeout_ms passed, or nothing to take after all */
    ZL_RECV_FOR_ENGINE, /* the input is the engine's to read */
    ZL_RECV_INTERRUPTED /* a signal came: the receive returns EINTR */
} zl_recv_result;

/* Watching: sleeps until the sleeper is raised (WOKEN), the connection
 * has input (READABLE), a signal interrupts the sleep (INTERRUPTED), or
 * timeout_ms passes (-1: no limit). */
zl_recv_result zl_recv_port_wait(zl_recv_port *port, struct zl_sleeper *w,
                                 int timeout_ms);
/* For a wait that sleeps on more than this connection (zlink_poll): the
 * OS socket to watch while the port is watched. */
zl_os_socket zl_recv_port_os_socket(const zl_recv_port *port);
/* The connection is readable and the sleeper was not raised: reads one
 * message when it can. Its body goes into msg; its envelope (as the
 * pattern expects it) is read and dropped. */
zl_recv_result zl_recv_port_take(zl_recv_port *port,
                                 zl_direct_envelope envelope, zlink_msg_t *msg);
/* Stops watching. for_engine: the input waiting is the engine's (the
 * port then stays closed until the engine opens it again). True when the
 * engine's probe completed meanwhile: the caller then wakes the engine
 * with the pipe's ACTIVATE_WRITE. */
bool zl_recv_port_unwatch(zl_recv_port *port, bool for_engine);

/* Messages the socket's thread read itself since the start, for tests. */
unsigned zl_direct_recvs_total(void);
/* For tests: the engine opened the port and nobody watches it; a thread
 * watches it. */
bool zl_recv_port_is_open(zl_recv_port *port);
bool zl_recv_port_is_watched(zl_recv_port *port);

#endif
