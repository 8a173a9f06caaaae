/* listener.c — accepting tcp and ipc connections for a bound socket, and
 * ending them again on unbind or close. */
#include "listener.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "monitor.h"
#include "session.h"
#include "socket.h"
#include "transport/accept_backoff.h"
#include "transport/accept_filter.h"
#include "transport/address.h"
#include "transport/stream.h"

struct zl_listener_object {
    zl_io_object base;
    zl_socket *socket;
    zl_options options;
    zl_listener *listener; /* NULL for a routed one */
    uint64_t fd;           /* its OS socket, for monitor values */
    zl_op accept_op;
    /* A routed listener (ws paths) gets its connections from a shared
     * port, and asks it to forget us on term; the port calls
     * zl_listener_object_detached once it no longer can reach us. */
    zl_listener_detach_fn detach;
    void *detach_arg;
    /* Set after an accept failed for want of fds or memory: the next try
     * waits for it, rather than failing again at once. */
    zl_accept_backoff backoff;
    bool terminating;
    int linger;
    char endpoint[300];
    char ipc_path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
    char ipc_tmpdir[300];
    zl_session **children;
    size_t child_count, child_capacity;
};

/* Only a wildcard ipc bind's file and directory go when the listener
 * does: both are its own. A named socket file stays, as libzmq's does, since
 * another socket may have bound that path since and the file is then its
 * own (one that reused the old file's inode number is no different to
 * stat); a later bind replaces a stale one. */
static void remove_ipc_files(zl_listener_object *l)
{
    if (!l->ipc_tmpdir[0])
        return;
    uv_fs_t req;
    uv_fs_unlink(NULL, &req, l->ipc_path, NULL);
    uv_fs_req_cleanup(&req);
    uv_fs_rmdir(NULL, &req, l->ipc_tmpdir, NULL);
    uv_fs_req_cleanup(&req);
}

static void destroy(zl_listener_object *l)
{
    zl_monitor_event(l->socket, ZLINK_EVENT_CLOSED, l->fd, l->endpoint);
    remove_ipc_files(l);
    for (size_t i = 0; i < l->child_count; i++) {
        /* Cleared first, so the child does not call back into us. */
        l->children[i]->listener = NULL;
        l->children[i]->base.ops->term(&l->children[i]->base, l->linger);
    }
    free(l->children);
    zl_socket *socket = l->socket;
    atomic_fetch_sub(&l->base.thread->load, 1);
    zl_options_destroy(&l->options);
    free(l);
    zl_cmd ack = {.type = ZL_CMD_TERM_ACK, .target = socket};
    zl_mailbox_send(&socket->mailbox, &ack);
}

static const zl_io_object_ops listener_ops;

static void add_child(zl_listener_object *l, zl_session *s)
{
    if (l->child_count == l->child_capacity) {
        size_t cap = l->child_capacity ? l->child_capacity * 2 : 8;
        zl_session **grown = realloc(l->children, cap * sizeof *grown);
        if (!grown) {
            s->listener = NULL; /* it lives on without being tracked */
            return;
        }
        l->children = grown;
        l->child_capacity = cap;
    }
    s->listener = l;
    s->listener_slot = l->child_count;
    l->children[l->child_count++] = s;
}

void zl_listener_child_gone(zl_listener_object *l, zl_session *s)
{
    zl_session *last = l->children[--l->child_count];
    l->children[s->listener_slot] = last;
    last->listener_slot = s->listener_slot;
}

static void accept_next(zl_listener_object *l)
{
    zl_listener_accept(l->listener, &l->accept_op);
}

static void on_retry_timer(zl_timer *t)
{
    accept_next(t->data);
}

/* A connection no accept filter admits: closed unread, reported as libzmq
 * reports it, an accept that failed. */
static void refuse(zl_listener_object *l, zl_handle *h)
{
    zl_handle_close(h);
    zl_monitor_event(l->socket, ZLINK_EVENT_ACCEPT_FAILED, EACCES, l->endpoint);
}

static void on_accept(zl_op *op, int status, size_t bytes)
{
    zl_listener_object *l = op->data;
    if (l->terminating) {
        if (op->accepted)
            zl_handle_close(op->accepted);
        destroy(l);
        return;
    }
    if (status != 0) {
        zl_monitor_event(l->socket, ZLINK_EVENT_ACCEPT_FAILED,
                         (uint64_t)-status, l->endpoint);
        if (zl_accept_backoff_after(&l->backoff, l->base.thread->loop, status))
            return;
    } else if (!zl_accept_filters_admit(l->options.accept_filters,
                                        op->accepted)) {
        zl_accept_backoff_after(&l->backoff, l->base.thread->loop, 0);
        refuse(l, op->accepted);
    } else {
        zl_accept_backoff_after(&l->backoff, l->base.thread->loop, 0);
        char peer[300];
        snprintf(peer, sizeof peer, "%s", l->endpoint);
        zl_monitor_event(l->socket, ZLINK_EVENT_ACCEPTED,
                         (uint64_t)zl_handle_os_socket(op->accepted),
                         l->endpoint);
        zl_session *s = zl_session_create_accepted(
            l->socket, l->base.thread, &l->options, op->accepted, peer);
        if (s)
            add_child(l, s);
    }
    op->accepted = NULL;
    accept_next(l);
}

static void listener_plug(zl_io_object *obj)
{
    zl_listener_object *l = (zl_listener_object *)obj;
    if (!l->terminating && l->listener)
        accept_next(l);
}

static void listener_term(zl_io_object *obj, int linger)
{
    zl_listener_object *l = (zl_listener_object *)obj;
    if (l->terminating)
        return;
    l->linger = linger; /* handed on to the accepted sessions */
    l->terminating = true;
    if (!l->listener) {
        if (l->detach(l->detach_arg, l))
            destroy(l);
        return;
    }
    if (zl_accept_backoff_waiting(&l->backoff)) {
        /* Backing off: no accept is pending to finish us. */
        zl_accept_backoff_stop(&l->backoff, l->base.thread->loop);
        zl_listener_close(l->listener);
        destroy(l);
        return;
    }
    /* The pending accept completes with ZL_ECANCELED and finishes us. */
    zl_listener_close(l->listener);
}

void zl_listener_object_detached(zl_listener_object *l)
{
    destroy(l);
}

void zl_listener_object_adopt(zl_listener_object *l, zl_stream *stream,
                              uint64_t handshake_spent_ms)
{
    if (l->terminating) {
        zl_stream_close(stream);
        return;
    }
    if (!zl_accept_filters_admit(l->options.accept_filters, stream->handle)) {
        zl_stream_close(stream);
        zl_monitor_event(l->socket, ZLINK_EVENT_ACCEPT_FAILED, EACCES,
                         l->endpoint);
        return;
    }
    zl_monitor_event(l->socket, ZLINK_EVENT_ACCEPTED,
                     (uint64_t)zl_handle_os_socket(stream->handle),
                     l->endpoint);
    zl_session *s = zl_session_create_accepted_stream(
        l->socket, l->base.thread, &l->options, stream, handshake_spent_ms,
        l->endpoint);
    if (s)
        add_child(l, s);
}

const zl_options *zl_listener_object_options(const zl_listener_object *l)
{
    return &l->options;
}

struct zl_socket *zl_listener_object_socket(const zl_listener_object *l)
{
    return l->socket;
}

uint64_t zl_listener_object_fd(const zl_listener_object *l)
{
    return l->fd;
}

const char *zl_listener_object_endpoint(const zl_listener_object *l)
{
    return l->endpoint;
}

int zl_listener_object_create_routed(zl_socket *socket, zl_io_thread *thread,
                                     const char *endpoint,
                                     zl_listener_detach_fn detach,
                                     void *detach_arg, zl_listener_object **out)
{
    zl_listener_object *l = calloc(1, sizeof *l);
    if (!l || zl_options_copy(&l->options, &socket->options) != 0) {
        free(l);
        errno = ENOMEM;
        return -1;
    }
    snprintf(l->endpoint, sizeof l->endpoint, "%s", endpoint);
    l->base.ops = &listener_ops;
    l->base.thread = thread;
    l->socket = socket;
    l->detach = detach;
    l->detach_arg = detach_arg;
    atomic_fetch_add(&thread->load, 1);
    atomic_fetch_add(&socket->io_objects, 1);
    *out = l;
    return 0;
}

static void listener_pipe_command(zl_io_object *obj, const zl_cmd *cmd) {}

static const zl_io_object_ops listener_ops = {
    .plug = listener_plug,
    .term = listener_term,
    .pipe_command = listener_pipe_command,
};

int zl_listener_object_create(zl_socket *socket, zl_io_thread *thread,
                              const zl_addr *addr, zl_transport transport,
                              const char *ipc_tmpdir, char *endpoint_out,
                              size_t endpoint_cap, zl_listener_object **out)
{
    zl_listener_object *l = calloc(1, sizeof *l);
    if (!l || zl_options_copy(&l->options, &socket->options) != 0) {
        free(l);
        errno = ENOMEM;
        return -1;
    }
    bool adopt = socket->options.use_fd >= 0;
    bool ipc_file = !adopt && addr->u.sa.sa_family == AF_UNIX &&
                    addr->u.un.sun_path[0] != '\0';
    if (ipc_file) {
        /* A socket file left behind by an earlier run would make bind fail,
         * as libzmq knows. */
        snprintf(l->ipc_path, sizeof l->ipc_path, "%s", addr->u.un.sun_path);
        uv_fs_t req;
        uv_fs_unlink(NULL, &req, l->ipc_path, NULL);
        uv_fs_req_cleanup(&req);
    }
    int rc =
        adopt ? zl_listener_adopt(thread->loop,
                                  (zl_os_socket)socket->options.use_fd,
                                  transport == ZL_TRANSPORT_IPC, &l->listener)
              : zl_listener_open_ex(thread->loop, addr, socket->options.backlog,
                                    &socket->options.tcp, &l->listener);
    if (rc != 0) {
        zl_options_destroy(&l->options);
        free(l);
        errno = -rc;
        return -1;
    }
    l->fd = (uint64_t)zl_listener_os_socket(l->listener);
    zl_addr bound;
    if (zl_listener_local_addr(l->listener, &bound) != 0)
        bound = *addr;
    zl_addr_format(&bound, l->endpoint, sizeof l->endpoint);
    /* Accepted sessions take their stream (TLS or none) from this name. */
    if (transport == ZL_TRANSPORT_TLS)
        memcpy(l->endpoint, zl_transport_scheme(transport), 3);
    snprintf(endpoint_out, endpoint_cap, "%s", l->endpoint);
    if (ipc_tmpdir)
        snprintf(l->ipc_tmpdir, sizeof l->ipc_tmpdir, "%s", ipc_tmpdir);
    l->base.ops = &listener_ops;
    l->base.thread = thread;
    l->socket = socket;
    l->accept_op.cb = on_accept;
    l->accept_op.data = l;
    zl_accept_backoff_init(&l->backoff, on_retry_timer, l);
    atomic_fetch_add(&thread->load, 1);
    atomic_fetch_add(&socket->io_objects, 1);
    *out = l;
    return 0;
}
