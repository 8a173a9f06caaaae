/* accept_backoff.c — the wait after an accept that failed for want of
 * resources: one try and one ACCEPT_FAILED per interval, however long the
 * shortage lasts. */
#include "accept_backoff.h"

#include <errno.h>

/* The first retry after an accept failed for want of resources, and the
 * longest wait between two: the interval doubles from one to the other
 * while the failures go on. The first is short, so that an fd freed a
 * moment later costs the waiting clients little; the last bounds both what
 * a listener stuck at the limit costs (one accept and one ACCEPT_FAILED a
 * second) and how long a waiting client waits once fds are free again. */
#define ACCEPT_BACKOFF_FIRST_MS 10
#define ACCEPT_BACKOFF_MAX_MS 1000

/* A failure that used up one queued connection, the peer's or its
 * network's doing: the next connection may well succeed, so accept it at
 * once. Any other failure (out of fds or memory above all) would only
 * repeat until something changes: accepting again at once spun the I/O
 * thread and flooded the monitor with ACCEPT_FAILED. */
static bool failed_one_connection(int status)
{
    switch (-status) {
    case ECONNABORTED:
    case ECONNRESET:
    case EPROTO:
    case EPERM:
    case ETIMEDOUT:
    case ENETDOWN:
    case ENETUNREACH:
    case EHOSTUNREACH:
        return true;
    default:
        return false;
    }
}

void zl_accept_backoff_init(zl_accept_backoff *b, zl_timer_cb retry, void *data)
{
    b->timer.cb = retry;
    b->timer.data = data;
    b->backoff_ms = 0;
}

bool zl_accept_backoff_after(zl_accept_backoff *b, zl_loop *loop, int status)
{
    if (status == 0) {
        b->backoff_ms = 0;
        return false;
    }
    if (failed_one_connection(status))
        return false;
    uint32_t next = b->backoff_ms ? b->backoff_ms * 2 : ACCEPT_BACKOFF_FIRST_MS;
    b->backoff_ms = next < ACCEPT_BACKOFF_MAX_MS ? next : ACCEPT_BACKOFF_MAX_MS;
    zl_timer_start(loop, &b->timer, b->backoff_ms);
    return true;
}

bool zl_accept_backoff_waiting(const zl_accept_backoff *b)
{
    return zl_timer_active(&b->timer);
}

void zl_accept_backoff_stop(zl_accept_backoff *b, zl_loop *loop)
{
    zl_timer_stop(loop, &b->timer);
}
