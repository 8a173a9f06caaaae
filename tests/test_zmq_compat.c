/* test_zmq_compat.c — include/zlink_zmq.h maps every zmq_* / ZMQ_* name onto
 * zlink with libzmq 4.3's own values, types and struct layouts. */
#include "testutil.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <zlink_zmq.h>

/* libzmq 4.3.4's values, copied from its zmq.h. The test must not include
 * zmq.h itself: the Windows cross build has no libzmq. */
#define LIBZMQ_CONSTANTS(X)                                                    \
    X(ZMQ_HAUSNUMERO, 156384712)                                               \
    X(ZMQ_DEFINED_STDINT, 1)                                                   \
    X(ZMQ_IO_THREADS, 1)                                                       \
    X(ZMQ_MAX_SOCKETS, 2)                                                      \
    X(ZMQ_SOCKET_LIMIT, 3)                                                     \
    X(ZMQ_MSG_T_SIZE, 6)                                                       \
    X(ZMQ_IO_THREADS_DFLT, 1)                                                  \
    X(ZMQ_MAX_SOCKETS_DFLT, 1023)                                              \
    X(ZMQ_THREAD_PRIORITY, 3)                                                  \
    X(ZMQ_THREAD_SCHED_POLICY, 4)                                              \
    X(ZMQ_THREAD_AFFINITY_CPU_ADD, 7)                                          \
    X(ZMQ_THREAD_AFFINITY_CPU_REMOVE, 8)                                       \
    X(ZMQ_THREAD_NAME_PREFIX, 9)                                               \
    X(ZMQ_THREAD_PRIORITY_DFLT, -1)                                            \
    X(ZMQ_THREAD_SCHED_POLICY_DFLT, -1)                                        \
    X(ZMQ_BLOCKY, 70)                                                          \
    X(ZMQ_TCP_KEEPALIVE, 34)                                                   \
    X(ZMQ_TCP_KEEPALIVE_CNT, 35)                                               \
    X(ZMQ_TCP_KEEPALIVE_IDLE, 36)                                              \
    X(ZMQ_TCP_KEEPALIVE_INTVL, 37)                                             \
    X(ZMQ_TOS, 57)                                                             \
    X(ZMQ_CONNECT_TIMEOUT, 79)                                                 \
    X(ZMQ_TCP_MAXRT, 80)                                                       \
    X(ZMQ_BINDTODEVICE, 92)                                                    \
    X(ZMQ_SOCKS_PROXY, 68)                                                     \
    X(ZMQ_SOCKS_USERNAME, 99)                                                  \
    X(ZMQ_SOCKS_PASSWORD, 100)                                                 \
    X(ZMQ_MORE, 1)                                                             \
    X(ZMQ_SHARED, 3)                                                           \
    X(ZMQ_SRCFD, 2)                                                            \
    X(ZMQ_PAIR, 0)                                                             \
    X(ZMQ_PUB, 1)                                                              \
    X(ZMQ_SUB, 2)                                                              \
    X(ZMQ_DEALER, 5)                                                           \
    X(ZMQ_ROUTER, 6)                                                           \
    X(ZMQ_XPUB, 9)                                                             \
    X(ZMQ_XSUB, 10)                                                            \
    X(ZMQ_REQ, 3)                                                              \
    X(ZMQ_REP, 4)                                                              \
    X(ZMQ_PULL, 7)                                                             \
    X(ZMQ_PUSH, 8)                                                             \
    X(ZMQ_REQ_CORRELATE, 52)                                                   \
    X(ZMQ_REQ_RELAXED, 53)                                                     \
    X(ZMQ_XREQ, 5)                                                             \
    X(ZMQ_XREP, 6)                                                             \
    X(ZMQ_IDENTITY, 5)                                                         \
    X(ZMQ_DELAY_ATTACH_ON_CONNECT, 39)                                         \
    X(ZMQ_CONNECT_RID, 61)                                                     \
    X(ZMQ_FAIL_UNROUTABLE, 33)                                                 \
    X(ZMQ_ROUTER_BEHAVIOR, 33)                                                 \
    X(ZMQ_MECHANISM, 43)                                                       \
    X(ZMQ_NULL, 0)                                                             \
    X(ZMQ_PLAIN, 1)                                                            \
    X(ZMQ_PLAIN_SERVER, 44)                                                    \
    X(ZMQ_PLAIN_USERNAME, 45)                                                  \
    X(ZMQ_PLAIN_PASSWORD, 46)                                                  \
    X(ZMQ_ZAP_DOMAIN, 55)                                                      \
    X(ZMQ_THREAD_SAFE, 81)                                                     \
    X(ZMQ_NOBLOCK, 1)                                                          \
    X(ZMQ_STREAMER, 1)                                                         \
    X(ZMQ_FORWARDER, 2)                                                        \
    X(ZMQ_QUEUE, 3)                                                            \
    X(ZMQ_ROUTING_ID, 5)                                                       \
    X(ZMQ_SUBSCRIBE, 6)                                                        \
    X(ZMQ_UNSUBSCRIBE, 7)                                                      \
    X(ZMQ_SNDBUF, 11)                                                          \
    X(ZMQ_RCVBUF, 12)                                                          \
    X(ZMQ_RCVMORE, 13)                                                         \
    X(ZMQ_FD, 14)                                                              \
    X(ZMQ_EVENTS, 15)                                                          \
    X(ZMQ_TYPE, 16)                                                            \
    X(ZMQ_LINGER, 17)                                                          \
    X(ZMQ_RECONNECT_IVL, 18)                                                   \
    X(ZMQ_BACKLOG, 19)                                                         \
    X(ZMQ_RECONNECT_IVL_MAX, 21)                                               \
    X(ZMQ_MAXMSGSIZE, 22)                                                      \
    X(ZMQ_SNDHWM, 23)                                                          \
    X(ZMQ_RCVHWM, 24)                                                          \
    X(ZMQ_RCVTIMEO, 27)                                                        \
    X(ZMQ_SNDTIMEO, 28)                                                        \
    X(ZMQ_LAST_ENDPOINT, 32)                                                   \
    X(ZMQ_ROUTER_MANDATORY, 33)                                                \
    X(ZMQ_IMMEDIATE, 39)                                                       \
    X(ZMQ_XPUB_VERBOSE, 40)                                                    \
    X(ZMQ_IPV6, 42)                                                            \
    X(ZMQ_IPV4ONLY, 31)                                                        \
    X(ZMQ_AFFINITY, 4)                                                         \
    X(ZMQ_USE_FD, 89)                                                          \
    X(ZMQ_RATE, 8)                                                             \
    X(ZMQ_RECOVERY_IVL, 9)                                                     \
    X(ZMQ_MULTICAST_HOPS, 25)                                                  \
    X(ZMQ_MULTICAST_MAXTPDU, 84)                                               \
    X(ZMQ_TCP_ACCEPT_FILTER, 38)                                               \
    X(ZMQ_IPC_FILTER_PID, 58)                                                  \
    X(ZMQ_IPC_FILTER_UID, 59)                                                  \
    X(ZMQ_IPC_FILTER_GID, 60)                                                  \
    X(ZMQ_GSSAPI, 3)                                                           \
    X(ZMQ_GSSAPI_SERVER, 62)                                                   \
    X(ZMQ_GSSAPI_PRINCIPAL, 63)                                                \
    X(ZMQ_GSSAPI_SERVICE_PRINCIPAL, 64)                                        \
    X(ZMQ_GSSAPI_PLAINTEXT, 65)                                                \
    X(ZMQ_GSSAPI_PRINCIPAL_NAMETYPE, 90)                                       \
    X(ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE, 91)                               \
    X(ZMQ_GSSAPI_NT_HOSTBASED, 0)                                              \
    X(ZMQ_GSSAPI_NT_USER_NAME, 1)                                              \
    X(ZMQ_GSSAPI_NT_KRB5_PRINCIPAL, 2)                                         \
    X(ZMQ_VMCI_BUFFER_SIZE, 85)                                                \
    X(ZMQ_VMCI_BUFFER_MIN_SIZE, 86)                                            \
    X(ZMQ_VMCI_BUFFER_MAX_SIZE, 87)                                            \
    X(ZMQ_VMCI_CONNECT_TIMEOUT, 88)                                            \
    X(ZMQ_CONNECT_ROUTING_ID, 61)                                              \
    X(ZMQ_HANDSHAKE_IVL, 66)                                                   \
    X(ZMQ_XPUB_NODROP, 69)                                                     \
    X(ZMQ_XPUB_MANUAL, 71)                                                     \
    X(ZMQ_XPUB_WELCOME_MSG, 72)                                                \
    X(ZMQ_HEARTBEAT_IVL, 75)                                                   \
    X(ZMQ_HEARTBEAT_TTL, 76)                                                   \
    X(ZMQ_HEARTBEAT_TIMEOUT, 77)                                               \
    X(ZMQ_XPUB_VERBOSER, 78)                                                   \
    X(ZMQ_DONTWAIT, 1)                                                         \
    X(ZMQ_SNDMORE, 2)                                                          \
    X(ZMQ_EVENT_CONNECTED, 0x0001)                                             \
    X(ZMQ_EVENT_CONNECT_DELAYED, 0x0002)                                       \
    X(ZMQ_EVENT_CONNECT_RETRIED, 0x0004)                                       \
    X(ZMQ_EVENT_LISTENING, 0x0008)                                             \
    X(ZMQ_EVENT_BIND_FAILED, 0x0010)                                           \
    X(ZMQ_EVENT_ACCEPTED, 0x0020)                                              \
    X(ZMQ_EVENT_ACCEPT_FAILED, 0x0040)                                         \
    X(ZMQ_EVENT_CLOSED, 0x0080)                                                \
    X(ZMQ_EVENT_CLOSE_FAILED, 0x0100)                                          \
    X(ZMQ_EVENT_DISCONNECTED, 0x0200)                                          \
    X(ZMQ_EVENT_MONITOR_STOPPED, 0x0400)                                       \
    X(ZMQ_EVENT_ALL, 0xFFFF)                                                   \
    X(ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL, 0x0800)                            \
    X(ZMQ_EVENT_HANDSHAKE_SUCCEEDED, 0x1000)                                   \
    X(ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL, 0x2000)                             \
    X(ZMQ_EVENT_HANDSHAKE_FAILED_AUTH, 0x4000)                                 \
    X(ZMQ_PROTOCOL_ERROR_ZMTP_UNSPECIFIED, 0x10000000)                         \
    X(ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND, 0x10000001)                  \
    X(ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE, 0x10000002)                    \
    X(ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED, 0x10000011)       \
    X(ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO, 0x10000013)             \
    X(ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE, 0x10000014)          \
    X(ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR, 0x10000015)             \
    X(ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED, 0x20000000)                          \
    X(ZMQ_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY, 0x20000001)                      \
    X(ZMQ_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID, 0x20000002)                       \
    X(ZMQ_PROTOCOL_ERROR_ZAP_BAD_VERSION, 0x20000003)                          \
    X(ZMQ_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE, 0x20000004)                  \
    X(ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA, 0x20000005)                     \
    X(ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY, 0x10000016)             \
    X(ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME, 0x10000017)           \
    X(ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA, 0x10000018)                    \
    X(ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH, 0x11000002)                  \
    X(ZMQ_POLLIN, 1)                                                           \
    X(ZMQ_POLLOUT, 2)                                                          \
    X(ZMQ_POLLERR, 4)                                                          \
    X(ZMQ_POLLPRI, 8)                                                          \
    X(ZMQ_POLLITEMS_DFLT, 16)

/* libzmq's own errno values, which zlink shares by name. */
#define LIBZMQ_ERRNOS(X)                                                       \
    X(EFSM, 156384712 + 51)                                                    \
    X(ENOCOMPATPROTO, 156384712 + 52)                                          \
    X(ETERM, 156384712 + 53)                                                   \
    X(EMTHREAD, 156384712 + 54)

/* A wrong value fails the build, not only the run. */
#define STATIC_CHECK(name, value)                                              \
    _Static_assert((name) == (value), #name " differs from libzmq");
LIBZMQ_CONSTANTS(STATIC_CHECK)
LIBZMQ_ERRNOS(STATIC_CHECK)

struct constant {
    const char *name;
    long long value;
    long long libzmq;
};

#define TABLE_ROW(name, value) {#name, (long long)(name), (long long)(value)},
static const struct constant constants[] = {LIBZMQ_CONSTANTS(TABLE_ROW)
                                                LIBZMQ_ERRNOS(TABLE_ROW)};

START_TEST(test_constants_match_libzmq)
{
    size_t count = sizeof constants / sizeof constants[0];
    for (size_t i = 0; i < count; i++)
        ck_assert_msg(constants[i].value == constants[i].libzmq,
                      "%s is %lld, libzmq has %lld", constants[i].name,
                      constants[i].value, constants[i].libzmq);
}
END_TEST

#define LIBZMQ_FUNCTIONS(X)                                                    \
    X(errno)                                                                   \
    X(strerror)                                                                \
    X(has)                                                                     \
    X(ctx_new)                                                                 \
    X(ctx_term)                                                                \
    X(ctx_shutdown)                                                            \
    X(ctx_set)                                                                 \
    X(ctx_get)                                                                 \
    X(msg_init)                                                                \
    X(msg_init_size)                                                           \
    X(msg_init_data)                                                           \
    X(msg_send)                                                                \
    X(msg_recv)                                                                \
    X(msg_close)                                                               \
    X(msg_move)                                                                \
    X(msg_copy)                                                                \
    X(msg_data)                                                                \
    X(msg_size)                                                                \
    X(msg_more)                                                                \
    X(msg_get)                                                                 \
    X(msg_set)                                                                 \
    X(socket)                                                                  \
    X(close)                                                                   \
    X(setsockopt)                                                              \
    X(getsockopt)                                                              \
    X(bind)                                                                    \
    X(connect)                                                                 \
    X(unbind)                                                                  \
    X(disconnect)                                                              \
    X(send)                                                                    \
    X(send_const)                                                              \
    X(recv)                                                                    \
    X(socket_monitor)                                                          \
    X(poll)                                                                    \
    X(proxy)                                                                   \
    X(proxy_steerable)                                                         \
    X(init)                                                                    \
    X(term)                                                                    \
    X(sendmsg)                                                                 \
    X(recvmsg)                                                                 \
    X(sendiov)                                                                 \
    X(recviov)                                                                 \
    X(device)                                                                  \
    X(sleep)                                                                   \
    X(stopwatch_start)                                                         \
    X(stopwatch_intermediate)                                                  \
    X(stopwatch_stop)                                                          \
    X(threadstart)                                                             \
    X(threadclose)                                                             \
    X(atomic_counter_new)                                                      \
    X(atomic_counter_set)                                                      \
    X(atomic_counter_inc)                                                      \
    X(atomic_counter_dec)                                                      \
    X(atomic_counter_value)                                                    \
    X(atomic_counter_destroy)                                                  \
    X(z85_encode)                                                              \
    X(z85_decode)

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
/* Expands zmq_<name> through the map and compares the spelling, so the test
 * checks the mapping without needing every function linked in. */
#define NAME_ROW(name) {STRINGIFY(zmq_##name), "zlink_" #name},

START_TEST(test_functions_map_to_zlink)
{
    static const struct {
        const char *mapped;
        const char *expected;
    } names[] = {LIBZMQ_FUNCTIONS(NAME_ROW)};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ck_assert_str_eq(names[i].mapped, names[i].expected);
    /* Two names that map to another spelling on purpose. */
    ck_assert_str_eq(STRINGIFY(zmq_version), "zlink_zmq_api_version");
    ck_assert_str_eq(STRINGIFY(zmq_ctx_destroy), "zlink_ctx_term");
}
END_TEST

/* A feature check written for libzmq must preprocess, and take 4.3's
 * branch. */
#if ZMQ_VERSION < ZMQ_MAKE_VERSION(4, 3, 0) ||                                 \
    ZMQ_VERSION >= ZMQ_MAKE_VERSION(4, 4, 0)
#error "zlink_zmq.h must give the libzmq 4.3 API level"
#endif

/* Programs written for libzmq take the poller and timer paths only where
 * these are defined. */
#if !defined(ZMQ_HAS_CAPABILITIES) || !defined(ZMQ_HAVE_TIMERS) ||             \
    !defined(ZMQ_HAVE_POLLER)
#error "zlink_zmq.h must announce zmq_has, the timers and the poller"
#endif

START_TEST(test_version_is_the_api_level)
{
    int major = -1, minor = -1, patch = -1;
    zmq_version(&major, &minor, &patch);
    ck_assert_int_eq(major, ZMQ_VERSION_MAJOR);
    ck_assert_int_eq(minor, ZMQ_VERSION_MINOR);
    ck_assert_int_eq(patch, ZMQ_VERSION_PATCH);
    ck_assert_int_eq(ZMQ_VERSION, 40304);
    /* zlink's own version is still there, under its own name. */
    zlink_version(&major, &minor, &patch);
    ck_assert_int_eq(major, ZLINK_VERSION_MAJOR);
    ck_assert_int_eq(minor, ZLINK_VERSION_MINOR);
}
END_TEST

/* Source compatible, not binary: zlink's message is 128 bytes (zlink.h). */
_Static_assert(sizeof(zmq_msg_t) == sizeof(zlink_msg_t),
               "zmq_msg_t is zlink's message");
_Static_assert(offsetof(zmq_pollitem_t, socket) == 0, "pollitem.socket");
_Static_assert(offsetof(zmq_pollitem_t, fd) == sizeof(void *),
               "pollitem.fd follows socket");
_Static_assert(offsetof(zmq_pollitem_t, events) ==
                   sizeof(void *) + sizeof(zmq_fd_t),
               "pollitem.events follows fd");
_Static_assert(offsetof(zmq_pollitem_t, revents) ==
                   offsetof(zmq_pollitem_t, events) + sizeof(short),
               "pollitem.revents follows events");

static void free_nothing(void *data, void *hint) {}

START_TEST(test_types_match_libzmq)
{
    ck_assert_uint_eq(sizeof(zmq_msg_t), 128);
    /* "struct zmq_msg_t" is valid libzmq code too. */
    ck_assert_uint_eq(sizeof(struct zmq_msg_t), 128);
    ck_assert_uint_eq(offsetof(zmq_pollitem_t, socket), 0);
    ck_assert_uint_lt(offsetof(zmq_pollitem_t, socket),
                      offsetof(zmq_pollitem_t, fd));
    ck_assert_uint_lt(offsetof(zmq_pollitem_t, fd),
                      offsetof(zmq_pollitem_t, events));
    ck_assert_uint_lt(offsetof(zmq_pollitem_t, events),
                      offsetof(zmq_pollitem_t, revents));

    /* libzmq code initialises poll items positionally. */
    int socket_stand_in = 0;
    zmq_pollitem_t item = {&socket_stand_in, 0, ZMQ_POLLIN, 0};
    ck_assert_ptr_eq(item.socket, &socket_stand_in);
    ck_assert_int_eq(item.events, ZMQ_POLLIN);
    ck_assert_int_eq(item.revents, 0);
    zmq_fd_t fd = item.fd;
    ck_assert(fd == 0);

    zmq_free_fn *free_fn = free_nothing;
    zlink_free_fn *same = free_fn;
    ck_assert(same == free_nothing);
}
END_TEST

/* zmq_strerror names the socket errors on every platform: Windows' C
 * runtime knows none of mingw's codes from 100 up ("Unknown error"). */
START_TEST(test_strerror_names_socket_errors)
{
    static const struct {
        int code;
        const char *words;
    } texts[] = {
        {EADDRINUSE, "in use"},        {ECONNREFUSED, "refused"},
        {ETIMEDOUT, "timed out"},      {ENOTSUP, "not supported"},
        {EPROTONOSUPPORT, "Protocol"}, {EHOSTUNREACH, "unreachable"},
        {ENOTSOCK, "non-socket"},      {ETERM, "terminated"},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        const char *text = zmq_strerror(texts[i].code);
        ck_assert_msg(text && strstr(text, texts[i].words), "%d: %s",
                      texts[i].code, text ? text : "(null)");
    }
}
END_TEST

/* As a libzmq built without Kerberos or VMCI answers code that names
 * them: the options are EINVAL both ways, and zmq_has says no. */
START_TEST(test_gssapi_and_vmci_are_refused)
{
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    static const int options[] = {
        ZMQ_GSSAPI_SERVER,
        ZMQ_GSSAPI_PRINCIPAL,
        ZMQ_GSSAPI_SERVICE_PRINCIPAL,
        ZMQ_GSSAPI_PLAINTEXT,
        ZMQ_GSSAPI_PRINCIPAL_NAMETYPE,
        ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE,
        ZMQ_VMCI_BUFFER_SIZE,
        ZMQ_VMCI_BUFFER_MIN_SIZE,
        ZMQ_VMCI_BUFFER_MAX_SIZE,
        ZMQ_VMCI_CONNECT_TIMEOUT,
    };
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        int one = 1;
        ck_assert_int_eq(zmq_setsockopt(s, options[i], &one, sizeof one), -1);
        ck_assert_int_eq(zmq_errno(), EINVAL);
        char buf[64];
        size_t len = sizeof buf;
        ck_assert_int_eq(zmq_getsockopt(s, options[i], buf, &len), -1);
        ck_assert_int_eq(zmq_errno(), EINVAL);
    }
    ck_assert_int_eq(zmq_has("gssapi"), 0);
    ck_assert_int_eq(zmq_has("vmci"), 0);
    zmq_close(s);
    zmq_ctx_term(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("zmq_compat");
    TCase *tc = tcase_create("zlink_zmq.h");
    tcase_add_test(tc, test_constants_match_libzmq);
    tcase_add_test(tc, test_functions_map_to_zlink);
    tcase_add_test(tc, test_types_match_libzmq);
    tcase_add_test(tc, test_version_is_the_api_level);
    tcase_add_test(tc, test_strerror_names_socket_errors);
    tcase_add_test(tc, test_gssapi_and_vmci_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return zl_test_run(suite());
}
