/* x25519.h — X25519 (RFC 7748) of our own where the compiler has a 128-bit
 * integer (gcc and clang on 64-bit targets); elsewhere curve_crypto.c uses
 * mbedTLS's. */
#ifndef ZL_X25519_H
#define ZL_X25519_H

#include <stdint.h>

#if defined(__SIZEOF_INT128__)
#define ZL_X25519_NATIVE 1
/* out = X25519(scalar, u): the scalar clamped, u's top bit ignored. A
 * low-order u gives all zeros, which the caller must refuse. */
void zl_x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t u[32]);
#else
#define ZL_X25519_NATIVE 0
#endif

#endif
