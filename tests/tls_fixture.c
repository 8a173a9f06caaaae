/* tls_fixture.c — the tls suites' certificates, sockets and pairs (see
 * tls_fixture.h). */
#include "tls_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#include "raw_socket.h"
#include "testutil.h"

static char certs_dir[512];

bool tls_fixture_init(void)
{
    const char *dir = getenv("ZLINK_TLS_CERTS");
    if (!dir)
        return false;
    snprintf(certs_dir, sizeof certs_dir, "%s", dir);
    return true;
}

int tls_fixture_main(const char *suite_name, Suite *suite)
{
    raw_sockets_init();
    if (!tls_fixture_init()) {
        fprintf(stderr,
                "%s: ZLINK_TLS_CERTS is not set (ctest sets it after "
                "tests/tls/make_certs.sh)\n",
                suite_name);
        return 1;
    }
    return zl_test_run(suite);
}

const char *tls_cert(const char *name)
{
    static char paths[4][600];
    static int next;
    char *p = paths[next++ % 4];
    snprintf(p, 600, "%s/%s", certs_dir, name);
    return p;
}

char *tls_read_cert(const char *name)
{
    const char *path = tls_cert(name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *copy = malloc(n + 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, buf, n + 1);
    return copy;
}

void tls_set_str(void *socket, int option, const char *value)
{
    ck_assert_int_eq(zlink_setsockopt(socket, option, value, strlen(value)), 0);
}

void *tls_socket(void *ctx, int type)
{
    void *s = zlink_socket(ctx, type);
    ck_assert_ptr_nonnull(s);
    zl_test_set_int(s, ZLINK_LINGER, 0);
    zl_test_set_int(s, ZLINK_RCVTIMEO, TLS_WAIT_MS);
    zl_test_set_int(s, ZLINK_SNDTIMEO, TLS_WAIT_MS);
    return s;
}

void tls_server_identity(void *socket, const char *chain, const char *key)
{
    tls_set_str(socket, ZLINK_TLS_CERT, tls_cert(chain));
    tls_set_str(socket, ZLINK_TLS_KEY, tls_cert(key));
}

void tls_client_trust(void *socket, const char *ca)
{
    tls_set_str(socket, ZLINK_TLS_CA, tls_cert(ca));
    tls_set_str(socket, ZLINK_TLS_HOSTNAME, "localhost");
}

void tls_bind(void *socket, char *endpoint, size_t cap)
{
    ck_assert_int_eq(zlink_bind(socket, "tls://127.0.0.1:*"), 0);
    size_t len = cap;
    ck_assert_int_eq(
        zlink_getsockopt(socket, ZLINK_LAST_ENDPOINT, endpoint, &len), 0);
    ck_assert_msg(strncmp(endpoint, "tls://127.0.0.1:", 16) == 0,
                  "LAST_ENDPOINT %s", endpoint);
}

void *tls_open_monitor(void *ctx, void *socket, const char *name)
{
    void *m = zl_test_monitor_open(ctx, socket, name, ZLINK_EVENT_ALL);
    zl_test_set_int(m, ZLINK_RCVTIMEO, 100);
    return m;
}

bool tls_wait_event(void *monitor, int want, uint32_t *value)
{
    return zl_test_wait_event_value(monitor, want, value, TLS_WAIT_MS);
}

void tls_expect_event(void *monitor, int want, uint32_t want_value)
{
    uint32_t value = 0;
    ck_assert_msg(tls_wait_event(monitor, want, &value),
                  "event 0x%x (value 0x%x) never came", want, want_value);
    ck_assert_msg(value == want_value, "event 0x%x: value 0x%x, want 0x%x",
                  want, value, want_value);
}

void tls_pair_open(tls_pair *p, int server_type, int client_type)
{
    p->ctx = zlink_ctx_new();
    ck_assert_ptr_nonnull(p->ctx);
    p->server = tls_socket(p->ctx, server_type);
    p->client = tls_socket(p->ctx, client_type);
    tls_server_identity(p->server, "server-chain.pem", "server.key");
    tls_client_trust(p->client, "root.pem");
    tls_bind(p->server, p->endpoint, sizeof p->endpoint);
    ck_assert_int_eq(zlink_connect(p->client, p->endpoint), 0);
}

void tls_pair_close(tls_pair *p)
{
    zlink_close(p->client);
    zlink_close(p->server);
    zlink_ctx_term(p->ctx);
}
