/* x25519.c — X25519 (RFC 7748) in five 51-bit limbs, for compilers with a
 * 128-bit integer: some fifteen times faster than mbedTLS's generic bignum
 * ladder, which is what a CURVE handshake spends its time in. Constant
 * time: the ladder swaps by mask, and no branch or index depends on the
 * scalar. Other compilers use mbedTLS (curve_crypto.c). */
#include "x25519.h"

#if ZL_X25519_NATIVE

#include <string.h>

__extension__ typedef unsigned __int128 u128;

#define MASK51 ((UINT64_C(1) << 51) - 1)

/* An element of GF(2^255 - 19): sum of v[i] * 2^(51 i). Limbs may run a
 * few bits past 51 between reductions. */
typedef struct fe {
    uint64_t v[5];
} fe;

static uint64_t load64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The top bit is ignored, as RFC 7748 asks of a u-coordinate. */
static void fe_from_bytes(fe *r, const uint8_t s[32])
{
    r->v[0] = load64(s) & MASK51;
    r->v[1] = (load64(s + 6) >> 3) & MASK51;
    r->v[2] = (load64(s + 12) >> 6) & MASK51;
    r->v[3] = (load64(s + 19) >> 1) & MASK51;
    r->v[4] = (load64(s + 24) >> 12) & MASK51;
}

/* Limbs back under 2^51, what passes 2^255 folded in as 19 times it. */
static void fe_carry(fe *r)
{
    uint64_t c;
    for (int i = 0; i < 4; i++) {
        c = r->v[i] >> 51;
        r->v[i] &= MASK51;
        r->v[i + 1] += c;
    }
    c = r->v[4] >> 51;
    r->v[4] &= MASK51;
    r->v[0] += c * 19;
    c = r->v[0] >> 51;
    r->v[0] &= MASK51;
    r->v[1] += c;
}

/* The one representative below p, little-endian. */
static void fe_to_bytes(uint8_t out[32], const fe *a)
{
    fe t = *a;
    fe_carry(&t);
    fe_carry(&t);
    /* q is 1 when t >= p: t + 19 then reaches 2^255. */
    uint64_t q = (t.v[0] + 19) >> 51;
    q = (t.v[1] + q) >> 51;
    q = (t.v[2] + q) >> 51;
    q = (t.v[3] + q) >> 51;
    q = (t.v[4] + q) >> 51;
    t.v[0] += 19 * q;
    for (int i = 0; i < 4; i++) {
        t.v[i + 1] += t.v[i] >> 51;
        t.v[i] &= MASK51;
    }
    t.v[4] &= MASK51;
    uint64_t words[4] = {
        t.v[0] | t.v[1] << 51,
        t.v[1] >> 13 | t.v[2] << 38,
        t.v[2] >> 26 | t.v[3] << 25,
        t.v[3] >> 39 | t.v[4] << 12,
    };
    for (int w = 0; w < 4; w++)
        for (int i = 0; i < 8; i++)
            out[8 * w + i] = (uint8_t)(words[w] >> (8 * i));
}

static void fe_add(fe *r, const fe *a, const fe *b)
{
    for (int i = 0; i < 5; i++)
        r->v[i] = a->v[i] + b->v[i];
}

/* a - b, plus 4p so that no limb goes below zero for inputs under 2^53. */
static void fe_sub(fe *r, const fe *a, const fe *b)
{
    static const uint64_t four_p[5] = {4 * (MASK51 - 18), 4 * MASK51,
                                       4 * MASK51, 4 * MASK51, 4 * MASK51};
    for (int i = 0; i < 5; i++)
        r->v[i] = a->v[i] + four_p[i] - b->v[i];
    fe_carry(r);
}

/* Products of limbs under 2^54 sum below 2^116: a u128 holds them. The
 * parts past 2^255 come back multiplied by 19 (2^255 = 19 mod p). */
static void fe_mul(fe *r, const fe *a, const fe *b)
{
    const uint64_t *x = a->v, *y = b->v;
    uint64_t y1 = y[1] * 19, y2 = y[2] * 19, y3 = y[3] * 19, y4 = y[4] * 19;
    u128 t[5];
    t[0] = (u128)x[0] * y[0] + (u128)x[1] * y4 + (u128)x[2] * y3 +
           (u128)x[3] * y2 + (u128)x[4] * y1;
    t[1] = (u128)x[0] * y[1] + (u128)x[1] * y[0] + (u128)x[2] * y4 +
           (u128)x[3] * y3 + (u128)x[4] * y2;
    t[2] = (u128)x[0] * y[2] + (u128)x[1] * y[1] + (u128)x[2] * y[0] +
           (u128)x[3] * y4 + (u128)x[4] * y3;
    t[3] = (u128)x[0] * y[3] + (u128)x[1] * y[2] + (u128)x[2] * y[1] +
           (u128)x[3] * y[0] + (u128)x[4] * y4;
    t[4] = (u128)x[0] * y[4] + (u128)x[1] * y[3] + (u128)x[2] * y[2] +
           (u128)x[3] * y[1] + (u128)x[4] * y[0];
    for (int i = 0; i < 4; i++) {
        t[i + 1] += t[i] >> 51;
        r->v[i] = (uint64_t)t[i] & MASK51;
    }
    uint64_t c = (uint64_t)(t[4] >> 51);
    r->v[4] = (uint64_t)t[4] & MASK51;
    r->v[0] += c * 19;
    r->v[1] += r->v[0] >> 51;
    r->v[0] &= MASK51;
}

static void fe_mul_small(fe *r, const fe *a, uint32_t k)
{
    u128 t[5];
    for (int i = 0; i < 5; i++)
        t[i] = (u128)a->v[i] * k;
    for (int i = 0; i < 4; i++) {
        t[i + 1] += t[i] >> 51;
        r->v[i] = (uint64_t)t[i] & MASK51;
    }
    uint64_t c = (uint64_t)(t[4] >> 51);
    r->v[4] = (uint64_t)t[4] & MASK51;
    r->v[0] += c * 19;
    r->v[1] += r->v[0] >> 51;
    r->v[0] &= MASK51;
}

/* z^(p-2) = 1/z: the exponent is public, so plain square-and-multiply.
 * p - 2 = 2^255 - 21 has every bit set but bits 2 and 4. */
static void fe_invert(fe *r, const fe *z)
{
    fe acc = {{1, 0, 0, 0, 0}};
    for (int bit = 254; bit >= 0; bit--) {
        fe_mul(&acc, &acc, &acc);
        if (bit != 2 && bit != 4)
            fe_mul(&acc, &acc, z);
    }
    *r = acc;
}

/* Swaps a and b when swap is 1, by mask: no branch on the secret bit. */
static void fe_cswap(fe *a, fe *b, uint64_t swap)
{
    uint64_t mask = 0 - swap;
    for (int i = 0; i < 5; i++) {
        uint64_t x = mask & (a->v[i] ^ b->v[i]);
        a->v[i] ^= x;
        b->v[i] ^= x;
    }
}

static void wipe(void *p, size_t n)
{
    volatile uint8_t *v = p;
    while (n--)
        *v++ = 0;
}

void zl_x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t u[32])
{
    uint8_t k[32];
    memcpy(k, scalar, 32);
    k[0] &= 248;
    k[31] &= 127;
    k[31] |= 64;
    fe x1, x2 = {{1, 0, 0, 0, 0}}, z2 = {{0}}, x3, z3 = {{1, 0, 0, 0, 0}};
    fe a, aa, b, bb, e, c, d, da, cb;
    fe_from_bytes(&x1, u);
    x3 = x1;
    uint64_t swap = 0;
    /* RFC 7748's Montgomery ladder, from bit 254 down. */
    for (int t = 254; t >= 0; t--) {
        uint64_t bit = (k[t >> 3] >> (t & 7)) & 1;
        swap ^= bit;
        fe_cswap(&x2, &x3, swap);
        fe_cswap(&z2, &z3, swap);
        swap = bit;
        fe_add(&a, &x2, &z2);
        fe_mul(&aa, &a, &a);
        fe_sub(&b, &x2, &z2);
        fe_mul(&bb, &b, &b);
        fe_sub(&e, &aa, &bb);
        fe_add(&c, &x3, &z3);
        fe_sub(&d, &x3, &z3);
        fe_mul(&da, &d, &a);
        fe_mul(&cb, &c, &b);
        fe_add(&x3, &da, &cb);
        fe_mul(&x3, &x3, &x3);
        fe_sub(&z3, &da, &cb);
        fe_mul(&z3, &z3, &z3);
        fe_mul(&z3, &z3, &x1);
        fe_mul(&x2, &aa, &bb);
        fe_mul_small(&z2, &e, 121665);
        fe_add(&z2, &z2, &aa);
        fe_mul(&z2, &z2, &e);
    }
    fe_cswap(&x2, &x3, swap);
    fe_cswap(&z2, &z3, swap);
    fe_invert(&z2, &z2);
    fe_mul(&x2, &x2, &z2);
    fe_to_bytes(out, &x2);
    wipe(k, sizeof k);
    wipe(&x2, sizeof x2);
    wipe(&z2, sizeof z2);
    wipe(&x3, sizeof x3);
    wipe(&z3, sizeof z3);
}

#endif
