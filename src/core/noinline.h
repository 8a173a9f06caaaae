/* noinline.h — keeps a slow path out of the function that calls it, or a
 * helper of a fast path in it. */
#ifndef ZL_NOINLINE_H
#define ZL_NOINLINE_H

/* A fast path that ends in a call to its slow path stays small (fewer
 * registers to save, less code to fetch) only while the compiler does not
 * fold the slow path back in, which it does to a static function called
 * once. */
#if defined(__GNUC__)
#define ZL_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define ZL_NOINLINE __declspec(noinline)
#else
#define ZL_NOINLINE
#endif

/* The opposite, for the helpers of a per-message path that the compiler
 * keeps as calls because other paths call them too: each call saves and
 * restores registers and moves its arguments again. Measured in
 * instructions per message (bench/run.sh --callgrind). */
#if defined(__GNUC__)
#define ZL_ALWAYS_INLINE inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define ZL_ALWAYS_INLINE __forceinline
#else
#define ZL_ALWAYS_INLINE inline
#endif

#endif
