/* options.h — a socket's options with libzmq's defaults; sessions take a
 * copy when they are created, as libzmq does. */
#ifndef ZL_OPTIONS_H
#define ZL_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "pipe.h"

typedef struct zl_options {
    int type;
    int sndhwm, rcvhwm;
    int linger;
    int sndtimeo, rcvtimeo;
    int reconnect_ivl, reconnect_ivl_max;
    int backlog;
    int handshake_ivl;
    int heartbeat_ivl, heartbeat_ttl, heartbeat_timeout;
    int sndbuf, rcvbuf;
    int64_t maxmsgsize;
    int maxmsgparts;     /* -1: no limit */
    int connect_timeout; /* ZLINK_CONNECT_TIMEOUT ms; 0: the OS's own */
    int use_fd;          /* ZLINK_USE_FD: a listening socket binds take; -1 */
    zl_tcp_opts tcp;     /* transport/tcp_options.c */
    bool ipv6;
    bool immediate;
    bool router_mandatory;
    bool probe_router;    /* write-only, as libzmq */
    bool conflate;        /* see zl_options_conflates */
    bool invert_matching; /* PUB, XPUB, SUB */
    bool stream_notify;   /* STREAM: announce connections and their ends */
    /* NULL while unset, as they usually are: every session keeps a copy of
     * its socket's options, and ten thousand connections would otherwise
     * each carry two 256-byte ids. */
    zl_blob *routing_id;         /* ZLINK_ROUTING_ID: what we announce */
    zl_blob *connect_routing_id; /* consumed by the next connect */
    char *ws_allowed_origins;    /* ZLINK_WS_ALLOWED_ORIGINS; NULL: all */
    /* ZLINK_MECHANISM: ZLINK_PLAIN once a PLAIN credential is set (zlink
     * offers PLAIN's client side only). NULL while unset. */
    int mechanism;
    bool plain_server; /* ZLINK_PLAIN_SERVER: the server's side of it */
    bool curve_server; /* ZLINK_CURVE_SERVER */
    /* ZLINK_CURVE_*KEY, binary; zeros while unset, as in libzmq. */
    uint8_t curve_public_key[32], curve_secret_key[32], curve_server_key[32];
    zl_blob *plain_username, *plain_password;
    char *zap_domain;        /* ZLINK_ZAP_DOMAIN; NULL: "" */
    bool zap_enforce_domain; /* ZLINK_ZAP_ENFORCE_DOMAIN */
    /* ZLINK_TLS_*: NULL until one is set or a tls endpoint is used;
     * shared, refcounted, by the sessions made with it (tls_config.h). */
    struct zl_tls_settings *tls;
    /* ZLINK_TCP_ACCEPT_FILTER, ZLINK_IPC_FILTER_*: NULL while none is set
     * (transport/accept_filter.h). */
    struct zl_accept_filters *accept_filters;
    /* ZLINK_RATE, _RECOVERY_IVL, _MULTICAST_HOPS, _MULTICAST_MAXTPDU:
     * libzmq's multicast settings, kept and read back for code written for
     * libzmq; no transport zlink has uses them. */
    int rate, recovery_ivl, multicast_hops, multicast_maxtpdu;
    /* ZLINK_AFFINITY: the I/O threads (bit i: thread i) that may serve the
     * socket's connections; 0: any. */
    uint64_t affinity;
    /* ZLINK_SOCKS_PROXY, _USERNAME and _PASSWORD; NULL while unset (""). */
    char *socks_proxy, *socks_username, *socks_password;
} zl_options;

/* The longest ZLINK_WS_ALLOWED_ORIGINS list, NUL excluded. */
#define ZL_WS_ORIGINS_MAX 4096

void zl_options_init(zl_options *o, int type);
/* dst becomes a copy of src, ids included. -1 with ENOMEM (dst then holds
 * nothing to destroy). */
int zl_options_copy(zl_options *dst, const zl_options *src);
/* Frees what o holds. */
void zl_options_destroy(zl_options *o);
/* Forgets CONNECT_ROUTING_ID, which applies to one connect only. */
void zl_options_consume_connect_id(zl_options *o);
/* Generic options. Returns 0, or -1 with errno EINVAL (bad value) or
 * ENOTSUP when the option is not a generic one (the pattern may know it). */
int zl_options_set(zl_options *o, int option, const void *val, size_t len);
int zl_options_get(const zl_options *o, int option, void *val, size_t *len);

/* CONFLATE set on a type libzmq applies it to (DEALER, PULL, PUSH, PUB,
 * SUB); elsewhere it is accepted and has no effect, as in libzmq. */
bool zl_options_conflates(const zl_options *o);

/* CONFLATE on a type whose outbound messages are data: PUB, PUSH, DEALER
 * (a SUB's are its subscriptions, which must all go). */
bool zl_options_conflates_out(const zl_options *o);

/* PROBE_ROUTER set on a type that sends the probe (DEALER, ROUTER, REQ). */
bool zl_options_probes_router(const zl_options *o);

/* Reads an int option value, checking its length. */
int zl_option_int(const void *val, size_t len, int *out);
/* Writes an int result, checking the caller's buffer. */
int zl_option_put_int(void *val, size_t *len, int value);

#endif
