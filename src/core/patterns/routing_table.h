/* routing_table.h — routing ids to pipes, for the socket types that route
 * by id (ROUTER, REP through it, STREAM). The key is the pipe's own
 * routing id (zl_pipe_routing_id). */
#ifndef ZL_ROUTING_TABLE_H
#define ZL_ROUTING_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipe.h"

/* Open addressing with linear probing over a power-of-two array, at most
 * half full, with backward-shift deletion (no tombstones). A slot is a
 * pipe and its cached hash. */
typedef struct route_slot {
    zl_pipe *pipe; /* NULL: empty */
    uint64_t hash;
} route_slot;

typedef struct routing_table {
    route_slot *slots;
    size_t mask; /* capacity - 1; capacity 0 when slots is NULL */
    size_t count;
    uint64_t key[2];
} routing_table;

/* A zeroed table gets its hash key, and *next_auto_id its random start. */
void zl_routing_table_init(routing_table *t, uint32_t *next_auto_id);
void zl_routing_table_destroy(routing_table *t);
zl_pipe *zl_routing_table_find(const routing_table *t, const uint8_t *id,
                               size_t len);
/* p's routing id must not be in the table yet; -1/ENOMEM. */
int zl_routing_table_insert(routing_table *t, zl_pipe *p);
/* Does nothing unless p itself is in the table: a refused pipe may carry
 * the id of another one. */
void zl_routing_table_remove(routing_table *t, zl_pipe *p);
bool zl_routing_id_equal(const zl_pipe *p, const uint8_t *id, size_t len);
/* Names p with libzmq's generated form, one no pipe in t has: a zero byte
 * and a big-endian counter. -1/ENOMEM. */
int zl_routing_table_assign_id(const routing_table *t, uint32_t *next_auto_id,
                               zl_pipe *p);

#endif
