/* loop_impl.h — kqueue's part of the loop the readiness backends share
 * (posix/readiness.h): the kqueue, the wake pipe where there is no
 * EVFILT_USER, and the events of one wait. */
#ifndef ZL_KQUEUE_LOOP_IMPL_H
#define ZL_KQUEUE_LOOP_IMPL_H

#include <stdint.h>
#include <sys/types.h>

#include <sys/event.h>

enum { ZL_KQ_MAX_EVENTS = 256 };

struct zl_poller {
    int kq;
#ifndef EVFILT_USER
    int wake_pipe[2]; /* where there is no EVFILT_USER */
#endif
    struct kevent events[ZL_KQ_MAX_EVENTS];
};

#endif
