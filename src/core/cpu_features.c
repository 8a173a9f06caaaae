/* cpu_features.c — what this CPU offers beyond the baseline the library is
 * built for, found once when the library loads. */
#include "cpu_features.h"

bool zl_cpu_has_prefetchw;
bool zl_cpu_has_avx2;

#if (defined(__GNUC__) || defined(__clang__)) &&                               \
    (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>

/* PREFETCHW is CPUID 0x80000001 ECX bit 8 (PRFCHW, AMD's 3DNowPrefetch).
 * Intel has it from Broadwell on. A CPU that does not report it gets the
 * read prefetch instead. */
/* AVX2 is CPUID 7 EBX bit 5, usable only where the OS saves the YMM
 * registers across context switches (OSXSAVE, and XCR0's SSE and AVX
 * state bits). */
static bool detect_avx2(void)
{
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return false;
    const unsigned osxsave = 1u << 27, avx = 1u << 28;
    if ((ecx & (osxsave | avx)) != (osxsave | avx))
        return false;
    unsigned xcr0_lo, xcr0_hi;
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    (void)xcr0_hi;
    if ((xcr0_lo & 6u) != 6u)
        return false;
    return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && ((ebx >> 5) & 1u);
}

__attribute__((constructor)) static void detect_cpu_features(void)
{
    unsigned eax, ebx, ecx, edx;
    if (__get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx))
        zl_cpu_has_prefetchw = (ecx >> 8) & 1u;
    zl_cpu_has_avx2 = detect_avx2();
}
#endif
