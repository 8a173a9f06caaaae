/* tls_aes_gcm_vaes.c — AES-GCM's bulk on VAES and VPCLMULQDQ: sixteen
 * blocks a step in eight 256-bit registers, two AES blocks per instruction,
 * GHASH over the sixteen per reduction. */
#include "tls_aes_gcm_x86.h"

#if defined(ZL_AES_GCM_X86)

/* 256-bit registers only, no AVX-512: it slows the clock of some Intel
 * parts and many client CPUs lack it. zl_aes_gcm_cpu_level() keeps this
 * off a CPU (or an OS) without these. */
#define ZL_TARGET                                                              \
    __attribute__((target("vaes,vpclmulqdq,avx2,avx,aes,pclmul,ssse3,sse4."    \
                          "1")))
/* The steps inlined into one loop, so that the sixteen blocks stay in
 * registers instead of passing through memory. */
#define ZL_INLINE ZL_TARGET __attribute__((always_inline)) static inline

/* Sixteen blocks, two to a register: block 2i in y_i's low half. Named
 * fields, not an array, so the compiler keeps them in registers. */
typedef struct blocks16 {
    __m256i y0, y1, y2, y3, y4, y5, y6, y7;
} blocks16;

#define ZL_EACH16(x, op)                                                       \
    do {                                                                       \
        (x).y0 = op((x).y0);                                                   \
        (x).y1 = op((x).y1);                                                   \
        (x).y2 = op((x).y2);                                                   \
        (x).y3 = op((x).y3);                                                   \
        (x).y4 = op((x).y4);                                                   \
        (x).y5 = op((x).y5);                                                   \
        (x).y6 = op((x).y6);                                                   \
        (x).y7 = op((x).y7);                                                   \
    } while (0)

ZL_INLINE __m256i load256(const void *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

ZL_INLINE void store256(void *p, __m256i v)
{
    _mm256_storeu_si256((__m256i *)p, v);
}

ZL_INLINE __m256i bswap256(__m256i v)
{
    return _mm256_shuffle_epi8(v, _mm256_broadcastsi128_si256(ZL_BSWAP_MASK));
}

/* ---- AES ---- */

ZL_INLINE __m256i round_key2(const zl_aes_gcm *g, int r)
{
    return _mm256_broadcastsi128_si256(
        _mm_loadu_si128((const __m128i *)g->u.x86.round_keys[r]));
}

/* The sixteen counter blocks after ctr (a reversed counter block), and
 * ctr moved past them: lane 0 of each half is the 32-bit counter, so the
 * add is GCM's inc32. */
ZL_INLINE blocks16 counters16(__m128i *ctr)
{
    __m256i c = _mm256_broadcastsi128_si256(*ctr);
    blocks16 x;
#define ZL_CTR(n)                                                              \
    bswap256(_mm256_add_epi32(c, _mm256_set_epi32(0, 0, 0, n + 1, 0, 0, 0, n)))
    x.y0 = ZL_CTR(1);
    x.y1 = ZL_CTR(3);
    x.y2 = ZL_CTR(5);
    x.y3 = ZL_CTR(7);
    x.y4 = ZL_CTR(9);
    x.y5 = ZL_CTR(11);
    x.y6 = ZL_CTR(13);
    x.y7 = ZL_CTR(15);
#undef ZL_CTR
    *ctr = _mm_add_epi32(*ctr, _mm_set_epi32(0, 0, 0, 16));
    return x;
}

/* ---- GHASH ---- */

/* Two blocks' unreduced products per register, in three parts: lo, hi,
 * and the two cross products in mid (schoolbook, four multiplies: no
 * Karatsuba operand to keep, the sixteen AES blocks fill half the
 * registers). The halves add up at the end (fold), before the one
 * reduction. */
typedef struct ghash_sum2 {
    __m256i lo, mid, hi;
} ghash_sum2;

/* Adds the products of the blocks at p + 32 * i (the group's blocks 2i
 * and 2i + 1, byte order as on the wire, plus extra) by their powers of
 * H: H^(16 - 2i) and H^(15 - 2i). */
ZL_INLINE void ghash_mul_add2(ghash_sum2 *s, const zl_aes_gcm *g,
                              const uint8_t *p, int i, __m256i extra)
{
    __m256i x = _mm256_xor_si256(bswap256(load256(p + 32 * i)), extra);
    __m256i h = load256(g->u.x86.h_powers_down[2 * i]);
    s->lo = _mm256_xor_si256(s->lo, _mm256_clmulepi64_epi128(x, h, 0x00));
    s->hi = _mm256_xor_si256(s->hi, _mm256_clmulepi64_epi128(x, h, 0x11));
    s->mid = _mm256_xor_si256(s->mid, _mm256_clmulepi64_epi128(x, h, 0x01));
    s->mid = _mm256_xor_si256(s->mid, _mm256_clmulepi64_epi128(x, h, 0x10));
}

ZL_INLINE __m128i fold(__m256i v)
{
    return _mm_xor_si128(_mm256_castsi256_si128(v),
                         _mm256_extracti128_si256(v, 1));
}

ZL_INLINE __m128i ghash_finish(ghash_sum2 s)
{
    /* ghash_reduce takes Karatsuba's middle part, mid + lo + hi. */
    __m128i lo = fold(s.lo), hi = fold(s.hi);
    ghash_sum t = {lo, _mm_xor_si128(fold(s.mid), _mm_xor_si128(lo, hi)), hi};
    return ghash_reduce(t);
}

ZL_INLINE ghash_sum2 ghash_zero2(void)
{
    ghash_sum2 s = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                    _mm256_setzero_si256()};
    return s;
}

/* acc joins the group's first block, in the low half. */
ZL_INLINE __m256i acc_extra(__m128i acc)
{
    return _mm256_set_m128i(_mm_setzero_si128(), acc);
}

/* ---- both together ---- */

/* One AES step on a block with the round key k in scope. */
#define ZL_XOR_K(v) _mm256_xor_si256(v, k)
#define ZL_ENC_K(v) _mm256_aesenc_epi128(v, k)
#define ZL_LAST_K(v) _mm256_aesenclast_epi128(v, k)

/* x's counter blocks through the rounds, and acc updated with the 256
 * bytes at hashed: one register of GHASH in each of the first eight
 * rounds (AES has ten or fourteen), so the multiplier runs beside the
 * AES unit. */
ZL_INLINE __m128i aes_ghash16(const zl_aes_gcm *g, blocks16 *x, __m128i acc,
                              const uint8_t *hashed)
{
    int rounds = g->u.x86.rounds;
    __m256i k = round_key2(g, 0);
    ZL_EACH16(*x, ZL_XOR_K);
    ghash_sum2 s = ghash_zero2();
    /* Written out, not a loop: GCC keeps the blocks in registers then. */
#define ZL_ROUND_HASH(r, extra)                                                \
    do {                                                                       \
        k = round_key2(g, r);                                                  \
        ZL_EACH16(*x, ZL_ENC_K);                                               \
        ghash_mul_add2(&s, g, hashed, r - 1, extra);                           \
    } while (0)
    ZL_ROUND_HASH(1, acc_extra(acc));
    ZL_ROUND_HASH(2, _mm256_setzero_si256());
    ZL_ROUND_HASH(3, _mm256_setzero_si256());
    ZL_ROUND_HASH(4, _mm256_setzero_si256());
    ZL_ROUND_HASH(5, _mm256_setzero_si256());
    ZL_ROUND_HASH(6, _mm256_setzero_si256());
    ZL_ROUND_HASH(7, _mm256_setzero_si256());
    ZL_ROUND_HASH(8, _mm256_setzero_si256());
#undef ZL_ROUND_HASH
    for (int r = 9; r < rounds; r++) {
        k = round_key2(g, r);
        ZL_EACH16(*x, ZL_ENC_K);
    }
    k = round_key2(g, rounds);
    ZL_EACH16(*x, ZL_LAST_K);
    return ghash_finish(s);
}

ZL_INLINE void aes16(const zl_aes_gcm *g, blocks16 *x)
{
    int rounds = g->u.x86.rounds;
    __m256i k = round_key2(g, 0);
    ZL_EACH16(*x, ZL_XOR_K);
    for (int r = 1; r < rounds; r++) {
        k = round_key2(g, r);
        ZL_EACH16(*x, ZL_ENC_K);
    }
    k = round_key2(g, rounds);
    ZL_EACH16(*x, ZL_LAST_K);
}

#undef ZL_XOR_K
#undef ZL_ENC_K
#undef ZL_LAST_K

ZL_INLINE __m128i ghash16(const zl_aes_gcm *g, __m128i acc,
                          const uint8_t *hashed)
{
    ghash_sum2 s = ghash_zero2();
    ghash_mul_add2(&s, g, hashed, 0, acc_extra(acc));
    for (int i = 1; i < 8; i++)
        ghash_mul_add2(&s, g, hashed, i, _mm256_setzero_si256());
    return ghash_finish(s);
}

/* out = in XOR the keystream x, 256 bytes. */
ZL_INLINE void xor16(uint8_t *out, const uint8_t *in, const blocks16 *x)
{
    store256(out, _mm256_xor_si256(load256(in), x->y0));
    store256(out + 32, _mm256_xor_si256(load256(in + 32), x->y1));
    store256(out + 64, _mm256_xor_si256(load256(in + 64), x->y2));
    store256(out + 96, _mm256_xor_si256(load256(in + 96), x->y3));
    store256(out + 128, _mm256_xor_si256(load256(in + 128), x->y4));
    store256(out + 160, _mm256_xor_si256(load256(in + 160), x->y5));
    store256(out + 192, _mm256_xor_si256(load256(in + 192), x->y6));
    store256(out + 224, _mm256_xor_si256(load256(in + 224), x->y7));
}

ZL_TARGET size_t zl_aes_gcm_vaes_seal(const zl_aes_gcm *g, __m128i *ctr,
                                      __m128i *acc, const uint8_t *in,
                                      size_t len, uint8_t *out)
{
    if (len < 256)
        return 0;
    __m128i c = *ctr, a = *acc;
    /* Each group's ciphertext is hashed from out in the next group's
     * turn, beside that group's AES. */
    blocks16 x = counters16(&c);
    aes16(g, &x);
    xor16(out, in, &x);
    size_t done = 256;
    for (; len - done >= 256; done += 256) {
        x = counters16(&c);
        a = aes_ghash16(g, &x, a, out + done - 256);
        xor16(out + done, in + done, &x);
    }
    *acc = ghash16(g, a, out + done - 256);
    *ctr = c;
    return done;
}

ZL_TARGET size_t zl_aes_gcm_vaes_open(const zl_aes_gcm *g, __m128i *ctr,
                                      __m128i *acc, const uint8_t *in,
                                      size_t len, uint8_t *out)
{
    __m128i c = *ctr, a = *acc;
    size_t done = 0;
    /* The hash reads the group's ciphertext before its plaintext is
     * written: in == out holds. */
    for (; len - done >= 256; done += 256) {
        blocks16 x = counters16(&c);
        a = aes_ghash16(g, &x, a, in + done);
        xor16(out + done, in + done, &x);
    }
    *ctr = c;
    *acc = a;
    return done;
}

#else
/* ISO C wants a declaration in every translation unit. */
typedef int zl_aes_gcm_vaes_absent;
#endif
