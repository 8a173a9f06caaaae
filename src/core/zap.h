/* zap.h — one ZAP exchange (rfc.zeromq.org spec 27) for a connection whose
 * peer must be authenticated: the request written to the handler the
 * application bound at inproc://zeromq.zap.01, and its reply read back. */
#ifndef ZL_ZAP_H
#define ZL_ZAP_H

#include <stddef.h>
#include <stdint.h>

#include "pipe.h"

#define ZL_ZAP_ENDPOINT "zeromq.zap.01"

typedef struct zl_zap_request {
    const char *domain;      /* ZAP_DOMAIN; "" when unset */
    const char *address;     /* the peer's address, as Peer-Address */
    const zl_blob *identity; /* our ROUTING_ID; NULL when unset */
    const char *mechanism;   /* "PLAIN", "CURVE" or "NULL" */
    const zl_blob *username; /* PLAIN's credentials; NULL otherwise */
    const zl_blob *password;
    const uint8_t *curve_key; /* CURVE's: the client's 32-byte public key */
} zl_zap_request;

typedef struct zl_zap_reply {
    int status;           /* 200, 300, 400 or 500 */
    zl_blob user_id;      /* User-Id for the connection's messages */
    zlink_msg_t metadata; /* properties for them too; the caller closes it */
} zl_zap_reply;

/* Writes the request on p, our end of a pipe to the handler. Returns false
 * without memory. */
bool zl_zap_send_request(zl_pipe *p, const zl_zap_request *r);

typedef enum zl_zap_read {
    ZL_ZAP_PENDING, /* nothing yet: p sleeps until ACTIVATE_READ */
    ZL_ZAP_REPLY,   /* *out holds a well-formed reply */
    ZL_ZAP_BAD      /* *reason says why (ZLINK_PROTOCOL_ERROR_ZAP_*) */
} zl_zap_read;

/* Reads the handler's reply from p. A handler that went away without one
 * is ZL_ZAP_BAD with reason ZLINK_PROTOCOL_ERROR_ZAP_UNSPECIFIED. */
zl_zap_read zl_zap_read_reply(zl_pipe *p, zl_zap_reply *out, uint32_t *reason);

#endif
