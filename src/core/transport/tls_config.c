/* tls_config.c — the ZLINK_TLS_* options of a socket and the mbedTLS
 * configuration (certificates, keys, trust anchors) built from them once
 * per socket, shared by its connections. */
#include "tls_config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/ssl_ticket.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>
#include <uv.h>
#if MBEDTLS_VERSION_NUMBER >= 0x03000000 && defined(MBEDTLS_PSA_CRYPTO_C)
#include <psa/crypto.h>
#endif

#include "string_option.h"
#include "tls_aes_gcm.h"
#include "tls_internal.h"
#include "zlink.h"

/* The string options, indexed by option - ZLINK_TLS_CERT. */
enum {
    STR_CERT,
    STR_KEY,
    STR_KEY_PASSWORD,
    STR_CA,
    STR_CERT_PEM,
    STR_KEY_PEM,
    STR_CA_PEM,
    STR_COUNT
};

#if defined(MBEDTLS_SSL_SESSION_TICKETS) && defined(MBEDTLS_SSL_TICKET_C)
#define ZL_TLS_TICKETS 1
#endif

/* How long a session may be resumed: the server's ticket lifetime, which
 * also rotates its ticket key, and how long a client offers a session it
 * kept. A resumed session skips the certificate check, so an hour bounds
 * how long a connection may rest on an earlier verdict. */
#define SESSION_LIFETIME_S 3600
/* Sessions a client keeps, one per peer (name and endpoint), the oldest
 * replaced first: a socket connects to a handful of endpoints. */
#define SESSIONS_MAX 8

/* A session a client may offer again to the same peer. */
typedef struct tls_saved_session {
    char *peer; /* NULL: a free slot */
    mbedtls_ssl_session session;
    uint64_t saved_ns;
} tls_saved_session;

/* One role's configuration and what it points at. Connections of several
 * I/O threads share it: the ticket key (server) and the saved sessions
 * (client) change under the lock. */
typedef struct tls_role {
    mbedtls_ssl_config conf;
    mbedtls_x509_crt own_cert;
    mbedtls_pk_context own_key;
    mbedtls_x509_crt ca;
    uv_mutex_t lock;
#if defined(ZL_TLS_TICKETS)
    bool tickets;
    mbedtls_ssl_ticket_context ticket;
#endif
    tls_saved_session sessions[SESSIONS_MAX];
} tls_role;

struct zl_tls_settings {
    atomic_int refs;
    char *str[STR_COUNT]; /* NULL when unset */
    char *hostname;
    bool verify;
    bool require_client_cert;
    bool trust_system; /* the system store as well as the CAs given */
    tls_role *role[2]; /* [0] client, [1] server; built by prepare */
};

bool zl_tls_is_option(int option)
{
    return option >= ZLINK_TLS_CERT && option <= ZLINK_TLS_TRUST_SYSTEM;
}

/* ---- the random generator ----
 * One for the process, behind a lock: mbedTLS asks for random bytes a few
 * times per handshake (and per record only for CBC suites), and its own
 * locking is a build option that a cross-built mbedTLS may lack. */
static uv_once_t rng_once = UV_ONCE_INIT;
static uv_mutex_t rng_lock;
static mbedtls_entropy_context rng_entropy;
static mbedtls_ctr_drbg_context rng_drbg;
static int rng_status = MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;

static void rng_init(void)
{
    static const char personal[] = "zlink tls";
    uv_mutex_init(&rng_lock);
#if MBEDTLS_VERSION_NUMBER >= 0x03000000 && defined(MBEDTLS_PSA_CRYPTO_C)
    /* mbedTLS 3's TLS 1.3 (and its PSA-backed parts) need this first. */
    if (psa_crypto_init() != PSA_SUCCESS)
        return;
#endif
    mbedtls_entropy_init(&rng_entropy);
    mbedtls_ctr_drbg_init(&rng_drbg);
    rng_status = mbedtls_ctr_drbg_seed(
        &rng_drbg, mbedtls_entropy_func, &rng_entropy,
        (const unsigned char *)personal, sizeof personal - 1);
}

int zl_tls_random(void *unused, unsigned char *out, size_t len)
{
    (void)unused;
    uv_once(&rng_once, rng_init);
    if (rng_status != 0)
        return rng_status;
    uv_mutex_lock(&rng_lock);
    int rc = mbedtls_ctr_drbg_random(&rng_drbg, out, len);
    uv_mutex_unlock(&rng_lock);
    return rc;
}

/* ---- settings ---- */

static void free_role(tls_role *r)
{
    if (!r)
        return;
#if defined(ZL_TLS_TICKETS)
    mbedtls_ssl_ticket_free(&r->ticket);
#endif
    for (int i = 0; i < SESSIONS_MAX; i++) {
        free(r->sessions[i].peer);
        mbedtls_ssl_session_free(&r->sessions[i].session);
    }
    uv_mutex_destroy(&r->lock);
    mbedtls_ssl_config_free(&r->conf);
    mbedtls_x509_crt_free(&r->own_cert);
    mbedtls_pk_free(&r->own_key);
    mbedtls_x509_crt_free(&r->ca);
    free(r);
}

static void free_settings(zl_tls_settings *s)
{
    for (int i = 0; i < STR_COUNT; i++)
        free(s->str[i]);
    free(s->hostname);
    free_role(s->role[0]);
    free_role(s->role[1]);
    free(s);
}

zl_tls_settings *zl_tls_settings_ref(zl_tls_settings *s)
{
    if (s)
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void zl_tls_settings_unref(zl_tls_settings *s)
{
    if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
        free_settings(s);
}

static char *dup_or_null(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static zl_tls_settings *new_settings(void)
{
    zl_tls_settings *s = calloc(1, sizeof *s);
    if (s) {
        atomic_init(&s->refs, 1);
        s->verify = true;
    }
    return s;
}

/* Settings this caller alone may change: fresh ones, or a copy of shared
 * ones without their built configuration (it no longer applies). */
static zl_tls_settings *writable(zl_tls_settings **settings)
{
    zl_tls_settings *s = *settings;
    if (!s)
        return *settings = new_settings();
    if (atomic_load_explicit(&s->refs, memory_order_acquire) == 1) {
        free_role(s->role[0]);
        free_role(s->role[1]);
        s->role[0] = s->role[1] = NULL;
        return s;
    }
    zl_tls_settings *c = new_settings();
    if (!c)
        return NULL;
    bool ok = true;
    for (int i = 0; i < STR_COUNT; i++)
        ok &= (c->str[i] = dup_or_null(s->str[i])) != NULL || !s->str[i];
    ok &= (c->hostname = dup_or_null(s->hostname)) != NULL || !s->hostname;
    c->verify = s->verify;
    c->require_client_cert = s->require_client_cert;
    c->trust_system = s->trust_system;
    if (!ok) {
        free_settings(c);
        return NULL;
    }
    zl_tls_settings_unref(s);
    return *settings = c;
}

/* The int options, 0 or 1; the rest are strings. */
static bool is_int_option(int option)
{
    return option == ZLINK_TLS_VERIFY ||
           option == ZLINK_TLS_REQUIRE_CLIENT_CERT ||
           option == ZLINK_TLS_TRUST_SYSTEM;
}

/* An int option's value; unset settings hold the defaults. */
static int int_option(const zl_tls_settings *s, int option)
{
    if (!s)
        return option == ZLINK_TLS_VERIFY;
    return option == ZLINK_TLS_VERIFY                ? s->verify
           : option == ZLINK_TLS_REQUIRE_CLIENT_CERT ? s->require_client_cert
                                                     : s->trust_system;
}

int zl_tls_option_set(zl_tls_settings **settings, int option, const void *val,
                      size_t len)
{
    zl_tls_settings *s = writable(settings);
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    if (option == ZLINK_TLS_HOSTNAME)
        return zl_string_option_set(&s->hostname, val, len,
                                    ZL_STRING_OPTION_UNBOUNDED);
    if (!is_int_option(option))
        return zl_string_option_set(&s->str[option - ZLINK_TLS_CERT], val, len,
                                    ZL_STRING_OPTION_UNBOUNDED);
    int v;
    if (!val || len != sizeof v) {
        errno = EINVAL;
        return -1;
    }
    memcpy(&v, val, sizeof v);
    if (v != 0 && v != 1) {
        errno = EINVAL;
        return -1;
    }
    if (option == ZLINK_TLS_VERIFY)
        s->verify = v;
    else if (option == ZLINK_TLS_REQUIRE_CLIENT_CERT)
        s->require_client_cert = v;
    else
        s->trust_system = v;
    return 0;
}

int zl_tls_option_get(const zl_tls_settings *s, int option, void *val,
                      size_t *len)
{
    if (!val || !len) {
        errno = EINVAL;
        return -1;
    }
    if (is_int_option(option)) {
        int v = int_option(s, option);
        if (*len < sizeof v) {
            errno = EINVAL;
            return -1;
        }
        memcpy(val, &v, sizeof v);
        *len = sizeof v;
        return 0;
    }
    const char *str = !s ? NULL
                      : option == ZLINK_TLS_HOSTNAME
                          ? s->hostname
                          : s->str[option - ZLINK_TLS_CERT];
    if (!str)
        str = "";
    size_t need = strlen(str) + 1;
    if (*len < need) {
        errno = EINVAL;
        return -1;
    }
    memcpy(val, str, need);
    *len = need;
    return 0;
}

const char *zl_tls_settings_hostname(const zl_tls_settings *s)
{
    return s ? s->hostname : NULL;
}

bool zl_tls_settings_verify(const zl_tls_settings *s)
{
    return !s || s->verify;
}

bool zl_tls_settings_require_client_cert(const zl_tls_settings *s)
{
    return s && s->require_client_cert;
}

/* ---- building a configuration ---- */

/* PEM text goes to mbedTLS with its NUL counted, as its parsers ask. */
static int parse_certs(mbedtls_x509_crt *crt, const char *file, const char *pem)
{
    if (file && mbedtls_x509_crt_parse_file(crt, file) != 0)
        return -1;
    if (pem && mbedtls_x509_crt_parse(crt, (const unsigned char *)pem,
                                      strlen(pem) + 1) != 0)
        return -1;
    return 0;
}

static int parse_key(mbedtls_pk_context *pk, const char *file, const char *pem,
                     const char *password)
{
    const unsigned char *pw = (const unsigned char *)password;
    size_t pw_len = password ? strlen(password) : 0;
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
    if (file)
        return mbedtls_pk_parse_keyfile(pk, file, password, zl_tls_random,
                                        NULL);
    return mbedtls_pk_parse_key(pk, (const unsigned char *)pem, strlen(pem) + 1,
                                pw, pw_len, zl_tls_random, NULL);
#else
    if (file)
        return mbedtls_pk_parse_keyfile(pk, file, password);
    return mbedtls_pk_parse_key(pk, (const unsigned char *)pem, strlen(pem) + 1,
                                pw, pw_len);
#endif
}

/* Our certificate and key, if any were given; both or neither. */
static int load_own(tls_role *r, const zl_tls_settings *s, bool *have)
{
    const char *cert = s->str[STR_CERT], *cert_pem = s->str[STR_CERT_PEM];
    const char *key = s->str[STR_KEY], *key_pem = s->str[STR_KEY_PEM];
    *have = cert || cert_pem;
    if (!*have && !key && !key_pem)
        return 0;
    if (!*have || (!key && !key_pem) || (key && key_pem))
        return -1;
    if (parse_certs(&r->own_cert, cert, cert_pem) != 0 ||
        parse_key(&r->own_key, key, key_pem, s->str[STR_KEY_PASSWORD]) != 0)
        return -1;
    return mbedtls_ssl_conf_own_cert(&r->conf, &r->own_cert, &r->own_key);
}

/* The CAs that verify the peer: ZLINK_TLS_CA and/or ZLINK_TLS_CA_PEM, or
 * else the system's trust store. With ZLINK_TLS_TRUST_SYSTEM the store is
 * added to the CAs given, when there is one: they still serve without
 * it. */
static int load_trust(tls_role *r, const zl_tls_settings *s)
{
    const char *ca = s->str[STR_CA], *ca_pem = s->str[STR_CA_PEM];
    if (ca || ca_pem) {
        if (parse_certs(&r->ca, ca, ca_pem) != 0)
            return -1;
        if (s->trust_system)
            (void)zl_tls_load_system_store(&r->ca);
    } else if (zl_tls_load_system_store(&r->ca) != 0) {
        return -1;
    }
    mbedtls_ssl_conf_ca_chain(&r->conf, &r->ca, NULL);
    return 0;
}

/* X25519 first, then the NIST curves smallest first: mbedTLS 2.28 would
 * otherwise agree on P-521, the slowest, whenever the peer offers it. */
/* With AES-NI, the TLS 1.2 AES-GCM suites come first: zlink seals and
 * opens their records itself (tls_record.h), faster than any suite
 * mbedTLS runs. mbedTLS's own order follows, TLS 1.3's suites included. */
#define SUITES_MAX 512
static int suites_gcm_first[SUITES_MAX];
static uv_once_t suites_once = UV_ONCE_INIT;

static void order_suites(void)
{
    static const char *const first[] = {
        "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256",
        "TLS-ECDHE-RSA-WITH-AES-128-GCM-SHA256",
        "TLS-ECDHE-ECDSA-WITH-AES-256-GCM-SHA384",
        "TLS-ECDHE-RSA-WITH-AES-256-GCM-SHA384"};
    size_t n = 0;
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++) {
        const mbedtls_ssl_ciphersuite_t *info =
            mbedtls_ssl_ciphersuite_from_string(first[i]);
        if (info)
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
            suites_gcm_first[n++] = mbedtls_ssl_ciphersuite_get_id(info);
#else
            suites_gcm_first[n++] = info->id;
#endif
    }
    size_t lead = n;
    for (const int *id = mbedtls_ssl_list_ciphersuites();
         *id != 0 && n + 1 < SUITES_MAX; id++) {
        bool listed = false;
        for (size_t i = 0; i < lead; i++)
            listed = listed || suites_gcm_first[i] == *id;
        if (!listed)
            suites_gcm_first[n++] = *id;
    }
    suites_gcm_first[n] = 0;
}

static void set_suites(tls_role *r)
{
    if (!zl_aes_gcm_accelerated())
        return;
    uv_once(&suites_once, order_suites);
    mbedtls_ssl_conf_ciphersuites(&r->conf, suites_gcm_first);
}

static void set_groups(tls_role *r)
{
#if MBEDTLS_VERSION_NUMBER >= 0x03010000
    static const uint16_t groups[] = {
        MBEDTLS_SSL_IANA_TLS_GROUP_X25519, MBEDTLS_SSL_IANA_TLS_GROUP_SECP256R1,
        MBEDTLS_SSL_IANA_TLS_GROUP_SECP384R1,
        MBEDTLS_SSL_IANA_TLS_GROUP_SECP521R1, MBEDTLS_SSL_IANA_TLS_GROUP_NONE};
    mbedtls_ssl_conf_groups(&r->conf, groups);
#elif defined(MBEDTLS_ECP_C)
    static const mbedtls_ecp_group_id curves[] = {
#if defined(MBEDTLS_ECP_DP_CURVE25519_ENABLED)
        MBEDTLS_ECP_DP_CURVE25519,
#endif
#if defined(MBEDTLS_ECP_DP_SECP256R1_ENABLED)
        MBEDTLS_ECP_DP_SECP256R1,
#endif
#if defined(MBEDTLS_ECP_DP_SECP384R1_ENABLED)
        MBEDTLS_ECP_DP_SECP384R1,
#endif
#if defined(MBEDTLS_ECP_DP_SECP521R1_ENABLED)
        MBEDTLS_ECP_DP_SECP521R1,
#endif
        MBEDTLS_ECP_DP_NONE
    };
    mbedtls_ssl_conf_curves(&r->conf, curves);
#else
    (void)r;
#endif
}

/* ---- session resumption ---- */

#if defined(ZL_TLS_TICKETS)
/* mbedTLS's ticket functions, one connection at a time: the key rotates
 * and the cipher context is used in place. */
static int ticket_write(void *p, const mbedtls_ssl_session *session,
                        unsigned char *start, const unsigned char *end,
                        size_t *tlen, uint32_t *lifetime)
{
    tls_role *r = p;
    uv_mutex_lock(&r->lock);
    int rc = mbedtls_ssl_ticket_write(&r->ticket, session, start, end, tlen,
                                      lifetime);
    uv_mutex_unlock(&r->lock);
    return rc;
}

static int ticket_parse(void *p, mbedtls_ssl_session *session,
                        unsigned char *buf, size_t len)
{
    tls_role *r = p;
    uv_mutex_lock(&r->lock);
    int rc = mbedtls_ssl_ticket_parse(&r->ticket, session, buf, len);
    uv_mutex_unlock(&r->lock);
    return rc;
}
#endif

/* A server issues session tickets under a key of this configuration's
 * own: a ticket resumes only where the same certificate and the same
 * client-certificate policy would have held (another option set, another
 * configuration, another key). */
static int enable_tickets(tls_role *r, const zl_tls_settings *s)
{
#if defined(ZL_TLS_TICKETS)
    /* A required client certificate that mbedTLS does not verify is
     * checked for after the handshake, when a ticket may already have
     * gone out: no tickets then, so that every connection shows one. */
    if (s->require_client_cert && !s->verify)
        return 0;
    if (mbedtls_ssl_ticket_setup(&r->ticket, zl_tls_random, NULL,
                                 MBEDTLS_CIPHER_AES_256_GCM,
                                 SESSION_LIFETIME_S) != 0)
        return -1;
    mbedtls_ssl_conf_session_tickets_cb(&r->conf, ticket_write, ticket_parse,
                                        r);
    r->tickets = true;
#else
    (void)r;
    (void)s;
#endif
    return 0;
}

static tls_role *client_role(const zl_tls_settings *s)
{
    return s ? s->role[0] : NULL;
}

bool zl_tls_session_offer(const zl_tls_settings *s, const char *peer,
                          mbedtls_ssl_context *ssl)
{
    tls_role *r = client_role(s);
    if (!r || !peer)
        return false;
    bool offered = false;
    uint64_t now = uv_hrtime();
    uv_mutex_lock(&r->lock);
    for (int i = 0; i < SESSIONS_MAX; i++) {
        tls_saved_session *e = &r->sessions[i];
        if (!e->peer || strcmp(e->peer, peer) != 0)
            continue;
        if (now - e->saved_ns < (uint64_t)SESSION_LIFETIME_S * 1000000000u)
            offered = mbedtls_ssl_set_session(ssl, &e->session) == 0;
        break;
    }
    uv_mutex_unlock(&r->lock);
    return offered;
}

void zl_tls_session_save(const zl_tls_settings *s, const char *peer,
                         const mbedtls_ssl_context *ssl)
{
    tls_role *r = client_role(s);
    if (!r || !peer)
        return;
    mbedtls_ssl_session session;
    mbedtls_ssl_session_init(&session);
    char *key = dup_or_null(peer);
    if (!key || mbedtls_ssl_get_session(ssl, &session) != 0) {
        free(key);
        mbedtls_ssl_session_free(&session);
        return;
    }
    uint64_t now = uv_hrtime();
    uv_mutex_lock(&r->lock);
    tls_saved_session *slot = &r->sessions[0];
    for (int i = 0; i < SESSIONS_MAX; i++) {
        tls_saved_session *e = &r->sessions[i];
        if (e->peer && strcmp(e->peer, peer) == 0) {
            slot = e;
            break;
        }
        if (!e->peer || (slot->peer && e->saved_ns < slot->saved_ns))
            slot = e;
    }
    free(slot->peer);
    mbedtls_ssl_session_free(&slot->session);
    slot->peer = key;
    slot->session = session; /* it owns what session pointed at */
    slot->saved_ns = now;
    uv_mutex_unlock(&r->lock);
}

static tls_role *build_role(const zl_tls_settings *s, bool server)
{
    tls_role *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    mbedtls_ssl_config_init(&r->conf);
    mbedtls_x509_crt_init(&r->own_cert);
    mbedtls_pk_init(&r->own_key);
    mbedtls_x509_crt_init(&r->ca);
    for (int i = 0; i < SESSIONS_MAX; i++)
        mbedtls_ssl_session_init(&r->sessions[i].session);
#if defined(ZL_TLS_TICKETS)
    mbedtls_ssl_ticket_init(&r->ticket);
#endif
    if (uv_mutex_init(&r->lock) != 0) {
        free(r);
        return NULL;
    }
    bool have_own = false;
    bool verify_peer = server ? s->require_client_cert && s->verify : s->verify;
    int authmode =
        !verify_peer ? MBEDTLS_SSL_VERIFY_NONE : MBEDTLS_SSL_VERIFY_REQUIRED;
    /* A server that requires a client certificate without verifying it
     * still asks for one, and the connection checks it came. */
    if (server && s->require_client_cert && !s->verify)
        authmode = MBEDTLS_SSL_VERIFY_OPTIONAL;
    if (mbedtls_ssl_config_defaults(
            &r->conf, server ? MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
            MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT) != 0 ||
        load_own(r, s, &have_own) != 0 || (server && !have_own) ||
        (verify_peer && load_trust(r, s) != 0))
        goto fail;
    /* mbedTLS's own order of suites: ChaCha20-Poly1305 first (TLS 1.3's
     * too, in 3.x), which both 2.28 and 3.6 run faster than their AES-GCM
     * even with AES-NI (bench/NOTES.md, "TLS: where the CPU goes"). */
    set_groups(r);
    set_suites(r);
#if defined(ZL_TLS_EXPORT_KEYS_228)
    mbedtls_ssl_conf_export_keys_ext_cb(&r->conf, zl_tls_export_keys, NULL);
#endif
    mbedtls_ssl_conf_rng(&r->conf, zl_tls_random, NULL);
    mbedtls_ssl_conf_authmode(&r->conf, authmode);
    /* TLS 1.2 at least; 1.3 where this mbedTLS has it. */
#if MBEDTLS_VERSION_NUMBER >= 0x03000000
    mbedtls_ssl_conf_min_tls_version(&r->conf, MBEDTLS_SSL_VERSION_TLS1_2);
#else
    mbedtls_ssl_conf_min_version(&r->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
                                 MBEDTLS_SSL_MINOR_VERSION_3);
#endif
#if defined(MBEDTLS_SSL_RENEGOTIATION)
    /* A renegotiation request closes the connection (tls_stream.c). */
    mbedtls_ssl_conf_renegotiation(&r->conf,
                                   MBEDTLS_SSL_RENEGOTIATION_DISABLED);
#endif
    if (server && enable_tickets(r, s) != 0)
        goto fail;
#if defined(MBEDTLS_SSL_TLS1_3_SIGNAL_NEW_SESSION_TICKETS_ENABLED)
    /* mbedTLS 3.6 drops a TLS 1.3 server's tickets unless asked to pass
     * them on; tls_stream.c keeps them for the next connection. */
    if (!server)
        mbedtls_ssl_conf_tls13_enable_signal_new_session_tickets(
            &r->conf, MBEDTLS_SSL_TLS1_3_SIGNAL_NEW_SESSION_TICKETS_ENABLED);
#endif
    return r;
fail:
    free_role(r);
    return NULL;
}

int zl_tls_settings_prepare(zl_tls_settings **settings, bool server)
{
    if (!*settings && !(*settings = new_settings())) {
        errno = ENOMEM;
        return -1;
    }
    zl_tls_settings *s = *settings;
    if (s->role[server])
        return 0;
    s->role[server] = build_role(s, server);
    if (!s->role[server]) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

const struct mbedtls_ssl_config *zl_tls_settings_conf(const zl_tls_settings *s,
                                                      bool server)
{
    return s && s->role[server] ? &s->role[server]->conf : NULL;
}
