/* stream.c — choosing the stream for an endpoint's transport, and the plain
 * stream that forwards to a backend handle. */
#include "stream.h"

#include <errno.h>
#include <stdlib.h>

#include "transport/address.h"

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
