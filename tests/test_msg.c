/* test_msg.c — zlink_msg_t: inline and refcounted bodies, zero-copy data,
 * copy and move, flags, and the errors libzmq reports. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cache_line.h"
#include "msg.h"
#include "msg_pool.h"
#include "testutil.h"

/* Whether the body lives inside the 64-byte message itself. */
static bool body_is_inline(zlink_msg_t *msg)
{
    uint8_t *data = zlink_msg_data(msg);
    uint8_t *start = (uint8_t *)msg;
    return data >= start && data < start + sizeof *msg;
}

typedef struct free_log {
    atomic_int calls;
    void *data;
    void *hint;
} free_log;

static void log_free(void *data, void *hint)
{
    free_log *log = hint;
    atomic_fetch_add(&log->calls, 1);
    log->data = data;
    log->hint = hint;
}

START_TEST(init_empty)
{
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init(&msg), 0);
    ck_assert_uint_eq(zlink_msg_size(&msg), 0);
    ck_assert_int_eq(zlink_msg_more(&msg), 0);
    ck_assert_int_eq(zlink_msg_get(&msg, ZLINK_MORE), 0);
    ck_assert_int_eq(zlink_msg_get(&msg, ZLINK_SHARED), 0);
    /* As libzmq: nothing can be set. */
    ck_assert_int_eq(zlink_msg_set(&msg, ZLINK_MORE, 1), -1);
    ck_assert_int_eq(zlink_errno(), EINVAL);
    ck_assert_int_eq(zlink_msg_more(&msg), 0);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
}
END_TEST

START_TEST(init_size_zero)
{
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init_size(&msg, 0), 0);
    ck_assert_uint_eq(zlink_msg_size(&msg), 0);
    ck_assert_ptr_nonnull(zlink_msg_data(&msg));
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
}
END_TEST

START_TEST(init_size_inline_boundary)
{
    zlink_msg_t msg;
    ck_assert_int_eq(ZL_MSG_INLINE_MAX, 104);

    ck_assert_int_eq(zlink_msg_init_size(&msg, 104), 0);
    ck_assert_uint_eq(zlink_msg_size(&msg), 104);
    ck_assert(body_is_inline(&msg));
    ck_assert_uint_eq(zl_msg_of(&msg)->kind, ZL_MSG_INLINE);
    memset(zlink_msg_data(&msg), 0x5c, 104);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);

    ck_assert_int_eq(zlink_msg_init_size(&msg, 105), 0);
    ck_assert_uint_eq(zlink_msg_size(&msg), 105);
    ck_assert(!body_is_inline(&msg));
    ck_assert_uint_eq(zl_msg_of(&msg)->kind, ZL_MSG_CONTENT);
    memset(zlink_msg_data(&msg), 0x5c, 49);
    ck_assert_int_eq(zlink_msg_get(&msg, ZLINK_SHARED), 0);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
}
END_TEST

START_TEST(init_size_body_is_writable)
{
    static const size_t sizes[] = {1, 47, 48, 49, 112, 113, 1000, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        zlink_msg_t msg;
        ck_assert_int_eq(zlink_msg_init_size(&msg, sizes[i]), 0);
        uint8_t *body = zlink_msg_data(&msg);
        for (size_t j = 0; j < sizes[i]; j++)
            body[j] = (uint8_t)(j * 31 + i);
        for (size_t j = 0; j < sizes[i]; j++)
            ck_assert_uint_eq(body[j], (uint8_t)(j * 31 + i));
        ck_assert_int_eq(zlink_msg_close(&msg), 0);
    }
}
END_TEST

/* Enough 64 KiB bodies alive at once to take their pool class past the
 * point where its slabs become 2 MiB huge-page slabs (msg_pool.c): every
 * body is its own, whole and writable, before and after they go back and
 * come out again. */
START_TEST(many_large_bodies_alive_at_once)
{
    enum { COUNT = 160, SIZE = 64 * 1024 }; /* 10 MiB */
    static zlink_msg_t msgs[COUNT];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < COUNT; i++) {
            ck_assert_int_eq(zlink_msg_init_size(&msgs[i], SIZE), 0);
            memset(zlink_msg_data(&msgs[i]), i + round, SIZE);
        }
        for (int i = 0; i < COUNT; i++) {
            const uint8_t *body = zlink_msg_data(&msgs[i]);
            ck_assert_uint_eq(body[0], (uint8_t)(i + round));
            ck_assert_uint_eq(body[SIZE - 1], (uint8_t)(i + round));
            ck_assert_uint_eq(body[SIZE / 2], (uint8_t)(i + round));
        }
        for (int i = 0; i < COUNT; i++)
            ck_assert_int_eq(zlink_msg_close(&msgs[i]), 0);
    }
}
END_TEST

/* Two threads allocate bodies, hand them to each other and free the
 * other's, as a sender, an I/O thread and a receiver do: whole chains of
 * blocks move between the threads' caches and the pool's global stack.
 * Each thread stamps the blocks it holds and checks the stamps once it
 * holds them all, so a block handed to two owners at once is caught. */
enum { HANDOFF_BLOCKS = 1000, HANDOFF_ROUNDS = 40 };

typedef struct handoff {
    uv_barrier_t barrier;
    size_t size;
    void *given[2][HANDOFF_BLOCKS];
    uint8_t classes[2][HANDOFF_BLOCKS];
    atomic_int failures;
} handoff;

typedef struct handoff_side {
    handoff *h;
    int id;
} handoff_side;

static uint64_t stamp_of(int id, int round, int i)
{
    return (uint64_t)id << 40 | (uint64_t)round << 20 | (uint64_t)i;
}

static void stamp(uint8_t *block, size_t size, uint64_t value)
{
    memcpy(block, &value, sizeof value);
    memcpy(block + size - sizeof value, &value, sizeof value);
}

static bool stamped(const uint8_t *block, size_t size, uint64_t value)
{
    uint64_t first, last;
    memcpy(&first, block, sizeof first);
    memcpy(&last, block + size - sizeof last, sizeof last);
    return first == value && last == value;
}

static void hand_blocks_over(void *arg)
{
    handoff_side *side = arg;
    handoff *h = side->h;
    for (int round = 0; round < HANDOFF_ROUNDS; round++) {
        void **mine = h->given[side->id];
        uint8_t *classes = h->classes[side->id];
        for (int i = 0; i < HANDOFF_BLOCKS; i++) {
            mine[i] = zl_pool_alloc(h->size, &classes[i]);
            if (!mine[i]) {
                atomic_fetch_add(&h->failures, 1);
                return;
            }
            stamp(mine[i], h->size, stamp_of(side->id, round, i));
        }
        for (int i = 0; i < HANDOFF_BLOCKS; i++)
            if (!stamped(mine[i], h->size, stamp_of(side->id, round, i)))
                atomic_fetch_add(&h->failures, 1);
        uv_barrier_wait(&h->barrier);
        /* Free the other side's blocks: every one of them comes back to
         * this thread's cache. */
        int other = 1 - side->id;
        for (int i = 0; i < HANDOFF_BLOCKS; i++)
            zl_pool_free(h->given[other][i], h->classes[other][i]);
        uv_barrier_wait(&h->barrier);
    }
}

/* The write prefetch of pipe slots and pool blocks is PREFETCHW exactly
 * where the CPU has it, which Linux lists as 3dnowprefetch. */
START_TEST(prefetchw_found_where_the_cpu_has_it)
{
#if defined(__linux__) && (defined(__x86_64__) || defined(__i386__))
    FILE *f = fopen("/proc/cpuinfo", "r");
    ck_assert_ptr_nonnull(f);
    char line[8192];
    bool listed = false, seen_flags = false;
    while (!seen_flags && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        seen_flags = true;
        listed = strstr(line, " 3dnowprefetch") != NULL;
    }
    fclose(f);
    ck_assert(seen_flags);
    ck_assert_int_eq(zl_cpu_has_prefetchw, listed);
    /* A hint only: any address of ours, written or not, is fine. */
    uint8_t line_to_write[ZL_CACHE_LINE];
    zl_prefetch_for_write(line_to_write);
    line_to_write[0] = 1;
    ck_assert_uint_eq(line_to_write[0], 1);
#endif
}
END_TEST

START_TEST(pool_blocks_handed_between_threads)
{
    /* A class of 128-block batches, and one of 3-block batches. */
    static const size_t sizes[] = {200, 100000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        handoff *h = calloc(1, sizeof *h);
        ck_assert_ptr_nonnull(h);
        h->size = sizes[s];
        ck_assert_int_eq(uv_barrier_init(&h->barrier, 2), 0);
        handoff_side sides[2] = {{h, 0}, {h, 1}};
        uv_thread_t threads[2];
        for (int t = 0; t < 2; t++)
            ck_assert_int_eq(
                uv_thread_create(&threads[t], hand_blocks_over, &sides[t]), 0);
        for (int t = 0; t < 2; t++)
            uv_thread_join(&threads[t]);
        ck_assert_int_eq(atomic_load(&h->failures), 0);
        uv_barrier_destroy(&h->barrier);
        free(h);
    }
}
END_TEST

/* Pool blocks and cache-aligned allocations start on a line
 * (cache_line.h), so a body never shares its first line with the block
 * before it, which another thread may be freeing. */
START_TEST(pool_blocks_start_on_a_cache_line)
{
    static const size_t sizes[] = {1, 100, 200, 1000, 5000, 70000, 300000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        void *blocks[3];
        uint8_t classes[3];
        for (int k = 0; k < 3; k++) {
            blocks[k] = zl_pool_alloc(sizes[i], &classes[k]);
            ck_assert_ptr_nonnull(blocks[k]);
            memset(blocks[k], 0xa5, sizes[i]);
            /* Under AddressSanitizer the pool steps aside for malloc. */
            if (classes[k] != ZL_POOL_NONE)
                ck_assert_uint_eq((uintptr_t)blocks[k] % ZL_CACHE_LINE, 0);
        }
        for (int k = 0; k < 3; k++)
            zl_pool_free(blocks[k], classes[k]);
    }
    for (size_t size = 1; size < 5000; size = size * 3 + 1) {
        uint8_t *p = zl_cache_aligned_alloc(size);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % ZL_CACHE_LINE, 0);
        memset(p, 0x5a, size);
        zl_cache_aligned_free(p);
    }
    zl_cache_aligned_free(NULL);
}
END_TEST

START_TEST(init_size_too_large)
{
    zlink_msg_t msg;
    errno = 0;
    ck_assert_int_eq(zlink_msg_init_size(&msg, SIZE_MAX), -1);
    ck_assert_int_eq(errno, ENOMEM);
}
END_TEST

START_TEST(init_data_is_zero_copy)
{
    char buf[100] = "zero copy";
    free_log log = {0};
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init_data(&msg, buf, sizeof buf, log_free, &log),
                     0);
    ck_assert_ptr_eq(zlink_msg_data(&msg), buf);
    ck_assert_uint_eq(zlink_msg_size(&msg), sizeof buf);
    ck_assert_int_eq(atomic_load(&log.calls), 0);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
    ck_assert_int_eq(atomic_load(&log.calls), 1);
    ck_assert_ptr_eq(log.data, buf);
    ck_assert_ptr_eq(log.hint, &log);
}
END_TEST

/* Small bodies given to init_data are not copied inline either: the
 * caller handed us that buffer, and gets it back through ffn. */
START_TEST(init_data_small_body)
{
    char buf[4] = "tiny";
    free_log log = {0};
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init_data(&msg, buf, 4, log_free, &log), 0);
    ck_assert_ptr_eq(zlink_msg_data(&msg), buf);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
    ck_assert_int_eq(atomic_load(&log.calls), 1);
}
END_TEST

START_TEST(init_data_free_once_after_last_copy)
{
    char *buf = malloc(64);
    free_log log = {0};
    zlink_msg_t a, b, c;
    ck_assert_int_eq(zlink_msg_init_data(&a, buf, 64, log_free, &log), 0);
    ck_assert_int_eq(zlink_msg_init(&b), 0);
    ck_assert_int_eq(zlink_msg_init(&c), 0);
    ck_assert_int_eq(zlink_msg_copy(&b, &a), 0);
    ck_assert_int_eq(zlink_msg_copy(&c, &b), 0);
    ck_assert_ptr_eq(zlink_msg_data(&c), buf);

    ck_assert_int_eq(zlink_msg_close(&a), 0);
    ck_assert_int_eq(zlink_msg_close(&c), 0);
    ck_assert_int_eq(atomic_load(&log.calls), 0);
    ck_assert_int_eq(zlink_msg_close(&b), 0);
    ck_assert_int_eq(atomic_load(&log.calls), 1);
    ck_assert_ptr_eq(log.data, buf);
    /* A second close of the last copy must not free again. */
    ck_assert_int_eq(zlink_msg_close(&b), -1);
    ck_assert_int_eq(atomic_load(&log.calls), 1);
    free(buf);
}
END_TEST

START_TEST(init_data_without_free_fn)
{
    static const char text[] = "constant";
    zlink_msg_t msg, copy;
    ck_assert_int_eq(
        zlink_msg_init_data(&msg, (void *)text, sizeof text, NULL, NULL), 0);
    ck_assert_ptr_eq(zlink_msg_data(&msg), text);
    ck_assert_int_eq(zlink_msg_get(&msg, ZLINK_SHARED), 1);
    ck_assert_int_eq(zlink_msg_init(&copy), 0);
    ck_assert_int_eq(zlink_msg_copy(&copy, &msg), 0);
    ck_assert_ptr_eq(zlink_msg_data(&copy), text);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
    ck_assert_int_eq(zlink_msg_close(&copy), 0);
}
END_TEST

START_TEST(init_data_zero_size)
{
    free_log log = {0};
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init_data(&msg, NULL, 0, log_free, &log), 0);
    ck_assert_uint_eq(zlink_msg_size(&msg), 0);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
    ck_assert_int_eq(atomic_load(&log.calls), 1);

    errno = 0;
    ck_assert_int_eq(zlink_msg_init_data(&msg, NULL, 1, log_free, &log), -1);
    ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(copy_inline_copies_bytes)
{
    zlink_msg_t msg, copy;
    ck_assert_int_eq(zlink_msg_init_size(&msg, 5), 0);
    memcpy(zlink_msg_data(&msg), "hello", 5);
    zl_msg_set_flags(&msg, ZL_MSG_MORE);
    ck_assert_int_eq(zlink_msg_init(&copy), 0);
    ck_assert_int_eq(zlink_msg_copy(&copy, &msg), 0);

    ck_assert_uint_eq(zlink_msg_size(&copy), 5);
    ck_assert_ptr_ne(zlink_msg_data(&copy), zlink_msg_data(&msg));
    ck_assert_mem_eq(zlink_msg_data(&copy), "hello", 5);
    ck_assert_int_eq(zlink_msg_more(&copy), 1);
    ck_assert_int_eq(zlink_msg_get(&copy, ZLINK_SHARED), 0);
    /* The copy is independent. */
    memcpy(zlink_msg_data(&copy), "jello", 5);
    ck_assert_mem_eq(zlink_msg_data(&msg), "hello", 5);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
    ck_assert_int_eq(zlink_msg_close(&copy), 0);
}
END_TEST

START_TEST(copy_content_shares_body)
{
    zlink_msg_t msg, copy;
    ck_assert_int_eq(zlink_msg_init_size(&msg, 1000), 0);
    memset(zlink_msg_data(&msg), 'x', 1000);
    ck_assert_int_eq(zlink_msg_init(&copy), 0);
    ck_assert_int_eq(zlink_msg_copy(&copy, &msg), 0);
    ck_assert_ptr_eq(zlink_msg_data(&copy), zlink_msg_data(&msg));
    ck_assert_uint_eq(zlink_msg_size(&copy), 1000);
    ck_assert_int_eq(zlink_msg_get(&msg, ZLINK_SHARED), 1);
    ck_assert_int_eq(zlink_msg_get(&copy, ZLINK_SHARED), 1);
    ck_assert_uint_eq(atomic_load(&zl_msg_of(&msg)->u.ref.content->refs), 2);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
    ck_assert_mem_eq(zlink_msg_data(&copy), "xxxx", 4);
    ck_assert_int_eq(zlink_msg_close(&copy), 0);
}
END_TEST

START_TEST(copy_releases_old_dest)
{
    free_log log = {0};
    char buf[8];
    zlink_msg_t dest, src;
    ck_assert_int_eq(zlink_msg_init_data(&dest, buf, 8, log_free, &log), 0);
    ck_assert_int_eq(zlink_msg_init_size(&src, 3), 0);
    ck_assert_int_eq(zlink_msg_copy(&dest, &src), 0);
    ck_assert_int_eq(atomic_load(&log.calls), 1);
    ck_assert_uint_eq(zlink_msg_size(&dest), 3);
    ck_assert_int_eq(zlink_msg_copy(&dest, &dest), 0);
    ck_assert_int_eq(zlink_msg_close(&dest), 0);
    ck_assert_int_eq(zlink_msg_close(&src), 0);
}
END_TEST

START_TEST(move_transfers_body)
{
    zlink_msg_t msg, dest;
    ck_assert_int_eq(zlink_msg_init_size(&msg, 500), 0);
    void *body = zlink_msg_data(&msg);
    zl_msg_set_flags(&msg, ZL_MSG_MORE);
    ck_assert_int_eq(zlink_msg_init(&dest), 0);
    ck_assert_int_eq(zlink_msg_move(&dest, &msg), 0);

    ck_assert_ptr_eq(zlink_msg_data(&dest), body);
    ck_assert_uint_eq(zlink_msg_size(&dest), 500);
    ck_assert_int_eq(zlink_msg_more(&dest), 1);
    ck_assert_int_eq(zlink_msg_get(&dest, ZLINK_SHARED), 0);
    /* The source is left as a valid empty message. */
    ck_assert_uint_eq(zlink_msg_size(&msg), 0);
    ck_assert_int_eq(zlink_msg_more(&msg), 0);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
    ck_assert_int_eq(zlink_msg_close(&dest), 0);
}
END_TEST

START_TEST(move_inline_and_into_live_dest)
{
    free_log log = {0};
    char buf[8];
    zlink_msg_t msg, dest;
    ck_assert_int_eq(zlink_msg_init_data(&dest, buf, 8, log_free, &log), 0);
    ck_assert_int_eq(zlink_msg_init_size(&msg, 2), 0);
    memcpy(zlink_msg_data(&msg), "ok", 2);
    ck_assert_int_eq(zlink_msg_move(&dest, &msg), 0);
    ck_assert_int_eq(atomic_load(&log.calls), 1);
    ck_assert_mem_eq(zlink_msg_data(&dest), "ok", 2);
    ck_assert_int_eq(zlink_msg_move(&dest, &dest), 0);
    ck_assert_uint_eq(zlink_msg_size(&dest), 2);
    ck_assert_int_eq(zlink_msg_close(&dest), 0);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
}
END_TEST

/* A closed message can take a new body by move or copy without init. */
START_TEST(move_into_closed_dest)
{
    zlink_msg_t msg, dest;
    ck_assert_int_eq(zlink_msg_init(&dest), 0);
    ck_assert_int_eq(zlink_msg_close(&dest), 0);
    ck_assert_int_eq(zlink_msg_init_size(&msg, 100), 0);
    ck_assert_int_eq(zlink_msg_move(&dest, &msg), 0);
    ck_assert_uint_eq(zlink_msg_size(&dest), 100);
    ck_assert_int_eq(zlink_msg_close(&dest), 0);
    ck_assert_int_eq(zlink_msg_copy(&dest, &msg), 0);
    ck_assert_int_eq(zlink_msg_close(&dest), 0);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
}
END_TEST

START_TEST(closed_or_garbage_is_efault)
{
    zlink_msg_t msg, other, garbage;
    memset(&garbage, 0, sizeof garbage);
    ck_assert_int_eq(zlink_msg_init_size(&msg, 100), 0);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);

    errno = 0;
    ck_assert_int_eq(zlink_msg_close(&msg), -1);
    ck_assert_int_eq(errno, EFAULT);
    ck_assert_uint_eq(zl_msg_of(&msg)->kind, ZL_MSG_CLOSED);
    ck_assert_uint_eq(zlink_msg_size(&msg), 0);
    ck_assert_ptr_null(zlink_msg_data(&msg));
    ck_assert_int_eq(zlink_msg_more(&msg), 0);
    errno = 0;
    ck_assert_int_eq(zlink_msg_get(&msg, ZLINK_MORE), -1);
    ck_assert_int_eq(errno, EFAULT);

    ck_assert_int_eq(zlink_msg_init(&other), 0);
    errno = 0;
    ck_assert_int_eq(zlink_msg_move(&other, &msg), -1);
    ck_assert_int_eq(errno, EFAULT);
    errno = 0;
    ck_assert_int_eq(zlink_msg_copy(&other, &msg), -1);
    ck_assert_int_eq(errno, EFAULT);

    /* An uninitialised destination is not released. */
    errno = 0;
    ck_assert_int_eq(zlink_msg_move(&garbage, &other), -1);
    ck_assert_int_eq(errno, EFAULT);
    errno = 0;
    ck_assert_int_eq(zlink_msg_close(&garbage), -1);
    ck_assert_int_eq(errno, EFAULT);
    ck_assert_int_eq(zlink_msg_close(&other), 0);
}
END_TEST

START_TEST(more_flag)
{
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init_size(&msg, 3), 0);
    ck_assert_int_eq(zlink_msg_more(&msg), 0);
    zl_msg_set_flags(&msg, ZL_MSG_MORE | ZL_MSG_COMMAND);
    ck_assert_int_eq(zlink_msg_more(&msg), 1);
    ck_assert_int_eq(zlink_msg_get(&msg, ZLINK_MORE), 1);
    ck_assert_uint_eq(zl_msg_flags(&msg), ZL_MSG_MORE | ZL_MSG_COMMAND);
    zl_msg_reset_flags(&msg, ZL_MSG_MORE);
    ck_assert_int_eq(zlink_msg_more(&msg), 0);
    ck_assert_uint_eq(zl_msg_flags(&msg), ZL_MSG_COMMAND);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
}
END_TEST

START_TEST(get_unknown_property)
{
    zlink_msg_t msg;
    ck_assert_int_eq(zlink_msg_init(&msg), 0);
    static const int unknown[] = {0, 2, 4, 100, -1};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        errno = 0;
        ck_assert_int_eq(zlink_msg_get(&msg, unknown[i]), -1);
        ck_assert_int_eq(errno, EINVAL);
    }
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
}
END_TEST

START_TEST(delimiter)
{
    zlink_msg_t msg;
    ck_assert_int_eq(zl_msg_init_delimiter(&msg), 0);
    ck_assert(zl_msg_is_delimiter(&msg));
    ck_assert_uint_eq(zlink_msg_size(&msg), 0);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
    ck_assert(!zl_msg_is_delimiter(&msg));
    ck_assert_int_eq(zlink_msg_init(&msg), 0);
    ck_assert(!zl_msg_is_delimiter(&msg));
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
}
END_TEST

START_TEST(const_and_buffer)
{
    static const char text[] =
        "a constant body longer than forty-eight bytes!!";
    zlink_msg_t msg;
    ck_assert_int_eq(zl_msg_init_const(&msg, text, sizeof text), 0);
    ck_assert_ptr_eq(zlink_msg_data(&msg), text);
    ck_assert_uint_eq(zlink_msg_size(&msg), sizeof text);
    ck_assert_int_eq(zlink_msg_get(&msg, ZLINK_SHARED), 1);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);

    ck_assert_int_eq(zl_msg_init_buffer(&msg, text, sizeof text), 0);
    ck_assert_ptr_ne(zlink_msg_data(&msg), text);
    ck_assert_mem_eq(zlink_msg_data(&msg), text, sizeof text);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);

    ck_assert_int_eq(zl_msg_init_buffer(&msg, NULL, 0), 0);
    ck_assert_uint_eq(zlink_msg_size(&msg), 0);
    ck_assert_int_eq(zlink_msg_close(&msg), 0);
}
END_TEST

START_TEST(shared_slices_of_one_block)
{
    zl_content *block = zl_content_alloc(250);
    ck_assert_ptr_nonnull(block);
    ck_assert_uint_eq(block->size, 250);
    uint8_t *base = block->data;
    for (int i = 0; i < 250; i++)
        base[i] = (uint8_t)i;

    /* Larger than ZL_MSG_INLINE_MAX: shared. */
    zlink_msg_t big, small;
    zl_msg_init_shared(&big, block, base + 10, 120);
    ck_assert_ptr_eq(zlink_msg_data(&big), base + 10);
    ck_assert_uint_eq(zlink_msg_size(&big), 120);
    ck_assert_int_eq(zlink_msg_get(&big, ZLINK_SHARED), 1);
    ck_assert_uint_eq(atomic_load(&block->refs), 2);

    /* A small slice is copied out rather than holding the block. */
    zl_msg_init_shared(&small, block, base + 200, 20);
    ck_assert(body_is_inline(&small));
    ck_assert_uint_eq(((uint8_t *)zlink_msg_data(&small))[0], 200);
    ck_assert_uint_eq(atomic_load(&block->refs), 2);

    zl_content_release(block); /* the reader's own reference */
    ck_assert_uint_eq(((uint8_t *)zlink_msg_data(&big))[99], 109);
    ck_assert_int_eq(zlink_msg_close(&big), 0); /* frees the block */
    ck_assert_int_eq(zlink_msg_close(&small), 0);
}
END_TEST

START_TEST(content_refcount)
{
    zl_content *block = zl_content_alloc(0);
    ck_assert_ptr_nonnull(block);
    ck_assert_uint_eq(atomic_load(&block->refs), 1);
    zl_content_addref(block);
    zl_content_addref(block);
    ck_assert_uint_eq(atomic_load(&block->refs), 3);
    zl_content_release(block);
    zl_content_release(block);
    ck_assert_uint_eq(atomic_load(&block->refs), 1);
    zl_content_release(block);
    ck_assert_ptr_null(zl_content_alloc(SIZE_MAX));
}
END_TEST

/* Copies closed from several threads at once: the free function still runs
 * exactly once. */
enum { THREADS = 4, COPIES_PER_THREAD = 1000 };

typedef struct closer {
    zlink_msg_t copies[COPIES_PER_THREAD];
} closer;

static void close_copies(void *arg)
{
    closer *c = arg;
    for (int i = 0; i < COPIES_PER_THREAD; i++)
        ck_assert_int_eq(zlink_msg_close(&c->copies[i]), 0);
}

START_TEST(copies_closed_concurrently)
{
    static char buf[256];
    free_log log = {0};
    zlink_msg_t original;
    closer *closers = calloc(THREADS, sizeof *closers);
    ck_assert_int_eq(
        zlink_msg_init_data(&original, buf, sizeof buf, log_free, &log), 0);
    for (int t = 0; t < THREADS; t++) {
        for (int i = 0; i < COPIES_PER_THREAD; i++) {
            zlink_msg_init(&closers[t].copies[i]);
            ck_assert_int_eq(zlink_msg_copy(&closers[t].copies[i], &original),
                             0);
        }
    }
    ck_assert_int_eq(zlink_msg_close(&original), 0);

    uv_thread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++)
        ck_assert_int_eq(
            uv_thread_create(&threads[t], close_copies, &closers[t]), 0);
    for (int t = 0; t < THREADS; t++)
        uv_thread_join(&threads[t]);
    ck_assert_int_eq(atomic_load(&log.calls), 1);
    free(closers);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("msg");
    TCase *tc = tcase_create("init");
    tcase_add_test(tc, init_empty);
    tcase_add_test(tc, init_size_zero);
    tcase_add_test(tc, init_size_inline_boundary);
    tcase_add_test(tc, init_size_body_is_writable);
    tcase_add_test(tc, many_large_bodies_alive_at_once);
    tcase_add_test(tc, pool_blocks_start_on_a_cache_line);
    tcase_add_test(tc, pool_blocks_handed_between_threads);
    tcase_add_test(tc, prefetchw_found_where_the_cpu_has_it);
    tcase_add_test(tc, init_size_too_large);
    tcase_add_test(tc, init_data_is_zero_copy);
    tcase_add_test(tc, init_data_small_body);
    tcase_add_test(tc, init_data_free_once_after_last_copy);
    tcase_add_test(tc, init_data_without_free_fn);
    tcase_add_test(tc, init_data_zero_size);
    suite_add_tcase(s, tc);

    tc = tcase_create("copy_move");
    tcase_add_test(tc, copy_inline_copies_bytes);
    tcase_add_test(tc, copy_content_shares_body);
    tcase_add_test(tc, copy_releases_old_dest);
    tcase_add_test(tc, move_transfers_body);
    tcase_add_test(tc, move_inline_and_into_live_dest);
    tcase_add_test(tc, move_into_closed_dest);
    tcase_add_test(tc, closed_or_garbage_is_efault);
    tcase_add_test(tc, copies_closed_concurrently);
    suite_add_tcase(s, tc);

    tc = tcase_create("flags");
    tcase_add_test(tc, more_flag);
    tcase_add_test(tc, get_unknown_property);
    suite_add_tcase(s, tc);

    tc = tcase_create("internal");
    tcase_add_test(tc, delimiter);
    tcase_add_test(tc, const_and_buffer);
    tcase_add_test(tc, shared_slices_of_one_block);
    tcase_add_test(tc, content_refcount);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
