/* trie_bench.c — the publisher's subscription match rate with 10,000
 * subscriptions (issue #3): how many topics per second zl_mtrie_match
 * resolves, and what it costs per byte of topic. zlink only: libzmq does not
 * expose its mtrie. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "patterns/trie.h"

static void count_match(void *pipe, void *arg)
{
    (void)pipe;
    (*(uint64_t *)arg)++;
}

int main(int argc, char **argv)
{
    int subscriptions = argc > 1 ? atoi(argv[1]) : 10000;
    int lookups = argc > 2 ? atoi(argv[2]) : 2000000;
    zl_mtrie trie;
    zl_mtrie_init(&trie);
    char topic[64];
    /* Topics shaped like real fan-out keys: a shared prefix, then ids. */
    for (int i = 0; i < subscriptions; i++) {
        int n = snprintf(topic, sizeof topic, "game/%d/state/%d", i % 97, i);
        zl_mtrie_add(&trie, topic, (size_t)n, (void *)(intptr_t)(i % 64 + 1));
    }
    uint64_t matches = 0;
    uint64_t start = uv_hrtime();
    for (int i = 0; i < lookups; i++) {
        int id = (int)(((uint64_t)i * 2654435761u) % (uint64_t)(subscriptions * 2));
        int n = snprintf(topic, sizeof topic, "game/%d/state/%d/payload",
                         id % 97, id);
        zl_mtrie_match(&trie, topic, (size_t)n, count_match, &matches);
    }
    double seconds = (double)(uv_hrtime() - start) / 1e9;
    printf("subscriptions,lookups,hit_ratio,matches_per_s,ns_per_match\n");
    printf("%d,%d,%.2f,%.0f,%.1f\n", subscriptions, lookups,
           (double)matches / lookups, lookups / seconds,
           seconds * 1e9 / lookups);
    zl_mtrie_destroy(&trie);
    return 0;
}
