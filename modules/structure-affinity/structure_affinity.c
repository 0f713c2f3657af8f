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
 * Schema and options: README.md; the options are read from sa_options[] at init.  This file holds
 * the accesses, their streams and loop summaries; the other files, by topic, are listed in sa.h.
 *
 * One worker (shard: none): a stream crosses instances and loops, and a structure's streams come
 * from every instruction.  The backend runs a module that does not shard as one worker whatever
 * -j asks (backend.c) and never calls its merge.  `mnemo merge` does: restore() rebuilds a state
 * from a profile's section (which carries every data object's and every stream's integers, not
 * only the hot ones') and merge() folds runs of one binary; emit() derives every figure from the
 * merged integers (README "Merging").
 *
 * Threads (README "Threads: what order it needs"): every thread's events, each thread's in its
 * order.  Data objects, instances and streams are the program's; a stream's last access (what
 * the next one is differenced with) and, with cost: cache, the cache model are per thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "module.h"
#include "sa.h"

const char *const sa_kind_names[MN_OBJ_GLOBAL + 1] = {
	[MN_OBJ_HEAP] = "heap", [MN_OBJ_STACK] = "stack", [MN_OBJ_GLOBAL] = "global"
};

/* ---- Accesses -------------------------------------------------------------------------------- */

struct stream *sa_stream_of(struct insn *in, uint32_t loop, uint32_t dobj)
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
	struct stream *r = in ? sa_stream_of(in, in->loop, group) : NULL;

	if (r && !r->d)
		r->d = mn_sitevec_find(&a->dobjs, group);
	return r && r->d ? r : NULL;
}

/*
 * Threads: a stream's last access is one thread's, the thread of its last access; when another
 * thread's access comes, that one is parked under (stream, thread) and the new thread's own taken
 * back.  Returns whether the thread had one.  Out of line: one thread's accesses never come here
 * but for a stream's first.  A last access that finds no memory to park in is lost (nomem): that
 * thread's next access starts afresh.
 */
static bool stream_switch(struct affinity *a, struct stream *r)
{
	uint64_t key;

	if (r->last_thread && r->s.accesses) {
		if (!r->id)
			r->id = ++a->stream_ids;
		key = mn_map_key(r->id, r->last_thread);
		if (!mn_kv64_put(&a->parked_serial, key, r->last_serial) ||
		    !mn_kv64_put(&a->parked_off, key, r->last_off))
			a->nomem++;
	}
	r->last_thread = a->thread;
	key = mn_map_key(r->id, a->thread);
	return r->id && mn_kv64_get(&a->parked_serial, key, &r->last_serial) &&
	       mn_kv64_get(&a->parked_off, key, &r->last_off);
}

/*
 * Stream r's offset and stride after an access at off in instance serial (Eq. 2-3, 6): the
 * first access's offset, and each access differenced with its thread's last one in the same
 * instance.  With threads, the offset is the smallest of the threads' first ones, which does not
 * depend on which thread came first; one thread's first access is the stream's.
 */
static inline void stream_step(struct affinity *a, struct stream *r, uint64_t serial,
			       uint64_t off)
{
	if (__builtin_expect(r->last_thread != a->thread, 0) && !stream_switch(a, r)) {
		if (!r->s.accesses || off < r->s.offset)
			r->s.offset = off;
	} else if (!r->s.accesses) {
		r->s.offset = off;
	} else if (r->last_serial == serial) {
		sa_stride_add(&r->s.stride, r->last_off, off);
	}
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
	stream_step(a, r, x->serial, off);
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
	if (lo != hi &&
	    !sa_verified_walk(&a->verified, &a->objs, slot, first, acc->step, n, lo, hi))
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
	stream_step(a, r, x->serial, off);
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

/* ---- Setup and threads ----------------------------------------------------------------------- */

static struct sa_cache_config cache_config(const struct affinity *a)
{
	return (struct sa_cache_config){
		.bytes = { a->opt.l1_bytes, a->opt.l2_bytes },
		.ways = { (uint32_t)a->opt.l1_ways, (uint32_t)a->opt.l2_ways },
		.line = (uint32_t)a->opt.line,
		.latency = { (uint32_t)a->opt.l1_latency, (uint32_t)a->opt.l2_latency,
			     (uint32_t)a->opt.mem_latency },
	};
}

/*
 * With cost: cache, thread t runs on core (t - 1) % SA_CORES, whose cache model a->cache becomes,
 * the previous core's parked (README "Threads").  Without memory for a new core's model the
 * thread stays on the current one (nomem).
 */
static void core_switch(struct affinity *a, unsigned core)
{
	struct sa_cache_config c = cache_config(a);
	struct sa_cache fresh;

	if (core == a->core)
		return;
	if (!a->cores && !(a->cores = calloc(SA_CORES, sizeof(*a->cores)))) {
		a->nomem++;
		return;
	}
	if (!a->cores[core].level[0].tag) {
		if (sa_cache_init(&fresh, &c)) {
			a->nomem++;
			return;
		}
		a->cores[core] = fresh;
	}
	a->cores[a->core] = a->cache;
	a->cache = a->cores[core];
	memset(&a->cores[core], 0, sizeof(a->cores[core]));
	a->core = core;
}

/* Every thread's events come, each thread's in its order (mn_module.thread). */
static void sa_thread(void *st, uint32_t thread)
{
	struct affinity *a = st;

	a->thread = thread;
	if (priced(a) && thread)
		core_switch(a, (thread - 1) % SA_CORES);
}

void sa_cores_fold(struct affinity *a)
{
	for (unsigned c = 0; a->cores && c < SA_CORES; c++) {
		if (!a->cores[c].level[0].tag)
			continue;
		for (int l = 0; l < SA_LEVELS; l++)
			a->cache.found[l] += a->cores[c].found[l];
		sa_cache_free(&a->cores[c]);
	}
}


static void sa_fini(void *st)
{
	struct affinity *a = st;
	struct insn *in;

	MN_SITEVEC_FOREACH(&a->insns, id, in)
		free(in->v);
	mn_sitevec_free(&a->insns);
	mn_sitevec_free(&a->dobjs);
	mn_allocctx_fini(&a->actx);
	sa_cores_fold(a);
	free(a->cores);
	mn_kv64_free(&a->parked_serial);
	mn_kv64_free(&a->parked_off);
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
		struct sa_cache_config c = cache_config(a);

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
	mn_allocctx_init(&a->actx, nsites);
	err = mn_objects_init(&a->objs);
	if (!err && (mn_sitevec_init(&a->dobjs, sizeof(struct dobj), nsites) ||
		     mn_sitevec_init(&a->insns, sizeof(struct insn), nsites)))
		err = -ENOMEM;
	if (err)
		sa_fini(a);
	return err;
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
	{ "MNEMO_AFFINITY_COST", MN_OPT_CHOICE, SA_OPT(cost), "accesses",
	  .choices = "accesses|cache",
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
	.thread = sa_thread,
	.init = sa_init,
	.fini = sa_fini,
	.load = sa_load,
	.store = sa_store,
	.heap_alloc = sa_heap_alloc,
	.heap_alloc_context = sa_heap_alloc_context,
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
	.schema = &sa_section,
	.settings = sa_settings,
	.options = sa_options,
};
