/* sub.c — SUB: XSUB with filtering on, subscriptions set through
 * ZLINK_SUBSCRIBE / ZLINK_UNSUBSCRIBE, and no send. */
#include <errno.h>

#include "patterns/pattern.h"
#include "socket.h"
#include "xsub.h"

static void sub_init(zl_socket *s)
{
    zl_xsub_init(s);
    ((zl_xsub *)s->pattern)->filter = true;
}

static int sub_send(zl_socket *s, zlink_msg_t *msg)
{
    (void)s;
    (void)msg;
    errno = ENOTSUP;
    return -1;
}

static bool sub_has_out(zl_socket *s)
{
    (void)s;
    return false;
}

static int sub_setsockopt(zl_socket *s, int option, const void *val, size_t len)
{
    if (option != ZLINK_SUBSCRIBE && option != ZLINK_UNSUBSCRIBE) {
        errno = EINVAL;
        return -1;
    }
    return zl_xsub_subscribe(s, option == ZLINK_SUBSCRIBE, val, len);
}

const zl_pattern_ops zl_sub_ops = {
    .type = ZLINK_SUB,
    .state_size = sizeof(zl_xsub),
    .init = sub_init,
    .destroy = zl_xsub_destroy,
    .attach_pipe = zl_xsub_attach_pipe,
    .pipe_terminated = zl_xsub_pipe_terminated,
    .read_activated = zl_xsub_read_activated,
    .write_activated = zl_xsub_write_activated,
    .hiccuped = zl_xsub_hiccuped,
    .send = sub_send,
    .recv = zl_xsub_recv,
    .has_in = zl_xsub_has_in,
    .has_out = sub_has_out,
    .setsockopt = sub_setsockopt,
    .getsockopt = NULL,
};
