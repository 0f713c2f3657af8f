/*
 * rds-shape: recursive data structure profiling (Raman and August, MSP 2005).  The heap objects a
 * program links by pointers form the unified shape graph (USG); their allocation sites, linked
 * whenever two of their objects are, the static shape graph (SSG).  An RDS type is a strongly
 * connected component of the SSG; an RDS instance, a connected component of the USG restricted to
 * the objects of one type.  Per instance this module counts nodes, edges (forward and backward),
 * traversals and their pattern, its lifetime and its stability factor; per type, the totals and
 * averages of the paper's Table 3.  Schema and definitions: README.md.
 *
 * The paper's OID manager is the object table, backend/objects.h (address -> object through
 * shadow memory); its profile builder is this file: edge_add() on a store whose address and value
 * lie in live objects, traverse() on such a load, node_delete() on a free.  The SSG's SCCs are
 * kept online (scc.c, Pearce and Kelly); an edge whose sites are in one SCC joins its objects'
 * instances at once, any other waits in the pending table (tables.c) and is taken when the SCCs
 * change (Figure 3).
 *
 * Instances are a union-find over objects with deletion: each object points straight at its
 * instance, and a union relabels the smaller instance's live members (weighted quick-find), so a
 * find is one load and an object's free unlinks it in O(1).  An instance whose last member dies is
 * final (no edge can reach it): it is folded into its site's totals and kept as a row only if it
 * is among the ROWS most traversed, so memory follows the live objects.
 *
 * One worker (shard: none): the SSG and the union-find are global.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "map.h"
#include "module.h"
#include "objects.h"
#include "scc.h"
#include "tables.h"

#define T_PERCENT     99      /* the stability factor's threshold t, in percent */
#define TOP_INTERVALS 64      /* interval counts kept per instance for the stability factor */
#define ROWS          1000    /* instances listed in the profile: the most traversed */
#define FIELDS        64      /* pointer fields remembered per site: offsets 0, 8, ..., 504 */

/* Totals over instances: one type's, or those counted at one site. */
struct agg {
	uint64_t instances, nodes, edges, fwd, bwd, self, trav, dfs, bfs;
	uint64_t lifetime;              /* sum of destroyed - created, in events */
	uint64_t span;                  /* sum of the clocks of their runs at the end: lifetime's
					 * denominator, so that runs of other lengths merge */
	uint64_t rsf_sum, rsf_n, rsf_max;   /* stability factors of the traversed instances */
};

/* An allocation site: a node of the static shape graph. */
struct asite {
	uint32_t site;                  /* its site id; 0: allocations no instrumented call made */
	uint64_t ptr_fields;            /* bit k: a pointer was stored at offset 8k of an object */
	struct agg ended;               /* instances that ended (died, or the run did), by site */
};

/* One SSG edge: some object of site u pointed into some object of site v. */
struct ssg_edge {
	uint32_t u, v;
	uint64_t stores;                /* edge_add events between their objects */
};

/* An RDS instance (live: it has live members).  What every traversal touches comes first, in the
 * record's first cache line. */
struct inst {
	uint64_t trav, dfs, bfs;        /* traversals; successive ones sharing a node, a source */
	uint64_t cur;                   /* traversals since the last alteration point */
	uint64_t last_trav;             /* clock at its last traversal; 0: none */
	uint32_t last_src, last_dst;    /* slots of its last traversal's ends; 0: none */
	uint32_t head;                  /* first live member (slot); 0: none */
	uint32_t node;                  /* a member's site (SSG node): its type, at emit */
	uint64_t id;                    /* the serial of its oldest member: its name */
	uint64_t created;               /* clock at its oldest member's allocation */
	uint64_t last_edge;             /* clock at its last edge; 0: none */
	uint64_t nodes, live;           /* members ever, alive */
	uint64_t edges, fwd, bwd, self; /* edge_add events inside it, by the ends' ages */
	uint64_t alterations;           /* alteration points (section 5) */
	uint64_t *top;                  /* traversals of past intervals, the largest, ntop */
	uint32_t ntop, captop;
	bool top_cut;                   /* intervals were dropped from top[] */
} __attribute__((aligned(64)));

/* An instance as listed: final, or as it stands at the end of the run. */
struct row {
	uint64_t id, created, destroyed, nodes, live, edges, fwd, bwd, self, trav, dfs, bfs;
	uint64_t alterations, rsf;
	uint64_t clock;                 /* its run's clock at the end (0 until settle()) */
	uint32_t node;                  /* an SSG node of its type */
	uint32_t type;                  /* its type's number, set by emit() for the order */
	bool capped;                    /* rsf is a lower bound (top[] was cut) */
};

/* An object's neighbours in its instance's list of live members (slots, 0: none). */
struct link {
	uint32_t prev, next;
};

struct rds {
	struct mn_objects obj;          /* heap objects only, so looked up by granule, touching no
					 * record; group: SSG node; serial: from 1, in order */
	uint32_t *inst_of;              /* by slot: its instance, 0: none.  Apart from obj and
					 * links so that a traversal's two lookups touch 4 dense
					 * bytes, not two records */
	struct link *links;             /* by slot */
	uint32_t nslots;                /* inst_of[] and links[] allocated */
	uint64_t serial;                /* the last serial handed out: objects made */
	struct rds_scc ssg;
	struct asite *sites;            /* by SSG node */
	uint32_t *node_of;              /* by site id: SSG node + 1; 0: none yet */
	uint32_t nnode_of;
	struct mn_map *edge_of;         /* (u << 32 | v) -> SSG edge index + 1, MN_MAP_CONST: each
					 * key is inserted once, with the index it gets */
	uint64_t hot_key;               /* the last edge looked up, and its index + 1 (0: none) */
	uint32_t hot_edge;
	struct ssg_edge *edges;
	uint32_t nedges, capedges;
	struct rds_pending pend;
	struct inst *inst;              /* by index; [0] unused; free ones have id 0 */
	uint32_t ninst, capinst, free_inst;
	struct row *rows;               /* final instances kept for the listing */
	size_t nrows, caprows;
	uint64_t now;                   /* the clock: loads, stores and heap events so far; in a
					 * merged state, the runs' clocks added */
	uint64_t pointer_stores, pointer_loads;
	uint64_t unknown_frees, nomem;
	/*
	 * The end of the run (settle()): live instances are rows and counted in their sites'
	 * totals, and what emit() writes from the object and pending tables is copied here, so
	 * that restore() can set it and merge() combine it.  No event may follow.
	 */
	bool settled;
	uint64_t peak_live, live_at_end, aliased, pending, pending_dropped;
};

/* ---- Instances ------------------------------------------------------------------------------- */

static int by_count_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x > y ? -1 : x < y;
}

/* Remembers an interval's traversal count c > 0, keeping the TOP_INTERVALS largest. */
static void top_push(struct rds *r, struct inst *I, uint64_t c)
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

/* Ends the current interval of I. */
static void close_interval(struct rds *r, struct inst *I)
{
	if (I->cur)
		top_push(r, I, I->cur);
	I->cur = 0;
}

/* An alteration point of I: an edge added to it or removed from it. */
static void alter(struct rds *r, struct inst *I)
{
	close_interval(r, I);
	I->alterations++;
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

/* A new instance of object s alone (which has none); returns it, or 0 without memory. */
static uint32_t inst_new(struct rds *r, uint32_t s)
{
	struct mn_obj *x = mn_obj(&r->obj, s);
	struct inst *I;
	uint32_t i = r->free_inst;

	if (i) {
		r->free_inst = r->inst[i].head;
	} else {
		if (r->ninst + 1 >= r->capinst) {
			uint32_t cap = r->capinst ? 2 * r->capinst : 256;
			void *v;

			/* Cache-line aligned, so not realloc(). */
			if (cap < r->capinst ||
			    posix_memalign(&v, 64, (size_t)cap * sizeof(*r->inst)))
				return 0;
			if (r->inst)
				memcpy(v, r->inst, (size_t)r->capinst * sizeof(*r->inst));
			free(r->inst);
			r->inst = v;
			r->capinst = cap;
		}
		i = ++r->ninst;
	}
	I = &r->inst[i];
	memset(I, 0, sizeof(*I));
	I->id = x->serial;
	I->created = x->born;
	I->nodes = I->live = 1;
	I->head = s;
	I->node = x->group;
	r->inst_of[s] = i;
	r->links[s] = (struct link){ 0, 0 };
	return i;
}

/* Object s (in no instance) joins instance i. */
static void inst_add(struct rds *r, uint32_t i, uint32_t s)
{
	struct mn_obj *x = mn_obj(&r->obj, s);
	struct inst *I = &r->inst[i];

	r->inst_of[s] = i;
	r->links[s] = (struct link){ .prev = 0, .next = I->head };
	if (I->head)
		r->links[I->head].prev = s;
	I->head = s;
	I->nodes++;
	I->live++;
	I->id = x->serial < I->id ? x->serial : I->id;
	I->created = x->born < I->created ? x->born : I->created;
}

/* Unites instances a and b (distinct): the smaller's live members move.  Returns the union's. */
static uint32_t inst_merge(struct rds *r, uint32_t a, uint32_t b)
{
	struct inst *I, *J;
	uint32_t tail = 0;

	if (r->inst[a].live < r->inst[b].live) {
		uint32_t t = a;

		a = b;
		b = t;
	}
	I = &r->inst[a];
	J = &r->inst[b];
	for (uint32_t m = J->head; m; m = r->links[m].next) {
		r->inst_of[m] = a;
		tail = m;
	}
	if (tail) {
		r->links[tail].next = I->head;
		if (I->head)
			r->links[I->head].prev = tail;
		I->head = J->head;
	}
	close_interval(r, I);
	close_interval(r, J);
	for (uint32_t k = 0; k < J->ntop; k++)
		top_push(r, I, J->top[k]);
	I->top_cut |= J->top_cut;
	if (J->last_trav > I->last_trav) {
		I->last_trav = J->last_trav;
		I->last_src = J->last_src;
		I->last_dst = J->last_dst;
	}
	I->id = J->id < I->id ? J->id : I->id;
	I->created = J->created < I->created ? J->created : I->created;
	I->last_edge = J->last_edge > I->last_edge ? J->last_edge : I->last_edge;
	I->nodes += J->nodes;
	I->live += J->live;
	I->edges += J->edges;
	I->fwd += J->fwd;
	I->bwd += J->bwd;
	I->self += J->self;
	I->trav += J->trav;
	I->dfs += J->dfs;
	I->bfs += J->bfs;
	I->alterations += J->alterations + 1;
	free(J->top);
	J->id = 0;
	J->head = r->free_inst;
	r->free_inst = b;
	return a;
}

/* The row of instance I now; ends its current interval. */
static struct row row_of(struct rds *r, struct inst *I)
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

static void agg_sum(struct agg *a, const struct agg *b)
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
static int by_listing(const void *a, const void *b)
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
static size_t listed(const struct rds *r)
{
	size_t n = ROWS;

	if (r->nrows <= ROWS)
		return r->nrows;
	while (n < r->nrows && !by_traversals(&r->rows[n], &r->rows[ROWS - 1]))
		n++;
	return n;
}

/* Keeps only the rows that may be listed. */
static void rows_trim(struct rds *r)
{
	if (r->nrows)   /* rows is NULL before the first, and qsort's base must not be */
		qsort(r->rows, r->nrows, sizeof(*r->rows), by_traversals);
	r->nrows = listed(r);
}

/* Appends row w; false without memory (not kept). */
static bool rows_append(struct rds *r, const struct row *w)
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
static void rows_push(struct rds *r, const struct row *w)
{
	if (!rows_append(r, w)) {
		r->nomem++;
		return;
	}
	if (r->nrows >= 2 * ROWS && r->nrows % ROWS == 0)
		rows_trim(r);
}

/* Counts row w in its site's totals and keeps it for the listing if it may be among the first. */
static void row_keep(struct rds *r, const struct row *w)
{
	agg_add(&r->sites[w->node].ended, w);
	rows_push(r, w);
}

/* ---- The profile builder's events ---------------------------------------------------------- */

/* Objects s and d, whose sites share an SCC, are linked by `stores` pointer stores s -> d. */
static void join(struct rds *r, uint32_t s, uint32_t d, uint64_t stores)
{
	struct mn_obj *x = mn_obj(&r->obj, s), *y = mn_obj(&r->obj, d);
	uint32_t a = r->inst_of[s], b = r->inst_of[d];
	struct inst *I;

	if (!a && !b && !(a = inst_new(r, s))) {
		r->nomem++;
		return;
	}
	if (!a) {
		a = b;
		inst_add(r, a, s);
		alter(r, &r->inst[a]);
	} else if (!b) {
		if (!r->inst_of[d])   /* not d == s, just made */
			inst_add(r, a, d);
		alter(r, &r->inst[a]);
	} else if (a != b) {
		a = inst_merge(r, a, b);   /* an alteration point of the union */
	} else {
		alter(r, &r->inst[a]);
	}
	I = &r->inst[a];
	I->edges += stores;
	if (x->serial < y->serial)
		I->fwd += stores;   /* the source is older: built top-down */
	else if (x->serial > y->serial)
		I->bwd += stores;   /* younger: bottom-up */
	else
		I->self += stores;
	I->last_edge = r->now;
}

/* rds_pending_take()'s callback: joins a pending edge whose sites now share an SCC. */
static bool take_pending(void *arg, const struct rds_pend *e)
{
	struct rds *r = arg;
	uint32_t u = mn_obj(&r->obj, e->src)->group, v = mn_obj(&r->obj, e->dst)->group;

	if (rds_scc_comp(&r->ssg, u) != rds_scc_comp(&r->ssg, v))
		return false;
	join(r, e->src, e->dst, e->stores);
	return true;
}

/* The index + 1 of the SSG edge under key (u << 32 | v), or 0 when there is none. */
static uint32_t edge_index(struct rds *r, uint64_t key)
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
 * Adds the SSG edge u -> v (not there yet) with `stores` stores.  Returns 1 when the components
 * changed, 0 when not, -ENOMEM.
 */
static int ssg_new_edge(struct rds *r, uint32_t u, uint32_t v, uint64_t stores)
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
	r->edges[r->nedges++] = (struct ssg_edge){ u, v, stores };
	return changed;
}

/* Counts a store between objects of nodes u and v on the SSG edge u -> v, adding it if new. */
static int ssg_edge(struct rds *r, uint32_t u, uint32_t v)
{
	uint64_t key = mn_map_key(u, v);
	uint32_t e = key == r->hot_key ? r->hot_edge : 0;
	int changed;

	if (e || (e = edge_index(r, key))) {
		r->edges[e - 1].stores++;
		r->hot_key = key;
		r->hot_edge = e;
		return 0;
	}
	changed = ssg_new_edge(r, u, v, 1);
	if (changed < 0)
		return changed;
	if (changed)   /* Figure 3: revisit the remembered edges */
		rds_pending_take(&r->pend, &r->obj, take_pending, r);
	return 0;
}

/* edge_add: the pointer field at offset off of object s now points into object d. */
static void edge_add(struct rds *r, uint32_t s, uint64_t off, uint32_t d)
{
	uint32_t u = mn_obj(&r->obj, s)->group, v = mn_obj(&r->obj, d)->group;

	r->pointer_stores++;
	if (off < 8 * FIELDS && !(off & 7))
		r->sites[u].ptr_fields |= UINT64_C(1) << (off >> 3);
	if (ssg_edge(r, u, v)) {
		r->nomem++;
		return;
	}
	if (rds_scc_comp(&r->ssg, u) == rds_scc_comp(&r->ssg, v))
		join(r, s, d, 1);   /* the edge exists, so one component is an SCC (u == v too) */
	else if (rds_pending_put(&r->pend, &r->obj, s, off, d))
		r->nomem++;
}

/* A null stored at address a: an edge removed if a is a pointer field of an instance's node. */
static void edge_remove(struct rds *r, uint64_t a)
{
	uint32_t s = mn_objects_find_granule(&r->obj, a), i;
	uint64_t off;

	if (!s || !(i = r->inst_of[s]))
		return;
	off = a - mn_obj(&r->obj, s)->addr;
	if (off < 8 * FIELDS && !(off & 7) &&
	    (r->sites[mn_obj(&r->obj, s)->group].ptr_fields >> (off >> 3) & 1))
		alter(r, &r->inst[i]);
}

/*
 * edge_traverse: a load of a pointer into object d (in an instance) from object s (0: none).
 * Successive traversals are compared by slot: a slot freed is forgotten as an end
 * (node_delete()), so equal slots are the same object.
 */
static void traverse(struct rds *r, uint32_t s, uint32_t d)
{
	uint32_t i = s ? r->inst_of[s] : 0;
	struct inst *I;

	if (!i || i != r->inst_of[d])
		return;
	I = &r->inst[i];
	if (I->trav) {
		if (s == I->last_dst)
			I->dfs++;   /* continues from where the last one arrived */
		else if (s == I->last_src)
			I->bfs++;   /* leaves from where the last one left */
	}
	I->trav++;
	I->cur++;
	I->last_src = s;
	I->last_dst = d;
	I->last_trav = r->now;
}

/*
 * node_delete: object s dies; an instance whose last member it was is final.  Not an alteration
 * point: the links between the live nodes are unchanged (unlinking a node from the middle of a
 * structure is a store, which is one), and a structure freed node by node at the end of its life
 * would otherwise end with one interval per node.
 */
static void node_delete(struct rds *r, uint32_t s)
{
	const struct link *l = &r->links[s];
	uint32_t i = r->inst_of[s];
	struct inst *I;
	struct row w;

	if (!i)
		return;
	I = &r->inst[i];
	if (I->last_src == s)
		I->last_src = 0;
	if (I->last_dst == s)
		I->last_dst = 0;
	if (l->prev)
		r->links[l->prev].next = l->next;
	else
		I->head = l->next;
	if (l->next)
		r->links[l->next].prev = l->prev;
	if (--I->live)
		return;
	w = row_of(r, I);
	row_keep(r, &w);
	free(I->top);
	I->id = 0;
	I->head = r->free_inst;
	r->free_inst = i;
}

/* The SSG node of site id, added on first sight; UINT32_MAX without memory. */
static uint32_t node_of(struct rds *r, uint32_t site)
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

/* ---- Handlers -------------------------------------------------------------------------------- */

static void rds_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	struct rds *r = st;
	uint32_t d;

	r->now++;
	if (size != 8 || !(d = mn_objects_find_granule(&r->obj, value)))
		return;
	r->pointer_loads++;
	/* A traversal needs both ends in one instance: look the address up only then. */
	if (r->inst_of[d])
		traverse(r, mn_objects_find_granule(&r->obj, addr), d);
}

static void rds_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	struct rds *r = st;
	uint32_t s, d;

	r->now++;
	if (size != 8)
		return;
	if (!value)
		edge_remove(r, addr);
	else if ((d = mn_objects_find_granule(&r->obj, value)) &&
		 (s = mn_objects_find_granule(&r->obj, addr)))
		edge_add(r, s, addr - mn_obj(&r->obj, s)->addr, d);
}

/* Object s is gone: its instance loses it, its slot is free. */
static void object_end(struct rds *r, uint32_t s)
{
	node_delete(r, s);
	mn_objects_release(&r->obj, s);
}

/*
 * Makes room in inst_of[] and links[] for any slot the next mn_objects_alloc() can return (n + 1
 * at most); false without memory, with nothing lost.
 */
static bool slots_reserve(struct rds *r)
{
	uint32_t need = r->obj.n + 2, cap = r->nslots ? r->nslots : 4096;
	uint32_t *inst_of;
	struct link *links;

	if (need <= r->nslots)
		return true;
	while (cap < need) {
		if (cap > UINT32_MAX / 2)
			return false;
		cap *= 2;
	}
	inst_of = realloc(r->inst_of, (size_t)cap * sizeof(*inst_of));
	if (!inst_of)
		return false;
	r->inst_of = inst_of;
	links = realloc(r->links, (size_t)cap * sizeof(*links));
	if (!links)
		return false;
	r->links = links;
	r->inst_of[0] = 0;   /* slot 0, "none", is in no instance */
	r->nslots = cap;
	return true;
}

static void rds_heap_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	struct rds *r = st;
	uint32_t n = node_of(r, site), s;

	r->now++;
	if ((s = mn_objects_find_granule(&r->obj, addr)))
		object_end(r, s);   /* a free we never saw */
	if (n == UINT32_MAX || !slots_reserve(r) ||
	    !(s = mn_objects_alloc(&r->obj, &(struct mn_obj){ .addr = addr, .size = size,
			.group = n, .serial = r->serial + 1, .born = r->now }))) {
		r->nomem++;
		return;
	}
	r->serial++;
	r->inst_of[s] = 0;
	r->links[s] = (struct link){ 0, 0 };
}

/* realloc keeps the object: its serial, site and instance (4.1); only its place changes. */
static void rds_heap_realloc(void *st, uint32_t site, uint64_t old, uint64_t addr, uint64_t size)
{
	struct rds *r = st;
	uint32_t s = mn_objects_at(&r->obj, old), t;

	if (!s) {
		rds_heap_alloc(st, site, addr, size);   /* an object we never saw: a new one */
		return;
	}
	r->now++;
	if ((t = mn_objects_find_granule(&r->obj, addr)) && t != s)
		object_end(r, t);
	mn_objects_move(&r->obj, s, addr, size);
}

static void rds_heap_free(void *st, uint32_t site, uint64_t addr)
{
	struct rds *r = st;
	uint32_t s = mn_objects_at(&r->obj, addr);

	r->now++;
	if (!s) {
		r->unknown_frees++;
		return;
	}
	object_end(r, s);
}

static int rds_init(void *st, const struct mn_run *run)
{
	struct rds *r = st;
	int err;

	rds_scc_init(&r->ssg);
	/* Unbuffered, on this thread: a new edge is looked up by the next store. */
	err = mn_map_create(&r->edge_of, MN_MAP_CONST, 0, 0, 1);
	return err ? err : mn_objects_init(&r->obj);
}

static void rds_fini(void *st)
{
	struct rds *r = st;

	for (uint32_t i = 1; i <= r->ninst; i++)
		if (r->inst[i].id)
			free(r->inst[i].top);
	free(r->inst);
	free(r->rows);
	free(r->sites);
	free(r->node_of);
	free(r->edges);
	mn_map_destroy(r->edge_of);
	rds_pending_free(&r->pend);
	rds_scc_free(&r->ssg);
	mn_objects_free(&r->obj);
	free(r->inst_of);
	free(r->links);
}

/* ---- The end of a run ------------------------------------------------------------------------ */

/*
 * Ends the run: instances still alive count as they stand (rows, their sites' totals), every row
 * and total learns the run's clock, and the object and pending tables' counts are copied out.
 * Once; emit() and merge() call it, restore() makes a state that is settled already.
 */
static void settle(struct rds *r)
{
	if (r->settled)
		return;
	r->settled = true;
	for (uint32_t i = 1; i <= r->ninst; i++) {
		if (r->inst[i].id) {
			struct row w = row_of(r, &r->inst[i]);

			row_keep(r, &w);
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

/* ---- Types ----------------------------------------------------------------------------------- */

/* A type: one cyclic SCC of the SSG. */
struct type {
	uint32_t comp;                  /* its representative node */
	uint32_t first_site;            /* its smallest site id: the types' order */
	struct agg a;
};

static int by_first_site(const void *a, const void *b)
{
	const struct type *x = a, *y = b;

	return x->first_site < y->first_site ? -1 : x->first_site > y->first_site;
}

/*
 * The types of the SSG as it stands: *types (ntypes of them, by smallest site, their totals the
 * sum of their sites'), and *type_of, by representative node, the type's number (1..) or 0.
 * 0 or -ENOMEM; the caller frees both.
 */
static int find_types(struct rds *r, struct type **types, uint32_t **type_of, uint32_t *ntypes)
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
		if (r->sites[u].site < t[of[c] - 1].first_site)
			t[of[c] - 1].first_site = r->sites[u].site;
	}
	qsort(t, k, sizeof(*t), by_first_site);
	for (uint32_t i = 0; i < k; i++)
		of[t[i].comp] = i + 1;
	for (uint32_t u = 0; u < n; u++)
		if (rds_scc_cyclic(&r->ssg, u))
			agg_sum(&t[of[rds_scc_comp(&r->ssg, u)] - 1].a, &r->sites[u].ended);
	*types = t;
	*type_of = of;
	*ntypes = k;
	return 0;
}

/* ---- Merge ----------------------------------------------------------------------------------- */

/*
 * Folds run (or runs) `from` into `into` (README, Merging): counts add, peaks take the larger,
 * the SSGs unite with their edges' stores added (types follow at emit), each site's totals add,
 * and the rows of both are kept as far as they may be listed.  Instances never join across
 * states: they are sets of one run's objects.
 */
static void rds_merge(void *into, void *from)
{
	struct rds *r = into, *f = from;

	settle(r);
	settle(f);
	r->now += f->now;
	r->serial += f->serial;
	r->pointer_stores += f->pointer_stores;
	r->pointer_loads += f->pointer_loads;
	r->unknown_frees += f->unknown_frees;
	r->nomem += f->nomem;
	r->peak_live = f->peak_live > r->peak_live ? f->peak_live : r->peak_live;
	r->live_at_end += f->live_at_end;
	r->aliased += f->aliased;
	r->pending += f->pending;
	r->pending_dropped += f->pending_dropped;

	for (uint32_t e = 0; e < f->nedges; e++) {
		const struct ssg_edge *x = &f->edges[e];
		uint32_t u = node_of(r, f->sites[x->u].site), i;
		uint32_t v = node_of(r, f->sites[x->v].site);

		if (u == UINT32_MAX || v == UINT32_MAX) {
			r->nomem++;
			continue;
		}
		if ((i = edge_index(r, mn_map_key(u, v))))
			r->edges[i - 1].stores += x->stores;
		else if (ssg_new_edge(r, u, v, x->stores) < 0)
			r->nomem++;
	}
	for (uint32_t n = 0; n < f->ssg.n; n++) {
		uint32_t u;

		if (!f->sites[n].ended.instances)
			continue;
		if ((u = node_of(r, f->sites[n].site)) == UINT32_MAX) {
			r->nomem++;
			continue;
		}
		agg_sum(&r->sites[u].ended, &f->sites[n].ended);
	}
	for (size_t i = 0; i < f->nrows; i++) {
		struct row w = f->rows[i];

		if ((w.node = node_of(r, f->sites[w.node].site)) == UINT32_MAX) {
			r->nomem++;
			continue;
		}
		rows_push(r, &w);
	}
}

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

static int rds_emit(void *st, struct mn_prof *p)
{
	struct rds *r = st;
	uint32_t n, ntypes = 0, *type_of = NULL, *members;
	struct type *types = NULL;
	struct edge_order *order;
	struct agg all = { 0 };
	size_t nlisted;
	int err = 0;

	settle(r);
	n = r->ssg.n;
	members = malloc((n + 1) * sizeof(*members));
	order = malloc((r->nedges + 1) * sizeof(*order));
	if (!members || !order || find_types(r, &types, &type_of, &ntypes)) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t e = 0; e < r->nedges; e++)
		order[e] = (struct edge_order){ (uint64_t)r->sites[r->edges[e].u].site << 32 |
						r->sites[r->edges[e].v].site, e };
	qsort(order, r->nedges, sizeof(*order), by_key);
	for (uint32_t t = 0; t < ntypes; t++)
		agg_sum(&all, &types[t].a);
	for (size_t i = 0; i < r->nrows; i++)
		r->rows[i].type = type_of[rds_scc_comp(&r->ssg, r->rows[i].node)];
	if (r->nrows)
		qsort(r->rows, r->nrows, sizeof(*r->rows), by_listing);
	nlisted = listed(r);

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
		if ((u = node_of(r, src)) == UINT32_MAX || (v = node_of(r, dst)) == UINT32_MAX)
			return -ENOMEM;
		if (edge_index(r, mn_map_key(u, v)))
			return mn_pnode_errorf(prof, m, err, errlen,
					       "static_shape_graph: the edge %u -> %u twice", src,
					       dst);
		if (ssg_new_edge(r, u, v, stores) < 0)
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

	if (find_types(r, &types, &type_of, &ntypes) ||
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
		agg_sum(all, &a);
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
		if (!rows_append(r, &w))
			return -ENOMEM;
	}
	/* The rows emit() would list: all of them. */
	rows_trim(r);
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
static int rds_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
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

static const char *const rds_settings[] = { "threshold", NULL };

/* The object table's shadow, where every load and store looks its address up: the driver
 * prefetches it ahead (mn_module.shadow). */
static struct mn_shadow *rds_shadow(void *st)
{
	return ((struct rds *)st)->obj.sh;
}

const struct mn_module mn_module_rds_shape = {
	.name = "rds-shape",
	.doc = "recursive data structure types and instances (shape, traversals, lifetime, "
	       "stability)",
	.state_size = sizeof(struct rds),
	.shard = MN_SHARD_NONE,
	.pointer_only = true,
	.init = rds_init,
	.fini = rds_fini,
	.load = rds_load,
	.store = rds_store,
	.heap_alloc = rds_heap_alloc,
	.heap_realloc = rds_heap_realloc,
	.heap_free = rds_heap_free,
	.merge = rds_merge,
	.shadow = rds_shadow,
	.emit = rds_emit,
	.restore = rds_restore,
	.settings = rds_settings,
};
