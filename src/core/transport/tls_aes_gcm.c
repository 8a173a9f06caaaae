/* tls_aes_gcm.c — stand-in: mbedTLS's GCM only (the gcm branch replaces it). */
#include "tls_aes_gcm.h"

bool zl_aes_gcm_accelerated(void)
{
    return false;
}

int zl_aes_gcm_init(zl_aes_gcm *g, const uint8_t *key, size_t key_len)
{
    g->accelerated = false;
    mbedtls_gcm_init(&g->u.mbed);
    if ((key_len != 16 && key_len != 32) ||
        mbedtls_gcm_setkey(&g->u.mbed, MBEDTLS_CIPHER_ID_AES, key,
                           (unsigned)key_len * 8) != 0) {
        mbedtls_gcm_free(&g->u.mbed);
        return -1;
    }
    return 0;
}

void zl_aes_gcm_seal(const zl_aes_gcm *g, const uint8_t nonce[12],
                     const uint8_t *aad, size_t aad_len, const uint8_t *in,
                     size_t len, uint8_t *out, uint8_t tag[16])
{
    mbedtls_gcm_crypt_and_tag((mbedtls_gcm_context *)&g->u.mbed,
                              MBEDTLS_GCM_ENCRYPT, len, nonce, 12, aad, aad_len,
                              in, out, 16, tag);
}

int zl_aes_gcm_open(const zl_aes_gcm *g, const uint8_t nonce[12],
                    const uint8_t *aad, size_t aad_len, const uint8_t *in,
                    size_t len, uint8_t *out, const uint8_t tag[16])
{
    return mbedtls_gcm_auth_decrypt((mbedtls_gcm_context *)&g->u.mbed, len,
                                    nonce, 12, aad, aad_len, tag, 16, in,
                                    out) == 0
               ? 0
               : -1;
}

void zl_aes_gcm_free(zl_aes_gcm *g)
{
    mbedtls_gcm_free(&g->u.mbed);
}
