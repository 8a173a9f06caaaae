/* fuzz_tls.c — a libFuzzer target for what tls:// reads from the network:
 * the TLS filter as a server, over a fake lower stream that hands it the
 * input in reads of varying length, on a real loop, read and written the
 * way the engine does (buffers of varying size, probes, ZMTP frames going
 * out). Nothing a client sends may read or write out of bounds, leak, or
 * break the stream contract (each op completes once, never inside its
 * call).
 *
 * The input: byte 0 picks the mode and seeds the read lengths, the rest is
 * the client's bytes. Mode bit 0 clear: the bytes are the whole stream from
 * the first byte (ClientHello parsing, record checks before and during the
 * handshake). Bit 0 set: a real mbedTLS client first completes a handshake
 * (resuming a session after the first input, so that a run is not all
 * ECDSA), then the bytes follow: raw (bit 1 clear: forged records,
 * alerts, renegotiation, garbage after the handshake), or as application
 * data the client encrypts (bit 1 set: the decrypt path into reads of
 * every size).
 *
 * The server's certificate and key are made at start with mbedTLS
 * (self-signed P-256), never stored. Built and run by ci/test.sh's fuzz
 * stage like fuzz_ws. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ecp.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>

#include "fuzz_server.h"
#include "options.h"
#include "transport/stream.h"
#include "transport/tls_config.h"
#include "transport/tls_internal.h"
#include "transport/tls_stream.h"
#include "zlink.h"

#define MAX_TURNS 20000

/* ---- the server's identity, made once ---- */

static zl_options server_options;
static mbedtls_ssl_config client_conf;
static mbedtls_ssl_session client_session; /* for resumption */
static bool have_session;

static void make_identity(char *cert_pem, size_t cert_cap, char *key_pem,
                          size_t key_cap)
{
    mbedtls_pk_context key;
    mbedtls_pk_init(&key);
    if (mbedtls_pk_setup(&key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) !=
            0 ||
        mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(key),
                            zl_tls_random, NULL) != 0 ||
        mbedtls_pk_write_key_pem(&key, (unsigned char *)key_pem, key_cap) != 0)
        abort();
    mbedtls_x509write_cert crt;
    mbedtls_x509write_crt_init(&crt);
    mbedtls_x509write_crt_set_subject_key(&crt, &key);
    mbedtls_x509write_crt_set_issuer_key(&crt, &key);
    mbedtls_x509write_crt_set_md_alg(&crt, MBEDTLS_MD_SHA256);
    static const unsigned char serial[] = {1};
#if MBEDTLS_VERSION_NUMBER >= 0x03040000
    int rc = mbedtls_x509write_crt_set_serial_raw(&crt, (unsigned char *)serial,
                                                  sizeof serial);
#else
    mbedtls_mpi mpi;
    mbedtls_mpi_init(&mpi);
    int rc = mbedtls_mpi_read_binary(&mpi, serial, sizeof serial);
    if (rc == 0)
        rc = mbedtls_x509write_crt_set_serial(&crt, &mpi);
    mbedtls_mpi_free(&mpi);
#endif
    if (rc != 0 ||
        mbedtls_x509write_crt_set_subject_name(&crt, "CN=localhost") != 0 ||
        mbedtls_x509write_crt_set_issuer_name(&crt, "CN=localhost") != 0 ||
        mbedtls_x509write_crt_set_validity(&crt, "20200101000000",
                                           "20991231235959") != 0 ||
        mbedtls_x509write_crt_pem(&crt, (unsigned char *)cert_pem, cert_cap,
                                  zl_tls_random, NULL) != 0)
        abort();
    mbedtls_x509write_crt_free(&crt);
    mbedtls_pk_free(&key);
}

static void setup(void)
{
    static char cert_pem[4096], key_pem[4096];
    make_identity(cert_pem, sizeof cert_pem, key_pem, sizeof key_pem);
    zl_options_init(&server_options, ZLINK_ROUTER);
    if (zl_options_set(&server_options, ZLINK_TLS_CERT_PEM, cert_pem,
                       strlen(cert_pem)) != 0 ||
        zl_options_set(&server_options, ZLINK_TLS_KEY_PEM, key_pem,
                       strlen(key_pem)) != 0 ||
        zl_tls_settings_prepare(&server_options.tls, true) != 0)
        abort();
    /* The fuzzer's own client checks nothing: it only carries bytes. */
    mbedtls_ssl_config_init(&client_conf);
    if (mbedtls_ssl_config_defaults(&client_conf, MBEDTLS_SSL_IS_CLIENT,
                                    MBEDTLS_SSL_TRANSPORT_STREAM,
                                    MBEDTLS_SSL_PRESET_DEFAULT) != 0)
        abort();
    mbedtls_ssl_conf_authmode(&client_conf, MBEDTLS_SSL_VERIFY_NONE);
    mbedtls_ssl_conf_rng(&client_conf, zl_tls_random, NULL);
    mbedtls_ssl_session_init(&client_session);
}

/* ---- bytes in flight ---- */

typedef struct bytes {
    uint8_t *data;
    size_t len, pos, cap;
} bytes;

static void bytes_add(bytes *b, const uint8_t *p, size_t n)
{
    if (n == 0)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n)
            cap *= 2;
        b->data = realloc(b->data, cap);
        if (!b->data)
            abort();
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* ---- the fake lower stream: the client's bytes, in pieces ---- */

typedef struct fake {
    zl_stream base;
    zl_stream_deferred deferred;
    bytes in;         /* client -> server */
    bytes out;        /* server -> client */
    bool input_ended; /* nothing more comes after in */
    zl_op *read_op;
    zl_iovec read_iov[ZL_READ_IOV_MAX];
    int read_count;
    uint32_t rng;
} fake;

/* Completes the pending read once there are bytes, or the end. */
static void fake_serve(fake *f)
{
    if (!f->read_op)
        return;
    zl_op *op = f->read_op;
    size_t total = 0;
    for (int i = 0; i < f->read_count; i++)
        total += f->read_iov[i].len;
    size_t have = f->in.len - f->in.pos;
    if (have == 0) {
        if (f->input_ended) {
            f->read_op = NULL;
            zl_stream_defer(&f->deferred, op, ZL_EOF, 0);
        }
        return;
    }
    f->read_op = NULL;
    if (total == 0) { /* a probe: there is input */
        zl_stream_defer(&f->deferred, op, 0, 0);
        return;
    }
    size_t want = 1 + fuzz_next_rng(&f->rng) % 20000;
    if (want > have)
        want = have;
    size_t done = 0;
    for (int i = 0; i < f->read_count && done < want; i++) {
        size_t k =
            f->read_iov[i].len < want - done ? f->read_iov[i].len : want - done;
        memcpy(f->read_iov[i].base, f->in.data + f->in.pos + done, k);
        done += k;
    }
    f->in.pos += done;
    zl_stream_defer(&f->deferred, op, 0, done);
}

static void fake_readv(zl_stream *s, zl_op *op, const zl_iovec *iov, int n)
{
    fake *f = (fake *)s;
    if (f->read_op || n > ZL_READ_IOV_MAX)
        abort(); /* the filter broke the contract */
    f->read_op = op;
    f->read_count = n;
    for (int i = 0; i < n; i++)
        f->read_iov[i] = iov[i];
}

static void fake_write(zl_stream *s, zl_op *op, const zl_iovec *iov, int n)
{
    fake *f = (fake *)s;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        bytes_add(&f->out, iov[i].base, iov[i].len);
        total += iov[i].len;
    }
    zl_stream_defer(&f->deferred, op, 0, total);
}

static void fake_close(zl_stream *s)
{
    fake *f = (fake *)s;
    if (f->read_op) {
        zl_op *op = f->read_op;
        f->read_op = NULL;
        zl_stream_defer(&f->deferred, op, ZL_ECANCELED, 0);
    }
}

static const zl_stream_ops fake_ops = {
    .readv = fake_readv, .write = fake_write, .close = fake_close};

/* ---- the in-process client (mode bit 0) ---- */

static int client_send(void *ctx, const unsigned char *buf, size_t len)
{
    bytes_add(&((fake *)ctx)->in, buf, len);
    return (int)len;
}

static int client_recv(void *ctx, unsigned char *buf, size_t len)
{
    fake *f = ctx;
    size_t have = f->out.len - f->out.pos;
    if (have == 0)
        return MBEDTLS_ERR_SSL_WANT_READ;
    size_t n = have < len ? have : len;
    memcpy(buf, f->out.data + f->out.pos, n);
    f->out.pos += n;
    return (int)n;
}

/* ---- the engine's side ---- */

/* What the driver writes: a short ZMTP frame, then a large body past one
 * record. */
static size_t zmtp_frames(uint8_t *frames)
{
    size_t n = 0;
    frames[n++] = 0x01;
    frames[n++] = 3;
    memcpy(frames + n, "abc", 3);
    n += 3;
    frames[n++] = 0x02;
    memset(frames + n, 0, 6);
    frames[n + 6] = 0x4e;
    frames[n + 7] = 0x20; /* 20000 */
    n += 8;
    memset(frames + n, 'z', 20000);
    n += 20000;
    return n;
}

/* ---- seeds ---- */

/* Seeds ($ZLINK_FUZZ_SEEDS): a real ClientHello as the whole stream, and
 * after a handshake, a forged application record, an alert, and plain
 * data for the client to encrypt. */
static void write_seeds(const char *dir)
{
    fake f;
    memset(&f, 0, sizeof f);
    mbedtls_ssl_context ssl;
    mbedtls_ssl_init(&ssl);
    if (mbedtls_ssl_setup(&ssl, &client_conf) != 0)
        abort();
    mbedtls_ssl_set_bio(&ssl, &f, client_send, client_recv, NULL);
    mbedtls_ssl_handshake(&ssl); /* writes the ClientHello, wants a read */
    uint8_t *seed = malloc(1 + f.in.len);
    seed[0] = 0;
    memcpy(seed + 1, f.in.data, f.in.len);
    fuzz_write_seed(dir, 0, seed, 1 + f.in.len);
    free(seed);
    free(f.in.data);
    mbedtls_ssl_free(&ssl);
    static const uint8_t forged[] = {1,  23, 3,  3,  0,  24, 0,  1,  2,  3,
                                     4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
                                     14, 15, 16, 17, 18, 19, 20, 21, 22, 23};
    fuzz_write_seed(dir, 1, forged, sizeof forged);
    static const uint8_t alert[] = {1, 21, 3, 3, 0, 2, 2, 40};
    fuzz_write_seed(dir, 2, alert, sizeof alert);
    static const uint8_t zmtp[] = {3, 0x01, 3,   'a', 'b', 'c',  0x04, 5,
                                   4, 'P',  'I', 'N', 'G', 0x00, 1,    'x'};
    fuzz_write_seed(dir, 3, zmtp, sizeof zmtp);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setup();
    const char *dir = getenv("ZLINK_FUZZ_SEEDS");
    if (dir && *dir)
        write_seeds(dir);
    return 0;
}

/* Runs the loop until the filter fails or ends, or nothing is left to do,
 * feeding the fake's reads; the client (if any) steps its handshake each
 * turn, then sends the input. */
static void run(zl_loop *loop, fake *f, fuzz_driver *d,
                mbedtls_ssl_context *client, const uint8_t *data, size_t size,
                bool encrypt)
{
    bool sent = client == NULL;
    for (int turn = 0; turn < MAX_TURNS && !d->failed; turn++) {
        if (client && !sent) {
            int rc = mbedtls_ssl_handshake(client);
            if (rc == 0) {
                if (!have_session &&
                    mbedtls_ssl_get_session(client, &client_session) == 0)
                    have_session = true;
                if (encrypt) {
                    size_t at = 0;
                    while (at < size) {
                        int w = mbedtls_ssl_write(client, data + at, size - at);
                        if (w <= 0)
                            break;
                        at += (size_t)w;
                    }
                } else {
                    bytes_add(&f->in, data, size);
                }
                sent = true;
            } else if (rc != MBEDTLS_ERR_SSL_WANT_READ &&
                       rc != MBEDTLS_ERR_SSL_WANT_WRITE) {
                sent = true; /* the handshake failed: end the input */
            }
        }
        f->input_ended = sent;
        fake_serve(f);
        if (zl_loop_run_once(loop, 0) == 0 && sent && !f->read_op &&
            f->in.pos == f->in.len)
            break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;

    zl_loop *loop;
    if (zl_loop_create(&loop, NULL, NULL) != 0)
        abort();
    fake *lower = calloc(1, sizeof *lower);
    if (!lower)
        abort();
    lower->base.ops = &fake_ops;
    lower->rng = mode * 13u + 5;
    zl_stream_deferred_init(&lower->deferred, loop);

    mbedtls_ssl_context client;
    bool with_client = (mode & 1) != 0;
    if (with_client) {
        mbedtls_ssl_init(&client);
        if (mbedtls_ssl_setup(&client, &client_conf) != 0)
            abort();
        if (have_session)
            mbedtls_ssl_set_session(&client, &client_session);
        mbedtls_ssl_set_bio(&client, lower, client_send, client_recv, NULL);
    } else {
        bytes_add(&lower->in, data, size);
    }

    static uint8_t frames[2 + 3 + 9 + 20000];
    fuzz_driver d;
    memset(&d, 0, sizeof d);
    d.read_max = FUZZ_READ_MAX;
    d.split_reads = true;
    d.frames = frames;
    d.frames_len = zmtp_frames(frames);
    d.rng = mode * 7u + 1;
    d.writes_left = 2;
    int err = 0;
    zl_stream *tls = zl_tls_stream_create(loop, &lower->base, &server_options,
                                          false, NULL, NULL, &err);
    if (!tls)
        abort();
    fuzz_driver_start(&d, tls);
    run(loop, lower, &d, with_client ? &client : NULL, data, size,
        (mode & 2) != 0);
    fuzz_driver_close(&d, loop);
    zl_stream_deferred_stop(&lower->deferred);
    if (with_client)
        mbedtls_ssl_free(&client);
    free(lower->in.data);
    free(lower->out.data);
    free(lower);
    zl_loop_destroy(loop);
    return 0;
}
