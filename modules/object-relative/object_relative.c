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
 */
#define _GNU_SOURCE   /* open_memstream */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "lmad.h"
#include "module.h"
#include "objects.h"
#include "sequitur.h"
#include "sitevec.h"

#define LMADS_MAX 1000000u
#define STR_(x) #x
#define STR(x) STR_(x)   /* the value of macro x as a string: an option's default */

extern const struct mn_module mn_module_object_relative;   /* init() reads its options */

/* A group's kind is its objects' (objects.h). */
static const char *const kind_names[] = {
	[MN_OBJ_HEAP] = "heap", [MN_OBJ_STACK] = "stack", [MN_OBJ_GLOBAL] = "global"
};

/* Lifetime buckets: 0 for lifetime 0, b for lifetimes in [2^(b-1), 2^b), up to b = 64. */
#define LIFE_BUCKETS 65

struct group {
	uint32_t site;
	bool seen;
	enum mn_obj_kind kind;
	uint64_t objects, bytes;     /* objects made, sum of their sizes when made */
	/* Lifetimes of its objects so far (freed, then live at end): a log2 histogram, which adds
	 * across runs, where a list for the exact median would not merge (README "Merging"). */
	uint64_t nlife, life_min, life_max;
	uint64_t life_log2[LIFE_BUCKETS];
};

struct stream {
	uint32_t group;
	uint32_t run;                /* index in the state's runs: streams of runs never join */
	struct objrel_lmads l;
};

/* A run the state holds: `runs:` of the section (README "Merging"). */
struct run_id {
	uint64_t key;                /* FNV-1a 64 over the run's state (run_key()) */
	uint64_t events;             /* its clock at the end */
};

struct insn {
	uint32_t site;
	bool store;
	uint64_t accesses, unattributed;
	struct stream *s;            /* s[0..n): one per group it touched, in order of first touch */
	uint32_t n, alloc;
	uint32_t last;               /* index of the stream used last: the cheap guess */
};

/* The horizontal streams of lossless mode, in the order of the profile's `lossless.streams`. */
enum { LL_INSN, LL_GROUP, LL_OBJECT, LL_OFFSET, LL_STREAMS };

static const char *const ll_names[LL_STREAMS] = { "instruction", "group", "object", "offset" };

struct lossless {
	struct mn_seq *g[LL_STREAMS];  /* the four streams' grammars */
	struct mn_seq *raw;            /* the raw addresses of the same accesses */
	uint64_t unattributed;         /* accesses left out: no object holds their address */
	bool broken;                   /* an append failed: appending stopped, the streams end early */
};

/*
 * What loop summaries learnt of the object in one slot, true while `epoch` is the state's: no
 * object was made, moved or released since, so every address finds what it found then.
 */
struct objcheck {
	uint64_t epoch;              /* the state's epoch when written; older: stale, start over */
	uint64_t spent;              /* addresses of it looked up one by one in that epoch */
	int8_t whole;                /* 1: each byte of it finds it; -1: some byte does not; 0: ? */
};

struct objrel {
	struct mn_objects objs;
	struct lossless *ll;         /* NULL unless MNEMO_OBJREL_LOSSLESS=1 */
	struct mn_sitevec groups;    /* struct group by site id */
	struct mn_sitevec insns;     /* struct insn by site id */
	uint64_t clock;
	uint32_t limit;              /* LMADs per (instruction, group) */
	bool stack;                  /* MNEMO_OBJREL_STACK=1: stack objects are objects */
	/* The settings as read (or_options); limit and stack are the run's, restore() sets them. */
	uint64_t opt_lmads;
	bool opt_lossless;
	uint64_t nomem;              /* events dropped for lack of memory */
	uint64_t unknown_frees;      /* frees and reallocs of addresses no object starts at */
	bool finalized;              /* live objects ended, streams sorted: no more events */
	/* Loop summaries: what they checked of each object (by slot), valid for one epoch. */
	uint64_t epoch;              /* bumped by every event that may change the object table */
	struct objcheck *checks;     /* by slot, checks[0..nchecks); grown on demand */
	uint32_t nchecks;
	/* The runs: none for the state of a live run (emit() makes its one), else restore()'s or
	 * merge()'s, sorted by key then events; streams' `run` index into it. */
	struct run_id *runs;
	uint32_t nruns;
};

static struct group *group_get(struct objrel *r, uint32_t site)
{
	struct group *g = mn_sitevec_get(&r->groups, site);

	if (g) {
		g->site = site;
		g->seen = true;
	}
	return g;
}

static unsigned life_bucket(uint64_t life)
{
	return life ? 64 - (unsigned)__builtin_clzll(life) : 0;
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

static void new_object(struct objrel *r, uint32_t site, uint64_t addr, uint64_t size,
		       enum mn_obj_kind kind)
{
	struct group *g = group_get(r, site);

	if (!g || !mn_objects_alloc(&r->objs, &(struct mn_obj){ .addr = addr, .size = size,
			.kind = kind, .group = site, .serial = g->objects, .born = r->clock })) {
		r->nomem++;
		return;
	}
	g->kind = kind;
	g->objects++;
	g->bytes += size;
}

static void end_object(struct objrel *r, uint32_t s)
{
	struct mn_obj *x = mn_obj(&r->objs, s);
	struct group *g = mn_sitevec_find(&r->groups, x->group);

	if (g)
		life_add(g, r->clock - x->born);
}

static void or_heap_alloc(void *st, uint32_t site, uint64_t addr, uint64_t size)
{
	struct objrel *r = st;

	new_object(r, site, addr, size, MN_OBJ_HEAP);
	r->epoch++;
	r->clock++;
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
			end_object(r, s);
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
		end_object(r, s);
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
		end_object(r, s);
		mn_objects_release(&r->objs, s);
	}
	r->epoch++;
	r->clock++;
}

static struct stream *stream_of(struct objrel *r, struct insn *in, uint32_t group)
{
	struct stream *s;

	if (in->n && in->s[in->last].group == group)
		return &in->s[in->last];
	for (uint32_t i = 0; i < in->n; i++)
		if (in->s[i].group == group) {
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
static void on_access(struct objrel *r, uint32_t site, uint64_t addr, bool store)
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
	s = stream_of(r, in, x->group);
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
	on_access(st, site, addr, false);
}

static void or_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, true);
}

/* ---- Loop summaries ---------------------------------------------------------------------------
 *
 * A summary stands for its expansion (module.h): iterations times, each access j in order, at
 * (start_j + k * step_j) & (2^48 - 1), k the iteration; object-relative declares no loop event, so
 * the expansion is those accesses alone, and on_access() stamps them with the clock: access j of
 * iteration k at t0 + k * n + j.  No object is made or released within a summary, so access j's
 * points depend on no other access, and an access whose site no other access of the summary has
 * is its own (instruction, group) streams: each access is taken whole, in turn, with its times.
 *
 * An access's addresses are an arithmetic progression of step d (step's low 48 bits, sign
 * extended) while they do not wrap around 2^48.  Taken in runs: from iteration k, the run is the
 * iterations whose addresses stay inside the object that address k's lookup found (offsets
 * offset_k + i * d in one object: one objrel_lmads_add_run(), O(1)), or outside the range the
 * object table's filter covers (unattributed, a count).  A run in an object holds only when each
 * of its addresses finds that object: true of a byte inside it unless a granule it shares went
 * to a later object or to no one (objects.h), so each address is looked up (one shadow load),
 * until the lookups spent on the object in this epoch reach its granules; then the whole object
 * is checked once, and while no object changes, every run in it is O(1).
 *
 * Taken access by access through on_access() instead (exact by definition): everything in lossless
 * mode (the grammars take the accesses interleaved, one by one), and a summary in which two
 * accesses share a site (their points interleave in one stream).
 */

#define ADDR_BITS 48
#define ADDR_LIMIT (UINT64_C(1) << ADDR_BITS)   /* addresses are 48 bits on the wire */
#define ADDR_MASK (ADDR_LIMIT - 1)

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Do two accesses of the summary share a site?  True also when it cannot tell (no memory). */
static bool sites_repeat(const struct mn_summary_access *acc, unsigned n)
{
	uint32_t *v;
	bool rep = false;

	if (n <= 16) {
		for (unsigned i = 1; i < n; i++)
			for (unsigned j = 0; j < i; j++)
				if (acc[i].site == acc[j].site)
					return true;
		return false;
	}
	v = malloc(n * sizeof(*v));
	if (!v)
		return true;
	for (unsigned i = 0; i < n; i++)
		v[i] = acc[i].site;
	qsort(v, n, sizeof(*v), cmp_u32);
	for (unsigned i = 1; i < n && !rep; i++)
		rep = v[i] == v[i - 1];
	free(v);
	return rep;
}

/* The object's extent as lookups see it, [x->addr, end), cut at 2^48. */
static uint64_t obj_end(const struct mn_obj *x)
{
	uint64_t len = x->size ? x->size : 1;

	return x->addr >= ADDR_LIMIT || len >= ADDR_LIMIT - x->addr ? ADDR_LIMIT : x->addr + len;
}

/* Slot s's checks, fresh for this epoch; NULL without memory (then every address is looked up). */
static struct objcheck *objcheck(struct objrel *r, uint32_t s)
{
	struct objcheck *c;

	if (s >= r->nchecks) {
		uint32_t n = r->objs.cap > s ? r->objs.cap : s + 1;

		c = realloc(r->checks, (size_t)n * sizeof(*c));
		if (!c)
			return NULL;
		memset(c + r->nchecks, 0, (size_t)(n - r->nchecks) * sizeof(*c));
		r->checks = c;
		r->nchecks = n;
	}
	c = &r->checks[s];
	if (c->epoch != r->epoch)
		*c = (struct objcheck){ .epoch = r->epoch };
	return c;
}

/* Does every byte of object s find it?  One shadow load per granule, bytes only where one is
 * another's. */
static bool object_whole(const struct objrel *r, uint32_t s)
{
	const struct mn_obj *x = mn_obj(&r->objs, s);
	uint64_t end = obj_end(x);

	for (uint64_t g = x->addr & ~UINT64_C(7); g < end; g += 8) {
		if (mn_objects_find_granule(&r->objs, g) == s)
			continue;
		for (uint64_t b = g > x->addr ? g : x->addr; b < g + 8 && b < end; b++)
			if (mn_objects_find(&r->objs, b) != s)
				return false;
	}
	return true;
}

/*
 * How many of the m addresses a + i * d (all inside object s's extent, a found s) find s: m when
 * the object is known whole, else the count before the first that does not.
 */
static uint64_t run_finds(struct objrel *r, uint32_t s, uint64_t a, int64_t d, uint64_t m)
{
	struct objcheck *c;
	const struct mn_obj *x;

	if (m == 1 || d == 0)
		return m;
	c = objcheck(r, s);
	if (c && c->whole > 0)
		return m;
	if (c && !c->whole) {
		x = mn_obj(&r->objs, s);
		if (c->spent + m >= (obj_end(x) - (x->addr & ~UINT64_C(7)) + 7) / 8) {
			c->whole = object_whole(r, s) ? 1 : -1;
			if (c->whole > 0)
				return m;
		}
	}
	if (c)
		c->spent += m;
	for (uint64_t i = 1; i < m; i++)
		if (mn_objects_find(&r->objs, a + i * (uint64_t)d) != s)
			return i;
	return m;
}

/*
 * Of the left addresses a + i * d from a, inside object s: how many form one run in it (at least
 * one, a itself), and their points added to the access's stream at times t + i * dt.
 */
static uint64_t run_in_object(struct objrel *r, struct insn *in, uint32_t s, uint64_t a,
			      int64_t d, uint64_t left, uint64_t t, uint64_t dt)
{
	const struct mn_obj *x = mn_obj(&r->objs, s);
	uint64_t m = left, p[OBJREL_LMAD_DIMS];
	int64_t dp[OBJREL_LMAD_DIMS] = { 0, d };
	struct stream *st;

	if (a < x->addr || a >= obj_end(x))
		m = 1;   /* an extent wrapping around 2^64: offsets would wrap, one point at a time */
	else if (d > 0)
		m = (obj_end(x) - 1 - a) / (uint64_t)d + 1;
	else if (d < 0)
		m = (a - x->addr) / -(uint64_t)d + 1;
	if (m > left)
		m = left;
	m = run_finds(r, s, a, d, m);
	x = mn_obj(&r->objs, s);
	st = stream_of(r, in, x->group);
	if (!st) {
		r->nomem += m;
		return m;
	}
	p[0] = x->serial;
	p[1] = a - x->addr;
	objrel_lmads_add_run(&st->l, p, dp, m, t, dt);
	return m;
}

/*
 * Of the left addresses a + i * d from a, which found no object: how many are unattributed in
 * one run.  Outside the table's filter [lo, lo + span) every address finds none: the run lasts
 * until the progression enters it or would wrap around 2^48.  Inside it, a alone.
 */
static uint64_t run_outside(const struct objrel *r, uint64_t a, int64_t d, uint64_t left)
{
	uint64_t lo = r->objs.lo, hi = lo + r->objs.span, m = left, u;

	if (a - lo < r->objs.span)
		return 1;
	if (d > 0) {
		u = a < lo && lo < ADDR_LIMIT ? lo : ADDR_LIMIT;   /* the first one not allowed */
		m = (u - a + (uint64_t)d - 1) / (uint64_t)d;
	} else if (d < 0) {
		u = a >= hi && r->objs.span ? hi : 0;   /* the lowest address allowed */
		m = (a - u) / -(uint64_t)d + 1;
	}
	return m < left ? m : left;
}

/* Access a of a summary, whole: iterations points, the i-th at time t + i * dt. */
static void summary_access(struct objrel *r, const struct mn_summary_access *a, uint64_t iters,
			   uint64_t t, uint64_t dt)
{
	struct insn *in = mn_sitevec_get(&r->insns, a->site);
	/* The step modulo 2^48, as the signed distance between consecutive masked addresses. */
	const int64_t d = (int64_t)((uint64_t)a->step << (64 - ADDR_BITS)) >> (64 - ADDR_BITS);
	uint64_t k = 0;

	if (!in) {
		r->nomem += iters;
		return;
	}
	in->site = a->site;
	in->store = a->store;
	in->accesses += iters;
	while (k < iters) {
		uint64_t addr = (a->start + k * (uint64_t)a->step) & ADDR_MASK;
		uint32_t s = mn_objects_find(&r->objs, addr);
		uint64_t m;

		if (s) {
			m = run_in_object(r, in, s, addr, d, iters - k, t + k * dt, dt);
		} else {
			m = run_outside(r, addr, d, iters - k);
			in->unattributed += m;
		}
		k += m;
	}
}

/* The summary as its expansion, access by access: exact whatever the accesses. */
static void summary_expand(struct objrel *r, uint64_t iters, const struct mn_summary_access *acc,
			   unsigned n)
{
	for (uint64_t k = 0; k < iters; k++)
		for (unsigned j = 0; j < n; j++) {
			uint64_t addr = (acc[j].start + k * (uint64_t)acc[j].step) & ADDR_MASK;

			on_access(r, acc[j].site, addr, acc[j].store);
		}
}

/*
 * A summarized loop: the state its expansion would leave (module.h), in O(accesses) for an access
 * that stays in one object or outside every object, more where a run must be cut (see above).
 */
static void or_loop_summary(void *st, uint32_t site, uint64_t iterations,
			    const struct mn_summary_access *acc, unsigned n)
{
	struct objrel *r = st;
	uint64_t t0 = r->clock;

	if (!n || !iterations)
		return;
	if (r->ll || sites_repeat(acc, n)) {
		summary_expand(r, iterations, acc, n);
		return;
	}
	for (unsigned j = 0; j < n; j++)
		summary_access(r, &acc[j], iterations, t0 + j, n);
	r->clock = t0 + iterations * n;
}

static void lossless_free(struct lossless *ll)
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
		lossless_free(ll);
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
	err = lossless_init(&r->ll, r->opt_lossless);
	if (err)
		return err;
	err = mn_objects_init(&r->objs);
	if (err) {
		lossless_free(r->ll);
		return err;
	}
	if (mn_sitevec_init(&r->groups, sizeof(struct group), nsites) ||
	    mn_sitevec_init(&r->insns, sizeof(struct insn), nsites)) {
		mn_sitevec_free(&r->groups);
		mn_objects_free(&r->objs);
		lossless_free(r->ll);
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
	mn_sitevec_free(&r->insns);
	mn_objects_free(&r->objs);
	lossless_free(r->ll);
	free(r->runs);
	free(r->checks);
}

/* Streams by group, then run: within an instruction a total order (one stream per pair). */
static int by_group(const void *a, const void *b)
{
	const struct stream *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->run < y->run ? -1 : x->run > y->run;
}

/*
 * The end of the run, once: objects alive at the end live until the end (their lifetimes join
 * their groups'), and streams go in emit order.  Globals cannot be released, hence the flag.
 */
static void finalize(struct objrel *r)
{
	struct insn *in;

	if (r->finalized)
		return;
	r->finalized = true;
	for (uint32_t s = 1; s <= r->objs.n; s++)
		if (mn_obj(&r->objs, s)->live)
			end_object(r, s);
	MN_SITEVEC_FOREACH(&r->insns, id, in)
		if (in->n > 1)   /* s is NULL while empty, and qsort's base must not be */
			qsort(in->s, in->n, sizeof(*in->s), by_group);
}

/* ---- A run's key: FNV-1a 64 over its state, in emit order ---------------------------------- */

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 0x100000001b3u;
	}
	return h;
}

/* Everything a live run's section holds but its key, so equal keys mean equal runs. */
static uint64_t run_key(const struct objrel *r)
{
	uint64_t h = 0xcbf29ce484222325u;
	const struct group *g;
	const struct insn *in;

	h = fnv_u64(h, r->clock);
	h = fnv_u64(h, r->objs.aliases);
	h = fnv_u64(h, r->nomem);
	h = fnv_u64(h, r->unknown_frees);
	MN_SITEVEC_FOREACH(&r->groups, id, g) {
		if (!g->seen)
			continue;
		h = fnv_u64(h, g->site);
		h = fnv_u64(h, g->kind);
		h = fnv_u64(h, g->objects);
		h = fnv_u64(h, g->bytes);
		h = fnv_u64(h, g->nlife);
		h = fnv_u64(h, g->life_min);
		h = fnv_u64(h, g->life_max);
		for (int b = 0; b < LIFE_BUCKETS; b++)
			h = fnv_u64(h, g->life_log2[b]);
	}
	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		h = fnv_u64(h, in->site);
		h = fnv_u64(h, in->store);
		h = fnv_u64(h, in->accesses);
		h = fnv_u64(h, in->unattributed);
		for (uint32_t i = 0; i < in->n; i++) {
			const struct objrel_lmads *l = &in->s[i].l;

			h = fnv_u64(h, in->s[i].group);
			h = fnv_u64(h, l->points);
			h = fnv_u64(h, l->captured);
			h = fnv_u64(h, l->full);
			h = fnv_u64(h, l->nomem);
			for (int d = 0; d < OBJREL_LMAD_DIMS; d++) {
				h = fnv_u64(h, l->min[d]);
				h = fnv_u64(h, l->max[d]);
				h = fnv_u64(h, l->gran[d]);
			}
			for (uint32_t k = 0; k < l->n; k++) {
				const struct objrel_lmad *m = &l->v[k];

				for (int d = 0; d < OBJREL_LMAD_DIMS; d++) {
					h = fnv_u64(h, m->start[d]);
					h = fnv_u64(h, (uint64_t)m->stride[d]);
				}
				h = fnv_u64(h, m->count);
				h = fnv_u64(h, m->first);
				h = fnv_u64(h, m->last);
			}
		}
	}
	return h;
}

/* A live run's state becomes a state of one run, with its key.  0 or -ENOMEM. */
static int runs_materialize(struct objrel *r)
{
	if (r->nruns)
		return 0;
	finalize(r);
	r->runs = malloc(sizeof(*r->runs));
	if (!r->runs)
		return -ENOMEM;
	r->runs[0] = (struct run_id){ run_key(r), r->clock };
	r->nruns = 1;
	return 0;
}

/*
 * The lower median of a group's lifetimes, estimated from its histogram in integers: the bucket
 * holding it, clipped to [min, max], split evenly among its objects (README "Merging").
 */
static uint64_t life_median(const struct group *g)
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

static void emit_lmad(struct mn_prof *p, const struct objrel_lmad *l)
{
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "object", l->start[0]);
	mn_prof_kv_u64(p, "offset", l->start[1]);
	mn_prof_kv_i64(p, "object_stride", l->stride[0]);
	mn_prof_kv_i64(p, "offset_stride", l->stride[1]);
	mn_prof_kv_u64(p, "count", l->count);
	mn_prof_kv_u64(p, "first_time", l->first);
	mn_prof_kv_u64(p, "last_time", l->last);
	mn_prof_map_end(p);
}

static void emit_stream(struct mn_prof *p, const struct stream *s, bool runs)
{
	const struct objrel_lmads *l = &s->l;

	mn_prof_map_begin(p);
	mn_prof_kv_site(p, "group", s->group);
	if (runs)
		mn_prof_kv_u64(p, "run", s->run);
	mn_prof_kv_u64(p, "accesses", l->points);
	mn_prof_kv_u64(p, "captured", l->captured);
	mn_prof_kv_bool(p, "full", l->full);
	mn_prof_kv_u64(p, "object_min", l->min[0]);
	mn_prof_kv_u64(p, "object_max", l->max[0]);
	mn_prof_kv_u64(p, "object_granularity", l->gran[0]);
	mn_prof_kv_u64(p, "offset_min", l->min[1]);
	mn_prof_kv_u64(p, "offset_max", l->max[1]);
	mn_prof_kv_u64(p, "offset_granularity", l->gran[1]);
	mn_prof_key(p, "lmads");
	mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < l->n; i++)
		emit_lmad(p, &l->v[i]);
	mn_prof_seq_end(p);
	mn_prof_map_end(p);
}

/* One rule as the text mn_seq_write() writes for it ("R1 -> 18 3 R2"), as a string of the list. */
static int emit_rule(void *arg, uint64_t id, const struct mn_seq_sym *rhs, size_t n)
{
	struct mn_prof *p = arg;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -ENOMEM;
	fprintf(f, "R%" PRIu64 " ->", id);
	for (size_t i = 0; i < n; i++)
		fprintf(f, rhs[i].rule ? " R%" PRIu64 : " %" PRIu64, rhs[i].value);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	mn_prof_str(p, text);
	free(text);
	return 0;
}

/* A grammar whose rules could not all be listed (no memory) has a list that does not parse or
 * does not give `length` symbols: `mnemo expand` refuses it. */
static void emit_grammar(struct mn_prof *p, const char *name, struct mn_seq *g)
{
	mn_prof_key(p, name);
	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "length", mn_seq_length(g));
	mn_prof_kv_u64(p, "rules", mn_seq_rules_count(g));
	mn_prof_kv_u64(p, "size", mn_seq_size(g));
	mn_prof_key(p, "grammar");
	mn_prof_seq_begin(p);
	mn_seq_rules(g, emit_rule, p);
	mn_prof_seq_end(p);
	mn_prof_map_end(p);
}

static void emit_lossless(struct mn_prof *p, struct objrel *r)
{
	struct lossless *ll = r->ll;
	uint64_t total = 0, raw = mn_seq_size(ll->raw);

	for (int i = 0; i < LL_STREAMS; i++)
		total += mn_seq_size(ll->g[i]);
	mn_prof_key(p, "lossless");
	mn_prof_map_begin(p);
	mn_prof_kv_bool(p, "complete", !ll->broken);
	mn_prof_kv_u64(p, "accesses", mn_seq_length(ll->g[LL_INSN]));
	mn_prof_kv_u64(p, "unattributed", ll->unattributed);
	mn_prof_kv_u64(p, "grammar_size", total);
	mn_prof_kv_u64(p, "raw_address_grammar_size", raw);
	mn_prof_kv_f64(p, "size_ratio", raw ? (double)total / (double)raw : 0.0);
	mn_prof_key(p, "streams");
	mn_prof_map_begin(p);
	for (int i = 0; i < LL_STREAMS; i++)
		emit_grammar(p, ll_names[i], ll->g[i]);
	mn_prof_map_end(p);
	mn_prof_map_end(p);
}

static double fraction(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

static int or_emit(void *st, struct mn_prof *p)
{
	struct objrel *r = st;
	uint64_t accesses = 0, captured = 0, ninsns = 0, full_insns = 0, nomem = r->nomem;
	struct group *g;
	struct insn *in;
	char key[17];

	finalize(r);
	if (runs_materialize(r))
		return -ENOMEM;
	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		uint64_t c = 0;

		for (uint32_t i = 0; i < in->n; i++) {
			c += in->s[i].l.captured;
			nomem += in->s[i].l.nomem;
		}
		accesses += in->accesses;
		captured += c;
		ninsns++;
		full_insns += c == in->accesses;
	}

	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "lmad_limit", r->limit);
	mn_prof_kv_bool(p, "stack_objects", r->stack);
	mn_prof_kv_u64(p, "events", r->clock);
	mn_prof_key(p, "runs");
	mn_prof_seq_begin(p);
	for (uint32_t i = 0; i < r->nruns; i++) {
		snprintf(key, sizeof(key), "%016" PRIx64, r->runs[i].key);
		mn_prof_map_begin_flow(p);
		mn_prof_kv_str(p, "key", key);
		mn_prof_kv_u64(p, "events", r->runs[i].events);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	mn_prof_key(p, "sample_quality");
	mn_prof_map_begin(p);
	mn_prof_kv_u64(p, "accesses", accesses);
	mn_prof_kv_u64(p, "captured_accesses", captured);
	mn_prof_kv_f64(p, "captured_fraction", fraction(captured, accesses));
	mn_prof_kv_u64(p, "instructions", ninsns);
	mn_prof_kv_u64(p, "captured_instructions", full_insns);
	mn_prof_kv_f64(p, "instruction_fraction", fraction(full_insns, ninsns));
	mn_prof_map_end(p);
	mn_prof_key(p, "lost");
	mn_prof_map_begin_flow(p);
	mn_prof_kv_u64(p, "aliased_granules", r->objs.aliases);
	mn_prof_kv_u64(p, "nomem", nomem);
	mn_prof_kv_u64(p, "unknown_frees", r->unknown_frees);
	mn_prof_map_end(p);

	mn_prof_key(p, "groups");
	mn_prof_seq_begin(p);
	MN_SITEVEC_FOREACH(&r->groups, id, g) {
		if (!g->seen)
			continue;
		mn_prof_map_begin_flow(p);
		mn_prof_kv_site(p, "group", g->site);
		mn_prof_kv_str(p, "kind", kind_names[g->kind]);
		mn_prof_kv_u64(p, "objects", g->objects);
		mn_prof_kv_u64(p, "bytes", g->bytes);
		if (g->nlife) {
			unsigned last = life_bucket(g->life_max);

			mn_prof_kv_u64(p, "lifetime_min", g->life_min);
			mn_prof_kv_u64(p, "lifetime_median", life_median(g));
			mn_prof_kv_u64(p, "lifetime_max", g->life_max);
			mn_prof_key(p, "lifetime_log2");
			mn_prof_seq_begin_flow(p);
			for (unsigned b = 0; b <= last; b++)
				mn_prof_u64(p, g->life_log2[b]);
			mn_prof_seq_end(p);
		}
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);

	mn_prof_key(p, "instructions");
	mn_prof_seq_begin(p);
	MN_SITEVEC_FOREACH(&r->insns, id, in) {
		mn_prof_map_begin(p);
		mn_prof_kv_site(p, "site", in->site);
		mn_prof_kv_str(p, "access", in->store ? "store" : "load");
		mn_prof_kv_u64(p, "accesses", in->accesses);
		mn_prof_kv_u64(p, "unattributed", in->unattributed);
		mn_prof_key(p, "streams");
		mn_prof_seq_begin(p);
		for (uint32_t i = 0; i < in->n; i++)
			emit_stream(p, &in->s[i], r->nruns > 1);
		mn_prof_seq_end(p);
		mn_prof_map_end(p);
	}
	mn_prof_seq_end(p);
	if (r->ll)
		emit_lossless(p, r);
	mn_prof_map_end(p);
	return 0;
}

/* ---- restore(): a state from a section as or_emit() wrote it ------------------------------- */

struct rctx {
	const struct mn_profile *prof;
	char *err;
	size_t errlen;
};

static int ru64(struct rctx *c, const struct mn_pnode *m, const char *key, uint64_t *v)
{
	return mn_pfield_u64(c->prof, m, key, v, c->err, c->errlen);
}

static int ru32(struct rctx *c, const struct mn_pnode *m, const char *key, uint32_t *v)
{
	return mn_pfield_u32(c->prof, m, key, v, c->err, c->errlen);
}

static const struct mn_pnode *rseq(struct rctx *c, const struct mn_pnode *m, const char *key)
{
	return mn_pfield_node(c->prof, m, key, MN_PNODE_SEQ, c->err, c->errlen);
}

/* A violated constraint of the schema at node n: -EINVAL, "file:line:col: field 'key': ...". */
#define BAD(c, n, key, ...)                                                                     \
	mn_pnode_errorf((c)->prof, (n), (c)->err, (c)->errlen, "field '" key "': " __VA_ARGS__)

static int restore_runs(struct objrel *r, struct rctx *c, const struct mn_pnode *sec)
{
	const struct mn_pnode *runs = rseq(c, sec, "runs");
	size_t n = mn_pnode_len(runs);
	int e;

	if (!runs)
		return -EINVAL;
	if (!n)
		return BAD(c, runs, "runs", "expected at least one run");
	r->runs = calloc(n, sizeof(*r->runs));
	if (!r->runs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct mn_pnode *row = mn_pnode_at(runs, i);
		struct run_id *x = &r->runs[i];
		const char *key;
		char *end;

		e = mn_pfield_str(c->prof, row, "key", &key, c->err, c->errlen);
		if (e)
			return e;
		x->key = strtoull(key, &end, 16);
		if (strlen(key) != 16 || *end || strspn(key, "0123456789abcdef") != 16)
			return BAD(c, mn_pnode_get(row, "key"), "key",
				   "expected 16 lowercase hex digits, found '%s'", key);
		e = ru64(c, row, "events", &x->events);
		if (e)
			return e;
		if (i && (x->key < x[-1].key || (x->key == x[-1].key && x->events < x[-1].events)))
			return BAD(c, row, "runs", "not sorted by key, then events");
		r->nruns = (uint32_t)i + 1;
	}
	if (n > UINT32_MAX)
		return BAD(c, runs, "runs", "too many runs");
	return 0;
}

static int restore_group(struct objrel *r, struct rctx *c, const struct mn_pnode *row,
			 int64_t *prev)
{
	const struct mn_pnode *hist;
	const char *kind;
	struct group *g;
	uint32_t site;
	int e, k;

	e = ru32(c, row, "group", &site);
	if (e)
		return e;
	if ((int64_t)site <= *prev)
		return BAD(c, row, "group", "groups not sorted by group, or %u twice", site);
	*prev = site;
	g = group_get(r, site);
	if (!g)
		return -ENOMEM;
	e = mn_pfield_str(c->prof, row, "kind", &kind, c->err, c->errlen);
	if (e)
		return e;
	for (k = 0; k < 3 && strcmp(kind, kind_names[k]); k++)
		;
	if (k == 3)
		return BAD(c, mn_pnode_get(row, "kind"), "kind",
			   "expected heap, stack or global, found '%s'", kind);
	g->kind = (enum mn_obj_kind)k;
	e = ru64(c, row, "objects", &g->objects);
	if (!e)
		e = ru64(c, row, "bytes", &g->bytes);
	if (e || !mn_pnode_get(row, "lifetime_log2"))
		return e;
	hist = mn_pfield_node(c->prof, row, "lifetime_log2", MN_PNODE_SEQ, c->err, c->errlen);
	if (!hist)
		return -EINVAL;
	e = ru64(c, row, "lifetime_min", &g->life_min);
	if (!e)
		e = ru64(c, row, "lifetime_max", &g->life_max);
	if (e)
		return e;
	if (mn_pnode_len(hist) != life_bucket(g->life_max) + 1 || g->life_min > g->life_max)
		return BAD(c, hist, "lifetime_log2", "expected buckets 0 to that of lifetime_max");
	for (size_t b = 0; b < mn_pnode_len(hist); b++) {
		const struct mn_pnode *v = mn_pnode_at(hist, b);

		if (mn_pnode_u64(v, &g->life_log2[b]))
			return BAD(c, v, "lifetime_log2", "expected an unsigned integer");
		if (g->nlife + g->life_log2[b] < g->nlife)
			return BAD(c, v, "lifetime_log2", "the counts overflow");
		g->nlife += g->life_log2[b];
	}
	/* The median's estimate needs the histogram to agree with min and max. */
	if (!g->life_log2[life_bucket(g->life_min)] || !g->life_log2[life_bucket(g->life_max)])
		return BAD(c, hist, "lifetime_log2",
			   "empty bucket for lifetime_min or lifetime_max");
	for (unsigned b = 0; b < life_bucket(g->life_min); b++)
		if (g->life_log2[b])
			return BAD(c, hist, "lifetime_log2", "objects below lifetime_min");
	return 0;
}

static int restore_lmad(struct rctx *c, const struct mn_pnode *row, struct objrel_lmad *l)
{
	int e = ru64(c, row, "object", &l->start[0]);

	if (!e)
		e = ru64(c, row, "offset", &l->start[1]);
	if (!e)
		e = mn_pfield_i64(c->prof, row, "object_stride", &l->stride[0], c->err, c->errlen);
	if (!e)
		e = mn_pfield_i64(c->prof, row, "offset_stride", &l->stride[1], c->err, c->errlen);
	if (!e)
		e = ru64(c, row, "count", &l->count);
	if (!e)
		e = ru64(c, row, "first_time", &l->first);
	if (!e)
		e = ru64(c, row, "last_time", &l->last);
	if (e)
		return e;
	if (!l->count)
		return BAD(c, row, "count", "an LMAD has at least one point");
	if (l->last < l->first)
		return BAD(c, row, "last_time", "before first_time");
	return 0;
}

static int restore_stream(struct objrel *r, struct rctx *c, const struct mn_pnode *row,
			  struct stream *s)
{
	static const char *const dim[OBJREL_LMAD_DIMS] = { "object", "offset" };
	struct objrel_lmads *l = &s->l;
	const struct mn_pnode *lm;
	uint64_t sum = 0;
	size_t n;
	int e;

	objrel_lmads_init(l, r->limit);
	e = ru32(c, row, "group", &s->group);
	if (e)
		return e;
	s->run = 0;
	e = ru32(c, row, "run", &s->run);
	if (e && e != -ENOENT)
		return e;
	if (s->run >= r->nruns)
		return BAD(c, row, "run", "%u is not a run of 'runs'", s->run);
	e = ru64(c, row, "accesses", &l->points);
	if (!e)
		e = ru64(c, row, "captured", &l->captured);
	if (!e)
		e = mn_pfield_bool(c->prof, row, "full", &l->full, c->err, c->errlen);
	for (int d = 0; d < OBJREL_LMAD_DIMS && !e; d++) {
		char key[32];

		snprintf(key, sizeof(key), "%s_min", dim[d]);
		e = ru64(c, row, key, &l->min[d]);
		snprintf(key, sizeof(key), "%s_max", dim[d]);
		if (!e)
			e = ru64(c, row, key, &l->max[d]);
		snprintf(key, sizeof(key), "%s_granularity", dim[d]);
		if (!e)
			e = ru64(c, row, key, &l->gran[d]);
	}
	if (e)
		return e;
	lm = rseq(c, row, "lmads");
	if (!lm)
		return -EINVAL;
	n = mn_pnode_len(lm);
	if (n > r->limit)
		return BAD(c, lm, "lmads", "%zu LMADs, more than lmad_limit %u", n, r->limit);
	if (n) {
		l->v = calloc(n, sizeof(*l->v));
		if (!l->v)
			return -ENOMEM;
		l->alloc = (uint32_t)n;
	}
	for (size_t k = 0; k < n; k++) {
		e = restore_lmad(c, mn_pnode_at(lm, k), &l->v[k]);
		if (e)
			return e;
		l->n = (uint32_t)k + 1;
		sum += l->v[k].count;
	}
	if (sum != l->captured || l->captured > l->points)
		return BAD(c, row, "captured", "expected the LMADs' points (%" PRIu64 "), at most "
			   "'accesses'", sum);
	memcpy(l->first, l->min, sizeof(l->first));   /* unused: no point comes any more */
	return 0;
}

static int restore_insn(struct objrel *r, struct rctx *c, const struct mn_pnode *row,
			int64_t *prev)
{
	const struct mn_pnode *st;
	const char *access;
	struct insn *in;
	uint32_t site;
	size_t n;
	int e;

	e = ru32(c, row, "site", &site);
	if (e)
		return e;
	if ((int64_t)site <= *prev)
		return BAD(c, row, "site", "instructions not sorted by site, or %u twice", site);
	*prev = site;
	in = mn_sitevec_get(&r->insns, site);
	if (!in)
		return -ENOMEM;
	in->site = site;
	e = mn_pfield_str(c->prof, row, "access", &access, c->err, c->errlen);
	if (e)
		return e;
	if (strcmp(access, "load") && strcmp(access, "store"))
		return BAD(c, mn_pnode_get(row, "access"), "access",
			   "expected load or store, found '%s'", access);
	in->store = !strcmp(access, "store");
	e = ru64(c, row, "accesses", &in->accesses);
	if (!e)
		e = ru64(c, row, "unattributed", &in->unattributed);
	if (e)
		return e;
	if (in->unattributed > in->accesses)
		return BAD(c, row, "unattributed", "more than 'accesses'");
	st = rseq(c, row, "streams");
	if (!st)
		return -EINVAL;
	n = mn_pnode_len(st);
	if (n > UINT32_MAX / 2)
		return BAD(c, st, "streams", "too many streams");
	if (n) {
		in->s = calloc(n, sizeof(*in->s));
		if (!in->s)
			return -ENOMEM;
		in->alloc = (uint32_t)n;
	}
	for (size_t i = 0; i < n; i++) {
		const struct mn_pnode *srow = mn_pnode_at(st, i);

		in->n = (uint32_t)i + 1;   /* so fini frees it, whatever happens */
		e = restore_stream(r, c, srow, &in->s[i]);
		if (e)
			return e;
		if (i && by_group(&in->s[i - 1], &in->s[i]) >= 0)
			return BAD(c, srow, "group", "streams not sorted by group, then run");
	}
	return 0;
}

static int restore_section(struct objrel *r, const struct mn_profile *prof,
			   const struct mn_pnode *sec, char *err, size_t errlen)
{
	struct rctx c = { prof, err, errlen };
	const struct mn_pnode *lost, *groups, *insns, *ll;
	int64_t prev = -1;   /* the last group or site read */
	int e;

	if (mn_pnode_kind(sec) != MN_PNODE_MAP)
		return mn_pnode_errorf(prof, sec, err, errlen, "expected a mapping for the "
				       "object-relative section");
	ll = mn_pnode_get(sec, "lossless");
	if (ll)
		return BAD(&c, ll, "lossless", "the lossless streams of a run cannot be merged "
			   "(run without MNEMO_OBJREL_LOSSLESS=1 to merge)");
	/* The run's parameters are the section's, whatever the environment of this process. */
	lossless_free(r->ll);
	r->ll = NULL;
	e = ru32(&c, sec, "lmad_limit", &r->limit);
	if (e)
		return e;
	if (r->limit < 1 || r->limit > LMADS_MAX)
		return BAD(&c, mn_pnode_get(sec, "lmad_limit"), "lmad_limit",
			   "expected 1 to %u", LMADS_MAX);
	e = mn_pfield_bool(prof, sec, "stack_objects", &r->stack, err, errlen);
	if (!e)
		e = ru64(&c, sec, "events", &r->clock);
	if (!e)
		e = restore_runs(r, &c, sec);
	if (e)
		return e;
	lost = mn_pfield_node(prof, sec, "lost", MN_PNODE_MAP, err, errlen);
	if (!lost)
		return -EINVAL;
	e = ru64(&c, lost, "aliased_granules", &r->objs.aliases);
	if (!e)
		e = ru64(&c, lost, "nomem", &r->nomem);
	if (!e)
		e = ru64(&c, lost, "unknown_frees", &r->unknown_frees);
	if (e)
		return e;
	groups = rseq(&c, sec, "groups");
	if (!groups)
		return -EINVAL;
	for (size_t i = 0; i < mn_pnode_len(groups); i++) {
		e = restore_group(r, &c, mn_pnode_at(groups, i), &prev);
		if (e)
			return e;
	}
	insns = rseq(&c, sec, "instructions");
	if (!insns)
		return -EINVAL;
	prev = -1;
	for (size_t i = 0; i < mn_pnode_len(insns); i++) {
		e = restore_insn(r, &c, mn_pnode_at(insns, i), &prev);
		if (e)
			return e;
	}
	r->finalized = true;   /* a run that ended: no live objects, streams in order */
	return 0;
}

static int or_restore(void *st, const struct mn_profile *prof, const struct mn_pnode *sec,
		      char *err, size_t errlen)
{
	int e = restore_section(st, prof, sec, err, errlen);

	return e == -ENOENT ? -EINVAL : e;   /* a missing field: the message says which */
}

/* ---- merge(): runs side by side, counts added (README "Merging") ---------------------------- */

struct run_ref {
	struct run_id id;
	uint32_t src, idx;       /* src 0: into's run idx, 1: from's */
};

static int by_run(const void *a, const void *b)
{
	const struct run_ref *x = a, *y = b;

	if (x->id.key != y->id.key)
		return x->id.key < y->id.key ? -1 : 1;
	if (x->id.events != y->id.events)
		return x->id.events < y->id.events ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * The union of both run lists, sorted: map[0][i] and map[1][i] are the new indices of into's and
 * from's run i.  Runs of equal key hold the same data (run_key()), so the tie-break by source,
 * the one thing that depends on the order of the folds, does not show in the output.
 */
static int merge_runs(struct objrel *into, struct objrel *from, uint32_t *map[2])
{
	uint32_t n = into->nruns + from->nruns;
	struct run_ref *v = calloc(n, sizeof(*v));
	struct run_id *runs = calloc(n, sizeof(*runs));

	map[0] = calloc(into->nruns, sizeof(*map[0]));
	map[1] = calloc(from->nruns, sizeof(*map[1]));
	if (!v || !runs || !map[0] || !map[1]) {
		free(v);
		free(runs);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < into->nruns; i++)
		v[i] = (struct run_ref){ into->runs[i], 0, i };
	for (uint32_t i = 0; i < from->nruns; i++)
		v[into->nruns + i] = (struct run_ref){ from->runs[i], 1, i };
	qsort(v, n, sizeof(*v), by_run);
	for (uint32_t i = 0; i < n; i++) {
		runs[i] = v[i].id;
		map[v[i].src][v[i].idx] = i;
	}
	free(v);
	free(into->runs);
	into->runs = runs;
	into->nruns = n;
	return 0;
}

static void merge_group(struct group *g, const struct group *f)
{
	if (!g->seen) {
		g->site = f->site;
		g->seen = true;
		g->kind = f->kind;
	} else if (f->kind < g->kind) {
		g->kind = f->kind;   /* a site has one kind; else the smaller, for commutativity */
	}
	g->objects += f->objects;
	g->bytes += f->bytes;
	if (f->nlife) {
		if (!g->nlife || f->life_min < g->life_min)
			g->life_min = f->life_min;
		if (!g->nlife || f->life_max > g->life_max)
			g->life_max = f->life_max;
	}
	g->nlife += f->nlife;
	for (int b = 0; b < LIFE_BUCKETS; b++)
		g->life_log2[b] += f->life_log2[b];
}

/* Moves from's streams to in, their runs renumbered by map; 0 or -ENOMEM (nothing moved). */
static int merge_streams(struct insn *in, struct insn *f, const uint32_t *map)
{
	if (in->n + f->n > in->alloc) {
		uint32_t a = in->n + f->n;
		struct stream *s = realloc(in->s, (size_t)a * sizeof(*s));

		if (!s)
			return -ENOMEM;
		in->s = s;
		in->alloc = a;
	}
	for (uint32_t i = 0; i < f->n; i++) {
		in->s[in->n] = f->s[i];
		in->s[in->n++].run = map[f->s[i].run];
	}
	f->n = 0;   /* the LMAD arrays are in's now */
	return 0;
}

static void or_merge(void *into_, void *from_)
{
	struct objrel *into = into_, *from = from_;
	uint32_t *map[2] = { NULL, NULL };
	struct group *g, *f;
	struct insn *in, *fi;

	if (runs_materialize(into) || runs_materialize(from) || merge_runs(into, from, map)) {
		into->nomem++;
		goto out;
	}
	MN_SITEVEC_FOREACH(&into->insns, id, in)
		for (uint32_t i = 0; i < in->n; i++)
			in->s[i].run = map[0][in->s[i].run];
	MN_SITEVEC_FOREACH(&from->insns, id, fi) {
		in = mn_sitevec_get(&into->insns, (uint32_t)id);
		if (!in || merge_streams(in, fi, map[1])) {
			into->nomem++;
			continue;
		}
		in->site = fi->site;
		in->store = fi->store;
		in->accesses += fi->accesses;
		in->unattributed += fi->unattributed;
		if (in->n > 1)
			qsort(in->s, in->n, sizeof(*in->s), by_group);
	}
	MN_SITEVEC_FOREACH(&from->groups, id, f) {
		if (!f->seen)
			continue;
		g = mn_sitevec_get(&into->groups, (uint32_t)id);
		if (!g) {
			into->nomem++;
			continue;
		}
		merge_group(g, f);
	}
	into->clock += from->clock;
	into->nomem += from->nomem;
	into->unknown_frees += from->unknown_frees;
	into->objs.aliases += from->objs.aliases;
	/* Lossless streams of two runs have no common order (README "Merging"): not complete. */
	if (into->ll)
		into->ll->broken = true;
out:
	free(map[0]);
	free(map[1]);
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
	.init = or_init,
	.fini = or_fini,
	.load = or_load,
	.store = or_store,
	.heap_alloc = or_heap_alloc,
	.heap_realloc = or_heap_realloc,
	.heap_free = or_heap_free,
	.stack_alloc = or_stack_alloc,
	.stack_free = or_stack_free,
	.global = or_global,
	.loop_summary = or_loop_summary,
	.merge = or_merge,
	.shadow = or_shadow,
	.emit = or_emit,
	.restore = or_restore,
	.settings = or_settings,
	.options = or_options,
};
