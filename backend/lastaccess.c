/*
 * Loop summaries (module.h, loop_summary) in closed form when their streams allow it (the method:
 * lastaccess_internal.h), else expanded into the iterations and accesses the driver would have
 * sent; lastaccess_closed.c sweeps the shadow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lastaccess_internal.h"

/* A word's last store or load, as the step-0 simulation tracks it: stream j of this loop in
 * iteration it (0 or 1), or (j < 0) the access id and clock the shadow held before the loop. */
struct label {
	int j;
	unsigned it;
	uint32_t aid, clock;
};

/* One instance (c of them) from label a to stream q in iteration it. */
static void label_report(struct mn_lastaccess *la, const struct label *a, const struct stream *q,
			 unsigned it, enum mn_dep_kind kind, uint64_t c)
{
	struct run r;

	if (a->j >= 0) {
		mn_nestrows_add_n(la->rows, a->aid, q->aid, la->nest->n, it > a->it, it - a->it,
				  kind, c);
		return;
	}
	lastaccess_run_start(la, &r, a->aid, a->clock);
	r.c = c;
	lastaccess_run_flush(la, &r, q->aid, kind);
}

/* Streams of step 0 on one word, in iteration order: iteration 0 once, iteration 1 for the T - 1
 * after it (the same sources at the same distances), then the word's last accesses. */
static void closed_word(struct mn_lastaccess *la, const struct stream *s, unsigned m, uint64_t T,
			uint32_t inv)
{
	struct mn_lastaccess_word *w = word_of(&s[0], 0);
	struct label wr = { -1, 0, w->writer, w->wclock }, rd = { -1, 0, w->reader, w->rclock };

	if (!mn_lastaccess_owns(la, s[0].w))
		return;   /* another worker's page */
	for (unsigned it = 0; it < 2 && it < T; it++) {
		uint64_t c = it ? T - 1 : 1;

		for (unsigned i = 0; i < m; i++) {
			const struct stream *q = &s[i];

			if (wr.aid)
				label_report(la, &wr, q, it, q->store ? MN_DEP_WAW : MN_DEP_RAW, c);
			if (q->store && rd.aid)
				label_report(la, &rd, q, it, MN_DEP_WAR, c);
			if (q->store) {
				wr = (struct label){ (int)i, it, q->aid, 0 };
				rd = (struct label){ -1, 0, 0, 0 };
			} else {
				rd = (struct label){ (int)i, it, q->aid, 0 };
			}
		}
	}
	/* after iteration T - 1, in-loop labels are of it: clock inv + T */
	*w = (struct mn_lastaccess_word){ wr.aid, wr.j >= 0 ? inv + (uint32_t)T : wr.clock,
			    rd.aid, rd.j >= 0 ? inv + (uint32_t)T : rd.clock };
}

static int by_range(const void *a, const void *b)
{
	const struct stream *x = a, *y = b;

	return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (x->j > y->j) - (x->j < y->j);
}

/* sigma's order: by step, residue (word mod step) or, at step 0, word; then by the iteration in
 * which the stream reaches a common word (descending words for e > 0); then in iteration order. */
static int by_class(const void *a, const void *b)
{
	const struct stream *x = a, *y = b;
	int64_t rx, ry, kx, ky;

	if (x->e != y->e)
		return x->e < y->e ? -1 : 1;
	rx = x->e ? ((x->w % x->e) + llabs(x->e)) % llabs(x->e) : x->w;
	ry = y->e ? ((y->w % y->e) + llabs(y->e)) % llabs(y->e) : y->w;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	kx = x->e > 0 ? -x->w : x->w;
	ky = y->e > 0 ? -y->w : y->w;
	if (kx != ky)
		return kx < ky ? -1 : 1;
	return (x->j > y->j) - (x->j < y->j);
}

static bool same_class(const struct stream *x, const struct stream *y)
{
	if (x->e != y->e)
		return false;
	if (!x->e)
		return x->w == y->w;
	return (x->w - y->w) % x->e == 0;
}

/*
 * Every slice holding a word stream p touches in T iterations is ours already.  A free one sends
 * the summary to the expansion, which claims it when an access first comes, in the order the
 * accesses come: claiming it here, before an access of another stream, in another window, that
 * runs first, would turn that access into the alias instead.
 */
static bool slices_ours(const struct mn_lastaccess *la, const struct stream *p, uint64_t T)
{
	uint64_t step = (uint64_t)llabs(p->e) << 3, first = (uint64_t)p->lo << 3;
	uint64_t last = (uint64_t)p->hi << 3;

	if (step > SLICE) {   /* touches far apart: each one */
		for (uint64_t k = 0; k < T; k++)
			if (!mn_shadow_owns(*la->sh, (uint64_t)(p->w + (int64_t)k * p->e) << 3))
				return false;
		return true;
	}
	/* touches at most a slice apart: every slice between the first and the last has one */
	for (uint64_t a = first; a <= last; a = (a | (SLICE - 1)) + 1)
		if (!mn_shadow_owns(*la->sh, a))
			return false;
	return true;
}

/*
 * The streams of a summary (s[], n of them at most) for the closed form: 0 streams taken, the
 * number taken, or -1 when the closed form does not apply.  Interns each stream's access id as
 * the expansion's first access would.
 */
static int closed_streams(struct mn_lastaccess *la, uint64_t T, const struct mn_summary_access *acc,
			  unsigned n, struct stream *s)
{
	unsigned m = 0;

	for (unsigned j = 0; j < n; j++) {
		const struct mn_summary_access *a = &acc[j];
		struct stream *p = &s[m];
		__int128 last = (__int128)a->start + (__int128)(T - 1) * a->step;
		uint32_t aid;

		if (!a->size)
			continue;   /* touches nothing, as on_access() */
		if (a->size > 8 || a->step % 8 || (a->start & 7) + a->size > 8 || last < 0 ||
		    last >= (__int128)1 << 48 || a->start >= UINT64_C(1) << 48)
			return -1;
		if (!(aid = la->aid(la->arg, a->site)))
			return -1;   /* the expansion counts what is lost */
		*p = (struct stream){ .w = (int64_t)(a->start >> 3), .e = a->step / 8, .aid = aid,
				      .j = j, .store = a->store };
		p->lo = p->e >= 0 ? p->w : (int64_t)(last >> 3);
		p->hi = p->e >= 0 ? (int64_t)(last >> 3) : p->w;
		if (mn_shadow_window(*la->sh, (uint64_t)p->lo << 3) !=
		    mn_shadow_window(*la->sh, (uint64_t)p->hi << 3) || !slices_ours(la, p, T))
			return -1;
		p->sw = mn_shadow_map(*la->sh, (uint64_t)p->w << 3);
		m++;
	}
	/* Streams of different steps must keep apart: they would meet on words out of order. */
	qsort(s, m, sizeof(*s), by_range);
	for (unsigned i = 1, c = 0; i < m; i++) {
		if (s[i].lo > s[c].hi) {
			c = i;
			continue;
		}
		if (s[i].e != s[c].e)
			return -1;
		if (s[i].hi > s[c].hi)
			s[c].hi = s[i].hi;   /* the component's end; ranges unused after this */
	}
	qsort(s, m, sizeof(*s), by_class);
	return (int)m;
}

#define CHUNK 256          /* iterations swept at once: the streams' shadow stays in cache */

/* Finds each planned class's twins (struct stream), in sigma order. */
static void twins(struct stream *s, unsigned m)
{
	for (unsigned k = 0; k < m; k++) {
		struct stream *q = &s[k];

		for (unsigned p = 0; p < k && !q->twin_of; p++) {
			struct stream *o = &s[p];

			if (o->twin_of || o->t != q->t || o->brw != q->brw || o->ntwins == 3)
				continue;
			o->twin_aid[o->ntwins] = q->aid;
			o->twin_store[o->ntwins++] = q->store;
			q->twin_of = true;
		}
	}
}

/* The summarized loop's accesses in closed form, its frame on top: s[] sorted by class. */
static void closed(struct mn_lastaccess *la, struct stream *s, unsigned m, uint64_t T, uint32_t inv)
{
	for (unsigned i = 0, c; i < m; i = c) {
		for (c = i + 1; c < m && same_class(&s[i], &s[c]); c++)
			;
		if (!s[i].e) {
			closed_word(la, s + i, c - i, T, inv);
			continue;
		}
		for (unsigned k = i; k < c; k++)
			s[k].t = (uint64_t)((s[i].w - s[k].w) / s[i].e);
		lastaccess_class_plan(la, s + i, c - i, T);
		twins(s + i, c - i);
	}
	for (uint64_t k0 = 0; k0 < T; k0 += CHUNK)
		lastaccess_closed_chunk(la, s, m, k0, T - k0 > CHUNK ? k0 + CHUNK : T, inv);
	for (unsigned i = 0; i < m; i++) {
		if (!s[i].twin_of)
			lastaccess_run_flush_stream(la, &s[i].run[0], &s[i], 0);
		lastaccess_run_flush_stream(la, &s[i].run[1], &s[i], 1);
	}
}

__attribute__((noinline)) void
mn_lastaccess_span(struct mn_lastaccess *la, uint32_t aid, uint64_t addr, uint64_t end, bool store,
		   mn_lastaccess_word_fn *word, void *arg)
{
	la->rows->spanning = la->nw > 1;
	for (uint64_t a = addr & ~UINT64_C(7); a < end; a += 8) {
		struct mn_lastaccess_word *w;

		if (!mn_lastaccess_owns(la, (int64_t)(a >> 3)))
			continue;   /* another worker's page */
		if ((w = mn_shadow_get(*la->sh, a)))
			word(arg, w, a, aid, store, false);
	}
	la->rows->spanning = false;
}

uint64_t mn_lastaccess_forget(struct mn_lastaccess *la)
{
	uint64_t aliases = *la->sh ? mn_shadow_aliases(*la->sh) : 0;

	mn_shadow_destroy(*la->sh);
	if (mn_lastaccess_shadow(la->sh))
		*la->sh = NULL;
	if (la->nruns) {   /* no word names an earlier run now; the clock starts again at 0 */
		la->runs[0] = la->runs[la->nruns - 1];
		la->runs[0].clock = 0;
		la->nruns = 1;
		la->run_clock = 0;
		memset(la->hint, 0, sizeof(la->hint));
		la->nbuckets = 0;
	}
	return aliases;
}

int mn_lastaccess_threads(struct mn_lastaccess *la, uint32_t thread, uint64_t stamp)
{
	if (!(la->runs = malloc(64 * sizeof(*la->runs))))
		return -ENOMEM;
	la->runs[0] = (struct mn_lastaccess_run){ 0, thread, stamp };
	la->nruns = 1;
	la->runs_cap = 64;
	la->run_clock = 0;
	memset(la->hint, 0, sizeof(la->hint));
	la->thread = thread;
	return 0;
}

void mn_lastaccess_run_begin(struct mn_lastaccess *la, uint32_t thread, uint64_t stamp)
{
	/* the tick first: a reset in it keeps only the last run (mn_lastaccess_forget()) */
	mn_loopnest_tick(la->nest);
	if (la->nruns == la->runs_cap) {
		struct mn_lastaccess_run *v = realloc(la->runs, 2 * la->runs_cap * sizeof(*v));

		if (!v) {   /* the last run goes on: its thread's accesses are taken as the new one's */
			la->runs[la->nruns - 1].thread = thread;
			la->runs[la->nruns - 1].stamp = stamp;
			la->thread = thread;
			(*la->nest->lost)++;
			return;
		}
		la->runs = v;
		la->runs_cap *= 2;
	}
	la->runs[la->nruns++] = (struct mn_lastaccess_run){ la->nest->clock, thread, stamp };
	la->run_clock = la->nest->clock;
	la->thread = thread;
}

/* The index covers bucket b (its first clock is before every run to come: the caller's c is). */
static bool buckets_cover(struct mn_lastaccess *la, uint32_t b)
{
	uint32_t i;

	if (b >= la->buckets_cap) {
		uint32_t all = UINT32_C(1) << (32 - MN_LASTACCESS_BUCKET_SHIFT);   /* every clock */
		uint32_t cap = b < 256 ? 512 : 2 * b < all ? 2 * b : all;
		uint32_t *v = realloc(la->first, (size_t)cap * sizeof(*v));

		if (!v)
			return false;
		la->first = v;
		la->buckets_cap = cap;
	}
	i = la->nbuckets ? la->first[la->nbuckets - 1] : 0;
	for (; la->nbuckets <= b; la->nbuckets++) {
		uint64_t start = (uint64_t)la->nbuckets << MN_LASTACCESS_BUCKET_SHIFT;

		while (i + 1 < la->nruns && la->runs[i + 1].clock <= start)
			i++;
		la->first[la->nbuckets] = i;
	}
	return true;
}

const struct mn_lastaccess_run *mn_lastaccess_run_of(struct mn_lastaccess *la, uint32_t c,
						     unsigned which)
{
	uint32_t lo = 0, hi = la->nruns, h = la->hint[which];   /* the last run whose clock <= c */
	uint32_t b = c >> MN_LASTACCESS_BUCKET_SHIFT;

	if (h < hi && la->runs[h].clock <= c && (h + 1 == hi || la->runs[h + 1].clock > c))
		return &la->runs[h];
	if (b < la->nbuckets || buckets_cover(la, b)) {
		lo = la->first[b];
		if (b + 1 < la->nbuckets)
			hi = la->first[b + 1] + 1;
	}
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (la->runs[mid].clock <= c)
			lo = mid;
		else
			hi = mid;
	}
	la->hint[which] = lo;
	return &la->runs[lo];
}

/* The iterations and accesses of a summary as the driver would send them, one by one. */
void mn_lastaccess_expand(struct mn_lastaccess *la, uint32_t site, uint64_t T,
			  const struct mn_summary_access *acc, unsigned n)
{
	const struct mn_module *m = la->module;

	for (uint64_t k = 0; k < T; k++) {
		m->loop_iter(la->arg, site);
		for (unsigned j = 0; j < n; j++) {
			uint64_t a = (acc[j].start + k * (uint64_t)acc[j].step) &
				     ((UINT64_C(1) << 48) - 1);

			/* with several workers, what the driver would have given this one: its own
			 * pages' accesses and every access across pages */
			if (la->nw > 1 && !mn_lastaccess_owns(la, (int64_t)(a >> 3)) &&
			    !(acc[j].size > 1 &&
			      (a ^ (a + acc[j].size - 1)) >> MN_LASTACCESS_PAGE_SHIFT))
				continue;
			(acc[j].store ? m->store : m->load)(la->arg, acc[j].site, a, 0,
							    acc[j].size);
		}
	}
}

/* Iteration k's address of summary access a; one address for a step of 0. */
static uint64_t summary_addr(const struct mn_summary_access *a, uint64_t k)
{
	return (a->start + k * (uint64_t)a->step) & ((UINT64_C(1) << 48) - 1);
}

/* An access at clock c is the current thread's. */
static inline bool clock_mine(struct mn_lastaccess *la, uint32_t c, unsigned which)
{
	return c >= la->run_clock || mn_lastaccess_run_of(la, c, which)->thread == la->thread;
}

/* A word's last store and load, if any, are the current thread's. */
static bool word_mine(struct mn_lastaccess *la, const struct mn_lastaccess_word *w)
{
	return (!w->writer || clock_mine(la, w->wclock, 0)) &&
	       (!w->reader || clock_mine(la, w->rclock, 1));
}

/*
 * Summary access a's words in its `last` iterations as pointers: one worker, one word per
 * iteration at a whole number of words apart, all in one slice (then the shadow of consecutive
 * words is consecutive), so that the passes below walk them without a lookup each.  *e: words
 * per iteration.  False: look each word up.
 */
static bool stream_walk(const struct mn_lastaccess *la, const struct mn_summary_access *a,
			uint64_t last, int64_t *e)
{
	uint64_t a0 = summary_addr(a, 0), a1 = summary_addr(a, last - 1);
	int64_t span = (int64_t)(last - 1) * (a->step / 8) * 8;

	*e = a->step / 8;
	return la->nw <= 1 && !(a->step % 8) && (a0 & 7) + a->size <= 8 &&
	       (int64_t)(a1 - a0) == span &&
	       (a0 >> MN_SHADOW_SLICE_SHIFT) == (a1 >> MN_SHADOW_SLICE_SHIFT);
}

/* An access before j in the summary touches the same words (x[i] += ...: a load and a store). */
static bool words_seen(const struct mn_summary_access *acc, unsigned j)
{
	for (unsigned i = 0; i < j; i++)
		if (acc[i].size && acc[i].step == acc[j].step && acc[i].start >> 3 == acc[j].start >> 3 &&
		    (acc[i].start & 7) + acc[i].size <= 8 && (acc[j].start & 7) + acc[j].size <= 8)
			return true;
	return false;
}

bool mn_lastaccess_mine(struct mn_lastaccess *la, uint64_t T,
			const struct mn_summary_access *acc, unsigned n)
{
	if (!la->nruns || !*la->sh)
		return true;   /* the expansion takes every source as this thread's too */
	for (unsigned j = 0; j < n; j++) {
		uint64_t last = acc[j].step ? T : 1, a0 = summary_addr(&acc[j], 0);
		const struct mn_lastaccess_word *w = mn_shadow_peek(*la->sh, a0);
		int64_t e;

		if (!acc[j].size || words_seen(acc, j))
			continue;
		if (stream_walk(la, &acc[j], last, &e)) {
			for (uint64_t k = 0; w && k < last; k++)   /* no w: never accessed */
				if (!word_mine(la, w + (int64_t)k * e))
					return false;
			continue;
		}
		for (uint64_t k = 0; k < last; k++) {
			uint64_t a = summary_addr(&acc[j], k);

			if (mn_lastaccess_owns(la, (int64_t)(a >> 3)) &&
			    (w = mn_shadow_peek(*la->sh, a)) && !word_mine(la, w))
				return false;
		}
	}
	return true;
}

bool mn_lastaccess_closed(struct mn_lastaccess *la, struct mn_loop *l, uint64_t T,
			  const struct mn_summary_access *acc, unsigned n)
{
	struct stream buf[16], *s = n <= 16 ? buf : malloc(n * sizeof(*s));
	int m = -1;

	/* a loop that would reset the clock is expanded (the reset comes between its iterations) */
	if (T && s && l && *la->sh && (uint64_t)la->nest->clock + T <= la->nest->limit)
		m = closed_streams(la, T, acc, n, s);
	if (m >= 0) {
		uint32_t inv = la->nest->clock;

		mn_loopnest_iter_n(la->nest, l, T);
		closed(la, s, (unsigned)m, T, inv);
	}
	if (s != buf)
		free(s);
	return m >= 0;
}
