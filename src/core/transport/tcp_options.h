/* tcp_options.h — the tcp socket options (ZLINK_TCP_KEEPALIVE*,
 * ZLINK_TCP_MAXRT, ZLINK_TOS, ZLINK_BINDTODEVICE, ZLINK_CONNECT_TIMEOUT)
 * with libzmq's values, defaults and checks. */
#ifndef ZL_TCP_OPTIONS_H
#define ZL_TCP_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

struct zl_options;

bool zl_tcp_is_option(int option);
/* 0, or -1 with errno EINVAL (bad value or length). */
int zl_tcp_option_set(struct zl_options *o, int option, const void *val,
                      size_t len);
int zl_tcp_option_get(const struct zl_options *o, int option, void *val,
                      size_t *len);

#endif
