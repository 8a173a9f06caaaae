/* poly1305.c — Poly1305 in three limbs of 44, 44 and 42 bits: each block
 * is h = (h + m) * r mod 2^130 - 5, with products in 128-bit integers and
 * what passes 2^130 folded back in as five times it. */
#include "poly1305.h"
#include "poly1305_limbs.h"
#include "poly1305_x4.h"

#if ZL_POLY1305_NATIVE

#include <string.h>

#define MASK44 ZL_POLY_MASK44
#define MASK42 ZL_POLY_MASK42

static uint64_t load64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void store64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void zl_poly1305_init(zl_poly1305 *p, const uint8_t key[32])
{
    uint64_t t0 = load64(key), t1 = load64(key + 8);
    /* r's clamping (RFC 8439 2.5), split into the three limbs. */
    p->r[0] = t0 & UINT64_C(0xffc0fffffff);
    p->r[1] = ((t0 >> 44) | (t1 << 20)) & UINT64_C(0xfffffc0ffff);
    p->r[2] = (t1 >> 24) & UINT64_C(0x00ffffffc0f);
    p->h[0] = p->h[1] = p->h[2] = 0;
    p->pad[0] = load64(key + 16);
    p->pad[1] = load64(key + 24);
    p->buffered = 0;
}

/* Whole 16-byte blocks; hibit is 2^128 for a full block (in h2's terms,
 * bit 40), 0 for the padded last one, which carries its own 1 byte. */
static void blocks(zl_poly1305 *p, const uint8_t *m, size_t len, uint64_t hibit)
{
    const uint64_t r[3] = {p->r[0], p->r[1], p->r[2]};
    const uint64_t s1 = r[1] * (5 << 2), s2 = r[2] * (5 << 2);
    uint64_t h[3] = {p->h[0], p->h[1], p->h[2]};
    for (; len >= 16; len -= 16, m += 16) {
        uint64_t t0 = load64(m), t1 = load64(m + 8);
        h[0] += t0 & MASK44;
        h[1] += ((t0 >> 44) | (t1 << 20)) & MASK44;
        h[2] += ((t1 >> 24) & MASK42) | hibit;
        zl_poly1305_mul(h, r, s1, s2);
    }
    p->h[0] = h[0];
    p->h[1] = h[1];
    p->h[2] = h[2];
}

void zl_poly1305_update(zl_poly1305 *p, const uint8_t *m, size_t len)
{
    if (p->buffered) {
        size_t take = 16 - p->buffered < len ? 16 - p->buffered : len;
        memcpy(p->buffer + p->buffered, m, take);
        p->buffered += take;
        m += take;
        len -= take;
        if (p->buffered < 16)
            return;
        blocks(p, p->buffer, 16, UINT64_C(1) << 40);
        p->buffered = 0;
    }
    size_t whole = len & ~(size_t)15;
#if ZL_POLY1305_X4
    /* Four lanes pay for their setup (three products) from a few hundred
     * bytes on. */
    if (zl_cpu_has_avx2 && whole >= 256) {
        size_t wide = whole & ~(size_t)63;
        zl_poly1305_blocks_x4(p->h, p->r, m, wide);
        m += wide;
        len -= wide;
        whole -= wide;
    }
#endif
    blocks(p, m, whole, UINT64_C(1) << 40);
    m += whole;
    len -= whole;
    if (len) {
        memcpy(p->buffer, m, len);
        p->buffered = len;
    }
}

void zl_poly1305_finish(zl_poly1305 *p, uint8_t mac[16])
{
    if (p->buffered) {
        p->buffer[p->buffered] = 1;
        memset(p->buffer + p->buffered + 1, 0, 16 - p->buffered - 1);
        blocks(p, p->buffer, 16, 0);
    }
    /* Fully carried, then h - p chosen by mask when h >= p. */
    zl_poly1305_carry(p->h);
    uint64_t h0 = p->h[0], h1 = p->h[1], h2 = p->h[2];
    uint64_t g0 = h0 + 5;
    uint64_t c;
    c = g0 >> 44;
    g0 &= MASK44;
    uint64_t g1 = h1 + c;
    c = g1 >> 44;
    g1 &= MASK44;
    uint64_t g2 = h2 + c - (UINT64_C(1) << 42);
    /* g2's top bit is set when h < p: keep h then. */
    uint64_t keep_h = (g2 >> 63) - 1; /* all ones when h >= p */
    g0 &= keep_h;
    g1 &= keep_h;
    g2 &= keep_h;
    keep_h = ~keep_h;
    h0 = (h0 & keep_h) | g0;
    h1 = (h1 & keep_h) | g1;
    h2 = (h2 & keep_h) | g2;
    /* h + s mod 2^128. */
    uint64_t t0 = p->pad[0], t1 = p->pad[1];
    h0 += t0 & MASK44;
    c = h0 >> 44;
    h0 &= MASK44;
    h1 += (((t0 >> 44) | (t1 << 20)) & MASK44) + c;
    c = h1 >> 44;
    h1 &= MASK44;
    h2 += ((t1 >> 24) & MASK42) + c;
    h2 &= MASK42;
    store64(mac, h0 | h1 << 44);
    store64(mac + 8, h1 >> 20 | h2 << 24);
    volatile uint8_t *v = (volatile uint8_t *)p;
    for (size_t i = 0; i < sizeof *p; i++)
        v[i] = 0;
}

#endif
