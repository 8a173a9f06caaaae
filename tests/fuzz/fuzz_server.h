/* fuzz_server.h — the engine's side of a server stream filter under a
 * fuzzer, shared by fuzz_tls and fuzz_ws: it starts the filter's handshake,
 * then reads it the way the engine does (buffers of varying size, probes,
 * optionally two iovecs) while writing it a few ZMTP frames cut across
 * three iovecs, and closes it at the end until its loop is idle. */
#ifndef ZL_FUZZ_SERVER_H
#define ZL_FUZZ_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/stream.h"

/* The largest read the driver asks for. */
#define FUZZ_READ_MAX 20000

/* A small deterministic generator: one input always runs the same way. */
uint32_t fuzz_next_rng(uint32_t *r);
/* Writes data as dir/seed-<index> (a corpus seed); silent on failure. */
void fuzz_write_seed(const char *dir, int index, const uint8_t *data,
                     size_t len);

typedef struct fuzz_driver {
    /* Set before fuzz_driver_start. */
    size_t read_max;       /* reads ask for 1..read_max bytes, or 0 */
    bool split_reads;      /* sometimes across two iovecs */
    const uint8_t *frames; /* what each write sends */
    size_t frames_len;     /* at least 3: it is cut in three */
    int writes_left;       /* how many writes, one after the other */
    uint32_t rng;
    /* The driver's own. */
    zl_stream *stream;
    zl_op handshake_op, read_op, write_op;
    bool handshaken, failed;
    uint8_t buf[FUZZ_READ_MAX];
    zl_iovec out_iov[3];
    unsigned sink;
} fuzz_driver;

/* Starts stream's handshake; reads and writes follow its success. */
void fuzz_driver_start(fuzz_driver *d, zl_stream *stream);
/* Closes the stream, then turns loop until the cancelled completions and
 * the filter's own freeing (a timer) have run: until it is idle a few
 * turns. */
void fuzz_driver_close(fuzz_driver *d, zl_loop *loop);

#endif
