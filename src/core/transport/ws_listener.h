/* ws_listener.h — binding ws:// and wss:// paths. Sockets of one context
 * that bind paths on the same host:port share one listening port: it runs
 * each connection's HTTP upgrade, then hands it to the socket that bound
 * the requested path (404 for none). */
#ifndef ZL_WS_LISTENER_H
#define ZL_WS_LISTENER_H

#include <stdbool.h>
#include <stddef.h>

#include "transport/listener.h"

struct zl_socket;

/* Binds the ws endpoint ("ws://host:port[/path]", rest being what follows
 * "ws://") for socket, on the application thread. The route's listener
 * object goes to *out, to be plugged like any listener, and the endpoint
 * it resolved to ("ws://127.0.0.1:PORT/path") to resolved. -1 with errno:
 * EADDRINUSE when the path is bound on that port already. */
int zl_ws_bind(struct zl_socket *socket, bool secure, const char *rest,
               char *resolved, size_t resolved_cap, zl_listener_object **out);

#endif
