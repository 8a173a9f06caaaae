/* tcp_options.c — the tcp socket options: libzmq's checks on the way in,
 * zl_tcp_opts (backend.h) for the backend to apply on the way out. */
#include "tcp_options.h"

#include <errno.h>
#include <string.h>

#include "options.h"
#include "zlink.h"

bool zl_tcp_is_option(int option)
{
    switch (option) {
    case ZLINK_TCP_KEEPALIVE:
    case ZLINK_TCP_KEEPALIVE_CNT:
    case ZLINK_TCP_KEEPALIVE_IDLE:
    case ZLINK_TCP_KEEPALIVE_INTVL:
    case ZLINK_TOS:
    case ZLINK_CONNECT_TIMEOUT:
    case ZLINK_TCP_MAXRT:
    case ZLINK_BINDTODEVICE:
        return true;
    default:
        return false;
    }
}

static int set_int(int *field, const void *val, size_t len, int min, int max)
{
    int v = 0;
    if (zl_option_int(val, len, &v) != 0)
        return -1;
    if (v < min || v > max) {
        errno = EINVAL;
        return -1;
    }
    *field = v;
    return 0;
}

/* As libzmq: (NULL, 0) clears it, otherwise up to 16 bytes (a trailing NUL
 * is allowed and dropped). */
static int set_device(char *device, const void *val, size_t len)
{
    if (!val && len == 0) {
        device[0] = '\0';
        return 0;
    }
    if (!val || len > ZL_DEVICE_MAX + 1) {
        errno = EINVAL;
        return -1;
    }
    if (len > 0 && ((const char *)val)[len - 1] == '\0')
        len--;
    if (len > ZL_DEVICE_MAX || memchr(val, '\0', len)) {
        errno = EINVAL;
        return -1;
    }
    memcpy(device, val, len);
    device[len] = '\0';
    return 0;
}

int zl_tcp_option_set(zl_options *o, int option, const void *val, size_t len)
{
    zl_tcp_opts *t = &o->tcp;
    switch (option) {
    case ZLINK_TCP_KEEPALIVE:
        return set_int(&t->keepalive, val, len, -1, 1);
    case ZLINK_TCP_KEEPALIVE_CNT:
        return set_int(&t->keepalive_cnt, val, len, -1, 0x7fffffff);
    case ZLINK_TCP_KEEPALIVE_IDLE:
        return set_int(&t->keepalive_idle, val, len, -1, 0x7fffffff);
    case ZLINK_TCP_KEEPALIVE_INTVL:
        return set_int(&t->keepalive_intvl, val, len, -1, 0x7fffffff);
    case ZLINK_TOS:
        return set_int(&t->tos, val, len, 0, 0x7fffffff);
    case ZLINK_CONNECT_TIMEOUT:
        return set_int(&o->connect_timeout, val, len, 0, 0x7fffffff);
    case ZLINK_TCP_MAXRT:
        return set_int(&t->maxrt, val, len, 0, 0x7fffffff);
    case ZLINK_BINDTODEVICE:
        return set_device(t->device, val, len);
    default:
        errno = EINVAL;
        return -1;
    }
}

int zl_tcp_option_get(const zl_options *o, int option, void *val, size_t *len)
{
    const zl_tcp_opts *t = &o->tcp;
    switch (option) {
    case ZLINK_TCP_KEEPALIVE:
        return zl_option_put_int(val, len, t->keepalive);
    case ZLINK_TCP_KEEPALIVE_CNT:
        return zl_option_put_int(val, len, t->keepalive_cnt);
    case ZLINK_TCP_KEEPALIVE_IDLE:
        return zl_option_put_int(val, len, t->keepalive_idle);
    case ZLINK_TCP_KEEPALIVE_INTVL:
        return zl_option_put_int(val, len, t->keepalive_intvl);
    case ZLINK_TOS:
        return zl_option_put_int(val, len, t->tos);
    case ZLINK_CONNECT_TIMEOUT:
        return zl_option_put_int(val, len, o->connect_timeout);
    case ZLINK_TCP_MAXRT:
        return zl_option_put_int(val, len, t->maxrt);
    case ZLINK_BINDTODEVICE: {
        size_t need = strlen(t->device) + 1;
        if (!val || !len || *len < need) {
            errno = EINVAL;
            return -1;
        }
        memcpy(val, t->device, need);
        *len = need;
        return 0;
    }
    default:
        errno = EINVAL;
        return -1;
    }
}
