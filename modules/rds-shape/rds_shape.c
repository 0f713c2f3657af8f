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
 * change (Figure 3).  The other files, by topic, are listed in rds.h.
 *
 * Instances are a union-find over objects with deletion: each object points straight at its
 * instance, and a union relabels the smaller instance's live members (weighted quick-find), so a
 * find is one load and an object's free unlinks it in O(1).  An instance whose last member dies is
 * final (no edge can reach it): it is folded into its site's totals and kept as a row only if it
 * is among the ROWS most traversed, so memory follows the live objects.
 *
 * One worker (shard: none): the SSG and the union-find are global.  Threads: every thread's
 * events, into that one state (README "Threads: what order it needs").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "module.h"
#include "rds.h"

/* ---- Instances: a union-find over objects with deletion -------------------------------------- */

/* An alteration point of I: an edge added to it or removed from it. */
static void alter(struct rds *r, struct inst *I)
{
	close_interval(r, I);
	I->alterations++;
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
		rds_top_push(r, I, J->top[k]);
	I->top_cut |= J->top_cut;
	if (J->last_trav > I->last_trav) {
		I->last_thread = J->last_thread;
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

/* ---- The profile builder's events ------------------------------------------------------------ */

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

/* Counts a store between objects of nodes u and v (add: its field, direction) on the SSG edge
 * u -> v, adding it if new. */
static int ssg_edge(struct rds *r, uint32_t u, uint32_t v, const struct ssg_edge *add)
{
	uint64_t key = mn_map_key(u, v);
	struct edge_memo *m;
	uint32_t e;
	int changed;

	if (key == r->hot_key && r->hot_edge) {   /* a loop of stores repeats one edge */
		rds_edge_fold(&r->edges[r->hot_edge - 1], add);
		return 0;
	}
	m = &r->memo[mn_hash64(key) & (EDGE_MEMO - 1)];
	e = m->key == key ? m->e : 0;
	if (e || (e = rds_edge_index(r, key))) {
		rds_edge_fold(&r->edges[e - 1], add);
		*m = (struct edge_memo){ key, e };
		r->hot_key = key;
		r->hot_edge = e;
		return 0;
	}
	changed = rds_ssg_new_edge(r, u, v, add);
	if (changed < 0)
		return changed;
	if (changed)   /* Figure 3: revisit the remembered edges */
		rds_pending_take(&r->pend, &r->obj, take_pending, r);
	return 0;
}

/* edge_add: the pointer field at offset off of object s now points into object d. */
static void edge_add(struct rds *r, uint32_t s, uint64_t off, uint32_t d)
{
	const struct mn_obj *x = mn_obj(&r->obj, s), *y = mn_obj(&r->obj, d);
	uint32_t u = x->group, v = y->group;
	/* Directions by serials, as join() counts an instance's: the same in every address layout */
	struct ssg_edge add = { .stores = 1, .fwd = x->serial < y->serial,
				.bwd = x->serial > y->serial };

	r->pointer_stores++;
	if (off < 8 * FIELDS && !(off & 7))
		add.fields = UINT64_C(1) << (off >> 3);
	r->sites[u].ptr_fields |= add.fields;
	if (ssg_edge(r, u, v, &add)) {
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
	if (I->trav && I->last_thread == r->thread) {   /* a pattern is one thread's */
		if (s == I->last_dst)
			I->dfs++;   /* continues from where the last one arrived */
		else if (s == I->last_src)
			I->bfs++;   /* leaves from where the last one left */
	}
	I->trav++;
	I->cur++;
	I->last_src = s;
	I->last_dst = d;
	I->last_thread = r->thread;
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
	w = rds_row_of(r, I);
	rds_row_keep(r, &w);
	free(I->top);
	I->id = 0;
	I->head = r->free_inst;
	r->free_inst = i;
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
	uint32_t n = rds_node_of(r, site), s;

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

/* An allocation's SSG node is its site with its callers (allocctx.h, MNEMO_ALLOC_DEPTH). */
static void rds_heap_alloc_context(void *st, uint32_t site, uint64_t context, uint64_t addr,
				   uint64_t size)
{
	rds_heap_alloc(st, mn_allocctx_key(&((struct rds *)st)->actx, site, context), addr, size);
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

/* Every thread's events come, each thread's in its order (README "Threads"): the graph, the
 * objects and the instances are the program's, one for all threads; only a traversal pattern
 * is one thread's. */
static void rds_thread(void *st, uint32_t thread) { ((struct rds *)st)->thread = thread; }

static int rds_init(void *st, const struct mn_run *run)
{
	struct rds *r = st;
	int err;

	rds_scc_init(&r->ssg);
	mn_allocctx_init(&r->actx, mn_run_site_count(run));
	r->threshold = T_PERCENT / 100.0;
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
	mn_allocctx_fini(&r->actx);
	free(r->inst_of);
	free(r->links);
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
	.thread = rds_thread,
	.init = rds_init,
	.fini = rds_fini,
	.load = rds_load,
	.store = rds_store,
	.heap_alloc = rds_heap_alloc,
	.heap_alloc_context = rds_heap_alloc_context,
	.heap_realloc = rds_heap_realloc,
	.heap_free = rds_heap_free,
	.merge = rds_merge,
	.shadow = rds_shadow,
	.emit = rds_emit,
	.restore = rds_restore,
	.schema = &rds_section,
	.settings = rds_settings,
};
