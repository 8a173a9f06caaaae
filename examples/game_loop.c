/* game_loop.c — a 60 Hz game server loop: one ROUTER serves many DEALER
 * clients, and the network never blocks a frame. Between frames the loop
 * sleeps on the poller's OS handle (zlink_poller_fd), which any event loop
 * can watch; within a frame it takes what is ready with zero-timeout
 * waits. The clients run in a thread of their own, for a few seconds. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <zlink.h>

#define CLIENTS 50
#define REQUESTS 60 /* per client: one per frame, a second's worth */
#define FRAME_US (1000000 / 60)
#define RUN_LIMIT_US (30 * 1000000) /* a stuck run ends, and fails */

static char endpoint[256];

/* The clients whose input came since the last frame: the frame answers
 * each with the new state. */
typedef struct pending {
    char id[CLIENTS][256];
    int id_size[CLIENTS];
    int count;
} pending;

/* Takes in every input that is ready now; never waits. */
static void take_inputs(void *poller, void *router, pending *p)
{
    zlink_poller_event_t event;
    while (p->count < CLIENTS && zlink_poller_wait(poller, &event, 0) == 0) {
        char input[64];
        int size = zlink_recv(router, p->id[p->count], sizeof p->id[0],
                              ZLINK_DONTWAIT);
        if (size <= 0 || size > (int)sizeof p->id[0] ||
            zlink_recv(router, input, sizeof input, ZLINK_DONTWAIT) < 0)
            break;
        p->id_size[p->count++] = size;
    }
}

/* One frame: the world moves on (a game simulates here), and every client
 * that sent input gets the new state. Returns how many were answered. */
static int run_frame(void *router, pending *p, unsigned long frame)
{
    char state[64];
    int n = snprintf(state, sizeof state, "frame %lu", frame);
    for (int i = 0; i < p->count; i++) {
        zlink_send(router, p->id[i], (size_t)p->id_size[i], ZLINK_SNDMORE);
        zlink_send(router, state, (size_t)n, ZLINK_DONTWAIT);
    }
    int answered = p->count;
    p->count = 0;
    return answered;
}

/* The clients: CLIENTS dealers, each sending its next request when the
 * reply to the last one comes. */
static void clients_main(void *ctx)
{
    void *dealers[CLIENTS];
    int left[CLIENTS];
    void *poller = zlink_poller_new();
    for (int i = 0; i < CLIENTS; i++) {
        dealers[i] = zlink_socket(ctx, ZLINK_DEALER);
        zlink_connect(dealers[i], endpoint);
        zlink_poller_add(poller, dealers[i], &left[i], ZLINK_POLLIN);
        left[i] = REQUESTS - 1;
        zlink_send(dealers[i], "move", 4, 0);
    }
    int busy = CLIENTS;
    zlink_poller_event_t events[16];
    while (busy > 0) {
        int n = zlink_poller_wait_all(poller, events, 16, 5000);
        if (n < 0)
            break; /* the server went away: give up */
        for (int e = 0; e < n; e++) {
            char reply[64];
            int *requests_left = events[e].user_data;
            zlink_recv(events[e].socket, reply, sizeof reply, 0);
            if (*requests_left == 0) {
                busy--;
            } else {
                (*requests_left)--;
                zlink_send(events[e].socket, "move", 4, 0);
            }
        }
    }
    zlink_poller_destroy(&poller);
    for (int i = 0; i < CLIENTS; i++) {
        zlink_setsockopt(dealers[i], ZLINK_LINGER, &(int){0}, sizeof(int));
        zlink_close(dealers[i]);
    }
}

int main(void)
{
    void *ctx = zlink_ctx_new();
    void *router = zlink_socket(ctx, ZLINK_ROUTER);
    size_t len = sizeof endpoint;
    if (zlink_bind(router, "tcp://127.0.0.1:*") != 0 ||
        zlink_getsockopt(router, ZLINK_LAST_ENDPOINT, endpoint, &len) != 0) {
        fprintf(stderr, "game_loop: bind: %s\n", zlink_strerror(zlink_errno()));
        return 1;
    }
    void *poller = zlink_poller_new();
    zlink_poller_add(poller, router, NULL, ZLINK_POLLIN);
    /* The handle a game's own loop (SDL, a window message loop, epoll)
     * would watch: readable while any socket of the poller is ready. */
    zlink_fd_t fd;
    zlink_poller_fd(poller, &fd);
    void *clients = zlink_threadstart(clients_main, ctx);

    void *clock = zlink_stopwatch_start();
    unsigned long frame = 0, next_frame = 0, now = 0, late_frames = 0;
    static pending inputs;
    int served = 0;
    while (served < CLIENTS * REQUESTS && now < RUN_LIMIT_US) {
        /* Between frames: sleep until the next one is due or a message
         * comes, whichever is first. */
        if (next_frame > now) {
            zlink_pollitem_t item = {NULL, fd, ZLINK_POLLIN, 0};
            zlink_poll(&item, 1, (long)(next_frame - now + 999) / 1000);
        }
        take_inputs(poller, router, &inputs);
        now = zlink_stopwatch_intermediate(clock);
        if (now >= next_frame) {
            served += run_frame(router, &inputs, ++frame);
            if (now - next_frame > FRAME_US)
                late_frames++;
            next_frame += FRAME_US;
        }
        now = zlink_stopwatch_intermediate(clock);
    }
    unsigned long elapsed = zlink_stopwatch_stop(clock);

    zlink_threadclose(clients);
    zlink_poller_destroy(&poller);
    zlink_setsockopt(router, ZLINK_LINGER, &(int){0}, sizeof(int));
    zlink_close(router);
    zlink_ctx_term(ctx);
    bool ok = served == CLIENTS * REQUESTS;
    printf("game_loop: %lu frames in %.2f s (%lu late), %d clients, %d "
           "requests served: %s\n",
           frame, (double)elapsed / 1e6, late_frames, CLIENTS, served,
           ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
}
