/* tls_aes_gcm.c — AES-GCM's dispatch: the CPU check, and mbedTLS's GCM
 * where the accelerated code (tls_aes_gcm_x86.c) cannot run. */
#include "tls_aes_gcm.h"

#include <string.h>

#include <mbedtls/platform_util.h>

#ifdef ZL_AES_GCM_X86
#include <cpuid.h>
#endif

bool zl_aes_gcm_accelerated(void)
{
#ifdef ZL_AES_GCM_X86
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
        return false;
    const unsigned aes = 1u << 25, pclmulqdq = 1u << 1, ssse3 = 1u << 9,
                   sse41 = 1u << 19;
    const unsigned need = aes | pclmulqdq | ssse3 | sse41;
    return (ecx & need) == need;
#else
    return false;
#endif
}

int zl_aes_gcm_init_portable(zl_aes_gcm *g, const uint8_t *key, size_t key_len)
{
    memset(g, 0, sizeof *g);
    if (key_len != 16 && key_len != 32)
        return -1;
    mbedtls_gcm_init(&g->u.mbed);
    if (mbedtls_gcm_setkey(&g->u.mbed, MBEDTLS_CIPHER_ID_AES, key,
                           (unsigned)key_len * 8) != 0) {
        mbedtls_gcm_free(&g->u.mbed);
        return -1;
    }
    return 0;
}

int zl_aes_gcm_init(zl_aes_gcm *g, const uint8_t *key, size_t key_len)
{
#ifdef ZL_AES_GCM_X86
    if (zl_aes_gcm_accelerated()) {
        memset(g, 0, sizeof *g);
        if (key_len != 16 && key_len != 32)
            return -1;
        g->accelerated = true;
        zl_aes_gcm_x86_init(g, key, key_len);
        return 0;
    }
#endif
    return zl_aes_gcm_init_portable(g, key, key_len);
}

void zl_aes_gcm_seal(const zl_aes_gcm *g, const uint8_t nonce[12],
                     const uint8_t *aad, size_t aad_len, const uint8_t *in,
                     size_t len, uint8_t *out, uint8_t tag[16])
{
#ifdef ZL_AES_GCM_X86
    if (g->accelerated) {
        zl_aes_gcm_x86_seal(g, nonce, aad, aad_len, in, len, out, tag);
        return;
    }
#endif
    /* mbedTLS keeps a call's running state in the context: the const is
     * the caller's promise, not the library's. It fails only on lengths a
     * record never has (an empty nonce, 64 GiB of data). */
    mbedtls_gcm_context *ctx = (mbedtls_gcm_context *)&g->u.mbed;
    (void)mbedtls_gcm_crypt_and_tag(ctx, MBEDTLS_GCM_ENCRYPT, len, nonce, 12,
                                    aad, aad_len, in, out, 16, tag);
}

int zl_aes_gcm_open(const zl_aes_gcm *g, const uint8_t nonce[12],
                    const uint8_t *aad, size_t aad_len, const uint8_t *in,
                    size_t len, uint8_t *out, const uint8_t tag[16])
{
#ifdef ZL_AES_GCM_X86
    if (g->accelerated)
        return zl_aes_gcm_x86_open(g, nonce, aad, aad_len, in, len, out, tag);
#endif
    mbedtls_gcm_context *ctx = (mbedtls_gcm_context *)&g->u.mbed;
    int rc = mbedtls_gcm_auth_decrypt(ctx, len, nonce, 12, aad, aad_len, tag,
                                      16, in, out);
    return rc == 0 ? 0 : -1;
}

void zl_aes_gcm_free(zl_aes_gcm *g)
{
    if (!g->accelerated)
        mbedtls_gcm_free(&g->u.mbed);
    mbedtls_platform_zeroize(g, sizeof *g);
}
