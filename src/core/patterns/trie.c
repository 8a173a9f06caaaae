/* trie.c — the radix tree behind the subscription stores, and the counted
 * (zl_trie) and multi-subscriber (zl_mtrie) stores built on it. */
#include "trie.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Shape: every node except the root holds a value (refs > 0) or has at least
 * two children, so the tree has fewer than two nodes per stored prefix.
 * Non-root labels are never empty, and a node's children differ in their
 * first byte. Removals restore the shape by deleting and merging nodes; a
 * merge needs a realloc, and if that fails the node simply stays, which costs
 * memory but never correctness.
 *
 * Nodes point at their parent so that walks over the whole tree (apply,
 * rm_pipe, destroy) need no stack: a remote peer can make the tree as deep as
 * its subscriptions are long, and neither recursion nor an allocation that
 * might fail belongs on the path that drops a pipe. */

/* A pipe array is made when a prefix gets its second subscriber. */
#define FIRST_PIPE_CAPACITY 4
#define FIRST_SCRATCH_CAPACITY 64
/* Children are indexed by one byte. */
#define MAX_CHILDREN 256

typedef struct zl_radix_node radix_node;

struct zl_radix_node {
    radix_node *parent;
    /* One block: child_capacity child pointers sorted by first label byte,
     * then child_capacity copies of those bytes, so that a lookup's binary
     * search reads one small array instead of every child. */
    radix_node **children;
    union {
        void *one;   /* pipes_capacity == 0: the only subscriber */
        void **many; /* otherwise: refs subscribers, in no order */
    } pipes;         /* zl_mtrie only */
    size_t refs;     /* zl_trie: times added; zl_mtrie: subscribers */
    size_t label_len;
    uint32_t pipes_capacity;
    uint16_t child_count;
    uint16_t child_capacity;
    uint8_t label[];
};

/* A NULL data pointer is fine with a zero length; this keeps pointer
 * arithmetic and memcmp off NULL. */
static const uint8_t *bytes_of(const void *data, size_t len)
{
    static const uint8_t empty[1];
    return len > 0 ? (const uint8_t *)data : empty;
}

/* ---- children ----------------------------------------------------------- */

static uint8_t *child_keys(const radix_node *node)
{
    return (uint8_t *)(node->children + node->child_capacity);
}

/* Index of the first child whose first byte is not below byte (which may be
 * 256, meaning past every child). */
static size_t child_lower_bound(const radix_node *node, unsigned byte)
{
    if (node->child_count == 0)
        return 0;
    const uint8_t *keys = child_keys(node);
    size_t low = 0;
    size_t high = node->child_count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (keys[mid] < byte)
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

static radix_node *child_find(const radix_node *node, uint8_t byte)
{
    size_t index = child_lower_bound(node, byte);
    if (index < node->child_count && child_keys(node)[index] == byte)
        return node->children[index];
    return NULL;
}

static int child_resize(radix_node *node, uint16_t capacity)
{
    if (capacity == 0) {
        free(node->children);
        node->children = NULL;
        node->child_capacity = 0;
        return 0;
    }
    radix_node **children = malloc(capacity * (sizeof *children + 1));
    if (!children)
        return -1;
    if (node->child_count > 0) {
        memcpy(children, node->children,
               node->child_count * sizeof *children);
        memcpy(children + capacity, child_keys(node), node->child_count);
    }
    free(node->children);
    node->children = children;
    node->child_capacity = capacity;
    return 0;
}

/* Needs a free slot (child_count < child_capacity). */
static void child_insert(radix_node *node, size_t index, radix_node *child)
{
    uint8_t *keys = child_keys(node);
    size_t tail = node->child_count - index;
    memmove(node->children + index + 1, node->children + index,
            tail * sizeof *node->children);
    memmove(keys + index + 1, keys + index, tail);
    node->children[index] = child;
    keys[index] = child->label[0];
    node->child_count++;
    child->parent = node;
}

static void child_remove(radix_node *node, size_t index)
{
    uint8_t *keys = child_keys(node);
    size_t tail = node->child_count - index - 1;
    memmove(node->children + index, node->children + index + 1,
            tail * sizeof *node->children);
    memmove(keys + index, keys + index + 1, tail);
    node->child_count--;
    /* Give memory back as the fan-out falls, with slack against churn. A
     * failed shrink keeps the larger array, which is still correct. */
    if (node->child_count == 0)
        child_resize(node, 0);
    else if (node->child_capacity > 2 &&
             node->child_count <= node->child_capacity / 4)
        child_resize(node, (uint16_t)(node->child_capacity / 2));
}

/* After a realloc moved node. */
static void adopt_children(radix_node *node)
{
    for (size_t i = 0; i < node->child_count; i++)
        node->children[i]->parent = node;
}

/* The pointer that refers to node: the root, or its entry in its parent. */
static radix_node **slot_of(zl_radix *radix, const radix_node *node)
{
    if (!node->parent)
        return &radix->root;
    size_t index = child_lower_bound(node->parent, node->label[0]);
    return &node->parent->children[index];
}

/* ---- subscriber sets (zl_mtrie) ------------------------------------------ */

static void *const *pipeset_items(const radix_node *node)
{
    return node->pipes_capacity > 0 ? node->pipes.many : &node->pipes.one;
}

static bool pipeset_find(const radix_node *node, const void *pipe,
                         size_t *index)
{
    void *const *items = pipeset_items(node);
    for (size_t i = 0; i < node->refs; i++) {
        if (items[i] == pipe) {
            *index = i;
            return true;
        }
    }
    return false;
}

static int pipeset_add(radix_node *node, void *pipe)
{
    /* Most prefixes have one subscriber: it lives in the node itself. */
    if (node->refs == 0) {
        node->pipes.one = pipe;
        node->refs = 1;
        return 0;
    }
    if (node->pipes_capacity == 0) {
        void **many = malloc(FIRST_PIPE_CAPACITY * sizeof *many);
        if (!many)
            return -1;
        many[0] = node->pipes.one;
        node->pipes.many = many;
        node->pipes_capacity = FIRST_PIPE_CAPACITY;
    } else if (node->refs == node->pipes_capacity) {
        if (node->pipes_capacity > UINT32_MAX / 2)
            return -1;
        uint32_t capacity = node->pipes_capacity * 2;
        void **many = realloc(node->pipes.many, capacity * sizeof *many);
        if (!many)
            return -1;
        node->pipes.many = many;
        node->pipes_capacity = capacity;
    }
    node->pipes.many[node->refs++] = pipe;
    return 0;
}

static bool pipeset_remove(radix_node *node, const void *pipe)
{
    size_t index;
    if (!pipeset_find(node, pipe, &index))
        return false;
    if (node->pipes_capacity == 0) {
        node->pipes.one = NULL;
        node->refs = 0;
        return true;
    }
    void **many = node->pipes.many;
    many[index] = many[--node->refs];
    if (node->refs == 1) {
        node->pipes.one = many[0];
        node->pipes_capacity = 0;
        free(many);
    } else if (node->pipes_capacity > FIRST_PIPE_CAPACITY &&
               node->refs <= node->pipes_capacity / 4) {
        uint32_t capacity = node->pipes_capacity / 2;
        many = realloc(many, capacity * sizeof *many);
        if (many) {
            node->pipes.many = many;
            node->pipes_capacity = capacity;
        }
    }
    return true;
}

static void pipeset_clear(radix_node *node)
{
    if (node->pipes_capacity > 0)
        free(node->pipes.many);
    node->pipes.one = NULL;
    node->pipes_capacity = 0;
}

/* ---- nodes -------------------------------------------------------------- */

static radix_node *node_new(zl_radix *radix, const uint8_t *label, size_t len,
                            uint16_t child_capacity)
{
    if (len > SIZE_MAX - sizeof(radix_node))
        return NULL;
    radix_node *node = malloc(sizeof *node + len);
    if (!node)
        return NULL;
    memset(node, 0, sizeof *node);
    if (child_capacity > 0 && child_resize(node, child_capacity) != 0) {
        free(node);
        return NULL;
    }
    if (len > 0)
        memcpy(node->label, label, len);
    node->label_len = len;
    radix->node_count++;
    return node;
}

static void node_free(zl_radix *radix, radix_node *node)
{
    pipeset_clear(node);
    free(node->children);
    free(node);
    radix->node_count--;
}

static bool label_starts(const radix_node *node, const uint8_t *data,
                         size_t len)
{
    return node->label_len <= len &&
           (node->label_len == 0 ||
            memcmp(node->label, data, node->label_len) == 0);
}

static size_t common_prefix(const uint8_t *a, size_t a_len, const uint8_t *b,
                            size_t b_len)
{
    size_t limit = a_len < b_len ? a_len : b_len;
    size_t i = 0;
    while (i < limit && a[i] == b[i])
        i++;
    return i;
}

/* ---- the tree ------------------------------------------------------------ */

static void scratch_release_if_empty(zl_radix *radix)
{
    if (radix->root)
        return;
    free(radix->scratch);
    radix->scratch = NULL;
    radix->scratch_capacity = 0;
}

static int scratch_reserve(zl_radix *radix, size_t len)
{
    if (len <= radix->scratch_capacity)
        return 0;
    size_t capacity = radix->scratch_capacity > 0 ? radix->scratch_capacity
                                                  : FIRST_SCRATCH_CAPACITY;
    while (capacity < len)
        capacity = capacity > SIZE_MAX / 2 ? len : capacity * 2;
    uint8_t *scratch = realloc(radix->scratch, capacity);
    if (!scratch)
        return -1;
    radix->scratch = scratch;
    radix->scratch_capacity = capacity;
    return 0;
}

/* x's label diverges from the key after common bytes: a new node p takes
 * those bytes and x keeps the rest, below p. The key's remaining bytes, if
 * any, become a new leaf beside x. Returns the key's node. */
static radix_node *split_edge(zl_radix *radix, radix_node **slot,
                              radix_node *x, size_t common,
                              const uint8_t *rest, size_t rest_len)
{
    /* Allocate everything first, so that failure leaves the tree alone. */
    radix_node *p = node_new(radix, x->label, common, 2);
    if (!p)
        return NULL;
    radix_node *leaf = NULL;
    if (rest_len > 0) {
        leaf = node_new(radix, rest, rest_len, 0);
        if (!leaf) {
            node_free(radix, p);
            return NULL;
        }
    }
    p->parent = x->parent;
    *slot = p;
    x->label_len -= common;
    memmove(x->label, x->label + common, x->label_len);
    radix_node *shrunk = realloc(x, sizeof *x + x->label_len);
    if (shrunk && shrunk != x) {
        x = shrunk;
        adopt_children(x);
    }
    child_insert(p, child_lower_bound(p, x->label[0]), x);
    if (!leaf)
        return p;
    child_insert(p, child_lower_bound(p, leaf->label[0]), leaf);
    return leaf;
}

static radix_node *add_leaf(zl_radix *radix, radix_node *parent, size_t index,
                            const uint8_t *key, size_t len)
{
    radix_node *leaf = node_new(radix, key, len, 0);
    if (!leaf)
        return NULL;
    if (parent->child_count == parent->child_capacity) {
        unsigned capacity = parent->child_capacity ? parent->child_capacity * 2u
                                                   : 2u;
        if (capacity > MAX_CHILDREN)
            capacity = MAX_CHILDREN;
        if (child_resize(parent, (uint16_t)capacity) != 0) {
            node_free(radix, leaf);
            return NULL;
        }
    }
    child_insert(parent, index, leaf);
    return leaf;
}

/* The node for key, made (splitting an edge if needed) when absent. A new
 * node holds no value yet. NULL on OOM, with the tree unchanged. */
static radix_node *radix_insert(zl_radix *radix, const uint8_t *key,
                                size_t len)
{
    if (scratch_reserve(radix, len) != 0)
        return NULL;
    radix_node **slot = &radix->root;
    for (;;) {
        radix_node *node = *slot;
        if (!node) {
            /* Only an empty tree has an empty slot. */
            node = node_new(radix, key, len, 0);
            *slot = node;
            return node;
        }
        size_t common = common_prefix(node->label, node->label_len, key, len);
        if (common < node->label_len)
            return split_edge(radix, slot, node, common, key + common,
                              len - common);
        key += common;
        len -= common;
        if (len == 0)
            return node;
        size_t index = child_lower_bound(node, key[0]);
        if (index == node->child_count || child_keys(node)[index] != key[0])
            return add_leaf(radix, node, index, key, len);
        slot = &node->children[index];
    }
}

/* The node whose full prefix is exactly key, if any; it may hold no value. */
static radix_node *radix_find(const zl_radix *radix, const uint8_t *key,
                              size_t len)
{
    radix_node *node = radix->root;
    while (node && label_starts(node, key, len)) {
        key += node->label_len;
        len -= node->label_len;
        if (len == 0)
            return node;
        node = child_find(node, key[0]);
    }
    return NULL;
}

/* node has no value and one child: the child absorbs node's label and takes
 * its place. */
static void merge_with_child(zl_radix *radix, radix_node *node)
{
    radix_node **slot = slot_of(radix, node);
    radix_node *child = node->children[0];
    size_t len = node->label_len + child->label_len;
    radix_node *merged = realloc(child, sizeof *child + len);
    if (!merged)
        return;
    memmove(merged->label + node->label_len, merged->label,
            merged->label_len);
    if (node->label_len > 0)
        memcpy(merged->label, node->label, node->label_len);
    merged->label_len = len;
    merged->parent = node->parent;
    adopt_children(merged);
    *slot = merged;
    node_free(radix, node);
}

/* Restores the shape at node after it lost its value or a child: a valueless
 * leaf goes, and a valueless node with one child merges into it. Returns the
 * parent when node was deleted (the parent may now need the same), else
 * NULL. Touches nothing above node. */
static radix_node *prune_node(zl_radix *radix, radix_node *node)
{
    if (node->refs > 0 || node->child_count > 1)
        return NULL;
    if (node->child_count == 1) {
        merge_with_child(radix, node);
        return NULL;
    }
    radix_node *parent = node->parent;
    if (parent)
        child_remove(parent, child_lower_bound(parent, node->label[0]));
    else
        radix->root = NULL;
    node_free(radix, node);
    return parent;
}

static void radix_prune(zl_radix *radix, radix_node *node)
{
    while (node)
        node = prune_node(radix, node);
    scratch_release_if_empty(radix);
}

/* Appends node's label to the prefix in scratch; returns the new length. */
static size_t scratch_append(zl_radix *radix, size_t len,
                             const radix_node *node)
{
    if (node->label_len > 0)
        memcpy(radix->scratch + len, node->label, node->label_len);
    return len + node->label_len;
}

static const uint8_t *scratch_prefix(const zl_radix *radix)
{
    return radix->scratch ? radix->scratch : bytes_of(NULL, 0);
}

static radix_node *descend_leftmost(zl_radix *radix, radix_node *node,
                                    size_t *len)
{
    while (node->child_count > 0) {
        node = node->children[0];
        *len = scratch_append(radix, *len, node);
    }
    return node;
}

/* visit gets each node with its full prefix in scratch[0, len). It may free
 * or merge that node, but not touch its ancestors. */
typedef void walk_fn(zl_radix *radix, radix_node *node, size_t len,
                     void *ctx);

/* Post-order, so that a visit may prune: a node is seen after all of its
 * descendants. The next node is found from the parent by the visited node's
 * first byte, which stays valid whatever the visit did to that node. */
static void radix_walk(zl_radix *radix, walk_fn *visit, void *ctx)
{
    radix_node *node = radix->root;
    if (!node)
        return;
    size_t len = scratch_append(radix, 0, node);
    node = descend_leftmost(radix, node, &len);
    for (;;) {
        radix_node *parent = node->parent;
        unsigned first = node->label_len > 0 ? node->label[0] : 0;
        size_t parent_len = len - node->label_len;
        visit(radix, node, len, ctx);
        if (!parent)
            break;
        len = parent_len;
        size_t index = child_lower_bound(parent, first + 1);
        if (index < parent->child_count) {
            node = parent->children[index];
            len = scratch_append(radix, len, node);
            node = descend_leftmost(radix, node, &len);
        } else {
            node = parent;
        }
    }
    scratch_release_if_empty(radix);
}

static void destroy_visit(zl_radix *radix, radix_node *node, size_t len,
                          void *ctx)
{
    pipeset_clear(node);
    node->refs = 0;
    prune_node(radix, node);
}

static void radix_init(zl_radix *radix)
{
    memset(radix, 0, sizeof *radix);
}

static void radix_destroy(zl_radix *radix)
{
    radix_walk(radix, destroy_visit, NULL);
    free(radix->scratch);
    radix_init(radix);
}

/* ---- zl_trie ------------------------------------------------------------- */

void zl_trie_init(zl_trie *trie) { radix_init(&trie->radix); }

void zl_trie_destroy(zl_trie *trie) { radix_destroy(&trie->radix); }

int zl_trie_add(zl_trie *trie, const void *prefix, size_t len)
{
    radix_node *node = radix_insert(&trie->radix, bytes_of(prefix, len), len);
    if (!node) {
        errno = ENOMEM;
        return -1;
    }
    if (node->refs++ > 0)
        return 0;
    trie->radix.prefix_count++;
    return 1;
}

bool zl_trie_remove(zl_trie *trie, const void *prefix, size_t len)
{
    radix_node *node = radix_find(&trie->radix, bytes_of(prefix, len), len);
    if (!node || node->refs == 0)
        return false;
    if (--node->refs > 0)
        return false;
    trie->radix.prefix_count--;
    radix_prune(&trie->radix, node);
    return true;
}

bool zl_trie_check(const zl_trie *trie, const void *data, size_t len)
{
    const uint8_t *topic = bytes_of(data, len);
    const radix_node *node = trie->radix.root;
    while (node && label_starts(node, topic, len)) {
        if (node->refs > 0)
            return true;
        topic += node->label_len;
        len -= node->label_len;
        if (len == 0)
            return false;
        node = child_find(node, topic[0]);
    }
    return false;
}

size_t zl_trie_count(const zl_trie *trie) { return trie->radix.prefix_count; }

size_t zl_trie_node_count(const zl_trie *trie)
{
    return trie->radix.node_count;
}

struct apply_ctx {
    zl_trie_prefix_fn *fn;
    void *arg;
};

static void apply_visit(zl_radix *radix, radix_node *node, size_t len,
                        void *ctx)
{
    struct apply_ctx *apply = ctx;
    if (node->refs > 0)
        apply->fn(scratch_prefix(radix), len, apply->arg);
}

void zl_trie_apply(zl_trie *trie, zl_trie_prefix_fn *fn, void *arg)
{
    struct apply_ctx apply = {fn, arg};
    radix_walk(&trie->radix, apply_visit, &apply);
}

/* ---- zl_mtrie ------------------------------------------------------------ */

void zl_mtrie_init(zl_mtrie *mtrie) { radix_init(&mtrie->radix); }

void zl_mtrie_destroy(zl_mtrie *mtrie) { radix_destroy(&mtrie->radix); }

int zl_mtrie_add(zl_mtrie *mtrie, const void *prefix, size_t len, void *pipe)
{
    zl_radix *radix = &mtrie->radix;
    radix_node *node = radix_insert(radix, bytes_of(prefix, len), len);
    if (!node) {
        errno = ENOMEM;
        return -1;
    }
    size_t index;
    if (pipeset_find(node, pipe, &index))
        return 0;
    bool first = node->refs == 0;
    if (pipeset_add(node, pipe) != 0) {
        if (first)
            radix_prune(radix, node);
        errno = ENOMEM;
        return -1;
    }
    if (!first)
        return 0;
    radix->prefix_count++;
    return 1;
}

zl_mtrie_rm_result zl_mtrie_remove(zl_mtrie *mtrie, const void *prefix,
                                   size_t len, void *pipe)
{
    zl_radix *radix = &mtrie->radix;
    radix_node *node = radix_find(radix, bytes_of(prefix, len), len);
    if (!node || !pipeset_remove(node, pipe))
        return ZL_MTRIE_NOT_FOUND;
    if (node->refs > 0)
        return ZL_MTRIE_REMOVED_OTHERS_REMAIN;
    radix->prefix_count--;
    radix_prune(radix, node);
    return ZL_MTRIE_REMOVED_LAST;
}

struct rm_pipe_ctx {
    void *pipe;
    zl_mtrie_prefix_fn *fn;
    void *arg;
    bool verbose;
};

static void rm_pipe_visit(zl_radix *radix, radix_node *node, size_t len,
                          void *ctx)
{
    struct rm_pipe_ctx *rm = ctx;
    if (pipeset_remove(node, rm->pipe)) {
        if (node->refs == 0)
            radix->prefix_count--;
        if (rm->fn && (rm->verbose || node->refs == 0))
            rm->fn(scratch_prefix(radix), len, rm->arg);
    }
    prune_node(radix, node);
}

void zl_mtrie_rm_pipe(zl_mtrie *mtrie, void *pipe, zl_mtrie_prefix_fn *fn,
                      void *arg)
{
    struct rm_pipe_ctx rm = {pipe, fn, arg, false};
    radix_walk(&mtrie->radix, rm_pipe_visit, &rm);
}

void zl_mtrie_rm_pipe_verbose(zl_mtrie *mtrie, void *pipe,
                              zl_mtrie_prefix_fn *fn, void *arg)
{
    struct rm_pipe_ctx rm = {pipe, fn, arg, true};
    radix_walk(&mtrie->radix, rm_pipe_visit, &rm);
}

void zl_mtrie_match(const zl_mtrie *mtrie, const void *data, size_t len,
                    zl_mtrie_pipe_fn *fn, void *arg)
{
    const uint8_t *topic = bytes_of(data, len);
    const radix_node *node = mtrie->radix.root;
    while (node && label_starts(node, topic, len)) {
        void *const *pipes = pipeset_items(node);
        for (size_t i = 0; i < node->refs; i++)
            fn(pipes[i], arg);
        topic += node->label_len;
        len -= node->label_len;
        if (len == 0)
            return;
        node = child_find(node, topic[0]);
    }
}

size_t zl_mtrie_count(const zl_mtrie *mtrie)
{
    return mtrie->radix.prefix_count;
}

size_t zl_mtrie_node_count(const zl_mtrie *mtrie)
{
    return mtrie->radix.node_count;
}
