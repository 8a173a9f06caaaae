/* ws_mask.h — RFC 6455 masking (§5.3), a word at a time: the encoder masks
 * a client's frames as it copies them, the decoder unmasks a client's
 * frames in place. */
#ifndef ZL_WS_MASK_H
#define ZL_WS_MASK_H

#include <stddef.h>
#include <stdint.h>

/* Writes n bytes of src XOR the key to dst (which may be src), the first
 * of them at phase (0-3) of the key; the phase after them. */
unsigned zl_ws_mask(uint8_t *dst, const uint8_t *src, size_t n,
                    const uint8_t key[4], unsigned phase);

#endif
