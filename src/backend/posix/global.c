/* global.c — process-wide set-up of the POSIX backends (epoll, kqueue):
 * nothing to do, but refcounted like the backends that need it. */
#include "atomics.h"
#include "backend.h"

static atomic_int users;

int zl_backend_global_init(void)
{
    atomic_fetch_add(&users, 1);
    return 0;
}

void zl_backend_global_term(void)
{
    atomic_fetch_sub(&users, 1);
}

const char *zl_backend_name(void)
{
    return ZL_BACKEND_NAME;
}

int zl_backend_has_ipc(void)
{
    return 1;
}
