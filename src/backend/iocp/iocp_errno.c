/* iocp_errno.c — Winsock and Win32 error codes, and the NTSTATUS of a
 * completed OVERLAPPED, as the negative errno values the contract reports. */
#include "iocp.h"

/* ERROR_HANDLES_CLOSED: Wine completes the reads of a socket closed under
 * them with STATUS_HANDLES_CLOSED, which translates to this, where Windows
 * uses STATUS_CANCELLED, ERROR_OPERATION_ABORTED (995). */
#define ZL_IOCP_HANDLES_CLOSED 676

int zl_iocp_errno_from_wsa(int code)
{
    switch (code) {
    case 0:
        return 0;
    case WSA_OPERATION_ABORTED: /* == ERROR_OPERATION_ABORTED, 995 */
    case ZL_IOCP_HANDLES_CLOSED:
    case ERROR_REQUEST_ABORTED:
    case WSAECANCELLED:
    case WSA_E_CANCELLED:
        return ZL_ECANCELED;
    case WSAEINTR:
        return -EINTR;
    case WSAEBADF:
    case ERROR_INVALID_HANDLE:
        return -EBADF;
    case WSAEACCES:
    case ERROR_ACCESS_DENIED:
        return -EACCES;
    case WSAEFAULT:
        return -EFAULT;
    case WSAEINVAL:
    case ERROR_INVALID_PARAMETER:
        return -EINVAL;
    case WSAEMFILE:
    case ERROR_TOO_MANY_OPEN_FILES:
        return -EMFILE;
    case WSAEWOULDBLOCK:
        return -EAGAIN;
    case WSAEINPROGRESS:
        return -EINPROGRESS;
    case WSAEALREADY:
        return -EALREADY;
    case WSAENOTSOCK:
        return -ENOTSOCK;
    case WSAEDESTADDRREQ:
        return -EDESTADDRREQ;
    case WSAEMSGSIZE:
        return -EMSGSIZE;
    case WSAEPROTOTYPE:
        return -EPROTOTYPE;
    case WSAENOPROTOOPT:
        return -ENOPROTOOPT;
    case WSAEPROTONOSUPPORT:
    case WSAESOCKTNOSUPPORT:
        return -EPROTONOSUPPORT;
    case WSAEOPNOTSUPP:
    case ERROR_NOT_SUPPORTED:
        return -EOPNOTSUPP;
    case WSAEPFNOSUPPORT:
    case WSAEAFNOSUPPORT:
        return -EAFNOSUPPORT;
    case WSAEADDRINUSE:
    case ERROR_ADDRESS_ALREADY_ASSOCIATED:
        return -EADDRINUSE;
    case WSAEADDRNOTAVAIL:
    case ERROR_INVALID_NETNAME:
        return -EADDRNOTAVAIL;
    case WSAENETDOWN:
        return -ENETDOWN;
    case WSAENETUNREACH:
    case ERROR_NETWORK_UNREACHABLE:
        return -ENETUNREACH;
    case WSAENETRESET:
        return -ENETRESET;
    case WSAECONNABORTED:
    case ERROR_CONNECTION_ABORTED:
        return -ECONNABORTED;
    case WSAECONNRESET:
    case WSAEDISCON:
    case ERROR_NETNAME_DELETED: /* STATUS_CONNECTION_RESET, as Win32 */
        return -ECONNRESET;
    case WSAENOBUFS:
    case ERROR_NO_SYSTEM_RESOURCES:
    case ERROR_INSUFFICIENT_BUFFER:
        return -ENOBUFS;
    case WSAEISCONN:
        return -EISCONN;
    case WSAENOTCONN:
    case ERROR_CONNECTION_INVALID:
        return -ENOTCONN;
    case WSAESHUTDOWN:
    case ERROR_BROKEN_PIPE:
        return -EPIPE;
    case WSAETIMEDOUT:
    case ERROR_SEM_TIMEOUT:
        return -ETIMEDOUT;
    case WSAECONNREFUSED:
    case ERROR_CONNECTION_REFUSED:
    case ERROR_PORT_UNREACHABLE:
        return -ECONNREFUSED;
    case WSAENAMETOOLONG:
        return -ENAMETOOLONG;
    case WSAEHOSTDOWN:
    case WSAEHOSTUNREACH:
    case ERROR_HOST_UNREACHABLE:
        return -EHOSTUNREACH;
    case WSA_NOT_ENOUGH_MEMORY: /* == ERROR_NOT_ENOUGH_MEMORY */
    case ERROR_OUTOFMEMORY:
        return -ENOMEM;
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
        return -ENOENT;
    default:
        return -EIO;
    }
}

int zl_iocp_overlapped_status(const OVERLAPPED *overlapped)
{
    LONG status = (LONG)overlapped->Internal;
    /* NT_SUCCESS covers success and informational codes only: warnings
     * such as Wine's STATUS_HANDLES_CLOSED (0x8000000A) are failures here. */
    if (status >= 0)
        return 0;
    return zl_iocp_errno_from_wsa((int)zl_iocp_ntstatus_to_win32(status));
}
