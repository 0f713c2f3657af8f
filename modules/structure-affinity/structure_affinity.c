/*
 * structure-affinity: StructSlim (Roy and Liu, "StructSlim: A Lightweight Profiler to Guide
 * Structure Splitting", CGO 2016) on every access instead of address samples.  Each access goes to
 * its data object (the allocation, alloca or global site of the instance holding it) and to the
 * innermost loop around its instruction in its own function (0 outside every loop): the site
 * table's `loop`, the pass's static loop nest, as the paper takes it from the binary, so that no
 * function or loop event is needed.  The objects' shares of the cost give the hot ones (Eq. 1); per
 * (loop, instruction, data object) stream the gcd of address differences gives a stride
 * (Eq. 2-3), whose gcd over an object's streams is its structure size (Eq. 5; the declared size
 * when it is a multiple of that, as an unrolled loop's strides are), and offsets modulo the size
 * its fields (Eq. 6), named where the site table gives the structure's members (`fields`);
 * fields' costs in common loops give their affinities (Eq. 7) and clusters of them the splitting
 * advice.  The arithmetic is in affinity.c, the cache model of MNEMO_AFFINITY_COST=cache in
 * cache.c.  Loop summaries are taken whole, each walk in closed form where every address of it is
 * found in one instance (sa_loop_summary(); the instances' verified extents in verified.c).
 * Schema and options: README.md; the options are read from sa_options[] at init.
 *
 * One worker (shard: none): a stream crosses instances and loops, and a structure's streams come
 * from every instruction.  The backend runs a module that does not shard as one worker whatever
 * -j asks (backend.c) and never calls its merge.  `mnemo merge` does: restore() rebuilds a state
 * from a profile's section (which carries every data object's and every stream's integers, not
 * only the hot ones') and merge() folds runs of one binary; emit() derives every figure from the
 * merged integers (README "Merging").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "backend.h"
#include "cache.h"
#include "module.h"
#include "objects.h"
#include "sitevec.h"
#include "verified.h"

/*
 * Settings (README "Options"), read from the program's environment at init by
 * mn_module_options() from sa_options[] below, which refuses a value out of range.
 */
enum sa_cost { SA_COST_ACCESSES, SA_COST_CACHE };   /* MNEMO_AFFINITY_COST's choices, in order */

struct options {
	uint64_t top;                /* hot data objects analysed and reported */
	uint64_t l1_bytes, l1_ways, l2_bytes, l2_ways, line;   /* cache geometry */
	uint64_t l1_latency, l2_latency, mem_latency;          /* cycles */
	uint64_t sample;             /* one access in this many is sent (the runtime samples) */
	unsigned cost;               /* enum sa_cost: 1 per access, or the modeled latency */
	double threshold;            /* affinity from which two fields go together */
};

extern const struct mn_module mn_module_structure_affinity;

/* A data object's kind is its instances' (objects.h). */
static const char *const kind_names[] = {
	[MN_OBJ_HEAP] = "heap", [MN_OBJ_STACK] = "stack", [MN_OBJ_GLOBAL] = "global"
};

/* A data object: every instance made at one site. */
struct dobj {
	uint32_t site;
	enum mn_obj_kind kind;
	uint64_t instances, max_bytes;
	uint64_t accesses, cost;
	bool hot;                    /* in emit(): one of the top, written under `structures` */
};

/* A stream as it is being built: where its last access fell, to difference the next one. */
struct stream {
	struct sa_stream s;
	uint32_t dobj;               /* the data object's site */
	struct dobj *d;              /* its record, once an access looked it up; NULL before */
	uint64_t last_serial;        /* the instance of its last access ... */
	uint64_t last_off;           /* ... and its offset there */
};

/* The streams of one instruction, one per (loop, data object). */
struct insn {
	struct stream *v;
	uint32_t n, alloc, last;     /* last: the one used last, the cheap guess */
	uint32_t loop;               /* loop_of() the site, when placed */
	uint32_t last_slot;          /* the object its last access found, a guess for the next */
	bool placed;                 /* loop looked up (by insn_of(), not by merge or restore) */
};

struct affinity {
	struct options opt;
	const struct mn_run *run;
	struct mn_objects objs;
	struct mn_sitevec dobjs;     /* struct dobj by site */
	struct mn_sitevec insns;     /* struct insn by load or store site */
	struct sa_cache cache;       /* with opt.cache */
	struct sa_verified verified; /* extents loop summaries found their objects in */
	uint64_t serial;             /* instances made so far */
	uint64_t accesses, cost, unattributed, unattributed_cost;
	uint64_t nomem, unknown_frees;
	uint64_t aliases;            /* aliased granules of runs restored or merged in (this run's
				      * own are objs.aliases) */
	bool conflict;               /* merge() met another run's different options: emit() fails */
};

/* Whether the cache model prices each access (MNEMO_AFFINITY_COST=cache), else each costs 1. */
static bool priced(const struct affinity *a)
{
	return a->opt.cost == SA_COST_CACHE;
}

/* ---- Data objects and their instances -------------------------------------------------------- */

/*
 * Every change to the object table goes through these three, which first tell the verified
 * extents of loop summaries (verified.h) which granules it may take from another object.
 */
static uint32_t objects_alloc(struct affinity *a, const struct mn_obj *x)
{
	sa_verified_forget(&a->verified, &a->objs, x->addr, x->size);
	return mn_objects_alloc(&a->objs, x);
}

static void objects_move(struct affinity *a, uint32_t s, uint64_t addr, uint64_t size)
{
	const struct mn_obj *x = mn_obj(&a->objs, s);

	sa_verified_forget(&a->verified, &a->objs, x->addr, x->size);
	sa_verified_forget(&a->verified, &a->objs, addr, size);
	mn_objects_move(&a->objs, s, addr, size);
}

static void objects_release(struct affinity *a, uint32_t s)
{
	const struct mn_obj *x = mn_obj(&a->objs, s);

	sa_verified_forget(&a->verified, &a->objs, x->addr, x->size);
	mn_objects_release(&a->objs, s);
}

static void new_instance(struct affinity *a, uint32_t site, uint64_t addr, uint64_t size,
			 enum mn_obj_kind kind)
{
	struct dobj *d = mn_sitevec_get(&a->dobjs, site);

	if (!d || !objects_alloc(a, &(struct mn_obj){ .addr = addr, .size = size, .kind = kind,
						     .group = site, .serial = ++a->serial })) {
		a->nomem++;
		return;
	}
	d->site = site;
	d->kind = kind;
	d->instances++;
	if (size > d->max_bytes)
		d->max_bytes = size;
}

static void end_instance(struct affinity *a, uint64_t addr)
{
	uint32_t s = addr ? mn_objects_at(&a->objs, addr) : 0;

	if (s)
		objects_release(a, s);
	else if (addr)
		a->unknown_frees++;
}

static void sa_heap_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	new_instance(st, site, addr, size, MN_OBJ_HEAP);
}

static void sa_heap_realloc(void *st, uint32_t site, uint64_t old_addr, uint64_t addr,
			    uint64_t size)
{
	struct affinity *a = st;
	uint32_t s = old_addr ? mn_objects_at(&a->objs, old_addr) : 0;

	if (!s) {
		if (old_addr)
			a->unknown_frees++;
		new_instance(a, site, addr, size, MN_OBJ_HEAP);
		return;
	}
	objects_move(a, s, addr, size);
	{
		struct dobj *d = mn_sitevec_find(&a->dobjs, mn_obj(&a->objs, s)->group);

		if (d && size > d->max_bytes)
			d->max_bytes = size;
	}
}

static void sa_heap_free(void *st, uint32_t site, uint64_t addr)
{
	end_instance(st, addr);
}

static void sa_stack_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	new_instance(st, site, addr, size, MN_OBJ_STACK);
}

static void sa_stack_free(void *st, uint32_t site, uint64_t addr)
{
	end_instance(st, addr);
}

static void sa_global(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	new_instance(st, site, addr, size, MN_OBJ_GLOBAL);
}

/* ---- Accesses -------------------------------------------------------------------------------- */

static struct stream *stream_of(struct insn *in, uint32_t loop, uint32_t dobj)
{
	struct stream *s;

	if (in->n && in->v[in->last].s.loop == loop && in->v[in->last].dobj == dobj)
		return &in->v[in->last];
	for (uint32_t i = 0; i < in->n; i++)
		if (in->v[i].s.loop == loop && in->v[i].dobj == dobj) {
			in->last = i;
			return &in->v[i];
		}
	if (in->n == in->alloc) {
		uint32_t n = in->alloc ? 2 * in->alloc : 2;

		s = realloc(in->v, (size_t)n * sizeof(*s));
		if (!s)
			return NULL;
		in->v = s;
		in->alloc = n;
	}
	s = &in->v[in->n];
	*s = (struct stream){ .s = { .loop = loop }, .dobj = dobj };
	in->last = in->n++;
	return s;
}

/*
 * The loop an access of instruction site belongs to: the innermost loop around it in its own
 * function, from the site table; an access in a function called from a loop goes to the callee's
 * loop, or to 0, as in the paper.  0 without a table (a test driving the module by hand).
 */
static uint32_t loop_of(const struct affinity *a, uint32_t site)
{
	const struct mn_run_site *s = mn_run_site(a->run, site);

	return s ? s->loop : 0;
}

/* The streams of instruction site, with its loop, looked up in the site table once. */
static struct insn *insn_of(struct affinity *a, uint32_t site)
{
	struct insn *in = mn_sitevec_get(&a->insns, site);

	if (in && !in->placed) {
		in->loop = loop_of(a, site);
		in->placed = true;
	}
	return in;
}

/*
 * The stream of an access of instruction in to data object group, and the record of that data
 * object, kept in the stream so that the next access finds it without the site vector; NULL
 * without memory.
 */
static struct stream *access_stream(struct affinity *a, struct insn *in, uint32_t group)
{
	struct stream *r = in ? stream_of(in, in->loop, group) : NULL;

	if (r && !r->d)
		r->d = mn_sitevec_find(&a->dobjs, group);
	return r && r->d ? r : NULL;
}

/*
 * Eq. 2-3 online: an access is differenced with its stream's previous one only when both fell in
 * the same instance (serials, not addresses, tell instances apart: a freed address comes back as
 * another instance).  The first access's offset stands for the stream's field: Eq. 6 takes any.
 */
static void on_access(struct affinity *a, uint32_t site, uint64_t addr, uint32_t size)
{
	uint64_t cost = priced(a) ? sa_cache_access(&a->cache, addr, size) : 1, off;
	struct insn *in = insn_of(a, site);
	uint32_t slot = in && in->last_slot && mn_objects_holds(&a->objs, in->last_slot, addr)
				? in->last_slot : mn_objects_find(&a->objs, addr);
	const struct mn_obj *x;
	struct stream *r;
	struct dobj *d;

	a->accesses++;
	a->cost += cost;
	if (!slot) {
		a->unattributed++;
		a->unattributed_cost += cost;
		return;
	}
	x = mn_obj(&a->objs, slot);
	if (in)
		in->last_slot = slot;
	r = access_stream(a, in, x->group);
	if (!r) {
		a->nomem++;
		return;
	}
	d = r->d;
	d->accesses++;
	d->cost += cost;
	off = addr - x->addr;
	r->s.site = site;
	if (!r->s.accesses)
		r->s.offset = off;
	else if (r->last_serial == x->serial)
		sa_stride_add(&r->s.stride, r->last_off, off);
	r->last_serial = x->serial;
	r->last_off = off;
	r->s.accesses++;
	r->s.cost += cost;
	if (size > r->s.bytes)
		r->s.bytes = size;
}

static void sa_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, size);
}

static void sa_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, size);
}

/* ---- Loop summaries -------------------------------------------------------------------------- */

#define ADDR_MASK ((UINT64_C(1) << 48) - 1)   /* addresses are 48 bits on the wire */
#define FEW_SITES 64                          /* summaries this wide look for twins pairwise */

/* Address k of access acc of a summary, as the driver's expansion computes it. */
static uint64_t walk_addr(const struct mn_summary_access *acc, uint64_t k)
{
	return (acc->start + k * (uint64_t)acc->step) & ADDR_MASK;
}

/*
 * Access acc of a summary in closed form, when each of its n addresses is found in one object, or
 * each in none: what n calls of on_access() in iteration order would leave.  Within one instance
 * every difference of the walk is |step|, so the stream's stride takes gcd(stride, |step|) once,
 * after the difference from the stream's previous access (Eq. 2-3: gcd does not care about order);
 * its offset, if new, is the first address's, and its last access the last address.  Returns false,
 * having changed nothing the profile shows, when that does not hold (a walk crossing out of its
 * object or wrapping at 2^48, an address the table finds elsewhere, no memory for the stream);
 * the caller then makes the calls.
 */
static bool walk_closed(struct affinity *a, const struct mn_summary_access *acc, uint64_t n)
{
	const uint64_t first = acc->start & ADDR_MASK;
	const uint64_t span = acc->step < 0 ? -(uint64_t)acc->step : (uint64_t)acc->step;
	uint64_t last = first, lo, hi, off;
	const struct mn_obj *x;
	uint32_t slot;
	struct stream *r;
	struct dobj *d;

	if (n > 1 && span) {
		if (n - 1 > (acc->step < 0 ? first : ADDR_MASK - first) / span)
			return false;
		last = acc->step < 0 ? first - (n - 1) * span : first + (n - 1) * span;
	}
	lo = first < last ? first : last;
	hi = first < last ? last : first;
	slot = mn_objects_find(&a->objs, first);
	if (!slot) {
		/* Below or above every object ever mapped: the lookup's range filter says none. */
		if (a->objs.span && hi >= a->objs.lo &&
		    (lo < a->objs.lo || lo - a->objs.lo < a->objs.span))
			return false;
		a->accesses += n;
		a->cost += n;
		a->unattributed += n;
		a->unattributed_cost += n;
		return true;
	}
	/* One address (step 0, or one iteration) is found where the first one is. */
	if (lo != hi && !sa_verified_walk(&a->verified, &a->objs, slot, first, acc->step, n, lo, hi))
		return false;
	x = mn_obj(&a->objs, slot);
	r = access_stream(a, insn_of(a, acc->site), x->group);
	if (!r)
		return false;   /* each access counts itself lost, or finds memory, on its own */
	d = r->d;
	a->accesses += n;
	a->cost += n;
	d->accesses += n;
	d->cost += n;
	off = first - x->addr;
	r->s.site = acc->site;
	if (!r->s.accesses)
		r->s.offset = off;
	else if (r->last_serial == x->serial)
		sa_stride_add(&r->s.stride, r->last_off, off);
	if (n > 1 && span)
		r->s.stride = sa_gcd(r->s.stride, span);
	r->last_serial = x->serial;
	r->last_off = last - x->addr;
	r->s.accesses += n;
	r->s.cost += n;
	if (acc->size > r->s.bytes)
		r->s.bytes = acc->size;
	return true;
}

static int by_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/*
 * Marks in twin[] the accesses whose site another access of the summary has too: they may share a
 * stream, whose last address then alternates between them, so they run interleaved.  Without
 * memory to sort a wide summary, every access is marked.
 */
static void find_twins(const struct mn_summary_access *acc, unsigned n, bool *twin)
{
	uint64_t *v;

	memset(twin, 0, n * sizeof(*twin));
	if (n <= FEW_SITES) {
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = i + 1; j < n; j++)
				if (acc[i].site == acc[j].site)
					twin[i] = twin[j] = true;
		return;
	}
	v = malloc(n * sizeof(*v));
	if (!v) {
		memset(twin, 1, n * sizeof(*twin));
		return;
	}
	for (unsigned i = 0; i < n; i++)
		v[i] = (uint64_t)acc[i].site << 32 | i;
	qsort(v, n, sizeof(*v), by_u64);
	for (unsigned i = 1; i < n; i++)
		if (v[i] >> 32 == v[i - 1] >> 32)
			twin[(uint32_t)v[i]] = twin[(uint32_t)v[i - 1]] = true;
	free(v);
}

/*
 * The accesses of a summary marked in only[] (every one when only is NULL) through on_access(), in
 * the expansion's order: iteration by iteration, in push order within one.
 */
static void walk_each(struct affinity *a, const struct mn_summary_access *acc, unsigned n,
		      uint64_t iterations, const bool *only)
{
	for (uint64_t k = 0; k < iterations; k++)
		for (unsigned j = 0; j < n; j++)
			if (!only || only[j])
				on_access(a, acc[j].site, walk_addr(&acc[j], k), acc[j].size);
}

/*
 * A summarized loop (module.h): exactly the state the driver's expansion would leave (the module
 * has no loop handler: its events are the accesses alone).  The cache model (cost: cache) prices
 * each access by the lines every earlier one left, so with it every access runs in expansion
 * order.  Otherwise streams are per instruction: accesses of distinct sites touch disjoint streams
 * and sums that do not care about order, so each runs on its own, in closed form where
 * walk_closed() can, else access by access; accesses sharing a site run interleaved, as the
 * expansion has them.  O(accesses) for affine walks each inside one object once the objects'
 * extents are verified (verified.h).
 */
static void sa_loop_summary(void *st, uint32_t loop, uint64_t iterations,
			    const struct mn_summary_access *acc, unsigned n)
{
	struct affinity *a = st;
	bool few[FEW_SITES], *twin = few;
	unsigned ntwins = 0;

	if (!n || !iterations)
		return;
	if (!priced(a) && n > FEW_SITES)
		twin = malloc(n * sizeof(*twin));
	if (priced(a) || !twin) {
		walk_each(a, acc, n, iterations, NULL);
		return;
	}
	find_twins(acc, n, twin);
	for (unsigned j = 0; j < n; j++) {
		if (twin[j])
			ntwins++;
		else if (!walk_closed(a, &acc[j], iterations))
			walk_each(a, &acc[j], 1, iterations, NULL);
	}
	if (ntwins)
		walk_each(a, acc, n, iterations, twin);
	if (twin != few)
		free(twin);
}

/* ---- Setup ----------------------------------------------------------------------------------- */

static void sa_fini(void *st)
{
	struct affinity *a = st;
	struct insn *in;

	MN_SITEVEC_FOREACH(&a->insns, id, in)
		free(in->v);
	mn_sitevec_free(&a->insns);
	mn_sitevec_free(&a->dobjs);
	sa_cache_free(&a->cache);
	sa_verified_free(&a->verified);
	mn_objects_free(&a->objs);
	memset(a, 0, sizeof(*a));
}

static int sa_init(void *st, const struct mn_run *run)
{
	struct affinity *a = st;
	uint32_t nsites = mn_run_site_count(run);
	int err;

	memset(a, 0, sizeof(*a));
	a->run = run;
	err = mn_module_options(&mn_module_structure_affinity, a);
	if (err)
		return err;
	if (priced(a)) {
		struct sa_cache_config c = {
			.bytes = { a->opt.l1_bytes, a->opt.l2_bytes },
			.ways = { (uint32_t)a->opt.l1_ways, (uint32_t)a->opt.l2_ways },
			.line = (uint32_t)a->opt.line,
			.latency = { (uint32_t)a->opt.l1_latency, (uint32_t)a->opt.l2_latency,
				     (uint32_t)a->opt.mem_latency },
		};

		err = sa_cache_init(&a->cache, &c);
		if (err == -EINVAL)
			fprintf(stderr, "mnemo: structure-affinity: cache geometry: line %" PRIu64
				", L1 %" PRIu64 " bytes %" PRIu64 "-way, L2 %" PRIu64 " bytes %"
				PRIu64 "-way: the line must be a power of two and each size a "
				"multiple of line * ways\n", a->opt.line, a->opt.l1_bytes,
				a->opt.l1_ways, a->opt.l2_bytes, a->opt.l2_ways);
		if (err)
			return err;
	}
	err = mn_objects_init(&a->objs);
	if (!err && (mn_sitevec_init(&a->dobjs, sizeof(struct dobj), nsites) ||
		     mn_sitevec_init(&a->insns, sizeof(struct insn), nsites)))
		err = -ENOMEM;
	if (err)
		sa_fini(a);
	return err;
}

/* ---- Emit ------------------------------------------------------------------------------------ */

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/*
 * The type in an allocation site's name "callee:type" (the pass joins them with one colon; either
 * may hold "::"), or NULL.
 */
static const char *type_name(const char *name)
{
	for (const char *c = strchr(name, ':'); c; c = strchr(c + 2, ':')) {
		if (c[1] != ':')
			return c + 1;
	}
	return NULL;
}

/* The structure size the site table declares for data object site, or 0. */
static uint64_t declared_size(const struct affinity *a, uint32_t site)
{
	const struct mn_run_site *s = mn_run_site(a->run, site);

	/*
	 * An allocation whose type the pass recorded ("callee:type", operator new) gives its
	 * type_size.  Otherwise the structure layout from debug info (`fields`, any kind of site)
	 * gives the element type's size; a global's or a stack object's type_size is the whole
	 * variable's, an array of structures included, so it is not a structure size.
	 */
	if (!s)
		return 0;
	if (s->type_size && type_name(s->name) &&
	    (!strcmp(s->kind, "alloc") || !strcmp(s->kind, "realloc")))
		return s->type_size;
	return sa_fields_size(s->fields);
}

static int by_cost(const void *x, const void *y)
{
	const struct dobj *a = *(const struct dobj *const *)x, *b = *(const struct dobj *const *)y;

	if (a->cost != b->cost)
		return a->cost > b->cost ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

static int by_loop_site(const void *x, const void *y)
{
	const struct sa_stream *a = x, *b = y;

	if (a->loop != b->loop)
		return a->loop < b->loop ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

/* Site ids go through mn_prof_site(); loop 0 (outside every loop) is no site. */
static void kv_loop(struct mn_prof *p, uint32_t loop)
{
	if (loop)
		mn_prof_kv_site(p, "loop", loop);
	else
		mn_prof_kv_u64(p, "loop", 0);
}

/* A data object's site: 0 for memory allocated where no site is (the C library's own). */
static void kv_object(struct mn_prof *p, const char *key, uint32_t site)
{
	if (site)
		mn_prof_kv_site(p, key, site);
	else
		mn_prof_kv_u64(p, key, 0);
}

static void kv_size(struct mn_prof *p, const char *key, uint64_t v)
{
	if (v)
		mn_prof_kv_u64(p, key, v);
	else {
		mn_prof_key(p, key);
		mn_prof_null(p);
	}
}

static void emit_size(struct mn_prof *p, const struct sa_layout *l, uint64_t instances)
{
	static const char *const sources[] = {
		[SA_SIZE_STRIDES] = "strides", [SA_SIZE_FOLDED] = "folded",
		[SA_SIZE_DECLARED] = "declared", [SA_SIZE_OBJECT] = "object",
	};

	mn_prof_key(p, "size");
	mn_prof_map_begin_flow(p);
	kv_size(p, "inferred", l->inferred);
	kv_size(p, "declared", l->declared);
	/* Equal, or inferred a multiple of declared (folded into it): the strides are whole
	 * elements of the declared structure. */
	mn_prof_key(p, "agree");
	if (l->inferred && l->declared)
		mn_prof_bool(p, sa_layout_agree(l));
	else
		mn_prof_null(p);
	kv_size(p, "used", l->used);
	mn_prof_kv_str(p, "source", sources[l->source]);
	mn_prof_map_end(p);
	if (l->inferred)
		return;
	if (instances > 1)
		mn_prof_kv_str(p, "unknown_because", "no stream touched one instance at two "
			       "addresses: each access fell in another instance (as when every "
			       "node is allocated on its own)");
	else
		mn_prof_kv_str(p, "unknown_because", "no stream touched two addresses: one "
			       "element or a scalar");
}

static void emit_fields(struct mn_prof *p, const struct sa_layout *l, uint64_t cost)
{
	char key[32];

	mn_prof_key(p, "fields");
	mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < l->nfields; i++) {
		mn_prof_map_begin_flow(p);
		mn_prof_kv_u64(p, "offset", l->field[i].offset);
		/* Only where the site table declares the structure: offsets are the analysis,
		 * names a reading aid. */
		if (l->field[i].name[0])
			mn_prof_kv_str(p, "name", l->field[i].name);
		mn_prof_kv_u64(p, "bytes", l->field[i].bytes);
		mn_prof_kv_u64(p, "accesses", l->field[i].accesses);
		mn_prof_kv_u64(p, "cost", l->field[i].cost);
		mn_prof_kv_f64(p, "share", share(l->field[i].cost, cost));
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);

	/* One row per field, one column per field offset: `mnemo report` prints it as a table. */
	mn_prof_key(p, "affinity");
	mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < l->nfields; i++) {
		mn_prof_map_begin_flow(p);
		mn_prof_kv_u64(p, "field", l->field[i].offset);
		for (uint32_t j = 0; j < l->nfields; j++) {
			snprintf(key, sizeof(key), "%" PRIu64, l->field[j].offset);
			mn_prof_kv_f64(p, key, l->affinity[i][j]);
		}
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);

	mn_prof_key(p, "clusters");
	mn_prof_seq_begin(p);
	for (uint32_t c = 0; c < l->nclusters; c++) {
		mn_prof_seq_begin_flow(p);
		for (uint32_t i = 0; i < l->nfields; i++)
			if (l->cluster[i] == c)
				mn_prof_u64(p, l->field[i].offset);
		mn_prof_seq_end(p);
	}
	mn_prof_seq_end(p);
	if (l->nrare) {   /* below SA_RARE_SHARE of the cost: in no cluster, not in the advice */
		mn_prof_key(p, "rare_fields");
		mn_prof_seq_begin_flow(p);
		for (uint32_t i = 0; i < l->nfields; i++)
			if (l->cluster[i] == SA_NO_CLUSTER)
				mn_prof_u64(p, l->field[i].offset);
		mn_prof_seq_end(p);
	}
}

/* Code-centric: per loop, its cost on this object and the fields it touches. */
static void emit_loops(struct mn_prof *p, const struct sa_layout *l, const struct sa_stream *s,
		       size_t n)
{
	mn_prof_key(p, "loops");
	mn_prof_seq_begin(p);
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t cost = 0, accesses = 0;
		bool seen[SA_FIELDS_MAX] = { false };

		for (j = i; j < n && s[j].loop == s[i].loop; j++) {
			int k = sa_layout_field(l, sa_layout_offset(l, &s[j]));

			cost += s[j].cost;
			accesses += s[j].accesses;
			if (k >= 0)
				seen[k] = true;
		}
		mn_prof_map_begin_flow(p);
		kv_loop(p, s[i].loop);
		mn_prof_kv_u64(p, "accesses", accesses);
		mn_prof_kv_u64(p, "cost", cost);
		mn_prof_key(p, "fields");
		mn_prof_seq_begin_flow(p);
		for (uint32_t k = 0; k < l->nfields; k++)
			if (seen[k])
				mn_prof_u64(p, l->field[k].offset);
		mn_prof_seq_end(p);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
}

static void emit_streams(struct mn_prof *p, const struct sa_layout *l, const struct sa_stream *s,
			 size_t n)
{
	mn_prof_key(p, "streams");
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < n; i++) {
		mn_prof_map_begin_flow(p);
		kv_loop(p, s[i].loop);
		mn_prof_kv_site(p, "site", s[i].site);
		mn_prof_kv_u64(p, "cost", s[i].cost);
		mn_prof_kv_u64(p, "accesses", s[i].accesses);
		mn_prof_kv_u64(p, "field", sa_layout_offset(l, &s[i]));
		kv_size(p, "stride", s[i].stride);
		/* What field is computed from, and the width: for restore() and merge(). */
		mn_prof_kv_u64(p, "offset", s[i].offset);
		mn_prof_kv_u64(p, "bytes", s[i].bytes);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
}

/* One hot data object: Eq. 1 share, then its layout.  -ENOMEM when its streams cannot be listed. */
static int emit_object(struct mn_prof *p, struct affinity *a, const struct dobj *d,
		       struct sa_layout *l)
{
	const struct mn_run_site *rs = mn_run_site(a->run, d->site);
	struct sa_stream *s = NULL;
	size_t n = 0, cap = 0;
	struct insn *in;
	char advice[512], key[32];

	MN_SITEVEC_FOREACH(&a->insns, id, in)
		for (uint32_t i = 0; i < in->n; i++) {
			if (in->v[i].dobj != d->site)
				continue;
			if (n == cap) {
				size_t c = cap ? 2 * cap : 16;
				struct sa_stream *v = realloc(s, c * sizeof(*v));

				if (!v) {
					free(s);
					return -ENOMEM;
				}
				s = v;
				cap = c;
			}
			s[n++] = in->v[i].s;
		}
	if (n)   /* with no stream, s is NULL, which qsort's base must not be */
		qsort(s, n, sizeof(*s), by_loop_site);
	sa_layout_build(l, s, n, declared_size(a, d->site), a->opt.threshold);
	if (rs)
		sa_layout_name(l, rs->fields);
	sa_layout_advice(l, advice, sizeof(advice));

	/* Keyed, not a list: `mnemo report` prints a mapping of sections each as a section, where
	 * a list of mappings would become one table of unreadable nested cells. */
	snprintf(key, sizeof(key), "site_%" PRIu32, d->site);
	mn_prof_key(p, key);
	mn_prof_map_begin(p);
	mn_prof_kv_site(p, "site", d->site);
	mn_prof_kv_str(p, "kind", kind_names[d->kind]);
	mn_prof_kv_str(p, "name", rs ? rs->name : "");
	if (l->type[0])           /* the layout's name, from debug info */
		mn_prof_kv_str(p, "type", l->type);
	else if (l->declared && rs && type_name(rs->name))
		mn_prof_kv_str(p, "type", type_name(rs->name));
	mn_prof_kv_u64(p, "instances", d->instances);
	mn_prof_kv_u64(p, "bytes", d->max_bytes);
	mn_prof_kv_u64(p, "accesses", d->accesses);
	mn_prof_kv_u64(p, "cost", d->cost);
	mn_prof_kv_f64(p, "share", share(d->cost, a->cost));
	emit_size(p, l, d->instances);
	if (l->dropped_streams)
		mn_prof_kv_u64(p, "streams_beyond_field_limit", l->dropped_streams);
	mn_prof_kv_str(p, "advice", advice);
	emit_fields(p, l, d->cost);
	emit_loops(p, l, s, n);
	emit_streams(p, l, s, n);
	mn_prof_map_end(p);
	free(s);
	return 0;
}

/*
 * Every data object with an instance, by site: the integers the hot set (Eq. 1) and the structures'
 * rows are computed from, so that a merged profile can recompute them (README "Merging").
 */
static void emit_objects(struct mn_prof *p, struct affinity *a)
{
	struct dobj *d;

	mn_prof_key(p, "objects");
	mn_prof_seq_begin(p);
	MN_SITEVEC_FOREACH(&a->dobjs, id, d) {
		if (!d->instances && !d->accesses)
			continue;
		mn_prof_map_begin_flow(p);
		kv_object(p, "site", d->site);
		mn_prof_kv_str(p, "kind", kind_names[d->kind]);
		mn_prof_kv_u64(p, "instances", d->instances);
		mn_prof_kv_u64(p, "bytes", d->max_bytes);
		mn_prof_kv_u64(p, "accesses", d->accesses);
		mn_prof_kv_u64(p, "cost", d->cost);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
}

static int by_object_loop_site(const void *x, const void *y)
{
	const struct stream *a = *(const struct stream *const *)x;
	const struct stream *b = *(const struct stream *const *)y;

	if (a->dobj != b->dobj)
		return a->dobj < b->dobj ? -1 : 1;
	return by_loop_site(&a->s, &b->s);
}

/*
 * The streams of the data objects that are not hot (not under `structures`), by object, loop and
 * instruction: in another run's company one of those objects may be.  -ENOMEM.
 */
static int emit_other_streams(struct mn_prof *p, struct affinity *a)
{
	const struct stream **v = NULL;
	size_t n = 0, cap = 0;
	struct insn *in;

	MN_SITEVEC_FOREACH(&a->insns, id, in)
		for (uint32_t i = 0; i < in->n; i++) {
			const struct dobj *d = mn_sitevec_find(&a->dobjs, in->v[i].dobj);

			if (d && d->hot)
				continue;
			if (n == cap) {
				size_t c = cap ? 2 * cap : 64;
				const struct stream **w = realloc(v, c * sizeof(*w));

				if (!w) {
					free(v);
					return -ENOMEM;
				}
				v = w;
				cap = c;
			}
			v[n++] = &in->v[i];
		}
	if (n)
		qsort(v, n, sizeof(*v), by_object_loop_site);
	mn_prof_key(p, "other_streams");
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < n; i++) {
		const struct sa_stream *s = &v[i]->s;

		mn_prof_map_begin_flow(p);
		kv_object(p, "object", v[i]->dobj);
		kv_loop(p, s->loop);
		mn_prof_kv_site(p, "site", s->site);
		mn_prof_kv_u64(p, "cost", s->cost);
		mn_prof_kv_u64(p, "accesses", s->accesses);
		kv_size(p, "stride", s->stride);
		mn_prof_kv_u64(p, "offset", s->offset);
		mn_prof_kv_u64(p, "bytes", s->bytes);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	free(v);
	return 0;
}

static void emit_options(struct mn_prof *p, const struct options *o)
{
	mn_prof_kv_str(p, "cost", o->cost == SA_COST_CACHE ? "cache" : "accesses");
	mn_prof_kv_u64(p, "sample_period", o->sample);
	mn_prof_kv_u64(p, "top", o->top);
	mn_prof_kv_f64(p, "threshold", o->threshold);
	if (o->cost != SA_COST_CACHE)
		return;
	mn_prof_key(p, "cache");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "l1_bytes", o->l1_bytes);
	mn_prof_kv_u64(p, "l1_ways", o->l1_ways);
	mn_prof_kv_u64(p, "l2_bytes", o->l2_bytes);
	mn_prof_kv_u64(p, "l2_ways", o->l2_ways);
	mn_prof_kv_u64(p, "line", o->line);
	mn_prof_kv_u64(p, "l1_latency", o->l1_latency);
	mn_prof_kv_u64(p, "l2_latency", o->l2_latency);
	mn_prof_kv_u64(p, "memory_latency", o->mem_latency);
	mn_prof_map_end(p);
}

static int sa_emit(void *st, struct mn_prof *p)
{
	struct affinity *a = st;
	struct dobj **hot = NULL, *d;
	struct sa_layout *l = malloc(sizeof(*l));
	size_t n = 0, cap = 0, nhot;
	int err = l ? 0 : -ENOMEM;

	if (a->conflict) {
		fprintf(stderr, "mnemo: structure-affinity: the profiles were made with "
			"different options (cost, sample_period, top, threshold or cache "
			"geometry): their counts do not add\n");
		free(l);
		return -EINVAL;
	}
	MN_SITEVEC_FOREACH(&a->dobjs, id, d) {
		d->hot = false;
		if (err || !d->accesses)
			continue;
		if (n == cap) {
			size_t c = cap ? 2 * cap : 64;
			struct dobj **v = realloc(hot, c * sizeof(*v));

			if (!v) {
				err = -ENOMEM;
				continue;
			}
			hot = v;
			cap = c;
		}
		hot[n++] = d;
	}
	if (err) {
		free(hot);
		free(l);
		return err;
	}
	if (n)   /* with no data object, hot is NULL, which qsort's base must not be */
		qsort(hot, n, sizeof(*hot), by_cost);
	nhot = n < a->opt.top ? n : a->opt.top;
	for (size_t i = 0; i < nhot; i++)
		hot[i]->hot = true;

	mn_prof_map_begin(p);
	emit_options(p, &a->opt);
	mn_prof_key(p, "totals");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "accesses", a->accesses);
	mn_prof_kv_u64(p, "cost", a->cost);
	mn_prof_kv_u64(p, "unattributed_accesses", a->unattributed);
	mn_prof_kv_u64(p, "unattributed_cost", a->unattributed_cost);
	mn_prof_kv_u64(p, "data_objects", n);
	mn_prof_map_end(p);
	if (priced(a)) {
		mn_prof_key(p, "cache_lines");
		mn_prof_map_begin_flow(p);
		mn_prof_kv_u64(p, "l1", a->cache.found[SA_L1]);
		mn_prof_kv_u64(p, "l2", a->cache.found[SA_L2]);
		mn_prof_kv_u64(p, "memory", a->cache.found[SA_MEMORY]);
		mn_prof_map_end(p);
	}
	mn_prof_key(p, "lost");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "aliased_granules", a->objs.aliases + a->aliases);
	mn_prof_kv_u64(p, "nomem", a->nomem);
	mn_prof_kv_u64(p, "unknown_frees", a->unknown_frees);
	mn_prof_map_end(p);

	mn_prof_key(p, "hot");
	mn_prof_seq_begin(p);
	for (size_t i = 0; i < nhot; i++) {
		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "site", hot[i]->site);
		mn_prof_kv_str(p, "kind", kind_names[hot[i]->kind]);
		mn_prof_kv_u64(p, "cost", hot[i]->cost);
		mn_prof_kv_f64(p, "share", share(hot[i]->cost, a->cost));
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);

	mn_prof_key(p, "structures");
	mn_prof_map_begin(p);
	for (size_t i = 0; i < nhot && !err; i++)
		err = emit_object(p, a, hot[i], l);
	mn_prof_map_end(p);
	emit_objects(p, a);
	if (!err)
		err = emit_other_streams(p, a);
	mn_prof_map_end(p);
	free(hot);
	free(l);
	return err;
}

/* ---- Merge and restore (README "Merging") ---------------------------------------------------- */

static bool same_options(const struct options *x, const struct options *y)
{
	bool same = x->cost == y->cost && x->sample == y->sample && x->top == y->top &&
		    x->threshold == y->threshold;

	/* The geometry and latencies count only when they priced the accesses. */
	if (!same || x->cost != SA_COST_CACHE)
		return same;
	return x->l1_bytes == y->l1_bytes && x->l1_ways == y->l1_ways &&
	       x->l2_bytes == y->l2_bytes && x->l2_ways == y->l2_ways && x->line == y->line &&
	       x->l1_latency == y->l1_latency && x->l2_latency == y->l2_latency &&
	       x->mem_latency == y->mem_latency;
}

/* Folds one data object of another run into d (all zero when the site is new here). */
static void merge_dobj(struct dobj *d, const struct dobj *f)
{
	if (!d->instances && !d->accesses) {
		d->site = f->site;
		d->kind = f->kind;
	} else if (f->kind < d->kind) {
		d->kind = f->kind;   /* one site makes one kind; were it not so, still one rule */
	}
	d->instances += f->instances;
	if (f->max_bytes > d->max_bytes)
		d->max_bytes = f->max_bytes;
	d->accesses += f->accesses;
	d->cost += f->cost;
}

/*
 * Folds a stream of another run into s (fresh from stream_of() when new here: site 0).  Counts add,
 * strides combine by gcd as Eq. 2-3 do within a run, the offset is the smaller (any offset of the
 * stream gives its field), the width the larger.
 */
static void merge_stream(struct sa_stream *s, const struct sa_stream *f)
{
	if (!s->site) {
		*s = *f;
		return;
	}
	s->stride = sa_gcd(s->stride, f->stride);
	if (f->offset < s->offset)
		s->offset = f->offset;
	if (f->bytes > s->bytes)
		s->bytes = f->bytes;
	s->accesses += f->accesses;
	s->cost += f->cost;
}

/*
 * Folds run `from` into `into`: every count adds, per data object and per stream, whatever their
 * sites (disjoint or overlapping).  The live instance tables are not merged: after a merge only
 * emit() is meaningful.
 */
static void sa_merge(void *into, void *from)
{
	struct affinity *a = into, *b = from;
	struct dobj *f;
	struct insn *fi;

	if (!same_options(&a->opt, &b->opt) || b->conflict)
		a->conflict = true;
	a->accesses += b->accesses;
	a->cost += b->cost;
	a->unattributed += b->unattributed;
	a->unattributed_cost += b->unattributed_cost;
	a->nomem += b->nomem;
	a->unknown_frees += b->unknown_frees;
	a->aliases += b->aliases + b->objs.aliases;
	a->serial += b->serial;
	for (int k = 0; k < SA_LEVELS; k++)
		a->cache.found[k] += b->cache.found[k];
	MN_SITEVEC_FOREACH(&b->dobjs, id, f) {
		struct dobj *d = mn_sitevec_get(&a->dobjs, (uint32_t)id);

		if (!d) {
			a->nomem++;
			continue;
		}
		merge_dobj(d, f);
	}
	MN_SITEVEC_FOREACH(&b->insns, id, fi) {
		struct insn *in = mn_sitevec_get(&a->insns, (uint32_t)id);

		for (uint32_t i = 0; i < fi->n; i++) {
			const struct stream *x = &fi->v[i];
			struct stream *r = in ? stream_of(in, x->s.loop, x->dobj) : NULL;

			if (!r) {
				a->nomem++;
				continue;
			}
			merge_stream(&r->s, &fi->v[i].s);
		}
	}
}

/* A size: an unsigned integer, or null for 0 (kv_size()). */
static int pfield_size(const struct mn_profile *prof, const struct mn_pnode *map, const char *key,
		       uint64_t *v, char *err, size_t errlen)
{
	const struct mn_pnode *n = mn_pfield_node(prof, map, key, MN_PNODE_SCALAR, err, errlen);

	if (!n)
		return -EINVAL;
	if (mn_pnode_is_null(n)) {
		*v = 0;
		return 0;
	}
	return mn_pfield_u64(prof, map, key, v, err, errlen);
}

/*
 * A site id the row gives under key, which the profile's site table must list; 0 (no site: a data
 * object the C library allocated, loop 0 outside every loop) where zero_ok.
 */
static int pfield_site(const struct mn_profile *prof, const struct mn_pnode *map, const char *key,
		       uint32_t *v, bool zero_ok, char *err, size_t errlen)
{
	int e = mn_pfield_u32(prof, map, key, v, err, errlen);

	if (e)
		return e == -ENOENT ? -EINVAL : e;
	if (!(zero_ok && !*v) && !mn_profile_site(prof, *v))
		return mn_pnode_errorf(prof, mn_pnode_get(map, key), err, errlen, "field '%s': "
				       "site %" PRIu32 " is not in the profile's site table", key,
				       *v);
	return 0;
}

/* A required unsigned field; a missing one is an error, not a default. */
static int pfield_u64(const struct mn_profile *prof, const struct mn_pnode *map, const char *key,
		      uint64_t *v, char *err, size_t errlen)
{
	int e = mn_pfield_u64(prof, map, key, v, err, errlen);

	return e == -ENOENT ? -EINVAL : e;
}

static int restore_options(struct affinity *a, const struct mn_profile *prof,
			   const struct mn_pnode *sec, char *err, size_t errlen)
{
	static const struct {
		const char *key;
		size_t off;
	} geometry[] = {
		{ "l1_bytes", offsetof(struct options, l1_bytes) },
		{ "l1_ways", offsetof(struct options, l1_ways) },
		{ "l2_bytes", offsetof(struct options, l2_bytes) },
		{ "l2_ways", offsetof(struct options, l2_ways) },
		{ "line", offsetof(struct options, line) },
		{ "l1_latency", offsetof(struct options, l1_latency) },
		{ "l2_latency", offsetof(struct options, l2_latency) },
		{ "memory_latency", offsetof(struct options, mem_latency) },
	};
	struct options *o = &a->opt;
	const struct mn_pnode *c;
	const char *cost;
	int e;

	if ((e = mn_pfield_str(prof, sec, "cost", &cost, err, errlen)))
		return e == -ENOENT ? -EINVAL : e;
	if (strcmp(cost, "accesses") && strcmp(cost, "cache"))
		return mn_pnode_errorf(prof, mn_pnode_get(sec, "cost"), err, errlen,
				       "field 'cost': expected accesses or cache, found '%s'",
				       cost);
	o->cost = strcmp(cost, "cache") ? SA_COST_ACCESSES : SA_COST_CACHE;
	if ((e = pfield_u64(prof, sec, "sample_period", &o->sample, err, errlen)) ||
	    (e = pfield_u64(prof, sec, "top", &o->top, err, errlen)))
		return e;
	if ((e = mn_pfield_f64(prof, sec, "threshold", &o->threshold, err, errlen)))
		return e == -ENOENT ? -EINVAL : e;
	if (o->cost != SA_COST_CACHE)
		return 0;
	if (!(c = mn_pfield_node(prof, sec, "cache", MN_PNODE_MAP, err, errlen)))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(geometry) / sizeof(geometry[0]); i++)
		if ((e = pfield_u64(prof, c, geometry[i].key,
				    (uint64_t *)((char *)o + geometry[i].off), err, errlen)))
			return e;
	if (!(c = mn_pfield_node(prof, sec, "cache_lines", MN_PNODE_MAP, err, errlen)))
		return -EINVAL;
	if ((e = pfield_u64(prof, c, "l1", &a->cache.found[SA_L1], err, errlen)) ||
	    (e = pfield_u64(prof, c, "l2", &a->cache.found[SA_L2], err, errlen)) ||
	    (e = pfield_u64(prof, c, "memory", &a->cache.found[SA_MEMORY], err, errlen)))
		return e;
	return 0;
}

static int restore_objects(struct affinity *a, const struct mn_profile *prof,
			   const struct mn_pnode *sec, char *err, size_t errlen)
{
	const struct mn_pnode *t = mn_pfield_node(prof, sec, "objects", MN_PNODE_SEQ, err, errlen);

	if (!t)
		return -EINVAL;
	for (size_t i = 0; i < mn_pnode_len(t); i++) {
		const struct mn_pnode *row = mn_pnode_at(t, i);
		struct dobj x = { 0 }, *d;
		const char *kind;
		size_t k;
		int e;

		if ((e = pfield_site(prof, row, "site", &x.site, true, err, errlen)) ||
		    (e = mn_pfield_str(prof, row, "kind", &kind, err, errlen)) ||
		    (e = pfield_u64(prof, row, "instances", &x.instances, err, errlen)) ||
		    (e = pfield_u64(prof, row, "bytes", &x.max_bytes, err, errlen)) ||
		    (e = pfield_u64(prof, row, "accesses", &x.accesses, err, errlen)) ||
		    (e = pfield_u64(prof, row, "cost", &x.cost, err, errlen)))
			return e == -ENOENT ? -EINVAL : e;
		for (k = 0; k < sizeof(kind_names) / sizeof(kind_names[0]); k++)
			if (kind_names[k] && !strcmp(kind, kind_names[k]))
				break;
		if (k == sizeof(kind_names) / sizeof(kind_names[0]))
			return mn_pnode_errorf(prof, mn_pnode_get(row, "kind"), err, errlen,
					       "field 'kind': expected heap, stack or global, "
					       "found '%s'", kind);
		x.kind = (enum mn_obj_kind)k;
		if (!x.instances && !x.accesses)
			return mn_pnode_errorf(prof, row, err, errlen, "field 'instances': data "
					       "object %" PRIu32 " has no instance and no access",
					       x.site);
		d = mn_sitevec_get(&a->dobjs, x.site);
		if (!d)
			return -ENOMEM;
		if (d->instances || d->accesses)
			return mn_pnode_errorf(prof, mn_pnode_get(row, "site"), err, errlen,
					       "field 'site': data object %" PRIu32 " listed twice",
					       x.site);
		*d = x;
	}
	return 0;
}

/* One stream row: of data object `object` when have_object, else of the one its `object` names. */
static int restore_stream(struct affinity *a, const struct mn_profile *prof,
			  const struct mn_pnode *row, bool have_object, uint32_t object,
			  char *err, size_t errlen)
{
	struct sa_stream s = { 0 };
	const struct dobj *d;
	struct stream *r;
	struct insn *in;
	uint64_t bytes;
	int e;

	if ((!have_object && (e = pfield_site(prof, row, "object", &object, true, err, errlen))) ||
	    (e = pfield_site(prof, row, "site", &s.site, false, err, errlen)) ||
	    (e = pfield_site(prof, row, "loop", &s.loop, true, err, errlen)) ||
	    (e = pfield_u64(prof, row, "cost", &s.cost, err, errlen)) ||
	    (e = pfield_u64(prof, row, "accesses", &s.accesses, err, errlen)) ||
	    (e = pfield_size(prof, row, "stride", &s.stride, err, errlen)) ||
	    (e = pfield_u64(prof, row, "offset", &s.offset, err, errlen)) ||
	    (e = pfield_u64(prof, row, "bytes", &bytes, err, errlen)))
		return e;
	if (bytes > UINT32_MAX)
		return mn_pnode_errorf(prof, mn_pnode_get(row, "bytes"), err, errlen,
				       "field 'bytes': %" PRIu64 " is out of range", bytes);
	s.bytes = (uint32_t)bytes;
	d = mn_sitevec_find(&a->dobjs, object);
	if (!d || (!d->instances && !d->accesses))
		return mn_pnode_errorf(prof, row, err, errlen, "stream of site %" PRIu32 ": data "
				       "object %" PRIu32 " is not in 'objects'", s.site, object);
	in = mn_sitevec_get(&a->insns, s.site);
	r = in ? stream_of(in, s.loop, object) : NULL;
	if (!r)
		return -ENOMEM;
	if (r->s.site)
		return mn_pnode_errorf(prof, row, err, errlen, "stream of site %" PRIu32 " in loop "
				       "%" PRIu32 " on data object %" PRIu32 " listed twice",
				       s.site, s.loop, object);
	r->s = s;
	return 0;
}

static int restore_streams(struct affinity *a, const struct mn_profile *prof,
			   const struct mn_pnode *t, bool have_object, uint32_t object, char *err,
			   size_t errlen)
{
	for (size_t i = 0; i < mn_pnode_len(t); i++) {
		int e = restore_stream(a, prof, mn_pnode_at(t, i), have_object, object, err,
				       errlen);

		if (e)
			return e;
	}
	return 0;
}

/*
 * Rebuilds the integers emit() writes from: options, totals, lost, cache lines, every data object
 * (`objects`) and every stream (under `structures` and in `other_streams`).  What the section
 * derives from them (hot, shares, sizes, fields, affinities, clusters, advice, loops) is not read:
 * emit() computes it again.
 */
static int sa_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		      char *err, size_t errlen)
{
	struct affinity *a = st;
	const struct mn_pnode *t, *structs, *o;
	int e;

	if (mn_pnode_kind(sec) != MN_PNODE_MAP)
		return mn_pnode_errorf(prof, sec, err, errlen, "structure-affinity: expected a "
				       "mapping");
	if ((e = restore_options(a, prof, sec, err, errlen)))
		return e;
	if (!(t = mn_pfield_node(prof, sec, "totals", MN_PNODE_MAP, err, errlen)))
		return -EINVAL;
	if ((e = pfield_u64(prof, t, "accesses", &a->accesses, err, errlen)) ||
	    (e = pfield_u64(prof, t, "cost", &a->cost, err, errlen)) ||
	    (e = pfield_u64(prof, t, "unattributed_accesses", &a->unattributed, err, errlen)) ||
	    (e = pfield_u64(prof, t, "unattributed_cost", &a->unattributed_cost, err, errlen)))
		return e;
	if (!(t = mn_pfield_node(prof, sec, "lost", MN_PNODE_MAP, err, errlen)))
		return -EINVAL;
	if ((e = pfield_u64(prof, t, "aliased_granules", &a->aliases, err, errlen)) ||
	    (e = pfield_u64(prof, t, "nomem", &a->nomem, err, errlen)) ||
	    (e = pfield_u64(prof, t, "unknown_frees", &a->unknown_frees, err, errlen)))
		return e;
	if ((e = restore_objects(a, prof, sec, err, errlen)))
		return e;
	if (!(structs = mn_pfield_node(prof, sec, "structures", MN_PNODE_MAP, err, errlen)))
		return -EINVAL;
	for (size_t i = 0; i < mn_pnode_len(structs); i++) {
		uint32_t object;

		o = mn_pnode_at(structs, i);
		if ((e = pfield_site(prof, o, "site", &object, true, err, errlen)))
			return e;
		if (!(t = mn_pfield_node(prof, o, "streams", MN_PNODE_SEQ, err, errlen)))
			return -EINVAL;
		if ((e = restore_streams(a, prof, t, true, object, err, errlen)))
			return e;
	}
	if (!(t = mn_pfield_node(prof, sec, "other_streams", MN_PNODE_SEQ, err, errlen)))
		return -EINVAL;
	return restore_streams(a, prof, t, false, 0, err, errlen);
}

/*
 * Equal across merged profiles (`mnemo merge` compares the nodes, so the `cache:` mapping, the
 * geometry and latencies with cost: cache, too); merge() checks them again (same_options()).
 */
static const char *const sa_settings[] = { "cost", "sample_period", "top", "threshold", "cache",
					   NULL };

/*
 * Streams are per instruction, each built from its own accesses in order, and the data objects'
 * figures are sums: a mixed loop may come whole (no object is made or freed inside one, which
 * calls nothing).  Not with the cache model, whose state is the order of every access.
 */
static bool sa_mixed_whole(const void *st)
{
	const struct affinity *a = st;

	return !priced(a);
}

/* The object table's shadow, where every load and store looks its address up: the driver
 * prefetches it ahead (mn_module.shadow). */
static struct mn_shadow *sa_shadow(void *st)
{
	return ((struct affinity *)st)->objs.sh;
}

#define SA_OPT(field) offsetof(struct affinity, opt.field)

/* README "Options"; the defaults are the cache of a common x86 core. */
static const struct mn_option sa_options[] = {
	{ "MNEMO_AFFINITY_COST", MN_OPT_CHOICE, SA_OPT(cost), "accesses", .choices = "accesses|cache",
	  .doc = "cost of an access: 1, or the latency the cache model gives it" },
	{ "MNEMO_AFFINITY_THRESHOLD", MN_OPT_REAL, SA_OPT(threshold), "0.8", 0, 1,
	  .doc = "affinity from which two fields go in one cluster" },
	{ "MNEMO_AFFINITY_TOP", MN_OPT_UINT, SA_OPT(top), "3", 1, 1000000,
	  .doc = "hot data objects analysed and reported" },
	{ "MNEMO_AFFINITY_L1_SIZE", MN_OPT_UINT, SA_OPT(l1_bytes), "32768", 64, 4294967296.0,
	  .doc = "L1 capacity, bytes (cost: cache)" },
	{ "MNEMO_AFFINITY_L1_WAYS", MN_OPT_UINT, SA_OPT(l1_ways), "8", 1, 1024,
	  .doc = "L1 associativity (cost: cache)" },
	{ "MNEMO_AFFINITY_L2_SIZE", MN_OPT_UINT, SA_OPT(l2_bytes), "1048576", 64, 68719476736.0,
	  .doc = "L2 capacity, bytes (cost: cache)" },
	{ "MNEMO_AFFINITY_L2_WAYS", MN_OPT_UINT, SA_OPT(l2_ways), "16", 1, 1024,
	  .doc = "L2 associativity (cost: cache)" },
	{ "MNEMO_AFFINITY_LINE", MN_OPT_UINT, SA_OPT(line), "64", 4, 4096,
	  .doc = "cache line, bytes, a power of two (cost: cache)" },
	{ "MNEMO_AFFINITY_L1_LATENCY", MN_OPT_UINT, SA_OPT(l1_latency), "4", 0, 1000000,
	  .doc = "cycles of an L1 hit (cost: cache)" },
	{ "MNEMO_AFFINITY_L2_LATENCY", MN_OPT_UINT, SA_OPT(l2_latency), "12", 0, 1000000,
	  .doc = "cycles of an L2 hit (cost: cache)" },
	{ "MNEMO_AFFINITY_MEMORY_LATENCY", MN_OPT_UINT, SA_OPT(mem_latency), "200", 0, 1000000,
	  .doc = "cycles of a miss in both (cost: cache)" },
	{ "MNEMO_AFFINITY_SAMPLE", MN_OPT_UINT, SA_OPT(sample), "1", 1, 1000000000,
	  .doc = "one access in this many is sent (the runtime samples; the profile says so)" },
	{ .env = NULL },
};

const struct mn_module mn_module_structure_affinity = {
	.name = "structure-affinity",
	.doc = "hot data objects, structure size and fields from strides, field affinity, "
	       "splitting advice",
	.state_size = sizeof(struct affinity),
	.shard = MN_SHARD_NONE,
	.init = sa_init,
	.fini = sa_fini,
	.load = sa_load,
	.store = sa_store,
	.heap_alloc = sa_heap_alloc,
	.heap_realloc = sa_heap_realloc,
	.heap_free = sa_heap_free,
	.stack_alloc = sa_stack_alloc,
	.stack_free = sa_stack_free,
	.global = sa_global,
	.loop_summary = sa_loop_summary,
	.mixed_whole = sa_mixed_whole,
	.merge = sa_merge,
	.shadow = sa_shadow,
	.emit = sa_emit,
	.restore = sa_restore,
	.settings = sa_settings,
	.options = sa_options,
};
