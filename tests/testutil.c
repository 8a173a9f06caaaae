/* testutil.c — helpers shared by the Check suites. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "zlink.h"

int zl_test_run(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

uint64_t zl_test_now_ms(void)
{
    return uv_hrtime() / 1000000u;
}

void zl_test_sleep_ms(int ms)
{
    uv_sleep((unsigned)ms);
}

void zl_test_wait_us(unsigned us)
{
    if (us >= 1000) {
        zl_test_sleep_ms((int)(us / 1000));
        return;
    }
    uint64_t until = uv_hrtime() + (uint64_t)us * 1000u;
    while (uv_hrtime() < until)
        ;
}

bool zl_test_wait_until(zl_test_cond done, void *arg, int timeout_ms)
{
    uint64_t deadline = zl_test_now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        if (done(arg))
            return true;
        if (zl_test_now_ms() >= deadline)
            return false;
        zl_test_sleep_ms(1);
    }
}

typedef struct events_wait {
    void *socket;
    int mask, want;
} events_wait;

static bool events_match(void *arg)
{
    events_wait *w = arg;
    int events = 0;
    size_t len = sizeof events;
    ck_assert_msg(zlink_getsockopt(w->socket, ZLINK_EVENTS, &events, &len) == 0,
                  "ZLINK_EVENTS: %s", zlink_strerror(zlink_errno()));
    return (events & w->mask) == w->want;
}

bool zl_test_wait_events(void *socket, int mask, int want, int timeout_ms)
{
    events_wait w = {socket, mask, want};
    return zl_test_wait_until(events_match, &w, timeout_ms);
}

/* This process's ipc endpoints live in a directory of its own, made at the
 * first one and removed with them at exit, since a socket file outlives its
 * socket (as libzmq's). Check runs each case in a child process, which
 * makes a directory of its own. */
static char ipc_dir[512];
static int ipc_count;
static uv_pid_t ipc_dir_owner;

static void remove_ipc_dir(void)
{
    if (!ipc_dir[0] || ipc_dir_owner != uv_os_getpid())
        return;
    char path[600];
    for (int i = 1; i <= ipc_count; i++) {
        snprintf(path, sizeof path, "%s/%d", ipc_dir, i);
        remove(path);
    }
    uv_fs_t req;
    uv_fs_rmdir(NULL, &req, ipc_dir, NULL);
    uv_fs_req_cleanup(&req);
}

static bool make_ipc_dir(void)
{
    static bool cleanup_registered;
    char tmp[400];
    size_t len = sizeof tmp;
    if (uv_os_tmpdir(tmp, &len) != 0)
        snprintf(tmp, sizeof tmp, "/tmp");
    char pattern[450];
    snprintf(pattern, sizeof pattern, "%s/zlink-test-XXXXXX", tmp);
    uv_fs_t req;
    bool made = uv_fs_mkdtemp(NULL, &req, pattern, NULL) == 0;
    if (made)
        snprintf(ipc_dir, sizeof ipc_dir, "%s", req.path);
    uv_fs_req_cleanup(&req);
    if (!made)
        return false;
    ipc_dir_owner = uv_os_getpid();
    ipc_count = 0;
    if (!cleanup_registered)
        cleanup_registered = atexit(remove_ipc_dir) == 0;
    return true;
}

void zl_test_ipc_endpoint(char *buf, size_t cap)
{
    if ((!ipc_dir[0] || ipc_dir_owner != uv_os_getpid()) && !make_ipc_dir())
        ck_abort_msg("no temporary directory for ipc endpoints");
    snprintf(buf, cap, "ipc://%s/%d", ipc_dir, ++ipc_count);
}

bool zl_test_under_wine(void)
{
    char value[8];
    size_t len = sizeof value;
    /* Set by ci/test.sh's Windows stage; Wine itself also exposes
     * WINEPREFIX to its processes' environment. */
    return uv_os_getenv("ZLINK_UNDER_WINE", value, &len) == 0 ||
           uv_os_getenv("WINEPREFIX", value, &(size_t){sizeof value}) !=
               UV_ENOENT;
}

bool zl_test_skip_ipc(void)
{
    static bool told;
    if (zlink_has("ipc"))
        return false;
    if (!told) {
        fprintf(stderr, "ipc cases skipped: no AF_UNIX stream sockets here "
                        "(Windows before 10 1803, Wine 8)\n");
        told = true;
    }
    return true;
}

void zl_test_set_int(void *socket, int option, int value)
{
    ck_assert_msg(zlink_setsockopt(socket, option, &value, sizeof value) == 0,
                  "zlink_setsockopt(%d, %d): %s", option, value,
                  zlink_strerror(zlink_errno()));
}

void *zl_test_monitor_open(void *ctx, void *socket, const char *name,
                           int events)
{
    ck_assert_msg(zlink_socket_monitor(socket, name, events) == 0,
                  "zlink_socket_monitor(%s): %s", name,
                  zlink_strerror(zlink_errno()));
    void *monitor = zlink_socket(ctx, ZLINK_PAIR);
    ck_assert_ptr_nonnull(monitor);
    zl_test_set_int(monitor, ZLINK_LINGER, 0);
    ck_assert_msg(zlink_connect(monitor, name) == 0, "connect %s: %s", name,
                  zlink_strerror(zlink_errno()));
    return monitor;
}

bool zl_test_wait_event_value(void *monitor, int event, uint32_t *value,
                              int timeout_ms)
{
    uint64_t deadline = zl_test_now_ms() + (uint64_t)timeout_ms;
    for (;;) {
        uint64_t now = zl_test_now_ms();
        if (now >= deadline)
            return false;
        zlink_pollitem_t item = {monitor, 0, ZLINK_POLLIN, 0};
        if (zlink_poll(&item, 1, (long)(deadline - now)) <= 0)
            continue;
        /* An event is two parts: 2 bytes of event and 4 of value, then
         * the endpoint. */
        uint8_t head[6];
        char endpoint[512];
        int n = zl_test_recv_retry(monitor, head, sizeof head, 0);
        ck_assert_msg(n == 6, "monitor event of %d bytes", n);
        ck_assert_int_ge(
            zl_test_recv_retry(monitor, endpoint, sizeof endpoint, 0), 0);
        uint16_t got;
        memcpy(&got, head, sizeof got);
        if (got == event) {
            memcpy(value, head + 2, sizeof *value);
            return true;
        }
    }
}

bool zl_test_wait_event(void *monitor, int event, int count, int timeout_ms)
{
    uint64_t deadline = zl_test_now_ms() + (uint64_t)timeout_ms;
    for (int seen = 0; seen < count; seen++) {
        uint64_t now = zl_test_now_ms();
        uint32_t value;
        if (now >= deadline || !zl_test_wait_event_value(monitor, event, &value,
                                                         (int)(deadline - now)))
            return false;
    }
    return true;
}

int zl_test_ctx_term(void *ctx)
{
    int rc;
    do
        rc = zlink_ctx_term(ctx);
    while (rc < 0 && zlink_errno() == EINTR);
    return rc;
}

int zl_test_send_retry(void *socket, const void *buf, size_t len, int flags)
{
    int rc;
    do
        rc = zlink_send(socket, buf, len, flags);
    while (rc < 0 && zlink_errno() == EINTR);
    return rc;
}

int zl_test_recv_retry(void *socket, void *buf, size_t len, int flags)
{
    int rc;
    do
        rc = zlink_recv(socket, buf, len, flags);
    while (rc < 0 && zlink_errno() == EINTR);
    return rc;
}

int zl_test_msg_send_retry(zlink_msg_t *msg, void *socket, int flags)
{
    int rc;
    do
        rc = zlink_msg_send(msg, socket, flags);
    while (rc < 0 && zlink_errno() == EINTR);
    return rc;
}

int zl_test_msg_recv_retry(zlink_msg_t *msg, void *socket, int flags)
{
    int rc;
    do
        rc = zlink_msg_recv(msg, socket, flags);
    while (rc < 0 && zlink_errno() == EINTR);
    return rc;
}
