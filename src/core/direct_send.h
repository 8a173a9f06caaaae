/* direct_send.h — the application thread writing a small message to its
 * connection itself, while the connection's output is idle, instead of
 * waking the I/O thread to write it (DESIGN.md §5).
 *
 * A port belongs to the pipe between a socket and its session. Its engine
 * opens it whenever everything queued is written and the pipe is empty,
 * and the socket's thread may then take it for one write. Whatever that
 * write leaves unwritten, and everything after it, goes the usual way: the
 * engine writes it, woken by the pipe's ACTIVATE_READ. One state word
 * orders the two threads; no lock is taken. */
#ifndef ZL_DIRECT_SEND_H
#define ZL_DIRECT_SEND_H

#include <stdbool.h>
#include <stddef.h>

#include "atomics.h"
#include "backend.h"
#include "zlink.h"

/* Bodies this large are queued as before: the point is the latency of
 * small messages, and a large body would mostly be a partial write. */
#define ZL_DIRECT_BODY_MAX 8192

typedef struct zl_direct_port {
    atomic_int state;    /* zl_direct_state */
    zl_handle *handle;   /* the connection's; read only while taken */
    zl_loop *loop;       /* the engine's; read only while taken */
    zlink_msg_t pending; /* a message the socket's write did not finish */
    size_t pending_written;
    bool has_pending;
} zl_direct_port;

void zl_direct_port_init(zl_direct_port *port);
/* Frees a message still pending (its connection is gone). */
void zl_direct_port_destroy(zl_direct_port *port);

/* ---- the socket's thread ---- */

typedef enum zl_direct_result {
    ZL_DIRECT_NOT_TAKEN, /* queue msg as usual */
    ZL_DIRECT_SENT,      /* written whole; msg is empty */
    /* msg (empty now) is the engine's, or the engine asked for the port
     * while we wrote: send the pipe's reader ACTIVATE_READ */
    ZL_DIRECT_WAKE_READER
} zl_direct_result;

/* Writes msg, a whole single-part message, when three things hold: the
 * port is open; this thread paused since its last direct send (it found
 * nothing to receive: zl_direct_note_pause); and the engine's thread is
 * waiting for work. Then handing the message over would cost a wakeup, or
 * the I/O thread's syscalls, and nothing would run in parallel with them.
 * A thread that sends many messages in a row, or an I/O thread busy with
 * other connections, keeps the pipe: the I/O thread writes them beside
 * its other work, in parallel with the application (DESIGN.md §5). */
zl_direct_result zl_direct_send(zl_direct_port *port, zlink_msg_t *msg);
/* This thread looked for input and found none (a receive, zlink_poll, a
 * poller's wait): its next send may go direct. */
void zl_direct_note_pause(void);
/* The socket published into the pipe and is waking its sleeping reader:
 * the port stays closed until the engine has read what was published. */
void zl_direct_port_published(zl_direct_port *port);

/* ---- the engine's thread ---- */

/* The engine is about to write. False while the socket's thread writes:
 * that thread then wakes the engine (ACTIVATE_READ) once it is done. */
bool zl_direct_port_take(zl_direct_port *port);
/* After a true zl_direct_port_take: the message whose first *written bytes
 * are on the wire already, if there is one; false when there is none. */
bool zl_direct_port_take_pending(zl_direct_port *port, zlink_msg_t *msg,
                                 size_t *written);
/* Everything is written and the pipe was found empty: the socket's thread
 * may write on handle, unless it published since (the engine's wake is on
 * its way then). */
void zl_direct_port_open(zl_direct_port *port, zl_handle *handle,
                         zl_loop *loop);
/* The connection closes: waits out a write in progress on the socket's
 * thread, then closes the port for good (until an engine opens it again)
 * and drops a pending message, as the engine's own unwritten batch is. */
void zl_direct_port_shut(zl_direct_port *port);

/* Direct writes since the start, for tests: all of them, and those the
 * engine had to finish (a partial write, EAGAIN or an error). */
unsigned zl_direct_sends_total(void);
unsigned zl_direct_handovers_total(void);
/* Tests: direct writes write at most this many bytes from now on (0: no
 * limit), so that the engine must finish them. */
void zl_direct_set_write_limit(unsigned bytes);

#endif
