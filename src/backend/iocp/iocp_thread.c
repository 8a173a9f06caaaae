/* iocp_thread.c — the calling thread's CPU on Windows. */
#include "iocp.h"

int zl_thread_cpu(void)
{
    /* The number within the thread's processor group. On machines of more
     * than 64 CPUs two threads may then look alike when they are not, and
     * merely skip a spin (src/core/wait.h). */
    return (int)GetCurrentProcessorNumber();
}

void zl_thread_yield(void)
{
    SwitchToThread();
}
