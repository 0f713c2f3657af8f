/*
 * The online strongly connected components of scc.h: Pearce and Kelly's re-ordering, with cycles
 * merged.  Components are lists of nodes relabelled smaller-into-larger, so a node's component is
 * one load; the searches walk components, expanding each through its members' edges.
 *
 * Why the re-ordering stays a topological order (PK 2003, Theorem 1, with a merge): for an edge
 * u -> v against the order, let lb = ord(v), ub = ord(u), F the components reachable from v with
 * ord <= ub, B those reaching u with ord >= lb, S = F and B (non-empty exactly when the edge closes
 * a cycle).  The order numbers of F and B, pooled and sorted, are handed out: the smallest to B - S
 * in their old relative order, the next to S (merged), the largest to F - S in their old order.
 * Then B - S only moves down and F - S only up, so an edge from outside into F, or from B to
 * outside, still goes up; an edge from F to outside leaves the region (ord > ub), one from outside
 * into B comes from below it (ord < lb); B before S before F respects the new edge and every path
 * through S.  There are enough numbers: |pool| = |B u F| >= |B - S| + 1 + |F - S| as |S| >= 2.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "scc.h"

/* Room for one more edge in a; 0 or -ENOMEM (a unchanged). */
static int adj_reserve(struct rds_scc_adj *a)
{
	uint32_t cap;
	uint32_t *v;

	if (a->n < a->cap)
		return 0;
	cap = a->cap ? 2 * a->cap : 4;
	v = realloc(a->v, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	a->v = v;
	a->cap = cap;
	return 0;
}

void rds_scc_init(struct rds_scc *g)
{
	memset(g, 0, sizeof(*g));
}

void rds_scc_free(struct rds_scc *g)
{
	for (uint32_t i = 0; i < g->n; i++) {
		free(g->v[i].out.v);
		free(g->v[i].in.v);
	}
	free(g->v);
	free(g->stack);
	free(g->fwd);
	free(g->bwd);
	free(g->pool);
	rds_scc_init(g);
}

/* Scratch for searches over cap nodes: every array n long.  0 or -ENOMEM (then unchanged). */
static int scratch_reserve(struct rds_scc *g, uint32_t cap)
{
	uint32_t *stack, *pool;
	uint64_t *fwd, *bwd;

	if (cap <= g->scratch_cap)
		return 0;
	stack = realloc(g->stack, cap * sizeof(*stack));
	if (stack)
		g->stack = stack;
	pool = realloc(g->pool, cap * sizeof(*pool));
	if (pool)
		g->pool = pool;
	fwd = realloc(g->fwd, cap * sizeof(*fwd));
	if (fwd)
		g->fwd = fwd;
	bwd = realloc(g->bwd, cap * sizeof(*bwd));
	if (bwd)
		g->bwd = bwd;
	if (!stack || !pool || !fwd || !bwd)
		return -ENOMEM;
	g->scratch_cap = cap;
	return 0;
}

int64_t rds_scc_add_node(struct rds_scc *g)
{
	struct rds_scc_node *x;
	uint32_t i = g->n;

	if (g->n == UINT32_MAX - 1)
		return -ENOMEM;
	if (g->n == g->cap) {
		uint32_t cap = g->cap ? 2 * g->cap : 64;
		struct rds_scc_node *v = realloc(g->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->v = v;
		g->cap = cap;
	}
	if (scratch_reserve(g, g->cap))
		return -ENOMEM;
	x = &g->v[i];
	memset(x, 0, sizeof(*x));
	x->comp = i;
	x->next = RDS_SCC_NONE;
	x->last = i;
	x->size = 1;
	x->ord = g->next_ord++;
	g->n++;
	return i;
}

/*
 * Visits the components reachable from start's (forward: along out-edges, those with ord <= bound;
 * backward: along in-edges, ord >= bound), marking them with the epoch; writes each as
 * ord << 32 | component into found[] and returns how many.
 */
static uint32_t search(struct rds_scc *g, uint32_t start, uint32_t bound, bool forward,
		       uint64_t *found)
{
	uint32_t sp = 0, n = 0;

	if (forward)
		g->v[start].fmark = g->epoch;
	else
		g->v[start].bmark = g->epoch;
	g->stack[sp++] = start;
	while (sp) {
		uint32_t c = g->stack[--sp];

		found[n++] = (uint64_t)g->v[c].ord << 32 | c;
		for (uint32_t m = c; m != RDS_SCC_NONE; m = g->v[m].next) {
			const struct rds_scc_adj *a = forward ? &g->v[m].out : &g->v[m].in;

			for (uint32_t i = 0; i < a->n; i++) {
				uint32_t x = g->v[a->v[i]].comp;
				struct rds_scc_node *cx = &g->v[x];
				uint32_t *mark = forward ? &cx->fmark : &cx->bmark;

				if (*mark == g->epoch ||
				    (forward ? cx->ord > bound : cx->ord < bound))
					continue;
				*mark = g->epoch;
				g->stack[sp++] = x;
			}
		}
	}
	return n;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int by_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Moves component c's members into component r's. */
static void absorb(struct rds_scc *g, uint32_t r, uint32_t c)
{
	for (uint32_t m = c; m != RDS_SCC_NONE; m = g->v[m].next)
		g->v[m].comp = r;
	g->v[g->v[r].last].next = c;
	g->v[r].last = g->v[c].last;
	g->v[r].size += g->v[c].size;
}

int rds_scc_add_edge(struct rds_scc *g, uint32_t u, uint32_t v)
{
	uint64_t *fwd = g->fwd, *bwd = g->bwd;
	uint32_t cu, cv, lb, ub, nf, nb, np = 0, i = 0, rep = RDS_SCC_NONE, nfs = 0;
	bool cycle;

	if (adj_reserve(&g->v[u].out) || adj_reserve(&g->v[v].in))
		return -ENOMEM;
	g->v[u].out.v[g->v[u].out.n++] = v;
	g->v[v].in.v[g->v[v].in.n++] = u;
	cu = g->v[u].comp;
	cv = g->v[v].comp;
	if (cu == cv) {
		/* Two members of one component: cyclic already, unless this is a lone self-loop. */
		if (g->v[cu].cyclic)
			return 0;
		g->v[cu].cyclic = true;
		return 1;
	}
	ub = g->v[cu].ord;
	lb = g->v[cv].ord;
	if (lb > ub)
		return 0;   /* the order holds */

	if (++g->epoch == 0) {   /* wrapped: forget every old mark */
		for (uint32_t k = 0; k < g->n; k++)
			g->v[k].fmark = g->v[k].bmark = 0;
		g->epoch = 1;
	}
	nf = search(g, cv, ub, true, fwd);
	cycle = g->v[cu].fmark == g->epoch;
	nb = search(g, cu, lb, false, bwd);
	qsort(fwd, nf, sizeof(*fwd), by_value);
	qsort(bwd, nb, sizeof(*bwd), by_value);

	/* The pooled order numbers of F u B (S, in both, once) and S's representative: the largest
	 * component (ties: the lowest index), so that relabelling moves the fewest nodes. */
	for (uint32_t k = 0; k < nf; k++) {
		uint32_t c = (uint32_t)fwd[k];

		g->pool[np++] = (uint32_t)(fwd[k] >> 32);
		if (g->v[c].bmark != g->epoch) {
			nfs++;
			continue;
		}
		if (rep == RDS_SCC_NONE || g->v[c].size > g->v[rep].size ||
		    (g->v[c].size == g->v[rep].size && c < rep))
			rep = c;
	}
	for (uint32_t k = 0; k < nb; k++)
		if (g->v[(uint32_t)bwd[k]].fmark != g->epoch)
			g->pool[np++] = (uint32_t)(bwd[k] >> 32);
	qsort(g->pool, np, sizeof(*g->pool), by_u32);

	/* B - S take the lowest numbers, S the next, F - S the highest. */
	for (uint32_t k = 0; k < nb; k++) {
		uint32_t c = (uint32_t)bwd[k];

		if (g->v[c].fmark != g->epoch)
			g->v[c].ord = g->pool[i++];
	}
	if (cycle) {
		for (uint32_t k = 0; k < nf; k++) {
			uint32_t c = (uint32_t)fwd[k];

			if (c != rep && g->v[c].bmark == g->epoch) {
				absorb(g, rep, c);
				g->merges++;
			}
		}
		g->v[rep].ord = g->pool[i];
		g->v[rep].cyclic = true;
	}
	i = np - nfs;
	for (uint32_t k = 0; k < nf; k++) {
		uint32_t c = (uint32_t)fwd[k];

		if (g->v[c].bmark != g->epoch)
			g->v[c].ord = g->pool[i++];
	}
	return cycle;
}

bool rds_scc_valid(const struct rds_scc *g)
{
	uint32_t *seen = calloc(g->n ? g->n : 1, sizeof(*seen));
	bool ok = seen != NULL;

	for (uint32_t r = 0; ok && r < g->n; r++) {
		uint32_t size = 0;
		bool self = false;

		if (g->v[r].comp != r)
			continue;
		for (uint32_t m = r; ok && m != RDS_SCC_NONE; m = g->v[m].next) {
			ok = g->v[m].comp == r && !seen[m]++ && ++size <= g->n;
			for (uint32_t i = 0; ok && i < g->v[m].out.n; i++)
				self |= g->v[m].out.v[i] == m;
		}
		ok = ok && size == g->v[r].size && g->v[r].cyclic == (size > 1 || self);
		for (uint32_t s = r + 1; ok && s < g->n; s++)
			ok = g->v[s].comp != s || g->v[s].ord != g->v[r].ord;
	}
	for (uint32_t m = 0; ok && m < g->n; m++) {
		ok = seen[m] == 1;
		for (uint32_t i = 0; ok && i < g->v[m].out.n; i++) {
			uint32_t a = g->v[m].comp, b = g->v[g->v[m].out.v[i]].comp;

			ok = a == b || g->v[a].ord < g->v[b].ord;
		}
	}
	free(seen);
	return ok;
}
