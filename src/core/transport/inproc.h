/* inproc.h — inproc endpoints: two sockets' pipes joined directly, with no
 * I/O thread and no copy. Bind and connect may come in either order. */
#ifndef ZL_INPROC_H
#define ZL_INPROC_H

#include "pipe.h"

struct zl_socket;

/* The names of one context, owned by it (zl_ctx_inproc). */
typedef struct zl_inproc_registry zl_inproc_registry;

zl_inproc_registry *zl_inproc_registry_new(void);
/* Drops every name, and the pipes of connects that never met a bind. */
void zl_inproc_registry_destroy(zl_inproc_registry *r);

int zl_inproc_bind(struct zl_socket *s, const char *name);
/* Creates the pipe at once (messages queue until the name is bound) and
 * returns our end. */
int zl_inproc_connect(struct zl_socket *s, const char *name, zl_pipe **ours);
/* A pipe from something that is not a socket (a session asking the ZAP
 * handler) to the socket bound at name, which gets the other end; ours is
 * owned by owner through mailbox. -1 with ECONNREFUSED when nothing is
 * bound there: unlike a socket's connect, this one does not wait. */
int zl_inproc_connect_pipe(zl_inproc_registry *r, const char *name,
                           zl_mailbox *mailbox, void *owner, zl_pipe **ours);
void zl_inproc_unbind(struct zl_socket *s, const char *name);
void zl_inproc_unbind_all(struct zl_socket *s);

#endif
