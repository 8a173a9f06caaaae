/* iocp_slab.c — message pool slabs on Windows: ordinary memory. Large pages
 * there need the "Lock pages in memory" privilege, which applications rarely
 * hold, so the slab is neither aligned nor advised. */
#include "iocp.h"

#include <stdlib.h>

void *zl_os_slab_alloc(size_t size)
{
    return malloc(size);
}
