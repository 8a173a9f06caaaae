/* tcp_opts.h — the TCP socket settings the POSIX backends share: keepalive,
 * MAXRT, TOS, the bound device and the source address of a connect. */
#ifndef ZL_POSIX_TCP_OPTS_H
#define ZL_POSIX_TCP_OPTS_H

#include "backend.h"

/* Before bind or connect: TOS and the device. 0 or -errno. */
int zl_posix_tcp_prepare(int fd, int family, const zl_tcp_opts *opts);
/* Before connect: binds to the source address (SO_REUSEADDR first, as
 * libzmq, so that a fixed source port can be reused at once). */
int zl_posix_bind_source(int fd, const zl_addr *src);
/* On a connected socket: keepalive, MAXRT and TOS. 0 or the first -errno. */
int zl_posix_tcp_tune(int fd, const zl_tcp_opts *opts);

#endif
