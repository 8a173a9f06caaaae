/* socks_connect.h — the SOCKS5 exchange (transport/socks.h) on a freshly
 * connected handle, which a connecting session runs before its engine
 * when ZLINK_SOCKS_PROXY is set. */
#ifndef ZL_SOCKS_CONNECT_H
#define ZL_SOCKS_CONNECT_H

#include "backend.h"

/* status: 0 when the proxy connected us through to the peer, ZL_ECANCELED
 * when the handle was cancelled or closed, or another negative value when
 * the proxy refused, broke the protocol or went away. */
typedef void (*zl_socks_done_fn)(void *owner, int status);

/* Asks the proxy on h to connect to hostport, with RFC 1929 credentials
 * when username is not empty. h stays the caller's: closing or cancelling
 * it ends the exchange. done(owner, status) runs once, from the loop,
 * never inside this call; the exchange is freed before it runs. -1 with
 * errno (EINVAL, ENOMEM) when it cannot start: done will not run. */
int zl_socks_connect_start(zl_handle *h, const char *hostport,
                           const char *username, const char *password,
                           zl_socks_done_fn done, void *owner);

#endif
