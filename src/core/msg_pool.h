/* msg_pool.h — size-classed pools for message bodies, so that small
 * messages cost no malloc on the hot path (DESIGN.md §5). */
#ifndef ZL_MSG_POOL_H
#define ZL_MSG_POOL_H

#include <stddef.h>
#include <stdint.h>

/* pool_class value of a block that came from malloc. */
#define ZL_POOL_NONE 0xff

/* A block of at least size bytes (aligned for any type), or NULL. Blocks
 * larger than the largest class come from malloc. */
void *zl_pool_alloc(size_t size, uint8_t *pool_class);
/* Any thread may free a block any other thread allocated. */
void zl_pool_free(void *block, uint8_t pool_class);

#endif
