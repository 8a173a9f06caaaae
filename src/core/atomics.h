/* atomics.h — atomics and the spin hint, by their C11 names, on every
 * compiler: <stdatomic.h> where it is the compiler's own (GCC, Clang,
 * mingw-w64, clang-cl), and on MSVC, whose C11 atomics are experimental
 * (/experimental:c11atomics), the same names over its intrinsics.
 *
 * The MSVC half provides only what zlink uses: atomic_bool, atomic_int,
 * atomic_uint, atomic_uint_least64_t and zl_atomic_ptr; init, load, store,
 * exchange, fetch_add, fetch_sub, compare_exchange and thread_fence. It
 * follows Microsoft's documented semantics, as its own C++ <atomic> does:
 * __iso_volatile_load/store are plain accesses (no ordering, whatever
 * /volatile says), the _Interlocked read-modify-writes are full barriers
 * on every architecture, and x86 and x64 keep every order in hardware but
 * a store's before a later load, so acquire and release cost only a
 * compiler barrier there; ARM64 needs a DMB.
 *
 * ZL_ATOMICS_INTERLOCKED selects the MSVC half on clang with
 * -fms-extensions too, which is how it is built and tested without MSVC
 * (cmake/mingw-w64-x86_64-clang.cmake). */
#ifndef ZL_ATOMICS_H
#define ZL_ATOMICS_H

#if (!defined(_MSC_VER) || defined(__clang__)) &&                              \
    !defined(ZL_ATOMICS_INTERLOCKED)

#include <stdatomic.h>

/* An atomic pointer to any object: what it yields converts to the owner's
 * pointer type without a cast. */
typedef _Atomic(void *) zl_atomic_ptr;

#else /* MSVC */

#include <intrin.h>
#include <stdbool.h>
#include <stdint.h>

#include "noinline.h"

typedef enum memory_order {
    memory_order_relaxed,
    memory_order_consume,
    memory_order_acquire,
    memory_order_release,
    memory_order_acq_rel,
    memory_order_seq_cst
} memory_order;

/* Structs, so that a plain read or write of an atomic does not compile. */
typedef struct {
    volatile char v;
} atomic_bool;
typedef struct {
    volatile long v;
} atomic_int;
typedef struct {
    volatile long v;
} atomic_uint;
typedef struct {
    _Alignas(8) volatile __int64 v; /* the x86 stack is 4-byte aligned */
} atomic_uint_least64_t;
#if defined(_WIN64)
typedef struct {
    volatile __int64 v;
} zl_atomic_ptr;
#else
typedef struct {
    volatile long v;
} zl_atomic_ptr;
#endif

/* Orders the accesses before it against those after it, for the acquire
 * and release halves. */
#if defined(_M_ARM64) || defined(_M_ARM64EC)
#define ZL_MSVC_ORDER() __dmb(0xB) /* DMB ISH */
#else
#define ZL_MSVC_ORDER() _ReadWriteBarrier()
#endif

static ZL_ALWAYS_INLINE void atomic_thread_fence(memory_order order)
{
    if (order == memory_order_relaxed)
        return;
#if defined(_M_IX86) || (defined(_M_X64) && !defined(_M_ARM64EC))
    /* Only seq_cst orders a store before a later load, which x86 does not
     * do on its own; a locked instruction does, as MSVC's std::atomic. */
    _ReadWriteBarrier();
    if (order == memory_order_seq_cst) {
        volatile long guard = 0;
        (void)_InterlockedIncrement(&guard);
        _ReadWriteBarrier();
    }
#else
    ZL_MSVC_ORDER();
#endif
}

/* One load, store, exchange, add and compare-exchange per width. The order
 * is a constant at every call, so the branches fold away. A store with
 * seq_cst is an exchange, as in MSVC's std::atomic: a plain store could
 * pass a later load. */
#define ZL_MSVC_WIDTH(W, T, LOAD, STORE, XCHG, CAS)                            \
    static ZL_ALWAYS_INLINE T zl_msvc_load##W(const volatile T *p,             \
                                              memory_order order)              \
    {                                                                          \
        T v = LOAD(p);                                                         \
        if (order != memory_order_relaxed)                                     \
            ZL_MSVC_ORDER();                                                   \
        return v;                                                              \
    }                                                                          \
    static ZL_ALWAYS_INLINE void zl_msvc_store##W(volatile T *p, T v,          \
                                                  memory_order order)          \
    {                                                                          \
        if (order == memory_order_seq_cst) {                                   \
            (void)XCHG(p, v);                                                  \
            return;                                                            \
        }                                                                      \
        if (order != memory_order_relaxed)                                     \
            ZL_MSVC_ORDER();                                                   \
        STORE(p, v);                                                           \
    }                                                                          \
    static ZL_ALWAYS_INLINE bool zl_msvc_cas##W(volatile T *p, T *expected,    \
                                                T desired)                     \
    {                                                                          \
        T seen = CAS(p, desired, *expected);                                   \
        if (seen == *expected)                                                 \
            return true;                                                       \
        *expected = seen;                                                      \
        return false;                                                          \
    }

#define ZL_MSVC_LOAD8(p) __iso_volatile_load8((const volatile __int8 *)(p))
#define ZL_MSVC_STORE8(p, v) __iso_volatile_store8((volatile __int8 *)(p), (v))
#define ZL_MSVC_LOAD32(p) __iso_volatile_load32((const volatile __int32 *)(p))
#define ZL_MSVC_STORE32(p, v)                                                  \
    __iso_volatile_store32((volatile __int32 *)(p), (v))
ZL_MSVC_WIDTH(8, char, ZL_MSVC_LOAD8, ZL_MSVC_STORE8, _InterlockedExchange8,
              _InterlockedCompareExchange8)
ZL_MSVC_WIDTH(32, long, ZL_MSVC_LOAD32, ZL_MSVC_STORE32, _InterlockedExchange,
              _InterlockedCompareExchange)

#if defined(_M_IX86)
/* 32-bit x86 has no 64-bit exchange or add instruction, only CMPXCHG8B. */
static ZL_ALWAYS_INLINE __int64 zl_msvc_xchg64(volatile __int64 *p, __int64 v)
{
    __int64 seen = __iso_volatile_load64(p);
    for (;;) {
        __int64 was = _InterlockedCompareExchange64(p, v, seen);
        if (was == seen)
            return was;
        seen = was;
    }
}
static ZL_ALWAYS_INLINE __int64 zl_msvc_add64(volatile __int64 *p, __int64 v)
{
    __int64 seen = __iso_volatile_load64(p);
    for (;;) {
        __int64 was = _InterlockedCompareExchange64(p, seen + v, seen);
        if (was == seen)
            return was;
        seen = was;
    }
}
#else
#define zl_msvc_xchg64 _InterlockedExchange64
#define zl_msvc_add64 _InterlockedExchangeAdd64
#endif
ZL_MSVC_WIDTH(64, __int64, __iso_volatile_load64, __iso_volatile_store64,
              zl_msvc_xchg64, _InterlockedCompareExchange64)

static ZL_ALWAYS_INLINE char zl_msvc_xchg8(volatile char *p, char v)
{
    return _InterlockedExchange8(p, v);
}
static ZL_ALWAYS_INLINE long zl_msvc_xchg32(volatile long *p, long v)
{
    return _InterlockedExchange(p, v);
}
static ZL_ALWAYS_INLINE long zl_msvc_add32(volatile long *p, long v)
{
    return _InterlockedExchangeAdd(p, v);
}

/* The typed operations behind the generic names: A is the atomic type, T
 * the value type, S the storage type, W its width. Every read-modify-write
 * is a full barrier, which every order asks no more than. */
#define ZL_MSVC_ATOMIC(A, T, S, W)                                             \
    static ZL_ALWAYS_INLINE T A##_load(const A *a, memory_order order)         \
    {                                                                          \
        return (T)zl_msvc_load##W(&a->v, order);                               \
    }                                                                          \
    static ZL_ALWAYS_INLINE void A##_store(A *a, T v, memory_order order)      \
    {                                                                          \
        zl_msvc_store##W(&a->v, (S)v, order);                                  \
    }                                                                          \
    static ZL_ALWAYS_INLINE T A##_exchange(A *a, T v, memory_order order)      \
    {                                                                          \
        (void)order;                                                           \
        return (T)zl_msvc_xchg##W(&a->v, (S)v);                                \
    }                                                                          \
    static ZL_ALWAYS_INLINE bool A##_cas(A *a, T *expected, T desired)         \
    {                                                                          \
        S seen = (S)*expected;                                                 \
        bool done = zl_msvc_cas##W(&a->v, &seen, (S)desired);                  \
        *expected = (T)seen;                                                   \
        return done;                                                           \
    }
#define ZL_MSVC_ATOMIC_ARITH(A, T, S, W)                                       \
    static ZL_ALWAYS_INLINE T A##_add(A *a, T v, memory_order order)           \
    {                                                                          \
        (void)order;                                                           \
        return (T)zl_msvc_add##W(&a->v, (S)v);                                 \
    }                                                                          \
    static ZL_ALWAYS_INLINE T A##_sub(A *a, T v, memory_order order)           \
    {                                                                          \
        (void)order;                                                           \
        return (T)zl_msvc_add##W(&a->v, (S)(0 - v));                           \
    }

ZL_MSVC_ATOMIC(atomic_bool, bool, char, 8)
ZL_MSVC_ATOMIC(atomic_int, int, long, 32)
ZL_MSVC_ATOMIC_ARITH(atomic_int, int, long, 32)
ZL_MSVC_ATOMIC(atomic_uint, unsigned, long, 32)
ZL_MSVC_ATOMIC_ARITH(atomic_uint, unsigned, long, 32)
ZL_MSVC_ATOMIC(atomic_uint_least64_t, uint64_t, __int64, 64)
ZL_MSVC_ATOMIC_ARITH(atomic_uint_least64_t, uint64_t, __int64, 64)
#if defined(_WIN64)
ZL_MSVC_ATOMIC(zl_atomic_ptr, void *, __int64, 64)
#else
ZL_MSVC_ATOMIC(zl_atomic_ptr, void *, long, 32)
#endif

#define ZL_MSVC_PICK(obj, op)                                                  \
    _Generic((obj), atomic_bool *                                              \
             : atomic_bool_##op, atomic_int *                                  \
             : atomic_int_##op, atomic_uint *                                  \
             : atomic_uint_##op, atomic_uint_least64_t *                       \
             : atomic_uint_least64_t_##op, zl_atomic_ptr *                     \
             : zl_atomic_ptr_##op)
#define ZL_MSVC_PICK_ARITH(obj, op)                                            \
    _Generic((obj), atomic_int *                                               \
             : atomic_int_##op, atomic_uint *                                  \
             : atomic_uint_##op, atomic_uint_least64_t *                       \
             : atomic_uint_least64_t_##op)
/* Loads also take a pointer to const. */
#define ZL_MSVC_PICK_LOAD(obj)                                                 \
    _Generic((obj),                                                           \
        atomic_bool *: atomic_bool_load,                                      \
        const atomic_bool *: atomic_bool_load,                                \
        atomic_int *: atomic_int_load,                                        \
        const atomic_int *: atomic_int_load,                                  \
        atomic_uint *: atomic_uint_load,                                      \
        const atomic_uint *: atomic_uint_load,                                \
        atomic_uint_least64_t *: atomic_uint_least64_t_load,                  \
        const atomic_uint_least64_t *: atomic_uint_least64_t_load,            \
        zl_atomic_ptr *: zl_atomic_ptr_load,                                  \
        const zl_atomic_ptr *: zl_atomic_ptr_load)

#define atomic_init(obj, value)                                                \
    ZL_MSVC_PICK(obj, store)(obj, value, memory_order_relaxed)
#define atomic_load_explicit(obj, order) ZL_MSVC_PICK_LOAD(obj)(obj, order)
#define atomic_load(obj) atomic_load_explicit(obj, memory_order_seq_cst)
#define atomic_store_explicit(obj, value, order)                               \
    ZL_MSVC_PICK(obj, store)(obj, value, order)
#define atomic_store(obj, value)                                               \
    atomic_store_explicit(obj, value, memory_order_seq_cst)
#define atomic_exchange_explicit(obj, value, order)                            \
    ZL_MSVC_PICK(obj, exchange)(obj, value, order)
#define atomic_exchange(obj, value)                                            \
    atomic_exchange_explicit(obj, value, memory_order_seq_cst)
#define atomic_compare_exchange_strong_explicit(obj, expected, desired,        \
                                                success, failure)              \
    ZL_MSVC_PICK(obj, cas)(obj, expected, desired)
#define atomic_compare_exchange_weak_explicit                                  \
    atomic_compare_exchange_strong_explicit
#define atomic_compare_exchange_strong(obj, expected, desired)                 \
    ZL_MSVC_PICK(obj, cas)(obj, expected, desired)
#define atomic_compare_exchange_weak atomic_compare_exchange_strong
#define atomic_fetch_add_explicit(obj, value, order)                           \
    ZL_MSVC_PICK_ARITH(obj, add)(obj, value, order)
#define atomic_fetch_add(obj, value)                                           \
    atomic_fetch_add_explicit(obj, value, memory_order_seq_cst)
#define atomic_fetch_sub_explicit(obj, value, order)                           \
    ZL_MSVC_PICK_ARITH(obj, sub)(obj, value, order)
#define atomic_fetch_sub(obj, value)                                           \
    atomic_fetch_sub_explicit(obj, value, memory_order_seq_cst)

#endif /* MSVC */

/* Tells the core we are spinning: lets the sibling hyperthread run and
 * saves power. */
#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <immintrin.h>
#elif defined(_MSC_VER) && defined(_M_ARM64)
#include <intrin.h>
#endif
static inline void zl_cpu_relax(void)
{
#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
    _mm_pause();
#elif defined(_MSC_VER) && defined(_M_ARM64)
    __yield();
#elif defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
