/* fake_backend.h — what the connection fuzzer drives in the fake backend:
 * the bytes each fake peer sends, when it hangs up, the clock, and the
 * turns of the I/O thread's loop. Driver calls are made from one thread,
 * never from inside a loop pass. */
#ifndef ZL_FAKE_BACKEND_H
#define ZL_FAKE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Connections (accepted or connected) one input may open; past it, accept
 * and connect fail with EMFILE. */
#define FAKE_CONN_MAX 8

/* Starts an input afresh: no connection, the clock at its origin, the loop
 * in lockstep. No loop may exist. */
void fake_reset(void);
/* Frees what fake_reset and the connections kept; after zlink_ctx_term. */
void fake_release(void);
/* Gives the loop passes, one at a time, until one leaves nothing to do (or
 * a bound is reached). A no-op before the loop exists. */
void fake_run(void);
/* Hands the loop to its own thread for good, as a real one runs: it then
 * waits for wakes, jumps the clock to its next timer when idle, and
 * completes writes at once. For the teardown (zlink_ctx_term). */
void fake_free_run(void);

/* Connections opened so far, the newest last. */
int fake_conn_count(void);
/* Bytes the peer of connection conn sends: they complete its reads in as
 * large pieces as the reads ask for, after the ones fed before. */
void fake_feed(int conn, const void *data, size_t len);
/* The peer of conn hangs up: once its bytes are read, reads complete with
 * status (ZL_EOF, or a negative errno). */
void fake_hang_up(int conn, int status);
/* A peer connects to the listener: the next accept completes with it. */
void fake_accept(void);
/* While on, writes stay pending (a peer that does not read). */
void fake_stall_writes(bool on);
/* While on, connects complete with ECONNREFUSED. */
void fake_refuse_connects(bool on);
/* What the local side wrote to conn since the last fake_output_clear, in
 * order; *len is its length. */
const uint8_t *fake_output(int conn, size_t *len);
void fake_output_clear(int conn);
/* Moves the loop's clock forward; due timers run in the next pass. */
void fake_advance_ms(uint64_t ms);

#endif
