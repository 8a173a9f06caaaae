/* thread.c — the calling thread's CPU on POSIX systems: sched_getcpu where
 * the C library has it (a vDSO call on Linux, a few nanoseconds), -1 where
 * it does not (macOS). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend.h"

#include <sched.h>

int zl_thread_cpu(void)
{
#ifdef ZL_HAVE_SCHED_GETCPU
    return sched_getcpu();
#else
    return -1;
#endif
}

void zl_thread_yield(void)
{
    sched_yield();
}
