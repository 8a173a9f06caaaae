/* trie.h — subscription stores: a counted prefix set for SUB/XSUB (zl_trie)
 * and a prefix → subscribers map for PUB/XPUB (zl_mtrie).
 *
 * Both are one radix tree (a prefix tree whose edges carry whole byte runs),
 * so matching a topic costs work in proportion to the topic's length, not to
 * the number of subscriptions, and the memory held is proportional to the
 * bytes of the prefixes stored: every node holds a value or forks, so there
 * are fewer than two nodes per stored prefix. Prefixes and topics are binary
 * (NUL bytes are ordinary bytes); the empty prefix matches every topic.
 *
 * Neither store is thread-safe; each belongs to one socket. Callbacks must not
 * modify the store they are called from, and a prefix handed to a callback
 * is valid only during that call. */
#ifndef ZL_TRIE_H
#define ZL_TRIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct zl_radix_node;

/* The tree both stores share. Its fields are private to trie.c; it is in the
 * header only so that sockets can embed a store without another allocation. */
typedef struct zl_radix {
    struct zl_radix_node *root;
    size_t node_count;
    size_t prefix_count; /* nodes holding a value */
    /* Holds the prefix of the node being visited during a walk, so walks
     * never allocate; it is kept as long as the longest prefix added. */
    uint8_t *scratch;
    size_t scratch_capacity;
} zl_radix;

/* ---- zl_trie: counted prefix set (SUB, XSUB) ---------------------------- */

typedef struct zl_trie {
    zl_radix radix;
} zl_trie;

typedef void zl_trie_prefix_fn(const uint8_t *prefix, size_t len, void *arg);

void zl_trie_init(zl_trie *trie);
void zl_trie_destroy(zl_trie *trie);

/* Adds one reference to prefix. Returns 1 when the prefix is new (its count
 * went 0→1), 0 when it was already there, and -1 with errno ENOMEM (nothing
 * changed). */
int zl_trie_add(zl_trie *trie, const void *prefix, size_t len);

/* Drops one reference. True when the count went 1→0 and the prefix is gone;
 * false when references remain or the prefix was absent. */
bool zl_trie_remove(zl_trie *trie, const void *prefix, size_t len);

/* True if any stored prefix, the empty one included, starts data. */
bool zl_trie_check(const zl_trie *trie, const void *data, size_t len);

/* Number of distinct prefixes stored. */
size_t zl_trie_count(const zl_trie *trie);

/* Calls fn once per distinct stored prefix, in no particular order (to
 * resend subscriptions after a reconnect). */
void zl_trie_apply(zl_trie *trie, zl_trie_prefix_fn *fn, void *arg);

/* Nodes allocated; for tests of the memory bound (0 when empty). */
size_t zl_trie_node_count(const zl_trie *trie);

/* ---- zl_mtrie: prefix → subscriber pipes (PUB, XPUB) ------------------- */

/* A pipe is subscribed to a prefix at most once (as in libzmq's mtrie):
 * adding the same (prefix, pipe) twice is a no-op, and one remove undoes it. */
typedef struct zl_mtrie {
    zl_radix radix;
} zl_mtrie;

typedef enum zl_mtrie_rm_result {
    ZL_MTRIE_NOT_FOUND,            /* the pipe was not subscribed to it */
    ZL_MTRIE_REMOVED_LAST,         /* no subscriber is left for the prefix */
    ZL_MTRIE_REMOVED_OTHERS_REMAIN /* other pipes still subscribe to it */
} zl_mtrie_rm_result;

typedef void zl_mtrie_prefix_fn(const uint8_t *prefix, size_t len, void *arg);
typedef void zl_mtrie_pipe_fn(void *pipe, void *arg);

void zl_mtrie_init(zl_mtrie *mtrie);
void zl_mtrie_destroy(zl_mtrie *mtrie);

/* Subscribes pipe to prefix. Returns 1 when the prefix is new to the whole
 * trie (its first subscriber: XPUB forwards only these upstream), 0 when it
 * already had subscribers (this pipe among them or not), and -1 with errno
 * ENOMEM (nothing changed). */
int zl_mtrie_add(zl_mtrie *mtrie, const void *prefix, size_t len, void *pipe);

zl_mtrie_rm_result zl_mtrie_remove(zl_mtrie *mtrie, const void *prefix,
                                   size_t len, void *pipe);

/* Unsubscribes pipe from every prefix (the pipe is going away). fn, if not
 * NULL, is called for each prefix that lost its last subscriber, before that
 * prefix is dropped. Never fails. */
void zl_mtrie_rm_pipe(zl_mtrie *mtrie, void *pipe, zl_mtrie_prefix_fn *fn,
                      void *arg);

/* As zl_mtrie_rm_pipe, but fn is called for every prefix pipe was
 * subscribed to, whether or not others remain (ZLINK_XPUB_VERBOSER). */
void zl_mtrie_rm_pipe_verbose(zl_mtrie *mtrie, void *pipe,
                              zl_mtrie_prefix_fn *fn, void *arg);

/* Calls fn once per subscriber of each stored prefix that starts data. A pipe
 * subscribed to two matching prefixes is called twice: as in libzmq, the
 * caller deduplicates (for example by marking pipes as it goes). */
void zl_mtrie_match(const zl_mtrie *mtrie, const void *data, size_t len,
                    zl_mtrie_pipe_fn *fn, void *arg);

/* Number of distinct prefixes with at least one subscriber. */
size_t zl_mtrie_count(const zl_mtrie *mtrie);

/* Nodes allocated; for tests of the memory bound (0 when empty). */
size_t zl_mtrie_node_count(const zl_mtrie *mtrie);

#endif
