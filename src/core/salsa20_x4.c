/* salsa20_x4.c — Salsa20/20 on four consecutive blocks at once: register i
 * holds word i of each of the four, so every quarter-round is four at a
 * time with no shuffles, and a transpose at the end lays the blocks out. */
#include "salsa20_x4.h"

#include "salsa20_rounds.h"

#if ZL_SALSA20_X4

#include <emmintrin.h>
#include <string.h>

static inline __m128i rotl(__m128i v, int n)
{
    return _mm_or_si128(_mm_slli_epi32(v, n), _mm_srli_epi32(v, 32 - n));
}

#define QUARTER_ROUND(x, a, b, c, d)                                           \
    do {                                                                       \
        x[b] = _mm_xor_si128(x[b], rotl(_mm_add_epi32(x[a], x[d]), 7));        \
        x[c] = _mm_xor_si128(x[c], rotl(_mm_add_epi32(x[b], x[a]), 9));        \
        x[d] = _mm_xor_si128(x[d], rotl(_mm_add_epi32(x[c], x[b]), 13));       \
        x[a] = _mm_xor_si128(x[a], rotl(_mm_add_epi32(x[d], x[c]), 18));       \
    } while (0)

void zl_salsa20_xor_4_blocks(uint32_t input[16], uint8_t *out,
                             const uint8_t *in)
{
    __m128i start[16], x[16];
    for (int i = 0; i < 16; i++)
        start[i] = _mm_set1_epi32((int)input[i]);
    /* The 64-bit block counter (words 8 and 9) of each block. */
    uint32_t lo[4], hi[4];
    for (int j = 0; j < 4; j++) {
        lo[j] = input[8] + (uint32_t)j;
        hi[j] = input[9] + (lo[j] < input[8]);
    }
    start[8] = _mm_setr_epi32((int)lo[0], (int)lo[1], (int)lo[2], (int)lo[3]);
    start[9] = _mm_setr_epi32((int)hi[0], (int)hi[1], (int)hi[2], (int)hi[3]);
    memcpy(x, start, sizeof x);
    ZL_SALSA20_ROUNDS(QUARTER_ROUND, x)
    for (int i = 0; i < 16; i++)
        x[i] = _mm_add_epi32(x[i], start[i]);
    zl_salsa20_xor_rows(x, out, in);
    uint32_t before = input[8];
    input[8] += 4;
    if (input[8] < before)
        input[9]++;
    /* The keystream is a secret: no copy of it stays on the stack. */
    volatile __m128i *v = x;
    for (int i = 0; i < 16; i++)
        v[i] = _mm_setzero_si128();
}

#endif
