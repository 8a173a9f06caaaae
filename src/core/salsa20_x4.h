/* salsa20_x4.h — four Salsa20 blocks at once in SSE2 registers, where the
 * target has SSE2 (every x86-64): the keystream of a CURVE message is what
 * its throughput is bound by. */
#ifndef ZL_SALSA20_X4_H
#define ZL_SALSA20_X4_H

#include <stdint.h>

#if defined(__SSE2__)
#define ZL_SALSA20_X4 1
#include <emmintrin.h>
#include <stddef.h>

/* out = in XOR the four keystream blocks from input's counter (256 bytes;
 * out may be in), and the counter moves on by four. */
void zl_salsa20_xor_4_blocks(uint32_t input[16], uint8_t *out,
                             const uint8_t *in);

/* Four words of four blocks (row i: word i of each) become four rows of
 * one block each: a 4x4 transpose. */
static inline void zl_salsa20_transpose4(__m128i *a, __m128i *b, __m128i *c,
                                         __m128i *d)
{
    __m128i t0 = _mm_unpacklo_epi32(*a, *b), t1 = _mm_unpacklo_epi32(*c, *d);
    __m128i t2 = _mm_unpackhi_epi32(*a, *b), t3 = _mm_unpackhi_epi32(*c, *d);
    *a = _mm_unpacklo_epi64(t0, t1);
    *b = _mm_unpackhi_epi64(t0, t1);
    *c = _mm_unpacklo_epi64(t2, t3);
    *d = _mm_unpackhi_epi64(t2, t3);
}

/* out = in XOR four keystream blocks whose finished words are in row
 * (row i: word i of each block; row is transposed in place). In the
 * order of the bytes, as the one-block loop goes: out may lie a little
 * before in (an open in place, over its tag). */
static inline void zl_salsa20_xor_rows(__m128i row[16], uint8_t *out,
                                       const uint8_t *in)
{
    /* After the transposes, row[4g + j] holds words 4g..4g+3 of block j. */
    for (int g = 0; g < 4; g++)
        zl_salsa20_transpose4(&row[4 * g], &row[4 * g + 1], &row[4 * g + 2],
                              &row[4 * g + 3]);
    for (int j = 0; j < 4; j++) {
        for (int g = 0; g < 4; g++) {
            size_t at = (size_t)64 * j + (size_t)16 * g;
            __m128i data = _mm_loadu_si128((const __m128i *)(in + at));
            _mm_storeu_si128((__m128i *)(out + at),
                             _mm_xor_si128(data, row[4 * g + j]));
        }
    }
}
#else
#define ZL_SALSA20_X4 0
#endif

#endif
