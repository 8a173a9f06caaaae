/* tls_record.h — TLS 1.2 AES-GCM records sealed and opened by zlink after
 * mbedTLS's handshake: one pass over the bytes, straight between the
 * engine's buffers and the ciphertext ones, with AES-NI where there is
 * one (RFC 5246 §6.2.3.3, RFC 5288). */
#ifndef ZL_TLS_RECORD_H
#define ZL_TLS_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tls_aes_gcm.h"

#define ZL_TLS_RECORD_HEADER 5
/* The explicit nonce in front of the ciphertext and the tag behind it. */
#define ZL_TLS_RECORD_EXPANSION (8 + 16)
#define ZL_TLS_RECORD_OVERHEAD (ZL_TLS_RECORD_HEADER + ZL_TLS_RECORD_EXPANSION)

#define ZL_TLS_CONTENT_ALERT 21
#define ZL_TLS_CONTENT_HANDSHAKE 22
#define ZL_TLS_CONTENT_APPLICATION 23

/* What mbedTLS's key export gave during the handshake: the master secret,
 * both randoms as the key expansion's seed, and the PRF. */
typedef struct zl_tls_secrets {
    uint8_t master[48];
    uint8_t seed[64]; /* server_random || client_random */
    int prf;          /* mbedtls_tls_prf_types */
    bool have;
} zl_tls_secrets;

void zl_tls_secrets_keep(zl_tls_secrets *s, const uint8_t *master,
                         size_t master_len, const uint8_t client_random[32],
                         const uint8_t server_random[32], int prf);

typedef struct zl_tls_record {
    zl_aes_gcm seal_key, open_key;
    uint8_t seal_salt[4], open_salt[4];
    uint64_t seal_seq, open_seq;
} zl_tls_record;

/* The AES key length of an mbedTLS suite name this layer runs (16 or 32),
 * or 0. */
size_t zl_tls_record_key_len(const char *suite);

/* Derives both directions' keys from the secrets (which it then wipes).
 * Sequence numbers start at 1: each side's Finished was record 0 of its
 * epoch. 0, or -1. */
int zl_tls_record_init(zl_tls_record *r, zl_tls_secrets *secrets,
                       size_t key_len, bool client);
void zl_tls_record_free(zl_tls_record *r);

/* Writes one record of len (≤ 16384) bytes to out, which has room for
 * len + ZL_TLS_RECORD_OVERHEAD; returns what it wrote. */
size_t zl_tls_record_seal(zl_tls_record *r, uint8_t type, const uint8_t *plain,
                          size_t len, uint8_t *out);

/* The body length of the record whose header is at p. */
size_t zl_tls_record_body_len(const uint8_t *p);

/* Opens the whole record at rec (header and body_len bytes of body) into
 * out, which may be rec + ZL_TLS_RECORD_HEADER + 8 itself, with room for
 * the plaintext; sets *len to it. 0, or -1 for a record that fails its
 * tag or is too short to hold one. */
int zl_tls_record_open(zl_tls_record *r, const uint8_t *rec, size_t body_len,
                       uint8_t *out, size_t *len);

#endif
