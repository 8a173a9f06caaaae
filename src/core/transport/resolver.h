/* resolver.h — looks up a connect's host name away from the I/O threads.
 * A connect by name resolves again at each attempt, as libzmq's does, so
 * that a name which does not resolve yet, or comes to name another
 * address, is followed; a slow DNS server stalls no connection. */
#ifndef ZL_RESOLVER_H
#define ZL_RESOLVER_H

#include <stdbool.h>

#include "os_types.h"

struct zl_io_thread;
typedef struct zl_resolver zl_resolver;
typedef struct zl_lookup zl_lookup;

/* status is 0 and addr the address, or an errno (ENODEV: no such host). */
typedef void (*zl_lookup_done_fn)(void *owner, int status, const zl_addr *addr);

/* The resolver's thread starts with its first lookup. NULL without memory. */
zl_resolver *zl_resolver_new(void);
/* Waits for the lookup in progress, if any, and frees the rest. Every
 * lookup's owner must have had done called or cancelled it before. */
void zl_resolver_destroy(zl_resolver *r);

/* Looks up "host:port" as zl_tcp_resolve does for a connect. done(owner,
 * ...) runs later on thread, unless zl_lookup_cancel comes first. NULL
 * (errno set) when it cannot be started. */
zl_lookup *zl_lookup_start(zl_resolver *r, struct zl_io_thread *thread,
                           const char *hostport, bool ipv6,
                           zl_lookup_done_fn done, void *owner);
/* On the owner's thread, before done has run: done will not run. */
void zl_lookup_cancel(zl_lookup *l);

#endif
