/* tls_internal.h — what the TLS files share among themselves: the random
 * generator and the system's trust store. */
#ifndef ZL_TLS_INTERNAL_H
#define ZL_TLS_INTERNAL_H

#include <stddef.h>

#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>

/* mbedTLS's f_rng: a process-wide CTR-DRBG behind a lock. */
int zl_tls_random(void *unused, unsigned char *out, size_t len);

/* Adds the system's trusted roots to ca; -1 when there is no store or it
 * holds nothing usable. */
int zl_tls_load_system_store(mbedtls_x509_crt *ca);

/* mbedTLS 2.28's key export, set on each config (tls_stream.c keeps the
 * secrets of the connection whose handshake runs). 3.x exports per
 * connection instead. */
#if MBEDTLS_VERSION_NUMBER < 0x03000000 && defined(MBEDTLS_SSL_EXPORT_KEYS)
#define ZL_TLS_EXPORT_KEYS_228
int zl_tls_export_keys(void *unused, const unsigned char *master,
                       const unsigned char *key_block, size_t mac_len,
                       size_t key_len, size_t iv_len,
                       const unsigned char client_random[32],
                       const unsigned char server_random[32],
                       mbedtls_tls_prf_types prf);
#endif

#endif
