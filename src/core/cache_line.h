/* cache_line.h — memory that starts on a cache line, for what two threads
 * pass between them. malloc aligns to 16 bytes, so a 128-byte pipe slot or
 * a pool block laid out from a malloc'd base straddles one line more than it
 * needs and shares its edge lines with the neighbour that the other thread
 * is writing: on a host where a line moves slowly between cores, that false
 * sharing, not the work, sets the rate of inproc traffic. */
#ifndef ZL_CACHE_LINE_H
#define ZL_CACHE_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <xmmintrin.h>
#endif

#include "cpu_features.h"

#define ZL_CACHE_LINE 64

/* The first line boundary at or after p. */
static inline void *zl_cache_align_up(void *p)
{
    uintptr_t at = (uintptr_t)p;
    return (void *)((at + ZL_CACHE_LINE - 1) & ~(uintptr_t)(ZL_CACHE_LINE - 1));
}

/* size bytes starting on a line, or NULL; free with zl_cache_aligned_free.
 * What malloc returned sits in the word just before the aligned block. */
static inline void *zl_cache_aligned_alloc(size_t size)
{
    void *raw = malloc(size + ZL_CACHE_LINE + sizeof(void *));
    if (raw == NULL)
        return NULL;
    void **aligned = zl_cache_align_up((char *)raw + sizeof(void *));
    aligned[-1] = raw;
    return aligned;
}

static inline void zl_cache_aligned_free(void *p)
{
    if (p != NULL)
        free(((void **)p)[-1]);
}

/* Starts bringing the line at p into this core's cache ahead of a write to
 * it, while the thread does other work: a line the other thread last held
 * takes a round trip between cores, which is the cost. Only a hint.
 *
 * On x86 it must be PREFETCHW, which takes the line for writing. A build
 * for the baseline x86-64 CPU turns __builtin_prefetch(p, 1) into a read
 * prefetch: the line arrives shared, and the write still waits for the
 * other core to give it up (bench/NOTES.md, "Write prefetch"). */
static inline void zl_prefetch_for_write(const void *p)
{
#if (defined(__GNUC__) || defined(__clang__)) &&                               \
    (defined(__x86_64__) || defined(__i386__)) && !defined(__PRFCHW__)
    if (zl_cpu_has_prefetchw)
        __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
    else
        __builtin_prefetch(p, 1, 3);
#elif defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p, 1, 3);
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
    _mm_prefetch((const char *)p, _MM_HINT_T0);
#else
    (void)p;
#endif
}

/* Starts bringing the line at p into this core's cache ahead of a read of
 * it. Only a hint. */
static inline void zl_prefetch_for_read(const void *p)
{
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p, 0, 3);
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
    _mm_prefetch((const char *)p, _MM_HINT_T0);
#else
    (void)p;
#endif
}

#endif
