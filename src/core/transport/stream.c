/* stream.c — choosing the stream for an endpoint's transport (plain, TLS,
 * WebSocket, WebSocket over TLS), and the plain stream that forwards to a
 * backend handle. */
#include "stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/address.h"
#if defined(ZLINK_HAVE_TLS)
#include "transport/tls_config.h"
#include "transport/tls_stream.h"
#endif
#if defined(ZLINK_WITH_WS)
#include "transport/ws_stream.h"
#endif

static zl_stream *plain_create(zl_handle *handle)
{
    zl_stream *s = calloc(1, sizeof *s);
    if (!s) {
        errno = ENOMEM;
        return NULL;
    }
    s->handle = handle;
    return s;
}

/* A stream over the handle, plain or TLS (hostname: what a client checks
 * the server's certificate against; endpoint: the host:port it reached,
 * where it may resume a session). It takes the handle: on failure the
 * handle is closed and NULL returned with errno set. */
static zl_stream *lower_create(zl_loop *loop, zl_handle *handle, bool secure,
                               const zl_options *options, bool connecting,
                               const char *hostname, const char *endpoint)
{
    zl_stream *plain = plain_create(handle);
    if (!plain) {
        zl_handle_close(handle);
        return NULL;
    }
    if (!secure)
        return plain;
#if defined(ZLINK_HAVE_TLS)
    int err = 0;
    zl_stream *tls = zl_tls_stream_create(loop, plain, options, connecting,
                                          connecting ? hostname : NULL,
                                          connecting ? endpoint : NULL, &err);
    if (tls)
        return tls;
    errno = err;
#else
    (void)loop;
    (void)options;
    (void)connecting;
    (void)hostname;
    (void)endpoint;
    errno = EPROTONOSUPPORT;
#endif
    zl_stream_close(plain);
    return NULL;
}

zl_stream *zl_stream_ws_lower(zl_loop *loop, zl_handle *handle, bool secure,
                              const zl_options *options, bool connecting,
                              const char *hostname)
{
    return lower_create(loop, handle, secure, options, connecting, hostname,
                        NULL);
}

#if defined(ZLINK_HAVE_TLS)
/* tls://: TLS over the handle; the client checks the host it was asked to
 * connect to. */
static zl_stream *tls_create(zl_loop *loop, zl_handle *handle,
                             const char *hostport, const zl_options *options,
                             bool connecting)
{
    char host[256] = "";
    if (connecting && zl_tcp_host(hostport, host, sizeof host) != 0) {
        zl_handle_close(handle);
        return NULL;
    }
    return lower_create(loop, handle, true, options, connecting, host,
                        hostport);
}
#endif

#if defined(ZLINK_WITH_WS)
/* A ws or wss client: the upgrade names the endpoint's host:port and
 * path, and wss checks the host's certificate. */
static zl_stream *ws_client_create(zl_loop *loop, zl_handle *handle,
                                   const char *rest, const zl_options *options,
                                   bool secure)
{
    char hostport[300], path[ZL_WS_PATH_MAX], hostname[300];
    if (zl_ws_endpoint_split(rest, hostport, sizeof hostport, path,
                             sizeof path) != 0 ||
        zl_tcp_host(hostport, hostname, sizeof hostname) != 0) {
        zl_handle_close(handle);
        return NULL;
    }
    zl_stream *lower =
        lower_create(loop, handle, secure, options, true, hostname, hostport);
    if (!lower)
        return NULL;
    zl_stream *ws =
        zl_ws_stream_create_client(loop, lower, hostport, path, options);
    if (!ws) {
        int err = errno;
        zl_stream_close(lower);
        errno = err;
    }
    return ws;
}
#endif

int zl_stream_prepare(zl_options *options, int transport, bool server)
{
#if defined(ZLINK_HAVE_TLS)
    if (transport == ZL_TRANSPORT_TLS || transport == ZL_TRANSPORT_WSS)
        return zl_tls_settings_prepare(&options->tls, server);
#else
    (void)options;
    (void)transport;
    (void)server;
#endif
    return 0;
}

zl_stream *zl_stream_create(zl_loop *loop, zl_handle *handle,
                            const char *endpoint, const zl_options *options,
                            bool connecting)
{
    zl_transport transport;
    const char *rest;
    if (zl_endpoint_split(endpoint, &transport, &rest) != 0) {
        zl_handle_close(handle);
        return NULL;
    }
    switch (transport) {
    case ZL_TRANSPORT_TCP:
    case ZL_TRANSPORT_IPC:
        return lower_create(loop, handle, false, options, connecting, NULL,
                            NULL);
#if defined(ZLINK_HAVE_TLS)
    case ZL_TRANSPORT_TLS:
        return tls_create(loop, handle, rest, options, connecting);
#endif
#if defined(ZLINK_WITH_WS)
    case ZL_TRANSPORT_WS:
    case ZL_TRANSPORT_WSS:
        /* Accepted ws connections are upgraded by their port
         * (ws_listener.c), which makes their streams itself. */
        if (connecting)
            return ws_client_create(loop, handle, rest, options,
                                    transport == ZL_TRANSPORT_WSS);
        break;
#endif
    default:
        break;
    }
    zl_handle_close(handle);
    errno = EPROTONOSUPPORT;
    return NULL;
}

void zl_stream_close(zl_stream *s)
{
    if (s->ops) {
        s->ops->close(s);
        return;
    }
    /* The handle's cancelled completions go to the engine's ops, not to
     * us, so the plain stream can go at once. */
    zl_handle_close(s->handle);
    free(s);
}

/* ---- deferred completions ---- */

static void run_deferred(zl_timer *timer)
{
    zl_stream_deferred *d = timer->data;
    /* Callbacks may queue more (a read completed here submits the next);
     * those run at the next turn, so take this batch out first. */
    int count = d->count;
    zl_op *ops[ZL_STREAM_DEFERRED_MAX];
    int status[ZL_STREAM_DEFERRED_MAX];
    size_t bytes[ZL_STREAM_DEFERRED_MAX];
    for (int i = 0; i < count; i++) {
        ops[i] = d->due[i].op;
        status[i] = d->due[i].status;
        bytes[i] = d->due[i].bytes;
    }
    d->count = 0;
    for (int i = 0; i < count; i++)
        ops[i]->cb(ops[i], status[i], bytes[i]);
}

void zl_stream_deferred_init(zl_stream_deferred *d, zl_loop *loop)
{
    memset(d, 0, sizeof *d);
    d->loop = loop;
    d->timer.cb = run_deferred;
    d->timer.data = d;
}

void zl_stream_defer(zl_stream_deferred *d, zl_op *op, int status, size_t bytes)
{
    /* One read, one write and one handshake at most: never full. */
    d->due[d->count].op = op;
    d->due[d->count].status = status;
    d->due[d->count].bytes = bytes;
    d->count++;
    if (!zl_timer_active(&d->timer))
        zl_timer_start(d->loop, &d->timer, 0);
}

void zl_stream_deferred_stop(zl_stream_deferred *d)
{
    zl_timer_stop(d->loop, &d->timer);
    d->count = 0;
}
