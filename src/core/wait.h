/* wait.h — how an application thread waits for a message: spin for a
 * bounded budget, adapted to how soon the last message came, then sleep.
 * Used by a blocking receive (socket.c), zlink_poll (poll.c) and a pipe's
 * reader waiting for a batch (pipe.c). The I/O threads' spin before they
 * sleep is the backend's (backend.h, zl_loop_set_spin_budget).
 *
 * Why spin at all: waking a sleeping thread costs its waker a system call
 * and the sleeper a reschedule, while the next message of a busy peer often
 * comes sooner than that. Spinning a little first turns many sleeps, and
 * the wakeups they cost the waking thread, into none. A spin that found
 * nothing makes the next ones skipped for a while. The context's spin
 * budget (ZLINK_SPIN_BUDGET) caps every spin; 0 never spins. */
#ifndef ZL_WAIT_H
#define ZL_WAIT_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "atomics.h" /* zl_cpu_relax */
#include "backend.h" /* zl_thread_yield */

/* How long an application thread spins before it sleeps. Longer than a
 * wakeup costs is pointless; much shorter misses a busy peer's messages. */
#define ZL_WAIT_SPIN_NS 10000u
/* Waits that skip the spin after one that found nothing. Each further
 * miss in a row doubles it, up to ZL_WAIT_SKIPS_MAX: a peer that always
 * answers later than the budget (a request at a modest rate across
 * processes) then costs a spin once in hundreds of waits, not once in 17.
 * A spin that finds its message, or a sleep that a spin would have
 * caught, starts again at the first. */
#define ZL_WAIT_SKIPS_AFTER_A_MISS 16
#define ZL_WAIT_SKIPS_MAX 256
/* A receive whose last message was already waiting is streaming: its
 * writer, another application thread, is the slower side. Looking at the
 * pipe again at once then costs that writer the most: each look takes the
 * line of the pipe's published count into the reader's cache, and the
 * writer's next publish waits to take it back. Such a receive looks only
 * this often, so the writer publishes several messages per transfer of the
 * line and the reader takes them as one batch. A ping-pong receive always
 * waited for its last message, so it keeps looking at once.
 *
 * The price is paid by a message that ends a pause in a stream: it waits
 * up to one gap. 4 µs trades a little of that latency for most of the
 * batching (bench/NOTES.md, "Streaming gap"). */
#define ZL_WAIT_STREAMING_GAP_NS 4000u
/* A yield during a spin that kept the thread off its CPU this long let
 * another thread run there: the machine has more runnable threads than
 * CPUs. A spin then only takes the CPU from the threads it waits for
 * (the peer's, in another process too), so it stops as a miss that skips
 * the most spins, and a message it finds all the same does not count as a
 * hit. */
#define ZL_WAIT_CONTENDED_NS 50000u
/* How long a pipe's reader that follows its writer closely waits for the
 * writer to publish a batch before it looks again (pipe.c, refill). */
#define ZL_WAIT_BATCH_NS 1000u

/* One waiter's spin state: a socket's receives, or one thread's polls. */
typedef struct zl_waiter {
    int spins_to_skip; /* waits that sleep without spinning */
    int skips_next;    /* what the next miss sets it to; 0: the first */
    uint32_t spin_ns;  /* how long the next spin lasts; 0: ZL_WAIT_SPIN_NS */
} zl_waiter;

/* What a look during a spin found: > 0 what it waited for, < 0 an error
 * (errno set), 0 nothing yet. */
typedef int (*zl_wait_look_fn)(void *arg);
/* Whether a spin that gives way to I/O threads may go on: false once the
 * thread was moved onto an I/O thread's CPU. */
typedef bool (*zl_wait_clear_fn)(void *arg);

/* Whether w is skipping spins after a miss. */
static inline bool zl_wait_skipping(const zl_waiter *w)
{
    return w->spins_to_skip > 0;
}

/* A wait that would have spun slept instead: one skip fewer. */
static inline void zl_wait_skip_one(zl_waiter *w)
{
    w->spins_to_skip--;
}

/* When a spin that starts at started ends, under budget_ns. */
static inline uint64_t zl_wait_spin_until(const zl_waiter *w, uint64_t started,
                                          uint32_t budget_ns)
{
    uint32_t spin = w->spin_ns ? w->spin_ns : ZL_WAIT_SPIN_NS;
    return started + (spin < budget_ns ? spin : budget_ns);
}

/* Spins without looking at anything for ns. */
static inline void zl_wait_pause(uint32_t ns)
{
    uint64_t until = uv_hrtime() + ns;
    do
        zl_cpu_relax();
    while (uv_hrtime() < until);
}

/* A spin that ran out: the next waits sleep at once (more of them after
 * each miss in a row), and the one after them spins ZL_WAIT_SPIN_NS. */
void zl_wait_missed(zl_waiter *w);

/* A spin that found what it waited for: misses in a row start over. */
static inline void zl_wait_hit(zl_waiter *w)
{
    w->skips_next = 0;
}

/* Adaptation, within the context's budget (ZLINK_SPIN_BUDGET): a receive
 * that slept, and whose message came within the budget of the wait's
 * start, would have been caught by a longer spin, so the next receive
 * spins about that long. A ping-pong peer that had to be woken answers in
 * tens of µs; without this both sides, once one of them missed a spin,
 * kept sleeping and waking each other. A peer slower than the budget is
 * left to wake us. The budget's default is reasoned in docs/options.md.
 *
 * When the message comes through an I/O thread (tcp, ipc), that thread is
 * the one that pays for the wakeup, and pays most for a thread on another
 * CPU. So an application thread spins for an I/O thread, and adapts its
 * spin, only on a CPU that no I/O thread was last seen on, and yields
 * between rounds, so that a thread that shares its CPU runs at once. On
 * the I/O thread's own CPU it sleeps at once: its wakeup is cheap there,
 * and a spin would take the CPU the I/O thread needs.
 *
 * Here: a wait that slept got what it waited for waited ns after it
 * began; if a spin that long (within budget_ns) would have caught it, the
 * next wait spins about that long. */
void zl_wait_adapt(zl_waiter *w, uint64_t waited, uint32_t budget_ns);

/* Looks with look until it finds something or until passes, then returns
 * what the last look found; 0 when nothing came (a miss, zl_wait_missed,
 * or a spin that stopped to give way). Looks gap_ns apart, or 16 to a
 * round with a CPU hint between them. gives_way: the awaited message comes
 * through an I/O thread, so each round after the first starts with a
 * yield, and the spin stops, not as a miss, once still_clear says the
 * thread shares an I/O thread's CPU. A yield comes before a round of
 * looks, never last: the thread it let run may have held the CPU past the
 * spin's end, and the message has likely come meanwhile. A yield that
 * kept the thread off its CPU (ZL_WAIT_CONTENDED_NS) ends the spin as a
 * miss after that round.
 *
 * Inline, so that each caller's look is inlined into its loop. */
static inline int zl_wait_spin(zl_waiter *w, uint64_t until, uint32_t gap_ns,
                               bool gives_way, zl_wait_look_fn look,
                               zl_wait_clear_fn still_clear, void *arg)
{
    int looks_per_round = gap_ns ? 1 : 16;
    bool contended = false;
    for (bool first_round = true;; first_round = false) {
        if (gives_way && !first_round) {
            if (!still_clear(arg))
                return 0;
            uint64_t before = uv_hrtime();
            zl_thread_yield();
            contended = uv_hrtime() - before > ZL_WAIT_CONTENDED_NS;
        }
        for (int i = 0; i < looks_per_round; i++) {
            int found = look(arg);
            if (found > 0 && !contended)
                zl_wait_hit(w);
            if (found != 0)
                return found;
            if (gap_ns)
                zl_wait_pause(gap_ns);
            else
                zl_cpu_relax();
        }
        if (contended || uv_hrtime() >= until)
            break;
    }
    if (contended)
        w->skips_next = ZL_WAIT_SKIPS_MAX;
    zl_wait_missed(w);
    return 0;
}

#endif
