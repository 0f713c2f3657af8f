/*
 * Rows per loop frame (nestrows.h): the memo's misses, the counts frames owe, the below slots of
 * loops met twice, and many instances at once.
 */
#include <stdlib.h>
#include <string.h>

#include "nestrows.h"

#define BELOW_MAX MN_NESTROWS_BELOW_MAX

/* Below slot b's pending instances into its rows. */
static void below_flush(struct mn_nestrows_below *b)
{
	if (!b->pend)
		return;
	for (unsigned m = 0; m < b->n && b->n <= BELOW_MAX; m++)
		b->e[m]->count += (int)m == b->dup ? b->pendc : b->pend;
	b->pend = b->pendc = 0;
}

void mn_nestrows_flush(struct mn_nestrows *r)
{
	mn_rows_memo_flush(r->rows);
	for (size_t i = 0; i < MN_NESTROWS_BELOW; i++)
		below_flush(&r->below[i]);
}

/* The row of key k, found or added with count 0; NULL counted. */
static struct mn_row *row_get(struct mn_nestrows *r, const uint64_t *k)
{
	struct mn_row *e;

	/* Growing the map moves the rows that below slots point to: their counts go in first
	 * (the map flushes its memo itself). */
	if (mn_rows_grows(r->rows))
		mn_nestrows_flush(r);
	if (!(e = mn_rows_get(r->rows, k)))
		++*r->lost;
	return e;
}

/* NULL without memory (then m stays empty: the next instance tries again, and counts again). */
__attribute__((noinline)) struct mn_row *
mn_nestrows_slow(struct mn_nestrows *r, struct mn_rows_memo *m, uint64_t pair,
		 const struct mn_loop *l, unsigned kind, bool carried)
{
	uint64_t k[MN_ROWS_KEY_WORDS];
	struct mn_row *e;

	r->key(r->arg, k, (uint32_t)pair, (uint32_t)(pair >> 32), l, kind, carried);
	e = row_get(r, k);
	mn_rows_memo_set(r->rows, m, pair, l ? l->mkey : 0, kind << 1 | carried, e);
	return e;
}

/* The slot of (pair, kind) in v[cap], cap a power of two: its entry, or the empty one it takes. */
static uint32_t owe_slot(const struct mn_nestrows_owe *v, uint32_t cap, uint64_t pair,
			 uint32_t kind)
{
	uint32_t i = mn_nestrows_hash((uint32_t)pair, (uint32_t)(pair >> 32), kind) & (cap - 1);

	while (v[i].pair && (v[i].pair != pair || v[i].kind != kind))
		i = (i + 1) & (cap - 1);
	return i;
}

/* Frame i's table, made if new; NULL without memory. */
static struct mn_nestrows_owed *owed(struct mn_nestrows *r, unsigned i)
{
	if (i >= r->owed_cap) {
		unsigned cap = r->owed_cap ? 2 * r->owed_cap : 16;
		struct mn_nestrows_owed *v;

		while (cap <= i)
			cap *= 2;
		if (!(v = realloc(r->owed, cap * sizeof(*v))))
			return NULL;
		memset(v + r->owed_cap, 0, (cap - r->owed_cap) * sizeof(*v));
		r->owed = v;
		r->owed_cap = cap;
	}
	return &r->owed[i];
}

/* Doubles o's table; false without memory. */
static bool owed_grow(struct mn_nestrows_owed *o)
{
	uint32_t cap = o->cap ? 2 * o->cap : 16;
	struct mn_nestrows_owe *v = calloc(cap, sizeof(*v));
	uint32_t *u = malloc(cap / 2 * sizeof(*u));

	if (!v || !u) {
		free(v);
		free(u);
		return false;
	}
	for (uint32_t k = 0; k < o->n; k++) {
		const struct mn_nestrows_owe *e = &o->v[o->used[k]];

		u[k] = owe_slot(v, cap, e->pair, e->kind);
		v[u[k]] = *e;
	}
	free(o->v);
	free(o->used);
	o->v = v;
	o->used = u;
	o->cap = cap;
	return true;
}

bool mn_nestrows_owe(struct mn_nestrows *r, unsigned i, uint64_t pair, unsigned kind, uint64_t c)
{
	struct mn_nestrows_owed *o = owed(r, i);
	uint32_t k;

	if (!o || (2 * (o->n + 1) > o->cap && !owed_grow(o)))
		return false;
	k = owe_slot(o->v, o->cap, pair, kind);
	if (!o->v[k].pair) {
		o->v[k] = (struct mn_nestrows_owe){ .pair = pair, .kind = kind };
		o->used[o->n++] = k;
	}
	o->v[k].count += c;
	return true;
}

void mn_nestrows_count_below(struct mn_nestrows *r, unsigned i, uint64_t pair, unsigned kind,
			     uint64_t c)
{
	uint32_t ph = mn_nestrows_hash((uint32_t)pair, (uint32_t)(pair >> 32), kind);

	for (unsigned j = 0; j <= i; j++) {
		struct mn_row *e = mn_nestrows_row(r, pair, ph, &r->nest->loops[j], kind, false);

		if (e)
			e->count += c;
	}
}

void mn_nestrows_pay(struct mn_nestrows *r, unsigned i)
{
	struct mn_loop *l = &r->nest->loops[i];
	struct mn_nestrows_owed *o = i < r->owed_cap ? &r->owed[i] : NULL;

	/* through the slots in use: a frame that ends often may have grown a large table once */
	for (uint32_t k = 0; o && k < o->n; k++) {
		struct mn_nestrows_owe *v = &o->v[o->used[k]];
		uint32_t ph = mn_nestrows_hash((uint32_t)v->pair, (uint32_t)(v->pair >> 32),
					       v->kind);
		struct mn_row *e = mn_nestrows_row(r, v->pair, ph, l, v->kind, false);

		if (e)
			e->count += v->count;
		if (i && !mn_nestrows_owe(r, i - 1, v->pair, v->kind, v->count))
			mn_nestrows_count_below(r, i - 1, v->pair, v->kind, v->count);
		*v = (struct mn_nestrows_owe){ 0 };
	}
	if (o)
		o->n = 0;
}

/* Fills b with the distinct rows of frames [0, j) for (pair, kind), counting each for the
 * instance at hand. */
static void below_fill(struct mn_nestrows *r, struct mn_nestrows_below *b, uint64_t pair,
		       uint32_t ph, unsigned j, unsigned kind)
{
	struct mn_loop *loops = r->nest->loops;
	uint64_t k[MN_ROWS_KEY_WORDS];
	unsigned gen;

	do {   /* again if finding a row grew the table, which moves the ones found before */
		gen = r->rows->gen;
		b->n = 0;
		for (unsigned f = 0; f < j && b->n <= BELOW_MAX; f++) {
			struct mn_row *e = mn_nestrows_row(r, pair, ph, &loops[f], kind, false);
			unsigned m;

			if (!e) {   /* walked: each instance counts what is lost */
				b->n = BELOW_MAX + 1;
				break;
			}
			/* this instance's count, now: a new row is an empty slot until it counts,
			 * which the next new row would take (the stamp keeps it at one) */
			mn_nestrows_count(r, e, false, 0);
			for (m = 0; m < b->n && b->e[m] != e; m++)
				;
			if (m == b->n && b->n++ < BELOW_MAX)
				b->e[m] = e;
		}
	} while (gen != r->rows->gen);
	b->pair = pair;
	b->serial = loops[j].serial;
	b->kind = kind;
	b->gen = gen;
	b->dup = -1;
	if (b->n > BELOW_MAX)
		return;
	r->key(r->arg, k, (uint32_t)pair, (uint32_t)(pair >> 32), &loops[j], kind, false);
	for (unsigned m = 0; m < b->n; m++)
		if (!memcmp(mn_row_key(b->e[m]), k, sizeof(k)))
			b->dup = (int)m;
}

/* Does below slot b hold the rows of (pair, kind) under frame J = l's invocation? */
static bool below_holds(const struct mn_nestrows *r, const struct mn_nestrows_below *b,
			uint64_t pair, unsigned kind, const struct mn_loop *l)
{
	return b->pair == pair && b->kind == kind && b->serial == l->serial &&
	       b->gen == r->rows->gen;
}

/* J's row, then the rows below it. */
void mn_nestrows_dup(struct mn_nestrows *r, uint64_t pair, uint32_t ph, unsigned i,
		     uint32_t sclock, unsigned kind, bool one_word)
{
	struct mn_loop *l = &r->nest->loops[i - 1];
	uint64_t started = mn_starts_upto(&l->starts, sclock);
	bool carried = started < l->starts.n;
	uint32_t bh = ph ^ (uint32_t)l->serial * 0x9e3779b1u;
	struct mn_nestrows_below *b = i > 1 ? &r->below[bh % MN_NESTROWS_BELOW] : NULL;
	struct mn_row *e;

	/* A one-word access counts each row once whatever it does (J's row and the rows below are
	 * told apart by b->dup): its instance waits in the slots when they hold what it needs. */
	if (one_word && (!b || (below_holds(r, b, pair, kind, l) && b->n <= BELOW_MAX))) {
		if (b) {   /* first: a new row in tally() may grow the table, which flushes b */
			b->pend++;
			b->pendc += carried;
		}
		mn_nestrows_tally(r, pair, ph, l, kind, carried, l->starts.n - started);
		return;
	}
	if ((e = mn_nestrows_row(r, pair, ph, l, kind, carried)))
		mn_nestrows_count(r, e, carried, l->starts.n - started);
	if (i == 1)
		return;
	if (!below_holds(r, b, pair, kind, l)) {
		below_flush(b);
		below_fill(r, b, pair, ph, i - 1, kind);
	}
	if (b->n <= BELOW_MAX) {
		for (unsigned m = 0; m < b->n; m++)
			mn_nestrows_count(r, b->e[m], false, 0);
		return;
	}
	for (unsigned j = 0; j + 1 < i; j++)
		if ((e = mn_nestrows_row(r, pair, ph, &r->nest->loops[j], kind, false)))
			mn_nestrows_count(r, e, false, 0);
}

/* Adds c at distance dist (if carried) to row e. */
static void add_c(struct mn_row *e, bool carried, uint64_t dist, uint64_t c)
{
	e->count += c;
	if (carried && dist < e->min)
		e->min = dist;
	if (carried && dist > e->max)
		e->max = dist;
}

void mn_nestrows_add_n(struct mn_nestrows *r, uint32_t src, uint32_t dst, unsigned i,
		       bool carried, uint64_t dist, unsigned kind, uint64_t c)
{
	uint64_t pair = src | (uint64_t)dst << 32;
	uint32_t ph = mn_nestrows_hash(src, dst, kind);
	struct mn_loop *loops = r->nest->loops;
	struct mn_row *e;

	if (!i || !loops[i - 1].dup) {
		if ((e = mn_nestrows_row(r, pair, ph, i ? &loops[i - 1] : NULL, kind, carried)))
			add_c(e, carried, dist, c);
		if (i > 1 && !mn_nestrows_owe(r, i - 2, pair, kind, c))
			mn_nestrows_count_below(r, i - 2, pair, kind, c);
		return;
	}
	r->stamp++;   /* a loop met twice: its frames' rows may be one, counted once */
	for (unsigned j = 0; j < i; j++) {
		bool cj = j + 1 == i && carried;

		if (!(e = mn_nestrows_row(r, pair, ph, &loops[j], kind, cj)))
			continue;
		if (e->stamp != r->stamp) {
			e->stamp = r->stamp;
			add_c(e, false, 0, c);
		}
		add_c(e, cj, dist, 0);
	}
}

int mn_nestrows_init(struct mn_nestrows *r, struct mn_rows *rows, struct mn_loopnest *nest,
		     mn_nestrows_key_fn *key, void *arg, uint64_t *lost, struct mn_spans *span_log)
{
	r->rows = rows;
	r->nest = nest;
	r->key = key;
	r->arg = arg;
	r->lost = lost;
	r->span_log = span_log;
	return mn_rows_memo_use(rows, r->memo, MN_NESTROWS_MEMO_BITS);
}

void mn_nestrows_owed_free(struct mn_nestrows_owed *owed, unsigned cap)
{
	for (unsigned i = 0; i < cap; i++) {
		free(owed[i].v);
		free(owed[i].used);
	}
	free(owed);
}

void mn_nestrows_free(struct mn_nestrows *r)
{
	mn_nestrows_owed_free(r->owed, r->owed_cap);
	r->owed = NULL;
	r->owed_cap = 0;
}
