/* aes_gcm_bench.c — the TLS record layer's AES-GCM alone: MB/s of seal
 * and open per record size, each of zlink's levels the CPU runs (VAES,
 * AES-NI, and mbedTLS's GCM, the portable branch), for AES-128 and
 * AES-256. One thread, no I/O: the cipher's own cost per byte. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "transport/tls_aes_gcm.h"

enum { AAD_LEN = 13, MAX_RECORD = 16384 };

typedef struct record {
    uint8_t nonce[12], aad[AAD_LEN], tag[16];
    uint8_t in[MAX_RECORD], out[MAX_RECORD];
} record;

/* A TLS 1.2 nonce's explicit half counts records. */
static void next_nonce(uint8_t nonce[12])
{
    for (int i = 11; i >= 4 && ++nonce[i] == 0; i--)
        ;
}

/* Seals (or opens) size-byte records for about seconds; MB/s (10^6). */
static double run(const zl_aes_gcm *g, record *r, size_t size, bool open,
                  double seconds)
{
    uint64_t start = uv_hrtime(), bytes = 0;
    uint64_t limit = (uint64_t)(seconds * 1e9);
    for (;;) {
        for (int i = 0; i < 64; i++) {
            if (open) {
                if (zl_aes_gcm_open(g, r->nonce, r->aad, AAD_LEN, r->out, size,
                                    r->in, r->tag) != 0) {
                    fprintf(stderr, "aes_gcm_bench: a record failed open\n");
                    exit(1);
                }
            } else {
                next_nonce(r->nonce);
                zl_aes_gcm_seal(g, r->nonce, r->aad, AAD_LEN, r->in, size,
                                r->out, r->tag);
            }
            bytes += size;
        }
        uint64_t elapsed = uv_hrtime() - start;
        if (elapsed >= limit)
            return (double)bytes / ((double)elapsed / 1e9) / 1e6;
    }
}

static void cells(const char *name, int level, size_t key_len, double seconds,
                  record *r)
{
    static const size_t sizes[] = {1024, 16384};
    uint8_t key[32];
    for (size_t i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)(i * 29 + 7);
    zl_aes_gcm g;
    if (zl_aes_gcm_init_level(&g, key, key_len, level) != 0) {
        fprintf(stderr, "aes_gcm_bench: init failed\n");
        exit(1);
    }
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t size = sizes[s];
        memset(r->in, 0x5a, size);
        double seal = run(&g, r, size, false, seconds);
        /* Open runs on the last record sealed, which must verify. */
        double open = run(&g, r, size, true, seconds);
        printf("%s,%zu,%zu,%.0f,%.0f\n", name, key_len * 8, size, seal, open);
    }
    zl_aes_gcm_free(&g);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.5;
    record *r = calloc(1, sizeof *r);
    if (r == NULL)
        return 1;
    printf("impl,key_bits,record_bytes,seal_mb_per_s,open_mb_per_s\n");
    for (size_t key_len = 16; key_len <= 32; key_len += 16) {
        static const char *const names[] = {"mbedtls_gcm", "zlink_aesni",
                                            "zlink_vaes"};
        for (int level = ZL_AES_GCM_VAES; level >= ZL_AES_GCM_PORTABLE;
             level--) {
            if (level <= zl_aes_gcm_cpu_level())
                cells(names[level], level, key_len, seconds, r);
            else if (key_len == 16)
                fprintf(stderr, "aes_gcm_bench: this CPU does not run %s\n",
                        names[level]);
        }
    }
    free(r);
    return 0;
}
