/* tls_stream.h — the TLS filter: a zl_stream that runs mbedTLS over memory
 * buffers on top of a lower stream (a tcp handle for tls://, or whatever
 * carries wss://), so it never touches a socket (DESIGN.md §4). */
#ifndef ZL_TLS_STREAM_H
#define ZL_TLS_STREAM_H

#include <stdbool.h>

#include "options.h"
#include "transport/stream.h"

/* A TLS stream over lower, which it takes over (closing it when it
 * closes). options must have been prepared for this role
 * (zl_tls_settings_prepare, done by bind and connect). client: we send the
 * ClientHello; hostname: the name for SNI and the certificate check when
 * ZLINK_TLS_HOSTNAME is unset; endpoint: the client's host:port, where a
 * session kept from an earlier connection to the same name and endpoint
 * is offered again (NULL: none). NULL with *err set (an errno value) when
 * it cannot be made; lower is still the caller's then. */
zl_stream *zl_tls_stream_create(zl_loop *loop, zl_stream *lower,
                                const zl_options *options, bool client,
                                const char *hostname, const char *endpoint,
                                int *err);

/* Client handshakes that resumed a kept session, since the process began
 * (for tests). */
unsigned zl_tls_resumed_total(void);
/* TLS connections whose mbedTLS context was set up, in this process (for
 * tests: a server's waits for the peer's first bytes). */
unsigned zl_tls_setups_total(void);
/* Handshakes after which zlink sealed and opened the records itself
 * (tls_record.h), since the process began (for tests). */
unsigned zl_tls_own_records_total(void);

#endif
