/* session.h — the I/O-thread side of one connection (or connection
 * attempt): it owns the pipe end and the engine, reconnects, and lingers. */
#ifndef ZL_SESSION_H
#define ZL_SESSION_H

#include <stdbool.h>

#include "backend.h"
#include "io_thread.h"
#include "options.h"
#include "pipe.h"

struct zl_socket;
struct zl_listener_object;
struct zl_engine;

typedef struct zl_session {
    zl_io_object base;
    struct zl_socket *socket;
    zl_options options;

    zl_pipe *pipe; /* our end; NULL until created */
    zl_pipe *zap;  /* to the ZAP handler, while a PLAIN server asks it */
    struct zl_engine *engine;
    uint64_t fd; /* the engine's OS socket, for monitor values */

    /* Accepted connections belong to their listener. */
    struct zl_listener_object *listener;
    size_t listener_slot;

    /* Connecting side. */
    bool connect_side;
    zl_addr addr;
    /* The "host:port" of a connect by name, looked up again before each
     * attempt (transport/resolver.h); NULL when addr is a literal. */
    char *lookup_hostport;
    struct zl_lookup *lookup; /* in progress */
    zl_addr src; /* "tcp://src;dst": the local address to connect from */
    bool has_src;
    zl_handle *connecting; /* until connected, through the proxy if any */
    zl_op connect_op;
    zl_timer connect_timer; /* CONNECT_TIMEOUT */
    /* ZLINK_SOCKS_PROXY: addr and lookup_hostport are the proxy's, and this
     * the "host:port" it is asked to reach (socks_connect.h); NULL
     * without a proxy. */
    char *socks_peer;
    zl_timer socks_timer; /* HANDSHAKE_IVL over the SOCKS exchange */
    bool connect_timed_out;
    zl_timer reconnect_timer;
    int reconnect_ivl_now;
    uint64_t jitter_state; /* random.h: the reconnect interval's jitter */

    zl_timer linger_timer;
    bool terminating;
    bool destroying; /* destroy() ran; only a pending connect holds us */
    /* The socket let go of this connect's pipe (abandon_connect): nothing
     * more is connected, and the socket's TERM ends us. */
    bool abandoned;
    bool pipe_closed;    /* read the socket's delimiter */
    bool out_in_message; /* the engine took a part with MORE set */
    bool in_in_message;  /* the engine wrote a part with MORE set */
    bool probe_pending;  /* PROBE_ROUTER's message, before the pipe's */
    /* CONFLATE: the newest message while the pipe (one message deep) is
     * full; each newer one replaces it. */
    bool has_conflated;
    zlink_msg_t conflated;
    /* Sized to the endpoint: most are a few dozen bytes. */
    char endpoint[];
} zl_session;

/* Connecting side: created on the application thread, started by PLUG.
 * Creates and attaches the pipe at once unless IMMEDIATE (or ROUTER).
 * lookup_hostport names the peer when addr does not: it is resolved
 * before each attempt. With socks_peer, addr or lookup_hostport is a
 * SOCKS5 proxy, asked at each attempt to connect to socks_peer. */
zl_session *zl_session_create_connect(struct zl_socket *socket,
                                      zl_io_thread *thread, const zl_addr *addr,
                                      const char *lookup_hostport,
                                      const zl_addr *src,
                                      const char *socks_peer,
                                      const char *endpoint);
/* Accepted side: created on the listener's thread with a connected handle. */
zl_session *zl_session_create_accepted(struct zl_socket *socket,
                                       zl_io_thread *thread,
                                       const zl_options *options,
                                       zl_handle *handle, const char *endpoint);

/* Accepted side, for a stream whose transport handshake its listener
 * already ran (a WebSocket upgrade routed by its path), which took
 * handshake_spent_ms of HANDSHAKE_IVL. Takes the stream over, closing it
 * on failure. */
struct zl_stream;
zl_session *zl_session_create_accepted_stream(struct zl_socket *socket,
                                              zl_io_thread *thread,
                                              const zl_options *options,
                                              struct zl_stream *stream,
                                              uint64_t handshake_spent_ms,
                                              const char *endpoint);

/* Called by the engine. engine_ready gives the session its pipe: -1 when
 * there is no memory for it, and the engine then fails the connection. */
int zl_session_engine_ready(zl_session *s, const zl_blob *peer_routing_id);
/* One part from the socket: ZL_PIPE_MSG, ZL_PIPE_EMPTY or ZL_PIPE_CLOSED. */
int zl_session_pull(zl_session *s, zlink_msg_t *msg);
/* As zl_session_pull, under CONFLATE (zl_options_conflates_out): a whole
 * single-part message gives way to the newest queued behind it, as
 * libzmq's conflating pipes keep only the newest. A multipart message
 * goes whole. */
int zl_session_pull_newest(zl_session *s, zlink_msg_t *msg);
/* One part to the socket; false (msg kept) when the pipe is at its HWM. */
bool zl_session_push(zl_session *s, zlink_msg_t *msg);
void zl_session_flush(zl_session *s);
/* The engine failed or closed. event is the monitor event to report with
 * value; protocol tells whether the peer broke the protocol. The engine is
 * already detached. */
void zl_session_engine_error(zl_session *s, bool protocol);
/* The engine wrote everything up to the socket's delimiter. */
void zl_session_engine_drained(zl_session *s);
/* Socket type of this session's socket. */
int zl_session_socket_type(const zl_session *s);
struct zl_socket *zl_session_socket(zl_session *s);
/* The port of the pipe to the socket (direct_send.h); NULL while there is
 * no pipe. */
struct zl_direct_port *zl_session_direct_port(zl_session *s);
/* The pipe's port for the socket's own reads (direct_recv.h); NULL while
 * there is no pipe. */
struct zl_recv_port *zl_session_recv_port(zl_session *s);
/* The engine opened that port for a receive that waits to watch it: wakes
 * the socket's thread. */
void zl_session_recv_port_opened(zl_session *s);
/* The endpoint as the application wrote it, for monitor events. */
const char *zl_session_endpoint(const zl_session *s);

/* session_zap.c: the engine's one ZAP request. -1 with ECONNREFUSED when
 * no handler is bound; otherwise the reply comes back through
 * zl_engine_zap_replied. */
struct zl_zap_request;
int zl_session_ask_zap(zl_session *s, const struct zl_zap_request *r);
/* A command for the pipe to the handler. */
void zl_session_zap_command(zl_session *s, const zl_cmd *cmd);
/* Lets go of the pipe to the handler, if any. */
void zl_session_close_zap(zl_session *s);

#endif
