/* ws_upgrade.c — the WebSocket filter's handshake: the lower stream's own
 * (wss: TLS), then the HTTP upgrade, as a client sending its request or a
 * server routing and answering one (ws_http.c parses and builds them). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ws_stream_impl.h"
#include "zlink.h"

void zl_ws_upgrade_fail(ws_stream *f, bool protocol)
{
    f->phase = PHASE_FAILED;
    if (protocol)
        f->failure_event = ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL;
    zl_ws_complete(f, &f->handshake_op, -EPROTO, 0, true);
}

static void start_wire_text(ws_stream *f, const char *text, size_t len)
{
    if (!len || !zl_ws_ensure_wire(f)) {
        zl_ws_upgrade_fail(f, false);
        return;
    }
    memcpy(f->wire, text, len);
    f->wire_len = len;
    zl_ws_lower_write(f);
}

static void refuse(ws_stream *f, int status)
{
    char text[256];
    f->phase = PHASE_REFUSING;
    start_wire_text(f, text, zl_ws_response_refuse(text, sizeof text, status));
}

static void server_upgrade(ws_stream *f)
{
    zl_ws_request request;
    int r = zl_ws_request_parse(f->in.buf + f->in.pos, f->in.end - f->in.pos,
                                &request);
    if (r == 0) {
        if (f->lower_status)
            zl_ws_upgrade_fail(f, false); /* gone before asking */
        else
            zl_ws_lower_read(f);
        return;
    }
    if (r < 0) {
        refuse(f, -r);
        return;
    }
    f->in.pos += (size_t)r;
    int status = f->route ? f->route(f->route_arg, &f->base, &request) : 404;
    if (status != 0) {
        refuse(f, status);
        return;
    }
    f->framing = request.framing;
    snprintf(f->path, sizeof f->path, "%s", request.path);
    char text[512];
    f->phase = PHASE_ACCEPTING;
    start_wire_text(
        f, text,
        zl_ws_response_accept(text, sizeof text, request.key, request.framing));
}

static void client_upgrade(ws_stream *f)
{
    int r = zl_ws_response_parse(f->in.buf + f->in.pos, f->in.end - f->in.pos,
                                 f->key, &f->framing);
    if (r == 0) {
        if (f->lower_status)
            zl_ws_upgrade_fail(f, false);
        else
            zl_ws_lower_read(f);
        return;
    }
    if (r < 0) {
        /* No socket at that path yet: as a refused connect, a connect made
         * before the bind retries. */
        f->failure_retries = r == ZL_WS_NOT_FOUND;
        zl_ws_upgrade_fail(f, true);
        return;
    }
    /* Frames the server sent right behind its answer stay in in. */
    f->in.pos += (size_t)r;
    f->phase = PHASE_OPEN;
    zl_ws_complete(f, &f->handshake_op, 0, 0, true);
}

void zl_ws_upgrade_progress(ws_stream *f)
{
    if (f->client)
        client_upgrade(f);
    else
        server_upgrade(f);
}

/* The upgrade itself, once the lower stream is ready. */
static void start_upgrade(ws_stream *f)
{
    if (f->client) {
        char text[1024];
        size_t n =
            zl_ws_request_build(text, sizeof text, f->host, f->path, f->key);
        if (!n || !zl_ws_ensure_wire(f)) {
            zl_ws_complete(f, &f->handshake_op, -ENOMEM, 0, false);
            return;
        }
        memcpy(f->wire, text, n);
        f->wire_len = n;
        zl_ws_lower_write(f);
    }
    zl_ws_lower_read(f);
}

void zl_ws_on_lower_handshake(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    ws_stream *f = op->data;
    f->lower_handshake_pending = false;
    if (f->closing) {
        zl_ws_maybe_free(f);
        return;
    }
    if (status != 0) {
        /* ws_failure gives the lower stream's reason. */
        zl_ws_complete(f, &f->handshake_op, status, 0, false);
        return;
    }
    f->lower_handshake_done = true;
    start_upgrade(f);
}

void zl_ws_handshake(zl_stream *s, zl_op *op)
{
    ws_stream *f = zl_ws_of(s);
    if (f->phase == PHASE_OPEN) {
        /* A server stream the listener upgraded before handing it on. */
        zl_stream_defer(&f->deferred, op, 0, 0);
        return;
    }
    f->handshake_op = op;
    /* wss: TLS first, then the upgrade inside it. */
    if (!f->lower_handshake_done &&
        zl_stream_handshake(f->lower, &f->lower_handshake_op)) {
        f->lower_handshake_pending = true;
        return;
    }
    f->lower_handshake_done = true;
    start_upgrade(f);
}
