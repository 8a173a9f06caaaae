/* zmq_curve_peer.c — test_interop_curve's libzmq side, either way, with
 * libzmq's test keys (zmq_curve(7)).
 * "server ENDPOINT": a ROUTER that is a CURVE server, with a ZAP handler
 * that lets in the test client's key only, as User-Id "alice". It prints
 * its endpoint, echoes three messages, each with the User-Id libzmq gave
 * its parts as one more part, and exits 0. "server-heartbeat ENDPOINT"
 * echoes two, and exits 0 only if its one connection held until the
 * second came. "server-refuse ENDPOINT" exits 0 once its monitor reports
 * the ZAP handler's 400.
 * "client ENDPOINT": a DEALER with the test client's keys sends "hello",
 * a 300000-byte message and one of three parts, and exits 0 when each
 * comes back as it went. "client-heartbeat ENDPOINT" sends PINGs every
 * 50 ms, and two messages a second apart; it exits 0 if its one
 * connection held that second, and both came back.
 * "client-refused ENDPOINT" (keys of its own) exits 0 once its monitor
 * reports a 400; "client-wrongkey ENDPOINT" (a wrong server key) once it
 * reports any handshake failure.
 * 1: something went wrong (said on stderr); 2: nothing came in time. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#define TIMEOUT_MS 20000
#define LINGER_MS 5000
#define BIG_SIZE 300000
/* PINGs every 50 ms; the connection is dropped if nothing answers one in
 * 500 ms, well inside the second the heartbeat cases stay quiet. */
#define HEARTBEAT_IVL_MS 50
#define HEARTBEAT_TIMEOUT_MS 500
#define DRAIN_MS 100

enum { PEER_OK = 0, PEER_FAILED = 1, PEER_TIMED_OUT = 2 };

static const char server_public[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
static const char server_secret[] = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
static const char client_public[] = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";
static const char client_secret[] = "D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

/* One ZAP request's frames after REP took the delimiter (RFC 27): version,
 * request id, domain, address, identity, mechanism, and CURVE's one
 * credential, the client's public key. */
#define ZAP_FRAMES 7
#define KEY_SIZE 32

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

static void *zap_handler(void *handler)
{
    uint8_t admitted[KEY_SIZE];
    zmq_z85_decode(admitted, client_public);
    char f[ZAP_FRAMES][256];
    int lens[ZAP_FRAMES];
    int n;
    while ((n = recv_request(handler, f, lens)) >= 0) {
        int ok = n == ZAP_FRAMES && lens[5] == 5 &&
                 memcmp(f[5], "CURVE", 5) == 0 && lens[6] == KEY_SIZE &&
                 memcmp(f[6], admitted, KEY_SIZE) == 0;
        zmq_send(handler, "1.0", 3, ZMQ_SNDMORE);
        zmq_send(handler, f[1], (size_t)lens[1], ZMQ_SNDMORE);
        zmq_send(handler, ok ? "200" : "400", 3, ZMQ_SNDMORE);
        zmq_send(handler, ok ? "OK" : "No access", ok ? 2 : 9, ZMQ_SNDMORE);
        const char *user = ok ? "alice" : "";
        zmq_send(handler, user, strlen(user), ZMQ_SNDMORE);
        zmq_send(handler, "", 0, 0);
    }
    /* ETERM: the context is ending, and waits for this socket. */
    int linger = 0;
    zmq_setsockopt(handler, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(handler);
    return NULL;
}

/* A body of len bytes that differs with seed: the same on both sides. */
static void fill_body(char *body, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        body[i] = (char)(i * 31 + seed);
}

static void set_int(void *socket, int option, int value)
{
    zmq_setsockopt(socket, option, &value, sizeof value);
}

static void set_key(void *socket, int option, const char *z85)
{
    zmq_setsockopt(socket, option, z85, strlen(z85));
}

/* A PAIR reading socket's events, watched from before it binds or
 * connects. */
static void *monitor_open(void *ctx, void *socket, const char *name)
{
    zmq_socket_monitor(socket, name, ZMQ_EVENT_ALL);
    void *monitor = zmq_socket(ctx, ZMQ_PAIR);
    set_int(monitor, ZMQ_RCVTIMEO, TIMEOUT_MS);
    set_int(monitor, ZMQ_LINGER, 0);
    zmq_connect(monitor, name);
    return monitor;
}

/* The next event on monitor, within its RCVTIMEO; -1 if none came. */
static int next_event(void *monitor, uint16_t *id, uint32_t *value)
{
    uint8_t head[6];
    char endpoint[256];
    if (zmq_recv(monitor, head, sizeof head, 0) != (int)sizeof head ||
        zmq_recv(monitor, endpoint, sizeof endpoint, 0) < 0)
        return -1;
    memcpy(id, head, sizeof *id);
    memcpy(value, head + 2, sizeof *value);
    return 0;
}

static int is_handshake_failure(uint16_t id)
{
    return id == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL ||
           id == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
           id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
}

/* Waits for the handshake to fail: as an authentication failure with
 * code 400 when auth_400, else in any way. A handshake that succeeds, or
 * fails otherwise than wanted, is a failure of the case. */
static int wait_failed(void *monitor, int auth_400)
{
    uint16_t id;
    uint32_t value;
    while (next_event(monitor, &id, &value) == 0) {
        if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
            fprintf(stderr, "zmq_curve_peer: the handshake succeeded\n");
            return PEER_FAILED;
        }
        if (!is_handshake_failure(id))
            continue;
        if (!auth_400)
            return PEER_OK;
        if (id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH && value == 400)
            return PEER_OK;
        fprintf(stderr,
                "zmq_curve_peer: handshake failed with event 0x%x value "
                "0x%x, not AUTH 400\n",
                id, value);
        return PEER_FAILED;
    }
    return PEER_TIMED_OUT;
}

/* The events so far say one handshake succeeded and nothing dropped: a
 * heartbeat that went unanswered would have cost a reconnection. */
static int connection_held(void *monitor)
{
    set_int(monitor, ZMQ_RCVTIMEO, DRAIN_MS);
    int handshakes = 0, drops = 0;
    uint16_t id;
    uint32_t value;
    while (next_event(monitor, &id, &value) == 0) {
        if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            handshakes++;
        if (id == ZMQ_EVENT_DISCONNECTED || is_handshake_failure(id)) {
            fprintf(stderr, "zmq_curve_peer: event 0x%x value 0x%x\n", id,
                    value);
            drops++;
        }
    }
    if (handshakes == 1 && drops == 0)
        return PEER_OK;
    fprintf(stderr, "zmq_curve_peer: %d handshakes, %d drops\n", handshakes,
            drops);
    return PEER_FAILED;
}

/* Echoes one message to its sender: its parts, then the User-Id libzmq
 * gave them ("mixed" if they differ, "nobody" if none). */
static int echo_one(void *router)
{
    zmq_msg_t part;
    zmq_msg_init(&part);
    if (zmq_msg_recv(&part, router, 0) < 0) /* the routing id */
        return PEER_TIMED_OUT;
    if (zmq_msg_send(&part, router, ZMQ_SNDMORE) < 0)
        return PEER_FAILED;
    char user[64] = "";
    int more = 1;
    for (int i = 0; more; i++) {
        if (zmq_msg_recv(&part, router, 0) < 0)
            return PEER_TIMED_OUT;
        const char *got = zmq_msg_gets(&part, "User-Id");
        if (i == 0)
            snprintf(user, sizeof user, "%s", got ? got : "nobody");
        else if (got == NULL || strcmp(got, user) != 0)
            snprintf(user, sizeof user, "mixed");
        more = zmq_msg_more(&part);
        if (zmq_msg_send(&part, router, ZMQ_SNDMORE) < 0)
            return PEER_FAILED;
    }
    zmq_msg_close(&part);
    return zmq_send(router, user, strlen(user), 0) < 0 ? PEER_FAILED : PEER_OK;
}

enum server_kind { SERVER_ECHO, SERVER_HEARTBEAT, SERVER_REFUSE };

/* Waits for a message to come in, without taking it. */
static int wait_message(void *socket)
{
    zmq_pollitem_t item = {socket, 0, ZMQ_POLLIN, 0};
    return zmq_poll(&item, 1, TIMEOUT_MS) == 1 ? PEER_OK : PEER_TIMED_OUT;
}

/* The second message comes after the client's quiet second: the
 * connection must have held until then, checked before the echo that
 * lets the client go. */
static int serve_heartbeats(void *router, void *monitor)
{
    int rc = echo_one(router);
    if (rc == PEER_OK)
        rc = wait_message(router);
    if (rc == PEER_OK)
        rc = connection_held(monitor);
    return rc == PEER_OK ? echo_one(router) : rc;
}

static int serve(void *router, void *monitor, enum server_kind kind)
{
    if (kind == SERVER_REFUSE)
        return wait_failed(monitor, 1);
    if (kind == SERVER_HEARTBEAT)
        return serve_heartbeats(router, monitor);
    for (int i = 0; i < 3; i++) {
        int rc = echo_one(router);
        if (rc != PEER_OK)
            return rc;
    }
    return PEER_OK;
}

static int run_server(const char *endpoint_in, enum server_kind kind)
{
    void *ctx = zmq_ctx_new();
    void *handler = zmq_socket(ctx, ZMQ_REP);
    if (zmq_bind(handler, "inproc://zeromq.zap.01") != 0)
        return PEER_FAILED;
    pthread_t thread;
    pthread_create(&thread, NULL, zap_handler, handler);

    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    set_int(router, ZMQ_CURVE_SERVER, 1);
    set_key(router, ZMQ_CURVE_SECRETKEY, server_secret);
    set_int(router, ZMQ_RCVTIMEO, TIMEOUT_MS);
    set_int(router, ZMQ_LINGER, LINGER_MS);
    void *monitor = monitor_open(ctx, router, "inproc://server-events");
    if (zmq_bind(router, endpoint_in) != 0)
        return PEER_FAILED;
    char endpoint[256];
    size_t len = sizeof endpoint;
    zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, endpoint, &len);
    printf("%s\n", endpoint);
    fflush(stdout);

    int rc = serve(router, monitor, kind);
    zmq_close(monitor);
    zmq_close(router);
    zmq_ctx_term(ctx);
    pthread_join(thread, NULL);
    return rc;
}

static int send_parts(void *dealer, char *const parts[], const size_t sizes[],
                      int count)
{
    for (int i = 0; i < count; i++)
        if (zmq_send(dealer, parts[i], sizes[i],
                     i + 1 < count ? ZMQ_SNDMORE : 0) != (int)sizes[i])
            return PEER_FAILED;
    return PEER_OK;
}

/* The echo is the same count of parts, each as it went. */
static int expect_parts(void *dealer, char *const parts[], const size_t sizes[],
                        int count)
{
    int rc = PEER_OK;
    zmq_msg_t part;
    zmq_msg_init(&part);
    for (int i = 0; i < count; i++) {
        if (zmq_msg_recv(&part, dealer, 0) < 0)
            return PEER_TIMED_OUT;
        if (zmq_msg_size(&part) != sizes[i] ||
            memcmp(zmq_msg_data(&part), parts[i], sizes[i]) != 0 ||
            zmq_msg_more(&part) != (i + 1 < count)) {
            fprintf(stderr, "zmq_curve_peer: part %d of %zu bytes differs\n", i,
                    zmq_msg_size(&part));
            rc = PEER_FAILED;
        }
    }
    zmq_msg_close(&part);
    return rc;
}

static int round_trip(void *dealer, char *const parts[], const size_t sizes[],
                      int count)
{
    int rc = send_parts(dealer, parts, sizes, count);
    return rc != PEER_OK ? rc : expect_parts(dealer, parts, sizes, count);
}

/* "hello", then a message larger than any buffer, then three parts. */
static int exchange(void *dealer)
{
    char hello[] = "hello";
    char *one[] = {hello};
    size_t one_size[] = {5};
    int rc = round_trip(dealer, one, one_size, 1);
    if (rc != PEER_OK)
        return rc;
    char *big = malloc(BIG_SIZE);
    fill_body(big, BIG_SIZE, 7);
    char *large[] = {big};
    size_t large_size[] = {BIG_SIZE};
    rc = round_trip(dealer, large, large_size, 1);
    free(big);
    if (rc != PEER_OK)
        return rc;
    char a[] = "first", b[] = "", c[] = "third part";
    char *three[] = {a, b, c};
    size_t three_sizes[] = {5, 0, 10};
    return round_trip(dealer, three, three_sizes, 3);
}

/* Two messages a second apart, while libzmq PINGs every 50 ms. */
static int heartbeat_exchange(void *dealer, void *monitor)
{
    char hello[] = "hello", again[] = "again";
    char *first[] = {hello}, *second[] = {again};
    size_t size[] = {5};
    int rc = round_trip(dealer, first, size, 1);
    if (rc != PEER_OK)
        return rc;
    zmq_sleep(1);
    /* Checked before the second message, whose echo lets the server go. */
    rc = connection_held(monitor);
    return rc != PEER_OK ? rc : round_trip(dealer, second, size, 1);
}

enum client_kind {
    CLIENT_ECHO,
    CLIENT_HEARTBEAT,
    CLIENT_REFUSED,
    CLIENT_WRONG_KEY
};

static int run_client(const char *endpoint, enum client_kind kind)
{
    void *ctx = zmq_ctx_new();
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    set_int(dealer, ZMQ_RCVTIMEO, TIMEOUT_MS);
    set_int(dealer, ZMQ_LINGER, 0);
    char other_public[41], other_secret[41];
    if (zmq_curve_keypair(other_public, other_secret) != 0)
        return PEER_FAILED;
    set_key(dealer, ZMQ_CURVE_SERVERKEY,
            kind == CLIENT_WRONG_KEY ? other_public : server_public);
    if (kind == CLIENT_REFUSED) {
        set_key(dealer, ZMQ_CURVE_PUBLICKEY, other_public);
        set_key(dealer, ZMQ_CURVE_SECRETKEY, other_secret);
    } else {
        set_key(dealer, ZMQ_CURVE_PUBLICKEY, client_public);
        set_key(dealer, ZMQ_CURVE_SECRETKEY, client_secret);
    }
    if (kind == CLIENT_HEARTBEAT) {
        set_int(dealer, ZMQ_HEARTBEAT_IVL, HEARTBEAT_IVL_MS);
        set_int(dealer, ZMQ_HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS);
    }
    void *monitor = monitor_open(ctx, dealer, "inproc://client-events");
    if (zmq_connect(dealer, endpoint) != 0)
        return PEER_FAILED;
    int rc;
    switch (kind) {
    case CLIENT_ECHO:
        rc = exchange(dealer);
        break;
    case CLIENT_HEARTBEAT:
        rc = heartbeat_exchange(dealer, monitor);
        break;
    case CLIENT_REFUSED:
        rc = wait_failed(monitor, 1);
        break;
    default:
        rc = wait_failed(monitor, 0);
        break;
    }
    zmq_close(monitor);
    zmq_close(dealer);
    zmq_ctx_term(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    if (!zmq_has("curve")) {
        fprintf(stderr, "zmq_curve_peer: this libzmq has no CURVE\n");
        return PEER_FAILED;
    }
    const char *mode = argc == 3 ? argv[1] : "";
    if (strcmp(mode, "server") == 0)
        return run_server(argv[2], SERVER_ECHO);
    if (strcmp(mode, "server-heartbeat") == 0)
        return run_server(argv[2], SERVER_HEARTBEAT);
    if (strcmp(mode, "server-refuse") == 0)
        return run_server(argv[2], SERVER_REFUSE);
    if (strcmp(mode, "client") == 0)
        return run_client(argv[2], CLIENT_ECHO);
    if (strcmp(mode, "client-heartbeat") == 0)
        return run_client(argv[2], CLIENT_HEARTBEAT);
    if (strcmp(mode, "client-refused") == 0)
        return run_client(argv[2], CLIENT_REFUSED);
    if (strcmp(mode, "client-wrongkey") == 0)
        return run_client(argv[2], CLIENT_WRONG_KEY);
    fprintf(stderr,
            "usage: zmq_curve_peer server|server-heartbeat|server-refuse "
            "ENDPOINT\n"
            "       zmq_curve_peer client|client-heartbeat|client-refused|"
            "client-wrongkey ENDPOINT\n");
    return 64;
}
