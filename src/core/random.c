/* random.c — per-object seeds (random.h). */
#include "random.h"

#include <uv.h>

#include "atomics.h"

static uv_once_t process_seed_once = UV_ONCE_INIT;
static uint64_t process_seed;
static atomic_uint_least64_t seeds_given;

static void init_process_seed(void)
{
    /* One blocking-capable call per process; the clock is the fallback. */
    if (uv_random(NULL, NULL, &process_seed, sizeof process_seed, 0, NULL) != 0)
        process_seed = uv_hrtime();
}

uint64_t zl_random_seed(const void *salt)
{
    uv_once(&process_seed_once, init_process_seed);
    uint64_t state = process_seed ^ uv_hrtime() ^ (uintptr_t)salt;
    state ^= atomic_fetch_add(&seeds_given, 1) * 0x2545f4914f6cdd1dull;
    return zl_random_next(&state);
}
