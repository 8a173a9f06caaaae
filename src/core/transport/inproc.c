/* inproc.c — the context's registry of inproc names, and joining two
 * sockets with one pipe pair. The registry has its own lock: binds and
 * connects of different sockets meet only here. */
#include "transport/inproc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "socket.h"

typedef struct zl_inproc_entry {
    char *name;
    struct zl_socket *bound; /* NULL while connects wait for a bind */
    /* The binder's options that shape a new pipe, taken at bind time. */
    int sndhwm, rcvhwm;
    zl_blob routing_id;
    /* Binder ends of pipes made by connects that came first. */
    zl_pipe **pending;
    size_t pending_count;
} zl_inproc_entry;

struct zl_inproc_registry {
    uv_mutex_t lock;
    zl_inproc_entry *entries;
    size_t count, capacity;
};

zl_inproc_registry *zl_inproc_registry_new(void)
{
    zl_inproc_registry *r = calloc(1, sizeof *r);
    if (r)
        uv_mutex_init(&r->lock);
    return r;
}

static zl_inproc_registry *registry_of(zl_socket *s)
{
    return zl_ctx_inproc(s->ctx);
}

static zl_inproc_entry *find(zl_inproc_registry *r, const char *name)
{
    for (size_t i = 0; i < r->count; i++)
        if (strcmp(r->entries[i].name, name) == 0)
            return &r->entries[i];
    return NULL;
}

static zl_inproc_entry *add(zl_inproc_registry *r, const char *name)
{
    if (r->count == r->capacity) {
        size_t cap = r->capacity ? r->capacity * 2 : 8;
        zl_inproc_entry *grown = realloc(r->entries, cap * sizeof *grown);
        if (!grown)
            return NULL;
        r->entries = grown;
        r->capacity = cap;
    }
    zl_inproc_entry *e = &r->entries[r->count];
    memset(e, 0, sizeof *e);
    e->name = strdup(name);
    if (!e->name)
        return NULL;
    r->count++;
    return e;
}

static void remove_entry(zl_inproc_registry *r, zl_inproc_entry *e)
{
    for (size_t i = 0; i < e->pending_count; i++) {
        zl_pipe_terminate(e->pending[i]);
        zl_pipe_release(e->pending[i]);
    }
    free(e->pending);
    free(e->name);
    *e = r->entries[--r->count];
}

int zl_inproc_bind(zl_socket *s, const char *name)
{
    zl_inproc_registry *r = registry_of(s);
    uv_mutex_lock(&r->lock);
    zl_inproc_entry *e = find(r, name);
    if (e && e->bound) {
        uv_mutex_unlock(&r->lock);
        errno = EADDRINUSE;
        return -1;
    }
    if (!e && !(e = add(r, name))) {
        uv_mutex_unlock(&r->lock);
        errno = ENOMEM;
        return -1;
    }
    e->bound = s;
    e->sndhwm = s->options.sndhwm;
    e->rcvhwm = s->options.rcvhwm;
    e->routing_id =
        s->options.routing_id ? *s->options.routing_id : (zl_blob){0};
    zl_pipe **pending = e->pending;
    size_t count = e->pending_count;
    e->pending = NULL;
    e->pending_count = 0;
    uv_mutex_unlock(&r->lock);

    for (size_t i = 0; i < count; i++) {
        zl_pipe_set_owner(pending[i], &s->mailbox, s);
        zl_socket_attach_pipe(s, pending[i], false);
    }
    free(pending);
    return 0;
}

/* Out of memory in zl_inproc_connect: neither end of the new pair has
 * reached a socket, so dropping both frees it. */
static int drop_new_pair(zl_inproc_registry *r, zl_pipe *theirs, zl_pipe *ours)
{
    uv_mutex_unlock(&r->lock);
    zl_pipe_release(theirs);
    zl_pipe_release(ours);
    errno = ENOMEM;
    return -1;
}

int zl_inproc_connect(zl_socket *s, const char *name, zl_pipe **ours)
{
    zl_inproc_registry *r = registry_of(s);
    uv_mutex_lock(&r->lock);
    zl_inproc_entry *e = find(r, name);
    if (!e && !(e = add(r, name))) {
        uv_mutex_unlock(&r->lock);
        errno = ENOMEM;
        return -1;
    }
    int out_hwm = s->options.sndhwm, in_hwm = s->options.rcvhwm;
    if (e->bound) {
        out_hwm = zl_pipe_combined_hwm(s->options.sndhwm, e->rcvhwm);
        in_hwm = zl_pipe_combined_hwm(e->sndhwm, s->options.rcvhwm);
    }
    /* CONFLATE on the connecting socket, as libzmq. Outbound, one message
     * deep (with no session to hold the newest, a full pipe keeps the
     * older message); inbound, the socket reads the newest queued
     * (zl_fair_queue_set_conflate). */
    if (zl_options_conflates(&s->options))
        out_hwm = 1;
    zl_pipe *theirs;
    if (zl_pipe_pair(ours, &theirs, out_hwm, in_hwm) != 0) {
        uv_mutex_unlock(&r->lock);
        errno = ENOMEM;
        return -1;
    }
    zl_pipe_set_owner(*ours, &s->mailbox, s);
    /* What each end knows of the other's RCVHWM. A binder that comes later
     * tells ours as it attaches theirs (zl_socket_hwms_for_new_pipe), and
     * so does one whose HWMs changed since its bind. */
    (*ours)->told_recv_hwm = s->options.rcvhwm;
    theirs->peer_recv_hwm = s->options.rcvhwm;
    if (e->bound) {
        (*ours)->peer_recv_hwm = e->rcvhwm;
        theirs->told_recv_hwm = e->rcvhwm;
    }
    /* Each end carries the routing id its owner knows the peer by. */
    const zl_blob *their_id = s->options.routing_id;
    const zl_blob *our_id = s->options.connect_routing_id
                                ? s->options.connect_routing_id
                                : &e->routing_id;
    if ((their_id &&
         zl_pipe_set_routing_id(theirs, their_id->data, their_id->len) != 0) ||
        zl_pipe_set_routing_id(*ours, our_id->data, our_id->len) != 0) {
        return drop_new_pair(r, theirs, *ours);
    }
    if (e->bound) {
        zl_socket *binder = e->bound;
        zl_pipe_set_owner(theirs, &binder->mailbox, binder);
        zl_cmd cmd = {
            .type = ZL_CMD_ATTACH_PIPE, .target = binder, .pipe = theirs};
        zl_pipe_ref(theirs);
        zl_mailbox_send(&binder->mailbox, &cmd);
    } else {
        zl_pipe **grown =
            realloc(e->pending, (e->pending_count + 1) * sizeof *grown);
        if (!grown)
            return drop_new_pair(r, theirs, *ours);
        e->pending = grown;
        e->pending[e->pending_count++] = theirs;
    }
    uv_mutex_unlock(&r->lock);
    zl_socket_attach_pipe(s, *ours, true);
    return 0;
}

int zl_inproc_connect_pipe(zl_inproc_registry *r, const char *name,
                           zl_mailbox *mailbox, void *owner, zl_pipe **ours)
{
    uv_mutex_lock(&r->lock);
    zl_inproc_entry *e = find(r, name);
    if (!e || !e->bound) {
        uv_mutex_unlock(&r->lock);
        errno = ECONNREFUSED;
        return -1;
    }
    zl_socket *binder = e->bound;
    zl_pipe *theirs;
    /* One request and one reply go each way: no HWM. */
    if (zl_pipe_pair(ours, &theirs, 0, 0) != 0) {
        uv_mutex_unlock(&r->lock);
        errno = ENOMEM;
        return -1;
    }
    zl_pipe_set_owner(*ours, mailbox, owner);
    zl_pipe_set_owner(theirs, &binder->mailbox, binder);
    zl_cmd cmd = {.type = ZL_CMD_ATTACH_PIPE, .target = binder, .pipe = theirs};
    zl_pipe_ref(theirs);
    zl_mailbox_send(&binder->mailbox, &cmd);
    uv_mutex_unlock(&r->lock);
    return 0;
}

void zl_inproc_unbind(zl_socket *s, const char *name)
{
    zl_inproc_registry *r = registry_of(s);
    uv_mutex_lock(&r->lock);
    zl_inproc_entry *e = find(r, name);
    if (e && e->bound == s)
        remove_entry(r, e);
    uv_mutex_unlock(&r->lock);
}

void zl_inproc_unbind_all(zl_socket *s)
{
    zl_inproc_registry *r = registry_of(s);
    uv_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->count;) {
        if (r->entries[i].bound == s)
            remove_entry(r, &r->entries[i]);
        else
            i++;
    }
    uv_mutex_unlock(&r->lock);
}

void zl_inproc_registry_destroy(zl_inproc_registry *r)
{
    if (!r)
        return;
    while (r->count > 0)
        remove_entry(r, &r->entries[0]);
    free(r->entries);
    uv_mutex_destroy(&r->lock);
    free(r);
}
