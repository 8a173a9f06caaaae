/* ctx.c — zlink_ctx_*: creating the context, its I/O threads and reaper,
 * and the order of shutdown (ETERM, then wait for every socket). */
#include "ctx.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "socket.h"
#include "thread.h"
#include "transport/inproc.h"
#include "transport/resolver.h"
#include "zlink.h"

static zl_ctx *ctx_from_handle(void *handle)
{
    zl_ctx *ctx = handle;
    if (!ctx || ctx->magic != ZL_CTX_MAGIC) {
        errno = EFAULT;
        return NULL;
    }
    return ctx;
}

static void reaper_signal(void *arg)
{
    zl_ctx *ctx = arg;
    uv_mutex_lock(&ctx->reaper_lock);
    ctx->reaper_dirty = true;
    uv_cond_signal(&ctx->reaper_cond);
    uv_mutex_unlock(&ctx->reaper_lock);
}

static void socket_gone(zl_ctx *ctx)
{
    uv_mutex_lock(&ctx->lock);
    ctx->live_sockets--;
    uv_cond_broadcast(&ctx->all_gone);
    if (ctx->live_sockets == 0 && ctx->term_waiter)
        zl_sleeper_raise(ctx->term_waiter);
    uv_mutex_unlock(&ctx->lock);
}

/* Drains every closed socket's mailbox and frees those with nothing left. */
static void reap_pass(zl_ctx *ctx)
{
    uv_mutex_lock(&ctx->reaper_lock);
    size_t i = 0;
    while (i < ctx->zombie_count) {
        zl_socket *s = ctx->zombies[i];
        uv_mutex_unlock(&ctx->reaper_lock);
        zl_cmd cmd;
        while (zl_mailbox_recv(&s->mailbox, &cmd))
            zl_socket_handle_command(s, &cmd);
        bool done = zl_socket_reapable(s);
        uv_mutex_lock(&ctx->reaper_lock);
        if (done) {
            ctx->zombies[i] = ctx->zombies[--ctx->zombie_count];
            uv_mutex_unlock(&ctx->reaper_lock);
            zl_socket_destroy(s);
            socket_gone(ctx);
            uv_mutex_lock(&ctx->reaper_lock);
        } else {
            i++;
        }
    }
    uv_mutex_unlock(&ctx->reaper_lock);
}

static void reaper_main(void *arg)
{
    zl_ctx *ctx = arg;
    uv_mutex_lock(&ctx->reaper_lock);
    while (!ctx->reaper_stop) {
        while (!ctx->reaper_dirty && !ctx->reaper_stop)
            uv_cond_wait(&ctx->reaper_cond, &ctx->reaper_lock);
        ctx->reaper_dirty = false;
        uv_mutex_unlock(&ctx->reaper_lock);
        reap_pass(ctx);
        uv_mutex_lock(&ctx->reaper_lock);
    }
    uv_mutex_unlock(&ctx->reaper_lock);
}

void zl_ctx_reap(zl_ctx *ctx, zl_socket *s)
{
    /* Redirect first: once listed, the reaper may free the socket at any
     * moment. */
    zl_mailbox_set_signal(&s->mailbox, reaper_signal, ctx);
    uv_mutex_lock(&ctx->reaper_lock);
    if (ctx->zombie_count == ctx->zombie_capacity) {
        size_t cap = ctx->zombie_capacity ? ctx->zombie_capacity * 2 : 16;
        zl_socket **grown = realloc(ctx->zombies, cap * sizeof *grown);
        if (!grown)
            abort(); /* cannot keep the socket nor free it safely */
        ctx->zombies = grown;
        ctx->zombie_capacity = cap;
    }
    ctx->zombies[ctx->zombie_count++] = s;
    ctx->reaper_dirty = true;
    uv_cond_signal(&ctx->reaper_cond);
    uv_mutex_unlock(&ctx->reaper_lock);
}

bool zl_ctx_terminating(const zl_ctx *ctx)
{
    return atomic_load(&ctx->terminating);
}

struct zl_inproc_registry *zl_ctx_inproc(zl_ctx *ctx)
{
    return ctx->inproc;
}

struct zl_resolver *zl_ctx_resolver(zl_ctx *ctx)
{
    uv_mutex_lock(&ctx->lock);
    if (!ctx->resolver)
        ctx->resolver = zl_resolver_new();
    zl_resolver *r = ctx->resolver;
    uv_mutex_unlock(&ctx->lock);
    return r;
}

zl_io_thread *zl_ctx_choose_thread(zl_ctx *ctx, uint64_t affinity)
{
    zl_io_thread *best = NULL;
    for (int i = 0; i < ctx->io_thread_count; i++) {
        if (affinity && (i >= 64 || !(affinity & ((uint64_t)1 << i))))
            continue;
        if (!best ||
            atomic_load(&ctx->threads[i].load) < atomic_load(&best->load))
            best = &ctx->threads[i];
    }
    if (!best)
        errno = EMTHREAD;
    return best;
}

bool zl_ctx_shares_cpu_with_io(const zl_ctx *ctx)
{
    int cpu = zl_thread_cpu();
    if (cpu < 0)
        return true; /* the OS cannot say: assume the worst */
    if (!ctx->threads)
        return false;
    for (int i = 0; i < ctx->io_thread_count; i++)
        if (atomic_load_explicit(&ctx->threads[i].cpu, memory_order_relaxed) ==
            cpu)
            return true;
    return false;
}

void *zlink_ctx_new(void)
{
    if (zl_backend_global_init() != 0) {
        errno = ENOMEM;
        return NULL;
    }
    zl_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        zl_backend_global_term();
        errno = ENOMEM;
        return NULL;
    }
    ctx->inproc = zl_inproc_registry_new();
    if (!ctx->inproc) {
        free(ctx);
        zl_backend_global_term();
        errno = ENOMEM;
        return NULL;
    }
    ctx->magic = ZL_CTX_MAGIC;
    ctx->io_thread_count = ZLINK_IO_THREADS_DFLT;
    ctx->max_sockets = ZLINK_MAX_SOCKETS_DFLT;
    atomic_init(&ctx->spin_budget_ns, ZLINK_SPIN_BUDGET_DFLT * 1000u);
    ctx->blocky = true;
    ctx->max_msgsz = INT_MAX;
    ctx->thread_config.sched_policy = ZLINK_THREAD_SCHED_POLICY_DFLT;
    ctx->thread_config.priority = ZLINK_THREAD_PRIORITY_DFLT;
    uv_mutex_init(&ctx->lock);
    zl_sleeper_pool_init(&ctx->sleepers);
    uv_cond_init(&ctx->all_gone);
    uv_mutex_init(&ctx->reaper_lock);
    uv_cond_init(&ctx->reaper_cond);
    if (zl_thread_create(&ctx->reaper, reaper_main, ctx) != 0) {
        uv_cond_destroy(&ctx->reaper_cond);
        uv_mutex_destroy(&ctx->reaper_lock);
        uv_cond_destroy(&ctx->all_gone);
        zl_sleeper_pool_destroy(&ctx->sleepers);
        uv_mutex_destroy(&ctx->lock);
        zl_inproc_registry_destroy(ctx->inproc);
        free(ctx);
        zl_backend_global_term();
        errno = EMTHREAD;
        return NULL;
    }
    return ctx;
}

/* Starts the I/O threads at the first socket, so that ZLINK_IO_THREADS can
 * be set before. Called with ctx->lock held. */
static int start_locked(zl_ctx *ctx)
{
    if (ctx->started)
        return 0;
    if (ctx->io_thread_count == 0) {
        ctx->started = true; /* inproc only */
        return 0;
    }
    size_t bytes = (size_t)ctx->io_thread_count * sizeof *ctx->threads;
    ctx->threads = zl_cache_aligned_alloc(bytes);
    if (!ctx->threads) {
        errno = ENOMEM;
        return -1;
    }
    memset(ctx->threads, 0, bytes);
    for (int i = 0; i < ctx->io_thread_count; i++) {
        if (zl_io_thread_start(&ctx->threads[i], i, &ctx->thread_config) != 0) {
            while (i-- > 0)
                zl_io_thread_stop(&ctx->threads[i]);
            zl_cache_aligned_free(ctx->threads);
            ctx->threads = NULL;
            errno = EMTHREAD;
            return -1;
        }
        zl_io_thread_set_spin_budget(&ctx->threads[i],
                                     zl_ctx_spin_budget_ns(ctx));
    }
    ctx->started = true;
    return 0;
}

int zl_ctx_add_socket(zl_ctx *ctx, zl_socket *s)
{
    int rc = -1;
    uv_mutex_lock(&ctx->lock);
    if (atomic_load(&ctx->terminating)) {
        errno = ETERM;
    } else if (ctx->socket_count >= (size_t)ctx->max_sockets) {
        errno = EMFILE;
    } else if (start_locked(ctx) == 0) {
        zl_socket **grown =
            realloc(ctx->sockets, (ctx->socket_count + 1) * sizeof *grown);
        if (!grown) {
            errno = ENOMEM;
        } else {
            ctx->sockets = grown;
            s->ctx_slot = ctx->socket_count;
            ctx->sockets[ctx->socket_count++] = s;
            ctx->live_sockets++;
            /* BLOCKY 0: sockets never hold zlink_ctx_term up (libzmq). */
            if (!ctx->blocky)
                s->options.linger = 0;
            s->options.ipv6 = ctx->ipv6;
            rc = 0;
        }
    }
    uv_mutex_unlock(&ctx->lock);
    return rc;
}

void zl_ctx_remove_socket(zl_ctx *ctx, zl_socket *s)
{
    uv_mutex_lock(&ctx->lock);
    zl_socket *last = ctx->sockets[--ctx->socket_count];
    ctx->sockets[s->ctx_slot] = last;
    last->ctx_slot = s->ctx_slot;
    uv_mutex_unlock(&ctx->lock);
}

int zlink_ctx_shutdown(void *handle)
{
    zl_ctx *ctx = ctx_from_handle(handle);
    if (!ctx)
        return -1;
    uv_mutex_lock(&ctx->lock);
    atomic_store(&ctx->terminating, true);
    /* Wake every blocked call so it sees ETERM. */
    for (size_t i = 0; i < ctx->socket_count; i++)
        zl_socket_wake(ctx->sockets[i]);
    uv_mutex_unlock(&ctx->lock);
    return 0;
}

/* Waits until every socket is closed and reaped. A signal ends the wait
 * with -EINTR, as libzmq's: a second Ctrl-C still ends a program whose
 * sockets linger forever. The context stays valid and shut down, and
 * zlink_ctx_term may be called again. Without a sleeper to spare (no fd
 * left), it waits on the condition, which no signal ends. */
static int wait_for_sockets(zl_ctx *ctx)
{
    zl_sleeper *w = zl_sleeper_take(&ctx->sleepers);
    int rc = 0;
    uv_mutex_lock(&ctx->lock);
    ctx->term_waiter = w;
    while (ctx->live_sockets > 0 && w && rc == 0) {
        uv_mutex_unlock(&ctx->lock);
        rc = zl_sleeper_wait(w, -1);
        if (rc == 0)
            zl_sleeper_woken(w);
        uv_mutex_lock(&ctx->lock);
    }
    ctx->term_waiter = NULL;
    if (rc != -EINTR)
        while (ctx->live_sockets > 0)
            uv_cond_wait(&ctx->all_gone, &ctx->lock);
    bool interrupted = ctx->live_sockets > 0;
    uv_mutex_unlock(&ctx->lock);
    if (w)
        zl_sleeper_give(&ctx->sleepers, w);
    return interrupted ? -EINTR : 0;
}

int zlink_ctx_term(void *handle)
{
    zl_ctx *ctx = ctx_from_handle(handle);
    if (!ctx)
        return -1;
    zlink_ctx_shutdown(ctx);
    if (wait_for_sockets(ctx) != 0) {
        errno = EINTR;
        return -1;
    }

    uv_mutex_lock(&ctx->reaper_lock);
    ctx->reaper_stop = true;
    uv_cond_signal(&ctx->reaper_cond);
    uv_mutex_unlock(&ctx->reaper_lock);
    uv_thread_join(&ctx->reaper);

    if (ctx->threads) {
        for (int i = 0; i < ctx->io_thread_count; i++)
            zl_io_thread_stop(&ctx->threads[i]);
        zl_cache_aligned_free(ctx->threads);
    }
    /* After the I/O threads: every session has cancelled its lookup. */
    zl_resolver_destroy(ctx->resolver);
    zl_inproc_registry_destroy(ctx->inproc);
    zl_sleeper_pool_destroy(&ctx->sleepers);
    free(ctx->zombies);
    free(ctx->sockets);
    uv_cond_destroy(&ctx->reaper_cond);
    uv_mutex_destroy(&ctx->reaper_lock);
    uv_cond_destroy(&ctx->all_gone);
    uv_mutex_destroy(&ctx->lock);
    ctx->magic = 0;
    free(ctx);
    zl_backend_global_term();
    return 0;
}

/* ZLINK_SPIN_BUDGET, in µs: the application threads read it at each
 * wait, the I/O threads' loops are told. Called with ctx->lock held. */
static int set_spin_budget_locked(zl_ctx *ctx, int us)
{
    if (us < 0 || us > 1000000) {
        errno = EINVAL;
        return -1;
    }
    uint32_t ns = (uint32_t)us * 1000u;
    atomic_store_explicit(&ctx->spin_budget_ns, ns, memory_order_relaxed);
    if (ctx->started)
        for (int i = 0; i < ctx->io_thread_count; i++)
            zl_io_thread_set_spin_budget(&ctx->threads[i], ns);
    return 0;
}

int zlink_ctx_set(void *handle, int option, int value)
{
    zl_ctx *ctx = ctx_from_handle(handle);
    if (!ctx)
        return -1;
    int rc = 0;
    uv_mutex_lock(&ctx->lock);
    switch (option) {
    case ZLINK_IO_THREADS:
        /* 0: inproc only. Once the first socket started the threads, a
         * new count is taken and ignored, as libzmq does. */
        if (value < 0) {
            errno = EINVAL;
            rc = -1;
        } else if (!ctx->started) {
            ctx->io_thread_count = value;
        }
        break;
    case ZLINK_MAX_SOCKETS:
        if (value < 1 || (size_t)value < ctx->socket_count) {
            errno = EINVAL;
            rc = -1;
        } else {
            ctx->max_sockets = value;
        }
        break;
    case ZLINK_SPIN_BUDGET:
        rc = set_spin_budget_locked(ctx, value);
        break;
    default:
        rc = zl_ctx_option_set(ctx, option, value);
    }
    uv_mutex_unlock(&ctx->lock);
    return rc;
}

int zlink_ctx_get(void *handle, int option)
{
    zl_ctx *ctx = ctx_from_handle(handle);
    if (!ctx)
        return -1;
    switch (option) {
    case ZLINK_IO_THREADS:
        return ctx->io_thread_count;
    case ZLINK_MAX_SOCKETS:
        return ctx->max_sockets;
    case ZLINK_SOCKET_LIMIT:
        return 65535;
    case ZLINK_MSG_T_SIZE:
        return (int)sizeof(zlink_msg_t);
    case ZLINK_SPIN_BUDGET:
        return (int)(zl_ctx_spin_budget_ns(ctx) / 1000u);
    default: {
        int value = -1;
        uv_mutex_lock(&ctx->lock);
        int rc = zl_ctx_option_get(ctx, option, &value);
        uv_mutex_unlock(&ctx->lock);
        return rc == 0 ? value : -1;
    }
    }
}
