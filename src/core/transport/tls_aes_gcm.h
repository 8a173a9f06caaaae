/* tls_aes_gcm.h — AES-GCM for the TLS record layer: AES-NI and PCLMULQDQ
 * where the CPU has them, mbedTLS's GCM elsewhere. */
#ifndef ZL_TLS_AES_GCM_H
#define ZL_TLS_AES_GCM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mbedtls/gcm.h>

typedef struct zl_aes_gcm {
    bool accelerated;
    union {
        mbedtls_gcm_context mbed;
    } u;
} zl_aes_gcm;

bool zl_aes_gcm_accelerated(void);
int zl_aes_gcm_init(zl_aes_gcm *g, const uint8_t *key, size_t key_len);
void zl_aes_gcm_seal(const zl_aes_gcm *g, const uint8_t nonce[12],
                     const uint8_t *aad, size_t aad_len, const uint8_t *in,
                     size_t len, uint8_t *out, uint8_t tag[16]);
int zl_aes_gcm_open(const zl_aes_gcm *g, const uint8_t nonce[12],
                    const uint8_t *aad, size_t aad_len, const uint8_t *in,
                    size_t len, uint8_t *out, const uint8_t tag[16]);
void zl_aes_gcm_free(zl_aes_gcm *g);

#endif
