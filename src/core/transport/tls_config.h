/* tls_config.h — a socket's TLS settings (the ZLINK_TLS_* options) and the
 * mbedTLS configuration built from them once, on the application thread,
 * then shared read-only by every connection made with them. */
#ifndef ZL_TLS_CONFIG_H
#define ZL_TLS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

typedef struct zl_tls_settings zl_tls_settings;
struct mbedtls_ssl_config;
struct mbedtls_ssl_context;

/* Sets one ZLINK_TLS_* option. *settings may be NULL (nothing set yet) or
 * shared with sessions, which keep what they were made with: a shared
 * object is copied before it changes. -1 with errno EINVAL or ENOMEM. */
int zl_tls_option_set(zl_tls_settings **settings, int option, const void *val,
                      size_t len);
/* Strings as libzmq returns them: with their NUL, "" when unset. */
int zl_tls_option_get(const zl_tls_settings *settings, int option, void *val,
                      size_t *len);
bool zl_tls_is_option(int option);

/* Another reference (NULL stays NULL); the last unref frees. */
zl_tls_settings *zl_tls_settings_ref(zl_tls_settings *settings);
void zl_tls_settings_unref(zl_tls_settings *settings);

/* Builds the client or server configuration unless it is built already:
 * certificates, keys and CAs are read and parsed here, so that bind and
 * connect report what is wrong with them (EINVAL), and connections only
 * share the result. Application thread only. */
int zl_tls_settings_prepare(zl_tls_settings **settings, bool server);
/* The configuration prepare built; NULL if it was not. */
const struct mbedtls_ssl_config *
zl_tls_settings_conf(const zl_tls_settings *settings, bool server);
/* ZLINK_TLS_HOSTNAME, or NULL for the endpoint's host. */
const char *zl_tls_settings_hostname(const zl_tls_settings *settings);
/* The options a connection checks itself after its handshake. */
bool zl_tls_settings_verify(const zl_tls_settings *settings);
bool zl_tls_settings_require_client_cert(const zl_tls_settings *settings);

/* Session resumption, client side. peer names the server as the client
 * checked it (the name it verified and the endpoint): a session is only
 * offered again to the same peer, with the same settings (a changed option
 * makes new settings, which start with no sessions), and within the
 * servers' ticket lifetime. offer puts the kept session into ssl before
 * its handshake (true when it did); save keeps the session of a finished
 * handshake. Any thread. */
bool zl_tls_session_offer(const zl_tls_settings *settings, const char *peer,
                          struct mbedtls_ssl_context *ssl);
void zl_tls_session_save(const zl_tls_settings *settings, const char *peer,
                         const struct mbedtls_ssl_context *ssl);

#endif
