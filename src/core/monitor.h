/* monitor.h — socket events, delivered as libzmq's two-frame messages over
 * an inproc PAIR (zlink_socket_monitor). */
#ifndef ZL_MONITOR_H
#define ZL_MONITOR_H

#include <stdint.h>

struct zl_socket;

/* Thread-safe: called from I/O threads and the application thread. */
void zl_monitor_event(struct zl_socket *s, int event, uint64_t value,
                      const char *endpoint);
/* Sends MONITOR_STOPPED and closes the monitor (socket close). */
void zl_monitor_stop(struct zl_socket *s);
void zl_monitor_destroy(struct zl_socket *s);

#endif
