/* accept_filter.c — the address masks and peer credentials a listener
 * admits, with libzmq's rules: any matching filter admits, and a kind with
 * no filter set admits everyone. What the OS tells of a peer is the
 * backend's (zl_handle_peer_cred). */
#include "accept_filter.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "zlink.h"

typedef struct {
    int family; /* AF_INET or AF_INET6 */
    uint8_t net[16];
    int bits;
} zl_addr_mask;

/* A set of ids, grown as ids are added. */
typedef struct {
    long *ids;
    size_t count;
} zl_id_set;

struct zl_accept_filters {
    zl_addr_mask *masks;
    size_t mask_count;
    zl_id_set uids, gids, pids;
};

static zl_accept_filters *filters_of(zl_accept_filters **f)
{
    if (!*f && !(*f = calloc(1, sizeof **f)))
        errno = ENOMEM;
    return *f;
}

/* "a.b.c.d", "a.b.c.d/bits", "v6", "[v6]" or "v6/bits", as libzmq's
 * tcp_address_mask_t reads them: an address literal, no name; no bits is
 * the whole address, and "/0" matches every address of its family. */
static int parse_mask(const char *text, bool ipv6, zl_addr_mask *out)
{
    char addr[INET6_ADDRSTRLEN + 2];
    const char *slash = strrchr(text, '/');
    size_t addr_len = slash ? (size_t)(slash - text) : strlen(text);
    if (addr_len == 0 || addr_len >= sizeof addr)
        return -1;
    memcpy(addr, text, addr_len);
    addr[addr_len] = '\0';
    char *host = addr;
    if (host[0] == '[' && host[addr_len - 1] == ']') {
        host[addr_len - 1] = '\0';
        host++;
    }
    if (uv_inet_pton(AF_INET, host, out->net) == 0) {
        out->family = AF_INET;
        out->bits = 32;
    } else if (ipv6 && uv_inet_pton(AF_INET6, host, out->net) == 0) {
        out->family = AF_INET6;
        out->bits = 128;
    } else {
        return -1;
    }
    if (!slash)
        return 0;
    const char *digits = slash + 1;
    if (*digits == '\0' || strlen(digits) > 3)
        return -1;
    int bits = 0;
    for (const char *d = digits; *d; d++) {
        if (*d < '0' || *d > '9')
            return -1;
        bits = bits * 10 + (*d - '0');
    }
    if (bits > out->bits)
        return -1;
    out->bits = bits;
    return 0;
}

int zl_accept_filters_add_tcp(zl_accept_filters **f, const void *val,
                              size_t len, bool ipv6)
{
    if (!val || len == 0 || (len == 1 && *(const char *)val == '\0')) {
        if (*f) {
            free((*f)->masks);
            (*f)->masks = NULL;
            (*f)->mask_count = 0;
        }
        return 0;
    }
    /* libzmq takes at most 255 bytes, a trailing NUL included. */
    char text[256];
    if (len > 255 || memchr(val, '\0', len - 1)) {
        errno = EINVAL;
        return -1;
    }
    memcpy(text, val, len);
    text[len] = '\0';
    zl_addr_mask mask;
    if (parse_mask(text, ipv6, &mask) != 0) {
        errno = EINVAL;
        return -1;
    }
    if (!filters_of(f))
        return -1;
    zl_addr_mask *grown =
        realloc((*f)->masks, ((*f)->mask_count + 1) * sizeof *grown);
    if (!grown) {
        errno = ENOMEM;
        return -1;
    }
    grown[(*f)->mask_count++] = mask;
    (*f)->masks = grown;
    return 0;
}

static int add_id(zl_id_set *set, long id)
{
    for (size_t i = 0; i < set->count; i++)
        if (set->ids[i] == id)
            return 0;
    long *grown = realloc(set->ids, (set->count + 1) * sizeof *grown);
    if (!grown) {
        errno = ENOMEM;
        return -1;
    }
    grown[set->count++] = id;
    set->ids = grown;
    return 0;
}

static bool has_id(const zl_id_set *set, long id)
{
    for (size_t i = 0; i < set->count; i++)
        if (set->ids[i] == id)
            return true;
    return false;
}

static zl_id_set *ids_of(zl_accept_filters *f, int option)
{
    return option == ZLINK_IPC_FILTER_UID   ? &f->uids
           : option == ZLINK_IPC_FILTER_GID ? &f->gids
                                            : &f->pids;
}

int zl_accept_filters_add_ipc(zl_accept_filters **f, int option,
                              const void *val, size_t len)
{
    /* As a libzmq built where the OS cannot tell the credential. */
    int needs =
        option == ZLINK_IPC_FILTER_PID ? ZL_PEER_CRED_PID : ZL_PEER_CRED_IDS;
    if (!(zl_peer_cred_kinds() & needs)) {
        errno = EINVAL;
        return -1;
    }
    if (!val && len == 0) {
        if (*f) {
            zl_id_set *set = ids_of(*f, option);
            free(set->ids);
            set->ids = NULL;
            set->count = 0;
        }
        return 0;
    }
    /* A uid_t, gid_t or pid_t, as libzmq takes them: 32 bits wherever the
     * OS tells peer credentials. */
    if (!val || len != sizeof(int32_t)) {
        errno = EINVAL;
        return -1;
    }
    long id;
    if (option == ZLINK_IPC_FILTER_PID) {
        int32_t v;
        memcpy(&v, val, sizeof v);
        id = (long)v;
    } else {
        uint32_t v;
        memcpy(&v, val, sizeof v);
        id = (long)v;
    }
    if (!filters_of(f))
        return -1;
    return add_id(ids_of(*f, option), id);
}

static int copy_ids(zl_id_set *dst, const zl_id_set *src)
{
    dst->ids = NULL;
    dst->count = 0;
    if (!src->count)
        return 0;
    if (!(dst->ids = malloc(src->count * sizeof *dst->ids)))
        return -1;
    memcpy(dst->ids, src->ids, src->count * sizeof *dst->ids);
    dst->count = src->count;
    return 0;
}

int zl_accept_filters_copy(zl_accept_filters **dst, const zl_accept_filters *f)
{
    *dst = NULL;
    if (!f)
        return 0;
    zl_accept_filters *c = calloc(1, sizeof *c);
    if (!c)
        goto fail;
    *dst = c;
    if (f->mask_count) {
        if (!(c->masks = malloc(f->mask_count * sizeof *c->masks)))
            goto fail;
        memcpy(c->masks, f->masks, f->mask_count * sizeof *c->masks);
        c->mask_count = f->mask_count;
    }
    if (copy_ids(&c->uids, &f->uids) != 0 ||
        copy_ids(&c->gids, &f->gids) != 0 || copy_ids(&c->pids, &f->pids) != 0)
        goto fail;
    return 0;
fail:
    zl_accept_filters_free(c);
    *dst = NULL;
    errno = ENOMEM;
    return -1;
}

void zl_accept_filters_free(zl_accept_filters *f)
{
    if (!f)
        return;
    free(f->masks);
    free(f->uids.ids);
    free(f->gids.ids);
    free(f->pids.ids);
    free(f);
}

static bool mask_matches(const zl_addr_mask *m, int family, const uint8_t *addr)
{
    if (m->family != family)
        return false;
    int whole = m->bits / 8, rest = m->bits % 8;
    if (memcmp(m->net, addr, (size_t)whole) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t keep = (uint8_t)(0xFF << (8 - rest));
    return (m->net[whole] & keep) == (addr[whole] & keep);
}

static bool address_admitted(const zl_accept_filters *f, const zl_addr *peer)
{
    int family = peer->u.sa.sa_family;
    const uint8_t *addr;
    if (family == AF_INET) {
        addr = (const uint8_t *)&peer->u.in4.sin_addr;
    } else if (family == AF_INET6) {
        addr = (const uint8_t *)&peer->u.in6.sin6_addr;
    } else {
        return false;
    }
    static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0,    0,
                                          0, 0, 0, 0, 0xFF, 0xFF};
    for (size_t i = 0; i < f->mask_count; i++) {
        if (mask_matches(&f->masks[i], family, addr))
            return true;
        /* An IPv4 peer of a dual-stack listener shows as ::ffff:a.b.c.d;
         * an IPv4 filter still names it (libzmq's would not). */
        if (family == AF_INET6 && memcmp(addr, v4_mapped, 12) == 0 &&
            mask_matches(&f->masks[i], AF_INET, addr + 12))
            return true;
    }
    return false;
}

static bool credentials_admitted(const zl_accept_filters *f, zl_handle *h)
{
    unsigned uid, gid;
    int pid;
    if (zl_handle_peer_cred(h, &uid, &gid, &pid) != 0)
        return false;
    if (has_id(&f->uids, (long)uid) || has_id(&f->gids, (long)gid) ||
        (pid >= 0 && has_id(&f->pids, (long)pid)))
        return true;
    for (size_t i = 0; i < f->gids.count; i++)
        if (zl_user_in_group(uid, (unsigned)f->gids.ids[i]))
            return true;
    return false;
}

bool zl_accept_filters_admit(const zl_accept_filters *f, zl_handle *h)
{
    if (!f)
        return true;
    zl_addr peer;
    if (zl_handle_peer_addr(h, &peer) != 0)
        return false;
    if (peer.u.sa.sa_family == AF_UNIX)
        return f->uids.count + f->gids.count + f->pids.count == 0 ||
               credentials_admitted(f, h);
    return f->mask_count == 0 || address_admitted(f, &peer);
}
