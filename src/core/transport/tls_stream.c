/* tls_stream.c — the TLS filter: mbedTLS driven over two bounded memory
 * buffers (ciphertext in, ciphertext out) between a lower stream and the
 * engine. Every event (an op of the engine's, a lower completion) ends in
 * pump(), which moves whatever can move and completes the engine's ops
 * from the loop (zl_stream_defer), never inside the call. */
#include "tls_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/platform_util.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509.h>

#include "atomics.h"
#include "fast_tls.h"
#include "msg_pool.h"
#include "tls_config.h"
#include "tls_internal.h"
#include "tls_record.h"
#include "zlink.h"

/* The most plaintext one record carries (TLS's own limit), and room for
 * one record with the largest expansion the suites add. */
#define RECORD_PLAIN_MAX 16384
#define RECORD_ROOM (RECORD_PLAIN_MAX + 1024)
/* A record header claiming more than this is refused at once: TLS 1.2
 * allows 2048 bytes of expansion, TLS 1.3 256. */
#define RECORD_CIPHER_MAX (RECORD_PLAIN_MAX + 2048)
/* Ciphertext read per lower read. Held while the connection is busy only:
 * an idle one probes instead, as the engine does. */
#define CIPHER_IN_CAP (64 * 1024)
/* A server's first read, before mbedTLS is set up, takes a small buffer: a
 * ClientHello mostly fits, and a peer that connects and leaves costs
 * little (an EOF is a read too). */
#define CIPHER_FIRST_CAP 2048
/* Ciphertext handed to one lower write: seven full records, as many as
 * the pool block of four takes anyway (its size class is 128 KiB). An
 * engine batch of a little over 64 KiB then leaves in one write, where
 * four records left its last few hundred bytes to a second one. */
#define CIPHER_OUT_CAP (7 * RECORD_ROOM)

#define TLS_ALERT_RECORD 21
#define TLS_HANDSHAKE_RECORD 22
#define TLS_CLIENT_HELLO 1
#define TLS_SERVER_HELLO 2

/* Why a TLS stream ended, when it was not a plain close. */
typedef struct tls_failure {
    int status; /* what the engine's pending ops complete with; 0 = none */
    int event;  /* ZLINK_EVENT_HANDSHAKE_FAILED_AUTH / _PROTOCOL, or 0 */
    uint64_t value;
} tls_failure;

typedef struct tls_stream {
    zl_stream base;
    zl_loop *loop;
    zl_stream *lower;
    zl_tls_settings *settings; /* keeps the shared mbedTLS config alive */
    bool client;
    /* A server sets mbedTLS up (its record buffers are some 33 KB) only
     * when the peer's first bytes arrive: a connection that never speaks
     * costs little. */
    const mbedtls_ssl_config *conf;
    bool ssl_ready;
    mbedtls_ssl_context ssl;
    /* A client's server as it checks it ("name\nhost:port"); whether it
     * offered a kept session; whether the server's certificate was part
     * of the handshake (sent or received: a full handshake, not resumed). */
    char *peer;
    bool offered;
    bool server_certificate_seen;
    bool handshake_done;
    bool tls13;
    tls_failure failure;
    /* After a TLS 1.2 handshake with an AES-GCM suite, zlink seals and
     * opens the records itself (tls_record.c); mbedTLS then only did the
     * handshake. */
    zl_tls_secrets secrets;
    zl_tls_record record;
    bool own_records;
    size_t record_plain_max;

    /* The engine's ops; NULL once completed or handed to deferred. */
    zl_op *handshake_op;
    zl_op *read_op;
    zl_iovec read_iov[ZL_READ_IOV_MAX];
    int read_count;
    zl_op *write_op;
    const zl_iovec *write_iov;
    int write_count, write_index;
    size_t write_offset, write_done, write_total;
    zl_stream_deferred deferred;

    /* Ciphertext in: [in_pos, in_len) not yet given to mbedTLS, or not yet
     * opened. An opened record's plaintext that the engine's read had no
     * room for stays in place: [plain, plain + plain_len). */
    uint8_t *in;
    uint8_t in_class;
    size_t in_cap, in_pos, in_len;
    uint8_t *plain;
    size_t plain_len;
    zl_op lower_read_op;
    bool lower_read_pending, lower_probe, lower_eof;
    bool lower_readable; /* a lower probe completed: bytes are waiting */
    /* The records as mbedTLS takes them, to refuse some before it sees
     * them: the first byte (a plaintext peer), oversized lengths, and
     * handshake records after the handshake (renegotiation). */
    uint8_t record_header[5];
    size_t record_header_have, record_body_left;
    bool first_byte_seen;
    /* The head of the peer's first handshake message: its type, length. */
    uint8_t hello[4];
    size_t hello_have;
    bool hello_checked;

    /* Ciphertext out, written by mbedTLS through bio_send. */
    uint8_t *out;
    uint8_t out_class;
    size_t out_len;
    zl_op lower_write_op;
    zl_iovec out_iov; /* the lower write keeps a pointer to it */
    bool lower_write_pending;
    /* Plaintext gathered from several iovecs into one record. */
    uint8_t *staging;
    uint8_t staging_class;
    size_t staged;

    int lower_pending; /* lower ops not yet completed */
    bool closing;
    zl_timer close_timer;
    struct {
        zl_op *op;
        int status;
        size_t bytes;
    } closing_due[ZL_STREAM_DEFERRED_MAX + 3];
    int closing_count;
} tls_stream;

static void pump(tls_stream *t);

static atomic_uint resumed_total, own_records_total, setups_total;

unsigned zl_tls_setups_total(void)
{
    return atomic_load_explicit(&setups_total, memory_order_relaxed);
}

unsigned zl_tls_resumed_total(void)
{
    return atomic_load_explicit(&resumed_total, memory_order_relaxed);
}

unsigned zl_tls_own_records_total(void)
{
    return atomic_load_explicit(&own_records_total, memory_order_relaxed);
}

/* ---- failures ---- */

static void set_failure(tls_stream *t, int status, int event, uint64_t value)
{
    if (t->failure.status)
        return;
    t->failure.status = status;
    t->failure.event = event;
    t->failure.value = value;
}

static void protocol_failure(tls_stream *t, uint64_t value)
{
    set_failure(t, -EPROTO, ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL, value);
}

static void auth_failure(tls_stream *t, uint64_t value)
{
    set_failure(t, -EACCES, ZLINK_EVENT_HANDSHAKE_FAILED_AUTH, value);
}

/* The certificate check's verdict, most telling reason first. */
static uint64_t verify_reason(uint32_t flags)
{
    if (flags & MBEDTLS_X509_BADCERT_MISSING)
        return ZLINK_TLS_AUTH_NO_PEER_CERT;
    if (flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED)
        return ZLINK_TLS_AUTH_CERT_UNTRUSTED;
    if (flags & (MBEDTLS_X509_BADCERT_EXPIRED | MBEDTLS_X509_BADCERT_FUTURE))
        return ZLINK_TLS_AUTH_CERT_EXPIRED;
    if (flags & MBEDTLS_X509_BADCERT_CN_MISMATCH)
        return ZLINK_TLS_AUTH_HOSTNAME_MISMATCH;
    return ZLINK_TLS_AUTH_CERT_INVALID;
}

static int handshake_state(const mbedtls_ssl_context *ssl)
{
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
    return ssl->MBEDTLS_PRIVATE(state);
#else
    return ssl->state;
#endif
}

/* The alert the peer closed with (mbedTLS keeps it in its record). */
static int received_alert(const tls_stream *t)
{
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
    return t->ssl.MBEDTLS_PRIVATE(in_msg)[1];
#else
    return t->ssl.in_msg[1];
#endif
}

static bool is_certificate_alert(int alert)
{
    switch (alert) {
    case MBEDTLS_SSL_ALERT_MSG_BAD_CERT:
    case MBEDTLS_SSL_ALERT_MSG_UNSUPPORTED_CERT:
    case MBEDTLS_SSL_ALERT_MSG_CERT_REVOKED:
    case MBEDTLS_SSL_ALERT_MSG_CERT_EXPIRED:
    case MBEDTLS_SSL_ALERT_MSG_CERT_UNKNOWN:
    case MBEDTLS_SSL_ALERT_MSG_UNKNOWN_CA:
    case MBEDTLS_SSL_ALERT_MSG_ACCESS_DENIED:
    case 116: /* certificate_required (TLS 1.3) */
        return true;
    default:
        return false;
    }
}

/* A server whose client sent no certificate (mbedTLS 3 says so only in
 * the verify result). */
static bool missing_peer_cert(const tls_stream *t)
{
    uint32_t flags = mbedtls_ssl_get_verify_result(&t->ssl);
    return flags != (uint32_t)-1 && (flags & MBEDTLS_X509_BADCERT_MISSING);
}

/* An mbedTLS error, in handshake or afterwards, as the failure it is. A
 * reason the record check found first stays. */
static void mbedtls_failure(tls_stream *t, int rc)
{
    if (t->failure.status)
        return;
    switch (rc) {
    case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
        auth_failure(t, verify_reason(mbedtls_ssl_get_verify_result(&t->ssl)));
        return;
#if defined(MBEDTLS_ERR_SSL_NO_CLIENT_CERTIFICATE)
    case MBEDTLS_ERR_SSL_NO_CLIENT_CERTIFICATE:
        auth_failure(t, ZLINK_TLS_AUTH_NO_PEER_CERT);
        return;
#endif
    case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE:
        if (is_certificate_alert(received_alert(t)))
            auth_failure(t, ZLINK_TLS_AUTH_PEER_REJECTED);
        else
            protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_ALERT);
        return;
    case MBEDTLS_ERR_SSL_INVALID_MAC:
    case MBEDTLS_ERR_SSL_INVALID_RECORD:
        protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_BAD_RECORD);
        return;
    default:
        if (!t->handshake_done && !t->client && missing_peer_cert(t))
            auth_failure(t, ZLINK_TLS_AUTH_NO_PEER_CERT);
        else
            protocol_failure(t, t->handshake_done
                                    ? ZLINK_PROTOCOL_ERROR_TLS_BAD_RECORD
                                    : ZLINK_PROTOCOL_ERROR_TLS_HANDSHAKE);
        return;
    }
}

/* ---- the secrets zlink's own records are keyed from ---- */

#if MBEDTLS_VERSION_NUMBER >= 0x03000000
static void export_keys(void *ctx, mbedtls_ssl_key_export_type type,
                        const unsigned char *secret, size_t secret_len,
                        const unsigned char client_random[32],
                        const unsigned char server_random[32],
                        mbedtls_tls_prf_types prf)
{
    tls_stream *t = ctx;
    if (type == MBEDTLS_SSL_KEY_EXPORT_TLS12_MASTER_SECRET)
        zl_tls_secrets_keep(&t->secrets, secret, secret_len, client_random,
                            server_random, (int)prf);
}
#elif defined(ZL_TLS_EXPORT_KEYS_228)
/* mbedTLS 2.28 exports through the shared config, without saying for which
 * connection: it is the one whose handshake this thread is stepping. */
static ZL_THREAD_LOCAL tls_stream *handshaking;

int zl_tls_export_keys(void *unused, const unsigned char *master,
                       const unsigned char *key_block, size_t mac_len,
                       size_t key_len, size_t iv_len,
                       const unsigned char client_random[32],
                       const unsigned char server_random[32],
                       mbedtls_tls_prf_types prf)
{
    (void)unused;
    (void)key_block;
    (void)mac_len;
    (void)key_len;
    (void)iv_len;
    if (handshaking)
        zl_tls_secrets_keep(&handshaking->secrets, master, 48, client_random,
                            server_random, (int)prf);
    return 0;
}
#endif

/* ---- the records mbedTLS is given ---- */

/* The peer's first handshake message must be its hello (a ClientHello to
 * a server, a ServerHello to a client) of a size mbedTLS's record buffer
 * takes: anything else is refused at once, where mbedTLS 3.6 would wait for
 * the rest of a message that claims megabytes. */
static bool check_hello(tls_stream *t, const uint8_t *p, size_t n)
{
    while (n > 0 && t->hello_have < sizeof t->hello) {
        t->hello[t->hello_have++] = *p++;
        n--;
    }
    if (t->hello_have < sizeof t->hello)
        return true;
    t->hello_checked = true;
    size_t len =
        (size_t)t->hello[1] << 16 | (size_t)t->hello[2] << 8 | t->hello[3];
    if (t->hello[0] != (t->client ? TLS_SERVER_HELLO : TLS_CLIENT_HELLO) ||
        len > RECORD_PLAIN_MAX) {
        protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_HANDSHAKE);
        return false;
    }
    return true;
}

/* Follows the record headers in bytes about to go to mbedTLS; false when
 * they must not (the failure is set). */
static bool check_records(tls_stream *t, const uint8_t *p, size_t n)
{
    while (n > 0) {
        if (t->record_body_left > 0) {
            size_t k = n < t->record_body_left ? n : t->record_body_left;
            if (!t->hello_checked && !check_hello(t, p, k))
                return false;
            t->record_body_left -= k;
            p += k;
            n -= k;
            continue;
        }
        if (!t->first_byte_seen) {
            t->first_byte_seen = true;
            /* A plaintext peer (a ZMTP greeting starts 0xFF) or anything
             * else that opens with neither a handshake record nor an alert
             * (a TLS server refusing our hello). */
            if (*p != TLS_HANDSHAKE_RECORD && *p != TLS_ALERT_RECORD) {
                protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_NOT_TLS);
                return false;
            }
        }
        t->record_header[t->record_header_have++] = *p++;
        n--;
        if (t->record_header_have < sizeof t->record_header)
            continue;
        t->record_header_have = 0;
        t->record_body_left =
            (size_t)t->record_header[3] << 8 | t->record_header[4];
        if (t->record_body_left > RECORD_CIPHER_MAX) {
            protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_OVERSIZED_RECORD);
            return false;
        }
        /* A peer that opens with an alert has no hello to check. */
        if (t->record_header[0] != TLS_HANDSHAKE_RECORD)
            t->hello_checked = true;
        /* TLS 1.2 carries handshake messages after the handshake only to
         * renegotiate (TLS 1.3 hides them inside application records). */
        if (t->record_header[0] == TLS_HANDSHAKE_RECORD && t->handshake_done &&
            !t->tls13) {
            protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_RENEGOTIATION);
            return false;
        }
    }
    return true;
}

static bool mid_record(const tls_stream *t)
{
    return t->in_pos < t->in_len || t->record_header_have > 0 ||
           t->record_body_left > 0;
}

/* ---- mbedTLS's I/O: memory only ---- */

static int bio_recv(void *ctx, unsigned char *buf, size_t len)
{
    tls_stream *t = ctx;
    size_t have = t->in_len - t->in_pos;
    if (have == 0)
        return MBEDTLS_ERR_SSL_WANT_READ;
    size_t n = have < len ? have : len;
    if (!check_records(t, t->in + t->in_pos, n))
        return MBEDTLS_ERR_SSL_INTERNAL_ERROR;
    memcpy(buf, t->in + t->in_pos, n);
    t->in_pos += n;
    return (int)n;
}

/* Never appends while a lower write holds the buffer: mbedTLS keeps what
 * it could not send and sends it again once asked. */
static int bio_send(void *ctx, const unsigned char *buf, size_t len)
{
    tls_stream *t = ctx;
    if (t->lower_write_pending)
        return MBEDTLS_ERR_SSL_WANT_WRITE;
    if (!t->out && !(t->out = zl_pool_alloc(CIPHER_OUT_CAP, &t->out_class)))
        return MBEDTLS_ERR_SSL_ALLOC_FAILED;
    size_t room = CIPHER_OUT_CAP - t->out_len;
    if (room == 0)
        return MBEDTLS_ERR_SSL_WANT_WRITE;
    size_t n = room < len ? room : len;
    memcpy(t->out + t->out_len, buf, n);
    t->out_len += n;
    return (int)n;
}

/* ---- lower I/O ---- */

static void release_in(tls_stream *t)
{
    if (t->in)
        zl_pool_free(t->in, t->in_class);
    t->in = NULL;
    t->in_cap = t->in_pos = t->in_len = 0;
    t->plain = NULL;
    t->plain_len = 0;
}

static void release_out(tls_stream *t)
{
    if (t->out)
        zl_pool_free(t->out, t->out_class);
    t->out = NULL;
    t->out_len = 0;
    if (t->staging)
        zl_pool_free(t->staging, t->staging_class);
    t->staging = NULL;
    t->staged = 0;
}

static void maybe_free(tls_stream *t)
{
    if (!t->closing || t->lower_pending > 0 || zl_timer_active(&t->close_timer))
        return;
    mbedtls_ssl_free(&t->ssl);
    if (t->own_records)
        zl_tls_record_free(&t->record);
    mbedtls_platform_zeroize(&t->secrets, sizeof t->secrets);
    zl_tls_settings_unref(t->settings);
    release_in(t);
    release_out(t);
    free(t->peer);
    free(t);
}

static void on_lower_read(zl_op *op, int status, size_t bytes)
{
    tls_stream *t = op->data;
    t->lower_read_pending = false;
    t->lower_pending--;
    if (t->closing) {
        maybe_free(t);
        return;
    }
    if (status == ZL_EOF || (status == 0 && bytes == 0 && !t->lower_probe))
        t->lower_eof = true;
    else if (status != 0)
        set_failure(t, status, 0, 0);
    else if (t->lower_probe)
        t->lower_readable = true;
    else
        t->in_len += bytes;
    t->lower_probe = false;
    pump(t);
}

static void on_lower_write(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    tls_stream *t = op->data;
    t->lower_write_pending = false;
    t->lower_pending--;
    if (t->closing) {
        maybe_free(t);
        return;
    }
    t->out_len = 0;
    if (status != 0)
        set_failure(t, status, 0, 0);
    pump(t);
    /* Nothing more to send: an idle connection keeps no output buffer. */
    if (!t->closing && !t->write_op && !t->lower_write_pending)
        release_out(t);
}

/* Reads ciphertext: into the buffer, or a probe while there is none and
 * the engine itself only probes (an idle connection pins no buffer). */
static void read_lower(tls_stream *t, bool probe)
{
    if (t->lower_read_pending || t->lower_eof || t->failure.status)
        return;
    zl_iovec iov = {NULL, 0};
    if (!probe) {
        size_t cap = t->ssl_ready ? CIPHER_IN_CAP : CIPHER_FIRST_CAP;
        if (!t->in || (t->in_cap < cap && !t->plain)) {
            uint8_t cls;
            uint8_t *in = zl_pool_alloc(cap, &cls);
            if (!in) {
                set_failure(t, -ENOMEM, 0, 0);
                return;
            }
            if (t->in) {
                memcpy(in, t->in + t->in_pos, t->in_len - t->in_pos);
                t->in_len -= t->in_pos;
                t->in_pos = 0;
                zl_pool_free(t->in, t->in_class);
            }
            t->in = in;
            t->in_class = cls;
            t->in_cap = cap;
        }
        /* mbedTLS takes everything before it asks for more; zlink's own
         * records leave the start of one behind. */
        memmove(t->in, t->in + t->in_pos, t->in_len - t->in_pos);
        t->in_len -= t->in_pos;
        t->in_pos = 0;
        iov = (zl_iovec){t->in + t->in_len, t->in_cap - t->in_len};
    } else {
        iov.base = t->record_header; /* nothing is read */
    }
    t->lower_probe = probe;
    t->lower_readable = false;
    t->lower_read_pending = true;
    t->lower_pending++;
    zl_stream_readv(t->lower, &t->lower_read_op, &iov, 1);
}

static void flush(tls_stream *t)
{
    if (t->lower_write_pending || t->out_len == 0)
        return;
    t->out_iov = (zl_iovec){t->out, t->out_len};
    t->lower_write_pending = true;
    t->lower_pending++;
    zl_stream_write(t->lower, &t->lower_write_op, &t->out_iov, 1);
}

/* ---- the engine's ops ---- */

static void complete(tls_stream *t, zl_op **slot, int status, size_t bytes)
{
    zl_op *op = *slot;
    *slot = NULL;
    zl_stream_defer(&t->deferred, op, status, bytes);
}

/* mbedtls_ssl_handshake, one step at a time, to see whether the server's
 * certificate goes out: a handshake without it resumed a session. (The
 * master secret tells the same in TLS 1.2 only; TLS 1.3 keeps none in the
 * session.) */
static int run_handshake(tls_stream *t)
{
#if defined(ZL_TLS_EXPORT_KEYS_228)
    handshaking = t;
#endif
    int rc = 0;
    while (rc == 0 && handshake_state(&t->ssl) != MBEDTLS_SSL_HANDSHAKE_OVER) {
        rc = mbedtls_ssl_handshake_step(&t->ssl);
        if (rc == 0 &&
            handshake_state(&t->ssl) == MBEDTLS_SSL_SERVER_CERTIFICATE)
            t->server_certificate_seen = true;
    }
#if defined(ZL_TLS_EXPORT_KEYS_228)
    handshaking = NULL;
#endif
    return rc;
}

static bool resumed(const tls_stream *t)
{
    return (t->offered || !t->client) && !t->server_certificate_seen;
}

/* A client keeps the session of a full handshake for its next connection
 * to the same peer: at the end of a TLS 1.2 handshake, or as a TLS 1.3
 * server's ticket arrives after it. A resumed one is not kept again: its
 * certificate check is as old as the first session, and must not look
 * newer. */
static void keep_session(tls_stream *t)
{
    if (t->client && !resumed(t))
        zl_tls_session_save(t->settings, t->peer, &t->ssl);
}

/* Takes the records over from mbedTLS where this handshake allows it: TLS
 * 1.2, an AES-GCM suite, the secrets exported, and nothing of the peer's
 * read past its Finished. Otherwise mbedTLS keeps them. */
static void start_own_records(tls_stream *t)
{
    size_t key_len =
        zl_tls_record_key_len(mbedtls_ssl_get_ciphersuite(&t->ssl));
    int plain_max = mbedtls_ssl_get_max_out_record_payload(&t->ssl);
    if (!t->tls13 && key_len > 0 && plain_max > 0 &&
        mbedtls_ssl_check_pending(&t->ssl) == 0 &&
        zl_tls_record_init(&t->record, &t->secrets, key_len, t->client) == 0) {
        t->own_records = true;
        t->record_plain_max =
            plain_max < RECORD_PLAIN_MAX ? (size_t)plain_max : RECORD_PLAIN_MAX;
        atomic_fetch_add_explicit(&own_records_total, 1, memory_order_relaxed);
    }
    mbedtls_platform_zeroize(&t->secrets, sizeof t->secrets);
}

static int setup_ssl(tls_stream *t, const char *hostname)
{
    if (mbedtls_ssl_setup(&t->ssl, t->conf) != 0 ||
        (t->client && hostname &&
         mbedtls_ssl_set_hostname(&t->ssl, hostname) != 0))
        return -1;
    mbedtls_ssl_set_bio(&t->ssl, t, bio_send, bio_recv, NULL);
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
    mbedtls_ssl_set_export_keys_cb(&t->ssl, export_keys, t);
#endif
    t->ssl_ready = true;
    atomic_fetch_add_explicit(&setups_total, 1, memory_order_relaxed);
    return 0;
}

static void step_handshake(tls_stream *t)
{
    if (!t->ssl_ready) {
        if (t->in_pos == t->in_len)
            return; /* the peer has said nothing yet */
        if (setup_ssl(t, NULL) != 0) {
            set_failure(t, -ENOMEM, 0, 0);
            return;
        }
    }
    int rc = run_handshake(t);
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE)
        return;
    if (rc != 0) {
        mbedtls_failure(t, rc);
        return;
    }
    t->handshake_done = true;
#if defined(MBEDTLS_SSL_PROTO_TLS1_3) && MBEDTLS_VERSION_NUMBER >= 0x03020000
    t->tls13 =
        mbedtls_ssl_get_version_number(&t->ssl) == MBEDTLS_SSL_VERSION_TLS1_3;
#endif
    /* Asked for but not verified (ZLINK_TLS_VERIFY 0): it must still
     * have come. A resumed session's came in its first handshake, which
     * required it too (TLS 1.3 tickets do not keep it). */
    if (!t->client && zl_tls_settings_require_client_cert(t->settings) &&
        !resumed(t) && !mbedtls_ssl_get_peer_cert(&t->ssl)) {
        auth_failure(t, ZLINK_TLS_AUTH_NO_PEER_CERT);
        return;
    }
    if (t->client && resumed(t))
        atomic_fetch_add_explicit(&resumed_total, 1, memory_order_relaxed);
    else if (!t->tls13)
        keep_session(t);
    start_own_records(t);
    complete(t, &t->handshake_op, 0, 0);
}

/* The next record's plaintext: straight from the engine's iovec when one
 * record's worth (or the last of the batch) lies in it, else gathered from
 * several into staging, so that small segments between zero-copy bodies
 * do not each become a record. Sets *len; NULL without memory. */
static const uint8_t *next_record(tls_stream *t, size_t *len)
{
    const zl_iovec *v = &t->write_iov[t->write_index];
    size_t in_this = v->len - t->write_offset;
    if (t->staged == 0 &&
        (in_this >= RECORD_PLAIN_MAX || t->write_index == t->write_count - 1)) {
        *len = in_this < RECORD_PLAIN_MAX ? in_this : RECORD_PLAIN_MAX;
        return (const uint8_t *)v->base + t->write_offset;
    }
    if (t->staged == 0) {
        if (!t->staging &&
            !(t->staging = zl_pool_alloc(RECORD_PLAIN_MAX, &t->staging_class)))
            return NULL;
        int index = t->write_index;
        size_t offset = t->write_offset;
        while (index < t->write_count && t->staged < RECORD_PLAIN_MAX) {
            const zl_iovec *w = &t->write_iov[index];
            size_t n = w->len - offset;
            if (n > RECORD_PLAIN_MAX - t->staged)
                n = RECORD_PLAIN_MAX - t->staged;
            memcpy(t->staging + t->staged, (const uint8_t *)w->base + offset,
                   n);
            t->staged += n;
            offset += n;
            if (offset == w->len) {
                index++;
                offset = 0;
            }
        }
    }
    *len = t->staged;
    return t->staging;
}

static void advance_write(tls_stream *t, size_t n)
{
    t->write_done += n;
    t->staged = 0;
    while (n > 0) {
        size_t in_this = t->write_iov[t->write_index].len - t->write_offset;
        size_t k = n < in_this ? n : in_this;
        t->write_offset += k;
        n -= k;
        if (t->write_offset == t->write_iov[t->write_index].len) {
            t->write_index++;
            t->write_offset = 0;
        }
    }
    /* Skip empty iovecs so next_record always has bytes to look at. */
    while (t->write_index < t->write_count &&
           t->write_iov[t->write_index].len == 0)
        t->write_index++;
}

/* One record of plaintext out: sealed by zlink, or given to mbedTLS. The
 * bytes taken, or an mbedTLS error. */
static int write_record(tls_stream *t, const uint8_t *p, size_t len)
{
    if (!t->own_records)
        return mbedtls_ssl_write(&t->ssl, p, len);
    if (!t->out && !(t->out = zl_pool_alloc(CIPHER_OUT_CAP, &t->out_class)))
        return MBEDTLS_ERR_SSL_ALLOC_FAILED;
    if (len > t->record_plain_max)
        len = t->record_plain_max;
    t->out_len += zl_tls_record_seal(&t->record, ZL_TLS_CONTENT_APPLICATION, p,
                                     len, t->out + t->out_len);
    return (int)len;
}

/* Encrypts the engine's batch as records while the out buffer has room. */
static void encrypt_batch(tls_stream *t)
{
    while (t->write_op && t->write_done < t->write_total &&
           !t->lower_write_pending &&
           t->out_len + RECORD_ROOM <= CIPHER_OUT_CAP) {
        size_t len;
        const uint8_t *p = next_record(t, &len);
        if (!p) {
            set_failure(t, -ENOMEM, 0, 0);
            return;
        }
        int rc = write_record(t, p, len);
        if (rc == MBEDTLS_ERR_SSL_WANT_WRITE || rc == MBEDTLS_ERR_SSL_WANT_READ)
            return; /* the same record goes again after the flush */
        if (rc < 0) {
            mbedtls_failure(t, rc);
            return;
        }
        advance_write(t, (size_t)rc);
    }
    if (t->write_op && t->write_done == t->write_total && t->out_len == 0 &&
        !t->lower_write_pending) {
        if (t->staging)
            zl_pool_free(t->staging, t->staging_class);
        t->staging = NULL;
        complete(t, &t->write_op, 0, t->write_total);
    }
}

/* A read that found nothing to give: more ciphertext, unless the peer has
 * ended, inside a record (cut short) or between two (closed). */
static void read_more_or_end(tls_stream *t)
{
    if (!t->lower_eof)
        read_lower(t, false);
    else if (mid_record(t))
        protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_TRUNCATED);
    else
        set_failure(t, ZL_EOF, 0, 0);
}

/* Decrypts into the engine's iovecs, a large body first when it asks for
 * one; completes the read with whatever the ciphertext held. */
static void decrypt_into_read(tls_stream *t)
{
    size_t got = 0;
    int rc = 0;
#if defined(MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET)
    bool ticket_retried = false;
#endif
    for (int i = 0; i < t->read_count; i++) {
        uint8_t *base = t->read_iov[i].base;
        size_t len = t->read_iov[i].len, have = 0;
        while (have < len) {
            rc = mbedtls_ssl_read(&t->ssl, base + have, len - have);
            if (rc > 0) {
                have += (size_t)rc;
                continue;
            }
#if defined(MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET)
            if (rc == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) {
                keep_session(t);
                continue;
            }
            /* A ticket that stopped the read is handled at once: mbedTLS
             * 3.6 fails to decrypt the next record if it must first fetch
             * more ciphertext while it keeps the ticket message. */
            if (rc == MBEDTLS_ERR_SSL_WANT_READ && !ticket_retried &&
                handshake_state(&t->ssl) != MBEDTLS_SSL_HANDSHAKE_OVER) {
                ticket_retried = true;
                continue;
            }
#endif
            break;
        }
        got += have;
        if (have < len)
            break;
    }
    if (rc == 0 && got == 0 && t->read_count > 0)
        rc = MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY; /* read of 0: closed */
    bool more_needed =
        rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE;
    if (rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY)
        set_failure(t, ZL_EOF, 0, 0);
    else if (rc < 0 && !more_needed)
        mbedtls_failure(t, rc);
    if (got > 0) {
        complete(t, &t->read_op, 0, got);
        return;
    }
    if (rc == MBEDTLS_ERR_SSL_WANT_READ)
        read_more_or_end(t);
}

/* A record zlink opens itself, whose header is at in_pos; false when it
 * ends the reading (a failure or the peer's close_notify is set). */
static bool check_own_header(tls_stream *t, const uint8_t *rec)
{
    if (zl_tls_record_body_len(rec) > RECORD_CIPHER_MAX) {
        protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_OVERSIZED_RECORD);
        return false;
    }
    /* TLS 1.2 carries a handshake message after the handshake only to
     * renegotiate. */
    if (rec[0] == ZL_TLS_CONTENT_HANDSHAKE) {
        protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_RENEGOTIATION);
        return false;
    }
    if ((rec[0] != ZL_TLS_CONTENT_APPLICATION &&
         rec[0] != ZL_TLS_CONTENT_ALERT) ||
        rec[1] != 3 || rec[2] != 3) {
        protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_BAD_RECORD);
        return false;
    }
    return true;
}

/* An opened alert: close_notify ends the stream as a close does, a fatal
 * one as mbedTLS reports it, and a warning is passed over, as mbedTLS
 * does. False when it ends the reading. */
static bool take_alert(tls_stream *t, const uint8_t *alert, size_t len)
{
    if (len != 2) {
        protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_BAD_RECORD);
        return false;
    }
    if (alert[1] == MBEDTLS_SSL_ALERT_MSG_CLOSE_NOTIFY) {
        set_failure(t, ZL_EOF, 0, 0);
        return false;
    }
    if (alert[0] != MBEDTLS_SSL_ALERT_LEVEL_FATAL)
        return true;
    if (is_certificate_alert(alert[1]))
        auth_failure(t, ZLINK_TLS_AUTH_PEER_REJECTED);
    else
        protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_ALERT);
    return false;
}

/* The read with zlink's own records: plaintext left from a record opened
 * before first, then whole records, each opened straight into the
 * engine's iovec when it fits there, else in place, its rest kept. */
static void open_into_read(tls_stream *t)
{
    size_t got = 0, at = 0;
    int i = 0;
    while (i < t->read_count && !t->failure.status) {
        uint8_t *base = t->read_iov[i].base;
        size_t room = t->read_iov[i].len - at;
        if (room == 0) {
            i++;
            at = 0;
            continue;
        }
        if (t->plain_len > 0) {
            size_t n = room < t->plain_len ? room : t->plain_len;
            memcpy(base + at, t->plain, n);
            t->plain += n;
            t->plain_len -= n;
            at += n;
            got += n;
            continue;
        }
        size_t have = t->in_len - t->in_pos;
        if (have < ZL_TLS_RECORD_HEADER)
            break;
        uint8_t *rec = t->in + t->in_pos;
        if (!check_own_header(t, rec))
            break;
        size_t body = zl_tls_record_body_len(rec);
        if (have < ZL_TLS_RECORD_HEADER + body)
            break;
        t->in_pos += ZL_TLS_RECORD_HEADER + body;
        uint8_t *in_place = rec + ZL_TLS_RECORD_HEADER + 8;
        bool direct = rec[0] == ZL_TLS_CONTENT_APPLICATION &&
                      body <= room + ZL_TLS_RECORD_EXPANSION;
        uint8_t *out = direct ? base + at : in_place;
        size_t len;
        if (zl_tls_record_open(&t->record, rec, body, out, &len) != 0) {
            protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_BAD_RECORD);
            break;
        }
        if (rec[0] == ZL_TLS_CONTENT_ALERT) {
            if (!take_alert(t, out, len))
                break;
        } else if (direct) {
            at += len;
            got += len;
        } else {
            t->plain = out;
            t->plain_len = len;
        }
    }
    if (got > 0) {
        complete(t, &t->read_op, 0, got);
        return;
    }
    if (!t->failure.status && t->plain_len == 0)
        read_more_or_end(t);
}

/* A zero-length read: done once a read would bring something. */
static void probe(tls_stream *t)
{
    if (mbedtls_ssl_get_bytes_avail(&t->ssl) > 0 || t->plain_len > 0 ||
        t->in_pos < t->in_len || t->lower_eof || t->lower_readable) {
        complete(t, &t->read_op, 0, 0);
        return;
    }
    /* Idle: the ciphertext buffer goes back to the pool until data
     * comes. A record begun in it was already taken by mbedTLS. */
    if (!t->lower_read_pending)
        release_in(t);
    read_lower(t, true);
}

static void fail_ops(tls_stream *t)
{
    if (t->handshake_op)
        complete(t, &t->handshake_op, t->failure.status, 0);
    if (t->read_op)
        complete(t, &t->read_op, t->failure.status, 0);
    if (t->write_op)
        complete(t, &t->write_op, t->failure.status, 0);
}

static void pump(tls_stream *t)
{
    if (t->closing)
        return;
    if (!t->failure.status && !t->handshake_done && t->handshake_op)
        step_handshake(t);
    if (!t->failure.status && t->handshake_done) {
        encrypt_batch(t);
        if (t->read_op && !t->failure.status) {
            if (t->read_count == 0 ||
                (t->read_count == 1 && t->read_iov[0].len == 0))
                probe(t);
            else if (t->own_records)
                open_into_read(t);
            else
                decrypt_into_read(t);
        }
    }
    flush(t);
    if (!t->failure.status && !t->handshake_done && t->handshake_op) {
        /* The handshake waits for the peer, unless it only waits for its
         * own flight to leave. */
        if (t->lower_eof) {
            if (mid_record(t))
                protocol_failure(t, ZLINK_PROTOCOL_ERROR_TLS_TRUNCATED);
            else
                set_failure(t, ZL_EOF, 0, 0);
        } else if (t->in_pos == t->in_len) {
            /* A server takes no buffer before the peer has sent something. */
            read_lower(t, !t->ssl_ready && !t->lower_readable);
        }
    }
    if (t->failure.status)
        fail_ops(t);
}

/* ---- stream ops ---- */

static void tls_handshake(zl_stream *s, zl_op *op)
{
    tls_stream *t = (tls_stream *)s;
    t->handshake_op = op;
    pump(t);
}

static void tls_readv(zl_stream *s, zl_op *op, const zl_iovec *iov, int n)
{
    tls_stream *t = (tls_stream *)s;
    t->read_op = op;
    t->read_count = n;
    for (int i = 0; i < n; i++)
        t->read_iov[i] = iov[i];
    pump(t);
}

static void tls_write(zl_stream *s, zl_op *op, const zl_iovec *iov, int n)
{
    tls_stream *t = (tls_stream *)s;
    t->write_op = op;
    t->write_iov = iov;
    t->write_count = n;
    t->write_index = 0;
    t->write_offset = t->write_done = t->write_total = 0;
    for (int i = 0; i < n; i++)
        t->write_total += iov[i].len;
    advance_write(t, 0);
    pump(t);
}

static void on_close_timer(zl_timer *timer)
{
    tls_stream *t = timer->data;
    for (int i = 0; i < t->closing_count; i++)
        t->closing_due[i].op->cb(t->closing_due[i].op, t->closing_due[i].status,
                                 t->closing_due[i].bytes);
    t->closing_count = 0;
    maybe_free(t);
}

static void queue_closing(tls_stream *t, zl_op *op, int status, size_t bytes)
{
    t->closing_due[t->closing_count].op = op;
    t->closing_due[t->closing_count].status = status;
    t->closing_due[t->closing_count].bytes = bytes;
    t->closing_count++;
}

/* The completions already deferred and the cancellations of the ops still
 * pending run from one timer of our own, so that we know when they are
 * over and can free ourselves. */
static void tls_close(zl_stream *s)
{
    tls_stream *t = (tls_stream *)s;
    t->closing = true;
    for (int i = 0; i < t->deferred.count; i++)
        queue_closing(t, t->deferred.due[i].op, t->deferred.due[i].status,
                      t->deferred.due[i].bytes);
    zl_stream_deferred_stop(&t->deferred);
    zl_op **mine[] = {&t->handshake_op, &t->read_op, &t->write_op};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++) {
        if (*mine[i])
            queue_closing(t, *mine[i], ZL_ECANCELED, 0);
        *mine[i] = NULL;
    }
    zl_stream_close(t->lower);
    t->lower = NULL;
    if (t->closing_count > 0)
        zl_timer_start(t->loop, &t->close_timer, 0);
    maybe_free(t);
}

static zl_framing tls_framing(const zl_stream *s)
{
    (void)s;
    return ZL_FRAMING_ZMTP;
}

/* Every TLS failure leaves a client retrying, as libzmq's wss does: the
 * server may restart mid-handshake, or renew the certificate refused. */
static int tls_failure_of(const zl_stream *s, uint64_t *value, bool *retry)
{
    const tls_stream *t = (const tls_stream *)s;
    *value = t->failure.value;
    *retry = true;
    return t->failure.event;
}

static const zl_stream_ops tls_ops = {
    .handshake = tls_handshake,
    .readv = tls_readv,
    .write = tls_write,
    .close = tls_close,
    .framing = tls_framing,
    .failure = tls_failure_of,
};

/* "name\nhost:port": the name the certificate is checked against and
 * where the server was reached. */
static char *peer_key(const char *name, const char *endpoint)
{
    if (!name || !endpoint)
        return NULL;
    size_t a = strlen(name), b = strlen(endpoint);
    char *key = malloc(a + b + 2);
    if (key) {
        memcpy(key, name, a);
        key[a] = '\n';
        memcpy(key + a + 1, endpoint, b + 1);
    }
    return key;
}

/* Offers the session kept for this peer, if any. */
static void offer_session(tls_stream *t)
{
    t->offered = t->peer && zl_tls_session_offer(t->settings, t->peer, &t->ssl);
}

zl_stream *zl_tls_stream_create(zl_loop *loop, zl_stream *lower,
                                const zl_options *options, bool client,
                                const char *hostname, const char *endpoint,
                                int *err)
{
    const mbedtls_ssl_config *conf =
        zl_tls_settings_conf(options->tls, !client);
    if (!conf) {
        *err = EINVAL;
        return NULL;
    }
    tls_stream *t = calloc(1, sizeof *t);
    if (!t) {
        *err = ENOMEM;
        return NULL;
    }
    mbedtls_ssl_init(&t->ssl);
    t->conf = conf;
    t->client = client;
    const char *name = zl_tls_settings_hostname(options->tls);
    if (!name)
        name = hostname;
    if (client && setup_ssl(t, name) != 0) {
        mbedtls_ssl_free(&t->ssl);
        free(t);
        *err = ENOMEM;
        return NULL;
    }
    t->base.ops = &tls_ops;
    t->base.handle = lower->handle;
    t->loop = loop;
    t->lower = lower;
    t->settings = zl_tls_settings_ref(options->tls);
    if (client) {
        t->peer = peer_key(name, endpoint);
        offer_session(t);
    }
    zl_stream_deferred_init(&t->deferred, loop);
    t->lower_read_op.cb = on_lower_read;
    t->lower_read_op.data = t;
    t->lower_write_op.cb = on_lower_write;
    t->lower_write_op.data = t;
    t->close_timer.cb = on_close_timer;
    t->close_timer.data = t;
    return &t->base;
}
