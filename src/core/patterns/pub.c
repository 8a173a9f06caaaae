/* pub.c — PUB: XPUB that keeps what subscribers send to itself and cannot
 * receive. */
#include <errno.h>

#include "patterns/pattern.h"
#include "socket.h"
#include "xpub.h"

static int pub_recv(zl_socket *s, zlink_msg_t *msg)
{
    (void)s;
    (void)msg;
    errno = ENOTSUP;
    return -1;
}

static bool pub_has_in(zl_socket *s)
{
    (void)s;
    return false;
}

const zl_pattern_ops zl_pub_ops = {
    .type = ZLINK_PUB,
    .state_size = sizeof(zl_xpub),
    .init = zl_xpub_init,
    .destroy = zl_xpub_destroy,
    .attach_pipe = zl_xpub_attach_pipe,
    .pipe_terminated = zl_xpub_pipe_terminated,
    .read_activated = zl_xpub_read_activated,
    .write_activated = zl_xpub_write_activated,
    .send = zl_xpub_send,
    .recv = pub_recv,
    .has_in = pub_has_in,
    .has_out = zl_xpub_has_out,
    /* libzmq's PUB takes the XPUB options (NODROP, WELCOME_MSG, …). */
    .setsockopt = zl_xpub_setsockopt,
    .getsockopt = NULL,
};
