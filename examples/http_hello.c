/* http_hello.c — a STREAM socket speaking HTTP/1.0, a protocol that is not
 * ZMTP: the server answers each request with a page and closes the
 * connection; the client, another STREAM socket, fetches it and prints
 * what came back. Any HTTP client (curl, a browser) could stand in for it
 * while the server runs. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <zlink.h>

/* Every receive gives up after this long, so the example cannot hang. */
#define TIMEOUT_MS 5000

static bool report(const char *what)
{
    fprintf(stderr, "http_hello: %s: %s\n", what,
            zlink_strerror(zlink_errno()));
    return false;
}

static int fail(const char *what)
{
    report(what);
    return 1;
}

/* One STREAM message: the connection's id, then bytes (none: the
 * connection opened or closed). Returns the bytes' size, or -1. */
static int recv_stream(void *s, char *id, int *id_len, char *buf, size_t cap)
{
    *id_len = zlink_recv(s, id, 256, 0);
    if (*id_len < 0)
        return -1;
    return zlink_recv(s, buf, cap - 1, 0);
}

static int send_stream(void *s, const char *id, int id_len, const char *data,
                       size_t len)
{
    if (zlink_send(s, id, (size_t)id_len, ZLINK_SNDMORE) < 0)
        return -1;
    return zlink_send(s, data, len, 0);
}

/* Answers the request that arrives, then closes that connection. */
static bool serve_one(void *server)
{
    static const char page[] = "HTTP/1.0 200 OK\r\n"
                               "Content-Type: text/plain\r\n"
                               "\r\n"
                               "Hello from a zlink STREAM socket\n";
    char id[256], request[1024] = "";
    int id_len = 0, n;
    size_t have = 0;
    while (strstr(request, "\r\n\r\n") == NULL) {
        n = recv_stream(server, id, &id_len, request + have,
                        sizeof request - have);
        if (n < 0)
            return report("server receive");
        have += (size_t)n;
        request[have] = '\0';
        if (have == sizeof request - 1)
            return report("request too long");
    }
    printf("server: %.*s\n", (int)strcspn(request, "\r"), request);
    /* The id, then an empty frame, closes the connection. */
    if (send_stream(server, id, id_len, page, sizeof page - 1) < 0 ||
        send_stream(server, id, id_len, "", 0) < 0)
        return report("server send");
    return true;
}

int main(void)
{
    void *ctx = zlink_ctx_new();
    void *server = zlink_socket(ctx, ZLINK_STREAM);
    void *client = zlink_socket(ctx, ZLINK_STREAM);
    int timeout = TIMEOUT_MS, no_notify = 0;
    zlink_setsockopt(server, ZLINK_RCVTIMEO, &timeout, sizeof timeout);
    zlink_setsockopt(client, ZLINK_RCVTIMEO, &timeout, sizeof timeout);
    /* The server reads requests only; the client wants to hear of the
     * close, which ends the response. */
    zlink_setsockopt(server, ZLINK_STREAM_NOTIFY, &no_notify, sizeof no_notify);
    if (zlink_bind(server, "tcp://127.0.0.1:*") != 0)
        return fail("bind");
    char endpoint[64];
    size_t len = sizeof endpoint;
    zlink_getsockopt(server, ZLINK_LAST_ENDPOINT, endpoint, &len);
    if (zlink_connect(client, endpoint) != 0)
        return fail("connect");

    /* The client's first message announces its connection, under the id
     * it sends by. */
    char id[256], buf[1024];
    int id_len;
    if (recv_stream(client, id, &id_len, buf, sizeof buf) != 0)
        return fail("client connection");
    const char request[] = "GET / HTTP/1.0\r\nHost: localhost\r\n\r\n";
    if (send_stream(client, id, id_len, request, sizeof request - 1) < 0)
        return fail("client send");
    if (!serve_one(server))
        return 1;

    /* The response, in as many pieces as it comes, until the close. */
    printf("client got:\n");
    int n;
    while ((n = recv_stream(client, id, &id_len, buf, sizeof buf)) > 0)
        printf("%.*s", n, buf);
    if (n < 0)
        return fail("client receive");
    printf("client: the server closed the connection\n");

    int linger = 0;
    zlink_setsockopt(client, ZLINK_LINGER, &linger, sizeof linger);
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
    return 0;
}
