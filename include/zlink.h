/* zlink.h — the whole public API of zlink: a ZMTP 3.1 messaging library.
 *
 * Names and numeric values follow libzmq wherever libzmq has the same thing,
 * so that include/zlink_zmq.h can map zmq_* names one to one. zlink's own
 * options take numbers from 1000 up. Functions return 0 (or a count) on
 * success, and -1 with errno set on failure. */
#ifndef ZLINK_H_INCLUDED
#define ZLINK_H_INCLUDED

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#include <winsock2.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ZLINK_STATIC)
#define ZLINK_EXPORT
#elif defined(_WIN32)
#if defined(ZLINK_BUILDING)
#define ZLINK_EXPORT __declspec(dllexport)
#else
#define ZLINK_EXPORT __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define ZLINK_EXPORT __attribute__((visibility("default")))
#else
#define ZLINK_EXPORT
#endif

#define ZLINK_VERSION_MAJOR 0
#define ZLINK_VERSION_MINOR 2
#define ZLINK_VERSION_PATCH 0

/* The libzmq API level zlink implements: what zlink_zmq.h gives as
 * ZMQ_VERSION_* and zmq_version(), so that a ported program's feature
 * checks take libzmq 4.3's branch. zlink's own version is ZLINK_VERSION_*
 * and zlink_version(). */
#define ZLINK_ZMQ_API_MAJOR 4
#define ZLINK_ZMQ_API_MINOR 3
#define ZLINK_ZMQ_API_PATCH 4

/* Errors. POSIX codes come from <errno.h>; these are libzmq's own. */
#define ZLINK_HAUSNUMERO 156384712
#ifndef ENOTSUP
#define ENOTSUP (ZLINK_HAUSNUMERO + 1)
#endif
#ifndef EPROTONOSUPPORT
#define EPROTONOSUPPORT (ZLINK_HAUSNUMERO + 2)
#endif
#ifndef ENOBUFS
#define ENOBUFS (ZLINK_HAUSNUMERO + 3)
#endif
#ifndef ENETDOWN
#define ENETDOWN (ZLINK_HAUSNUMERO + 4)
#endif
#ifndef EADDRINUSE
#define EADDRINUSE (ZLINK_HAUSNUMERO + 5)
#endif
#ifndef EADDRNOTAVAIL
#define EADDRNOTAVAIL (ZLINK_HAUSNUMERO + 6)
#endif
#ifndef ECONNREFUSED
#define ECONNREFUSED (ZLINK_HAUSNUMERO + 7)
#endif
#ifndef EINPROGRESS
#define EINPROGRESS (ZLINK_HAUSNUMERO + 8)
#endif
#ifndef ENOTSOCK
#define ENOTSOCK (ZLINK_HAUSNUMERO + 9)
#endif
#ifndef EMSGSIZE
#define EMSGSIZE (ZLINK_HAUSNUMERO + 10)
#endif
#ifndef EAFNOSUPPORT
#define EAFNOSUPPORT (ZLINK_HAUSNUMERO + 11)
#endif
#ifndef ENETUNREACH
#define ENETUNREACH (ZLINK_HAUSNUMERO + 12)
#endif
#ifndef ECONNABORTED
#define ECONNABORTED (ZLINK_HAUSNUMERO + 13)
#endif
#ifndef ECONNRESET
#define ECONNRESET (ZLINK_HAUSNUMERO + 14)
#endif
#ifndef ENOTCONN
#define ENOTCONN (ZLINK_HAUSNUMERO + 15)
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT (ZLINK_HAUSNUMERO + 16)
#endif
#ifndef EHOSTUNREACH
#define EHOSTUNREACH (ZLINK_HAUSNUMERO + 17)
#endif
#ifndef ENETRESET
#define ENETRESET (ZLINK_HAUSNUMERO + 18)
#endif
#define EFSM (ZLINK_HAUSNUMERO + 51)
#define ENOCOMPATPROTO (ZLINK_HAUSNUMERO + 52)
#define ETERM (ZLINK_HAUSNUMERO + 53)
#define EMTHREAD (ZLINK_HAUSNUMERO + 54)

ZLINK_EXPORT int zlink_errno(void);
ZLINK_EXPORT const char *zlink_strerror(int errnum);
ZLINK_EXPORT void zlink_version(int *major, int *minor, int *patch);
/* 1 if the capability ("ipc", "tls", "ws", "wss", "curve") is built in; 0
 * for any other name, libzmq's "gssapi", "pgm" and "draft" included. */
ZLINK_EXPORT int zlink_has(const char *capability);

/* Context. */
#define ZLINK_IO_THREADS 1
#define ZLINK_MAX_SOCKETS 2
#define ZLINK_SOCKET_LIMIT 3
/* Kept and read back (default INT_MAX), as libzmq, which applies it
 * nowhere: a socket's inbound limit is ZLINK_MAXMSGSIZE. */
#define ZLINK_MAX_MSGSZ 5
#define ZLINK_MSG_T_SIZE 6
#define ZLINK_IO_THREADS_DFLT 1
#define ZLINK_MAX_SOCKETS_DFLT 1023
/* Context, zlink's own: 1060-1069. ZLINK_SPIN_BUDGET is the longest, in
 * microseconds, that a thread of the context busy-waits before it sleeps:
 * an application thread in a blocking receive or zlink_poll, and an I/O
 * thread before it sleeps in the OS. Spinning saves the wakeups of a busy
 * peer's messages at the price of CPU time; 0 never spins, so a thread
 * waiting for a message costs no CPU (battery-powered apps). Settable at
 * any time, 0 to 1000000. The default, 30, spent the least CPU per
 * request at steady request rates between two processes, with no slower
 * round trip; a longer spin only pays for streams of large bodies
 * (docs/options.md). */
#define ZLINK_SPIN_BUDGET 1060
#define ZLINK_SPIN_BUDGET_DFLT 30

/* libzmq's context options for I/O threads, applied best effort when the
 * threads start (at the first bind or connect). SCHED_POLICY and PRIORITY
 * are the OS's values (SCHED_FIFO, …); 3 is ZLINK_SOCKET_LIMIT for
 * zlink_ctx_get and THREAD_PRIORITY for zlink_ctx_set, as in libzmq.
 * THREAD_NAME_PREFIX is a number: threads are named "<n>/ZMQbg/IO/<i>". */
#define ZLINK_THREAD_PRIORITY 3
#define ZLINK_THREAD_SCHED_POLICY 4
#define ZLINK_THREAD_AFFINITY_CPU_ADD 7
#define ZLINK_THREAD_AFFINITY_CPU_REMOVE 8
#define ZLINK_THREAD_NAME_PREFIX 9
#define ZLINK_THREAD_PRIORITY_DFLT -1
#define ZLINK_THREAD_SCHED_POLICY_DFLT -1
/* Default 1; 0 gives new sockets a LINGER of 0, so that zlink_ctx_term
 * never waits for unsent messages. */
#define ZLINK_BLOCKY 70
/* ZLINK_IPV6 (42) is also a context option: the default of new sockets. */

ZLINK_EXPORT void *zlink_ctx_new(void);
ZLINK_EXPORT int zlink_ctx_term(void *context);
ZLINK_EXPORT int zlink_ctx_shutdown(void *context);
ZLINK_EXPORT int zlink_ctx_set(void *context, int option, int optval);
ZLINK_EXPORT int zlink_ctx_get(void *context, int option);

/* Messages. 128 bytes (libzmq's zmq_msg_t has 64): bodies up to 104 bytes
 * travel inside the message itself, with no allocation anywhere on their
 * way, which more than doubles the rate of small messages. */
typedef struct zlink_msg_t {
#if defined(_MSC_VER)
    __declspec(align(8)) unsigned char _[128];
#elif defined(__GNUC__)
    unsigned char _[128] __attribute__((aligned(8)));
#elif defined(__cplusplus)
    alignas(8) unsigned char _[128];
#else
    _Alignas(8) unsigned char _[128];
#endif
} zlink_msg_t;

typedef void(zlink_free_fn)(void *data, void *hint);

ZLINK_EXPORT int zlink_msg_init(zlink_msg_t *msg);
ZLINK_EXPORT int zlink_msg_init_size(zlink_msg_t *msg, size_t size);
ZLINK_EXPORT int zlink_msg_init_data(zlink_msg_t *msg, void *data, size_t size,
                                     zlink_free_fn *ffn, void *hint);
/* As in libzmq: a send that succeeds leaves msg empty, one that fails
 * leaves it as it was; a receive releases what msg held first, and leaves
 * it empty when it fails. */
ZLINK_EXPORT int zlink_msg_send(zlink_msg_t *msg, void *socket, int flags);
ZLINK_EXPORT int zlink_msg_recv(zlink_msg_t *msg, void *socket, int flags);
ZLINK_EXPORT int zlink_msg_close(zlink_msg_t *msg);
ZLINK_EXPORT int zlink_msg_move(zlink_msg_t *dest, zlink_msg_t *src);
ZLINK_EXPORT int zlink_msg_copy(zlink_msg_t *dest, zlink_msg_t *src);
ZLINK_EXPORT void *zlink_msg_data(zlink_msg_t *msg);
ZLINK_EXPORT size_t zlink_msg_size(const zlink_msg_t *msg);
ZLINK_EXPORT int zlink_msg_more(const zlink_msg_t *msg);
ZLINK_EXPORT int zlink_msg_get(const zlink_msg_t *msg, int property);
/* As libzmq's zmq_msg_set: no property can be set (EINVAL). */
ZLINK_EXPORT int zlink_msg_set(zlink_msg_t *msg, int property, int value);

/* Message properties for zlink_msg_get. */
#define ZLINK_MORE 1
#define ZLINK_SHARED 3
/* libzmq's deprecated ZMQ_SRCFD: the OS socket of the connection a message
 * came in on (-1 with EINVAL when none: inproc, or a message made here).
 * The connection may be gone by the time it is read: prefer
 * zlink_msg_gets(msg, "Peer-Address"). */
#define ZLINK_SRCFD 2

/* A property of the connection msg was received on, as libzmq's
 * zmq_msg_gets: every property the peer sent in READY under its own name
 * ("Socket-Type", "Identity", ...), and "Peer-Address" (the peer's IP for
 * tcp, tls, ws and wss; "localhost:uid:gid:pid" for ipc where the OS tells).
 * "Routing-Id" is the peer's Identity too. Names are case-sensitive. The
 * string lives as long as msg (or a copy of it). NULL with EINVAL for a
 * property the connection does not have, and for every property of a
 * message sent locally or over inproc. */
ZLINK_EXPORT const char *zlink_msg_gets(const zlink_msg_t *msg,
                                        const char *property);
#define ZLINK_MSG_PROPERTY_ROUTING_ID "Routing-Id"
#define ZLINK_MSG_PROPERTY_SOCKET_TYPE "Socket-Type"
#define ZLINK_MSG_PROPERTY_USER_ID "User-Id"
#define ZLINK_MSG_PROPERTY_PEER_ADDRESS "Peer-Address"

/* Socket types. */
#define ZLINK_PAIR 0
#define ZLINK_PUB 1
#define ZLINK_SUB 2
#define ZLINK_REQ 3
#define ZLINK_REP 4
#define ZLINK_DEALER 5
#define ZLINK_ROUTER 6
#define ZLINK_PULL 7
#define ZLINK_PUSH 8
#define ZLINK_XPUB 9
#define ZLINK_XSUB 10
/* Raw TCP (or ipc, tls): no ZMTP on the wire. Each message is the peer's
 * routing id, then bytes as they came; an empty one announces a connection
 * or its end (STREAM_NOTIFY). Sending the id and an empty frame closes
 * that connection. libzmq's ZMQ_STREAM. */
#define ZLINK_STREAM 11

/* Socket options. */
#define ZLINK_ROUTING_ID 5
#define ZLINK_SUBSCRIBE 6
#define ZLINK_UNSUBSCRIBE 7
#define ZLINK_SNDBUF 11
#define ZLINK_RCVBUF 12
#define ZLINK_RCVMORE 13
/* ZLINK_FD (zlink_fd_t): an OS handle for an application's own event loop
 * (epoll, kqueue, WSAPoll, a game loop). It becomes readable when the
 * socket's state may have changed: messages arrived on a pipe the socket had
 * found empty, room came back after the high-water mark, or a peer came or
 * went. It is not a count of messages. After it becomes readable, read
 * ZLINK_EVENTS (which clears it) and then zlink_recv / zlink_send with
 * ZLINK_DONTWAIT until EAGAIN; only then wait on the FD again. This is
 * libzmq's contract, so code written for ZMQ_FD works unchanged. Never read
 * from or write to the handle yourself. */
#define ZLINK_FD 14
#define ZLINK_EVENTS 15
#define ZLINK_TYPE 16
#define ZLINK_LINGER 17
#define ZLINK_RECONNECT_IVL 18
#define ZLINK_BACKLOG 19
/* zlink's default listen backlog (libzmq's is 100), capped by the system's
 * own limit (net.core.somaxconn on Linux, kern.ipc.somaxconn on macOS). */
#define ZLINK_BACKLOG_DFLT 4096
#define ZLINK_RECONNECT_IVL_MAX 21
#define ZLINK_MAXMSGSIZE 22
#define ZLINK_SNDHWM 23
#define ZLINK_RCVHWM 24
#define ZLINK_RCVTIMEO 27
#define ZLINK_SNDTIMEO 28
#define ZLINK_LAST_ENDPOINT 32
#define ZLINK_ROUTER_MANDATORY 33
#define ZLINK_IMMEDIATE 39
#define ZLINK_XPUB_VERBOSE 40
#define ZLINK_IPV6 42
/* int 0 or 1, libzmq's deprecated inverse of ZLINK_IPV6 (default 1). */
#define ZLINK_IPV4ONLY 31
/* int, default -1: a socket the application made, bound and listens on
 * (systemd's socket activation), which the next tcp, tls or ipc bind takes
 * instead of making its own, whatever address it names; zlink closes it
 * with that bind. Set it to -1 again before another bind. EINVAL from the
 * bind when it is not a listening socket of the endpoint's kind. As
 * libzmq's. */
#define ZLINK_USE_FD 89
/* int: libzmq's multicast settings (RATE kbit/s, default 100, > 0;
 * RECOVERY_IVL ms, default 10000, >= 0; MULTICAST_HOPS, default 1, > 0;
 * MULTICAST_MAXTPDU bytes, default 1500, > 0), kept and read back as a
 * libzmq built without pgm and norm keeps them. zlink has no multicast
 * transport: an "epgm://" or "pgm://" endpoint is EPROTONOSUPPORT. */
#define ZLINK_RATE 8
#define ZLINK_RECOVERY_IVL 9
#define ZLINK_MULTICAST_HOPS 25
#define ZLINK_MULTICAST_MAXTPDU 84
/* uint64_t, default 0: the I/O threads (bit i: the i-th) that may serve
 * the socket's later binds and connects; 0 is any. A mask that names no
 * running thread makes them fail with EMTHREAD. libzmq's. */
#define ZLINK_AFFINITY 4
/* Accept filters, libzmq's (deprecated there in favour of ZAP): a bound
 * socket closes a connection none of them admits as soon as it is
 * accepted, with ZLINK_EVENT_ACCEPT_FAILED (EACCES). Each set adds one;
 * NULL with length 0 (or "" for the string) clears that kind. Write-only.
 * TCP_ACCEPT_FILTER, string: "a.b.c.d[/bits]", or an IPv6 one when
 * ZLINK_IPV6 is set; for tcp, tls, ws and wss binds. IPC_FILTER_UID, _GID
 * (uid_t, gid_t; a group also admits its members) and _PID (pid_t): the
 * peer process of an ipc connection, on Linux (EINVAL elsewhere). */
#define ZLINK_TCP_ACCEPT_FILTER 38
#define ZLINK_IPC_FILTER_PID 58
#define ZLINK_IPC_FILTER_UID 59
#define ZLINK_IPC_FILTER_GID 60
/* int, read-only: the ZMTP security mechanism, ZLINK_NULL unless a PLAIN
 * or CURVE option is set. TLS (tls://, wss://) works under any of them. */
#define ZLINK_MECHANISM 43
#define ZLINK_NULL 0
#define ZLINK_PLAIN 1
#define ZLINK_CURVE 2
/* int: 1 makes the socket a PLAIN server, which asks the ZAP handler the
 * application bound at inproc://zeromq.zap.01 about every client (and
 * refuses them all while none is bound); 0 goes back to NULL. */
#define ZLINK_PLAIN_SERVER 44
/* binary, 1-255 bytes: the credentials a PLAIN client sends in its HELLO
 * (ZMTP-PLAIN, rfc.zeromq.org spec 24). Setting either makes the socket a
 * PLAIN client; NULL with length 0 goes back to NULL. Sent in clear text:
 * use them over tls:// or a trusted network. */
#define ZLINK_PLAIN_USERNAME 45
#define ZLINK_PLAIN_PASSWORD 46
/* CURVE (ZMTP-CURVE, rfc.zeromq.org spec 26), as in libzmq, in builds with
 * zlink_has("curve"). int: 1 makes the socket a CURVE server, which needs
 * its SECRETKEY and asks the ZAP handler about each client when one is
 * bound; 0 goes back to NULL. */
#define ZLINK_CURVE_SERVER 47
/* Keys, 32 bytes binary or 40 Z85 characters (41 with a NUL). A client
 * sets its own PUBLICKEY and SECRETKEY, and the server's SERVERKEY, which
 * makes it a CURVE client. Read back as 32 bytes, or as Z85 into 41. */
#define ZLINK_CURVE_PUBLICKEY 48
#define ZLINK_CURVE_SECRETKEY 49
#define ZLINK_CURVE_SERVERKEY 50
/* string, up to 255 bytes: the domain a PLAIN server names in its ZAP
 * requests. Set on a NULL-mechanism socket, it has the ZAP handler asked
 * about each peer too, when one is bound (tcp, ipc, tls), as in libzmq. */
#define ZLINK_ZAP_DOMAIN 55
/* int, default 0: with a ZAP_DOMAIN and no ZAP handler bound, a NULL
 * socket refuses its peers instead of admitting them unasked. libzmq's
 * value (a draft option there). */
#define ZLINK_ZAP_ENFORCE_DOMAIN 93
/* REQ, int, default 0: each request starts with a request id frame, and
 * only the reply that carries it back is taken. */
#define ZLINK_REQ_CORRELATE 52
/* REQ, int, default 0: a new request may be sent before the last one's
 * reply; that reply is then dropped. */
#define ZLINK_REQ_RELAXED 53
#define ZLINK_CONNECT_ROUTING_ID 61
#define ZLINK_HANDSHAKE_IVL 66
#define ZLINK_XPUB_NODROP 69
#define ZLINK_XPUB_MANUAL 71
#define ZLINK_XPUB_WELCOME_MSG 72
#define ZLINK_HEARTBEAT_IVL 75
#define ZLINK_HEARTBEAT_TTL 76
#define ZLINK_HEARTBEAT_TIMEOUT 77
#define ZLINK_XPUB_VERBOSER 78
/* int, read-only: whether the socket may be used from several threads at
 * once; 0, as for every libzmq socket type zlink has. */
#define ZLINK_THREAD_SAFE 81
/* libzmq's, with its values. PROBE_ROUTER (int, write-only, DEALER, ROUTER,
 * REQ): an empty message goes to each new peer first. CONFLATE (int,
 * DEALER, PULL, PUSH, PUB, SUB): keep only the newest single-part message
 * per connection (docs/options.md says what zlink does with multipart).
 * ROUTER_HANDOVER (int, write-only, ROUTER): a peer announcing a routing id
 * in use takes it over from the connected one, which is disconnected;
 * without it the newcomer is ignored, as in libzmq. INVERT_MATCHING (int,
 * PUB, XPUB, SUB): deliver what does not match the subscriptions; set it
 * on the publisher and its subscribers alike. */
#define ZLINK_PROBE_ROUTER 51
#define ZLINK_CONFLATE 54
#define ZLINK_ROUTER_HANDOVER 56
#define ZLINK_INVERT_MATCHING 74
/* int 0 or 1, STREAM: the empty messages that announce each connection
 * and its end (default 1). libzmq's value. */
#define ZLINK_STREAM_NOTIFY 73

/* tcp (and tls, ws, wss) connections, libzmq's values and units:
 * TCP_KEEPALIVE -1 (OS default), 0 or 1; its CNT, IDLE and INTVL (seconds)
 * -1 for the OS default; TOS the IP_TOS byte (0: leave); CONNECT_TIMEOUT ms
 * before a connect that has not completed is abandoned and retried (0: the
 * OS's own); TCP_MAXRT ms before an unacknowledged send drops the connection
 * (TCP_USER_TIMEOUT, Windows' TCP_MAXRT; 0: the OS's own); BINDTODEVICE an
 * interface name (string, at most 16 bytes; where the OS has no
 * SO_BINDTODEVICE, bind fails and connects are retried with ENOTSUP). */
#define ZLINK_TCP_KEEPALIVE 34
#define ZLINK_TCP_KEEPALIVE_CNT 35
#define ZLINK_TCP_KEEPALIVE_IDLE 36
#define ZLINK_TCP_KEEPALIVE_INTVL 37
#define ZLINK_TOS 57
#define ZLINK_CONNECT_TIMEOUT 79
#define ZLINK_TCP_MAXRT 80
#define ZLINK_BINDTODEVICE 92

/* SOCKS5 proxy (RFC 1928) for connects over tcp, tls, ws and wss; binds,
 * ipc and inproc ignore it. ZLINK_SOCKS_PROXY, string "host:port" (host a
 * name, an IPv4 address or [IPv6]): each connect made after it is set goes
 * to the proxy, which is asked to reach the endpoint's host (a name is
 * passed on unresolved); "" or NULL unsets. ZLINK_SOCKS_USERNAME and
 * ZLINK_SOCKS_PASSWORD, strings of 0 to 255 bytes: a non-empty username
 * offers RFC 1929 username/password authentication besides none. libzmq's
 * values (the last two are drafts there). */
#define ZLINK_SOCKS_PROXY 68
#define ZLINK_SOCKS_USERNAME 99
#define ZLINK_SOCKS_PASSWORD 100
/* zlink's own: ZLINK_MAXMSGPARTS (int), the most parts a message received
 * from a connection may have; -1: no limit. A peer that sends more parts
 * is disconnected, as one that exceeds ZLINK_MAXMSGSIZE (which, in zlink,
 * bounds all the parts of a message together). Every part of an unfinished
 * message holds a queue slot (about 128 bytes) until its last part comes,
 * beyond the HWM: the default bounds that at about 1 MiB per connection,
 * far above any envelope or batching scheme in use (a ROUTER envelope is a
 * few parts). Not applied to inproc, which has no peer to distrust. */
#define ZLINK_MAXMSGPARTS 1040
#define ZLINK_MAXMSGPARTS_DFLT 8192

/* WebSocket (ws://, wss://), zlink's own: 1020-1039.
 * ZLINK_WS_ALLOWED_ORIGINS: the Origin values a ws/wss bind accepts, as
 * one string of origins separated by commas or spaces, compared exactly
 * ("https://game.example.com, http://localhost:8080"). Unset or empty (the
 * default) accepts every origin and a request without one, as libzmq does;
 * once set, a request whose Origin is not listed, or that has none, gets
 * 403. Setting it again replaces the list; it applies to later binds. */
#define ZLINK_WS_ALLOWED_ORIGINS 1020

/* TLS (tls://host:port), zlink's own options (zlink_has("tls") says
 * whether they are built in). Strings are set with their length (a
 * trailing NUL is allowed) and read back NUL-terminated, "" when unset;
 * an empty value unsets. They take effect at the next zlink_bind or
 * zlink_connect, which read the files and parse the PEM then: a
 * certificate, key or CA that cannot be loaded, a server without a
 * certificate and key, or a verifying client with neither a CA nor a
 * system trust store makes bind/connect fail with EINVAL. A client that
 * reconnects to the same endpoint and host name, with the same options,
 * resumes its TLS session (a ticket of the server's, TLS 1.2) for up to an
 * hour after its last full handshake, skipping the certificate exchange. */
/* string: PEM file of our certificate chain (leaf first). Required on a
 * server, optional on a client (for REQUIRE_CLIENT_CERT servers). */
#define ZLINK_TLS_CERT 1000
/* string: PEM file of the private key of ZLINK_TLS_CERT. */
#define ZLINK_TLS_KEY 1001
/* string: password of an encrypted ZLINK_TLS_KEY / _KEY_PEM; unset. */
#define ZLINK_TLS_KEY_PASSWORD 1002
/* string: PEM file of the CAs that verify the peer. Unset: the system's
 * trust store (the ca-certificates bundle on Debian, the ROOT store on
 * Windows). */
#define ZLINK_TLS_CA 1003
/* string: as ZLINK_TLS_CERT, KEY and CA, the PEM text itself, for
 * applications that embed their certificates. A file and PEM text of the
 * same kind given together are both loaded (CA), or refused (key). */
#define ZLINK_TLS_CERT_PEM 1004
#define ZLINK_TLS_KEY_PEM 1005
#define ZLINK_TLS_CA_PEM 1006
/* int, default 1: verify the peer's chain against the CAs, and on a client
 * the server's name too. 0 accepts any peer: only for tests. */
#define ZLINK_TLS_VERIFY 1007
/* string: the name a client sends (SNI) and checks the server's
 * certificate against; unset: the endpoint's host. mbedTLS matches an
 * IP address as text against the certificate's DNS names and CN. */
#define ZLINK_TLS_HOSTNAME 1008
/* int, default 0, server: ask every client for a certificate, refuse
 * those without one and (with ZLINK_TLS_VERIFY) those the CAs do not
 * verify. */
#define ZLINK_TLS_REQUIRE_CLIENT_CERT 1009
/* int, default 0: trust the system's store as well as ZLINK_TLS_CA and
 * _CA_PEM (libzmq's ZMQ_WSS_TRUST_SYSTEM). Without those, the store is
 * used anyway. */
#define ZLINK_TLS_TRUST_SYSTEM 1010

/* Send/recv flags. */
#define ZLINK_DONTWAIT 1
#define ZLINK_SNDMORE 2

/* Socket transport events, for zlink_socket_monitor. The value is, as in
 * libzmq: the OS socket (fd, or SOCKET on Windows) for CONNECTED, ACCEPTED,
 * LISTENING, CLOSED and DISCONNECTED (0 for a ws path's LISTENING and
 * CLOSED: its port is shared); the errno for BIND_FAILED, ACCEPT_FAILED and
 * HANDSHAKE_FAILED_NO_DETAIL (EPIPE when the peer closed, ETIMEDOUT for
 * HANDSHAKE_IVL and heartbeats); the interval for CONNECT_RETRIED. */
#define ZLINK_EVENT_CONNECTED 0x0001
#define ZLINK_EVENT_CONNECT_DELAYED 0x0002
#define ZLINK_EVENT_CONNECT_RETRIED 0x0004
#define ZLINK_EVENT_LISTENING 0x0008
#define ZLINK_EVENT_BIND_FAILED 0x0010
#define ZLINK_EVENT_ACCEPTED 0x0020
#define ZLINK_EVENT_ACCEPT_FAILED 0x0040
#define ZLINK_EVENT_CLOSED 0x0080
#define ZLINK_EVENT_CLOSE_FAILED 0x0100
#define ZLINK_EVENT_DISCONNECTED 0x0200
#define ZLINK_EVENT_MONITOR_STOPPED 0x0400
#define ZLINK_EVENT_ALL 0xFFFF
#define ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL 0x0800
#define ZLINK_EVENT_HANDSHAKE_SUCCEEDED 0x1000
#define ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL 0x2000
#define ZLINK_EVENT_HANDSHAKE_FAILED_AUTH 0x4000

/* Values reported with HANDSHAKE_FAILED_PROTOCOL. */
#define ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED 0x10000000
#define ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND 0x10000001
#define ZLINK_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE 0x10000002
#define ZLINK_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE 0x10000003
#define ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED 0x10000011
#define ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE 0x10000012
#define ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO 0x10000013
#define ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE 0x10000014
#define ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR 0x10000015
#define ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY 0x10000016
#define ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME 0x10000017
#define ZLINK_PROTOCOL_ERROR_ZMTP_INVALID_METADATA 0x10000018
#define ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC 0x11000001
#define ZLINK_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH 0x11000002
/* A PLAIN server's ZAP handler answered wrongly, or went away. */
#define ZLINK_PROTOCOL_ERROR_ZAP_UNSPECIFIED 0x20000000
#define ZLINK_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY 0x20000001
#define ZLINK_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID 0x20000002
#define ZLINK_PROTOCOL_ERROR_ZAP_BAD_VERSION 0x20000003
#define ZLINK_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE 0x20000004
#define ZLINK_PROTOCOL_ERROR_ZAP_INVALID_METADATA 0x20000005
/* ws://, wss://: a bad HTTP upgrade or WebSocket frame, as libzmq. */
#define ZLINK_PROTOCOL_ERROR_WS_UNSPECIFIED 0x30000000
/* tls://: why the TLS layer failed (HANDSHAKE_FAILED_PROTOCOL). */
#define ZLINK_PROTOCOL_ERROR_TLS_UNSPECIFIED 0x40000000
#define ZLINK_PROTOCOL_ERROR_TLS_NOT_TLS 0x40000001 /* e.g. plaintext ZMTP */
/* A malformed record, or one whose MAC does not check. */
#define ZLINK_PROTOCOL_ERROR_TLS_BAD_RECORD 0x40000002
#define ZLINK_PROTOCOL_ERROR_TLS_OVERSIZED_RECORD 0x40000003
#define ZLINK_PROTOCOL_ERROR_TLS_TRUNCATED 0x40000004 /* ended mid-record */
#define ZLINK_PROTOCOL_ERROR_TLS_RENEGOTIATION 0x40000005
/* No common version or cipher suite, an unexpected message, … */
#define ZLINK_PROTOCOL_ERROR_TLS_HANDSHAKE 0x40000006
#define ZLINK_PROTOCOL_ERROR_TLS_ALERT 0x40000007 /* peer's fatal alert */

/* tls://: why the peer was not accepted (HANDSHAKE_FAILED_AUTH). */
#define ZLINK_TLS_AUTH_CERT_UNTRUSTED 0x41000001 /* chain does not verify */
#define ZLINK_TLS_AUTH_HOSTNAME_MISMATCH 0x41000002
#define ZLINK_TLS_AUTH_CERT_EXPIRED 0x41000003 /* or not yet valid */
#define ZLINK_TLS_AUTH_NO_PEER_CERT 0x41000004 /* required, none sent */
/* The peer refused our certificate (a certificate alert). */
#define ZLINK_TLS_AUTH_PEER_REJECTED 0x41000005
#define ZLINK_TLS_AUTH_CERT_INVALID 0x41000006 /* any other defect */

ZLINK_EXPORT void *zlink_socket(void *context, int type);
ZLINK_EXPORT int zlink_close(void *socket);
ZLINK_EXPORT int zlink_setsockopt(void *socket, int option, const void *optval,
                                  size_t optvallen);
ZLINK_EXPORT int zlink_getsockopt(void *socket, int option, void *optval,
                                  size_t *optvallen);
ZLINK_EXPORT int zlink_bind(void *socket, const char *endpoint);
ZLINK_EXPORT int zlink_connect(void *socket, const char *endpoint);
ZLINK_EXPORT int zlink_unbind(void *socket, const char *endpoint);
ZLINK_EXPORT int zlink_disconnect(void *socket, const char *endpoint);
ZLINK_EXPORT int zlink_send(void *socket, const void *buf, size_t len,
                            int flags);
ZLINK_EXPORT int zlink_send_const(void *socket, const void *buf, size_t len,
                                  int flags);
ZLINK_EXPORT int zlink_recv(void *socket, void *buf, size_t len, int flags);
ZLINK_EXPORT int zlink_socket_monitor(void *socket, const char *endpoint,
                                      int events);

/* Polling. zlink_fd_t is the OS socket type. */
#if defined(_WIN32)
#if defined(_WIN64)
typedef unsigned __int64 zlink_fd_t;
#else
typedef unsigned int zlink_fd_t;
#endif
#else
typedef int zlink_fd_t;
#endif

#define ZLINK_POLLIN 1
#define ZLINK_POLLOUT 2
#define ZLINK_POLLERR 4
/* Urgent data on a plain fd (POSIX POLLPRI: TCP out-of-band data, a sysfs
 * GPIO value that changed), as libzmq's; no effect for zlink sockets. On
 * Windows, a zlink_poll or poller wait that asks for it on an fd fails
 * with ENOTSUP. */
#define ZLINK_POLLPRI 8

typedef struct zlink_pollitem_t {
    void *socket;
    zlink_fd_t fd;
    short events;
    short revents;
} zlink_pollitem_t;

#define ZLINK_POLLITEMS_DFLT 16

ZLINK_EXPORT int zlink_poll(zlink_pollitem_t *items, int nitems, long timeout);

/* The poller (libzmq's zmq_poller_*): a lasting set of sockets and raw fds.
 * A wait costs nothing for the sockets that have nothing to do: each
 * socket tells the pollers watching it when its state may have changed.
 * zlink_poller_fd gives an OS handle that stays readable while any socket
 * of the poller is ready (level-triggered), for an application's own event
 * loop. A poller is used by one thread at a time, as a socket is. */
typedef struct zlink_poller_event_t {
    void *socket;
    zlink_fd_t fd;
    void *user_data;
    short events;
} zlink_poller_event_t;

ZLINK_EXPORT void *zlink_poller_new(void);
ZLINK_EXPORT int zlink_poller_destroy(void **poller_p);
ZLINK_EXPORT int zlink_poller_size(void *poller);
ZLINK_EXPORT int zlink_poller_add(void *poller, void *socket, void *user_data,
                                  short events);
ZLINK_EXPORT int zlink_poller_modify(void *poller, void *socket, short events);
ZLINK_EXPORT int zlink_poller_remove(void *poller, void *socket);
ZLINK_EXPORT int zlink_poller_add_fd(void *poller, zlink_fd_t fd,
                                     void *user_data, short events);
ZLINK_EXPORT int zlink_poller_modify_fd(void *poller, zlink_fd_t fd,
                                        short events);
ZLINK_EXPORT int zlink_poller_remove_fd(void *poller, zlink_fd_t fd);
ZLINK_EXPORT int zlink_poller_wait(void *poller, zlink_poller_event_t *event,
                                   long timeout);
ZLINK_EXPORT int zlink_poller_wait_all(void *poller,
                                       zlink_poller_event_t *events,
                                       int n_events, long timeout);
ZLINK_EXPORT int zlink_poller_fd(void *poller, zlink_fd_t *fd);

/* Timers (libzmq's zmq_timers_*), run by the thread that calls
 * zlink_timers_execute: no thread of their own. Intervals in
 * milliseconds. */
typedef void(zlink_timer_fn)(int timer_id, void *arg);

ZLINK_EXPORT void *zlink_timers_new(void);
ZLINK_EXPORT int zlink_timers_destroy(void **timers_p);
ZLINK_EXPORT int zlink_timers_add(void *timers, size_t interval,
                                  zlink_timer_fn handler, void *arg);
ZLINK_EXPORT int zlink_timers_cancel(void *timers, int timer_id);
ZLINK_EXPORT int zlink_timers_set_interval(void *timers, int timer_id,
                                           size_t interval);
ZLINK_EXPORT int zlink_timers_reset(void *timers, int timer_id);
ZLINK_EXPORT long zlink_timers_timeout(void *timers);
ZLINK_EXPORT int zlink_timers_execute(void *timers);

/* Forwards messages between two sockets (XSUB↔XPUB, ROUTER↔DEALER). */
ZLINK_EXPORT int zlink_proxy(void *frontend, void *backend, void *capture);
ZLINK_EXPORT int zlink_proxy_steerable(void *frontend, void *backend,
                                       void *capture, void *control);

/* ---- for programs ported from libzmq ----
 * Older libzmq entry points and its small utilities, with libzmq's
 * semantics and return values; zlink_zmq.h maps the zmq_* names onto
 * these. */

/* zmq_version(): the libzmq API level (ZLINK_ZMQ_API_*). */
ZLINK_EXPORT void zlink_zmq_api_version(int *major, int *minor, int *patch);
/* zmq_init / zmq_term: a context with io_threads I/O threads, and its
 * termination (zlink_ctx_term). */
ZLINK_EXPORT void *zlink_init(int io_threads);
ZLINK_EXPORT int zlink_term(void *context);
/* zmq_sendmsg / zmq_recvmsg: zlink_msg_send / zlink_msg_recv with the
 * socket first. */
ZLINK_EXPORT int zlink_sendmsg(void *socket, zlink_msg_t *msg, int flags);
ZLINK_EXPORT int zlink_recvmsg(void *socket, zlink_msg_t *msg, int flags);
/* zmq_sendiov: sends each iovec as one part of one message; returns the
 * last part's size. zmq_recviov: receives up to *count parts of a message,
 * each into a buffer it mallocs (the caller frees iov_base); *count and the
 * return value are the parts received. struct iovec is POSIX's (on Windows
 * the program defines it with iov_base and iov_len, as for libzmq). */
struct iovec;
ZLINK_EXPORT int zlink_sendiov(void *socket, struct iovec *iov, size_t count,
                               int flags);
ZLINK_EXPORT int zlink_recviov(void *socket, struct iovec *iov, size_t *count,
                               int flags);
/* zmq_device: zlink_proxy without capture; type is one of these. */
#define ZLINK_STREAMER 1
#define ZLINK_FORWARDER 2
#define ZLINK_QUEUE 3
ZLINK_EXPORT int zlink_device(int type, void *frontend, void *backend);

/* zmq_sleep and the stopwatch: microseconds since start. stop frees the
 * watch. */
ZLINK_EXPORT void zlink_sleep(int seconds);
ZLINK_EXPORT void *zlink_stopwatch_start(void);
ZLINK_EXPORT unsigned long zlink_stopwatch_intermediate(void *watch);
ZLINK_EXPORT unsigned long zlink_stopwatch_stop(void *watch);

/* zmq_threadstart / zmq_threadclose: a thread running func(arg), and
 * joining it (which frees the handle). */
typedef void(zlink_thread_fn)(void *arg);
ZLINK_EXPORT void *zlink_threadstart(zlink_thread_fn *func, void *arg);
ZLINK_EXPORT void zlink_threadclose(void *thread);

/* zmq_atomic_counter_*: inc returns the value before, dec returns 1 while
 * the counter is still above zero after it and 0 otherwise; destroy sets
 * *counter_p to NULL. */
ZLINK_EXPORT void *zlink_atomic_counter_new(void);
ZLINK_EXPORT void zlink_atomic_counter_set(void *counter, int value);
ZLINK_EXPORT int zlink_atomic_counter_inc(void *counter);
ZLINK_EXPORT int zlink_atomic_counter_dec(void *counter);
ZLINK_EXPORT int zlink_atomic_counter_value(void *counter);
ZLINK_EXPORT void zlink_atomic_counter_destroy(void **counter_p);

/* Z85 (rfc.zeromq.org spec 32). encode: size a multiple of 4, dest holds
 * size * 5 / 4 + 1 chars. decode: strlen a multiple of 5, dest holds
 * strlen * 4 / 5 bytes. Both return dest, or NULL with errno EINVAL on a
 * bad length or a character outside the alphabet. */
ZLINK_EXPORT char *zlink_z85_encode(char *dest, const uint8_t *data,
                                    size_t size);
ZLINK_EXPORT uint8_t *zlink_z85_decode(uint8_t *dest, const char *string);

/* CURVE keys (ZMTP-CURVE, rfc.zeromq.org spec 26) as libzmq makes them: a
 * new X25519 key pair, or the public key of a secret one, each 40 Z85
 * characters and a NUL (41 bytes). Return 0, or -1 with errno ENOTSUP in
 * a build without CURVE (zlink_has("curve") is 0), or EINVAL for a secret
 * key that is not Z85. */
ZLINK_EXPORT int zlink_curve_keypair(char *z85_public_key,
                                     char *z85_secret_key);
ZLINK_EXPORT int zlink_curve_public(char *z85_public_key,
                                    const char *z85_secret_key);

#ifdef __cplusplus
}
#endif

#endif
