/* fast_tls.h — thread-local variables read on every message. */
#ifndef ZL_FAST_TLS_H
#define ZL_FAST_TLS_H

/* initial-exec: in a shared library, thread-local storage otherwise costs a
 * __tls_get_addr call per access, more than the work it guards. This
 * depends on the compiler and the object format, not on the OS. */
#if defined(__GNUC__) && defined(__ELF__)
#define ZL_FAST_TLS __attribute__((tls_model("initial-exec")))
#else
#define ZL_FAST_TLS
#endif

/* __declspec(thread) is what MSVC documents for C; not every version of its
 * C11 mode knows _Thread_local. */
#if defined(_MSC_VER) && !defined(__clang__)
#define ZL_THREAD_LOCAL __declspec(thread)
#else
#define ZL_THREAD_LOCAL _Thread_local
#endif

#endif
