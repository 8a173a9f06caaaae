/* pubsub_fanout.c — one publisher fans out to three subscribers, each of
 * which gets only the topics it subscribed to. The publisher is an XPUB, so
 * it sees the subscriptions arrive and starts publishing once every
 * subscriber is listening, instead of sleeping and hoping. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <zlink.h>

#define SUBSCRIBERS 3
#define UPDATES 10 /* per topic */
/* Every receive gives up after this long, so the example cannot hang. */
#define TIMEOUT_MS 5000

static const char *const topics[] = {"weather.", "traffic."};
#define TOPICS 2

/* What each subscriber asks for; "" is every topic. */
static const char *const filters[SUBSCRIBERS] = {"weather.", "traffic.", ""};

static bool report(const char *what)
{
    fprintf(stderr, "pubsub_fanout: %s: %s\n", what,
            zlink_strerror(zlink_errno()));
    return false;
}

static void *open_socket(void *ctx, int type)
{
    void *socket = zlink_socket(ctx, type);
    int timeout = TIMEOUT_MS, linger = 0;
    if (socket == NULL) {
        report("zlink_socket");
        return NULL;
    }
    if (zlink_setsockopt(socket, ZLINK_RCVTIMEO, &timeout, sizeof timeout) ||
        zlink_setsockopt(socket, ZLINK_LINGER, &linger, sizeof linger)) {
        report("zlink_setsockopt");
        zlink_close(socket);
        return NULL;
    }
    return socket;
}

/* An XPUB hands each new subscription to the application as a message:
 * byte 1, then the topic. Waits for `count` of them. */
static bool wait_for_subscribers(void *xpub, int count)
{
    for (int seen = 0; seen < count; seen++) {
        char notice[64];
        int n = zlink_recv(xpub, notice, sizeof notice, 0);
        if (n < 1)
            return report("waiting for subscriptions");
        if (notice[0] == 1)
            printf("publisher: subscription to '%.*s'\n", n - 1, notice + 1);
    }
    return true;
}

/* Receives until `expected` updates came; returns how many did. */
static int drain(void *sub, int index, int expected)
{
    int received = 0;
    while (received < expected) {
        char update[128];
        int n = zlink_recv(sub, update, sizeof update - 1, 0);
        if (n < 0) {
            report("zlink_recv");
            break;
        }
        update[n < (int)sizeof update ? n : (int)sizeof update - 1] = '\0';
        if (strncmp(update, filters[index], strlen(filters[index])) != 0) {
            fprintf(stderr, "subscriber %d: '%s' does not match '%s'\n",
                    index + 1, update, filters[index]);
            break;
        }
        received++;
    }
    printf("subscriber %d ('%s'): %d updates\n", index + 1, filters[index],
           received);
    return received;
}

int main(void)
{
    void *subs[SUBSCRIBERS] = {NULL};
    void *xpub = NULL;
    bool ok = false;

    void *ctx = zlink_ctx_new();
    if (ctx == NULL) {
        report("zlink_ctx_new");
        return 1;
    }

    xpub = open_socket(ctx, ZLINK_XPUB);
    if (xpub == NULL)
        goto done;
    if (zlink_bind(xpub, "tcp://127.0.0.1:*") != 0) {
        report("zlink_bind");
        goto done;
    }
    char endpoint[256];
    size_t len = sizeof endpoint;
    if (zlink_getsockopt(xpub, ZLINK_LAST_ENDPOINT, endpoint, &len) != 0) {
        report("ZLINK_LAST_ENDPOINT");
        goto done;
    }
    printf("publisher bound to %s\n", endpoint);

    for (int i = 0; i < SUBSCRIBERS; i++) {
        subs[i] = open_socket(ctx, ZLINK_SUB);
        if (subs[i] == NULL)
            goto done;
        if (zlink_setsockopt(subs[i], ZLINK_SUBSCRIBE, filters[i],
                             strlen(filters[i])) != 0 ||
            zlink_connect(subs[i], endpoint) != 0) {
            report("subscriber");
            goto done;
        }
    }
    /* The filters are all different, so each one reaches the XPUB once. */
    if (!wait_for_subscribers(xpub, SUBSCRIBERS))
        goto done;

    for (int u = 1; u <= UPDATES; u++) {
        for (int t = 0; t < TOPICS; t++) {
            char update[64];
            int n =
                snprintf(update, sizeof update, "%supdate %d", topics[t], u);
            if (zlink_send(xpub, update, (size_t)n, 0) != n) {
                report("zlink_send");
                goto done;
            }
        }
    }

    /* One topic each for the first two, both topics for the third. */
    ok = drain(subs[0], 0, UPDATES) == UPDATES &&
         drain(subs[1], 1, UPDATES) == UPDATES &&
         drain(subs[2], 2, TOPICS * UPDATES) == TOPICS * UPDATES;

done:
    for (int i = 0; i < SUBSCRIBERS; i++) {
        if (subs[i] != NULL)
            zlink_close(subs[i]);
    }
    if (xpub != NULL)
        zlink_close(xpub);
    zlink_ctx_term(ctx);
    printf("summary: %d topics, %d updates each, fanned out to %d "
           "subscribers: %s\n",
           TOPICS, UPDATES, SUBSCRIBERS, ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
