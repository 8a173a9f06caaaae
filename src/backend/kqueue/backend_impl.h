/* backend_impl.h — the kqueue backend's parts of the public backend types:
 * the private state of an op (shared with epoll) and the pipe signaler.
 * Included by backend.h after its typedefs. */
#ifndef ZL_KQUEUE_BACKEND_IMPL_H
#define ZL_KQUEUE_BACKEND_IMPL_H

#include "op_impl.h"

#define ZL_BACKEND_NAME "kqueue"
/* zl_handle_try_write works from any thread. */
#define ZL_BACKEND_TRY_WRITE 1
/* zl_handle_try_read and zl_handle_watch_input work from any thread. */
#define ZL_BACKEND_TRY_READ 1

/* A pipe: macOS has no eventfd. fds[0] is the end that is polled. */
struct zl_signaler {
    int fds[2];
};

#endif
