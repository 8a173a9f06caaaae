/* sleeper.c — the sleepers of a context: a pool of signalers, each raised
 * at most once per sleep (sleeper.h). */
#include "sleeper.h"

#include <errno.h>
#include <stdlib.h>

void zl_sleeper_pool_init(zl_sleeper_pool *pool)
{
    uv_mutex_init(&pool->lock);
    pool->free_list = NULL;
    pool->all = NULL;
}

void zl_sleeper_pool_destroy(zl_sleeper_pool *pool)
{
    zl_sleeper *w = pool->all;
    while (w) {
        zl_sleeper *next = w->all;
        zl_sleeper_close(w);
        free(w);
        w = next;
    }
    pool->all = NULL;
    pool->free_list = NULL;
    uv_mutex_destroy(&pool->lock);
}

int zl_sleeper_init(zl_sleeper *w)
{
    atomic_init(&w->raised, false);
    w->next = NULL;
    w->all = NULL;
    int rc = zl_signaler_init(&w->signaler);
    return rc == 0 ? 0 : rc < 0 ? rc : -EMFILE;
}

void zl_sleeper_close(zl_sleeper *w)
{
    zl_signaler_close(&w->signaler);
}

static zl_sleeper *create(zl_sleeper_pool *pool)
{
    zl_sleeper *w = malloc(sizeof *w);
    if (!w) {
        errno = ENOMEM;
        return NULL;
    }
    int rc = zl_sleeper_init(w);
    if (rc != 0) {
        free(w);
        errno = -rc;
        return NULL;
    }
    w->all = pool->all;
    pool->all = w;
    return w;
}

zl_sleeper *zl_sleeper_take(zl_sleeper_pool *pool)
{
    uv_mutex_lock(&pool->lock);
    zl_sleeper *w = pool->free_list;
    if (w)
        pool->free_list = w->next;
    else
        w = create(pool);
    uv_mutex_unlock(&pool->lock);
    return w;
}

void zl_sleeper_give(zl_sleeper_pool *pool, zl_sleeper *w)
{
    /* A raise that came after the last look: consumed now, so that the
     * next user does not wake for it. One that is still on its way lands
     * later and costs that user one spurious wakeup, never a lost one. */
    if (atomic_load_explicit(&w->raised, memory_order_relaxed))
        zl_sleeper_woken(w);
    uv_mutex_lock(&pool->lock);
    w->next = pool->free_list;
    pool->free_list = w;
    uv_mutex_unlock(&pool->lock);
}

void zl_sleeper_raise(zl_sleeper *w)
{
    if (!atomic_exchange_explicit(&w->raised, true, memory_order_acq_rel))
        zl_signaler_send(&w->signaler);
}

void zl_sleeper_signal(zl_sleeper *w)
{
    zl_signaler_send(&w->signaler);
}

void zl_sleeper_woken(zl_sleeper *w)
{
    /* The handle first, then the flag: a raise that finds the flag still
     * set made no system call, and the owner, which looks at its sockets
     * after this, finds its command. The other order could consume a raise
     * whose flag stays set, and every later raise would then be silent. */
    zl_signaler_reset(&w->signaler);
    atomic_store_explicit(&w->raised, false, memory_order_seq_cst);
}

int zl_sleeper_wait(zl_sleeper *w, int timeout_ms)
{
    return zl_signaler_wait(&w->signaler, timeout_ms);
}
