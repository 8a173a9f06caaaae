/* io_spin.h — an I/O thread's spin before it sleeps in the backend's wait,
 * shared by the epoll and kqueue loops (IOCP does not spin). The
 * application threads' spin is core's (src/core/wait.h). */
#ifndef ZL_IO_SPIN_H
#define ZL_IO_SPIN_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "atomics.h" /* zl_cpu_relax */
#include "backend.h" /* zl_thread_yield */

/* An I/O thread waits for the application's next message: the reply of a
 * peer that was itself just woken, which takes a wakeup and then some. */
#define ZL_IO_SPIN_BEFORE_SLEEP_NS 30000u
/* Waits that sleep without spinning after a spin that found nothing;
 * doubled by each further miss in a row, up to ZL_IO_SPINS_SKIPPED_MAX,
 * and back to the first after a spin that found a wake. An I/O thread
 * whose application answers later than the spin (requests at a modest
 * rate) then spins once in hundreds of waits. */
#define ZL_IO_SPINS_SKIPPED_AFTER_A_MISS 16
#define ZL_IO_SPINS_SKIPPED_MAX 256

/* A yield that kept the thread off its CPU this long let another thread
 * run: with more runnable threads than CPUs, a spin only delays the ones
 * it waits for, so it ends as a miss that skips the most spins (as an
 * application's, wait.h). */
#define ZL_IO_SPIN_CONTENDED_NS 50000u

/* One loop's spin state. */
typedef struct zl_io_spin {
    int spins_to_skip; /* waits that sleep without spinning first */
    int skips_next;    /* what the next miss sets it to; 0: the first */
} zl_io_spin;

/* How long an I/O thread spins under the context's spin budget. */
static inline uint32_t zl_io_spin_within(uint32_t budget_ns)
{
    return budget_ns < ZL_IO_SPIN_BEFORE_SLEEP_NS ? budget_ns
                                                  : ZL_IO_SPIN_BEFORE_SLEEP_NS;
}

static inline uint64_t zl_io_spin_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Before sleeping, watch for a wake from another thread for up to
 * spin_ns: the application's next message then costs neither side a
 * wakeup. Data from the network needs no watching: the OS wait returns it
 * at once, whatever the timeout. True when a wake came. A spin that found
 * nothing makes the next state->spins_to_skip waits sleep at once.
 *
 * Each round of looks after the first begins with a yield, as an
 * application thread's spin does (wait.h): the thread whose message we
 * wait for may share this CPU, just woken by us, and without the yield it
 * waited for the spin to end. That spin then missed, the next waits slept,
 * and each message from a thread on the other CPU paid a wakeup there:
 * tcp round trips took several times longer, with many more missed spins
 * (bench/NOTES.md, "Spin budget"). Throughput did not move. A yield
 * that kept the thread off its CPU ends the spin after that round. */
static inline bool zl_io_spin_for_wake(atomic_bool *wake_pending,
                                       zl_io_spin *state, uint32_t spin_ns)
{
    if (spin_ns == 0)
        return false;
    if (state->spins_to_skip > 0) {
        state->spins_to_skip--;
        return false;
    }
    uint64_t until = zl_io_spin_now_ns() + spin_ns;
    bool contended = false;
    for (bool first_round = true;; first_round = false) {
        if (!first_round) {
            uint64_t before = zl_io_spin_now_ns();
            zl_thread_yield();
            contended = zl_io_spin_now_ns() - before > ZL_IO_SPIN_CONTENDED_NS;
        }
        for (int i = 0; i < 64; i++) {
            if (atomic_load_explicit(wake_pending, memory_order_relaxed)) {
                if (!contended)
                    state->skips_next = 0;
                return true;
            }
            zl_cpu_relax();
        }
        if (contended || zl_io_spin_now_ns() >= until)
            break;
    }
    if (contended)
        state->skips_next = ZL_IO_SPINS_SKIPPED_MAX;
    int skips = state->skips_next ? state->skips_next
                                  : ZL_IO_SPINS_SKIPPED_AFTER_A_MISS;
    state->spins_to_skip = skips;
    state->skips_next =
        skips < ZL_IO_SPINS_SKIPPED_MAX ? skips * 2 : ZL_IO_SPINS_SKIPPED_MAX;
    return false;
}

#endif
