/* soak.h — what the soak's two processes share: the servers' layout, the
 * limits the checks use, and the peers' entry point (soak_peers.c). */
#ifndef ZL_SOAK_H
#define ZL_SOAK_H

#include <stdbool.h>
#include <stdint.h>

/* Servers: one zlink socket of each type, then an XPUB and a DEALER whose
 * application does not read while the peers run (fed only by --growth
 * traffic). */
#define SOAK_TYPES 9
#define SOAK_DEAF_XPUB 7
#define SOAK_DEAF_DEALER 8
#define SOAK_PEERS_MAX 1024
/* The servers' MAXMSGSIZE, except under --growth (unlimited). */
#define SOAK_MAXMSGSIZE 65536
/* What the well-behaved clients' messages start with. */
#define SOAK_HEALTHY "healthy"
/* After the peers are gone, RSS may exceed the baseline by this plus a
 * quarter of the baseline: the allocator keeps some of what it had. */
#define SOAK_RSS_MARGIN_KIB (16 * 1024)
/* While the peers run: queues are bounded by HWMs of 100 messages, so
 * this is room for the bounded queues, not for a growing one. */
#define SOAK_PEAK_MARGIN_KIB (256 * 1024)
/* Address space while the peers run, outside the sanitizers: thread stacks
 * and malloc arenas, not gigabytes reserved for frames still to come. */
#define SOAK_PEAK_VM_MARGIN_KIB (2L * 1024 * 1024)

typedef struct soak_config {
    int seconds;
    int peers; /* connected at a time */
    uint32_t seed;
    bool growth;
    bool verbose;
    int only_kind; /* -1: every kind; else the one --kind named */
    int skip_kind; /* -1: none; else the one --skip-kind named */
} soak_config;

extern const int soak_types[SOAK_TYPES];

uint64_t soak_now_ms(void);
/* The peer kind called name (soak --kind), or -1. */
int soak_kind_from_name(const char *name);
/* The peers' process: reads the servers' ports from ctl, runs a warm-up,
 * says "paused", waits for "go", runs cfg->seconds, says "done". Returns
 * the exit code. */
int soak_run_peers(const soak_config *cfg, int ctl);

#endif
