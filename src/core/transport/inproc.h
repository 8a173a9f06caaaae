/* inproc.h — inproc endpoints: two sockets' pipes joined directly, with no
 * I/O thread and no copy. Bind and connect may come in either order. */
#ifndef ZL_INPROC_H
#define ZL_INPROC_H

#include "pipe.h"

struct zl_socket;
struct zl_ctx;

int zl_inproc_bind(struct zl_socket *s, const char *name);
/* Creates the pipe at once (messages queue until the name is bound) and
 * returns our end. */
int zl_inproc_connect(struct zl_socket *s, const char *name, zl_pipe **ours);
void zl_inproc_unbind(struct zl_socket *s, const char *name);
void zl_inproc_unbind_all(struct zl_socket *s);
void zl_inproc_registry_destroy(struct zl_ctx *ctx);

#endif
