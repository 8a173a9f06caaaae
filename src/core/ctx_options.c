/* ctx_options.c — libzmq's context options beyond the thread count:
 * BLOCKY and IPV6 (defaults of new sockets) and the I/O threads' name
 * prefix, scheduling and CPU affinity, with libzmq's checks. */
#include <errno.h>

#include "ctx.h"
#include "zlink.h"

static int add_cpu(zl_io_thread_config *c, int cpu)
{
    for (int i = 0; i < c->cpu_count; i++)
        if (c->cpus[i] == cpu)
            return 0; /* a set, as libzmq's */
    if (c->cpu_count == ZL_AFFINITY_MAX) {
        errno = EINVAL;
        return -1;
    }
    c->cpus[c->cpu_count++] = cpu;
    return 0;
}

static int remove_cpu(zl_io_thread_config *c, int cpu)
{
    for (int i = 0; i < c->cpu_count; i++)
        if (c->cpus[i] == cpu) {
            c->cpus[i] = c->cpus[--c->cpu_count];
            return 0;
        }
    errno = EINVAL; /* libzmq: removing a CPU that was never added */
    return -1;
}

int zl_ctx_option_set(zl_ctx *ctx, int option, int value)
{
    zl_io_thread_config *c = &ctx->thread_config;
    if (value < 0 && option != ZLINK_THREAD_NAME_PREFIX &&
        option != ZLINK_MAX_MSGSZ) {
        errno = EINVAL;
        return -1;
    }
    switch (option) {
    case ZLINK_BLOCKY:
        ctx->blocky = value != 0;
        return 0;
    case ZLINK_IPV6:
        ctx->ipv6 = value != 0;
        return 0;
    case ZLINK_THREAD_PRIORITY:
        c->priority = value;
        return 0;
    case ZLINK_THREAD_SCHED_POLICY:
        c->sched_policy = value;
        return 0;
    case ZLINK_THREAD_AFFINITY_CPU_ADD:
        return add_cpu(c, value);
    case ZLINK_THREAD_AFFINITY_CPU_REMOVE:
        return remove_cpu(c, value);
    case ZLINK_THREAD_NAME_PREFIX:
        /* Any number, as zmq_ctx_set takes it; the OS keeps the name's
         * first 15 bytes. */
        c->name_prefix = value;
        c->has_name_prefix = true;
        return 0;
    case ZLINK_MAX_MSGSZ:
        /* Kept and read back, as libzmq, which applies it nowhere; a
         * socket's inbound limit is ZLINK_MAXMSGSIZE. */
        if (value < 0) {
            errno = EINVAL;
            return -1;
        }
        ctx->max_msgsz = value;
        return 0;
    default:
        errno = EINVAL;
        return -1;
    }
}

int zl_ctx_option_get(zl_ctx *ctx, int option, int *value)
{
    const zl_io_thread_config *c = &ctx->thread_config;
    switch (option) {
    case ZLINK_BLOCKY:
        *value = ctx->blocky;
        return 0;
    case ZLINK_IPV6:
        *value = ctx->ipv6;
        return 0;
    case ZLINK_THREAD_SCHED_POLICY:
        *value = c->sched_policy;
        return 0;
    case ZLINK_THREAD_NAME_PREFIX:
        *value = c->name_prefix;
        return 0;
    case ZLINK_MAX_MSGSZ:
        *value = ctx->max_msgsz;
        return 0;
    default:
        errno = EINVAL;
        return -1;
    }
}
