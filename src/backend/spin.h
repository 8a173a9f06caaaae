/* spin.h — a short busy wait before a thread sleeps. On the VMs we measure,
 * waking a sleeping thread costs 15–25 µs, while the next message of a busy
 * peer often comes sooner: spinning that long first turns many sleeps, and
 * the wakeups they cost the waking thread, into none. Used by application
 * threads before they sleep in a receive (socket.c) and by I/O threads
 * before they sleep in the backend's wait. Both stop spinning for a while
 * after a spin that found nothing. */
#ifndef ZL_SPIN_H
#define ZL_SPIN_H

#include <stdint.h>

#include "atomics.h" /* zl_cpu_relax */

/* How long an application thread spins before it sleeps. Longer than a
 * wakeup costs is pointless; much shorter misses a busy peer's messages. */
#define ZL_SPIN_BEFORE_SLEEP_NS 10000u
/* An I/O thread waits for the application's next message: the reply of a
 * peer that was itself just woken, which takes a wakeup and then some. */
#define ZL_IO_SPIN_BEFORE_SLEEP_NS 30000u
/* Waits that skip the spin after one that found nothing. */
#define ZL_SPINS_SKIPPED_AFTER_A_MISS 16
/* A receive that slept, and whose message came within this long of the
 * wait's start, would have been caught by a longer spin: the next receive
 * spins about that long. A ping-pong peer that had to be woken answers in
 * 15-35 µs here; without this both sides, once one of them missed a spin,
 * kept sleeping and waking each other (inproc round trips of 70 µs instead
 * of 1). A peer slower than this is left to wake us.
 *
 * When the message comes through an I/O thread (tcp, ipc), that thread is
 * the one that pays for the wakeup: on the VMs we measure, a write to the
 * eventfd of a thread on another CPU costs the writer 13-16 µs, and one on
 * its own CPU 2.5 µs. So an application thread spins for an I/O thread,
 * and adapts its spin, only on a CPU that no I/O thread was last seen on,
 * and yields between rounds, so that a thread that shares its CPU runs at
 * once. On the I/O thread's own CPU it sleeps at once: its wakeup is
 * cheap there, and a spin would take the CPU the I/O thread needs.
 *
 * 100 µs rather than 50: an I/O thread that writes a batch of large bodies
 * leaves its receivers gaps of 50-100 µs (eight 64 KiB bodies to copy, or
 * two of 256 KiB), and a receiver that slept through them cost it a
 * wakeup each time (bench/NOTES.md, "Spin budget"). */
#define ZL_SPIN_ADAPT_MAX_NS 100000u
/* A receive whose last message was already waiting is streaming: its
 * writer, another application thread, is the slower side. Looking at the
 * pipe again at once then costs that writer the most: each look takes the
 * line of the pipe's published count into the reader's cache, and the
 * writer's next publish waits to take it back. In inproc PAIR 64 B that
 * wait was 60% of the sender's time. Such a receive looks only this often,
 * so the writer publishes several messages per transfer of the line and
 * the reader takes them as one batch. A ping-pong receive always waited
 * for its last message, so it keeps looking at once.
 *
 * The price is paid by a message that ends a pause in a stream: it waits
 * up to one gap. 4 us trades a little of that latency for most of the
 * batching; 8 us cost far more latency for little more (bench/NOTES.md,
 * "Streaming gap"). */
#define ZL_SPIN_STREAMING_GAP_NS 4000u

/* The spin that would have caught a message that came waited ns into a
 * wait (at most ZL_SPIN_ADAPT_MAX_NS), with a margin. */
static inline uint32_t zl_spin_for(uint64_t waited)
{
    uint64_t spin = waited + waited / 4;
    if (spin < ZL_SPIN_BEFORE_SLEEP_NS)
        spin = ZL_SPIN_BEFORE_SLEEP_NS;
    if (spin > ZL_SPIN_ADAPT_MAX_NS)
        spin = ZL_SPIN_ADAPT_MAX_NS;
    return (uint32_t)spin;
}

#endif
