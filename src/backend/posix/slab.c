/* slab.c — message pool slabs on POSIX systems: 2 MiB aligned, and marked
 * for transparent huge pages where the OS has them (Linux grants them in
 * most distributions only on request, THP "madvise" mode). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend.h"

#include <stdlib.h>
#include <sys/mman.h>

void *zl_os_slab_alloc(size_t size)
{
    void *slab = NULL;
    if (posix_memalign(&slab, ZL_HUGE_SLAB, size) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    /* Only advice: where THP is off, the slab is ordinary memory. */
    (void)madvise(slab, size, MADV_HUGEPAGE);
#endif
    return slab;
}
