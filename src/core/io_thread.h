/* io_thread.h — an I/O thread: one backend loop, one mailbox, and the I/O
 * objects (listeners, sessions) that live on it. */
#ifndef ZL_IO_THREAD_H
#define ZL_IO_THREAD_H

#include <stdbool.h>
#include <uv.h>

#include "atomics.h"
#include "backend.h"
#include "cache_line.h"
#include "mailbox.h"

struct zl_io_object;

/* Each on lines of its own (zl_ctx allocates them aligned): application
 * threads write the mailbox and read cpu, and a neighbour on the heap that
 * shared a line with them cost PAIR tcp 64 B a sixth of its rate. */
/* How an I/O thread is started: libzmq's context options, applied best
 * effort by the thread itself (backend.h). */
#define ZL_AFFINITY_MAX 64
typedef struct zl_io_thread_config {
    bool has_name_prefix; /* named "<name_prefix>/ZMQbg/IO/<i>", as libzmq */
    int name_prefix;
    int sched_policy, priority; /* -1: the OS's */
    int cpus[ZL_AFFINITY_MAX];
    int cpu_count;
} zl_io_thread_config;

typedef struct zl_io_thread {
    _Alignas(ZL_CACHE_LINE) zl_loop *loop;
    uv_thread_t thread;
    bool stopping;
    atomic_int load; /* I/O objects on this thread, for choosing one */
    /* The CPU the thread ran its last turn on (zl_thread_cpu), or -1:
     * application threads do not spin on it (wait.h). */
    atomic_int cpu;
    char name[32];              /* the OS keeps the first 15 bytes on Linux */
    zl_io_thread_config config; /* read by the thread as it starts */
    _Alignas(ZL_CACHE_LINE) zl_mailbox mailbox;
} zl_io_thread;

/* What every object living on an I/O thread implements. Commands for it
 * arrive as ZL_CMD_PLUG / ZL_CMD_TERM with target = the object. */
typedef struct zl_io_object_ops {
    void (*plug)(struct zl_io_object *obj);
    /* linger: the socket's ZLINK_LINGER at the time it let go, which is
     * what libzmq honours, not the value when the object was made. */
    void (*term)(struct zl_io_object *obj, int linger);
    /* Pipe commands for a pipe end this object owns. */
    void (*pipe_command)(struct zl_io_object *obj, const zl_cmd *cmd);
} zl_io_object_ops;

typedef struct zl_io_object {
    const zl_io_object_ops *ops;
    zl_io_thread *thread;
} zl_io_object;

/* index names the thread ("ZMQbg/IO/<index>"). */
int zl_io_thread_start(zl_io_thread *t, int index,
                       const zl_io_thread_config *config);
/* The longest the thread spins before it sleeps, in ns (ZLINK_SPIN_BUDGET);
 * any thread. */
void zl_io_thread_set_spin_budget(zl_io_thread *t, uint32_t budget_ns);
/* Asks the thread to stop and joins it. */
void zl_io_thread_stop(zl_io_thread *t);
void zl_io_thread_send(zl_io_thread *t, zl_cmd_type type,
                       struct zl_io_object *target);
/* ZL_CMD_TERM carrying the linger to use. */
void zl_io_thread_send_term(zl_io_thread *t, struct zl_io_object *target,
                            int linger);

#endif
