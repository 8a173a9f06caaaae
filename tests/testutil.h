/* testutil.h — helpers shared by the Check suites: bounded waits, temporary
 * ipc paths, running a suite with a summary ctest can read. */
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

#endif
