/* stream.c — choosing the stream for an endpoint's transport, and the plain
 * stream that forwards to a backend handle. */
#include "stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/address.h"
#if defined(ZLINK_HAVE_TLS)
#include "transport/tls_config.h"
#include "transport/tls_stream.h"
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

#if defined(ZLINK_HAVE_TLS)
/* TLS over the plain stream of the handle; the client checks the host it
 * was asked to connect to. */
static zl_stream *tls_create(zl_loop *loop, zl_handle *handle,
                             const char *hostport, const zl_options *options,
                             bool connecting)
{
    char host[256];
    if (connecting && zl_tcp_host(hostport, host, sizeof host) != 0)
        return NULL;
    zl_stream *lower = plain_create(handle);
    if (!lower)
        return NULL;
    int err = 0;
    zl_stream *s = zl_tls_stream_create(loop, lower, options, connecting,
                                        connecting ? host : NULL, &err);
    if (!s) {
        free(lower); /* the handle stays the caller's */
        errno = err;
    }
    return s;
}
#endif

int zl_stream_prepare(zl_options *options, int transport, bool server)
{
#if defined(ZLINK_HAVE_TLS)
    if (transport == ZL_TRANSPORT_TLS)
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
    (void)loop;
    (void)options;
    (void)connecting;
    zl_transport transport;
    const char *rest;
    if (zl_endpoint_split(endpoint, &transport, &rest) != 0)
        return NULL;
    switch (transport) {
    case ZL_TRANSPORT_TCP:
    case ZL_TRANSPORT_IPC:
        return plain_create(handle);
#if defined(ZLINK_HAVE_TLS)
    case ZL_TRANSPORT_TLS:
        return tls_create(loop, handle, rest, options, connecting);
#endif
    default:
        errno = EPROTONOSUPPORT;
        return NULL;
    }
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
