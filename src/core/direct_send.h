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

/* Messages this large (all their parts' bodies) are queued as before: the
 * point is the latency of small messages, and a large one would mostly be
 * a partial write. A message of more parts than ZL_DIRECT_PARTS_MAX is
 * queued too. */
#define ZL_DIRECT_BODY_MAX 8192
#define ZL_DIRECT_PARTS_MAX 8

typedef struct zl_direct_port {
    atomic_int state;  /* direct_send.c */
    zl_handle *handle; /* the connection's; read only while taken */
    zl_loop *loop;     /* the engine's; read only while taken */
    /* Bytes of the next message in the pipe that a direct write put on the
     * wire already, when has_pending. */
    size_t pending_written;
    bool has_pending;
} zl_direct_port;

void zl_direct_port_init(zl_direct_port *port);

/* ---- the socket's thread ---- */

/* True when this thread's message, complete in the pipe but not yet
 * published, may be written directly: this thread paused since its last
 * direct send (it found nothing to receive: zl_direct_note_pause) and sent
 * one message between its last two pauses, and the port is open. A thread
 * that sends many messages between its waits (a server answering a batch,
 * a game frame's updates) is better served by the I/O thread, which
 * writes them beside each other while it goes on (DESIGN.md §5). Counts
 * the message. */
bool zl_direct_may_send(zl_direct_port *port);
/* False for parts that the engine encodes differently from their bytes
 * (subscriptions, commands). */
bool zl_direct_part_fits(const zlink_msg_t *part);

typedef enum zl_direct_result {
    ZL_DIRECT_NOT_TAKEN, /* publish the message as usual */
    ZL_DIRECT_SENT,      /* written whole: drop it from the pipe */
    /* written whole, and the engine asked for the port meanwhile: drop it,
     * and send the pipe's reader ACTIVATE_READ */
    ZL_DIRECT_SENT_WAKE,
    /* cut short: publish the message, whose first bytes are on the wire,
     * then zl_direct_port_release */
    ZL_DIRECT_PARTIAL
} zl_direct_result;

/* Writes the message's frames (iov, total bytes) when the engine's thread
 * is waiting for work: handing it over would cost a wakeup, or its
 * syscalls, more than the write. */
zl_direct_result zl_direct_write(zl_direct_port *port, zl_iovec *iov, int n,
                                 size_t total);
/* After ZL_DIRECT_PARTIAL and the publish: lets the port go to the engine.
 * True when the publish did not wake the pipe's reader, which the caller
 * then does. */
bool zl_direct_port_release(zl_direct_port *port);
/* This thread looked for input and found none (a receive, zlink_poll, a
 * poller's wait). */
void zl_direct_note_pause(void);
/* The socket published into the pipe and is waking its sleeping reader:
 * the port stays closed until the engine has read what was published. */
void zl_direct_port_published(zl_direct_port *port);

/* ---- the engine's thread ---- */

/* The engine is about to write. False while the socket's thread writes:
 * that thread then wakes the engine (ACTIVATE_READ) once it is done. */
bool zl_direct_port_take(zl_direct_port *port);
/* After a true zl_direct_port_take: true when the next message in the pipe
 * has its first *written bytes on the wire already. */
bool zl_direct_port_take_written(zl_direct_port *port, size_t *written);
/* Everything is written and the pipe was found empty: the socket's thread
 * may write on handle, unless it published since (the engine's wake is on
 * its way then). */
void zl_direct_port_open(zl_direct_port *port, zl_handle *handle,
                         zl_loop *loop);
/* The connection closes: waits out a write in progress on the socket's
 * thread, then closes the port (until an engine opens it again). A message
 * cut short stays in the pipe, whole, for the next connection. */
void zl_direct_port_shut(zl_direct_port *port);

/* Direct writes since the start, for tests: all of them, and those the
 * engine had to finish (a partial write, EAGAIN or an error). */
unsigned zl_direct_sends_total(void);
unsigned zl_direct_handovers_total(void);
/* Tests: direct writes write at most this many bytes from now on (0: no
 * limit), so that the engine must finish them. */
void zl_direct_set_write_limit(unsigned bytes);

#endif
