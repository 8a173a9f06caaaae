/* z85.c — zlink_z85_encode and zlink_z85_decode: ZeroMQ's Z85 text encoding
 * of binary keys (rfc.zeromq.org spec 32), as libzmq offers it. */
#include <errno.h>
#include <string.h>

#include "zlink.h"

static const char encoder[85 + 1] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    ".-:+=^!/*?&<>()[]{}@%$#";

/* The character's value, or -1 for a character outside the alphabet. */
static int char_value(unsigned char c)
{
    const char *at = c ? strchr(encoder, c) : NULL;
    return at ? (int)(at - encoder) : -1;
}

char *zlink_z85_encode(char *dest, const uint8_t *data, size_t size)
{
    if (!dest || (!data && size) || size % 4 != 0) {
        errno = EINVAL;
        return NULL;
    }
    size_t out = 0;
    for (size_t in = 0; in < size; in += 4) {
        uint32_t value = (uint32_t)data[in] << 24 |
                         (uint32_t)data[in + 1] << 16 |
                         (uint32_t)data[in + 2] << 8 | data[in + 3];
        for (int i = 4; i >= 0; i--) {
            dest[out + (size_t)i] = encoder[value % 85];
            value /= 85;
        }
        out += 5;
    }
    dest[out] = '\0';
    return dest;
}

uint8_t *zlink_z85_decode(uint8_t *dest, const char *string)
{
    size_t len = string ? strlen(string) : 0;
    /* Empty text decodes to nothing, which libzmq refuses too. */
    if (!dest || !string || len == 0 || len % 5 != 0) {
        errno = EINVAL;
        return NULL;
    }
    size_t out = 0;
    for (size_t in = 0; in < len; in += 5) {
        uint64_t value = 0;
        for (int i = 0; i < 5; i++) {
            int digit = char_value((unsigned char)string[in + (size_t)i]);
            if (digit < 0) {
                errno = EINVAL;
                return NULL;
            }
            value = value * 85 + (uint64_t)digit;
        }
        /* Five characters can spell more than 32 bits: not Z85. */
        if (value > UINT32_MAX) {
            errno = EINVAL;
            return NULL;
        }
        dest[out++] = (uint8_t)(value >> 24);
        dest[out++] = (uint8_t)(value >> 16);
        dest[out++] = (uint8_t)(value >> 8);
        dest[out++] = (uint8_t)value;
    }
    return dest;
}
