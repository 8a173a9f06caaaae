/* socket_type.c — ZMTP socket type names and which types may talk to each
 * other (rfc.zeromq.org spec 37). */
#include <string.h>

#include "zmtp.h"

/* libzmq's numbers. zlink.h names only the types zlink implements; the rest
 * are here because peers may announce them. */
enum {
    TYPE_PAIR = 0,
    TYPE_PUB = 1,
    TYPE_SUB = 2,
    TYPE_REQ = 3,
    TYPE_REP = 4,
    TYPE_DEALER = 5,
    TYPE_ROUTER = 6,
    TYPE_PULL = 7,
    TYPE_PUSH = 8,
    TYPE_XPUB = 9,
    TYPE_XSUB = 10,
    TYPE_COUNT
};

static const char *const type_names[TYPE_COUNT] = {
    [TYPE_PAIR] = "PAIR",     [TYPE_PUB] = "PUB",   [TYPE_SUB] = "SUB",
    [TYPE_REQ] = "REQ",       [TYPE_REP] = "REP",   [TYPE_DEALER] = "DEALER",
    [TYPE_ROUTER] = "ROUTER", [TYPE_PULL] = "PULL", [TYPE_PUSH] = "PUSH",
    [TYPE_XPUB] = "XPUB",     [TYPE_XSUB] = "XSUB",
};

#define PEER(type) (1u << (type))

/* For each type, the set of peer types spec 37 allows. */
static const unsigned compatible_peers[TYPE_COUNT] = {
    [TYPE_PAIR] = PEER(TYPE_PAIR),
    [TYPE_PUB] = PEER(TYPE_SUB) | PEER(TYPE_XSUB),
    [TYPE_SUB] = PEER(TYPE_PUB) | PEER(TYPE_XPUB),
    [TYPE_REQ] = PEER(TYPE_REP) | PEER(TYPE_ROUTER),
    [TYPE_REP] = PEER(TYPE_REQ) | PEER(TYPE_DEALER),
    [TYPE_DEALER] = PEER(TYPE_REP) | PEER(TYPE_DEALER) | PEER(TYPE_ROUTER),
    [TYPE_ROUTER] = PEER(TYPE_REQ) | PEER(TYPE_DEALER) | PEER(TYPE_ROUTER),
    [TYPE_PULL] = PEER(TYPE_PUSH),
    [TYPE_PUSH] = PEER(TYPE_PULL),
    [TYPE_XPUB] = PEER(TYPE_SUB) | PEER(TYPE_XSUB),
    [TYPE_XSUB] = PEER(TYPE_PUB) | PEER(TYPE_XPUB),
};

static bool name_equals(const uint8_t *name, size_t len, const char *expect)
{
    return strlen(expect) == len && memcmp(name, expect, len) == 0;
}

static bool type_known(int socket_type)
{
    return socket_type >= 0 && socket_type < TYPE_COUNT;
}

const char *zl_socket_type_name(int socket_type)
{
    return type_known(socket_type) ? type_names[socket_type] : NULL;
}

int zl_socket_type_from_name(const uint8_t *name, size_t len)
{
    for (int type = 0; type < TYPE_COUNT; type++) {
        if (name_equals(name, len, type_names[type]))
            return type;
    }
    return -1;
}

bool zl_socket_types_compatible(int ours, int theirs)
{
    if (!type_known(ours) || !type_known(theirs))
        return false;
    return (compatible_peers[ours] & PEER(theirs)) != 0;
}

bool zl_socket_type_announces_identity(int socket_type)
{
    return socket_type == TYPE_REQ || socket_type == TYPE_DEALER ||
           socket_type == TYPE_ROUTER;
}
