/* metadata.c — a connection's properties in one refcounted block: an index
 * of name/value offsets, then the NUL-terminated strings. */
#include "metadata.h"

#include <stdlib.h>
#include <string.h>

struct zl_metadata {
    atomic_uint refs;
    unsigned count;
    struct {
        uint32_t name, value;                /* offsets into strings */
    } index[ZL_METADATA_MAX_PROPERTIES + 2]; /* + Peer-Address, __fd */
    char strings[];
};

void zl_metadata_builder_init(zl_metadata_builder *b)
{
    b->count = 0;
    b->bytes = 0;
    b->peer_address[0] = '\0';
    b->fd[0] = '\0';
}

int zl_metadata_builder_add(zl_metadata_builder *b, const uint8_t *name,
                            size_t name_len, const uint8_t *value,
                            size_t value_len)
{
    if (b->count >= ZL_METADATA_MAX_PROPERTIES ||
        value_len > ZL_METADATA_MAX_BYTES ||
        b->bytes + name_len + value_len > ZL_METADATA_MAX_BYTES)
        return -1;
    b->props[b->count].name = name;
    b->props[b->count].name_len = name_len;
    b->props[b->count].value = value;
    b->props[b->count].value_len = value_len;
    b->count++;
    b->bytes += name_len + value_len;
    return 0;
}

static uint32_t put_string(char *strings, size_t *at, const void *s, size_t len)
{
    uint32_t start = (uint32_t)*at;
    if (len)
        memcpy(strings + *at, s, len);
    strings[*at + len] = '\0';
    *at += len + 1;
    return start;
}

static void put_property(zl_metadata *m, size_t *at, const char *name,
                         const char *value)
{
    m->index[m->count].name = put_string(m->strings, at, name, strlen(name));
    m->index[m->count].value = put_string(m->strings, at, value, strlen(value));
    m->count++;
}

zl_metadata *zl_metadata_build(const zl_metadata_builder *b)
{
    static const char peer_name[] = "Peer-Address", fd_name[] = "__fd";
    size_t peer_len = strlen(b->peer_address), fd_len = strlen(b->fd);
    size_t bytes = b->bytes + 2 * b->count;
    if (peer_len)
        bytes += sizeof peer_name + peer_len + 1;
    if (fd_len)
        bytes += sizeof fd_name + fd_len + 1;
    zl_metadata *m = malloc(sizeof *m + bytes);
    if (!m)
        return NULL;
    atomic_init(&m->refs, 1);
    m->count = 0;
    size_t at = 0;
    for (unsigned i = 0; i < b->count; i++, m->count++) {
        m->index[i].name =
            put_string(m->strings, &at, b->props[i].name, b->props[i].name_len);
        m->index[i].value = put_string(m->strings, &at, b->props[i].value,
                                       b->props[i].value_len);
    }
    if (peer_len)
        put_property(m, &at, peer_name, b->peer_address);
    if (fd_len)
        put_property(m, &at, fd_name, b->fd);
    return m;
}

static const char *lookup(const zl_metadata *m, const char *name)
{
    /* Exact names, as libzmq's map: ZMTP calls names case-insensitive, but
     * a program ported from libzmq expects "socket-type" to be unknown. A
     * name announced twice keeps its first value, as libzmq's map insert. */
    for (unsigned i = 0; i < m->count; i++)
        if (strcmp(m->strings + m->index[i].name, name) == 0)
            return m->strings + m->index[i].value;
    return NULL;
}

const char *zl_metadata_get(const zl_metadata *m, const char *name)
{
    const char *v = lookup(m, name);
    /* Peers announce "Identity", while zmq.h names the property "Routing-Id"
     * (ZMQ_MSG_PROPERTY_ROUTING_ID). libzmq 4.3 answers only the name sent;
     * zlink answers both, so code written to either name works. */
    if (!v && strcmp(name, "Identity") == 0)
        v = lookup(m, "Routing-Id");
    else if (!v && strcmp(name, "Routing-Id") == 0)
        v = lookup(m, "Identity");
    return v;
}

void zl_metadata_addref(zl_metadata *m, unsigned n)
{
    atomic_fetch_add_explicit(&m->refs, n, memory_order_relaxed);
}

void zl_metadata_release_n(zl_metadata *m, unsigned n)
{
    /* acq_rel: the last owner must see the others' reads done before it
     * frees. */
    if (atomic_fetch_sub_explicit(&m->refs, n, memory_order_acq_rel) == n)
        free(m);
}

void zl_metadata_release(zl_metadata *m)
{
    zl_metadata_release_n(m, 1);
}
