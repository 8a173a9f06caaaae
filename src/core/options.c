/* options.c — generic socket options: libzmq's names, values and defaults. */
#include "options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "string_option.h"
#include "transport/accept_filter.h"
#include "transport/tcp_options.h"
#include "zlink.h"
#if defined(ZLINK_HAVE_TLS)
#include "transport/tls_config.h"
#endif

void zl_options_init(zl_options *o, int type)
{
    memset(o, 0, sizeof *o);
    o->type = type;
    o->sndhwm = 1000;
    o->rcvhwm = 1000;
    o->linger = -1;
    o->sndtimeo = -1;
    o->rcvtimeo = -1;
    o->reconnect_ivl = 100;
    o->reconnect_ivl_max = 0;
    /* libzmq's 100 overflows when a thousand clients connect at once, and
     * every dropped SYN then waits a second to be retried; the system caps
     * this at its own limit (somaxconn). */
    o->backlog = ZLINK_BACKLOG_DFLT;
    o->handshake_ivl = 30000;
    o->heartbeat_ttl = 0;
    o->heartbeat_timeout = -1;
    o->sndbuf = -1;
    o->rcvbuf = -1;
    o->maxmsgsize = -1;
    o->maxmsgparts = ZLINK_MAXMSGPARTS_DFLT;
    o->stream_notify = true;
    o->use_fd = -1;
    o->rate = 100;
    o->recovery_ivl = 10000;
    o->multicast_hops = 1;
    o->multicast_maxtpdu = 1500;
    zl_tcp_opts_init(&o->tcp);
}

int zl_option_int(const void *val, size_t len, int *out)
{
    if (!val || len != sizeof(int)) {
        errno = EINVAL;
        return -1;
    }
    memcpy(out, val, sizeof(int));
    return 0;
}

int zl_option_put_int(void *val, size_t *len, int value)
{
    if (!val || !len || *len < sizeof(int)) {
        errno = EINVAL;
        return -1;
    }
    /* A larger buffer: the rest zeroed and the length set, as libzmq's
     * do_getsockopt (which its option table refuses, EINVAL, for all but
     * RCVMORE, EVENTS and THREAD_SAFE; zlink accepts it for every int). */
    memcpy(val, &value, sizeof(int));
    memset((char *)val + sizeof(int), 0, *len - sizeof(int));
    *len = sizeof(int);
    return 0;
}

bool zl_options_conflates(const zl_options *o)
{
    return o->conflate && (o->type == ZLINK_DEALER || o->type == ZLINK_PULL ||
                           o->type == ZLINK_PUSH || o->type == ZLINK_PUB ||
                           o->type == ZLINK_SUB);
}

bool zl_options_conflates_out(const zl_options *o)
{
    return zl_options_conflates(o) && o->type != ZLINK_SUB;
}

bool zl_options_probes_router(const zl_options *o)
{
    return o->probe_router && (o->type == ZLINK_DEALER ||
                               o->type == ZLINK_ROUTER || o->type == ZLINK_REQ);
}

static int set_blob(zl_blob **blob, const void *val, size_t len)
{
    /* Any binary string of 1 to 255 bytes, as libzmq 4.3 (which, unlike
     * 4.1, no longer refuses a leading zero byte). */
    if (!val || len == 0 || len > 255) {
        errno = EINVAL;
        return -1;
    }
    if (!*blob && !(*blob = malloc(sizeof **blob))) {
        errno = ENOMEM;
        return -1;
    }
    (*blob)->len = (uint8_t)len;
    memcpy((*blob)->data, val, len);
    return 0;
}

/* A copy of src in *dst (NULL for none); -1 when out of memory. */
static int copy_blob(zl_blob **dst, const zl_blob *src)
{
    *dst = src ? malloc(sizeof **dst) : NULL;
    if (src && !*dst)
        return -1;
    if (src)
        **dst = *src;
    return 0;
}

/* ZLINK_PLAIN_USERNAME and _PASSWORD, as libzmq takes them: 1 to 255 bytes
 * make the socket a PLAIN client, and a NULL value of length 0 goes back to
 * the NULL mechanism, keeping what was set. */
static int set_plain_credential(zl_options *o, zl_blob **field, const void *val,
                                size_t len)
{
    if (!val && len == 0) {
        o->mechanism = ZLINK_NULL;
        return 0;
    }
    if (set_blob(field, val, len) != 0)
        return -1;
    o->mechanism = ZLINK_PLAIN;
    o->plain_server = false;
    return 0;
}

#if defined(ZLINK_HAVE_CURVE)
/* A CURVE key as libzmq takes it: 32 bytes, or 40 Z85 characters with or
 * without a NUL. Setting one makes the socket use CURVE. */
static int set_curve_key(zl_options *o, uint8_t key[32], const void *val,
                         size_t len)
{
    char z85[41];
    uint8_t decoded[32];
    if (val && len == 32) {
        memcpy(key, val, 32);
    } else if (val &&
               (len == 40 || (len == 41 && ((const char *)val)[40] == '\0'))) {
        memcpy(z85, val, 40);
        z85[40] = '\0';
        if (!zlink_z85_decode(decoded, z85))
            return -1;
        memcpy(key, decoded, 32);
    } else {
        errno = EINVAL;
        return -1;
    }
    o->mechanism = ZLINK_CURVE;
    return 0;
}

/* Read back as 32 bytes, or as Z85 into 41. */
static int put_curve_key(void *val, size_t *len, const uint8_t key[32])
{
    if (val && len && *len == 32) {
        memcpy(val, key, 32);
        return 0;
    }
    if (val && len && *len == 41) {
        zlink_z85_encode(val, key, 32);
        return 0;
    }
    errno = EINVAL;
    return -1;
}
#endif

/* A string option read back with its NUL; NULL reads as "". */
static int put_string(void *val, size_t *len, const char *s)
{
    const char *v = s ? s : "";
    size_t need = strlen(v) + 1;
    if (!val || !len || *len < need) {
        errno = EINVAL;
        return -1;
    }
    memcpy(val, v, need);
    *len = need;
    return 0;
}

/* A binary string option read back as libzmq does: with a NUL after it. */
static int put_blob_string(void *val, size_t *len, const zl_blob *blob)
{
    size_t have = blob ? blob->len : 0;
    if (!val || !len || *len < have + 1) {
        errno = EINVAL;
        return -1;
    }
    if (have)
        memcpy(val, blob->data, have);
    ((char *)val)[have] = '\0';
    *len = have + 1;
    return 0;
}

/* A copy of src in *dst (NULL for none); -1 when out of memory. */
static int copy_string(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? -1 : 0;
}

int zl_options_copy(zl_options *dst, const zl_options *src)
{
    *dst = *src;
    /* Until copied, dst must not share src's ids: a failure below frees
     * what dst holds. */
    dst->routing_id = dst->connect_routing_id = NULL;
    dst->plain_username = dst->plain_password = NULL;
    dst->zap_domain = NULL;
    dst->ws_allowed_origins = NULL;
    dst->accept_filters = NULL;
    dst->socks_proxy = dst->socks_username = dst->socks_password = NULL;
#if defined(ZLINK_HAVE_TLS)
    dst->tls = zl_tls_settings_ref(src->tls);
#endif
    if (copy_blob(&dst->routing_id, src->routing_id) != 0 ||
        copy_blob(&dst->connect_routing_id, src->connect_routing_id) != 0 ||
        copy_blob(&dst->plain_username, src->plain_username) != 0 ||
        copy_blob(&dst->plain_password, src->plain_password) != 0 ||
        (src->zap_domain && !(dst->zap_domain = strdup(src->zap_domain))) ||
        (src->ws_allowed_origins &&
         !(dst->ws_allowed_origins = strdup(src->ws_allowed_origins))) ||
        zl_accept_filters_copy(&dst->accept_filters, src->accept_filters) !=
            0 ||
        copy_string(&dst->socks_proxy, src->socks_proxy) != 0 ||
        copy_string(&dst->socks_username, src->socks_username) != 0 ||
        copy_string(&dst->socks_password, src->socks_password) != 0) {
        zl_options_destroy(dst);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void zl_options_destroy(zl_options *o)
{
    free(o->routing_id);
    o->routing_id = NULL;
    free(o->plain_username);
    free(o->plain_password);
    o->plain_username = o->plain_password = NULL;
    free(o->zap_domain);
    o->zap_domain = NULL;
    free(o->ws_allowed_origins);
    o->ws_allowed_origins = NULL;
    zl_accept_filters_free(o->accept_filters);
    o->accept_filters = NULL;
    free(o->socks_proxy);
    free(o->socks_username);
    free(o->socks_password);
    o->socks_proxy = o->socks_username = o->socks_password = NULL;
#if defined(ZLINK_HAVE_TLS)
    zl_tls_settings_unref(o->tls);
    o->tls = NULL;
#endif
    zl_options_consume_connect_id(o);
}

void zl_options_consume_connect_id(zl_options *o)
{
    free(o->connect_routing_id);
    o->connect_routing_id = NULL;
}

static int set_int_at_least(int *field, const void *val, size_t len, int min)
{
    int v = 0;
    if (zl_option_int(val, len, &v) != 0)
        return -1;
    if (v < min) {
        errno = EINVAL;
        return -1;
    }
    *field = v;
    return 0;
}

static int set_bool(bool *field, const void *val, size_t len)
{
    int v = 0;
    if (zl_option_int(val, len, &v) != 0)
        return -1;
    if (v != 0 && v != 1) {
        errno = EINVAL;
        return -1;
    }
    *field = v != 0;
    return 0;
}

int zl_options_set(zl_options *o, int option, const void *val, size_t len)
{
    switch (option) {
    case ZLINK_SNDHWM:
        return set_int_at_least(&o->sndhwm, val, len, 0);
    case ZLINK_RCVHWM:
        return set_int_at_least(&o->rcvhwm, val, len, 0);
    case ZLINK_LINGER:
        return set_int_at_least(&o->linger, val, len, -1);
    case ZLINK_SNDTIMEO:
        return set_int_at_least(&o->sndtimeo, val, len, -1);
    case ZLINK_RCVTIMEO:
        return set_int_at_least(&o->rcvtimeo, val, len, -1);
    case ZLINK_RECONNECT_IVL:
        return set_int_at_least(&o->reconnect_ivl, val, len, -1);
    case ZLINK_RECONNECT_IVL_MAX:
        return set_int_at_least(&o->reconnect_ivl_max, val, len, 0);
    case ZLINK_BACKLOG:
        return set_int_at_least(&o->backlog, val, len, 0);
    case ZLINK_HANDSHAKE_IVL:
        return set_int_at_least(&o->handshake_ivl, val, len, 0);
    case ZLINK_HEARTBEAT_IVL:
        return set_int_at_least(&o->heartbeat_ivl, val, len, 0);
    case ZLINK_HEARTBEAT_TIMEOUT:
        /* -1 is only the default ("HEARTBEAT_IVL"); libzmq refuses it. */
        return set_int_at_least(&o->heartbeat_timeout, val, len, 0);
    case ZLINK_HEARTBEAT_TTL: {
        int v = 0;
        if (zl_option_int(val, len, &v) != 0)
            return -1;
        /* Sent in deciseconds in a 16-bit field, and kept so: libzmq reads
         * 250 back as 200, and takes -1 to -99 as 0. */
        if (v <= -100 || v > 6553599) {
            errno = EINVAL;
            return -1;
        }
        o->heartbeat_ttl = v - v % 100;
        return 0;
    }
    case ZLINK_SNDBUF:
        return set_int_at_least(&o->sndbuf, val, len, -1);
    case ZLINK_RCVBUF:
        return set_int_at_least(&o->rcvbuf, val, len, -1);
    case ZLINK_MAXMSGSIZE: {
        int64_t v;
        if (!val || len != sizeof v) {
            errno = EINVAL;
            return -1;
        }
        memcpy(&v, val, sizeof v);
        if (v < -1) {
            errno = EINVAL;
            return -1;
        }
        o->maxmsgsize = v;
        return 0;
    }
    case ZLINK_MAXMSGPARTS: {
        /* A message has at least one part: 0 would refuse them all. */
        int v = 0;
        if (zl_option_int(val, len, &v) != 0)
            return -1;
        if (v == 0 || v < -1) {
            errno = EINVAL;
            return -1;
        }
        o->maxmsgparts = v;
        return 0;
    }
    case ZLINK_IPV6:
        return set_bool(&o->ipv6, val, len);
    case ZLINK_IPV4ONLY: {
        /* libzmq's deprecated inverse of IPV6. */
        bool v4only;
        if (set_bool(&v4only, val, len) != 0)
            return -1;
        o->ipv6 = !v4only;
        return 0;
    }
    case ZLINK_USE_FD:
        return set_int_at_least(&o->use_fd, val, len, -1);
    case ZLINK_RATE:
        return set_int_at_least(&o->rate, val, len, 1);
    case ZLINK_RECOVERY_IVL:
        return set_int_at_least(&o->recovery_ivl, val, len, 0);
    case ZLINK_MULTICAST_HOPS:
        return set_int_at_least(&o->multicast_hops, val, len, 1);
    case ZLINK_MULTICAST_MAXTPDU:
        return set_int_at_least(&o->multicast_maxtpdu, val, len, 1);
    case ZLINK_AFFINITY:
        if (!val || len != sizeof o->affinity) {
            errno = EINVAL;
            return -1;
        }
        memcpy(&o->affinity, val, sizeof o->affinity);
        return 0;
    case ZLINK_TCP_ACCEPT_FILTER:
        return zl_accept_filters_add_tcp(&o->accept_filters, val, len, o->ipv6);
    case ZLINK_IPC_FILTER_UID:
    case ZLINK_IPC_FILTER_GID:
    case ZLINK_IPC_FILTER_PID:
        return zl_accept_filters_add_ipc(&o->accept_filters, option, val, len);
    case ZLINK_IMMEDIATE:
        return set_bool(&o->immediate, val, len);
    case ZLINK_PROBE_ROUTER:
        return set_bool(&o->probe_router, val, len);
    case ZLINK_CONFLATE:
        return set_bool(&o->conflate, val, len);
    case ZLINK_INVERT_MATCHING:
        return set_bool(&o->invert_matching, val, len);
    case ZLINK_ROUTER_MANDATORY: {
        /* A ROUTER's option, as in libzmq: EINVAL on other types, and any
         * value >= 0 (non-zero: on). */
        int v = 0;
        if (zl_option_int(val, len, &v) != 0)
            return -1;
        if (o->type != ZLINK_ROUTER || v < 0) {
            errno = EINVAL;
            return -1;
        }
        o->router_mandatory = v != 0;
        return 0;
    }
    case ZLINK_STREAM_NOTIFY: {
        /* A STREAM's option, 0 or 1 only, as in libzmq. */
        int v = 0;
        if (zl_option_int(val, len, &v) != 0)
            return -1;
        if (o->type != ZLINK_STREAM || (v != 0 && v != 1)) {
            errno = EINVAL;
            return -1;
        }
        o->stream_notify = v == 1;
        return 0;
    }
    case ZLINK_ROUTING_ID:
        return set_blob(&o->routing_id, val, len);
    case ZLINK_CONNECT_ROUTING_ID:
        /* The option of the types that route by id, as in libzmq: EINVAL
         * on others. */
        if (o->type != ZLINK_ROUTER && o->type != ZLINK_STREAM) {
            errno = EINVAL;
            return -1;
        }
        return set_blob(&o->connect_routing_id, val, len);
    case ZLINK_PLAIN_USERNAME:
        return set_plain_credential(o, &o->plain_username, val, len);
    case ZLINK_PLAIN_PASSWORD:
        return set_plain_credential(o, &o->plain_password, val, len);
    case ZLINK_PLAIN_SERVER: {
        /* 1 authenticates peers through the ZAP handler; 0 goes back to the
         * NULL mechanism, as in libzmq. */
        int v;
        if (zl_option_int(val, len, &v) != 0)
            return -1;
        if (v != 0 && v != 1) {
            errno = EINVAL;
            return -1;
        }
        o->plain_server = v == 1;
        o->mechanism = v == 1 ? ZLINK_PLAIN : ZLINK_NULL;
        return 0;
    }
#if defined(ZLINK_HAVE_CURVE)
    case ZLINK_CURVE_SERVER: {
        int v;
        if (zl_option_int(val, len, &v) != 0)
            return -1;
        if (v != 0 && v != 1) {
            errno = EINVAL;
            return -1;
        }
        o->curve_server = v == 1;
        o->mechanism = v == 1 ? ZLINK_CURVE : ZLINK_NULL;
        return 0;
    }
    case ZLINK_CURVE_PUBLICKEY:
        return set_curve_key(o, o->curve_public_key, val, len);
    case ZLINK_CURVE_SECRETKEY:
        return set_curve_key(o, o->curve_secret_key, val, len);
    case ZLINK_CURVE_SERVERKEY:
        /* A server's key makes this socket its client, as in libzmq. */
        if (set_curve_key(o, o->curve_server_key, val, len) != 0)
            return -1;
        o->curve_server = false;
        return 0;
#endif
    case ZLINK_ZAP_DOMAIN:
        return zl_string_option_set(&o->zap_domain, val, len, 255);
    case ZLINK_ZAP_ENFORCE_DOMAIN:
        return set_bool(&o->zap_enforce_domain, val, len);
    case ZLINK_WS_ALLOWED_ORIGINS:
        return zl_string_option_set(&o->ws_allowed_origins, val, len,
                                    ZL_WS_ORIGINS_MAX);
    /* SOCKS5: zlink_connect checks the proxy's address. */
    case ZLINK_SOCKS_PROXY:
        return zl_string_option_set(&o->socks_proxy, val, len,
                                    ZL_STRING_OPTION_UNBOUNDED);
    case ZLINK_SOCKS_USERNAME:
        return zl_string_option_set(&o->socks_username, val, len, 255);
    case ZLINK_SOCKS_PASSWORD:
        return zl_string_option_set(&o->socks_password, val, len, 255);
    default:
        if (zl_tcp_is_option(option))
            return zl_tcp_option_set(o, option, val, len);
#if defined(ZLINK_HAVE_TLS)
        if (zl_tls_is_option(option))
            return zl_tls_option_set(&o->tls, option, val, len);
#endif
        errno = ENOTSUP;
        return -1;
    }
}

int zl_options_get(const zl_options *o, int option, void *val, size_t *len)
{
    switch (option) {
    case ZLINK_TYPE:
        return zl_option_put_int(val, len, o->type);
    case ZLINK_MECHANISM:
        return zl_option_put_int(val, len, o->mechanism);
    case ZLINK_PLAIN_SERVER:
        return zl_option_put_int(
            val, len, o->plain_server && o->mechanism == ZLINK_PLAIN);
#if defined(ZLINK_HAVE_CURVE)
    case ZLINK_CURVE_SERVER:
        return zl_option_put_int(
            val, len, o->curve_server && o->mechanism == ZLINK_CURVE);
    case ZLINK_CURVE_PUBLICKEY:
        return put_curve_key(val, len, o->curve_public_key);
    case ZLINK_CURVE_SECRETKEY:
        return put_curve_key(val, len, o->curve_secret_key);
    case ZLINK_CURVE_SERVERKEY:
        return put_curve_key(val, len, o->curve_server_key);
#endif
    case ZLINK_ZAP_DOMAIN:
        return put_string(val, len, o->zap_domain);
    case ZLINK_ZAP_ENFORCE_DOMAIN:
        return zl_option_put_int(val, len, o->zap_enforce_domain);
    case ZLINK_PLAIN_USERNAME:
        return put_blob_string(val, len, o->plain_username);
    case ZLINK_PLAIN_PASSWORD:
        return put_blob_string(val, len, o->plain_password);
    case ZLINK_THREAD_SAFE:
        return zl_option_put_int(val, len, 0);
    case ZLINK_SNDHWM:
        return zl_option_put_int(val, len, o->sndhwm);
    case ZLINK_RCVHWM:
        return zl_option_put_int(val, len, o->rcvhwm);
    case ZLINK_LINGER:
        return zl_option_put_int(val, len, o->linger);
    case ZLINK_SNDTIMEO:
        return zl_option_put_int(val, len, o->sndtimeo);
    case ZLINK_RCVTIMEO:
        return zl_option_put_int(val, len, o->rcvtimeo);
    case ZLINK_RECONNECT_IVL:
        return zl_option_put_int(val, len, o->reconnect_ivl);
    case ZLINK_RECONNECT_IVL_MAX:
        return zl_option_put_int(val, len, o->reconnect_ivl_max);
    case ZLINK_BACKLOG:
        return zl_option_put_int(val, len, o->backlog);
    case ZLINK_HANDSHAKE_IVL:
        return zl_option_put_int(val, len, o->handshake_ivl);
    case ZLINK_HEARTBEAT_IVL:
        return zl_option_put_int(val, len, o->heartbeat_ivl);
    case ZLINK_HEARTBEAT_TTL:
        return zl_option_put_int(val, len, o->heartbeat_ttl);
    case ZLINK_HEARTBEAT_TIMEOUT:
        return zl_option_put_int(val, len, o->heartbeat_timeout);
    case ZLINK_SNDBUF:
        return zl_option_put_int(val, len, o->sndbuf);
    case ZLINK_RCVBUF:
        return zl_option_put_int(val, len, o->rcvbuf);
    case ZLINK_IPV6:
        return zl_option_put_int(val, len, o->ipv6);
    case ZLINK_IPV4ONLY:
        return zl_option_put_int(val, len, !o->ipv6);
    case ZLINK_USE_FD:
        return zl_option_put_int(val, len, o->use_fd);
    case ZLINK_RATE:
        return zl_option_put_int(val, len, o->rate);
    case ZLINK_RECOVERY_IVL:
        return zl_option_put_int(val, len, o->recovery_ivl);
    case ZLINK_MULTICAST_HOPS:
        return zl_option_put_int(val, len, o->multicast_hops);
    case ZLINK_MULTICAST_MAXTPDU:
        return zl_option_put_int(val, len, o->multicast_maxtpdu);
    case ZLINK_AFFINITY:
        if (!val || !len || *len != sizeof o->affinity) {
            errno = EINVAL;
            return -1;
        }
        memcpy(val, &o->affinity, sizeof o->affinity);
        return 0;
    case ZLINK_MAXMSGPARTS:
        return zl_option_put_int(val, len, o->maxmsgparts);
    case ZLINK_IMMEDIATE:
        return zl_option_put_int(val, len, o->immediate);
    case ZLINK_CONFLATE:
        return zl_option_put_int(val, len, o->conflate);
    case ZLINK_INVERT_MATCHING:
        return zl_option_put_int(val, len, o->invert_matching);
    case ZLINK_ROUTER_MANDATORY:
        return zl_option_put_int(val, len, o->router_mandatory);
    case ZLINK_STREAM_NOTIFY:
        if (o->type != ZLINK_STREAM) {
            errno = EINVAL;
            return -1;
        }
        return zl_option_put_int(val, len, o->stream_notify);
    case ZLINK_MAXMSGSIZE:
        if (!val || !len || *len < sizeof(int64_t)) {
            errno = EINVAL;
            return -1;
        }
        memcpy(val, &o->maxmsgsize, sizeof(int64_t));
        *len = sizeof(int64_t);
        return 0;
    case ZLINK_ROUTING_ID: {
        size_t have = o->routing_id ? o->routing_id->len : 0;
        if (!val || !len || *len < have) {
            errno = EINVAL;
            return -1;
        }
        if (have > 0)
            memcpy(val, o->routing_id->data, have);
        *len = have;
        return 0;
    }
    case ZLINK_WS_ALLOWED_ORIGINS:
        return put_string(val, len, o->ws_allowed_origins);
    case ZLINK_SOCKS_PROXY:
        return put_string(val, len, o->socks_proxy);
    case ZLINK_SOCKS_USERNAME:
        return put_string(val, len, o->socks_username);
    case ZLINK_SOCKS_PASSWORD:
        return put_string(val, len, o->socks_password);
    default:
        if (zl_tcp_is_option(option))
            return zl_tcp_option_get(o, option, val, len);
#if defined(ZLINK_HAVE_TLS)
        if (zl_tls_is_option(option))
            return zl_tls_option_get(o->tls, option, val, len);
#endif
        errno = ENOTSUP;
        return -1;
    }
}
