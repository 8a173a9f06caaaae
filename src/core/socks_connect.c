/* socks_connect.c — drives the SOCKS5 exchange on a handle: one write or one
 * read pending at a time, each exactly as long as the protocol's step. */
#include "socks_connect.h"

#include <errno.h>
#include <stdlib.h>

#include "transport/socks.h"

typedef struct zl_socks_connect {
    zl_socks_client client;
    zl_handle *handle;
    zl_op op;
    zl_iovec out; /* the write's iovec, alive until it completes */
    zl_socks_done_fn done;
    void *owner;
} zl_socks_connect;

static void on_written(zl_op *op, int status, size_t bytes);
static void on_read(zl_op *op, int status, size_t bytes);

static void finish(zl_socks_connect *c, int status)
{
    zl_socks_done_fn done = c->done;
    void *owner = c->owner;
    free(c);
    done(owner, status);
}

/* Sends what the client has to say, or reads what it waits for. */
static void next_step(zl_socks_connect *c)
{
    if (c->client.send_len > 0) {
        c->out.base = (void *)c->client.send;
        c->out.len = c->client.send_len;
        c->op.cb = on_written;
        zl_handle_write(c->handle, &c->op, &c->out, 1);
        return;
    }
    uint8_t *buf;
    size_t want = zl_socks_client_want(&c->client, &buf);
    c->op.cb = on_read;
    zl_handle_read(c->handle, &c->op, buf, want);
}

static void on_written(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    zl_socks_connect *c = op->data;
    if (status != 0) {
        finish(c, status);
        return;
    }
    zl_socks_client_sent(&c->client);
    next_step(c);
}

static void on_read(zl_op *op, int status, size_t bytes)
{
    zl_socks_connect *c = op->data;
    if (status != 0) {
        finish(c, status);
        return;
    }
    switch (zl_socks_client_received(&c->client, bytes)) {
    case ZL_SOCKS_DONE:
        finish(c, 0);
        return;
    case ZL_SOCKS_FAILED:
        finish(c, -EPROTO);
        return;
    default:
        next_step(c);
        return;
    }
}

int zl_socks_connect_start(zl_handle *h, const char *hostport,
                           const char *username, const char *password,
                           zl_socks_done_fn done, void *owner)
{
    zl_socks_connect *c = calloc(1, sizeof *c);
    if (!c) {
        errno = ENOMEM;
        return -1;
    }
    if (zl_socks_client_init(&c->client, hostport, username, password) != 0) {
        free(c);
        errno = EINVAL;
        return -1;
    }
    c->handle = h;
    c->op.data = c;
    c->done = done;
    c->owner = owner;
    next_step(c);
    return 0;
}
