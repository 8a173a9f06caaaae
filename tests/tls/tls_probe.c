/* tls_probe.c — one zlink tls:// socket for tests/tls/interop.sh, where its
 * peer is openssl s_client or s_server, which speak TLS but not ZMTP. It
 * binds (printing its endpoint) or connects, then prints the monitor
 * events it sees as "event 0xEVENT 0xVALUE" for a few seconds, so the
 * script can tell a certificate refused, and why.
 *
 *   tls_probe bind|connect ENDPOINT SECONDS
 *   tls_probe features      ("tls1.3 yes" when mbedTLS has TLS 1.3)
 *   options from ZLINK_PROBE_TLS_CERT, _KEY, _CA, _HOSTNAME and
 *   ZLINK_PROBE_TLS_REQUIRE_CLIENT_CERT=1 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#include <mbedtls/ssl.h>
#include <mbedtls/version.h>

static void set_env_option(void *s, const char *name, int option)
{
    const char *value = getenv(name);
    if (value && zlink_setsockopt(s, option, value, strlen(value)) != 0) {
        fprintf(stderr, "tls_probe: %s: %s\n", name,
                zlink_strerror(zlink_errno()));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "features") == 0) {
#if defined(MBEDTLS_SSL_PROTO_TLS1_3) && MBEDTLS_VERSION_NUMBER >= 0x03020000
        printf("tls1.3 yes\n");
#else
        printf("tls1.3 no\n");
#endif
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: tls_probe bind|connect ENDPOINT SECONDS\n");
        return 1;
    }
    void *ctx = zlink_ctx_new();
    void *s = zlink_socket(ctx, ZLINK_DEALER);
    int zero = 0;
    zlink_setsockopt(s, ZLINK_LINGER, &zero, sizeof zero);
    set_env_option(s, "ZLINK_PROBE_TLS_CERT", ZLINK_TLS_CERT);
    set_env_option(s, "ZLINK_PROBE_TLS_KEY", ZLINK_TLS_KEY);
    set_env_option(s, "ZLINK_PROBE_TLS_CA", ZLINK_TLS_CA);
    set_env_option(s, "ZLINK_PROBE_TLS_HOSTNAME", ZLINK_TLS_HOSTNAME);
    const char *require = getenv("ZLINK_PROBE_TLS_REQUIRE_CLIENT_CERT");
    int on = require && strcmp(require, "1") == 0;
    zlink_setsockopt(s, ZLINK_TLS_REQUIRE_CLIENT_CERT, &on, sizeof on);
    zlink_socket_monitor(s, "inproc://probe", ZLINK_EVENT_ALL);
    void *monitor = zlink_socket(ctx, ZLINK_PAIR);
    int timeout = 100;
    zlink_setsockopt(monitor, ZLINK_RCVTIMEO, &timeout, sizeof timeout);
    zlink_setsockopt(monitor, ZLINK_LINGER, &zero, sizeof zero);
    zlink_connect(monitor, "inproc://probe");
    int rc = strcmp(argv[1], "bind") == 0 ? zlink_bind(s, argv[2])
                                          : zlink_connect(s, argv[2]);
    if (rc != 0) {
        fprintf(stderr, "tls_probe: %s %s: %s\n", argv[1], argv[2],
                zlink_strerror(zlink_errno()));
        return 1;
    }
    if (strcmp(argv[1], "bind") == 0) {
        char endpoint[256];
        size_t len = sizeof endpoint;
        zlink_getsockopt(s, ZLINK_LAST_ENDPOINT, endpoint, &len);
        printf("%s\n", endpoint);
    }
    fflush(stdout);
    /* 100 ms per empty wait. */
    for (int waits = atoi(argv[3]) * 10; waits > 0;) {
        unsigned char frame[6];
        char endpoint[256];
        if (zlink_recv(monitor, frame, sizeof frame, 0) != 6) {
            waits--;
            continue;
        }
        zlink_recv(monitor, endpoint, sizeof endpoint, 0);
        unsigned short event;
        unsigned int value;
        memcpy(&event, frame, 2);
        memcpy(&value, frame + 2, 4);
        printf("event 0x%x 0x%x\n", event, value);
        fflush(stdout);
    }
    zlink_close(monitor);
    zlink_close(s);
    zlink_ctx_term(ctx);
    return 0;
}
