/* string_option.h — a string option as libzmq's setsockopt takes it. */
#ifndef ZL_STRING_OPTION_H
#define ZL_STRING_OPTION_H

#include <stddef.h>
#include <stdint.h>

/* A max for strings, such as PEM text, whose length only memory bounds. */
#define ZL_STRING_OPTION_UNBOUNDED (SIZE_MAX - 1)

/* Replaces *field with a NUL-terminated copy of val, or NULL for an empty
 * value. A trailing NUL is taken as the string's end, as libzmq programs
 * pass it; any other NUL, or more than max characters, is EINVAL. */
int zl_string_option_set(char **field, const void *val, size_t len, size_t max);

#endif
