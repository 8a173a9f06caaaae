/* thread.h — starting the threads zlink owns: its I/O threads, the reaper,
 * and zlink_threadstart's. */
#ifndef ZL_THREAD_H
#define ZL_THREAD_H

#include <uv.h>

/* uv_thread_create for a thread that takes no signals, blocked from its
 * first instruction, as libzmq's threads. A signal sent to the process
 * then goes to an application thread, where its handler interrupts a
 * blocking call (EINTR) and sigwait sees it. 0 or a libuv error. */
int zl_thread_create(uv_thread_t *thread, uv_thread_cb entry, void *arg);

#endif
