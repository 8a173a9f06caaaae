/* routing_table.c — routing ids to pipes: the table ROUTER and STREAM
 * route by, and the ids they give peers that name none. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "patterns/routing_table.h"
#include "random.h"

/* ---- Hashing ---------------------------------------------------------- */

/* Routing ids come from the network, so the table hashes them with
 * SipHash-1-3 under a random key: a peer cannot pick ids that collide. */

static uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static void sip_round(uint64_t v[4])
{
    v[0] += v[1];
    v[1] = rotl(v[1], 13) ^ v[0];
    v[0] = rotl(v[0], 32);
    v[2] += v[3];
    v[3] = rotl(v[3], 16) ^ v[2];
    v[0] += v[3];
    v[3] = rotl(v[3], 21) ^ v[0];
    v[2] += v[1];
    v[1] = rotl(v[1], 17) ^ v[2];
    v[2] = rotl(v[2], 32);
}

static uint64_t load_le64(const uint8_t *b)
{
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--)
        x = (x << 8) | b[i];
    return x;
}

static uint64_t siphash13(const uint64_t key[2], const uint8_t *data,
                          size_t len)
{
    uint64_t v[4] = {
        key[0] ^ 0x736f6d6570736575ull, key[1] ^ 0x646f72616e646f6dull,
        key[0] ^ 0x6c7967656e657261ull, key[1] ^ 0x7465646279746573ull};
    size_t whole = len - len % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = load_le64(data + i);
        v[3] ^= m;
        sip_round(v);
        v[0] ^= m;
    }
    uint64_t tail = (uint64_t)len << 56;
    for (size_t i = 0; i < len % 8; i++)
        tail |= (uint64_t)data[whole + i] << (8 * i);
    v[3] ^= tail;
    sip_round(v);
    v[0] ^= tail;
    v[2] ^= 0xff;
    sip_round(v);
    sip_round(v);
    sip_round(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* ---- Routing table ---------------------------------------------------- */

/* The table's layout is in router.h. */
#define ROUTING_TABLE_MIN 16

static uint64_t id_hash(const routing_table *t, const uint8_t *id, size_t len)
{
    return siphash13(t->key, id, len);
}

bool zl_routing_id_equal(const zl_pipe *p, const uint8_t *id, size_t len)
{
    size_t have;
    const uint8_t *data = zl_pipe_routing_id(p, &have);
    return have == len && (len == 0 || memcmp(data, id, len) == 0);
}

static uint64_t pipe_hash(const routing_table *t, const zl_pipe *p)
{
    size_t len;
    const uint8_t *id = zl_pipe_routing_id(p, &len);
    return id_hash(t, id, len);
}

zl_pipe *zl_routing_table_find(const routing_table *t, const uint8_t *id,
                               size_t len)
{
    if (t->count == 0)
        return NULL;
    uint64_t hash = id_hash(t, id, len);
    for (size_t i = hash & t->mask; t->slots[i].pipe != NULL;
         i = (i + 1) & t->mask) {
        if (t->slots[i].hash == hash &&
            zl_routing_id_equal(t->slots[i].pipe, id, len))
            return t->slots[i].pipe;
    }
    return NULL;
}

static void place(route_slot *slots, size_t mask, zl_pipe *p, uint64_t hash)
{
    size_t i = hash & mask;
    while (slots[i].pipe != NULL)
        i = (i + 1) & mask;
    slots[i].pipe = p;
    slots[i].hash = hash;
}

static int table_grow(routing_table *t)
{
    size_t capacity = t->slots ? (t->mask + 1) * 2 : ROUTING_TABLE_MIN;
    route_slot *slots = calloc(capacity, sizeof *slots);
    if (slots == NULL) {
        errno = ENOMEM;
        return -1;
    }
    if (t->slots != NULL) {
        for (size_t i = 0; i <= t->mask; i++)
            if (t->slots[i].pipe != NULL)
                place(slots, capacity - 1, t->slots[i].pipe, t->slots[i].hash);
        free(t->slots);
    }
    t->slots = slots;
    t->mask = capacity - 1;
    return 0;
}

/* p's routing_id must not be in the table yet. */
int zl_routing_table_insert(routing_table *t, zl_pipe *p)
{
    if (t->slots == NULL || (t->count + 1) * 2 > t->mask + 1) {
        if (table_grow(t) != 0)
            return -1;
    }
    place(t->slots, t->mask, p, pipe_hash(t, p));
    t->count++;
    return 0;
}

/* Does nothing unless p itself is in the table: a refused pipe may carry
 * the id of another one. */
void zl_routing_table_remove(routing_table *t, zl_pipe *p)
{
    if (t->count == 0)
        return;
    uint64_t hash = pipe_hash(t, p);
    size_t i = hash & t->mask;
    while (t->slots[i].pipe != p) {
        if (t->slots[i].pipe == NULL)
            return;
        i = (i + 1) & t->mask;
    }
    t->count--;
    /* Pull back every later entry of the probe run that may sit in the
     * hole, so lookups never need tombstones. */
    for (;;) {
        t->slots[i].pipe = NULL;
        size_t j = i;
        for (;;) {
            j = (j + 1) & t->mask;
            if (t->slots[j].pipe == NULL)
                return;
            size_t home = t->slots[j].hash & t->mask;
            /* The entry at j may move to i unless its home lies
             * cyclically in (i, j]. */
            bool stays =
                i <= j ? (i < home && home <= j) : (i < home || home <= j);
            if (!stays)
                break;
        }
        t->slots[i] = t->slots[j];
        i = j;
    }
}

void zl_routing_table_destroy(routing_table *t)
{
    free(t->slots);
    t->slots = NULL;
    t->mask = 0;
    t->count = 0;
}

void zl_routing_table_init(routing_table *t, uint32_t *next_auto_id)
{
    uint64_t seed = zl_random_seed(t);
    t->key[0] = zl_random_next(&seed);
    t->key[1] = zl_random_next(&seed);
    /* libzmq starts its generated ids at a random value too. */
    *next_auto_id = (uint32_t)zl_random_next(&seed);
}

/* libzmq's generated ids: a zero byte (reserved, no application may pick
 * it) and a big-endian counter. Network peers may still announce such an
 * id, so one in use is skipped. */
int zl_routing_table_assign_id(const routing_table *t, uint32_t *next_auto_id,
                               zl_pipe *p)
{
    uint8_t id[5];
    do {
        uint32_t n = (*next_auto_id)++;
        id[0] = 0;
        id[1] = (uint8_t)(n >> 24);
        id[2] = (uint8_t)(n >> 16);
        id[3] = (uint8_t)(n >> 8);
        id[4] = (uint8_t)n;
    } while (zl_routing_table_find(t, id, sizeof id) != NULL);
    return zl_pipe_set_routing_id(p, id, sizeof id);
}
