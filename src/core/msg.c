/* msg.c — zlink_msg_t: inline small bodies, refcounted content blocks, and the
 * public zlink_msg_* calls other than send and recv. */
#include "msg.h"
#include "metadata.h"
#include "msg_pool.h"
#include "noinline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Messages that hold something; a closed or never-initialised message is
 * reported as EFAULT, as libzmq does. */
static bool msg_is_valid(const zl_msg *m)
{
    return m->kind == ZL_MSG_INLINE || m->kind == ZL_MSG_CONTENT ||
           m->kind == ZL_MSG_CONST || m->kind == ZL_MSG_DELIMITER;
}

/* A destination for move and copy may be live (it is released first) or
 * closed; anything else is garbage we must not release. */
static bool msg_is_reusable(const zl_msg *m)
{
    return msg_is_valid(m) || m->kind == ZL_MSG_CLOSED;
}

static void msg_init_inline(zl_msg *m, size_t size)
{
    zl_msg_init_header(m, ZL_MSG_INLINE);
    m->inline_size = (uint8_t)size;
}

static void msg_init_ref(zl_msg *m, uint8_t kind, zl_content *content,
                         void *data, size_t size)
{
    zl_msg_init_header(m, kind);
    m->u.ref.content = content;
    m->u.ref.data = data;
    m->u.ref.size = size;
}

static void msg_release(zl_msg *m)
{
    if (m->kind == ZL_MSG_CONTENT)
        zl_content_release(m->u.ref.content);
    if (m->metadata) {
        zl_metadata_release(m->metadata);
        m->metadata = NULL;
    }
    m->kind = ZL_MSG_CLOSED;
}

zl_content *zl_content_alloc(size_t size)
{
    if (size > SIZE_MAX - sizeof(zl_content))
        return NULL;
    /* One allocation: the header, then the body. sizeof(zl_content) is a
     * multiple of its pointer alignment, so the body is aligned too. */
    uint8_t pool_class;
    zl_content *content = zl_pool_alloc(sizeof(zl_content) + size, &pool_class);
    if (content == NULL)
        return NULL;
    content->pool_class = pool_class;
    atomic_init(&content->refs, 1);
    content->data = content + 1;
    content->size = size;
    content->ffn = NULL;
    content->hint = NULL;
    return content;
}

void zl_content_addref(zl_content *content)
{
    atomic_fetch_add_explicit(&content->refs, 1, memory_order_relaxed);
}

void zl_content_release(zl_content *content)
{
    /* acq_rel: the last owner must see every other owner's writes before it
     * frees the block. */
    if (atomic_fetch_sub_explicit(&content->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (content->ffn != NULL)
        content->ffn(content->data, content->hint);
    zl_pool_free(content, content->pool_class);
}

ZLINK_EXPORT int zlink_msg_init(zlink_msg_t *msg)
{
    zl_msg_init_empty(msg);
    return 0;
}

/* A message whose body does not fit inline: its body comes from the pool.
 * Out of line, so that the inline case saves no registers (callgrind,
 * inproc PAIR 64 B: 20 -> 8 instructions a call). */
static ZL_NOINLINE int msg_init_content(zl_msg *m, size_t size)
{
    zl_content *content = zl_content_alloc(size);
    if (content == NULL) {
        /* Leave a closed message behind so a later close is harmless. */
        memset(m, 0, sizeof *m);
        m->kind = ZL_MSG_CLOSED;
        errno = ENOMEM;
        return -1;
    }
    msg_init_ref(m, ZL_MSG_CONTENT, content, content->data, size);
    return 0;
}

ZLINK_EXPORT int zlink_msg_init_size(zlink_msg_t *msg, size_t size)
{
    zl_msg *m = zl_msg_of(msg);
    if (size > ZL_MSG_INLINE_MAX)
        return msg_init_content(m, size);
    msg_init_inline(m, size);
    return 0;
}

int zl_msg_init_growable(zlink_msg_t *msg, size_t size, size_t room)
{
    zl_msg *m = zl_msg_of(msg);
    zl_content *content = NULL;
    if (room <= SIZE_MAX - sizeof *content)
        content = malloc(sizeof *content + room);
    if (content == NULL) {
        memset(m, 0, sizeof *m);
        m->kind = ZL_MSG_CLOSED;
        errno = ENOMEM;
        return -1;
    }
    atomic_init(&content->refs, 1);
    content->pool_class = ZL_POOL_NONE;
    content->data = content + 1;
    content->size = room;
    content->ffn = NULL;
    content->hint = NULL;
    msg_init_ref(m, ZL_MSG_CONTENT, content, content->data, size);
    return 0;
}

int zl_msg_grow(zlink_msg_t *msg, size_t room)
{
    zl_msg *m = zl_msg_of(msg);
    zl_content *content = m->u.ref.content;
    if (room > m->u.ref.size)
        room = m->u.ref.size;
    if (room <= content->size)
        return 0;
    /* realloc, not a new block and a copy: for the largest bodies the C
     * library can often move pages rather than bytes (mremap). */
    zl_content *grown = realloc(content, sizeof *content + room);
    if (grown == NULL) {
        errno = ENOMEM;
        return -1;
    }
    grown->data = grown + 1;
    grown->size = room;
    m->u.ref.content = grown;
    m->u.ref.data = grown->data;
    return 0;
}

ZLINK_EXPORT int zlink_msg_init_data(zlink_msg_t *msg, void *data, size_t size,
                                     zlink_free_fn *ffn, void *hint)
{
    zl_msg *m = zl_msg_of(msg);
    if (data == NULL && size > 0) {
        errno = EINVAL;
        return -1;
    }
    if (ffn == NULL) {
        msg_init_ref(m, ZL_MSG_CONST, NULL, data, size);
        return 0;
    }
    /* The caller's buffer stays where it is; only the refcount header is
     * ours, so copies can share the buffer and free it once. */
    uint8_t pool_class;
    zl_content *content = zl_pool_alloc(sizeof *content, &pool_class);
    if (content == NULL) {
        memset(m, 0, sizeof *m);
        m->kind = ZL_MSG_CLOSED;
        errno = ENOMEM;
        return -1;
    }
    atomic_init(&content->refs, 1);
    content->pool_class = pool_class;
    content->data = data;
    content->size = size;
    content->ffn = ffn;
    content->hint = hint;
    msg_init_ref(m, ZL_MSG_CONTENT, content, data, size);
    return 0;
}

ZLINK_EXPORT int zlink_msg_close(zlink_msg_t *msg)
{
    zl_msg *m = zl_msg_of(msg);
    if (!msg_is_valid(m)) {
        errno = EFAULT;
        return -1;
    }
    msg_release(m);
    return 0;
}

int zl_msg_reset(zlink_msg_t *msg)
{
    zl_msg *m = zl_msg_of(msg);
    if (!msg_is_reusable(m)) {
        errno = EFAULT;
        return -1;
    }
    if (m->kind != ZL_MSG_CLOSED)
        msg_release(m);
    msg_init_inline(m, 0);
    return 0;
}

ZLINK_EXPORT int zlink_msg_move(zlink_msg_t *dest, zlink_msg_t *src)
{
    zl_msg *d = zl_msg_of(dest);
    zl_msg *s = zl_msg_of(src);
    if (!msg_is_valid(s) || !msg_is_reusable(d)) {
        errno = EFAULT;
        return -1;
    }
    if (d == s)
        return 0;
    if (msg_is_valid(d))
        msg_release(d);
    zl_msg_copy_used(dest, src);
    msg_init_inline(s, 0);
    return 0;
}

ZLINK_EXPORT int zlink_msg_copy(zlink_msg_t *dest, zlink_msg_t *src)
{
    zl_msg *d = zl_msg_of(dest);
    zl_msg *s = zl_msg_of(src);
    if (!msg_is_valid(s) || !msg_is_reusable(d)) {
        errno = EFAULT;
        return -1;
    }
    if (d == s)
        return 0;
    if (msg_is_valid(d))
        msg_release(d);
    if (s->kind == ZL_MSG_CONTENT) {
        zl_content_addref(s->u.ref.content);
        s->flags |= ZL_MSG_SHARED;
    }
    if (s->metadata)
        zl_metadata_addref(s->metadata, 1);
    zl_msg_copy_used(dest, src);
    return 0;
}

ZLINK_EXPORT void *zlink_msg_data(zlink_msg_t *msg)
{
    zl_msg *m = zl_msg_of(msg);
    switch (m->kind) {
    case ZL_MSG_INLINE:
        return m->u.data;
    case ZL_MSG_CONTENT:
    case ZL_MSG_CONST:
        return m->u.ref.data;
    default:
        return NULL;
    }
}

ZLINK_EXPORT size_t zlink_msg_size(const zlink_msg_t *msg)
{
    const zl_msg *m = zl_msg_cof(msg);
    switch (m->kind) {
    case ZL_MSG_INLINE:
        return m->inline_size;
    case ZL_MSG_CONTENT:
    case ZL_MSG_CONST:
        return m->u.ref.size;
    default:
        return 0;
    }
}

ZLINK_EXPORT int zlink_msg_more(const zlink_msg_t *msg)
{
    const zl_msg *m = zl_msg_cof(msg);
    return msg_is_valid(m) && (m->flags & ZL_MSG_MORE) ? 1 : 0;
}

ZLINK_EXPORT int zlink_msg_set(zlink_msg_t *msg, int property, int value)
{
    (void)msg;
    (void)property;
    (void)value;
    errno = EINVAL;
    return -1;
}

ZLINK_EXPORT int zlink_msg_get(const zlink_msg_t *msg, int property)
{
    const zl_msg *m = zl_msg_cof(msg);
    if (property != ZLINK_MORE && property != ZLINK_SHARED &&
        property != ZLINK_SRCFD) {
        errno = EINVAL;
        return -1;
    }
    if (!msg_is_valid(m)) {
        errno = EFAULT;
        return -1;
    }
    if (property == ZLINK_SRCFD) {
        /* From the connection's metadata, as libzmq 4.3 keeps it. */
        const char *fd =
            m->metadata ? zl_metadata_get(m->metadata, "__fd") : NULL;
        if (!fd) {
            errno = EINVAL;
            return -1;
        }
        return atoi(fd);
    }
    if (property == ZLINK_MORE)
        return (m->flags & ZL_MSG_MORE) ? 1 : 0;
    /* A constant body may be referenced by any number of messages, so
     * libzmq reports it as shared too. */
    return (m->flags & ZL_MSG_SHARED) || m->kind == ZL_MSG_CONST ? 1 : 0;
}

ZLINK_EXPORT const char *zlink_msg_gets(const zlink_msg_t *msg,
                                        const char *property)
{
    const zl_msg *m = zl_msg_cof(msg);
    const char *value = NULL;
    if (property && msg_is_valid(m) && m->metadata)
        value = zl_metadata_get(m->metadata, property);
    if (!value)
        errno = EINVAL;
    return value;
}

int zl_msg_init_delimiter(zlink_msg_t *msg)
{
    zl_msg_init_header(zl_msg_of(msg), ZL_MSG_DELIMITER);
    return 0;
}

bool zl_msg_is_delimiter(const zlink_msg_t *msg)
{
    return zl_msg_cof(msg)->kind == ZL_MSG_DELIMITER;
}

int zl_msg_init_const(zlink_msg_t *msg, const void *data, size_t size)
{
    if (data == NULL && size > 0) {
        errno = EINVAL;
        return -1;
    }
    /* The body is never written through a const message; the cast only
     * lets it share the pointer slot with writable content. */
    msg_init_ref(zl_msg_of(msg), ZL_MSG_CONST, NULL, (void *)data, size);
    return 0;
}

int zl_msg_init_buffer(zlink_msg_t *msg, const void *data, size_t size)
{
    if (zlink_msg_init_size(msg, size) != 0)
        return -1;
    if (size > 0)
        memcpy(zlink_msg_data(msg), data, size);
    return 0;
}

uint8_t zl_msg_flags(const zlink_msg_t *msg)
{
    return zl_msg_cof(msg)->flags;
}

void zl_msg_set_flags(zlink_msg_t *msg, uint8_t flags)
{
    zl_msg_of(msg)->flags |= flags;
}

void zl_msg_reset_flags(zlink_msg_t *msg, uint8_t flags)
{
    zl_msg_of(msg)->flags &= (uint8_t)~flags;
}

void zl_msg_init_shared(zlink_msg_t *msg, zl_content *content, void *data,
                        size_t size)
{
    zl_msg *m = zl_msg_of(msg);
    /* A small body is cheaper copied than shared: no atomic operations, and
     * the read buffer can be reused sooner. */
    if (size <= ZL_MSG_INLINE_MAX) {
        msg_init_inline(m, size);
        if (size > 0)
            memcpy(m->u.data, data, size);
        return;
    }
    zl_content_addref(content);
    msg_init_ref(m, ZL_MSG_CONTENT, content, data, size);
    m->flags = ZL_MSG_SHARED;
}
