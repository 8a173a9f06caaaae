/* fuzz_server.c — the engine's side of a fuzzed server filter (see
 * fuzz_server.h). */
#include "fuzz_server.h"

#include <stdio.h>

uint32_t fuzz_next_rng(uint32_t *r)
{
    *r = *r * 1103515245u + 12345u;
    return *r >> 8;
}

void fuzz_write_seed(const char *dir, int index, const uint8_t *data,
                     size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/seed-%d", dir, index);
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fwrite(data, 1, len, f);
    fclose(f);
}

static void start_read(fuzz_driver *d);

static void on_read(zl_op *op, int status, size_t bytes)
{
    fuzz_driver *d = op->data;
    if (status != 0) {
        d->failed = true;
        return;
    }
    /* Touches what was read, so that a read past the data shows. */
    for (size_t i = 0; i < bytes; i++)
        d->sink += d->buf[i];
    start_read(d);
}

static void start_read(fuzz_driver *d)
{
    if (d->failed)
        return;
    size_t len = fuzz_next_rng(&d->rng) % 5 == 0
                     ? 0
                     : 1 + fuzz_next_rng(&d->rng) % d->read_max;
    /* Sometimes two iovecs, as the engine's large-body reads. */
    zl_iovec iov[2] = {{d->buf, len}, {NULL, 0}};
    int n = 1;
    if (d->split_reads && len > 1 && fuzz_next_rng(&d->rng) % 3 == 0) {
        size_t cut = 1 + fuzz_next_rng(&d->rng) % (len - 1);
        iov[0].len = cut;
        iov[1] = (zl_iovec){d->buf + cut, len - cut};
        n = 2;
    }
    zl_stream_readv(d->stream, &d->read_op, iov, n);
}

static void start_write(fuzz_driver *d);

static void on_write(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    fuzz_driver *d = op->data;
    if (status != 0) {
        d->failed = true;
        return;
    }
    start_write(d);
}

/* The frames, cut at two random places across three iovecs. */
static void start_write(fuzz_driver *d)
{
    if (d->failed || d->writes_left-- <= 0)
        return;
    const uint8_t *frames = d->frames;
    size_t n = d->frames_len;
    size_t cut1 = 1 + fuzz_next_rng(&d->rng) % (n - 2);
    size_t cut2 = cut1 + 1 + fuzz_next_rng(&d->rng) % (n - cut1 - 1);
    d->out_iov[0] = (zl_iovec){(void *)frames, cut1};
    d->out_iov[1] = (zl_iovec){(void *)(frames + cut1), cut2 - cut1};
    d->out_iov[2] = (zl_iovec){(void *)(frames + cut2), n - cut2};
    zl_stream_write(d->stream, &d->write_op, d->out_iov, 3);
}

static void on_handshake(zl_op *op, int status, size_t bytes)
{
    (void)bytes;
    fuzz_driver *d = op->data;
    if (status != 0) {
        d->failed = true;
        return;
    }
    d->handshaken = true;
    start_write(d);
    start_read(d);
}

void fuzz_driver_start(fuzz_driver *d, zl_stream *stream)
{
    if (d->read_max > FUZZ_READ_MAX)
        d->read_max = FUZZ_READ_MAX;
    d->stream = stream;
    d->handshake_op = (zl_op){.cb = on_handshake, .data = d};
    d->read_op = (zl_op){.cb = on_read, .data = d};
    d->write_op = (zl_op){.cb = on_write, .data = d};
    zl_stream_handshake(stream, &d->handshake_op);
}

void fuzz_driver_close(fuzz_driver *d, zl_loop *loop)
{
    zl_stream_close(d->stream);
    for (int turn = 0, idle = 0; turn < 200 && idle < 2; turn++)
        idle = zl_loop_run_once(loop, 2) == 0 ? idle + 1 : 0;
}
