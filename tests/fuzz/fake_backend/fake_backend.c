/* fake_backend.c — a backend (src/backend/backend.h) with no OS sockets, for
 * the connection fuzzer: handles read what the fuzzer feeds their peer,
 * writes complete at once (unless stalled) and are kept for the driver to
 * check, the clock moves only when told, and the loop runs a pass only
 * when the driver gives it one, so that the I/O thread and the application
 * thread take turns in the same order on every run of an input. Signaler,
 * os_poll, slabs and the thread calls are the epoll backend's; timers are the
 * shared timer heap. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fake_backend.h"

#include "atomics.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "timer_heap.h"

/* A turn of the driver's fake_run stops after this many passes even if the
 * loop still has work: a heartbeat that re-arms at once never idles. */
#define PASSES_PER_RUN 64
#define CLOCK_ORIGIN_MS 1000000u

enum fake_kind { FAKE_HANDLE, FAKE_LISTENER };

/* What handles and listeners share; first member of both. Every one is
 * on its loop's list from creation to free, so that zl_loop_destroy frees
 * those whose completions were never dispatched. */
struct zl_fake_io {
    zl_loop *loop;
    struct zl_fake_io *prev, *next;
    int refs; /* the owner's, plus one per queued completion */
    enum fake_kind kind;
    bool closed;
};

typedef struct fake_conn {
    uint8_t *in; /* what the peer sent and the handle has not read */
    size_t len, pos, cap;
    int end_status; /* 0 while the peer is connected */
    uint8_t *out;   /* what the local side wrote, for the driver to check */
    size_t out_len, out_cap;
    zl_handle *handle; /* NULL once the local side closed */
} fake_conn;

struct zl_handle {
    struct zl_fake_io io;
    fake_conn *conn;
    int index; /* of conn, for the peer address */
    zl_op *read_op;
    zl_op *write_op;
};

struct zl_listener {
    struct zl_fake_io io;
    zl_addr addr;
    zl_op *accept_op;
};

struct zl_loop {
    struct zl_fake_io ios; /* list sentinel */
    zl_op *done_head, *done_tail;
    atomic_bool wake_pending;
    zl_wake_cb on_wake;
    void *wake_arg;
    struct zl_timer_heap timers;
};

/* The driver's side and the loop's turn-taking. lock and turn_changed
 * order every hand-over between the driver and the I/O thread; the rest is
 * touched by one of them at a time. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t turn_changed;
    zl_loop *loop;
    bool free_run;
    int turns;      /* passes granted and not yet run */
    bool last_idle; /* the last granted pass left nothing to do */
    uint64_t now_ms;
    fake_conn conns[FAKE_CONN_MAX];
    int conn_count;
    int pending_accepts;
    bool stall_writes;
    bool refuse_connects;
} fake = {.lock = PTHREAD_MUTEX_INITIALIZER,
          .turn_changed = PTHREAD_COND_INITIALIZER};

/* ---- ios and completions ---- */

static void io_init(struct zl_fake_io *io, zl_loop *loop, enum fake_kind kind)
{
    io->loop = loop;
    io->refs = 1;
    io->kind = kind;
    io->closed = false;
    io->next = &loop->ios;
    io->prev = loop->ios.prev;
    loop->ios.prev->next = io;
    loop->ios.prev = io;
}

static void io_unref(struct zl_fake_io *io)
{
    if (--io->refs > 0)
        return;
    io->prev->next = io->next;
    io->next->prev = io->prev;
    free(io);
}

static void complete(struct zl_fake_io *io, zl_op *op, int status, size_t bytes)
{
    zl_loop *loop = io->loop;
    op->impl.io = io;
    op->impl.status = status;
    op->impl.bytes = bytes;
    op->impl.next = NULL;
    io->refs++;
    if (loop->done_tail)
        loop->done_tail->impl.next = op;
    else
        loop->done_head = op;
    loop->done_tail = op;
}

/* Those queued by the callbacks wait for the next pass, as in the real
 * backends. */
static int dispatch_completions(zl_loop *loop)
{
    zl_op *op = loop->done_head;
    int ran = 0;
    loop->done_head = NULL;
    loop->done_tail = NULL;
    while (op) {
        zl_op *next = op->impl.next;
        struct zl_fake_io *io = op->impl.io;
        op->cb(op, op->impl.status, op->impl.bytes);
        io_unref(io);
        ran++;
        op = next;
    }
    return ran;
}

/* ---- connections ---- */

static zl_handle *handle_new(zl_loop *loop)
{
    if (fake.conn_count == FAKE_CONN_MAX)
        return NULL;
    zl_handle *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    io_init(&h->io, loop, FAKE_HANDLE);
    h->index = fake.conn_count;
    h->conn = &fake.conns[fake.conn_count++];
    h->conn->handle = h;
    return h;
}

static bool read_deliverable(const zl_handle *h)
{
    return h->read_op && h->conn &&
           (h->conn->pos < h->conn->len || h->conn->end_status != 0);
}

static bool write_deliverable(const zl_handle *h)
{
    return h->write_op && (!fake.stall_writes || fake.free_run);
}

/* A read takes whatever the peer has sent, up to what it asked for; a
 * zero-length read is a readiness probe. */
static void deliver_read(zl_handle *h)
{
    fake_conn *c = h->conn;
    zl_op *op = h->read_op;
    zl_read_req *req = &op->impl.req.read;
    h->read_op = NULL;
    size_t avail = c->len - c->pos;
    if (avail == 0) {
        complete(&h->io, op, c->end_status, 0);
        return;
    }
    size_t done = 0;
    for (int i = 0; i < req->count && done < avail; i++) {
        size_t n = req->iov[i].len;
        if (n > avail - done)
            n = avail - done;
        memcpy(req->iov[i].base, c->in + c->pos + done, n);
        done += n;
    }
    c->pos += done;
    complete(&h->io, op, 0, done);
}

static void grow(uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return;
    size_t n = *cap ? *cap : 256;
    while (n < need)
        n *= 2;
    uint8_t *grown = realloc(*buf, n);
    if (!grown)
        abort();
    *buf = grown;
    *cap = n;
}

/* Copied out whole, so that the sanitizers see a write of freed memory,
 * and the driver can check that it is ZMTP. */
static void deliver_write(zl_handle *h)
{
    zl_op *op = h->write_op;
    fake_conn *c = h->conn;
    h->write_op = NULL;
    size_t total = 0;
    for (int i = 0; i < op->impl.req.write.count; i++) {
        const zl_iovec *v = &op->impl.req.write.iov[i];
        grow(&c->out, &c->out_cap, c->out_len + v->len);
        if (v->len)
            memcpy(c->out + c->out_len, v->base, v->len);
        c->out_len += v->len;
        total += v->len;
    }
    complete(&h->io, op, 0, total);
}

static void deliver_accept(zl_listener *l)
{
    zl_op *op = l->accept_op;
    l->accept_op = NULL;
    fake.pending_accepts--;
    zl_handle *h = handle_new(l->io.loop);
    op->accepted = h;
    complete(&l->io, op, h ? 0 : -EMFILE, 0);
}

static bool io_has_work(const struct zl_fake_io *io)
{
    if (io->closed)
        return false;
    if (io->kind == FAKE_LISTENER)
        return ((const zl_listener *)io)->accept_op && fake.pending_accepts > 0;
    const zl_handle *h = (const zl_handle *)io;
    return read_deliverable(h) || write_deliverable(h);
}

static bool timer_due(zl_loop *loop)
{
    return zl_timer_heap_timeout(&loop->timers, fake.now_ms, 1) == 0;
}

static bool loop_has_work(zl_loop *loop)
{
    if (loop->done_head || atomic_load(&loop->wake_pending) || timer_due(loop))
        return true;
    for (struct zl_fake_io *io = loop->ios.next; io != &loop->ios;
         io = io->next)
        if (io_has_work(io))
            return true;
    return false;
}

/* One pass: the I/O the peers allow, then completions, the wake callback
 * and due timers, in the order the real loops run them. */
static int run_pass(zl_loop *loop)
{
    for (struct zl_fake_io *io = loop->ios.next; io != &loop->ios;
         io = io->next) {
        if (io->closed)
            continue;
        if (io->kind == FAKE_LISTENER) {
            zl_listener *l = (zl_listener *)io;
            if (l->accept_op && fake.pending_accepts > 0)
                deliver_accept(l);
            continue;
        }
        zl_handle *h = (zl_handle *)io;
        if (read_deliverable(h))
            deliver_read(h);
        if (write_deliverable(h))
            deliver_write(h);
    }
    int ran = dispatch_completions(loop);
    if (atomic_exchange(&loop->wake_pending, false) && loop->on_wake) {
        loop->on_wake(loop->wake_arg);
        ran++;
    }
    ran += zl_timer_heap_run(&loop->timers, fake.now_ms);
    return ran;
}

/* ---- loop ---- */

int zl_loop_create(zl_loop **out, zl_wake_cb on_wake, void *wake_arg)
{
    zl_loop *loop = calloc(1, sizeof *loop);
    if (!loop)
        return -ENOMEM;
    loop->ios.next = loop->ios.prev = &loop->ios;
    atomic_init(&loop->wake_pending, false);
    loop->on_wake = on_wake;
    loop->wake_arg = wake_arg;
    zl_timer_heap_init(&loop->timers);
    pthread_mutex_lock(&fake.lock);
    if (fake.loop)
        abort(); /* the driver serves one I/O thread */
    fake.loop = loop;
    pthread_mutex_unlock(&fake.lock);
    *out = loop;
    return 0;
}

void zl_loop_set_spin_budget(zl_loop *loop, uint32_t budget_ns)
{
    (void)loop; /* the fake loop never waits */
    (void)budget_ns;
}

bool zl_loop_is_waiting(zl_loop *loop)
{
    (void)loop;
    return false;
}

void zl_loop_destroy(zl_loop *loop)
{
    while (loop->ios.next != &loop->ios) {
        struct zl_fake_io *io = loop->ios.next;
        io->prev->next = io->next;
        io->next->prev = io->prev;
        if (io->kind == FAKE_HANDLE && ((zl_handle *)io)->conn)
            ((zl_handle *)io)->conn->handle = NULL;
        free(io);
    }
    zl_timer_heap_destroy(&loop->timers);
    pthread_mutex_lock(&fake.lock);
    fake.loop = NULL;
    pthread_mutex_unlock(&fake.lock);
    free(loop);
}

/* Runs on the I/O thread. In lockstep it waits for a turn from fake_run and
 * reports back whether the pass left work; in free run it waits only when
 * there is nothing to do and no timer to jump to. */
int zl_loop_run_once(zl_loop *loop, int timeout_ms)
{
    pthread_mutex_lock(&fake.lock);
    for (;;) {
        if (!fake.free_run) {
            if (fake.turns > 0)
                break;
        } else {
            if (timeout_ms == 0 || loop_has_work(loop))
                break;
            int wait = zl_timer_heap_timeout(&loop->timers, fake.now_ms, -1);
            if (wait > 0) {
                fake.now_ms += (uint64_t)wait;
                break;
            }
        }
        pthread_cond_wait(&fake.turn_changed, &fake.lock);
    }
    bool granted = !fake.free_run;
    pthread_mutex_unlock(&fake.lock);

    int ran = run_pass(loop);

    if (granted) {
        pthread_mutex_lock(&fake.lock);
        fake.turns--;
        fake.last_idle = !loop_has_work(loop);
        pthread_cond_broadcast(&fake.turn_changed);
        pthread_mutex_unlock(&fake.lock);
    }
    return ran;
}

void zl_loop_wake(zl_loop *loop)
{
    pthread_mutex_lock(&fake.lock);
    atomic_store(&loop->wake_pending, true);
    pthread_cond_broadcast(&fake.turn_changed);
    pthread_mutex_unlock(&fake.lock);
}

uint64_t zl_loop_now(zl_loop *loop)
{
    (void)loop;
    return fake.now_ms;
}

struct zl_timer_heap *zl_backend_timer_heap(zl_loop *loop)
{
    return &loop->timers;
}

/* ---- handles ---- */

void zl_handle_readv(zl_handle *h, zl_op *op, const zl_iovec *iov, int n)
{
    zl_read_req_set(&op->impl.req.read, iov, n);
    op->impl.io = &h->io;
    h->read_op = op;
}

void zl_handle_write(zl_handle *h, zl_op *op, const zl_iovec *iov, int n)
{
    op->impl.req.write.iov = iov;
    op->impl.req.write.count = n;
    op->impl.io = &h->io;
    h->write_op = op;
}

void zl_handle_cancel(zl_handle *h)
{
    zl_op *read_op = h->read_op;
    zl_op *write_op = h->write_op;
    h->read_op = NULL;
    h->write_op = NULL;
    if (read_op)
        complete(&h->io, read_op, ZL_ECANCELED, 0);
    if (write_op)
        complete(&h->io, write_op, ZL_ECANCELED, 0);
}

void zl_handle_close(zl_handle *h)
{
    zl_handle_cancel(h);
    if (h->conn)
        h->conn->handle = NULL;
    h->conn = NULL;
    h->io.closed = true;
    io_unref(&h->io);
}

zl_handle *zl_handle_connect(zl_loop *loop, const zl_addr *addr, zl_op *op,
                             int *err)
{
    (void)addr;
    zl_handle *h = handle_new(loop);
    if (!h) {
        if (err)
            *err = -EMFILE;
        return NULL;
    }
    if (err)
        *err = 0;
    complete(&h->io, op, fake.refuse_connects ? -ECONNREFUSED : 0, 0);
    return h;
}

/* TCP settings change nothing a fuzzed connection can see. */
zl_handle *zl_handle_connect_ex(zl_loop *loop, const zl_addr *addr,
                                const zl_addr *src, const zl_tcp_opts *opts,
                                zl_op *op, int *err)
{
    (void)src;
    (void)opts;
    return zl_handle_connect(loop, addr, op, err);
}

int zl_handle_tune_tcp(zl_handle *h, const zl_tcp_opts *opts)
{
    (void)h;
    (void)opts;
    return 0;
}

void zl_handle_set_buffers(zl_handle *h, int sndbuf, int rcvbuf)
{
    (void)h;
    (void)sndbuf;
    (void)rcvbuf;
}

int zl_handle_peer_addr(zl_handle *h, zl_addr *out)
{
    memset(out, 0, sizeof *out);
    out->u.in4.sin_family = AF_INET;
    out->u.in4.sin_addr.s_addr = htonl(0x7f000001);
    out->u.in4.sin_port = htons((uint16_t)(40000 + h->index));
    out->len = sizeof out->u.in4;
    return 0;
}

/* Fake connections are tcp: no AF_UNIX credentials. */
int zl_handle_peer_cred(zl_handle *h, unsigned *uid, unsigned *gid, int *pid)
{
    (void)h;
    (void)uid;
    (void)gid;
    (void)pid;
    return -ENOTSUP;
}

int zl_peer_cred_kinds(void)
{
    return 0;
}

bool zl_user_in_group(unsigned uid, unsigned gid)
{
    (void)uid;
    (void)gid;
    return false;
}

/* Monitor events carry it; any stable, distinct number will do. */
zl_os_socket zl_handle_os_socket(const zl_handle *h)
{
    return (zl_os_socket)(1000 + h->index);
}

/* A fake connect ends at once, as a local ipc one does. */
bool zl_handle_connect_in_progress(const zl_handle *h)
{
    (void)h;
    return false;
}

int64_t zl_handle_try_write(zl_handle *h, const zl_iovec *iov, int n)
{
    (void)h;
    (void)iov;
    (void)n;
    return -ENOTSUP;
}

int64_t zl_handle_try_read(zl_handle *h, void *buf, size_t len, bool peek)
{
    (void)h;
    (void)buf;
    (void)len;
    (void)peek;
    return -ENOTSUP;
}

int zl_handle_watch_input(zl_handle *h, bool watched)
{
    (void)h;
    (void)watched;
    return -ENOTSUP;
}

/* ---- listeners ---- */

int zl_listener_open(zl_loop *loop, const zl_addr *addr, int backlog,
                     zl_listener **out)
{
    (void)backlog;
    zl_listener *l = calloc(1, sizeof *l);
    if (!l)
        return -ENOMEM;
    io_init(&l->io, loop, FAKE_LISTENER);
    l->addr = *addr;
    if (l->addr.u.sa.sa_family == AF_INET && l->addr.u.in4.sin_port == 0)
        l->addr.u.in4.sin_port = htons(5555);
    *out = l;
    return 0;
}

int zl_listener_open_ex(zl_loop *loop, const zl_addr *addr, int backlog,
                        const zl_tcp_opts *opts, zl_listener **out)
{
    (void)opts;
    return zl_listener_open(loop, addr, backlog, out);
}

/* USE_FD names an OS socket, and the fake backend has none to take. */
int zl_listener_adopt(zl_loop *loop, zl_os_socket fd, bool local,
                      zl_listener **out)
{
    (void)loop;
    (void)fd;
    (void)local;
    (void)out;
    return -EINVAL;
}

int zl_listener_local_addr(zl_listener *l, zl_addr *out)
{
    *out = l->addr;
    return 0;
}

void zl_listener_accept(zl_listener *l, zl_op *op)
{
    op->accepted = NULL;
    op->impl.io = &l->io;
    l->accept_op = op;
}

void zl_listener_close(zl_listener *l)
{
    if (l->accept_op) {
        zl_op *op = l->accept_op;
        l->accept_op = NULL;
        complete(&l->io, op, ZL_ECANCELED, 0);
    }
    l->io.closed = true;
    io_unref(&l->io);
}

/* ---- process-wide ---- */

int zl_backend_global_init(void)
{
    return 0;
}

void zl_backend_global_term(void) {}

const char *zl_backend_name(void)
{
    return "fake";
}

/* ipc endpoints resolve as on Linux; the fake connects nothing anyway. */
int zl_backend_has_ipc(void)
{
    return 1;
}

/* ---- the driver ---- */

void fake_reset(void)
{
    pthread_mutex_lock(&fake.lock);
    if (fake.loop)
        abort();
    fake.free_run = false;
    fake.turns = 0;
    fake.last_idle = true;
    fake.now_ms = CLOCK_ORIGIN_MS;
    fake.conn_count = 0;
    fake.pending_accepts = 0;
    fake.stall_writes = false;
    fake.refuse_connects = false;
    pthread_mutex_unlock(&fake.lock);
}

void fake_release(void)
{
    for (int i = 0; i < FAKE_CONN_MAX; i++) {
        free(fake.conns[i].in);
        free(fake.conns[i].out);
        fake.conns[i] = (fake_conn){0};
    }
    fake.conn_count = 0;
}

void fake_run(void)
{
    pthread_mutex_lock(&fake.lock);
    for (int pass = 0; fake.loop && !fake.free_run && pass < PASSES_PER_RUN;
         pass++) {
        fake.turns = 1;
        pthread_cond_broadcast(&fake.turn_changed);
        while (fake.turns > 0)
            pthread_cond_wait(&fake.turn_changed, &fake.lock);
        if (fake.last_idle)
            break;
    }
    pthread_mutex_unlock(&fake.lock);
}

void fake_free_run(void)
{
    pthread_mutex_lock(&fake.lock);
    fake.free_run = true;
    pthread_cond_broadcast(&fake.turn_changed);
    pthread_mutex_unlock(&fake.lock);
}

int fake_conn_count(void)
{
    return fake.conn_count;
}

void fake_feed(int conn, const void *data, size_t len)
{
    if (conn < 0 || conn >= fake.conn_count || len == 0)
        return;
    fake_conn *c = &fake.conns[conn];
    if (!c->handle || c->end_status != 0)
        return; /* nobody reads it: a peer talking to a closed socket */
    if (c->pos == c->len)
        c->pos = c->len = 0;
    grow(&c->in, &c->cap, c->len + len);
    memcpy(c->in + c->len, data, len);
    c->len += len;
}

const uint8_t *fake_output(int conn, size_t *len)
{
    *len = 0;
    if (conn < 0 || conn >= fake.conn_count)
        return NULL;
    *len = fake.conns[conn].out_len;
    return fake.conns[conn].out;
}

void fake_output_clear(int conn)
{
    if (conn >= 0 && conn < fake.conn_count)
        fake.conns[conn].out_len = 0;
}

void fake_hang_up(int conn, int status)
{
    if (conn < 0 || conn >= fake.conn_count)
        return;
    if (fake.conns[conn].end_status == 0)
        fake.conns[conn].end_status = status;
}

void fake_accept(void)
{
    fake.pending_accepts++;
}

void fake_stall_writes(bool on)
{
    fake.stall_writes = on;
}

void fake_refuse_connects(bool on)
{
    fake.refuse_connects = on;
}

void fake_advance_ms(uint64_t ms)
{
    fake.now_ms += ms;
}

zl_os_socket zl_listener_os_socket(const zl_listener *l)
{
    (void)l;
    return (zl_os_socket)999;
}
