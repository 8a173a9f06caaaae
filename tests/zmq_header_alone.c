/* zmq_header_alone.c — a program written for libzmq includes <zmq.h> and
 * nothing else, and uses what libzmq's header brings with it: <stdio.h>,
 * <stdint.h>, <stddef.h> and <errno.h> (zguide's version.c does). It is
 * built with implicit declarations as errors, as gcc 14 builds by
 * default, so a missing include fails the build. */
#include <zlink_zmq.h>

int main(void)
{
    int major, minor, patch;
    zmq_version(&major, &minor, &patch);
    FILE *out = stdout;
    uint64_t wide = ZMQ_DEFINED_STDINT;
    size_t size = sizeof wide;
    errno = 0;
    fprintf(out, "libzmq API %d.%d.%d\n", major, minor, patch);
    return major == ZMQ_VERSION_MAJOR && size == 8 ? 0 : 1;
}
