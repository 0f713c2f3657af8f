/*
 * The dependence module's tables (backend/accesses.c, spans.c, starts.c), each against a slow, obviously
 * correct model kept by the test (the rows themselves are a row map: tests/maps/test_rows.c):
 *
 * - the rows counted by accesses that span workers (mn_spans): per key the set of serials
 *   logged; a merge reports the size of each key's intersection and leaves the union;
 * - the iteration starts of a loop invocation (mn_starts): the clock at which each iteration
 *   began, in an array; mn_starts_upto() is the number of them at or before a clock, plus the
 *   base, and mn_starts_span()'s interval gets that answer throughout.
 *
 * They are compiled into this test with malloc, calloc and realloc renamed to the counters
 * below (CMakeLists), so that a test can make them fail.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "accesses.h"
#include "spans.h"
#include "starts.h"

/* Allocations of those, which fail while these are set. */
static bool fail_malloc, fail_calloc, fail_realloc;

void *test_malloc_(size_t n);
void *test_calloc_(size_t n, size_t size);
void *test_realloc_(void *p, size_t n);

void *test_malloc_(size_t n)
{
	return fail_malloc ? NULL : malloc(n);
}

void *test_calloc_(size_t n, size_t size)
{
	return fail_calloc ? NULL : calloc(n, size);
}

void *test_realloc_(void *p, size_t n)
{
	return fail_realloc ? NULL : realloc(p, n);
}

static uint64_t rng = 88172645463325252u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* True per times in `of`, at random. */
static bool chance(uint64_t per, uint64_t of)
{
	return next() % of < per;
}

/* A row key of the dependence module's layout (dep.h): the four words mn_spans take. */
struct dep_key {
	uint32_t loop, src, dst, src_via, dst_via, src_ctx, dst_ctx;
	uint8_t kind, carried;
	uint16_t pad;
};
_Static_assert(sizeof(struct dep_key) == 32, "four words");

/* A key's words, as mn_spans take it (struct dep_key's, copied: no aliasing). */
static const uint64_t *key_words(const struct dep_key *k, uint64_t *w)
{
	memcpy(w, k, sizeof(*k));
	return w;
}
#define KW(k) key_words((k), (uint64_t[4]){ 0 })

/* ---- Rows counted by accesses that span workers (mn_spans) --------------------------------- */

/* The model of one table's list for one key: the serials logged, increasing, each once. */
struct serials {
	uint64_t *v;
	size_t n, cap;
};

static void serials_put(struct serials *m, uint64_t x)
{
	if (m->n && m->v[m->n - 1] == x)
		return;
	assert_true(!m->n || m->v[m->n - 1] < x);
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 8;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		assert_non_null(m->v);
	}
	m->v[m->n++] = x;
}

/* |a & b|, and a |= b, by walking the two lists side by side. */
static uint64_t serials_shared(const struct serials *a, const struct serials *b)
{
	uint64_t n = 0;

	for (size_t i = 0, j = 0; i < a->n && j < b->n;) {
		if (a->v[i] == b->v[j])
			n++;
		if (a->v[i] <= b->v[j])
			i++;
		else
			j++;
	}
	return n;
}

static void serials_union(struct serials *a, const struct serials *b)
{
	struct serials u = { 0 };
	size_t i = 0, j = 0;

	while (i < a->n || j < b->n)
		if (j == b->n || (i < a->n && a->v[i] <= b->v[j]))
			serials_put(&u, a->v[i++]);
		else
			serials_put(&u, b->v[j++]);
	free(a->v);
	*a = u;
}

/* Key i of a test: distinct by src = i, the other fields random, the padding 0. */
static struct dep_key span_key(uint32_t i)
{
	struct dep_key k;
	uint64_t r = next();

	memset(&k, 0, sizeof(k));
	k.loop = (uint32_t)(r % 5);
	k.src = i;
	k.dst = (uint32_t)(r >> 8) % 97;
	k.src_via = (uint32_t)(r >> 16) % 3;
	k.dst_via = (uint32_t)(r >> 20) % 3;
	k.src_ctx = (uint32_t)(r >> 24) % 4;
	k.dst_ctx = (uint32_t)(r >> 28) % 4;
	k.kind = (uint8_t)((r >> 32) % 3);
	k.carried = (uint8_t)((r >> 36) & 1);
	return k;
}

/* The list of key k in t (white box: the nomem test must know when a list is full). */
static const struct mn_span_list *span_list(const struct mn_spans *t, const struct dep_key *k)
{
	for (size_t i = 0; t->v && i < (size_t)1 << t->bits; i++)
		if (t->v[i].n && !memcmp(t->v[i].k, k, sizeof(*k)))
			return &t->v[i];
	fail_msg("key %u: expected a list, got none", k->src);
	return NULL;
}

/* What dup() was told during one merge: got[key] (UINT64_MAX: not called for it). */
struct dups {
	const struct dep_key *keys;
	uint64_t *got;
	size_t nkeys;
};

static void dups_clear(struct dups *d)
{
	for (size_t i = 0; i < d->nkeys; i++)
		d->got[i] = UINT64_MAX;
}

static void on_dup(void *arg, const uint64_t *kw, uint64_t n)
{
	struct dups *d = arg;
	struct dep_key key, *k = &key;

	memcpy(k, kw, sizeof(*k));
	if (k->src >= d->nkeys)
		fail_msg("dup(): a key that was never added (src %u)", k->src);
	assert_memory_equal(k, &d->keys[k->src], sizeof(*k));
	if (d->got[k->src] != UINT64_MAX)
		fail_msg("dup(): key %u twice in one merge (%" PRIu64 ", then %" PRIu64 ")", k->src,
			 d->got[k->src], n);
	d->got[k->src] = n;
}

/*
 * t holds exactly the model m[0 .. nkeys - 1]: its lists decoded as the header describes them
 * (LEB128 deltas from the serial before, the first from 0), each key once, `last` its last serial,
 * n the lists in use.
 */
static void assert_spans(const struct mn_spans *t, const struct dep_key *keys,
			 const struct serials *m, size_t nkeys)
{
	size_t lists = 0, want = 0;
	bool *seen = calloc(nkeys, 1);

	assert_non_null(seen);
	for (size_t i = 0; t->v && i < (size_t)1 << t->bits; i++) {
		const struct mn_span_list *l = &t->v[i];
		const uint8_t *p, *end;
		const struct serials *ms;
		struct dep_key lk;
		uint64_t prev = 0;
		size_t j = 0;

		if (!l->n)
			continue;
		lists++;
		p = l->bytes;
		end = p + l->n;
		memcpy(&lk, l->k, sizeof(lk));
		if (lk.src >= nkeys || seen[lk.src])
			fail_msg("a list of key %u: expected each of %zu keys once", lk.src,
				 nkeys);
		assert_memory_equal(&lk, &keys[lk.src], sizeof(lk));
		seen[lk.src] = true;
		ms = &m[lk.src];
		for (; p < end; j++) {
			uint64_t v = 0;

			for (unsigned shift = 0;; shift += 7) {
				assert_true(p < end && shift < 64);
				v |= (uint64_t)(*p & 0x7f) << shift;
				if (!(*p++ & 0x80))
					break;
			}
			prev += v;
			if (j >= ms->n || ms->v[j] != prev)
				fail_msg("key %u, serial %zu: expected %" PRIu64 ", got %" PRIu64,
					 lk.src, j, j < ms->n ? ms->v[j] : UINT64_MAX, prev);
		}
		if (j != ms->n)
			fail_msg("key %u: expected %zu serials, got %zu", lk.src, ms->n, j);
		assert_int_equal(l->last, prev);
	}
	for (size_t k = 0; k < nkeys; k++)
		want += m[k].n > 0;
	if (lists != want || t->n != want)
		fail_msg("expected %zu keys, got %zu lists and n %zu", want, lists, t->n);
	free(seen);
}

/*
 * The black box's view of the same: merging into t a table that logged every serial of the
 * model must report every key's whole list as shared (t holds at least the model), and leave t
 * as it was.
 */
static void check_by_merge(struct mn_spans *t, const struct serials *m, struct dups *d)
{
	struct mn_spans all = { 0 };

	for (size_t k = 0; k < d->nkeys; k++)
		for (size_t j = 0; j < m[k].n; j++)
			assert_true(mn_spans_add(&all, KW(&d->keys[k]), m[k].v[j]));
	dups_clear(d);
	assert_int_equal(mn_spans_merge(t, &all, on_dup, d), 0);
	for (size_t k = 0; k < d->nkeys; k++)
		if (d->got[k] != (m[k].n ? m[k].n : UINT64_MAX))
			fail_msg("key %zu, %zu serials: expected all shared, got %" PRIu64, k,
				 m[k].n, d->got[k]);
	assert_int_equal(all.n, 0);
	mn_spans_free(&all);
	assert_spans(t, d->keys, m, d->nkeys);
}

/*
 * One script: nw workers log random keys of nkeys by increasing access serials (each access is
 * seen by a random subset of the workers, which may log it for several keys, and twice for one),
 * the gap between serials 0 to 2 or, big_per_mille times in 1000, more than 2^35; then the
 * workers' tables merge in order into the first, each merge reporting the shared serials.
 */
static void spans_script(unsigned nw, size_t nkeys, size_t steps, unsigned big_per_mille)
{
	struct mn_spans t[5] = { 0 };
	struct serials *m = calloc(nw * nkeys, sizeof(*m));   /* m[w * nkeys + key] */
	struct dep_key *keys = malloc(nkeys * sizeof(*keys));
	struct dups d = { keys, malloc(nkeys * sizeof(uint64_t)), nkeys };
	uint64_t serial = next() % 3;

	assert_true(nw <= 5);
	assert_non_null(m);
	assert_non_null(keys);
	assert_non_null(d.got);
	for (size_t k = 0; k < nkeys; k++)
		keys[k] = span_key((uint32_t)k);
	for (size_t i = 0; i < steps; i++) {
		size_t k = chance(3, 4) ? next() % nkeys : next() % (nkeys < 4 ? nkeys : 4);
		unsigned seen_by = (unsigned)(next() % (1u << nw));   /* the workers, a bit each */

		if (chance(big_per_mille, 1000))
			serial += ((uint64_t)1 << 35) + (next() >> 22);   /* up to 2^42 more */
		else
			serial += next() % 3;
		for (unsigned w = 0; w < nw; w++) {
			if (!(seen_by >> w & 1))
				continue;
			assert_true(mn_spans_add(&t[w], KW(&keys[k]), serial));
			serials_put(&m[w * nkeys + k], serial);
			if (chance(1, 16))   /* the same access again: ignored */
				assert_true(mn_spans_add(&t[w], KW(&keys[k]), serial));
		}
	}
	for (unsigned w = 0; w < nw; w++)
		assert_spans(&t[w], keys, &m[w * nkeys], nkeys);
	for (unsigned w = 1; w < nw; w++) {
		const struct serials *f = &m[w * nkeys];

		dups_clear(&d);
		assert_int_equal(mn_spans_merge(&t[0], &t[w], on_dup, &d), 0);
		for (size_t k = 0; k < nkeys; k++) {
			uint64_t want = UINT64_MAX;   /* no call */

			if (m[k].n && f[k].n)
				want = serials_shared(&m[k], &f[k]);

			/* a key both hold but with no serial in common: dup() or not, with 0 */
			if (d.got[k] != want && !(want == 0 && d.got[k] == UINT64_MAX))
				fail_msg("merge %u, key %zu: expected %" PRIu64 " shared, got %"
					 PRIu64 " (UINT64_MAX: no call)", w, k, want, d.got[k]);
			serials_union(&m[k], &f[k]);
		}
		assert_int_equal(t[w].n, 0);   /* from is left empty */
		mn_spans_free(&t[w]);
		assert_spans(&t[0], keys, m, nkeys);
	}
	check_by_merge(&t[0], m, &d);
	mn_spans_free(&t[0]);
	for (size_t i = 0; i < nw * nkeys; i++)
		free(m[i].v);
	free(m);
	free(keys);
	free(d.got);
}

static void test_spans_random(void **state)
{
	(void)state;
	spans_script(2, 1, 3000, 0);           /* one key */
	spans_script(4, 6, 20000, 5);          /* a handful of keys */
	spans_script(5, 40, 30000, 100);       /* mostly multi-byte deltas */
	spans_script(3, 3000, 60000, 2);       /* many keys: the tables grow */
	for (int i = 0; i < 20; i++)           /* small ones, some tables empty */
		spans_script(2 + (unsigned)(next() % 4), 1 + next() % 8, next() % 40, 200);
}

/* Without memory mn_spans_add() returns false and the table keeps what it had; a merge
 * returns -ENOMEM and leaves nothing to leak. */
static void test_spans_nomem(void **state)
{
	struct dep_key keys[40];
	struct serials m[40] = { 0 }, mb[40] = { 0 };
	uint64_t got[40];
	struct dups d = { keys, got, 40 };
	struct mn_spans a = { 0 }, b = { 0 };
	const struct mn_span_list *l;

	(void)state;
	for (uint32_t k = 0; k < 40; k++)
		keys[k] = span_key(k);
	fail_calloc = true;   /* no table */
	assert_false(mn_spans_add(&a, KW(&keys[0]), 1));
	assert_int_equal(a.n, 0);
	fail_calloc = false;
	fail_realloc = true;   /* a table but no list */
	assert_false(mn_spans_add(&a, KW(&keys[0]), 1));
	assert_int_equal(a.n, 0);
	fail_realloc = false;
	assert_spans(&a, keys, m, 40);
	for (uint32_t k = 0; k < 32; k++) {   /* 32 keys in 64 slots: the next needs more */
		assert_true(mn_spans_add(&a, KW(&keys[k]), 5 + k));
		serials_put(&m[k], 5 + k);
	}
	assert_int_equal(a.bits, 6);
	fail_calloc = true;
	assert_false(mn_spans_add(&a, KW(&keys[32]), 100));
	if (mn_spans_add(&a, KW(&keys[0]), 100))   /* a key it has: it may say yes */
		serials_put(&m[0], 100);
	fail_calloc = false;
	assert_spans(&a, keys, m, 40);
	for (uint64_t v = 200;; v++) {   /* until the next takes a realloc (the table grows) */
		assert_true(mn_spans_add(&a, KW(&keys[1]), v));
		serials_put(&m[1], v);
		l = span_list(&a, &keys[1]);
		if (l->cap - l->n < 10)
			break;
	}
	fail_realloc = true;
	assert_false(mn_spans_add(&a, KW(&keys[1]), 300));
	fail_realloc = false;
	assert_true(mn_spans_add(&a, KW(&keys[1]), (uint64_t)1 << 40));
	serials_put(&m[1], (uint64_t)1 << 40);
	assert_spans(&a, keys, m, 40);

	mn_spans_free(&a);
	for (uint32_t k = 0; k < 40; k++) {
		free(m[k].v);
		m[k] = (struct serials){ 0 };
	}

	/* A merge into a table that cannot grow, then one whose union cannot be allocated. */
	for (uint32_t k = 0; k < 32; k++) {   /* a full again */
		assert_true(mn_spans_add(&a, KW(&keys[k]), 5 + k));
		serials_put(&m[k], 5 + k);
	}
	for (uint32_t k = 30; k < 40; k++) {   /* 30, 31 shared with a */
		assert_true(mn_spans_add(&b, KW(&keys[k]), 5 + k));
		serials_put(&mb[k], 5 + k);
	}
	fail_calloc = true;
	dups_clear(&d);
	assert_int_equal(mn_spans_merge(&a, &b, on_dup, &d), -ENOMEM);
	fail_calloc = false;
	for (uint32_t k = 0; k < 40; k++)   /* what merged, merged right */
		if (got[k] != UINT64_MAX)
			assert_int_equal(got[k], serials_shared(&m[k], &mb[k]));
	assert_spans(&a, keys, m, 40);   /* a could not grow: it took nothing */
	mn_spans_free(&b);   /* with whatever it kept: ASan's leak check */
	mn_spans_free(&a);
	for (uint32_t k = 0; k < 40; k++) {
		free(m[k].v);
		free(mb[k].v);
		m[k] = mb[k] = (struct serials){ 0 };
	}

	for (uint32_t k = 0; k < 4; k++) {   /* both log keys 0..3, sharing serials 10 and 30 */
		for (uint64_t v = 10; v <= 30; v += 10) {
			assert_true(mn_spans_add(&a, KW(&keys[k]), v + (v == 20)));
			serials_put(&m[k], v + (v == 20));
			assert_true(mn_spans_add(&b, KW(&keys[k]), v));
			serials_put(&mb[k], v);
		}
	}
	fail_realloc = true;   /* no union */
	dups_clear(&d);
	assert_int_equal(mn_spans_merge(&a, &b, on_dup, &d), -ENOMEM);
	fail_realloc = false;
	for (uint32_t k = 0; k < 4; k++)   /* told all the same, a keeps its own lists */
		assert_int_equal(got[k], 2);
	assert_spans(&a, keys, m, 40);
	mn_spans_free(&b);
	mn_spans_free(&a);
	for (uint32_t k = 0; k < 40; k++) {
		free(m[k].v);
		free(mb[k].v);
	}
}

/* ---- Iteration starts (mn_starts) ---------------------------------------------------------- */

/* The model: the clock at which each iteration since the last reset began, increasing. */
struct starts_model {
	uint32_t *clock;   /* iteration base + 1 + i began at clock[i] */
	size_t n, cap;
	uint64_t base;
	uint64_t runs;     /* of consecutive clocks */
};

static void model_reset(struct starts_model *m, uint64_t base)
{
	m->n = m->runs = 0;
	m->base = base;
}

static void model_add(struct starts_model *m, uint32_t clock)
{
	assert_true(!m->n || m->clock[m->n - 1] < clock);
	m->runs += !m->n || m->clock[m->n - 1] + 1 != clock;
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->clock = realloc(m->clock, m->cap * sizeof(*m->clock));
		assert_non_null(m->clock);
	}
	m->clock[m->n++] = clock;
}

/* Iterations begun at or before clock: base + the starts at or before it, by bisection. */
static uint64_t model_upto(const struct starts_model *m, uint32_t clock)
{
	size_t lo = 0, hi = m->n;   /* clock[i] <= clock for i < lo, > clock for i >= hi */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->clock[mid] <= clock)
			lo = mid + 1;
		else
			hi = mid;
	}
	return m->base + lo;
}

static unsigned script;   /* in messages: which script failed */

/*
 * mn_starts_upto(), mn_starts_upto_slow() or mn_starts_span() (at random) of clock against the
 * model; for span, the model and mn_starts_upto() must give the same answer on the interval's
 * ends, and the model on three clocks inside.
 */
static void check_clock(struct mn_starts *s, const struct starts_model *m, uint32_t clock)
{
	uint64_t want = model_upto(m, clock), got;
	unsigned how = (unsigned)(next() % 4);
	uint32_t lo, hi;

	if (how < 2) {
		got = how ? mn_starts_upto_slow(s, clock) : mn_starts_upto(s, clock);
		if (got != want)
			fail_msg("script %u: %s(%u): expected %" PRIu64 ", got %" PRIu64
				 " (n %" PRIu64 ", base %" PRIu64 ", %" PRIu64 " runs)", script,
				 how ? "mn_starts_upto_slow" : "mn_starts_upto", clock, want, got,
				 s->n, s->base, s->nruns);
		return;
	}
	got = mn_starts_span(s, clock, &lo, &hi);
	if (got != want)
		fail_msg("script %u: mn_starts_span(%u): expected %" PRIu64 ", got %" PRIu64
			 " (n %" PRIu64 ", base %" PRIu64 ")", script, clock, want, got, s->n,
			 s->base);
	if (lo > clock || clock >= hi)
		fail_msg("script %u: mn_starts_span(%u): expected an interval holding it, got"
			 " [%u, %u)", script, clock, lo, hi);
	for (int i = 0; i < 5; i++) {   /* its ends, then three clocks inside */
		uint32_t c = i == 0 ? lo : hi - 1;
		uint64_t at, mc;

		if (i > 1)
			c = lo + (uint32_t)(next() % ((uint64_t)hi - lo));
		at = i < 2 ? mn_starts_upto(s, c) : want;
		mc = model_upto(m, c);
		if (at != want || mc != want)
			fail_msg("script %u: mn_starts_span(%u) = %" PRIu64 " on [%u, %u), but"
				 " at %u the model says %" PRIu64 ", mn_starts_upto() %" PRIu64,
				 script, clock, want, lo, hi, c, mc, at);
	}
}

static uint32_t recent[8];   /* the clocks of the last queries, to ask again */
static unsigned nrecent;

/* A clock to ask about: before the first start, at a start (a recent one often), just before or
 * after one, between two, far past the last, one asked before, or anywhere. */
static uint32_t pick_clock(const struct starts_model *m)
{
	uint64_t r = next();
	size_t i = m->n ? ((r >> 8) % 3 ? (r >> 16) % m->n : m->n - 1 - (r >> 16) % 8 % m->n) : 0;
	uint32_t first = m->n ? m->clock[0] : 0, last = m->n ? m->clock[m->n - 1] : 0, c;

	switch (m->n ? r % 12 : 11) {
	case 0:
		c = first ? (uint32_t)(r >> 32) % first : 0;
		break;
	case 1:
	case 2:
		c = m->clock[i];
		break;
	case 3:
		c = m->clock[i] - (m->clock[i] > 0);
		break;
	case 4:
		c = m->clock[i] + 1;
		break;
	case 5:
		c = m->clock[i];
		if (i + 1 < m->n)
			c += (uint32_t)(r >> 32) % (m->clock[i + 1] - m->clock[i]);
		break;
	case 6:
		c = last + 1 + (uint32_t)((r >> 32) % (UINT32_MAX - 1 - last));
		break;
	case 7:
	case 8:
	case 9:
		c = recent[(r >> 4) % 8];
		break;
	case 10:
		c = (uint32_t)((r >> 32) % ((uint64_t)last + 100));
		break;
	default:
		c = (uint32_t)(r >> 32) % (UINT32_MAX - 1);
		break;
	}
	recent[nrecent++ % 8] = c;
	return c;
}

/* Clocks stay below this (a query far past the last start still has room); above it the script
 * resets the clock as the module does (mn_starts_reset(s, n)). */
#define CLOCK_TOP (UINT32_MAX - ((uint32_t)1 << 26))

struct starts_shape {
	uint64_t iters;              /* iterations in all, over every reset */
	unsigned one;                /* per 1000: the next start at clock + 1 (the run goes on) */
	unsigned huge;               /* per 1000000: a gap of 10^5 .. 10^7 clocks; else 2 .. 100 */
	unsigned runs;               /* per 1000 adds: mn_starts_add_run() */
	unsigned queries;            /* per 100 adds: queries, 1 to 3 at a time */
	unsigned resets;             /* per 1000000 adds: mn_starts_reset() */
	unsigned stretch;            /* also a gap of 1 to 8 times the clocks so far after stretches
				      * of runs, each this many times the one before (from 16) */
};

/*
 * One random script of the shape, queries interleaved with the adds; returns the widest
 * buckets the block index had (bshift), so that a caller can tell it widened them.
 */
static unsigned starts_script(struct mn_starts *s, const struct starts_shape *sh)
{
	struct starts_model m = { 0 };
	uint64_t total = 0, len = 16, gap_at = 16;   /* the next stretch of runs, where it ends */
	unsigned widest = 0;

	script++;
	mn_starts_reset(s, 0);
	while (total < sh->iters) {
		uint64_t count = 1, gap;
		uint32_t clock = m.n ? m.clock[m.n - 1] : 0, shift;

		if (chance(sh->resets, 1000000)) {   /* a new invocation, or a clock reset */
			uint64_t how = next() % 3, base = how ? s->n : 0;

			if (how == 2)
				base = next() >> 24;

			mn_starts_reset(s, base);
			model_reset(&m, base);
			for (int q = 0; q < 3; q++)
				check_clock(s, &m, pick_clock(&m));
		}
		if (chance(sh->runs, 1000))
			count = chance(1, 64) ? next() % 3000 : next() % 20;
		if (!m.n) {
			clock = chance(2, 3) ? (uint32_t)(next() % 4) : (uint32_t)(next() % 100000);
		} else if (chance(sh->one, 1000)) {
			clock += 1;
		} else if (sh->stretch && m.runs >= gap_at) {   /* 1 to 8 times all so far */
			len *= sh->stretch;
			gap_at = m.runs + len;
			gap = (clock - m.clock[0] + UINT64_C(100000)) * (1 + next() % 8);
			clock += gap < CLOCK_TOP / 4 ? (uint32_t)gap : CLOCK_TOP / 4;
		} else if (chance(sh->huge, 1000000)) {
			clock += 100000 + (uint32_t)(next() % 9900000);
		} else {   /* 2 .. 100, small ones more often */
			shift = (uint32_t)(next() % 7);
			clock += 2 + ((uint32_t)(next() % 99) >> shift);
		}
		if (clock > CLOCK_TOP - count) {   /* the clock would wrap: reset it */
			mn_starts_reset(s, s->n);
			model_reset(&m, s->n);
			clock = (uint32_t)(next() % 4);
		}
		if (count == 1 && !chance(1, 4))
			assert_true(mn_starts_add(s, clock));
		else
			assert_true(mn_starts_add_run(s, clock, count));
		for (uint64_t i = 0; i < count; i++)
			model_add(&m, clock + (uint32_t)i);
		total += count;
		if (s->n != m.base + m.n)
			fail_msg("script %u: expected n %" PRIu64 ", got %" PRIu64, script,
				 m.base + m.n, s->n);
		if (s->nbucket > s->bucketcap)   /* the index stays in its allocation */
			fail_msg("script %u: %u buckets in %u", script, s->nbucket, s->bucketcap);
		widest = s->bshift > widest ? s->bshift : widest;
		if (next() % 100 < sh->queries)
			for (uint64_t q = 1 + next() % 3; q; q--)
				check_clock(s, &m, pick_clock(&m));
	}
	for (int q = 0; q < 200; q++)
		check_clock(s, &m, pick_clock(&m));
	free(m.clock);
	return widest;
}

/* A made-up invocation, answers by hand. */
static void test_starts_known(void **state)
{
	static const uint32_t clock[] = { 0, 9, 10, 11, 12, 13, 19, 20, 29, 30, 34, 36, 37, 39, 40,
					  41, 1000, UINT32_MAX - 1 };
	static const uint64_t want[] = { 0, 0, 1, 2, 3, 3, 3, 4, 4, 5, 9, 11, 11, 11, 12, 12, 12,
					 12 };
	struct mn_starts s = { 0 };
	uint32_t lo, hi;

	(void)state;
	mn_starts_reset(&s, 0);
	assert_int_equal(mn_starts_upto(&s, 7), 0);   /* nothing begun */
	assert_int_equal(mn_starts_span(&s, 7, &lo, &hi), 0);
	assert_true(lo <= 7 && 7 < hi);
	assert_true(mn_starts_add(&s, 10));   /* iterations 1, 2, 3 at 10, 11, 12: one run */
	assert_true(mn_starts_add(&s, 11));
	assert_true(mn_starts_add(&s, 12));
	assert_true(mn_starts_add(&s, 20));   /* 4 at 20 */
	assert_true(mn_starts_add_run(&s, 30, 5));   /* 5 .. 9 at 30 .. 34 */
	assert_true(mn_starts_add_run(&s, 35, 2));   /* 10, 11 at 35, 36: the same run */
	assert_true(mn_starts_add_run(&s, 90, 0));   /* nothing */
	assert_true(mn_starts_add(&s, 40));   /* 12 at 40 */
	assert_int_equal(s.n, 12);
	for (int pass = 0; pass < 3; pass++)   /* searched, then remembered */
		for (size_t i = 0; i < sizeof(clock) / sizeof(*clock); i++) {
			assert_int_equal(mn_starts_upto(&s, clock[i]), want[i]);
			assert_int_equal(mn_starts_upto_slow(&s, clock[i]), want[i]);
			assert_int_equal(mn_starts_span(&s, clock[i], &lo, &hi), want[i]);
			assert_true(lo <= clock[i] && clock[i] < hi);
		}
	mn_starts_reset(&s, 12);   /* a clock reset: the 12 count from "clock 0" on */
	assert_int_equal(mn_starts_upto(&s, 11), 12);
	assert_true(mn_starts_add(&s, 5));
	assert_true(mn_starts_add(&s, 11));
	assert_int_equal(mn_starts_upto(&s, 4), 12);
	assert_int_equal(mn_starts_upto(&s, 10), 13);
	assert_int_equal(mn_starts_upto(&s, 11), 14);
	assert_int_equal(mn_starts_upto(&s, 40), 14);
	mn_starts_free(&s);
}

static void test_starts_random(void **state)
{
	struct mn_starts s = { 0 };
	static const struct starts_shape small[] = {
		{ 3000, 900, 0, 100, 100, 0, 0 },      /* an innermost loop, bits of summaries */
		{ 3000, 100, 0, 50, 100, 300, 0 },     /* an outer loop: a run per iteration */
		{ 3000, 500, 2000, 200, 100, 500, 0 }, /* huge gaps */
		{ 500, 0, 50000, 0, 100, 2000, 0 },    /* hardly anything but huge gaps */
	};
	static const struct starts_shape big[] = {
		{ 300000, 700, 300, 20, 25, 0, 0 },    /* hundreds of thousands */
		{ 300000, 300, 0, 20, 25, 10, 0 },     /* ... with a reset or so */
		{ 200000, 500, 3000, 20, 25, 0, 0 },   /* ... and huge gaps: the clock resets */
		{ 60000, 100, 150, 20, 25, 0, 0 },     /* huge gaps between long stretches */
		{ 60000, 100, 0, 20, 25, 0, 3 },       /* gaps of all the clocks so far, between */
		{ 60000, 100, 0, 20, 25, 0, 4 },       /* stretches each 3 to 5 times the last */
		{ 60000, 100, 100, 20, 25, 0, 5 },
	};
	unsigned widest = 0;

	(void)state;
	for (int i = 0; i < 200; i++) {   /* every other one reusing s: what a reset keeps */
		struct starts_shape sh = small[i % 4];

		if (i % 2)
			mn_starts_free(&s);
		sh.iters = 1 + next() % sh.iters;
		starts_script(&s, &sh);
	}
	for (size_t i = 0; i < sizeof(big) / sizeof(*big); i++) {
		unsigned w;

		mn_starts_free(&s);   /* new: the index grows from nothing */
		w = starts_script(&s, &big[i]);
		widest = w > widest ? w : widest;
	}
	assert_true(widest >= 6);   /* the index widened its buckets several times */
	mn_starts_free(&s);
}

/*
 * Without memory.  320 runs of one iteration, realloc failing in the add of one of them (each in
 * turn): an add that cannot store its start returns false, the iteration counted all the same
 * (answers may then be off, but nothing breaks); one that returns true stored it, and every
 * answer must be exact (fails, at the add of iteration 17: test_starts_index_nomem's bug).  Then
 * a random script without calloc: the memo of searches, only a speed-up, is never allocated, and
 * answers are exact.
 */
static void test_starts_nomem(void **state)
{
	const struct starts_shape sh = { 20000, 300, 0, 50, 100, 50, 0 };
	struct starts_model m = { 0 };
	struct mn_starts nomemo = { 0 };
	unsigned refused = 0;

	(void)state;
	for (unsigned at = 0; at < 320; at++) {
		struct mn_starts s = { 0 };   /* new: allocations come at the same adds */
		bool exact = true;
		uint32_t clock = 0;

		script = 10000 + at;   /* in messages: 10000 + the add that failed */
		mn_starts_reset(&s, 0);
		model_reset(&m, 0);
		for (unsigned r = 0; r < 320; r++, clock += 2 + r % 3) {
			bool stored;

			fail_realloc = r == at;
			stored = mn_starts_add(&s, clock);
			fail_realloc = false;
			if (stored)
				model_add(&m, clock);
			exact = exact && stored;
			refused += !stored;
			assert_int_equal(s.n, r + 1);
		}
		for (uint32_t c = 0; c < clock + 2; c++) {
			uint64_t got = mn_starts_upto(&s, c);

			if (exact)
				check_clock(&s, &m, c);
			else
				assert_true(got <= s.n);
		}
		mn_starts_free(&s);
	}
	assert_true(refused > 0);   /* some adds had no place */
	free(m.clock);

	fail_calloc = true;
	starts_script(&nomemo, &sh);
	fail_calloc = false;
	assert_null(nomemo.memo);
	mn_starts_free(&nomemo);
}

/*
 * The block index is only a speed-up, so when it cannot grow mn_starts_add() still stores the
 * start and returns true; the buckets it skipped must then never be filled with a block past their
 * clock (they once were, with the block before the newest, once memory was back: iterations 1 ..
 * R at clocks 0, 2, .. 2R - 2 (R runs, a block), iteration R + 1 at 2R (block 1: the index's first
 * realloc fails), the next at 2R + 2 .. (block 2: the index grows, buckets 0 .. 63 all said block
 * 1), and mn_starts_upto(2) was R + 1, not 2).  Now the index stops until a reset.
 */
static void test_starts_index_nomem(void **state)
{
	const uint32_t r = MN_STARTS_BLOCK_RUNS, last = 5 * r;   /* iterations; the last at 2 last - 2 */
	struct mn_starts s = { 0 };
	bool stored;

	(void)state;
	mn_starts_reset(&s, 0);
	for (uint32_t i = 0; i < r; i++)
		assert_true(mn_starts_add(&s, 2 * i));
	assert_int_equal(s.nblk, 1);
	fail_realloc = true;
	stored = mn_starts_add(&s, 2 * r);
	fail_realloc = false;
	for (uint32_t i = r + 1; i < last; i++)
		assert_true(mn_starts_add(&s, 2 * i));
	assert_true(s.nblk >= 5);
	if (stored)   /* else answers may be off */
		for (uint32_t c = 0; c < 2 * last + 4; c++)
			if (mn_starts_upto(&s, c) != (c >= 2 * last ? last : c / 2 + 1))
				fail_msg("mn_starts_upto(%u): expected %u, got %" PRIu64, c,
					 c >= 2 * last ? last : c / 2 + 1, mn_starts_upto(&s, c));
	mn_starts_free(&s);
}

/* ---- Iteration starts at the edges of the blocks --------------------------------------------- */

/* A model by runs, for counts no array holds: iterations first .. first + count - 1 began at
 * clock .. clock + count - 1. */
struct run_model {
	struct mrun {
		uint64_t first, count;
		uint32_t clock;
	} *r;
	size_t n, cap;
	uint64_t base, iters;   /* iterations in all, base included */
};

static void run_model_add(struct run_model *m, uint32_t clock, uint64_t count)
{
	struct mrun *l = m->n ? &m->r[m->n - 1] : NULL;

	assert_true(!l || (uint64_t)l->clock + l->count <= clock);
	if (l && (uint64_t)l->clock + l->count == clock && l->first + l->count == m->iters + 1) {
		l->count += count;   /* the run goes on */
	} else {
		if (m->n == m->cap) {
			m->cap = m->cap ? 2 * m->cap : 64;
			m->r = realloc(m->r, m->cap * sizeof(*m->r));
			assert_non_null(m->r);
		}
		m->r[m->n++] = (struct mrun){ m->iters + 1, count, clock };
	}
	m->iters += count;
}

static uint64_t run_model_upto(const struct run_model *m, uint32_t clock)
{
	size_t lo = 0, hi = m->n;   /* runs that began at or before clock: [0, lo) */
	const struct mrun *r;
	uint64_t d;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->r[mid].clock <= clock)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return m->base;
	r = &m->r[lo - 1];
	d = clock - r->clock;
	return r->first + (d < r->count ? d : r->count - 1);
}

/* upto, upto_slow and span of clock against the model; span's ends against it too. */
static void run_check(struct mn_starts *s, const struct run_model *m, uint32_t clock)
{
	uint64_t want = run_model_upto(m, clock), got[3];
	uint32_t lo, hi;

	got[0] = mn_starts_upto(s, clock);
	got[1] = mn_starts_upto_slow(s, clock);
	got[2] = mn_starts_span(s, clock, &lo, &hi);
	for (int i = 0; i < 3; i++)
		if (got[i] != want)
			fail_msg("script %u: %s(%u): expected %" PRIu64 ", got %" PRIu64
				 " (%u blocks, %" PRIu64 " runs)", script,
				 (const char *[]){ "upto", "upto_slow", "span" }[i], clock, want, got[i],
				 s->nblk, s->nruns);
	if (lo > clock || clock >= hi || run_model_upto(m, lo) != want ||
	    run_model_upto(m, hi - 1) != want)
		fail_msg("script %u: mn_starts_span(%u) = %" PRIu64 " on [%u, %u): the model says"
			 " %" PRIu64 " at %u, %" PRIu64 " at %u", script, clock, want, lo, hi,
			 run_model_upto(m, lo), lo, run_model_upto(m, hi - 1), hi - 1);
}

/* A clock delta or a count near what a block's offsets hold (0xfffe), or anything else. */
static uint64_t edge_value(void)
{
	switch (next() % 10) {
	case 0:
	case 1:
	case 2:
		return 1;
	case 3:
		return 2 + next() % 6;
	case 4:
		return next() % 2 ? 0xfffc + next() % 5 : 0xfc + next() % 5;   /* ... 0xffff, 0x100 */
	case 5:
		return 0x7ffe + next() % 4;   /* two of them make one limit */
	case 6:
		return 1000 + next() % 3000;
	case 7:
		return (uint64_t)1 << (16 + next() % 12);
	default:
		return 1 + next() % 64;
	}
}

/*
 * Runs whose offsets sit on a block's limits: clock gaps and counts around 0xff and 0xfffe, runs of
 * one iteration and of several mixed (each layout, a block turned into a wider one at each number
 * of runs), blocks of one run, counts of up to 2^27; the clock reset when it would pass 2^32, as
 * the module does.  After each script every run's edges are asked about, and random clocks, the
 * blocks' and the hits' answers alike (twice: found, then remembered).
 */
static void test_starts_edges(void **state)
{
	struct mn_starts s = { 0 };
	struct run_model m = { 0 };
	static const unsigned full[] = { 41, 21, 11 };   /* runs a block of each kind holds */
	unsigned seen[3] = { 0 }, filled[3] = { 0 };

	(void)state;
	for (int t = 0; t < 300; t++) {
		unsigned nruns = 1 + (unsigned)(next() % (t < 200 ? 60 : 3000));
		uint32_t clock = (uint32_t)(next() % 4);
		bool mixed = next() % 2;   /* else runs of one iteration only */
		bool dense = next() % 3 == 0;   /* gaps of 0 (the run goes on) to 7 */

		script = 20000 + t;
		if (t % 3 == 0)
			mn_starts_free(&s);
		mn_starts_reset(&s, t % 2 ? next() >> 20 : 0);
		m.n = 0;
		m.base = m.iters = s.n;
		for (unsigned i = 0; i < nruns; i++) {
			uint64_t count = mixed && next() % 3 == 0 ? edge_value() : 1;
			uint64_t gap = !i ? 0 : dense ? next() % 8 : edge_value();   /* after the last run */

			if (m.n)
				gap += m.r[m.n - 1].clock + m.r[m.n - 1].count - clock;
			if ((uint64_t)clock + gap + count > CLOCK_TOP) {   /* a clock reset */
				mn_starts_reset(&s, s.n);
				m.n = 0;
				m.base = s.n;
				clock = 0;
				gap = next() % 3;
			}
			clock += (uint32_t)gap;
			if (count == 1 && next() % 2)
				assert_true(mn_starts_add(&s, clock));
			else
				assert_true(mn_starts_add_run(&s, clock, count));
			run_model_add(&m, clock, count);
			for (uint32_t b = 0; b < s.nblk; b++) {
				seen[s.blk[b].kind]++;
				filled[s.blk[b].kind] += s.blk[b].n == full[s.blk[b].kind];
			}
			if (next() % 8 == 0)
				run_check(&s, &m, clock - (uint32_t)(next() % 3 % (clock + 1)));
		}
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < m.n; i++) {
				uint32_t c = m.r[i].clock, e = c + (uint32_t)(m.r[i].count - 1);

				run_check(&s, &m, c);
				run_check(&s, &m, e);
				run_check(&s, &m, e + 1);
				if (c)
					run_check(&s, &m, c - 1);
				run_check(&s, &m, c + (uint32_t)(next() % (e - c + 1)));
			}
		for (int q = 0; q < 50; q++)   /* span's intervals end at UINT32_MAX at most */
			run_check(&s, &m, (uint32_t)(next() % UINT32_MAX));
	}
	for (int k = 0; k < 3; k++)   /* each layout, and full blocks of each */
		if (!seen[k] || !filled[k])
			fail_msg("blocks of kind %d: %u, %u of them full", k, seen[k], filled[k]);
	mn_starts_free(&s);
	free(m.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spans_random),
		cmocka_unit_test(test_spans_nomem),
		cmocka_unit_test(test_starts_known),
		cmocka_unit_test(test_starts_random),
		cmocka_unit_test(test_starts_nomem),
		cmocka_unit_test(test_starts_index_nomem),
		cmocka_unit_test(test_starts_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
