/* stream.h — the byte stream under an engine: a backend handle as it is,
 * or a filter stacked on one (TLS, WebSocket). The engine reads and writes
 * through it and never learns which transport it runs on (DESIGN.md §4). */
#ifndef ZL_STREAM_H
#define ZL_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "options.h"

/* How ZMTP travels on a stream; known once the stream's handshake is over. */
typedef enum zl_framing {
    ZL_FRAMING_ZMTP,     /* greeting, mechanism, frames: tcp, ipc, tls */
    ZL_FRAMING_ZWS_NULL, /* ZWS 2.0 "ZWS2.0/NULL": no greeting, READY */
    ZL_FRAMING_ZWS_RAW   /* ZWS 2.0 "ZWS2.0": no handshake; the first
                            message each way is the routing id */
} zl_framing;

typedef struct zl_stream zl_stream;

/* A filter's functions. The contract is the backend handle's (backend.h):
 * at most one read and one write pending, each op completes exactly once,
 * from the loop and never inside the call that submitted it, and close
 * completes whatever is pending with ZL_ECANCELED before the filter frees
 * itself. A zero-length read is a readiness probe: it completes with 0
 * bytes once a read would bring something. */
typedef struct zl_stream_ops {
    /* Completes once the transport's own handshake (TLS, HTTP upgrade) is
     * over: status 0, or the failure. NULL when there is none. */
    void (*handshake)(zl_stream *s, zl_op *op);
    void (*readv)(zl_stream *s, zl_op *op, const zl_iovec *iov, int n);
    void (*write)(zl_stream *s, zl_op *op, const zl_iovec *iov, int n);
    void (*close)(zl_stream *s);
    zl_framing (*framing)(const zl_stream *s);
    /* After a failed handshake or read: the monitor event that says why
     * (ZLINK_EVENT_HANDSHAKE_FAILED_AUTH or _PROTOCOL) and its value, or 0
     * when there is nothing more to say than the close itself. *retry
     * says whether a connecting socket tries again, as after a refused
     * connect, or gives the endpoint up, as after a ZMTP protocol error. */
    int (*failure)(const zl_stream *s, uint64_t *value, bool *retry);
} zl_stream_ops;

/* A plain stream has no ops and forwards to its handle; a filter embeds
 * this as its first member. */
struct zl_stream {
    const zl_stream_ops *ops;
    zl_handle *handle;
};

/* The stream for a connection on endpoint ("tcp://…", "tls://…",
 * "ws://…"), which takes the handle over in every case: a plain one for
 * tcp and ipc, a filter for the transports that have one. NULL with errno
 * set when it cannot be made; the handle is closed then. connecting: we
 * are the client. */
zl_stream *zl_stream_create(zl_loop *loop, zl_handle *handle,
                            const char *endpoint, const zl_options *options,
                            bool connecting);

/* The stream a WebSocket runs on, over a connected handle it takes over:
 * the handle itself for ws, the TLS filter for wss (hostname: the name a
 * client checks the server's certificate against). NULL with errno, the
 * handle closed. */
zl_stream *zl_stream_ws_lower(zl_loop *loop, zl_handle *handle, bool secure,
                              const zl_options *options, bool connecting,
                              const char *hostname);

/* What a transport needs from the socket's options before a bind or
 * connect (TLS: certificates parsed once, shared by the connections).
 * 0, or -1 with errno (EINVAL: they are unusable). */
int zl_stream_prepare(zl_options *options, int transport, bool server);

/* Starts the transport's handshake; false when it has none (the stream is
 * ready at once and op is never completed). */
static inline bool zl_stream_handshake(zl_stream *s, zl_op *op)
{
    if (!s->ops || !s->ops->handshake)
        return false;
    s->ops->handshake(s, op);
    return true;
}

/* The handle under a plain stream, which carries ZMTP as it is; NULL for
 * a filter. */
static inline zl_handle *zl_stream_plain_handle(const zl_stream *s)
{
    return s->ops ? NULL : s->handle;
}

static inline void zl_stream_readv(zl_stream *s, zl_op *op, const zl_iovec *iov,
                                   int n)
{
    if (s->ops)
        s->ops->readv(s, op, iov, n);
    else
        zl_handle_readv(s->handle, op, iov, n);
}

static inline void zl_stream_write(zl_stream *s, zl_op *op, const zl_iovec *iov,
                                   int n)
{
    if (s->ops)
        s->ops->write(s, op, iov, n);
    else
        zl_handle_write(s->handle, op, iov, n);
}

static inline zl_framing zl_stream_framing(const zl_stream *s)
{
    return s->ops && s->ops->framing ? s->ops->framing(s) : ZL_FRAMING_ZMTP;
}

/* The event that explains a failure (see zl_stream_ops.failure), or 0. */
static inline int zl_stream_failure(const zl_stream *s, uint64_t *value,
                                    bool *retry)
{
    *value = 0;
    *retry = true;
    return s->ops && s->ops->failure ? s->ops->failure(s, value, retry) : 0;
}

/* Cancels what is pending, closes the handle and frees the stream once
 * the cancelled completions have run. */
void zl_stream_close(zl_stream *s);

/* ---- for filters ----
 * The completions a filter owes its caller, run from the loop (a timer due
 * at once) rather than inside the call that submitted the op: a filter
 * that already holds plaintext completes a read this way. A filter has at
 * most three ops of its caller's pending: handshake, read and write. */
#define ZL_STREAM_DEFERRED_MAX 3
typedef struct zl_stream_deferred {
    zl_loop *loop;
    zl_timer timer;
    int count;
    struct {
        zl_op *op;
        int status;
        size_t bytes;
    } due[ZL_STREAM_DEFERRED_MAX];
} zl_stream_deferred;

void zl_stream_deferred_init(zl_stream_deferred *d, zl_loop *loop);
/* Queues op's completion for the loop's next turn. From here on the op is
 * no longer the filter's: a close must not cancel it again. A filter frees
 * itself only once nothing is queued (zl_stream_deferred_pending). */
void zl_stream_defer(zl_stream_deferred *d, zl_op *op, int status,
                     size_t bytes);
/* Runs nothing more: for a filter being freed (its ops were completed). */
void zl_stream_deferred_stop(zl_stream_deferred *d);
/* True while completions are queued: a closing filter waits for them. */
static inline bool zl_stream_deferred_pending(const zl_stream_deferred *d)
{
    return d->count > 0;
}

#endif
