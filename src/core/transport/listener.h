/* listener.h — a bound endpoint on an I/O thread: accepts connections (or,
 * for a ws path, is handed them) and owns the sessions it accepted. */
#ifndef ZL_LISTENER_H
#define ZL_LISTENER_H

#include <stdbool.h>

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

/* ---- routed listeners: a ws path on a port that sockets share ----
 * detach asks the port to forget l (on l's I/O thread, at term): true when
 * it has, false when the port calls zl_listener_object_detached later. */
struct zl_stream;
typedef bool (*zl_listener_detach_fn)(void *arg, zl_listener_object *l);
int zl_listener_object_create_routed(struct zl_socket *socket,
                                     zl_io_thread *thread, const char *endpoint,
                                     zl_listener_detach_fn detach,
                                     void *detach_arg,
                                     zl_listener_object **out);
void zl_listener_object_detached(zl_listener_object *l);
/* A connection the port upgraded for our path: a session takes it, with
 * what the upgrade took already spent of HANDSHAKE_IVL. */
void zl_listener_object_adopt(zl_listener_object *l, struct zl_stream *stream,
                              uint64_t handshake_spent_ms);
const zl_options *zl_listener_object_options(const zl_listener_object *l);
struct zl_socket *zl_listener_object_socket(const zl_listener_object *l);
const char *zl_listener_object_endpoint(const zl_listener_object *l);
/* The listening OS socket, as libzmq's LISTENING and CLOSED values (0 for
 * a routed one: the port's socket is shared). */
uint64_t zl_listener_object_fd(const zl_listener_object *l);

#endif
