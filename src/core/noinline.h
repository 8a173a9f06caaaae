/* noinline.h — keeps a slow path out of the function that calls it. */
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

#endif
