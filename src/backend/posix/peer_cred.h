/* peer_cred.h — an AF_UNIX peer's credentials on the POSIX backends. */
#ifndef ZL_POSIX_PEER_CRED_H
#define ZL_POSIX_PEER_CRED_H

/* 0, or -errno; -ENOTSUP where the OS cannot tell. *pid is -1 where the OS
 * tells the ids only. */
int zl_posix_peer_cred(int fd, unsigned *uid, unsigned *gid, int *pid);

#endif
