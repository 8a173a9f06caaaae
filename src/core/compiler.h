/* compiler.h — the compiler extensions zlink uses besides atomics
 * (atomics.h), inlining (noinline.h), thread-locals (fast_tls.h) and
 * prefetches (cache_line.h), each behind its compiler check with a
 * portable fallback. */
#ifndef ZL_COMPILER_H
#define ZL_COMPILER_H

#include <stdint.h>

#if defined(_MSC_VER) && !defined(__clang__)
#include <intrin.h>
#endif

/* Marks a static function that some builds do not call, so that they do not
 * warn about it. */
#if defined(__GNUC__)
#define ZL_MAYBE_UNUSED __attribute__((unused))
#else
#define ZL_MAYBE_UNUSED
#endif

/* Makes the compiler forget what it knows of the variable x (a bound, a
 * constant) without emitting an instruction. */
#if defined(__GNUC__)
#define ZL_FORGET_VALUE(x) __asm__("" : "+r"(x))
#else
#define ZL_FORGET_VALUE(x) ((void)0)
#endif

/* How many bits x needs: the index of its highest set bit, plus one. x must
 * not be 0. A single instruction where the compiler offers one. */
static inline int zl_bits_needed(uint64_t x)
{
#if defined(__GNUC__)
    return 64 - __builtin_clzll((unsigned long long)x);
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_ARM64))
    unsigned long highest;
    _BitScanReverse64(&highest, x);
    return (int)highest + 1;
#else
    int bits = 0;
    while (x) {
        x >>= 1;
        bits++;
    }
    return bits;
#endif
}

#endif
