/* defaults.c — the contract's calls that are another call with default
 * settings, written once for every backend. */
#include "backend.h"

#include <stddef.h>

zl_handle *zl_handle_connect(zl_loop *loop, const zl_addr *addr, zl_op *op,
                             int *err)
{
    return zl_handle_connect_ex(loop, addr, NULL, NULL, op, err);
}

int zl_listener_open(zl_loop *loop, const zl_addr *addr, int backlog,
                     zl_listener **out)
{
    return zl_listener_open_ex(loop, addr, backlog, NULL, out);
}
