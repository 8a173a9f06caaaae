/* monitor.c — zlink_socket_monitor: events written as libzmq's two frames
 * (6 bytes: 16-bit event + 32-bit value, native order; then the endpoint)
 * to an inproc PAIR that the application connects to. */
#include "monitor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "socket.h"
#include "transport/address.h"
#include "zlink.h"

typedef struct zl_monitor {
    void *pair; /* our PAIR, bound to the application's inproc name */
    int events;
} zl_monitor;

/* Called with s->monitor_lock held. Never blocks: a monitor nobody reads
 * loses events once its queue is full. */
static void send_event(zl_monitor *m, int event, uint64_t value,
                       const char *endpoint)
{
    uint8_t frame[6];
    uint16_t event16 = (uint16_t)event;
    uint32_t value32 = (uint32_t)value;
    memcpy(frame, &event16, 2);
    memcpy(frame + 2, &value32, 4);
    if (zlink_send(m->pair, frame, sizeof frame,
                   ZLINK_SNDMORE | ZLINK_DONTWAIT) < 0)
        return;
    const char *text = endpoint ? endpoint : "";
    zlink_send(m->pair, text, strlen(text), ZLINK_DONTWAIT);
}

void zl_monitor_event(zl_socket *s, int event, uint64_t value,
                      const char *endpoint)
{
    uv_mutex_lock(&s->monitor_lock);
    zl_monitor *m = s->monitor;
    if (m && (m->events & event))
        send_event(m, event, value, endpoint);
    uv_mutex_unlock(&s->monitor_lock);
}

static void close_monitor(zl_socket *s)
{
    zl_monitor *m = s->monitor;
    if (!m)
        return;
    if (m->events & ZLINK_EVENT_MONITOR_STOPPED)
        send_event(m, ZLINK_EVENT_MONITOR_STOPPED, 0, "");
    zlink_close(m->pair);
    free(m);
    s->monitor = NULL;
}

void zl_monitor_stop(zl_socket *s)
{
    uv_mutex_lock(&s->monitor_lock);
    close_monitor(s);
    uv_mutex_unlock(&s->monitor_lock);
}

void zl_monitor_destroy(zl_socket *s) { zl_monitor_stop(s); }

int zlink_socket_monitor(void *handle, const char *endpoint, int events)
{
    zl_socket *s = zl_socket_from_handle(handle);
    if (!s)
        return -1;
    /* Events are libzmq's first version: 16 bits. A wider mask names events
     * this API cannot report, so it is refused, as libzmq does. */
    if ((unsigned)events >> 16 != 0) {
        errno = EINVAL;
        return -1;
    }
    if (!endpoint) {
        zl_monitor_stop(s);
        return 0;
    }
    zl_transport transport;
    const char *rest;
    if (zl_endpoint_split(endpoint, &transport, &rest) != 0)
        return -1;
    if (transport != ZL_TRANSPORT_INPROC) {
        errno = EPROTONOSUPPORT;
        return -1;
    }
    zl_monitor *m = calloc(1, sizeof *m);
    if (!m) {
        errno = ENOMEM;
        return -1;
    }
    m->events = events;
    m->pair = zlink_socket(s->ctx, ZLINK_PAIR);
    int linger = 0;
    if (!m->pair ||
        zlink_setsockopt(m->pair, ZLINK_LINGER, &linger, sizeof linger) != 0 ||
        zlink_bind(m->pair, endpoint) != 0) {
        int err = errno;
        if (m->pair)
            zlink_close(m->pair);
        free(m);
        errno = err;
        return -1;
    }
    uv_mutex_lock(&s->monitor_lock);
    close_monitor(s);
    s->monitor = m;
    uv_mutex_unlock(&s->monitor_lock);
    return 0;
}
