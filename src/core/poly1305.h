/* poly1305.h — Poly1305 (RFC 8439) of our own where the compiler has a
 * 128-bit integer: it authenticates every byte of a CURVE message, and
 * three 44-bit limbs take half mbedTLS's time. Elsewhere curve_crypto.c
 * uses mbedTLS's. */
#ifndef ZL_POLY1305_H
#define ZL_POLY1305_H

#include <stddef.h>
#include <stdint.h>

#if defined(__SIZEOF_INT128__)
#define ZL_POLY1305_NATIVE 1

typedef struct zl_poly1305 {
    uint64_t r[3], h[3], pad[2];
    uint8_t buffer[16]; /* a partial block, until the next update fills it */
    size_t buffered;
} zl_poly1305;

/* key: r (clamped here) then s, 32 bytes, used for one message only. */
void zl_poly1305_init(zl_poly1305 *p, const uint8_t key[32]);
void zl_poly1305_update(zl_poly1305 *p, const uint8_t *m, size_t len);
/* The tag; p is wiped. */
void zl_poly1305_finish(zl_poly1305 *p, uint8_t mac[16]);
#else
#define ZL_POLY1305_NATIVE 0
#endif

#endif
