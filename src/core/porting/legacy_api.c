/* legacy_api.c — the older libzmq entry points that ported programs still
 * call (zmq_init, zmq_sendmsg, zmq_sendiov, zmq_device, …), written on
 * zlink's own functions. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "zlink.h"

/* Same fields as POSIX struct iovec, which zlink.h names without defining
 * (libzmq's zmq.h does the same), so this file needs no <sys/uio.h>. */
typedef struct io_vector {
    void *base;
    size_t len;
} io_vector;

void *zlink_init(int io_threads)
{
    if (io_threads < 0) {
        errno = EINVAL;
        return NULL;
    }
    void *ctx = zlink_ctx_new();
    if (ctx && zlink_ctx_set(ctx, ZLINK_IO_THREADS, io_threads) != 0) {
        int err = errno;
        zlink_ctx_term(ctx);
        errno = err;
        return NULL;
    }
    return ctx;
}

int zlink_term(void *context)
{
    return zlink_ctx_term(context);
}

int zlink_sendmsg(void *socket, zlink_msg_t *msg, int flags)
{
    return zlink_msg_send(msg, socket, flags);
}

int zlink_recvmsg(void *socket, zlink_msg_t *msg, int flags)
{
    return zlink_msg_recv(msg, socket, flags);
}

int zlink_sendiov(void *socket, struct iovec *iov, size_t count, int flags)
{
    const io_vector *parts = (const io_vector *)(void *)iov;
    if (!parts || count == 0) {
        errno = EINVAL;
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < count; i++) {
        zlink_msg_t msg;
        if (zlink_msg_init_size(&msg, parts[i].len) != 0)
            return -1;
        if (parts[i].len)
            memcpy(zlink_msg_data(&msg), parts[i].base, parts[i].len);
        /* libzmq's contract: every part takes the caller's flags, and the
         * last one never SNDMORE, so ZLINK_SNDMORE sends one whole message
         * of count parts and 0 sends count messages. */
        int part_flags = i + 1 < count ? flags : flags & ~ZLINK_SNDMORE;
        rc = zlink_msg_send(&msg, socket, part_flags);
        if (rc < 0) {
            int err = errno;
            zlink_msg_close(&msg);
            errno = err;
            return -1;
        }
    }
    return rc;
}

/* As libzmq: each part lands in a buffer malloc'd for it (the caller frees
 * it), *count becomes the parts received, and the return value too. */
int zlink_recviov(void *socket, struct iovec *iov, size_t *count, int flags)
{
    io_vector *parts = (io_vector *)(void *)iov;
    if (!parts || !count || *count == 0) {
        errno = EINVAL;
        return -1;
    }
    size_t capacity = *count;
    *count = 0;
    int received = 0;
    bool more = true;
    for (size_t i = 0; more && i < capacity; i++) {
        zlink_msg_t msg;
        zlink_msg_init(&msg);
        if (zlink_msg_recv(&msg, socket, flags) < 0) {
            int err = errno;
            zlink_msg_close(&msg);
            errno = err;
            return -1;
        }
        size_t size = zlink_msg_size(&msg);
        parts[i].base = malloc(size ? size : 1);
        if (!parts[i].base) {
            zlink_msg_close(&msg);
            errno = ENOMEM;
            return -1;
        }
        parts[i].len = size;
        memcpy(parts[i].base, zlink_msg_data(&msg), size);
        more = zlink_msg_more(&msg) != 0;
        zlink_msg_close(&msg);
        ++*count;
        received++;
    }
    return received;
}

int zlink_device(int type, void *frontend, void *backend)
{
    if (type != ZLINK_STREAMER && type != ZLINK_FORWARDER &&
        type != ZLINK_QUEUE) {
        errno = EINVAL;
        return -1;
    }
    return zlink_proxy(frontend, backend, NULL);
}

void zlink_zmq_api_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = ZLINK_ZMQ_API_MAJOR;
    if (minor)
        *minor = ZLINK_ZMQ_API_MINOR;
    if (patch)
        *patch = ZLINK_ZMQ_API_PATCH;
}
