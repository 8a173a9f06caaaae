/* iocp_thread.c — the calling thread on Windows: its CPU, and the name and
 * affinity the context options give I/O threads. */
#include "iocp.h"

#include <string.h>

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

/* Windows delivers no POSIX signals to threads. */
void zl_signals_block_all(zl_signal_mask *saved)
{
    *saved = 0;
}

void zl_signals_restore(const zl_signal_mask *saved)
{
    (void)saved;
}

typedef HRESULT(WINAPI *set_description_fn)(HANDLE, PCWSTR);

int zl_thread_set_name(const char *name)
{
    /* SetThreadDescription is Windows 10 1607 and later (not Wine 8):
     * looked up, never linked. */
    HMODULE kernel = GetModuleHandleW(L"kernel32.dll");
    FARPROC proc =
        kernel ? GetProcAddress(kernel, "SetThreadDescription") : NULL;
    if (!proc)
        return -ENOTSUP;
    set_description_fn set_description;
    memcpy(&set_description, &proc, sizeof proc);
    wchar_t wide[64];
    if (MultiByteToWideChar(CP_UTF8, 0, name, -1, wide, 64) == 0)
        return -EINVAL;
    return SUCCEEDED(set_description(GetCurrentThread(), wide)) ? 0 : -EINVAL;
}

int zl_thread_set_sched(int policy, int priority)
{
    /* POSIX policies and priorities have no Windows meaning; libzmq
     * ignores them there too. */
    (void)policy;
    (void)priority;
    return policy == -1 && priority == -1 ? 0 : -ENOTSUP;
}

int zl_thread_set_affinity(const int *cpus, int n)
{
    if (n <= 0)
        return 0;
    DWORD_PTR mask = 0;
    for (int i = 0; i < n; i++)
        if (cpus[i] >= 0 && cpus[i] < (int)(sizeof mask * 8))
            mask |= (DWORD_PTR)1 << cpus[i];
    if (mask == 0 || SetThreadAffinityMask(GetCurrentThread(), mask) == 0)
        return -EINVAL;
    return 0;
}
