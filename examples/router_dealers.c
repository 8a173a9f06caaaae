/* router_dealers.c — one ROUTER answers three DEALERs by routing id: the
 * request-reply shape most zlink servers start from. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zlink.h>

#define DEALERS 3
#define REQUESTS 5
#define TOTAL (DEALERS * REQUESTS)
/* Every receive gives up after this long, so the example cannot hang. */
#define TIMEOUT_MS 5000

static double now_ms(void)
{
#if defined(TIME_UTC)
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
#else
    return (double)time(NULL) * 1000.0;
#endif
}

static bool report(const char *what)
{
    fprintf(stderr, "router_dealers: %s: %s\n", what,
            zlink_strerror(zlink_errno()));
    return false;
}

static bool set_int(void *socket, int option, int value)
{
    return zlink_setsockopt(socket, option, &value, sizeof value) == 0 ||
           report("zlink_setsockopt");
}

static void *open_socket(void *ctx, int type)
{
    void *socket = zlink_socket(ctx, type);
    if (socket == NULL) {
        report("zlink_socket");
        return NULL;
    }
    /* LINGER 0: by the time we close, every reply has been received. */
    if (!set_int(socket, ZLINK_RCVTIMEO, TIMEOUT_MS) ||
        !set_int(socket, ZLINK_SNDTIMEO, TIMEOUT_MS) ||
        !set_int(socket, ZLINK_LINGER, 0)) {
        zlink_close(socket);
        return NULL;
    }
    return socket;
}

/* Receives one frame as a string; false on timeout or truncation. */
static bool recv_string(void *socket, char *buf, size_t cap)
{
    int n = zlink_recv(socket, buf, cap - 1, 0);
    if (n < 0)
        return report("zlink_recv");
    if ((size_t)n >= cap) {
        fprintf(stderr, "router_dealers: frame of %d bytes truncated\n", n);
        return false;
    }
    buf[n] = '\0';
    return true;
}

static bool send_string(void *socket, const char *text, int flags)
{
    size_t len = strlen(text);
    return zlink_send(socket, text, len, flags) == (int)len ||
           report("zlink_send");
}

/* Answers `count` requests, each to the dealer whose routing id came
 * with it; returns how many it answered. */
static int serve(void *router, int count)
{
    int served = 0;
    for (; served < count; served++) {
        char id[64];
        char request[128];
        char reply[192];
        if (!recv_string(router, id, sizeof id) ||
            !recv_string(router, request, sizeof request))
            break;
        snprintf(reply, sizeof reply, "reply to %s", request);
        if (!send_string(router, id, ZLINK_SNDMORE) ||
            !send_string(router, reply, 0))
            break;
    }
    return served;
}

int main(void)
{
    double start = now_ms();
    int sent = 0, served = 0, received = 0;
    void *dealers[DEALERS] = {NULL};
    char ids[DEALERS][16];
    void *router = NULL;

    void *ctx = zlink_ctx_new();
    if (ctx == NULL) {
        report("zlink_ctx_new");
        return 1;
    }

    router = open_socket(ctx, ZLINK_ROUTER);
    if (router == NULL)
        goto done;
    if (zlink_bind(router, "tcp://127.0.0.1:*") != 0) {
        report("zlink_bind");
        goto done;
    }
    char endpoint[256];
    size_t len = sizeof endpoint;
    if (zlink_getsockopt(router, ZLINK_LAST_ENDPOINT, endpoint, &len) != 0) {
        report("ZLINK_LAST_ENDPOINT");
        goto done;
    }
    printf("router bound to %s\n", endpoint);

    for (int d = 0; d < DEALERS; d++) {
        snprintf(ids[d], sizeof ids[d], "dealer-%d", d + 1);
        dealers[d] = open_socket(ctx, ZLINK_DEALER);
        if (dealers[d] == NULL)
            goto done;
        /* The ROUTER sees this id in front of every request, and a reply
         * sent with it reaches this dealer and no other. */
        if (zlink_setsockopt(dealers[d], ZLINK_ROUTING_ID, ids[d],
                             strlen(ids[d])) != 0 ||
            zlink_connect(dealers[d], endpoint) != 0) {
            report(ids[d]);
            goto done;
        }
    }

    for (int d = 0; d < DEALERS; d++) {
        for (int r = 1; r <= REQUESTS; r++) {
            char request[128];
            snprintf(request, sizeof request, "request %d from %s", r, ids[d]);
            if (!send_string(dealers[d], request, 0))
                goto done;
            sent++;
        }
    }

    served = serve(router, TOTAL);

    for (int d = 0; d < DEALERS; d++) {
        for (int r = 1; r <= REQUESTS; r++) {
            char reply[192];
            char expected[192];
            if (!recv_string(dealers[d], reply, sizeof reply))
                goto done;
            snprintf(expected, sizeof expected, "reply to request %d from %s",
                     r, ids[d]);
            printf("%s got: %s\n", ids[d], reply);
            if (strcmp(reply, expected) != 0) {
                fprintf(stderr, "router_dealers: expected '%s'\n", expected);
                goto done;
            }
            received++;
        }
    }

done:
    for (int d = 0; d < DEALERS; d++) {
        if (dealers[d] != NULL)
            zlink_close(dealers[d]);
    }
    if (router != NULL)
        zlink_close(router);
    zlink_ctx_term(ctx);

    bool ok = sent == TOTAL && served == TOTAL && received == TOTAL;
    printf("summary: %d requests sent, %d served by the router, %d replies "
           "received, %.1f ms: %s\n",
           sent, served, received, now_ms() - start, ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
