/* os_types.h — the one place that names OS socket types, address structs and
 * signal masks, so that src/core can hold them without OS #ifdefs of its
 * own. */
#ifndef ZL_OS_TYPES_H
#define ZL_OS_TYPES_H

#if defined(_WIN32)
/* In this order: the later two need winsock2.h's types. */
/* clang-format off */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <afunix.h>
/* clang-format on */
typedef SOCKET zl_os_socket;
typedef int zl_socklen;
#define ZL_INVALID_SOCKET INVALID_SOCKET
typedef int zl_signal_mask; /* no POSIX signals */
#else
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
typedef int zl_os_socket;
typedef socklen_t zl_socklen;
#define ZL_INVALID_SOCKET (-1)
typedef sigset_t zl_signal_mask;
#endif

/* Any address a transport can listen on or connect to. */
typedef struct zl_addr {
    union {
        struct sockaddr sa;
        struct sockaddr_in in4;
        struct sockaddr_in6 in6;
        struct sockaddr_un un;
        struct sockaddr_storage storage;
    } u;
    zl_socklen len;
} zl_addr;

#endif
