/* string_option.c — a string option as libzmq's setsockopt takes it. */
#include "string_option.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int zl_string_option_set(char **field, const void *val, size_t len, size_t max)
{
    if ((!val && len) || len > max + 1) {
        errno = EINVAL;
        return -1;
    }
    if (len > 0 && ((const char *)val)[len - 1] == '\0')
        len--;
    /* max + 1 bytes pass the first check unless the last is a NUL. */
    if (len > max || (len && memchr(val, '\0', len))) {
        errno = EINVAL;
        return -1;
    }
    char *copy = NULL;
    if (len > 0) {
        copy = malloc(len + 1);
        if (!copy) {
            errno = ENOMEM;
            return -1;
        }
        memcpy(copy, val, len);
        copy[len] = '\0';
    }
    free(*field);
    *field = copy;
    return 0;
}
