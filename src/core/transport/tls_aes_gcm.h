/* tls_aes_gcm.h — AES-GCM for the TLS record layer: AES-NI and PCLMULQDQ where
 * the CPU has them, mbedTLS's GCM elsewhere. */
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

/* One key, used by one thread at a time: mbedTLS's branch keeps a call's
 * running state in the context. A connection's two keys live on its I/O
 * thread. */
typedef struct zl_aes_gcm {
    bool accelerated;
    union {
        /* Byte-reflected GHASH keys, as the PCLMULQDQ code multiplies
         * them: H^1..H^8, and for each the XOR of its two 64-bit halves
         * (Karatsuba's middle operand). */
        struct {
            _Alignas(16) uint8_t round_keys[15][16];
            _Alignas(16) uint8_t h_powers[8][16];
            _Alignas(16) uint8_t h_karatsuba[8][16];
            int rounds;
        } x86;
        mbedtls_gcm_context mbed;
    } u;
} zl_aes_gcm;

/* True when this build and CPU run the accelerated code (x86-64 with
 * AES-NI, PCLMULQDQ, SSSE3). */
bool zl_aes_gcm_accelerated(void);
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

/* Test-only: zl_aes_gcm_init on mbedTLS's GCM whatever the CPU, so the
 * tests reach the portable branch on a machine that has the fast one. */
int zl_aes_gcm_init_portable(zl_aes_gcm *g, const uint8_t *key, size_t key_len);

/* Between tls_aes_gcm.c and tls_aes_gcm_x86.c: the accelerated branch,
 * called only when zl_aes_gcm_accelerated(). */
#ifdef ZL_AES_GCM_X86
void zl_aes_gcm_x86_init(zl_aes_gcm *g, const uint8_t *key, size_t key_len);
void zl_aes_gcm_x86_seal(const zl_aes_gcm *g, const uint8_t nonce[12],
                         const uint8_t *aad, size_t aad_len, const uint8_t *in,
                         size_t len, uint8_t *out, uint8_t tag[16]);
int zl_aes_gcm_x86_open(const zl_aes_gcm *g, const uint8_t nonce[12],
                        const uint8_t *aad, size_t aad_len, const uint8_t *in,
                        size_t len, uint8_t *out, const uint8_t tag[16]);
#endif

#endif
