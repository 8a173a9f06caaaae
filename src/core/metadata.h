/* metadata.h — one connection's properties (the peer's READY properties and
 * Peer-Address), refcounted and shared by every message read from it, for
 * zlink_msg_gets. */
#ifndef ZL_METADATA_H
#define ZL_METADATA_H

#include <stddef.h>
#include <stdint.h>

#include "atomics.h"

/* Bounds on what a peer may announce: READY is hostile input, and every
 * message of the connection pins the block. No stack sends more than a
 * handful of short properties. */
#define ZL_METADATA_MAX_PROPERTIES 64
#define ZL_METADATA_MAX_BYTES 16384

typedef struct zl_metadata zl_metadata;

/* Collects properties before the block is made; fixed size, no allocation
 * until zl_metadata_build. */
typedef struct zl_metadata_builder {
    unsigned count;
    size_t bytes;
    struct {
        const uint8_t *name, *value;
        size_t name_len, value_len;
    } props[ZL_METADATA_MAX_PROPERTIES + 1];
    char peer_address[128];
    /* The connection's OS socket, kept as libzmq keeps it (the private
     * "__fd" property) for ZLINK_SRCFD; "" for none. */
    char fd[24];
} zl_metadata_builder;

void zl_metadata_builder_init(zl_metadata_builder *b);
/* Keeps a reference to name and value until zl_metadata_build. -1 (and
 * nothing kept) when the property would pass the bounds above. */
int zl_metadata_builder_add(zl_metadata_builder *b, const uint8_t *name,
                            size_t name_len, const uint8_t *value,
                            size_t value_len);
/* One block holding every property added, plus Peer-Address and "__fd"
 * when the builder's peer_address and fd are not empty; refs = 1. NULL on
 * OOM. */
zl_metadata *zl_metadata_build(const zl_metadata_builder *b);

/* The value of name, NUL-terminated, or NULL. "Identity" and "Routing-Id"
 * both name the peer's announced Identity. */
const char *zl_metadata_get(const zl_metadata *m, const char *name);

void zl_metadata_addref(zl_metadata *m, unsigned n);
void zl_metadata_release(zl_metadata *m);
/* Drops n references at once (an engine's unused credit and its own). */
void zl_metadata_release_n(zl_metadata *m, unsigned n);

#endif
