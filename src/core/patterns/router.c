/* router.c — ROUTER: the routing table from routing ids to pipes, routing-id
 * assignment, and the id frame in front of every message. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fair_queue.h"
#include "load_balance.h"
#include "metadata.h"
#include "msg.h"
#include "patterns/pattern.h"
#include "patterns/router.h"
#include "random.h"
#include "socket.h"

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

static bool id_equal(const zl_pipe *p, const uint8_t *id, size_t len)
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

static zl_pipe *table_find(const routing_table *t, const uint8_t *id,
                           size_t len)
{
    if (t->count == 0)
        return NULL;
    uint64_t hash = id_hash(t, id, len);
    for (size_t i = hash & t->mask; t->slots[i].pipe != NULL;
         i = (i + 1) & t->mask) {
        if (t->slots[i].hash == hash && id_equal(t->slots[i].pipe, id, len))
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
static int table_insert(routing_table *t, zl_pipe *p)
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
static void table_remove(routing_table *t, zl_pipe *p)
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

static void table_destroy(routing_table *t)
{
    free(t->slots);
    t->slots = NULL;
    t->mask = 0;
    t->count = 0;
}

/* ---- The socket ------------------------------------------------------- */

static router_state *state_of(zl_socket *s)
{
    return s->pattern;
}

static void router_init(zl_socket *s)
{
    router_state *r = state_of(s);
    zl_fair_queue_init(&r->in);
    zl_load_balance_init(&r->with_room);
    uint64_t seed = zl_random_seed(r);
    r->table.key[0] = zl_random_next(&seed);
    r->table.key[1] = zl_random_next(&seed);
    /* libzmq starts its generated ids at a random value too. */
    r->next_auto_id = (uint32_t)zl_random_next(&seed);
    zlink_msg_init(&r->pending_part);
}

static void router_destroy(zl_socket *s)
{
    router_state *r = state_of(s);
    zl_fair_queue_destroy(&r->in);
    zl_load_balance_destroy(&r->with_room);
    table_destroy(&r->table);
    zlink_msg_close(&r->pending_part);
}

/* Takes p out of the table, and out of the last-found cache with it. */
static void remove_route(router_state *r, zl_pipe *p)
{
    if (p == r->last_found)
        r->last_found = NULL;
    table_remove(&r->table, p);
}

/* libzmq's generated ids: a zero byte (reserved, no application may pick
 * it) and a big-endian counter. Network peers may still announce such an
 * id, so one in use is skipped. */
static int assign_auto_id(router_state *r, zl_pipe *p)
{
    uint8_t id[5];
    do {
        uint32_t n = r->next_auto_id++;
        id[0] = 0;
        id[1] = (uint8_t)(n >> 24);
        id[2] = (uint8_t)(n >> 16);
        id[3] = (uint8_t)(n >> 8);
        id[4] = (uint8_t)n;
    } while (table_find(&r->table, id, sizeof id) != NULL);
    return zl_pipe_set_routing_id(p, id, sizeof id);
}

/* The id's current holder gives it up: it is no longer routed to, and its
 * pipe ends unless it is already going. Its queued messages are still
 * read, up to its delimiter. Its connection stays open, reading nothing
 * (zl_pipe_give_up), so that its peer does not reconnect and take the id
 * back: libzmq's ROUTER_HANDOVER does the same. */
static void give_up_id(router_state *r, zl_pipe *holder)
{
    if (holder == r->current_out) {
        zl_pipe_rollback(holder);
        r->current_out = NULL;
    }
    remove_route(r, holder);
    if (!holder->terminated)
        zl_pipe_give_up(holder);
}

static void router_attach_pipe(zl_socket *s, zl_pipe *p, bool locally_initiated)
{
    router_state *r = state_of(s);
    size_t len;
    const uint8_t *id = zl_pipe_routing_id(p, &len);
    zl_pipe *holder = len > 0 ? table_find(&r->table, id, len) : NULL;
    if (holder) {
        /* A peer reconnecting before its old pipe's delimiter was read
         * takes its id back; otherwise the newcomer takes it only under
         * ROUTER_HANDOVER. Without it libzmq 4.3 ignores the newcomer:
         * nothing of it is delivered and nothing can reach it. */
        if (!holder->terminated && !r->handover) {
            zl_discard_input(p);
            return;
        }
        give_up_id(r, holder);
    }
    if ((len > 0 || assign_auto_id(r, p) == 0) &&
        table_insert(&r->table, p) == 0) {
        if (zl_fair_queue_attach(&r->in, p) == 0) {
            if (zl_load_balance_attach(&r->with_room, p) == 0)
                return;
            zl_fair_queue_remove(&r->in, p);
        }
        remove_route(r, p);
    }
    /* Out of memory: a pipe we cannot track is closed rather than left
     * half attached. read_activated finishes it off. */
    zl_pipe_terminate(p);
    zl_discard_input(p);
}

static void router_pipe_terminated(zl_socket *s, zl_pipe *p)
{
    router_state *r = state_of(s);
    if (p == r->current_out) {
        /* Its unfinished message is dropped whole: the parts already
         * written now, the rest as they come. */
        zl_pipe_rollback(p);
        r->current_out = NULL;
    }
    remove_route(r, p);
    zl_fair_queue_remove(&r->in, p);
    zl_load_balance_remove(&r->with_room, p);
}

static void router_read_activated(zl_socket *s, zl_pipe *p)
{
    router_state *r = state_of(s);
    if (zl_fair_queue_contains(&r->in, p))
        zl_fair_queue_activate(&r->in, p);
    else if (zl_discard_input(p))
        zl_socket_pipe_done(s, p);
}

static void router_write_activated(zl_socket *s, zl_pipe *p)
{
    zl_load_balance_activate(&state_of(s)->with_room, p);
}

/* The pipe whose routing id is the id frame's, or NULL. */
static zl_pipe *find_peer(router_state *r, zlink_msg_t *id_frame)
{
    const uint8_t *id = zlink_msg_data(id_frame);
    size_t len = zlink_msg_size(id_frame);
    if (r->last_found != NULL && id_equal(r->last_found, id, len))
        return r->last_found;
    zl_pipe *p = table_find(&r->table, id, len);
    if (p != NULL)
        r->last_found = p;
    return p;
}

static void drop(zlink_msg_t *msg)
{
    zlink_msg_close(msg);
    zlink_msg_init(msg);
}

/* The first part names the peer. Without ROUTER_MANDATORY a message for an
 * unknown or full peer is dropped whole; with it, the application hears
 * about it and keeps its message. */
static int send_routing_id(zl_socket *s, router_state *r, zlink_msg_t *msg)
{
    /* libzmq ignores an id frame with nothing after it. */
    if (!(zl_msg_flags(msg) & ZL_MSG_MORE)) {
        drop(msg);
        return 0;
    }
    bool mandatory = s->options.router_mandatory;
    zl_pipe *p = find_peer(r, msg);
    /* A peer that has left, its pipe waiting only for us to read up to its
     * delimiter, is unreachable: waiting for room there would never end. */
    if (p != NULL && p->terminated)
        p = NULL;
    if (p == NULL && mandatory) {
        errno = EHOSTUNREACH;
        return -1;
    }
    /* With ROUTER_MANDATORY the send waits for room, and may be paced
     * (pipe.h); without, a message for a full pipe is dropped. */
    if (p != NULL && mandatory) {
        zl_pipe_room room = zl_pipe_check_send(p);
        if (room != ZL_PIPE_ROOM) {
            errno = zl_pipe_refusal_errno(room);
            return -1;
        }
    } else if (p != NULL && !zl_pipe_check_write(p)) {
        p = NULL;
    }
    r->current_out = p;
    r->more_out = true;
    drop(msg);
    return 0;
}

static int router_send(zl_socket *s, zlink_msg_t *msg)
{
    router_state *r = state_of(s);
    if (!r->more_out)
        return send_routing_id(s, r, msg);

    r->more_out = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
    zl_pipe *p = r->current_out;
    if (p == NULL) {
        drop(msg);
        return 0;
    }
    /* Flushes the last part. */
    if (!zl_pipe_send(p, msg, false)) {
        /* Room was checked at the id frame: the pipe was terminated since,
         * or is out of memory. Either way the message is lost whole. */
        zl_pipe_rollback(p);
        r->current_out = NULL;
        drop(msg);
        return 0;
    }
    if (!r->more_out)
        r->current_out = NULL;
    return 0;
}

/* The next part from the pipes. libzmq skips routing-id messages, which
 * a reconnecting peer's session may repeat; the id itself is the pipe's
 * routing_id. */
static int read_part(zl_socket *s, router_state *r, zlink_msg_t *msg,
                     zl_pipe **from)
{
    for (;;) {
        if (zl_fair_queue_recv(&r->in, s, msg, from) != 0)
            return -1;
        if (!(zl_msg_flags(msg) & ZL_MSG_ROUTING_ID))
            return 0;
        drop(msg);
    }
}

/* The message whose first part is in pending_part came from `from`: the
 * part waits there until its id frame has been taken. */
static void hold_from(router_state *r, zl_pipe *from)
{
    size_t len;
    const uint8_t *id = zl_pipe_routing_id(from, &len);
    r->pending_id.len = (uint8_t)len;
    if (len > 0)
        memcpy(r->pending_id.data, id, len);
    r->pending = true;
    r->pending_id_sent = false;
}

/* Reads a message's first part into pending_part: read there at once, it
 * is moved only once, to the application. */
static int hold_first_part(zl_socket *s, router_state *r)
{
    zl_pipe *from = NULL;
    if (read_part(s, r, &r->pending_part, &from) != 0)
        return -1;
    hold_from(r, from);
    return 0;
}

/* The pending message's id frame, into msg (empty); -1 without memory,
 * which an id of at most ZL_MSG_INLINE_MAX bytes never needs. */
static int take_pending_id(router_state *r, zlink_msg_t *msg)
{
    if (zlink_msg_init_size(msg, r->pending_id.len) != 0) {
        zlink_msg_init(msg);
        return -1;
    }
    memcpy(zlink_msg_data(msg), r->pending_id.data, r->pending_id.len);
    zl_msg_set_flags(msg, ZL_MSG_MORE);
    /* The id frame has its connection's properties too, as in libzmq:
     * servers read "Peer-Address" from it. */
    struct zl_metadata *metadata = zl_msg_of(&r->pending_part)->metadata;
    if (metadata) {
        zl_metadata_addref(metadata, 1);
        zl_msg_set_metadata(msg, metadata);
    }
    r->pending_id_sent = true;
    r->more_in = true;
    return 0;
}

/* The socket's thread may read a message itself (direct_recv.h) between
 * two messages, from a peer the routing table knows, when its routing id
 * fits in a message without an allocation. */
static zl_direct_envelope router_direct_recv_envelope(zl_socket *s, zl_pipe *p)
{
    router_state *r = state_of(s);
    size_t id_len;
    (void)zl_pipe_routing_id(p, &id_len);
    if (r->more_in || r->pending || id_len > ZL_MSG_INLINE_MAX ||
        !zl_fair_queue_contains(&r->in, p))
        return ZL_DIRECT_NOT_NOW;
    return ZL_DIRECT_BARE;
}

/* As router_recv's first call: the part waits, the id frame goes out
 * (inline: router_direct_recv_envelope checked its size). */
static void router_direct_recv_taken(zl_socket *s, zl_pipe *p, zlink_msg_t *msg)
{
    router_state *r = state_of(s);
    zlink_msg_move(&r->pending_part, msg);
    hold_from(r, p);
    (void)take_pending_id(r, msg);
}

static int router_recv(zl_socket *s, zlink_msg_t *msg)
{
    router_state *r = state_of(s);
    if (r->more_in && !r->pending) {
        zl_pipe *from = NULL;
        if (read_part(s, r, msg, &from) != 0)
            return -1;
        r->more_in = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
        return 0;
    }
    if (!r->pending && hold_first_part(s, r) != 0)
        return -1;
    if (!r->pending_id_sent)
        return take_pending_id(r, msg);
    zlink_msg_move(msg, &r->pending_part);
    r->pending = false;
    r->more_in = (zl_msg_flags(msg) & ZL_MSG_MORE) != 0;
    return 0;
}

static bool router_has_in(zl_socket *s)
{
    router_state *r = state_of(s);
    if (r->more_in || r->pending)
        return true;
    return hold_first_part(s, r) == 0;
}

static bool router_has_out(zl_socket *s)
{
    /* Without ROUTER_MANDATORY a send always succeeds. With it, libzmq
     * reports whether any peer has room. */
    return !s->options.router_mandatory ||
           zl_load_balance_has_out(&state_of(s)->with_room);
}

static int router_setsockopt(zl_socket *s, int option, const void *val,
                             size_t len)
{
    if (option != ZLINK_ROUTER_HANDOVER) {
        errno = EINVAL;
        return -1;
    }
    int v;
    if (zl_option_int(val, len, &v) != 0)
        return -1;
    /* libzmq takes any value >= 0 here (non-zero: on). */
    if (v < 0) {
        errno = EINVAL;
        return -1;
    }
    state_of(s)->handover = v != 0;
    return 0;
}

const zl_pattern_ops zl_router_ops = {
    .type = ZLINK_ROUTER,
    .state_size = sizeof(router_state),
    .init = router_init,
    .destroy = router_destroy,
    .attach_pipe = router_attach_pipe,
    .pipe_terminated = router_pipe_terminated,
    .read_activated = router_read_activated,
    .write_activated = router_write_activated,
    .send = router_send,
    .recv = router_recv,
    .has_in = router_has_in,
    .has_out = router_has_out,
    .setsockopt = router_setsockopt,
    .getsockopt = NULL,
    .direct_recv_envelope = router_direct_recv_envelope,
    .direct_recv_taken = router_direct_recv_taken,
};
