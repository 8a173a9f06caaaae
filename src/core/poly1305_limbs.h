/* poly1305_limbs.h — arithmetic on Poly1305's accumulator in three limbs
 * of 44, 44 and 42 bits, shared by the one-block code (poly1305.c) and the
 * four-lane one's setup (poly1305_x4.c). */
#ifndef ZL_POLY1305_LIMBS_H
#define ZL_POLY1305_LIMBS_H

#include <stdint.h>

#include "poly1305.h"

#if ZL_POLY1305_NATIVE

__extension__ typedef unsigned __int128 zl_u128;

#define ZL_POLY_MASK44 ((UINT64_C(1) << 44) - 1)
#define ZL_POLY_MASK42 ((UINT64_C(1) << 42) - 1)

/* h = h * r mod 2^130 - 5, each limb back within its width but the first,
 * which may be a little over. s1 and s2 are r[1] and r[2] times 20: what
 * passes 2^130 comes back as five times it, four limb places lower. */
static inline void zl_poly1305_mul(uint64_t h[3], const uint64_t r[3],
                                   uint64_t s1, uint64_t s2)
{
    zl_u128 d0 = (zl_u128)h[0] * r[0] + (zl_u128)h[1] * s2 + (zl_u128)h[2] * s1;
    zl_u128 d1 =
        (zl_u128)h[0] * r[1] + (zl_u128)h[1] * r[0] + (zl_u128)h[2] * s2;
    zl_u128 d2 =
        (zl_u128)h[0] * r[2] + (zl_u128)h[1] * r[1] + (zl_u128)h[2] * r[0];
    uint64_t c = (uint64_t)(d0 >> 44);
    uint64_t h0 = (uint64_t)d0 & ZL_POLY_MASK44;
    d1 += c;
    c = (uint64_t)(d1 >> 44);
    uint64_t h1 = (uint64_t)d1 & ZL_POLY_MASK44;
    d2 += c;
    c = (uint64_t)(d2 >> 42);
    h[2] = (uint64_t)d2 & ZL_POLY_MASK42;
    h0 += c * 5;
    c = h0 >> 44;
    h[0] = h0 & ZL_POLY_MASK44;
    h[1] = h1 + c;
}

/* Carries h all the way round, twice: every limb within its width after,
 * the value below 2^130 but not yet below 2^130 - 5. */
static inline void zl_poly1305_carry(uint64_t h[3])
{
    for (int pass = 0; pass < 2; pass++) {
        uint64_t c = h[1] >> 44;
        h[1] &= ZL_POLY_MASK44;
        h[2] += c;
        c = h[2] >> 42;
        h[2] &= ZL_POLY_MASK42;
        h[0] += c * 5;
        c = h[0] >> 44;
        h[0] &= ZL_POLY_MASK44;
        h[1] += c;
    }
}

#endif

#endif
