/* testutil.h — helpers shared by the Check suites: bounded waits, temporary
 * ipc paths, socket options and EINTR-proof send/recv, running a suite with
 * a summary ctest can read. (socket_testutil.h builds on these.) */
#ifndef ZL_TESTUTIL_H
#define ZL_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Runs the suite (CK_FORK honoured) and returns the process exit code. */
int zl_test_run(Suite *suite);
/* Milliseconds of a monotonic clock. */
uint64_t zl_test_now_ms(void);
void zl_test_sleep_ms(int ms);
/* Writes "ipc://<tmpdir>/zlink-test-<pid>-<n>" into buf. */
void zl_test_ipc_endpoint(char *buf, size_t cap);
/* True when running under Wine (tests skip what Wine cannot do). */
bool zl_test_under_wine(void);
/* True when ipc cases must be skipped: the system has no AF_UNIX stream
 * sockets (zlink_has("ipc") is 0: Windows before 10 1803, Wine 8). Says so
 * on stderr, once per process, naming the gap. */
bool zl_test_skip_ipc(void);

/* zlink_setsockopt of an int, failing the test (with errno's text) if the
 * option is refused. */
void zl_test_set_int(void *socket, int option, int value);

/* zlink_send/recv and zlink_msg_send/recv, retried while they fail with
 * EINTR: a peer process's exit raises SIGCHLD, which interrupts a blocking
 * call as in libzmq. Other results are returned as they are. */
int zl_test_send_retry(void *socket, const void *buf, size_t len, int flags);
int zl_test_recv_retry(void *socket, void *buf, size_t len, int flags);
struct zlink_msg_t;
int zl_test_msg_send_retry(struct zlink_msg_t *msg, void *socket, int flags);
int zl_test_msg_recv_retry(struct zlink_msg_t *msg, void *socket, int flags);

#endif
