/* sys/event.h — the kqueue API as FreeBSD's kqueue(2) documents it, for the
 * test-only emulation over epoll (kqueue_emu.c). Only the filters and flags
 * the kqueue backend uses; constants take FreeBSD's values. This header is
 * on the include path only in a ZLINK_KQUEUE_EMULATION build. */
#ifndef ZL_KQUEUE_EMU_SYS_EVENT_H
#define ZL_KQUEUE_EMU_SYS_EVENT_H

#include <stdint.h>
#include <time.h>
/* Declared before close() becomes a macro below. */
#include <unistd.h>

struct kevent {
    uintptr_t ident;      /* file descriptor, or a user event's number */
    short filter;         /* EVFILT_* */
    unsigned short flags; /* EV_* */
    unsigned int fflags;  /* filter-specific flags */
    intptr_t data;        /* filter-specific data */
    void *udata;          /* opaque, returned as given */
};

#define EV_SET(kevp, a, b, c, d, e, f)                                         \
    do {                                                                       \
        struct kevent *ev_set_ = (kevp);                                       \
        ev_set_->ident = (a);                                                  \
        ev_set_->filter = (b);                                                 \
        ev_set_->flags = (c);                                                  \
        ev_set_->fflags = (d);                                                 \
        ev_set_->data = (e);                                                   \
        ev_set_->udata = (f);                                                  \
    } while (0)

#define EVFILT_READ (-1)
#define EVFILT_WRITE (-2)
/* Defining ZLINK_KQUEUE_EMU_NO_EVFILT_USER hides EVFILT_USER, as on
 * OpenBSD before 7.6 and NetBSD before 10, so that the backend's pipe wake
 * runs too. */
#define ZL_KQEMU_EVFILT_USER (-11)
#ifndef ZLINK_KQUEUE_EMU_NO_EVFILT_USER
#define EVFILT_USER ZL_KQEMU_EVFILT_USER
#endif

/* actions */
#define EV_ADD 0x0001
#define EV_DELETE 0x0002
#define EV_ENABLE 0x0004
#define EV_DISABLE 0x0008
/* flags */
#define EV_ONESHOT 0x0010
#define EV_CLEAR 0x0020
#define EV_RECEIPT 0x0040
#define EV_DISPATCH 0x0080
/* returned values */
#define EV_EOF 0x8000
#define EV_ERROR 0x4000

/* EVFILT_USER: what to do with the low 24 bits of fflags, and the trigger */
#define NOTE_FFNOP 0x00000000
#define NOTE_FFAND 0x40000000
#define NOTE_FFOR 0x80000000
#define NOTE_FFCOPY 0xc0000000
#define NOTE_FFCTRLMASK 0xc0000000
#define NOTE_FFLAGSMASK 0x00ffffff
#define NOTE_TRIGGER 0x01000000

int kqueue(void);
int kevent(int kq, const struct kevent *changelist, int nchanges,
           struct kevent *eventlist, int nevents,
           const struct timespec *timeout);

/* Closing a descriptor removes its events from every kqueue, as the kernel
 * does; closing a kqueue frees it. The emulation must see the close for
 * that, so close() goes through it wherever this header is included. */
int zl_kqemu_close(int fd);
#define close(fd) zl_kqemu_close(fd)

#endif
