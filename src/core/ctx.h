/* ctx.h — the context: I/O threads, the reaper of closed sockets, the
 * inproc endpoint registry, the list of live sockets, and the sleepers of
 * the threads that wait for them. */
#ifndef ZL_CTX_H
#define ZL_CTX_H

#include <stdbool.h>
#include <uv.h>

#include "atomics.h"
#include "io_thread.h"
#include "pipe.h"
#include "sleeper.h"

struct zl_socket;

#define ZL_CTX_MAGIC 0x7a6c6378u /* "zlcx" */

typedef struct zl_ctx {
    uint32_t magic;
    uv_mutex_t lock;
    int io_thread_count;
    int max_sockets;
    /* Context options (ctx_options.c): the defaults of new sockets and
     * what I/O threads are started with. */
    bool blocky, ipv6;
    int max_msgsz; /* ZLINK_MAX_MSGSZ */
    zl_io_thread_config thread_config;
    zl_io_thread *threads;
    bool started;
    atomic_bool terminating;
    /* ZLINK_SPIN_BUDGET in ns; by terminating, which every send and
     * receive reads too. */
    atomic_uint spin_budget_ns;
    atomic_uint next_thread;

    struct zl_socket **sockets; /* open, not yet closed by the application */
    size_t socket_count;
    size_t live_sockets; /* open + closed but not yet reaped */
    uv_cond_t all_gone;
    /* Raised when live_sockets reaches 0, while zlink_ctx_term waits on
     * it (under lock). */
    struct zl_sleeper *term_waiter;

    /* The reaper: frees closed sockets once their I/O objects are gone. */
    uv_thread_t reaper;
    uv_mutex_t reaper_lock;
    uv_cond_t reaper_cond;
    bool reaper_dirty, reaper_stop;
    struct zl_socket **zombies;
    size_t zombie_count, zombie_capacity;

    struct zl_inproc_registry *inproc; /* transport/inproc.c owns it */
    /* Looks up the names connects give (transport/resolver.h); made at
     * the first, under lock. */
    struct zl_resolver *resolver;
    /* What application threads sleep on while they wait for its sockets;
     * freed after the last socket and I/O thread (sleeper.h). */
    zl_sleeper_pool sleepers;
} zl_ctx;

/* Registers a new socket (starting the I/O threads at the first one);
 * -1 with EMFILE at ZLINK_MAX_SOCKETS, ETERM after shutdown. */
int zl_ctx_add_socket(zl_ctx *ctx, struct zl_socket *s);
/* The application closed it; it stays live until the reaper frees it. */
void zl_ctx_remove_socket(zl_ctx *ctx, struct zl_socket *s);
/* The least-loaded I/O thread of those affinity names (bit i: thread i;
 * 0: any), as libzmq chooses; NULL with EMTHREAD when it names none of the
 * context's (ZLINK_IO_THREADS 0: inproc only, as libzmq). */
zl_io_thread *zl_ctx_choose_thread(zl_ctx *ctx, uint64_t affinity);
/* The context's resolver, made at the first call; NULL without memory. */
struct zl_resolver *zl_ctx_resolver(zl_ctx *ctx);
/* Hands a closed socket to the reaper. */
void zl_ctx_reap(zl_ctx *ctx, struct zl_socket *s);
bool zl_ctx_terminating(const zl_ctx *ctx);
/* The context's inproc names. */
struct zl_inproc_registry *zl_ctx_inproc(zl_ctx *ctx);
/* The longest an application thread of ctx spins before it sleeps, in ns
 * (ZLINK_SPIN_BUDGET, wait.h); 0: never. Inline: every blocking receive
 * reads it. */
static inline uint32_t zl_ctx_spin_budget_ns(const zl_ctx *ctx)
{
    return atomic_load_explicit(&ctx->spin_budget_ns, memory_order_relaxed);
}
/* The context options of ctx_options.c: 0, or -1 with errno EINVAL when
 * the option is not one of them. Called with ctx->lock held. */
int zl_ctx_option_set(zl_ctx *ctx, int option, int value);
int zl_ctx_option_get(zl_ctx *ctx, int option, int *value);
/* Whether the calling thread runs on the CPU one of ctx's I/O threads ran
 * its last turn on, or cannot tell: a spin there would take the CPU that
 * I/O thread needs (wait.h). */
bool zl_ctx_shares_cpu_with_io(const zl_ctx *ctx);

#endif
