/* tls_aes_gcm_x86.c — AES-GCM on AES-NI and PCLMULQDQ: counter mode eight
 * blocks at a time, GHASH over eight blocks per reduction; the key
 * schedule, and what the VAES bulk leaves. */
#include "tls_aes_gcm_x86.h"

#if defined(ZL_AES_GCM_X86)

#include <string.h>

#include <mbedtls/platform_util.h>

#define ZL_TARGET ZL_AESNI_TARGET
/* The eight-block steps inlined whatever the compiler's size estimate says:
 * called, they pass their blocks through memory and cannot overlap. */
#define ZL_INLINE ZL_TARGET __attribute__((always_inline)) static inline

ZL_INLINE __m128i load(const void *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

ZL_INLINE void store(void *p, __m128i v)
{
    _mm_storeu_si128((__m128i *)p, v);
}

ZL_INLINE __m128i bswap(__m128i v)
{
    return _mm_shuffle_epi8(v, ZL_BSWAP_MASK);
}

ZL_INLINE __m128i xor128(__m128i a, __m128i b)
{
    return _mm_xor_si128(a, b);
}

/* ---- AES ---- */

ZL_INLINE __m128i round_key(const zl_aes_gcm *g, int r)
{
    return load(g->u.x86.round_keys[r]);
}

ZL_INLINE __m128i aes_block(const zl_aes_gcm *g, __m128i b)
{
    int rounds = g->u.x86.rounds;
    b = xor128(b, round_key(g, 0));
    for (int r = 1; r < rounds; r++)
        b = _mm_aesenc_si128(b, round_key(g, r));
    return _mm_aesenclast_si128(b, round_key(g, rounds));
}

/* Eight independent blocks through the rounds side by side: aesenc's
 * latency is hidden behind the other seven. */
typedef struct blocks8 {
    __m128i b0, b1, b2, b3, b4, b5, b6, b7;
} blocks8;

#define ZL_EACH8(x, op)                                                        \
    do {                                                                       \
        (x).b0 = op((x).b0);                                                   \
        (x).b1 = op((x).b1);                                                   \
        (x).b2 = op((x).b2);                                                   \
        (x).b3 = op((x).b3);                                                   \
        (x).b4 = op((x).b4);                                                   \
        (x).b5 = op((x).b5);                                                   \
        (x).b6 = op((x).b6);                                                   \
        (x).b7 = op((x).b7);                                                   \
    } while (0)

ZL_INLINE void aes_blocks8(const zl_aes_gcm *g, blocks8 *x)
{
    int rounds = g->u.x86.rounds;
    __m128i k = round_key(g, 0);
#define ZL_XOR_K(v) _mm_xor_si128(v, k)
#define ZL_ENC_K(v) _mm_aesenc_si128(v, k)
#define ZL_LAST_K(v) _mm_aesenclast_si128(v, k)
    ZL_EACH8(*x, ZL_XOR_K);
    for (int r = 1; r < rounds; r++) {
        k = round_key(g, r);
        ZL_EACH8(*x, ZL_ENC_K);
    }
    k = round_key(g, rounds);
    ZL_EACH8(*x, ZL_LAST_K);
#undef ZL_XOR_K
#undef ZL_ENC_K
#undef ZL_LAST_K
}

/* The eight counter blocks after ctr (a reversed counter block), and ctr
 * moved past them. */
ZL_INLINE blocks8 counters8(__m128i *ctr)
{
    __m128i c = *ctr;
    blocks8 x;
    x.b0 = bswap(_mm_add_epi32(c, _mm_set_epi32(0, 0, 0, 1)));
    x.b1 = bswap(_mm_add_epi32(c, _mm_set_epi32(0, 0, 0, 2)));
    x.b2 = bswap(_mm_add_epi32(c, _mm_set_epi32(0, 0, 0, 3)));
    x.b3 = bswap(_mm_add_epi32(c, _mm_set_epi32(0, 0, 0, 4)));
    x.b4 = bswap(_mm_add_epi32(c, _mm_set_epi32(0, 0, 0, 5)));
    x.b5 = bswap(_mm_add_epi32(c, _mm_set_epi32(0, 0, 0, 6)));
    x.b6 = bswap(_mm_add_epi32(c, _mm_set_epi32(0, 0, 0, 7)));
    x.b7 = bswap(_mm_add_epi32(c, _mm_set_epi32(0, 0, 0, 8)));
    *ctr = _mm_add_epi32(c, _mm_set_epi32(0, 0, 0, 8));
    return x;
}

ZL_TARGET static __m128i key_step(__m128i key, __m128i t)
{
    key = xor128(key, _mm_slli_si128(key, 4));
    key = xor128(key, _mm_slli_si128(key, 4));
    key = xor128(key, _mm_slli_si128(key, 4));
    return xor128(key, t);
}

/* aeskeygenassist takes its round constant as an immediate: hence the
 * macros instead of loops. */
#define ZL_KEY128(rk, i, rcon)                                                 \
    rk[i] = key_step(                                                          \
        rk[i - 1],                                                             \
        _mm_shuffle_epi32(_mm_aeskeygenassist_si128(rk[i - 1], rcon), 0xff))
#define ZL_KEY256_EVEN(rk, i, rcon)                                            \
    rk[i] = key_step(                                                          \
        rk[i - 2],                                                             \
        _mm_shuffle_epi32(_mm_aeskeygenassist_si128(rk[i - 1], rcon), 0xff))
#define ZL_KEY256_ODD(rk, i)                                                   \
    rk[i] = key_step(                                                          \
        rk[i - 2],                                                             \
        _mm_shuffle_epi32(_mm_aeskeygenassist_si128(rk[i - 1], 0), 0xaa))

ZL_TARGET static void expand_key(__m128i rk[15], const uint8_t *key,
                                 size_t key_len)
{
    rk[0] = load(key);
    if (key_len == 16) {
        ZL_KEY128(rk, 1, 0x01);
        ZL_KEY128(rk, 2, 0x02);
        ZL_KEY128(rk, 3, 0x04);
        ZL_KEY128(rk, 4, 0x08);
        ZL_KEY128(rk, 5, 0x10);
        ZL_KEY128(rk, 6, 0x20);
        ZL_KEY128(rk, 7, 0x40);
        ZL_KEY128(rk, 8, 0x80);
        ZL_KEY128(rk, 9, 0x1b);
        ZL_KEY128(rk, 10, 0x36);
        return;
    }
    rk[1] = load(key + 16);
    ZL_KEY256_EVEN(rk, 2, 0x01);
    ZL_KEY256_ODD(rk, 3);
    ZL_KEY256_EVEN(rk, 4, 0x02);
    ZL_KEY256_ODD(rk, 5);
    ZL_KEY256_EVEN(rk, 6, 0x04);
    ZL_KEY256_ODD(rk, 7);
    ZL_KEY256_EVEN(rk, 8, 0x08);
    ZL_KEY256_ODD(rk, 9);
    ZL_KEY256_EVEN(rk, 10, 0x10);
    ZL_KEY256_ODD(rk, 11);
    ZL_KEY256_EVEN(rk, 12, 0x20);
    ZL_KEY256_ODD(rk, 13);
    ZL_KEY256_EVEN(rk, 14, 0x40);
}

/* ---- GHASH ---- */

ZL_INLINE void ghash_mul_add(ghash_sum *s, __m128i x, const zl_aes_gcm *g,
                             int power)
{
    __m128i h = load(g->u.x86.h_powers[power]);
    __m128i hk = load(g->u.x86.h_karatsuba[power]);
    __m128i xk = xor128(x, _mm_shuffle_epi32(x, 0x4e));
    s->lo = xor128(s->lo, _mm_clmulepi64_si128(x, h, 0x00));
    s->hi = xor128(s->hi, _mm_clmulepi64_si128(x, h, 0x11));
    s->mid = xor128(s->mid, _mm_clmulepi64_si128(xk, hk, 0x00));
}

ZL_INLINE ghash_sum ghash_zero(void)
{
    ghash_sum s = {_mm_setzero_si128(), _mm_setzero_si128(),
                   _mm_setzero_si128()};
    return s;
}

/* acc updated with n (1..8) reversed blocks: one reduction for all. */
ZL_TARGET static __m128i ghash_n(const zl_aes_gcm *g, __m128i acc,
                                 const __m128i *x, size_t n)
{
    ghash_sum s = ghash_zero();
    ghash_mul_add(&s, xor128(x[0], acc), g, (int)n - 1);
    for (size_t i = 1; i < n; i++)
        ghash_mul_add(&s, x[i], g, (int)(n - 1 - i));
    return ghash_reduce(s);
}

/* acc updated with eight blocks, not yet reversed. */
ZL_INLINE __m128i ghash8(const zl_aes_gcm *g, __m128i acc, const blocks8 *c)
{
    ghash_sum s = ghash_zero();
    ghash_mul_add(&s, xor128(bswap(c->b0), acc), g, 7);
    ghash_mul_add(&s, bswap(c->b1), g, 6);
    ghash_mul_add(&s, bswap(c->b2), g, 5);
    ghash_mul_add(&s, bswap(c->b3), g, 4);
    ghash_mul_add(&s, bswap(c->b4), g, 3);
    ghash_mul_add(&s, bswap(c->b5), g, 2);
    ghash_mul_add(&s, bswap(c->b6), g, 1);
    ghash_mul_add(&s, bswap(c->b7), g, 0);
    return ghash_reduce(s);
}

/* acc updated with len bytes, the last block padded with zeros (the aad). */
ZL_TARGET static __m128i ghash_bytes(const zl_aes_gcm *g, __m128i acc,
                                     const uint8_t *p, size_t len)
{
    __m128i x[8];
    while (len >= 16) {
        size_t n = len / 16 < 8 ? len / 16 : 8;
        for (size_t i = 0; i < n; i++)
            x[i] = bswap(load(p + 16 * i));
        acc = ghash_n(g, acc, x, n);
        p += 16 * n;
        len -= 16 * n;
    }
    if (len > 0) {
        uint8_t last[16] = {0};
        memcpy(last, p, len);
        x[0] = bswap(load(last));
        acc = ghash_n(g, acc, x, 1);
    }
    return acc;
}

/* ---- GCM ---- */

ZL_TARGET void zl_aes_gcm_x86_init(zl_aes_gcm *g, const uint8_t *key,
                                   size_t key_len)
{
    __m128i rk[15];
    expand_key(rk, key, key_len);
    g->u.x86.rounds = key_len == 16 ? 10 : 14;
    for (int r = 0; r <= g->u.x86.rounds; r++)
        store(g->u.x86.round_keys[r], rk[r]);
    mbedtls_platform_zeroize(rk, sizeof rk);

    __m128i h = bswap(aes_block(g, _mm_setzero_si128()));
    __m128i power = h;
    for (int i = 0; i < 16; i++) {
        if (i > 0) {
            ghash_sum s = ghash_zero();
            ghash_mul_add(&s, power, g, 0);
            power = ghash_reduce(s);
        }
        if (i < 8) {
            store(g->u.x86.h_powers[i], power);
            store(g->u.x86.h_karatsuba[i],
                  xor128(power, _mm_shuffle_epi32(power, 0x4e)));
        }
        store(g->u.x86.h_powers_down[15 - i], power);
    }
}

/* What seal and open share: the counter after J0, E(K, J0) for the tag,
 * and GHASH's accumulator after the aad. */
typedef struct gcm_start {
    __m128i ctr, tag_mask, acc;
} gcm_start;

ZL_TARGET static gcm_start gcm_begin(const zl_aes_gcm *g,
                                     const uint8_t nonce[12],
                                     const uint8_t *aad, size_t aad_len)
{
    uint8_t j0[16] = {0};
    memcpy(j0, nonce, 12);
    j0[15] = 1;
    gcm_start st;
    st.ctr = bswap(load(j0));
    st.tag_mask = aes_block(g, load(j0));
    st.acc = ghash_bytes(g, _mm_setzero_si128(), aad, aad_len);
    return st;
}

/* GHASH of the lengths block closes the hash; the tag is it under E(K, J0). */
ZL_TARGET static __m128i gcm_tag(const zl_aes_gcm *g, const gcm_start *st,
                                 __m128i acc, size_t aad_len, size_t len)
{
    __m128i lengths = _mm_set_epi64x((long long)((uint64_t)aad_len * 8),
                                     (long long)((uint64_t)len * 8));
    acc = ghash_n(g, acc, &lengths, 1);
    return xor128(bswap(acc), st->tag_mask);
}

/* The last len (1..127) bytes: the counter blocks they need, full blocks
 * hashed together, a partial one padded with zeros for the hash. decrypt
 * says which side holds the ciphertext. */
ZL_TARGET static __m128i gcm_tail(const zl_aes_gcm *g, __m128i ctr, __m128i acc,
                                  const uint8_t *in, size_t len, uint8_t *out,
                                  bool decrypt)
{
    size_t n = (len + 15) / 16;
    __m128i keystream[8], hashed[8];
    for (size_t i = 0; i < n; i++) {
        ctr = _mm_add_epi32(ctr, _mm_set_epi32(0, 0, 0, 1));
        keystream[i] = aes_block(g, bswap(ctr));
    }
    size_t full = len / 16;
    for (size_t i = 0; i < full; i++) {
        __m128i data = load(in + 16 * i);
        __m128i result = xor128(data, keystream[i]);
        store(out + 16 * i, result);
        hashed[i] = bswap(decrypt ? data : result);
    }
    size_t rest = len % 16;
    if (rest > 0) {
        uint8_t block[16] = {0};
        memcpy(block, in + 16 * full, rest);
        __m128i data = load(block);
        store(block, xor128(data, keystream[full]));
        memcpy(out + 16 * full, block, rest);
        if (!decrypt)
            memset(block + rest, 0, 16 - rest);
        hashed[full] = bswap(decrypt ? data : load(block));
        mbedtls_platform_zeroize(block, sizeof block);
    }
    acc = ghash_n(g, acc, hashed, n);
    mbedtls_platform_zeroize(keystream, sizeof keystream);
    return acc;
}

ZL_INLINE blocks8 load8(const uint8_t *p)
{
    blocks8 x = {load(p),      load(p + 16), load(p + 32), load(p + 48),
                 load(p + 64), load(p + 80), load(p + 96), load(p + 112)};
    return x;
}

ZL_INLINE blocks8 xor8(const blocks8 *a, const blocks8 *b)
{
    blocks8 x = {xor128(a->b0, b->b0), xor128(a->b1, b->b1),
                 xor128(a->b2, b->b2), xor128(a->b3, b->b3),
                 xor128(a->b4, b->b4), xor128(a->b5, b->b5),
                 xor128(a->b6, b->b6), xor128(a->b7, b->b7)};
    return x;
}

ZL_INLINE void store8(uint8_t *p, const blocks8 *x)
{
    store(p, x->b0);
    store(p + 16, x->b1);
    store(p + 32, x->b2);
    store(p + 48, x->b3);
    store(p + 64, x->b4);
    store(p + 80, x->b5);
    store(p + 96, x->b6);
    store(p + 112, x->b7);
}

ZL_TARGET void zl_aes_gcm_x86_seal(const zl_aes_gcm *g, const uint8_t nonce[12],
                                   const uint8_t *aad, size_t aad_len,
                                   const uint8_t *in, size_t len, uint8_t *out,
                                   uint8_t tag[16])
{
    gcm_start st = gcm_begin(g, nonce, aad, aad_len);
    __m128i ctr = st.ctr, acc = st.acc;
    size_t done = 0;
    /* At the VAES level its 256-byte groups go first; the rest is ours. */
    if (g->level == ZL_AES_GCM_VAES)
        done = zl_aes_gcm_vaes_seal(g, &ctr, &acc, in, len, out);
    /* Each group is hashed in the next group's turn, beside that group's
     * AES: the two run side by side instead of one after the other. */
    if (len - done >= 128) {
        blocks8 ks = counters8(&ctr);
        aes_blocks8(g, &ks);
        blocks8 plain = load8(in + done);
        blocks8 cipher = xor8(&plain, &ks);
        store8(out + done, &cipher);
        for (done += 128; len - done >= 128; done += 128) {
            ks = counters8(&ctr);
            aes_blocks8(g, &ks);
            acc = ghash8(g, acc, &cipher);
            plain = load8(in + done);
            cipher = xor8(&plain, &ks);
            store8(out + done, &cipher);
        }
        acc = ghash8(g, acc, &cipher);
    }
    if (done < len)
        acc = gcm_tail(g, ctr, acc, in + done, len - done, out + done, false);
    store(tag, gcm_tag(g, &st, acc, aad_len, len));
}

ZL_TARGET int zl_aes_gcm_x86_open(const zl_aes_gcm *g, const uint8_t nonce[12],
                                  const uint8_t *aad, size_t aad_len,
                                  const uint8_t *in, size_t len, uint8_t *out,
                                  const uint8_t tag[16])
{
    gcm_start st = gcm_begin(g, nonce, aad, aad_len);
    __m128i ctr = st.ctr, acc = st.acc;
    size_t done = 0;
    if (g->level == ZL_AES_GCM_VAES)
        done = zl_aes_gcm_vaes_open(g, &ctr, &acc, in, len, out);
    for (; len - done >= 128; done += 128) {
        blocks8 cipher = load8(in + done);
        blocks8 ks = counters8(&ctr);
        aes_blocks8(g, &ks);
        acc = ghash8(g, acc, &cipher);
        blocks8 plain = xor8(&cipher, &ks);
        store8(out + done, &plain);
    }
    if (done < len)
        acc = gcm_tail(g, ctr, acc, in + done, len - done, out + done, true);
    __m128i diff = xor128(gcm_tag(g, &st, acc, aad_len, len), load(tag));
    return _mm_testz_si128(diff, diff) ? 0 : -1;
}

#else
/* ISO C wants a declaration in every translation unit. */
typedef int zl_aes_gcm_x86_absent;
#endif
