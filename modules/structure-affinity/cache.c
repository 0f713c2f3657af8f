/*
 * The two-level LRU cache model of cache.h.  Ways are kept most recent first, so a hit moves its
 * tag to the front and a miss drops the last one; associativities are small (16 at most in the
 * defaults), so a linear scan beats any index.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

static int level_init(struct sa_cache_level *l, uint64_t bytes, uint32_t ways, uint32_t line)
{
	uint64_t set_bytes = (uint64_t)line * ways;

	if (!ways || !bytes || bytes % set_bytes || bytes / set_bytes > UINT32_MAX)
		return -EINVAL;
	l->sets = (uint32_t)(bytes / set_bytes);
	l->ways = ways;
	l->tag = calloc((size_t)l->sets * ways, sizeof(*l->tag));
	return l->tag ? 0 : -ENOMEM;
}

int sa_cache_init(struct sa_cache *c, const struct sa_cache_config *cfg)
{
	int err = -EINVAL;

	memset(c, 0, sizeof(*c));
	if (cfg->line && !(cfg->line & (cfg->line - 1))) {
		c->line_shift = (unsigned)__builtin_ctz(cfg->line);
		err = level_init(&c->level[0], cfg->bytes[0], cfg->ways[0], cfg->line);
		if (!err)
			err = level_init(&c->level[1], cfg->bytes[1], cfg->ways[1], cfg->line);
	}
	if (err) {
		sa_cache_free(c);
		return err;
	}
	memcpy(c->latency, cfg->latency, sizeof(c->latency));
	return 0;
}

void sa_cache_free(struct sa_cache *c)
{
	free(c->level[0].tag);
	free(c->level[1].tag);
	memset(c, 0, sizeof(*c));
}

/* Looks line up in l and makes it the most recent of its set; true when it was there. */
static bool touch(struct sa_cache_level *l, uint64_t line)
{
	uint64_t *set = &l->tag[(size_t)(line % l->sets) * l->ways], t = line + 1;
	uint32_t i = 0;
	bool hit;

	while (i < l->ways && set[i] != t)
		i++;
	hit = i < l->ways;
	if (!hit)
		i = l->ways - 1;   /* a miss evicts the least recent */
	memmove(&set[1], &set[0], i * sizeof(*set));
	set[0] = t;
	return hit;
}

uint64_t sa_cache_access(struct sa_cache *c, uint64_t addr, uint64_t size)
{
	uint64_t first = addr >> c->line_shift;
	uint64_t last = (addr + (size ? size - 1 : 0)) >> c->line_shift;
	uint64_t cost = 0;

	for (uint64_t line = first; line <= last; line++) {
		int where = touch(&c->level[0], line) ? SA_L1
			    : touch(&c->level[1], line) ? SA_L2 : SA_MEMORY;

		c->found[where]++;
		cost += c->latency[where];
	}
	return cost;
}
