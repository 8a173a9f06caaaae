/* zmq_plain_peer.c — test_interop_plain's libzmq side, either way.
 * "server ENDPOINT": a ROUTER that is a PLAIN server, with a ZAP handler
 * that lets in "admin" with "secret" only. It prints its endpoint, echoes
 * one message with the User-Id libzmq gave it appended, and exits 0.
 * "client ENDPOINT PASSWORD": a DEALER that logs in as "admin", sends
 * "hello" and exits 0 on the reply; with "wrong" it exits 0 once its
 * monitor reports the handshake failed. 2: nothing came in time.
 * NULL with ZAP: "server ENDPOINT null DOMAIN" is a NULL server with that
 * ZAP_DOMAIN, whose handler admits NULL peers (as User-Id "anon") only in
 * the domain "admit"; refused, it exits 0 once its monitor reports it.
 * "client ENDPOINT null-ok" and "client ENDPOINT null-refused" are NULL
 * clients that expect a reply, or a refusal. */
#include <pthread.h>
#include <stdint.h>
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
        int null = n == 6 && lens[5] == 4 && memcmp(f[5], "NULL", 4) == 0;
        int ok = null ? lens[2] == 5 && memcmp(f[2], "admit", 5) == 0
                      : n == 8 && lens[6] == 5 &&
                            memcmp(f[6], "admin", 5) == 0 && lens[7] == 6 &&
                            memcmp(f[7], "secret", 6) == 0;
        zmq_send(handler, "1.0", 3, ZMQ_SNDMORE);
        zmq_send(handler, f[1], (size_t)lens[1], ZMQ_SNDMORE);
        zmq_send(handler, ok ? "200" : "400", 3, ZMQ_SNDMORE);
        zmq_send(handler, ok ? "OK" : "No access", ok ? 2 : 9, ZMQ_SNDMORE);
        const char *user = !ok ? "" : null ? "anon" : "admin";
        zmq_send(handler, user, strlen(user), ZMQ_SNDMORE);
        zmq_send(handler, "", 0, 0);
    }
    /* ETERM: the context is ending, and waits for this socket. */
    int linger = 0;
    zmq_setsockopt(handler, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(handler);
    return NULL;
}

/* Waits for a HANDSHAKE_FAILED_* event on monitor. libzmq 4.3 reports
 * a PLAIN server's refusal as a protocol error: it reads ERROR only in its
 * own misspelt form (zmtp.h, zl_plain_libzmq43_error). */
static int wait_refused(void *monitor)
{
    for (;;) {
        zmq_msg_t event;
        zmq_msg_init(&event);
        if (zmq_msg_recv(&event, monitor, 0) < 0)
            return 2;
        uint16_t id = 0;
        if (zmq_msg_size(&event) >= 2)
            memcpy(&id, zmq_msg_data(&event), 2);
        zmq_msg_close(&event);
        char endpoint[256];
        zmq_recv(monitor, endpoint, sizeof endpoint, 0);
        if (id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ||
            id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
            id == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
            return 0;
    }
}

static int run_client(const char *endpoint, const char *password)
{
    void *ctx = zmq_ctx_new();
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    int timeout = TIMEOUT_MS, linger = 0;
    zmq_setsockopt(dealer, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(dealer, ZMQ_LINGER, &linger, sizeof linger);
    int null = strncmp(password, "null-", 5) == 0;
    if (!null) {
        zmq_setsockopt(dealer, ZMQ_PLAIN_USERNAME, "admin", 5);
        zmq_setsockopt(dealer, ZMQ_PLAIN_PASSWORD, password, strlen(password));
    }
    zmq_socket_monitor(dealer, "inproc://events", ZMQ_EVENT_ALL);
    void *monitor = zmq_socket(ctx, ZMQ_PAIR);
    zmq_setsockopt(monitor, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(monitor, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(monitor, "inproc://events");
    if (zmq_connect(dealer, endpoint) != 0)
        return 1;
    int rc;
    if (strcmp(password, "secret") == 0 || strcmp(password, "null-ok") == 0) {
        char reply[64];
        zmq_send(dealer, "hello", 5, 0);
        rc = zmq_recv(dealer, reply, sizeof reply, 0) == 5 ? 0 : 2;
    } else {
        rc = wait_refused(monitor);
    }
    zmq_close(monitor);
    zmq_close(dealer);
    zmq_ctx_term(ctx);
    return rc;
}

/* null_domain: a NULL server asking ZAP in that domain; NULL: PLAIN. */
static int run_server(const char *endpoint_in, const char *null_domain)
{
    void *ctx = zmq_ctx_new();
    void *handler = zmq_socket(ctx, ZMQ_REP);
    if (zmq_bind(handler, "inproc://zeromq.zap.01") != 0)
        return 1;
    pthread_t thread;
    pthread_create(&thread, NULL, zap_handler, handler);

    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    int on = 1, timeout = TIMEOUT_MS, linger = 1000;
    if (null_domain)
        zmq_setsockopt(router, ZMQ_ZAP_DOMAIN, null_domain,
                       strlen(null_domain));
    else
        zmq_setsockopt(router, ZMQ_PLAIN_SERVER, &on, sizeof on);
    zmq_socket_monitor(router, "inproc://server-events", ZMQ_EVENT_ALL);
    void *monitor = zmq_socket(ctx, ZMQ_PAIR);
    zmq_setsockopt(monitor, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(monitor, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(monitor, "inproc://server-events");
    zmq_setsockopt(router, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_setsockopt(router, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_bind(router, endpoint_in) != 0)
        return 1;
    char endpoint[256];
    size_t len = sizeof endpoint;
    zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, endpoint, &len);
    printf("%s\n", endpoint);
    fflush(stdout);
    if (null_domain && strcmp(null_domain, "admit") != 0) {
        int rc = wait_refused(monitor);
        zmq_close(monitor);
        zmq_close(router);
        zmq_ctx_term(ctx);
        pthread_join(thread, NULL);
        return rc;
    }

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
    zmq_close(monitor);
    zmq_close(router);
    zmq_ctx_term(ctx);
    pthread_join(thread, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "server") == 0)
        return run_server(argv[2], NULL);
    if (argc == 5 && strcmp(argv[1], "server") == 0 &&
        strcmp(argv[3], "null") == 0)
        return run_server(argv[2], argv[4]);
    if (argc == 4 && strcmp(argv[1], "client") == 0)
        return run_client(argv[2], argv[3]);
    fprintf(stderr, "usage: zmq_plain_peer server ENDPOINT [null DOMAIN]\n"
                    "       zmq_plain_peer client ENDPOINT PASSWORD\n");
    return 64;
}
