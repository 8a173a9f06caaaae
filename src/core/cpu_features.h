/* cpu_features.h — what this x86 CPU offers beyond the baseline the library
 * is built for, found once when the library loads (cpu_features.c); false
 * on other CPUs and compilers. */
#ifndef ZL_CPU_FEATURES_H
#define ZL_CPU_FEATURES_H

#include <stdbool.h>

/* PREFETCHW (cache_line.h's write prefetch). */
extern bool zl_cpu_has_prefetchw;
/* AVX2, with the OS saving the YMM registers across context switches:
 * 256-bit code runs (salsa20_x8.h, poly1305_x4.h, tls_aes_gcm_vaes.c). */
extern bool zl_cpu_has_avx2;

#endif
