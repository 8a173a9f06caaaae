/* salsa20_x8.c — Salsa20/20 on eight consecutive blocks at once: register
 * i holds word i of each of the eight, as salsa20_x4.c does with four. The
 * two 128-bit halves then hold blocks 0-3 and 4-7, which the same 4x4
 * transpose lays out. */
#include "salsa20_x8.h"

#include "salsa20_rounds.h"
#include "salsa20_x4.h"

#if ZL_SALSA20_X8

#include <immintrin.h>
#include <string.h>

#define ZL_TARGET __attribute__((target("avx2")))

ZL_TARGET static inline __m256i rotl(__m256i v, int n)
{
    return _mm256_or_si256(_mm256_slli_epi32(v, n),
                           _mm256_srli_epi32(v, 32 - n));
}

#define QUARTER_ROUND(x, a, b, c, d)                                           \
    do {                                                                       \
        x[b] = _mm256_xor_si256(x[b], rotl(_mm256_add_epi32(x[a], x[d]), 7));  \
        x[c] = _mm256_xor_si256(x[c], rotl(_mm256_add_epi32(x[b], x[a]), 9));  \
        x[d] = _mm256_xor_si256(x[d], rotl(_mm256_add_epi32(x[c], x[b]), 13)); \
        x[a] = _mm256_xor_si256(x[a], rotl(_mm256_add_epi32(x[d], x[c]), 18)); \
    } while (0)

ZL_TARGET void zl_salsa20_xor_8_blocks(uint32_t input[16], uint8_t *out,
                                       const uint8_t *in)
{
    __m256i start[16], x[16];
    for (int i = 0; i < 16; i++)
        start[i] = _mm256_set1_epi32((int)input[i]);
    /* The 64-bit block counter (words 8 and 9) of each block. */
    uint32_t lo[8], hi[8];
    for (int j = 0; j < 8; j++) {
        lo[j] = input[8] + (uint32_t)j;
        hi[j] = input[9] + (lo[j] < input[8]);
    }
    start[8] = _mm256_loadu_si256((const __m256i *)lo);
    start[9] = _mm256_loadu_si256((const __m256i *)hi);
    memcpy(x, start, sizeof x);
    ZL_SALSA20_ROUNDS(QUARTER_ROUND, x)
    __m128i half[16];
    for (int i = 0; i < 16; i++) {
        x[i] = _mm256_add_epi32(x[i], start[i]);
        half[i] = _mm256_castsi256_si128(x[i]);
    }
    zl_salsa20_xor_rows(half, out, in);
    for (int i = 0; i < 16; i++)
        half[i] = _mm256_extracti128_si256(x[i], 1);
    zl_salsa20_xor_rows(half, out + 256, in + 256);
    uint32_t before = input[8];
    input[8] += 8;
    if (input[8] < before)
        input[9]++;
    /* The keystream is a secret: no copy of it stays on the stack. */
    volatile __m256i *v = x;
    for (int i = 0; i < 16; i++)
        v[i] = _mm256_setzero_si256();
    volatile __m128i *h = half;
    for (int i = 0; i < 16; i++)
        h[i] = _mm_setzero_si128();
    memset(lo, 0, sizeof lo);
}

#endif
