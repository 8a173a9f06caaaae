/* engine_handshake.c — the ZMTP handshake of one connection, both ways:
 * our greeting and READY (or a plain ZWS2.0 routing id; PLAIN's own
 * commands are engine_plain.c's), the peer's greeting checked byte range by
 * byte range, and its READY (or INITIATE) turned into the connection's
 * metadata and the routing id the session names it by. Its outcomes go to
 * the state machine (engine.c) as events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_private.h"
#include "monitor.h"

#include <uv.h>

static const char *mechanism_name(const zl_engine *e)
{
    return e->curve                          ? "CURVE"
           : zl_engine_mechanism_is_plain(e) ? "PLAIN"
                                             : "NULL";
}

bool zl_engine_queue_greeting(zl_engine *e)
{
    uint8_t greeting[ZL_GREETING_SIZE];
    zl_greeting_encode(greeting, mechanism_name(e),
                       zl_engine_plain_server(e) || zl_engine_curve_server(e));
    return zl_engine_queue_bytes(e, greeting, sizeof greeting);
}

/* Our READY, or to a plain ZWS2.0 peer our routing id as a first message. */
bool zl_engine_queue_ready(zl_engine *e)
{
    uint8_t ready[ZL_ENGINE_COMMAND_ROOM];
    const uint8_t *id = e->routing_id ? e->routing_id->data : NULL;
    size_t id_len = e->routing_id ? e->routing_id->len : 0;
    size_t len;
    if (e->curve)
        return zl_engine_curve_queue_ready(e);
    if (e->routing_id_first) {
        len = zl_frame_header_encode(ready, 0, id_len);
        if (id_len)
            memcpy(ready + len, id, id_len);
        len += id_len;
    } else {
        len = zl_ready_encode(ready, sizeof ready, e->socket_type, id, id_len);
    }
    return zl_engine_queue_bytes(e, ready, len);
}

bool zl_engine_queue_mechanism_start(zl_engine *e)
{
    if (e->curve)
        return zl_engine_curve_start(e);
    return e->plain ? zl_engine_plain_start(e) : zl_engine_queue_ready(e);
}

/* Consumes greeting bytes; checks each byte range as soon as it arrives,
 * since libzmq sends its greeting in two steps (DESIGN.md §4a). Returns
 * false when decoding must stop. */
bool zl_engine_consume_greeting(zl_engine *e)
{
    size_t want = ZL_GREETING_SIZE - e->greeting_have;
    size_t avail = e->in_end - e->in_pos;
    size_t n = avail < want ? avail : want;
    const uint8_t *in = e->in_block->data;
    memcpy(e->greeting + e->greeting_have, in + e->in_pos, n);
    e->greeting_have += n;
    e->in_pos += n;
    if (!zl_greeting_signature_ok(e->greeting, e->greeting_have) ||
        (e->greeting_have > 10 && e->greeting[10] < 3)) {
        zl_engine_protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
        return false;
    }
    if (e->greeting_have < ZL_GREETING_SIZE)
        return true;
    zl_greeting peer;
    if (zl_greeting_decode(e->greeting, &peer) != 0) {
        zl_engine_protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
        return false;
    }
    if (strcmp(peer.mechanism, mechanism_name(e)) != 0) {
        zl_engine_protocol_error(e,
                                 ZLINK_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH);
        return false;
    }
    /* A 3.0 peer gets subscriptions as messages; 3.2+ behaves as 3.1. */
    e->peer_minor = peer.major > 3 ? 1 : peer.minor;
    zl_engine_dispatch(e, ZL_ENGINE_GREETING_DONE, NULL);
    return e->state == ZL_ENGINE_HANDSHAKE;
}

typedef struct ready_props {
    zl_engine *engine;
    int peer_type;
    bool type_refused; /* a Socket-Type we do not talk to was named */
    zl_blob identity;
    zl_metadata_builder metadata;
} ready_props;

/* Peer-Address as libzmq gives it: the IP without port for tcp (and the
 * transports over it), "localhost:uid:gid:pid" for ipc where the OS tells
 * the peer's credentials. */
void zl_engine_peer_address(zl_engine *e, char *out, size_t cap)
{
    zl_addr addr;
    out[0] = '\0';
    if (!e->stream || !e->stream->handle ||
        zl_handle_peer_addr(e->stream->handle, &addr) != 0)
        return;
    if (addr.u.sa.sa_family == AF_INET) {
        uv_ip4_name(&addr.u.in4, out, cap);
    } else if (addr.u.sa.sa_family == AF_INET6) {
        uv_ip6_name(&addr.u.in6, out, cap);
    } else if (addr.u.sa.sa_family == AF_UNIX) {
        unsigned uid, gid;
        int pid;
        if (zl_handle_peer_cred(e->stream->handle, &uid, &gid, &pid) != 0)
            return;
        /* The pid's field stays empty where the OS tells the ids only. */
        if (pid >= 0)
            snprintf(out, cap, "localhost:%u:%u:%d", uid, gid, pid);
        else
            snprintf(out, cap, "localhost:%u:%u:", uid, gid);
    }
}

/* The connection's metadata, made once the peer's properties are known;
 * without memory for it, messages simply carry none. */
static void make_metadata(zl_engine *e, zl_metadata_builder *b)
{
    zl_engine_peer_address(e, b->peer_address, sizeof b->peer_address);
    if (e->stream && e->stream->handle)
        snprintf(b->fd, sizeof b->fd, "%d",
                 (int)zl_handle_os_socket(e->stream->handle));
    e->metadata = zl_metadata_build(b);
}

void zl_engine_make_bare_metadata(zl_engine *e)
{
    zl_metadata_builder b;
    zl_metadata_builder_init(&b);
    make_metadata(e, &b);
}

static int on_property(void *arg, const uint8_t *name, size_t name_len,
                       const uint8_t *value, size_t value_len)
{
    ready_props *p = arg;
    /* Kept for zlink_msg_gets within the builder's bounds; what passes
     * them is not kept, but the READY stays valid (a peer may pad it). */
    zl_metadata_builder_add(&p->metadata, name, name_len, value, value_len);
    if (name_len == 11 && memcmp(name, "Socket-Type", 11) == 0) {
        p->peer_type = zl_socket_type_from_name(value, value_len);
        if (p->peer_type < 0)
            return 1;
        /* Each one named is checked, as libzmq does: a second cannot
         * cover for a first we refuse. */
        if (!zl_socket_types_compatible(p->engine->socket_type, p->peer_type))
            p->type_refused = true;
    } else if (name_len == 8 && memcmp(name, "Identity", 8) == 0) {
        if (value_len > 255)
            return 1;
        p->identity.len = (uint8_t)value_len;
        memcpy(p->identity.data, value, value_len);
    }
    return 0; /* other properties are ignored (DESIGN.md §4a) */
}

void zl_engine_accept_properties(zl_engine *e, const uint8_t *data, size_t len,
                                 uint32_t malformed, bool answer_ready)
{
    ready_props props = {.engine = e, .peer_type = -1};
    zl_metadata_builder_init(&props.metadata);
    int rc = zl_properties_parse(data, len, on_property, &props);
    if (rc != 0 || props.peer_type < 0) {
        zl_engine_protocol_error(
            e, rc < 0 ? malformed : ZLINK_PROTOCOL_ERROR_ZMTP_INVALID_METADATA);
        return;
    }
    if (props.type_refused) {
        zl_monitor_event(zl_session_socket(e->session),
                         ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL,
                         ZLINK_PROTOCOL_ERROR_ZMTP_INVALID_METADATA,
                         zl_session_endpoint(e->session));
        zl_engine_dispatch(e, ZL_ENGINE_PEER_REJECTED, NULL);
        return;
    }
    zl_engine_plain_add_metadata(e, &props.metadata);
    zl_engine_curve_add_metadata(e, &props.metadata);
    make_metadata(e, &props.metadata);
    if (answer_ready && !zl_engine_queue_ready(e)) {
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    zl_engine_args args = {.peer_routing_id = &props.identity};
    zl_engine_dispatch(e, ZL_ENGINE_PEER_READY, &args);
}

/* A plain ZWS2.0 peer's first message: its routing id, which a ROUTER
 * names it by (an empty one lets the ROUTER pick). Nothing is checked of
 * its socket type: ZWS2.0 does not say it. */
static bool on_routing_id(zl_engine *e, zlink_msg_t *msg)
{
    size_t len = zlink_msg_size(msg);
    if (len > 255 || (zl_msg_flags(msg) & ZL_MSG_MORE)) {
        zlink_msg_close(msg);
        zl_engine_protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
        return false;
    }
    zl_blob id;
    id.len = (uint8_t)len;
    if (len)
        memcpy(id.data, zlink_msg_data(msg), len);
    zlink_msg_close(msg);
    zl_engine_make_bare_metadata(e);
    zl_engine_args args = {.peer_routing_id = &id};
    zl_engine_dispatch(e, ZL_ENGINE_PEER_READY, &args);
    return e->state == ZL_ENGINE_ACTIVE;
}

/* A NULL peer's ERROR: one whose ZAP handler refused us carries the status
 * code, which the monitor hears as libzmq reports it. */
static void null_peer_error(zl_engine *e, const uint8_t *data, size_t len)
{
    int code = zl_error_status_code(data, len);
    if (code && e->session)
        zl_monitor_event(zl_session_socket(e->session),
                         ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, (uint64_t)code,
                         zl_session_endpoint(e->session));
    zl_engine_fail(e, true);
}

/* A frame before the connection is ACTIVE: the peer's READY (or ERROR),
 * PLAIN's commands (engine_plain.c), or a plain ZWS2.0 peer's routing id;
 * anything else fails the handshake.
 * Returns false when decoding must stop. */
bool zl_engine_handshake_frame(zl_engine *e, zlink_msg_t *msg)
{
    if (!(zl_msg_flags(msg) & ZL_MSG_COMMAND)) {
        if (e->routing_id_first)
            return on_routing_id(e, msg);
        zlink_msg_close(msg);
        zl_engine_protocol_error(e,
                                 ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND);
        return false;
    }
    const uint8_t *name, *data;
    size_t name_len, data_len;
    const uint8_t *body = zlink_msg_data(msg);
    size_t body_len = zlink_msg_size(msg);
    if (e->plain)
        zl_engine_plain_command(e, body, body_len);
    else if (e->curve)
        zl_engine_curve_command(e, body, body_len);
    else if (zl_command_parse(body, body_len, &name, &name_len, &data,
                              &data_len) != 0)
        zl_engine_protocol_error(
            e, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED);
    else if (zl_command_is(name, name_len, "READY"))
        zl_engine_accept_properties(
            e, data, data_len,
            ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY, false);
    else if (zl_command_is(name, name_len, "ERROR"))
        null_peer_error(e, data, data_len);
    else
        zl_engine_protocol_error(e,
                                 ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND);
    zlink_msg_close(msg);
    if (e->state == ZL_ENGINE_ACTIVE)
        zl_engine_release_plain(e); /* the credentials are spent */
    /* After a WELCOME the handshake goes on, and so does decoding: the
     * server's READY may share the read. */
    return e->state == ZL_ENGINE_ACTIVE || e->state == ZL_ENGINE_HANDSHAKE;
}
