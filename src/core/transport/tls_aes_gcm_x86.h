/* tls_aes_gcm_x86.h — what the two x86 files of AES-GCM share: the entry
 * points tls_aes_gcm.c calls, and the 128-bit steps both inline. */
#ifndef ZL_TLS_AES_GCM_X86_H
#define ZL_TLS_AES_GCM_X86_H

#include "tls_aes_gcm.h"

#ifdef ZL_AES_GCM_X86

#include <immintrin.h>

/* Per function, not for the whole build: the library still runs on an
 * x86-64 without these, and zl_aes_gcm_cpu_level() keeps it off here. */
#define ZL_AESNI_TARGET __attribute__((target("aes,pclmul,ssse3,sse4.1")))

/* The AES-NI branch, called only at level ZL_AES_GCM_AESNI or above. */
void zl_aes_gcm_x86_init(zl_aes_gcm *g, const uint8_t *key, size_t key_len);
void zl_aes_gcm_x86_seal(const zl_aes_gcm *g, const uint8_t nonce[12],
                         const uint8_t *aad, size_t aad_len, const uint8_t *in,
                         size_t len, uint8_t *out, uint8_t tag[16]);
int zl_aes_gcm_x86_open(const zl_aes_gcm *g, const uint8_t nonce[12],
                        const uint8_t *aad, size_t aad_len, const uint8_t *in,
                        size_t len, uint8_t *out, const uint8_t tag[16]);

/* The VAES bulk, called by the AES-NI branch at level ZL_AES_GCM_VAES:
 * seals (opens) whole 256-byte groups from the front of in, moving ctr
 * (the last counter used, byte-reversed) and acc (GHASH's accumulator)
 * past them. Returns the bytes done; the caller does the rest. */
size_t zl_aes_gcm_vaes_seal(const zl_aes_gcm *g, __m128i *ctr, __m128i *acc,
                            const uint8_t *in, size_t len, uint8_t *out);
size_t zl_aes_gcm_vaes_open(const zl_aes_gcm *g, __m128i *ctr, __m128i *acc,
                            const uint8_t *in, size_t len, uint8_t *out);

/* GHASH works on blocks byte-reversed into registers (the white paper's
 * reflected order, Gueron and Kounavis); this mask reverses them. A
 * counter block reversed has its 32-bit big-endian counter in lane 0, so
 * _mm_add_epi32 is GCM's inc32, wrapping included. */
#define ZL_BSWAP_MASK                                                          \
    _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)

/* A sum of unreduced 256-bit products, Karatsuba's three parts apart:
 * eight blocks' products add up before the one reduction they share. */
typedef struct ghash_sum {
    __m128i lo, mid, hi;
} ghash_sum;

/* The sum's 256 bits shifted left by one (the reflected order's product
 * lands one bit short) and reduced modulo x^128 + x^7 + x^2 + x + 1: the
 * white paper's shift-and-XOR reduction, two phases. */
ZL_AESNI_TARGET __attribute__((always_inline)) static inline __m128i
ghash_reduce(ghash_sum s)
{
    __m128i mid = _mm_xor_si128(s.mid, _mm_xor_si128(s.lo, s.hi));
    __m128i lo = _mm_xor_si128(s.lo, _mm_slli_si128(mid, 8));
    __m128i hi = _mm_xor_si128(s.hi, _mm_srli_si128(mid, 8));

    __m128i lo_carry = _mm_srli_epi32(lo, 31);
    __m128i hi_carry = _mm_srli_epi32(hi, 31);
    __m128i across = _mm_srli_si128(lo_carry, 12);
    lo = _mm_or_si128(_mm_slli_epi32(lo, 1), _mm_slli_si128(lo_carry, 4));
    hi = _mm_or_si128(_mm_slli_epi32(hi, 1), _mm_slli_si128(hi_carry, 4));
    hi = _mm_or_si128(hi, across);

    __m128i a = _mm_xor_si128(_mm_slli_epi32(lo, 31), _mm_slli_epi32(lo, 30));
    a = _mm_xor_si128(a, _mm_slli_epi32(lo, 25));
    __m128i a_out = _mm_srli_si128(a, 4);
    lo = _mm_xor_si128(lo, _mm_slli_si128(a, 12));
    __m128i b = _mm_xor_si128(_mm_srli_epi32(lo, 1), _mm_srli_epi32(lo, 2));
    b = _mm_xor_si128(b, _mm_xor_si128(_mm_srli_epi32(lo, 7), a_out));
    lo = _mm_xor_si128(lo, b);
    return _mm_xor_si128(hi, lo);
}

#endif

#endif
