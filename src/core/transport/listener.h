/* listener.h — a bound tcp or ipc endpoint on an I/O thread: accepts
 * connections and owns the sessions it accepted. */
#ifndef ZL_LISTENER_H
#define ZL_LISTENER_H

#include "backend.h"
#include "io_thread.h"
#include "options.h"
#include "transport/address.h"

struct zl_socket;
struct zl_session;

typedef struct zl_listener_object zl_listener_object;

/* Binds synchronously on the application thread so errors reach
 * zlink_bind; the object starts accepting at PLUG. Writes the resolved
 * endpoint into endpoint_out. -1 with errno on failure. */
int zl_listener_object_create(struct zl_socket *socket, zl_io_thread *thread,
                              const zl_addr *addr, zl_transport transport,
                              const char *ipc_tmpdir, char *endpoint_out,
                              size_t endpoint_cap, zl_listener_object **out);
void zl_listener_child_gone(zl_listener_object *l, struct zl_session *s);

#endif
