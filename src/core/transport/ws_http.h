/* ws_http.h — the HTTP of the WebSocket opening handshake (RFC 6455 §4):
 * a strict, bounded parser for the client's upgrade request and for the
 * server's answer, the messages we send, and the Sec-WebSocket-Accept
 * hash. No I/O: the ws stream feeds it what it read. */
#ifndef ZL_WS_HTTP_H
#define ZL_WS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/stream.h"

/* The whole header block, request line included, may not be longer: a
 * peer that sends more is refused with 400, whatever it would have said. */
#define ZL_WS_HTTP_MAX (8 * 1024)
#define ZL_WS_PATH_MAX 256
#define ZL_WS_FIELD_MAX 256
/* A Sec-WebSocket-Key is the base64 of 16 bytes: 24 characters. */
#define ZL_WS_KEY_LEN 24
/* A Sec-WebSocket-Accept is the base64 of a SHA-1: 28 characters. */
#define ZL_WS_ACCEPT_LEN 28

/* What a valid upgrade request asked for. */
typedef struct zl_ws_request {
    char path[ZL_WS_PATH_MAX]; /* without the query */
    char host[ZL_WS_FIELD_MAX];
    char origin[ZL_WS_FIELD_MAX]; /* "" when the request had none */
    char key[ZL_WS_KEY_LEN + 1];
    zl_framing framing; /* the subprotocol we chose from its list */
} zl_ws_request;

/* Parses the request at the start of buf. Returns the length of its
 * header block (> 0) once it is complete and valid, 0 while it is
 * incomplete and shorter than ZL_WS_HTTP_MAX, or the negated HTTP status
 * to refuse it with: -400 (malformed, too long, no ZWS subprotocol) or
 * -426 (a Sec-WebSocket-Version other than 13). */
int zl_ws_request_parse(const uint8_t *buf, size_t len, zl_ws_request *out);

/* The answer to a valid request: 101 with the accept hash and the chosen
 * subprotocol, no extension. Its length, or 0 when cap is too small. */
size_t zl_ws_response_accept(char *buf, size_t cap, const char *key,
                             zl_framing framing);
/* A refusal (400, 403, 404, 426) that closes the connection. */
size_t zl_ws_response_refuse(char *buf, size_t cap, int status);

/* The client's request for path on host, offering ZWS2.0/NULL then
 * ZWS2.0, with key (ZL_WS_KEY_LEN characters). Its length, or 0. */
size_t zl_ws_request_build(char *buf, size_t cap, const char *host,
                           const char *path, const char *key);

/* Parses the server's answer to our request with key. Returns the length
 * of its header block when it accepted us (*framing then says how ZMTP
 * travels), 0 while incomplete, ZL_WS_NOT_FOUND when nothing is bound at
 * the path, -1 when it refused us otherwise or broke the protocol. */
#define ZL_WS_NOT_FOUND (-2)
int zl_ws_response_parse(const uint8_t *buf, size_t len, const char *key,
                         zl_framing *framing);

/* base64(SHA-1(key + the RFC's GUID)) into out (ZL_WS_ACCEPT_LEN + 1). */
int zl_ws_accept_hash(const char *key, char *out);

/* A fresh random key (ZL_WS_KEY_LEN + 1 bytes with the NUL). */
int zl_ws_key_generate(char *out);

#endif
