/* test_curve_crypto.c — CURVE's crypto_box (curve_crypto.h) and the Z85 key
 * calls: RFC 7748's X25519 vectors, NaCl's shared key, secretbox answers
 * that libsodium gave, sealing and opening in pieces, forgeries refused,
 * and libzmq's published test keys. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "curve_crypto.h"
#include "poly1305_x4.h"
#include "salsa20_x4.h"
#include "salsa20_x8.h"
#include "testutil.h"
#include "zlink.h"

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

static void assert_hex_eq(const uint8_t *got, const char *hex, const char *what)
{
    uint8_t want[64];
    size_t n = unhex(want, hex);
    ck_assert_msg(memcmp(got, want, n) == 0, "%s differs", what);
}

/* ---- X25519 ---- */

/* RFC 7748 section 6.1 (first in Bernstein's "Cryptography in NaCl"). */
static const char alice_secret[] =
    "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
static const char alice_public[] =
    "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
static const char bob_secret[] =
    "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
static const char bob_public[] =
    "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
/* HSalsa20 of their X25519 secret 4a5d9d5b...1e161742: "firstkey" in
 * "Cryptography in NaCl", and libsodium's crypto_box_beforenm. */
static const char alice_bob_key[] =
    "1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389";

START_TEST(rfc7748_public_keys)
{
    uint8_t secret[32], public_key[32];
    unhex(secret, alice_secret);
    ck_assert_int_eq(zl_curve_public(public_key, secret), 0);
    assert_hex_eq(public_key, alice_public, "Alice's public key");
    unhex(secret, bob_secret);
    ck_assert_int_eq(zl_curve_public(public_key, secret), 0);
    assert_hex_eq(public_key, bob_public, "Bob's public key");
}
END_TEST

START_TEST(rfc7748_shared_key_both_ways)
{
    uint8_t secret[32], peer[32], key[32];
    unhex(secret, alice_secret);
    unhex(peer, bob_public);
    ck_assert_int_eq(zl_curve_beforenm(key, peer, secret), 0);
    assert_hex_eq(key, alice_bob_key, "Alice's key");
    unhex(secret, bob_secret);
    unhex(peer, alice_public);
    ck_assert_int_eq(zl_curve_beforenm(key, peer, secret), 0);
    assert_hex_eq(key, alice_bob_key, "Bob's key");
}
END_TEST

/* RFC 7748 section 5.2's single X25519 calls, seen through beforenm: the
 * expected keys are HSalsa20 of the RFC's outputs (c3da5537...,
 * 95cbde94...), from libsodium. The second u-coordinate has its top bit
 * set, which X25519 must ignore. */
static const struct {
    const char *scalar, *u, *key;
} rfc7748_calls[] = {
    {"a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
     "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
     "3cdf376f76de15183719d96e9e7992e510bf1cfca757c8ef8637f8461d4b3c51"},
    {"4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
     "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
     "38590dc929e70d778147555b171cc1082d3d65cf0bde6fb1941e8ce95a1b5a76"},
    {"4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
     "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a413",
     "38590dc929e70d778147555b171cc1082d3d65cf0bde6fb1941e8ce95a1b5a76"},
};

START_TEST(rfc7748_function_vectors)
{
    uint8_t scalar[32], u[32], key[32];
    unhex(scalar, rfc7748_calls[_i].scalar);
    unhex(u, rfc7748_calls[_i].u);
    ck_assert_int_eq(zl_curve_beforenm(key, u, scalar), 0);
    assert_hex_eq(key, rfc7748_calls[_i].key, "key");
}
END_TEST

/* Points of small order make an all-zero secret whatever the scalar: zero,
 * one, an order-8 point, and p - 1 and p + 1 (p = 2^255 - 19). */
static const char *const low_order_points[] = {
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0100000000000000000000000000000000000000000000000000000000000000",
    "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
};

START_TEST(low_order_public_keys_refused)
{
    uint8_t secret[32], peer[32], key[32];
    unhex(secret, alice_secret);
    unhex(peer, low_order_points[_i]);
    ck_assert_int_eq(zl_curve_beforenm(key, peer, secret), -1);
}
END_TEST

START_TEST(fresh_key_pairs_agree)
{
    uint8_t a_public[32], a_secret[32], b_public[32], b_secret[32];
    uint8_t a_key[32], b_key[32], derived[32];
    ck_assert_int_eq(zl_curve_keypair(a_public, a_secret), 0);
    ck_assert_int_eq(zl_curve_keypair(b_public, b_secret), 0);
    ck_assert_mem_ne(a_secret, b_secret, 32);
    ck_assert_int_eq(zl_curve_public(derived, a_secret), 0);
    ck_assert_mem_eq(derived, a_public, 32);
    ck_assert_int_eq(zl_curve_beforenm(a_key, b_public, a_secret), 0);
    ck_assert_int_eq(zl_curve_beforenm(b_key, a_public, b_secret), 0);
    ck_assert_mem_eq(a_key, b_key, 32);
}
END_TEST

/* ---- secretbox ---- */

/* libsodium 1.0.18's crypto_secretbox_easy of message byte i = i * 7 + 3
 * under the key and nonce below: the tag, the whole ciphertext up to 65
 * bytes, its first and last 16 bytes beyond (the tag covers the rest). */
static const struct {
    size_t len;
    const char *mac, *head, *tail;
} sodium_boxes[] = {
    {0, "921a25204035b5e459852fabee60684b", "", ""},
    {1, "92e2c63c8b8b4918d4a9ae2d89e6b6a5", "b8", ""},
    {31, "e2f2767da2478907d8508489777af33c",
     "b838e92e690347d500cf2bd779b51f4766de678a2924ce95b9ece476b34c39", ""},
    {32, "5f41737003a3705d73b1b9138dd9493e",
     "b838e92e690347d500cf2bd779b51f4766de678a2924ce95b9ece476b34c395d", ""},
    {33, "18c134711134b444e3989342c9c6a7d6",
     "b838e92e690347d500cf2bd779b51f4766de678a2924ce95b9ece476b34c395d6d", ""},
    {63, "5cc6e621ecb839b289b50d533b246542",
     "b838e92e690347d500cf2bd779b51f4766de678a2924ce95b9ece476b34c395d"
     "6ded2ef57a78e2936b8621899b6efbd2c398d1ac8ffa1a412bd1ae157c8777",
     ""},
    {64, "f3c8430af0071893f906529146c82444",
     "b838e92e690347d500cf2bd779b51f4766de678a2924ce95b9ece476b34c395d"
     "6ded2ef57a78e2936b8621899b6efbd2c398d1ac8ffa1a412bd1ae157c8777c8",
     ""},
    {65, "1c87865938abf7b6edc0e193d372c906",
     "b838e92e690347d500cf2bd779b51f4766de678a2924ce95b9ece476b34c395d"
     "6ded2ef57a78e2936b8621899b6efbd2c398d1ac8ffa1a412bd1ae157c8777c8",
     "8a"},
    {200, "0b346481ba4212f0fbc677b48f7e3541",
     "b838e92e690347d500cf2bd779b51f47", "d2bd6d765ceea480f7e7685cb14f0cf5"},
    {1000, "c4a59e5fe824fb8bfc892b3beba1c6b3",
     "b838e92e690347d500cf2bd779b51f47", "f93debbcee7ec5ff7613f47c606aca60"},
};

enum { SODIUM_BOX_COUNT = sizeof sodium_boxes / sizeof sodium_boxes[0] };
enum { MESSAGE_MAX = 1000 };

static void box_key(uint8_t key[32])
{
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)(0x80 + i);
}

static void box_nonce(uint8_t nonce[24])
{
    for (int i = 0; i < 24; i++)
        nonce[i] = (uint8_t)(0x40 + i * 5);
}

static void box_message(uint8_t *message, size_t len)
{
    for (size_t i = 0; i < len; i++)
        message[i] = (uint8_t)(i * 7 + 3);
}

START_TEST(secretbox_matches_libsodium)
{
    size_t len = sodium_boxes[_i].len;
    uint8_t key[32], nonce[24], message[MESSAGE_MAX], back[MESSAGE_MAX];
    uint8_t box[16 + MESSAGE_MAX];
    box_key(key);
    box_nonce(nonce);
    box_message(message, len);
    zl_secretbox_seal(box, message, len, nonce, key);
    assert_hex_eq(box, sodium_boxes[_i].mac, "tag");
    assert_hex_eq(box + 16, sodium_boxes[_i].head, "ciphertext's head");
    const char *tail = sodium_boxes[_i].tail;
    assert_hex_eq(box + 16 + len - strlen(tail) / 2, tail, "ciphertext's tail");
    memset(back, 0xa5, sizeof back);
    ck_assert(zl_secretbox_open(back, box, 16 + len, nonce, key));
    ck_assert_mem_eq(back, message, len);
}
END_TEST

/* Uneven pieces cross block boundaries in every way: inside block 0 (whose
 * first half is the Poly1305 key), a whole block from an odd position, and
 * the rest as whole blocks and a tail. */
static const size_t pieces[] = {1, 7, 64, 100};

static void seal_in_pieces(uint8_t *box, const uint8_t *message, size_t len,
                           const uint8_t nonce[24], const uint8_t key[32])
{
    zl_secretbox b;
    zl_secretbox_init(&b, key, nonce);
    size_t at = 0;
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        zl_secretbox_seal_update(&b, box + 16 + at, message + at, pieces[i]);
        at += pieces[i];
    }
    zl_secretbox_seal_update(&b, box + 16 + at, message + at, len - at);
    zl_secretbox_seal_final(&b, box);
}

static bool open_in_pieces(uint8_t *out, const uint8_t *box, size_t len,
                           const uint8_t nonce[24], const uint8_t key[32])
{
    zl_secretbox b;
    zl_secretbox_init(&b, key, nonce);
    size_t at = 0;
    for (size_t i = sizeof pieces / sizeof pieces[0]; i-- > 0;) {
        zl_secretbox_open_update(&b, out + at, box + 16 + at, pieces[i]);
        at += pieces[i];
    }
    zl_secretbox_open_update(&b, out + at, box + 16 + at, len - at);
    return zl_secretbox_open_final(&b, box);
}

START_TEST(pieces_equal_one_shot)
{
    uint8_t key[32], nonce[24], message[MESSAGE_MAX], back[MESSAGE_MAX];
    uint8_t whole[16 + MESSAGE_MAX], pieced[16 + MESSAGE_MAX];
    box_key(key);
    box_nonce(nonce);
    box_message(message, MESSAGE_MAX);
    zl_secretbox_seal(whole, message, MESSAGE_MAX, nonce, key);
    seal_in_pieces(pieced, message, MESSAGE_MAX, nonce, key);
    ck_assert_mem_eq(pieced, whole, sizeof whole);

    ck_assert(open_in_pieces(back, whole, MESSAGE_MAX, nonce, key));
    ck_assert_mem_eq(back, message, MESSAGE_MAX);

    /* In place, both ways. */
    memcpy(pieced + 16, message, MESSAGE_MAX);
    seal_in_pieces(pieced, pieced + 16, MESSAGE_MAX, nonce, key);
    ck_assert_mem_eq(pieced, whole, sizeof whole);
    ck_assert(open_in_pieces(pieced + 16, pieced, MESSAGE_MAX, nonce, key));
    ck_assert_mem_eq(pieced + 16, message, MESSAGE_MAX);
}
END_TEST

#if ZL_SALSA20_X8 && ZL_SALSA20_X4
/* The AVX2 eight-block core gives what two four-block ones give, in place
 * too, across the carry from the counter's low word into its high one. */
START_TEST(salsa20_eight_blocks_equal_four)
{
    if (!zl_cpu_has_avx2) {
        fprintf(stderr, "salsa20_eight_blocks_equal_four: no AVX2 here\n");
        return;
    }
    uint32_t eight[16], four[16];
    for (int i = 0; i < 16; i++)
        eight[i] = 0x9e3779b9u * (uint32_t)(i + 1);
    eight[8] = 0xfffffffdu; /* blocks 3 to 7 carry into word 9 */
    eight[9] = 41;
    memcpy(four, eight, sizeof four);
    uint8_t in[512], out8[512], out4[512];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (uint8_t)(i * 7 + 3);
    zl_salsa20_xor_8_blocks(eight, out8, in);
    zl_salsa20_xor_4_blocks(four, out4, in);
    zl_salsa20_xor_4_blocks(four, out4 + 256, in + 256);
    ck_assert_mem_eq(out8, out4, sizeof out8);
    ck_assert_mem_eq(eight, four, sizeof eight);
    ck_assert_uint_eq(eight[9], 42);
    /* In place, from the moved counter. */
    memcpy(out8, in, sizeof in);
    memcpy(out4, in, sizeof in);
    zl_salsa20_xor_8_blocks(eight, out8, out8);
    zl_salsa20_xor_4_blocks(four, out4, out4);
    zl_salsa20_xor_4_blocks(four, out4 + 256, out4 + 256);
    ck_assert_mem_eq(out8, out4, sizeof out8);
}
END_TEST
#endif

#if ZL_POLY1305_X4
static void poly_tag(uint8_t tag[16], const uint8_t key[32], const uint8_t *m,
                     size_t len, size_t piece)
{
    zl_poly1305 p;
    zl_poly1305_init(&p, key);
    for (size_t at = 0; at < len; at += piece)
        zl_poly1305_update(&p, m + at, len - at < piece ? len - at : piece);
    zl_poly1305_finish(&p, tag);
}

/* Poly1305's four AVX2 lanes give the tag one block at a time gives: every
 * byte and key limb at its largest (the carries' worst case), and varied
 * ones, in pieces that start the lanes at odd places. */
START_TEST(poly1305_four_lanes_equal_one)
{
    if (!zl_cpu_has_avx2) {
        fprintf(stderr, "poly1305_four_lanes_equal_one: no AVX2 here\n");
        return;
    }
    static uint8_t m[9000];
    static const size_t lengths[] = {256, 257, 320, 1000, 4144, 9000};
    static const size_t pieces[] = {9000, 300, 17};
    for (int pattern = 0; pattern < 2; pattern++) {
        uint8_t key[32];
        for (size_t i = 0; i < sizeof key; i++)
            key[i] = pattern ? (uint8_t)(i * 29 + 7) : 0xff;
        for (size_t i = 0; i < sizeof m; i++)
            m[i] = pattern ? (uint8_t)(i * 131 + (i >> 8)) : 0xff;
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
                uint8_t one[16], four[16];
                zl_cpu_has_avx2 = false;
                poly_tag(one, key, m, lengths[l], pieces[k]);
                zl_cpu_has_avx2 = true;
                poly_tag(four, key, m, lengths[l], pieces[k]);
                ck_assert_msg(memcmp(one, four, 16) == 0,
                              "pattern %d, %zu bytes in pieces of %zu", pattern,
                              lengths[l], pieces[k]);
            }
        }
    }
}
END_TEST
#endif

START_TEST(one_shot_open_in_place)
{
    uint8_t key[32], nonce[24], message[MESSAGE_MAX];
    uint8_t box[16 + MESSAGE_MAX];
    box_key(key);
    box_nonce(nonce);
    box_message(message, MESSAGE_MAX);
    zl_secretbox_seal(box, message, MESSAGE_MAX, nonce, key);
    ck_assert(zl_secretbox_open(box, box, sizeof box, nonce, key));
    ck_assert_mem_eq(box, message, MESSAGE_MAX);
}
END_TEST

START_TEST(any_flipped_bit_is_a_forgery)
{
    enum { LEN = 200 };
    uint8_t key[32], nonce[24], message[LEN], out[LEN], box[16 + LEN];
    box_key(key);
    box_nonce(nonce);
    box_message(message, LEN);
    zl_secretbox_seal(box, message, LEN, nonce, key);
    for (size_t bit = 0; bit < sizeof box * 8; bit++) {
        box[bit / 8] ^= (uint8_t)(1u << bit % 8);
        ck_assert_msg(!zl_secretbox_open(out, box, sizeof box, nonce, key),
                      "bit %zu flipped, still opens", bit);
        box[bit / 8] ^= (uint8_t)(1u << bit % 8);
    }
    ck_assert(zl_secretbox_open(out, box, sizeof box, nonce, key));
    ck_assert_mem_eq(out, message, LEN);
}
END_TEST

START_TEST(shorter_than_a_tag_is_refused)
{
    uint8_t key[32], nonce[24], box[16], out[16];
    box_key(key);
    box_nonce(nonce);
    zl_secretbox_seal(box, NULL, 0, nonce, key);
    ck_assert(zl_secretbox_open(out, box, 16, nonce, key));
    for (size_t len = 0; len < 16; len++)
        ck_assert(!zl_secretbox_open(out, box, len, nonce, key));
}
END_TEST

/* ---- Z85 keys ---- */

/* The key pairs of libzmq's tests and of its zmq_curve man page. */
static const struct {
    const char *public_key, *secret_key;
} libzmq_keys[] = {
    {"Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID",
     "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs"},
    {"rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7",
     "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"},
};

START_TEST(libzmq_public_keys)
{
    char public_key[41];
    ck_assert_int_eq(zlink_curve_public(public_key, libzmq_keys[_i].secret_key),
                     0);
    ck_assert_str_eq(public_key, libzmq_keys[_i].public_key);
}
END_TEST

START_TEST(z85_keypair)
{
    char public_key[41], secret_key[41], derived[41];
    uint8_t binary[32];
    ck_assert_int_eq(zlink_curve_keypair(public_key, secret_key), 0);
    ck_assert_uint_eq(strlen(public_key), 40);
    ck_assert_uint_eq(strlen(secret_key), 40);
    ck_assert_ptr_nonnull(zlink_z85_decode(binary, public_key));
    ck_assert_ptr_nonnull(zlink_z85_decode(binary, secret_key));
    ck_assert_int_eq(zlink_curve_public(derived, secret_key), 0);
    ck_assert_str_eq(derived, public_key);
}
END_TEST

START_TEST(z85_bad_secrets_refused)
{
    const char *const bad[] = {
        "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%c",   /* 39 characters */
        "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%csx", /* 41 */
        "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%c~",  /* '~' is not Z85 */
        "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%c\"", /* nor '"' */
        "",
    };
    char public_key[41];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        ck_assert_int_eq(zlink_curve_public(public_key, bad[i]), -1);
        ck_assert_int_eq(errno, EINVAL);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("curve_crypto");
    TCase *x25519 = tcase_create("x25519");
    tcase_add_test(x25519, rfc7748_public_keys);
    tcase_add_test(x25519, rfc7748_shared_key_both_ways);
    tcase_add_loop_test(x25519, rfc7748_function_vectors, 0,
                        sizeof rfc7748_calls / sizeof rfc7748_calls[0]);
    tcase_add_loop_test(x25519, low_order_public_keys_refused, 0,
                        sizeof low_order_points / sizeof low_order_points[0]);
    tcase_add_test(x25519, fresh_key_pairs_agree);
    suite_add_tcase(s, x25519);

    TCase *secretbox = tcase_create("secretbox");
    tcase_add_loop_test(secretbox, secretbox_matches_libsodium, 0,
                        SODIUM_BOX_COUNT);
    tcase_add_test(secretbox, pieces_equal_one_shot);
    tcase_add_test(secretbox, one_shot_open_in_place);
#if ZL_SALSA20_X8 && ZL_SALSA20_X4
    tcase_add_test(secretbox, salsa20_eight_blocks_equal_four);
#endif
#if ZL_POLY1305_X4
    tcase_add_test(secretbox, poly1305_four_lanes_equal_one);
#endif
    tcase_add_test(secretbox, any_flipped_bit_is_a_forgery);
    tcase_add_test(secretbox, shorter_than_a_tag_is_refused);
    suite_add_tcase(s, secretbox);

    TCase *z85 = tcase_create("z85_keys");
    tcase_add_loop_test(z85, libzmq_public_keys, 0,
                        sizeof libzmq_keys / sizeof libzmq_keys[0]);
    tcase_add_test(z85, z85_keypair);
    tcase_add_test(z85, z85_bad_secrets_refused);
    suite_add_tcase(s, z85);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
