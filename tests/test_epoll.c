/* test_epoll.c — epoll-only behaviour behind the backend contract: TCP
 * connections over loopback run a congestion control that does not pace
 * (loopback.c says why). With another backend it is one passing, skipping case.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "testutil.h"

#include <stdio.h>

#if defined(__linux__) && defined(ZLINK_BACKEND_EPOLL)

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "epoll_internal.h"
#include "socket_testutil.h"

static struct sockaddr_storage ip(const char *text)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    if (strchr(text, ':')) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        in6->sin6_family = AF_INET6;
        ck_assert_int_eq(inet_pton(AF_INET6, text, &in6->sin6_addr), 1);
    } else {
        struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
        in4->sin_family = AF_INET;
        ck_assert_int_eq(inet_pton(AF_INET, text, &in4->sin_addr), 1);
    }
    return ss;
}

static bool loopback(const char *text)
{
    struct sockaddr_storage ss = ip(text);
    return zl_epoll_is_loopback((struct sockaddr *)&ss);
}

START_TEST(test_loopback_addresses)
{
    ck_assert(loopback("127.0.0.1"));
    ck_assert(loopback("127.255.1.2"));
    ck_assert(loopback("::1"));
    ck_assert(loopback("::ffff:127.0.0.1"));
    ck_assert(!loopback("10.0.0.1"));
    ck_assert(!loopback("128.0.0.1"));
    ck_assert(!loopback("0.0.0.0"));
    ck_assert(!loopback("::"));
    ck_assert(!loopback("::2"));
    ck_assert(!loopback("::ffff:10.0.0.1"));
    ck_assert(!loopback("fe80::1"));
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    ck_assert(!zl_epoll_is_loopback((struct sockaddr *)&un));
}
END_TEST

static void congestion_control(int fd, char *name, socklen_t cap)
{
    memset(name, 0, cap);
    ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &cap),
                     0);
}

/* Only the socket is touched: no connection is made. */
START_TEST(test_unpace_only_loopback_peers)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    char before[32], after[32];
    congestion_control(fd, before, sizeof before);
    struct sockaddr_storage remote = ip("10.0.0.1");
    zl_epoll_unpace_loopback(fd, (struct sockaddr *)&remote);
    congestion_control(fd, after, sizeof after);
    ck_assert_str_eq(after, before);
    struct sockaddr_storage local = ip("127.0.0.1");
    zl_epoll_unpace_loopback(fd, (struct sockaddr *)&local);
    congestion_control(fd, after, sizeof after);
    ck_assert_msg(strcmp(after, "cubic") == 0 || strcmp(after, "reno") == 0,
                  "loopback socket kept %s", after);
    close(fd);
}
END_TEST

/* Counts this process's TCP sockets, the listener among them, and checks
 * that each runs cubic or reno. The system default here may be bbr: then a
 * socket made without the backend's choice shows up as bbr. */
static int check_tcp_sockets(void)
{
    DIR *dir = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(dir);
    int checked = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        int fd = atoi(entry->d_name);
        int protocol = 0;
        socklen_t len = sizeof protocol;
        if (entry->d_name[0] == '.' || fd == dirfd(dir) ||
            getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) != 0 ||
            protocol != IPPROTO_TCP)
            continue;
        int listening = 0;
        len = sizeof listening;
        ck_assert_int_eq(
            getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len), 0);
        char name[32];
        congestion_control(fd, name, sizeof name);
        ck_assert_msg(strcmp(name, "cubic") == 0 || strcmp(name, "reno") == 0,
                      "loopback %s socket (fd %d) runs %s",
                      listening ? "listening" : "connected", fd, name);
        checked++;
    }
    closedir(dir);
    return checked;
}

static void check_transport(int transport)
{
    void *ctx = zt_ctx();
    void *binder = zt_socket(ctx, ZLINK_PAIR);
    void *connecter = zt_socket(ctx, ZLINK_PAIR);
    char ep[256];
    if (zt_join(binder, connecter, transport, ep, sizeof ep)) {
        zt_send_str(connecter, "up", 0);
        zt_recv_str(binder, "up");
        /* The listener, and both ends: the connect()ed one and the
         * accept()ed one. */
        ck_assert_int_eq(check_tcp_sockets(), 3);
    } else {
        fprintf(stderr, "test_epoll: %s not available, skipped\n",
                zt_transport_name(transport));
    }
    zt_close(binder);
    zt_close(connecter);
    zt_term(ctx);
}

START_TEST(test_loopback_connections_do_not_pace)
{
    check_transport(ZT_TCP4);
    check_transport(ZT_TCP6);
}
END_TEST

#else /* not the epoll backend */

START_TEST(test_epoll_skipped)
{
    fprintf(stderr, "test_epoll: epoll backend only, skipped\n");
}
END_TEST

#endif

int main(void)
{
    Suite *s = suite_create("epoll");
    TCase *tc = tcase_create("epoll");
#if defined(__linux__) && defined(ZLINK_BACKEND_EPOLL)
    tcase_add_test(tc, test_loopback_addresses);
    tcase_add_test(tc, test_unpace_only_loopback_peers);
    tcase_add_test(tc, test_loopback_connections_do_not_pace);
#else
    tcase_add_test(tc, test_epoll_skipped);
#endif
    suite_add_tcase(s, tc);
    return zl_test_run(s);
}
