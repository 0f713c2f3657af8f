/* Context ids ranked by their sites (ctxrank.h): each used id decoded, the paths sorted. */
#include <stdlib.h>

#include "context.h"
#include "ctxrank.h"

struct path {
	uint32_t id;
	int depth;
	const uint32_t *sites;   /* max_depth of them, depth used */
};

static int cmp_path(const void *a_, const void *b_)
{
	const struct path *a = a_, *b = b_;

	for (int k = 0; k < a->depth && k < b->depth; k++)
		if (a->sites[k] != b->sites[k])
			return a->sites[k] < b->sites[k] ? -1 : 1;
	return (a->depth > b->depth) - (a->depth < b->depth);
}

uint32_t *mn_ctx_ranks(const struct mn_ctx *c, const uint8_t *used)
{
	uint32_t nids = mn_ctx_id_count(c), n = 0;
	unsigned max = mn_ctx_max_depth(c) ? mn_ctx_max_depth(c) : 1;
	uint32_t *rank = calloc(nids ? nids : 1, sizeof(*rank)), *sites;
	struct path *paths;

	for (uint32_t id = 0; id < nids; id++)
		n += used[id] != 0;
	paths = malloc((n ? n : 1) * sizeof(*paths));
	sites = malloc((size_t)(n ? n : 1) * max * sizeof(*sites));
	if (!rank || !paths || !sites) {
		free(rank);
		rank = NULL;
		goto out;
	}
	n = 0;
	for (uint32_t id = 0; id < nids; id++) {
		if (!used[id])
			continue;
		paths[n] = (struct path){ id, mn_ctx_decode(c, id, &sites[(size_t)n * max], max),
					  &sites[(size_t)n * max] };
		if (paths[n].depth > (int)max)
			paths[n].depth = (int)max;
		n++;
	}
	qsort(paths, n, sizeof(*paths), cmp_path);
	for (uint32_t i = 0; i < n; i++)
		rank[paths[i].id] = i;
out:
	free(paths);
	free(sites);
	return rank;
}
