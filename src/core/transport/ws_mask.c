/* ws_mask.c — RFC 6455 masking, a word at a time. */
#include "ws_mask.h"

#include <string.h>

unsigned zl_ws_mask(uint8_t *dst, const uint8_t *src, size_t n,
                    const uint8_t key[4], unsigned phase)
{
    phase &= 3;
    if (n < 8) {
        for (size_t i = 0; i < n; i++)
            dst[i] = src[i] ^ key[(phase + i) & 3];
        return (unsigned)((phase + n) & 3);
    }
    /* The key, turned to start at phase and repeated over a word: then
     * byte i of this call takes byte i % 8 of it. */
    uint8_t twice[8], turned[8];
    memcpy(twice, key, 4);
    memcpy(twice + 4, key, 4);
    memcpy(turned, twice + phase, 4);
    memcpy(turned + 4, twice + phase, 4);
    uint64_t word;
    memcpy(&word, turned, sizeof word);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t a, b, c, d;
        memcpy(&a, src + i, 8);
        memcpy(&b, src + i + 8, 8);
        memcpy(&c, src + i + 16, 8);
        memcpy(&d, src + i + 24, 8);
        a ^= word;
        b ^= word;
        c ^= word;
        d ^= word;
        memcpy(dst + i, &a, 8);
        memcpy(dst + i + 8, &b, 8);
        memcpy(dst + i + 16, &c, 8);
        memcpy(dst + i + 24, &d, 8);
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, src + i, sizeof v);
        v ^= word;
        memcpy(dst + i, &v, sizeof v);
    }
    for (; i < n; i++)
        dst[i] = src[i] ^ turned[i & 7];
    return (unsigned)((phase + n) & 3);
}
