/* proxy.c — zlink_proxy and zlink_proxy_steerable: forward whole messages
 * between two sockets both ways, copy them to a capture socket, and obey
 * PAUSE / RESUME / TERMINATE / STATISTICS on a control socket (libzmq's
 * proxy.cpp, built on the public API). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "zlink.h"

/* Messages forwarded in one direction before the other gets a turn. */
#define PROXY_BURST 1000

typedef enum proxy_state {
    PROXY_ACTIVE,
    PROXY_PAUSED,
    PROXY_TERMINATED
} proxy_state;

/* STATISTICS answers with these, frontend then backend, as libzmq. */
typedef struct socket_stats {
    uint64_t msg_in, bytes_in, msg_out, bytes_out;
} socket_stats;

typedef struct proxy {
    void *frontend, *backend, *capture, *control;
    socket_stats frontend_stats, backend_stats;
    proxy_state state;
    zlink_msg_t msg;
} proxy;

static int rcvmore(void *socket, int *more)
{
    size_t len = sizeof *more;
    return zlink_getsockopt(socket, ZLINK_RCVMORE, more, &len);
}

/* A copy of the part for the capture socket, if there is one. */
static int capture_part(proxy *p, zlink_msg_t *msg, int more)
{
    if (p->capture == NULL)
        return 0;
    zlink_msg_t copy;
    zlink_msg_init(&copy);
    if (zlink_msg_copy(&copy, msg) != 0)
        return -1;
    if (zlink_msg_send(&copy, p->capture, more ? ZLINK_SNDMORE : 0) < 0) {
        int err = zlink_errno();
        zlink_msg_close(&copy);
        errno = err;
        return -1;
    }
    return 0;
}

/* Forwards up to a burst of whole messages from one socket to the other.
 * The caller saw `from` readable and `to` writable. */
static int forward(proxy *p, void *from, socket_stats *from_stats, void *to,
                   socket_stats *to_stats)
{
    for (int i = 0; i < PROXY_BURST; i++) {
        uint64_t bytes = 0;
        bool started = false;
        int more = 1;
        while (more) {
            if (zlink_msg_recv(&p->msg, from, ZLINK_DONTWAIT) < 0) {
                /* The end of the burst, never inside a message: the rest
                 * of a message is always there with its first part. */
                return zlink_errno() == EAGAIN && !started ? 0 : -1;
            }
            started = true;
            bytes += zlink_msg_size(&p->msg);
            if (rcvmore(from, &more) != 0 || capture_part(p, &p->msg, more))
                return -1;
            if (zlink_msg_send(&p->msg, to, more ? ZLINK_SNDMORE : 0) < 0)
                return -1;
        }
        /* A multipart message counts as one. */
        from_stats->msg_in++;
        from_stats->bytes_in += bytes;
        to_stats->msg_out++;
        to_stats->bytes_out += bytes;
    }
    return 0;
}

static int send_stat(void *control, uint64_t value, int flags)
{
    return zlink_send(control, &value, sizeof value, flags) < 0 ? -1 : 0;
}

static int reply_statistics(proxy *p)
{
    const socket_stats *f = &p->frontend_stats, *b = &p->backend_stats;
    uint64_t values[8] = {f->msg_in, f->bytes_in, f->msg_out, f->bytes_out,
                          b->msg_in, b->bytes_in, b->msg_out, b->bytes_out};
    for (int i = 0; i < 8; i++)
        if (send_stat(p->control, values[i], i < 7 ? ZLINK_SNDMORE : 0) != 0)
            return -1;
    return 0;
}

static bool command_is(zlink_msg_t *msg, const char *name)
{
    size_t len = strlen(name);
    return zlink_msg_size(msg) == len &&
           memcmp(zlink_msg_data(msg), name, len) == 0;
}

static int handle_control(proxy *p)
{
    if (zlink_msg_recv(&p->msg, p->control, 0) < 0)
        return -1;
    int more = 0;
    if (rcvmore(p->control, &more) != 0)
        return -1;
    if (more) {
        /* Commands are single frames. */
        errno = EINVAL;
        return -1;
    }
    if (capture_part(p, &p->msg, 0) != 0)
        return -1;
    if (command_is(&p->msg, "PAUSE"))
        p->state = PROXY_PAUSED;
    else if (command_is(&p->msg, "RESUME"))
        p->state = PROXY_ACTIVE;
    else if (command_is(&p->msg, "TERMINATE"))
        p->state = PROXY_TERMINATED;
    else if (command_is(&p->msg, "STATISTICS"))
        return reply_statistics(p);
    /* libzmq asserts on anything else; a proxy must not die of a stray
     * message, so it is ignored. */
    return 0;
}

/* What each side can do right now. */
typedef struct readiness {
    bool front_in, front_out, back_in, back_out;
} readiness;

static int look(proxy *p, readiness *r)
{
    zlink_pollitem_t items[2] = {
        {p->frontend, 0, ZLINK_POLLIN | ZLINK_POLLOUT, 0},
        {p->backend, 0, ZLINK_POLLIN | ZLINK_POLLOUT, 0}};
    int n = p->frontend == p->backend ? 1 : 2;
    if (zlink_poll(items, n, 0) < 0)
        return -1;
    r->front_in = (items[0].revents & ZLINK_POLLIN) != 0;
    r->front_out = (items[0].revents & ZLINK_POLLOUT) != 0;
    r->back_in = (items[n - 1].revents & ZLINK_POLLIN) != 0;
    r->back_out = (items[n - 1].revents & ZLINK_POLLOUT) != 0;
    return 0;
}

static int run(proxy *p)
{
    bool same = p->frontend == p->backend;
    /* A direction is blocked when its source has a message and its target
     * no room. It then waits for room rather than for input, so that a
     * full target never makes the proxy spin (libzmq's does). */
    bool front_blocked = false, back_blocked = false;
    while (p->state != PROXY_TERMINATED) {
        zlink_pollitem_t items[3];
        int n = 0;
        if (p->state == PROXY_ACTIVE) {
            short front = front_blocked ? 0 : ZLINK_POLLIN;
            short back = back_blocked || same ? 0 : ZLINK_POLLIN;
            if (back_blocked)
                front |= ZLINK_POLLOUT;
            if (front_blocked && !same)
                back |= ZLINK_POLLOUT;
            items[n++] = (zlink_pollitem_t){p->frontend, 0, front, 0};
            if (!same)
                items[n++] = (zlink_pollitem_t){p->backend, 0, back, 0};
        }
        if (p->control != NULL)
            items[n++] = (zlink_pollitem_t){p->control, 0, ZLINK_POLLIN, 0};
        if (zlink_poll(items, n, -1) < 0)
            return -1;

        if (p->control != NULL && (items[n - 1].revents & ZLINK_POLLIN) &&
            handle_control(p) != 0)
            return -1;
        if (p->state != PROXY_ACTIVE)
            continue;

        readiness r;
        if (look(p, &r) != 0)
            return -1;
        bool front_go = r.front_in && (same || r.back_out);
        bool back_go = !same && r.back_in && r.front_out;
        front_blocked = r.front_in && !front_go;
        back_blocked = r.back_in && !back_go;
        if (front_go && forward(p, p->frontend, &p->frontend_stats, p->backend,
                                &p->backend_stats) != 0)
            return -1;
        if (back_go && forward(p, p->backend, &p->backend_stats, p->frontend,
                               &p->frontend_stats) != 0)
            return -1;
    }
    return 0;
}

int zlink_proxy_steerable(void *frontend, void *backend, void *capture,
                          void *control)
{
    if (frontend == NULL || backend == NULL) {
        errno = EFAULT;
        return -1;
    }
    proxy p = {.frontend = frontend,
               .backend = backend,
               .capture = capture,
               .control = control,
               .state = PROXY_ACTIVE};
    zlink_msg_init(&p.msg);
    int rc = run(&p);
    int err = errno;
    zlink_msg_close(&p.msg);
    errno = err;
    return rc;
}

int zlink_proxy(void *frontend, void *backend, void *capture)
{
    return zlink_proxy_steerable(frontend, backend, capture, NULL);
}
