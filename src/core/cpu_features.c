/* cpu_features.c — what this CPU offers beyond the baseline the library is
 * built for, found once when the library loads. */
#include "cache_line.h"

bool zl_cpu_has_prefetchw;

#if (defined(__GNUC__) || defined(__clang__)) &&                               \
    (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>

/* PREFETCHW is CPUID 0x80000001 ECX bit 8 (PRFCHW, AMD's 3DNowPrefetch).
 * Intel has it from Broadwell on. A CPU that does not report it gets the
 * read prefetch instead. */
__attribute__((constructor)) static void detect_cpu_features(void)
{
    unsigned eax, ebx, ecx, edx;
    if (__get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx))
        zl_cpu_has_prefetchw = (ecx >> 8) & 1u;
}
#endif
