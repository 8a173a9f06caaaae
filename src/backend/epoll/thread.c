/* thread.c — the calling thread's CPU on Linux: sched_getcpu is a vDSO
 * call (or a read of the rseq area), a few nanoseconds. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend.h"

#include <sched.h>

int zl_thread_cpu(void)
{
    return sched_getcpu();
}

void zl_thread_yield(void)
{
    sched_yield();
}
