/* testutil.h — helpers shared by the Check suites: bounded waits, temporary
 * ipc paths, socket options and EINTR-proof send/recv, running a suite with
 * a summary ctest can read. (socket_testutil.h builds on these.) */
#ifndef ZL_TESTUTIL_H
#define ZL_TESTUTIL_H

/* Sanitizers add redzones, quarantines and shadow memory to every
 * allocation: tests measure memory then, but hold it to no bound. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ZL_TEST_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ZL_TEST_UNDER_SANITIZER 1
#endif
#endif

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Runs the suite (CK_FORK honoured) and returns the process exit code. */
int zl_test_run(Suite *suite);
/* Milliseconds of a monotonic clock. */
uint64_t zl_test_now_ms(void);
/* Sleeps for a duration. Not for waiting on something to happen: use the
 * waits below, which end as soon as it has. */
void zl_test_sleep_ms(int ms);
/* Waits about us microseconds without leaving the CPU below a millisecond,
 * where a sleep would take far longer; sleeps above it. For pacing a
 * sender, not for waiting on something to happen. */
void zl_test_wait_us(unsigned us);

/* Asks done(arg) until it says true or timeout_ms have passed, napping a
 * millisecond between asks; returns its last answer. For conditions no
 * event announces (a flag, a count, a file gone). */
typedef bool (*zl_test_cond)(void *arg);
bool zl_test_wait_until(zl_test_cond done, void *arg, int timeout_ms);
/* Waits until socket's ZLINK_EVENTS, masked by mask, equals want (e.g. a
 * message is waiting; no room to send is left). */
bool zl_test_wait_events(void *socket, int mask, int want, int timeout_ms);
/* Writes a fresh "ipc://<tmpdir>/zlink-test-XXXXXX/<n>" into buf; the
 * directory and its socket files go when the process exits. */
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

/* Monitors socket's events (a ZLINK_EVENT_* mask) on inproc://name and
 * returns the PAIR that reads them (LINGER 0; close it before the term). */
void *zl_test_monitor_open(void *ctx, void *socket, const char *name,
                           int events);
/* Reads monitor events until count of type event have come or timeout_ms
 * have passed; other events are skipped. True when all came. */
bool zl_test_wait_event(void *monitor, int event, int count, int timeout_ms);
/* Reads monitor events until one of type event comes, skipping others, and
 * gives its value; false after timeout_ms. */
bool zl_test_wait_event_value(void *monitor, int event, uint32_t *value,
                              int timeout_ms);

/* zlink_send/recv and zlink_msg_send/recv, retried while they fail with
 * EINTR: a peer process's exit raises SIGCHLD, which interrupts a blocking
 * call as in libzmq (zlink_ctx_term's wait too). Other results are
 * returned as they are. */
int zl_test_send_retry(void *socket, const void *buf, size_t len, int flags);
int zl_test_recv_retry(void *socket, void *buf, size_t len, int flags);
struct zlink_msg_t;
int zl_test_msg_send_retry(struct zlink_msg_t *msg, void *socket, int flags);
int zl_test_msg_recv_retry(struct zlink_msg_t *msg, void *socket, int flags);
/* zlink_ctx_term, called again while a signal interrupts it (EINTR). */
int zl_test_ctx_term(void *ctx);

#endif
