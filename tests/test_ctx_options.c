/* test_ctx_options.c — libzmq's context options: BLOCKY and IPV6 as the
 * defaults of new sockets, the I/O threads' name, scheduling and CPU
 * affinity, IO_THREADS changed before and after the threads start, and
 * IO_THREADS 0 (an inproc-only context). */
#if !defined(_WIN32) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include "socket_testutil.h"

START_TEST(values_and_checks)
{
    ck_assert_int_eq(ZLINK_THREAD_PRIORITY, 3);
    ck_assert_int_eq(ZLINK_THREAD_SCHED_POLICY, 4);
    ck_assert_int_eq(ZLINK_THREAD_AFFINITY_CPU_ADD, 7);
    ck_assert_int_eq(ZLINK_THREAD_AFFINITY_CPU_REMOVE, 8);
    ck_assert_int_eq(ZLINK_THREAD_NAME_PREFIX, 9);
    ck_assert_int_eq(ZLINK_BLOCKY, 70);

    void *ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_BLOCKY), 1);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_IPV6), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_THREAD_SCHED_POLICY), -1);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_THREAD_NAME_PREFIX), 0);
    /* 3 reads as SOCKET_LIMIT and writes as THREAD_PRIORITY (libzmq). */
    ck_assert_int_gt(zlink_ctx_get(ctx, ZLINK_SOCKET_LIMIT), 0);

    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_SCHED_POLICY, 0), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_THREAD_SCHED_POLICY), 0);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_NAME_PREFIX, 42), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_THREAD_NAME_PREFIX), 42);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_PRIORITY, 0), 0);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_AFFINITY_CPU_ADD, 0), 0);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_AFFINITY_CPU_ADD, 0), 0);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_AFFINITY_CPU_REMOVE, 0),
                     0);
    /* Removing a CPU that is not in the set, and negative values, are
     * EINVAL as in libzmq. */
    zt_expect_errno(zlink_ctx_set(ctx, ZLINK_THREAD_AFFINITY_CPU_REMOVE, 0),
                    EINVAL);
    zt_expect_errno(zlink_ctx_set(ctx, ZLINK_THREAD_AFFINITY_CPU_ADD, -1),
                    EINVAL);
    zt_expect_errno(zlink_ctx_set(ctx, ZLINK_THREAD_PRIORITY, -1), EINVAL);
    zt_expect_errno(zlink_ctx_set(ctx, ZLINK_THREAD_SCHED_POLICY, -1), EINVAL);
    zt_expect_errno(zlink_ctx_set(ctx, ZLINK_BLOCKY, -1), EINVAL);
    zt_expect_errno(zlink_ctx_set(ctx, ZLINK_IPV6, -1), EINVAL);
    /* Any number names the threads, as libzmq. */
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_NAME_PREFIX, -1), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_THREAD_NAME_PREFIX), -1);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_NAME_PREFIX, 123456), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_THREAD_NAME_PREFIX), 123456);
    /* MAX_MSGSZ is kept, as libzmq: INT_MAX, then what was set. */
    ck_assert_int_eq(ZLINK_MAX_MSGSZ, 5);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_MAX_MSGSZ), INT_MAX);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_MAX_MSGSZ, 1000), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_MAX_MSGSZ), 1000);
    zt_expect_errno(zlink_ctx_set(ctx, ZLINK_MAX_MSGSZ, -1), EINVAL);
    zt_term(ctx);
}
END_TEST

/* BLOCKY 0: new sockets linger 0, so a context with messages queued for a
 * peer that never comes terminates at once instead of forever. */
START_TEST(blocky_off)
{
    void *ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_BLOCKY, 0), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_BLOCKY), 0);
    void *s = zlink_socket(ctx, ZLINK_DEALER);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(zt_get_int(s, ZLINK_LINGER), 0);
    /* A port nobody listens on: the message stays queued. */
    void *probe = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    zt_bind_tcp(probe, ep, sizeof ep);
    zt_close(probe);
    zt_connect(s, ep);
    ck_assert_int_eq(zlink_send(s, "queued", 6, ZLINK_DONTWAIT), 6);
    ck_assert_int_eq(zlink_close(s), 0);
    uint64_t start = zl_test_now_ms();
    zt_term(ctx);
    ck_assert_uint_lt(zl_test_now_ms() - start, ZT_TIMEOUT_MS);

    /* With the default (1) new sockets linger forever, as libzmq's. */
    ctx = zt_ctx();
    s = zlink_socket(ctx, ZLINK_DEALER);
    ck_assert_int_eq(zt_get_int(s, ZLINK_LINGER), -1);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

START_TEST(ipv6_default)
{
    void *ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_IPV6, 1), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_IPV6), 1);
    void *s = zt_socket(ctx, ZLINK_PAIR);
    ck_assert_int_eq(zt_get_int(s, ZLINK_IPV6), 1);
    zt_set_int(s, ZLINK_IPV6, 0); /* still the socket's own to change */
    ck_assert_int_eq(zt_get_int(s, ZLINK_IPV6), 0);
    zt_close(s);
    zt_term(ctx);
}
END_TEST

/* IO_THREADS: taken before the first socket; afterwards accepted and
 * ignored, as libzmq does. */
START_TEST(io_threads_changes)
{
    void *ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 2), 0);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 3), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_IO_THREADS), 3);
    void *a = zt_socket(ctx, ZLINK_PAIR);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 5), 0);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_IO_THREADS), 3);
    zt_expect_errno(zlink_ctx_set(ctx, ZLINK_IO_THREADS, -1), EINVAL);
    void *b = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    zt_bind_tcp(a, ep, sizeof ep);
    zt_connect(b, ep);
    zt_send_str(b, "three threads", 0);
    zt_recv_str(a, "three threads");
    zt_close(a);
    zt_close(b);
    zt_term(ctx);
}
END_TEST

/* IO_THREADS 0 (zmq_init(0)): inproc works, tcp and ipc cannot (EMTHREAD,
 * libzmq's "no I/O thread is available"). */
START_TEST(io_threads_zero)
{
    void *ctx = zlink_init(0);
    ck_assert_ptr_nonnull(ctx);
    ck_assert_int_eq(zlink_ctx_get(ctx, ZLINK_IO_THREADS), 0);
    void *a = zt_socket(ctx, ZLINK_PAIR);
    void *b = zt_socket(ctx, ZLINK_PAIR);
    zt_bind(a, "inproc://no-io-threads");
    zt_connect(b, "inproc://no-io-threads");
    zt_send_str(b, "inproc only", 0);
    zt_recv_str(a, "inproc only");
    zt_expect_errno(zlink_bind(a, "tcp://127.0.0.1:*"), EMTHREAD);
    zt_expect_errno(zlink_connect(b, "tcp://127.0.0.1:5555"), EMTHREAD);
    zt_close(a);
    zt_close(b);
    ck_assert_int_eq(zlink_term(ctx), 0);

    ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_IO_THREADS, 0), 0);
    a = zt_socket(ctx, ZLINK_PAIR);
    zt_expect_errno(zlink_bind(a, "tcp://127.0.0.1:*"), EMTHREAD);
    zt_close(a);
    zt_term(ctx);
}
END_TEST

#if defined(__linux__)
/* The I/O thread as the kernel lists it: its name and allowed CPUs. */
static bool find_thread(const char *name, char *cpus, size_t cap)
{
    uv_dirent_t ent;
    uv_fs_t req;
    bool found = false;
    if (uv_fs_scandir(NULL, &req, "/proc/self/task", 0, NULL) < 0)
        return false;
    /* Every entry is read: libuv frees only those it has handed out. */
    while (uv_fs_scandir_next(&req, &ent) != UV_EOF) {
        if (found)
            continue;
        char path[128], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", ent.name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
        if (strcmp(comm, name) != 0)
            continue;
        found = true;
        snprintf(path, sizeof path, "/proc/self/task/%s/status", ent.name);
        f = fopen(path, "r");
        char line[256];
        cpus[0] = '\0';
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
                snprintf(cpus, cap, "%s", line + 18 + strspn(line + 18, "\t "));
                cpus[strcspn(cpus, "\n")] = '\0';
            }
        if (f)
            fclose(f);
    }
    uv_fs_req_cleanup(&req);
    return found;
}

START_TEST(thread_name_and_affinity)
{
    void *ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_NAME_PREFIX, 77), 0);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_AFFINITY_CPU_ADD, 0), 0);
    void *s = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    zt_bind_tcp(s, ep, sizeof ep); /* the I/O threads are running now */
    char cpus[64] = "";
    bool found = false;
    uint64_t deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (!found && zl_test_now_ms() < deadline) {
        found = find_thread("77/ZMQbg/IO/0", cpus, sizeof cpus);
        if (!found)
            zl_test_sleep_ms(5);
    }
    ck_assert_msg(found, "no thread named 77/ZMQbg/IO/0");
    ck_assert_str_eq(cpus, "0");
    zt_close(s);
    zt_term(ctx);

    /* Without a prefix: libzmq's own name. */
    ctx = zt_ctx();
    s = zt_socket(ctx, ZLINK_PAIR);
    zt_bind_tcp(s, ep, sizeof ep);
    found = false;
    deadline = zl_test_now_ms() + ZT_TIMEOUT_MS;
    while (!found && zl_test_now_ms() < deadline) {
        found = find_thread("ZMQbg/IO/0", cpus, sizeof cpus);
        if (!found)
            zl_test_sleep_ms(5);
    }
    ck_assert(found);
    zt_close(s);
    zt_term(ctx);
}
END_TEST
#endif

/* Scheduling is best effort: a priority the process may not take (a
 * higher one without the privilege) leaves the threads running as before,
 * and traffic flows either way. Policy 0 is SCHED_OTHER on Linux, where
 * the priority becomes the thread's nice value, as in libzmq. */
START_TEST(sched_best_effort)
{
    void *ctx = zt_ctx();
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_SCHED_POLICY, 0), 0);
    ck_assert_int_eq(zlink_ctx_set(ctx, ZLINK_THREAD_PRIORITY, 19), 0);
    void *a = zt_socket(ctx, ZLINK_PAIR);
    void *b = zt_socket(ctx, ZLINK_PAIR);
    char ep[300];
    zt_bind_tcp(a, ep, sizeof ep);
    zt_connect(b, ep);
    zt_send_str(b, "scheduled", 0);
    zt_recv_str(a, "scheduled");
    zt_close(a);
    zt_close(b);
    zt_term(ctx);
}
END_TEST

static Suite *ctx_options_suite(void)
{
    Suite *s = suite_create("ctx_options");
    TCase *tc = tcase_create("ctx_options");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, values_and_checks);
    tcase_add_test(tc, blocky_off);
    tcase_add_test(tc, ipv6_default);
    tcase_add_test(tc, io_threads_changes);
    tcase_add_test(tc, io_threads_zero);
#if defined(__linux__)
    tcase_add_test(tc, thread_name_and_affinity);
#endif
    tcase_add_test(tc, sched_best_effort);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(ctx_options_suite());
}
