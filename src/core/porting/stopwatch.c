/* stopwatch.c — zlink_sleep and zlink_stopwatch_*: libzmq's timing helpers,
 * kept for programs ported from it. */
#include <stdlib.h>
#include <uv.h>

#include "zlink.h"

void zlink_sleep(int seconds)
{
    if (seconds > 0)
        uv_sleep((unsigned int)seconds * 1000u);
}

/* The watch is the start time itself, as libzmq's is. */
void *zlink_stopwatch_start(void)
{
    uint64_t *watch = malloc(sizeof *watch);
    if (watch)
        *watch = uv_hrtime();
    return watch;
}

unsigned long zlink_stopwatch_intermediate(void *watch)
{
    if (!watch)
        return 0;
    return (unsigned long)((uv_hrtime() - *(uint64_t *)watch) / 1000u);
}

unsigned long zlink_stopwatch_stop(void *watch)
{
    unsigned long elapsed = zlink_stopwatch_intermediate(watch);
    free(watch);
    return elapsed;
}
