/* tls_server.c — a ROUTER that answers requests over tls://, with its
 * certificate and key from PEM files (examples/tls_demo.sh makes a CA and
 * both with the openssl CLI, then runs this and tls_client).
 *
 *   tls_server CERT KEY [ENDPOINT] [REQUESTS]
 *
 * ENDPOINT defaults to tls://127.0.0.1:* (a free port); the server prints
 * "listening on tls://HOST:PORT" once bound, answers REQUESTS requests
 * (default 3) and exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

/* A client that never comes ends the server after this long. */
#define TIMEOUT_MS 30000

static int fail(const char *what)
{
    fprintf(stderr, "tls_server: %s: %s\n", what,
            zlink_strerror(zlink_errno()));
    return 1;
}

static int set_string(void *socket, int option, const char *value)
{
    return zlink_setsockopt(socket, option, value, strlen(value));
}

/* Receives [routing id, request] and sends [routing id, reply]. */
static int answer(void *router)
{
    char id[256], request[128], reply[192];
    int id_len = zlink_recv(router, id, sizeof id, 0);
    int n =
        id_len < 0 ? -1 : zlink_recv(router, request, sizeof request - 1, 0);
    if (n < 0)
        return fail("zlink_recv");
    if (id_len > (int)sizeof id || n >= (int)sizeof request) {
        fprintf(stderr, "tls_server: message too long\n");
        return 1;
    }
    request[n] = '\0';
    printf("tls_server got: %s\n", request);
    int len = snprintf(reply, sizeof reply, "%s: received over TLS", request);
    if (zlink_send(router, id, (size_t)id_len, ZLINK_SNDMORE) < 0 ||
        zlink_send(router, reply, (size_t)len, 0) < 0)
        return fail("zlink_send");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: tls_server CERT KEY [ENDPOINT] [REQUESTS]\n");
        return 2;
    }
    const char *endpoint = argc > 3 ? argv[3] : "tls://127.0.0.1:*";
    int requests = argc > 4 ? atoi(argv[4]) : 3;
    if (!zlink_has("tls")) {
        fprintf(stderr, "tls_server: this zlink has no tls://\n");
        return 1;
    }

    void *ctx = zlink_ctx_new();
    void *router = ctx ? zlink_socket(ctx, ZLINK_ROUTER) : NULL;
    int timeout = TIMEOUT_MS, rc = 1;
    if (router == NULL)
        return fail("zlink_socket");
    /* The files are read at bind time: a bad path fails the bind. */
    if (set_string(router, ZLINK_TLS_CERT, argv[1]) ||
        set_string(router, ZLINK_TLS_KEY, argv[2]) ||
        zlink_setsockopt(router, ZLINK_RCVTIMEO, &timeout, sizeof timeout)) {
        rc = fail("zlink_setsockopt");
        goto done;
    }
    if (zlink_bind(router, endpoint) != 0) {
        rc = fail(endpoint);
        goto done;
    }
    char bound[256];
    size_t len = sizeof bound;
    zlink_getsockopt(router, ZLINK_LAST_ENDPOINT, bound, &len);
    printf("listening on %s\n", bound);
    fflush(stdout);

    rc = 0;
    for (int i = 0; i < requests && rc == 0; i++)
        rc = answer(router);

done:
    zlink_close(router);
    zlink_ctx_term(ctx);
    return rc;
}
