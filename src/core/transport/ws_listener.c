/* ws_listener.c — the shared ws/wss port: one listening socket per
 * host:port and context, the upgrades in progress on it, and the table
 * of paths that routes each upgraded connection to the socket that bound
 * it. Binds add routes from application threads; everything else runs on
 * the port's I/O thread. */
#include "ws_listener.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "ctx.h"
#include "monitor.h"
#include "socket.h"
#include "transport/accept_backoff.h"
#include "transport/address.h"
#include "transport/stream.h"
#include "transport/ws_stream.h"

typedef struct route {
    char path[ZL_WS_PATH_MAX];
    zl_listener_object *owner;
} route;

struct zl_ws_port;

/* A connection whose upgrade is under way. */
typedef struct upgrade {
    struct zl_ws_port *port;
    zl_stream *stream;
    zl_op op;
    zl_timer timer;
    uint64_t accepted_ms; /* HANDSHAKE_IVL runs from here, the upgrade too */
    bool closed; /* we closed the stream; its handshake completes cancelled */
    struct upgrade *prev, *next;
} upgrade;

typedef struct zl_ws_port {
    zl_io_object base;
    struct zl_ws_port *next; /* in the registry */
    const void *ctx;
    bool secure;
    char address[300]; /* "tcp://127.0.0.1:5555": the key */
    zl_listener *listener;
    zl_op accept_op;
    bool accept_pending;
    zl_accept_backoff backoff; /* after an accept failed for want of fds */
    /* The first binder's: HANDSHAKE_IVL bounds an upgrade before any
     * socket is known, and wss takes its TLS settings from them. */
    zl_options options;
    /* Guarded by registry_lock, since binds add to it. */
    route *routes;
    size_t route_count, route_cap;
    bool closing;
    /* I/O thread only. */
    upgrade *upgrades;
    zl_listener_object *last_owner; /* freed once the port is gone */
} zl_ws_port;

static uv_once_t registry_once = UV_ONCE_INIT;
static uv_mutex_t registry_lock;
static zl_ws_port *registry;

static void registry_init(void)
{
    uv_mutex_init(&registry_lock);
}

static route *find_route(zl_ws_port *p, const char *path)
{
    for (size_t i = 0; i < p->route_count; i++)
        if (strcmp(p->routes[i].path, path) == 0)
            return &p->routes[i];
    return NULL;
}

/* A connection that failed before it reached a socket: every socket bound
 * on the port hears of it, as tcp's listener reports its own. */
static void report_to_all(zl_ws_port *p, int event, uint64_t value)
{
    uv_mutex_lock(&registry_lock);
    for (size_t i = 0; i < p->route_count; i++) {
        zl_listener_object *l = p->routes[i].owner;
        zl_monitor_event(zl_listener_object_socket(l), event, value,
                         zl_listener_object_endpoint(l));
    }
    uv_mutex_unlock(&registry_lock);
}

/* Whether origin is in the comma/space separated list. */
static bool origin_listed(const char *list, const char *origin)
{
    size_t n = strlen(origin);
    const char *p = list;
    while (*p) {
        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, ", \t");
        if (len > 0 && len == n && memcmp(p, origin, n) == 0)
            return true;
        p += len;
    }
    return false;
}

/* Asked by the ws stream once the request is valid: which socket? */
static int route_request(void *arg, zl_stream *ws, const zl_ws_request *req)
{
    zl_ws_port *p = arg;
    uv_mutex_lock(&registry_lock);
    route *r = find_route(p, req->path);
    int status = 0;
    if (!r) {
        status = 404;
    } else {
        const zl_options *o = zl_listener_object_options(r->owner);
        if (o->ws_allowed_origins &&
            !origin_listed(o->ws_allowed_origins, req->origin))
            status = 403;
        else
            zl_ws_stream_set_max_msg(ws, o->maxmsgsize);
    }
    uv_mutex_unlock(&registry_lock);
    return status;
}

static void port_maybe_free(zl_ws_port *p)
{
    if (!p->closing || p->accept_pending || p->upgrades)
        return;
    zl_listener_object *owner = p->last_owner;
    atomic_fetch_sub(&p->base.thread->load, 1);
    zl_options_destroy(&p->options);
    free(p->routes);
    free(p);
    if (owner)
        zl_listener_object_detached(owner);
}

static void unlink_upgrade(upgrade *up)
{
    zl_timer_stop(up->port->base.thread->loop, &up->timer);
    if (up->prev)
        up->prev->next = up->next;
    else
        up->port->upgrades = up->next;
    if (up->next)
        up->next->prev = up->prev;
}

static void on_upgraded(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    upgrade *up = op->data;
    zl_ws_port *p = up->port;
    unlink_upgrade(up);
    if (up->closed) {
        /* Timed out or the port closed: the stream is gone already. */
    } else if (status != 0 || p->closing) {
        uint64_t value = 0;
        bool retry; /* an accepted connection never reconnects */
        int event = zl_stream_failure(up->stream, &value, &retry);
        if (!p->closing)
            report_to_all(
                p, event ? event : ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL,
                value);
        zl_stream_close(up->stream);
    } else {
        uv_mutex_lock(&registry_lock);
        route *r = find_route(p, zl_ws_stream_path(up->stream));
        zl_listener_object *owner = r ? r->owner : NULL;
        uv_mutex_unlock(&registry_lock);
        /* Routes leave only on this thread: owner is still alive. */
        if (owner)
            zl_listener_object_adopt(owner, up->stream,
                                     zl_loop_now(p->base.thread->loop) -
                                         up->accepted_ms);
        else
            zl_stream_close(up->stream); /* unbound meanwhile */
    }
    free(up);
    port_maybe_free(p);
}

static void on_upgrade_timeout(zl_timer *t)
{
    upgrade *up = t->data;
    up->closed = true;
    report_to_all(up->port, ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL, ETIMEDOUT);
    zl_stream_close(up->stream); /* its handshake completes cancelled */
}

static void start_upgrade(zl_ws_port *p, zl_handle *h)
{
    zl_loop *loop = p->base.thread->loop;
    /* It takes the handle, and closes it when it fails. */
    zl_stream *lower =
        zl_stream_ws_lower(loop, h, p->secure, &p->options, false, NULL);
    if (!lower)
        return;
    upgrade *up = calloc(1, sizeof *up);
    zl_stream *ws =
        up ? zl_ws_stream_create_server(loop, lower, route_request, p) : NULL;
    if (!ws) {
        free(up);
        zl_stream_close(lower);
        return;
    }
    up->port = p;
    up->stream = ws;
    up->op.cb = on_upgraded;
    up->op.data = up;
    up->timer.cb = on_upgrade_timeout;
    up->timer.data = up;
    up->accepted_ms = zl_loop_now(loop);
    up->next = p->upgrades;
    if (p->upgrades)
        p->upgrades->prev = up;
    p->upgrades = up;
    if (p->options.handshake_ivl > 0)
        zl_timer_start(loop, &up->timer, (uint64_t)p->options.handshake_ivl);
    zl_stream_handshake(ws, &up->op);
}

static void on_accept(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    zl_ws_port *p = op->data;
    p->accept_pending = false;
    zl_handle *h = op->accepted;
    op->accepted = NULL;
    if (p->closing) {
        if (h)
            zl_handle_close(h);
        port_maybe_free(p);
        return;
    }
    if (status == 0 && h)
        start_upgrade(p, h);
    else if (status != 0)
        report_to_all(p, ZLINK_EVENT_ACCEPT_FAILED, (uint64_t)-status);
    if (zl_accept_backoff_after(&p->backoff, p->base.thread->loop, status))
        return;
    p->accept_pending = true;
    zl_listener_accept(p->listener, &p->accept_op);
}

static void on_retry_timer(zl_timer *t)
{
    zl_ws_port *p = t->data;
    p->accept_pending = true;
    zl_listener_accept(p->listener, &p->accept_op);
}

static void port_plug(zl_io_object *obj)
{
    zl_ws_port *p = (zl_ws_port *)obj;
    if (p->closing && !p->accept_pending && !p->last_owner) {
        /* A bind that failed after opening it. */
        zl_listener_close(p->listener);
        port_maybe_free(p);
        return;
    }
    if (p->closing || p->accept_pending)
        return;
    p->accept_pending = true;
    zl_listener_accept(p->listener, &p->accept_op);
}

static void port_term(zl_io_object *obj, int linger)
{
    (void)obj;
    (void)linger; /* the port ends with its last route, never by TERM */
}

static void port_pipe_command(zl_io_object *obj, const zl_cmd *cmd)
{
    (void)obj;
    (void)cmd;
}

static const zl_io_object_ops port_ops = {
    .plug = port_plug,
    .term = port_term,
    .pipe_command = port_pipe_command,
};

/* Runs on the port's thread when a route's listener object terminates. */
static bool detach_route(void *arg, zl_listener_object *l)
{
    zl_ws_port *p = arg;
    uv_mutex_lock(&registry_lock);
    for (size_t i = 0; i < p->route_count; i++)
        if (p->routes[i].owner == l) {
            p->routes[i] = p->routes[--p->route_count];
            break;
        }
    bool last = p->route_count == 0;
    if (last) {
        p->closing = true;
        for (zl_ws_port **pp = &registry; *pp; pp = &(*pp)->next)
            if (*pp == p) {
                *pp = p->next;
                break;
            }
    }
    uv_mutex_unlock(&registry_lock);
    if (!last)
        return true;
    p->last_owner = l;
    for (upgrade *up = p->upgrades; up; up = up->next)
        if (!up->closed) {
            up->closed = true;
            zl_stream_close(up->stream);
        }
    /* The pending accept completes cancelled; the listener's memory goes
     * after that. Without one pending (never plugged, or backing off),
     * nothing waits. */
    zl_accept_backoff_stop(&p->backoff, p->base.thread->loop);
    zl_listener_close(p->listener);
    port_maybe_free(p);
    return false;
}

/* Called with registry_lock held. */
static zl_ws_port *port_open(zl_socket *socket, zl_io_thread *thread,
                             const zl_addr *addr, bool secure)
{
    zl_ws_port *p = calloc(1, sizeof *p);
    if (!p || zl_options_copy(&p->options, &socket->options) != 0) {
        free(p);
        errno = ENOMEM;
        return NULL;
    }
    int rc = zl_listener_open_ex(thread->loop, addr, socket->options.backlog,
                                 &socket->options.tcp, &p->listener);
    if (rc != 0) {
        zl_options_destroy(&p->options);
        free(p);
        errno = -rc;
        return NULL;
    }
    zl_addr bound;
    if (zl_listener_local_addr(p->listener, &bound) != 0)
        bound = *addr;
    zl_addr_format(&bound, p->address, sizeof p->address);
    p->base.ops = &port_ops;
    p->base.thread = thread;
    p->ctx = socket->ctx;
    p->secure = secure;
    p->accept_op.cb = on_accept;
    p->accept_op.data = p;
    zl_accept_backoff_init(&p->backoff, on_retry_timer, p);
    atomic_fetch_add(&thread->load, 1);
    p->next = registry;
    registry = p;
    return p;
}

static zl_ws_port *port_find(const zl_socket *socket, const zl_addr *addr,
                             bool secure)
{
    char key[300];
    if (zl_addr_format(addr, key, sizeof key) != 0)
        return NULL;
    for (zl_ws_port *p = registry; p; p = p->next)
        if (p->ctx == socket->ctx && p->secure == secure && !p->closing &&
            strcmp(p->address, key) == 0)
            return p;
    return NULL;
}

static int port_of(const zl_addr *addr)
{
    return addr->u.sa.sa_family == AF_INET6 ? ntohs(addr->u.in6.sin6_port)
                                            : ntohs(addr->u.in4.sin_port);
}

int zl_ws_bind(zl_socket *socket, bool secure, const char *rest, char *resolved,
               size_t resolved_cap, zl_listener_object **out)
{
    char hostport[300], path[ZL_WS_PATH_MAX];
    zl_addr addr;
    if (zl_ws_endpoint_split(rest, hostport, sizeof hostport, path,
                             sizeof path) != 0)
        return -1;
    /* Requests are routed by path without their query: a bind with one
     * could never be reached. */
    if (strchr(path, '?')) {
        errno = EINVAL;
        return -1;
    }
    if (zl_tcp_resolve(hostport, true, socket->options.ipv6, &addr) != 0)
        return -1;
    route *grown = NULL;
    uv_once(&registry_once, registry_init);
    uv_mutex_lock(&registry_lock);
    /* A wildcard port is a new port every time. */
    zl_ws_port *p = port_of(&addr) ? port_find(socket, &addr, secure) : NULL;
    bool fresh = p == NULL;
    if (p && find_route(p, path)) {
        uv_mutex_unlock(&registry_lock);
        errno = EADDRINUSE;
        return -1;
    }
    if (fresh) {
        zl_io_thread *thread =
            zl_ctx_choose_thread(socket->ctx, socket->options.affinity);
        p = thread ? port_open(socket, thread, &addr, secure) : NULL;
        if (!p) {
            uv_mutex_unlock(&registry_lock);
            return -1;
        }
    }
    /* ws://127.0.0.1:PORT/path from tcp://127.0.0.1:PORT */
    snprintf(resolved, resolved_cap, "%s://%s%s", secure ? "wss" : "ws",
             p->address + strlen("tcp://"), path);
    zl_listener_object *l = NULL;
    if (p->route_count == p->route_cap) {
        size_t cap = p->route_cap ? p->route_cap * 2 : 4;
        grown = realloc(p->routes, cap * sizeof *grown);
        if (grown) {
            p->routes = grown;
            p->route_cap = cap;
        }
    } else {
        grown = p->routes;
    }
    if (!grown ||
        zl_listener_object_create_routed(socket, p->base.thread, resolved,
                                         detach_route, p, &l) != 0) {
        if (fresh) {
            /* Its listener is closed on its own thread: plugging a closing
             * port does that. */
            p->closing = true;
            registry = p->next;
        }
        uv_mutex_unlock(&registry_lock);
        if (fresh)
            zl_io_thread_send(p->base.thread, ZL_CMD_PLUG, &p->base);
        errno = ENOMEM;
        return -1;
    }
    route *r = &p->routes[p->route_count++];
    snprintf(r->path, sizeof r->path, "%s", path);
    r->owner = l;
    uv_mutex_unlock(&registry_lock);
    if (fresh)
        zl_io_thread_send(p->base.thread, ZL_CMD_PLUG, &p->base);
    *out = l;
    return 0;
}
