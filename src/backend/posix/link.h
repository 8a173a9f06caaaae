/* link.h — the intrusive circular list the POSIX backends keep their ready
 * lists, closing lists and deferred writes in. */
#ifndef ZL_POSIX_LINK_H
#define ZL_POSIX_LINK_H

#include <stdbool.h>

/* A list is its sentinel node. A node that is in no list points at itself,
 * which makes removal idempotent. */
struct zl_link {
    struct zl_link *prev;
    struct zl_link *next;
};

static inline void link_init(struct zl_link *node)
{
    node->prev = node;
    node->next = node;
}

static inline bool link_linked(const struct zl_link *node)
{
    return node->next != node;
}

static inline void link_remove(struct zl_link *node)
{
    node->prev->next = node->next;
    node->next->prev = node->prev;
    link_init(node);
}

static inline void link_append(struct zl_link *list, struct zl_link *node)
{
    node->prev = list->prev;
    node->next = list;
    list->prev->next = node;
    list->prev = node;
}

/* Moves every node of list to the empty list batch, leaving list empty. */
static inline void link_take_all(struct zl_link *list, struct zl_link *batch)
{
    link_init(batch);
    if (!link_linked(list))
        return;
    batch->next = list->next;
    batch->prev = list->prev;
    batch->next->prev = batch;
    batch->prev->next = batch;
    link_init(list);
}

#endif
