/* loop_impl.h — epoll's part of the loop the readiness backends share
 * (posix/readiness.h): the epoll set, the wake's eventfd and the events of
 * one wait. */
#ifndef ZL_EPOLL_LOOP_IMPL_H
#define ZL_EPOLL_LOOP_IMPL_H

#include <sys/epoll.h>

enum { ZL_EPOLL_MAX_EVENTS = 256 };

struct zl_poller {
    int epoll_fd;
    int wake_fd; /* eventfd; its epoll data.ptr is NULL */
    struct epoll_event events[ZL_EPOLL_MAX_EVENTS];
};

#endif
