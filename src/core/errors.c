/* errors.c — zlink_errno, zlink_strerror, zlink_version and zlink_has. */
#include <errno.h>
#include <string.h>

#include "backend.h"
#include "zlink.h"

int zlink_errno(void)
{
    return errno;
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
        return strerror(errnum);
    }
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
    return strcmp(capability, "ipc") == 0 && zl_backend_has_ipc();
}
