/* accept_filter.h — libzmq's deprecated accept filters: the peers a bound
 * socket takes connections from, by address (ZLINK_TCP_ACCEPT_FILTER) or,
 * over ipc, by the peer process's credentials (ZLINK_IPC_FILTER_UID, _GID,
 * _PID). A connection none of the set filters admits is closed as soon as
 * it is accepted, before any byte is read from it. */
#ifndef ZL_ACCEPT_FILTER_H
#define ZL_ACCEPT_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"

typedef struct zl_accept_filters zl_accept_filters;

/* ZLINK_TCP_ACCEPT_FILTER: "address" or "address/bits" adds a filter
 * (IPv6 ones only when ipv6 is set, as libzmq); NULL or "" clears them.
 * *f is made on the first filter. -1 with errno EINVAL or ENOMEM. */
int zl_accept_filters_add_tcp(zl_accept_filters **f, const void *val,
                              size_t len, bool ipv6);

/* ZLINK_IPC_FILTER_UID, _GID or _PID: one id (uid_t, gid_t, pid_t) adds
 * it; NULL with length 0 clears that kind. EINVAL where the OS cannot tell
 * a peer's credentials (Windows; _PID outside Linux). */
int zl_accept_filters_add_ipc(zl_accept_filters **f, int option,
                              const void *val, size_t len);

/* A copy of f (NULL for NULL); -1 with ENOMEM. */
int zl_accept_filters_copy(zl_accept_filters **dst, const zl_accept_filters *f);
void zl_accept_filters_free(zl_accept_filters *f);

/* Whether the peer on an accepted handle passes: true when no filter of
 * its kind (address for tcp, credentials for ipc) is set. */
bool zl_accept_filters_admit(const zl_accept_filters *f, zl_handle *h);

#endif
