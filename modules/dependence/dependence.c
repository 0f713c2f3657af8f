/*
 * dependence: the memory dependences of every loop (PROMPT 2.1, 6.2): for each loop, each
 * (source access, destination access, kind) that manifested, whether the loop carried it and at
 * which distances in iterations, and how often.  The rules are README.md's; this file is them.
 *
 * Shadow memory gives every 8-byte word its last write and the last read since (an access id and
 * a clock each, 16 bytes).  The clock counts loop events; every live loop invocation remembers the
 * clock of its invoke and of each iteration start (starts.c), so a source's clock says, for
 * every loop around the destination, whether it ran in this invocation and how many iterations
 * ago.  Access ids intern (site, context id); contexts come from the context manager.
 *
 * Sharded by address a 4 KiB page at a time: every worker sees every context event, so clocks,
 * loops and context ids agree across workers, and each word's accesses all reach its page's owner.
 * An access that spans pages reaches every worker, which tracks the words of its own pages and
 * logs the rows they counted, so that merge() counts each once per access (on_span()): profiles
 * do not depend on the number of workers, nor on where the pages of the address layout fall.
 */
#include <stdlib.h>
#include <string.h>

#include "dep.h"

/* ---- The clock and the loops ----------------------------------------------------------------- */

/* Forgets every word's history when the 32-bit clock would wrap (README: clock_resets). */
static void clock_reset(struct dep *d)
{
	if (d->sh)
		d->aliases += mn_shadow_aliases(d->sh);
	mn_shadow_destroy(d->sh);
	if (mn_shadow_create(&d->sh, 8, sizeof(struct word)))
		d->sh = NULL;
	for (unsigned i = 0; i < d->nloops; i++) {   /* all of the past is now clock 0 */
		d->loops[i].inv = 0;
		mn_starts_reset(&d->loops[i].starts, d->loops[i].starts.n);
	}
	d->clock = 0;
	d->resets++;
}

static void tick(struct dep *d)
{
	if (__builtin_expect(d->clock >= d->clock_limit, 0))
		clock_reset(d);
	d->clock++;
}

static void outer_pay(struct dep *d, unsigned i);

/* Drops the loops whose frames the context manager has closed, each paying what it owes. */
static void loops_sync(struct dep *d)
{
	unsigned depth = mn_ctx_depth(d->ctx);

	while (d->nloops) {
		struct loop *l = &d->loops[d->nloops - 1];

		if (l->frame < depth && mn_ctx_frame_serial(d->ctx, l->frame) == l->serial)
			return;
		outer_pay(d, d->nloops - 1);
		d->in_target -= l->target;
		d->nloops--;
	}
}

/* Every live frame pays, innermost first: before merge() and emit() read the rows. */
void dep_outer_pay_all(struct dep *d)
{
	for (unsigned i = d->nloops; i-- > 0;)
		outer_pay(d, i);
}

/* The loop whose frame is on top of the context stack, if its site is `site`. */
struct loop *dep_top_loop(struct dep *d, uint32_t site)
{
	struct loop *l = d->nloops ? &d->loops[d->nloops - 1] : NULL;

	return l && l->site == site && l->frame + 1 == mn_ctx_depth(d->ctx) ? l : NULL;
}

void dep_loop_invoke(void *st, uint32_t site)
{
	struct dep *d = st;
	struct site *s = mn_sitevec_get(&d->sites, site);
	unsigned top;
	struct loop *l;

	tick(d);
	mn_ctx_push(d->ctx, site, MN_CTX_LOOP);
	loops_sync(d);
	if (!s) {
		d->nomem++;
		return;
	}
	s->loop = true;
	s->invocations++;
	top = mn_ctx_depth(d->ctx) - 1;
	if (!mn_ctx_depth(d->ctx) || mn_ctx_frame_site(d->ctx, top) != site || dep_top_loop(d, site))
		return;   /* the frame could not be stored */
	if (d->nloops == d->loop_cap) {
		unsigned cap = d->loop_cap ? 2 * d->loop_cap : 16;
		struct loop *v = realloc(d->loops, cap * sizeof(*v));

		if (!v) {
			d->nomem++;
			return;
		}
		memset(v + d->loop_cap, 0, (cap - d->loop_cap) * sizeof(*v));
		d->loops = v;
		d->loop_cap = cap;
	}
	l = &d->loops[d->nloops++];
	l->site = site;
	l->fid = mn_ctx_frame_id(d->ctx, top);
	l->frame = top;
	l->serial = mn_ctx_frame_serial(d->ctx, top);
	l->inv = d->clock;
	l->target = s->target;
	l->mkey = l->fid | (uint64_t)site << 32;
	l->mhash = l->fid * 0xc2b2ae3du ^ site * 0x27d4eb2fu;
	l->dup = d->nloops > 1 && d->loops[d->nloops - 2].dup;
	for (unsigned i = 0; i + 1 < d->nloops && !l->dup; i++)
		l->dup = d->loops[i].site == site;
	d->in_target += l->target;
	mn_starts_reset(&l->starts, 0);
}

void dep_loop_iter(void *st, uint32_t site)
{
	struct dep *d = st;
	struct site *s = mn_sitevec_get(&d->sites, site);
	struct loop *l;

	tick(d);
	if (s)
		s->iterations++;
	mn_ctx_iter(d->ctx, site);
	loops_sync(d);
	l = dep_top_loop(d, site);
	if (l && !mn_starts_add(&l->starts, d->clock))
		d->nomem++;
}

void dep_loop_exit(void *st, uint32_t site)
{
	mn_ctx_pop(((struct dep *)st)->ctx, site);
	loops_sync(st);
}

void dep_func_entry(void *st, uint32_t site)
{
	mn_ctx_push(((struct dep *)st)->ctx, site, MN_CTX_FUNCTION);
}

void dep_func_exit(void *st, uint32_t site)
{
	mn_ctx_pop(((struct dep *)st)->ctx, site);
	loops_sync(st);
}

/* ---- Dependences ----------------------------------------------------------------------------- */

/*
 * README's rule 5: walking from an access's context ctx out to the loop's frame fid, the last
 * function frame met (the one nearest the loop), or 0.  Sources ran in the loop's current
 * invocation, so fid is on their path; frames the ids leave out (rule 7) are never met.
 */
static uint32_t via(const struct dep *d, uint32_t ctx, uint32_t fid)
{
	uint32_t v = 0;

	for (; ctx != fid; ctx = mn_ctx_id_parent(d->ctx, ctx)) {
		uint32_t site = mn_ctx_id_site(d->ctx, ctx);
		const struct site *s = mn_sitevec_find(&d->sites, site);

		if (!ctx)
			return 0;   /* fid is not on the path: only after a failed intern */
		if (!s || !s->loop)
			v = site;
	}
	return v;
}

/*
 * via() through a cache: a recursion makes every level's accesses new access ids (their contexts
 * differ), so the memo of rows misses and each miss would walk from the access's context out to
 * the frame, as deep as the recursion.  An answer never changes: the ids name fixed paths, and
 * every loop on a path was invoked, so known as a loop, before the path existed.
 */
static uint32_t via_cached(struct dep *d, uint32_t ctx, uint32_t fid)
{
	struct via_slot *v = &d->vias[(ctx * 0x9e3779b1u ^ fid * 0x85ebca77u) >> (32 - VIA_BITS)];

	if (v->ctx != ctx || v->fid != fid || !v->set)
		*v = (struct via_slot){ ctx, fid, via(d, ctx, fid), true };
	return v->via;
}

/* The key of the row of an instance from access src to dst in loop frame l (NULL: loop 0). */
static void row_key(struct dep *d, struct dep_key *k, uint32_t src, uint32_t dst,
		    const struct loop *l, enum dep_kind kind, bool carried)
{
	const struct mn_access *s = &d->acc.acc[src], *t = &d->acc.acc[dst];

	*k = (struct dep_key){ .loop = l ? l->site : 0, .src = s->site, .dst = t->site,
			       .kind = (uint8_t)kind, .carried = carried };
	if (d->context) {
		k->src_ctx = s->ctx;
		k->dst_ctx = t->ctx;
	}
	if (l) {
		k->src_via = via_cached(d, s->ctx, l->fid);
		k->dst_via = via_cached(d, t->ctx, l->fid);
	}
}

/* rows_find() while profiling: NULL counted. */
static struct mn_row *row_get(struct dep *d, const struct dep_key *k)
{
	struct mn_row *e;

	/* Growing the map moves the rows that below slots point to: their counts go in first
	 * (the map flushes its memo itself). */
	if (mn_rows_grows(&d->deps))
		pending_flush_all(d);
	if (!(e = rows_find(&d->deps, k)))
		d->nomem++;
	return e;
}

/* row()'s miss: the via walks and the row map.  Fills memo slot m; NULL without memory (then
 * m stays empty: the next instance tries again, and counts again). */
__attribute__((noinline)) struct mn_row *
dep_row_slow(struct dep *d, struct mn_rows_memo *m, uint32_t src, uint32_t dst,
	     const struct loop *l, enum dep_kind kind, bool carried)
{
	struct dep_key k;
	struct mn_row *e;

	row_key(d, &k, src, dst, l, kind, carried);
	e = row_get(d, &k);
	mn_rows_memo_set(&d->deps, m, src | (uint64_t)dst << 32, l ? l->mkey : 0,
			 (uint32_t)kind << 1 | carried, e);
	return e;
}

/* The slot of (pair, kind) in v[cap], cap a power of two: its entry, or the empty one it takes. */
static uint32_t outer_slot(const struct outer *v, uint32_t cap, uint64_t pair, uint32_t kind)
{
	uint32_t i = pair_hash((uint32_t)pair, (uint32_t)(pair >> 32), kind) & (cap - 1);

	while (v[i].pair && (v[i].pair != pair || v[i].kind != kind))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Adds c to what frame l owes (pair, kind); false without memory. */
bool dep_outer_add(struct loop *l, uint64_t pair, enum dep_kind kind, uint64_t c)
{
	uint32_t i;

	if (2 * (l->outer_n + 1) > l->outer_cap) {
		uint32_t cap = l->outer_cap ? 2 * l->outer_cap : 16;
		struct outer *v = calloc(cap, sizeof(*v));
		uint32_t *u = malloc(cap / 2 * sizeof(*u));

		if (!v || !u) {
			free(v);
			free(u);
			return false;
		}
		for (uint32_t k = 0; k < l->outer_n; k++) {
			const struct outer *o = &l->outer[l->outer_used[k]];

			u[k] = outer_slot(v, cap, o->pair, o->kind);
			v[u[k]] = *o;
		}
		free(l->outer);
		free(l->outer_used);
		l->outer = v;
		l->outer_used = u;
		l->outer_cap = cap;
	}
	i = outer_slot(l->outer, l->outer_cap, pair, kind);
	if (!l->outer[i].pair) {
		l->outer[i] = (struct outer){ .pair = pair, .kind = kind };
		l->outer_used[l->outer_n++] = i;
	}
	l->outer[i].count += c;
	return true;
}

/* c instances of (pair, kind) in the not-carried rows of frames [0, i], at once. */
void dep_outer_count(struct dep *d, unsigned i, uint64_t pair, enum dep_kind kind, uint64_t c)
{
	uint32_t ph = pair_hash((uint32_t)pair, (uint32_t)(pair >> 32), kind);

	for (unsigned j = 0; j <= i; j++) {
		struct mn_row *e = row(d, pair, ph, &d->loops[j], kind, false);

		if (e)
			e->count += c;
	}
}

/* Frame i pays what it owes into its rows and hands it to the frame below; owes nothing after. */
static void outer_pay(struct dep *d, unsigned i)
{
	struct loop *l = &d->loops[i];

	/* through the slots in use: a frame that ends often may have grown a large table once */
	for (uint32_t k = 0; k < l->outer_n; k++) {
		struct outer *o = &l->outer[l->outer_used[k]];
		struct mn_row *e;

		e = row(d, o->pair, pair_hash((uint32_t)o->pair, (uint32_t)(o->pair >> 32), o->kind),
			l, o->kind, false);
		if (e)
			e->count += o->count;
		if (i && !dep_outer_add(&d->loops[i - 1], o->pair, o->kind, o->count))
			dep_outer_count(d, i - 1, o->pair, o->kind, o->count);
		*o = (struct outer){ 0 };
	}
	l->outer_n = 0;
}

/*
 * report() where frame i - 1 is the innermost holding both accesses (i = 0: none) and rule 6
 * merges nothing (struct outer): its row now, and one owed by the frame below.
 */
static inline void report_innermost(struct dep *d, uint64_t pair, uint32_t ph, unsigned i,
				    uint32_t sclock, enum dep_kind kind)
{
	struct loop *l;
	uint64_t started;
	bool carried;

	if (!i) {
		tally(d, pair, ph, NULL, kind, false, 0);   /* loop 0: no loop invocation holds both */
		return;
	}
	l = &d->loops[i - 1];
	started = mn_starts_upto(&l->starts, sclock);
	carried = started < l->starts.n;
	tally(d, pair, ph, l, kind, carried, l->starts.n - started);
	if (i > 1 && !dep_outer_add(&d->loops[i - 2], pair, kind, 1))
		dep_outer_count(d, i - 2, pair, kind, 1);
}

/* Fills b with the distinct rows of frames [0, j) for (pair, kind), counting each for the
 * instance at hand. */
static void below_fill(struct dep *d, struct below *b, uint64_t pair, uint32_t ph, unsigned j,
		       enum dep_kind kind)
{
	unsigned gen;

	do {   /* again if finding a row grew the table, which moves the ones found before */
		gen = d->deps.gen;
		b->n = 0;
		for (unsigned k = 0; k < j && b->n <= BELOW_MAX; k++) {
			struct mn_row *e = row(d, pair, ph, &d->loops[k], kind, false);
			unsigned m;

			if (!e) {
				b->n = BELOW_MAX + 1;   /* walked: each instance counts what is lost */
				break;
			}
			/* this instance's count, now: a new row is an empty slot until it counts,
			 * which the next new row would take (the stamp keeps it at one) */
			count(d, e, false, 0);
			for (m = 0; m < b->n && b->e[m] != e; m++)
				;
			if (m == b->n && b->n++ < BELOW_MAX)
				b->e[m] = e;
		}
	} while (gen != d->deps.gen);
	b->pair = pair;
	b->serial = d->loops[j].serial;
	b->kind = kind;
	b->gen = gen;
	b->dup = -1;
	if (b->n <= BELOW_MAX) {
		struct dep_key k;

		row_key(d, &k, (uint32_t)pair, (uint32_t)(pair >> 32), &d->loops[j], kind, false);
		for (unsigned m = 0; m < b->n; m++)
			if (!memcmp(mn_row_key(b->e[m]), &k, sizeof(k)))
				b->dup = (int)m;
	}
}

/* Does below slot b hold the rows of (pair, kind) under frame J = l's invocation? */
static inline bool below_holds(const struct dep *d, const struct below *b, uint64_t pair,
			       enum dep_kind kind, const struct loop *l)
{
	return b->pair == pair && b->kind == kind && b->serial == l->serial &&
	       b->gen == d->deps.gen;
}

/* report() below a frame of a loop met twice (l->dup): J's row, then the rows below it. */
static void report_dup(struct dep *d, uint64_t pair, uint32_t ph, unsigned i, uint32_t sclock,
		       enum dep_kind kind, bool one_word)
{
	struct loop *l = &d->loops[i - 1];
	uint64_t started = mn_starts_upto(&l->starts, sclock);
	bool carried = started < l->starts.n;
	struct below *b = i > 1 ? &d->below[(ph ^ (uint32_t)l->serial * 0x9e3779b1u) % BELOW] : NULL;
	struct mn_row *e;

	/* An access that touches one word counts each row once whatever it does (one instance per
	 * pair and kind; J's row and the rows below are told apart by b->dup): its instance waits
	 * in the slots, as report_innermost()'s do, when they already hold what it needs. */
	if (one_word && (!b || (below_holds(d, b, pair, kind, l) && b->n <= BELOW_MAX))) {
		if (b) {   /* first: a new row in tally() may grow the table, which flushes b */
			b->pend++;
			b->pendc += carried;
		}
		tally(d, pair, ph, l, kind, carried, l->starts.n - started);
		return;
	}
	if ((e = row(d, pair, ph, l, kind, carried)))
		count(d, e, carried, l->starts.n - started);
	if (i == 1)
		return;
	if (!below_holds(d, b, pair, kind, l)) {
		below_flush(b);
		below_fill(d, b, pair, ph, i - 1, kind);
	}
	if (b->n <= BELOW_MAX) {
		for (unsigned m = 0; m < b->n; m++)
			count(d, b->e[m], false, 0);
		return;
	}
	for (unsigned j = 0; j + 1 < i; j++)
		if ((e = row(d, pair, ph, &d->loops[j], kind, false)))
			count(d, e, false, 0);
}

/* One dependence instance from access src at clock sclock to access dst, now: README's rule 4. */
static inline void report(struct dep *d, uint32_t src, uint32_t sclock, uint32_t dst,
			  enum dep_kind kind, bool one_word)
{
	uint64_t pair = src | (uint64_t)dst << 32;
	uint32_t ph = pair_hash(src, dst, kind);
	struct mn_row *e;
	unsigned i;

	/* The innermost frame holding both accesses (invokes only grow outward in: frames [0, i)
	 * hold the source), the only one that can carry it. */
	i = holding(d, sclock);
	if (!d->target_mode && i && d->loops[i - 1].dup) {
		report_dup(d, pair, ph, i, sclock, kind, one_word);
		return;
	}
	if (one_word && !d->target_mode) {
		report_innermost(d, pair, ph, i, sclock, kind);
		return;
	}
	/* Every frame's row, each once per destination access (count()'s stamp). */
	for (unsigned j = 0; j < i; j++) {
		struct loop *l = &d->loops[j];
		uint64_t started;
		bool carried;

		if (d->target_mode && !l->target)
			continue;
		started = mn_starts_upto(&l->starts, sclock);
		carried = started < l->starts.n;
		e = row(d, pair, ph, l, kind, carried);
		if (e)
			count(d, e, carried, l->starts.n - started);
	}
	if (!i && !d->target_mode && (e = row(d, pair, ph, NULL, kind, false)))
		count(d, e, false, 0);   /* loop 0: no loop invocation holds both */
}

/* README's rule 3 on one word w of an access (aid) that touches one word, or more. */
static inline __attribute__((always_inline)) void
word_access(struct dep *d, struct word *w, uint32_t aid, bool store, bool one)
{
	if (w->writer)
		report(d, w->writer, w->wclock, aid, store ? DEP_WAW : DEP_RAW, one);
	if (store && w->reader)
		report(d, w->reader, w->rclock, aid, DEP_WAR, one);
	if (store)
		*w = (struct word){ .writer = aid, .wclock = d->clock };
	else
		*w = (struct word){ w->writer, w->wclock, aid, d->clock };
}

/*
 * An access [addr, end) that spans pages: every word, each by the worker that owns its page.
 * With several workers each counts the rows its words found, and logs them by the access's
 * serial, so that merge() counts each row once per access (struct mn_spans).
 */
static __attribute__((noinline)) void
on_span(struct dep *d, uint32_t aid, uint64_t addr, uint64_t end, bool store)
{
	d->spanning = d->nw > 1;
	for (uint64_t a = addr & ~UINT64_C(7); a < end; a += 8) {
		struct word *w;

		if (d->nw > 1 && (a >> PAGE_SHIFT) % d->nw != d->wid)
			continue;   /* another worker's page */
		if ((w = mn_shadow_get(d->sh, a)))
			word_access(d, w, aid, store, false);
	}
	d->spanning = false;
}

/* The handler behind load and store: README's rule 3 on every word of the access.  Inlined into
 * each so that `store` is a constant. */
static inline __attribute__((always_inline)) void
on_access(struct dep *d, uint32_t site, uint64_t addr, uint32_t size, bool store)
{
	uint64_t end = addr + size;
	uint32_t ctx = mn_ctx_current(d->ctx);
	struct site *s;
	bool span;

	if (!size || (d->target_mode && !d->in_target))
		return;
	span = (addr ^ (end - 1)) >> PAGE_SHIFT;
	d->spans += span;   /* every worker sees every such access (shard_worker): one numbering */
	s = mn_sitevec_get(&d->sites, site);   /* its access id, cached for its last context */
	if (s && (s->ctx != ctx || !s->aid)) {
		s->ctx = ctx;
		s->aid = mn_access_intern(&d->acc, site, ctx);
	}
	if (!s || !s->aid || !d->sh) {
		d->nomem++;
		return;
	}
	d->stamp++;
	if (__builtin_expect(span, 0)) {
		on_span(d, s->aid, addr, end, store);
		return;
	}
	for (uint64_t a = addr & ~UINT64_C(7); a < end; a += 8) {
		struct word *w = mn_shadow_get(d->sh, a);

		if (w)   /* else an alias: counted by the shadow */
			word_access(d, w, s->aid, store, (addr & 7) + size <= 8);
	}
}

void dep_load(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, size, false);
}

void dep_store(void *st, uint32_t site, uint64_t addr, uint64_t value, uint32_t size)
{
	on_access(st, site, addr, size, true);
}


void dep_access(struct dep *d, uint32_t site, uint64_t addr, uint32_t size, bool store)
{
	on_access(d, site, addr, size, store);
}
