/* thread.c — starting the threads zlink owns (thread.h). */
#include "thread.h"

#include "backend.h"

int zl_thread_create(uv_thread_t *thread, uv_thread_cb entry, void *arg)
{
    /* The new thread inherits the mask it starts with: blocked here, no
     * signal can reach it before it runs, as it could if it blocked them
     * itself. */
    zl_signal_mask saved;
    zl_signals_block_all(&saved);
    int rc = uv_thread_create(thread, entry, arg);
    zl_signals_restore(&saved);
    return rc;
}
