/* test_trie.c — the subscription stores: zl_trie (SUB/XSUB) and zl_mtrie
 * (PUB/XPUB), including a randomized comparison with a naive model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "patterns/trie.h"

/* For hot loops: Check's asserts log every success, which costs a write
 * per assert under CK_FORK. This one costs nothing until it fails. */
#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond))                                                          \
            ck_abort_msg("%s:%d: expected %s", __FILE__, __LINE__, #cond);    \
    } while (0)

#define BULK_ENTRIES 100000
#define BULK_KEY_MAX 32

/* A fixed-seed generator, so every run (and every platform) sees the same
 * keys. */
static uint64_t rng_state;

static void rng_seed(uint64_t seed) { rng_state = seed; }

static uint32_t rng_next(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(rng_state >> 33);
}

/* ---- zl_trie ------------------------------------------------------------- */

START_TEST(trie_add_remove_counts)
{
    zl_trie trie;
    zl_trie_init(&trie);
    ck_assert_uint_eq(zl_trie_count(&trie), 0);
    ck_assert(!zl_trie_check(&trie, "abc", 3));

    ck_assert_int_eq(zl_trie_add(&trie, "abc", 3), 1);
    ck_assert_int_eq(zl_trie_add(&trie, "abc", 3), 0);
    ck_assert_uint_eq(zl_trie_count(&trie), 1);
    ck_assert(zl_trie_check(&trie, "abc", 3));
    ck_assert(zl_trie_check(&trie, "abcdef", 6));
    ck_assert(!zl_trie_check(&trie, "ab", 2));
    ck_assert(!zl_trie_check(&trie, "abd", 3));
    ck_assert(!zl_trie_check(&trie, "", 0));

    /* Added twice: the first remove only drops a reference. */
    ck_assert(!zl_trie_remove(&trie, "abc", 3));
    ck_assert(zl_trie_check(&trie, "abcdef", 6));
    ck_assert(zl_trie_remove(&trie, "abc", 3));
    ck_assert(!zl_trie_check(&trie, "abcdef", 6));
    ck_assert(!zl_trie_remove(&trie, "abc", 3));
    ck_assert_uint_eq(zl_trie_count(&trie), 0);
    ck_assert_uint_eq(zl_trie_node_count(&trie), 0);

    /* Absent prefixes, including ones that are inner parts of a label. */
    ck_assert_int_eq(zl_trie_add(&trie, "hello", 5), 1);
    ck_assert(!zl_trie_remove(&trie, "hel", 3));
    ck_assert(!zl_trie_remove(&trie, "hello!", 6));
    ck_assert(!zl_trie_remove(&trie, "", 0));
    ck_assert_uint_eq(zl_trie_count(&trie), 1);
    zl_trie_destroy(&trie);
}
END_TEST

START_TEST(trie_prefixes_and_non_matches)
{
    zl_trie trie;
    zl_trie_init(&trie);
    ck_assert_int_eq(zl_trie_add(&trie, "a", 1), 1);
    ck_assert_int_eq(zl_trie_add(&trie, "abc", 3), 1);
    ck_assert_int_eq(zl_trie_add(&trie, "abd", 3), 1);
    ck_assert_int_eq(zl_trie_add(&trie, "b", 1), 1);
    ck_assert_uint_eq(zl_trie_count(&trie), 4);

    ck_assert(zl_trie_check(&trie, "a", 1));
    ck_assert(zl_trie_check(&trie, "axe", 3));
    ck_assert(zl_trie_check(&trie, "bee", 3));
    ck_assert(!zl_trie_check(&trie, "c", 1));
    ck_assert(!zl_trie_check(&trie, "", 0));

    ck_assert(zl_trie_remove(&trie, "a", 1));
    ck_assert(!zl_trie_check(&trie, "axe", 3));
    ck_assert(!zl_trie_check(&trie, "ab", 2));
    ck_assert(zl_trie_check(&trie, "abc", 3));
    ck_assert(zl_trie_check(&trie, "abdomen", 7));
    ck_assert(!zl_trie_check(&trie, "abe", 3));
    zl_trie_destroy(&trie);
    ck_assert_uint_eq(zl_trie_node_count(&trie), 0);
}
END_TEST

START_TEST(trie_empty_prefix_matches_everything)
{
    zl_trie trie;
    zl_trie_init(&trie);
    ck_assert(!zl_trie_check(&trie, "", 0));
    ck_assert(!zl_trie_check(&trie, NULL, 0));
    ck_assert_int_eq(zl_trie_add(&trie, NULL, 0), 1);
    ck_assert_int_eq(zl_trie_add(&trie, "", 0), 0);
    ck_assert(zl_trie_check(&trie, "", 0));
    ck_assert(zl_trie_check(&trie, "anything", 8));
    ck_assert(zl_trie_check(&trie, "\0", 1));
    ck_assert(!zl_trie_remove(&trie, "", 0));
    ck_assert(zl_trie_remove(&trie, NULL, 0));
    ck_assert(!zl_trie_check(&trie, "anything", 8));
    ck_assert_uint_eq(zl_trie_node_count(&trie), 0);
    zl_trie_destroy(&trie);
}
END_TEST

START_TEST(trie_binary_topics_with_nul)
{
    zl_trie trie;
    zl_trie_init(&trie);
    ck_assert_int_eq(zl_trie_add(&trie, "\0\0x", 3), 1);
    ck_assert_int_eq(zl_trie_add(&trie, "a\0b", 3), 1);
    ck_assert_int_eq(zl_trie_add(&trie, "a\0", 2), 1);
    ck_assert_int_eq(zl_trie_add(&trie, "a", 1), 1);
    ck_assert_uint_eq(zl_trie_count(&trie), 4);

    ck_assert(zl_trie_check(&trie, "\0\0x\0", 4));
    ck_assert(!zl_trie_check(&trie, "\0\0y", 3));
    ck_assert(!zl_trie_check(&trie, "\0", 1));
    ck_assert(zl_trie_remove(&trie, "a", 1));
    ck_assert(zl_trie_check(&trie, "a\0bzz", 5));
    ck_assert(zl_trie_check(&trie, "a\0c", 3));
    ck_assert(zl_trie_remove(&trie, "a\0", 2));
    ck_assert(!zl_trie_check(&trie, "a\0c", 3));
    ck_assert(zl_trie_check(&trie, "a\0b", 3));
    ck_assert(!zl_trie_check(&trie, "a", 1));
    /* "a" and "a\0" differ only by a NUL: strlen would confuse them. */
    ck_assert(!zl_trie_remove(&trie, "a\0", 2));
    zl_trie_destroy(&trie);
}
END_TEST

START_TEST(trie_nodes_split_and_merge)
{
    zl_trie trie;
    zl_trie_init(&trie);
    zl_trie_add(&trie, "abcd", 4);
    ck_assert_uint_eq(zl_trie_node_count(&trie), 1);
    zl_trie_add(&trie, "abef", 4);
    ck_assert_uint_eq(zl_trie_node_count(&trie), 3); /* ab → cd, ef */
    zl_trie_add(&trie, "ab", 2);
    ck_assert_uint_eq(zl_trie_node_count(&trie), 3); /* lands on "ab" */
    zl_trie_add(&trie, "abcdxyz", 7);
    ck_assert_uint_eq(zl_trie_node_count(&trie), 4);

    /* "ab" still forks after losing its value. */
    ck_assert(zl_trie_remove(&trie, "ab", 2));
    ck_assert_uint_eq(zl_trie_node_count(&trie), 4);
    /* "abcd" keeps a single child: they merge into "cdxyz". */
    ck_assert(zl_trie_remove(&trie, "abcd", 4));
    ck_assert_uint_eq(zl_trie_node_count(&trie), 3);
    ck_assert(zl_trie_check(&trie, "abcdxyz", 7));
    ck_assert(!zl_trie_check(&trie, "abcdx", 5));
    /* "ab" is left with one child: the root merges into "abef". */
    ck_assert(zl_trie_remove(&trie, "abcdxyz", 7));
    ck_assert_uint_eq(zl_trie_node_count(&trie), 1);
    ck_assert(zl_trie_check(&trie, "abefg", 5));
    ck_assert(zl_trie_remove(&trie, "abef", 4));
    ck_assert_uint_eq(zl_trie_node_count(&trie), 0);
    zl_trie_destroy(&trie);
}
END_TEST

struct collected {
    char items[16][8];
    size_t lens[16];
    size_t count;
};

static void collect_prefix(const uint8_t *prefix, size_t len, void *arg)
{
    struct collected *out = arg;
    ck_assert_uint_lt(out->count, 16);
    ck_assert_uint_le(len, 8);
    memcpy(out->items[out->count], prefix, len);
    out->lens[out->count++] = len;
}

static bool collected_has(const struct collected *out, const char *prefix,
                          size_t len)
{
    for (size_t i = 0; i < out->count; i++)
        if (out->lens[i] == len && memcmp(out->items[i], prefix, len) == 0)
            return true;
    return false;
}

START_TEST(trie_apply_visits_each_prefix_once)
{
    zl_trie trie;
    zl_trie_init(&trie);
    struct collected out = {0};
    zl_trie_apply(&trie, collect_prefix, &out);
    ck_assert_uint_eq(out.count, 0);

    const char *prefixes[] = {"", "a", "ab", "abc", "b\0c", "zzz"};
    const size_t lens[] = {0, 1, 2, 3, 3, 3};
    for (size_t i = 0; i < 6; i++) {
        zl_trie_add(&trie, prefixes[i], lens[i]);
        zl_trie_add(&trie, prefixes[i], lens[i]);
    }
    zl_trie_add(&trie, "abcd", 4);
    ck_assert(zl_trie_remove(&trie, "abcd", 4));

    zl_trie_apply(&trie, collect_prefix, &out);
    ck_assert_uint_eq(out.count, 6);
    for (size_t i = 0; i < 6; i++)
        ck_assert(collected_has(&out, prefixes[i], lens[i]));
    ck_assert_uint_eq(zl_trie_count(&trie), 6);
    zl_trie_destroy(&trie);
}
END_TEST

/* Key i of the bulk set; keys are distinct for distinct i. Odd i give
 * human-style topics sharing long prefixes ("sensors/17/…"), even i give
 * random binary keys (NULs included) led by a permutation of i. */
static size_t bulk_key(uint32_t i, uint8_t *key)
{
    if (i % 2 == 1) {
        int len = snprintf((char *)key, BULK_KEY_MAX, "sensors/%u/%s",
                           (unsigned)(i % 1000), i % 3 ? "temp/" : "rh/");
        char *end = (char *)key + len;
        len += snprintf(end, (size_t)(BULK_KEY_MAX - len), "%u",
                        (unsigned)i);
        return (size_t)len;
    }
    uint32_t mixed = i * 2654435761u; /* odd multiplier: a bijection */
    /* All 32 bits of mixed, the top byte never 's' (see above). */
    key[0] = (uint8_t)(0x80 | (mixed >> 25));
    key[1] = (uint8_t)(mixed >> 17);
    key[2] = (uint8_t)(mixed >> 9);
    key[3] = (uint8_t)(mixed >> 1);
    key[4] = (uint8_t)(mixed & 1);
    size_t len = 5 + rng_next() % 12;
    for (size_t j = 5; j < len; j++)
        key[j] = (uint8_t)(rng_next() % 4 == 0 ? 0 : rng_next());
    return len;
}

START_TEST(trie_bulk_100k)
{
    static uint8_t keys[BULK_ENTRIES][BULK_KEY_MAX];
    static size_t lens[BULK_ENTRIES];
    zl_trie trie;
    zl_trie_init(&trie);
    rng_seed(1);
    for (uint32_t i = 0; i < BULK_ENTRIES; i++) {
        lens[i] = bulk_key(i, keys[i]);
        EXPECT(zl_trie_add(&trie, keys[i], lens[i]) == 1);
    }
    EXPECT(zl_trie_count(&trie) == BULK_ENTRIES);
    EXPECT(zl_trie_node_count(&trie) <= 2 * BULK_ENTRIES);

    for (uint32_t i = 0; i < BULK_ENTRIES; i++) {
        EXPECT(zl_trie_check(&trie, keys[i], lens[i]));
        /* Every key has at least 5 bytes: 3-byte topics match nothing. */
        EXPECT(!zl_trie_check(&trie, keys[i], 3));
    }
    EXPECT(!zl_trie_check(&trie, "sensors/", 8));
    EXPECT(!zl_trie_check(&trie, "other", 5));

    for (uint32_t i = 0; i < BULK_ENTRIES; i++)
        EXPECT(zl_trie_remove(&trie, keys[i], lens[i]));
    EXPECT(zl_trie_count(&trie) == 0);
    EXPECT(zl_trie_node_count(&trie) == 0);
    zl_trie_destroy(&trie);
}
END_TEST

/* ---- randomized comparison with a naive model ------------------------------
 * Keys over {a, b, NUL} of length 0..4; every topic of length 0..5 is
 * checked after every operation, which walks each split and merge path. */

#define MODEL_ALPHABET 3
#define MODEL_KEY_MAX 4
#define MODEL_TOPIC_MAX 5
#define MODEL_PIPES 3
#define MODEL_OPS 4000

static const uint8_t model_bytes[MODEL_ALPHABET] = {'a', 'b', 0};

/* Keys are numbered: index = its length's offset + its digits in base 3. */
static size_t model_key(size_t index, uint8_t *key)
{
    size_t len = 0;
    size_t span = 1;
    while (index >= span) {
        index -= span;
        span *= MODEL_ALPHABET;
        len++;
    }
    for (size_t j = 0; j < len; j++) {
        key[j] = model_bytes[index % MODEL_ALPHABET];
        index /= MODEL_ALPHABET;
    }
    return len;
}

/* The inverse of model_key. */
static size_t model_index(const uint8_t *key, size_t len)
{
    size_t index = 0;
    size_t span = 1;
    for (size_t j = 0; j < len; j++) {
        index += span;
        span *= MODEL_ALPHABET;
    }
    size_t digits = 0;
    for (size_t j = len; j-- > 0;) {
        size_t digit = 0;
        while (model_bytes[digit] != key[j])
            digit++;
        digits = digits * MODEL_ALPHABET + digit;
    }
    return index + digits;
}

static size_t model_key_total(size_t max_len)
{
    size_t total = 0;
    size_t span = 1;
    for (size_t len = 0; len <= max_len; len++, span *= MODEL_ALPHABET)
        total += span;
    return total;
}

#define MODEL_KEYS 121    /* model_key_total(4) */
#define MODEL_TOPICS 364  /* model_key_total(5) */

START_TEST(trie_matches_naive_model)
{
    EXPECT(model_key_total(MODEL_KEY_MAX) == MODEL_KEYS);
    EXPECT(model_key_total(MODEL_TOPIC_MAX) == MODEL_TOPICS);
    size_t counts[MODEL_KEYS] = {0};
    uint8_t keys[MODEL_KEYS][MODEL_KEY_MAX];
    size_t key_lens[MODEL_KEYS];
    for (size_t k = 0; k < MODEL_KEYS; k++) {
        key_lens[k] = model_key(k, keys[k]);
        EXPECT(model_index(keys[k], key_lens[k]) == k);
    }

    zl_trie trie;
    zl_trie_init(&trie);
    rng_seed(7);
    for (int op = 0; op < MODEL_OPS; op++) {
        size_t k = rng_next() % MODEL_KEYS;
        /* Lean towards adds early and removes late, so the tree both fills
         * up and drains. */
        bool add = rng_next() % MODEL_OPS > (uint32_t)op;
        if (add) {
            EXPECT(zl_trie_add(&trie, keys[k], key_lens[k]) ==
                   (counts[k] == 0));
            counts[k]++;
        } else {
            EXPECT(zl_trie_remove(&trie, keys[k], key_lens[k]) ==
                      (counts[k] == 1));
            if (counts[k] > 0)
                counts[k]--;
        }
        size_t distinct = 0;
        for (size_t j = 0; j < MODEL_KEYS; j++)
            distinct += counts[j] > 0;
        EXPECT(zl_trie_count(&trie) == distinct);
        EXPECT(zl_trie_node_count(&trie) <= 2 * distinct);
        for (size_t t = 0; t < MODEL_TOPICS; t++) {
            uint8_t topic[MODEL_TOPIC_MAX];
            size_t topic_len = model_key(t, topic);
            bool expected = false;
            for (size_t len = 0; len <= topic_len && len <= MODEL_KEY_MAX;
                 len++)
                expected |= counts[model_index(topic, len)] > 0;
            EXPECT(zl_trie_check(&trie, topic, topic_len) == expected);
        }
    }
    zl_trie_destroy(&trie);
    EXPECT(zl_trie_node_count(&trie) == 0);
}
END_TEST

/* ---- zl_mtrie ------------------------------------------------------------ */

static int pipes[3000];

struct calls {
    size_t per_pipe[3000];
    size_t total;
    /* The pipes with a non-zero count, so a reset costs what was used. */
    size_t touched[3000];
    size_t touched_count;
};

static void count_call(void *pipe, void *arg)
{
    struct calls *calls = arg;
    size_t index = (size_t)((int *)pipe - pipes);
    if (calls->per_pipe[index]++ == 0)
        calls->touched[calls->touched_count++] = index;
    calls->total++;
}

/* The calls of one match; valid until the next. */
static const struct calls *match(const zl_mtrie *mtrie, const void *data,
                                 size_t len)
{
    static struct calls calls;
    for (size_t i = 0; i < calls.touched_count; i++)
        calls.per_pipe[calls.touched[i]] = 0;
    calls.touched_count = 0;
    calls.total = 0;
    zl_mtrie_match(mtrie, data, len, count_call, &calls);
    return &calls;
}

START_TEST(mtrie_add_remove)
{
    zl_mtrie mtrie;
    zl_mtrie_init(&mtrie);
    void *p1 = &pipes[1], *p2 = &pipes[2], *p3 = &pipes[3];
    ck_assert_int_eq(zl_mtrie_add(&mtrie, "a", 1, p1), 1);
    ck_assert_int_eq(zl_mtrie_add(&mtrie, "a", 1, p2), 0);
    /* As in libzmq: the same (prefix, pipe) twice is a no-op. */
    ck_assert_int_eq(zl_mtrie_add(&mtrie, "a", 1, p1), 0);
    ck_assert_uint_eq(zl_mtrie_count(&mtrie), 1);

    const struct calls *calls = match(&mtrie, "abc", 3);
    ck_assert_uint_eq(calls->total, 2);
    ck_assert_uint_eq(calls->per_pipe[1], 1);
    ck_assert_uint_eq(calls->per_pipe[2], 1);
    ck_assert_uint_eq(match(&mtrie, "b", 1)->total, 0);
    ck_assert_uint_eq(match(&mtrie, "", 0)->total, 0);

    ck_assert_int_eq(zl_mtrie_remove(&mtrie, "a", 1, p3), ZL_MTRIE_NOT_FOUND);
    ck_assert_int_eq(zl_mtrie_remove(&mtrie, "zz", 2, p1),
                     ZL_MTRIE_NOT_FOUND);
    ck_assert_int_eq(zl_mtrie_remove(&mtrie, "a", 1, p1),
                     ZL_MTRIE_REMOVED_OTHERS_REMAIN);
    ck_assert_int_eq(zl_mtrie_remove(&mtrie, "a", 1, p1), ZL_MTRIE_NOT_FOUND);
    ck_assert_uint_eq(match(&mtrie, "abc", 3)->per_pipe[1], 0);
    ck_assert_int_eq(zl_mtrie_remove(&mtrie, "a", 1, p2),
                     ZL_MTRIE_REMOVED_LAST);
    ck_assert_uint_eq(zl_mtrie_count(&mtrie), 0);
    ck_assert_uint_eq(zl_mtrie_node_count(&mtrie), 0);
    ck_assert_uint_eq(match(&mtrie, "abc", 3)->total, 0);

    /* Inner parts of a label are not subscriptions. */
    ck_assert_int_eq(zl_mtrie_add(&mtrie, "hello", 5, p1), 1);
    ck_assert_int_eq(zl_mtrie_remove(&mtrie, "hel", 3, p1),
                     ZL_MTRIE_NOT_FOUND);
    zl_mtrie_destroy(&mtrie);
    ck_assert_uint_eq(zl_mtrie_node_count(&mtrie), 0);
}
END_TEST

START_TEST(mtrie_match_calls_per_subscriber)
{
    zl_mtrie mtrie;
    zl_mtrie_init(&mtrie);
    void *p1 = &pipes[1], *p2 = &pipes[2];
    ck_assert_int_eq(zl_mtrie_add(&mtrie, "", 0, p1), 1);
    ck_assert_int_eq(zl_mtrie_add(&mtrie, "ab", 2, p1), 1);
    ck_assert_int_eq(zl_mtrie_add(&mtrie, "abc", 3, p2), 1);
    ck_assert_int_eq(zl_mtrie_add(&mtrie, "a\0c", 3, p2), 1);

    /* p1 matches through "" and "ab": called twice, dedup is the caller's. */
    const struct calls *calls = match(&mtrie, "abcd", 4);
    ck_assert_uint_eq(calls->per_pipe[1], 2);
    ck_assert_uint_eq(calls->per_pipe[2], 1);
    ck_assert_uint_eq(calls->total, 3);

    calls = match(&mtrie, "b", 1);
    ck_assert_uint_eq(calls->per_pipe[1], 1);
    ck_assert_uint_eq(calls->total, 1);
    ck_assert_uint_eq(match(&mtrie, "", 0)->total, 1);
    ck_assert_uint_eq(match(&mtrie, NULL, 0)->total, 1);

    calls = match(&mtrie, "a\0cd", 4);
    ck_assert_uint_eq(calls->per_pipe[2], 1);
    ck_assert_uint_eq(calls->total, 2);
    ck_assert_uint_eq(match(&mtrie, "a\0", 2)->per_pipe[2], 0);
    zl_mtrie_destroy(&mtrie);
}
END_TEST

struct removed {
    char prefixes[8][8];
    size_t lens[8];
    size_t count;
};

static void collect_removed(const uint8_t *prefix, size_t len, void *arg)
{
    struct removed *out = arg;
    ck_assert_uint_lt(out->count, 8);
    ck_assert_uint_le(len, 8);
    memcpy(out->prefixes[out->count], prefix, len);
    out->lens[out->count++] = len;
}

static bool removed_has(const struct removed *out, const char *prefix,
                        size_t len)
{
    for (size_t i = 0; i < out->count; i++)
        if (out->lens[i] == len && memcmp(out->prefixes[i], prefix, len) == 0)
            return true;
    return false;
}

START_TEST(mtrie_rm_pipe)
{
    zl_mtrie mtrie;
    zl_mtrie_init(&mtrie);
    void *p1 = &pipes[1], *p2 = &pipes[2];
    zl_mtrie_add(&mtrie, "a", 1, p1);
    zl_mtrie_add(&mtrie, "ab", 2, p1);
    zl_mtrie_add(&mtrie, "x\0", 2, p1);
    zl_mtrie_add(&mtrie, "", 0, p1);
    zl_mtrie_add(&mtrie, "ab", 2, p2);
    zl_mtrie_add(&mtrie, "y", 1, p2);

    /* Only the prefixes p1 held alone are reported. */
    struct removed out = {0};
    zl_mtrie_rm_pipe(&mtrie, p1, collect_removed, &out);
    ck_assert_uint_eq(out.count, 3);
    ck_assert(removed_has(&out, "a", 1));
    ck_assert(removed_has(&out, "x\0", 2));
    ck_assert(removed_has(&out, "", 0));
    ck_assert_uint_eq(zl_mtrie_count(&mtrie), 2);
    ck_assert_uint_eq(match(&mtrie, "abc", 3)->per_pipe[1], 0);
    ck_assert_uint_eq(match(&mtrie, "abc", 3)->per_pipe[2], 1);
    ck_assert_uint_eq(zl_mtrie_node_count(&mtrie), 3); /* "" → ab, y */

    /* A pipe with nothing left is a no-op. */
    memset(&out, 0, sizeof out);
    zl_mtrie_rm_pipe(&mtrie, p1, collect_removed, &out);
    ck_assert_uint_eq(out.count, 0);

    /* Verbose reports every prefix the pipe left, shared or not. */
    zl_mtrie_add(&mtrie, "ab", 2, p1);
    zl_mtrie_rm_pipe_verbose(&mtrie, p2, collect_removed, &out);
    ck_assert_uint_eq(out.count, 2);
    ck_assert(removed_has(&out, "ab", 2));
    ck_assert(removed_has(&out, "y", 1));
    ck_assert_uint_eq(zl_mtrie_count(&mtrie), 1);
    ck_assert_uint_eq(zl_mtrie_node_count(&mtrie), 1);

    zl_mtrie_rm_pipe(&mtrie, p1, NULL, NULL);
    ck_assert_uint_eq(zl_mtrie_count(&mtrie), 0);
    ck_assert_uint_eq(zl_mtrie_node_count(&mtrie), 0);
    zl_mtrie_destroy(&mtrie);
}
END_TEST

static void count_prefix(const uint8_t *prefix, size_t len, void *arg)
{
    (*(size_t *)arg)++;
}

START_TEST(mtrie_many_subscribers)
{
    zl_mtrie mtrie;
    zl_mtrie_init(&mtrie);
    const size_t n = sizeof pipes / sizeof pipes[0];
    for (size_t i = 0; i < n; i++)
        EXPECT(zl_mtrie_add(&mtrie, "t", 1, &pipes[i]) == (i == 0));
    for (size_t i = 0; i < n; i += 7)
        EXPECT(zl_mtrie_add(&mtrie, "t", 1, &pipes[i]) == 0);

    const struct calls *calls = match(&mtrie, "topic", 5);
    EXPECT(calls->total == n);
    for (size_t i = 0; i < n; i++)
        EXPECT(calls->per_pipe[i] == 1);

    for (size_t i = 0; i < n / 2; i++)
        EXPECT(zl_mtrie_remove(&mtrie, "t", 1, &pipes[i]) ==
               ZL_MTRIE_REMOVED_OTHERS_REMAIN);
    EXPECT(match(&mtrie, "t", 1)->total == n - n / 2);

    size_t emptied = 0;
    for (size_t i = n / 2; i < n; i++)
        zl_mtrie_rm_pipe(&mtrie, &pipes[i], count_prefix, &emptied);
    EXPECT(emptied == 1);
    EXPECT(zl_mtrie_node_count(&mtrie) == 0);
    zl_mtrie_destroy(&mtrie);
}
END_TEST

START_TEST(trie_full_fan_out)
{
    /* Every byte value under one node: the child array grows to 256 and
     * shrinks back as they go. */
    zl_trie trie;
    zl_trie_init(&trie);
    for (int byte = 0; byte < 256; byte++) {
        uint8_t key[2] = {'x', (uint8_t)byte};
        EXPECT(zl_trie_add(&trie, key, 2) == 1);
        EXPECT(zl_trie_add(&trie, key + 1, 1) == 1);
    }
    ck_assert_uint_eq(zl_trie_count(&trie), 512);
    for (int byte = 255; byte >= 0; byte--) {
        uint8_t key[2] = {'x', (uint8_t)byte};
        EXPECT(zl_trie_check(&trie, key + 1, 1));
        EXPECT(zl_trie_remove(&trie, key + 1, 1));
        EXPECT(!zl_trie_check(&trie, key + 1, 1));
        EXPECT(zl_trie_check(&trie, key, 2));
    }
    ck_assert(!zl_trie_check(&trie, "y", 1));
    for (int byte = 0; byte < 256; byte++) {
        uint8_t key[2] = {'x', (uint8_t)byte};
        EXPECT(zl_trie_remove(&trie, key, 2));
        EXPECT(!zl_trie_check(&trie, key, 2));
    }
    ck_assert_uint_eq(zl_trie_node_count(&trie), 0);
    zl_trie_destroy(&trie);
}
END_TEST

#define DEEP_LEVELS 3000

/* "a", "aa", "aaa", …: one node per level, as deep as a peer can make it.
 * Walks over it must not recurse. */
START_TEST(deep_nested_prefixes)
{
    static uint8_t key[DEEP_LEVELS + 1];
    memset(key, 'a', sizeof key);
    zl_trie trie;
    zl_trie_init(&trie);
    zl_mtrie mtrie;
    zl_mtrie_init(&mtrie);
    for (size_t len = 1; len <= DEEP_LEVELS; len++) {
        EXPECT(zl_trie_add(&trie, key, len) == 1);
        EXPECT(zl_mtrie_add(&mtrie, key, len, &pipes[len % 2]) == 1);
    }
    ck_assert_uint_eq(zl_trie_node_count(&trie), DEEP_LEVELS);
    ck_assert_uint_eq(match(&mtrie, key, DEEP_LEVELS + 1)->total,
                      DEEP_LEVELS);
    ck_assert_uint_eq(match(&mtrie, key, 10)->per_pipe[0], 5);

    size_t visited = 0;
    zl_trie_apply(&trie, count_prefix, &visited);
    ck_assert_uint_eq(visited, DEEP_LEVELS);

    size_t emptied = 0;
    zl_mtrie_rm_pipe(&mtrie, &pipes[0], count_prefix, &emptied);
    ck_assert_uint_eq(emptied, DEEP_LEVELS / 2);
    ck_assert_uint_eq(match(&mtrie, key, DEEP_LEVELS)->per_pipe[1],
                      DEEP_LEVELS / 2);

    /* A long prefix next to the chain, then teardown with it all in place. */
    static uint8_t long_key[100000];
    memset(long_key, 'b', sizeof long_key);
    EXPECT(zl_trie_add(&trie, long_key, sizeof long_key) == 1);
    EXPECT(zl_trie_check(&trie, long_key, sizeof long_key));
    EXPECT(!zl_trie_check(&trie, long_key, sizeof long_key - 1));
    zl_trie_destroy(&trie);
    zl_mtrie_destroy(&mtrie);
    ck_assert_uint_eq(zl_trie_node_count(&trie), 0);
    ck_assert_uint_eq(zl_mtrie_node_count(&mtrie), 0);
}
END_TEST

#define BULK_PIPES 8

START_TEST(mtrie_bulk_100k)
{
    static uint8_t keys[BULK_ENTRIES][BULK_KEY_MAX];
    static size_t lens[BULK_ENTRIES];
    zl_mtrie mtrie;
    zl_mtrie_init(&mtrie);
    rng_seed(2);
    for (uint32_t i = 0; i < BULK_ENTRIES; i++) {
        lens[i] = bulk_key(i, keys[i]);
        void *pipe = &pipes[i % BULK_PIPES];
        EXPECT(zl_mtrie_add(&mtrie, keys[i], lens[i], pipe) == 1);
    }
    /* A second subscriber on every fourth prefix. */
    for (uint32_t i = 0; i < BULK_ENTRIES; i += 4) {
        void *pipe = &pipes[(i + 1) % BULK_PIPES];
        EXPECT(zl_mtrie_add(&mtrie, keys[i], lens[i], pipe) == 0);
    }
    EXPECT(zl_mtrie_count(&mtrie) == BULK_ENTRIES);
    EXPECT(zl_mtrie_node_count(&mtrie) <= 2 * BULK_ENTRIES);

    for (uint32_t i = 0; i < BULK_ENTRIES; i++) {
        const struct calls *calls = match(&mtrie, keys[i], lens[i]);
        EXPECT(calls->per_pipe[i % BULK_PIPES] >= 1);
        if (i % 4 == 0)
            EXPECT(calls->per_pipe[(i + 1) % BULK_PIPES] >= 1);
        EXPECT(match(&mtrie, keys[i], 3)->total == 0);
    }

    size_t emptied = 0;
    for (int p = 0; p < BULK_PIPES; p++)
        zl_mtrie_rm_pipe(&mtrie, &pipes[p], count_prefix, &emptied);
    EXPECT(emptied == BULK_ENTRIES);
    EXPECT(zl_mtrie_count(&mtrie) == 0);
    EXPECT(zl_mtrie_node_count(&mtrie) == 0);
    zl_mtrie_destroy(&mtrie);
}
END_TEST

START_TEST(mtrie_matches_naive_model)
{
    bool subscribed[MODEL_KEYS][MODEL_PIPES] = {{false}};
    uint8_t keys[MODEL_KEYS][MODEL_KEY_MAX];
    size_t key_lens[MODEL_KEYS];
    for (size_t k = 0; k < MODEL_KEYS; k++) {
        key_lens[k] = model_key(k, keys[k]);
        EXPECT(model_index(keys[k], key_lens[k]) == k);
    }

    zl_mtrie mtrie;
    zl_mtrie_init(&mtrie);
    rng_seed(11);
    for (int op = 0; op < MODEL_OPS; op++) {
        size_t k = rng_next() % MODEL_KEYS;
        size_t p = rng_next() % MODEL_PIPES;
        uint32_t kind = rng_next() % 100;
        bool any_before = false;
        for (size_t q = 0; q < MODEL_PIPES; q++)
            any_before |= subscribed[k][q];
        if (kind < 2) {
            /* Rarely, drop a whole pipe, half the time verbosely. */
            bool verbose = kind == 0;
            size_t reported = 0, expected = 0;
            for (size_t j = 0; j < MODEL_KEYS; j++) {
                bool others = false;
                for (size_t q = 0; q < MODEL_PIPES; q++)
                    others |= q != p && subscribed[j][q];
                expected += subscribed[j][p] && (verbose || !others);
                subscribed[j][p] = false;
            }
            if (verbose)
                zl_mtrie_rm_pipe_verbose(&mtrie, &pipes[p], count_prefix,
                                         &reported);
            else
                zl_mtrie_rm_pipe(&mtrie, &pipes[p], count_prefix, &reported);
            EXPECT(reported == expected);
        } else if (rng_next() % MODEL_OPS > (uint32_t)op) {
            EXPECT(zl_mtrie_add(&mtrie, keys[k], key_lens[k], &pipes[p]) ==
                   !any_before);
            subscribed[k][p] = true;
        } else {
            zl_mtrie_rm_result expected = ZL_MTRIE_NOT_FOUND;
            if (subscribed[k][p]) {
                subscribed[k][p] = false;
                bool others = false;
                for (size_t q = 0; q < MODEL_PIPES; q++)
                    others |= subscribed[k][q];
                expected = others ? ZL_MTRIE_REMOVED_OTHERS_REMAIN
                                  : ZL_MTRIE_REMOVED_LAST;
            }
            EXPECT(zl_mtrie_remove(&mtrie, keys[k], key_lens[k], &pipes[p]) ==
                   expected);
        }
        size_t distinct = 0;
        for (size_t j = 0; j < MODEL_KEYS; j++) {
            bool any = false;
            for (size_t q = 0; q < MODEL_PIPES; q++)
                any |= subscribed[j][q];
            distinct += any;
        }
        EXPECT(zl_mtrie_count(&mtrie) == distinct);
        EXPECT(zl_mtrie_node_count(&mtrie) <= 2 * distinct);
        for (size_t t = 0; t < MODEL_TOPICS; t++) {
            uint8_t topic[MODEL_TOPIC_MAX];
            size_t topic_len = model_key(t, topic);
            size_t expected[MODEL_PIPES] = {0};
            for (size_t len = 0; len <= topic_len && len <= MODEL_KEY_MAX;
                 len++) {
                size_t j = model_index(topic, len);
                for (size_t q = 0; q < MODEL_PIPES; q++)
                    expected[q] += subscribed[j][q];
            }
            const struct calls *calls = match(&mtrie, topic, topic_len);
            for (size_t q = 0; q < MODEL_PIPES; q++)
                EXPECT(calls->per_pipe[q] == expected[q]);
        }
    }
    zl_mtrie_destroy(&mtrie);
    EXPECT(zl_mtrie_node_count(&mtrie) == 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("trie");
    TCase *trie = tcase_create("trie");
    tcase_add_test(trie, trie_add_remove_counts);
    tcase_add_test(trie, trie_prefixes_and_non_matches);
    tcase_add_test(trie, trie_empty_prefix_matches_everything);
    tcase_add_test(trie, trie_binary_topics_with_nul);
    tcase_add_test(trie, trie_nodes_split_and_merge);
    tcase_add_test(trie, trie_apply_visits_each_prefix_once);
    tcase_add_test(trie, trie_full_fan_out);
    tcase_add_test(trie, trie_bulk_100k);
    tcase_add_test(trie, trie_matches_naive_model);
    suite_add_tcase(s, trie);

    TCase *mtrie = tcase_create("mtrie");
    tcase_add_test(mtrie, mtrie_add_remove);
    tcase_add_test(mtrie, mtrie_match_calls_per_subscriber);
    tcase_add_test(mtrie, mtrie_rm_pipe);
    tcase_add_test(mtrie, mtrie_many_subscribers);
    tcase_add_test(mtrie, mtrie_bulk_100k);
    tcase_add_test(mtrie, deep_nested_prefixes);
    tcase_add_test(mtrie, mtrie_matches_naive_model);
    suite_add_tcase(s, mtrie);
    return s;
}

int main(void) { return zl_test_run(suite()); }
