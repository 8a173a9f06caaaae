/* tls_internal.h — what the TLS files share among themselves: the random
 * generator and the system's trust store. */
#ifndef ZL_TLS_INTERNAL_H
#define ZL_TLS_INTERNAL_H

#include <stddef.h>

#include <mbedtls/x509_crt.h>

/* mbedTLS's f_rng: a process-wide CTR-DRBG behind a lock. */
int zl_tls_random(void *unused, unsigned char *out, size_t len);

/* Adds the system's trusted roots to ca; -1 when there is no store or it
 * holds nothing usable. */
int zl_tls_load_system_store(mbedtls_x509_crt *ca);

#endif
