/* resolver.c — one thread per context runs getaddrinfo for connects by
 * name, in order, and hands each result to the I/O thread that asked. */
#include "resolver.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "address.h"
#include "atomics.h"
#include "io_thread.h"
#include "mailbox.h"
#include "thread.h"
#include "zlink.h"

struct zl_lookup {
    /* One for the owner until done or cancel, one for the resolver until
     * it has handed the result over (the command carries that one). */
    atomic_int refs;
    zl_resolver *resolver;
    bool cancelled; /* under the resolver's lock */
    zl_lookup *next;
    zl_io_thread *thread;
    zl_lookup_done_fn done;
    void *owner;
    bool ipv6;
    int status;
    zl_addr addr;
    char hostport[];
};

struct zl_resolver {
    uv_mutex_t lock;
    uv_cond_t wake;
    bool started, stopping;
    uv_thread_t thread;
    zl_lookup *head, *tail;
};

static void lookup_unref(zl_lookup *l)
{
    if (atomic_fetch_sub(&l->refs, 1) == 1)
        free(l);
}

/* Runs on the owner's I/O thread. A cancel there came before this command
 * was taken, or after the resolver had looked; either way it is seen. */
static void deliver(void *target, intptr_t arg)
{
    (void)target;
    zl_lookup *l = (zl_lookup *)arg;
    if (!l->cancelled) {
        l->done(l->owner, l->status, &l->addr);
        lookup_unref(l); /* the owner's */
    }
    lookup_unref(l); /* the resolver's */
}

static void resolver_main(void *arg)
{
    zl_resolver *r = arg;
    zl_thread_set_name("ZMQbg/Resolver");
    uv_mutex_lock(&r->lock);
    for (;;) {
        while (!r->head && !r->stopping)
            uv_cond_wait(&r->wake, &r->lock);
        zl_lookup *l = r->head;
        if (!l)
            break;
        r->head = l->next;
        if (!r->head)
            r->tail = NULL;
        if (!l->cancelled) {
            uv_mutex_unlock(&r->lock);
            int rc = zl_tcp_resolve(l->hostport, false, l->ipv6, &l->addr);
            l->status = rc == 0 ? 0 : errno;
            uv_mutex_lock(&r->lock);
        }
        /* Under the lock: an owner that has not cancelled by now is alive,
         * so its I/O thread is too, and takes the command. */
        if (!l->cancelled) {
            zl_cmd cmd = {
                .type = ZL_CMD_CALL, .fn = deliver, .arg = (intptr_t)l};
            zl_mailbox_send(&l->thread->mailbox, &cmd);
        } else {
            lookup_unref(l);
        }
    }
    uv_mutex_unlock(&r->lock);
}

zl_resolver *zl_resolver_new(void)
{
    zl_resolver *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (uv_mutex_init(&r->lock) != 0) {
        free(r);
        return NULL;
    }
    if (uv_cond_init(&r->wake) != 0) {
        uv_mutex_destroy(&r->lock);
        free(r);
        return NULL;
    }
    return r;
}

void zl_resolver_destroy(zl_resolver *r)
{
    if (!r)
        return;
    uv_mutex_lock(&r->lock);
    r->stopping = true;
    uv_cond_signal(&r->wake);
    bool started = r->started;
    uv_mutex_unlock(&r->lock);
    if (started)
        uv_thread_join(&r->thread);
    /* Only cancelled lookups can be left: free what the thread did not. */
    while (r->head) {
        zl_lookup *l = r->head;
        r->head = l->next;
        lookup_unref(l);
    }
    uv_cond_destroy(&r->wake);
    uv_mutex_destroy(&r->lock);
    free(r);
}

zl_lookup *zl_lookup_start(zl_resolver *r, zl_io_thread *thread,
                           const char *hostport, bool ipv6,
                           zl_lookup_done_fn done, void *owner)
{
    size_t n = strlen(hostport) + 1;
    zl_lookup *l = calloc(1, sizeof *l + n);
    if (!l) {
        errno = ENOMEM;
        return NULL;
    }
    atomic_init(&l->refs, 2);
    l->resolver = r;
    l->thread = thread;
    l->done = done;
    l->owner = owner;
    l->ipv6 = ipv6;
    memcpy(l->hostport, hostport, n);
    uv_mutex_lock(&r->lock);
    if (!r->started) {
        if (zl_thread_create(&r->thread, resolver_main, r) != 0) {
            uv_mutex_unlock(&r->lock);
            free(l);
            errno = EMTHREAD;
            return NULL;
        }
        r->started = true;
    }
    if (r->tail)
        r->tail->next = l;
    else
        r->head = l;
    r->tail = l;
    uv_cond_signal(&r->wake);
    uv_mutex_unlock(&r->lock);
    return l;
}

void zl_lookup_cancel(zl_lookup *l)
{
    uv_mutex_lock(&l->resolver->lock);
    l->cancelled = true;
    uv_mutex_unlock(&l->resolver->lock);
    lookup_unref(l);
}
