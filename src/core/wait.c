/* wait.c — the adaptation of a waiter's spin (wait.h). */
#include "wait.h"

void zl_wait_missed(zl_waiter *w)
{
    int skips = w->skips_next ? w->skips_next : ZL_WAIT_SKIPS_AFTER_A_MISS;
    w->spins_to_skip = skips;
    w->skips_next = skips < ZL_WAIT_SKIPS_MAX ? skips * 2 : ZL_WAIT_SKIPS_MAX;
    w->spin_ns = 0;
}

void zl_wait_adapt(zl_waiter *w, uint64_t waited, uint32_t budget_ns)
{
    if (waited > budget_ns)
        return;
    /* The spin that would have caught it, with a margin. */
    uint64_t spin = waited + waited / 4;
    if (spin < ZL_WAIT_SPIN_NS)
        spin = ZL_WAIT_SPIN_NS;
    if (spin > budget_ns)
        spin = budget_ns;
    w->spin_ns = (uint32_t)spin;
    w->spins_to_skip = 0;
    w->skips_next = 0;
}
