/* io_thread.c — runs one backend loop and dispatches the commands other
 * threads send to the I/O objects living on it. */
#include "io_thread.h"

#include <stdio.h>
#include <stdlib.h>

#include "pipe.h"
#include "thread.h"

static void dispatch(zl_io_thread *t, const zl_cmd *cmd)
{
    zl_io_object *obj = cmd->target;
    switch (cmd->type) {
    case ZL_CMD_PLUG:
        obj->ops->plug(obj);
        break;
    case ZL_CMD_TERM:
        obj->ops->term(obj, (int)cmd->arg);
        break;
    case ZL_CMD_STOP:
        t->stopping = true;
        break;
    case ZL_CMD_CALL:
        cmd->fn(cmd->target, cmd->arg);
        break;
    case ZL_CMD_ACTIVATE_READ:
    case ZL_CMD_ACTIVATE_WRITE:
    case ZL_CMD_PIPE_TERM:
    case ZL_CMD_PEER_HWM:
        if (zl_pipe_cmd_live(cmd->pipe))
            obj->ops->pipe_command(obj, cmd);
        break;
    default:
        break;
    }
    if (cmd->pipe)
        zl_pipe_unref(cmd->pipe);
}

static void on_wake(void *arg)
{
    zl_io_thread *t = arg;
    zl_cmd cmd;
    while (zl_mailbox_recv(&t->mailbox, &cmd))
        dispatch(t, &cmd);
}

static void wake_loop(void *arg)
{
    zl_loop_wake(arg);
}

static void thread_main(void *arg)
{
    zl_io_thread *t = arg;
    /* Best effort, as libzmq: an OS that refuses (no privilege for a
     * real-time policy, no such CPU) leaves the thread as it was. */
    zl_thread_set_name(t->name);
    zl_thread_set_sched(t->config.sched_policy, t->config.priority);
    zl_thread_set_affinity(t->config.cpus, t->config.cpu_count);
    while (!t->stopping) {
        /* Stored only when it changes: application threads read it, and a
         * store every turn would take the line from them each time. */
        int cpu = zl_thread_cpu();
        if (atomic_load_explicit(&t->cpu, memory_order_relaxed) != cpu)
            atomic_store_explicit(&t->cpu, cpu, memory_order_relaxed);
        zl_mailbox_hold_signals();
        zl_loop_run_once(t->loop, -1);
        zl_mailbox_release_signals();
    }
}

int zl_io_thread_start(zl_io_thread *t, int index,
                       const zl_io_thread_config *config)
{
    t->config = *config;
    /* libzmq's names, so that tools and scripts that look for them still
     * find them. */
    if (config->has_name_prefix)
        snprintf(t->name, sizeof t->name, "%d/ZMQbg/IO/%d", config->name_prefix,
                 index);
    else
        snprintf(t->name, sizeof t->name, "ZMQbg/IO/%d", index);
    t->stopping = false;
    atomic_init(&t->load, 0);
    atomic_init(&t->cpu, -1);
    int rc = zl_loop_create(&t->loop, on_wake, t);
    if (rc != 0)
        return rc;
    zl_mailbox_init(&t->mailbox, wake_loop, t->loop);
    if (zl_thread_create(&t->thread, thread_main, t) != 0) {
        zl_mailbox_destroy(&t->mailbox);
        zl_loop_destroy(t->loop);
        return -1;
    }
    return 0;
}

void zl_io_thread_set_spin_budget(zl_io_thread *t, uint32_t budget_ns)
{
    zl_loop_set_spin_budget(t->loop, budget_ns);
}

void zl_io_thread_stop(zl_io_thread *t)
{
    zl_io_thread_send(t, ZL_CMD_STOP, NULL);
    uv_thread_join(&t->thread);
    /* Objects still alive here were leaked by their owners, or are still
     * closing; drain what the loop still owes (cancelled completions, and
     * the zero-delay timers filters free themselves on, which can chain a
     * few turns) before destroying it. */
    for (int turn = 0; turn < 64 && zl_loop_run_once(t->loop, 0) > 0; turn++)
        continue;
    zl_mailbox_destroy(&t->mailbox);
    zl_loop_destroy(t->loop);
}

void zl_io_thread_send_term(zl_io_thread *t, struct zl_io_object *target,
                            int linger)
{
    zl_cmd cmd = {.type = ZL_CMD_TERM, .target = target, .arg = linger};
    zl_mailbox_send(&t->mailbox, &cmd);
}

void zl_io_thread_send(zl_io_thread *t, zl_cmd_type type,
                       struct zl_io_object *target)
{
    zl_cmd cmd = {.type = type, .target = target};
    zl_mailbox_send(&t->mailbox, &cmd);
}
