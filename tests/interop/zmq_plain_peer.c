/* zmq_plain_server.c — test_interop_plain's libzmq side: a ROUTER that is a
 * PLAIN server, with a ZAP handler that lets in "admin" with "secret" only.
 * It prints its endpoint, echoes one message with the User-Id libzmq gave
 * it appended, and exits 0; 2 when nothing came in time. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#define TIMEOUT_MS 20000

/* One ZAP request's frames (RFC 27): delimiter, version, request id,
 * domain, address, identity, mechanism, then the credentials. */
#define ZAP_FRAMES 9

static int recv_request(void *handler, char frames[ZAP_FRAMES][256],
                        int lens[ZAP_FRAMES])
{
    int n = 0, more = 1;
    while (more) {
        int len = zmq_recv(handler, frames[n < ZAP_FRAMES ? n : 0], 255, 0);
        if (len < 0)
            return -1;
        if (n < ZAP_FRAMES)
            lens[n] = len > 255 ? 255 : len;
        size_t size = sizeof more;
        zmq_getsockopt(handler, ZMQ_RCVMORE, &more, &size);
        n++;
    }
    return n;
}

/* REP strips the delimiter: frame 0 here is the version. */
static void *zap_handler(void *handler)
{
    char f[ZAP_FRAMES][256];
    int lens[ZAP_FRAMES];
    int n;
    while ((n = recv_request(handler, f, lens)) >= 0) {
        int ok = n == 8 && lens[6] == 5 && memcmp(f[6], "admin", 5) == 0 &&
                 lens[7] == 6 && memcmp(f[7], "secret", 6) == 0;
        zmq_send(handler, "1.0", 3, ZMQ_SNDMORE);
        zmq_send(handler, f[1], (size_t)lens[1], ZMQ_SNDMORE);
        zmq_send(handler, ok ? "200" : "400", 3, ZMQ_SNDMORE);
        zmq_send(handler, ok ? "OK" : "No access", ok ? 2 : 9, ZMQ_SNDMORE);
        zmq_send(handler, ok ? "admin" : "", ok ? 5 : 0, ZMQ_SNDMORE);
        zmq_send(handler, "", 0, 0);
    }
    /* ETERM: the context is ending, and waits for this socket. */
    int linger = 0;
    zmq_setsockopt(handler, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(handler);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: zmq_plain_server ENDPOINT\n");
        return 64;
    }
    void *ctx = zmq_ctx_new();
    void *handler = zmq_socket(ctx, ZMQ_REP);
    if (zmq_bind(handler, "inproc://zeromq.zap.01") != 0)
        return 1;
    pthread_t thread;
    pthread_create(&thread, NULL, zap_handler, handler);

    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    int on = 1, timeout = TIMEOUT_MS, linger = 1000;
    zmq_setsockopt(router, ZMQ_PLAIN_SERVER, &on, sizeof on);
    zmq_setsockopt(router, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(router, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_bind(router, argv[1]) != 0)
        return 1;
    char endpoint[256];
    size_t len = sizeof endpoint;
    zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, endpoint, &len);
    printf("%s\n", endpoint);
    fflush(stdout);

    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    if (zmq_msg_recv(&id, router, 0) < 0 || zmq_msg_recv(&body, router, 0) < 0)
        return 2;
    const char *user = zmq_msg_gets(&body, "User-Id");
    char reply[300];
    int n =
        snprintf(reply, sizeof reply, "%.*s from %s", (int)zmq_msg_size(&body),
                 (char *)zmq_msg_data(&body), user ? user : "nobody");
    zmq_msg_send(&id, router, ZMQ_SNDMORE);
    zmq_send(router, reply, (size_t)n, 0);
    zmq_msg_close(&body);
    zmq_close(router);
    zmq_ctx_term(ctx);
    pthread_join(thread, NULL);
    return 0;
}
