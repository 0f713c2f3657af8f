/*
 * rds-shape's profile section (README.md, Schema and Merging): emit() writes it from a settled
 * state, restore() rebuilds a settled state from it.  Kept apart from the analysis so that a
 * declared schema can replace both.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "module.h"
#include "rds.h"

/* ---- Emit ------------------------------------------------------------------------------------ */

/* An SSG edge in the listing's order: by source site, then destination site. */
struct edge_order {
	uint64_t key;                   /* src site << 32 | dst site */
	uint32_t e;
};

static int by_key(const void *a, const void *b)
{
	uint64_t x = ((const struct edge_order *)a)->key, y = ((const struct edge_order *)b)->key;

	return x < y ? -1 : x > y;
}

static int by_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double per(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

static const char *pattern(const struct row *w)
{
	if (w->trav < 2)
		return "none";
	if (2 * w->dfs > w->trav - 1)
		return "dfs";
	if (2 * w->bfs > w->trav - 1)
		return "bfs";
	return "mixed";
}

/*
 * The columns of Table 3 and ours, shared by the summary and the types; each average follows the
 * integers it is computed from, which merged profiles add.
 */
static void emit_agg(struct mn_prof *p, const struct agg *a)
{
	mn_prof_kv_u64(p, "instances", a->instances);
	mn_prof_kv_u64(p, "nodes", a->nodes);
	mn_prof_kv_u64(p, "edges", a->edges);
	mn_prof_kv_u64(p, "forward_edges", a->fwd);
	mn_prof_kv_u64(p, "backward_edges", a->bwd);
	mn_prof_kv_u64(p, "self_edges", a->self);
	mn_prof_kv_f64(p, "avg_nodes", per(a->nodes, a->instances));
	mn_prof_kv_f64(p, "avg_size", per(a->edges, a->instances));
	mn_prof_kv_u64(p, "lifetime_events", a->lifetime);
	mn_prof_kv_u64(p, "run_events", a->span);
	mn_prof_kv_f64(p, "avg_lifetime", per(a->lifetime, a->span));
	mn_prof_kv_u64(p, "traversals", a->trav);
	mn_prof_kv_u64(p, "traversed_instances", a->rsf_n);
	mn_prof_kv_u64(p, "stability_factor_sum", a->rsf_sum);
	mn_prof_kv_f64(p, "avg_stability_factor", per(a->rsf_sum, a->rsf_n));
	mn_prof_kv_u64(p, "max_stability_factor", a->rsf_max);
	mn_prof_kv_u64(p, "dfs_like", a->dfs);
	mn_prof_kv_u64(p, "bfs_like", a->bfs);
}

/* A row; its times are over its run's clock, written as run_events when not the section's. */
static void emit_row(struct rds *r, struct mn_prof *p, const struct row *w)
{
	double now = w->clock ? (double)w->clock : 1.0;

	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "instance", w->id);
	mn_prof_kv_u64(p, "type", w->type);
	mn_prof_kv_u64(p, "nodes", w->nodes);
	mn_prof_kv_u64(p, "live_nodes", w->live);
	mn_prof_kv_u64(p, "edges", w->edges);
	mn_prof_kv_u64(p, "forward_edges", w->fwd);
	mn_prof_kv_u64(p, "backward_edges", w->bwd);
	mn_prof_kv_u64(p, "self_edges", w->self);
	mn_prof_kv_u64(p, "traversals", w->trav);
	mn_prof_kv_u64(p, "created", w->created);
	mn_prof_kv_u64(p, "destroyed", w->destroyed);
	if (w->clock != r->now)
		mn_prof_kv_u64(p, "run_events", w->clock);
	mn_prof_kv_f64(p, "created_norm", w->created / now);
	mn_prof_kv_f64(p, "destroyed_norm", w->destroyed / now);
	mn_prof_kv_f64(p, "lifetime", (w->destroyed - w->created) / now);
	mn_prof_kv_u64(p, "alterations", w->alterations);
	mn_prof_kv_u64(p, "stability_factor", w->rsf);
	if (w->capped)
		mn_prof_kv_bool(p, "stability_capped", true);
	mn_prof_kv_u64(p, "dfs_like", w->dfs);
	mn_prof_kv_u64(p, "bfs_like", w->bfs);
	mn_prof_kv_str(p, "pattern", pattern(w));
	mn_prof_map_end(p);
}

int rds_emit(void *st, struct mn_prof *p)
{
	struct rds *r = st;
	uint32_t n, ntypes = 0, *type_of = NULL, *members;
	struct type *types = NULL;
	struct edge_order *order;
	struct agg all = { 0 };
	size_t nlisted;
	int err = 0;

	rds_settle(r);
	n = r->ssg.n;
	members = malloc((n + 1) * sizeof(*members));
	order = malloc((r->nedges + 1) * sizeof(*order));
	if (!members || !order || rds_find_types(r, &types, &type_of, &ntypes)) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t e = 0; e < r->nedges; e++)
		order[e] = (struct edge_order){ (uint64_t)r->sites[r->edges[e].u].site << 32 |
						r->sites[r->edges[e].v].site, e };
	qsort(order, r->nedges, sizeof(*order), by_key);
	for (uint32_t t = 0; t < ntypes; t++)
		rds_agg_sum(&all, &types[t].a);
	for (size_t i = 0; i < r->nrows; i++)
		r->rows[i].type = type_of[rds_scc_comp(&r->ssg, r->rows[i].node)];
	if (r->nrows)
		qsort(r->rows, r->nrows, sizeof(*r->rows), rds_by_listing);
	nlisted = rds_listed(r);

	mn_prof_map_begin(p);
	mn_prof_kv_f64(p, "threshold", T_PERCENT / 100.0);
	mn_prof_kv_u64(p, "events", r->now);
	mn_prof_key(p, "heap");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "objects", r->serial);
	mn_prof_kv_u64(p, "peak_live", r->peak_live);
	mn_prof_kv_u64(p, "live_at_end", r->live_at_end);
	mn_prof_kv_u64(p, "pointer_stores", r->pointer_stores);
	mn_prof_kv_u64(p, "pointer_loads", r->pointer_loads);
	mn_prof_map_end(p);

	mn_prof_key(p, "summary");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "types", ntypes);
	emit_agg(p, &all);
	mn_prof_map_end(p);

	mn_prof_key(p, "types");
	mn_prof_seq_begin(p);
	for (uint32_t t = 0; t < ntypes; t++) {
		uint32_t k = 0;

		for (uint32_t m = types[t].comp; m != RDS_SCC_NONE; m = r->ssg.v[m].next)
			members[k++] = r->sites[m].site;
		qsort(members, k, sizeof(*members), by_id);
		mn_prof_map_begin_flow(p);
		mn_prof_kv_u64(p, "type", t + 1);
		mn_prof_kv_site(p, "alloc_site", members[0]);
		mn_prof_key(p, "sites");
		mn_prof_seq_begin_flow(p);
		for (uint32_t i = 0; i < k; i++)
			mn_prof_site(p, members[i]);
		mn_prof_seq_end(p);
		emit_agg(p, &types[t].a);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);

	/* The static shape graph's edges, by their sites. */
	mn_prof_key(p, "static_shape_graph");
	mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < r->nedges; i++) {
		const struct ssg_edge *e = &r->edges[order[i].e];

		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "src_site", r->sites[e->u].site);
		mn_prof_kv_site(p, "dst_site", r->sites[e->v].site);
		mn_prof_kv_u64(p, "stores", e->stores);
		mn_prof_kv_bool(p, "same_type",
				rds_scc_comp(&r->ssg, e->u) == rds_scc_comp(&r->ssg, e->v));
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);

	mn_prof_kv_u64(p, "instances_listed", nlisted);
	mn_prof_key(p, "instances");
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < nlisted; i++)
		emit_row(r, p, &r->rows[i]);
	mn_prof_seq_end(p);

	mn_prof_kv_u64(p, "pending_edges", r->pending);
	mn_prof_key(p, "lost");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "aliased_granules", r->aliased);
	mn_prof_kv_u64(p, "nomem", r->nomem);
	mn_prof_kv_u64(p, "unknown_frees", r->unknown_frees);
	mn_prof_kv_u64(p, "pending_dropped", r->pending_dropped);
	mn_prof_map_end(p);
	mn_prof_map_end(p);
out:
	free(type_of);
	free(members);
	free(types);
	free(order);
	return err;
}

/* ---- Restore --------------------------------------------------------------------------------- */

struct field {
	const char *key;
	size_t off;                     /* of its uint64_t in struct agg or struct row */
};

/* The integers of a `types:` row and of `summary`, as emit_agg() writes them. */
static const struct field agg_fields[] = {
	{ "instances", offsetof(struct agg, instances) },
	{ "nodes", offsetof(struct agg, nodes) },
	{ "edges", offsetof(struct agg, edges) },
	{ "forward_edges", offsetof(struct agg, fwd) },
	{ "backward_edges", offsetof(struct agg, bwd) },
	{ "self_edges", offsetof(struct agg, self) },
	{ "lifetime_events", offsetof(struct agg, lifetime) },
	{ "run_events", offsetof(struct agg, span) },
	{ "traversals", offsetof(struct agg, trav) },
	{ "traversed_instances", offsetof(struct agg, rsf_n) },
	{ "stability_factor_sum", offsetof(struct agg, rsf_sum) },
	{ "max_stability_factor", offsetof(struct agg, rsf_max) },
	{ "dfs_like", offsetof(struct agg, dfs) },
	{ "bfs_like", offsetof(struct agg, bfs) },
};

/* The integers of an `instances:` row but run_events (optional), as emit_row() writes them. */
static const struct field row_fields[] = {
	{ "instance", offsetof(struct row, id) },
	{ "nodes", offsetof(struct row, nodes) },
	{ "live_nodes", offsetof(struct row, live) },
	{ "edges", offsetof(struct row, edges) },
	{ "forward_edges", offsetof(struct row, fwd) },
	{ "backward_edges", offsetof(struct row, bwd) },
	{ "self_edges", offsetof(struct row, self) },
	{ "traversals", offsetof(struct row, trav) },
	{ "created", offsetof(struct row, created) },
	{ "destroyed", offsetof(struct row, destroyed) },
	{ "alterations", offsetof(struct row, alterations) },
	{ "stability_factor", offsetof(struct row, rsf) },
	{ "dfs_like", offsetof(struct row, dfs) },
	{ "bfs_like", offsetof(struct row, bfs) },
};

#define NFIELDS(f) (sizeof(f) / sizeof((f)[0]))

/* A field's value in *v: 0, or -EINVAL (a missing field too) with the message in err. */
static int get_u64(const struct mn_profile *prof, const struct mn_pnode *m, const char *key,
		   uint64_t *v, char *err, size_t errlen)
{
	int rc = mn_pfield_u64(prof, m, key, v, err, errlen);

	return rc == -ENOENT ? -EINVAL : rc;
}

static int get_u32(const struct mn_profile *prof, const struct mn_pnode *m, const char *key,
		   uint32_t *v, char *err, size_t errlen)
{
	int rc = mn_pfield_u32(prof, m, key, v, err, errlen);

	return rc == -ENOENT ? -EINVAL : rc;
}

static int get_fields(const struct mn_profile *prof, const struct mn_pnode *m,
		      const struct field *f, size_t n, void *base, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		int rc = get_u64(prof, m, f[i].key, (uint64_t *)((char *)base + f[i].off), err,
				 errlen);

		if (rc)
			return rc;
	}
	return 0;
}

/* Item i of sequence seq, which must be a mapping (a row). */
static const struct mn_pnode *row_at(const struct mn_profile *prof, const struct mn_pnode *seq,
				     size_t i, const char *what, char *err, size_t errlen)
{
	const struct mn_pnode *m = mn_pnode_at(seq, i);

	if (mn_pnode_kind(m) != MN_PNODE_MAP) {
		mn_pnode_errorf(prof, m, err, errlen, "%s: expected a row (a mapping)", what);
		return NULL;
	}
	return m;
}

/*
 * The static shape graph's edges.  Each edge once; `same_type` is checked once the graph is whole
 * (check_types()).
 */
static int restore_ssg(struct rds *r, const struct mn_profile *prof, const struct mn_pnode *ssg,
		       char *err, size_t errlen)
{
	for (size_t i = 0; i < mn_pnode_len(ssg); i++) {
		const struct mn_pnode *m = row_at(prof, ssg, i, "static_shape_graph", err, errlen);
		uint32_t src, dst, u, v;
		uint64_t stores;
		bool same;
		int rc;

		if (!m)
			return -EINVAL;
		if ((rc = get_u32(prof, m, "src_site", &src, err, errlen)) ||
		    (rc = get_u32(prof, m, "dst_site", &dst, err, errlen)) ||
		    (rc = get_u64(prof, m, "stores", &stores, err, errlen)))
			return rc;
		rc = mn_pfield_bool(prof, m, "same_type", &same, err, errlen);
		if (rc)
			return rc == -ENOENT ? -EINVAL : rc;
		u = rds_node_of(r, src);
		v = rds_node_of(r, dst);
		if (u == UINT32_MAX || v == UINT32_MAX)
			return -ENOMEM;
		if (rds_edge_index(r, mn_map_key(u, v)))
			return mn_pnode_errorf(prof, m, err, errlen,
					       "static_shape_graph: the edge %u -> %u twice", src,
					       dst);
		if (rds_ssg_new_edge(r, u, v, stores) < 0)
			return -ENOMEM;
	}
	return 0;
}

/*
 * The types listed must be those emit() finds in the restored graph: the same number, each the
 * sites of one cyclic SCC, by smallest site; and `same_type` of each edge as the graph says.
 * Their totals go to their smallest site (emit() adds the totals of a type's sites).
 */
static int restore_types(struct rds *r, const struct mn_profile *prof,
			 const struct mn_pnode *tseq, const struct mn_pnode *ssg, struct agg *all,
			 uint32_t **alloc_node, char *err, size_t errlen)
{
	uint32_t ntypes, *type_of = NULL, *an = NULL;
	struct type *types = NULL;
	int rc = -ENOMEM;

	if (rds_find_types(r, &types, &type_of, &ntypes) ||
	    !(an = calloc(ntypes + 1, sizeof(*an))))
		goto out;
	rc = -EINVAL;
	if (mn_pnode_len(tseq) != ntypes) {
		mn_pnode_errorf(prof, tseq, err, errlen, "types: %zu rows, but the static shape "
				"graph has %u cyclic components", mn_pnode_len(tseq), ntypes);
		goto out;
	}
	for (uint32_t t = 0; t < ntypes; t++) {
		const struct mn_pnode *m = row_at(prof, tseq, t, "types", err, errlen), *sites;
		uint32_t num, alloc, comp = types[t].comp, site = 0;
		struct agg a = { 0 };

		if (!m)
			goto out;
		if ((rc = get_u32(prof, m, "type", &num, err, errlen)) ||
		    (rc = get_u32(prof, m, "alloc_site", &alloc, err, errlen)))
			goto out;
		rc = -EINVAL;
		if (!(sites = mn_pfield_node(prof, m, "sites", MN_PNODE_SEQ, err, errlen)))
			goto out;
		if (num != t + 1 || alloc != types[t].first_site) {
			mn_pnode_errorf(prof, m, err, errlen, "field 'type': type %u with site %u, "
					"but the static shape graph makes type %u of site %u", num,
					alloc, t + 1, types[t].first_site);
			goto out;
		}
		if (mn_pnode_len(sites) != r->ssg.v[comp].size) {
			mn_pnode_errorf(prof, sites, err, errlen, "field 'sites': %zu sites, but "
					"the static shape graph's component of site %u has %u",
					mn_pnode_len(sites), alloc, r->ssg.v[comp].size);
			goto out;
		}
		for (size_t i = 0; i < mn_pnode_len(sites); i++) {
			const struct mn_pnode *s = mn_pnode_at(sites, i);
			uint64_t id;

			if (mn_pnode_u64(s, &id) || id > UINT32_MAX || (i && id <= site) ||
			    id >= r->nnode_of || !r->node_of[id] ||
			    rds_scc_comp(&r->ssg, r->node_of[id] - 1) != comp) {
				mn_pnode_errorf(prof, s, err, errlen, "field 'sites': expected "
						"the sites of type %u's component, increasing",
						t + 1);
				goto out;
			}
			site = (uint32_t)id;
		}
		if ((rc = get_fields(prof, m, agg_fields, NFIELDS(agg_fields), &a, err, errlen)))
			goto out;
		an[t + 1] = r->node_of[alloc] - 1;
		r->sites[an[t + 1]].ended = a;
		rds_agg_sum(all, &a);
	}
	rc = -EINVAL;
	for (size_t i = 0; i < mn_pnode_len(ssg); i++) {
		const struct mn_pnode *m = mn_pnode_at(ssg, i);
		uint32_t src = 0, dst = 0;
		bool same = false;

		mn_pfield_u32(prof, m, "src_site", &src, NULL, 0);
		mn_pfield_u32(prof, m, "dst_site", &dst, NULL, 0);
		mn_pfield_bool(prof, m, "same_type", &same, NULL, 0);
		if (same != (rds_scc_comp(&r->ssg, r->node_of[src] - 1) ==
			     rds_scc_comp(&r->ssg, r->node_of[dst] - 1))) {
			mn_pnode_errorf(prof, mn_pnode_get(m, "same_type"), err, errlen,
					"field 'same_type': the static shape graph says %s",
					same ? "false" : "true");
			goto out;
		}
	}
	*alloc_node = an;
	an = NULL;
	rc = 0;
out:
	free(an);
	free(types);
	free(type_of);
	return rc;
}

/* The summary must be the sum of the types, as emit() computes it. */
static int restore_summary(const struct mn_profile *prof, const struct mn_pnode *sum,
			   uint32_t ntypes, const struct agg *all, char *err, size_t errlen)
{
	struct agg s = { 0 };
	uint32_t n;
	int rc;

	if ((rc = get_u32(prof, sum, "types", &n, err, errlen)))
		return rc;
	if (n != ntypes)
		return mn_pnode_errorf(prof, mn_pnode_get(sum, "types"), err, errlen,
				       "field 'types': %u, but 'types' lists %u", n, ntypes);
	if ((rc = get_fields(prof, sum, agg_fields, NFIELDS(agg_fields), &s, err, errlen)))
		return rc;
	for (size_t i = 0; i < NFIELDS(agg_fields); i++) {
		uint64_t x = *(const uint64_t *)((const char *)&s + agg_fields[i].off);
		uint64_t y = *(const uint64_t *)((const char *)all + agg_fields[i].off);

		if (x != y)
			return mn_pnode_errorf(prof, mn_pnode_get(sum, agg_fields[i].key), err,
					       errlen, "field '%s': %llu, but the types add up "
					       "to %llu", agg_fields[i].key,
					       (unsigned long long)x, (unsigned long long)y);
	}
	return 0;
}

/* The instance rows; their type's smallest site is their SSG node. */
static int restore_rows(struct rds *r, const struct mn_profile *prof,
			const struct mn_pnode *sec, const uint32_t *alloc_node, uint32_t ntypes,
			char *err, size_t errlen)
{
	const struct mn_pnode *rows = mn_pfield_node(prof, sec, "instances", MN_PNODE_SEQ, err,
						     errlen), *c;
	uint64_t n;
	int rc;

	if (!rows)
		return -EINVAL;
	if ((rc = get_u64(prof, sec, "instances_listed", &n, err, errlen)))
		return rc;
	if (n != mn_pnode_len(rows))
		return mn_pnode_errorf(prof, mn_pnode_get(sec, "instances_listed"), err, errlen,
				       "field 'instances_listed': %llu, but 'instances' has %zu "
				       "rows", (unsigned long long)n, mn_pnode_len(rows));
	for (size_t i = 0; i < mn_pnode_len(rows); i++) {
		const struct mn_pnode *m = row_at(prof, rows, i, "instances", err, errlen);
		struct row w = { .clock = r->now };
		uint32_t type;

		if (!m)
			return -EINVAL;
		if ((rc = get_fields(prof, m, row_fields, NFIELDS(row_fields), &w, err, errlen)) ||
		    (rc = get_u32(prof, m, "type", &type, err, errlen)))
			return rc;
		if (!type || type > ntypes)
			return mn_pnode_errorf(prof, mn_pnode_get(m, "type"), err, errlen,
					       "field 'type': no type %u", type);
		if (w.destroyed < w.created)
			return mn_pnode_errorf(prof, mn_pnode_get(m, "destroyed"), err, errlen,
					       "field 'destroyed': before 'created'");
		/* Written only when true, and only when it is not the section's clock. */
		if ((c = mn_pnode_get(m, "stability_capped")) &&
		    (mn_pnode_bool(c, &w.capped) || !w.capped))
			return mn_pnode_errorf(prof, c, err, errlen, "field 'stability_capped': "
					       "expected true (written only when true)");
		if ((c = mn_pnode_get(m, "run_events")) &&
		    (mn_pnode_u64(c, &w.clock) || w.clock == r->now))
			return mn_pnode_errorf(prof, c, err, errlen, "field 'run_events': expected "
					       "an unsigned integer other than 'events' (written "
					       "only when different)");
		w.node = alloc_node[type];
		if (!rds_rows_append(r, &w))
			return -ENOMEM;
	}
	/* The rows emit() would list: all of them. */
	rds_rows_trim(r);
	if (r->nrows != mn_pnode_len(rows))
		return mn_pnode_errorf(prof, rows, err, errlen, "instances: %zu rows, but a "
				       "listing has the %d most traversed", mn_pnode_len(rows),
				       ROWS);
	return 0;
}

/*
 * Rebuilds a settled state from the section (README, Merging): the counts, the static shape
 * graph (whose SCCs are the types, checked against those listed), each type's totals on its
 * smallest site, and the instance rows.  Floats are not read: emit() computes them.
 */
int rds_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		       char *err, size_t errlen)
{
	struct rds *r = st;
	const struct mn_pnode *heap, *sum, *tseq, *ssg, *lost;
	uint32_t *alloc_node = NULL;
	struct agg all = { 0 };
	double t;
	int rc;

	if (mn_pnode_kind(sec) != MN_PNODE_MAP)
		return mn_pnode_errorf(prof, sec, err, errlen, "rds-shape: expected a mapping");
	rc = mn_pfield_f64(prof, sec, "threshold", &t, err, errlen);
	if (rc)
		return rc == -ENOENT ? -EINVAL : rc;
	if (t != T_PERCENT / 100.0)
		return mn_pnode_errorf(prof, mn_pnode_get(sec, "threshold"), err, errlen,
				       "field 'threshold': %g, but rds-shape computes stability "
				       "factors at %g", t, T_PERCENT / 100.0);
	if ((rc = get_u64(prof, sec, "events", &r->now, err, errlen)))
		return rc;
	if (!(heap = mn_pfield_node(prof, sec, "heap", MN_PNODE_MAP, err, errlen)) ||
	    !(sum = mn_pfield_node(prof, sec, "summary", MN_PNODE_MAP, err, errlen)) ||
	    !(tseq = mn_pfield_node(prof, sec, "types", MN_PNODE_SEQ, err, errlen)) ||
	    !(ssg = mn_pfield_node(prof, sec, "static_shape_graph", MN_PNODE_SEQ, err, errlen)) ||
	    !(lost = mn_pfield_node(prof, sec, "lost", MN_PNODE_MAP, err, errlen)))
		return -EINVAL;
	if ((rc = get_u64(prof, heap, "objects", &r->serial, err, errlen)) ||
	    (rc = get_u64(prof, heap, "peak_live", &r->peak_live, err, errlen)) ||
	    (rc = get_u64(prof, heap, "live_at_end", &r->live_at_end, err, errlen)) ||
	    (rc = get_u64(prof, heap, "pointer_stores", &r->pointer_stores, err, errlen)) ||
	    (rc = get_u64(prof, heap, "pointer_loads", &r->pointer_loads, err, errlen)) ||
	    (rc = get_u64(prof, sec, "pending_edges", &r->pending, err, errlen)) ||
	    (rc = get_u64(prof, lost, "aliased_granules", &r->aliased, err, errlen)) ||
	    (rc = get_u64(prof, lost, "nomem", &r->nomem, err, errlen)) ||
	    (rc = get_u64(prof, lost, "unknown_frees", &r->unknown_frees, err, errlen)) ||
	    (rc = get_u64(prof, lost, "pending_dropped", &r->pending_dropped, err, errlen)) ||
	    (rc = restore_ssg(r, prof, ssg, err, errlen)) ||
	    (rc = restore_types(r, prof, tseq, ssg, &all, &alloc_node, err, errlen)) ||
	    (rc = restore_summary(prof, sum, (uint32_t)mn_pnode_len(tseq), &all, err, errlen)) ||
	    (rc = restore_rows(r, prof, sec, alloc_node, (uint32_t)mn_pnode_len(tseq), err,
			       errlen)))
		goto out;
	r->settled = true;
out:
	free(alloc_node);
	return rc;
}

