/*
 * object-relative's loop summaries (loop_summary).
 *
 * A summary stands for its expansion (module.h): iterations times, each access j in order, at
 * (start_j + k * step_j) & (2^48 - 1), k the iteration; object-relative declares no loop event, so
 * the expansion is those accesses alone, and objrel_on_access() stamps them with the clock: access
 * j of iteration k at t0 + k * n + j.  No object is made or released within a summary, so access
 * j's points depend on no other access, and an access whose site no other access of the summary
 * has is its own (instruction, group) streams: each access is taken whole, in turn, with its times.
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
 * Taken access by access through objrel_on_access() instead (exact by definition): everything in
 * lossless mode (the grammars take the accesses interleaved, one by one), and a summary in which
 * two accesses share a site (their points interleave in one stream).
 */
#include <stdlib.h>
#include <string.h>

#include "objrel_internal.h"

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
	st = objrel_stream_of(r, in, x->group);
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

			objrel_on_access(r, acc[j].site, addr, acc[j].store);
		}
}

/*
 * A summarized loop: the state its expansion would leave (module.h), in O(accesses) for an access
 * that stays in one object or outside every object, more where a run must be cut (see above).
 */
void objrel_loop_summary(void *st, uint32_t site, uint64_t iterations,
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
