/* peer_cred.c — an AF_UNIX peer's credentials, for the Peer-Address of an
 * ipc connection and libzmq's ZMQ_IPC_FILTER_* options: SO_PEERCRED on
 * Linux, getpeereid on macOS and the BSDs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "peer_cred.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include "../backend.h"

/* OpenBSD's SO_PEERCRED takes a struct sockpeercred; getpeereid serves it. */
#if defined(SO_PEERCRED) && !defined(__OpenBSD__)
#define HAVE_UCRED 1
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) ||     \
    defined(__OpenBSD__) || defined(__DragonFly__)
#define HAVE_GETPEEREID 1
#endif

int zl_posix_peer_cred(int fd, unsigned *uid, unsigned *gid, int *pid)
{
#if defined(HAVE_UCRED)
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return -errno;
    *uid = (unsigned)cred.uid;
    *gid = (unsigned)cred.gid;
    *pid = (int)cred.pid;
    return 0;
#elif defined(HAVE_GETPEEREID)
    uid_t u;
    gid_t g;
    if (getpeereid(fd, &u, &g) != 0)
        return -errno;
    *uid = (unsigned)u;
    *gid = (unsigned)g;
    *pid = -1;
#if defined(LOCAL_PEERPID)
    pid_t p;
    socklen_t len = sizeof p;
    if (getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, &p, &len) == 0)
        *pid = (int)p;
#endif
    return 0;
#else
    (void)fd;
    (void)uid;
    (void)gid;
    (void)pid;
    return -ENOTSUP;
#endif
}

int zl_peer_cred_kinds(void)
{
#if defined(HAVE_UCRED) || defined(LOCAL_PEERPID)
    return ZL_PEER_CRED_IDS | ZL_PEER_CRED_PID;
#elif defined(HAVE_GETPEEREID)
    return ZL_PEER_CRED_IDS;
#else
    return 0;
#endif
}

bool zl_user_in_group(unsigned uid, unsigned gid)
{
    char buf[16384];
    struct passwd pw, *pwp = NULL;
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof buf, &pwp) != 0 || !pwp)
        return false;
    /* The group lookup reuses buf, so the name is kept first. */
    char name[256];
    size_t name_len = strlen(pw.pw_name);
    if (name_len >= sizeof name)
        return false;
    memcpy(name, pw.pw_name, name_len + 1);
    struct group gr, *grp = NULL;
    if (getgrgid_r((gid_t)gid, &gr, buf, sizeof buf, &grp) != 0 || !grp)
        return false;
    for (char **member = gr.gr_mem; member && *member; member++)
        if (strcmp(*member, name) == 0)
            return true;
    return false;
}
