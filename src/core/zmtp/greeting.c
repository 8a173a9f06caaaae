/* greeting.c — the 64-byte ZMTP 3.x greeting: encoding ours, checking and
 * parsing the peer's. */
#include <string.h>

#include "zmtp.h"

#define SIGNATURE_START 0xff
#define SIGNATURE_END 9 /* offset of the byte ending the signature */
#define VERSION_MAJOR_AT 10
#define VERSION_MINOR_AT 11
#define MECHANISM_AT 12
#define MECHANISM_SIZE 20
#define AS_SERVER_AT 32

void zl_greeting_encode(uint8_t out[ZL_GREETING_SIZE], const char *mechanism,
                        bool as_server)
{
    memset(out, 0, ZL_GREETING_SIZE);
    out[0] = SIGNATURE_START;
    out[SIGNATURE_END] = 0x7f;
    out[VERSION_MAJOR_AT] = 3;
    out[VERSION_MINOR_AT] = 1;
    size_t len = strlen(mechanism);
    if (len > MECHANISM_SIZE)
        len = MECHANISM_SIZE;
    memcpy(out + MECHANISM_AT, mechanism, len);
    out[AS_SERVER_AT] = as_server ? 1 : 0;
}

bool zl_greeting_signature_ok(const uint8_t *bytes, size_t n)
{
    if (n > 0 && bytes[0] != SIGNATURE_START)
        return false;
    /* Only bit 0 matters: libzmq and JeroMQ fill the padding so that a
     * ZMTP 1.0 peer reads it as a length, and test only that bit. */
    if (n > SIGNATURE_END && (bytes[SIGNATURE_END] & 0x01) == 0)
        return false;
    return true;
}

/* The mechanism is NUL padded; a non-NUL byte after the padding has begun
 * means the field is garbage, not a name we should half-read. */
static int decode_mechanism(const uint8_t *field, char out[21])
{
    size_t len = 0;
    while (len < MECHANISM_SIZE && field[len] != 0)
        len++;
    for (size_t i = len; i < MECHANISM_SIZE; i++) {
        if (field[i] != 0)
            return -1;
    }
    memcpy(out, field, len);
    out[len] = '\0';
    return 0;
}

int zl_greeting_decode(const uint8_t in[ZL_GREETING_SIZE], zl_greeting *out)
{
    if (!zl_greeting_signature_ok(in, ZL_GREETING_SIZE))
        return -1;
    if (in[VERSION_MAJOR_AT] < 3)
        return -1;
    if (decode_mechanism(in + MECHANISM_AT, out->mechanism) != 0)
        return -1;
    out->major = in[VERSION_MAJOR_AT];
    out->minor = in[VERSION_MINOR_AT];
    out->as_server = in[AS_SERVER_AT] != 0;
    return 0;
}
