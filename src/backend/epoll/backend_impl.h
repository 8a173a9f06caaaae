/* backend_impl.h — the epoll backend's parts of the public backend types:
 * the private state of an op (shared with kqueue) and the eventfd signaler.
 * Included by backend.h after its typedefs. */
#ifndef ZL_EPOLL_BACKEND_IMPL_H
#define ZL_EPOLL_BACKEND_IMPL_H

#include "op_impl.h"

#define ZL_BACKEND_NAME "epoll"
/* zl_handle_try_write works from any thread. */
#define ZL_BACKEND_TRY_WRITE 1
/* zl_handle_try_read and zl_handle_watch_input work from any thread. */
#define ZL_BACKEND_TRY_READ 1

struct zl_signaler {
    int fd; /* eventfd */
};

#endif
