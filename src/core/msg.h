/* msg.h — the inside of zlink_msg_t: small bodies inline, larger ones in
 * refcounted content blocks. */
#ifndef ZL_MSG_H
#define ZL_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "atomics.h"
#include "zlink.h"

struct zl_metadata;

/* Bodies up to this size live inside the 128-byte message (zlink.h). */
#define ZL_MSG_INLINE_MAX 104

enum zl_msg_kind {
    ZL_MSG_INLINE = 0x5a, /* non-zero so an uninitialised msg is caught */
    ZL_MSG_CONTENT,       /* refcounted zl_content */
    ZL_MSG_CONST,         /* caller's constant data, never freed */
    ZL_MSG_DELIMITER,     /* in-band end-of-pipe marker */
    ZL_MSG_CLOSED         /* after zlink_msg_close */
};

/* Message flags (the low bits match ZMTP frame flags where they overlap). */
#define ZL_MSG_MORE 0x01
#define ZL_MSG_COMMAND 0x04
#define ZL_MSG_SUBSCRIBE 0x08 /* a SUB/XSUB subscription (0x01 + topic) */
#define ZL_MSG_CANCEL 0x10    /* a SUB/XSUB cancel (0x00 + topic) */
#define ZL_MSG_ROUTING_ID                                                      \
    0x40                   /* carries a peer's routing id (session→router) */
#define ZL_MSG_SHARED 0x80 /* content is shared with another message */

/* A refcounted body. data usually points just past this header (one
 * allocation); zlink_msg_init_data points it at the caller's buffer. */
typedef struct zl_content {
    atomic_uint refs;
    void *data;
    size_t size;
    zlink_free_fn *ffn; /* NULL: the block came from zl_content_alloc */
    void *hint;
    uint8_t pool_class; /* where this header came from (msg_pool.h) */
} zl_content;

typedef struct zl_msg {
    uint8_t kind;
    uint8_t flags;
    uint8_t inline_size;
    uint8_t reserved[5];
    /* The connection's properties (metadata.h), one reference held; NULL
     * for messages made locally or carried by inproc. Next to the header,
     * so that a short copy carries it within the first cache line. */
    struct zl_metadata *metadata;
    union {
        uint8_t data[ZL_MSG_INLINE_MAX];
        struct {
            zl_content *content;
            void *data;
            size_t size;
        } ref;
    } u;
    uint8_t tail[8]; /* keeps sizeof == 128 */
} zl_msg;

_Static_assert(sizeof(zl_msg) == sizeof(zlink_msg_t),
               "zl_msg must fill zlink_msg_t");

static inline zl_msg *zl_msg_of(zlink_msg_t *m)
{
    return (zl_msg *)m;
}
static inline const zl_msg *zl_msg_cof(const zlink_msg_t *m)
{
    return (const zl_msg *)m;
}

/* Clears the header and the metadata pointer, and sets the kind. The rest is
 * left as it is: nothing reads a body past the size the header gives, and
 * clearing all 128 bytes, several times per message, was a tenth of the
 * instructions of an inproc PAIR 64 B message (callgrind). */
static inline void zl_msg_init_header(zl_msg *m, uint8_t kind)
{
    memset(m, 0, offsetof(zl_msg, u));
    m->kind = kind;
}

/* zlink_msg_init, for the paths of every message: a call to the exported
 * function is inlined only while link-time optimisation has budget left,
 * and a change elsewhere turned the pipe's into a call (callgrind). */
static inline void zl_msg_init_empty(zlink_msg_t *msg)
{
    zl_msg_init_header(zl_msg_of(msg), ZL_MSG_INLINE);
}

/* The bytes of a zl_msg that hold something: the header, the metadata
 * pointer and a content reference, or those and an inline body of up to 24
 * bytes. */
#define ZL_MSG_SHORT_COPY 40
_Static_assert(offsetof(zl_msg, u) + sizeof(((zl_msg *)0)->u.ref) <=
                   ZL_MSG_SHORT_COPY,
               "a content reference fits the short copy");

/* Copies a message struct, as far as its kind uses it. A pipe slot is two
 * cache lines; a message that fits the short copy writes only the first,
 * and the reader on another core reads only that one back. */
static inline bool zl_msg_fits_short_copy(const zlink_msg_t *msg)
{
    const zl_msg *m = zl_msg_cof(msg);
    return m->kind != ZL_MSG_INLINE ||
           m->inline_size <= ZL_MSG_SHORT_COPY - offsetof(zl_msg, u);
}

static inline void zl_msg_copy_used(zlink_msg_t *dst, const zlink_msg_t *src)
{
    if (zl_msg_fits_short_copy(src))
        memcpy(dst, src, ZL_MSG_SHORT_COPY);
    else
        memcpy(dst, src, sizeof *dst);
}

/* Internal helpers; all return 0 or -1 with errno. */
int zl_msg_init_delimiter(zlink_msg_t *msg);
/* Releases what msg holds and leaves it empty, ready to receive into; -1
 * with EFAULT when msg is neither live nor closed. */
int zl_msg_reset(zlink_msg_t *msg);
bool zl_msg_is_delimiter(const zlink_msg_t *msg);
int zl_msg_init_const(zlink_msg_t *msg, const void *data, size_t size);
/* Copies size bytes in (init_size + memcpy). */
int zl_msg_init_buffer(zlink_msg_t *msg, const void *data, size_t size);
uint8_t zl_msg_flags(const zlink_msg_t *msg);
void zl_msg_set_flags(zlink_msg_t *msg, uint8_t flags);
void zl_msg_reset_flags(zlink_msg_t *msg, uint8_t flags);
/* Shares [data, data+size) of an existing content block (refcount +1);
 * for decoding many messages out of one read buffer. */
void zl_msg_init_shared(zlink_msg_t *msg, zl_content *content, void *data,
                        size_t size);
/* A message of size bytes whose body has room for only the first room
 * (< size) bytes so far, from malloc so that zl_msg_grow can extend it in
 * place; for a decoder that receives a large body as its bytes arrive. */
int zl_msg_init_growable(zlink_msg_t *msg, size_t size, size_t room);
/* Gives a message from zl_msg_init_growable room for the first room bytes
 * (at most its size), keeping those already written. Only while no other
 * message shares its body. */
int zl_msg_grow(zlink_msg_t *msg, size_t room);
/* A content block with room for size bytes, refs = 1. NULL on OOM. */
zl_content *zl_content_alloc(size_t size);
void zl_content_release(zl_content *content);
void zl_content_addref(zl_content *content);
/* Gives msg the metadata pointer of its connection; the caller transfers
 * one reference it already holds (engines take them in batches). */
static inline void zl_msg_set_metadata(zlink_msg_t *msg,
                                       struct zl_metadata *metadata)
{
    zl_msg_of(msg)->metadata = metadata;
}

#endif
