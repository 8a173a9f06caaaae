/* curve_keys.c — zlink_curve_keypair and zlink_curve_public: CURVE keys in
 * Z85, as libzmq's zmq_curve_keypair and zmq_curve_public make them. */
#include <errno.h>
#include <string.h>

#include "zlink.h"

#ifdef ZLINK_HAVE_CURVE

#include <mbedtls/platform_util.h>

#include "curve_crypto.h"

/* A key's Z85 text: 40 characters (and a NUL). */
enum { Z85_KEY_LENGTH = ZL_CURVE_KEY_SIZE * 5 / 4 };

int zlink_curve_keypair(char *z85_public_key, char *z85_secret_key)
{
    if (!z85_public_key || !z85_secret_key) {
        errno = EINVAL;
        return -1;
    }
    uint8_t public_key[ZL_CURVE_KEY_SIZE];
    uint8_t secret_key[ZL_CURVE_KEY_SIZE];
    if (zl_curve_keypair(public_key, secret_key) != 0) {
        errno = EIO; /* the OS had no random bytes to give */
        return -1;
    }
    zlink_z85_encode(z85_public_key, public_key, sizeof public_key);
    zlink_z85_encode(z85_secret_key, secret_key, sizeof secret_key);
    mbedtls_platform_zeroize(secret_key, sizeof secret_key);
    return 0;
}

int zlink_curve_public(char *z85_public_key, const char *z85_secret_key)
{
    /* zlink_z85_decode would take any multiple of 5 characters: only 40
     * make a key. */
    if (!z85_public_key || !z85_secret_key ||
        strlen(z85_secret_key) != Z85_KEY_LENGTH) {
        errno = EINVAL;
        return -1;
    }
    uint8_t secret_key[ZL_CURVE_KEY_SIZE];
    uint8_t public_key[ZL_CURVE_KEY_SIZE];
    if (!zlink_z85_decode(secret_key, z85_secret_key)) {
        /* The decoder may have written a part before the bad character. */
        mbedtls_platform_zeroize(secret_key, sizeof secret_key);
        return -1; /* errno is the decoder's EINVAL */
    }
    int rc = zl_curve_public(public_key, secret_key);
    mbedtls_platform_zeroize(secret_key, sizeof secret_key);
    if (rc != 0) {
        errno = EIO; /* the OS gave no random bytes to blind the ladder */
        return -1;
    }
    zlink_z85_encode(z85_public_key, public_key, sizeof public_key);
    return 0;
}

#else

int zlink_curve_keypair(char *z85_public_key, char *z85_secret_key)
{
    (void)z85_public_key;
    (void)z85_secret_key;
    errno = ENOTSUP;
    return -1;
}

int zlink_curve_public(char *z85_public_key, const char *z85_secret_key)
{
    (void)z85_public_key;
    (void)z85_secret_key;
    errno = ENOTSUP;
    return -1;
}

#endif
