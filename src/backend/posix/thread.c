/* thread.c — the calling thread on POSIX systems: its CPU (sched_getcpu
 * where the C library has it, a vDSO call on Linux; -1 where it does not,
 * macOS), the signal mask around the start of zlink's threads, and the
 * name, scheduling and affinity the context options give I/O threads. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#if defined(__linux__)
#include <sys/resource.h>
#endif
#if defined(__FreeBSD__) || defined(__OpenBSD__)
#include <pthread_np.h>
#endif

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

void zl_signals_block_all(zl_signal_mask *saved)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, saved);
}

void zl_signals_restore(const zl_signal_mask *saved)
{
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* ---- I/O thread settings ---- */

int zl_thread_set_name(const char *name)
{
    char cut[16]; /* Linux keeps 15 bytes and refuses longer names */
    snprintf(cut, sizeof cut, "%s", name);
#if defined(__APPLE__)
    return -pthread_setname_np(cut);
#elif defined(__FreeBSD__) || defined(__OpenBSD__)
    pthread_set_name_np(pthread_self(), cut);
    return 0;
#elif defined(__linux__) || defined(__NetBSD__)
#if defined(__NetBSD__)
    return -pthread_setname_np(pthread_self(), "%s", cut);
#else
    return -pthread_setname_np(pthread_self(), cut);
#endif
#else
    (void)cut;
    return -ENOTSUP;
#endif
}

int zl_thread_set_sched(int policy, int priority)
{
    if (policy == -1 && priority == -1)
        return 0;
    struct sched_param param;
    int current;
    int rc = pthread_getschedparam(pthread_self(), &current, &param);
    if (rc != 0)
        return -rc;
    if (policy != -1)
        current = policy;
    /* Only the real-time policies have static priorities; for the others
     * libzmq sets the thread's nice value from the priority instead. */
    bool realtime = current == SCHED_FIFO || current == SCHED_RR;
    if (priority != -1 && realtime) {
        int lo = sched_get_priority_min(current);
        int hi = sched_get_priority_max(current);
        param.sched_priority = priority < lo   ? lo
                               : priority > hi ? hi
                                               : priority;
    } else if (!realtime) {
        param.sched_priority = 0;
    }
    rc = pthread_setschedparam(pthread_self(), current, &param);
#if defined(__linux__)
    /* On Linux a nice value is per thread (setpriority names the caller's
     * thread id with 0). */
    if (rc == 0 && priority != -1 && !realtime &&
        setpriority(PRIO_PROCESS, 0, -20 + priority) != 0)
        rc = errno;
#endif
    return -rc;
}

int zl_thread_set_affinity(const int *cpus, int n)
{
    if (n <= 0)
        return 0;
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < n; i++)
        if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE)
            CPU_SET(cpus[i], &set);
    return -pthread_setaffinity_np(pthread_self(), sizeof set, &set);
#else
    /* macOS has only affinity hints by tag; the BSDs differ in name and
     * type. Best effort, as libzmq, which sets it on Linux alone too. */
    (void)cpus;
    return -ENOTSUP;
#endif
}
