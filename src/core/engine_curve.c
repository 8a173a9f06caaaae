/* engine_curve.c — CURVE (ZMTP-CURVE, rfc.zeromq.org spec 26) in the
 * engine, either side: the handshake (HELLO, WELCOME, INITIATE, READY, and
 * the ZAP handler's say on the client's key), then every frame sealed into
 * a MESSAGE box and opened back, as libzmq 4.3 writes and reads them.
 *
 * A client knows the server's permanent key S. It sends a transient key C'
 * in HELLO; the server answers with its transient S' and a cookie that
 * holds its own state, so that it keeps none before INITIATE. The client's
 * INITIATE proves its permanent key C (the vouch) under C'/S', and from
 * then on C'/S' seal everything. Short nonces only grow, so that a
 * replayed or reordered box is refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_private.h"
#include "monitor.h"
#include "zap.h"

#if defined(ZLINK_HAVE_CURVE)
#include "curve_crypto.h"

#define KEY ZL_CURVE_KEY_SIZE
#define MAC ZL_CURVE_MAC_SIZE
#define SHORT_NONCE 8
#define LONG_NONCE 16
/* Sizes on the wire, command names included (spec 26). */
#define HELLO_SIZE 200
#define WELCOME_SIZE 168
#define COOKIE_SIZE (LONG_NONCE + MAC + 2 * KEY)
#define INITIATE_MIN (9 + COOKIE_SIZE + SHORT_NONCE + MAC + 128)
#define READY_MIN (6 + SHORT_NONCE + MAC)
#define VOUCH_BOX (MAC + 2 * KEY)
/* A MESSAGE's name and short nonce, then its box: MAC, flags, payload. */
#define MESSAGE_HEADER (8 + SHORT_NONCE)
#define MESSAGE_OVERHEAD (MESSAGE_HEADER + MAC + 1)
/* The peer's READY or INITIATE properties: libzmq's own need under
 * ZL_PROPERTIES_MAX, and its ZMQ_METADATA may add a few more. */
#define PEER_PROPERTIES_MAX 4096
/* The flags byte inside a MESSAGE box. */
#define BOX_MORE 0x01
#define BOX_COMMAND 0x02

typedef enum curve_step {
    WAIT_WELCOME, /* the client's steps */
    WAIT_READY,
    WAIT_HELLO, /* the server's */
    WAIT_INITIATE,
    WAIT_ZAP,
    TALKING /* the handshake is over: MESSAGE boxes both ways */
} curve_step;

struct zl_curve {
    bool server;
    bool enforce_domain;
    curve_step step;
    uint8_t public_key[KEY], secret_key[KEY]; /* ours, permanent */
    uint8_t server_key[KEY];                  /* a client's: S */
    uint8_t transient_public[KEY], transient_secret[KEY];
    uint8_t peer_transient[KEY];
    uint8_t cookie_key[KEY]; /* a server's, for this connection's cookie */
    /* C'/S, which seals HELLO and WELCOME both: an X25519 costs as much as
     * the rest of the handshake, so it is made once. */
    uint8_t hello_key[KEY];
    uint8_t box_key[KEY]; /* C'/S' once known: seals the rest */
    uint64_t nonce;       /* the next short nonce we send */
    uint64_t peer_nonce;  /* the last one the peer sent */
    /* A server's ZAP exchange: the client's key, its INITIATE properties
     * held until the reply, and what the handler said. */
    char zap_domain[256];
    uint8_t client_key[KEY];
    zlink_msg_t held_properties;
    bool admitted;
    zl_blob user_id;
    zlink_msg_t zap_metadata;
    /* The message being opened: MAXMSGSIZE and MAXMSGPARTS bound its
     * plaintext, as the decoder bounds an unsealed one. */
    int64_t max_msg_size, max_msg_parts;
    uint64_t msg_bytes, msg_parts;
};

static void wipe(void *p, size_t n)
{
    volatile uint8_t *v = p;
    while (n--)
        *v++ = 0;
}

bool zl_engine_init_curve(zl_engine *e, const zl_options *options)
{
    if (options->mechanism != ZLINK_CURVE)
        return true;
    zl_curve *c = calloc(1, sizeof *c);
    if (!c)
        return false;
    c->server = options->curve_server;
    c->enforce_domain = options->zap_enforce_domain;
    c->step = c->server ? WAIT_HELLO : WAIT_WELCOME;
    memcpy(c->public_key, options->curve_public_key, KEY);
    memcpy(c->secret_key, options->curve_secret_key, KEY);
    memcpy(c->server_key, options->curve_server_key, KEY);
    if (options->zap_domain)
        snprintf(c->zap_domain, sizeof c->zap_domain, "%s",
                 options->zap_domain);
    c->max_msg_size = options->maxmsgsize;
    c->max_msg_parts = options->maxmsgparts;
    c->nonce = 1;
    zlink_msg_init(&c->held_properties);
    zlink_msg_init(&c->zap_metadata);
    e->curve = c;
    return true;
}

void zl_engine_release_curve(zl_engine *e)
{
    zl_curve *c = e->curve;
    if (!c)
        return;
    zlink_msg_close(&c->held_properties);
    zlink_msg_close(&c->zap_metadata);
    wipe(c, sizeof *c);
    free(c);
    e->curve = NULL;
}

bool zl_engine_curve_server(const zl_engine *e)
{
    return e->curve && e->curve->server;
}

int64_t zl_engine_curve_frame_max(int64_t max_msg_size)
{
    return max_msg_size < 0 ? max_msg_size : max_msg_size + MESSAGE_OVERHEAD;
}

/* ---- boxes ---- */

static void put_u64(uint8_t *out, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (uint8_t)v;
}

static uint64_t get_u64(const uint8_t *in)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | in[i];
    return v;
}

/* A full nonce: a 16- or 8-byte prefix, then the short or long part. */
static void make_nonce(uint8_t nonce[ZL_CURVE_NONCE_SIZE], const char *prefix,
                       const uint8_t *rest)
{
    size_t n = strlen(prefix);
    memcpy(nonce, prefix, n);
    memcpy(nonce + n, rest, ZL_CURVE_NONCE_SIZE - n);
}

/* crypto_box: out = MAC || ciphertext, under the key pk and sk share. */
static bool box(uint8_t *out, const uint8_t *in, size_t len,
                const uint8_t nonce[ZL_CURVE_NONCE_SIZE],
                const uint8_t peer_public[KEY], const uint8_t secret[KEY])
{
    uint8_t key[KEY];
    if (zl_curve_beforenm(key, peer_public, secret) != 0)
        return false;
    zl_secretbox_seal(out, in, len, nonce, key);
    wipe(key, sizeof key);
    return true;
}

static bool box_open(uint8_t *out, const uint8_t *in, size_t len,
                     const uint8_t nonce[ZL_CURVE_NONCE_SIZE],
                     const uint8_t peer_public[KEY], const uint8_t secret[KEY])
{
    uint8_t key[KEY];
    bool ok = zl_curve_beforenm(key, peer_public, secret) == 0 &&
              zl_secretbox_open(out, in, len, nonce, key);
    wipe(key, sizeof key);
    return ok;
}

/* Our next short nonce, written at out, and the full one under prefix. */
static void next_nonce(zl_curve *c, uint8_t *out, const char *prefix,
                       uint8_t nonce[ZL_CURVE_NONCE_SIZE])
{
    put_u64(out, c->nonce++);
    make_nonce(nonce, prefix, out);
}

/* A command frame around body, queued for the next write. */
static bool queue_frame(zl_engine *e, const uint8_t *body, size_t len)
{
    uint8_t frame[ZL_FRAME_HEADER_MAX + ZL_ENGINE_COMMAND_ROOM];
    if (len > ZL_ENGINE_COMMAND_ROOM)
        return false;
    size_t at = zl_frame_header_encode(frame, ZL_FRAME_COMMAND, len);
    memcpy(frame + at, body, len);
    return zl_engine_queue_bytes(e, frame, at + len);
}

static void protocol_error(zl_engine *e, uint32_t reason)
{
    zl_engine_protocol_error(e, reason);
}

/* ---- the client's side ---- */

bool zl_engine_curve_start(zl_engine *e)
{
    zl_curve *c = e->curve;
    if (c->server)
        return true; /* the client speaks first */
    if (zl_curve_keypair(c->transient_public, c->transient_secret) != 0)
        return false;
    /* HELLO: version 1.0, 72 bytes of padding (so that it is as large as
     * WELCOME: no amplification), C', and Box[64 zeros](C'->S). */
    uint8_t hello[HELLO_SIZE] = {5, 'H', 'E', 'L', 'L', 'O', 1, 0};
    uint8_t zeros[64] = {0};
    uint8_t nonce[ZL_CURVE_NONCE_SIZE];
    memcpy(hello + 80, c->transient_public, KEY);
    next_nonce(c, hello + 112, "CurveZMQHELLO---", nonce);
    if (zl_curve_beforenm(c->hello_key, c->server_key, c->transient_secret) !=
        0)
        return false;
    zl_secretbox_seal(hello + 120, zeros, sizeof zeros, nonce, c->hello_key);
    return queue_frame(e, hello, sizeof hello);
}

/* WELCOME: the server's transient key S' and its cookie. Our INITIATE
 * goes back with the cookie, our permanent key and its vouch for C', and
 * READY's properties. */
static void on_welcome(zl_engine *e, const uint8_t *body, size_t len)
{
    zl_curve *c = e->curve;
    if (len != WELCOME_SIZE) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME);
        return;
    }
    uint8_t nonce[ZL_CURVE_NONCE_SIZE];
    uint8_t plain[KEY + COOKIE_SIZE];
    make_nonce(nonce, "WELCOME-", body + 8);
    bool opened = zl_secretbox_open(plain, body + 24, WELCOME_SIZE - 24, nonce,
                                    c->hello_key);
    wipe(c->hello_key, KEY);
    if (!opened) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC);
        return;
    }
    memcpy(c->peer_transient, plain, KEY);
    if (zl_curve_beforenm(c->box_key, c->peer_transient, c->transient_secret) !=
        0) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE);
        return;
    }
    /* Vouch: Box[C' + S](C->S'), under a random long nonce. */
    uint8_t initiate[ZL_ENGINE_COMMAND_ROOM];
    uint8_t inner[KEY + LONG_NONCE + VOUCH_BOX + ZL_PROPERTIES_MAX];
    uint8_t vouch[2 * KEY];
    memcpy(vouch, c->transient_public, KEY);
    memcpy(vouch + KEY, c->server_key, KEY);
    memcpy(inner, c->public_key, KEY);
    if (zl_curve_random(inner + KEY, LONG_NONCE) != 0) {
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    make_nonce(nonce, "VOUCH---", inner + KEY);
    const zl_blob *id = e->routing_id;
    size_t properties = zl_properties_encode(
        inner + KEY + LONG_NONCE + VOUCH_BOX, ZL_PROPERTIES_MAX, e->socket_type,
        id ? id->data : NULL, id ? id->len : 0);
    size_t inner_len = KEY + LONG_NONCE + VOUCH_BOX + properties;
    if (!box(inner + KEY + LONG_NONCE, vouch, sizeof vouch, nonce,
             c->peer_transient, c->secret_key) ||
        properties == 0) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE);
        return;
    }
    /* INITIATE: the cookie as it came, then Box[C + vouch +
     * properties](C'->S'). */
    memcpy(initiate, "\x08INITIATE", 9);
    memcpy(initiate + 9, plain + KEY, COOKIE_SIZE);
    uint8_t *at = initiate + 9 + COOKIE_SIZE;
    next_nonce(c, at, "CurveZMQINITIATE", nonce);
    zl_secretbox_seal(at + SHORT_NONCE, inner, inner_len, nonce, c->box_key);
    size_t len_out = 9 + COOKIE_SIZE + SHORT_NONCE + MAC + inner_len;
    wipe(inner, sizeof inner);
    wipe(plain, sizeof plain);
    if (!queue_frame(e, initiate, len_out)) {
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    c->step = WAIT_READY;
    zl_engine_fill_output(e);
}

/* A handshake command's short nonce: where the peer's count stands. As
 * libzmq, the handshake's own are not checked, its boxes are. */
static void set_peer_nonce(zl_curve *c, const uint8_t *at)
{
    c->peer_nonce = get_u64(at);
}

/* A MESSAGE's short nonce: each must be above the last, so that no box is
 * replayed or reordered. */
static bool take_peer_nonce(zl_curve *c, const uint8_t *at)
{
    uint64_t n = get_u64(at);
    if (n <= c->peer_nonce)
        return false;
    c->peer_nonce = n;
    return true;
}

/* READY: Box[properties](S'->C'). */
static void on_ready(zl_engine *e, const uint8_t *body, size_t len)
{
    zl_curve *c = e->curve;
    if (len < READY_MIN || len - READY_MIN > PEER_PROPERTIES_MAX) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY);
        return;
    }
    uint8_t nonce[ZL_CURVE_NONCE_SIZE];
    uint8_t plain[PEER_PROPERTIES_MAX];
    make_nonce(nonce, "CurveZMQREADY---", body + 6);
    set_peer_nonce(c, body + 6);
    if (!zl_secretbox_open(plain, body + 14, len - 14, nonce, c->box_key)) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC);
        return;
    }
    c->step = TALKING;
    zl_engine_accept_properties(
        e, plain, len - READY_MIN,
        ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY, false);
}

/* ---- the server's side ---- */

/* HELLO: the client's transient key, proven to know S by the box. */
static void on_hello(zl_engine *e, const uint8_t *body, size_t len)
{
    zl_curve *c = e->curve;
    if (len != HELLO_SIZE || body[6] != 1 || body[7] != 0) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO);
        return;
    }
    uint8_t nonce[ZL_CURVE_NONCE_SIZE];
    uint8_t zeros[64];
    memcpy(c->peer_transient, body + 80, KEY);
    make_nonce(nonce, "CurveZMQHELLO---", body + 112);
    set_peer_nonce(c, body + 112);
    if (zl_curve_beforenm(c->hello_key, c->peer_transient, c->secret_key) !=
            0 ||
        !zl_secretbox_open(zeros, body + 120, HELLO_SIZE - 120, nonce,
                           c->hello_key)) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC);
        return;
    }
    /* Our transient key only now: a peer that connects and sends nothing,
     * or no HELLO for us, costs no key pair. */
    if (zl_curve_keypair(c->transient_public, c->transient_secret) != 0) {
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    /* The cookie: Box[C' + s'](K), K this connection's own random key. */
    uint8_t state[2 * KEY];
    uint8_t cookie[COOKIE_SIZE];
    uint8_t welcome[WELCOME_SIZE];
    uint8_t plain[KEY + COOKIE_SIZE];
    memcpy(state, c->peer_transient, KEY);
    memcpy(state + KEY, c->transient_secret, KEY);
    if (zl_curve_random(c->cookie_key, KEY) != 0 ||
        zl_curve_random(cookie, LONG_NONCE) != 0 ||
        zl_curve_random(welcome + 8, LONG_NONCE) != 0) {
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    make_nonce(nonce, "COOKIE--", cookie);
    zl_secretbox_seal(cookie + LONG_NONCE, state, sizeof state, nonce,
                      c->cookie_key);
    wipe(state, sizeof state);
    /* WELCOME: Box[S' + cookie](S->C'). */
    memcpy(plain, c->transient_public, KEY);
    memcpy(plain + KEY, cookie, COOKIE_SIZE);
    memcpy(welcome, "\x07WELCOME", 8);
    make_nonce(nonce, "WELCOME-", welcome + 8);
    zl_secretbox_seal(welcome + 24, plain, sizeof plain, nonce, c->hello_key);
    wipe(c->hello_key, KEY);
    wipe(plain, sizeof plain);
    if (!queue_frame(e, welcome, sizeof welcome)) {
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    c->step = WAIT_INITIATE;
    zl_engine_fill_output(e);
}

/* The peer's address and our routing id, with the client's key; false
 * when no handler is bound. */
static bool ask_zap(zl_engine *e)
{
    char address[128];
    zl_engine_peer_address(e, address, sizeof address);
    zl_zap_request request = {.domain = e->curve->zap_domain,
                              .address = address,
                              .identity = e->routing_id,
                              .mechanism = "CURVE",
                              .curve_key = e->curve->client_key};
    return zl_session_ask_zap(e->session, &request) == 0;
}

static void admit(zl_engine *e, const uint8_t *properties, size_t len)
{
    zl_engine_accept_properties(
        e, properties, len,
        ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE, true);
}

/* The client is who it says, and the handler, if one is bound, decides
 * whether it may talk. As libzmq 4.3: with none bound it may, unless
 * ZAP_ENFORCE_DOMAIN; and ZAP_ENFORCE_DOMAIN without a domain asks no
 * handler at all (encryption without authentication). */
static void authenticate(zl_engine *e, const uint8_t *properties, size_t len)
{
    zl_curve *c = e->curve;
    if (c->zap_domain[0] == '\0' && c->enforce_domain) {
        admit(e, properties, len);
        return;
    }
    if (!ask_zap(e)) {
        if (c->enforce_domain)
            zl_engine_zap_refuse_unbound(e);
        else
            admit(e, properties, len);
        return;
    }
    if (zlink_msg_init_size(&c->held_properties, len) != 0) {
        zlink_msg_init(&c->held_properties);
        zl_engine_fail_io(e, -ENOMEM);
        return;
    }
    if (len)
        memcpy(zlink_msg_data(&c->held_properties), properties, len);
    c->step = WAIT_ZAP;
}

/* INITIATE: our cookie back, then Box[C + vouch + properties](C'->S'),
 * where the vouch Box[C' + S](C->S') proves the client holds C's secret. */
static void on_initiate(zl_engine *e, const uint8_t *body, size_t len)
{
    zl_curve *c = e->curve;
    size_t inner_len = len - INITIATE_MIN + 128;
    if (len < INITIATE_MIN ||
        inner_len > KEY + LONG_NONCE + VOUCH_BOX + PEER_PROPERTIES_MAX) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE);
        return;
    }
    uint8_t nonce[ZL_CURVE_NONCE_SIZE];
    uint8_t state[2 * KEY];
    uint8_t inner[KEY + LONG_NONCE + VOUCH_BOX + PEER_PROPERTIES_MAX];
    uint8_t vouch[2 * KEY];
    const uint8_t *cookie = body + 9;
    make_nonce(nonce, "COOKIE--", cookie);
    bool cookie_ok =
        zl_secretbox_open(state, cookie + LONG_NONCE, COOKIE_SIZE - LONG_NONCE,
                          nonce, c->cookie_key) &&
        memcmp(state, c->peer_transient, KEY) == 0 &&
        memcmp(state + KEY, c->transient_secret, KEY) == 0;
    wipe(state, sizeof state);
    const uint8_t *short_nonce = body + 9 + COOKIE_SIZE;
    make_nonce(nonce, "CurveZMQINITIATE", short_nonce);
    set_peer_nonce(c, short_nonce);
    if (!cookie_ok ||
        zl_curve_beforenm(c->box_key, c->peer_transient, c->transient_secret) !=
            0 ||
        !zl_secretbox_open(inner, short_nonce + SHORT_NONCE,
                           len - (9 + COOKIE_SIZE + SHORT_NONCE), nonce,
                           c->box_key)) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC);
        return;
    }
    memcpy(c->client_key, inner, KEY);
    make_nonce(nonce, "VOUCH---", inner + KEY);
    if (!box_open(vouch, inner + KEY + LONG_NONCE, VOUCH_BOX, nonce,
                  c->client_key, c->transient_secret)) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC);
        return;
    }
    /* The vouch must name the transient key this client used. */
    if (memcmp(vouch, c->peer_transient, KEY) != 0) {
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE);
        return;
    }
    authenticate(e, inner + KEY + LONG_NONCE + VOUCH_BOX,
                 inner_len - (KEY + LONG_NONCE + VOUCH_BOX));
}

bool zl_engine_curve_queue_ready(zl_engine *e)
{
    zl_curve *c = e->curve;
    uint8_t ready[READY_MIN + ZL_PROPERTIES_MAX] = {5, 'R', 'E', 'A', 'D', 'Y'};
    uint8_t properties[ZL_PROPERTIES_MAX];
    uint8_t nonce[ZL_CURVE_NONCE_SIZE];
    const zl_blob *id = e->routing_id;
    size_t len =
        zl_properties_encode(properties, sizeof properties, e->socket_type,
                             id ? id->data : NULL, id ? id->len : 0);
    if (len == 0)
        return false;
    next_nonce(c, ready + 6, "CurveZMQREADY---", nonce);
    zl_secretbox_seal(ready + 14, properties, len, nonce, c->box_key);
    c->step = TALKING;
    return queue_frame(e, ready, READY_MIN + len);
}

void zl_engine_curve_zap_replied(zl_engine *e, zl_zap_reply *reply,
                                 uint32_t reason)
{
    zl_curve *c = e->curve;
    if (e->state != ZL_ENGINE_HANDSHAKE || c->step != WAIT_ZAP) {
        if (reply)
            zlink_msg_close(&reply->metadata);
        return;
    }
    if (!zl_engine_zap_admits(e, reply, reason))
        return;
    c->user_id = reply->user_id;
    c->admitted = true;
    zlink_msg_move(&c->zap_metadata, &reply->metadata);
    zlink_msg_close(&reply->metadata);
    admit(e, zlink_msg_data(&c->held_properties),
          zlink_msg_size(&c->held_properties));
}

static int add_property(void *builder, const uint8_t *name, size_t name_len,
                        const uint8_t *value, size_t value_len)
{
    zl_metadata_builder_add(builder, name, name_len, value, value_len);
    return 0; /* what passes the builder's bounds is not kept */
}

void zl_engine_curve_add_metadata(zl_engine *e, zl_metadata_builder *b)
{
    zl_curve *c = e->curve;
    if (!c || !c->admitted)
        return;
    zl_metadata_builder_add(b, (const uint8_t *)"User-Id", 7, c->user_id.data,
                            c->user_id.len);
    (void)zl_properties_parse(zlink_msg_data(&c->zap_metadata),
                              zlink_msg_size(&c->zap_metadata), add_property,
                              b);
}

/* ---- both sides ---- */

/* The server's ERROR (its ZAP handler refused us) carries the status
 * code, which the monitor hears as libzmq reports it. */
static void on_error(zl_engine *e, const uint8_t *data, size_t len)
{
    int code = e->curve->server ? 0 : zl_error_status_code(data, len);
    if (code && e->session)
        zl_monitor_event(zl_session_socket(e->session),
                         ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, (uint64_t)code,
                         zl_session_endpoint(e->session));
    zl_engine_fail(e, true);
}

void zl_engine_curve_command(zl_engine *e, const uint8_t *body, size_t len)
{
    const uint8_t *name, *data;
    size_t name_len, data_len;
    curve_step step = e->curve->step;
    if (zl_plain_libzmq43_error(body, len, &data, &data_len))
        on_error(e, data, data_len);
    else if (zl_command_parse(body, len, &name, &name_len, &data, &data_len) !=
             0)
        protocol_error(e,
                       ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED);
    else if (zl_command_is(name, name_len, "ERROR"))
        on_error(e, data, data_len);
    else if (zl_command_is(name, name_len, "HELLO") && step == WAIT_HELLO)
        on_hello(e, body, len);
    else if (zl_command_is(name, name_len, "WELCOME") && step == WAIT_WELCOME)
        on_welcome(e, body, len);
    else if (zl_command_is(name, name_len, "INITIATE") && step == WAIT_INITIATE)
        on_initiate(e, body, len);
    else if (zl_command_is(name, name_len, "READY") && step == WAIT_READY)
        on_ready(e, body, len);
    else
        protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND);
}

/* ---- MESSAGE boxes ---- */

size_t zl_engine_curve_sealed_size(size_t payload)
{
    return ZL_FRAME_HEADER_MAX + MESSAGE_OVERHEAD + payload;
}

size_t zl_engine_curve_seal(zl_engine *e, uint8_t *out, uint8_t msg_flags,
                            const uint8_t *prefix, size_t prefix_len,
                            const uint8_t *body, size_t body_len)
{
    zl_curve *c = e->curve;
    uint8_t nonce[ZL_CURVE_NONCE_SIZE];
    uint8_t flags = (msg_flags & ZL_MSG_MORE ? BOX_MORE : 0) |
                    (msg_flags & ZL_MSG_COMMAND ? BOX_COMMAND : 0);
    /* libzmq 4.3 sends MESSAGE with no frame flags at all, and takes a
     * MORE or COMMAND flag on it for the message's own: so do we. */
    size_t at = zl_frame_header_encode(
        out, 0, MESSAGE_OVERHEAD + prefix_len + body_len);
    memcpy(out + at, "\x07MESSAGE", 8);
    next_nonce(c, out + at + 8,
               c->server ? "CurveZMQMESSAGES" : "CurveZMQMESSAGEC", nonce);
    uint8_t *sealed = out + at + MESSAGE_HEADER + MAC;
    zl_secretbox b;
    zl_secretbox_init(&b, c->box_key, nonce);
    zl_secretbox_seal_update(&b, sealed, &flags, 1);
    zl_secretbox_seal_update(&b, sealed + 1, prefix, prefix_len);
    zl_secretbox_seal_update(&b, sealed + 1 + prefix_len, body, body_len);
    zl_secretbox_seal_final(&b, out + at + MESSAGE_HEADER);
    return at + MESSAGE_OVERHEAD + prefix_len + body_len;
}

/* Whether a part of size bytes fits the message's limits (MAXMSGSIZE
 * over all its parts, MAXMSGPARTS); counts it in if so. */
static bool within_limits(zl_curve *c, size_t size, bool more)
{
    if (c->max_msg_size >= 0 && (uint64_t)c->max_msg_size - c->msg_bytes < size)
        return false;
    if (c->max_msg_parts >= 0 && c->msg_parts >= (uint64_t)c->max_msg_parts)
        return false;
    c->msg_bytes = more ? c->msg_bytes + size : 0;
    c->msg_parts = more ? c->msg_parts + 1 : 0;
    return true;
}

/* As libzmq, a MESSAGE the peer got wrong is reported as a handshake's
 * protocol error, though the handshake is over. */
static void message_error(zl_engine *e, uint32_t reason)
{
    if (e->session)
        zl_monitor_event(zl_session_socket(e->session),
                         ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, reason,
                         zl_session_endpoint(e->session));
    zl_engine_fail(e, true);
}

bool zl_engine_curve_open(zl_engine *e, zlink_msg_t *msg)
{
    zl_curve *c = e->curve;
    const uint8_t *in = zlink_msg_data(msg);
    size_t len = zlink_msg_size(msg);
    uint32_t error = 0;
    uint8_t nonce[ZL_CURVE_NONCE_SIZE];
    uint8_t flags;
    zlink_msg_t plain;
    zlink_msg_init(&plain);
    if (len < 8 || memcmp(in, "\x07MESSAGE", 8) != 0)
        error = ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND;
    else if (len < MESSAGE_OVERHEAD)
        error = ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE;
    else if (!take_peer_nonce(c, in + 8))
        error = ZLINK_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE;
    if (error) {
        zlink_msg_close(msg);
        message_error(e, error);
        return false;
    }
    size_t payload = len - MESSAGE_OVERHEAD;
    if (zlink_msg_init_size(&plain, payload) != 0) {
        zlink_msg_close(msg);
        zl_engine_fail_io(e, -ENOMEM);
        return false;
    }
    make_nonce(nonce, c->server ? "CurveZMQMESSAGEC" : "CurveZMQMESSAGES",
               in + 8);
    zl_secretbox b;
    zl_secretbox_init(&b, c->box_key, nonce);
    zl_secretbox_open_update(&b, &flags, in + MESSAGE_HEADER + MAC, 1);
    zl_secretbox_open_update(&b, zlink_msg_data(&plain), in + MESSAGE_OVERHEAD,
                             payload);
    bool authentic = zl_secretbox_open_final(&b, in + MESSAGE_HEADER);
    zlink_msg_close(msg);
    if (!authentic)
        error = ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC;
    else if ((flags & BOX_MORE) && (flags & BOX_COMMAND))
        error = ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE;
    if (error || (!(flags & BOX_COMMAND) &&
                  !within_limits(c, payload, flags & BOX_MORE))) {
        zlink_msg_close(&plain);
        /* Past MAXMSGSIZE, the close alone, as for a frame in clear. */
        if (error)
            message_error(e, error);
        else
            zl_engine_fail(e, true);
        return false;
    }
    zl_msg_set_flags(&plain, (flags & BOX_MORE ? ZL_MSG_MORE : 0) |
                                 (flags & BOX_COMMAND ? ZL_MSG_COMMAND : 0));
    zlink_msg_move(msg, &plain);
    return true;
}

#else /* no CURVE in this build: no socket asks for it (options.c) */

bool zl_engine_init_curve(zl_engine *e, const zl_options *options)
{
    (void)e;
    return options->mechanism != ZLINK_CURVE;
}

void zl_engine_release_curve(zl_engine *e)
{
    (void)e;
}

bool zl_engine_curve_server(const zl_engine *e)
{
    (void)e;
    return false;
}

int64_t zl_engine_curve_frame_max(int64_t max_msg_size)
{
    return max_msg_size;
}

bool zl_engine_curve_start(zl_engine *e)
{
    (void)e;
    return false;
}

void zl_engine_curve_command(zl_engine *e, const uint8_t *body, size_t len)
{
    (void)body;
    (void)len;
    zl_engine_protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND);
}

bool zl_engine_curve_queue_ready(zl_engine *e)
{
    (void)e;
    return false;
}

void zl_engine_curve_zap_replied(zl_engine *e, zl_zap_reply *reply,
                                 uint32_t reason)
{
    (void)e;
    (void)reason;
    if (reply)
        zlink_msg_close(&reply->metadata);
}

void zl_engine_curve_add_metadata(zl_engine *e, zl_metadata_builder *b)
{
    (void)e;
    (void)b;
}

size_t zl_engine_curve_sealed_size(size_t payload)
{
    return payload;
}

size_t zl_engine_curve_seal(zl_engine *e, uint8_t *out, uint8_t msg_flags,
                            const uint8_t *prefix, size_t prefix_len,
                            const uint8_t *body, size_t body_len)
{
    (void)e;
    (void)out;
    (void)msg_flags;
    (void)prefix;
    (void)prefix_len;
    (void)body;
    (void)body_len;
    return 0;
}

bool zl_engine_curve_open(zl_engine *e, zlink_msg_t *msg)
{
    zlink_msg_close(msg);
    zl_engine_protocol_error(e, ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED);
    return false;
}

#endif
