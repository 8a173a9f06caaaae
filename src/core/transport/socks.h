/* socks.h — the client's side of SOCKS5 (RFC 1928, with RFC 1929's
 * username/password) as pure functions over buffers: what to send, how
 * many bytes to read next, and what the proxy's answers mean. The I/O that
 * drives it is socks_connect.c. Every byte from the proxy is untrusted. */
#ifndef ZL_SOCKS_H
#define ZL_SOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest host a CONNECT request carries: a name of 255 bytes. */
#define ZL_SOCKS_HOST_MAX 255
/* The longest username or password (RFC 1929). */
#define ZL_SOCKS_CREDENTIAL_MAX 255
/* VER CMD RSV ATYP, a name with its length byte, the port. */
#define ZL_SOCKS_REQUEST_MAX (4 + 1 + ZL_SOCKS_HOST_MAX + 2)
/* The proxy's reply to it, which has the same shape. */
#define ZL_SOCKS_REPLY_MAX ZL_SOCKS_REQUEST_MAX
/* VER ULEN UNAME PLEN PASSWD. */
#define ZL_SOCKS_AUTH_MAX (3 + 2 * ZL_SOCKS_CREDENTIAL_MAX)

/* The CONNECT request for "host:port" or "[v6]:port": an IPv4 literal goes
 * as ATYP 1, an IPv6 literal as ATYP 4 and anything else, unresolved, as a
 * name (ATYP 3), as libzmq's socks_request_encoder. Returns its length, or
 * -1 when hostport is malformed or its host is longer than 255 bytes. */
int zl_socks_encode_request(uint8_t *buf, size_t cap, const char *hostport);

typedef enum zl_socks_state {
    ZL_SOCKS_CHOICE, /* reading the method the proxy chose */
    ZL_SOCKS_AUTH,   /* reading the username/password verdict */
    ZL_SOCKS_REPLY,  /* reading the CONNECT reply */
    ZL_SOCKS_DONE,   /* connected through; what follows is the peer's */
    ZL_SOCKS_FAILED  /* the proxy refused, or broke the protocol */
} zl_socks_state;

typedef struct zl_socks_client {
    zl_socks_state state;
    bool offer_auth;
    /* What waits to be sent (greeting, credentials, request), or none. */
    const uint8_t *send;
    size_t send_len;
    uint8_t greeting[4];
    size_t greeting_len;
    uint8_t auth[ZL_SOCKS_AUTH_MAX];
    size_t auth_len;
    uint8_t request[ZL_SOCKS_REQUEST_MAX];
    size_t request_len;
    /* The answer being read, from its first byte. */
    uint8_t in[ZL_SOCKS_REPLY_MAX];
    size_t in_len;
} zl_socks_client;

/* Prepares a CONNECT to hostport, the greeting ready to send. A non-empty
 * username offers username/password besides no authentication, as libzmq
 * 4.3.4; NULL and "" offer no authentication only. -1 when hostport cannot
 * be encoded or a credential is longer than 255 bytes. */
int zl_socks_client_init(zl_socks_client *c, const char *hostport,
                         const char *username, const char *password);
/* The bytes in c->send were written: next comes a read. */
void zl_socks_client_sent(zl_socks_client *c);
/* Where the next read goes, and how much it may take: exactly what the
 * answer still lacks, so that nothing past the proxy's reply (the peer's
 * first bytes) is ever consumed. */
size_t zl_socks_client_want(zl_socks_client *c, uint8_t **buf);
/* n bytes (at most what zl_socks_client_want allowed) came into its
 * buffer. Returns the new state; c->send holds what to write next, if
 * anything. */
zl_socks_state zl_socks_client_received(zl_socks_client *c, size_t n);

#endif
