/* consumer.c — the program ci/vcpkg-stage.sh builds against an installed
 * (or add_subdirectory'd) zlink: a PAIR round trip over tcp, so that the
 * headers, the library and its dependencies all link and run. */
#include <stdio.h>
#include <string.h>
#include <zlink.h>

static int fail(const char *what)
{
    fprintf(stderr, "consumer: %s: %s\n", what, zlink_strerror(zlink_errno()));
    return 1;
}

int main(void)
{
    int major, minor, patch;
    zlink_version(&major, &minor, &patch);
    void *ctx = zlink_ctx_new();
    void *server = zlink_socket(ctx, ZLINK_PAIR);
    void *client = zlink_socket(ctx, ZLINK_PAIR);
    char endpoint[256];
    size_t size = sizeof endpoint;
    int timeout_ms = 5000;
    if (!ctx || !server || !client)
        return fail("socket");
    zlink_setsockopt(server, ZLINK_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    if (zlink_bind(server, "tcp://127.0.0.1:*") < 0)
        return fail("bind");
    zlink_getsockopt(server, ZLINK_LAST_ENDPOINT, endpoint, &size);
    if (zlink_connect(client, endpoint) < 0)
        return fail("connect");
    if (zlink_send(client, "hello", 5, 0) != 5)
        return fail("send");
    char buf[16] = {0};
    if (zlink_recv(server, buf, sizeof buf - 1, 0) != 5 ||
        strcmp(buf, "hello") != 0)
        return fail("recv");
    printf("consumer: zlink %d.%d.%d, tls %d, ws %d: round trip over %s\n",
           major, minor, patch, zlink_has("tls"), zlink_has("ws"), endpoint);
    zlink_close(client);
    zlink_close(server);
    zlink_ctx_term(ctx);
    return 0;
}
