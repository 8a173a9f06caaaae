/* msg_pool.c — message body pools. Each thread keeps a small free list per
 * size class and one spare chain of a batch of blocks; whole chains move
 * to and from a global stack of chains, in constant time under a mutex
 * taken once per batch. Blocks flow naturally from the thread that frees
 * them (an I/O thread after encoding) back to the thread that allocates
 * (the application's sender).
 *
 * Blocks are carved from slabs that are never returned to the OS; every slab
 * stays listed in a global table, so a block cached by a thread that exited
 * is still reachable, not leaked.
 *
 * Classes of 64 KiB and up that have grown past HUGE_AFTER carry bulk
 * traffic: their further slabs are 2 MiB ones the OS may back with huge
 * pages (zl_os_slab_alloc). A 256 KiB body then spans one TLB entry instead
 * of 64, which makes the application's fill of the body and the kernel's
 * copies of it much cheaper (bench/NOTES.md, "Comment figures"). Smaller
 * classes keep malloc'd slabs: a fresh huge page is zeroed whole before it is
 * written, which doubled the memory traffic of a queue that only grows, and a
 * quiet program keeps its small footprint. Under AddressSanitizer the pool
 * steps aside, so that use-after-free in message handling stays detectable. */
#include "msg_pool.h"

#include <stdbool.h>
#include <stdlib.h>
#include <uv.h>

#include "backend.h"
#include "cache_line.h"
#include "compiler.h"
#include "fast_tls.h"

#if defined(__SANITIZE_ADDRESS__)
#define ZL_POOL_DISABLED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ZL_POOL_DISABLED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define ZL_POOL_DISABLED 1
#endif

#if defined(ZL_POOL_DISABLED)
#define ZL_POOL_UNUSED ZL_MAYBE_UNUSED
#else
#define ZL_POOL_UNUSED
#endif

#define CLASS_COUNT 14 /* 64 B … 512 KiB, each plus HEADROOM */
#define SMALLEST_SHIFT 6
/* Bodies come in powers of two (1 KiB, 64 KiB, …) and carry a 48-byte
 * header (msg.h): a class of 2^k + 64 bytes holds a 2^k body, where a plain
 * 2^k class took the next one up and wasted half of every block (and, with
 * a deep queue, half the page faults). A multiple of 64 keeps blocks on
 * cache lines. */
#define HEADROOM 64
/* A thread keeps up to 256 blocks or 1 MiB per class, whichever is fewer,
 * and moves half of that, one chain, to or from the global stack at once. Large
 * bodies are pooled too: glibc returns freed large blocks to the OS and faults
 * them back in, which cost more than the copy itself at 64 KiB. */
#define LOCAL_BYTES (1024 * 1024)
#define LOCAL_MAX_BLOCKS 256
#define SLAB_MIN (256 * 1024)
#define SLAB_BLOCKS_MIN 8
#define HUGE_AFTER (4 * 1024 * 1024)
#define HUGE_CLASS_MIN (64 * 1024)

/* How many blocks ahead of the one handed out a thread asks for the line
 * it will write (zl_pool_alloc). */
#define PREFETCH_AHEAD 4

/* Blocks of this class and below (bodies up to 1 KiB) are asked for
 * whole, PREFETCH_AHEAD allocations early (prefetch_block). */
#define PREFETCH_WHOLE_MAX_CLASS 4

/* A free block. The first block of a chain also says how long the chain
 * is and, on the global stack, which chain comes next: moving a chain then
 * touches its first block only. Walking a batch under the lock, a cache
 * miss per block (another thread freed it), held the lock long enough for
 * the other threads to queue on it (futex calls showed in profiles).
 *
 * Each block links not only to the next one but to the PREFETCH_AHEAD
 * after it. Blocks usually come from another thread, so every link read is
 * a miss between cores, and a chain of single links allows one at a time:
 * asking for the next block's line at each allocation came one allocation
 * too late, and the read of the link dominated zl_pool_alloc. With the later
 * links the line is asked for four allocations early. The thread that frees a
 * block has the head's line already, so the links cost it a few stores. All fit
 * in the first line; the smallest block is 128 bytes. */
typedef struct free_block {
    /* later[0] is the next block of the chain, later[k] the k-th after it;
     * NULL past the chain's end. */
    struct free_block *later[PREFETCH_AHEAD];
    struct free_block *next_chain; /* first block of a chain only */
    size_t chain_length;           /* first block of a chain only */
} free_block;
_Static_assert(sizeof(free_block) <= ZL_CACHE_LINE,
               "a free block's links fit in its first line");

/* Puts b in front of the chain that starts at head (or NULL). */
static void link_in_front(free_block *b, free_block *head)
{
    b->later[0] = head;
    for (int k = 1; k < PREFETCH_AHEAD; k++)
        b->later[k] = head ? head->later[k - 1] : NULL;
}

typedef struct local_cache {
    free_block *head[CLASS_COUNT]; /* handed out first, freed onto */
    int count[CLASS_COUNT];        /* blocks from head on */
    /* NULL, or a chain of batch_of(c) blocks: head's blocks once it grew
     * to a batch. It goes to the global stack when the next batch comes,
     * and back to head when head runs out. */
    free_block *spare[CLASS_COUNT];
} local_cache;

typedef struct global_class {
    uv_mutex_t lock;
    free_block *chains; /* a stack of chains */
    size_t slab_bytes;  /* carved so far */
} global_class;

static ZL_THREAD_LOCAL local_cache cache ZL_FAST_TLS;
static global_class globals[CLASS_COUNT];
static uv_once_t init_once = UV_ONCE_INIT;
static uv_mutex_t slab_lock;
static void **slabs; /* keeps every slab reachable */
static size_t slab_count, slab_capacity;

static void init_globals(void)
{
    for (int i = 0; i < CLASS_COUNT; i++)
        uv_mutex_init(&globals[i].lock);
    uv_mutex_init(&slab_lock);
}

/* The smallest class that holds size bytes, or -1. Runs for every message:
 * a bit scan rather than a walk over the classes. */
ZL_POOL_UNUSED static int class_of(size_t size)
{
    size_t smallest = (size_t)1 << SMALLEST_SHIFT;
    if (size <= smallest + HEADROOM)
        return 0;
    size_t over = size - HEADROOM - 1; /* the class needs 2^k > over */
    int bits = zl_bits_needed(over);
    int c = bits - SMALLEST_SHIFT;
    return c < CLASS_COUNT ? c : -1;
}

static size_t class_size(int c)
{
    return ((size_t)1 << (SMALLEST_SHIFT + c)) + HEADROOM;
}

/* Per class, as constants: a division per free showed in the profile. */
#define BLOCK_OF(c) ((((size_t)1) << (SMALLEST_SHIFT + (c))) + HEADROOM)
#define LOCAL_MAX_OF(c)                                                        \
    (LOCAL_BYTES / BLOCK_OF(c) < 4 ? 4                                         \
     : LOCAL_BYTES / BLOCK_OF(c) > LOCAL_MAX_BLOCKS                            \
         ? LOCAL_MAX_BLOCKS                                                    \
         : (int)(LOCAL_BYTES / BLOCK_OF(c)))
static const int local_limits[CLASS_COUNT] = {
    LOCAL_MAX_OF(0),  LOCAL_MAX_OF(1), LOCAL_MAX_OF(2),  LOCAL_MAX_OF(3),
    LOCAL_MAX_OF(4),  LOCAL_MAX_OF(5), LOCAL_MAX_OF(6),  LOCAL_MAX_OF(7),
    LOCAL_MAX_OF(8),  LOCAL_MAX_OF(9), LOCAL_MAX_OF(10), LOCAL_MAX_OF(11),
    LOCAL_MAX_OF(12), LOCAL_MAX_OF(13)};
_Static_assert(CLASS_COUNT == 14, "local_limits lists every class");

static int local_max(int c)
{
    return local_limits[c];
}

static int batch_of(int c)
{
    return local_max(c) / 2;
}

static size_t slab_size(int c, bool huge)
{
    size_t size = class_size(c) * SLAB_BLOCKS_MIN;
    if (huge)
        return (size + ZL_HUGE_SLAB - 1) / ZL_HUGE_SLAB * ZL_HUGE_SLAB;
    return size > SLAB_MIN ? size : SLAB_MIN;
}

/* Puts a chain of length blocks on the global stack of class c. Called
 * with that class's lock held. */
static void push_chain(int c, free_block *chain, size_t length)
{
    chain->chain_length = length;
    chain->next_chain = globals[c].chains;
    globals[c].chains = chain;
}

/* Keeps slab reachable for the life of the process; false if the table
 * cannot grow. */
static bool list_slab(void *slab)
{
    uv_mutex_lock(&slab_lock);
    if (slab_count == slab_capacity) {
        size_t cap = slab_capacity ? slab_capacity * 2 : 64;
        void **grown = realloc(slabs, cap * sizeof *grown);
        if (!grown) {
            uv_mutex_unlock(&slab_lock);
            return false;
        }
        slabs = grown;
        slab_capacity = cap;
    }
    slabs[slab_count++] = slab;
    uv_mutex_unlock(&slab_lock);
    return true;
}

/* chain, of length blocks, put in front of the list chains. */
static free_block *add_chain(free_block *chains, free_block *chain,
                             size_t length)
{
    chain->chain_length = length;
    chain->next_chain = chains;
    return chain;
}

/* Carves a new slab of class c into chains of a batch: one is returned,
 * the others go on the global stack. Called without the class's lock:
 * linking the blocks touches each of them, and the first touch of fresh
 * memory faults its pages in. On the VMs we measure a fresh 2 MiB page
 * took milliseconds to fault in; carved under the lock, every thread that
 * freed or took blocks of the class waited for it, an I/O thread among
 * them, asleep on the lock. */
static free_block *grow(int c, bool huge)
{
    size_t slab_bytes = slab_size(c, huge);
    /* Blocks are laid out from the first line boundary (cache_line.h): the
     * body a sender fills never shares a line with the block before it,
     * which another thread may be freeing. */
    size_t allocated = huge ? slab_bytes : slab_bytes + ZL_CACHE_LINE;
    char *slab = huge ? zl_os_slab_alloc(allocated) : malloc(allocated);
    if (!slab)
        return NULL;
    if (!list_slab(slab)) {
        free(slab);
        return NULL;
    }
    char *first = zl_cache_align_up(slab);
    size_t usable = allocated - (size_t)(first - slab);
    size_t size = class_size(c);
    size_t batch = (size_t)batch_of(c);
    free_block *chains = NULL; /* linked through next_chain */
    free_block *chain = NULL;
    size_t length = 0;
    for (size_t off = 0; off + size <= usable; off += size) {
        free_block *b = (free_block *)(first + off);
        link_in_front(b, chain);
        chain = b;
        if (++length == batch) {
            chains = add_chain(chains, chain, length);
            chain = NULL;
            length = 0;
        }
    }
    if (chain)
        chains = add_chain(chains, chain, length);
    free_block *kept = chains;
    global_class *g = &globals[c];
    uv_mutex_lock(&g->lock);
    g->slab_bytes += slab_bytes;
    for (free_block *next, *b = kept->next_chain; b; b = next) {
        next = b->next_chain;
        push_chain(c, b, b->chain_length);
    }
    uv_mutex_unlock(&g->lock);
    return kept;
}

/* Makes head a chain from the global stack, carving a slab if it is
 * empty. */
ZL_POOL_UNUSED static bool refill(int c)
{
    uv_once(&init_once, init_globals);
    global_class *g = &globals[c];
    uv_mutex_lock(&g->lock);
    free_block *chain = g->chains;
    if (chain)
        g->chains = chain->next_chain;
    bool huge = class_size(c) >= HUGE_CLASS_MIN && g->slab_bytes >= HUGE_AFTER;
    uv_mutex_unlock(&g->lock);
    if (!chain && !(chain = grow(c, huge)))
        return false;
    cache.head[c] = chain;
    cache.count[c] = (int)chain->chain_length;
    return true;
}

/* Head ran out: the spare chain takes its place, or one from the global
 * stack. */
ZL_POOL_UNUSED static bool restock_head(int c)
{
    if (!cache.spare[c])
        return refill(c);
    cache.head[c] = cache.spare[c];
    cache.count[c] = batch_of(c);
    cache.spare[c] = NULL;
    return true;
}

/* Head has grown to a batch: it becomes the spare chain, and the spare it
 * replaces goes to the global stack. */
static void retire_head(int c)
{
    free_block *full = cache.spare[c];
    if (full) {
        global_class *g = &globals[c];
        uv_mutex_lock(&g->lock);
        push_chain(c, full, (size_t)batch_of(c));
        uv_mutex_unlock(&g->lock);
    }
    cache.spare[c] = cache.head[c];
    cache.head[c] = NULL;
    cache.count[c] = 0;
}

/* Asks for the lines of b, a block of class c, that its new owner is about
 * to write: the first (the links, then the body's header), and every line
 * of a small block, which is filled whole right away (the application
 * fills its message, an I/O thread copies a decoded body in) and whose
 * lines another core last read or wrote (it encoded the body, or read the
 * message). Whole 8 KiB blocks, 129 lines, cost more than they saved
 * (bench/NOTES.md, "Prefetching pool blocks"). */
ZL_POOL_UNUSED static void prefetch_block(free_block *b, int c)
{
    zl_prefetch_for_write(b);
    if (c > PREFETCH_WHOLE_MAX_CLASS)
        return;
    for (size_t at = ZL_CACHE_LINE; at < BLOCK_OF(c); at += ZL_CACHE_LINE)
        zl_prefetch_for_write((char *)b + at);
}

void *zl_pool_alloc(size_t size, uint8_t *pool_class)
{
#ifndef ZL_POOL_DISABLED
    int c = class_of(size);
    if (c >= 0) {
        if (!cache.head[c] && !restock_head(c))
            return NULL;
        free_block *b = cache.head[c];
        cache.head[c] = b->later[0];
        cache.count[c]--;
        /* A block's first line holds its links and becomes the body's
         * header; the thread that freed it, usually the other side of a
         * pipe, wrote it last. Asked for PREFETCH_AHEAD allocations early,
         * it is here when that block is handed out (bench/NOTES.md,
         * "Prefetching pool blocks"). */
        free_block *ahead = b->later[PREFETCH_AHEAD - 1];
        if (ahead)
            prefetch_block(ahead, c);
        *pool_class = (uint8_t)c;
        return b;
    }
#endif
    *pool_class = ZL_POOL_NONE;
    return malloc(size);
}

void zl_pool_free(void *block, uint8_t pool_class)
{
    if (pool_class == ZL_POOL_NONE) {
        free(block);
        return;
    }
    int c = pool_class;
    free_block *b = block;
    link_in_front(b, cache.head[c]);
    cache.head[c] = b;
    if (++cache.count[c] == batch_of(c))
        retire_head(c);
}
