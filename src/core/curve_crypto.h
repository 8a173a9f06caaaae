/* curve_crypto.h — NaCl's crypto_box for ZMTP-CURVE: X25519, XSalsa20 and
 * Poly1305 of zlink's own (x25519.c, salsa20_x4.c, poly1305.c), or
 * mbedTLS's X25519 and Poly1305 where a compiler lacks what ours need.
 * Byte for byte what libsodium computes, so that zlink and libzmq peers
 * understand each other. */
#ifndef ZL_CURVE_CRYPTO_H
#define ZL_CURVE_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poly1305.h"
#if !ZL_POLY1305_NATIVE
#include <mbedtls/poly1305.h>
#endif

#define ZL_CURVE_KEY_SIZE 32
#define ZL_CURVE_NONCE_SIZE 24
#define ZL_CURVE_MAC_SIZE 16

/* Fills buf from the OS's CSPRNG; 0, or -1. */
int zl_curve_random(void *buf, size_t len);

/* A new key pair (libsodium's crypto_box_keypair); 0, or -1. */
int zl_curve_keypair(uint8_t public_key[32], uint8_t secret_key[32]);

/* The public key of a secret one (crypto_scalarmult_base); 0, or -1. */
int zl_curve_public(uint8_t public_key[32], const uint8_t secret_key[32]);

/* crypto_box_beforenm: the key two parties share. -1 when the shared point
 * is all zeros (a hostile, low-order public key), as libsodium refuses it,
 * or on failure. */
int zl_curve_beforenm(uint8_t key[32], const uint8_t peer_public[32],
                      const uint8_t secret_key[32]);

/* A secretbox sealed or opened in pieces: the XSalsa20 keystream position
 * is carried across calls of any length (a partly used 64-byte block is
 * kept), and Poly1305 runs over the ciphertext. One thread at a time. */
typedef struct zl_secretbox {
    /* Salsa20's input block, as the core reads it: the constants, the
     * HSalsa20 subkey, the nonce's last 8 bytes and the block counter. */
    uint32_t input[16];
    /* The current keystream block and how much of it is used up. */
    uint8_t keystream[64];
    size_t keystream_used;
#if ZL_POLY1305_NATIVE
    zl_poly1305 mac;
#else
    mbedtls_poly1305_context mac;
#endif
} zl_secretbox;

void zl_secretbox_init(zl_secretbox *b, const uint8_t key[32],
                       const uint8_t nonce[24]);
/* out == in allowed. */
void zl_secretbox_seal_update(zl_secretbox *b, uint8_t *out, const uint8_t *in,
                              size_t len);
/* Also wipes b. */
void zl_secretbox_seal_final(zl_secretbox *b, uint8_t mac[16]);
/* MACs the ciphertext, then decrypts it; out == in allowed. */
void zl_secretbox_open_update(zl_secretbox *b, uint8_t *out, const uint8_t *in,
                              size_t len);
/* Compares in constant time; also wipes b. Plaintext already given out by
 * open_update must be thrown away when this says false. */
bool zl_secretbox_open_final(zl_secretbox *b, const uint8_t mac[16]);

/* One shot, in libsodium's crypto_secretbox_easy layout:
 * out = mac(16) || ciphertext(len). */
void zl_secretbox_seal(uint8_t *out, const uint8_t *in, size_t len,
                       const uint8_t nonce[24], const uint8_t key[32]);
/* in = mac || ciphertext, in_len >= 16; writes in_len - 16 bytes to out.
 * False when too short or forged (out's contents are then undefined). */
bool zl_secretbox_open(uint8_t *out, const uint8_t *in, size_t in_len,
                       const uint8_t nonce[24], const uint8_t key[32]);

#endif
