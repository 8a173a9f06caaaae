/* ws_stream.h — the WebSocket filter (ZWS 2.0, rfc.zeromq.org spec 45): the
 * HTTP upgrade as its handshake, then the engine's ZMTP byte stream turned
 * into binary WebSocket messages (one per ZMTP frame, a flags byte first)
 * and back. It sits on a lower stream: the plain handle for ws://, the TLS
 * filter for wss://. */
#ifndef ZL_WS_STREAM_H
#define ZL_WS_STREAM_H

#include "transport/stream.h"
#include "transport/ws_http.h"

/* The ZWS flags byte. libzmq's ws transport marks commands with 0x02;
 * ZMTP's own command bit (0x04) is accepted on input too. */
#define ZL_WS_FLAG_MORE 0x01
#define ZL_WS_FLAG_COMMAND 0x02
#define ZL_WS_FLAG_ZMTP_COMMAND 0x04

/* A client: sends the upgrade for path to host ("host:port") and checks the
 * answer. Takes lower over (closes it with itself). NULL with errno. */
zl_stream *zl_ws_stream_create_client(zl_loop *loop, zl_stream *lower,
                                      const char *host, const char *path,
                                      const zl_options *options);

/* A server: reads an upgrade request and asks route what to do with it
 * before answering. route returns 0 to accept (it may set the limits
 * below), or the HTTP status to refuse with (403, 404). Called once, from
 * the loop. */
typedef int (*zl_ws_route_fn)(void *arg, zl_stream *ws,
                              const zl_ws_request *request);
zl_stream *zl_ws_stream_create_server(zl_loop *loop, zl_stream *lower,
                                      zl_ws_route_fn route, void *route_arg);

/* MAXMSGSIZE for what the peer sends (-1: none); for a server, set by the
 * route function from the socket the request reached. */
void zl_ws_stream_set_max_msg(zl_stream *ws, int64_t max_msg_size);
/* The path a server's upgrade asked for (valid once handshaken). */
const char *zl_ws_stream_path(const zl_stream *ws);

/* Splits the part of a ws endpoint after "ws://" into "host:port" and the
 * path ("/" when absent). -1 with EINVAL when either does not fit, or the
 * path holds what a request line cannot carry (spaces, control bytes). */
int zl_ws_endpoint_split(const char *rest, char *hostport, size_t hostport_cap,
                         char *path, size_t path_cap);

#endif
