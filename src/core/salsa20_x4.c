/* salsa20_x4.c — Salsa20/20 on four consecutive blocks at once: register i
 * holds word i of each of the four, so every quarter-round is four at a
 * time with no shuffles, and a transpose at the end lays the blocks out. */
#include "salsa20_x4.h"

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

/* Four words of the four blocks (rows: one word of each block) become
 * four rows of one block each: a 4x4 transpose. */
static inline void transpose(__m128i *a, __m128i *b, __m128i *c, __m128i *d)
{
    __m128i t0 = _mm_unpacklo_epi32(*a, *b), t1 = _mm_unpacklo_epi32(*c, *d);
    __m128i t2 = _mm_unpackhi_epi32(*a, *b), t3 = _mm_unpackhi_epi32(*c, *d);
    *a = _mm_unpacklo_epi64(t0, t1);
    *b = _mm_unpackhi_epi64(t0, t1);
    *c = _mm_unpacklo_epi64(t2, t3);
    *d = _mm_unpackhi_epi64(t2, t3);
}

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
    for (int round = 0; round < 10; round++) {
        QUARTER_ROUND(x, 0, 4, 8, 12);
        QUARTER_ROUND(x, 5, 9, 13, 1);
        QUARTER_ROUND(x, 10, 14, 2, 6);
        QUARTER_ROUND(x, 15, 3, 7, 11);
        QUARTER_ROUND(x, 0, 1, 2, 3);
        QUARTER_ROUND(x, 5, 6, 7, 4);
        QUARTER_ROUND(x, 10, 11, 8, 9);
        QUARTER_ROUND(x, 15, 12, 13, 14);
    }
    for (int i = 0; i < 16; i++)
        x[i] = _mm_add_epi32(x[i], start[i]);
    /* After the transposes, x[4g + j] holds words 4g..4g+3 of block j. */
    for (int g = 0; g < 4; g++)
        transpose(&x[4 * g], &x[4 * g + 1], &x[4 * g + 2], &x[4 * g + 3]);
    /* In the order of the bytes, as the one-block loop goes: out may lie
     * a little before in (an open in place, over its tag). */
    for (int j = 0; j < 4; j++) {
        for (int g = 0; g < 4; g++) {
            size_t at = (size_t)64 * j + (size_t)16 * g;
            __m128i data = _mm_loadu_si128((const __m128i *)(in + at));
            _mm_storeu_si128((__m128i *)(out + at),
                             _mm_xor_si128(data, x[4 * g + j]));
        }
    }
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
