/* peer_cred.c — an AF_UNIX peer's credentials (SO_PEERCRED), for the
 * Peer-Address of an ipc connection, as libzmq gives it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "peer_cred.h"

#include <errno.h>
#include <sys/socket.h>

int zl_posix_peer_cred(int fd, unsigned *uid, unsigned *gid, int *pid)
{
#if defined(SO_PEERCRED)
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return -errno;
    *uid = (unsigned)cred.uid;
    *gid = (unsigned)cred.gid;
    *pid = (int)cred.pid;
    return 0;
#else
    (void)fd;
    (void)uid;
    (void)gid;
    (void)pid;
    return -ENOTSUP;
#endif
}
