/* raw_socket.h — raw TCP sockets (BSD or winsock) for the suites playing a
 * ZMTP peer, client or server. */
#ifndef ZL_RAW_SOCKET_H
#define ZL_RAW_SOCKET_H

#include <stdbool.h>
#include <stddef.h>

#if defined(_WIN32)
#include <winsock2.h>
#include <ws2tcpip.h>
typedef SOCKET raw_fd;
typedef int raw_len;
#define RAW_INVALID INVALID_SOCKET
#else
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>
typedef int raw_fd;
typedef socklen_t raw_len;
#define RAW_INVALID (-1)
#endif

/* Once per suite, before the first raw socket: winsock started, and on
 * POSIX SIGPIPE ignored, so that writing to a connection the server
 * closed fails instead of ending the suite. */
void raw_sockets_init(void);
void raw_close(raw_fd fd);
/* Ends what we send (the peer reads EOF); we can still read. */
void raw_shutdown_send(raw_fd fd);
/* A listener on an ephemeral 127.0.0.1 port (asserted); its port in
 * *port. */
raw_fd raw_listen(int backlog, int *port);
/* The next TCP_NODELAY connection the listener takes, or RAW_INVALID when
 * none comes within the timeout. */
raw_fd raw_accept(raw_fd listener, int timeout_ms);
/* A TCP_NODELAY connection to 127.0.0.1:port (asserted). */
raw_fd raw_connect(int port);
/* As raw_connect, with a socket buffer (SO_SNDBUF or SO_RCVBUF) of a fixed
 * size, set before the connect so that the window follows it. */
raw_fd raw_connect_buffered(int port, int buffer_option, int size);
/* Sends all of data (asserted). */
void raw_send(raw_fd fd, const void *data, size_t len);
bool raw_readable(raw_fd fd, int timeout_ms);
/* Reads exactly len bytes; false on EOF, error or timeout. */
bool raw_recv_exact(raw_fd fd, void *buf, size_t len, int timeout_ms);
/* True when the other side closes the connection (EOF or reset) within the
 * timeout; whatever it sent before is discarded. */
bool raw_closed_by_peer(raw_fd fd, int timeout_ms);

#endif
