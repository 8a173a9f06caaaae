/* epoll_internal.h — the calls between the epoll backend's own files; the
 * structures are the readiness backends' (posix/readiness.h). Private to
 * src/backend/epoll (and tests/test_epoll.c). */
#ifndef ZL_EPOLL_INTERNAL_H
#define ZL_EPOLL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "readiness.h"

/* poller.c: the edges of a handle. */
void zl_epoll_handle_event(zl_handle *h, uint32_t events);
/* interest.c: the loop's thread's write on h waits for EPOLLOUT (or no
 * longer does), which h's registration must then include. */
void zl_epoll_output_waits(zl_handle *h, bool waits);
/* listener.c */
void zl_epoll_listener_event(zl_listener *l, uint32_t events);

/* loopback.c: a congestion control that does not pace, when addr is a
 * loopback address: the peer, before connect() and after accept(), or the
 * address a listener binds, before listen(). */
struct sockaddr;
void zl_epoll_unpace_loopback(int fd, const struct sockaddr *addr);
/* 127.0.0.0/8, ::1, or 127.0.0.0/8 mapped into IPv6. */
bool zl_epoll_is_loopback(const struct sockaddr *sa);

#endif
