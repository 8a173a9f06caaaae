/* errors.c — zlink_errno, zlink_strerror, zlink_version and zlink_has. */
#include <errno.h>
#include <string.h>

#include "backend.h"
#include "zlink.h"

int zlink_errno(void)
{
    return errno;
}

/* The socket errors, worded as glibc does on every platform: Windows' C
 * runtime knows none of the codes from 100 up that mingw gives them. */
static const char *socket_error_text(int errnum)
{
    switch (errnum) {
    case EADDRINUSE:
        return "Address already in use";
    case EADDRNOTAVAIL:
        return "Cannot assign requested address";
    case EAFNOSUPPORT:
        return "Address family not supported by protocol";
    case ECONNABORTED:
        return "Software caused connection abort";
    case ECONNREFUSED:
        return "Connection refused";
    case ECONNRESET:
        return "Connection reset by peer";
    case EINPROGRESS:
        return "Operation now in progress";
    case EMSGSIZE:
        return "Message too long";
    case ENETDOWN:
        return "Network is down";
    case ENETUNREACH:
        return "Network is unreachable";
    case ENOBUFS:
        return "No buffer space available";
    case ENOTCONN:
        return "Transport endpoint is not connected";
    case ENOTSOCK:
        return "Socket operation on non-socket";
    case ENOTSUP:
        return "Operation not supported";
    case EPROTONOSUPPORT:
        return "Protocol not supported";
    case ETIMEDOUT:
        return "Connection timed out";
    case ECANCELED:
        return "Operation canceled";
    case EPROTO:
        return "Protocol error";
    default:
        return NULL;
    }
}

const char *zlink_strerror(int errnum)
{
    switch (errnum) {
    case EFSM:
        return "Operation cannot be accomplished in current state";
    case ENOCOMPATPROTO:
        return "The protocol is not compatible with the socket type";
    case ETERM:
        return "Context was terminated";
    case EMTHREAD:
        return "No thread available";
    case EHOSTUNREACH:
        return "Host unreachable";
    default:
        break;
    }
    const char *text = socket_error_text(errnum);
    return text ? text : strerror(errnum);
}

void zlink_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = ZLINK_VERSION_MAJOR;
    if (minor)
        *minor = ZLINK_VERSION_MINOR;
    if (patch)
        *patch = ZLINK_VERSION_PATCH;
}

int zlink_has(const char *capability)
{
    if (!capability)
        return 0;
#if defined(ZLINK_HAVE_TLS)
    if (strcmp(capability, "tls") == 0)
        return 1;
#endif
#if defined(ZLINK_WITH_WS)
    if (strcmp(capability, "ws") == 0)
        return 1;
#endif
#if defined(ZLINK_WITH_WSS)
    if (strcmp(capability, "wss") == 0)
        return 1;
#endif
#if defined(ZLINK_HAVE_CURVE)
    if (strcmp(capability, "curve") == 0)
        return 1;
#endif
    return strcmp(capability, "ipc") == 0 && zl_backend_has_ipc();
}
