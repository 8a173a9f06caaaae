/* small_copy.h — copies of under 128 bytes, as a few fixed-size moves. */
#ifndef ZL_SMALL_COPY_H
#define ZL_SMALL_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* zl_copy_small copies fewer than this many bytes. */
#define ZL_COPY_SMALL_MAX 128

/* The first and the last n bytes of len, n <= len: two moves of a size
 * known where this is inlined. */
static inline void zl_copy_ends(uint8_t *d, const uint8_t *s, size_t len,
                                size_t n)
{
    memcpy(d, s, n);
    memcpy(d + len - n, s + len - n, n);
}

/* Copies len < ZL_COPY_SMALL_MAX bytes as two fixed-size moves of the largest
 * power of two up to 64 that fits, overlapping in the middle, as the C
 * library's memcpy does for small sizes, but inline. A memcpy of a length the
 * compiler cannot see becomes a call, or `rep movsq` when it knows a bound,
 * and either costs tens of cycles: on the path of every small message an
 * I/O thread encodes and decodes, that was most of the copy
 * (bench/NOTES.md, "Small copies"). */
static inline void zl_copy_small(void *dst, const void *src, size_t len)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    if (len >= 64)
        zl_copy_ends(d, s, len, 64);
    else if (len >= 32)
        zl_copy_ends(d, s, len, 32);
    else if (len >= 16)
        zl_copy_ends(d, s, len, 16);
    else if (len >= 8)
        zl_copy_ends(d, s, len, 8);
    else if (len >= 4)
        zl_copy_ends(d, s, len, 4);
    else if (len > 0) {
        d[0] = s[0];
        d[len / 2] = s[len / 2];
        d[len - 1] = s[len - 1];
    }
}

#endif
