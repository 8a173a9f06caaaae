/* engine.h — one ZMTP connection on an I/O thread: greeting, NULL
 * mechanism, READY, then framing between a backend handle and the session's
 * pipe. Its only inputs are completions, pipe activations and timers. */
#ifndef ZL_ENGINE_H
#define ZL_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "options.h"

struct zl_session;
typedef struct zl_engine zl_engine;

/* Takes the connected handle; sends the greeting at once and starts the
 * handshake timer. Monitor events name the connection by the session's
 * endpoint. */
zl_engine *zl_engine_create(struct zl_session *session, zl_loop *loop,
                            zl_handle *handle, const zl_options *options);
/* The session's pipe has messages again. */
void zl_engine_restart_output(zl_engine *e);
/* The session's pipe has room again. */
void zl_engine_restart_input(zl_engine *e);
/* True once the pipe's delimiter was reached and everything before it is on
 * the wire (linger is over). */
bool zl_engine_drained(const zl_engine *e);
/* Detaches from the session and closes; memory goes after pending
 * completions have run. No session callback happens after this. */
void zl_engine_destroy(zl_engine *e);

#endif
