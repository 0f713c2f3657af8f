/*
 * Loop summaries in closed form (lastaccess_internal.h has the method): the boundary passes over
 * the shadow (sources before the loop), the words' last stores and loads after it, and the sweep
 * of a summary's streams a chunk of iterations at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "lastaccess_internal.h"

/* Starts run r at source src of clock sclock (before the summarized loop's invoke). */
void lastaccess_run_start(struct mn_lastaccess *la, struct run *r, uint32_t src, uint32_t sclock)
{
	unsigned i = mn_loopnest_holding(la->nest, sclock);
	uint32_t lo, hi;

	*r = (struct run){ .src = src, .i = i, .lo = i ? la->nest->loops[i - 1].inv : 0,
			   .hi = i < la->nest->n ? la->nest->loops[i].inv : UINT32_MAX };
	if (i) {
		struct mn_starts *s = &la->nest->loops[i - 1].starts;
		uint64_t started = mn_starts_span(s, sclock, &lo, &hi);

		r->carried = started < s->n;
		r->dist = s->n - started;
		r->lo = lo > r->lo ? lo : r->lo;
		r->hi = hi < r->hi ? hi : r->hi;
	}
}

void lastaccess_run_flush(struct mn_lastaccess *la, const struct run *r, uint32_t dst,
			  enum mn_dep_kind kind)
{
	if (r->c)
		mn_nestrows_add_n(la->rows, r->src, dst, r->i, r->carried, r->dist, kind, r->c);
}

/* Run r of stream q's boundary (which: 0 raw or waw, 1 war) to q and to its twins. */
void lastaccess_run_flush_stream(struct mn_lastaccess *la, const struct run *r,
				 const struct stream *q, unsigned which)
{
	lastaccess_run_flush(la, r, q->aid,
			     which ? MN_DEP_WAR : q->store ? MN_DEP_WAW : MN_DEP_RAW);
	for (unsigned t = 0; !which && t < q->ntwins; t++)
		lastaccess_run_flush(la, r, q->twin_aid[t],
				     q->twin_store[t] ? MN_DEP_WAW : MN_DEP_RAW);
}

/* The first iteration after k, at most k1, in which stream p is on another page than in k. */
static uint64_t page_end(const struct stream *p, uint64_t k, uint64_t k1)
{
	const int64_t words = 1 << (MN_LASTACCESS_PAGE_SHIFT - 3), w = p->w + (int64_t)k * p->e;
	int64_t ne = p->e > 0 ? p->e : -p->e, dist;
	uint64_t steps;

	if (!p->e)
		return k1;
	dist = p->e > 0 ? (w / words + 1) * words - w : w - w / words * words + 1;
	steps = (uint64_t)((dist + ne - 1) / ne);
	return k1 - k > steps ? k + steps : k1;
}

/* The next part [*a, *b) of iterations [k, k1) in which stream p touches this worker's pages
 * (all of them with one worker); false when there is none. */
static bool owned_part(const struct mn_lastaccess *la, const struct stream *p, uint64_t k,
		       uint64_t k1, uint64_t *a, uint64_t *b)
{
	if (la->nw <= 1) {
		*a = k;
		*b = k1;
		return k < k1;
	}
	for (; k < k1; k = page_end(p, k, k1)) {
		if (mn_lastaccess_owns(la, p->w + (int64_t)k * p->e)) {
			*a = k;
			*b = page_end(p, k, k1);
			return true;
		}
	}
	return false;
}

/*
 * How many of the n words at f, f + stride, ... (each a source's access id and clock: a word's
 * writer or reader) run r takes: the same source, a clock in [lo, lo + span).  The boundary's
 * inner loop, kept to a compare or two per word (r.src != 0: a word never written breaks it).
 * With mark, each word taken also gets its last load: aid, at clock, clock + 1, ... (f + 2 and
 * f + 3 are its reader and rclock).
 */
static inline __attribute__((always_inline)) uint64_t
run_take(uint32_t *f, int64_t stride, uint64_t n, uint32_t src, uint32_t lo, uint32_t span,
	 bool mark, uint32_t aid, uint32_t clock)
{
	uint64_t i = 0;

	while (i < n && f[0] == src && f[1] - lo < span) {
		if (mark) {
			f[2] = aid;
			f[3] = clock + (uint32_t)i;
		}
		i++;
		f += stride;
	}
	return i;
}

/* boundary() over [a, b), a part of q's on this worker's pages; with mark, as run_take(). */
static inline __attribute__((always_inline)) void
boundary_part(struct mn_lastaccess *la, const struct stream *q, uint64_t a, uint64_t b,
	      unsigned which, struct run *rp, bool mark, uint32_t inv)
{
	struct run r = *rp;   /* in registers for the loop */
	const int64_t stride = q->e * (int64_t)(sizeof(*q->sw) / sizeof(uint32_t));
	uint32_t *f = (uint32_t *)word_of(q, a) + (which ? 2 : 0);   /* war: reader, rclock */

	for (uint64_t k = a; k < b; k++, f += stride) {
		uint64_t t = r.src ? run_take(f, stride, b - k, r.src, r.lo, r.hi - r.lo, mark,
					      q->aid, inv + 1 + (uint32_t)k) : 0;

		r.c += t;
		k += t;
		f += (int64_t)t * stride;
		if (k == b)
			break;
		if (f[0]) {   /* else never written (or read) */
			lastaccess_run_flush_stream(la, &r, q, which);
			lastaccess_run_start(la, &r, f[0], f[1]);
			r.c = 1;
		}
		if (mark) {
			f[2] = q->aid;
			f[3] = inv + 1 + (uint32_t)k;
		}
	}
	*rp = r;
}

/*
 * Iterations [k0, k1) of stream q, whose sources all ran before the loop: its words' last
 * stores (or, war, last loads), from the shadow, as the loop found them, gathered in run r.
 * With mark (a load's raw boundary), each word read gets q as its last load at once, which saves
 * last_loads() a pass.  No read sees the write too early: the boundary reads a word's reader
 * only for a store's war source, on a word no load of the loop touched before that store, so a
 * store before q in sigma, whose pass came first.  And none sees it too late: whatever touches
 * the word after q in the loop writes its own last store or load after every boundary pass.
 */
static void boundary(struct mn_lastaccess *la, const struct stream *q, uint64_t k0, uint64_t k1,
		     unsigned which, struct run *rp, bool mark, uint32_t inv)
{
	for (uint64_t a, b; owned_part(la, q, k0, k1, &a, &b); k0 = b) {
		if (mark)
			boundary_part(la, q, a, b, 0, rp, true, inv);
		else
			boundary_part(la, q, a, b, which, rp, false, 0);
	}
}

/* One word's source for run r (a source's access id and clock, src 0: none): taken, or the
 * start of a new run after r's flush. */
static inline void run_word(struct mn_lastaccess *la, struct run *r, const struct stream *q,
			    unsigned which, uint32_t src, uint32_t sclock)
{
	if (src == r->src && src && sclock - r->lo < r->hi - r->lo) {
		r->c++;
	} else if (src) {
		lastaccess_run_flush_stream(la, r, q, which);
		lastaccess_run_start(la, r, src, sclock);
		r->c = 1;
	}
}

/*
 * A store stream's waw and war boundaries over the same iterations [k0, k1), in one pass that
 * also writes its words' last store, which saves two passes.  As for a load's (boundary()): the
 * word's own reads come first, the boundary reads of other streams on the word came before (they
 * touch it before q does) or do not happen (a source in the loop), and whatever touches it after
 * q writes after every boundary pass.
 */
static void boundary_store(struct mn_lastaccess *la, struct stream *q, uint64_t k0, uint64_t k1,
			   uint32_t inv)
{
	const int64_t e = q->e;
	const uint32_t aid = q->aid;

	for (uint64_t a, b; owned_part(la, q, k0, k1, &a, &b); k0 = b) {
		struct mn_lastaccess_word *w = word_of(q, a);

		for (uint64_t k = a; k < b; k++, w += e) {
			struct run *r0 = &q->run[0], *r1 = &q->run[1];
			uint32_t s0 = r0->src, lo0 = r0->lo, n0 = r0->hi - r0->lo;
			uint32_t s1 = r1->src, lo1 = r1->lo, n1 = r1->hi - r1->lo;
			uint64_t t = k;
			struct mn_lastaccess_word o;

			/* both runs go on: the common case, kept in registers */
			while (t < b && s0 && s1 && w->writer == s0 && w->wclock - lo0 < n0 &&
			       w->reader == s1 && w->rclock - lo1 < n1) {
				*w = (struct mn_lastaccess_word){ aid, inv + 1 + (uint32_t)t,
								  0, 0 };
				t++;
				w += e;
			}
			r0->c += t - k;
			r1->c += t - k;
			if ((k = t) == b)
				break;
			o = *w;
			run_word(la, r0, q, 0, o.writer, o.wclock);
			run_word(la, r1, q, 1, o.reader, o.rclock);
			*w = (struct mn_lastaccess_word){ aid, inv + 1 + (uint32_t)k, 0, 0 };
		}
	}
}

/* In-loop instances from p to q, d iterations apart on every word, in iterations [d, T). */
static void in_loop(struct mn_lastaccess *la, const struct stream *p, const struct stream *q,
		    uint64_t dist, uint64_t T, enum mn_dep_kind kind)
{
	uint64_t c = 0;   /* the instances on this worker's pages: q's words */

	for (uint64_t a, b, k = dist; dist < T && owned_part(la, q, k, T, &a, &b); k = b)
		c += b - a;
	if (c)
		mn_nestrows_add_n(la->rows, p->aid, q->aid, la->nest->n, dist > 0, dist, kind, c);
}

/* One class of streams of step e != 0, sorted into sigma: its in-loop dependences now, and the
 * plan of each stream's boundary and last accesses (struct stream). */
void lastaccess_class_plan(struct mn_lastaccess *la, struct stream *s, unsigned m, uint64_t T)
{
	int ps = -1, pl = -1;   /* sigma's last store so far, and its last load after that */

	for (int i = 0; i < (int)m; i++) {
		struct stream *q = &s[i];
		uint64_t ds = ps >= 0 ? q->t - s[ps].t : NEVER;
		uint64_t dl = pl >= 0 ? q->t - s[pl].t : NEVER;

		if (ps >= 0)
			in_loop(la, &s[ps], q, ds, T, q->store ? MN_DEP_WAW : MN_DEP_RAW);
		q->brw = ds < T ? ds : T;
		q->bwar = 0;
		if (!q->store) {
			pl = i;
			continue;
		}
		if (pl >= 0)
			in_loop(la, &s[pl], q, dl, T, MN_DEP_WAR);
		dl = pl >= 0 ? dl : ds;
		q->bwar = dl < T ? dl : T;
		ps = i;
		pl = -1;
	}
	/* A store is a word's last store unless the next store of sigma reached the word too; a
	 * load its last load unless anything after it in sigma did. */
	for (unsigned i = 0, n; i < m; i++) {
		uint64_t dn = NEVER;

		for (n = i + 1; s[i].store && n < m && !s[n].store; n++)
			;
		if (n < m)
			dn = s[n].t - s[i].t;
		s[i].fin = dn < T ? T - dn : 0;
	}
}

/* Stream p (a store) is its words' last store in iterations [k0, k1). */
static void last_stores(struct mn_lastaccess *la, const struct stream *p, uint64_t k0, uint64_t k1,
			uint32_t inv)
{
	const struct stream q = *p;   /* not reloaded after each store to the shadow */

	for (uint64_t a, b; owned_part(la, &q, k0, k1, &a, &b); k0 = b)
		for (uint64_t k = a; k < b; k++)
			*word_of(&q, k) = (struct mn_lastaccess_word){
				q.aid, inv + 1 + (uint32_t)k, 0, 0 };
}

/* Stream p (a load) is its words' last load in iterations [k0, k1). */
static void last_loads(struct mn_lastaccess *la, const struct stream *p, uint64_t k0, uint64_t k1,
		       uint32_t inv)
{
	const struct stream q = *p;

	for (uint64_t a, b; owned_part(la, &q, k0, k1, &a, &b); k0 = b) {
		for (uint64_t k = a; k < b; k++) {
			struct mn_lastaccess_word *w = word_of(&q, k);

			w->reader = q.aid;
			w->rclock = inv + 1 + (uint32_t)k;
		}
	}
}

/*
 * Iterations [k0, k1) of every planned stream: the boundary reads, then the last stores, then
 * the last loads (a word's last load came after its last store).  A read of the shadow always
 * comes before a write of the same word in this order: a stream finds its source before the loop
 * only where no store of sigma reached the word before it, so the word's last store, and its last
 * load, come later in sigma, in the same iteration or a later one.
 */
void lastaccess_closed_chunk(struct mn_lastaccess *la, struct stream *s, unsigned m, uint64_t k0,
			     uint64_t k1, uint32_t inv)
{
	for (unsigned i = 0; i < m; i++) {
		struct stream *q = &s[i];
		uint64_t end = q->brw < k1 ? q->brw : k1;

		q->marked = k0;
		if (q->e && q->store && q->brw == q->bwar && q->brw > k0 && !q->twin_of) {
			boundary_store(la, q, k0, end, inv);
			q->marked = end;
			continue;
		}
		if (q->e && q->brw > k0 && !q->twin_of) {
			boundary(la, q, k0, end, 0, &q->run[0], !q->store, inv);
			q->marked = q->store ? k0 : end;
		}
		if (q->e && q->bwar > k0)
			boundary(la, q, k0, q->bwar < k1 ? q->bwar : k1, 1, &q->run[1], false, 0);
	}
	for (unsigned i = 0; i < m; i++) {
		uint64_t from = s[i].fin > s[i].marked ? s[i].fin : s[i].marked;

		if (s[i].e && s[i].store)
			last_stores(la, &s[i], from, k1, inv);
	}
	for (unsigned i = 0; i < m; i++) {
		uint64_t from = s[i].fin > s[i].marked ? s[i].fin : s[i].marked;

		if (s[i].e && !s[i].store)
			last_loads(la, &s[i], from, k1, inv);
	}
}

