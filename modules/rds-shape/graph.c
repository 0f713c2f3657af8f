/*
 * rds-shape's static shape graph (rds.h): its nodes (allocation sites) and edges, kept with their
 * stores, an edge's index in a map.h reduction map; its types, the cyclic SCCs scc.c keeps; and
 * merging runs, whose graphs unite.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rds.h"

/* The index + 1 of the SSG edge under key (u << 32 | v), or 0 when there is none. */
uint32_t rds_edge_index(struct rds *r, uint64_t key)
{
	struct mn_map_value v;

	return mn_map_get(r->edge_of, key, &v) ? (uint32_t)v.value : 0;
}

/* Records i (not 0) as the index + 1 of a new SSG edge; 0, or -ENOMEM when the map dropped it. */
static int edge_index_put(struct rds *r, uint64_t key, uint32_t i)
{
	uint64_t lost = mn_map_lost(r->edge_of);

	mn_map_insert(r->edge_of, key, i);
	return mn_map_lost(r->edge_of) == lost ? 0 : -ENOMEM;
}

/*
 * Adds the SSG edge u -> v (not there yet) with the counts of add (its u and v are not read).
 * Returns 1 when the components changed, 0 when not, -ENOMEM.
 */
int rds_ssg_new_edge(struct rds *r, uint32_t u, uint32_t v, const struct ssg_edge *add)
{
	uint64_t key = mn_map_key(u, v);
	int changed;

	if (r->nedges == r->capedges) {
		uint32_t cap = r->capedges ? 2 * r->capedges : 64;
		struct ssg_edge *v2 = realloc(r->edges, cap * sizeof(*v2));

		if (!v2)
			return -ENOMEM;
		r->edges = v2;
		r->capedges = cap;
	}
	if (edge_index_put(r, key, r->nedges + 1))
		return -ENOMEM;
	changed = rds_scc_add_edge(&r->ssg, u, v);
	if (changed < 0)
		return changed;   /* the map says the edge exists: its objects will stay pending */
	r->edges[r->nedges] = (struct ssg_edge){ .u = u, .v = v };
	rds_edge_fold(&r->edges[r->nedges++], add);
	return changed;
}

/* The SSG node of site id, added on first sight; UINT32_MAX without memory. */
uint32_t rds_node_of(struct rds *r, uint32_t site)
{
	int64_t n;

	if (site < r->nnode_of && r->node_of[site])
		return r->node_of[site] - 1;
	if (site >= r->nnode_of) {
		uint32_t cap = r->nnode_of ? r->nnode_of : 64;
		uint32_t *v;

		while (cap <= site)
			cap = cap > UINT32_MAX / 2 ? UINT32_MAX : 2 * cap;
		v = realloc(r->node_of, (size_t)cap * sizeof(*v));
		if (!v)
			return UINT32_MAX;
		memset(v + r->nnode_of, 0, (size_t)(cap - r->nnode_of) * sizeof(*v));
		r->node_of = v;
		r->nnode_of = cap;
	}
	if (r->ssg.n == r->ssg.cap) {
		struct asite *v = realloc(r->sites, (size_t)(r->ssg.cap ? 2 * r->ssg.cap : 64) *
						       sizeof(*v));

		if (!v)
			return UINT32_MAX;
		r->sites = v;
	}
	n = rds_scc_add_node(&r->ssg);
	if (n < 0)
		return UINT32_MAX;
	memset(&r->sites[n], 0, sizeof(r->sites[n]));
	r->sites[n].site = site;
	r->node_of[site] = (uint32_t)n + 1;
	return (uint32_t)n;
}

static int by_first_site(const void *a, const void *b, void *actx)
{
	const struct type *x = a, *y = b;

	return mn_allocctx_cmp(actx, x->first_site, y->first_site);
}

/*
 * The types of the SSG as it stands: *types (ntypes of them, by smallest site, their totals the
 * sum of their sites'), and *type_of, by representative node, the type's number (1..) or 0.
 * 0 or -ENOMEM; the caller frees both.
 */
int rds_find_types(struct rds *r, struct type **types, uint32_t **type_of, uint32_t *ntypes)
{
	uint32_t n = r->ssg.n, k = 0;
	struct type *t = calloc(n + 1, sizeof(*t));
	uint32_t *of = calloc(n + 1, sizeof(*of));

	if (!t || !of) {
		free(t);
		free(of);
		return -ENOMEM;
	}
	for (uint32_t u = 0; u < n; u++) {
		uint32_t c = rds_scc_comp(&r->ssg, u);

		if (!rds_scc_cyclic(&r->ssg, u))
			continue;
		if (!of[c]) {
			t[k].comp = c;
			t[k].first_site = r->sites[u].site;
			of[c] = ++k;
		}
		if (mn_allocctx_cmp(&r->actx, r->sites[u].site, t[of[c] - 1].first_site) < 0)
			t[of[c] - 1].first_site = r->sites[u].site;
	}
	qsort_r(t, k, sizeof(*t), by_first_site, &r->actx);
	for (uint32_t i = 0; i < k; i++)
		of[t[i].comp] = i + 1;
	for (uint32_t u = 0; u < n; u++)
		if (rds_scc_cyclic(&r->ssg, u))
			rds_agg_sum(&t[of[rds_scc_comp(&r->ssg, u)] - 1].a, &r->sites[u].ended);
	*types = t;
	*type_of = of;
	*ntypes = k;
	return 0;
}

/* ---- Merge ----------------------------------------------------------------------------------- */

/*
 * Folds run (or runs) `from` into `into` (README, Merging): counts add, peaks take the larger,
 * the SSGs unite with their edges' stores and directions added and fields united (types follow
 * at emit), each site's totals add,
 * and the rows of both are kept as far as they may be listed.  Instances never join across
 * states: they are sets of one run's objects.
 */
/* The key in r of f's SSG node n: contexts are keyed per state. */
static uint32_t key_in(struct rds *r, const struct rds *f, uint32_t n)
{
	return mn_allocctx_translate(&r->actx, &f->actx, f->sites[n].site);
}

void rds_merge(void *into, void *from)
{
	struct rds *r = into, *f = from;

	rds_settle(r);
	rds_settle(f);
	mn_schema_merge(&rds_section, r, f, true);   /* the counts: sums, peak_live a max */

	for (uint32_t e = 0; e < f->nedges; e++) {
		const struct ssg_edge *x = &f->edges[e];
		uint32_t u = rds_node_of(r, key_in(r, f, x->u)), i;
		uint32_t v = rds_node_of(r, key_in(r, f, x->v));

		if (u == UINT32_MAX || v == UINT32_MAX) {
			r->nomem++;
			continue;
		}
		if ((i = rds_edge_index(r, mn_map_key(u, v))))
			rds_edge_fold(&r->edges[i - 1], x);
		else if (rds_ssg_new_edge(r, u, v, x) < 0)
			r->nomem++;
	}
	for (uint32_t n = 0; n < f->ssg.n; n++) {
		uint32_t u;

		if (!f->sites[n].ended.instances)
			continue;
		if ((u = rds_node_of(r, key_in(r, f, n))) == UINT32_MAX) {
			r->nomem++;
			continue;
		}
		rds_agg_sum(&r->sites[u].ended, &f->sites[n].ended);
	}
	for (size_t i = 0; i < f->nrows; i++) {
		struct row w = f->rows[i];

		if ((w.node = rds_node_of(r, key_in(r, f, w.node))) == UINT32_MAX) {
			r->nomem++;
			continue;
		}
		rds_rows_push(r, &w);
	}
}

