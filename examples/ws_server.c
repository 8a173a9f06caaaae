/* ws_server.c — a zlink WebSocket server for browsers (jszmq) and other
 * ZWS 2.0 peers: on one port, a PUB at /pub and a ROUTER at /echo that
 * sends every multipart message back to its sender.
 *
 *   ws_server [ENDPOINT] [SECONDS]
 *
 * ENDPOINT is ws://HOST:PORT without a path (default ws://127.0.0.1:*, a
 * free port). The program prints "ws_server ws://127.0.0.1:PORT" once both
 * sockets listen, then publishes "A <n>" and "B <n>" in turn every few
 * milliseconds (subscribe to "A" and "B" never arrives), and echoes, for
 * SECONDS (default 60) or until killed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlink.h>

#define PUBLISH_EVERY_MS 5
#define MAX_PARTS 64

/* Milliseconds since the first call, from zlink's portable stopwatch. Its
 * microseconds are an unsigned long, 32 bits on Windows, so they are summed
 * as wrapping differences: correct as long as calls come within 71 min. */
static double now_ms(void)
{
    static void *watch;
    static unsigned long last;
    static double total;
    if (!watch)
        watch = zlink_stopwatch_start();
    unsigned long t = zlink_stopwatch_intermediate(watch);
    total += (double)(unsigned long)(t - last) / 1000.0;
    last = t;
    return total;
}

static int fail(const char *what)
{
    fprintf(stderr, "ws_server: %s: %s\n", what, zlink_strerror(zlink_errno()));
    return 1;
}

/* Sends one received multipart message (routing id first) back. */
static int echo_one(void *router)
{
    zlink_msg_t parts[MAX_PARTS];
    int n = 0;
    int more = 1;
    while (more) {
        zlink_msg_init(&parts[n]);
        if (zlink_msg_recv(&parts[n], router, 0) < 0) {
            zlink_msg_close(&parts[n]);
            break;
        }
        more = zlink_msg_more(&parts[n]);
        if (n + 1 < MAX_PARTS)
            n++;
        else
            zlink_msg_close(&parts[n]); /* too many parts: dropped */
    }
    for (int i = 0; i < n; i++) {
        int flags = i + 1 < n ? ZLINK_SNDMORE : 0;
        if (zlink_msg_send(&parts[i], router, flags) < 0)
            zlink_msg_close(&parts[i]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *base = argc > 1 ? argv[1] : "ws://127.0.0.1:*";
    double seconds = argc > 2 ? atof(argv[2]) : 60.0;
    void *ctx = zlink_ctx_new();
    void *pub = zlink_socket(ctx, ZLINK_PUB);
    void *router = zlink_socket(ctx, ZLINK_ROUTER);
    if (!ctx || !pub || !router)
        return fail("socket");
    int linger = 0;
    zlink_setsockopt(pub, ZLINK_LINGER, &linger, sizeof linger);
    zlink_setsockopt(router, ZLINK_LINGER, &linger, sizeof linger);

    char endpoint[600];
    snprintf(endpoint, sizeof endpoint, "%s/pub", base);
    if (zlink_bind(pub, endpoint) != 0)
        return fail(endpoint);
    /* The echo path goes on the port the PUB got. */
    char bound[512];
    size_t len = sizeof bound;
    if (zlink_getsockopt(pub, ZLINK_LAST_ENDPOINT, bound, &len) != 0)
        return fail("LAST_ENDPOINT");
    char *path = strrchr(bound, '/');
    *path = '\0';
    snprintf(endpoint, sizeof endpoint, "%s/echo", bound);
    if (zlink_bind(router, endpoint) != 0)
        return fail(endpoint);
    printf("ws_server %s\n", bound);
    fflush(stdout);

    double end = now_ms() + seconds * 1000.0;
    double next_publish = now_ms();
    unsigned long count = 0;
    while (now_ms() < end) {
        zlink_pollitem_t item = {router, 0, ZLINK_POLLIN, 0};
        if (zlink_poll(&item, 1, PUBLISH_EVERY_MS) > 0)
            echo_one(router);
        if (now_ms() >= next_publish) {
            char text[64];
            int n = snprintf(text, sizeof text, "%c %lu", count % 2 ? 'B' : 'A',
                             count / 2);
            zlink_send(pub, text, (size_t)n, ZLINK_DONTWAIT);
            count++;
            next_publish += PUBLISH_EVERY_MS;
        }
    }
    zlink_close(pub);
    zlink_close(router);
    zlink_ctx_term(ctx);
    return 0;
}
