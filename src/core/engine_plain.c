/* engine_plain.c — PLAIN (ZMTP-PLAIN, rfc.zeromq.org spec 24) in the
 * engine's handshake, either side. A client sends HELLO with its
 * credentials, takes the server's WELCOME, sends INITIATE and takes READY.
 * A server takes HELLO, asks the application's ZAP handler through its
 * session (session_zap.c), sends WELCOME, takes INITIATE and sends READY.
 * Either may meet an ERROR instead.
 *
 * Also the NULL mechanism's use of ZAP, which shares the exchange: a NULL
 * socket with a ZAP_DOMAIN asks the handler about its peer before it sends
 * READY, as libzmq's does, and holds the peer's READY until the reply. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_private.h"
#include "monitor.h"
#include "zap.h"

typedef enum plain_step {
    WAIT_WELCOME, /* the client's steps */
    WAIT_READY,   /* the client's, and NULL's after the reply */
    WAIT_HELLO,   /* the server's */
    WAIT_ZAP,     /* the server's, and NULL's */
    WAIT_INITIATE
} plain_step;

struct zl_plain {
    bool server; /* asks the ZAP handler: a PLAIN server, or null_zap */
    bool null_zap;
    bool enforce_domain;    /* null_zap without a handler refuses */
    zlink_msg_t held_ready; /* null_zap: the peer's READY body, if early */
    plain_step step;
    zl_blob username, password; /* a client's own */
    char zap_domain[256];       /* a server's */
    zl_blob user_id;            /* a server's, from the ZAP reply */
    bool admitted;              /* the handler answered 200 */
    zlink_msg_t zap_metadata;
};

bool zl_engine_init_plain(zl_engine *e, const zl_options *options)
{
    bool null_zap = options->mechanism == ZLINK_NULL && options->zap_domain &&
                    options->zap_domain[0] != '\0';
    if (options->mechanism != ZLINK_PLAIN && !null_zap)
        return true;
    zl_plain *p = calloc(1, sizeof *p);
    if (!p)
        return false;
    p->null_zap = null_zap;
    p->enforce_domain = options->zap_enforce_domain;
    p->server = options->plain_server || null_zap;
    p->step = null_zap ? WAIT_ZAP : p->server ? WAIT_HELLO : WAIT_WELCOME;
    zlink_msg_init(&p->held_ready);
    if (options->plain_username)
        p->username = *options->plain_username;
    if (options->plain_password)
        p->password = *options->plain_password;
    if (options->zap_domain)
        snprintf(p->zap_domain, sizeof p->zap_domain, "%s",
                 options->zap_domain);
    zlink_msg_init(&p->zap_metadata);
    e->plain = p;
    return true;
}

void zl_engine_release_plain(zl_engine *e)
{
    if (!e->plain)
        return;
    zlink_msg_close(&e->plain->zap_metadata);
    zlink_msg_close(&e->plain->held_ready);
    free(e->plain);
    e->plain = NULL;
}

bool zl_engine_plain_server(const zl_engine *e)
{
    return e->plain && e->plain->server && !e->plain->null_zap;
}

bool zl_engine_mechanism_is_plain(const zl_engine *e)
{
    return e->plain && !e->plain->null_zap;
}

void zl_engine_forget_null_zap(zl_engine *e)
{
    if (e->plain && e->plain->null_zap)
        zl_engine_release_plain(e);
}

/* The peer's address and our routing id, as every ZAP request names them;
 * false when no handler is bound (the monitor has heard, if it must). */
static bool ask_zap(zl_engine *e, const char *mechanism,
                    const zl_blob *username, const zl_blob *password)
{
    char address[128];
    zl_engine_peer_address(e, address, sizeof address);
    zl_zap_request request = {.domain = e->plain->zap_domain,
                              .address = address,
                              .identity = e->routing_id,
                              .mechanism = mechanism,
                              .username = username,
                              .password = password};
    return zl_session_ask_zap(e->session, &request) == 0;
}

void zl_engine_zap_refuse_unbound(zl_engine *e)
{
    zl_monitor_event(zl_session_socket(e->session),
                     ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL, EFAULT,
                     zl_session_endpoint(e->session));
    zl_engine_fail(e, true);
}

/* NULL with a ZAP_DOMAIN, once the greetings are exchanged: the handler is
 * asked before our READY goes. With none bound, libzmq 4.3 admits the
 * peer unasked, unless ZAP_ENFORCE_DOMAIN. */
static bool null_zap_start(zl_engine *e)
{
    if (ask_zap(e, "NULL", NULL, NULL))
        return true;
    if (e->plain->enforce_domain) {
        zl_engine_zap_refuse_unbound(e);
        return true;
    }
    zl_engine_release_plain(e);
    return zl_engine_queue_ready(e);
}

bool zl_engine_plain_start(zl_engine *e)
{
    if (e->plain->null_zap)
        return null_zap_start(e);
    if (e->plain->server)
        return true; /* the client speaks first */
    uint8_t hello[ZL_ENGINE_COMMAND_ROOM];
    size_t len = zl_plain_hello_encode(
        hello, sizeof hello, e->plain->username.data, e->plain->username.len,
        e->plain->password.data, e->plain->password.len);
    return len > 0 && zl_engine_queue_bytes(e, hello, len);
}

static int add_property(void *builder, const uint8_t *name, size_t name_len,
                        const uint8_t *value, size_t value_len)
{
    zl_metadata_builder_add(builder, name, name_len, value, value_len);
    return 0; /* what passes the builder's bounds is not kept */
}

static int any_property(void *arg, const uint8_t *name, size_t name_len,
                        const uint8_t *value, size_t value_len)
{
    return 0;
}

void zl_engine_plain_add_metadata(zl_engine *e, zl_metadata_builder *b)
{
    zl_plain *p = e->plain;
    if (!p || !p->server)
        return;
    /* libzmq gives User-Id after any 200, empty as handlers often send it
     * for NULL peers: its presence says ZAP admitted the peer. */
    if (p->admitted)
        zl_metadata_builder_add(b, (const uint8_t *)"User-Id", 7,
                                p->user_id.data, p->user_id.len);
    /* The handler's own properties were checked when its reply came. */
    (void)zl_properties_parse(zlink_msg_data(&p->zap_metadata),
                              zlink_msg_size(&p->zap_metadata), add_property,
                              b);
}

static void unexpected(zl_engine *e)
{
    zl_engine_protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND);
}

/* A PLAIN server's WELCOME: our INITIATE follows, with READY's properties. */
static void on_welcome(zl_engine *e, size_t data_len)
{
    if (e->plain->step != WAIT_WELCOME) {
        unexpected(e);
        return;
    }
    if (data_len != 0) {
        zl_engine_protocol_error(
            e, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME);
        return;
    }
    e->plain->step = WAIT_READY;
    uint8_t initiate[ZL_ENGINE_COMMAND_ROOM];
    const zl_blob *id = e->routing_id;
    size_t len = zl_metadata_command_encode(
        initiate, sizeof initiate, "INITIATE", e->socket_type,
        id ? id->data : NULL, id ? id->len : 0);
    if (len == 0 || !zl_engine_queue_bytes(e, initiate, len)) {
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    zl_engine_fill_output(e);
}

/* A short string of a HELLO: its length byte, then the bytes. */
static bool take_short(const uint8_t **at, size_t *left, zl_blob *out)
{
    if (*left < 1 || (size_t)(*at)[0] > *left - 1)
        return false;
    out->len = (*at)[0];
    memcpy(out->data, *at + 1, out->len);
    *at += 1 + out->len;
    *left -= 1 + (size_t)out->len;
    return true;
}

/* A client's HELLO: its credentials go to the ZAP handler. With none bound,
 * libzmq 4.3 refuses every client, with EFAULT. */
static void on_hello(zl_engine *e, const uint8_t *data, size_t len)
{
    zl_plain *p = e->plain;
    if (p->step != WAIT_HELLO) {
        unexpected(e);
        return;
    }
    if (!take_short(&data, &len, &p->username) ||
        !take_short(&data, &len, &p->password) || len != 0) {
        zl_engine_protocol_error(
            e, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO);
        return;
    }
    if (!ask_zap(e, "PLAIN", &p->username, &p->password)) {
        zl_engine_zap_refuse_unbound(e);
        return;
    }
    /* The password is not needed again. */
    memset(&p->password, 0, sizeof p->password);
    p->step = WAIT_ZAP;
}

/* NULL's handler admitted the peer: our READY goes, and the peer's, if it
 * came already, is taken now. */
static void null_zap_admitted(zl_engine *e)
{
    zl_plain *p = e->plain;
    p->step = WAIT_READY;
    if (!zl_engine_queue_ready(e)) {
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    zl_engine_fill_output(e);
    if (e->state != ZL_ENGINE_HANDSHAKE || zlink_msg_size(&p->held_ready) == 0)
        return;
    const uint8_t *held = zlink_msg_data(&p->held_ready);
    zl_engine_accept_properties(
        e, held + 1, zlink_msg_size(&p->held_ready) - 1,
        ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY, false);
    if (e->state == ZL_ENGINE_ACTIVE)
        zl_engine_release_plain(e);
}

/* NULL's peer sent READY while the handler is asked: it waits, copied. A
 * READY's properties always fill at least its name, so an empty copy means
 * none came. */
static void hold_ready(zl_engine *e, const uint8_t *data, size_t len)
{
    zl_plain *p = e->plain;
    if (zlink_msg_size(&p->held_ready) != 0) {
        unexpected(e);
        return;
    }
    zlink_msg_close(&p->held_ready);
    if (zlink_msg_init_size(&p->held_ready, len + 1) != 0) {
        zlink_msg_init(&p->held_ready);
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    /* A leading byte keeps an empty READY distinct from none. */
    uint8_t *copy = zlink_msg_data(&p->held_ready);
    copy[0] = 0;
    memcpy(copy + 1, data, len);
}

bool zl_engine_zap_admits(zl_engine *e, zl_zap_reply *reply, uint32_t reason)
{
    if (!reply) {
        zl_engine_protocol_error(e, reason);
        return false;
    }
    if (zl_properties_parse(zlink_msg_data(&reply->metadata),
                            zlink_msg_size(&reply->metadata), any_property,
                            NULL) < 0) {
        zlink_msg_close(&reply->metadata);
        zl_engine_protocol_error(e, ZLINK_PROTOCOL_ERROR_ZAP_INVALID_METADATA);
        return false;
    }
    if (reply->status != 200) {
        /* Refused: the client hears the code, and so does the monitor. */
        zlink_msg_close(&reply->metadata);
        char code[5];
        snprintf(code, sizeof code, "\x03%d", reply->status);
        zl_monitor_event(
            zl_session_socket(e->session), ZLINK_EVENT_HANDSHAKE_FAILED_AUTH,
            (uint64_t)reply->status, zl_session_endpoint(e->session));
        zl_engine_args args = {.error_reason = code};
        zl_engine_dispatch(e, ZL_ENGINE_PEER_REJECTED, &args);
        return false;
    }
    return true;
}

void zl_engine_zap_replied(zl_engine *e, zl_zap_reply *reply, uint32_t reason)
{
    zl_plain *p = e->plain;
    if (e->curve) {
        zl_engine_curve_zap_replied(e, reply, reason);
        return;
    }
    if (e->state != ZL_ENGINE_HANDSHAKE || !p || p->step != WAIT_ZAP) {
        if (reply)
            zlink_msg_close(&reply->metadata);
        return;
    }
    if (!zl_engine_zap_admits(e, reply, reason))
        return;
    p->user_id = reply->user_id;
    p->admitted = true;
    zlink_msg_move(&p->zap_metadata, &reply->metadata);
    zlink_msg_close(&reply->metadata);
    if (p->null_zap) {
        null_zap_admitted(e);
        return;
    }
    p->step = WAIT_INITIATE;
    zl_engine_send_command(e, "WELCOME", NULL, 0);
}

/* The peer's ERROR during the handshake. A PLAIN server's refusal carries
 * its ZAP status code, reported as libzmq does; a client's says nothing
 * of ours. */
static void on_error(zl_engine *e, const uint8_t *data, size_t data_len)
{
    int code = e->plain->server ? 0 : zl_error_status_code(data, data_len);
    if (code && e->session)
        zl_monitor_event(zl_session_socket(e->session),
                         ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, (uint64_t)code,
                         zl_session_endpoint(e->session));
    zl_engine_fail(e, true);
}

void zl_engine_plain_command(zl_engine *e, const uint8_t *body, size_t len)
{
    const uint8_t *name, *data;
    size_t name_len, data_len;
    plain_step step = e->plain->step;
    if (zl_plain_libzmq43_error(body, len, &data, &data_len))
        on_error(e, data, data_len);
    else if (zl_command_parse(body, len, &name, &name_len, &data, &data_len) !=
             0)
        zl_engine_protocol_error(
            e, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED);
    else if (zl_command_is(name, name_len, "ERROR"))
        on_error(e, data, data_len);
    else if (zl_command_is(name, name_len, "WELCOME"))
        on_welcome(e, data_len);
    else if (zl_command_is(name, name_len, "HELLO"))
        on_hello(e, data, data_len);
    else if (zl_command_is(name, name_len, "READY") && step == WAIT_ZAP &&
             e->plain->null_zap)
        hold_ready(e, data, data_len);
    else if (zl_command_is(name, name_len, "READY") && step == WAIT_READY)
        zl_engine_accept_properties(
            e, data, data_len,
            ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY, false);
    else if (zl_command_is(name, name_len, "INITIATE") && step == WAIT_INITIATE)
        zl_engine_accept_properties(
            e, data, data_len,
            ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE, true);
    else
        unexpected(e);
}
