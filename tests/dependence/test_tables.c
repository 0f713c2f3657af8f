/*
 * The row table of the dependence module (modules/dependence/dep_tables.c) in its two modes: the
 * reduction table and the plain chained map (MNEMO_DEP_TABLE=plain), fed the same random keys,
 * must hold the same entries, counts and distances, sorted the same, also after a merge of two
 * tables into a third through the cursor; the plain map's entries never move; and a plain map
 * without memory keeps what it has and refuses only new keys.  dep_tables.c is compiled into this
 * test with malloc and calloc renamed to the counters below (CMakeLists).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dep_tables.h"

/* Allocations of dep_tables.c, which fail while these are set. */
static bool fail_malloc, fail_calloc;

void *test_malloc_(size_t n);
void *test_calloc_(size_t n, size_t size);

void *test_malloc_(size_t n)
{
	return fail_malloc ? NULL : malloc(n);
}

void *test_calloc_(size_t n, size_t size)
{
	return fail_calloc ? NULL : calloc(n, size);
}

static uint64_t rng = 88172645463325252u;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A key from a small space, so that keys repeat; every field varies, the padding stays 0. */
static struct dep_key random_key(void)
{
	uint64_t r = next();

	return (struct dep_key){
		.loop = r % 7, .src = (r >> 3) % 41, .dst = (r >> 9) % 37,
		.src_via = (r >> 15) % 3, .dst_via = (r >> 17) % 3,
		.src_ctx = (r >> 19) % 5, .dst_ctx = (r >> 22) % 5,
		.kind = (uint8_t)((r >> 25) % 3), .carried = (uint8_t)((r >> 27) & 1),
	};
}

/* One instance, as the module counts it. */
static void count(struct dep_table *t, const struct dep_key *k, uint64_t distance)
{
	struct dep_entry *e = dep_table_get(t, k);

	assert_non_null(e);
	assert_memory_equal(&e->k, k, sizeof(*k));
	e->count++;
	if (k->carried && distance < e->dmin)
		e->dmin = distance;
	if (k->carried && distance > e->dmax)
		e->dmax = distance;
}

/* dep_merge()'s loop: from's entries added into `into`. */
static void merge(struct dep_table *into, const struct dep_table *from)
{
	struct dep_cursor c = { 0 };
	const struct dep_entry *f;
	size_t n = 0;

	while ((f = dep_table_next(from, &c))) {
		struct dep_entry *e = dep_table_get(into, &f->k);

		assert_non_null(e);
		assert_true(f->count > 0);
		e->count += f->count;
		e->dmin = f->dmin < e->dmin ? f->dmin : e->dmin;
		e->dmax = f->dmax > e->dmax ? f->dmax : e->dmax;
		n++;
	}
	assert_int_equal(n, from->n);   /* the cursor visits each entry once */
}

static void assert_same(const struct dep_table *a, const struct dep_table *b)
{
	struct dep_entry **va = dep_table_sorted(a, NULL), **vb = dep_table_sorted(b, NULL);

	assert_non_null(va);
	assert_non_null(vb);
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		assert_memory_equal(&va[i]->k, &vb[i]->k, sizeof(va[i]->k));
		assert_int_equal(va[i]->count, vb[i]->count);
		assert_int_equal(va[i]->dmin, vb[i]->dmin);
		assert_int_equal(va[i]->dmax, vb[i]->dmax);
		if (i)   /* sorted, and each key once */
			assert_true(memcmp(&va[i - 1]->k, &va[i]->k, sizeof(va[i]->k)));
	}
	free(va);
	free(vb);
}

static void test_same_entries(void **state)
{
	struct dep_table red[3] = { 0 }, plain[3] = { 0 };

	(void)state;
	for (int i = 0; i < 3; i++)
		plain[i].plain = true;
	for (int i = 0; i < 200000; i++) {   /* two "workers", then a third table merges both */
		struct dep_key k = random_key();
		uint64_t d = next() % 1000;
		int w = (int)(next() & 1);

		count(&red[w], &k, d);
		count(&plain[w], &k, d);
	}
	assert_true(red[0].n > 1000);   /* the tables grew several times */
	assert_same(&red[0], &plain[0]);
	assert_same(&red[1], &plain[1]);
	merge(&red[2], &red[0]);
	merge(&red[2], &red[1]);
	merge(&plain[2], &plain[0]);
	merge(&plain[2], &plain[1]);
	assert_same(&red[2], &plain[2]);
	merge(&red[0], &plain[1]);   /* either mode merges into the other */
	merge(&plain[0], &red[1]);
	assert_same(&red[0], &plain[0]);
	assert_same(&red[0], &red[2]);
	for (int i = 0; i < 3; i++) {
		dep_table_free(&red[i]);
		dep_table_free(&plain[i]);
		assert_true(plain[i].plain);   /* still plain, and empty */
		assert_int_equal(plain[i].n, 0);
	}
}

/* The module's memo keeps entry pointers while gen is unchanged: the plain map's never move. */
static void test_plain_stable(void **state)
{
	struct dep_table t = { .plain = true };
	struct dep_key k0 = random_key();
	struct dep_entry *e0 = dep_table_get(&t, &k0);

	(void)state;
	e0->count = 1;
	for (int i = 0; i < 100000; i++) {
		struct dep_key k = random_key();

		k.loop += 100;   /* never k0 */
		dep_table_get(&t, &k)->count++;
	}
	assert_true(t.nbucket >= t.n);   /* rehashed at load 1 */
	assert_int_equal(t.gen, 0);
	assert_ptr_equal(dep_table_get(&t, &k0), e0);
	dep_table_free(&t);
}

/* Without memory the plain map keeps its entries and finds them; only a new key gets NULL.  A
 * failed rehash is no loss: the chains grow longer. */
static void test_plain_nomem(void **state)
{
	struct dep_table t = { .plain = true };
	struct dep_key k[40];

	(void)state;
	for (int i = 0; i < 40; i++) {
		k[i] = random_key();
		k[i].loop = 1000 + i;   /* distinct */
	}
	for (int i = 0; i < 16; i++)
		dep_table_get(&t, &k[i])->count = 1;
	assert_int_equal(t.nbucket, 16);
	fail_malloc = fail_calloc = true;   /* neither a rehash nor a node */
	assert_null(dep_table_get(&t, &k[16]));
	assert_int_equal(t.n, 16);
	for (int i = 0; i < 16; i++)
		assert_int_equal(dep_table_get(&t, &k[i])->count, 1);
	fail_malloc = false;   /* nodes but no rehash: load 24 / 16 */
	for (int i = 16; i < 40; i++)
		dep_table_get(&t, &k[i])->count = 1;
	fail_calloc = false;
	assert_int_equal(t.n, 40);
	assert_int_equal(t.nbucket, 16);
	for (int i = 0; i < 40; i++)
		assert_int_equal(dep_table_get(&t, &k[i])->count, 1);
	assert_int_equal(t.nbucket, 16);   /* finding rehashes nothing; adding does, then */
	k[0].loop = 2000;
	dep_table_get(&t, &k[0])->count = 1;
	assert_int_equal(t.nbucket, 32);
	assert_int_equal(t.n, 41);
	for (int i = 0; i < 40; i++)
		assert_int_equal(dep_table_get(&t, &k[i])->count, 1);
	dep_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_entries),
		cmocka_unit_test(test_plain_stable),
		cmocka_unit_test(test_plain_nomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
