/* zlink_zmq.h — zmq_* and ZMQ_* names mapped one to one onto zlink. */
#ifndef ZLINK_ZMQ_H_INCLUDED
#define ZLINK_ZMQ_H_INCLUDED

#include "zlink.h"

/* libzmq's zmq.h includes <stdio.h> too, and programs written for it use
 * printf with no include of their own. */
#include <stdio.h>
#define ZMQ_DEFINED_STDINT 1

/* The version is the libzmq API level zlink implements (4.3), not zlink's
 * own (ZLINK_VERSION_*), so that a ported program's feature checks take
 * the branch that matches what it gets. */
#define ZMQ_VERSION_MAJOR ZLINK_ZMQ_API_MAJOR
#define ZMQ_VERSION_MINOR ZLINK_ZMQ_API_MINOR
#define ZMQ_VERSION_PATCH ZLINK_ZMQ_API_PATCH
#define ZMQ_MAKE_VERSION(major, minor, patch)                                  \
    ((major)*10000 + (minor)*100 + (patch))
#define ZMQ_VERSION                                                            \
    ZMQ_MAKE_VERSION(ZMQ_VERSION_MAJOR, ZMQ_VERSION_MINOR, ZMQ_VERSION_PATCH)

/* Feature macros that libzmq 4.3 programs test before using an API:
 * zmq_has, the timers and the poller are all here. (libzmq defines
 * ZMQ_HAVE_POLLER only with its draft API; zlink's poller is stable.) */
#define ZMQ_HAS_CAPABILITIES 1
#define ZMQ_HAVE_TIMERS
#define ZMQ_HAVE_POLLER

/* Functions. */
#define zmq_errno zlink_errno
#define zmq_strerror zlink_strerror
#define zmq_version zlink_zmq_api_version
#define zmq_has zlink_has
#define zmq_ctx_new zlink_ctx_new
#define zmq_ctx_term zlink_ctx_term
#define zmq_ctx_shutdown zlink_ctx_shutdown
#define zmq_ctx_set zlink_ctx_set
#define zmq_ctx_get zlink_ctx_get
#define zmq_msg_init zlink_msg_init
#define zmq_msg_init_size zlink_msg_init_size
#define zmq_msg_init_data zlink_msg_init_data
#define zmq_msg_send zlink_msg_send
#define zmq_msg_recv zlink_msg_recv
#define zmq_msg_close zlink_msg_close
#define zmq_msg_move zlink_msg_move
#define zmq_msg_copy zlink_msg_copy
#define zmq_msg_data zlink_msg_data
#define zmq_msg_size zlink_msg_size
#define zmq_msg_more zlink_msg_more
#define zmq_msg_get zlink_msg_get
#define zmq_msg_set zlink_msg_set
#define zmq_msg_gets zlink_msg_gets
#define zmq_socket zlink_socket
#define zmq_close zlink_close
#define zmq_setsockopt zlink_setsockopt
#define zmq_getsockopt zlink_getsockopt
#define zmq_bind zlink_bind
#define zmq_connect zlink_connect
#define zmq_unbind zlink_unbind
#define zmq_disconnect zlink_disconnect
#define zmq_send zlink_send
#define zmq_send_const zlink_send_const
#define zmq_recv zlink_recv
#define zmq_socket_monitor zlink_socket_monitor
#define zmq_poll zlink_poll
#define zmq_poller_new zlink_poller_new
#define zmq_poller_destroy zlink_poller_destroy
#define zmq_poller_size zlink_poller_size
#define zmq_poller_add zlink_poller_add
#define zmq_poller_modify zlink_poller_modify
#define zmq_poller_remove zlink_poller_remove
#define zmq_poller_add_fd zlink_poller_add_fd
#define zmq_poller_modify_fd zlink_poller_modify_fd
#define zmq_poller_remove_fd zlink_poller_remove_fd
#define zmq_poller_wait zlink_poller_wait
#define zmq_poller_wait_all zlink_poller_wait_all
#define zmq_poller_fd zlink_poller_fd
#define zmq_timers_new zlink_timers_new
#define zmq_timers_destroy zlink_timers_destroy
#define zmq_timers_add zlink_timers_add
#define zmq_timers_cancel zlink_timers_cancel
#define zmq_timers_set_interval zlink_timers_set_interval
#define zmq_timers_reset zlink_timers_reset
#define zmq_timers_timeout zlink_timers_timeout
#define zmq_timers_execute zlink_timers_execute
#define zmq_proxy zlink_proxy
#define zmq_proxy_steerable zlink_proxy_steerable
#define zmq_init zlink_init
#define zmq_term zlink_term
#define zmq_ctx_destroy zlink_ctx_term
#define zmq_sendmsg zlink_sendmsg
#define zmq_recvmsg zlink_recvmsg
#define zmq_sendiov zlink_sendiov
#define zmq_recviov zlink_recviov
#define zmq_device zlink_device
#define zmq_sleep zlink_sleep
#define zmq_stopwatch_start zlink_stopwatch_start
#define zmq_stopwatch_intermediate zlink_stopwatch_intermediate
#define zmq_stopwatch_stop zlink_stopwatch_stop
#define zmq_threadstart zlink_threadstart
#define zmq_threadclose zlink_threadclose
#define zmq_atomic_counter_new zlink_atomic_counter_new
#define zmq_atomic_counter_set zlink_atomic_counter_set
#define zmq_atomic_counter_inc zlink_atomic_counter_inc
#define zmq_atomic_counter_dec zlink_atomic_counter_dec
#define zmq_atomic_counter_value zlink_atomic_counter_value
#define zmq_atomic_counter_destroy zlink_atomic_counter_destroy
#define zmq_z85_encode zlink_z85_encode
#define zmq_z85_decode zlink_z85_decode
#define zmq_curve_keypair zlink_curve_keypair
#define zmq_curve_public zlink_curve_public
#define zmq_thread_fn zlink_thread_fn
#define ZMQ_STREAMER ZLINK_STREAMER
#define ZMQ_FORWARDER ZLINK_FORWARDER
#define ZMQ_QUEUE ZLINK_QUEUE

/* Types: macros rather than typedefs, so "struct zmq_msg_t" works too. */
#define zmq_msg_t zlink_msg_t
#define zmq_pollitem_t zlink_pollitem_t
#define zmq_poller_event_t zlink_poller_event_t
#define zmq_timer_fn zlink_timer_fn
#define zmq_fd_t zlink_fd_t
#define zmq_free_fn zlink_free_fn

/* Errors: the base of libzmq's own errno values (EFSM, ETERM, ... keep
 * their names in both libraries). */
#define ZMQ_HAUSNUMERO ZLINK_HAUSNUMERO

/* Context options. */
#define ZMQ_IO_THREADS ZLINK_IO_THREADS
#define ZMQ_MAX_SOCKETS ZLINK_MAX_SOCKETS
#define ZMQ_SOCKET_LIMIT ZLINK_SOCKET_LIMIT
#define ZMQ_MAX_MSGSZ ZLINK_MAX_MSGSZ
#define ZMQ_MSG_T_SIZE ZLINK_MSG_T_SIZE
#define ZMQ_IO_THREADS_DFLT ZLINK_IO_THREADS_DFLT
#define ZMQ_MAX_SOCKETS_DFLT ZLINK_MAX_SOCKETS_DFLT
#define ZMQ_THREAD_PRIORITY ZLINK_THREAD_PRIORITY
#define ZMQ_THREAD_SCHED_POLICY ZLINK_THREAD_SCHED_POLICY
#define ZMQ_THREAD_AFFINITY_CPU_ADD ZLINK_THREAD_AFFINITY_CPU_ADD
#define ZMQ_THREAD_AFFINITY_CPU_REMOVE ZLINK_THREAD_AFFINITY_CPU_REMOVE
#define ZMQ_THREAD_NAME_PREFIX ZLINK_THREAD_NAME_PREFIX
#define ZMQ_THREAD_PRIORITY_DFLT ZLINK_THREAD_PRIORITY_DFLT
#define ZMQ_THREAD_SCHED_POLICY_DFLT ZLINK_THREAD_SCHED_POLICY_DFLT
#define ZMQ_BLOCKY ZLINK_BLOCKY

/* Message properties. */
#define ZMQ_MORE ZLINK_MORE
#define ZMQ_SHARED ZLINK_SHARED
#define ZMQ_SRCFD ZLINK_SRCFD
#define ZMQ_MSG_PROPERTY_ROUTING_ID ZLINK_MSG_PROPERTY_ROUTING_ID
#define ZMQ_MSG_PROPERTY_SOCKET_TYPE ZLINK_MSG_PROPERTY_SOCKET_TYPE
#define ZMQ_MSG_PROPERTY_USER_ID ZLINK_MSG_PROPERTY_USER_ID
#define ZMQ_MSG_PROPERTY_PEER_ADDRESS ZLINK_MSG_PROPERTY_PEER_ADDRESS

/* Socket types. */
#define ZMQ_PAIR ZLINK_PAIR
#define ZMQ_PUB ZLINK_PUB
#define ZMQ_SUB ZLINK_SUB
#define ZMQ_REQ ZLINK_REQ
#define ZMQ_REP ZLINK_REP
#define ZMQ_DEALER ZLINK_DEALER
#define ZMQ_ROUTER ZLINK_ROUTER
#define ZMQ_PULL ZLINK_PULL
#define ZMQ_PUSH ZLINK_PUSH
#define ZMQ_XPUB ZLINK_XPUB
#define ZMQ_XSUB ZLINK_XSUB
#define ZMQ_STREAM ZLINK_STREAM
/* libzmq's older names for the same types. */
#define ZMQ_XREQ ZLINK_DEALER
#define ZMQ_XREP ZLINK_ROUTER

/* Socket options. */
#define ZMQ_ROUTING_ID ZLINK_ROUTING_ID
#define ZMQ_SUBSCRIBE ZLINK_SUBSCRIBE
#define ZMQ_UNSUBSCRIBE ZLINK_UNSUBSCRIBE
#define ZMQ_SNDBUF ZLINK_SNDBUF
#define ZMQ_RCVBUF ZLINK_RCVBUF
#define ZMQ_RCVMORE ZLINK_RCVMORE
#define ZMQ_FD ZLINK_FD
#define ZMQ_EVENTS ZLINK_EVENTS
#define ZMQ_TYPE ZLINK_TYPE
#define ZMQ_LINGER ZLINK_LINGER
#define ZMQ_RECONNECT_IVL ZLINK_RECONNECT_IVL
#define ZMQ_BACKLOG ZLINK_BACKLOG
#define ZMQ_RECONNECT_IVL_MAX ZLINK_RECONNECT_IVL_MAX
#define ZMQ_MAXMSGSIZE ZLINK_MAXMSGSIZE
#define ZMQ_SNDHWM ZLINK_SNDHWM
#define ZMQ_RCVHWM ZLINK_RCVHWM
#define ZMQ_RCVTIMEO ZLINK_RCVTIMEO
#define ZMQ_SNDTIMEO ZLINK_SNDTIMEO
#define ZMQ_LAST_ENDPOINT ZLINK_LAST_ENDPOINT
#define ZMQ_ROUTER_MANDATORY ZLINK_ROUTER_MANDATORY
#define ZMQ_IMMEDIATE ZLINK_IMMEDIATE
#define ZMQ_XPUB_VERBOSE ZLINK_XPUB_VERBOSE
#define ZMQ_REQ_CORRELATE ZLINK_REQ_CORRELATE
#define ZMQ_REQ_RELAXED ZLINK_REQ_RELAXED
#define ZMQ_IPV6 ZLINK_IPV6
#define ZMQ_IPV4ONLY ZLINK_IPV4ONLY
#define ZMQ_AFFINITY ZLINK_AFFINITY
#define ZMQ_USE_FD ZLINK_USE_FD
#define ZMQ_RATE ZLINK_RATE
#define ZMQ_RECOVERY_IVL ZLINK_RECOVERY_IVL
#define ZMQ_MULTICAST_HOPS ZLINK_MULTICAST_HOPS
#define ZMQ_MULTICAST_MAXTPDU ZLINK_MULTICAST_MAXTPDU
#define ZMQ_TCP_ACCEPT_FILTER ZLINK_TCP_ACCEPT_FILTER
#define ZMQ_IPC_FILTER_PID ZLINK_IPC_FILTER_PID
#define ZMQ_IPC_FILTER_UID ZLINK_IPC_FILTER_UID
#define ZMQ_IPC_FILTER_GID ZLINK_IPC_FILTER_GID
#define ZMQ_CONNECT_ROUTING_ID ZLINK_CONNECT_ROUTING_ID
#define ZMQ_HANDSHAKE_IVL ZLINK_HANDSHAKE_IVL
#define ZMQ_XPUB_NODROP ZLINK_XPUB_NODROP
#define ZMQ_XPUB_MANUAL ZLINK_XPUB_MANUAL
#define ZMQ_XPUB_WELCOME_MSG ZLINK_XPUB_WELCOME_MSG
#define ZMQ_HEARTBEAT_IVL ZLINK_HEARTBEAT_IVL
#define ZMQ_HEARTBEAT_TTL ZLINK_HEARTBEAT_TTL
#define ZMQ_HEARTBEAT_TIMEOUT ZLINK_HEARTBEAT_TIMEOUT
#define ZMQ_XPUB_VERBOSER ZLINK_XPUB_VERBOSER
#define ZMQ_PROBE_ROUTER ZLINK_PROBE_ROUTER
#define ZMQ_CONFLATE ZLINK_CONFLATE
#define ZMQ_ROUTER_HANDOVER ZLINK_ROUTER_HANDOVER
#define ZMQ_STREAM_NOTIFY ZLINK_STREAM_NOTIFY
#define ZMQ_INVERT_MATCHING ZLINK_INVERT_MATCHING
#define ZMQ_TCP_KEEPALIVE ZLINK_TCP_KEEPALIVE
#define ZMQ_TCP_KEEPALIVE_CNT ZLINK_TCP_KEEPALIVE_CNT
#define ZMQ_TCP_KEEPALIVE_IDLE ZLINK_TCP_KEEPALIVE_IDLE
#define ZMQ_TCP_KEEPALIVE_INTVL ZLINK_TCP_KEEPALIVE_INTVL
#define ZMQ_TOS ZLINK_TOS
#define ZMQ_CONNECT_TIMEOUT ZLINK_CONNECT_TIMEOUT
#define ZMQ_TCP_MAXRT ZLINK_TCP_MAXRT
#define ZMQ_BINDTODEVICE ZLINK_BINDTODEVICE
#define ZMQ_SOCKS_PROXY ZLINK_SOCKS_PROXY
#define ZMQ_SOCKS_USERNAME ZLINK_SOCKS_USERNAME
#define ZMQ_SOCKS_PASSWORD ZLINK_SOCKS_PASSWORD
#define ZMQ_MECHANISM ZLINK_MECHANISM
#define ZMQ_NULL ZLINK_NULL
#define ZMQ_PLAIN ZLINK_PLAIN
#define ZMQ_PLAIN_SERVER ZLINK_PLAIN_SERVER
#define ZMQ_PLAIN_USERNAME ZLINK_PLAIN_USERNAME
#define ZMQ_PLAIN_PASSWORD ZLINK_PLAIN_PASSWORD
#define ZMQ_CURVE ZLINK_CURVE
#define ZMQ_CURVE_SERVER ZLINK_CURVE_SERVER
#define ZMQ_CURVE_PUBLICKEY ZLINK_CURVE_PUBLICKEY
#define ZMQ_CURVE_SECRETKEY ZLINK_CURVE_SECRETKEY
#define ZMQ_CURVE_SERVERKEY ZLINK_CURVE_SERVERKEY
#define ZMQ_ZAP_DOMAIN ZLINK_ZAP_DOMAIN
#define ZMQ_ZAP_ENFORCE_DOMAIN ZLINK_ZAP_ENFORCE_DOMAIN
#define ZMQ_THREAD_SAFE ZLINK_THREAD_SAFE
/* Kerberos (GSSAPI) and VMCI, which zlink does not offer. Their options
 * fail with EINVAL and zmq_has("gssapi") and zmq_has("vmci") are false, as
 * in a libzmq built without them; code that names them still compiles. */
#define ZMQ_GSSAPI 3
#define ZMQ_GSSAPI_SERVER 62
#define ZMQ_GSSAPI_PRINCIPAL 63
#define ZMQ_GSSAPI_SERVICE_PRINCIPAL 64
#define ZMQ_GSSAPI_PLAINTEXT 65
#define ZMQ_GSSAPI_PRINCIPAL_NAMETYPE 90
#define ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE 91
#define ZMQ_GSSAPI_NT_HOSTBASED 0
#define ZMQ_GSSAPI_NT_USER_NAME 1
#define ZMQ_GSSAPI_NT_KRB5_PRINCIPAL 2
#define ZMQ_VMCI_BUFFER_SIZE 85
#define ZMQ_VMCI_BUFFER_MIN_SIZE 86
#define ZMQ_VMCI_BUFFER_MAX_SIZE 87
#define ZMQ_VMCI_CONNECT_TIMEOUT 88
/* libzmq's draft wss options, mapped onto the TLS options that serve
 * tls:// and wss:// alike. One difference: without ZMQ_WSS_HOSTNAME,
 * zlink checks the server's certificate against the endpoint's host,
 * where libzmq checks no name. */
#define ZMQ_WSS_KEY_PEM ZLINK_TLS_KEY_PEM
#define ZMQ_WSS_CERT_PEM ZLINK_TLS_CERT_PEM
#define ZMQ_WSS_TRUST_PEM ZLINK_TLS_CA_PEM
#define ZMQ_WSS_HOSTNAME ZLINK_TLS_HOSTNAME
#define ZMQ_WSS_TRUST_SYSTEM ZLINK_TLS_TRUST_SYSTEM
/* libzmq's older names for the same options. */
#define ZMQ_IDENTITY ZLINK_ROUTING_ID
#define ZMQ_DELAY_ATTACH_ON_CONNECT ZLINK_IMMEDIATE
#define ZMQ_CONNECT_RID ZLINK_CONNECT_ROUTING_ID
#define ZMQ_FAIL_UNROUTABLE ZLINK_ROUTER_MANDATORY
#define ZMQ_ROUTER_BEHAVIOR ZLINK_ROUTER_MANDATORY

/* Send/recv flags. */
#define ZMQ_DONTWAIT ZLINK_DONTWAIT
#define ZMQ_SNDMORE ZLINK_SNDMORE
#define ZMQ_NOBLOCK ZLINK_DONTWAIT

/* Socket monitor events. */
#define ZMQ_EVENT_CONNECTED ZLINK_EVENT_CONNECTED
#define ZMQ_EVENT_CONNECT_DELAYED ZLINK_EVENT_CONNECT_DELAYED
#define ZMQ_EVENT_CONNECT_RETRIED ZLINK_EVENT_CONNECT_RETRIED
#define ZMQ_EVENT_LISTENING ZLINK_EVENT_LISTENING
#define ZMQ_EVENT_BIND_FAILED ZLINK_EVENT_BIND_FAILED
#define ZMQ_EVENT_ACCEPTED ZLINK_EVENT_ACCEPTED
#define ZMQ_EVENT_ACCEPT_FAILED ZLINK_EVENT_ACCEPT_FAILED
#define ZMQ_EVENT_CLOSED ZLINK_EVENT_CLOSED
#define ZMQ_EVENT_CLOSE_FAILED ZLINK_EVENT_CLOSE_FAILED
#define ZMQ_EVENT_DISCONNECTED ZLINK_EVENT_DISCONNECTED
#define ZMQ_EVENT_MONITOR_STOPPED ZLINK_EVENT_MONITOR_STOPPED
#define ZMQ_EVENT_ALL ZLINK_EVENT_ALL
#define ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL                                   \
    ZLINK_EVENT_HANDSHAKE_FAILED_NO_DETAIL
#define ZMQ_EVENT_HANDSHAKE_SUCCEEDED ZLINK_EVENT_HANDSHAKE_SUCCEEDED
#define ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL                                    \
    ZLINK_EVENT_HANDSHAKE_FAILED_PROTOCOL
#define ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ZLINK_EVENT_HANDSHAKE_FAILED_AUTH

/* Values reported with ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL. */
#define ZMQ_PROTOCOL_ERROR_ZMTP_UNSPECIFIED                                    \
    ZLINK_PROTOCOL_ERROR_ZMTP_UNSPECIFIED
#define ZMQ_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND                             \
    ZLINK_PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND
#define ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE                               \
    ZLINK_PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE
#define ZMQ_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE                                   \
    ZLINK_PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE                      \
    ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_MESSAGE
#define ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC                                  \
    ZLINK_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED                  \
    ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_UNSPECIFIED
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO                        \
    ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_HELLO
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE                     \
    ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_INITIATE
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR                        \
    ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_ERROR
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY                        \
    ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_READY
#define ZMQ_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME                      \
    ZLINK_PROTOCOL_ERROR_ZMTP_MALFORMED_COMMAND_WELCOME
#define ZMQ_PROTOCOL_ERROR_ZMTP_INVALID_METADATA                               \
    ZLINK_PROTOCOL_ERROR_ZMTP_INVALID_METADATA
#define ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH                             \
    ZLINK_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH
#define ZMQ_PROTOCOL_ERROR_ZAP_UNSPECIFIED ZLINK_PROTOCOL_ERROR_ZAP_UNSPECIFIED
#define ZMQ_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY                                 \
    ZLINK_PROTOCOL_ERROR_ZAP_MALFORMED_REPLY
#define ZMQ_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID                                  \
    ZLINK_PROTOCOL_ERROR_ZAP_BAD_REQUEST_ID
#define ZMQ_PROTOCOL_ERROR_ZAP_BAD_VERSION ZLINK_PROTOCOL_ERROR_ZAP_BAD_VERSION
#define ZMQ_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE                             \
    ZLINK_PROTOCOL_ERROR_ZAP_INVALID_STATUS_CODE
#define ZMQ_PROTOCOL_ERROR_ZAP_INVALID_METADATA                                \
    ZLINK_PROTOCOL_ERROR_ZAP_INVALID_METADATA
#define ZMQ_PROTOCOL_ERROR_WS_UNSPECIFIED ZLINK_PROTOCOL_ERROR_WS_UNSPECIFIED

/* Polling. */
#define ZMQ_POLLIN ZLINK_POLLIN
#define ZMQ_POLLOUT ZLINK_POLLOUT
#define ZMQ_POLLERR ZLINK_POLLERR
#define ZMQ_POLLPRI ZLINK_POLLPRI
#define ZMQ_POLLITEMS_DFLT ZLINK_POLLITEMS_DFLT

#endif
