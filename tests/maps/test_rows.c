/*
 * Tests of the row maps (backend/map.h, struct mn_rows) against an obviously correct twin kept by
 * the test: every row in an array, found by a linear search.  Random keys of four words from a
 * small space (so that they repeat; words 0 and all-ones among them) are counted with values, half
 * of them through the memo as the dependence module does (a hit takes the count in its slot, a
 * miss finds the row and fills the slot); every few thousand steps the map, its memo flushed,
 * must hold exactly the twin's rows, by mn_rows_next() and by mn_rows_sorted(); pointers to rows
 * stay valid while gen does not change; a merge of two maps through the cursor adds up.
 *
 * Built twice (CMakeLists): against backend/map_rows.c (test_rows) and against the plain chained
 * twin of bench/maps/rows_plain.c (test_rows_plain), which must pass the same test.
 */
#define _GNU_SOURCE
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

#include "map.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

/* ---- The twin: rows in an array, found by a linear search ------------------------------------ */

struct ref_row {
	uint64_t key[MN_ROWS_KEY_WORDS];
	uint64_t count, min, max;
};

struct ref {
	struct ref_row *v;
	size_t n, cap;
};

static struct ref_row *ref_get(struct ref *r, const uint64_t *key)
{
	for (size_t i = 0; i < r->n; i++)
		if (!memcmp(r->v[i].key, key, sizeof(r->v[i].key)))
			return &r->v[i];
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		assert_non_null(r->v);
	}
	r->v[r->n] = (struct ref_row){ .min = UINT64_MAX };
	memcpy(r->v[r->n].key, key, sizeof(r->v[r->n].key));
	return &r->v[r->n++];
}

static void ref_count(struct ref_row *r, uint64_t n, bool has_v, uint64_t v)
{
	r->count += n;
	if (has_v && v < r->min)
		r->min = v;
	if (has_v && v > r->max)
		r->max = v;
}

/* ---- Keys ------------------------------------------------------------------------------------ */

#define NKEYS 3000

static uint64_t keys[NKEYS][MN_ROWS_KEY_WORDS];

/* Keys as a profiler makes them (small ids, often zero words), and some arbitrary. */
static void make_keys(uint64_t seed)
{
	rng_state = seed | 1;
	for (unsigned i = 0; i < NKEYS; i++) {
		for (unsigned w = 0; w < MN_ROWS_KEY_WORDS; w++) {
			uint64_t r = rnd();

			keys[i][w] = r % 4 == 0 ? 0 : r % 4 == 1 ? r >> 40 : r % 4 == 2 ? UINT64_MAX : r;
		}
		keys[i][0] = (uint64_t)i << 32 | (keys[i][0] & 0xffffffff);   /* distinct */
	}
}

static void count_row(struct mn_row *row, struct ref_row *t, bool has_v, uint64_t v)
{
	row->count++;
	if (has_v && v < row->min)
		row->min = v;
	if (has_v && v > row->max)
		row->max = v;
	ref_count(t, 1, has_v, v);
}

/* ---- Checks ---------------------------------------------------------------------------------- */

static int by_words(const void *a_, const void *b_, void *arg)
{
	const uint64_t *a = mn_row_key(*(struct mn_row *const *)a_);
	const uint64_t *b = mn_row_key(*(struct mn_row *const *)b_);

	(void)arg;
	for (unsigned w = 0; w < MN_ROWS_KEY_WORDS; w++)
		if (a[w] != b[w])
			return a[w] < b[w] ? -1 : 1;
	return 0;
}

/* The map (memo flushed) holds exactly the twin's rows. */
static void assert_same(struct mn_rows *m, const struct ref *t)
{
	struct mn_rows_cursor c = { 0 };
	struct mn_row *row, **v;
	size_t seen = 0;

	mn_rows_memo_flush(m);
	assert_int_equal(m->n, t->n);
	while ((row = mn_rows_next(m, &c))) {
		struct ref_row *r = NULL;

		for (size_t i = 0; i < t->n && !r; i++)
			if (!memcmp(t->v[i].key, mn_row_key(row), sizeof(t->v[i].key)))
				r = &t->v[i];
		assert_non_null(r);
		assert_int_equal(row->count, r->count);
		assert_int_equal(row->min, r->min);
		assert_int_equal(row->max, r->max);
		seen++;
	}
	assert_int_equal(seen, t->n);
	v = mn_rows_sorted(m, by_words, NULL);
	assert_non_null(v);
	for (size_t i = 1; i < m->n; i++)
		assert_true(by_words(&v[i - 1], &v[i], NULL) < 0);
	free(v);
}

/* ---- Tests ----------------------------------------------------------------------------------- */

/*
 * steps counts over nkeys keys, through the memo half the time (short key: the key's index, so
 * that distinct rows have distinct short keys), values on a third of them.
 */
static void run_script(uint64_t seed, size_t steps, unsigned nkeys, unsigned memo_bits)
{
	struct mn_rows m = { 0 };
	struct ref t = { 0 };

	struct mn_rows_memo *lent = seed % 2 ? NULL : calloc((size_t)1 << memo_bits, sizeof(*lent));

	make_keys(seed);
	if (lent)   /* the caller's storage, as the dependence module's state holds it */
		assert_int_equal(mn_rows_memo_use(&m, lent, memo_bits), 0);
	else
		assert_int_equal(mn_rows_memo_init(&m, memo_bits), 0);
	assert_int_equal(mn_rows_memo_use(&m, lent, memo_bits), -EINVAL);   /* a second memo */
	for (size_t s = 0; s < steps; s++) {
		unsigned k = (unsigned)(rnd() % nkeys);
		bool has_v = rnd() % 3 == 0, memo = rnd() % 2;
		uint64_t v = rnd() % 1000;
		struct ref_row *r = ref_get(&t, keys[k]);
		struct mn_rows_memo *slot;
		struct mn_row *row;

		if (!memo) {
			row = mn_rows_get(&m, keys[k]);
			assert_non_null(row);
			assert_memory_equal(mn_row_key(row), keys[k], sizeof(keys[k]));
			count_row(row, r, has_v, v);
			continue;
		}
		slot = mn_rows_memo_slot(&m, (uint32_t)(k * 0x9e3779b1u));
		if (mn_rows_memo_hit(&m, slot, k + 1, 7, 3)) {
			mn_rows_memo_count(slot, has_v, v);
			ref_count(r, 1, has_v, v);
			continue;
		}
		row = mn_rows_get(&m, keys[k]);
		assert_non_null(row);
		mn_rows_memo_set(&m, slot, k + 1, 7, 3, row);
		count_row(row, r, has_v, v);
		if (s % 4093 == 0)
			assert_same(&m, &t);
	}
	assert_same(&m, &t);
	mn_rows_free(&m);
	assert_null(m.e);
	assert_int_equal(m.n, 0);
	free(lent);
	free(t.v);
}

static void test_random(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 6; seed++)
		run_script(seed, 60000, seed % 2 ? 40 : NKEYS, seed % 3 ? 6 : 12);
}

/* A pointer to a row stays valid while gen is unchanged; after a change, a lookup finds the row
 * with what it had. */
static void test_stable(void **state)
{
	struct mn_rows m = { 0 };
	struct mn_row *first;
	unsigned gen;

	(void)state;
	make_keys(99);
	first = mn_rows_get(&m, keys[0]);
	first->count = 5;
	gen = m.gen;
	for (unsigned k = 1; k < NKEYS; k++) {
		bool grows = mn_rows_grows(&m);
		struct mn_row *row = mn_rows_get(&m, keys[k]);

		row->count = k;
		assert_int_equal(m.gen != gen, grows);
		grows = mn_rows_grows(&m);   /* a lookup of a key it has may grow it too */
		gen = m.gen;
		row = mn_rows_get(&m, keys[0]);
		assert_int_equal(m.gen != gen, grows);
		if (m.gen == gen)
			assert_ptr_equal(row, first);
		gen = m.gen;
		first = row;
		assert_int_equal(first->count, 5);
	}
	for (unsigned k = 1; k < NKEYS; k++)
		assert_int_equal(mn_rows_get(&m, keys[k])->count, k);
	assert_int_equal(m.n, NKEYS);
	mn_rows_free(&m);
}

/* Two maps folded into a third through the cursor, as a module's merge() does: counts add,
 * minimum and maximum of both. */
static void test_merge(void **state)
{
	struct mn_rows a = { 0 }, b = { 0 }, into = { 0 };
	struct ref t = { 0 };
	struct mn_rows *src[2] = { &a, &b };

	(void)state;
	make_keys(7);
	for (unsigned i = 0; i < 20000; i++) {
		unsigned k = (unsigned)(rnd() % 500);
		uint64_t v = rnd() % 100;

		count_row(mn_rows_get(src[i % 2], keys[k]), ref_get(&t, keys[k]), true, v);
	}
	for (unsigned s = 0; s < 2; s++) {
		struct mn_rows_cursor c = { 0 };
		struct mn_row *f;

		while ((f = mn_rows_next(src[s], &c))) {
			struct mn_row *e = mn_rows_get(&into, mn_row_key(f));

			e->count += f->count;
			e->min = f->min < e->min ? f->min : e->min;
			e->max = f->max > e->max ? f->max : e->max;
		}
	}
	assert_same(&into, &t);
	mn_rows_free(&a);
	mn_rows_free(&b);
	mn_rows_free(&into);
	free(t.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_stable),
		cmocka_unit_test(test_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
