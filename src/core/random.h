/* random.h — non-cryptographic randomness: seeds that differ per object and
 * per process, and a small generator to draw from them. For hash keys,
 * generated ids and reconnect jitter; nothing here is a secret. */
#ifndef ZL_RANDOM_H
#define ZL_RANDOM_H

#include <stdint.h>

/* A seed distinct per call, even for two objects made in the same instant:
 * the process's random seed (read once from the OS), the clock, salt (the
 * object's address) and a counter. */
uint64_t zl_random_seed(const void *salt);

/* The next value of the splitmix64 sequence at *state. */
static inline uint64_t zl_random_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
