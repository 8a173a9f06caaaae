/* engine.h — one ZMTP connection on an I/O thread: the stream's own
 * handshake, greeting, mechanism (NULL, PLAIN), READY, then framing between a
 * stream (transport/stream.h) and the session's pipe. Its only inputs are
 * completions, pipe activations and timers. */
#ifndef ZL_ENGINE_H
#define ZL_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "options.h"

struct zl_session;
struct zl_stream;
typedef struct zl_engine zl_engine;

/* Takes the connected stream; starts the handshake timer and the stream's
 * handshake, then sends the greeting. Monitor events name the connection
 * by the session's endpoint. */
zl_engine *zl_engine_create(struct zl_session *session, zl_loop *loop,
                            struct zl_stream *stream,
                            const zl_options *options);
/* The session's pipe has messages again. */
void zl_engine_restart_output(zl_engine *e);
/* The session's pipe has room again. */
void zl_engine_restart_input(zl_engine *e);
/* The session let go of its pipe and keeps the connection
 * (ZL_PIPE_TERM_KEEP_CONNECTION): the ports belonged to that pipe. */
void zl_engine_pipe_gone(zl_engine *e);
/* True once the pipe's delimiter was reached and everything before it is on
 * the wire (linger is over). */
bool zl_engine_drained(const zl_engine *e);
/* A PLAIN server's ZAP reply (zap.h), or NULL when the handler answered
 * wrongly (reason) or went away. Takes reply->metadata. */
struct zl_zap_reply;
void zl_engine_zap_replied(zl_engine *e, struct zl_zap_reply *reply,
                           uint32_t reason);
/* Detaches from the session and closes; memory goes after pending
 * completions have run. No session callback happens after this. */
void zl_engine_destroy(zl_engine *e);

#endif
