/* signaler.c — zl_signaler on a pipe (macOS and the BSDs have no eventfd):
 * a pollable flag one thread waits on and any thread raises. */
#include "backend.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

int zl_signaler_init(zl_signaler *s)
{
    if (pipe(s->fds) != 0) {
        s->fds[0] = s->fds[1] = -1;
        return -errno;
    }
    for (int i = 0; i < 2; i++) {
        int flags = fcntl(s->fds[i], F_GETFL);
        if (fcntl(s->fds[i], F_SETFD, FD_CLOEXEC) != 0 || flags < 0 ||
            fcntl(s->fds[i], F_SETFL, flags | O_NONBLOCK) != 0) {
            int err = -errno;
            zl_signaler_close(s);
            return err;
        }
    }
    return 0;
}

void zl_signaler_close(zl_signaler *s)
{
    for (int i = 0; i < 2; i++) {
        if (s->fds[i] >= 0)
            close(s->fds[i]);
        s->fds[i] = -1;
    }
}

void zl_signaler_send(zl_signaler *s)
{
    char one = 1;
    /* EAGAIN means the pipe is full: it is signalled already. */
    while (write(s->fds[1], &one, 1) < 0 && errno == EINTR)
        ;
}

int zl_signaler_wait(zl_signaler *s, int timeout_ms)
{
    struct pollfd pfd = {.fd = s->fds[0], .events = POLLIN};
    int rc = poll(&pfd, 1, timeout_ms < 0 ? -1 : timeout_ms);
    if (rc < 0)
        return -errno;
    return rc == 0 ? -EAGAIN : 0;
}

void zl_signaler_reset(zl_signaler *s)
{
    char buf[64];
    for (;;) {
        ssize_t n = read(s->fds[0], buf, sizeof buf);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        return;
    }
}

zl_os_socket zl_signaler_fd(const zl_signaler *s)
{
    return s->fds[0];
}
