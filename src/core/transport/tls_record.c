/* tls_record.c — TLS 1.2 AES-GCM records, sealed and opened by zlink. */
#include "tls_record.h"

#include <string.h>

#include <mbedtls/platform_util.h>
#include <mbedtls/ssl.h>

void zl_tls_secrets_keep(zl_tls_secrets *s, const uint8_t *master,
                         size_t master_len, const uint8_t client_random[32],
                         const uint8_t server_random[32], int prf)
{
    if (master_len != sizeof s->master)
        return;
    memcpy(s->master, master, sizeof s->master);
    memcpy(s->seed, server_random, 32);
    memcpy(s->seed + 32, client_random, 32);
    s->prf = prf;
    s->have = true;
}

size_t zl_tls_record_key_len(const char *suite)
{
    if (!suite)
        return 0;
    if (strstr(suite, "-WITH-AES-128-GCM-"))
        return 16;
    if (strstr(suite, "-WITH-AES-256-GCM-"))
        return 32;
    return 0;
}

/* The key block (RFC 5246 §6.3): no MAC keys for an AEAD suite, then the
 * client's key, the server's, the client's 4-byte salt, the server's. */
int zl_tls_record_init(zl_tls_record *r, zl_tls_secrets *secrets,
                       size_t key_len, bool client)
{
    memset(r, 0, sizeof *r);
    uint8_t block[2 * 32 + 2 * 4];
    size_t block_len = 2 * key_len + 2 * 4;
    int rc = -1;
    if (!secrets->have || (key_len != 16 && key_len != 32) ||
        mbedtls_ssl_tls_prf((mbedtls_tls_prf_types)secrets->prf,
                            secrets->master, sizeof secrets->master,
                            "key expansion", secrets->seed,
                            sizeof secrets->seed, block, block_len) != 0)
        goto out;
    const uint8_t *client_key = block, *server_key = block + key_len;
    const uint8_t *client_salt = block + 2 * key_len;
    const uint8_t *server_salt = client_salt + 4;
    if (zl_aes_gcm_init(&r->seal_key, client ? client_key : server_key,
                        key_len) != 0)
        goto out;
    if (zl_aes_gcm_init(&r->open_key, client ? server_key : client_key,
                        key_len) != 0) {
        zl_aes_gcm_free(&r->seal_key);
        goto out;
    }
    memcpy(r->seal_salt, client ? client_salt : server_salt, 4);
    memcpy(r->open_salt, client ? server_salt : client_salt, 4);
    r->seal_seq = r->open_seq = 1;
    rc = 0;
out:
    mbedtls_platform_zeroize(block, sizeof block);
    mbedtls_platform_zeroize(secrets, sizeof *secrets);
    return rc;
}

void zl_tls_record_free(zl_tls_record *r)
{
    zl_aes_gcm_free(&r->seal_key);
    zl_aes_gcm_free(&r->open_key);
    mbedtls_platform_zeroize(r, sizeof *r);
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

/* additional_data: seq_num, type, version, plaintext length. */
static void make_aad(uint8_t aad[13], uint64_t seq, const uint8_t *header,
                     size_t len)
{
    put_be64(aad, seq);
    aad[8] = header[0];
    aad[9] = header[1];
    aad[10] = header[2];
    aad[11] = (uint8_t)(len >> 8);
    aad[12] = (uint8_t)len;
}

size_t zl_tls_record_seal(zl_tls_record *r, uint8_t type, const uint8_t *plain,
                          size_t len, uint8_t *out)
{
    size_t body = len + ZL_TLS_RECORD_EXPANSION;
    out[0] = type;
    out[1] = 3;
    out[2] = 3;
    out[3] = (uint8_t)(body >> 8);
    out[4] = (uint8_t)body;
    /* The explicit nonce is the sequence number, as mbedTLS and OpenSSL
     * send it: unique per key without a random source. */
    uint8_t nonce[12];
    memcpy(nonce, r->seal_salt, 4);
    put_be64(nonce + 4, r->seal_seq);
    memcpy(out + ZL_TLS_RECORD_HEADER, nonce + 4, 8);
    uint8_t aad[13];
    make_aad(aad, r->seal_seq, out, len);
    uint8_t *cipher = out + ZL_TLS_RECORD_HEADER + 8;
    zl_aes_gcm_seal(&r->seal_key, nonce, aad, sizeof aad, plain, len, cipher,
                    cipher + len);
    r->seal_seq++;
    return ZL_TLS_RECORD_HEADER + body;
}

size_t zl_tls_record_body_len(const uint8_t *p)
{
    return (size_t)p[3] << 8 | p[4];
}

int zl_tls_record_open(zl_tls_record *r, const uint8_t *rec, size_t body_len,
                       uint8_t *out, size_t *len)
{
    if (body_len < ZL_TLS_RECORD_EXPANSION)
        return -1;
    size_t plain_len = body_len - ZL_TLS_RECORD_EXPANSION;
    uint8_t nonce[12];
    memcpy(nonce, r->open_salt, 4);
    memcpy(nonce + 4, rec + ZL_TLS_RECORD_HEADER, 8);
    uint8_t aad[13];
    make_aad(aad, r->open_seq, rec, plain_len);
    const uint8_t *cipher = rec + ZL_TLS_RECORD_HEADER + 8;
    if (zl_aes_gcm_open(&r->open_key, nonce, aad, sizeof aad, cipher, plain_len,
                        out, cipher + plain_len) != 0)
        return -1;
    r->open_seq++;
    *len = plain_len;
    return 0;
}
