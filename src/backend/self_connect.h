/* self_connect.h — whether a connected TCP socket reached itself (see
 * self_connect.c), for every backend's connect completion. */
#ifndef ZL_SELF_CONNECT_H
#define ZL_SELF_CONNECT_H

#include <stdbool.h>

#include "os_types.h"

bool zl_socket_connected_to_itself(zl_os_socket s);

#endif
