/* test_tls_aes_gcm.c — the record layer's AES-GCM, every level (mbedTLS,
 * AES-NI, VAES) through one interface: the GCM spec's test cases, every
 * length against mbedTLS's GCM in place and at odd addresses, and a
 * flipped bit anywhere failing open. A level the CPU lacks is skipped,
 * saying so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "transport/tls_aes_gcm.h"

/* Loop index of the cases run on every level: the level itself. */
enum { LEVELS = ZL_AES_GCM_VAES + 1 };

static const char *const level_names[LEVELS] = {"mbedTLS", "AES-NI", "VAES"};

/* Sets up g on the level, or says why it cannot run here. */
static bool level_init(zl_aes_gcm *g, int level, const uint8_t *key,
                       size_t key_len)
{
    if (level > zl_aes_gcm_cpu_level()) {
        static bool said[LEVELS];
        if (!said[level])
            fprintf(stderr,
                    "test_tls_aes_gcm: this CPU (or build) does not run "
                    "the %s code: its cases skipped\n",
                    level_names[level]);
        said[level] = true;
        ck_assert_int_eq(zl_aes_gcm_init_level(g, key, key_len, level), -1);
        return false;
    }
    ck_assert_int_eq(zl_aes_gcm_init_level(g, key, key_len, level), 0);
    ck_assert_int_eq(g->level, level);
    return true;
}

/* splitmix64: reproducible inputs, the same on every run. */
static uint64_t rng_state = 0x5eed5eed5eedULL;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rng_fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rng_next() >> 56);
}

static size_t unhex(uint8_t *out, const char *hex)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned byte;
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &byte), 1);
        out[i] = (uint8_t)byte;
    }
    return n;
}

/* mbedTLS's GCM called directly: the reference every level must match. */
static void reference_seal(const uint8_t *key, size_t key_len,
                           const uint8_t nonce[12], const uint8_t *aad,
                           size_t aad_len, const uint8_t *in, size_t len,
                           uint8_t *out, uint8_t tag[16])
{
    mbedtls_gcm_context ctx;
    mbedtls_gcm_init(&ctx);
    ck_assert_int_eq(mbedtls_gcm_setkey(&ctx, MBEDTLS_CIPHER_ID_AES, key,
                                        (unsigned)key_len * 8),
                     0);
    ck_assert_int_eq(mbedtls_gcm_crypt_and_tag(&ctx, MBEDTLS_GCM_ENCRYPT, len,
                                               nonce, 12, aad, aad_len, in, out,
                                               16, tag),
                     0);
    mbedtls_gcm_free(&ctx);
}

/* ---- the spec's test cases ---- */

/* McGrew and Viega, "The Galois/Counter Mode of Operation (GCM)",
 * Appendix B: Test Cases 1-4 (AES-128) and 13-16 (AES-256), the ones
 * with 96-bit IVs. */
typedef struct spec_case {
    int number;
    const char *key, *plaintext, *aad, *iv, *ciphertext, *tag;
} spec_case;

#define SPEC_P64                                                               \
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"         \
    "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
#define SPEC_P60                                                               \
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"         \
    "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
#define SPEC_AAD "feedfacedeadbeeffeedfacedeadbeefabaddad2"
#define SPEC_IV "cafebabefacedbaddecaf888"
#define SPEC_K128 "feffe9928665731c6d6a8f9467308308"
#define SPEC_K256 SPEC_K128 SPEC_K128
#define ZERO_K128 "00000000000000000000000000000000"
#define ZERO_IV "000000000000000000000000"

static const spec_case spec[] = {
    {1, ZERO_K128, "", "", ZERO_IV, "", "58e2fccefa7e3061367f1d57a4e7455a"},
    {2, ZERO_K128, "00000000000000000000000000000000", "", ZERO_IV,
     "0388dace60b6a392f328c2b971b2fe78", "ab6e47d42cec13bdf53a67b21257bddf"},
    {3, SPEC_K128, SPEC_P64, "", SPEC_IV,
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
     "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
     "4d5c2af327cd64a62cf35abd2ba6fab4"},
    {4, SPEC_K128, SPEC_P60, SPEC_AAD, SPEC_IV,
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
     "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
     "5bc94fbc3221a5db94fae95ae7121a47"},
    {13, ZERO_K128 ZERO_K128, "", "", ZERO_IV, "",
     "530f8afbc74536b9a963b4f1c4cb738b"},
    {14, ZERO_K128 ZERO_K128, "00000000000000000000000000000000", "", ZERO_IV,
     "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"},
    {15, SPEC_K256, SPEC_P64, "", SPEC_IV,
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
     "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
     "b094dac5d93471bdec1a502270e3cc6c"},
    {16, SPEC_K256, SPEC_P60, SPEC_AAD, SPEC_IV,
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
     "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
     "76fc6ece0f4e1768cddf8853bb2d551b"},
};

#define SPEC_COUNT (sizeof spec / sizeof spec[0])

/* Each case against mbedTLS first, so a typo in a vector shows as that. */
START_TEST(spec_vectors_on_mbedtls)
{
    const spec_case *c = &spec[_i];
    uint8_t key[32], p[64], a[20], iv[12], expect_c[64], expect_t[16];
    uint8_t got_c[64], got_t[16];
    size_t key_len = unhex(key, c->key), len = unhex(p, c->plaintext);
    size_t aad_len = unhex(a, c->aad);
    ck_assert_uint_eq(unhex(iv, c->iv), 12);
    ck_assert_uint_eq(unhex(expect_c, c->ciphertext), len);
    ck_assert_uint_eq(unhex(expect_t, c->tag), 16);
    reference_seal(key, key_len, iv, a, aad_len, p, len, got_c, got_t);
    ck_assert_msg(memcmp(got_c, expect_c, len) == 0, "case %d", c->number);
    ck_assert_msg(memcmp(got_t, expect_t, 16) == 0, "case %d", c->number);
}
END_TEST

START_TEST(spec_vectors)
{
    for (size_t n = 0; n < SPEC_COUNT; n++) {
        const spec_case *c = &spec[n];
        uint8_t key[32], p[64], a[20], iv[12], expect_c[64], expect_t[16];
        uint8_t got_c[64], got_t[16], back[64];
        size_t key_len = unhex(key, c->key), len = unhex(p, c->plaintext);
        size_t aad_len = unhex(a, c->aad);
        unhex(iv, c->iv);
        unhex(expect_c, c->ciphertext);
        unhex(expect_t, c->tag);
        zl_aes_gcm g;
        if (!level_init(&g, _i, key, key_len))
            return;
        zl_aes_gcm_seal(&g, iv, a, aad_len, p, len, got_c, got_t);
        ck_assert_msg(memcmp(got_c, expect_c, len) == 0, "case %d", c->number);
        ck_assert_msg(memcmp(got_t, expect_t, 16) == 0, "case %d", c->number);
        ck_assert_int_eq(
            zl_aes_gcm_open(&g, iv, a, aad_len, got_c, len, back, got_t), 0);
        ck_assert_msg(memcmp(back, p, len) == 0, "case %d", c->number);
        zl_aes_gcm_free(&g);
    }
}
END_TEST

/* ---- against mbedTLS, every length ---- */

static const size_t aad_lengths[] = {0, 1, 13, 15, 16, 17, 33, 100};
static const size_t long_lengths[] = {4095,  4096,  16383, 16384,
                                      16385, 16639, 65535, 65536};

#define MAX_LEN 65536
#define AAD_MAX 100

typedef struct buffers {
    uint8_t plain[MAX_LEN], expect[MAX_LEN];
    /* Room for an offset of up to 15 bytes in front. */
    uint8_t in[MAX_LEN + 16], out[MAX_LEN + 16];
} buffers;

/* One length: the level's seal equals mbedTLS's, out of place (in and
 * out at odd offsets) and in place; its open of mbedTLS's output gives
 * the plaintext back, both ways too. */
static void cross_check(const zl_aes_gcm *g, const uint8_t *key, size_t key_len,
                        buffers *b, size_t aad_len, size_t len)
{
    uint8_t nonce[12], aad[AAD_MAX], expect_tag[16], tag[16];
    rng_fill(nonce, sizeof nonce);
    rng_fill(aad, aad_len);
    rng_fill(b->plain, len);
    reference_seal(key, key_len, nonce, aad, aad_len, b->plain, len, b->expect,
                   expect_tag);
    size_t in_off = (len + aad_len) % 16, out_off = (len * 7 + 3) % 16;
    uint8_t *in = b->in + in_off, *out = b->out + out_off;

    memcpy(in, b->plain, len);
    zl_aes_gcm_seal(g, nonce, aad, aad_len, in, len, out, tag);
    ck_assert_msg(memcmp(out, b->expect, len) == 0, "seal %zu/%zu", len,
                  aad_len);
    ck_assert_msg(memcmp(tag, expect_tag, 16) == 0, "tag %zu/%zu", len,
                  aad_len);
    ck_assert_msg(memcmp(in, b->plain, len) == 0, "input kept %zu", len);

    zl_aes_gcm_seal(g, nonce, aad, aad_len, in, len, in, tag);
    ck_assert_msg(memcmp(in, b->expect, len) == 0, "in place %zu/%zu", len,
                  aad_len);
    ck_assert_msg(memcmp(tag, expect_tag, 16) == 0, "in-place tag %zu/%zu", len,
                  aad_len);

    memcpy(in, b->expect, len);
    memset(out, 0xa5, len);
    ck_assert_int_eq(
        zl_aes_gcm_open(g, nonce, aad, aad_len, in, len, out, expect_tag), 0);
    ck_assert_msg(memcmp(out, b->plain, len) == 0, "open %zu/%zu", len,
                  aad_len);
    ck_assert_int_eq(
        zl_aes_gcm_open(g, nonce, aad, aad_len, in, len, in, expect_tag), 0);
    ck_assert_msg(memcmp(in, b->plain, len) == 0, "open in place %zu/%zu", len,
                  aad_len);
}

/* Loop index: level * 2 + (0: AES-128, 1: AES-256). */
START_TEST(matches_mbedtls_at_every_length)
{
    int level = _i / 2;
    size_t key_len = _i % 2 ? 32 : 16;
    buffers *b = malloc(sizeof *b);
    ck_assert_ptr_nonnull(b);
    for (size_t a = 0; a < sizeof aad_lengths / sizeof aad_lengths[0]; a++) {
        uint8_t key[32];
        rng_fill(key, key_len);
        zl_aes_gcm g;
        if (!level_init(&g, level, key, key_len))
            break;
        for (size_t len = 0; len <= 1100; len++)
            cross_check(&g, key, key_len, b, aad_lengths[a], len);
        for (size_t n = 0; n < sizeof long_lengths / sizeof long_lengths[0];
             n++)
            cross_check(&g, key, key_len, b, aad_lengths[a], long_lengths[n]);
        zl_aes_gcm_free(&g);
    }
    free(b);
}
END_TEST

/* ---- tampering ---- */

/* Every single-bit flip in the ciphertext, the tag, the aad or the nonce
 * fails open; the untouched record still opens. Loop index: the level. */
START_TEST(any_flipped_bit_fails_open)
{
    /* Two 256-byte VAES groups, an eight-block AES-NI group and a tail. */
    enum { LEN = 700, AAD_LEN = 13 };
    uint8_t key[16], nonce[12], aad[AAD_LEN], plain[LEN], sealed[LEN];
    uint8_t tag[16], out[LEN];
    rng_fill(key, sizeof key);
    rng_fill(nonce, sizeof nonce);
    rng_fill(aad, sizeof aad);
    rng_fill(plain, sizeof plain);
    zl_aes_gcm g;
    if (!level_init(&g, _i, key, sizeof key))
        return;
    zl_aes_gcm_seal(&g, nonce, aad, AAD_LEN, plain, LEN, sealed, tag);
    ck_assert_int_eq(
        zl_aes_gcm_open(&g, nonce, aad, AAD_LEN, sealed, LEN, out, tag), 0);

    uint8_t *fields[] = {sealed, tag, aad, nonce};
    size_t sizes[] = {LEN, 16, AAD_LEN, 12};
    const char *names[] = {"ciphertext", "tag", "aad", "nonce"};
    for (size_t f = 0; f < 4; f++) {
        for (size_t bit = 0; bit < sizes[f] * 8; bit++) {
            fields[f][bit / 8] ^= (uint8_t)(1u << (bit % 8));
            ck_assert_msg(zl_aes_gcm_open(&g, nonce, aad, AAD_LEN, sealed, LEN,
                                          out, tag) == -1,
                          "%s bit %zu", names[f], bit);
            fields[f][bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
    }
    /* An empty record is all tag: its flips fail too. */
    zl_aes_gcm_seal(&g, nonce, aad, AAD_LEN, NULL, 0, NULL, tag);
    ck_assert_int_eq(
        zl_aes_gcm_open(&g, nonce, aad, AAD_LEN, NULL, 0, NULL, tag), 0);
    for (size_t bit = 0; bit < 128; bit++) {
        tag[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        ck_assert_int_eq(
            zl_aes_gcm_open(&g, nonce, aad, AAD_LEN, NULL, 0, NULL, tag), -1);
        tag[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    zl_aes_gcm_free(&g);
}
END_TEST

/* ---- keys ---- */

START_TEST(bad_key_lengths_refused)
{
    uint8_t key[33] = {0};
    size_t bad[] = {0, 15, 17, 24, 31, 33};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        zl_aes_gcm g;
        ck_assert_int_eq(zl_aes_gcm_init(&g, key, bad[i]), -1);
        zl_aes_gcm_free(&g);
        for (int level = 0; level < LEVELS; level++) {
            ck_assert_int_eq(zl_aes_gcm_init_level(&g, key, bad[i], level), -1);
            zl_aes_gcm_free(&g);
        }
    }
}
END_TEST

/* init takes the CPU's highest level; free leaves no key material behind. */
START_TEST(init_picks_level_and_free_zeroes)
{
    uint8_t key[32];
    rng_fill(key, sizeof key);
    zl_aes_gcm g;
    ck_assert_int_eq(zl_aes_gcm_init(&g, key, sizeof key), 0);
    ck_assert_int_eq(g.level, zl_aes_gcm_cpu_level());
    ck_assert(zl_aes_gcm_accelerated() ==
              (zl_aes_gcm_cpu_level() >= ZL_AES_GCM_AESNI));
    zl_aes_gcm_free(&g);
    static const zl_aes_gcm zero;
    ck_assert(memcmp(&g, &zero, sizeof g) == 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tls_aes_gcm");
    TCase *tc = tcase_create("aes_gcm");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, spec_vectors_on_mbedtls, 0, (int)SPEC_COUNT);
    tcase_add_loop_test(tc, spec_vectors, 0, LEVELS);
    tcase_add_loop_test(tc, matches_mbedtls_at_every_length, 0, 2 * LEVELS);
    tcase_add_loop_test(tc, any_flipped_bit_fails_open, 0, LEVELS);
    tcase_add_test(tc, bad_key_lengths_refused);
    tcase_add_test(tc, init_picks_level_and_free_zeroes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
