/*
 * rds-shape's rows (rds.h): each instance's intervals between alteration points and its stability
 * factor (section 5), the rows of the instances that ended, kept as far as they may be listed, the
 * per-site totals, and the end of a run (rds_settle()).  The instances' union-find is in
 * rds_shape.c, with the events that change it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rds.h"

static int by_count_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x > y ? -1 : x < y;
}

/* Remembers an interval's traversal count c > 0, keeping the TOP_INTERVALS largest. */
void rds_top_push(struct rds *r, struct inst *I, uint64_t c)
{
	if (I->ntop == I->captop) {
		uint32_t cap = I->captop ? 2 * I->captop : 4;
		uint64_t *t = realloc(I->top, cap * sizeof(*t));

		if (!t) {
			r->nomem++;
			I->top_cut = true;
			return;
		}
		I->top = t;
		I->captop = cap;
	}
	I->top[I->ntop++] = c;
	if (I->ntop == 2 * TOP_INTERVALS) {
		qsort(I->top, I->ntop, sizeof(*I->top), by_count_desc);
		I->ntop = TOP_INTERVALS;
		I->top_cut = true;
	}
}

/*
 * The RDS stability factor (section 5): the fewest intervals between alteration points that hold
 * t of the instance's traversals; 0 for an instance never traversed.  When intervals were dropped
 * and the kept ones fall short, a lower bound (each dropped one is no larger than the smallest
 * kept), with *capped set.
 */
static uint64_t stability(struct rds *r, struct inst *I, bool *capped)
{
	uint64_t acc = 0, k = 0;

	close_interval(r, I);
	*capped = false;
	if (!I->trav)
		return 0;
	if (I->ntop)
		qsort(I->top, I->ntop, sizeof(*I->top), by_count_desc);
	while (k < I->ntop) {
		acc += I->top[k++];
		if (100 * acc >= T_PERCENT * I->trav)
			return k;
	}
	*capped = true;
	if (!k)
		return 1;
	return k + (T_PERCENT * I->trav - 100 * acc + 100 * I->top[k - 1] - 1) /
		   (100 * I->top[k - 1]);
}

/* The row of instance I now; ends its current interval. */
struct row rds_row_of(struct rds *r, struct inst *I)
{
	struct row w = {
		.id = I->id, .created = I->created, .nodes = I->nodes, .live = I->live,
		.edges = I->edges, .fwd = I->fwd, .bwd = I->bwd, .self = I->self, .trav = I->trav,
		.dfs = I->dfs, .bfs = I->bfs, .alterations = I->alterations, .node = I->node,
	};

	/* Destroyed: last traversed (section 5); never traversed, its last edge. */
	w.destroyed = I->last_trav ? I->last_trav : I->last_edge;
	if (w.destroyed < w.created)
		w.destroyed = w.created;
	w.rsf = stability(r, I, &w.capped);
	return w;
}

/* a + b, or UINT64_MAX when it does not fit (a clock times instances may not). */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t c;

	return __builtin_mul_overflow(a, b, &c) ? UINT64_MAX : c;
}

static void agg_add(struct agg *a, const struct row *w)
{
	a->instances++;
	a->nodes += w->nodes;
	a->edges += w->edges;
	a->fwd += w->fwd;
	a->bwd += w->bwd;
	a->self += w->self;
	a->trav += w->trav;
	a->dfs += w->dfs;
	a->bfs += w->bfs;
	a->lifetime += w->destroyed - w->created;
	if (w->trav) {
		a->rsf_sum += w->rsf;
		a->rsf_n++;
		a->rsf_max = w->rsf > a->rsf_max ? w->rsf : a->rsf_max;
	}
}

void rds_agg_sum(struct agg *a, const struct agg *b)
{
	a->instances += b->instances;
	a->nodes += b->nodes;
	a->edges += b->edges;
	a->fwd += b->fwd;
	a->bwd += b->bwd;
	a->self += b->self;
	a->trav += b->trav;
	a->dfs += b->dfs;
	a->bfs += b->bfs;
	a->lifetime += b->lifetime;
	a->span = sat_add(a->span, b->span);
	a->rsf_sum += b->rsf_sum;
	a->rsf_n += b->rsf_n;
	a->rsf_max = b->rsf_max > a->rsf_max ? b->rsf_max : a->rsf_max;
}

#define CMP(f) do { if (x->f != y->f) return x->f < y->f ? -1 : 1; } while (0)

/*
 * The listing's order: most traversed first, then oldest, then by every other count, so that
 * rows of different runs (whose names may be equal) have one order whatever the runs' (README,
 * Merging).  Not by type: the type a row shows is the merged profile's, which the rows' order
 * while runs are folded must not depend on.
 */
static int by_traversals(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->trav != y->trav)
		return x->trav > y->trav ? -1 : 1;
	CMP(id);
	CMP(clock);
	CMP(created);
	CMP(destroyed);
	CMP(nodes);
	CMP(live);
	CMP(edges);
	CMP(fwd);
	CMP(bwd);
	CMP(self);
	CMP(dfs);
	CMP(bfs);
	CMP(alterations);
	CMP(rsf);
	CMP(capped);
	return 0;
}

/* As listed: rows equal in every count (of different runs) by their type. */
int rds_by_listing(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = by_traversals(a, b);

	if (c)
		return c;
	CMP(type);
	return 0;
}

#undef CMP

/*
 * The rows sorted by_traversals (or by_listing), how many are listed: those with fewer than ROWS
 * rows before them (by_traversals), so rows equal to the ROWS-th go with it.  Within one run no
 * two rows are equal (names differ): the ROWS first.  Taking the listing of a listing and more
 * rows gives the listing of all of them, so runs fold in any grouping.
 */
size_t rds_listed(const struct rds *r)
{
	size_t n = ROWS;

	if (r->nrows <= ROWS)
		return r->nrows;
	while (n < r->nrows && !by_traversals(&r->rows[n], &r->rows[ROWS - 1]))
		n++;
	return n;
}

/* Keeps only the rows that may be listed. */
void rds_rows_trim(struct rds *r)
{
	if (r->nrows)   /* rows is NULL before the first, and qsort's base must not be */
		qsort(r->rows, r->nrows, sizeof(*r->rows), by_traversals);
	r->nrows = rds_listed(r);
}

/* Appends row w; false without memory (not kept). */
bool rds_rows_append(struct rds *r, const struct row *w)
{
	if (r->nrows == r->caprows) {
		size_t cap = r->caprows ? 2 * r->caprows : 2 * ROWS;
		struct row *v = realloc(r->rows, cap * sizeof(*v));

		if (!v)
			return false;
		r->rows = v;
		r->caprows = cap;
	}
	r->rows[r->nrows++] = *w;
	return true;
}

/* Keeps row w for the listing if it may be among the first. */
void rds_rows_push(struct rds *r, const struct row *w)
{
	if (!rds_rows_append(r, w)) {
		r->nomem++;
		return;
	}
	if (r->nrows >= 2 * ROWS && r->nrows % ROWS == 0)
		rds_rows_trim(r);
}

/* Counts row w in its site's totals and keeps it for the listing if it may be among the first. */
void rds_row_keep(struct rds *r, const struct row *w)
{
	agg_add(&r->sites[w->node].ended, w);
	rds_rows_push(r, w);
}

/*
 * Ends the run: instances still alive count as they stand (rows, their sites' totals), every row
 * and total learns the run's clock, and the object and pending tables' counts are copied out.
 * Once; emit() and merge() call it, restore() makes a state that is settled already.
 */
void rds_settle(struct rds *r)
{
	if (r->settled)
		return;
	r->settled = true;
	for (uint32_t i = 1; i <= r->ninst; i++) {
		if (r->inst[i].id) {
			struct row w = rds_row_of(r, &r->inst[i]);

			rds_row_keep(r, &w);
		}
	}
	for (size_t i = 0; i < r->nrows; i++)
		r->rows[i].clock = r->now;
	for (uint32_t u = 0; u < r->ssg.n; u++)
		r->sites[u].ended.span = sat_mul(r->sites[u].ended.instances, r->now);
	r->peak_live = r->obj.peak;
	r->live_at_end = r->obj.live;
	r->aliased = r->obj.aliases;
	r->pending = r->pend.n;
	r->pending_dropped = r->pend.dropped;
}

