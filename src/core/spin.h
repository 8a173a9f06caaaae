/* spin.h — a short busy wait before a thread sleeps. On the VMs we measure,
 * waking a sleeping thread costs 15–25 µs while the next command of a busy
 * socket (the peer's ACTIVATE_READ) usually comes within a few: spinning
 * that long first turns most sleeps of a busy socket into none. */
#ifndef ZL_SPIN_H
#define ZL_SPIN_H

#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <immintrin.h>
#endif

/* How long a thread spins before it sleeps. Longer than a wakeup costs is
 * pointless; much shorter misses the messages of a busy peer. */
#define ZL_SPIN_BEFORE_SLEEP_NS 10000u

/* Tells the core we are spinning: lets the sibling hyperthread run and
 * saves power. */
static inline void zl_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
    _mm_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
