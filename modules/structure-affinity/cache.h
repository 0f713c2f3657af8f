/*
 * The cache model of MNEMO_AFFINITY_COST=cache: two levels of set-associative LRU caches that
 * charge each access the latency of the level holding its line.  A line missing in both fills
 * both; the second level sees only the first's misses, as in hardware, and is not kept inclusive.
 * It stands in for the latency the paper reads from PEBS-LL or IBS samples: it knows nothing of
 * prefetchers, write-backs or other cores, only of reuse within the capacity and associativity it
 * is given.
 *
 * Not thread-safe: one per module state.
 */
#ifndef SA_CACHE_H
#define SA_CACHE_H

#include <stdint.h>

enum { SA_L1, SA_L2, SA_MEMORY, SA_LEVELS };

struct sa_cache_level {
	uint32_t sets, ways;
	uint64_t *tag;              /* sets * ways line numbers + 1 (0: empty), most recent first */
};

struct sa_cache {
	struct sa_cache_level level[2];
	unsigned line_shift;
	uint32_t latency[SA_LEVELS];  /* cycles charged by where the line was found */
	uint64_t found[SA_LEVELS];    /* lines found in L1, in L2, in memory */
};

struct sa_cache_config {
	uint64_t bytes[2];            /* capacity of L1 and L2 */
	uint32_t ways[2];
	uint32_t line;                /* bytes per line, a power of two */
	uint32_t latency[SA_LEVELS];
};

/*
 * Sets up an empty cache.  Returns 0, -EINVAL when the line is not a power of two or a level's
 * capacity is not a positive multiple of line * ways (then *c is zeroed), or -ENOMEM.
 */
int sa_cache_init(struct sa_cache *c, const struct sa_cache_config *cfg);
void sa_cache_free(struct sa_cache *c);

/* Touches every line of [addr, addr + size) (size 0 is one byte); returns the latencies' sum. */
uint64_t sa_cache_access(struct sa_cache *c, uint64_t addr, uint64_t size);

#endif /* SA_CACHE_H */
