/* thread_start.c — zlink_threadstart and zlink_threadclose: libzmq's
 * portable thread helpers, on libuv. Their threads take no signals, as
 * libzmq's (thread.h). */
#include <stdlib.h>
#include <uv.h>

#include "thread.h"
#include "zlink.h"

typedef struct started_thread {
    uv_thread_t thread;
    zlink_thread_fn *func;
    void *arg;
} started_thread;

static void thread_main(void *arg)
{
    started_thread *t = arg;
    t->func(t->arg);
}

void *zlink_threadstart(zlink_thread_fn *func, void *arg)
{
    if (!func)
        return NULL;
    started_thread *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    t->func = func;
    t->arg = arg;
    if (zl_thread_create(&t->thread, thread_main, t) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

void zlink_threadclose(void *thread)
{
    started_thread *t = thread;
    if (!t)
        return;
    uv_thread_join(&t->thread);
    free(t);
}
