/* tls_fixture.h — what the tls suites share: the certificates ctest makes
 * fresh with openssl (tests/tls/make_certs.sh into $ZLINK_TLS_CERTS), and
 * sockets, servers, clients and connected pairs that use them. */
#ifndef ZL_TLS_FIXTURE_H
#define ZL_TLS_FIXTURE_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long a socket, a wait or a raw read may block in the tls suites. */
#define TLS_WAIT_MS 5000

/* Reads $ZLINK_TLS_CERTS; false when ctest did not set it. */
bool tls_fixture_init(void);
/* The suite's main: SIGPIPE ignored (WSAStartup on Windows), the
 * certificates found (or an error naming the suite), then the suite run.
 * Returns the process exit code. */
int tls_fixture_main(const char *suite_name, Suite *suite);

/* The path of a generated file; four may be in use at once. */
const char *tls_cert(const char *name);
/* A generated file's text, NUL-terminated, for the _PEM options; free it. */
char *tls_read_cert(const char *name);
/* zlink_setsockopt of a string, failing the test if it is refused. */
void tls_set_str(void *socket, int option, const char *value);

/* A socket of type with LINGER 0 and TLS_WAIT_MS to send and receive. */
void *tls_socket(void *ctx, int type);
/* A server with chain and key files from the generated set. */
void tls_server_identity(void *socket, const char *chain, const char *key);
/* A client trusting ca that checks the name "localhost". */
void tls_client_trust(void *socket, const char *ca);
/* Binds tls://127.0.0.1:* and writes the endpoint it got. */
void tls_bind(void *socket, char *endpoint, size_t cap);

/* Monitors every event of socket on inproc://name; the PAIR that reads
 * them waits 100 ms per receive. */
void *tls_open_monitor(void *ctx, void *socket, const char *name);
/* Waits up to TLS_WAIT_MS for event want, skipping others; its value goes
 * to *value. */
bool tls_wait_event(void *monitor, int want, uint32_t *value);
/* Fails the test unless event want comes, with want_value. */
void tls_expect_event(void *monitor, int want, uint32_t want_value);

/* A server with the standard certificates and a client trusting them,
 * connected. */
typedef struct tls_pair {
    void *ctx, *server, *client;
    char endpoint[128];
} tls_pair;

void tls_pair_open(tls_pair *p, int server_type, int client_type);
void tls_pair_close(tls_pair *p);

#endif
