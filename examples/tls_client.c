/* tls_client.c — a DEALER that talks to tls_server over tls://, and checks
 * the server's certificate against a CA file and a host name.
 *
 *   tls_client CA ENDPOINT [HOSTNAME] [REQUESTS]
 *
 * HOSTNAME is the name the server's certificate must carry (default
 * "localhost"); the endpoint may then be an IP address. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#define TIMEOUT_MS 10000

static int fail(const char *what)
{
    fprintf(stderr, "tls_client: %s: %s\n", what,
            zlink_strerror(zlink_errno()));
    return 1;
}

static int set_string(void *socket, int option, const char *value)
{
    return zlink_setsockopt(socket, option, value, strlen(value));
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fprintf(stderr,
                "usage: tls_client CA ENDPOINT [HOSTNAME] [REQUESTS]\n");
        return 2;
    }
    const char *hostname = argc > 3 ? argv[3] : "localhost";
    int requests = argc > 4 ? atoi(argv[4]) : 3;

    void *ctx = zlink_ctx_new();
    void *dealer = ctx ? zlink_socket(ctx, ZLINK_DEALER) : NULL;
    int timeout = TIMEOUT_MS, linger = 0, rc = 1;
    if (dealer == NULL)
        return fail("zlink_socket");
    /* ZLINK_TLS_VERIFY is on by default: the handshake fails unless the
     * server's chain leads to this CA and names HOSTNAME. */
    if (set_string(dealer, ZLINK_TLS_CA, argv[1]) ||
        set_string(dealer, ZLINK_TLS_HOSTNAME, hostname) ||
        zlink_setsockopt(dealer, ZLINK_RCVTIMEO, &timeout, sizeof timeout) ||
        zlink_setsockopt(dealer, ZLINK_LINGER, &linger, sizeof linger)) {
        rc = fail("zlink_setsockopt");
        goto done;
    }
    if (zlink_connect(dealer, argv[2]) != 0) {
        rc = fail(argv[2]);
        goto done;
    }

    for (int i = 1; i <= requests; i++) {
        char request[64], reply[192];
        int n = snprintf(request, sizeof request, "request %d", i);
        if (zlink_send(dealer, request, (size_t)n, 0) != n) {
            rc = fail("zlink_send");
            goto done;
        }
        /* A failed handshake (wrong CA, wrong name) shows as a timeout here;
         * zlink_socket_monitor reports the reason as an event. */
        n = zlink_recv(dealer, reply, sizeof reply - 1, 0);
        if (n < 0) {
            rc = fail("zlink_recv");
            goto done;
        }
        reply[n < (int)sizeof reply ? n : (int)sizeof reply - 1] = '\0';
        printf("tls_client got: %s\n", reply);
    }
    rc = 0;

done:
    zlink_close(dealer);
    zlink_ctx_term(ctx);
    return rc;
}
