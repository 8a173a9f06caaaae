/* pipe.c — the two lock-free message queues of a pipe pair, their sleep and
 * high-water-mark handshakes, and the commands and references around them. */
#include "pipe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "atomics.h"
#include "cache_line.h"
#include "direct_recv.h"
#include "direct_send.h"
#include "fast_tls.h"
#include "msg.h"
#include "noinline.h"
#include "wait.h"
#include "zmtp/zmtp.h"

/* Chunks follow the queue's depth, not its traffic. A queue starts with a
 * chunk of two slots, and each chunk it moves into doubles up to
 * RECYCLED_CHUNK_MIN. From there the writer moves into the spare chunk the
 * reader parked when there is one (the queue is shallower than a chunk),
 * and into a new one twice the size only when there is none (the reader is
 * still a chunk behind), up to 256 messages, as libzmq's
 * message_pipe_granularity, which keeps chunk changes rare for a deep
 * queue. So a connection that keeps a few requests in flight cycles between
 * two small chunks however many messages it passes, where sizing by traffic
 * gave every busy pipe two full chunks (32 KiB each), and a quiet pipe costs
 * a few hundred bytes. A pipe keeps the chunk size of its deepest moment, as
 * libzmq's keep theirs. */
#define CHUNK_MSGS 256
#define FIRST_CHUNK_MSGS 2
/* Below this size a chunk is not recycled and the next one doubles: a
 * ping-pong between two chunks of four slots changed chunks every four
 * messages, and the exchanges of the spare between the two threads showed
 * in inproc latency. */
#define RECYCLED_CHUNK_MIN 16
/* The writer asks for the slot this far ahead as it fills one. Slots are
 * reused from the reader's old chunks, so a slot's lines are in the other
 * thread's cache, and the copy into a slot was where the sender stalled (perf
 * annotate). 4 slots ahead gained most (bench/NOTES.md, "Pipe prefetch"). */
#define PREFETCH_SLOTS_AHEAD 4
/* How far ahead of the slot it takes the reader looks (prefetch_ahead). */
#define READ_AHEAD_SLOTS 4
/* A reader that keeps finding fewer than this many new parts waits for a
 * batch (ZL_WAIT_BATCH_NS, wait.h) before it takes them (wait_for_batch). */
#define BATCH_PARTS 32
/* A send that may wait is paced ("Pacing") once the queue holds about
 * this many bytes of parts of at least PACE_MIN_PART bytes, and never
 * below PACE_MIN_MSGS messages. */
#define PACE_BUDGET_BYTES (8u << 20)
#define PACE_MIN_PART (32u * 1024)
#define PACE_MIN_MSGS 4
/* A queue that weighs parts (zl_pipe_weigh_parts) holds whole messages of
 * at most this many parts each, on average, up to its HWM: far above any
 * envelope in use, and a peer's messages of thousands of empty parts then
 * hold about 1 MiB at the default HWM, not 1 GB. */
#define PARTS_PER_MSG 8

/* Slots of a chunk of ALIGNED_CHUNK_MSGS or more start on a line
 * (zl_cache_aligned_alloc), so a 128-byte message is two lines, and the slot
 * the writer fills next never shares a line with the one the reader is
 * taking. The smallest chunks, a new or quiet pipe's, are plain malloc: ten
 * thousand idle connections would pay the alignment's slack for nothing. */
#define ALIGNED_CHUNK_MSGS 8
typedef struct zl_chunk {
    struct zl_chunk *next;
    int cap; /* slots in msgs; fixed when the chunk is made */
    /* The first chunk of its size: when the writer leaves it, no spare is
     * no sign of a deep queue, as the reader had none of this size to park
     * (ensure_next_chunk). */
    bool first_of_size;
    _Alignas(ZL_CACHE_LINE) zlink_msg_t msgs[];
} zl_chunk;

static zl_chunk *chunk_new(int cap)
{
    size_t bytes = sizeof(zl_chunk) + (size_t)cap * sizeof(zlink_msg_t);
    zl_chunk *chunk = cap >= ALIGNED_CHUNK_MSGS ? zl_cache_aligned_alloc(bytes)
                                                : malloc(bytes);
    if (chunk != NULL) {
        chunk->next = NULL;
        chunk->cap = cap;
        chunk->first_of_size = false;
    }
    return chunk;
}

static void chunk_free(zl_chunk *chunk)
{
    if (chunk == NULL)
        return;
    if (chunk->cap >= ALIGNED_CHUNK_MSGS)
        zl_cache_aligned_free(chunk);
    else
        free(chunk);
}

/* The reader's sleep flag shares one word with the published count, as in
 * libzmq's ypipe: the reader sets it with a CAS that fails if anything was
 * published meanwhile, and the writer publishes with an exchange that
 * returns it. So every sleep is seen by exactly one flush: no lost wakeup,
 * no spurious one, and no fence needed for it. */
#define READER_ASLEEP 1u
#define PARTS_SHIFT 1

/* One direction. Positions are counted in message parts since creation, so
 * "how many are there" is always a subtraction. The delimiter is one part
 * but never a message. */
struct zl_msg_queue {
    /* Writer's thread only. */
    zl_chunk *write_chunk;
    int write_pos;         /* always a free slot, except after the delimiter */
    zl_chunk *start_chunk; /* first part of the unfinished message */
    int start_pos;
    uint64_t written_parts;  /* everything written, finished or not */
    uint64_t complete_parts; /* up to the end of the last whole message */
    uint64_t flushed_parts;  /* what the last flush published */
    uint64_t written_msgs;
    uint64_t read_msgs_seen; /* a lower bound of msgs_read */
    uint64_t hwm;            /* 0: no limit */
    uint64_t lwm;            /* where a writer at the HWM is woken */
    /* Refused at the HWM, the writer stays refused until the reader has
     * read this many (the queue is down to the lwm), as libzmq's writer,
     * which learns of reads only every lwm reads; 0: not refused. */
    uint64_t refused_until_read;
    /* The quick check's limit: the HWM (UINT64_MAX for none), or the pace
     * limit while large messages flow. */
    uint64_t check_limit;
    bool writes_in_bursts; /* zl_pipe_set_burst_writer */
    /* Pacing ("Pacing" below). */
    uint64_t pace_limit;     /* messages; 0 when not pacing */
    size_t pace_part_bytes;  /* the size of part pace_limit is for */
    uint64_t last_large_msg; /* the last message with a large part */
    bool pace_suspended;     /* a send gave up waiting: not pacing until */
    uint64_t pace_resume_at; /* the reader has read this many */
    /* Parts of whole messages the queue may hold (UINT64_MAX: not
     * weighed), and a lower bound of parts_read. */
    bool weighs_parts;
    uint64_t parts_limit;
    uint64_t parts_read_seen;

    /* Written by the writer, read by the reader. The gaps keep the fields
     * one thread writes off the lines the other writes; the structure comes
     * from malloc, whose alignment is less than a line, so each gap is a
     * whole line rather than an alignment. */
    char gap0[ZL_CACHE_LINE];
    atomic_uint_least64_t published;      /* parts << 1 | READER_ASLEEP */
    atomic_uint_least64_t published_msgs; /* whole messages among them */

    /* Reader's thread only, and what it writes for the writer. */
    char gap1[ZL_CACHE_LINE];
    zl_chunk *read_chunk;
    int read_pos;
    uint64_t read_parts;
    uint64_t read_limit; /* parts published when we last looked */
    uint64_t read_msgs;
    atomic_uint_least64_t msgs_read;
    atomic_uint_least64_t parts_read; /* of the msgs_read messages */

    /* Armed by the writer at the HWM, disarmed by whichever side wins the
     * exchange, so each arming produces at most one ACTIVATE_WRITE. It is
     * separate from msgs_read so that the reader's count stays a plain
     * store per message. */
    char gap2[ZL_CACHE_LINE];
    atomic_int writer_waiting;
    /* Set by the writer before it arms: the lwm at the HWM, lower when
     * paced. */
    atomic_uint_least64_t wake_below;

    /* The reader parks the chunk it leaves here and the writer takes it
     * back, so a pipe at steady state does not call malloc. */
    char gap3[ZL_CACHE_LINE];
    zl_atomic_ptr spare; /* a zl_chunk * */
    char gap4[ZL_CACHE_LINE];
};

struct zl_pipe_shared {
    atomic_int refs; /* two ends + one per queued command */
    /* Orders "is this end released" against "send a command to it". */
    uv_mutex_t lock;
    /* Each end is written by its own owner's thread. */
    struct zl_pipe a;
    char gap0[ZL_CACHE_LINE];
    struct zl_pipe b;
    char gap1[ZL_CACHE_LINE];
    /* The socket's direct writes into the session's connection; unused
     * between two sockets (inproc). */
    zl_direct_port port;
    char gap2[ZL_CACHE_LINE];
    struct zl_msg_queue a_to_b, b_to_a;
    char gap3[ZL_CACHE_LINE];
    /* The socket's own reads of the session's connection; unused between
     * two sockets too. Last, away from the queues' counters: the engine
     * writes it at each read. */
    zl_recv_port recv_port;
};

/* The quick check's limit when not pacing. */
static uint64_t hwm_limit(const struct zl_msg_queue *q)
{
    return q->hwm != 0 ? q->hwm : UINT64_MAX;
}

static int queue_init(struct zl_msg_queue *q, int hwm)
{
    memset(q, 0, sizeof *q);
    zl_chunk *chunk = chunk_new(FIRST_CHUNK_MSGS);
    if (chunk == NULL)
        return -1;
    q->write_chunk = chunk;
    q->start_chunk = chunk;
    q->read_chunk = chunk;
    q->hwm = (uint64_t)hwm;
    q->lwm = (q->hwm + 1) / 2;
    q->check_limit = hwm_limit(q);
    q->parts_limit = UINT64_MAX;
    atomic_init(&q->wake_below, q->lwm);
    atomic_init(&q->published, 0);
    atomic_init(&q->published_msgs, 0);
    atomic_init(&q->msgs_read, 0);
    atomic_init(&q->parts_read, 0);
    atomic_init(&q->writer_waiting, 0);
    atomic_init(&q->spare, NULL);
    return 0;
}

/* Closes every part still in the queue, published or not, and frees the
 * chunks. Both ends are gone, so there is no one to race with. */
static void queue_destroy(struct zl_msg_queue *q)
{
    zl_chunk *chunk = q->read_chunk;
    int pos = q->read_pos;
    for (uint64_t n = q->written_parts - q->read_parts; n > 0; n--) {
        if (pos == chunk->cap) {
            chunk = chunk->next;
            pos = 0;
        }
        zlink_msg_close(&chunk->msgs[pos++]);
    }
    /* The chain from the read chunk holds everything the writer linked,
     * including chunks left behind by a rollback. */
    chunk = q->read_chunk;
    while (chunk != NULL) {
        zl_chunk *next = chunk->next;
        chunk_free(chunk);
        chunk = next;
    }
    chunk_free(atomic_load_explicit(&q->spare, memory_order_acquire));
}

static void end_init(zl_pipe *p, struct zl_pipe_shared *shared, zl_pipe *peer,
                     struct zl_msg_queue *in, struct zl_msg_queue *out)
{
    memset(p, 0, sizeof *p);
    p->shared = shared;
    p->peer = peer;
    p->in = in;
    p->out = out;
    p->told_recv_hwm = ZL_PIPE_HWM_UNKNOWN;
    p->peer_recv_hwm = ZL_PIPE_HWM_UNKNOWN;
}

int zl_pipe_pair(zl_pipe **a, zl_pipe **b, int a_to_b_hwm, int b_to_a_hwm)
{
    if (a_to_b_hwm < 0 || b_to_a_hwm < 0) {
        errno = EINVAL;
        return -1;
    }
    struct zl_pipe_shared *s = malloc(sizeof *s);
    if (s == NULL)
        goto nomem;
    if (queue_init(&s->a_to_b, a_to_b_hwm) != 0)
        goto free_shared;
    if (queue_init(&s->b_to_a, b_to_a_hwm) != 0)
        goto free_a_to_b;
    if (uv_mutex_init(&s->lock) != 0)
        goto free_b_to_a;
    atomic_init(&s->refs, 2);
    zl_direct_port_init(&s->port);
    zl_recv_port_init(&s->recv_port);
    end_init(&s->a, s, &s->b, &s->b_to_a, &s->a_to_b);
    end_init(&s->b, s, &s->a, &s->a_to_b, &s->b_to_a);
    *a = &s->a;
    *b = &s->b;
    return 0;

free_b_to_a:
    queue_destroy(&s->b_to_a);
free_a_to_b:
    queue_destroy(&s->a_to_b);
free_shared:
    free(s);
nomem:
    errno = ENOMEM;
    return -1;
}

int zl_pipe_set_routing_id(zl_pipe *p, const uint8_t *id, size_t len)
{
    zl_pipe_id *copy = NULL;
    if (len > 0) {
        if (len > UINT8_MAX || !(copy = malloc(sizeof *copy + len))) {
            errno = len > UINT8_MAX ? EINVAL : ENOMEM;
            return -1;
        }
        copy->len = (uint8_t)len;
        memcpy(copy->data, id, len);
    }
    free(p->routing_id);
    p->routing_id = copy;
    return 0;
}

void zl_pipe_set_owner(zl_pipe *p, zl_mailbox *mailbox, void *owner)
{
    uv_mutex_lock(&p->shared->lock);
    p->mailbox = mailbox;
    p->owner = owner;
    uv_mutex_unlock(&p->shared->lock);
}

/* Sends a command for end `to` to its owner, unless that end is released:
 * the check and the send are one step under the lock, so once release has
 * returned no new command for the end can appear. */
static void send_cmd_arg(zl_pipe *to, zl_cmd_type type, intptr_t arg)
{
    struct zl_pipe_shared *s = to->shared;
    uv_mutex_lock(&s->lock);
    if (!to->released && to->mailbox != NULL) {
        zl_cmd cmd = {
            .type = type, .target = to->owner, .pipe = to, .arg = arg};
        zl_pipe_ref(to);
        zl_mailbox_send(to->mailbox, &cmd);
    }
    uv_mutex_unlock(&s->lock);
}

static void send_cmd(zl_pipe *to, zl_cmd_type type)
{
    send_cmd_arg(to, type, 0);
}

void zl_pipe_ref(zl_pipe *p)
{
    /* Relaxed: a new reference is always made from an existing one. */
    atomic_fetch_add_explicit(&p->shared->refs, 1, memory_order_relaxed);
}

void zl_pipe_unref(zl_pipe *p)
{
    struct zl_pipe_shared *s = p->shared;
    /* acq_rel: whoever frees must see every write both threads made. */
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    queue_destroy(&s->a_to_b);
    queue_destroy(&s->b_to_a);
    uv_mutex_destroy(&s->lock);
    free(s->a.routing_id);
    free(s->b.routing_id);
    free(s);
}

bool zl_pipe_cmd_live(const zl_pipe *p)
{
    /* Only the owner sets released, and only the owner asks. */
    return !p->released;
}

void zl_pipe_release(zl_pipe *p)
{
    uv_mutex_lock(&p->shared->lock);
    p->released = true;
    uv_mutex_unlock(&p->shared->lock);
    zl_pipe_unref(p);
}

/* ---- Writing ---------------------------------------------------------- */

/* A chunk for the writer to move into: one already linked, the
 * spare the reader parked, or a new one, twice the size when there was no
 * spare (see CHUNK_MSGS). A spare smaller than the chunk being left is
 * from before the queue last grew: the new one keeps the size. Out of
 * line: once per chunk, and inlined it made every write save more
 * registers. */
static ZL_NOINLINE bool ensure_next_chunk(struct zl_msg_queue *q)
{
    if (q->write_chunk->next != NULL)
        return true;
    /* acq_rel: the reader's last look at this chunk happens before our
     * writes into it. */
    zl_chunk *chunk =
        atomic_exchange_explicit(&q->spare, NULL, memory_order_acq_rel);
    int cap = q->write_chunk->cap;
    bool grow = cap < RECYCLED_CHUNK_MIN ||
                (chunk == NULL && !q->write_chunk->first_of_size);
    if (grow && cap < CHUNK_MSGS) {
        chunk_free(chunk);
        chunk = chunk_new(cap * 2);
        if (chunk != NULL)
            chunk->first_of_size = true;
    } else if (chunk == NULL || chunk->cap < cap) {
        chunk_free(chunk);
        chunk = chunk_new(cap);
    }
    if (chunk == NULL)
        return false;
    chunk->next = NULL;
    q->write_chunk->next = chunk;
    return true;
}

/* The writer takes back the ACTIVATE_WRITE it armed. If the reader won the
 * exchange, the command it sends is spurious, and costs only a look. */
static void take_back_writer_wake(struct zl_msg_queue *q)
{
    atomic_exchange_explicit(&q->writer_waiting, 0, memory_order_relaxed);
}

/* Arms one ACTIVATE_WRITE for when the reader has drained the queue to
 * wake_below messages, then looks once more at what it read. */
static void arm_and_look(zl_pipe *p, uint64_t wake_below)
{
    struct zl_msg_queue *q = p->out;
    /* The reader can only drain (and so wake us) what is published. */
    zl_pipe_flush(p);
    atomic_store_explicit(&q->wake_below, wake_below, memory_order_relaxed);
    /* Release: a reader that sees the flag sees wake_below. */
    atomic_store_explicit(&q->writer_waiting, 1, memory_order_release);
    /* Pairs with the reader's fence: either the reader sees our flag, or we
     * see the messages it read before looking. */
    atomic_thread_fence(memory_order_seq_cst);
    q->read_msgs_seen =
        atomic_load_explicit(&q->msgs_read, memory_order_relaxed);
    q->parts_read_seen =
        atomic_load_explicit(&q->parts_read, memory_order_relaxed);
}

/* The queue holds limit messages or more: arms the wake, then looks once
 * more. True when the queue turned out to be under limit after all. */
static bool arm_writer_wake(zl_pipe *p, uint64_t limit, uint64_t wake_below)
{
    struct zl_msg_queue *q = p->out;
    arm_and_look(p, wake_below);
    if (q->written_msgs - q->read_msgs_seen < limit) {
        take_back_writer_wake(q);
        return true;
    }
    return false;
}

static ZL_NOINLINE zl_pipe_room check_room(zl_pipe *p, bool may_pace);

/* Under the quick check's limit by our last look at the reader's count:
 * no shared memory touched. may_pace: the caller waits when refused
 * (zl_pipe_check_send). */
static inline zl_pipe_room check_room_quick(zl_pipe *p, bool may_pace)
{
    struct zl_msg_queue *q = p->out;
    if (p->terminated)
        return ZL_PIPE_FULL;
    if (q->written_msgs - q->read_msgs_seen < q->check_limit)
        return ZL_PIPE_ROOM;
    return check_room(p, may_pace);
}

static bool parts_room(const struct zl_msg_queue *q)
{
    return q->complete_parts - q->parts_read_seen < q->parts_limit;
}

/* The queue holds its HWM's worth of parts: look at what the reader took,
 * and if that is not enough, arm ACTIVATE_WRITE for when it has taken half
 * the messages (or all of one that holds them all). */
static ZL_NOINLINE bool check_parts_room(zl_pipe *p)
{
    struct zl_msg_queue *q = p->out;
    q->parts_read_seen =
        atomic_load_explicit(&q->parts_read, memory_order_relaxed);
    if (parts_room(q))
        return true;
    arm_and_look(p, (q->written_msgs - q->read_msgs_seen) / 2);
    if (parts_room(q)) {
        take_back_writer_wake(q);
        return true;
    }
    return false;
}

static inline bool check_write(zl_pipe *p)
{
    return check_room_quick(p, false) == ZL_PIPE_ROOM &&
           (parts_room(p->out) || check_parts_room(p));
}

static inline zl_pipe_room check_send(zl_pipe *p)
{
    return check_room_quick(p, true);
}

/* An I/O thread pushes a whole read's messages back to back, so its slot
 * writes wait on lines the reader last held, one after another; asking
 * for a long inline message's second line too, as for its first, keeps
 * them coming. For an application's writer the same change lost in some
 * cells and gained in others, for reasons not found; it is left out there
 * (bench/NOTES.md, "Pipe prefetch"). */
void zl_pipe_set_burst_writer(zl_pipe *p)
{
    p->out->writes_in_bursts = true;
}

static void set_parts_limit(struct zl_msg_queue *q)
{
    q->parts_limit =
        q->weighs_parts && q->hwm != 0 && q->hwm <= UINT64_MAX / PARTS_PER_MSG
            ? q->hwm * PARTS_PER_MSG
            : UINT64_MAX;
}

void zl_pipe_weigh_parts(zl_pipe *p)
{
    p->out->weighs_parts = true;
    set_parts_limit(p->out);
}

bool zl_pipe_check_write(zl_pipe *p)
{
    return check_write(p);
}

/* ---- Pacing ------------------------------------------------------------ */

/* A sender of large messages that is faster than its reader fills the queue
 * to the HWM: 1000 messages of 256 KiB are 256 MB, which no cache holds.
 * Each body is then filled, left to go cold, and read back from memory by
 * the kernel's copy a thousand messages later, and the queue's growth
 * faults fresh pages in. Such a sender is held back instead at about
 * PACE_BUDGET_BYTES, with the ACTIVATE_WRITE handshake of the HWM (woken at
 * half of it), so that a body is sent while the cache still has it and
 * goes back to the pool to be filled again. The bench with the sender's
 * HWM itself lowered to 32 showed what that is worth, and lowering the
 * receiver's gained nothing. Budgets of 4 to 16 MiB did alike; 1 MiB, which
 * wakes the writer with 2 bodies left, starved the I/O thread
 * (bench/NOTES.md, "Pacing").
 *
 * It changes no semantics:
 * - Only a pattern that waits at the HWM asks for pacing
 *   (zl_pipe_check_send: PAIR, DEALER, a ROUTER with ROUTER_MANDATORY);
 *   those that drop there (PUB, a ROUTER without it) check the HWM only.
 * - A refused send fails with ZL_EPACED, which the socket never returns: a
 *   send that does not wait (ZLINK_DONTWAIT, a zero timeout) is retried at
 *   once with pacing off (zl_pipe_set_pacing), and one that waits does so
 *   for at most ZL_PIPE_PACE_WAIT_MS. A reader that did not drain the queue
 *   in that time may be stalled, or be the sending thread itself, so the
 *   send then goes ahead up to the HWM, and this queue paces no more until
 *   its reader has read another limit's worth.
 *
 * What it costs a send of small messages is the quick check's limit,
 * which is the HWM's, and the size test of a body written. */

static ZL_THREAD_LOCAL zl_pipe_pacing pacing ZL_FAST_TLS; /* 0: ON */

void zl_pipe_set_pacing(zl_pipe_pacing mode)
{
    pacing = mode;
}

/* A part of PACE_MIN_PART bytes or more was written: the queue paces from
 * a budget's worth of such messages, unless that is no fewer than the HWM.
 * The limit is worked out again only when the size changes. */
static void note_large_part(struct zl_msg_queue *q, size_t bytes)
{
    q->last_large_msg = q->written_msgs;
    if (bytes == q->pace_part_bytes)
        return;
    q->pace_part_bytes = bytes;
    uint64_t limit = PACE_BUDGET_BYTES / bytes;
    if (limit < PACE_MIN_MSGS)
        limit = PACE_MIN_MSGS;
    q->pace_limit = q->hwm != 0 && limit >= q->hwm ? 0 : limit;
    q->check_limit = q->pace_limit != 0 ? q->pace_limit : hwm_limit(q);
}

static void stop_pacing(struct zl_msg_queue *q)
{
    q->pace_limit = 0;
    q->pace_part_bytes = 0;
    q->check_limit = hwm_limit(q);
}

bool zl_pipe_set_send_hwm(zl_pipe *p, int hwm)
{
    struct zl_msg_queue *q = p->out;
    if (hwm < 0 || q->hwm == (uint64_t)hwm)
        return false;
    bool rose = hwm == 0 || (q->hwm != 0 && (uint64_t)hwm > q->hwm);
    q->hwm = (uint64_t)hwm;
    q->lwm = (q->hwm + 1) / 2;
    q->refused_until_read = 0; /* the new HWM decides */
    set_parts_limit(q);
    /* The pace limit was worked out against the old HWM: the next large
     * part works it out again. */
    stop_pacing(q);
    return rose;
}

void zl_pipe_tell_recv_hwm(zl_pipe *p, int hwm)
{
    p->told_recv_hwm = hwm;
    if (p->terminated)
        return;
    /* An end with no owner yet (an inproc connect waiting for its bind)
     * has no one to take a command: it learns the value as it is handed
     * over, which zl_pipe_set_owner's lock orders after this. */
    struct zl_pipe_shared *s = p->shared;
    uv_mutex_lock(&s->lock);
    bool unowned = p->peer->mailbox == NULL && !p->peer->released;
    if (unowned)
        p->peer->peer_recv_hwm = hwm;
    uv_mutex_unlock(&s->lock);
    if (!unowned)
        send_cmd_arg(p->peer, ZL_CMD_PEER_HWM, hwm);
}

/* The queue holds pace_limit messages or more, under the HWM. */
static zl_pipe_room pace(zl_pipe *p)
{
    struct zl_msg_queue *q = p->out;
    if (pacing != ZL_PIPE_PACE_ON) {
        /* The retry of a send this queue refused: the wake that refusal
         * armed has no one to wait for it, and would only cost the reader
         * a command and this thread a wakeup. */
        if (atomic_load_explicit(&q->writer_waiting, memory_order_relaxed))
            take_back_writer_wake(q);
        if (pacing == ZL_PIPE_PACE_GAVE_UP) {
            q->pace_suspended = true;
            q->pace_resume_at = q->read_msgs_seen + q->pace_limit;
        }
        return ZL_PIPE_ROOM;
    }
    if (q->pace_suspended) {
        if (q->read_msgs_seen < q->pace_resume_at)
            return ZL_PIPE_ROOM;
        q->pace_suspended = false;
    }
    if (arm_writer_wake(p, q->pace_limit, q->pace_limit / 2))
        return ZL_PIPE_ROOM;
    return ZL_PIPE_PACED;
}

/* Nothing more goes in until the reader has drained the queue down to the
 * lwm, when the ACTIVATE_WRITE armed for it comes. So a sender that retries
 * at once, or polls for POLLOUT, gets in a batch once the reader has taken
 * one, as libzmq's does (its test_proxy_hwm counts on it), not one message
 * per message read. The quick check's limit drops to just over the lwm
 * meanwhile, so only check_room lets the sender in again. */
static void refuse_until_lwm(struct zl_msg_queue *q)
{
    q->refused_until_read = q->written_msgs - q->lwm;
    if (q->check_limit > q->lwm + 1)
        q->check_limit = q->lwm + 1;
}

/* The quick check failed: look at what the reader took. At the HWM, arm
 * ACTIVATE_WRITE and refuse until the lwm; under it, pace when the caller
 * may. */
static ZL_NOINLINE zl_pipe_room check_room(zl_pipe *p, bool may_pace)
{
    struct zl_msg_queue *q = p->out;
    q->read_msgs_seen =
        atomic_load_explicit(&q->msgs_read, memory_order_relaxed);
    uint64_t queued = q->written_msgs - q->read_msgs_seen;
    if (q->read_msgs_seen < q->refused_until_read)
        return arm_writer_wake(p, q->lwm + 1, q->lwm) ? ZL_PIPE_ROOM
                                                      : ZL_PIPE_FULL;
    if (q->refused_until_read != 0) {
        /* Down to the lwm since the refusal: the HWM's limit again. */
        q->refused_until_read = 0;
        q->check_limit = q->pace_limit != 0 ? q->pace_limit : hwm_limit(q);
    }
    /* The last message was a small one: large ones no longer flow. */
    if (q->pace_limit != 0 && q->written_msgs - q->last_large_msg > 1)
        stop_pacing(q);
    if (q->hwm != 0 && queued >= q->hwm) {
        if (arm_writer_wake(p, q->hwm, q->lwm))
            return ZL_PIPE_ROOM;
        refuse_until_lwm(q);
        return ZL_PIPE_FULL;
    }
    if (!may_pace || q->pace_limit == 0 || queued < q->pace_limit)
        return ZL_PIPE_ROOM;
    return pace(p);
}

zl_pipe_room zl_pipe_check_send(zl_pipe *p)
{
    return check_send(p);
}

static inline bool write_part(zl_pipe *p, zlink_msg_t *msg)
{
    struct zl_msg_queue *q = p->out;
    if (p->terminated) {
        errno = EAGAIN;
        return false;
    }
    /* Linking the next chunk before filling the last slot keeps write_pos
     * on a free slot, so the delimiter never needs memory. */
    if (q->write_pos == q->write_chunk->cap - 1 && !ensure_next_chunk(q)) {
        errno = ENOMEM;
        return false;
    }
    if (!p->in_message) {
        q->start_chunk = q->write_chunk;
        q->start_pos = q->write_pos;
    }
    zlink_msg_t *slot = &q->write_chunk->msgs[q->write_pos];
    /* A short copy leaves the slot's second line alone, which the reader
     * may still hold (bench/NOTES.md, "Comment figures"). */
    zl_msg_copy_used(slot, msg);
    zl_msg_init_empty(msg);
    if (++q->write_pos == q->write_chunk->cap) {
        q->write_chunk = q->write_chunk->next;
        q->write_pos = 0;
    }
    if (q->write_pos + PREFETCH_SLOTS_AHEAD < q->write_chunk->cap) {
        char *ahead =
            (char *)&q->write_chunk->msgs[q->write_pos + PREFETCH_SLOTS_AHEAD];
        zl_prefetch_for_write(ahead);
        if (q->writes_in_bursts && !zl_msg_fits_short_copy(slot))
            zl_prefetch_for_write(ahead + ZL_CACHE_LINE);
    }
    q->written_parts++;
    const zl_msg *written = zl_msg_cof(slot);
    if (written->kind == ZL_MSG_CONTENT && written->u.ref.size >= PACE_MIN_PART)
        note_large_part(q, written->u.ref.size);
    p->in_message = (written->flags & ZL_MSG_MORE) != 0;
    if (!p->in_message) {
        q->complete_parts = q->written_parts;
        q->written_msgs++;
    }
    return true;
}

bool zl_pipe_write(zl_pipe *p, zlink_msg_t *msg)
{
    return write_part(p, msg);
}

static inline void publish(zl_pipe *p)
{
    struct zl_msg_queue *q = p->out;
    if (q->complete_parts == q->flushed_parts)
        return;
    q->flushed_parts = q->complete_parts;
    atomic_store_explicit(&q->published_msgs, q->written_msgs,
                          memory_order_relaxed);
    /* Release: the parts before the count. The exchange also clears the
     * reader's sleep flag, so only this flush wakes it. */
    uint64_t old = atomic_exchange_explicit(
        &q->published, q->complete_parts << PARTS_SHIFT, memory_order_release);
    if (old & READER_ASLEEP) {
        if (p->peer_is_session)
            zl_direct_port_published(&p->shared->port);
        send_cmd(p->peer, ZL_CMD_ACTIVATE_READ);
    }
}

void zl_pipe_flush(zl_pipe *p)
{
    publish(p);
}

/* Drops the message just completed, not yet published, which a direct
 * write put on the wire whole. */
static void unwrite_message(zl_pipe *p, uint64_t parts)
{
    struct zl_msg_queue *q = p->out;
    q->complete_parts -= parts;
    q->written_msgs--;
    zl_pipe_rollback(p);
}

/* Writes the message just completed to the session's connection from this
 * thread, when that is cheaper than waking the I/O thread for it
 * (direct_send.h). True when the message was handled: written whole and
 * dropped, or cut short and published for the engine to finish. False:
 * publish it as usual. */
static bool send_direct(zl_pipe *p)
{
    zl_direct_port *port = &p->shared->port;
    if (!zl_direct_may_send(port))
        return false;
    struct zl_msg_queue *q = p->out;
    uint64_t parts = q->complete_parts - q->flushed_parts;
    if (parts > ZL_DIRECT_PARTS_MAX)
        return false;
    uint8_t headers[ZL_DIRECT_PARTS_MAX][ZL_FRAME_HEADER_MAX];
    zl_iovec iov[2 * ZL_DIRECT_PARTS_MAX];
    int n = 0;
    size_t bodies = 0, total = 0;
    zl_chunk *chunk = q->start_chunk;
    int pos = q->start_pos;
    uint64_t i = 0;
    for (; chunk != q->write_chunk || pos != q->write_pos; i++) {
        /* Only the message just completed may be unpublished: anything
         * before it goes first, through the engine. */
        if (i == parts)
            return false;
        zlink_msg_t *part = &chunk->msgs[pos];
        size_t size = zlink_msg_size(part);
        bodies += size;
        if (!zl_direct_part_fits(part) || bodies >= ZL_DIRECT_BODY_MAX)
            return false;
        iov[n].base = headers[i];
        iov[n].len = zl_frame_header_encode(
            headers[i], zl_frame_flags_of_msg(zl_msg_flags(part)), size);
        total += iov[n++].len + size;
        if (size > 0)
            iov[n++] = (zl_iovec){zlink_msg_data(part), size};
        if (++pos == chunk->cap) {
            chunk = chunk->next;
            pos = 0;
        }
    }
    if (i != parts)
        return false;
    switch (zl_direct_write(port, iov, n, total)) {
    case ZL_DIRECT_SENT:
        unwrite_message(p, parts);
        return true;
    case ZL_DIRECT_SENT_WAKE:
        unwrite_message(p, parts);
        send_cmd(p->peer, ZL_CMD_ACTIVATE_READ);
        return true;
    case ZL_DIRECT_PARTIAL:
        publish(p);
        if (zl_direct_port_release(port))
            send_cmd(p->peer, ZL_CMD_ACTIVATE_READ);
        return true;
    default:
        return false;
    }
}

/* One call for what a sending pattern does per part: fewer calls, and the
 * queue loaded once, on the path of every message. */
bool zl_pipe_send(zl_pipe *p, zlink_msg_t *msg, bool first_part)
{
    if (first_part) {
        zl_pipe_room room = check_send(p);
        if (room != ZL_PIPE_ROOM) {
            errno = zl_pipe_refusal_errno(room);
            return false;
        }
    }
    if (!write_part(p, msg))
        return false;
    if (!p->in_message && !(p->peer_is_session && send_direct(p)))
        publish(p);
    return true;
}

zl_recv_port *zl_pipe_recv_port(zl_pipe *p)
{
    return &p->shared->recv_port;
}

void zl_pipe_wake_writer(zl_pipe *p)
{
    send_cmd(p->peer, ZL_CMD_ACTIVATE_WRITE);
}

void zl_pipe_wake_reader(zl_pipe *p)
{
    send_cmd(p->peer, ZL_CMD_RECV_PORT_OPEN);
}

zl_direct_port *zl_pipe_direct_port(zl_pipe *p)
{
    return &p->shared->port;
}

void zl_pipe_rollback(zl_pipe *p)
{
    struct zl_msg_queue *q = p->out;
    p->in_message = false;
    if (q->written_parts == q->complete_parts)
        return;
    zl_chunk *chunk = q->start_chunk;
    int pos = q->start_pos;
    for (uint64_t n = q->written_parts - q->complete_parts; n > 0; n--) {
        zlink_msg_close(&chunk->msgs[pos]);
        if (++pos == chunk->cap) {
            chunk = chunk->next;
            pos = 0;
        }
    }
    /* The chunks the dropped parts took past the start go now: a peer
     * that sends thousands of parts and is cut off must not leave that
     * room behind in a pipe that waits for its socket's application. The
     * reader never follows start_chunk->next before the next publish. */
    zl_chunk *extra = q->start_chunk->next;
    q->start_chunk->next = NULL;
    while (extra != NULL) {
        zl_chunk *next = extra->next;
        chunk_free(extra);
        extra = next;
    }
    q->write_chunk = q->start_chunk;
    q->write_pos = q->start_pos;
    q->written_parts = q->complete_parts;
}

/* ---- Reading ---------------------------------------------------------- */

/* Sends the writer its credit when it waits and we are at the low-water
 * mark. A stale count only makes the wakeup early, which is allowed. */
static void maybe_activate_writer(zl_pipe *p)
{
    struct zl_msg_queue *q = p->in;
    /* We saw the writer's flag: with this, its wake_below too. */
    atomic_thread_fence(memory_order_acquire);
    uint64_t queued =
        atomic_load_explicit(&q->published_msgs, memory_order_relaxed) -
        q->read_msgs;
    if (queued > atomic_load_explicit(&q->wake_below, memory_order_relaxed))
        return;
    if (atomic_exchange_explicit(&q->writer_waiting, 0, memory_order_relaxed))
        send_cmd(p->peer, ZL_CMD_ACTIVATE_WRITE);
}

/* One thread-local object, not two: a library reaches each of its
 * thread-locals through an address it loads first, and a spinning receive
 * touches both flags around every try. */
static ZL_THREAD_LOCAL struct {
    bool kept;     /* zl_pipe_keep_reader_awake */
    bool any_left; /* an end was left awake since kept was set */
    /* The queue whose look, this thread's last, found parts (refill). */
    const struct zl_msg_queue *following;
} reader_awake ZL_FAST_TLS;

void zl_pipe_keep_reader_awake(bool awake)
{
    reader_awake.kept = awake;
    if (awake)
        reader_awake.any_left = false;
}

/* A reader that takes each message as soon as it is published follows
 * its writer a few slots behind, and each look at the published count
 * takes that count's line from the writer, whose next publish (an
 * exchange, which also waits for the slot's lines) then waits to take it
 * back. A reader as fast as its writer came to the end of what it had
 * found every few messages and looked again at once: a shorter receive
 * path ran slower, taking a few new parts a look instead of dozens. Waiting a
 * moment without looking lets the writer publish a batch, which the reader then
 * takes with one look, from lines the writer is done with.
 *
 * The price: a message that ends a pause in a stream waits a little
 * longer. A ping-pong never waits here: its reader found the pipe empty
 * before each message (bench/NOTES.md, "Batch wait").
 *
 * Only when this thread's last look was at the same queue: a reader that
 * goes round several pipes (a ROUTER's fair queue) finds each of them with
 * a batch already, and waiting at each cost the senders the CPU they share
 * with it.
 *
 * Only between application threads: an I/O thread publishes a whole read
 * at once, and one that reads is driven by its poller. */
static bool waits_for_batches(const zl_pipe *p)
{
    return !p->peer_is_session && !p->out->writes_in_bursts;
}

static uint64_t wait_for_batch(struct zl_msg_queue *q)
{
    zl_wait_pause(ZL_WAIT_BATCH_NS);
    return atomic_load_explicit(&q->published, memory_order_acquire);
}

/* Loads what the writer published. Finding nothing puts this end to sleep,
 * but only if the count is still the one we saw: the CAS fails when a flush
 * came in between, and we go on with its parts instead. */
static bool refill(zl_pipe *p)
{
    struct zl_msg_queue *q = p->in;
    uint64_t seen = atomic_load_explicit(&q->published, memory_order_acquire);
    for (;;) {
        if (seen >> PARTS_SHIFT != q->read_parts) {
            if (reader_awake.following == q &&
                (seen >> PARTS_SHIFT) - q->read_parts < BATCH_PARTS &&
                waits_for_batches(p))
                seen = wait_for_batch(q);
            reader_awake.following = q;
            q->read_limit = seen >> PARTS_SHIFT;
            return true;
        }
        reader_awake.following = NULL;
        if (reader_awake.kept) {
            p->left_awake = true;
            reader_awake.any_left = true;
            return false;
        }
        if (seen & READER_ASLEEP)
            break; /* still asleep from an earlier look */
        if (atomic_compare_exchange_weak_explicit(
                &q->published, &seen, seen | READER_ASLEEP,
                memory_order_acquire, memory_order_acquire))
            break;
    }
    /* The per-message check in zl_pipe_read reads the writer's flag without
     * a fence and may miss it; after this fence it cannot: either we see the
     * flag, or the writer saw every message we read. An empty queue is
     * surely at the low-water mark. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&q->writer_waiting, memory_order_relaxed))
        maybe_activate_writer(p);
    return false;
}

/* Hands the reader's old chunk to the writer as its spare: that the spare
 * is there when the writer needs a chunk is how it knows the queue is
 * shallow (ensure_next_chunk). */
static void recycle_chunk(struct zl_msg_queue *q, zl_chunk *chunk)
{
    if (chunk->cap < RECYCLED_CHUNK_MIN) {
        chunk_free(chunk);
        return;
    }
    zl_chunk *old =
        atomic_exchange_explicit(&q->spare, chunk, memory_order_acq_rel);
    chunk_free(old);
}

/* While the writer has published READ_AHEAD_SLOTS or more messages past
 * the one just taken, asks for the body header of the message that many
 * slots on, for writing: its release, after the application has read it,
 * is an atomic decrement there, and the header was last written on
 * another core (by the sender that filled the body, or the I/O thread that
 * copied a decoded one in). The slot twice as far is asked for too, so
 * that this look at it, next time, does not wait (bench/NOTES.md, "Pipe
 * prefetch"). */
static void prefetch_ahead(const struct zl_msg_queue *q)
{
    if (q->read_parts + READ_AHEAD_SLOTS >= q->read_limit ||
        q->read_pos + READ_AHEAD_SLOTS >= q->read_chunk->cap)
        return;
    if (q->read_pos + 2 * READ_AHEAD_SLOTS < q->read_chunk->cap)
        zl_prefetch_for_read(
            &q->read_chunk->msgs[q->read_pos + 2 * READ_AHEAD_SLOTS]);
    const zl_msg *later =
        zl_msg_cof(&q->read_chunk->msgs[q->read_pos + READ_AHEAD_SLOTS]);
    if (later->kind == ZL_MSG_CONTENT)
        zl_prefetch_for_write(later->u.ref.content);
}

/* Inlined where link-time optimisation sees its callers, a fair queue's
 * read of every message among them (callgrind, inproc PAIR 64 B: 15
 * instructions a message). */
ZL_ALWAYS_INLINE zl_pipe_read_result zl_pipe_read(zl_pipe *p, zlink_msg_t *msg)
{
    struct zl_msg_queue *q = p->in;
    if (p->closed)
        return ZL_PIPE_CLOSED;
    if (q->read_parts == q->read_limit && !refill(p))
        return ZL_PIPE_EMPTY;

    if (q->read_pos == q->read_chunk->cap) {
        zl_chunk *next = q->read_chunk->next;
        recycle_chunk(q, q->read_chunk);
        q->read_chunk = next;
        q->read_pos = 0;
    }
    zl_msg_copy_used(msg, &q->read_chunk->msgs[q->read_pos++]);
    q->read_parts++;

    const zl_msg *m = zl_msg_cof(msg);
    /* Only a stream of bodies gains: inline messages skip the looks
     * (callgrind, inproc PAIR 64 B: 594 -> 579 instructions a message). */
    if (m->kind == ZL_MSG_CONTENT)
        prefetch_ahead(q);
    if (m->kind == ZL_MSG_DELIMITER) {
        p->closed = true;
        return ZL_PIPE_CLOSED;
    }
    if (!(m->flags & ZL_MSG_MORE)) {
        q->read_msgs++;
        /* Relaxed store and load: a plain move each on x86. Missing the
         * writer's flag here is repaired by the fenced check in refill()
         * before this end sleeps. */
        atomic_store_explicit(&q->msgs_read, q->read_msgs,
                              memory_order_relaxed);
        atomic_store_explicit(&q->parts_read, q->read_parts,
                              memory_order_relaxed);
        if (atomic_load_explicit(&q->writer_waiting, memory_order_relaxed))
            maybe_activate_writer(p);
    }
    return ZL_PIPE_MSG;
}

bool zl_pipe_any_left_awake(void)
{
    return reader_awake.any_left;
}

bool zl_pipe_has_published(zl_pipe *p)
{
    struct zl_msg_queue *q = p->in;
    uint64_t seen = atomic_load_explicit(&q->published, memory_order_acquire);
    return p->closed || q->read_parts != q->read_limit ||
           seen >> PARTS_SHIFT != q->read_parts;
}

bool zl_pipe_check_read(zl_pipe *p)
{
    struct zl_msg_queue *q = p->in;
    if (p->closed)
        return true;
    return q->read_parts != q->read_limit || refill(p);
}

uint64_t zl_pipe_readable_count(zl_pipe *p)
{
    struct zl_msg_queue *q = p->in;
    return atomic_load_explicit(&q->published_msgs, memory_order_relaxed) -
           q->read_msgs;
}

int zl_pipe_write_chunk_slots(const zl_pipe *p)
{
    return p->out->write_chunk->cap;
}

/* ---- Termination ------------------------------------------------------ */

static void terminate(zl_pipe *p, intptr_t how)
{
    struct zl_msg_queue *q = p->out;
    if (p->terminated)
        return;
    zl_pipe_rollback(p);
    /* write_pos is a free slot (see zl_pipe_write); the delimiter is the last
     * part ever written, so it may leave write_pos at the chunk's end. */
    zl_msg_init_delimiter(&q->write_chunk->msgs[q->write_pos++]);
    q->written_parts++;
    q->complete_parts = q->written_parts;
    p->terminated = true;
    zl_pipe_flush(p);
    send_cmd_arg(p->peer, ZL_CMD_PIPE_TERM, how);
}

void zl_pipe_terminate(zl_pipe *p)
{
    terminate(p, 0);
}

void zl_pipe_give_up(zl_pipe *p)
{
    terminate(p, ZL_PIPE_TERM_KEEP_CONNECTION);
}

void zl_pipe_refuse(zl_pipe *p)
{
    terminate(p, ZL_PIPE_TERM_REFUSED);
}

void zl_pipe_hiccup(zl_pipe *p)
{
    if (!p->terminated)
        send_cmd(p->peer, ZL_CMD_HICCUP);
}
