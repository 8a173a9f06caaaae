/* poly1305_x4.h — Poly1305 over four blocks at once in AVX2 registers,
 * where salsa20_x8.h's AVX2 is (found at run time: zl_cpu_has_avx2): the
 * other half of what a large CURVE message costs. */
#ifndef ZL_POLY1305_X4_H
#define ZL_POLY1305_X4_H

#include <stddef.h>
#include <stdint.h>

#include "poly1305.h"
#include "salsa20_x8.h"

#if ZL_POLY1305_NATIVE && ZL_SALSA20_X8
#define ZL_POLY1305_X4 1
/* As poly1305.c's blocks() on each 16-byte block of m, full ones (len a
 * multiple of 64, at least 64): h, in poly1305.c's 44-bit limbs, absorbs
 * them under the key r. Only where zl_cpu_has_avx2. */
void zl_poly1305_blocks_x4(uint64_t h[3], const uint64_t r[3], const uint8_t *m,
                           size_t len);
#else
#define ZL_POLY1305_X4 0
#endif

#endif
