/* curve_crypto.c — crypto_box and crypto_secretbox (curve_crypto.h): the
 * Salsa20 core, HSalsa20 and XSalsa20 written from Bernstein's spec, X25519
 * and Poly1305 from mbedTLS. */
#include "curve_crypto.h"

#include <string.h>

#include <mbedtls/bignum.h>
#include <mbedtls/ecdh.h>
#include <mbedtls/ecp.h>
#include <mbedtls/platform_util.h>
#include <uv.h>

#include "salsa20_rounds.h"
#include "salsa20_x4.h"
#include "salsa20_x8.h"
#include "x25519.h"

/* The one-time authenticator, ours or mbedTLS's (poly1305.h). */
#if ZL_POLY1305_NATIVE
static void mac_start(zl_secretbox *b, const uint8_t key[32])
{
    zl_poly1305_init(&b->mac, key);
}

static void mac_update(zl_secretbox *b, const uint8_t *data, size_t len)
{
    zl_poly1305_update(&b->mac, data, len);
}

static void mac_finish(zl_secretbox *b, uint8_t mac[16])
{
    zl_poly1305_finish(&b->mac, mac);
}
#else
static void mac_start(zl_secretbox *b, const uint8_t key[32])
{
    mbedtls_poly1305_init(&b->mac);
    mbedtls_poly1305_starts(&b->mac, key);
}

static void mac_update(zl_secretbox *b, const uint8_t *data, size_t len)
{
    mbedtls_poly1305_update(&b->mac, data, len);
}

static void mac_finish(zl_secretbox *b, uint8_t mac[16])
{
    mbedtls_poly1305_finish(&b->mac, mac);
    mbedtls_poly1305_free(&b->mac);
}
#endif

/* "expand 32-byte k", the constants of Salsa20 with a 256-bit key. */
static const uint32_t sigma[4] = {0x61707865, 0x3320646e, 0x79622d32,
                                  0x6b206574};

static uint32_t load_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void store_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t rotl32(uint32_t v, int n)
{
    return (v << n) | (v >> (32 - n));
}

#define QUARTER_ROUND(x, a, b, c, d)                                           \
    do {                                                                       \
        x[b] ^= rotl32(x[a] + x[d], 7);                                        \
        x[c] ^= rotl32(x[b] + x[a], 9);                                        \
        x[d] ^= rotl32(x[c] + x[b], 13);                                       \
        x[a] ^= rotl32(x[d] + x[c], 18);                                       \
    } while (0)

/* Salsa20/20's twenty rounds on x, without the final addition of the input
 * (HSalsa20 leaves it out). */
static void salsa20_rounds(uint32_t x[16])
{
    ZL_SALSA20_ROUNDS(QUARTER_ROUND, x)
}

/* Lays out Salsa20's input: the constants on the diagonal, the key's halves
 * around them, and the 16 bytes in the middle (nonce and counter for a
 * stream block, the nonce's first half for HSalsa20). */
static void salsa20_input(uint32_t input[16], const uint8_t key[32],
                          const uint8_t middle[16])
{
    input[0] = sigma[0];
    input[5] = sigma[1];
    input[10] = sigma[2];
    input[15] = sigma[3];
    for (int i = 0; i < 4; i++) {
        input[1 + i] = load_le32(key + 4 * i);
        input[11 + i] = load_le32(key + 16 + 4 * i);
        input[6 + i] = load_le32(middle + 4 * i);
    }
}

/* HSalsa20: the subkey XSalsa20 derives from the key and the nonce's first
 * 16 bytes (and crypto_box from the X25519 point and zeros). */
static void hsalsa20(uint8_t out[32], const uint8_t key[32],
                     const uint8_t in[16])
{
    static const int picked[8] = {0, 5, 10, 15, 6, 7, 8, 9};
    uint32_t x[16];
    salsa20_input(x, key, in);
    salsa20_rounds(x);
    for (int i = 0; i < 8; i++)
        store_le32(out + 4 * i, x[picked[i]]);
    mbedtls_platform_zeroize(x, sizeof x);
}

/* The block at input's counter, then the counter moves on (words 8 and 9
 * hold it, low word first). */
static void salsa20_next_block(uint32_t input[16], uint32_t block[16])
{
    memcpy(block, input, 16 * sizeof *block);
    salsa20_rounds(block);
    for (int i = 0; i < 16; i++)
        block[i] += input[i];
    if (++input[8] == 0)
        input[9]++;
}

/* Whole blocks go straight from the core's words to out, without a byte
 * buffer in between. Loads and stores go byte by byte, so any alignment
 * and byte order works, and out may be in. */
static void xor_whole_blocks(zl_secretbox *b, uint8_t *out, const uint8_t *in,
                             size_t blocks)
{
    uint32_t block[16];
#if ZL_SALSA20_X8
    if (zl_cpu_has_avx2)
        for (; blocks >= 8; blocks -= 8, in += 512, out += 512)
            zl_salsa20_xor_8_blocks(b->input, out, in);
#endif
#if ZL_SALSA20_X4
    for (; blocks >= 4; blocks -= 4, in += 256, out += 256)
        zl_salsa20_xor_4_blocks(b->input, out, in);
#endif
    for (; blocks > 0; blocks--, in += 64, out += 64) {
        salsa20_next_block(b->input, block);
        for (int i = 0; i < 16; i++)
            store_le32(out + 4 * i, load_le32(in + 4 * i) ^ block[i]);
    }
    mbedtls_platform_zeroize(block, sizeof block);
}

static void refill_keystream(zl_secretbox *b)
{
    uint32_t block[16];
    salsa20_next_block(b->input, block);
    for (int i = 0; i < 16; i++)
        store_le32(b->keystream + 4 * i, block[i]);
    mbedtls_platform_zeroize(block, sizeof block);
    b->keystream_used = 0;
}

/* XSalsa20 from where the last call stopped: the kept block's rest first,
 * then whole blocks, then a new kept block for the tail. */
static void xor_keystream(zl_secretbox *b, uint8_t *out, const uint8_t *in,
                          size_t len)
{
    if (len == 0)
        return; /* in and out may be NULL then */
    while (len > 0 && b->keystream_used < 64) {
        *out++ = *in++ ^ b->keystream[b->keystream_used++];
        len--;
    }
    xor_whole_blocks(b, out, in, len / 64);
    out += len / 64 * 64;
    in += len / 64 * 64;
    len %= 64;
    if (len == 0)
        return;
    refill_keystream(b);
    for (size_t i = 0; i < len; i++)
        out[i] = in[i] ^ b->keystream[i];
    b->keystream_used = len;
}

void zl_secretbox_init(zl_secretbox *b, const uint8_t key[32],
                       const uint8_t nonce[24])
{
    uint8_t subkey[32];
    uint8_t middle[16] = {0};
    hsalsa20(subkey, key, nonce);
    memcpy(middle, nonce + 16, 8); /* the block counter starts at zero */
    salsa20_input(b->input, subkey, middle);
    mbedtls_platform_zeroize(subkey, sizeof subkey);

    /* Block 0's first 32 bytes are Poly1305's one-time key; its other 32
     * encrypt the message's start. */
    refill_keystream(b);
    mac_start(b, b->keystream);
    mbedtls_platform_zeroize(b->keystream, 32);
    b->keystream_used = 32;
}

void zl_secretbox_seal_update(zl_secretbox *b, uint8_t *out, const uint8_t *in,
                              size_t len)
{
    xor_keystream(b, out, in, len);
    mac_update(b, out, len);
}

void zl_secretbox_seal_final(zl_secretbox *b, uint8_t mac[16])
{
    mac_finish(b, mac);
    mbedtls_platform_zeroize(b, sizeof *b);
}

void zl_secretbox_open_update(zl_secretbox *b, uint8_t *out, const uint8_t *in,
                              size_t len)
{
    mac_update(b, in, len);
    xor_keystream(b, out, in, len);
}

bool zl_secretbox_open_final(zl_secretbox *b, const uint8_t mac[16])
{
    uint8_t expected[16];
    mac_finish(b, expected);
    mbedtls_platform_zeroize(b, sizeof *b);
    /* No early exit: the time taken must not say where a forgery first
     * differs. */
    volatile uint8_t difference = 0;
    for (int i = 0; i < 16; i++)
        difference |= expected[i] ^ mac[i];
    mbedtls_platform_zeroize(expected, sizeof expected);
    return difference == 0;
}

void zl_secretbox_seal(uint8_t *out, const uint8_t *in, size_t len,
                       const uint8_t nonce[24], const uint8_t key[32])
{
    zl_secretbox b;
    zl_secretbox_init(&b, key, nonce);
    zl_secretbox_seal_update(&b, out + ZL_CURVE_MAC_SIZE, in, len);
    zl_secretbox_seal_final(&b, out);
}

bool zl_secretbox_open(uint8_t *out, const uint8_t *in, size_t in_len,
                       const uint8_t nonce[24], const uint8_t key[32])
{
    if (in_len < ZL_CURVE_MAC_SIZE)
        return false;
    /* A copy, so that decrypting over in (out == in) leaves the tag. */
    uint8_t mac[ZL_CURVE_MAC_SIZE];
    memcpy(mac, in, sizeof mac);
    zl_secretbox b;
    zl_secretbox_init(&b, key, nonce);
    zl_secretbox_open_update(&b, out, in + ZL_CURVE_MAC_SIZE,
                             in_len - ZL_CURVE_MAC_SIZE);
    bool genuine = zl_secretbox_open_final(&b, mac);
    if (!genuine)
        mbedtls_platform_zeroize(out, in_len - ZL_CURVE_MAC_SIZE);
    return genuine;
}

int zl_curve_random(void *buf, size_t len)
{
    /* uv_random refuses more than 64 KiB a call. */
    uint8_t *at = buf;
    while (len > 0) {
        size_t chunk = len < 65536 ? len : 65536;
        if (uv_random(NULL, NULL, at, chunk, 0, NULL) != 0)
            return -1;
        at += chunk;
        len -= chunk;
    }
    return 0;
}

#if ZL_X25519_NATIVE
/* X25519(scalar, u), both 32 bytes little-endian (x25519.c). A low-order
 * u gives all zeros, which zl_curve_beforenm refuses. */
static int x25519(uint8_t out[32], const uint8_t scalar[32],
                  const uint8_t u[32])
{
    zl_x25519(out, scalar, u);
    return 0;
}
#else
/* mbedTLS blinds the ladder's coordinates with these bytes (mbedTLS 3
 * refuses a NULL generator). */
static int blinding_random(void *unused, unsigned char *buf, size_t len)
{
    (void)unused;
    return zl_curve_random(buf, len) == 0 ? 0 : MBEDTLS_ERR_ECP_RANDOM_FAILED;
}

/* RFC 7748's clamping: a multiple of the cofactor 8, with bit 254 the
 * highest set. */
static int clamp_scalar(mbedtls_mpi *scalar)
{
    int rc = 0;
    rc |= mbedtls_mpi_set_bit(scalar, 0, 0);
    rc |= mbedtls_mpi_set_bit(scalar, 1, 0);
    rc |= mbedtls_mpi_set_bit(scalar, 2, 0);
    rc |= mbedtls_mpi_set_bit(scalar, 255, 0);
    rc |= mbedtls_mpi_set_bit(scalar, 254, 1);
    return rc;
}

/* X25519(scalar, u), both 32 bytes little-endian. mbedTLS refuses the
 * low-order u-coordinates itself; the result is -1 for them. */
static int x25519(uint8_t out[32], const uint8_t scalar[32],
                  const uint8_t u[32])
{
    /* RFC 7748 ignores the top bit of a received u-coordinate. */
    uint8_t u_masked[32];
    memcpy(u_masked, u, sizeof u_masked);
    u_masked[31] &= 0x7f;

    mbedtls_ecp_group group;
    mbedtls_ecp_point point;
    mbedtls_mpi secret, shared;
    mbedtls_ecp_group_init(&group);
    mbedtls_ecp_point_init(&point);
    mbedtls_mpi_init(&secret);
    mbedtls_mpi_init(&shared);
    int rc = -1;
    if (mbedtls_ecp_group_load(&group, MBEDTLS_ECP_DP_CURVE25519) == 0 &&
        mbedtls_ecp_point_read_binary(&group, &point, u_masked,
                                      sizeof u_masked) == 0 &&
        mbedtls_mpi_read_binary_le(&secret, scalar, 32) == 0 &&
        clamp_scalar(&secret) == 0 &&
        mbedtls_ecdh_compute_shared(&group, &shared, &point, &secret,
                                    blinding_random, NULL) == 0 &&
        mbedtls_mpi_write_binary_le(&shared, out, 32) == 0)
        rc = 0;
    /* mbedtls_mpi_free zeroes the limbs it frees. */
    mbedtls_mpi_free(&shared);
    mbedtls_mpi_free(&secret);
    mbedtls_ecp_point_free(&point);
    mbedtls_ecp_group_free(&group);
    return rc;
}
#endif

int zl_curve_public(uint8_t public_key[32], const uint8_t secret_key[32])
{
    static const uint8_t base_point[32] = {9};
    return x25519(public_key, secret_key, base_point);
}

int zl_curve_keypair(uint8_t public_key[32], uint8_t secret_key[32])
{
    if (zl_curve_random(secret_key, 32) == 0 &&
        zl_curve_public(public_key, secret_key) == 0)
        return 0;
    mbedtls_platform_zeroize(secret_key, 32);
    return -1;
}

int zl_curve_beforenm(uint8_t key[32], const uint8_t peer_public[32],
                      const uint8_t secret_key[32])
{
    static const uint8_t zeros[16] = {0};
    uint8_t shared[32] = {0};
    int rc = x25519(shared, secret_key, peer_public);
    /* libsodium's refusal of a low-order key: its shared point is zero
     * (mbedTLS's ladder refuses it before). */
    uint8_t any_bit = 0;
    for (int i = 0; i < 32; i++)
        any_bit |= shared[i];
    if (rc == 0 && any_bit != 0)
        hsalsa20(key, shared, zeros);
    else
        rc = -1;
    mbedtls_platform_zeroize(shared, sizeof shared);
    return rc;
}
