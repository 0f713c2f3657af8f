/*
 * object-relative: LEAP, the lossy object-relative memory profiler of Wu et al. ("Object-Relative
 * Addressing", sections 2 and 4).  Every load and store address is translated to (instruction,
 * group, object, offset, time); the stream is decomposed vertically by (instruction, group), and
 * each (object, offset) sub-stream is compressed into at most MNEMO_OBJREL_LMADS (default 30)
 * linear descriptors (lmad.h).  Beside it: per-group object counts, bytes and lifetimes, and the
 * paper's sample quality (4.1).  Schema: README.md.
 *
 * Groups: a heap object's group is its allocation site, a global's is its own site (`global`
 * event); objects are numbered within their group from 0 in allocation order.  Time is the
 * module's clock: the number of events it handled before this one (loads, stores, allocations,
 * reallocations, frees, globals, and with MNEMO_OBJREL_STACK=1 stack objects).  Stack objects are
 * tracked only on request: most programs' stack traffic is spills and locals whose objects live for
 * one call, which multiply objects without exposing regularity; without it their accesses are
 * unattributed.
 *
 * Lossless mode (MNEMO_OBJREL_LOSSLESS=1; WHOMP, the paper's section 3): beside the LMADs, the
 * translated stream is decomposed horizontally into four streams (instruction site, group, object,
 * offset), each appended to a Sequitur grammar (sequitur.h), and the raw addresses of the same
 * accesses to a fifth one for comparison.  Unattributed accesses are left out of all five and
 * counted.  `mnemo expand` (commands/expand.c) reads the grammars back.
 *
 * Loop summaries (loop_summary): a summarized loop's accesses leave the state their expansion
 * would, each access taken whole as runs within one object, O(1) per run (see "Loop summaries").
 *
 * One worker (shard: none): an object's accesses come from every instruction, so a split by site
 * would need every worker to track every object, and a split by address would cut streams.
 *
 * Threads (README "Threads: what order it needs"): every thread's events, each thread's in its
 * order.  Objects and groups are the program's; the clock and the (instruction, group) streams
 * are per thread: a stream is (instruction, group, thread), its times its thread's clock.
 *
 * Files: this one holds the events' handlers, init, fini and the module's table; summary.c the
 * loop summaries; merge.c the end of a run, its key and merge(); section.c emit() and restore();
 * objrel_internal.h what they share.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "objrel_internal.h"

#define STR_(x) #x
#define STR(x) STR_(x)   /* the value of macro x as a string: an option's default */

extern const struct mn_module mn_module_object_relative;   /* init() reads its options */

/* ---- Objects and their groups ---------------------------------------------------------------- */

struct group *objrel_group_get(struct objrel *r, uint32_t site)
{
	struct group *g = mn_sitevec_get(&r->groups, site);

	if (g) {
		g->site = site;
		g->seen = true;
	}
	return g;
}

static void life_add(struct group *g, uint64_t life)
{
	if (!g->nlife || life < g->life_min)
		g->life_min = life;
	if (!g->nlife || life > g->life_max)
		g->life_max = life;
	g->nlife++;
	g->life_log2[life_bucket(life)]++;
}

/* ---- Threads (README "Threads: what order it needs") ---------------------------------------- */

/* Makes born[] hold slot n; false without memory. */
static bool born_reserve(struct objrel *r, uint32_t n)
{
	uint32_t cap = r->nborn ? r->nborn : 1024;
	struct born *b;

	if (n < r->nborn)
		return true;
	while (cap <= n)
		if ((cap *= 2) > UINT32_MAX / 2)
			return false;
	b = realloc(r->born, (size_t)cap * sizeof(*b));
	if (!b)
		return false;
	memset(b + r->nborn, 0, (size_t)(cap - r->nborn) * sizeof(*b));
	r->born = b;
	r->nborn = cap;
	return true;
}

/* Object slot s was made now, by the thread whose events come. */
static void born_set(struct objrel *r, uint32_t s)
{
	if (born_reserve(r, s))
		r->born[s] = (struct born){ r->thread, r->clock + r->others };
	else
		r->nomem++;   /* its lifetime will be counted in its freeing thread's clock */
}

/* A second thread comes: every object so far is the first one's, made when its clock said. */
static bool threads_begin(struct objrel *r)
{
	if (!born_reserve(r, r->objs.n))
		return false;
	for (uint32_t s = 1; s <= r->objs.n; s++)
		r->born[s] = (struct born){ r->thread, mn_obj(&r->objs, s)->born };
	return true;
}

/*
 * The events of `thread` come now (mn_module.thread): its clock becomes the clock, the previous
 * thread's is parked.  Without memory the clock stays the previous thread's (nomem).
 */
static void or_thread(void *st, uint32_t thread)
{
	struct objrel *r = st;
	uint32_t need = (thread > r->thread ? thread : r->thread) + 1;

	if (thread == r->thread || !thread)
		return;
	if (!r->born && !threads_begin(r)) {
		r->nomem++;
		return;
	}
	if (need > r->nclocks) {
		uint32_t cap = need > 2 * r->nclocks ? need : 2 * r->nclocks;
		uint64_t *c = realloc(r->clocks, (size_t)cap * sizeof(*c));

		if (!c) {
			r->nomem++;
			return;
		}
		memset(c + r->nclocks, 0, (size_t)(cap - r->nclocks) * sizeof(*c));
		r->clocks = c;
		r->nclocks = cap;
	}
	r->clocks[r->thread] = r->clock;
	r->others += r->clock;
	r->clock = r->clocks[thread];
	r->others -= r->clock;
	r->thread = thread;
}

/*
 * Object slot s's lifetime if it ended now: in its thread's clock when the thread that made it
 * ends it (exact), else in the sum of every thread's clock (which counts what the backend took of
 * the other threads meanwhile: it depends on how their buffers interleaved).
 */
static uint64_t lifetime(const struct objrel *r, uint32_t s)
{
	const struct mn_obj *x = mn_obj(&r->objs, s);

	if (s >= r->nborn || r->born[s].thread == r->thread)
		return r->clock - x->born;
	return r->clock + r->others - r->born[s].at;
}

/* ---- Objects and their groups, continued ---------------------------------------------------- */

static void new_object(struct objrel *r, uint32_t site, uint64_t addr, uint64_t size,
		       enum mn_obj_kind kind)
{
	struct group *g = objrel_group_get(r, site);
	uint32_t s = 0;

	if (!g || !(s = mn_objects_alloc(&r->objs, &(struct mn_obj){ .addr = addr, .size = size,
			.kind = kind, .group = site, .serial = g->objects, .born = r->clock }))) {
		r->nomem++;
		return;
	}
	if (__builtin_expect(r->born != NULL, 0))
		born_set(r, s);
	g->kind = kind;
	g->objects++;
	g->bytes += size;
}

void objrel_end_object(struct objrel *r, uint32_t s)
{
	struct group *g = mn_sitevec_find(&r->groups, mn_obj(&r->objs, s)->group);

	if (g)
		life_add(g, lifetime(r, s));
}

void objrel_end_live(struct objrel *r, uint32_t s)
{
	const struct mn_obj *x = mn_obj(&r->objs, s);
	struct group *g = mn_sitevec_find(&r->groups, x->group);
	uint32_t t = s < r->nborn ? r->born[s].thread : r->thread;

	if (g)
		life_add(g, (t == r->thread || t >= r->nclocks ? r->clock : r->clocks[t]) - x->born);
}

static void or_heap_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	struct objrel *r = st;

	new_object(r, site, addr, size, MN_OBJ_HEAP);
	r->epoch++;
	r->clock++;
}

/* A heap object's group is its allocation context: the site with its callers (allocctx.h,
 * MNEMO_ALLOC_DEPTH), the site alone at depth 1. */
static void or_heap_alloc_context(void *st, uint32_t site, uint64_t context, uint64_t addr,
				  uint64_t size)
{
	struct objrel *r = st;

	or_heap_alloc(r, mn_allocctx_key(&r->actx, site, context), addr, size);
}

static void or_global(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	struct objrel *r = st;

	new_object(r, site, addr, size, MN_OBJ_GLOBAL);
	r->epoch++;
	r->clock++;
}

static void or_heap_realloc(void *st, uint32_t site, uint64_t old_addr, uint64_t addr,
			    uint64_t size)
{
	struct objrel *r = st;
	uint32_t s = old_addr ? mn_objects_at(&r->objs, old_addr) : 0;

	if (s)
		mn_objects_move(&r->objs, s, addr, size);
	else {
		if (old_addr)
			r->unknown_frees++;
		new_object(r, site, addr, size, MN_OBJ_HEAP);
	}
	r->epoch++;
	r->clock++;
}

static void or_heap_free(void *st, uint32_t site, uint64_t addr)
{
	struct objrel *r = st;
	uint32_t s;

	if (addr) {
		s = mn_objects_at(&r->objs, addr);
		if (s) {
			objrel_end_object(r, s);
			mn_objects_release(&r->objs, s);
		} else {
			r->unknown_frees++;
		}
	}
	r->epoch++;
	r->clock++;
}

/*
 * A stack object whose free never came (longjmp, an exception through frames without cleanups)
 * is ended when a new one starts at its address, so its slot does not stay live forever.
 */
static void or_stack_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	struct objrel *r = st;
	uint32_t s;

	if (!r->stack)
		return;
	s = mn_objects_at(&r->objs, addr);
	if (s) {
		objrel_end_object(r, s);
		mn_objects_release(&r->objs, s);
	}
	new_object(r, site, addr, size, MN_OBJ_STACK);
	r->epoch++;
	r->clock++;
}

static void or_stack_free(void *st, uint32_t site, uint64_t addr)
{
	struct objrel *r = st;
	uint32_t s;

	if (!r->stack)
		return;
	s = mn_objects_at(&r->objs, addr);
	if (s) {
		objrel_end_object(r, s);
		mn_objects_release(&r->objs, s);
	}
	r->epoch++;
	r->clock++;
}

/* ---- Accesses -------------------------------------------------------------------------------- */

struct stream *objrel_stream_of(struct objrel *r, struct insn *in, uint32_t group)
{
	struct stream *s;

	if (in->n && in->s[in->last].group == group && in->s[in->last].thread == r->thread)
		return &in->s[in->last];
	for (uint32_t i = 0; i < in->n; i++)
		if (in->s[i].group == group && in->s[i].thread == r->thread) {
			in->last = i;
			return &in->s[i];
		}
	if (in->n == in->alloc) {
		uint32_t a = in->alloc ? 2 * in->alloc : 2;

		s = realloc(in->s, (size_t)a * sizeof(*s));
		if (!s)
			return NULL;
		in->s = s;
		in->alloc = a;
	}
	s = &in->s[in->n];
	s->group = group;
	s->thread = r->thread;
	s->run = 0;
	objrel_lmads_init(&s->l, r->limit);
	in->last = in->n++;
	return s;
}

/*
 * Lossless mode: one access to every grammar.  All memory an append needs is reserved before it
 * changes anything, but a failure after the first grammar took the access would leave the streams
 * of unequal lengths; so the first failure stops every append (`complete: false`).
 */
static void lossless_add(struct objrel *r, uint32_t site, uint64_t addr,
			 const struct mn_obj *x)
{
	struct lossless *ll = r->ll;
	uint64_t v[LL_STREAMS] = { site, x->group, x->serial, addr - x->addr };

	if (ll->broken)
		return;
	for (int i = 0; i < LL_STREAMS; i++)
		if (mn_seq_append(ll->g[i], v[i])) {
			ll->broken = true;
			return;
		}
	if (mn_seq_append(ll->raw, addr))
		ll->broken = true;
}

/* The one handler behind load and store: translate, decompose, compress. */
void objrel_on_access(struct objrel *r, uint32_t site, uint64_t addr, bool store)
{
	struct insn *in = mn_sitevec_get(&r->insns, site);
	uint64_t t = r->clock++;
	struct mn_obj *x;
	struct stream *s;
	uint32_t slot;
	uint64_t p[OBJREL_LMAD_DIMS];

	if (!in) {
		r->nomem++;
		return;
	}
	in->site = site;
	in->store = store;
	in->accesses++;
	slot = mn_objects_find(&r->objs, addr);
	if (!slot) {
		in->unattributed++;
		if (r->ll)
			r->ll->unattributed++;
		return;
	}
	x = mn_obj(&r->objs, slot);
	if (r->ll)
		lossless_add(r, site, addr, x);
	s = objrel_stream_of(r, in, x->group);
	if (!s) {
		r->nomem++;
		return;
	}
	p[0] = x->serial;
	p[1] = addr - x->addr;
	objrel_lmads_add(&s->l, p, t);
}

static void or_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	objrel_on_access(st, site, addr, false);
}

static void or_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	objrel_on_access(st, site, addr, true);
}

/* ---- A group's lifetimes, as emit() prints them ---------------------------------------------- */

/*
 * The lower median of a group's lifetimes, estimated from its histogram in integers: the bucket
 * holding it, clipped to [min, max], split evenly among its objects (README "Merging").
 */
uint64_t objrel_life_median(const struct group *g)
{
	uint64_t rank = (g->nlife - 1) / 2, below = 0, lo, hi, j, c;
	unsigned b;

	for (b = 0; b < LIFE_BUCKETS - 1 && rank >= below + g->life_log2[b]; b++)
		below += g->life_log2[b];
	lo = b ? (uint64_t)1 << (b - 1) : 0;
	hi = !b ? 0 : b == 64 ? UINT64_MAX : ((uint64_t)1 << b) - 1;
	if (lo < g->life_min)
		lo = g->life_min;
	if (hi > g->life_max)
		hi = g->life_max;
	j = rank - below;
	c = g->life_log2[b];
	if (hi < lo || !c)    /* not for a histogram that agrees with min and max */
		return lo;
	return lo + (uint64_t)((unsigned __int128)(hi - lo) * (2 * j + 1) / (2 * c));
}

/* ---- init(), fini(), the settings ------------------------------------------------------------ */

void objrel_lossless_free(struct lossless *ll)
{
	if (!ll)
		return;
	for (int i = 0; i < LL_STREAMS; i++)
		mn_seq_destroy(ll->g[i]);
	mn_seq_destroy(ll->raw);
	free(ll);
}

/* The grammars of lossless mode in *llp, or NULL without it.  0 or -ENOMEM. */
static int lossless_init(struct lossless **llp, bool lossless)
{
	struct lossless *ll;
	int err = 0;

	*llp = NULL;
	if (!lossless)
		return 0;
	ll = calloc(1, sizeof(*ll));
	if (!ll)
		return -ENOMEM;
	for (int i = 0; i < LL_STREAMS && !err; i++)
		err = mn_seq_create(&ll->g[i]);
	if (!err)
		err = mn_seq_create(&ll->raw);
	if (err) {
		objrel_lossless_free(ll);
		return err;
	}
	*llp = ll;
	return 0;
}

static int or_init(void *st, const struct mn_run *run)
{
	struct objrel *r = st;
	uint32_t nsites = run ? mn_run_site_count(run) : 0;
	int err;

	err = mn_module_options(&mn_module_object_relative, r);
	if (err)
		return err;
	r->limit = (uint32_t)r->opt_lmads;
	r->epoch = 1;   /* zeroed checks are stale */
	r->thread = 1;
	err = lossless_init(&r->ll, r->opt_lossless);
	if (err)
		return err;
	err = mn_objects_init(&r->objs);
	if (err) {
		objrel_lossless_free(r->ll);
		return err;
	}
	mn_allocctx_init(&r->actx, nsites);
	if (mn_sitevec_init(&r->groups, sizeof(struct group), nsites) ||
	    mn_sitevec_init(&r->insns, sizeof(struct insn), nsites)) {
		mn_sitevec_free(&r->groups);
		mn_objects_free(&r->objs);
		objrel_lossless_free(r->ll);
		return -ENOMEM;
	}
	return 0;
}

static void or_fini(void *st)
{
	struct objrel *r = st;
	struct insn *in;

	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		for (uint32_t i = 0; i < in->n; i++)
			objrel_lmads_free(&in->s[i].l);
		free(in->s);
	}
	mn_sitevec_free(&r->groups);
	mn_allocctx_fini(&r->actx);
	mn_vec_free(&r->rows);
	mn_sitevec_free(&r->insns);
	mn_objects_free(&r->objs);
	objrel_lossless_free(r->ll);
	free(r->runs);
	free(r->checks);
	free(r->clocks);
	free(r->born);
}

/* The settings (module.h): a bad value stops the module at init() with one line saying why. */
static const struct mn_option or_options[] = {
	{ .env = "MNEMO_OBJREL_LMADS", .type = MN_OPT_UINT, .def = STR(OBJREL_LMAD_LIMIT),
	  .offset = offsetof(struct objrel, opt_lmads), .min = 1, .max = LMADS_MAX,
	  .doc = "LMADs kept per (instruction, group) stream" },
	{ .env = "MNEMO_OBJREL_LOSSLESS", .type = MN_OPT_BOOL, .def = "0",
	  .offset = offsetof(struct objrel, opt_lossless),
	  .doc = "also Sequitur grammars of the whole access stream (WHOMP; `mnemo expand`)" },
	{ .env = "MNEMO_OBJREL_STACK", .type = MN_OPT_BOOL, .def = "0",
	  .offset = offsetof(struct objrel, stack),
	  .doc = "stack variables are objects too (else their accesses are unattributed)" },
	{ .env = NULL },
};

static const char *const or_settings[] = { "lmad_limit", "stack_objects", NULL };

/* The object table's shadow, where every load and store looks its address up: the driver
 * prefetches it ahead (mn_module.shadow). */
static struct mn_shadow *or_shadow(void *st)
{
	return ((struct objrel *)st)->objs.sh;
}

const struct mn_module mn_module_object_relative = {
	.name = "object-relative",
	.doc = "object-relative accesses (instruction, group, object, offset) as LMADs; lifetimes",
	.state_size = sizeof(struct objrel),
	.shard = MN_SHARD_NONE,
	.thread = or_thread,
	.init = or_init,
	.fini = or_fini,
	.load = or_load,
	.store = or_store,
	.heap_alloc = or_heap_alloc,
	.heap_alloc_context = or_heap_alloc_context,
	.heap_realloc = or_heap_realloc,
	.heap_free = or_heap_free,
	.stack_alloc = or_stack_alloc,
	.stack_free = or_stack_free,
	.global = or_global,
	.loop_summary = objrel_loop_summary,
	.merge = objrel_merge,
	.shadow = or_shadow,
	.emit = objrel_emit,
	.restore = objrel_restore,
	.schema = &objrel_section,
	.settings = or_settings,
	.options = or_options,
};
