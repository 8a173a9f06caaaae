/* salsa20_x8.h — eight Salsa20 blocks at once in AVX2 registers, for x86
 * CPUs that have AVX2 (found at run time: zl_cpu_has_avx2). It doubles
 * what salsa20_x4 does per instruction for a large CURVE message. */
#ifndef ZL_SALSA20_X8_H
#define ZL_SALSA20_X8_H

#include <stdint.h>

#include "cpu_features.h"

/* On Windows only where the build makes AVX spills safe (CMakeLists.txt,
 * ZLINK_AVX_SPILLS_UNALIGNED): mingw-w64's gcc does not align the stack to
 * 32 bytes, and spills 256-bit registers there with aligned moves. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) &&        \
    (!defined(_WIN32) || defined(ZLINK_AVX_SPILLS_UNALIGNED))
#define ZL_SALSA20_X8 1
/* out = in XOR the eight keystream blocks from input's counter (512
 * bytes; out may be in), and the counter moves on by eight. Only where
 * zl_cpu_has_avx2. */
void zl_salsa20_xor_8_blocks(uint32_t input[16], uint8_t *out,
                             const uint8_t *in);
#else
#define ZL_SALSA20_X8 0
#endif

#endif
