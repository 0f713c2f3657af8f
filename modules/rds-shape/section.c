/*
 * rds-shape's profile section (README.md, Schema and Merging), declared once on schema.h: the
 * tables below write it, read it and merge its counts.  Its tables (types, the static shape
 * graph, the listing) are made from the settled state just before emit() writes them, into
 * struct rds_views; restore() reads them there and rebuilds the state from them, checking what
 * ties them together: the types are the graph's cyclic components, the summary their sum.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "module.h"
#include "rds.h"

/* A `types:` row: one cyclic SCC of the graph. */
struct rds_type_row {
	uint64_t type;                  /* from 1, by smallest site */
	uint32_t alloc;                 /* its smallest site (a key of actx) */
	struct mn_vec sites;            /* uint64_t keys, increasing (mn_allocctx_cmp()) */
	struct agg a;
};

/* A `static_shape_graph:` row. */
struct rds_edge_row {
	uint32_t src, dst;
	uint64_t stores;
	struct mn_vec fields;           /* uint64_t offsets of the source's pointer fields, < 512 */
	uint64_t fwd, bwd;              /* stores from an older object, from a younger one */
	bool same;                      /* both ends of one type */
};

/* An `instances:` row; its times are over its run's clock, written as run_events when that is
 * not the section's. */
struct rds_list_row {
	struct row w;
	double norm[3];                 /* created, destroyed, lifetime over the clock: not read */
	bool own_clock;
};

#define F(T, m) offsetof(T, m)

static double per(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

/* avg_*: of the struct agg at .offset, the ratio numbered .arg. */
static void avg(const struct mn_field *f, const void *row, void *out)
{
	const struct agg *a = (const struct agg *)((const char *)row + f->offset);
	static const size_t num[] = { F(struct agg, nodes), F(struct agg, edges),
				      F(struct agg, lifetime), F(struct agg, rsf_sum) };
	static const size_t den[] = { F(struct agg, instances), F(struct agg, instances),
				      F(struct agg, span), F(struct agg, rsf_n) };

	*(double *)out = per(*(const uint64_t *)((const char *)a + num[f->arg]),
			     *(const uint64_t *)((const char *)a + den[f->arg]));
}

/* The columns of Table 3 and ours, shared by the summary and the types; each average follows the
 * integers it is computed from, which merged profiles add.  AVG(T, key, i) is the average. */
#define AGG_FIELDS(T, AVG)                                                                      \
	MN_FIELD("instances", MN_FT_U64, F(T, a.instances), MN_R_NONE),                         \
	MN_FIELD("nodes", MN_FT_U64, F(T, a.nodes), MN_R_NONE),                                 \
	MN_FIELD("edges", MN_FT_U64, F(T, a.edges), MN_R_NONE),                                 \
	MN_FIELD("forward_edges", MN_FT_U64, F(T, a.fwd), MN_R_NONE),                           \
	MN_FIELD("backward_edges", MN_FT_U64, F(T, a.bwd), MN_R_NONE),                          \
	MN_FIELD("self_edges", MN_FT_U64, F(T, a.self), MN_R_NONE),                             \
	AVG(T, "avg_nodes", 0), AVG(T, "avg_size", 1),                                          \
	MN_FIELD("lifetime_events", MN_FT_U64, F(T, a.lifetime), MN_R_NONE),                    \
	MN_FIELD("run_events", MN_FT_U64, F(T, a.span), MN_R_NONE),                             \
	AVG(T, "avg_lifetime", 2),                                                              \
	MN_FIELD("traversals", MN_FT_U64, F(T, a.trav), MN_R_NONE),                             \
	MN_FIELD("traversed_instances", MN_FT_U64, F(T, a.rsf_n), MN_R_NONE),                   \
	MN_FIELD("stability_factor_sum", MN_FT_U64, F(T, a.rsf_sum), MN_R_NONE),                \
	AVG(T, "avg_stability_factor", 3),                                                      \
	MN_FIELD("max_stability_factor", MN_FT_U64, F(T, a.rsf_max), MN_R_NONE),                \
	MN_FIELD("dfs_like", MN_FT_U64, F(T, a.dfs), MN_R_NONE),                                \
	MN_FIELD("bfs_like", MN_FT_U64, F(T, a.bfs), MN_R_NONE)

/* A type's averages are derived (and checked); the summary's are written as emit() computed
 * them and not read back, for the summary is checked against the types as a whole. */
#define AVG_DERIVED(T, k, i) \
	MN_FIELD(k, MN_FT_F64, F(T, a), MN_R_NONE, .flags = MN_FF_DERIVED, .derive = avg, .arg = i)
#define AVG_STORED(T, k, i) MN_FIELD(k, MN_FT_F64, F(T, avg[i]), MN_R_NONE)

static const struct mn_field summary_fields[] = {
	MN_FIELD("types", MN_FT_U64, F(struct rds_summary, types), MN_R_NONE),
	AGG_FIELDS(struct rds_summary, AVG_STORED),
};
static const struct mn_schema summary = MN_SCHEMA("summary", struct rds_summary, summary_fields,
						  .flow = true);

/* Sites are allocation contexts (allocctx.h): a site alone, or a site with its callers. */
#define ACTX F(struct rds, actx)

static const struct mn_field type_fields[] = {
	MN_FIELD("type", MN_FT_U64, F(struct rds_type_row, type), MN_R_KEY),
	MN_ALLOCCTX_SITE("alloc_site", struct rds_type_row, alloc, ACTX, MN_R_NONE),
	MN_ALLOCCTX_CONTEXT("context", struct rds_type_row, alloc, ACTX),
	MN_FIELD("sites", MN_FT_LIST, F(struct rds_type_row, sites), MN_R_NONE,
		 .elem = MN_FT_U64, .aux = ACTX, .put = mn_allocctx_put_chains,
		 .take = mn_allocctx_take_chains),
	AGG_FIELDS(struct rds_type_row, AVG_DERIVED),
};
static const struct mn_schema types = MN_SCHEMA("types", struct rds_type_row, type_fields,
						.flow = true, .weight = "traversals");

/* Written always; optional on restore (a `when` makes a field so): profiles written before the
 * graph's fields and directions lack them, and read as none known (README, Section schema). */
static bool always(const struct mn_field *f, const void *row)
{
	(void)f, (void)row;
	return true;
}

static const struct mn_field edge_fields[] = {
	MN_ALLOCCTX_SITE("src_site", struct rds_edge_row, src, ACTX, MN_R_KEY),
	MN_ALLOCCTX_CONTEXT("src_context", struct rds_edge_row, src, ACTX),
	MN_ALLOCCTX_SITE("dst_site", struct rds_edge_row, dst, ACTX, MN_R_KEY),
	MN_ALLOCCTX_CONTEXT("dst_context", struct rds_edge_row, dst, ACTX),
	MN_FIELD("stores", MN_FT_U64, F(struct rds_edge_row, stores), MN_R_NONE),
	MN_FIELD("fields", MN_FT_LIST, F(struct rds_edge_row, fields), MN_R_NONE,
		 .elem = MN_FT_U64, .flags = MN_FF_SORTED, .when = always),
	MN_FIELD("forward", MN_FT_U64, F(struct rds_edge_row, fwd), MN_R_NONE, .when = always),
	MN_FIELD("backward", MN_FT_U64, F(struct rds_edge_row, bwd), MN_R_NONE, .when = always),
	MN_FIELD("same_type", MN_FT_BOOL, F(struct rds_edge_row, same), MN_R_NONE),
};
/* By source, then destination, each in mn_allocctx_cmp()'s order: the same in every run. */
static int by_ends(const void *a, const void *b)
{
	const struct rds_edge_row *x = a, *y = b;
	const struct mn_allocctx *t = &((const struct rds *)mn_schema_top())->actx;
	int c = mn_allocctx_cmp(t, x->src, y->src);

	return c ? c : mn_allocctx_cmp(t, x->dst, y->dst);
}

static const struct mn_schema edges = MN_SCHEMA("static_shape_graph", struct rds_edge_row,
						edge_fields, .flow = true, .order = by_ends,
						.weight = "stores");

static bool own_clock(const struct mn_field *f, const void *row)
{
	return ((const struct rds_list_row *)row)->own_clock;
}

static int take_clock(const struct mn_field *f, void *row, const struct mn_profile *prof,
		      const struct mn_pnode *n, char *err, size_t errlen)
{
	struct rds_list_row *l = row;

	if (mn_pnode_u64(n, &l->w.clock))
		return mn_pnode_errorf(prof, n, err, errlen, "field 'run_events': expected an "
				       "unsigned integer");
	l->own_clock = true;   /* rds_restore() checks it is not the section's clock */
	return 0;
}

static bool capped(const struct mn_field *f, const void *row)
{
	return ((const struct rds_list_row *)row)->w.capped;
}

static int take_capped(const struct mn_field *f, void *row, const struct mn_profile *prof,
		       const struct mn_pnode *n, char *err, size_t errlen)
{
	struct rds_list_row *l = row;

	if (mn_pnode_bool(n, &l->w.capped) || !l->w.capped)
		return mn_pnode_errorf(prof, n, err, errlen, "field 'stability_capped': "
				       "expected true (written only when true)");
	return 0;
}

static void pattern(const struct mn_field *f, const void *row, void *out)
{
	const struct row *w = row;

	*(uint64_t *)out = w->trav < 2 ? 0 : 2 * w->dfs > w->trav - 1 ? 1 :
			   2 * w->bfs > w->trav - 1 ? 2 : 3;
}

/* The listing's order is rds_by_listing()'s, made before writing: the rows' stored order. */
static int stored(const void *a, const void *b)
{
	return (a > b) - (a < b);
}

#define L(m) F(struct rds_list_row, w.m)
static const struct mn_field row_fields[] = {
	MN_FIELD("instance", MN_FT_U64, L(id), MN_R_NONE),
	MN_FIELD("type", MN_FT_U32, L(type), MN_R_NONE),
	MN_FIELD("nodes", MN_FT_U64, L(nodes), MN_R_NONE),
	MN_FIELD("live_nodes", MN_FT_U64, L(live), MN_R_NONE),
	MN_FIELD("edges", MN_FT_U64, L(edges), MN_R_NONE),
	MN_FIELD("forward_edges", MN_FT_U64, L(fwd), MN_R_NONE),
	MN_FIELD("backward_edges", MN_FT_U64, L(bwd), MN_R_NONE),
	MN_FIELD("self_edges", MN_FT_U64, L(self), MN_R_NONE),
	MN_FIELD("traversals", MN_FT_U64, L(trav), MN_R_NONE),
	MN_FIELD("created", MN_FT_U64, L(created), MN_R_NONE),
	MN_FIELD("destroyed", MN_FT_U64, L(destroyed), MN_R_NONE),
	MN_FIELD("run_events", MN_FT_U64, L(clock), MN_R_NONE, .when = own_clock,
		 .take = take_clock),
	MN_FIELD("created_norm", MN_FT_F64, F(struct rds_list_row, norm[0]), MN_R_NONE),
	MN_FIELD("destroyed_norm", MN_FT_F64, F(struct rds_list_row, norm[1]), MN_R_NONE),
	MN_FIELD("lifetime", MN_FT_F64, F(struct rds_list_row, norm[2]), MN_R_NONE),
	MN_FIELD("alterations", MN_FT_U64, L(alterations), MN_R_NONE),
	MN_FIELD("stability_factor", MN_FT_U64, L(rsf), MN_R_NONE),
	MN_FIELD("stability_capped", MN_FT_BOOL, L(capped), MN_R_NONE, .when = capped,
		 .take = take_capped),
	MN_FIELD("dfs_like", MN_FT_U64, L(dfs), MN_R_NONE),
	MN_FIELD("bfs_like", MN_FT_U64, L(bfs), MN_R_NONE),
	MN_FIELD("pattern", MN_FT_ENUM, F(struct rds_list_row, w), MN_R_NONE,
		 .flags = MN_FF_DERIVED, .derive = pattern, .choices = "none|dfs|bfs|mixed"),
};
#undef L
static const struct mn_schema rows = MN_SCHEMA("instances", struct rds_list_row, row_fields,
					       .flow = true, .order = stored, .weight = "traversals");

#define V(m) F(struct rds, view.m)
static const struct mn_field heap_fields[] = {
	MN_FIELD("objects", MN_FT_U64, F(struct rds, serial), MN_R_SUM),
	MN_FIELD("peak_live", MN_FT_U64, F(struct rds, peak_live), MN_R_MAX),
	MN_FIELD("live_at_end", MN_FT_U64, F(struct rds, live_at_end), MN_R_SUM),
	MN_FIELD("pointer_stores", MN_FT_U64, F(struct rds, pointer_stores), MN_R_SUM),
	MN_FIELD("pointer_loads", MN_FT_U64, F(struct rds, pointer_loads), MN_R_SUM),
};
static const struct mn_schema heap = MN_SCHEMA("heap", struct rds, heap_fields, .flow = true);

static const struct mn_field lost_fields[] = {
	MN_FIELD("aliased_granules", MN_FT_U64, F(struct rds, aliased), MN_R_SUM),
	MN_FIELD("nomem", MN_FT_U64, F(struct rds, nomem), MN_R_SUM),
	MN_FIELD("unknown_frees", MN_FT_U64, F(struct rds, unknown_frees), MN_R_SUM),
	MN_FIELD("pending_dropped", MN_FT_U64, F(struct rds, pending_dropped), MN_R_SUM),
};
static const struct mn_schema lost = MN_SCHEMA("lost", struct rds, lost_fields, .flow = true);

/* The tables are views: not merged here (rds_merge() folds the graph and the rows). */
static const struct mn_field section_fields[] = {
	MN_FIELD("threshold", MN_FT_F64, F(struct rds, threshold), MN_R_CONST),
	MN_FIELD("events", MN_FT_U64, F(struct rds, now), MN_R_SUM),
	MN_FIELD("heap", MN_FT_MAP, 0, MN_R_UNION, .sub = &heap),
	MN_FIELD("summary", MN_FT_MAP, V(sum), MN_R_NONE, .flags = MN_FF_VIEW, .sub = &summary),
	MN_FIELD("types", MN_FT_ROWS, V(types), MN_R_NONE, .sub = &types),
	MN_FIELD("static_shape_graph", MN_FT_ROWS, V(edges), MN_R_NONE, .sub = &edges),
	MN_FIELD("instances_listed", MN_FT_U64, V(listed), MN_R_NONE),
	MN_FIELD("instances", MN_FT_ROWS, V(rows), MN_R_NONE, .sub = &rows),
	MN_FIELD("pending_edges", MN_FT_U64, F(struct rds, pending), MN_R_SUM),
	MN_FIELD("lost", MN_FT_MAP, 0, MN_R_UNION, .sub = &lost),
};
#undef V
const struct mn_schema rds_section = MN_SCHEMA("rds-shape", struct rds, section_fields);

/* ---- Emit: the views of a settled state ------------------------------------------------------ */

static int by_id(const void *a, const void *b, void *actx)
{
	return mn_allocctx_cmp(actx, (uint32_t)*(const uint64_t *)a, (uint32_t)*(const uint64_t *)b);
}

/* A type's row: its sites, increasing, and totals. */
static int type_row(struct rds *r, const struct type *t, uint64_t num)
{
	struct rds_type_row *y = mn_vec_push(&r->view.types, sizeof(*y));

	if (!y || mn_vec_reserve(&y->sites, sizeof(uint64_t), r->ssg.v[t->comp].size + 1))
		return -ENOMEM;
	for (uint32_t m = t->comp; m != RDS_SCC_NONE; m = r->ssg.v[m].next)
		*(uint64_t *)mn_vec_push(&y->sites, sizeof(uint64_t)) = r->sites[m].site;
	qsort_r(y->sites.v, y->sites.n, sizeof(uint64_t), by_id, &r->actx);
	y->type = num;
	y->alloc = (uint32_t)*(uint64_t *)y->sites.v;
	y->a = t->a;
	return 0;
}

static int graph_rows(struct rds *r)
{
	for (uint32_t e = 0; e < r->nedges; e++) {
		const struct ssg_edge *x = &r->edges[e];
		struct rds_edge_row *y = mn_vec_push(&r->view.edges, sizeof(*y));

		if (!y || mn_vec_reserve(&y->fields, sizeof(uint64_t),
					 (uint32_t)__builtin_popcountll(x->fields) + 1))
			return -ENOMEM;
		for (uint64_t m = x->fields; m; m &= m - 1)
			*(uint64_t *)mn_vec_push(&y->fields, sizeof(uint64_t)) =
				8 * (uint64_t)__builtin_ctzll(m);
		y->src = r->sites[x->u].site;
		y->dst = r->sites[x->v].site;
		y->stores = x->stores;
		y->fwd = x->fwd;
		y->bwd = x->bwd;
		y->same = rds_scc_comp(&r->ssg, x->u) == rds_scc_comp(&r->ssg, x->v);
	}
	return 0;
}

/* The rows listed, in the listing's order, their types named. */
static int list_rows(struct rds *r, const uint32_t *type_of)
{
	for (size_t i = 0; i < r->nrows; i++)
		r->rows[i].type = type_of[rds_scc_comp(&r->ssg, r->rows[i].node)];
	if (r->nrows)
		qsort(r->rows, r->nrows, sizeof(*r->rows), rds_by_listing);
	r->view.listed = rds_listed(r);
	for (size_t i = 0; i < r->view.listed; i++) {
		const struct row *w = &r->rows[i];
		struct rds_list_row *y = mn_vec_push(&r->view.rows, sizeof(*y));
		double now = w->clock ? (double)w->clock : 1.0;

		if (!y)
			return -ENOMEM;
		*y = (struct rds_list_row){ *w, { w->created / now, w->destroyed / now,
						  (w->destroyed - w->created) / now },
					    w->clock != r->now };
	}
	return 0;
}

static int make_views(struct rds *r)
{
	struct rds_summary *s = &r->view.sum;
	uint32_t ntypes, *type_of = NULL;
	struct type *t = NULL;
	int err = -ENOMEM;

	if (rds_find_types(r, &t, &type_of, &ntypes))
		goto out;
	*s = (struct rds_summary){ .types = ntypes };
	for (uint32_t i = 0; i < ntypes; i++) {
		rds_agg_sum(&s->a, &t[i].a);
		if (type_row(r, &t[i], i + 1))
			goto out;
	}
	s->avg[0] = per(s->a.nodes, s->a.instances);
	s->avg[1] = per(s->a.edges, s->a.instances);
	s->avg[2] = per(s->a.lifetime, s->a.span);
	s->avg[3] = per(s->a.rsf_sum, s->a.rsf_n);
	err = graph_rows(r) || list_rows(r, type_of) ? -ENOMEM : 0;
out:
	free(t);
	free(type_of);
	return err;
}

int rds_emit(void *st, struct mn_prof *p)
{
	struct rds *r = st;
	int err;

	rds_settle(r);
	err = make_views(r);
	if (!err)
		err = mn_schema_emit(&rds_section, r, p);
	mn_schema_release(&rds_section, r);   /* the views; the state's own are scalars */
	return err;
}

/* ---- Restore: the state from the views ------------------------------------------------------- */

/* Where restore() reads, and where it says what is wrong: the views' row i is the file's. */
struct rdr {
	const struct mn_profile *prof;
	const struct mn_pnode *sec;
	char *err;
	size_t errlen;
};

static const struct mn_pnode *at_row(const struct rdr *d, const char *table, size_t i,
				     const char *key)
{
	const struct mn_pnode *n = mn_pnode_get(d->sec, table);

	return key ? mn_pnode_get(mn_pnode_at(n, i), key) : n;
}

#define REFUSE(d, node, ...) mn_pnode_errorf((d)->prof, (node), (d)->err, (d)->errlen, __VA_ARGS__)

/* The fields of edge row i as emit() writes them: offsets 0, 8, ..., 504 (increasing: the
 * schema checked). */
static int take_fields(const struct rdr *d, uint32_t i, const struct mn_vec *f, uint64_t *mask)
{
	const uint64_t *o = f->v;

	*mask = 0;
	for (uint32_t k = 0; k < f->n; k++) {
		if (o[k] >= 8 * FIELDS || o[k] & 7)
			return REFUSE(d, mn_pnode_at(at_row(d, "static_shape_graph", i, "fields"), k),
				      "field 'fields': %llu is no offset 0, 8, ..., %d",
				      (unsigned long long)o[k], 8 * FIELDS - 8);
		*mask |= UINT64_C(1) << (o[k] >> 3);
	}
	return 0;
}

/* The static shape graph's edges (each once: the table's key).  Its nodes hold their sites. */
static int rebuild_graph(const struct rdr *d, struct rds *r)
{
	const struct rds_edge_row *y = r->view.edges.v;
	int rc;

	for (uint32_t i = 0; i < r->view.edges.n; i++) {
		uint32_t u = rds_node_of(r, y[i].src), v = rds_node_of(r, y[i].dst);
		struct ssg_edge x = { .stores = y[i].stores, .fwd = y[i].fwd, .bwd = y[i].bwd };

		if ((rc = take_fields(d, i, &y[i].fields, &x.fields)))
			return rc;
		if (u == UINT32_MAX || v == UINT32_MAX || rds_ssg_new_edge(r, u, v, &x) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Type t's row must be the component emit() finds: its number, smallest site and sites. */
static int check_type(const struct rdr *d, struct rds *r, const struct type *t, uint32_t num,
		      const struct rds_type_row *y)
{
	const uint64_t *s = y->sites.v;

	if (y->type != num || y->alloc != t->first_site)
		return REFUSE(d, at_row(d, "types", num - 1, "type"), "field 'type': type %llu "
			      "with site %u, but the static shape graph makes type %u of site %u",
			      (unsigned long long)y->type, y->alloc, num, t->first_site);
	if (y->sites.n != r->ssg.v[t->comp].size)
		return REFUSE(d, at_row(d, "types", num - 1, "sites"), "field 'sites': %u sites, "
			      "but the static shape graph's component of site %u has %u",
			      y->sites.n, y->alloc, r->ssg.v[t->comp].size);
	for (uint32_t i = 0; i < y->sites.n; i++)
		if (s[i] >= r->nnode_of || !r->node_of[s[i]] ||
		    rds_scc_comp(&r->ssg, r->node_of[s[i]] - 1) != t->comp)
			return REFUSE(d, at_row(d, "types", num - 1, "sites"), "field 'sites': "
				      "expected the sites of type %u's component", num);
	return 0;
}

/* Each edge's same_type as the graph says. */
static int check_same(const struct rdr *d, struct rds *r)
{
	const struct rds_edge_row *y = r->view.edges.v;

	for (uint32_t i = 0; i < r->view.edges.n; i++)
		if (y[i].same != (rds_scc_comp(&r->ssg, r->node_of[y[i].src] - 1) ==
				  rds_scc_comp(&r->ssg, r->node_of[y[i].dst] - 1)))
			return REFUSE(d, at_row(d, "static_shape_graph", i, "same_type"),
				      "field 'same_type': the static shape graph says %s",
				      y[i].same ? "false" : "true");
	return 0;
}

/* The summary's integers must be the types' count and sum, as emit() computes them. */
static int check_summary(const struct rdr *d, const struct rds *r, const struct rds_summary *all)
{
	for (unsigned i = 0; i < summary.nfields; i++) {
		const struct mn_field *f = &summary.fields[i];
		uint64_t x, y;

		if (f->type != MN_FT_U64)
			continue;
		memcpy(&x, (const char *)&r->view.sum + f->offset, sizeof(x));
		memcpy(&y, (const char *)all + f->offset, sizeof(y));
		if (x != y)
			return REFUSE(d, mn_pnode_get(mn_pnode_get(d->sec, "summary"), f->key),
				      "field '%s': %llu, but %s %llu", f->key,
				      (unsigned long long)x, i ? "the types add up to" :
				      "'types' lists", (unsigned long long)y);
	}
	return 0;
}

/*
 * The types listed must be those emit() finds in the restored graph: the same number, each the
 * sites of one cyclic SCC, by smallest site; their totals go to their smallest site (emit() adds
 * the totals of a type's sites), and add up to the summary.
 */
static int rebuild_types(const struct rdr *d, struct rds *r, uint32_t **alloc_node)
{
	const struct rds_type_row *y = r->view.types.v;
	uint32_t ntypes, *type_of = NULL, *an = NULL;
	struct rds_summary all = { 0 };
	struct type *t = NULL;
	int rc = -ENOMEM;

	if (rds_find_types(r, &t, &type_of, &ntypes) || !(an = calloc(ntypes + 1, sizeof(*an))))
		goto out;
	rc = -EINVAL;
	if (r->view.types.n != ntypes) {
		REFUSE(d, at_row(d, "types", 0, NULL), "types: %u rows, but the static shape "
		       "graph has %u cyclic components", r->view.types.n, ntypes);
		goto out;
	}
	all.types = ntypes;
	for (uint32_t i = 0; i < ntypes; i++) {
		if ((rc = check_type(d, r, &t[i], i + 1, &y[i])))
			goto out;
		an[i + 1] = r->node_of[y[i].alloc] - 1;
		r->sites[an[i + 1]].ended = y[i].a;
		rds_agg_sum(&all.a, &y[i].a);
	}
	if ((rc = check_same(d, r)) || (rc = check_summary(d, r, &all)))
		goto out;
	*alloc_node = an;
	an = NULL;
out:
	free(an);
	free(t);
	free(type_of);
	return rc;
}

/* One listed row: of a type listed, not destroyed before created, its own clock another. */
static int check_row(const struct rdr *d, const struct rds *r, uint32_t i,
		     const struct rds_list_row *y)
{
	if (!y->w.type || y->w.type > r->view.types.n)
		return REFUSE(d, at_row(d, "instances", i, "type"), "field 'type': no type %u",
			      y->w.type);
	if (y->w.destroyed < y->w.created)
		return REFUSE(d, at_row(d, "instances", i, "destroyed"), "field 'destroyed': "
			      "before 'created'");
	if (y->own_clock && y->w.clock == r->now)
		return REFUSE(d, at_row(d, "instances", i, "run_events"), "field 'run_events': "
			      "expected an unsigned integer other than 'events' (written only "
			      "when different)");
	return 0;
}

/* The instance rows; their type's smallest site is their SSG node. */
static int rebuild_rows(const struct rdr *d, struct rds *r, const uint32_t *alloc_node)
{
	const struct rds_list_row *y = r->view.rows.v;
	uint32_t n = r->view.rows.n;
	int rc;

	if (r->view.listed != n)
		return REFUSE(d, mn_pnode_get(d->sec, "instances_listed"), "field "
			      "'instances_listed': %llu, but 'instances' has %u rows",
			      (unsigned long long)r->view.listed, n);
	for (uint32_t i = 0; i < n; i++) {
		struct row w = y[i].w;

		if ((rc = check_row(d, r, i, &y[i])))
			return rc;
		if (!y[i].own_clock)
			w.clock = r->now;
		w.node = alloc_node[w.type];
		if (!rds_rows_append(r, &w))
			return -ENOMEM;
	}
	/* The rows emit() would list: all of them. */
	rds_rows_trim(r);
	if (r->nrows != n)
		return REFUSE(d, at_row(d, "instances", 0, NULL), "instances: %u rows, but a "
			      "listing has the %d most traversed", n, ROWS);
	return 0;
}

/*
 * Rebuilds a settled state from the section (README, Merging): the counts, the static shape
 * graph (whose SCCs are the types, checked against those listed), each type's totals on its
 * smallest site, and the instance rows.
 */
int rds_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		char *err, size_t errlen)
{
	struct rds *r = st;
	struct rdr d = { prof, sec, err, errlen };
	uint32_t *alloc_node = NULL;
	int rc;

	if (!(rc = mn_schema_restore(&rds_section, r, prof, sec, err, errlen)) &&
	    !(rc = rebuild_graph(&d, r)) && !(rc = rebuild_types(&d, r, &alloc_node)) &&
	    !(rc = rebuild_rows(&d, r, alloc_node)))
		r->settled = true;
	mn_schema_release(&rds_section, r);
	free(alloc_node);
	return rc;
}
