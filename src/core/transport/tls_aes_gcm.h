/* tls_aes_gcm.h — AES-GCM for the TLS record layer: VAES or AES-NI, with
 * PCLMULQDQ, where the CPU has them, mbedTLS's GCM elsewhere. */
#ifndef ZL_TLS_AES_GCM_H
#define ZL_TLS_AES_GCM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/gcm.h>

/* The accelerated code exists only for x86-64 compilers that take
 * per-function target attributes (GCC, clang); elsewhere (aarch64, MSVC)
 * the mbedTLS branch is the only one. */
#if (defined(__x86_64__) || defined(_M_X64)) &&                                \
    (defined(__GNUC__) || defined(__clang__))
#define ZL_AES_GCM_X86 1
#endif

/* The code a key runs, each level needing more of the CPU: mbedTLS's GCM,
 * AES-NI and PCLMULQDQ on 128-bit registers, then VAES and VPCLMULQDQ on
 * 256-bit ones (AVX2) for the bulk of a record. */
enum zl_aes_gcm_level {
    ZL_AES_GCM_PORTABLE,
    ZL_AES_GCM_AESNI,
    ZL_AES_GCM_VAES,
};

/* One key, used by one thread at a time: mbedTLS's branch keeps a call's
 * running state in the context. A connection's two keys live on its I/O
 * thread. */
typedef struct zl_aes_gcm {
    int level;
    union {
        /* Byte-reflected GHASH keys, as the PCLMULQDQ code multiplies
         * them: H^1..H^8, and for each the XOR of its two 64-bit halves
         * (Karatsuba's middle operand). The VAES code takes sixteen
         * blocks against H^16..H^1, in that order, so that one 256-bit
         * load gives the powers of two neighbouring blocks. */
        struct {
            _Alignas(16) uint8_t round_keys[15][16];
            _Alignas(16) uint8_t h_powers[8][16];
            _Alignas(16) uint8_t h_karatsuba[8][16];
            _Alignas(16) uint8_t h_powers_down[16][16];
            int rounds;
        } x86;
        mbedtls_gcm_context mbed;
    } u;
} zl_aes_gcm;

/* True when this build and CPU run the accelerated code (x86-64 with
 * AES-NI, PCLMULQDQ, SSSE3). */
bool zl_aes_gcm_accelerated(void);
/* The highest level this build and CPU run (found once, then remembered);
 * zl_aes_gcm_init takes it. */
int zl_aes_gcm_cpu_level(void);
/* key_len 16 or 32. 0, or -1 on a bad length (or mbedTLS failing). */
int zl_aes_gcm_init(zl_aes_gcm *g, const uint8_t *key, size_t key_len);
/* Encrypts len bytes from in to out (in == out allowed; no other overlap)
 * with a 12-byte nonce and aad; writes the 16-byte tag. */
void zl_aes_gcm_seal(const zl_aes_gcm *g, const uint8_t nonce[12],
                     const uint8_t *aad, size_t aad_len, const uint8_t *in,
                     size_t len, uint8_t *out, uint8_t tag[16]);
/* Decrypts and checks the tag (constant-time compare). 0 if it verifies,
 * -1 if not (out's content is then unspecified and the caller discards
 * it). in == out allowed. */
int zl_aes_gcm_open(const zl_aes_gcm *g, const uint8_t nonce[12],
                    const uint8_t *aad, size_t aad_len, const uint8_t *in,
                    size_t len, uint8_t *out, const uint8_t tag[16]);
/* Zeroes the key material (and frees mbedTLS's context). Also after an
 * init that failed. */
void zl_aes_gcm_free(zl_aes_gcm *g);

/* Test-only: zl_aes_gcm_init on the given level, so the tests and the
 * bench reach every branch below the CPU's own. -1 also when the CPU does
 * not run that level. */
int zl_aes_gcm_init_level(zl_aes_gcm *g, const uint8_t *key, size_t key_len,
                          int level);

#endif
