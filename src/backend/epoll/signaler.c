/* signaler.c — zl_signaler on an eventfd: a pollable flag one thread waits on
 * and any thread raises. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

int zl_signaler_init(zl_signaler *s)
{
    s->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return s->fd < 0 ? -errno : 0;
}

void zl_signaler_close(zl_signaler *s)
{
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
}

void zl_signaler_send(zl_signaler *s)
{
    uint64_t one = 1;
    /* EAGAIN means the counter is saturated: it is signalled already. */
    while (write(s->fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
}

int zl_signaler_wait(zl_signaler *s, int timeout_ms)
{
    struct pollfd pfd = {.fd = s->fd, .events = POLLIN};
    int rc = poll(&pfd, 1, timeout_ms < 0 ? -1 : timeout_ms);
    if (rc < 0)
        return -errno;
    return rc == 0 ? -EAGAIN : 0;
}

void zl_signaler_reset(zl_signaler *s)
{
    uint64_t count;
    while (read(s->fd, &count, sizeof count) < 0 && errno == EINTR)
        ;
}

zl_os_socket zl_signaler_fd(const zl_signaler *s)
{
    return s->fd;
}
