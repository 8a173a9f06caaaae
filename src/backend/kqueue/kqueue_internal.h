/* kqueue_internal.h — the calls between the kqueue backend's own files; the
 * structures are the readiness backends' (posix/readiness.h). Private to
 * src/backend/kqueue. */
#ifndef ZL_KQUEUE_INTERNAL_H
#define ZL_KQUEUE_INTERNAL_H

#include "readiness.h"

/* poller.c */
/* Applies one change for io's fd at once. 0 or -errno. */
int zl_kq_change(struct zl_posix_io *io, short filter, unsigned short flags);
/* The events of a handle. */
void zl_kq_handle_event(zl_handle *h, const struct kevent *ev);

/* write.c: registers a one-shot EVFILT_WRITE unless one is armed. */
int zl_kq_arm_write(zl_handle *h);

/* listener.c */
void zl_kq_listener_event(zl_listener *l, const struct kevent *ev);

#endif
