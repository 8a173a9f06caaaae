/* poly1305_x4.c — four Poly1305 lanes in 26-bit limbs, one 64-bit lane of
 * a register each: lane j takes blocks j, j + 4, j + 8, …, by Horner's
 * rule in r^4, and the lanes end multiplied by r^4, r^3, r^2 and r, whose
 * sum is what one block at a time gives. */
#include "poly1305_x4.h"

#if ZL_POLY1305_X4

#include <immintrin.h>

#include "poly1305_limbs.h"

#define ZL_TARGET __attribute__((target("avx2")))

#define MASK26 ((UINT64_C(1) << 26) - 1)
#define MASK44 ZL_POLY_MASK44

/* 44-bit limbs to five 26-bit ones, carried first so that each fits. */
static void to26(uint64_t out[5], const uint64_t in[3])
{
    uint64_t h[3] = {in[0], in[1], in[2]};
    zl_poly1305_carry(h);
    uint64_t h0 = h[0], h1 = h[1], h2 = h[2];
    uint64_t c = h1 >> 44; /* h1 may be 2^44 exactly */
    h1 &= MASK44;
    h2 += c; /* at most 2^42 now: limb 4 may take one bit more */
    out[0] = h0 & MASK26;
    out[1] = ((h0 >> 26) | (h1 << 18)) & MASK26;
    out[2] = (h1 >> 8) & MASK26;
    out[3] = ((h1 >> 34) | (h2 << 10)) & MASK26;
    out[4] = h2 >> 16;
}

/* Five 26-bit limbs (each somewhat over) back to 44-bit ones. */
static void to44(uint64_t out[3], const uint64_t in[5])
{
    uint64_t l0 = in[0], l1 = in[1], l2 = in[2], l3 = in[3], l4 = in[4];
    uint64_t c = l0 >> 26;
    l0 &= MASK26;
    l1 += c;
    c = l1 >> 26;
    l1 &= MASK26;
    l2 += c;
    c = l2 >> 26;
    l2 &= MASK26;
    l3 += c;
    c = l3 >> 26;
    l3 &= MASK26;
    l4 += c;
    c = l4 >> 26;
    l4 &= MASK26;
    l0 += c * 5;
    c = l0 >> 26;
    l0 &= MASK26;
    l1 += c; /* at most one over 2^26: the shifts below still fit */
    out[0] = (l0 | (l1 << 26)) & MASK44;
    out[1] = ((l1 >> 18) | (l2 << 8) | (l3 << 34)) & MASK44;
    out[2] = (l3 >> 10) | (l4 << 16);
}

/* A multiplier in registers: its five limbs, and limbs 1 to 4 times five
 * (what passes 2^130 comes back as five times it). */
typedef struct {
    __m256i r0, r1, r2, r3, r4, s1, s2, s3, s4;
} mult;

ZL_TARGET static mult mult_of(uint64_t lane[4][5])
{
    mult k;
    __m256i *limbs[5] = {&k.r0, &k.r1, &k.r2, &k.r3, &k.r4};
    for (int i = 0; i < 5; i++)
        *limbs[i] =
            _mm256_setr_epi64x((long long)lane[0][i], (long long)lane[1][i],
                               (long long)lane[2][i], (long long)lane[3][i]);
    const __m256i five = _mm256_set1_epi64x(5);
    k.s1 = _mm256_mul_epu32(k.r1, five);
    k.s2 = _mm256_mul_epu32(k.r2, five);
    k.s3 = _mm256_mul_epu32(k.r3, five);
    k.s4 = _mm256_mul_epu32(k.r4, five);
    return k;
}

typedef struct {
    __m256i h0, h1, h2, h3, h4;
} lanes;

#define MUL(a, b) _mm256_mul_epu32((a), (b))
#define ADD(a, b) _mm256_add_epi64((a), (b))

/* h * k per lane, carried back to about 26 bits a limb. */
ZL_TARGET static inline lanes mul_lanes(lanes h, const mult *k)
{
    __m256i d0 = ADD(ADD(ADD(MUL(h.h0, k->r0), MUL(h.h1, k->s4)),
                         ADD(MUL(h.h2, k->s3), MUL(h.h3, k->s2))),
                     MUL(h.h4, k->s1));
    __m256i d1 = ADD(ADD(ADD(MUL(h.h0, k->r1), MUL(h.h1, k->r0)),
                         ADD(MUL(h.h2, k->s4), MUL(h.h3, k->s3))),
                     MUL(h.h4, k->s2));
    __m256i d2 = ADD(ADD(ADD(MUL(h.h0, k->r2), MUL(h.h1, k->r1)),
                         ADD(MUL(h.h2, k->r0), MUL(h.h3, k->s4))),
                     MUL(h.h4, k->s3));
    __m256i d3 = ADD(ADD(ADD(MUL(h.h0, k->r3), MUL(h.h1, k->r2)),
                         ADD(MUL(h.h2, k->r1), MUL(h.h3, k->r0))),
                     MUL(h.h4, k->s4));
    __m256i d4 = ADD(ADD(ADD(MUL(h.h0, k->r4), MUL(h.h1, k->r3)),
                         ADD(MUL(h.h2, k->r2), MUL(h.h3, k->r1))),
                     MUL(h.h4, k->r0));
    const __m256i mask = _mm256_set1_epi64x((long long)MASK26);
    __m256i c = _mm256_srli_epi64(d0, 26);
    d0 = _mm256_and_si256(d0, mask);
    d1 = ADD(d1, c);
    c = _mm256_srli_epi64(d1, 26);
    d1 = _mm256_and_si256(d1, mask);
    d2 = ADD(d2, c);
    c = _mm256_srli_epi64(d2, 26);
    d2 = _mm256_and_si256(d2, mask);
    d3 = ADD(d3, c);
    c = _mm256_srli_epi64(d3, 26);
    d3 = _mm256_and_si256(d3, mask);
    d4 = ADD(d4, c);
    c = _mm256_srli_epi64(d4, 26);
    d4 = _mm256_and_si256(d4, mask);
    d0 = ADD(d0, MUL(c, _mm256_set1_epi64x(5)));
    c = _mm256_srli_epi64(d0, 26);
    d0 = _mm256_and_si256(d0, mask);
    d1 = ADD(d1, c);
    return (lanes){d0, d1, d2, d3, d4};
}

/* Four blocks of m, block j in lane j, in 26-bit limbs with 2^128 set. */
ZL_TARGET static inline lanes load_blocks(const uint8_t *m)
{
    __m256i a = _mm256_loadu_si256((const __m256i *)m);
    __m256i b = _mm256_loadu_si256((const __m256i *)(m + 32));
    /* Low halves of blocks 0, 2, 1, 3, then their high halves; put in
     * block order. */
    __m256i lo = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(a, b),
                                          _MM_SHUFFLE(3, 1, 2, 0));
    __m256i hi = _mm256_permute4x64_epi64(_mm256_unpackhi_epi64(a, b),
                                          _MM_SHUFFLE(3, 1, 2, 0));
    const __m256i mask = _mm256_set1_epi64x((long long)MASK26);
    lanes out;
    out.h0 = _mm256_and_si256(lo, mask);
    out.h1 = _mm256_and_si256(_mm256_srli_epi64(lo, 26), mask);
    out.h2 = _mm256_and_si256(
        _mm256_or_si256(_mm256_srli_epi64(lo, 52), _mm256_slli_epi64(hi, 12)),
        mask);
    out.h3 = _mm256_and_si256(_mm256_srli_epi64(hi, 14), mask);
    out.h4 = _mm256_or_si256(_mm256_srli_epi64(hi, 40),
                             _mm256_set1_epi64x(INT64_C(1) << 24));
    return out;
}

ZL_TARGET static inline lanes add_lanes(lanes a, lanes b)
{
    return (lanes){ADD(a.h0, b.h0), ADD(a.h1, b.h1), ADD(a.h2, b.h2),
                   ADD(a.h3, b.h3), ADD(a.h4, b.h4)};
}

ZL_TARGET static uint64_t lane_sum(__m256i v)
{
    uint64_t x[4];
    _mm256_storeu_si256((__m256i *)x, v);
    return x[0] + x[1] + x[2] + x[3];
}

ZL_TARGET void zl_poly1305_blocks_x4(uint64_t h[3], const uint64_t r[3],
                                     const uint8_t *m, size_t len)
{
    /* r, r^2, r^3, r^4 in 26-bit limbs. */
    uint64_t pow44[4][3], pow26[4][5];
    const uint64_t s1 = r[1] * (5 << 2), s2 = r[2] * (5 << 2);
    for (int p = 0; p < 4; p++) {
        for (int i = 0; i < 3; i++)
            pow44[p][i] = p ? pow44[p - 1][i] : r[i];
        if (p)
            zl_poly1305_mul(pow44[p], r, s1, s2);
    }
    for (int p = 0; p < 4; p++)
        to26(pow26[p], pow44[p]);
    uint64_t all_r4[4][5], last[4][5];
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 5; i++) {
            all_r4[j][i] = pow26[3][i];
            last[j][i] = pow26[3 - j][i]; /* lane j: r^(4 - j) */
        }
    const mult step = mult_of(all_r4), finish = mult_of(last);

    uint64_t h26[5];
    to26(h26, h);
    lanes acc = load_blocks(m);
    acc.h0 = ADD(acc.h0, _mm256_setr_epi64x((long long)h26[0], 0, 0, 0));
    acc.h1 = ADD(acc.h1, _mm256_setr_epi64x((long long)h26[1], 0, 0, 0));
    acc.h2 = ADD(acc.h2, _mm256_setr_epi64x((long long)h26[2], 0, 0, 0));
    acc.h3 = ADD(acc.h3, _mm256_setr_epi64x((long long)h26[3], 0, 0, 0));
    acc.h4 = ADD(acc.h4, _mm256_setr_epi64x((long long)h26[4], 0, 0, 0));
    for (m += 64, len -= 64; len >= 64; m += 64, len -= 64)
        acc = add_lanes(mul_lanes(acc, &step), load_blocks(m));
    acc = mul_lanes(acc, &finish);
    uint64_t sum[5] = {lane_sum(acc.h0), lane_sum(acc.h1), lane_sum(acc.h2),
                       lane_sum(acc.h3), lane_sum(acc.h4)};
    to44(h, sum);
}

#endif
