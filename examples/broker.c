/* broker.c — a ROUTER–DEALER broker: clients connect over tcp to a ROUTER,
 * zlink_proxy passes their requests to a DEALER, which deals them out to
 * worker threads over inproc, and brings the replies back to the right
 * client. Threads come from libuv, which zlink already needs. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <uv.h>
#include <zlink.h>

#define WORKERS 3
#define CLIENTS 2
#define REQUESTS 6 /* per client */
/* Every receive gives up after this long, so the example cannot hang. */
#define TIMEOUT_MS 5000

static bool report(const char *who, const char *what)
{
    fprintf(stderr, "broker: %s: %s: %s\n", who, what,
            zlink_strerror(zlink_errno()));
    return false;
}

static void *open_socket(void *ctx, int type, int timeout_ms)
{
    void *socket = zlink_socket(ctx, type);
    int linger = 0;
    if (socket == NULL) {
        report("main", "zlink_socket");
        return NULL;
    }
    if (zlink_setsockopt(socket, ZLINK_RCVTIMEO, &timeout_ms,
                         sizeof timeout_ms) ||
        zlink_setsockopt(socket, ZLINK_LINGER, &linger, sizeof linger)) {
        report("main", "zlink_setsockopt");
        zlink_close(socket);
        return NULL;
    }
    return socket;
}

/* ---- the broker --------------------------------------------------------
 * zlink_proxy runs until the context shuts down. It owns both sockets from
 * the moment its thread starts. */
typedef struct broker {
    void *frontend; /* ROUTER: clients connect here */
    void *backend;  /* DEALER: workers connect here */
    uv_thread_t thread;
} broker;

static void broker_main(void *arg)
{
    broker *b = arg;
    zlink_proxy(b->frontend, b->backend, NULL); /* returns with ETERM */
    zlink_close(b->frontend);
    zlink_close(b->backend);
}

/* ---- a worker ----------------------------------------------------------
 * Each request reaches it as [client routing id, request], the id put
 * there by the ROUTER; the reply goes back behind the same id. */
typedef struct worker {
    int number;
    void *socket; /* DEALER connected to the backend */
    int served;
    uv_thread_t thread;
} worker;

static void worker_main(void *arg)
{
    worker *w = arg;
    for (;;) {
        char id[256], request[128], reply[192];
        int id_len = zlink_recv(w->socket, id, sizeof id, 0);
        if (id_len < 0)
            break; /* ETERM: the context is shutting down */
        int n = zlink_recv(w->socket, request, sizeof request - 1, 0);
        if (n < 0 || id_len > (int)sizeof id)
            break;
        request[n < (int)sizeof request ? n : (int)sizeof request - 1] = '\0';
        int reply_len = snprintf(reply, sizeof reply, "%s, served by worker %d",
                                 request, w->number);
        if (zlink_send(w->socket, id, (size_t)id_len, ZLINK_SNDMORE) < 0 ||
            zlink_send(w->socket, reply, (size_t)reply_len, 0) < 0)
            break;
        w->served++;
    }
    zlink_close(w->socket);
}

/* ---- the clients (here, on the main thread) ---------------------------- */

/* Sends every client's requests, then checks every reply; returns the
 * number of good replies. */
static int run_clients(void *clients[CLIENTS])
{
    for (int c = 0; c < CLIENTS; c++) {
        for (int r = 1; r <= REQUESTS; r++) {
            char request[64];
            int n = snprintf(request, sizeof request, "client %d request %d",
                             c + 1, r);
            if (zlink_send(clients[c], request, (size_t)n, 0) != n) {
                report("client", "zlink_send");
                return 0;
            }
        }
    }
    int good = 0;
    for (int c = 0; c < CLIENTS; c++) {
        for (int r = 1; r <= REQUESTS; r++) {
            char reply[192], expected[64];
            int n = zlink_recv(clients[c], reply, sizeof reply - 1, 0);
            if (n < 0) {
                report("client", "zlink_recv");
                return good;
            }
            reply[n < (int)sizeof reply ? n : (int)sizeof reply - 1] = '\0';
            /* Replies to one client come back in any order: workers run
             * side by side. Each must be for this client. */
            snprintf(expected, sizeof expected, "client %d request ", c + 1);
            if (strncmp(reply, expected, strlen(expected)) != 0) {
                fprintf(stderr, "broker: client %d got '%s'\n", c + 1, reply);
                return good;
            }
            printf("client %d got: %s\n", c + 1, reply);
            good++;
        }
    }
    return good;
}

int main(void)
{
    broker b;
    worker workers[WORKERS];
    void *clients[CLIENTS] = {NULL};
    int started_workers = 0, good = 0;
    bool broker_started = false;
    char endpoint[256];
    size_t len = sizeof endpoint;

    memset(&b, 0, sizeof b);
    void *ctx = zlink_ctx_new();
    if (ctx == NULL) {
        report("main", "zlink_ctx_new");
        return 1;
    }

    /* The proxy and the workers wait without a timeout: the context's
     * shutdown is what ends them. */
    b.frontend = open_socket(ctx, ZLINK_ROUTER, -1);
    b.backend = open_socket(ctx, ZLINK_DEALER, -1);
    if (b.frontend == NULL || b.backend == NULL ||
        zlink_bind(b.frontend, "tcp://127.0.0.1:*") != 0 ||
        zlink_bind(b.backend, "inproc://workers") != 0 ||
        zlink_getsockopt(b.frontend, ZLINK_LAST_ENDPOINT, endpoint, &len)) {
        report("main", "broker sockets");
        goto done;
    }
    printf("broker: clients connect to %s, workers to inproc://workers\n",
           endpoint);

    /* Workers connect before any request comes: an inproc connect is
     * complete when it returns, so the DEALER deals to all of them from
     * the first request on. */
    for (; started_workers < WORKERS; started_workers++) {
        worker *w = &workers[started_workers];
        w->number = started_workers + 1;
        w->served = 0;
        w->socket = open_socket(ctx, ZLINK_DEALER, -1);
        if (w->socket == NULL ||
            zlink_connect(w->socket, "inproc://workers") != 0 ||
            uv_thread_create(&w->thread, worker_main, w) != 0) {
            report("main", "worker");
            if (w->socket != NULL)
                zlink_close(w->socket);
            goto done;
        }
    }
    if (uv_thread_create(&b.thread, broker_main, &b) != 0) {
        report("main", "broker thread");
        goto done;
    }
    broker_started = true;

    for (int c = 0; c < CLIENTS; c++) {
        clients[c] = open_socket(ctx, ZLINK_DEALER, TIMEOUT_MS);
        if (clients[c] == NULL || zlink_connect(clients[c], endpoint) != 0) {
            report("main", "client");
            goto done;
        }
    }
    good = run_clients(clients);

done:
    for (int c = 0; c < CLIENTS; c++) {
        if (clients[c] != NULL)
            zlink_close(clients[c]);
    }
    /* Wakes the proxy and the workers with ETERM; each closes its sockets. */
    zlink_ctx_shutdown(ctx);
    if (broker_started) {
        uv_thread_join(&b.thread);
    } else {
        if (b.frontend != NULL)
            zlink_close(b.frontend);
        if (b.backend != NULL)
            zlink_close(b.backend);
    }
    for (int i = 0; i < started_workers; i++) {
        uv_thread_join(&workers[i].thread);
        printf("worker %d served %d requests\n", workers[i].number,
               workers[i].served);
    }
    zlink_ctx_term(ctx);

    bool ok = good == CLIENTS * REQUESTS;
    printf("summary: %d clients, %d workers, %d of %d replies: %s\n", CLIENTS,
           WORKERS, good, CLIENTS * REQUESTS, ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
