/* pattern_table.c — which pattern implements which socket type. */
#include <stdbool.h>
#include <stddef.h>

#include "patterns/pattern.h"

/* A new socket type adds its ops here and its extern in pattern.h. */
static const zl_pattern_ops *const patterns[] = {
    &zl_pair_ops, &zl_dealer_ops, &zl_router_ops, &zl_pub_ops,
    &zl_sub_ops,  &zl_xpub_ops,   &zl_xsub_ops,   &zl_req_ops,
    &zl_rep_ops,  &zl_push_ops,   &zl_pull_ops,   &zl_stream_socket_ops,
};

const zl_pattern_ops *zl_pattern_for_type(int type)
{
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        if (patterns[i]->type == type)
            return patterns[i];
    }
    return NULL;
}

bool zl_pattern_reads_directly(int type)
{
    const zl_pattern_ops *ops = zl_pattern_for_type(type);
    return ops && ops->direct_recv_envelope;
}

zl_direct_envelope zl_pattern_direct_bare(struct zl_socket *s, zl_pipe *p)
{
    (void)s;
    (void)p;
    return ZL_DIRECT_BARE;
}
