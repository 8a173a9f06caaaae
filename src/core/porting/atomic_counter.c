/* atomic_counter.c — zlink_atomic_counter_*: libzmq's thread-safe counter,
 * with its return conventions (inc gives the old value, dec whether the
 * counter is still above zero). */
#include "atomics.h"
#include <stdlib.h>

#include "zlink.h"

typedef struct atomic_counter {
    atomic_int value;
} atomic_counter;

void *zlink_atomic_counter_new(void)
{
    atomic_counter *c = malloc(sizeof *c);
    if (c)
        atomic_init(&c->value, 0);
    return c;
}

void zlink_atomic_counter_set(void *counter, int value)
{
    atomic_store(&((atomic_counter *)counter)->value, value);
}

int zlink_atomic_counter_inc(void *counter)
{
    return atomic_fetch_add(&((atomic_counter *)counter)->value, 1);
}

int zlink_atomic_counter_dec(void *counter)
{
    return atomic_fetch_sub(&((atomic_counter *)counter)->value, 1) - 1 > 0;
}

int zlink_atomic_counter_value(void *counter)
{
    return atomic_load(&((atomic_counter *)counter)->value);
}

void zlink_atomic_counter_destroy(void **counter_p)
{
    if (!counter_p)
        return;
    free(*counter_p);
    *counter_p = NULL;
}
