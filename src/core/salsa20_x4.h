/* salsa20_x4.h — four Salsa20 blocks at once in SSE2 registers, where the
 * target has SSE2 (every x86-64): the keystream of a CURVE message is what
 * its throughput is bound by. */
#ifndef ZL_SALSA20_X4_H
#define ZL_SALSA20_X4_H

#include <stdint.h>

#if defined(__SSE2__)
#define ZL_SALSA20_X4 1
/* out = in XOR the four keystream blocks from input's counter (256 bytes;
 * out may be in), and the counter moves on by four. */
void zl_salsa20_xor_4_blocks(uint32_t input[16], uint8_t *out,
                             const uint8_t *in);
#else
#define ZL_SALSA20_X4 0
#endif

#endif
